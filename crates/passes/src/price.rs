//! Costed decisions where passes compete for the same functions.
//!
//! Three `-Oz` passes want the same functions: the inliner would copy a
//! small generic instance into its one caller and delete it, the constant
//! merger would make it a thunk of a body it shares with the instance's
//! siblings, and `fmerge` would merge it with a similar function. Each
//! decides with its own model, in pipeline order, and the first to run
//! wins: the inliner leaves every merge member alone because merging will
//! merge it, and it deletes a single-caller function that `fmerge` could
//! have merged for less. This module prices the alternatives against each
//! other, in measured aarch64 bytes, before the inliner runs, and tells it
//! which functions to leave to the mergers.
//!
//! Sources (full references in docs/DESIGN.md):
//! - [LLVM-INLINE] prices a call by the callee's cost less the call's and
//!   what deleting a last-use callee saves; LLVM's `MergeFunctions` and
//!   [GFM] decide merging separately, by [GFM]'s Equation 1, `Benefit =
//!   Size_func · (N − 1) > Cost = Size_thunk · N`, which assumes each
//!   member would otherwise stay whole. Here the alternative to merging a
//!   member is what the inliner would do with it.
//! - [ROCHA-PHD] (HyFM, F3M; `shared/papers/merging-cost-model-and-ranking.txt`,
//!   `shared/papers/f3m-minhash-lsh-merging.txt`): merging `{f1, f2}` into `f12` pays when
//!   `Δ = c(f1) + c(f2) − (c(f12) + ε) > 0`, with `ε` the thunks and the
//!   extra arguments at redirected calls; the same rule, measured, is
//!   `fmerge`'s. Here `c(fk)` is replaced by what `fk` costs if the inliner
//!   has it instead.
//!
//! # Notation
//!
//! `|f|` is `f`'s measured size (Cranelift, aarch64, through the module's
//! code cache). A growth `Δ` is first the inliner's size model's estimate
//! with its error range (`crate::size_model::inline_delta_at`, [LLVM-INLINE]'s
//! bookkeeping in fitted bytes); it is measured (the callers compiled with
//! the body inlined) only when the decision differs across that range, as
//! the inliner decides (`size_model::Decide::EstimateThenMeasure`). For a member `m` of a merge group `G` (the plan merging
//! will follow, `crate::merge::planned`):
//! - `excl(m)`: the callees only `m` calls (local, not address-taken): the
//!   inliner would copy them into `m`; merged, `m`'s thunk passes their
//!   addresses to the body and they stay;
//! - `m'`: `m` with `excl(m)` inlined; `Δ(m)`: the growth of `m`'s callers
//!   with `m'` inlined at every site;
//! - inlined cost `I(m) = min(Δ(m), |m'|)` (the inliner deletes `m` when
//!   its callers grow by no more than `|m'|`, else `m'` stays);
//! - merged cost at the margin `M(m) = t(m) + Σ_{c ∈ excl(m)} |c|`, where
//!   `t(m)` is the thunk (`Size_thunk` of the plan), or, when every caller
//!   is in the module, the cheaper of the thunk and the constants
//!   materialised at each of its `k` call sites (`crate::merge::thunks`);
//! - the body `b(G)`: the largest local member's size, divided by the
//!   number of modules holding members of `G` (the linker folds their
//!   bodies).
//!
//! # Decisions
//!
//! 0. *Folded groups.* A group whose members are all in the module and
//!    fall in one class of the linker's identical-code folding
//!    (`crate::merge::folded_groups`: two instances of a generic over
//!    types of one representation) is not merged — `ld.lld --icf=all`
//!    keeps one copy for nothing, where merging adds thunks and turns
//!    the calls of callees that fold in turn into parameters — so it is
//!    not priced: its members are the inliner's, which does not delete a
//!    function for its body's cost when an identical one shares it.
//!    (`bench/tokenizer`: `lex<str>`/`lex<[u8]>` merged with the
//!    inliner kept out of them came out 376 bytes larger than they came
//!    in, and the size guard put back the 16 functions around them,
//!    hot-site inlines included.)
//! 1. *Merge member or inline.* A member is *tried* when the inliner could
//!    delete it: local, not address-taken, with 1 to
//!    [`PriceOptions::max_sites`] call sites, none in a merge member (the
//!    inliner leaves those callers alone) nor in itself. A tried member
//!    with `I(m) < M(m)` is released to the inliner. If the members left
//!    in the module cannot merge (a group local to the module needs two),
//!    or `b(G) + Σ M(m) > Σ I(m)` over them (an untried member counting
//!    `|m|`: it would stay whole), the whole group is released. The
//!    inliner keeps ([`crate::inline::InlineOptions::keep`]) the members
//!    not released; a released member that the inliner does not inline
//!    after all, or inlines into, no longer matches its group and is left
//!    whole.
//! 2. *A family of similar functions: merge, inline together, or leave.*
//!    The targets are the functions the inliner would delete — local, not
//!    address-taken, called from one site outside their own component,
//!    not merge members — except those whose caller is an instance of a
//!    generic with a sibling instance that calls no instance of the
//!    target's generic: inlined, the target can make its caller alike to
//!    that sibling, and the pair of callers is what merges (a nest of
//!    instances, bench/pipeline's `delay<5>` in `compose<…>`; decision 2
//!    does not price it, so the inliner keeps it). A *family* is a set of targets linked by
//!    `fmerge`'s search (one ranks another at least
//!    [`PriceOptions::min_similarity`] alike); `fmerge` itself then runs
//!    on a copy of the module with every function outside the families
//!    excluded and the members prepared as GVN leaves them
//!    ([`crate::fmerge::families`]), and its merged functions split each
//!    family into *groups* (the originals merged into one function: pairs,
//!    and merged functions merging again up to `max_members`). For a set
//!    `S` of members, `F(S)` is what `fmerge` measured its merges to save,
//!    and `I(S) = Σ_{m∈S} |m| − Σ_f (|f[S]| − |f|)` what inlining every
//!    member of `S` into its caller and deleting it saves, where `f[S]` is
//!    caller `f` with *all* the members of `S` it calls inlined together
//!    (they share its frame, saved registers and constants; one member
//!    inlined at a time cannot see that while the others are still
//!    called), each size measured after GVN through the code cache. Each
//!    group `g` takes the cheapest of: all its members inlined together
//!    (`I(g)`), left alone (0), or, for each `j`, the members of its first
//!    `j` merges `P_j` merged and the rest inlined together (`F(P_j) +
//!    max(I(g ∖ P_j), 0)`; `fmerge` makes its most alike merges first, so
//!    a far member joining last can be worth more inlined); merging must
//!    win by 16 bytes, the margin for what the later passes change
//!    (`SIMILAR_MARGIN_BYTES`). When a family has
//!    several groups, all its members inlined together is the fourth
//!    alternative, taken when `I(family)` exceeds the sum of the groups'
//!    chosen savings. Members left to `fmerge` are ones the inliner must
//!    not delete ([`crate::inline::InlineOptions::shared`]); the others
//!    are the inliner's, and `fmerge` finds no partner left for them: both
//!    passes act on the one decision.
//!
//! 3. *A nest of instances: merge each level, or inline and then merge.*
//!    A merge group `G` local to the module (`-Oz`; the module's own
//!    plan or the build's) whose members each *fold in* callees of their
//!    own: the closure `C(m)` of member `m` is, transitively, every
//!    local, not address-taken, non-recursive callee that only `m` and
//!    `C(m)` call, and every small one ([`SMALL_CALLEE_BYTES`]: the
//!    inliner copies it wherever it is called) that no other member of
//!    `G` calls. `G` is a nest when every `C(m)` is non-empty, the
//!    closures are disjoint and equally large, and every merge group
//!    `H` with a member in them (an *inner* group) has all its members
//!    there; a group inside another nest's closures is priced with it.
//!    Two alternatives, measured whole:
//!    - *each level merged*, `L`: the constant merger run on a copy of
//!      the module with `G` and the inner groups for its plan — their
//!      bodies as it builds them, with the constants as parameters and
//!      the inner members' addresses passed (one per group: the linker
//!      folds the copies) — plus the thunks (or constants at call sites)
//!      as decision 1 prices them, plus the closures' other functions
//!      whole (they stay: the inliner does not touch a kept member's
//!      calls);
//!    - *inlined, then merged*, `N = Σ_m |m[C(m)]| − F`: each member with
//!      its closure inlined (bottom-up) and GVN run, and `F` what
//!      `fmerge` saves merging those (`fmerge::families` on a copy of the
//!      module holding them; 0 when it merges none: left alone).
//!
//!    `N + release_margin(L) < L` releases the nest: no member of `G` or
//!    of an inner group is kept, the members of `G` are ones the inliner
//!    must not delete (`shared`: `fmerge` merges them), and decision 2
//!    takes no closure function as a target (it would keep them out of
//!    the members). Otherwise decisions 1 and 2 price the groups as
//!    before. Decision 3 is taken only on measured sizes: on the size
//!    model's estimates (`-Os`) the two sides are too close to call
//!    (`examples/generic_types.pare` came out 24 bytes larger).
//!
//! Decision 2 follows [LLVM-INLINE] for the inlined side (a callee's cost
//! less the call's, the last-use callee deleted) and [ROCHA-PHD]'s `Δ`
//! for the merged side, measured as `fmerge` measures it; neither source
//! prices one against the other. It departs from both: LLVM's
//! `MergeFunctions` and HyFM/F3M rank and merge pairs, and LLVM's inliner
//! prices one call site at a time; here a family is priced whole on both
//! sides — all its merges (the thesis' feedback loop, merged functions
//! merging again) against all its members inlined into their callers at
//! once — because the two interact: a caller that loses every call loses
//! its frame, and a merged function shared by three saves a second body.
//! Targets `fmerge` merges with no other are left out (their price is the
//! inliner's own), and every merge is measured (`-Oz` otherwise takes a
//! try on its estimate when the estimate is clear of the threshold).
//!
//! Decision 3 answers a conflict [GFM] names and leaves open (§7:
//! inlining changes function shapes and merging disrupts inlining, so
//! merging runs late, on stable shapes; [ROCHA-PHD] lists the interaction
//! with inlining as future work): merged early, a group's members keep
//! their callees out of them, and nothing after can fold the callees in.
//! Neither source prices the two orders against each other; here both are
//! run — the constant merger's rewrite ([GFM]'s merge, its body measured
//! instead of [GFM]'s `Size_func` estimate) and [LLVM-INLINE]'s inlining
//! followed by [ROCHA-PHD]'s merge — and measured. Where it departs: the
//! inlined side assumes the inliner folds every closure function in (it
//! decides each call on its own price); both sides are Cranelift's bytes
//! before the machine passes, which shrink `fmerge`'s merged functions
//! more than a merged body (`filetests/sizes/many.pare`: `L` = 264
//! priced, 260 built; `N` = 312 priced, 248 built, so the nest stays
//! merged, 12 bytes larger than released).
//!
//! Where this departs from the sources: the prices are taken on the module
//! as the inliner receives it (before its bottom-up walk inlines anything
//! else; decision 1 before GVN, decision 2 with GVN run on the functions
//! it compares), so they estimate what the later passes see; the size
//! guard (`crate::guard`) catches what they get wrong in the direction of
//! growth.
//!
//! # Invariants
//!
//! - Decisions only: the module is not changed; the result is sets of
//!   names for the inliner.
//! - Deterministic: groups in plan order, members and pairs in name
//!   order; a module's prices read only the module and the plan, so a
//!   separately compiled module decides as the whole build does.
//!
//! # Cost
//!
//! Per tried member: a walk over each caller and over `m` (the estimate);
//! where the estimate cannot decide, or `m` has exclusive callees, one
//! compilation of `m'` and one per caller with `m'` inlined (the callers'
//! own sizes the inliner measures anyway, through the cache). Families:
//! `fmerge`'s search over the targets, then its run over the members of
//! families only (each try as `fmerge` tries it), GVN on each member and
//! on each caller with and without its members inlined, and one
//! compilation of each per group (and per family of several groups).
//! Members with more call sites, or called from other members, cost
//! nothing.
//! Nests: per nest, one run of the constant merger on a copy of the module
//! (hashing every candidate; the folding classes it and the levels' price
//! read are computed on the group members, the merged bodies and their
//! callees only, `fmerge::icf::classes_among`), one compilation of each
//! member with its closure inlined (after GVN), and `fmerge`'s run over
//! those members (its index and folding classes over the module copy);
//! groups whose members fold in nothing cost a walk of their callees.
//! Under [`Decide::Estimate`] (`-Os`) every size is the size model's
//! estimate (`crate::size_model`) and nothing is compiled (no nest is
//! priced).

