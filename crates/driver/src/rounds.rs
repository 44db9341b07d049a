//! Build rounds: how global function merging and global outlining see the
//! whole program.
//!
//! The pipeline ([`crate::clif_pipeline`]) fixes where the passes run; this
//! module decides what they know. A build is split at [`Pass::Merge`]
//! ([`crate::clif_pipeline::Pipeline::split_at_merge`]):
//!
//! 1. the passes before merging run on every module;
//! 2. *merge round 1* (`--two-rounds`, `--cgdata-generate FILE`): every
//!    module is analysed ([`merge::analyze`]) and the union of the summaries
//!    is combined into a merge plan; or (`--cgdata-use FILE`) the summary of
//!    an earlier build is read and combined; or, with neither, each module
//!    merges locally;
//! 3. every module is merged with the plan, then the passes after merging
//!    and code generation run ([`object::compile_all_with_tree`]), where the
//!    machine outliner ([`Pass::Outline`]) works on the emitted code;
//! 4. *outline rounds* (paper §2.2): with `--two-rounds` or
//!    `--cgdata-generate`, step 3 is round 1 of outlining — each module
//!    outlines locally and publishes the stable hashes of what it outlined,
//!    combined into one prefix tree ([`object::combined_outline_tree`]).
//!    `--two-rounds` then generates code again (round 2), outlining every
//!    module against that tree; `--cgdata-use` outlines against the tree
//!    of an earlier build in a single round.
//!
//! `--cgdata-generate` writes the merge summary and the outline tree as the
//! two sections of one cgdata file. Merge round 1 needs only CLIF; outline
//! round 1 needs code, so a two-round build with outlining generates code
//! twice. Both sections are sorted sets, so the cgdata bytes do not depend
//! on module order or `-j`.
//!
//! Similar-function merging ([`Pass::Fmerge`]) runs right after merging (or
//! where it stands in a pipeline without merging), each module on its own,
//! so that its remarks join the merge outcome ([`run_fmerge`]).
//!
//! After linking, [`link_report`] counts the `.Tgm` bodies in the executable's
//! symbol table and how many of them the linker folded (equal addresses); a
//! merged function whose body was not folded is a *mismatch* (the paper's
//! Table 3: it became a thunk for nothing).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ::object::{Object as _, ObjectSymbol as _};
use anyhow::{anyhow, bail, Context as _, Result};
use cranelift_codegen::isa::TargetIsa;
use parec_passes::cgdata::{CgData, MAGIC};
use parec_passes::clif_module::ClifModule;
use parec_passes::fmerge::{self, FmergeOptions, FmergeReport, FmergeStats};
use parec_passes::merge::{self, MergeOptions, MergePlan, MergeReport, MergeStats, Summary};
use parec_passes::outline::global::OutlineTree;
use rayon::prelude::*;

use crate::clif_pipeline::{verify_module, Pass, Pipeline};
use crate::object::{self, CompiledObject, ObjectOptions};
use crate::target::Target;

/// Testing: every function hashes alike (`PAREC_MERGE_FORCE_COLLISIONS=1`).
pub const FORCE_COLLISIONS_ENV: &str = "PAREC_MERGE_FORCE_COLLISIONS";

/// The merger's options: defaults, plus the forced-collision test mode and
/// the tunable thresholds `PAREC_MERGE_MIN_INSTS` / `PAREC_MERGE_MIN_BENEFIT`
/// (bytes) from the environment.
pub fn merge_options() -> MergeOptions {
    merge_options_for(None)
}

/// [`merge_options`] for code generation by `isa`: thunks call and return
/// instead of tail-calling where Cranelift's tail calls need frame
/// pointers that the ISA does not keep (x86-64).
pub fn merge_options_for(isa: Option<&dyn TargetIsa>) -> MergeOptions {
    let mut options = MergeOptions {
        force_collisions: std::env::var(FORCE_COLLISIONS_ENV).is_ok_and(|v| v == "1"),
        ..MergeOptions::default()
    };
    let number = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
    if let Some(n) = number("PAREC_MERGE_MIN_INSTS") {
        options.min_insts = n.min(u64::from(u32::MAX)) as u32;
    }
    if let Some(n) = number("PAREC_MERGE_MIN_BENEFIT") {
        options.min_benefit = n;
    }
    if let Some(isa) = isa {
        options.tail_calls = isa.triple().architecture != target_lexicon::Architecture::X86_64
            || isa.flags().preserve_frame_pointers();
    }
    options
}

