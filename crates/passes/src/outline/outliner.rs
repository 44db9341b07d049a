//! The outliner's state across rounds, and the rounds themselves.
//!
//! An [`Outliner`] holds the module being rewritten: its lifted functions,
//! the decoder, the outlined bodies created so far and the statistics. A
//! round computes liveness, finds candidates ([`super::find`]), chooses
//! among them ([`super::select`]) and rewrites the functions
//! ([`super::rewrite`]); local and global rounds differ only in where the
//! candidates come from and how they are priced.

use std::collections::{BTreeMap, BTreeSet};

use hashbrown::HashMap;

use super::emit;
use super::find;
use super::global::{OutlineTree, PrefixTree};
use super::rewrite::{self, OutlinedBody, Replacement};
use super::select::{self, Candidate, Choice, Pricing, Rejected, Rejection, Round};
use super::{OutlineResult, OutlineStats};
use crate::heat::{Heat, HotCode};
use crate::machine::decode::Decoder;
use crate::machine::lift::{self, LiftedFunction};
use crate::machine::MachFunction;
use crate::merge::BODY_SUFFIX;
use crate::remark::Remark;

/// The pass's name in remarks.
pub(crate) const PASS: &str = "outline";

/// A remark of the outliner, and the outlined body whose name it takes as
/// its function once bodies are named ([`super::emit`]); until then (and if
/// the outlining is undone) its function is that of the first occurrence.
pub(crate) struct OutlineRemark {
    pub body: Option<u32>,
    pub remark: Remark,
}

/// The module being outlined.
pub struct Outliner<'a> {
    functions: &'a [MachFunction],
    symbol_names: &'a [String],
    lifted: Vec<LiftedFunction>,
    /// What a profile knows of each function ([`crate::heat`]): nothing
    /// is outlined from a hot one, a cold one loses its loops' protection.
    heat: Vec<Option<Heat>>,
    /// Per function, its items left alone as hot ([`super::heat`]; none
    /// for an opaque function), computed again where a round rewrites it.
    hot: Vec<Vec<bool>>,
    decoder: Decoder,
    /// Outlined functions created so far; [`crate::machine::RelocTarget::Outlined`]
    /// indexes them.
    bodies: Vec<OutlinedBody>,
    stats: OutlineStats,
    /// One per decision, in the order made (module doc of [`super`]).
    remarks: Vec<OutlineRemark>,
}

