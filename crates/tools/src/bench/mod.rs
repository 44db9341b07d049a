//! `parec bench`: code size, file size, compile time and run time of the
//! benchmark corpus under every parec configuration and under `clang-19
//! -Oz`, against glibc and against musl.
//!
//! For each program `bench/NAME/main.pare` (with its C twin `NAME.c` and
//! `expected.out`) and each [`Config`] — `Cranelift` (Cranelift alone at
//! `-O2`, no parec pass: the baseline), `-O2` (with parec's speed inlining),
//! `-Os` (the default level), each pass of [`Pass::ALL`] alone, `-Oz` (all
//! passes, each module on its own), `-Oz 2 rounds` (`--two-rounds`: merging
//! and outlining with the summaries of every module), `-Oz lto` and `-Oz 2
//! rounds lto` (the same with the whole program as one unit, `--lto`),
//! `-Oz 2 rounds profile` (`--two-rounds --profile-use` with a profile of
//! the program's own run, made by `parec run --profile-generate`), `-Os
//! profile` (`--profile-use`, one round), for each pass named by `--without`
//! both of these without it (`-Oz -PASS`, `-Oz 2 rounds -PASS`: what the
//! pass adds to the whole pipeline), and `clang -Oz` — the program is
//! compiled through [`Build::run`] like `parec build`, linked statically with
//! `ld.lld-19 --icf=all` exactly like `parec build`
//! ([`link::link_executable`]), and run under `qemu-aarch64-static`; its
//! stdout must equal `expected.out`. The last configuration, `clang -Oz
//! musl`, is the C twin as a C programmer builds a small static executable:
//! clang `-Oz` against musl, stripped, unused sections collected, compiled
//! and linked by `zig cc` ([`musl`]); it is run and checked alike.
//!
//! Measurements:
//! - **bytes**: the program's own code: the linked executable's `.text`
//!   size without its runtime code, minus the same of an empty program
//!   (`fn main() {}` / `int main(void){return 0;}`) built with the same
//!   configuration, so that neither the static libc nor parec's runtime
//!   swamps the figure. The runtime code is what `parec size` attributes
//!   to the kind `runtime` ([`parec::size::Kind::Runtime`]: the `pare_*`
//!   functions and, in a freestanding executable, `_start` and the C
//!   functions the runtime defines), each block counted once, a block ICF
//!   folded with the program's code left to the program. A Pare program
//!   reaches more of its runtime than the empty one (printing, allocation,
//!   strings), as a C program reaches more of libc, which clang's figure
//!   does not count either; so both figures are the code the compiler
//!   wrote for the program. The runtime code is reported apart, per
//!   executable (the runtime table). Section sizes are read with the
//!   `object` crate. The libc code linked after the program's is 64-byte
//!   aligned, so the C twins' difference moves in steps of 64 bytes: a
//!   change smaller than that may not show. The ratios' anchor is `clang
//!   -Oz` (glibc). The musl twins have none ([`Config::code_bytes_measured`]).
//! - **runtime bytes**: the runtime code of each Pare executable (above),
//!   the empty program's included: what `--runtime freestanding` links.
//! - **file bytes**: the linked executable's size, the size of a copy
//!   stripped by [`STRIP`] (symbols and debug sections dropped: the size
//!   `ld.lld -s` writes, measured equal on bench/'s executables), and that
//!   over the `clang -Oz musl` twin's (built stripped), per program, as a
//!   geometric mean and as the largest.
//! - **compile**: the median wall time of [`Runs::compile`] compilations.
//!   Pare configurations compile in-process through the library (load,
//!   check, lower, CLIF passes, Cranelift, object writing; one thread), so
//!   no process start is included; C is compiled by spawning `clang-19 -c`,
//!   which includes clang's process start. Linking is never included. The
//!   musl twins have none: `zig cc` compiles and links in one process,
//!   from its cache.
//! - **run**: the median CPU time (user + system) of [`Runs::run`] runs of
//!   `qemu-aarch64-static` (emulation and process start included, identical
//!   for every configuration), read from the kernel's accounting of the
//!   finished child (`getrusage(RUSAGE_CHILDREN)`). CPU time, unlike wall
//!   time, does not count the time the process waited for a core, so it
//!   moves little when the machine is busy. A program's configurations
//!   run round-robin ([`run_interleaved`]: each once, then each again), so
//!   a slow spell of the machine lands on all of them alike; the table's
//!   note gives the spread of the runs (`(max − min) / median` per cell;
//!   the JSON has every sample). Counting executed instructions would be
//!   steadier still, but cannot be done here at a usable cost: the
//!   container exposes no `perf` counters (`perf stat -e instructions:u`:
//!   "not supported"), the static qemu 7.2 has no plugin support, and
//!   counting translated blocks from qemu's `-d exec,nochain` log takes
//!   400 times as long (50 s and 74 million block executions for `sorts`
//!   at `-O2`, against 0.12 s).
//!
//! - **targets**: per configuration, the share of `-Oz 2 rounds`' byte
//!   reduction from `Cranelift` it keeps (geometric means of bytes), its
//!   run time over `-O2`'s per program (geometric mean, the slowest, those
//!   beyond 1.05× and 1.10×) and its compile time over `-O2`'s (geometric
//!   mean of the per-program ratios): what the size levels are held to
//!   (docs/DESIGN.md, "Hot code").
//!
//! Invariants: programs are in name order and configurations in
//! [`configs`] order, so the table and the JSON are deterministic apart from
//! the times. A failure (compile, link, run or output mismatch) is recorded
//! in its cell, reported after the table, and makes the command exit 1; the
//! other cells are still measured. Geometric means are over the programs
//! whose every configuration succeeded.
//!
//! [`roles`] adds the table of the own code by instruction role, parec
//! beside clang. [`scaling`] (`--scaling`) measures how compile phases grow
//! with module size.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context as _, Result};
use object::{Object as _, ObjectSection as _};
use serde_json::{json, Value};

use parec::build::{Backend, Build, BuildMode, Input, Units};
use parec::codegen::CodeModel;
use parec::io_error::reason as io_reason;
use parec::link::{self, Icf};
use parec::pipeline::{Pass, Pipeline};
use parec::profile::{MismatchPolicy, ProfileUse};
use parec::runtime::RuntimeChoice;
use parec::target::{OptLevel, Target};
use parec::Failure;
use parec_passes::profile::ProfileMode;

pub mod musl;
pub mod roles;
pub mod scaling;

/// The C compiler of the twins.
pub const CLANG: &str = "clang-19";

/// The object file of a C twin, in its cell's directory.
const TWIN_OBJECT: &str = "twin.o";

/// Flags of the C twins' compilation (besides `-c`, input and output).
pub const CLANG_FLAGS: &[&str] = &[
    "--target=aarch64-linux-gnu",
    "-Oz",
    "-ffunction-sections",
    "-fno-asynchronous-unwind-tables",
    "--sysroot=/usr/aarch64-linux-gnu",
    "-isystem",
    "/usr/aarch64-linux-gnu/include",
];

/// The tool that strips a copy of each executable for its stripped file
/// bytes.
pub const STRIP: &str = "llvm-strip-19";

/// Its flags: symbols and debug sections dropped, other sections kept —
/// what `ld.lld -s` (and so `zig cc -s`, the musl twins' flag) writes,
/// byte for byte in size.
pub const STRIP_FLAGS: &[&str] = &["--strip-all-gnu"];

/// The names of the two C configurations.
pub const CLANG_NAME: &str = "clang -Oz";
pub const MUSL_NAME: &str = "clang -Oz musl";

/// The empty programs whose `.text` is subtracted.
const EMPTY_PARE: &str = "fn main() {}\n";
const EMPTY_C: &str = "int main(void) { return 0; }\n";

