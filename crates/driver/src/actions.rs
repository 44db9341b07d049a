//! Separate compilation: a build as actions a build system runs.
//!
//! `parec build` compiles a program in one process. The same build splits
//! into actions, each a pure function of its declared inputs (sources,
//! plan, cgdata, flags) whose outputs hold no path and no time, so that a
//! build system (Ninja, [`crate::ninja`]) can run them in parallel, skip
//! those whose inputs did not change, or ship them elsewhere:
//!
//! | action | command | reads | writes |
//! |---|---|---|---|
//! | plan | `parec plan ROOT -o P` | every source, the profile | the program plan ([`crate::plan`]) |
//! | compile | `parec compile ROOT --module M --plan P -o M.o` | M and what it imports, P, the profile | M's object |
//! | round 1 | `… --cgdata-generate M.cgdata` | as compile | M's merge summary and outline tree |
//! | merge | `parec cgdata merge --modules C M1.cgdata…` | round 1's files | round 1's cgdata |
//! | round 2 | `… --cgdata-use C -o M.o` | as compile, C | M's object |
//! | link | `parec link OBJS… -o EXE` | the objects | the executable |
//!
//! Every object is byte-identical to the one `parec build --emit obj`
//! writes for that module with the same flags (one round without cgdata
//! flags, `--two-rounds` with them), and the linked executable to `parec
//! build`'s. A compile action runs the front end on the whole program (a
//! module's lowering needs the types of what it imports) but its object
//! depends only on the module, what it imports and the plan.
//!
//! With `--profile-use FILE` (and `--profile-mode`, `--profile-mismatch`),
//! the plan classifies the program's functions as `parec build` does and
//! records the result with the profile's content hash; a compile checks
//! that its profile is the plan's and reads the classification from the
//! plan, so each module's passes see what they see in `parec build`.
//!
//! Outputs are written only when their bytes change, so that Ninja's
//! `restat` stops a rebuild at an unchanged plan, cgdata or object.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::anyhow;
use parec_passes::cgdata::CgData;
use parec_passes::outline::global::OutlineTree;

use crate::build::{Backend, Build, BuildMode, CgDataInput, Units};
use crate::codegen::CodeModel;
use crate::link::{self, Icf, LinkOptions};
use crate::outputs::Outputs;
use crate::pipeline::Pipeline;
use crate::plan::ProgramPlan;
use crate::profile::ProfileFlags;
use crate::runtime::RuntimeChoice;
use crate::target::{OptLevel, Target};
use crate::{cgdata_file, io_error, Failure};

/// The flags every action of one build shares.
#[derive(Clone, Debug)]
pub struct ActionFlags {
    pub target: Target,
    pub level: OptLevel,
    /// A pass list replacing the level's (`--passes`, for testing).
    pub passes: Option<String>,
    /// Cross-module merging and outlining in two rounds.
    pub two_rounds: bool,
    /// How symbols are addressed (`--code-model`).
    pub code_model: CodeModel,
    /// What the runtime stands on (`--runtime`).
    pub runtime: RuntimeChoice,
    /// `--profile-use`, `--profile-mode`, `--profile-mismatch`.
    pub profile: ProfileFlags,
}

impl ActionFlags {
    /// The build these flags describe, `jobs` modules at a time.
    fn build(&self, jobs: usize) -> Result<Build, Failure> {
        let mut pipeline = match &self.passes {
            Some(list) => Pipeline::from_names(list).map_err(|e| anyhow!(e))?,
            None => Pipeline::for_level(self.level),
        };
        let mode = if self.two_rounds {
            BuildMode::TwoRounds { publish: None }
        } else {
            BuildMode::Local
        };
        if self.two_rounds && !pipeline.uses_cgdata() {
            return Err(anyhow!("two rounds need the `merge` or `outline` pass (-Oz)").into());
        }
        pipeline.profile = self.profile.read()?;
        Ok(Build {
            pipeline,
            level: self.level,
            mode,
            backend: Backend::Objects(self.target),
            jobs,
            units: Units::PerModule,
            code_model: self.code_model,
            runtime: self.runtime,
        })
    }
}

/// The given files must be a Pare program (the plan and compile actions
/// lower Pare; `.clif` programs are built with `parec build`).
fn check_pare(files: &[PathBuf]) -> Result<(), Failure> {
    match files
        .iter()
        .find(|f| f.extension().is_none_or(|e| e != "pare"))
    {
        None if !files.is_empty() => Ok(()),
        None => Err(anyhow!("no input files").into()),
        Some(file) => Err(anyhow!(
            "separate compilation takes a Pare program (.pare files), not `{}`",
            file.display()
        )
        .into()),
    }
}