use std::collections::{BTreeMap, BTreeSet};

use cranelift_codegen::ir::{self, Function};
use cranelift_codegen::isa::TargetIsa;

use crate::callgraph::{CallGraph, References};
use crate::clif_module::{ClifModule, Linkage};
use crate::fmerge::{self, FmergeOptions};
use crate::merge::{Group, GroupKey, MergeOptions, MergePlan};
use crate::remark::Remark;
use crate::size_model::{self, CalleeBytes, Decide, Estimate};

/// The name of the decisions in remarks.
const PASS: &str = "price";

/// A callee this small costs no more inlined than called where it is
/// called outside the merge members (the size inliner's small callees:
/// `crate::inline::InlineOptions::small_callee_bytes` is 96, and what it
/// inlines at no growth are shorter still).
const SMALL_CALLEE_BYTES: i64 = 64;

/// How much more than inlining merging two similar functions must save to
/// be preferred: the prices are taken before GVN and the inliner's other
/// work change both functions (on `examples/trap_checks_in_loops.pare` a
/// pair priced 60 against 56 saved 20 once GVN had removed its checks).
const SIMILAR_MARGIN_BYTES: i64 = 16;

/// How much cheaper releasing members must be priced than merging them:
/// the prices are taken before the inliner's bottom-up walk and GVN, and
/// close calls go either way (`bench/primes`: a group priced 376 released
/// against 384 merged came out 44 bytes larger released). 1/16 of the
/// merged price, and at least 16 bytes.
fn release_margin(merged: i64) -> i64 {
    (merged / 16).max(16)
}

