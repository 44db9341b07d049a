//! Execution profiles: how often each block of each function ran, and what
//! a build makes of it ([`crate::heat::HotCode`]).
//!
//! The size passes trade run time for bytes, and on code that runs often
//! that trade is a bad one (LLVM issue #96830). A profile says which code
//! that is. Its producer instruments the code ([`instrument()`]), runs it
//! and saves the counts as a [`Profile`]; a build reads the profile back
//! and classifies the functions of each module it compiles
//! ([`hot_code`]), as LLVM's `ProfileSummaryInfo` does for its passes and
//! its machine outliner's profile modes do for outlining
//! (`-enable-machine-outliner=optimistic-pgo|conservative-pgo`, PR
//! #154437).
//!
//! # Notation
//!
//! - A function is keyed by `(name, hash)`: its symbol name and its
//!   [`profile_hash`], a stable hash of its code that does not depend on
//!   entity numbering (see [`hash`]). The same source lowered again —
//!   another run, another build, another executor whose lowering differs
//!   only in trap blocks — gives the same key.
//! - `blocks[i]` is how often the `i`-th block in layout order ran; the
//!   entry count is `blocks[0]`. Layout positions, not `ir::Block`
//!   numbers: the hash guarantees the layout, not the numbering.
//! - The *work* of a function is the sum of its block counts: the blocks it
//!   ran, all told ([`FunctionProfile::work`]).
//! - Thresholds, as LLVM's `ProfileSummaryInfo` computes them from a
//!   sorted list and a cutoff: the *hot work* is the work at which the
//!   running sum of the functions' work, largest first, reaches 99% of the
//!   total ([`HOT_CUTOFF`], LLVM's `HotPercentileCutoff=990000`), and at
//!   least [`MIN_HOT_WORK`]; the *hot block* count is the block count at
//!   which the running sum of every block count reaches 99%; the *cold*
//!   count the block count at which it reaches 99.9999% ([`COLD_CUTOFF`]).
//! - A function is *hot* when its work reaches the hot work: the
//!   functions that do 99% of the program's work, which is where its time
//!   goes (LLVM's block-count rule, one hot block makes the function hot,
//!   marks most of a short program's functions hot: on bench/ it kept
//!   `-Oz --two-rounds --profile-use` at 188,608 bytes against 167,424,
//!   for no run time). It is *cold* when no block ran more than the cold
//!   count (a function that never ran is cold), *lukewarm* otherwise. A
//!   call site is hot when it lies in a hot function and its block's count
//!   reaches the hot block count.
//!
//! # Algorithm of [`hot_code`]
//!
//! For each function a module defines: compute its key; if the profile has
//! it, classify it (functions the producer marks target-specific,
//! [`ClifModule::target_specific`], are never looked up: a profile made on
//! another machine cannot name them); if the profile has the name under another hash, the
//! function changed since the profile was made — a [`Mismatch`], and
//! unknown; otherwise unknown. Then, by [`ProfileMode`]:
//!
//! | mode         | hot   | cold   | lukewarm | unknown, mismatched      |
//! |--------------|-------|--------|----------|--------------------------|
//! | optimistic   | `Hot` | `Cold` | `Cold`   | absent (static estimate) |
//! | conservative | `Hot` | `Cold` | `Hot`    | `Hot`                    |
//!
//! Optimistic touches all code not known hot — a lukewarm function is
//! known not to be hot, so the static estimate's guesses (loops are hot)
//! do not apply to it; conservative touches only code known cold. Hot
//! call sites are recorded in both modes.
//!
//! Last, a function the linker folds with a hot one (identical code, as
//! [`crate::fmerge::icf`] computes the classes: instances of one generic
//! function over types of one representation, such as `str` and `[u8]`) is
//! hot too ([`FunctionHeat::folds_with`]). Treated apart, the hot copy gets
//! the speed rules and the other the size passes, the two no longer fold,
//! and the program carries both; treated alike they stay one copy, and the
//! extra copy costs nothing. On bench/ this took `-Oz --two-rounds
//! --profile-use` from 5,525 to 5,433 bytes (geometric mean; `tokenizer`
//! 8,640 → 6,464) at the same run time.
//!
//! # File format
//!
//! A profile is a cgdata container ([`crate::cgdata`]: versioned,
//! checksummed, mergeable) whose target is [`PROFILE_TARGET`] (it describes
//! CLIF, not a machine) holding one [`SectionKind::Profile`] section:
//!
//! ```text
//! count     u32        functions, keys strictly increasing
//! function* name: str, hash: u64, blocks: u32, counts: blocks × u64
//! ```
//!
//! # Invariants
//!
//! - Deterministic: the profile is a sorted map, its encoding canonical;
//!   the same run gives the same bytes.
//! - Merging sums counts (saturating; a longer block list is padded with
//!   zeros), so it is commutative and associative.
//! - A profile never changes what a program computes: it only moves the
//!   size passes' decisions, and a function whose key does not match is
//!   treated as if the profile did not mention it.
//!
//! # Cost
//!
//! Hashing is linear in the function; classifying a module is linear in
//! its size plus one sort of the profile's counts (done once per build by
//! [`Thresholds::of`]).

