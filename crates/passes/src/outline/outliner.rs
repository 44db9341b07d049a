//! The outliner's state across rounds, and the rounds themselves.
//!
//! An [`Outliner`] holds the module being rewritten: its lifted functions,
//! the decoder, the outlined bodies created so far and the statistics. A
//! round computes liveness, finds candidates ([`super::find`]), chooses
//! among them ([`super::select`]) and rewrites the functions
//! ([`super::rewrite`]); local and global rounds differ only in where the
//! candidates come from and how they are priced.

use std::collections::BTreeSet;

use super::decode::Decoder;
use super::emit;
use super::find;
use super::global::{OutlineTree, PrefixTree};
use super::lift::{self, LiftedFunction};
use super::rewrite::{self, OutlinedBody, Replacement};
use super::select::{self, Candidate, Pricing, Round};
use super::{MachFunction, OutlineResult, OutlineStats};
use crate::merge::BODY_SUFFIX;

/// The module being outlined.
pub struct Outliner<'a> {
    functions: &'a [MachFunction],
    symbol_names: &'a [String],
    lifted: Vec<LiftedFunction>,
    decoder: Decoder,
    /// Outlined functions created so far; [`super::RelocTarget::Outlined`]
    /// indexes them.
    bodies: Vec<OutlinedBody>,
    stats: OutlineStats,
}

impl<'a> Outliner<'a> {
    /// Lifts every function (module doc, step 1).
    pub fn new(functions: &'a [MachFunction], symbol_names: &'a [String]) -> Outliner<'a> {
        let mut decoder = Decoder::new();
        let lifted: Vec<LiftedFunction> = functions
            .iter()
            .map(|f| lift::lift(f, &mut decoder))
            .collect();
        let stats = OutlineStats {
            functions: functions.len(),
            opaque_functions: lifted.iter().filter(|f| f.opaque.is_some()).count(),
            bytes_before: functions.iter().map(|f| f.bytes.len() as u64).sum(),
            ..OutlineStats::default()
        };
        Outliner {
            functions,
            symbol_names,
            lifted,
            decoder,
            bodies: Vec::new(),
            stats,
        }
    }

    /// Outlines shared functions each against itself only, then the others
    /// together: the outlining of a shared function depends on nothing else
    /// in the module, so every copy stays identical.
    pub fn local_rounds(&mut self, max_rounds: u32) {
        let shared = shared_functions(self.functions);
        for (i, _) in shared.iter().enumerate().filter(|(_, &s)| s) {
            let alone: Vec<bool> = (0..self.lifted.len()).map(|j| j == i).collect();
            self.rounds_over(&alone, max_rounds);
        }
        let unshared: Vec<bool> = shared.iter().map(|s| !s).collect();
        self.rounds_over(&unshared, max_rounds);
    }

    /// Outlines across the `eligible` functions until a round finds nothing.
    fn rounds_over(&mut self, eligible: &[bool], max_rounds: u32) {
        let eligible: Vec<bool> = self
            .lifted
            .iter()
            .zip(eligible)
            .map(|(f, &e)| e && f.opaque.is_none())
            .collect();
        for round in 0..max_rounds {
            if self.local_round(&eligible) == 0 {
                break;
            }
            self.stats.rounds = self.stats.rounds.max(round + 1);
        }
    }

    /// One local round over the `eligible` functions (steps 2–7). Returns
    /// the number of outlined functions created.
    fn local_round(&mut self, eligible: &[bool]) -> usize {
        let round = Round::new(&self.lifted, eligible);
        let candidates = find::local_candidates(&round, eligible);
        let chosen = select::choose(candidates, Pricing::Local, &self.lifted);
        self.outline(chosen, Pricing::Local)
    }

    /// Matches every function's remaining instructions against the global
    /// prefix tree and outlines the matches that pay locally per occurrence
    /// (step 9), one body per distinct sequence.
    pub fn global_round(&mut self, tree: &OutlineTree) {
        let tree = PrefixTree::new(tree);
        let eligible: Vec<bool> = self.lifted.iter().map(|f| f.opaque.is_none()).collect();
        let round = Round::new(&self.lifted, &eligible);
        let candidates = find::global_candidates(&round, &tree, self.symbol_names);
        let chosen = select::choose(candidates, Pricing::Global, &self.lifted);
        self.outline(chosen, Pricing::Global);
    }

    /// Creates one body per chosen candidate, from its first occurrence, and
    /// replaces every occurrence by a call. Returns the number of bodies
    /// created.
    fn outline(&mut self, chosen: Vec<Candidate>, pricing: Pricing) -> usize {
        let mut replacements: Vec<Vec<Replacement>> = vec![Vec::new(); self.lifted.len()];
        for candidate in &chosen {
            let len = candidate.sequence.len();
            let first = candidate.occurrences[0].site;
            let seq = &self.lifted[first.function].items[first.item..first.item + len];
            let count = candidate.occurrences.len() as u64;
            let body = self.bodies.len() as u32;
            self.bodies.push(rewrite::make_body(
                seq,
                candidate.frame,
                count,
                &mut self.decoder,
            ));
            for o in &candidate.occurrences {
                replacements[o.site.function].push(Replacement {
                    start: o.site.item,
                    len,
                    variant: o.variant,
                    body,
                });
                self.stats.variants[o.variant.stat_index()] += 1;
            }
            self.stats.sequences_replaced += candidate.occurrences.len();
            if pricing == Pricing::Global {
                self.stats.global_sequences += candidate.occurrences.len();
            }
        }
        for (func, mut reps) in self.lifted.iter_mut().zip(replacements) {
            if !reps.is_empty() {
                reps.sort_unstable_by_key(|r| r.start);
                rewrite::rewrite(func, &reps, &self.bodies, &mut self.decoder);
            }
        }
        self.stats.outlined_functions += chosen.len();
        chosen.len()
    }

    /// Lays out the module (step 8).
    pub fn finish(self) -> OutlineResult {
        emit::finish(
            self.functions,
            &self.lifted,
            &self.bodies,
            self.symbol_names,
            self.stats,
        )
    }
}

/// Which functions are outlined alone: those marked shared or named like a
/// merged body (`*.Tgm`), and every function whose bytes and relocation
/// kinds equal one of theirs. Relocation *targets* are ignored on purpose:
/// `f<A>` calling `g<A>` and `f<B>` calling `g<B>` fold in the linker when
/// `g<A>` and `g<B>` do, so they must stay alike too.
fn shared_functions(functions: &[MachFunction]) -> Vec<bool> {
    let marked_shared = |f: &MachFunction| f.shared || f.name.ends_with(BODY_SUFFIX);
    let content = |f: &MachFunction| -> Vec<u8> {
        let mut key = f.bytes.clone();
        for r in &f.relocs {
            key.extend_from_slice(&r.offset.to_le_bytes());
            key.extend_from_slice(&(r.kind as u32).to_le_bytes());
            key.extend_from_slice(&r.addend.to_le_bytes());
        }
        key
    };
    let marked: BTreeSet<Vec<u8>> = functions
        .iter()
        .filter(|f| marked_shared(f))
        .map(content)
        .collect();
    functions
        .iter()
        .map(|f| marked_shared(f) || (!marked.is_empty() && marked.contains(&content(f))))
        .collect()
}
