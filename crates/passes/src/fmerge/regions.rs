//! Region-level dispatch: where two functions differ only inside
//! single-entry single-exit regions, the merged function tests the
//! identifier once, at the region's entry, and runs the whole region of
//! its side, instead of testing it at every instruction where the two
//! differ.
//!
//! # Why
//!
//! [SALSSA] (Rocha et al., *Effective Function Merging in the SSA Form*,
//! PLDI 2020) and [HYFM] (Rocha et al., *HyFM: Function Merging for Free*,
//! LCTES 2021; full references in docs/DESIGN.md) generate code per
//! aligned instruction: a matched pair is emitted once, each maximal run
//! of unmatched instructions under its own branch on the identifier, and
//! a branch whose targets differ through a dispatch block. That is the
//! smallest merge when the two functions share most of their code at the
//! instruction level. It is the wrong one for two instances of a generic
//! loop that differ in the callee each inlined (`map<clamp>` and
//! `map<twice3>`): HyFM's greedy block pairing (by opcode frequencies)
//! pairs the blocks of the two callee bodies, and of the loop around
//! them, crosswise wherever their opcodes happen to agree, and the merged
//! loop tests the identifier at every block and run where they then
//! differ — seven tests per iteration with moves between them, 32 bytes
//! more than the two functions apart, and slower. Both papers note that
//! merged functions run the identifier's branches; neither chooses the
//! unit of dispatch.
//!
//! # Notation and definitions
//!
//! On each side, the *graph* is the function's reachable blocks minus the
//! *sinks* (blocks that end in `trap`: check failures, which never return
//! and which both sides may share), with an edge for every branch
//! destination that is not a sink and an edge to a virtual exit `X` from
//! every block that returns. `d dom b` and `p pdom b` are dominance and
//! post-dominance in that graph. Two blocks are *exact* when their
//! instructions align completely (Needleman–Wunsch on the keys of
//! [`super::align`], every body instruction matched and the terminators
//! too; operands may differ, which costs a `select`). A *forwarding*
//! block holds nothing but a `jump`.
//!
//! A *region* `(d, p)` of one side is `R = {b : d dom b, p pdom b, b ≠ p}`
//! when every edge entering `R` enters at `d` and every edge leaving `R`
//! goes to `p` (edges to sinks aside): single entry, single exit.
//!
//! # Algorithm: the skeleton walk
//!
//! The two functions are walked in lockstep from their entries, pairing
//! blocks as the *skeleton* the two share:
//!
//! 1. A pair `(b0, b1)` taken from the worklist that is exact is paired,
//!    and the pairs of their destinations at each position join the
//!    worklist.
//! 2. A pair that is not exact starts a region on each side. Its exits
//!    `(p0, p1)` are the first pair, along the post-dominator chains of
//!    `b0` and `b1` (in order of the summed distance), that is exact, is
//!    not forwarding (the two sides' chains of forwarding blocks differ in
//!    length) and makes `(b0, p0)` and `(b1, p1)` regions — or `(X, X)`:
//!    the rest of both functions. The regions' blocks stay unpaired, to be
//!    copied whole; `(p0, p1)` joins the worklist.
//! 3. A pair whose blocks are already paired with each other, or are the
//!    entries of one region pair, is done; any other conflict (a block
//!    paired or in a region with another partner) ends the walk without a
//!    plan.
//! 4. Sinks are paired when exact; other blocks the walk does not reach
//!    lie inside regions or only behind sinks.
//!
//! The plan stands if it has a region and the skeleton matches some
//! instructions. Code generation ([`super::codegen`]) then needs nothing
//! new: skeleton pairs are exact, so each is emitted once; the matched
//! branch into a region has different destinations on the two sides, so
//! it becomes one dispatch block `brif fid, d1, d0`; each side's region is
//! copied as that side's own blocks, and both leave to the block of `M`
//! standing for the exits' pair, where SSA construction joins what each
//! computed (the values a region passes on are private to its side and
//! share one variable with the other side's, `codegen`'s unification). The
//! merged function records which dispatches enter regions
//! ([`super::codegen::FidTests`]), so the pass can tell them from
//! instruction-level tests: `-Os` allows only the former inside loops
//! (and only regions of some size there,
//! [`super::FmergeOptions::region_min_insts_in_loop`]), and with a profile
//! a merge of hot functions only the former anywhere.
//!
//! # Where this differs from the papers
//!
//! SalSSA and HyFM choose the dispatch per instruction (SalSSA's label
//! and operand selection; HyFM's block pairing by opcode frequencies, with
//! SalSSA's code generator inside pairs). Here the block pairing of the
//! region form follows the control-flow structure instead (the skeleton
//! walk), the unit of dispatch is a single-entry single-exit region, and
//! the pass builds both forms — HyFM's and this one — and keeps the
//! smaller by the cost model ([`super::profit`]) among those its rules
//! allow. A region gives up the sharing of instructions that happen to
//! match inside it, which the model prices.
//!
//! # Cost
//!
//! Dominators and post-dominators per side (Cooper, Harvey and Kennedy's
//! iterative algorithm, near-linear on reducible graphs); each block pair
//! of the walk is aligned once (`O(n·m)` in its instructions); each region
//! tries at most [`MAX_CHAIN`]² exit pairs, each an alignment and an
//! `O(B·h)` region check for `B` blocks and dominator-tree height `h`.
//! Functions of more than [`MAX_BLOCKS`] blocks are left to
//! instruction-level dispatch.

