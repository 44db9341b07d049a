//! Frame-pointer omission and frame packing on aarch64: a `mov x29, sp`
//! nothing reads goes, and where `x29` is then never written, `x30` takes
//! the frame record's slot beside an odd callee-saved register.
//!
//! AAPCS64 ("The Frame Pointer") lets a platform choose whether
//! `x29` must always address a valid frame record; where it need not, `x29`
//! is an ordinary callee-saved register. parec's code emits no unwind
//! information (`unwind_info=false`) and its runtime walks no frame chain,
//! so nothing needs the records Cranelift sets up in every function with a
//! frame: `stp x29, x30, [sp, #-16]!; mov x29, sp` (measured on bench/ at
//! `-Oz --two-rounds`: 688 `mov x29, sp`). This is GCC's and LLVM's
//! `-fomit-frame-pointer` (LLVM: `AArch64FrameLowering::hasFP` false, so
//! `x30` is spilled with the other callee-saved registers,
//! `computeCalleeSaveRegisterPairs`), done on the machine code after
//! register allocation because Cranelift 0.135 has no such option. Unlike
//! LLVM, the pass keeps `x29` saved where it cannot pack (a register pair
//! costs the same as `x30` alone), and it never allocates `x29` to values.
//!
//! # Notation
//!
//! - The **frame record** is `stp x29, x30, [sp, #-16]!` (its **save**),
//!   `ldp x29, x30, [sp], #16` (its **restore**); a **set-up** is `mov
//!   x29, sp`.
//! - A **push** is `str xN, [sp, #-16]!` / `stp ..., [sp, #-16]!`, a **pop**
//!   `ldr xN, [sp], #16` / `ldp ..., [sp], #16`; `xN` is the **odd
//!   register** when its push is alone (Cranelift pushes the odd one of
//!   `x19`–`x28` first, right after the frame record).
//! - The **depth** `d` of an instruction is `sp` before it minus `sp` at the
//!   function's entry (a known constant, or the function is not packed).
//! - An **exit** is a `ret` or a tail jump (`b` to a symbol, `br` that is no
//!   jump-table dispatch).
//!
//! # Algorithm
//!
//! Per function that holds a `mov x29, sp` word:
//!
//! 1. *Omit.* Lift ([`crate::machine::lift`]) and compute liveness
//!    ([`crate::machine::liveness`]). A set-up after which `x29` is dead is
//!    deleted. Exits read `x29` (a callee-saved register) and calls do not,
//!    so `x29` is dead exactly when every path reloads it (the frame
//!    record's restore, or Cranelift's tail-call frame shuffle `ldur x29,
//!    [sp, #16]`) before anything reads it.
//! 2. *Pack*, when the function is, after step 1: the save as its first
//!    item, the odd register's push `str xN, [sp, #-16]!` right after it,
//!    and
//!    - no instruction that may write `x29` but the restores, each right
//!      after `ldr xN, [sp], #16` (the same `N`) and right before an exit,
//!      and every exit right after a restore (every epilogue has the one
//!      shape);
//!    - `sp` written only by pushes, pops, `sub sp, sp, #imm` and `add sp,
//!      sp, #imm`, with one depth at every instruction whatever the path,
//!      and depth 0 at every exit;
//!    - every other instruction that reads `sp` a call, an exit, or a load
//!      or store at an immediate offset `off` from `sp` (no writeback) of
//!      `size` bytes with `d + off + size ≤ -32`: below the odd register's
//!      slot, in the part of the frame that moves with `sp`. Incoming stack
//!      arguments (at `d + off ≥ 0`), the frame record and `sp` copied into
//!      a register are refused;
//!    - neither the odd push nor a restore a branch target.
//!
//!    A function without exits (it ends in calls that do not return and
//!    `udf`, as the runtime's `pare_exit`) has no restore: its prologue
//!    alone is packed.
//!
//!    Then the save and the push become `stp xN, x30, [sp, #-16]!` and
//!    every `ldr xN, [sp], #16; ldp x29, x30, [sp], #16` becomes `ldp xN,
//!    x30, [sp], #16`.
//! 3. Lay the function out again; keep it if it is smaller.
//!
//! # Invariants
//!
//! - Step 1 deletes only a write of a dead register (liveness is
//!   conservative: unknown means live); it reads nothing else.
//! - After step 2 the frame is 16 bytes smaller and every depth below the
//!   odd register's slot is 16 bytes shallower; every access the function
//!   makes relative to `sp` is in that part, so it reaches the same datum.
//!   `x29` is never written, so it keeps the caller's value without being
//!   saved; `x30` and `xN` are reloaded from the slot they were stored to
//!   at every exit. Stack alignment stays 16.
//! - A function whose frame is not of the recognised shapes (Cranelift's
//!   tail-call shuffles, stack probes, `sp` arithmetic in the body, stack
//!   arguments) keeps its frame, with at most its dead set-ups gone.
//! - No trap or call-site record moves to another instruction; the
//!   function never grows; the output depends only on the input.
//! - Without this pass (a `--passes` list that leaves out `frame`) every
//!   function keeps Cranelift's frame records, for a profiler or debugger
//!   that walks `x29`.
//!
//! # Cost
//!
//! Functions without a `mov x29, sp` word are not lifted. Otherwise
//! lifting, liveness and layout as every machine pass; the depth analysis
//! is one forward pass over the items (each item's depth is set once).
//! Saves 4 bytes per omitted set-up, and 4 more plus 4 per epilogue where
//! the frame is packed.
//!
//! # Effect
//!
//! On bench/'s 22 executables at `-Oz` (one round, runtime included), 1
//! `mov x29, sp` is left of 654: in vm's `main`, whose unconditional jump
//! to a shared trap path is an exit to liveness (a tail jump reads the
//! callee-saved registers). 240 functions are packed; 413 keep a record,
//! with an even number of saves or none (packing would save nothing) or
//! a frame of another shape. The frame role at `-Oz
//! --two-rounds` went from 19,364 to 14,976 bytes (runtime included).

