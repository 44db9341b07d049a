//! Algebraic simplification of keys, seeing operand keys at every depth
//! ([BRITO] §5.1), under the §4.8 invariant: the result is a constant or a term
//! that already exists — never a new instruction.
//!
//! Rules: constant folding (wrapping per type; never folding a trapping
//! division), identities and absorbing elements, `x op x` rules, `select`
//! on a known condition or equal arms, extension/reduction round trips,
//! double negation, and re-association through operand keys (`(x + y) - y`,
//! `(x ^ y) ^ y`, `(c1 + x) + c2`, masks of masks) whose result is accepted
//! only if it is a constant, an operand term, or a key already in the table.

use cranelift_codegen::ir::condcodes::{CondCode, IntCC};
use cranelift_codegen::ir::{InstructionData, Opcode, Type};

use super::expr::{is_commutative, is_const_type, mask, sext, Args, Key, Term};

/// How deep re-association may recurse through operand keys.
const MAX_DEPTH: u32 = 4;

/// What simplification may ask about the current partition.
pub trait Context {
    /// The key of the class a term denotes, if it is an operation.
    fn key_of(&self, t: Term) -> Option<&Key>;
    /// The term of an existing class with this key, if any.
    fn lookup(&self, key: &Key) -> Option<Term>;
    /// Sort order of a term: constants first, then leaders in RPO.
    fn order(&self, t: Term) -> u64;
}

/// Puts the operands of a commutative operation (and of `icmp`, by swapping
/// the condition) in canonical order, so `a + b` and `b + a` share a key.
pub fn canonicalize(ctx: &impl Context, data: &mut InstructionData, args: &mut Args) {
    let op = data.opcode();
    if args.len() == 2 && is_commutative(op) {
        if ctx.order(args[0]) > ctx.order(args[1]) {
            args.swap(0, 1);
        }
    } else if let InstructionData::IntCompare { cond, .. } = data {
        if ctx.order(args[0]) > ctx.order(args[1]) {
            args.swap(0, 1);
            *cond = cond.swap_args();
        }
    }
}

/// Simplifies `op(args)` of result type `ty` (operands canonicalized).
pub fn simplify(ctx: &impl Context, data: &InstructionData, ty: Type, args: &Args) -> Option<Term> {
    match simplify_at(ctx, data, ty, args, 0)? {
        // Constants are only tracked for integers of at most 64 bits.
        Term::Const(cty, _) if !is_const_type(cty) => None,
        t => Some(t),
    }
}

fn simplify_at(
    ctx: &impl Context,
    data: &InstructionData,
    ty: Type,
    args: &Args,
    depth: u32,
) -> Option<Term> {
    if let InstructionData::UnaryImm {
        opcode: Opcode::Iconst,
        imm,
    } = data
    {
        return is_const_type(ty).then(|| Term::constant(ty, imm.bits() as u64));
    }
    if is_const_type(ty) || data.opcode() == Opcode::Select {
        if let Some(t) = fold_constants(data, ty, args) {
            return Some(t);
        }
    }
    if let Some(t) = identities(ctx, data, ty, args) {
        return Some(t);
    }
    if depth < MAX_DEPTH {
        return reassociate(ctx, data, ty, args, depth);
    }
    None
}