/// Alike calls worth inlining into a group's members.
struct AlikeInlining {
    /// The merged body with the callees inlined.
    body: i64,
    pairs: BTreeSet<(String, String)>,
    remark: Remark,
}

/// The choice for one group of a family of similar functions (decision
/// 2).
struct GroupOfFamily {
    /// The members `fmerge` merges (the inliner does not delete them); the
    /// others are the inliner's. Empty: all inlined, or left alone.
    merged: Vec<usize>,
    /// What merging `merged` saves.
    merge_saves: i64,
    /// What inlining the other members together saves.
    rest_inlined: i64,
    /// What inlining every member together saves.
    all_inlined: i64,
    /// What the choice saves.
    saves: i64,
}

/// Limits of the pricing.
#[derive(Clone, Debug)]
pub struct PriceOptions {
    /// Merge members with more call sites are not tried for inlining: the
    /// size inliner would not delete them (each site copies the body).
    pub max_sites: usize,
    /// `fmerge`'s options when it runs later in the pipeline: single-caller
    /// functions are then priced against merging them (decision 2).
    pub fmerge: Option<FmergeOptions>,
    /// The least estimated similarity of two functions linked into one
    /// family (decision 2).
    pub min_similarity: f64,
    /// How sizes are known: compiled ([`Decide::Measure`],
    /// [`Decide::EstimateThenMeasure`]: a price compares a handful of
    /// sizes, each a compilation through the code cache), or the size
    /// model's estimates alone ([`Decide::Estimate`], `-Os`: nothing is
    /// compiled, and `fmerge`'s pairs are priced by its estimate too).
    pub decide: Decide,
    /// The constant merger's options (a nest's levels are priced by
    /// running it, decision 3).
    pub merge: MergeOptions,
}

impl Default for PriceOptions {
    fn default() -> Self {
        PriceOptions {
            max_sites: 2,
            fmerge: None,
            min_similarity: 0.5,
            decide: Decide::default(),
            merge: MergeOptions::default(),
        }
    }
}

/// What the inliner is told.
#[derive(Clone, Debug, Default)]
pub struct Prices {
    /// The merge members it leaves alone for merging.
    pub keep: BTreeSet<String>,
    /// Functions it must not delete for what their body seems to cost:
    /// `fmerge` merges them for less.
    pub merge_similar: BTreeSet<String>,
    /// Alike calls of kept members it inlines at every site
    /// (`crate::inline::InlineOptions::inline_alike`).
    pub inline_alike: BTreeSet<(String, String)>,
    /// One remark per priced decision.
    pub remarks: Vec<Remark>,
}

/// Prices the merge members of `module` in `plan` (when merging follows)
/// and its single-caller functions (when `fmerge` does; module doc),
/// measuring with `isa`.
pub fn price(
    module: &ClifModule,
    isa: &dyn TargetIsa,
    plan: Option<&MergePlan>,
    options: &PriceOptions,
) -> Prices {
    let folded = plan
        .map(|p| crate::merge::folded_groups(module, p))
        .unwrap_or_default();
    let pricer = Pricer {
        module,
        isa,
        options,
        graph: CallGraph::new(module),
        members: plan
            .map(|p| local_members(module, p, &folded))
            .unwrap_or_default(),
    };
    let mut prices = Prices::default();
    // Decision 3 weighs two whole alternatives a few dozen bytes apart:
    // on the size model's estimates alone (`-Os`) it chose wrong
    // (examples/generic_types.pare, 24 bytes larger), so it is measured or
    // not taken.
    let nests = match (plan, options.decide) {
        (Some(plan), Decide::Measure | Decide::EstimateThenMeasure) => {
            pricer.price_nests(plan, &mut prices)
        }
        _ => NestDecisions::default(),
    };
    for (key, group) in plan.iter().flat_map(|p| &p.groups) {
        let decided = group
            .members
            .iter()
            .any(|(m, name)| *m == module.name && nests.members.contains(name));
        match (folded.contains(key), decided) {
            (true, _) => pricer.release_folded(group, &mut prices),
            (false, true) => {}
            (false, false) => pricer.price_group(group, &mut prices),
        }
    }
    if let Some(fmerge) = &options.fmerge {
        pricer.price_families(fmerge, &nests.folded, &mut prices);
    }
    prices
}

/// The names of `plan`'s members defined in `module`, but those of the
/// groups the linker folds (`folded`: merging leaves them alone).
fn local_members(
    module: &ClifModule,
    plan: &MergePlan,
    folded: &BTreeSet<GroupKey>,
) -> BTreeSet<String> {
    plan.groups
        .iter()
        .filter(|(key, _)| !folded.contains(*key))
        .flat_map(|(_, g)| &g.members)
        .filter(|(m, _)| *m == module.name)
        .map(|(_, name)| name.clone())
        .collect()
}

/// The module being priced and what is known of it.
struct Pricer<'m> {
    module: &'m ClifModule,
    isa: &'m dyn TargetIsa,
    options: &'m PriceOptions,
    graph: CallGraph,
    /// Every merge member of the module, by name.
    members: BTreeSet<String>,
}

/// One member's prices.
struct MemberPrice {
    index: usize,
    name: String,
    /// `|m|`.
    size: i64,
    /// `M(m)`: its thunk (or the constants at its call sites) and the
    /// callees it alone keeps alive.
    merged: i64,
    /// Its call sites, when the inliner could delete it (module doc).
    tried: Option<Vec<(usize, ir::Inst)>>,
    /// The callees only it calls.
    exclusive: Vec<usize>,
}

/// What a group costs each way, for its remarks.
struct GroupPrice {
    /// Merged: the body's share and the members' `M`.
    merged: i64,
    /// The cheapest alternative with some member released (the tried
    /// members inlined; the others merged, or whole), if there is one.
    released: Option<i64>,
    /// The members the inliner gets.
    release: BTreeSet<usize>,
}

