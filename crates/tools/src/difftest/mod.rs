//! Differential testing: generated Pare programs run by every executor under
//! every pass configuration must agree with the reference interpreter.
//!
//! For one program the runner
//! - interprets it in process ([`pare_frontend::interp::run_with_big_stack`]),
//!   the reference;
//! - for each [`PassConfig`], runs it with the JIT and/or builds it for
//!   aarch64 and runs the executable under `qemu-aarch64-static`, all with
//!   a time limit. JIT runs and AOT builds are `exec-*` commands
//!   ([`commands`]: they compile through the `parec` library exactly as
//!   `parec run` and `parec build` do, with the configuration's pipeline,
//!   which may hold the planted miscompile of [`planted`], a pass `parec`
//!   itself does not have) served by a worker process ([`worker`]), since
//!   generated code may trap (the runtime ends its process), crash or
//!   hang: such a run ends only its worker, which is replaced, and its
//!   outcome is the one a child process of its own would have had. Each
//!   AOT executable runs under qemu as a child process ([`exec`]);
//! - compares stdout, exit status and the `trap: ...` line of stderr;
//! - optionally runs the CLIF-level checks of [`clif_check`] on it.
//!
//! A campaign ([`Runner::campaign`]) checks the programs of consecutive
//! seeds [`Runner::jobs`] at a time (rayon), each program holding one
//! worker for all its configurations (the worker lowers the program once,
//! [`commands::Session`]), and reports in seed order, so its output does
//! not depend on scheduling. AOT, a build and a qemu process per
//! configuration, costs several times the JIT: it runs on a sample of the
//! programs, those whose seed is a multiple of [`Runner::aot_every`]
//! (every program by default; `parec-tools fuzz --aot-every K`). The
//! configurations can be sampled the same way ([`Runner::configs_for`],
//! `--configs-per-program N`): each program in `N` of them with each
//! executor, taken in turn by seed, so that a campaign checks more programs
//! in the same time and every configuration still checks `N` in `C` of them.
//! The JIT runs no machine passes, so it leaves out the configurations it
//! would compile alike ([`Runner::executor_configs`]: each machine pass
//! alone is `peephole` alone there); its list being shorter, a sampled program is
//! then mostly checked in different configurations by the JIT and by AOT.
//! AOT may check every program in some configurations besides the sampled
//! ones ([`Runner::aot_always`], `--aot-always`). CI's campaign
//! (`tests/difftest.rs`) samples 2 per program and executor over 500
//! seeds, AOT also at `O2`, `Os` and `Oz` for all; `parec-tools fuzz --seed 0
//! --count 500` is the full one. Each
//! failing program is reduced ([`shrink`]) against its first failing
//! (executor, configuration) pair, every candidate run through the workers
//! too (the interpreter there as well, since a candidate may not
//! terminate), and saved with the configuration and both outcomes to a
//! reproducer directory.
//!
//! A campaign may also check negative programs ([`negative`]): ill-typed
//! programs the front end must reject with a located diagnostic
//! ([`Runner::negative`] of them, from the same seeds); an accepted program
//! or a panic is a failure with a reproducer, like a disagreement.
//!
//! Invariants: the reference is always the interpreter; a program the
//! interpreter cannot finish (an interpreter error, not a trap) is skipped,
//! never reported; configurations with identical pipelines run once; an
//! outcome does not depend on which worker ran it or what it ran before.
//!
//! Cost: compilation dominates. Measured on 2 cores shared with other
//! work (load 5), `--no-clif`, seeds 0..100, per JIT run on average: front
//! end 5 to 10 ms (once per program and worker), `main` 1 to 5 ms, and a
//! compile of 8 ms for `Cranelift`, `merge`, `peephole` and `outline`
//! (the machine outliner does not run in the JIT), 16 ms for `O2`, 35 ms
//! for `gvn`, 135 ms for `inline`, 150 ms for `fmerge`, 170 to 190 ms for
//! `Oz` and `Oz-profile`: `-Oz`'s inliner and function merging compile
//! candidates with Cranelift to measure them. So the ten standard
//! configurations check about 2 programs per second, `Oz` alone 9,
//! `Cranelift` alone 70 to 80. On the same 2 cores idle, with the
//! session's code cache ([`commands::Session`]): all ten 6.5 programs per
//! second, one configuration per program (`--configs-per-program 1`) 41,
//! two 25, `Oz` alone 20, `O2` 90, `O0` 120. A worker starts once per
//! [`worker::REQUESTS_PER_WORKER`] requests and per run that ends its
//! process (about one program in six traps at the default trap
//! probability); one `exec-*` child per run cost a process start and a
//! front end per configuration instead. AOT costs about 1.5 times the JIT
//! per configuration, the CLIF checks about 150 ms per program (each pass
//! alone, the same measuring passes).

pub mod clif_check;
pub mod commands;
pub mod exec;
pub mod negative;
pub mod planted;
pub mod shrink;
pub mod worker;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use crate::gen::{generate_from_seed, GenConfig, GeneratedProgram};
use anyhow::{anyhow, bail, Context as _, Result};
use pare_frontend::interp::{run_with_big_stack, Exit};
use pare_frontend::tir::{Program, TRAP_EXIT_STATUS};
use rayon::prelude::*;

use clif_check::ClifStats;
use commands::JitPhases;
use exec::{run_with_timeout, Captured};
use parec::pipeline::{ClifPass, Pass, Pipeline};
use parec::runtime::RuntimeChoice;
use parec::target::OptLevel;
use worker::{Lease, WorkerPool};

/// Time limit of each run while shrinking.
const SHRINK_TIMEOUT: Duration = Duration::from_secs(3);

/// A way of running a program.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Executor {
    /// The reference interpreter.
    Interp,
    /// The JIT on the host (`parec run`).
    Jit,
    /// An aarch64 executable under qemu (`parec build` + `qemu-aarch64-static`).
    Aot,
}

impl Executor {
    pub const ALL: [Executor; 3] = [Executor::Interp, Executor::Jit, Executor::Aot];

    pub fn name(self) -> &'static str {
        match self {
            Executor::Interp => "interp",
            Executor::Jit => "jit",
            Executor::Aot => "aot",
        }
    }

    /// Parses a comma-separated list (`interp,jit,aot`).
    pub fn parse_list(list: &str) -> Result<Vec<Executor>, String> {
        let mut out = Vec::new();
        for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let e = Executor::ALL
                .into_iter()
                .find(|e| e.name() == name)
                .ok_or_else(|| format!("unknown executor `{name}`; expected interp, jit or aot"))?;
            if !out.contains(&e) {
                out.push(e);
            }
        }
        Ok(out)
    }
}