use std::fmt;

use crate::machine::decode::{Decoder, Form, FP, SP};
use crate::machine::lift::{self, Inst, Item, LiftedFunction};
use crate::machine::{self, cfg, liveness, MachFunction};
use crate::remark::Remark;

/// The pass's name in remarks.
const PASS: &str = "frame";

/// `mov x29, sp`.
const SET_UP: u32 = 0x9100_03FD;
/// `stp x29, x30, [sp, #-16]!`.
const SAVE: u32 = 0xA9BF_7BFD;
/// `ldp x29, x30, [sp], #16`.
const RESTORE: u32 = 0xA8C1_7BFD;

/// `str xN, [sp, #-16]!`.
const fn push_one(n: u32) -> u32 {
    0xF81F_0FE0 | n
}

/// `ldr xN, [sp], #16`.
const fn pop_one(n: u32) -> u32 {
    0xF841_07E0 | n
}

/// `stp xN, x30, [sp, #-16]!`.
const fn push_with_lr(n: u32) -> u32 {
    0xA9BF_7BE0 | n
}

/// `ldp xN, x30, [sp], #16`.
const fn pop_with_lr(n: u32) -> u32 {
    0xA8C1_7BE0 | n
}

/// What the pass did to a module.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FrameStats {
    /// Functions rewritten.
    pub functions: usize,
    /// `mov x29, sp` deleted.
    pub omitted: usize,
    /// Functions whose frame record was packed with the odd register.
    pub packed: usize,
    pub bytes_before: u64,
    pub bytes_after: u64,
}

impl FrameStats {
    pub fn accumulate(&mut self, other: &FrameStats) {
        self.functions += other.functions;
        self.omitted += other.omitted;
        self.packed += other.packed;
        self.bytes_before += other.bytes_before;
        self.bytes_after += other.bytes_after;
    }
}

impl fmt::Display for FrameStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} frame pointers omitted, {} frames packed, in {} functions; code {} -> {} bytes",
            self.omitted, self.packed, self.functions, self.bytes_before, self.bytes_after
        )
    }
}

/// What the pass did to a module: statistics and one remark per function
/// it rewrote or had to leave as it was.
#[derive(Clone, Debug, Default)]
pub struct FrameReport {
    pub stats: FrameStats,
    pub remarks: Vec<Remark>,
}

/// Omits the frame pointers and packs the frames of a module's functions
/// (module doc).
pub fn run(functions: &mut [MachFunction]) -> FrameReport {
    run_decoding(functions, &mut Decoder::new())
}

