//! The size guard: no CLIF pass makes a module bigger than it came in.
//!
//! Every `-Oz` pass decides with its own model — the inliner by measured
//! trials, GVN per function, merging optimistically by [GFM]'s Equation 1,
//! `fmerge` by measured pairs — and inlining for speed at hot sites grows
//! code on purpose. Their decisions interact (a function inlined into a
//! merge member makes it differ from its group; GVN specializes a member
//! by its constants), so the module they leave can be larger than the one
//! they were given. This pass, run after the last CLIF pass, compares the
//! module with the one that came in, group of functions by group, in
//! measured aarch64 bytes as the linker will keep them, and puts back the
//! original functions of every group that grew. It is the backstop of the
//! costed decisions (`crate::price`), not a substitute: a group that comes
//! out smaller than it came in stays, even where another choice would have
//! been smaller still.
//!
//! # Notation
//!
//! `B` is the module as it came in, `A` the module the passes left; a
//! function is named by its symbol name, the same in both. A name is
//! *unchanged* when `B` and `A` define it with the same code (the profile
//! hash, `crate::profile::hash`, which names callees and symbols by name
//! and ignores entity numbers), *changed* when both define it otherwise,
//! *added* when only `A` defines it (`.Tgm` and `.Tfm` bodies), *removed*
//! when only `B` does (inlined, merged or elided functions). The profile
//! hash skips the contents of blocks that end in `trap`, so an unchanged
//! function may still differ there: Pare's `main` ends in `exit` and a
//! `trap`, and a merge that redirects its calls leaves its hash as it was
//! (generated seed 154).
//!
//! A *group* is a class of the finest partition of names in which
//! - a function of `A` is with every added function it names, and a
//!   function of `B` with every removed function it names (a version can
//!   only be kept together with the functions it calls or takes the
//!   address of; unchanged functions too, whose trap blocks may name
//!   them); and
//! - the members of one identical-code-folding class (`crate::fmerge::icf`,
//!   in `B` and in `A`) that has a changed, added or removed member are
//!   together (the linker keeps one copy of a class: its bytes are the
//!   class's, not a member's).
//!
//! The *cost* of a group in a version is the sum over the folding classes
//! it has in that version of one member's measured size (less the trap
//! blocks code generation shares, [`GuardOptions::shared_traps`]), with a merged
//! body (`.Tgm`) whose group has members in `k` modules
//! ([`GuardOptions::body_shares`], from the merge plan) counted `1/k`: the
//! linker folds the copies of the other modules with it.
//!
//! # Algorithm
//!
//! 1. Classify every name; build the groups with a union–find over names
//!    in name order.
//! 2. For each group with a changed, added or removed name, compute its
//!    cost in `B` and in `A` in Cranelift's bytes (through the module's
//!    code cache: the passes compiled most of these functions already). A
//!    group whose two costs differ by more than the tolerance (4% of `B`'s
//!    and at least 16 bytes: what the machine passes that run after may
//!    change, see `tolerance`) is decided by them. The groups they cannot
//!    tell are priced again in the bytes code generation emits for their
//!    functions after the machine passes that work per function (shared
//!    trap paths, peepholes, copy propagation, one epilogue:
//!    [`GuardOptions::sizer`], given by a build that makes objects), with
//!    only the outliner still to run: there a group may grow by 8 bytes
//!    (`OUTLINER_BYTES`). Without a sizer, the close groups stay.
//!    Pricing after the machine passes matters: `examples/recursion.pare`'s
//!    `main`, grown by a hot-site inline and in one group with the
//!    similar-function merge of `is_even`/`is_odd`, is within Cranelift's
//!    tolerance and 16 bytes larger in the object.
//! 3. If `A`'s cost exceeds `B`'s (by the margin of its measure), revert
//!    the group: functions `B` defines
//!    get `B`'s code (its external names translated to `A`'s symbol table,
//!    declaring the symbols `A` no longer has), functions only `A` defines
//!    are deleted, and imports nothing names any more are dropped. One
//!    remark per reverted group.
//!
//! # Invariants
//!
//! - The result computes what both versions compute: every function is
//!   either `A`'s or `B`'s, and a group's versions are kept whole.
//! - For every group, the kept version costs no more than `B`'s plus the
//!   margin of the measure that decided it (the linker's view before the
//!   outliner).
//! - Deterministic: names are visited in sorted order; the decision reads
//!   only the two modules and the options, so a module compiled alone from
//!   a plan is guarded as in the whole build.
//!
//! # Cost
//!
//! Two profile hashes per function, one folding-class computation per
//! version, one compilation of `B`'s version of each function in a group
//! (the passes compiled many of them already), and linear bookkeeping.

