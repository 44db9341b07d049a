//! Copies across blocks: moves that copy what the destination already
//! holds, a loop header's move hoisted onto the loop's entry edge, and
//! moves whose destination nobody reads.
//!
//! The straight-run rules of the parent module see one block at a time.
//! Cranelift's register allocator (regalloc2) also splits a value's live
//! range at a loop header and carries it around the loop in two registers:
//!
//! ```text
//!   pre:    ...                  ; falls through or `b header`
//!   header: mov x1, x14          ; x1 := the value
//!           ...                  ; reads x1
//!           mov x14, x1          ; the back edge copies it back
//!           b header
//! ```
//!
//! On the back edge `x1` already equals `x14`, so the header's move is
//! redundant there and needed only on the entry edge. Moving it onto the
//! entry edge (the end of `pre`) makes it redundant on every path into
//! the header: it goes, `x14` is dead on the back edge, and the back
//! edge's move goes too. This is LLVM's `MachineCopyPropagation`
//! ([LLVM-MCP]) across blocks: its elimination of a copy whose
//! destination already holds the source (`eraseIfRedundant`) and of copies
//! whose destination is never read (`MaybeDeadCopies`), made global by an
//! available-copies dataflow; the hoist onto the entry edge is the one
//! case of partial-redundancy elimination the pair of copies needs, the
//! effect the register coalescer ([LLVM-RC]: joining the intervals of a
//! copy's two registers) would have had before allocation.
//!
//! # Notation
//!
//! - A **copy fact** `D = S` at a point says registers `xD` and `xS`
//!   (`x0`–`x28`) hold the same 64 bits there on every path from the
//!   entry. The facts at a point form an equivalence relation.
//! - A **wide move** is `mov xD, xS` (the parent module's moves without
//!   `mov wD, wS`, which zero-extends and makes no fact).
//!
//! # Analysis
//!
//! Forward, must: the facts at a block's start are the intersection of
//! the facts at its predecessors' ends; the entry block and every block
//! the entry does not reach start with none. Through an instruction:
//! a wide move without records first drops the facts of `D`, then joins
//! `D` to the class of `S`; a call (`bl`, `blr`) drops every fact (it
//! may write any caller-saved register, and a veneer `x16`/`x17`); any
//! other instruction drops the facts of every register it may write (its
//! `defs`, an over-approximation that names every register it mentions;
//! an undecoded word names all). Blocks not reached are iterated from
//! "every fact" down to the fixed point in reverse postorder.
//!
//! # Rules
//!
//! **Redundant.** A wide move `mov xD, xS` without trap or call-site
//! record is deleted when the fact `D = S` holds before it:
//!
//! 1. deleting it changes no register's value anywhere.
//!
//! **Hoisted.** A wide move `M` = `mov xD, xS` in block `H` goes onto the
//! entry edge `P0 → H` (a copy of `M` at the end of `P0`; `M` deleted)
//! when:
//!
//! 2. `H` is not the entry block (the function's caller is a predecessor
//!    no copy can be put on); every instruction of `H` before `M` mentions
//!    neither `xD` nor `xS` and is plain (no branch, no call) or a
//!    conditional branch to a trap (a relocated `b.cond`, `cbz`, `tbz`:
//!    the trap ends the program, reading no register); `M` has no
//!    record. Then `D` is dead at `H`'s start (`M` kills it before any
//!    read) and `S` holds there what it holds at `M`;
//! 3. the fact `D = S` holds at the end of every predecessor of `H` but
//!    one, `P0`, which the entry reaches, is not `H`, and has `H` as its
//!    only successor;
//! 4. `P0` ends either with `b H` (no records): the copy goes before it,
//!    taking its label, so branches into `P0` still run it; or with an
//!    instruction that is not a branch and falls through into `H`: the
//!    copy goes after it.
//!
//! By 2 and 3, `D` is dead where the copy is put (its only successor is
//! `H`), so the copy changes no value any path reads before `M`'s place,
//! where every path now has `D = S`: `M` is redundant (rule 1). The copy
//! runs once per entry through `P0`, `M` ran once per entry into `H`: no
//! path runs more instructions. The copy writes only `D`, which `M`
//! already wrote in this function after the prologue saved it if it is
//! callee-saved: the frame stays as the frame pass expects it.
//!
//! **Dead.** A move (wide or not) without records whose destination is
//! dead after it (the machine layer's liveness: dead on every path, calls
//! reading every argument register, returns every result and
//! callee-saved register) is deleted:
//!
//! 5. nothing reads the value it wrote.
//!
//! A deleted move that a branch or jump table targets passes its label's
//! references to the next item (moves fall through, so that is where
//! control went next).
//!
//! # Phases
//!
//! Rounds of the analysis and rules 1–4 (every redundant move, at most
//! one hoist per block: the only values a hoist changes are `D`'s between
//! `P0`'s end and `M`, where nothing else of the round looks), until a
//! round changes nothing or [`ROUNDS`] ran; then rounds of rule 5 with
//! liveness computed again, until none applies.
//!
//! # Invariants
//!
//! Every register read anywhere reads the value it read before; no path
//! runs more instructions; the function never grows; the output depends
//! only on the input.
//!
//! # Cost
//!
//! A fact set is one 29-bit row per register: the analysis is
//! `O(instructions × 29)` per iteration, a few iterations per round.
//!
//! # References
//!
//! - [LLVM-MCP] LLVM's `MachineCopyPropagation`
//!   (`llvm/lib/CodeGen/MachineCopyPropagation.cpp`, LLVM 19):
//!   `eraseIfRedundant`, `MaybeDeadCopies`.
//! - [LLVM-RC] LLVM's `RegisterCoalescer`
//!   (`llvm/lib/CodeGen/RegisterCoalescer.cpp`, LLVM 19): `joinCopy`.
//!   (`docs/DESIGN.md`, "References".)
//!
//! [LLVM-MCP]: #references
//! [LLVM-RC]: #references

