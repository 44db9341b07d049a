//! Build rounds: how global function merging sees the whole program.
//!
//! The pipeline ([`crate::clif_pipeline`]) fixes where merging runs; this
//! module decides what it knows. A build is split at [`Pass::Merge`]
//! ([`crate::clif_pipeline::Pipeline::split_at_merge`]):
//!
//! 1. the passes before merging run on every module;
//! 2. *round 1* (`--two-rounds`, `--cgdata-generate FILE`): every module is
//!    analysed ([`merge::analyze`]) and the union of the summaries is combined
//!    into a merge plan (and, for `--cgdata-generate`, written as cgdata);
//!    or (`--cgdata-use FILE`) the summary of an earlier build is read and
//!    combined; or, with neither, each module merges locally;
//! 3. *round 2*: every module is merged with the plan, then the passes after
//!    merging and code generation run ([`object::compile_all`]).
//!
//! Round 1 needs only CLIF, so a two-round build analyses each module once
//! more but generates code once. The summary is a sorted set, so the cgdata
//! bytes do not depend on module order or `-j`.
//!
//! After linking, [`link_report`] counts the `.Tgm` bodies in the executable's
//! symbol table and how many of them the linker folded (equal addresses); a
//! merged function whose body was not folded is a *mismatch* (the paper's
//! Table 3: it became a thunk for nothing).

use std::path::{Path, PathBuf};

use ::object::{Object as _, ObjectSymbol as _};
use anyhow::{anyhow, bail, Context as _, Result};
use cranelift_codegen::isa::TargetIsa;
use parec_passes::cgdata::{CgData, MAGIC};
use parec_passes::clif_module::ClifModule;
use parec_passes::merge::{self, MergeOptions, MergePlan, MergeReport, MergeStats, Summary};
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

/// What a build knows about merging.
#[derive(Clone, Debug, Default)]
pub struct MergeSetup {
    /// Write the round-1 summary here (`--cgdata-generate`).
    pub generate: Option<PathBuf>,
    /// Merge with the summary of an earlier build (`--cgdata-use`).
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
    let (modules, rest, outcome) = run_through_merge(modules, opts, setup)?;
    let rest = ObjectOptions {
        pipeline: rest,
        ..opts.clone()
    };
    Ok((object::compile_all(modules, &rest)?, outcome))
}

/// Runs every CLIF pass of `opts.pipeline` on `modules`, merging as `setup`
/// says (for `--emit clif`).
pub fn run_all_passes(
    modules: Vec<ClifModule>,
    opts: &ObjectOptions,
    setup: &MergeSetup,
) -> Result<(Vec<ClifModule>, Option<MergeOutcome>)> {
    let (mut modules, rest, outcome) = run_through_merge(modules, opts, setup)?;
    let isa = opts.target.isa(opts.level)?;
    for m in &mut modules {
        rest.run(m, Some(&*isa))
            .map_err(|e| anyhow!("module `{}`: {e}", m.name))?;
    }
    Ok((modules, outcome))
}

/// Runs the passes up to and including merging; returns the modules and the
/// pipeline of the passes after merging.
fn run_through_merge(
    mut modules: Vec<ClifModule>,
    opts: &ObjectOptions,
    setup: &MergeSetup,
) -> Result<(Vec<ClifModule>, Pipeline, Option<MergeOutcome>)> {
    let Some((before, after)) = opts.pipeline.split_at_merge() else {
        if setup.is_global() {
            bail!(
                "--two-rounds and --cgdata-* need the `{}` pass (-Oz)",
                Pass::Merge.name()
            );
        }
        return Ok((modules, opts.pipeline.clone(), None));
    };
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

    let options = merge_options_for(Some(&*isa));
    let (plan, mode) = plan_for(&modules, opts.target, setup, &options)?;
    let reports: Vec<MergeReport> = pool.install(|| {
        modules
            .par_iter_mut()
            .map(|m| merge::run(m, plan.as_ref(), &options))
            .collect()
    });
    if opts.pipeline.verify {
        for m in &modules {
            verify_module(m, Some(&*isa)).map_err(|e| {
                anyhow!(
                    "module `{}`: after pass `{}`: {e}",
                    m.name,
                    Pass::Merge.name()
                )
            })?;
        }
    }
    let mut outcome = MergeOutcome {
        mode,
        ..MergeOutcome::default()
    };
    for report in reports {
        outcome.stats.accumulate(&report.stats);
        outcome.remarks.extend(report.remarks);
    }
    Ok((modules, after, Some(outcome)))
}

/// Round 1 or the cgdata file: the plan round 2 merges with (`None`: local).
fn plan_for(
    modules: &[ClifModule],
    target: Target,
    setup: &MergeSetup,
    options: &MergeOptions,
) -> Result<(Option<MergePlan>, String)> {
    if setup.two_rounds || setup.generate.is_some() {
        let summary = summarize(modules, options);
        if let Some(path) = &setup.generate {
            let mut data = CgData::new(&cgdata_target(target));
            data.put(&summary);
            write_cgdata(path, &data.encode())?;
        }
        return Ok((
            Some(merge::combine(&summary, options)),
            "two rounds".to_string(),
        ));
    }
    if let Some(path) = &setup.use_file {
        match read_summary(path, target) {
            Ok(summary) => {
                return Ok((
                    Some(merge::combine(&summary, options)),
                    format!("cgdata {}", path.display()),
                ))
            }
            Err(e) if setup.ignore_errors => {
                eprintln!("warning: {e:#}; merging locally without it");
            }
            Err(e) => return Err(e.context("use --cgdata-ignore-errors to build without it")),
        }
    }
    Ok((None, "local".to_string()))
}

/// The union of every module's summary (independent of module order).
pub fn summarize(modules: &[ClifModule], options: &MergeOptions) -> Summary {
    let mut summary = Summary::default();
    for m in modules {
        parec_passes::cgdata::Section::merge(&mut summary, merge::analyze(m, options));
    }
    summary
}

/// Reads a cgdata file and its merge summary (empty if it has none).
pub fn read_summary(path: &Path, target: Target) -> Result<Summary> {
    let data = read_cgdata(path, Some(&cgdata_target(target)))?;
    Ok(data
        .get::<Summary>()
        .map_err(|e| anyhow!("`{}`: {e}", path.display()))?
        .unwrap_or_default())
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
    Ok(format!(
        "merge ({}): {} functions, {} merged into .Tgm bodies ({:.1}%), {} bodies folded by the linker, {} mismatched ({:.1}% of functions, {:.1}% of merged)",
        outcome.mode,
        outcome.stats.functions,
        outcome.stats.merged,
        100.0 * outcome.stats.merged as f64 / total,
        folded,
        unfolded,
        100.0 * unfolded as f64 / total,
        100.0 * unfolded as f64 / outcome.stats.merged.max(1) as f64,
    ))
}