/// Options of `parec bench`.
#[derive(Clone, Debug)]
pub struct BenchOptions {
    /// The corpus directory (holding `NAME/main.pare`).
    pub dir: PathBuf,
    /// One compilation and one run per measurement.
    pub quick: bool,
    /// Program-name substrings; empty selects every program.
    pub filter: Vec<String>,
    /// Where to write the JSON report, if anywhere.
    pub json: Option<PathBuf>,
    /// Passes whose contribution to `-Oz` is measured: `-Oz` and `-Oz 2
    /// rounds` without each of them.
    pub without: Vec<Pass>,
    /// Configuration names to measure (empty: all of them).
    pub configs: Vec<String>,
    /// Sizes and compile times only: the programs are not run.
    pub compile_only: bool,
}

/// How many times each measurement is repeated (the median is reported).
#[derive(Clone, Copy, Debug)]
pub struct Runs {
    pub compile: usize,
    pub run: usize,
}

impl Runs {
    fn for_options(quick: bool, compile_only: bool) -> Runs {
        let n = if quick { 1 } else { 5 };
        Runs {
            compile: n,
            run: if compile_only { 0 } else { n },
        }
    }
}

/// One way of building a program.
#[derive(Clone, Debug)]
pub enum Config {
    /// parec with this pipeline (Cranelift `opt_level` of `level`).
    Pare {
        name: String,
        level: OptLevel,
        pipeline: Pipeline,
        /// Build in two rounds (`--two-rounds`).
        two_rounds: bool,
        /// Per module, or the whole program as one unit (`--lto`).
        units: Units,
        /// Built with `--profile-use`, from a profile of the program's own
        /// run (`parec run --profile-generate`; its input is fixed).
        profile: bool,
    },
    /// The C twin with `clang-19 -Oz`, linked by parec's linker against
    /// glibc: the anchor of the code bytes.
    Clang,
    /// The C twin with clang `-Oz` against musl, static, stripped, unused
    /// sections collected ([`musl`]): the anchor of the file bytes.
    Musl,
}

impl Config {
    pub fn name(&self) -> &str {
        match self {
            Config::Pare { name, .. } => name,
            Config::Clang => CLANG_NAME,
            Config::Musl => MUSL_NAME,
        }
    }

    /// Whether its compile time is measured: the musl twins are compiled
    /// and linked by one process (and zig caches what it compiled), so they
    /// have none.
    fn compile_is_timed(&self) -> bool {
        !matches!(self, Config::Musl)
    }

    /// Whether its code bytes (`.text` beyond the empty program's) are
    /// measured. Not for the musl twins: with `--gc-sections` the empty
    /// program keeps almost none of musl, so the difference would count the
    /// C library's stdio and allocator with the program's code, unlike every
    /// other configuration's (whose empty program links them already).
    fn code_bytes_measured(&self) -> bool {
        !matches!(self, Config::Musl)
    }

    /// The C configurations: the twins, not parec.
    fn is_c(&self) -> bool {
        matches!(self, Config::Clang | Config::Musl)
    }
}

/// Index of the `Cranelift` baseline in [`configs`].
const BASELINE: usize = 0;

/// The configuration run times and compile times are compared with.
const SPEED_BASELINE: &str = "-O2";

/// The configuration whose byte reduction (from `Cranelift`) the others'
/// is a share of: the smallest parec builds.
const SIZE_BASELINE: &str = "-Oz 2 rounds";

/// The configurations, in column order: `Cranelift`, `-O2`, each pass
/// alone, `-Oz` per module and whole-program, each in one and two rounds,
/// the per-module two without each pass of `without`, clang, clang + musl.
pub fn configs(without: &[Pass]) -> Vec<Config> {
    let mut out = vec![
        Config::Pare {
            name: "Cranelift".into(),
            level: OptLevel::O2,
            pipeline: Pipeline::empty(),
            two_rounds: false,
            units: Units::PerModule,
            profile: false,
        },
        Config::Pare {
            name: "-O2".into(),
            level: OptLevel::O2,
            pipeline: Pipeline::for_level(OptLevel::O2),
            two_rounds: false,
            units: Units::PerModule,
            profile: false,
        },
        Config::Pare {
            name: "-Os".into(),
            level: OptLevel::Os,
            pipeline: Pipeline::for_level(OptLevel::Os),
            two_rounds: false,
            units: Units::PerModule,
            profile: false,
        },
    ];
    for &pass in Pass::ALL {
        let pipeline = Pipeline::from_passes(&[pass]);
        out.push(Config::Pare {
            name: pass.name().into(),
            level: OptLevel::Oz,
            pipeline,
            two_rounds: false,
            units: Units::PerModule,
            profile: false,
        });
    }
    for (name, two_rounds, units) in [
        ("-Oz", false, Units::PerModule),
        ("-Oz 2 rounds", true, Units::PerModule),
        ("-Oz lto", false, Units::WholeProgram),
        ("-Oz 2 rounds lto", true, Units::WholeProgram),
    ] {
        out.push(Config::Pare {
            name: name.into(),
            level: OptLevel::Oz,
            pipeline: Pipeline::for_level(OptLevel::Oz),
            two_rounds,
            units,
            profile: false,
        });
    }
    out.push(Config::Pare {
        name: "-Oz 2 rounds profile".into(),
        level: OptLevel::Oz,
        pipeline: Pipeline::for_level(OptLevel::Oz),
        two_rounds: true,
        units: Units::PerModule,
        profile: true,
    });
    out.push(Config::Pare {
        name: "-Os profile".into(),
        level: OptLevel::Os,
        pipeline: Pipeline::for_level(OptLevel::Os),
        two_rounds: false,
        units: Units::PerModule,
        profile: true,
    });
    for &left_out in without {
        let passes: Vec<Pass> = Pass::ALL
            .iter()
            .copied()
            .filter(|&p| p != left_out)
            .collect();
        for (name, two_rounds) in [("-Oz", false), ("-Oz 2 rounds", true)] {
            out.push(Config::Pare {
                name: format!("{name} -{}", left_out.name()),
                level: OptLevel::Oz,
                pipeline: Pipeline::from_passes(&passes),
                two_rounds,
                units: Units::PerModule,
                profile: false,
            });
        }
    }
    out.push(Config::Clang);
    out.push(Config::Musl);
    out
}

/// A benchmark program of the corpus.
#[derive(Clone, Debug)]
pub struct Program {
    pub name: String,
    pub main: PathBuf,
    pub c_twin: PathBuf,
    pub expected: PathBuf,
}

/// Every file of the programs' directories (sources, C twins, expected
/// outputs).
fn corpus_files(programs: &[Program]) -> Vec<PathBuf> {
    let dirs: std::collections::BTreeSet<&Path> =
        programs.iter().filter_map(|p| p.main.parent()).collect();
    dirs.into_iter()
        .filter_map(|dir| std::fs::read_dir(dir).ok())
        .flatten()
        .filter_map(|entry| Some(entry.ok()?.path()))
        .collect()
}

/// The corpus programs in `dir` selected by `filter`, in name order.
pub fn discover(dir: &Path, filter: &[String]) -> Result<Vec<Program>> {
    let entries = std::fs::read_dir(dir).map_err(|e| {
        anyhow!(
            "cannot read the benchmark directory `{}`: {} (use --dir)",
            dir.display(),
            io_reason(&e)
        )
    })?;
    let mut programs = Vec::new();
    for entry in entries {
        let path = entry
            .map_err(|e| anyhow!("cannot read `{}`: {}", dir.display(), io_reason(&e)))?
            .path();
        let main = path.join("main.pare");
        if !main.is_file() {
            continue;
        }
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if !filter.is_empty() && !filter.iter().any(|f| name.contains(f.as_str())) {
            continue;
        }
        programs.push(Program {
            name: name.to_string(),
            c_twin: path.join(format!("{name}.c")),
            expected: path.join("expected.out"),
            main,
        });
    }
    programs.sort_by(|a, b| a.name.cmp(&b.name));
    if programs.is_empty() {
        bail!(
            "no benchmark program in `{}` matches the filter",
            dir.display()
        );
    }
    Ok(programs)
}