/// A pass a configuration runs: one of parec's, or the planted miscompile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TestPass {
    Parec(Pass),
    Planted,
}

impl TestPass {
    pub fn name(self) -> &'static str {
        match self {
            TestPass::Parec(pass) => pass.name(),
            TestPass::Planted => planted::NAME,
        }
    }

    /// Looks a pass up by name: parec's passes and the planted one.
    pub fn from_name(name: &str) -> Option<TestPass> {
        if name == planted::NAME {
            return Some(TestPass::Planted);
        }
        Pass::from_name(name).map(TestPass::Parec)
    }

    /// Every pass of parec's `-Oz`, in order.
    pub fn all() -> Vec<TestPass> {
        Pass::ALL.iter().copied().map(TestPass::Parec).collect()
    }

    /// The passes of parec's `-O2`.
    pub fn speed() -> Vec<TestPass> {
        Pass::SPEED.iter().copied().map(TestPass::Parec).collect()
    }

    /// The passes of parec's `-Os`.
    pub fn size_at_speed() -> Vec<TestPass> {
        Pass::SIZE_AT_SPEED
            .iter()
            .copied()
            .map(TestPass::Parec)
            .collect()
    }

    /// The CLIF pass, if it is one (the planted pass is).
    fn clif(self) -> Option<ClifPass> {
        match self {
            TestPass::Parec(Pass::Clif(pass)) => Some(pass),
            TestPass::Parec(Pass::Machine(_)) => None,
            TestPass::Planted => Some(ClifPass::Custom(planted::PASS)),
        }
    }
}

/// The pipeline of `passes`, in order (CLIF and machine passes each in
/// their own list).
pub fn pipeline_of(passes: &[TestPass]) -> Pipeline {
    let mut pipeline = Pipeline::empty();
    for &pass in passes {
        match pass {
            TestPass::Parec(Pass::Machine(p)) => pipeline.machine.push(p),
            other => pipeline.clif.extend(other.clif()),
        }
    }
    pipeline
}

/// Parses a comma-separated pass list (`""` is the empty pipeline) into a
/// pipeline: parec's passes and the planted one.
pub fn pipeline_from_names(list: &str) -> Result<Pipeline, String> {
    let mut passes = Vec::new();
    for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let pass = TestPass::from_name(name).ok_or_else(|| {
            format!(
                "unknown pass `{name}`; available: {}, {}",
                parec::pipeline::available_passes(),
                planted::NAME
            )
        })?;
        passes.push(pass);
    }
    Ok(pipeline_of(&passes))
}

/// One pass configuration: a Cranelift level and a pass list, and whether
/// the build uses the program's own profile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PassConfig {
    /// Its name, with the names of identical configurations after `=`.
    pub name: String,
    pub level: OptLevel,
    pub passes: Vec<TestPass>,
    /// Built with `--profile-use` and a profile of the program's own run
    /// (made once per program by `exec-jit --profile-generate`, which
    /// runs the program with block counters). A profile changes
    /// decisions, never results.
    pub profile: bool,
}

impl PassConfig {
    pub fn new(name: &str, level: OptLevel, passes: Vec<TestPass>) -> PassConfig {
        PassConfig {
            name: name.to_string(),
            level,
            passes,
            profile: false,
        }
    }

    /// `-Oz` with the program's own profile.
    pub fn oz_profiled() -> PassConfig {
        PassConfig {
            profile: true,
            ..PassConfig::new("Oz-profile", OptLevel::Oz, TestPass::all())
        }
    }

    /// `-Os` (the default level: the size passes with the hot-site rules).
    pub fn os() -> PassConfig {
        PassConfig::new("Os", OptLevel::Os, TestPass::size_at_speed())
    }

    /// `-Os` with the program's own profile.
    pub fn os_profiled() -> PassConfig {
        PassConfig {
            profile: true,
            ..PassConfig::new("Os-profile", OptLevel::Os, TestPass::size_at_speed())
        }
    }

    /// All passes off (Cranelift alone at `-O2`), `-O2` (speed inlining),
    /// each pass of [`Pass::ALL`] alone, all on (`-Oz`), `-Os`, and both
    /// size levels with the program's own profile; identical pipelines
    /// merged.
    pub fn standard() -> Vec<PassConfig> {
        let mut configs = vec![
            PassConfig::new("Cranelift", OptLevel::O2, Vec::new()),
            PassConfig::new("O2", OptLevel::O2, TestPass::speed()),
        ];
        for pass in TestPass::all() {
            configs.push(PassConfig::new(pass.name(), OptLevel::Oz, vec![pass]));
        }
        configs.push(PassConfig::new("Oz", OptLevel::Oz, TestPass::all()));
        configs.push(PassConfig::oz_profiled());
        configs.push(PassConfig::os());
        configs.push(PassConfig::os_profiled());
        merge_identical(configs)
    }

    /// Parses a comma-separated list: `all` (the [`standard`](Self::standard)
    /// set), `O0`, `O2`, `Os`, `Oz`, their `-profile` forms, or a pass name
    /// (that pass alone at `-Oz`).
    pub fn parse_list(list: &str) -> Result<Vec<PassConfig>, String> {
        let mut configs = Vec::new();
        for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            match name {
                "all" => configs.extend(PassConfig::standard()),
                "O0" => configs.push(PassConfig::new("O0", OptLevel::O0, Vec::new())),
                "Cranelift" => {
                    configs.push(PassConfig::new("Cranelift", OptLevel::O2, Vec::new()))
                }
                "O2" => configs.push(PassConfig::new("O2", OptLevel::O2, TestPass::speed())),
                "Os" => configs.push(PassConfig::os()),
                "Os-profile" => configs.push(PassConfig::os_profiled()),
                "Oz" => configs.push(PassConfig::new("Oz", OptLevel::Oz, TestPass::all())),
                "Oz-profile" => configs.push(PassConfig::oz_profiled()),
                _ => match TestPass::from_name(name) {
                    Some(pass) => configs.push(PassConfig::new(name, OptLevel::Oz, vec![pass])),
                    None => {
                        return Err(format!(
                        "unknown configuration `{name}`; expected all, O0, Cranelift, O2, Os, Os-profile, Oz, Oz-profile or a pass ({}, {})",
                        parec::pipeline::available_passes(),
                        planted::NAME
                    ))
                    }
                },
            }
        }
        if configs.is_empty() {
            return Err("no configuration given".into());
        }
        Ok(merge_identical(configs))
    }

    /// The `-O` argument of `parec run` / `parec build`.
    fn level_arg(&self) -> &'static str {
        self.level.flag()
    }

    /// The arguments of `parec-tools exec-jit` running `files` in this
    /// configuration, with `profile` (the program's own; see
    /// [`PassConfig::profile`]) if it uses one.
    pub fn exec_jit_args(
        &self,
        profile: Option<&Path>,
        files: &[PathBuf],
    ) -> Result<Vec<String>, String> {
        self.exec_args("exec-jit", profile, files)
    }

    /// `command` (`exec-jit`, `exec-aot`) with this configuration's level,
    /// passes and profile, and `files`.
    fn exec_args(
        &self,
        command: &str,
        profile: Option<&Path>,
        files: &[PathBuf],
    ) -> Result<Vec<String>, String> {
        let mut args = vec![
            command.to_string(),
            self.level_arg().to_string(),
            self.passes_arg(),
        ];
        if let Some(profile) = profile {
            args.extend(["--profile-use".to_string(), path_arg(profile)?]);
        }
        for file in files {
            args.push(path_arg(file)?);
        }
        Ok(args)
    }

    /// The arguments of `parec-tools exec-aot` building `files` to `exe`
    /// with a runtime standing on `runtime`.
    fn exec_aot_args(
        &self,
        profile: Option<&Path>,
        files: &[PathBuf],
        exe: &Path,
        runtime: RuntimeChoice,
    ) -> Result<Vec<String>, String> {
        let mut args = self.exec_args("exec-aot", profile, files)?;
        args.extend(["-o".to_string(), path_arg(exe)?]);
        args.push(format!("--runtime={}", runtime.name()));
        Ok(args)
    }

    /// The `--passes` argument.
    fn passes_arg(&self) -> String {
        let names: Vec<&str> = self.passes.iter().map(|p| p.name()).collect();
        format!("--passes={}", names.join(","))
    }

    /// The name without aliases, for file names.
    fn short_name(&self) -> &str {
        self.name.split('=').next().unwrap_or(&self.name)
    }
}

