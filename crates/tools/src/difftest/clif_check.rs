//! CLIF-level checks of parec's passes on a lowered program.
//!
//! For every CLIF pass, the whole lowered program (as the JIT sees it) goes
//! through a one-pass pipeline with the verifier on ([`Build::run`] with the
//! CLIF backend), so a pass that breaks CLIF invariants is caught with the
//! pass and function named. Then
//! every function that cranelift-interpreter can run on its own — integer
//! parameters and results only, no calls, no memory access except stack
//! slots, no symbol addresses — is called with pseudo-random arguments
//! before and after the pass; results and traps must be identical.
//!
//! The interpreter panics on some inputs, so each call runs under
//! `catch_unwind` (with its panic message silenced on this thread only) and
//! with fuel. A call the interpreter cannot complete, before or after the
//! pass, is counted as unsupported and skipped, never a failure.

use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

use cranelift_codegen::data_value::DataValue;
use cranelift_codegen::ir::{self, types, Opcode};
use cranelift_interpreter::environment::FunctionStore;
use cranelift_interpreter::interpreter::{Interpreter, InterpreterState};
use cranelift_interpreter::step::ControlFlow;
use pare_frontend::lower::{self, LowerConfig};
use pare_frontend::tir::Program;
use parec_passes::clif_module::ClifModule;

use parec::build::{Backend, Build, BuildMode, Input, Units};
use parec::codegen::CodeModel;
use parec::pipeline::{ClifPass, Pass, Pipeline};
use parec::runtime::RuntimeChoice;
use parec::target::OptLevel;

/// Instructions the interpreter may execute per call.
const FUEL: u64 = 2_000_000;

/// Argument vectors tried per eligible function.
const CALLS_PER_FUNCTION: usize = 6;

/// Counters of one or more checks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClifStats {
    /// Functions run through a pass and verified.
    pub verified: usize,
    /// (function, pass) pairs eligible for interpretation.
    pub eligible: usize,
    /// Calls whose results were compared.
    pub compared: usize,
    /// Calls the interpreter could not run (skipped).
    pub unsupported: usize,
}

impl ClifStats {
    pub fn accumulate(&mut self, other: &ClifStats) {
        self.verified += other.verified;
        self.eligible += other.eligible;
        self.compared += other.compared;
        self.unsupported += other.unsupported;
    }
}

/// The outcome of one interpreted call.
#[derive(Clone, Debug, PartialEq)]
enum Outcome {
    Returned(Vec<DataValue>),
    Trapped(String),
    Unsupported(String),
}

impl Outcome {
    fn same_as(&self, other: &Outcome) -> bool {
        match (self, other) {
            (Outcome::Returned(a), Outcome::Returned(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.bitwise_eq(y))
            }
            (Outcome::Trapped(a), Outcome::Trapped(b)) => a == b,
            _ => false,
        }
    }

    fn describe(&self) -> String {
        match self {
            Outcome::Returned(v) => {
                let v: Vec<String> = v.iter().map(|x| x.to_string()).collect();
                format!("returned [{}]", v.join(", "))
            }
            Outcome::Trapped(t) => format!("trapped: {t}"),
            Outcome::Unsupported(e) => format!("unsupported: {e}"),
        }
    }
}

/// Lowers `program` for the host and checks every pass of `passes` on it;
/// returns the counters and one message per failure. `seed` picks the
/// arguments.
pub fn check_program(
    program: &Program,
    passes: &[ClifPass],
    seed: u64,
) -> (ClifStats, Vec<String>) {
    let cfg = LowerConfig {
        pointer_type: types::I64,
        c_call_conv: cranelift_codegen::isa::CallConv::triple_default(
            &target_lexicon::Triple::host(),
        ),
        arch: lower::Arch::host().unwrap_or(lower::Arch::X86_64),
        traps: lower::TrapLowering::Call,
        runtime: lower::Runtime::Libc,
    };
    check_module(&lower::lower_program(program, &cfg), passes, seed)
}

/// Checks every pass of `passes` on `module` (see the module doc).
pub fn check_module(
    module: &ClifModule,
    passes: &[ClifPass],
    seed: u64,
) -> (ClifStats, Vec<String>) {
    let mut stats = ClifStats::default();
    let mut failures = Vec::new();
    for &pass in passes {
        check_pass(module, pass, seed, &mut stats, &mut failures);
    }
    (stats, failures)
}