pub mod hash;
pub mod instrument;

use std::collections::BTreeMap;

use cranelift_codegen::ir::{self, InstructionData};
use hashbrown::HashMap;

pub use hash::profile_hash;
pub use instrument::{instrument, CounterMap};

use crate::cgdata::{CgDataError, Reader, Section, SectionKind, Writer};
use crate::clif_module::ClifModule;
use crate::heat::{Heat, HotCode};

/// The target string of a profile's cgdata container.
pub const PROFILE_TARGET: &str = "clif";

/// The hot cutoff in millionths of the total count (LLVM's
/// `HotPercentileCutoff`).
pub const HOT_CUTOFF: u64 = 990_000;
/// The cold cutoff in millionths (LLVM's `ProfileSummaryCutoffCold`).
pub const COLD_CUTOFF: u64 = 999_999;
/// A function that ran fewer blocks than this, all told, is never hot,
/// whatever its share of the profile: even three times slower it would
/// cost well under a millisecond, while keeping it fast costs its merges
/// and outlining (measured on bench/: a short program such as `ledger`,
/// whose whole run is a few hundred thousand blocks, otherwise spends
/// 20% of its size on speed it cannot show).
pub const MIN_HOT_WORK: u64 = 20_000;

/// How often the blocks of one function ran, in layout order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FunctionProfile {
    pub blocks: Vec<u64>,
}

impl FunctionProfile {
    /// How often the function was entered.
    pub fn entry(&self) -> u64 {
        self.blocks.first().copied().unwrap_or(0)
    }

    /// Its largest block count.
    pub fn max(&self) -> u64 {
        self.blocks.iter().copied().max().unwrap_or(0)
    }

    /// The blocks it ran, all told (saturating): its share of the
    /// program's work, in block executions.
    pub fn work(&self) -> u64 {
        self.blocks
            .iter()
            .fold(0u64, |sum, &c| sum.saturating_add(c))
    }

    /// Adds `other`'s counts (saturating; the shorter list is padded).
    fn add(&mut self, other: &FunctionProfile) {
        if self.blocks.len() < other.blocks.len() {
            self.blocks.resize(other.blocks.len(), 0);
        }
        for (mine, theirs) in self.blocks.iter_mut().zip(&other.blocks) {
            *mine = mine.saturating_add(*theirs);
        }
    }
}

/// A function's key: its symbol name and profile hash.
pub type Key = (String, u64);

/// Block counts of functions, by key.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Profile {
    pub functions: BTreeMap<Key, FunctionProfile>,
}

impl Profile {
    /// Adds the counts of a function (summed with any already there).
    pub fn add(&mut self, name: String, hash: u64, counts: FunctionProfile) {
        self.functions.entry((name, hash)).or_default().add(&counts);
    }

    /// The hashes the profile has for the function `name`.
    pub fn hashes_of<'a>(&'a self, name: &'a str) -> impl Iterator<Item = u64> + 'a {
        let start = (name.to_string(), 0);
        self.functions
            .range(start..)
            .take_while(move |((n, _), _)| n == name)
            .map(|((_, h), _)| *h)
    }

