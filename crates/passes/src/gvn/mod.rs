//! Optimistic global value numbering on CLIF, ahead of Cranelift's e-graph.
//!
//! This follows [BRITO] — Manuel José Gomes Brito, *Optimistic Global Value
//! Numbering for Compilers with Undefined Behavior*, MSc thesis, Instituto
//! Superior Técnico, Universidade de Lisboa, 2024 ("the thesis" below; full
//! references in docs/DESIGN.md) — chapters 4 and 5, adapted to CLIF, where block
//! parameters play the role of φ-nodes and branch arguments the role of
//! φ-operands.
//!
//! # Notation
//!
//! - A **term** ([`expr::Term`]) is the value number of an SSA value: `⊥`
//!   (not reachable, or not evaluated yet — the optimistic assumption), a
//!   constant `c:ty`, or `[v]`, the *leader* value `v` of a congruence class.
//! - A **key** ([`expr::Key`]) is a canonical expression over terms: an
//!   operation `op(t1, ..., tn)`, a φ `φB(t_e1, ..., t_ek)` with one term per
//!   incoming edge of block `B`, or a memory access `load(t_addr, off, ty, M)`
//!   at memory state `M`. Keys are hash-consed per pass in a table; the first
//!   value in reverse post-order (RPO) that produces a key becomes the leader
//!   of its class. Referring to operand classes by their *leader value*
//!   (the choice of LLVM's NewGVN, [NEWGVN]) rather than by the operand's key keeps keys finite in
//!   loops: `a = φ(0, a+1)` gets the stable key `φ(0, [a.next])`.
//! - A **memory state** ([`analysis::MemState`]) names the contents of one
//!   part of memory at a program point: the function's entry state, the
//!   state after a writing instruction, or the join at a block with several
//!   reachable predecessors whose exit states differ. Memory is split by
//!   Cranelift's alias regions (thesis §4.4's MemorySSA, with one state per
//!   region as in LLVM's type-based alias analysis): each point has a state
//!   per region and one for memory outside every region. A store tagged with
//!   region `R` starts a new state of `R` only; a store without a region, a
//!   call or another side effect starts a new state of every part. A load
//!   reads the state of its region (or of the outside part), and a
//!   `readonly` load always reads the entry state: no store of the function
//!   changes what it reads, so it is congruent across stores and calls.
//!
//! # Algorithm (thesis Alg. 5.1, naive fixed point)
//!
//! 1. *Optimistic start*: every value is `⊥` except the function's
//!    arguments; only the entry block is reachable.
//! 2. *Passes*: visit the reachable blocks in RPO, evaluating block
//!    parameters (the join of their incoming terms over **reachable** edges,
//!    ignoring `⊥`, thesis §4.3.1), instructions (operands replaced by their
//!    terms, then simplified, then looked up in the key table), and
//!    terminators (which make edges reachable as their conditions' terms
//!    allow, §4.3.2). Loads are numbered by address term, offset, type and
//!    memory state; a store records the value it leaves at its address, so a
//!    later load of the same place at the same state is forwarded, and a store
//!    of the value already there is redundant (§4.4). A load of part of a
//!    wider value at hand (stored or loaded at the same address term and
//!    state, §4.4 "value coercion") is numbered as the one ALU operation
//!    that extracts it: `ireduce` of the low bytes, `uextend`/`sextend` of a
//!    whole narrower value, `ushr`/`sshr` by a constant for the high bytes,
//!    `band` with a mask for the low bytes zero-extended. Memory is assumed
//!    little-endian (x86_64 and aarch64, parec's targets); accesses flagged
//!    `big` never take part.
//! 3. Repeat passes until one changes no term, no memory state and no edge:
//!    the partition is then a fixed point and sound. Each pass rebuilds the
//!    key table; terms from the previous pass feed only φ-operands on back
//!    edges, which is where the optimistic assumption lives (§4.5, §5.2).
//! 4. *Elimination* (Alg. 4.2): walk the dominator tree with a scoped map
//!    from term to the nearest dominating member; replace each value whose
//!    class has a dominating member, or whose term is a constant. Fold
//!    branches with one reachable edge into jumps, delete unreachable blocks,
//!    drop block parameters congruent to a single value, delete redundant
//!    stores, and delete the pure instructions left unused. A narrower load
//!    whose class has no dominating member becomes its extracting operation
//!    when the wider value (and the constant operand, for shifts and masks)
//!    has a dominating member; otherwise it stays a load.
//! 5. *PRE* ([`pre`], §4.3.4–§4.3.5, §4.6): at each join block, φ-translate
//!    the candidates into the predecessors; an expression available on every
//!    edge, or on all but one where one pure, non-trapping instruction can
//!    be inserted (non-critical edges only), becomes a new block parameter;
//!    loop-invariant instructions move to the preheader as speculative PRE
//!    whose back-edge values are the parameter itself. Each round is
//!    confirmed by analysing and eliminating again, or rolled back (§5.2).
//!
//! Simplification ([`simplify`]) sees the keys of operands at every depth (the
//! thesis' §5.1 "fully optimistic simplification"): it looks through an
//! operand's term to its class key, so a single run finds what NewGVN needs
//! two runs for. It obeys the §4.8 invariant: it returns a constant or an
//! existing term, never a new instruction.
//!
//! Predicate equalities (§4.3.1, in place of SSI π-nodes): a block whose only
//! reachable incoming edge is the true edge of `brif (icmp eq a, b)` (or the
//! false edge of `icmp ne`) knows `a = b` — rewriting towards constants — and
//! so do the blocks it dominates; the branch condition itself is known to be
//! 1 or 0 on its edges.
//!
//! Predicate relations ([`predicates`]): such a block also knows the
//! relation the branch tested (`a cc b`, or its complement on the false
//! edge; `c ≠ 0` past `brif c` on a non-comparison, a null check's way on).
//! A comparison a known relation implies or refutes is a constant, and a
//! `brif` on a value known non-zero takes only its true edge: a check
//! dominated by the same check, and a bounds check `i >=u n` inside a loop
//! whose test is `i <s n` and whose counter counts up from 0, fold; so do
//! checks proved through a chain `j < i < n` or a counter counting down
//! from `n - 1` ([`predicates`], "Chains and counting down").
//!
//! Non-null block parameters: a block parameter is non-zero when every
//! value a reachable edge passes to it is — a constant, an address by
//! construction, a value known non-zero at the end of the edge's source
//! block or on the edge itself (`brif p`'s true edge), or another such
//! parameter, assumed non-zero meanwhile (the greatest fixed point over at
//! most 8 parameters, as LLVM's `isKnownNonZero` looks through φs): the
//! null checks of a reference a loop carries or swaps (`lcs`'s `prev` and
//! `cur` rows) or an `if` replaces by a fresh one fold.
//!
//! Non-null parameters ([`nonnull_params`]): an entry parameter that every
//! call site of the function passes non-null (a module-local function whose
//! address is never taken; [`GvnOptions::nonnull_params`]) is non-zero by
//! construction, like a defined symbol's address: its null checks fold.
//! So is the result of a direct call of such a function whose every
//! `return` is non-zero (a non-null result), in the callers that load or
//! store through it.
//!
//! # Invariants
//!
//! - The output passes Cranelift's verifier and computes what the input did,
//!   traps included: no instruction that may trap is introduced, moved or
//!   speculated; a trapping instruction or load is only replaced by a
//!   dominating access to the same place (or a constant derived without
//!   trapping).
//! - Instructions are added only (a) as an `iconst` replacing a block
//!   parameter that is a known constant, (b) as the one extracting operation
//!   that replaces a narrower load, and (c) by PRE: at most one instruction
//!   per removed one (inserted on the one edge missing it, or moved to a
//!   loop's preheader), never an instruction that may trap or access memory.
//!   So the instruction count never grows at the CLIF level (a PRE round that
//!   would grow it is rolled back). At the machine level, [`run_for_size`]
//!   falls back to GVN without PRE, then to the original function, when the
//!   code would grow (register allocation is outside the pass's control).
//! - The pass is idempotent: a second run finds nothing more to change.
//! - If the fixed point is not reached within [`MAX_PASSES`] passes (it always
//!   is in practice: the number of passes is bounded by the loop nesting
//!   depth plus two), the function is left untouched.
//! - Functions with exception tables (`try_call`) are left untouched.
//!
//! # Cost
//!
//! Each pass is linear in the function size (hash-table operations per
//! instruction, plus the predicate-equality lookups bounded by a constant
//! depth); the number of passes is small (loop nesting depth + 2).
//! Elimination is linear. PRE adds a linear candidate search per round, and
//! each round that applies something one more analysis and elimination
//! (usually one such round; at most [`MAX_PRE_ROUNDS`]).

