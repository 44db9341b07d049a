//! Machine-code peepholes: bytes Cranelift's aarch64 lowering leaves.
//!
//! Cranelift lowers each CLIF instruction on its own, so some sequences
//! come out longer than they need to be. Measured on bench/ at `-Oz
//! --two-rounds` (issue 13): 1,734 `adrp`+`add` pairs of a symbol's address
//! (lld relaxes a nearby one to `adr`+`nop`, keeping the `nop`), 699 tests
//! of a boolean as `tst wN, #0xff; b.ne`, 448 of them right after a
//! `cset`, compares repeated right after a `cset` of the same compare (the
//! lowering of `&&`/`||`: one compare for the value, one for the branch)
//! and 29 `uxtb` of a byte just loaded by `ldrb`. This pass removes them
//! from the lifted code ([`crate::machine::lift`]), as LLVM's
//! `AArch64MIPeepholeOpt` and `MachineCSE` do before emission
//! ([LLVM-MIPEEPHOLE]). Encodings are the Arm ARM's ([ARM-ARM] C4.1, C6.2,
//! `DecodeBitMasks`); the relocation of rule 1 is [AAELF64] §5.7.6's, and
//! the code model that allows it GCC's `-mcmodel=tiny` ([GCC-CMODEL]). Full
//! references: docs/DESIGN.md.
//!
//! # Notation
//!
//! - The items of a lifted function are in layout order; an item is a
//!   **join** if a branch, a jump table or an `adr` refers to its label, or
//!   it is the entry. A **straight run** is a sequence of instructions none
//!   of which, except the first, is a join: control enters it only at the
//!   top (it may leave early, through a conditional branch).
//! - A register is **byte-valued** at a point if on every path to it the
//!   register's last write left a value below 256 (`ldrb`, `uxtb`,
//!   `and #0xff`, `cset`, `mov #imm` with imm < 256, a `mov` of a
//!   byte-valued register).
//! - **Pure** instructions are the data-processing forms decoded exactly
//!   here ([`pure_operands`]): their result is a function of their source
//!   registers (and the flags, for `csel`); nothing else.
//!
//! # Rules
//!
//! 1. **Near address** (only with [`PeepholeOptions::near_symbols`]):
//!    `adrp xD, S; add xD, xD, :lo12:S` → `adr xD, S`, with the relocation
//!    `R_AARCH64_ADR_PREL_LO21` ([`RelocKind::Aarch64AdrPrelLo21`]). The
//!    linker checks its ±1 MiB range and reports a target out of it, so a
//!    wrong guess about the program's size is a link error, never a wrong
//!    address; the driver chooses the option (its "tiny code model") only
//!    for programs far below that size.
//! 2. **Repeated computation**: in a straight run, a pure instruction equal
//!    (word for word) to an earlier one whose destination is not among its
//!    sources is deleted when nothing between them may have written its
//!    sources or destinations (flags included): it would write the values
//!    already there. This removes the second `cmp` (and its `uxtb`s) of
//!    `cmp; cset; …; cmp; b.cond`.
//! 3. **Boolean branch**: `tst wN, #0xff; b.ne L` (`b.eq`) with `wN`
//!    byte-valued and the flags dead after the branch → `cbnz wN, L`
//!    (`cbz`): the low byte is the whole value.
//! 4. **Branch on the compare**: `cset wN, cc; cbnz wN, L` (`cbz`) with
//!    `wN` dead after the branch → `b.cc L` (`b.!cc`): the flags still hold
//!    the compare the `cset` read.
//! 5. **Extension of a byte**: `uxtb wN, wN` or `and wN, wN, #0xff` with
//!    `wN` byte-valued → deleted.
//! 6. **Compare of a byte**: `uxtb wD, wN; cmp wD, …` (or `and wD, wN,
//!    #0xff`) with `wN` byte-valued and `wD` dead after the compare →
//!    `cmp wN, …`: Cranelift extends both sides of an 8-bit compare, even
//!    a byte just loaded.
//! 7. **Constant operands**: a **constant** is one instruction making a
//!    value in `xT` (`movz`, `movn`, `orr` of a bitmask immediate with the
//!    zero register; a 32-bit form zero-extends). Cranelift materializes
//!    every constant operand in a register, so `mov x15, #-4; cmp x0, x15`,
//!    `mov x1, #0; str x1, [x0]` and `mov x9, #5; mov x2, x9`. Its
//!    **readers** are the instructions after it, in its straight run, that
//!    read `xT`, up to the first after which `xT` is dead or overwritten
//!    (at most [`LOOK`] items on). When every reader can do without `xT`,
//!    the constant is deleted and each reader rewritten:
//!    - `mov xU, xT` → the constant made in `xU` (`mov wU, wT`: its low
//!      half, by a 32-bit `movz`/`movn`);
//!    - `add`/`sub`/`adds`/`subs` (shifted register, no shift) with the
//!      constant as second operand, or either operand of an addition →
//!      the immediate form (`imm12`, optionally `lsl #12`); a negative
//!      constant swaps addition and subtraction (`cmp x0, #-4` is `cmn x0,
//!      #4`: `a + !v + 1` and `a + (-v)` carry and overflow alike for
//!      `v < 0`; zero keeps its operation);
//!    - a zero constant read where register 31 is the zero register (the
//!      value of a store, operands of shifted-register arithmetic and
//!      logic, conditional selects, two- and three-source data processing)
//!      → `xzr`.
//!
//!    The rewritten word is checked against the decoder: it reads what the
//!    reader read less `xT`, writes nothing more and overwrites the same.
//! 8. **Table index clamped twice**: before a jump-table `br`
//!    ([`crate::machine::lift::jump_table_bound`]), `movz xK, #n; cmp xI,
//!    xK; csel xI, xI, xK, lo` (the `umin` `crate::switches` puts before a
//!    `br_table` of a 64-bit index; or `cmp xI, #n`) followed by the
//!    sequence's `cmp wI, #n; [movz xB, #n;] csel xB, xI, xB, lo`, in one
//!    straight run with nothing else writing `xI`, `xK` or the flags. After
//!    the clamp `xI ≤ n < 2^32`, so `wI <u n` holds exactly when the first
//!    compare's `lo` did: the second `cmp` is deleted when the flags are
//!    dead after the sequence's `csel` and nothing between reads them;
//!    the clamp's `csel` too when `xI` is dead after the sequence's `csel`
//!    and nothing else between reads it (under `lo` the unclamped index is
//!    the clamped one, otherwise `xB` is selected).
//!
//! # Algorithm
//!
//! Per function: unless its words show nothing a rule could start at (no
//! `adrp` relocation under the tiny model, no `tst #0xff`, `uxtb` or `and
//! #0xff`, no pure word twice, no constant followed within four words by a
//! word rule 7 could rewrite for it), lift it; apply rule 1 and rule 2 in
//! one forward walk (rule 2 keeps the pure instructions of the current
//! straight run whose operands are intact); then compute register liveness
//! ([`crate::machine::liveness`]) on the result and apply rule 7 in one
//! walk (skipped without such a constant); then the byte-valued registers
//! (a forward dataflow: intersection at joins, the entry knows nothing) and
//! rules 3–6 in one more walk (skipped, with both analyses, when no item
//! could start one), on liveness computed again only if rule 7 changed
//! something; then, for a function with a jump table, rule 8 on liveness
//! computed once more; lay the items out again. A
//! function no rule changes keeps its bytes; a function that does not lift,
//! or whose new layout puts a branch out of range, keeps its code.
//!
//! # Invariants
//!
//! - Only instructions without trap or call-site records are deleted or
//!   replaced, and never a join: nothing that refers to an item loses it.
//! - Every register, flag and memory word holds, at every instruction that
//!   stays, the value it held before, except registers and flags that are
//!   dead there (rules 3, 4 and 6 leave the flags, `wN` or `wD`
//!   unwritten; rule 7 leaves `xT` unwritten where nothing reads it).
//! - A function never grows; the output depends only on the input.
//!
//! # Cost
//!
//! Lifting and layout are linear in the code; rule 2 keeps at most the pure
//! instructions of one straight run (linear in its length per instruction,
//! in practice a handful); liveness and the byte-valued dataflow iterate to
//! a fixed point over the items (a few passes for Cranelift's code).

use std::collections::BTreeSet;
use std::fmt;

use cranelift_codegen::binemit::Reloc;

use crate::machine::decode::{x, Decoder, Form, RegSet, NZCV, SP};
use crate::machine::lift::{self, Inst, Item, Label, LiftedFunction};
use crate::machine::{self, cfg, liveness};
use crate::machine::{MachFunction, MachReloc, RelocKind};
use crate::remark::Remark;

/// What the driver knows about the program the code goes into.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PeepholeOptions {
    /// Every symbol the code refers to lies within ±1 MiB of it once
    /// linked (rule 1).
    pub near_symbols: bool,
}

/// How often each rule fired in a module.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PeepholeStats {
    pub near_addresses: usize,
    pub repeated: usize,
    pub boolean_branches: usize,
    pub compare_branches: usize,
    pub byte_extensions: usize,
    pub compare_extensions: usize,
    /// Constants folded into the instructions that read them (rule 7).
    pub constant_operands: usize,
    /// Repeated clamps of a jump-table index deleted (rule 8).
    pub table_clamps: usize,
    /// Functions rewritten.
    pub functions: usize,
    pub bytes_before: u64,
    pub bytes_after: u64,
}

