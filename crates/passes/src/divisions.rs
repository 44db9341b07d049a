//! Divisions by constants kept as divisions, for the smallest code (`-Oz`).
//!
//! Cranelift's mid-end rewrites every `udiv`, `sdiv`, `urem` and `srem` by a
//! constant that is not a power of two into a multiplication by a "magic"
//! reciprocal ([GM94]; [HD] ch. 10), as a compiler optimizing for speed
//! should: on aarch64 `x / 10` on 64 bits becomes `mov`, three `movk`,
//! `smulh`, `asr` and `add` (28 bytes, plus the remainder's `msub`), where a
//! division is `mov` and `sdiv` (8 bytes; its lowering of a division by a
//! constant other than 0 and −1 has no checks). LLVM keeps the division when
//! a function is optimized for minimum size (`isIntDivCheap` under
//! `minsize`, which clang -Oz sets); Cranelift has no such switch. This
//! module gives it one, from outside, at the cost of running the mid-end
//! before code generation instead of inside it. The switch is Cranelift's
//! `opt_level=speed_and_size` ([`kept_by`]), which Cranelift compiles as
//! `speed` and `-Oz` sets: [`crate::code_cache::compile`], through which
//! every compilation of a build goes (the size passes' measurements and
//! code generation), takes this path for it.
//!
//! # Notation
//!
//! A *constant division* is an instruction `q = op x, d` with `op` one of
//! `udiv`, `sdiv`, `urem`, `srem` and `d` an `iconst` the mid-end expands:
//! not zero, and neither it nor (signed) its negation a power of two
//! (powers of two become shifts, which are smaller than a division, and
//! −1 and 0 keep their checks). The *quotient* of a constant division is
//! the value `x / d` (for a remainder, the one its expansion
//! `x − (x / d)·d` multiplies back).
//!
//! # Algorithm
//!
//! [`optimize_keeping_divisions`] runs three steps on a function with
//! constant divisions (others compile as usual), which
//! [`crate::code_cache::compile`] then lowers:
//! 1. **Record** each constant division: its result, numerator, divisor and
//!    signedness ([`record`]).
//! 2. **Optimize**: Cranelift's mid-end ([`Context::optimize`]). It removes
//!    each constant division and makes its result an alias of the
//!    expansion.
//! 3. **Restore** ([`restore`]): for each record, the expansion's quotient
//!    `q` — the result itself for a division, the factor of `d` in
//!    `x − q·d` for a remainder — is checked to be an expansion: a tree of
//!    pure integer operations over the numerator and constants containing a
//!    multiply-high of the numerator, which computes `x / d` on a set of
//!    probe values (0, ±1, the extremes, multiples of `d` and their
//!    neighbours). Its defining instruction is then rewritten in place into
//!    `q = op' x, d` (`op'` the division of the record's signedness): every
//!    use of the quotient now reads the division, a remainder's `q·d`
//!    multiplies by the division's own constant and lowers with it to
//!    division and `msub`, and the rest of the expansion, now unused, is
//!    removed.
//!
//! The function is then lowered with the same ISA but `opt_level=none`
//! ([`without_mid_end`]), so that the mid-end does not expand the restored
//! divisions again; everything else it did stays done.
//!
//! # Invariants and cost
//!
//! - A quotient is restored only when the numerator is the record's own
//!   (after alias resolution), it dominates the quotient's definition, and
//!   the probes agree: otherwise the expansion stays, which is correct
//!   code, only larger. The probes are a check on the shape's origin (the
//!   mid-end rewrote exactly this division), not the proof: the mid-end
//!   preserves the value of `q`, and `x / d` is that value.
//! - Traps are unchanged: a division by a constant other than 0 and −1
//!   cannot trap, and its lowering checks nothing.
//! - Cost: a scan of the function for constant divisions; for the
//!   functions that have some, the mid-end runs before lowering instead of
//!   inside it, and the code cache's key is that of the optimized function
//!   (so the mid-end runs for each compilation of such a function, hit or
//!   miss).
//!
//! [GM94]: T. Granlund, P. L. Montgomery, "Division by invariant integers
//! using multiplication", PLDI 1994. [HD]: H. S. Warren, *Hacker's
//! Delight*, 2nd ed., ch. 10.