/// The similar-function merger's options: defaults, the tail-call rule of
/// [`merge_options_for`], and from the environment (unparsable values are
/// ignored, as for `PAREC_MERGE_*`): `PAREC_FMERGE_SEARCH`
/// (`adaptive`, `static`, `exhaustive`, `exhaustive-frequency`),
/// `PAREC_FMERGE_EXPLORATION` (candidates tried per function),
/// `PAREC_FMERGE_ALIGN` (`nw`, `pairwise`), `PAREC_FMERGE_MIN_INSTS`,
/// `PAREC_FMERGE_MIN_BENEFIT` (bytes), `PAREC_FMERGE_MAX_MEMBERS` (originals
/// per merged function, 2 to merge pairs only),
/// `PAREC_FMERGE_MEASURE_ALL=1` (measure what the model rejects too, to
/// evaluate it) and `PAREC_FMERGE_EXCLUDE` (comma-separated functions not
/// to touch: the hook for hot code).
pub fn fmerge_options_for(isa: Option<&dyn TargetIsa>) -> FmergeOptions {
    let var = |name: &str| std::env::var(name).ok();
    let number = |name: &str| var(name).and_then(|v| v.parse::<i64>().ok());
    let mut options = FmergeOptions {
        tail_calls: merge_options_for(isa).tail_calls,
        ..FmergeOptions::default()
    };
    if let Some(search) = var("PAREC_FMERGE_SEARCH").and_then(|v| fmerge::Search::from_name(&v)) {
        options.search = search;
    }
    if let Some(n) = number("PAREC_FMERGE_EXPLORATION").filter(|&n| n > 0) {
        options.exploration = n as usize;
    }
    match var("PAREC_FMERGE_ALIGN").as_deref() {
        Some("nw") => options.align = fmerge::AlignMode::NeedlemanWunsch,
        Some("pairwise") => options.align = fmerge::AlignMode::Pairwise,
        _ => {}
    }
    if let Some(n) = number("PAREC_FMERGE_MIN_INSTS").filter(|&n| n >= 0) {
        options.min_insts = n as usize;
    }
    if let Some(n) = number("PAREC_FMERGE_MIN_BENEFIT") {
        options.min_benefit = n;
    }
    if let Some(n) = number("PAREC_FMERGE_MAX_MEMBERS").filter(|&n| n >= 2) {
        options.max_members = n as usize;
    }
    options.measure_all = var("PAREC_FMERGE_MEASURE_ALL").is_some_and(|v| v == "1");
    if let Some(list) = var("PAREC_FMERGE_EXCLUDE") {
        options.exclude = list
            .split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(String::from)
            .collect();
    }
    options
}

/// Runs the similar-function merger on `module`. Merges are measured in
/// aarch64 bytes whatever the target (the JIT on the host merges as the
/// aarch64 build does); `isa` decides only whether thunks may tail-call.
pub fn run_fmerge(module: &mut ClifModule, isa: Option<&dyn TargetIsa>) -> FmergeReport {
    let options = fmerge_options_for(isa);
    let is_aarch64 =
        |i: &&dyn TargetIsa| i.triple().architecture == Target::Aarch64.triple().architecture;
    match isa.filter(is_aarch64) {
        Some(aarch64) => fmerge::run(module, Some(aarch64), &options),
        None => {
            let measure = Target::Aarch64.isa(crate::clif_pipeline::OptLevel::Oz).ok();
            fmerge::run(module, measure.as_deref(), &options)
        }
    }
}

/// What a build knows about the rest of the program (merging and outlining).
#[derive(Clone, Debug, Default)]
pub struct MergeSetup {
    /// Write the round-1 cgdata here (`--cgdata-generate`).
    pub generate: Option<PathBuf>,
    /// Merge and outline with the cgdata of an earlier build (`--cgdata-use`).
    pub use_file: Option<PathBuf>,
    /// A bad `use_file` is a warning, not an error (`--cgdata-ignore-errors`).
    pub ignore_errors: bool,
    /// Round 1 and round 2 in this build (`--two-rounds`).
    pub two_rounds: bool,
}

impl MergeSetup {
    /// Whether any cross-module option was given.
    pub fn is_global(&self) -> bool {
        self.generate.is_some() || self.use_file.is_some() || self.two_rounds
    }
}