impl PeepholeStats {
    pub fn accumulate(&mut self, other: &PeepholeStats) {
        self.near_addresses += other.near_addresses;
        self.repeated += other.repeated;
        self.boolean_branches += other.boolean_branches;
        self.compare_branches += other.compare_branches;
        self.byte_extensions += other.byte_extensions;
        self.compare_extensions += other.compare_extensions;
        self.constant_operands += other.constant_operands;
        self.table_clamps += other.table_clamps;
        self.functions += other.functions;
        self.bytes_before += other.bytes_before;
        self.bytes_after += other.bytes_after;
    }

    fn changes(&self) -> usize {
        self.near_addresses
            + self.repeated
            + self.boolean_branches
            + self.compare_branches
            + self.byte_extensions
            + self.compare_extensions
            + self.constant_operands
            + self.table_clamps
    }
}

impl fmt::Display for PeepholeStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} near addresses, {} repeated computations, {} boolean branches, \
             {} branches on the compare, {} byte extensions, {} compares of bytes, \
             {} constant operands, {} repeated table clamps in {} functions; \
             code {} -> {} bytes",
            self.near_addresses,
            self.repeated,
            self.boolean_branches,
            self.compare_branches,
            self.byte_extensions,
            self.compare_extensions,
            self.constant_operands,
            self.table_clamps,
            self.functions,
            self.bytes_before,
            self.bytes_after
        )
    }
}

/// What the pass did to a module: its statistics and one remark per
/// function it rewrote or had to leave as it was.
#[derive(Clone, Debug, Default)]
pub struct PeepholeReport {
    pub stats: PeepholeStats,
    pub remarks: Vec<Remark>,
}

/// Rewrites every function of a module (see the module doc).
pub fn run(functions: &mut [MachFunction], options: &PeepholeOptions) -> PeepholeReport {
    run_decoding(functions, options, &mut Decoder::new())
}

/// [`run`] with `decoder`, which knows what the module's earlier machine
/// passes decoded (`crate::machine::decode::Decoded`).
pub fn run_decoding(
    functions: &mut [MachFunction],
    options: &PeepholeOptions,
    decoder: &mut Decoder,
) -> PeepholeReport {
    let mut report = PeepholeReport::default();
    let bytes = machine::rewrite_each(functions, |func| {
        rewrite_function(func, options, decoder, &mut report)
    });
    report.stats.bytes_before = bytes.before;
    report.stats.bytes_after = bytes.after;
    report
}

fn rewrite_function(
    func: &mut MachFunction,
    options: &PeepholeOptions,
    decoder: &mut Decoder,
    report: &mut PeepholeReport,
) {
    if !may_apply(func, options) {
        return;
    }
    let lifted = lift::lift(func, decoder);
    if lifted.opaque.is_some() {
        return;
    }
    let mut counts = PeepholeStats::default();
    let first = straight_run_rules(&lifted, options, &mut counts);
    // Rule 7 and rules 3–6 share the control flow and liveness of `first`
    // when rule 7 changes nothing (most functions).
    let mut flow = None;
    let second = constant_operand_rule(&first, &mut flow, decoder, &mut counts);
    let second = match second {
        Some(folded) => {
            flow = None;
            folded
        }
        None => first,
    };
    let third = dataflow_rules(&second, &mut flow, decoder, &mut counts);
    let third = clamped_index_rule(&third, &mut counts).unwrap_or(third);
    if counts.changes() == 0 {
        return;
    }
    match lift::relaid(func, &lifted, &third) {
        Some(code) => {
            let saved = func.bytes.len() as i64 - code.bytes.len() as i64;
            report
                .remarks
                .push(rewritten_remark(&func.name, &counts, saved));
            *func = code;
            counts.functions = 1;
            report.stats.accumulate(&counts);
        }
        None => report.remarks.push(Remark::missed(
            PASS,
            "kept-original",
            &func.name,
            "a branch of the rewritten code is out of range",
        )),
    }
}

/// Whether a rule may apply to `func`, from its words alone (data words
/// included: an over-approximation): most functions have nothing for the
/// pass, and lifting them, their liveness and their byte-valued registers
/// would cost a third of Cranelift's own time for nothing.
fn may_apply(func: &MachFunction, options: &PeepholeOptions) -> bool {
    let page = RelocKind::Cranelift(Reloc::Aarch64AdrPrelPgHi21);
    if options.near_symbols && func.relocs.iter().any(|r| r.kind == page) {
        return true;
    }
    let words: Vec<u32> = func.words().collect();
    let mut pure = std::collections::HashSet::new();
    words
        .iter()
        .any(|&w| is_dataflow_candidate(w) || (pure_word_operands(w).is_some() && !pure.insert(w)))
        || has_constant_candidate(&words)
        || has_jump_table(&words)
}

/// Whether rules 3, 5 or 6 could start at the word `w` (a `tst #0xff`, a
/// `uxtb` or an `and #0xff`).
fn is_dataflow_candidate(w: u32) -> bool {
    w & 0xFFFF_FC1F == 0x7200_1C1F
        || w & 0xFFFF_FC00 == 0x5300_1C00
        || w & 0xFFFF_FC00 == 0x1200_1C00
}

/// The pass's name in remarks.
const PASS: &str = "peephole";

/// The remark of a rewritten function: what each rule did to it.
fn rewritten_remark(function: &str, counts: &PeepholeStats, saved: i64) -> Remark {
    let rules = [
        ("near_addresses", counts.near_addresses, "near addresses"),
        ("repeated", counts.repeated, "repeated computations"),
        (
            "boolean_branches",
            counts.boolean_branches,
            "boolean branches",
        ),
        (
            "compare_branches",
            counts.compare_branches,
            "branches on the compare",
        ),
        ("byte_extensions", counts.byte_extensions, "byte extensions"),
        (
            "compare_extensions",
            counts.compare_extensions,
            "compares of bytes",
        ),
        (
            "constant_operands",
            counts.constant_operands,
            "constant operands",
        ),
        ("table_clamps", counts.table_clamps, "repeated table clamps"),
    ];
    let reason = rules
        .iter()
        .filter(|(_, n, _)| *n > 0)
        .map(|(_, n, what)| format!("{n} {what}"))
        .collect::<Vec<_>>()
        .join(", ");
    let mut remark = Remark::passed(PASS, "rewritten", function, &reason)
        .bytes(saved)
        .count("functions", 1);
    for (name, n, _) in rules {
        if n > 0 {
            remark = remark.count(name, n as u64);
        }
    }
    remark
}

// ---------------------------------------------------------------------------
// Rules 1 and 2: one forward walk over straight runs.

/// A pure instruction of the current straight run, still valid.
struct Available {
    word: u32,
    /// Registers (and flags) it reads or writes: a write to any ends it.
    operands: RegSet,
}

fn straight_run_rules(
    lifted: &LiftedFunction,
    options: &PeepholeOptions,
    stats: &mut PeepholeStats,
) -> LiftedFunction {
    let joins = joins(lifted);
    let mut items: Vec<(Label, Item)> = Vec::with_capacity(lifted.items.len());
    let mut available: Vec<Available> = Vec::new();
    let mut i = 0;
    while i < lifted.items.len() {
        let (label, item) = &lifted.items[i];
        if joins.contains(label) {
            available.clear();
        }
        let Item::Inst(inst) = item else {
            available.clear();
            items.push((*label, item.clone()));
            i += 1;
            continue;
        };
        if options.near_symbols {
            if let Some(adr) = near_address(inst, lifted.items.get(i + 1), &joins) {
                stats.near_addresses += 1;
                forget_written(&mut available, adr.effects.defs);
                items.push((*label, Item::Inst(adr)));
                i += 2;
                continue;
            }
        }
        let pure = pure_operands(inst);
        if pure.is_some() && available.iter().any(|a| a.word == inst.word) {
            stats.repeated += 1;
            i += 1;
            continue;
        }
        forget_written(&mut available, written(inst));
        if let Some(op) = pure {
            if op.dsts & op.srcs == 0 {
                available.push(Available {
                    word: inst.word,
                    operands: op.srcs | op.dsts,
                });
            }
        }
        if inst.form.ends_flow() {
            available.clear();
        }
        items.push((*label, item.clone()));
        i += 1;
    }
    LiftedFunction {
        items,
        ..lifted.clone()
    }
}

/// Items control can reach other than by falling through, and the entry.
fn joins(lifted: &LiftedFunction) -> BTreeSet<Label> {
    let mut joins = lifted.targeted_labels();
    joins.extend(lifted.items.first().map(|(label, _)| *label));
    joins
}

/// What `inst` may write: exactly for pure instructions, otherwise every
/// register it mentions (the decoder's over-approximation).
fn written(inst: &Inst) -> RegSet {
    pure_operands(inst).map_or(inst.effects.defs, |op| op.dsts)
}

/// Ends every available instruction whose operands `defs` may write.
fn forget_written(available: &mut Vec<Available>, defs: RegSet) {
    available.retain(|a| a.operands & defs == 0);
}

/// Rule 1: the `adr` replacing `inst` (an `adrp`) and `next` (its `add`).
fn near_address(
    inst: &Inst,
    next: Option<&(Label, Item)>,
    joins: &BTreeSet<Label>,
) -> Option<Inst> {
    let page = inst.reloc.as_ref()?;
    if inst.form != Form::Adrp || page.kind != RelocKind::Cranelift(Reloc::Aarch64AdrPrelPgHi21) {
        return None;
    }
    let (next_label, Item::Inst(add)) = next? else {
        return None;
    };
    let low = add.reloc.as_ref()?;
    let rd = inst.word & 31;
    let is_add_to_itself =
        add.word & 0xFFC0_0000 == 0x9100_0000 && add.word & 31 == rd && (add.word >> 5) & 31 == rd;
    if joins.contains(next_label)
        || !is_add_to_itself
        || low.kind != RelocKind::Cranelift(Reloc::Aarch64AddAbsLo12Nc)
        || (low.target, low.addend) != (page.target, page.addend)
        || add.trap.is_some()
        || add.call_site
    {
        return None;
    }
    let mut adr = inst.clone();
    adr.word = ADR | rd;
    adr.form = Form::Adr;
    adr.reloc = Some(MachReloc {
        kind: RelocKind::Aarch64AdrPrelLo21,
        ..page.clone()
    });
    Some(adr)
}