/// The CLIF passes of `config`, in order: its whole pipeline in the JIT.
fn clif_passes_of(config: &PassConfig) -> Vec<ClifPass> {
    config.passes.iter().filter_map(|p| p.clif()).collect()
}

/// A path as a command argument of a worker request (which is text).
fn path_arg(path: &Path) -> Result<String, String> {
    path.to_str()
        .map(str::to_string)
        .ok_or_else(|| format!("the path `{}` is not UTF-8", path.display()))
}

/// Merges configurations with the same level and passes (names joined by `=`).
fn merge_identical(configs: Vec<PassConfig>) -> Vec<PassConfig> {
    let mut out: Vec<PassConfig> = Vec::new();
    for c in configs {
        match out
            .iter_mut()
            .find(|o| o.level == c.level && o.passes == c.passes && o.profile == c.profile)
        {
            Some(o) => {
                if !o.name.split('=').any(|n| n == c.name) {
                    o.name = format!("{}={}", o.name, c.name);
                }
            }
            None => out.push(c),
        }
    }
    out
}

/// How an execution ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// The process status (101 after a trap; 128+N after signal N).
    Exited(i32),
    /// Still running at the time limit.
    TimedOut,
    /// The program could not be compiled or run (compiler error, missing tool,
    /// interpreter error).
    Failed(String),
}

/// What one execution produced; the compared part is `status`, `stdout`, `trap`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub status: Status,
    pub stdout: Vec<u8>,
    /// The `trap: <reason>` line of stderr, if any.
    pub trap: Option<String>,
}

impl Outcome {
    /// Whether `self` and `other` are observably the same.
    pub fn agrees_with(&self, other: &Outcome) -> bool {
        self == other
    }

    /// The outcome of a finished process: an `exec-*` command's (run by a
    /// worker or as a child) when `parec_command`, where a status of 1 or
    /// 70 with an `error:` line on stderr is parec failing, not the
    /// program; else an executable's.
    pub fn of_process(c: Captured, parec_command: bool) -> Outcome {
        let stderr = String::from_utf8_lossy(&c.stderr);
        let trap = stderr
            .lines()
            .rev()
            .find(|l| l.starts_with("trap: "))
            .map(str::to_string);
        let status = match c.status {
            None => Status::TimedOut,
            Some(s) => {
                let code = parec::link::exit_code(s);
                let parec_error = stderr.lines().any(|l| l.starts_with("error: "));
                if parec_command && (code == 1 || code == 70) && parec_error {
                    Status::Failed(stderr.trim_end().to_string())
                } else {
                    Status::Exited(code)
                }
            }
        };
        Outcome {
            status,
            stdout: c.stdout,
            trap,
        }
    }

    fn failed(why: String) -> Outcome {
        Outcome {
            status: Status::Failed(why),
            stdout: Vec::new(),
            trap: None,
        }
    }

    /// A report: status, trap line and stdout.
    pub fn describe(&self) -> String {
        let status = match &self.status {
            Status::Exited(s) => format!("exit status {s}"),
            Status::TimedOut => "timed out".to_string(),
            Status::Failed(why) => format!("failed: {why}"),
        };
        let trap = self.trap.as_deref().unwrap_or("(no trap)");
        format!(
            "{status}\n{trap}\nstdout ({} bytes):\n{}",
            self.stdout.len(),
            String::from_utf8_lossy(&self.stdout)
        )
    }
}

/// One execution of a program.
#[derive(Clone, Debug)]
pub struct Execution {
    pub executor: Executor,
    /// The configuration's name (`-` for the interpreter).
    pub config: String,
    pub outcome: Outcome,
    pub time: Duration,
    /// Where the time of a JIT run that returned from `main` went.
    pub phases: Option<JitPhases>,
}

/// Everything learnt about one program.
#[derive(Clone, Debug)]
pub struct CaseResult {
    /// `seed N` or another label.
    pub label: String,
    /// The seed of the CLIF checks' arguments.
    pub seed: u64,
    pub program: GeneratedProgram,
    /// The interpreter's run, or why the program was skipped.
    pub reference: Result<Execution, String>,
    pub executions: Vec<Execution>,
    /// Indices into `executions` that disagree with the reference.
    pub mismatches: Vec<usize>,
    pub clif: ClifStats,
    pub clif_failures: Vec<String>,
}

impl CaseResult {
    pub fn failed(&self) -> bool {
        !self.mismatches.is_empty() || !self.clif_failures.is_empty()
    }

    pub fn skipped(&self) -> bool {
        self.reference.is_err()
    }

    /// A one-paragraph summary of the failures.
    pub fn summary(&self) -> String {
        let mut s = String::new();
        for &i in &self.mismatches {
            let e = &self.executions[i];
            let _ = writeln!(
                s,
                "{}: {} [{}] disagrees with the interpreter: {}",
                self.label,
                e.executor.name(),
                e.config,
                first_difference(self.reference_outcome(), &e.outcome)
            );
        }
        for f in &self.clif_failures {
            let _ = writeln!(s, "{}: {f}", self.label);
        }
        s
    }

