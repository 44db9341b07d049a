//! Switch lowering on CLIF: chains of tests of one value become range
//! checks, bit tests and jump tables.
//!
//! A front end lowers `c == '+' || c == '-' || ...` and `if op == 0 {..}
//! else if op == 1 {..} ...` test by test: one compare and one conditional
//! branch (or one `cset` and one `orr`) per constant. Cranelift keeps them
//! as they came: its e-graph rewrites within a block, and nothing in it
//! turns a chain of blocks into a `br_table`. LLVM forms switches in
//! SimplifyCFG (`FoldValueComparisonIntoPredecessors`,
//! `SimplifyBranchOnICmpChain`, `llvm/lib/Transforms/Utils/SimplifyCFG.cpp`)
//! and lowers them in SwitchLowering
//! (`llvm/lib/CodeGen/SwitchLoweringUtils.cpp`: clusters, jump tables by
//! density, bit tests for at most three destinations within a machine
//! word), following Bernstein, "Producing good code for the case
//! statement" (Software: Practice and Experience 15(10), 1985) and Kannan
//! and Proebsting, "Correction to 'Producing good code for the case
//! statement'" (SP&E 24(2), 1994): a case statement is split into clusters,
//! each dense cluster becomes a table, and what is left a tree of tests.
//! This pass does the same on CLIF, for the shapes Pare's front end emits.
//!
//! # Notation
//!
//! `x` is an integer value of `w` bits (8 to 64) and a *test of `x`* is a
//! 0/1 value whose truth is `x ∈ S` for a set `S` of `w`-bit values:
//! `icmp cc x, k` with a constant `k` (every condition code, signed ones
//! read on the unsigned circle), `bor`/`band` of two tests of the same `x`
//! (union, intersection) and `bxor t, 1` (complement). `S` is kept as
//! sorted disjoint intervals of unsigned values ([`Intervals`]). A test's
//! *leaves* are its compares: what the code costs today.
//!
//! # Shapes
//!
//! 1. **Or- and and-links** (Pare's `a || b`, `a && b`, after inlining a
//!    predicate such as `is_space(c)`): `H: brif c, J(c), N` and
//!    `N: ... jump J(d)` (or `brif c, N, J(c)` for `&&`), where `N` holds
//!    only speculable instructions, `J` has one parameter and the
//!    predecessors `H` and `N`, and `c`, `d` test the same `x`: `J`'s
//!    parameter is `c ∪ d` (`c ∩ d`), made a `bor` (`band`) in `H`, and
//!    `H`, `N`, `J` become one block (as if-conversion would; here only
//!    for tests of one value, which step 4 then shortens).
//! 2. **Branches to a common destination** (LLVM's
//!    `FoldBranchToCommonDest`): `H: brif c, T, N` and `N: brif d, T, E`
//!    (`N` entered only from `H`, speculable instructions only, the same
//!    `T` with the same arguments) is `brif (bor c, d), T, E`; likewise
//!    `H: brif c, N, E`, `N: brif d, T, E` is `brif (band c, d), T, E`.
//! 3. **If-else chains**: `H_0: brif c_0, T_0, H_1`, `H_1: brif c_1, T_1,
//!    H_2`, ..., `H_n: brif c_n, T_n, E` where every `H_i` (`i ≥ 1`) is
//!    entered only from `H_{i-1}`, has no parameters and only speculable
//!    instructions, and every `c_i` tests the same `x` (either branch may
//!    be the one that continues the chain: the set is then complemented).
//!    The case `v` goes to the first `T_i` whose set holds it, the rest to
//!    `E`. When at least [`MIN_TABLE_CASES`] tests cover a range of at most
//!    [`MAX_TABLE`] values that is at least 40% full (LLVM's density at
//!    `optsize`), the chain becomes one `br_table` over `x - min`, with
//!    the values no test holds and those outside the range going to `E`.
//!    The range is the shorter of the cases' unsigned and signed readings
//!    ([`Intervals::enclosing`]): `-1, 0, …, 7` is a table from `-1`.
//! 4. **Set membership**: a test whose set's plan ([`Plan`]) costs fewer
//!    instructions than its leaves is rewritten: the set's intervals are
//!    split into clusters whose span is at most 64 (SwitchLowering's bit
//!    test clusters, one destination), a cluster of one interval becomes
//!    one unsigned compare (`x - lo <=u hi - lo`, or `x == k`) and a
//!    cluster of several a bit test, `(x - lo) <u W && (mask >> (x - lo)) &
//!    1`; the clusters are or-ed. When the complement plans cheaper, it is
//!    tested and the result inverted.
//!
//! # Algorithm
//!
//! Shapes 1 and 2 are folded, each to a fixed point (each fold removes a
//! block), then the chains of shape 3 become tables, then every *root*
//! test (one some instruction other than a `bor`/`band`/`bxor` of the same
//! value reads) is rewritten as shape 4 says. The blocks the folds empty
//! leave the layout; the compares nothing reads any more are deleted.
//!
//! # Cost
//!
//! In aarch64 words as Cranelift 0.135 lowers the forms: a compare feeding
//! a branch is `cmp` + `b.cond` (2), a compare producing a value `cmp` +
//! `cset` (2), a `bor` one `orr`. A range compare is `sub` + `cmp` +
//! `cset` (3), 2 when it starts at 0 or ends at the maximum; a bit test
//! `sub`, `cmp`, `cset`, the mask (one `mov` per non-zero 16-bit half),
//! `lsr`, `and`, `and` (7 to 10). A `br_table` (the `JTSequence` of
//! `cranelift/codegen/src/isa/aarch64/inst/emit.rs`) is `cmp`, `mov`,
//! `csel`, `adr`, `ldrsw`, `add`, `br` and one word per entry and one for
//! the default, plus `sub` for a non-zero minimum and, for a 64-bit `x`,
//! `umin` (`cmp` + `csel`) so that the 32-bit index cannot wrap; the chain
//! it replaces costs two words per test. These estimates only choose what
//! to try: with a target ISA ([`run_measured`], what the pipeline runs at
//! every level) a function is compiled before and after, and a rewrite
//! that made it grow is undone (first the tables, then everything), so no
//! function grows.
//!
//! Levels: every level that optimizes runs the pass. A table replaces a
//! chain of `n` compares and branches by a constant number of
//! instructions and one indirect branch, a bit test `n` compares by one
//! shift: fewer instructions executed as well as fewer bytes, which is
//! why LLVM forms both at `-O2` too.
//!
//! # Place in the pipeline
//!
//! After inlining (a predicate such as `is_space(c)` is then a chain in
//! its caller) and GVN (one SSA value per tested expression), after the
//! mergers (their hashes see the front end's code) and `combine`, before
//! `ifconv`, which would otherwise turn the links into `bor`s only where
//! its measure allowed. The size guard lowers the functions it puts back
//! again (`crate::guard::GuardOptions::switches`).
//!
//! # Invariants
//!
//! - The output passes Cranelift's verifier and computes what the input
//!   did. The tests moved are pure and cannot trap (the instructions of
//!   `H_1..H_n` and `N` are speculable: no load, store, call, division or
//!   trap is moved or removed), every test of a chain reads the same SSA
//!   value `x`, and a value keeps its definition or becomes an alias of an
//!   equal one.
//! - Blocks are only merged into a single predecessor; only reachable
//!   blocks are considered, so no unreachable cycle feeds itself.
//! - Each fold removes a block; tables and rewrites happen once per chain
//!   and root: the pass ends, linear in the function per sweep.

