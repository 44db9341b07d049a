//! Finding candidates: which instructions may be outlined, and the two
//! sources of sequences [`super::select`] evaluates.
//!
//! - *Local* (module doc, step 3): the eligible functions become one
//!   instruction string; its repeats ([`super::candidates::repeats`]) and
//!   their shorter prefixes are the candidates, with every occurrence.
//! - *Global* (module doc, step 9): from every instruction, the run of
//!   outlinable instructions that follows is walked down the prefix tree;
//!   every published sequence it starts with is a candidate with that one
//!   occurrence.
//!
//! Either way a sequence stays inside a block (branch targets and block
//! boundaries cut it), holds only legal instructions, and may
//! contain a call or a flow end only as its last instruction.

use std::collections::{BTreeMap, BTreeSet};

use hashbrown::HashMap;

use super::candidates;
use super::global::{self, PrefixTree, MIN_GLOBAL_COUNT};
use super::select::{Candidate, Round, Site};
use crate::machine::decode::{Effects, Form, LR};
use crate::machine::lift::{Inst, Item, Label, LiftedFunction};
use crate::machine::RelocTarget;

/// How many lengths, from the longest down, are tried for each repeat.
const MAX_PREFIXES: usize = 16;

/// The local candidates of the `eligible` functions (indices, ascending).
pub fn local_candidates(round: &Round<'_>, eligible: &[usize]) -> Vec<Candidate> {
    let string = InstructionString::new(round, eligible);
    let mut by_sequence: BTreeMap<Vec<u32>, BTreeSet<usize>> = BTreeMap::new();
    for repeat in candidates::repeats(&string.symbols, 2) {
        let first = repeat.starts[0];
        let len = string.trimmed_len(round, first, repeat.len);
        // The repeat and its shorter prefixes: a prefix occurs wherever the
        // repeat does (and maybe elsewhere: other repeats add those), and it
        // may be legal where the whole is not (flags live at its end).
        for prefix in (2..=len).rev().take(MAX_PREFIXES) {
            by_sequence
                .entry(string.symbols[first..first + prefix].to_vec())
                .or_default()
                .extend(repeat.starts.iter().copied());
        }
    }
    by_sequence
        .into_iter()
        .filter_map(|(sequence, starts)| {
            let sites: Vec<Site> = starts.iter().filter_map(|&p| string.sites[p]).collect();
            round.evaluate(sequence.into_iter().map(u64::from).collect(), &sites)
        })
        .collect()
}

/// The global candidates: every site of a non-opaque function where a
/// sequence published at least [`MIN_GLOBAL_COUNT`] times starts.
pub fn global_candidates(
    round: &Round<'_>,
    tree: &PrefixTree,
    symbol_names: &[String],
) -> Vec<Candidate> {
    let mut out = Vec::new();
    for (f, func) in round.functions.iter().enumerate() {
        if func.opaque.is_some() {
            continue;
        }
        let targets = branch_targets(func);
        let hot = round.hot_items(f);
        let hashes: Vec<Option<u64>> = func
            .items
            .iter()
            .zip(hot)
            .map(|((_, item), &hot)| match item {
                Item::Inst(inst) if is_legal(inst) && !hot => {
                    global::stable_hash(inst, symbol_names)
                }
                _ => None,
            })
            .collect();
        for i in 0..func.items.len() {
            let run = outlinable_run(func, &hashes, &targets, i);
            for published in tree.matches(run.iter().copied()) {
                if published.len < 2 || published.count < MIN_GLOBAL_COUNT {
                    continue;
                }
                let site = Site {
                    function: f,
                    item: i,
                };
                out.extend(round.evaluate(run[..published.len].to_vec(), &[site]));
            }
        }
    }
    out
}

/// The stable hashes of the longest sequence that may be outlined from item
/// `start` on: legal, stably hashed instructions inside one block, ending at
/// the first call or flow end.
fn outlinable_run(
    func: &LiftedFunction,
    hashes: &[Option<u64>],
    targets: &BTreeSet<Label>,
    start: usize,
) -> Vec<u64> {
    let mut run = Vec::new();
    for (j, hash) in hashes.iter().enumerate().skip(start) {
        let Some(hash) = hash else { break };
        if j > start && targets.contains(&func.items[j].0) {
            break;
        }
        run.push(*hash);
        let Item::Inst(inst) = &func.items[j].1 else {
            break;
        };
        if inst.form.ends_flow() || inst.is_call() {
            break;
        }
    }
    run
}