    /// The sum of every block count (saturating).
    pub fn total(&self) -> u64 {
        self.functions
            .values()
            .flat_map(|f| &f.blocks)
            .fold(0u64, |sum, &c| sum.saturating_add(c))
    }
}

impl Section for Profile {
    const KIND: SectionKind = SectionKind::Profile;

    fn encode(&self, w: &mut Writer) {
        w.u32(self.functions.len() as u32);
        for ((name, hash), f) in &self.functions {
            w.str(name);
            w.u64(*hash);
            w.u32(f.blocks.len() as u32);
            for &count in &f.blocks {
                w.u64(count);
            }
        }
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, CgDataError> {
        // A function takes at least 16 bytes: name length, hash, block count.
        let n = r.count(16, "the function count")?;
        let mut functions = BTreeMap::new();
        let mut previous: Option<Key> = None;
        for _ in 0..n {
            let at = r.offset();
            let name = r.str("a function name")?;
            let hash = r.u64("a function hash")?;
            let blocks = r.count(8, "a block count")?;
            let counts = (0..blocks)
                .map(|_| r.u64("a block count"))
                .collect::<Result<Vec<u64>, _>>()?;
            let key = (name, hash);
            if previous.as_ref().is_some_and(|p| *p >= key) {
                return Err(CgDataError::Corrupt {
                    offset: at,
                    reason: "profile functions out of order or repeated".to_string(),
                });
            }
            previous = Some(key.clone());
            functions.insert(key, FunctionProfile { blocks: counts });
        }
        Ok(Profile { functions })
    }

    fn merge(&mut self, other: Self) {
        for ((name, hash), counts) in other.functions {
            self.add(name, hash, counts);
        }
    }
}

/// The hot and cold count thresholds of a profile (module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Thresholds {
    /// A block of a hot function that ran at least this often is hot
    /// (its calls are hot sites).
    pub hot: u64,
    /// A function whose work ([`FunctionProfile::work`]) is at least this
    /// is hot.
    pub hot_work: u64,
    /// A function none of whose blocks ran more often than this is cold.
    pub cold: u64,
}

impl Thresholds {
    /// The thresholds of `profile`, as `ProfileSummaryInfo` computes them.
    /// An empty profile (or one that counted nothing) has no hot count.
    pub fn of(profile: &Profile) -> Thresholds {
        let mut counts: Vec<u64> = profile
            .functions
            .values()
            .flat_map(|f| f.blocks.iter().copied())
            .filter(|&c| c > 0)
            .collect();
        counts.sort_unstable_by(|a, b| b.cmp(a));
        let total: u128 = counts.iter().map(|&c| u128::from(c)).sum();
        let mut works: Vec<u64> = profile
            .functions
            .values()
            .map(FunctionProfile::work)
            .filter(|&w| w > 0)
            .collect();
        works.sort_unstable_by(|a, b| b.cmp(a));
        let total_work: u128 = works.iter().map(|&w| u128::from(w)).sum();
        let hot_work = count_at_cutoff(&works, total_work, HOT_CUTOFF).unwrap_or(u64::MAX);
        Thresholds {
            hot: count_at_cutoff(&counts, total, HOT_CUTOFF).unwrap_or(u64::MAX),
            hot_work: hot_work.max(MIN_HOT_WORK),
            cold: count_at_cutoff(&counts, total, COLD_CUTOFF).unwrap_or(0),
        }
    }

    /// What `f` is: hot, cold, or neither.
    pub fn classify(&self, f: &FunctionProfile) -> Option<Heat> {
        let max = f.max();
        if f.work() >= self.hot_work {
            Some(Heat::Hot)
        } else if max <= self.cold {
            Some(Heat::Cold)
        } else {
            None
        }
    }
}

/// The count at which the running sum of `counts` (sorted decreasing)
/// reaches `cutoff` millionths of `total`; `None` when nothing was counted.
fn count_at_cutoff(counts: &[u64], total: u128, cutoff: u64) -> Option<u64> {
    if total == 0 {
        return None;
    }
    let wanted = (total * u128::from(cutoff)).div_ceil(1_000_000);
    let mut sum: u128 = 0;
    for &c in counts {
        sum += u128::from(c);
        if sum >= wanted {
            return Some(c);
        }
    }
    counts.last().copied()
}

