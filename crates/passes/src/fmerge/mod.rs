//! Similar-function merging on CLIF: F3M's MinHash/LSH candidate search,
//! HyFM's per-block alignment and code generation, the thesis' cost model
//! as a filter and measured aarch64 bytes as the decision.
//!
//! Sources (full references in docs/DESIGN.md):
//! - [F3M] Sean Stirling, Rodrigo C. O. Rocha, Kim Hazelwood, Hugh Leather,
//!   Michael O'Boyle, Pavlos Petoumenos, *F3M: Fast Focused Function
//!   Merging*, CGO 2022 (`shared/papers/f3m-minhash-lsh-merging.txt`):
//!   fingerprints §III-B, LSH §III-C, adaptive parameters §III-D, HyFM's
//!   SSA bugs §III-E.
//! - [HYFM] Rodrigo C. O. Rocha, Pavlos Petoumenos, Zheng Wang, Murray Cole,
//!   Kim Hazelwood, Hugh Leather, *HyFM: Function Merging for Free*, LCTES
//!   2021: block pairing and alignment ([`align`]), code generation
//!   ([`codegen`]), which follows [SALSSA] (*Effective Function Merging in
//!   the SSA Form*, PLDI 2020).
//! - [ROCHA-PHD] Rodrigo C. O. Rocha, PhD thesis on function merging,
//!   University of Edinburgh, 2021
//!   (`shared/papers/merging-cost-model-and-ranking.txt`), chapter
//!   "Optimisation Strategy": the profitability model ([`profit`]), ranking
//!   and the exploration threshold; [FMSA] (CGO 2019) §4.4 for the model's
//!   first form.
//!
//! `merge` (the constant merger) folds functions that differ only in
//! constants; this pass takes what it left: functions that differ in types,
//! operations, blocks or parameters.
//!
//! # Notation
//!
//! A *candidate* is a function the pass may merge (see [`ineligible`]).
//! Merging `f0` (the query) and `f1` (a ranked candidate) gives `M`, named
//! `f0.Tfm` ([`MERGED_SUFFIX`]), with a last parameter `fid` choosing the
//! side; each `fk` becomes a thunk or is deleted ([`rewrite`]).
//!
//! # Algorithm (the thesis' exploration framework with F3M's search)
//!
//! 1. Candidates are fingerprinted and indexed ([`search`], in name order,
//!    so results do not depend on the module's function order). Functions
//!    the linker's identical-code folding shares with another are left to
//!    it ([`icf`]).
//! 2. Worklist in name order: for a live candidate `f0`, rank its
//!    candidates by estimated similarity and try the first `N`
//!    ([`FmergeOptions::exploration`]), stopping at the first merge that
//!    pays. Each try: align; with [`FmergeOptions::screen_aligned`]
//!    (`-Os`), reject it if the model's `Δ` estimated from the alignment
//!    ([`profit::aligned_saving`]) is clear below the threshold; generate
//!    `M`; verify it; choose
//!    thunk or deletion per side; the model's `Δ` must be positive; then
//!    the bytes must shrink: measured, or estimated by
//!    [`crate::size_model::merge_benefit`] where its error range is clear
//!    of the threshold or a redirected caller's measuring budget is spent
//!    ([`FmergeOptions::decide`]). One remark per try.
//! 3. On success `f0` and `f1` leave the index and `M` enters it and the
//!    worklist (the thesis' feedback loop: a merged function can merge
//!    again, which is how three functions merge), up to
//!    [`FmergeOptions::max_members`] originals per merged function: each
//!    level adds an identifier parameter and a level of selects, and a
//!    chain of re-merges would redirect every earlier thunk again.
//! 4. Deleted functions and their symbols are removed at the end.
//!
//! # Invariants
//!
//! - Every transformation keeps semantics for each side: `M(args, k)`
//!   computes `fk(args)` (widened results aside, which thunks and redirected
//!   callers narrow), traps where `fk` trapped with the same code, and reads
//!   no value that side `k` did not define (see [`codegen`]).
//! - `.Tgm` bodies and thunks of either merger are not candidates: bodies
//!   are meant to be folded by the linker across modules, and thunks are
//!   already minimal. Running the pass twice merges nothing more on the
//!   test corpus.
//! - Deterministic: candidates, buckets and rankings are ordered by names
//!   and insertion; hash maps are only looked up, never iterated.
//!
//! # Cost
//!
//! Fingerprinting is linear in the module; LSH ranking near-linear (see
//! [`search`]). Each try aligns (`O(n·m)` per block pair), generates code,
//! verifies, and compiles `M`, the thunks and redirected callers with
//! Cranelift when the model lets it through; at most `N` tries per
//! function. A caller is compiled again for each merge that redirects its
//! calls, so the compiled instructions of one caller are bounded by
//! [`FmergeOptions::measure_budget`] (`O(|f|)`); beyond it the merges that
//! redirect its calls are decided on the estimate (issue 34: a function
//! calling `n` merged functions cost `n` compilations of it).

pub mod align;
pub mod codegen;
pub mod fingerprint;
pub mod icf;
pub mod profit;
pub mod regions;
pub mod rewrite;
pub mod search;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cranelift_codegen::ir::{
    ArgumentPurpose, Function, GlobalValueData, InstructionData, Opcode, Signature,
};
use cranelift_codegen::isa::{CallConv, TargetIsa};
use cranelift_codegen::settings;
use hashbrown::HashMap;

use crate::clif_module::{count_insts, ClifModule, FunctionDef, Linkage, SymbolKind};
use crate::heat::HotCode;
use crate::merge::hash;
use crate::merge::BODY_SUFFIX;
use crate::remark::Remark;
use crate::size_model::{self, Estimate};
pub use crate::size_model::{Decide, MeasureBudget};

/// The pass's name in remarks and on the command line.
const PASS: &str = "fmerge";

pub use align::AlignMode;
pub use search::{LshParams, Search, SearchIndex};

/// The suffix of merged functions.
pub const MERGED_SUFFIX: &str = ".Tfm";

/// Bytes the model charges per redirected call site (the identifier).
const CALL_SITE_COST: i64 = 4;