/// The measurements of one program under one configuration.
#[derive(Clone, Debug, Default)]
pub struct Cell {
    /// The program's own code: `.text` bytes without the runtime's, beyond
    /// the empty program's (module doc).
    pub bytes: Option<i64>,
    /// The runtime code of the executable (`parec size`'s kind `runtime`;
    /// none for the C configurations).
    pub runtime_bytes: Option<u64>,
    /// The executable's size.
    pub file_bytes: Option<u64>,
    /// The size of a stripped copy ([`STRIP`]; the musl twins are built
    /// stripped).
    pub stripped_bytes: Option<u64>,
    pub compile: Option<Duration>,
    /// Where the median compile's time went, stage by stage (parec's
    /// `StageTimes`; empty for clang).
    pub stages: Vec<(String, Duration)>,
    pub run: Option<Duration>,
    /// Every run's CPU time, in the order run (the median is [`Cell::run`]).
    pub run_samples: Vec<Duration>,
    /// The program's own code by instruction role ([`roles`]).
    pub roles: Option<parec_passes::machine::roles::RoleBytes>,
    pub error: Option<String>,
}

impl Cell {
    /// `(max − min) / median` of the run samples: how far apart the runs
    /// of this cell were (0 for a single run).
    pub fn run_spread(&self) -> Option<f64> {
        let run = self.run?.as_secs_f64();
        let max = self.run_samples.iter().max()?.as_secs_f64();
        let min = self.run_samples.iter().min()?.as_secs_f64();
        (run > 0.0).then(|| (max - min) / run)
    }
}

/// The results of a whole benchmark run.
#[derive(Clone, Debug)]
pub struct Report {
    pub configs: Vec<String>,
    pub programs: Vec<String>,
    /// `cells[program][config]`.
    pub cells: Vec<Vec<Cell>>,
    pub runs: Runs,
    /// How the musl twins were built ([`musl::command_line`]), if they were.
    pub musl: Option<String>,
    /// The runtime code of each configuration's empty program (none for
    /// the C configurations): what its own-code bytes leave out of the
    /// empty program's.
    pub empty_runtime: Vec<Option<u64>>,
}

/// `parec bench`: measures, prints the table, writes the JSON; returns 0, or
/// 1 if any cell failed.
pub fn bench(opts: &BenchOptions) -> Result<i32, Failure> {
    let programs = discover(&opts.dir, &opts.filter)?;
    if let Some(path) = &opts.json {
        // The report may not replace a file of the corpus.
        let mut outputs = parec::outputs::Outputs::default();
        outputs.file(path, "--json");
        outputs.check(&corpus_files(&programs))?;
    }
    let report = measure(
        &programs,
        &select_configs(configs(&opts.without), &opts.configs)?,
        Runs::for_options(opts.quick, opts.compile_only),
    )?;
    parec::io_error::write_stdout(markdown(&report).as_bytes())?;
    if let Some(path) = &opts.json {
        let text = serde_json::to_string_pretty(&to_json(&report))
            .map_err(|e| anyhow!("cannot serialize the report: {e}"))?;
        std::fs::write(path, text + "\n")
            .map_err(|e| anyhow!("cannot write `{}`: {}", path.display(), io_reason(&e)))?;
    }
    let mut failed = false;
    for (p, row) in report.cells.iter().enumerate() {
        for (c, cell) in row.iter().enumerate() {
            if let Some(error) = &cell.error {
                parec::io_error::eprintln(format_args!(
                    "error: {} ({}): {error}",
                    report.programs[p], report.configs[c]
                ));
                failed = true;
            }
        }
    }
    Ok(i32::from(failed))
}

/// The configurations of `all` named in `names`, in `all`'s order (every
/// one when `names` is empty), with the baselines every ratio needs
/// (`Cranelift` first, `-O2`, `-Oz 2 rounds`, the C twins last); an
/// unknown name is an error listing them.
fn select_configs(all: Vec<Config>, names: &[String]) -> Result<Vec<Config>> {
    if let Some(unknown) = names.iter().find(|n| !all.iter().any(|c| c.name() == *n)) {
        let known: Vec<&str> = all.iter().map(Config::name).collect();
        bail!(
            "unknown configuration `{unknown}`; the configurations are: {}",
            known.join(", ")
        );
    }
    Ok(all
        .into_iter()
        .enumerate()
        .filter(|(i, c)| {
            names.is_empty()
                || *i == BASELINE
                || c.is_c()
                || [SPEED_BASELINE, SIZE_BASELINE].contains(&c.name())
                || names.iter().any(|n| n == c.name())
        })
        .map(|(_, c)| c)
        .collect())
}

/// Measures every program under every configuration.
pub fn measure(programs: &[Program], configs: &[Config], runs: Runs) -> Result<Report> {
    let work = tempfile::Builder::new()
        .prefix("parec-bench-")
        .tempdir()
        .map_err(|e| anyhow!("cannot create a temporary directory: {e}"))?;
    let musl = if configs.iter().any(|c| matches!(c, Config::Musl)) {
        Some(musl::Toolchain::find()?)
    } else {
        None
    };
    let tools = Tools {
        musl: musl.as_ref(),
    };
    // The empty program's own code per configuration; a failure here is
    // fatal since no figure of that configuration would mean anything.
    let mut empty_text = Vec::new();
    let mut empty_runtime = Vec::new();
    for (c, config) in configs.iter().enumerate() {
        if !config.code_bytes_measured() {
            empty_text.push(0);
            empty_runtime.push(None);
            continue;
        }
        let dir = work.path().join(format!("empty-{c}"));
        create_dir(&dir)?;
        let (source, text) = match config {
            Config::Pare { .. } => (dir.join("main.pare"), EMPTY_PARE),
            Config::Clang | Config::Musl => (dir.join("empty.c"), EMPTY_C),
        };
        std::fs::write(&source, text)
            .map_err(|e| anyhow!("cannot write `{}`: {}", source.display(), io_reason(&e)))?;
        let exe = dir.join("empty");
        build(config, &tools, &source, &dir, &exe)
            .with_context(|| format!("building the empty program ({})", config.name()))?;
        let code = CodeBytes::of(&exe, config)?;
        empty_text.push(code.own());
        empty_runtime.push((!config.is_c()).then_some(code.runtime));
    }

    let mut cells = Vec::new();
    for (p, program) in programs.iter().enumerate() {
        let mut row = Vec::new();
        let mut exes = Vec::new();
        for (c, config) in configs.iter().enumerate() {
            let dir = work.path().join(format!("{p}-{c}"));
            create_dir(&dir)?;
            let (cell, exe) = build_cell(program, config, &tools, &dir, empty_text[c], runs);
            row.push(cell);
            exes.push(exe);
        }
        if runs.run > 0 {
            run_interleaved(program, &mut row, &exes, runs.run);
        }
        cells.push(row);
    }
    Ok(Report {
        configs: configs.iter().map(|c| c.name().to_string()).collect(),
        programs: programs.iter().map(|p| p.name.clone()).collect(),
        cells,
        runs,
        musl: musl.map(|_| musl::command_line()),
        empty_runtime,
    })
}

/// The toolchains a build may need besides parec's linker.
#[derive(Clone, Copy)]
struct Tools<'a> {
    /// Found when a configuration is [`Config::Musl`].
    musl: Option<&'a musl::Toolchain>,
}

fn create_dir(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir)
        .map_err(|e| anyhow!("cannot create `{}`: {}", dir.display(), io_reason(&e)))
}

/// Builds and sizes one program under one configuration; any failure is
/// recorded in the cell. Returns the executable to run, if there is one.
fn build_cell(
    program: &Program,
    config: &Config,
    tools: &Tools,
    dir: &Path,
    empty: u64,
    runs: Runs,
) -> (Cell, Option<PathBuf>) {
    let mut cell = Cell::default();
    match fill_cell(&mut cell, program, config, tools, dir, empty, runs) {
        Ok(exe) => (cell, Some(exe)),
        Err(e) => {
            cell.error = Some(format!("{e:#}"));
            (cell, None)
        }
    }
}