impl Pricer<'_> {
    fn name(&self, f: usize) -> &str {
        &self.module.symbols[self.module.functions[f].symbol as usize].name
    }

    /// `|func|`: measured, or the size model's estimate under
    /// [`Decide::Estimate`].
    fn size(&self, func: &Function) -> Option<i64> {
        match self.options.decide {
            Decide::Estimate => Some(size_model::function_bytes(func)),
            Decide::Measure | Decide::EstimateThenMeasure => {
                self.module.code_size(func, self.isa).map(|n| n as i64)
            }
        }
    }

    /// Decision 0: a group the linker folds (every member in the module,
    /// one class of identical-code folding, `crate::merge::folded_groups`)
    /// is not merged, so its members are the inliner's, priced as any
    /// function it would share with an identical one.
    fn release_folded(&self, group: &Group, prices: &mut Prices) {
        for (_, name) in &group.members {
            let remark = Remark::passed(
                PASS,
                "fold-member",
                name,
                format!(
                    "the {} members of its group are identical code in this module, which the linker folds into one copy: not merged (merging would add thunks), left to the inliner",
                    group.members.len()
                ),
            );
            prices.remarks.push(remark.in_module(&self.module.name));
        }
    }

    /// Decision 1 for one group.
    fn price_group(&self, group: &Group, prices: &mut Prices) {
        let local: Vec<usize> = group
            .members
            .iter()
            .filter(|(m, _)| *m == self.module.name)
            .filter_map(|(_, name)| {
                let symbol = self.module.symbol_index(name)?;
                self.graph.function_of(symbol)
            })
            .collect();
        let untried = local.iter().all(|&m| self.tried_sites(m).is_none());
        if untried
            && crate::merge::alike::alike_calls(self.module, std::iter::once(group)).is_empty()
        {
            // Nothing to price: the inliner would delete no member and
            // inline no alike call into them. Merged as the plan says,
            // compiling nothing.
            for &m in &local {
                prices.keep.insert(self.name(m).to_string());
                let remark = Remark::missed(
                    PASS,
                    "merge-member",
                    self.name(m),
                    "the inliner would delete none of its group's members: kept for merging"
                        .to_string(),
                );
                prices.remarks.push(remark.in_module(&self.module.name));
            }
            return;
        }
        let members: Option<Vec<MemberPrice>> =
            local.iter().map(|&m| self.price_member(m, group)).collect();
        let Some(members) = members else {
            // Not measurable: merged as the plan says.
            prices
                .keep
                .extend(local.iter().map(|&m| self.name(m).to_string()));
            return;
        };
        let modules: BTreeSet<&str> = group.members.iter().map(|(m, _)| m.as_str()).collect();
        let alike = self.alike_inlining(group, &members);
        let body = match &alike {
            Some(alike) => alike.body,
            None => members.iter().map(|p| p.size).max().unwrap_or(0),
        } / modules.len() as i64;
        let Some(price) = self.choose(&members, body, modules.len() == 1) else {
            prices.keep.extend(members.iter().map(|p| p.name.clone()));
            return;
        };
        for p in &members {
            let release = price.release.contains(&p.index);
            if !release {
                prices.keep.insert(p.name.clone());
            }
            prices.remarks.push(self.member_remark(p, release, &price));
        }
        if let Some(alike) = alike {
            if price.release.len() < members.len() {
                prices
                    .remarks
                    .push(alike.remark.in_module(&self.module.name));
                prices.inline_alike.extend(alike.pairs);
            }
        }
    }

    /// The cheapest of merging every member, releasing the tried ones to
    /// the inliner, and releasing the whole group (`None` when a trial
    /// does not compile). The tried members' inlined cost is the size
    /// model's where its whole range leads to the same choice (the choice
    /// is monotone in that cost), measured otherwise.
    fn choose(&self, members: &[MemberPrice], body: i64, local_group: bool) -> Option<GroupPrice> {
        let tried: Vec<&MemberPrice> = members.iter().filter(|p| p.tried.is_some()).collect();
        if tried.is_empty() {
            return Some(GroupPrice {
                merged: body + members.iter().map(|p| p.merged).sum::<i64>(),
                released: None,
                release: BTreeSet::new(),
            });
        }
        let given = |inlined| self.choose_given(members, body, local_group, inlined);
        if let Some(estimate) = self.estimated_inlined_cost(&tried) {
            if given(estimate.low).release == given(estimate.high).release {
                return Some(given(estimate.bytes));
            }
        }
        Some(given(self.inlined_cost(&tried)?))
    }

    /// [`Pricer::choose`] with the tried members' inlined cost `inlined`.
    fn choose_given(
        &self,
        members: &[MemberPrice],
        body: i64,
        local_group: bool,
        inlined: i64,
    ) -> GroupPrice {
        let tried: Vec<&MemberPrice> = members.iter().filter(|p| p.tried.is_some()).collect();
        let untried: Vec<&MemberPrice> = members.iter().filter(|p| p.tried.is_none()).collect();
        let merged_all = body + members.iter().map(|p| p.merged).sum::<i64>();
        let whole: i64 = untried.iter().map(|p| p.size).sum();
        let merged_untried = body + untried.iter().map(|p| p.merged).sum::<i64>();
        let untried_can_merge = !untried.is_empty() && (!local_group || untried.len() >= 2);
        let mut releases: Vec<(i64, BTreeSet<usize>)> = Vec::new();
        if untried_can_merge {
            let tried = tried.iter().map(|p| p.index).collect();
            releases.push((inlined + merged_untried, tried));
        }
        releases.push((inlined + whole, members.iter().map(|p| p.index).collect()));
        let (released, release) = releases
            .into_iter()
            .min_by_key(|(cost, _)| *cost)
            .expect("releasing every member is an alternative");
        let release = match released + release_margin(merged_all) < merged_all {
            true => release,
            false => BTreeSet::new(),
        };
        GroupPrice {
            merged: merged_all,
            released: Some(released),
            release,
        }
    }

    /// The remark of one member's decision.
    fn member_remark(&self, p: &MemberPrice, released: bool, group: &GroupPrice) -> Remark {
        let merged = group.merged;
        let alternative = match (group.released, &p.tried) {
            (Some(cost), Some(_)) => {
                format!("with the members the inliner could delete left to it, {cost}")
            }
            (Some(cost), None) => format!(
                "with the other members left to the inliner, {cost} (this one it would not delete)"
            ),
            (None, _) => "the inliner would delete none of its members".to_string(),
        };
        let remark = match released {
            true => Remark::passed(
                PASS,
                "inline-member",
                &p.name,
                format!("its group costs {merged} bytes merged (body share, thunks or constants at call sites, the callees they keep alive); {alternative}: left to the inliner"),
            )
            .bytes(merged - group.released.unwrap_or(merged)),
            false => Remark::missed(
                PASS,
                "merge-member",
                &p.name,
                format!("its group costs {merged} bytes merged; {alternative}: kept for merging"),
            )
            .bytes(merged - group.released.unwrap_or(merged)),
        };
        remark.in_module(&self.module.name)
    }

    /// `M(m)` and whether `m` is tried (module doc); `None` if `m` does not
    /// compile.
    fn price_member(&self, m: usize, group: &Group) -> Option<MemberPrice> {
        let size = self.size(&self.module.functions[m].func)?;
        let exclusive = self.exclusive_callees(m);
        let exclusive_bytes: i64 = exclusive
            .iter()
            .map(|&c| self.size(&self.module.functions[c].func))
            .sum::<Option<i64>>()?;
        Some(MemberPrice {
            index: m,
            name: self.name(m).to_string(),
            size,
            merged: self.thunk_price(m, group) + exclusive_bytes,
            tried: self.tried_sites(m),
            exclusive,
        })
    }

    /// Whether every caller of `symbol` is in the module: local and not
    /// address-taken.
    fn known_callers(&self, symbol: u32) -> bool {
        self.module.symbols[symbol as usize].linkage == Linkage::Local
            && !self.graph.is_address_taken(symbol)
    }

    /// Member `m`'s call sites, if it is tried: the inliner could delete it
    /// (module doc).
    fn tried_sites(&self, m: usize) -> Option<Vec<(usize, ir::Inst)>> {
        let symbol = self.module.functions[m].symbol;
        let sites = self.graph.call_sites(symbol);
        let tried = self.known_callers(symbol)
            && (1..=self.options.max_sites).contains(&sites.len())
            && sites
                .iter()
                .all(|&(f, _)| f != m && !self.members.contains(self.name(f)));
        tried.then_some(sites)
    }

    /// The callees only `m` calls, local and not address-taken (not merge
    /// members: those stay whole), in index order.
    fn exclusive_callees(&self, m: usize) -> Vec<usize> {
        self.graph
            .callees(m)
            .into_iter()
            .filter(|&c| {
                let symbol = self.module.functions[c].symbol;
                c != m
                    && self.module.symbols[symbol as usize].linkage == Linkage::Local
                    && !self.graph.is_address_taken(symbol)
                    && self.graph.callers(symbol) == [m]
                    && !self.members.contains(self.name(c))
            })
            .collect()
    }

    /// `m` with the callees `callees` inlined.
    fn with_inlined(&self, m: usize, callees: &[usize]) -> Option<Function> {
        let mut body = self.module.functions[m].func.clone();
        for &c in callees {
            let callee = &self.module.functions[c];
            let at = sites_of(&body, callee.symbol);
            body = crate::inline::inline_at(&body, &callee.func, &at)?;
        }
        Some(body)
    }

    /// The tried members inlined together (their exclusive callees in
    /// them, then them into their callers): the callers' growth, or each
    /// member kept whole where that is less.
    fn inlined_cost(&self, tried: &[&MemberPrice]) -> Option<i64> {
        let mut bodies = Vec::with_capacity(tried.len());
        let mut whole = 0;
        for p in tried {
            let body = self.with_inlined(p.index, &p.exclusive)?;
            whole += self.size(&body)?;
            bodies.push(body);
        }
        let callers: BTreeSet<usize> = tried
            .iter()
            .flat_map(|p| p.tried.iter().flatten().map(|&(f, _)| f))
            .collect();
        let mut growth = 0;
        for f in callers {
            let before = &self.module.functions[f].func;
            let mut after = before.clone();
            for (p, body) in tried.iter().zip(&bodies) {
                let symbol = self.module.functions[p.index].symbol;
                let at = sites_of(&after, symbol);
                if !at.is_empty() {
                    after = crate::inline::inline_at(&after, body, &at)?;
                }
            }
            growth += self.size(&after)? - self.size(before)?;
        }
        Some(growth.min(whole))
    }

    /// The size model's inlined cost of the tried members (as
    /// [`Pricer::inlined_cost`] measures it), when none has exclusive
    /// callees to inline first: their callers' estimated growth, or each
    /// member kept whole where that is less.
    fn estimated_inlined_cost(&self, tried: &[&MemberPrice]) -> Option<Estimate> {
        if tried.iter().any(|p| !p.exclusive.is_empty()) {
            return None;
        }
        let mut growth = Estimate::exact(0);
        let mut whole = 0;
        for p in tried {
            whole += p.size;
            let func = &self.module.functions[p.index].func;
            let mut by_caller: BTreeMap<usize, Vec<ir::Inst>> = BTreeMap::new();
            for &(caller, site) in p.tried.iter().flatten() {
                by_caller.entry(caller).or_default().push(site);
            }
            for (caller, sites) in by_caller {
                let caller = &self.module.functions[caller].func;
                let bytes = CalleeBytes::Measured(p.size);
                growth = growth + size_model::inline_delta_at(caller, func, bytes, &sites);
            }
        }
        Some(Estimate {
            bytes: growth.bytes.min(whole),
            low: growth.low.min(whole),
            high: growth.high.min(whole),
        })
    }

    /// Alike calls the inliner should expand in every member (module doc):
    /// when each member calls, at the same instructions, small callees of
    /// one shape that nothing but the members and non-members call,
    /// inlining them leaves the members alike, puts the callees' code in
    /// the one merged body, and lets the callees go.
    fn alike_inlining(&self, group: &Group, members: &[MemberPrice]) -> Option<AlikeInlining> {
        let pairs = crate::merge::alike::alike_calls(self.module, std::iter::once(group));
        if pairs.is_empty() {
            return None;
        }
        let mut freed = 0;
        let mut first_callees = Vec::new();
        for p in members {
            let callees: Vec<usize> = pairs
                .iter()
                .filter(|(caller, _)| *caller == p.name)
                .filter_map(|(_, callee)| {
                    let symbol = self.module.symbol_index(callee)?;
                    self.graph.function_of(symbol)
                })
                .collect();
            for &c in &callees {
                if !self.goes_when_inlined(c) {
                    return None;
                }
                freed += self.size(&self.module.functions[c].func)?;
            }
            if first_callees.is_empty() {
                first_callees = callees;
            }
        }
        let first = members.first()?;
        let body = self.size(&self.with_inlined(first.index, &first_callees)?)?;
        let gain = freed - (body - first.size);
        (gain > 0).then(|| AlikeInlining {
            body,
            remark: Remark::passed(
                PASS,
                "inline-alike",
                &first.name,
                format!(
                    "each of the {} members inlines its own alike callee: the merged body grows by {} bytes, the callees ({freed} bytes) go",
                    members.len(),
                    body - first.size
                ),
            )
            .bytes(gain),
            pairs,
        })
    }

    /// Whether callee `c` goes once the merge members calling it inline
    /// it: local, not address-taken, small, and its other callers are not
    /// members (the inliner copies a small callee where it costs no more
    /// than the call, then deletes it).
    fn goes_when_inlined(&self, c: usize) -> bool {
        let symbol = self.module.functions[c].symbol;
        self.module.symbols[symbol as usize].linkage == Linkage::Local
            && !self.graph.is_address_taken(symbol)
            && self
                .size(&self.module.functions[c].func)
                .is_some_and(|n| n <= SMALL_CALLEE_BYTES)
    }

    /// Decision 2: families of similar single-caller functions, priced
    /// whole: merged by `fmerge`, inlined into their callers together, or
    /// left alone (module doc).
    fn price_families(
        &self,
        fmerge: &FmergeOptions,
        folded: &BTreeSet<usize>,
        prices: &mut Prices,
    ) {
        let mut targets: Vec<(&str, usize)> = (0..self.module.functions.len())
            .filter(|&f| {
                self.single_caller(f) && !folded.contains(&f) && !self.caller_has_unlike_sibling(f)
            })
            .map(|f| (self.name(f), f))
            .collect();
        targets.sort();
        let targets: Vec<usize> = targets.into_iter().map(|(_, f)| f).collect();
        if targets.len() < 2 {
            return;
        }
        let min = self.options.min_similarity;
        let prepare = |func: &mut Function| self.prepare(func);
        let families = fmerge::families(self.module, self.isa, fmerge, &targets, min, &prepare);
        for family in families {
            self.price_family(&family, prices);
        }
    }

    /// Decision 2 for one family: each group priced on its own
    /// ([`Pricer::price_group_of_family`]), and, when the family has more
    /// than one group, all of its members inlined together against those
    /// choices.
    fn price_family(&self, family: &fmerge::Family, prices: &mut Prices) {
        let mut choices = Vec::with_capacity(family.groups.len());
        for group in &family.groups {
            let Some(choice) = self.price_group_of_family(group) else {
                return;
            };
            choices.push(choice);
        }
        let chosen: i64 = choices.iter().map(|c| c.saves).sum();
        if family.groups.len() > 1 {
            let members: Vec<usize> = family.members().collect();
            let Some(inlined) = self.family_inlining_saves(&members) else {
                return;
            };
            if inlined > chosen {
                let remark = self.whole_family_remark(family, &members, inlined, chosen);
                prices.remarks.push(remark.in_module(&self.module.name));
                return;
            }
        }
        for (group, choice) in family.groups.iter().zip(choices) {
            prices
                .merge_similar
                .extend(choice.merged.iter().map(|&f| self.name(f).to_string()));
            let remark = self.family_remark(group, &choice);
            prices.remarks.push(remark.in_module(&self.module.name));
        }
    }

    /// The cheapest way with one group of a family: all its members
    /// inlined together, left alone, or the members of its first `j`
    /// merges merged (each step of [`fmerge::MergedGroup::steps`]: the
    /// merges `fmerge` made first are its most similar members) and the
    /// rest inlined together; a merge must save [`SIMILAR_MARGIN_BYTES`]
    /// more than the alternative. `None` when a trial does not compile.
    fn price_group_of_family(&self, group: &fmerge::MergedGroup) -> Option<GroupOfFamily> {
        let all = self.family_inlining_saves(&group.members)?;
        let mut best = GroupOfFamily {
            merged: Vec::new(),
            merge_saves: 0,
            rest_inlined: 0,
            all_inlined: all,
            saves: all.max(0),
        };
        let mut best_value = best.saves;
        for (merged, merge_saves) in &group.steps {
            let rest: Vec<usize> = group
                .members
                .iter()
                .copied()
                .filter(|m| !merged.contains(m))
                .collect();
            let rest_inlined = match rest.is_empty() {
                true => 0,
                false => self.family_inlining_saves(&rest)?,
            };
            let saves = merge_saves + rest_inlined.max(0);
            if saves - SIMILAR_MARGIN_BYTES > best_value {
                best_value = saves - SIMILAR_MARGIN_BYTES;
                best = GroupOfFamily {
                    merged: merged.clone(),
                    merge_saves: *merge_saves,
                    rest_inlined,
                    all_inlined: all,
                    saves,
                };
            }
        }
        Some(best)
    }

    /// `names` as a list of quoted names.
    fn quoted(&self, functions: impl Iterator<Item = usize>) -> String {
        let names: BTreeSet<&str> = functions.map(|f| self.name(f)).collect();
        let names: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
        names.join(", ")
    }

    /// The callers of `members` (single-caller functions), quoted.
    fn callers(&self, members: &[usize]) -> String {
        self.quoted(members.iter().map(|&f| self.caller_of(f).0))
    }

    /// The remark of a family all of whose members go to the inliner
    /// together, named by its first member.
    fn whole_family_remark(
        &self,
        family: &fmerge::Family,
        members: &[usize],
        inlined: i64,
        chosen: i64,
    ) -> Remark {
        let merged: i64 = family.groups.iter().map(|g| g.saves).sum();
        Remark::missed(
            PASS,
            "inline-family",
            self.name(members[0]),
            format!(
                "a family of {} similar functions ({}) in {} merged functions, each called once from {}: inlining all into their callers together saves {inlined} bytes, merging all {merged}, deciding each merged function's members apart {chosen}: left to the inliner",
                members.len(),
                self.quoted(members.iter().copied()),
                family.groups.len(),
                self.callers(members),
            ),
        )
        .bytes(chosen - inlined)
    }

    /// The remark of one group's decision, named by its first member.
    fn family_remark(&self, group: &fmerge::MergedGroup, choice: &GroupOfFamily) -> Remark {
        let first = self.name(group.members[0]);
        let all = choice.all_inlined;
        let context = format!(
            "a family of {} similar functions ({}), each called once from {}",
            group.members.len(),
            self.quoted(group.members.iter().copied()),
            self.callers(&group.members),
        );
        if choice.merged.is_empty() {
            let (decision, kind, outcome) = match all > 0 {
                true => ("inline-family", "left to the inliner", all),
                false => ("leave-family", "neither pays, left as they are", 0),
            };
            return Remark::missed(
                PASS,
                decision,
                first,
                format!(
                    "{context}: merging all saves {} bytes ({} merges), inlining all into their callers together {all}, leaving them 0: {kind}",
                    group.saves, group.merges
                ),
            )
            .bytes(group.saves - outcome);
        }
        let rest = group.members.len() - choice.merged.len();
        let rest = match rest {
            0 => String::new(),
            _ => format!(
                ", the other {rest} inlined together {}",
                choice.rest_inlined
            ),
        };
        Remark::passed(
            PASS,
            "merge-family",
            first,
            format!(
                "{context}: merging {} saves {} bytes{rest}; inlining all into their callers together {all}, leaving them 0: left to fmerge",
                self.quoted(choice.merged.iter().copied()),
                choice.merge_saves,
            ),
        )
        .bytes(choice.saves - all.max(0))
    }

    /// Whether `f`'s caller is an instance of a generic with another
    /// instance in the module that calls no instance of `f`'s generic:
    /// left alone, the inliner puts `f` into its caller, and the caller
    /// may then be alike to that sibling and merge with it; kept for
    /// `fmerge`, `f` stays a call the sibling does not make (a nest of
    /// instances, the price of which decision 2 does not take).
    fn caller_has_unlike_sibling(&self, f: usize) -> bool {
        let caller = self.caller_of(f).0;
        let Some(generic) = generic_of(self.name(caller)) else {
            return false;
        };
        let own = generic_of(self.name(f)).unwrap_or(self.name(f));
        (0..self.module.functions.len())
            .filter(|&g| g != caller && generic_of(self.name(g)) == Some(generic))
            .any(|g| {
                !self
                    .graph
                    .callees(g)
                    .into_iter()
                    .any(|c| generic_of(self.name(c)).unwrap_or(self.name(c)) == own)
            })
    }

    /// `f`'s one call site (`f` is a [`Pricer::single_caller`]).
    fn caller_of(&self, f: usize) -> (usize, ir::Inst) {
        self.graph.call_sites(self.module.functions[f].symbol)[0]
    }

    /// What inlining every member of a family into its caller and deleting
    /// the members saves, `Σ|m| − Σ_f (|f[members]| − |f|)`: each caller
    /// measured with all the members it calls inlined together (they share
    /// its frame, its saved registers and its constants), through the code
    /// cache; under [`Decide::Estimate`], the size model's estimate of each
    /// member inlined on its own.
    fn family_inlining_saves(&self, members: &[usize]) -> Option<i64> {
        if self.options.decide == Decide::Estimate {
            return members
                .iter()
                .map(|&f| self.inlining_saves(f).map(|e| e.bytes))
                .sum();
        }
        let mut by_caller: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        let mut saves = 0;
        for &m in members {
            saves += self.size(&self.prepared(&self.module.functions[m].func))?;
            by_caller.entry(self.caller_of(m).0).or_default().push(m);
        }
        for (caller, callees) in by_caller {
            let before = &self.module.functions[caller].func;
            let mut after = before.clone();
            for m in callees {
                let callee = &self.module.functions[m];
                let at = sites_of(&after, callee.symbol);
                after = crate::inline::inline_at(&after, &callee.func, &at)?;
            }
            saves -= self.size(&self.prepared(&after))? - self.size(&self.prepared(before))?;
        }
        Some(saves)
    }

    /// What the passes between the inliner and `fmerge` do to a function
    /// whatever else is inlined: GVN (`crate::gvn`; at `-Oz` it knows a
    /// string's length once its callee is inlined where the string is
    /// made, and folds the checks of the loops over it).
    fn prepare(&self, func: &mut Function) {
        crate::gvn::run(func);
    }

    /// `func` with [`Pricer::prepare`] applied.
    fn prepared(&self, func: &Function) -> Function {
        let mut func = func.clone();
        self.prepare(&mut func);
        func
    }

    /// Whether the inliner would delete `f` after inlining it into its one
    /// caller: local, not address-taken, not a merge member, one call site
    /// outside itself.
    fn single_caller(&self, f: usize) -> bool {
        let symbol = self.module.functions[f].symbol;
        let sites = self.graph.call_sites(symbol);
        self.module.symbols[symbol as usize].linkage == Linkage::Local
            && !self.graph.is_address_taken(symbol)
            && !self.members.contains(self.name(f))
            && sites.len() == 1
            && sites[0].0 != f
    }

    /// What inlining `f` into its one caller and deleting it saves, `|f|
    /// − Δ(f)`, with `Δ(f)` the size model's estimate.
    fn inlining_saves(&self, f: usize) -> Option<Estimate> {
        let func = &self.module.functions[f].func;
        let (caller, site) = self.graph.call_sites(self.module.functions[f].symbol)[0];
        let caller = &self.module.functions[caller].func;
        let size = self.size(func)?;
        let growth =
            size_model::inline_delta_at(caller, func, CalleeBytes::Measured(size), &[site]);
        Some(Estimate {
            bytes: size - growth.bytes,
            low: size - growth.high,
            high: size - growth.low,
        })
    }
}

