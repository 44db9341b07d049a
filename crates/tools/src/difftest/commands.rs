//! The `exec-*` commands: how the differential tester compiles and runs one
//! program.
//!
//! `exec-interp`, `exec-jit` and `exec-aot` run or build a program through
//! the `parec` library as `parec interp`, `parec run` and `parec build` do,
//! with pipelines that may hold passes `parec` lacks (the planted
//! miscompile). Each has one definition used twice: as a hidden
//! subcommand of `parec-tools` (one process per program; reproducers name
//! these commands) and as a request a worker process serves
//! ([`super::worker`]: many programs per process). Both parse the same
//! arguments ([`ExecCommand`]), run the same function ([`run`]) and end
//! with the same status ([`exit_status`]), so an outcome does not depend on
//! which of them produced it.
//!
//! `exec-jit` lowers a Pare program with the front end once per
//! [`Session`] and compiles a copy of the lowered modules, which is what
//! `parec run` compiles: a worker is sent the configurations of one
//! program in a row, and every configuration would otherwise parse, check
//! and lower the same files again. The cached modules are used only while
//! the request names the same files and every file the front end read
//! still holds the bytes it read. A one-shot `exec-jit` process has a
//! fresh session and lowers once, as `parec run` does. The lowered modules
//! share one code cache (`parec_passes::code_cache`) for the session, so
//! what several configurations compile alike (a function no pass changed,
//! the size inliner's trials alone and within `-Oz`) is compiled once per
//! program: with the ten standard configurations, 5.5 → 6.8 programs per
//! second (interpreter and JIT, seeds 0..100, 2 cores). `exec-aot` builds
//! compile through the session's code cache too (the front end runs per
//! build, as `parec build`'s does): the same cache while the request names
//! the same files with the same bytes (its keys hold the ISA, so the JIT's
//! host code and AOT's aarch64 code never meet; and since they are hashes of
//! the function compiled, a stale entry could never be used for another
//! function: the condition only bounds the cache to one program).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::anyhow;
use clap::{Args, Subcommand};
use parec::build::{Input, ModeFlags, Units};
use parec::commands::{self, BuildOptions, Emit};
use parec::link::Icf;
use parec::runtime::RuntimeChoice;
use parec::target::{OptLevel, Target};
use parec::{frontend, jit, Failure};
use parec_passes::clif_module::ClifModule;
use parec_passes::code_cache::CodeCache;

use super::pipeline_from_names;

/// Exit status of an internal error (a panic), as `parec`'s.
pub const ICE_STATUS: u8 = 70;

/// The commands that run or build one program for the differential tester.
#[derive(Clone, Debug, Subcommand)]
pub enum ExecCommand {
    /// (For the differential tester.) Runs a program with the interpreter,
    /// as `parec interp`.
    #[command(hide = true)]
    ExecInterp(ExecInterpArgs),
    /// (For the differential tester.) JIT-compiles and runs a program, as
    /// `parec run -O LEVEL --passes LIST`.
    #[command(hide = true)]
    ExecJit(ExecJitArgs),
    /// (For the differential tester.) Builds an aarch64 executable, as
    /// `parec build -O LEVEL --passes LIST -o OUT`.
    #[command(hide = true)]
    ExecAot(ExecAotArgs),
}

/// The arguments of `exec-interp`.
#[derive(Clone, Debug, Args)]
pub struct ExecInterpArgs {
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
}

/// The arguments of `exec-jit`.
#[derive(Clone, Debug, Args)]
pub struct ExecJitArgs {
    #[arg(short = 'O', default_value = "s", value_parser = ["0", "2", "s", "z"])]
    pub opt: String,
    #[arg(long, default_value = "")]
    pub passes: String,
    /// Run with block counters and write the profile (`parec run
    /// --profile-generate`; no pass runs).
    #[arg(long, conflicts_with_all = ["passes", "profile_use"])]
    pub profile_generate: Option<PathBuf>,
    /// Compile with this profile (`--profile-use`, default mode).
    #[arg(long)]
    pub profile_use: Option<PathBuf>,
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
}

/// The arguments of `exec-aot`.
#[derive(Clone, Debug, Args)]
pub struct ExecAotArgs {
    #[arg(short = 'O', default_value = "s", value_parser = ["0", "2", "s", "z"])]
    pub opt: String,
    #[arg(long, default_value = "")]
    pub passes: String,
    /// Build with this profile (`--profile-use`, default mode).
    #[arg(long)]
    pub profile_use: Option<PathBuf>,
    #[arg(short = 'o', required = true)]
    pub out: PathBuf,
    /// What the executable's runtime stands on (`parec build --runtime`).
    #[arg(long, default_value = "auto", value_parser = parse_runtime)]
    pub runtime: RuntimeChoice,
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
}

