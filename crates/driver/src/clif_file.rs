//! `.clif` text files as [`ClifModule`]s.
//!
//! A `.clif` file is read for the machine its code is for: its `set` and
//! `target` lines ([`crate::clif_header`]) give the module's Cranelift
//! settings, those of the section for that machine's architecture; its
//! functions are parsed with cranelift-reader and verified with that ISA
//! (instructions such as `get_frame_pointer` need one). The file becomes
//! one ClifModule: every function it defines is
//! an exported function symbol named like the function (`%main` → `main`,
//! `u0:3` → `u0:3`); every name it calls is a function import and every
//! `symbol` global value a (writable) data import, unless the file defines it.
//! `; run:` / `; print:` comments are kept as [`RunCommand`]s of their function.
//!
//! Names are rewritten to the ClifModule convention
//! (`UserExternalName { namespace: 0, index: symbol }`) so that the passes and
//! the JIT/object paths see the same thing as for Pare programs;
//! [`ClifFile::restore_names`] turns a function back into the file's own
//! naming, for printing and for cranelift-interpreter (which looks functions
//! up by their printed names).

use std::collections::HashMap;

use anyhow::{anyhow, bail, Result};
use cranelift_codegen::entity::{PrimaryMap, SecondaryMap};
use cranelift_codegen::ir::{self, ExternalName, GlobalValueData, UserExternalName, UserFuncName};
use cranelift_codegen::isa::TargetIsa;
use cranelift_codegen::packed_option::ReservedValue;
use cranelift_reader::{parse_run_command, parse_test, ParseOptions, RunCommand};
use parec_passes::clif_module::{ClifModule, FunctionDef, Linkage, SymbolKind};
use target_lexicon::Architecture;

use crate::clif_header;
use crate::target::{Machine, OptLevel, Target};

/// How a symbol was named in the file.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Original {
    /// `%name`.
    Testcase(String),
    /// `uN:M`.
    User(UserExternalName),
}

/// A parsed `.clif` file.
pub struct ClifFile {
    pub module: ClifModule,
    /// Run commands by index into `module.functions`.
    pub run_commands: Vec<Vec<RunCommand>>,
    originals: Vec<Original>,
}

impl ClifFile {
    /// Parses `text` (from a file called `name`) into a ClifModule for the
    /// default target.
    pub fn parse(name: &str, text: &str) -> Result<ClifFile> {
        Self::parse_for(name, text, Machine::Target(Target::default()))
    }

    /// Parses `text` (from a file called `name`) into a ClifModule whose
    /// code is for `machine`.
    pub fn parse_for(name: &str, text: &str, machine: Machine) -> Result<ClifFile> {
        let read = clif_header::read(name, text)?;
        let settings = read.header.settings_for(name, machine)?;
        let isa = machine.isa(OptLevel::default(), &settings)?;
        let test =
            parse_test(&read.body, ParseOptions::default()).map_err(|e| anyhow!("{name}:{e}"))?;
        let mut module = ClifModule::new(module_name(name));
        module.settings = settings;
        let mut file = ClifFile {
            module,
            run_commands: Vec::new(),
            originals: Vec::new(),
        };
        // Definitions first, so that a call to a defined function finds its symbol.
        for (func, _) in &test.functions {
            let original = original_func_name(&func.name)?;
            let sym_name = file.symbol_name(&original);
            if file.module.symbol_index(&sym_name).is_some() {
                bail!("{name}: function `{sym_name}` is defined twice");
            }
            file.add_symbol(
                original,
                SymbolKind::Function(func.signature.clone()),
                Linkage::Export,
            );
        }
        for (mut func, details) in test.functions {
            close_gaps(&mut func);
            let mut commands = Vec::new();
            for comment in &details.comments {
                match parse_run_command(comment.text, &func.signature) {
                    Ok(Some(cmd)) => commands.push(cmd),
                    Ok(None) => {}
                    Err(e) => {
                        // The reader parses each argument by its parameter's
                        // type, so a wrong count reads as a syntax error
                        // ("expected a comma"); say what is wrong instead.
                        let why = match invocation_arguments(comment.text) {
                            Some((callee, given)) if given != func.signature.params.len() => {
                                format!(
                                    "`%{callee}` takes {} argument(s), the command gives {given}",
                                    func.signature.params.len()
                                )
                            }
                            _ => e.to_string(),
                        };
                        bail!("{name}: bad run command `{}`: {why}", comment.text.trim())
                    }
                }
            }
            check_stack_limit(&func).map_err(|e| anyhow!("{name}: function {}: {e}", func.name))?;
            check_x86_64_needs(&func, &*isa)
                .map_err(|e| anyhow!("{name}: function {}: {e}", func.name))?;
            // User input: reject malformed functions here rather than let them
            // reach code generation (which only verifies in debug builds).
            crate::pipeline::verify_function(&func, Some(&*isa))
                .map_err(|e| anyhow!("{name}: function {} fails verification:\n{e}", func.name))?;
            let func = file.rename_function(func)?;
            let symbol = match &func.name {
                UserFuncName::User(u) => u.index,
                UserFuncName::Testcase(_) => bail!("internal: function left unrenamed"),
            };
            file.module.functions.push(FunctionDef { symbol, func });
            file.run_commands.push(commands);
        }
        Ok(file)
    }

