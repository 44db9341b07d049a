//! Helpers shared by the passes' integration tests (each test file includes
//! this module with `mod support;` and uses what it needs).
#![allow(dead_code)]

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use std::collections::HashMap;

use cranelift_codegen::data_value::DataValue;
use cranelift_codegen::ir::{
    ExternalName, Function, GlobalValueData, Signature, UserExternalName, UserFuncName,
};
use cranelift_codegen::isa::CallConv;
use cranelift_codegen::settings;
use cranelift_codegen::verify_function;
use cranelift_interpreter::environment::FunctionStore;
use cranelift_interpreter::interpreter::{Interpreter, InterpreterState};
use cranelift_interpreter::step::ControlFlow;
use cranelift_reader::{parse_run_command, parse_test, ParseOptions, RunCommand};
use parec_passes::clif_module::{ClifModule, FunctionDef, Linkage, SymbolKind};

/// The workspace root.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A `.clif` file of functions and their `; run:` / `; print:` lines.
pub struct FunctionCase {
    pub name: String,
    pub funcs: Vec<Function>,
    pub runs: Vec<RunCommand>,
}

/// The `.clif` files of `filetests/<dir>` as function cases, in name order.
pub fn load_function_cases(dir: &str) -> Vec<FunctionCase> {
    clif_files(dir)
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            let file = parse_test(&text, ParseOptions::default())
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let mut runs = Vec::new();
            let mut funcs = Vec::new();
            for (func, details) in file.functions {
                for c in &details.comments {
                    let cmd = parse_run_command(c.text, &func.signature).unwrap_or_else(|e| {
                        panic!("{}: bad run line {}: {e}", path.display(), c.text)
                    });
                    runs.extend(cmd);
                }
                funcs.push(func);
            }
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            FunctionCase { name, funcs, runs }
        })
        .collect()
}

/// The `.clif` files of `filetests/<dir>`, in name order.
pub fn clif_files(dir: &str) -> Vec<PathBuf> {
    let dir = workspace().join("filetests").join(dir);
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "clif"))
        .collect();
    paths.sort();
    paths
}

/// Runs `name(args)` with the CLIF interpreter over `funcs`: `Ok(results)`,
/// or `Err(trap or failure)`. The interpreter panics on some inputs (data
/// symbols, memory outside stack slots), which count as failures.
pub fn interpret(
    funcs: &[Function],
    name: &str,
    args: &[DataValue],
) -> Result<Vec<DataValue>, String> {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let mut store = FunctionStore::default();
        for f in funcs {
            // Calls look functions up by their printed name (`%f`), run
            // lines by the bare name (`f`).
            let printed = f.name.to_string();
            if let Some(bare) = printed.strip_prefix('%') {
                store.add(bare.to_string(), f);
            }
            store.add(printed, f);
        }
        let state = InterpreterState::default().with_function_store(store);
        let mut interp = Interpreter::new(state).with_fuel(Some(1_000_000));
        match interp.call_by_name(name, args) {
            Ok(ControlFlow::Return(values)) => Ok(values.to_vec()),
            Ok(ControlFlow::Trap(trap)) => Err(format!("trap: {trap}")),
            Ok(other) => Err(format!("unexpected control flow: {other:?}")),
            Err(e) => Err(format!("interpreter error: {e}")),
        }
    }));
    outcome.unwrap_or_else(|_| Err("interpreter panicked".into()))
}

pub struct Case {
    pub name: String,
    pub module: ClifModule,
    pub runs: Vec<(String, Vec<DataValue>)>,
}

/// Parses a `.clif` file into a module: every function a local symbol named
/// like the function (exported if a line `; export: %name` says so), every
/// other name an import.
pub fn load(path: &Path, module_name: &str) -> Case {
    let text = std::fs::read_to_string(path).unwrap();
    let name = path.file_stem().unwrap().to_string_lossy().into_owned();
    parse_case(&text, &name, module_name)
}

