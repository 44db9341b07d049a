//! What parec's passes are, and in which order they run.
//!
//! A [`Pipeline`] holds the passes of a compilation as what they are:
//! [`ClifPass`]es, which rewrite [`ClifModule`]s before Cranelift compiles
//! them, and [`MachinePass`]es, which rewrite the machine code Cranelift
//! emitted, before it becomes an object. `-O0` / `-O2` / `-Oz` and the
//! `--passes` list only choose the lists; [`crate::build::Build::run`] is the
//! one function that runs them, with everything else a compilation does
//! (front end, Cranelift, objects, build rounds).
//!
//! The order at `-Oz` ([`Pass::ALL`]):
//!
//! ```text
//! inline   CLIF, per module            parec_passes::inline (size policy)
//! gvn      CLIF, per function          parec_passes::gvn
//! merge    CLIF, per module            parec_passes::merge (its plan: crate::build)
//! fmerge   CLIF, per module            parec_passes::fmerge (similar functions)
//! combine  CLIF, per function          parec_passes::combine (idioms Cranelift's e-graph lacks)
//! switches CLIF, per function          parec_passes::switches (tests of one value: bit tests, tables)
//! ifconv   CLIF, per function          parec_passes::ifconv (two-way joins into selects)
//! (gvn)    CLIF, per module            parec_passes::gvn::run_nonnull_params (crate::build)
//!   ── Cranelift: e-graph, lowering, register allocation, emission ──
//! peephole aarch64 code, per function  parec_passes::peephole (its code model: crate::codegen)
//! copyprop aarch64 code, per function  parec_passes::copyprop (moves into their definers)
//! frame    aarch64 code, per function  parec_passes::frame (frame-pointer omission)
//! sibcall  aarch64 code, per function  parec_passes::sibcall (returned calls become jumps)
//! epilogue aarch64 code, per function  parec_passes::epilogue (one epilogue per function)
//! outline  aarch64 code, per module    parec_passes::outline (its tree: crate::build)
//! ```
//!
//! Wherever GVN runs, it runs once more after the last CLIF pass of the
//! list (before the size guard), on the functions whose parameters every
//! call site passes non-null (`parec_passes::gvn::nonnull_params`): after
//! merging, so that the mergers compare code no call site specialized.
//!
//! At `-Oz`, when merging follows, GVN's result is checked against the
//! module's merge plan as it was before GVN: a group whose members GVN gave
//! several shapes gets its code before GVN back when one body is cheaper
//! (`parec_passes::gvn::keep_groups_alike`).
//!
//! Machine passes run only where they apply: both read and write aarch64
//! code, so builds for other targets and the JIT skip them. They run in that
//! order whatever a `--passes` list says (the outliner lifts the peepholes'
//! output; nothing lifts the outliner's).
//!
//! One machine pass is not chosen here: `parec_passes::traps` (shared trap
//! paths) completes the code of a Pare program lowered for aarch64 objects,
//! so it runs first at every level, whenever the front end's lowering asks
//! for it (`crate::frontend::Lowered::trap_paths`, carried by
//! `crate::codegen::CodegenOptions::trap_paths`; docs/DESIGN.md, "Trap
//! paths"). It is correctness, not optimization: `--passes` cannot drop it.
//!
//! Invariants:
//! - passes see modules in [`ClifModule`] form (external names are
//!   `UserExternalName { namespace: 0, index: symbol }`), never the
//!   cranelift-module ids;
//! - when [`Pipeline::verify`] is set (always in debug builds and tests),
//!   Cranelift's verifier runs on every function after every CLIF pass
//!   ([`verify_modules`]), and a verifier error stops the compilation naming
//!   the pass, the module and the function;
//! - with a target ISA, size passes keep a function's rewrite only if its
//!   machine code does not grow (see `parec_passes::gvn::run_for_size`);
//! - every pass reports its decisions as `parec_passes::remark::Remark`s
//!   ([`PassOutcome::remarks`], `CompiledObject::remarks` for machine
//!   passes), in module order (docs/REMARKS.md).
//!
//! Levels: `-O0` runs no parec pass; `-O2` runs [`Pass::SPEED`], inlining,
//! GVN and if-conversion by the speed policy (`inline-speed`, `gvn-speed`,
//! `ifconv-speed`), instruction combining, switch lowering, the peepholes, copy
//! propagation and frame-pointer omission; `-Os` (the default) runs
//! [`Pass::SIZE_AT_SPEED`] with the hot-site rules; `-Oz` runs
//! [`Pass::ALL`]. Cranelift alone, the baseline every size figure is
//! compared to, is `-O2` with an empty pass list (`--passes ''`).
//!
//! Passes outside parec (a test's deliberate miscompile, a user's own pass)
//! join a pipeline as [`ClifPass::Custom`]; they have no command-line name.

use std::collections::BTreeSet;
use std::fmt;
use std::sync::Arc;