    fn symbol_name(&self, original: &Original) -> String {
        match original {
            Original::Testcase(s) => s.clone(),
            Original::User(u) => format!("u{}:{}", u.namespace, u.index),
        }
    }

    fn add_symbol(&mut self, original: Original, kind: SymbolKind, linkage: Linkage) -> u32 {
        let name = self.symbol_name(&original);
        let index = self.module.declare(&name, kind, linkage);
        if index as usize == self.originals.len() {
            self.originals.push(original);
        }
        index
    }

    /// The symbol for a referenced name, declaring an import if it is new.
    ///
    /// A `symbol` global value (`kind` data) may name a function: its value
    /// is then the function's address. So a name the file defines or calls
    /// as a function stays a function, and a data import that turns out to
    /// be called becomes a function import.
    fn reference(&mut self, original: Original, kind: SymbolKind) -> Result<u32> {
        let name = self.symbol_name(&original);
        let Some(i) = self.module.symbol_index(&name) else {
            return Ok(self.add_symbol(original, kind, Linkage::Import));
        };
        let symbol = &mut self.module.symbols[i as usize];
        if matches!(symbol.kind, SymbolKind::Data { .. }) && matches!(kind, SymbolKind::Function(_))
        {
            symbol.kind = kind;
        }
        Ok(i)
    }

    /// Rewrites a parsed function's names to symbol indices.
    fn rename_function(&mut self, mut func: ir::Function) -> Result<ir::Function> {
        let own = original_func_name(&func.name)?;
        let own_index = self
            .module
            .symbol_index(&self.symbol_name(&own))
            .ok_or_else(|| anyhow!("internal: no symbol"))?;
        func.name = ClifModule::func_name(own_index);

        // Every name a function refers to, with what it refers to as.
        let mut renames: Vec<(ExternalName, SymbolKind)> = Vec::new();
        for (_, ext) in func.dfg.ext_funcs.iter() {
            renames.push((
                ext.name.clone(),
                SymbolKind::Function(func.dfg.signatures[ext.signature].clone()),
            ));
        }
        for (_, gv) in func.global_values.iter() {
            if let GlobalValueData::Symbol { name, .. } = gv {
                renames.push((name.clone(), SymbolKind::Data { writable: true }));
            }
        }
        let mut new_names: HashMap<ExternalName, ExternalName> = HashMap::new();
        for (name, kind) in renames {
            let Some(original) = original_external(&func, &name) else {
                continue;
            };
            let symbol = self.reference(original, kind)?;
            let r = func.declare_imported_user_function(ClifModule::external_name(symbol));
            new_names.insert(name, ExternalName::User(r));
        }
        replace_external_names(&mut func, &new_names);
        drop_unused_user_names(&mut func);
        Ok(func)
    }

    /// A copy of `func` (a function of this module) named as in the file.
    pub fn restore_names(&self, func: &ir::Function) -> ir::Function {
        let mut func = func.clone();
        if let UserFuncName::User(u) = &func.name {
            if let Some(o) = self.originals.get(u.index as usize) {
                func.name = match o {
                    Original::Testcase(s) => UserFuncName::testcase(s),
                    Original::User(u) => UserFuncName::User(u.clone()),
                };
            }
        }
        let mut new_names: HashMap<ExternalName, ExternalName> = HashMap::new();
        let refs: Vec<_> = func
            .params
            .user_named_funcs()
            .iter()
            .map(|(r, u)| (r, u.clone()))
            .collect();
        let mut user_renames = Vec::new();
        for (r, u) in refs {
            match self.originals.get(u.index as usize) {
                Some(Original::Testcase(s)) => {
                    new_names.insert(ExternalName::User(r), ExternalName::testcase(s));
                }
                Some(Original::User(orig)) => user_renames.push((r, orig.clone())),
                None => {}
            }
        }
        replace_external_names(&mut func, &new_names);
        for (r, orig) in user_renames {
            func.params.reset_user_func_name(r, orig);
        }
        func
    }