/// `adr x0, #0`.
const ADR: u32 = 0x1000_0000;

/// The exactly decoded operands of a pure instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PureOperands {
    pub srcs: RegSet,
    pub dsts: RegSet,
}

/// Register field `n` of `word` (bits `5n..5n+5` from `shift`).
fn field(word: u32, shift: u32) -> u32 {
    (word >> shift) & 31
}

/// `x<r>`, where register number 31 is the zero register (no bit).
fn zr_or(r: u32) -> RegSet {
    if r == 31 {
        0
    } else {
        x(r)
    }
}

/// `x<r>`, where register number 31 is the stack pointer.
fn sp_or(r: u32) -> RegSet {
    if r == 31 {
        SP
    } else {
        x(r)
    }
}

/// The operands of `inst` if it is one of the pure data-processing forms
/// (Arm ARM C4.1: add/sub immediate, shifted and extended register;
/// logical immediate and shifted register; `sbfm`/`ubfm`; `movz`/`movn`;
/// conditional select; two- and three-source data processing), and
/// writes no stack pointer. Anything else — loads, stores, branches,
/// `movk` and `bfm` (which read their destination), system instructions —
/// is `None`.
pub fn pure_operands(inst: &Inst) -> Option<PureOperands> {
    if inst.trap.is_some() || inst.call_site || inst.reloc.is_some() {
        return None;
    }
    pure_word_operands(inst.word)
}

/// [`pure_operands`] of an instruction word, records aside.
fn pure_word_operands(w: u32) -> Option<PureOperands> {
    if Form::of(w) != Form::Plain {
        return None;
    }
    let (rd, rn, rm) = (field(w, 0), field(w, 5), field(w, 16));
    let sets_flags = (w >> 29) & 1 == 1;
    let flags = |set: bool| if set { NZCV } else { 0 };
    let (srcs, dsts) = match w {
        // add/sub (immediate): rn and (unless flags are set) rd may be sp.
        _ if w & 0x1F80_0000 == 0x1100_0000 => {
            let dst = if sets_flags { zr_or(rd) } else { sp_or(rd) };
            (sp_or(rn), dst | flags(sets_flags))
        }
        // add/sub (shifted register).
        _ if w & 0x1F20_0000 == 0x0B00_0000 => {
            (zr_or(rn) | zr_or(rm), zr_or(rd) | flags(sets_flags))
        }
        // add/sub (extended register).
        _ if w & 0x1FE0_0000 == 0x0B20_0000 => {
            let dst = if sets_flags { zr_or(rd) } else { sp_or(rd) };
            (sp_or(rn) | zr_or(rm), dst | flags(sets_flags))
        }
        // Logical (immediate): `ands` (opc 11) sets flags; otherwise rd
        // 31 is sp.
        _ if w & 0x1F80_0000 == 0x1200_0000 => {
            let ands = (w >> 29) & 3 == 3;
            let dst = if ands { zr_or(rd) } else { sp_or(rd) };
            (zr_or(rn), dst | flags(ands))
        }
        // Logical (shifted register).
        _ if w & 0x1F00_0000 == 0x0A00_0000 => {
            let ands = (w >> 29) & 3 == 3;
            (zr_or(rn) | zr_or(rm), zr_or(rd) | flags(ands))
        }
        // sbfm (opc 00) and ubfm (opc 10); bfm reads rd.
        _ if w & 0x1F80_0000 == 0x1300_0000 && (w >> 29) & 1 == 0 => (zr_or(rn), zr_or(rd)),
        // movn (opc 00) and movz (opc 10); movk reads rd.
        _ if w & 0x1F80_0000 == 0x1280_0000 && (w >> 29) & 1 == 0 => (0, zr_or(rd)),
        // Conditional select (S = 0, op2 < 2): reads the flags.
        _ if w & 0x3FE0_0800 == 0x1A80_0000 => (zr_or(rn) | zr_or(rm) | NZCV, zr_or(rd)),
        // Data processing, two sources (divisions and shifts).
        _ if w & 0x7FE0_0000 == 0x1AC0_0000 => (zr_or(rn) | zr_or(rm), zr_or(rd)),
        // Data processing, three sources (madd, msub, widening multiplies).
        _ if w & 0x1F00_0000 == 0x1B00_0000 => {
            (zr_or(rn) | zr_or(rm) | zr_or(field(w, 10)), zr_or(rd))
        }
        _ => return None,
    };
    (dsts & SP == 0).then_some(PureOperands { srcs, dsts })
}

// ---------------------------------------------------------------------------
// Rules 3–5: liveness and byte-valued registers.

/// The control flow and liveness of a lifted function, computed once for
/// the rules that need them.
struct Flow {
    /// The labels control reaches other than by falling through ([`joins`]).
    joins: BTreeSet<Label>,
    succs: Vec<Vec<usize>>,
    live: liveness::Liveness,
}

impl Flow {
    /// `flow`, computed on `lifted` unless it already was.
    fn of<'a>(flow: &'a mut Option<Flow>, lifted: &LiftedFunction) -> &'a Flow {
        flow.get_or_insert_with(|| {
            let succs = cfg::successor_lists(lifted);
            let live = liveness::compute_on(lifted, &succs);
            Flow {
                joins: joins(lifted),
                succs,
                live,
            }
        })
    }
}

/// Rules 3–6 on `lifted`, whose [`Flow`] `flow` is (if computed).
fn dataflow_rules(
    lifted: &LiftedFunction,
    flow: &mut Option<Flow>,
    decoder: &mut Decoder,
    stats: &mut PeepholeStats,
) -> LiftedFunction {
    let candidate =
        |item: &(Label, Item)| matches!(&item.1, Item::Inst(i) if is_dataflow_candidate(i.word));
    if !lifted.items.iter().any(candidate) {
        return lifted.clone();
    }
    let Flow { joins, succs, live } = Flow::of(flow, lifted);
    let bytes = byte_valued(lifted, succs);
    let mut items: Vec<(Label, Item)> = Vec::with_capacity(lifted.items.len());
    let mut i = 0;
    while i < lifted.items.len() {
        let (label, item) = &lifted.items[i];
        let Item::Inst(inst) = item else {
            items.push((*label, item.clone()));
            i += 1;
            continue;
        };
        if let Some(r) = byte_extension_of_itself(inst) {
            if bytes[i] & x(r) != 0 && untouchable(inst).is_none() && !joins.contains(label) {
                stats.byte_extensions += 1;
                i += 1;
                continue;
            }
        }
        if let Some((compare_label, compare)) = lifted.items.get(i + 1) {
            let folded = compare_of_byte(inst, compare, bytes[i], live.live_out[i + 1]);
            if let Some(word) = folded.filter(|_| !joins.contains(compare_label)) {
                stats.compare_extensions += 1;
                // The compare takes the extension's label, which a branch
                // may name; its own was not a join.
                items.push((*label, Item::Inst(retyped(compare, word, decoder))));
                i += 2;
                continue;
            }
        }
        if let Some((branch_label, branch)) = lifted.items.get(i + 1) {
            if let Some(cbz) = boolean_branch(inst, branch, bytes[i], live.live_out[i + 1]) {
                if !joins.contains(branch_label) {
                    stats.boolean_branches += 1;
                    let cbz = retyped(branch, cbz, decoder);
                    let test = Test {
                        label: *label,
                        is_join: joins.contains(label),
                        live_after: live.live_out[i + 1],
                    };
                    push_branch(&mut items, cbz, test, decoder, stats);
                    i += 2;
                    continue;
                }
            }
        }
        items.push((*label, item.clone()));
        i += 1;
    }
    LiftedFunction {
        items,
        ..lifted.clone()
    }
}

/// Why an instruction must stay as it is (a record refers to it).
fn untouchable(inst: &Inst) -> Option<&'static str> {
    if inst.trap.is_some() {
        Some("trap record")
    } else if inst.call_site {
        Some("call site")
    } else {
        None
    }
}

/// Rule 6: the compare `next` reading `wN` where it read `wD`, if `ext`
/// is `uxtb wD, wN` (or `and wD, wN, #0xff`) with `wN` byte-valued
/// (`bytes`), `next` is a compare (`cmp`/`cmn`, immediate or shifted
/// register, either width) that reads `wD`, and `wD` is dead after it.
fn compare_of_byte(ext: &Inst, next: &Item, bytes: RegSet, live_after: RegSet) -> Option<u32> {
    let Item::Inst(next) = next else {
        return None;
    };
    let w = ext.word;
    let (d, n) = (field(w, 0), field(w, 5));
    let extends = w & 0xFFFF_FC00 == 0x5300_1C00 || w & 0xFFFF_FC00 == 0x1200_1C00;
    if !extends || d == n || d == 31 || n == 31 || bytes & x(n) == 0 || live_after & x(d) != 0 {
        return None;
    }
    if untouchable(ext).is_some() || untouchable(next).is_some() {
        return None;
    }
    let c = next.word;
    // Flag-setting add/sub with the zero register as destination.
    let is_compare = (c >> 29) & 1 == 1 && field(c, 0) == 31;
    let immediate = c & 0x1F80_0000 == 0x1100_0000;
    let shifted = c & 0x1F20_0000 == 0x0B00_0000;
    if !is_compare || !(immediate || shifted) {
        return None;
    }
    let mut word = c;
    let mut reads_d = false;
    let mut fields = vec![5];
    if shifted {
        fields.push(16);
    }
    for shift in fields {
        if field(c, shift) == d {
            word = word & !(31 << shift) | n << shift;
            reads_d = true;
        }
    }
    reads_d.then_some(word)
}