fn fill_cell(
    cell: &mut Cell,
    program: &Program,
    config: &Config,
    tools: &Tools,
    dir: &Path,
    empty: u64,
    runs: Runs,
) -> Result<PathBuf> {
    let source = match config {
        Config::Pare { .. } => &program.main,
        Config::Clang | Config::Musl => &program.c_twin,
    };
    let exe = dir.join(&program.name);
    let builds = if config.compile_is_timed() {
        runs.compile.max(1)
    } else {
        1
    };
    let mut compiles = Vec::new();
    for _ in 0..builds {
        compiles.push(build(config, tools, source, dir, &exe)?);
    }
    compiles.sort_by_key(|c| c.time);
    let median_compile = compiles.swap_remove(compiles.len() / 2);
    cell.compile = config.compile_is_timed().then_some(median_compile.time);
    cell.stages = median_compile.stages;
    if config.code_bytes_measured() {
        let code = CodeBytes::of(&exe, config)?;
        cell.bytes = Some(code.own() as i64 - empty as i64);
        if matches!(config, Config::Pare { .. }) {
            cell.runtime_bytes = Some(code.runtime);
        }
    }
    cell.roles = roles::of_cell(config, dir, &exe)?;
    cell.file_bytes = Some(file_size(&exe)?);
    cell.stripped_bytes = Some(match config {
        Config::Musl => file_size(&exe)?,
        Config::Pare { .. } | Config::Clang => {
            let copy = dir.join(format!("{}.stripped", program.name));
            strip(&exe, &copy)?;
            file_size(&copy)?
        }
    });
    Ok(exe)
}

/// Writes a stripped copy of `exe` to `copy` ([`STRIP`]).
fn strip(exe: &Path, copy: &Path) -> Result<()> {
    let output = Command::new(STRIP)
        .args(STRIP_FLAGS)
        .arg("-o")
        .arg(copy)
        .arg(exe)
        .output()
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                anyhow!("{STRIP} not found: run scripts/test.sh or apt-get install llvm-19")
            } else {
                anyhow!("cannot run {STRIP}: {e}")
            }
        })?;
    if !output.status.success() {
        bail!(
            "{STRIP} failed on `{}`:\n{}",
            exe.display(),
            String::from_utf8_lossy(&output.stderr).trim_end()
        );
    }
    Ok(())
}

/// The size of a file.
fn file_size(path: &Path) -> Result<u64> {
    std::fs::metadata(path)
        .map(|m| m.len())
        .map_err(|e| anyhow!("cannot read `{}`: {}", path.display(), io_reason(&e)))
}

/// Runs the executables of one program's configurations `runs` times each,
/// round-robin — every configuration once, then again — so that a slow
/// spell of the machine lands on every configuration alike instead of on
/// the one that happened to be running; records each cell's samples and
/// their median. A failing run (or wrong output) is recorded in its cell.
fn run_interleaved(program: &Program, row: &mut [Cell], exes: &[Option<PathBuf>], runs: usize) {
    let expected = match std::fs::read(&program.expected) {
        Ok(bytes) => bytes,
        Err(e) => {
            let error = format!(
                "cannot read `{}`: {}",
                program.expected.display(),
                io_reason(&e)
            );
            for cell in row.iter_mut().filter(|c| c.error.is_none()) {
                cell.error = Some(error.clone());
            }
            return;
        }
    };
    for _ in 0..runs.max(1) {
        for (cell, exe) in row.iter_mut().zip(exes) {
            let Some(exe) = exe.as_ref().filter(|_| cell.error.is_none()) else {
                continue;
            };
            match run_and_check(exe, &expected) {
                Ok(time) => cell.run_samples.push(time),
                Err(e) => cell.error = Some(format!("{e:#}")),
            }
        }
    }
    for cell in row.iter_mut().filter(|c| c.error.is_none()) {
        cell.run = Some(median(cell.run_samples.clone()));
    }
}

/// One compilation's time (linking excluded) and, for parec, its stages.
struct Compile {
    time: Duration,
    stages: Vec<(String, Duration)>,
}

/// Compiles `source` under `config` and links `exe`.
fn build(config: &Config, tools: &Tools, source: &Path, dir: &Path, exe: &Path) -> Result<Compile> {
    let (objects, compile) = match config {
        Config::Pare {
            level,
            pipeline,
            two_rounds,
            units,
            profile,
            ..
        } => {
            let mut pipeline = pipeline.clone();
            if *profile {
                pipeline.profile = Some(Arc::new(own_profile(source, dir)?));
            }
            compile_pare(source, *level, &pipeline, *two_rounds, *units, dir)?
        }
        Config::Clang => {
            let (objects, time) = compile_c(source, dir)?;
            let stages = Vec::new();
            (objects, Compile { time, stages })
        }
        Config::Musl => {
            let toolchain = tools
                .musl
                .ok_or_else(|| anyhow!("the clang + musl toolchain was not looked for"))?;
            let start = Instant::now();
            toolchain.build(source, exe)?;
            let time = start.elapsed();
            return Ok(Compile {
                time,
                stages: Vec::new(),
            });
        }
    };
    let options = link::LinkOptions {
        target: Target::Aarch64,
        icf: Icf::All,
        // Pare programs stand on what `--runtime auto` chooses; C twins on libc.
        runtime: link::runtime_of_objects(&objects)?,
        strip: false,
    };
    link::link_executable(&objects, exe, &options)?;
    Ok(compile)
}

/// The profile of the program rooted at `main` from its own run, made once
/// per directory by `parec run --profile-generate` (a process: the
/// program ends by calling `exit`, which would end the benchmark), in the
/// default mode (optimistic, mismatches an error).
fn own_profile(main: &Path, dir: &Path) -> Result<ProfileUse> {
    let path = dir.join("own.prof");
    if !path.exists() {
        let tools = std::env::current_exe().context("cannot find the parec-tools executable")?;
        let parec = tools.with_file_name("parec");
        let out = Command::new(&parec)
            .arg("run")
            .arg(main)
            .arg("--profile-generate")
            .arg(&path)
            .stdout(std::process::Stdio::null())
            .output()
            .map_err(|e| anyhow!("cannot run `{}`: {}", parec.display(), io_reason(&e)))?;
        if !out.status.success() {
            bail!(
                "`parec run --profile-generate` failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    ProfileUse::read(&path, ProfileMode::Optimistic, MismatchPolicy::Error)
}

/// Compiles a Pare program in-process; returns its object files, the
/// time from loading the sources to having every object in memory, and
/// that time's stages.
fn compile_pare(
    main: &Path,
    level: OptLevel,
    pipeline: &Pipeline,
    two_rounds: bool,
    units: Units,
    dir: &Path,
) -> Result<(Vec<PathBuf>, Compile)> {
    let build = Build {
        pipeline: pipeline.clone(),
        level,
        mode: if two_rounds {
            BuildMode::TwoRounds { publish: None }
        } else {
            BuildMode::Local
        },
        backend: Backend::Objects(Target::Aarch64),
        jobs: 1,
        units,
        code_model: CodeModel::default(),
        runtime: RuntimeChoice::Auto,
    };
    let start = Instant::now();
    let output = match build.run(Input::Pare(vec![main.to_path_buf()])) {
        Ok(output) => output,
        Err(Failure::Reported) => bail!("`{}` has errors (printed above)", main.display()),
        Err(Failure::Error(e)) => return Err(e),
    };
    let elapsed = start.elapsed();
    let paths = parec::commands::write_object_files(dir, &output.objects)?;
    let stages = output.times.stages;
    Ok((
        paths,
        Compile {
            time: elapsed,
            stages,
        },
    ))
}

/// Compiles a C file with `clang-19 -Oz`; returns the object and the
/// process's wall time.
fn compile_c(source: &Path, dir: &Path) -> Result<(Vec<PathBuf>, Duration)> {
    let object = dir.join(TWIN_OBJECT);
    let mut cmd = Command::new(CLANG);
    cmd.args(CLANG_FLAGS)
        .arg("-c")
        .arg(source)
        .arg("-o")
        .arg(&object);
    let start = Instant::now();
    let output = cmd.output().map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            anyhow!("{CLANG} not found: run scripts/test.sh or apt-get install clang-19")
        } else {
            anyhow!("cannot run {CLANG}: {e}")
        }
    })?;
    let elapsed = start.elapsed();
    if !output.status.success() {
        bail!(
            "{CLANG} failed on `{}`:\n{}",
            source.display(),
            String::from_utf8_lossy(&output.stderr).trim_end()
        );
    }
    Ok((vec![object], elapsed))
}