/// [`run`] with `decoder`, which knows what the module's earlier machine
/// passes decoded (`crate::machine::decode::Decoded`).
pub fn run_decoding(functions: &mut [MachFunction], decoder: &mut Decoder) -> FrameReport {
    let mut report = FrameReport::default();
    let bytes = machine::rewrite_each(functions, |func| {
        rewrite_function(func, decoder, &mut report)
    });
    report.stats.bytes_before = bytes.before;
    report.stats.bytes_after = bytes.after;
    report
}

fn rewrite_function(func: &mut MachFunction, decoder: &mut Decoder, report: &mut FrameReport) {
    if !func.words().any(|w| w == SET_UP) {
        return;
    }
    let lifted = lift::lift(func, decoder);
    if lifted.opaque.is_some() {
        return;
    }
    let (omitted, omitted_count) = omit(&lifted);
    if omitted_count == 0 {
        return;
    }
    let packed = pack(&omitted, decoder);
    let rewritten = packed.as_ref().unwrap_or(&omitted);
    match lift::relaid(func, &lifted, rewritten) {
        Some(code) if code.bytes.len() < func.bytes.len() => {
            let saved = func.bytes.len() - code.bytes.len();
            let (decision, reason) = if packed.is_some() {
                (
                    "packed",
                    "frame pointer omitted, x30 saved beside the odd register",
                )
            } else {
                ("omitted", "frame pointer omitted")
            };
            report.remarks.push(
                Remark::passed(PASS, decision, &func.name, reason)
                    .bytes(saved as i64)
                    .count("functions", 1)
                    .count("omitted", omitted_count as u64)
                    .count("packed", u64::from(packed.is_some())),
            );
            *func = code;
            report.stats.accumulate(&FrameStats {
                functions: 1,
                omitted: omitted_count,
                packed: usize::from(packed.is_some()),
                ..FrameStats::default()
            });
        }
        Some(_) => {}
        None => report.remarks.push(Remark::missed(
            PASS,
            "kept-original",
            &func.name,
            "a branch of the rewritten code is out of range",
        )),
    }
}

/// `func` without its set-ups after which `x29` is dead (step 1), and how
/// many went. A set-up a branch targets stays (deleting it would need the
/// branch redirected; Cranelift never emits one).
fn omit(func: &LiftedFunction) -> (LiftedFunction, usize) {
    let live = liveness::compute(func);
    let targeted = func.targeted_labels();
    let mut out = LiftedFunction {
        items: Vec::with_capacity(func.items.len()),
        ..func.clone()
    };
    let mut count = 0;
    for (i, (label, item)) in func.items.iter().enumerate() {
        let dead_set_up = matches!(item, Item::Inst(inst) if inst.word == SET_UP
            && inst.trap.is_none()
            && !inst.call_site)
            && live.live_out[i] & FP == 0
            && !targeted.contains(label);
        if dead_set_up {
            count += 1;
        } else {
            out.items.push((*label, item.clone()));
        }
    }
    (out, count)
}