use std::collections::BTreeMap;

use hashbrown::HashMap;

use super::{move_registers, writes_register, Move};
use crate::machine::cfg::{successor_lists, Cfg};
use crate::machine::decode::{x_range, Decoder, Form, RegSet};
use crate::machine::lift::{Inst, Item, Label, LiftedFunction};
use crate::machine::liveness;

/// At most this many rounds of rules 1–4 per function.
const ROUNDS: usize = 16;

/// The registers copy facts are about: `x0`–`x28`.
const TRACKED: u32 = 29;

/// What the rules did to one function.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Across {
    /// Moves deleted by rule 1 (hoisted moves not counted).
    pub redundant: usize,
    /// Moves put on an entry edge by rules 2–4 (each deleted one).
    pub hoisted: usize,
    /// Moves deleted by rule 5.
    pub dead: usize,
}

/// The copy facts at one point (module doc, "Notation"): bit `s` of
/// `equal[d]` says `D = S`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Facts {
    equal: [u32; TRACKED as usize],
}

impl Facts {
    const NONE: Facts = Facts {
        equal: [0; TRACKED as usize],
    };
    /// The start of the iteration for blocks the entry reaches.
    const EVERY: Facts = Facts {
        equal: [(1 << TRACKED) - 1; TRACKED as usize],
    };

    fn holds(&self, mv: Move) -> bool {
        self.equal[mv.dest as usize] & (1 << mv.source) != 0
    }

    fn meet(&mut self, other: &Facts) {
        for (row, o) in self.equal.iter_mut().zip(other.equal) {
            *row &= o;
        }
    }

    /// Drops every fact about register `r`.
    fn forget(&mut self, r: u32) {
        if r >= TRACKED {
            return;
        }
        self.equal[r as usize] = 0;
        for row in &mut self.equal {
            *row &= !(1 << r);
        }
    }

    /// `D` now holds what `S` holds.
    fn copy(&mut self, mv: Move) {
        self.forget(mv.dest);
        let class = self.equal[mv.source as usize] | 1 << mv.source;
        for r in 0..TRACKED {
            if class & (1 << r) != 0 {
                self.equal[r as usize] |= 1 << mv.dest;
            }
        }
        self.equal[mv.dest as usize] = class;
    }

    /// The facts after `inst`, which may write the registers `written`
    /// (module doc, "Analysis").
    fn through(&mut self, inst: &Inst, written: RegSet) {
        if let Some(mv) = wide_move(inst) {
            self.copy(mv);
        } else if inst.is_call() {
            *self = Facts::NONE;
        } else {
            for r in 0..TRACKED {
                if written & (1 << r) != 0 {
                    self.forget(r);
                }
            }
        }
    }
}

/// The registers each instruction may write, by word (module doc,
/// "Analysis"), for a module: rendering a word is what costs, and code
/// repeats words a lot.
#[derive(Default)]
pub(super) struct Writes {
    known: HashMap<u32, RegSet>,
}

