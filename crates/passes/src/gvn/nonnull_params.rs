//! Non-null parameters: which parameters of a module's internal functions
//! are never zero, from what every call site passes — so that GVN drops the
//! callee's null checks of them as it drops a check a dominating check
//! already made ([`super::predicates`]).
//!
//! A check of a parameter in a function whose every caller passes a fresh
//! object, an address, or a reference the caller has already checked can
//! never fire, so removing it changes no run: a null reference traps at
//! the caller's check, where it did before. ABCD ([ABCD]) and GVN's
//! predicates see one function; here the fact `p ≠ 0` of a parameter is
//! the meet over the call graph of what the call sites know, as in the
//! interprocedural constant propagation of [CCKT86] (a jump function per
//! call-site argument, a lattice value per formal parameter, iterated over
//! the call graph), with the two-point lattice "non-zero" / "unknown" and
//! pass-through jump functions. (References in docs/DESIGN.md.)
//!
//! **Non-null results** are the same facts in the other direction: a
//! candidate whose every `return` returns a value known non-zero (a fresh
//! object, an address, a checked reference, a non-null parameter, or the
//! result of another such candidate) returns non-null, and its callers'
//! checks of its direct call results fold, as those of a callee the module
//! says never returns null do (a function returning a fresh allocation
//! that is not inlined, `zeros` of bench/matrix at `-Os`). One fixed point
//! computes both: a parameter may be fed by a result and a result by a
//! parameter.
//!
//! # Notation
//!
//! - A **candidate** is a function, named by its symbol, that every source
//!   module defining it defines with [`Linkage::Local`], that no source
//!   mentions other than by direct calls (`call`, `return_call`: see
//!   [`crate::callgraph`] for what makes a function address-taken), and
//!   that has at least one direct call site. All its callers are then the
//!   call sites the sources show.
//! - Functions that must **stay alike** ([`kept_alike`]) are not
//!   candidates, although they could be: a function other modules define
//!   too (a generic instance each module using it emits), which each
//!   module would specialize by its own call sites, and a function whose
//!   code another function of the program has (the merge hash [GFM] and
//!   the same callees, symbols and constants). The linker folds identical
//!   copies into one; copies that differ in a check stay two
//!   (`cell::intern<str>` of bench/lisp, 520 bytes, kept twice to save a
//!   4-byte check in one copy).
//! - At a call site `f(a1, ..., an)` in block `b` of caller `g`, argument
//!   `ai` is **known** non-zero when its definition says so (a non-zero
//!   `iconst`, a stack slot's address, the address of a symbol this unit
//!   defines, the result of a callee the module says never returns null),
//!   or when a dominator `d`
//!   of `b` (`b` itself included) has one predecessor, which ends in
//!   `brif c` with `d` on the edge where `c` says `ai ≠ 0` (`c = ai` or
//!   `icmp ne ai, 0` true, `icmp eq ai, 0` false): the null check of a
//!   Pare dereference. It **passes through** parameter `j` of `g` when `ai`
//!   is `g`'s entry parameter `j` and nothing dominating tested it. Else it
//!   is the **result of** `h` when `ai` is the result of a direct call of
//!   candidate `h` (known if `nonnull_result(h)`). Else it is unknown.
//!   The value of a `return` in candidate `f` is classified the same way
//!   (a `return_call h` returns the result of `h`).
//! - `nonnull(f, i)`: parameter `i` of candidate `f` is non-zero on entry to
//!   every call of `f`.
//! - `nonnull_result(f)`: candidate `f` returns one integer, and every
//!   `return` of every call of `f` returns it non-zero.
//! - A **reference** of `f` is an entry parameter `f` uses as the address
//!   of a load or a store. Only references are told non-null (the facts
//!   of the others still pass through): GVN then drops null checks, and
//!   never specializes a function on an integer its callers happen to
//!   pass non-zero — a rewrite that holds for the program but not for the
//!   function alone, whatever the arguments, which is what every other
//!   CLIF pass keeps (and `parec-tools fuzz` checks, calling functions
//!   that touch no memory with random arguments). Likewise a caller is
//!   told `nonnull_result(h)` only for the callees `h` whose call results
//!   it loads or stores through (its **reference results**), and only if
//!   it need not stay alike.
//!
//! # Algorithm
//!
//! 1. Find the candidates over every source module (the module GVN
//!    rewrites and, when the size guard may put functions back, the module
//!    as it came into the CLIF passes: a function put back brings back its
//!    own call sites, which the joint meet covers).
//! 2. For each direct call site of a candidate, classify each argument:
//!    known, passes through `(g, j)`, result of `h`, or unknown; and each
//!    `return` of a candidate returning one integer, as in every source.
//! 3. Start optimistic: `nonnull(f, i)` for every candidate parameter and
//!    `nonnull_result(f)` for every candidate returning one integer; an
//!    unknown argument or returned value clears its fact; then, to a fixed
//!    point, a fact fed by a pass-through of a cleared parameter (or of a
//!    non-candidate's) or by the result of a cleared candidate is cleared.
//!    The result is the greatest fixed point.
//!
//! # Invariants
//!
//! - Sound by induction on the calls a run makes: the first call of a
//!   candidate comes from a function that is not a candidate or from a
//!   candidate whose facts hold, through a call site the sources show (no
//!   other can reach a local function whose address is never taken), and
//!   that site passes a value non-zero given those facts; likewise the
//!   first `return` of a zero by a candidate told non-null returns a value
//!   computed from facts that held before. The candidates, their callers
//!   and their returns are all in the module (local functions), so a
//!   build per module with plans sees what `parec build` sees. Recursion is the
//!   induction step, not a cycle in the proof: `f(p)` calling `f(p)` keeps
//!   the fact it was entered with.
//! - Every pass that runs after GVN computes what its input computed, so
//!   the dynamic calls, and the values they pass, are those GVN saw: facts
//!   stay true when merging later turns a call into a thunk's call.
//! - Deterministic: candidates and call sites are visited in symbol-name
//!   and function order.
//!
//! # Cost
//!
//! One call graph per source module; per caller with a call site of a
//! candidate, one dominator tree; per argument a walk up the dominator
//! tree of at most [`MAX_DOMINATOR_WALK`] blocks. The fixed point clears
//! each parameter at most once: linear in the call sites.