/// What merging did in a build.
#[derive(Clone, Debug, Default)]
pub struct MergeOutcome {
    /// Where the plan came from: "local", "two rounds", "cgdata FILE".
    pub mode: String,
    pub stats: MergeStats,
    /// What similar-function merging did, if it ran.
    pub fmerge: Option<FmergeStats>,
    pub remarks: Vec<String>,
}

/// The cgdata target name of `target`.
pub fn cgdata_target(target: Target) -> String {
    target.triple().architecture.to_string()
}

/// Compiles `modules` to objects, running merging as `setup` says. Without
/// the merge pass in `opts.pipeline`, this is [`object::compile_all`].
pub fn compile_objects(
    modules: Vec<ClifModule>,
    opts: &ObjectOptions,
    setup: &MergeSetup,
) -> Result<(Vec<CompiledObject>, Option<MergeOutcome>)> {
    let used = load_used_cgdata(setup, opts.target)?;
    let merged = run_through_merge(modules, opts, setup, used.as_ref())?;
    let rest = ObjectOptions {
        pipeline: merged.rest,
        ..opts.clone()
    };
    let outlines = rest.pipeline.outlines() && opts.target == Target::Aarch64;
    let objects = if outlines && (setup.two_rounds || setup.generate.is_some()) {
        let round1 = object::compile_all(merged.modules.clone(), &rest)?;
        let tree = object::combined_outline_tree(&round1);
        if let Some(path) = &setup.generate {
            write_generated(path, opts.target, merged.summary.as_ref(), Some(&tree))?;
        }
        if setup.two_rounds {
            object::compile_all_with_tree(merged.modules, &rest, Some(Arc::new(tree)))?
        } else {
            round1
        }
    } else {
        if let Some(path) = &setup.generate {
            write_generated(path, opts.target, merged.summary.as_ref(), None)?;
        }
        let tree = used.and_then(|u| u.tree).map(Arc::new);
        object::compile_all_with_tree(merged.modules, &rest, tree)?
    };
    Ok((objects, merged.outcome))
}

/// Runs every CLIF pass of `opts.pipeline` on `modules`, merging as `setup`
/// says (for `--emit clif`).
pub fn run_all_passes(
    modules: Vec<ClifModule>,
    opts: &ObjectOptions,
    setup: &MergeSetup,
) -> Result<(Vec<ClifModule>, Option<MergeOutcome>)> {
    let used = load_used_cgdata(setup, opts.target)?;
    let mut merged = run_through_merge(modules, opts, setup, used.as_ref())?;
    if let Some(path) = &setup.generate {
        // No code is generated, so there is no outline tree to publish.
        write_generated(path, opts.target, merged.summary.as_ref(), None)?;
    }
    let isa = opts.target.isa(opts.level)?;
    for m in &mut merged.modules {
        merged
            .rest
            .run(m, Some(&*isa))
            .map_err(|e| anyhow!("module `{}`: {e}", m.name))?;
    }
    Ok((merged.modules, merged.outcome))
}

/// The modules after merging, and what comes next.
struct Merged {
    modules: Vec<ClifModule>,
    /// The passes after merging.
    rest: Pipeline,
    outcome: Option<MergeOutcome>,
    /// Round 1's combined summary, to publish with `--cgdata-generate`.
    summary: Option<Summary>,
}

/// The sections of a `--cgdata-use` file.
struct UsedCgData {
    path: PathBuf,
    summary: Option<Summary>,
    tree: Option<OutlineTree>,
}

/// Reads the `--cgdata-use` file, if any. A bad file is an error, or with
/// `--cgdata-ignore-errors` a warning and a build without it.
fn load_used_cgdata(setup: &MergeSetup, target: Target) -> Result<Option<UsedCgData>> {
    let Some(path) = &setup.use_file else {
        return Ok(None);
    };
    let read = || -> Result<UsedCgData> {
        let data = read_cgdata(path, Some(&cgdata_target(target)))?;
        let section_error = |e| anyhow!("cgdata `{}`: {e}", path.display());
        Ok(UsedCgData {
            path: path.clone(),
            summary: data.get::<Summary>().map_err(section_error)?,
            tree: data.get::<OutlineTree>().map_err(section_error)?,
        })
    };
    match read() {
        Ok(used) => Ok(Some(used)),
        Err(e) if setup.ignore_errors => {
            eprintln!("warning: {e:#}; building without it (local merging and outlining)");
            Ok(None)
        }
        Err(e) => Err(anyhow!(
            "{e:#}\n(use --cgdata-ignore-errors to build without it)"
        )),
    }
}

