//! Inlining on a CLIF module, bottom-up over the call graph, with a size
//! policy decided in measured machine-code bytes (`-Oz`) and a
//! conventional speed policy (`-O2`).
//!
//! The mechanics are Cranelift's own inliner (`cranelift_codegen::inline`,
//! [`Context::inline`] with an [`Inline`] implementation): it splices a
//! callee's body into the caller at a `call` or `return_call`, turns the
//! callee's `return`s into jumps to the call's continuation and its
//! `return_call`s into a `call` and a jump (or keeps them as tail calls when
//! the inlined call was itself a `return_call`), and appends the callee's
//! stack slots and external references to the caller's. What Cranelift
//! leaves to its user — which calls, in what order, what to do with the
//! callee afterwards — is this pass.
//!
//! Sources (full references in docs/DESIGN.md):
//! - [TARJAN] R. Tarjan, *Depth-first search and linear graph algorithms*,
//!   SIAM J. Computing 1(2), 1972: the bottom-up order ([`crate::callgraph`]).
//! - [LLVM-INLINE] LLVM's `InlineCost` and the `-Oz` inline threshold: a
//!   call is inlined when the callee's cost, less the call's own cost and
//!   what deleting a last-use callee saves, is below a threshold; at `-Oz`
//!   the threshold is near zero. parec estimates `Δf` with a size model
//!   fitted to Cranelift's output ([`crate::size_model`], LLVM's
//!   bookkeeping in bytes) and measures it with Cranelift where the
//!   estimate is too close to the threshold to decide.
//!
//! # Notation
//!
//! `f` is a caller, `g` a callee, both functions of the module; `|f|` is the
//! size in bytes of `f`'s machine code as Cranelift emits it for the
//! measuring ISA (aarch64 in parec); `f[g]` is `f` with every direct call
//! site of `g` inlined, and `Δf = |f[g]| − |f|`. `g` is *removable* when its
//! linkage is local, no function or data object takes its address, and
//! every call of it is a direct call from outside its own strongly
//! connected component: once inlined everywhere, nothing can reach it —
//! and when deleting it saves its body: it is not one of the functions the
//! constant merger will merge ([`InlineOptions::keep`]: those will cost a
//! thunk) nor a function the linker keeps one copy of anyway
//! ([`InlineOptions::shared`]: a generic instance other modules also
//! define, or one identical to another function of the module).
//!
//! # Algorithm
//!
//! 1. Build the call graph and its components, callees first
//!    ([`crate::callgraph`]). Walk the functions in that order; each `g` in
//!    turn is the callee, and the calls *of* `g` are decided. Every callee
//!    `g` calls was decided before `g` itself, so `g` is final — already
//!    optimized — when its callers look at it.
//! 2. Callers in [`InlineOptions::keep`] are left as they are: inlining a
//!    different callee into each member of a merge group makes the members
//!    differ, and each then costs its whole body instead of a thunk
//!    (measured on bench/: 166,592 bytes against 153,536 with the rule).
//!    The exception is a call every member of the group makes, at the same
//!    instruction, to a callee of one shape ([`InlineOptions::keep_alike`],
//!    `crate::merge::alike`): its hot sites are inlined (step 3), each
//!    member gets its own callee, and the members stay alike.
//!    Calls within `g`'s own component are never inlined, and inlined
//!    bodies are not revisited, so recursion is inlined at most one level
//!    into callers outside the cycle and never without bound.
//! 3. Size policy ([`Policy::Size`]): for each caller `f` of `g`, estimate
//!    `Δf`, and measure it (compile `f[g]`) where the estimate's error range
//!    contains the decision's threshold and `f`'s measuring budget lasts
//!    ([`InlineOptions::decide`], [`InlineOptions::measure_budget`]); once
//!    the budget is spent, the estimate corrected by the model's median
//!    error on `f`'s measured trials decides. If `g` is removable and `Σf Δf ≤ |g|`, inline into every caller
//!    and delete `g`: the module shrinks by `|g| − ΣΔf ≥ 0` (this covers a
//!    callee with a single call site). Otherwise inline exactly into the
//!    callers with `Δf ≤ 0`: the body costs no more than the call it
//!    replaces, with its argument and result moves and what the call
//!    forced on the caller's frame (saved registers, the frame itself).
//!    Callees larger than [`InlineOptions::small_callee_bytes`] that are not
//!    removable are not measured at all: such a body cannot fit in the
//!    bytes of a call. *Hot sites* are the exception to measuring
//!    ([`InlineOptions::heat`], `crate::heat`): a call of a small callee
//!    inside a loop (or known hot from a profile) of a caller not known
//!    cold is inlined whatever it costs, since the call and return would
//!    be paid on every iteration.
//!    *Sibling classes*: callees identical up to their constants and
//!    callees (instances of one generic, `sibling_key`) are decided
//!    together at the first one's turn, when every callee of theirs has
//!    been decided by then: if all of them may be deleted, all are inlined
//!    everywhere and deleted when `Σ ΣΔf ≤ Σ |g|` over the class, else
//!    none is. Decided one by one, a few bytes of constants put one
//!    instance on each side of its margin, and the instances calling them
//!    then differ and no longer merge (bench/matrix's `det_mod<P>`).
//! 4. Speed policy ([`Policy::Speed`]): inline `g` into `f` when `g` is tiny,
//!    when the call sits in a loop of `f` and `g` is small, or when `g` is
//!    removable with one call site, up to a budget of caller growth
//!    ([`policy::SpeedLimits`]); decided in CLIF instructions, without
//!    measuring.
//! 5. Delete local functions that nothing references any more (removed
//!    callees, and functions that were dead to begin with), repeatedly,
//!    then the symbols nothing names.
//!
//! # Invariants
//!
//! - Size policy: apart from hot sites, the module never grows, in the
//!   measured bytes — each accepted decision has `Δf ≤ 0` or is paid for
//!   by deleting `g`.
//! - Exported, weak, address-taken functions and the C entry point are
//!   inlined into callers (copied) but never deleted.
//! - An inlined check traps exactly as in the callee: Cranelift copies
//!   `trap`, `trapz`/`trapnz` and trapping loads with their trap codes, so
//!   the program stops at the same point with the same message.
//! - Deterministic: components, callers and call sites are visited in
//!   function and layout order; nothing iterates a hash map.
//!
//! # Cost
//!
//! Size policy: an estimate per (caller, callee) pair tried costs a walk
//! over the callee and the sites (`O(|g|)`); a measurement compiles the
//! caller, so measuring every pair (the pass before the size model) cost
//! `O(n·|f|)`, quadratic in a caller's `n` calls (issue 34: 454 s at `-Oz`
//! for `main` calling 3,000 one-line functions). Each caller's
//! measurements are bounded by `max(floor, per_inst·|f|)` compiled
//! instructions, and inlinings decided on estimates are made in batches,
//! one walk over the caller per run of them ([`Inliner::flush`]): the pass
//! is linear in a caller's calls. Callees are compiled once each. Speed
//! policy: linear in the module plus the inlined code.
//!
//! [`Context::inline`]: cranelift_codegen::Context::inline
//! [`Inline`]: cranelift_codegen::inline::Inline

pub mod policy;

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::Arc;

use cranelift_codegen::entity::SecondaryMap;
use cranelift_codegen::flowgraph::ControlFlowGraph;
use cranelift_codegen::inline::{Inline, InlineCommand};
use cranelift_codegen::ir::{self, Function};
use cranelift_codegen::isa::TargetIsa;
use cranelift_codegen::Context;

use crate::callgraph::CallGraph;
use crate::clif_module::{self, count_insts, ClifModule, Linkage};
use crate::heat::{Heat, HotCode};
use crate::merge::hash::{feed_structure, Numbers, Stream};
use crate::remark::Remark;
pub use crate::size_model::MeasureBudget;
use crate::size_model::{self, CalleeBytes, CalleeSummary, Decide, Estimate, SiteSummary};

use policy::SpeedLimits;

/// The pass's name in remarks.
const PASS: &str = "inline";

/// How calls are chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Policy {
    /// `-Oz`: inline when measured machine code does not grow.
    Size,
    /// `-O2`: small callees, calls in loops, single-call-site callees.
    Speed,
}

