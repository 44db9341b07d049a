//! The aarch64 machine outliner: repeated instruction sequences of a module's
//! emitted code become calls to one outlined function each.
//!
//! This is LLVM's MachineOutliner (Paquette, 2016) as the global function
//! merger paper describes it (Lee et al., *Optimistic Global Function
//! Merger*, 2023, §2.1): after register allocation, identical straight-line
//! sequences inside basic blocks, across all functions of a module, are
//! replaced by a parameterless call that creates no frame. Cranelift exposes
//! no post-regalloc instruction list, so the pass works on the bytes it
//! emits, lifted back to instructions (DESIGN.md, "Outlining works on emitted
//! machine code").
//!
//! # Notation
//!
//! - A **function** is a [`MachFunction`]: bytes, block starts, external
//!   relocations, trap and call-site records, as Cranelift's `CompiledCode`
//!   gives them. Relocation targets are module symbols by index
//!   ([`RelocTarget::Symbol`]) or outlined functions ([`RelocTarget::Outlined`]).
//! - A **lifted** function ([`lift::LiftedFunction`]) is a list of labelled
//!   items — instructions with symbolic PC-relative targets, data, jump-table
//!   entries — that lays out back to the original bytes when untouched.
//! - `S` is the module's **instruction string**: one integer per instruction,
//!   equal for equal words with equal relocations, a fresh *separator* for
//!   every instruction that may not be outlined and at every block boundary.
//! - A **candidate** is a repeated substring of `S` of length ≥ 2 with its
//!   non-overlapping occurrences; `B` is its size in bytes.
//!
//! # Algorithm
//!
//! 1. *Lift* every function ([`lift`]); functions that do not lift cleanly
//!    (unexplained data, unsupported relocations) stay opaque and untouched.
//!    *Shared* functions — expected identical in other modules: generic
//!    instances every module compiles, merged `*.Tgm` bodies — are outlined
//!    each against itself only, before the others, so every copy makes the
//!    same choices and the linker still folds them (the paper's §4.2 rule,
//!    with the function itself standing in for the global prefix tree).
//! 2. *Liveness* of registers per instruction ([`liveness`]).
//! 3. *Map* instructions to integers and find the repeated substrings with a
//!    suffix array ([`candidates`]). A sequence may contain a call only as its
//!    last instruction and a return or tail call only as its last
//!    instruction (separators follow every instruction that ends the flow).
//!    LLVM also outlines calls mid-sequence into a function that saves `x30`
//!    on the stack, but only when the callee is known to take no stack
//!    arguments (moving `sp` would move them); machine code does not say, so
//!    such sequences are cut after their first call.
//! 4. *Legality* (LLVM's AArch64 rules, `AArch64InstrInfo::getOutliningType`
//!    and `getOutliningCandidateInfo`): no instruction that reads or writes
//!    `x30` except a final call or return; none that writes `sp` or `x29`
//!    (prologue, epilogue, frame set-up); no PC-relative instruction without
//!    a relocation (intra-function branches, `adr`, literal loads); no
//!    instruction with a trap record; `x16`, `x17` and NZCV dead where the
//!    sequence starts (a linker veneer on the new call may clobber them) and,
//!    when the outlined function returns to the occurrence (not for tail
//!    calls and thunks, whose final call or jump clobbers them anyway), where
//!    it ends.
//! 5. *Call variants* per occurrence, with LLVM's byte costs:
//!
//!    | variant      | when                                  | call site                                   | bytes | frame |
//!    |--------------|---------------------------------------|---------------------------------------------|-------|-------|
//!    | tail call    | sequence ends in `ret` or a tail jump | `b F`                                       | 4     | 0     |
//!    | thunk        | sequence ends in a call (`bl`/`blr`)  | `bl F` (the final call becomes `b`/`br`)    | 4     | 0     |
//!    | no LR save   | `x30` dead (saved by the frame)       | `bl F`                                      | 4     | 4     |
//!    | register save| a register free across the sequence   | `mov xR, x30; bl F; mov x30, xR`            | 12    | 4     |
//!    | stack save   | the sequence does not mention `sp`    | `str x30, [sp, #-16]!; bl F; ldr x30, [sp], #16` | 12 | 4 |
//!
//!    ("frame" is what the outlined function adds: the `ret`.) An occurrence
//!    is used only if its call is smaller than the sequence, so no function
//!    grows; a candidate's benefit is `Σ (B - call) - (B + frame)`.
//! 6. *Select* greedily by benefit (ties: longer, then earlier), dropping
//!    occurrences that overlap earlier choices and recomputing the benefit;
//!    outline while it is positive.
//! 7. *Rewrite*: replace each occurrence by its call sequence (the first item
//!    keeps the occurrence's label, so branches to it now reach the call),
//!    append the outlined function, and repeat from step 2 on the rewritten
//!    functions (calls to outlined functions are ordinary calls whose effects
//!    summarise the body) until a round outlines nothing.
//! 8. *Lay out* every function ([`lift::LiftedFunction::layout`]): PC-relative
//!    fields, jump-table entries, relocations, traps and call sites move with
//!    their items. A function whose layout fails or grows keeps its original
//!    bytes, and if the module as a whole would not shrink, nothing changes.
//!
//! 9. *Global* (optional, paper §2.2, [`global`]): with the prefix tree of
//!    an earlier round ([`OutlineOptions::global`]), every function's
//!    remaining instructions are matched against it after local outlining,
//!    and a published sequence is outlined even on a single local occurrence.
//!    Every module publishes the stable hashes of what it outlined
//!    ([`OutlineResult::published`]) for the next round.
//!
//! Outlined functions are named `OUTLINED_FUNCTION_<xxh3 of bytes and
//! relocations by symbol name>`: identical bodies in different modules get
//! identical names and bytes, so the driver's one-section-per-function objects
//! let `ld.lld --icf=all` fold them.
//!
//! # Invariants
//!
//! - An untouched function lays out to its exact original bytes and records.
//! - No function grows; no module grows from local outlining (global
//!   outlining may add bodies that only pay once the linker folds them with
//!   other modules' copies); every replaced sequence computes the
//!   same registers and memory as before, only `x30` (where dead), the chosen
//!   save register (where free) and the stack below `sp` (stack save) differ.
//! - The output depends only on the input: no hash-map order is observed.
//!
//! # Cost
//!
//! Lifting and liveness are linear in code size times the (small) number of
//! liveness iterations; the suffix array is `O(n log² n)` in the module's
//! instruction count; candidate evaluation is linear in the total number of
//! occurrences of all internal suffix-tree nodes.