/// Runs `pass` alone on a copy of `before`, verifies, and compares eligible functions.
fn check_pass(
    before: &ClifModule,
    pass: ClifPass,
    seed: u64,
    stats: &mut ClifStats,
    failures: &mut Vec<String>,
) {
    let build = Build {
        pipeline: Pipeline {
            verify: true,
            ..Pipeline::from_passes(&[Pass::Clif(pass)])
        },
        level: OptLevel::Oz,
        mode: BuildMode::Local,
        backend: Backend::Clif(None),
        jobs: 1,
        units: Units::PerModule,
        code_model: CodeModel::default(),
        runtime: RuntimeChoice::Libc,
    };
    // A pass that panics (a debug assertion included) is this program's
    // failure, with its seed, not the end of the campaign.
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        build.run(Input::Modules(vec![before.clone()]))
    }));
    let after = match run {
        Ok(Ok(mut output)) => output.modules.remove(0),
        Ok(Err(e)) => {
            failures.push(format!("CLIF verifier: {:#}", anyhow::Error::from(e)));
            return;
        }
        Err(panic) => {
            let message = super::negative::panic_message(&*panic);
            failures.push(format!("`{}` alone panicked: {message}", pass.name()));
            return;
        }
    };
    stats.verified += after.functions.len();
    // Functions are paired by name: a pass may delete functions (calls to
    // them redirected) and renumber symbols.
    let by_name: std::collections::HashMap<&str, &ir::Function> = after
        .functions
        .iter()
        .filter_map(|d| Some((after.symbols.get(d.symbol as usize)?.name.as_str(), &d.func)))
        .collect();
    for (index, old) in before.functions.iter().enumerate() {
        let name = before
            .symbols
            .get(old.symbol as usize)
            .map_or("?", |s| s.name.as_str());
        let Some(&new_func) = by_name.get(name) else {
            continue;
        };
        if !interpretable(&old.func) || !interpretable(new_func) {
            continue;
        }
        stats.eligible += 1;
        let mut rng = SplitMix(seed ^ (index as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        for _ in 0..CALLS_PER_FUNCTION {
            let args = random_args(&old.func.signature, &mut rng);
            let a = interpret(&old.func, &args);
            let b = interpret(new_func, &args);
            if matches!(a, Outcome::Unsupported(_)) || matches!(b, Outcome::Unsupported(_)) {
                stats.unsupported += 1;
                continue;
            }
            stats.compared += 1;
            if !a.same_as(&b) {
                let args: Vec<String> = args.iter().map(|v| v.to_string()).collect();
                failures.push(format!(
                    "CLIF interpreter: `{name}`({}) {} before pass `{}`, {} after",
                    args.join(", "),
                    a.describe(),
                    pass.name(),
                    b.describe()
                ));
                break;
            }
        }
    }
}

/// Whether `func` can run alone in the interpreter: integer signature, no
/// calls, no symbol addresses, and loads and stores only directly through a
/// `stack_addr` (its own stack slots).
pub fn interpretable(func: &ir::Function) -> bool {
    let int = |p: &ir::AbiParam| p.value_type.is_int() && p.value_type.bits() <= 64;
    if !func.signature.params.iter().all(int) || !func.signature.returns.iter().all(int) {
        return false;
    }
    func.layout.blocks().all(|block| {
        func.layout.block_insts(block).all(|inst| {
            let op = func.dfg.insts[inst].opcode();
            if op.can_load() || op.can_store() {
                return memory_on_stack(func, inst);
            }
            !(op.is_call()
                || matches!(
                    op,
                    Opcode::SymbolValue
                        | Opcode::FuncAddr
                        | Opcode::TlsValue
                        | Opcode::DynamicStackAddr
                        | Opcode::StackSwitch
                ))
        })
    })
}

/// Whether `inst` is a plain load or store whose address is a `stack_addr`.
fn memory_on_stack(func: &ir::Function, inst: ir::Inst) -> bool {
    let address = match func.dfg.insts[inst] {
        ir::InstructionData::Load { arg, .. } => arg,
        ir::InstructionData::Store { args, .. } => args[1],
        _ => return false,
    };
    match func.dfg.value_def(address) {
        ir::ValueDef::Result(def, _) => func.dfg.insts[def].opcode() == Opcode::StackAddr,
        _ => false,
    }
}

/// splitmix64: a tiny deterministic generator for arguments.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// Arguments for `sig`: boundary values half of the time, else random bits.
fn random_args(sig: &ir::Signature, rng: &mut SplitMix) -> Vec<DataValue> {
    const SPECIAL: [i64; 8] = [0, 1, -1, 2, 7, -8, i64::MIN, i64::MAX];
    sig.params
        .iter()
        .map(|p| {
            let r = rng.next();
            let v = if r & 1 == 0 {
                SPECIAL[(r >> 1) as usize % SPECIAL.len()]
            } else {
                (rng.next() >> (r % 60)) as i64
            };
            match p.value_type {
                types::I8 => DataValue::I8(v as i8),
                types::I16 => DataValue::I16(v as i16),
                types::I32 => DataValue::I32(v as i32),
                _ => DataValue::I64(v),
            }
        })
        .collect()
}

thread_local! {
    /// Set while this thread runs the interpreter: its panics are expected.
    static QUIET: Cell<bool> = const { Cell::new(false) };
}

/// Installs (once) a panic hook that stays silent on threads inside
/// [`interpret`] and defers to the previous hook elsewhere. Swapping hooks
/// per call would race between threads.
fn install_quiet_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if !QUIET.with(Cell::get) {
                previous(info);
            }
        }));
    });
}