use std::collections::{BTreeMap, BTreeSet};

use cranelift_codegen::ir::{Function, InstructionData, Opcode, TrapCode, UserExternalName};
use cranelift_codegen::isa::TargetIsa;

use crate::callgraph::References;
use crate::clif_module::{self, ClifModule, FunctionDef, SYMBOL_NAMESPACE};
use crate::fmerge::icf;
use crate::profile::hash::profile_hash;
use crate::remark::Remark;

/// The pass's name in remarks.
const PASS: &str = "guard";

/// What the guard knows of the rest of the build.
#[derive(Clone, Debug, Default)]
pub struct GuardOptions {
    /// Per merged body (`f.Tgm`), the number of modules holding members of
    /// its merge group: the linker keeps one body for all of them, so each
    /// module's copy counts `1/k` of its bytes.
    pub body_shares: BTreeMap<String, usize>,
    /// Whether the pipeline numbers values for size (`crate::gvn`): the
    /// functions put back are then numbered again, so a revert undoes the
    /// other passes' growth but keeps GVN's gains (GVN works per function
    /// and never grows one; a profile's hot functions it rewrites whatever
    /// the size, as the pass does).
    pub gvn: Option<std::sync::Arc<crate::heat::HotCode>>,
    /// Whether the pipeline lowers switches (`crate::switches`): the
    /// functions put back are then lowered again, after GVN, for the same
    /// reason (it works per function, measured, and never grows one).
    pub switches: bool,
    /// The trap codes whose checks code generation sends to one shared
    /// trap path per function (`crate::traps`): of a function's blocks
    /// that only trap with such a code, all but the first of each code
    /// cost nothing in the object, so a function is priced without them.
    pub shared_traps: Vec<TrapCode>,
    /// The build's measure of functions as they reach the object: the
    /// bytes code generation leaves after the machine passes that work per
    /// function (shared trap paths, peepholes, copy propagation, one
    /// epilogue). With it, the groups Cranelift's bytes cannot tell
    /// ([`tolerance`]) are priced in those bytes; without it, they stay.
    pub sizer: Option<Sizer>,
}

/// Measures functions as code generation emits them (see
/// [`GuardOptions::sizer`]): given a module and indices of its functions,
/// their bytes in that order, or `None` if one does not compile.
#[derive(Clone)]
pub struct Sizer(
    #[allow(clippy::type_complexity)]
    pub  std::sync::Arc<dyn Fn(&ClifModule, &[usize]) -> Option<Vec<i64>> + Send + Sync>,
);

impl std::fmt::Debug for Sizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Sizer")
    }
}

/// The bytes of the functions of one version that the guard prices.
enum Measure {
    /// Cranelift's bytes, less the shared trap blocks.
    Cranelift,
    /// The sizer's bytes, by function index.
    Emitted(BTreeMap<usize, i64>),
}

impl Measure {
    /// The sizer's bytes of the functions of `module` in `groups`, or
    /// Cranelift's measure without a sizer (or if the sizer fails).
    fn of(module: &ClifModule, functions: BTreeSet<usize>, options: &GuardOptions) -> Measure {
        let Some(sizer) = &options.sizer else {
            return Measure::Cranelift;
        };
        if functions.is_empty() {
            return Measure::Emitted(BTreeMap::new());
        }
        let functions: Vec<usize> = functions.into_iter().collect();
        match (sizer.0)(module, &functions) {
            Some(sizes) => Measure::Emitted(functions.into_iter().zip(sizes).collect()),
            None => Measure::Cranelift,
        }
    }