/// Constant folding when every operand (that matters) is a constant.
fn fold_constants(data: &InstructionData, ty: Type, args: &Args) -> Option<Term> {
    let op = data.opcode();
    if op == Opcode::Select {
        let (_, c) = args[0].as_const()?;
        return Some(if c != 0 { args[1] } else { args[2] });
    }
    let consts: Option<Vec<(Type, u64)>> = args.iter().map(|t| t.as_const()).collect();
    let consts = consts?;
    let w = ty.bits();
    let bin = |f: fn(u64, u64) -> u64| Some(Term::constant(ty, f(consts[0].1, consts[1].1)));
    let shift_amount = || consts[1].1 & u64::from(w - 1);
    let (a, at) = (consts.first().map(|c| c.1), consts.first().map(|c| c.0));
    match op {
        Opcode::Iadd => bin(u64::wrapping_add),
        Opcode::Isub => bin(u64::wrapping_sub),
        Opcode::Imul => bin(u64::wrapping_mul),
        Opcode::Band => bin(|a, b| a & b),
        Opcode::Bor => bin(|a, b| a | b),
        Opcode::Bxor => bin(|a, b| a ^ b),
        Opcode::Bnot => Some(Term::constant(ty, !a?)),
        Opcode::Ineg => Some(Term::constant(ty, a?.wrapping_neg())),
        Opcode::Iabs => Some(Term::constant(ty, sext(ty, a?).wrapping_abs() as u64)),
        Opcode::Ishl => Some(Term::constant(ty, consts[0].1 << shift_amount())),
        Opcode::Ushr => Some(Term::constant(ty, consts[0].1 >> shift_amount())),
        Opcode::Sshr => Some(Term::constant(
            ty,
            (sext(ty, consts[0].1) >> shift_amount()) as u64,
        )),
        Opcode::Rotl | Opcode::Rotr => {
            let (x, n) = (consts[0].1, shift_amount() as u32);
            let r = if n == 0 {
                x
            } else if op == Opcode::Rotl {
                (x << n) | (x >> (w - n))
            } else {
                (x >> n) | (x << (w - n))
            };
            Some(Term::constant(ty, r))
        }
        Opcode::Umin => bin(u64::min),
        Opcode::Umax => bin(u64::max),
        Opcode::Smin => Some(Term::constant(
            ty,
            sext(ty, consts[0].1).min(sext(ty, consts[1].1)) as u64,
        )),
        Opcode::Smax => Some(Term::constant(
            ty,
            sext(ty, consts[0].1).max(sext(ty, consts[1].1)) as u64,
        )),
        Opcode::Udiv | Opcode::Urem => {
            let (x, y) = (consts[0].1, consts[1].1);
            if y == 0 {
                return None; // traps: leave it to run time
            }
            Some(Term::constant(
                ty,
                if op == Opcode::Udiv { x / y } else { x % y },
            ))
        }
        Opcode::Sdiv | Opcode::Srem => {
            let (x, y) = (sext(ty, consts[0].1), sext(ty, consts[1].1));
            let min = sext(ty, 1u64 << (w - 1));
            if y == 0 || (x == min && y == -1) {
                return None; // traps (or is target-defined): never folded
            }
            Some(Term::constant(
                ty,
                if op == Opcode::Sdiv {
                    x.wrapping_div(y)
                } else {
                    x.wrapping_rem(y)
                } as u64,
            ))
        }
        Opcode::Umulhi => Some(Term::constant(
            ty,
            ((u128::from(consts[0].1) * u128::from(consts[1].1)) >> w) as u64,
        )),
        Opcode::Smulhi => {
            let p = i128::from(sext(ty, consts[0].1)) * i128::from(sext(ty, consts[1].1));
            Some(Term::constant(ty, (p >> w) as u64))
        }
        Opcode::Clz => Some(Term::constant(
            ty,
            u64::from((a? << (64 - w)).leading_zeros().min(w)),
        )),
        Opcode::Ctz => Some(Term::constant(
            ty,
            u64::from(if a? == 0 { w } else { a?.trailing_zeros() }),
        )),
        Opcode::Popcnt => Some(Term::constant(ty, u64::from(a?.count_ones()))),
        Opcode::Bmask => Some(Term::constant(ty, if a? != 0 { u64::MAX } else { 0 })),
        Opcode::Uextend => Some(Term::constant(ty, a?)),
        Opcode::Sextend => Some(Term::constant(ty, sext(at?, a?) as u64)),
        Opcode::Ireduce => Some(Term::constant(ty, a?)),
        Opcode::Icmp => {
            let InstructionData::IntCompare { cond, .. } = data else {
                return None;
            };
            let t = consts[0].0;
            Some(Term::constant(
                ty,
                u64::from(compare(*cond, t, consts[0].1, consts[1].1)),
            ))
        }
        _ => None,
    }
}

