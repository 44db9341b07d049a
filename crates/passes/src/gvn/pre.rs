//! Partial redundancy elimination by φ-translation through block parameters
//! ([BRITO] §4.3.4–§4.3.5, Fig. 4.5–4.8), and loop-invariant code motion as
//! speculative PRE under the optimistic assumption (§4.6, §5.2).
//!
//! # φ-translation (Fig. 4.5)
//!
//! For a join block `B` and an incoming edge `E = P → B`, `transl(v, E)` is
//! the term `v` would have if it were computed on entry to `B` along `E`:
//!
//! - a value defined in a strict dominator of `B` translates to its own term;
//! - a parameter of `B` translates to the term of its argument on `E`;
//! - a pure instruction of `B` translates to its operation over the
//!   translated operands, simplified ([`simplify`]) and looked up in the
//!   partition's key table (depth-limited; it must already exist there);
//! - anything else does not translate.
//!
//! Because the operands of a parameter's argument dominate `P`, the
//! recursion stops at `B`'s parameters, so it is finite (the thesis' ⊥ for
//! cyclic values is the "does not translate" case).
//!
//! # Availability and insertion (Fig. 4.6–4.8)
//!
//! The translated expression is *available* on `E` if a member of its class
//! (or of its constant) is defined in a block that dominates `P`. A
//! candidate `e` in `B` is replaced by a new parameter of `B` whose argument
//! on each edge is the available value there (Fig. 4.7, φ-of-ops: a full
//! redundancy when every edge has one) — or, on at most ONE edge, by a new
//! computation of the translated expression at the end of `P`, before its
//! terminator (Fig. 4.8). An insertion is made only if
//!
//! - the operation is pure and cannot trap (no division, no load, no call);
//! - its operands are available at the end of `P` (one insertion in all);
//! - `E` is not critical (`P` has one successor): critical edges are not
//!   split, PRE is skipped there (splitting would add a block and a jump);
//! - the mode allows insertions ([`PreMode::Full`]).
//!
//! # Loop-invariant code motion (§4.6)
//!
//! At a loop header `B` (a block with incoming back edges) the candidates are
//! the pure, non-trapping instructions anywhere in `B`'s natural loop whose
//! operands are all defined in strict dominators of `B`. Their translation is
//! the same expression on every edge. Under the optimistic assumption the
//! value on each back edge is the new parameter itself (`p = φ(t, p)`), which
//! is confirmed because the translation through every back edge equals the
//! translation into the preheader: then `p ≡ t`, so the parameter is not even
//! created and `e` is replaced by `t`, the one insertion on the (single,
//! non-critical) entry edge. Chains of invariant instructions move in one
//! round because a moved instruction's replacement dominates `B`.
//!
//! # Rounds and confirmation (§5.2)
//!
//! A round applies every candidate found in one partition; then the whole
//! function is analysed again and the elimination phase runs (it finds the
//! redundancies the new parameters and insertions expose). That re-analysis
//! is the confirmation: a round after which the function has more
//! instructions than before, or that reaches no fixed point, is rolled back
//! from a checkpoint, and PRE stops. Rounds repeat until one finds nothing.
//!
//! # Cost model
//!
//! A full redundancy (no insertion) removes an instruction for a block
//! parameter: fewer instructions executed and fewer in the code. LICM moves
//! one instruction out of a loop: the same code size, fewer instructions
//! executed per iteration. A partial redundancy at an if-join moves one
//! computation to the edge where it was missing and adds a block parameter:
//! fewer instructions executed on the other edges, the same number of
//! instructions, but possibly a register move per edge — so at `-Oz`
//! [`super::run_for_size`] falls back to [`PreMode::NoJoinInsertion`], then
//! to no PRE, when the function's machine code grows.
//!
//! Cost: each round is linear in the function (one translation per candidate,
//! bounded depth), plus the natural loops' sizes at headers; rounds are few.

