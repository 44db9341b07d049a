//! GVN on a whole module, with one remark per function it changed, kept
//! unchanged by the size guard, or skipped.
//!
//! Decisions (docs/REMARKS.md):
//!
//! | decision      | kind   | when                                                        | bytes |
//! |---------------|--------|-------------------------------------------------------------|-------|
//! | `rewritten`   | passed | GVN changed the function, with full PRE                      | measured: machine code before − after (with an ISA) |
//! | `pre-reduced` | passed | the size guard kept GVN with less PRE, full PRE having grown the code | measured, as above |
//! | `reverted`    | missed | every variant grew the code; the function is restored      | the smallest growth, negative |
//! | `skipped`     | missed | exception tables, or no fixed point within [`super::MAX_PASSES`] | none |
//!
//! Each remark's counts are the function's [`GvnStats`] counters that say
//! what changed (`values_replaced`, `full_redundancies`, …, plus
//! `pre_dropped`, `reverted`, `skipped`), so the counts of a module's
//! remarks add up to its statistics. Functions GVN did not change get no
//! remark: nothing was decided about them.

use std::collections::BTreeSet;

use cranelift_codegen::ir::{FuncRef, Function};
use cranelift_codegen::isa::TargetIsa;

use super::{
    run_for_size_measured, run_with, GvnOptions, GvnStats, NonnullParams, PreMode, SizedRun,
};
use crate::clif_module::{ClifModule, Symbol};
use crate::remark::Remark;

/// The pass's name in remarks.
const PASS: &str = "gvn";

/// What [`run_nonnull_params`] may know of the calls of a module's functions
/// beyond the module as it is.
#[derive(Clone, Copy, Debug)]
pub struct CallSites<'a> {
    /// The module as it came into the CLIF passes, if the size guard may
    /// put some of its functions back.
    pub before: Option<&'a ClifModule>,
    /// Functions not to specialize: those that must stay alike
    /// ([`super::kept_alike`]), and those the passes after GVN made.
    pub excluded: &'a BTreeSet<String>,
}

/// What GVN did to a module: the summed statistics and the remarks.
#[derive(Clone, Debug, Default)]
pub struct GvnReport {
    pub stats: GvnStats,
    pub remarks: Vec<Remark>,
}

/// Runs GVN on every function of `module`, with the size guard
/// ([`super::run_for_size`]) when `isa` is given — except on functions
/// `hot` knows hot, which keep every rewrite as at `-O2` (GVN adds no
/// computation to any path; the guard only trades PRE's speed for bytes).
pub fn run_module(
    module: &mut ClifModule,
    isa: Option<&dyn TargetIsa>,
    hot: &crate::heat::HotCode,
) -> GvnReport {
    run_functions(module, isa, hot, &NonnullParams::default(), |_| true)
}

/// Runs GVN again, as [`run_module`] does, on the functions of `module`
/// with parameters every call site passes non-null ([`NonnullParams`]),
/// over the call sites of `module` and of `calls.before` — the module as
/// it came into the CLIF passes, when a size guard may put some of its
/// functions back (their call sites come back with them) — except in the
/// functions `calls.excluded` names. The pipeline runs it after merging,
/// so that merging decides on code no call site has specialized, with an
/// `isa` where GVN's own run measures (its size policy).
pub fn run_nonnull_params(
    module: &mut ClifModule,
    isa: Option<&dyn TargetIsa>,
    hot: &crate::heat::HotCode,
    calls: &CallSites,
) -> GvnReport {
    let sources: Vec<&ClifModule> = std::iter::once(&*module).chain(calls.before).collect();
    let params = NonnullParams::of(&sources, calls.excluded);
    if params.is_empty() {
        return GvnReport::default();
    }
    let with_facts: BTreeSet<usize> = module
        .functions
        .iter()
        .enumerate()
        .filter(|(_, def)| {
            module.symbols.get(def.symbol as usize).is_some_and(|s| {
                !params.of_function(&s.name).is_empty() || params.results_told(&s.name).is_some()
            })
        })
        .map(|(i, _)| i)
        .collect();
    run_functions(module, isa, hot, &params, |i| with_facts.contains(&i))
}

/// [`run_module`] on the functions of `module` whose index `only` accepts
/// (the size guard numbers the functions it put back, `crate::guard`),
/// knowing the parameters `params` names non-null.
pub fn run_functions(
    module: &mut ClifModule,
    isa: Option<&dyn TargetIsa>,
    hot: &crate::heat::HotCode,
    params: &NonnullParams,
    only: impl Fn(usize) -> bool,
) -> GvnReport {
    let mut report = GvnReport::default();
    let cache = module.code_cache();
    for (_, def) in module
        .functions
        .iter_mut()
        .enumerate()
        .filter(|(i, _)| only(*i))
    {
        let name = module
            .symbols
            .get(def.symbol as usize)
            .map_or("?", |s| s.name.as_str());
        let options = GvnOptions {
            nonnull_callees: nonnull_callees(
                &module.returns_nonnull,
                params.results_told(name),
                &module.symbols,
                &def.func,
            ),
            nonnull_params: params.of_function(name).to_vec(),
            ..GvnOptions::default()
        };
        let known_hot = module
            .symbols
            .get(def.symbol as usize)
            .is_some_and(|s| hot.is_hot(&s.name));
        let run = match isa.filter(|_| !known_hot) {
            Some(isa) => run_for_size_measured(&mut def.func, isa, cache.as_deref(), &options),
            None => SizedRun {
                stats: run_with(&mut def.func, options),
                ..SizedRun::default()
            },
        };
        report.stats.accumulate(&run.stats);
        let name = module
            .symbols
            .get(def.symbol as usize)
            .map_or("?", |s| s.name.as_str());
        if let Some(remark) = remark(name, &run) {
            report.remarks.push(remark.in_module(&module.name));
        }
    }
    report
}

