//! The `parec` subcommands, independent of argument parsing.
//!
//! Inputs are either all `.pare` files (a Pare program, root module first) or
//! all `.clif` files (each one ClifModule; the program's `main` is a function
//! `%main` with the platform C calling convention). Every command returns the
//! process exit status or a [`Failure`]; none panics on user input.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context as _};
use parec_passes::clif_module::ClifModule;

use crate::clif_file::ClifFile;
use crate::clif_pipeline::{OptLevel, Pipeline};
use crate::link::{self, Icf};
use crate::object::{self, CompiledObject, ObjectOptions};
use crate::rounds::{self, MergeOutcome, MergeSetup};
use crate::target::Target;
use crate::{asm, jit, pipeline, Failure};

/// What `parec build` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Emit {
    #[default]
    Exe,
    Obj,
    Asm,
    Clif,
}

/// Options of `parec build`.
#[derive(Clone, Debug)]
pub struct BuildOptions {
    pub files: Vec<PathBuf>,
    pub out: Option<PathBuf>,
    pub target: Target,
    pub level: OptLevel,
    pub emit: Emit,
    pub jobs: usize,
    pub icf: Icf,
    /// A pass list replacing the level's (`--passes`, for testing).
    pub passes: Option<String>,
    /// Cross-module merging: cgdata and rounds.
    pub merge: MergeSetup,
    /// Print one line per merge decision (`--remarks`).
    pub remarks: bool,
    /// Print the machine outliner's statistics to stderr.
    pub outline_stats: bool,
}

impl BuildOptions {
    /// The options of the AOT compilation of this build, with `pipeline`.
    fn object_options(&self, pipeline: Pipeline) -> ObjectOptions {
        ObjectOptions {
            target: self.target,
            level: self.level,
            pipeline,
            jobs: self.jobs,
        }
    }
}

/// The kind of the input files.
enum Inputs {
    Pare,
    Clif,
}

fn classify(files: &[PathBuf]) -> Result<Inputs, Failure> {
    let is = |ext: &str| {
        files
            .iter()
            .all(|f| f.extension().is_some_and(|e| e == ext))
    };
    if files.is_empty() {
        return Err(anyhow!("no input files").into());
    }
    if let Some(dir) = files.iter().find(|f| f.is_dir()) {
        return Err(anyhow!("cannot read `{}`: it is a directory", dir.display()).into());
    }
    if is("pare") {
        Ok(Inputs::Pare)
    } else if is("clif") {
        Ok(Inputs::Clif)
    } else {
        Err(anyhow!(
            "inputs must be all .pare files or all .clif files, found `{}`",
            files
                .iter()
                .find(|f| !f.extension().is_some_and(|e| e == "pare" || e == "clif"))
                .unwrap_or(&files[0])
                .display()
        )
        .into())
    }
}

/// Reads a file, with the CLI's error message.
pub fn read_source(path: &Path) -> anyhow::Result<String> {
    std::fs::read_to_string(path)
        .map_err(|e| anyhow!("cannot read `{}`: {}", path.display(), io_reason(&e)))
}