fn compare(cond: IntCC, ty: Type, a: u64, b: u64) -> bool {
    let (sa, sb) = (sext(ty, a), sext(ty, b));
    match cond {
        IntCC::Equal => a == b,
        IntCC::NotEqual => a != b,
        IntCC::SignedLessThan => sa < sb,
        IntCC::SignedGreaterThanOrEqual => sa >= sb,
        IntCC::SignedGreaterThan => sa > sb,
        IntCC::SignedLessThanOrEqual => sa <= sb,
        IntCC::UnsignedLessThan => a < b,
        IntCC::UnsignedGreaterThanOrEqual => a >= b,
        IntCC::UnsignedGreaterThan => a > b,
        IntCC::UnsignedLessThanOrEqual => a <= b,
    }
}

fn is_const(t: Term, v: u64) -> bool {
    matches!(t, Term::Const(ty, c) if c == mask(ty, v))
}

fn all_ones(t: Term) -> bool {
    is_const(t, u64::MAX)
}

/// Identities, absorbing elements and `x op x` rules (operands canonical:
/// a constant operand of a commutative op is first).
fn identities(ctx: &impl Context, data: &InstructionData, ty: Type, args: &Args) -> Option<Term> {
    let op = data.opcode();
    let zero = || Term::constant(ty, 0);
    match (op, args.as_slice()) {
        (Opcode::Iadd | Opcode::Bor | Opcode::Bxor, &[a, b]) if is_const(a, 0) => Some(b),
        (
            Opcode::Isub | Opcode::Ishl | Opcode::Ushr | Opcode::Sshr | Opcode::Rotl | Opcode::Rotr,
            &[a, b],
        ) if shift_or_sub_by_zero(op, ty, b) => Some(a),
        (Opcode::Ishl | Opcode::Ushr | Opcode::Sshr | Opcode::Rotl | Opcode::Rotr, &[a, _])
            if is_const(a, 0) =>
        {
            Some(a)
        }
        (Opcode::Isub | Opcode::Bxor, &[a, b]) if a == b => Some(zero()),
        (Opcode::Imul, &[a, b]) if is_const(a, 1) => Some(b),
        (Opcode::Imul | Opcode::Band, &[a, _]) if is_const(a, 0) => Some(a),
        (Opcode::Band, &[a, b]) if all_ones(a) => Some(b),
        (Opcode::Bor, &[a, _]) if all_ones(a) => Some(a),
        (
            Opcode::Band | Opcode::Bor | Opcode::Umin | Opcode::Umax | Opcode::Smin | Opcode::Smax,
            &[a, b],
        ) if a == b => Some(a),
        (Opcode::Udiv | Opcode::Sdiv, &[a, b]) if is_const(b, 1) => Some(a),
        (Opcode::Urem | Opcode::Srem, &[_, b]) if is_const(b, 1) => Some(zero()),
        (Opcode::Icmp, &[a, b]) if a == b => {
            let InstructionData::IntCompare { cond, .. } = data else {
                return None;
            };
            let reflexive = matches!(
                cond,
                IntCC::Equal
                    | IntCC::SignedLessThanOrEqual
                    | IntCC::SignedGreaterThanOrEqual
                    | IntCC::UnsignedLessThanOrEqual
                    | IntCC::UnsignedGreaterThanOrEqual
            );
            Some(Term::constant(ty, u64::from(reflexive)))
        }
        (Opcode::Select, &[_, x, y]) if x == y => Some(x),
        (Opcode::Bnot | Opcode::Ineg, &[a]) => match ctx.key_of(a) {
            Some(Key::Op {
                data: inner,
                args: inner_args,
                ..
            }) if inner.opcode() == op => Some(inner_args[0]),
            _ => None,
        },
        (Opcode::Ireduce, &[a]) => match ctx.key_of(a) {
            Some(Key::Op {
                data: inner,
                args: inner_args,
                ..
            }) if matches!(inner.opcode(), Opcode::Uextend | Opcode::Sextend)
                && term_type(ctx, inner_args[0]) == Some(ty) =>
            {
                Some(inner_args[0])
            }
            _ => None,
        },
        _ => None,
    }
}