/// [`load`] for a file's text: `name` names the case.
pub fn parse_case(text: &str, name: &str, module_name: &str) -> Case {
    let file = parse_test(text, ParseOptions::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut module = ClifModule::new(module_name);
    let mut runs = Vec::new();
    let exported: Vec<String> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("; export:"))
        .map(|n| testcase(n.trim()))
        .collect();
    for (func, _) in &file.functions {
        let name = testcase(&func.name.to_string());
        let linkage = if exported.contains(&name) {
            Linkage::Export
        } else {
            Linkage::Local
        };
        module.declare(&name, SymbolKind::Function(func.signature.clone()), linkage);
    }
    for (mut func, details) in file.functions {
        for c in &details.comments {
            let cmd = parse_run_command(c.text, &func.signature)
                .unwrap_or_else(|e| panic!("{name}: bad run line {}: {e}", c.text));
            if let Some(RunCommand::Run(inv, _, _)) | Some(RunCommand::Print(inv)) = cmd {
                runs.push((inv.func.clone(), inv.args.clone()));
            }
        }
        let own = module
            .symbol_index(&testcase(&func.name.to_string()))
            .unwrap();
        func.name = ClifModule::func_name(own);
        rename_to_symbols(&mut module, &mut func);
        module.functions.push(FunctionDef { symbol: own, func });
    }
    Case {
        name: name.to_string(),
        module,
        runs,
    }
}

fn testcase(printed: &str) -> String {
    printed.trim_start_matches('%').to_string()
}

/// Test-case names (`%f`) in ext funcs and symbol global values become
/// module symbols.
fn rename_to_symbols(module: &mut ClifModule, func: &mut Function) {
    let fix = |module: &mut ClifModule, func: &mut Function, name: &ExternalName, data: bool| {
        let ExternalName::TestCase(t) = name else {
            return name.clone();
        };
        let kind = if data {
            SymbolKind::Data { writable: true }
        } else {
            SymbolKind::Function(Signature::new(CallConv::Tail))
        };
        let s = module.declare(&testcase(&t.to_string()), kind, Linkage::Import);
        ExternalName::user(func.declare_imported_user_function(ClifModule::external_name(s)))
    };
    let refs: Vec<_> = func.dfg.ext_funcs.keys().collect();
    for r in refs {
        let name = func.dfg.ext_funcs[r].name.clone();
        func.dfg.ext_funcs[r].name = fix(module, func, &name, false);
    }
    let gvs: Vec<_> = func.global_values.keys().collect();
    for gv in gvs {
        if let GlobalValueData::Symbol { name, .. } = func.global_values[gv].clone() {
            let new = fix(module, func, &name, true);
            if let GlobalValueData::Symbol { name, .. } = &mut func.global_values[gv] {
                *name = new;
            }
        }
    }
}

/// The module's functions with symbol names turned back into `%name`s.
pub fn to_testcase_functions(module: &ClifModule) -> Vec<Function> {
    let name_of = |u: &UserExternalName| module.symbols[u.index as usize].name.clone();
    module
        .functions
        .iter()
        .map(|def| {
            let mut f = def.func.clone();
            f.name = UserFuncName::testcase(module.symbols[def.symbol as usize].name.clone());
            let user: HashMap<_, _> = f
                .params
                .user_named_funcs()
                .iter()
                .map(|(r, u)| (r, name_of(u)))
                .collect();
            let refs: Vec<_> = f.dfg.ext_funcs.keys().collect();
            for r in refs {
                if let ExternalName::User(u) = f.dfg.ext_funcs[r].name {
                    f.dfg.ext_funcs[r].name = ExternalName::testcase(user[&u].clone());
                }
            }
            let gvs: Vec<_> = f.global_values.keys().collect();
            for gv in gvs {
                if let GlobalValueData::Symbol { name, .. } = &mut f.global_values[gv] {
                    if let ExternalName::User(u) = name {
                        *name = ExternalName::testcase(user[u].clone());
                    }
                }
            }
            f
        })
        .collect()
}

/// `func` after `pass`, run on a copy, with what the pass returned; panics
/// (naming the pass `name`) if the result fails Cranelift's verifier.
pub fn run_verified<S>(
    func: &Function,
    name: &str,
    pass: impl FnOnce(&mut Function) -> S,
) -> (Function, S) {
    let mut f = func.clone();
    let stats = pass(&mut f);
    if let Err(errors) = verify_function(&f, &settings::Flags::new(settings::builder())) {
        panic!(
            "verifier errors after {name} on {}:\n{errors}\n{}",
            func.name,
            f.display()
        );
    }
    (f, stats)
}

