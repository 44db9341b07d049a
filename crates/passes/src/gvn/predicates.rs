//! Relations known from dominating branches, and what they imply
//! ([BRITO] §4.3.1 predicates, extended from equalities to orderings, for
//! the null and bounds checks that [ABCD] removes with an inequality graph;
//! references in docs/DESIGN.md).
//!
//! A block whose only reachable incoming edge is an edge of `brif c` knows
//! the relation `c` states on that edge: `a cc b` on the true edge of
//! `brif (icmp cc a b)`, its complement on the false edge, and `c ≠ 0` on the
//! true edge of a branch on any other value `c`. So do the blocks it
//! dominates. A comparison is then decided when a known relation over the
//! same two terms implies it or its complement ([`Relation::decides`]).
//!
//! # Notation
//!
//! A condition code is read as the set of outcomes it accepts among
//! `<`, `=`, `>` ([`outcomes`]), in one of two orders: signed or unsigned
//! (`=` and `≠` are both). A relation `a r b` implies `a c b` when the two
//! are in the same order and `outcomes(r) ⊆ outcomes(c)`, and refutes it
//! when `outcomes(r) ∩ outcomes(c) = ∅`. A signed `a <s b` or `a ≤s b` with
//! `a ≥ 0` also holds unsigned (then `b ≥ 0` too, and both orders agree on
//! non-negative values): this is how a `for` loop's `i <s n`, with `i`
//! counting up from 0, proves the bounds check `i <u len` (the check is one
//! unsigned compare, `0 ≤ i < len`).
//!
//! Everything here is a pure function of condition codes and terms; the
//! analysis ([`super::analysis`]) finds the relations and the lower bounds
//! of values. Lower bounds come from constants, `uextend` (0), `band` with a
//! non-negative operand and `ushr` by a non-zero amount (0), `sextend`, and
//! block parameters by induction: a loop counter is at least `L`, the least
//! bound of the values entering it that do not depend on it, when every
//! value entering it is at least `L` assuming the counter is. `x + 1` keeps
//! `x`'s bound plus one where `x <s y` holds for some `y` (so it cannot
//! overflow); `x - k` lowers it by `k` while it stays above the type's least
//! value. And `x - k` (`k > 0`) with `x - k ≥ 0` is below whatever `x` is
//! below (unsigned): `xs[i - 1]` for `i` from 1. This is the part of
//! [ABCD]'s proof that `for` and counting `while` loops need; ABCD's general
//! difference constraints (`j = 4*i`, `i < n/4`) are not attempted.

//! # Cost
//!
//! A query walks at most `MAX_EQ_SCOPES` dominating blocks, each with one
//! relation; a lower bound looks at most `MAX_SIGN_DEPTH` definitions deep and
//! through one loop header (each of its incoming edges). So deciding a
//! comparison costs a constant times a loop header's predecessor count, and
//! a GVN pass stays linear in practice.

use cranelift_codegen::ir::condcodes::{CondCode, IntCC};

use super::expr::Term;

/// A relation `a cc b` known to hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Relation {
    pub cc: IntCC,
    pub a: Term,
    pub b: Term,
}

const LT: u8 = 1;
const EQ: u8 = 2;
const GT: u8 = 4;

/// Which order a condition code compares in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Order {
    Signed,
    Unsigned,
    /// `=` and `≠`: the same in both orders.
    Either,
}

/// The outcomes `cc` accepts and the order it compares in.
fn outcomes(cc: IntCC) -> (u8, Order) {
    use IntCC::*;
    match cc {
        Equal => (EQ, Order::Either),
        NotEqual => (LT | GT, Order::Either),
        SignedLessThan => (LT, Order::Signed),
        SignedLessThanOrEqual => (LT | EQ, Order::Signed),
        SignedGreaterThan => (GT, Order::Signed),
        SignedGreaterThanOrEqual => (GT | EQ, Order::Signed),
        UnsignedLessThan => (LT, Order::Unsigned),
        UnsignedLessThanOrEqual => (LT | EQ, Order::Unsigned),
        UnsignedGreaterThan => (GT, Order::Unsigned),
        UnsignedGreaterThanOrEqual => (GT | EQ, Order::Unsigned),
    }
}

/// The unsigned condition code with the same outcomes as signed `cc`.
fn as_unsigned(cc: IntCC) -> IntCC {
    use IntCC::*;
    match cc {
        SignedLessThan => UnsignedLessThan,
        SignedLessThanOrEqual => UnsignedLessThanOrEqual,
        SignedGreaterThan => UnsignedGreaterThan,
        SignedGreaterThanOrEqual => UnsignedGreaterThanOrEqual,
        other => other,
    }
}

