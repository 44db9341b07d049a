//! Running a program in-process with cranelift-jit.
//!
//! All ClifModules of a program (for Pare: the whole program plus the runtime)
//! are defined into one `JITModule` for the host ISA. Symbols that none of
//! them defines are resolved with `dlsym` in this process (libc: `putchar`,
//! `fwrite`, `calloc`, `stdout`, ...) *before* finalizing, because
//! cranelift-jit panics on an unresolvable symbol; such references are
//! compiled non-colocated (absolute addresses), since libc may lie beyond a
//! PC-relative reach. All JIT code and data live in one arena so that
//! colocated references between them always reach.
//!
//! `main` is called through the C ABI, on a thread of its own with a fixed
//! stack ([`PROGRAM_STACK_SIZE`]); afterwards all C streams are flushed.
//! A program that traps or calls `exit` ends this process from inside the
//! runtime (`pare_trap` / `pare_exit` call libc `exit`).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::ffi::CString;

use anyhow::{anyhow, bail, Result};
use cranelift_codegen::ir::{self, types, ExternalName, GlobalValueData, InstructionData};
use cranelift_jit::{ArenaMemoryProvider, JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, FuncOrDataId, Module};
use parec_passes::clif_module::{ClifModule, Linkage, SymbolKind};

use crate::clif_to_module::{Colocation, ModuleDefiner};
use crate::target::{common_settings, host_jit_isa_with, OptLevel};

/// Address space reserved for JIT code and data.
const ARENA_SIZE: usize = 1 << 30;

/// What `main` returns, which decides how it is called.
#[derive(Clone, Copy, Debug)]
enum MainKind {
    Unit,
    I32,
    I64,
}

/// JIT-compiles `modules` (whose CLIF passes have run: see
/// [`crate::build::Backend::Jit`]), calls `main` and returns its status (0
/// for a `main` without result).
pub fn execute(modules: Vec<ClifModule>, level: OptLevel) -> Result<i32> {
    execute_with(modules, level, |_| Ok(()))
}

/// The address and size of the data object `name` of the finalized JIT
/// code, if the program defines one.
pub type DataLookup<'a> = &'a dyn Fn(&str) -> Option<(*const u8, usize)>;

/// Like [`execute`], calling `before_main` with a way to find the
/// program's data objects once the code is ready, before `main` runs
/// (a profiled run finds its counters so).
pub fn execute_with(
    mut modules: Vec<ClifModule>,
    level: OptLevel,
    before_main: impl FnOnce(DataLookup) -> Result<()>,
) -> Result<i32> {
    let isa = host_jit_isa_with(level, &common_settings(&modules)?)?;
    let main_kind = main_kind(&modules, isa.default_call_conv())?;
    uniquify_locals(&mut modules);

    let mut builder = JITBuilder::with_isa(isa, default_libcall_names());
    let arena = ArenaMemoryProvider::new_with_size(ARENA_SIZE)
        .map_err(|e| anyhow!("cannot reserve JIT memory: {e}"))?;
    builder.memory_provider(Box::new(arena));
    for (name, addr) in resolve_imports(&modules)? {
        builder.symbol(name, addr);
    }
    let mut jit = JITModule::new(builder);
    {
        let mut definer = ModuleDefiner::new(&mut jit, Colocation::FarImports);
        for m in &modules {
            definer.declare(m)?;
        }
        for m in &modules {
            definer.define(m)?;
        }
    }
    jit.finalize_definitions()
        .map_err(|e| anyhow!("cannot finalize JIT code: {e}"))?;
    let Some(FuncOrDataId::Func(main_id)) = jit.get_name("main") else {
        bail!("the program has no `main` function");
    };
    let code = jit.get_finalized_function(main_id);
    let data = |name: &str| match jit.get_name(name) {
        Some(FuncOrDataId::Data(id)) => Some(jit.get_finalized_data(id)),
        _ => None,
    };
    before_main(&data)?;
    let status = call_main_on_program_stack(code, main_kind)?;
    flush_c_streams()?;
    Ok(status)
}

/// Stack of the thread the JIT runs `main` on: the main thread's stack of an
/// executable under the default `ulimit -s`, so that JIT-compiled and built
/// programs recurse about equally deep, whatever stack parec's own thread
/// has left. Its guard page turns overflow into the runtime's `stack
/// overflow` trap (Pare's `main` installs the handler first).
const PROGRAM_STACK_SIZE: usize = 8 << 20;