/// The code of a linked executable: its `.text` and the part of it that is
/// runtime code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CodeBytes {
    pub text: u64,
    /// The bytes `parec size` attributes to the kind `runtime` and to no
    /// other kind (a block the linker folded with the program's code is
    /// the program's too, and stays in [`CodeBytes::own`]).
    pub runtime: u64,
}

impl CodeBytes {
    /// Measures `exe`, built by `config`: only a Pare program has runtime
    /// code (a C twin's library is libc, which `.text` minus the empty
    /// program's leaves out already).
    fn of(exe: &Path, config: &Config) -> Result<CodeBytes> {
        let text = text_size(exe)?;
        if config.is_c() {
            return Ok(CodeBytes { text, runtime: 0 });
        }
        let report = parec::size::Report::of_files(&[exe.to_path_buf()])
            .with_context(|| format!("cannot attribute the code of `{}`", exe.display()))?;
        let runtime = report
            .kind(parec::size::Kind::Runtime)
            .map_or(0, |row| row.bytes - row.shared);
        Ok(CodeBytes { text, runtime })
    }

    /// `.text` without the runtime code.
    pub fn own(&self) -> u64 {
        self.text - self.runtime
    }
}

/// The size of the `.text` section of a linked executable.
pub fn text_size(exe: &Path) -> Result<u64> {
    let bytes = std::fs::read(exe)
        .map_err(|e| anyhow!("cannot read `{}`: {}", exe.display(), io_reason(&e)))?;
    let file = object::File::parse(&*bytes)
        .map_err(|e| anyhow!("cannot parse `{}`: {e}", exe.display()))?;
    let text = file
        .section_by_name(".text")
        .ok_or_else(|| anyhow!("`{}` has no .text section", exe.display()))?;
    Ok(text.size())
}

/// Runs `exe` under qemu; fails unless it exits 0 printing `expected`.
/// Returns the CPU time qemu used (see the module doc's **run**).
fn run_and_check(exe: &Path, expected: &[u8]) -> Result<Duration> {
    let mut cmd = link::run_command(exe, Target::Aarch64);
    let before = children_cpu_time();
    let output = cmd
        .output()
        .map_err(|e| anyhow!("cannot run {}: {e}", link::QEMU_AARCH64))?;
    let elapsed = children_cpu_time().saturating_sub(before);
    let status = link::exit_code(output.status);
    if status != 0 {
        bail!(
            "exited with status {status}: {}",
            String::from_utf8_lossy(&output.stderr).trim_end()
        );
    }
    if output.stdout != expected {
        bail!("stdout differs from expected.out");
    }
    Ok(elapsed)
}

/// User and system CPU time of this process's finished, waited-for
/// children so far. The benchmark runs one child at a time, so the
/// difference across one `output()` is that child's time.
fn children_cpu_time() -> Duration {
    // SAFETY: `getrusage` only writes the `rusage` it is given.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage);
        usage
    };
    let time = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    time(usage.ru_utime) + time(usage.ru_stime)
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// Geometric mean of positive values (None if any is not positive or none given).
fn geomean(values: impl IntoIterator<Item = f64>) -> Option<f64> {
    let mut sum = 0.0;
    let mut n = 0usize;
    for v in values {
        if v.is_nan() || v <= 0.0 {
            return None;
        }
        sum += v.ln();
        n += 1;
    }
    (n > 0).then(|| (sum / n as f64).exp())
}

/// `a / b` when both are positive.
fn ratio(a: Option<i64>, b: Option<i64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if a > 0 && b > 0 => Some(a as f64 / b as f64),
        _ => None,
    }
}

/// Derived per-cell figures shared by the table and the JSON.
#[derive(Clone, Copy, Debug, Default)]
struct Figures {
    bytes: Option<f64>,
    /// The executable's runtime code ([`Cell::runtime_bytes`]).
    runtime_bytes: Option<f64>,
    vs_baseline: Option<f64>,
    vs_clang: Option<f64>,
    compile_ms: Option<f64>,
    run_ms: Option<f64>,
    file_bytes: Option<f64>,
    stripped_bytes: Option<f64>,
    /// Stripped file bytes over the musl twin's.
    vs_musl: Option<f64>,
}

fn ms(d: Option<Duration>) -> Option<f64> {
    d.map(|d| d.as_secs_f64() * 1000.0)
}

impl Report {
    fn index_of(&self, name: &str) -> Option<usize> {
        self.configs.iter().position(|c| c == name)
    }

    /// Configuration `c`'s compile time by stage, summed over the complete
    /// rows, in the order the stages first ran; and the total compile time.
    fn stage_totals(&self, c: usize) -> (Vec<(String, f64)>, f64) {
        let mut stages: Vec<(String, f64)> = Vec::new();
        let mut total = 0.0;
        for p in self.complete_rows() {
            let cell = &self.cells[p][c];
            total += ms(cell.compile).unwrap_or(0.0);
            for (name, time) in &cell.stages {
                let time = time.as_secs_f64() * 1000.0;
                match stages.iter_mut().find(|(n, _)| n == name) {
                    Some((_, sum)) => *sum += time,
                    None => stages.push((name.clone(), time)),
                }
            }
        }
        (stages, total)
    }

    fn figures(&self, p: usize, c: usize) -> Figures {
        let row = &self.cells[p];
        let cell = &row[c];
        let of = |name: &str| self.index_of(name).map(|i| &row[i]);
        let file = |bytes: Option<u64>| bytes.map(|b| b as i64);
        Figures {
            bytes: cell.bytes.map(|b| b as f64),
            runtime_bytes: cell.runtime_bytes.map(|b| b as f64),
            vs_baseline: ratio(cell.bytes, row[BASELINE].bytes),
            vs_clang: ratio(cell.bytes, of(CLANG_NAME).and_then(|c| c.bytes)),
            compile_ms: ms(cell.compile),
            run_ms: ms(cell.run),
            file_bytes: cell.file_bytes.map(|b| b as f64),
            stripped_bytes: cell.stripped_bytes.map(|b| b as f64),
            vs_musl: ratio(
                file(cell.stripped_bytes),
                of(MUSL_NAME).and_then(|c| file(c.stripped_bytes)),
            ),
        }
    }

    /// Programs with no failed cell.
    fn complete_rows(&self) -> Vec<usize> {
        (0..self.programs.len())
            .filter(|&p| self.cells[p].iter().all(|c| c.error.is_none()))
            .collect()
    }

    /// The index of the configuration called `name`.
    fn index(&self, name: &str) -> Option<usize> {
        self.configs.iter().position(|c| c == name)
    }

    /// The share of [`SIZE_BASELINE`]'s byte reduction from `Cranelift`
    /// that configuration `c` keeps, by geometric means over complete rows.
    fn reduction_kept(&self, c: usize) -> Option<f64> {
        let bytes = |c: usize| self.geomean_figures(c).bytes;
        let (base, smallest) = (bytes(BASELINE)?, bytes(self.index(SIZE_BASELINE)?)?);
        let config = bytes(c)?;
        (base > smallest).then(|| (base - config) / (base - smallest))
    }

    /// Program `p`'s run time under configuration `c` over
    /// [`SPEED_BASELINE`]'s.
    fn run_vs_speed(&self, p: usize, c: usize) -> Option<f64> {
        let base = self.figures(p, self.index(SPEED_BASELINE)?).run_ms?;
        let run = self.figures(p, c).run_ms?;
        (base > 0.0).then(|| run / base)
    }

    /// The geometric mean over complete rows of configuration `c`'s
    /// compile time over [`SPEED_BASELINE`]'s.
    fn compile_vs_speed(&self, c: usize) -> Option<f64> {
        let base = self.index(SPEED_BASELINE)?;
        let ratios: Option<Vec<f64>> = self
            .complete_rows()
            .into_iter()
            .map(|p| Some(self.figures(p, c).compile_ms? / self.figures(p, base).compile_ms?))
            .collect();
        geomean(ratios?)
    }

