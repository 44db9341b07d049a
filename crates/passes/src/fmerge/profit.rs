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
use cranelift_codegen::ir::{Function, InstructionData, Opcode, Value, ValueDef};
use cranelift_codegen::isa::TargetIsa;

use super::align;
use crate::merge::hash::materialisation_cost;
// The constants' uses are the size model's (one definition of which
// constants an instruction takes as immediates).
use crate::size_model::{constant, constant_uses, ConstantUses};

/// Bytes of a frame set-up and tear-down (`stp`, `mov x29`, `ldp`), as
/// Cranelift emits them. `crate::frame` later deletes the `mov` (8 bytes
/// would be the final cost), but pricing that (with the thunks' 16 bytes,
/// `crate::merge::combine::thunk_overhead`) changed one decision on
/// bench/, 12 bytes worse (lisp at `-Os`), and none at `-Oz`: kept at 12.
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

/// Bytes a dispatch on the identifier costs `M` where the aligned sides
/// part: a `brif` on `fid` and the jump that joins them again.
const DISPATCH: i64 = 8;

/// The thesis' `Δ` as the alignment alone tells it, before `M` is
/// generated ([`crate::size_model`]'s estimate of a candidate): the bytes
/// of the instructions the two sides share (each [`align::Step::Both`] and
/// matched terminator, priced on side 0 as [`estimate`] prices it, and one
/// frame when both sides call), less what keeping both sides' differences
/// costs `M`: a dispatch per run of unshared instructions in a paired block
/// and per unmatched terminator, and a `select` per operand of a shared
/// instruction that differs between the sides. Operands are taken as the
/// same where both are entry parameters (code generation pairs them by use),
/// equal constants, results of one shared instruction or parameters of
/// paired blocks at one position; values defined later in the layout than
/// their use (loop back edges) count as differing. It leaves out the thunks
/// and redirected calls (`ε`) and the clean-up, so it errs high; its error
/// against `Δ` is measured ([`ALIGNED_MARGIN`]).
pub fn aligned_saving(views: [&align::FuncView; 2], alignment: &align::Alignment) -> i64 {
    let [v0, v1] = views;
    let (f0, f1) = (v0.func, v1.func);
    let uses = constant_uses(f0);
    let entries = [f0.layout.entry_block(), f1.layout.entry_block()];
    let mut same: hashbrown::HashMap<Value, Value> = hashbrown::HashMap::new();
    let mut shared = 0;
    let mut runs = 0;
    let mut selects = 0;
    let mut compare = |a: &[Value], b: &[Value], same: &hashbrown::HashMap<Value, Value>| {
        for (&x, &y) in a.iter().zip(b) {
            let (x, y) = (f0.dfg.resolve_aliases(x), f1.dfg.resolve_aliases(y));
            let params = matches!(
                (f0.dfg.value_def(x), f1.dfg.value_def(y)),
                (ValueDef::Param(b0, _), ValueDef::Param(b1, _))
                    if Some(b0) == entries[0] && Some(b1) == entries[1]
            );
            let constants = match (v0.constant(x), v1.constant(y)) {
                (Some(c0), Some(c1)) => c0 == c1,
                _ => false,
            };
            if !(params || constants || same.get(&x) == Some(&y)) {
                selects += 1;
            }
        }
    };
    for &block in &v0.blocks {
        let Some(aligned) = &alignment.blocks[block] else {
            continue;
        };
        if let Some(partner) = alignment.partner[0][block] {
            for (&x, &y) in f0
                .dfg
                .block_params(block)
                .iter()
                .zip(f1.dfg.block_params(partner))
            {
                same.insert(x, y);
            }
        }
        let mut in_run = false;
        for step in &aligned.steps {
            match *step {
                align::Step::Both(i0, i1) => {
                    shared += instruction_bytes(f0, i0, &uses);
                    compare(f0.dfg.inst_args(i0), f1.dfg.inst_args(i1), &same);
                    for (&x, &y) in f0.dfg.inst_results(i0).iter().zip(f1.dfg.inst_results(i1)) {
                        same.insert(x, y);
                    }
                    in_run = false;
                }
                align::Step::Left(_) | align::Step::Right(_) => {
                    runs += i64::from(!in_run);
                    in_run = true;
                }
            }
        }
        let terminators = (v0.terminator[block], alignment.partner[0][block]);
        match (aligned.terminators_match, terminators) {
            (true, (Some(t0), Some(partner))) => {
                shared += instruction_bytes(f0, t0, &uses);
                if let Some(t1) = v1.terminator[partner] {
                    compare(f0.dfg.inst_args(t0), f1.dfg.inst_args(t1), &same);
                }
            }
            _ => runs += 1,
        }
    }
    let calls = |f: &Function| {
        f.layout.blocks().any(|b| {
            f.layout.block_insts(b).any(|i| {
                let op = f.dfg.insts[i].opcode();
                op.is_call() && !op.is_return()
            })
        })
    };
    if calls(f0) && calls(f1) {
        shared += FRAME;
    }
    shared - DISPATCH * runs - SELECT * selects
}

/// Bytes of a `select` on the identifier (`cmp` + `csel`).
const SELECT: i64 = 8;

/// The error range of [`aligned_saving`] where it decides: a try merges
/// when both the thesis' `Δ` and the size model's estimate of the saving
/// exceed the threshold. Over the 3,630 tries fmerge generated at `-Os`
/// and `-Oz` on bench/ and examples/, the lesser of the two exceeded
/// [`aligned_saving`] by at most 41 bytes on the 81 tries worth merging,
/// and by at most 32 on 80 of them (the one beyond saves an estimated 4
/// bytes); among the others the estimate errs both ways (from 265 bytes
/// low to far high, median 77 bytes high). A try whose estimate is at
/// least this far below the threshold is rejected without generating `M`:
/// 361 of the 1,267 tries at `-Os`, 872 of the 2,363 at `-Oz`.
pub const ALIGNED_MARGIN: i64 = 32;

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