    fn bytes(
        &self,
        module: &ClifModule,
        f: usize,
        isa: &dyn TargetIsa,
        options: &GuardOptions,
    ) -> Option<i64> {
        match self {
            Measure::Cranelift => {
                let func = &module.functions[f].func;
                Some(
                    module.code_size(func, isa)? as i64
                        - shared_trap_bytes(func, &options.shared_traps),
                )
            }
            Measure::Emitted(sizes) => sizes.get(&f).copied(),
        }
    }

    /// How much a group may grow in this measure before it is put back.
    fn tolerance(&self, old: i64) -> i64 {
        match self {
            Measure::Cranelift => tolerance(old),
            Measure::Emitted(_) => OUTLINER_BYTES,
        }
    }
}

/// What the guard did to one module (summed over modules by the driver).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GuardStats {
    /// Groups the passes changed.
    pub groups: usize,
    /// Of those, the groups put back as they came in.
    pub reverted: usize,
    /// Functions in the reverted groups.
    pub functions_reverted: usize,
    /// Bytes the reverts saved.
    pub bytes_saved: i64,
}

impl GuardStats {
    pub fn accumulate(&mut self, other: &GuardStats) {
        self.groups += other.groups;
        self.reverted += other.reverted;
        self.functions_reverted += other.functions_reverted;
        self.bytes_saved += other.bytes_saved;
    }
}

impl std::fmt::Display for GuardStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} changed groups, {} reverted ({} functions), {} bytes saved",
            self.groups, self.reverted, self.functions_reverted, self.bytes_saved
        )
    }
}

/// The statistics and one remark per reverted group.
#[derive(Clone, Debug, Default)]
pub struct GuardReport {
    pub stats: GuardStats,
    pub remarks: Vec<Remark>,
}

/// How a name fares between the two versions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    Unchanged,
    Changed,
    Added,
    Removed,
}

/// The two versions of a module, by function name.
struct Versions<'m> {
    before: &'m ClifModule,
    after: &'m ClifModule,
    /// Every function name of either version, sorted.
    names: Vec<String>,
    /// Per name: its function index in `before` and in `after`.
    index: Vec<(Option<usize>, Option<usize>)>,
    status: Vec<Status>,
    /// Name → position in `names`.
    position: BTreeMap<String, usize>,
    /// Per function of `before` (by index), its folding class
    /// (`icf::classes`): computed once, read by step 1 and by the costs.
    classes_before: Vec<u32>,
    /// The same for `after`.
    classes_after: Vec<u32>,
}