use cranelift_codegen::ir;
use cranelift_codegen::isa::TargetIsa;
use cranelift_codegen::settings;
use parec_passes::clif_module::ClifModule;
use parec_passes::combine::{self, CombineStats};
use parec_passes::fmerge::{self, FmergeOptions, FmergeStats, FmergeTimes};
use parec_passes::guard::{self, GuardStats};
use parec_passes::gvn::{self, GvnStats};
use parec_passes::heat::HotCode;
use parec_passes::ifconv::{self, IfconvOptions, IfconvStats};
use parec_passes::inline::{self, InlineOptions, InlineStats, Policy};
use parec_passes::merge::{self, MergeOptions, MergePlan, MergeStats};
use parec_passes::price::{self, PriceOptions};
use parec_passes::remark::Remark;
use parec_passes::switches::{self, SwitchStats};
use parec_passes::traps::TrapPaths;

use crate::target::{OptLevel, Target};

/// A pass on CLIF, run on every module before Cranelift.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClifPass {
    /// Inlining bottom-up over the call graph (`parec_passes::inline`):
    /// the size policy decides in measured aarch64 bytes, the speed policy
    /// by instruction counts and loops.
    Inline(Policy),
    /// Optimistic global value numbering with PRE (`parec_passes::gvn`):
    /// the size policy keeps a function's rewrite only if its measured
    /// machine code does not grow; the speed policy keeps every rewrite
    /// (GVN removes computations and checks; it never adds one to a path).
    Gvn(Policy),
    /// Instruction combining (`parec_passes::combine`): address constants
    /// into memory offsets, narrow logical shifts, rotates, extending
    /// loads; the rules Cranelift's e-graph lacks. Never grows the CLIF.
    Combine,
    /// Switch lowering (`parec_passes::switches`): chains of tests of one
    /// value become range checks, bit tests and jump tables; a function's
    /// rewrite is kept only if its measured aarch64 code does not grow.
    Switches,
    /// If-conversion (`parec_passes::ifconv`): diamonds and triangles whose
    /// arms may run speculatively become `select`s; the size policy only
    /// where the code is no larger, the speed policy for arms of at most
    /// four instructions.
    Ifconv(Policy),
    /// Stable-hash global function merging (`parec_passes::merge`). Its plan
    /// comes from the build mode: local, round 1, or cgdata.
    Merge,
    /// Similar-function merging (`parec_passes::fmerge`): F3M search, HyFM
    /// alignment, measured profitability; on what `Merge` left.
    Fmerge,
    /// The size guard (`parec_passes::guard`): after the other CLIF passes,
    /// the groups of functions they made bigger than they came in are put
    /// back. Not a `--passes` name: it runs whenever a size pass does
    /// ([`Pipeline::guards`]).
    Guard,
    /// A pass from outside parec.
    Custom(CustomPass),
}

/// A CLIF pass that is not one of parec's: a name for reports and verifier
/// errors, and a function that rewrites one module and returns a statistics
/// line.
#[derive(Clone, Copy)]
pub struct CustomPass {
    pub name: &'static str,
    pub run: fn(&mut ClifModule) -> String,
}

impl fmt::Debug for CustomPass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CustomPass({})", self.name)
    }
}

/// Custom passes are told apart by name (function pointers have no
/// reliable identity).
impl PartialEq for CustomPass {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for CustomPass {}

impl ClifPass {
    /// The name in `--passes` lists, reports and errors.
    pub fn name(self) -> &'static str {
        match self {
            ClifPass::Inline(Policy::Size) => "inline",
            ClifPass::Inline(Policy::Speed) => "inline-speed",
            ClifPass::Gvn(Policy::Size) => "gvn",
            ClifPass::Gvn(Policy::Speed) => "gvn-speed",
            ClifPass::Combine => "combine",
            ClifPass::Switches => "switches",
            ClifPass::Ifconv(Policy::Size) => "ifconv",
            ClifPass::Ifconv(Policy::Speed) => "ifconv-speed",
            ClifPass::Merge => "merge",
            ClifPass::Fmerge => "fmerge",
            ClifPass::Guard => "guard",
            ClifPass::Custom(custom) => custom.name,
        }
    }

