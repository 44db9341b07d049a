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
//!
//! A callee's size is [`callee_insts`]: its instructions, a division by a
//! value that is not a constant counted with the checks that make it total
//! (a producer may write them in front of the instruction or leave them to
//! the instruction's own traps, which Cranelift emits as the same code; the
//! limits mean the same either way).

use cranelift_codegen::ir::{self, Function, InstructionData, Opcode};

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

/// The size of `g` as the inlining limits count it: its CLIF instructions,
/// and for each division or remainder whose divisor is not a constant the
/// instructions of the checks that make it total, as a producer checking in
/// front of it writes them: the zero test (a branch and a trap, 2), and for
/// a signed one the `MIN / -1` case (`sdiv`: two constants, two compares,
/// their `band`, a branch and a trap, 7; `srem`: the divisor -1 replaced by
/// 1 with two constants, a compare and a `select`, 4). Cranelift lowers a
/// division's own traps to the same tests, so a callee that leaves its
/// checks to the instruction weighs what it did with them written out.
pub fn callee_insts(g: &Function) -> usize {
    let checks = |inst: ir::Inst| -> usize {
        let opcode = g.dfg.insts[inst].opcode();
        let signed_extra = match opcode {
            Opcode::Sdiv => 7,
            Opcode::Srem => 4,
            Opcode::Udiv | Opcode::Urem => 0,
            _ => return 0,
        };
        let divisor = g.dfg.resolve_aliases(g.dfg.inst_args(inst)[1]);
        let constant = g.dfg.value_def(divisor).inst().is_some_and(|def| {
            matches!(
                g.dfg.insts[def],
                InstructionData::UnaryImm {
                    opcode: Opcode::Iconst,
                    ..
                }
            )
        });
        if constant {
            0
        } else {
            2 + signed_extra
        }
    };
    g.layout
        .blocks()
        .flat_map(|b| g.layout.block_insts(b))
        .map(|inst| 1 + checks(inst))
        .sum()
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

#[cfg(test)]
mod tests {
    use super::*;

    /// `op(x, y) + op(x, 7)`: one division by a parameter, one by a
    /// constant (5 instructions).
    fn two_divisions(op: Opcode) -> Function {
        let text = format!(
            "function %f(i64, i64) -> i64 tail {{
             block0(v0: i64, v1: i64):
                 v2 = iconst.i64 7
                 v3 = {op} v0, v1
                 v4 = {op} v0, v2
                 v5 = iadd v3, v4
                 return v5
             }}"
        );
        cranelift_reader::parse_functions(&text).unwrap().remove(0)
    }

    #[test]
    fn a_division_by_a_variable_weighs_its_checks() {
        for (op, checks) in [
            (Opcode::Sdiv, 9),
            (Opcode::Srem, 6),
            (Opcode::Udiv, 2),
            (Opcode::Urem, 2),
        ] {
            let func = two_divisions(op);
            assert_eq!(count_insts(&func), 5, "{op}");
            assert_eq!(callee_insts(&func), 5 + checks, "{op}");
        }
    }
}