/// `func` (step 1 done) with its frame record packed with the odd
/// register (step 2), or `None` if its frame is not of the recognised
/// shapes.
fn pack(func: &LiftedFunction, decoder: &mut Decoder) -> Option<LiftedFunction> {
    let inst = |i: usize| match func.items.get(i) {
        Some((_, Item::Inst(inst))) => Some(inst),
        _ => None,
    };
    if inst(0)?.word != SAVE {
        return None;
    }
    let odd = inst(1)?;
    let n = (19..=28).find(|&n| odd.word == push_one(n))?;
    let targeted = func.targeted_labels();
    if targeted.contains(&func.items[0].0) || targeted.contains(&func.items[1].0) {
        return None;
    }
    let depths = depths(func)?;
    let depth_at = |i: usize| depths.get(i).copied().flatten();
    // The restores to merge, by item index; each with its odd pop before.
    let mut restores = Vec::new();
    for (i, (label, item)) in func.items.iter().enumerate() {
        let Item::Inst(this) = item else { continue };
        if this.word != RESTORE {
            continue;
        }
        let merges = inst(i.wrapping_sub(1)).is_some_and(|p| p.word == pop_one(n))
            && inst(i + 1).is_some_and(is_exit)
            && !targeted.contains(label)
            && depth_at(i.wrapping_sub(1)) == Some(-32)
            && depth_at(i) == Some(-16);
        if !merges {
            return None;
        }
        restores.push(i);
    }
    let rewritten = |i: usize| i <= 1 || restores.contains(&i) || restores.contains(&(i + 1));
    for (i, (_, item)) in func.items.iter().enumerate() {
        let Item::Inst(this) = item else { continue };
        if rewritten(i) {
            continue;
        }
        let d = depth_at(i)?;
        let after_restore = inst(i.wrapping_sub(1)).is_some_and(|p| p.word == RESTORE);
        let fine = (!is_exit(this) || after_restore)
            && this.effects.defs & FP == 0
            && touches_sp_safely(this, d, decoder);
        if !fine {
            return None;
        }
    }
    let mut out = LiftedFunction {
        items: Vec::with_capacity(func.items.len()),
        ..func.clone()
    };
    for (i, (label, item)) in func.items.iter().enumerate() {
        match i {
            0 => out
                .items
                .push((*label, with_word(item, push_with_lr(n), decoder))),
            1 => {}
            _ if restores.contains(&(i + 1)) => out
                .items
                .push((*label, with_word(item, pop_with_lr(n), decoder))),
            _ if restores.contains(&i) => {}
            _ => out.items.push((*label, item.clone())),
        }
    }
    Some(out)
}

/// Whether `inst` leaves the function (module doc, "Notation").
fn is_exit(inst: &Inst) -> bool {
    matches!(inst.form, Form::Ret { .. }) || inst.is_tail_jump()
}

/// Whether `inst`, at depth `d`, reads and writes `sp` only in ways the
/// packed frame keeps (step 2): calls and exits, the `sp` updates
/// [`sp_change`] knows, and loads and stores below the odd register's slot.
fn touches_sp_safely(inst: &Inst, d: i64, decoder: &mut Decoder) -> bool {
    if inst.is_call() || is_exit(inst) {
        return true;
    }
    if inst.effects.uses & SP == 0 && inst.effects.defs & SP == 0 && !inst.effects.writes_frame {
        return true;
    }
    if let Some(change) = sp_change(inst.word) {
        // A push writes the 16 bytes below `d`, a pop reads the 16 at `d`:
        // both in the moving part when the push starts at -32 or lower.
        let reach = if change < 0 { d } else { d + 16 };
        return !is_memory_update(inst.word) || reach <= -32;
    }
    let shape = decoder.shape(inst.word);
    match sp_slot(inst.word) {
        Some(slot) if shape.sp_based && !shape.writeback => d + slot.offset + slot.size <= -32,
        _ => false,
    }
}

/// A load or store at an immediate offset from `sp`, without writeback.
struct SpSlot {
    offset: i64,
    size: i64,
}

/// The bytes a load or store with base `sp` and an immediate offset
/// reaches relative to `sp` (unsigned offset, unscaled and pair forms), or
/// `None` for any other word.
fn sp_slot(w: u32) -> Option<SpSlot> {
    if (w >> 5) & 31 != 31 {
        return None;
    }
    let vector = (w >> 26) & 1 == 1;
    if (w >> 27) & 7 == 0b111 && (w >> 24) & 3 == 0b01 {
        // LDR/STR (unsigned immediate): imm12 scaled by the size.
        let scale = single_scale(w, vector);
        let offset = i64::from((w >> 10) & 0xFFF) << scale;
        return Some(SpSlot {
            offset,
            size: 1 << scale,
        });
    }
    if (w >> 27) & 7 == 0b111 && (w >> 24) & 3 == 0 && (w >> 21) & 1 == 0 && (w >> 10) & 3 == 0 {
        // LDUR/STUR: signed imm9, unscaled.
        let offset = i64::from(((w >> 12) & 0x1FF) as i32) << 55 >> 55;
        return Some(SpSlot {
            offset,
            size: 1 << single_scale(w, vector),
        });
    }
    if (w >> 27) & 7 == 0b101 && (w >> 23) & 7 == 0b010 {
        // LDP/STP (signed offset): imm7 scaled by the element size.
        let opc = w >> 30;
        let scale = if vector { 2 + opc } else { 2 + (opc >> 1) };
        let offset = (i64::from(((w >> 15) & 0x7F) as i32) << 57 >> 57) << scale;
        return Some(SpSlot {
            offset,
            size: 2 << scale,
        });
    }
    None
}

