//! Machine copy propagation: a register move whose source was computed
//! right before it, or whose destination is read once right after it,
//! goes; the instruction on the other side takes the move's register.
//!
//! Cranelift's register allocator often computes a value into one register
//! and moves it into the one its use needs (an argument, the result, a
//! register live across a call), `add x8, x0, x1; mov x0, x8`, and copies
//! a register live across a call into a temporary to read it once, `mov
//! x10, x19; sub x2, x10, #1`. When the temporary dies there, the
//! computation can write the destination itself (`add x0, x0, x1`) and the
//! reader can read the source (`sub x2, x19, #1`). These are the backward
//! and forward halves of LLVM's `MachineCopyPropagation` ([LLVM-MCP]:
//! `BackwardCopyPropagateBlock`, and `ForwardCopyPropagateBlock`'s
//! forwarding of a copy's source to its users).
//!
//! # Notation
//!
//! - A **move** is `mov xD, xT` or `mov wD, wT` (`orr` with the zero
//!   register) between general-purpose registers `x0`–`x28`: `D` its
//!   destination, `T` its source.
//! - A **straight run** is a sequence of instructions no branch enters
//!   (no join) and none of which branches.
//!
//! # Rules
//!
//! **Backward** (the move's source is a temporary). The **definer** `I`
//! is the closest instruction before the move, in its straight run, that
//! may write `T`. `I` is rewritten to write `D` (its destination field,
//! bits 4:0) and the move is deleted when:
//!
//! 1. `I` writes `T` and nothing else but the flags, whole (its effects say
//!    `T` is killed), and re-decoding the rewritten word says it writes `D`
//!    and reads what `I` read: the field is the destination;
//! 2. for `mov wD, wT`, `I` writes `wT` (a 32-bit result, zero-extended):
//!    `D` then gets the value the move gave it;
//! 3. no instruction between `I` and the move reads or writes `T` or `D`,
//!    none of them is a join, and neither `I` nor the move has a trap or
//!    call-site record;
//! 4. `T` is dead after the move.
//!
//! **Forward** (the move's destination is a temporary), on the result of
//! the backward rule with liveness computed again. The **reader** `U` is
//! the first instruction after the move, in its straight run, that
//! mentions `D`. `U` is rewritten to read `T` where it read `D` and the
//! move is deleted when:
//!
//! 5. `U` reads `D`, has no trap or call-site record, and either does not
//!    write `D` and `D` is dead after `U`, or overwrites `D` whole and
//!    nothing else but the flags (one destination, its field `xD` or `wD`,
//!    no writeback: `mov x1, x21; add x1, x0, x1` → `add x1, x0, x21`),
//!    so that the value the move gave `D` ends at `U` either way;
//! 6. no instruction between the move and `U` writes `T`, and neither the
//!    move's successor nor `U` is a join (the move itself may be one: a
//!    branch to it then enters at its successor, which takes its label);
//! 7. the rewritten word disassembles to `U`'s text with the register
//!    operands `xD`/`wD` it reads renamed `xT`/`wT` and nothing else
//!    changed (the destination of a `U` that overwrites `D` stays), and
//!    its effects are `U`'s with `T` read instead of `D`; for `mov wD,
//!    wT`, `U` reads only `wD` (the low half, which is `wT`'s).
//!
//! Each forward rewrite covers the items from its move to its reader; the
//! ranges of two rewrites do not overlap, so the liveness of one holds for
//! the other.
//!
//! **Across blocks** (`copyprop/across.rs`, run first): a wide move whose
//! destination already holds its source on every path goes; a loop
//! header's move that only the entry edge needs goes onto that edge; a
//! move into a dead register goes. Its module doc states the rules.
//!
//! # Invariants
//!
//! After a rewrite every register holds what it held before except the
//! temporary (`T` backward, `D` forward), which is dead; between the two
//! instructions, the other register holds its value early (backward) or
//! keeps it (forward), and nothing there reads or writes it otherwise.
//! The function never grows; a function no rule applies to keeps its
//! bytes; the output depends only on the input.
//!
//! # Cost
//!
//! Only functions with a move word are lifted; liveness is the machine
//! layer's, computed once per direction; each move looks within its
//! straight run, at most [`LOOK`] instructions away.
//!
//! # References
//!
//! - [LLVM-MCP] LLVM's `MachineCopyPropagation`
//!   (`llvm/lib/CodeGen/MachineCopyPropagation.cpp`, LLVM 19),
//!   `BackwardCopyPropagateBlock` and `ForwardCopyPropagateBlock`.
//!   (`docs/DESIGN.md`, "References".)
//!
//! [LLVM-MCP]: #references

