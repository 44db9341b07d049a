//! Similar-function merging filetests: every `filetests/fmerge/*.clif` file
//! is one module (functions named in run lines are exported: they are the
//! module's entry points). The pass runs with aarch64 measurement; every
//! function is verified; each `; run:` / `; print:` line is executed with
//! cranelift-interpreter before and after (results and traps must agree);
//! a second run must merge nothing; `; expect:` lines state what the file
//! is about (`merged N`, `thunks N`, `deleted N`, `folded N`, `remark
//! TEXT`); the
//! result and the remarks are snapshotted in `snapshots/fmerge/`.
//!
//! Further tests run every search and alignment mode, with and without
//! measurement, over the same files (verifier and run lines), check that
//! the output does not depend on the module's function order, that the
//! hot-code exclusion is honoured, and that HyFM's SSA bugs (F3M §III-E)
//! leave no read of an undefined value.

use cranelift_codegen::ir::{Function, InstructionData};
use parec_passes::clif_module::ClifModule;
use parec_passes::fmerge::{
    self, AlignMode, Decide, Decision, FmergeOptions, FmergeReport, MeasureBudget, Search,
};

mod support;
use support::{
    aarch64, expectations, load_module_cases, run_differences, snapshot_pass,
    to_testcase_functions, verify_all,
};

/// Checks one expectation against a report.
fn check(expect: &str, report: &FmergeReport) -> Result<(), String> {
    let (what, value) = expect.split_once(' ').unwrap_or((expect, ""));
    let count = |n: usize| match value.parse::<usize>() {
        Ok(v) if v == n => Ok(()),
        Ok(v) => Err(format!("expected {what} {v}, got {n}")),
        Err(_) => Err(format!("bad expectation `{expect}`")),
    };
    match what {
        "merged" => count(report.stats.merged),
        "thunks" => count(report.stats.thunks),
        "deleted" => count(report.stats.deleted),
        "folded" => count(report.stats.folded),
        "remark" if report.remarks.iter().any(|r| r.to_string().contains(value)) => Ok(()),
        "remark" => Err(format!("no remark contains `{value}`")),
        _ => Err(format!("unknown expectation `{expect}`")),
    }
}

