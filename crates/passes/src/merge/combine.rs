//! Combine: from stable function summaries to merge groups ([GFM] §3.3,
//! Algorithm 2, Figure 6, Equation 1).
//!
//! 1. Group summaries by hash; within a hash, keep together only summaries
//!    of the same *shape* (instruction count and location positions) — the
//!    [GFM]'s `canMerge`, which here splits a colliding hash into shape
//!    classes instead of dropping it.
//! 2. Order members by `(module, name)`. For every location, the sequence of
//!    member hashes is its *constant hash sequence*. A location whose
//!    sequence is constant is *fixed*; the others get parameters, one per
//!    distinct sequence (Fig. 6), numbered in the order of their first
//!    location — the canonical order every module derives alike.
//! 3. Equation 1 in aarch64 bytes: with `N` the number of members whose
//!    parameter tuples differ (members with equal tuples are exact copies
//!    that ICF folds anyway), `Benefit = Size_func · (N − 1)` and
//!    `Cost = Size_thunk · N`, where `Size_func` is estimated from the
//!    instruction count and `Size_thunk` is the costliest member's thunk
//!    (parameter materialisation plus a `b`, or a framed `bl`+`ret` for C-ABI
//!    functions). A group is kept when `Benefit > Cost + min_benefit`.

use std::collections::BTreeMap;

use super::summary::{StableFunction, Summary};
use super::MergeOptions;

/// The key that identifies a group: hash, instruction count, locations.
pub type GroupKey = (u64, u32, Vec<(u32, u32)>);

/// A profitable merge group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    pub hash: u64,
    pub inst_count: u32,
    pub c_abi: bool,
    pub sig_params: u32,
    /// Every location position, sorted.
    pub locations: Vec<(u32, u32)>,
    /// Locations with one hash across the group, and that hash.
    pub fixed: Vec<((u32, u32), u64)>,
    /// Parameter `k` replaces the locations `params[k]` (sorted; parameters
    /// ordered by their first location).
    pub params: Vec<Vec<(u32, u32)>>,
    /// `(module, function)` of every member, sorted.
    pub members: Vec<(String, String)>,
    /// Members with distinct parameter tuples (the `N` of Equation 1).
    pub distinct: usize,
    pub size_func: u64,
    pub size_thunk: u64,
}

impl Group {
    /// `Size_func · (N − 1)`.
    pub fn benefit(&self) -> u64 {
        self.size_func * (self.distinct as u64).saturating_sub(1)
    }
    /// `Size_thunk · N`.
    pub fn cost(&self) -> u64 {
        self.size_thunk * self.distinct as u64
    }
    /// Whether every member lives in `module`.
    pub fn all_in(&self, module: &str) -> bool {
        self.members.iter().all(|(m, _)| m == module)
    }
}

/// Why candidate shape classes were not kept, counted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CombineStats {
    /// Summaries read.
    pub functions: usize,
    /// Shape classes with at least two members.
    pub classes: usize,
    /// Classes whose members all have the same constants (ICF's job).
    pub identical: usize,
    /// Classes that would need more parameters than allowed.
    pub too_many_params: usize,
    /// Classes that Equation 1 rejects.
    pub unprofitable: usize,
    /// Groups kept.
    pub groups: usize,
}

/// The combined merge information (`GlobalMergeInfo`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MergePlan {
    pub groups: BTreeMap<GroupKey, Group>,
    /// Shape classes of two or more members that were not kept, and why
    /// (for remarks).
    pub rejected: BTreeMap<GroupKey, &'static str>,
    pub stats: CombineStats,
}

impl MergePlan {
    pub fn group(&self, key: &GroupKey) -> Option<&Group> {
        self.groups.get(key)
    }
}