impl<'m> Versions<'m> {
    fn new(before: &'m ClifModule, after: &'m ClifModule) -> Versions<'m> {
        let defined = |m: &ClifModule| -> BTreeMap<String, usize> {
            m.functions
                .iter()
                .enumerate()
                .map(|(i, d)| (m.symbols[d.symbol as usize].name.clone(), i))
                .collect()
        };
        let (in_before, in_after) = (defined(before), defined(after));
        let names: Vec<String> = in_before
            .keys()
            .chain(in_after.keys())
            .cloned()
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let index: Vec<_> = names
            .iter()
            .map(|n| (in_before.get(n).copied(), in_after.get(n).copied()))
            .collect();
        let status = index
            .iter()
            .map(|&(b, a)| match (b, a) {
                (Some(b), Some(a)) => {
                    let same = profile_hash(before, &before.functions[b].func)
                        == profile_hash(after, &after.functions[a].func);
                    if same {
                        Status::Unchanged
                    } else {
                        Status::Changed
                    }
                }
                (None, Some(_)) => Status::Added,
                (Some(_), None) => Status::Removed,
                (None, None) => unreachable!("a name of either version"),
            })
            .collect();
        let position = names.iter().cloned().zip(0..).collect();
        Versions {
            before,
            after,
            names,
            index,
            status,
            position,
            classes_before: icf::classes(before),
            classes_after: icf::classes(after),
        }
    }

    /// The names (positions) `func`, a function of `module`, refers to.
    fn referenced(&self, module: &ClifModule, func: &Function) -> Vec<usize> {
        let refs = References::of(func);
        refs.callees()
            .into_iter()
            .chain(refs.addressed)
            .filter_map(|s| self.position.get(&module.symbols[s as usize].name).copied())
            .collect()
    }

    /// Step 1: the groups (module doc), as lists of name positions, each
    /// sorted, in order of their first name.
    fn groups(&self) -> Vec<Vec<usize>> {
        let mut sets = UnionFind::new(self.names.len());
        for (n, &(b, a)) in self.index.iter().enumerate() {
            // Unchanged functions too: their trap blocks are not hashed
            // (module doc), and a function of `A` that calls an added one
            // must go back with it.
            if let Some(a) = a {
                for r in self.referenced(self.after, &self.after.functions[a].func) {
                    if self.status[r] == Status::Added {
                        sets.union(n, r);
                    }
                }
            }
            if let Some(b) = b {
                for r in self.referenced(self.before, &self.before.functions[b].func) {
                    if self.status[r] == Status::Removed {
                        sets.union(n, r);
                    }
                }
            }
        }
        let versions = [
            (self.before, &self.classes_before),
            (self.after, &self.classes_after),
        ];
        for (module, classes) in versions {
            for class in self.folding_classes(module, classes) {
                if class.iter().any(|&n| self.status[n] != Status::Unchanged) {
                    for &n in &class[1..] {
                        sets.union(class[0], n);
                    }
                }
            }
        }
        let mut groups: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for n in 0..self.names.len() {
            groups.entry(sets.find(n)).or_default().push(n);
        }
        let mut groups: Vec<Vec<usize>> = groups
            .into_values()
            .filter(|g| g.iter().any(|&n| self.status[n] != Status::Unchanged))
            .collect();
        groups.sort_by_key(|g| g[0]);
        groups
    }

    /// The folding classes of `module` with two or more functions, as name
    /// positions; `of` holds each function's class.
    fn folding_classes(&self, module: &ClifModule, of: &[u32]) -> Vec<Vec<usize>> {
        let mut classes: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
        for (def, &class) in module.functions.iter().zip(of) {
            let name = &module.symbols[def.symbol as usize].name;
            classes.entry(class).or_default().push(self.position[name]);
        }
        classes.into_values().filter(|c| c.len() > 1).collect()
    }
}

/// A union–find over `0..n` that keeps the smallest element as the root.
struct UnionFind {
    parent: Vec<usize>,
}

impl UnionFind {
    fn new(n: usize) -> UnionFind {
        UnionFind {
            parent: (0..n).collect(),
        }
    }

    fn find(&mut self, mut x: usize) -> usize {
        while self.parent[x] != x {
            self.parent[x] = self.parent[self.parent[x]];
            x = self.parent[x];
        }
        x
    }

    fn union(&mut self, a: usize, b: usize) {
        let (a, b) = (self.find(a), self.find(b));
        let (low, high) = (a.min(b), a.max(b));
        self.parent[high] = low;
    }
}

/// Step 2: the cost of the group's functions defined in `module` (their
/// indices), each folding class once, merged bodies by their share; `None`
/// if one does not compile.
fn cost(
    module: &ClifModule,
    functions: &[usize],
    isa: &dyn TargetIsa,
    options: &GuardOptions,
    classes: &[u32],
    measure: &Measure,
) -> Option<i64> {
    let mut seen = BTreeSet::new();
    let mut total = 0;
    for &f in functions {
        if !seen.insert(classes[f]) {
            continue;
        }
        let def = &module.functions[f];
        let bytes = measure.bytes(module, f, isa, options)?;
        let name = &module.symbols[def.symbol as usize].name;
        let share = options.body_shares.get(name).copied().unwrap_or(1).max(1);
        total += bytes / share as i64;
    }
    Some(total)
}