use cranelift_codegen::control::ControlPlane;
use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::dominator_tree::DominatorTree;
use cranelift_codegen::ir::{
    self, types, InstBuilder, InstructionData, Opcode, Type, Value, ValueDef,
};
use cranelift_codegen::isa::{self, OwnedTargetIsa, TargetIsa};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_codegen::{CodegenError, CodegenResult, Context};

use crate::size_model;

/// One constant division of the function before the mid-end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConstantDivision {
    /// Its result.
    pub result: Value,
    /// Its numerator.
    pub numerator: Value,
    /// The divisor, sign-extended from the type's width for signed
    /// divisions, zero-extended for unsigned ones.
    pub divisor: i64,
    pub ty: Type,
    pub signed: bool,
    /// A remainder (`urem`/`srem`) rather than a quotient.
    pub remainder: bool,
}

/// The constant divisions of `func` (module doc, step 1), in layout order.
pub fn record(func: &ir::Function) -> Vec<ConstantDivision> {
    let mut found = Vec::new();
    for block in func.layout.blocks() {
        for inst in func.layout.block_insts(block) {
            if let Some(division) = constant_division(func, inst) {
                found.push(division);
            }
        }
    }
    found
}

/// `inst` as a constant division the mid-end would expand, if it is one.
fn constant_division(func: &ir::Function, inst: ir::Inst) -> Option<ConstantDivision> {
    let InstructionData::Binary { opcode, args } = func.dfg.insts[inst] else {
        return None;
    };
    let (signed, remainder) = match opcode {
        Opcode::Udiv => (false, false),
        Opcode::Sdiv => (true, false),
        Opcode::Urem => (false, true),
        Opcode::Srem => (true, true),
        _ => return None,
    };
    let ty = func.dfg.value_type(args[0]);
    if !matches!(ty, types::I32 | types::I64) {
        return None;
    }
    let divisor = iconst_value(func, args[1], ty, signed)?;
    if !expanded_by_mid_end(divisor, signed) {
        return None;
    }
    Some(ConstantDivision {
        result: func.dfg.first_result(inst),
        numerator: args[0],
        divisor,
        ty,
        signed,
        remainder,
    })
}

/// The constant `v` is defined as, extended from `ty`'s width by `signed`.
fn iconst_value(func: &ir::Function, v: Value, ty: Type, signed: bool) -> Option<i64> {
    size_model::constant(func, func.dfg.resolve_aliases(v)).map(|bits| extend(bits, ty, signed))
}

/// `bits` read as a `ty` value, extended to 64 bits.
fn extend(bits: i64, ty: Type, signed: bool) -> i64 {
    match (ty.bits(), signed) {
        (32, true) => bits as i32 as i64,
        (32, false) => bits as u32 as i64,
        _ => bits,
    }
}

/// Whether Cranelift's mid-end replaces a division by `d` with a
/// multiplication: `d` is not zero and not (in magnitude, when signed) a
/// power of two (`cranelift-codegen`'s `opts/arithmetic.isle`).
fn expanded_by_mid_end(d: i64, signed: bool) -> bool {
    if d == 0 {
        return false;
    }
    let magnitude = match signed {
        true => d.unsigned_abs(),
        false => d as u64,
    };
    // i32::MIN and i64::MIN are powers of two in magnitude
    // (`unsigned_abs` keeps them exact).
    !magnitude.is_power_of_two()
}

/// Whether code generation for `isa` keeps divisions by constants:
/// parec's reading of Cranelift's `opt_level=speed_and_size`, which
/// Cranelift itself compiles as `speed` (`-Oz` sets it).
pub fn kept_by(isa: &dyn TargetIsa) -> bool {
    isa.flags().opt_level() == settings::OptLevel::SpeedAndSize
}

/// Whether `func` has a constant division (module doc): the cheap test
/// that sends a function through [`compile`]'s three steps.
pub fn has_constant_division(func: &ir::Function) -> bool {
    func.layout.blocks().any(|block| {
        func.layout
            .block_insts(block)
            .any(|inst| constant_division(func, inst).is_some())
    })
}