use std::collections::BTreeSet;
use std::fmt;

use crate::machine::decode::{self, x, x_range, Decoder, Effects, Form, RegSet, NZCV};
use crate::machine::lift::{self, Inst, Item, Label, LiftedFunction};
use crate::machine::liveness;
use crate::machine::{self, MachFunction};
use crate::remark::Remark;

mod across;

/// The pass's name in remarks.
const PASS: &str = "copyprop";

/// How far from a move its definer or reader is looked for.
const LOOK: usize = 16;

/// What the pass did to a module.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CopyStats {
    /// Functions rewritten.
    pub functions: usize,
    /// Moves deleted.
    pub moves: usize,
    pub bytes_before: u64,
    pub bytes_after: u64,
}

impl CopyStats {
    pub fn accumulate(&mut self, other: &CopyStats) {
        self.functions += other.functions;
        self.moves += other.moves;
        self.bytes_before += other.bytes_before;
        self.bytes_after += other.bytes_after;
    }
}

impl fmt::Display for CopyStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} moves propagated into their definers in {} functions; code {} -> {} bytes",
            self.moves, self.functions, self.bytes_before, self.bytes_after
        )
    }
}

/// What the pass did to a module: statistics and one remark per function
/// it rewrote or had to leave as it was.
#[derive(Clone, Debug, Default)]
pub struct CopyReport {
    pub stats: CopyStats,
    pub remarks: Vec<Remark>,
}

/// Propagates the moves of every function of a module (module doc).
pub fn run(functions: &mut [MachFunction]) -> CopyReport {
    run_decoding(functions, &mut Decoder::new())
}

/// [`run`] with `decoder`, which knows what the module's earlier machine
/// passes decoded (`crate::machine::decode::Decoded`).
pub fn run_decoding(functions: &mut [MachFunction], decoder: &mut Decoder) -> CopyReport {
    let mut report = CopyReport::default();
    let mut writes = across::Writes::default();
    let bytes = machine::rewrite_each(functions, |func| {
        propagate_function(func, decoder, &mut writes, &mut report)
    });
    report.stats.bytes_before = bytes.before;
    report.stats.bytes_after = bytes.after;
    report
}

fn propagate_function(
    func: &mut MachFunction,
    decoder: &mut Decoder,
    writes: &mut across::Writes,
    report: &mut CopyReport,
) {
    let has_move = func.words().any(|w| move_registers(w).is_some());
    if !has_move {
        return;
    }
    let lifted = lift::lift(func, decoder);
    if lifted.opaque.is_some() {
        return;
    }
    let (rewritten, done) = propagate(&lifted, decoder, writes);
    if done == Done::default() {
        return;
    }
    let moves = done.deleted();
    match lift::relaid(func, &lifted, &rewritten) {
        Some(code) => {
            let saved = func.bytes.len() as i64 - code.bytes.len() as i64;
            report.remarks.push(
                Remark::passed(PASS, "propagated", &func.name, done.to_string())
                    .bytes(saved)
                    .count("functions", 1)
                    .count("moves", moves as u64),
            );
            *func = code;
            report.stats.functions += 1;
            report.stats.moves += moves;
        }
        None => report.remarks.push(Remark::missed(
            PASS,
            "kept-original",
            &func.name,
            "a branch of the rewritten code is out of range",
        )),
    }
}

/// A move between general-purpose registers `x0`–`x28`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Move {
    dest: u32,
    source: u32,
    /// `mov wD, wT`: the upper half of `D` becomes zero.
    narrow: bool,
}

/// The registers of `w` if it is a move (module doc, "Notation").
fn move_registers(w: u32) -> Option<Move> {
    let narrow = match w & 0xFFE0_FFE0 {
        0xAA00_03E0 => false,
        0x2A00_03E0 => true,
        _ => return None,
    };
    let dest = w & 31;
    let source = (w >> 16) & 31;
    (dest <= 28 && source <= 28 && dest != source).then_some(Move {
        dest,
        source,
        narrow,
    })
}