mod analysis;
mod cfg;
mod eliminate;
mod expr;
mod groups;
mod nonnull_params;
mod pre;
mod predicates;
mod remarks;
mod simplify;

pub use groups::{groups_before_gvn, keep_groups_alike, GroupsBeforeGvn};
pub use nonnull_params::{kept_alike, NonnullParams};
pub use pre::PreMode;
pub use remarks::{run_functions, run_module, run_nonnull_params, CallSites, GvnReport};

use crate::code_cache::{code_size, CodeCache};
use cranelift_codegen::ir::{FuncRef, Function};
use cranelift_codegen::isa::TargetIsa;

/// Upper bound on analysis passes before giving up on a function.
pub const MAX_PASSES: u32 = 64;

/// Upper bound on PRE rounds (each: find and apply, analyse, eliminate).
pub const MAX_PRE_ROUNDS: u32 = 8;

/// What [`run_with`] does beyond GVN proper, and what it may assume.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GvnOptions {
    pub pre: PreMode,
    /// Callees whose results are never null (from
    /// [`ClifModule::returns_nonnull`](crate::clif_module::ClifModule)).
    pub nonnull_callees: Vec<FuncRef>,
    /// Indices of the function's parameters that are never zero on entry
    /// (from [`NonnullParams`]: every caller passes a value known
    /// non-null).
    pub nonnull_params: Vec<usize>,
}

