//! Elimination ([BRITO] Alg. 4.2): rewrite the function from the partition.
//!
//! Order matters: branches are folded first (so every remaining edge is
//! reachable), then unreachable blocks go, then a dominator-tree walk replaces
//! values by dominating congruent ones (or constants) and drops congruent
//! block parameters, and last the pure instructions left without uses go.

use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::dominator_tree::DominatorTree;
use cranelift_codegen::entity::SecondaryMap;
use cranelift_codegen::flowgraph::ControlFlowGraph;
use cranelift_codegen::ir::{
    Block, BlockCall, Function, Inst, InstBuilder, InstructionData, Opcode, Value,
};
use hashbrown::{HashMap, HashSet};
use smallvec::SmallVec;

use super::analysis::{is_numbered_load, is_numbered_op, Partition};
use super::cfg::CfgInfo;
use super::expr::Term;
use super::GvnStats;

pub fn eliminate(func: &mut Function, cfg: &CfgInfo, part: &Partition, stats: &mut GvnStats) {
    fold_branches(func, cfg, part, stats);
    remove_unreachable_blocks(func, part, stats);
    // Folding and removal only remove edges, so dominance grows: walk the new
    // dominator tree, or congruent values now dominating each other are missed
    // (and a second run would find them).
    let flow = ControlFlowGraph::with_function(func);
    let domtree = DominatorTree::with_function(func, &flow);
    replace_congruent_values(func, &flow, &domtree, part, stats);
    remove_dead_code(func, stats);
}

/// A conditional branch or `br_table` with one reachable edge becomes a jump.
fn fold_branches(func: &mut Function, cfg: &CfgInfo, part: &Partition, stats: &mut GvnStats) {
    for &block in &cfg.rpo {
        if !part.block_reachable[block] {
            continue;
        }
        let outgoing = &cfg.outgoing[block];
        if outgoing.len() < 2 {
            continue;
        }
        let live: SmallVec<[usize; 2]> = outgoing
            .iter()
            .enumerate()
            .filter(|(_, &e)| part.edge_reachable[e])
            .map(|(slot, _)| slot)
            .collect();
        if live.len() != 1 {
            continue;
        }
        let inst = cfg.edges[outgoing[0]].inst;
        let destination = func.dfg.insts[inst]
            .branch_destination(&func.dfg.jump_tables, &func.dfg.exception_tables)[live[0]];
        func.dfg.insts[inst] = InstructionData::Jump {
            opcode: Opcode::Jump,
            destination,
        };
        stats.branches_folded += 1;
    }
}

fn remove_unreachable_blocks(func: &mut Function, part: &Partition, stats: &mut GvnStats) {
    let blocks: Vec<Block> = func.layout.blocks().collect();
    for block in blocks {
        if part.block_reachable[block] {
            continue;
        }
        while let Some(inst) = func.layout.first_inst(block) {
            func.layout.remove_inst(inst);
        }
        func.layout.remove_block(block);
        stats.blocks_removed += 1;
    }
}

/// Scoped map from term to the nearest dominating value that has it.
struct Available {
    map: HashMap<Term, Value>,
    undo: Vec<(Term, Option<Value>)>,
}

impl Available {
    fn get(&self, t: Term) -> Option<Value> {
        self.map.get(&t).copied()
    }
    fn insert(&mut self, t: Term, v: Value) {
        let old = self.map.insert(t, v);
        self.undo.push((t, old));
    }
    fn mark(&self) -> usize {
        self.undo.len()
    }
    fn pop_to(&mut self, mark: usize) {
        while self.undo.len() > mark {
            let (t, old) = self.undo.pop().unwrap();
            match old {
                Some(v) => self.map.insert(t, v),
                None => self.map.remove(&t),
            };
        }
    }
}

/// Walks the dominator tree in pre-order, replacing each value by the
/// nearest dominating member of its class, or by a constant.
fn replace_congruent_values(
    func: &mut Function,
    flow: &ControlFlowGraph,
    domtree: &DominatorTree,
    part: &Partition,
    stats: &mut GvnStats,
) {
    let Some(entry) = func.layout.entry_block() else {
        return;
    };
    let mut avail = Available {
        map: HashMap::new(),
        undo: Vec::new(),
    };
    // Explicit stack of (block, scope mark, children pushed?).
    let mut stack: Vec<(Block, usize, bool)> = vec![(entry, 0, false)];
    while let Some(top) = stack.last_mut() {
        let (block, _, expanded) = *top;
        if expanded {
            let (_, mark, _) = stack.pop().unwrap();
            avail.pop_to(mark);
            continue;
        }
        top.1 = avail.mark();
        top.2 = true;
        replace_in_block(func, flow, part, block, &mut avail, stats);
        let children: SmallVec<[Block; 4]> = domtree.children(block).collect();
        // Reverse so the first child is visited first (deterministic order).
        for child in children.into_iter().rev() {
            stack.push((child, 0, false));
        }
    }
}

