//! The aarch64 machine outliner: repeated instruction sequences of a module's
//! emitted code become calls to one outlined function each.
//!
//! This is LLVM's MachineOutliner [Paquette 2016] as the global function
//! merger paper describes it ([Lee et al. 2023], §2.1): after register
//! allocation, identical straight-line sequences inside basic blocks, across
//! all functions of a module, are replaced by a parameterless call that
//! creates no frame; with a prefix tree from an earlier round of the build it
//! is also the global function outliner ([Lee et al. 2022]; [Lee et al.
//! 2023], §2.2). Cranelift exposes no post-regalloc instruction list, so the
//! pass works on the bytes it emits, lifted back to instructions by the
//! machine-code layer ([`crate::machine`]; `docs/DESIGN.md`, "Toolchain
//! facts").
//!
//! # Notation
//!
//! - A **function** is a [`MachFunction`], a **lifted** function a
//!   [`crate::machine::lift::LiftedFunction`] (the machine layer's
//!   notation): labelled items that lay out back to the original bytes
//!   when untouched. Relocation targets are module symbols by index
//!   ([`crate::machine::RelocTarget::Symbol`]) or outlined functions
//!   ([`crate::machine::RelocTarget::Outlined`]).
//! - `S` is the module's **instruction string**: one integer per instruction,
//!   equal for equal words with equal relocations, a fresh *separator* for
//!   every instruction that may not be outlined and at every block boundary.
//! - A **candidate** is a sequence of length ≥ 2 with its usable,
//!   non-overlapping occurrences; `B` is its size in bytes.
//!
//! # Modules
//!
//! One [`outliner::Outliner`] holds the module across the phases: the lifted
//! functions, the decoder, the outlined bodies so far and the statistics.
//!
//! | phase                                  | module         |
//! |----------------------------------------|----------------|
//! | decoding, register effects             | [`crate::machine::decode`] |
//! | lifting and laying out                 | [`crate::machine::lift`] |
//! | liveness                               | [`crate::machine::liveness`] |
//! | loops (the static estimate of hot)     | [`crate::machine::loops`], [`heat`] |
//! | repeats of a string                    | [`candidates`] |
//! | legality; local and global candidates  | [`find`]       |
//! | evaluation and greedy choice           | [`select`]     |
//! | bodies and call sequences              | [`rewrite`]    |
//! | layout, names, the result              | [`emit`]       |
//! | the prefix tree and its cgdata section | [`global`]     |
//! | the rounds                             | [`outliner`]   |
//!
//! # Algorithm
//!
//! 1. *Lift* every function ([`crate::machine::lift`]); functions that do not lift cleanly
//!    (unexplained data, unsupported relocations) stay opaque and untouched.
//!    *Shared* functions — expected identical in other modules: generic
//!    instances every module compiles, merged `*.Tgm` bodies
//!    ([`crate::merge::BODY_SUFFIX`]) — are outlined each against itself
//!    only, before the others, so every copy makes the same choices and the
//!    linker still folds them ([Lee et al. 2023], §4.2, with the function
//!    itself standing in for the global prefix tree).
//! 2. *Liveness* of registers per instruction ([`crate::machine::liveness`]).
//! 3. *Map* instructions to integers ([`find`]) and find the repeated
//!    substrings with a suffix array ([`candidates`]). A sequence may contain
//!    a call only as its last instruction and a return or tail call only as
//!    its last instruction (separators follow every instruction that ends the
//!    flow). LLVM also outlines calls mid-sequence into a function that saves
//!    `x30` on the stack, but only when the callee is known to take no stack
//!    arguments (moving `sp` would move them); machine code does not say, so
//!    such sequences are cut after their first call.
//!    Instructions inside a loop ([`heat`]: the natural loops of the block
//!    graph, [`crate::machine::loops`]) are separators too: an outlined
//!    sequence costs a call and a return on every iteration, so hot code is
//!    never outlined (measured on bench/ at `-Oz --two-rounds`: +1.3% bytes,
//!    and run time under qemu −6% in geomean, tokenizer −35%, the outliner
//!    alone −20%). Loops are blocks, not address ranges: Cranelift lays a
//!    loop's body out after the code that follows the loop, and that code
//!    is outlined like any other.
//!    With a profile ([`OutlineOptions::heat`], `crate::heat`), a function
//!    known hot is not outlined from at all and one known cold loses the
//!    loops' protection.
//! 4. *Legality* ([`find`]; LLVM's AArch64 rules,
//!    `AArch64InstrInfo::getOutliningType` and
//!    `getOutliningCandidateInfo`): no instruction that reads or writes
//!    `x30` except a final call or return; none that writes `sp` or `x29`
//!    (prologue, epilogue, frame set-up); no PC-relative instruction without
//!    a relocation (intra-function branches, `adr`, literal loads); no
//!    instruction with a trap record; `x16`, `x17` and NZCV dead where the
//!    sequence starts (a linker veneer on the new call may clobber them) and,
//!    when the outlined function returns to the occurrence (not for tail
//!    calls and thunks, whose final call or jump clobbers them anyway), where
//!    it ends.
//! 5. *Call variants* per occurrence ([`select`]), with LLVM's byte costs:
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
//!    outline while it is positive ([`select::choose`]).
//! 7. *Rewrite* ([`rewrite`]): replace each occurrence by its call sequence
//!    (the first item keeps the occurrence's label, so branches to it now
//!    reach the call), append the outlined function, and repeat from step 2
//!    on the rewritten functions (calls to outlined functions are ordinary
//!    calls whose effects summarise the body) until a round outlines nothing.
//! 8. *Lay out* every function ([`crate::machine::lift::LiftedFunction::layout`], [`emit`]):
//!    PC-relative fields, jump-table entries, relocations, traps and call
//!    sites move with their items. A function whose layout fails or grows
//!    keeps its original bytes, and if the module as a whole would not
//!    shrink, nothing changes.
//!
//! 9. *Global* (optional, [Lee et al. 2023], §2.2; [`global`]): with the
//!    prefix tree of an earlier round ([`OutlineOptions::global`]), every
//!    function's remaining instructions are matched against it after local
//!    outlining ([`find::global_candidates`]), and a published sequence is
//!    outlined even on a single local occurrence. Such candidates go through
//!    the same evaluation and greedy choice, priced by their call-site saving
//!    alone ([`select::Pricing::Global`]; ties: earlier, then longer).
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
//! # Remarks
//!
//! The outliner's decision is per candidate: [`select::choose`] takes it or
//! not. [`OutlineResult::remarks`] has one [`crate::remark::Remark`] per
//! decision (docs/REMARKS.md), in the order made:
//!
//! | decision        | kind     | on                                 | bytes | counts |
//! |-----------------|----------|------------------------------------|-------|--------|
//! | `outlined`      | passed   | the outlined function created      | the candidate's value when chosen (step 5 benefit, or the call-site saving for global candidates) | `outlined_functions` 1, `sequences_replaced`, `global_sequences` |
//! | `unprofitable`  | missed   | the function of the first occurrence | its value (≤ 0) | |
//! | `overlapped`    | missed   | the same                           | the value of the occurrences better candidates left it (≤ 0) | |
//! | `reverted`      | missed   | the same                           | as when chosen | |
//! | `kept-original` | missed   | a rewritten function               | | |
//! | `opaque`        | analysis | a function that does not lift      | | `opaque_functions` 1 |
//!
//! `reverted` replaces every `outlined` remark of a module that step 8
//! leaves untouched; `kept-original` is a function whose layout failed or
//! grew (its calls to outlined functions are dropped with its rewrite).
//! Candidates all of whose occurrences lie inside sequences already chosen
//! (the shorter prefixes of a chosen sequence) get no remark: nothing was
//! left to decide. So the `outlined` remarks' counts add up to
//! [`OutlineStats`].
//!
//! # Cost
//!
//! Lifting and liveness are linear in code size times the (small) number of
//! liveness iterations; the suffix array is `O(n log² n)` in the module's
//! instruction count; candidate evaluation is linear in the total number of
//! occurrences of all internal suffix-tree nodes.
//!
//! # References
//!
//! - [Paquette 2016] Jessica Paquette. *Reducing Code Size Using
//!   Outlining.* Talk at the 2016 LLVM Developers' Meeting, San Jose, CA,
//!   November 2016. <https://llvm.org/devmtg/2016-11/Slides/Paquette-Outliner.pdf>
//! - [Lee et al. 2022] Kyungwoo Lee, Ellis Hoag and Nikolai Tillmann.
//!   *Efficient Profile-Guided Size Optimization for Native Mobile
//!   Applications.* In Proceedings of the 31st ACM SIGPLAN International
//!   Conference on Compiler Construction (CC 2022), pages 243–253, 2022.
//!   <https://doi.org/10.1145/3497776.3517764> (the global function outliner)
//! - [Lee et al. 2023] Kyungwoo Lee, Manman Ren and Ellis Hoag. *Optimistic
//!   Global Function Merger.* arXiv:2312.03214 (cs.PL), December 2023.
//!   <https://arxiv.org/abs/2312.03214>
//!
//! All three are also listed in `docs/DESIGN.md`, "References".
//!
//! [Paquette 2016]: #references
//! [Lee et al. 2022]: #references
//! [Lee et al. 2023]: #references