/// Options of the pass.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InlineOptions {
    pub policy: Policy,
    /// Callers left as they are, by name: the functions the constant merger
    /// will merge (`merge::planned`). Inlining into one member of a
    /// group makes it differ from the others, and it then costs its whole
    /// body instead of a thunk.
    pub keep: BTreeSet<String>,
    /// The exception to [`InlineOptions::keep`]: `(caller, callee)` pairs,
    /// by name, where every member of the caller's merge group calls an
    /// alike callee at the same instructions (`merge::alike`). The size
    /// policy inlines their hot sites: each member then inlines its own
    /// callee and the group stays alike.
    pub keep_alike: BTreeSet<(String, String)>,
    /// Of [`InlineOptions::keep_alike`], the pairs whose every site the
    /// size policy inlines, hot or not: the merged body then holds the
    /// callees' code once and the callees can go (priced by
    /// `crate::price`).
    pub inline_alike: BTreeSet<(String, String)>,
    /// Functions the linker keeps one copy of, by name: those other modules
    /// define too (generic instances every using module emits), and those
    /// identical to another function of this module (instances over types
    /// of one representation); deleting one copy saves nothing. They are
    /// inlined only where the body costs no more than the call.
    pub shared: BTreeSet<String>,
    /// Size policy: callees whose machine code is larger than this are only
    /// considered when removable. A direct call with its moves and the
    /// frame it forces costs at most a few dozen bytes on aarch64.
    pub small_callee_bytes: usize,
    /// Speed policy limits; the size policy's hot sites use them too.
    pub speed: SpeedLimits,
    /// What is known of how often code runs ([`crate::heat`]). The size
    /// policy inlines a small callee at a *hot* site even when the caller
    /// grows: a site inside a loop of a caller not known cold (callees of
    /// at most [`InlineOptions::hot_callee_insts`] CLIF instructions, or
    /// [`SpeedLimits::in_loop`] in a caller a profile knows hot, as at
    /// `-O2`), or a site a profile knows hot outside loops (at most
    /// [`SpeedLimits::tiny`]).
    pub heat: Arc<HotCode>,
    /// The static estimate's limit on hot callees (see
    /// [`InlineOptions::heat`]): measured on bench/, 20 buys most of what
    /// `-O2`'s inlining gains in loops for 5% of `-Oz`'s byte reduction
    /// (docs/DESIGN.md, "Hot code"); 0 turns static hot sites off.
    pub hot_callee_insts: usize,
    /// The static estimate's limit on hot *accessors*: callees without a
    /// loop or a call (outside cold blocks) — field and element reads with
    /// their checks — inlined at sites in loops up to this many CLIF
    /// instructions (at most [`SpeedLimits::in_loop`] applies anyway to a
    /// caller a profile knows hot). 0: no limit of their own
    /// ([`InlineOptions::hot_callee_insts`] applies).
    pub hot_accessor_insts: usize,
    /// The static estimate's limit on *tiny* callees: a call of a callee of
    /// at most this many CLIF instructions is a hot site wherever it is in
    /// a caller that may run many times (recursive, or called from a loop
    /// or from such a caller) and is not known cold, as `-O2` inlines every
    /// call of a callee of [`SpeedLimits::tiny`] instructions. Code without
    /// loops runs hot too: recursive code (tree walks, whose accessors are
    /// tiny) and the functions loops call (bench/trees at `-Os` without
    /// the rule: 1.2–1.5× `-O2`'s run time, `height` and `max` called in
    /// `update` and `balance_of` on every level of an insert). 0 turns the
    /// rule off (`-Oz`). A member of a merge group whose other members
    /// call other callees there is left to the merger, unless a loop can
    /// run after the site or the member is itself called inside a loop
    /// (its sites then run on every iteration of that loop).
    pub hot_tiny_insts: usize,
    /// Hot sites in the callers [`InlineOptions::keep`] leaves alone are
    /// inlined whatever the callee, not only where every member of the
    /// group calls an alike callee ([`InlineOptions::keep_alike`]): a group
    /// whose members call different callees in a loop then splits, since
    /// its members differ once inlined, and each member runs its own
    /// callee inline instead of calling it through a parameter (`-Os`;
    /// similar-function merging may merge the split members again, with
    /// one dispatch per differing region, `crate::fmerge::codegen`).
    pub hot_sites_in_members: bool,
    /// Size policy: how `Δf` and `|g|` are known (step 3 of the module
    /// doc). [`Decide::Measure`] compiles every trial (the decisions of
    /// parec before the size model; the time grows with a caller's calls
    /// times its size); [`Decide::EstimateThenMeasure`] (`-Oz`) compiles
    /// only trials whose estimate is within the size model's error margin
    /// of the threshold, within [`InlineOptions::measure_budget`];
    /// [`Decide::Estimate`] compiles nothing, not even `g`.
    pub decide: Decide,
    /// [`Decide::EstimateThenMeasure`]: how much compiling a caller's
    /// trials may cost.
    pub measure_budget: MeasureBudget,
}

impl InlineOptions {
    pub fn for_policy(policy: Policy) -> InlineOptions {
        InlineOptions {
            policy,
            keep: BTreeSet::new(),
            keep_alike: BTreeSet::new(),
            inline_alike: BTreeSet::new(),
            shared: BTreeSet::new(),
            small_callee_bytes: 96,
            speed: SpeedLimits::default(),
            heat: Arc::default(),
            hot_callee_insts: 20,
            hot_accessor_insts: 0,
            hot_tiny_insts: 0,
            hot_sites_in_members: false,
            decide: Decide::default(),
            measure_budget: MeasureBudget::default(),
        }
    }
}

/// What the pass did to a module (summed over modules by the driver).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InlineStats {
    /// Call sites inlined.
    pub inlined: u64,
    /// Callers whose inlining was measured and refused because it grew.
    pub refused: u64,
    /// Functions deleted: inlined everywhere, or unreferenced.
    pub deleted: u64,
    /// Of the call sites inlined, those the size policy inlined because
    /// they are hot ([`InlineOptions::heat`]), whatever they cost.
    pub hot_sites: u64,
    /// Size policy: bytes saved (callers' growth and shrinkage, deleted
    /// functions), measured or, for decisions taken on estimates,
    /// estimated.
    pub bytes_saved: i64,
    /// Size policy: trials (a caller with a callee's sites inlined)
    /// compiled to be decided.
    pub measured: u64,
    /// Size policy: trials decided on the size model's estimate.
    pub estimated: u64,
    /// CLIF instructions compiled to measure (trials, callers before,
    /// callees).
    pub compiled_insts: u64,
}

impl InlineStats {
    pub fn accumulate(&mut self, other: &InlineStats) {
        self.inlined += other.inlined;
        self.refused += other.refused;
        self.deleted += other.deleted;
        self.hot_sites += other.hot_sites;
        self.bytes_saved += other.bytes_saved;
        self.measured += other.measured;
        self.estimated += other.estimated;
        self.compiled_insts += other.compiled_insts;
    }
}

impl fmt::Display for InlineStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} calls inlined", self.inlined)?;
        if self.hot_sites > 0 {
            write!(f, " ({} hot)", self.hot_sites)?;
        }
        write!(
            f,
            ", {} refused (grew), {} functions deleted, {} bytes saved",
            self.refused, self.deleted, self.bytes_saved
        )?;
        if self.measured + self.estimated > 0 {
            write!(
                f,
                "; {} trials measured ({} instructions compiled), {} estimated",
                self.measured, self.compiled_insts, self.estimated
            )?;
        }
        Ok(())
    }
}

/// The statistics and one remark per decision.
#[derive(Clone, Debug, Default)]
pub struct InlineReport {
    pub stats: InlineStats,
    pub remarks: Vec<Remark>,
    /// Size policy: every trial, with its estimate and, when it was
    /// compiled, its measured growth (the size model's calibration data).
    pub trials: Vec<TrialRecord>,
}

/// One trial of the size policy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrialRecord {
    pub caller: String,
    pub callee: String,
    /// Call sites of the callee in the caller.
    pub sites: usize,
    /// `Δf` as the size model estimates it.
    pub estimate: Estimate,
    /// `Δf` as Cranelift's code has it, if the trial was compiled.
    pub measured: Option<i64>,
}

/// Inlines calls in `module` by `options.policy`. The size policy measures
/// with `isa`; without one it changes nothing but dead local functions.
pub fn run(
    module: &mut ClifModule,
    isa: Option<&dyn TargetIsa>,
    options: &InlineOptions,
) -> InlineReport {
    let mut inliner = Inliner::new(module, isa, options);
    inliner.find_repeated();
    inliner.find_splitting();
    let order = inliner.graph.bottom_up();
    let siblings = inliner.sibling_classes(&order);
    for component in order {
        let members: BTreeSet<usize> = component.iter().copied().collect();
        for &callee in &component {
            match siblings.get(&callee) {
                Some(SiblingTurn::Deferred) => {}
                Some(SiblingTurn::First(class)) => inliner.decide_siblings(class),
                None => inliner.decide_calls_of(callee, &members),
            }
        }
    }
    inliner.delete_unreferenced();
    inliner.finish()
}

