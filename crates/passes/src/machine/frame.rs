//! Frame instructions: what saves and restores callee-saved registers and
//! sets up or tears down a stack frame, as Cranelift and clang emit them
//! on aarch64.
//!
//! A prologue stores callee-saved registers (`x19`–`x30`, `v8`–`v15`,
//! AAPCS64; Cranelift's `tail` convention preserves the same) to the stack
//! and moves `sp` and `x29`; an epilogue loads them back and moves `sp`
//! again. Whether a store is a save depends on where it is (the caller's
//! value must still be in the register: [`super::roles`] asks that none
//! was written before); the shapes themselves are decided here, from the
//! decoder's [`Shape`] and [`Effects`]. Used by the role report and by the
//! pass that shares epilogues ([`crate::epilogue`]).

use super::decode::{self, x_range, Class, Effects, Form, RegSet, Shape, NZCV, SP};
use super::lift::Inst;

/// Registers a callee must preserve.
pub const CALLEE_SAVED: RegSet = x_range(19, 30)
    | decode::v(8)
    | decode::v(9)
    | decode::v(10)
    | decode::v(11)
    | decode::v(12)
    | decode::v(13)
    | decode::v(14)
    | decode::v(15);

/// The registers a store to the stack (`sp`-based) writes to memory, if
/// they are all callee-saved: a save, when the caller's values are still
/// in them.
pub fn stored_callee_saved(shape: Shape, effects: &Effects) -> Option<RegSet> {
    let stored = effects.uses & !SP;
    (shape.class == Class::Store && shape.sp_based && stored != 0 && stored & !CALLEE_SAVED == 0)
        .then_some(stored)
}

/// The registers a load from the stack (`sp`-based) writes, if they are
/// all callee-saved: a restore, when nothing reads them before the
/// function returns.
pub fn loaded_callee_saved(shape: Shape, effects: &Effects) -> Option<RegSet> {
    let loaded = effects.defs & !SP & !NZCV;
    (shape.class == Class::Load && shape.sp_based && loaded != 0 && loaded & !CALLEE_SAVED == 0)
        .then_some(loaded)
}

/// Whether `inst` writes `sp` or `x29` (frame set-up or tear-down; calls
/// aside, which only mention them).
pub fn adjusts_frame(inst: &Inst) -> bool {
    inst.effects.writes_frame && !matches!(inst.form, Form::Bl | Form::Blr { .. })
}
