//! The one function every compilation goes through, and the build mode.
//!
//! [`Build::run`] is parec: `parec run` (the JIT), `parec build` (objects,
//! executables, assembly, CLIF), `parec opt`, the differential tester and
//! the benchmarks all describe a [`Build`] and call it. It runs, in order:
//!
//! | stage          | works on                 | what                                                 |
//! |----------------|--------------------------|------------------------------------------------------|
//! | front end      | sources                  | Pare: load, check, lower ([`crate::frontend`]); `.clif` files arrive as modules |
//! | units          | every [`ClifModule`]     | with [`Units::WholeProgram`] (`--lto`), all modules linked into one |
//! | CLIF passes    | every [`ClifModule`]     | [`Pipeline::clif`] in order, merging given its plan; verifier after each |
//! | Cranelift      | every function           | e-graph, lowering, register allocation, emission ([`crate::codegen`]) |
//! | machine passes | every module's code      | [`Pipeline::machine`] in order, outlining given its tree |
//! | objects        | every module             | one ELF object each, `.llvm_addrsig` ([`crate::object`]) |
//! | round 2        | every module             | with `--two-rounds`: Cranelift, machine passes and objects again, outlining against round 1's tree |
//! | cgdata         | the build                | with `--cgdata-generate`: round 1's merge summary and outline tree |
//!
//! The [`Backend`] says where a build stops: the JIT and `--emit clif` take
//! the modules after the CLIF passes; objects go on to the end.
//!
//! # Build modes
//!
//! What merging and outlining know of the rest of the program is the
//! [`BuildMode`], settled once from the command line ([`BuildMode::settle`],
//! like LLVM's `initializeOutlinerMode`); nothing after it looks at the
//! flags again:
//!
//! - [`BuildMode::Local`]: each module merges and outlines on its own;
//! - [`BuildMode::Generate`] (round 1, `--cgdata-generate F`): merging uses
//!   the union of every module's summary ([`merge::analyze`]) and the build
//!   publishes that summary and the prefix tree of what every module
//!   outlined, as the two sections of one cgdata file;
//! - [`BuildMode::Use`] (`--cgdata-use F`): one round with the summary and
//!   tree of an earlier build;
//! - [`BuildMode::TwoRounds`] (`--two-rounds`; [GFO], [GFM] §2.2 in
//!   docs/DESIGN.md's references): round 1 as in `Generate`, then code generation again,
//!   every module outlining against round 1's tree.
//!
//! Merge round 1 needs only CLIF; outline round 1 needs code, so a two-round
//! build with outlining generates code twice. Both cgdata sections are
//! sorted sets, so the cgdata bytes do not depend on module order or `-j`.
//!
//! # Invariants
//!
//! - Modules are processed `jobs` at a time and always returned in input
//!   order; every pass works on one module at a time (merging reads the
//!   plan, computed from all of them before any is rewritten), so the output
//!   is the same for every `-j`.
//! - With [`Pipeline::verify`], Cranelift's verifier checks every function
//!   after every CLIF pass, and this is the only place that runs it.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Result};
use cranelift_codegen::isa::{OwnedTargetIsa, TargetIsa};
use parec_passes::cgdata::{CgData, Section as _};
use parec_passes::clif_module::{ClifModule, CodegenSettings, Linkage};
use parec_passes::fmerge::{FmergeStats, FmergeTimes};
use parec_passes::merge::{self, MergeOptions, MergePlan, MergeStats, Summary};
use parec_passes::outline::global::OutlineTree;
use parec_passes::remark::Remark;
use parec_passes::traps::TrapPaths;
use parec_passes::whole_program;

use crate::codegen::{self, CodegenOptions, CompiledObject};
use crate::outputs::Outputs;
use crate::pipeline::{verify_modules, BuildView, ClifPass, PassOutcome, PassStats, Pipeline};
use crate::target::{common_settings, merge_options, Machine, OptLevel, Target};
use crate::{cgdata_file, frontend, parallel, Failure};

/// What a compilation starts from.
#[derive(Clone, Debug)]
pub enum Input {
    /// A Pare program: the root module's file first.
    Pare(Vec<PathBuf>),
    /// CLIF modules (`.clif` files, a test's or another front end's).
    Modules(Vec<ClifModule>),
}

