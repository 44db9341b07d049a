//! Compile-time evaluation of constant expressions.
//!
//! Constants (global initializers, constant generic arguments, array lengths
//! of fixed-size globals) are first type-checked like any expression, then
//! folded here over the typed tree. Folding follows the run-time semantics
//! exactly (wrapping arithmetic, masked shift amounts, unsigned `u8`), except
//! that a division by zero or a signed `MIN / -1` is a compile-time error
//! rather than a trap.
//!
//! Invariant: every integer value handled here is *normalized*: wrapped to
//! its type's width and sign- or zero-extended to `i64` (see [`normalize`]).

use crate::ops;
use crate::source::Span;
use crate::tir::{BinOp, Expr, ExprKind, Logical, TrapKind, Ty, UnOp};

/// The value of a folded constant expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Folded {
    Int(i64),
    Null,
    Str(Vec<u8>),
}

/// Why an expression could not be folded.
#[derive(Clone, Debug)]
pub struct FoldError {
    pub span: Span,
    pub message: String,
    pub label: String,
}

/// Wraps `v` to the width of `ty` and sign-/zero-extends it back to `i64`.
pub fn normalize(ty: &Ty, v: i64) -> i64 {
    match ty {
        Ty::I32 => v as i32 as i64,
        Ty::U8 => v as u8 as i64,
        Ty::Bool => (v != 0) as i64,
        _ => v,
    }
}

/// Folds a unary operation on a normalized value of type `ty` (the run-time
/// semantics of [`crate::ops`]).
pub fn eval_unop(op: UnOp, ty: &Ty, v: i64) -> i64 {
    ops::unary(op, ty, v)
}

/// Folds a binary operation on normalized operands; `ty` is the left
/// operand's type (both operands', except for shifts). What traps at run
/// time ([`crate::ops::binary`]) is an error message here.
pub fn eval_binop(op: BinOp, ty: &Ty, a: i64, b: i64) -> Result<i64, &'static str> {
    ops::binary(op, ty, a, b).map_err(|trap| match trap {
        TrapKind::DivisionOverflow => "attempt to divide with overflow",
        _ => "attempt to divide by zero",
    })
}

/// Folds a checked expression to its value, or reports the sub-expression
/// that is not constant.
pub fn fold(e: &Expr) -> Result<Folded, FoldError> {
    match &e.kind {
        ExprKind::Const(v) => Ok(Folded::Int(*v)),
        ExprKind::Null => Ok(Folded::Null),
        ExprKind::Str(s) => Ok(Folded::Str(s.clone())),
        ExprKind::Unary(op, x) => {
            let v = fold_int(x)?;
            Ok(Folded::Int(eval_unop(*op, &e.ty, v)))
        }
        ExprKind::Binary(op, l, r) => {
            let a = fold_int(l)?;
            let b = fold_int(r)?;
            eval_binop(*op, &l.ty, a, b)
                .map(Folded::Int)
                .map_err(|msg| FoldError {
                    span: e.span,
                    message: format!("this constant expression fails to evaluate: {msg}"),
                    label: msg.to_string(),
                })
        }
        ExprKind::Logical(op, l, r) => {
            let a = fold_int(l)? != 0;
            let b = fold_int(r)? != 0;
            Ok(Folded::Int(match op {
                Logical::And => a && b,
                Logical::Or => a || b,
            } as i64))
        }
        ExprKind::Cast(x) => Ok(Folded::Int(normalize(&e.ty, fold_int(x)?))),
        ExprKind::Block(b) if b.stmts.is_empty() => match &b.tail {
            Some(t) => fold(t),
            None => Err(not_constant(e.span)),
        },
        ExprKind::If(c, t, Some(f)) if t.stmts.is_empty() && f.stmts.is_empty() => {
            let branch = if fold_int(c)? != 0 { t } else { f };
            match &branch.tail {
                Some(x) => fold(x),
                None => Err(not_constant(e.span)),
            }
        }
        _ => Err(not_constant(e.span)),
    }
}

fn fold_int(e: &Expr) -> Result<i64, FoldError> {
    match fold(e)? {
        Folded::Int(v) => Ok(v),
        _ => Err(not_constant(e.span)),
    }
}