/// The pass's state over one module.
struct Inliner<'m> {
    module: &'m mut ClifModule,
    isa: Option<&'m dyn TargetIsa>,
    options: &'m InlineOptions,
    graph: CallGraph,
    /// Measured `|f|`, filled when first needed (`Some(None)`: Cranelift
    /// could not compile it, so it is left alone).
    sizes: Vec<Option<Option<usize>>>,
    /// Per function, what the size estimates know of it as a caller
    /// (filled when first needed).
    facts: Vec<Option<CallerFacts>>,
    /// Per function, the CLIF instructions its trials may still compile
    /// ([`InlineOptions::measure_budget`]; set when first tried).
    budget: Vec<Option<u64>>,
    /// Per function, the size model's errors `Δ − Δ_est` on its measured
    /// trials, which correct its trials decided once the budget is spent.
    errors: Vec<Vec<i64>>,
    /// Functions inlined into in place, whose unused external names are
    /// pruned once, at the end.
    unpruned: BTreeSet<usize>,
    /// Per function, the inlinings decided on estimates and not yet made,
    /// in decision order (see [`Inliner::flush`]).
    pending: Vec<Vec<Pending>>,
    /// Per callee, the callers with a pending inlining of it.
    pending_into: BTreeMap<usize, BTreeSet<usize>>,
    /// The bodies of deleted callees that pending inlinings still need.
    retired: BTreeMap<usize, Function>,
    deleted: Vec<bool>,
    /// Members of merge groups that will split ([`Inliner::is_kept`]).
    splitting: Vec<bool>,
    /// Functions that may run many times ([`Inliner::find_repeated`]):
    /// where the tiny-callee rule applies.
    repeated: Vec<bool>,
    /// Functions called inside a loop of another ([`Inliner::find_repeated`]):
    /// every site in them runs once per iteration of that loop.
    looped: Vec<bool>,
    report: InlineReport,
}

/// What the estimates and the hot-site rule need of a caller, taken in one
/// walk over it. Inlining only adds instructions (Cranelift's inliner keeps
/// the caller's instruction numbers), and leaves untouched whether an
/// original call lies in a loop and whether its results are used; so the
/// facts stay true of the calls numbered below `known_insts`, and are taken
/// again only for a call that came with an inlined body.
struct CallerFacts {
    known_insts: usize,
    /// The values the caller's instructions use.
    used: SecondaryMap<ir::Value, bool>,
    /// Per direct call, whether it lies inside a loop.
    in_loop: SecondaryMap<ir::Inst, bool>,
    /// Per direct call, whether a loop can run after it: the call lies
    /// inside a loop or a loop is reachable from its block.
    loop_follows: SecondaryMap<ir::Inst, bool>,
    /// Calls that are not tail calls (kept up to date as callees are
    /// inlined): whether the caller needs a frame.
    calls: i32,
}

impl CallerFacts {
    fn of(func: &Function) -> CallerFacts {
        let in_loop_blocks = crate::heat::in_loop_blocks(func);
        let reaches_loop = reaches_loop(func, &in_loop_blocks);
        let mut in_loop = SecondaryMap::new();
        let mut loop_follows = SecondaryMap::new();
        let mut calls = 0;
        for block in func.layout.blocks() {
            for inst in func.layout.block_insts(block) {
                let opcode = func.dfg.insts[inst].opcode();
                if opcode.is_call() {
                    in_loop[inst] = in_loop_blocks[block];
                    loop_follows[inst] = reaches_loop[block];
                    calls += i32::from(!opcode.is_return());
                }
            }
        }
        CallerFacts {
            known_insts: func.dfg.num_insts(),
            used: size_model::used_values(func),
            in_loop,
            loop_follows,
            calls,
        }
    }

    fn knows(&self, site: ir::Inst) -> bool {
        site.as_u32() < self.known_insts as u32
    }
}

/// The blocks of `func` from which a loop block (`in_loop`) is reachable,
/// loop blocks included: a backward walk over the predecessors from every
/// loop block (linear in the blocks and edges).
fn reaches_loop(
    func: &Function,
    in_loop: &SecondaryMap<ir::Block, bool>,
) -> SecondaryMap<ir::Block, bool> {
    let cfg = ControlFlowGraph::with_function(func);
    let mut reaches = SecondaryMap::new();
    let mut work: Vec<ir::Block> = func.layout.blocks().filter(|&b| in_loop[b]).collect();
    for &block in &work {
        reaches[block] = true;
    }
    while let Some(block) = work.pop() {
        for pred in cfg.pred_iter(block) {
            if !std::mem::replace(&mut reaches[pred.block], true) {
                work.push(pred.block);
            }
        }
    }
    reaches
}

/// The calls of a callee to decide ([`Inliner::calls_of`]).
struct CallsOf {
    /// Per caller, in caller order, its call sites.
    by_caller: Vec<(usize, Vec<ir::Inst>)>,
    removable: bool,
    /// `by_caller` holds every caller (none is left alone for merging).
    every_caller: bool,
}

/// A callee's trials under the size policy, measured and not yet applied
/// ([`Inliner::size_trials`], [`Inliner::apply_size`]).
struct SizeTrials {
    g: usize,
    /// `|g|`.
    callee_size: i64,
    removable: bool,
    /// The trials cover every caller of `g`.
    every_caller: bool,
    trials: Vec<CallerTrial>,
    bases: Vec<Basis>,
    hot_by_caller: BTreeMap<usize, Vec<ir::Inst>>,
}

impl SizeTrials {
    /// `ΣΔf` over the trials.
    fn total_growth(&self) -> i64 {
        self.trials.iter().map(CallerTrial::growth).sum()
    }

    /// Inlining into every caller and deleting `g` pays on its own:
    /// `ΣΔf ≤ |g|`.
    fn deletion_pays(&self) -> bool {
        self.removable && self.every_caller && self.total_growth() <= self.callee_size
    }
}

/// A member's turn in its sibling class ([`Inliner::sibling_classes`]).
enum SiblingTurn {
    /// Decided at the first member's turn.
    Deferred,
    /// The first member: the whole class is decided now.
    First(Vec<usize>),
}

/// A key equal for functions identical up to their immediates (constants,
/// offsets, condition codes) and callees: the signature, the block
/// parameters' types, and per instruction in layout order its opcode,
/// types, value operands (numbered in definition order) and branch
/// targets, fed as the merge and profile hashes feed them
/// ([`feed_structure`]), without what those add of the immediates.
/// Instances of one generic that differ only in a constant
/// argument share it; functions that share it by accident are merely
/// decided together.
fn sibling_key(func: &Function) -> u64 {
    let numbers = Numbers::of(func, |_| true);
    let mut stream = Stream::default();
    stream.signature(&func.signature);
    for block in func.layout.blocks() {
        stream.str("block");
        for &p in func.dfg.block_params(block) {
            stream.ty(func.dfg.value_type(p));
        }
        for inst in func.layout.block_insts(block) {
            feed_structure(&mut stream, &numbers, func, inst);
        }
    }
    stream.finish()
}

/// An inlining decided on an estimate, to be made when the caller is next
/// read.
struct Pending {
    callee: usize,
    sites: Vec<ir::Inst>,
}

/// One caller's share of a decision about callee `g`.
struct CallerTrial {
    caller: usize,
    sites: Vec<ir::Inst>,
    /// `Δf` as the size model estimates it (size policy).
    estimate: Estimate,
    /// The measured outcome, if the trial was compiled.
    measured: Option<Measured>,
}

/// A trial compiled: `f[g]` and its size.
struct Measured {
    inlined: Function,
    /// `Δf = |f[g]| − |f|`.
    growth: i64,
    /// `|f[g]|`.
    size_after: usize,
}

/// Why a trial was, or was not, compiled (for the remark).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Basis {
    Measured,
    Estimated,
    /// Near the threshold, but the caller's measuring budget is spent: the
    /// estimate corrected by the median error of the caller's measured
    /// trials ([`median_error`]).
    BudgetSpent {
        correction: i64,
    },
}

impl CallerTrial {
    /// `Δf`: measured if the trial was compiled, else estimated.
    fn growth(&self) -> i64 {
        self.measured
            .as_ref()
            .map_or(self.estimate.bytes, |m| m.growth)
    }
}

impl<'m> Inliner<'m> {
    fn new(
        module: &'m mut ClifModule,
        isa: Option<&'m dyn TargetIsa>,
        options: &'m InlineOptions,
    ) -> Self {
        let graph = CallGraph::new(module);
        let n = module.functions.len();
        Inliner {
            module,
            isa,
            options,
            graph,
            sizes: vec![None; n],
            facts: (0..n).map(|_| None).collect(),
            budget: vec![None; n],
            errors: vec![Vec::new(); n],
            unpruned: BTreeSet::new(),
            pending: (0..n).map(|_| Vec::new()).collect(),
            pending_into: BTreeMap::new(),
            retired: BTreeMap::new(),
            deleted: vec![false; n],
            splitting: vec![false; n],
            repeated: vec![false; n],
            looped: vec![false; n],
            report: InlineReport::default(),
        }
    }

    fn name(&self, f: usize) -> &str {
        let symbol = self.module.functions[f].symbol;
        &self.module.symbols[symbol as usize].name
    }

    fn size(&mut self, f: usize) -> Option<usize> {
        if self.sizes[f].is_none() {
            let isa = self.isa.expect("sizes are measured only with an ISA");
            let func = &self.module.functions[f].func;
            self.report.stats.compiled_insts += count_insts(func) as u64;
            self.sizes[f] = Some(self.module.code_size(func, isa));
        }
        self.sizes[f].flatten()
    }