use cranelift_codegen::entity::{EntitySet, SecondaryMap};
use cranelift_codegen::ir::{
    Block, BlockCall, Function, Inst, InstructionData, Opcode, Type, Value, ValueDef,
};
use hashbrown::HashMap;
use smallvec::SmallVec;

use super::analysis::{is_numbered_load, is_numbered_op, Partition, PartitionContext};
use super::cfg::{CfgInfo, EdgeId};
use super::eliminate::use_counts;
use super::expr::{masked, Args, Key, Term};
use super::simplify::{self, Context};
use super::GvnStats;

/// How far φ-translation recurses through instructions of the join block.
const MAX_TRANSLATION_DEPTH: u32 = 4;

/// Class members looked at when searching for an available one.
const MAX_MEMBERS_SCANNED: usize = 32;

/// Which redundancies PRE removes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PreMode {
    /// No φ-translation: GVN proper only.
    Off,
    /// Full redundancies through block parameters (φ-of-ops) and LICM, but no
    /// insertion at an if-join.
    NoJoinInsertion,
    /// Also partial redundancies at if-joins, with one insertion.
    #[default]
    Full,
}

/// One round: finds and applies PRE candidates with the partition `part` of
/// `func` (computed before the last elimination; `order` is the CFG it was
/// computed on, for canonical operand order). Before the first change, a
/// copy of `func` is saved in `checkpoint`. Returns the join blocks that got
/// new parameters, and how many candidates were applied.
pub fn apply_round(
    func: &mut Function,
    part: &Partition,
    order: &CfgInfo,
    mode: PreMode,
    checkpoint: &mut Option<Function>,
    stats: &mut GvnStats,
) -> (Vec<Block>, usize) {
    // Elimination only removes edges: without a join before it, none now.
    if !order.rpo.iter().any(|&b| order.incoming[b].len() >= 2) {
        return (Vec::new(), 0);
    }
    let cfg = CfgInfo::new(func);
    let mut round = Round {
        cfg: &cfg,
        ctx: part.context(order),
        part,
        members: class_members(func, &cfg, part),
        inserted: HashMap::new(),
        mode,
        applied: 0,
        joins: Vec::new(),
        uses: use_counts(func),
        checkpoint,
    };
    for i in 0..cfg.rpo.len() {
        let block = cfg.rpo[i];
        let incoming = &cfg.incoming[block];
        if incoming.len() < 2 {
            continue;
        }
        let back: SmallVec<[EdgeId; 2]> = incoming
            .iter()
            .copied()
            .filter(|&e| cfg.domtree.block_dominates(block, cfg.edges[e].from))
            .collect();
        if back.is_empty() {
            round.join(func, block, stats);
        } else {
            round.loop_header(func, block, &back, stats);
        }
    }
    (round.joins, round.applied)
}

/// Members of each class in the function as it is now, in RPO.
fn class_members(
    func: &Function,
    cfg: &CfgInfo,
    part: &Partition,
) -> HashMap<Term, SmallVec<[Value; 2]>> {
    let mut members: HashMap<Term, SmallVec<[Value; 2]>> = HashMap::new();
    let mut add = |v: Value| {
        let t = part.terms[v];
        if t != Term::Bottom {
            members.entry(t).or_default().push(v);
        }
    };
    for &block in &cfg.rpo {
        for &p in func.dfg.block_params(block) {
            add(p);
        }
        for inst in func.layout.block_insts(block) {
            for &r in func.dfg.inst_results(inst) {
                add(r);
            }
        }
    }
    members
}

/// An inserted computation: where, what (operands masked), its controlling
/// type and its operands.
type Insertion = (Block, InstructionData, Type, SmallVec<[Value; 3]>);

struct Round<'a> {
    checkpoint: &'a mut Option<Function>,
    cfg: &'a CfgInfo,
    ctx: PartitionContext<'a>,
    part: &'a Partition,
    members: HashMap<Term, SmallVec<[Value; 2]>>,
    /// Computations inserted this round, by predecessor and expression, so
    /// two candidates needing the same one share it.
    inserted: HashMap<Insertion, Value>,
    mode: PreMode,
    applied: usize,
    /// Join blocks that got a new parameter.
    joins: Vec<Block>,
    /// Use counts at the start of the round (only ever too high after it).
    uses: SecondaryMap<Value, u32>,
}

