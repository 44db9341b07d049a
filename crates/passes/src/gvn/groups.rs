//! GVN with merging in view: a merge group GVN would split stays whole.
//!
//! GVN's size guard judges one function at a time, and a rewrite that makes
//! each function smaller can still make the module larger once the mergers
//! have run (issue 31, point 4). Constant merging ([GFM], `crate::merge`)
//! shares one body among functions that differ only in constants and
//! callees; GVN runs before it and folds those constants where it finds
//! them, so members that had one shape can come out in several: an
//! instance whose constant is `1` loses a multiplication the others keep.
//! Each shape is then a group of its own, with its own body
//! (`bench/pipeline`: `sched::simulate<…,1>` numbered apart from
//! `simulate<…,2>` and `<…,3>` cost two bodies, 480 and 568 bytes, where
//! the seven members without GVN share one of 580).
//!
//! # Notation
//!
//! For a group `G` of the merge plan of the module before GVN (the
//! module's own plan, `crate::merge::analyze` and `combine`, as local
//! merging makes it), `G` *splits* when its members' stable keys after
//! GVN fall in several classes `C_1 … C_k`. With `|f|` a function's
//! measured size, `|f|'` after GVN and `t` the group's thunk:
//! - alike: `A(G) = max_{m∈G} |m| + |G|·t` (one body, a thunk per member);
//! - split: `S(G) = Σ_{|C_i|≥2} (max_{m∈C_i} |m|' + |C_i|·t) + Σ_{|C_i|=1} |m|'`
//!   (a class of one is not merged: it stays whole).
//!
//! # Decision
//!
//! When `A(G) + MARGIN_BYTES < S(G)`, every member of `G` gets its code from
//! before GVN back (one remark `kept-alike` per group); else GVN's rewrite
//! stands. Groups GVN leaves in one class cost nothing more to check.
//!
//! Departures: [GFM] runs after LLVM's scalar pipeline and takes the
//! functions as it finds them; the prices here are the bodies' sizes
//! before and after GVN, measured as GVN's own guard measured them (the
//! code cache answers), not Equation 1's `Size_func` estimate. The plan is
//! the module's own: a two-round build's plan, from every module's
//! summary, merges across modules, and a group split in one module is
//! priced here as if its members were all local.
//!
//! # Cost
//!
//! One stable hashing of the module and one combine before GVN, a copy of
//! the members' code, and one hashing of the members after it; sizes only
//! for the groups that split, through the code cache (GVN measured the
//! changed functions before and after already).

use std::collections::{BTreeMap, BTreeSet};

use cranelift_codegen::ir::Function;
use cranelift_codegen::isa::TargetIsa;

use crate::clif_module::ClifModule;
use crate::merge::{self, GroupKey, MergeOptions, MergePlan};
use crate::remark::Remark;

/// The pass's name in remarks.
const PASS: &str = "gvn";

/// How much cheaper the group kept alike must be priced than split: the
/// later passes (`fmerge`, the machine passes) change both versions.
const MARGIN_BYTES: i64 = 16;

/// What is kept of a module before GVN for [`keep_groups_alike`]: its own
/// merge plan, and its members' keys and code.
pub struct GroupsBeforeGvn {
    plan: MergePlan,
    keys: BTreeMap<String, GroupKey>,
    code: BTreeMap<String, Function>,
}

/// The merge groups of `module` (before GVN) and a copy of their members;
/// `None` when it has none (nothing for [`keep_groups_alike`] to do).
pub fn groups_before_gvn(module: &ClifModule, options: &MergeOptions) -> Option<GroupsBeforeGvn> {
    let summary = merge::analyze(module, options);
    let plan = merge::combine(&summary, options);
    if plan.groups.is_empty() {
        return None;
    }
    let members: BTreeSet<&str> = plan
        .groups
        .values()
        .flat_map(|g| g.members.iter().map(|(_, n)| n.as_str()))
        .collect();
    let keys = summary
        .functions()
        .iter()
        .filter(|sf| members.contains(sf.name.as_str()))
        .map(|sf| (sf.name.clone(), sf.group_key()))
        .collect();
    let code = module
        .functions
        .iter()
        .filter_map(|def| {
            let name = &module.symbols[def.symbol as usize].name;
            members
                .contains(name.as_str())
                .then(|| (name.clone(), def.func.clone()))
        })
        .collect();
    Some(GroupsBeforeGvn { plan, keys, code })
}

/// Puts back, in `after` (the module GVN made of the one `before` was
/// taken of), the code before GVN of the members of every merge group GVN
/// split when one body for the group costs less than the split (module
/// doc). Returns one remark per group put back.
pub fn keep_groups_alike(
    before: &GroupsBeforeGvn,
    after: &mut ClifModule,
    isa: &dyn TargetIsa,
    options: &MergeOptions,
) -> Vec<Remark> {
    let members: BTreeSet<&str> = before.keys.keys().map(String::as_str).collect();
    let keys_after = merge::keys_of(after, &members, options);
    if keys_after == before.keys {
        return Vec::new();
    }
    let mut remarks = Vec::new();
    for group in before.plan.groups.values() {
        let names: Vec<&str> = group.members.iter().map(|(_, n)| n.as_str()).collect();
        // A member GVN made no candidate is a class of its own (keyed by
        // its name): it is not merged either way.
        let mut classes: BTreeMap<Result<&GroupKey, &str>, Vec<&str>> = BTreeMap::new();
        for &name in &names {
            let key = keys_after.get(name).ok_or(name);
            classes.entry(key).or_default().push(name);
        }
        if classes.len() < 2 {
            continue;
        }
        let size_before = |name: &str| -> Option<i64> {
            let func = before.code.get(name)?;
            after.code_size(func, isa).map(|n| n as i64)
        };
        let size_after = |name: &str| -> Option<i64> {
            let f = after.function_index(name)?;
            after
                .code_size(&after.functions[f].func, isa)
                .map(|n| n as i64)
        };
        let thunk = group.size_thunk as i64;
        let alike = names
            .iter()
            .map(|n| size_before(n))
            .collect::<Option<Vec<i64>>>()
            .map(|s| s.into_iter().max().unwrap_or(0) + names.len() as i64 * thunk);
        let split = classes
            .values()
            .map(|class| {
                let sizes = class
                    .iter()
                    .map(|n| size_after(n))
                    .collect::<Option<Vec<i64>>>()?;
                let largest = sizes.iter().copied().max().unwrap_or(0);
                Some(match class.len() {
                    1 => largest,
                    n => largest + n as i64 * thunk,
                })
            })
            .sum::<Option<i64>>();
        let (Some(alike), Some(split)) = (alike, split) else {
            continue;
        };
        if alike + MARGIN_BYTES >= split {
            continue;
        }
        for &name in &names {
            if let (Some(code), Some(a)) = (before.code.get(name), after.function_index(name)) {
                after.functions[a].func = code.clone();
            }
        }
        remarks.push(
            Remark::passed(
                PASS,
                "kept-alike",
                names[0],
                format!(
                    "GVN would split the {} members of a merge group ({}) into {} shapes: bodies {split} bytes against one body {alike} without GVN: the members keep their code before GVN",
                    names.len(),
                    merge::group_id(group),
                    classes.len()
                ),
            )
            .in_module(&after.name)
            .bytes(split - alike),
        );
    }
    remarks
}