/// log2 of the bytes a single-register load or store moves.
fn single_scale(w: u32, vector: bool) -> u32 {
    let size = w >> 30;
    if vector && size == 0 && (w >> 23) & 1 == 1 {
        4
    } else {
        size
    }
}

/// Whether `w` is a push or a pop of 16 bytes ([`sp_change`]'s memory
/// forms).
fn is_memory_update(w: u32) -> bool {
    !is_sp_arithmetic(w)
}

/// `add sp, sp, #imm` / `sub sp, sp, #imm` (64-bit, optionally `lsl #12`).
fn is_sp_arithmetic(w: u32) -> bool {
    w & 0xBF80_03FF == 0x9100_03FF
}

/// How `w` moves `sp`, if it is a 16-byte push (`[sp, #-16]!`) or pop
/// (`[sp], #16`) of one register or a pair, or `add`/`sub sp, sp, #imm`.
fn sp_change(w: u32) -> Option<i64> {
    if is_sp_arithmetic(w) {
        let imm = i64::from((w >> 10) & 0xFFF) << (12 * ((w >> 22) & 1));
        return Some(if (w >> 30) & 1 == 1 { -imm } else { imm });
    }
    if (w >> 5) & 31 != 31 {
        return None;
    }
    // Single register, 64-bit (or d): pre-index #-16 or post-index #16.
    let single = w & 0x3B20_0C00;
    let imm9 = (w >> 12) & 0x1FF;
    if (w >> 30) == 3 && single == 0x3800_0C00 && imm9 == 0x1F0 {
        return Some(-16);
    }
    if (w >> 30) == 3 && single == 0x3800_0400 && imm9 == 0x010 {
        return Some(16);
    }
    // Pair of 64-bit registers (x or d): pre-index #-16 or post-index #16.
    let pair = w & 0x3B80_0000;
    let imm7 = (w >> 15) & 0x7F;
    let wide = (w >> 26) & 1 == 0 && w >> 30 == 2 || (w >> 26) & 1 == 1 && w >> 30 == 1;
    if wide && pair == 0x2980_0000 && imm7 == 0x7E {
        return Some(-16);
    }
    if wide && pair == 0x2880_0000 && imm7 == 0x02 {
        return Some(16);
    }
    None
}

/// The depth (module doc) before every instruction item, by a forward walk
/// over the successors; `None` if an instruction moves `sp` in another way,
/// two paths disagree, or an exit is not at depth 0. Items control never
/// reaches have depth `None` inside the vector.
fn depths(func: &LiftedFunction) -> Option<Vec<Option<i64>>> {
    let succs = cfg::successor_lists(func);
    let mut depth: Vec<Option<i64>> = vec![None; func.items.len()];
    let mut work = vec![0usize];
    depth[0] = Some(0);
    while let Some(i) = work.pop() {
        let Item::Inst(inst) = &func.items[i].1 else {
            continue;
        };
        let d = depth[i]?;
        let change = if inst.is_call() || inst.effects.defs & SP == 0 && !writes_sp(inst) {
            0
        } else {
            sp_change(inst.word)?
        };
        if is_exit(inst) && d != 0 {
            return None;
        }
        for &s in &succs[i] {
            match depth[s] {
                None => {
                    depth[s] = Some(d + change);
                    work.push(s);
                }
                Some(known) if known != d + change => return None,
                Some(_) => {}
            }
        }
    }
    Some(depth)
}

/// Whether `inst` may write `sp` (a writeback on it, or a destination):
/// the decoder folds `sp` and `x29` writes into one flag, so `x29` writes
/// count too (they are refused or recognised elsewhere).
fn writes_sp(inst: &Inst) -> bool {
    inst.effects.writes_frame && inst.effects.mentions() & SP != 0
}