pub mod candidates;
pub mod decode;
pub mod global;
pub mod lift;
pub mod liveness;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::Arc;

use cranelift_codegen::binemit::Reloc;
use cranelift_codegen::ir::TrapCode;
use hashbrown::HashMap;

use decode::{Decoder, Effects, Form, RegSet, CALL_KILLS, CALL_USES, IP0_IP1, LR, NZCV, SP};
use global::{OutlineTree, PrefixTree, MIN_GLOBAL_COUNT};
use lift::{Emitted, Inst, Item, Label, LiftedFunction};

/// An external reference of emitted code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MachReloc {
    /// Offset of the relocated field from the start of the function.
    pub offset: u32,
    pub kind: Reloc,
    pub target: RelocTarget,
    pub addend: i64,
}

/// What a relocation refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RelocTarget {
    /// A symbol of the module, by index into the symbol names given to
    /// [`outline_module`].
    Symbol(u32),
    /// The outlined function with this index in [`OutlineResult::outlined`].
    Outlined(u32),
    /// An offset in the function itself (never outlined across).
    FunctionOffset(u32),
}

/// One compiled function, as Cranelift emitted it.
#[derive(Clone, Debug, PartialEq)]
pub struct MachFunction {
    pub name: String,
    pub bytes: Vec<u8>,
    pub alignment: u32,
    /// Block start offsets (`machine_code_cfg_info`).
    pub bb_starts: Vec<u32>,
    pub relocs: Vec<MachReloc>,
    pub traps: Vec<(u32, TrapCode)>,
    /// Return addresses of call sites.
    pub call_sites: Vec<u32>,
    /// An identical copy of this function is expected in other modules (a
    /// generic instance, a merged `.Tgm` body): it is outlined against
    /// itself only, so every copy stays identical and the linker folds them.
    pub shared: bool,
}

impl MachFunction {
    /// The function as laid out by Cranelift (for callers that keep it).
    pub fn emitted(&self) -> Emitted {
        Emitted {
            bytes: self.bytes.clone(),
            alignment: self.alignment,
            relocs: self.relocs.clone(),
            traps: self.traps.clone(),
            call_sites: self.call_sites.clone(),
        }
    }
}

/// How an occurrence calls its outlined function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CallVariant {
    TailCall,
    Thunk,
    NoLrSave,
    /// Saves `x30` in the given register.
    RegSave(u32),
    StackSave,
}

impl CallVariant {
    /// Bytes at the call site.
    fn call_bytes(self) -> u32 {
        match self {
            CallVariant::TailCall | CallVariant::Thunk | CallVariant::NoLrSave => 4,
            CallVariant::RegSave(_) | CallVariant::StackSave => 12,
        }
    }

    fn stat_index(self) -> usize {
        match self {
            CallVariant::TailCall => 0,
            CallVariant::Thunk => 1,
            CallVariant::NoLrSave => 2,
            CallVariant::RegSave(_) => 3,
            CallVariant::StackSave => 4,
        }
    }
}

/// How an outlined function ends (LLVM's frame types).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FrameKind {
    /// The sequence ends in `ret` or a tail jump: nothing added.
    Tail,
    /// The sequence ends in a call, turned into a jump: nothing added.
    Thunk,
    /// A `ret` is appended.
    Default,
}