    /// Runs the pass on `module`. With `isa`, rewrites that grow machine code
    /// are undone. Merging works with `plan` (`None`: the module merges on
    /// its own).
    /// `view` is what the pass may know of the rest of the build.
    pub fn run(
        self,
        module: &mut ClifModule,
        isa: Option<&dyn TargetIsa>,
        view: &BuildView,
    ) -> PassOutcome {
        let plan = view.plan;
        match self {
            ClifPass::Inline(policy) => {
                let measure = measuring_isa(module, isa);
                let (options, mut remarks) =
                    inline_options(policy, module, isa, measure.get(), view);
                let report = inline::run(module, measure.get(), &options);
                remarks.extend(report.remarks);
                PassOutcome {
                    stats: PassStats::Inline(report.stats),
                    remarks,
                }
            }
            ClifPass::Gvn(policy) => {
                let guard = match policy {
                    Policy::Size => isa,
                    Policy::Speed => None,
                };
                // With merging to follow, a merge group GVN would split
                // into several shapes is priced whole against the split
                // (`parec_passes::gvn::keep_groups_alike`).
                let options = MergeOptions {
                    heat: view.heat(),
                    ..crate::target::merge_options(isa)
                };
                let before = guard
                    .filter(|_| view.merging_follows)
                    .and_then(|_| gvn::groups_before_gvn(module, &options));
                let mut report = gvn::run_module(module, guard, &view.heat());
                if let (Some(before), Some(measure)) = (before, guard) {
                    let kept = gvn::keep_groups_alike(&before, module, measure, &options);
                    report.remarks.extend(kept);
                }
                PassOutcome {
                    stats: PassStats::Gvn(report.stats),
                    remarks: report.remarks,
                }
            }
            ClifPass::Combine => {
                let report = combine::run_module(module);
                PassOutcome {
                    stats: PassStats::Combine(report.stats),
                    remarks: report.remarks,
                }
            }
            ClifPass::Switches => {
                // Measured at every level: only functions with a chain are
                // compiled, twice at most.
                let measure = measuring_isa(module, isa);
                let report = switches::run_module(module, measure.get());
                PassOutcome {
                    stats: PassStats::Switches(report.stats),
                    remarks: report.remarks,
                }
            }
            ClifPass::Ifconv(policy) => {
                let options = match policy {
                    Policy::Size => IfconvOptions::SIZE,
                    Policy::Speed => IfconvOptions::SPEED,
                };
                // Measured where the level measures (`-Oz`; at `-Os` the
                // compilations cost 12% of its compile time on bench/).
                let measure = match policy {
                    Policy::Size if view.level.guards() => measuring_isa(module, isa),
                    _ => MeasuringIsa::Own(None),
                };
                let report = ifconv::run_module(module, &options, measure.get());
                PassOutcome {
                    stats: PassStats::Ifconv(report.stats),
                    remarks: report.remarks,
                }
            }
            ClifPass::Merge => {
                let options = MergeOptions {
                    heat: view.heat(),
                    ..crate::target::merge_options(isa)
                };
                let report = merge::run(module, plan, &options);
                PassOutcome {
                    stats: PassStats::Merge(report.stats),
                    remarks: report.remarks,
                }
            }
            ClifPass::Fmerge => {
                let mut report = run_fmerge(module, isa, view);
                parec_passes::remark::fill_module(&mut report.remarks, &module.name);
                PassOutcome {
                    stats: PassStats::Fmerge(report.stats, report.times),
                    remarks: report.remarks,
                }
            }
            ClifPass::Guard => unreachable!("the guard runs through `run_guard`"),
            ClifPass::Custom(custom) => {
                PassOutcome::stats(PassStats::Custom(vec![(custom.run)(module)]))
            }
        }
    }

    /// Whether the pass trades bytes by its own measure (the size policy of
    /// inlining and GVN, both mergers): the passes the guard answers for.
    pub fn is_size_pass(self) -> bool {
        matches!(
            self,
            ClifPass::Inline(Policy::Size)
                | ClifPass::Gvn(Policy::Size)
                | ClifPass::Merge
                | ClifPass::Fmerge
        )
    }
}

/// The size guard on `after`, the module the CLIF passes made of `before`
/// (`parec_passes::guard`), measured in aarch64 bytes as the inliner and
/// the mergers measure; `plan` is the merge plan the build followed, whose
/// cross-module groups share their bodies.
pub fn run_guard(
    before: &ClifModule,
    after: &mut ClifModule,
    isa: Option<&dyn TargetIsa>,
    view: &GuardView,
) -> PassOutcome {
    let measure = measuring_isa(after, isa);
    let Some(isa) = measure.get() else {
        return PassOutcome::nothing(ClifPass::Guard);
    };
    let options = guard::GuardOptions {
        body_shares: view
            .plan
            .map_or_else(Default::default, |plan| body_shares(plan, &after.name)),
        gvn: view.gvn.then(|| view.heat.clone()),
        switches: view.switches,
        shared_traps: view
            .trap_paths
            .map(|t| t.paths.iter().map(|&(code, _)| code).collect())
            .unwrap_or_default(),
        sizer: view.sizer.clone(),
    };
    let report = guard::run(before, after, isa, &options);
    PassOutcome {
        stats: PassStats::Guard(report.stats),
        remarks: report.remarks,
    }
}

/// What the size guard knows of the build.
#[derive(Clone, Debug)]
pub struct GuardView<'a> {
    /// The merge plan the build followed.
    pub plan: Option<&'a MergePlan>,
    /// Whether GVN's size policy ran: the guard numbers the functions it
    /// puts back again.
    pub gvn: bool,
    /// Whether switch lowering ran: the guard lowers the functions it puts
    /// back again.
    pub switches: bool,
    /// What is known of how often code runs ([`Pipeline::heat`]).
    pub heat: Arc<HotCode>,
    /// The shared trap paths code generation completes the code with, if
    /// the lowering uses them.
    pub trap_paths: Option<&'a TrapPaths>,
    /// The build's measure of functions as code generation will emit them,
    /// when it makes objects (`crate::codegen::lowered_sizes`, given by the
    /// build: the pipeline does not lower code itself): the guard then
    /// prices the groups Cranelift's bytes cannot tell as they reach the
    /// object.
    pub sizer: Option<guard::Sizer>,
}

/// For each member of a group of `plan` defined in `module`, its body's
/// name and the number of modules holding members of the group.
fn body_shares(plan: &MergePlan, module: &str) -> std::collections::BTreeMap<String, usize> {
    let mut shares = std::collections::BTreeMap::new();
    for group in plan.groups.values() {
        let modules: BTreeSet<&str> = group.members.iter().map(|(m, _)| m.as_str()).collect();
        for (m, name) in &group.members {
            if m == module {
                shares.insert(format!("{name}{}", merge::BODY_SUFFIX), modules.len());
            }
        }
    }
    shares
}