use std::collections::BTreeSet;
use std::fmt;

use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::entity::SecondaryMap;
use cranelift_codegen::flowgraph::ControlFlowGraph;
use cranelift_codegen::ir::condcodes::{CondCode, IntCC};
use cranelift_codegen::ir::{
    types, Block, BlockArg, BlockCall, Function, Inst, InstBuilder, InstructionData, JumpTableData,
    Opcode, Type, Value,
};
use cranelift_codegen::isa::TargetIsa;

use crate::clif_module::ClifModule;
use crate::code_cache::{code_size, CodeCache};
use crate::remark::Remark;

/// Fewest tests a chain needs to become a table (LLVM's
/// `min-jump-table-entries`, 4).
pub const MIN_TABLE_CASES: usize = 4;
/// Most entries a table may have.
pub const MAX_TABLE: u64 = 256;
/// Deepest test tree read (deeper ones are left as they are).
const MAX_DEPTH: u32 = 256;

/// What the pass did to a function or, summed, to a module.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SwitchStats {
    /// Or- and and-links of one value folded into `bor`/`band` (shape 1).
    pub links: u64,
    /// Branches to a common destination folded (shape 2).
    pub common_dests: u64,
    /// If-else chains made jump tables (shape 3).
    pub tables: u64,
    /// Tests rewritten as range checks and bit tests (shape 4).
    pub sets: u64,
    /// Functions whose rewrite grew their code and was undone, wholly or
    /// its tables.
    pub measured_back: u64,
}

impl SwitchStats {
    pub fn accumulate(&mut self, other: &SwitchStats) {
        self.links += other.links;
        self.common_dests += other.common_dests;
        self.tables += other.tables;
        self.sets += other.sets;
        self.measured_back += other.measured_back;
    }

    /// The counters by name, as remarks carry them (docs/REMARKS.md).
    pub fn counters(&self) -> [(&'static str, u64); 5] {
        [
            ("links", self.links),
            ("common_dests", self.common_dests),
            ("tables", self.tables),
            ("sets", self.sets),
            ("measured_back", self.measured_back),
        ]
    }

    /// How many rewrites the function keeps.
    pub fn rewrites(&self) -> u64 {
        self.links + self.common_dests + self.tables + self.sets
    }
}

impl fmt::Display for SwitchStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "links {}, common destinations {}, tables {}, sets {}, measured back {}",
            self.links, self.common_dests, self.tables, self.sets, self.measured_back
        )
    }
}

/// The pass's statistics over a module and one remark per function it
/// changed or measured back.
#[derive(Clone, Debug, Default)]
pub struct SwitchReport {
    pub stats: SwitchStats,
    pub remarks: Vec<Remark>,
}

/// What the rewrite may do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SwitchOptions {
    /// Whether if-else chains may become jump tables.
    pub tables: bool,
}

impl Default for SwitchOptions {
    fn default() -> Self {
        SwitchOptions { tables: true }
    }
}

/// Runs the pass on every function of `module`; with `measure`, through
/// [`run_measured`].
pub fn run_module(module: &mut ClifModule, measure: Option<&dyn TargetIsa>) -> SwitchReport {
    let mut report = SwitchReport::default();
    let cache = module.code_cache();
    for def in &mut module.functions {
        let stats = match measure {
            Some(isa) => run_measured(&mut def.func, isa, cache.as_deref()),
            None => run(&mut def.func, &SwitchOptions::default()),
        };
        report.stats.accumulate(&stats);
        if stats == SwitchStats::default() {
            continue;
        }
        let name = def.symbol_name(&module.symbols);
        let remark = if stats.rewrites() > 0 {
            Remark::passed("switches", "switch-lowered", name, stats.to_string())
        } else {
            Remark::missed("switches", "switch-grew", name, stats.to_string())
        };
        let remark = remark
            .in_module(&module.name)
            .nonzero_counts(stats.counters());
        report.remarks.push(remark);
    }
    report
}

/// Runs the pass on `func` and keeps the result only if its aarch64 code
/// (compiled by `isa`, through `cache` when given: code generation then
/// finds the kept version compiled) did not grow; else tries again without
/// tables, and else puts the function back.
pub fn run_measured(
    func: &mut Function,
    isa: &dyn TargetIsa,
    cache: Option<&CodeCache>,
) -> SwitchStats {
    let original = func.clone();
    let stats = run(func, &SwitchOptions::default());
    if stats.rewrites() == 0 {
        *func = original;
        return SwitchStats::default();
    }
    let Some(before) = code_size(&original, isa, cache) else {
        *func = original;
        return SwitchStats::default();
    };
    if code_size(func, isa, cache).is_some_and(|after| after <= before) {
        return stats;
    }
    *func = original.clone();
    if stats.tables > 0 {
        let mut fallback = run(func, &SwitchOptions { tables: false });
        if fallback.rewrites() > 0 && code_size(func, isa, cache).is_some_and(|a| a <= before) {
            fallback.measured_back = 1;
            return fallback;
        }
        *func = original;
    }
    SwitchStats {
        measured_back: 1,
        ..SwitchStats::default()
    }
}