/// Options of the pass.
#[derive(Clone, Debug, PartialEq)]
pub struct FmergeOptions {
    pub search: Search,
    /// Candidates tried per function (the thesis' exploration threshold:
    /// 89% of its merges were with the first candidate, 98% within five).
    pub exploration: usize,
    pub align: AlignMode,
    /// Functions with fewer non-constant instructions are not candidates.
    pub min_insts: usize,
    /// A merge must save more than this many measured bytes.
    pub min_benefit: i64,
    /// At most this many parameters in `M`, the identifier included.
    pub max_params: usize,
    /// At most this many original functions in one merged function: 2
    /// merges pairs only; more lets merged functions merge again (the
    /// thesis' feedback loop), each time with one more identifier
    /// parameter and one more level of selects and dispatches.
    pub max_members: usize,
    /// Measure every try, even those the model rejects (to evaluate the
    /// model; decisions are unchanged).
    pub measure_all: bool,
    /// How a try the thesis' model lets through is decided: by compiling
    /// `M`, the thunks and the redirected callers ([`Decide::Measure`]), by
    /// the size model's estimate of the bytes saved where its error range
    /// is clear of [`FmergeOptions::min_benefit`] and compiling the others
    /// ([`Decide::EstimateThenMeasure`], `-Oz`), or on the estimate alone
    /// ([`Decide::Estimate`]). Both estimating modes take a try on its
    /// estimate once a redirected caller's measuring budget is spent.
    pub decide: Decide,
    /// What compiling one caller's redirected versions may cost
    /// ([`Decide::EstimateThenMeasure`]).
    pub measure_budget: MeasureBudget,
    /// Reject a try before generating `M` when the thesis' `Δ` estimated
    /// from the alignment ([`profit::aligned_saving`]) is at most the
    /// threshold less its error range ([`profit::ALIGNED_MARGIN`]): code
    /// generation is most of a try's time, and most tries are rejected
    /// (`-Os`; off, every aligned pair is generated, as `-Oz` does).
    pub screen_aligned: bool,
    /// Thunks of tail-convention functions may `return_call` `M` (see
    /// `merge::MergeOptions::tail_calls`).
    pub tail_calls: bool,
    /// A C-convention thunk's call and return become a jump in the machine
    /// code (`merge::MergeOptions::sibling_calls`): such thunks are priced
    /// as the tail-calling thunk they become ([`price_as_jump`]).
    pub sibling_calls: bool,
    /// Functions not to touch: the hook for hot code (profile or static
    /// hotness), where a merge's dispatch branches would cost time.
    pub exclude: BTreeSet<String>,
    /// What is known of how often code runs ([`crate::heat`]): a merge of
    /// a function a profile knows hot must dispatch by region only
    /// ([`FmergeOptions::hot_regions`]; otherwise such functions are not
    /// candidates).
    pub heat: Arc<HotCode>,
    /// Region-level dispatch ([`regions`]): where the two functions
    /// differ only inside corresponding single-entry single-exit regions,
    /// `M` is also generated with one test per region, and the smaller of
    /// the two forms the rules allow is kept. Off: one test per differing
    /// instruction only (SalSSA's code generation), except for pairs a
    /// profile knows hot ([`FmergeOptions::hot_regions`]).
    pub regions: bool,
    /// The static estimate of hot code (`-Os`): a merge whose `M` would
    /// test the identifier in every iteration of a loop is refused — an
    /// instruction-level dispatch, a `select` of values the loop computes,
    /// a `select` as a divisor ([`codegen::FidTests::per_iteration`]); a
    /// region's entry or a `select` of loop-invariant values (which
    /// Cranelift hoists) is allowed.
    pub loops_untested: bool,
    /// With [`FmergeOptions::loops_untested`]: a region entered inside a
    /// loop must have at least this many CLIF instructions on each side
    /// ([`codegen::FidTests::smallest_region_in_loop`]), or the merge is
    /// refused: the test and the jump to the join are paid on every
    /// iteration, against a region as small as an inlined comparison
    /// (bench/pqueue at `-Os`: `sift_down<i64, lt>` merged with
    /// `sift_down<i64, flip<lt>>`, one `icmp` each, ran 1.19× `-O2`'s
    /// executed blocks). 0: any region may be entered in a loop.
    pub region_min_insts_in_loop: usize,
    /// Functions a profile knows hot are candidates, for merges whose `M`
    /// does not test the identifier on every call
    /// ([`codegen::FidTests::per_call`]: regions' entries and
    /// loop-invariant `select`s only); off: they are not candidates.
    pub hot_regions: bool,
}

impl Default for FmergeOptions {
    fn default() -> Self {
        FmergeOptions {
            search: Search::LshAdaptive,
            exploration: 5,
            align: AlignMode::NeedlemanWunsch,
            min_insts: 3,
            min_benefit: 0,
            max_params: 16,
            max_members: 3,
            measure_all: false,
            decide: Decide::default(),
            measure_budget: MeasureBudget::default(),
            screen_aligned: false,
            tail_calls: true,
            sibling_calls: true,
            exclude: BTreeSet::new(),
            heat: Arc::default(),
            regions: true,
            loops_untested: false,
            region_min_insts_in_loop: 0,
            hot_regions: true,
        }
    }
}

/// Counts of what the pass did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FmergeStats {
    pub functions: usize,
    pub candidates: usize,
    /// Fingerprint comparisons in the search.
    pub comparisons: u64,
    /// Functions left out because the linker folds them with another.
    pub folded: usize,
    /// Pairs aligned and given to code generation.
    pub attempted: usize,
    /// Pairs code generation refused (types, parameters, nothing aligned).
    pub refused: usize,
    /// Pairs whose merged function was generated (the costly part of a
    /// try; [`FmergeOptions::screen_aligned`] spares the others).
    pub generated: usize,
    /// Of the tries rejected by the model, those rejected on its estimate
    /// from the alignment, without generating `M`.
    pub screened: usize,
    pub rejected_by_model: usize,
    pub rejected_by_measurement: usize,
    /// Tries the size model's estimate rejected (without compiling).
    pub rejected_by_estimate: usize,
    /// Of the merges and rejections after the thesis' model, those taken on
    /// the size model's estimate.
    pub estimated: usize,
    pub merged: usize,
    /// Of the merges, those whose `M` dispatches by region.
    pub by_region: usize,
    pub thunks: usize,
    pub deleted: usize,
    pub redirected_calls: usize,
    /// Merged functions that failed Cranelift's verifier (a bug; never
    /// committed).
    pub verifier_failures: usize,
    /// Sums over the merges made.
    pub predicted_bytes: i64,
    pub measured_bytes: i64,
}

impl FmergeStats {
    pub fn accumulate(&mut self, o: &FmergeStats) {
        self.functions += o.functions;
        self.candidates += o.candidates;
        self.comparisons += o.comparisons;
        self.folded += o.folded;
        self.attempted += o.attempted;
        self.refused += o.refused;
        self.generated += o.generated;
        self.screened += o.screened;
        self.rejected_by_model += o.rejected_by_model;
        self.rejected_by_measurement += o.rejected_by_measurement;
        self.rejected_by_estimate += o.rejected_by_estimate;
        self.estimated += o.estimated;
        self.merged += o.merged;
        self.by_region += o.by_region;
        self.thunks += o.thunks;
        self.deleted += o.deleted;
        self.redirected_calls += o.redirected_calls;
        self.verifier_failures += o.verifier_failures;
        self.predicted_bytes += o.predicted_bytes;
        self.measured_bytes += o.measured_bytes;
    }
}

impl fmt::Display for FmergeStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} functions, {} candidates ({} left to ICF), {} comparisons, {} attempted, {} refused, \
             {} rejected by the model, {} rejected by measurement, {} merged ({} by region, {} thunks, \
             {} deleted, {} calls redirected), predicted {} bytes, measured {} bytes",
            self.functions,
            self.candidates,
            self.folded,
            self.comparisons,
            self.attempted,
            self.refused,
            self.rejected_by_model,
            self.rejected_by_measurement,
            self.merged,
            self.by_region,
            self.thunks,
            self.deleted,
            self.redirected_calls,
            self.predicted_bytes,
            self.measured_bytes
        )?;
        if self.screened > 0 {
            write!(
                f,
                ", {} of the rejections before code generation ({} pairs generated)",
                self.screened, self.generated
            )?;
        }
        if self.estimated > 0 {
            write!(
                f,
                ", {} decided on estimates ({} rejected)",
                self.estimated, self.rejected_by_estimate
            )?;
        }
        if self.verifier_failures > 0 {
            write!(f, ", {} VERIFIER FAILURES", self.verifier_failures)?;
        }
        Ok(())
    }
}

