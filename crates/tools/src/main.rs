//! `parec-tools`: the differential tester and the benchmarks on the command
//! line, and the commands the tester runs programs with: `exec-*` (one
//! program; what reproducers name) and `worker` (serves `exec-*` commands,
//! many programs per process; see `parec_tools::difftest::worker`).
//!
//! Exit statuses as `parec`'s: 0 on success, 1 on any error or failed
//! check, 2 on bad flags, 70 on an internal error; `exec-*` commands exit
//! with the program's status (101 after a trap).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{anyhow, Context as _};
use clap::{Parser, Subcommand};
use parec::pipeline::{available_passes, Pass};
use parec::runtime::RuntimeChoice;
use parec::Failure;
use parec_tools::bench::{self, BenchOptions};
use parec_tools::difftest::commands::{self, ExecCommand, Session, ICE_STATUS};
use parec_tools::difftest::{check_tools, worker, Executor, PassConfig, Runner};

/// Counts heap bytes for `bench --scaling`'s peak-memory column
/// (`parec_tools::heap`).
#[global_allocator]
static ALLOCATOR: parec_tools::heap::CountingAlloc = parec_tools::heap::CountingAlloc;

#[derive(Parser)]
#[command(
    name = "parec-tools",
    version,
    about = "parec's test tooling: differential testing and benchmarks"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Differential testing: generated programs must behave the same in the
    /// interpreter, the JIT and under qemu, under every pass configuration.
    Fuzz {
        /// First generator seed.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Number of programs (seeds SEED..SEED+COUNT).
        #[arg(long, default_value_t = 100)]
        count: u64,
        /// Executors compared with the interpreter: interp, jit, aot.
        #[arg(long, default_value = "interp,jit,aot")]
        executors: String,
        /// Pass configurations: all (O2, each pass alone, Oz, Oz-profile),
        /// O0, O2, Oz, Oz-profile (-Oz with the program's own profile), or
        /// pass names (including the planted miscompile, for testing).
        #[arg(long, default_value = "all")]
        configs: String,
        /// Directory for reproducers of failing programs.
        #[arg(long, default_value = "fuzz-out")]
        out: PathBuf,
        /// Time limit of each compile and run, in seconds.
        #[arg(long, default_value_t = 10)]
        timeout: u64,
        /// Skip the CLIF-level verifier and interpreter checks.
        #[arg(long)]
        no_clif: bool,
        /// Save failing programs without reducing them.
        #[arg(long)]
        no_shrink: bool,
        /// Also check N ill-typed programs (seeds SEED..SEED+N; each a
        /// generated program with one mutation breaking a rule of
        /// LANGUAGE.md): the checker must reject each with a located error
        /// and never panic. `--count 0 --negative N` runs only those.
        #[arg(long, default_value_t = 0, value_name = "N")]
        negative: u64,
        /// Probability that a potentially trapping site of a generated
        /// program is written to trap (default: the generator's, 0.002).
        /// Higher values test trap ordering (an out-of-bounds place before
        /// the call in its operand, a stack overflow) at the cost of
        /// programs that end early.
        #[arg(long, value_name = "P")]
        trap_probability: Option<f64>,
        /// Programs checked at once, each with a worker process that runs
        /// its JIT runs and AOT builds (default: one per core).
        #[arg(short = 'j', long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
        jobs: Option<u64>,
        /// Run the aot executor only for the programs whose seed is a
        /// multiple of K (seeds 0, K, 2K, ...; a build and a qemu run per
        /// configuration cost about 1.5 JIT runs); 1 runs it for every
        /// program.
        #[arg(long, value_name = "K", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
        aot_every: u64,
        /// Check each program in N of the configurations with each of the
        /// JIT and AOT, chosen in turn by seed (program s: configurations
        /// s·N to s·N + N − 1, modulo their number), so every configuration
        /// checks N in C of the programs, C the number of configurations
        /// the executor tells apart (the JIT runs no machine passes: it
        /// leaves out those that would compile alike). Default: all of them
        /// for every program
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
        configs_per_program: Option<u64>,
        /// With --configs-per-program: configurations (comma-separated)
        /// the aot executor checks every program in besides its sampled
        /// ones (CI's campaign: O2,Oz)
        #[arg(long, value_name = "CONFIGS", default_value = "")]
        aot_always: String,
        /// What the aot executor's runtime stands on (`parec build
        /// --runtime`): `auto` (freestanding unless the program declares an
        /// `extern fn`), `freestanding` or `libc`.
        #[arg(long, default_value = "auto", value_parser = parse_runtime)]
        runtime: RuntimeChoice,
    },
    /// Measure code size, compile time and run time of the benchmark corpus
    /// under -O2, -Os, each pass alone, -Oz and clang-19 -Oz (prints markdown tables).
    Bench {
        /// Also write the results as JSON to this file.
        #[arg(long)]
        json: Option<PathBuf>,
        /// One compilation and one run per measurement (default: median of 5).
        #[arg(long)]
        quick: bool,
        /// Only programs whose name contains NAME (repeatable, or comma-separated).
        #[arg(long, value_name = "NAME", value_delimiter = ',')]
        filter: Vec<String>,
        /// The corpus directory (NAME/main.pare, NAME/NAME.c, NAME/expected.out).
        #[arg(long, default_value = "bench")]
        dir: PathBuf,
        /// Instead: time the frontend, each pass and Cranelift on synthetic
        /// modules of growing size, per function.
        #[arg(long, conflicts_with_all = ["json", "filter", "quick"])]
        scaling: bool,
        /// Function counts of the --scaling modules.
        #[arg(long, value_delimiter = ',', default_values_t = bench::scaling::DEFAULT_SIZES.to_vec(), requires = "scaling")]
        sizes: Vec<usize>,
        /// Function counts of the --scaling table of similar-function
        /// merging's candidate search, which needs no frontend (default:
        /// the --sizes; the F3M comparison uses 1000,10000,100000).
        #[arg(long, value_delimiter = ',', requires = "scaling")]
        search_sizes: Option<Vec<usize>>,
        /// Also measure -Oz and -Oz --two-rounds without PASS (repeatable,
        /// or comma-separated): what the pass adds to the whole pipeline.
        #[arg(long, value_name = "PASS", value_delimiter = ',', value_parser = parse_pass, conflicts_with = "scaling")]
        without: Vec<Pass>,
        /// Only the configurations named (comma-separated, as in the
        /// table's header: `-Os`, `-Oz 2 rounds profile`, ...) and the
        /// baselines every ratio needs, `Cranelift`, `-O2`, `-Oz 2 rounds`
        /// and the C twins.
        #[arg(
            long,
            value_name = "NAME",
            value_delimiter = ',',
            allow_hyphen_values = true,
            conflicts_with = "scaling"
        )]
        configs: Vec<String>,
        /// Sizes and compile times only: do not run the programs.
        #[arg(long, conflicts_with = "scaling")]
        compile_only: bool,
    },
    #[command(flatten)]
    Exec(ExecCommand),
    /// (For the differential tester.) Runs `exec-*` commands sent on stdin
    /// (a socket), one after another, in this process (see
    /// `parec_tools::difftest::worker`).
    #[command(hide = true)]
    Worker,
}