    /// The facts of caller `f`, true of `site`.
    fn facts(&mut self, f: usize, site: ir::Inst) -> &CallerFacts {
        let stale = self.facts[f]
            .as_ref()
            .is_none_or(|facts| !facts.knows(site));
        if stale {
            self.facts[f] = Some(CallerFacts::of(&self.module.functions[f].func));
        }
        self.facts[f].as_ref().expect("just filled")
    }

    /// `|g|` as the size policy knows it: measured, or estimated under
    /// [`Decide::Estimate`].
    fn callee_bytes(&mut self, g: usize) -> Option<CalleeBytes> {
        match self.options.decide {
            Decide::Estimate => Some(CalleeBytes::Estimated(size_model::function_bytes(
                &self.module.functions[g].func,
            ))),
            Decide::Measure | Decide::EstimateThenMeasure => {
                self.size(g).map(|n| CalleeBytes::Measured(n as i64))
            }
        }
    }

    /// The size model's `Δf` for inlining `g` (summarized by `callee`) at
    /// `sites` of `caller`.
    fn estimate(&mut self, caller: usize, callee: &CalleeSummary, sites: &[ir::Inst]) -> Estimate {
        let mut summaries = Vec::with_capacity(sites.len());
        for &site in sites {
            self.facts(caller, site);
            let facts = self.facts[caller].as_ref().expect("just filled");
            let func = &self.module.functions[caller].func;
            summaries.push(SiteSummary::of(func, site, &facts.used));
        }
        let calls = self.facts[caller].as_ref().map_or(0, |f| f.calls);
        size_model::inline_delta(callee, &summaries, calls)
    }

    /// Whether a trial of `caller` may be compiled now.
    fn may_measure(&mut self, caller: usize) -> bool {
        match self.options.decide {
            Decide::Measure => true,
            Decide::Estimate => false,
            Decide::EstimateThenMeasure => {
                let budget = self.options.measure_budget;
                let func = &self.module.functions[caller].func;
                let left = *self.budget[caller].get_or_insert_with(|| budget.of(count_insts(func)));
                left > 0
            }
        }
    }

    /// Compiles `caller` with `g` inlined at `sites` (and `caller` as it is,
    /// if its size is not known), charging its budget.
    fn measure(&mut self, caller: usize, g: usize, sites: &[ir::Inst]) -> Option<Measured> {
        let isa = self.isa?;
        self.flush(caller);
        let compiled_before = self.report.stats.compiled_insts;
        let before = self.size(caller);
        let inlined = self.inline_sites(caller, g, sites);
        let after = inlined.as_ref().and_then(|f| {
            self.report.stats.compiled_insts += count_insts(f) as u64;
            self.module.code_size(f, isa)
        });
        let spent = self.report.stats.compiled_insts - compiled_before;
        if let Some(left) = &mut self.budget[caller] {
            *left = left.saturating_sub(spent);
        }
        self.report.stats.measured += 1;
        let (before, inlined, after) = (before?, inlined?, after?);
        Some(Measured {
            inlined,
            growth: after as i64 - before as i64,
            size_after: after,
        })
    }

    /// Whether every site of `g` in `caller` declares `g` with its own
    /// signature (Cranelift's inliner would refuse the others).
    fn signatures_match(&self, caller: usize, g: usize, sites: &[ir::Inst]) -> bool {
        let func = &self.module.functions[caller].func;
        let signature = &self.module.functions[g].func.signature;
        sites.iter().all(|&site| match func.dfg.insts[site] {
            ir::InstructionData::Call { func_ref, .. } => {
                let declared = func.dfg.ext_funcs[func_ref].signature;
                func.dfg.signatures[declared] == *signature
            }
            _ => false,
        })
    }

    /// The functions that call `g` once the pending inlinings are made: the
    /// call graph's callers but those whose every call of `g` is pending.
    fn callers_of(&self, g: usize) -> Vec<usize> {
        let symbol = self.module.functions[g].symbol;
        let Some(pending) = self.pending_into.get(&g).filter(|p| !p.is_empty()) else {
            return self.graph.callers(symbol);
        };
        self.graph
            .callers(symbol)
            .into_iter()
            .filter(|f| {
                !pending.contains(f) || {
                    let inlined: BTreeSet<ir::Inst> = self.pending[*f]
                        .iter()
                        .filter(|p| p.callee == g)
                        .flat_map(|p| p.sites.iter().copied())
                        .collect();
                    self.graph
                        .references(*f)
                        .calls
                        .iter()
                        .any(|&(inst, s)| s == symbol && !inlined.contains(&inst))
                }
            })
            .collect()
    }

    /// Whether deleting `g` after inlining it everywhere is allowed.
    fn removable(&self, g: usize, members: &BTreeSet<usize>) -> bool {
        let symbol = self.module.functions[g].symbol;
        self.module.symbols[symbol as usize].linkage == Linkage::Local
            && !self.graph.is_address_taken(symbol)
            // A function merging will merge costs a thunk, not its body:
            // deleting it saves far less than its measured size.
            && !self.is_kept(g)
            && !self.options.shared.contains(self.name(g))
            && self
                .graph
                .callers(symbol)
                .iter()
                .all(|f| !members.contains(f))
    }

    /// Gathers the calls of `g` from outside its component `members` that
    /// are to be decided (flushing what `g` and its component wait for),
    /// and inlines the hot calls of merge members alike in their group.
    fn calls_of(&mut self, g: usize, members: &BTreeSet<usize>) -> Option<CallsOf> {
        if self.deleted[g] {
            return None;
        }
        // `g` is read as a callee from now on; the bodies inlined pending
        // from its component may call it.
        self.flush(g);
        let waiting: BTreeSet<usize> = members
            .iter()
            .filter_map(|h| self.pending_into.get(h))
            .flatten()
            .copied()
            .collect();
        for f in waiting {
            self.flush(f);
        }
        let symbol = self.module.functions[g].symbol;
        let mut by_caller: Vec<(usize, Vec<ir::Inst>)> = Vec::new();
        let mut alike_kept: Vec<(usize, Vec<ir::Inst>)> = Vec::new();
        for (f, inst) in self.graph.call_sites(symbol) {
            if members.contains(&f) || self.deleted[f] {
                continue;
            }
            let list = match self.is_kept(f) {
                false => &mut by_caller,
                true if self.is_alike(f, g) => &mut alike_kept,
                true => continue,
            };
            match list.last_mut() {
                Some((last, sites)) if *last == f => sites.push(inst),
                _ => list.push((f, vec![inst])),
            }
        }
        for (caller, sites) in alike_kept {
            let pair = (self.name(caller).to_string(), self.name(g).to_string());
            match self.options.inline_alike.contains(&pair) {
                true => self.inline_regardless(g, caller, sites, false),
                false => {
                    let hot = self.hot_sites(caller, g, &sites);
                    self.inline_hot_sites(g, caller, hot);
                }
            }
        }
        if by_caller.is_empty() {
            return None;
        }
        // Only a callee whose every caller is decided here may go: a caller
        // left as it is (`keep`) still calls it.
        let every_caller = by_caller.len() == self.graph.callers(symbol).len();
        let removable = self.removable(g, members);
        Some(CallsOf {
            by_caller,
            removable,
            every_caller,
        })
    }

    /// Decides every call of `g` from outside its component `members`.
    fn decide_calls_of(&mut self, g: usize, members: &BTreeSet<usize>) {
        let Some(calls) = self.calls_of(g, members) else {
            return;
        };
        match self.options.policy {
            Policy::Size => {
                if let Some(trials) = self.size_trials(g, calls.by_caller, calls.removable) {
                    let delete = trials.deletion_pays();
                    self.apply_size(trials, delete);
                }
            }
            Policy::Speed => {
                self.decide_for_speed(g, calls.by_caller, calls.removable && calls.every_caller)
            }
        }
    }

    /// The sibling classes of `order` (the bottom-up components) that are
    /// decided together ([`sibling_key`]): size policy, two or more
    /// members, each a component of its own calling neither itself nor
    /// another member, no caller calling two members (their trials would
    /// be measured on the same body). The class is decided at its first
    /// member's turn, the others brought forward to it, when by then every
    /// callee of every member has had its turn (itself brought forward, if
    /// it is a member of a class decided earlier): a member's callers
    /// come after it in `order`, so they come after that turn too.
    fn sibling_classes(&self, order: &[Vec<usize>]) -> BTreeMap<usize, SiblingTurn> {
        let mut turns = BTreeMap::new();
        if self.options.policy != Policy::Size || self.isa.is_none() {
            return turns;
        }
        let mut classes: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
        for component in order {
            if let [f] = component[..] {
                let symbol = self.module.functions[f].symbol;
                if !self.graph.callers(symbol).contains(&f) {
                    classes
                        .entry(sibling_key(&self.module.functions[f].func))
                        .or_default()
                        .push(f);
                }
            }
        }
        let mut class_of: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for class in classes.into_values().filter(|c| c.len() > 1) {
            class_of.insert(class[0], class);
        }
        // The turn at which each function is decided, as far as known.
        let mut turn = vec![None; self.module.functions.len()];
        for (i, component) in order.iter().enumerate() {
            for &f in component {
                turn[f].get_or_insert(i);
            }
            let Some(class) = component.first().and_then(|f| class_of.get(f)) else {
                continue;
            };
            let mut callers = BTreeSet::new();
            let ready = class.iter().all(|&g| {
                let symbol = self.module.functions[g].symbol;
                let callees_done = self.graph.references(g).calls.iter().all(|&(_, s)| {
                    self.graph
                        .function_of(s)
                        .is_none_or(|c| !class.contains(&c) && turn[c].is_some_and(|t| t < i))
                });
                callees_done
                    && self
                        .graph
                        .callers(symbol)
                        .into_iter()
                        .all(|f| callers.insert(f))
            });
            if !ready {
                continue;
            }
            for &g in &class[1..] {
                turn[g] = Some(i);
                turns.insert(g, SiblingTurn::Deferred);
            }
            turns.insert(class[0], SiblingTurn::First(class.clone()));
        }
        turns
    }