impl Writes {
    /// The registers `inst` may write: none for a branch that stays in
    /// the function or leaves it to a trap; for other words, the
    /// registers their effects mention that [`writes_register`] does not
    /// rule out, every one of them if the word writes a base back.
    fn of(&mut self, inst: &Inst, decoder: &mut Decoder) -> RegSet {
        if matches!(inst.form, Form::B | Form::BCond | Form::Cbz | Form::Tbz) {
            return 0;
        }
        if inst.form != Form::Plain {
            return inst.effects.defs;
        }
        if let Some(&written) = self.known.get(&inst.word) {
            return written;
        }
        let written = if decoder.shape(inst.word).writeback {
            inst.effects.defs
        } else {
            let text = decoder.render(inst.word, 0);
            (0..TRACKED)
                .filter(|&r| inst.effects.defs & (1 << r) != 0 && writes_register(&text, r))
                .fold(inst.effects.defs & !x_range(0, TRACKED - 1), |acc, r| {
                    acc | 1 << r
                })
        };
        self.known.insert(inst.word, written);
        written
    }
}

/// The registers of `inst` if it is a wide move without records.
fn wide_move(inst: &Inst) -> Option<Move> {
    let mv = move_registers(inst.word)?;
    let plain = !mv.narrow && inst.trap.is_none() && !inst.call_site;
    plain.then_some(mv)
}

/// The facts at the start of every block (`None`: the entry does not
/// reach it; its facts are then none).
fn facts_at_starts(func: &LiftedFunction, cfg: &Cfg, written: &[RegSet]) -> Vec<Option<Facts>> {
    let rpo = cfg.reverse_postorder();
    let mut at_start: Vec<Option<Facts>> = vec![None; cfg.blocks.len()];
    for &b in &rpo {
        at_start[b] = Some(Facts::EVERY);
    }
    if let Some(&entry) = rpo.first() {
        at_start[entry] = Some(Facts::NONE);
    }
    let mut changed = true;
    while changed {
        changed = false;
        for &b in rpo.iter().skip(1) {
            let mut facts = Facts::EVERY;
            for &p in &cfg.preds[b] {
                let start = at_start[p].unwrap_or(Facts::NONE);
                facts.meet(&at_end(func, cfg, written, p, start));
            }
            if at_start[b] != Some(facts) {
                at_start[b] = Some(facts);
                changed = true;
            }
        }
    }
    at_start
}

/// The facts at the end of block `b` given those at its start.
fn at_end(
    func: &LiftedFunction,
    cfg: &Cfg,
    written: &[RegSet],
    b: usize,
    mut facts: Facts,
) -> Facts {
    for i in cfg.blocks[b].clone() {
        if let Item::Inst(inst) = &func.items[i].1 {
            facts.through(inst, written[i]);
        }
    }
    facts
}

/// Where a hoisted copy goes (rule 4).
#[derive(Clone, Copy, Debug)]
enum Place {
    /// Before this item (a `b`), taking its label.
    Before(usize),
    /// After this item.
    After(usize),
}

/// A hoist the rules allow: the move at `from`, copied to `to`.
#[derive(Clone, Copy, Debug)]
struct Hoist {
    from: usize,
    to: Place,
}

/// Runs the rules (module doc, "Phases") on `func`.
pub(super) fn propagate(
    func: &LiftedFunction,
    decoder: &mut Decoder,
    writes: &mut Writes,
) -> (LiftedFunction, Across) {
    let mut current = func.clone();
    let mut done = Across::default();
    for _ in 0..ROUNDS {
        let (deleted, hoists) = round(&current, decoder, writes);
        let redundant = deleted.iter().filter(|&&d| d).count();
        if redundant == 0 && hoists.is_empty() {
            break;
        }
        let Some(next) = rewritten(&current, deleted, &hoists) else {
            break;
        };
        done.redundant += redundant;
        done.hoisted += hoists.len();
        current = next;
    }
    loop {
        let deleted = dead_moves(&current);
        let dead = deleted.iter().filter(|&&d| d).count();
        if dead == 0 {
            break;
        }
        let Some(next) = rewritten(&current, deleted, &[]) else {
            break;
        };
        done.dead += dead;
        current = next;
    }
    (current, done)
}