/// An I/O error's reason without the "(os error N)" suffix.
pub fn io_reason(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

fn parse_clif_files(files: &[PathBuf]) -> anyhow::Result<Vec<ClifFile>> {
    files
        .iter()
        .map(|path| {
            let text = read_source(path)?;
            ClifFile::parse(&path.display().to_string(), &text)
        })
        .collect()
}

/// The pipeline of `level`, or the explicit pass list `passes` if given.
fn choose_pipeline(level: OptLevel, passes: Option<&str>) -> Result<Pipeline, Failure> {
    match passes {
        Some(list) => Ok(Pipeline::from_names(list).map_err(|e| anyhow!(e))?),
        None => Ok(Pipeline::for_level(level)),
    }
}

/// `parec run`: JIT-compile and run; returns the program's status.
pub fn run(files: &[PathBuf], level: OptLevel) -> Result<i32, Failure> {
    run_with_passes(files, level, None)
}

/// `parec run --passes LIST`: like [`run`] with an explicit pass list.
pub fn run_with_passes(
    files: &[PathBuf],
    level: OptLevel,
    passes: Option<&str>,
) -> Result<i32, Failure> {
    let pipeline = choose_pipeline(level, passes)?;
    let modules = match classify(files)? {
        Inputs::Pare => pipeline::lower_for_jit(files)?,
        Inputs::Clif => parse_clif_files(files)?
            .into_iter()
            .map(|f| f.module)
            .collect(),
    };
    Ok(jit::run(modules, &pipeline, level)?)
}

/// `parec interp`: run with the reference interpreter.
pub fn interp(files: &[PathBuf]) -> Result<i32, Failure> {
    match classify(files)? {
        Inputs::Pare => pipeline::interpret(files),
        Inputs::Clif => Err(anyhow!(
            "`parec interp` runs Pare programs; for .clif files use `parec opt --run`"
        )
        .into()),
    }
}

/// `parec build`.
pub fn build(opts: &BuildOptions) -> Result<i32, Failure> {
    let (modules, clif_files) = match classify(&opts.files)? {
        Inputs::Pare => (pipeline::lower_for_aot(&opts.files, opts.target)?, None),
        Inputs::Clif => {
            let files = parse_clif_files(&opts.files)?;
            (
                files.iter().map(|f| f.module.clone()).collect(),
                Some(files),
            )
        }
    };
    let pipeline = choose_pipeline(opts.level, opts.passes.as_deref())?;
    match opts.emit {
        Emit::Clif => {
            let options = opts.object_options(pipeline);
            let (modules, outcome) = rounds::run_all_passes(modules, &options, &opts.merge)?;
            print_remarks(outcome.as_ref(), opts.remarks);
            let text = clif_text(&modules, clif_files.as_deref());
            write_output(opts.out.as_deref(), text.as_bytes())?;
        }
        Emit::Asm => {
            let (objects, _) = compile_objects(modules, opts, pipeline)?;
            let mut text = String::new();
            for obj in &objects {
                text.push_str(&format!("; module {}\n", obj.name));
                text.push_str(&asm::disassemble_object(&obj.bytes, opts.target)?);
            }
            write_output(opts.out.as_deref(), text.as_bytes())?;
        }
        Emit::Obj => {
            let dir = opts
                .out
                .as_deref()
                .ok_or_else(|| anyhow!("--emit obj needs -o DIR"))?;
            let (objects, _) = compile_objects(modules, opts, pipeline)?;
            write_object_dir(dir, &objects)?;
        }
        Emit::Exe => {
            let out = opts
                .out
                .as_deref()
                .ok_or_else(|| anyhow!("building an executable needs -o OUT"))?;
            let (objects, merged) = compile_objects(modules, opts, pipeline)?;
            let tmp = tempfile::Builder::new()
                .prefix("parec-")
                .tempdir()
                .map_err(|e| anyhow!("cannot create a temporary directory: {e}"))?;
            let paths = write_object_files(tmp.path(), &objects)?;
            link::link_executable(&paths, out, opts.target, opts.icf)?;
            if let Some(outcome) = merged.filter(|_| opts.merge.is_global() || opts.remarks) {
                eprintln!("{}", rounds::link_report(out, &outcome)?);
            }
        }
    }
    Ok(0)
}

/// Compiles through [`rounds`] (merging as `opts.merge` says), printing
/// merge remarks if asked.
fn compile_objects(
    modules: Vec<ClifModule>,
    opts: &BuildOptions,
    pipeline: Pipeline,
) -> anyhow::Result<(Vec<CompiledObject>, Option<MergeOutcome>)> {
    let options = opts.object_options(pipeline);
    let (objects, outcome) = rounds::compile_objects(modules, &options, &opts.merge)?;
    print_remarks(outcome.as_ref(), opts.remarks);
    if opts.outline_stats {
        eprint!("{}", object::outline_report(&objects));
    }
    Ok((objects, outcome))
}

/// Prints merge remarks to stderr if asked (`--remarks`).
fn print_remarks(outcome: Option<&MergeOutcome>, remarks: bool) {
    if let Some(outcome) = outcome.filter(|_| remarks) {
        for remark in &outcome.remarks {
            eprintln!("remark: {remark}");
        }
    }
}

/// The modules' functions as CLIF text (names restored for `.clif` inputs).
fn clif_text(modules: &[ClifModule], clif_files: Option<&[ClifFile]>) -> String {
    let mut text = String::new();
    for (i, module) in modules.iter().enumerate() {
        text.push_str(&format!("; module {}\n", module.name));
        for def in &module.functions {
            let func = match clif_files {
                Some(files) => files[i].restore_names(&def.func),
                None => def.func.clone(),
            };
            let name = module
                .symbols
                .get(def.symbol as usize)
                .map_or("?", |s| s.name.as_str());
            text.push_str(&format!("; symbol {name}\n{}\n", func.display()));
        }
    }
    text
}

/// Writes to `out`, or to stdout if absent or `-`.
fn write_output(out: Option<&Path>, bytes: &[u8]) -> anyhow::Result<()> {
    match out {
        Some(path) if path != Path::new("-") => std::fs::write(path, bytes)
            .map_err(|e| anyhow!("cannot write `{}`: {}", path.display(), io_reason(&e))),
        _ => {
            let mut stdout = std::io::stdout().lock();
            stdout
                .write_all(bytes)
                .and_then(|_| stdout.flush())
                .context("cannot write to stdout")
        }
    }
}

/// Writes one `.o` per module into `dir` (created; must not be a file).
fn write_object_dir(dir: &Path, objects: &[CompiledObject]) -> anyhow::Result<Vec<PathBuf>> {
    if dir.exists() && !dir.is_dir() {
        bail!(
            "`{}` exists and is not a directory; refusing to overwrite it",
            dir.display()
        );
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| anyhow!("cannot create `{}`: {}", dir.display(), io_reason(&e)))?;
    write_object_files(dir, objects)
}

/// Writes the objects as `NAME.o` (numbered when names repeat), in order.
pub fn write_object_files(dir: &Path, objects: &[CompiledObject]) -> anyhow::Result<Vec<PathBuf>> {
    let mut paths: Vec<PathBuf> = Vec::new();
    for (i, obj) in objects.iter().enumerate() {
        let stem: String = obj
            .name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let mut path = dir.join(format!("{stem}.o"));
        if paths.contains(&path) {
            path = dir.join(format!("{stem}.{i}.o"));
        }
        std::fs::write(&path, &obj.bytes)
            .map_err(|e| anyhow!("cannot write `{}`: {}", path.display(), io_reason(&e)))?;
        paths.push(path);
    }
    Ok(paths)
}

/// `parec opt`: returns 0, or 1 if a `--run` check failed.
pub fn opt(file: &Path, passes: Option<&str>, run: bool, stats: bool) -> Result<i32, Failure> {
    let text = read_source(file)?;
    let pipeline = Pipeline::from_names(passes.unwrap_or("")).map_err(|e| anyhow!(e))?;
    let report = crate::opt::opt(&file.display().to_string(), &text, &pipeline, run, stats)?;
    write_output(None, report.clif.as_bytes())?;
    if let Some(stats) = &report.stats {
        eprint!("{stats}");
    }
    if !report.failures.is_empty() {
        for f in &report.failures {
            eprintln!("error: {f}");
        }
        return Ok(1);
    }
    if run {
        eprintln!("{} run command(s) agree", report.runs);
    }
    Ok(0)
}

/// Options of `parec fuzz`.
#[derive(Clone, Debug)]
pub struct FuzzOptions {
    pub seed: u64,
    pub count: u64,
    pub executors: String,
    pub configs: String,
    pub out: PathBuf,
    pub timeout_secs: u64,
    pub clif_checks: bool,
    pub shrink: bool,
    /// The parec binary for child processes (default: this executable).
    pub parec: Option<PathBuf>,
}

/// `parec fuzz`: a differential-testing campaign; 0 if every program agreed,
/// 1 (after printing the reproducer paths) otherwise.
pub fn fuzz(opts: &FuzzOptions) -> Result<i32, Failure> {
    use crate::difftest::{check_tools, Executor, PassConfig, Runner};
    let parec = match &opts.parec {
        Some(p) => p.clone(),
        None => std::env::current_exe().context("cannot find the parec executable")?,
    };
    let mut runner = Runner::new(parec);
    runner.executors = Executor::parse_list(&opts.executors).map_err(|e| anyhow!(e))?;
    runner.configs = PassConfig::parse_list(&opts.configs).map_err(|e| anyhow!(e))?;
    runner.timeout = std::time::Duration::from_secs(opts.timeout_secs.max(1));
    runner.clif_checks = opts.clif_checks;
    if !opts.shrink {
        runner.shrink_tests = 0;
    }
    check_tools(&runner)?;
    let configs: Vec<&str> = runner.configs.iter().map(|c| c.name.as_str()).collect();
    eprintln!(
        "fuzz: seeds {}..{}, executors {}, configurations {}",
        opts.seed,
        opts.seed.saturating_add(opts.count),
        opts.executors,
        configs.join(", ")
    );
    let report = runner.campaign(opts.seed, opts.count, &opts.out, true);
    eprintln!("fuzz: {}", report.summary());
    eprintln!("fuzz: {}", report.rates());
    if report.failures.is_empty() {
        Ok(0)
    } else {
        for dir in &report.reproducers {
            println!("{}", dir.display());
        }
        Ok(1)
    }
}