/// What happened to one pair.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    Merged,
    Refused(String),
    RejectedByModel,
    RejectedByMeasurement,
    /// The size model's estimate is surely not worth it.
    RejectedByEstimate,
}

/// One tried pair.
#[derive(Clone, Debug, PartialEq)]
pub struct Attempt {
    pub first: String,
    pub second: String,
    pub similarity: f64,
    /// The model's `Δ` in bytes (after code generation).
    pub predicted: Option<i64>,
    /// The measured benefit in bytes (with an ISA, when the model let the
    /// pair through or [`FmergeOptions::measure_all`] is set).
    pub measured: Option<i64>,
    /// The size model's estimate of the benefit, with its error range
    /// (after code generation).
    pub estimated: Option<Estimate>,
    /// The thesis' `Δ` estimated from the alignment, before code
    /// generation ([`profit::aligned_saving`]).
    pub aligned: Option<i64>,
    /// Whether the decision was taken on the estimate.
    pub on_estimate: bool,
    pub decision: Decision,
    /// For a merge: the merged function and what became of each side.
    pub detail: String,
}

/// Time spent per phase.
#[derive(Clone, Copy, Debug, Default)]
pub struct FmergeTimes {
    /// Fingerprinting, indexing and ranking.
    pub search: Duration,
    /// Alignment, code generation, verification, the model.
    pub merge: Duration,
    /// Compiling with Cranelift to measure.
    pub measure: Duration,
}

impl FmergeTimes {
    pub fn accumulate(&mut self, o: &FmergeTimes) {
        self.search += o.search;
        self.merge += o.merge;
        self.measure += o.measure;
    }
}

/// The result of [`run`].
#[derive(Clone, Debug, Default)]
pub struct FmergeReport {
    pub stats: FmergeStats,
    pub attempts: Vec<Attempt>,
    /// One remark per attempt, named by its first function.
    pub remarks: Vec<Remark>,
    pub times: FmergeTimes,
}

/// Runs the pass on `module`. With `isa`, merges are measured in its
/// bytes; without, the model decides alone.
pub fn run(
    module: &mut ClifModule,
    isa: Option<&dyn TargetIsa>,
    options: &FmergeOptions,
) -> FmergeReport {
    let mut pass = Pass::new(module, isa, options);
    pass.explore();
    pass.finish()
}

/// A family of similar functions: functions of a set that are alike
/// (linked by the search's ranking at a least similarity, or merged by
/// [`run`] on the set), and the merged functions [`run`] makes of them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Family {
    /// The merged functions' members: a family can take more than one
    /// merged function (one holds at most [`FmergeOptions::max_members`]
    /// originals, and the search pairs the closest first).
    pub groups: Vec<MergedGroup>,
}

/// The originals [`run`] merges into one merged function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MergedGroup {
    /// The members (indices into `module.functions`), in name order.
    pub members: Vec<usize>,
    /// The bytes its merges save, as [`run`] measured (or, where it
    /// decided on the estimate, estimated) each.
    pub saves: i64,
    /// How many merges made it (one less than its members).
    pub merges: usize,
    /// After each merge in the order [`run`] made them: the members merged
    /// so far (in name order) and what those merges save; the last step is
    /// the whole group.
    pub steps: Vec<(Vec<usize>, i64)>,
}

impl Family {
    /// Every member of the family's merged functions, group by group.
    pub fn members(&self) -> impl Iterator<Item = usize> + '_ {
        self.groups.iter().flat_map(|g| g.members.iter().copied())
    }
}

/// The families of similar functions among `among` (indices into
/// `module.functions`), each with the merged functions the pass makes of
/// it: functions are linked when the search ranks one at least
/// `min_similarity` alike to the other, and a family is a linked set; the
/// pass then runs on a copy of `module` where `prepare` has rewritten the
/// families' members (what the passes before this one do to them) and
/// every other function is excluded; each merge joins its originals'
/// groups (and families). For another pass that prices merging a family
/// against what it would do to its members (`crate::price`): families
/// with at least one merge (members of no merge left out), in the order
/// of their first members' names.
pub fn families(
    module: &ClifModule,
    isa: &dyn TargetIsa,
    options: &FmergeOptions,
    among: &[usize],
    min_similarity: f64,
    prepare: &dyn Fn(&mut Function),
) -> Vec<Family> {
    let name_of = |i: usize| {
        module.symbols[module.functions[i].symbol as usize]
            .name
            .as_str()
    };
    let links = similar_links(module, options, among, min_similarity);
    let mut families = Partition::default();
    for &(a, b) in &links {
        families.join(name_of(a), name_of(b));
    }
    if families.parent.is_empty() {
        return Vec::new();
    }
    let mut options = options.clone();
    // A price is measured where it can be: the estimate that decides a
    // try clear of the threshold is not close enough to weigh a merge
    // against inlining.
    if options.decide == Decide::EstimateThenMeasure {
        options.decide = Decide::Measure;
    }
    options.exclude.extend(
        module
            .functions
            .iter()
            .map(|def| &module.symbols[def.symbol as usize].name)
            .filter(|name| !families.parent.contains_key(name.as_str()))
            .cloned(),
    );
    let mut scratch = module.clone();
    for def in &mut scratch.functions {
        let name = &module.symbols[def.symbol as usize].name;
        if families.parent.contains_key(name.as_str()) {
            prepare(&mut def.func);
        }
    }
    let mut pass = Pass::new(&mut scratch, Some(isa), &options);
    pass.explore();
    // A merged function is named after its first side (`f0.Tfm`, and
    // `f0.Tfm.Tfm` when it merges again): it stands for that original's
    // family.
    let original = |name: &str| -> String {
        let mut name = name;
        while let Some(stripped) = name.strip_suffix(MERGED_SUFFIX) {
            name = stripped;
        }
        name.to_string()
    };
    let merges: Vec<(String, String, i64)> = pass
        .report
        .attempts
        .iter()
        .filter(|a| a.decision == Decision::Merged)
        .map(|a| {
            let saves = a.measured.or(a.estimated.map(|e| e.bytes)).unwrap_or(0);
            (original(&a.first), original(&a.second), saves)
        })
        .collect();
    for (a, b, _) in &merges {
        families.join(a, b);
    }
    let mut groups = Partition::default();
    for (a, b, _) in &merges {
        families.join(a, b);
        groups.join(a, b);
    }
    let mut found: BTreeMap<String, BTreeMap<String, MergedGroup>> = BTreeMap::new();
    let mut indices: Vec<(&str, usize)> = among.iter().map(|&i| (name_of(i), i)).collect();
    indices.sort();
    for (name, i) in indices {
        if groups.parent.contains_key(name) {
            let group = found
                .entry(families.root(name))
                .or_default()
                .entry(groups.root(name))
                .or_insert_with(|| MergedGroup {
                    members: Vec::new(),
                    saves: 0,
                    merges: 0,
                    steps: Vec::new(),
                });
            group.members.push(i);
        }
    }
    let index_of: BTreeMap<&str, usize> = among.iter().map(|&i| (name_of(i), i)).collect();
    let mut merged_so_far: BTreeMap<String, BTreeSet<usize>> = BTreeMap::new();
    for (a, b, saves) in merges {
        let root = groups.root(&a);
        let group = found
            .get_mut(&families.root(&a))
            .and_then(|family| family.get_mut(&root));
        if let Some(group) = group {
            group.saves += saves;
            group.merges += 1;
            let so_far = merged_so_far.entry(root).or_default();
            so_far.extend([&a, &b].iter().filter_map(|n| index_of.get(n.as_str())));
            let mut members: Vec<usize> = so_far.iter().copied().collect();
            members.sort_by_key(|&i| name_of(i));
            group.steps.push((members, group.saves));
        }
    }
    // Roots are the least names of their sets: families and groups come
    // in the order of their first members' names.
    found
        .into_values()
        .map(|groups| Family {
            groups: groups.into_values().collect(),
        })
        .collect()
}