    /// Decides the calls of a sibling class ([`Inliner::sibling_classes`])
    /// alike: when every member may be deleted, all are inlined into every
    /// caller and deleted if the callers' growth summed over the class is
    /// at most the members' summed size, else none is; the calls that cost
    /// no more than the call, and the hot sites, are then decided per
    /// caller as for any callee. Deciding each member on its own margin
    /// makes instances of one generic differ by a few bytes of constants
    /// (one deleted, its sibling kept), and then the instances that called
    /// them no longer merge.
    fn decide_siblings(&mut self, class: &[usize]) {
        let mut decided = Vec::with_capacity(class.len());
        for &g in class {
            if self.deleted[g] {
                continue;
            }
            let Some(calls) = self.calls_of(g, &BTreeSet::from([g])) else {
                continue;
            };
            let deletable = calls.removable && calls.every_caller;
            if let Some(trials) = self.size_trials(g, calls.by_caller, calls.removable) {
                decided.push((trials, deletable));
            }
        }
        let all_deletable = decided.len() == class.len()
            && decided
                .iter()
                .all(|(t, deletable)| *deletable && t.every_caller);
        let growth: i64 = decided.iter().map(|(t, _)| t.total_growth()).sum();
        let size: i64 = decided.iter().map(|(t, _)| t.callee_size).sum();
        for (trials, _) in decided {
            let delete = match all_deletable {
                true => growth <= size,
                false => trials.deletion_pays(),
            };
            self.apply_size(trials, delete);
        }
    }

    /// Whether `f` is left as it is for merging ([`InlineOptions::keep`]),
    /// unless it is *splitting*: with [`InlineOptions::hot_sites_in_members`],
    /// a member with a hot site whose callee is not alike in its group
    /// ([`InlineOptions::keep_alike`]) differs from the other members once
    /// that callee is inlined, so its group will not merge it; it is then
    /// a caller and callee like any other (inlined into its callers and
    /// deleted where that pays, as `-O2` inlines a generic instance used
    /// once).
    fn is_kept(&self, f: usize) -> bool {
        self.options.keep.contains(self.name(f)) && !self.splitting[f]
    }

    /// The functions that may run many times, before any inlining, by the
    /// static estimate of the tiny-callee rule
    /// ([`InlineOptions::hot_tiny_insts`]): those in a recursive component
    /// of the call graph, those called inside a loop, and every function
    /// they call, transitively. The rest run a bounded number of times
    /// (`main` and what it calls outside loops), and their calls stay
    /// calls where that is smaller: in straight-line code a call costs
    /// its few cycles once. Also the functions called inside a loop of
    /// another ([`Inliner::looped`]).
    fn find_repeated(&mut self) {
        if self.options.hot_tiny_insts == 0 || self.options.policy != Policy::Size {
            return;
        }
        let mut work = Vec::new();
        for component in self.graph.bottom_up() {
            let recursive = component.len() > 1
                || component
                    .iter()
                    .any(|&f| self.graph.callees(f).contains(&f));
            if recursive {
                work.extend(component);
            }
        }
        for f in 0..self.module.functions.len() {
            let func = &self.module.functions[f].func;
            let in_loop = crate::heat::in_loop_blocks(func);
            for &(inst, symbol) in &self.graph.references(f).calls {
                let looped = func.layout.inst_block(inst).is_some_and(|b| in_loop[b]);
                if let Some(g) = self.graph.function_of(symbol).filter(|_| looped) {
                    self.looped[g] |= g != f;
                    work.push(g);
                }
            }
        }
        while let Some(f) = work.pop() {
            if !std::mem::replace(&mut self.repeated[f], true) {
                work.extend(self.graph.callees(f));
            }
        }
    }

    /// The members [`Inliner::is_kept`] finds splitting, before any
    /// inlining (the callees' sizes as they come).
    fn find_splitting(&mut self) {
        if !self.options.hot_sites_in_members || self.options.policy != Policy::Size {
            return;
        }
        for f in 0..self.module.functions.len() {
            if !self.options.keep.contains(self.name(f)) {
                continue;
            }
            let mut by_callee: BTreeMap<usize, Vec<ir::Inst>> = BTreeMap::new();
            for &(inst, symbol) in &self.graph.references(f).calls {
                if let Some(g) = self.graph.function_of(symbol).filter(|&g| g != f) {
                    by_callee.entry(g).or_default().push(inst);
                }
            }
            self.splitting[f] = by_callee.iter().any(|(&g, sites)| {
                let pair = (self.name(f).to_string(), self.name(g).to_string());
                !self.options.keep_alike.contains(&pair) && !self.hot_sites(f, g, sites).is_empty()
            });
        }
    }

    /// Whether `f`, a caller [`InlineOptions::keep`] leaves alone, may have
    /// its hot calls of `g` inlined: the size policy, and every member of
    /// its merge group calls an alike callee there.
    fn is_alike(&self, f: usize, g: usize) -> bool {
        self.options.policy == Policy::Size
            && (self.options.hot_sites_in_members
                || self
                    .options
                    .keep_alike
                    .contains(&(self.name(f).to_string(), self.name(g).to_string())))
    }

    /// The size policy (step 3 of the module doc), first half: each `Δf`
    /// estimated and measured as [`InlineOptions::decide`] says. `None`
    /// when nothing is left to decide (a large callee that cannot go has
    /// its hot sites inlined here).
    fn size_trials(
        &mut self,
        g: usize,
        by_caller: Vec<(usize, Vec<ir::Inst>)>,
        removable: bool,
    ) -> Option<SizeTrials> {
        self.isa?;
        let callee_bytes = self.callee_bytes(g)?;
        let callee_size = match callee_bytes {
            CalleeBytes::Measured(n) | CalleeBytes::Estimated(n) => n,
        };
        let hot: Vec<(usize, Vec<ir::Inst>)> = by_caller
            .iter()
            .map(|(caller, sites)| (*caller, self.hot_sites(*caller, g, sites)))
            .collect();
        if !removable && callee_size > self.options.small_callee_bytes as i64 {
            for (caller, sites) in hot {
                self.inline_hot_sites(g, caller, sites);
            }
            return None;
        }
        let summary = CalleeSummary::of(&self.module.functions[g].func, callee_bytes);
        let mut trials = Vec::new();
        let mut hot_by_caller = BTreeMap::new();
        for ((caller, sites), (_, hot)) in by_caller.into_iter().zip(hot) {
            hot_by_caller.insert(caller, hot);
            if !self.signatures_match(caller, g, &sites) {
                continue;
            }
            let estimate = self.estimate(caller, &summary, &sites);
            trials.push(CallerTrial {
                caller,
                sites,
                estimate,
                measured: None,
            });
        }
        let callers = self.callers_of(g).len();
        let may_delete = removable && trials.len() == callers;
        let bases = self.measure_trials(g, &mut trials, may_delete.then_some(callee_size));
        let every_caller = trials.len() == callers;
        Some(SizeTrials {
            g,
            callee_size,
            removable,
            every_caller,
            trials,
            bases,
            hot_by_caller,
        })
    }

    /// The size policy, second half: with `delete`, inline every trial and
    /// delete the callee; else inline the trials with `Δf ≤ 0` and the hot
    /// sites.
    fn apply_size(&mut self, decision: SizeTrials, mut delete: bool) {
        let SizeTrials {
            g,
            callee_size,
            removable,
            trials,
            bases,
            mut hot_by_caller,
            ..
        } = decision;
        for (trial, basis) in trials.into_iter().zip(bases) {
            let growth = trial.growth();
            if delete || growth <= 0 {
                let why = if delete {
                    format!("into `{}`; the callee is deleted", self.name(trial.caller))
                } else {
                    format!(
                        "into `{}`: the body costs no more than the call",
                        self.name(trial.caller)
                    )
                };
                let reason = format!("{why} ({})", basis.describe(growth));
                if !self.accept(g, trial, reason) {
                    delete = false;
                }
            } else {
                let hot = hot_by_caller.remove(&trial.caller).unwrap_or_default();
                if hot.is_empty() {
                    self.refuse(g, &trial, basis, callee_size, removable);
                } else {
                    self.inline_hot_sites(g, trial.caller, hot);
                }
            }
        }
        if delete {
            self.report.stats.bytes_saved += callee_size;
            self.delete(g, "inlined into every caller");
        }
    }

