//! Sibling calls on aarch64: a call whose result the function returns as
//! it is becomes a jump after the epilogue, and a frame only that call
//! needed goes.
//!
//! Pare functions use the platform C convention (docs/DESIGN.md, "Sibling
//! calls"), which Cranelift 0.135 gives no `return_call`: only its `tail`
//! convention has tail calls, and that convention passes the first
//! argument (and returns the first result) in `x2`, so every call between
//! Pare code and the runtime or C moved arguments. So a function ending in
//! `return f(...)` — the merging passes' thunks above all (`call M;
//! return`) — calls, and Cranelift gives it a frame for the call:
//!
//! ```text
//! stp x29, x30, [sp, #-16]!    ; frame record
//! mov w2, #3                   ; the thunk's constant
//! bl M
//! ldp x29, x30, [sp], #16
//! ret
//! ```
//!
//! This pass does what LLVM's sibling-call optimisation does at instruction
//! selection (`AArch64TargetLowering::isEligibleForTailCallOptimization`),
//! on the machine code after register allocation: the call goes after the
//! epilogue as `b M`, and M returns straight to our caller. Then the frame
//! record saves nothing anyone reads and goes too: the thunk above becomes
//! `mov w2, #3; b M`.
//!
//! # Notation
//!
//! - A **sibling call** is a `bl` with a relocation to a symbol (a direct
//!   call) followed by an epilogue ([`crate::machine::frame`]: restores of
//!   callee-saved registers, `sp` and `x29` updates) and `ret`, with no
//!   branch or jump-table entry to anything after the `bl` up to the `ret`.
//! - A callee **takes its arguments in registers** when its signature puts
//!   every argument in `x0`–`x7`/`v0`–`v7` and its results in registers
//!   (the caller says which symbols do: [`SibcallOptions::register_args`]).
//!
//! # Algorithm
//!
//! Per function holding a `bl` word:
//!
//! 1. *Sibling calls.* The function must not let an address of its frame
//!    escape: no instruction reads `sp` but calls, exits, loads and stores
//!    based on `sp` and updates of `sp` itself, and nothing writes `x29`
//!    but restores (a `mov x29, sp` the frame pass could not delete makes
//!    `x29` an address of the frame). Then every sibling call to a callee
//!    that takes its arguments in registers becomes the epilogue followed
//!    by `b callee` (same relocation, `R_AARCH64_CALL26`, which the
//!    linker extends with a veneer as for the `bl`).
//! 2. *Frame.* If the function now holds no call, its first item is the
//!    frame record's save `stp x29, x30, [sp, #-16]!`, its only other
//!    `sp` updates are that record's restores, each right before an exit
//!    and none a branch target, no other instruction mentions `sp`, and
//!    nothing else writes `x29` or `x30`, the save and the restores are
//!    deleted.
//! 3. Lay the function out again; keep it if it is smaller.
//!
//! # Size
//!
//! A sibling call costs its epilogue and the `b`; the call it replaces,
//! the `bl` and, where the epilogue pass runs after this one
//! ([`SibcallOptions::shared_epilogues`]: `-Os`, `-Oz`) and the function
//! has another return, one `b` to that return's epilogue. So there a
//! sibling call whose epilogue has two or more restores stays a call
//! (measured on bench/lisp at `-Oz`: `builtins::call`, 14 returns, three
//! restores each, grew by 88 bytes when they all became jumps). At `-O2`
//! every sibling call becomes a jump: fewer instructions run.
//!
//! # Invariants
//!
//! - The callee finds its arguments where the `bl` left them: the epilogue
//!   writes only callee-saved registers (`x19`–`x30`, `v8`–`v15`) and
//!   `sp`, and the arguments travel in `x0`–`x7`/`v0`–`v7`; no argument
//!   is on the stack, and none is an address in the frame the epilogue
//!   pops (step 1's condition on `sp` and `x29`). Its results reach our
//!   caller unchanged: nothing ran between the `bl` and the `ret` but the
//!   epilogue. At the jump `sp`, `x30` and the callee-saved registers hold
//!   what our caller gave us, as at a `ret`.
//! - Step 2 deletes a save and restores of registers that keep the
//!   caller's values anyway (nothing writes them), and `sp` returns to its
//!   entry value at every exit with or without them: no access is
//!   relative to `sp`.
//! - Only the `bl`'s call-site record goes; no trap record moves; the
//!   function never grows; the output depends only on the input.
//!
//! # Cost
//!
//! Functions without a `bl` word are not lifted. Otherwise lifting and
//! layout as every machine pass, and one scan of the items per step.
//! Saves 4 bytes per sibling call, 4 more per restore and 4 for the save
//! where the frame goes.

