//! Stable-hash global function merging on CLIF.
//!
//! This follows [GFM] §3 and §4 — Kyungwoo Lee, Manman Ren, Ellis Hoag,
//! *Optimistic and Scalable Global Function Merging*, LCTES 2024 (preprint
//! *Optimistic Global Function Merger*, arXiv:2312.03214, whose section
//! numbers are cited) — and [GFM-RFC], Kyungwoo Lee, *[RFC] Global Function
//! Merging*, LLVM Discourse, 2024 (full references in docs/DESIGN.md): functions
//! that differ only in constants are rewritten, **each in its own module**,
//! into a parameterized body `f.Tgm` plus a thunk `f` that passes `f`'s own
//! constants; the linker's identical-code folding (`ld.lld --icf=all`) then
//! keeps one copy of the bodies that came out identical. Call sites are never
//! touched, so modules can be compiled separately, in any order, from a
//! summary that may be stale.
//!
//! # Notation
//!
//! - A **location** `(i, j)` is operand `j` of the `i`-th instruction in
//!   layout order; a *parameterizable* location is one whose operand could
//!   be a run-time value: a direct callee, a symbol address, or (beyond
//!   LLVM, which only handles call/load/store operands) an `iconst` feeding
//!   arithmetic, comparisons, stored values, select arms, call or return
//!   arguments ([`hash`]).
//! - The **stable hash** `H` of a function hashes everything but its
//!   parameterizable operands, independently of entity numbering, names,
//!   process and platform (xxh3-64, seedless). A **stable function** is
//!   `(H, module, name, instruction count, location → operand hash)`
//!   ([`summary::StableFunction`], Algorithm 1).
//! - A **group** ([`combine::Group`]) is a set of stable functions of equal
//!   hash and shape, with its **parameters**: one per distinct sequence of
//!   operand hashes across the members (Fig. 6), in order of first location.
//!
//! # Phases
//!
//! 1. *Analyze* ([`analyze`], §3.2): per module, the stable functions.
//! 2. *Combine* ([`combine::combine`], §3.3, Algorithm 2): group, split by
//!    shape, assign parameters, keep groups that pay by Equation 1 in aarch64
//!    bytes ([`MergeOptions`] holds the tunable thresholds).
//! 3. *Merge* ([`run`], §3.4, Algorithm 3): per module, each function whose
//!    recomputed hash and shape match a group, whose fixed locations carry
//!    the group's hashes and whose locations sharing a parameter agree (the
//!    *pattern*, not the absolute hashes, must match) becomes a thunk and a
//!    body ([`rewrite`]). A group whose members all come from this module
//!    needs two local matches ([GFM]'s "single local candidate" rule).
//!    Departing from [GFM], which leaves identical functions to LLVM's
//!    `MergeFunctions` before it runs, a group local to the module whose
//!    members all fold under the linker's identical-code folding
//!    ([`folded_groups`]) is not merged: the linker keeps one copy of
//!    them for free, and a merge would add a thunk per member.
//!
//! Two-round builds run phase 1 on every module, combine the union of the
//! summaries (the cgdata [`summary::Summary`] section) and run phase 3 on
//! every module with the result. Without a summary, [`run`] analyses and
//! combines the module alone: local merging when it has two or more members.
//!
//! # Invariants
//!
//! - *Sound whatever the summary says* (§3.5): a thunk passes the function's
//!   own constants to a body that is the function with those constants
//!   abstracted, so stale summaries and hash collisions
//!   ([`MergeOptions::force_collisions`] makes every hash equal, for testing)
//!   cost size, never correctness.
//! - Never across signatures or calling conventions: the signature is part
//!   of the hash. Functions with special-purpose parameters, `.Tgm` bodies
//!   and thunks (functions calling a `.Tgm` body) are left alone, so the pass
//!   is idempotent.
//! - *Deterministic*: groups, members and parameters are ordered by hashes
//!   and names only; bodies are appended in function order.
//!
//! # Cost
//!
//! Linear in the size of the module (one hashing walk per function, one
//! rewrite per merged function) plus `O(n log n)` sorting in combine.

