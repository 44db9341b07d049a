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
//! [ABCD]'s proof that `for` and counting `while` loops need.
//!
//! # Chains and counting down
//!
//! Two more of ABCD's shapes, each a short path in its inequality graph:
//!
//! - A **chain** `a < m` (or `a ≤ m`; signed with `a ≥ 0`, or unsigned)
//!   known in the block, and `m <u n` decided in turn, give `a <u n`:
//!   `xs[j]` for `j < i` under `i < len(xs)` (a triangular loop), `xs[0]`
//!   under `0 < i < len(xs)`. At most `MAX_CHAIN` links are followed.
//! - A **count-down** loop counter `p` (`let mut i = len(xs) - 1; while
//!   i >= 0 { xs[i]; i -= 1 }`) keeps `p <u n ∨ p <s 0` at its header, with
//!   `n` defined before the loop: `n + k` (`k < 0`) is below `n`, or wraps
//!   to a negative value when `n <u |k|`; `p - c` (`0 ≤ c ≤ 2^62`) computed
//!   where `p ≥ 0` is at most `p`, or negative, and cannot wrap. Where the
//!   loop test says `p ≥ 0` (`p >s c` or `p ≥s c` for a constant `c ≥ 0`
//!   read as a lower bound in that block), `p <u n` follows. The invariant
//!   is over the wrapping arithmetic, so nothing is assumed of `n` (a
//!   length is never negative, but CLIF does not say so).
//!
//! # Affine indices
//!
//! ABCD's difference constraints (`x ≤ y + c`) do not cover strided
//! indices: `xs[4*i + 3]` under `i < n/4` needs a product. An index is read
//! as `a·x + b` ([`Affine`], constants `a ≥ 1`, `b`, over the type's
//! wrapping arithmetic, through `iadd`/`isub` of constants, `imul` by a
//! positive constant and `ishl`), and a loop bound `x <s m` as a [`Cover`]
//! of the length `n`: constants `c ≥ 1`, `d` with `c·m + d ≤ n` (unsigned)
//! whenever `1 ≤ m < 2^(w−1)` in the type's `w` bits (`x <s m` and `x ≥ 0`
//! give that) — `m = n` (`c = 1`), `m = n /s k` or `n >>s s` (`c = k`,
//! `2^s`, and then what covers the dividend: `n > 0` follows from
//! `m ≥ 1`), `m = n /u k` or `n >>u s`, `m = n − k` (`d = k`, `k` read
//! signed: `n = m + k` exactly, as `m + k < 2^w`). Then with `x ≥ L`:
//!
//! ```text
//! 0 ≤ a·L + b ≤ a·x + b ≤ a·(m − 1) + b ≤ c·(m − 1) + b ≤ n − d − c + b < n
//! ```
//!
//! when `a·L + b ≥ 0`, `a ≤ c` and `b < c + d` ([`Affine::below`]). Every
//! step is over the integers: the true value of `a·x + b` lies in `[0, n)`,
//! so the wrapped one is the same, and `a·x + b <u n` holds. So
//! `xs[4*i + k]` (`k < 4`) under `i < len(xs) / 4`, `xs[2*i + 1]` under
//! `i < len(xs) / 2` and `xs[i + 1]` under `i < len(xs) - 1` need no check.

//! # Cost
//!
//! A query walks at most `MAX_EQ_SCOPES` dominating blocks, each with one
//! relation; a lower bound looks at most `MAX_SIGN_DEPTH` definitions deep and
//! through one loop header (each of its incoming edges). A chain or a
//! count-down decides at most `MAX_CHAIN` comparisons in turn, each
//! walking the same scopes (or a header's edges). So deciding a
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
    pub fn swapped(self) -> Relation {
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

/// A value as `a·x + b` in its type's wrapping arithmetic (`a ≥ 1`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Affine {
    pub x: Term,
    pub a: i128,
    pub b: i128,
}

/// What a bound `m` of a value says about `n`: `c·m + d ≤ n` (unsigned)
/// whenever `1 ≤ m < 2^(w−1)` (`c ≥ 1`; see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cover {
    pub n: Term,
    pub c: i128,
    pub d: i128,
}