/// Labels some branch, table entry or literal load refers to.
fn branch_targets(func: &LiftedFunction) -> BTreeSet<Label> {
    let mut set = BTreeSet::new();
    for (_, item) in &func.items {
        match item {
            Item::Inst(inst) => set.extend(inst.target),
            Item::JumpEntry { target, .. } => {
                set.insert(*target);
            }
            Item::Data(_) => {}
        }
    }
    set
}

/// The sequences of `func` the outliner skips as hot: maximal runs of two
/// or more instructions that could be outlined (legal, inside one block)
/// all of whose instructions are hot (`hot[i]`, [`super::heat`]).
pub fn hot_sequences(func: &LiftedFunction, hot: &[bool]) -> usize {
    let targets = branch_targets(func);
    let mut sequences = 0;
    let mut run = 0;
    for ((label, item), &hot) in func.items.iter().zip(hot) {
        if targets.contains(label) {
            sequences += usize::from(run >= 2);
            run = 0;
        }
        match item {
            Item::Inst(inst) if hot && is_legal(inst) => {
                run += 1;
                if inst.form.ends_flow() {
                    sequences += usize::from(run >= 2);
                    run = 0;
                }
            }
            _ => {
                sequences += usize::from(run >= 2);
                run = 0;
            }
        }
    }
    sequences + usize::from(run >= 2)
}

/// Whether an instruction may be part of an outlined sequence (module doc,
/// step 4; its position is checked separately: calls and flow ends only
/// last).
fn is_legal(inst: &Inst) -> bool {
    if inst.trap.is_some() || inst.target.is_some() || inst.jump_table {
        return false;
    }
    if inst.form.is_pc_relative() && inst.reloc.is_none() {
        return false;
    }
    if matches!(inst.form, Form::Udf) || inst.effects == Effects::OPAQUE {
        return false;
    }
    if inst.effects.writes_frame {
        return false;
    }
    let convention_lr =
        inst.is_call() || inst.is_tail_jump() || matches!(inst.form, Form::Ret { rn: 30 });
    if inst.effects.mentions() & LR != 0 && !convention_lr {
        return false;
    }
    true
}

/// What makes two instructions alike in the instruction string.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct InstKey {
    word: u32,
    reloc: Option<RelocKey>,
}

/// A relocation as far as likeness goes: kind, target, addend (not the
/// offset, which is the instruction's own).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct RelocKey {
    kind: u32,
    target: RelocTarget,
    addend: i64,
}

impl InstKey {
    fn of(inst: &Inst) -> InstKey {
        InstKey {
            word: inst.word,
            reloc: inst.reloc.as_ref().map(|r| RelocKey {
                kind: r.kind.code(),
                target: r.target,
                addend: r.addend,
            }),
        }
    }
}

/// `S`: the eligible functions' instructions as integers.
struct InstructionString {
    symbols: Vec<u32>,
    /// For each position, the instruction it stands for (`None`: a
    /// separator).
    sites: Vec<Option<Site>>,
    /// Separators count down from the top so they never meet an
    /// instruction's integer.
    next_separator: u32,
}

impl InstructionString {
    fn new(round: &Round<'_>, eligible: &[usize]) -> InstructionString {
        let functions = round.functions;
        let mut string = InstructionString {
            symbols: Vec::new(),
            sites: Vec::new(),
            next_separator: u32::MAX,
        };
        // Integers by first appearance, so they do not depend on hashing.
        let mut ids: HashMap<InstKey, u32> = HashMap::new();
        for &f in eligible {
            let func = &functions[f];
            let targets = branch_targets(func);
            let hot = round.hot_items(f);
            for (i, (label, item)) in func.items.iter().enumerate() {
                if targets.contains(label) {
                    string.push_separator();
                }
                match item {
                    Item::Inst(inst) if is_legal(inst) && !hot[i] => {
                        let next = ids.len() as u32;
                        string
                            .symbols
                            .push(*ids.entry(InstKey::of(inst)).or_insert(next));
                        string.sites.push(Some(Site {
                            function: f,
                            item: i,
                        }));
                        if inst.form.ends_flow() {
                            string.push_separator();
                        }
                    }
                    _ => string.push_separator(),
                }
            }
            string.push_separator();
        }
        string
    }

    fn push_separator(&mut self) {
        self.symbols.push(self.next_separator);
        self.sites.push(None);
        self.next_separator -= 1;
    }

    /// `len`, cut after the first call (a call may only end a sequence).
    fn trimmed_len(&self, round: &Round<'_>, start: usize, len: usize) -> usize {
        for k in 0..len {
            if let Some(site) = self.sites[start + k] {
                if round.inst(site).is_call() {
                    return k + 1;
                }
            }
        }
        len
    }
}