/// What the rules did to one function.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Done {
    across: across::Across,
    /// Moves deleted by rules 1–4.
    into_definers: usize,
    /// Moves deleted by rules 5–7.
    into_readers: usize,
}

impl Done {
    /// Moves deleted (a hoisted move deletes one and puts one in).
    fn deleted(&self) -> usize {
        self.across.redundant + self.across.dead + self.into_definers + self.into_readers
    }
}

impl fmt::Display for Done {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} moves became their source's definer writing the destination, {} their reader \
             reading the source; across blocks, {} copied what the destination held, {} went \
             onto a loop's entry edge, {} wrote a dead register",
            self.into_definers,
            self.into_readers,
            self.across.redundant,
            self.across.hoisted,
            self.across.dead
        )
    }
}

/// `func` with every move the rules apply to deleted, and what was done.
fn propagate(
    func: &LiftedFunction,
    decoder: &mut Decoder,
    writes: &mut across::Writes,
) -> (LiftedFunction, Done) {
    let (across, across_done) = across::propagate(func, decoder, writes);
    let (backward, into_definers) = propagate_backward(&across, decoder);
    let (forward, into_readers) = propagate_forward(&backward, decoder);
    let done = Done {
        across: across_done,
        into_definers,
        into_readers,
    };
    (forward, done)
}

/// `func` without the moves `deleted` marks.
fn without(func: &LiftedFunction, items: Vec<(Label, Item)>, deleted: &[bool]) -> LiftedFunction {
    let items = items
        .into_iter()
        .zip(deleted)
        .filter_map(|(item, &gone)| (!gone).then_some(item))
        .collect();
    LiftedFunction {
        items,
        ..func.clone()
    }
}

/// The move at `m` of `items` if a rule may delete it: one without
/// records, and (`entered_ok` false: the backward rules, whose definer
/// comes before it) that no branch enters.
fn candidate(
    items: &[(Label, Item)],
    joins: &BTreeSet<Label>,
    m: usize,
    entered_ok: bool,
) -> Option<Move> {
    let Item::Inst(inst) = &items[m].1 else {
        return None;
    };
    let mv = move_registers(inst.word)?;
    let plain = inst.trap.is_none() && !inst.call_site;
    (plain && (entered_ok || !joins.contains(&items[m].0))).then_some(mv)
}

/// Rules 1–4 (module doc): moves into their definers.
fn propagate_backward(func: &LiftedFunction, decoder: &mut Decoder) -> (LiftedFunction, usize) {
    let live = liveness::compute(func);
    let joins: BTreeSet<Label> = func.targeted_labels();
    let mut items = func.items.clone();
    let mut deleted = vec![false; items.len()];
    let mut moves = 0;
    for m in 0..items.len() {
        let Some(mv) = candidate(&items, &joins, m, false) else {
            continue;
        };
        if live.live_out[m] & x(mv.source) != 0 {
            continue;
        }
        let Some(i) = definer(&items, &deleted, &joins, m, mv) else {
            continue;
        };
        let Item::Inst(definer_inst) = &items[i].1 else {
            continue;
        };
        let Some(rewritten) = retargeted(definer_inst, mv, decoder) else {
            continue;
        };
        items[i].1 = Item::Inst(rewritten);
        deleted[m] = true;
        moves += 1;
    }
    (without(func, items, &deleted), moves)
}

