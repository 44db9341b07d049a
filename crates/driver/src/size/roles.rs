//! `parec size --roles`: every instruction of the program's own code by
//! role — frame, calls and their moves, checks, trap paths, constants,
//! addresses, memory, compares and branches, arithmetic — per function and
//! in total ([`parec_passes::machine::roles`] has the roles and the rules).
//!
//! # What is classified
//!
//! The blocks of the report's own functions ([`super::Kind::is_own`]), each
//! block once (code the linker folded counts once, as in every total of
//! the report). A block is cut as the report cuts them: from a symbol's
//! address, as long as the largest size of the symbols there, up to the
//! next symbol. Its words are lifted as linked code
//! ([`parec_passes::machine::lift::lift_linked`]): every PC-relative word
//! that reaches outside the block gets a relocation to the symbol it
//! reaches — from the object's relocation, or, resolved already (an
//! executable, or a local call in an object), the symbol at the target
//! address. Whole functions of kinds the report knows take one role:
//! merge thunks `thunk`, outlined functions `outlined`, trap paths `trap`.
//!
//! What a relocation's target is ([`Callee`]) comes from its name: the
//! outliner's `OUTLINED_FUNCTION_*`, the trap helper `pare_trap` and the
//! shared trap paths `pare_trap_<kind>` (the kind of check from the name:
//! `null`, `bounds`, `division`, else other), and functions the report
//! found to be trap paths; anything else is a function.
//!
//! aarch64 only: the roles are aarch64's.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{bail, Result};
use parec_passes::machine::decode::{Decoder, Form};
use parec_passes::machine::lift::lift_linked;
use parec_passes::machine::roles::{self, Callee, Check, Role, RoleBytes};
use parec_passes::machine::{MachFunction, MachReloc, RelocKind, RelocTarget};

use super::elf::{Arch, CodeSection, CodeSymbol, Image};
use super::names::{OUTLINED_PREFIX, TRAP_HELPER};
use super::{Kind, Report};

/// The roles of one function's code.
#[derive(Clone, Debug, PartialEq)]
pub struct FunctionRoles {
    pub name: String,
    pub module: String,
    pub kind: Kind,
    /// Its blocks' bytes, each counted once: the sum of its roles.
    pub bytes: u64,
    pub roles: RoleBytes,
}

/// The roles of a build's own code.
#[derive(Clone, Debug, PartialEq)]
pub struct RoleReport {
    /// Each block once: the sum of the functions' roles, less the blocks
    /// functions share.
    pub total: RoleBytes,
    /// Sorted by bytes (largest first), then name and module.
    pub functions: Vec<FunctionRoles>,
    /// Own blocks that did not lift (their bytes are `unknown`).
    pub opaque: usize,
}

impl RoleReport {
    /// The roles of `report`'s own code in `images` (the images it was made
    /// of).
    pub fn of(images: &[Image], report: &Report) -> Result<RoleReport> {
        if let Some(other) = images.iter().find(|i| i.arch != Arch::Aarch64) {
            bail!(
                "{}: --roles classifies aarch64 code only, and this is x86_64 code",
                other.path
            );
        }
        if let Some(stripped) = images.iter().find(|i| i.file.stripped) {
            bail!(
                "{}: the file is stripped: --roles needs its symbol table to tell the \
                 program's own code from the libraries'",
                stripped.path
            );
        }
        let rows: BTreeMap<(String, String), &super::FunctionRow> = report
            .own_functions()
            .map(|f| (row_key(images, &f.module, &f.name), f))
            .collect();
        let trap_paths: BTreeSet<&str> = report
            .functions
            .iter()
            .filter(|f| f.kind == Kind::TrapPath)
            .map(|f| f.name.as_str())
            .collect();
        let mut decoder = Decoder::new();
        let mut total = RoleBytes::default();
        let mut by_function: BTreeMap<(String, String), FunctionRoles> = BTreeMap::new();
        let mut opaque = 0;
        for image in images {
            let module = super::object_module(&image.path);
            let by_address = symbols_by_section(image);
            for block in blocks(&by_address) {
                let keys: Vec<(String, String)> = block
                    .symbols
                    .iter()
                    .map(|s| row_key(images, &module, &s.name))
                    .filter(|k| rows.contains_key(k))
                    .collect();
                let Some(first) = keys.first() else { continue };
                let row = rows[first];
                let classified =
                    classify_block(&by_address, &block, row.kind, &trap_paths, &mut decoder);
                opaque += usize::from(classified.opaque);
                total.add_all(&classified.roles);
                for key in keys {
                    let row = rows[&key];
                    let entry = by_function.entry(key).or_insert_with(|| FunctionRoles {
                        name: row.name.clone(),
                        module: row.module.clone(),
                        kind: row.kind,
                        bytes: 0,
                        roles: RoleBytes::default(),
                    });
                    entry.bytes += block.size;
                    entry.roles.add_all(&classified.roles);
                }
            }
        }
        let mut functions: Vec<FunctionRoles> = by_function.into_values().collect();
        functions.sort_by(|a, b| {
            b.bytes
                .cmp(&a.bytes)
                .then_with(|| a.name.cmp(&b.name))
                .then_with(|| a.module.cmp(&b.module))
        });
        Ok(RoleReport {
            total,
            functions,
            opaque,
        })
    }
}