pub mod alike;
pub mod combine;
pub mod hash;
pub mod rewrite;
pub mod summary;
pub mod thunks;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use hashbrown::HashSet;

use cranelift_codegen::ir::{types, ArgumentPurpose, ExternalName, Function, Type};
use cranelift_codegen::isa::CallConv;

use crate::clif_module::{count_insts, ClifModule};
use crate::heat::HotCode;
use crate::remark::Remark;

pub use combine::{combine, Group, GroupKey, MergePlan};
pub use rewrite::BODY_SUFFIX;
pub use summary::{InlinerSummary, StableFunction, Summary};

/// Tunable thresholds of the merger.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MergeOptions {
    /// Functions with fewer CLIF instructions are not candidates.
    pub min_insts: u32,
    /// Estimated aarch64 bytes per CLIF instruction (`Size_func`).
    pub bytes_per_inst: u64,
    /// A group must save more than this many bytes beyond Equation 1's cost.
    pub min_benefit: u64,
    /// At most this many parameters in a body (original plus extra), so that
    /// all of them travel in registers.
    pub max_params: usize,
    /// The type of code and data addresses.
    pub pointer_type: Type,
    /// Whether thunks of tail-convention functions may `return_call` their
    /// body. Cranelift's x86-64 tail calls need frame pointers; without
    /// them thunks call and return, like C-ABI thunks.
    pub tail_calls: bool,
    /// Whether the call and return of a C-convention thunk become a jump
    /// to the body in the machine code (the machine pass
    /// `crate::sibcall`, aarch64): such thunks are priced as tail calls.
    pub sibling_calls: bool,
    /// Testing: every function gets the same hash, so only the shape check
    /// and the rewrite's own checks keep groups apart.
    pub force_collisions: bool,
    /// What is known of how often code runs ([`crate::heat`]): functions
    /// known hot are not merged; the callee of a call inside a loop is a
    /// location only in functions known cold (elsewhere the merged body
    /// would call it indirectly on every iteration, [`hash::LoopCalls`]).
    pub heat: Arc<HotCode>,
    /// The static estimate ([`crate::heat`]): a call inside a loop of a
    /// callee of at most this many CLIF instructions stays a direct call
    /// (its caller is not merged on it), except in functions a profile
    /// knows cold; 0 turns the rule off. Off by default: on bench/ every
    /// limit tried cost 11–20% of `-Oz`'s byte reduction, since loops that
    /// run a few times look like the hot ones (docs/DESIGN.md, "Hot
    /// code"); a profile says which loops are hot.
    pub loop_callee_insts: usize,
    /// Delete the thunks whose every caller is in the module and calls the
    /// body more cheaply ([`thunks`]).
    pub elide_thunks: bool,
}

impl Default for MergeOptions {
    fn default() -> Self {
        MergeOptions {
            min_insts: 4,
            bytes_per_inst: 4,
            min_benefit: 0,
            max_params: 8,
            pointer_type: types::I64,
            tail_calls: true,
            sibling_calls: true,
            force_collisions: false,
            heat: Arc::default(),
            loop_callee_insts: 0,
            elide_thunks: true,
        }
    }
}

/// What [`run`] did to one module.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MergeStats {
    /// Functions looked at.
    pub functions: usize,
    /// Functions whose hash and shape matched a group.
    pub matched: usize,
    /// Matched functions whose constant pattern disagreed with the group.
    pub pattern_mismatches: usize,
    /// Matched functions skipped as a single local candidate.
    pub single_local: usize,
    /// Matched functions skipped because the linker folds their whole
    /// group into one copy ([`folded_groups`]).
    pub linker_folds: usize,
    /// Functions turned into thunks (one `.Tgm` body each).
    pub merged: usize,
    /// Of those, the thunks deleted: every caller calls the body
    /// ([`thunks`]).
    pub thunks_elided: usize,
}