/// Calls `func` with `args` in a fresh interpreter.
fn interpret(func: &ir::Function, args: &[DataValue]) -> Outcome {
    install_quiet_hook();
    let name = func.name.to_string();
    QUIET.with(|q| q.set(true));
    let result = panic::catch_unwind(AssertUnwindSafe(|| {
        let mut store = FunctionStore::default();
        store.add(name.clone(), func);
        let state = InterpreterState::default().with_function_store(store);
        let mut interpreter = Interpreter::new(state).with_fuel(Some(FUEL));
        match interpreter.call_by_name(&name, args) {
            Ok(ControlFlow::Return(values)) => Outcome::Returned(values.to_vec()),
            Ok(ControlFlow::Trap(trap)) => Outcome::Trapped(trap.to_string()),
            Ok(other) => Outcome::Unsupported(format!("control flow {other:?}")),
            Err(e) => Outcome::Unsupported(e.to_string()),
        }
    }));
    QUIET.with(|q| q.set(false));
    result.unwrap_or_else(|_| Outcome::Unsupported("interpreter panicked".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> ir::Function {
        cranelift_reader::parse_functions(text).unwrap().remove(0)
    }

    #[test]
    fn pure_integer_function_is_interpretable_and_runs() {
        let f = parse(
            "function %f(i64, i64) -> i64 {\nblock0(v0: i64, v1: i64):\n  v2 = iadd v0, v1\n  return v2\n}",
        );
        assert!(interpretable(&f));
        let out = interpret(&f, &[DataValue::I64(2), DataValue::I64(3)]);
        assert_eq!(out, Outcome::Returned(vec![DataValue::I64(5)]));
    }

    #[test]
    fn calls_and_loads_are_not_interpretable() {
        let f = parse(
            "function %f(i64) -> i64 {\nblock0(v0: i64):\n  v1 = load.i64 v0\n  return v1\n}",
        );
        assert!(!interpretable(&f));
    }

    #[test]
    fn planted_miscompile_is_found_by_interpretation() {
        let text = "function %f(i64, i64) -> i64 {\nblock0(v0: i64, v1: i64):\n  v2 = iadd v0, v1\n  return v2\n}\n";
        let file = parec::clif_file::ClifFile::parse("t.clif", text).unwrap();
        let (stats, failures) = check_module(
            &file.module,
            &[ClifPass::Gvn(parec_passes::inline::Policy::Size)],
            1,
        );
        assert!(failures.is_empty(), "{failures:?}");
        assert_eq!(stats.eligible, 1);
        let (_, failures) = check_module(
            &file.module,
            &[ClifPass::Custom(crate::difftest::planted::PASS)],
            1,
        );
        assert_eq!(failures.len(), 1, "{failures:?}");
        assert!(failures[0].contains("after"), "{}", failures[0]);
    }

    #[test]
    fn traps_are_outcomes() {
        let f = parse(
            "function %f(i64, i64) -> i64 {\nblock0(v0: i64, v1: i64):\n  v2 = udiv v0, v1\n  return v2\n}",
        );
        let out = interpret(&f, &[DataValue::I64(1), DataValue::I64(0)]);
        assert!(matches!(out, Outcome::Trapped(_)), "{out:?}");
    }
}