/// Runs every phase on `func` (module doc, Algorithm), unmeasured.
pub fn run(func: &mut Function, options: &SwitchOptions) -> SwitchStats {
    let mut stats = SwitchStats::default();
    if func.layout.entry_block().is_none() {
        return stats;
    }
    func.dfg.resolve_all_aliases();
    fold_links(func, &mut stats);
    if options.tables {
        make_tables(func, &mut stats);
    }
    rewrite_sets(func, &mut stats);
    if stats.rewrites() > 0 {
        crate::combine::delete_dead(func);
        func.dfg.resolve_all_aliases();
    }
    stats
}

// ---------------------------------------------------------------------
// Sets of values

/// A set of `bits`-wide values: sorted, disjoint, non-adjacent inclusive
/// intervals of their unsigned readings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Intervals {
    bits: u32,
    spans: Vec<(u64, u64)>,
}

impl Intervals {
    fn max_of(bits: u32) -> u64 {
        if bits >= 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        }
    }

    fn max(&self) -> u64 {
        Self::max_of(self.bits)
    }

    fn empty(bits: u32) -> Intervals {
        Intervals {
            bits,
            spans: Vec::new(),
        }
    }

    /// `[lo, hi]`, empty when `lo > hi`.
    fn range(bits: u32, lo: u64, hi: u64) -> Intervals {
        let mut set = Intervals::empty(bits);
        if lo <= hi {
            set.spans.push((lo, hi));
        }
        set
    }

    /// The signed range `[lo, hi]` on the unsigned circle.
    fn signed_range(bits: u32, lo: i128, hi: i128) -> Intervals {
        if lo > hi {
            return Intervals::empty(bits);
        }
        let modulus = i128::from(Self::max_of(bits)) + 1;
        let to_u = |v: i128| -> u64 { v.rem_euclid(modulus) as u64 };
        if hi < 0 || lo >= 0 {
            Intervals::range(bits, to_u(lo), to_u(hi))
        } else {
            Intervals::range(bits, 0, to_u(hi)).union(&Intervals::range(
                bits,
                to_u(lo),
                Self::max_of(bits),
            ))
        }
    }

    /// The values `x` with `x cc k`.
    fn of_compare(bits: u32, cc: IntCC, k: u64) -> Intervals {
        let max = Self::max_of(bits);
        let k = k & max;
        let half = 1i128 << (bits - 1);
        let s = if i128::from(k) >= half {
            i128::from(k) - 2 * half
        } else {
            i128::from(k)
        };
        let (smin, smax) = (-half, half - 1);
        match cc {
            IntCC::Equal => Intervals::range(bits, k, k),
            IntCC::NotEqual => Intervals::range(bits, k, k).complement(),
            IntCC::UnsignedLessThan if k == 0 => Intervals::empty(bits),
            IntCC::UnsignedLessThan => Intervals::range(bits, 0, k - 1),
            IntCC::UnsignedLessThanOrEqual => Intervals::range(bits, 0, k),
            IntCC::UnsignedGreaterThan if k == max => Intervals::empty(bits),
            IntCC::UnsignedGreaterThan => Intervals::range(bits, k + 1, max),
            IntCC::UnsignedGreaterThanOrEqual => Intervals::range(bits, k, max),
            IntCC::SignedLessThan => Intervals::signed_range(bits, smin, s - 1),
            IntCC::SignedLessThanOrEqual => Intervals::signed_range(bits, smin, s),
            IntCC::SignedGreaterThan => Intervals::signed_range(bits, s + 1, smax),
            IntCC::SignedGreaterThanOrEqual => Intervals::signed_range(bits, s, smax),
        }
    }

    /// Sorts and coalesces `spans`.
    fn normalized(bits: u32, mut spans: Vec<(u64, u64)>) -> Intervals {
        spans.sort_unstable();
        let mut out: Vec<(u64, u64)> = Vec::with_capacity(spans.len());
        for (lo, hi) in spans {
            match out.last_mut() {
                Some(last) if last.1 == u64::MAX || lo <= last.1 + 1 => last.1 = last.1.max(hi),
                _ => out.push((lo, hi)),
            }
        }
        Intervals { bits, spans: out }
    }

    fn union(&self, other: &Intervals) -> Intervals {
        let spans = self.spans.iter().chain(&other.spans).copied().collect();
        Intervals::normalized(self.bits, spans)
    }

    fn complement(&self) -> Intervals {
        let mut spans = Vec::new();
        let mut next = Some(0u64);
        for &(lo, hi) in &self.spans {
            if let Some(n) = next {
                if lo > n {
                    spans.push((n, lo - 1));
                }
            }
            next = hi.checked_add(1).filter(|&n| n <= self.max());
        }
        if let Some(n) = next {
            spans.push((n, self.max()));
        }
        Intervals {
            bits: self.bits,
            spans,
        }
    }

    fn intersect(&self, other: &Intervals) -> Intervals {
        self.complement().union(&other.complement()).complement()
    }

    fn contains(&self, v: u64) -> bool {
        self.spans.iter().any(|&(lo, hi)| lo <= v && v <= hi)
    }

    /// The shortest interval of consecutive `bits`-wide values, read
    /// unsigned or signed, that holds the whole set: its first value and
    /// how many values it spans (saturating). `x - first`, wrapping, maps
    /// the set into `0..span` and every value outside the interval to
    /// `span` or above. `None` for the empty set.
    ///
    /// The signed reading matters when the set holds small negative and
    /// small positive values (`-1, 0, 1, ...`): read unsigned, `-1` is the
    /// largest value and the interval would be the whole circle.
    fn enclosing(&self) -> Option<Enclosing> {
        let (first, last) = (self.spans.first()?, self.spans.last()?);
        let unsigned = Enclosing::between(first.0, last.1);
        // Signed order starts at the smallest value with the sign bit set
        // and ends at the largest without it.
        let half = 1u64 << (self.bits - 1);
        let negative = self
            .spans
            .iter()
            .find(|&&(_, hi)| hi >= half)
            .map(|&(lo, _)| lo.max(half));
        let non_negative = self
            .spans
            .iter()
            .rev()
            .find(|&&(lo, _)| lo < half)
            .map(|&(_, hi)| hi.min(half - 1));
        let signed = match (negative, non_negative) {
            (Some(lo), Some(hi)) => Enclosing::wrapping(lo, hi, self.max()),
            _ => unsigned,
        };
        Some(if signed.span < unsigned.span {
            signed
        } else {
            unsigned
        })
    }

    /// How many values the set holds (saturating).
    fn len(&self) -> u64 {
        self.spans.iter().fold(0u64, |n, &(lo, hi)| {
            n.saturating_add(hi - lo).saturating_add(1)
        })
    }
}