impl FrameKind {
    fn frame_bytes(self) -> u32 {
        match self {
            FrameKind::Tail | FrameKind::Thunk => 0,
            FrameKind::Default => 4,
        }
    }
}

/// Options of the outliner.
#[derive(Clone, Debug)]
pub struct OutlineOptions {
    /// Rounds of outlining at most (each round may outline sequences that
    /// contain calls to functions outlined before).
    pub max_rounds: u32,
    /// The prefix tree published by an earlier round of the build
    /// ([`global`]): sequences in it are outlined even with one local
    /// occurrence.
    pub global: Option<Arc<OutlineTree>>,
}

impl Default for OutlineOptions {
    fn default() -> Self {
        OutlineOptions {
            max_rounds: 4,
            global: None,
        }
    }
}

/// What the outliner did to one module.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OutlineStats {
    pub functions: usize,
    /// Functions that could not be lifted and were left untouched.
    pub opaque_functions: usize,
    /// Outlined functions created.
    pub outlined_functions: usize,
    /// Sequences replaced by calls.
    pub sequences_replaced: usize,
    /// Replaced sequences per call variant: tail call, thunk, no LR save,
    /// register save, stack save.
    pub variants: [usize; 5],
    /// Code bytes of the module before and after (outlined functions included).
    pub bytes_before: u64,
    pub bytes_after: u64,
    pub rounds: u32,
    /// Sequences outlined because the global prefix tree has them.
    pub global_sequences: usize,
}

impl OutlineStats {
    pub fn accumulate(&mut self, other: &OutlineStats) {
        self.functions += other.functions;
        self.opaque_functions += other.opaque_functions;
        self.outlined_functions += other.outlined_functions;
        self.sequences_replaced += other.sequences_replaced;
        for (a, b) in self.variants.iter_mut().zip(other.variants) {
            *a += b;
        }
        self.bytes_before += other.bytes_before;
        self.bytes_after += other.bytes_after;
        self.rounds = self.rounds.max(other.rounds);
        self.global_sequences += other.global_sequences;
    }
}

impl fmt::Display for OutlineStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [tail, thunk, no_lr, reg, stack] = self.variants;
        write!(
            f,
            "{} outlined functions, {} sequences replaced (tail {tail}, thunk {thunk}, \
             no-lr-save {no_lr}, reg-save {reg}, stack-save {stack}); code {} -> {} bytes \
             ({} saved); {} by the global tree; {} of {} functions opaque",
            self.outlined_functions,
            self.sequences_replaced,
            self.bytes_before,
            self.bytes_after,
            self.bytes_before as i64 - self.bytes_after as i64,
            self.global_sequences,
            self.opaque_functions,
            self.functions
        )
    }
}

/// An outlined function of the module.
#[derive(Clone, Debug, PartialEq)]
pub struct OutlinedFunction {
    /// `OUTLINED_FUNCTION_<content hash>`.
    pub name: String,
    pub code: Emitted,
}

/// The rewritten module.
#[derive(Clone, Debug, PartialEq)]
pub struct OutlineResult {
    /// The functions, in input order.
    pub functions: Vec<Emitted>,
    pub outlined: Vec<OutlinedFunction>,
    pub stats: OutlineStats,
    /// The stable hash sequences of the outlined functions, with the number
    /// of sequences each replaced: this module's part of the global tree.
    pub published: OutlineTree,
}

/// Outlines repeated sequences across `functions` (see the module doc).
/// `symbol_names[i]` names [`RelocTarget::Symbol`]`(i)`; names enter the
/// outlined functions' content hashes.
pub fn outline_module(
    functions: &[MachFunction],
    symbol_names: &[String],
    options: &OutlineOptions,
) -> OutlineResult {
    let mut decoder = Decoder::new();
    let mut lifted: Vec<LiftedFunction> = functions
        .iter()
        .map(|f| lift::lift(f, &mut decoder))
        .collect();
    let mut stats = OutlineStats {
        functions: functions.len(),
        opaque_functions: lifted.iter().filter(|f| f.opaque.is_some()).count(),
        bytes_before: functions.iter().map(|f| f.bytes.len() as u64).sum(),
        ..OutlineStats::default()
    };
    let mut bodies: Vec<OutlinedBody> = Vec::new();
    let shared = shared_functions(functions);
    // Shared functions alone, each against itself only: their outlining
    // depends on nothing else in the module, so every copy stays identical.
    for (i, _) in shared.iter().enumerate().filter(|(_, &s)| s) {
        let eligible: Vec<bool> = (0..lifted.len()).map(|j| j == i).collect();
        run_rounds(
            &mut lifted,
            &eligible,
            &mut bodies,
            &mut decoder,
            &mut stats,
            options,
        );
    }
    let eligible: Vec<bool> = shared.iter().map(|s| !s).collect();
    run_rounds(
        &mut lifted,
        &eligible,
        &mut bodies,
        &mut decoder,
        &mut stats,
        options,
    );
    if let Some(tree) = &options.global {
        let trie = PrefixTree::new(tree);
        global_round(
            &mut lifted,
            &trie,
            symbol_names,
            &mut bodies,
            &mut decoder,
            &mut stats,
        );
    }
    finish(functions, &lifted, &bodies, symbol_names, stats)
}