/// Algorithm 2: groups, parameters and Equation 1.
pub fn combine(summary: &Summary, opts: &MergeOptions) -> MergePlan {
    let mut classes: BTreeMap<GroupKey, Vec<&StableFunction>> = BTreeMap::new();
    for f in summary.functions() {
        if f.locations.is_empty() || f.inst_count < opts.min_insts {
            continue;
        }
        classes.entry(f.group_key()).or_default().push(f);
    }
    let mut plan = MergePlan::default();
    plan.stats.functions = summary.functions().len();
    for (key, mut members) in classes {
        if members.len() < 2 {
            continue;
        }
        plan.stats.classes += 1;
        members.sort_by(|a, b| (&a.module, &a.name).cmp(&(&b.module, &b.name)));
        let (fixed, params) = compute_params(&key.2, &members);
        if params.is_empty() {
            plan.stats.identical += 1;
            plan.rejected
                .insert(key, "identical constants (left to the linker's ICF)");
            continue;
        }
        let sig_params = members[0].sig_params;
        if sig_params as usize + params.len() > opts.max_params {
            plan.stats.too_many_params += 1;
            plan.rejected.insert(key, "too many parameters");
            continue;
        }
        let group = price(key.clone(), &members, fixed, params, opts);
        if group.benefit() > group.cost() + opts.min_benefit {
            plan.stats.groups += 1;
            plan.groups.insert(key, group);
        } else {
            plan.stats.unprofitable += 1;
            plan.rejected.insert(
                key,
                "unprofitable by Equation 1 (thunks cost more than the body saves)",
            );
        }
    }
    plan
}

/// `ComputeParams` of Algorithm 2: fixed locations, and one parameter per
/// distinct constant hash sequence, in order of first location.
#[allow(clippy::type_complexity)]
fn compute_params(
    locations: &[(u32, u32)],
    members: &[&StableFunction],
) -> (Vec<((u32, u32), u64)>, Vec<Vec<(u32, u32)>>) {
    let mut fixed = Vec::new();
    let mut by_sequence: BTreeMap<Vec<u64>, usize> = BTreeMap::new();
    let mut params: Vec<Vec<(u32, u32)>> = Vec::new();
    for (k, &loc) in locations.iter().enumerate() {
        let sequence: Vec<u64> = members.iter().map(|m| m.locations[k].hash).collect();
        if sequence.iter().all(|&h| h == sequence[0]) {
            fixed.push((loc, sequence[0]));
            continue;
        }
        let next = params.len();
        let p = *by_sequence.entry(sequence).or_insert(next);
        if p == next {
            params.push(Vec::new());
        }
        params[p].push(loc);
    }
    (fixed, params)
}

/// Fills in Equation 1's quantities.
fn price(
    key: GroupKey,
    members: &[&StableFunction],
    fixed: Vec<((u32, u32), u64)>,
    params: Vec<Vec<(u32, u32)>>,
    opts: &MergeOptions,
) -> Group {
    let locations = key.2;
    let index = |loc: &(u32, u32)| locations.binary_search(loc).expect("a group location");
    let mut tuples: Vec<Vec<u64>> = Vec::new();
    let mut size_thunk = 0u64;
    let c_abi = members[0].c_abi;
    // A C-convention thunk calls and returns in CLIF; the machine pass
    // `crate::sibcall` makes that a jump where it runs.
    let call_thunk = match c_abi {
        true => !opts.sibling_calls,
        false => !opts.tail_calls,
    };
    for m in members {
        let tuple: Vec<u64> = params
            .iter()
            .map(|p| m.locations[index(&p[0])].hash)
            .collect();
        tuples.push(tuple);
        let materialise: u64 = params
            .iter()
            .map(|p| u64::from(m.locations[index(&p[0])].cost))
            .sum();
        size_thunk = size_thunk.max(materialise + thunk_overhead(call_thunk));
    }
    tuples.sort();
    tuples.dedup();
    Group {
        hash: key.0,
        inst_count: key.1,
        c_abi,
        sig_params: members[0].sig_params,
        locations,
        fixed,
        params,
        members: members
            .iter()
            .map(|m| (m.module.clone(), m.name.clone()))
            .collect(),
        distinct: tuples.len(),
        size_func: opts.bytes_per_inst * u64::from(key.1),
        size_thunk,
    }
}

/// aarch64 bytes of a thunk besides its parameters: `b body` for a tail
/// call; `stp x29, x30, [sp, #-16]!; mov x29, sp; bl body;
/// ldp x29, x30, [sp], #16; ret` for call-and-return (the C ABI), as
/// Cranelift emits it (`crate::frame` deletes the `mov` later; pricing
/// that made bench/ worse: `crate::fmerge::profit`'s `FRAME`).
pub fn thunk_overhead(call_and_return: bool) -> u64 {
    if call_and_return {
        20
    } else {
        4
    }
}