/// What a CLIF pass may know of the build beyond its own module.
#[derive(Clone, Copy, Debug, Default)]
pub struct BuildView<'a> {
    /// Merging: its plan (`None`: the module merges on its own). Passes
    /// before merging: the plan merging would follow for the modules as
    /// they are now.
    pub plan: Option<&'a MergePlan>,
    /// Whether the constant merger runs later in the pipeline.
    pub merging_follows: bool,
    /// Whether similar-function merging runs later in the pipeline.
    pub fmerge_follows: bool,
    /// The inliner: local functions that several modules define: generic
    /// instances, which every module using one emits and the linker's
    /// identical-code folding keeps once. GVN: the local functions that
    /// must stay alike (`parec_passes::gvn::kept_alike`), which it does not
    /// specialize by their call sites.
    pub shared: Option<&'a BTreeSet<String>>,
    /// What is known of how often the code runs ([`Pipeline::heat`]).
    pub heat: Option<&'a Arc<HotCode>>,
    /// The build's level: at `-Os` the size passes follow the hot-site
    /// rules (`crate::target::inline_options`,
    /// `crate::target::fmerge_options`).
    pub level: OptLevel,
}

impl BuildView<'_> {
    /// What is known of how often the code runs (nothing, without a
    /// profile).
    pub fn heat(&self) -> Arc<HotCode> {
        self.heat.cloned().unwrap_or_default()
    }
}

/// The inliner's options for `module`, and the remarks of the prices they
/// follow: the merge members the size policy leaves to merging and the
/// functions it leaves to `fmerge` are priced against inlining them
/// (`parec_passes::price`, measured with `measure`); callers merging will
/// merge are left alike; functions the linker keeps one copy of
/// (instances several modules define, and functions identical to another
/// of the module's) are not deleted for what their body seems to cost.
fn inline_options(
    policy: Policy,
    module: &ClifModule,
    isa: Option<&dyn TargetIsa>,
    measure: Option<&dyn TargetIsa>,
    view: &BuildView,
) -> (InlineOptions, Vec<Remark>) {
    let mut options = InlineOptions {
        heat: view.heat(),
        ..crate::target::inline_options(policy, view.level)
    };
    let mut remarks = Vec::new();
    let merge_options = MergeOptions {
        heat: view.heat(),
        ..crate::target::merge_options(isa)
    };
    let own;
    let plan = match (view.merging_follows, view.plan) {
        (false, _) => None,
        (true, Some(plan)) => Some(plan),
        (true, None) => {
            own = merge::combine(&merge::analyze(module, &merge_options), &merge_options);
            Some(&own)
        }
    };
    if let Some(plan) = plan {
        let planned = merge::planned(module, Some(plan), &merge_options);
        options.keep = planned.members;
        options.keep_alike = planned.alike_calls;
    }
    if let (Policy::Size, Some(measure)) = (policy, measure) {
        let price_options = PriceOptions {
            fmerge: view.fmerge_follows.then(|| FmergeOptions {
                heat: view.heat(),
                ..crate::target::fmerge_options(isa, view.level)
            }),
            decide: view.level.decide(),
            merge: merge_options.clone(),
            ..PriceOptions::default()
        };
        let prices = price::price(module, measure, plan, &price_options);
        if plan.is_some() {
            options.keep = prices.keep;
            options.inline_alike = prices.inline_alike;
        }
        options.shared.extend(prices.merge_similar);
        remarks = prices.remarks;
    }
    if let Some(shared) = view.shared {
        options.shared.extend(
            module
                .functions
                .iter()
                .map(|def| &module.symbols[def.symbol as usize].name)
                .filter(|name| shared.contains(*name))
                .cloned(),
        );
    }
    // The speed policy inlines for speed: a twin's single call site is
    // inlined there whatever the linker would have shared.
    if policy == Policy::Size {
        options.shared.extend(folded_twins(module));
    }
    parec_passes::remark::fill_module(&mut remarks, &module.name);
    (options, remarks)
}

/// The functions of `module` that the linker folds with another of its
/// functions (identical code, `fmerge::icf`): deleting one copy saves
/// nothing while the other stays.
fn folded_twins(module: &ClifModule) -> Vec<String> {
    let folds = fmerge::icf::folds_with_another(module);
    module
        .functions
        .iter()
        .zip(folds)
        .filter(|&(_, folds)| folds)
        .map(|(def, _)| module.symbols[def.symbol as usize].name.clone())
        .collect()
}

/// Similar-function merging on `module`, measured in aarch64 bytes (see
/// [`measuring_isa`]).
fn run_fmerge(
    module: &mut ClifModule,
    isa: Option<&dyn TargetIsa>,
    view: &BuildView,
) -> fmerge::FmergeReport {
    let options = fmerge::FmergeOptions {
        heat: view.heat(),
        ..crate::target::fmerge_options(isa, view.level)
    };
    let measure = measuring_isa(module, isa);
    fmerge::run(module, measure.get(), &options)
}

