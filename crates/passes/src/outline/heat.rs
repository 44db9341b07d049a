//! Which instructions of a lifted function the outliner leaves alone as hot:
//! those inside a loop, unless a profile says more ([`crate::heat`]).
//!
//! An outlined sequence costs a call and a return each time it runs; in a
//! loop that is paid on every iteration (LLVM's experience, issue #96830 and
//! the `-enable-machine-outliner=…-pgo` modes of PR #154437: outlined hot
//! loops cost zlib-ng up to 13.5%, and Chromium turns the outliner off on
//! arm64). Without a profile, loop membership is the static estimate of
//! "hot": an instruction inside a loop runs as often as the loop iterates,
//! one outside runs once per call of its function.
//!
//! # Algorithm
//!
//! Cranelift lays out each loop's blocks so that the loop header comes
//! before its latch: every loop has a *backward* branch, from the latch at
//! item `j` to the header at item `i ≤ j`. The items `i..=j` are taken as
//! the loop's body. This is an over-approximation of the natural loop when
//! blocks outside the loop are laid out between header and latch (they are
//! then treated as hot too: the outliner loses a little size there, never
//! speed), and it is exact for the contiguous loops Cranelift emits for
//! Pare's `while` and `for`. Branches through jump tables are not
//! followed: a loop closed only by an indirect branch is not seen.
//!
//! Cost: `O(items)` for the label index, plus the marked ranges (each item
//! is marked at most once per enclosing backward branch).

use std::collections::HashMap;

use super::decode::Form;
use super::lift::{Item, LiftedFunction};
use crate::heat::Heat;

/// `hot[i]`: item `i` of `func` is left alone. A function a profile knows
/// ([`crate::heat::HotCode`]) is all hot or all cold; otherwise the static
/// estimate, [`loop_items`], decides.
pub fn hot_items(func: &LiftedFunction, heat: Option<Heat>) -> Vec<bool> {
    match heat {
        Some(Heat::Hot) => vec![true; func.items.len()],
        Some(Heat::Cold) => vec![false; func.items.len()],
        None => loop_items(func),
    }
}

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