/// Where a compilation ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// ELF objects for the target: every stage.
    Objects(Target),
    /// CLIF for the host JIT (Pare is lowered as one module plus the
    /// runtime); the size guard and the verifier use the host ISA.
    Jit,
    /// CLIF after the passes (`--emit clif`, `parec opt`): the size guard
    /// and verifier use the target's ISA, or none.
    Clif(Option<Target>),
}

impl Backend {
    /// Where the code runs, if it is compiled.
    fn machine(self) -> Option<Machine> {
        match self {
            Backend::Objects(target) | Backend::Clif(Some(target)) => Some(Machine::Target(target)),
            Backend::Jit => Some(Machine::Host),
            Backend::Clif(None) => None,
        }
    }

    /// The ISA the CLIF passes measure code size with, if any, for modules
    /// asking for `settings`.
    fn isa(self, level: OptLevel, settings: &CodegenSettings) -> Result<Option<OwnedTargetIsa>> {
        self.machine()
            .map(|machine| machine.isa(level, settings))
            .transpose()
    }
}

/// The command-line flags that choose a [`BuildMode`].
#[derive(Clone, Debug, Default)]
pub struct ModeFlags {
    /// `--cgdata-generate FILE`.
    pub generate: Option<PathBuf>,
    /// `--cgdata-use FILE`.
    pub use_file: Option<PathBuf>,
    /// `--cgdata-ignore-errors`: a bad `use_file` is a warning, not an error.
    pub ignore_errors: bool,
    /// `--two-rounds`.
    pub two_rounds: bool,
}

/// What merging and outlining know of the rest of the program.
#[derive(Clone, Debug, Default)]
pub enum BuildMode {
    /// Each module on its own.
    #[default]
    Local,
    /// Round 1 only: merge with every module's summary; write the summary
    /// and the outline tree to this file.
    Generate(PathBuf),
    /// One round with the cgdata of an earlier build.
    Use(CgDataInput),
    /// Round 1 and round 2 in this build; round 1's cgdata is also written
    /// to `publish` if given.
    TwoRounds { publish: Option<PathBuf> },
}

/// The sections of a `--cgdata-use` file.
#[derive(Clone, Debug)]
pub struct CgDataInput {
    pub path: PathBuf,
    pub summary: Option<Summary>,
    pub tree: Option<Arc<OutlineTree>>,
}

impl CgDataInput {
    /// Reads a cgdata file made for `target`.
    pub fn read(path: &std::path::Path, target: Target) -> Result<CgDataInput> {
        let data = cgdata_file::read(path, Some(&target.cgdata_name()))?;
        let section_error = |e| anyhow!("cgdata `{}`: {e}", path.display());
        Ok(CgDataInput {
            path: path.to_path_buf(),
            summary: data.get::<Summary>().map_err(section_error)?,
            tree: data
                .get::<OutlineTree>()
                .map_err(section_error)?
                .map(Arc::new),
        })
    }
}

impl BuildMode {
    /// Settles the mode from the flags, reading a `--cgdata-use` file (a bad
    /// one is an error, or with `--cgdata-ignore-errors` a warning and a
    /// local build). Cross-module modes need a pass that uses them.
    pub fn settle(flags: &ModeFlags, target: Target, pipeline: &Pipeline) -> Result<BuildMode> {
        let mode = if flags.two_rounds {
            BuildMode::TwoRounds {
                publish: flags.generate.clone(),
            }
        } else if let Some(path) = &flags.generate {
            BuildMode::Generate(path.clone())
        } else if let Some(path) = &flags.use_file {
            match CgDataInput::read(path, target) {
                Ok(input) => BuildMode::Use(input),
                Err(e) if flags.ignore_errors => {
                    eprintln!("warning: {e:#}; building without it (local merging and outlining)");
                    BuildMode::Local
                }
                Err(e) => bail!("{e:#}\n(use --cgdata-ignore-errors to build without it)"),
            }
        } else {
            BuildMode::Local
        };
        let uses_cgdata = pipeline.merges() || !pipeline.machine.is_empty();
        if !matches!(mode, BuildMode::Local) && !uses_cgdata {
            bail!("--two-rounds and --cgdata-* need the `merge` or `outline` pass (-Oz)");
        }
        Ok(mode)
    }