/// Rule 5: `r` if `inst` is `uxtb wR, wR` or `and wR, wR, #0xff`.
fn byte_extension_of_itself(inst: &Inst) -> Option<u32> {
    let w = inst.word;
    let (rd, rn) = (field(w, 0), field(w, 5));
    let uxtb = w & 0xFFFF_FC00 == 0x5300_1C00;
    let and_ff = w & 0xFFFF_FC00 == 0x1200_1C00;
    ((uxtb || and_ff) && rd == rn && rd != 31).then_some(rd)
}

/// Rule 3: the `cbz`/`cbnz` word replacing `tst wN, #0xff` (`inst`) and
/// the `b.eq`/`b.ne` after it, if `wN` is byte-valued (`bytes`) and the
/// flags are dead after the branch (`live_after`).
fn boolean_branch(inst: &Inst, branch: &Item, bytes: RegSet, live_after: RegSet) -> Option<u32> {
    let Item::Inst(branch) = branch else {
        return None;
    };
    let rn = field(inst.word, 5);
    let is_tst = inst.word & 0xFFFF_FC1F == 0x7200_1C1F;
    if !is_tst || rn == 31 || bytes & x(rn) == 0 || live_after & NZCV != 0 {
        return None;
    }
    if untouchable(inst).is_some() {
        return None;
    }
    // A branch to a label, or straight to a symbol (a check's trap path,
    // `R_AARCH64_CONDBR19`, which `cbz`/`cbnz` take as well).
    let symbolic = branch
        .reloc
        .as_ref()
        .is_some_and(|r| r.kind == RelocKind::Aarch64CondBr19);
    let reaches = branch.target.is_some() || symbolic;
    if branch.form != Form::BCond || !reaches || untouchable(branch).is_some() {
        return None;
    }
    match branch.word & 0xF {
        0x1 => Some(CBNZ_W | rn),
        0x0 => Some(CBZ_W | rn),
        _ => None,
    }
}

/// `cbz w0` and `cbnz w0` with a zero offset.
const CBZ_W: u32 = 0x3400_0000;
const CBNZ_W: u32 = 0x3500_0000;
/// `b.cond` with a zero offset and condition 0.
const B_COND: u32 = 0x5400_0000;

/// The instruction `item` (keeping its label target, if any) as the word
/// `word`.
fn retyped(item: &Item, word: u32, decoder: &mut Decoder) -> Inst {
    let Item::Inst(branch) = item else {
        unreachable!("rules 3, 4 and 6 match instructions")
    };
    let mut inst = branch.clone();
    inst.word = word;
    inst.form = Form::of(word);
    inst.effects = lift::control_effects(&inst, decoder.effects(word));
    inst
}

/// The `tst` of rule 3, where its `cbz`/`cbnz` goes.
struct Test {
    label: Label,
    is_join: bool,
    /// Live registers after the branch.
    live_after: RegSet,
}

/// Pushes the `cbz`/`cbnz` of rule 3 in place of `test` (it takes the
/// `tst`'s label, which a branch may name), or, by rule 4, the `b.cond`
/// that replaces it and the `cset` before it when the register is dead
/// after and nothing enters between the two.
fn push_branch(
    items: &mut Vec<(Label, Item)>,
    cbz: Inst,
    test: Test,
    decoder: &mut Decoder,
    stats: &mut PeepholeStats,
) {
    let rn = cbz.word & 31;
    let cset = items.last().and_then(|(_, item)| match item {
        Item::Inst(inst) => cset_condition(inst, rn),
        _ => None,
    });
    if let Some(cc) = cset {
        if !test.is_join && test.live_after & x(rn) == 0 {
            let (cset_label, _) = items.pop().expect("the cset");
            // `cbnz` branches when the `cset` condition held; `cbz` when
            // it did not (the inverse condition flips the low bit).
            let cond = if cbz.word & CBNZ_W == CBNZ_W {
                cc
            } else {
                cc ^ 1
            };
            let b_cond = retyped(&Item::Inst(cbz), B_COND | cond, decoder);
            // The `cset`'s label now names the branch; the labels of the
            // `tst` and the branch were not joins: nothing refers to them.
            items.push((cset_label, Item::Inst(b_cond)));
            stats.compare_branches += 1;
            return;
        }
    }
    items.push((test.label, Item::Inst(cbz)));
}

/// The condition `cc` if `inst` is `cset wR, cc` (`csinc wR, wzr, wzr,
/// !cc`), 32- or 64-bit, and not a record's instruction.
fn cset_condition(inst: &Inst, r: u32) -> Option<u32> {
    let w = inst.word;
    let is_cset = w & 0x7FFF_0FE0 == 0x1A9F_07E0 && w & 31 == r;
    let inverse = (w >> 12) & 0xF;
    // `al`/`nv` cannot be inverted: Cranelift never emits them in a cset.
    (is_cset && inverse < 0xE && untouchable(inst).is_none()).then_some(inverse ^ 1)
}

/// The byte-valued registers before every item (see the module doc).
fn byte_valued(lifted: &LiftedFunction, succs: &[Vec<usize>]) -> Vec<RegSet> {
    let n = lifted.items.len();
    const UNVISITED: RegSet = RegSet::MAX;
    let mut before = vec![UNVISITED; n];
    if n > 0 {
        before[0] = 0;
    }
    let mut changed = true;
    while changed {
        changed = false;
        for i in 0..n {
            let Item::Inst(inst) = &lifted.items[i].1 else {
                continue;
            };
            if before[i] == UNVISITED {
                continue;
            }
            let after = byte_transfer(inst, before[i]);
            for &s in &succs[i] {
                let met = before[s] & after;
                if met != before[s] {
                    before[s] = met;
                    changed = true;
                }
            }
        }
    }
    before
        .into_iter()
        .map(|b| if b == UNVISITED { 0 } else { b })
        .collect()
}

/// The byte-valued registers after `inst`, given those before it.
fn byte_transfer(inst: &Inst, before: RegSet) -> RegSet {
    let w = inst.word;
    let rd = field(w, 0);
    let after = before & !written(inst);
    if rd == 31 || inst.form != Form::Plain {
        return after;
    }
    let makes_byte = match w {
        // ldrb (unsigned offset, register offset, unscaled, pre/post index).
        _ if w & 0xFFC0_0000 == 0x3940_0000 => true,
        _ if w & 0xFFE0_0000 == 0x3840_0000 => true,
        _ if w & 0xFFE0_0C00 == 0x3860_0800 => true,
        // uxtb / and #0xff (32-bit forms zero the upper half).
        _ if w & 0xFFFF_FC00 == 0x5300_1C00 => true,
        _ if w & 0xFFFF_FC00 == 0x1200_1C00 => true,
        // cset (csinc wzr, wzr), 32 or 64 bits: 0 or 1.
        _ if w & 0x7FFF_0FE0 == 0x1A9F_07E0 => true,
        // movz wD/xD, #imm (no shift) below 256.
        _ if w & 0x7FE0_0000 == 0x5280_0000 => (w >> 5) & 0xFFFF < 256,
        // Logical (immediate): `and` with a byte, or `orr`/`eor` of a byte
        // with one (`eor w0, w0, #1` is `!b`).
        _ if w & 0x1F80_0000 == 0x1200_0000 => logical_immediate_keeps_byte(w, before),
        // Logical (shifted register, no shift; `mov` is `orr` with wzr):
        // `and` of a byte, `orr`/`eor` of two bytes.
        _ if w & 0x1F20_FC00 == 0x0A00_0000 => {
            let is_byte = |r: u32| r == 31 || before & x(r) != 0;
            let (rn, rm) = (field(w, 5), field(w, 16));
            match (w >> 29) & 3 {
                0 => is_byte(rn) && rn != 31 || is_byte(rm) && rm != 31,
                1 | 2 => is_byte(rn) && is_byte(rm),
                _ => false,
            }
        }
        _ => false,
    };
    if makes_byte {
        after | x(rd)
    } else {
        after
    }
}

/// Whether a logical-immediate `and`/`orr`/`eor` (not `ands`, whose
/// destination 31 is `wzr`; rule out `sp` too) leaves a byte: `and` with an
/// immediate below 256, `orr`/`eor` of a byte-valued register with one.
fn logical_immediate_keeps_byte(w: u32, before: RegSet) -> bool {
    let rn = field(w, 5);
    let Some(imm) = logical_immediate(w) else {
        return false;
    };
    match (w >> 29) & 3 {
        0 => imm < 256,
        1 | 2 => imm < 256 && (rn == 31 || before & x(rn) != 0),
        _ => false,
    }
}

/// The value of a logical instruction's immediate (`N:immr:imms`; Arm ARM
/// `DecodeBitMasks`), as the register width sees it.
fn logical_immediate(w: u32) -> Option<u64> {
    let sf = w >> 31;
    let n = (w >> 22) & 1;
    let immr = (w >> 16) & 63;
    let imms = (w >> 10) & 63;
    // The element size is the highest set bit of N:NOT(imms).
    let combined = (n << 6) | (!imms & 63);
    if combined == 0 {
        return None;
    }
    let len = 31 - combined.leading_zeros();
    let size = 1u32 << len;
    if len < 1 || (sf == 0 && n == 1) {
        return None;
    }
    let levels = size - 1;
    let s = imms & levels;
    let r = immr & levels;
    if s == levels {
        return None;
    }
    let ones = (1u64 << (s + 1)) - 1;
    let mask = if size == 64 {
        u64::MAX
    } else {
        (1u64 << size) - 1
    };
    let element = ((ones >> r) | (ones << ((size - r) % size))) & mask;
    let width = if sf == 1 { 64 } else { 32 };
    let mut value = 0u64;
    let mut at = 0;
    while at < width {
        value |= element << at;
        at += size;
    }
    Some(value)
}