#[test]
fn fmerge_filetests() {
    let cases = load_module_cases("fmerge");
    assert!(cases.len() >= 14, "expected at least 14 fmerge filetests");
    let isa = aarch64();
    let options = FmergeOptions::default();
    let mut failures = Vec::new();
    for case in cases {
        let before = to_testcase_functions(&case.module);
        let mut module = case.module.clone();
        let report = fmerge::run(&mut module, Some(&*isa), &options);
        verify_all(&module, &case.name);
        assert_eq!(report.stats.verifier_failures, 0, "{}", case.name);
        let again = fmerge::run(&mut module.clone(), Some(&*isa), &options);
        if again.stats.merged != 0 {
            failures.push(format!(
                "{}: a second run merged again: {:?}",
                case.name, again.remarks
            ));
        }
        for expect in expectations("fmerge", &case) {
            if let Err(e) = check(&expect, &report) {
                failures.push(format!(
                    "{}: {e}\n{}",
                    case.name,
                    report
                        .remarks
                        .iter()
                        .map(|r| r.to_string())
                        .collect::<Vec<_>>()
                        .join("\n")
                ));
            }
        }
        let after = to_testcase_functions(&module);
        failures.extend(run_differences(&case, &before, &after));
        snapshot_pass("fmerge", &case, &report.stats, &report.remarks, &after);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Every search, both alignments, with and without measurement: the
/// result verifies and computes what the input did.
#[test]
fn every_mode_is_correct() {
    let isa = aarch64();
    let searches = [
        Search::LshAdaptive,
        Search::LshStatic,
        Search::ExhaustiveMinHash,
        Search::ExhaustiveFrequency,
    ];
    let mut merged = 0;
    let mut failures = Vec::new();
    for case in load_module_cases("fmerge") {
        let before = to_testcase_functions(&case.module);
        for search in searches {
            for align in [AlignMode::NeedlemanWunsch, AlignMode::Pairwise] {
                for measured in [true, false] {
                    let options = FmergeOptions {
                        search,
                        align,
                        ..FmergeOptions::default()
                    };
                    let mut module = case.module.clone();
                    let isa = measured.then_some(&*isa);
                    let report = fmerge::run(&mut module, isa, &options);
                    merged += report.stats.merged;
                    let context = format!("{} {search:?} {align:?} measured {measured}", case.name);
                    verify_all(&module, &context);
                    assert_eq!(report.stats.verifier_failures, 0, "{context}");
                    let after = to_testcase_functions(&module);
                    failures.extend(
                        run_differences(&case, &before, &after)
                            .into_iter()
                            .map(|f| format!("{context}: {f}")),
                    );
                }
            }
        }
    }
    assert!(merged > 0);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The module's text after the pass, functions in name order.
fn printed(module: &ClifModule) -> String {
    let mut funcs: Vec<(String, String)> = module
        .functions
        .iter()
        .map(|d| {
            (
                module.symbols[d.symbol as usize].name.clone(),
                d.func.display().to_string(),
            )
        })
        .collect();
    funcs.sort();
    let mut symbols: Vec<String> = module.symbols.iter().map(|s| s.name.clone()).collect();
    symbols.sort();
    // Symbol indices are positions; print names instead of indices.
    format!(
        "{symbols:?}\n{}",
        funcs
            .into_iter()
            .map(|(n, f)| format!("{n}: {}", f.len()))
            .collect::<Vec<_>>()
            .join("\n")
    )
}

/// Reversing the module's function order changes nothing but positions:
/// the same merges, in the same order, with functions of the same size.
#[test]
fn output_does_not_depend_on_function_order() {
    let isa = aarch64();
    for case in load_module_cases("fmerge") {
        let mut forward = case.module.clone();
        let mut backward = case.module.clone();
        backward.functions.reverse();
        let a = fmerge::run(&mut forward, Some(&*isa), &FmergeOptions::default());
        let b = fmerge::run(&mut backward, Some(&*isa), &FmergeOptions::default());
        assert_eq!(a.remarks, b.remarks, "{}", case.name);
        assert_eq!(printed(&forward), printed(&backward), "{}", case.name);
    }
}

/// Merges decided on the size model's estimate keep every file's
/// semantics and compile nothing: every try under `Decide::Estimate`, and
/// the tries that redirect a caller's calls once its measuring budget is
/// spent (the bound on recompiling a caller once per merge).
#[test]
fn estimated_decisions_keep_semantics() {
    let isa = aarch64();
    let modes = [
        FmergeOptions {
            decide: Decide::Estimate,
            ..FmergeOptions::default()
        },
        FmergeOptions {
            measure_budget: MeasureBudget {
                floor: 0,
                per_inst: 0,
            },
            ..FmergeOptions::default()
        },
    ];
    let mut failures = Vec::new();
    for options in &modes {
        let mut on_estimate = 0;
        for case in load_module_cases("fmerge") {
            let before = to_testcase_functions(&case.module);
            let mut module = case.module.clone();
            let report = fmerge::run(&mut module, Some(&*isa), options);
            for attempt in report.attempts.iter().filter(|a| a.on_estimate) {
                assert_eq!(attempt.measured, None, "{}", case.name);
                on_estimate += 1;
            }
            verify_all(&module, &case.name);
            let after = to_testcase_functions(&module);
            failures.extend(run_differences(&case, &before, &after));
        }
        assert!(
            on_estimate > 0,
            "{:?}: nothing decided on an estimate",
            options.decide
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Measuring what the model rejects changes measurements only.
#[test]
fn measuring_everything_changes_no_decision() {
    let isa = aarch64();
    for case in load_module_cases("fmerge") {
        let plain = fmerge::run(
            &mut case.module.clone(),
            Some(&*isa),
            &FmergeOptions::default(),
        );
        let all = FmergeOptions {
            measure_all: true,
            ..FmergeOptions::default()
        };
        let measured = fmerge::run(&mut case.module.clone(), Some(&*isa), &all);
        let decisions = |r: &FmergeReport| {
            r.attempts
                .iter()
                .map(|a| (a.first.clone(), a.second.clone(), a.decision.clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(decisions(&plain), decisions(&measured), "{}", case.name);
        assert!(measured
            .attempts
            .iter()
            .all(|a| a.predicted.is_none() || a.measured.is_some()));
    }
}

/// The hot-code hook: excluded functions are never merged.
#[test]
fn excluded_functions_are_not_touched() {
    let case = load_module_cases("fmerge")
        .into_iter()
        .find(|c| c.name == "one_opcode")
        .unwrap();
    let options = FmergeOptions {
        exclude: ["mix_sub".to_string()].into(),
        ..FmergeOptions::default()
    };
    let mut module = case.module.clone();
    let report = fmerge::run(&mut module, Some(&*aarch64()), &options);
    assert_eq!(report.stats.merged, 0);
    assert_eq!(report.stats.candidates, 1);
}

/// F3M §III-E: in the merged functions of `ssa_repair.clif`, every value a
/// block parameter receives from an edge of one side is that side's, and
/// the values the SSA construction invents for paths of the other side
/// (zeros) are never what a side's run computes: the run lines take every
/// path, and the merged functions contain no stack traffic (HyFM's repair
/// went through memory).
#[test]
fn merged_functions_repair_ssa_without_memory() {
    let case = load_module_cases("fmerge")
        .into_iter()
        .find(|c| c.name == "ssa_repair")
        .unwrap();
    let mut module = case.module.clone();
    let report = fmerge::run(&mut module, Some(&*aarch64()), &FmergeOptions::default());
    assert_eq!(report.stats.merged, 2, "{:?}", report.remarks);
    let merged: Vec<&Function> = module
        .functions
        .iter()
        .filter(|d| {
            module.symbols[d.symbol as usize]
                .name
                .contains(fmerge::MERGED_SUFFIX)
        })
        .map(|d| &d.func)
        .collect();
    assert_eq!(merged.len(), 2);
    for func in merged {
        assert!(func.sized_stack_slots.is_empty());
        for block in func.layout.blocks() {
            for inst in func.layout.block_insts(block) {
                assert!(
                    !matches!(
                        func.dfg.insts[inst],
                        InstructionData::Load { .. } | InstructionData::Store { .. }
                    ),
                    "{}",
                    func.display()
                );
            }
        }
    }
    let before = to_testcase_functions(&case.module);
    let after = to_testcase_functions(&module);
    assert!(run_differences(&case, &before, &after).is_empty());
    assert!(report
        .attempts
        .iter()
        .filter(|a| a.decision == Decision::Merged)
        .all(|a| a.measured.is_some_and(|m| m > 0)));
}
