//! Loops of a lifted function, on its control-flow graph ([`super::cfg`]).
//!
//! # Notation
//!
//! - A **back edge** is an edge `t → h` of the block graph whose target `h`
//!   dominates its source `t`; `h` is a loop **header** and `t` a latch.
//! - The **natural loop** of a header `h` is `h` and every block that
//!   reaches a latch of `h` without passing through `h` (all back edges to
//!   one header make one loop).
//! - A **retreating** edge goes to an ancestor of its source in the
//!   depth-first tree; in a reducible graph every retreating edge is a back
//!   edge. One that is not (an irreducible cycle, entered at two places)
//!   makes its strongly connected component a loop with the edge's target
//!   as header: every block of a cycle is in some loop.
//! - The **depth** of a block is the number of loops it is in.
//!
//! # Algorithm
//!
//! Dominators and reverse postorder come from [`super::cfg::Cfg`]; the
//! natural loops are the standard construction (Aho, Lam, Sethi and Ullman,
//! *Compilers*, 2nd ed., §9.6.6), as Cranelift's own `LoopAnalysis` builds
//! them on CLIF. Blocks are what matter, not addresses: Cranelift lays a
//! loop's body out after the code that follows the loop (the exit is the
//! fall-through of the header's test, the body a branch away), so the items
//! between a loop's header and its latch are not the loop.
//!
//! # Guarantees
//!
//! Every instruction that lies on a cycle of the graph — a loop closed by a
//! branch or through a jump table, reducible or not — is marked; nothing
//! else is. Code a loop calls is not part of it (a call falls through).
//!
//! # Cost
//!
//! The dominators, plus one backward walk per header over the blocks of its
//! loop (linear in the loop's size), plus, only for irreducible graphs, one
//! strongly-connected-component search (linear in the graph).

use super::cfg::{dominates, Cfg};
use super::lift::LiftedFunction;

/// One loop: its header and blocks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loop {
    pub header: usize,
    /// The blocks of the loop, ascending (the header included).
    pub blocks: Vec<usize>,
}

/// The loops of a function's block graph.
#[derive(Clone, Debug, Default)]
pub struct Loops {
    /// One per header, in header order.
    pub loops: Vec<Loop>,
    /// The number of loops each block is in.
    pub depth: Vec<u32>,
}

impl Loops {
    /// The loops of `cfg` (module doc).
    pub fn new(cfg: &Cfg) -> Loops {
        let n = cfg.blocks.len();
        let idom = cfg.dominators();
        let mut latches: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut irreducible: Vec<(usize, usize)> = Vec::new();
        for (t, h) in retreating_edges(cfg) {
            if dominates(&idom, h, t) {
                latches[h].push(t);
            } else {
                irreducible.push((t, h));
            }
        }
        let mut loops: Vec<Loop> = (0..n)
            .filter(|&h| !latches[h].is_empty())
            .map(|h| Loop {
                header: h,
                blocks: natural_loop(cfg, h, &latches[h]),
            })
            .collect();
        if !irreducible.is_empty() {
            let component = strongly_connected_components(cfg);
            for (t, h) in irreducible {
                let c = component[t];
                let blocks: Vec<usize> = (0..n).filter(|&b| component[b] == c).collect();
                if !loops.iter().any(|l| l.header == h && l.blocks == blocks) {
                    loops.push(Loop { header: h, blocks });
                }
            }
            loops.sort_by_key(|l| l.header);
        }
        let mut depth = vec![0; n];
        for l in &loops {
            for &b in &l.blocks {
                depth[b] += 1;
            }
        }
        Loops { loops, depth }
    }
}

/// The edges `t → h` of `cfg` to an ancestor on a depth-first search from
/// the entry (self-loops included), then from every block it did not reach
/// (code reached only from outside, such as a landing pad: its cycles are
/// loops too, though no dominator proves them).
fn retreating_edges(cfg: &Cfg) -> Vec<(usize, usize)> {
    let n = cfg.blocks.len();
    let mut edges = Vec::new();
    let mut on_stack = vec![false; n];
    let mut visited = vec![false; n];
    for root in 0..n {
        if visited[root] {
            continue;
        }
        let mut stack = vec![(root, 0usize)];
        visited[root] = true;
        on_stack[root] = true;
        while let Some(&mut (b, ref mut next)) = stack.last_mut() {
            if let Some(&s) = cfg.succs[b].get(*next) {
                *next += 1;
                if on_stack[s] {
                    edges.push((b, s));
                } else if !visited[s] {
                    visited[s] = true;
                    on_stack[s] = true;
                    stack.push((s, 0));
                }
            } else {
                on_stack[b] = false;
                stack.pop();
            }
        }
    }
    edges
}

/// The natural loop of header `h` with back edges from `latches`: the
/// blocks reaching a latch without passing `h`, ascending.
fn natural_loop(cfg: &Cfg, h: usize, latches: &[usize]) -> Vec<usize> {
    let mut inside = vec![false; cfg.blocks.len()];
    inside[h] = true;
    let mut work: Vec<usize> = Vec::new();
    for &t in latches {
        if !inside[t] {
            inside[t] = true;
            work.push(t);
        }
    }
    while let Some(b) = work.pop() {
        for &p in &cfg.preds[b] {
            if !inside[p] {
                inside[p] = true;
                work.push(p);
            }
        }
    }
    (0..cfg.blocks.len()).filter(|&b| inside[b]).collect()
}