// ---------------------------------------------------------------------------
// Rule 7: constant operands.

/// A constant one instruction makes (`movz`, `movn`, or `orr` of a bitmask
/// immediate with the zero register): its register and word, and the
/// whole 64-bit register value after it (a 32-bit form zero-extends).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Constant {
    reg: u32,
    word: u32,
    value: u64,
}

/// The constant `w` makes, if it is a one-word constant into `x0`–`x30`.
fn constant_def(w: u32) -> Option<Constant> {
    let (sf, rd, hw) = (w >> 31, field(w, 0), (w >> 21) & 3);
    let is_movz = w & 0x7F80_0000 == 0x5280_0000;
    let is_movn = w & 0x7F80_0000 == 0x1280_0000;
    let is_orr_zr = w & 0x7F80_03E0 == 0x3200_03E0;
    // `orr` with rd 31 writes sp; 32-bit moves have no hw of 2 or 3.
    if rd == 31 {
        return None;
    }
    let value = if (is_movz || is_movn) && (sf == 1 || hw < 2) {
        let shifted = (((w >> 5) & 0xFFFF) as u64) << (16 * hw);
        if is_movz {
            shifted
        } else {
            !shifted
        }
    } else if is_orr_zr {
        logical_immediate(w)?
    } else {
        return None;
    };
    let value = if sf == 1 { value } else { value & 0xFFFF_FFFF };
    Some(Constant {
        reg: rd,
        word: w,
        value,
    })
}

/// The value a reader of width `sf` (bit 31 of its word) sees in the
/// constant's register, sign-extended to 64 bits.
fn signed_value(c: Constant, sf: u32) -> i64 {
    if sf == 1 {
        c.value as i64
    } else {
        c.value as u32 as i32 as i64
    }
}

/// The word of `reader`, an instruction that reads the constant `c`'s
/// register, rewritten not to read it (rule 7), or `None`.
fn fold_constant(reader: u32, c: Constant) -> Option<u32> {
    copy_of_constant(reader, c)
        .or_else(|| immediate_operand(reader, c))
        .or_else(|| zero_register_operand(reader, c))
}

/// `mov xU, xT` (`orr` with the zero register, no shift) → the constant
/// made in `xU`; `mov wU, wT` → the same, when the constant's upper half
/// is zero, or else its low half made by a 32-bit `movz`/`movn`.
fn copy_of_constant(r: u32, c: Constant) -> Option<u32> {
    let (rd, rm) = (field(r, 0), field(r, 16));
    if r & 0x7FE0_FFE0 != 0x2A00_03E0 || rm != c.reg || rd == 31 {
        return None;
    }
    if r >> 31 == 1 || c.value >> 32 == 0 {
        return Some(c.word & !31 | rd);
    }
    move_wide_32(rd, c.value as u32)
}

/// `movz wD, #imm` or `movn wD, #imm` making `value`, if one does.
fn move_wide_32(rd: u32, value: u32) -> Option<u32> {
    for hw in 0..2 {
        for (base, v) in [(0x5280_0000, value), (0x1280_0000, !value)] {
            if v & !(0xFFFF << (16 * hw)) == 0 {
                return Some(base | hw << 21 | ((v >> (16 * hw)) & 0xFFFF) << 5 | rd);
            }
        }
    }
    None
}

/// `add`/`sub`/`adds`/`subs` (shifted register, no shift) reading the
/// constant as its second operand (or, for an addition, its first) → the
/// immediate form: `cmp x0, x15` with `x15 = -4` is `cmn x0, #4`. A negative
/// constant turns an addition into a subtraction of its magnitude and back:
/// `a - v` and `a + (-v)` set the same flags (the carry of `a + !v + 1` is
/// that of `a + (-v)` for `v < 0`; `v = 0` keeps its operation). The
/// immediate forms read register 31 as `sp`, not `xzr`: neither the other
/// operand nor (without flags) the destination may be 31.
fn immediate_operand(r: u32, c: Constant) -> Option<u32> {
    let is_add_sub_shifted = r & 0x1F20_0000 == 0x0B00_0000;
    let (rd, rn, rm) = (field(r, 0), field(r, 5), field(r, 16));
    let (sf, op, s) = (r >> 31, (r >> 30) & 1, (r >> 29) & 1);
    if !is_add_sub_shifted || (r >> 10) & 63 != 0 || (s == 0 && rd == 31) {
        return None;
    }
    let other = if rm == c.reg && rn != c.reg {
        rn
    } else if op == 0 && rn == c.reg && rm != c.reg {
        rm
    } else {
        return None;
    };
    if other == 31 {
        return None;
    }
    let v = signed_value(c, sf);
    let min = if sf == 1 { i64::MIN } else { i32::MIN as i64 };
    let (op, magnitude) = match v {
        0.. => (op, v as u64),
        _ if v != min => (op ^ 1, v.unsigned_abs()),
        _ => return None,
    };
    let (imm12, shift) = if magnitude < 4096 {
        (magnitude as u32, 0)
    } else if magnitude & 0xFFF == 0 && magnitude >> 12 < 4096 {
        ((magnitude >> 12) as u32, 1)
    } else {
        return None;
    };
    Some(sf << 31 | op << 30 | s << 29 | 0x1100_0000 | shift << 22 | imm12 << 10 | other << 5 | rd)
}

/// A zero constant read where register 31 is the zero register → that
/// register: the value of a store (`str xzr`), the operands of
/// `add`/`sub`/logical (shifted register), conditional selects, two- and
/// three-source data processing. A store whose address the constant is
/// (base or index) keeps it.
fn zero_register_operand(r: u32, c: Constant) -> Option<u32> {
    if c.value != 0 {
        return None;
    }
    let (values, addresses): (&[u32], &[u32]) = match r {
        // str/strb/strh (unsigned offset): Rt; the base is Rn.
        _ if r & 0x3FC0_0000 == 0x3900_0000 => (&[0], &[5]),
        // stur, post- and pre-index (not the unprivileged sttr).
        _ if r & 0x3FE0_0000 == 0x3800_0000 && (r >> 10) & 3 != 2 => (&[0], &[5]),
        // str (register offset): Rt; base Rn and index Rm.
        _ if r & 0x3FE0_0C00 == 0x3820_0800 => (&[0], &[5, 16]),
        // stp (post-index, offset, pre-index) of 32- or 64-bit registers.
        _ if r & 0x7E40_0000 == 0x2800_0000 && (1..=3).contains(&((r >> 23) & 7)) => {
            (&[0, 10], &[5])
        }
        // add/sub and logical (shifted register).
        _ if r & 0x1F20_0000 == 0x0B00_0000 || r & 0x1F00_0000 == 0x0A00_0000 => (&[5, 16], &[]),
        // Conditional select; two-source data processing.
        _ if r & 0x3FE0_0800 == 0x1A80_0000 || r & 0x7FE0_0000 == 0x1AC0_0000 => (&[5, 16], &[]),
        // Three-source data processing (Ra is bits 14:10).
        _ if r & 0x1F00_0000 == 0x1B00_0000 => (&[5, 10, 16], &[]),
        _ => return None,
    };
    if addresses.iter().any(|&shift| field(r, shift) == c.reg) {
        return None;
    }
    let word = values
        .iter()
        .filter(|&&shift| field(r, shift) == c.reg)
        .fold(r, |word, &shift| word | 31 << shift);
    (word != r).then_some(word)
}

/// Whether some one-word constant is read, within the next few words, by
/// an instruction rule 7 could rewrite: the cheap test that keeps
/// functions without one from being lifted for the rule.
fn has_constant_candidate(words: &[u32]) -> bool {
    words.iter().enumerate().any(|(k, &w)| {
        constant_def(w).is_some_and(|c| {
            words[k + 1..]
                .iter()
                .take(4)
                .any(|&r| fold_constant(r, c).is_some())
        })
    })
}

/// Rule 7 on `lifted` (see the module doc): every one-word constant whose
/// readers, up to the point its register dies, can all do without it is
/// deleted and its readers rewritten.
fn constant_operand_rule(
    lifted: &LiftedFunction,
    flow: &mut Option<Flow>,
    decoder: &mut Decoder,
    stats: &mut PeepholeStats,
) -> Option<LiftedFunction> {
    let words: Vec<u32> = lifted
        .items
        .iter()
        .filter_map(|(_, item)| match item {
            Item::Inst(inst) => Some(inst.word),
            _ => None,
        })
        .collect();
    if !has_constant_candidate(&words) {
        return None;
    }
    // The entry may go (the next item starts the function); a label a
    // branch names may not.
    let targeted = lifted.targeted_labels();
    let Flow { joins, live, .. } = Flow::of(flow, lifted);
    let mut folded = 0;
    let mut items = lifted.items.clone();
    let mut deleted = vec![false; items.len()];
    for def in 0..items.len() {
        let (label, Item::Inst(inst)) = &items[def] else {
            continue;
        };
        let Some(c) = constant_def(inst.word) else {
            continue;
        };
        // The next item takes the constant's label (block starts and the
        // entry name it): it must be an instruction nothing else enters.
        let next_is_free =
            matches!(items.get(def + 1), Some((next, Item::Inst(_))) if !targeted.contains(next));
        if targeted.contains(label)
            || !next_is_free
            || untouchable(inst).is_some()
            || inst.reloc.is_some()
        {
            continue;
        }
        let Some(rewrites) = constant_readers(&items, def, c, joins, live, decoder) else {
            continue;
        };
        for (j, word) in rewrites {
            items[j].1 = Item::Inst(retyped(&items[j].1, word, decoder));
        }
        items[def + 1].0 = items[def].0;
        deleted[def] = true;
        folded += 1;
    }
    if folded == 0 {
        return None;
    }
    stats.constant_operands += folded;
    let items = items
        .into_iter()
        .zip(deleted)
        .filter(|(_, gone)| !gone)
        .map(|(item, _)| item)
        .collect();
    Some(LiftedFunction {
        items,
        ..lifted.clone()
    })
}

