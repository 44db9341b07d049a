//! Which functions the linker's identical-code folding (`ld.lld --icf=all`)
//! folds anyway: those are not merged, since a merge would cost a thunk or
//! a dispatch where the linker shares the whole function for free.
//!
//! Two functions fold when their code is byte-identical and their
//! relocations name the same symbols or symbols that fold in turn. At the
//! CLIF level this is the coarsest partition in which two functions of a
//! class have the same structure (`merge`'s stable hash, which leaves out
//! callees, symbols and parameterizable constants), the same constants and
//! data symbols at every location (read-only data compared by content), and
//! direct callees of one class at every callee location — a fixpoint
//! computed by refinement from the structural classes, as lld computes its
//! own (optimistically assuming equal what is not yet proven different).
//! CLIF that differs can still compile to the same bytes; such folds are
//! not seen here, and the measurement then credits a merge with bytes the
//! linker would have saved.
//!
//! Cost: one stable hash per function, then `O(n)` per refinement round;
//! the rounds are bounded by the call depth. A pass that compares the
//! classes of a few functions ([`classes_among`]) pays for those and their
//! callees only: a class depends on nothing else.

use cranelift_codegen::ir::{ExternalName, Function, InstructionData};
use hashbrown::HashMap;

use crate::clif_module::ClifModule;
use crate::merge::hash;

/// One entry of a function's key: a location's operand hash, or a callee
/// defined in the module (compared by class).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Operand {
    Hash(u64),
    Callee(usize),
}

/// Per function of `module` (by index), whether another function of the
/// module folds with it: the linker keeps one copy of the two.
pub fn folds_with_another(module: &ClifModule) -> Vec<bool> {
    let classes = classes(module);
    let mut sizes: HashMap<u32, usize> = HashMap::new();
    for &c in &classes {
        *sizes.entry(c).or_default() += 1;
    }
    classes.iter().map(|c| sizes[c] > 1).collect()
}

/// Per function of `module` (by index), its folding class.
pub fn classes(module: &ClifModule) -> Vec<u32> {
    let all: Vec<usize> = (0..module.functions.len()).collect();
    refine(module, &all)
}

/// Per function of `module` (by index), its folding class if it is one of
/// `among` or one of their callees, transitively (`None` for the others).
/// A class depends only on the function and what it calls, so the
/// partition of this callee-closed part is the one [`classes`] finds
/// there (the numbers differ: compare them only with each other); it
/// costs a stable hash per function of the part instead of the module.
pub fn classes_among(module: &ClifModule, among: &[usize]) -> Vec<Option<u32>> {
    let defined = defined(module);
    let mut inside = vec![false; module.functions.len()];
    let mut work: Vec<usize> = among.to_vec();
    while let Some(f) = work.pop() {
        if std::mem::replace(&mut inside[f], true) {
            continue;
        }
        let func = &module.functions[f].func;
        for block in func.layout.blocks() {
            for inst in func.layout.block_insts(block) {
                if let Some(&c) = callee(func, inst).and_then(|s| defined.get(&s)) {
                    work.push(c);
                }
            }
        }
    }
    let part: Vec<usize> = (0..inside.len()).filter(|&f| inside[f]).collect();
    let mut classes = vec![None; module.functions.len()];
    for (&f, class) in part.iter().zip(refine(module, &part)) {
        classes[f] = Some(class);
    }
    classes
}

/// Each function's index in `module`, by symbol.
fn defined(module: &ClifModule) -> HashMap<u32, usize> {
    module
        .functions
        .iter()
        .enumerate()
        .map(|(i, d)| (d.symbol, i))
        .collect()
}

/// The folding classes of `part` (function indices of `module`, closed
/// under direct callees and `func_addr`s defined in the module), in its
/// order.
fn refine(module: &ClifModule, part: &[usize]) -> Vec<u32> {
    let position: HashMap<u32, usize> = part
        .iter()
        .enumerate()
        .map(|(p, &f)| (module.functions[f].symbol, p))
        .collect();
    let keys: Vec<(u64, Vec<Operand>)> = part
        .iter()
        .map(|&f| {
            let d = &module.functions[f];
            let shape = hash::shape(module, &d.func, hash::LoopCalls::Parameterize);
            let operands = shape
                .locations
                .iter()
                .map(|l| match callee(&d.func, shape.insts[l.inst as usize]) {
                    Some(s) if position.contains_key(&s) => Operand::Callee(position[&s]),
                    _ => Operand::Hash(l.hash),
                })
                .collect();
            (shape.hash, operands)
        })
        .collect();
    // Start from structure and non-callee operands; callees all alike.
    let mut class = intern(keys.iter().map(|(h, ops)| {
        let ops: Vec<Operand> = ops
            .iter()
            .map(|&o| match o {
                Operand::Callee(_) => Operand::Callee(usize::MAX),
                hash => hash,
            })
            .collect();
        (*h, ops)
    }));
    loop {
        let refined = intern(keys.iter().enumerate().map(|(i, (_, ops))| {
            let ops: Vec<Operand> = ops
                .iter()
                .map(|&o| match o {
                    Operand::Callee(f) => Operand::Callee(class[f] as usize),
                    hash => hash,
                })
                .collect();
            (u64::from(class[i]), ops)
        }));
        let count = |c: &[u32]| c.iter().max().map_or(0, |&m| m + 1);
        if count(&refined) == count(&class) {
            return refined;
        }
        class = refined;
    }
}

/// Numbers the distinct keys in order of first appearance.
fn intern(keys: impl Iterator<Item = (u64, Vec<Operand>)>) -> Vec<u32> {
    let mut ids: HashMap<(u64, Vec<Operand>), u32> = HashMap::new();
    keys.map(|k| {
        let next = ids.len() as u32;
        *ids.entry(k).or_insert(next)
    })
    .collect()
}

/// The module symbol a direct call or `func_addr` names, if `inst` is one.
fn callee(func: &Function, inst: cranelift_codegen::ir::Inst) -> Option<u32> {
    match func.dfg.insts[inst] {
        InstructionData::Call { func_ref, .. } | InstructionData::FuncAddr { func_ref, .. } => {
            match func.dfg.ext_funcs[func_ref].name {
                ExternalName::User(_) => {
                    ClifModule::symbol_of(func, &func.dfg.ext_funcs[func_ref].name)
                }
                _ => None,
            }
        }
        _ => None,
    }
}
