//! The differential tester's worker processes: a program that traps,
//! crashes or hangs ends only its worker, with the outcome it had as a
//! child process of its own (`parec-tools exec-jit`), and the next program
//! gets a new worker; generated programs have the same outcomes either
//! way; campaigns do not depend on the number of workers; AOT runs on the
//! sampled seeds only.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use parec::target::OptLevel;
use parec_tools::difftest::exec::run_with_timeout;
use parec_tools::difftest::{planted, Executor, Outcome, PassConfig, Runner, Status, TestPass};
use parec_tools::gen::{generate_from_seed, GenConfig};

/// Far above any run of these programs, however loaded the machine.
const GENEROUS: Duration = Duration::from_secs(60);

fn tools() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_parec-tools"))
}

fn runner() -> Runner {
    let mut runner = Runner::new(tools());
    runner.timeout = GENEROUS;
    runner
}

/// Cranelift alone: the cheapest JIT configuration.
fn cranelift() -> PassConfig {
    PassConfig::new("Cranelift", OptLevel::O2, Vec::new())
}

/// Writes `main.pare` holding `text` to `dir`.
fn program(dir: &Path, text: &str) -> Vec<PathBuf> {
    let path = dir.join("main.pare");
    std::fs::write(&path, text).unwrap();
    vec![path]
}

/// The outcome of `parec-tools ARGS` as a child process of its own: the
/// path the tester took before it had workers.
fn child_outcome(args: &[String]) -> Outcome {
    let captured = run_with_timeout(Command::new(tools()).args(args), GENEROUS).unwrap();
    Outcome::of_process(captured, true)
}

/// Runs `files` with the JIT in `config` through a worker of `runner`.
fn jit_in_worker(runner: &Runner, config: &PassConfig, files: &[PathBuf], dir: &Path) -> Outcome {
    let mut lease = runner.workers().lease();
    runner
        .execute(&mut lease, Executor::Jit, config, files, dir)
        .outcome
}

const TRAPS_AFTER_OUTPUT: &str = "\
fn zero() -> i64 {
    print_str(\"divisor\\n\");
    0
}

