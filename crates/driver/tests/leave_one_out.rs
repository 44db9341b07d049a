//! Every size decision pays for itself (docs/DESIGN.md, "Costed decisions"):
//! every example, every benchmark program and every program of
//! `filetests/sizes/` is built to aarch64 objects at `-Oz` and at `-Oz` with
//! each CLIF pass left out, in process through the library; the test fails
//! when a leave-one-out build is more than 1% smaller than `-Oz`, or `-Oz`
//! is larger than Cranelift alone (`-O2 --passes ''`).
//!
//! [`KNOWN`] lists the pairs that are still more than 1% smaller with a
//! pass left out (issue 31 is not done for them; each line says why). A
//! pair not listed fails, and so does a listed pair that no longer needs
//! to be: the list only shrinks.
//!
//! The measure is the program's code as the linker keeps it: the bytes of
//! every function section of every object but the runtime's, each class of
//! identical code counted once, as `ld.lld --icf=all` folds it (equal
//! bytes, equal relocations, relocations to functions of one class; see
//! [`code_bytes`]). Objects only — no linking, no running — so the test
//! is a few seconds of compilation per program; it prints its table and its
//! time.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use object::{Object, ObjectSection, ObjectSymbol, SectionKind};
use parec::build::{Backend, Build, BuildMode, Input, Units};
use parec::codegen::CompiledObject;
use parec::pipeline::{ClifPass, Pass, Pipeline};
use parec::target::{OptLevel, Target};
use parec_passes::code_cache::CodeCache;

mod support;
use support::{programs_in, workspace_root};

/// The runtime's object: the same in every configuration's terms, and not
/// the program's own code.
const RUNTIME: &str = "pare_runtime";

/// Leave-one-out builds known to be more than 1% smaller than `-Oz`:
/// program, configuration (as in the table), and why.
const KNOWN: &[(&str, &str, &str)] = &[
    // The final lowering choice (`parec_passes::mid_end`): the inliner and
    // GVN decide on the prices of the lowering with Cranelift's mid-end,
    // and with either left out code generation's lowering without it saves
    // more than with it (docs/DESIGN.md, "The mid-end at `-Oz`", open).
    ("bench/backtrack/main.pare", "-inline", "lowering choice"),
    ("bench/graph/main.pare", "-inline", "lowering choice"),
    ("examples/wrapping.pare", "-gvn", "lowering choice"),
    // A nest of instances (`window<N>` each folding in its `ring<N>` and
    // its `% N`) priced by decision 3 of `parec_passes::price`: merged
    // each level 264 bytes (260 built), inlined and fmerged 448 - 136 =
    // 312 (248 built): the machine passes shrink the two fmerged windows
    // by 44 bytes each and the merged body by 20, which the prices, taken
    // on Cranelift's bytes, cannot see; the 12 bytes are below the margin.
    (
        "filetests/sizes/many.pare",
        "-merge",
        "machine passes favour the released nest",
    ),
    // The group `fold<f>` is priced 152 bytes merged against 256
    // released; built, merged costs about 164 (main 200 + body 92 +
    // callees) and released about 152 (main alone 352 in the -merge
    // build). Pricing the released side after GVN takes only about 68
    // bytes off (188, still above 152): most of the error is the machine
    // passes' work on the grown `main`, which prices taken on Cranelift's
    // bytes cannot see.
    (
        "filetests/sizes/visitors.pare",
        "-merge",
        "machine passes favour the released group",
    ),
];

/// A build's configuration: a name for the table and the pipeline.
struct Config {
    name: String,
    level: OptLevel,
    pipeline: Pipeline,
}

fn configs() -> Vec<Config> {
    let mut configs = vec![
        Config {
            name: "Cranelift".into(),
            level: OptLevel::O2,
            pipeline: Pipeline::empty(),
        },
        Config {
            name: "-Oz".into(),
            level: OptLevel::Oz,
            pipeline: Pipeline::for_level(OptLevel::Oz),
        },
    ];
    for &left_out in Pass::ALL {
        if let Pass::Clif(pass) = left_out {
            let passes: Vec<Pass> = Pass::ALL
                .iter()
                .copied()
                .filter(|&p| p != left_out)
                .collect();
            configs.push(Config {
                name: format!("-{}", ClifPass::name(pass)),
                level: OptLevel::Oz,
                pipeline: Pipeline::from_passes(&passes),
            });
        }
    }
    configs
}