/// `item`, an instruction, with its word replaced (effects decoded anew).
fn with_word(item: &Item, word: u32, decoder: &mut Decoder) -> Item {
    let Item::Inst(inst) = item else {
        unreachable!("frame instructions are instructions")
    };
    let mut new = Inst {
        word,
        effects: decoder.effects(word),
        ..inst.clone()
    };
    new.effects = lift::control_effects(&new, new.effects);
    Item::Inst(new)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::testing::{function, words};
    use crate::machine::{MachReloc, RelocKind, RelocTarget};
    use cranelift_codegen::binemit::Reloc;

    const BL: u32 = 0x9400_0000;
    const B: u32 = 0x1400_0000;
    const RET: u32 = 0xD65F_03C0;
    const SAVE_X19: u32 = 0xF81F_0FF3; // str x19, [sp, #-16]!
    const RESTORE_X19: u32 = 0xF841_07F3; // ldr x19, [sp], #16
    const MOV_X19_X0: u32 = 0xAA00_03F3;
    const MOV_X0_X19: u32 = 0xAA13_03E0;

    /// `words_in` with external calls or jumps at the byte `relocs`, through
    /// the pass.
    fn framed(words_in: &[u32], relocs: &[u32]) -> (Vec<u32>, FrameReport) {
        let mut func = function(words_in);
        func.relocs = relocs
            .iter()
            .map(|&offset| MachReloc {
                offset,
                kind: RelocKind::Cranelift(Reloc::Arm64Call),
                target: RelocTarget::Symbol(0),
                addend: 0,
            })
            .collect();
        let mut functions = vec![func];
        let report = run(&mut functions);
        (words(&functions[0]), report)
    }

    #[test]
    fn an_odd_register_takes_the_frame_records_slot() {
        let before = [
            SAVE,
            SET_UP,
            SAVE_X19,
            MOV_X19_X0,
            BL,
            MOV_X0_X19,
            RESTORE_X19,
            RESTORE,
            RET,
        ];
        let (after, report) = framed(&before, &[16]);
        assert_eq!(
            after,
            [
                0xA9BF_7BF3, // stp x19, x30, [sp, #-16]!
                MOV_X19_X0,
                BL,
                MOV_X0_X19,
                0xA8C1_7BF3, // ldp x19, x30, [sp], #16
                RET,
            ]
        );
        assert_eq!(report.stats.omitted, 1);
        assert_eq!(report.stats.packed, 1);
        assert_eq!(report.stats.bytes_before - report.stats.bytes_after, 12);
        assert_eq!(report.remarks[0].decision, "packed");
    }

    #[test]
    fn a_pair_of_saves_loses_only_the_set_up() {
        let before = [
            SAVE,
            SET_UP,
            0xA9BF_53F3, // stp x19, x20, [sp, #-16]!
            MOV_X19_X0,
            BL,
            MOV_X0_X19,
            0xA8C1_53F3, // ldp x19, x20, [sp], #16
            RESTORE,
            RET,
        ];
        let (after, report) = framed(&before, &[16]);
        let mut expected = before.to_vec();
        expected.remove(1);
        assert_eq!(after, expected);
        assert_eq!((report.stats.omitted, report.stats.packed), (1, 0));
        assert_eq!(report.remarks[0].decision, "omitted");
    }

    #[test]
    fn a_frame_pointer_something_reads_stays() {
        let before = [
            SAVE,
            SET_UP,
            0xF940_0BA0, // ldr x0, [x29, #16]
            RESTORE,
            RET,
        ];
        let (after, report) = framed(&before, &[]);
        assert_eq!(after, before);
        assert_eq!(report.stats.functions, 0);
    }

    #[test]
    fn every_epilogue_is_packed() {
        let before = [
            SAVE,
            SET_UP,
            SAVE_X19,
            0xB400_00A0, // cbz x0, 0x20
            BL,
            RESTORE_X19,
            RESTORE,
            RET,
            MOV_X19_X0, // 0x20
            RESTORE_X19,
            RESTORE,
            B, // tail call
        ];
        let (after, report) = framed(&before, &[16, 44]);
        assert_eq!(
            after,
            [
                0xA9BF_7BF3,
                0xB400_0080, // cbz x0, 0x14
                BL,
                0xA8C1_7BF3,
                RET,
                MOV_X19_X0,
                0xA8C1_7BF3,
                B,
            ]
        );
        assert_eq!(report.stats.bytes_before - report.stats.bytes_after, 16);
    }

    #[test]
    fn locals_move_with_the_frame_and_stack_arguments_refuse_packing() {
        let with_locals = [
            SAVE,
            SET_UP,
            SAVE_X19,
            0xD100_43FF, // sub sp, sp, #16
            0xF900_07E0, // str x0, [sp, #8]
            BL,
            0xF940_07E0, // ldr x0, [sp, #8]
            0x9100_43FF, // add sp, sp, #16
            RESTORE_X19,
            RESTORE,
            RET,
        ];
        let (after, report) = framed(&with_locals, &[20]);
        assert_eq!(after.len(), with_locals.len() - 3);
        assert_eq!(report.stats.packed, 1);
        // ldr x0, [sp, #32] after the push of x19: the first stack argument.
        let mut with_argument = with_locals;
        with_argument[6] = 0xF940_13E0;
        let (after, report) = framed(&with_argument, &[20]);
        assert_eq!(after.len(), with_argument.len() - 1);
        assert_eq!((report.stats.omitted, report.stats.packed), (1, 0));
    }

    #[test]
    fn an_address_of_the_stack_refuses_packing() {
        let before = [
            SAVE,
            SET_UP,
            SAVE_X19,
            0x9100_03E0, // mov x0, sp
            BL,
            RESTORE_X19,
            RESTORE,
            RET,
        ];
        let (after, report) = framed(&before, &[16]);
        assert_eq!(after.len(), before.len() - 1);
        assert_eq!(report.stats.packed, 0);
    }

    #[test]
    fn a_tail_call_shuffle_loses_its_set_ups_and_keeps_its_frame() {
        let before = [
            SAVE,
            SET_UP,
            0xD100_43FF, // sub sp, sp, #16
            0xF841_03FD, // ldur x29, [sp, #16]
            0xA900_7BFD, // stp x29, x30, [sp]
            SET_UP,
            0xF801_03E8, // stur x8, [sp, #16]
            RESTORE,
            B,
        ];
        let (after, report) = framed(&before, &[32]);
        let expected: Vec<u32> = before.iter().copied().filter(|&w| w != SET_UP).collect();
        assert_eq!(after, expected);
        assert_eq!((report.stats.omitted, report.stats.packed), (2, 0));
    }

    #[test]
    fn a_function_that_never_returns_packs_its_prologue() {
        let before = [
            SAVE,
            SET_UP,
            SAVE_X19,
            MOV_X19_X0,
            BL,
            MOV_X0_X19,
            BL,
            0x0000_C11F,
        ];
        let (after, report) = framed(&before, &[16, 24]);
        assert_eq!(after[0], 0xA9BF_7BF3); // stp x19, x30, [sp, #-16]!
        assert_eq!(after[1..], before[3..]);
        assert_eq!(report.stats.packed, 1);
    }

    #[test]
    fn stack_slots_and_updates_decode() {
        let slot = |w| sp_slot(w).map(|s| (s.offset, s.size));
        assert_eq!(slot(0xF900_07E0), Some((8, 8))); // str x0, [sp, #8]
        assert_eq!(slot(0x3DC0_0BE0), Some((32, 16))); // ldr q0, [sp, #32]
        assert_eq!(slot(0xB85F_C3E0), Some((-4, 4))); // ldur w0, [sp, #-4]
        assert_eq!(slot(0xA901_07E0), Some((16, 16))); // stp x0, x1, [sp, #16]
        assert_eq!(slot(0xF940_0BA0), None); // ldr x0, [x29, #16]
        assert_eq!(sp_change(0x9140_07FF), Some(4096)); // add sp, sp, #1, lsl #12
        assert_eq!(sp_change(0xD100_43FF), Some(-16));
        assert_eq!(sp_change(0x6DBF_27E8), Some(-16)); // stp d8, d9, [sp, #-16]!
        assert_eq!(sp_change(0xFC41_07E8), Some(16)); // ldr d8, [sp], #16
        assert_eq!(sp_change(SAVE_X19), Some(-16));
        assert_eq!(sp_change(RESTORE), Some(16));
        assert_eq!(sp_change(0xF81E_0FE0), None); // str x0, [sp, #-32]!
        assert_eq!(sp_change(0x9100_03E0), None); // mov x0, sp
    }
}