use std::collections::BTreeSet;
use std::fmt;

use cranelift_codegen::binemit::Reloc;

use crate::machine::decode::{Class, Decoder, Form, FP, LR, NZCV, SP};
use crate::machine::frame;
use crate::machine::lift::{self, Inst, Item, LiftedFunction};
use crate::machine::{self, MachFunction, RelocKind, RelocTarget};
use crate::remark::Remark;

/// The pass's name in remarks.
const PASS: &str = "sibcall";

/// `ret` (through `x30`).
const RET: u32 = 0xD65F_03C0;
/// The encoding of `b` with a zero offset (the relocation fills it in).
const B: u32 = 0x1400_0000;
/// `stp x29, x30, [sp, #-16]!`.
const SAVE: u32 = 0xA9BF_7BFD;
/// `ldp x29, x30, [sp], #16`.
const RESTORE: u32 = 0xA8C1_7BFD;

/// What the pass needs to know of the module.
#[derive(Clone, Debug, Default)]
pub struct SibcallOptions {
    /// The relocation targets of callees that take every argument and
    /// return every result in registers (module doc): only calls to these
    /// become jumps.
    pub register_args: BTreeSet<RelocTarget>,
    /// The epilogue pass ([`crate::epilogue`]) runs after this one: in a
    /// function with several returns, a sibling call whose epilogue has
    /// more than one restore stays a call, whose epilogue that pass makes a
    /// branch to another return's (module doc, "Size").
    pub shared_epilogues: bool,
}

/// What the pass did to a module.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SibcallStats {
    /// Functions rewritten.
    pub functions: usize,
    /// Calls that became jumps.
    pub jumps: usize,
    /// Frames deleted after that.
    pub frames: usize,
    pub bytes_before: u64,
    pub bytes_after: u64,
}

impl SibcallStats {
    pub fn accumulate(&mut self, other: &SibcallStats) {
        self.functions += other.functions;
        self.jumps += other.jumps;
        self.frames += other.frames;
        self.bytes_before += other.bytes_before;
        self.bytes_after += other.bytes_after;
    }
}

impl fmt::Display for SibcallStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} calls became jumps, {} frames deleted, in {} functions; code {} -> {} bytes",
            self.jumps, self.frames, self.functions, self.bytes_before, self.bytes_after
        )
    }
}

/// What the pass did to a module: statistics and one remark per function
/// it rewrote or had to leave as it was.
#[derive(Clone, Debug, Default)]
pub struct SibcallReport {
    pub stats: SibcallStats,
    pub remarks: Vec<Remark>,
}

/// Turns the sibling calls of a module's functions into jumps (module doc).
pub fn run(functions: &mut [MachFunction], options: &SibcallOptions) -> SibcallReport {
    run_decoding(functions, options, &mut Decoder::new())
}

/// [`run`] with `decoder`, which knows what the module's earlier machine
/// passes decoded (`crate::machine::decode::Decoded`).
pub fn run_decoding(
    functions: &mut [MachFunction],
    options: &SibcallOptions,
    decoder: &mut Decoder,
) -> SibcallReport {
    let mut report = SibcallReport::default();
    let bytes = machine::rewrite_each(functions, |func| {
        rewrite_function(func, options, decoder, &mut report)
    });
    report.stats.bytes_before = bytes.before;
    report.stats.bytes_after = bytes.after;
    report
}