/// Writes the cgdata of round 1: the merge summary and the outline tree
/// (each if the build produced one).
fn write_generated(
    path: &Path,
    target: Target,
    summary: Option<&Summary>,
    tree: Option<&OutlineTree>,
) -> Result<()> {
    let mut data = CgData::new(&cgdata_target(target));
    if let Some(summary) = summary {
        data.put(summary);
    }
    if let Some(tree) = tree {
        data.put(tree);
    }
    write_cgdata(path, &data.encode())
}

/// Runs the passes up to and including merging; returns the modules and the
/// pipeline of the passes after merging.
fn run_through_merge(
    mut modules: Vec<ClifModule>,
    opts: &ObjectOptions,
    setup: &MergeSetup,
    used: Option<&UsedCgData>,
) -> Result<Merged> {
    let split = match opts.pipeline.split_at_merge() {
        Some((before, after)) => Some((before, true, after)),
        // Similar-function merging without merging still reports here.
        None => opts.pipeline.split_at(Pass::Fmerge).map(|(before, after)| {
            let mut rest = vec![Pass::Fmerge];
            rest.extend(after.passes);
            (
                before,
                false,
                Pipeline {
                    passes: rest,
                    ..after
                },
            )
        }),
    };
    let Some((before, merges, mut after)) = split else {
        if setup.is_global() && !opts.pipeline.outlines() {
            bail!(
                "--two-rounds and --cgdata-* need the `{}` or `{}` pass (-Oz)",
                Pass::Merge.name(),
                Pass::Outline.name()
            );
        }
        return Ok(Merged {
            modules,
            rest: opts.pipeline.clone(),
            outcome: None,
            summary: None,
        });
    };
    if !merges && setup.is_global() && !opts.pipeline.outlines() {
        bail!(
            "--two-rounds and --cgdata-* need the `{}` or `{}` pass (-Oz)",
            Pass::Merge.name(),
            Pass::Outline.name()
        );
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.jobs.max(1))
        .build()
        .map_err(|e| anyhow!("cannot start {} compile threads: {e}", opts.jobs))?;
    let isa = opts.target.isa(opts.level)?;
    pool.install(|| {
        modules.par_iter_mut().try_for_each(|m| {
            before
                .run(m, Some(&*isa))
                .map_err(|e| anyhow!("module `{}`: {e}", m.name))
        })
    })?;

    let mut outcome = MergeOutcome {
        mode: "local".to_string(),
        ..MergeOutcome::default()
    };
    let mut summary = None;
    if merges {
        let options = merge_options_for(Some(&*isa));
        let (plan, mode, round1) = plan_for(&modules, setup, used, &options);
        summary = round1;
        outcome.mode = mode;
        let reports: Vec<MergeReport> = pool.install(|| {
            modules
                .par_iter_mut()
                .map(|m| merge::run(m, plan.as_ref(), &options))
                .collect()
        });
        verify_after(&modules, Pass::Merge, opts, &*isa)?;
        for report in reports {
            outcome.stats.accumulate(&report.stats);
            outcome.remarks.extend(report.remarks);
        }
    }
    if after.passes.first() == Some(&Pass::Fmerge) {
        after.passes.remove(0);
        let reports: Vec<FmergeReport> = pool.install(|| {
            modules
                .par_iter_mut()
                .map(|m| run_fmerge(m, Some(&*isa)))
                .collect()
        });
        verify_after(&modules, Pass::Fmerge, opts, &*isa)?;
        let mut stats = FmergeStats::default();
        for report in reports {
            stats.accumulate(&report.stats);
            outcome.remarks.extend(report.remarks);
        }
        outcome.fmerge = Some(stats);
    }
    Ok(Merged {
        modules,
        rest: after,
        outcome: Some(outcome),
        summary,
    })
}

/// Cranelift's verifier on every module after `pass`, if the pipeline verifies.
fn verify_after(
    modules: &[ClifModule],
    pass: Pass,
    opts: &ObjectOptions,
    isa: &dyn TargetIsa,
) -> Result<()> {
    if opts.pipeline.verify {
        for m in modules {
            verify_module(m, Some(isa))
                .map_err(|e| anyhow!("module `{}`: after pass `{}`: {e}", m.name, pass.name()))?;
        }
    }
    Ok(())
}