pub fn verify_all(module: &ClifModule, context: &str) {
    let flags = settings::Flags::new(settings::builder());
    for def in &module.functions {
        if let Err(e) = verify_function(&def.func, &flags) {
            panic!(
                "{context}: {} fails verification:\n{e}\n{}",
                module.symbols[def.symbol as usize].name,
                def.func.display()
            );
        }
    }
}

/// The aarch64 ISA the size passes measure with in tests.
pub fn aarch64() -> cranelift_codegen::isa::OwnedTargetIsa {
    use cranelift_codegen::settings::Configurable;
    let mut flags = settings::builder();
    flags.set("opt_level", "speed").unwrap();
    cranelift_codegen::isa::lookup_by_name("aarch64-unknown-linux-gnu")
        .unwrap()
        .finish(settings::Flags::new(flags))
        .unwrap()
}

/// The aarch64 ISA at Cranelift's `opt_level` `level` (`speed` or
/// `speed_and_size`, the two parec uses).
pub fn aarch64_at(level: &str) -> cranelift_codegen::isa::OwnedTargetIsa {
    use cranelift_codegen::settings::Configurable;
    let mut flags = settings::builder();
    flags.set("opt_level", level).unwrap();
    cranelift_codegen::isa::lookup_by_name("aarch64")
        .unwrap()
        .finish(settings::Flags::new(flags))
        .unwrap()
}

/// Bytes of the machine code `isa` emits for `func` (it must compile).
pub fn code_size(isa: &dyn cranelift_codegen::isa::TargetIsa, func: &Function) -> usize {
    let mut ctx = cranelift_codegen::Context::for_function(func.clone());
    ctx.compile(isa, &mut Default::default())
        .unwrap_or_else(|e| panic!("{}: {e:?}", func.name))
        .code_buffer()
        .len()
}

/// The cases of `filetests/<dir>`, each one module, with every function a
/// run line calls exported (the module's entry points).
pub fn load_module_cases(dir: &str) -> Vec<Case> {
    clif_files(dir)
        .iter()
        .map(|p| {
            let mut case = load(p, "m");
            for (name, _) in &case.runs {
                let name = name.trim_start_matches('%');
                let s = case.module.symbol_index(name).unwrap();
                case.module.symbols[s as usize].linkage = Linkage::Export;
            }
            case
        })
        .collect()
}

/// Failures of the run lines of `case` between `before` and `after`: a run
/// line that does not run before (other than by trapping), or whose results
/// or trap differ.
pub fn run_differences(case: &Case, before: &[Function], after: &[Function]) -> Vec<String> {
    let mut failures = Vec::new();
    for (name, args) in &case.runs {
        let b = interpret(before, name, args);
        let a = interpret(after, name, args);
        if b.as_ref().is_err_and(|e| !e.starts_with("trap")) {
            failures.push(format!("{}: {name}{args:?} does not run: {b:?}", case.name));
        }
        if b != a {
            failures.push(format!(
                "{}: {name}{args:?}: before {b:?}, after {a:?}",
                case.name
            ));
        }
    }
    failures
}

/// The `; expect:` lines of a case's file in `filetests/<dir>`.
pub fn expectations(dir: &str, case: &Case) -> Vec<String> {
    let path = workspace()
        .join("filetests")
        .join(dir)
        .join(format!("{}.clif", case.name));
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter_map(|l| l.trim().strip_prefix("; expect:"))
        .map(|l| l.trim().to_string())
        .collect()
}

/// Snapshots what a module pass did to a case, in `snapshots/<dir>/`: its
/// statistics line, that the run lines agree, one line per remark, and the
/// functions after the pass.
pub fn snapshot_pass(
    dir: &str,
    case: &Case,
    stats: &dyn std::fmt::Display,
    remarks: &[parec_passes::remark::Remark],
    after: &[Function],
) {
    let mut snapshot = format!("; {stats}\n; {} run line(s) agree\n", case.runs.len());
    for r in remarks {
        snapshot.push_str(&format!("; {r}\n"));
    }
    for f in after {
        snapshot.push_str(&format!("{}\n", f.display()));
    }
    insta::with_settings!({
        snapshot_path => workspace().join("snapshots").join(dir),
        prepend_module_to_snapshot => false,
        omit_expression => true,
    }, {
        insta::assert_snapshot!(case.name.clone(), snapshot);
    });
}