/// What [`restore`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Restored {
    /// Quotients made divisions again.
    pub restored: usize,
    /// Records whose expansion was not recognized (left expanded).
    pub kept: usize,
}

/// Step 3 of the module doc on `func` after the mid-end, with `records`
/// from before it and `domtree` of the optimized function.
pub fn restore(
    func: &mut ir::Function,
    records: &[ConstantDivision],
    domtree: &DominatorTree,
) -> Restored {
    let mut outcome = Restored::default();
    for record in records {
        // A division whose result nothing used is gone, its value an alias
        // of nothing.
        if live_value(func, record.result).is_none() {
            continue;
        }
        let Some(found) = quotient_of(func, record, domtree) else {
            outcome.kept += 1;
            continue;
        };
        let divisor = match found.state {
            QuotientState::Expanded => {
                outcome.restored += 1;
                rewrite_as_division(func, found.value, record)
            }
            // Another record of the same quotient restored it already.
            QuotientState::Restored(divisor) => divisor,
        };
        // The remainder's `q·d` multiplies by the division's own constant:
        // one `mov` of `d` for both.
        if let Some(product) = found.product {
            let other = func.dfg.inst_args(product)[0] == found.value;
            func.dfg.inst_args_mut(product)[usize::from(other)] = divisor;
        }
    }
    if outcome.restored > 0 {
        remove_unused_expansions(func);
    }
    outcome
}

/// The quotient of `record` after the mid-end.
struct FoundQuotient {
    value: Value,
    state: QuotientState,
    /// For a remainder, the instruction computing `q·d`.
    product: Option<ir::Inst>,
}

enum QuotientState {
    /// Still its expansion, defined by the value's instruction.
    Expanded,
    /// Already a division, by this constant (a remainder and a quotient of
    /// the same pair).
    Restored(Value),
}

/// Finds and checks the quotient of `record` (module doc, step 3).
fn quotient_of(
    func: &ir::Function,
    record: &ConstantDivision,
    domtree: &DominatorTree,
) -> Option<FoundQuotient> {
    let numerator = live_value(func, record.numerator)?;
    let result = live_value(func, record.result)?;
    let (value, product) = match record.remainder {
        false => (result, None),
        true => {
            let (q, product) = factor_of_divisor(func, result, numerator, record)?;
            (q, Some(product))
        }
    };
    let def = func.dfg.value_def(value).inst()?;
    func.layout.inst_block(def)?;
    if let Some(divisor) = restored_divisor(func, def, numerator, record) {
        let state = QuotientState::Restored(divisor);
        return Some(FoundQuotient {
            value,
            state,
            product,
        });
    }
    if !computes_quotient(func, value, numerator, record) {
        return None;
    }
    let numerator_dominates = match func.dfg.value_def(numerator) {
        ValueDef::Result(inst, _) => domtree.dominates(inst, def, &func.layout),
        ValueDef::Param(block, _) => domtree.block_dominates(block, func.layout.inst_block(def)?),
        _ => false,
    };
    let state = QuotientState::Expanded;
    numerator_dominates.then_some(FoundQuotient {
        value,
        state,
        product,
    })
}

/// What `v` is an alias of, through every alias; `None` for a value the
/// mid-end deleted (an alias of no value, or the result of an instruction
/// no longer in the layout).
fn live_value(func: &ir::Function, v: Value) -> Option<Value> {
    let mut v = v;
    while func.dfg.value_is_valid(v) {
        match func.dfg.value_alias_dest_for_serialization(v) {
            Some(original) => v = original,
            None => {
                return match func.dfg.value_def(v) {
                    ValueDef::Result(inst, _) => func.layout.inst_block(inst).map(|_| v),
                    _ => Some(v),
                };
            }
        }
    }
    None
}

