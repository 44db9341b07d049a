//! Selection: which occurrences of which sequences become calls.
//!
//! Both kinds of candidates go through this one path. Local candidates are
//! the repeats of the instruction string ([`super::find::local_candidates`]),
//! global ones the prefix-tree matches of single sites
//! ([`super::find::global_candidates`]); each is [evaluated](Round::evaluate)
//! into the occurrences that may legally call an outlined copy, with a call
//! variant each, and the greedy [`choose`] picks among them.
//!
//! # Evaluation
//!
//! An occurrence is usable when `x16`, `x17` and NZCV are dead where it
//! starts (a linker veneer on the new call may clobber them) and, when the
//! outlined function returns to it, where it ends; its call variant is the
//! first of the module doc's table (step 5) that the frame and liveness
//! allow, and its call must be smaller than the sequence. Occurrences of one
//! candidate do not overlap: of two, the earlier is kept.
//!
//! # Greedy choice
//!
//! Candidates are ranked by their [`Pricing`]'s value and taken best first;
//! each drops the occurrences that overlap earlier choices and is taken if it
//! still pays. Chosen candidates of the same sequence (global matches at
//! different sites) share one outlined function.

use std::cmp::Ordering;
use std::collections::btree_map::Entry;
use std::collections::BTreeMap;

use hashbrown::HashMap;

use super::CallVariant;
use crate::machine::decode::{self, Form, RegSet, IP0_IP1, LR, NZCV, SP};
use crate::machine::lift::{Inst, Item, LiftedFunction};
use crate::machine::liveness::{self, Liveness};

/// Where an occurrence starts: an item of a lifted function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Site {
    /// Index of the function in the module.
    pub function: usize,
    /// Index of the first item in the function.
    pub item: usize,
}

/// One occurrence of a candidate, with the way it calls the outlined copy.
#[derive(Clone, Copy, Debug)]
pub struct Occurrence {
    pub site: Site,
    pub variant: CallVariant,
}

/// How an outlined function ends (LLVM's frame types).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameKind {
    /// The sequence ends in `ret` or a tail jump: nothing added.
    Tail,
    /// The sequence ends in a call, turned into a jump: nothing added.
    Thunk,
    /// A `ret` is appended.
    Default,
}

impl FrameKind {
    /// Bytes the outlined function adds to the sequence.
    pub fn frame_bytes(self) -> u32 {
        match self {
            FrameKind::Tail | FrameKind::Thunk => 0,
            FrameKind::Default => 4,
        }
    }

    /// The frame a sequence ending in `last` needs.
    fn of_last(last: &Inst) -> FrameKind {
        if last.is_tail_jump() || matches!(last.form, Form::Ret { .. }) {
            FrameKind::Tail
        } else if last.is_call() {
            FrameKind::Thunk
        } else {
            FrameKind::Default
        }
    }
}

/// A sequence and its usable, non-overlapping occurrences.
#[derive(Clone, Debug)]
pub struct Candidate {
    /// The sequence's instructions, one integer each, equal for equal
    /// instructions: instruction-string symbols for local candidates, stable
    /// hashes for global ones. Its length is the sequence's length.
    pub sequence: Vec<u64>,
    /// Size of the sequence in bytes.
    pub bytes: u32,
    pub frame: FrameKind,
    /// Sorted by site, except in the merged candidates [`choose`] returns
    /// (in the order chosen). The outlined copy is made from the first.
    pub occurrences: Vec<Occurrence>,
}

impl Candidate {
    /// Bytes saved at the call sites: `Σ (B - call)`.
    fn call_site_saving(&self) -> i64 {
        self.occurrences
            .iter()
            .map(|o| i64::from(self.bytes) - i64::from(o.variant.call_bytes()))
            .sum()
    }

    /// Where the first occurrence starts.
    fn first_site(&self) -> Site {
        self.occurrences[0].site
    }
}

/// How a candidate's value is counted, and which of two equal values wins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pricing {
    /// The module pays for the outlined function: the value is the
    /// benefit `Σ (B - call) - (B + frame)`. Ties: the longer sequence,
    /// then the earlier.
    Local,
    /// The outlined function is expected to fold with other modules'
    /// copies (module doc, step 9): the value is the call-site saving
    /// alone. Ties: the earlier site, then the longer sequence.
    Global,
}

