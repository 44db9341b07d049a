//! The `parec` subcommands, independent of argument parsing.
//!
//! Inputs are either all `.pare` files (a Pare program, root module first) or
//! all `.clif` files (each one ClifModule; the program's `main` is a function
//! `%main` with the platform C calling convention). Every command returns the
//! process exit status or a [`Failure`]; none panics on user input.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{anyhow, bail};
use parec_passes::clif_module::ClifModule;
use parec_passes::code_cache::CodeCache;

use crate::build::{Backend, Build, BuildMode, Input, ModeFlags, Output, Units};
use crate::clif_file::ClifFile;
use crate::codegen::CodeModel;
use crate::codegen::{self, CompiledObject};
use crate::io_error;
use crate::link::{self, Icf, LinkOptions};
use crate::outputs::{self, Outputs};
use crate::pipeline::Pipeline;
use crate::profile::{self, ProfileFlags};
use crate::runtime::RuntimeChoice;
use crate::size::{self, SizeOptions};
use crate::target::{Machine, OptLevel, Target};
use crate::{asm, frontend, jit, link_report, remarks, Failure};

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
    /// Cross-module merging and outlining: cgdata and rounds.
    pub mode: ModeFlags,
    /// Print one line per pass decision to stderr (`--remarks`).
    pub remarks: bool,
    /// Write every pass decision as JSON lines to this file
    /// (`--remarks=FILE`; docs/REMARKS.md).
    pub remarks_file: Option<PathBuf>,
    /// Print the machine outliner's statistics to stderr.
    pub outline_stats: bool,
    /// Compile the program as one unit (`--lto`).
    pub units: Units,
    /// How symbols are addressed (`--code-model`).
    pub code_model: CodeModel,
    /// `--profile-use`, `--profile-mode`, `--profile-mismatch`.
    pub profile: ProfileFlags,
    /// What the executable's runtime stands on (`--runtime`).
    pub runtime: RuntimeChoice,
    /// Leave the executable's symbol tables out (`-s`/`--strip`).
    pub strip: bool,
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