/// Which functions a build treats as hot (see the module doc's table).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ProfileMode {
    /// Touch all code not known hot: only functions the profile shows hot
    /// are `Hot`.
    #[default]
    Optimistic,
    /// Touch only code known cold: every function the profile does not
    /// show cold is `Hot`.
    Conservative,
}

impl ProfileMode {
    pub fn name(self) -> &'static str {
        match self {
            ProfileMode::Optimistic => "optimistic",
            ProfileMode::Conservative => "conservative",
        }
    }
}

impl std::str::FromStr for ProfileMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "optimistic" => Ok(ProfileMode::Optimistic),
            "conservative" => Ok(ProfileMode::Conservative),
            _ => Err(format!(
                "unknown profile mode `{s}` (expected optimistic or conservative)"
            )),
        }
    }
}

/// A function whose name the profile knows under other hashes: it changed
/// since the profile was made.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Mismatch {
    pub module: String,
    pub function: String,
    /// Its hash now.
    pub hash: u64,
    /// The hashes the profile has for its name.
    pub profiled: Vec<u64>,
}

/// What a profile says of one module's functions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModuleHeat {
    pub hot_code: HotCode,
    /// Functions the profile no longer matches, in module order.
    pub mismatches: Vec<Mismatch>,
    /// How many functions the profile shows hot, cold, neither, and does
    /// not know (absent or mismatched).
    pub counts: HeatCounts,
    /// What the profile says of each function, in module order.
    pub functions: Vec<FunctionHeat>,
}

/// What a profile says of one function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    Hot,
    Cold,
    /// Counted, neither hot nor cold.
    Lukewarm,
    /// Not in the profile.
    Unprofiled,
    /// In the profile under another hash ([`Mismatch`]).
    Stale,
}

impl Class {
    /// The remark decision naming it.
    pub fn name(self) -> &'static str {
        match self {
            Class::Hot => "hot",
            Class::Cold => "cold",
            Class::Lukewarm => "lukewarm",
            Class::Unprofiled => "unprofiled",
            Class::Stale => "stale",
        }
    }
}

/// One function of a module, classified.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionHeat {
    pub name: String,
    pub class: Class,
    /// Its largest block count (0 when not counted).
    pub max: u64,
    /// What the build's [`HotCode`] says of it (after the mode).
    pub decided: Option<Heat>,
    /// A hot function it folds with, when that, not its own class, makes it
    /// hot (module doc).
    pub folds_with: Option<String>,
}

/// Functions by what the profile says of them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HeatCounts {
    pub hot: usize,
    pub cold: usize,
    pub lukewarm: usize,
    pub unknown: usize,
}

