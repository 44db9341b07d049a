//! The call graph of a [`ClifModule`]: who calls whom, who takes whose
//! address, and the strongly connected components in bottom-up order.
//!
//! # Notation
//!
//! Functions are named by their index `f` in [`ClifModule::functions`]. A
//! *direct call site* of `g` is a `call` or `return_call` instruction whose
//! `FuncRef` names `g`'s symbol. Every other mention of a function's symbol
//! — `func_addr`, a `symbol_value` global value, a data relocation, or a
//! `try_call` (whose exception edges the passes do not rewrite) — makes it
//! *address-taken*: some caller may reach it in a way no pass can see.
//!
//! # Algorithm
//!
//! [`References::of`] scans one function's instructions and global values
//! (`O(instructions)`). [`CallGraph::new`] does that for every function and
//! adds data relocations; [`CallGraph::bottom_up`] runs Tarjan's algorithm
//! (R. Tarjan, *Depth-first search and linear graph algorithms*, SIAM J.
//! Computing 1(2), 1972), iteratively so that deep call chains cannot
//! overflow the stack, over the edges "f calls g" in function and callee
//! order. Tarjan emits a component only after every component it reaches,
//! so the emitted order puts callees before callers.
//!
//! # Invariants
//!
//! - The graph is a snapshot: a pass that rewrites a function refreshes
//!   that function's entry with [`CallGraph::refresh`].
//! - Deterministic: nodes are visited in function order and edges in
//!   ascending callee order; nothing iterates a hash map.

use std::collections::{BTreeMap, BTreeSet};

use cranelift_codegen::ir::{self, InstructionData};

use crate::clif_module::ClifModule;

/// What one function's body mentions, by symbol.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct References {
    /// Direct call sites (`call`, `return_call`), in layout order, with the
    /// symbol each calls.
    pub calls: Vec<(ir::Inst, u32)>,
    /// Symbols mentioned other than as the target of a direct call.
    pub addressed: BTreeSet<u32>,
}

impl References {
    /// Scans `func`.
    pub fn of(func: &ir::Function) -> References {
        let mut refs = References::default();
        for block in func.layout.blocks() {
            for inst in func.layout.block_insts(block) {
                refs.note_inst(func, inst);
            }
        }
        for gv in func.global_values.values() {
            if let ir::GlobalValueData::Symbol { name, .. } = gv {
                refs.addressed.extend(ClifModule::symbol_of(func, name));
            }
        }
        refs
    }

    fn note_inst(&mut self, func: &ir::Function, inst: ir::Inst) {
        let symbol_of =
            |func_ref: ir::FuncRef| ClifModule::symbol_of(func, &func.dfg.ext_funcs[func_ref].name);
        match func.dfg.insts[inst] {
            InstructionData::Call {
                opcode: ir::Opcode::Call | ir::Opcode::ReturnCall,
                func_ref,
                ..
            } => {
                if let Some(symbol) = symbol_of(func_ref) {
                    self.calls.push((inst, symbol));
                }
            }
            InstructionData::FuncAddr { func_ref, .. }
            | InstructionData::TryCall { func_ref, .. }
            | InstructionData::Call { func_ref, .. } => {
                self.addressed.extend(symbol_of(func_ref));
            }
            _ => {}
        }
    }

    /// The distinct symbols called directly, ascending.
    pub fn callees(&self) -> BTreeSet<u32> {
        self.calls.iter().map(|&(_, s)| s).collect()
    }
}

/// The call graph of a module's defined functions.
#[derive(Clone, Debug)]
pub struct CallGraph {
    /// Function index of each defined function's symbol.
    defined: BTreeMap<u32, usize>,
    /// Per function, what its body mentions.
    refs: Vec<References>,
    /// Per symbol mentioned by a data object's relocation or a raw
    /// function's ([`ClifModule::raw_reloc_targets`]): true.
    in_data: BTreeSet<u32>,
    /// Per symbol, the functions calling it directly.
    callers: BTreeMap<u32, BTreeSet<usize>>,
    /// Per symbol, how many functions mention it other than by a call.
    addressers: BTreeMap<u32, usize>,
}