/// Calls `main` (at `code`) on a thread with a [`PROGRAM_STACK_SIZE`] stack
/// and returns its status.
fn call_main_on_program_stack(code: *const u8, kind: MainKind) -> Result<i32> {
    // A raw pointer is not `Send`; the address is.
    let address = code as usize;
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("pare-main".into())
            .stack_size(PROGRAM_STACK_SIZE)
            // SAFETY: `main` was compiled for the host with the platform C
            // calling convention and the signature `kind` was checked against.
            .spawn_scoped(scope, move || unsafe {
                call_main(address as *const u8, kind)
            })
            .map_err(|e| anyhow!("cannot start the program's thread: {e}"))?
            .join()
            .map_err(|_| anyhow!("the program's thread panicked"))
    })
}

/// Calls the JIT-compiled `main` at `code`.
///
/// # Safety
/// `code` must be a function with the platform C calling convention and the
/// signature `kind` describes.
unsafe fn call_main(code: *const u8, kind: MainKind) -> i32 {
    // SAFETY: the caller's contract.
    unsafe {
        match kind {
            MainKind::Unit => {
                std::mem::transmute::<*const u8, extern "C" fn()>(code)();
                0
            }
            MainKind::I32 => std::mem::transmute::<*const u8, extern "C" fn() -> i32>(code)(),
            MainKind::I64 => {
                std::mem::transmute::<*const u8, extern "C" fn() -> i64>(code)() as i32
            }
        }
    }
}

/// Flushes every C output stream after `main` returned; a failed flush, or
/// an earlier error on `stdout` (a write the buffer hid), is an error: the
/// program's output is lost, and the C library's exit would not say so.
/// (Pare's runtime has flushed and checked `stdout` already, trapping on
/// an error; this catches `.clif` programs.)
fn flush_c_streams() -> Result<()> {
    // SAFETY: fflush(NULL) flushes every C output stream; always valid.
    let flushed = unsafe { libc::fflush(std::ptr::null_mut()) };
    let flush_error = std::io::Error::last_os_error();
    let stdout_failed = lookup_host_symbol("stdout").is_some_and(|stdout| {
        // SAFETY: `stdout` is libc's `FILE *stdout` variable; reading it and
        // asking its error flag is always valid.
        unsafe { libc::ferror(*(stdout as *const *mut libc::FILE)) != 0 }
    });
    if flushed != 0 {
        bail!(
            "cannot write the program's output: {}",
            crate::io_error::reason(&flush_error)
        );
    }
    if stdout_failed {
        bail!("cannot write the program's output: stdout has a write error");
    }
    Ok(())
}

/// Renames `Local` symbols whose names occur in another module (two modules'
/// string literals, say), since all modules share one JIT namespace. Local
/// symbols are invisible outside their module, so this changes nothing else.
fn uniquify_locals(modules: &mut [ClifModule]) {
    // How many modules use each name.
    let mut users: HashMap<String, usize> = HashMap::new();
    for m in modules.iter() {
        let names: HashSet<&str> = m.symbols.iter().map(|s| s.name.as_str()).collect();
        for name in names {
            *users.entry(name.to_string()).or_default() += 1;
        }
    }
    let mut taken: HashSet<String> = users.keys().cloned().collect();
    for (i, m) in modules.iter_mut().enumerate() {
        for sym in &mut m.symbols {
            if sym.linkage != Linkage::Local || users.get(&sym.name).copied().unwrap_or(0) < 2 {
                continue;
            }
            let fresh = (0..)
                .map(|n| format!("{}.jit{i}.{n}", sym.name))
                .find(|c| !taken.contains(c))
                .unwrap_or_default();
            taken.insert(fresh.clone());
            sym.name = fresh;
        }
        m.symbols_changed();
    }
}

/// Finds `main` and checks that it can be called as a C function without arguments.
fn main_kind(modules: &[ClifModule], c_conv: cranelift_codegen::isa::CallConv) -> Result<MainKind> {
    let sig = modules
        .iter()
        .flat_map(|m| m.symbols.iter())
        .find(|s| s.name == "main" && s.linkage != Linkage::Import)
        .and_then(|s| match &s.kind {
            SymbolKind::Function(sig) => Some(sig),
            SymbolKind::Data { .. } => None,
        })
        .ok_or_else(|| anyhow!("the program has no `main` function"))?;
    if sig.call_conv != c_conv {
        bail!(
            "`main` must use the platform C calling convention ({c_conv}), not {}",
            sig.call_conv
        );
    }
    if !sig.params.is_empty() {
        bail!("`main` must take no parameters");
    }
    match sig
        .returns
        .iter()
        .map(|r| r.value_type)
        .collect::<Vec<_>>()
        .as_slice()
    {
        [] => Ok(MainKind::Unit),
        [t] if *t == types::I32 => Ok(MainKind::I32),
        [t] if *t == types::I64 => Ok(MainKind::I64),
        _ => bail!("`main` must return nothing, i32 or i64"),
    }
}

