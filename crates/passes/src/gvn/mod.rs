//! Optimistic global value numbering on CLIF, ahead of Cranelift's e-graph.
//!
//! This follows Brito, *Optimistic Global Value Numbering for Compilers with
//! Undefined Behavior* (2024), chapters 4 and 5, adapted to CLIF, where block
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
//!   (NewGVN's choice) rather than by the operand's key keeps keys finite in
//!   loops: `a = φ(0, a+1)` gets the stable key `φ(0, [a.next])`.
//! - A **memory state** ([`analysis::MemState`]) names the contents of memory
//!   at a program point: the function's entry state, the state after a
//!   writing instruction, or the join at a block with several reachable
//!   predecessors whose exit states differ. It is a Memory-SSA without
//!   alias regions: every store, call or other side effect starts a new state.
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
//!    of the value already there is redundant (§4.4).
//! 3. Repeat passes until one changes no term, no memory state and no edge:
//!    the partition is then a fixed point and sound. Each pass rebuilds the
//!    key table; terms from the previous pass feed only φ-operands on back
//!    edges, which is where the optimistic assumption lives (§4.5, §5.2).
//! 4. *Elimination* (Alg. 4.2): walk the dominator tree with a scoped map
//!    from term to the nearest dominating member; replace each value whose
//!    class has a dominating member, or whose term is a constant. Fold
//!    branches with one reachable edge into jumps, delete unreachable blocks,
//!    drop block parameters congruent to a single value, delete redundant
//!    stores, and delete the pure instructions left unused.
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
//! # Invariants
//!
//! - The output passes Cranelift's verifier and computes what the input did,
//!   traps included: no instruction that may trap is introduced, moved or
//!   speculated; a trapping instruction or load is only replaced by a
//!   dominating access to the same place (or a constant derived without
//!   trapping).
//! - No instruction is added except an `iconst` replacing a block parameter
//!   that is a known constant. Code never grows at the CLIF level; at the
//!   machine level, [`run_for_size`] restores a function whose code would
//!   grow (register allocation is outside the pass's control).
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
//! Elimination is linear. Partial redundancy elimination (§4.3.5) and
//! speculative LICM (§4.6) are not implemented yet.

mod analysis;
mod cfg;
mod eliminate;
mod expr;
mod simplify;

use cranelift_codegen::control::ControlPlane;
use cranelift_codegen::ir::Function;
use cranelift_codegen::isa::TargetIsa;
use cranelift_codegen::Context;

/// Upper bound on analysis passes before giving up on a function.
pub const MAX_PASSES: u32 = 64;

/// What one run of the pass found and did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GvnStats {
    /// Values given a value number (block parameters and instruction results
    /// in reachable blocks).
    pub values_numbered: u64,
    /// Values found congruent to another value or a constant and replaced.
    pub values_replaced: u64,
    /// Pure instructions removed as fully redundant (a dominating congruent value existed).
    pub full_redundancies: u64,
    /// Instructions turned into constants.
    pub constants_folded: u64,
    /// Loads replaced by an earlier load or by a stored value.
    pub loads_removed: u64,
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
    /// Analysis passes to the fixed point.
    pub iterations: u64,
    /// Partial redundancies removed by insertion (not implemented yet: always 0).
    pub partial_redundancies: u64,
    /// Functions left untouched (no fixed point, or unsupported constructs).
    pub skipped: u64,
    /// Functions whose rewrite was undone by [`run_for_size`] because their
    /// machine code came out larger (register allocation can lose what GVN won).
    pub reverted: u64,
}

impl GvnStats {
    /// Adds another function's statistics to these.
    pub fn accumulate(&mut self, other: &GvnStats) {
        self.values_numbered += other.values_numbered;
        self.values_replaced += other.values_replaced;
        self.full_redundancies += other.full_redundancies;
        self.constants_folded += other.constants_folded;
        self.loads_removed += other.loads_removed;
        self.stores_removed += other.stores_removed;
        self.params_removed += other.params_removed;
        self.branches_folded += other.branches_folded;
        self.blocks_removed += other.blocks_removed;
        self.dead_removed += other.dead_removed;
        self.iterations += other.iterations;
        self.partial_redundancies += other.partial_redundancies;
        self.skipped += other.skipped;
        self.reverted += other.reverted;
    }

    /// True if the run changed the function.
    pub fn changed(&self) -> bool {
        self.values_replaced
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
            "values numbered {}, replaced {} (full {}, constants {}, loads {}), stores removed {}, \
             params removed {}, branches folded {}, blocks removed {}, dead removed {}, \
             iterations {}, skipped {}, reverted {}",
            self.values_numbered,
            self.values_replaced,
            self.full_redundancies,
            self.constants_folded,
            self.loads_removed,
            self.stores_removed,
            self.params_removed,
            self.branches_folded,
            self.blocks_removed,
            self.dead_removed,
            self.iterations,
            self.skipped,
            self.reverted
        )
    }
}

/// Runs optimistic GVN on `func`. The function must be valid CLIF; the result is.
pub fn run(func: &mut Function) -> GvnStats {
    let mut stats = GvnStats::default();
    // The analysis reads operands as written; aliases would hide them.
    func.dfg.resolve_all_aliases();
    if !cfg::is_supported(func) {
        stats.skipped = 1;
        return stats;
    }
    let cfg = cfg::CfgInfo::new(func);
    let Some(partition) = analysis::analyze(func, &cfg) else {
        stats.skipped = 1;
        return stats;
    };
    stats.iterations = u64::from(partition.passes);
    stats.values_numbered = partition.values_numbered;
    eliminate::eliminate(func, &cfg, &partition, &mut stats);
    func.dfg.resolve_all_aliases();
    stats
}

/// Runs GVN for code size: the rewrite is kept only if the function's machine
/// code for `isa` (after Cranelift's own optimizer) is not larger than
/// without it. GVN removes work, but register allocation of the result can
/// occasionally cost a move more than it saved; at `-Oz` no function may grow,
/// so such a function is restored (counted in [`GvnStats::reverted`]). This
/// compiles each changed function twice.
pub fn run_for_size(func: &mut Function, isa: &dyn TargetIsa) -> GvnStats {
    let original = func.clone();
    let mut stats = run(func);
    if !stats.changed() {
        return stats;
    }
    if let (Some(before), Some(after)) = (code_size(&original, isa), code_size(func, isa)) {
        if after > before {
            *func = original;
            stats.reverted = 1;
        }
    }
    stats
}

/// Bytes of machine code Cranelift emits for `func`, if it compiles.
pub fn code_size(func: &Function, isa: &dyn TargetIsa) -> Option<usize> {
    let mut ctx = Context::for_function(func.clone());
    ctx.compile(isa, &mut ControlPlane::default())
        .ok()
        .map(|c| c.code_buffer().len())
}
