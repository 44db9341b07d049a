//! Global outlining: the prefix tree of outlined sequences that links the
//! rounds of a two-round build — the global function outliner of Lee, Hoag
//! and Tillmann (*Efficient Profile-Guided Size Optimization for Native
//! Mobile Applications*, CC 2022, doi:10.1145/3497776.3517764) as Lee, Ren
//! and Hoag describe it (*Optimistic Global Function Merger*,
//! arXiv:2312.03214, 2023, §2.2); see the [outliner's module
//! doc](super#references).
//!
//! Round 1 outlines every module locally and *publishes*, for each outlined
//! function, the **stable hash sequence** of the instructions it replaced —
//! one hash per instruction over its word and its relocation (kind, target
//! *name*, addend), so equal instructions hash alike in every module — with
//! the number of sequences it replaced. The combine step merges the
//! publications of all modules by adding counts ([`OutlineTree`] is a
//! [`Section`] of cgdata). Round 2, after local outlining, walks every
//! function's remaining instructions down the tree ([`PrefixTree`]); a
//! sequence that ends at a node published at least [`MIN_GLOBAL_COUNT`]
//! times is outlined *even with a single local occurrence*: the outlined
//! function is named by its content, so the copies other modules create
//! optimistically fold in the linker. Such a module may grow by the outlined
//! body; the program shrinks when the optimism holds, and stays correct when
//! it does not (stale or foreign data costs size, never correctness).

use std::collections::BTreeMap;

use crate::cgdata::{CgDataError, Reader, Section, SectionKind, Writer};
use crate::machine::lift::{Inst, Item};
use crate::machine::RelocTarget;

/// Sequences published at least this many times are outlined on one local
/// occurrence.
pub const MIN_GLOBAL_COUNT: u64 = 2;

/// Outlined sequences (stable hashes) with the number of occurrences they
/// replaced, over all modules that published them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OutlineTree {
    pub sequences: BTreeMap<Vec<u64>, u64>,
}

impl OutlineTree {
    /// Adds `count` occurrences of `sequence`.
    pub fn add(&mut self, sequence: Vec<u64>, count: u64) {
        let entry = self.sequences.entry(sequence).or_insert(0);
        *entry = entry.saturating_add(count);
    }

    pub fn is_empty(&self) -> bool {
        self.sequences.is_empty()
    }
}

impl Section for OutlineTree {
    const KIND: SectionKind = SectionKind::Outline;

    fn encode(&self, w: &mut Writer) {
        w.u32(self.sequences.len() as u32);
        for (seq, count) in &self.sequences {
            w.u32(seq.len() as u32);
            for h in seq {
                w.u64(*h);
            }
            w.u64(*count);
        }
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, CgDataError> {
        let n = r.count(12, "outline sequence count")?;
        let mut tree = OutlineTree::default();
        let mut previous: Option<Vec<u64>> = None;
        for _ in 0..n {
            let len = r.count(8, "outline sequence length")?;
            let mut seq = Vec::with_capacity(len);
            for _ in 0..len {
                seq.push(r.u64("outline instruction hash")?);
            }
            let count = r.u64("outline sequence count")?;
            if len == 0 || previous.as_ref().is_some_and(|p| *p >= seq) {
                return Err(CgDataError::Corrupt {
                    offset: r.offset(),
                    reason: "outline sequences are not sorted and non-empty".into(),
                });
            }
            previous = Some(seq.clone());
            tree.sequences.insert(seq, count);
        }
        Ok(tree)
    }

    fn merge(&mut self, other: Self) {
        for (seq, count) in other.sequences {
            self.add(seq, count);
        }
    }
}

/// The stable hash of an instruction, or `None` if it refers to something
/// whose name is not stable yet (an outlined function of this module).
pub fn stable_hash(inst: &Inst, symbol_names: &[String]) -> Option<u64> {
    let mut buf = inst.word.to_le_bytes().to_vec();
    if let Some(r) = &inst.reloc {
        buf.extend_from_slice(&r.kind.code().to_le_bytes());
        match r.target {
            RelocTarget::Symbol(s) => {
                buf.extend_from_slice(symbol_names.get(s as usize)?.as_bytes())
            }
            RelocTarget::Outlined(_) | RelocTarget::FunctionOffset(_) => return None,
        }
        buf.push(0);
        buf.extend_from_slice(&r.addend.to_le_bytes());
    }
    Some(xxhash_rust::xxh3::xxh3_64(&buf))
}

/// The stable hashes of a sequence of items, if all are stable instructions.
pub fn sequence_hashes(items: &[Item], symbol_names: &[String]) -> Option<Vec<u64>> {
    items
        .iter()
        .map(|item| match item {
            Item::Inst(inst) => stable_hash(inst, symbol_names),
            _ => None,
        })
        .collect()
}

/// [`OutlineTree`] as a trie, for matching.
pub struct PrefixTree {
    /// Node 0 is the root.
    nodes: Vec<Node>,
}

/// A node of the [`PrefixTree`]: the sequence spelled by the path to it.
#[derive(Default)]
struct Node {
    /// Children by instruction hash.
    children: BTreeMap<u64, usize>,
    /// The published count of the sequence ending here (0: none ends here).
    count: u64,
}

/// A published sequence that is a prefix of the matched hashes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrefixMatch {
    /// Instructions in the sequence.
    pub len: usize,
    /// How many sequences it replaced in the modules that published it.
    pub count: u64,
}