/// Rules 5–7 (module doc): moves into their readers.
fn propagate_forward(func: &LiftedFunction, decoder: &mut Decoder) -> (LiftedFunction, usize) {
    let live = liveness::compute(func);
    let joins: BTreeSet<Label> = func.targeted_labels();
    let mut items = func.items.clone();
    let mut moved = Vec::new();
    // Items up to here belong to an earlier rewrite's range.
    let mut covered = 0;
    for m in 0..items.len() {
        if m < covered {
            continue;
        }
        let Some(mv) = candidate(&items, &joins, m, true) else {
            continue;
        };
        let Some(u) = reader(&items, &joins, m, mv) else {
            continue;
        };
        let Item::Inst(reader_inst) = &items[u].1 else {
            continue;
        };
        let Some((rewritten, overwrites)) = reading_source(reader_inst, mv, decoder) else {
            continue;
        };
        if !overwrites && live.live_out[u] & x(mv.dest) != 0 {
            continue;
        }
        items[u].1 = Item::Inst(rewritten);
        moved.push(m);
        covered = u + 1;
    }
    let mut deleted = vec![false; items.len()];
    for &m in &moved {
        deleted[m] = true;
        // A branch to the move now enters at its successor (not a join
        // itself, rule 6), as falling through the move does.
        if joins.contains(&items[m].0) {
            items[m + 1].0 = items[m].0;
        }
    }
    (without(func, items, &deleted), moved.len())
}

/// The index of the reader of the move at `m` (module doc, rules 5 and 6).
fn reader(items: &[(Label, Item)], joins: &BTreeSet<Label>, m: usize, mv: Move) -> Option<usize> {
    for (seen, j) in (m + 1..items.len()).enumerate() {
        let Item::Inst(inst) = &items[j].1 else {
            return None;
        };
        if seen == LOOK || joins.contains(&items[j].0) {
            return None;
        }
        if inst.effects.mentions() & x(mv.dest) != 0 {
            let reads_only = inst.effects.uses & x(mv.dest) != 0
                && inst.trap.is_none()
                && !inst.call_site
                && inst.form == Form::Plain;
            return reads_only.then_some(j);
        }
        if inst.effects.defs & x(mv.source) != 0 || inst.form != Form::Plain {
            return None;
        }
    }
    None
}

/// `inst` reading `mv.source` where it read `mv.dest`, if rule 7 allows,
/// and whether it overwrites `mv.dest` (rule 5: then the move's value of
/// `D` need not be dead after it).
fn reading_source(inst: &Inst, mv: Move, decoder: &mut Decoder) -> Option<(Inst, bool)> {
    let text = decoder.render(inst.word, 0);
    if decoder.shape(inst.word).writeback {
        return None;
    }
    let overwrites = writes_register(&text, mv.dest);
    if overwrites && !overwrites_whole(inst, &text, mv.dest) {
        return None;
    }
    let renamed = rename_register(&text, mv, overwrites)?;
    // The register fields (Rt, Rn, Ra/Rt2, Rm) that hold `D`; which of
    // them are operands rather than immediate bits, the text says.
    let fields: Vec<u32> = [0, 5, 10, 16]
        .into_iter()
        .filter(|&shift| (inst.word >> shift) & 31 == mv.dest)
        .collect();
    let word = (1..1u32 << fields.len())
        .map(|subset| {
            fields
                .iter()
                .enumerate()
                .filter(|&(k, _)| subset >> k & 1 == 1)
                .fold(inst.word, |w, (_, &shift)| {
                    w & !(31 << shift) | mv.source << shift
                })
        })
        .find(|&w| decoder.render(w, 0) == renamed)?;
    let effects = lift::control_effects(inst, decoder.effects(word));
    // `defs` also names every register mentioned (decode's module doc); a
    // reader that overwrites `D` still writes it.
    let kept_defs = if overwrites {
        inst.effects.defs
    } else {
        inst.effects.defs & !x(mv.dest)
    };
    let expected = Effects {
        uses: inst.effects.uses & !x(mv.dest) | x(mv.source),
        defs: kept_defs | x(mv.source),
        ..inst.effects
    };
    let inst = Inst {
        word,
        effects,
        ..inst.clone()
    };
    (effects == expected).then_some((inst, overwrites))
}

/// Whether the instruction of `text` writes register `r` whole and
/// nothing else but the flags: one of [`decode::PURE_DEST`] whose first
/// operand, its destination field, is `xR` or `wR` (a 32-bit result
/// zero-extends), which its effects say it kills.
fn overwrites_whole(inst: &Inst, text: &str, r: u32) -> bool {
    let (mnemonic, operands) = text.split_once(' ').unwrap_or((text, ""));
    let first = operands.split(',').next().unwrap_or("").trim();
    let names_r = first == format!("x{r}") || first == format!("w{r}");
    names_r
        && decode::PURE_DEST.contains(&mnemonic)
        && inst.word & 31 == r
        && writes_only(&inst.effects, r)
}

