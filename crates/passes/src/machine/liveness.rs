//! Register liveness on a lifted function, at instruction granularity.
//!
//! Backward dataflow over the lifted control-flow graph: `live_in(i) =
//! uses(i) ∪ (live_out(i) ∖ kills(i))`, `live_out(i) = ⋃ live_in(s)` over
//! the successors `s` ([`super::cfg`]: fall-through, branch target,
//! jump-table entries).
//! Instructions that leave the function (returns, tail calls) read what the
//! conventions say ([`super::decode::RETURN_USES`]). Uses are
//! over-approximated and kills under-approximated, so a register reported
//! dead is dead on every path: unknown means live.

use super::cfg::successor_lists;
use super::decode::RegSet;
use super::lift::{Item, LiftedFunction};

/// Live registers before and after every item (data items: empty).
pub struct Liveness {
    pub live_in: Vec<RegSet>,
    pub live_out: Vec<RegSet>,
}

/// Computes liveness to a fixed point.
pub fn compute(func: &LiftedFunction) -> Liveness {
    compute_on(func, &successor_lists(func))
}

/// [`compute`] given the successor lists of `func`
/// ([`super::cfg::successor_lists`]).
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