/// `q` of a remainder's expansion `x − q·d` (either operand order of the
/// product), where `x` is `numerator`.
fn factor_of_divisor(
    func: &ir::Function,
    remainder: Value,
    numerator: Value,
    record: &ConstantDivision,
) -> Option<(Value, ir::Inst)> {
    let [x, product] = binary(func, remainder, Opcode::Isub)?;
    if x != numerator {
        return None;
    }
    let [a, b] = binary(func, product, Opcode::Imul)?;
    let is_divisor =
        |v: Value| iconst_value(func, v, record.ty, record.signed) == Some(record.divisor);
    let inst = func.dfg.value_def(product).inst()?;
    match (is_divisor(a), is_divisor(b)) {
        (false, true) => Some((a, inst)),
        (true, false) => Some((b, inst)),
        _ => None,
    }
}

/// The operands of `v` when an instruction `opcode` defines it.
fn binary(func: &ir::Function, v: Value, opcode: Opcode) -> Option<[Value; 2]> {
    let def = func.dfg.value_def(v).inst()?;
    match func.dfg.insts[def] {
        InstructionData::Binary { opcode: op, args } if op == opcode => {
            Some(args.map(|a| func.dfg.resolve_aliases(a)))
        }
        _ => None,
    }
}

/// The divisor operand of `def` when it is already `numerator / divisor`
/// of the record's kind.
fn restored_divisor(
    func: &ir::Function,
    def: ir::Inst,
    numerator: Value,
    record: &ConstantDivision,
) -> Option<Value> {
    match func.dfg.insts[def] {
        InstructionData::Binary { opcode, args }
            if opcode == division_opcode(record)
                && func.dfg.resolve_aliases(args[0]) == numerator
                && iconst_value(func, args[1], record.ty, record.signed)
                    == Some(record.divisor) =>
        {
            Some(args[1])
        }
        _ => None,
    }
}

fn division_opcode(record: &ConstantDivision) -> Opcode {
    match record.signed {
        true => Opcode::Sdiv,
        false => Opcode::Udiv,
    }
}

/// The deepest expansion the mid-end makes, with room to spare.
const MAX_DEPTH: usize = 12;

/// Whether `q` is an expansion of the record's quotient: pure integer
/// operations over `numerator` and constants, with a multiply-high of
/// `numerator`, equal to `x / d` on every probe (module doc).
fn computes_quotient(
    func: &ir::Function,
    q: Value,
    numerator: Value,
    record: &ConstantDivision,
) -> bool {
    let mut has_mulhi = false;
    if !is_expansion(func, q, numerator, 0, &mut has_mulhi) || !has_mulhi {
        return false;
    }
    let width = |v: i64| match record.ty.bits() {
        32 => v as u32 as i64,
        _ => v,
    };
    probes(record).all(|x| {
        let expected = width(quotient(x, record));
        evaluate(func, q, numerator, x, record.ty) == Some(expected)
    })
}

/// Whether the tree of `v` has only the operations an expansion uses, over
/// `numerator` and constants.
fn is_expansion(
    func: &ir::Function,
    v: Value,
    numerator: Value,
    depth: usize,
    has_mulhi: &mut bool,
) -> bool {
    if v == numerator {
        return true;
    }
    if depth > MAX_DEPTH {
        return false;
    }
    let Some(def) = func.dfg.value_def(v).inst() else {
        return false;
    };
    match func.dfg.insts[def] {
        InstructionData::UnaryImm {
            opcode: Opcode::Iconst,
            ..
        } => true,
        InstructionData::Binary { opcode, args } if is_expansion_op(opcode) => {
            if matches!(opcode, Opcode::Smulhi | Opcode::Umulhi) {
                *has_mulhi |= args
                    .iter()
                    .any(|&a| func.dfg.resolve_aliases(a) == numerator);
            }
            args.iter().all(|&a| {
                is_expansion(
                    func,
                    func.dfg.resolve_aliases(a),
                    numerator,
                    depth + 1,
                    has_mulhi,
                )
            })
        }
        _ => false,
    }
}

fn is_expansion_op(opcode: Opcode) -> bool {
    matches!(
        opcode,
        Opcode::Smulhi
            | Opcode::Umulhi
            | Opcode::Iadd
            | Opcode::Isub
            | Opcode::Imul
            | Opcode::Ishl
            | Opcode::Ushr
            | Opcode::Sshr
            | Opcode::Band
    )
}

