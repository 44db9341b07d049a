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
//! Loop membership comes from the machine layer's loop analysis on the
//! block graph ([`crate::machine::loops`]): natural loops of back edges to
//! dominating headers. Address ranges would not do: Cranelift lays a loop's
//! body out after the code that follows the loop, so everything between a
//! loop's header and its branch back would count as hot (issue 34, item 11:
//! a three-iteration loop first in a function stopped all outlining in it).

use crate::heat::Heat;
use crate::machine::lift::LiftedFunction;
use crate::machine::loops::loop_items;

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