/// Sets of names joined by links (union-find, by name so that the result
/// does not depend on the module's function order).
#[derive(Default)]
struct Partition {
    parent: BTreeMap<String, String>,
}

impl Partition {
    fn root(&self, name: &str) -> String {
        let mut name = name.to_string();
        while let Some(up) = self.parent.get(&name).filter(|up| **up != name) {
            name = up.clone();
        }
        name
    }

    /// Joins the sets of `a` and `b`; the smaller name is the root.
    fn join(&mut self, a: &str, b: &str) {
        for n in [a, b] {
            self.parent
                .entry(n.to_string())
                .or_insert_with(|| n.to_string());
        }
        let (ra, rb) = (self.root(a), self.root(b));
        let (low, high) = match ra <= rb {
            true => (ra, rb),
            false => (rb, ra),
        };
        self.parent.insert(high, low);
    }
}

/// Pairs of candidates of `among` where the search ranks the second at
/// least `min_similarity` alike to the first.
fn similar_links(
    module: &ClifModule,
    options: &FmergeOptions,
    among: &[usize],
    min_similarity: f64,
) -> Vec<(usize, usize)> {
    let candidates: Vec<usize> = among
        .iter()
        .copied()
        .filter(|&i| {
            let def = &module.functions[i];
            ineligible(module, &def.func, def.symbol, options).is_none()
        })
        .collect();
    let mut index = SearchIndex::new(options.search, candidates.len(), options.exploration);
    for &i in &candidates {
        let func = &module.functions[i].func;
        index.insert(&fingerprint::encodings(func), frequency(options, func));
    }
    let mut links = Vec::new();
    for id in 0..candidates.len() {
        for c in index.candidates(id) {
            if c.similarity >= min_similarity {
                links.push((candidates[id], candidates[c.id]));
            }
        }
    }
    links
}

/// Why `func` (symbol `symbol` of `module`) is not a candidate, if it is not.
pub fn ineligible(
    module: &ClifModule,
    func: &Function,
    symbol: u32,
    options: &FmergeOptions,
) -> Option<&'static str> {
    let name = &module.symbols[symbol as usize].name;
    if name.ends_with(BODY_SUFFIX) {
        return Some("a constant-merge body");
    }
    if options.exclude.contains(name) {
        return Some("excluded");
    }
    if options.heat.is_hot(name) && !options.hot_regions {
        return Some("known hot (profile)");
    }
    let special = |p: &cranelift_codegen::ir::AbiParam| p.purpose != ArgumentPurpose::Normal;
    if func.signature.params.iter().any(special) || func.signature.returns.iter().any(special) {
        return Some("special-purpose parameters");
    }
    if func.layout.entry_block().is_none() {
        return Some("no body");
    }
    if !func.dynamic_stack_slots.is_empty() {
        return Some("dynamic stack slots");
    }
    let plain_globals = func.global_values.values().all(|gv| {
        matches!(
            gv,
            GlobalValueData::Symbol { .. }
                | GlobalValueData::Load { .. }
                | GlobalValueData::IAddImm { .. }
        )
    });
    if !plain_globals {
        return Some("target-specific global values");
    }
    let mut count = 0;
    for block in func.layout.blocks() {
        for inst in func.layout.block_insts(block) {
            let data = &func.dfg.insts[inst];
            match data {
                InstructionData::BranchTable { .. }
                | InstructionData::TryCall { .. }
                | InstructionData::TryCallIndirect { .. }
                | InstructionData::DynamicStackAddr { .. }
                | InstructionData::ExceptionHandlerAddress { .. } => {
                    return Some("jump tables, exceptions or dynamic stack")
                }
                _ => {}
            }
            if matches!(
                data.opcode(),
                Opcode::GetFramePointer
                    | Opcode::GetStackPointer
                    | Opcode::GetReturnAddress
                    | Opcode::StackSwitch
            ) {
                return Some("reads its own frame");
            }
            if !fingerprint::is_constant(func, inst) {
                count += 1;
            }
        }
    }
    if is_thunk(module, func) {
        return Some("a thunk");
    }
    if count < options.min_insts {
        return Some("too small");
    }
    None
}

/// A single block whose only call goes to a merged body (`.Tgm` or `.Tfm`)
/// and that otherwise only passes arguments and results on.
fn is_thunk(module: &ClifModule, func: &Function) -> bool {
    if func.layout.blocks().count() != 1 {
        return false;
    }
    let mut calls_body = false;
    for block in func.layout.blocks() {
        for inst in func.layout.block_insts(block) {
            match func.dfg.insts[inst] {
                InstructionData::Call { func_ref, .. } => {
                    let name = hash::symbol_name(module, func, &func.dfg.ext_funcs[func_ref].name);
                    if calls_body || !(name.ends_with(BODY_SUFFIX) || name.contains(MERGED_SUFFIX))
                    {
                        return false;
                    }
                    calls_body = true;
                }
                _ if fingerprint::is_constant(func, inst) => {}
                ref data => {
                    if !matches!(data.opcode(), Opcode::Return | Opcode::Ireduce) {
                        return false;
                    }
                }
            }
        }
    }
    calls_body
}

/// A function's estimated bytes.
#[derive(Clone, Copy)]
struct SideEstimates {
    /// The thesis' `c(f)` ([`profit::estimate`]).
    thesis: i64,
    /// [`size_model::function_bytes`].
    size_model: i64,
}

/// Why a pair has no plan.
enum NoPlan {
    /// Code generation or the rules refuse it.
    Refused(String),
    /// The thesis' `Δ` estimated from the alignment
    /// ([`profit::aligned_saving`]) is this far below the threshold that
    /// `M` is not generated ([`FmergeOptions::screen_aligned`]).
    Screened(i64),
}

impl From<String> for NoPlan {
    fn from(why: String) -> NoPlan {
        NoPlan::Refused(why)
    }
}

/// What a thunk that calls and returns (`thunk`, of `original` under the
/// C convention) costs once the machine pass `crate::sibcall` has made its
/// call a jump and deleted its frame: the same thunk under the `tail`
/// convention, which `return_call`s `M` (its arguments are placed as the
/// C thunk places them, two registers up). `None` when `thunk` tail-calls
/// already or its results differ from `M`'s (it adapts them after the
/// call, so the call stays a call).
fn price_as_jump(
    original: &Function,
    merged: &Signature,
    merged_symbol: u32,
    positions: &[usize],
    side: usize,
    thunk: &Function,
) -> Option<Function> {
    let calls = thunk
        .layout
        .blocks()
        .flat_map(|b| thunk.layout.block_insts(b))
        .any(|i| thunk.dfg.insts[i].opcode() == Opcode::Call);
    if !calls || original.signature.call_conv != merged.call_conv {
        return None;
    }
    let tail = |sig: &Signature| Signature {
        call_conv: CallConv::Tail,
        ..sig.clone()
    };
    let stub = Function::with_name_signature(original.name.clone(), tail(&original.signature));
    let priced = rewrite::build_thunk(&stub, &tail(merged), merged_symbol, positions, side, true);
    let tail_calls = priced
        .layout
        .blocks()
        .flat_map(|b| priced.layout.block_insts(b))
        .any(|i| priced.dfg.insts[i].opcode() == Opcode::ReturnCall);
    tail_calls.then_some(priced)
}

