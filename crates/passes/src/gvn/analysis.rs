//! The optimistic fixed point: value numbers, reachability and memory states
//! ([BRITO] Alg. 4.1/5.1, §4.3–§4.5; references in docs/DESIGN.md).

use cranelift_codegen::entity::EntityRef;
use cranelift_codegen::entity::{EntitySet, SecondaryMap};
use cranelift_codegen::ir::condcodes::{CondCode, IntCC};
use cranelift_codegen::ir::{
    Block, FuncRef, Function, GlobalValueData, Inst, InstructionData, MemFlagsData, Opcode, Type,
    Value, ValueDef,
};
use cranelift_codegen::packed_option::PackedOption;
use hashbrown::HashMap;
use smallvec::SmallVec;

use super::cfg::{CfgInfo, EdgeId};
use super::expr::{is_const_type, masked, sext, term_order, Args, Key, Place, Term};
use super::predicates::{Affine, Cover, Relation, MAX_COEFFICIENT};
use super::simplify::{self, Context};
use super::GvnOptions;
use super::MAX_PASSES;

/// The contents of one part of memory at a program point (see the module
/// doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemState {
    /// As on entry to the function.
    Entry,
    /// As left by this instruction (a store, a call, another side effect).
    After(Inst),
    /// The join of differing states of this slot at the entry of this block.
    Join(Block, u32),
}

/// The memory state of each part of memory at a program point: slot 0 is
/// memory outside every alias region, slot `1 + r` is alias region `r`
/// (Cranelift's model: an access with a region touches only that region's
/// memory; one without a region reads only slot 0, and writes every slot).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Memory {
    slots: SmallVec<[MemState; 6]>,
}

impl Memory {
    fn uniform(slots: usize, state: impl Fn(u32) -> MemState) -> Memory {
        Memory {
            slots: (0..slots as u32).map(state).collect(),
        }
    }

    /// After an instruction that may write any memory.
    fn write_all(&mut self, inst: Inst) {
        self.slots.fill(MemState::After(inst));
    }
}

/// The memory slot an access with `flags` touches.
fn slot_of(flags: MemFlagsData) -> usize {
    flags.alias_region().map_or(0, |r| 1 + r.index())
}

/// How far up the dominator tree predicates are looked for.
const MAX_EQ_SCOPES: usize = 16;

/// How deep [`Analyzer::lower_bound`] looks through the operations that make a
/// value.
const MAX_SIGN_DEPTH: u32 = 4;

/// How many links [`Analyzer::decide`] follows through chains of relations
/// and inductions ([`Analyzer::below_by_chain`]).
const MAX_CHAIN: u32 = 2;

/// How many block parameters [`Analyzer::nonzero_phi`] assumes non-zero at
/// most while proving one.
const MAX_NONZERO_PHIS: usize = 8;

/// A full-width value in memory: (offset, type, term).
type WideValue = (i32, Type, Term);

/// The analysis result at the fixed point.
pub struct Partition {
    pub terms: SecondaryMap<Value, Term>,
    pub edge_reachable: Vec<bool>,
    pub block_reachable: SecondaryMap<Block, bool>,
    /// Stores that write the value memory already holds.
    pub redundant_stores: EntitySet<Inst>,
    pub passes: u32,
    pub values_numbered: u64,
    /// Key → leader at the fixed point (what φ-translation looks up).
    pub table: HashMap<Key, Value>,
    /// Leader → its key.
    pub key_of: HashMap<Value, Key>,
    /// Loads that read part of a wider available value: the one ALU
    /// operation (operands masked) that extracts it and its operand terms
    /// (the wider value's, then a constant shift amount or mask).
    pub narrowed: HashMap<Inst, (InstructionData, Args)>,
}

impl Partition {
    /// A simplification context over the fixed point (for φ-translation).
    pub fn context<'a>(&'a self, cfg: &'a CfgInfo) -> PartitionContext<'a> {
        PartitionContext { part: self, cfg }
    }
}

/// [`Context`] over a finished partition.
pub struct PartitionContext<'a> {
    part: &'a Partition,
    cfg: &'a CfgInfo,
}

impl Context for PartitionContext<'_> {
    fn key_of(&self, t: Term) -> Option<&Key> {
        match t {
            Term::Val(v) => self.part.key_of.get(&v),
            _ => None,
        }
    }
    fn lookup(&self, key: &Key) -> Option<Term> {
        self.part.table.get(key).map(|&v| Term::Val(v))
    }
    fn order(&self, t: Term) -> u64 {
        term_order(&self.cfg.value_order, t)
    }
}

/// Runs the analysis; `None` if no fixed point was reached in [`MAX_PASSES`].
/// `options` says what is known beyond the function: callees whose results
/// are never null, entry parameters that are never zero.
pub fn analyze(func: &Function, cfg: &CfgInfo, options: &GvnOptions) -> Option<Partition> {
    let mut a = Analyzer::new(func, cfg, options);
    for pass in 1..=MAX_PASSES {
        a.changed = false;
        a.run_pass();
        if !a.changed {
            a.prune_decided_edges();
            return Some(Partition {
                terms: a.terms,
                edge_reachable: a.edge_reachable,
                block_reachable: a.block_reachable,
                redundant_stores: a.redundant_stores,
                passes: pass,
                values_numbered: a.numbered,
                table: a.table,
                key_of: a.key_of,
                narrowed: a.narrowed,
            });
        }
    }
    None
}

struct Analyzer<'a> {
    func: &'a Function,
    cfg: &'a CfgInfo,
    nonnull_callees: &'a [FuncRef],
    /// Indices of the entry block's parameters that are never zero.
    nonnull_params: &'a [usize],
    terms: SecondaryMap<Value, Term>,
    edge_reachable: Vec<bool>,
    block_reachable: SecondaryMap<Block, bool>,
    mem_out: SecondaryMap<Block, Option<Memory>>,
    /// Memory slots: one outside every region, one per alias region.
    mem_slots: usize,
    /// Key → leader, rebuilt every pass.
    table: HashMap<Key, Value>,
    /// Leader → its key, for simplification through operands.
    key_of: HashMap<Value, Key>,
    /// What each place holds, per memory state, rebuilt every pass.
    places: HashMap<Place, Term>,
    /// Full-width integer values known in memory, by address term and memory
    /// state: (offset, type, term), for narrower loads. Little-endian only.
    wide: HashMap<(Term, MemState), SmallVec<[WideValue; 2]>>,
    narrowed: HashMap<Inst, (InstructionData, Args)>,
    /// Equalities `from → to` known in each block (and the blocks it dominates).
    eqs: SecondaryMap<Block, SmallVec<[(Term, Term); 2]>>,
    /// Relations known in each block (and the blocks it dominates).
    rels: SecondaryMap<Block, SmallVec<[Relation; 1]>>,
    /// Nearest strict dominator with equalities or relations.
    eq_parent: SecondaryMap<Block, PackedOption<Block>>,
    redundant_stores: EntitySet<Inst>,
    changed: bool,
    numbered: u64,
}