use std::collections::{BTreeSet, VecDeque};

use cranelift_codegen::entity::SecondaryMap;
use cranelift_codegen::ir::{Block, Function, InstructionData, Opcode};

use super::align::{align_blocks, AlignMode, Alignment, BlockAlignment, FuncView, Step};

/// Functions with more blocks are not planned by region.
pub const MAX_BLOCKS: usize = 512;

/// How far down the post-dominator chains of a region's entries its exits
/// are looked for.
pub const MAX_CHAIN: usize = 16;

/// No node (a dominator that does not exist).
const NONE: usize = usize::MAX;

/// The regions of a merge, as code generation needs them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RegionPlan {
    /// Per side, the entry block of every region (pair `i` is
    /// `entries[0][i]`, `entries[1][i]`).
    pub entries: [Vec<Block>; 2],
    /// Per side, the blocks copied as that side's own (every region).
    pub blocks: [BTreeSet<Block>; 2],
}

impl RegionPlan {
    /// Whether `block` of side `side` is the entry of a region.
    pub fn is_entry(&self, side: usize, block: Block) -> bool {
        self.entries[side].contains(&block)
    }

    /// How many regions the plan dispatches to.
    pub fn len(&self) -> usize {
        self.entries[0].len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries[0].is_empty()
    }
}

/// The skeleton walk (see the module doc): the alignment of the skeleton
/// (region blocks unpaired) and the regions; `None` when the functions do
/// not differ only inside regions, or do not differ.
pub fn plan(views: [&FuncView; 2], mode: AlignMode) -> Option<(Alignment, RegionPlan)> {
    if views.iter().any(|v| v.blocks.len() > MAX_BLOCKS) {
        return None;
    }
    let graphs = [Graph::new(views[0].func)?, Graph::new(views[1].func)?];
    let mut walk = Walk {
        views,
        graphs: &graphs,
        mode,
        alignment: Alignment {
            partner: [SecondaryMap::new(), SecondaryMap::new()],
            blocks: SecondaryMap::new(),
            matched: 0,
        },
        in_region: [SecondaryMap::new(), SecondaryMap::new()],
        plan: RegionPlan::default(),
    };
    let entries = [0, 1].map(|k| views[k].func.layout.entry_block());
    let mut worklist = VecDeque::from([(entries[0]?, entries[1]?)]);
    while let Some(pair) = worklist.pop_front() {
        walk.step(pair, &mut worklist)?;
    }
    let alignment = walk.alignment;
    (!walk.plan.is_empty() && alignment.matched > 0).then_some((alignment, walk.plan))
}