/// What one run of the pass found and did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GvnStats {
    /// Values given a value number (block parameters and instruction results
    /// in reachable blocks).
    pub values_numbered: u64,
    /// Values found congruent to another value or a constant and replaced.
    pub values_replaced: u64,
    /// Pure instructions removed as fully redundant: a dominating congruent
    /// value existed, or (φ-of-ops) one on every incoming edge of a join.
    pub full_redundancies: u64,
    /// Partial redundancies removed at joins by one insertion (PRE).
    pub partial_redundancies: u64,
    /// Loop-invariant instructions moved to a loop's preheader (LICM).
    pub hoisted: u64,
    /// Instructions turned into constants.
    pub constants_folded: u64,
    /// Loads replaced by an earlier load or by a stored value.
    pub loads_removed: u64,
    /// Narrower loads replaced by one operation on a wider value at hand.
    pub loads_narrowed: u64,
    /// Stores of the value memory already held, removed.
    pub stores_removed: u64,
    /// Block parameters congruent to a single value, removed.
    pub params_removed: u64,
    /// Conditional branches with one reachable edge turned into jumps.
    pub branches_folded: u64,
    /// Unreachable blocks removed.
    pub blocks_removed: u64,
    /// Unused pure instructions deleted after elimination.
    pub dead_removed: u64,
    /// Analysis passes to the first fixed point (PRE rounds not included).
    pub iterations: u64,
    /// PRE rounds applied and confirmed.
    pub pre_rounds: u64,
    /// PRE rounds rolled back (the function would have grown).
    pub pre_rolled_back: u64,
    /// Functions left untouched (no fixed point, or unsupported constructs).
    pub skipped: u64,
    /// Functions whose rewrite was undone by [`run_for_size`] because their
    /// machine code came out larger (register allocation can lose what GVN won).
    pub reverted: u64,
    /// Functions where [`run_for_size`] kept GVN with less PRE (no if-join
    /// insertions, or no PRE) because full PRE made their machine code larger.
    pub pre_dropped: u64,
}