/// How one side of a planned merge is kept.
enum SidePlan {
    /// A thunk; and the thunk it is priced as ([`price_as_jump`]).
    Thunk {
        thunk: Box<Function>,
        priced: Box<Function>,
    },
    /// Deleted; these callers are rewritten (function index, new body).
    Deleted { sites: usize },
}

/// A merge ready to commit.
struct Plan {
    merged: codegen::Merged,
    /// `M` dispatches by region ([`regions`]).
    by_region: bool,
    /// A side is known hot: so is `M`.
    hot: bool,
    sides: [SidePlan; 2],
    /// Callers rewritten for deleted sides, final versions.
    callers: Vec<(usize, Function)>,
    /// The size model's estimate of the bytes the plan saves.
    estimate: Estimate,
    /// The thesis' `Δ` from the alignment ([`profit::aligned_saving`]).
    aligned: i64,
}

struct Pass<'m> {
    module: &'m mut ClifModule,
    isa: Option<&'m dyn TargetIsa>,
    options: &'m FmergeOptions,
    index: SearchIndex,
    /// Index id → function index in `module.functions`.
    ids: Vec<usize>,
    /// Index id → how many original functions it stands for.
    members: Vec<usize>,
    /// Measured bytes per function index (dropped when it changes).
    sizes: HashMap<usize, Option<i64>>,
    /// Estimated bytes per function index, by the thesis' model and by the
    /// size model (dropped when it changes): a function is a side of up to
    /// [`FmergeOptions::exploration`] tries, and a try's own work is
    /// otherwise linear in the aligned pair only.
    estimates: HashMap<usize, SideEstimates>,
    /// Per symbol, the functions that may name it (a superset: entries are
    /// added when a function changes, never removed).
    referrers: HashMap<u32, BTreeSet<usize>>,
    deleted: BTreeSet<usize>,
    removed_symbols: BTreeSet<u32>,
    /// The symbols data relocations target ([`rewrite::data_targets`]).
    in_data: BTreeSet<u32>,
    tried: BTreeSet<(usize, usize)>,
    /// Merged functions (by function index) with a member known hot.
    hot_merged: BTreeSet<usize>,
    /// Per caller, the CLIF instructions measuring its redirected versions
    /// may still compile ([`FmergeOptions::measure_budget`]).
    budget: HashMap<usize, u64>,
    report: FmergeReport,
}