/// The readers of the constant `c` made at item `def`, each with the word
/// that does without it, if every reader can and the register dies within
/// the straight run after `def` (at most [`LOOK`] items away).
///
/// `live` was computed before earlier rewrites of the same walk; those only
/// stop instructions reading registers, so it over-approximates the
/// liveness of the current items, which is the safe direction.
fn constant_readers(
    items: &[(Label, Item)],
    def: usize,
    c: Constant,
    joins: &BTreeSet<Label>,
    live: &liveness::Liveness,
    decoder: &mut Decoder,
) -> Option<Vec<(usize, u32)>> {
    let t = x(c.reg);
    let mut rewrites = Vec::new();
    if live.live_out[def] & t == 0 {
        return Some(rewrites);
    }
    for (j, (label, item)) in items.iter().enumerate().skip(def + 1).take(LOOK) {
        let Item::Inst(inst) = item else {
            return None;
        };
        if joins.contains(label) {
            return None;
        }
        if inst.effects.uses & t != 0 {
            if untouchable(inst).is_some() {
                return None;
            }
            let word = fold_constant(inst.word, c)?;
            // The rewritten word must read what the reader read, less the
            // constant, and write what it wrote.
            // (`defs` also names every register mentioned: compare within.)
            let (old, new) = (inst.effects, decoder.effects(word));
            if new.uses & (t | !old.uses) != 0
                || new.defs & !old.defs != 0
                || new.kills != old.kills
            {
                return None;
            }
            rewrites.push((j, word));
        } else if inst.effects.defs & t != 0 && inst.effects.kills & t == 0 {
            return None;
        }
        if inst.effects.kills & t != 0 || live.live_out[j] & t == 0 {
            return Some(rewrites);
        }
        if inst.form != Form::Plain {
            return None;
        }
    }
    None
}

/// How far after a constant rule 7 looks for the point its register dies.
const LOOK: usize = 16;

// ---------------------------------------------------------------------------
// Rule 8: a jump-table index clamped twice.

/// The instructions of rule 8 (indices into the items): the `umin`'s
/// `csel`, the sequence's `cmp` and `csel`, and whether the index register
/// is read between the two `csel`s other than by the `cmp`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct DoubleClamp {
    clamp: usize,
    compare: usize,
    select: usize,
    index_read_between: bool,
}

/// Whether some word of `words` may start a jump-table sequence (`adr
/// xA, #16` and a `br` three words on): rule 8's candidates.
fn has_jump_table(words: &[u32]) -> bool {
    words.windows(4).any(|w| {
        Form::of(w[0]) == Form::Adr
            && Form::Adr.offset(w[0]) == 16
            && matches!(Form::of(w[3]), Form::Br { .. })
    })
}

/// `csel xD, xN, xM, lo` (64-bit): `(d, n, m)`.
fn csel_lo(w: u32) -> Option<(u32, u32, u32)> {
    (w & 0xFFE0_FC00 == 0x9A80_3000).then(|| (field(w, 0), field(w, 5), field(w, 16)))
}

/// `cmp wN, #imm` or `cmp xN, #imm` (no shift): `(is_64, n, imm)`.
fn cmp_immediate(w: u32) -> Option<(bool, u32, u32)> {
    (w & 0x7FC0_001F == 0x7100_001F).then(|| (w >> 31 == 1, field(w, 5), (w >> 10) & 0xFFF))
}

/// `cmp xN, xM` (64-bit, no shift): `(n, m)`.
fn cmp_register(w: u32) -> Option<(u32, u32)> {
    (w & 0xFFE0_FC1F == 0xEB00_001F).then(|| (field(w, 5), field(w, 16)))
}

/// `movz xD, #imm16` or `movz wD, #imm16` (no shift): `(d, imm)`.
fn movz(w: u32) -> Option<(u32, u32)> {
    (w & 0x7FE0_0000 == 0x5280_0000).then(|| (field(w, 0), (w >> 5) & 0xFFFF))
}

/// Rule 8 on `lifted`: the repeated clamps deleted, or `None` if there
/// are none.
fn clamped_index_rule(
    lifted: &LiftedFunction,
    stats: &mut PeepholeStats,
) -> Option<LiftedFunction> {
    let table = |item: &(Label, Item)| matches!(&item.1, Item::Inst(i) if i.jump_table);
    if !lifted.items.iter().any(table) {
        return None;
    }
    let mut flow = None;
    let Flow { joins, live, .. } = Flow::of(&mut flow, lifted);
    let mut deleted = vec![false; lifted.items.len()];
    for br in 0..lifted.items.len() {
        if !table(&lifted.items[br]) {
            continue;
        }
        let Some(found) = double_clamp(&lifted.items, joins, br) else {
            continue;
        };
        let after = live.live_out[found.select];
        if after & NZCV != 0 {
            continue;
        }
        deleted[found.compare] = true;
        stats.table_clamps += 1;
        let Item::Inst(select) = &lifted.items[found.select].1 else {
            continue;
        };
        let index = field(select.word, 5);
        if after & x(index) == 0 && !found.index_read_between {
            deleted[found.clamp] = true;
            stats.table_clamps += 1;
        }
    }
    if !deleted.contains(&true) {
        return None;
    }
    let items = lifted.items.iter().zip(&deleted);
    let items = items
        .filter(|(_, &gone)| !gone)
        .map(|(item, _)| item.clone());
    Some(LiftedFunction {
        items: items.collect(),
        ..lifted.clone()
    })
}

