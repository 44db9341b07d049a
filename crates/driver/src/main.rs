//! The `parec` command line: argument parsing and exit statuses.
//!
//! Exit statuses: the program's own status for `run`/`interp` (101 after a
//! trap), 0 on success, 1 on any compile, I/O or tool error, 2 on bad flags
//! (clap), 70 on an internal error (a panic).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory as _, Parser, Subcommand, ValueEnum};
use parec::actions::{self, ActionFlags, CompileOptions};
use parec::build::{ModeFlags, Units};
use parec::codegen::CodeModel;
use parec::commands::{self, BuildOptions, Emit};
use parec::link::Icf;
use parec::pipeline::Pipeline;
use parec::profile::{MismatchPolicy, ProfileFlags};
use parec::runtime::RuntimeChoice;
use parec::size::SizeOptions;
use parec::target::{OptLevel, Target};
use parec::{io_error, Failure};
use parec_passes::profile::ProfileMode;

#[derive(Parser)]
#[command(
    name = "parec",
    version,
    about = "The Pare compiler: JIT, interpreter and aarch64 AOT builds on Cranelift"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// JIT-compile and run a program on the host; exits with its status.
    Run {
        /// Source files (.pare, root module first; or .clif).
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Optimization level: 0, 2 or z.
        #[arg(short = 'O', default_value = "z", value_parser = ["0", "2", "z"])]
        opt: String,
        /// Replace the level's CLIF passes by this comma-separated list (testing).
        #[arg(long, hide = true, value_parser = parse_passes)]
        passes: Option<String>,
        /// Count how often every block runs (no parec pass runs) and write
        /// the profile to FILE when the program ends, for `build --profile-use`.
        #[arg(long, value_name = "FILE", conflicts_with_all = ["passes", "profile_use"])]
        profile_generate: Option<PathBuf>,
        #[command(flatten)]
        profile: ProfileArgs,
        /// Arguments after `--` (accepted for symmetry; Pare programs have no argv).
        #[arg(last = true)]
        args: Vec<String>,
    },
    /// Run a Pare program with the reference interpreter.
    Interp {
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Compile to an executable, objects, assembly or CLIF.
    Build {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Output: executable (exe), directory (obj), or file (asm/clif; default stdout).
        #[arg(short = 'o')]
        out: Option<PathBuf>,
        /// Target triple: aarch64-unknown-linux-gnu (default) or x86_64-unknown-linux-gnu.
        #[arg(long, default_value = "aarch64-unknown-linux-gnu", value_parser = parse_target)]
        target: Target,
        /// Optimization level: 0, 2 or z (size, the default).
        #[arg(short = 'O', default_value = "z", value_parser = ["0", "2", "z"])]
        opt: String,
        /// What to write.
        #[arg(long, value_enum, default_value_t = EmitArg::Exe)]
        emit: EmitArg,
        /// Modules compiled in parallel (output is the same for any value).
        #[arg(short = 'j', value_parser = clap::value_parser!(u32).range(1..))]
        jobs: Option<u32>,
        /// Identical code folding in the linker.
        #[arg(long, default_value = "all", value_parser = parse_icf)]
        icf: Icf,
        /// Replace the level's CLIF passes by this comma-separated list (testing).
        #[arg(long, hide = true, value_parser = parse_passes)]
        passes: Option<String>,
        /// Round 1: write this build's cgdata (merge summary and outline tree)
        /// to FILE, merging with the summary.
        #[arg(long, value_name = "FILE", conflicts_with = "cgdata_use")]
        cgdata_generate: Option<PathBuf>,
        /// Merge and outline using the cgdata of an earlier build.
        #[arg(long, value_name = "FILE")]
        cgdata_use: Option<PathBuf>,
        /// With --cgdata-use: a bad file is a warning and the build is local.
        #[arg(long, requires = "cgdata_use")]
        cgdata_ignore_errors: bool,
        /// Round 1 (merge summaries, outline tree) and round 2 in one build.
        #[arg(long, conflicts_with = "cgdata_use")]
        two_rounds: bool,
        /// Pass decisions: one line each on stderr (`--remarks`), or JSON
        /// lines in FILE (`--remarks=FILE`, docs/REMARKS.md).
        #[arg(long, value_name = "FILE", num_args = 0..=1, require_equals = true)]
        remarks: Option<Option<PathBuf>>,
        /// Print what the machine outliner did (per module and in total) to stderr.
        #[arg(long)]
        outline_stats: bool,
        /// Whole-program compilation (as clang's -flto and rustc's -C lto):
        /// every module and the runtime as one unit, so inlining and merging
        /// cross module boundaries; one object.
        #[arg(long)]
        lto: bool,
        /// How symbol addresses are formed: `small` (`adrp`+`add`, anywhere
        /// within ±4 GiB), `tiny` (`adr`, the linked image within ±1 MiB;
        /// the linker checks), or `auto` (tiny for small programs).
        #[arg(long, default_value = "auto", value_parser = parse_code_model)]
        code_model: CodeModel,
        /// What the executable's runtime stands on: `freestanding` (Linux
        /// system calls, no C library), `libc` (the C library), or `auto`
        /// (freestanding unless the program calls C through `extern fn`).
        #[arg(long, default_value = "auto", value_parser = parse_runtime)]
        runtime: RuntimeChoice,
        /// Leave the executable's symbol tables out (smaller files; `parec
        /// size` then knows no function).
        #[arg(short = 's', long)]
        strip: bool,
        #[command(flatten)]
        profile: ProfileArgs,
    },
    /// Separate compilation, step 1: what each module's compilation must
    /// know of the others (reads every source; no code is generated).
    Plan {
        /// The program's .pare files, root module first.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// The plan file to write.
        #[arg(short = 'o', required = true)]
        out: PathBuf,
        #[command(flatten)]
        flags: ActionArgs,
        /// The plan of a two-round build (cross-module merging and outlining).
        #[arg(long)]
        two_rounds: bool,
        /// Modules processed in parallel (the plan is the same for any value).
        #[arg(short = 'j', value_parser = clap::value_parser!(u32).range(1..))]
        jobs: Option<u32>,
    },
    /// Separate compilation: one module of a program to its object (the
    /// bytes `parec build --emit obj` writes for it with the same flags).
    Compile {
        /// The program's .pare files, root module first.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// The module to compile (a module name, or `pare_runtime`).
        #[arg(long, required = true)]
        module: String,
        /// The program plan (`parec plan`, made with the same flags).
        #[arg(long, required = true, value_name = "PLAN")]
        plan: PathBuf,
        /// The object to write.
        #[arg(short = 'o')]
        out: Option<PathBuf>,
        #[command(flatten)]
        flags: ActionArgs,
        /// Round 1 of two: write the module's merge summary and outline tree.
        #[arg(long, value_name = "FILE")]
        cgdata_generate: Option<PathBuf>,
        /// Round 2 of two: outline against round 1's cgdata (merged).
        #[arg(long, value_name = "FILE")]
        cgdata_use: Option<PathBuf>,
    },
    /// Separate compilation: link objects into a static executable, as
    /// `parec build` links its own.
    Link {
        #[arg(required = true)]
        objects: Vec<PathBuf>,
        #[arg(short = 'o', required = true)]
        out: PathBuf,
        #[arg(long, default_value = "aarch64-unknown-linux-gnu", value_parser = parse_target)]
        target: Target,
        #[arg(long, default_value = "all", value_parser = parse_icf)]
        icf: Icf,
        /// Leave the executable's symbol tables out.
        #[arg(short = 's', long)]
        strip: bool,
    },
    /// Write a Ninja build file that builds the program with `parec plan`,
    /// `compile`, `cgdata merge` and `link` (the bytes of `parec build`).
    Ninja {
        /// The program's .pare files, root module first.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// The build file; its directory is the build directory.
        #[arg(short = 'o', required = true)]
        out: PathBuf,
        #[command(flatten)]
        flags: ActionArgs,
        /// Two rounds (as `parec build --two-rounds`).
        #[arg(long)]
        two_rounds: bool,
        #[arg(long, default_value = "all", value_parser = parse_icf)]
        icf: Icf,
        /// Leave the executable's symbol tables out.
        #[arg(short = 's', long)]
        strip: bool,
        /// The executable's name (default: the root module's name).
        #[arg(long)]
        exe: Option<String>,
        /// The parec the build runs (default: this one).
        #[arg(long)]
        parec: Option<PathBuf>,
    },
    /// Where the bytes of an executable or objects went: every file byte
    /// by part (headers, code, data, symbols, ...), every code byte per
    /// function, module, generic and kind; or the changes from another build.
    Size {
        /// One executable, or objects (a directory: the .o files in it).
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
        /// Show what changed from OTHER (the older build) to INPUTS.
        #[arg(long, value_name = "OTHER")]
        compare: Option<PathBuf>,
        /// Also write a treemap of the program's own code to this HTML file.
        #[arg(long, value_name = "OUT.html")]
        html: Option<PathBuf>,
        /// Rows of the generic and function tables (0: all).
        #[arg(long, default_value_t = 20)]
        top: usize,
        /// List the C library's modules and functions too.
        #[arg(long)]
        all: bool,
        /// Instead: every instruction of the program's own code by role
        /// (frame, calls and their moves, checks, traps, constants,
        /// addresses, memory, compares and branches, arithmetic), in total
        /// and per function (aarch64).
        #[arg(long, conflicts_with = "html")]
        roles: bool,
    },
    /// Inspect or combine cgdata files (the summaries of two-round builds).
    Cgdata {
        #[command(subcommand)]
        command: CgdataCommand,
    },
    /// Differential testing of generated programs (runs `parec-tools fuzz`).
    #[command(disable_help_flag = true)]
    Fuzz {
        /// Arguments of `parec-tools fuzz` (see `parec fuzz --help`).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Run CLIF passes on a .clif file and print the result.
    Opt {
        file: PathBuf,
        /// Comma-separated passes, in order (default: none).
        #[arg(long, value_parser = parse_passes)]
        passes: Option<String>,
        /// Target whose ISA the passes' size guard and the verifier use
        /// (default: the file's first `target` line parec builds for, else aarch64).
        #[arg(long, value_parser = parse_target)]
        target: Option<Target>,
        /// Check every `; run:` line with the CLIF interpreter before and after the passes.
        #[arg(long)]
        run: bool,
        /// Print instruction counts per function (to stderr).
        #[arg(long)]
        stats: bool,
    },
    /// Benchmarks: code size, compile and run time (runs `parec-tools bench`).
    #[command(disable_help_flag = true)]
    Bench {
        /// Arguments of `parec-tools bench` (see `parec bench --help`).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

#[derive(Subcommand)]
enum CgdataCommand {
    /// Merge cgdata files into OUT (the same bytes for any input order).
    Merge {
        /// The inputs are the modules of one build (round-1 cgdata of
        /// `parec compile`): every input counts, even equal ones.
        #[arg(long)]
        modules: bool,
        out: PathBuf,
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
    },
    /// Print a cgdata file: sections, merge groups, parameters, estimated benefit.
    Show { file: PathBuf },
}

/// The flags every separate-compilation action of one build shares.
#[derive(clap::Args)]
struct ActionArgs {
    /// Target triple: aarch64-unknown-linux-gnu (default) or x86_64-unknown-linux-gnu.
    #[arg(long, default_value = "aarch64-unknown-linux-gnu", value_parser = parse_target)]
    target: Target,
    /// Optimization level: 0, 2 or z (size, the default).
    #[arg(short = 'O', default_value = "z", value_parser = ["0", "2", "z"])]
    opt: String,
    /// Replace the level's CLIF passes by this comma-separated list (testing).
    #[arg(long, hide = true, value_parser = parse_passes)]
    passes: Option<String>,
    /// How symbol addresses are formed: `small`, `tiny` or `auto` (as
    /// `parec build --code-model`).
    #[arg(long, default_value = "auto", value_parser = parse_code_model)]
    code_model: CodeModel,
    /// What the runtime stands on: `auto`, `freestanding` or `libc` (as
    /// `parec build --runtime`).
    #[arg(long, default_value = "auto", value_parser = parse_runtime)]
    runtime: RuntimeChoice,
    /// The profile flags, as `parec build` takes them (the plan records
    /// the profile's content; every compile must use the same).
    #[command(flatten)]
    profile: ProfileArgs,
}

impl ActionArgs {
    fn flags(&self, two_rounds: bool) -> ActionFlags {
        ActionFlags {
            target: self.target,
            level: opt_level(&self.opt),
            passes: self.passes.clone(),
            two_rounds,
            code_model: self.code_model,
            runtime: self.runtime,
            profile: self.profile.flags(),
        }
    }
}

/// The flags of a build that uses an execution profile.
#[derive(clap::Args)]
struct ProfileArgs {
    /// Keep the size passes off hot code, as a profile of `parec run
    /// --profile-generate FILE` shows it.
    #[arg(long, value_name = "FILE")]
    profile_use: Option<PathBuf>,
    /// `optimistic`: the size passes touch all code not known hot;
    /// `conservative`: only code known cold.
    #[arg(long, default_value = "optimistic", value_parser = parse_profile_mode, requires = "profile_use")]
    profile_mode: ProfileMode,
    /// A function the profile no longer matches (changed since): `error`,
    /// or `warn` and build it as unprofiled.
    #[arg(long, default_value = "error", value_parser = parse_mismatch, requires = "profile_use")]
    profile_mismatch: MismatchPolicy,
}

impl ProfileArgs {
    fn flags(&self) -> ProfileFlags {
        ProfileFlags {
            use_file: self.profile_use.clone(),
            mode: self.profile_mode,
            mismatch: self.profile_mismatch,
        }
    }
}

fn parse_profile_mode(s: &str) -> Result<ProfileMode, String> {
    s.parse()
}

fn parse_mismatch(s: &str) -> Result<MismatchPolicy, String> {
    s.parse()
}

#[derive(Clone, Copy, ValueEnum)]
enum EmitArg {
    Exe,
    Obj,
    Asm,
    Clif,
}

/// A `--passes` list, checked (an unknown pass is a bad flag).
fn parse_passes(s: &str) -> Result<String, String> {
    Pipeline::from_names(s).map(|_| s.to_string())
}

/// The flag combinations clap's attributes cannot check; a bad one is a
/// clap error (status 2).
fn check_flags(cli: &Cli) -> Result<(), clap::Error> {
    match &cli.command {
        Command::Build {
            opt,
            passes,
            two_rounds,
            cgdata_generate,
            cgdata_use,
            ..
        } => check_cross_module(
            *two_rounds || cgdata_generate.is_some() || cgdata_use.is_some(),
            opt,
            passes.as_deref(),
        ),
        Command::Plan {
            flags, two_rounds, ..
        }
        | Command::Ninja {
            flags, two_rounds, ..
        } => check_cross_module(*two_rounds, &flags.opt, flags.passes.as_deref()),
        Command::Compile {
            flags,
            cgdata_generate,
            cgdata_use,
            ..
        } => check_cross_module(
            cgdata_generate.is_some() || cgdata_use.is_some(),
            &flags.opt,
            flags.passes.as_deref(),
        ),
        _ => Ok(()),
    }
}

/// Cross-module flags (`--two-rounds`, `--cgdata-*`) need a pipeline that
/// uses cgdata: without one they are bad flags (status 2), as a clap error
/// (clap cannot see the pipeline the level and `--passes` make).
fn check_cross_module(
    cross_module: bool,
    opt: &str,
    passes: Option<&str>,
) -> Result<(), clap::Error> {
    let pipeline = match passes {
        Some(list) => Pipeline::from_names(list).unwrap_or_else(|_| Pipeline::empty()),
        None => Pipeline::for_level(opt_level(opt)),
    };
    if cross_module && !pipeline.uses_cgdata() {
        return Err(Cli::command().error(
            clap::error::ErrorKind::ArgumentConflict,
            "--two-rounds and --cgdata-* need the `merge` or `outline` pass (-Oz)",
        ));
    }
    Ok(())
}

fn parse_target(s: &str) -> Result<Target, String> {
    s.parse()
}

fn parse_icf(s: &str) -> Result<Icf, String> {
    s.parse()
}

fn parse_code_model(s: &str) -> Result<CodeModel, String> {
    s.parse()
}

fn parse_runtime(s: &str) -> Result<RuntimeChoice, String> {
    s.parse()
}

fn opt_level(s: &str) -> OptLevel {
    match s {
        "0" => OptLevel::O0,
        "2" => OptLevel::O2,
        _ => OptLevel::Oz,
    }
}

/// `parec fuzz` and `parec bench`: the test tooling lives in its own crate
/// and binary, `parec-tools` (crates/tools), beside the compiler; these
/// commands run it.
mod tools {
    use std::path::PathBuf;
    use std::process::Command;

    use anyhow::anyhow;
    use parec::Failure;

    /// The name of the tooling binary.
    const TOOLS: &str = "parec-tools";

    /// Runs `parec-tools COMMAND ARGS...` with this process's stdio and
    /// returns its exit status.
    pub fn forward(command: &str, args: &[String]) -> Result<i32, Failure> {
        let tools = locate().ok_or_else(|| {
            anyhow!(
                "`parec {command}` runs `{TOOLS}`, which is not built: run `cargo build --release -p parec-tools` (or `-p parec-tools` with the profile of this parec)"
            )
        })?;
        let status = Command::new(&tools)
            .arg(command)
            .args(args)
            .status()
            .map_err(|e| anyhow!("cannot run `{}`: {e}", tools.display()))?;
        Ok(parec::link::exit_code(status))
    }

    /// `parec-tools` next to this executable (cargo builds both into one
    /// directory), else on `PATH`.
    fn locate() -> Option<PathBuf> {
        let beside = std::env::current_exe()
            .ok()
            .and_then(|exe| Some(exe.parent()?.join(TOOLS)))
            .filter(|p| p.is_file());
        beside.or_else(|| {
            std::env::var_os("PATH").and_then(|paths| {
                std::env::split_paths(&paths)
                    .map(|dir| dir.join(TOOLS))
                    .find(|p| p.is_file())
            })
        })
    }
}

/// Exit status of an internal compiler error (a panic): distinct from a
/// program's trap status 101, which is also Rust's default panic status.
const ICE_STATUS: u8 = 70;

/// Runs before the Rust runtime starts, which would reopen a closed
/// standard stream on `/dev/null` where writes succeed: parec occupies it
/// so that writes fail, as on a closed stream (`parec::io_error`).
#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array"]
static OCCUPY_CLOSED_STREAMS: extern "C" fn() = occupy_closed_streams;

extern "C" fn occupy_closed_streams() {
    io_error::occupy_closed_streams();
}

fn main() -> ExitCode {
    let status = match Cli::try_parse().and_then(|cli| check_flags(&cli).map(|()| cli)) {
        Ok(cli) => match std::panic::catch_unwind(|| execute(cli)) {
            Ok(status) => status,
            Err(_) => {
                io_error::eprintln(
                    "error: internal compiler error (a bug in parec; the panic message is above)",
                );
                ICE_STATUS
            }
        },
        Err(e) => io_error::report_clap(&e),
    };
    ExitCode::from(io_error::exit_status(status))
}

/// Runs the command; returns the process's exit status.
fn execute(cli: Cli) -> u8 {
    let result = match cli.command {
        Command::Run {
            files,
            opt,
            passes,
            profile_generate,
            profile,
            args: _,
        } => match profile_generate {
            Some(out) => commands::run_generating_profile(&files, opt_level(&opt), &out),
            None => commands::run_with_passes(
                &files,
                opt_level(&opt),
                passes.as_deref(),
                &profile.flags(),
            ),
        },
        Command::Interp { files } => commands::interp(&files),
        Command::Build {
            files,
            out,
            target,
            opt,
            emit,
            jobs,
            icf,
            passes,
            cgdata_generate,
            cgdata_use,
            cgdata_ignore_errors,
            two_rounds,
            remarks,
            outline_stats,
            lto,
            code_model,
            runtime,
            strip,
            profile,
        } => {
            let jobs = jobs.map_or_else(commands::available_jobs, |j| j as usize);
            let emit = match emit {
                EmitArg::Exe => Emit::Exe,
                EmitArg::Obj => Emit::Obj,
                EmitArg::Asm => Emit::Asm,
                EmitArg::Clif => Emit::Clif,
            };
            commands::build(&BuildOptions {
                files,
                out,
                target,
                level: opt_level(&opt),
                emit,
                jobs,
                icf,
                passes,
                mode: ModeFlags {
                    generate: cgdata_generate,
                    use_file: cgdata_use,
                    ignore_errors: cgdata_ignore_errors,
                    two_rounds,
                },
                remarks: matches!(remarks, Some(None)),
                remarks_file: remarks.flatten(),
                outline_stats,
                units: if lto {
                    Units::WholeProgram
                } else {
                    Units::PerModule
                },
                code_model,
                profile: profile.flags(),
                runtime,
                strip,
            })
        }
        Command::Size {
            inputs,
            json,
            compare,
            html,
            top,
            all,
            roles,
        } => commands::size(&SizeOptions {
            inputs,
            json,
            compare,
            html,
            top,
            all,
            roles,
        }),
        Command::Cgdata {
            command:
                CgdataCommand::Merge {
                    modules,
                    out,
                    inputs,
                },
        } => parec::cgdata_cmd::merge_files(&out, &inputs, modules),
        Command::Plan {
            files,
            out,
            flags,
            two_rounds,
            jobs,
        } => {
            let jobs = jobs.map_or_else(commands::available_jobs, |j| j as usize);
            actions::plan(&files, &out, &flags.flags(two_rounds), jobs)
        }
        Command::Compile {
            files,
            module,
            plan,
            out,
            flags,
            cgdata_generate,
            cgdata_use,
        } => actions::compile(&CompileOptions {
            files,
            module,
            plan,
            out,
            generate: cgdata_generate,
            use_file: cgdata_use,
            target: flags.target,
            level: opt_level(&flags.opt),
            passes: flags.passes,
            code_model: flags.code_model,
            runtime: flags.runtime,
            profile: flags.profile.flags(),
        }),
        Command::Link {
            objects,
            out,
            target,
            icf,
            strip,
        } => actions::link(&objects, &out, target, icf, strip),
        Command::Ninja {
            files,
            out,
            flags,
            two_rounds,
            icf,
            strip,
            exe,
            parec,
        } => parec::ninja::generate(&parec::ninja::NinjaOptions {
            files,
            out,
            flags: flags.flags(two_rounds),
            icf,
            strip,
            exe,
            parec,
        }),
        Command::Cgdata {
            command: CgdataCommand::Show { file },
        } => parec::cgdata_cmd::show(&file),
        Command::Fuzz { args } => tools::forward("fuzz", &args),
        Command::Opt {
            file,
            passes,
            target,
            run,
            stats,
        } => commands::opt(&file, passes.as_deref(), target, run, stats),
        Command::Bench { args } => tools::forward("bench", &args),
    };
    match result {
        Ok(status) => (status & 0xff) as u8,
        Err(Failure::Reported) => 1,
        Err(Failure::Error(e)) => {
            io_error::eprintln(format_args!("error: {e:#}"));
            1
        }
    }
}