fn rewrite_function(
    func: &mut MachFunction,
    options: &SibcallOptions,
    decoder: &mut Decoder,
    report: &mut SibcallReport,
) {
    if !func.words().any(|w| Form::of(w) == Form::Bl) {
        return;
    }
    let lifted = lift::lift(func, decoder);
    if lifted.opaque.is_some() || !frame_stays_private(&lifted, decoder) {
        return;
    }
    let (jumped, jumps) = sibling_calls(&lifted, options, decoder);
    if jumps == 0 {
        return;
    }
    let unframed = drop_frame(&jumped);
    let rewritten = unframed.as_ref().unwrap_or(&jumped);
    match lift::relaid(func, &lifted, rewritten) {
        Some(code) if code.bytes.len() < func.bytes.len() => {
            let saved = func.bytes.len() - code.bytes.len();
            let frames = usize::from(unframed.is_some());
            let (decision, reason) = match frames {
                0 => ("jump", "calls whose results are returned became jumps"),
                _ => (
                    "jump-unframed",
                    "calls whose results are returned became jumps; the frame went",
                ),
            };
            report.remarks.push(
                Remark::passed(PASS, decision, &func.name, reason)
                    .bytes(saved as i64)
                    .count("functions", 1)
                    .count("jumps", jumps as u64)
                    .count("frames", frames as u64),
            );
            *func = code;
            report.stats.accumulate(&SibcallStats {
                functions: 1,
                jumps,
                frames,
                ..SibcallStats::default()
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

/// Step 1's condition: no address of the frame can escape, so no argument
/// of a call points into it.
fn frame_stays_private(func: &LiftedFunction, decoder: &mut Decoder) -> bool {
    func.items.iter().all(|(_, item)| match item {
        Item::Inst(inst) => sp_stays_private(inst, decoder) && !writes_fp(inst, decoder),
        Item::Data(_) | Item::JumpEntry { .. } => true,
    })
}

/// Whether `inst` reads `sp` only to jump, return, address memory or move
/// `sp` itself: it writes no other register from it.
fn sp_stays_private(inst: &Inst, decoder: &mut Decoder) -> bool {
    if inst.effects.uses & SP == 0 || inst.is_call() || is_exit(inst) {
        return true;
    }
    let shape = decoder.shape(inst.word);
    if shape.sp_based && matches!(shape.class, Class::Load | Class::Store) {
        return true;
    }
    inst.effects.defs & !(SP | NZCV) == 0
}

/// Whether `inst` may write `x29` other than by restoring it. (A store
/// writes memory and at most its base register: the decoder's `defs`
/// also names the registers an instruction only mentions, as `x29` in the
/// frame record's save.)
fn writes_fp(inst: &Inst, decoder: &mut Decoder) -> bool {
    if inst.effects.defs & FP == 0 || inst.is_call() {
        return false;
    }
    let shape = decoder.shape(inst.word);
    let stores_from_sp = shape.class == Class::Store && shape.sp_based;
    !stores_from_sp && frame::loaded_callee_saved(shape, &inst.effects).is_none()
}

/// Whether `inst` leaves the function.
fn is_exit(inst: &Inst) -> bool {
    matches!(inst.form, Form::Ret { .. }) || inst.is_tail_jump()
}

/// `func` with its sibling calls to callees taking register arguments as
/// jumps (step 1), and how many.
fn sibling_calls(
    func: &LiftedFunction,
    options: &SibcallOptions,
    decoder: &mut Decoder,
) -> (LiftedFunction, usize) {
    let targeted = func.targeted_labels();
    let returns = func
        .items
        .iter()
        .filter(|(_, item)| matches!(item, Item::Inst(i) if i.word == RET))
        .count();
    let mut out = LiftedFunction {
        items: Vec::with_capacity(func.items.len()),
        ..func.clone()
    };
    let mut jumps = 0;
    let mut i = 0;
    while i < func.items.len() {
        let (label, item) = &func.items[i];
        let ret = sibling_call_ret(func, i, options, &targeted, decoder)
            .filter(|&ret| !options.shared_epilogues || returns < 2 || ret - i <= 2);
        if let Some(ret) = ret {
            // The `bl`'s label (a branch may target it) goes to the first
            // instruction of the epilogue; the jump takes the `ret`'s.
            let Item::Inst(call) = item else {
                unreachable!("a sibling call is an instruction")
            };
            let mut labels =
                std::iter::once(*label).chain(func.items[i + 1..ret].iter().map(|(l, _)| *l));
            for (_, restore) in &func.items[i + 1..ret] {
                out.items
                    .push((labels.next().expect("one label per item"), restore.clone()));
            }
            out.items.push((func.items[ret].0, jump(call)));
            jumps += 1;
            i = ret + 1;
            continue;
        }
        out.items.push((*label, item.clone()));
        i += 1;
    }
    (out, jumps)
}

/// The index of the `ret` ending the sibling call at item `call`, if it is
/// one to a callee taking register arguments (module doc, "Notation").
fn sibling_call_ret(
    func: &LiftedFunction,
    call: usize,
    options: &SibcallOptions,
    targeted: &BTreeSet<lift::Label>,
    decoder: &mut Decoder,
) -> Option<usize> {
    let Item::Inst(inst) = &func.items[call].1 else {
        return None;
    };
    let reloc = inst.reloc.as_ref()?;
    let direct = inst.form == Form::Bl
        && reloc.kind == RelocKind::Cranelift(Reloc::Arm64Call)
        && reloc.addend == 0
        && options.register_args.contains(&reloc.target)
        && inst.trap.is_none();
    if !direct {
        return None;
    }
    for (at, (label, item)) in func.items.iter().enumerate().skip(call + 1) {
        let Item::Inst(next) = item else { return None };
        if targeted.contains(label) || next.trap.is_some() || next.call_site {
            return None;
        }
        if next.word == RET {
            return Some(at);
        }
        if !is_epilogue_instruction(next, decoder) {
            return None;
        }
    }
    None
}

/// A restore of callee-saved registers or an update of `sp` (or `x29`),
/// without a PC-relative field.
fn is_epilogue_instruction(inst: &Inst, decoder: &mut Decoder) -> bool {
    if inst.form.is_pc_relative() || inst.is_call() || is_exit(inst) {
        return false;
    }
    let shape = decoder.shape(inst.word);
    frame::loaded_callee_saved(shape, &inst.effects).is_some()
        || frame::adjusts_frame(inst) && inst.effects.defs & !(SP | FP | NZCV) == 0
}

/// `b` to the callee of `call`, with its relocation.
fn jump(call: &Inst) -> Item {
    let mut inst = Inst {
        word: B,
        form: Form::B,
        target: None,
        reloc: call.reloc.clone(),
        trap: None,
        call_site: false,
        jump_table: false,
        effects: Default::default(),
    };
    inst.effects = lift::control_effects(&inst, Default::default());
    Item::Inst(inst)
}

/// `func` (step 1 done) without its frame record, or `None` if the
/// function still needs it (step 2).
fn drop_frame(func: &LiftedFunction) -> Option<LiftedFunction> {
    let inst = |i: usize| match func.items.get(i) {
        Some((_, Item::Inst(inst))) => Some(inst),
        _ => None,
    };
    if inst(0)?.word != SAVE {
        return None;
    }
    let targeted = func.targeted_labels();
    let mut restores = Vec::new();
    for (i, (label, item)) in func.items.iter().enumerate().skip(1) {
        let Item::Inst(this) = item else { continue };
        if this.is_call() {
            return None;
        }
        if this.word == RESTORE {
            let fine = !targeted.contains(label)
                && this.trap.is_none()
                && inst(i + 1).is_some_and(is_exit);
            if !fine {
                return None;
            }
            restores.push(i);
            continue;
        }
        let mentions_sp = this.effects.mentions() & SP != 0 && !is_exit(this);
        if mentions_sp || this.effects.defs & (FP | LR) != 0 && !is_exit(this) {
            return None;
        }
    }
    if targeted.contains(&func.items[0].0) || inst(0)?.trap.is_some() {
        return None;
    }
    let mut out = LiftedFunction {
        items: Vec::with_capacity(func.items.len()),
        ..func.clone()
    };
    // The save's label (the entry) moves to the next item.
    let mut entry = Some(func.items[0].0);
    for (i, (label, item)) in func.items.iter().enumerate().skip(1) {
        if restores.contains(&i) {
            continue;
        }
        out.items
            .push((entry.take().unwrap_or(*label), item.clone()));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::testing::{function, words};
    use crate::machine::MachReloc;

    const BL: u32 = 0x9400_0000;
    const MOV_W2_3: u32 = 0x5280_0062; // mov w2, #3
    const MOV_X19_X0: u32 = 0xAA00_03F3; // mov x19, x0
    const MOV_X0_X19: u32 = 0xAA13_03E0; // mov x0, x19
    const SET_UP: u32 = 0x9100_03FD; // mov x29, sp
    const SAVE_X19: u32 = 0xF81F_0FF3; // str x19, [sp, #-16]!
    const RESTORE_X19: u32 = 0xF841_07F3; // ldr x19, [sp], #16
    const ADD_X0_SP_16: u32 = 0x9100_43E0; // add x0, sp, #16
    const SUB_SP_16: u32 = 0xD100_43FF; // sub sp, sp, #16
    const ADD_SP_16: u32 = 0x9100_43FF; // add sp, sp, #16
    const STR_X1_SP: u32 = 0xF900_03E1; // str x1, [sp]
    const ADD_X0_X0_1: u32 = 0x9100_0400; // add x0, x0, #1

    const CALLEE: RelocTarget = RelocTarget::Symbol(0);
    const STACK_CALLEE: RelocTarget = RelocTarget::Symbol(1);

    fn options() -> SibcallOptions {
        SibcallOptions {
            register_args: [CALLEE].into_iter().collect(),
            shared_epilogues: true,
        }
    }

    /// `words_in` with calls to `target` at the byte offsets `calls`,
    /// through the pass: the words and the relocations' offsets after.
    fn rewritten(
        words_in: &[u32],
        calls: &[(u32, RelocTarget)],
    ) -> (Vec<u32>, Vec<u32>, SibcallReport) {
        let mut func = function(words_in);
        func.relocs = calls
            .iter()
            .map(|&(offset, target)| MachReloc {
                offset,
                kind: RelocKind::Cranelift(Reloc::Arm64Call),
                target,
                addend: 0,
            })
            .collect();
        func.call_sites = calls.iter().map(|&(offset, _)| offset + 4).collect();
        let mut functions = vec![func];
        let report = run(&mut functions, &options());
        let offsets = functions[0].relocs.iter().map(|r| r.offset).collect();
        (words(&functions[0]), offsets, report)
    }

    #[test]
    fn thunk_becomes_a_jump_without_frame() {
        let (out, relocs, report) = rewritten(&[SAVE, MOV_W2_3, BL, RESTORE, RET], &[(8, CALLEE)]);
        assert_eq!(out, vec![MOV_W2_3, B]);
        assert_eq!(relocs, vec![4]);
        assert_eq!(report.stats.jumps, 1);
        assert_eq!(report.stats.frames, 1);
        assert_eq!(
            (report.stats.bytes_before, report.stats.bytes_after),
            (20, 8)
        );
    }

    #[test]
    fn frame_with_a_used_register_stays() {
        // f(x) = g(h(x)): x19 unused here, but the first call stays a call
        // and the frame with it.
        let code = [
            SAVE,
            SAVE_X19,
            MOV_X19_X0,
            BL,
            MOV_X0_X19,
            BL,
            RESTORE_X19,
            RESTORE,
            RET,
        ];
        let (out, relocs, report) = rewritten(&code, &[(12, CALLEE), (20, CALLEE)]);
        assert_eq!(
            out,
            vec![
                SAVE,
                SAVE_X19,
                MOV_X19_X0,
                BL,
                MOV_X0_X19,
                RESTORE_X19,
                RESTORE,
                B
            ]
        );
        assert_eq!(relocs, vec![12, 28]);
        assert_eq!(report.stats.frames, 0);
    }

    #[test]
    fn long_epilogue_of_one_of_several_returns_stays_a_call() {
        // cbz x0, <second return>; bl; restore x19; restore; ret;
        // second: restore x19; restore; ret.
        let cbz_to_second = 0xB400_00A0; // cbz x0, #+20
        let code = [
            SAVE,
            SAVE_X19,
            cbz_to_second,
            BL,
            RESTORE_X19,
            RESTORE,
            RET,
            RESTORE_X19,
            RESTORE,
            RET,
        ];
        let (out, _, report) = rewritten(&code, &[(12, CALLEE)]);
        assert_eq!(out, code.to_vec());
        assert_eq!(report.stats.jumps, 0);
        // Without the epilogue pass after it, the call becomes a jump.
        let mut func = function(&code);
        func.relocs = vec![MachReloc {
            offset: 12,
            kind: RelocKind::Cranelift(Reloc::Arm64Call),
            target: CALLEE,
            addend: 0,
        }];
        let mut functions = vec![func];
        let options = SibcallOptions {
            shared_epilogues: false,
            ..options()
        };
        let report = run(&mut functions, &options);
        assert_eq!(report.stats.jumps, 1);
        assert_eq!(
            words(&functions[0]),
            vec![
                SAVE,
                SAVE_X19,
                0xB400_0080,
                RESTORE_X19,
                RESTORE,
                B,
                RESTORE_X19,
                RESTORE,
                RET
            ]
        );
    }

    #[test]
    fn result_used_after_the_call_stays_a_call() {
        let code = [SAVE, BL, ADD_X0_X0_1, RESTORE, RET];
        let (out, _, report) = rewritten(&code, &[(4, CALLEE)]);
        assert_eq!(out, code.to_vec());
        assert_eq!(report.stats.jumps, 0);
    }

    #[test]
    fn callee_with_stack_arguments_stays_a_call() {
        let code = [SAVE, SUB_SP_16, STR_X1_SP, BL, ADD_SP_16, RESTORE, RET];
        let (out, _, _) = rewritten(&code, &[(12, STACK_CALLEE)]);
        assert_eq!(out, code.to_vec());
        // The same frame with a callee taking its arguments in registers:
        // the spill slot is popped before the jump.
        let (out, _, report) = rewritten(&code, &[(12, CALLEE)]);
        assert_eq!(out, vec![SAVE, SUB_SP_16, STR_X1_SP, ADD_SP_16, RESTORE, B]);
        assert_eq!(report.stats.frames, 0);
    }

    #[test]
    fn frame_address_passed_keeps_the_call() {
        let code = [SAVE, SUB_SP_16, ADD_X0_SP_16, BL, ADD_SP_16, RESTORE, RET];
        let (out, _, _) = rewritten(&code, &[(12, CALLEE)]);
        assert_eq!(out, code.to_vec());
    }

    #[test]
    fn frame_pointer_kept_keeps_the_call() {
        let code = [SAVE, SET_UP, BL, RESTORE, RET];
        let (out, _, _) = rewritten(&code, &[(8, CALLEE)]);
        assert_eq!(out, code.to_vec());
    }

    #[test]
    fn branch_into_the_epilogue_keeps_the_call() {
        // cbz x0, <restore>; bl; restore; ret
        let cbz_to_restore = 0xB400_0040; // cbz x0, #+8
        let code = [SAVE, cbz_to_restore, BL, RESTORE, RET];
        let (out, _, _) = rewritten(&code, &[(8, CALLEE)]);
        assert_eq!(out, code.to_vec());
    }
}