fn main() {
    print_str(\"line one\\n\");
    print(42);
    print(10 / zero());
    print_str(\"never\\n\");
}
";

const PRINTS: &str = "fn main() {\n    print(7);\n}\n";

/// A trap ends the worker from inside the runtime (`exit(101)`): what the
/// program printed before it, the status and the trap line still arrive,
/// as from a child of its own, and the next program runs on a new worker.
#[test]
fn a_trap_keeps_the_output_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let runner = runner();
    let files = program(dir.path(), TRAPS_AFTER_OUTPUT);
    let expected = Outcome {
        status: Status::Exited(101),
        stdout: b"line one\n42\ndivisor\n".to_vec(),
        trap: Some("trap: division by zero".into()),
    };
    let in_worker = jit_in_worker(&runner, &cranelift(), &files, dir.path());
    assert_eq!(in_worker, expected, "{}", in_worker.describe());
    let args = cranelift().exec_jit_args(None, &files).unwrap();
    assert_eq!(child_outcome(&args), expected);
    assert_eq!(runner.workers().started(), 1);

    let other = tempfile::tempdir().unwrap();
    let files = program(other.path(), PRINTS);
    let next = jit_in_worker(&runner, &cranelift(), &files, other.path());
    assert_eq!(next.status, Status::Exited(0));
    assert_eq!(next.stdout, b"7\n");
    assert_eq!(
        runner.workers().started(),
        2,
        "the trap ended the first worker"
    );
}

/// A program that returns leaves its worker for the next one, whose output
/// is its own (nothing of the previous program's is left in the streams).
#[test]
fn a_worker_serves_program_after_program() {
    let dir = tempfile::tempdir().unwrap();
    let runner = runner();
    let files = program(dir.path(), PRINTS);
    let mut lease = runner.workers().lease();
    for config in PassConfig::parse_list("Cranelift,O2,Oz").unwrap() {
        let e = runner.execute(&mut lease, Executor::Jit, &config, &files, dir.path());
        assert_eq!(e.outcome.stdout, b"7\n", "{}", config.name);
        assert_eq!(e.outcome.status, Status::Exited(0));
        assert!(e.phases.is_some(), "a JIT run reports its phases");
    }
    let interp = runner.execute(
        &mut lease,
        Executor::Interp,
        &cranelift(),
        &files,
        dir.path(),
    );
    assert_eq!(interp.outcome.stdout, b"7\n");
    drop(lease);
    assert_eq!(runner.workers().started(), 1);
}

/// A crash (`SIGSEGV` in C code: not a stack overflow) ends the worker
/// and is reported as the signal, as from a child of its own.
#[test]
fn a_crash_is_reported_as_its_signal() {
    let dir = tempfile::tempdir().unwrap();
    let runner = runner();
    let files = program(
        dir.path(),
        "extern fn strlen(s: i64) -> i64;\nfn main() {\n    print(strlen(16));\n}\n",
    );
    let in_worker = jit_in_worker(&runner, &cranelift(), &files, dir.path());
    assert_eq!(
        in_worker.status,
        Status::Exited(128 + 11),
        "{}",
        in_worker.describe()
    );
    assert_eq!(in_worker.trap, None);
    let args = cranelift().exec_jit_args(None, &files).unwrap();
    assert_eq!(child_outcome(&args), in_worker);

    let files = program(dir.path(), PRINTS);
    let next = jit_in_worker(&runner, &cranelift(), &files, dir.path());
    assert_eq!(next.stdout, b"7\n");
}

/// A program that never ends, in the JIT or the interpreter, is killed
/// with its worker at the time limit, and the next program runs.
#[test]
fn a_hang_times_out_and_the_next_program_runs() {
    let dir = tempfile::tempdir().unwrap();
    let mut runner = runner();
    runner.timeout = Duration::from_secs(1);
    let files = program(
        dir.path(),
        "fn main() {\n    let n: i64 = 1;\n    while n > 0 {\n        print(n);\n    }\n}\n",
    );
    let mut lease = runner.workers().lease();
    for executor in [Executor::Jit, Executor::Interp] {
        let start = Instant::now();
        let e = runner.execute(&mut lease, executor, &cranelift(), &files, dir.path());
        assert_eq!(e.outcome.status, Status::TimedOut, "{executor:?}");
        assert!(start.elapsed() < GENEROUS, "{executor:?} was not stopped");
    }
    let files = program(dir.path(), PRINTS);
    let next = runner.execute(&mut lease, Executor::Jit, &cranelift(), &files, dir.path());
    assert_eq!(next.outcome.stdout, b"7\n");
}

/// A request that is not an `exec-*` command is the tester's error, not
/// an outcome, and leaves the worker usable.
#[test]
fn a_bad_request_is_an_error() {
    let runner = runner();
    let mut lease = runner.workers().lease();
    let refused = lease.run(&["fuzz".to_string()], GENEROUS);
    assert!(
        refused
            .as_ref()
            .is_err_and(|e| e.to_string().contains("refused")),
        "{refused:?}"
    );
    let missing = lease.run(
        &["exec-interp".to_string(), "/nonexistent.pare".into()],
        GENEROUS,
    );
    let captured = missing.unwrap().captured;
    assert_eq!(captured.status.and_then(|s| s.code()), Some(1));
    assert!(String::from_utf8_lossy(&captured.stderr).contains("error:"));
    assert_eq!(runner.workers().started(), 1);
}

/// Generated programs, many of them trapping, have the same outcome in a
/// worker as in a child of their own, in configurations with and without
/// passes and with the program's own profile.
#[test]
fn generated_programs_agree_between_workers_and_children() {
    let gen = GenConfig {
        trap_probability: 0.05,
        ..GenConfig::default()
    };
    let runner = runner();
    let configs = PassConfig::parse_list("Cranelift,Oz,Oz-profile").unwrap();
    let mut traps = 0;
    for seed in 0..6 {
        let program = generate_from_seed(seed, &gen);
        let worker_dir = tempfile::tempdir().unwrap();
        let child_dir = tempfile::tempdir().unwrap();
        let worker_files = program.write_to_dir(worker_dir.path()).unwrap();
        let child_files = program.write_to_dir(child_dir.path()).unwrap();
        let child_profile = child_dir.path().join("own.prof");
        let mut generate = vec![
            "exec-jit".to_string(),
            "-O2".into(),
            "--profile-generate".into(),
        ];
        generate.push(child_profile.to_str().unwrap().to_string());
        generate.extend(child_files.iter().map(|f| f.to_str().unwrap().to_string()));
        child_outcome(&generate);
        for config in &configs {
            let in_worker = jit_in_worker(&runner, config, &worker_files, worker_dir.path());
            let profile = config.profile.then_some(child_profile.as_path());
            let args = config.exec_jit_args(profile, &child_files).unwrap();
            let in_child = child_outcome(&args);
            assert_eq!(
                in_worker,
                in_child,
                "seed {seed} [{}]:\nworker: {}\nchild: {}",
                config.name,
                in_worker.describe(),
                in_child.describe()
            );
            traps += usize::from(in_worker.trap.is_some());
        }
    }
    assert!(traps > 0, "no program trapped: the seeds test too little");
}

/// A campaign reports the same failures in the same order with one worker
/// as with three.
#[test]
fn campaigns_do_not_depend_on_the_number_of_workers() {
    let out = tempfile::tempdir().unwrap();
    let mut runner = runner();
    runner.executors = vec![Executor::Jit];
    runner.configs = vec![
        PassConfig::new(planted::NAME, OptLevel::Oz, vec![TestPass::Planted]),
        cranelift(),
    ];
    runner.clif_checks = false;
    runner.shrink_tests = 0;
    runner.max_reproducers = 0;
    let mut reports = Vec::new();
    for jobs in [1, 3] {
        runner.jobs = jobs;
        reports.push(runner.campaign(0, 8, out.path(), false));
    }
    assert!(
        !reports[0].failures.is_empty(),
        "the planted miscompile went unnoticed"
    );
    assert_eq!(reports[0].failures, reports[1].failures);
}

/// `aot_every = 3` runs AOT for seeds 0 and 3 of 0..6 only.
#[test]
fn aot_runs_on_the_sampled_seeds() {
    let out = tempfile::tempdir().unwrap();
    let mut runner = runner();
    runner.executors = vec![Executor::Jit, Executor::Aot];
    runner.configs = vec![cranelift()];
    runner.clif_checks = false;
    runner.aot_every = 3;
    let report = runner.campaign(0, 6, out.path(), false);
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    let runs = |executor| {
        report
            .times
            .iter()
            .filter(|t| t.executor == executor)
            .map(|t| t.runs)
            .sum::<usize>()
    };
    assert_eq!(runs(Executor::Jit), 6);
    assert_eq!(runs(Executor::Aot), 2);
    assert!(runner.samples_aot(0) && runner.samples_aot(3) && !runner.samples_aot(4));
}
