//! Clean-up of a freshly built merged function: what Cranelift's
//! `optimize` does first, and removal of the blocks the construction leaves
//! that only forward control, so that `M` reads clearly and the cost model
//! prices the function Cranelift will compile.

use cranelift_codegen::ir::{Block, Function, Inst, InstBuilder, InstructionData};
use cranelift_codegen::settings::{self, Configurable, Flags};
use hashbrown::HashMap;

/// What Cranelift's `optimize` does first, done here so that `M` reads
/// clearly and the model prices what will be compiled: unreachable blocks
/// removed, block parameters with one incoming value removed, aliases
/// resolved (the SSA construction leaves many).
pub fn clean_up(func: &mut Function) {
    let mut context =
        cranelift_codegen::Context::for_function(std::mem::replace(func, Function::new()));
    let flags = steps_without_verifier();
    context.compute_cfg();
    context.compute_domtree();
    // Neither step can fail: the verifier is off in these flags.
    let _ = context.eliminate_unreachable_code(&flags);
    let _ = context.remove_constant_phis(&flags);
    context.func.dfg.resolve_all_aliases();
    *func = context.func;
    simplify_control_flow(func);
}

/// Flags for Cranelift's clean-up steps with the verifier off: by default
/// each step verifies the whole function (most of the clean-up's time); the
/// merger verifies the finished merged function once instead
/// (`fmerge::verify`), and the pipeline verifies after every pass in tests
/// and debug builds.
fn steps_without_verifier() -> Flags {
    let mut builder = settings::builder();
    builder
        .set("enable_verifier", "false")
        .expect("`enable_verifier` is a Cranelift setting");
    Flags::new(builder)
}

/// Removes the blocks the construction leaves that only forward control:
/// branches to a block that only jumps on (no parameters, no arguments)
/// go to its target instead, a `brif` whose two targets agree becomes a
/// `jump`, and a block reached only by a `jump` from one predecessor is
/// appended to it. (Cranelift's lowering threads some of these too; the
/// model prices the function as it is.)
fn simplify_control_flow(func: &mut Function) {
    let Some(entry) = func.layout.entry_block() else {
        return;
    };
    let bare_jump = |func: &Function, inst: Inst| -> Option<Block> {
        match func.dfg.insts[inst] {
            InstructionData::Jump { destination, .. }
                if destination.len(&func.dfg.value_lists) == 0 =>
            {
                Some(destination.block(&func.dfg.value_lists))
            }
            _ => None,
        }
    };
    // Forwarding blocks and where they lead.
    let blocks: Vec<Block> = func.layout.blocks().collect();
    let mut forward: HashMap<Block, Block> = HashMap::new();
    for &b in &blocks {
        let mut insts = func.layout.block_insts(b);
        if let (Some(only), None) = (insts.next(), insts.next()) {
            if b != entry && func.dfg.block_params(b).is_empty() {
                if let Some(t) = bare_jump(func, only) {
                    forward.insert(b, t);
                }
            }
        }
    }
    let target = |mut b: Block| {
        for _ in 0..forward.len() {
            match forward.get(&b) {
                Some(&t) if t != b => b = t,
                _ => break,
            }
        }
        b
    };
    for &b in &blocks {
        let Some(last) = func.layout.last_inst(b) else {
            continue;
        };
        let dfg = &mut func.dfg;
        for call in
            dfg.insts[last].branch_destination_mut(&mut dfg.jump_tables, &mut dfg.exception_tables)
        {
            if call.len(&dfg.value_lists) == 0 {
                let t = target(call.block(&dfg.value_lists));
                call.set_block(t, &mut dfg.value_lists);
            }
        }
        if let InstructionData::Brif {
            blocks: [a, b2], ..
        } = func.dfg.insts[last]
        {
            let pool = &func.dfg.value_lists;
            if a.block(pool) == b2.block(pool) && a.len(pool) == 0 && b2.len(pool) == 0 {
                let t = a.block(pool);
                func.replace(last).jump(t, &[]);
            }
        }
    }
    // Append single-predecessor blocks to the block that jumps to them.
    // Appending moves a block's instructions, not its edges: every other
    // block keeps its predecessors (the same instructions, now in the block
    // it was appended to), so the blocks to append are known from one CFG,
    // and each goes to whichever block holds its jump by then. The result
    // is that of appending them one at a time in any order: each chain of
    // such blocks ends up, in order, in its first block.
    let cfg = cranelift_codegen::flowgraph::ControlFlowGraph::with_function(func);
    let appended: Vec<(Inst, Block)> = func
        .layout
        .blocks()
        .filter(|&b| b != entry && func.dfg.block_params(b).is_empty())
        .filter_map(|b| {
            let mut preds = cfg.pred_iter(b);
            let (Some(pred), None) = (preds.next(), preds.next()) else {
                return None;
            };
            (pred.block != b && bare_jump(func, pred.inst) == Some(b)).then_some((pred.inst, b))
        })
        .collect();
    for (jump, block) in appended {
        let Some(into) = func.layout.inst_block(jump) else {
            continue;
        };
        if into == block {
            continue;
        }
        func.layout.remove_inst(jump);
        let insts: Vec<Inst> = func.layout.block_insts(block).collect();
        for inst in insts {
            func.layout.remove_inst(inst);
            func.layout.append_inst(inst, into);
        }
        func.layout.remove_block(block);
    }
    let mut context =
        cranelift_codegen::Context::for_function(std::mem::replace(func, Function::new()));
    let flags = steps_without_verifier();
    context.compute_cfg();
    context.compute_domtree();
    let _ = context.eliminate_unreachable_code(&flags);
    *func = context.func;
}