/// How much a group may grow in Cranelift's bytes before it is put back:
/// the machine passes that run after (peepholes, the outliner) shrink the
/// passes' version and the original differently — inlined predicates give
/// the peepholes `cset`/`cbnz` pairs to fold — so a small difference is
/// within what Cranelift's bytes cannot tell (`examples/tokenizer.pare`:
/// a group the passes left 12 bytes larger by this measure is 56 bytes
/// smaller in the object). 4% and at least 16 bytes.
fn tolerance(old: i64) -> i64 {
    (old * 4 / 100).max(16)
}

/// How much a group may grow in the sizer's bytes before it is put back:
/// the outliner, which runs after what the sizer measures, can still shrink
/// the passes' version by a sequence its new code shares with the rest of
/// the program (`bench/primes`: `goldbach_pairs` measured 8 bytes larger
/// than it came in is 8 bytes smaller once outlined). Two instructions.
const OUTLINER_BYTES: i64 = 8;

/// The bytes the shared trap paths save in `func`: 4 (one `udf`) per
/// block that only traps with one of `codes`, but the first of each code.
fn shared_trap_bytes(func: &Function, codes: &[TrapCode]) -> i64 {
    if codes.is_empty() {
        return 0;
    }
    let mut counts: BTreeMap<u8, i64> = BTreeMap::new();
    for block in func.layout.blocks() {
        let mut insts = func.layout.block_insts(block);
        if let (Some(inst), None) = (insts.next(), insts.next()) {
            if let InstructionData::Trap {
                opcode: Opcode::Trap,
                code,
            } = func.dfg.insts[inst]
            {
                if codes.contains(&code) {
                    *counts.entry(code.as_raw().get()).or_default() += 1;
                }
            }
        }
    }
    counts.values().map(|n| 4 * (n - 1)).sum()
}

/// Guards `after`, the module the passes made of `before`.
pub fn run(
    before: &ClifModule,
    after: &mut ClifModule,
    isa: &dyn TargetIsa,
    options: &GuardOptions,
) -> GuardReport {
    let mut report = GuardReport::default();
    let reverts: Vec<(Vec<String>, i64, i64)> = {
        let versions = Versions::new(before, after);
        let (classes_before, classes_after) = (&versions.classes_before, &versions.classes_after);
        let mut reverts = Vec::new();
        let groups = versions.groups();
        let in_b = |group: &[usize]| -> Vec<usize> {
            group.iter().filter_map(|&n| versions.index[n].0).collect()
        };
        let in_a = |group: &[usize]| -> Vec<usize> {
            group.iter().filter_map(|&n| versions.index[n].1).collect()
        };
        // Both costs of a group in one measure.
        let costs = |group: &[usize], measures: (&Measure, &Measure)| {
            let old = cost(
                before,
                &in_b(group),
                isa,
                options,
                classes_before,
                measures.0,
            );
            let new = cost(after, &in_a(group), isa, options, classes_after, measures.1);
            old.zip(new)
        };
        // Step 2 in Cranelift's bytes (the passes compiled most of these
        // functions already); the groups it cannot tell go to the sizer.
        let mut close = Vec::new();
        for group in groups {
            report.stats.groups += 1;
            let Some((old, new)) = costs(&group, (&Measure::Cranelift, &Measure::Cranelift)) else {
                continue;
            };
            if options.sizer.is_some() && (new - old).abs() <= tolerance(old) {
                close.push(group);
            } else if new > old + tolerance(old) {
                reverts.push((group, old, new));
            }
        }
        let in_close = |defined: &dyn Fn(&[usize]) -> Vec<usize>| -> BTreeSet<usize> {
            close.iter().flat_map(|g| defined(g)).collect()
        };
        let measure_before = Measure::of(before, in_close(&in_b), options);
        let measure_after = Measure::of(after, in_close(&in_a), options);
        if let (Measure::Emitted(_), Measure::Emitted(_)) = (&measure_before, &measure_after) {
            for group in close {
                if let Some((old, new)) = costs(&group, (&measure_before, &measure_after)) {
                    if new > old + measure_before.tolerance(old) {
                        reverts.push((group, old, new));
                    }
                }
            }
        }
        reverts.sort_by_key(|(group, _, _)| group[0]);
        let reverts: Vec<(Vec<String>, i64, i64)> = reverts
            .into_iter()
            .map(|(group, old, new)| {
                let names = group.iter().map(|&n| versions.names[n].clone()).collect();
                (names, old, new)
            })
            .collect();
        reverts
    };
    for (names, old, new) in reverts {
        let restored = revert(before, after, &names);
        if let Some(hot) = &options.gvn {
            // The numbering's own remarks repeat the pass's; the guard's
            // remark says what was put back. No parameter is assumed
            // non-null: the facts GVN used held over the call sites of both
            // versions, but the module is now a mix of the two and of what
            // the passes after GVN made of it.
            let params = crate::gvn::NonnullParams::default();
            crate::gvn::run_functions(after, Some(isa), hot, &params, |i| restored.contains(&i));
        }
        if options.switches {
            let cache = after.code_cache();
            for &i in &restored {
                if let Some(def) = after.functions.get_mut(i) {
                    crate::switches::run_measured(&mut def.func, isa, cache.as_deref());
                }
            }
        }
        report.stats.reverted += 1;
        report.stats.functions_reverted += names.len();
        report.stats.bytes_saved += new - old;
        report
            .remarks
            .push(reverted_remark(&after.name, &names, old, new));
    }
    report
}

