//! `parec opt`: run CLIF passes on a `.clif` file, print the result, and
//! optionally check it by differential interpretation.
//!
//! The file becomes one ClifModule ([`crate::clif_file`]) and goes through the
//! same [`Pipeline`] as every build. With `--run`, every `; run:` / `; print:`
//! command is executed with cranelift-interpreter on the function before and
//! after the passes; any difference in results or traps, or a `run:` whose
//! expectation does not hold, is a failure. The interpreter panics on some
//! inputs (data symbols, memory outside stack slots), so each call runs under
//! `catch_unwind`, and it is given fuel so that a loop cannot hang `opt`.

use std::fmt::Write as _;
use std::panic::{self, AssertUnwindSafe};

use anyhow::{anyhow, Result};
use cranelift_codegen::control::ControlPlane;
use cranelift_codegen::data_value::DataValue;
use cranelift_codegen::ir;
use cranelift_codegen::Context;
use cranelift_interpreter::environment::FunctionStore;
use cranelift_interpreter::interpreter::{Interpreter, InterpreterState};
use cranelift_interpreter::step::ControlFlow;
use cranelift_reader::{Comparison, RunCommand};
use parec_passes::clif_module::{count_insts, ClifModule};

use crate::build::{Backend, Build, BuildMode, Input};
use crate::clif_file::ClifFile;
use crate::pipeline::Pipeline;
use crate::target::{OptLevel, Target};

/// Instructions the interpreter may execute per run command.
const FUEL: u64 = 50_000_000;

/// What `parec opt` produced.
pub struct OptReport {
    /// The optimized functions, as CLIF text in the file's naming.
    pub clif: String,
    /// Per-function instruction counts, if asked for.
    pub stats: Option<String>,
    /// `--run` failures (empty: all run commands agree).
    pub failures: Vec<String>,
    /// Number of run commands executed.
    pub runs: usize,
}

/// Runs `pipeline` on the `.clif` text `text` (from file `name`).
pub fn opt(
    name: &str,
    text: &str,
    pipeline: &Pipeline,
    run: bool,
    stats: bool,
) -> Result<OptReport> {
    let file = ClifFile::parse(name, text)?;
    let before = file.module.clone();
    let build = Build {
        pipeline: pipeline.clone(),
        level: OptLevel::Oz,
        mode: BuildMode::Local,
        backend: Backend::Clif(None),
        jobs: 1,
    };
    let output = build
        .run(Input::Modules(vec![file.module.clone()]))
        .map_err(|e| anyhow!("{name}: {}", anyhow::Error::from(e)))?;
    let after = output
        .modules
        .into_iter()
        .next()
        .ok_or_else(|| anyhow!("{name}: the passes lost the module"))?;

    let mut clif = String::new();
    for def in &after.functions {
        let _ = writeln!(clif, "{}", file.restore_names(&def.func).display());
    }
    // Symbols the passes created (merged `.Tgm` bodies) have no name in the file.
    for (i, sym) in after.symbols.iter().enumerate().skip(before.symbols.len()) {
        let _ = writeln!(clif, "; u0:{i} is `{}`", sym.name);
    }
    let stats = if stats {
        let mut text = instruction_stats(&file, &before, &after)?;
        for run in &output.passes {
            let _ = writeln!(text, "{}: {}", run.pass.name(), run.outcome.stats);
        }
        Some(text)
    } else {
        None
    };
    let (failures, runs) = if run {
        differential_runs(&file, &before, &after)
    } else {
        (Vec::new(), 0)
    };
    Ok(OptReport {
        clif,
        stats,
        failures,
        runs,
    })
}

/// Instruction counts per function: as given, after the passes, and after
/// Cranelift's own optimizer (for aarch64) on the passes' output.
fn instruction_stats(file: &ClifFile, before: &ClifModule, after: &ClifModule) -> Result<String> {
    let isa = Target::Aarch64.isa(OptLevel::Oz)?;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<32} {:>8} {:>8} {:>10}",
        "function", "before", "passes", "cranelift"
    );
    for (b, a) in before.functions.iter().zip(&after.functions) {
        let mut ctx = Context::for_function(a.func.clone());
        let optimized = match ctx.optimize(&*isa, &mut ControlPlane::default()) {
            Ok(()) => count_insts(&ctx.func).to_string(),
            Err(e) => format!("error: {e:?}"),
        };
        let _ = writeln!(
            out,
            "{:<32} {:>8} {:>8} {:>10}",
            file.printed_name(b),
            count_insts(&b.func),
            count_insts(&a.func),
            optimized
        );
    }
    let total_before: usize = before.functions.iter().map(|f| count_insts(&f.func)).sum();
    let total_after: usize = after.functions.iter().map(|f| count_insts(&f.func)).sum();
    let _ = writeln!(
        out,
        "{:<32} {:>8} {:>8}",
        "total", total_before, total_after
    );
    Ok(out)
}