/// The state of the skeleton walk.
struct Walk<'a> {
    views: [&'a FuncView<'a>; 2],
    graphs: &'a [Graph; 2],
    mode: AlignMode,
    alignment: Alignment,
    /// Per side, the blocks in a region.
    in_region: [SecondaryMap<Block, bool>; 2],
    plan: RegionPlan,
}

impl Walk<'_> {
    /// Steps 1–4 for one pair; `None` on a conflict.
    fn step(
        &mut self,
        (b0, b1): (Block, Block),
        worklist: &mut VecDeque<(Block, Block)>,
    ) -> Option<()> {
        let paired = [self.alignment.partner[0][b0], self.alignment.partner[1][b1]];
        if paired == [Some(b1), Some(b0)] {
            return Some(());
        }
        if let Some(i) = self.plan.entries[0].iter().position(|&e| e == b0) {
            return (self.plan.entries[1][i] == b1).then_some(());
        }
        if paired.iter().any(Option::is_some) || self.in_region[0][b0] || self.in_region[1][b1] {
            return None;
        }
        let sinks = [self.graphs[0].sink[b0], self.graphs[1].sink[b1]];
        if let Some(aligned) = self.exact(b0, b1) {
            self.pair(b0, b1, aligned);
            if sinks == [false, false] {
                let dests = [0, 1].map(|k| destinations(self.views[k].func, [b0, b1][k]));
                worklist.extend(dests[0].iter().copied().zip(dests[1].iter().copied()));
            }
            return Some(());
        }
        if sinks.contains(&true) {
            // Different check failures: the branch dispatches per
            // instruction, as SalSSA's code generation does.
            return Some(());
        }
        let RegionPair { exits, nodes } = self.find_exits(b0, b1)?;
        for k in 0..2 {
            let graph = &self.graphs[k];
            let blocks: Vec<Block> = nodes[k].iter().map(|&n| graph.blocks[n]).collect();
            if blocks
                .iter()
                .any(|&b| self.in_region[k][b] || self.alignment.partner[k][b].is_some())
            {
                return None;
            }
            for &b in &blocks {
                self.in_region[k][b] = true;
            }
            self.plan.entries[k].push([b0, b1][k]);
            self.plan.blocks[k].extend(blocks);
        }
        if let [Some(p0), Some(p1)] = exits {
            worklist.push_back((p0, p1));
        }
        Some(())
    }

    /// The alignment of `b0` and `b1` if they are exact.
    fn exact(&self, b0: Block, b1: Block) -> Option<BlockAlignment> {
        let aligned = align_blocks(self.views[0], b0, self.views[1], b1, self.mode);
        let all = aligned.steps.iter().all(|s| matches!(s, Step::Both(..)));
        (all && aligned.terminators_match).then_some(aligned)
    }

    fn pair(&mut self, b0: Block, b1: Block, aligned: BlockAlignment) {
        self.alignment.matched += aligned.matched();
        self.alignment.partner[0][b0] = Some(b1);
        self.alignment.partner[1][b1] = Some(b0);
        self.alignment.blocks[b0] = Some(aligned);
    }

    /// The regions starting at `b0` and `b1` (step 2).
    fn find_exits(&self, b0: Block, b1: Block) -> Option<RegionPair> {
        let graphs = self.graphs;
        let entries = [graphs[0].node(b0)?, graphs[1].node(b1)?];
        let chains = [0, 1].map(|k| graphs[k].post_dominator_chain(entries[k]));
        let mut candidates: Vec<(usize, usize)> = (0..chains[0].len())
            .flat_map(|i| (0..chains[1].len()).map(move |j| (i, j)))
            .collect();
        candidates.sort_by_key(|&(i, j)| (i + j, i));
        for (i, j) in candidates {
            let exits = [chains[0][i], chains[1][j]];
            let virtual_exits = [exits[0] == graphs[0].exit(), exits[1] == graphs[1].exit()];
            let blocks = [0, 1].map(|k| (!virtual_exits[k]).then(|| graphs[k].blocks[exits[k]]));
            match (virtual_exits, blocks) {
                ([true, true], _) => {}
                ([false, false], [Some(p0), Some(p1)]) => {
                    let forwarding =
                        is_forwarding(self.views[0], p0) || is_forwarding(self.views[1], p1);
                    if forwarding || self.exact(p0, p1).is_none() {
                        continue;
                    }
                }
                _ => continue,
            }
            let regions = [0, 1].map(|k| graphs[k].region(entries[k], exits[k]));
            if let [Some(r0), Some(r1)] = regions {
                return Some(RegionPair {
                    exits: blocks,
                    nodes: [r0, r1],
                });
            }
        }
        None
    }
}