/// Looks up in this process every symbol that the modules' code refers to
/// and none defines. An import nothing refers to (a `.clif` file's unused
/// `symbol` global value) is left alone: nothing will ask for its address.
fn resolve_imports(modules: &[ClifModule]) -> Result<Vec<(String, *const u8)>> {
    let defined: HashSet<&str> = modules
        .iter()
        .flat_map(|m| m.symbols.iter())
        .filter(|s| s.linkage != Linkage::Import)
        .map(|s| s.name.as_str())
        .collect();
    let imports: BTreeSet<&str> = modules
        .iter()
        .flat_map(|m| {
            referenced_symbols(m)
                .into_iter()
                .filter_map(|i| m.symbols.get(i as usize))
        })
        .filter(|s| s.linkage == Linkage::Import && !defined.contains(s.name.as_str()))
        .map(|s| s.name.as_str())
        .collect();
    imports
        .into_iter()
        .map(|name| match lookup_host_symbol(name) {
            Some(addr) => Ok((name.to_string(), addr)),
            None => Err(anyhow!("undefined symbol `{name}`: not defined by the program and not found in the C library")),
        })
        .collect()
}

/// The symbols a module's code and data refer to: callees, function
/// addresses, the symbols under the global values that instructions and
/// stack limits use, and data relocation targets.
fn referenced_symbols(module: &ClifModule) -> BTreeSet<u32> {
    let mut used = BTreeSet::new();
    for def in &module.functions {
        let func = &def.func;
        let mut name_of = |name: &ExternalName| {
            if let ExternalName::User(r) = name {
                used.insert(func.params.user_named_funcs()[*r].index);
            }
        };
        let mut global_values: Vec<ir::GlobalValue> = func.stack_limit.into_iter().collect();
        for block in func.layout.blocks() {
            for inst in func.layout.block_insts(block) {
                match func.dfg.insts[inst] {
                    InstructionData::Call { func_ref, .. }
                    | InstructionData::TryCall { func_ref, .. }
                    | InstructionData::FuncAddr { func_ref, .. } => {
                        name_of(&func.dfg.ext_funcs[func_ref].name)
                    }
                    InstructionData::UnaryGlobalValue { global_value, .. } => {
                        global_values.push(global_value)
                    }
                    _ => {}
                }
            }
        }
        while let Some(gv) = global_values.pop() {
            match &func.global_values[gv] {
                GlobalValueData::Symbol { name, .. } => name_of(name),
                GlobalValueData::Load { base, .. } | GlobalValueData::IAddImm { base, .. } => {
                    global_values.push(*base)
                }
                _ => {}
            }
        }
    }
    used.extend(
        module
            .data
            .iter()
            .flat_map(|d| d.relocs.iter().map(|r| r.target)),
    );
    used
}

/// `dlsym(RTLD_DEFAULT, name)`: the address of a symbol of this process.
pub fn lookup_host_symbol(name: &str) -> Option<*const u8> {
    let cname = CString::new(name).ok()?;
    // SAFETY: `cname` is a valid NUL-terminated string; dlsym only reads it.
    let addr = unsafe { libc::dlsym(libc::RTLD_DEFAULT, cname.as_ptr()) };
    (!addr.is_null()).then_some(addr as *const u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_names_are_made_unique_across_modules() {
        let mut a = ClifModule::new("a");
        a.declare("str", SymbolKind::Data { writable: false }, Linkage::Local);
        a.declare(
            "shared",
            SymbolKind::Data { writable: false },
            Linkage::Export,
        );
        let mut b = ClifModule::new("b");
        b.declare("str", SymbolKind::Data { writable: false }, Linkage::Local);
        b.declare(
            "shared",
            SymbolKind::Data { writable: false },
            Linkage::Import,
        );
        let mut modules = vec![a, b];
        uniquify_locals(&mut modules);
        assert_eq!(modules[0].symbols[0].name, "str.jit0.0");
        assert_eq!(modules[1].symbols[0].name, "str.jit1.0");
        assert_eq!(modules[1].symbols[1].name, "shared");
    }

    #[test]
    fn libc_symbols_resolve() {
        for name in [
            "stdout", "stderr", "fwrite", "calloc", "putchar", "exit", "fflush",
        ] {
            assert!(
                lookup_host_symbol(name).is_some(),
                "{name} does not resolve"
            );
        }
        assert!(lookup_host_symbol("no_such_symbol_in_libc_parec").is_none());
    }
}