impl Pricing {
    fn value(self, candidate: &Candidate) -> i64 {
        let saving = candidate.call_site_saving();
        match self {
            Pricing::Local => saving - i64::from(candidate.bytes + candidate.frame.frame_bytes()),
            Pricing::Global => saving,
        }
    }

    /// Best first.
    fn rank(self, a: &Candidate, b: &Candidate) -> Ordering {
        let by_value = self.value(b).cmp(&self.value(a));
        let longer_first = b.sequence.len().cmp(&a.sequence.len());
        let earlier_first = a.first_site().cmp(&b.first_site());
        match self {
            Pricing::Local => by_value.then(longer_first).then(earlier_first),
            Pricing::Global => by_value.then(earlier_first).then(longer_first),
        }
    }
}

/// One round's view of the module: the functions, and the liveness of those
/// outlined from in this round (by function index; absent: not outlined
/// from). Only looked up, never iterated.
pub struct Round<'a> {
    pub functions: &'a [LiftedFunction],
    /// Per function, its items left alone as hot ([`super::heat`]).
    hot: &'a [Vec<bool>],
    live: HashMap<usize, Liveness>,
}

impl<'a> Round<'a> {
    /// Computes liveness for the `eligible` functions, those that may be
    /// outlined from.
    pub fn new(
        functions: &'a [LiftedFunction],
        hot: &'a [Vec<bool>],
        eligible: &[usize],
    ) -> Round<'a> {
        let live = eligible
            .iter()
            .map(|&f| (f, liveness::compute(&functions[f])))
            .collect();
        Round {
            functions,
            hot,
            live,
        }
    }

    /// The items of function `f` left alone as hot ([`super::heat`]).
    pub fn hot_items(&self, f: usize) -> &'a [bool] {
        &self.hot[f]
    }

    /// The instruction at `site` (sites of candidates are instructions).
    pub fn inst(&self, site: Site) -> &'a Inst {
        match &self.functions[site.function].items[site.item].1 {
            Item::Inst(inst) => inst,
            _ => unreachable!("candidate sites are instructions"),
        }
    }

    /// Checks each occurrence of `sequence` at `sites` (sorted) and picks its
    /// call variant; `None` if no occurrence is usable. The sequence's
    /// instructions are read at the first site.
    pub fn evaluate(&self, sequence: Vec<u64>, sites: &[Site]) -> Option<Candidate> {
        let first = *sites.first()?;
        let len = sequence.len();
        let at = |k: usize| {
            self.inst(Site {
                item: first.item + k,
                ..first
            })
        };
        let frame = FrameKind::of_last(at(len - 1));
        let bytes = 4 * len as u32;
        let mentions: RegSet = (0..len)
            .map(|k| at(k).effects.mentions())
            .fold(0, |a, b| a | b);
        let mut occurrences = Vec::new();
        let mut last_end: Option<Site> = None;
        for &site in sites {
            // Non-overlapping occurrences, left to right.
            if let Some(end) = last_end {
                if end.function == site.function && site.item < end.item {
                    continue;
                }
            }
            let Some(variant) = self.call_variant(site, len, frame, mentions) else {
                continue;
            };
            // Never grow a function.
            if variant.call_bytes() >= bytes {
                continue;
            }
            occurrences.push(Occurrence { site, variant });
            last_end = Some(Site {
                item: site.item + len,
                ..site
            });
        }
        (!occurrences.is_empty()).then_some(Candidate {
            sequence,
            bytes,
            frame,
            occurrences,
        })
    }

    /// How the occurrence of `len` instructions at `site` calls its outlined
    /// copy, if it may (LLVM's `getOutliningCandidateInfo` rules).
    fn call_variant(
        &self,
        site: Site,
        len: usize,
        frame: FrameKind,
        mentions: RegSet,
    ) -> Option<CallVariant> {
        let live = self.live.get(&site.function)?;
        let live_in = live.live_in[site.item];
        let live_out = live.live_out[site.item + len - 1];
        if live_in & (IP0_IP1 | NZCV) != 0 {
            return None;
        }
        match frame {
            FrameKind::Tail => Some(CallVariant::TailCall),
            FrameKind::Thunk => Some(CallVariant::Thunk),
            // The outlined function returns here: the veneer registers must
            // be dead after the call too, and `x30` must survive it.
            FrameKind::Default if live_out & (IP0_IP1 | NZCV) != 0 => None,
            FrameKind::Default if live_in & LR == 0 => Some(CallVariant::NoLrSave),
            FrameKind::Default => match free_register(live_in | live_out | mentions) {
                Some(r) => Some(CallVariant::RegSave(r)),
                None if mentions & SP == 0 => Some(CallVariant::StackSave),
                None => None,
            },
        }
    }
}