/// Classifies the functions of `module`, the front end's CLIF before any
/// pass, with `profile` and its `thresholds` (module doc).
pub fn hot_code(
    module: &ClifModule,
    profile: &Profile,
    thresholds: &Thresholds,
    mode: ProfileMode,
) -> ModuleHeat {
    let mut heat = ModuleHeat::default();
    for def in &module.functions {
        let Some(symbol) = module.symbols.get(def.symbol as usize) else {
            continue;
        };
        let name = &symbol.name;
        let hash = profile_hash(module, &def.func);
        // A target-specific function has no key another machine's
        // profile could match: unprofiled, never stale.
        let target_specific = module.target_specific.contains(name);
        let known = profile
            .functions
            .get(&(name.clone(), hash))
            .filter(|_| !target_specific);
        let mut stale = false;
        let class = match known {
            Some(counts) => {
                let class = thresholds.classify(counts);
                if class == Some(Heat::Hot) {
                    record_hot_sites(&def.func, counts, thresholds, name, &mut heat.hot_code);
                }
                class
            }
            None => {
                let profiled: Vec<u64> = profile.hashes_of(name).collect();
                if !profiled.is_empty() && !target_specific {
                    stale = true;
                    heat.mismatches.push(Mismatch {
                        module: module.name.clone(),
                        function: name.clone(),
                        hash,
                        profiled,
                    });
                }
                None
            }
        };
        let counts = &mut heat.counts;
        let kind = match (known.is_some(), class) {
            (_, Some(Heat::Hot)) => Class::Hot,
            (_, Some(Heat::Cold)) => Class::Cold,
            (true, None) => Class::Lukewarm,
            (false, None) if stale => Class::Stale,
            (false, None) => Class::Unprofiled,
        };
        match kind {
            Class::Hot => counts.hot += 1,
            Class::Cold => counts.cold += 1,
            Class::Lukewarm => counts.lukewarm += 1,
            Class::Unprofiled | Class::Stale => counts.unknown += 1,
        }
        let decided = match (mode, kind) {
            (_, Class::Hot) => Some(Heat::Hot),
            (_, Class::Cold) => Some(Heat::Cold),
            (ProfileMode::Conservative, _) => Some(Heat::Hot),
            (ProfileMode::Optimistic, Class::Lukewarm) => Some(Heat::Cold),
            (ProfileMode::Optimistic, Class::Unprofiled | Class::Stale) => None,
        };
        if let Some(h) = decided {
            heat.hot_code.functions.insert(name.clone(), h);
        }
        heat.functions.push(FunctionHeat {
            name: name.clone(),
            class: kind,
            max: known.map_or(0, FunctionProfile::max),
            decided,
            folds_with: None,
        });
    }
    heat_folded_twins(module, &mut heat);
    heat
}

/// Makes every function that folds with a hot one hot too (module doc).
fn heat_folded_twins(module: &ClifModule, heat: &mut ModuleHeat) {
    let classes = crate::fmerge::icf::classes(module);
    let class_of: HashMap<&str, u32> = module
        .functions
        .iter()
        .zip(&classes)
        .filter_map(|(def, &class)| {
            let symbol = module.symbols.get(def.symbol as usize)?;
            Some((symbol.name.as_str(), class))
        })
        .collect();
    // The first hot function of each folding class, in module order.
    let mut hot_of_class: HashMap<u32, String> = HashMap::new();
    for f in &heat.functions {
        if f.decided == Some(Heat::Hot) {
            hot_of_class
                .entry(class_of[f.name.as_str()])
                .or_insert_with(|| f.name.clone());
        }
    }
    for f in &mut heat.functions {
        let twin = hot_of_class.get(&class_of[f.name.as_str()]);
        if let (Some(twin), false) = (twin, f.decided == Some(Heat::Hot)) {
            f.decided = Some(Heat::Hot);
            f.folds_with = Some(twin.clone());
            heat.hot_code.functions.insert(f.name.clone(), Heat::Hot);
        }
    }
}

/// Records the calls in the hot blocks of `func` as hot sites of `caller`.
fn record_hot_sites(
    func: &ir::Function,
    counts: &FunctionProfile,
    thresholds: &Thresholds,
    caller: &str,
    hot: &mut HotCode,
) {
    for (i, block) in func.layout.blocks().enumerate() {
        if counts.blocks.get(i).is_none_or(|&c| c < thresholds.hot) {
            continue;
        }
        for inst in func.layout.block_insts(block) {
            if matches!(
                func.dfg.insts[inst],
                InstructionData::Call { .. } | InstructionData::TryCall { .. }
            ) {
                hot.hot_sites
                    .entry(caller.to_string())
                    .or_default()
                    .insert(inst.as_u32());
            }
        }
    }
}

/// Adds `other` to `into`: the HotCode of a program from those of its
/// modules. A function two modules classify differently (two local
/// functions of one name) is hot: the safe answer for run time.
pub fn union_hot_code(into: &mut HotCode, other: HotCode) {
    for (name, heat) in other.functions {
        into.functions
            .entry(name)
            .and_modify(|h| *h = (*h).min(heat))
            .or_insert(heat);
    }
    for (caller, sites) in other.hot_sites {
        into.hot_sites.entry(caller).or_default().extend(sites);
    }
}

#[cfg(test)]
pub(crate) mod tests;