    /// Whether merging and outlining see more than one module.
    pub fn is_global(&self) -> bool {
        !matches!(self, BuildMode::Local)
    }

    /// Where the merge plan comes from, for reports.
    pub fn describe(&self) -> String {
        match self {
            BuildMode::Local => "local".to_string(),
            BuildMode::Generate(_) => "round 1".to_string(),
            BuildMode::Use(input) if input.summary.is_some() => {
                format!("cgdata {}", input.path.display())
            }
            BuildMode::Use(_) => "local".to_string(),
            BuildMode::TwoRounds { .. } => "two rounds".to_string(),
        }
    }

    /// The merge plan of `modules` (`None`: local merging), and round 1's
    /// summary when this build publishes it.
    fn merge_plan(&self, modules: &[ClifModule], options: &MergeOptions) -> MergePlanning {
        match self {
            BuildMode::Local => MergePlanning::default(),
            BuildMode::Generate(_) | BuildMode::TwoRounds { .. } => {
                let summary = summarize(modules, options);
                MergePlanning {
                    plan: Some(merge::combine(&summary, options)),
                    summary: Some(summary),
                }
            }
            BuildMode::Use(input) => MergePlanning {
                plan: input.summary.as_ref().map(|s| merge::combine(s, options)),
                summary: None,
            },
        }
    }

    /// The outline tree of an earlier build that round 1 outlines against.
    fn given_outline_tree(&self) -> Option<Arc<OutlineTree>> {
        match self {
            BuildMode::Use(input) => input.tree.clone(),
            _ => None,
        }
    }

    /// Whether round 1's outline tree is wanted: published, or used by
    /// round 2.
    fn wants_outline_tree(&self) -> bool {
        matches!(self, BuildMode::Generate(_) | BuildMode::TwoRounds { .. })
    }

    /// The file round 1's cgdata goes to, if any.
    fn publish_path(&self) -> Option<&PathBuf> {
        match self {
            BuildMode::Generate(path) => Some(path),
            BuildMode::TwoRounds { publish } => publish.as_ref(),
            _ => None,
        }
    }

    /// Writes round 1's cgdata (each section the build produced) if this
    /// build publishes it.
    fn publish(
        &self,
        target: Target,
        summary: Option<&Summary>,
        tree: Option<&OutlineTree>,
    ) -> Result<()> {
        let Some(path) = self.publish_path() else {
            return Ok(());
        };
        let mut data = CgData::new(&target.cgdata_name());
        if let Some(summary) = summary {
            data.put(summary);
        }
        if let Some(tree) = tree {
            data.put(tree);
        }
        cgdata_file::write(path, &data.encode())
    }
}

/// A merge plan and the summary it was combined from.
#[derive(Default)]
struct MergePlanning {
    plan: Option<MergePlan>,
    summary: Option<Summary>,
}

/// The union of every module's merge summary (independent of module order).
pub fn summarize(modules: &[ClifModule], options: &MergeOptions) -> Summary {
    let mut summary = Summary::default();
    for m in modules {
        summary.merge(merge::analyze(m, options));
    }
    summary
}

/// A compilation: which passes, at which level, knowing what of the rest
/// of the program, to which end.
#[derive(Clone, Debug)]
pub struct Build {
    pub pipeline: Pipeline,
    pub level: OptLevel,
    pub mode: BuildMode,
    pub backend: Backend,
    /// Modules processed in parallel (at least 1); the output is the same
    /// for any value.
    pub jobs: usize,
    /// What the CLIF passes see: each module, or the whole program.
    pub units: Units,
}

/// The compilation units the CLIF passes and code generation work on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Units {
    /// One unit per module (separate compilation; the default).
    #[default]
    PerModule,
    /// `--lto`: every module of the program, and the runtime, linked into
    /// one CLIF module before the passes ([`whole_program::link`]), so that
    /// inlining and merging cross module boundaries and each generic
    /// instance exists once. The unit is named after the root module and
    /// becomes one object.
    WholeProgram,
}