/// Compares (no register written) and stores (every register read).
const READ_ONLY: &[&str] = &[
    "cmp", "cmn", "tst", "ccmp", "ccmn", "str", "strb", "strh", "stur", "sturb", "sturh", "stp",
];

/// Whether the instruction of `text` may write register `r`: unless it is
/// one of [`READ_ONLY`], or one of [`decode::PURE_DEST`] (whose first
/// operand is the one register written) with another first operand.
fn writes_register(text: &str, r: u32) -> bool {
    let (mnemonic, operands) = text.split_once(' ').unwrap_or((text, ""));
    if READ_ONLY.contains(&mnemonic) {
        return false;
    }
    let first = operands.split(',').next().unwrap_or("").trim();
    let names_r = first == format!("x{r}") || first == format!("w{r}");
    !decode::PURE_DEST.contains(&mnemonic) || names_r
}

/// `text` (an instruction's disassembly) with the register operands
/// `xD`/`wD` of `mv` renamed `xT`/`wT`, if it reads only what the move
/// gave `D` (for `mov wD, wT`, only `wD`); with `keep_destination`, the
/// first operand (the register the instruction writes) stays as it is.
fn rename_register(text: &str, mv: Move, keep_destination: bool) -> Option<String> {
    let (mnemonic, mut operands) = text.split_once(' ')?;
    let mut out = format!("{mnemonic} ");
    if keep_destination {
        let (first, rest) = operands.split_once(',')?;
        out.push_str(first);
        out.push(',');
        operands = rest;
    }
    let mut token = String::new();
    let flush = |token: &mut String, out: &mut String| -> Option<()> {
        let renamed = match token.as_str() {
            t if t == format!("x{}", mv.dest) && mv.narrow => return None,
            t if t == format!("x{}", mv.dest) => format!("x{}", mv.source),
            t if t == format!("w{}", mv.dest) => format!("w{}", mv.source),
            t => t.to_string(),
        };
        out.push_str(&renamed);
        token.clear();
        Some(())
    };
    for c in operands.chars() {
        if c.is_ascii_alphanumeric() {
            token.push(c);
        } else {
            flush(&mut token, &mut out)?;
            out.push(c);
        }
    }
    flush(&mut token, &mut out)?;
    Some(out)
}

/// The index of the definer of the move at `m` (module doc, rule 3).
fn definer(
    items: &[(Label, Item)],
    deleted: &[bool],
    joins: &BTreeSet<Label>,
    m: usize,
    mv: Move,
) -> Option<usize> {
    let both = x(mv.source) | x(mv.dest);
    let mut seen = 0;
    for j in (0..m).rev() {
        if deleted[j] {
            continue;
        }
        let Item::Inst(inst) = &items[j].1 else {
            return None;
        };
        if inst.effects.defs & x(mv.source) != 0 {
            return Some(j);
        }
        if inst.effects.mentions() & both != 0 || joins.contains(&items[j].0) {
            return None;
        }
        seen += 1;
        if seen == LOOK || !matches!(inst.form, Form::Plain) {
            return None;
        }
    }
    None
}

/// `inst` writing `mv.dest` instead of `mv.source`, if the rule allows it
/// (module doc, rules 1 and 2).
fn retargeted(inst: &Inst, mv: Move, decoder: &mut Decoder) -> Option<Inst> {
    if inst.trap.is_some() || inst.call_site || !matches!(inst.form, Form::Plain | Form::Adrp) {
        return None;
    }
    let shape = decoder.shape(inst.word);
    if shape.writeback || !writes_only(&inst.effects, mv.source) || inst.word & 31 != mv.source {
        return None;
    }
    if mv.narrow && !shape.narrow_destination {
        return None;
    }
    let word = inst.word & !31 | mv.dest;
    let effects = lift::control_effects(inst, decoder.effects(word));
    let same_reads = effects.uses == inst.effects.uses;
    let new_shape = decoder.shape(word);
    if !writes_only(&effects, mv.dest) || !same_reads || new_shape != shape {
        return None;
    }
    Some(Inst {
        word,
        effects,
        ..inst.clone()
    })
}

