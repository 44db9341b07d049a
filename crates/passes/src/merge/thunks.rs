//! Thunks only where they pay: callers of a merged function call its
//! `.Tgm` body directly when every caller is known and that is smaller.
//!
//! [GFM] §3.4 keeps every merged function `f` as a thunk `f(args) =
//! f.Tgm(args, consts(f))`, so that call sites never change and modules can
//! be compiled separately from a summary. A thunk is needed only where a
//! caller may be out of sight: `f` is exported (another object calls it),
//! its address escapes (a `func_addr`, a global value, a data relocation,
//! a `try_call`), or the pass does not see every caller. For a local
//! function whose every reference in its module is a direct `call` or
//! `return_call`, every caller is in the module, and each call site can
//! materialise `consts(f)` itself and call the body: the thunk goes.
//!
//! # Notation and cost model
//!
//! For a thunk `f` with `k` direct call sites, `m` is the aarch64 bytes of
//! materialising its constants (the thunk's `iconst`s by
//! [`hash::materialisation_cost`], 8 bytes — `adrp` + `add` — per symbol or
//! function address) and `o` the thunk's own overhead (a `b`, or a framed
//! call and return for C-ABI thunks: [`super::combine::thunk_overhead`]).
//! Keeping the thunk costs `m + o`; calling the body directly costs `k · m`
//! (each site materialises the constants into the argument registers the
//! thunk would have filled). The thunk is deleted when `k · m ≤ m + o`: a
//! tail thunk with one call site always (it saves its `b`), with more only
//! when materialising is nearly free. A thunk nothing calls any more is
//! deleted outright. (The same rule as `fmerge`'s deletion of a side,
//! `fmerge::rewrite`, there with measured sizes.)
//!
//! # Algorithm
//!
//! After [`super::run`] has rewritten a module, for each thunk it made (in
//! function order): skip it if it is not local or its address is taken;
//! count its direct call sites from the call graph ([`CallGraph`]); if the
//! rule above holds, inline the thunk at every site
//! ([`crate::inline::inline_at`]: the site then computes the constants and
//! calls — or tail-calls, at a `return_call` — the body), then delete the
//! thunk and its symbol.
//!
//! # Invariants
//!
//! - Semantics are unchanged: inlining a thunk is inlining a function.
//! - Exported and address-taken functions keep their thunks, so other
//!   objects and indirect callers still reach them; a separately compiled
//!   module decides from its own functions only, so Ninja builds stay
//!   byte-identical to `parec build`.
//! - Deterministic: thunks and callers are visited in function order.
//!
//! # Cost
//!
//! One call-graph construction per module and one refresh per rewritten
//! caller; each elided thunk costs one Cranelift inlining per caller (no
//! compilation: the decision is estimated).

use cranelift_codegen::ir::{Function, InstructionData, Opcode};

use crate::callgraph::CallGraph;
use crate::clif_module::{self, ClifModule, Linkage};
use crate::remark::Remark;

use super::hash;

/// What became of one thunk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ThunkFate {
    /// Deleted; its call sites call the body (their number).
    Elided { sites: usize, saved: i64 },
    /// Kept, and why.
    Kept(String),
}

/// The estimated cost of a thunk: its materialisation bytes `m` and its
/// own overhead `o` (module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThunkCost {
    pub materialise: i64,
    pub overhead: i64,
}

impl ThunkCost {
    /// The cost of `thunk`, a function [`super::rewrite`] built: its
    /// constants, and a `return_call` (tail) or a call and return — a jump
    /// too with `sibling_calls` (`super::MergeOptions::sibling_calls`: the
    /// thunk's results are the body's, so its call becomes a jump).
    pub fn of(thunk: &Function, sibling_calls: bool) -> ThunkCost {
        let mut materialise = 0;
        let mut tail = false;
        for block in thunk.layout.blocks() {
            for inst in thunk.layout.block_insts(block) {
                match thunk.dfg.insts[inst] {
                    InstructionData::UnaryImm {
                        opcode: Opcode::Iconst,
                        imm,
                    } => {
                        let ty = thunk.dfg.value_type(thunk.dfg.first_result(inst));
                        materialise += i64::from(hash::materialisation_cost(ty, imm.bits()));
                    }
                    InstructionData::UnaryGlobalValue { .. } | InstructionData::FuncAddr { .. } => {
                        materialise += 8
                    }
                    InstructionData::Call {
                        opcode: Opcode::ReturnCall,
                        ..
                    } => tail = true,
                    InstructionData::Call {
                        opcode: Opcode::Call,
                        ..
                    } => tail |= sibling_calls,
                    _ => {}
                }
            }
        }
        ThunkCost {
            materialise,
            overhead: super::combine::thunk_overhead(!tail) as i64,
        }
    }