impl MergeStats {
    pub fn accumulate(&mut self, other: &MergeStats) {
        self.functions += other.functions;
        self.matched += other.matched;
        self.pattern_mismatches += other.pattern_mismatches;
        self.single_local += other.single_local;
        self.linker_folds += other.linker_folds;
        self.merged += other.merged;
        self.thunks_elided += other.thunks_elided;
    }
}

impl fmt::Display for MergeStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} functions, {} matched, {} merged ({} thunks elided), {} pattern mismatches, {} single local",
            self.functions,
            self.matched,
            self.merged,
            self.thunks_elided,
            self.pattern_mismatches,
            self.single_local
        )
    }
}

/// The result of [`run`]: statistics and one remark per merge decision.
///
/// Decisions (docs/REMARKS.md): `merged` (one per [`MergeStats::merged`]),
/// `pattern-mismatch` ([`MergeStats::pattern_mismatches`]), `single-local`
/// ([`MergeStats::single_local`]), `linker-folds`
/// ([`MergeStats::linker_folds`]), and `not-grouped` for functions whose
/// shape class was rejected when the plan was combined.
#[derive(Clone, Debug, Default)]
pub struct MergeReport {
    pub stats: MergeStats,
    pub remarks: Vec<Remark>,
}

/// The pass's name in remarks.
const PASS: &str = "merge";

/// Phase 1: the stable functions of `module`.
pub fn analyze(module: &ClifModule, opts: &MergeOptions) -> Summary {
    let small = small_functions(module, opts);
    let functions = module
        .functions
        .iter()
        .filter(|def| is_candidate(module, &def.func, def.symbol, opts))
        .map(|def| stable_function(module, &def.func, def.symbol, &small, opts).0)
        .collect();
    Summary::new(functions)
}

/// The group key (stable hash, instruction count, locations) of the
/// functions of `module` named `names` that are merge candidates, as
/// [`analyze`] would give it, hashing those functions only.
pub fn keys_of(
    module: &ClifModule,
    names: &std::collections::BTreeSet<&str>,
    opts: &MergeOptions,
) -> BTreeMap<String, GroupKey> {
    let small = small_functions(module, opts);
    module
        .functions
        .iter()
        .filter(|def| names.contains(module.symbols[def.symbol as usize].name.as_str()))
        .filter(|def| is_candidate(module, &def.func, def.symbol, opts))
        .map(|def| {
            let sf = stable_function(module, &def.func, def.symbol, &small, opts).0;
            let key = sf.group_key();
            (sf.name, key)
        })
        .collect()
}

/// The symbols of `module`'s functions small enough that a call of one
/// inside a loop is not made indirect ([`MergeOptions::loop_callee_insts`]).
fn small_functions(module: &ClifModule, opts: &MergeOptions) -> HashSet<u32> {
    module
        .functions
        .iter()
        .filter(|def| count_insts(&def.func) <= opts.loop_callee_insts)
        .map(|def| def.symbol)
        .collect()
}

/// The stable function of `func` (symbol `symbol` of `module`) and its shape.
fn stable_function(
    module: &ClifModule,
    func: &Function,
    symbol: u32,
    small: &HashSet<u32>,
    opts: &MergeOptions,
) -> (StableFunction, hash::Shape) {
    let name = &module.symbols[symbol as usize].name;
    let loop_calls = match opts.heat.is_cold(name) || opts.loop_callee_insts == 0 {
        true => hash::LoopCalls::Parameterize,
        false => hash::LoopCalls::KeepCallsOf(small),
    };
    let shape = hash::shape(module, func, loop_calls);
    let sf = StableFunction {
        hash: if opts.force_collisions { 0 } else { shape.hash },
        module: module.name.clone(),
        name: module.symbols[symbol as usize].name.clone(),
        inst_count: count_insts(func) as u32,
        c_abi: func.signature.call_conv != CallConv::Tail,
        sig_params: func.signature.params.len() as u32,
        locations: shape.locations.clone(),
    };
    (sf, shape)
}

