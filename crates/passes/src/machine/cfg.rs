//! The control-flow graph of a lifted function: successors per item, basic
//! blocks, reverse postorder and dominators.
//!
//! # Notation
//!
//! - The **successors** of an instruction item are the items control may
//!   reach next inside the function: the next item (unless the instruction
//!   ends the flow), the target of an intra-function branch, the targets of
//!   the jump-table entries after a table's `br`. Returns, tail calls,
//!   `udf` and relocated branches leave the function: no successor. Calls
//!   fall through. Data items have no successors.
//! - A **block** is a maximal run of instruction items that control enters
//!   only at the first and leaves only at the last: it starts at the entry,
//!   at every item an instruction or a jump table refers to, and after every
//!   instruction with a successor other than the next item (or none).
//! - Block `d` **dominates** block `b` if every path from the entry to `b`
//!   passes through `d`; `idom(b)` is the closest strict dominator.
//!
//! # Algorithm
//!
//! Blocks come from one walk over the items. Dominators are computed by the
//! iterative algorithm of Cooper, Harvey and Kennedy ([CHK 2001]) over the
//! reverse postorder of a depth-first search from the entry; blocks the
//! search does not reach have no dominator.
//!
//! # Cost
//!
//! Linear in the items for the successors and blocks; the dominator
//! iteration is `O(blocks × edges)` at worst and a couple of passes over
//! the edges for the reducible graphs Cranelift emits.
//!
//! # References
//!
//! - [CHK 2001] Keith D. Cooper, Timothy J. Harvey and Ken Kennedy. *A
//!   Simple, Fast Dominance Algorithm.* Software Practice and Experience
//!   4:1–10, 2001. (`docs/DESIGN.md`, "References": \[CHK01\].)
//!
//! [CHK 2001]: #references

use std::collections::BTreeMap;
use std::ops::Range;

use super::decode::Form;
use super::lift::{Item, Label, LiftedFunction};

/// The successors of item `i`, as item indices.
fn successors(func: &LiftedFunction, index_of: &BTreeMap<Label, usize>, i: usize) -> Vec<usize> {
    let Item::Inst(inst) = &func.items[i].1 else {
        return Vec::new();
    };
    let next = || {
        (i + 1 < func.items.len() && matches!(func.items[i + 1].1, Item::Inst(_))).then_some(i + 1)
    };
    let target = || inst.target.and_then(|t| index_of.get(&t).copied());
    match inst.form {
        Form::B if inst.reloc.is_none() => target().into_iter().collect(),
        Form::Br { .. } if inst.jump_table => func.items[i + 1..]
            .iter()
            .map_while(|(_, item)| match item {
                Item::JumpEntry { target, .. } => index_of.get(target).copied(),
                _ => None,
            })
            .collect(),
        Form::BCond | Form::Cbz | Form::Tbz => next().into_iter().chain(target()).collect(),
        form if form.ends_flow() => Vec::new(),
        _ => next().into_iter().collect(),
    }
}

/// The successors of every item, as item indices (data items: none).
pub fn successor_lists(func: &LiftedFunction) -> Vec<Vec<usize>> {
    let index_of: BTreeMap<Label, usize> = func
        .items
        .iter()
        .enumerate()
        .map(|(i, (l, _))| (*l, i))
        .collect();
    (0..func.items.len())
        .map(|i| successors(func, &index_of, i))
        .collect()
}

/// The basic blocks of a lifted function and their edges.
#[derive(Clone, Debug, Default)]
pub struct Cfg {
    /// The blocks in layout order, as item ranges (instructions only).
    pub blocks: Vec<Range<usize>>,
    /// Successor blocks of each block, without repeats.
    pub succs: Vec<Vec<usize>>,
    /// Predecessor blocks of each block, without repeats.
    pub preds: Vec<Vec<usize>>,
    /// The block of every item (`None`: data, jump-table entries).
    pub block_of: Vec<Option<usize>>,
}

impl Cfg {
    /// The blocks of `func` (module doc); the entry is block 0 when the
    /// function starts with an instruction.
    pub fn new(func: &LiftedFunction) -> Cfg {
        Cfg::with_successors(func, &successor_lists(func))
    }