/// An interval of consecutive values on the `bits`-wide circle (see
/// [`Intervals::enclosing`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Enclosing {
    first: u64,
    /// How many values, saturating at `u64::MAX`.
    span: u64,
}

impl Enclosing {
    /// `[lo, hi]` with `lo <= hi`.
    fn between(lo: u64, hi: u64) -> Enclosing {
        Enclosing {
            first: lo,
            span: (hi - lo).saturating_add(1),
        }
    }

    /// From `lo` up to `hi` through the top of the circle (`max`, then 0).
    fn wrapping(lo: u64, hi: u64, max: u64) -> Enclosing {
        Enclosing {
            first: lo,
            span: (max - lo).saturating_add(hi).saturating_add(2),
        }
    }
}

/// A test of `x` (module doc, Notation).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Test {
    x: Value,
    set: Intervals,
    /// The compares it is made of.
    leaves: u32,
}

/// The test `v` is, if it is one.
fn test_of(func: &Function, v: Value) -> Option<Test> {
    test_at(func, func.dfg.resolve_aliases(v), 0)
}

fn test_at(func: &Function, v: Value, depth: u32) -> Option<Test> {
    if depth > MAX_DEPTH || func.dfg.value_type(v) != types::I8 {
        return None;
    }
    let inst = func.dfg.value_def(v).inst()?;
    match func.dfg.insts[inst] {
        InstructionData::IntCompare { cond, args, .. } => {
            let [a, b] = args.map(|a| func.dfg.resolve_aliases(a));
            let (x, k, cc) = match (constant(func, a), constant(func, b)) {
                (None, Some(k)) => (a, k, cond),
                (Some(k), None) => (b, k, cond.swap_args()),
                _ => return None,
            };
            let ty = func.dfg.value_type(x);
            if !ty.is_int() || ty.bits() > 64 {
                return None;
            }
            Some(Test {
                x,
                set: Intervals::of_compare(ty.bits(), cc, k as u64),
                leaves: 1,
            })
        }
        InstructionData::Binary { opcode, args } => {
            let [a, b] = args.map(|a| func.dfg.resolve_aliases(a));
            if opcode == Opcode::Bxor {
                let t = match (constant(func, a), constant(func, b)) {
                    (None, Some(1)) => a,
                    (Some(1), None) => b,
                    _ => return None,
                };
                let t = test_at(func, t, depth + 1)?;
                return Some(Test {
                    set: t.set.complement(),
                    ..t
                });
            }
            if !matches!(opcode, Opcode::Bor | Opcode::Band) {
                return None;
            }
            let ta = test_at(func, a, depth + 1)?;
            let tb = test_at(func, b, depth + 1)?;
            if ta.x != tb.x {
                return None;
            }
            let set = if opcode == Opcode::Bor {
                ta.set.union(&tb.set)
            } else {
                ta.set.intersect(&tb.set)
            };
            Some(Test {
                x: ta.x,
                set,
                leaves: ta.leaves + tb.leaves,
            })
        }
        _ => None,
    }
}

fn constant(func: &Function, v: Value) -> Option<i64> {
    crate::size_model::constant(func, v)
}

/// Whether `a` and `b` test the same value.
fn same_value(func: &Function, a: Value, b: Value) -> bool {
    match (test_of(func, a), test_of(func, b)) {
        (Some(ta), Some(tb)) => ta.x == tb.x,
        _ => false,
    }
}

// ---------------------------------------------------------------------
// Control flow helpers

/// The blocks reachable from the entry.
fn reachable_blocks(func: &Function) -> SecondaryMap<Block, bool> {
    let mut reachable = SecondaryMap::new();
    let mut stack: Vec<Block> = func.layout.entry_block().into_iter().collect();
    while let Some(block) = stack.pop() {
        if reachable[block] {
            continue;
        }
        reachable[block] = true;
        if let Some(term) = func.layout.last_inst(block) {
            for call in func.dfg.insts[term]
                .branch_destination(&func.dfg.jump_tables, &func.dfg.exception_tables)
            {
                stack.push(call.block(&func.dfg.value_lists));
            }
        }
    }
    reachable
}

/// `brif c, then, else` ending `block`.
fn brif_of(func: &Function, block: Block) -> Option<(Inst, Value, BlockCall, BlockCall)> {
    let term = func.layout.last_inst(block)?;
    match func.dfg.insts[term] {
        InstructionData::Brif {
            opcode: Opcode::Brif,
            arg,
            blocks,
        } => Some((term, func.dfg.resolve_aliases(arg), blocks[0], blocks[1])),
        _ => None,
    }
}

/// The plain values a block call passes (`None` if one is not a value).
fn call_args(func: &Function, call: BlockCall) -> Option<Vec<Value>> {
    call.args(&func.dfg.value_lists)
        .map(|a| match a {
            BlockArg::Value(v) => Some(func.dfg.resolve_aliases(v)),
            _ => None,
        })
        .collect()
}

fn call_block(func: &Function, call: BlockCall) -> Block {
    call.block(&func.dfg.value_lists)
}

/// Whether two block calls go to the same block with the same values.
fn same_call(func: &Function, a: BlockCall, b: BlockCall) -> bool {
    call_block(func, a) == call_block(func, b)
        && call_args(func, a).is_some_and(|args| Some(args) == call_args(func, b))
}

/// Whether `block` is entered only from `pred`, once, has no parameters
/// and holds only speculable instructions before its terminator: a block
/// whose instructions may move into `pred`.
fn is_arm(func: &Function, cfg: &ControlFlowGraph, block: Block, pred: Block) -> bool {
    if block == pred || !func.dfg.block_params(block).is_empty() {
        return false;
    }
    let mut preds = cfg.pred_iter(block);
    let only = matches!((preds.next(), preds.next()), (Some(p), None) if p.block == pred);
    if !only {
        return false;
    }
    let Some(term) = func.layout.last_inst(block) else {
        return false;
    };
    func.layout
        .block_insts(block)
        .filter(|&i| i != term)
        .all(|i| crate::ifconv::speculable(func, i))
}