    /// The name of a module function as printed in the file (`%name` or `uN:M`).
    pub fn printed_name(&self, def: &FunctionDef) -> String {
        match self.originals.get(def.symbol as usize) {
            Some(Original::Testcase(s)) => format!("%{s}"),
            Some(Original::User(u)) => format!("u{}:{}", u.namespace, u.index),
            None => "?".to_string(),
        }
    }
}

/// The callee and the number of arguments of a `; run: %f(a, b) == r` or
/// `; print: %f(a)` comment, counted by the commas outside brackets (a
/// vector argument is `[1 2 3]`), or `None` if it is no invocation.
fn invocation_arguments(comment: &str) -> Option<(&str, usize)> {
    let text = comment.trim_start_matches(';').trim_start();
    let rest = text
        .strip_prefix("run:")
        .or_else(|| text.strip_prefix("print:"))?
        .trim_start()
        .strip_prefix('%')?;
    let open = rest.find('(')?;
    let callee = rest[..open].trim();
    let (mut depth, mut commas, mut any) = (0usize, 0usize, false);
    for c in rest[open + 1..].chars() {
        match c {
            '(' | '[' => depth += 1,
            ')' if depth == 0 => return Some((callee, if any { commas + 1 } else { 0 })),
            ')' | ']' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => commas += 1,
            c if c.is_whitespace() => continue,
            _ => {}
        }
        any = true;
    }
    None
}

/// Renumbers a parsed function's external functions and global values so
/// that their numbers have no gaps.
///
/// cranelift-reader fills a number the file skips (`fn0` and `fn2`, no
/// `fn1`) with a placeholder: an external function without a signature
/// (`SigRef::reserved_value()`, which Cranelift's printer leaves out), and a
/// global value `symbol %` (a symbol with an empty name, which it prints).
/// Nothing refers to a placeholder, but everything that walks the tables
/// would meet it — looking up its signature, naming its symbol — so the
/// function is given dense tables here, as a front end would have built
/// them. (Signatures, stack slots and blocks the file skips are valid
/// entities nothing refers to, and are left alone.)
fn close_gaps(func: &mut ir::Function) {
    let is_placeholder_fn = |ext: &ir::ExtFuncData| ext.signature == ir::SigRef::reserved_value();
    if func.dfg.ext_funcs.values().any(is_placeholder_fn) {
        let mut kept: PrimaryMap<ir::FuncRef, ir::ExtFuncData> = PrimaryMap::new();
        let mut renumbered: SecondaryMap<ir::FuncRef, ir::FuncRef> =
            SecondaryMap::with_default(ReservedValue::reserved_value());
        for (old, ext) in func.dfg.ext_funcs.iter() {
            if !is_placeholder_fn(ext) {
                renumbered[old] = kept.push(ext.clone());
            }
        }
        func.dfg.ext_funcs = kept;
        for_each_inst(func, |data| match data {
            ir::InstructionData::Call { func_ref, .. }
            | ir::InstructionData::TryCall { func_ref, .. }
            | ir::InstructionData::FuncAddr { func_ref, .. } => *func_ref = renumbered[*func_ref],
            _ => {}
        });
    }
    let is_placeholder_gv = |gv: &GlobalValueData| matches!(gv, GlobalValueData::Symbol { name: ExternalName::TestCase(t), .. } if t.raw().is_empty());
    if func.global_values.values().any(is_placeholder_gv) {
        let referenced = referenced_global_values(func);
        let mut kept: PrimaryMap<ir::GlobalValue, GlobalValueData> = PrimaryMap::new();
        let mut renumbered: SecondaryMap<ir::GlobalValue, ir::GlobalValue> =
            SecondaryMap::with_default(ReservedValue::reserved_value());
        for (old, gv) in func.global_values.iter() {
            if !is_placeholder_gv(gv) || referenced.contains(&old) {
                renumbered[old] = kept.push(gv.clone());
            }
        }
        for gv in kept.values_mut() {
            if let GlobalValueData::Load { base, .. } | GlobalValueData::IAddImm { base, .. } = gv {
                *base = renumbered[*base];
            }
        }
        func.global_values = kept;
        func.stack_limit = func.stack_limit.map(|gv| renumbered[gv]);
        for ty in func.dfg.dynamic_types.values_mut() {
            ty.dynamic_scale = renumbered[ty.dynamic_scale];
        }
        for_each_inst(func, |data| {
            if let ir::InstructionData::UnaryGlobalValue { global_value, .. } = data {
                *global_value = renumbered[*global_value];
            }
        });
    }
}