use std::collections::{BTreeMap, BTreeSet};

use cranelift_codegen::dominator_tree::DominatorTree;
use cranelift_codegen::flowgraph::ControlFlowGraph;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    Block, FuncRef, Function, GlobalValueData, Inst, InstructionData, Opcode, Value, ValueDef,
};

use crate::callgraph::CallGraph;
use crate::clif_module::{ClifModule, Linkage};
use crate::merge::hash::{shape, Location, LoopCalls};

/// Dominators looked at per argument, nearest first.
pub const MAX_DOMINATOR_WALK: usize = 256;

/// The parameters of a module's candidates that are never zero, by the
/// candidate's symbol name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NonnullParams {
    params: BTreeMap<String, Vec<usize>>,
    /// The candidates whose every return is non-zero (module doc,
    /// "non-null results").
    results: BTreeSet<String>,
    /// Per function GVN may rewrite, the callees of `results` whose
    /// results it uses as references.
    told: BTreeMap<String, BTreeSet<String>>,
}

/// What a call site knows of one argument.
#[derive(Clone, Debug, PartialEq, Eq)]
enum ArgFact {
    Known,
    /// The caller's entry parameter with this index.
    PassesThrough(usize),
    /// The result of a direct call of this candidate.
    ResultOf(String),
    Unknown,
}

/// One `return` of candidate `function`: its value is what `fact` says.
struct ReturnSite {
    function: String,
    fact: ArgFact,
}

/// One argument of one call site: parameter `param` of `callee` gets what
/// `fact` says, in caller `caller`.
struct ArgSite {
    callee: String,
    param: usize,
    caller: String,
    fact: ArgFact,
}