/// The remark of a reverted group, named by its first function.
fn reverted_remark(module: &str, names: &[String], old: i64, new: i64) -> Remark {
    let shown: Vec<&str> = names.iter().take(4).map(String::as_str).collect();
    let more = match names.len() > shown.len() {
        true => format!(" and {} more", names.len() - shown.len()),
        false => String::new(),
    };
    Remark::passed(
        PASS,
        "reverted",
        &names[0],
        format!(
            "{} function(s) ({}{more}) put back as they came in: the passes left {new} bytes where there were {old}",
            names.len(),
            shown.join(", ")
        ),
    )
    .in_module(module)
    .bytes(new - old)
    .count("reverted", 1)
}

/// Step 3: puts the functions `names` back as `before` defines them;
/// returns the indices of the functions put back.
fn revert(before: &ClifModule, after: &mut ClifModule, names: &[String]) -> BTreeSet<usize> {
    let mut dropped = BTreeSet::new();
    let mut named_by_replaced = BTreeSet::new();
    for name in names {
        let old = before.function(name);
        let current = after.function_index(name);
        if let Some(i) = current {
            let named = named_symbols(&after.functions[i].func);
            named_by_replaced.extend(
                named
                    .into_iter()
                    .map(|s| after.symbols[s as usize].name.clone()),
            );
        }
        match (old, current) {
            (Some(old), Some(i)) => {
                let symbol = after.functions[i].symbol;
                after.functions[i].func = translate(before, after, &old.func, symbol);
            }
            (Some(old), None) => {
                let s = &before.symbols[old.symbol as usize];
                let symbol = after.declare(&s.name, s.kind.clone(), s.linkage);
                let func = translate(before, after, &old.func, symbol);
                after.functions.push(FunctionDef { symbol, func });
            }
            (None, Some(i)) => {
                dropped.insert(i);
            }
            (None, None) => {}
        }
    }
    keep_named(after, &mut dropped);
    clif_module::remove_functions(after, &dropped);
    drop_unnamed_imports(after, &named_by_replaced);
    names
        .iter()
        .filter(|name| before.function(name).is_some())
        .filter_map(|name| after.function_index(name))
        .collect()
}

