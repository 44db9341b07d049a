//! Loops of a lifted function: which items lie inside one.
//!
//! Cranelift lays out each loop's blocks so that the loop header comes
//! before its latch: every loop has a *backward* branch, from the latch at
//! item `j` to the header at item `i ≤ j`. The items `i..=j` are taken as
//! the loop's body. This is an over-approximation of the natural loop when
//! blocks outside the loop are laid out between header and latch, and it
//! is exact for contiguous loops. Branches through jump tables are not
//! followed: a loop closed only by an indirect branch is not seen.
//!
//! Cost: `O(items)` for the label index, plus the marked ranges (each item
//! is marked at most once per enclosing backward branch).

use std::collections::HashMap;

use super::decode::Form;
use super::lift::{Item, LiftedFunction};

/// `hot[i]`: item `i` of `func` is inside some loop.
pub fn loop_items(func: &LiftedFunction) -> Vec<bool> {
    let index: HashMap<_, usize> = func
        .items
        .iter()
        .enumerate()
        .map(|(i, (label, _))| (*label, i))
        .collect();
    let mut hot = vec![false; func.items.len()];
    for (j, (_, item)) in func.items.iter().enumerate() {
        let Item::Inst(inst) = item else {
            continue;
        };
        let Some(&header) = inst.target.and_then(|t| index.get(&t)) else {
            continue;
        };
        let is_branch = matches!(inst.form, Form::B | Form::BCond | Form::Cbz | Form::Tbz);
        if header <= j && is_branch {
            hot[header..=j].iter_mut().for_each(|h| *h = true);
        }
    }
    hot
}