/// What a candidate's translation gives on one edge.
enum OnEdge {
    /// A value available at the end of the predecessor.
    Available(Value),
    /// Computable by one inserted instruction over these available operands.
    Insert(SmallVec<[Value; 3]>),
    /// A constant with no value at hand: one inserted `iconst`.
    InsertConst(Type, u64),
}

impl Round<'_> {
    /// Saves the function as it was before this round's first change.
    fn save(&mut self, func: &Function) {
        if self.checkpoint.is_none() {
            *self.checkpoint = Some(func.clone());
        }
    }

    fn def_block(&self, func: &Function, v: Value) -> Option<Block> {
        match func.dfg.value_def(v) {
            ValueDef::Result(inst, _) => func.layout.inst_block(inst),
            ValueDef::Param(block, _) => Some(block),
            _ => None,
        }
    }

    /// Whether `v` is defined in a strict dominator of `block`.
    fn defined_above(&self, func: &Function, v: Value, block: Block) -> bool {
        self.def_block(func, v)
            .is_some_and(|d| d != block && self.cfg.domtree.block_dominates(d, block))
    }

    /// A member of class `t` that is available at the end of `pred`, among
    /// the first [`MAX_MEMBERS_SCANNED`] in RPO (the earliest are the likeliest
    /// to dominate; the bound keeps huge classes, such as a common constant's,
    /// from making PRE quadratic).
    fn available(&self, func: &Function, t: Term, pred: Block) -> Option<Value> {
        let members = self.members.get(&t)?;
        members
            .iter()
            .take(MAX_MEMBERS_SCANNED)
            .copied()
            .find(|&m| {
                self.def_block(func, m)
                    .is_some_and(|d| self.cfg.domtree.block_dominates(d, pred))
            })
    }

    /// A pure instruction with one result and at least one value operand that
    /// GVN numbers by key: what PRE considers.
    fn is_candidate(func: &Function, inst: Inst) -> bool {
        let op = func.dfg.insts[inst].opcode();
        func.dfg.inst_results(inst).len() == 1
            && is_numbered_op(op)
            && !is_numbered_load(op)
            && !func.dfg.inst_args(inst).is_empty()
            && masked(&func.dfg.insts[inst]).is_some()
    }

    // ---- if-joins -------------------------------------------------------

    /// PRE of the instructions of the join `block` (no back edges).
    fn join(&mut self, func: &mut Function, block: Block, stats: &mut GvnStats) {
        let insts: SmallVec<[Inst; 32]> = func.layout.block_insts(block).collect();
        for inst in insts {
            if Self::is_candidate(func, inst) {
                self.try_join_candidate(func, block, inst, stats);
            }
        }
    }

    fn try_join_candidate(
        &mut self,
        func: &mut Function,
        block: Block,
        inst: Inst,
        stats: &mut GvnStats,
    ) {
        let incoming = self.cfg.incoming[block].clone();
        let mut plan: SmallVec<[OnEdge; 4]> = SmallVec::new();
        let mut insertions = 0;
        for &edge in &incoming {
            let Some(on_edge) = self.translate_candidate(func, block, inst, edge) else {
                return;
            };
            if !matches!(on_edge, OnEdge::Available(_)) {
                insertions += 1;
                let pred = self.cfg.edges[edge].from;
                let trapping = func.dfg.insts[inst].opcode().can_trap();
                let critical = self.cfg.outgoing[pred].len() > 1;
                let allowed = self.mode == PreMode::Full
                    && !critical
                    && !(trapping && matches!(on_edge, OnEdge::Insert(_)));
                if insertions > 1 || !allowed {
                    return;
                }
            }
            plan.push(on_edge);
        }
        if !self.edges_agree_on_calls(func, &incoming, &plan) {
            return;
        }
        // Materialize, then make the result a new parameter of `block`.
        self.save(func);
        let result = func.dfg.first_result(inst);
        let ty = func.dfg.value_type(result);
        let values: SmallVec<[Value; 4]> = incoming
            .iter()
            .zip(&plan)
            .map(|(&edge, on_edge)| self.materialize(func, inst, edge, on_edge))
            .collect();
        let param = func.dfg.append_block_param(block, ty);
        if self.joins.last() != Some(&block) {
            self.joins.push(block);
        }
        self.append_edge_args(func, &incoming, &values);
        replace_with(func, inst, param);
        stats.values_replaced += 1;
        if insertions == 0 {
            stats.full_redundancies += 1;
        } else {
            stats.partial_redundancies += 1;
        }
        self.applied += 1;
    }

    /// The candidate's translation onto `edge`, and how it is made available
    /// there; `None` if it does not translate or an operand is not at hand.
    fn translate_candidate(
        &self,
        func: &Function,
        block: Block,
        inst: Inst,
        edge: EdgeId,
    ) -> Option<OnEdge> {
        let pred = self.cfg.edges[edge].from;
        let operands: Args = func
            .dfg
            .inst_args(inst)
            .iter()
            .map(|&a| self.translate(func, block, a, edge, 0))
            .collect::<Option<_>>()?;
        let ty = func.dfg.value_type(func.dfg.first_result(inst));
        let mut data = masked(&func.dfg.insts[inst])?;
        let mut args = operands.clone();
        simplify::canonicalize(&self.ctx, &mut data, &mut args);
        let class = match simplify::simplify(&self.ctx, &data, ty, &args) {
            Some(t) => t,
            None => match self.ctx.lookup(&Key::Op { data, ty, args }) {
                Some(t) => t,
                None => return self.insertion(func, &operands, pred),
            },
        };
        if let Some(v) = self.available(func, class, pred) {
            return Some(OnEdge::Available(v));
        }
        match class {
            Term::Const(cty, c) => Some(OnEdge::InsertConst(cty, c)),
            // A class with no member at hand: compute it from the operands.
            _ => self.insertion(func, &operands, pred),
        }
    }

    /// One inserted instruction over the translated operands, if each has a
    /// value available at the end of `pred`.
    fn insertion(&self, func: &Function, operands: &Args, pred: Block) -> Option<OnEdge> {
        operands
            .iter()
            .map(|&t| self.available(func, t, pred))
            .collect::<Option<SmallVec<[Value; 3]>>>()
            .map(OnEdge::Insert)
    }

    /// φ-translation of value `v` (an operand in `block`) onto `edge` (Fig. 4.5).
    fn translate(
        &self,
        func: &Function,
        block: Block,
        v: Value,
        edge: EdgeId,
        depth: u32,
    ) -> Option<Term> {
        let v = func.dfg.resolve_aliases(v);
        let known = |t: Term| (t != Term::Bottom).then_some(t);
        match func.dfg.value_def(v) {
            ValueDef::Param(b, index) if b == block => {
                let arg = self.cfg.edge_arg(func, edge, index)?;
                known(self.part.terms[func.dfg.resolve_aliases(arg)])
            }
            _ if self.defined_above(func, v, block) => known(self.part.terms[v]),
            ValueDef::Result(inst, 0)
                if depth < MAX_TRANSLATION_DEPTH
                    && func.layout.inst_block(inst) == Some(block)
                    && Self::is_candidate(func, inst) =>
            {
                let mut args: Args = func
                    .dfg
                    .inst_args(inst)
                    .iter()
                    .map(|&a| self.translate(func, block, a, edge, depth + 1))
                    .collect::<Option<_>>()?;
                let mut data = masked(&func.dfg.insts[inst])?;
                let ty = func.dfg.value_type(v);
                simplify::canonicalize(&self.ctx, &mut data, &mut args);
                simplify::simplify(&self.ctx, &data, ty, &args)
                    .or_else(|| self.ctx.lookup(&Key::Op { data, ty, args }))
            }
            _ => None,
        }
    }

    /// Edges that share one block call (a `br_table` listing `block` twice,
    /// a `brif` with identical arms) must receive the same argument.
    fn edges_agree_on_calls(&self, func: &Function, incoming: &[EdgeId], plan: &[OnEdge]) -> bool {
        let mut first_use: HashMap<BlockCall, usize> = HashMap::new();
        for (i, &e) in incoming.iter().enumerate() {
            let edge = self.cfg.edges[e];
            let call = func.dfg.insts[edge.inst]
                .branch_destination(&func.dfg.jump_tables, &func.dfg.exception_tables)
                [edge.slot as usize];
            let j = *first_use.entry(call).or_insert(i);
            let same = match (&plan[i], &plan[j]) {
                _ if i == j => true,
                (OnEdge::Available(a), OnEdge::Available(b)) => a == b,
                _ => false,
            };
            if !same {
                return false;
            }
        }
        true
    }

    /// The value `on_edge` describes, inserting its computation at the end of
    /// the edge's predecessor if needed.
    fn materialize(
        &mut self,
        func: &mut Function,
        inst: Inst,
        edge: EdgeId,
        on_edge: &OnEdge,
    ) -> Value {
        let pred = self.cfg.edges[edge].from;
        match on_edge {
            OnEdge::Available(v) => *v,
            OnEdge::Insert(operands) => self.insert_copy(func, inst, pred, operands),
            OnEdge::InsertConst(ty, c) => {
                let data = InstructionData::UnaryImm {
                    opcode: Opcode::Iconst,
                    imm: (*c as i64).into(),
                };
                self.insert_at_end(func, pred, data, *ty, SmallVec::new())
            }
        }
    }

    /// A copy of `inst` with `operands` at the end of `pred`.
    fn insert_copy(
        &mut self,
        func: &mut Function,
        inst: Inst,
        pred: Block,
        operands: &[Value],
    ) -> Value {
        let data = func.dfg.insts[inst];
        let ctrl = func.dfg.ctrl_typevar(inst);
        self.insert_at_end(func, pred, data, ctrl, operands.iter().copied().collect())
    }

    fn insert_at_end(
        &mut self,
        func: &mut Function,
        pred: Block,
        data: InstructionData,
        ctrl: Type,
        operands: SmallVec<[Value; 3]>,
    ) -> Value {
        let key = (pred, masked(&data).unwrap_or(data), ctrl, operands.clone());
        if let Some(&v) = self.inserted.get(&key) {
            return v;
        }
        let new = func.dfg.make_inst(data);
        for (slot, &v) in func.dfg.inst_args_mut(new).iter_mut().zip(&operands) {
            *slot = v;
        }
        func.dfg.make_inst_results(new, ctrl);
        let terminator = func
            .layout
            .last_inst(pred)
            .expect("a block ends in a terminator");
        func.layout.insert_inst(new, terminator);
        let v = func.dfg.first_result(new);
        self.inserted.insert(key, v);
        v
    }

    /// Appends `values[i]` to the block call of `incoming[i]` (once per
    /// distinct call).
    fn append_edge_args(&self, func: &mut Function, incoming: &[EdgeId], values: &[Value]) {
        let mut done: SmallVec<[BlockCall; 4]> = SmallVec::new();
        for (&e, &value) in incoming.iter().zip(values) {
            let edge = self.cfg.edges[e];
            let dfg = &mut func.dfg;
            let call = &mut dfg.insts[edge.inst]
                .branch_destination_mut(&mut dfg.jump_tables, &mut dfg.exception_tables)
                [edge.slot as usize];
            if done.contains(call) {
                continue;
            }
            call.append_argument(value, &mut dfg.value_lists);
            done.push(*call);
        }
    }

    // ---- loops ----------------------------------------------------------

    /// LICM at loop header `block` with back edges `back`.
    fn loop_header(
        &mut self,
        func: &mut Function,
        block: Block,
        back: &[EdgeId],
        stats: &mut GvnStats,
    ) {
        let entries: SmallVec<[EdgeId; 2]> = self.cfg.incoming[block]
            .iter()
            .copied()
            .filter(|e| !back.contains(e))
            .collect();
        // One entry edge, not critical: the one place to insert.
        let [entry] = entries[..] else { return };
        let preheader = self.cfg.edges[entry].from;
        if self.cfg.outgoing[preheader].len() != 1 {
            return;
        }
        let body = self.natural_loop(block, back);
        for &b in &self.cfg.rpo {
            if !body.contains(b) {
                continue;
            }
            let insts: SmallVec<[Inst; 32]> = func.layout.block_insts(b).collect();
            for inst in insts {
                if self.is_invariant(func, block, inst) {
                    self.save(func);
                    self.hoist(func, block, inst, preheader);
                    stats.hoisted += 1;
                    stats.values_replaced += 1;
                    self.applied += 1;
                }
            }
        }
    }

    /// Blocks of the natural loop of `header`: those that reach a back edge's
    /// source without passing through the header.
    fn natural_loop(&self, header: Block, back: &[EdgeId]) -> EntitySet<Block> {
        let mut body = EntitySet::new();
        body.insert(header);
        let mut work: Vec<Block> = back.iter().map(|&e| self.cfg.edges[e].from).collect();
        while let Some(b) = work.pop() {
            if body.insert(b) {
                for &e in &self.cfg.incoming[b] {
                    work.push(self.cfg.edges[e].from);
                }
            }
        }
        body
    }

    /// Pure, cannot trap, and every operand defined outside the loop (in a
    /// strict dominator of the header): its φ-translation is the same on
    /// every edge into the header, so the speculation `p = φ(t, p)` holds.
    /// Comparisons stay next to the branch or `select` that consumes them
    /// (instruction selection fuses them there; hoisted, the flag would
    /// have to live in a register across the loop).
    ///
    /// A constant operand materialized in the loop for this instruction
    /// alone moves with it (a constant is invariant; moving rather than
    /// copying it keeps the instruction count).
    fn is_invariant(&self, func: &Function, header: Block, inst: Inst) -> bool {
        let op = func.dfg.insts[inst].opcode();
        Self::is_candidate(func, inst)
            && !op.can_trap()
            && !matches!(op, Opcode::Icmp | Opcode::Fcmp)
            && func.dfg.inst_args(inst).iter().all(|&a| {
                let a = func.dfg.resolve_aliases(a);
                self.defined_above(func, a, header) || self.private_constant(func, a).is_some()
            })
    }

    /// The instruction defining `v` if it is a constant used only once.
    fn private_constant(&self, func: &Function, v: Value) -> Option<Inst> {
        let ValueDef::Result(def, 0) = func.dfg.value_def(v) else {
            return None;
        };
        let constant = matches!(
            func.dfg.insts[def].opcode(),
            Opcode::Iconst | Opcode::F32const | Opcode::F64const
        );
        (constant && self.uses[v] == 1).then_some(def)
    }

    /// Moves the computation of `inst` to the end of `preheader` (one
    /// insertion, shared with identical ones) and removes it from the loop.
    fn hoist(&mut self, func: &mut Function, header: Block, inst: Inst, preheader: Block) {
        let operands: SmallVec<[Value; 3]> = func
            .dfg
            .inst_args(inst)
            .iter()
            .map(|&a| func.dfg.resolve_aliases(a))
            .collect();
        for &a in &operands {
            if !self.defined_above(func, a, header) {
                let constant = self.private_constant(func, a).expect("checked invariant");
                let terminator = func.layout.last_inst(preheader).expect("a terminator");
                func.layout.remove_inst(constant);
                func.layout.insert_inst(constant, terminator);
            }
        }
        let moved = self.insert_copy(func, inst, preheader, &operands);
        replace_with(func, inst, moved);
    }
}

/// Removes `inst` and makes its result an alias of `v`.
fn replace_with(func: &mut Function, inst: Inst, v: Value) {
    let result = func.dfg.first_result(inst);
    func.dfg.clear_results(inst);
    func.dfg.change_to_alias(result, v);
    func.layout.remove_inst(inst);
}