/// The key of a function row: its name in an executable, (module, name)
/// in objects (as the report keys its rows).
fn row_key(images: &[Image], module: &str, name: &str) -> (String, String) {
    if images.first().is_some_and(|i| i.executable) {
        (String::new(), name.to_string())
    } else {
        (module.to_string(), name.to_string())
    }
}

/// A block of code: the symbols at one address, and its extent.
struct Block<'a> {
    section: &'a CodeSection,
    /// The section's index in the image.
    index: usize,
    start: u64,
    size: u64,
    symbols: Vec<&'a CodeSymbol>,
}

/// The code sections of an image with their symbols in address order.
type SymbolsBySection<'a> = Vec<(&'a CodeSection, Vec<&'a CodeSymbol>)>;

fn symbols_by_section(image: &Image) -> SymbolsBySection<'_> {
    image
        .code
        .iter()
        .enumerate()
        .map(|(index, section)| {
            let symbols = image
                .symbols
                .iter()
                .filter(|s| s.section == index)
                .collect();
            (section, symbols)
        })
        .collect()
}

/// The blocks of an image's sections (module doc, "What is classified").
fn blocks<'a>(sections: &SymbolsBySection<'a>) -> Vec<Block<'a>> {
    let mut out = Vec::new();
    for (index, (section, symbols)) in sections.iter().enumerate() {
        for block in super::symbol_blocks(symbols, section.end()) {
            out.push(Block {
                section,
                index,
                start: block.start,
                size: block.size,
                symbols: block.symbols,
            });
        }
    }
    out
}

/// A block's roles.
struct Classified {
    roles: RoleBytes,
    opaque: bool,
}

/// The roles of `block`, whose function row has `kind`.
fn classify_block(
    sections: &SymbolsBySection<'_>,
    block: &Block<'_>,
    kind: Kind,
    trap_paths: &BTreeSet<&str>,
    decoder: &mut Decoder,
) -> Classified {
    let whole = match kind {
        Kind::MergeThunk => Some(Role::Thunk),
        Kind::Outlined => Some(Role::Outlined),
        Kind::TrapPath => Some(Role::Trap),
        _ => None,
    };
    if let Some(role) = whole {
        return Classified {
            roles: RoleBytes::all_in(role, block.size),
            opaque: false,
        };
    }
    let (func, names) = linked_function(&sections[block.index].1, block);
    let lifted = lift_linked(&func, decoder);
    let callee = |target: RelocTarget| match target {
        RelocTarget::Symbol(s) => callee_of(&names[s as usize], trap_paths),
        _ => Callee::Function,
    };
    let item_roles = roles::classify(&lifted, &callee, decoder);
    Classified {
        roles: roles::role_bytes(&lifted, &item_roles),
        opaque: lifted.opaque.is_some(),
    }
}