/// Where a relocation of a function leads.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Leads {
    /// Another function of the program (by index).
    Function(usize),
    /// A symbol defined nowhere in the program's code (data, the runtime).
    Symbol(String),
}

/// One function section: its bytes and its relocations (offset, kind,
/// target, addend).
struct Section {
    bytes: Vec<u8>,
    relocations: Vec<(u64, String, Leads, i64)>,
}

/// The program's code bytes in `objects` (module doc): the function
/// sections of every object but the runtime's, each class of identical
/// code once. Classes as `ld.lld --icf=all` finds them: sections with the
/// same bytes and relocations, whose relocations to functions lead to
/// sections of one class — a partition refined until it is stable, so
/// that mutually calling copies (the merged bodies of one group, each
/// calling the others' thunks) fold together as the linker folds them.
fn code_bytes(objects: &[CompiledObject]) -> u64 {
    let sections = function_sections(objects);
    let mut classes: Vec<usize> = {
        let mut ids = std::collections::HashMap::new();
        sections
            .iter()
            .map(|s| {
                let shape: Vec<_> = s
                    .relocations
                    .iter()
                    .map(|(offset, kind, target, addend)| {
                        let target = match target {
                            Leads::Function(_) => None,
                            Leads::Symbol(name) => Some(name.clone()),
                        };
                        (*offset, kind.clone(), target, *addend)
                    })
                    .collect();
                let next = ids.len();
                *ids.entry((s.bytes.clone(), shape)).or_insert(next)
            })
            .collect()
    };
    loop {
        let mut ids = std::collections::HashMap::new();
        let refined: Vec<usize> = sections
            .iter()
            .zip(&classes)
            .map(|(s, &class)| {
                let targets: Vec<usize> = s
                    .relocations
                    .iter()
                    .filter_map(|r| match r.2 {
                        Leads::Function(f) => Some(classes[f]),
                        Leads::Symbol(_) => None,
                    })
                    .collect();
                let next = ids.len();
                *ids.entry((class, targets)).or_insert(next)
            })
            .collect();
        let stable = ids.len() == classes.iter().collect::<BTreeSet<_>>().len();
        classes = refined;
        if stable {
            break;
        }
    }
    let mut seen = BTreeSet::new();
    sections
        .iter()
        .zip(&classes)
        .filter(|(_, class)| seen.insert(**class))
        .map(|(s, _)| s.bytes.len() as u64)
        .sum()
}

/// The non-empty function sections of `objects` but the runtime's, with
/// relocation targets resolved: to a section of the same object that
/// defines the symbol, else to a section of another object that defines it
/// globally.
fn function_sections(objects: &[CompiledObject]) -> Vec<Section> {
    let files: Vec<object::File> = objects
        .iter()
        .filter(|o| o.name != RUNTIME)
        .map(|o| object::File::parse(&*o.bytes).expect("parec writes ELF objects"))
        .collect();
    // (file, section index) -> function index, in file and section order.
    let mut index = std::collections::BTreeMap::new();
    for (f, file) in files.iter().enumerate() {
        for section in file.sections().filter(|s| s.kind() == SectionKind::Text) {
            if section.size() > 0 {
                let next = index.len();
                index.insert((f, section.index().0), next);
            }
        }
    }
    let section_of = |f: usize, symbol: &object::Symbol| -> Option<usize> {
        let section = symbol.section_index()?;
        index.get(&(f, section.0)).copied()
    };
    let mut global = std::collections::HashMap::new();
    for (f, file) in files.iter().enumerate() {
        for symbol in file
            .symbols()
            .filter(|s| s.is_global() && s.is_definition())
        {
            if let (Ok(name), Some(s)) = (symbol.name(), section_of(f, &symbol)) {
                global.entry(name.to_string()).or_insert(s);
            }
        }
    }
    let mut sections = Vec::new();
    for (f, file) in files.iter().enumerate() {
        for section in file.sections().filter(|s| s.kind() == SectionKind::Text) {
            if section.size() == 0 {
                continue;
            }
            let relocations = section
                .relocations()
                .map(|(offset, r)| {
                    let target = match r.target() {
                        object::RelocationTarget::Symbol(i) => {
                            let symbol = file.symbol_by_index(i).expect("a relocation's symbol");
                            let name = symbol.name().unwrap_or_default().to_string();
                            match section_of(f, &symbol).or_else(|| global.get(&name).copied()) {
                                Some(s) => Leads::Function(s),
                                None => Leads::Symbol(name),
                            }
                        }
                        other => Leads::Symbol(format!("{other:?}")),
                    };
                    (offset, format!("{:?}", r.flags()), target, r.addend())
                })
                .collect();
            sections.push(Section {
                bytes: section.data().expect("section data").to_vec(),
                relocations,
            });
        }
    }
    sections
}