    fn reference_outcome(&self) -> Option<&Outcome> {
        self.reference.as_ref().ok().map(|e| &e.outcome)
    }
}

/// A short description of how `actual` differs from `expected`.
fn first_difference(expected: Option<&Outcome>, actual: &Outcome) -> String {
    let Some(expected) = expected else {
        return "no reference".into();
    };
    if expected.status != actual.status {
        return format!(
            "status {:?} instead of {:?}",
            actual.status, expected.status
        );
    }
    if expected.trap != actual.trap {
        return format!("trap {:?} instead of {:?}", actual.trap, expected.trap);
    }
    let line = expected
        .stdout
        .split(|&b| b == b'\n')
        .zip(actual.stdout.split(|&b| b == b'\n'))
        .position(|(a, b)| a != b)
        .map_or_else(
            || "at the end".to_string(),
            |l| format!("at line {}", l + 1),
        );
    format!("stdout differs {line}")
}

/// Totals of a campaign.
#[derive(Clone, Debug, Default)]
pub struct CampaignReport {
    pub programs: usize,
    pub skipped: usize,
    /// Labels and summaries of failing programs.
    pub failures: Vec<String>,
    /// Reproducer directories written.
    pub reproducers: Vec<PathBuf>,
    pub clif: ClifStats,
    /// Total time and count of executions per executor and configuration.
    pub times: Vec<ExecutionTimes>,
    /// Where the time of the JIT runs that returned from `main` went.
    pub jit_phases: PhaseTotals,
    /// Worker processes started (at the start, after a run that ended its
    /// worker, and every [`worker::REQUESTS_PER_WORKER`] requests).
    pub worker_starts: usize,
    pub wall: Duration,
    /// The negative programs' totals (their failures are in `failures` too).
    pub negative: negative::NegativeReport,
}

/// The executions of one executor in one configuration.
#[derive(Clone, Debug)]
pub struct ExecutionTimes {
    pub executor: Executor,
    pub config: String,
    /// Their wall time, summed (request to outcome, one thread).
    pub time: Duration,
    pub runs: usize,
}

/// JIT phases summed over runs.
#[derive(Clone, Copy, Debug, Default)]
pub struct PhaseTotals {
    pub phases: JitPhases,
    pub runs: usize,
}

impl PhaseTotals {
    fn add(&mut self, p: &JitPhases) {
        self.phases.front_end += p.front_end;
        self.phases.compile += p.compile;
        self.phases.run += p.run;
        self.runs += 1;
    }
}

impl CampaignReport {
    /// One line: programs, skips, failures, wall time and the CLIF checks.
    pub fn summary(&self) -> String {
        let mut s = self.positive_summary();
        if self.negative.programs > 0 {
            s += "; ";
            s += &self.negative.summary();
        }
        s
    }

    fn positive_summary(&self) -> String {
        format!(
            "{} programs, {} skipped, {} failing in {:.1}s; CLIF: {} functions verified, {} calls compared, {} unsupported",
            self.programs,
            self.skipped,
            self.failures.len() - self.negative.failures.len(),
            self.wall.as_secs_f64(),
            self.clif.verified,
            self.clif.compared,
            self.clif.unsupported
        )
    }

    /// Runs per second of each executor (one thread; summed over its
    /// configurations), where a JIT run's time went, worker starts, and
    /// programs per second of wall time.
    pub fn rates(&self) -> String {
        let mut s = String::new();
        for executor in Executor::ALL {
            let (time, runs) = self
                .times
                .iter()
                .filter(|t| t.executor == executor)
                .fold((Duration::ZERO, 0), |(t, n), x| (t + x.time, n + x.runs));
            if runs > 0 {
                let _ = write!(
                    s,
                    "{}: {:.1} runs/s ({runs} runs); ",
                    executor.name(),
                    runs as f64 / time.as_secs_f64().max(1e-9)
                );
            }
        }
        if self.jit_phases.runs > 0 {
            let per_run = |d: Duration| d.as_secs_f64() * 1e3 / self.jit_phases.runs as f64;
            let p = &self.jit_phases.phases;
            let _ = write!(
                s,
                "jit run: front end {:.1} ms, compile {:.1} ms, main {:.1} ms on average; ",
                per_run(p.front_end),
                per_run(p.compile),
                per_run(p.run)
            );
        }
        let _ = write!(
            s,
            "{} workers started; overall {:.2} programs/s wall",
            self.worker_starts,
            self.programs as f64 / self.wall.as_secs_f64().max(1e-9)
        );
        s
    }
}

/// The differential runner.
#[derive(Clone, Debug)]
pub struct Runner {
    /// The `parec-tools` binary whose `worker` command runs the programs.
    pub tools: PathBuf,
    /// Executors compared with the interpreter (the interpreter always runs).
    pub executors: Vec<Executor>,
    pub configs: Vec<PassConfig>,
    /// Time limit of each run and each build.
    pub timeout: Duration,
    /// Run the CLIF-level checks too.
    pub clif_checks: bool,
    pub gen: GenConfig,
    /// Predicate calls allowed per reduction (0: do not shrink).
    pub shrink_tests: usize,
    /// Reduce and save at most this many failing programs per campaign.
    pub max_reproducers: usize,
    /// Extra environment variables of the worker processes.
    pub child_env: Vec<(String, String)>,
    /// Negative programs a campaign checks besides the positive ones (seeds
    /// `seed..seed + negative`; 0: none).
    pub negative: u64,
    /// Programs a campaign checks at once, each with a worker process (0:
    /// one per core).
    pub jobs: usize,
    /// AOT runs for the programs whose seed is a multiple of this (1: every
    /// program); the other executors run for all.
    pub aot_every: u64,
    /// Configurations each program is checked in ([`Runner::configs_for`]);
    /// 0 or at least the number of configurations: all of them.
    pub configs_per_program: usize,
    /// Configurations (by name, as [`PassConfig::parse_list`] reads them)
    /// that AOT checks every program in when it samples the others by
    /// [`Runner::configs_per_program`]: the levels users build with.
    pub aot_always: Vec<String>,
    /// What the AOT executables' runtime stands on (`parec build
    /// --runtime`; by default freestanding unless the program calls C).
    pub runtime: RuntimeChoice,
    /// The workers, started on first use with `tools` and `child_env` and
    /// shared by the runner's clones.
    workers: Arc<OnceLock<WorkerPool>>,
}