fn shift_or_sub_by_zero(op: Opcode, ty: Type, b: Term) -> bool {
    match (op, b.as_const()) {
        (Opcode::Isub, _) => is_const(b, 0),
        (_, Some((_, c))) => c & u64::from(ty.bits().max(1) - 1) == 0 && is_const_type(ty),
        _ => false,
    }
}

/// The type of a term, when the context can tell (constants, and leaders
/// whose key is known).
fn term_type(ctx: &impl Context, t: Term) -> Option<Type> {
    match t {
        Term::Const(ty, _) => Some(ty),
        _ => match ctx.key_of(t)? {
            Key::Op { ty, .. } => Some(*ty),
            Key::Phi { .. } => None,
        },
    }
}

/// Re-association through operand keys; only existing results are accepted.
fn reassociate(
    ctx: &impl Context,
    data: &InstructionData,
    ty: Type,
    args: &Args,
    depth: u32,
) -> Option<Term> {
    let op = data.opcode();
    let inner = |t: Term| match ctx.key_of(t) {
        Some(Key::Op { data, args, .. }) => Some((data.opcode(), args.clone(), *data)),
        _ => None,
    };
    match (op, args.as_slice()) {
        // (x + y) - y = x, (x + y) - x = y
        (Opcode::Isub, &[a, b]) => {
            let (iop, iargs, _) = inner(a)?;
            if iop == Opcode::Iadd {
                if iargs[1] == b {
                    return Some(iargs[0]);
                }
                if iargs[0] == b {
                    return Some(iargs[1]);
                }
            }
            None
        }
        (Opcode::Iadd, &[a, b]) => {
            // (x - y) + y = x, in either operand order.
            for (s, other) in [(a, b), (b, a)] {
                if let Some((Opcode::Isub, iargs, _)) = inner(s) {
                    if iargs[1] == other {
                        return Some(iargs[0]);
                    }
                }
            }
            // c2 + (c1 + x) = (c1 + c2) + x, if that class exists.
            if let (Some((_, c2)), Some((Opcode::Iadd, iargs, idata))) = (a.as_const(), inner(b)) {
                if let Some((_, c1)) = iargs[0].as_const() {
                    let folded: Args = [Term::constant(ty, c1.wrapping_add(c2)), iargs[1]]
                        .into_iter()
                        .collect();
                    return existing(ctx, idata, ty, folded, depth);
                }
            }
            None
        }
        // (x ^ y) ^ y = x
        (Opcode::Bxor, &[a, b]) => {
            for (s, other) in [(a, b), (b, a)] {
                if let Some((Opcode::Bxor, iargs, _)) = inner(s) {
                    if iargs[1] == other {
                        return Some(iargs[0]);
                    }
                    if iargs[0] == other {
                        return Some(iargs[1]);
                    }
                }
            }
            None
        }
        // Masks: M & (c | z) = M & z when c & M = 0; M & (M2 & z) = M2 & z when M2 & M = M2.
        (Opcode::Band, &[a, b]) => {
            let (_, m) = a.as_const()?;
            let (iop, iargs, _) = inner(b)?;
            let (_, c) = iargs[0].as_const()?;
            match iop {
                Opcode::Bor if c & m == 0 => {
                    let narrowed: Args = [a, iargs[1]].into_iter().collect();
                    existing(ctx, *data, ty, narrowed, depth)
                }
                Opcode::Band if c & m == c => Some(b),
                _ => None,
            }
        }
        _ => None,
    }
}

