//! The one function every compilation goes through, and the build mode.
//!
//! [`Build::run`] is parec: `parec run` (the JIT), `parec build` (objects,
//! executables, assembly, CLIF), `parec opt`, the differential tester and
//! the benchmarks all describe a [`Build`] and call it. It runs, in order:
//!
//! | stage          | works on                 | what                                                 |
//! |----------------|--------------------------|------------------------------------------------------|
//! | front end      | sources                  | Pare: load, check, lower ([`crate::frontend`]); `.clif` files arrive as modules |
//! | profile        | every [`ClifModule`]     | with `--profile-use`: [`Pipeline::heat`] from the profile, per module, on the front end's CLIF ([`crate::profile::heat_of`]) |
//! | units          | every [`ClifModule`]     | with [`Units::WholeProgram`] (`--lto`), all modules linked into one |
//! | CLIF passes    | every [`ClifModule`]     | [`Pipeline::clif`] in order, merging given its plan; verifier after each |
//! | Cranelift      | every function           | e-graph, lowering, register allocation, emission ([`crate::codegen`]) |
//! | machine passes | every module's code      | [`Pipeline::machine`] in order, outlining given its tree |
//! | objects        | every module             | one ELF object each, `.llvm_addrsig` ([`crate::object`]) |
//! | round 2        | every module             | with `--two-rounds`: the outliner and objects again, against round 1's tree, on round 1's Cranelift code (the CLIF is the same) |
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
//! build with outlining outlines and writes objects twice — on the same
//! Cranelift code, which round 2 takes from round 1
//! ([`codegen::LoweredModule`]): both rounds compile the same CLIF. Both cgdata sections are
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
use pare_frontend::lower::Runtime;
use parec_passes::cgdata::{CgData, Section as _};
use parec_passes::clif_module::{ClifModule, CodegenSettings, Linkage};
use parec_passes::code_cache::CodeCache;
use parec_passes::fmerge::{FmergeStats, FmergeTimes};
use parec_passes::inline::Policy;
use parec_passes::merge::{self, InlinerSummary, MergeOptions, MergePlan, MergeStats, Summary};
use parec_passes::outline::global::OutlineTree;
use parec_passes::remark::Remark;
use parec_passes::traps::TrapPaths;
use parec_passes::whole_program;
use parec_passes::{guard, gvn};

use crate::codegen::{self, CodeModel, CodegenOptions, CompiledObject, Lowering, OutlineContext};
use crate::outputs::Outputs;
use crate::pipeline::{
    verify_modules, BuildView, ClifPass, GuardView, PassOutcome, PassStats, Pipeline,
};
use crate::plan::{PassFacts, PlanFlags, ProgramPlan};
use crate::runtime::RuntimeChoice;
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
    /// The summary the inliner planned with in round 1 ([`InlinerSummary`]).
    pub inliner: Option<Summary>,
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
            inliner: data
                .get::<InlinerSummary>()
                .map_err(section_error)?
                .map(|s| s.0),
            tree: data
                .get::<OutlineTree>()
                .map_err(section_error)?
                .map(Arc::new),
        })
    }
}

impl CgDataInput {
    /// This input, if `pipeline` can plan from it: a pipeline whose
    /// inliner runs before merging needs the summary the inliner of
    /// round 1 planned with (its prices read the plan's members, and a plan
    /// combined from the summary taken after inlining has others: the
    /// executable would not be the one `--two-rounds` makes).
    fn check_for(self, pipeline: &Pipeline) -> Result<CgDataInput> {
        let inliner_plans = pipeline
            .clif
            .iter()
            .any(|&p| matches!(p, ClifPass::Inline(_)) && pipeline.merges_after(p));
        if self.summary.is_some() && self.inliner.is_none() && inliner_plans {
            bail!(
                "cgdata `{}` has a merge summary but no `inliner` section (the summary the \
                 inliner plans with): it was written by an older parec or by a build without \
                 the inliner before merging; generate it again with this build's passes",
                self.path.display()
            );
        }
        Ok(self)
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
            let input = CgDataInput::read(path, target).and_then(|i| i.check_for(pipeline));
            match input {
                Ok(input) => BuildMode::Use(input),
                Err(e) if flags.ignore_errors => {
                    crate::io_error::eprintln(format_args!(
                        "warning: {e:#}; building without it (local merging and outlining)"
                    ));
                    BuildMode::Local
                }
                Err(e) => bail!("{e:#}\n(use --cgdata-ignore-errors to build without it)"),
            }
        } else {
            BuildMode::Local
        };
        let uses_cgdata = pipeline.uses_cgdata();
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