/// `parec plan FILES -o PLAN`: the program plan, `jobs` modules at a time.
pub fn plan(
    files: &[PathBuf],
    out: &Path,
    flags: &ActionFlags,
    jobs: usize,
) -> Result<i32, Failure> {
    check_pare(files)?;
    let mut outputs = Outputs::default();
    outputs.file(out, "-o");
    let inputs: Vec<PathBuf> = files
        .iter()
        .chain(&flags.profile.use_file)
        .cloned()
        .collect();
    outputs.check(&inputs)?;
    let build = flags.build(jobs)?;
    let plan = build.plan(files, &outputs)?;
    plan.write(out)?;
    Ok(0)
}

/// Options of `parec compile`.
#[derive(Clone, Debug)]
pub struct CompileOptions {
    pub files: Vec<PathBuf>,
    /// The module to compile (a source module's name, or the runtime's).
    pub module: String,
    pub plan: PathBuf,
    /// The object (optional in round 1).
    pub out: Option<PathBuf>,
    /// Round 1: write the module's merge summary and outline tree here.
    pub generate: Option<PathBuf>,
    /// Round 2: outline against this cgdata's tree (round 1's, merged).
    pub use_file: Option<PathBuf>,
    pub target: Target,
    pub level: OptLevel,
    pub passes: Option<String>,
    pub code_model: CodeModel,
    pub runtime: RuntimeChoice,
    /// The profile flags; they must be the plan's.
    pub profile: ProfileFlags,
}

/// `parec compile`: one module of a program to its object, its round-1
/// cgdata, or both.
pub fn compile(opts: &CompileOptions) -> Result<i32, Failure> {
    check_pare(&opts.files)?;
    if opts.out.is_none() && opts.generate.is_none() {
        return Err(anyhow!("`parec compile` needs -o OBJECT or --cgdata-generate FILE").into());
    }
    let mut outputs = Outputs::default();
    if let Some(out) = &opts.out {
        outputs.file(out, "-o");
    }
    if let Some(generate) = &opts.generate {
        outputs.file(generate, "--cgdata-generate");
    }
    let inputs: Vec<PathBuf> = opts
        .files
        .iter()
        .chain([&opts.plan])
        .chain(&opts.use_file)
        .chain(&opts.profile.use_file)
        .cloned()
        .collect();
    outputs.check(&inputs)?;
    let plan = ProgramPlan::read(&opts.plan)?;
    let tree = match &opts.use_file {
        Some(path) => round1_tree(path, opts.target)?,
        None => None,
    };
    let flags = ActionFlags {
        target: opts.target,
        level: opts.level,
        passes: opts.passes.clone(),
        two_rounds: opts.generate.is_some() || opts.use_file.is_some(),
        code_model: opts.code_model,
        runtime: opts.runtime,
        profile: opts.profile.clone(),
    };
    let build = flags.build(1)?;
    let done = build.run_module(&opts.files, &opts.module, &plan, tree, &outputs)?;
    let object = &done.output.objects[0];
    if let Some(path) = &opts.generate {
        let mut data = CgData::new(&opts.target.cgdata_name());
        done.summaries.put_into(&mut data);
        if build.pipeline.outlines(opts.target.triple().architecture) {
            data.put(&object.outline_tree);
        }
        cgdata_file::write_if_changed(path, &data.encode())?;
    }
    if let Some(out) = &opts.out {
        io_error::write_if_changed(out, &object.bytes)?;
    }
    Ok(0)
}

/// The outline tree of a round-1 cgdata file (made for `target`), if it
/// has one.
fn round1_tree(path: &Path, target: Target) -> Result<Option<Arc<OutlineTree>>, Failure> {
    Ok(CgDataInput::read(path, target)?.tree)
}

/// `parec link OBJS -o EXE`: the executable `parec build` links from the
/// same objects (freestanding when the runtime among them is: see
/// [`link::runtime_of_objects`]).
pub fn link(
    objects: &[PathBuf],
    out: &Path,
    target: Target,
    icf: Icf,
    strip: bool,
) -> Result<i32, Failure> {
    if objects.is_empty() {
        return Err(anyhow!("no objects to link").into());
    }
    let mut outputs = Outputs::default();
    outputs.file(out, "-o");
    outputs.check(objects)?;
    if let Some(missing) = objects.iter().find(|o| !o.is_file()) {
        return Err(anyhow!("cannot read the object `{}`", missing.display()).into());
    }
    let options = LinkOptions {
        target,
        icf,
        runtime: link::runtime_of_objects(objects)?,
        strip,
    };
    link::link_executable(objects, out, &options)?;
    Ok(0)
}