impl Runner {
    /// A runner with every executor, the standard configurations, CLIF checks,
    /// shrinking and AOT for every program, one program per core at a time,
    /// running programs with the `parec-tools` binary `tools`.
    pub fn new(tools: PathBuf) -> Runner {
        Runner {
            tools,
            executors: Executor::ALL.to_vec(),
            configs: PassConfig::standard(),
            timeout: Duration::from_secs(10),
            clif_checks: true,
            gen: GenConfig::default(),
            shrink_tests: 400,
            max_reproducers: 3,
            child_env: Vec::new(),
            negative: 0,
            jobs: 0,
            aot_every: 1,
            configs_per_program: 0,
            aot_always: Vec::new(),
            runtime: RuntimeChoice::Auto,
            workers: Arc::default(),
        }
    }

    /// The worker processes.
    pub fn workers(&self) -> &WorkerPool {
        self.workers
            .get_or_init(|| WorkerPool::new(self.tools.clone(), self.child_env.clone()))
    }

    /// Whether the program of `seed` runs AOT (see [`Runner::aot_every`]).
    pub fn samples_aot(&self, seed: u64) -> bool {
        seed.is_multiple_of(self.aot_every.max(1))
    }

    /// The configurations `executor` tells apart: all of them for AOT; for
    /// the JIT, which runs no machine passes, those whose level, CLIF
    /// passes and profile differ from every earlier one's (each machine
    /// pass alone compiles as `peephole` alone there), so that no JIT run
    /// repeats another's compilation.
    pub fn executor_configs(&self, executor: Executor) -> Vec<&PassConfig> {
        let mut distinct: Vec<&PassConfig> = Vec::new();
        for config in &self.configs {
            let repeats = executor == Executor::Jit
                && distinct.iter().any(|d| {
                    d.level == config.level
                        && d.profile == config.profile
                        && clif_passes_of(d) == clif_passes_of(config)
                });
            if !repeats {
                distinct.push(config);
            }
        }
        distinct
    }

    /// The configurations the program of `seed` is checked in by
    /// `executor`: all of [`Runner::executor_configs`], or
    /// [`Runner::configs_per_program`] of them taken in turn by seed
    /// (program `s`: indices `s·N .. s·N + N` modulo their number `C`), so
    /// that consecutive seeds cover every configuration equally, each in
    /// `N` of every `C` programs. The JIT and AOT lists differ in length
    /// when the JIT leaves configurations out, so a program is then
    /// usually checked in different configurations by each.
    ///
    /// AOT checks every program in the configurations of
    /// [`Runner::aot_always`] too, and samples the others.
    pub fn configs_for(&self, seed: u64, executor: Executor) -> Vec<&PassConfig> {
        let all = self.executor_configs(executor);
        if !(1..all.len()).contains(&self.configs_per_program) {
            return all;
        }
        let always = |c: &PassConfig| {
            executor == Executor::Aot
                && self
                    .aot_always
                    .iter()
                    .any(|a| c.name.split('=').any(|n| n == a))
        };
        let sampled: Vec<&PassConfig> = all.iter().copied().filter(|c| !always(c)).collect();
        let count = sampled.len();
        let per_program = self.configs_per_program.min(count);
        let first = (seed % count.max(1) as u64) as usize * per_program;
        let chosen: Vec<&PassConfig> = (first..first + per_program)
            .map(|i| sampled[i % count])
            .collect();
        // In the list's order, as an unsampled program runs them.
        all.into_iter()
            .filter(|c| always(c) || chosen.iter().any(|x| std::ptr::eq(*x, *c)))
            .collect()
    }

    /// Whether programs are checked in only some of the configurations
    /// ([`Runner::configs_per_program`] is set and below their number).
    pub fn samples_configs(&self) -> bool {
        (1..self.configs.len()).contains(&self.configs_per_program)
    }

    /// The number of programs checked at once.
    fn job_count(&self) -> usize {
        match self.jobs {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        }
    }

    /// The passes the CLIF checks exercise: those of the configurations.
    fn clif_passes(&self) -> Vec<ClifPass> {
        let mut passes: Vec<ClifPass> = Vec::new();
        for c in &self.configs {
            for p in c.passes.iter().filter_map(|p| p.clif()) {
                if !passes.contains(&p) {
                    passes.push(p);
                }
            }
        }
        passes
    }

    /// Checks the programs of seeds `seed..seed + count` (and the
    /// [`Runner::negative`] negative programs from `seed`); reduces and saves
    /// failing ones under `out`. Prints one line per failure and a summary
    /// to stderr when `verbose`.
    pub fn campaign(&self, seed: u64, count: u64, out: &Path, verbose: bool) -> CampaignReport {
        let start = Instant::now();
        let starts_before = self.workers().started();
        let check = |s: u64| {
            let program = generate_from_seed(s, &self.gen);
            self.check_case(&format!("seed {s}"), program, s)
        };
        let seeds = seed..seed.saturating_add(count);
        // Results come back in seed order whatever the number of threads.
        let results: Vec<CaseResult> = match rayon::ThreadPoolBuilder::new()
            .num_threads(self.job_count())
            .build()
        {
            Ok(pool) => pool.install(|| seeds.into_par_iter().map(check).collect()),
            Err(_) => seeds.into_par_iter().map(check).collect(),
        };
        let mut report = CampaignReport {
            programs: results.len(),
            ..CampaignReport::default()
        };
        for r in &results {
            self.account(r, &mut report);
        }
        for r in results.iter().filter(|r| r.failed()) {
            let summary = r.summary();
            if verbose {
                parec::io_error::eprint(&summary);
            }
            report.failures.push(summary);
            if report.reproducers.len() < self.max_reproducers {
                match self.save_reproducer(r, out) {
                    Ok(dir) => {
                        if verbose {
                            parec::io_error::eprintln(format_args!(
                                "reproducer: {}",
                                dir.display()
                            ));
                        }
                        report.reproducers.push(dir);
                    }
                    Err(e) => parec::io_error::eprintln(format_args!(
                        "error: cannot save the reproducer: {e:#}"
                    )),
                }
            }
        }
        if self.negative > 0 {
            let neg = negative::campaign(
                &self.gen,
                seed,
                self.negative,
                out,
                self.max_reproducers,
                verbose,
            );
            report.failures.extend(neg.failures.iter().cloned());
            report.reproducers.extend(neg.reproducers.iter().cloned());
            report.negative = neg;
        }
        report.worker_starts = self.workers().started() - starts_before;
        report.wall = start.elapsed();
        report
    }