fn replace_in_block(
    func: &mut Function,
    flow: &ControlFlowGraph,
    part: &Partition,
    block: Block,
    avail: &mut Available,
    stats: &mut GvnStats,
) {
    let is_entry = Some(block) == func.layout.entry_block();
    let params: SmallVec<[Value; 8]> = func.dfg.block_params(block).iter().copied().collect();
    // Decide in order (a parameter may be congruent to an earlier one of the
    // same block), then remove in reverse so the remaining indices stay valid.
    let mut removed: SmallVec<[(usize, Value, Value); 4]> = SmallVec::new();
    for (index, &param) in params.iter().enumerate() {
        let t = part.terms[param];
        if t == Term::Bottom {
            continue;
        }
        match (is_entry, t, avail.get(t)) {
            (false, _, Some(w)) if w != param => removed.push((index, param, w)),
            (false, Term::Const(ty, c), None) => {
                // A constant parameter: materialize the constant once, here.
                let mut pos = FuncCursor::new(func).at_first_insertion_point(block);
                let v = pos.ins().iconst(ty, c as i64);
                avail.insert(t, v);
                removed.push((index, param, v));
            }
            (_, _, None) => avail.insert(t, param),
            _ => {}
        }
    }
    for &(index, param, replacement) in removed.iter().rev() {
        remove_block_param(func, flow, block, index, param, replacement);
        stats.params_removed += 1;
        stats.values_replaced += 1;
    }

    let insts: SmallVec<[Inst; 32]> = func.layout.block_insts(block).collect();
    for inst in insts {
        if part.redundant_stores.contains(inst) {
            func.layout.remove_inst(inst);
            stats.stores_removed += 1;
            continue;
        }
        let results = func.dfg.inst_results(inst);
        if results.len() != 1 {
            continue;
        }
        let result = results[0];
        let t = part.terms[result];
        let op = func.dfg.insts[inst].opcode();
        let replaceable = is_numbered_op(op) || is_numbered_load(op);
        match t {
            Term::Bottom => {}
            Term::Const(ty, c) => {
                let already = matches!(func.dfg.insts[inst], InstructionData::UnaryImm { opcode: Opcode::Iconst, imm }
                    if imm.bits() as u64 == c);
                if !already && replaceable {
                    func.replace(inst).iconst(ty, c as i64);
                    stats.constants_folded += 1;
                    stats.values_replaced += 1;
                    if is_numbered_load(op) {
                        stats.loads_removed += 1;
                    }
                }
                if avail.get(t).is_none() {
                    avail.insert(t, result);
                }
            }
            Term::Val(_) => match avail.get(t) {
                Some(w) if w != result && replaceable => {
                    func.dfg.clear_results(inst);
                    func.dfg.change_to_alias(result, w);
                    func.layout.remove_inst(inst);
                    stats.values_replaced += 1;
                    if is_numbered_load(op) {
                        stats.loads_removed += 1;
                    } else {
                        stats.full_redundancies += 1;
                    }
                }
                Some(_) => {}
                None => {
                    if let Some((data, args)) = part.narrowed.get(&inst) {
                        // Only if the wider value and the constant operand
                        // are at hand: the load becomes one ALU operation.
                        let operands: Option<SmallVec<[Value; 2]>> =
                            args.iter().map(|&a| avail.get(a)).collect();
                        if let Some(operands) = operands {
                            narrow_from(func, inst, *data, &operands);
                            stats.loads_narrowed += 1;
                        }
                    }
                    avail.insert(t, result)
                }
            },
        }
    }
}

/// Replaces load `inst` by the one ALU operation `data` (operands masked) on
/// `operands` (the wider value that holds what it reads, and a constant).
fn narrow_from(func: &mut Function, inst: Inst, data: InstructionData, operands: &[Value]) {
    let ty = func.dfg.value_type(func.dfg.first_result(inst));
    let builder = func.replace(inst);
    match (data, operands) {
        (InstructionData::Unary { opcode, .. }, &[x]) => {
            builder.Unary(opcode, ty, x);
        }
        (InstructionData::Binary { opcode, .. }, &[x, y]) => {
            builder.Binary(opcode, ty, x, y);
        }
        _ => unreachable!("narrowing uses unary and binary operations only"),
    }
}