impl Context for Analyzer<'_> {
    fn key_of(&self, t: Term) -> Option<&Key> {
        match t {
            Term::Val(v) => self.key_of.get(&v),
            _ => None,
        }
    }
    fn lookup(&self, key: &Key) -> Option<Term> {
        self.table.get(key).map(|&v| Term::Val(v))
    }
    fn order(&self, t: Term) -> u64 {
        term_order(&self.cfg.value_order, t)
    }
}

impl<'a> Analyzer<'a> {
    fn new(func: &'a Function, cfg: &'a CfgInfo, options: &'a GvnOptions) -> Self {
        let mut terms = SecondaryMap::with_default(Term::Bottom);
        let mut block_reachable = SecondaryMap::with_default(false);
        if let Some(entry) = func.layout.entry_block() {
            block_reachable[entry] = true;
            for &arg in func.dfg.block_params(entry) {
                terms[arg] = Term::Val(arg);
            }
        }
        Analyzer {
            func,
            cfg,
            nonnull_callees: &options.nonnull_callees,
            nonnull_params: &options.nonnull_params,
            terms,
            edge_reachable: vec![false; cfg.edges.len()],
            block_reachable,
            mem_out: SecondaryMap::new(),
            mem_slots: 1 + func.dfg.alias_regions.len(),
            table: HashMap::new(),
            key_of: HashMap::new(),
            places: HashMap::new(),
            wide: HashMap::new(),
            narrowed: HashMap::new(),
            eqs: SecondaryMap::new(),
            rels: SecondaryMap::new(),
            eq_parent: SecondaryMap::new(),
            redundant_stores: EntitySet::new(),
            changed: false,
            numbered: 0,
        }
    }

    fn run_pass(&mut self) {
        self.table.clear();
        self.key_of.clear();
        self.places.clear();
        self.wide.clear();
        self.narrowed.clear();
        self.redundant_stores.clear();
        self.numbered = 0;
        for i in 0..self.cfg.rpo.len() {
            let block = self.cfg.rpo[i];
            if !self.block_reachable[block] {
                continue;
            }
            self.enter_block(block);
            let mut mem = self.mem_in(block);
            self.eval_params(block);
            let insts: SmallVec<[Inst; 32]> = self.func.layout.block_insts(block).collect();
            for &inst in &insts {
                if self.func.dfg.insts[inst].opcode().is_terminator() {
                    self.eval_terminator(block, inst);
                } else {
                    self.eval_inst(block, inst, &mut mem);
                }
            }
            if self.mem_out[block].as_ref() != Some(&mem) {
                self.mem_out[block] = Some(mem);
                self.changed = true;
            }
        }
    }

    fn set(&mut self, v: Value, t: Term) {
        self.numbered += 1;
        if self.terms[v] != t {
            self.terms[v] = t;
            self.changed = true;
        }
    }

    /// The term of `v` as seen in `block`, after predicate equalities.
    fn term_in(&self, v: Value, block: Block) -> Term {
        let t = self.terms[v];
        self.rewrite(t, block)
    }

    fn rewrite(&self, t: Term, block: Block) -> Term {
        if !matches!(t, Term::Val(_)) {
            return t;
        }
        for s in self.scopes(block) {
            if let Some(&(_, to)) = self.eqs[s].iter().find(|(from, _)| *from == t) {
                return to;
            }
        }
        t
    }

    fn has_predicates(&self, block: Block) -> bool {
        !self.eqs[block].is_empty() || !self.rels[block].is_empty()
    }