    /// Whether merging plans across modules from the summaries of this
    /// build's modules (round 1 is part of the build).
    fn summarizes(&self) -> bool {
        matches!(self, BuildMode::Generate(_) | BuildMode::TwoRounds { .. })
    }

    /// The merge plan (`None`: local merging), combined from `summary`, the
    /// union of every module's summary, when the build summarizes; from
    /// the `--cgdata-use` file's summary otherwise: the one taken where
    /// the inliner ran for the inliner (`for_inliner`), the merger's for
    /// the merger.
    fn merge_plan(
        &self,
        summary: Option<&Summary>,
        for_inliner: bool,
        options: &MergeOptions,
    ) -> Option<MergePlan> {
        let summary = match self {
            BuildMode::Local => None,
            BuildMode::Generate(_) | BuildMode::TwoRounds { .. } => summary,
            BuildMode::Use(input) if for_inliner => input.inliner.as_ref(),
            BuildMode::Use(input) => input.summary.as_ref(),
        };
        summary.map(|s| merge::combine(s, options))
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
        summaries: &Summaries,
        tree: Option<&OutlineTree>,
    ) -> Result<()> {
        let Some(path) = self.publish_path() else {
            return Ok(());
        };
        let mut data = CgData::new(&target.cgdata_name());
        summaries.put_into(&mut data);
        if let Some(tree) = tree {
            data.put(tree);
        }
        cgdata_file::write(path, &data.encode())
    }
}

/// Where the cross-module facts of a build's passes come from.
#[derive(Clone, Copy)]
enum Facts<'a> {
    /// Computed from the modules: the build has the whole program.
    Computed,
    /// Taken from a plan: the build compiles one module of the program.
    Planned(&'a ProgramPlan),
}

/// The merge summaries round 1 publishes (each `None` when the pipeline
/// has no such pass or the build does not summarize).
#[derive(Clone, Debug, Default)]
pub struct Summaries {
    /// The program where merging runs.
    pub merge: Option<Summary>,
    /// The program where the inliner runs before merging, before it
    /// inlines ([`InlinerSummary`]).
    pub inliner: Option<Summary>,
}

impl Summaries {
    /// Stores the summaries present as their cgdata sections.
    pub fn put_into(&self, data: &mut CgData) {
        if let Some(summary) = &self.merge {
            data.put(summary);
        }
        if let Some(summary) = &self.inliner {
            data.put(&InlinerSummary(summary.clone()));
        }
    }
}

/// What running the CLIF passes left besides the modules.
#[derive(Default)]
struct PassesDone {
    /// Round 1's merge summaries, when the build publishes them.
    published: Summaries,
    /// What each pass read of the program, in pipeline order.
    facts: Vec<PassFacts>,
}