    /// Geometric means of each figure of configuration `c` over complete rows.
    fn geomean_figures(&self, c: usize) -> Figures {
        let rows = self.complete_rows();
        let over = |f: fn(&Figures) -> Option<f64>| -> Option<f64> {
            let values: Option<Vec<f64>> = rows.iter().map(|&p| f(&self.figures(p, c))).collect();
            geomean(values?)
        };
        Figures {
            bytes: over(|f| f.bytes),
            runtime_bytes: over(|f| f.runtime_bytes),
            vs_baseline: over(|f| f.vs_baseline),
            vs_clang: over(|f| f.vs_clang),
            compile_ms: over(|f| f.compile_ms),
            run_ms: over(|f| f.run_ms),
            file_bytes: over(|f| f.file_bytes),
            stripped_bytes: over(|f| f.stripped_bytes),
            vs_musl: over(|f| f.vs_musl),
        }
    }

    /// The largest of each file figure of configuration `c` over complete
    /// rows (a target is "none above").
    fn largest_file_figures(&self, c: usize) -> Figures {
        let rows = self.complete_rows();
        let over = |f: fn(&Figures) -> Option<f64>| -> Option<f64> {
            rows.iter()
                .filter_map(|&p| f(&self.figures(p, c)))
                .max_by(f64::total_cmp)
        };
        Figures {
            file_bytes: over(|f| f.file_bytes),
            stripped_bytes: over(|f| f.stripped_bytes),
            vs_musl: over(|f| f.vs_musl),
            ..Figures::default()
        }
    }
}

/// The report as a markdown table: per configuration, bytes, ratio vs Cranelift,
/// ratio vs clang, compile ms and run ms; then a geometric-mean row.
pub fn markdown(report: &Report) -> String {
    let mut out = String::new();
    let mut header = String::from("| program |");
    let mut rule = String::from("|---|");
    for name in &report.configs {
        for column in ["bytes", "vs Cranelift", "vs clang", "compile ms", "run ms"] {
            let _ = write!(header, " {name} {column} |");
            rule.push_str("---:|");
        }
    }
    let _ = writeln!(out, "{header}\n{rule}");
    for (p, name) in report.programs.iter().enumerate() {
        let figures: Vec<Figures> = (0..report.configs.len())
            .map(|c| report.figures(p, c))
            .collect();
        let failed: Vec<bool> = report.cells[p].iter().map(|c| c.error.is_some()).collect();
        out.push_str(&table_row(name, &figures, &failed));
    }
    let figures: Vec<Figures> = (0..report.configs.len())
        .map(|c| report.geomean_figures(c))
        .collect();
    let failed = vec![false; figures.len()];
    out.push_str(&table_row("geomean", &figures, &failed));
    out.push_str(&targets_table(report));
    out.push_str(&file_table(report));
    out.push_str(&runtime_table(report));
    out.push_str(&stage_table(report));
    out.push_str(&roles::table(report));
    let _ = writeln!(
        out,
        "\nbytes: the program's own code, .text bytes without the runtime's (`parec size`'s kind `runtime`; \
         the runtime table gives them) beyond those of an empty program (the C twins' without libc, in steps of \
         the 64-byte alignment of the libc code that follows); ratios are bytes / bytes; median of {} compile(s) (parec in-process, clang as a process; link excluded; \
         none for the musl twins, which zig compiles and links in one process, nor their code bytes, which would count \
         the parts of musl the program uses and the empty program does not) and the CPU time \
         (user + system) of {} run(s) under {}.",
        report.runs.compile,
        report.runs.run,
        link::QEMU_AARCH64
    );
    out.push_str(&spread_note(report));
    out
}

/// Each parec configuration against the targets of the size levels: the
/// share of [`SIZE_BASELINE`]'s byte reduction from `Cranelift` it keeps,
/// its run time over [`SPEED_BASELINE`]'s (geometric mean, the slowest
/// program, the programs beyond 1.05× and 1.10×), and its compile time
/// over [`SPEED_BASELINE`]'s (geometric mean).
fn targets_table(report: &Report) -> String {
    let mut out = format!(
        "\nAgainst the targets (complete rows; reduction: the share of `{SIZE_BASELINE}`'s byte \
         reduction from `Cranelift` kept, by geometric means; run and compile time over \
         `{SPEED_BASELINE}`'s, per program):\n\n\
         | configuration | reduction kept | run (geomean) | slowest | over 1.05× | over 1.10× | compile (geomean) |\n\
         |---|---:|---:|---|---|---|---:|\n"
    );
    let rows = report.complete_rows();
    for (c, name) in report.configs.iter().enumerate() {
        if [CLANG_NAME, MUSL_NAME].contains(&name.as_str()) || c == BASELINE {
            continue;
        }
        let ratios: Vec<(usize, f64)> = rows
            .iter()
            .filter_map(|&p| report.run_vs_speed(p, c).map(|r| (p, r)))
            .collect();
        let over = |bound: f64| -> String {
            let names: Vec<String> = ratios
                .iter()
                .filter(|&&(_, r)| r > bound)
                .map(|&(p, r)| format!("{} {r:.2}", report.programs[p]))
                .collect();
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        };
        let slowest = ratios
            .iter()
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map_or("-".to_string(), |&(p, r)| {
                format!("{} {r:.2}", report.programs[p])
            });
        let percent = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{:.1}%", 100.0 * v));
        let _ = writeln!(
            out,
            "| {name} | {} | {} | {slowest} | {} | {} | {} |",
            percent(report.reduction_kept(c)),
            fmt(geomean(ratios.iter().map(|&(_, r)| r)), 3),
            over(1.05),
            over(1.10),
            fmt(report.compile_vs_speed(c), 2),
        );
    }
    out
}

/// How stable the run times were: the median and the largest spread
/// (`(max − min) / median` of a cell's runs) over every cell, and where
/// the largest was.
fn spread_note(report: &Report) -> String {
    let mut spreads: Vec<(f64, usize, usize)> = Vec::new();
    for (p, row) in report.cells.iter().enumerate() {
        for (c, cell) in row.iter().enumerate() {
            if let Some(s) = cell.run_spread() {
                spreads.push((s, p, c));
            }
        }
    }
    if spreads.is_empty() || report.runs.run < 2 {
        return String::new();
    }
    spreads.sort_by(|a, b| a.0.total_cmp(&b.0));
    let median = spreads[spreads.len() / 2].0;
    let (largest, p, c) = spreads[spreads.len() - 1];
    format!(
        "Run-time spread ((max − min) / median of a cell's runs, which run round-robin over the \
         configurations): median {:.1}%, largest {:.1}% ({}, {}).\n",
        100.0 * median,
        100.0 * largest,
        report.programs[p],
        report.configs[c]
    )
}

/// Where each parec configuration's compile time went: per stage, ms
/// summed over the programs and the share of the total (the rest, `other`,
/// is what no stage timed: module bookkeeping, summaries, plans).
fn stage_table(report: &Report) -> String {
    let mut out = String::from(
        "\nCompile time by stage (ms summed over the programs, share of the total):\n\n\
         | configuration | total ms | stages |\n|---|---:|---|\n",
    );
    for (c, name) in report.configs.iter().enumerate() {
        let (stages, total) = report.stage_totals(c);
        if stages.is_empty() {
            continue;
        }
        let timed: f64 = stages.iter().map(|(_, t)| t).sum();
        let share = |t: f64| if total > 0.0 { 100.0 * t / total } else { 0.0 };
        let mut parts: Vec<String> = stages
            .iter()
            .map(|(stage, t)| format!("{stage} {t:.1} ({:.0}%)", share(*t)))
            .collect();
        parts.push(format!(
            "other {:.1} ({:.0}%)",
            total - timed,
            share(total - timed)
        ));
        let _ = writeln!(out, "| {name} | {total:.1} | {} |", parts.join(", "));
    }
    out
}