/// What a compilation produced.
#[derive(Debug, Default)]
pub struct Output {
    /// The modules after the CLIF passes.
    pub modules: Vec<ClifModule>,
    /// One object per module, in module order ([`Backend::Objects`] only).
    pub objects: Vec<CompiledObject>,
    /// What each CLIF pass did, summed over the modules, in pipeline order.
    pub passes: Vec<PassRun>,
    pub times: StageTimes,
}

/// One CLIF pass of a compilation and what it did.
#[derive(Debug)]
pub struct PassRun {
    pub pass: ClifPass,
    pub outcome: PassOutcome,
}

impl Output {
    /// What merging did, if it ran.
    pub fn merge_stats(&self) -> Option<&MergeStats> {
        self.passes.iter().find_map(|run| match &run.outcome.stats {
            PassStats::Merge(stats) => Some(stats),
            _ => None,
        })
    }

    /// What similar-function merging did and where its time went, if it ran.
    pub fn fmerge_stats(&self) -> Option<(&FmergeStats, &FmergeTimes)> {
        self.passes.iter().find_map(|run| match &run.outcome.stats {
            PassStats::Fmerge(stats, times) => Some((stats, times)),
            _ => None,
        })
    }

    /// Every pass's remarks: the CLIF passes' in pipeline order, then the
    /// machine passes' of the objects kept (round 2's in a two-round
    /// build), in module order.
    pub fn remarks(&self) -> impl Iterator<Item = &Remark> {
        let clif = self.passes.iter().flat_map(|run| &run.outcome.remarks);
        clif.chain(self.objects.iter().flat_map(|obj| &obj.remarks))
    }
}

impl Build {
    /// Runs every stage of the compilation, in order (see the module doc).
    pub fn run(&self, input: Input) -> Result<Output, Failure> {
        self.run_writing(input, &Outputs::default())
    }

    /// Like [`Build::run`], for a command that will write `outputs`: right
    /// after the front end, stops if one of them, or the cgdata file the
    /// build publishes, is a file the front end read (the imported modules
    /// of a Pare program are known only then; see [`crate::outputs`]).
    pub fn run_writing(&self, input: Input, outputs: &Outputs) -> Result<Output, Failure> {
        let mut out = Output::default();

        let start = Instant::now();
        let (mut modules, read, trap_paths) = self.front_end(input)?;
        let mut written = outputs.clone();
        if let Some(path) = self.mode.publish_path() {
            written.file(path, "--cgdata-generate");
        }
        written.check_not_read(&read)?;
        out.times.add("frontend", start.elapsed());

        if self.units == Units::WholeProgram && modules.len() > 1 {
            let start = Instant::now();
            let name = modules[0].name.clone();
            modules = vec![whole_program::link(modules, &name).map_err(|e| anyhow!(e))?];
            out.times.add("whole-program", start.elapsed());
        }

        let isa = self.backend.isa(self.level, &common_settings(&modules)?)?;
        let isa = isa.as_deref();

        let mut summary = None;
        for &pass in &self.pipeline.clif {
            let start = Instant::now();
            let merging_follows = self.pipeline.merges_after(pass);
            let planning = match pass {
                ClifPass::Merge => self.mode.merge_plan(&modules, &merge_options(isa)),
                // What merging would do to the modules as they are now.
                ClifPass::Inline(_) if merging_follows => {
                    let mut ahead = self.mode.merge_plan(&modules, &merge_options(isa));
                    ahead.summary = None;
                    ahead
                }
                _ => MergePlanning::default(),
            };
            summary = summary.or(planning.summary);
            let shared = matches!(pass, ClifPass::Inline(_)).then(|| shared_functions(&modules));
            let view = BuildView {
                plan: planning.plan.as_ref(),
                merging_follows,
                shared: shared.as_ref(),
            };
            let outcome = run_on_every_module(pass, &mut modules, isa, &view, self.jobs)?;
            if self.pipeline.verify {
                verify_modules(&modules, isa, pass.name()).map_err(|e| anyhow!(e))?;
            }
            out.passes.push(PassRun { pass, outcome });
            out.times.add(pass.name(), start.elapsed());
        }

        let Backend::Objects(target) = self.backend else {
            self.mode.publish(self.target(), summary.as_ref(), None)?;
            out.modules = modules;
            return Ok(out);
        };
        let codegen = CodegenOptions {
            target,
            level: self.level,
            machine: self.pipeline.machine.clone(),
            jobs: self.jobs,
            trap_paths,
        };
        let mut objects = codegen::compile_all(&modules, &codegen, self.mode.given_outline_tree())?;
        out.times.add_codegen(&objects);
        let outlines = self.pipeline.outlines(target.triple().architecture);
        let round1_tree = (outlines && self.mode.wants_outline_tree())
            .then(|| codegen::combined_outline_tree(&objects));
        if let (BuildMode::TwoRounds { .. }, Some(tree)) = (&self.mode, &round1_tree) {
            objects = codegen::compile_all(&modules, &codegen, Some(Arc::new(tree.clone())))?;
            out.times.add_codegen(&objects);
        }
        self.mode
            .publish(target, summary.as_ref(), round1_tree.as_ref())?;
        out.modules = modules;
        out.objects = objects;
        Ok(out)
    }