/// Moves the instructions of `arm` but its terminator before `before`
/// and returns that terminator.
fn hoist(func: &mut Function, arm: Block, before: Inst) -> Inst {
    let term = func.layout.last_inst(arm).expect("an arm ends in a branch");
    while let Some(inst) = func.layout.first_inst(arm) {
        if inst == term {
            break;
        }
        func.layout.remove_inst(inst);
        func.layout.insert_inst(inst, before);
    }
    term
}

// ---------------------------------------------------------------------
// Shapes 1 and 2: links

/// Folds or-links, and-links (shape 1) and branches to a common
/// destination (shape 2) to a fixed point.
fn fold_links(func: &mut Function, stats: &mut SwitchStats) {
    let mut cfg = ControlFlowGraph::with_function(func);
    loop {
        let mut changed = false;
        let reachable = reachable_blocks(func);
        let blocks: Vec<Block> = func.layout.blocks().collect();
        for head in blocks {
            if !func.layout.is_block_inserted(head) || !reachable[head] {
                continue;
            }
            let folded = fold_bool_link(func, &cfg, head, stats)
                || fold_common_dest(func, &cfg, head, stats);
            if folded {
                cfg.compute(func);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
}

/// Shape 1 at `head`.
fn fold_bool_link(
    func: &mut Function,
    cfg: &ControlFlowGraph,
    head: Block,
    stats: &mut SwitchStats,
) -> bool {
    let Some((branch, c, then_call, else_call)) = brif_of(func, head) else {
        return false;
    };
    // `||`: the join on the true edge receives `c`; `&&`: on the false edge.
    let (join_call, arm_call, is_or) = if call_args(func, then_call) == Some(vec![c]) {
        (then_call, else_call, true)
    } else if call_args(func, else_call) == Some(vec![c]) {
        (else_call, then_call, false)
    } else {
        return false;
    };
    let (join, arm) = (call_block(func, join_call), call_block(func, arm_call));
    if join == head || join == arm || !is_arm(func, cfg, arm, head) {
        return false;
    }
    if !call_args(func, arm_call).is_some_and(|a| a.is_empty()) {
        return false;
    }
    let arm_term = func.layout.last_inst(arm).expect("an arm ends in a branch");
    let d = match func.dfg.insts[arm_term] {
        InstructionData::Jump { destination, .. }
            if call_block(func, destination) == join
                && call_args(func, destination).is_some_and(|a| a.len() == 1) =>
        {
            call_args(func, destination).expect("checked")[0]
        }
        _ => return false,
    };
    let join_preds: BTreeSet<Block> = cfg.pred_iter(join).map(|p| p.block).collect();
    if join_preds != BTreeSet::from([head, arm])
        || cfg.pred_iter(join).count() != 2
        || func.dfg.block_params(join).len() != 1
        || !same_value(func, c, d)
    {
        return false;
    }
    // Merge: the arm's tests before the branch, the join's parameter the
    // `bor`/`band` of both, the join's instructions after it.
    hoist(func, arm, branch);
    let mut pos = FuncCursor::new(func).at_inst(branch);
    let joined = if is_or {
        pos.ins().bor(c, d)
    } else {
        pos.ins().band(c, d)
    };
    func.layout.remove_inst(branch);
    func.layout.remove_block_and_insts(arm);
    let param = func.dfg.block_params(join)[0];
    func.dfg.detach_block_params(join);
    func.dfg.change_to_alias(param, joined);
    while let Some(inst) = func.layout.first_inst(join) {
        func.layout.remove_inst(inst);
        func.layout.append_inst(inst, head);
    }
    func.layout.remove_block(join);
    stats.links += 1;
    true
}

/// Shape 2 at `head`.
fn fold_common_dest(
    func: &mut Function,
    cfg: &ControlFlowGraph,
    head: Block,
    stats: &mut SwitchStats,
) -> bool {
    let Some((branch, c, then_call, else_call)) = brif_of(func, head) else {
        return false;
    };
    // Either side may be the next test.
    for next_on_true in [false, true] {
        let (next_call, other) = if next_on_true {
            (then_call, else_call)
        } else {
            (else_call, then_call)
        };
        let next = call_block(func, next_call);
        if !call_args(func, next_call).is_some_and(|a| a.is_empty())
            || !is_arm(func, cfg, next, head)
        {
            continue;
        }
        let Some((_, d, t2, e2)) = brif_of(func, next) else {
            continue;
        };
        if !same_value(func, c, d) {
            continue;
        }
        // `brif c, T, N; N: brif d, T, E` → `brif c|d, T, E`;
        // `brif c, N, E; N: brif d, T, E` → `brif c&d, T, E`.
        let (is_or, keep_then, keep_else) = if !next_on_true && same_call(func, other, t2) {
            (true, other, e2)
        } else if next_on_true && same_call(func, other, e2) {
            (false, t2, other)
        } else {
            continue;
        };
        if [keep_then, keep_else]
            .iter()
            .any(|&k| call_block(func, k) == next)
        {
            continue;
        }
        let next_term = hoist(func, next, branch);
        let mut pos = FuncCursor::new(func).at_inst(branch);
        let joined = if is_or {
            pos.ins().bor(c, d)
        } else {
            pos.ins().band(c, d)
        };
        let then_block = call_block(pos.func, keep_then);
        let else_block = call_block(pos.func, keep_else);
        let then_args = block_args(pos.func, keep_then);
        let else_args = block_args(pos.func, keep_else);
        pos.func.layout.remove_inst(next_term);
        pos.func.layout.remove_block(next);
        pos.func
            .replace(branch)
            .brif(joined, then_block, &then_args, else_block, &else_args);
        stats.common_dests += 1;
        return true;
    }
    false
}

/// The arguments of `call`, as a branch built anew takes them.
fn block_args(func: &Function, call: BlockCall) -> Vec<BlockArg> {
    call.args(&func.dfg.value_lists).collect()
}

// ---------------------------------------------------------------------
// Shape 3: tables

/// One link of an if-else chain: the values that leave it for `target`.
struct Case {
    set: Intervals,
    target: BlockCall,
}

/// An if-else chain (shape 3).
struct Chain {
    x: Value,
    /// `H_1..H_n`, entered from the head in turn.
    links: Vec<Block>,
    cases: Vec<Case>,
    default: BlockCall,
}

/// The longest chain starting at `head`.
fn find_chain(func: &Function, cfg: &ControlFlowGraph, head: Block) -> Option<Chain> {
    let (_, c0, _, _) = brif_of(func, head)?;
    let x = test_of(func, c0)?.x;
    let mut links = Vec::new();
    let mut cases = Vec::new();
    let mut block = head;
    let mut seen = BTreeSet::from([head]);
    loop {
        let (_, c, t, e) = brif_of(func, block)?;
        let test = test_of(func, c).filter(|t| t.x == x)?;
        // Which side continues: the one that is a further link.
        let continues = |call: BlockCall| {
            let b = call_block(func, call);
            !seen.contains(&b)
                && call_args(func, call).is_some_and(|a| a.is_empty())
                && is_arm(func, cfg, b, block)
                && brif_of(func, b)
                    .and_then(|(_, d, _, _)| test_of(func, d))
                    .is_some_and(|t| t.x == x)
        };
        let (case, next) = if continues(e) {
            (
                Case {
                    set: test.set,
                    target: t,
                },
                e,
            )
        } else if continues(t) {
            (
                Case {
                    set: test.set.complement(),
                    target: e,
                },
                t,
            )
        } else {
            cases.push(Case {
                set: test.set,
                target: t,
            });
            return Some(Chain {
                x,
                links,
                cases,
                default: e,
            });
        };
        cases.push(case);
        let next_block = call_block(func, next);
        seen.insert(next_block);
        links.push(next_block);
        block = next_block;
    }
}

/// The table a chain becomes: the minimum and, per value from it, the
/// target.
struct Table {
    min: u64,
    entries: Vec<BlockCall>,
}

/// Whether `chain` is dense enough to be a table (module doc, shape 3),
/// and the table.
fn plan_table(func: &Function, chain: &Chain) -> Option<Table> {
    if chain.cases.len() < MIN_TABLE_CASES {
        return None;
    }
    // Every case's set must be small: the table holds each value.
    let mut covered = Intervals::empty(chain.cases[0].set.bits);
    for case in &chain.cases {
        if case.set.len() > MAX_TABLE {
            return None;
        }
        covered = covered.union(&case.set);
    }
    // The signed reading when it is shorter: `x == -1 || x == 0 || ...`
    // is a table from -1, not one across the whole unsigned range.
    let Enclosing {
        first: min,
        span: range,
    } = covered.enclosing()?;
    if range > MAX_TABLE || covered.len() * 10 < range * 4 {
        return None;
    }
    let max_value = Intervals::max_of(covered.bits);
    // Targets of a table take no arguments.
    let plain = |call: BlockCall| call_args(func, call).is_some_and(|a| a.is_empty());
    if !plain(chain.default) {
        return None;
    }
    let mut entries = Vec::with_capacity(range as usize);
    for i in 0..range {
        let v = min.wrapping_add(i) & max_value;
        let target = chain
            .cases
            .iter()
            .find(|case| case.set.contains(v))
            .map_or(chain.default, |case| case.target);
        if !plain(target) {
            return None;
        }
        entries.push(target);
    }
    Some(Table { min, entries })
}

/// Makes every dense chain a `br_table`.
fn make_tables(func: &mut Function, stats: &mut SwitchStats) {
    let cfg = ControlFlowGraph::with_function(func);
    let reachable = reachable_blocks(func);
    let blocks: Vec<Block> = func.layout.blocks().collect();
    let mut done: BTreeSet<Block> = BTreeSet::new();
    let mut chains = Vec::new();
    for head in blocks {
        if !reachable[head] || done.contains(&head) {
            continue;
        }
        let Some(chain) = find_chain(func, &cfg, head) else {
            continue;
        };
        let Some(table) = plan_table(func, &chain) else {
            continue;
        };
        done.extend(chain.links.iter().copied());
        done.insert(head);
        chains.push((head, chain, table));
    }
    for (head, chain, table) in chains {
        emit_table(func, head, &chain, &table);
        stats.tables += 1;
    }
}

/// Replaces `chain`, which starts at `head`, by `table`.
fn emit_table(func: &mut Function, head: Block, chain: &Chain, table: &Table) {
    let branch = func.layout.last_inst(head).expect("a chain ends in brif");
    for &link in &chain.links {
        let term = hoist(func, link, branch);
        func.layout.remove_inst(term);
        func.layout.remove_block(link);
    }
    let pool_default = call_block(func, chain.default);
    let entries: Vec<Block> = table.entries.iter().map(|&c| call_block(func, c)).collect();
    let ty = func.dfg.value_type(chain.x);
    let bits = ty.bits();
    let mut pos = FuncCursor::new(func).at_inst(branch);
    let mut t = chain.x;
    if table.min != 0 {
        let min = pos.ins().iconst(ty, masked(table.min, bits));
        t = pos.ins().isub(t, min);
    }
    let index = match bits {
        64 => {
            // Clamp so that the 32-bit index cannot wrap into the table.
            let n = pos.ins().iconst(ty, entries.len() as i64);
            let clamped = pos.ins().umin(t, n);
            pos.ins().ireduce(types::I32, clamped)
        }
        32 => t,
        _ => pos.ins().uextend(types::I32, t),
    };
    let default = pos.func.dfg.block_call(pool_default, &[]);
    let calls: Vec<BlockCall> = entries
        .iter()
        .map(|&b| pos.func.dfg.block_call(b, &[]))
        .collect();
    let jt = pos
        .func
        .create_jump_table(JumpTableData::new(default, &calls));
    pos.func.replace(branch).br_table(index, jt);
}

/// `v` as the immediate of a `bits`-wide `iconst` (zero-extended, as the
/// verifier wants narrow constants).
fn masked(v: u64, bits: u32) -> i64 {
    (v & Intervals::max_of(bits)) as i64
}

// ---------------------------------------------------------------------
// Shape 4: sets

/// A piece of a set's plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cluster {
    /// `x == k`.
    Point(u64),
    /// `lo <= x <= hi`, one unsigned compare.
    Range(u64, u64),
    /// Values `lo + i` for the bits `i` of `mask`, `i < span <= 64`.
    Bits { lo: u64, span: u64, mask: u64 },
}

/// How a set is tested: its clusters, or its complement's and an
/// inversion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    negate: bool,
    clusters: Vec<Cluster>,
    bits: u32,
}

impl Plan {
    /// The cheaper of the plans of `set` and of its complement.
    fn of(set: &Intervals) -> Plan {
        let direct = Plan::clusters_of(set, false);
        let inverse = Plan::clusters_of(&set.complement(), true);
        if inverse.words() < direct.words() {
            inverse
        } else {
            direct
        }
    }

    /// SwitchLowering's clustering for one destination: consecutive
    /// intervals join a cluster while its span stays within 64 values.
    fn clusters_of(set: &Intervals, negate: bool) -> Plan {
        let mut clusters = Vec::new();
        let spans = &set.spans;
        let mut i = 0;
        while i < spans.len() {
            let lo = spans[i].0;
            let mut j = i + 1;
            while j < spans.len() && spans[j].1 - lo < 64 {
                j += 1;
            }
            if j == i + 1 {
                let (lo, hi) = spans[i];
                clusters.push(if lo == hi {
                    Cluster::Point(lo)
                } else {
                    Cluster::Range(lo, hi)
                });
            } else {
                let span = spans[j - 1].1 - lo + 1;
                let mut mask = 0u64;
                for &(a, b) in &spans[i..j] {
                    for v in a..=b {
                        mask |= 1 << (v - lo);
                    }
                }
                clusters.push(Cluster::Bits { lo, span, mask });
            }
            i = j;
        }
        Plan {
            negate,
            clusters,
            bits: set.bits,
        }
    }

    /// Estimated aarch64 words (module doc, Cost).
    fn words(&self) -> u32 {
        let max = Intervals::max_of(self.bits);
        let each: u32 = self
            .clusters
            .iter()
            .map(|c| match *c {
                Cluster::Point(_) => 2,
                Cluster::Range(lo, hi) if lo == 0 || hi == max => 2,
                Cluster::Range(..) => 3,
                Cluster::Bits { lo, mask, .. } => {
                    let halves = (0..4).filter(|h| (mask >> (16 * h)) & 0xffff != 0).count();
                    6 + halves.max(1) as u32 + u32::from(lo != 0)
                }
            })
            .sum();
        // Sets that hold nothing or everything are a constant.
        let join = self.clusters.len().saturating_sub(1) as u32;
        each.max(1) + join + u32::from(self.negate)
    }
}

/// Rewrites every root test whose plan is cheaper than its compares.
fn rewrite_sets(func: &mut Function, stats: &mut SwitchStats) {
    let roots = root_tests(func);
    for (inst, test) in roots {
        let plan = Plan::of(&test.set);
        // The compares cost `cmp` + `cset`/`b.cond` each, the `bor`s one.
        let today = 3 * test.leaves - 1;
        if plan.words() >= today {
            continue;
        }
        emit_plan(func, inst, test.x, &plan);
        stats.sets += 1;
    }
}

/// The tests some instruction other than a test of the same value reads,
/// by defining instruction, in layout order.
fn root_tests(func: &Function) -> Vec<(Inst, Test)> {
    // For each value, whether a reader is not a `bor`/`band`/`bxor`
    // that is itself a test of the same value.
    let mut outside: SecondaryMap<Value, bool> = SecondaryMap::new();
    for block in func.layout.blocks() {
        for inst in func.layout.block_insts(block) {
            let inner = func
                .dfg
                .inst_results(inst)
                .first()
                .filter(|_| {
                    matches!(
                        func.dfg.insts[inst].opcode(),
                        Opcode::Bor | Opcode::Band | Opcode::Bxor
                    )
                })
                .and_then(|&r| test_of(func, r));
            for v in func.dfg.inst_values(inst) {
                let v = func.dfg.resolve_aliases(v);
                let part_of = inner
                    .as_ref()
                    .is_some_and(|t| test_of(func, v).is_some_and(|tv| tv.x == t.x));
                if !part_of {
                    outside[v] = true;
                }
            }
        }
    }
    let mut roots = Vec::new();
    for block in func.layout.blocks() {
        for inst in func.layout.block_insts(block) {
            let Some(&r) = func.dfg.inst_results(inst).first() else {
                continue;
            };
            if !outside[r] {
                continue;
            }
            if let Some(test) = test_of(func, r) {
                if test.leaves >= 2 {
                    roots.push((inst, test));
                }
            }
        }
    }
    roots
}

/// Replaces the test `inst` defines by `plan` over `x`, built before it.
fn emit_plan(func: &mut Function, inst: Inst, x: Value, plan: &Plan) {
    let ty = func.dfg.value_type(x);
    let mut pos = FuncCursor::new(func).at_inst(inst);
    let mut acc: Option<Value> = None;
    for &cluster in &plan.clusters {
        let v = emit_cluster(&mut pos, x, ty, cluster);
        acc = Some(match acc {
            Some(a) => pos.ins().bor(a, v),
            None => v,
        });
    }
    let value = match acc {
        Some(v) => v,
        None => pos.ins().iconst(types::I8, 0),
    };
    let result = pos.func.dfg.first_result(inst);
    if plan.negate {
        let one = pos.ins().iconst(types::I8, 1);
        pos.func.replace(inst).bxor(value, one);
    } else {
        pos.func.dfg.clear_results(inst);
        pos.func.dfg.change_to_alias(result, value);
        pos.func.layout.remove_inst(inst);
    }
}

/// The 0/1 value of `cluster` over `x` (of type `ty`).
fn emit_cluster(pos: &mut FuncCursor, x: Value, ty: Type, cluster: Cluster) -> Value {
    let bits = ty.bits();
    let max = Intervals::max_of(bits);
    match cluster {
        Cluster::Point(k) => {
            let k = pos.ins().iconst(ty, masked(k, bits));
            pos.ins().icmp(IntCC::Equal, x, k)
        }
        Cluster::Range(0, hi) => {
            let hi = pos.ins().iconst(ty, masked(hi, bits));
            pos.ins().icmp(IntCC::UnsignedLessThanOrEqual, x, hi)
        }
        Cluster::Range(lo, hi) if hi == max => {
            let lo = pos.ins().iconst(ty, masked(lo, bits));
            pos.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, x, lo)
        }
        Cluster::Range(lo, hi) => {
            let t = offset(pos, x, ty, lo);
            let width = pos.ins().iconst(ty, masked(hi - lo, bits));
            pos.ins().icmp(IntCC::UnsignedLessThanOrEqual, t, width)
        }
        Cluster::Bits { lo, span, mask } => {
            let t = offset(pos, x, ty, lo);
            let span_value = pos.ins().iconst(ty, masked(span, bits));
            let in_range = pos.ins().icmp(IntCC::UnsignedLessThan, t, span_value);
            let mask_ty = if span <= 32 { types::I32 } else { types::I64 };
            let shift = match bits.cmp(&mask_ty.bits()) {
                std::cmp::Ordering::Less => pos.ins().uextend(mask_ty, t),
                std::cmp::Ordering::Greater => pos.ins().ireduce(mask_ty, t),
                std::cmp::Ordering::Equal => t,
            };
            let mask = pos.ins().iconst(mask_ty, masked(mask, mask_ty.bits()));
            let shifted = pos.ins().ushr(mask, shift);
            let one = pos.ins().iconst(mask_ty, 1);
            let bit = pos.ins().band(shifted, one);
            let bit = pos.ins().ireduce(types::I8, bit);
            pos.ins().band(in_range, bit)
        }
    }
}