    /// [`Cfg::new`] given the item successors of `func` ([`successor_lists`]).
    pub fn with_successors(func: &LiftedFunction, succs: &[Vec<usize>]) -> Cfg {
        let n = func.items.len();
        let mut leader = vec![false; n];
        let targeted = func.targeted_labels();
        for (i, (label, item)) in func.items.iter().enumerate() {
            let Item::Inst(_) = item else { continue };
            let after_other = i == 0 || !matches!(func.items[i - 1].1, Item::Inst(_));
            let after_branch = i > 0 && succs[i - 1] != [i];
            leader[i] = after_other || after_branch || targeted.contains(label);
        }
        let mut cfg = Cfg {
            block_of: vec![None; n],
            ..Cfg::default()
        };
        for (i, (_, item)) in func.items.iter().enumerate() {
            if !matches!(item, Item::Inst(_)) {
                continue;
            }
            if leader[i] {
                cfg.blocks.push(i..i + 1);
            } else if let Some(last) = cfg.blocks.last_mut() {
                last.end = i + 1;
            }
            cfg.block_of[i] = Some(cfg.blocks.len() - 1);
        }
        cfg.succs = vec![Vec::new(); cfg.blocks.len()];
        cfg.preds = vec![Vec::new(); cfg.blocks.len()];
        for b in 0..cfg.blocks.len() {
            let last = cfg.blocks[b].end - 1;
            for &s in &succs[last] {
                let Some(t) = cfg.block_of[s] else { continue };
                if !cfg.succs[b].contains(&t) {
                    cfg.succs[b].push(t);
                    cfg.preds[t].push(b);
                }
            }
        }
        cfg
    }

    /// The blocks reachable from the entry, in reverse postorder of a
    /// depth-first search (successors in their listed order).
    pub fn reverse_postorder(&self) -> Vec<usize> {
        if self.blocks.is_empty() {
            return Vec::new();
        }
        let mut visited = vec![false; self.blocks.len()];
        let mut post = Vec::with_capacity(self.blocks.len());
        // (block, next successor to visit)
        let mut stack = vec![(0usize, 0usize)];
        visited[0] = true;
        while let Some(&mut (b, ref mut next)) = stack.last_mut() {
            if let Some(&s) = self.succs[b].get(*next) {
                *next += 1;
                if !visited[s] {
                    visited[s] = true;
                    stack.push((s, 0));
                }
            } else {
                post.push(b);
                stack.pop();
            }
        }
        post.reverse();
        post
    }

    /// The immediate dominator of every block (`idom[0] = Some(0)`, the
    /// entry; `None`: not reachable from the entry).
    pub fn dominators(&self) -> Vec<Option<usize>> {
        let rpo = self.reverse_postorder();
        let mut order = vec![usize::MAX; self.blocks.len()];
        for (k, &b) in rpo.iter().enumerate() {
            order[b] = k;
        }
        let mut idom: Vec<Option<usize>> = vec![None; self.blocks.len()];
        let Some(&entry) = rpo.first() else {
            return idom;
        };
        idom[entry] = Some(entry);
        let intersect = |idom: &[Option<usize>], mut a: usize, mut b: usize| {
            while a != b {
                while order[a] > order[b] {
                    a = idom[a].expect("processed blocks have a dominator");
                }
                while order[b] > order[a] {
                    b = idom[b].expect("processed blocks have a dominator");
                }
            }
            a
        };
        let mut changed = true;
        while changed {
            changed = false;
            for &b in &rpo[1..] {
                let mut new = None;
                for &p in &self.preds[b] {
                    if idom[p].is_none() {
                        continue;
                    }
                    new = Some(match new {
                        None => p,
                        Some(q) => intersect(&idom, p, q),
                    });
                }
                if new.is_some() && idom[b] != new {
                    idom[b] = new;
                    changed = true;
                }
            }
        }
        idom
    }
}

/// Whether `d` dominates `b` under `idom` ([`Cfg::dominators`]).
pub fn dominates(idom: &[Option<usize>], d: usize, mut b: usize) -> bool {
    loop {
        if b == d {
            return true;
        }
        match idom[b] {
            Some(up) if up != b => b = up,
            _ => return false,
        }
    }
}