/// Which functions are outlined alone: those marked shared or named
/// `*.Tgm`, and every function whose bytes and relocation kinds equal one of
/// theirs. Relocation *targets* are ignored on purpose: `f<A>` calling `g<A>`
/// and `f<B>` calling `g<B>` fold in the linker when `g<A>` and `g<B>` do, so
/// they must stay alike too.
fn shared_functions(functions: &[MachFunction]) -> Vec<bool> {
    let content = |f: &MachFunction| -> Vec<u8> {
        let mut key = f.bytes.clone();
        for r in &f.relocs {
            key.extend_from_slice(&r.offset.to_le_bytes());
            key.extend_from_slice(&(r.kind as u32).to_le_bytes());
            key.extend_from_slice(&r.addend.to_le_bytes());
        }
        key
    };
    let marked: BTreeSet<Vec<u8>> = functions
        .iter()
        .filter(|f| f.shared || f.name.ends_with(".Tgm"))
        .map(content)
        .collect();
    functions
        .iter()
        .map(|f| {
            f.shared
                || f.name.ends_with(".Tgm")
                || (!marked.is_empty() && marked.contains(&content(f)))
        })
        .collect()
}

/// Outlines across the `eligible` functions until a round finds nothing.
fn run_rounds(
    lifted: &mut [LiftedFunction],
    eligible: &[bool],
    bodies: &mut Vec<OutlinedBody>,
    decoder: &mut Decoder,
    stats: &mut OutlineStats,
    options: &OutlineOptions,
) {
    let eligible: Vec<bool> = lifted
        .iter()
        .zip(eligible)
        .map(|(f, &e)| e && f.opaque.is_none())
        .collect();
    for round in 0..options.max_rounds {
        if outline_round(lifted, &eligible, bodies, decoder, stats) == 0 {
            break;
        }
        stats.rounds = stats.rounds.max(round + 1);
    }
}

/// An outlined function under construction.
struct OutlinedBody {
    items: Vec<(Label, Item)>,
    /// Effects of a call to it, for liveness in later rounds.
    call_effects: Effects,
    /// The instructions it replaced (as in the original functions).
    source: Vec<Item>,
    /// How many sequences it replaced.
    count: u64,
}

/// How many lengths, from the longest down, are tried for each repeat.
const MAX_PREFIXES: usize = 16;

/// Where an occurrence lies: function index, first item index.
type Site = (usize, usize);

/// A repeated sequence and its legal occurrences.
struct Candidate {
    len: usize,
    bytes: u32,
    frame: FrameKind,
    occurrences: Vec<(Site, CallVariant)>,
}

impl Candidate {
    fn benefit(&self) -> i64 {
        let saved: i64 = self
            .occurrences
            .iter()
            .map(|(_, v)| i64::from(self.bytes) - i64::from(v.call_bytes()))
            .sum();
        saved - i64::from(self.bytes + self.frame.frame_bytes())
    }
}

/// One round: finds candidates, selects, rewrites. Returns the number of
/// outlined functions created.
fn outline_round(
    lifted: &mut [LiftedFunction],
    eligible: &[bool],
    bodies: &mut Vec<OutlinedBody>,
    decoder: &mut Decoder,
    stats: &mut OutlineStats,
) -> usize {
    let live: Vec<Option<liveness::Liveness>> = lifted
        .iter()
        .zip(eligible)
        .map(|(f, &ok)| ok.then(|| liveness::compute(f)))
        .collect();
    let (string, sites) = instruction_string(lifted, eligible);
    let mut by_sequence: BTreeMap<Vec<u32>, BTreeSet<usize>> = BTreeMap::new();
    for repeat in candidates::repeats(&string, 2) {
        let first = repeat.starts[0];
        let len = trimmed_len(lifted, &sites, first, repeat.len);
        // The repeat and its shorter prefixes: a prefix occurs wherever the
        // repeat does (and maybe elsewhere: other repeats add those), and it
        // may be legal where the whole is not (flags live at its end).
        for prefix in (2..=len).rev().take(MAX_PREFIXES) {
            by_sequence
                .entry(string[first..first + prefix].to_vec())
                .or_default()
                .extend(repeat.starts.iter().copied());
        }
    }
    let mut cands: Vec<Candidate> = by_sequence
        .iter()
        .filter_map(|(seq, starts)| {
            let sites: Vec<Site> = starts.iter().filter_map(|&p| sites[p]).collect();
            evaluate(lifted, &live, seq.len(), &sites)
        })
        .filter(|c| c.benefit() > 0)
        .collect();
    cands.sort_by(|a, b| {
        b.benefit()
            .cmp(&a.benefit())
            .then(b.len.cmp(&a.len))
            .then(a.occurrences[0].0.cmp(&b.occurrences[0].0))
    });
    // Greedy selection.
    let mut taken: Vec<Vec<bool>> = lifted.iter().map(|f| vec![false; f.items.len()]).collect();
    let mut replacements: Vec<Vec<(usize, usize, CallVariant, u32)>> =
        vec![Vec::new(); lifted.len()];
    let mut created = 0;
    for mut cand in cands {
        cand.occurrences
            .retain(|&((f, i), _)| !taken[f][i..i + cand.len].iter().any(|&t| t));
        if cand.occurrences.is_empty() || cand.benefit() <= 0 {
            continue;
        }
        let ((f0, i0), _) = cand.occurrences[0];
        let mut body = make_body(&lifted[f0].items[i0..i0 + cand.len], cand.frame, decoder);
        body.count = cand.occurrences.len() as u64;
        let index = bodies.len() as u32;
        bodies.push(body);
        created += 1;
        for &((f, i), variant) in &cand.occurrences {
            taken[f][i..i + cand.len].iter_mut().for_each(|t| *t = true);
            replacements[f].push((i, cand.len, variant, index));
            stats.variants[variant.stat_index()] += 1;
            stats.sequences_replaced += 1;
        }
    }
    for (f, mut reps) in replacements.into_iter().enumerate() {
        if reps.is_empty() {
            continue;
        }
        reps.sort_unstable_by_key(|r| r.0);
        rewrite(&mut lifted[f], &reps, bodies, decoder);
    }
    stats.outlined_functions += created;
    created
}