impl NonnullParams {
    /// The facts over the call sites of `sources` (module doc, step 1:
    /// the module rewritten first, then what a guard may put back), for
    /// the functions not named in `alike` (what [`kept_alike`] found in
    /// the whole program).
    pub fn of(sources: &[&ClifModule], alike: &BTreeSet<String>) -> NonnullParams {
        let mut candidates = candidates(sources);
        // Functions GVN made identical to another of the module stay alike
        // too (the linker folds them; the whole program's `alike` is what
        // they were before GVN).
        let alike_now = sources
            .first()
            .map(|m| alike_in(std::iter::once(*m)))
            .unwrap_or_default();
        candidates.retain(|name, _| !alike.contains(name) && !alike_now.contains(name));
        if candidates.is_empty() {
            return NonnullParams::default();
        }
        let (sites, returns) = call_and_return_sites(sources, &candidates);
        let mut nonnull: BTreeMap<(&str, usize), bool> = BTreeMap::new();
        let mut results: BTreeMap<&str, bool> = BTreeMap::new();
        for (name, &(arity, returns_one)) in &candidates {
            for i in 0..arity {
                nonnull.insert((name.as_str(), i), true);
            }
            results.insert(name.as_str(), returns_one);
        }
        // Greatest fixed point: clear what an unknown value feeds, then
        // what a cleared (or non-candidate) parameter passes through to,
        // and what a cleared result is returned or passed as.
        loop {
            let mut changed = false;
            for site in &sites {
                let key = (site.callee.as_str(), site.param);
                if !nonnull.get(&key).copied().unwrap_or(false) {
                    continue;
                }
                if !holds(&site.fact, &site.caller, &nonnull, &results) {
                    nonnull.insert(key, false);
                    changed = true;
                }
            }
            for site in &returns {
                let key = site.function.as_str();
                if !results.get(key).copied().unwrap_or(false) {
                    continue;
                }
                if !holds(&site.fact, key, &nonnull, &results) {
                    results.insert(key, false);
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        let results: BTreeSet<String> = results
            .into_iter()
            .filter(|&(_, holds)| holds)
            .map(|(name, _)| name.to_string())
            .collect();
        let told = match sources.first() {
            Some(module) => reference_results(module, &results, |name| {
                !alike.contains(name) && !alike_now.contains(name)
            }),
            None => BTreeMap::new(),
        };
        // Every fact holds, but only references are told: see the module
        // doc's "references".
        let references = reference_params(sources[0]);
        let mut params: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        for ((name, i), holds) in nonnull {
            let is_reference = references.get(name).is_some_and(|r| r.contains(&i));
            if holds && is_reference {
                params.entry(name.to_string()).or_default().push(i);
            }
        }
        NonnullParams {
            params,
            results,
            told,
        }
    }

    /// The indices of `symbol`'s parameters known non-zero, ascending.
    pub fn of_function(&self, symbol: &str) -> &[usize] {
        self.params.get(symbol).map_or(&[], Vec::as_slice)
    }

    /// How many parameters are known non-zero in all.
    pub fn count(&self) -> usize {
        self.params.values().map(Vec::len).sum()
    }

    /// Whether every return of candidate `symbol` is non-zero.
    pub fn returns_nonnull(&self, symbol: &str) -> bool {
        self.results.contains(symbol)
    }

    /// The callees whose results `symbol` may be told non-null (those of
    /// [`Self::returns_nonnull`] whose results it uses as references).
    pub fn results_told(&self, symbol: &str) -> Option<&BTreeSet<String>> {
        self.told.get(symbol)
    }

    /// Whether GVN has nothing to learn from these facts.
    pub fn is_empty(&self) -> bool {
        self.count() == 0 && self.told.is_empty()
    }
}

/// Whether `fact`, seen in `function`, says non-zero under the facts
/// `nonnull` and `results` hold so far.
fn holds(
    fact: &ArgFact,
    function: &str,
    nonnull: &BTreeMap<(&str, usize), bool>,
    results: &BTreeMap<&str, bool>,
) -> bool {
    match fact {
        ArgFact::Known => true,
        ArgFact::PassesThrough(j) => nonnull.get(&(function, *j)).copied().unwrap_or(false),
        ArgFact::ResultOf(callee) => results.get(callee.as_str()).copied().unwrap_or(false),
        ArgFact::Unknown => false,
    }
}

/// Per function of `module` that `may_rewrite` accepts, the callees of
/// `results` whose call results it uses as the address of a load or a
/// store (its **reference results**).
fn reference_results(
    module: &ClifModule,
    results: &BTreeSet<String>,
    may_rewrite: impl Fn(&str) -> bool,
) -> BTreeMap<String, BTreeSet<String>> {
    let mut told = BTreeMap::new();
    if results.is_empty() {
        return told;
    }
    for def in &module.functions {
        let Some(symbol) = module.symbols.get(def.symbol as usize) else {
            continue;
        };
        if !may_rewrite(&symbol.name) {
            continue;
        }
        let func = &def.func;
        let callees: BTreeSet<String> = addresses(func)
            .filter_map(|address| direct_callee(module, func, address))
            .filter(|callee| results.contains(*callee))
            .map(str::to_string)
            .collect();
        if !callees.is_empty() {
            told.insert(symbol.name.clone(), callees);
        }
    }
    told
}

/// The addresses `func` loads from or stores to, aliases resolved.
fn addresses(func: &Function) -> impl Iterator<Item = Value> + '_ {
    func.layout
        .blocks()
        .flat_map(|block| func.layout.block_insts(block))
        .filter_map(|inst| match func.dfg.insts[inst] {
            InstructionData::Load { arg, .. } => Some(arg),
            InstructionData::Store { args, .. } => Some(args[1]),
            _ => None,
        })
        .map(|address| func.dfg.resolve_aliases(address))
}

/// The symbol `v` is the result of a direct `call` of, if it is.
fn direct_callee<'m>(module: &'m ClifModule, func: &Function, v: Value) -> Option<&'m str> {
    let dfg = &func.dfg;
    let ValueDef::Result(inst, 0) = dfg.value_def(v) else {
        return None;
    };
    let InstructionData::Call { func_ref, .. } = dfg.insts[inst] else {
        return None;
    };
    callee_name(module, func, func_ref)
}