impl<'a> Outliner<'a> {
    /// Lifts every function (module doc, step 1), with `decoder`.
    pub fn new(
        functions: &'a [MachFunction],
        symbol_names: &'a [String],
        hot_code: &HotCode,
        mut decoder: Decoder,
    ) -> Outliner<'a> {
        let lifted: Vec<LiftedFunction> = functions
            .iter()
            .map(|f| lift::lift(f, &mut decoder))
            .collect();
        let heat: Vec<Option<Heat>> = lifted.iter().map(|f| hot_code.heat(&f.name)).collect();
        let hot_items: Vec<Vec<bool>> = lifted
            .iter()
            .zip(&heat)
            .map(|(f, &heat)| self::hot_items(f, heat))
            .collect();
        let hot: Vec<(usize, usize)> = lifted
            .iter()
            .zip(&hot_items)
            .map(|(f, hot)| self::hot_code(f, hot))
            .collect();
        let stats = OutlineStats {
            functions: functions.len(),
            opaque_functions: lifted.iter().filter(|f| f.opaque.is_some()).count(),
            bytes_before: functions.iter().map(|f| f.bytes.len() as u64).sum(),
            hot_instructions: hot.iter().map(|h| h.0).sum(),
            hot_sequences: hot.iter().map(|h| h.1).sum(),
            hot_functions: heat.iter().filter(|&&h| h == Some(Heat::Hot)).count(),
            ..OutlineStats::default()
        };
        let remarks = lifted
            .iter()
            .zip(&heat)
            .filter_map(|(f, &heat)| {
                let remark = match (&f.opaque, heat) {
                    (Some(why), _) => {
                        Remark::analysis(PASS, "opaque", &f.name, format!("not lifted: {why}"))
                            .count("opaque_functions", 1)
                    }
                    (None, Some(Heat::Hot)) => Remark::missed(
                        PASS,
                        "hot-function",
                        &f.name,
                        "known hot (profile): nothing outlined",
                    )
                    .count("hot_functions", 1),
                    (None, _) => return None,
                };
                Some(OutlineRemark { body: None, remark })
            })
            .collect();
        Outliner {
            functions,
            symbol_names,
            lifted,
            heat,
            hot: hot_items,
            decoder,
            bodies: Vec::new(),
            stats,
            remarks,
        }
    }

    /// Outlines shared functions each against itself only, then the others
    /// together: the outlining of a shared function depends on nothing else
    /// in the module, so every copy stays identical.
    ///
    /// A round over one function costs what that function costs, not what
    /// the module does (a module can hold thousands of shared functions:
    /// every merged body is one).
    pub fn local_rounds(&mut self, max_rounds: u32) {
        let shared = shared_functions(self.functions);
        for (i, _) in shared.iter().enumerate().filter(|(_, &s)| s) {
            self.rounds_over(&[i], max_rounds);
        }
        let unshared: Vec<usize> = (0..shared.len()).filter(|&i| !shared[i]).collect();
        self.rounds_over(&unshared, max_rounds);
    }

    /// Whether function `f` may lose code to outlined functions: it was
    /// lifted, and no profile knows it hot.
    fn may_outline_from(&self, f: usize) -> bool {
        self.lifted[f].opaque.is_none() && self.heat[f] != Some(Heat::Hot)
    }

    /// Outlines across the `eligible` functions (indices, ascending) until a
    /// round finds nothing.
    fn rounds_over(&mut self, eligible: &[usize], max_rounds: u32) {
        let eligible: Vec<usize> = eligible
            .iter()
            .copied()
            .filter(|&f| self.may_outline_from(f))
            .collect();
        if eligible.is_empty() {
            return;
        }
        for round in 0..max_rounds {
            if self.local_round(&eligible, round + 1) == 0 {
                break;
            }
            self.stats.rounds = self.stats.rounds.max(round + 1);
        }
    }

    /// One local round over the `eligible` functions (steps 2–7). Returns
    /// the number of outlined functions created.
    fn local_round(&mut self, eligible: &[usize], number: u32) -> usize {
        let round = Round::new(&self.lifted, &self.hot, eligible);
        let candidates = find::local_candidates(&round, eligible);
        let choice = select::choose(candidates, Pricing::Local, &self.lifted);
        self.outline(choice, Pricing::Local, &format!("local round {number}"))
    }

    /// Matches every function's remaining instructions against the global
    /// prefix tree and outlines the matches that pay locally per occurrence
    /// (step 9), one body per distinct sequence.
    pub fn global_round(&mut self, tree: &OutlineTree) {
        let tree = PrefixTree::new(tree);
        let eligible: Vec<usize> = (0..self.lifted.len())
            .filter(|&f| self.may_outline_from(f))
            .collect();
        let round = Round::new(&self.lifted, &self.hot, &eligible);
        let candidates = find::global_candidates(&round, &tree, self.symbol_names);
        let choice = select::choose(candidates, Pricing::Global, &self.lifted);
        self.outline(choice, Pricing::Global, "global round");
    }

    /// Creates one body per chosen candidate, from its first occurrence, and
    /// replaces every occurrence by a call; records a remark per candidate
    /// chosen or rejected. Returns the number of bodies created.
    fn outline(&mut self, choice: Choice, pricing: Pricing, round: &str) -> usize {
        for rejected in &choice.rejected {
            let remark = self.rejected_remark(rejected, pricing, round);
            self.remarks.push(OutlineRemark { body: None, remark });
        }
        // By function, in function order; only the functions outlined from
        // (a round over one function must not cost a pass over the module).
        let mut replacements: BTreeMap<usize, Vec<Replacement>> = BTreeMap::new();
        for (candidate, value) in &choice.chosen {
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
                replacements
                    .entry(o.site.function)
                    .or_default()
                    .push(Replacement {
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
            let remark = self.outlined_remark(candidate, *value, pricing, round);
            self.remarks.push(OutlineRemark {
                body: Some(body),
                remark,
            });
        }
        for (f, mut reps) in replacements {
            reps.sort_unstable_by_key(|r| r.start);
            rewrite::rewrite(&mut self.lifted[f], &reps, &self.bodies, &mut self.decoder);
            self.hot[f] = hot_items(&self.lifted[f], self.heat[f]);
        }
        self.stats.outlined_functions += choice.chosen.len();
        choice.chosen.len()
    }

    /// The remark of a chosen candidate (its function is named later: the
    /// outlined function's name is its content hash).
    fn outlined_remark(
        &self,
        candidate: &Candidate,
        value: i64,
        pricing: Pricing,
        round: &str,
    ) -> Remark {
        let sequences = candidate.occurrences.len() as u64;
        let first = &self.lifted[candidate.occurrences[0].site.function].name;
        let mut remark = Remark::passed(
            PASS,
            "outlined",
            first,
            format!(
                "{} from {}; calls: {}; {round}",
                self.sequence_text(candidate),
                self.sites_text(candidate),
                variants_text(candidate)
            ),
        )
        .bytes(value)
        .count("outlined_functions", 1)
        .count("sequences_replaced", sequences);
        if pricing == Pricing::Global {
            remark = remark.count("global_sequences", sequences);
        }
        remark
    }

    /// The remark of a candidate [`select::choose`] did not take, on the
    /// function of its first occurrence.
    fn rejected_remark(&self, rejected: &Rejected, pricing: Pricing, round: &str) -> Remark {
        let candidate = &rejected.candidate;
        let function = &self.lifted[candidate.occurrences[0].site.function].name;
        let what = format!(
            "{} at {}",
            self.sequence_text(candidate),
            self.sites_text(candidate)
        );
        let (decision, reason, value) = match rejected.why {
            Rejection::Unprofitable { value } => {
                let cost = match pricing {
                    Pricing::Local => "the calls and the outlined function cost as much",
                    Pricing::Global => "the calls cost as much",
                };
                ("unprofitable", format!("{what}: {cost}; {round}"), value)
            }
            Rejection::Overlapped { left, value } => (
                "overlapped",
                format!(
                    "{what}: better sequences took all but {left} of its sites, \
                     which do not pay; {round}"
                ),
                value,
            ),
        };
        Remark::missed(PASS, decision, function, reason).bytes(value)
    }

    /// `N instructions (B bytes)`.
    fn sequence_text(&self, candidate: &Candidate) -> String {
        format!(
            "{} instructions ({} bytes)",
            candidate.sequence.len(),
            candidate.bytes
        )
    }

    /// The functions the occurrences are in, with counts, in order of first
    /// occurrence: `3 sites in f (2×), g`.
    fn sites_text(&self, candidate: &Candidate) -> String {
        const MAX_NAMED: usize = 6;
        let mut functions: Vec<(usize, usize)> = Vec::new();
        // Where each function is in `functions`: a sequence can occur in
        // most of a module's functions.
        let mut position: HashMap<usize, usize> = HashMap::new();
        for o in &candidate.occurrences {
            let next = functions.len();
            let at = *position.entry(o.site.function).or_insert(next);
            if at == next {
                functions.push((o.site.function, 0));
            }
            functions[at].1 += 1;
        }
        let mut named: Vec<String> = functions
            .iter()
            .take(MAX_NAMED)
            .map(|&(f, n)| {
                let name = &self.lifted[f].name;
                if n > 1 {
                    format!("{name} ({n}×)")
                } else {
                    name.clone()
                }
            })
            .collect();
        if functions.len() > MAX_NAMED {
            named.push(format!("{} more functions", functions.len() - MAX_NAMED));
        }
        let sites = candidate.occurrences.len();
        let plural = if sites == 1 { "" } else { "s" };
        format!("{sites} site{plural} in {}", named.join(", "))
    }

    /// Lays out the module (step 8).
    pub fn finish(self) -> OutlineResult {
        emit::finish(
            self.functions,
            &self.lifted,
            &self.bodies,
            self.symbol_names,
            self.stats,
            self.remarks,
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
            key.extend_from_slice(&r.kind.code().to_le_bytes());
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

/// The call variants of a candidate's occurrences, counted:
/// `no-lr-save 2, tail 1`.
fn variants_text(candidate: &Candidate) -> String {
    // In the order of `CallVariant::stat_index`.
    let names = ["tail", "thunk", "no-lr-save", "reg-save", "stack-save"];
    let mut counts = [0usize; 5];
    for o in &candidate.occurrences {
        counts[o.variant.stat_index()] += 1;
    }
    let parts: Vec<String> = names
        .iter()
        .zip(counts)
        .filter(|(_, n)| *n > 0)
        .map(|(name, n)| format!("{name} {n}"))
        .collect();
    parts.join(", ")
}

/// The items of `func` the outliner leaves alone as hot ([`super::heat`]);
/// none for an opaque function.
fn hot_items(func: &LiftedFunction, heat: Option<Heat>) -> Vec<bool> {
    match func.opaque {
        Some(_) => Vec::new(),
        None => super::heat::hot_items(func, heat),
    }
}

/// The number of instructions of `func` the outliner leaves alone as hot
/// (`hot`, its [`hot_items`]), and of the sequences among them it could
/// otherwise have outlined ([`find::hot_sequences`]); none for an opaque
/// function.
fn hot_code(func: &LiftedFunction, hot: &[bool]) -> (usize, usize) {
    if func.opaque.is_some() {
        return (0, 0);
    }
    let instructions = func
        .items
        .iter()
        .zip(hot)
        .filter(|((_, item), hot)| **hot && matches!(item, lift::Item::Inst(_)))
        .count();
    (instructions, find::hot_sequences(func, hot))
}