/// The term of `op(args)` if it simplifies or already exists in the table.
fn existing(
    ctx: &impl Context,
    data: InstructionData,
    ty: Type,
    args: Args,
    depth: u32,
) -> Option<Term> {
    if let Some(t) = simplify_at(ctx, &data, ty, &args, depth + 1) {
        return Some(t);
    }
    let mut data = data;
    let mut args = args;
    canonicalize(ctx, &mut data, &mut args);
    ctx.lookup(&Key::Op { data, ty, args })
}

#[cfg(test)]
mod tests {
    use super::*;
    use cranelift_codegen::entity::EntityRef;
    use cranelift_codegen::ir::{types, Value};

    struct NoKeys;
    impl Context for NoKeys {
        fn key_of(&self, _: Term) -> Option<&Key> {
            None
        }
        fn lookup(&self, _: &Key) -> Option<Term> {
            None
        }
        fn order(&self, t: Term) -> u64 {
            match t {
                Term::Const(..) => 0,
                _ => 1,
            }
        }
    }

    fn bin(op: Opcode) -> InstructionData {
        InstructionData::Binary {
            opcode: op,
            args: [Value::new(0); 2],
        }
    }

    fn c(ty: Type, v: i64) -> Term {
        Term::constant(ty, v as u64)
    }

    #[test]
    fn folds_wrapping_arithmetic() {
        let args: Args = [c(types::I8, 200), c(types::I8, 100)].into_iter().collect();
        assert_eq!(
            simplify(&NoKeys, &bin(Opcode::Iadd), types::I8, &args),
            Some(c(types::I8, 44))
        );
        let args: Args = [c(types::I32, i32::MIN as i64), c(types::I32, -1)]
            .into_iter()
            .collect();
        assert_eq!(
            simplify(&NoKeys, &bin(Opcode::Sdiv), types::I32, &args),
            None,
            "MIN / -1 must trap at run time"
        );
        let args: Args = [c(types::I64, 7), c(types::I64, 0)].into_iter().collect();
        assert_eq!(
            simplify(&NoKeys, &bin(Opcode::Udiv), types::I64, &args),
            None,
            "x / 0 must trap at run time"
        );
        let args: Args = [c(types::I64, -7), c(types::I64, 2)].into_iter().collect();
        assert_eq!(
            simplify(&NoKeys, &bin(Opcode::Srem), types::I64, &args),
            Some(c(types::I64, -1))
        );
    }

    #[test]
    fn shifts_mask_their_amount() {
        let args: Args = [c(types::I32, 1), c(types::I32, 33)].into_iter().collect();
        assert_eq!(
            simplify(&NoKeys, &bin(Opcode::Ishl), types::I32, &args),
            Some(c(types::I32, 2))
        );
        let args: Args = [c(types::I8, -128), c(types::I8, 7)].into_iter().collect();
        assert_eq!(
            simplify(&NoKeys, &bin(Opcode::Sshr), types::I8, &args),
            Some(c(types::I8, -1))
        );
    }

    #[test]
    fn identities_return_existing_terms() {
        let x = Term::Val(Value::new(3));
        let args: Args = [c(types::I64, 0), x].into_iter().collect();
        assert_eq!(
            simplify(&NoKeys, &bin(Opcode::Iadd), types::I64, &args),
            Some(x)
        );
        let args: Args = [x, x].into_iter().collect();
        assert_eq!(
            simplify(&NoKeys, &bin(Opcode::Isub), types::I64, &args),
            Some(c(types::I64, 0))
        );
        assert_eq!(
            simplify(&NoKeys, &bin(Opcode::Band), types::I64, &args),
            Some(x)
        );
    }
}