impl Relation {
    /// `self` with its operands swapped (`a < b` is `b > a`).
    fn swapped(self) -> Relation {
        Relation {
            cc: self.cc.swap_args(),
            a: self.b,
            b: self.a,
        }
    }

    /// The same relation in the unsigned order, when it holds there: a
    /// signed `a < b` or `a ≤ b` whose smaller side is non-negative
    /// (`nonneg` tells).
    pub fn unsigned_form(self, nonneg: impl Fn(Term) -> bool) -> Option<Relation> {
        use IntCC::*;
        let smaller = match self.cc {
            SignedLessThan | SignedLessThanOrEqual => self.a,
            SignedGreaterThan | SignedGreaterThanOrEqual => self.b,
            _ => return None,
        };
        nonneg(smaller).then(|| Relation {
            cc: as_unsigned(self.cc),
            ..self
        })
    }

    /// Whether `self` decides `a cc b`: `Some(true)` if it implies it,
    /// `Some(false)` if it refutes it, `None` if it says nothing.
    pub fn decides(self, cc: IntCC, a: Term, b: Term) -> Option<bool> {
        let known = if (self.a, self.b) == (a, b) {
            self
        } else if (self.b, self.a) == (a, b) {
            self.swapped()
        } else {
            return None;
        };
        let (have, have_order) = outcomes(known.cc);
        let (want, want_order) = outcomes(cc);
        let same_order =
            have_order == want_order || have_order == Order::Either || want_order == Order::Either;
        // `a = b` decides every comparison of a and b in either order.
        if !same_order && have != EQ {
            return None;
        }
        if have & want == have {
            Some(true)
        } else if have & want == 0 {
            Some(false)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cranelift_codegen::entity::EntityRef;
    use cranelift_codegen::ir::{types, Value};

    fn v(n: usize) -> Term {
        Term::Val(Value::new(n))
    }

    fn rel(cc: IntCC, a: Term, b: Term) -> Relation {
        Relation { cc, a, b }
    }

    #[test]
    fn implication_within_one_order() {
        use IntCC::*;
        let lt = rel(SignedLessThan, v(1), v(2));
        assert_eq!(lt.decides(SignedLessThanOrEqual, v(1), v(2)), Some(true));
        assert_eq!(lt.decides(NotEqual, v(1), v(2)), Some(true));
        assert_eq!(
            lt.decides(SignedGreaterThanOrEqual, v(1), v(2)),
            Some(false)
        );
        assert_eq!(lt.decides(SignedGreaterThan, v(2), v(1)), Some(true));
        assert_eq!(lt.decides(Equal, v(2), v(1)), Some(false));
        // Nothing about other operands, nor across orders.
        assert_eq!(lt.decides(SignedLessThan, v(1), v(3)), None);
        assert_eq!(lt.decides(UnsignedLessThan, v(1), v(2)), None);
        let le = rel(SignedLessThanOrEqual, v(1), v(2));
        assert_eq!(le.decides(SignedLessThan, v(1), v(2)), None);
    }

    #[test]
    fn equality_and_non_zero() {
        use IntCC::*;
        let zero = Term::constant(types::I64, 0);
        let nonzero = rel(NotEqual, v(1), zero);
        assert_eq!(nonzero.decides(Equal, v(1), zero), Some(false));
        assert_eq!(nonzero.decides(NotEqual, zero, v(1)), Some(true));
        assert_eq!(nonzero.decides(UnsignedGreaterThan, v(1), zero), None);
        let eq = rel(Equal, v(1), v(2));
        assert_eq!(eq.decides(UnsignedLessThanOrEqual, v(1), v(2)), Some(true));
        assert_eq!(eq.decides(SignedLessThan, v(1), v(2)), Some(false));
    }

    #[test]
    fn signed_to_unsigned_needs_a_non_negative_lower_side() {
        use IntCC::*;
        let lt = rel(SignedLessThan, v(1), v(2));
        assert_eq!(lt.unsigned_form(|_| false), None);
        let ult = lt.unsigned_form(|t| t == v(1)).unwrap();
        // The bounds check `i >=u len` is refuted.
        assert_eq!(
            ult.decides(UnsignedGreaterThanOrEqual, v(1), v(2)),
            Some(false)
        );
        // `b > a` with `a >= 0` works from the other side.
        let gt = rel(SignedGreaterThan, v(2), v(1));
        assert!(gt.unsigned_form(|t| t == v(1)).is_some());
        assert!(gt.unsigned_form(|t| t == v(2)).is_none());
    }
}