/// Corresponding regions of the two sides, found by
/// [`Walk::find_exits`].
struct RegionPair {
    /// Each side's exit block (`None`: the virtual exit).
    exits: [Option<Block>; 2],
    /// Each side's region, by node of its [`Graph`].
    nodes: [BTreeSet<usize>; 2],
}

/// One side's control-flow graph without sinks (see the module doc).
struct Graph {
    /// Node `i` is `blocks[i]`; node `blocks.len()` is the virtual exit.
    blocks: Vec<Block>,
    succs: Vec<Vec<usize>>,
    preds: Vec<Vec<usize>>,
    /// Whether a block ends in `trap` (a sink).
    sink: SecondaryMap<Block, bool>,
    idom: Vec<usize>,
    ipdom: Vec<usize>,
    /// Reverse post-order numbers from the entry and, on the reversed
    /// graph, from the exit (`NONE`: not reached).
    order: Vec<usize>,
    post_order: Vec<usize>,
}

impl Graph {
    fn new(func: &Function) -> Option<Graph> {
        let entry = func.layout.entry_block()?;
        let mut sink = SecondaryMap::new();
        for block in func.layout.blocks() {
            let last = func.layout.last_inst(block)?;
            sink[block] = func.dfg.insts[last].opcode() == Opcode::Trap;
        }
        if sink[entry] {
            return None;
        }
        // Reachable non-sink blocks, numbered in reverse post-order.
        let mut seen: SecondaryMap<Block, bool> = SecondaryMap::new();
        seen[entry] = true;
        let mut post: Vec<Block> = Vec::new();
        let mut stack: Vec<(Block, Vec<Block>)> = vec![(entry, destinations(func, entry))];
        while let Some((block, dests)) = stack.last_mut() {
            match dests.pop() {
                Some(succ) if !seen[succ] && !sink[succ] => {
                    seen[succ] = true;
                    stack.push((succ, destinations(func, succ)));
                }
                Some(_) => {}
                None => {
                    post.push(*block);
                    stack.pop();
                }
            }
        }
        post.reverse();
        let blocks = post;
        let n = blocks.len();
        let mut node: SecondaryMap<Block, Option<usize>> = SecondaryMap::new();
        for (i, &b) in blocks.iter().enumerate() {
            node[b] = Some(i);
        }
        let mut succs: Vec<Vec<usize>> = vec![Vec::new(); n + 1];
        let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n + 1];
        let mut edge = |from: usize, to: usize| {
            if !succs[from].contains(&to) {
                succs[from].push(to);
                preds[to].push(from);
            }
        };
        for (i, &b) in blocks.iter().enumerate() {
            let last = func.layout.last_inst(b)?;
            if func.dfg.insts[last].opcode().is_return() {
                edge(i, n);
            }
            for d in destinations(func, b) {
                if let Some(t) = node[d] {
                    edge(i, t);
                }
            }
        }
        // Dominators: the nodes are numbered in reverse post-order.
        let order: Vec<usize> = (0..=n).map(|i| if i < n { i } else { NONE }).collect();
        let idom = dominators(0, &(0..n).collect::<Vec<_>>(), &order, &preds);
        // Post-dominators: dominators of the reversed graph from the exit,
        // in its own reverse post-order.
        let mut visited = vec![false; n + 1];
        visited[n] = true;
        let mut rpo: Vec<usize> = Vec::new();
        let mut stack: Vec<(usize, usize)> = vec![(n, 0)];
        while let Some((v, next)) = stack.pop() {
            match preds[v].get(next) {
                Some(&w) => {
                    stack.push((v, next + 1));
                    if !visited[w] {
                        visited[w] = true;
                        stack.push((w, 0));
                    }
                }
                None => rpo.push(v),
            }
        }
        rpo.reverse();
        let mut post_order = vec![NONE; n + 1];
        for (i, &v) in rpo.iter().enumerate() {
            post_order[v] = i;
        }
        let ipdom = dominators(n, &rpo, &post_order, &succs);
        Some(Graph {
            blocks,
            succs,
            preds,
            sink,
            idom,
            ipdom,
            order,
            post_order,
        })
    }

    fn exit(&self) -> usize {
        self.blocks.len()
    }

    /// The node of `block`, if it is in the graph.
    fn node(&self, block: Block) -> Option<usize> {
        self.blocks.iter().position(|&b| b == block)
    }

    /// The strict post-dominators of `node`, nearest first, at most
    /// [`MAX_CHAIN`], ending with the virtual exit if it is that near.
    fn post_dominator_chain(&self, node: usize) -> Vec<usize> {
        let mut chain = Vec::new();
        let mut at = node;
        while chain.len() < MAX_CHAIN {
            match self.ipdom[at] {
                up if up == NONE || up == at => break,
                up => {
                    chain.push(up);
                    at = up;
                }
            }
        }
        chain
    }

    /// The region `(entry, exit)` (see the module doc), by node, if it is
    /// single-entry single-exit and not the whole function.
    fn region(&self, entry: usize, exit: usize) -> Option<BTreeSet<usize>> {
        let end = self.exit();
        if entry == 0 && exit == end {
            return None;
        }
        let nodes: BTreeSet<usize> = (0..end)
            .filter(|&b| {
                b != exit
                    && self.dominates(entry, b)
                    && (exit == end || self.post_dominates(exit, b))
            })
            .collect();
        let entered_elsewhere = nodes
            .iter()
            .any(|&b| b != entry && self.preds[b].iter().any(|p| !nodes.contains(p)));
        let left_elsewhere = nodes.iter().any(|&b| {
            self.succs[b]
                .iter()
                .any(|&t| t != exit && !nodes.contains(&t))
        });
        (!entered_elsewhere && !left_elsewhere).then_some(nodes)
    }

    /// Whether `a` dominates `b` (both nodes of the graph, not the exit).
    fn dominates(&self, a: usize, b: usize) -> bool {
        climbs_to(&self.idom, &self.order, a, b)
    }

    /// Whether `a` post-dominates `b`.
    fn post_dominates(&self, a: usize, b: usize) -> bool {
        climbs_to(&self.ipdom, &self.post_order, a, b)
    }
}