    fn account(&self, r: &CaseResult, report: &mut CampaignReport) {
        if r.skipped() {
            report.skipped += 1;
        }
        report.clif.accumulate(&r.clif);
        let all = r.reference.iter().chain(&r.executions);
        for e in all {
            if let Some(phases) = &e.phases {
                report.jit_phases.add(phases);
            }
            match report
                .times
                .iter_mut()
                .find(|t| t.executor == e.executor && t.config == e.config)
            {
                Some(t) => {
                    t.time += e.time;
                    t.runs += 1;
                }
                None => report.times.push(ExecutionTimes {
                    executor: e.executor,
                    config: e.config.clone(),
                    time: e.time,
                    runs: 1,
                }),
            }
        }
    }

    /// Runs one program everywhere and compares. `seed` seeds the CLIF
    /// checks' arguments and decides whether AOT runs
    /// ([`Runner::samples_aot`]).
    pub fn check_case(&self, label: &str, program: GeneratedProgram, seed: u64) -> CaseResult {
        let mut result = CaseResult {
            label: label.to_string(),
            seed,
            program,
            reference: Err(String::new()),
            executions: Vec::new(),
            mismatches: Vec::new(),
            clif: ClifStats::default(),
            clif_failures: Vec::new(),
        };
        let checked = match check_program(&result.program) {
            Ok(p) => p,
            Err(diags) => {
                result.clif_failures.push(format!(
                    "the generated program does not type-check:\n{diags}"
                ));
                return result;
            }
        };
        let reference = interpret(&checked);
        if let Status::Failed(why) = &reference.outcome.status {
            result.reference = Err(format!("the interpreter cannot run it: {why}"));
            return result;
        }
        result.reference = Ok(reference);
        if self.clif_checks {
            let (stats, failures) = clif_check::check_program(&checked, &self.clif_passes(), seed);
            result.clif = stats;
            result.clif_failures = failures;
        }
        let dir = match tempfile::Builder::new().prefix("parec-diff-").tempdir() {
            Ok(dir) => dir,
            Err(e) => {
                result
                    .clif_failures
                    .push(format!("no temporary directory: {e}"));
                return result;
            }
        };
        let files = match result.program.write_to_dir(dir.path()) {
            Ok(files) => files,
            Err(e) => {
                result
                    .clif_failures
                    .push(format!("cannot write the program: {e}"));
                return result;
            }
        };
        let executors: Vec<Executor> = self
            .executors
            .iter()
            .copied()
            .filter(|&e| e != Executor::Interp && (e != Executor::Aot || self.samples_aot(seed)))
            .collect();
        // One worker for the whole program: it lowers the program once.
        let mut lease = self.workers().lease();
        for &executor in &executors {
            for config in self.configs_for(seed, executor) {
                let execution = self.execute(&mut lease, executor, config, &files, dir.path());
                result.executions.push(execution);
            }
        }
        if let Ok(reference) = &result.reference {
            result.mismatches = result
                .executions
                .iter()
                .enumerate()
                .filter(|(_, e)| !e.outcome.agrees_with(&reference.outcome))
                .map(|(i, _)| i)
                .collect();
        }
        result
    }

    /// Runs the program in `files` (written to `dir`, where the runs may
    /// leave files) with `executor` in `config`, on the worker of `lease`.
    pub fn execute(
        &self,
        lease: &mut Lease,
        executor: Executor,
        config: &PassConfig,
        files: &[PathBuf],
        dir: &Path,
    ) -> Execution {
        let start = Instant::now();
        let (outcome, phases) = match executor {
            Executor::Interp => (self.interp_in_worker(lease, files), None),
            Executor::Jit => self.jit(lease, config, files, dir),
            Executor::Aot => (self.aot(lease, config, files, dir), None),
        };
        Execution {
            executor,
            config: config.name.clone(),
            outcome,
            time: start.elapsed(),
            phases,
        }
    }

    /// Runs the `exec-*` command `args` on the worker of `lease`; the
    /// outcome and, for a JIT run that returned, its phases.
    fn run_command(
        &self,
        lease: &mut Lease,
        args: Result<Vec<String>, String>,
    ) -> (Outcome, Option<JitPhases>) {
        let args = match args {
            Ok(args) => args,
            Err(why) => return (Outcome::failed(why), None),
        };
        match lease.run(&args, self.timeout) {
            Ok(run) => (Outcome::of_process(run.captured, true), run.phases),
            Err(e) => (Outcome::failed(format!("{e:#}")), None),
        }
    }

    /// The interpreter in a worker, for programs that may not terminate
    /// (shrinking candidates).
    fn interp_in_worker(&self, lease: &mut Lease, files: &[PathBuf]) -> Outcome {
        let args = std::iter::once(Ok("exec-interp".to_string()))
            .chain(files.iter().map(|f| path_arg(f)))
            .collect();
        self.run_command(lease, args).0
    }

    fn jit(
        &self,
        lease: &mut Lease,
        config: &PassConfig,
        files: &[PathBuf],
        dir: &Path,
    ) -> (Outcome, Option<JitPhases>) {
        let profile = match config.profile {
            true => match self.own_profile(lease, files, dir) {
                Ok(profile) => Some(profile),
                Err(failed) => return (failed, None),
            },
            false => None,
        };
        self.run_command(lease, config.exec_jit_args(profile.as_deref(), files))
    }

    /// The program's profile from its own run, made once per program in
    /// `dir` (`exec-jit --profile-generate`). A program that traps or
    /// exits writes its profile too; a run that wrote none is the failed
    /// outcome returned.
    fn own_profile(
        &self,
        lease: &mut Lease,
        files: &[PathBuf],
        dir: &Path,
    ) -> Result<PathBuf, Outcome> {
        let path = dir.join("own.prof");
        if path.exists() {
            return Ok(path);
        }
        let args = ["exec-jit", "-O2", "--profile-generate"]
            .into_iter()
            .map(|a| Ok(a.to_string()))
            .chain(std::iter::once(path_arg(&path)))
            .chain(files.iter().map(|f| path_arg(f)))
            .collect();
        let (outcome, _) = self.run_command(lease, args);
        match path.exists() {
            true => Ok(path),
            false => Err(Outcome::failed(format!(
                "the profiling run wrote no profile: {:?}",
                outcome.status
            ))),
        }
    }