/// The name of the symbol `func_ref` of `func` calls, in `module`.
fn callee_name<'m>(module: &'m ClifModule, func: &Function, func_ref: FuncRef) -> Option<&'m str> {
    ClifModule::symbol_of(func, &func.dfg.ext_funcs[func_ref].name)
        .and_then(|s| module.symbols.get(s as usize))
        .map(|s| s.name.as_str())
}

/// The local functions of `modules` (the whole program) that must stay
/// alike (module doc): those several modules define, and those whose code
/// another function has (equal [`crate::merge::hash::shape`]s, locations
/// included).
pub fn kept_alike(modules: &[ClifModule]) -> BTreeSet<String> {
    alike_in(modules.iter())
}

/// [`kept_alike`] over `modules`.
fn alike_in<'m>(modules: impl Iterator<Item = &'m ClifModule>) -> BTreeSet<String> {
    let mut by_code: BTreeMap<(u64, Vec<Location>), Vec<&str>> = BTreeMap::new();
    let mut defined: BTreeMap<&str, usize> = BTreeMap::new();
    for module in modules {
        for def in &module.functions {
            let Some(symbol) = module.symbols.get(def.symbol as usize) else {
                continue;
            };
            if symbol.linkage != Linkage::Local {
                continue;
            }
            *defined.entry(symbol.name.as_str()).or_default() += 1;
            let shape = shape(module, &def.func, LoopCalls::Parameterize);
            by_code
                .entry((shape.hash, shape.locations))
                .or_default()
                .push(symbol.name.as_str());
        }
    }
    let several_modules = defined
        .iter()
        .filter(|(_, &n)| n > 1)
        .map(|(&name, _)| name);
    let look_alikes = by_code
        .values()
        .filter(|names| names.iter().any(|n| *n != names[0]))
        .flatten()
        .copied();
    several_modules
        .chain(look_alikes)
        .map(str::to_string)
        .collect()
}

/// Per function of `module`, its **references**: the entry parameters it
/// uses as the address of a load or a store.
fn reference_params(module: &ClifModule) -> BTreeMap<&str, BTreeSet<usize>> {
    let mut references = BTreeMap::new();
    for def in &module.functions {
        let Some(symbol) = module.symbols.get(def.symbol as usize) else {
            continue;
        };
        let func = &def.func;
        let Some(entry) = func.layout.entry_block() else {
            continue;
        };
        let params = func.dfg.block_params(entry);
        let used: BTreeSet<usize> = addresses(func)
            .filter_map(|address| params.iter().position(|&p| p == address))
            .collect();
        references.insert(symbol.name.as_str(), used);
    }
    references
}

