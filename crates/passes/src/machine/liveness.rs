//! Register liveness on a lifted function, at instruction granularity.
//!
//! Backward dataflow over the lifted control-flow graph: `live_in(i) =
//! uses(i) ∪ (live_out(i) ∖ kills(i))`, `live_out(i) = ⋃ live_in(s)` over
//! the successors `s` (fall-through, branch target, jump-table entries).
//! Instructions that leave the function (returns, tail calls) read what the
//! conventions say ([`super::decode::RETURN_USES`]). Uses are
//! over-approximated and kills under-approximated, so a register reported
//! dead is dead on every path: unknown means live.

use std::collections::BTreeMap;

use super::decode::{Form, RegSet};
use super::lift::{Item, Label, LiftedFunction};

/// Live registers before and after every item (data items: empty).
pub struct Liveness {
    pub live_in: Vec<RegSet>,
    pub live_out: Vec<RegSet>,
}

/// The successors of item `i`, as item indices.
fn successors(func: &LiftedFunction, index_of: &BTreeMap<Label, usize>, i: usize) -> Vec<usize> {
    let Item::Inst(inst) = &func.items[i].1 else {
        return Vec::new();
    };
    let next = || {
        (i + 1 < func.items.len() && matches!(func.items[i + 1].1, Item::Inst(_))).then_some(i + 1)
    };
    let target = || inst.target.and_then(|t| index_of.get(&t).copied());
    match inst.form {
        Form::B if inst.reloc.is_none() => target().into_iter().collect(),
        Form::Br { .. } if inst.jump_table => func.items[i + 1..]
            .iter()
            .map_while(|(_, item)| match item {
                Item::JumpEntry { target, .. } => index_of.get(target).copied(),
                _ => None,
            })
            .collect(),
        Form::BCond | Form::Cbz | Form::Tbz => next().into_iter().chain(target()).collect(),
        form if form.ends_flow() => Vec::new(),
        _ => next().into_iter().collect(),
    }
}

/// The successors of every item, as item indices (data items: none).
pub fn successor_lists(func: &LiftedFunction) -> Vec<Vec<usize>> {
    let index_of: BTreeMap<Label, usize> = func
        .items
        .iter()
        .enumerate()
        .map(|(i, (l, _))| (*l, i))
        .collect();
    (0..func.items.len())
        .map(|i| successors(func, &index_of, i))
        .collect()
}

/// Computes liveness to a fixed point.
pub fn compute(func: &LiftedFunction) -> Liveness {
    compute_on(func, &successor_lists(func))
}

/// [`compute`] given the successor lists of `func` ([`successor_lists`]).
pub fn compute_on(func: &LiftedFunction, succs: &[Vec<usize>]) -> Liveness {
    let n = func.items.len();
    let mut live_in = vec![0 as RegSet; n];
    let mut live_out = vec![0 as RegSet; n];
    let mut changed = true;
    while changed {
        changed = false;
        for i in (0..n).rev() {
            let Item::Inst(inst) = &func.items[i].1 else {
                continue;
            };
            let out = succs[i].iter().fold(0, |acc, &s| acc | live_in[s]);
            let inn = inst.effects.uses | (out & !inst.effects.kills);
            if out != live_out[i] || inn != live_in[i] {
                live_out[i] = out;
                live_in[i] = inn;
                changed = true;
            }
        }
    }
    Liveness { live_in, live_out }
}