/// The options of `fuzz`.
struct FuzzOptions {
    seed: u64,
    count: u64,
    executors: String,
    configs: String,
    out: PathBuf,
    timeout_secs: u64,
    clif_checks: bool,
    shrink: bool,
    negative: u64,
    trap_probability: Option<f64>,
    jobs: Option<u64>,
    aot_every: u64,
    configs_per_program: Option<u64>,
    aot_always: String,
    runtime: RuntimeChoice,
}

fn parse_runtime(name: &str) -> Result<RuntimeChoice, String> {
    name.parse()
}

/// A pass of `--without`, by name.
fn parse_pass(name: &str) -> Result<Pass, String> {
    Pass::from_name(name)
        .ok_or_else(|| format!("unknown pass `{name}`; available: {}", available_passes()))
}

/// Runs before the Rust runtime starts: a closed standard stream stays
/// one that fails (`parec::io_error`), as in `parec`.
#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array"]
static OCCUPY_CLOSED_STREAMS: extern "C" fn() = occupy_closed_streams;

extern "C" fn occupy_closed_streams() {
    parec::io_error::occupy_closed_streams();
}

fn main() -> ExitCode {
    let status = match Cli::try_parse() {
        Ok(cli) => match std::panic::catch_unwind(|| execute(cli)) {
            Ok(status) => status,
            Err(_) => {
                commands::report_internal_error();
                ICE_STATUS
            }
        },
        Err(e) => parec::io_error::report_clap(&e),
    };
    ExitCode::from(parec::io_error::exit_status(status))
}