/// The candidates of `sources` (module doc), their parameter counts, and
/// whether they return one integer.
fn candidates(sources: &[&ClifModule]) -> BTreeMap<String, (usize, bool)> {
    let mut candidates: BTreeMap<String, (usize, bool)> = BTreeMap::new();
    let mut excluded: BTreeSet<String> = BTreeSet::new();
    for module in sources {
        let graph = CallGraph::new(module);
        for def in &module.functions {
            let Some(symbol) = module.symbols.get(def.symbol as usize) else {
                continue;
            };
            let internal = symbol.linkage == Linkage::Local
                && !graph.is_address_taken(def.symbol)
                && !graph.callers(def.symbol).is_empty();
            let returns = &def.func.signature.returns;
            let arity = (
                def.func.signature.params.len(),
                returns.len() == 1 && returns[0].value_type.is_int(),
            );
            match candidates.get(&symbol.name) {
                _ if !internal => {
                    excluded.insert(symbol.name.clone());
                }
                Some(&known) if known != arity => {
                    excluded.insert(symbol.name.clone());
                }
                _ => {
                    candidates.insert(symbol.name.clone(), arity);
                }
            }
        }
        // A source that mentions a candidate by address (a function it only
        // imports, or data) makes it unknown too.
        for (index, symbol) in module.symbols.iter().enumerate() {
            if graph.is_address_taken(index as u32) {
                excluded.insert(symbol.name.clone());
            }
        }
    }
    candidates.retain(|name, _| !excluded.contains(name));
    candidates
}

/// Every argument of every direct call of a candidate in `sources`, with
/// what its call site knows of it, and every `return` of a candidate
/// returning one integer, with what is known of its value there.
fn call_and_return_sites(
    sources: &[&ClifModule],
    candidates: &BTreeMap<String, (usize, bool)>,
) -> (Vec<ArgSite>, Vec<ReturnSite>) {
    let mut sites = Vec::new();
    let mut returns = Vec::new();
    for module in sources {
        let graph = CallGraph::new(module);
        for (f, def) in module.functions.iter().enumerate() {
            let calls: Vec<(Inst, &str)> = graph
                .references(f)
                .calls
                .iter()
                .filter_map(|&(inst, symbol)| {
                    let name = module.symbols.get(symbol as usize)?.name.as_str();
                    candidates.contains_key(name).then_some((inst, name))
                })
                .collect();
            let caller = module
                .symbols
                .get(def.symbol as usize)
                .map_or(String::new(), |s| s.name.clone());
            let returns_one = candidates.get(&caller).is_some_and(|&(_, one)| one);
            if calls.is_empty() && !returns_one {
                continue;
            }
            let known = CallerFacts::new(&def.func, &module.returns_nonnull, module, candidates);
            if returns_one {
                for block in def.func.layout.blocks() {
                    let Some(last) = def.func.layout.last_inst(block) else {
                        continue;
                    };
                    let fact = match def.func.dfg.insts[last] {
                        InstructionData::MultiAry {
                            opcode: Opcode::Return,
                            ..
                        } => match def.func.dfg.inst_args(last) {
                            [v] => known.argument(*v, last),
                            _ => ArgFact::Unknown,
                        },
                        InstructionData::Call {
                            opcode: Opcode::ReturnCall,
                            func_ref,
                            ..
                        } => known.call_result(func_ref),
                        ref data if data.opcode().is_return() => ArgFact::Unknown,
                        _ => continue,
                    };
                    returns.push(ReturnSite {
                        function: caller.clone(),
                        fact,
                    });
                }
            }
            for (inst, callee) in calls {
                let args = def.func.dfg.inst_args(inst);
                for (param, &arg) in args.iter().enumerate() {
                    sites.push(ArgSite {
                        callee: callee.to_string(),
                        param,
                        caller: caller.clone(),
                        fact: known.argument(arg, inst),
                    });
                }
            }
        }
    }
    (sites, returns)
}

/// What one caller knows of the values it passes.
struct CallerFacts<'a> {
    func: &'a Function,
    flow: ControlFlowGraph,
    domtree: DominatorTree,
    returns_nonnull: &'a BTreeSet<String>,
    module: &'a ClifModule,
    candidates: &'a BTreeMap<String, (usize, bool)>,
}

impl<'a> CallerFacts<'a> {
    fn new(
        func: &'a Function,
        returns_nonnull: &'a BTreeSet<String>,
        module: &'a ClifModule,
        candidates: &'a BTreeMap<String, (usize, bool)>,
    ) -> Self {
        let flow = ControlFlowGraph::with_function(func);
        let domtree = DominatorTree::with_function(func, &flow);
        CallerFacts {
            func,
            flow,
            domtree,
            returns_nonnull,
            module,
            candidates,
        }
    }

    /// What is known of the result of a direct call of `func_ref`.
    fn call_result(&self, func_ref: FuncRef) -> ArgFact {
        match callee_name(self.module, self.func, func_ref) {
            Some(name) if self.returns_nonnull.contains(name) => ArgFact::Known,
            Some(name) if self.candidates.get(name).is_some_and(|&(_, one)| one) => {
                ArgFact::ResultOf(name.to_string())
            }
            _ => ArgFact::Unknown,
        }
    }