/// Round 1 or the cgdata file: the plan round 2 merges with (`None`:
/// local), a description of where it came from, and round 1's summary.
fn plan_for(
    modules: &[ClifModule],
    setup: &MergeSetup,
    used: Option<&UsedCgData>,
    options: &MergeOptions,
) -> (Option<MergePlan>, String, Option<Summary>) {
    if setup.two_rounds || setup.generate.is_some() {
        let summary = summarize(modules, options);
        let plan = merge::combine(&summary, options);
        let mode = if setup.two_rounds {
            "two rounds"
        } else {
            "round 1"
        };
        return (Some(plan), mode.to_string(), Some(summary));
    }
    match used {
        Some(UsedCgData {
            path,
            summary: Some(summary),
            ..
        }) => (
            Some(merge::combine(summary, options)),
            format!("cgdata {}", path.display()),
            None,
        ),
        _ => (None, "local".to_string(), None),
    }
}

/// The union of every module's summary (independent of module order).
pub fn summarize(modules: &[ClifModule], options: &MergeOptions) -> Summary {
    let mut summary = Summary::default();
    for m in modules {
        parec_passes::cgdata::Section::merge(&mut summary, merge::analyze(m, options));
    }
    summary
}

/// Reads and checks a cgdata file.
pub fn read_cgdata(path: &Path, target: Option<&str>) -> Result<CgData> {
    let bytes = std::fs::read(path).map_err(|e| {
        anyhow!(
            "cannot read cgdata `{}`: {}",
            path.display(),
            crate::commands::io_reason(&e)
        )
    })?;
    CgData::decode(&bytes, target).map_err(|e| anyhow!("cgdata `{}`: {e}", path.display()))
}

/// Writes cgdata to `path`, refusing to replace a file that is not cgdata.
pub fn write_cgdata(path: &Path, bytes: &[u8]) -> Result<()> {
    if path.is_dir() {
        bail!("`{}` is a directory", path.display());
    }
    if let Ok(existing) = std::fs::read(path) {
        if !existing.is_empty() && !existing.starts_with(MAGIC) {
            bail!(
                "`{}` exists and is not a cgdata file; refusing to overwrite it",
                path.display()
            );
        }
    }
    std::fs::write(path, bytes).map_err(|e| {
        anyhow!(
            "cannot write `{}`: {}",
            path.display(),
            crate::commands::io_reason(&e)
        )
    })
}

/// The post-link merge report: bodies in the executable, how many the
/// linker folded, and the mismatch rate of Table 3.
pub fn link_report(exe: &Path, outcome: &MergeOutcome) -> Result<String> {
    let bytes = std::fs::read(exe).with_context(|| format!("cannot read `{}`", exe.display()))?;
    let file = ::object::File::parse(&*bytes)
        .map_err(|e| anyhow!("cannot read `{}`: {e}", exe.display()))?;
    let mut bodies: Vec<u64> = file
        .symbols()
        .filter(|s| s.name().is_ok_and(|n| n.ends_with(merge::BODY_SUFFIX)))
        .map(|s| s.address())
        .collect();
    bodies.sort_unstable();
    let created = bodies.len();
    let mut unfolded = 0;
    for (i, &a) in bodies.iter().enumerate() {
        let shared = (i > 0 && bodies[i - 1] == a) || bodies.get(i + 1) == Some(&a);
        if !shared {
            unfolded += 1;
        }
    }
    let mut distinct = bodies.clone();
    distinct.dedup();
    let folded = created - distinct.len();
    let total = outcome.stats.functions.max(1) as f64;
    let mut report = format!(
        "merge ({}): {} functions, {} merged into .Tgm bodies ({:.1}%), {} bodies folded by the linker, {} mismatched ({:.1}% of functions, {:.1}% of merged)",
        outcome.mode,
        outcome.stats.functions,
        outcome.stats.merged,
        100.0 * outcome.stats.merged as f64 / total,
        folded,
        unfolded,
        100.0 * unfolded as f64 / total,
        100.0 * unfolded as f64 / outcome.stats.merged.max(1) as f64,
    );
    if let Some(stats) = &outcome.fmerge {
        report.push_str(&format!("\nfmerge: {stats}"));
    }
    Ok(report)
}