/// Matches every function's remaining instructions against the global
/// prefix tree and outlines the matches that pay locally per occurrence,
/// largest saving first, one body per distinct sequence.
fn global_round(
    lifted: &mut [LiftedFunction],
    trie: &PrefixTree,
    symbol_names: &[String],
    bodies: &mut Vec<OutlinedBody>,
    decoder: &mut Decoder,
    stats: &mut OutlineStats,
) {
    let live: Vec<Option<liveness::Liveness>> = lifted
        .iter()
        .map(|f| f.opaque.is_none().then(|| liveness::compute(f)))
        .collect();
    // (saving, site, length, hashes, variant, frame).
    let mut matches = Vec::new();
    for (f, func) in lifted.iter().enumerate() {
        if func.opaque.is_some() {
            continue;
        }
        let targets = branch_targets(func);
        let hashes: Vec<Option<u64>> = func
            .items
            .iter()
            .map(|(_, item)| match item {
                Item::Inst(inst) if is_legal(inst) => global::stable_hash(inst, symbol_names),
                _ => None,
            })
            .collect();
        for i in 0..func.items.len() {
            let mut run = Vec::new();
            for (j, h) in hashes.iter().enumerate().skip(i) {
                let Some(h) = h else { break };
                if j > i && targets.contains(&func.items[j].0) {
                    break;
                }
                run.push(*h);
                let Item::Inst(inst) = &func.items[j].1 else {
                    break;
                };
                if inst.form.ends_flow() || inst.is_call() {
                    break;
                }
            }
            for (len, count) in trie.matches(run.iter().copied()) {
                if len < 2 || count < MIN_GLOBAL_COUNT {
                    continue;
                }
                if let Some(c) = evaluate(lifted, &live, len, &[(f, i)]) {
                    let (site, variant) = c.occurrences[0];
                    let saving = i64::from(c.bytes) - i64::from(variant.call_bytes());
                    matches.push((saving, site, len, run[..len].to_vec(), variant, c.frame));
                }
            }
        }
    }
    matches.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)).then(b.2.cmp(&a.2)));
    let mut taken: Vec<Vec<bool>> = lifted.iter().map(|f| vec![false; f.items.len()]).collect();
    let mut replacements: Vec<Vec<(usize, usize, CallVariant, u32)>> =
        vec![Vec::new(); lifted.len()];
    let mut body_of: BTreeMap<Vec<u64>, u32> = BTreeMap::new();
    for (_, (f, i), len, hashes, variant, frame) in matches {
        if taken[f][i..i + len].iter().any(|&t| t) {
            continue;
        }
        let index = *body_of.entry(hashes).or_insert_with(|| {
            bodies.push(make_body(&lifted[f].items[i..i + len], frame, decoder));
            stats.outlined_functions += 1;
            bodies.len() as u32 - 1
        });
        bodies[index as usize].count += 1;
        taken[f][i..i + len].iter_mut().for_each(|t| *t = true);
        replacements[f].push((i, len, variant, index));
        stats.variants[variant.stat_index()] += 1;
        stats.sequences_replaced += 1;
        stats.global_sequences += 1;
    }
    for (f, mut reps) in replacements.into_iter().enumerate() {
        if !reps.is_empty() {
            reps.sort_unstable_by_key(|r| r.0);
            rewrite(&mut lifted[f], &reps, bodies, decoder);
        }
    }
}