/// Takes out of `dropped` (functions only `A` defines, to be deleted) every
/// function a kept function still calls or takes the address of, until
/// none is: deleting it would leave a reference to nothing. The groups
/// make this a no-op: they follow every function's references, unchanged
/// ones' included (generated seed 154, `fmerge` alone at `-Oz` with region
/// dispatch on, escaped them while unchanged functions were skipped: its
/// `main` calls the merged body from a block that ends in `trap`). It stays
/// as a net: a function left unused costs bytes, a deleted one that is
/// named would miscompile.
fn keep_named(after: &ClifModule, dropped: &mut BTreeSet<usize>) {
    loop {
        let named: BTreeSet<u32> = after
            .functions
            .iter()
            .enumerate()
            .filter(|(i, _)| !dropped.contains(i))
            .flat_map(|(_, def)| {
                let refs = References::of(&def.func);
                refs.callees().into_iter().chain(refs.addressed)
            })
            .collect();
        let before = dropped.len();
        dropped.retain(|&i| !named.contains(&after.functions[i].symbol));
        if dropped.len() == before {
            return;
        }
    }
}

/// The symbols `func` names.
fn named_symbols(func: &Function) -> Vec<u32> {
    func.params
        .user_named_funcs()
        .values()
        .filter(|u| u.namespace == SYMBOL_NAMESPACE)
        .map(|u| u.index)
        .collect()
}

/// `func`, a function of `from`, with its names translated to `to`'s
/// symbol table (symbols `to` lacks are declared as `from` has them) and
/// named `symbol`.
fn translate(from: &ClifModule, to: &mut ClifModule, func: &Function, symbol: u32) -> Function {
    let mut func = func.clone();
    let refs: Vec<_> = func.params.user_named_funcs().keys().collect();
    for r in refs {
        let user = func.params.user_named_funcs()[r].clone();
        if user.namespace != SYMBOL_NAMESPACE {
            continue;
        }
        let s = &from.symbols[user.index as usize];
        let index = to.declare(&s.name, s.kind.clone(), clif_module::Linkage::Import);
        func.params.reset_user_func_name(
            r,
            UserExternalName {
                namespace: SYMBOL_NAMESPACE,
                index,
            },
        );
    }
    func.name = ClifModule::func_name(symbol);
    func
}

