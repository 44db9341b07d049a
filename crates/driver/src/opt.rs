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
//!
//! The interpreter's steps are driven here ([`run_call`]), not by
//! `Interpreter::call`, which recurses in Rust once per call and once per
//! *tail* call: a loop of a million `return_call`s overflowed parec's stack
//! and aborted the process. Here a tail call replaces its caller's frame,
//! a call's return point is kept on the heap, and calls nest at most
//! [`MAX_CALL_DEPTH`] deep (deeper is a failure of the run, not a crash).
//!
//! One instruction is computed here as the CLIF reference defines it rather
//! than as cranelift-interpreter 0.135 does: `srem` of the type's smallest
//! value by -1 is 0 (`srem` "traps if the divisor is zero", nothing else,
//! and both backends return 0), where the interpreter traps `int_ovf`
//! (upstream; docs/DESIGN.md, "Toolchain facts"). So `--run` agrees with
//! compiled code ([`srem_min_by_minus_one`]).

use std::fmt::Write as _;
use std::panic::{self, AssertUnwindSafe};

use anyhow::{anyhow, Result};
use cranelift_codegen::control::ControlPlane;
use cranelift_codegen::data_value::DataValue;
use cranelift_codegen::ir;
use cranelift_codegen::Context;
use cranelift_interpreter::environment::FunctionStore;
use cranelift_interpreter::instruction::DfgInstructionContext;
use cranelift_interpreter::interpreter::{InterpreterError, InterpreterState};
use cranelift_interpreter::state::State as _;
use cranelift_interpreter::step::{step, ControlFlow};
use cranelift_interpreter::value::DataValueExt as _;
use cranelift_reader::{Comparison, RunCommand};
use parec_passes::clif_module::{count_insts, ClifModule};

use crate::build::{Backend, Build, BuildMode, Input, Units};
use crate::clif_file::ClifFile;
use crate::clif_header;
use crate::codegen::CodeModel;
use crate::pipeline::Pipeline;
use crate::runtime::RuntimeChoice;
use crate::target::{Machine, OptLevel, Target};

/// Instructions the interpreter may execute per run command.
const FUEL: u64 = 50_000_000;

/// Deepest nesting of calls (not tail calls) a run command may reach.
const MAX_CALL_DEPTH: usize = 1 << 18;

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

