//! The control-flow facts GVN needs, computed once per function: reverse
//! post-order, a sequence number for every value definition, and the CFG's
//! edges (one per branch destination slot, so `brif v, b(x), b(y)` has two
//! distinct edges into `b`).

use cranelift_codegen::dominator_tree::DominatorTree;
use cranelift_codegen::entity::SecondaryMap;
use cranelift_codegen::flowgraph::ControlFlowGraph;
use cranelift_codegen::ir::{Block, BlockArg, Function, Inst, InstructionData, Opcode, Value};

/// An edge: destination `slot` of the terminator `inst` of block `from`.
#[derive(Clone, Copy, Debug)]
pub struct Edge {
    pub from: Block,
    pub inst: Inst,
    pub slot: u32,
    pub to: Block,
}

/// Index into [`CfgInfo::edges`].
pub type EdgeId = usize;

pub struct CfgInfo {
    /// Blocks reachable in the CFG, in reverse post-order; the entry first.
    pub rpo: Vec<Block>,
    /// Sequence number of each value's definition in RPO (block parameters,
    /// then instruction results in order): the order leaders are chosen in.
    pub value_order: SecondaryMap<Value, u32>,
    pub edges: Vec<Edge>,
    /// Incoming edges of each block, ordered by (source RPO index, slot).
    pub incoming: SecondaryMap<Block, Vec<EdgeId>>,
    /// Outgoing edges of each block, by slot.
    pub outgoing: SecondaryMap<Block, Vec<EdgeId>>,
    pub domtree: DominatorTree,
}

/// Whether GVN handles this function at all (not: exception tables, whose
/// block arguments are not values).
pub fn is_supported(func: &Function) -> bool {
    func.layout.blocks().all(|block| {
        func.layout.block_insts(block).all(|inst| {
            !matches!(
                func.dfg.insts[inst],
                InstructionData::TryCall { .. } | InstructionData::TryCallIndirect { .. }
            ) && func.dfg.insts[inst].opcode() != Opcode::GetExceptionHandlerAddress
        })
    })
}

impl CfgInfo {
    pub fn new(func: &Function) -> CfgInfo {
        let cfg = ControlFlowGraph::with_function(func);
        let domtree = DominatorTree::with_function(func, &cfg);
        let rpo: Vec<Block> = domtree.cfg_rpo().copied().collect();
        let mut value_order = SecondaryMap::with_default(u32::MAX);
        let mut seq = 0u32;
        let mut edges = Vec::new();
        let mut incoming: SecondaryMap<Block, Vec<EdgeId>> = SecondaryMap::new();
        let mut outgoing: SecondaryMap<Block, Vec<EdgeId>> = SecondaryMap::new();
        for &block in &rpo {
            for &p in func.dfg.block_params(block) {
                value_order[p] = seq;
                seq += 1;
            }
            for inst in func.layout.block_insts(block) {
                for &r in func.dfg.inst_results(inst) {
                    value_order[r] = seq;
                    seq += 1;
                }
            }
            if let Some(term) = func.layout.last_inst(block) {
                let dests = func.dfg.insts[term]
                    .branch_destination(&func.dfg.jump_tables, &func.dfg.exception_tables);
                for (slot, call) in dests.iter().enumerate() {
                    let to = call.block(&func.dfg.value_lists);
                    let id = edges.len();
                    edges.push(Edge {
                        from: block,
                        inst: term,
                        slot: slot as u32,
                        to,
                    });
                    outgoing[block].push(id);
                    incoming[to].push(id);
                }
            }
        }
        // Incoming edges were pushed in RPO of their source and slot order already.
        CfgInfo {
            rpo,
            value_order,
            edges,
            incoming,
            outgoing,
            domtree,
        }
    }

    /// The value passed for parameter `index` along `edge`, if it is a plain value.
    pub fn edge_arg(&self, func: &Function, edge: EdgeId, index: usize) -> Option<Value> {
        let e = self.edges[edge];
        let dests = func.dfg.insts[e.inst]
            .branch_destination(&func.dfg.jump_tables, &func.dfg.exception_tables);
        let call = dests.get(e.slot as usize)?;
        match call.args(&func.dfg.value_lists).nth(index)? {
            BlockArg::Value(v) => Some(v),
            _ => None,
        }
    }
}