impl CallGraph {
    /// The graph of `module` as it is now.
    pub fn new(module: &ClifModule) -> CallGraph {
        let defined = module
            .functions
            .iter()
            .enumerate()
            .map(|(i, def)| (def.symbol, i))
            .collect();
        let refs: Vec<References> = module
            .functions
            .iter()
            .map(|def| References::of(&def.func))
            .collect();
        // Functions defined by machine code refer to symbols as data does.
        let in_data = module
            .data
            .iter()
            .flat_map(|d| d.relocs.iter().map(|r| r.target))
            .chain(module.raw_reloc_targets())
            .collect();
        let mut graph = CallGraph {
            defined,
            refs: Vec::new(),
            in_data,
            callers: BTreeMap::new(),
            addressers: BTreeMap::new(),
        };
        for (f, r) in refs.into_iter().enumerate() {
            graph.refs.push(References::default());
            graph.set_references(f, r);
        }
        graph
    }

    /// Re-reads function `f` after a pass rewrote it.
    pub fn refresh(&mut self, module: &ClifModule, f: usize) {
        self.set_references(f, References::of(&module.functions[f].func));
    }

    /// Updates function `f` (now `func`) after Cranelift's inliner replaced
    /// its calls at `sites` by callee bodies: what the instructions numbered
    /// from `first_new_inst` and the global values from `first_new_gv`
    /// mention joins `f`'s references in place of the sites. Equal to
    /// [`CallGraph::refresh`], in time linear in the inlined code and the
    /// caller's calls rather than its instructions: Cranelift's inliner
    /// keeps the call instruction (as a jump into the body) in its block and
    /// lays the body's blocks out right after it, and numbers the body's
    /// instructions after every existing one.
    pub fn note_inlined(
        &mut self,
        func: &ir::Function,
        f: usize,
        sites: &[ir::Inst],
        first_new_inst: usize,
        first_new_gv: usize,
    ) {
        let mut refs = std::mem::take(&mut self.refs[f]);
        let mut added = References::default();
        let mut callees_removed = BTreeSet::new();
        for &site in sites {
            let Some(pos) = refs.calls.iter().position(|&(inst, _)| inst == site) else {
                continue;
            };
            callees_removed.insert(refs.calls.remove(pos).1);
            let mut body = References::default();
            let mut next = func
                .layout
                .inst_block(site)
                .and_then(|b| func.layout.next_block(b));
            while let Some(block) = next {
                let inlined = func
                    .layout
                    .first_inst(block)
                    .is_some_and(|i| i.as_u32() as usize >= first_new_inst);
                if !inlined {
                    break;
                }
                for inst in func.layout.block_insts(block) {
                    body.note_inst(func, inst);
                }
                next = func.layout.next_block(block);
            }
            added.calls.extend(body.calls.iter().copied());
            added.addressed.extend(&body.addressed);
            refs.calls.splice(pos..pos, body.calls);
        }
        for gv in func.global_values.values().skip(first_new_gv) {
            if let ir::GlobalValueData::Symbol { name, .. } = gv {
                added.addressed.extend(ClifModule::symbol_of(func, name));
            }
        }
        for symbol in callees_removed {
            if !refs.calls.iter().any(|&(_, s)| s == symbol) {
                if let Some(callers) = self.callers.get_mut(&symbol) {
                    callers.remove(&f);
                }
            }
        }
        for (_, symbol) in added.calls {
            self.callers.entry(symbol).or_default().insert(f);
        }
        for symbol in added.addressed {
            if refs.addressed.insert(symbol) {
                *self.addressers.entry(symbol).or_default() += 1;
            }
        }
        debug_assert_eq!(refs, References::of(func), "inlined references of {f}");
        self.refs[f] = refs;
    }