/// A nest of instances (decision 3): an outer merge group whose members
/// each fold in, once the inliner may touch them, callees of their own.
struct Nest<'g> {
    outer: &'g Group,
    /// The outer group's members, by index, in plan order.
    members: Vec<usize>,
    /// Per member, the callees the inliner would fold into it (its
    /// closure), callees before their callers.
    closures: Vec<Vec<usize>>,
    /// The merge groups all of whose members are in the closures.
    inner: Vec<&'g Group>,
}

/// The nests left to the inliner (decision 3).
#[derive(Default)]
struct NestDecisions {
    /// The merge members decided for (of the outer and the inner groups):
    /// decision 1 leaves them alone, and the inliner does not keep them.
    members: BTreeSet<String>,
    /// The functions the inliner is to fold into the outer members:
    /// decision 2 does not leave them to `fmerge`.
    folded: BTreeSet<usize>,
}

/// What a nest costs each way (decision 3).
struct NestPrice {
    /// Merging each level: the groups' bodies and thunks, the other
    /// functions of the closures whole.
    levels: i64,
    /// The members with their closures inlined, measured after GVN.
    inlined: i64,
    /// What `fmerge` saves merging the inlined members.
    fmerged: i64,
}

impl NestPrice {
    /// The cost of the inlined alternative: the inlined members, less
    /// what merging them saves.
    fn nest(&self) -> i64 {
        self.inlined - self.fmerged
    }
}