/// Removes the imported symbols among `candidates` (the names the replaced
/// versions used) that no function or data object names any more.
fn drop_unnamed_imports(module: &mut ClifModule, candidates: &BTreeSet<String>) {
    let mut named: BTreeSet<u32> = module
        .functions
        .iter()
        .flat_map(|d| named_symbols(&d.func).into_iter().chain([d.symbol]))
        .collect();
    for data in &module.data {
        named.insert(data.symbol);
        named.extend(data.relocs.iter().map(|r| r.target));
    }
    let unnamed: BTreeSet<u32> = (0..module.symbols.len() as u32)
        .filter(|s| !named.contains(s))
        .filter(|&s| {
            let symbol = &module.symbols[s as usize];
            symbol.linkage == clif_module::Linkage::Import && candidates.contains(&symbol.name)
        })
        .collect();
    clif_module::remove_symbols(module, &unnamed);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::tests::module;

    /// Pare's `main` calling `f` once: its only block ends in `exit`'s
    /// call and `trap`.
    const BEFORE: &str = "function u0:0() tail {
        sig0 = (i8) -> i8 tail
        fn0 = colocated u0:1 sig0
    block0:
        v0 = iconst.i8 3
        v1 = call fn0(v0)
        trap user1
    }
    function u0:1(i8) -> i8 tail {
    block0(v0: i8):
        v1 = iconst.i8 4
        v2 = imul v0, v1
        return v2
    }";

    /// `main` calling `f.Tfm`, the merge of `f` (then `body`, the merged
    /// function's definition).
    fn merged(body: &str) -> String {
        format!(
            "function u0:0() tail {{
        sig0 = (i8, i32) -> i8 tail
        fn0 = colocated u0:1 sig0
    block0:
        v0 = iconst.i8 3
        v1 = iconst.i32 1
        v2 = call fn0(v0, v1)
        trap user1
    }}
    function u0:1(i8, i32) -> i8 tail {{
    block0(v0: i8, v1: i32):
        {body}
    }}"
        )
    }

    /// The same with `f` merged into `f.Tfm`, which `main` now calls.
    fn after() -> String {
        merged("v2 = iconst.i8 4\n v3 = iconst.i8 12\n v4 = select v1, v2, v3\n v5 = imul v0, v4\n return v5")
    }

    #[test]
    fn a_caller_whose_trap_block_names_an_added_function_is_in_its_group() {
        // Generated seed 154: fmerge redirected `main`'s calls to the
        // merged body; `main`'s only block ends in `trap`, whose contents
        // the profile hash skips, so `main` counts as unchanged. Its group
        // must still hold the body it calls (and the function it called).
        let before = module(BEFORE, &["main", "f"], &[]);
        let after = module(&after(), &["main", "f.Tfm"], &[]);
        let versions = Versions::new(&before, &after);
        let status = |name: &str| versions.status[versions.position[name]];
        assert_eq!(status("main"), Status::Unchanged);
        assert_eq!(status("f"), Status::Removed);
        assert_eq!(status("f.Tfm"), Status::Added);
        let groups: Vec<Vec<&str>> = versions
            .groups()
            .iter()
            .map(|g| g.iter().map(|&n| versions.names[n].as_str()).collect())
            .collect();
        assert_eq!(groups, vec![vec!["f", "f.Tfm", "main"]]);
    }

    /// A sizer that prices every function by name from `sizes`.
    fn sizer(sizes: &'static [(&'static str, i64)]) -> Sizer {
        Sizer(std::sync::Arc::new(
            move |module: &ClifModule, functions: &[usize]| {
                functions
                    .iter()
                    .map(|&f| {
                        let name = &module.symbols[module.functions[f].symbol as usize].name;
                        sizes.iter().find(|(n, _)| n == name).map(|&(_, b)| b)
                    })
                    .collect()
            },
        ))
    }

    /// Guards against BEFORE a merge whose body Cranelift's bytes cannot
    /// tell from `f` (it ignores its added parameter), so that the guard
    /// asks the sizer, which prices functions by name from `sizes`; the
    /// functions left.
    fn guarded(sizes: &'static [(&'static str, i64)]) -> (Vec<String>, GuardReport) {
        let options = GuardOptions {
            sizer: Some(sizer(sizes)),
            ..GuardOptions::default()
        };
        let before = module(BEFORE, &["main", "f"], &[]);
        let close = merged("v2 = iconst.i8 4\n v3 = imul v0, v2\n return v3");
        let mut after = module(&close, &["main", "f.Tfm"], &[]);
        let isa = crate::code_cache::tests::aarch64();
        let report = run(&before, &mut after, &*isa, &options);
        let names = after
            .functions
            .iter()
            .map(|d| after.symbols[d.symbol as usize].name.clone())
            .collect();
        (names, report)
    }

    #[test]
    fn a_group_larger_after_the_machine_passes_is_reverted() {
        // The passes' version is 12 bytes larger as code generation emits
        // it: more than the outliner may win back, and the group goes back.
        let (names, report) = guarded(&[("main", 40), ("f", 12), ("f.Tfm", 24)]);
        assert_eq!(names, ["main", "f"]);
        assert_eq!(report.stats.reverted, 1);
        assert_eq!(
            report.remarks[0].reason,
            "3 function(s) (f, f.Tfm, main) put back as they came in: \
             the passes left 64 bytes where there were 52"
        );
    }

    #[test]
    fn a_group_within_what_the_outliner_may_win_back_stays() {
        // 8 bytes larger before the outliner: kept.
        let (names, report) = guarded(&[("main", 40), ("f", 12), ("f.Tfm", 20)]);
        assert_eq!(names, ["main", "f.Tfm"]);
        assert_eq!((report.stats.groups, report.stats.reverted), (1, 0));
    }
}