    fn aot(
        &self,
        lease: &mut Lease,
        config: &PassConfig,
        files: &[PathBuf],
        dir: &Path,
    ) -> Outcome {
        let exe = dir.join(format!("prog-{}", config.short_name()));
        let profile = match config.profile {
            true => match self.own_profile(lease, files, dir) {
                Ok(profile) => Some(profile),
                Err(failed) => return failed,
            },
            false => None,
        };
        let args = match config.exec_aot_args(profile.as_deref(), files, &exe, self.runtime) {
            Ok(args) => args,
            Err(why) => return Outcome::failed(why),
        };
        match lease.run(&args, self.timeout) {
            Ok(build) if build.captured.status.is_some_and(|s| s.success()) => {}
            Ok(build) if build.captured.status.is_none() => {
                return Outcome::failed("the build timed out".into())
            }
            Ok(build) => {
                return Outcome::failed(format!(
                    "the build failed: {}",
                    String::from_utf8_lossy(&build.captured.stderr).trim_end()
                ))
            }
            Err(e) => return Outcome::failed(format!("{e:#}")),
        }
        let mut run = parec::link::run_command(&exe, parec::target::Target::Aarch64);
        match run_with_timeout(&mut run, self.timeout) {
            Ok(captured) => Outcome::of_process(captured, false),
            Err(e) => Outcome::failed(format!("cannot start the process: {e}")),
        }
    }

    /// Whether `program` still shows the failure of `what` (an execution of
    /// `config` by `executor`, or a CLIF check failure when `None`). Used by
    /// the shrinker; every run has a time limit.
    fn still_fails(
        &self,
        program: &GeneratedProgram,
        what: Option<(Executor, &PassConfig)>,
        original: Option<&Outcome>,
        seed: u64,
    ) -> bool {
        let Ok(dir) = tempfile::Builder::new().prefix("parec-shrink-").tempdir() else {
            return false;
        };
        let Ok(files) = program.write_to_dir(dir.path()) else {
            return false;
        };
        let mut lease = self.workers().lease();
        let reference = self.interp_in_worker(&mut lease, &files);
        if !matches!(reference.status, Status::Exited(_)) {
            return false;
        }
        match what {
            Some((executor, config)) => {
                let actual = self
                    .execute(&mut lease, executor, config, &files, dir.path())
                    .outcome;
                let timed_out_before = original.is_some_and(|o| o.status == Status::TimedOut);
                (actual.status != Status::TimedOut || timed_out_before)
                    && !actual.agrees_with(&reference)
            }
            None => match check_program(program) {
                Ok(p) => !clif_check::check_program(&p, &self.clif_passes(), seed)
                    .1
                    .is_empty(),
                Err(_) => false,
            },
        }
    }

    /// Reduces a failing case and writes it to a new directory under `out`.
    pub fn save_reproducer(&self, case: &CaseResult, out: &Path) -> Result<PathBuf> {
        let first = case.mismatches.first().map(|&i| &case.executions[i]);
        let what = first.map(|e| {
            let config = self
                .configs
                .iter()
                .find(|c| c.name == e.config)
                .cloned()
                .unwrap_or_else(|| PassConfig::new(&e.config, OptLevel::Oz, Vec::new()));
            (e.executor, config)
        });
        let original_outcome = first.map(|e| e.outcome.clone());
        let shrinkable = first.is_some() || case.reference.is_ok();
        let (reduced, stats) = if self.shrink_tests > 0 && shrinkable {
            // Candidates often loop (a deleted increment): give up on them early.
            let fast = Runner {
                timeout: self.timeout.min(SHRINK_TIMEOUT),
                ..self.clone()
            };
            let mut predicate = |p: &GeneratedProgram| {
                fast.still_fails(
                    p,
                    what.as_ref().map(|(e, c)| (*e, c)),
                    original_outcome.as_ref(),
                    case.seed,
                )
            };
            shrink::shrink(&case.program, &mut predicate, self.shrink_tests)
        } else {
            (case.program.clone(), shrink::ShrinkStats::default())
        };

        let tag = match &what {
            Some((e, c)) => format!("{}-{}", e.name(), c.short_name()),
            None => "clif".to_string(),
        };
        let dir = out.join(format!("{}-{tag}", case.label.replace(' ', "-")));
        if dir.exists() {
            std::fs::remove_dir_all(&dir)
                .with_context(|| format!("cannot replace {}", dir.display()))?;
        }
        reduced
            .write_to_dir(&dir)
            .with_context(|| format!("cannot write {}", dir.display()))?;
        case.program
            .write_to_dir(&dir.join("original"))
            .with_context(|| format!("cannot write {}", dir.display()))?;
        let readme = self.reproducer_readme(case, &reduced, what.as_ref(), stats);
        std::fs::write(dir.join("REPORT.txt"), readme)
            .with_context(|| format!("cannot write {}", dir.display()))?;
        Ok(dir)
    }

    fn reproducer_readme(
        &self,
        case: &CaseResult,
        reduced: &GeneratedProgram,
        what: Option<&(Executor, PassConfig)>,
        stats: shrink::ShrinkStats,
    ) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "Differential-testing failure: {}", case.label);
        let _ = write!(s, "{}", case.summary());
        let files: Vec<String> = reduced
            .modules
            .iter()
            .map(|(n, _)| format!("{n}.pare"))
            .collect();
        let files = files.join(" ");
        let _ = writeln!(
            s,
            "\nReduced from {} to {} lines ({} candidates tested, {} accepted, {} ill-typed).",
            case.program.line_count(),
            reduced.line_count(),
            stats.tested,
            stats.accepted,
            stats.ill_typed
        );
        let _ = writeln!(
            s,
            "\nReproduce (in this directory):\n  parec interp {files}"
        );
        if let Some((executor, config)) = what {
            // The planted pass exists only in the tools binary; `parec run`
            // takes no profile.
            let (run, build) = if config.passes.contains(&TestPass::Planted) {
                ("parec-tools exec-jit", "parec-tools exec-aot")
            } else if config.profile {
                ("parec-tools exec-jit", "parec build")
            } else {
                ("parec run", "parec build")
            };
            let mut args = format!("{} {}", config.level_arg(), config.passes_arg());
            if config.profile {
                let _ = writeln!(s, "  parec run {files} --profile-generate own.prof");
                args.push_str(" --profile-use own.prof");
            }
            match executor {
                Executor::Jit => {
                    let _ = writeln!(s, "  {run} {args} {files}");
                }
                _ => {
                    let _ = writeln!(
                        s,
                        "  {build} {args} {files} -o prog && qemu-aarch64-static ./prog"
                    );
                }
            }
            let _ = writeln!(s, "\nConfiguration: {} ({executor:?})", config.name);
        }
        // Outcomes of the reduced program.
        if let Ok(dir) = tempfile::Builder::new().prefix("parec-repro-").tempdir() {
            if let Ok(paths) = reduced.write_to_dir(dir.path()) {
                let mut lease = self.workers().lease();
                let _ = writeln!(
                    s,
                    "\n== interpreter (reduced program) ==\n{}",
                    self.interp_in_worker(&mut lease, &paths).describe()
                );
                if let Some((executor, config)) = what {
                    let e = self.execute(&mut lease, *executor, config, &paths, dir.path());
                    let _ = writeln!(
                        s,
                        "== {} [{}] (reduced program) ==\n{}",
                        executor.name(),
                        config.name,
                        e.outcome.describe()
                    );
                }
            }
        }
        if let Ok(reference) = &case.reference {
            let _ = writeln!(
                s,
                "== interpreter (original program) ==\n{}",
                reference.outcome.describe()
            );
        }
        for &i in &case.mismatches {
            let e = &case.executions[i];
            let _ = writeln!(
                s,
                "== {} [{}] (original program) ==\n{}",
                e.executor.name(),
                e.config,
                e.outcome.describe()
            );
        }
        s
    }
}