/// Whether climbing the tree `parent` from `b` reaches `a` (`number`
/// decreases towards the root).
fn climbs_to(parent: &[usize], number: &[usize], a: usize, mut b: usize) -> bool {
    if number[a] == NONE || number[b] == NONE {
        return false;
    }
    while number[b] > number[a] {
        let up = parent[b];
        if up == NONE || up == b {
            return false;
        }
        b = up;
    }
    a == b
}

/// Immediate dominators by Cooper, Harvey and Kennedy's iterative
/// algorithm: `nodes` in reverse post-order from `root` (whose number in
/// `number` is 0), `into[v]` the nodes with an edge into `v`. Nodes not
/// reached get `NONE`; the root is its own.
fn dominators(root: usize, nodes: &[usize], number: &[usize], into: &[Vec<usize>]) -> Vec<usize> {
    let mut idom = vec![NONE; number.len()];
    idom[root] = root;
    let intersect = |idom: &[usize], mut a: usize, mut b: usize| {
        while a != b {
            while number[a] > number[b] {
                a = idom[a];
            }
            while number[b] > number[a] {
                b = idom[b];
            }
        }
        a
    };
    let mut changed = true;
    while changed {
        changed = false;
        for &v in nodes {
            if v == root || number[v] == NONE {
                continue;
            }
            let mut new = NONE;
            for &p in &into[v] {
                if number[p] == NONE || idom[p] == NONE {
                    continue;
                }
                new = if new == NONE {
                    p
                } else {
                    intersect(&idom, p, new)
                };
            }
            if new != NONE && idom[v] != new {
                idom[v] = new;
                changed = true;
            }
        }
    }
    idom
}