/// What [`run`] with a plan will do to one module, as passes before
/// merging need to know it ([`planned`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Planned {
    /// The functions it would merge, by name.
    pub members: std::collections::BTreeSet<String>,
    /// Calls in those functions that inlining may expand and leave the
    /// members of their group alike ([`alike::alike_calls`]):
    /// `(caller, callee)` by name.
    pub alike_calls: std::collections::BTreeSet<(String, String)>,
}

/// What [`run`] with `plan` (or, without one, the module's own summary
/// combined) would merge in `module`.
///
/// Passes that run before merging use it to leave group members alike:
/// inlining a different callee into each member of a group would make the
/// members differ, and each would then cost its whole body again; inlining
/// alike callees into every member does not.
pub fn planned(module: &ClifModule, plan: Option<&MergePlan>, opts: &MergeOptions) -> Planned {
    let own;
    let plan = match plan {
        Some(plan) => plan,
        None => {
            own = combine(&analyze(module, opts), opts);
            &own
        }
    };
    let folded = folded_groups(module, plan);
    let groups = || {
        plan.groups
            .iter()
            .filter(|(key, _)| !folded.contains(*key))
            .map(|(_, group)| group)
    };
    let members = groups()
        .flat_map(|group| &group.members)
        .filter(|(m, _)| *m == module.name)
        .map(|(_, name)| name.clone())
        .collect();
    Planned {
        members,
        alike_calls: alike::alike_calls(module, groups()),
    }
}

/// The groups of `plan` that the linker folds without merging (phase 3):
/// every member is defined in `module`, and all of them fall in one class
/// of identical-code folding (`crate::fmerge::icf`: same code, callees
/// that fold in turn). Two instances of a generic over types of one
/// representation are such a group: `ld.lld --icf=all` keeps one copy of
/// them for nothing, where merging them adds a thunk per member (or the
/// constants at its call sites) and makes the body call the callees that
/// fold anyway through parameters.
pub fn folded_groups(
    module: &ClifModule,
    plan: &MergePlan,
) -> std::collections::BTreeSet<GroupKey> {
    let local: Vec<(&GroupKey, &Group)> = plan
        .groups
        .iter()
        .filter(|(_, group)| group.members.len() >= 2 && group.all_in(&module.name))
        .collect();
    if local.is_empty() {
        return std::collections::BTreeSet::new();
    }
    let index: BTreeMap<&str, usize> = module
        .functions
        .iter()
        .enumerate()
        .map(|(i, def)| (module.symbols[def.symbol as usize].name.as_str(), i))
        .collect();
    // Only the members' classes are compared: computed on them and their
    // callees, not on the whole module.
    let members: Vec<usize> = local
        .iter()
        .flat_map(|(_, group)| &group.members)
        .filter_map(|(_, name)| index.get(name.as_str()).copied())
        .collect();
    let classes = crate::fmerge::icf::classes_among(module, &members);
    let class_of = |name: &str| index.get(name).and_then(|&i| classes[i]);
    local
        .into_iter()
        .filter(|(_, group)| {
            let first = class_of(&group.members[0].1);
            first.is_some() && group.members.iter().all(|(_, n)| class_of(n) == first)
        })
        .map(|(key, _)| key.clone())
        .collect()
}