/// The global values something refers to: instructions, other global
/// values, the stack limit and dynamic types (`symbol %` written in the
/// file and used is kept, to be reported where it is used).
fn referenced_global_values(func: &ir::Function) -> std::collections::HashSet<ir::GlobalValue> {
    let mut used: std::collections::HashSet<ir::GlobalValue> =
        func.stack_limit.into_iter().collect();
    for gv in func.global_values.values() {
        if let GlobalValueData::Load { base, .. } | GlobalValueData::IAddImm { base, .. } = gv {
            used.insert(*base);
        }
    }
    used.extend(func.dfg.dynamic_types.values().map(|ty| ty.dynamic_scale));
    for block in func.layout.blocks() {
        for inst in func.layout.block_insts(block) {
            if let ir::InstructionData::UnaryGlobalValue { global_value, .. } = func.dfg.insts[inst]
            {
                used.insert(global_value);
            }
        }
    }
    used
}

/// Calls `f` on the data of every instruction in the layout.
fn for_each_inst(func: &mut ir::Function, mut f: impl FnMut(&mut ir::InstructionData)) {
    let insts: Vec<ir::Inst> = func
        .layout
        .blocks()
        .flat_map(|block| func.layout.block_insts(block))
        .collect();
    for inst in insts {
        f(&mut func.dfg.insts[inst]);
    }
}

/// A `stack_limit` must be a chain of `load`s from `vmctx`: Cranelift's
/// prologue computes nothing else (it panics on `iadd_imm` or `symbol`),
/// though its verifier accepts any global value.
fn check_stack_limit(func: &ir::Function) -> Result<()> {
    let mut at = func.stack_limit;
    while let Some(gv) = at {
        at = match &func.global_values[gv] {
            GlobalValueData::VMContext => None,
            GlobalValueData::Load { base, .. } => Some(*base),
            other => bail!(
                "stack_limit = {gv}: Cranelift computes a stack limit only from `vmctx` and `load`, not from `{other}`"
            ),
        };
    }
    Ok(())
}

/// What Cranelift's x86-64 backend needs settings for (it panics without
/// them), which a file must ask for, as Cranelift's own tests do: tail calls
/// rely on frame pointers, and `i128` parameters and results follow the
/// LLVM ABI only when asked.
fn check_x86_64_needs(func: &ir::Function, isa: &dyn TargetIsa) -> Result<()> {
    if isa.triple().architecture != Architecture::X86_64 {
        return Ok(());
    }
    if !isa.flags().enable_llvm_abi_extensions() {
        let signatures = std::iter::once(&func.signature).chain(func.dfg.signatures.values());
        for sig in signatures {
            let params = sig.params.iter().chain(&sig.returns);
            if params.into_iter().any(|p| p.value_type == ir::types::I128) {
                bail!(
                    "`{sig}`: i128 parameters and results on x86-64 need `set enable_llvm_abi_extensions=true`"
                );
            }
        }
    }
    if isa.flags().preserve_frame_pointers() {
        return Ok(());
    }
    let tail_call = func.layout.blocks().find_map(|block| {
        func.layout.block_insts(block).find(|&inst| {
            matches!(
                func.dfg.insts[inst].opcode(),
                ir::Opcode::ReturnCall | ir::Opcode::ReturnCallIndirect
            )
        })
    });
    match tail_call {
        Some(inst) => bail!(
            "`{}`: tail calls on x86-64 need `set preserve_frame_pointers=true`",
            func.dfg.display_inst(inst)
        ),
        None => Ok(()),
    }
}

/// A module name for a file name: its stem.
fn module_name(path: &str) -> String {
    std::path::Path::new(path)
        .file_stem()
        .map_or_else(|| path.to_string(), |s| s.to_string_lossy().into_owned())
}

fn original_func_name(name: &UserFuncName) -> Result<Original> {
    match name {
        UserFuncName::Testcase(t) => Ok(Original::Testcase(strip_percent(&t.to_string()))),
        UserFuncName::User(u) => Ok(Original::User(u.clone())),
    }
}