    /// Replaces `f`'s references, keeping the reverse indexes in step.
    fn set_references(&mut self, f: usize, refs: References) {
        let old = std::mem::replace(&mut self.refs[f], refs);
        for symbol in old.callees() {
            if let Some(callers) = self.callers.get_mut(&symbol) {
                callers.remove(&f);
            }
        }
        for symbol in &old.addressed {
            if let Some(count) = self.addressers.get_mut(symbol) {
                *count -= 1;
            }
        }
        for symbol in self.refs[f].callees() {
            self.callers.entry(symbol).or_default().insert(f);
        }
        for &symbol in &self.refs[f].addressed {
            *self.addressers.entry(symbol).or_default() += 1;
        }
    }

    /// The function defining `symbol`, if this module defines it.
    pub fn function_of(&self, symbol: u32) -> Option<usize> {
        self.defined.get(&symbol).copied()
    }

    /// What function `f` mentions.
    pub fn references(&self, f: usize) -> &References {
        &self.refs[f]
    }

    /// The defined functions `f` calls directly, ascending, each once.
    pub fn callees(&self, f: usize) -> Vec<usize> {
        let callees: BTreeSet<usize> = self.refs[f]
            .calls
            .iter()
            .filter_map(|&(_, s)| self.function_of(s))
            .collect();
        callees.into_iter().collect()
    }

    /// Whether `symbol` is mentioned other than by direct calls in the
    /// functions of the module (`func_addr`, a global value, data).
    pub fn is_address_taken(&self, symbol: u32) -> bool {
        self.in_data.contains(&symbol) || self.addressers.get(&symbol).is_some_and(|&n| n > 0)
    }

    /// The functions that call `symbol` directly, ascending.
    pub fn callers(&self, symbol: u32) -> Vec<usize> {
        self.callers
            .get(&symbol)
            .map_or_else(Vec::new, |c| c.iter().copied().collect())
    }

    /// Every direct call site of `symbol`: `(caller, call instruction)`, in
    /// caller order and layout order.
    pub fn call_sites(&self, symbol: u32) -> Vec<(usize, ir::Inst)> {
        self.callers(symbol)
            .into_iter()
            .flat_map(|f| {
                self.refs[f]
                    .calls
                    .iter()
                    .filter(move |&&(_, s)| s == symbol)
                    .map(move |&(inst, _)| (f, inst))
            })
            .collect()
    }

    /// The strongly connected components of "calls directly", callees'
    /// components before their callers' (Tarjan's order).
    pub fn bottom_up(&self) -> Vec<Vec<usize>> {
        Tarjan::new(self).run()
    }
}

/// Iterative Tarjan: one explicit frame per node being visited.
struct Tarjan<'g> {
    graph: &'g CallGraph,
    index: Vec<Option<usize>>,
    lowlink: Vec<usize>,
    on_stack: Vec<bool>,
    stack: Vec<usize>,
    next_index: usize,
    components: Vec<Vec<usize>>,
}

/// A node being visited and the position in its callee list.
struct Frame {
    node: usize,
    callees: Vec<usize>,
    next: usize,
}

impl<'g> Tarjan<'g> {
    fn new(graph: &'g CallGraph) -> Self {
        let n = graph.refs.len();
        Tarjan {
            graph,
            index: vec![None; n],
            lowlink: vec![0; n],
            on_stack: vec![false; n],
            stack: Vec::new(),
            next_index: 0,
            components: Vec::new(),
        }
    }

    fn run(mut self) -> Vec<Vec<usize>> {
        for root in 0..self.graph.refs.len() {
            if self.index[root].is_none() {
                self.visit_from(root);
            }
        }
        self.components
    }