/// The ISA whose code size the merging and inlining passes decide by.
///
/// They decide in aarch64 bytes whatever the target, so that the JIT and
/// builds for every target transform alike: the build's ISA when it is
/// aarch64, else an aarch64 ISA with the module's settings (`parec opt`
/// without a target, the JIT on x86-64).
enum MeasuringIsa<'a> {
    Build(&'a dyn TargetIsa),
    Own(Option<cranelift_codegen::isa::OwnedTargetIsa>),
}

impl MeasuringIsa<'_> {
    fn get(&self) -> Option<&dyn TargetIsa> {
        match self {
            MeasuringIsa::Build(isa) => Some(*isa),
            MeasuringIsa::Own(isa) => isa.as_deref(),
        }
    }
}

fn measuring_isa<'a>(module: &ClifModule, isa: Option<&'a dyn TargetIsa>) -> MeasuringIsa<'a> {
    let aarch64 = Target::Aarch64.triple().architecture;
    match isa.filter(|isa| isa.triple().architecture == aarch64) {
        Some(isa) => MeasuringIsa::Build(isa),
        None => MeasuringIsa::Own(
            Target::Aarch64
                .isa_with(OptLevel::Oz, &module.settings)
                .or_else(|_| Target::Aarch64.isa(OptLevel::Oz))
                .ok(),
        ),
    }
}

/// What a CLIF pass did to one module, or, summed, to all of them.
#[derive(Clone, Debug)]
pub struct PassOutcome {
    pub stats: PassStats,
    /// One remark per decision (`--remarks`), in module order.
    pub remarks: Vec<Remark>,
}

impl PassOutcome {
    /// What `pass` did when it had no module to work on.
    pub fn nothing(pass: ClifPass) -> PassOutcome {
        PassOutcome::stats(match pass {
            ClifPass::Inline(_) => PassStats::Inline(InlineStats::default()),
            ClifPass::Gvn(_) => PassStats::Gvn(GvnStats::default()),
            ClifPass::Combine => PassStats::Combine(CombineStats::default()),
            ClifPass::Switches => PassStats::Switches(SwitchStats::default()),
            ClifPass::Ifconv(_) => PassStats::Ifconv(IfconvStats::default()),
            ClifPass::Merge => PassStats::Merge(MergeStats::default()),
            ClifPass::Fmerge => PassStats::Fmerge(FmergeStats::default(), FmergeTimes::default()),
            ClifPass::Guard => PassStats::Guard(GuardStats::default()),
            ClifPass::Custom(_) => PassStats::Custom(Vec::new()),
        })
    }

    fn stats(stats: PassStats) -> PassOutcome {
        PassOutcome {
            stats,
            remarks: Vec::new(),
        }
    }

    /// Adds `other`'s statistics and remarks (of the same pass) to these.
    pub fn accumulate(&mut self, other: PassOutcome) {
        self.stats.accumulate(other.stats);
        self.remarks.extend(other.remarks);
    }
}

/// The statistics of a CLIF pass, summed over modules.
#[derive(Clone, Debug)]
pub enum PassStats {
    Inline(InlineStats),
    Gvn(GvnStats),
    Combine(CombineStats),
    Switches(SwitchStats),
    Ifconv(IfconvStats),
    Merge(MergeStats),
    /// Similar-function merging's counts, and where its time went.
    Fmerge(FmergeStats, FmergeTimes),
    Guard(GuardStats),
    /// A custom pass's statistics lines, one per module.
    Custom(Vec<String>),
}

impl PassStats {
    fn accumulate(&mut self, other: PassStats) {
        match (self, other) {
            (PassStats::Inline(a), PassStats::Inline(b)) => a.accumulate(&b),
            (PassStats::Gvn(a), PassStats::Gvn(b)) => a.accumulate(&b),
            (PassStats::Combine(a), PassStats::Combine(b)) => a.accumulate(&b),
            (PassStats::Switches(a), PassStats::Switches(b)) => a.accumulate(&b),
            (PassStats::Ifconv(a), PassStats::Ifconv(b)) => a.accumulate(&b),
            (PassStats::Merge(a), PassStats::Merge(b)) => a.accumulate(&b),
            (PassStats::Fmerge(a, ta), PassStats::Fmerge(b, tb)) => {
                a.accumulate(&b);
                ta.accumulate(&tb);
            }
            (PassStats::Guard(a), PassStats::Guard(b)) => a.accumulate(&b),
            (PassStats::Custom(a), PassStats::Custom(b)) => a.extend(b),
            // Outcomes of one pass are always of one kind.
            (a, b) => unreachable!("statistics of different passes: {a:?} and {b:?}"),
        }
    }
}

impl fmt::Display for PassStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PassStats::Inline(s) => write!(f, "{s}"),
            PassStats::Gvn(s) => write!(f, "{s}"),
            PassStats::Combine(s) => write!(f, "{s}"),
            PassStats::Switches(s) => write!(f, "{s}"),
            PassStats::Ifconv(s) => write!(f, "{s}"),
            PassStats::Merge(s) => write!(f, "{s}"),
            PassStats::Fmerge(s, _) => write!(f, "{s}"),
            PassStats::Guard(s) => write!(f, "{s}"),
            PassStats::Custom(lines) => write!(f, "{}", lines.join("; ")),
        }
    }
}