/// `x / d` of the record's kind, on `ty`'s width, as a sign- or
/// zero-extended 64-bit value (`x` extended alike).
fn quotient(x: i64, record: &ConstantDivision) -> i64 {
    let d = record.divisor;
    let q = match (record.ty.bits(), record.signed) {
        (32, true) => (x as i32).wrapping_div(d as i32) as i64,
        (32, false) => ((x as u32) / (d as u32)) as i64,
        (_, true) => x.wrapping_div(d),
        (_, false) => ((x as u64) / (d as u64)) as i64,
    };
    extend(q, record.ty, record.signed)
}

/// The probe numerators of a record (module doc).
fn probes(record: &ConstantDivision) -> impl Iterator<Item = i64> + use<> {
    let d = record.divisor;
    let (min, max) = match (record.ty.bits(), record.signed) {
        (32, true) => (i32::MIN as i64, i32::MAX as i64),
        (32, false) => (0, u32::MAX as i64),
        (_, true) => (i64::MIN, i64::MAX),
        (_, false) => (i64::MIN, -1),
    };
    let mut values = vec![
        0,
        1,
        -1,
        2,
        3,
        7,
        10,
        100,
        12345,
        min,
        max,
        min + 1,
        max - 1,
    ];
    for k in [1i64, 2, 3, 9, 1000, 1 << 20] {
        let m = d.wrapping_mul(k);
        let n = m.wrapping_neg();
        values.extend([
            m,
            m.wrapping_sub(1),
            m.wrapping_add(1),
            n,
            n.wrapping_add(1),
        ]);
    }
    let (ty, signed) = (record.ty, record.signed);
    values.into_iter().map(move |x| extend(x, ty, signed))
}

/// The value of `v`'s tree with `numerator` = `x`, on `ty`'s width,
/// extended as the record's probes are; `None` for an operation outside
/// the expansion's.
fn evaluate(func: &ir::Function, v: Value, numerator: Value, x: i64, ty: Type) -> Option<i64> {
    if v == numerator {
        return Some(x);
    }
    let def = func.dfg.value_def(v).inst()?;
    let bits = ty.bits();
    let mask = |r: i64| -> i64 {
        match bits {
            32 => r as u32 as i64,
            _ => r,
        }
    };
    let eval = |a: Value| evaluate(func, func.dfg.resolve_aliases(a), numerator, x, ty);
    let result = match func.dfg.insts[def] {
        InstructionData::UnaryImm {
            opcode: Opcode::Iconst,
            imm,
        } => imm.bits(),
        InstructionData::Binary { opcode, args } => {
            let (a, b) = (eval(args[0])?, eval(args[1])?);
            apply(opcode, a, b, bits)?
        }
        _ => return None,
    };
    Some(mask(result))
}

/// `a op b` on `bits`-wide values (the operands in their low bits).
fn apply(opcode: Opcode, a: i64, b: i64, bits: u32) -> Option<i64> {
    let (ua, ub) = match bits {
        32 => (a as u32 as u64, b as u32 as u64),
        _ => (a as u64, b as u64),
    };
    let (sa, sb) = match bits {
        32 => (a as i32 as i64, b as i32 as i64),
        _ => (a, b),
    };
    let shift = (ub as u32) & (bits - 1);
    let r = match (opcode, bits) {
        (Opcode::Iadd, _) => a.wrapping_add(b),
        (Opcode::Isub, _) => a.wrapping_sub(b),
        (Opcode::Imul, _) => a.wrapping_mul(b),
        (Opcode::Band, _) => a & b,
        (Opcode::Ishl, _) => (ua << shift) as i64,
        (Opcode::Ushr, _) => (ua >> shift) as i64,
        (Opcode::Sshr, _) => sa >> shift,
        (Opcode::Umulhi, 32) => ((ua * ub) >> 32) as i64,
        (Opcode::Smulhi, 32) => (sa * sb) >> 32,
        (Opcode::Umulhi, _) => ((ua as u128 * ub as u128) >> 64) as i64,
        (Opcode::Smulhi, _) => ((sa as i128 * sb as i128) >> 64) as i64,
        _ => return None,
    };
    Some(r)
}

