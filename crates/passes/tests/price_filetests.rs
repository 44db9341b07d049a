//! Costed-decision filetests: every `filetests/price/*.clif` file is one
//! module (functions named in run lines are exported: the module's entry
//! points; the others are local). The decisions of `parec_passes::price`
//! are taken as `-Oz` takes them, measured for aarch64, and the three
//! passes that compete for the same functions run after them in `-Oz`'s
//! order: the size inliner (told the prices), the constant merger (with the
//! module's own plan) and `fmerge`. Every function is verified; each
//! `; run:` / `; print:` line is executed with cranelift-interpreter before
//! and after (results and traps must agree); `; expect:` lines state the
//! decision the file is about (`merged N` thunks or bodies called by the
//! constant merger, `fmerged N` pairs, `deleted N` functions the inliner
//! deleted, `remark TEXT` some remark contains TEXT); the prices' remarks,
//! every pass's remarks and the result are snapshotted in
//! `snapshots/price/`.

use parec_passes::clif_module::ClifModule;
use parec_passes::fmerge::{self, FmergeOptions};
use parec_passes::inline::{self, InlineOptions, Policy};
use parec_passes::merge::{self, MergeOptions};
use parec_passes::price::{self, PriceOptions};
use parec_passes::remark::Remark;

mod support;
use support::{
    aarch64, expectations, load_module_cases, run_differences, snapshot_pass,
    to_testcase_functions, verify_all,
};

/// What the three passes did after the prices.
struct Outcome {
    merged: usize,
    fmerged: usize,
    deleted: u64,
    remarks: Vec<Remark>,
}

/// Prices `module`, then runs the inliner, the merger and `fmerge` on it
/// as `-Oz` does (crates/driver/src/pipeline.rs, `inline_options`).
fn decide_and_run(module: &mut ClifModule) -> Outcome {
    let isa = aarch64();
    let merge_options = MergeOptions::default();
    let plan = merge::combine(&merge::analyze(module, &merge_options), &merge_options);
    let price_options = PriceOptions {
        fmerge: Some(FmergeOptions::default()),
        ..PriceOptions::default()
    };
    let prices = price::price(module, &*isa, Some(&plan), &price_options);
    let planned = merge::planned(module, Some(&plan), &merge_options);
    // As the driver's `inline_options`: functions identical to another of
    // the module, which the linker keeps one copy of, are not deleted for
    // what their body seems to cost.
    let mut shared = prices.merge_similar.clone();
    let folds = fmerge::icf::folds_with_another(module);
    for (def, folds) in module.functions.iter().zip(folds) {
        if folds {
            shared.insert(module.symbols[def.symbol as usize].name.clone());
        }
    }
    let options = InlineOptions {
        keep: prices.keep.clone(),
        keep_alike: planned.alike_calls,
        inline_alike: prices.inline_alike.clone(),
        shared,
        ..InlineOptions::for_policy(Policy::Size)
    };
    let mut remarks = prices.remarks.clone();
    let inlined = inline::run(module, Some(&*isa), &options);
    verify_all(module, "after inline");
    remarks.extend(inlined.remarks);
    let merged = merge::run(module, None, &merge_options);
    verify_all(module, "after merge");
    remarks.extend(merged.remarks);
    let fmerged = fmerge::run(module, Some(&*isa), &FmergeOptions::default());
    verify_all(module, "after fmerge");
    remarks.extend(fmerged.remarks);
    Outcome {
        merged: merged.stats.merged,
        fmerged: fmerged.stats.merged,
        deleted: inlined.stats.deleted,
        remarks,
    }
}

/// Checks one expectation against an outcome.
fn check(expect: &str, outcome: &Outcome) -> Result<(), String> {
    let (what, value) = expect.split_once(' ').unwrap_or((expect, ""));
    let count = |n: u64| match value.parse::<u64>() {
        Ok(v) if v == n => Ok(()),
        Ok(v) => Err(format!("expected {what} {v}, got {n}")),
        Err(_) => Err(format!("bad expectation `{expect}`")),
    };
    match what {
        "merged" => count(outcome.merged as u64),
        "fmerged" => count(outcome.fmerged as u64),
        "deleted" => count(outcome.deleted),
        "remark"
            if outcome
                .remarks
                .iter()
                .any(|r| r.to_string().contains(value)) =>
        {
            Ok(())
        }
        "remark" => Err(format!("no remark contains `{value}`")),
        _ => Err(format!("unknown expectation `{expect}`")),
    }
}

#[test]
fn price_filetests() {
    let cases = load_module_cases("price");
    assert!(cases.len() >= 3, "expected at least 3 price filetests");
    let mut failures = Vec::new();
    for case in cases {
        let before = to_testcase_functions(&case.module);
        let mut module = case.module.clone();
        let outcome = decide_and_run(&mut module);
        let after = to_testcase_functions(&module);
        failures.extend(run_differences(&case, &before, &after));
        let expects = expectations("price", &case);
        assert!(!expects.is_empty(), "{}: no `; expect:` line", case.name);
        for expect in expects {
            if let Err(e) = check(&expect, &outcome) {
                failures.push(format!("{}: {e}", case.name));
            }
        }
        let stats = format!(
            "merged {}, fmerged {}, deleted {}",
            outcome.merged, outcome.fmerged, outcome.deleted
        );
        snapshot_pass("price", &case, &stats, &outcome.remarks, &after);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