/// A pass on the machine code Cranelift emitted, run on every module after
/// code generation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MachinePass {
    /// Peepholes on the aarch64 code Cranelift emitted
    /// (`parec_passes::peephole`).
    Peephole,
    /// Machine copy propagation: a move's definer writes its destination
    /// (`parec_passes::copyprop`).
    Copyprop,
    /// Frame-pointer omission and frame packing: a `mov x29, sp` nothing
    /// reads goes, `x30` is saved beside an odd callee-saved register
    /// (`parec_passes::frame`).
    Frame,
    /// Sibling calls: a call whose result is returned becomes a jump after
    /// the epilogue, and a frame only it needed goes
    /// (`parec_passes::sibcall`).
    Sibcall,
    /// One epilogue per function: returns that repeat another's epilogue
    /// branch to it (`parec_passes::epilogue`).
    Epilogue,
    /// The aarch64 machine outliner (`parec_passes::outline`), local or
    /// against the prefix tree of an earlier round.
    Outline,
}

impl MachinePass {
    pub fn name(self) -> &'static str {
        match self {
            MachinePass::Peephole => "peephole",
            MachinePass::Copyprop => "copyprop",
            MachinePass::Frame => "frame",
            MachinePass::Sibcall => "sibcall",
            MachinePass::Epilogue => "epilogue",
            MachinePass::Outline => "outline",
        }
    }

    /// Whether the pass can run on code for `arch`.
    pub fn applies_to(self, arch: target_lexicon::Architecture) -> bool {
        match self {
            MachinePass::Peephole
            | MachinePass::Copyprop
            | MachinePass::Frame
            | MachinePass::Sibcall
            | MachinePass::Epilogue
            | MachinePass::Outline => {
                matches!(arch, target_lexicon::Architecture::Aarch64(_))
            }
        }
    }
}

/// One of parec's own passes, by kind: the names a `--passes` list may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pass {
    Clif(ClifPass),
    Machine(MachinePass),
}

impl Pass {
    /// Every pass, in the order `-Oz` runs them.
    pub const ALL: &'static [Pass] = &[
        Pass::Clif(ClifPass::Inline(Policy::Size)),
        Pass::Clif(ClifPass::Gvn(Policy::Size)),
        Pass::Clif(ClifPass::Merge),
        Pass::Clif(ClifPass::Fmerge),
        Pass::Clif(ClifPass::Combine),
        Pass::Clif(ClifPass::Switches),
        Pass::Clif(ClifPass::Ifconv(Policy::Size)),
        Pass::Machine(MachinePass::Peephole),
        Pass::Machine(MachinePass::Copyprop),
        Pass::Machine(MachinePass::Frame),
        Pass::Machine(MachinePass::Sibcall),
        Pass::Machine(MachinePass::Epilogue),
        Pass::Machine(MachinePass::Outline),
    ];

    pub fn name(self) -> &'static str {
        match self {
            Pass::Clif(p) => p.name(),
            Pass::Machine(p) => p.name(),
        }
    }

    /// The passes of `-O2`: inlining and GVN by the speed policy (GVN
    /// without the size guard: measured on bench/, 4.9% fewer bytes and
    /// 2.3% less run time than without it), instruction combining (its
    /// rules replace instructions by fewer, never slower ones),
    /// if-conversion of short arms (no branch to mispredict), the
    /// peepholes, copy propagation and frame-pointer omission (fewer
    /// instructions are faster too; GCC and clang omit the frame pointer
    /// at `-O2` as well). A `--passes` list without `frame` keeps every
    /// frame record, for profilers that walk `x29`.
    pub const SPEED: &'static [Pass] = &[
        Pass::Clif(ClifPass::Inline(Policy::Speed)),
        Pass::Clif(ClifPass::Gvn(Policy::Speed)),
        Pass::Clif(ClifPass::Combine),
        Pass::Clif(ClifPass::Switches),
        Pass::Clif(ClifPass::Ifconv(Policy::Speed)),
        Pass::Machine(MachinePass::Peephole),
        Pass::Machine(MachinePass::Copyprop),
        Pass::Machine(MachinePass::Frame),
        Pass::Machine(MachinePass::Sibcall),
    ];

    /// The passes of `-Os`: `-Oz`'s, with GVN by the speed policy (no size
    /// guard: in `-Oz` it made no difference to bytes or run time on
    /// bench/, and its measurements cost compile time). What else sets
    /// `-Os` apart is in the passes' options: the hot-site rules
    /// (`crate::target::inline_options`, `crate::target::fmerge_options`).
    pub const SIZE_AT_SPEED: &'static [Pass] = &[
        Pass::Clif(ClifPass::Inline(Policy::Size)),
        Pass::Clif(ClifPass::Gvn(Policy::Speed)),
        Pass::Clif(ClifPass::Merge),
        Pass::Clif(ClifPass::Fmerge),
        Pass::Clif(ClifPass::Combine),
        Pass::Clif(ClifPass::Switches),
        Pass::Clif(ClifPass::Ifconv(Policy::Size)),
        Pass::Machine(MachinePass::Peephole),
        Pass::Machine(MachinePass::Copyprop),
        Pass::Machine(MachinePass::Frame),
        Pass::Machine(MachinePass::Sibcall),
        Pass::Machine(MachinePass::Epilogue),
        Pass::Machine(MachinePass::Outline),
    ];

    /// Looks one of parec's passes up by its command-line name.
    pub fn from_name(name: &str) -> Option<Pass> {
        Self::ALL
            .iter()
            .chain(Self::SPEED)
            .copied()
            .find(|p| p.name() == name)
    }
}