/// Parses and checks a generated program; the rendered diagnostics on failure.
pub fn check_program(program: &GeneratedProgram) -> Result<Program, String> {
    pare_frontend::check_texts(&program.modules)
}

/// Runs the reference interpreter in process.
fn interpret(program: &Program) -> Execution {
    let start = Instant::now();
    let mut stdout = Vec::new();
    let exit = run_with_big_stack(program, &mut stdout);
    let (status, trap) = match exit {
        Exit::Status(s) => (Status::Exited(s), None),
        Exit::Trap(kind) => (
            Status::Exited(TRAP_EXIT_STATUS),
            Some(format!("trap: {}", kind.message())),
        ),
        Exit::Error(e) => (Status::Failed(e), None),
    };
    Execution {
        executor: Executor::Interp,
        config: "-".into(),
        outcome: Outcome {
            status,
            stdout,
            trap,
        },
        time: start.elapsed(),
        phases: None,
    }
}

/// Checks that the tools the executors need are present.
pub fn check_tools(runner: &Runner) -> Result<()> {
    if !runner.tools.exists() {
        bail!(
            "the parec-tools binary `{}` does not exist",
            runner.tools.display()
        );
    }
    if runner.executors.contains(&Executor::Aot) {
        Command::new(parec::link::QEMU_AARCH64)
            .arg("--version")
            .output()
            .map_err(|e| {
                anyhow!(
                    "{} is needed for the aot executor: {e}",
                    parec::link::QEMU_AARCH64
                )
            })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_configs_cover_every_pass() {
        let configs = PassConfig::standard();
        assert_eq!(configs[0].name, "Cranelift");
        assert!(configs[0].passes.is_empty());
        assert_eq!(configs[1].name, "O2");
        assert_eq!(configs[1].passes, TestPass::speed());
        for pass in TestPass::all() {
            assert!(configs.iter().any(|c| c.passes == vec![pass]));
        }
        assert!(configs.iter().any(|c| c.passes == TestPass::all()));
    }

    #[test]
    fn sampled_configurations_cover_each_equally() {
        let mut runner = Runner::new(PathBuf::from("parec-tools"));
        for executor in [Executor::Jit, Executor::Aot] {
            runner.configs_per_program = 0;
            let configs: Vec<String> = runner
                .executor_configs(executor)
                .iter()
                .map(|c| c.name.clone())
                .collect();
            let count = configs.len();
            assert_eq!(
                runner.configs_for(5, executor).len(),
                count,
                "all by default"
            );
            runner.configs_per_program = 3;
            let mut uses = vec![0; count];
            for seed in 0..count as u64 {
                let chosen = runner.configs_for(seed, executor);
                assert_eq!(chosen.len(), 3);
                for config in chosen {
                    uses[configs.iter().position(|c| *c == config.name).unwrap()] += 1;
                }
            }
            assert_eq!(uses, vec![3; count], "each in 3 of every {count} programs");
            runner.configs_per_program = count + 1;
            assert_eq!(runner.configs_for(1, executor).len(), count);
        }
    }

    /// AOT checks every program at the levels of `aot_always` and samples
    /// the other configurations in turn; the JIT samples all of its own.
    #[test]
    fn aot_always_runs_its_configurations() {
        let mut runner = Runner::new(PathBuf::from("parec-tools"));
        runner.configs_per_program = 2;
        runner.aot_always = vec!["O2".into(), "Oz".into()];
        let others = runner.configs.len() - 2;
        let mut uses = std::collections::BTreeMap::new();
        for seed in 0..others as u64 {
            let aot: Vec<&str> = runner
                .configs_for(seed, Executor::Aot)
                .iter()
                .map(|c| c.name.as_str())
                .collect();
            assert_eq!(aot.len(), 4, "{aot:?}");
            assert!(aot.contains(&"O2") && aot.contains(&"Oz"), "{aot:?}");
            for name in aot {
                *uses.entry(name).or_insert(0) += 1;
            }
            assert_eq!(runner.configs_for(seed, Executor::Jit).len(), 2);
        }
        for (name, n) in uses {
            let expected = if name == "O2" || name == "Oz" {
                others
            } else {
                2
            };
            assert_eq!(n, expected, "{name}");
        }
    }

    /// The JIT runs no machine passes: of the configurations that differ
    /// only in them, it runs the first; AOT runs every configuration.
    #[test]
    fn the_jit_leaves_out_configurations_it_would_repeat() {
        let runner = Runner::new(PathBuf::from("parec-tools"));
        let names = |e| -> Vec<String> {
            runner
                .executor_configs(e)
                .iter()
                .map(|c| c.name.clone())
                .collect()
        };
        let aot = names(Executor::Aot);
        let jit = names(Executor::Jit);
        assert_eq!(aot.len(), runner.configs.len());
        assert!(aot.contains(&"outline".to_string()));
        assert!(jit.contains(&"peephole".to_string()));
        assert!(!jit.contains(&"outline".to_string()), "{jit:?}");
        // Every machine pass alone but the first compiles as the first.
        let machine_alone = runner
            .configs
            .iter()
            .filter(|c| !c.passes.is_empty() && c.passes.iter().all(|p| p.clif().is_none()))
            .count();
        assert!(machine_alone >= 2);
        assert_eq!(jit.len(), aot.len() - (machine_alone - 1), "{jit:?}");
        for name in [
            "Cranelift",
            "O2",
            "gvn",
            "inline",
            "fmerge",
            "merge",
            "Oz",
            "Oz-profile",
        ] {
            assert!(
                jit.iter().any(|n| n.split('=').any(|p| p == name)),
                "{name}: {jit:?}"
            );
        }
    }

    #[test]
    fn identical_configs_merge() {
        let c = PassConfig::parse_list("O2,O2,Oz").unwrap();
        assert_eq!(c.len(), 2);
        assert!(PassConfig::parse_list("nope").is_err());
    }

    #[test]
    fn executors_parse() {
        assert_eq!(
            Executor::parse_list("jit, aot").unwrap(),
            vec![Executor::Jit, Executor::Aot]
        );
        assert!(Executor::parse_list("gcc").is_err());
    }
}