pub mod candidates;
pub mod emit;
pub mod find;
pub mod global;
pub mod heat;
pub mod outliner;
pub mod rewrite;
pub mod select;

use std::fmt;
use std::sync::Arc;

use crate::heat::HotCode;
use crate::machine::decode::Decoder;
use crate::machine::lift::Emitted;
use crate::machine::MachFunction;
pub use emit::disassemble;
use global::OutlineTree;
use outliner::Outliner;

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
    pub(crate) fn call_bytes(self) -> u32 {
        match self {
            CallVariant::TailCall | CallVariant::Thunk | CallVariant::NoLrSave => 4,
            CallVariant::RegSave(_) | CallVariant::StackSave => 12,
        }
    }

    /// Index of the variant in [`OutlineStats::variants`].
    pub(crate) fn stat_index(self) -> usize {
        match self {
            CallVariant::TailCall => 0,
            CallVariant::Thunk => 1,
            CallVariant::NoLrSave => 2,
            CallVariant::RegSave(_) => 3,
            CallVariant::StackSave => 4,
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
    /// What is known of how often the code runs ([`crate::heat`]): nothing
    /// is outlined from a function known hot; a function known cold is
    /// outlined loops included; elsewhere loops are left alone ([`heat`]).
    pub heat: Arc<HotCode>,
}

impl Default for OutlineOptions {
    fn default() -> Self {
        OutlineOptions {
            max_rounds: 4,
            global: None,
            heat: Arc::default(),
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
    /// Instructions left alone as hot: inside loops, or in functions a
    /// profile knows hot ([`heat`]).
    pub hot_instructions: usize,
    /// Sequences skipped as hot: maximal runs of two or more hot
    /// instructions that could otherwise have been outlined.
    pub hot_sequences: usize,
    /// Functions a profile knows hot, from which nothing is outlined.
    pub hot_functions: usize,
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
        self.hot_instructions += other.hot_instructions;
        self.hot_functions += other.hot_functions;
        self.hot_sequences += other.hot_sequences;
    }
}

impl fmt::Display for OutlineStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [tail, thunk, no_lr, reg, stack] = self.variants;
        write!(
            f,
            "{} outlined functions, {} sequences replaced (tail {tail}, thunk {thunk}, \
             no-lr-save {no_lr}, reg-save {reg}, stack-save {stack}); code {} -> {} bytes \
             ({} saved); {} by the global tree; {} hot instructions left alone \
             ({} sequences skipped as hot, {} functions known hot); {} of {} functions opaque",
            self.outlined_functions,
            self.sequences_replaced,
            self.bytes_before,
            self.bytes_after,
            self.bytes_before as i64 - self.bytes_after as i64,
            self.global_sequences,
            self.hot_instructions,
            self.hot_sequences,
            self.hot_functions,
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
    /// One remark per decision (module `""`: the caller knows it), in the
    /// order made: see "Remarks" in the module doc.
    pub remarks: Vec<crate::remark::Remark>,
}

/// Outlines repeated sequences across `functions` (see the module doc).
/// `symbol_names[i]` names [`crate::machine::RelocTarget::Symbol`]`(i)`; names enter the
/// outlined functions' content hashes.
pub fn outline_module(
    functions: &[MachFunction],
    symbol_names: &[String],
    options: &OutlineOptions,
) -> OutlineResult {
    outline_module_decoding(functions, symbol_names, options, Decoder::new())
}

/// [`outline_module`] with `decoder`, which knows what the module's earlier
/// machine passes decoded (`crate::machine::decode::Decoded`).
pub fn outline_module_decoding(
    functions: &[MachFunction],
    symbol_names: &[String],
    options: &OutlineOptions,
    decoder: Decoder,
) -> OutlineResult {
    let mut outliner = Outliner::new(functions, symbol_names, &options.heat, decoder);
    outliner.local_rounds(options.max_rounds);
    if let Some(tree) = &options.global {
        outliner.global_round(tree);
    }
    outliner.finish()
}