/// The instructions of rule 8 before the jump-table `br` at `br` of
/// `items`, if they are there (module doc): scanning back from the
/// sequence's `csel xB, xI, xB, lo`, the nearest flag write is `cmp wI|xI,
/// #n` (the sequence's), the nearest write of `xI` or the flags before it
/// `csel xI, xI, xK, lo`, and the nearest before that `cmp xI, xK` with
/// `movz xK, #n` the nearest write of `xK` before it (or `cmp xI, #n`);
/// no join on the way, none of them with a record, nothing else writing
/// `xI`, `xK` or the flags, and nothing between the sequence's `cmp` and
/// `csel` reading the flags.
fn double_clamp(
    items: &[(Label, Item)],
    joins: &BTreeSet<Label>,
    br: usize,
) -> Option<DoubleClamp> {
    let inst = |j: usize| match &items[j].1 {
        Item::Inst(inst) => Some(inst),
        _ => None,
    };
    let select = (br.saturating_sub(5)..br).rev().find(|&j| {
        inst(j)
            .and_then(|i| csel_lo(i.word))
            .is_some_and(|(d, n, m)| d == m && d != n)
    })?;
    if (select + 1..=br).any(|j| joins.contains(&items[j].0)) {
        return None;
    }
    let (_, index, _) = csel_lo(inst(select)?.word)?;
    let mut compare: Option<(usize, u32)> = None;
    let mut clamp: Option<(usize, u32)> = None;
    let mut index_read_between = false;
    let mut bound_register: Option<(usize, u32, u32)> = None;
    let found = |compare: Option<(usize, u32)>, clamp: Option<(usize, u32)>, read: bool| {
        Some(DoubleClamp {
            clamp: clamp?.0,
            compare: compare?.0,
            select,
            index_read_between: read,
        })
    };
    for j in (select.saturating_sub(LOOK)..select).rev() {
        let here = inst(j)?;
        if untouchable(here).is_some() {
            return None;
        }
        let writes = written(here);
        match (compare, clamp, bound_register) {
            (None, _, _) => {
                if writes & NZCV != 0 {
                    let (_, _, imm) = cmp_immediate(here.word).filter(|c| c.1 == index)?;
                    compare = Some((j, imm));
                } else if writes & x(index) != 0 || here.effects.uses & NZCV != 0 {
                    return None;
                } else if here.effects.uses & x(index) != 0 {
                    index_read_between = true;
                }
            }
            (Some(_), None, _) => {
                if writes & (NZCV | x(index)) != 0 {
                    let (d, n, k) = csel_lo(here.word)?;
                    if d != index || n != index || k == index {
                        return None;
                    }
                    clamp = Some((j, k));
                } else if here.effects.uses & x(index) != 0 {
                    index_read_between = true;
                }
            }
            (Some((_, bound)), Some((_, k)), None) => {
                if writes & (NZCV | x(index) | x(k)) != 0 {
                    if let Some((n, imm)) = cmp_immediate(here.word)
                        .filter(|c| c.0)
                        .map(|(_, n, imm)| (n, imm))
                    {
                        if n != index || imm != bound {
                            return None;
                        }
                        return found(compare, clamp, index_read_between);
                    }
                    let (n, m) = cmp_register(here.word)?;
                    if n != index || m != k {
                        return None;
                    }
                    bound_register = Some((j, k, bound));
                }
            }
            (Some(_), Some(_), Some((_, k, bound))) => {
                if writes & x(k) != 0 {
                    let (d, imm) = movz(here.word)?;
                    if d != k || imm != bound {
                        return None;
                    }
                    return found(compare, clamp, index_read_between);
                }
            }
        }
        if joins.contains(&items[j].0) {
            return None;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::testing::{function, words};
    use crate::machine::RelocTarget;
    use cranelift_codegen::ir::TrapCode;

    const RET: u32 = 0xD65F_03C0;
    /// `cmp w0, #0x61`.
    const CMP_W0_61: u32 = 0x7101_841F;
    /// `uxtb w0, w27`.
    const UXTB_W0_W27: u32 = 0x5300_1F60;
    /// `cset x7, hs` (`csinc x7, xzr, xzr, lo`).
    const CSET_X7_HS: u32 = 0x9A9F_37E7;
    /// `tst w7, #0xff`.
    const TST_W7: u32 = 0x7200_1C1F | 7 << 5;
    /// `mov w0, #1`, `mov w0, #2`.
    const MOV_W0_1: u32 = 0x5280_0020;
    const MOV_W0_2: u32 = 0x5280_0040;
    /// `ldrb w1, [x1, #8]`, `uxtb w1, w1`.
    const LDRB_W1: u32 = 0x3940_2021;
    const UXTB_W1_W1: u32 = 0x5300_1C21;
    /// `ldr w1, [x1]`.
    const LDR_W1: u32 = 0xB940_0021;
    /// `adrp x3, sym`, `add x3, x3, :lo12:sym`.
    const ADRP_X3: u32 = 0x9000_0003;
    const ADD_X3: u32 = 0x9100_0063;
    /// `add w0, w0, #1` (its destination is a source).
    const ADD_W0_1: u32 = 0x1100_0400;

    /// `b.<cond> #offset`.
    fn b_cond(cond: u32, offset: i32) -> u32 {
        B_COND | ((((offset / 4) as u32) & 0x7_FFFF) << 5) | cond
    }

    fn run_on(f: &mut MachFunction, near_symbols: bool) -> PeepholeStats {
        let report = run(std::slice::from_mut(f), &PeepholeOptions { near_symbols });
        report.stats
    }

    /// `mov x2, #3; cmp x1, x2; csel x1, x1, x2, lo` (the `umin` of a
    /// 64-bit index), then the jump-table sequence's `cmp w1, #3; csel x2,
    /// x1, x2, lo` (its `movz x2, #3` deleted by rule 2).
    const MOVZ_X2_3: u32 = 0xD280_0062;
    const CMP_X1_X2: u32 = 0xEB02_003F;
    const CLAMP_X1: u32 = 0x9A82_3021;
    const CMP_W1_3: u32 = 0x7100_0C3F;
    const SELECT_X2: u32 = 0x9A82_3022;
    /// `adr x3, #16; ldrsw x2, [x3, w2, uxtw #2]; add x3, x3, x2; br x3`.
    const TABLE_TAIL: [u32; 4] = [0x1000_0083, 0xB8A2_5862, 0x8B02_0063, 0xD61F_0060];

    /// A function dispatching through a table of four entries, all to
    /// `target` right after the table.
    fn table_function(prefix: &[u32], target: &[u32]) -> MachFunction {
        let words: Vec<u32> = prefix
            .iter()
            .chain(&TABLE_TAIL)
            .chain(&[16; 4])
            .chain(target)
            .copied()
            .collect();
        function(&words)
    }

    #[test]
    fn a_table_index_is_clamped_once() {
        // The target overwrites x1: the clamp's result is dead too.
        let target = [0xD280_0001, MOV_W0_1, RET];
        let prefix = [MOVZ_X2_3, CMP_X1_X2, CLAMP_X1, CMP_W1_3, SELECT_X2];
        let mut f = table_function(&prefix, &target);
        let stats = run_on(&mut f, false);
        assert_eq!(stats.table_clamps, 2);
        let expected = table_function(&[MOVZ_X2_3, CMP_X1_X2, SELECT_X2], &target);
        assert_eq!(words(&f), words(&expected));
        // The return reads x1 (the clamped index): only the `cmp` goes.
        let target = [MOV_W0_1, RET];
        let mut f = table_function(&prefix, &target);
        assert_eq!(run_on(&mut f, false).table_clamps, 1);
        let expected = table_function(&[MOVZ_X2_3, CMP_X1_X2, CLAMP_X1, SELECT_X2], &target);
        assert_eq!(words(&f), words(&expected));
        // A second run finds the table (the lifter knows the shorter
        // sequence) and nothing more to delete.
        assert_eq!(run_on(&mut f, false).table_clamps, 0);
        assert_eq!(words(&f), words(&expected));
    }

    #[test]
    fn clamps_that_do_not_repeat_stay() {
        let target = [0xD280_0001, MOV_W0_1, RET];
        /// `csel x1, x1, x2, hs`, `mov x2, #4`, `add x1, x1, #1`.
        const CLAMP_HS: u32 = 0x9A82_2021;
        const MOVZ_X2_4: u32 = 0xD280_0082;
        const ADD_X1_1: u32 = 0x9100_0421;
        let cases: [&[u32]; 3] = [
            // The sequence's bound is not the clamp's.
            &[
                MOVZ_X2_4, CMP_X1_X2, CLAMP_X1, CMP_W1_3, MOVZ_X2_3, SELECT_X2,
            ],
            // Not a clamp: the other value kept on `hs`.
            &[MOVZ_X2_3, CMP_X1_X2, CLAMP_HS, CMP_W1_3, SELECT_X2],
            // The index changes between the clamp and the sequence.
            &[
                MOVZ_X2_3, CMP_X1_X2, CLAMP_X1, ADD_X1_1, CMP_W1_3, MOVZ_X2_3, SELECT_X2,
            ],
        ];
        for prefix in cases {
            let mut f = table_function(prefix, &target);
            let stats = run_on(&mut f, false);
            assert_eq!(stats.table_clamps, 0, "{prefix:x?}");
        }
    }

    fn address_relocs(f: &mut MachFunction, adrp_at: u32) {
        for (offset, kind) in [
            (adrp_at, Reloc::Aarch64AdrPrelPgHi21),
            (adrp_at + 4, Reloc::Aarch64AddAbsLo12Nc),
        ] {
            f.relocs.push(MachReloc {
                offset,
                kind: kind.into(),
                target: RelocTarget::Symbol(5),
                addend: 16,
            });
        }
    }

    #[test]
    fn near_address_becomes_adr_only_when_asked() {
        let mut f = function(&[ADRP_X3, ADD_X3, RET]);
        address_relocs(&mut f, 0);
        let original = f.clone();
        assert_eq!(run_on(&mut f, false).changes(), 0);
        assert_eq!(f, original, "an untouched function keeps its bytes");
        assert_eq!(run_on(&mut f, true).near_addresses, 1);
        assert_eq!(words(&f), vec![ADR | 3, RET]);
        assert_eq!(
            f.relocs,
            vec![MachReloc {
                offset: 0,
                kind: RelocKind::Aarch64AdrPrelLo21,
                target: RelocTarget::Symbol(5),
                addend: 16,
            }]
        );
    }

    #[test]
    fn near_address_needs_the_pair() {
        // The `add` is a branch target: something enters between the two.
        let mut f = function(&[b_cond(0, 8), ADRP_X3, ADD_X3, RET]);
        address_relocs(&mut f, 4);
        let f = rewritten(f, true);
        assert_eq!(words(&f)[1..3], [ADRP_X3, ADD_X3]);
    }

    fn rewritten(mut f: MachFunction, near_symbols: bool) -> MachFunction {
        run_on(&mut f, near_symbols);
        f
    }

    /// `a && b`'s lowering: the compare for the value, again for the branch.
    #[test]
    fn repeated_compare_and_extension_go() {
        let f = function(&[
            UXTB_W0_W27,
            CMP_W0_61,
            CSET_X7_HS,
            UXTB_W0_W27,
            CMP_W0_61,
            b_cond(3, 8),
            MOV_W0_1,
            RET,
        ]);
        let f = rewritten(f, false);
        assert_eq!(
            words(&f),
            vec![
                UXTB_W0_W27,
                CMP_W0_61,
                CSET_X7_HS,
                b_cond(3, 8),
                MOV_W0_1,
                RET
            ]
        );
    }

    #[test]
    fn repeated_computation_stays_when_its_operands_change() {
        // `add w0, w0, #1` reads what it writes; the second `uxtb` follows
        // a write of w0; the second `cmp` is a branch target.
        let cases: [&[u32]; 3] = [
            &[ADD_W0_1, ADD_W0_1, RET],
            &[UXTB_W0_W27, MOV_W0_1, UXTB_W0_W27, RET],
            &[CMP_W0_61, b_cond(0, 8), MOV_W0_2, CMP_W0_61, RET],
        ];
        for words_in in cases {
            let f = rewritten(function(words_in), false);
            assert_eq!(words(&f), words_in.to_vec());
        }
    }

    #[test]
    fn boolean_test_becomes_cbnz_then_branch_on_compare() {
        // cset x9, hs; tst w9, #0xff; b.ne +12; mov w0, #1; ret; ret
        let cset_x9_hs = 0x9A9F_37E9;
        let tst_w9 = 0x7200_1C1F | 9 << 5;
        let input = [
            CMP_W0_61,
            cset_x9_hs,
            tst_w9,
            b_cond(1, 12),
            MOV_W0_1,
            RET,
            RET,
        ];
        let f = rewritten(function(&input), false);
        // x9 is dead after the branch: the cset goes too and the branch
        // tests the compare's condition (hs = 2).
        assert_eq!(
            words(&f),
            vec![CMP_W0_61, b_cond(2, 12), MOV_W0_1, RET, RET]
        );
        // x7 may be read by the return (a result register): cbnz only.
        let input = [
            CMP_W0_61,
            CSET_X7_HS,
            TST_W7,
            b_cond(1, 12),
            MOV_W0_1,
            RET,
            RET,
        ];
        let f = rewritten(function(&input), false);
        assert_eq!(
            words(&f),
            vec![
                CMP_W0_61,
                CSET_X7_HS,
                CBNZ_W | 7 | (3 << 5),
                MOV_W0_1,
                RET,
                RET
            ]
        );
    }

    #[test]
    fn boolean_test_at_a_join_keeps_the_value() {
        // Two paths set x7 to 0 or 1 and meet at the `tst`.
        let f = function(&[
            CMP_W0_61,
            CSET_X7_HS,
            b_cond(0, 12),
            MOVZ_X7_0,
            CMP_W0_61,
            TST_W7,
            b_cond(1, 8),
            RET,
            RET,
        ]);
        let f = rewritten(f, false);
        let w = words(&f);
        // The second `cmp` repeats the first only on the fall-through path,
        // but it is not a join and nothing wrote w0: it goes. The `tst` is
        // a join: x7 is byte-valued on both paths, so it is a `cbnz`, and
        // the `cset` before it stays (control also enters at the test).
        assert_eq!(w[0..4], [CMP_W0_61, CSET_X7_HS, b_cond(0, 8), MOVZ_X7_0]);
        assert_eq!(w[4], CBNZ_W | 7 | (2 << 5));
    }

    /// `mov x7, #0`.
    const MOVZ_X7_0: u32 = 0xD280_0007;

    #[test]
    fn boolean_test_of_an_unknown_value_stays() {
        // w1 comes from a 32-bit load: its upper bytes may be non-zero.
        let tst_w1 = 0x7200_1C1F | 1 << 5;
        let input = [LDR_W1, tst_w1, b_cond(1, 8), RET, RET];
        let f = rewritten(function(&input), false);
        assert_eq!(words(&f), input.to_vec());
    }

    #[test]
    fn byte_extension_after_ldrb_goes() {
        let f = rewritten(function(&[LDRB_W1, UXTB_W1_W1, RET]), false);
        assert_eq!(words(&f), vec![LDRB_W1, RET]);
        let f = rewritten(function(&[LDR_W1, UXTB_W1_W1, RET]), false);
        assert_eq!(words(&f), vec![LDR_W1, UXTB_W1_W1, RET]);
    }

    #[test]
    fn logical_immediates_decode() {
        // and w0, w0, #0xff; eor w0, w0, #1; and x0, x0, #0xfffffffffffffffe;
        // orr w0, w0, #0x80000000.
        assert_eq!(logical_immediate(0x1200_1C00), Some(0xFF));
        assert_eq!(logical_immediate(0x5200_0000), Some(1));
        assert_eq!(logical_immediate(0x927F_F800), Some(0xFFFF_FFFF_FFFF_FFFE));
        assert_eq!(logical_immediate(0x3201_0000), Some(0x8000_0000));
    }

    #[test]
    fn negated_boolean_stays_byte_valued() {
        // cset x9, hs; eor w9, w9, #1; tst w9, #0xff; b.ne
        let eor_w9 = 0x5200_0000 | 9 << 5 | 9;
        let tst_w9 = 0x7200_1C1F | 9 << 5;
        let input = [0x9A9F_37E9, eor_w9, tst_w9, b_cond(1, 8), RET, RET];
        let f = rewritten(function(&input), false);
        assert_eq!(
            words(&f),
            vec![0x9A9F_37E9, eor_w9, CBNZ_W | 9 | (2 << 5), RET, RET]
        );
    }

    #[test]
    fn compare_reads_the_byte_itself() {
        // ldrb w9, [x1, #8]; uxtb w10, w9; cmp w10, #0x30; b.lo; ret; ret
        // (x9 and x10 are not result registers: dead at the returns).
        let ldrb_w9 = 0x3940_2029;
        let uxtb_w10_w9 = 0x5300_1C00 | 9 << 5 | 10;
        let cmp_w10 = 0x7100_C01F | 10 << 5;
        let cmp_w9 = 0x7100_C01F | 9 << 5;
        let input = [ldrb_w9, uxtb_w10_w9, cmp_w10, b_cond(3, 8), RET, RET];
        let f = rewritten(function(&input), false);
        assert_eq!(words(&f), vec![ldrb_w9, cmp_w9, b_cond(3, 8), RET, RET]);
        // w10 is read after the compare: kept.
        let mov_x0_x10 = 0xAA0A_03E0;
        let input = [ldrb_w9, uxtb_w10_w9, cmp_w10, mov_x0_x10, RET];
        let f = rewritten(function(&input), false);
        assert_eq!(words(&f), input.to_vec());
        // w9 from a 32-bit load: its extension is real.
        let ldr_w9 = 0xB940_0029;
        let input = [ldr_w9, uxtb_w10_w9, cmp_w10, b_cond(3, 8), RET, RET];
        let f = rewritten(function(&input), false);
        assert_eq!(words(&f), input.to_vec());
    }

    #[test]
    fn records_are_never_touched() {
        // A trap record on the `uxtb` (a producer's choice) keeps it.
        let mut f = function(&[LDRB_W1, UXTB_W1_W1, RET]);
        f.traps.push((4, TrapCode::unwrap_user(0x42)));
        let f = rewritten(f, false);
        assert_eq!(words(&f), vec![LDRB_W1, UXTB_W1_W1, RET]);
    }

    #[test]
    fn flags_live_after_the_branch_keep_the_tst() {
        // The fall-through reads the flags of the `tst` (b.eq).
        let input = [CSET_X7_HS, TST_W7, b_cond(1, 12), b_cond(0, 8), RET, RET];
        let f = rewritten(function(&input), false);
        assert_eq!(words(&f), input.to_vec());
    }
    /// `mov x9, #0`, `mov x9, #5`, `mov x15, #-4`, `mov w9, #-1`, `mov x9, #-2`.
    const MOV_X9_0: u32 = 0xD280_0009;
    const MOV_X9_5: u32 = 0xD280_00A9;
    const MOV_X15_M4: u32 = 0x9280_006F;
    const MOV_W9_M1: u32 = 0x1280_0009;
    const MOV_X9_M2: u32 = 0x9280_0029;

    fn constant_rule(input: &[u32]) -> (Vec<u32>, usize) {
        let mut f = function(input);
        let stats = run_on(&mut f, false);
        (words(&f), stats.constant_operands)
    }

    #[test]
    fn zero_constant_is_stored_as_the_zero_register() {
        // mov x9, #0; str x9, [x0]; stp x9, x9, [x0, #16]; ret
        let stp_x9_x9 = 0xA901_2409;
        let (w, n) = constant_rule(&[MOV_X9_0, 0xF900_0009, stp_x9_x9, RET]);
        assert_eq!(w, vec![0xF900_001F, 0xA901_7C1F, RET]);
        assert_eq!(n, 1);
        // The zero is the store's address: kept.
        let input = [MOV_X9_0, 0xF900_0120, RET];
        assert_eq!(constant_rule(&input).0, input.to_vec());
    }

    #[test]
    fn compare_with_a_constant_register_takes_the_immediate() {
        // mov x15, #-4; cmp x0, x15; b.lt +8; ret; ret -> cmn x0, #4
        let cmp_x0_x15 = 0xEB0F_001F;
        let (w, _) = constant_rule(&[MOV_X15_M4, cmp_x0_x15, b_cond(0xB, 8), RET, RET]);
        assert_eq!(w, vec![0xB100_101F, b_cond(0xB, 8), RET, RET]);
        // mov w9, #-1; add w0, w0, w9 -> sub w0, w0, #1 (the 32-bit view).
        let (w, _) = constant_rule(&[MOV_W9_M1, 0x0B09_0000, RET]);
        assert_eq!(w, vec![0x5100_0400, RET]);
        // The constant is the first operand of a subtraction: kept.
        let sub_x0_x9_x0 = 0xCB00_0120;
        let input = [MOV_X9_5, sub_x0_x9_x0, RET];
        assert_eq!(constant_rule(&input).0, input.to_vec());
    }

    #[test]
    fn copies_of_a_constant_make_it_themselves() {
        // mov x9, #5; mov x0, x9; mov x1, x9; ret -> mov x0, #5; mov x1, #5
        let (w, n) = constant_rule(&[MOV_X9_5, 0xAA09_03E0, 0xAA09_03E1, RET]);
        assert_eq!((w, n), (vec![0xD280_00A0, 0xD280_00A1, RET], 1));
        // mov x9, #-2; mov w0, w9 -> mov w0, #-2 (0xfffffffe, zero-extended).
        let (w, _) = constant_rule(&[MOV_X9_M2, 0x2A09_03E0, RET]);
        assert_eq!(w, vec![0x1280_0020, RET]);
    }

    #[test]
    fn constant_read_elsewhere_or_at_a_join_stays() {
        // x9 is read by a multiply after the copy: nothing can go.
        let mul_x0_x0_x9 = 0x9B09_7C00;
        let input = [MOV_X9_5, 0xAA09_03E1, mul_x0_x0_x9, RET];
        assert_eq!(constant_rule(&input).0, input.to_vec());
        // The copy is a branch target: control reaches it without the constant.
        let input = [b_cond(0, 8), MOV_X9_5, 0xAA09_03E0, RET];
        assert_eq!(constant_rule(&input).0, input.to_vec());
        // Live across a call in a callee-saved register: kept.
        // mov x19, #0; str x19, [x0]; bl; str x19, [x0, #8]; ret
        let bl = 0x9400_0000;
        let input = [0xD280_0013, 0xF900_0013, bl, 0xF900_0413, RET];
        let (w, _) = constant_rule(&input);
        assert_eq!(w, input.to_vec());
    }
}