/// One module compiled alone ([`Build::run_module`]).
#[derive(Debug)]
pub struct ModuleBuild {
    /// The module after the passes and its object.
    pub output: Output,
    /// With two rounds: the module's merge summaries (its part of round 1's).
    pub summaries: Summaries,
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
    /// How symbols are addressed (`--code-model`; aarch64 objects).
    pub code_model: CodeModel,
    /// What an executable's runtime stands on (`--runtime`; objects and
    /// their CLIF). The JIT always stands on the C library.
    pub runtime: RuntimeChoice,
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
    /// With `--profile-use`: what the profile says of each function.
    pub profile_remarks: Vec<Remark>,
    /// What the runtime among the modules stands on: how the objects are
    /// linked ([`RuntimeChoice::settle`]).
    pub runtime: Runtime,
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
        let clif = self.profile_remarks.iter().chain(clif);
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
        self.run_compiling_through(input, outputs, None)
    }

    /// Like [`Build::run`], compiling through `cache` (every module's code
    /// cache, `parec_passes::code_cache`), which other builds may share: a
    /// function several builds compile alike is compiled once. The output
    /// is the same as without it.
    pub fn run_sharing(&self, input: Input, cache: &Arc<CodeCache>) -> Result<Output, Failure> {
        self.run_compiling_through(input, &Outputs::default(), Some(cache))
    }

    /// [`Build::run_writing`] compiling through `cache` when there is one,
    /// as [`Build::run_sharing`] does (the output is the same).
    pub fn run_compiling_through(
        &self,
        input: Input,
        outputs: &Outputs,
        cache: Option<&Arc<CodeCache>>,
    ) -> Result<Output, Failure> {
        let mut out = Output::default();

        let start = Instant::now();
        let mut front = self.front_end(input)?;
        if let Some(cache) = cache {
            for module in &mut front.modules {
                module.set_code_cache(cache.clone());
            }
        }
        let mut written = outputs.clone();
        if let Some(path) = self.mode.publish_path() {
            written.file(path, "--cgdata-generate");
        }
        written.check_not_read(&front.files)?;
        out.times.add("frontend", start.elapsed());
        out.runtime = front.runtime;
        let (modules, trap_paths) = (front.modules, front.trap_paths);
        match self.with_profile_heat(&modules, &mut out)? {
            Some(build) => build.after_front_end(modules, trap_paths, out),
            None => self.after_front_end(modules, trap_paths, out),
        }
    }

    /// With `--profile-use`: this build with [`Pipeline::heat`] computed
    /// from the profile for `modules`, the front end's CLIF (per module,
    /// before `--lto` links them: the keys are per-module CLIF's), and the
    /// profile's remarks in `out`.
    fn with_profile_heat(&self, modules: &[ClifModule], out: &mut Output) -> Result<Option<Build>> {
        let Some(profile) = &self.pipeline.profile else {
            return Ok(None);
        };
        let start = Instant::now();
        let heat = crate::profile::heat_of(modules, profile)?;
        out.profile_remarks = heat.remarks;
        let mut build = self.clone();
        build.pipeline.heat = Arc::new(heat.hot_code);
        out.times.add("profile", start.elapsed());
        Ok(Some(build))
    }

    /// Every stage after the front end (see [`Build::run_writing`]).
    fn after_front_end(
        &self,
        mut modules: Vec<ClifModule>,
        trap_paths: Option<TrapPaths>,
        mut out: Output,
    ) -> Result<Output, Failure> {
        if self.units == Units::WholeProgram && modules.len() > 1 {
            let start = Instant::now();
            let name = modules[0].name.clone();
            modules = vec![whole_program::link(modules, &name).map_err(|e| anyhow!(e))?];
            share_code_cache(&mut modules);
            out.times.add("whole-program", start.elapsed());
        }

        let isa = self.backend.isa(self.level, &common_settings(&modules)?)?;
        let isa = isa.as_deref();

        let passes = self.run_clif_passes(
            &mut modules,
            isa,
            Facts::Computed,
            trap_paths.as_ref(),
            &mut out,
        )?;
        let summaries = passes.published;

        let Backend::Objects(target) = self.backend else {
            self.mode.publish(self.target(), &summaries, None)?;
            out.modules = modules;
            return Ok(out);
        };
        let codegen = CodegenOptions {
            target,
            level: self.level,
            machine: self.pipeline.machine.clone(),
            jobs: self.jobs,
            near_symbols: self.code_model.near_symbols(&modules),
            trap_paths,
            choose_lowering: true,
        };
        let shared = codegen::shared_functions(&modules);
        let lowered = codegen::lower_all(&modules, &codegen, &shared)?;
        let context = OutlineContext {
            shared,
            global: self.mode.given_outline_tree(),
            heat: self.pipeline.heat.clone(),
        };
        let mut objects =
            codegen::emit_all(&modules, &lowered, &codegen, &context, Lowering::Counted)?;
        out.times.add_codegen(&objects);
        let outlines = self.pipeline.outlines(target.triple().architecture);
        let round1_tree = (outlines && self.mode.wants_outline_tree())
            .then(|| codegen::combined_outline_tree(&objects));
        if let (BuildMode::TwoRounds { .. }, Some(tree)) = (&self.mode, &round1_tree) {
            // Round 2 compiles the same CLIF: it reuses round 1's code and
            // only outlines again, against the program's prefix tree.
            let context = OutlineContext {
                global: Some(Arc::new(tree.clone())),
                ..context
            };
            objects = codegen::emit_all(&modules, &lowered, &codegen, &context, Lowering::Reused)?;
            out.times.add_codegen(&objects);
        }
        self.mode
            .publish(target, &summaries, round1_tree.as_ref())?;
        out.modules = modules;
        out.objects = objects;
        Ok(out)
    }

    /// Runs the CLIF passes on `modules` in pipeline order, each pass
    /// reading what it knows of the rest of the program from `facts`.
    fn run_clif_passes(
        &self,
        modules: &mut [ClifModule],
        isa: Option<&dyn TargetIsa>,
        facts: Facts,
        trap_paths: Option<&TrapPaths>,
        out: &mut Output,
    ) -> Result<PassesDone, Failure> {
        let mut done = PassesDone::default();
        let options = MergeOptions {
            heat: self.pipeline.heat.clone(),
            ..merge_options(isa)
        };
        // What the guard compares with: the modules as they came in.
        let guards = self.pipeline.guards() && self.level.guards();
        let before = guards.then(|| modules.to_vec());
        let mut merge_plan = None;
        // GVN's policy, the functions it must leave alike and every
        // function it saw, for its non-null parameters after merging.
        let mut numbered: Option<NumberedFunctions> = None;
        for (i, &pass) in self.pipeline.clif.iter().enumerate() {
            let start = Instant::now();
            let merging_follows = self.pipeline.merges_after(pass);
            let known = match facts {
                Facts::Computed => self.pass_facts(pass, merging_follows, modules, &options),
                Facts::Planned(plan) => plan.passes.get(i).cloned().ok_or_else(|| {
                    anyhow!("the plan has no record of pass {} `{}`", i + 1, pass.name())
                })?,
            };
            // Merging follows its plan; inlining before merging, what
            // merging would do to the modules as they are now.
            let inliner_plans = matches!(pass, ClifPass::Inline(_)) && merging_follows;
            let plans = pass == ClifPass::Merge || inliner_plans;
            let plan = plans
                .then(|| {
                    let summary = known.summary.as_ref();
                    self.mode.merge_plan(summary, inliner_plans, &options)
                })
                .flatten();
            if plans && self.mode.summarizes() {
                // Round 1 publishes the summaries of the modules this
                // build compiles (the whole program's, or one module's)
                // where merging and the inliner before it plan.
                let published = match pass == ClifPass::Merge {
                    true => &mut done.published.merge,
                    false => &mut done.published.inliner,
                };
                if published.is_none() {
                    *published = match facts {
                        Facts::Computed => known.summary.clone(),
                        Facts::Planned(_) => Some(summarize(modules, &options)),
                    };
                }
            }
            let view = BuildView {
                plan: plan.as_ref(),
                merging_follows,
                fmerge_follows: self.pipeline.runs_after(pass, ClifPass::Fmerge),
                shared: known.shared.as_ref(),
                heat: Some(&self.pipeline.heat),
                level: self.level,
            };
            let outcome = run_on_every_module(pass, modules, isa, &view, self.jobs)?;
            if self.pipeline.verify {
                verify_modules(modules, isa, pass.name()).map_err(|e| anyhow!(e))?;
            }
            out.passes.push(PassRun { pass, outcome });
            out.times.add(pass.name(), start.elapsed());
            if let ClifPass::Gvn(policy) = pass {
                numbered = Some(NumberedFunctions {
                    policy,
                    alike: known.shared.clone().unwrap_or_default(),
                    names: defined_names(modules),
                });
            }
            done.facts.push(known);
            if pass == ClifPass::Merge {
                merge_plan = plan;
            }
        }
        if let Some(numbered) = numbered {
            let start = Instant::now();
            let pass = ClifPass::Gvn(numbered.policy);
            let excluded = numbered.excluded(modules);
            // Measured where GVN's own run measures (its size policy, `-Oz`):
            // there a rewrite that would grow its function is not kept
            // (dropping a check can cost a move in register allocation). At
            // `-O2` and `-Os` measuring cost more compile time than it saved
            // bytes: `gvn-speed` went from 239 to 390 ms over bench/ at `-O2`,
            // and bench/pipeline's 16 bytes grew all the same.
            let guard = match numbered.policy {
                Policy::Size => isa,
                Policy::Speed => None,
            };
            let heat = self.pipeline.heat.clone();
            let mut pairs: Vec<(Option<&ClifModule>, &mut ClifModule)> = match &before {
                Some(before) => before.iter().map(Some).zip(modules.iter_mut()).collect(),
                None => modules.iter_mut().map(|m| (None, m)).collect(),
            };
            let reports = parallel::map_mut(self.jobs, &mut pairs, |(before, module)| {
                let calls = gvn::CallSites {
                    before: *before,
                    excluded: &excluded,
                };
                gvn::run_nonnull_params(module, guard, &heat, &calls)
            })?;
            if self.pipeline.verify {
                verify_modules(modules, isa, "gvn (non-null parameters)")
                    .map_err(|e| anyhow!(e))?;
            }
            // One GVN in reports: this run's counts and remarks join the pass's.
            if let Some(run) = out.passes.iter_mut().rev().find(|run| run.pass == pass) {
                for report in reports {
                    run.outcome.accumulate(PassOutcome {
                        stats: PassStats::Gvn(report.stats),
                        remarks: report.remarks,
                    });
                }
            }
            out.times.add(pass.name(), start.elapsed());
        }
        if let Some(before) = before {
            let start = Instant::now();
            let view = GuardView {
                plan: merge_plan.as_ref(),
                gvn: self.pipeline.clif.contains(&ClifPass::Gvn(Policy::Size)),
                switches: self.pipeline.clif.contains(&ClifPass::Switches),
                heat: self.pipeline.heat.clone(),
                trap_paths,
                sizer: self.guard_sizer(trap_paths),
            };
            let outcome = guard_every_module(&before, modules, isa, &view, self.jobs)?;
            if self.pipeline.verify {
                verify_modules(modules, isa, ClifPass::Guard.name()).map_err(|e| anyhow!(e))?;
            }
            out.passes.push(PassRun {
                pass: ClifPass::Guard,
                outcome,
            });
            out.times.add(ClifPass::Guard.name(), start.elapsed());
        }
        Ok(done)
    }

    /// What `pass` reads of every module of `modules`, the whole program:
    /// the inliner, the local functions several modules define; merging,
    /// and the inliner before it, the union of the summaries when the build
    /// merges across modules.
    fn pass_facts(
        &self,
        pass: ClifPass,
        merging_follows: bool,
        modules: &[ClifModule],
        options: &MergeOptions,
    ) -> PassFacts {
        let inline = matches!(pass, ClifPass::Inline(_));
        let plans = pass == ClifPass::Merge || (inline && merging_follows);
        PassFacts {
            shared: match pass {
                ClifPass::Inline(_) => Some(shared_functions(modules)),
                ClifPass::Gvn(_) => Some(parec_passes::gvn::kept_alike(modules)),
                _ => None,
            },
            summary: (plans && self.mode.summarizes()).then(|| summarize(modules, options)),
        }
    }

    /// `parec plan`: the front end and the CLIF passes on every module of a
    /// Pare program, recording what each module's compilation needs to know
    /// of the others ([`crate::plan`]). No code is generated.
    pub fn plan(&self, paths: &[PathBuf], outputs: &Outputs) -> Result<ProgramPlan, Failure> {
        let Backend::Objects(target) = self.backend else {
            return Err(anyhow!("a plan is made for objects").into());
        };
        let mut out = Output::default();
        let lowered = frontend::lower_for_aot(paths, target, self.runtime, self.profiled())?;
        outputs.check_not_read(&lowered.files)?;
        let mut modules = lowered.modules;
        let profiled = self.with_profile_heat(&modules, &mut out)?;
        let this = profiled.as_ref().unwrap_or(self);
        let isa = self.backend.isa(self.level, &common_settings(&modules)?)?;
        let trap_paths = lowered.trap_paths.as_ref();
        let passes = this.run_clif_passes(
            &mut modules,
            isa.as_deref(),
            Facts::Computed,
            trap_paths,
            &mut out,
        )?;
        Ok(ProgramPlan {
            flags: self.plan_flags(target),
            modules: modules.iter().map(|m| m.name.clone()).collect(),
            passes: passes.facts,
            codegen_shared: codegen::shared_functions(&modules),
            near_symbols: self.code_model.near_symbols(&modules),
            heat: this.pipeline.heat.as_ref().clone(),
            runtime: lowered.runtime.name().to_string(),
        })
    }

    /// The flags a plan records and a module's compilation must share.
    pub fn plan_flags(&self, target: Target) -> PlanFlags {
        PlanFlags {
            target: target.cgdata_name(),
            level: self.level.flag().to_string(),
            passes: self.pipeline.names(),
            two_rounds: matches!(self.mode, BuildMode::TwoRounds { .. }),
            code_model: self.code_model.name().to_string(),
            runtime: self.runtime.name().to_string(),
            profile: self.pipeline.profile.as_ref().map(|p| p.plan_profile()),
        }
    }

    /// `parec compile`: the module `module` of the Pare program rooted at
    /// `paths[0]`, compiled alone with the facts of `plan` (made with this
    /// build's flags), outlining against `tree` (round 2) if given. The
    /// object is the one [`Build::run`] writes for that module; with two
    /// rounds, the result also carries the module's merge summary, which
    /// with [`CompiledObject::outline_tree`] is its round-1 cgdata.
    pub fn run_module(
        &self,
        paths: &[PathBuf],
        module: &str,
        plan: &ProgramPlan,
        tree: Option<Arc<OutlineTree>>,
        outputs: &Outputs,
    ) -> Result<ModuleBuild, Failure> {
        let Backend::Objects(target) = self.backend else {
            return Err(anyhow!("a module is compiled to an object").into());
        };
        plan.check_flags(&self.plan_flags(target))?;
        let mut out = Output::default();
        let start = Instant::now();
        let lowered =
            frontend::lower_one_for_aot(paths, target, self.runtime, self.profiled(), module)?;
        outputs.check_not_read(&lowered.files)?;
        if lowered.names != plan.modules {
            return Err(anyhow!(
                "the plan is for a program with the modules {}, not {}; run `parec plan` again",
                plan.modules.join(", "),
                lowered.names.join(", ")
            )
            .into());
        }
        if lowered.runtime.name() != plan.runtime {
            return Err(anyhow!(
                "the plan is for a program whose runtime stands on {}, this one's stands on {}; \
                 run `parec plan` again",
                plan.runtime,
                lowered.runtime.name()
            )
            .into());
        }
        out.times.add("frontend", start.elapsed());
        let mut modules = vec![lowered.module];
        let this = self.with_planned_heat(plan);
        let isa = self.backend.isa(self.level, &common_settings(&modules)?)?;
        let passes = this.run_clif_passes(
            &mut modules,
            isa.as_deref(),
            Facts::Planned(plan),
            lowered.trap_paths.as_ref(),
            &mut out,
        )?;
        let codegen = CodegenOptions {
            target,
            level: self.level,
            machine: self.pipeline.machine.clone(),
            jobs: 1,
            near_symbols: plan.near_symbols,
            trap_paths: lowered.trap_paths,
            choose_lowering: true,
        };
        let context = OutlineContext {
            shared: plan.codegen_shared.clone(),
            global: tree,
            heat: this.pipeline.heat.clone(),
        };
        let object = codegen::compile_module(&modules[0], &codegen, &context)?;
        out.objects = vec![object];
        out.times.add_codegen(&out.objects);
        out.modules = modules;
        out.runtime = lowered.runtime;
        Ok(ModuleBuild {
            output: out,
            summaries: passes.published,
        })
    }

    /// How the size guard prices functions as they reach the object
    /// (`codegen::lowered_sizes`): lowered as code generation will lower
    /// them, but with the small code model's addresses (the code model is
    /// settled after the passes; both versions of a group are priced alike)
    /// and one job. `None` when the build makes no objects.
    fn guard_sizer(&self, trap_paths: Option<&TrapPaths>) -> Option<guard::Sizer> {
        let Backend::Objects(target) = self.backend else {
            return None;
        };
        let codegen = CodegenOptions {
            target,
            level: self.level,
            machine: self.pipeline.machine.clone(),
            jobs: 1,
            near_symbols: false,
            trap_paths: trap_paths.cloned(),
            choose_lowering: false,
        };
        Some(guard::Sizer(Arc::new(
            move |module: &ClifModule, functions: &[usize]| {
                codegen::lowered_sizes(module, functions, &codegen).ok()
            },
        )))
    }

    /// This build with the plan's [`HotCode`] as [`Pipeline::heat`]: what
    /// the profile says of the whole program, which the passes of one
    /// module read as they read it in the whole build (classifying the
    /// module alone would miss that a generic instance another module
    /// defines too is hot there). [`ProgramPlan::check_flags`] has checked
    /// that the plan was made with this build's profile, or none.
    fn with_planned_heat(&self, plan: &ProgramPlan) -> Build {
        let mut build = self.clone();
        build.pipeline.heat = Arc::new(plan.heat.clone());
        build
    }

    /// Whether the build uses a profile (`--profile-use`): the front end
    /// then lowers checks as the JIT that recorded it did
    /// ([`frontend::object_trap_lowering`]).
    fn profiled(&self) -> bool {
        self.pipeline.profile.is_some()
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
    /// as given (with the runtime module when their executable is
    /// freestanding: its entry point and exit); the source files it read;
    /// the shared trap paths code generation must complete the code with, if
    /// the lowering used them (never for given modules: their traps stay
    /// traps); and what the runtime stands on, settled here, the one place
    /// that knows whether the program calls C.
    fn front_end(&self, input: Input) -> Result<FrontEnd, Failure> {
        let mut front = match input {
            Input::Pare(paths) => {
                let lowered = match self.backend {
                    Backend::Jit => frontend::lower_for_jit(&paths)?,
                    _ => frontend::lower_for_aot(
                        &paths,
                        self.target(),
                        self.runtime,
                        self.profiled(),
                    )?,
                };
                FrontEnd {
                    modules: lowered.modules,
                    files: lowered.files,
                    trap_paths: lowered.trap_paths,
                    runtime: lowered.runtime,
                }
            }
            Input::Modules(mut modules) => {
                let runtime = match self.backend {
                    Backend::Objects(target) | Backend::Clif(Some(target)) => {
                        let runtime = self.runtime.settle_for_modules(&modules)?;
                        if runtime == Runtime::Freestanding {
                            // With the settings the files ask for: a build
                            // compiles every module with one set.
                            let mut module = frontend::runtime_module(target, runtime);
                            module.settings = common_settings(&modules)?;
                            modules.push(module);
                        }
                        runtime
                    }
                    Backend::Jit | Backend::Clif(None) => Runtime::Libc,
                };
                FrontEnd {
                    modules,
                    files: Vec::new(),
                    trap_paths: None,
                    runtime,
                }
            }
        };
        share_code_cache(&mut front.modules);
        Ok(front)
    }
}