/// Phase 3 on one module, with `plan` from cgdata or, without one, the
/// module's own summary combined (local merging).
pub fn run(module: &mut ClifModule, plan: Option<&MergePlan>, opts: &MergeOptions) -> MergeReport {
    // Hash every candidate once; local mode combines these same summaries.
    let small = small_functions(module, opts);
    let analysed: Vec<(usize, StableFunction, hash::Shape)> = module
        .functions
        .iter()
        .enumerate()
        .filter(|(_, def)| is_candidate(module, &def.func, def.symbol, opts))
        .map(|(index, def)| {
            let (sf, shape) = stable_function(module, &def.func, def.symbol, &small, opts);
            (index, sf, shape)
        })
        .collect();
    let local;
    let plan = match plan {
        Some(plan) => plan,
        None => {
            let summary = Summary::new(analysed.iter().map(|(_, sf, _)| sf.clone()).collect());
            local = combine(&summary, opts);
            &local
        }
    };
    let mut report = MergeReport::default();
    report.remarks.extend(hot_function_remarks(module, opts));
    let mut matches: Vec<(usize, GroupKey, hash::Shape)> = Vec::new();
    for (index, sf, shape) in analysed {
        report.stats.functions += 1;
        let key = sf.group_key();
        let Some(group) = plan.group(&key) else {
            if let Some(why) = plan.rejected.get(&key) {
                report.remarks.push(
                    Remark::missed(PASS, "not-grouped", &sf.name, *why).in_module(&module.name),
                );
            }
            continue;
        };
        report.stats.matched += 1;
        if let Err(why) = pattern_matches(&sf, group) {
            report.stats.pattern_mismatches += 1;
            report
                .remarks
                .push(pattern_mismatch(&module.name, &sf.name, group, &why));
            continue;
        }
        matches.push((index, key, shape));
    }
    // Per group: how many of its members matched here, and whether all its
    // members are in this module. Asked once per group, not per member: a
    // group can hold most of a module's functions.
    let mut local_matches: BTreeMap<&GroupKey, (usize, bool)> = BTreeMap::new();
    for (_, key, _) in &matches {
        let group = plan.group(key).expect("matched");
        local_matches
            .entry(key)
            .or_insert_with(|| (0, group.all_in(&module.name)))
            .0 += 1;
    }
    let mut decisions = Vec::new();
    for (index, key, _) in &matches {
        let (count, all_here) = local_matches[key];
        let single = all_here && count < 2;
        decisions.push((*index, key.clone(), single));
    }
    let folded = match local_matches
        .values()
        .any(|&(count, all_here)| all_here && count >= 2)
    {
        true => folded_groups(module, plan),
        false => std::collections::BTreeSet::new(),
    };
    let mut thunks = Vec::new();
    for ((index, key, single), (_, _, shape)) in decisions.into_iter().zip(&matches) {
        let group = plan.group(&key).expect("matched");
        let name = module.symbols[module.functions[index].symbol as usize]
            .name
            .clone();
        if folded.contains(&key) {
            report.stats.linker_folds += 1;
            report.remarks.push(
                Remark::missed(
                    PASS,
                    "linker-folds",
                    &name,
                    format!(
                        "{}: every member is identical code in this module, which the linker folds into one copy: merging would only add thunks",
                        group_id(group)
                    ),
                )
                .in_module(&module.name)
                .count("linker_folds", 1),
            );
            continue;
        }
        if single {
            report.stats.single_local += 1;
            report.remarks.push(
                Remark::missed(
                    PASS,
                    "single-local",
                    &name,
                    format!(
                        "{}: the only member of a group local to this module",
                        group_id(group)
                    ),
                )
                .in_module(&module.name)
                .count("single_local", 1),
            );
            continue;
        }
        match rewrite::merge_function(module, index, shape, group, opts) {
            Ok(body) => {
                report.stats.merged += 1;
                thunks.push(index);
                report
                    .remarks
                    .push(merged(&module.name, &name, &body, group));
            }
            Err(why) => {
                report.stats.pattern_mismatches += 1;
                report
                    .remarks
                    .push(pattern_mismatch(&module.name, &name, group, &why));
            }
        }
    }
    if opts.elide_thunks {
        for (name, fate) in thunks::elide(module, &thunks, opts.sibling_calls) {
            if matches!(fate, thunks::ThunkFate::Elided { .. }) {
                report.stats.thunks_elided += 1;
            }
            report
                .remarks
                .push(thunks::remark(&module.name, &name, &fate));
        }
    }
    report
}