/// One round of rules 1–4: the redundant moves, and the hoists.
fn round(
    func: &LiftedFunction,
    decoder: &mut Decoder,
    writes: &mut Writes,
) -> (Vec<bool>, Vec<Hoist>) {
    let succs = successor_lists(func);
    let cfg = Cfg::with_successors(func, &succs);
    let written: Vec<RegSet> = func
        .items
        .iter()
        .map(|(_, item)| match item {
            Item::Inst(inst) => writes.of(inst, decoder),
            _ => 0,
        })
        .collect();
    let at_start = facts_at_starts(func, &cfg, &written);
    let mut deleted = vec![false; func.items.len()];
    for (b, range) in cfg.blocks.iter().enumerate() {
        let Some(mut facts) = at_start[b] else {
            continue;
        };
        for i in range.clone() {
            let Item::Inst(inst) = &func.items[i].1 else {
                continue;
            };
            if wide_move(inst).is_some_and(|mv| facts.holds(mv)) {
                deleted[i] = true;
            }
            facts.through(inst, written[i]);
        }
    }
    let at_ends: Vec<Option<Facts>> = (0..cfg.blocks.len())
        .map(|b| at_start[b].map(|f| at_end(func, &cfg, &written, b, f)))
        .collect();
    let entry = cfg.reverse_postorder().first().copied();
    let hoists = (0..cfg.blocks.len())
        .filter(|&h| Some(h) != entry && at_start[h].is_some())
        .filter_map(|h| hoist(func, &cfg, &succs, &at_ends, &deleted, h))
        .collect();
    (deleted, hoists)
}

/// The first move of block `h` rules 2–4 hoist, if any.
fn hoist(
    func: &LiftedFunction,
    cfg: &Cfg,
    succs: &[Vec<usize>],
    at_ends: &[Option<Facts>],
    deleted: &[bool],
    h: usize,
) -> Option<Hoist> {
    let mut mentioned = 0u128;
    for m in cfg.blocks[h].clone() {
        let Item::Inst(inst) = &func.items[m].1 else {
            return None;
        };
        if let Some(mv) = wide_move(inst).filter(|_| !deleted[m]) {
            let both = 1u128 << mv.dest | 1u128 << mv.source;
            if mentioned & both == 0 {
                if let Some(to) = entry_edge(func, cfg, succs, at_ends, h, mv) {
                    return Some(Hoist { from: m, to });
                }
            }
        }
        let to_trap =
            matches!(inst.form, Form::BCond | Form::Cbz | Form::Tbz) && inst.reloc.is_some();
        if inst.form != Form::Plain && !to_trap {
            return None;
        }
        mentioned |= inst.effects.mentions();
    }
    None
}

/// Where rules 3 and 4 put the copy of `mv` for block `h`.
fn entry_edge(
    func: &LiftedFunction,
    cfg: &Cfg,
    succs: &[Vec<usize>],
    at_ends: &[Option<Facts>],
    h: usize,
    mv: Move,
) -> Option<Place> {
    let mut missing = cfg.preds[h]
        .iter()
        .copied()
        .filter(|&p| !at_ends[p].is_some_and(|f| f.holds(mv)));
    let p0 = missing.next()?;
    if missing.next().is_some() || p0 == h || at_ends[p0].is_none() || cfg.succs[p0] != [h] {
        return None;
    }
    let last = cfg.blocks[p0].end - 1;
    let Item::Inst(inst) = &func.items[last].1 else {
        return None;
    };
    let plain = inst.trap.is_none() && !inst.call_site && inst.reloc.is_none();
    match inst.form {
        Form::B if plain && inst.target == Some(func.items[cfg.blocks[h].start].0) => {
            Some(Place::Before(last))
        }
        Form::Plain | Form::Bl | Form::Blr { .. } if succs[last] == [cfg.blocks[h].start] => {
            Some(Place::After(last))
        }
        _ => None,
    }
}

/// Rule 5: the moves whose destination is dead after them.
fn dead_moves(func: &LiftedFunction) -> Vec<bool> {
    let live = liveness::compute(func);
    func.items
        .iter()
        .enumerate()
        .map(|(i, (_, item))| {
            let Item::Inst(inst) = item else {
                return false;
            };
            let plain = inst.trap.is_none() && !inst.call_site;
            move_registers(inst.word)
                .is_some_and(|mv| plain && live.live_out[i] & (1 << mv.dest) == 0)
        })
        .collect()
}

