//! What a build knows of how often its code runs, as the size passes read
//! it.
//!
//! The size passes trade run time for bytes: the outliner puts a call and a
//! return around every replaced sequence, the mergers turn direct calls
//! into thunks and indirect calls and constants into parameters, and the
//! size inliner keeps calls a speed build would inline. On code that runs
//! often that trade is a bad one (LLVM issue #96830; LLVM's answer is the
//! profile-guided outlining modes of PR #154437). A [`HotCode`] says which
//! functions are known hot or known cold, and which call sites are known
//! hot; it comes from a profile (`parec build --profile-use`,
//! [`crate::profile`]). Where it says nothing — every function, in a build
//! without a profile — each pass falls back to the static estimate, loop
//! nesting ([`in_loop_blocks`] on CLIF, [`crate::machine::loops`] on machine code):
//! code inside a loop is taken as hot.
//!
//! # How the passes read it
//!
//! | pass    | known hot                          | known cold                 | unknown (static)                             |
//! |---------|------------------------------------|----------------------------|----------------------------------------------|
//! | outline | nothing outlined from the function | loops outlined too         | nothing from inside a loop                   |
//! | merge   | not merged                         | every callee a parameter   | as before (optional loop-callee rule, off)   |
//! | fmerge  | not a candidate                    | as before                  | as before                                    |
//! | inline  | sites in loops and hot sites inlined as at `-O2` | size policy only | sites in loops of small callees inlined |
//! | gvn     | no size guard                      | size guard                 | size guard                                   |
//!
//! The two profile modes of LLVM's outliner are decided where a
//! [`HotCode`] is made ([`crate::profile::hot_code`]), not here:
//! *conservative* (touch only code known cold) marks every function the
//! profile does not show cold as hot; *optimistic* (touch all code not
//! known hot) marks the hot ones hot and every other function it counted
//! cold. docs/DESIGN.md, "Hot code", has the measurements behind the
//! static rules.

use std::collections::{BTreeMap, BTreeSet};

use cranelift_codegen::dominator_tree::DominatorTree;
use cranelift_codegen::entity::SecondaryMap;
use cranelift_codegen::flowgraph::ControlFlowGraph;
use cranelift_codegen::ir::{self, Function};
use cranelift_codegen::loop_analysis::LoopAnalysis;

/// How often a function runs, as far as a profile knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Heat {
    /// Some of its code runs often: the size passes leave it alone.
    Hot,
    /// It never runs, or rarely: the size passes may do anything to it,
    /// loops included.
    Cold,
}

/// What the build knows of how often code runs (see the module doc). The
/// empty value knows nothing: every pass uses its static estimate.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HotCode {
    /// Functions by symbol name. Functions not named here (and those the
    /// passes create: merged bodies, outlined functions) are unknown.
    pub functions: BTreeMap<String, Heat>,
    /// Call sites known hot, by caller name: the call instructions
    /// (`ir::Inst::as_u32`) of the caller as the producer lowered it,
    /// before any pass; the inliner, which runs first, reads them.
    pub hot_sites: BTreeMap<String, BTreeSet<u32>>,
}

impl HotCode {
    /// What is known of the function `name`.
    pub fn heat(&self, name: &str) -> Option<Heat> {
        self.functions.get(name).copied()
    }

    /// Whether `name` is known hot.
    pub fn is_hot(&self, name: &str) -> bool {
        self.heat(name) == Some(Heat::Hot)
    }

    /// Whether `name` is known cold.
    pub fn is_cold(&self, name: &str) -> bool {
        self.heat(name) == Some(Heat::Cold)
    }

    /// Whether the call `site` of `caller` is known hot.
    pub fn is_hot_site(&self, caller: &str, site: ir::Inst) -> bool {
        self.hot_sites
            .get(caller)
            .is_some_and(|sites| sites.contains(&site.as_u32()))
    }

    /// Whether nothing is known (a build without a profile).
    pub fn is_empty(&self) -> bool {
        self.functions.is_empty() && self.hot_sites.is_empty()
    }
}

/// The static estimate on CLIF: `in_loop[block]` says the block is inside
/// some loop of `func` (Cranelift's loop analysis: natural loops of the
/// dominator tree's back edges).
pub fn in_loop_blocks(func: &Function) -> SecondaryMap<ir::Block, bool> {
    let cfg = ControlFlowGraph::with_function(func);
    let domtree = DominatorTree::with_function(func, &cfg);
    let mut loops = LoopAnalysis::new();
    loops.compute(func, &cfg, &domtree);
    let mut in_loop = SecondaryMap::new();
    for block in func.layout.blocks() {
        in_loop[block] = loops.innermost_loop(block).is_some();
    }
    in_loop
}

/// Whether instruction `inst` of `func` lies inside a loop, given
/// [`in_loop_blocks`].
pub fn inst_in_loop(
    func: &Function,
    in_loop: &SecondaryMap<ir::Block, bool>,
    inst: ir::Inst,
) -> bool {
    func.layout.inst_block(inst).is_some_and(|b| in_loop[b])
}

#[cfg(test)]
mod tests {
    use super::*;
    use cranelift_reader::parse_functions;

    #[test]
    fn loop_blocks_are_found() {
        let func = &parse_functions(
            "function %f(i64) -> i64 {
             block0(v0: i64):
                 jump block1(v0)
             block1(v1: i64):
                 v2 = iconst.i64 1
                 v3 = isub v1, v2
                 brif v3, block1(v3), block2
             block2:
                 return v1
             }",
        )
        .unwrap()[0];
        let in_loop = in_loop_blocks(func);
        let blocks: Vec<bool> = func.layout.blocks().map(|b| in_loop[b]).collect();
        assert_eq!(blocks, [false, true, false]);
    }

    #[test]
    fn unknown_functions_know_nothing() {
        let mut hot = HotCode::default();
        assert!(hot.is_empty());
        hot.functions.insert("f".into(), Heat::Hot);
        hot.functions.insert("g".into(), Heat::Cold);
        hot.hot_sites.entry("f".into()).or_default().insert(3);
        assert!(hot.is_hot("f") && !hot.is_cold("f"));
        assert!(hot.is_cold("g") && !hot.is_hot("g"));
        assert_eq!(hot.heat("h"), None);
        assert!(hot.is_hot_site("f", ir::Inst::from_u32(3)));
        assert!(!hot.is_hot_site("f", ir::Inst::from_u32(4)));
        assert!(!hot.is_hot_site("g", ir::Inst::from_u32(3)));
    }
}