fn parse_runtime(name: &str) -> Result<RuntimeChoice, String> {
    name.parse()
}

/// Where the time of one `exec-jit` run went.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JitPhases {
    /// Parsing, checking and lowering (zero when the session had the
    /// program lowered already).
    pub front_end: Duration,
    /// parec's passes and Cranelift, up to the call of `main`.
    pub compile: Duration,
    /// `main` and the final flush.
    pub run: Duration,
}

/// What one process keeps between the commands it runs.
#[derive(Default)]
pub struct Session {
    lowered: Option<CachedLowering>,
    /// The code cache of the program of the last request.
    code_cache: Option<ProgramCache>,
    /// The phases of the last command, if it was an `exec-jit` run of a
    /// Pare program that returned from `main`.
    pub phases: Option<JitPhases>,
}

/// The code cache of one program (see the module doc).
struct ProgramCache {
    /// The files the request named, with their bytes then.
    files: Vec<(PathBuf, Vec<u8>)>,
    cache: Arc<CodeCache>,
}

/// A program lowered for the JIT, and what it was lowered from.
struct CachedLowering {
    /// The files the request named.
    request: Vec<PathBuf>,
    /// Every file the front end read, with the bytes it read.
    read: Vec<(PathBuf, Vec<u8>)>,
    modules: Vec<ClifModule>,
}

impl CachedLowering {
    /// Whether lowering `files` now would read what this lowering read.
    fn still_matches(&self, files: &[PathBuf]) -> bool {
        self.request == files
            && self
                .read
                .iter()
                .all(|(path, bytes)| std::fs::read(path).is_ok_and(|now| now == *bytes))
    }
}

impl Session {
    /// The code cache of the program `files`: the session's while the
    /// request names the same files with the same bytes, else a new one
    /// (see the module doc).
    fn code_cache(&mut self, files: &[PathBuf]) -> Arc<CodeCache> {
        let request: Vec<(PathBuf, Vec<u8>)> = files
            .iter()
            .map(|path| (path.clone(), std::fs::read(path).unwrap_or_default()))
            .collect();
        match &self.code_cache {
            Some(cached) if cached.files == request => cached.cache.clone(),
            _ => {
                let cache = Arc::new(CodeCache::new());
                self.code_cache = Some(ProgramCache {
                    files: request,
                    cache: cache.clone(),
                });
                cache
            }
        }
    }

    /// The front end's modules for the Pare program `files`, lowered now or
    /// earlier in this session.
    fn lowered(&mut self, files: &[PathBuf]) -> Result<Vec<ClifModule>, Failure> {
        if let Some(cached) = self.lowered.as_ref().filter(|c| c.still_matches(files)) {
            return Ok(cached.modules.clone());
        }
        self.lowered = None;
        let mut lowered = frontend::lower_for_jit(files)?;
        // One code cache for every configuration the session compiles this
        // program in: a function no pass of a configuration changed, or one
        // that several configurations' passes change alike (the size
        // inliner's trials are the same alone and within `-Oz`), is
        // compiled once per program instead of once per configuration.
        // Code is a function of the cache key, so runs are unchanged.
        let cache = self.code_cache(files);
        for module in &mut lowered.modules {
            module.set_code_cache(cache.clone());
        }
        // Read back what the front end read; a file that cannot be read
        // again just makes the lowering uncacheable.
        let read: Option<Vec<(PathBuf, Vec<u8>)>> = lowered
            .files
            .iter()
            .map(|path| std::fs::read(path).ok().map(|bytes| (path.clone(), bytes)))
            .collect();
        if let Some(read) = read {
            self.lowered = Some(CachedLowering {
                request: files.to_vec(),
                read,
                modules: lowered.modules.clone(),
            });
        }
        Ok(lowered.modules)
    }
}

/// Runs `command`; returns the program's (or the build's) exit status.
pub fn run(command: &ExecCommand, session: &mut Session) -> Result<i32, Failure> {
    session.phases = None;
    match command {
        ExecCommand::ExecInterp(args) => commands::interp(&args.files),
        ExecCommand::ExecJit(args) => run_jit(args, session),
        ExecCommand::ExecAot(args) => build_aot(args, session),
    }
}