/// Whether `effects` write register `r` whole and no other register (the
/// flags aside).
fn writes_only(effects: &Effects, r: u32) -> bool {
    let gprs: RegSet = x_range(0, 30);
    effects.kills & gprs == x(r) && !effects.writes_frame && effects.defs & !NZCV & !gprs == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::testing::{function, words};

    const RET: u32 = 0xD65F_03C0;

    fn propagated(before: &[u32]) -> (Vec<u32>, CopyStats) {
        let mut functions = vec![function(before)];
        let report = run(&mut functions);
        assert_eq!(
            report.stats.moves,
            report
                .remarks
                .iter()
                .map(|r| r.get_count("moves"))
                .sum::<u64>() as usize
        );
        (words(&functions[0]), report.stats)
    }

    #[test]
    fn the_definer_writes_the_destination() {
        // add x9, x0, x1; mov x0, x9; ret
        let (after, stats) = propagated(&[0x8B01_0009, 0xAA09_03E0, RET]);
        assert_eq!(after, [0x8B01_0000, RET]); // add x0, x0, x1
        assert_eq!(stats.moves, 1);
        // ldr x9, [x1, #8]; mov x0, x9
        let (after, _) = propagated(&[0xF940_0429, 0xAA09_03E0, RET]);
        assert_eq!(after, [0xF940_0420, RET]); // ldr x0, [x1, #8]
                                               // add w9, w0, w1; mov w0, w9
        let (after, _) = propagated(&[0x0B01_0009, 0x2A09_03E0, RET]);
        assert_eq!(after, [0x0B01_0000, RET]); // add w0, w0, w1
    }

    #[test]
    fn moves_stay_when_the_rule_does_not_hold() {
        let unchanged = |before: &[u32]| {
            let (after, stats) = propagated(before);
            assert_eq!(after, before, "{before:x?}");
            assert_eq!(stats.moves, 0);
        };
        // A 32-bit move of a 64-bit result: the upper half differs.
        unchanged(&[0x8B01_0009, 0x2A09_03E0, RET]);
        // The temporary is read again after the move (the reader, which
        // overwrites the destination, reads the source instead: add x0,
        // x9, x9).
        let (after, _) = propagated(&[0x8B01_0009, 0xAA09_03E0, 0x8B09_0000, RET]);
        assert_eq!(after, [0x8B01_0009, 0x8B09_0120, RET]);
        // The destination is read between definer and move.
        unchanged(&[0x8B01_0009, 0x9100_0402, 0xAA09_03E0, RET]);
        // The temporary is read between definer and move: str x9, [sp].
        unchanged(&[0x8B01_0009, 0xF900_03E9, 0xAA09_03E0, RET]);
        // A load that writes its base back.
        unchanged(&[0xF840_8429, 0xAA09_03E0, RET]);
        // x8 may be read by the return (the indirect result register).
        unchanged(&[0x8B01_0008, 0xAA08_03E0, RET]);
    }

    #[test]
    fn the_reader_reads_the_source() {
        // mov x10, x19; sub x2, x10, #1 → sub x2, x19, #1
        let (after, stats) = propagated(&[0xAA13_03EA, 0xD100_0542, RET]);
        assert_eq!(after, [0xD100_0662, RET]);
        assert_eq!(stats.moves, 1);
        // mov x10, x19; str x10, [sp, #8] → str x19, [sp, #8]
        let (after, _) = propagated(&[0xAA13_03EA, 0xF900_07EA, RET]);
        assert_eq!(after, [0xF900_07F3, RET]);
        // mov x10, x19; add x2, x10, #10: the immediate's low bits are 10
        // too, and stay.
        let (after, _) = propagated(&[0xAA13_03EA, 0x9100_2942, RET]);
        assert_eq!(after, [0x9100_2A62, RET]);
        // mov w10, w19; add w2, w10, #1 → add w2, w19, #1
        let (after, _) = propagated(&[0x2A13_03EA, 0x1100_0542, RET]);
        assert_eq!(after, [0x1100_0662, RET]);
    }

    #[test]
    fn readers_stay_when_the_rule_does_not_hold() {
        let unchanged = |before: &[u32]| {
            let (after, stats) = propagated(before);
            assert_eq!(after, before, "{before:x?}");
            assert_eq!(stats.moves, 0);
        };
        // A 32-bit move read as 64 bits: add x2, x10, #1.
        unchanged(&[0x2A13_03EA, 0x9100_0542, RET]);
        // The temporary is read again: add x0, x10, x2.
        unchanged(&[0xAA13_03EA, 0xD100_0542, 0x8B02_0140, RET]);
        // The source is written in between: mov x19, #0.
        unchanged(&[0xAA13_03EA, 0xD280_0013, 0xD100_0542, RET]);
        // A 32-bit move read as 64 bits by a reader that overwrites it:
        // mov w1, w21; add x1, x0, x1.
        unchanged(&[0x2A15_03E1, 0x8B01_0001, RET]);
        // The reader writes only part of the temporary: movk x1, #5, lsl
        // #16 (and bfxil x1, x1, #0, #8).
        unchanged(&[0xAA15_03E1, 0xF2A0_00A1, RET]);
        unchanged(&[0xAA15_03E1, 0xB340_1C21, RET]);
        // The reader writes a second register too: ldp x1, x2, [x1].
        unchanged(&[0xAA15_03E1, 0xA940_0821, RET]);
    }

    #[test]
    fn a_reader_that_overwrites_the_temporary_reads_the_source() {
        // mov x1, x21; add x1, x0, x1 → add x1, x0, x21 (x1 is live after:
        // the reader's own result).
        let (after, stats) = propagated(&[0xAA15_03E1, 0x8B01_0001, RET]);
        assert_eq!(after, [0x8B15_0001, RET]);
        assert_eq!(stats.moves, 1);
        // mov w1, w21; add w1, w0, w1 → add w1, w0, w21
        let (after, _) = propagated(&[0x2A15_03E1, 0x0B01_0001, RET]);
        assert_eq!(after, [0x0B15_0001, RET]);
        // mov x1, x21; madd x1, x1, x2, x1 → madd x1, x21, x2, x21
        let (after, _) = propagated(&[0xAA15_03E1, 0x9B02_0421, RET]);
        assert_eq!(after, [0x9B02_56A1, RET]);
        // mov x1, x21; neg x1, x1 → neg x1, x21
        let (after, _) = propagated(&[0xAA15_03E1, 0xCB01_03E1, RET]);
        assert_eq!(after, [0xCB15_03E1, RET]);
        // mov x10, x19; add x10, x10, #1; str x10, [sp, #8]
        let (after, _) = propagated(&[0xAA13_03EA, 0x9100_054A, 0xF900_07EA, RET]);
        assert_eq!(after, [0x9100_066A, 0xF900_07EA, RET]);
    }

    #[test]
    fn a_join_between_definer_and_move_keeps_it() {
        // cbz x2, 0x0c; add x9, x0, x1; 0x08: b.. no: the move is a target.
        let before = [
            0xB400_0062, // cbz x2, 0x0c
            0x8B01_0009, // add x9, x0, x1
            0xD280_0009, // mov x9, #0
            0xAA09_03E0, // 0x0c: mov x0, x9 (a join)
            RET,
        ];
        let (after, stats) = propagated(&before);
        assert_eq!(after, before);
        assert_eq!(stats.moves, 0);
    }

    #[test]
    fn a_branch_to_a_forwarded_move_enters_at_its_successor() {
        let before = [
            0xB400_0042, // cbz x2, 0x08
            0xD280_0000, // mov x0, #0
            0xAA15_03E1, // 0x08: mov x1, x21 (a join)
            0x8B01_0001, // add x1, x0, x1
            RET,
        ];
        let (after, stats) = propagated(&before);
        // cbz x2, 0x08; mov x0, #0; 0x08: add x1, x0, x21
        assert_eq!(after, [0xB400_0042, 0xD280_0000, 0x8B15_0001, RET]);
        assert_eq!(stats.moves, 1);
        // The successor is a join too: the move stays.
        let before = [
            0xB400_0062, // cbz x2, 0x0c
            0xB400_0043, // cbz x3, 0x0c
            0xAA15_03E1, // 0x08: mov x1, x21 (a join)
            0x8B01_0001, // 0x0c: add x1, x0, x1 (a join)
            RET,
        ];
        let (after, _) = propagated(&before);
        assert_eq!(after, before);
    }
}