    /// Compiles the trials the decision needs measured: under
    /// [`Decide::Measure`] all of them; under
    /// [`Decide::EstimateThenMeasure`] those whose estimate does not settle
    /// the decision — all of them when `delete_threshold` (`|g|`, when `g`
    /// may be deleted) is within the range of the estimated `ΣΔf`, else
    /// those whose `Δf` range contains 0 —, within each caller's budget.
    /// Trials Cranelift cannot inline or compile are dropped, as they were
    /// before the model. Returns each remaining trial's basis.
    fn measure_trials(
        &mut self,
        g: usize,
        trials: &mut Vec<CallerTrial>,
        delete_threshold: Option<i64>,
    ) -> Vec<Basis> {
        let total = trials
            .iter()
            .map(|t| t.estimate)
            .fold(Estimate::exact(0), |a, b| a + b);
        let deletion = delete_threshold.map(|size| {
            (
                total.surely_at_most(size),
                !total.surely_at_most(size) && !total.surely_above(size),
            )
        });
        let mut bases = Vec::with_capacity(trials.len());
        let mut kept = Vec::with_capacity(trials.len());
        for mut trial in std::mem::take(trials) {
            let estimate = trial.estimate;
            let settled = match deletion {
                Some((true, _)) => true,
                Some((false, true)) => false,
                _ => trial.estimate.surely_at_most(0) || trial.estimate.surely_above(0),
            };
            let wanted = match self.options.decide {
                Decide::Measure => true,
                Decide::EstimateThenMeasure => !settled,
                Decide::Estimate => false,
            };
            let basis = if !wanted {
                Basis::Estimated
            } else if self.may_measure(trial.caller) {
                match self.measure(trial.caller, g, &trial.sites) {
                    Some(measured) => {
                        self.errors[trial.caller].push(measured.growth - trial.estimate.bytes);
                        trial.measured = Some(measured);
                        Basis::Measured
                    }
                    None => continue,
                }
            } else {
                let correction = median_error(&self.errors[trial.caller]);
                trial.estimate = trial.estimate + Estimate::exact(correction);
                Basis::BudgetSpent { correction }
            };
            self.report.trials.push(TrialRecord {
                caller: self.name(trial.caller).to_string(),
                callee: self.name(g).to_string(),
                sites: trial.sites.len(),
                estimate,
                measured: trial.measured.as_ref().map(|m| m.growth),
            });
            if basis != Basis::Measured {
                self.report.stats.estimated += 1;
            }
            bases.push(basis);
            kept.push(trial);
        }
        *trials = kept;
        bases
    }

    /// The sites among `sites` (calls of `g` in `caller`) that the size
    /// policy inlines for speed whatever they cost, in a caller not known
    /// cold: `g` is tiny ([`InlineOptions::hot_tiny_insts`]), `caller` may
    /// run many times ([`Inliner::find_repeated`]) and inlining `g` splits
    /// no merge group ([`Inliner::splits_for_tiny`]), or a loop can run after
    /// the site, or `caller` is called inside a loop of another function;
    /// or `g` is small and the site is known hot or lies inside a loop.
    fn hot_sites(&mut self, caller: usize, g: usize, sites: &[ir::Inst]) -> Vec<ir::Inst> {
        let heat = Arc::clone(&self.options.heat);
        let caller_name = self.name(caller).to_string();
        // The callee limits inside loops and at profile-hot sites outside
        // them: a hot caller gets `-O2`'s (measured on bench/: a larger
        // limit outside loops, 60, cost 1.5 KB on `calc` and `hashmap`
        // and gained no run time).
        let callee = &self.module.functions[g].func;
        let callee_insts = policy::callee_insts(callee);
        let (in_loop_limit, straight_limit) = match heat.heat(&caller_name) {
            Some(Heat::Cold) => return Vec::new(),
            Some(Heat::Hot) => (self.options.speed.in_loop, self.options.speed.tiny),
            None if self.options.hot_accessor_insts > self.options.hot_callee_insts
                && callee_insts <= self.options.hot_accessor_insts
                && is_accessor(callee) =>
            {
                (self.options.hot_accessor_insts, 0)
            }
            None => (self.options.hot_callee_insts, 0),
        };
        let tiny = callee_insts <= self.options.hot_tiny_insts && self.repeated[caller];
        let splits = tiny && self.splits_for_tiny(caller, g);
        if !tiny && callee_insts > in_loop_limit.max(straight_limit) {
            return Vec::new();
        }
        let mut hot = Vec::new();
        for &site in sites {
            let facts = self.facts(caller, site);
            let (in_loop, loop_follows) = (facts.in_loop[site], facts.loop_follows[site]);
            let wanted = (tiny && (!splits || loop_follows || self.looped[caller]))
                || match in_loop {
                    true => callee_insts <= in_loop_limit,
                    false => heat.is_hot_site(&caller_name, site) && callee_insts <= straight_limit,
                };
            if wanted {
                hot.push(site);
            }
        }
        hot
    }

    /// Whether inlining tiny `g` into `caller` would split `caller`'s merge
    /// group: `caller` is a member ([`InlineOptions::keep`]) and the
    /// other members do not call an alike callee there
    /// ([`InlineOptions::keep_alike`]). The tiny rule leaves such sites to
    /// the merger where no loop can run after them: there the group's bytes
    /// are worth more than the call (bench/generic_zoo: splitting the groups
    /// of `ring::put<N>`, `ring::window_sums<N>`, ... on their tiny callees
    /// cost 2.7 KB, 10% of its `-Os` code). Where a loop follows, the merged
    /// body's call through a parameter is an unknown callee that may write
    /// any memory, so the loop reloads what it read before the call
    /// (bench/generic_zoo's `set::slot<h>`: the probe loop reloaded `s.keys`
    /// and its length on every step after `h(key)`); such sites are inlined
    /// and the group splits (similar-function merging may merge the members
    /// again with a branch, which writes no memory). So are the sites of a
    /// member called inside a loop: the member is a hot site there, and
    /// once inlined its call through a parameter would be in the loop
    /// (bench/generic_zoo's `ring::get<N>` and `put<N>`, called in
    /// `window_max<N>`'s loops: the merged body called `ring_index<N>`
    /// indirectly on every step).
    fn splits_for_tiny(&self, caller: usize, g: usize) -> bool {
        let (caller, callee) = (self.name(caller), self.name(g));
        self.options.keep.contains(caller)
            && !self
                .options
                .keep_alike
                .contains(&(caller.to_string(), callee.to_string()))
    }

    /// Inlines `g` at the hot `sites` of `caller` (size policy); the growth
    /// in the remark is measured only under [`Decide::Measure`] (nothing is
    /// decided by it).
    fn inline_hot_sites(&mut self, g: usize, caller: usize, sites: Vec<ir::Inst>) {
        self.inline_regardless(g, caller, sites, true);
    }

    /// Inlines `g` at `sites` of `caller` whatever the growth: hot sites,
    /// or alike calls of merge members priced to pay
    /// ([`InlineOptions::inline_alike`]).
    fn inline_regardless(&mut self, g: usize, caller: usize, sites: Vec<ir::Inst>, hot: bool) {
        if sites.is_empty() || !self.signatures_match(caller, g, &sites) {
            return;
        }
        let (measured, estimate, basis) = if self.options.decide == Decide::Measure {
            let Some(measured) = self.measure(caller, g, &sites) else {
                return;
            };
            (Some(measured), Estimate::exact(0), Basis::Measured)
        } else {
            let bytes = match self.sizes[g] {
                Some(Some(n)) => CalleeBytes::Measured(n as i64),
                _ => CalleeBytes::Estimated(size_model::function_bytes(
                    &self.module.functions[g].func,
                )),
            };
            let summary = CalleeSummary::of(&self.module.functions[g].func, bytes);
            let estimate = self.estimate(caller, &summary, &sites);
            (None, estimate, Basis::Estimated)
        };
        let trial = CallerTrial {
            caller,
            sites,
            estimate,
            measured,
        };
        let growth = trial.growth();
        let reason = match hot {
            true => format!(
                "into `{}`: hot ({} site(s) in a loop, known hot by the profile, or of a tiny callee; {})",
                self.name(caller),
                trial.sites.len(),
                basis.describe(growth)
            ),
            false => format!(
                "into `{}`: every member of its merge group inlines an alike callee here, and the merged body costs less than keeping the callees ({})",
                self.name(caller),
                basis.describe(growth)
            ),
        };
        let sites = trial.sites.len() as u64;
        if self.accept(g, trial, reason) && hot {
            self.report.stats.hot_sites += sites;
        }
    }