    /// `block` and its dominators that know predicates, nearest first (at
    /// most [`MAX_EQ_SCOPES`]).
    fn scopes(&self, block: Block) -> impl Iterator<Item = Block> + '_ {
        let first = if self.has_predicates(block) {
            Some(block)
        } else {
            self.eq_parent[block].expand()
        };
        std::iter::successors(first, |&s| self.eq_parent[s].expand()).take(MAX_EQ_SCOPES)
    }

    /// Whether `a cc b` is known to hold (`Some(true)`) or not to hold
    /// (`Some(false)`) in `block`, from the relations of dominating branches
    /// ([`super::predicates`]).
    fn decide(&self, cc: IntCC, a: Term, b: Term, block: Block) -> Option<bool> {
        self.decide_at(cc, a, b, block, MAX_CHAIN)
    }

    /// [`Self::decide`], following at most `chain` links of a chain
    /// `a < m < b` ([`Self::below_by_chain`]) or of an induction
    /// ([`Self::below_by_countdown`]).
    fn decide_at(&self, cc: IntCC, a: Term, b: Term, block: Block, chain: u32) -> Option<bool> {
        if matches!(cc, IntCC::Equal | IntCC::NotEqual) {
            let zero = |t: Term| matches!(t, Term::Const(_, 0));
            let other = if zero(b) { a } else { b };
            if (zero(a) || zero(b)) && self.nonzero_by_construction(other) {
                return Some(cc == IntCC::NotEqual);
            }
        }
        let wants_unsigned = !matches!(cc, IntCC::Equal | IntCC::NotEqual) && cc.unsigned() == cc;
        let zero_test = matches!(cc, IntCC::Equal | IntCC::NotEqual)
            && (matches!(a, Term::Const(_, 0)) || matches!(b, Term::Const(_, 0)));
        for s in self.scopes(block) {
            for &rel in &self.rels[s] {
                if (rel.a, rel.b) != (a, b) && (rel.a, rel.b) != (b, a) {
                    continue;
                }
                if let Some(known) = rel.decides(cc, a, b) {
                    return Some(known);
                }
                if !wants_unsigned {
                    continue;
                }
                let unsigned = rel.unsigned_form(|t| self.nonneg(t));
                if let Some(known) = unsigned.and_then(|u| u.decides(cc, a, b)) {
                    return Some(known);
                }
            }
        }
        if zero_test {
            let other = if matches!(a, Term::Const(_, 0)) { b } else { a };
            if self.nonzero_phi(other) {
                return Some(cc == IntCC::NotEqual);
            }
        }
        if wants_unsigned {
            // `a <u b` or `b >u a` through a decrement of a bounded value.
            let (less, more) = match cc {
                IntCC::UnsignedLessThan | IntCC::UnsignedGreaterThanOrEqual => (a, b),
                IntCC::UnsignedGreaterThan | IntCC::UnsignedLessThanOrEqual => (b, a),
                _ => return None,
            };
            if self.below_by_decrement(less, more, block, chain)
                || self.below_by_affine_bound(less, more, block)
                || (chain > 0 && self.below_by_chain(less, more, block, chain - 1))
                || (chain > 0 && self.below_by_countdown(less, more, block, chain - 1))
            {
                let known = Relation {
                    cc: IntCC::UnsignedLessThan,
                    a: less,
                    b: more,
                };
                return known.decides(cc, a, b);
            }
        }
        None
    }

    /// Whether `t` is an address that cannot be null: a symbol defined in
    /// the same linkage unit (`colocated`), the result of a call to a
    /// function the module says never returns null, or an entry parameter
    /// every caller passes non-null ([`super::nonnull_params`]).
    fn nonzero_by_construction(&self, t: Term) -> bool {
        let Term::Val(v) = t else { return false };
        let dfg = &self.func.dfg;
        let inst = match dfg.value_def(v) {
            ValueDef::Result(inst, 0) => inst,
            ValueDef::Param(block, index) => {
                return Some(block) == self.func.layout.entry_block()
                    && self.nonnull_params.contains(&index);
            }
            _ => return false,
        };
        match dfg.insts[inst] {
            InstructionData::UnaryGlobalValue {
                opcode: Opcode::SymbolValue,
                global_value,
            } => matches!(
                self.func.global_values[global_value],
                GlobalValueData::Symbol {
                    colocated: true,
                    offset,
                    ..
                } if offset.bits() == 0
            ),
            InstructionData::FuncAddr { func_ref, .. } => dfg.ext_funcs[func_ref].colocated,
            InstructionData::Call { func_ref, .. } => self.nonnull_callees.contains(&func_ref),
            _ => false,
        }
    }

    /// Whether `t`, the class of a block parameter, is never zero: every
    /// value a reachable edge passes to it is non-zero at the end of the
    /// edge — a constant, an address by construction, a value the relations
    /// of the edge's source block or the edge's own branch say is non-zero,
    /// or another such parameter (module doc, "Non-null parameters"). The
    /// parameters are assumed non-zero while their edges are looked at (the
    /// greatest fixed point: by induction on the steps of an execution, no
    /// parameter of the set is the first to receive zero), at most
    /// [`MAX_NONZERO_PHIS`] of them: a reference a loop carries, or swaps
    /// with another (`prev`/`cur` rows), or that one arm of an `if`
    /// replaces by a fresh one.
    fn nonzero_phi(&self, t: Term) -> bool {
        let mut assumed: SmallVec<[Term; MAX_NONZERO_PHIS]> = SmallVec::new();
        self.nonzero_phi_assuming(t, &mut assumed)
    }

    fn nonzero_phi_assuming(
        &self,
        t: Term,
        assumed: &mut SmallVec<[Term; MAX_NONZERO_PHIS]>,
    ) -> bool {
        if assumed.contains(&t) {
            return true;
        }
        let Term::Val(v) = t else { return false };
        let ValueDef::Param(block, index) = self.func.dfg.value_def(v) else {
            return false;
        };
        if Some(block) == self.func.layout.entry_block() || assumed.len() >= MAX_NONZERO_PHIS {
            return false;
        }
        let zero = Term::constant(self.func.dfg.value_type(v), 0);
        assumed.push(t);
        self.reachable_args(block, index).all(|(edge, arg, from)| {
            // An argument that is not a plain value says nothing.
            let Some(arg) = arg else {
                return false;
            };
            match self.term_in(arg, from) {
                // Not evaluated yet: ignored, as by the join (optimistic).
                Term::Bottom => true,
                Term::Const(_, k) => k != 0,
                a => {
                    self.nonzero_by_construction(a)
                        || self.edge_says_nonzero(a, zero, edge)
                        || self.scopes(from).any(|s| {
                            self.rels[s]
                                .iter()
                                .any(|r| r.decides(IntCC::NotEqual, a, zero) == Some(true))
                        })
                        || self.nonzero_phi_assuming(a, assumed)
                }
            }
        })
    }

    /// Whether taking `edge` says `a ≠ 0`: the true edge of `brif a`, or
    /// an edge of `brif (icmp cc x y)` whose relation (its complement on the
    /// false edge) implies `a ≠ 0`.
    fn edge_says_nonzero(&self, a: Term, zero: Term, edge: EdgeId) -> bool {
        let e = self.cfg.edges[edge];
        let InstructionData::Brif { arg, .. } = self.func.dfg.insts[e.inst] else {
            return false;
        };
        let on_true = e.slot == 0;
        let cond = self.term_in(arg, e.from);
        if cond == a {
            return on_true;
        }
        let Some(Key::Op {
            data: InstructionData::IntCompare { cond: cc, .. },
            args,
            ..
        }) = self.key_of(cond)
        else {
            return false;
        };
        let cc = if on_true { *cc } else { cc.complement() };
        let relation = Relation {
            cc,
            a: args[0],
            b: args[1],
        };
        relation.decides(IntCC::NotEqual, a, zero) == Some(true)
    }

    /// Whether `t`, as a signed integer, is known to be non-negative.
    fn nonneg(&self, t: Term) -> bool {
        self.lower_bound(t).is_some_and(|low| low >= 0)
    }

    /// A signed lower bound of `t`, if one is known.
    fn lower_bound(&self, t: Term) -> Option<i64> {
        self.lower_bound_at(t, None, MAX_SIGN_DEPTH)
    }

    /// [`Self::lower_bound`], assuming the block parameter class
    /// `inductive.0` is at least `inductive.1` (the induction hypothesis
    /// while looking at the values a loop feeds back into it).
    fn lower_bound_at(&self, t: Term, inductive: Option<(Term, i64)>, depth: u32) -> Option<i64> {
        let v = match t {
            Term::Const(ty, bits) => return Some(sext(ty, bits)),
            Term::Bottom => return None,
            Term::Val(_) if Some(t) == inductive.map(|i| i.0) => return inductive.map(|i| i.1),
            Term::Val(v) => v,
        };
        if depth == 0 {
            return None;
        }
        match self.func.dfg.value_def(v) {
            ValueDef::Param(block, index) if inductive.is_none() => {
                self.param_lower_bound(t, block, index, depth - 1)
            }
            ValueDef::Result(inst, 0) => self.result_lower_bound(inst, inductive, depth - 1),
            _ => None,
        }
    }

    /// Block parameter `index` of `block`, of class `t`, is at least `L`,
    /// the least bound of the values entering it that do not depend on it,
    /// if every value a reachable edge passes is at least `L` assuming `t`
    /// is (induction on the iterations of the loop it heads).
    fn param_lower_bound(&self, t: Term, block: Block, index: usize, depth: u32) -> Option<i64> {
        let param = self.func.dfg.block_params(block)[index];
        let args: SmallVec<[Term; 4]> = self.cfg.incoming[block]
            .iter()
            .map(|&edge| self.incoming_term(edge, index, param))
            .filter(|&arg| arg != Term::Bottom)
            .collect();
        let entering = args
            .iter()
            .filter_map(|&arg| self.lower_bound_at(arg, Some((t, i64::MAX)), depth))
            .min()?;
        args.iter()
            .all(|&arg| {
                self.lower_bound_at(arg, Some((t, entering)), depth)
                    .is_some_and(|low| low >= entering)
            })
            .then_some(entering)
    }

    fn result_lower_bound(
        &self,
        inst: Inst,
        inductive: Option<(Term, i64)>,
        depth: u32,
    ) -> Option<i64> {
        let block = self.func.layout.inst_block(inst)?;
        let term = |v: Value| self.term_in(v, block);
        let bound = |v: Value| self.lower_bound_at(term(v), inductive, depth);
        match self.func.dfg.insts[inst] {
            InstructionData::Unary {
                opcode: Opcode::Uextend,
                ..
            } => Some(0),
            InstructionData::Unary {
                opcode: Opcode::Sextend,
                arg,
            } => bound(arg),
            // A non-negative mask keeps the result non-negative.
            InstructionData::Binary {
                opcode: Opcode::Band,
                args: [x, y],
            } => {
                (bound(x).is_some_and(|l| l >= 0) || bound(y).is_some_and(|l| l >= 0)).then_some(0)
            }
            // The shift amount is taken modulo the type's width: a shift by
            // a multiple of it leaves the sign bit where it was.
            InstructionData::Binary {
                opcode: Opcode::Ushr,
                args: [_, amount],
            } => {
                let bits = u64::from(self.func.dfg.ctrl_typevar(inst).bits());
                matches!(term(amount), Term::Const(_, n) if n % bits != 0).then_some(0)
            }
            InstructionData::Binary {
                opcode: Opcode::Iadd | Opcode::Isub,
                ..
            } => {
                let (base, step) = self.constant_step(inst, block)?;
                let low = self.lower_bound_at(base, inductive, depth)?;
                let ty = self.func.dfg.ctrl_typevar(inst);
                self.step_lower_bound(ty, base, low, step, block)
            }
            _ => None,
        }
    }

    /// `inst` as `base + step` with a constant `step`, if it is an `iadd`
    /// or `isub` of a constant (terms as seen in `block`).
    fn constant_step(&self, inst: Inst, block: Block) -> Option<(Term, i64)> {
        let term = |v: Value| self.term_in(v, block);
        let InstructionData::Binary {
            opcode,
            args: [x, y],
        } = self.func.dfg.insts[inst]
        else {
            return None;
        };
        match (opcode, term(x), term(y)) {
            (Opcode::Iadd, base, Term::Const(ty, c)) | (Opcode::Iadd, Term::Const(ty, c), base) => {
                Some((base, sext(ty, c)))
            }
            (Opcode::Isub, base, Term::Const(ty, c)) => Some((base, sext(ty, c).checked_neg()?)),
            _ => None,
        }
    }

    /// The lower bound of `base + step` (type `ty`) in `block`, given
    /// `base ≥ low`, if the addition cannot wrap: going down, when
    /// `low + step` stays above the type's least value; going up by 1, when
    /// `base <s y` holds for some `y` (so `base` is not the largest value).
    fn step_lower_bound(
        &self,
        ty: Type,
        base: Term,
        low: i64,
        step: i64,
        block: Block,
    ) -> Option<i64> {
        let least = sext(ty, 1u64 << (ty.bits() - 1));
        match step {
            0 => Some(low),
            1 => self
                .has_signed_upper_bound(base, block)
                .then(|| low.saturating_add(1)),
            s if s < 0 => low.checked_add(s).filter(|&l| l >= least),
            _ => None,
        }
    }

    /// Whether `a <u b` follows from `a = x - k` (`k > 0`, no wrap: `a ≥ 0`)
    /// and `x <u b` known in `block`: then `0 ≤ a < x < b`. This is how
    /// `xs[i - 1]` in a loop `for i in 1..len(xs)` needs no bounds check.
    fn below_by_decrement(&self, a: Term, b: Term, block: Block, chain: u32) -> bool {
        let Term::Val(v) = a else { return false };
        let ValueDef::Result(inst, 0) = self.func.dfg.value_def(v) else {
            return false;
        };
        let Some(def_block) = self.func.layout.inst_block(inst) else {
            return false;
        };
        let Some((x, step)) = self.constant_step(inst, def_block) else {
            return false;
        };
        step < 0
            && self.nonneg(a)
            && self.decide_at(IntCC::UnsignedLessThan, x, b, block, chain) == Some(true)
    }

    /// Whether `a <u b` follows from a relation `a < m` or `a ≤ m` known in
    /// `block` (signed with `a ≥ 0`, or unsigned) and `m <u b`: then
    /// `0 ≤ a ≤ m < b` — `xs[j]` for `j < i` where `i < len(xs)` (a
    /// triangular loop), `xs[0]` where `0 < i < len(xs)`. `chain` bounds the
    /// links followed to decide `m <u b`.
    fn below_by_chain(&self, a: Term, b: Term, block: Block, chain: u32) -> bool {
        let nonneg = self.nonneg_in(a, block);
        self.scopes(block).any(|s| {
            self.rels[s].iter().any(|&r| {
                let r = if r.b == a { r.swapped() } else { r };
                let ordered = match r.cc {
                    IntCC::SignedLessThan | IntCC::SignedLessThanOrEqual => nonneg,
                    IntCC::UnsignedLessThan | IntCC::UnsignedLessThanOrEqual => true,
                    _ => false,
                };
                ordered
                    && r.a == a
                    && r.b != b
                    && self.decide_at(IntCC::UnsignedLessThan, r.b, b, block, chain) == Some(true)
            })
        })
    }

    /// Whether `p <u n` holds in `block` for a loop counter `p` (a block
    /// parameter) that counts down from below `n`, where `p ≥ 0` is known:
    /// `xs[i]` in `let mut i = len(xs) - 1; while i >= 0 { …; i -= 1 }`.
    ///
    /// The invariant at the loop header is `p <u n ∨ p <s 0`, over the
    /// type's wrapping arithmetic, with `n` defined before the header (one
    /// value throughout the loop). Each value a reachable edge passes keeps
    /// it: `n + k` for a constant `k < 0` (below `n` when `n ≥ |k|`
    /// unsigned, negative when it wraps), a value known below `n` at the
    /// edge's source, a negative constant, `p` itself, and `p - c` for a
    /// constant `0 ≤ c ≤ 2^62` where `p ≥ 0` is known at the edge's source
    /// (then `p <u n`, and `p - c` does not wrap: it is at most `p`, or
    /// negative). With `p ≥ 0` in `block`, the invariant gives `p <u n`.
    fn below_by_countdown(&self, p: Term, n: Term, block: Block, chain: u32) -> bool {
        let Term::Val(v) = p else { return false };
        let ValueDef::Param(header, index) = self.func.dfg.value_def(v) else {
            return false;
        };
        if Some(header) == self.func.layout.entry_block()
            || !self.defined_before(n, header)
            || !self.nonneg_in(p, block)
        {
            return false;
        }
        self.reachable_args(header, index).all(|(_, arg, from)| {
            let Some(arg) = arg else {
                return false;
            };
            let a = self.term_in(arg, from);
            // Read from the instruction, not the key table: a back
            // edge's value may not be numbered yet in this pass.
            let step = match self.func.dfg.value_def(arg) {
                ValueDef::Result(inst, 0) => self
                    .func
                    .layout
                    .inst_block(inst)
                    .and_then(|b| self.constant_step(inst, b)),
                _ => None,
            };
            match (a, step) {
                (Term::Bottom, _) => true,
                _ if a == p => true,
                (Term::Const(ty, k), _) if sext(ty, k) < 0 => true,
                (_, Some((base, k))) if base == n && k < 0 => true,
                (_, Some((base, k)))
                    if base == p && (-MAX_COEFFICIENT..=0).contains(&i128::from(k)) =>
                {
                    self.nonneg_in(p, from)
                }
                _ => self.decide_at(IntCC::UnsignedLessThan, a, n, from, chain) == Some(true),
            }
        })
    }

    /// Whether `t` is a constant or a value defined in a block that strictly
    /// dominates `header` (so one value on every iteration of its loop).
    fn defined_before(&self, t: Term, header: Block) -> bool {
        let Term::Val(v) = t else {
            return matches!(t, Term::Const(..));
        };
        let def_block = match self.func.dfg.value_def(v) {
            ValueDef::Param(b, _) => Some(b),
            ValueDef::Result(inst, _) => self.func.layout.inst_block(inst),
            _ => None,
        };
        def_block.is_some_and(|b| {
            b != header && self.cfg.domtree.dominates(b, header, &self.func.layout)
        })
    }

    /// A signed lower bound of `t` in `block`: [`Self::lower_bound`], or a
    /// constant `t` is known above there (`t >s c`, `t ≥s c`).
    fn lower_bound_in(&self, t: Term, block: Block) -> Option<i64> {
        let from_relations = self.scopes(block).flat_map(|s| {
            self.rels[s].iter().filter_map(move |&r| {
                let r = if r.b == t { r.swapped() } else { r };
                let Term::Const(ty, c) = r.b else { return None };
                let c = sext(ty, c);
                match r.cc {
                    _ if r.a != t => None,
                    IntCC::SignedGreaterThan => c.checked_add(1),
                    IntCC::SignedGreaterThanOrEqual => Some(c),
                    _ => None,
                }
            })
        });
        self.lower_bound(t).into_iter().chain(from_relations).max()
    }

    /// Whether `t` is known non-negative in `block`.
    fn nonneg_in(&self, t: Term, block: Block) -> bool {
        self.lower_bound_in(t, block).is_some_and(|low| low >= 0)
    }

    /// Whether `idx <u n` follows from reading `idx` as `a·x + b` and a
    /// relation `x <s m` known in `block` whose bound `m` covers `n`
    /// ([`super::predicates`], "Affine indices"): `xs[4*i + 3]` under
    /// `i < len(xs) / 4`.
    fn below_by_affine_bound(&self, idx: Term, n: Term, block: Block) -> bool {
        self.affine_readings(idx).into_iter().any(|index| {
            let Some(low) = self.lower_bound(index.x) else {
                return false;
            };
            self.scopes(block).any(|s| {
                self.rels[s].iter().any(|r| {
                    let m = match r.cc {
                        IntCC::SignedLessThan if r.a == index.x => r.b,
                        IntCC::SignedGreaterThan if r.b == index.x => r.a,
                        _ => return false,
                    };
                    self.covers(m, MAX_SIGN_DEPTH)
                        .iter()
                        .any(|&cover| cover.n == n && index.below(i128::from(low), cover))
                })
            })
        })
    }

    /// The readings of `t` as `a·x + b`, one per step down its operations
    /// (`t` itself first): through `iadd`/`isub` of a constant, `imul` by a
    /// positive constant and `ishl` by a constant, at most
    /// [`MAX_SIGN_DEPTH`] deep. Each is exact in the type's wrapping
    /// arithmetic.
    fn affine_readings(&self, t: Term) -> SmallVec<[Affine; 4]> {
        let mut readings: SmallVec<[Affine; 4]> = SmallVec::new();
        // `t = outer(inner)`: `outer` maps a reading of `inner` to one of `t`.
        let mut steps: SmallVec<[Step; 4]> = SmallVec::new();
        let mut inner = t;
        readings.push(Affine::of(t));
        for _ in 0..MAX_SIGN_DEPTH {
            let Some((step, operand)) = self.affine_step(inner) else {
                break;
            };
            steps.push(step);
            inner = operand;
            let reading = steps
                .iter()
                .rev()
                .try_fold(Affine::of(inner), |r, step| step.apply(r));
            match reading {
                Some(r) => readings.push(r),
                None => break,
            }
        }
        readings
    }

    /// `t` as one affine step applied to an operand, if it is one.
    fn affine_step(&self, t: Term) -> Option<(Step, Term)> {
        let Some(Key::Op { data, ty, args }) = self.key_of(t) else {
            return None;
        };
        let width = u64::from(ty.bits());
        // Commutative operands are ordered by `term_order`, which does not
        // always put a constant first (a large one ties with a value).
        match (data.opcode(), args.as_slice()) {
            (Opcode::Iadd, &[Term::Const(cty, k), p] | &[p, Term::Const(cty, k)]) => {
                Some((Step::Plus(i128::from(sext(cty, k))), p))
            }
            (Opcode::Isub, &[p, Term::Const(cty, k)]) => {
                Some((Step::Plus(-i128::from(sext(cty, k))), p))
            }
            (Opcode::Imul, &[Term::Const(cty, k), p] | &[p, Term::Const(cty, k)]) => {
                Some((Step::Times(i128::from(sext(cty, k))), p))
            }
            (Opcode::Ishl, &[p, Term::Const(_, s)]) if s % width < 62 => {
                Some((Step::Times(1 << (s % width)), p))
            }
            _ => None,
        }
    }

    /// What bounds `m`, as a value below which a variable stays, give:
    /// [`Cover`]s `c·m + d ≤ n` for `1 ≤ m < 2^(w−1)` (see
    /// [`super::predicates`]): `m` itself, and through a division or shift
    /// by a constant and the subtraction of one.
    fn covers(&self, m: Term, depth: u32) -> SmallVec<[Cover; 4]> {
        let mut out: SmallVec<[Cover; 4]> = SmallVec::new();
        out.push(Cover::of(m));
        if depth == 0 {
            return out;
        }
        let Some(Key::Op { data, ty, args }) = self.key_of(m) else {
            return out;
        };
        let width = u64::from(ty.bits());
        let shift = |s: u64| {
            (1..=62)
                .contains(&(s % width))
                .then(|| 1i128 << (s % width))
        };
        match (data.opcode(), args.as_slice()) {
            // `m ≥ 1` makes the dividend at least the divisor, so positive:
            // what covers it covers `m` with the divisor as a factor.
            (Opcode::Sdiv, &[p, Term::Const(cty, k)]) if sext(cty, k) >= 1 => {
                let k = i128::from(sext(cty, k));
                let inner = self.covers(p, depth - 1);
                out.extend(inner.into_iter().filter_map(|c| c.scaled(k)));
            }
            (Opcode::Sshr, &[p, Term::Const(_, s)]) => {
                if let Some(k) = shift(s) {
                    let inner = self.covers(p, depth - 1);
                    out.extend(inner.into_iter().filter_map(|c| c.scaled(k)));
                }
            }
            // Unsigned: the dividend may not be below 2^(w−1); it covers `m`
            // but nothing is said about what it is made of.
            (Opcode::Udiv, &[p, Term::Const(_, k)]) if k >= 1 => {
                out.extend(Cover::of(p).scaled(i128::from(k)));
            }
            (Opcode::Ushr, &[p, Term::Const(_, s)]) => {
                out.extend(shift(s).and_then(|k| Cover::of(p).scaled(k)));
            }
            // `m = p - k`: `p = m + k` exactly (no wrap below 2^w).
            (Opcode::Iadd, &[Term::Const(cty, k), p] | &[p, Term::Const(cty, k)])
                if sext(cty, k) < 0 =>
            {
                out.push(Cover {
                    n: p,
                    c: 1,
                    d: -i128::from(sext(cty, k)),
                })
            }
            (Opcode::Isub, &[p, Term::Const(cty, k)]) if sext(cty, k) > 0 => out.push(Cover {
                n: p,
                c: 1,
                d: i128::from(sext(cty, k)),
            }),
            _ => {}
        }
        out
    }

    /// Whether `x <s y` holds in `block` for some `y` (so `x` is not the
    /// largest signed value).
    fn has_signed_upper_bound(&self, x: Term, block: Block) -> bool {
        self.scopes(block).any(|s| {
            self.rels[s].iter().any(|r| {
                (r.cc == IntCC::SignedLessThan && r.a == x)
                    || (r.cc == IntCC::SignedGreaterThan && r.b == x)
            })
        })
    }

    /// Computes the predicate equalities that hold on entry to `block`.
    fn enter_block(&mut self, block: Block) {
        self.eqs[block].clear();
        self.rels[block].clear();
        let parent = self.cfg.domtree.idom(block);
        self.eq_parent[block] = match parent {
            Some(p) if self.has_predicates(p) => Some(p).into(),
            Some(p) => self.eq_parent[p],
            None => None.into(),
        };
        let mut reachable = self.cfg.incoming[block]
            .iter()
            .filter(|&&e| self.edge_reachable[e]);
        let (Some(&edge), None) = (reachable.next(), reachable.next()) else {
            return;
        };
        let e = self.cfg.edges[edge];
        let InstructionData::Brif { arg, .. } = self.func.dfg.insts[e.inst] else {
            return;
        };
        let cond = self.term_in(arg, e.from);
        let Term::Val(_) = cond else { return };
        let on_true = e.slot == 0;
        let mut found: SmallVec<[(Term, Term); 2]> = SmallVec::new();
        let mut rels: SmallVec<[Relation; 1]> = SmallVec::new();
        if let Some(Key::Op {
            data: InstructionData::IntCompare { cond: cc, .. },
            ty,
            args,
        }) = self.key_of(cond)
        {
            let (cc, a, b) = (*cc, args[0], args[1]);
            found.push((cond, Term::constant(*ty, u64::from(on_true))));
            let equal = match cc {
                IntCC::Equal => on_true,
                IntCC::NotEqual => !on_true,
                _ => false,
            };
            if equal {
                found.extend(self.orient(a, b));
            }
            let cc = if on_true { cc } else { cc.complement() };
            rels.push(Relation { cc, a, b });
        } else {
            let ty = self.func.dfg.value_type(arg);
            if is_const_type(ty) && on_true {
                // `brif c` takes the true edge exactly when c ≠ 0 (a null
                // check's way on).
                let zero = Term::constant(ty, 0);
                rels.push(Relation {
                    cc: IntCC::NotEqual,
                    a: cond,
                    b: zero,
                });
            } else if is_const_type(ty) {
                // ... and the false edge exactly when c == 0.
                found.push((cond, Term::constant(ty, 0)));
            }
        }
        self.eqs[block] = found;
        self.rels[block] = rels;
    }

    /// An equality `a = b` as a rewrite towards the constant, or towards the
    /// earlier leader.
    fn orient(&self, a: Term, b: Term) -> Option<(Term, Term)> {
        match (a, b) {
            _ if a == b => None,
            (Term::Val(_), Term::Const(..)) => Some((a, b)),
            (Term::Const(..), Term::Val(_)) => Some((b, a)),
            (Term::Val(_), Term::Val(_)) if self.order(a) > self.order(b) => Some((a, b)),
            (Term::Val(_), Term::Val(_)) => Some((b, a)),
            _ => None,
        }
    }

    /// The memory state of each slot on entry to `block`: the state all
    /// reachable predecessors leave, or the block's join of that slot.
    fn mem_in(&self, block: Block) -> Memory {
        if Some(block) == self.func.layout.entry_block() {
            return Memory::uniform(self.mem_slots, |_| MemState::Entry);
        }
        let incoming: SmallVec<[&Memory; 4]> = self.cfg.incoming[block]
            .iter()
            .filter(|&&e| self.edge_reachable[e])
            .filter_map(|&e| self.mem_out[self.cfg.edges[e].from].as_ref())
            .collect();
        Memory::uniform(self.mem_slots, |slot| {
            let mut states = incoming.iter().map(|m| m.slots[slot as usize]);
            match states.next() {
                Some(first) if states.all(|s| s == first) => first,
                _ => MemState::Join(block, slot),
            }
        })
    }

    /// Block parameters as φ-nodes: the join of incoming terms over reachable edges.
    fn eval_params(&mut self, block: Block) {
        if Some(block) == self.func.layout.entry_block() {
            for &arg in self.func.dfg.block_params(block) {
                self.set(arg, Term::Val(arg));
            }
            return;
        }
        let params: SmallVec<[Value; 8]> =
            self.func.dfg.block_params(block).iter().copied().collect();
        for (index, &param) in params.iter().enumerate() {
            let mut args: SmallVec<[Term; 4]> = SmallVec::new();
            let mut single: Option<Term> = None;
            let mut distinct = false;
            for &edge in &self.cfg.incoming[block] {
                let t = self.incoming_term(edge, index, param);
                args.push(t);
                if t == Term::Bottom {
                    continue;
                }
                match single {
                    None => single = Some(t),
                    Some(s) if s == t => {}
                    Some(_) => distinct = true,
                }
            }
            let t = if distinct {
                self.leader_for(Key::Phi { block, args }, param)
            } else {
                single.unwrap_or(Term::Bottom)
            };
            self.set(param, t);
        }
    }

    /// The reachable edges into `block`, each with the value it passes to
    /// parameter `index` (`None` when that is not a plain value) and the
    /// block it leaves.
    fn reachable_args(
        &self,
        block: Block,
        index: usize,
    ) -> impl Iterator<Item = (EdgeId, Option<Value>, Block)> + '_ {
        self.cfg.incoming[block]
            .iter()
            .filter(|&&edge| self.edge_reachable[edge])
            .map(move |&edge| {
                let arg = self.cfg.edge_arg(self.func, edge, index);
                (edge, arg, self.cfg.edges[edge].from)
            })
    }

    fn incoming_term(&self, edge: EdgeId, index: usize, param: Value) -> Term {
        if !self.edge_reachable[edge] {
            return Term::Bottom;
        }
        match self.cfg.edge_arg(self.func, edge, index) {
            Some(v) => self.term_in(v, self.cfg.edges[edge].from),
            // Not a plain value: nothing is known about it.
            None => Term::Val(param),
        }
    }

    /// The term of the class with `key`, making `v` its leader if it is new.
    fn leader_for(&mut self, key: Key, v: Value) -> Term {
        if let Some(&leader) = self.table.get(&key) {
            return Term::Val(leader);
        }
        self.key_of.insert(v, key.clone());
        self.table.insert(key, v);
        Term::Val(v)
    }

    fn eval_inst(&mut self, block: Block, inst: Inst, mem: &mut Memory) {
        let dfg = &self.func.dfg;
        let data = dfg.insts[inst];
        let op = data.opcode();
        let results: SmallVec<[Value; 2]> = dfg.inst_results(inst).iter().copied().collect();
        match data {
            InstructionData::Load {
                arg, flags, offset, ..
            } if results.len() == 1 && is_numbered_load(op) => {
                let flags = dfg.mem_flags[flags];
                let state = if flags.readonly() {
                    MemState::Entry
                } else {
                    mem.slots[slot_of(flags)]
                };
                let place = Place {
                    opcode: op,
                    ty: dfg.value_type(results[0]),
                    addr: self.term_in(arg, block),
                    offset: offset.into(),
                    endianness: endianness_bits(flags.explicit_endianness()),
                    mem: state,
                };
                let t = if place.addr == Term::Bottom {
                    Term::Bottom
                } else if let Some(&t) = self.places.get(&place) {
                    t
                } else {
                    let t = match self.narrow_load(inst, &place, results[0]) {
                        Some(t) => t,
                        None => Term::Val(results[0]),
                    };
                    self.places.insert(place, t);
                    if op == Opcode::Load {
                        self.record_wide(&place, t);
                    }
                    t
                };
                self.set(results[0], t);
            }
            InstructionData::Store {
                opcode: Opcode::Store,
                args: [value, addr],
                flags,
                offset,
            } => {
                let flags = dfg.mem_flags[flags];
                let stored = self.term_in(value, block);
                let slot = slot_of(flags);
                let mut place = Place {
                    opcode: Opcode::Load,
                    ty: dfg.value_type(value),
                    addr: self.term_in(addr, block),
                    offset: offset.into(),
                    endianness: endianness_bits(flags.explicit_endianness()),
                    mem: mem.slots[slot],
                };
                if stored != Term::Bottom && self.places.get(&place) == Some(&stored) {
                    self.redundant_stores.insert(inst);
                    return;
                }
                if slot == 0 {
                    mem.write_all(inst);
                } else {
                    mem.slots[slot] = MemState::After(inst);
                }
                place.mem = MemState::After(inst);
                self.places.insert(place, stored);
                self.record_wide(&place, stored);
            }
            _ if writes_memory(op) => {
                mem.write_all(inst);
                for r in results {
                    self.set(r, Term::Val(r));
                }
            }
            _ => {
                if results.len() == 1 && is_numbered_op(op) {
                    if let Some(masked) = masked(&data) {
                        let t = self.eval_op(block, inst, masked, results[0]);
                        self.set(results[0], t);
                        return;
                    }
                }
                for r in results {
                    self.set(r, Term::Val(r));
                }
            }
        }
    }

    /// Records that `place` (a full-width access) holds `t`, for narrower loads.
    fn record_wide(&mut self, place: &Place, t: Term) {
        if t == Term::Bottom || place.endianness == BIG_ENDIAN || !is_const_type(place.ty) {
            return;
        }
        self.wide
            .entry((place.addr, place.mem))
            .or_default()
            .push((place.offset, place.ty, t));
    }

    /// The term of a load that reads part of a wider value available at the
    /// same address and memory state (thesis §4.4, value coercion), if one
    /// ALU operation extracts it; `None` otherwise. Little-endian layout.
    fn narrow_load(&mut self, inst: Inst, place: &Place, result: Value) -> Option<Term> {
        if place.endianness == BIG_ENDIAN {
            return None;
        }
        let sources = self.wide.get(&(place.addr, place.mem))?;
        let (mut data, mut args) = sources.iter().find_map(|&(offset, src_ty, src)| {
            let delta = i64::from(place.offset) - i64::from(offset);
            let (data, amount) = narrowing(place.opcode, place.ty, src_ty, delta)?;
            let mut args: Args = [src].into_iter().collect();
            args.extend(amount.map(|a| Term::constant(place.ty, a)));
            Some((data, args))
        })?;
        simplify::canonicalize(self, &mut data, &mut args);
        let t = match simplify::simplify(self, &data, place.ty, &args) {
            Some(t) => t,
            None => self.leader_for(
                Key::Op {
                    data,
                    ty: place.ty,
                    args: args.clone(),
                },
                result,
            ),
        };
        if !matches!(t, Term::Const(..)) {
            self.narrowed.insert(inst, (data, args));
        }
        Some(t)
    }

    /// An operation's term: operands replaced by their terms, simplified,
    /// then looked up (thesis rule OP).
    fn eval_op(
        &mut self,
        block: Block,
        inst: Inst,
        mut data: InstructionData,
        result: Value,
    ) -> Term {
        let dfg = &self.func.dfg;
        let mut args: Args = dfg
            .inst_args(inst)
            .iter()
            .map(|&a| self.term_in(a, block))
            .collect();
        if args.contains(&Term::Bottom) {
            return Term::Bottom;
        }
        let ty = dfg.value_type(result);
        simplify::canonicalize(self, &mut data, &mut args);
        if let Some(t) = simplify::simplify(self, &data, ty, &args) {
            return t;
        }
        if let InstructionData::IntCompare { cond, .. } = data {
            if let Some(known) = self.decide(cond, args[0], args[1], block) {
                return Term::constant(ty, u64::from(known));
            }
        }
        self.leader_for(Key::Op { data, ty, args }, result)
    }

    /// Marks the edges a terminator can take, given its condition's term.
    fn eval_terminator(&mut self, block: Block, inst: Inst) {
        for slot in self.live_slots(block, inst) {
            let edge = self.cfg.outgoing[block][slot as usize];
            if !self.edge_reachable[edge] {
                self.edge_reachable[edge] = true;
                self.block_reachable[self.cfg.edges[edge].to] = true;
                self.changed = true;
            }
        }
    }

    /// The outgoing edges (slots) terminator `inst` of `block` can take,
    /// given its condition's term.
    fn live_slots(&self, block: Block, inst: Inst) -> SmallVec<[u32; 2]> {
        let data = self.func.dfg.insts[inst];
        match data {
            InstructionData::Jump { .. } => [0].into_iter().collect(),
            InstructionData::Brif { arg, .. } => match self.term_in(arg, block) {
                Term::Bottom => SmallVec::new(),
                Term::Const(_, 0) => [1].into_iter().collect(),
                Term::Const(..) => [0].into_iter().collect(),
                t @ Term::Val(_) => {
                    let zero = Term::constant(self.func.dfg.value_type(arg), 0);
                    match self.decide(IntCC::NotEqual, t, zero, block) {
                        Some(true) => [0].into_iter().collect(),
                        Some(false) => [1].into_iter().collect(),
                        None => [0, 1].into_iter().collect(),
                    }
                }
            },
            InstructionData::BranchTable { arg, .. } => {
                let n = self.cfg.outgoing[block].len() as u32;
                match self.term_in(arg, block) {
                    Term::Bottom => SmallVec::new(),
                    // Slot 0 is the default; entry k is slot k + 1.
                    Term::Const(_, k) => [if k + 1 < u64::from(n) {
                        k as u32 + 1
                    } else {
                        0
                    }]
                    .into_iter()
                    .collect(),
                    Term::Val(_) => (0..n).collect(),
                }
            }
            _ => SmallVec::new(),
        }
    }

    /// At the fixed point: keeps only the edges a terminator can still take
    /// and the blocks they reach. Reachability only grows during the
    /// passes, but relations ([`Self::decide`]) can decide a branch only
    /// once a later pass has seen a loop whole (the sign of its counter),
    /// after an earlier pass had marked both edges reachable. The terms are
    /// sound for the larger edge set, so they are for this one.
    fn prune_decided_edges(&mut self) {
        let mut live = vec![false; self.edge_reachable.len()];
        let mut reached = SecondaryMap::with_default(false);
        let Some(entry) = self.func.layout.entry_block() else {
            return;
        };
        reached[entry] = true;
        // A worklist, not one RPO sweep: an irreducible loop can be entered
        // through an edge RPO sees as retreating.
        let mut work = vec![entry];
        while let Some(block) = work.pop() {
            let Some(inst) = self.func.layout.last_inst(block) else {
                continue;
            };
            for slot in self.live_slots(block, inst) {
                let edge = self.cfg.outgoing[block][slot as usize];
                if !self.edge_reachable[edge] {
                    continue;
                }
                live[edge] = true;
                let to = self.cfg.edges[edge].to;
                if !reached[to] {
                    reached[to] = true;
                    work.push(to);
                }
            }
        }
        self.edge_reachable = live;
        self.block_reachable = reached;
    }
}