    /// What is known of `arg` where `call` passes it (module doc).
    fn argument(&self, arg: Value, call: Inst) -> ArgFact {
        let dfg = &self.func.dfg;
        let arg = dfg.resolve_aliases(arg);
        if self.nonzero_by_definition(arg) {
            return ArgFact::Known;
        }
        if let Some(block) = self.func.layout.inst_block(call) {
            if self.tested_on_the_way(arg, block) {
                return ArgFact::Known;
            }
        }
        match dfg.value_def(arg) {
            ValueDef::Param(block, index) if Some(block) == self.func.layout.entry_block() => {
                ArgFact::PassesThrough(index)
            }
            ValueDef::Result(inst, 0) => match dfg.insts[inst] {
                InstructionData::Call {
                    opcode: Opcode::Call,
                    func_ref,
                    ..
                } => self.call_result(func_ref),
                _ => ArgFact::Unknown,
            },
            _ => ArgFact::Unknown,
        }
    }

    /// A non-zero constant, a stack slot's or a defined symbol's address,
    /// or the result of a callee that never returns null.
    fn nonzero_by_definition(&self, v: Value) -> bool {
        let dfg = &self.func.dfg;
        let ValueDef::Result(inst, 0) = dfg.value_def(v) else {
            return false;
        };
        match dfg.insts[inst] {
            InstructionData::UnaryImm {
                opcode: Opcode::Iconst,
                imm,
            } => imm.bits() != 0,
            InstructionData::StackAddr { .. } => true,
            InstructionData::UnaryGlobalValue {
                opcode: Opcode::SymbolValue,
                global_value,
            } => matches!(
                self.func.global_values[global_value],
                GlobalValueData::Symbol { colocated: true, offset, .. } if offset.bits() == 0
            ),
            InstructionData::FuncAddr { func_ref, .. } => dfg.ext_funcs[func_ref].colocated,
            InstructionData::Call { func_ref, .. } => callee_name(self.module, self.func, func_ref)
                .is_some_and(|name| self.returns_nonnull.contains(name)),
            _ => false,
        }
    }

    /// Whether a branch on the way to `block` (a dominator entered from
    /// one predecessor, on the edge where the branch says so) tested
    /// `v ≠ 0`.
    fn tested_on_the_way(&self, v: Value, block: Block) -> bool {
        let mut next = Some(block);
        for _ in 0..MAX_DOMINATOR_WALK {
            let Some(d) = next else { return false };
            if self.entered_knowing_nonzero(v, d) {
                return true;
            }
            next = self.domtree.idom(d);
        }
        false
    }

    /// Whether `d`'s one predecessor ends in a branch whose edge into `d`
    /// says `v ≠ 0`.
    fn entered_knowing_nonzero(&self, v: Value, d: Block) -> bool {
        let mut preds = self.flow.pred_iter(d);
        let (Some(pred), None) = (preds.next(), preds.next()) else {
            return false;
        };
        let dfg = &self.func.dfg;
        let InstructionData::Brif { arg, blocks, .. } = dfg.insts[pred.inst] else {
            return false;
        };
        let then_block = blocks[0].block(&dfg.value_lists);
        let else_block = blocks[1].block(&dfg.value_lists);
        if then_block == else_block {
            return false;
        }
        let on_true = then_block == d;
        let cond = dfg.resolve_aliases(arg);
        if cond == v {
            return on_true;
        }
        let ValueDef::Result(inst, 0) = dfg.value_def(cond) else {
            return false;
        };
        let (cc, x, y) = match dfg.insts[inst] {
            InstructionData::IntCompare { cond, args, .. } => (
                cond,
                dfg.resolve_aliases(args[0]),
                dfg.resolve_aliases(args[1]),
            ),
            _ => return false,
        };
        let zero = |w: Value| {
            matches!(dfg.value_def(w), ValueDef::Result(i, 0)
                if matches!(dfg.insts[i], InstructionData::UnaryImm { opcode: Opcode::Iconst, imm } if imm.bits() == 0))
        };
        let compares_v_with_zero = (x == v && zero(y)) || (y == v && zero(x));
        compares_v_with_zero
            && match cc {
                IntCC::NotEqual => on_true,
                IntCC::Equal => !on_true,
                _ => false,
            }
    }
}
