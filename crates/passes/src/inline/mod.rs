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
//!   the threshold is near zero. parec measures both sides with Cranelift
//!   instead of estimating them.
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
//! 3. Size policy ([`Policy::Size`]): for each caller `f` of `g`, measure
//!    `Δf`. If `g` is removable and `Σf Δf ≤ |g|`, inline into every caller
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
//! Size policy: one Cranelift compilation per (caller, callee) pair tried
//! plus one per function, for callees small enough or removable. Speed
//! policy: linear in the module plus the inlined code.
//!
//! [`Context::inline`]: cranelift_codegen::Context::inline
//! [`Inline`]: cranelift_codegen::inline::Inline

pub mod policy;

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::Arc;

use cranelift_codegen::inline::{Inline, InlineCommand};
use cranelift_codegen::ir::{self, Function};
use cranelift_codegen::isa::TargetIsa;
use cranelift_codegen::Context;

use crate::callgraph::CallGraph;
use crate::clif_module::{self, count_insts, ClifModule, Linkage};
use crate::heat::{Heat, HotCode};
use crate::remark::Remark;

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
    /// Hot sites in the callers [`InlineOptions::keep`] leaves alone are
    /// inlined whatever the callee, not only where every member of the
    /// group calls an alike callee ([`InlineOptions::keep_alike`]): a group
    /// whose members call different callees in a loop then splits, since
    /// its members differ once inlined, and each member runs its own
    /// callee inline instead of calling it through a parameter (`-Os`;
    /// similar-function merging may merge the split members again, with
    /// one dispatch per differing region, `crate::fmerge::codegen`).
    pub hot_sites_in_members: bool,
}

