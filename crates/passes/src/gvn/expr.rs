//! Terms (value numbers) and keys (canonical expressions).

use cranelift_codegen::entity::{EntityRef, SecondaryMap};
use cranelift_codegen::ir::{Block, InstructionData, Opcode, Type, Value};
use smallvec::SmallVec;

use super::analysis::MemState;

/// The value number of an SSA value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Term {
    /// Unreachable, or not evaluated yet (the optimistic assumption).
    Bottom,
    /// An integer constant of a type of at most 64 bits; `bits` is
    /// zero-extended from the type's width.
    Const(Type, u64),
    /// The class whose leader is this value.
    Val(Value),
}

impl Term {
    /// A constant of type `ty`, normalized to the type's width.
    pub fn constant(ty: Type, bits: u64) -> Term {
        Term::Const(ty, mask(ty, bits))
    }
    pub fn as_const(self) -> Option<(Type, u64)> {
        match self {
            Term::Const(ty, c) => Some((ty, c)),
            _ => None,
        }
    }
}

/// `bits` truncated to the width of `ty` (types of at most 64 bits).
pub fn mask(ty: Type, bits: u64) -> u64 {
    let w = ty.bits();
    if w >= 64 {
        bits
    } else {
        bits & ((1u64 << w) - 1)
    }
}

/// `bits` (of type `ty`) sign-extended to 64 bits.
pub fn sext(ty: Type, bits: u64) -> i64 {
    let w = ty.bits();
    if w >= 64 {
        bits as i64
    } else {
        let shift = 64 - w;
        ((bits << shift) as i64) >> shift
    }
}

/// Whether constants of this type are tracked as [`Term::Const`].
pub fn is_const_type(ty: Type) -> bool {
    ty.is_int() && ty.bits() <= 64
}

pub type Args = SmallVec<[Term; 3]>;

/// A canonical expression.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Key {
    /// A pure operation: the instruction's data with its value operands
    /// masked (so opcode and immediates count), the result type, and the
    /// operand terms.
    Op {
        data: InstructionData,
        ty: Type,
        args: Args,
    },
    /// A block parameter with distinct incoming terms: one term per incoming
    /// edge of `block` (`⊥` for unreachable edges).
    Phi {
        block: Block,
        args: SmallVec<[Term; 4]>,
    },
}

/// What a load reads: the place and the memory state. Stores write entries of
/// this shape too (store-to-load forwarding, redundant stores).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Place {
    pub opcode: Opcode,
    pub ty: Type,
    pub addr: Term,
    pub offset: i32,
    /// Explicit endianness flag bits (a big-endian load is a different value).
    pub endianness: u8,
    pub mem: MemState,
}

/// The data of a value-numberable instruction with its value operands
/// replaced by a placeholder, or `None` if its format has operands we do not
/// number (value lists, branches, memory).
pub fn masked(data: &InstructionData) -> Option<InstructionData> {
    // A placeholder: the operands are compared as terms, not values.
    let r = Value::new(0);
    let mut d = *data;
    match &mut d {
        InstructionData::Unary { arg, .. } | InstructionData::BinaryImm8 { arg, .. } => *arg = r,
        InstructionData::Binary { args, .. }
        | InstructionData::IntCompare { args, .. }
        | InstructionData::FloatCompare { args, .. }
        | InstructionData::TernaryImm8 { args, .. }
        | InstructionData::Shuffle { args, .. } => *args = [r, r],
        InstructionData::Ternary { args, .. } => *args = [r, r, r],
        InstructionData::UnaryImm { .. }
        | InstructionData::UnaryIeee16 { .. }
        | InstructionData::UnaryIeee32 { .. }
        | InstructionData::UnaryIeee64 { .. }
        | InstructionData::UnaryConst { .. }
        | InstructionData::UnaryGlobalValue { .. }
        | InstructionData::FuncAddr { .. }
        | InstructionData::StackAddr { .. } => {}
        _ => return None,
    }
    Some(d)
}

/// Sort order of a term: `⊥`, then constants, then leaders by the RPO
/// sequence number of their definition (`value_order`).
pub fn term_order(value_order: &SecondaryMap<Value, u32>, t: Term) -> u64 {
    match t {
        Term::Bottom => 0,
        Term::Const(_, c) => 1 + (c >> 1).min(u64::MAX >> 2),
        Term::Val(v) => (1u64 << 62) + u64::from(value_order[v]),
    }
}

/// Whether operand order does not matter.
pub fn is_commutative(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::Iadd
            | Opcode::Imul
            | Opcode::Band
            | Opcode::Bor
            | Opcode::Bxor
            | Opcode::Umin
            | Opcode::Umax
            | Opcode::Smin
            | Opcode::Smax
            | Opcode::Umulhi
            | Opcode::Smulhi
            | Opcode::AvgRound
    )
}