/// The file bytes of every configuration: the executable, a stripped
/// copy, and the stripped copy over the musl twin; geometric-mean and
/// largest rows.
fn file_table(report: &Report) -> String {
    let mut out = format!(
        "\nFile bytes: the whole executable, a copy stripped by `{STRIP} {}` (the size \
         `ld.lld -s` writes), and that over the C twin's built with clang -Oz + musl (`{}`):\n\n",
        STRIP_FLAGS.join(" "),
        report.musl.as_deref().unwrap_or("not built")
    );
    let mut header = String::from("| program |");
    let mut rule = String::from("|---|");
    for name in &report.configs {
        for column in FILE_COLUMNS {
            let _ = write!(header, " {name} {column} |");
            rule.push_str("---:|");
        }
    }
    let _ = writeln!(out, "{header}\n{rule}");
    let row = |name: &str, figures: &[Figures], failed: &[bool]| {
        let mut line = format!("| {name} |");
        for (f, &failed) in figures.iter().zip(failed) {
            if failed {
                line.push_str(" FAILED | | |");
            } else {
                let _ = write!(
                    line,
                    " {} | {} | {} |",
                    fmt(f.file_bytes, 0),
                    fmt(f.stripped_bytes, 0),
                    fmt(f.vs_musl, 3)
                );
            }
        }
        line.push('\n');
        line
    };
    let configs = 0..report.configs.len();
    for (p, name) in report.programs.iter().enumerate() {
        let figures: Vec<Figures> = configs.clone().map(|c| report.figures(p, c)).collect();
        let failed: Vec<bool> = report.cells[p].iter().map(|c| c.error.is_some()).collect();
        out.push_str(&row(name, &figures, &failed));
    }
    let ok = vec![false; report.configs.len()];
    let geomean: Vec<Figures> = configs.clone().map(|c| report.geomean_figures(c)).collect();
    out.push_str(&row("geomean", &geomean, &ok));
    let largest: Vec<Figures> = configs.map(|c| report.largest_file_figures(c)).collect();
    out.push_str(&row("largest", &largest, &ok));
    out
}

/// The runtime code of every Pare configuration's executables (not in the
/// bytes columns: module doc), per program and as a geometric mean.
fn runtime_table(report: &Report) -> String {
    let pare: Vec<usize> = (0..report.configs.len())
        .filter(|&c| {
            report
                .cells
                .iter()
                .any(|row| row[c].runtime_bytes.is_some())
        })
        .collect();
    if pare.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\nRuntime code: the bytes of each executable that `parec size` attributes to the \
         runtime (kind `runtime`), which the bytes columns leave out:\n\n| program |",
    );
    let mut rule = String::from("|---|");
    for &c in &pare {
        let _ = write!(out, " {} runtime |", report.configs[c]);
        rule.push_str("---:|");
    }
    let _ = writeln!(out, "\n{rule}");
    for (p, name) in report.programs.iter().enumerate() {
        let _ = write!(out, "| {name} |");
        for &c in &pare {
            let cell = &report.cells[p][c];
            match &cell.error {
                Some(_) => out.push_str(" FAILED |"),
                None => {
                    let _ = write!(out, " {} |", fmt(report.figures(p, c).runtime_bytes, 0));
                }
            }
        }
        out.push('\n');
    }
    out.push_str("| geomean |");
    for &c in &pare {
        let _ = write!(
            out,
            " {} |",
            fmt(report.geomean_figures(c).runtime_bytes, 0)
        );
    }
    out.push_str("\n| (empty program) |");
    for &c in &pare {
        let bytes = report.empty_runtime.get(c).copied().flatten();
        let _ = write!(out, " {} |", fmt(bytes.map(|b| b as f64), 0));
    }
    out.push('\n');
    out
}

/// The columns of [`file_table`], per configuration.
const FILE_COLUMNS: [&str; 3] = ["file", "stripped", "vs musl"];

fn table_row(name: &str, figures: &[Figures], failed: &[bool]) -> String {
    let mut line = format!("| {name} |");
    for (f, &failed) in figures.iter().zip(failed) {
        if failed {
            line.push_str(" FAILED | | | | |");
            continue;
        }
        let _ = write!(
            line,
            " {} | {} | {} | {} | {} |",
            fmt(f.bytes, 0),
            fmt(f.vs_baseline, 3),
            fmt(f.vs_clang, 3),
            fmt(f.compile_ms, 1),
            fmt(f.run_ms, 1)
        );
    }
    line.push('\n');
    line
}

fn fmt(value: Option<f64>, decimals: usize) -> String {
    match value {
        Some(v) => format!("{v:.decimals$}"),
        None => "-".to_string(),
    }
}

fn figures_json(f: &Figures) -> Value {
    json!({
        "bytes": f.bytes,
        "runtime_bytes": f.runtime_bytes,
        "ratio_vs_cranelift": f.vs_baseline,
        "ratio_vs_clang": f.vs_clang,
        "compile_ms": f.compile_ms,
        "run_ms": f.run_ms,
        "file_bytes": f.file_bytes,
        "stripped_file_bytes": f.stripped_bytes,
        "ratio_stripped_vs_musl": f.vs_musl,
    })
}

/// The report as JSON: the same figures as the table, plus errors.
/// Stage times in milliseconds as a JSON object keyed by stage.
fn stages_json(stages: impl IntoIterator<Item = (String, f64)>) -> Value {
    Value::Object(
        stages
            .into_iter()
            .map(|(stage, ms)| (stage, json!(ms)))
            .collect(),
    )
}