impl MachinePass {
    /// Machine passes run in this order whatever order a `--passes` list
    /// names them in: the outliner lifts the code the peepholes leave, and
    /// nothing lifts the outliner's output again.
    const ORDER: &'static [MachinePass] = &[
        MachinePass::Peephole,
        MachinePass::Copyprop,
        MachinePass::Frame,
        MachinePass::Sibcall,
        MachinePass::Epilogue,
        MachinePass::Outline,
    ];

    fn rank(self) -> usize {
        Self::ORDER
            .iter()
            .position(|&p| p == self)
            .expect("every machine pass is ranked")
    }
}

/// The passes of a compilation, in order, and whether to verify after each.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pipeline {
    /// CLIF passes, run before Cranelift.
    pub clif: Vec<ClifPass>,
    /// Machine-code passes, run after Cranelift on the targets they apply to.
    pub machine: Vec<MachinePass>,
    /// Run Cranelift's verifier on every function after every CLIF pass.
    pub verify: bool,
    /// What is known of how often the code runs (a profile); empty: every
    /// pass uses its static estimate (`parec_passes::heat`).
    pub heat: Arc<HotCode>,
    /// `--profile-use`: the profile the build computes [`Pipeline::heat`]
    /// from, module by module, right after the front end
    /// (`crate::profile::heat_of`).
    pub profile: Option<Arc<crate::profile::ProfileUse>>,
}

impl Pipeline {
    /// No pass at all (`-O0`, `-O2`).
    pub fn empty() -> Pipeline {
        Pipeline::from_passes(&[])
    }

    /// The pipeline of an optimization level: nothing at `-O0`, speed
    /// inlining at `-O2`, the size passes with GVN for speed at `-Os`,
    /// every size pass at `-Oz`.
    pub fn for_level(level: OptLevel) -> Pipeline {
        match level {
            OptLevel::O0 => Pipeline::empty(),
            OptLevel::O2 => Pipeline::from_passes(Pass::SPEED),
            OptLevel::Os => Pipeline::from_passes(Pass::SIZE_AT_SPEED),
            OptLevel::Oz => Pipeline::from_passes(Pass::ALL),
        }
    }

    /// The pipeline of `passes`, each kind in the given order.
    pub fn from_passes(passes: &[Pass]) -> Pipeline {
        let mut pipeline = Pipeline {
            clif: Vec::new(),
            machine: Vec::new(),
            verify: cfg!(debug_assertions),
            heat: Arc::default(),
            profile: None,
        };
        for &pass in passes {
            match pass {
                Pass::Clif(p) => pipeline.clif.push(p),
                Pass::Machine(p) if !pipeline.machine.contains(&p) => pipeline.machine.push(p),
                Pass::Machine(_) => {}
            }
        }
        pipeline.machine.sort_by_key(|p| p.rank());
        pipeline
    }

    /// Parses a comma-separated pass list (`""` is the empty pipeline).
    pub fn from_names(list: &str) -> Result<Pipeline, String> {
        let mut passes = Vec::new();
        for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            match Pass::from_name(name) {
                Some(p) => passes.push(p),
                None => {
                    return Err(format!(
                        "unknown pass `{name}`; available: {}",
                        available_passes()
                    ))
                }
            }
        }
        Ok(Pipeline::from_passes(&passes))
    }

    /// The pass names, CLIF passes first, as a `--passes` list.
    pub fn names(&self) -> String {
        let clif = self.clif.iter().map(|p| p.name());
        let machine = self.machine.iter().map(|p| p.name());
        clif.chain(machine).collect::<Vec<_>>().join(",")
    }

    /// Whether the size guard runs after the CLIF passes: whenever a size
    /// pass does ([`ClifPass::is_size_pass`]).
    pub fn guards(&self) -> bool {
        self.clif.iter().any(|p| p.is_size_pass())
    }

    /// Whether the constant merger runs.
    pub fn merges(&self) -> bool {
        self.clif.contains(&ClifPass::Merge)
    }

    /// Whether the constant merger runs after `pass`.
    pub fn merges_after(&self, pass: ClifPass) -> bool {
        self.runs_after(pass, ClifPass::Merge)
    }

    /// Whether `later` runs after `pass`.
    pub fn runs_after(&self, pass: ClifPass, later: ClifPass) -> bool {
        let mut after = self.clif.iter().skip_while(|&&p| p != pass).skip(1);
        after.any(|&p| p == later)
    }

    /// Whether the pipeline has a pass that reads or writes cgdata: the
    /// merger (summaries) or the outliner (prefix trees).
    pub fn uses_cgdata(&self) -> bool {
        self.merges() || self.machine.contains(&MachinePass::Outline)
    }

    /// Whether the machine outliner runs on code for `arch`.
    pub fn outlines(&self, arch: target_lexicon::Architecture) -> bool {
        self.machine
            .iter()
            .any(|p| *p == MachinePass::Outline && p.applies_to(arch))
    }
}