/// What a symbol named `name` is to a call or branch.
fn callee_of(name: &str, trap_paths: &BTreeSet<&str>) -> Callee {
    if name.starts_with(OUTLINED_PREFIX) {
        return Callee::Outlined;
    }
    let kind = name.strip_prefix(TRAP_HELPER);
    if kind.is_some() || trap_paths.contains(name) {
        let kind = kind.unwrap_or("");
        let check = if kind.contains("null") {
            Check::Null
        } else if kind.contains("bounds") {
            Check::Bounds
        } else if kind.contains("division") {
            Check::Division
        } else {
            Check::Other
        };
        return Callee::Trap(check);
    }
    Callee::Function
}

/// The block's code as a [`MachFunction`] with a relocation on every
/// PC-relative word that reaches outside it, and the names those
/// relocations' targets index.
fn linked_function(symbols: &[&CodeSymbol], block: &Block<'_>) -> (MachFunction, Vec<String>) {
    let section = block.section;
    let begin = (block.start - section.address) as usize;
    let bytes = section.bytes[begin..begin + block.size as usize].to_vec();
    let mut names: Vec<String> = Vec::new();
    let mut relocs = Vec::new();
    for (k, word) in bytes.chunks_exact(4).enumerate() {
        let w = u32::from_le_bytes([word[0], word[1], word[2], word[3]]);
        let form = Form::of(w);
        let Some(kind) = reloc_kind(form) else {
            continue;
        };
        let offset = 4 * k as u64;
        let at = block.start + offset;
        let target = if form == Form::Adrp {
            (at & !0xFFF).wrapping_add_signed(form.offset(w))
        } else {
            at.wrapping_add_signed(form.offset(w))
        };
        let relocated = section.relocs.get(&(at - section.address)).cloned();
        let inside =
            (block.start..block.start + block.size).contains(&target) && form != Form::Adrp;
        let name = match relocated {
            Some(name) => name,
            None if inside => continue,
            None => symbol_at(symbols, target),
        };
        let index = names.iter().position(|n| *n == name).unwrap_or_else(|| {
            names.push(name);
            names.len() - 1
        });
        relocs.push(MachReloc {
            offset: offset as u32,
            kind,
            target: RelocTarget::Symbol(index as u32),
            addend: 0,
        });
    }
    let func = MachFunction {
        name: block.symbols[0].name.clone(),
        bytes,
        alignment: 4,
        bb_starts: vec![0],
        relocs,
        traps: Vec::new(),
        call_sites: Vec::new(),
        shared: false,
    };
    (func, names)
}

/// The relocation a PC-relative form takes when it reaches outside its
/// function (literal loads never do in the code parec and clang emit).
fn reloc_kind(form: Form) -> Option<RelocKind> {
    use cranelift_codegen::binemit::Reloc;
    Some(match form {
        Form::B | Form::Bl => RelocKind::Cranelift(Reloc::Arm64Call),
        Form::BCond | Form::Cbz => RelocKind::Aarch64CondBr19,
        Form::Tbz => RelocKind::Aarch64TstBr14,
        Form::Adr => RelocKind::Aarch64AdrPrelLo21,
        Form::Adrp => RelocKind::Cranelift(Reloc::Aarch64AdrPrelPgHi21),
        _ => return None,
    })
}

/// The name of the last of `symbols` (in address order) at or before
/// `address` (`?` if none).
fn symbol_at(symbols: &[&CodeSymbol], address: u64) -> String {
    let after = symbols.partition_point(|s| s.address <= address);
    after
        .checked_sub(1)
        .map_or_else(|| "?".to_string(), |k| symbols[k].name.clone())
}

/// `parec size --roles`: the role report of the inputs, or its comparison
/// with `--compare`'s build, as text or JSON.
pub fn command(opts: &super::SizeOptions) -> Result<String> {
    let new = of_files(&opts.inputs)?;
    Ok(match &opts.compare {
        Some(other) => {
            let old = of_files(std::slice::from_ref(other))?;
            if opts.json {
                comparison_json(&old, &new)
            } else {
                comparison_text(&old, &new)
            }
        }
        None if opts.json => json(&new),
        None => text(&new, opts.top),
    })
}

