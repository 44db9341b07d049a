//! A deliberately wrong CLIF pass, for testing the differential tester.
//!
//! In each module it rewrites every `iadd` of the first defined function
//! (in module order, runtime functions `pare_*` excluded) that has one into
//! an `isub`. The result still verifies, so only execution can tell. The pass
//! is not parec's: the tester inserts it into a pipeline as a
//! [`ClifPass::Custom`](parec::pipeline::ClifPass::Custom) ([`PASS`]), and
//! only `parec-tools` knows its name (`--passes planted-iadd-isub`).

use cranelift_codegen::ir::{self, InstBuilder, Opcode};
use parec::pipeline::CustomPass;
use parec_passes::clif_module::ClifModule;

/// The pass's command-line name.
pub const NAME: &str = "planted-iadd-isub";

/// The planted miscompile as a custom pass of a parec pipeline.
pub const PASS: CustomPass = CustomPass { name: NAME, run };

/// Runs the planted miscompile on `module`; returns its statistics line.
pub fn run(module: &mut ClifModule) -> String {
    let symbols = &module.symbols;
    let victim = module.functions.iter_mut().find(|def| {
        let runtime = symbols
            .get(def.symbol as usize)
            .is_some_and(|s| s.name.starts_with("pare_"));
        !runtime && !iadds(&def.func).is_empty()
    });
    match victim {
        Some(def) => {
            let insts = iadds(&def.func);
            for &inst in &insts {
                let [a, b] = def.func.dfg.inst_args(inst) else {
                    continue;
                };
                let (a, b) = (*a, *b);
                def.func.replace(inst).isub(a, b);
            }
            format!("{} iadd(s) turned into isub", insts.len())
        }
        None => "no iadd found".to_string(),
    }
}

/// Every `iadd` of `func`, in layout order.
fn iadds(func: &ir::Function) -> Vec<ir::Inst> {
    let mut found = Vec::new();
    for block in func.layout.blocks() {
        for inst in func.layout.block_insts(block) {
            if func.dfg.insts[inst].opcode() == Opcode::Iadd {
                found.push(inst);
            }
        }
    }
    found
}