/// The callees of `func` that the module says never return null, and
/// those `told` (the non-null results `func` uses as references,
/// [`NonnullParams::results_told`]).
fn nonnull_callees(
    returns_nonnull: &BTreeSet<String>,
    told: Option<&BTreeSet<String>>,
    symbols: &[Symbol],
    func: &Function,
) -> Vec<FuncRef> {
    if returns_nonnull.is_empty() && told.is_none() {
        return Vec::new();
    }
    func.dfg
        .ext_funcs
        .iter()
        .filter(|(_, ext)| {
            ClifModule::symbol_of(func, &ext.name)
                .and_then(|s| symbols.get(s as usize))
                .is_some_and(|s| {
                    returns_nonnull.contains(&s.name) || told.is_some_and(|t| t.contains(&s.name))
                })
        })
        .map(|(r, _)| r)
        .collect()
}

/// The counters of [`GvnStats`] a remark carries: those that say what
/// changed, and the size guard's and the skip's.
fn counts(stats: &GvnStats) -> [(&'static str, u64); 16] {
    [
        ("values_replaced", stats.values_replaced),
        ("full_redundancies", stats.full_redundancies),
        ("partial_redundancies", stats.partial_redundancies),
        ("hoisted", stats.hoisted),
        ("constants_folded", stats.constants_folded),
        ("loads_removed", stats.loads_removed),
        ("loads_narrowed", stats.loads_narrowed),
        ("stores_removed", stats.stores_removed),
        ("params_removed", stats.params_removed),
        ("branches_folded", stats.branches_folded),
        ("blocks_removed", stats.blocks_removed),
        ("dead_removed", stats.dead_removed),
        ("pre_rounds", stats.pre_rounds),
        ("pre_dropped", stats.pre_dropped),
        ("reverted", stats.reverted),
        ("skipped", stats.skipped),
    ]
}

/// The remark for one function's run, if anything was decided.
fn remark(name: &str, run: &SizedRun) -> Option<Remark> {
    let stats = &run.stats;
    let mut remark = if stats.skipped > 0 {
        Remark::missed(
            PASS,
            "skipped",
            name,
            "left untouched: exception tables, or no fixed point",
        )
    } else if stats.reverted > 0 {
        let smallest = run.grew.iter().map(|&(_, size)| size).min();
        let mut remark = Remark::missed(
            PASS,
            "reverted",
            name,
            format!(
                "restored: every variant grew the machine code ({}): {}",
                grew_text(run),
                changes(stats)
            ),
        );
        if let (Some(before), Some(smallest)) = (run.before, smallest) {
            remark = remark.bytes(before as i64 - smallest as i64);
        }
        remark
    } else if stats.changed() {
        let (decision, reason) = if stats.pre_dropped > 0 {
            (
                "pre-reduced",
                format!("{}; with less PRE ({})", changes(stats), grew_text(run)),
            )
        } else {
            ("rewritten", changes(stats))
        };
        let mut remark = Remark::passed(PASS, decision, name, reason);
        if let (Some(before), Some(after)) = (run.before, run.after) {
            remark = remark.bytes(before as i64 - after as i64);
        }
        remark
    } else {
        return None;
    };
    for (stat, value) in counts(stats) {
        if value > 0 {
            remark = remark.count(stat, value);
        }
    }
    Some(remark)
}

/// What GVN changed, in words: the non-zero counters.
fn changes(stats: &GvnStats) -> String {
    let parts: Vec<String> = [
        ("values replaced", stats.values_replaced),
        ("full redundancies", stats.full_redundancies),
        ("partial redundancies", stats.partial_redundancies),
        ("hoisted", stats.hoisted),
        ("constants folded", stats.constants_folded),
        ("loads removed", stats.loads_removed),
        ("loads narrowed", stats.loads_narrowed),
        ("stores removed", stats.stores_removed),
        ("block params removed", stats.params_removed),
        ("branches folded", stats.branches_folded),
        ("blocks removed", stats.blocks_removed),
        ("dead instructions removed", stats.dead_removed),
    ]
    .iter()
    .filter(|(_, n)| *n > 0)
    .map(|(what, n)| format!("{n} {what}"))
    .collect();
    parts.join(", ")
}

/// The variants the size guard tried that grew, with their sizes.
fn grew_text(run: &SizedRun) -> String {
    let before = run
        .before
        .map_or_else(|| "?".to_string(), |b| b.to_string());
    let tried: Vec<String> = run
        .grew
        .iter()
        .map(|&(mode, size)| format!("{}: {before} -> {size} bytes", mode_name(mode)))
        .collect();
    tried.join("; ")
}

fn mode_name(mode: PreMode) -> &'static str {
    match mode {
        PreMode::Full => "full PRE",
        PreMode::NoJoinInsertion => "PRE without join insertions",
        PreMode::Off => "no PRE",
    }
}