/// What makes two instructions alike: the word and its relocation (kind,
/// target, addend), if any.
type InstKey = (u32, Option<(u32, RelocTarget, i64)>);

/// The instruction string of the eligible functions, and for each position
/// the item it stands for (`None` for separators).
fn instruction_string(
    lifted: &[LiftedFunction],
    eligible: &[bool],
) -> (Vec<u32>, Vec<Option<Site>>) {
    let mut ids: HashMap<InstKey, u32> = HashMap::new();
    let mut string = Vec::new();
    let mut sites = Vec::new();
    // Separators count down from the top so they never meet an instruction id.
    let mut next_separator = u32::MAX;
    let mut separator = |string: &mut Vec<u32>, sites: &mut Vec<Option<Site>>| {
        string.push(next_separator);
        sites.push(None);
        next_separator -= 1;
    };
    for (f, func) in lifted.iter().enumerate() {
        if !eligible[f] {
            continue;
        }
        let targets = branch_targets(func);
        for (i, (label, item)) in func.items.iter().enumerate() {
            if targets.contains(label) {
                separator(&mut string, &mut sites);
            }
            match item {
                Item::Inst(inst) if is_legal(inst) => {
                    let key = (
                        inst.word,
                        inst.reloc
                            .as_ref()
                            .map(|r| (r.kind as u32, r.target, r.addend)),
                    );
                    let next = ids.len() as u32;
                    string.push(*ids.entry(key).or_insert(next));
                    sites.push(Some((f, i)));
                    if inst.form.ends_flow() {
                        separator(&mut string, &mut sites);
                    }
                }
                _ => separator(&mut string, &mut sites),
            }
        }
        separator(&mut string, &mut sites);
    }
    (string, sites)
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

/// Whether an instruction may be part of an outlined sequence (its position
/// is checked separately: calls and flow ends only last).
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

fn inst_at(lifted: &[LiftedFunction], (f, i): Site) -> &Inst {
    match &lifted[f].items[i].1 {
        Item::Inst(inst) => inst,
        _ => unreachable!("instruction-string sites are instructions"),
    }
}

/// `len`, cut after the first call (a call may only end a sequence).
fn trimmed_len(
    lifted: &[LiftedFunction],
    sites: &[Option<Site>],
    start: usize,
    len: usize,
) -> usize {
    for k in 0..len {
        if let Some(site) = sites[start + k] {
            if inst_at(lifted, site).is_call() {
                return k + 1;
            }
        }
    }
    len
}

/// Checks each occurrence of a sequence of `len` instructions at `sites`
/// and picks its call variant; `None` if no occurrence is usable.
fn evaluate(
    lifted: &[LiftedFunction],
    live: &[Option<liveness::Liveness>],
    len: usize,
    sites: &[Site],
) -> Option<Candidate> {
    let &(f0, i0) = sites.first()?;
    let last = inst_at(lifted, (f0, i0 + len - 1));
    let frame = if last.is_tail_jump() || matches!(last.form, Form::Ret { .. }) {
        FrameKind::Tail
    } else if last.is_call() {
        FrameKind::Thunk
    } else {
        FrameKind::Default
    };
    let bytes = 4 * len as u32;
    let mentions: RegSet = (0..len)
        .map(|k| inst_at(lifted, (f0, i0 + k)).effects.mentions())
        .fold(0, |a, b| a | b);
    let mut occurrences = Vec::new();
    let mut last_end: Option<Site> = None;
    for &(f, i) in sites {
        // Non-overlapping occurrences, left to right.
        if let Some((lf, le)) = last_end {
            if lf == f && i < le {
                continue;
            }
        }
        let Some(lv) = &live[f] else { continue };
        let live_in = lv.live_in[i];
        let live_out = lv.live_out[i + len - 1];
        if live_in & (IP0_IP1 | NZCV) != 0 {
            continue;
        }
        let variant = match frame {
            FrameKind::Tail => CallVariant::TailCall,
            FrameKind::Thunk => CallVariant::Thunk,
            FrameKind::Default => {
                if live_out & (IP0_IP1 | NZCV) != 0 {
                    continue;
                }
                if live_in & LR == 0 {
                    CallVariant::NoLrSave
                } else if let Some(r) = free_register(live_in | live_out | mentions) {
                    CallVariant::RegSave(r)
                } else if mentions & SP == 0 {
                    CallVariant::StackSave
                } else {
                    continue;
                }
            }
        };
        // Never grow a function.
        if variant.call_bytes() >= bytes {
            continue;
        }
        occurrences.push(((f, i), variant));
        last_end = Some((f, i + len));
    }
    (!occurrences.is_empty()).then_some(Candidate {
        len,
        bytes,
        frame,
        occurrences,
    })
}

/// A general-purpose register not in `busy` that may hold `x30` across a
/// call: caller-saved temporaries first, never x16–x18, x29, x30.
fn free_register(busy: RegSet) -> Option<u32> {
    (9..=15)
        .chain(0..=8)
        .chain(19..=28)
        .find(|&r| busy & decode::x(r) == 0)
}

/// The outlined function for `seq` (a copy of one occurrence).
fn make_body(seq: &[(Label, Item)], frame: FrameKind, decoder: &mut Decoder) -> OutlinedBody {
    let mut items: Vec<(Label, Item)> = seq
        .iter()
        .enumerate()
        .map(|(k, (_, item))| {
            let mut item = item.clone();
            if let Item::Inst(inst) = &mut item {
                inst.call_site = false;
            }
            (k as Label, item)
        })
        .collect();
    let (uses, defs) = seq.iter().fold((0, 0), |(u, d), (_, item)| match item {
        Item::Inst(i) => (u | i.effects.uses, d | i.effects.defs),
        _ => (u, d),
    });
    let call_effects = match frame {
        FrameKind::Tail => Effects {
            uses: uses | decode::RETURN_USES | CALL_USES,
            defs,
            kills: 0,
            writes_frame: false,
        },
        FrameKind::Thunk => {
            let Some((_, Item::Inst(last))) = items.last_mut() else {
                unreachable!("a thunk ends in a call")
            };
            last.word = match last.form {
                Form::Bl => 0x1400_0000 | (last.word & 0x03FF_FFFF),
                Form::Blr { rn } => 0xD61F_0000 | rn << 5,
                _ => unreachable!("a thunk ends in a call"),
            };
            last.form = Form::of(last.word);
            Effects {
                uses: uses | CALL_USES,
                defs: defs | CALL_KILLS,
                kills: CALL_KILLS,
                writes_frame: false,
            }
        }
        FrameKind::Default => {
            items.push((items.len() as Label, plain_inst(0xD65F_03C0, decoder)));
            Effects {
                uses,
                defs: defs | LR,
                kills: LR,
                writes_frame: false,
            }
        }
    };
    OutlinedBody {
        items,
        call_effects,
        source: seq.iter().map(|(_, item)| item.clone()).collect(),
        count: 0,
    }
}

/// An instruction without relocation or records.
fn plain_inst(word: u32, decoder: &mut Decoder) -> Item {
    Item::Inst(Inst {
        word,
        form: Form::of(word),
        target: None,
        reloc: None,
        trap: None,
        call_site: false,
        jump_table: false,
        effects: decoder.effects(word),
    })
}

/// A `b`/`bl` to outlined function `index`.
fn call_inst(link: bool, index: u32, effects: Effects) -> Item {
    let word = if link { 0x9400_0000 } else { 0x1400_0000 };
    Item::Inst(Inst {
        word,
        form: Form::of(word),
        target: None,
        reloc: Some(MachReloc {
            offset: 0,
            kind: Reloc::Arm64Call,
            target: RelocTarget::Outlined(index),
            addend: 0,
        }),
        trap: None,
        call_site: link,
        jump_table: false,
        effects,
    })
}

/// The call sequence replacing one occurrence.
fn call_sequence(
    variant: CallVariant,
    index: u32,
    bodies: &[OutlinedBody],
    decoder: &mut Decoder,
) -> Vec<Item> {
    let effects = bodies[index as usize].call_effects;
    match variant {
        CallVariant::TailCall => vec![call_inst(false, index, effects)],
        CallVariant::Thunk | CallVariant::NoLrSave => vec![call_inst(true, index, effects)],
        CallVariant::RegSave(r) => vec![
            // mov xR, x30
            plain_inst(0xAA1E_03E0 | r, decoder),
            call_inst(true, index, effects),
            // mov x30, xR
            plain_inst(0xAA00_03FE | r << 16, decoder),
        ],
        CallVariant::StackSave => vec![
            // str x30, [sp, #-16]!
            plain_inst(0xF81F_0FFE, decoder),
            call_inst(true, index, effects),
            // ldr x30, [sp], #16
            plain_inst(0xF841_07FE, decoder),
        ],
    }
}

/// Replaces each `(start, len, variant, body)` occurrence (sorted by start).
fn rewrite(
    func: &mut LiftedFunction,
    reps: &[(usize, usize, CallVariant, u32)],
    bodies: &[OutlinedBody],
    decoder: &mut Decoder,
) {
    let old = std::mem::take(&mut func.items);
    let mut items = Vec::with_capacity(old.len());
    let mut reps = reps.iter().peekable();
    let mut i = 0;
    while i < old.len() {
        match reps.peek() {
            Some(&&(start, len, variant, index)) if start == i => {
                reps.next();
                for (k, item) in call_sequence(variant, index, bodies, decoder)
                    .into_iter()
                    .enumerate()
                {
                    // The first call item keeps the occurrence's label.
                    let label = if k == 0 {
                        old[i].0
                    } else {
                        func.next_label += 1;
                        func.next_label - 1
                    };
                    items.push((label, item));
                }
                i += len;
            }
            _ => {
                items.push(old[i].clone());
                i += 1;
            }
        }
    }
    func.items = items;
}

/// Lays everything out, names the outlined functions, checks sizes.
fn finish(
    functions: &[MachFunction],
    lifted: &[LiftedFunction],
    bodies: &[OutlinedBody],
    symbol_names: &[String],
    mut stats: OutlineStats,
) -> OutlineResult {
    let untouched = |stats: OutlineStats| OutlineResult {
        functions: functions.iter().map(MachFunction::emitted).collect(),
        outlined: Vec::new(),
        published: OutlineTree::default(),
        stats: OutlineStats {
            outlined_functions: 0,
            sequences_replaced: 0,
            variants: [0; 5],
            global_sequences: 0,
            bytes_after: stats.bytes_before,
            ..stats
        },
    };
    let mut out_functions = Vec::with_capacity(functions.len());
    for (orig, func) in functions.iter().zip(lifted) {
        let emitted = match func.layout() {
            Ok(e) if e.bytes.len() <= orig.bytes.len() => e,
            // A layout failure or growth (alignment padding): keep the original.
            _ => orig.emitted(),
        };
        out_functions.push(emitted);
    }
    let mut outlined: Vec<OutlinedFunction> = Vec::with_capacity(bodies.len());
    let mut names_seen: HashMap<String, u32> = HashMap::new();
    for body in bodies {
        let func = LiftedFunction {
            name: String::new(),
            alignment: 4,
            items: body.items.clone(),
            opaque: None,
            next_label: body.items.len() as Label,
        };
        let Ok(code) = func.layout() else {
            return untouched(stats);
        };
        let hash = content_hash(&code, symbol_names, &outlined);
        let mut name = format!("OUTLINED_FUNCTION_{hash:016x}");
        let seen = names_seen.entry(name.clone()).or_insert(0);
        if *seen > 0 {
            name = format!("{name}_{seen}");
        }
        *seen += 1;
        outlined.push(OutlinedFunction { name, code });
    }
    stats.bytes_after = out_functions
        .iter()
        .map(|e| e.bytes.len() as u64)
        .sum::<u64>()
        + outlined
            .iter()
            .map(|o| o.code.bytes.len() as u64)
            .sum::<u64>();
    // Local outlining never grows a module; global outlining may, by the
    // bodies it creates optimistically for other modules' copies to fold.
    if stats.bytes_after > stats.bytes_before && stats.global_sequences == 0 {
        return untouched(stats);
    }
    let mut published = OutlineTree::default();
    for body in bodies {
        if let Some(hashes) = global::sequence_hashes(&body.source, symbol_names) {
            published.add(hashes, body.count);
        }
    }
    OutlineResult {
        functions: out_functions,
        outlined,
        stats,
        published,
    }
}

/// The xxh3 of an outlined function's bytes and relocations, with targets by
/// name (so it is the same in every module).
fn content_hash(code: &Emitted, symbol_names: &[String], earlier: &[OutlinedFunction]) -> u64 {
    let mut buf = code.bytes.clone();
    for r in &code.relocs {
        buf.extend_from_slice(&r.offset.to_le_bytes());
        buf.extend_from_slice(format!("{:?}", r.kind).as_bytes());
        let name = match r.target {
            RelocTarget::Symbol(s) => symbol_names.get(s as usize).map_or("?", |s| s.as_str()),
            RelocTarget::Outlined(o) => earlier.get(o as usize).map_or("?", |o| o.name.as_str()),
            RelocTarget::FunctionOffset(_) => "?",
        };
        buf.extend_from_slice(name.as_bytes());
        buf.push(0);
        buf.extend_from_slice(&r.addend.to_le_bytes());
    }
    xxhash_rust::xxh3::xxh3_64(&buf)
}

/// Disassembles emitted code, one instruction per line with its relocation
/// (for snapshots and `--emit asm`-like reports).
pub fn disassemble(
    code: &Emitted,
    symbol_names: &[String],
    outlined: &[OutlinedFunction],
) -> String {
    let decoder = Decoder::new();
    let mut out = String::new();
    let relocs: BTreeMap<u32, &MachReloc> = code.relocs.iter().map(|r| (r.offset, r)).collect();
    for (k, chunk) in code.bytes.chunks(4).enumerate() {
        let at = 4 * k as u32;
        let word = u32::from_le_bytes(chunk.try_into().unwrap_or([0; 4]));
        out.push_str(&format!(
            "{at:5x}:  {}",
            decoder.render(word, u64::from(at))
        ));
        if let Some(r) = relocs.get(&at) {
            let name = match r.target {
                RelocTarget::Symbol(s) => symbol_names.get(s as usize).cloned().unwrap_or_default(),
                RelocTarget::Outlined(o) => outlined
                    .get(o as usize)
                    .map_or_else(|| format!("outlined#{o}"), |o| o.name.clone()),
                RelocTarget::FunctionOffset(o) => format!("self+{o}"),
            };
            out.push_str(&format!("    ; {:?} {name}", r.kind));
        }
        out.push('\n');
    }
    out
}