/// Every program the test covers: examples, the benchmark corpus and
/// `filetests/sizes/`.
fn programs() -> Vec<PathBuf> {
    let mut programs: Vec<PathBuf> = ["examples", "bench", "filetests/sizes"]
        .into_iter()
        .flat_map(programs_in)
        .map(|p| p.source)
        .collect();
    programs.sort();
    programs
}

fn build(source: &Path, config: &Config, cache: &Arc<CodeCache>) -> u64 {
    let build = Build {
        pipeline: config.pipeline.clone(),
        level: config.level,
        mode: BuildMode::Local,
        backend: Backend::Objects(Target::Aarch64),
        jobs: 1,
        units: Units::PerModule,
        code_model: Default::default(),
        runtime: Default::default(),
    };
    let output = build
        .run_sharing(Input::Pare(vec![source.to_path_buf()]), cache)
        .unwrap_or_else(|e| panic!("{}: {:?}", source.display(), anyhow::Error::from(e)));
    code_bytes(&output.objects)
}

#[test]
fn no_clif_pass_costs_more_than_it_saves() {
    let start = Instant::now();
    let configs = configs();
    let programs = programs();
    assert!(programs.len() >= 60, "only {} programs", programs.len());
    let root = workspace_root();
    // Two workers (CI's machines have two cores), each taking the next
    // program when done, largest first: a fixed split left one core idle
    // while the other finished the benchmark programs.
    let mut queue: Vec<&PathBuf> = programs.iter().collect();
    queue.sort_by_key(|p| std::cmp::Reverse(std::fs::metadata(p).map_or(0, |m| m.len())));
    let next = AtomicUsize::new(0);
    let rows: Vec<(PathBuf, Vec<u64>)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..2)
            .map(|_| {
                let (queue, configs, next) = (&queue, &configs, &next);
                scope.spawn(move || {
                    let mut rows = Vec::new();
                    while let Some(&p) = queue.get(next.fetch_add(1, Ordering::Relaxed)) {
                        // One cache per program: the configurations
                        // compile many functions alike.
                        let cache = Arc::new(CodeCache::new());
                        let bytes = configs.iter().map(|c| build(p, c, &cache)).collect();
                        rows.push((p.clone(), bytes));
                    }
                    rows
                })
            })
            .collect();
        let mut rows: Vec<_> = workers
            .into_iter()
            .flat_map(|w| w.join().expect("a worker"))
            .collect();
        rows.sort();
        rows
    });
    let mut table = format!(
        "{:<40}{}\n",
        "program",
        configs
            .iter()
            .map(|c| format!("{:>11}", c.name))
            .collect::<String>()
    );
    let mut failures = Vec::new();
    let mut known_seen = BTreeSet::new();
    let oz = 1;
    for (path, bytes) in &rows {
        let name = path
            .strip_prefix(&root)
            .unwrap_or(path)
            .display()
            .to_string();
        table.push_str(&format!(
            "{name:<40}{}\n",
            bytes.iter().map(|b| format!("{b:>11}")).collect::<String>()
        ));
        if bytes[oz] > bytes[0] {
            failures.push(format!(
                "{name}: -Oz is {} bytes, Cranelift alone {}",
                bytes[oz], bytes[0]
            ));
        }
        for (config, &left_out) in configs.iter().zip(bytes).skip(2) {
            if left_out * 100 >= bytes[oz] * 99 {
                continue;
            }
            let line = format!(
                "{name}: -Oz is {} bytes, {} {left_out} ({:+.1}%)",
                bytes[oz],
                config.name,
                100.0 * (bytes[oz] as f64 / left_out as f64 - 1.0)
            );
            match KNOWN.iter().find(|k| k.0 == name && k.1 == config.name) {
                Some(known) => {
                    known_seen.insert((known.0, known.1));
                    table.push_str(&format!("known: {line}: {}\n", known.2));
                }
                None => failures.push(line),
            }
        }
    }
    for (program, config, _) in KNOWN {
        if !known_seen.contains(&(*program, *config)) {
            failures.push(format!(
                "{program} {config} is within 1% now: remove it from KNOWN"
            ));
        }
    }
    eprintln!(
        "{table}\n{} programs in {:.1?}",
        rows.len(),
        start.elapsed()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