/// The exit status of a command's result, printing its error to stderr as
/// `parec-tools` does: the status itself, 1 after an error.
pub fn exit_status(result: Result<i32, Failure>) -> u8 {
    match result {
        Ok(status) => (status & 0xff) as u8,
        Err(Failure::Reported) => 1,
        Err(Failure::Error(e)) => {
            parec::io_error::eprintln(format_args!("error: {e:#}"));
            1
        }
    }
}

/// Prints the line that follows a panic's message (status [`ICE_STATUS`]).
pub fn report_internal_error() {
    parec::io_error::eprintln(format_args!(
        "error: internal error (a bug in parec; the panic message is above)"
    ));
}

/// `exec-jit`.
fn run_jit(args: &ExecJitArgs, session: &mut Session) -> Result<i32, Failure> {
    let level = opt_level(&args.opt);
    if let Some(profile) = &args.profile_generate {
        return commands::run_generating_profile(&args.files, level, profile);
    }
    let mut pipeline = pipeline_from_names(&args.passes).map_err(|e| Failure::Error(anyhow!(e)))?;
    pipeline.profile = profile_flags(args.profile_use.clone()).read()?;
    if !is_pare_program(&args.files) {
        // `.clif` files or a bad file list: `parec run`'s own checks.
        return commands::run_with_pipeline(&args.files, level, pipeline);
    }
    let start = Instant::now();
    let modules = session.lowered(&args.files)?;
    let lowered = Instant::now();
    let mut build = commands::jit_build(pipeline, level);
    // A worker runs one per core: threads within a compilation would only
    // compete with the other workers (the output is the same for any count).
    build.jobs = 1;
    let output = build.run(Input::Modules(modules))?;
    commands::restore_default_sigpipe();
    let mut main_called = None;
    let status = jit::execute_with(output.modules, level, |_| {
        main_called = Some(Instant::now());
        Ok(())
    })?;
    let main_called = main_called.unwrap_or_else(Instant::now);
    session.phases = Some(JitPhases {
        front_end: lowered - start,
        compile: main_called - lowered,
        run: main_called.elapsed(),
    });
    Ok(status)
}

/// Whether `files` name a Pare program `parec run` would accept as one:
/// at least one file, all `.pare`, none a directory.
fn is_pare_program(files: &[PathBuf]) -> bool {
    !files.is_empty()
        && files
            .iter()
            .all(|f| f.extension().is_some_and(|e| e == "pare") && !f.is_dir())
}

/// `exec-aot`.
fn build_aot(args: &ExecAotArgs, session: &mut Session) -> Result<i32, Failure> {
    let pipeline = pipeline_from_names(&args.passes).map_err(|e| Failure::Error(anyhow!(e)))?;
    let options = BuildOptions {
        files: args.files.clone(),
        out: Some(args.out.clone()),
        target: Target::Aarch64,
        level: opt_level(&args.opt),
        emit: Emit::Exe,
        jobs: 1,
        icf: Icf::All,
        passes: None,
        mode: ModeFlags::default(),
        remarks: false,
        remarks_file: None,
        outline_stats: false,
        units: Units::PerModule,
        code_model: Default::default(),
        profile: profile_flags(args.profile_use.clone()),
        runtime: args.runtime,
        strip: false,
    };
    let cache = session.code_cache(&args.files);
    commands::build_with_pipeline(&options, pipeline, Some(&cache))
}

/// `--profile-use FILE` in the default mode and mismatch policy.
fn profile_flags(use_file: Option<PathBuf>) -> parec::profile::ProfileFlags {
    parec::profile::ProfileFlags {
        use_file,
        ..Default::default()
    }
}

/// The level of a `-O` value (clap allows only the levels' values).
fn opt_level(s: &str) -> OptLevel {
    OptLevel::from_value(s).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pare_programs_are_recognized() {
        assert!(is_pare_program(&[PathBuf::from("a.pare")]));
        assert!(!is_pare_program(&[]));
        assert!(!is_pare_program(&[PathBuf::from("a.clif")]));
        assert!(!is_pare_program(&[
            PathBuf::from("a.pare"),
            PathBuf::from("b.clif")
        ]));
        let dir = tempfile::Builder::new().suffix(".pare").tempdir().unwrap();
        assert!(!is_pare_program(&[dir.path().to_path_buf()]));
    }
}