impl<'m> Pass<'m> {
    fn new(
        module: &'m mut ClifModule,
        isa: Option<&'m dyn TargetIsa>,
        options: &'m FmergeOptions,
    ) -> Pass<'m> {
        let start = Instant::now();
        let folds = icf::folds_with_another(module);
        let mut folded = 0;
        let mut candidates: Vec<(&str, usize)> = Vec::new();
        let mut hot_remarks = Vec::new();
        for (i, d) in module.functions.iter().enumerate() {
            if let Some(why) = ineligible(module, &d.func, d.symbol, options) {
                let name = &module.symbols[d.symbol as usize].name;
                if options.heat.is_hot(name) {
                    let remark =
                        Remark::missed(PASS, "hot-function", name, why).count("hot_functions", 1);
                    hot_remarks.push(remark);
                }
                continue;
            }
            if folds[i] {
                folded += 1;
                continue;
            }
            candidates.push((module.symbols[d.symbol as usize].name.as_str(), i));
        }
        candidates.sort();
        let mut index = SearchIndex::new(options.search, candidates.len(), options.exploration);
        let mut ids = Vec::with_capacity(candidates.len());
        for &(_, i) in &candidates {
            let func = &module.functions[i].func;
            index.insert(&fingerprint::encodings(func), frequency(options, func));
            ids.push(i);
        }
        let mut report = FmergeReport {
            remarks: hot_remarks,
            ..FmergeReport::default()
        };
        report.stats.functions = module.functions.len();
        report.stats.candidates = candidates.len();
        report.stats.folded = folded;
        report.times.search = start.elapsed();
        let members = vec![1; ids.len()];
        Pass {
            index,
            ids,
            members,
            report,
            ..Pass::bare(module, isa, options)
        }
    }

    /// A pass over `module` with nothing indexed: it plans and measures
    /// pairs ([`price_pairs`]) and commits none unless [`Pass::new`] fills
    /// in its candidates.
    fn bare(
        module: &'m mut ClifModule,
        isa: Option<&'m dyn TargetIsa>,
        options: &'m FmergeOptions,
    ) -> Pass<'m> {
        let mut referrers: HashMap<u32, BTreeSet<usize>> = HashMap::new();
        for (i, def) in module.functions.iter().enumerate() {
            note_referrer(&mut referrers, i, &def.func);
        }
        let in_data = rewrite::data_targets(module);
        Pass {
            module,
            isa,
            options,
            index: SearchIndex::new(options.search, 0, options.exploration),
            ids: Vec::new(),
            members: Vec::new(),
            sizes: HashMap::new(),
            estimates: HashMap::new(),
            referrers,
            deleted: BTreeSet::new(),
            removed_symbols: BTreeSet::new(),
            in_data,
            tried: BTreeSet::new(),
            hot_merged: BTreeSet::new(),
            budget: HashMap::new(),
            report: FmergeReport::default(),
        }
    }

    /// The thesis' greedy exploration over the worklist.
    fn explore(&mut self) {
        let mut worklist: VecDeque<usize> = (0..self.ids.len()).collect();
        while let Some(id) = worklist.pop_front() {
            if !self.index.is_alive(id) {
                continue;
            }
            let start = Instant::now();
            let candidates = self.index.candidates(id);
            self.report.times.search += start.elapsed();
            for candidate in candidates {
                let key = (id.min(candidate.id), id.max(candidate.id));
                let members = self.members[id] + self.members[candidate.id];
                if members > self.options.max_members || !self.tried.insert(key) {
                    continue;
                }
                if let Some(merged) = self.attempt(id, candidate.id, candidate.similarity) {
                    if let Some(new) = merged {
                        worklist.push_back(new);
                    }
                    break;
                }
            }
        }
    }

    fn name(&self, index: usize) -> &str {
        &self.module.symbols[self.module.functions[index].symbol as usize].name
    }

    /// Tries to merge ids `a` and `b`; on success returns the new id of `M`
    /// if it is a candidate itself.
    fn attempt(&mut self, a: usize, b: usize, similarity: f64) -> Option<Option<usize>> {
        let (ia, ib) = (self.ids[a], self.ids[b]);
        let mut attempt = Attempt {
            first: self.name(ia).to_string(),
            second: self.name(ib).to_string(),
            similarity,
            predicted: None,
            measured: None,
            estimated: None,
            aligned: None,
            on_estimate: false,
            decision: Decision::Merged,
            detail: String::new(),
        };
        self.report.stats.attempted += 1;
        let start = Instant::now();
        let planned = self.plan(ia, ib);
        self.report.times.merge += start.elapsed();
        let (plan, predicted) = match planned {
            Ok(p) => p,
            Err(NoPlan::Refused(why)) => {
                self.report.stats.refused += 1;
                attempt.decision = Decision::Refused(why);
                self.record(attempt);
                return None;
            }
            Err(NoPlan::Screened(aligned)) => {
                self.report.stats.rejected_by_model += 1;
                self.report.stats.screened += 1;
                attempt.aligned = Some(aligned);
                attempt.decision = Decision::RejectedByModel;
                self.record(attempt);
                return None;
            }
        };
        attempt.aligned = Some(plan.aligned);
        attempt.predicted = Some(predicted);
        attempt.estimated = Some(plan.estimate);
        if predicted > 0 || self.options.measure_all {
            if let Err(why) = verified(&plan.merged.func, self.isa, &mut self.report.stats) {
                self.report.stats.refused += 1;
                attempt.decision = Decision::Refused(why);
                self.record(attempt);
                return None;
            }
        }
        let on_estimate = self.isa.is_some() && predicted > 0 && self.takes_on_estimate(&plan);
        let measure =
            self.isa.is_some() && ((predicted > 0 && !on_estimate) || self.options.measure_all);
        if measure {
            let start = Instant::now();
            attempt.measured = self.measure(ia, ib, &plan);
            self.report.times.measure += start.elapsed();
            self.charge_callers(&plan);
        }
        let min_benefit = self.options.min_benefit;
        attempt.on_estimate = on_estimate;
        attempt.decision = if predicted <= 0 {
            Decision::RejectedByModel
        } else if on_estimate {
            self.report.stats.estimated += 1;
            match plan.estimate.bytes > min_benefit {
                true => Decision::Merged,
                false => Decision::RejectedByEstimate,
            }
        } else {
            match (self.isa, attempt.measured) {
                (None, _) => Decision::Merged,
                (Some(_), Some(m)) if m > min_benefit => Decision::Merged,
                (Some(_), Some(_)) => Decision::RejectedByMeasurement,
                (Some(_), None) => Decision::Refused("Cranelift cannot compile it".into()),
            }
        };
        match attempt.decision {
            Decision::RejectedByModel => self.report.stats.rejected_by_model += 1,
            Decision::RejectedByMeasurement => self.report.stats.rejected_by_measurement += 1,
            Decision::RejectedByEstimate => self.report.stats.rejected_by_estimate += 1,
            Decision::Refused(_) => self.report.stats.refused += 1,
            _ => {}
        }
        if attempt.decision != Decision::Merged {
            self.record(attempt);
            return None;
        }
        self.report.stats.predicted_bytes += predicted;
        self.report.stats.measured_bytes += attempt.measured.unwrap_or(0);

        let new = self.commit(a, b, plan, &mut attempt);
        self.record(attempt);
        Some(new)
    }

    /// Aligns, generates and verifies `M`, plans each side; returns the plan
    /// and the model's `Δ`.
    fn plan(&mut self, ia: usize, ib: usize) -> Result<(Plan, i64), NoPlan> {
        let [ea, eb] = [ia, ib].map(|i| self.estimates_of(i));
        let module = &*self.module;
        let (fa, fb) = (&module.functions[ia], &module.functions[ib]);
        let members = [fa.symbol, fb.symbol];
        let merged_symbol = module.symbols.len() as u32;
        let context = align::KeyContext {
            members,
            slot_partner: align::pair_stack_slots(&fa.func, &fb.func),
        };
        let mut interner = align::Interner::default();
        let v0 = align::FuncView::new(&fa.func, 0, &context, &mut interner);
        let v1 = align::FuncView::new(&fb.func, 1, &context, &mut interner);
        let alignment = align::align(&v0, &v1, self.options.align);
        if alignment.matched == 0 {
            return Err(NoPlan::Refused("no blocks align".into()));
        }
        let aligned = profit::aligned_saving([&v0, &v1], &alignment);
        if self.options.screen_aligned
            && aligned + profit::ALIGNED_MARGIN <= self.options.min_benefit
        {
            return Err(NoPlan::Screened(aligned));
        }
        self.report.stats.generated += 1;
        let generate = |alignment: &align::Alignment, regions: &regions::RegionPlan| {
            codegen::generate(&codegen::Pair {
                views: [&v0, &v1],
                alignment,
                slot_partner: &context.slot_partner,
                members,
                merged_symbol,
                max_params: self.options.max_params,
                regions,
            })
        };
        let hot = self.is_hot(ia) || self.is_hot(ib);
        let by_instruction = generate(&alignment, &regions::RegionPlan::default());
        // A hot pair may only merge by region (`FmergeOptions::hot_regions`),
        // whatever `regions` says of the others.
        let by_region = match self.options.regions || (hot && self.options.hot_regions) {
            true => regions::plan([&v0, &v1], self.options.align)
                .map(|(alignment, plan)| generate(&alignment, &plan)),
            false => None,
        };
        // Release builds verify only what the model lets through (below);
        // debug builds (the tests) verify every merged function built.
        if cfg!(debug_assertions) {
            for form in by_instruction.iter().chain(by_region.iter().flatten()) {
                verified(&form.func, self.isa, &mut self.report.stats)?;
            }
        }
        let (merged, by_region) = self.choose_form(by_instruction, by_region, hot)?;
        let mut callers: Vec<(usize, Function)> = Vec::new();
        let mut epsilon = 0;
        let mut sides = Vec::with_capacity(2);
        for (k, def) in [fa, fb].into_iter().enumerate() {
            let thunk = rewrite::build_thunk(
                &def.func,
                &merged.func.signature,
                merged_symbol,
                &merged.positions[k],
                k,
                self.options.tail_calls,
            );
            let priced = match self.options.sibling_calls {
                true => price_as_jump(
                    &def.func,
                    &merged.func.signature,
                    merged_symbol,
                    &merged.positions[k],
                    k,
                    &thunk,
                ),
                false => None,
            }
            .unwrap_or_else(|| thunk.clone());
            let thunk_cost = profit::estimate(&priced);
            let redirect = self.redirect(
                def.symbol,
                &def.func,
                [ia, ib],
                &merged,
                k,
                merged_symbol,
                &callers,
            );
            match redirect {
                Some((rewritten, sites)) if CALL_SITE_COST * sites as i64 <= thunk_cost => {
                    epsilon += CALL_SITE_COST * sites as i64;
                    for (caller, func) in rewritten {
                        match callers.iter_mut().find(|(c, _)| *c == caller) {
                            Some(entry) => entry.1 = func,
                            None => callers.push((caller, func)),
                        }
                    }
                    sides.push(SidePlan::Deleted { sites });
                }
                _ => {
                    epsilon += thunk_cost;
                    sides.push(SidePlan::Thunk {
                        thunk: Box::new(thunk),
                        priced: Box::new(priced),
                    });
                }
            }
        }
        let predicted = ea.thesis + eb.thesis - profit::estimate(&merged.func) - epsilon;
        let thunks: i64 = sides
            .iter()
            .map(|side| match side {
                SidePlan::Thunk { priced, .. } => size_model::function_bytes(priced),
                SidePlan::Deleted { .. } => 0,
            })
            .sum();
        let redirected: usize = sides
            .iter()
            .map(|side| match side {
                SidePlan::Thunk { .. } => 0,
                SidePlan::Deleted { sites } => *sites,
            })
            .sum();
        let estimate = size_model::merge_benefit(
            ea.size_model + eb.size_model,
            size_model::function_bytes(&merged.func),
            thunks,
            redirected,
        );
        let [s0, s1]: [SidePlan; 2] = sides.try_into().ok().expect("two sides");
        Ok((
            Plan {
                merged,
                by_region,
                hot,
                sides: [s0, s1],
                callers,
                estimate,
                aligned,
            },
            predicted,
        ))
    }

    /// The estimates of function `index` as it is now.
    fn estimates_of(&mut self, index: usize) -> SideEstimates {
        let func = &self.module.functions[index].func;
        *self
            .estimates
            .entry(index)
            .or_insert_with(|| SideEstimates {
                thesis: profit::estimate(func),
                size_model: size_model::function_bytes(func),
            })
    }

    /// Whether function `index` is known hot: by the profile, or merged
    /// from a function that is.
    fn is_hot(&self, index: usize) -> bool {
        self.options.heat.is_hot(self.name(index)) || self.hot_merged.contains(&index)
    }

    /// The form of `M` to keep: of those generated (per instruction, and by
    /// region if the pair has a region plan), the ones the rules allow —
    /// with `hot`, no test of the identifier on every call; with
    /// [`FmergeOptions::loops_untested`], none on every iteration of a
    /// loop — the smaller by the model, by region on a tie. Also whether
    /// it dispatches by region.
    fn choose_form(
        &self,
        by_instruction: Result<codegen::Merged, String>,
        by_region: Option<Result<codegen::Merged, String>>,
        hot: bool,
    ) -> Result<(codegen::Merged, bool), String> {
        let allowed = |merged: &codegen::Merged| -> Result<(), String> {
            let tests = merged.tests;
            if hot && tests.per_call() > 0 {
                return Err(format!(
                    "a function known hot (profile): the merged function would test the \
                     identifier {} time(s) on every call",
                    tests.per_call()
                ));
            }
            if self.options.loops_untested && tests.per_iteration() > 0 {
                return Err(format!(
                    "the merged function would test the identifier {} time(s) in every \
                     iteration of a loop",
                    tests.per_iteration()
                ));
            }
            if let Some(insts) = tests.smallest_region_in_loop.filter(|&insts| {
                self.options.loops_untested && insts < self.options.region_min_insts_in_loop
            }) {
                return Err(format!(
                    "the merged function would enter a region of {insts} instruction(s) in \
                     every iteration of a loop (at least {})",
                    self.options.region_min_insts_in_loop
                ));
            }
            Ok(())
        };
        let mut refusal = None;
        let mut best: Option<(codegen::Merged, bool, i64)> = None;
        let forms = by_region.map(|f| (f, true)).into_iter();
        for (form, region) in forms.chain([(by_instruction, false)]) {
            let checked = form.and_then(|m| allowed(&m).map(|()| m));
            match checked {
                Ok(merged) => {
                    let size = profit::estimate(&merged.func);
                    if best.as_ref().is_none_or(|b| size < b.2) {
                        best = Some((merged, region, size));
                    }
                }
                Err(why) => {
                    refusal.get_or_insert(why);
                }
            }
        }
        match best {
            Some((merged, region, _)) => Ok((merged, region)),
            None => Err(refusal.unwrap_or_else(|| "no form of the merged function".into())),
        }
    }

    /// If side `k` (symbol `symbol`) may be deleted: its callers with every
    /// call redirected to `M` (starting from the versions in `pending`),
    /// and the number of call sites.
    #[allow(clippy::too_many_arguments)]
    fn redirect(
        &self,
        symbol: u32,
        func: &Function,
        sides: [usize; 2],
        merged: &codegen::Merged,
        k: usize,
        merged_symbol: u32,
        pending: &[(usize, Function)],
    ) -> Option<(Vec<(usize, Function)>, usize)> {
        if !rewrite::may_delete(self.module, symbol, func, &merged.func.signature) {
            return None;
        }
        let current = |i: usize| -> &Function {
            pending
                .iter()
                .find(|(c, _)| *c == i)
                .map_or(&self.module.functions[i].func, |(_, f)| f)
        };
        let referrers = self.referrers.get(&symbol).into_iter().flatten();
        let others = referrers
            .copied()
            .filter(|i| !sides.contains(i) && !self.deleted.contains(i))
            .map(|i| (i, current(i)));
        // `M` itself names the sides only by taking an address.
        let merged_entry = std::iter::once((usize::MAX, &merged.func));
        let callers =
            rewrite::direct_call_sites(&self.in_data, symbol, others.chain(merged_entry))?;
        if callers.iter().any(|(i, _)| *i == usize::MAX) {
            return None;
        }
        let sites = callers.iter().map(|(_, s)| s.len()).sum();
        let rewritten = callers
            .iter()
            .map(|(i, s)| {
                let f = rewrite::redirect_calls(
                    current(*i),
                    symbol,
                    s,
                    &merged.func.signature,
                    merged_symbol,
                    &merged.positions[k],
                    k,
                );
                (*i, f)
            })
            .collect();
        Some((rewritten, sites))
    }

    /// Whether a try the thesis' model let through is decided on the size
    /// model's estimate ([`FmergeOptions::decide`]).
    fn takes_on_estimate(&mut self, plan: &Plan) -> bool {
        let min_benefit = self.options.min_benefit;
        match self.options.decide {
            Decide::Measure => false,
            Decide::Estimate => true,
            Decide::EstimateThenMeasure => {
                plan.estimate.surely_above(min_benefit)
                    || plan.estimate.surely_at_most(min_benefit)
                    || plan
                        .callers
                        .iter()
                        .any(|(caller, _)| self.budget_left(*caller) == 0)
            }
        }
    }

    /// What measuring `caller`'s redirected versions may still compile.
    fn budget_left(&mut self, caller: usize) -> u64 {
        let budget = self.options.measure_budget;
        let func = &self.module.functions[caller].func;
        *self
            .budget
            .entry(caller)
            .or_insert_with(|| budget.of(count_insts(func)))
    }

    /// Charges each redirected caller of a measured plan its versions'
    /// instructions (before and after).
    fn charge_callers(&mut self, plan: &Plan) {
        for (caller, func) in &plan.callers {
            let cost =
                (count_insts(func) + count_insts(&self.module.functions[*caller].func)) as u64;
            let left = self.budget_left(*caller);
            self.budget.insert(*caller, left.saturating_sub(cost));
        }
    }

    /// Measured bytes of function `index` as it is now.
    fn size_of(&mut self, index: usize) -> Option<i64> {
        let isa = self.isa?;
        if let Some(&s) = self.sizes.get(&index) {
            return s;
        }
        let s = self
            .module
            .code_size(&self.module.functions[index].func, isa)
            .map(|n| n as i64);
        self.sizes.insert(index, s);
        s
    }

    /// Bytes saved by the plan: the originals and callers before, minus `M`,
    /// the thunks and the callers after.
    fn measure(&mut self, ia: usize, ib: usize, plan: &Plan) -> Option<i64> {
        let isa = self.isa?;
        let cache = self.module.code_cache();
        let cache = cache.as_deref();
        let mut saved =
            self.size_of(ia)? + self.size_of(ib)? - profit::measure(&plan.merged.func, isa, cache)?;
        for side in &plan.sides {
            if let SidePlan::Thunk { priced, .. } = side {
                saved -= profit::measure(priced, isa, cache)?;
            }
        }
        for (caller, func) in &plan.callers {
            saved += self.size_of(*caller)? - profit::measure(func, isa, cache)?;
        }
        Some(saved)
    }

    /// Applies a plan; returns `M`'s id if it is a candidate.
    fn commit(&mut self, a: usize, b: usize, plan: Plan, attempt: &mut Attempt) -> Option<usize> {
        let (ia, ib) = (self.ids[a], self.ids[b]);
        let name = self.merged_name(ia);
        let symbol = self.module.declare(
            &name,
            SymbolKind::Function(plan.merged.func.signature.clone()),
            Linkage::Local,
        );
        debug_assert_eq!(symbol as usize + 1, self.module.symbols.len());
        let mut kept = Vec::new();
        for (k, side) in plan.sides.into_iter().enumerate() {
            let index = [ia, ib][k];
            self.sizes.remove(&index);
            self.estimates.remove(&index);
            match side {
                SidePlan::Thunk { thunk, .. } => {
                    self.module.functions[index].func = *thunk;
                    self.report.stats.thunks += 1;
                    kept.push("thunk");
                }
                SidePlan::Deleted { sites } => {
                    self.deleted.insert(index);
                    self.removed_symbols
                        .insert(self.module.functions[index].symbol);
                    self.report.stats.deleted += 1;
                    self.report.stats.redirected_calls += sites;
                    kept.push("deleted");
                }
            }
        }
        for (caller, func) in plan.callers {
            self.sizes.remove(&caller);
            self.estimates.remove(&caller);
            note_referrer(&mut self.referrers, caller, &func);
            self.module.functions[caller].func = func;
        }
        for index in [ia, ib] {
            note_referrer(
                &mut self.referrers,
                index,
                &self.module.functions[index].func,
            );
        }
        let (by_region, hot) = (plan.by_region, plan.hot);
        let regions = plan.merged.tests.region_entries;
        let mut merged = plan.merged.func;
        merged.name = ClifModule::func_name(symbol);
        note_referrer(&mut self.referrers, self.module.functions.len(), &merged);
        self.module.functions.push(FunctionDef {
            symbol,
            func: merged,
        });
        self.report.stats.merged += 1;
        self.index.remove(a);
        self.index.remove(b);
        attempt.decision = Decision::Merged;
        attempt.detail = format!("into {name} (first {}, second {})", kept[0], kept[1]);
        if by_region {
            self.report.stats.by_region += 1;
            attempt
                .detail
                .push_str(&format!(", dispatching by region ({regions})"));
        }
        let index = self.module.functions.len() - 1;
        if hot {
            self.hot_merged.insert(index);
        }
        let func = &self.module.functions[index].func;
        let members = self.members[a] + self.members[b];
        if members >= self.options.max_members
            || ineligible(self.module, func, symbol, self.options).is_some()
        {
            return None;
        }
        let start = Instant::now();
        let id = self
            .index
            .insert(&fingerprint::encodings(func), frequency(self.options, func));
        self.report.times.search += start.elapsed();
        self.ids.push(index);
        self.members.push(members);
        Some(id)
    }

    /// `f0.Tfm`, or `f0.Tfm2`, … if taken (a merged side's suffix dropped).
    fn merged_name(&self, index: usize) -> String {
        let name = self.name(index);
        let base = name.split(MERGED_SUFFIX).next().unwrap_or(name);
        (1..)
            .map(|n| match n {
                1 => format!("{base}{MERGED_SUFFIX}"),
                n => format!("{base}{MERGED_SUFFIX}{n}"),
            })
            .find(|candidate| self.module.symbol_index(candidate).is_none())
            .expect("an unused name")
    }

    fn record(&mut self, attempt: Attempt) {
        self.report.remarks.push(remark(&attempt));
        self.report.attempts.push(attempt);
    }

    fn finish(mut self) -> FmergeReport {
        let deleted = std::mem::take(&mut self.deleted);
        let mut index = 0;
        self.module.functions.retain(|_| {
            index += 1;
            !deleted.contains(&(index - 1))
        });
        crate::clif_module::remove_symbols(self.module, &self.removed_symbols);
        self.report.stats.comparisons = self.index.comparisons;
        self.report
    }
}