/// A general-purpose register not in `busy` that may hold `x30` across a
/// call: caller-saved temporaries first, never x16–x18, x29, x30.
fn free_register(busy: RegSet) -> Option<u32> {
    (9..=15)
        .chain(0..=8)
        .chain(19..=28)
        .find(|&r| busy & decode::x(r) == 0)
}

/// Why [`choose`] did not take a candidate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rejection {
    /// Its value under the pricing was not positive to begin with.
    Unprofitable { value: i64 },
    /// Better candidates took some of its occurrences, and what was left
    /// did not pay (`left` occurrences, worth `value`).
    Overlapped { left: usize, value: i64 },
}

/// A candidate [`choose`] did not take, as it was before the choice.
#[derive(Clone, Debug)]
pub struct Rejected {
    pub candidate: Candidate,
    pub why: Rejection,
}

/// What [`choose`] decided.
#[derive(Clone, Debug, Default)]
pub struct Choice {
    /// One candidate per outlined function to create (chosen candidates of
    /// one sequence merged, in the order they were first chosen), each with
    /// its value when chosen.
    pub chosen: Vec<(Candidate, i64)>,
    /// The candidates not taken, with why, in rank order (unprofitable ones
    /// last).
    pub rejected: Vec<Rejected>,
}

/// The greedy choice: the candidates that pay under `pricing`, best first,
/// each without the occurrences that overlap earlier choices. Candidates
/// wholly inside earlier choices (every occurrence overlapped: the shorter
/// prefixes and suffixes of a chosen sequence) are dropped silently; the
/// others not taken are [`Choice::rejected`].
pub fn choose(
    candidates: Vec<Candidate>,
    pricing: Pricing,
    functions: &[LiftedFunction],
) -> Choice {
    let (mut candidates, unprofitable): (Vec<Candidate>, Vec<Candidate>) =
        candidates.into_iter().partition(|c| pricing.value(c) > 0);
    candidates.sort_by(|a, b| pricing.rank(a, b));
    // The items of each function taken so far, for the functions outlined
    // from only: a round over one function must not cost a pass over the
    // module.
    let mut taken: HashMap<usize, Vec<bool>> = HashMap::new();
    let mut choice = Choice::default();
    let mut chosen_index: BTreeMap<Vec<u64>, usize> = BTreeMap::new();
    for mut candidate in candidates {
        let len = candidate.sequence.len();
        let items = |site: Site| site.item..site.item + len;
        let free: Vec<Occurrence> = candidate
            .occurrences
            .iter()
            .filter(|o| {
                taken
                    .get(&o.site.function)
                    .is_none_or(|t| !t[items(o.site)].contains(&true))
            })
            .copied()
            .collect();
        if free.is_empty() {
            continue;
        }
        let all = std::mem::replace(&mut candidate.occurrences, free);
        let value = pricing.value(&candidate);
        if value <= 0 {
            let left = candidate.occurrences.len();
            candidate.occurrences = all;
            let why = Rejection::Overlapped { left, value };
            choice.rejected.push(Rejected { candidate, why });
            continue;
        }
        let left = candidate;
        for o in &left.occurrences {
            let items_of = || vec![false; functions[o.site.function].items.len()];
            taken.entry(o.site.function).or_insert_with(items_of)[items(o.site)].fill(true);
        }
        match chosen_index.entry(left.sequence.clone()) {
            Entry::Occupied(at) => {
                let (merged, total) = &mut choice.chosen[*at.get()];
                merged.occurrences.extend(left.occurrences);
                *total += value;
            }
            Entry::Vacant(at) => {
                at.insert(choice.chosen.len());
                choice.chosen.push((left, value));
            }
        }
    }
    choice
        .rejected
        .extend(unprofitable.into_iter().map(|candidate| Rejected {
            why: Rejection::Unprofitable {
                value: pricing.value(&candidate),
            },
            candidate,
        }));
    choice
}