/// The result of one interpreted call.
#[derive(Debug)]
enum Outcome {
    Returned(Vec<DataValue>),
    Trapped(String),
    /// The interpreter could not run the call (error or panic).
    Failed(String),
}

impl Outcome {
    fn same_as(&self, other: &Outcome) -> bool {
        match (self, other) {
            (Outcome::Returned(a), Outcome::Returned(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.bitwise_eq(y))
            }
            (Outcome::Trapped(a), Outcome::Trapped(b))
            | (Outcome::Failed(a), Outcome::Failed(b)) => a == b,
            _ => false,
        }
    }

    fn describe(&self) -> String {
        match self {
            Outcome::Returned(values) => {
                let v: Vec<String> = values.iter().map(|v| v.to_string()).collect();
                format!("returned [{}]", v.join(", "))
            }
            Outcome::Trapped(t) => format!("trapped: {t}"),
            Outcome::Failed(e) => format!("could not be interpreted: {e}"),
        }
    }
}

/// Runs every run command before and after; returns the failures and the count.
fn differential_runs(
    file: &ClifFile,
    before: &ClifModule,
    after: &ClifModule,
) -> (Vec<String>, usize) {
    let before_funcs: Vec<ir::Function> = before
        .functions
        .iter()
        .map(|d| file.restore_names(&d.func))
        .collect();
    let after_funcs: Vec<ir::Function> = after
        .functions
        .iter()
        .map(|d| file.restore_names(&d.func))
        .collect();
    let mut failures = Vec::new();
    let mut runs = 0;
    for (index, commands) in file.run_commands.iter().enumerate() {
        let own_name = file.printed_name(&before.functions[index]);
        for cmd in commands {
            runs += 1;
            let (invocation, expectation) = match cmd {
                RunCommand::Print(inv) => (inv, None),
                RunCommand::Run(inv, cmp, expected) => (inv, Some((cmp, expected))),
            };
            let target = if invocation.func == "default" {
                own_name.clone()
            } else {
                format!("%{}", invocation.func)
            };
            let old = interpret(&before_funcs, &target, &invocation.args);
            let new = interpret(&after_funcs, &target, &invocation.args);
            let call = format!("{invocation}");
            if let Some((cmp, expected)) = expectation {
                if !expectation_holds(&old, cmp, expected) {
                    failures.push(format!(
                        "{own_name}: `{cmd}` does not hold before the passes: {call} {}",
                        old.describe()
                    ));
                    continue;
                }
            }
            if let Outcome::Failed(_) = old {
                failures.push(format!("{own_name}: {call} {}", old.describe()));
                continue;
            }
            if !old.same_as(&new) {
                failures.push(format!(
                    "{own_name}: {call} differs after the passes: before {}, after {}",
                    old.describe(),
                    new.describe()
                ));
            }
        }
    }
    (failures, runs)
}

fn expectation_holds(outcome: &Outcome, cmp: &Comparison, expected: &[DataValue]) -> bool {
    let Outcome::Returned(actual) = outcome else {
        return false;
    };
    let equal =
        actual.len() == expected.len() && actual.iter().zip(expected).all(|(a, b)| a.bitwise_eq(b));
    match cmp {
        Comparison::Equals => equal,
        Comparison::NotEquals => !equal,
    }
}

/// Calls `name` with `args` in a fresh interpreter over `funcs`.
fn interpret(funcs: &[ir::Function], name: &str, args: &[DataValue]) -> Outcome {
    let mut store = FunctionStore::default();
    for f in funcs {
        let fname = f.name.to_string();
        if store.index_of(&fname).is_none() {
            store.add(fname, f);
        }
    }
    let name = if store.index_of(name).is_some() {
        name.to_string()
    } else {
        name.trim_start_matches('%').to_string()
    };
    let previous_hook = panic::take_hook();
    panic::set_hook(Box::new(|_| {}));
    let result = panic::catch_unwind(AssertUnwindSafe(|| {
        let state = InterpreterState::default().with_function_store(store);
        let mut interpreter = Interpreter::new(state).with_fuel(Some(FUEL));
        match interpreter.call_by_name(&name, args) {
            Ok(ControlFlow::Return(values)) => Outcome::Returned(values.to_vec()),
            Ok(ControlFlow::Trap(trap)) => Outcome::Trapped(trap.to_string()),
            Ok(other) => Outcome::Failed(format!("unexpected control flow {other:?}")),
            Err(e) => Outcome::Failed(e.to_string()),
        }
    }));
    panic::set_hook(previous_hook);
    result.unwrap_or_else(|payload| {
        let msg = payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "panic".to_string());
        Outcome::Failed(format!("interpreter panicked: {msg}"))
    })
}