/// Removes parameter `index` of `block` and the matching argument on every
/// branch into it, and makes the parameter an alias of `replacement`.
fn remove_block_param(
    func: &mut Function,
    flow: &ControlFlowGraph,
    block: Block,
    index: usize,
    param: Value,
    replacement: Value,
) {
    drop_block_param(func, flow, block, index, param);
    func.dfg.change_to_alias(param, replacement);
}

/// Removes parameter `index` of `block` and the matching argument on every
/// branch into it.
fn drop_block_param(
    func: &mut Function,
    flow: &ControlFlowGraph,
    block: Block,
    index: usize,
    param: Value,
) {
    // A branch may reach `block` through several destinations (both arms of a
    // `brif`, several `br_table` entries); each distinct block call loses the
    // argument once.
    let mut seen: HashSet<BlockCall> = HashSet::new();
    for pred in flow.pred_iter(block) {
        let dfg = &mut func.dfg;
        for call in dfg.insts[pred.inst]
            .branch_destination_mut(&mut dfg.jump_tables, &mut dfg.exception_tables)
        {
            if call.block(&dfg.value_lists) == block && seen.insert(*call) {
                call.remove(index, &mut dfg.value_lists);
            }
        }
    }
    func.dfg.remove_block_param(param);
}

/// Removes the parameters of `blocks` that nothing uses (PRE's new
/// parameters whose value turned out congruent to an older one, and the old
/// ones PRE made dead), then the instructions that only fed them.
pub fn remove_unused_params(func: &mut Function, blocks: &[Block], stats: &mut GvnStats) {
    let uses = use_counts(func);
    let flow = ControlFlowGraph::with_function(func);
    for &block in blocks {
        if Some(block) == func.layout.entry_block() || !func.layout.is_block_inserted(block) {
            continue;
        }
        let params: SmallVec<[Value; 8]> = func.dfg.block_params(block).iter().copied().collect();
        for (index, &param) in params.iter().enumerate().rev() {
            if uses[param] == 0 {
                drop_block_param(func, &flow, block, index, param);
                stats.params_removed += 1;
            }
        }
    }
    remove_dead_code(func, stats);
}

/// How many times each value is used (as an operand or branch argument).
pub fn use_counts(func: &Function) -> SecondaryMap<Value, u32> {
    let mut uses: SecondaryMap<Value, u32> = SecondaryMap::new();
    for block in func.layout.blocks() {
        for inst in func.layout.block_insts(block) {
            for v in func.dfg.inst_values(inst) {
                uses[func.dfg.resolve_aliases(v)] += 1;
            }
        }
    }
    uses
}

/// Deletes instructions without side effects whose results are all unused,
/// transitively.
fn remove_dead_code(func: &mut Function, stats: &mut GvnStats) {
    let mut uses = use_counts(func);
    let blocks: Vec<Block> = func.layout.blocks().collect();
    let mut work: Vec<Inst> = Vec::new();
    for &block in &blocks {
        for inst in func.layout.block_insts(block) {
            if is_dead(func, inst, &uses) {
                work.push(inst);
            }
        }
    }
    while let Some(inst) = work.pop() {
        if func.layout.inst_block(inst).is_none() || !is_dead(func, inst, &uses) {
            continue;
        }
        let args: SmallVec<[Value; 4]> = func
            .dfg
            .inst_values(inst)
            .map(|v| func.dfg.resolve_aliases(v))
            .collect();
        func.layout.remove_inst(inst);
        stats.dead_removed += 1;
        for v in args {
            uses[v] -= 1;
            if uses[v] == 0 {
                if let cranelift_codegen::ir::ValueDef::Result(def, _) = func.dfg.value_def(v) {
                    work.push(def);
                }
            }
        }
    }
}

fn is_dead(func: &Function, inst: Inst, uses: &SecondaryMap<Value, u32>) -> bool {
    let results = func.dfg.inst_results(inst);
    if results.is_empty() || results.iter().any(|&r| uses[r] != 0) {
        return false;
    }
    let op = func.dfg.insts[inst].opcode();
    let side_effect_free = is_numbered_op(op) && !op.can_trap();
    let notrap_load = match func.dfg.insts[inst] {
        InstructionData::Load { flags, .. } => {
            is_numbered_load(op) && func.dfg.mem_flags[flags].notrap()
        }
        _ => false,
    };
    side_effect_free || notrap_load
}