/// The role report of `paths` (one executable, or objects), with the
/// inputs' names.
pub fn of_files(paths: &[std::path::PathBuf]) -> Result<Named> {
    let images = super::read_images(paths)?;
    let report = Report::of_images(&images)?;
    let roles = RoleReport::of(&images, &report)?;
    Ok(Named {
        inputs: report.inputs.clone(),
        own: report.own,
        roles,
    })
}

/// A role report and what it was made of.
#[derive(Clone, Debug)]
pub struct Named {
    pub inputs: Vec<String>,
    /// The report's own code: the roles' total.
    pub own: u64,
    pub roles: RoleReport,
}

/// The columns of the function table: roles grouped so that a row fits a
/// terminal (the JSON has every role).
const COLUMNS: [(&str, &[Role]); 11] = [
    ("frame", &[Role::Frame]),
    ("call", &[Role::Call, Role::CallMove]),
    ("move", &[Role::Move]),
    (
        "check",
        &[
            Role::NullCheck,
            Role::BoundsCheck,
            Role::DivisionCheck,
            Role::OtherCheck,
        ],
    ),
    ("trap", &[Role::Trap]),
    ("th+out", &[Role::Thunk, Role::Outlined]),
    ("const", &[Role::Constant]),
    ("addr", &[Role::Address]),
    ("mem", &[Role::Memory]),
    ("cmp+br", &[Role::CompareBranch]),
    ("arith", &[Role::Arithmetic, Role::Unknown]),
];

/// The role table, then the `top` largest functions (0: all) by grouped
/// role.
pub fn text(named: &Named, top: usize) -> String {
    use std::fmt::Write as _;
    let report = &named.roles;
    let mut out = String::new();
    let _ = writeln!(out, "parec size --roles: {}", named.inputs.join(" "));
    let _ = writeln!(
        out,
        "the program's own code: {} bytes, {} instructions' worth",
        named.own,
        named.own / 4
    );
    if report.opaque > 0 {
        let _ = writeln!(
            out,
            "{} blocks could not be decoded: `unknown`",
            report.opaque
        );
    }
    out.push('\n');
    role_table(&mut out, &[("bytes", &report.total)], report.total.total());
    out.push('\n');
    let _ = write!(out, "{:<40} {:>7}", "function", "bytes");
    for (name, _) in COLUMNS {
        let _ = write!(out, " {name:>6}");
    }
    out.push('\n');
    let limit = if top == 0 { usize::MAX } else { top };
    for f in report.functions.iter().take(limit) {
        let _ = write!(out, "{:<40} {:>7}", clip(&f.name, 40), f.bytes);
        for (_, roles) in COLUMNS {
            let bytes: u64 = roles.iter().map(|&r| f.roles.get(r)).sum();
            let _ = write!(out, " {bytes:>6}");
        }
        out.push('\n');
    }
    if report.functions.len() > limit {
        let _ = writeln!(out, "({} more functions)", report.functions.len() - limit);
    }
    out
}

/// A table of roles with a column per build (`columns`: name and bytes)
/// and the share of the first build's `total`; roles no build has are
/// left out.
pub fn role_table(out: &mut String, columns: &[(&str, &RoleBytes)], total: u64) {
    use std::fmt::Write as _;
    let _ = write!(out, "{:<16}", "role");
    for (name, _) in columns {
        let _ = write!(out, " {name:>9}");
    }
    let _ = writeln!(out, " {:>7}", "%");
    for role in Role::ALL {
        if columns.iter().all(|(_, r)| r.get(role) == 0) {
            continue;
        }
        let _ = write!(out, "{:<16}", role.name());
        for (_, r) in columns {
            let _ = write!(out, " {:>9}", r.get(role));
        }
        let _ = writeln!(out, " {:>7}", percent(columns[0].1.get(role), total));
    }
    let _ = write!(out, "{:<16}", "total");
    for (_, r) in columns {
        let _ = write!(out, " {:>9}", r.total());
    }
    let _ = writeln!(out, " {:>7}", percent(total, total));
}

fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "-".into();
    }
    format!("{:.1}%", 100.0 * part as f64 / whole as f64)
}

fn clip(name: &str, width: usize) -> String {
    if name.chars().count() <= width {
        return name.to_string();
    }
    let head: String = name.chars().take(width - 1).collect();
    format!("{head}…")
}

/// Bytes per role as a JSON object, roles without bytes left out.
pub fn roles_json(roles: &RoleBytes) -> serde_json::Value {
    let map: serde_json::Map<String, serde_json::Value> = Role::ALL
        .into_iter()
        .filter(|&r| roles.get(r) > 0)
        .map(|r| (r.name().to_string(), roles.get(r).into()))
        .collect();
    serde_json::Value::Object(map)
}

/// The report as JSON: `{"inputs", "own", "opaque_blocks", "roles":
/// {role: bytes}, "functions": [{"name", "module", "kind", "bytes",
/// "roles"}]}`.
pub fn json(named: &Named) -> String {
    let report = &named.roles;
    let value = serde_json::json!({
        "inputs": named.inputs,
        "own": named.own,
        "opaque_blocks": report.opaque,
        "roles": roles_json(&report.total),
        "functions": report.functions.iter().map(|f| serde_json::json!({
            "name": f.name,
            "module": f.module,
            "kind": f.kind.name(),
            "bytes": f.bytes,
            "roles": roles_json(&f.roles),
        })).collect::<Vec<_>>(),
    });
    let mut text = serde_json::to_string_pretty(&value).expect("JSON values print");
    text.push('\n');
    text
}

/// The role tables of two builds side by side, with the change.
pub fn comparison_text(old: &Named, new: &Named) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "parec size --roles: {} -> {}",
        old.inputs.join(" "),
        new.inputs.join(" ")
    );
    out.push('\n');
    let delta = difference(&old.roles.total, &new.roles.total);
    let _ = writeln!(
        out,
        "{:<16} {:>9} {:>9} {:>9}",
        "role", "old", "new", "delta"
    );
    for (role, d) in Role::ALL.into_iter().zip(&delta) {
        let (o, n) = (old.roles.total.get(role), new.roles.total.get(role));
        if o == 0 && n == 0 {
            continue;
        }
        let _ = writeln!(out, "{:<16} {o:>9} {n:>9} {d:>+9}", role.name());
    }
    let (o, n) = (old.roles.total.total(), new.roles.total.total());
    let _ = writeln!(
        out,
        "{:<16} {o:>9} {n:>9} {:>+9}",
        "total",
        n as i64 - o as i64
    );
    out
}

/// The comparison as JSON: `{"old_inputs", "new_inputs", "roles": [{"role",
/// "old", "new", "delta"}]}`.
pub fn comparison_json(old: &Named, new: &Named) -> String {
    let rows: Vec<serde_json::Value> = Role::ALL
        .into_iter()
        .zip(difference(&old.roles.total, &new.roles.total))
        .filter(|(r, _)| old.roles.total.get(*r) > 0 || new.roles.total.get(*r) > 0)
        .map(|(r, d)| {
            serde_json::json!({
                "role": r.name(),
                "old": old.roles.total.get(r),
                "new": new.roles.total.get(r),
                "delta": d,
            })
        })
        .collect();
    let value = serde_json::json!({
        "old_inputs": old.inputs,
        "new_inputs": new.inputs,
        "roles": rows,
        "total": {
            "old": old.roles.total.total(),
            "new": new.roles.total.total(),
        },
    });
    let mut text = serde_json::to_string_pretty(&value).expect("JSON values print");
    text.push('\n');
    text
}

fn difference(old: &RoleBytes, new: &RoleBytes) -> Vec<i64> {
    old.0
        .iter()
        .zip(new.0)
        .map(|(&o, n)| n as i64 - o as i64)
        .collect()
}