fn execute(cli: Cli) -> u8 {
    let result = match cli.command {
        Command::Fuzz {
            seed,
            count,
            executors,
            configs,
            out,
            timeout,
            no_clif,
            no_shrink,
            negative,
            trap_probability,
            jobs,
            aot_every,
            configs_per_program,
            aot_always,
            runtime,
        } => fuzz(&FuzzOptions {
            seed,
            count,
            executors,
            configs,
            out,
            timeout_secs: timeout,
            clif_checks: !no_clif,
            shrink: !no_shrink,
            negative,
            trap_probability,
            jobs,
            aot_every,
            configs_per_program,
            aot_always,
            runtime,
        }),
        Command::Bench {
            json,
            quick,
            filter,
            dir,
            scaling,
            sizes,
            search_sizes,
            without,
            configs,
            compile_only,
        } => {
            if scaling {
                let search_sizes = search_sizes.unwrap_or_else(|| sizes.clone());
                bench::scaling::scaling(&sizes, &search_sizes)
            } else {
                bench::bench(&BenchOptions {
                    dir,
                    quick,
                    filter,
                    json,
                    without,
                    configs,
                    compile_only,
                })
            }
        }
        Command::Exec(command) => commands::run(&command, &mut Session::default()),
        Command::Worker => worker::serve().map(|()| 0).map_err(Failure::Error),
    };
    commands::exit_status(result)
}

/// `fuzz`: a differential-testing campaign; 0 if every program agreed, 1
/// (after printing the reproducer paths) otherwise.
fn fuzz(opts: &FuzzOptions) -> Result<i32, Failure> {
    let tools = std::env::current_exe().context("cannot find the parec-tools executable")?;
    let mut runner = Runner::new(tools);
    runner.executors = Executor::parse_list(&opts.executors).map_err(|e| anyhow!(e))?;
    runner.configs = PassConfig::parse_list(&opts.configs).map_err(|e| anyhow!(e))?;
    runner.timeout = std::time::Duration::from_secs(opts.timeout_secs.max(1));
    runner.clif_checks = opts.clif_checks;
    if !opts.shrink {
        runner.shrink_tests = 0;
    }
    runner.negative = opts.negative;
    if let Some(p) = opts.trap_probability {
        runner.gen.trap_probability = p.clamp(0.0, 1.0);
    }
    if let Some(jobs) = opts.jobs {
        runner.jobs = usize::try_from(jobs).unwrap_or(usize::MAX);
    }
    runner.aot_every = opts.aot_every;
    runner.runtime = opts.runtime;
    if let Some(n) = opts.configs_per_program {
        runner.configs_per_program = usize::try_from(n).unwrap_or(usize::MAX);
    }
    for name in opts
        .aot_always
        .split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
    {
        if !runner
            .configs
            .iter()
            .any(|c| c.name.split('=').any(|n| n == name))
        {
            return Err(anyhow!("--aot-always: `{name}` is not one of the configurations").into());
        }
        runner.aot_always.push(name.to_string());
    }
    check_tools(&runner)?;
    let configs: Vec<&str> = runner.configs.iter().map(|c| c.name.as_str()).collect();
    let sampled = match runner.samples_configs() {
        true => format!(
            " ({} per program, in turn{})",
            runner.configs_per_program,
            match runner.aot_always.is_empty() {
                true => String::new(),
                false => format!("; aot also {} for all", runner.aot_always.join(", ")),
            }
        ),
        false => String::new(),
    };
    parec::io_error::eprintln(format_args!(
        "fuzz: seeds {}..{}, executors {}, configurations {}{sampled}, {} negative programs",
        opts.seed,
        opts.seed.saturating_add(opts.count),
        opts.executors,
        configs.join(", "),
        opts.negative
    ));
    let report = runner.campaign(opts.seed, opts.count, &opts.out, true);
    parec::io_error::eprintln(format_args!("fuzz: {}", report.summary()));
    parec::io_error::eprintln(format_args!("fuzz: {}", report.rates()));
    if report.failures.is_empty() {
        Ok(0)
    } else {
        let dirs: String = report
            .reproducers
            .iter()
            .map(|dir| format!("{}\n", dir.display()))
            .collect();
        parec::io_error::write_stdout(dirs.as_bytes())?;
        Ok(1)
    }
}