/// `x - lo` (`x` when `lo` is 0).
fn offset(pos: &mut FuncCursor, x: Value, ty: Type, lo: u64) -> Value {
    if lo == 0 {
        return x;
    }
    let lo = pos.ins().iconst(ty, masked(lo, ty.bits()));
    pos.ins().isub(x, lo)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_of_compares() {
        let lt = Intervals::of_compare(8, IntCC::SignedLessThan, 0);
        assert_eq!(lt.spans, vec![(128, 255)]);
        let ge = Intervals::of_compare(8, IntCC::UnsignedGreaterThanOrEqual, 97);
        let le = Intervals::of_compare(8, IntCC::UnsignedLessThanOrEqual, 122);
        assert_eq!(ge.intersect(&le).spans, vec![(97, 122)]);
        let ne = Intervals::of_compare(64, IntCC::NotEqual, 5);
        assert_eq!(ne.spans, vec![(0, 4), (6, u64::MAX)]);
        assert_eq!(ne.complement().spans, vec![(5, 5)]);
        let sge = Intervals::of_compare(64, IntCC::SignedGreaterThanOrEqual, 10);
        let sle = Intervals::of_compare(64, IntCC::SignedLessThanOrEqual, 20);
        assert_eq!(sge.intersect(&sle).spans, vec![(10, 20)]);
        let sgt = Intervals::of_compare(8, IntCC::SignedGreaterThan, (-3i64) as u64);
        assert_eq!(sgt.spans, vec![(0, 127), (254, 255)]);
    }

    #[test]
    fn union_coalesces_neighbours() {
        let a = Intervals::range(8, 1, 3);
        let b = Intervals::range(8, 4, 4);
        let c = Intervals::range(8, 250, 255);
        assert_eq!(a.union(&b).union(&c).spans, vec![(1, 4), (250, 255)]);
        assert_eq!(a.union(&b).len(), 4);
        assert_eq!(Intervals::range(64, 0, u64::MAX).complement().spans, vec![]);
    }

    #[test]
    fn enclosing_reads_signed_when_shorter() {
        // -1, 0..7 at 64 bits: the table starts at -1 and spans 9 values
        // (read unsigned it would span the whole circle).
        let set = Intervals::range(64, 0, 7).union(&Intervals::range(64, u64::MAX, u64::MAX));
        let e = set.enclosing().unwrap();
        assert_eq!((e.first, e.span), (u64::MAX, 9));
        // -6..-1, 0..3 at 8 bits.
        let set = Intervals::range(8, 1, 3).union(&Intervals::range(8, 250, 255));
        let e = set.enclosing().unwrap();
        assert_eq!((e.first, e.span), (250, 10));
        // Non-negative values only: the unsigned reading.
        let e = Intervals::range(64, 40, 48).enclosing().unwrap();
        assert_eq!((e.first, e.span), (40, 9));
        // The sign boundary inside: unsigned is shorter.
        let set = Intervals::range(8, 126, 130);
        assert_eq!(set.enclosing().unwrap().span, 5);
        // Everything: saturates, never wraps to a small span.
        let all = Intervals::range(64, 0, u64::MAX);
        assert_eq!(all.enclosing().unwrap().span, u64::MAX);
        assert_eq!(Intervals::empty(64).enclosing(), None);
    }

    #[test]
    fn plans_cluster_within_64_values() {
        // Tokenizer's operator characters: 33..94 as one bit test of a
        // 64-bit mask, 124 alone.
        let chars = b"+-*/%<>=!&|^?";
        let mut set = Intervals::empty(8);
        for &c in chars {
            set = set.union(&Intervals::range(8, u64::from(c), u64::from(c)));
        }
        let plan = Plan::of(&set);
        assert!(!plan.negate);
        assert_eq!(plan.clusters.len(), 2, "{plan:?}");
        let Cluster::Bits { lo, span, mask } = plan.clusters[0] else {
            panic!("{plan:?}");
        };
        assert_eq!((lo, span), (33, 62));
        for &c in chars.iter().filter(|&&c| c != b'|') {
            assert_eq!((mask >> (u64::from(c) - 33)) & 1, 1, "{}", c as char);
        }
        assert_eq!(mask.count_ones(), 12);
        assert_eq!(plan.clusters[1], Cluster::Point(124));
        assert!(plan.words() < 3 * chars.len() as u32 - 1);
        // `c != ' ' && c != '\n'` is the complement of a bit test.
        let not_space = Intervals::range(8, 10, 10)
            .union(&Intervals::range(8, 32, 32))
            .complement();
        let plan = Plan::of(&not_space);
        assert!(plan.negate, "{plan:?}");
    }
}
