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
    assert!(cases.len() >= 17, "expected at least 17 fmerge filetests");
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

/// Screening on the alignment's estimate (`-Os`) rejects, without
/// generating the merged function, only tries that generating it would
/// have rejected too, and leaves every file's semantics: a screened try is
/// one the unscreened run did not merge, and the screened run generates
/// fewer merged functions than it tries.
#[test]
fn screening_skips_only_rejected_tries() {
    let isa = aarch64();
    let screened = FmergeOptions {
        decide: Decide::Estimate,
        screen_aligned: true,
        ..FmergeOptions::default()
    };
    let plain = FmergeOptions {
        screen_aligned: false,
        ..screened.clone()
    };
    let mut skipped = 0;
    let mut failures = Vec::new();
    for case in load_module_cases("fmerge") {
        let before = to_testcase_functions(&case.module);
        let mut module = case.module.clone();
        let report = fmerge::run(&mut module, Some(&*isa), &screened);
        let reference = fmerge::run(&mut case.module.clone(), Some(&*isa), &plain);
        assert_eq!(reference.stats.screened, 0, "{}", case.name);
        for attempt in report.attempts.iter().filter(|a| a.predicted.is_none()) {
            let Some(aligned) = attempt.aligned else {
                continue;
            };
            skipped += 1;
            assert_eq!(attempt.decision, Decision::RejectedByModel, "{}", case.name);
            let same = reference
                .attempts
                .iter()
                .find(|r| r.first == attempt.first && r.second == attempt.second)
                .unwrap_or_else(|| panic!("{}: {} not tried unscreened", case.name, attempt.first));
            assert_ne!(same.decision, Decision::Merged, "{}: {aligned}", case.name);
        }
        assert_eq!(report.stats.merged, reference.stats.merged, "{}", case.name);
        verify_all(&module, &case.name);
        let after = to_testcase_functions(&module);
        failures.extend(run_differences(&case, &before, &after));
    }
    assert!(skipped > 0, "no try was screened");
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
    let merged = merged_functions(&module);
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

/// The module of the fmerge filetest `name`.
fn case(name: &str) -> support::Case {
    load_module_cases("fmerge")
        .into_iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no filetest {name}"))
}

/// The merged functions of `module`.
fn merged_functions(module: &ClifModule) -> Vec<&Function> {
    module
        .functions
        .iter()
        .filter(|d| {
            module.symbols[d.symbol as usize]
                .name
                .contains(fmerge::MERGED_SUFFIX)
        })
        .map(|d| &d.func)
        .collect()
}

/// Branches and `select`s on the identifier (the last parameter) inside
/// loops of `func`.
fn identifier_tests_in_loops(func: &Function) -> usize {
    let fid = *func
        .dfg
        .block_params(func.layout.entry_block().unwrap())
        .last()
        .unwrap();
    let in_loop = parec_passes::heat::in_loop_blocks(func);
    func.layout
        .blocks()
        .filter(|&b| in_loop[b])
        .flat_map(|b| func.layout.block_insts(b))
        .filter(|&inst| {
            let args = func.dfg.inst_args(inst);
            match func.dfg.insts[inst] {
                InstructionData::Brif { arg, .. } => arg == fid,
                InstructionData::Ternary { .. } => {
                    func.dfg.insts[inst].opcode() == cranelift_codegen::ir::Opcode::Select
                        && args[0] == fid
                }
                _ => false,
            }
        })
        .count()
}

/// Issue 33's motivating pair: by region, the merged loop tests the
/// identifier once per iteration and saves more than the merge per
/// instruction, which tests it at several points of the loop; `-Os`'s
/// rule (no test in every iteration of a loop but at a region's entry)
/// refuses the latter and keeps the former; both compute what the
/// originals did.
#[test]
fn region_dispatch_tests_the_identifier_once_per_iteration() {
    let case = case("region_loop");
    let isa = aarch64();
    let before = to_testcase_functions(&case.module);
    let run = |options: &FmergeOptions| {
        let mut module = case.module.clone();
        let report = fmerge::run(&mut module, Some(&*isa), options);
        verify_all(&module, "region_loop");
        let after = to_testcase_functions(&module);
        let differences = run_differences(&case, &before, &after);
        assert!(differences.is_empty(), "{differences:?}");
        (module, report)
    };
    let (by_region, report) = run(&FmergeOptions::default());
    assert_eq!((report.stats.merged, report.stats.by_region), (1, 1));
    let saved_by_region = report.stats.measured_bytes;
    assert_eq!(
        identifier_tests_in_loops(merged_functions(&by_region)[0]),
        1
    );

    let per_instruction = FmergeOptions {
        regions: false,
        min_benefit: -1000,
        ..FmergeOptions::default()
    };
    let (by_instruction, report) = run(&per_instruction);
    assert_eq!((report.stats.merged, report.stats.by_region), (1, 0));
    let tests = identifier_tests_in_loops(merged_functions(&by_instruction)[0]);
    assert!(tests > 1, "{tests} test(s) per iteration");
    assert!(
        saved_by_region > report.stats.measured_bytes,
        "by region {saved_by_region} bytes, per instruction {}",
        report.stats.measured_bytes
    );

    let size_at_speed = FmergeOptions {
        loops_untested: true,
        ..per_instruction.clone()
    };
    let (_, report) = run(&size_at_speed);
    assert_eq!(report.stats.merged, 0);
    assert!(
        report
            .remarks
            .iter()
            .any(|r| r.to_string().contains("in every iteration of a loop")),
        "{:?}",
        report.remarks
    );
    let (_, report) = run(&FmergeOptions {
        regions: true,
        ..size_at_speed
    });
    assert_eq!((report.stats.merged, report.stats.by_region), (1, 1));
}

/// `-Os`'s rule on regions in loops: a region entered on every iteration
/// must be large enough on each side to pay for the test and the jump
/// (`FmergeOptions::region_min_insts_in_loop`). `region_loop`'s twice3
/// side is a multiply and an add with their constants: below a limit of 8
/// the merge is refused with a remark naming the region's size; with no
/// limit it merges by region, as before.
#[test]
fn small_regions_in_loops_are_not_dispatched_at_os() {
    let case = case("region_loop");
    let isa = aarch64();
    let size_at_speed = FmergeOptions {
        loops_untested: true,
        region_min_insts_in_loop: 8,
        ..FmergeOptions::default()
    };
    let mut module = case.module.clone();
    let report = fmerge::run(&mut module, Some(&*isa), &size_at_speed);
    verify_all(&module, "region_loop");
    assert_eq!(report.stats.merged, 0, "{:?}", report.remarks);
    let remark = report
        .remarks
        .iter()
        .map(|r| r.to_string())
        .find(|r| r.contains("would enter a region of"))
        .unwrap_or_else(|| panic!("{:?}", report.remarks));
    assert!(remark.contains("(at least 8)"), "{remark}");
    let mut module = case.module.clone();
    let report = fmerge::run(
        &mut module,
        Some(&*isa),
        &FmergeOptions {
            region_min_insts_in_loop: 0,
            ..size_at_speed
        },
    );
    assert_eq!(
        (report.stats.merged, report.stats.by_region),
        (1, 1),
        "{:?}",
        report.remarks
    );
}

/// `-Os`'s loop rule allows `select`s of loop-invariant values (Cranelift
/// hoists them) and refuses a `select` that becomes a divisor.
#[test]
fn loop_rule_refuses_divisors_and_allows_invariant_selects() {
    let isa = aarch64();
    let options = FmergeOptions {
        loops_untested: true,
        ..FmergeOptions::default()
    };
    let mut module = case("divisor").module;
    let report = fmerge::run(&mut module, Some(&*isa), &options);
    assert_eq!(report.stats.merged, 0, "{:?}", report.remarks);
    let mut module = case("constant").module;
    let report = fmerge::run(&mut module, Some(&*isa), &options);
    assert_eq!(report.stats.merged, 1, "{:?}", report.remarks);
}

/// With a profile, functions known hot merge only where the merged
/// function tests the identifier on no call or iteration but at regions'
/// entries; without region-level dispatch they are not candidates.
#[test]
fn hot_functions_merge_by_region_only() {
    let case = case("region_loop");
    let isa = aarch64();
    let mut heat = parec_passes::heat::HotCode::default();
    for name in ["sum_clamped", "sum_twice3"] {
        heat.functions
            .insert(name.to_string(), parec_passes::heat::Heat::Hot);
    }
    let hot = FmergeOptions {
        heat: std::sync::Arc::new(heat),
        min_benefit: -1000,
        ..FmergeOptions::default()
    };
    let mut module = case.module.clone();
    let report = fmerge::run(&mut module, Some(&*isa), &hot);
    assert_eq!((report.stats.merged, report.stats.by_region), (1, 1));
    // Region dispatch off for the others (-Oz's default): a hot pair
    // still merges by region.
    let mut module = case.module.clone();
    let others_by_instruction = FmergeOptions {
        regions: false,
        ..hot.clone()
    };
    let report = fmerge::run(&mut module, Some(&*isa), &others_by_instruction);
    assert_eq!((report.stats.merged, report.stats.by_region), (1, 1));
    // Without region dispatch for hot pairs, the merge would test the
    // identifier on every iteration: hot functions are not candidates.
    let mut module = case.module.clone();
    let report = fmerge::run(
        &mut module,
        Some(&*isa),
        &FmergeOptions {
            hot_regions: false,
            ..others_by_instruction
        },
    );
    assert_eq!(report.stats.candidates, 0);
    assert!(report
        .remarks
        .iter()
        .any(|r| r.to_string().contains("known hot")));
}