/// The names of all passes, for error messages.
pub fn available_passes() -> String {
    let mut names: Vec<&str> = Vec::new();
    for pass in Pass::ALL.iter().chain(Pass::SPEED) {
        if !names.contains(&pass.name()) {
            names.push(pass.name());
        }
    }
    names.join(", ")
}

/// Runs Cranelift's verifier on every function of `modules`; `after` names
/// what ran last, for the error.
pub fn verify_modules(
    modules: &[ClifModule],
    isa: Option<&dyn TargetIsa>,
    after: &str,
) -> Result<(), String> {
    for module in modules {
        verify_module(module, isa)
            .map_err(|e| format!("module `{}`: after pass `{after}`: {e}", module.name))?;
    }
    Ok(())
}

/// Runs Cranelift's verifier on every function of `module`.
pub fn verify_module(module: &ClifModule, isa: Option<&dyn TargetIsa>) -> Result<(), String> {
    for def in &module.functions {
        verify_function(&def.func, isa).map_err(|e| {
            let name = module
                .symbols
                .get(def.symbol as usize)
                .map_or("?", |s| s.name.as_str());
            format!("function `{name}` fails verification:\n{e}")
        })?;
    }
    Ok(())
}

/// Runs Cranelift's verifier on one function.
pub fn verify_function(func: &ir::Function, isa: Option<&dyn TargetIsa>) -> Result<(), String> {
    let flags = settings::Flags::new(settings::builder());
    let result = match isa {
        Some(isa) => cranelift_codegen::verify_function(func, isa),
        None => cranelift_codegen::verify_function(func, &flags),
    };
    result.map_err(|errors| {
        cranelift_codegen::print_errors::pretty_verifier_error(func, None, errors)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_list_is_empty_pipeline() {
        assert_eq!(Pipeline::from_names("").unwrap(), Pipeline::empty());
        assert_eq!(Pipeline::from_names(" , ").unwrap(), Pipeline::empty());
    }

    #[test]
    fn unknown_pass_is_rejected() {
        let err = Pipeline::from_names("gvn,nope").unwrap_err();
        assert_eq!(
            err,
            "unknown pass `nope`; available: inline, gvn, merge, fmerge, combine, switches, ifconv, peephole, copyprop, frame, sibcall, epilogue, outline, \
             inline-speed, gvn-speed, ifconv-speed"
        );
    }

    #[test]
    fn passes_land_in_their_kind() {
        let p = Pipeline::from_names("outline,gvn").unwrap();
        assert_eq!(p.clif, vec![ClifPass::Gvn(Policy::Size)]);
        assert_eq!(p.machine, vec![MachinePass::Outline]);
        assert_eq!(p.names(), "gvn,outline");
    }

    #[test]
    fn levels_choose_passes() {
        assert_eq!(Pipeline::for_level(OptLevel::O0), Pipeline::empty());
        assert_eq!(
            Pipeline::for_level(OptLevel::O2).clif,
            vec![
                ClifPass::Inline(Policy::Speed),
                ClifPass::Gvn(Policy::Speed),
                ClifPass::Combine,
                ClifPass::Switches,
                ClifPass::Ifconv(Policy::Speed)
            ],
            "-O2 inlines, numbers values for speed, combines and if-converts"
        );
        let oz = Pipeline::for_level(OptLevel::Oz);
        assert_eq!(
            oz.clif,
            vec![
                ClifPass::Inline(Policy::Size),
                ClifPass::Gvn(Policy::Size),
                ClifPass::Merge,
                ClifPass::Fmerge,
                ClifPass::Combine,
                ClifPass::Switches,
                ClifPass::Ifconv(Policy::Size)
            ]
        );
        assert!(oz.merges_after(ClifPass::Inline(Policy::Size)));
        assert!(!oz.merges_after(ClifPass::Merge));
        assert_eq!(
            Pipeline::from_names("inline-speed").unwrap().clif,
            vec![ClifPass::Inline(Policy::Speed)]
        );
        assert_eq!(
            oz.machine,
            vec![
                MachinePass::Peephole,
                MachinePass::Copyprop,
                MachinePass::Frame,
                MachinePass::Sibcall,
                MachinePass::Epilogue,
                MachinePass::Outline
            ]
        );
        assert_eq!(
            Pipeline::for_level(OptLevel::O2).machine,
            vec![
                MachinePass::Peephole,
                MachinePass::Copyprop,
                MachinePass::Frame,
                MachinePass::Sibcall
            ]
        );
    }

    #[test]
    fn machine_passes_run_in_their_order() {
        let p = Pipeline::from_names("outline,epilogue,peephole,outline").unwrap();
        assert_eq!(
            p.machine,
            vec![
                MachinePass::Peephole,
                MachinePass::Epilogue,
                MachinePass::Outline
            ]
        );
        assert_eq!(p.names(), "peephole,epilogue,outline");
    }

    #[test]
    fn outlining_applies_to_aarch64_only() {
        let oz = Pipeline::for_level(OptLevel::Oz);
        assert!(oz.outlines(crate::target::Target::Aarch64.triple().architecture));
        assert!(!oz.outlines(crate::target::Target::X86_64.triple().architecture));
    }
}