    fn enter(&mut self, node: usize) -> Frame {
        self.index[node] = Some(self.next_index);
        self.lowlink[node] = self.next_index;
        self.next_index += 1;
        self.stack.push(node);
        self.on_stack[node] = true;
        Frame {
            node,
            callees: self.graph.callees(node),
            next: 0,
        }
    }

    fn visit_from(&mut self, root: usize) {
        let mut frames = vec![self.enter(root)];
        while let Some(frame) = frames.last_mut() {
            let node = frame.node;
            if let Some(&callee) = frame.callees.get(frame.next) {
                frame.next += 1;
                match self.index[callee] {
                    None => {
                        let callee_frame = self.enter(callee);
                        frames.push(callee_frame);
                    }
                    Some(callee_index) if self.on_stack[callee] => {
                        self.lowlink[node] = self.lowlink[node].min(callee_index);
                    }
                    Some(_) => {}
                }
                continue;
            }
            frames.pop();
            if let Some(parent) = frames.last() {
                self.lowlink[parent.node] = self.lowlink[parent.node].min(self.lowlink[node]);
            }
            if Some(self.lowlink[node]) == self.index[node] {
                self.pop_component(node);
            }
        }
    }

    fn pop_component(&mut self, root: usize) {
        let mut component = Vec::new();
        loop {
            let member = self.stack.pop().expect("the root is on the stack");
            self.on_stack[member] = false;
            component.push(member);
            if member == root {
                break;
            }
        }
        component.sort_unstable();
        self.components.push(component);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clif_module::{FunctionDef, Linkage, SymbolKind};

    /// A module of `tail` functions `f0..fn` where `fi` calls each of
    /// `calls[i]`.
    fn module_with_calls(calls: &[&[usize]]) -> ClifModule {
        let mut text = String::new();
        for (i, callees) in calls.iter().enumerate() {
            text.push_str(&format!("function u0:{i}(i64) -> i64 tail {{\n"));
            text.push_str("    sig0 = (i64) -> i64 tail\n");
            for (k, c) in callees.iter().enumerate() {
                text.push_str(&format!("    fn{k} = colocated u0:{c} sig0\n"));
            }
            text.push_str("block0(v0: i64):\n");
            for k in 0..callees.len() {
                text.push_str(&format!("    v{} = call fn{k}(v0)\n", k + 1));
            }
            text.push_str("    return v0\n}\n");
        }
        let mut module = ClifModule::new("m");
        for (i, func) in cranelift_reader::parse_functions(&text)
            .unwrap()
            .into_iter()
            .enumerate()
        {
            let symbol = module.declare(
                &format!("f{i}"),
                SymbolKind::Function(func.signature.clone()),
                Linkage::Local,
            );
            assert_eq!(symbol as usize, i);
            module.functions.push(FunctionDef { symbol, func });
        }
        module
    }

    #[test]
    fn components_come_callees_first() {
        // f0 -> f1 -> f2 -> f1 (a cycle), f0 -> f3, f3 -> f3 (self-recursion).
        let module = module_with_calls(&[&[1, 3], &[2], &[1], &[3]]);
        let graph = CallGraph::new(&module);
        assert_eq!(graph.bottom_up(), vec![vec![1, 2], vec![3], vec![0]]);
        assert_eq!(graph.call_sites(1).len(), 2);
        assert!(!graph.is_address_taken(1));
    }

    #[test]
    fn deep_chains_do_not_overflow() {
        let n = 20_000;
        let calls: Vec<Vec<usize>> = (0..n)
            .map(|i| if i + 1 < n { vec![i + 1] } else { vec![] })
            .collect();
        let refs: Vec<&[usize]> = calls.iter().map(|c| c.as_slice()).collect();
        let graph = CallGraph::new(&module_with_calls(&refs));
        let order = graph.bottom_up();
        assert_eq!(order.len(), n);
        assert_eq!(order[0], vec![n - 1]);
        assert_eq!(order[n - 1], vec![0]);
    }
}