    /// The speed policy (step 4 of the module doc). `removable`: `g` may be
    /// deleted once every call in `by_caller` is inlined (they are all of
    /// its calls).
    fn decide_for_speed(
        &mut self,
        g: usize,
        by_caller: Vec<(usize, Vec<ir::Inst>)>,
        removable: bool,
    ) {
        let callee_insts = policy::callee_insts(&self.module.functions[g].func);
        let single_site = removable && by_caller.len() == 1 && by_caller[0].1.len() == 1;
        let mut every_site_inlined = true;
        for (caller, sites) in by_caller {
            let caller_func = &self.module.functions[caller].func;
            let chosen =
                self.options
                    .speed
                    .choose_sites(caller_func, &sites, callee_insts, single_site);
            if chosen.len() < sites.len() {
                every_site_inlined = false;
            }
            if chosen.is_empty() {
                continue;
            }
            let Some(inlined) = self.inline_sites(caller, g, &chosen) else {
                every_site_inlined = false;
                continue;
            };
            let reason = format!(
                "into `{}`: {} instructions, {}",
                self.name(caller),
                callee_insts,
                if single_site {
                    "its only call"
                } else {
                    "small or in a loop"
                }
            );
            let trial = CallerTrial {
                caller,
                sites: chosen,
                estimate: Estimate::exact(0),
                measured: None,
            };
            self.accept_inlined(g, trial, inlined, None, reason);
        }
        if removable && every_site_inlined {
            self.delete(g, "inlined into every caller");
        }
    }

    /// `f` with the calls of `g` at `sites` inlined, or `None` when
    /// Cranelift's inliner refuses (the original is kept).
    fn inline_sites(&self, f: usize, g: usize, sites: &[ir::Inst]) -> Option<Function> {
        inline_at(
            &self.module.functions[f].func,
            &self.module.functions[g].func,
            sites,
        )
    }

    /// Inlines `trial` (the function compiled for it, or `g` at its sites
    /// now) and reports it; `false` if Cranelift's inliner refused.
    fn accept(&mut self, g: usize, mut trial: CallerTrial, reason: String) -> bool {
        let growth = trial.growth();
        let (inlined, size_after) = match trial.measured.take() {
            Some(m) => (m.inlined, Some(m.size_after)),
            None => {
                self.report.stats.bytes_saved -= growth;
                self.report_inlined(g, &trial, growth, None, reason);
                self.pending_into.entry(g).or_default().insert(trial.caller);
                self.pending[trial.caller].push(Pending {
                    callee: g,
                    sites: trial.sites,
                });
                return true;
            }
        };
        self.report.stats.bytes_saved -= growth;
        self.accept_inlined(g, trial, inlined, size_after.map(|n| (n, growth)), reason);
        true
    }

    /// Makes the inlinings pending in `f`, in place (no copy of `f`, whose
    /// unused external names are pruned at the end).
    ///
    /// Inlinings decided on estimates do not need `f[g]`, so they wait
    /// until something reads `f` (a measurement, `f`'s own decision as a
    /// callee, a callee of its component, the end), and are then made in
    /// as few walks over `f` as give the function inlining them one at a
    /// time would: Cranelift's inliner walks the caller in layout order and
    /// appends each inlined body's entities as it goes, so a run of pending
    /// inlinings whose sites follow each other in the layout, in decision
    /// order, is one walk with the same numbering. This is what keeps a
    /// caller of `n` calls `O(n)` walks away from `O(n²)`.
    fn flush(&mut self, f: usize) {
        let pending = std::mem::take(&mut self.pending[f]);
        let mut start = 0;
        while start < pending.len() {
            let func = &self.module.functions[f].func;
            let mut end = start + 1;
            while end < pending.len() && {
                let last = *pending[end - 1].sites.last().expect("a site");
                let next = pending[end].sites[0];
                // `pp_cmp` orders instructions of one block only.
                func.layout.inst_block(last) == func.layout.inst_block(next)
                    && func.layout.pp_cmp(last, next) == std::cmp::Ordering::Less
            } {
                end += 1;
            }
            self.inline_run(f, &pending[start..end]);
            start = end;
        }
        for p in &pending {
            if let Some(callers) = self.pending_into.get_mut(&p.callee) {
                callers.remove(&f);
            }
        }
    }

    /// Makes the pending inlinings `run` of `f` in one walk.
    fn inline_run(&mut self, f: usize, run: &[Pending]) {
        let func = std::mem::replace(&mut self.module.functions[f].func, Function::new());
        let (first_inst, first_gv) = (func.dfg.num_insts(), func.global_values.len());
        let body = |g: usize| {
            self.retired
                .get(&g)
                .unwrap_or(&self.module.functions[g].func)
        };
        let mut chooser = RunChooser {
            sites: run
                .iter()
                .flat_map(|p| p.sites.iter().map(|&s| (s, body(p.callee))))
                .collect(),
        };
        let mut ctx = Context::for_function(func);
        let inlined = ctx.inline(&mut chooser);
        // Cranelift cannot fail here but by running out of memory-flag
        // numbers (65,535 per function), which no program comes near.
        assert!(
            matches!(inlined, Ok(true)),
            "Cranelift's inliner refused checked sites"
        );
        let mut gv = first_gv;
        for p in run {
            let callee = body(p.callee);
            let copies = p.sites.len() * callee.global_values.len();
            repair_inlined_symbol_names(&mut ctx.func, callee, gv, copies);
            gv += copies;
        }
        self.module.functions[f].func = ctx.func;
        self.unpruned.insert(f);
        let sites: Vec<ir::Inst> = run.iter().flat_map(|p| p.sites.iter().copied()).collect();
        let func = &self.module.functions[f].func;
        self.graph
            .note_inlined(func, f, &sites, first_inst, first_gv);
    }

    /// Makes every pending inlining.
    fn flush_all(&mut self) {
        for f in 0..self.pending.len() {
            if !self.pending[f].is_empty() {
                self.flush(f);
            }
        }
        self.retired.clear();
    }

    /// Replaces `trial.caller` by `inlined` (of `size_and_growth`, when
    /// measured) and reports it.
    fn accept_inlined(
        &mut self,
        g: usize,
        trial: CallerTrial,
        inlined: Function,
        size_and_growth: Option<(usize, i64)>,
        reason: String,
    ) {
        let caller = trial.caller;
        let growth = size_and_growth.map_or(trial.estimate.bytes, |(_, growth)| growth);
        let before = &self.module.functions[caller].func;
        let (first_inst, first_gv) = (before.dfg.num_insts(), before.global_values.len());
        self.report_inlined(g, &trial, growth, size_and_growth.map(|(n, _)| n), reason);
        self.module.functions[caller].func = inlined;
        let func = &self.module.functions[caller].func;
        self.graph
            .note_inlined(func, caller, &trial.sites, first_inst, first_gv);
    }

    /// The remark and statistics of an inlining about to be made (with `f`
    /// not yet changed), and what the estimates must remember of it: `f`'s
    /// size (`size_after`, when measured) and its calls.
    fn report_inlined(
        &mut self,
        g: usize,
        trial: &CallerTrial,
        growth: i64,
        size_after: Option<usize>,
        reason: String,
    ) {
        let caller = trial.caller;
        let sites = trial.sites.len() as u64;
        self.report.stats.inlined += sites;
        let mut remark = Remark::passed(PASS, "inlined", self.name(g), reason)
            .in_module(&self.module.name)
            .count("inlined", sites);
        if self.options.policy == Policy::Size {
            remark = remark.bytes(-growth);
        }
        self.report.remarks.push(remark);
        // The frame term of later estimates: the inlined calls are gone,
        // the callee's calls came in.
        let func = &self.module.functions[caller].func;
        let removed_calls = trial
            .sites
            .iter()
            .filter(|&&site| func.dfg.insts[site].opcode() == ir::Opcode::Call)
            .count() as i32;
        let callee_calls =
            CalleeSummary::of(&self.module.functions[g].func, CalleeBytes::Estimated(0)).calls;
        if let Some(facts) = &mut self.facts[caller] {
            facts.calls += sites as i32 * callee_calls - removed_calls;
        }
        self.sizes[caller] = size_after.map(Some);
    }

    fn refuse(
        &mut self,
        g: usize,
        trial: &CallerTrial,
        basis: Basis,
        callee_size: i64,
        removable: bool,
    ) {
        self.report.stats.refused += 1;
        let growth = trial.growth();
        let why = if removable {
            format!(
                "into `{}`: grows it by {} bytes, and the callers' growth exceeds the callee's {} bytes",
                self.name(trial.caller),
                growth,
                callee_size
            )
        } else {
            format!(
                "into `{}`: grows it by {} bytes, and the callee stays",
                self.name(trial.caller),
                growth
            )
        };
        let why = format!("{why} ({})", basis.describe(growth));
        let remark = Remark::missed(PASS, "grew", self.name(g), why)
            .in_module(&self.module.name)
            .bytes(-growth)
            .count("refused", 1);
        self.report.remarks.push(remark);
    }