/// `func` with the items `deleted` marks removed (their labels' references
/// passed to the next item kept) and the copies of `hoists` put in; `None`
/// if a deleted item has no instruction after it.
fn rewritten(
    func: &LiftedFunction,
    mut deleted: Vec<bool>,
    hoists: &[Hoist],
) -> Option<LiftedFunction> {
    let mut next_label = func.next_label;
    let mut before: BTreeMap<usize, Inst> = BTreeMap::new();
    let mut after: BTreeMap<usize, Inst> = BTreeMap::new();
    for hoist in hoists {
        let Item::Inst(inst) = &func.items[hoist.from].1 else {
            return None;
        };
        deleted[hoist.from] = true;
        match hoist.to {
            Place::Before(i) => before.insert(i, inst.clone()),
            Place::After(i) => after.insert(i, inst.clone()),
        };
    }
    // Where the references to a deleted item's label go.
    let mut redirect: BTreeMap<Label, Label> = BTreeMap::new();
    let mut items: Vec<(Label, Item)> = Vec::with_capacity(func.items.len());
    let mut pending: Vec<Label> = Vec::new();
    for (i, (label, item)) in func.items.iter().enumerate() {
        if deleted[i] {
            pending.push(*label);
            continue;
        }
        if !pending.is_empty() {
            if !matches!(item, Item::Inst(_)) {
                return None;
            }
            // Control fell from the deleted items into this one, or into
            // the copy put before it, which takes its label.
            for l in pending.drain(..) {
                redirect.insert(l, *label);
            }
        }
        let mut label = *label;
        if let Some(copy) = before.get(&i) {
            // The copy takes the branch's label: branches into `P0` run it.
            items.push((label, Item::Inst(copy.clone())));
            label = next_label;
            next_label += 1;
        }
        items.push((label, item.clone()));
        if let Some(copy) = after.get(&i) {
            items.push((next_label, Item::Inst(copy.clone())));
            next_label += 1;
        }
    }
    if !pending.is_empty() {
        return None;
    }
    let follow = |l: Label| redirect.get(&l).copied().unwrap_or(l);
    for (_, item) in &mut items {
        match item {
            Item::Inst(inst) => inst.target = inst.target.map(follow),
            Item::JumpEntry { table, target } => {
                *table = follow(*table);
                *target = follow(*target);
            }
            Item::Data(_) => {}
        }
    }
    Some(LiftedFunction {
        items,
        next_label,
        ..func.clone()
    })
}

#[cfg(test)]
mod tests {
    use crate::copyprop::run;
    use crate::machine::testing::{function, words};

    const RET: u32 = 0xD65F_03C0;

    /// The words of `before` after copy propagation, and the number of
    /// moves hoisted, found redundant and found dead (from the remark).
    fn propagated(before: &[u32]) -> Vec<u32> {
        let mut functions = vec![function(before)];
        run(&mut functions);
        words(&functions[0])
    }

    fn unchanged(before: &[u32]) {
        assert_eq!(propagated(before), before, "{before:x?}");
    }

    #[test]
    fn a_loop_header_copy_goes_onto_the_entry_edge() {
        // The value lives in x14 outside the loop and in x1 inside: the
        // header copies it in, the back edge copies it back.
        let before = [
            0xAA00_03EE, // mov x14, x0
            0xD280_0008, // mov x8, #0
            0xAA0E_03E1, // 0x08 header: mov x1, x14
            0xF940_0022, // ldr x2, [x1]
            0xEB02_011F, // cmp x8, x2
            0x5400_00EA, // b.ge 0x30
            0x8B08_0C22, // add x2, x1, x8, lsl #3
            0xF940_0442, // ldr x2, [x2, #8]
            0x9100_0508, // add x8, x8, #1
            0x8B02_0000, // add x0, x0, x2
            0xAA01_03EE, // mov x14, x1 (back edge)
            0x17FF_FFF7, // b 0x08
            RET,         // 0x30
        ];
        // The header's copy goes after `mov x8, #0` (rule 4, falling
        // through), the back edge's is dead (rule 5), and the entry's
        // `mov x14, x0; ...; mov x1, x14` becomes `mov x1, x0` (rule 1 of
        // the parent module).
        let after = [
            0xAA00_03E1, // mov x1, x0
            0xD280_0008, // mov x8, #0
            0xF940_0022, // 0x08 header: ldr x2, [x1]
            0xEB02_011F, // cmp x8, x2
            0x5400_00CA, // b.ge 0x28
            0x8B08_0C22, // add x2, x1, x8, lsl #3
            0xF940_0442, // ldr x2, [x2, #8]
            0x9100_0508, // add x8, x8, #1
            0x8B02_0000, // add x0, x0, x2
            0x17FF_FFF9, // b 0x08
            RET,         // 0x28
        ];
        assert_eq!(propagated(&before), after);
    }