impl Pricer<'_> {
    /// Decision 3 over every nest of `plan` (module doc).
    fn price_nests(&self, plan: &MergePlan, prices: &mut Prices) -> NestDecisions {
        let nests: Vec<Nest> = plan
            .groups
            .values()
            .filter_map(|g| self.nest_of(g, plan))
            .collect();
        // A group inside another nest's closures is priced with it.
        let inside: BTreeSet<usize> = nests.iter().flat_map(|n| n.closures.concat()).collect();
        let mut decided = NestDecisions::default();
        for nest in nests
            .iter()
            .filter(|n| !n.members.iter().any(|m| inside.contains(m)))
        {
            let Some(price) = self.price_nest(nest, plan) else {
                continue;
            };
            let inline = price.nest() + release_margin(price.levels) < price.levels;
            for &m in &nest.members {
                prices
                    .remarks
                    .push(self.nest_remark(m, nest, &price, inline));
            }
            if !inline {
                continue;
            }
            let inner = nest.inner.iter().flat_map(|g| &g.members);
            decided.members.extend(inner.map(|(_, name)| name.clone()));
            decided.folded.extend(nest.closures.iter().flatten());
            for &m in &nest.members {
                decided.members.insert(self.name(m).to_string());
                prices.merge_similar.insert(self.name(m).to_string());
            }
        }
        decided
    }

    /// `group` as the outer group of a nest: every member local (the group
    /// merges in this module alone), each folding in a closure of its own
    /// (non-empty, disjoint from the others', as many functions in each),
    /// and every merge group that reaches into the closures wholly inside
    /// them.
    fn nest_of<'g>(&self, group: &'g Group, plan: &'g MergePlan) -> Option<Nest<'g>> {
        let members = self.local_group(group)?;
        let outer: BTreeSet<usize> = members.iter().copied().collect();
        let closures: Vec<Vec<usize>> = members.iter().map(|&m| self.closure(m, &outer)).collect();
        let all: BTreeSet<usize> = closures.iter().flatten().copied().collect();
        let count = closures[0].len();
        if count == 0
            || closures.iter().any(|c| c.len() != count)
            || all.len() != count * members.len()
        {
            return None;
        }
        let mut inner = Vec::new();
        for g in plan.groups.values() {
            let in_closures = g.members.iter().any(|(module, name)| {
                *module == self.module.name
                    && self.function_named(name).is_some_and(|f| all.contains(&f))
            });
            if in_closures {
                let local = self.local_group(g)?;
                if !local.iter().all(|f| all.contains(f)) {
                    return None;
                }
                inner.push(g);
            }
        }
        Some(Nest {
            outer: group,
            members,
            closures,
            inner,
        })
    }

    /// The members of `group`, when all are defined in this module (and
    /// there are two or more).
    fn local_group(&self, group: &Group) -> Option<Vec<usize>> {
        let members: Option<Vec<usize>> = group
            .members
            .iter()
            .map(|(module, name)| match *module == self.module.name {
                true => self.function_named(name),
                false => None,
            })
            .collect();
        members.filter(|m| m.len() >= 2)
    }

    /// The function named `name` defined in the module.
    fn function_named(&self, name: &str) -> Option<usize> {
        self.graph.function_of(self.module.symbol_index(name)?)
    }

    /// The callees the inliner folds into `m` when it may (callees before
    /// their callers): transitively, the local, not address-taken,
    /// non-recursive callees that only `m` and its closure call, and the
    /// small ones ([`SMALL_CALLEE_BYTES`]: copied wherever they are called)
    /// that no other member of `outer` calls.
    fn closure(&self, m: usize, outer: &BTreeSet<usize>) -> Vec<usize> {
        let mut inside = BTreeSet::from([m]);
        let mut order = Vec::new();
        self.close(m, outer, &mut inside, &mut order);
        order
    }

    /// [`Pricer::closure`] below `f`.
    fn close(
        &self,
        f: usize,
        outer: &BTreeSet<usize>,
        inside: &mut BTreeSet<usize>,
        order: &mut Vec<usize>,
    ) {
        for c in self.graph.callees(f) {
            if inside.contains(&c) || outer.contains(&c) || !self.folds_into(c, outer, inside) {
                continue;
            }
            inside.insert(c);
            self.close(c, outer, inside, order);
            order.push(c);
        }
    }

    /// Whether the inliner folds callee `c` into the functions `inside`
    /// (module doc, decision 3).
    fn folds_into(&self, c: usize, outer: &BTreeSet<usize>, inside: &BTreeSet<usize>) -> bool {
        let symbol = self.module.functions[c].symbol;
        if !self.known_callers(symbol) || self.graph.callees(c).contains(&c) {
            return false;
        }
        let callers = self.graph.callers(symbol);
        if callers.iter().all(|f| inside.contains(f)) {
            return true;
        }
        !callers
            .iter()
            .any(|f| outer.contains(f) && !inside.contains(f))
            && self
                .size(&self.module.functions[c].func)
                .is_some_and(|n| n <= SMALL_CALLEE_BYTES)
    }

    /// `f` with the functions of `closure` it calls inlined, each with its
    /// own callees of `closure` inlined first.
    fn fold(&self, f: usize, closure: &[usize]) -> Option<Function> {
        let mut body = self.module.functions[f].func.clone();
        for c in self.graph.callees(f) {
            if !closure.contains(&c) {
                continue;
            }
            let callee = self.fold(c, closure)?;
            let at = sites_of(&body, self.module.functions[c].symbol);
            body = crate::inline::inline_at(&body, &callee, &at)?;
        }
        Some(body)
    }

    /// Both prices of a nest (`None` when a trial does not compile).
    fn price_nest(&self, nest: &Nest, plan: &MergePlan) -> Option<NestPrice> {
        let levels = self.levels_price(nest, plan)?;
        let mut scratch = self.module.clone();
        let mut inlined = 0;
        for (&m, closure) in nest.members.iter().zip(&nest.closures) {
            let folded = self.prepared(&self.fold(m, closure)?);
            inlined += self.size(&folded)?;
            scratch.functions[m].func = folded;
        }
        let fmerged = match &self.options.fmerge {
            Some(options) => {
                let min = self.options.min_similarity;
                let keep = |_: &mut Function| {};
                fmerge::families(&scratch, self.isa, options, &nest.members, min, &keep)
                    .iter()
                    .flat_map(|f| &f.groups)
                    .map(|g| g.saves.max(0))
                    .sum()
            }
            None => 0,
        };
        Some(NestPrice {
            levels,
            inlined,
            fmerged,
        })
    }

    /// Merging each level of `nest`: each group's merged body, measured
    /// (the constant merger runs on a copy of the module with the nest's
    /// groups for its plan: the body with its constants as parameters,
    /// one copy per group as the linker keeps it), its members' thunks
    /// (or constants at their call sites) as decision 1 prices them, and
    /// the closures' other functions whole.
    fn levels_price(&self, nest: &Nest, plan: &MergePlan) -> Option<i64> {
        let groups: Vec<&Group> = std::iter::once(nest.outer)
            .chain(nest.inner.iter().copied())
            .collect();
        let mut scratch = self.module.clone();
        let sub_plan = MergePlan {
            groups: plan
                .groups
                .iter()
                .filter(|(_, g)| groups.iter().any(|n| std::ptr::eq(*n, *g)))
                .map(|(k, g)| (k.clone(), g.clone()))
                .collect(),
            ..MergePlan::default()
        };
        let report = crate::merge::run(&mut scratch, Some(&sub_plan), &self.options.merge);
        let mut grouped = BTreeSet::new();
        let mut cost = 0;
        for group in &groups {
            let members = self.local_group(group)?;
            cost += members
                .iter()
                .map(|&m| self.thunk_price(m, group))
                .sum::<i64>();
            grouped.extend(members);
        }
        if report.stats.merged < grouped.len() {
            // Some member does not merge after all: priced as now.
            return None;
        }
        // Each member makes its own copy of its group's body, and the
        // linker keeps one: a class of identical bodies counts once.
        // The classes of the new bodies only (and their callees).
        let bodies: Vec<usize> = (0..scratch.functions.len())
            .filter(|&f| {
                let name = &scratch.symbols[scratch.functions[f].symbol as usize].name;
                self.module.symbol_index(name).is_none()
            })
            .collect();
        let classes = fmerge::icf::classes_among(&scratch, &bodies);
        let mut seen = BTreeSet::new();
        for &f in &bodies {
            if seen.insert(classes[f]) {
                cost += self.size(&scratch.functions[f].func)?;
            }
        }
        for &c in nest.closures.iter().flatten() {
            if !grouped.contains(&c) {
                cost += self.size(&self.module.functions[c].func)?;
            }
        }
        Some(cost)
    }

    /// What member `m` of `group` costs beside the body once merged: its
    /// thunk, or the constants at its call sites where every caller is
    /// known and that is less.
    fn thunk_price(&self, m: usize, group: &Group) -> i64 {
        let symbol = self.module.functions[m].symbol;
        let sites = self.graph.call_sites(symbol).len() as i64;
        let thunk = group.size_thunk as i64;
        let materialise = thunk - crate::merge::combine::thunk_overhead(group.c_abi) as i64;
        match self.known_callers(symbol) {
            true => thunk.min(sites * materialise),
            false => thunk,
        }
    }

    /// The remark of decision 3 for outer member `m`.
    fn nest_remark(&self, m: usize, nest: &Nest, price: &NestPrice, inline: bool) -> Remark {
        let folded: usize = nest.closures.iter().map(Vec::len).sum::<usize>() / nest.members.len();
        let context = format!(
            "a nest of {} merge members each folding in {folded} callees of its own ({} inner merge groups): merging each level costs {} bytes; the callees inlined, the members cost {} and merging them saves {}",
            nest.members.len(),
            nest.inner.len(),
            price.levels,
            price.inlined,
            price.fmerged,
        );
        let remark = match inline {
            true => Remark::passed(
                PASS,
                "inline-nest",
                self.name(m),
                format!("{context}: left to the inliner, then fmerge"),
            ),
            false => Remark::missed(
                PASS,
                "merge-nest",
                self.name(m),
                format!("{context}: each level merged"),
            ),
        };
        remark
            .bytes(price.levels - price.nest())
            .in_module(&self.module.name)
    }
}

/// The generic a function's name is an instance of: the name before its
/// first `<`, if it has one.
fn generic_of(name: &str) -> Option<&str> {
    name.split_once('<').map(|(generic, _)| generic)
}

/// The direct call sites of `symbol` in `func`, in layout order.
fn sites_of(func: &Function, symbol: u32) -> Vec<ir::Inst> {
    References::of(func)
        .calls
        .into_iter()
        .filter(|&(_, s)| s == symbol)
        .map(|(inst, _)| inst)
        .collect()
}
