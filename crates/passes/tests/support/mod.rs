//! Helpers shared by the passes' integration tests (each test file includes
//! this module with `mod support;` and uses what it needs).
#![allow(dead_code)]

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use cranelift_codegen::data_value::DataValue;
use cranelift_codegen::ir::Function;
use cranelift_interpreter::environment::FunctionStore;
use cranelift_interpreter::interpreter::{Interpreter, InterpreterState};
use cranelift_interpreter::step::ControlFlow;

/// The workspace root.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
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
            store.add(f.name.to_string(), f);
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