pub fn to_json(report: &Report) -> Value {
    let programs: Vec<Value> = report
        .programs
        .iter()
        .enumerate()
        .map(|(p, name)| {
            let results: Vec<Value> = report
                .configs
                .iter()
                .enumerate()
                .map(|(c, config)| {
                    let cell = &report.cells[p][c];
                    let mut v = figures_json(&report.figures(p, c));
                    v["config"] = json!(config);
                    v["error"] = json!(cell.error);
                    v["run_samples_ms"] = json!(cell
                        .run_samples
                        .iter()
                        .map(|t| t.as_secs_f64() * 1e3)
                        .collect::<Vec<_>>());
                    v["run_spread"] = json!(cell.run_spread());
                    v["run_vs_o2"] = json!(report.run_vs_speed(p, c));
                    v["roles"] = roles::cell_json(cell.roles.as_ref());
                    v["compile_ms_by_stage"] = stages_json(
                        cell.stages
                            .iter()
                            .map(|(stage, t)| (stage.clone(), t.as_secs_f64() * 1e3)),
                    );
                    v
                })
                .collect();
            json!({ "name": name, "results": results })
        })
        .collect();
    let geomean: Vec<Value> = report
        .configs
        .iter()
        .enumerate()
        .map(|(c, config)| {
            let mut v = figures_json(&report.geomean_figures(c));
            v["config"] = json!(config);
            let largest = report.largest_file_figures(c);
            v["largest_ratio_stripped_vs_musl"] = json!(largest.vs_musl);
            let (stages, total) = report.stage_totals(c);
            v["compile_ms_total"] = json!(total);
            v["reduction_kept"] = json!(report.reduction_kept(c));
            v["compile_vs_o2"] = json!(report.compile_vs_speed(c));
            v["roles"] = roles::total_json(report, c);
            v["compile_ms_by_stage"] = stages_json(stages);
            v
        })
        .collect();
    json!({
        "configs": report.configs,
        "compile_runs": report.runs.compile,
        "run_runs": report.runs.run,
        "bytes": "the program's own code: .text bytes of the linked executable without its runtime code (parec size's kind runtime), minus the same of an empty program built the same way",
        "runtime_bytes": "the runtime code of a Pare executable (parec size's kind runtime, blocks folded with the program's code left out)",
        "roles": "bytes of the program's own code by instruction role (parec size --roles): parec's executable, clang's twin object; per cell and, per configuration, summed over the programs without a failed cell",
        "compile": "parec in-process (load to objects, one thread), clang-19 as a process; link excluded; compile_ms_by_stage: the median compile's stages (parec)",
        "run": "CPU time (user + system) of qemu-aarch64-static running the executable, median of run_runs runs made round-robin over the configurations (run_samples_ms, in order; run_spread = (max - min) / median; run_vs_o2 = run_ms / -O2's)",
        "targets": "geomean: reduction_kept = (Cranelift - config) / (Cranelift - -Oz 2 rounds), bytes by geometric means; compile_vs_o2 = geometric mean of compile_ms / -O2's",
        "file_bytes": "size of the linked executable",
        "stripped_file_bytes": format!("size of a copy stripped by {STRIP} {} (what ld.lld -s writes); the musl twins are built stripped", STRIP_FLAGS.join(" ")),
        "ratio_stripped_vs_musl": "stripped_file_bytes / the clang -Oz musl twin's",
        "musl": report.musl,
        "empty_runtime_bytes": report.empty_runtime,
        "programs": programs,
        "geomean": geomean,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configs_are_baseline_passes_all_clang() {
        let names: Vec<String> = configs(&[]).iter().map(|c| c.name().to_string()).collect();
        let mut expected = vec![
            "Cranelift".to_string(),
            "-O2".to_string(),
            "-Os".to_string(),
        ];
        expected.extend(Pass::ALL.iter().map(|p| p.name().to_string()));
        expected.push("-Oz".into());
        expected.push("-Oz 2 rounds".into());
        expected.push("-Oz lto".into());
        expected.push("-Oz 2 rounds lto".into());
        expected.push("-Oz 2 rounds profile".into());
        expected.push("-Os profile".into());
        expected.push("clang -Oz".into());
        expected.push("clang -Oz musl".into());
        assert_eq!(names, expected);
        let merge = Pass::from_name("merge").unwrap();
        let without = configs(&[merge]);
        let names: Vec<&str> = without.iter().map(|c| c.name()).collect();
        assert_eq!(
            names[names.len() - 4..],
            [
                "-Oz -merge",
                "-Oz 2 rounds -merge",
                "clang -Oz",
                "clang -Oz musl"
            ]
        );
        let Config::Pare { pipeline, .. } = &without[without.len() - 3] else {
            panic!("a parec configuration");
        };
        assert!(!pipeline.merges(), "{pipeline:?}");
        assert!(!pipeline.clif.is_empty(), "{pipeline:?}");
    }

    #[test]
    fn geomean_and_median() {
        assert!((geomean([2.0, 8.0]).unwrap() - 4.0).abs() < 1e-9);
        assert_eq!(geomean([1.0, 0.0]), None);
        assert_eq!(geomean(Vec::<f64>::new()), None);
        let ms = Duration::from_millis;
        assert_eq!(median(vec![ms(3), ms(1), ms(2)]), ms(2));
    }

    #[test]
    fn run_spread_is_range_over_median() {
        let ms = Duration::from_millis;
        let cell = Cell {
            run: Some(ms(20)),
            run_samples: vec![ms(22), ms(20), ms(19)],
            ..Cell::default()
        };
        assert!((cell.run_spread().unwrap() - 0.15).abs() < 1e-9);
        assert_eq!(Cell::default().run_spread(), None);
    }

    #[test]
    fn failed_cells_are_marked_and_excluded_from_geomean() {
        let ok = |bytes| Cell {
            bytes: Some(bytes),
            compile: Some(Duration::from_millis(1)),
            stages: vec![("cranelift".into(), Duration::from_micros(600))],
            run: Some(Duration::from_millis(2)),
            run_samples: vec![Duration::from_millis(2), Duration::from_millis(3)],
            ..Cell::default()
        };
        let report = Report {
            configs: vec!["-O2".into(), "clang -Oz".into()],
            programs: vec!["a".into(), "b".into()],
            cells: vec![
                vec![ok(200), ok(100)],
                vec![
                    ok(50),
                    Cell {
                        error: Some("boom".into()),
                        ..Cell::default()
                    },
                ],
            ],
            runs: Runs { compile: 1, run: 1 },
            musl: None,
            empty_runtime: vec![Some(900), None],
        };
        let mut report = report;
        report.cells[0][0].runtime_bytes = Some(1200);
        report.cells[1][0].runtime_bytes = Some(1500);
        let table = markdown(&report);
        assert!(table.contains("| b | 50 | 1.000 | - |"), "{table}");
        // The runtime table: the Pare configuration only; its geometric
        // mean over complete rows; the empty program's runtime code.
        let runtime = &table[table.find("Runtime code:").expect("runtime table")..];
        for row in [
            "| program | -O2 runtime |",
            "| a | 1200 |",
            "| b | 1500 |",
            "| geomean | 1200 |",
            "| (empty program) | 900 |",
        ] {
            assert!(runtime.contains(row), "{row} in {runtime}");
        }
        // Stages are summed over complete rows only (program a): 0.6 of 1 ms.
        assert!(
            table.contains("| -O2 | 1.0 | cranelift 0.6 (60%), other 0.4 (40%) |"),
            "{table}"
        );
        assert!(table.contains("FAILED"), "{table}");
        assert!(
            table.contains("| geomean | 200 | 1.000 | 2.000 |"),
            "{table}"
        );
        let json = to_json(&report);
        assert_eq!(json["programs"][1]["results"][1]["error"], "boom");
    }

    #[test]
    fn select_configs_keeps_the_baselines() {
        let names = |configs: Vec<Config>| -> Vec<String> {
            configs.iter().map(|c| c.name().to_string()).collect()
        };
        // Cranelift, the C twins and the targets table's baselines (`-O2`
        // for speed, `-Oz 2 rounds` for size) stay whatever is selected.
        let selected = select_configs(configs(&[]), &["-Oz".to_string()]).unwrap();
        assert_eq!(
            names(selected),
            [
                "Cranelift",
                "-O2",
                "-Oz",
                "-Oz 2 rounds",
                "clang -Oz",
                "clang -Oz musl"
            ]
        );
        let error = select_configs(configs(&[]), &["-Oq".to_string()]).unwrap_err();
        assert!(error.to_string().contains("unknown configuration `-Oq`"));
    }

    /// The file table: each configuration's file and stripped bytes and
    /// the stripped bytes over the musl twin's, per program, as geometric
    /// mean and largest.
    #[test]
    fn file_bytes_over_the_musl_twins() {
        let cell = |file: u64, stripped: u64| Cell {
            bytes: Some(100),
            file_bytes: Some(file),
            stripped_bytes: Some(stripped),
            ..Cell::default()
        };
        let report = Report {
            configs: vec!["-Oz".into(), CLANG_NAME.into(), MUSL_NAME.into()],
            programs: vec!["a".into(), "b".into()],
            cells: vec![
                vec![cell(9000, 1000), cell(600_000, 500_000), cell(4000, 4000)],
                vec![cell(9000, 4000), cell(600_000, 500_000), cell(2000, 2000)],
            ],
            runs: Runs { compile: 1, run: 1 },
            musl: Some(musl::command_line()),
            empty_runtime: vec![Some(1000), None, None],
        };
        let table = markdown(&report);
        assert!(
            table.contains("| program | -Oz file | -Oz stripped | -Oz vs musl |"),
            "{table}"
        );
        assert!(
            table.contains(
                "| a | 9000 | 1000 | 0.250 | 600000 | 500000 | 125.000 | 4000 | 4000 | 1.000 |"
            ),
            "{table}"
        );
        assert!(
            table.contains("| geomean | 9000 | 2000 | 0.707 |"),
            "{table}"
        );
        assert!(
            table.contains("| largest | 9000 | 4000 | 2.000 |"),
            "{table}"
        );
        assert!(
            table.contains("aarch64-linux-musl -Oz -static -s"),
            "{table}"
        );
        let json = to_json(&report);
        let b = &json["programs"][1]["results"][0];
        assert_eq!(b["stripped_file_bytes"], 4000.0);
        assert_eq!(b["ratio_stripped_vs_musl"], 2.0);
        assert_eq!(json["geomean"][0]["largest_ratio_stripped_vs_musl"], 2.0);
    }
}