fn not_constant(span: Span) -> FoldError {
    FoldError {
        span,
        message: "expression is not a compile-time constant".to_string(),
        label: "not a constant".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(v: i64, ty: Ty) -> Expr {
        Expr {
            kind: ExprKind::Const(v),
            ty,
            span: Span::default(),
        }
    }
    fn bin(op: BinOp, l: Expr, r: Expr, ty: Ty) -> Expr {
        Expr {
            kind: ExprKind::Binary(op, Box::new(l), Box::new(r)),
            ty,
            span: Span::default(),
        }
    }

    #[test]
    fn normalizes_per_type() {
        assert_eq!(normalize(&Ty::U8, 300), 44);
        assert_eq!(normalize(&Ty::U8, -1), 255);
        assert_eq!(normalize(&Ty::I32, 0x8000_0000), i32::MIN as i64);
        assert_eq!(normalize(&Ty::I64, -7), -7);
        assert_eq!(normalize(&Ty::Bool, 1), 1);
    }

    #[test]
    fn wrapping_arithmetic() {
        assert_eq!(eval_binop(BinOp::Add, &Ty::I64, i64::MAX, 1), Ok(i64::MIN));
        assert_eq!(eval_binop(BinOp::Add, &Ty::U8, 255, 1), Ok(0));
        assert_eq!(eval_binop(BinOp::Mul, &Ty::I32, i32::MAX as i64, 2), Ok(-2));
        assert_eq!(eval_unop(UnOp::Neg, &Ty::U8, 1), 255);
        assert_eq!(eval_unop(UnOp::BitNot, &Ty::U8, 0), 255);
        assert_eq!(eval_unop(UnOp::Not, &Ty::Bool, 1), 0);
    }

    #[test]
    fn division_semantics() {
        assert_eq!(eval_binop(BinOp::Div, &Ty::I64, -7, 2), Ok(-3));
        assert_eq!(eval_binop(BinOp::Rem, &Ty::I64, -7, 2), Ok(-1));
        assert_eq!(eval_binop(BinOp::Div, &Ty::U8, 250, 3), Ok(83));
        assert!(eval_binop(BinOp::Div, &Ty::I64, 1, 0).is_err());
        assert!(eval_binop(BinOp::Rem, &Ty::U8, 1, 0).is_err());
        assert!(eval_binop(BinOp::Div, &Ty::I64, i64::MIN, -1).is_err());
        assert!(eval_binop(BinOp::Div, &Ty::I32, i32::MIN as i64, -1).is_err());
        assert_eq!(eval_binop(BinOp::Rem, &Ty::I32, i32::MIN as i64, -1), Ok(0));
    }

    #[test]
    fn shifts_mask_the_amount() {
        assert_eq!(eval_binop(BinOp::Shl, &Ty::I64, 1, 65), Ok(2));
        assert_eq!(eval_binop(BinOp::Shl, &Ty::I64, 1, -1), Ok(i64::MIN));
        assert_eq!(eval_binop(BinOp::Shr, &Ty::I32, -8, 1), Ok(-4));
        assert_eq!(eval_binop(BinOp::Shr, &Ty::U8, 0x80, 9), Ok(0x40));
        assert_eq!(eval_binop(BinOp::Shl, &Ty::U8, 0xff, 4), Ok(0xf0));
    }

    #[test]
    fn comparisons() {
        assert_eq!(eval_binop(BinOp::Lt, &Ty::U8, 1, 255), Ok(1));
        assert_eq!(eval_binop(BinOp::Lt, &Ty::I64, -1, 0), Ok(1));
    }

    #[test]
    fn folds_trees_and_reports_errors() {
        let e = bin(
            BinOp::Add,
            c(2, Ty::I64),
            bin(BinOp::Mul, c(3, Ty::I64), c(4, Ty::I64), Ty::I64),
            Ty::I64,
        );
        assert_eq!(fold(&e).unwrap(), Folded::Int(14));
        let e = bin(BinOp::Div, c(2, Ty::I64), c(0, Ty::I64), Ty::I64);
        assert!(fold(&e).unwrap_err().message.contains("divide by zero"));
        let local = Expr {
            kind: ExprKind::Local(crate::tir::LocalId(0)),
            ty: Ty::I64,
            span: Span::default(),
        };
        assert!(fold(&local)
            .unwrap_err()
            .message
            .contains("not a compile-time constant"));
        let cast = Expr {
            kind: ExprKind::Cast(Box::new(c(300, Ty::I64))),
            ty: Ty::U8,
            span: Span::default(),
        };
        assert_eq!(fold(&cast).unwrap(), Folded::Int(44));
    }
}
