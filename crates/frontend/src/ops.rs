//! Pare's integer operators on normalized values: the one definition of their
//! semantics, used by the reference interpreter and by the checker's
//! compile-time folding of constants.
//!
//! The interpreter holds every value as an `i64` *normalized* to its type:
//! `i64` as is, `i32` sign-extended from 32 bits, `u8` and `bool` zero-extended
//! from 8 bits, references as heap handles (0 is null). Because of that
//! normalization, comparisons of any two values of the same type are plain
//! `i64` comparisons (zero-extended `u8`s order like unsigned bytes), and the
//! bitwise operators `& | ^` preserve normalization. Everything else re-normalizes
//! its result, which is exactly two's-complement wrapping in the type's width.

use crate::tir::{BinOp, TrapKind, Ty, UnOp};

/// Wraps `v` to the width of `ty` and extends it back per the type's
/// signedness (the interpreter's canonical form of a value of type `ty`).
#[inline]
pub fn normalize(ty: &Ty, v: i64) -> i64 {
    match ty {
        Ty::I32 => v as i32 as i64,
        Ty::U8 | Ty::Bool => v & 0xff,
        _ => v,
    }
}

/// Applies a binary operator to two normalized operands; `ty` is the type of
/// the left operand (the result type, except for comparisons, which yield a
/// bool 0/1).
#[inline]
pub fn binary(op: BinOp, ty: &Ty, a: i64, b: i64) -> Result<i64, TrapKind> {
    Ok(match op {
        BinOp::Add => normalize(ty, a.wrapping_add(b)),
        BinOp::Sub => normalize(ty, a.wrapping_sub(b)),
        BinOp::Mul => normalize(ty, a.wrapping_mul(b)),
        BinOp::Div => divide(ty, a, b)?,
        BinOp::Rem => remainder(a, b)?,
        BinOp::And => a & b,
        BinOp::Or => a | b,
        BinOp::Xor => a ^ b,
        BinOp::Shl => shift_left(ty, a, b),
        BinOp::Shr => shift_right(ty, a, b),
        BinOp::Eq => (a == b) as i64,
        BinOp::Ne => (a != b) as i64,
        BinOp::Lt => (a < b) as i64,
        BinOp::Le => (a <= b) as i64,
        BinOp::Gt => (a > b) as i64,
        BinOp::Ge => (a >= b) as i64,
    })
}

/// Truncating division. On normalized operands the `i64` quotient is already
/// the quotient in the narrower type (unsigned for `u8`, whose operands are
/// non-negative), except for the one overflowing case, `MIN / -1`, which traps.
#[inline]
fn divide(ty: &Ty, a: i64, b: i64) -> Result<i64, TrapKind> {
    if b == 0 {
        return Err(TrapKind::DivisionByZero);
    }
    if b == -1 && a == signed_min(ty) {
        return Err(TrapKind::DivisionOverflow);
    }
    Ok(a.wrapping_div(b))
}

/// Truncating remainder with the sign of the dividend; `MIN % -1` is 0
/// (`wrapping_rem` gives exactly that for `i64`, and for a sign-extended `i32`
/// the `i64` remainder cannot overflow).
#[inline]
fn remainder(a: i64, b: i64) -> Result<i64, TrapKind> {
    if b == 0 {
        return Err(TrapKind::DivisionByZero);
    }
    Ok(a.wrapping_rem(b))
}

/// The minimum of a signed type, as a normalized value; `u8` has none that a
/// `-1` divisor could reach, so it gets a value no `u8` operand equals.
#[inline]
fn signed_min(ty: &Ty) -> i64 {
    match ty {
        Ty::I32 => i32::MIN as i64,
        Ty::I64 => i64::MIN,
        _ => -1,
    }
}

/// The shift amount taken modulo the left type's bit width. The amount may be
/// of any integer type; only its low bits matter, so its normalization does not.
#[inline]
fn shift_amount(ty: &Ty, amount: i64) -> u32 {
    let width_mask = match ty {
        Ty::I32 => 31,
        Ty::U8 | Ty::Bool => 7,
        _ => 63,
    };
    (amount as u32) & width_mask
}

#[inline]
fn shift_left(ty: &Ty, a: i64, amount: i64) -> i64 {
    let amount = shift_amount(ty, amount);
    match ty {
        Ty::I32 => ((a as i32) << amount) as i64,
        Ty::U8 | Ty::Bool => ((a as u8) << amount) as i64,
        _ => a << amount,
    }
}

/// Arithmetic for the signed types, logical for `u8`.
#[inline]
fn shift_right(ty: &Ty, a: i64, amount: i64) -> i64 {
    let amount = shift_amount(ty, amount);
    match ty {
        Ty::I32 => ((a as i32) >> amount) as i64,
        Ty::U8 | Ty::Bool => ((a as u8) >> amount) as i64,
        _ => a >> amount,
    }
}

/// Applies a unary operator to a normalized operand of type `ty`.
#[inline]
pub fn unary(op: UnOp, ty: &Ty, a: i64) -> i64 {
    match op {
        UnOp::Neg => normalize(ty, a.wrapping_neg()),
        UnOp::Not => (a == 0) as i64,
        UnOp::BitNot => normalize(ty, !a),
    }
}