    #[test]
    fn the_copy_goes_before_the_entry_edges_branch() {
        let before = [
            0xAA00_03EE, // mov x14, x0
            0x1400_0003, // b 0x10
            0x9100_0508, // 0x08 latch: add x8, x8, #1
            0xAA01_03EE, // mov x14, x1
            0xAA0E_03E1, // 0x10 header: mov x1, x14
            0xF940_0022, // ldr x2, [x1]
            0xEB02_011F, // cmp x8, x2
            0x54FF_FF6B, // b.lt 0x08
            RET,
        ];
        let after = [
            0xAA00_03E1, // mov x1, x0
            0x1400_0002, // b 0x0c
            0x9100_0508, // 0x08 latch: add x8, x8, #1
            0xF940_0022, // 0x0c header: ldr x2, [x1]
            0xEB02_011F, // cmp x8, x2
            0x54FF_FFAB, // b.lt 0x08
            RET,
        ];
        assert_eq!(propagated(&before), after);
    }

    #[test]
    fn a_copy_of_what_the_destination_holds_goes() {
        // mov x19, x20; add x2, x19, #1; mov x20, x19; ret
        let before = [0xAA14_03F3, 0x9100_0662, 0xAA13_03F4, RET];
        assert_eq!(propagated(&before), [0xAA14_03F3, 0x9100_0662, RET]);
        // Across a join, which the deleted move was: the branch goes to
        // the next item.
        let before = [
            0xAA14_03F3, // mov x19, x20
            0xB400_0040, // cbz x0, 0x0c
            0x9100_0442, // add x2, x2, #1
            0xAA13_03F4, // 0x0c: mov x20, x19
            0xAA02_03E0, // mov x0, x2
            RET,
        ];
        let after = [
            0xAA14_03F3, // mov x19, x20
            0xB400_0040, // cbz x0, 0x0c
            0x9100_0442, // add x2, x2, #1
            0xAA02_03E0, // 0x0c: mov x0, x2
            RET,
        ];
        assert_eq!(propagated(&before), after);
    }

    #[test]
    fn copies_stay_when_the_fact_does_not_hold() {
        // mov x19, x20; add x20, x20, #1; mov x20, x19: x20 is written
        // in between.
        unchanged(&[0xAA14_03F3, 0x9100_0694, 0xAA13_03F4, RET]);
        // mov x19, x20; blr x3; mov x20, x19: a call may write any
        // register.
        unchanged(&[0xAA14_03F3, 0xD63F_0060, 0xAA13_03F4, RET]);
        // mov w19, w20; mov x20, x19: a 32-bit move makes no fact.
        unchanged(&[0x2A14_03F3, 0xAA13_03F4, RET]);
        // One path into the join lacks the fact, and its block has two
        // successors: no copy goes onto it.
        unchanged(&[
            0xB400_0040, // cbz x0, 0x08
            0xAA14_03F3, // mov x19, x20
            0xAA13_03F4, // 0x08: mov x20, x19
            RET,
        ]);
        // The entry block: the caller is a predecessor too.
        unchanged(&[
            0xAA14_03F3, // 0x00: mov x19, x20
            0xB4FF_FFE0, // cbz x0, 0x00
            RET,
        ]);
    }

    #[test]
    fn a_header_copy_stays_when_the_header_reads_its_destination_first() {
        let before = [
            0xAA00_03EE, // mov x14, x0
            0xD280_0008, // mov x8, #0
            0x9100_0422, // 0x08 header: add x2, x1, #1 (reads x1)
            0xAA0E_03E1, // mov x1, x14
            0xEB02_011F, // cmp x8, x2
            0x5400_008A, // b.ge 0x24
            0x9100_2021, // add x1, x1, #8
            0xAA01_03EE, // mov x14, x1
            0x17FF_FFFA, // b 0x08
            RET,         // 0x24
        ];
        unchanged(&before);
    }

    #[test]
    fn a_move_into_a_dead_register_goes() {
        // mov x9, x0; ret: nothing reads x9.
        assert_eq!(propagated(&[0xAA00_03E9, RET]), [RET]);
        // mov x0, x9; ret: the return reads x0.
        unchanged(&[0xAA09_03E0, RET]);
        // mov x19, x0; ret: callee-saved registers are read by the return.
        unchanged(&[0xAA00_03F3, RET]);
    }
}