/// One remark per function of `module` left alone because a profile knows
/// it hot.
fn hot_function_remarks(module: &ClifModule, opts: &MergeOptions) -> Vec<Remark> {
    module
        .functions
        .iter()
        .map(|def| &module.symbols[def.symbol as usize].name)
        .filter(|name| opts.heat.is_hot(name))
        .map(|name| {
            Remark::missed(
                PASS,
                "hot-function",
                name,
                "known hot (profile): not merged",
            )
            .in_module(&module.name)
            .count("hot_functions", 1)
        })
        .collect()
}

/// The remark of a function turned into a thunk of `body`. Its bytes are
/// the function's share of the group's estimated net saving,
/// `(Benefit - Cost) / N` of Equation 1 ([`Group::benefit`]).
fn merged(module: &str, name: &str, body: &str, group: &Group) -> Remark {
    let net = group.benefit() as i64 - group.cost() as i64;
    Remark::passed(
        PASS,
        "merged",
        name,
        format!(
            "thunk of `{body}` ({}, {} members, {} parameters, est. benefit {} bytes, cost {})",
            group_id(group),
            group.members.len(),
            group.params.len(),
            group.benefit(),
            group.cost()
        ),
    )
    .in_module(module)
    .bytes(net / group.distinct.max(1) as i64)
    .count("merged", 1)
}

/// The remark of a matched function whose constants do not fit its group.
fn pattern_mismatch(module: &str, name: &str, group: &Group, why: &str) -> Remark {
    Remark::missed(
        PASS,
        "pattern-mismatch",
        name,
        format!("{}: {why}", group_id(group)),
    )
    .in_module(module)
    .count("pattern_mismatches", 1)
}

/// A short name for a group in remarks.
pub fn group_id(group: &Group) -> String {
    format!("group {:016x}/{}", group.hash, group.inst_count)
}

/// The pattern check: fixed locations carry the group's hashes, and the
/// locations of one parameter carry one hash in `sf`.
fn pattern_matches(sf: &StableFunction, group: &Group) -> Result<(), String> {
    let hash_at = |loc: &(u32, u32)| {
        sf.locations
            .iter()
            .find(|l| l.key() == *loc)
            .map(|l| l.hash)
    };
    for (loc, expected) in &group.fixed {
        if hash_at(loc) != Some(*expected) {
            return Err(format!(
                "constant at ({}, {}) differs from the group's",
                loc.0, loc.1
            ));
        }
    }
    for (k, locs) in group.params.iter().enumerate() {
        let first = hash_at(&locs[0]);
        if first.is_none() || locs.iter().any(|l| hash_at(l) != first) {
            return Err(format!(
                "the locations of parameter {k} hold different constants"
            ));
        }
    }
    Ok(())
}

/// Whether a function may be analysed and merged: not a body, not a thunk,
/// no special-purpose parameters or returns, not known hot.
fn is_candidate(module: &ClifModule, func: &Function, symbol: u32, opts: &MergeOptions) -> bool {
    let name = &module.symbols[symbol as usize].name;
    if name.ends_with(BODY_SUFFIX) || opts.heat.is_hot(name) {
        return false;
    }
    let special = |p: &cranelift_codegen::ir::AbiParam| p.purpose != ArgumentPurpose::Normal;
    if func.signature.params.iter().any(special) || func.signature.returns.iter().any(special) {
        return false;
    }
    !calls_a_body(module, func)
}

fn calls_a_body(module: &ClifModule, func: &Function) -> bool {
    func.dfg.ext_funcs.values().any(|ext| {
        matches!(ext.name, ExternalName::User(_))
            && hash::symbol_name(module, func, &ext.name).ends_with(BODY_SUFFIX)
    })
}
