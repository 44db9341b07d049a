//! The speed policy's choice of call sites (`-O2`).
//!
//! A conventional static heuristic in the manner of LLVM's inline cost at
//! `-O2` (a threshold on the callee's size, raised for calls in loops), in
//! CLIF instructions rather than machine bytes: speed builds do not pay for
//! a compilation per decision.
//!
//! A site of callee `g` in caller `f` is chosen when
//! - `g` has at most [`SpeedLimits::tiny`] instructions (a call costs about
//!   as much as such a body), or
//! - the site's block is inside a loop of `f` (Cranelift's loop analysis)
//!   and `g` has at most [`SpeedLimits::in_loop`] instructions, or
//! - `g` is removable and this is its only call site, and `g` has at most
//!   [`SpeedLimits::single_site`] instructions (inlining moves code, it does
//!   not copy it);
//!
//! and `f`, with everything chosen so far, stays within
//! [`SpeedLimits::caller_budget`] instructions, so that inlining cannot
//! blow up a function's compile time.

use cranelift_codegen::ir::{self, Function};

use crate::clif_module::count_insts;

/// Thresholds of the speed policy, in CLIF instructions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpeedLimits {
    pub tiny: usize,
    pub in_loop: usize,
    pub single_site: usize,
    pub caller_budget: usize,
}

impl Default for SpeedLimits {
    fn default() -> Self {
        SpeedLimits {
            tiny: 12,
            in_loop: 60,
            single_site: 400,
            caller_budget: 2_000,
        }
    }
}

impl SpeedLimits {
    /// The sites of `sites` (calls of one callee of `callee_insts`
    /// instructions in `caller`) to inline; `only_site` says the callee is
    /// removable and this is its only call.
    pub fn choose_sites(
        &self,
        caller: &Function,
        sites: &[ir::Inst],
        callee_insts: usize,
        only_site: bool,
    ) -> Vec<ir::Inst> {
        let in_loop = crate::heat::in_loop_blocks(caller);
        let mut size = count_insts(caller);
        let mut chosen = Vec::new();
        for &site in sites {
            let block = caller
                .layout
                .inst_block(site)
                .expect("a site in the layout");
            let wanted = callee_insts <= self.tiny
                || (in_loop[block] && callee_insts <= self.in_loop)
                || (only_site && callee_insts <= self.single_site);
            if wanted && size + callee_insts <= self.caller_budget {
                size += callee_insts;
                chosen.push(site);
            }
        }
        chosen
    }
}