/// Reads `.clif` files whose code is for `machine`.
fn parse_clif_files(files: &[PathBuf], machine: Machine) -> anyhow::Result<Vec<ClifFile>> {
    files
        .iter()
        .map(|path| {
            let text = io_error::read_text(path)?;
            ClifFile::parse_for(&path.display().to_string(), &text, machine)
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
    run_with_passes(files, level, None, &ProfileFlags::default())
}

/// `parec run --passes LIST --profile-use FILE`: like [`run`] with an
/// explicit pass list and the profile the size passes consult, as
/// `parec build` takes them.
pub fn run_with_passes(
    files: &[PathBuf],
    level: OptLevel,
    passes: Option<&str>,
    profile: &ProfileFlags,
) -> Result<i32, Failure> {
    let mut pipeline = choose_pipeline(level, passes)?;
    pipeline.profile = profile.read()?;
    run_with_pipeline(files, level, pipeline)
}

/// `parec run` with a pipeline of the caller's (which may hold custom passes).
pub fn run_with_pipeline(
    files: &[PathBuf],
    level: OptLevel,
    pipeline: Pipeline,
) -> Result<i32, Failure> {
    let input = match classify(files)? {
        Inputs::Pare => Input::Pare(files.to_vec()),
        Inputs::Clif => Input::Modules(
            parse_clif_files(files, Machine::Host)?
                .into_iter()
                .map(|f| f.module)
                .collect(),
        ),
    };
    let output = jit_build(pipeline, level).run(input)?;
    restore_default_sigpipe();
    Ok(jit::execute(output.modules, level)?)
}

/// A compilation for the host JIT with `pipeline` at `level`: the one
/// `parec run` makes (public so that the differential tester's workers,
/// which lower a program once for several pipelines, compile as it does).
pub fn jit_build(pipeline: Pipeline, level: OptLevel) -> Build {
    Build {
        pipeline,
        level,
        mode: BuildMode::Local,
        backend: Backend::Jit,
        jobs: available_jobs(),
        units: Units::PerModule,
        code_model: CodeModel::default(),
        runtime: RuntimeChoice::Libc,
    }
}

/// `parec run --profile-generate FILE`: runs the program with block
/// counters and writes its profile to `out` when it ends, however it ends
/// (`crate::profile`); returns the program's status. No parec pass runs:
/// the counters count the front end's blocks, which a build's keys name.
pub fn run_generating_profile(
    files: &[PathBuf],
    level: OptLevel,
    out: &Path,
) -> Result<i32, Failure> {
    let mut outputs = Outputs::default();
    outputs.file(out, "--profile-generate");
    outputs.check(files)?;
    profile::check_output(out)?;
    let (mut modules, read) = match classify(files)? {
        Inputs::Pare => {
            let lowered = frontend::lower_for_jit(files)?;
            (lowered.modules, lowered.files)
        }
        Inputs::Clif => (
            parse_clif_files(files, Machine::Host)?
                .into_iter()
                .map(|f| f.module)
                .collect(),
            files.to_vec(),
        ),
    };
    outputs.check_not_read(&read)?;
    let maps = profile::instrument_modules(&mut modules);
    let output = jit_build(Pipeline::empty(), level).run(Input::Modules(modules))?;
    restore_default_sigpipe();
    let status = jit::execute_with(output.modules, level, |data| {
        profile::arm(out, profile::locate_counters(maps, data)?)
    })?;
    profile::write_armed_profile()?;
    Ok(status)
}

/// Makes writing to a closed pipe end the process with `SIGPIPE`, as it
/// ends a compiled executable (and any C program), instead of failing the
/// write: the Rust runtime ignores `SIGPIPE`, which would make `parec run`
/// and `parec interp` trap with a write error where executables are killed
/// by the signal. Only for the commands that run a program (and the
/// differential tester's workers, before they run one).
pub fn restore_default_sigpipe() {
    // SAFETY: setting a signal's disposition to the default has no
    // preconditions; parec installs no SIGPIPE handler of its own.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// The number of threads a compilation uses unless told otherwise.
pub fn available_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// `parec interp`: run with the reference interpreter.
pub fn interp(files: &[PathBuf]) -> Result<i32, Failure> {
    match classify(files)? {
        Inputs::Pare => {
            restore_default_sigpipe();
            frontend::interpret(files)
        }
        Inputs::Clif => Err(anyhow!(
            "`parec interp` runs Pare programs; for .clif files use `parec opt --run`"
        )
        .into()),
    }
}

/// `parec build`.
pub fn build(opts: &BuildOptions) -> Result<i32, Failure> {
    let pipeline = choose_pipeline(opts.level, opts.passes.as_deref())?;
    build_with_pipeline(opts, pipeline, None)
}

/// The files `parec build` will write, as the flags name them.
fn planned_outputs(opts: &BuildOptions) -> anyhow::Result<Outputs> {
    let mut outputs = Outputs::default();
    match (opts.emit, &opts.out) {
        (Emit::Exe, None) => bail!("building an executable needs -o OUT"),
        (Emit::Obj, None) => bail!("--emit obj needs -o DIR"),
        (Emit::Obj, Some(dir)) => outputs.directory(dir, "-o"),
        (Emit::Exe | Emit::Asm | Emit::Clif, Some(file)) => outputs.file(file, "-o"),
        (Emit::Asm | Emit::Clif, None) => {}
    }
    if let Some(cgdata) = &opts.mode.generate {
        outputs.file(cgdata, "--cgdata-generate");
    }
    if let Some(remarks) = &opts.remarks_file {
        outputs.file(remarks, "--remarks");
    }
    Ok(outputs)
}

/// The files `parec build` reads before the front end runs: the given
/// files and the `--cgdata-use` file.
fn explicit_inputs(opts: &BuildOptions) -> Vec<PathBuf> {
    opts.files
        .iter()
        .chain(opts.mode.use_file.as_ref())
        .chain(opts.profile.use_file.as_ref())
        .cloned()
        .collect()
}

/// `parec build` with a pipeline of the caller's (which may hold custom
/// passes), compiling through `cache` when there is one: a code cache other
/// builds of the same program share (`parec_passes::code_cache`; the files
/// written are the same with or without it).
pub fn build_with_pipeline(
    opts: &BuildOptions,
    mut pipeline: Pipeline,
    cache: Option<&Arc<CodeCache>>,
) -> Result<i32, Failure> {
    let kind = classify(&opts.files)?;
    let outputs = planned_outputs(opts)?;
    let inputs = explicit_inputs(opts);
    outputs.check(&inputs)?;
    pipeline.profile = opts.profile.read()?;
    let (input, clif_files) = match kind {
        Inputs::Pare => (Input::Pare(opts.files.clone()), None),
        Inputs::Clif => {
            let files = parse_clif_files(&opts.files, Machine::Target(opts.target))?;
            let modules = files.iter().map(|f| f.module.clone()).collect();
            (Input::Modules(modules), Some(files))
        }
    };
    let mode = BuildMode::settle(&opts.mode, opts.target, &pipeline)?;
    let backend = match opts.emit {
        Emit::Clif => Backend::Clif(Some(opts.target)),
        Emit::Exe | Emit::Obj | Emit::Asm => Backend::Objects(opts.target),
    };
    let build = Build {
        pipeline,
        level: opts.level,
        mode,
        backend,
        jobs: opts.jobs,
        units: opts.units,
        code_model: opts.code_model,
        runtime: opts.runtime,
    };
    let output = build.run_compiling_through(input, &outputs, cache)?;
    if opts.remarks {
        remarks::print_text(output.remarks());
        if let Some((stats, _)) = output.fmerge_stats() {
            crate::io_error::eprintln(format_args!("fmerge: {stats}"));
        }
    }
    if let Some(path) = &opts.remarks_file {
        remarks::write_json_lines(path, output.remarks())?;
    }
    if opts.outline_stats && opts.emit != Emit::Clif {
        crate::io_error::eprint(&codegen::outline_report(&output.objects));
    }
    match opts.emit {
        Emit::Clif => {
            let text = clif_text(&output.modules, clif_files.as_deref());
            write_output(opts.out.as_deref(), text.as_bytes())?;
        }
        Emit::Asm => {
            let mut text = String::new();
            for obj in &output.objects {
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
            // The object names are known only now: none may be a file the
            // build read or another file it wrote.
            let taken: Vec<PathBuf> = inputs
                .into_iter()
                .chain(opts.mode.generate.clone())
                .chain(opts.remarks_file.clone())
                .collect();
            write_object_dir(dir, &output.objects, &taken)?;
        }
        Emit::Exe => {
            let out = opts
                .out
                .as_deref()
                .ok_or_else(|| anyhow!("building an executable needs -o OUT"))?;
            let link = LinkOptions {
                target: opts.target,
                icf: opts.icf,
                runtime: output.runtime,
                strip: opts.strip,
            };
            link_objects(&output.objects, out, &link)?;
            let remarks = opts.remarks || opts.remarks_file.is_some();
            report_merging(&output, &build.mode, out, remarks)?;
        }
    }
    Ok(0)
}

/// Links `objects` into the executable `out` through a temporary directory.
pub fn link_objects(
    objects: &[CompiledObject],
    out: &Path,
    link: &LinkOptions,
) -> anyhow::Result<()> {
    let tmp = tempfile::Builder::new()
        .prefix("parec-")
        .tempdir()
        .map_err(|e| anyhow!("cannot create a temporary directory: {e}"))?;
    let paths = write_object_files(tmp.path(), objects)?;
    link::link_executable(&paths, out, link)
}

/// After linking: what the linker made of merging, when the build merged
/// across modules or remarks were asked for.
fn report_merging(
    output: &Output,
    mode: &BuildMode,
    exe: &Path,
    remarks: bool,
) -> anyhow::Result<()> {
    if let Some(stats) = output.merge_stats().filter(|_| mode.is_global() || remarks) {
        crate::io_error::eprintln(format_args!(
            "{}",
            link_report::merge_report(exe, &mode.describe(), stats)?
        ));
    }
    Ok(())
}

/// The modules' functions as CLIF text (names restored for `.clif` inputs).
fn clif_text(modules: &[ClifModule], clif_files: Option<&[ClifFile]>) -> String {
    let mut text = String::new();
    for (i, module) in modules.iter().enumerate() {
        text.push_str(&format!("; module {}\n", module.name));
        for def in &module.functions {
            // Modules past the files' are the runtime's (a freestanding build).
            let func = match clif_files.and_then(|files| files.get(i)) {
                Some(file) => file.restore_names(&def.func),
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
        Some(path) if path != Path::new("-") => io_error::write(path, bytes),
        _ => io_error::write_stdout(bytes),
    }
}

/// Writes one `.o` per module into `dir` (created; must not be a file),
/// refusing to replace any of the files `taken`.
fn write_object_dir(
    dir: &Path,
    objects: &[CompiledObject],
    taken: &[PathBuf],
) -> anyhow::Result<Vec<PathBuf>> {
    if dir.exists() && !dir.is_dir() {
        bail!(
            "`{}` exists and is not a directory; refusing to overwrite it",
            dir.display()
        );
    }
    io_error::create_dir_all(dir)?;
    for path in object_paths(dir, objects) {
        if let Some(file) = taken.iter().find(|f| outputs::same_file(&path, f)) {
            bail!(
                "the object `{}` would replace `{}`; refusing to overwrite it",
                path.display(),
                file.display()
            );
        }
    }
    write_object_files(dir, objects)
}

/// Writes the objects as `NAME.o` (numbered when names repeat), in order.
pub fn write_object_files(dir: &Path, objects: &[CompiledObject]) -> anyhow::Result<Vec<PathBuf>> {
    let paths = object_paths(dir, objects);
    for (path, obj) in paths.iter().zip(objects) {
        io_error::write(path, &obj.bytes)?;
    }
    Ok(paths)
}

/// The file of each object in `dir`: `NAME.o`, numbered when names repeat.
fn object_paths(dir: &Path, objects: &[CompiledObject]) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = Vec::new();
    for (i, obj) in objects.iter().enumerate() {
        let mut path = dir.join(crate::ninja::object_name(&obj.name));
        if paths.contains(&path) {
            let stem = crate::ninja::object_stem(&obj.name);
            path = dir.join(format!("{stem}.{i}.o"));
        }
        paths.push(path);
    }
    paths
}

/// `parec opt`: returns 0, or 1 if a `--run` check failed.
pub fn opt(
    file: &Path,
    passes: Option<&str>,
    target: Option<Target>,
    run: bool,
    stats: bool,
) -> Result<i32, Failure> {
    let text = io_error::read_text(file)?;
    let pipeline = Pipeline::from_names(passes.unwrap_or("")).map_err(|e| anyhow!(e))?;
    let name = file.display().to_string();
    let report = crate::opt::opt(&name, &text, &pipeline, target, run, stats)?;
    write_output(None, report.clif.as_bytes())?;
    if let Some(stats) = &report.stats {
        crate::io_error::eprint(stats);
    }
    if !report.failures.is_empty() {
        for f in &report.failures {
            crate::io_error::eprintln(format_args!("error: {f}"));
        }
        return Ok(1);
    }
    if run {
        crate::io_error::eprintln(format_args!("{} run command(s) agree", report.runs));
    }
    Ok(0)
}

/// `parec size`: the size report, or the comparison with another build
/// ([`crate::size`]).
pub fn size(opts: &SizeOptions) -> Result<i32, Failure> {
    Ok(size::command(opts)?)
}