impl InlineOptions {
    pub fn for_policy(policy: Policy) -> InlineOptions {
        InlineOptions {
            policy,
            keep: BTreeSet::new(),
            keep_alike: BTreeSet::new(),
            shared: BTreeSet::new(),
            small_callee_bytes: 96,
            speed: SpeedLimits::default(),
            heat: Arc::default(),
            hot_callee_insts: 20,
            hot_accessor_insts: 0,
            hot_sites_in_members: false,
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
    /// Size policy: measured bytes saved (callers' growth and shrinkage,
    /// deleted functions).
    pub bytes_saved: i64,
}

impl InlineStats {
    pub fn accumulate(&mut self, other: &InlineStats) {
        self.inlined += other.inlined;
        self.refused += other.refused;
        self.deleted += other.deleted;
        self.hot_sites += other.hot_sites;
        self.bytes_saved += other.bytes_saved;
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
        )
    }
}

/// The statistics and one remark per decision.
#[derive(Clone, Debug, Default)]
pub struct InlineReport {
    pub stats: InlineStats,
    pub remarks: Vec<Remark>,
}

/// Inlines calls in `module` by `options.policy`. The size policy measures
/// with `isa`; without one it changes nothing but dead local functions.
pub fn run(
    module: &mut ClifModule,
    isa: Option<&dyn TargetIsa>,
    options: &InlineOptions,
) -> InlineReport {
    let mut inliner = Inliner::new(module, isa, options);
    inliner.find_splitting();
    for component in inliner.graph.bottom_up() {
        let members: BTreeSet<usize> = component.iter().copied().collect();
        for &callee in &component {
            inliner.decide_calls_of(callee, &members);
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
    deleted: Vec<bool>,
    /// Members of merge groups that will split ([`Inliner::is_kept`]).
    splitting: Vec<bool>,
    report: InlineReport,
}

/// One caller's share of a decision about callee `g`.
struct CallerTrial {
    caller: usize,
    sites: Vec<ir::Inst>,
    /// `f[g]`, if Cranelift's inliner accepted it.
    inlined: Function,
    /// `Δf` (size policy; zero for the speed policy).
    growth: i64,
    /// `|f[g]|` (size policy).
    size_after: Option<usize>,
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
            deleted: vec![false; n],
            splitting: vec![false; n],
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
            self.sizes[f] = Some(self.module.code_size(&self.module.functions[f].func, isa));
        }
        self.sizes[f].flatten()
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

    /// Decides every call of `g` from outside its component `members`.
    fn decide_calls_of(&mut self, g: usize, members: &BTreeSet<usize>) {
        if self.deleted[g] {
            return;
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
            let hot = self.hot_sites(caller, g, &sites);
            self.inline_hot_sites(g, caller, hot);
        }
        if by_caller.is_empty() {
            return;
        }
        // Only a callee whose every caller is decided here may go: a caller
        // left as it is (`keep`) still calls it.
        let every_caller = by_caller.len() == self.graph.callers(symbol).len();
        let removable = self.removable(g, members);
        match self.options.policy {
            Policy::Size => self.decide_for_size(g, by_caller, removable),
            Policy::Speed => self.decide_for_speed(g, by_caller, removable && every_caller),
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

    /// The size policy (step 3 of the module doc).
    fn decide_for_size(
        &mut self,
        g: usize,
        by_caller: Vec<(usize, Vec<ir::Inst>)>,
        removable: bool,
    ) {
        if self.isa.is_none() {
            return;
        }
        let Some(callee_size) = self.size(g) else {
            return;
        };
        let hot: Vec<(usize, Vec<ir::Inst>)> = by_caller
            .iter()
            .map(|(caller, sites)| (*caller, self.hot_sites(*caller, g, sites)))
            .collect();
        if !removable && callee_size > self.options.small_callee_bytes {
            for (caller, sites) in hot {
                self.inline_hot_sites(g, caller, sites);
            }
            return;
        }
        let mut trials = Vec::new();
        let mut hot_by_caller = BTreeMap::new();
        for ((caller, sites), (_, hot)) in by_caller.into_iter().zip(hot) {
            hot_by_caller.insert(caller, hot);
            let Some(before) = self.size(caller) else {
                continue;
            };
            let Some(inlined) = self.inline_sites(caller, g, &sites) else {
                continue;
            };
            let isa = self.isa.expect("checked above");
            let Some(after) = self.module.code_size(&inlined, isa) else {
                continue;
            };
            trials.push(CallerTrial {
                caller,
                sites,
                inlined,
                growth: after as i64 - before as i64,
                size_after: Some(after),
            });
        }
        let callers = self.graph.callers(self.module.functions[g].symbol);
        let every_caller = trials.len() == callers.len();
        let total_growth: i64 = trials.iter().map(|t| t.growth).sum();
        let delete = removable && every_caller && total_growth <= callee_size as i64;
        for trial in trials {
            if delete || trial.growth <= 0 {
                let reason = if delete {
                    format!("into `{}`; the callee is deleted", self.name(trial.caller))
                } else {
                    format!(
                        "into `{}`: the body costs no more than the call",
                        self.name(trial.caller)
                    )
                };
                self.report.stats.bytes_saved -= trial.growth;
                self.accept(g, trial, reason);
            } else {
                let hot = hot_by_caller.remove(&trial.caller).unwrap_or_default();
                if hot.is_empty() {
                    self.refuse(g, &trial, callee_size, removable);
                } else {
                    self.inline_hot_sites(g, trial.caller, hot);
                }
            }
        }
        if delete {
            self.report.stats.bytes_saved += callee_size as i64;
            self.delete(g, "inlined into every caller");
        }
    }

    /// The sites among `sites` (calls of `g` in `caller`) that the size
    /// policy inlines for speed whatever they cost: `g` is small, and the
    /// site is known hot or lies inside a loop of a caller not known cold.
    fn hot_sites(&self, caller: usize, g: usize, sites: &[ir::Inst]) -> Vec<ir::Inst> {
        let heat = &self.options.heat;
        let caller_name = self.name(caller);
        // The callee limits inside loops and at profile-hot sites outside
        // them: a hot caller gets `-O2`'s (measured on bench/: a larger
        // limit outside loops, 60, cost 1.5 KB on `calc` and `hashmap`
        // and gained no run time).
        let callee = &self.module.functions[g].func;
        let callee_insts = count_insts(callee);
        let (in_loop_limit, straight_limit) = match heat.heat(caller_name) {
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
        if callee_insts > in_loop_limit.max(straight_limit) {
            return Vec::new();
        }
        let func = &self.module.functions[caller].func;
        let in_loop = crate::heat::in_loop_blocks(func);
        sites
            .iter()
            .copied()
            .filter(
                |&site| match crate::heat::inst_in_loop(func, &in_loop, site) {
                    true => callee_insts <= in_loop_limit,
                    false => heat.is_hot_site(caller_name, site) && callee_insts <= straight_limit,
                },
            )
            .collect()
    }

    /// Inlines `g` at the hot `sites` of `caller` (size policy), measuring
    /// the growth for the remark.
    fn inline_hot_sites(&mut self, g: usize, caller: usize, sites: Vec<ir::Inst>) {
        if sites.is_empty() {
            return;
        }
        let before = self.size(caller);
        let Some(inlined) = self.inline_sites(caller, g, &sites) else {
            return;
        };
        let after = self
            .isa
            .and_then(|isa| self.module.code_size(&inlined, isa));
        let growth = match (before, after) {
            (Some(b), Some(a)) => a as i64 - b as i64,
            _ => 0,
        };
        self.report.stats.bytes_saved -= growth;
        self.report.stats.hot_sites += sites.len() as u64;
        let reason = format!(
            "into `{}`: hot ({} site(s) in a loop or known hot by the profile)",
            self.name(caller),
            sites.len()
        );
        let trial = CallerTrial {
            caller,
            sites,
            inlined,
            growth,
            size_after: after,
        };
        self.accept(g, trial, reason);
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
        let callee_insts = count_insts(&self.module.functions[g].func);
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
                inlined,
                growth: 0,
                size_after: None,
            };
            self.accept(g, trial, reason);
        }
        if removable && every_site_inlined {
            self.delete(g, "inlined into every caller");
        }
    }

    /// `f` with the calls of `g` at `sites` inlined, or `None` when
    /// Cranelift's inliner refuses (the original is kept).
    fn inline_sites(&self, f: usize, g: usize, sites: &[ir::Inst]) -> Option<Function> {
        let callee = &self.module.functions[g].func;
        let caller = &self.module.functions[f].func;
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
                repair_inlined_symbol_names(&mut inlined, callee, first_inlined_gv);
                clif_module::prune_external_names(&mut inlined);
                Some(inlined)
            }
            _ => None,
        }
    }

    fn accept(&mut self, g: usize, trial: CallerTrial, reason: String) {
        let sites = trial.sites.len() as u64;
        self.report.stats.inlined += sites;
        let mut remark = Remark::passed(PASS, "inlined", self.name(g), reason)
            .in_module(&self.module.name)
            .count("inlined", sites);
        if trial.size_after.is_some() {
            remark = remark.bytes(-trial.growth);
        }
        self.report.remarks.push(remark);
        self.module.functions[trial.caller].func = trial.inlined;
        self.sizes[trial.caller] = trial.size_after.map(Some);
        self.graph.refresh(self.module, trial.caller);
    }

    fn refuse(&mut self, g: usize, trial: &CallerTrial, callee_size: usize, removable: bool) {
        self.report.stats.refused += 1;
        let why = if removable {
            format!(
                "into `{}`: grows it by {} bytes, and the callers' growth exceeds the callee's {} bytes",
                self.name(trial.caller),
                trial.growth,
                callee_size
            )
        } else {
            format!(
                "into `{}`: grows it by {} bytes, and the callee stays",
                self.name(trial.caller),
                trial.growth
            )
        };
        let remark = Remark::missed(PASS, "grew", self.name(g), why)
            .in_module(&self.module.name)
            .bytes(-trial.growth)
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
        self.module.functions[g].func = Function::with_name_signature(
            self.module.functions[g].func.name.clone(),
            self.module.functions[g].func.signature.clone(),
        );
        self.graph.refresh(self.module, g);
    }

    /// Step 5: local functions nothing references, until none is left.
    fn delete_unreferenced(&mut self) {
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
            ..
        } = self;
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

/// Gives the global values Cranelift's inliner copied from `callee` the
/// caller's numbering of external names.
///
/// Cranelift 0.135's inliner clones `symbol` global values verbatim
/// (`create_global_values` in `cranelift_codegen::inline`): their
/// `ExternalName::User` reference keeps the callee's numbering, so in the
/// caller it names whatever the caller's table has at that number — a
/// miscompile that reads the wrong symbol. Each inlined site appends a copy
/// of all of the callee's global values, so global value `first + k·n + i`
/// (for `n` of the callee's) is the callee's `i`.
fn repair_inlined_symbol_names(func: &mut Function, callee: &Function, first: usize) {
    use cranelift_codegen::entity::EntityRef as _;
    let per_copy = callee.global_values.len();
    if per_copy == 0 {
        return;
    }
    let copies: Vec<ir::GlobalValue> = func.global_values.keys().skip(first).collect();
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