    fn delete(&mut self, g: usize, reason: &str) {
        self.deleted[g] = true;
        self.report.stats.deleted += 1;
        let mut remark = Remark::passed(PASS, "deleted", self.name(g), reason)
            .in_module(&self.module.name)
            .count("deleted", 1);
        if let Some(Some(size)) = self.sizes[g] {
            remark = remark.bytes(size as i64);
        }
        self.report.remarks.push(remark);
        // A deleted function calls nothing: its callees lose a caller.
        let empty = Function::with_name_signature(
            self.module.functions[g].func.name.clone(),
            self.module.functions[g].func.signature.clone(),
        );
        let body = std::mem::replace(&mut self.module.functions[g].func, empty);
        if self.pending_into.get(&g).is_some_and(|c| !c.is_empty()) {
            self.retired.insert(g, body);
        }
        self.graph.refresh(self.module, g);
    }

    /// Step 5: local functions nothing references, until none is left.
    fn delete_unreferenced(&mut self) {
        self.flush_all();
        loop {
            let dead: Vec<usize> = (0..self.module.functions.len())
                .filter(|&f| !self.deleted[f] && self.is_unreferenced(f))
                .collect();
            if dead.is_empty() {
                return;
            }
            for f in dead {
                self.delete(f, "no longer referenced");
            }
        }
    }

    fn is_unreferenced(&self, f: usize) -> bool {
        let symbol = self.module.functions[f].symbol;
        self.module.symbols[symbol as usize].linkage == Linkage::Local
            && !self.graph.is_address_taken(symbol)
            && self.graph.callers(symbol).iter().all(|&c| c == f)
    }

    /// Removes the deleted functions and every symbol nothing names.
    fn finish(self) -> InlineReport {
        let Inliner {
            module,
            deleted,
            report,
            unpruned,
            ..
        } = self;
        for f in unpruned {
            clif_module::prune_external_names(&mut module.functions[f].func);
        }
        if !deleted.iter().any(|&d| d) {
            return report;
        }
        let removed: BTreeSet<u32> = module
            .functions
            .iter()
            .zip(&deleted)
            .filter(|(_, &d)| d)
            .map(|(def, _)| def.symbol)
            .collect();
        let mut index = 0;
        module.functions.retain(|_| {
            index += 1;
            !deleted[index - 1]
        });
        // Functions that still declare (without using) a deleted callee.
        for def in &mut module.functions {
            let names_removed = def.func.params.user_named_funcs().values().any(|u| {
                u.namespace == clif_module::SYMBOL_NAMESPACE && removed.contains(&u.index)
            });
            if names_removed {
                clif_module::prune_external_names(&mut def.func);
            }
        }
        clif_module::remove_symbols(module, &removed);
        report
    }
}

/// Whether `func` is an *accessor* ([`InlineOptions::hot_accessor_insts`]):
/// no loop, and no call outside its cold blocks (a check's trap path may
/// call the runtime).
fn is_accessor(func: &Function) -> bool {
    let in_loop = crate::heat::in_loop_blocks(func);
    func.layout.blocks().all(|block| {
        !in_loop[block]
            && (func.layout.is_cold(block)
                || func
                    .layout
                    .block_insts(block)
                    .all(|inst| !func.dfg.insts[inst].opcode().is_call()))
    })
}

/// `caller` with the calls of `callee` at `sites` inlined (both functions
/// of one [`ClifModule`], so their external names share its symbol table),
/// or `None` when Cranelift's inliner refuses or a site declares the callee
/// with another signature than its definition's. Other passes price and
/// apply inlining with it too (`crate::price`, `crate::merge::thunks`).
pub fn inline_at(caller: &Function, callee: &Function, sites: &[ir::Inst]) -> Option<Function> {
    let mut ctx = Context::for_function(caller.clone());
    let mut chooser = SiteChooser {
        sites: sites.iter().copied().collect(),
        callee,
        refused: false,
    };
    let first_inlined_gv = caller.global_values.len();
    match ctx.inline(&mut chooser) {
        Ok(true) if !chooser.refused => {
            let mut inlined = ctx.func;
            let copies = inlined.global_values.len() - first_inlined_gv;
            repair_inlined_symbol_names(&mut inlined, callee, first_inlined_gv, copies);
            clif_module::prune_external_names(&mut inlined);
            Some(inlined)
        }
        _ => None,
    }
}

/// The median of the size model's errors on one caller's measured trials
/// (0 if none): the correction of its trials decided on estimates once its
/// budget is spent. The model's error is largely the caller's — how its
/// register pressure and frame absorb a call or a body —, and a caller with
/// many calls, the one that exhausts its budget, has had many trials
/// measured: on `main` calling 500 one-line functions, the estimate of
/// each inlining is +1 byte where Cranelift's is −8 to −12.
fn median_error(errors: &[i64]) -> i64 {
    let mut sorted = errors.to_vec();
    sorted.sort_unstable();
    sorted.get(sorted.len() / 2).copied().unwrap_or(0)
}

impl Basis {
    /// How the remark says `growth` was known.
    fn describe(self, growth: i64) -> String {
        match self {
            Basis::Measured => format!("Δ {growth:+} bytes, measured"),
            Basis::Estimated => format!("Δ {growth:+} bytes, estimated"),
            Basis::BudgetSpent { correction: 0 } => {
                format!("Δ {growth:+} bytes, estimated: the caller's measuring budget is spent")
            }
            Basis::BudgetSpent { correction } => format!(
                "Δ {growth:+} bytes, estimated and corrected by {correction:+} (the caller's \
                 measured trials): the caller's measuring budget is spent"
            ),
        }
    }
}

/// Gives the global values Cranelift's inliner copied from `callee` the
/// caller's numbering of external names.
///
/// Cranelift 0.135's inliner clones `symbol` global values verbatim
/// (`create_global_values` in `cranelift_codegen::inline`): their
/// `ExternalName::User` reference keeps the callee's numbering, so in the
/// caller it names whatever the caller's table has at that number — a
/// miscompile that reads the wrong symbol. Each inlined site appends a copy
/// of all of the callee's global values, so global value `first + k·n + i`
/// (for `n` of the callee's) is the callee's `i`, up to `count` of them.
fn repair_inlined_symbol_names(func: &mut Function, callee: &Function, first: usize, count: usize) {
    use cranelift_codegen::entity::EntityRef as _;
    let per_copy = callee.global_values.len();
    if per_copy == 0 {
        return;
    }
    let copies: Vec<ir::GlobalValue> = func.global_values.keys().skip(first).take(count).collect();
    for gv in copies {
        let original = ir::GlobalValue::new((gv.index() - first) % per_copy);
        if let ir::GlobalValueData::Symbol {
            name: ir::ExternalName::User(callee_ref),
            ..
        } = callee.global_values[original]
        {
            let name = callee.params.user_named_funcs()[callee_ref].clone();
            let caller_ref = func.declare_imported_user_function(name);
            if let ir::GlobalValueData::Symbol {
                name: ir::ExternalName::User(r),
                ..
            } = &mut func.global_values[gv]
            {
                *r = caller_ref;
            }
        }
    }
}

/// Directs Cranelift's inliner to the sites of a run of pending inlinings,
/// each with its callee (signatures checked when they were decided).
struct RunChooser<'a> {
    sites: BTreeMap<ir::Inst, &'a Function>,
}

impl Inline for RunChooser<'_> {
    fn inline(
        &mut self,
        _caller: &Function,
        call_inst: ir::Inst,
        _call_opcode: ir::Opcode,
        _callee: ir::FuncRef,
        _call_args: &[ir::Value],
    ) -> InlineCommand<'_> {
        match self.sites.get(&call_inst) {
            Some(&callee) => InlineCommand::Inline {
                callee: Cow::Borrowed(callee),
                visit_callee: false,
            },
            None => InlineCommand::KeepCall,
        }
    }
}

/// Directs Cranelift's inliner to the chosen call sites of one callee.
struct SiteChooser<'a> {
    /// Call instructions of the caller as it was before inlining; the
    /// inliner gives inlined instructions new numbers, so these stay
    /// unambiguous while it works.
    sites: BTreeSet<ir::Inst>,
    callee: &'a Function,
    /// A chosen site declares the callee with another signature than its
    /// definition's; the caller is then left as it was.
    refused: bool,
}

impl Inline for SiteChooser<'_> {
    fn inline(
        &mut self,
        caller: &Function,
        call_inst: ir::Inst,
        _call_opcode: ir::Opcode,
        callee: ir::FuncRef,
        _call_args: &[ir::Value],
    ) -> InlineCommand<'_> {
        if !self.sites.contains(&call_inst) {
            return InlineCommand::KeepCall;
        }
        let declared = caller.dfg.ext_funcs[callee].signature;
        if caller.dfg.signatures[declared] != self.callee.signature {
            self.refused = true;
            return InlineCommand::KeepCall;
        }
        InlineCommand::Inline {
            callee: Cow::Borrowed(self.callee),
            visit_callee: false,
        }
    }
}