/// One step of an affine reading ([`Analyzer::affine_readings`]).
#[derive(Clone, Copy, Debug)]
enum Step {
    Plus(i128),
    Times(i128),
}

impl Step {
    fn apply(self, inner: Affine) -> Option<Affine> {
        match self {
            Step::Plus(k) => inner.plus(k),
            Step::Times(k) => inner.times(k),
        }
    }
}

/// Loads numbered by place and memory state.
pub fn is_numbered_load(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::Load
            | Opcode::Uload8
            | Opcode::Sload8
            | Opcode::Uload16
            | Opcode::Sload16
            | Opcode::Uload32
            | Opcode::Sload32
    )
}

/// Instructions after which memory is in a new state.
pub fn writes_memory(op: Opcode) -> bool {
    op.can_store() || op.is_call() || op.other_side_effects()
}

/// Operations numbered by key: no memory access, no side effect other than a
/// trap that an identical dominating instruction would have raised first.
pub fn is_numbered_op(op: Opcode) -> bool {
    !op.can_load()
        && !op.can_store()
        && !op.is_call()
        && !op.is_branch()
        && !op.is_terminator()
        && !op.other_side_effects()
        && (!op.can_trap() || op.side_effects_idempotent())
}

/// [`Place::endianness`] of an explicitly big-endian access.
const BIG_ENDIAN: u8 = 2;