fn original_external(func: &ir::Function, name: &ExternalName) -> Option<Original> {
    match name {
        ExternalName::User(r) => Some(Original::User(func.params.user_named_funcs()[*r].clone())),
        ExternalName::TestCase(t) => Some(Original::Testcase(strip_percent(&t.to_string()))),
        ExternalName::LibCall(_) | ExternalName::KnownSymbol(_) => None,
    }
}

fn strip_percent(s: &str) -> String {
    s.strip_prefix('%').unwrap_or(s).to_string()
}

fn replace_external_names(func: &mut ir::Function, map: &HashMap<ExternalName, ExternalName>) {
    if map.is_empty() {
        return;
    }
    let funcs: Vec<ir::FuncRef> = func.dfg.ext_funcs.keys().collect();
    for f in funcs {
        if let Some(new) = map.get(&func.dfg.ext_funcs[f].name) {
            func.dfg.ext_funcs[f].name = new.clone();
        }
    }
    let gvs: Vec<ir::GlobalValue> = func.global_values.keys().collect();
    for g in gvs {
        if let GlobalValueData::Symbol { name, .. } = &mut func.global_values[g] {
            if let Some(new) = map.get(name) {
                *name = new.clone();
            }
        }
    }
}

/// After renaming, the file's own `uN:M` entries are unused; retarget them to
/// the symbol they were renamed to, so that every entry is in the symbol namespace.
fn drop_unused_user_names(func: &mut ir::Function) {
    let mut used: HashMap<ir::UserExternalNameRef, bool> = HashMap::new();
    for (_, ext) in func.dfg.ext_funcs.iter() {
        if let ExternalName::User(r) = ext.name {
            used.insert(r, true);
        }
    }
    for (_, gv) in func.global_values.iter() {
        if let GlobalValueData::Symbol {
            name: ExternalName::User(r),
            ..
        } = gv
        {
            used.insert(*r, true);
        }
    }
    // Entries cannot be removed from the table; an unused entry still must
    // name a valid symbol, so point it at the function's own symbol.
    let own = match &func.name {
        UserFuncName::User(u) => u.clone(),
        UserFuncName::Testcase(_) => return,
    };
    let unused: Vec<ir::UserExternalNameRef> = func
        .params
        .user_named_funcs()
        .keys()
        .filter(|r| !used.contains_key(r))
        .collect();
    for r in unused {
        func.params.reset_user_func_name(r, own.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cranelift_codegen::settings::OptLevel as CraneliftOptLevel;

    const FILE: &str = "test run\nset opt_level=none\nset preserve_frame_pointers\ntarget x86_64\ntarget aarch64 has_lse\n\nfunction %f() {\nblock0:\n    return\n}\n";

    #[test]
    fn the_section_for_the_target_reaches_cranelift() {
        let file = ClifFile::parse_for("t.clif", FILE, Machine::Target(Target::Aarch64)).unwrap();
        // `-Oz` asks for `opt_level=speed`; the file's `set` wins.
        let isa = Target::Aarch64
            .isa_with(OptLevel::Oz, &file.module.settings)
            .unwrap();
        assert_eq!(isa.flags().opt_level(), CraneliftOptLevel::None);
        assert!(isa.flags().preserve_frame_pointers());
        assert!(!isa.flags().is_pic());
        let lse = isa.isa_flags().into_iter().find(|f| f.name == "has_lse");
        assert_eq!(lse.and_then(|f| f.as_bool()), Some(true));
        let x86 = ClifFile::parse_for("t.clif", FILE, Machine::Target(Target::X86_64)).unwrap();
        assert!(x86.module.settings.isa.is_empty());
    }

    #[test]
    fn a_symbol_global_value_may_name_a_function() {
        // `%h` takes the address of `f` before `%g` calls it: the data
        // import becomes a function import.
        let text = "function %h() -> i64 system_v {\n    gv0 = symbol %f\nblock0:\n    v0 = symbol_value.i64 gv0\n    return v0\n}\n\nfunction %g() system_v {\n    fn0 = %f() system_v\nblock0:\n    call fn0()\n    return\n}\n";
        let file = ClifFile::parse("t.clif", text).unwrap();
        let f = file.module.symbol_index("f").unwrap();
        assert!(matches!(
            file.module.symbols[f as usize].kind,
            SymbolKind::Function(_)
        ));
        assert_eq!(file.module.symbols[f as usize].linkage, Linkage::Import);
    }
}