    /// Bytes saved by calling the body directly from `sites` call sites
    /// instead of through the thunk (negative: it would cost).
    pub fn saving(self, sites: usize) -> i64 {
        self.materialise + self.overhead - sites as i64 * self.materialise
    }
}

/// Deletes the thunks among `thunks` (indices into `module.functions`, in
/// ascending order) whose callers all call their body more cheaply; returns
/// each thunk's name and fate, in order.
pub fn elide(
    module: &mut ClifModule,
    thunks: &[usize],
    sibling_calls: bool,
) -> Vec<(String, ThunkFate)> {
    let mut graph = CallGraph::new(module);
    let mut fates = Vec::with_capacity(thunks.len());
    let mut deleted = Vec::new();
    for &t in thunks {
        let symbol = module.functions[t].symbol;
        let name = module.symbols[symbol as usize].name.clone();
        let fate = decide(module, &graph, t, sibling_calls);
        let fate = match fate {
            ThunkFate::Elided { sites, saved } => {
                match redirect_callers(module, &mut graph, t) {
                    true => {
                        let bodies = graph.callees(t);
                        delete(module, &mut graph, t);
                        deleted.push(t);
                        // A body only its thunk called (nothing called the
                        // thunk) is dead now.
                        for body in bodies {
                            let symbol = module.functions[body].symbol;
                            if graph.callers(symbol).is_empty() && !graph.is_address_taken(symbol) {
                                delete(module, &mut graph, body);
                                deleted.push(body);
                            }
                        }
                        ThunkFate::Elided { sites, saved }
                    }
                    false => ThunkFate::Kept("Cranelift's inliner refused a call site".into()),
                }
            }
            kept => kept,
        };
        fates.push((name, fate));
    }
    clif_module::remove_functions(module, &deleted.into_iter().collect());
    fates
}

/// Whether thunk `t` should go (module doc), from the graph as it is now.
fn decide(module: &ClifModule, graph: &CallGraph, t: usize, sibling_calls: bool) -> ThunkFate {
    let symbol = module.functions[t].symbol;
    if module.symbols[symbol as usize].linkage != Linkage::Local {
        return ThunkFate::Kept("exported: other objects may call it".into());
    }
    if graph.is_address_taken(symbol) {
        return ThunkFate::Kept("its address is taken".into());
    }
    let sites = graph.call_sites(symbol).len();
    let cost = ThunkCost::of(&module.functions[t].func, sibling_calls);
    let saved = cost.saving(sites);
    match saved >= 0 {
        true => ThunkFate::Elided { sites, saved },
        false => ThunkFate::Kept(format!(
            "{sites} call sites would materialise {} bytes of constants each; the thunk costs {}",
            cost.materialise,
            cost.materialise + cost.overhead
        )),
    }
}

/// Inlines thunk `t` at every call site; false (and nothing changed) if
/// Cranelift's inliner refuses one.
fn redirect_callers(module: &mut ClifModule, graph: &mut CallGraph, t: usize) -> bool {
    let symbol = module.functions[t].symbol;
    let sites = graph.call_sites(symbol);
    let mut rewritten: Vec<(usize, Function)> = Vec::new();
    for caller in graph.callers(symbol) {
        let caller_sites: Vec<_> = sites
            .iter()
            .filter(|&&(f, _)| f == caller)
            .map(|&(_, inst)| inst)
            .collect();
        let thunk = &module.functions[t].func;
        match crate::inline::inline_at(&module.functions[caller].func, thunk, &caller_sites) {
            Some(func) => rewritten.push((caller, func)),
            None => return false,
        }
    }
    for (caller, func) in rewritten {
        module.functions[caller].func = func;
        graph.refresh(module, caller);
    }
    true
}

/// Empties thunk `t` (it calls nothing any more).
fn delete(module: &mut ClifModule, graph: &mut CallGraph, t: usize) {
    let func = &module.functions[t].func;
    module.functions[t].func =
        Function::with_name_signature(func.name.clone(), func.signature.clone());
    graph.refresh(module, t);
}

/// The remark of one thunk's fate.
pub fn remark(module: &str, name: &str, fate: &ThunkFate) -> Remark {
    match fate {
        ThunkFate::Elided { sites, saved } => Remark::passed(
            super::PASS,
            "thunk-elided",
            name,
            match sites {
                0 => "nothing calls it: the thunk and its body are deleted".to_string(),
                _ => format!(
                    "every caller is in the module: its {sites} call site(s) call the body with its constants, and the thunk is deleted"
                ),
            },
        )
        .in_module(module)
        .bytes(*saved)
        .count("thunks_elided", 1),
        ThunkFate::Kept(why) => {
            Remark::missed(super::PASS, "thunk-kept", name, why.clone()).in_module(module)
        }
    }
}
