//! Profitability: the thesis' cost model as a fast filter, then Cranelift's
//! own aarch64 bytes as the decision.
//!
//! The model ([ROCHA-PHD], Rocha's PhD thesis on function merging,
//! University of Edinburgh, 2021, "Profitability Cost Model"; first in
//! [FMSA] §4.4, Rocha et al., *Function Merging by Sequence Alignment*,
//! CGO 2019; full references in docs/DESIGN.md) is
//!
//! ```text
//! Δ({f1, f2}, f12) = c(f1) + c(f2) − (c(f12) + ε),   ε = δ(f1, f12) + δ(f2, f12)
//! ```
//!
//! where `c(f)` sums a per-instruction size estimate ([`estimate`]: aarch64
//! bytes by opcode; constants by their `movz`/`movk` count, or nothing when
//! every use takes them as an immediate; nothing for a jump to the next
//! block; plus a frame for functions that call) and `δ(fk, f12)` is what keeping `fk` costs: its
//! thunk, or, when its calls are redirected, one identifier argument per
//! call site. A merge is attempted further only if `Δ > 0`.
//!
//! The model sees CLIF before Cranelift's e-graph, lowering and register
//! allocation, so it errs both ways. The measured benefit compiles the
//! merged function, the thunks and every redirected caller with Cranelift
//! ([`measure`]) and compares with the bytes of the originals and of the
//! callers before: the merge is kept only if that is positive. Both numbers
//! are reported per attempt, so the model's ranking can be judged.

use cranelift_codegen::entity::SecondaryMap;
use cranelift_codegen::ir::{Function, InstructionData, Opcode, Value};
use cranelift_codegen::isa::TargetIsa;

use crate::merge::hash::materialisation_cost;
// The constants' uses are the size model's (one definition of which
// constants an instruction takes as immediates).
use crate::size_model::{constant, constant_uses, ConstantUses};

/// Bytes of a frame set-up and tear-down (`stp`, `mov x29`, `ldp`).
const FRAME: i64 = 12;

/// The thesis' `c(f)` in estimated aarch64 bytes.
pub fn estimate(func: &Function) -> i64 {
    let uses = constant_uses(func);
    let mut total = 0;
    let mut calls = false;
    let mut blocks = func.layout.blocks().peekable();
    while let Some(block) = blocks.next() {
        let next = blocks.peek().copied();
        for inst in func.layout.block_insts(block) {
            let data = &func.dfg.insts[inst];
            calls |= data.opcode().is_call() && !data.opcode().is_return();
            total += match *data {
                // A jump to the next block falls through.
                InstructionData::Jump { destination, .. }
                    if Some(destination.block(&func.dfg.value_lists)) == next =>
                {
                    0
                }
                _ => instruction_bytes(func, inst, &uses),
            };
        }
    }
    total + if calls { FRAME } else { 0 }
}

/// One instruction's estimated bytes.
fn instruction_bytes(
    func: &Function,
    inst: cranelift_codegen::ir::Inst,
    uses: &SecondaryMap<Value, ConstantUses>,
) -> i64 {
    let data = &func.dfg.insts[inst];
    match *data {
        InstructionData::UnaryImm {
            opcode: Opcode::Iconst,
            imm,
        } => {
            let result = func.dfg.first_result(inst);
            let ty = func.dfg.value_type(result);
            match uses[result] {
                ConstantUses::Immediate => 0,
                ConstantUses::Unused | ConstantUses::Register => {
                    i64::from(materialisation_cost(ty, imm.bits()))
                }
            }
        }
        _ => match data.opcode() {
            // `adrp` + `add`.
            Opcode::SymbolValue | Opcode::FuncAddr => 8,
            // A literal load or `fmov` + `movk`s; usually a literal.
            Opcode::F32const | Opcode::F64const | Opcode::Vconst => 8,
            // `cmp` + `csel`.
            Opcode::Select => 8,
            Opcode::Udiv | Opcode::Sdiv | Opcode::Urem | Opcode::Srem => division_bytes(func, inst),
            // Usually free: a narrower view of the same register.
            Opcode::Ireduce | Opcode::Bitcast => 0,
            _ => 4,
        },
    }
}

/// Division and remainder. By a variable: the divide and a zero check
/// (and an `msub` for the remainder). By a constant power of two: a shift
/// or mask with a sign fix-up. By any other constant Cranelift emits a
/// magic-number multiply: the 64-bit magic (`movz` + `movk`s), `umulh`,
/// shifts and fix-ups, and for the remainder a multiply-subtract.
fn division_bytes(func: &Function, inst: cranelift_codegen::ir::Inst) -> i64 {
    let opcode = func.dfg.insts[inst].opcode();
    let remainder = matches!(opcode, Opcode::Urem | Opcode::Srem);
    let divisor = func.dfg.resolve_aliases(func.dfg.inst_args(inst)[1]);
    let constant = constant(func, divisor);
    match constant {
        Some(k) if k > 0 && (k as u64).is_power_of_two() => 8,
        Some(_) if remainder => 28,
        Some(_) => 20,
        None if remainder => 12,
        None => 8,
    }
}

/// Bytes Cranelift emits for `func` on `isa`, if it compiles (through
/// `cache`, the module's code cache, when there is one).
pub fn measure(
    func: &Function,
    isa: &dyn TargetIsa,
    cache: Option<&crate::code_cache::CodeCache>,
) -> Option<i64> {
    crate::code_cache::code_size(func, isa, cache).map(|n| n as i64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cranelift_codegen::ir::{types, AbiParam, InstBuilder, Signature, UserFuncName};
    use cranelift_codegen::isa::CallConv;
    use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};

    #[test]
    fn estimate_counts_constants_by_chunks_and_selects_double() {
        let mut sig = Signature::new(CallConv::Tail);
        sig.params.push(AbiParam::new(types::I64));
        sig.returns.push(AbiParam::new(types::I64));
        let mut func = Function::with_name_signature(UserFuncName::testcase("f"), sig);
        let mut ctx = FunctionBuilderContext::new();
        let mut b = FunctionBuilder::new(&mut func, &mut ctx);
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let x = b.block_params(entry)[0];
        let big = b.ins().iconst(types::I64, 0x1_0001);
        let s = b.ins().select(x, big, x);
        let one = b.ins().iconst(types::I64, 1);
        let t = b.ins().iadd(s, one);
        b.ins().return_(&[t]);
        b.seal_all_blocks();
        b.finalize(cranelift_codegen::isa::TargetFrontendConfig {
            default_call_conv: CallConv::Tail,
            pointer_width: target_lexicon::PointerWidth::U64,
            page_size_align_log2: 12,
        });
        // movz + movk, cmp + csel, add (immediate), ret.
        assert_eq!(estimate(&func), 8 + 8 + 4 + 4);
    }
}