impl PrefixTree {
    pub fn new(tree: &OutlineTree) -> PrefixTree {
        let mut nodes = vec![Node::default()];
        for (seq, &count) in &tree.sequences {
            let mut at = 0;
            for h in seq {
                at = match nodes[at].children.get(h) {
                    Some(&next) => next,
                    None => {
                        nodes.push(Node::default());
                        let next = nodes.len() - 1;
                        nodes[at].children.insert(*h, next);
                        next
                    }
                };
            }
            nodes[at].count = nodes[at].count.saturating_add(count);
        }
        PrefixTree { nodes }
    }

    /// The published sequences that are prefixes of `hashes`, shortest first.
    pub fn matches(&self, hashes: impl IntoIterator<Item = u64>) -> Vec<PrefixMatch> {
        let mut out = Vec::new();
        let mut at = 0;
        for (i, h) in hashes.into_iter().enumerate() {
            match self.nodes[at].children.get(&h) {
                Some(&next) => at = next,
                None => break,
            }
            if self.nodes[at].count > 0 {
                out.push(PrefixMatch {
                    len: i + 1,
                    count: self.nodes[at].count,
                });
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cgdata::CgData;

    #[test]
    fn tree_round_trips_and_merges_in_any_order() {
        let mut a = OutlineTree::default();
        a.add(vec![1, 2, 3], 2);
        a.add(vec![1, 2], 5);
        let mut b = OutlineTree::default();
        b.add(vec![1, 2, 3], 1);
        b.add(vec![9, 9], 3);
        let mut ab = a.clone();
        ab.merge(b.clone());
        let mut ba = b.clone();
        ba.merge(a.clone());
        assert_eq!(ab, ba);
        assert_eq!(ab.sequences[&vec![1, 2, 3]], 3);
        let mut data = CgData::new("aarch64");
        data.put(&ab);
        let bytes = data.encode();
        let back = CgData::decode(&bytes, Some("aarch64")).unwrap();
        assert_eq!(back.get::<OutlineTree>().unwrap(), Some(ab.clone()));
        let trie = PrefixTree::new(&ab);
        let found: Vec<(usize, u64)> = trie
            .matches([1, 2, 3, 4])
            .into_iter()
            .map(|m| (m.len, m.count))
            .collect();
        assert_eq!(found, vec![(2, 5), (3, 3)]);
        assert_eq!(trie.matches([2, 3]), vec![]);
    }

    #[test]
    fn unsorted_sections_are_rejected() {
        let mut w = Writer::default();
        w.u32(2);
        for seq in [[5u64, 6], [1, 2]] {
            w.u32(2);
            seq.iter().for_each(|&h| w.u64(h));
            w.u64(1);
        }
        let bytes = w.into_bytes();
        assert!(OutlineTree::decode(&mut Reader::new(&bytes)).is_err());
    }
}