/// Records that function `index` (defined as `func`) names its symbols.
fn note_referrer(referrers: &mut HashMap<u32, BTreeSet<usize>>, index: usize, func: &Function) {
    for user in func.params.user_named_funcs().values() {
        if user.namespace == crate::clif_module::SYMBOL_NAMESPACE {
            referrers.entry(user.index).or_default().insert(index);
        }
    }
}

/// The opcode-frequency fingerprint, if the search ranks by it.
fn frequency(options: &FmergeOptions, func: &Function) -> Option<fingerprint::OpcodeFrequency> {
    (options.search == Search::ExhaustiveFrequency).then(|| fingerprint::OpcodeFrequency::of(func))
}

/// Cranelift's verifier on a merged function; a failure is a bug of this
/// pass, counted, and the merge is not made.
fn verified(
    func: &Function,
    isa: Option<&dyn TargetIsa>,
    stats: &mut FmergeStats,
) -> Result<(), String> {
    verify(func, isa).map_err(|e| {
        stats.verifier_failures += 1;
        debug_assert!(false, "merged function fails verification:\n{e}");
        "the merged function fails verification".to_string()
    })
}

fn verify(func: &Function, isa: Option<&dyn TargetIsa>) -> Result<(), String> {
    let result = match isa {
        Some(isa) => cranelift_codegen::verify_function(func, isa),
        None => {
            cranelift_codegen::verify_function(func, &settings::Flags::new(settings::builder()))
        }
    };
    result.map_err(|e| cranelift_codegen::print_errors::pretty_verifier_error(func, None, e))
}