/// Bytes a load reads from memory.
fn access_bytes(op: Opcode, ty: Type) -> u32 {
    match op {
        Opcode::Uload8 | Opcode::Sload8 => 1,
        Opcode::Uload16 | Opcode::Sload16 => 2,
        Opcode::Uload32 | Opcode::Sload32 => 4,
        _ => ty.bytes(),
    }
}

/// The one ALU operation (operands masked) that computes what load `op` of
/// result type `ty` reads at byte `delta` inside a value of type `src_ty`
/// stored little-endian, with its constant second operand if it has one:
///
/// - `load.ty` of the low bytes: `ireduce.ty`;
/// - `uloadN`/`sloadN` of the whole narrower value: `uextend`/`sextend`;
/// - `uloadN`/`sloadN` of the high bytes, same type: `ushr`/`sshr` by a
///   constant;
/// - `uloadN` of the low bytes, same type: `band` with the mask.
///
/// Anything else (a middle slice, a low slice sign-extended) would take two
/// operations and is left to the load.
fn narrowing(
    op: Opcode,
    ty: Type,
    src_ty: Type,
    delta: i64,
) -> Option<(InstructionData, Option<u64>)> {
    if !is_const_type(ty) || !is_const_type(src_ty) || delta < 0 {
        return None;
    }
    let (n, width) = (i64::from(access_bytes(op, ty)), i64::from(src_ty.bytes()));
    if delta + n > width {
        return None;
    }
    let placeholder = Value::from_u32(0);
    let unary = |opcode| InstructionData::Unary {
        opcode,
        arg: placeholder,
    };
    let binary = |opcode| InstructionData::Binary {
        opcode,
        args: [placeholder, placeholder],
    };
    let signed = matches!(op, Opcode::Sload8 | Opcode::Sload16 | Opcode::Sload32);
    match op {
        Opcode::Load if delta == 0 && n < width => Some((unary(Opcode::Ireduce), None)),
        Opcode::Load => None,
        _ if delta == 0 && n == width && ty.bytes() > src_ty.bytes() => {
            let opcode = if signed {
                Opcode::Sextend
            } else {
                Opcode::Uextend
            };
            Some((unary(opcode), None))
        }
        _ if ty == src_ty && delta > 0 && delta + n == width => {
            let opcode = if signed { Opcode::Sshr } else { Opcode::Ushr };
            Some((binary(opcode), Some(8 * delta as u64)))
        }
        _ if ty == src_ty && delta == 0 && n < width && !signed => {
            Some((binary(Opcode::Band), Some((1u64 << (8 * n)) - 1)))
        }
        _ => None,
    }
}

fn endianness_bits(e: Option<cranelift_codegen::ir::Endianness>) -> u8 {
    match e {
        None => 0,
        Some(cranelift_codegen::ir::Endianness::Little) => 1,
        Some(cranelift_codegen::ir::Endianness::Big) => 2,
    }
}