impl GvnStats {
    /// Adds another function's statistics to these.
    pub fn accumulate(&mut self, other: &GvnStats) {
        self.values_numbered += other.values_numbered;
        self.values_replaced += other.values_replaced;
        self.full_redundancies += other.full_redundancies;
        self.partial_redundancies += other.partial_redundancies;
        self.hoisted += other.hoisted;
        self.constants_folded += other.constants_folded;
        self.loads_removed += other.loads_removed;
        self.loads_narrowed += other.loads_narrowed;
        self.stores_removed += other.stores_removed;
        self.params_removed += other.params_removed;
        self.branches_folded += other.branches_folded;
        self.blocks_removed += other.blocks_removed;
        self.dead_removed += other.dead_removed;
        self.iterations += other.iterations;
        self.pre_rounds += other.pre_rounds;
        self.pre_rolled_back += other.pre_rolled_back;
        self.skipped += other.skipped;
        self.reverted += other.reverted;
        self.pre_dropped += other.pre_dropped;
    }

    /// True if the run changed the function.
    pub fn changed(&self) -> bool {
        self.values_replaced
            + self.loads_narrowed
            + self.stores_removed
            + self.params_removed
            + self.branches_folded
            + self.blocks_removed
            + self.dead_removed
            > 0
    }
}

impl std::fmt::Display for GvnStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "values numbered {}, replaced {} (full {}, partial {}, hoisted {}, constants {}, \
             loads {}), loads narrowed {}, stores removed {}, params removed {}, \
             branches folded {}, blocks removed {}, dead removed {}, iterations {}, \
             pre rounds {}{}, skipped {}, reverted {}{}",
            self.values_numbered,
            self.values_replaced,
            self.full_redundancies,
            self.partial_redundancies,
            self.hoisted,
            self.constants_folded,
            self.loads_removed,
            self.loads_narrowed,
            self.stores_removed,
            self.params_removed,
            self.branches_folded,
            self.blocks_removed,
            self.dead_removed,
            self.iterations,
            self.pre_rounds,
            if self.pre_rolled_back > 0 {
                format!(" ({} rolled back)", self.pre_rolled_back)
            } else {
                String::new()
            },
            self.skipped,
            self.reverted,
            if self.pre_dropped > 0 {
                format!(", PRE dropped {}", self.pre_dropped)
            } else {
                String::new()
            }
        )
    }
}

/// Runs optimistic GVN with PRE on `func`. The function must be valid CLIF;
/// the result is.
pub fn run(func: &mut Function) -> GvnStats {
    run_with(func, GvnOptions::default())
}

/// Runs optimistic GVN on `func` with `options`.
pub fn run_with(func: &mut Function, options: GvnOptions) -> GvnStats {
    let mut stats = GvnStats::default();
    // The analysis reads operands as written; aliases would hide them.
    func.dfg.resolve_all_aliases();
    if !cfg::is_supported(func) {
        stats.skipped = 1;
        return stats;
    }
    let cfg = cfg::CfgInfo::new(func);
    let Some(partition) = analysis::analyze(func, &cfg, &options) else {
        stats.skipped = 1;
        return stats;
    };
    stats.iterations = u64::from(partition.passes);
    stats.values_numbered = partition.values_numbered;
    eliminate::eliminate(func, &cfg, &partition, &mut stats);
    func.dfg.resolve_all_aliases();
    if options.pre != PreMode::Off {
        pre_rounds(func, cfg, partition, &options, &mut stats);
    }
    stats
}