/// Gives every module of a build one code cache (`parec_passes::code_cache`):
/// the passes that measure code compile a function once, whichever module
/// or pass asks, and code generation reuses what they compiled. Modules
/// that already share one (given by a library user) keep it.
fn share_code_cache(modules: &mut [ClifModule]) {
    let cache = modules
        .iter()
        .find_map(|m| m.code_cache())
        .unwrap_or_default();
    for module in modules {
        if module.code_cache().is_none() {
            module.set_code_cache(cache.clone());
        }
    }
}

/// What [`Build::front_end`] gives the later stages.
struct FrontEnd {
    modules: Vec<ClifModule>,
    /// The source files read.
    files: Vec<PathBuf>,
    trap_paths: Option<TrapPaths>,
    runtime: Runtime,
}

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

/// The size guard on every module, `jobs` at a time, against `before`, the
/// modules as they came in; the outcomes are summed in module order.
fn guard_every_module(
    before: &[ClifModule],
    modules: &mut [ClifModule],
    isa: Option<&dyn TargetIsa>,
    view: &GuardView,
    jobs: usize,
) -> Result<PassOutcome> {
    let mut pairs: Vec<(&ClifModule, &mut ClifModule)> = before.iter().zip(modules).collect();
    let outcomes = parallel::map_mut(jobs, &mut pairs, |(before, after)| {
        crate::pipeline::run_guard(before, after, isa, view)
    })?;
    let mut total = PassOutcome::nothing(ClifPass::Guard);
    for outcome in outcomes {
        total.accumulate(outcome);
    }
    Ok(total)
}

/// What GVN saw, for its non-null parameters after merging
/// (`parec_passes::gvn::run_nonnull_params`).
struct NumberedFunctions {
    policy: Policy,
    /// The functions that must stay alike (`parec_passes::gvn::kept_alike`,
    /// the GVN pass's facts: the whole program's, also in a plan).
    alike: BTreeSet<String>,
    /// The functions the modules defined when GVN ran.
    names: BTreeSet<String>,
}

impl NumberedFunctions {
    /// The functions not to specialize: those that must stay alike, and
    /// those the passes after GVN made (merged bodies, which several
    /// modules may hold alike, and similar-function merges).
    fn excluded(&self, modules: &[ClifModule]) -> BTreeSet<String> {
        let made_after = defined_names(modules)
            .into_iter()
            .filter(|name| !self.names.contains(name));
        self.alike.iter().cloned().chain(made_after).collect()
    }
}

/// The names of the functions `modules` define.
fn defined_names(modules: &[ClifModule]) -> BTreeSet<String> {
    modules
        .iter()
        .flat_map(|m| {
            m.functions
                .iter()
                .map(|d| m.symbols[d.symbol as usize].name.clone())
        })
        .collect()
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