/// Coefficients beyond this are not followed (no product overflows `i128`).
pub const MAX_COEFFICIENT: i128 = 1 << 62;

impl Affine {
    /// `x` itself.
    pub fn of(x: Term) -> Affine {
        Affine { x, a: 1, b: 0 }
    }

    /// `self + k`, if the constants stay small.
    pub fn plus(self, k: i128) -> Option<Affine> {
        let b = self
            .b
            .checked_add(k)
            .filter(|b| b.abs() <= MAX_COEFFICIENT)?;
        Some(Affine { b, ..self })
    }

    /// `self · k` for `k ≥ 1`, if the constants stay small.
    pub fn times(self, k: i128) -> Option<Affine> {
        let small = |v: &i128| v.abs() <= MAX_COEFFICIENT;
        if k < 1 {
            return None;
        }
        let a = self.a.checked_mul(k).filter(small)?;
        let b = self.b.checked_mul(k).filter(small)?;
        Some(Affine { x: self.x, a, b })
    }

    /// Whether `a·x + b <u n` follows from `low ≤ x`, `x <s m` and the
    /// cover `c·m + d ≤ n` of `m` (module doc, "Affine indices").
    pub fn below(self, low: i128, cover: Cover) -> bool {
        low >= 0
            && self.a >= 1
            && self.a * low + self.b >= 0
            && self.a <= cover.c
            && self.b < cover.c + cover.d
    }
}

impl Cover {
    /// `m` covers itself: `m ≤ m`.
    pub fn of(m: Term) -> Cover {
        Cover { n: m, c: 1, d: 0 }
    }

    /// What covers the dividend `p` of `m = p / k` (`p ≥ k·m`) covers `m`
    /// with `k` times the factor.
    pub fn scaled(self, k: i128) -> Option<Cover> {
        let c = self
            .c
            .checked_mul(k)
            .filter(|&c| (1..=MAX_COEFFICIENT).contains(&c))?;
        Some(Cover { c, ..self })
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

    /// Brute force over small widths: whenever the premises hold for every
    /// `x` in `[low, m)`, `a·x + b` is below `n` (no false proof).
    #[test]
    fn affine_below_is_sound_on_small_numbers() {
        let x = v(1);
        let n = v(2);
        for a in 1..5i128 {
            for b in -4..6i128 {
                for c in 1..5i128 {
                    for d in -2..4i128 {
                        for low in 0..3i128 {
                            let idx = Affine { x, a, b };
                            let cover = Cover { n, c, d };
                            if !idx.below(low, cover) {
                                continue;
                            }
                            for m in 1..12i128 {
                                let n_val = c * m + d;
                                for nv in n_val.max(0)..n_val.max(0) + 3 {
                                    for xv in low..m {
                                        let i = a * xv + b;
                                        assert!(
                                            0 <= i && i < nv,
                                            "{a}x+{b}, x in [{low},{m}), n={nv} >= {c}m+{d}"
                                        );
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn affine_below_cases() {
        let (x, n) = (v(1), v(2));
        // murmur3: `data[4*i + 3]` under `i < n / 4`.
        let quarter = Cover::of(n).scaled(4).unwrap();
        assert!(Affine { x, a: 4, b: 3 }.below(0, quarter));
        assert!(!Affine { x, a: 4, b: 4 }.below(0, quarter));
        assert!(!Affine { x, a: 5, b: 0 }.below(0, quarter));
        // `xs[i + 1]` under `i < n - 1`, not under `i < n`.
        let minus_one = Cover { n, c: 1, d: 1 };
        assert!(Affine::of(x).plus(1).unwrap().below(0, minus_one));
        assert!(!Affine::of(x).plus(1).unwrap().below(0, Cover::of(n)));
        // `xs[2*i - 1]` needs `i ≥ 1`.
        let half = Cover::of(n).scaled(2).unwrap();
        let odd_below = Affine::of(x).times(2).unwrap().plus(-1).unwrap();
        assert!(!odd_below.below(0, half));
        assert!(odd_below.below(1, half));
        // Coefficients stay bounded.
        assert!(Affine::of(x).times(MAX_COEFFICIENT * 2).is_none());
        assert!(Cover::of(n).scaled(0).is_none());
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