/// The destinations of `block`'s terminator, in order.
fn destinations(func: &Function, block: Block) -> Vec<Block> {
    let Some(last) = func.layout.last_inst(block) else {
        return Vec::new();
    };
    func.dfg.insts[last]
        .branch_destination(&func.dfg.jump_tables, &func.dfg.exception_tables)
        .iter()
        .map(|call| call.block(&func.dfg.value_lists))
        .collect()
}

/// Whether `block` holds nothing but a `jump`.
fn is_forwarding(view: &FuncView, block: Block) -> bool {
    view.body[block].is_empty()
        && view.terminator[block]
            .is_some_and(|t| matches!(view.func.dfg.insts[t], InstructionData::Jump { .. }))
        && view.func.layout.block_insts(block).count() == 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use cranelift_reader::parse_functions;

    fn graph(text: &str) -> (Function, Graph) {
        let func = parse_functions(text).unwrap().remove(0);
        let graph = Graph::new(&func).unwrap();
        (func, graph)
    }

    const DIAMOND_IN_LOOP: &str = "function %f(i64) -> i64 {
        block0(v0: i64):
            jump block1(v0)
        block1(v1: i64):
            brif v1, block2, block6
        block2:
            brif v1, block3, block4
        block3:
            jump block5
        block4:
            jump block5
        block5:
            v2 = iconst.i64 1
            v3 = isub v1, v2
            jump block1(v3)
        block6:
            brif v1, block7, block8
        block7:
            return v1
        block8 cold:
            trap user1
        }";

    #[test]
    fn dominators_and_post_dominators() {
        let (func, g) = graph(DIAMOND_IN_LOOP);
        let node = |n: u32| g.node(Block::from_u32(n)).unwrap();
        assert!(g.dominates(node(2), node(5)));
        assert!(!g.dominates(node(3), node(5)));
        assert!(g.post_dominates(node(5), node(2)));
        assert!(g.post_dominates(node(1), node(5)));
        assert!(!g.post_dominates(node(3), node(2)));
        // The trap block is a sink: not in the graph.
        assert_eq!(g.node(Block::from_u32(8)), None);
        assert_eq!(g.blocks.len() + 1, func.layout.blocks().count());
        assert_eq!(
            g.post_dominator_chain(node(3)),
            [node(5), node(1), node(6), node(7), g.exit()]
        );
    }

    #[test]
    fn regions_are_single_entry_single_exit() {
        let (_, g) = graph(DIAMOND_IN_LOOP);
        let node = |n: u32| g.node(Block::from_u32(n)).unwrap();
        let blocks = |r: BTreeSet<usize>| -> BTreeSet<u32> {
            r.iter().map(|&n| g.blocks[n].as_u32()).collect()
        };
        // An arm of the diamond; the diamond; the loop.
        assert_eq!(
            blocks(g.region(node(3), node(5)).unwrap()),
            BTreeSet::from([3])
        );
        assert_eq!(
            blocks(g.region(node(2), node(5)).unwrap()),
            BTreeSet::from([2, 3, 4])
        );
        assert_eq!(
            blocks(g.region(node(1), node(6)).unwrap()),
            BTreeSet::from([1, 2, 3, 4, 5])
        );
        // The diamond's join is entered from both arms: no region starts
        // at one arm and ends past the join inside the loop.
        assert_eq!(g.region(node(3), node(1)), None);
        // Entry to exit: the whole function is no region.
        assert_eq!(g.region(node(0), g.exit()), None);
        assert_eq!(
            blocks(g.region(node(6), g.exit()).unwrap()),
            BTreeSet::from([6, 7])
        );
    }
}