/// PRE rounds (see [`pre`]): apply what one partition shows, then confirm by
/// analysing and eliminating again — or roll the round back if the function
/// grew or no fixed point was reached.
fn pre_rounds(
    func: &mut Function,
    mut cfg: cfg::CfgInfo,
    mut partition: analysis::Partition,
    options: &GvnOptions,
    stats: &mut GvnStats,
) {
    let mode = options.pre;
    for _ in 0..MAX_PRE_ROUNDS {
        let mut checkpoint = None;
        let before = crate::clif_module::count_insts(func);
        let mut round = GvnStats::default();
        let (joins, applied) =
            pre::apply_round(func, &partition, &cfg, mode, &mut checkpoint, &mut round);
        let Some(checkpoint) = checkpoint.filter(|_| applied > 0) else {
            return;
        };
        func.dfg.resolve_all_aliases();
        let new_cfg = cfg::CfgInfo::new(func);
        let confirmed = analysis::analyze(func, &new_cfg, options).inspect(|new_partition| {
            eliminate::eliminate(func, &new_cfg, new_partition, &mut round);
            eliminate::remove_unused_params(func, &joins, &mut round);
            func.dfg.resolve_all_aliases();
        });
        match confirmed {
            Some(new_partition) if crate::clif_module::count_insts(func) <= before => {
                round.pre_rounds = 1;
                stats.accumulate(&round);
                cfg = new_cfg;
                partition = new_partition;
            }
            _ => {
                *func = checkpoint;
                stats.pre_rolled_back += 1;
                return;
            }
        }
    }
}

/// Runs GVN for code size: the rewrite is kept only if the function's machine
/// code for `isa` (after Cranelift's own optimizer) is not larger than
/// without it. GVN removes work, but register allocation of the result can
/// occasionally cost a move more than it saved (a PRE block parameter is a
/// move on each edge); at `-Oz` no function may grow. So the pass is tried
/// with full PRE, then without insertions at if-joins, then without PRE —
/// each fallback only if the previous result grew and the fallback can
/// differ from it — and the first result that is not larger is kept; if none
/// is, the function is restored (counted in [`GvnStats::reverted`]). This
/// compiles each changed function two times, and up to four when it grows.
pub fn run_for_size(func: &mut Function, isa: &dyn TargetIsa) -> GvnStats {
    run_for_size_measured(func, isa, None, &GvnOptions::default()).stats
}

/// What [`run_for_size`] did to one function and the machine-code sizes it
/// measured on the way.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SizedRun {
    pub stats: GvnStats,
    /// Bytes of the original function (`None`: not measured, because GVN
    /// changed nothing, or it did not compile).
    pub before: Option<usize>,
    /// Bytes of the function kept (the original's when reverted).
    pub after: Option<usize>,
    /// Each PRE mode tried whose code grew, with its size.
    pub grew: Vec<(PreMode, usize)>,
}

/// [`run_for_size`], reporting the sizes it measured, compiling through
/// `cache` when there is one.
pub fn run_for_size_measured(
    func: &mut Function,
    isa: &dyn TargetIsa,
    cache: Option<&CodeCache>,
    options: &GvnOptions,
) -> SizedRun {
    let original = func.clone();
    // The original's size, measured once, when first needed.
    let mut original_size: Option<Option<usize>> = None;
    let mut last: Option<GvnStats> = None;
    let mut grew = Vec::new();
    for pre in [PreMode::Full, PreMode::NoJoinInsertion, PreMode::Off] {
        if let Some(previous) = &last {
            let same_as_previous = match pre {
                PreMode::NoJoinInsertion => previous.partial_redundancies == 0,
                _ => previous.pre_rounds == 0,
            };
            if same_as_previous {
                continue;
            }
        }
        let mut candidate = original.clone();
        let options = GvnOptions {
            pre,
            ..options.clone()
        };
        let mut stats = run_with(&mut candidate, options);
        stats.pre_dropped = u64::from(pre != PreMode::Full);
        if !stats.changed() {
            if last.is_some() {
                // A fallback that changes nothing is the original: the
                // rewrite is reverted.
                break;
            }
            return SizedRun {
                stats,
                before: original_size.flatten(),
                after: original_size.flatten(),
                grew,
            };
        }
        let before = *original_size.get_or_insert_with(|| code_size(&original, isa, cache));
        match (before, code_size(&candidate, isa, cache)) {
            (Some(before), Some(after)) if after > before => {
                grew.push((pre, after));
                last = Some(stats);
            }
            (_, after) => {
                *func = candidate;
                return SizedRun {
                    stats,
                    before,
                    after,
                    grew,
                };
            }
        }
    }
    *func = original;
    let mut stats = last.unwrap_or_default();
    stats.reverted = 1;
    stats.pre_dropped = 0;
    SizedRun {
        stats,
        before: original_size.flatten(),
        after: original_size.flatten(),
        grew,
    }
}