/// Rewrites the instruction defining `q` into `q = div numerator, d`,
/// with `d` a new `iconst` just before it, which it returns; `q` keeps its
/// number, so every use reads the division.
fn rewrite_as_division(func: &mut ir::Function, q: Value, record: &ConstantDivision) -> Value {
    let def = func
        .dfg
        .value_def(q)
        .inst()
        .expect("checked by quotient_of");
    let numerator = func.dfg.resolve_aliases(record.numerator);
    let divisor = FuncCursor::new(func)
        .at_inst(def)
        .ins()
        .iconst(record.ty, record.divisor);
    let replace = func.replace(def);
    match record.signed {
        true => replace.sdiv(numerator, divisor),
        false => replace.udiv(numerator, divisor),
    };
    divisor
}

/// Removes the instructions of the expansions' kinds (and constants) whose
/// results nothing uses any more, until none is left: what the restored
/// divisions replaced. (Code generation would not lower them; the CLIF
/// reads as what is compiled.)
fn remove_unused_expansions(func: &mut ir::Function) {
    let mut uses = crate::combine::use_counts(func);
    let insts: Vec<ir::Inst> = func
        .layout
        .blocks()
        .flat_map(|b| func.layout.block_insts(b))
        .collect();
    let removable = |func: &ir::Function, inst: ir::Inst| {
        let opcode = func.dfg.insts[inst].opcode();
        (opcode == Opcode::Iconst || is_expansion_op(opcode))
            && func.dfg.inst_results(inst).len() == 1
    };
    let mut work: Vec<ir::Inst> = insts.into_iter().rev().collect();
    while let Some(inst) = work.pop() {
        if func.layout.inst_block(inst).is_none() || !removable(func, inst) {
            continue;
        }
        let result = func.dfg.first_result(inst);
        if uses.get(&result).copied().unwrap_or(0) > 0 {
            continue;
        }
        let args: Vec<Value> = func.dfg.inst_values(inst).collect();
        func.layout.remove_inst(inst);
        for v in args {
            let v = func.dfg.resolve_aliases(v);
            let n = uses.entry(v).or_default();
            *n = n.saturating_sub(1);
            if *n == 0 {
                if let Some(def) = func.dfg.value_def(v).inst() {
                    work.push(def);
                }
            }
        }
    }
}

/// `isa` with `opt_level=none`: the same code generation without the
/// mid-end (module doc).
pub fn without_mid_end(isa: &dyn TargetIsa) -> CodegenResult<OwnedTargetIsa> {
    let unsupported = |e: settings::SetError| CodegenError::Unsupported(e.to_string());
    let mut shared = settings::builder();
    for value in isa.flags().iter() {
        shared
            .set(value.name, &value.value_string())
            .map_err(unsupported)?;
    }
    shared.set("opt_level", "none").map_err(unsupported)?;
    let mut builder =
        isa::lookup(isa.triple().clone()).map_err(|e| CodegenError::Unsupported(e.to_string()))?;
    for value in isa.isa_flags() {
        builder
            .set(value.name, &value.value_string())
            .map_err(unsupported)?;
    }
    builder.finish(settings::Flags::new(shared))
}

/// Steps 1–3 of the module doc on `ctx.func` for `isa`: afterwards the
/// function is optimized, with its constant divisions restored, ready to
/// be compiled by an ISA [`without_mid_end`].
pub fn optimize_keeping_divisions(
    ctx: &mut Context,
    isa: &dyn TargetIsa,
) -> CodegenResult<Restored> {
    let records = record(&ctx.func);
    ctx.optimize(isa, &mut ControlPlane::default())?;
    // The mid-end may have folded branches: the dominator tree of the
    // function as it is now.
    ctx.compute_cfg();
    ctx.compute_domtree();
    Ok(restore(&mut ctx.func, &records, &ctx.domtree))
}

#[cfg(test)]
mod tests;