/// The remark of one attempt.
fn remark(a: &Attempt) -> Remark {
    let mut reason = format!("with {}: similarity {:.2}", a.second, a.similarity);
    if let Some(p) = a.predicted {
        reason.push_str(&format!(", predicted {p:+} bytes"));
    }
    if let Some(m) = a.measured {
        reason.push_str(&format!(", measured {m:+} bytes"));
    }
    if let (None, Some(aligned)) = (a.predicted, a.aligned) {
        reason.push_str(&format!(
            ", predicted {aligned:+} bytes from the alignment (not generated)"
        ));
    }
    if let Some(e) = a.estimated.filter(|_| a.on_estimate) {
        reason.push_str(&format!(
            ", estimated {:+} bytes (decided on the estimate)",
            e.bytes
        ));
    }
    let first = a.first.as_str();
    let remark = match &a.decision {
        Decision::Merged => {
            Remark::passed(PASS, "merged", first, format!("{reason}: {}", a.detail))
                .count("merged", 1)
        }
        Decision::Refused(why) => {
            Remark::missed(PASS, "refused", first, format!("{reason}: {why}")).count("refused", 1)
        }
        Decision::RejectedByModel => {
            Remark::missed(PASS, "rejected-by-model", first, reason).count("rejected_by_model", 1)
        }
        Decision::RejectedByMeasurement => {
            Remark::missed(PASS, "rejected-by-measurement", first, reason)
                .count("rejected_by_measurement", 1)
        }
        Decision::RejectedByEstimate => Remark::missed(PASS, "rejected-by-estimate", first, reason)
            .count("rejected_by_estimate", 1),
    };
    // The measured saving where there is one, else the size model's, else
    // the thesis model's.
    match a
        .measured
        .or(a
            .on_estimate
            .then(|| a.estimated.map(|e| e.bytes))
            .flatten())
        .or(a.predicted)
        .or(a.aligned)
    {
        Some(bytes) => remark.bytes(bytes),
        None => remark,
    }
}