/// The strongly connected component of every block (Tarjan's algorithm,
/// iterative), as an arbitrary component number.
fn strongly_connected_components(cfg: &Cfg) -> Vec<usize> {
    let n = cfg.blocks.len();
    const NONE: usize = usize::MAX;
    let mut index = vec![NONE; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut component = vec![NONE; n];
    let mut stack: Vec<usize> = Vec::new();
    let mut next_index = 0;
    let mut components = 0;
    for root in 0..n {
        if index[root] != NONE {
            continue;
        }
        let mut calls = vec![(root, 0usize)];
        index[root] = next_index;
        low[root] = next_index;
        next_index += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&mut (b, ref mut next)) = calls.last_mut() {
            if let Some(&s) = cfg.succs[b].get(*next) {
                *next += 1;
                if index[s] == NONE {
                    index[s] = next_index;
                    low[s] = next_index;
                    next_index += 1;
                    stack.push(s);
                    on_stack[s] = true;
                    calls.push((s, 0));
                } else if on_stack[s] {
                    low[b] = low[b].min(index[s]);
                }
                continue;
            }
            calls.pop();
            if let Some(&(parent, _)) = calls.last() {
                low[parent] = low[parent].min(low[b]);
            }
            if low[b] == index[b] {
                while let Some(m) = stack.pop() {
                    on_stack[m] = false;
                    component[m] = components;
                    if m == b {
                        break;
                    }
                }
                components += 1;
            }
        }
    }
    component
}

/// `hot[i]`: item `i` of `func` is an instruction inside some loop.
pub fn loop_items(func: &LiftedFunction) -> Vec<bool> {
    let cfg = Cfg::new(func);
    let loops = Loops::new(&cfg);
    cfg.block_of
        .iter()
        .map(|b| b.is_some_and(|b| loops.depth[b] > 0))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::lift::lift_forms;
    use crate::machine::testing::function;

    const RET: u32 = 0xD65F_03C0;

    /// Cranelift's layout of `i = 0; while i < 3 { i += 1 }; return x0 + x1`:
    /// header, exit, then the body with its branch back.
    const LOOP_FIRST: [u32; 7] = [
        0xD280_0002, // 0x00 mov x2, #0
        0xF100_0C5F, // 0x04 cmp x2, #3         (header)
        0x5400_0063, // 0x08 b.lo 0x14
        0x8B01_0000, // 0x0c add x0, x0, x1     (exit)
        RET,         // 0x10
        0x9100_0442, // 0x14 add x2, x2, #1     (body)
        0x17FF_FFFB, // 0x18 b 0x04
    ];

    #[test]
    fn the_exit_between_header_and_latch_is_not_in_the_loop() {
        let func = lift_forms(&function(&LOOP_FIRST));
        assert!(func.opaque.is_none());
        let cfg = Cfg::new(&func);
        assert_eq!(cfg.blocks, vec![0..1, 1..3, 3..5, 5..7]);
        assert_eq!(cfg.succs, vec![vec![1], vec![2, 3], vec![], vec![1]]);
        assert_eq!(cfg.dominators(), vec![Some(0), Some(0), Some(1), Some(1)]);
        let loops = Loops::new(&cfg);
        assert_eq!(
            loops.loops,
            vec![Loop {
                header: 1,
                blocks: vec![1, 3]
            }]
        );
        assert_eq!(
            loop_items(&func),
            vec![false, true, true, false, false, true, true]
        );
    }

    #[test]
    fn nested_loops_have_depths() {
        // for i { for j { } }: outer header 0x04, inner header 0x0c.
        let words = [
            0xD280_0002, // 0x00 mov x2, #0
            0xF100_0C5F, // 0x04 cmp x2, #3      outer header
            0x5400_0062, // 0x08 b.hs 0x14 (exit)
            0xB500_0003, // 0x0c cbnz x3, 0x0c   inner loop: itself
            0x17FF_FFFD, // 0x10 b 0x04          outer latch
            RET,         // 0x14
        ];
        let func = lift_forms(&function(&words));
        let cfg = Cfg::new(&func);
        let loops = Loops::new(&cfg);
        let depth: Vec<u32> = (0..words.len())
            .map(|i| cfg.block_of[i].map_or(0, |b| loops.depth[b]))
            .collect();
        assert_eq!(depth, vec![0, 1, 1, 2, 1, 0]);
    }

    #[test]
    fn an_irreducible_cycle_is_a_loop() {
        // Entered at A (fall-through) and at B (the cbz): no header
        // dominates the other block.
        let words = [
            0xB400_0040, // 0x00 cbz x0, 0x08
            0x9100_0421, // 0x04 add x1, x1, #1  A
            0xB5FF_FFE1, // 0x08 cbnz x1, 0x04   B
            RET,         // 0x0c
        ];
        let func = lift_forms(&function(&words));
        assert_eq!(loop_items(&func), vec![false, true, true, false]);
    }

    #[test]
    fn straight_code_and_forward_branches_have_no_loops() {
        let words = [
            0xB400_0040, // 0x00 cbz x0, 0x08
            0x9100_0421, // 0x04 add x1, x1, #1
            RET,         // 0x08
        ];
        let func = lift_forms(&function(&words));
        assert_eq!(loop_items(&func), vec![false; 3]);
    }
}