/// Runs `pipeline` on the `.clif` text `text` (from file `name`) for
/// `target`: by default the first target of the file's `target` lines that
/// parec builds for, else the default target. The size guard of the passes
/// and the verifier use that target's ISA, as `parec build` does.
pub fn opt(
    name: &str,
    text: &str,
    pipeline: &Pipeline,
    target: Option<Target>,
    run: bool,
    stats: bool,
) -> Result<OptReport> {
    let target = match target {
        Some(target) => target,
        None => clif_header::read(name, text)?
            .header
            .first_target()
            .unwrap_or_default(),
    };
    let file = ClifFile::parse_for(name, text, Machine::Target(target))?;
    let before = file.module.clone();
    let build = Build {
        pipeline: pipeline.clone(),
        level: OptLevel::Oz,
        mode: BuildMode::Local,
        backend: Backend::Clif(Some(target)),
        jobs: 1,
        units: Units::PerModule,
        code_model: CodeModel::default(),
        // The file's module alone: no freestanding runtime joins it.
        runtime: RuntimeChoice::Libc,
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
        let mut text = instruction_stats(&file, &before, &after, target)?;
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
/// Cranelift's own optimizer (for `target`) on the passes' output.
fn instruction_stats(
    file: &ClifFile,
    before: &ClifModule,
    after: &ClifModule,
    target: Target,
) -> Result<String> {
    let isa = target.isa_with(OptLevel::Oz, &after.settings)?;
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
        let Some(function) = store.index_of(&name).and_then(|i| store.get_by_index(i)) else {
            return Outcome::Failed(
                InterpreterError::UnknownFunctionName(name.clone()).to_string(),
            );
        };
        let mut state = InterpreterState::default().with_function_store(store.clone());
        run_call(&mut state, function, args)
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

/// Interprets a call of `function` with `args` to its end, step by step
/// (see the module doc): what `Interpreter::call` does, with an explicit
/// stack of return points.
fn run_call<'a>(
    state: &mut InterpreterState<'a>,
    function: &'a ir::Function,
    args: &[DataValue],
) -> Outcome {
    let mut fuel = FUEL;
    // The call instructions waiting for their callee to return, innermost last.
    let mut return_points: Vec<ir::Inst> = Vec::new();
    let mut next = enter(state, function, args.to_vec());
    loop {
        let current = state.current_frame().function();
        let Some(inst) = next else {
            return Outcome::Failed(InterpreterError::Unreachable.to_string());
        };
        if fuel == 0 {
            return Outcome::Failed(InterpreterError::FuelExhausted.to_string());
        }
        fuel -= 1;
        let flow = match srem_min_by_minus_one(state, inst, &current.dfg) {
            Some(zero) => ControlFlow::Assign(vec![zero].into()),
            None => match step(state, DfgInstructionContext::new(inst, &current.dfg)) {
                Ok(flow) => flow,
                Err(e) => return Outcome::Failed(InterpreterError::from(e).to_string()),
            },
        };
        next = match flow {
            ControlFlow::Assign(values) => {
                let results = current.dfg.inst_results(inst);
                state.current_frame_mut().set_all(results, values.to_vec());
                current.layout.next_inst(inst)
            }
            ControlFlow::Continue => current.layout.next_inst(inst),
            ControlFlow::ContinueAt(block, values) => {
                let params = current.dfg.block_params(block);
                state.current_frame_mut().set_all(params, values.to_vec());
                current.layout.first_inst(block)
            }
            ControlFlow::Call(callee, values) => {
                if return_points.len() >= MAX_CALL_DEPTH {
                    return Outcome::Failed(format!("calls nest deeper than {MAX_CALL_DEPTH}"));
                }
                return_points.push(inst);
                enter(state, callee, values.to_vec())
            }
            ControlFlow::ReturnCall(callee, values) => {
                state.pop_frame();
                enter(state, callee, values.to_vec())
            }
            ControlFlow::Return(values) => {
                state.pop_frame();
                let Some(call) = return_points.pop() else {
                    return Outcome::Returned(values.to_vec());
                };
                let caller = state.current_frame().function();
                let results = caller.dfg.inst_results(call);
                state.current_frame_mut().set_all(results, values.to_vec());
                caller.layout.next_inst(call)
            }
            ControlFlow::Trap(trap) => return Outcome::Trapped(trap.to_string()),
        };
    }
}

/// The result of `inst` if it is `srem` of its type's smallest value by -1:
/// 0, as the CLIF reference and compiled code have it (see the module doc).
fn srem_min_by_minus_one(
    state: &InterpreterState<'_>,
    inst: ir::Inst,
    dfg: &ir::DataFlowGraph,
) -> Option<DataValue> {
    let ir::InstructionData::Binary {
        opcode: ir::Opcode::Srem,
        args: [x, y],
    } = dfg.insts[inst]
    else {
        return None;
    };
    let ty = dfg.value_type(x);
    let frame = state.current_frame();
    let dividend = frame.get(x).clone().into_int_signed().ok()?;
    let divisor = frame.get(y).clone().into_int_signed().ok()?;
    let min = i128::MIN >> (128 - ty.bits());
    (dividend == min && divisor == -1)
        .then(|| DataValue::int(0, ty).ok())
        .flatten()
}

/// Pushes a frame for `function` with its entry block's parameters set to
/// `args`; returns its first instruction.
fn enter<'a>(
    state: &mut InterpreterState<'a>,
    function: &'a ir::Function,
    args: Vec<DataValue>,
) -> Option<ir::Inst> {
    let entry = function.layout.entry_block()?;
    state.push_frame(function);
    state
        .current_frame_mut()
        .set_all(function.dfg.block_params(entry), args);
    function.layout.first_inst(entry)
}