    /// The target whose code the build is for (the host's JIT counts as
    /// its default target for cgdata).
    fn target(&self) -> Target {
        match self.backend {
            Backend::Objects(target) | Backend::Clif(Some(target)) => target,
            Backend::Jit | Backend::Clif(None) => Target::default(),
        }
    }

    /// The front end: Pare sources lowered for the backend, or the modules
    /// as given; the source files it read; and the shared trap paths code
    /// generation must complete the code with, if the lowering used them
    /// (never for given modules: their traps stay traps).
    fn front_end(&self, input: Input) -> Result<FrontEndOutput, Failure> {
        let lowered = match input {
            Input::Pare(paths) => match self.backend {
                Backend::Jit => frontend::lower_for_jit(&paths)?,
                _ => frontend::lower_for_aot(&paths, self.target())?,
            },
            Input::Modules(modules) => return Ok((modules, Vec::new(), None)),
        };
        Ok((lowered.modules, lowered.files, lowered.trap_paths))
    }
}

/// What [`Build::front_end`] gives the later stages.
type FrontEndOutput = (Vec<ClifModule>, Vec<PathBuf>, Option<TrapPaths>);

/// Runs `pass` on every module, `jobs` at a time; the outcomes are summed
/// in module order.
fn run_on_every_module(
    pass: ClifPass,
    modules: &mut [ClifModule],
    isa: Option<&dyn TargetIsa>,
    view: &BuildView,
    jobs: usize,
) -> Result<PassOutcome> {
    let outcomes = parallel::map_mut(jobs, modules, |m| pass.run(m, isa, view))?;
    let mut total = PassOutcome::nothing(pass);
    for outcome in outcomes {
        total.accumulate(outcome);
    }
    Ok(total)
}

/// The local functions that more than one module defines (generic
/// instances each using module emits), by name.
fn shared_functions(modules: &[ClifModule]) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut shared = BTreeSet::new();
    for module in modules {
        for def in &module.functions {
            let symbol = &module.symbols[def.symbol as usize];
            if symbol.linkage == Linkage::Local && !seen.insert(symbol.name.as_str()) {
                shared.insert(symbol.name.clone());
            }
        }
    }
    shared
}

/// Time spent per stage, in the order the stages first ran. Stages that
/// run on several modules at once add up their threads' times.
#[derive(Clone, Debug, Default)]
pub struct StageTimes {
    pub stages: Vec<(String, Duration)>,
}

impl StageTimes {
    /// Adds `time` to the stage called `name`.
    pub fn add(&mut self, name: &str, time: Duration) {
        match self.stages.iter_mut().find(|(n, _)| n == name) {
            Some((_, total)) => *total += time,
            None => self.stages.push((name.to_string(), time)),
        }
    }

    /// The time of the stage called `name` (zero if it did not run).
    pub fn get(&self, name: &str) -> Duration {
        self.stages
            .iter()
            .find(|(n, _)| n == name)
            .map_or(Duration::ZERO, |(_, t)| *t)
    }

    /// Adds the code-generation stages of `objects`.
    fn add_codegen(&mut self, objects: &[CompiledObject]) {
        for obj in objects {
            self.add("cranelift", obj.times.cranelift);
            for (pass, time) in &obj.times.machine {
                self.add(pass, *time);
            }
            self.add("object", obj.times.object);
        }
    }
}
