//! Merge filetests: every `filetests/merge/*.clif` file is one module. It is
//! merged locally (as `parec opt --passes merge` does), every function is
//! verified, the result and the remarks are snapshotted in
//! `snapshots/merge/`, a second run must change nothing, and each `; run:`
//! line is executed with cranelift-interpreter before and after (results
//! and traps must agree). Further tests pin down the hash (stable under
//! renaming and renumbering), the parameter assignment of [GFM]'s
//! Figure 6, two-module merging through a summary, forced collisions and the
//! cgdata section encoding.

use cranelift_codegen::ir::Function;
use parec_passes::cgdata::{CgData, Section};
use parec_passes::clif_module::{ClifModule, Linkage, SymbolKind};
use parec_passes::merge::{self, hash, MergeOptions, Summary};

mod support;
use support::{interpret, load, to_testcase_functions, verify_all, workspace, Case};

fn load_cases() -> Vec<Case> {
    support::load_module_cases("merge")
}

/// `filetests/merge/<file>` as one module whose run lines' functions are
/// exported: they are its entry points, called from outside (so merging
/// keeps their thunks).
fn load_merge_case(file: &str) -> Case {
    let mut case = load(&workspace().join("filetests/merge").join(file), "m");
    for (name, _) in &case.runs {
        let s = case
            .module
            .symbol_index(name.trim_start_matches('%'))
            .unwrap();
        case.module.symbols[s as usize].linkage = Linkage::Export;
    }
    case
}

/// Every run line of `case` gives the same results (or trap) before and
/// after the pass.
fn assert_runs_agree(case: &Case, before: &[Function], after: &[Function]) {
    for (name, args) in &case.runs {
        assert_eq!(
            interpret(before, name, args),
            interpret(after, name, args),
            "{}: {name}{args:?}",
            case.name
        );
    }
}

#[test]
fn merge_filetests() {
    let cases = load_cases();
    assert!(cases.len() >= 10, "expected at least 10 merge filetests");
    let opts = MergeOptions::default();
    let mut failures = Vec::new();
    for case in cases {
        let before = to_testcase_functions(&case.module);
        let mut module = case.module.clone();
        let report = merge::run(&mut module, None, &opts);
        verify_all(&module, &case.name);
        let again = merge::run(&mut module.clone(), None, &opts);
        if again.stats.merged != 0 {
            failures.push(format!("{}: a second run merged again", case.name));
        }
        let after = to_testcase_functions(&module);
        let mut runs = 0;
        for (name, args) in &case.runs {
            let b = interpret(&before, name, args);
            let a = interpret(&after, name, args);
            if b.as_ref().is_err_and(|e| e.contains("panicked")) {
                failures.push(format!("{}: {name}{args:?} does not run: {b:?}", case.name));
            }
            if b != a {
                failures.push(format!(
                    "{}: {name}{args:?}: before {b:?}, after {a:?}",
                    case.name
                ));
            }
            runs += 1;
        }
        let mut snapshot = format!("; {}\n; {runs} run line(s) agree\n", report.stats);
        // The hashes themselves are pinned: they must not depend on the
        // process, the platform or the run (cgdata files rely on it).
        for def in &case.module.functions {
            let shape = hash::shape(&case.module, &def.func, hash::LoopCalls::Parameterize);
            snapshot.push_str(&format!(
                "; hash {} = {:016x}, {} locations\n",
                case.module.symbols[def.symbol as usize].name,
                shape.hash,
                shape.locations.len()
            ));
        }
        for r in &report.remarks {
            snapshot.push_str(&format!("; {r}\n"));
        }
        for f in &after {
            snapshot.push_str(&format!("{}\n", f.display()));
        }
        insta::with_settings!({
            snapshot_path => workspace().join("snapshots/merge"),
            prepend_module_to_snapshot => false,
            omit_expression => true,
        }, {
            insta::assert_snapshot!(case.name.clone(), snapshot);
        });
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A function's name, stable hash and parameterizable locations
/// (instruction, operand, operand hash).
type FunctionHash = (String, u64, Vec<(u32, u32, u64)>);

/// Hashes of every function of a filetest, by name.
fn hashes(file: &str) -> Vec<FunctionHash> {
    let case = load(&workspace().join("filetests/merge").join(file), "m");
    case.module
        .functions
        .iter()
        .map(|def| {
            let s = hash::shape(&case.module, &def.func, hash::LoopCalls::Parameterize);
            (
                case.module.symbols[def.symbol as usize].name.clone(),
                s.hash,
                s.locations
                    .iter()
                    .map(|l| (l.inst, l.operand, l.hash))
                    .collect(),
            )
        })
        .collect()
}

#[test]
fn hash_is_stable_under_renaming_and_renumbering() {
    let h = hashes("hash_stable.clif");
    assert!(h.len() >= 3);
    for (name, hash, locs) in &h[1..] {
        assert_eq!(*hash, h[0].1, "{name} hashes unlike {}", h[0].0);
        assert_eq!(*locs, h[0].2, "{name} has other locations than {}", h[0].0);
    }
    // The value of the hash itself is fixed: no process, platform or run
    // dependence (a change here breaks every cgdata file in use).
    let again = hashes("hash_stable.clif");
    assert_eq!(h, again);
}

#[test]
fn hash_separates_what_matters() {
    let h = hashes("negative_shapes.clif");
    for i in 0..h.len() {
        for j in i + 1..h.len() {
            assert_ne!(h[i].1, h[j].1, "{} and {} collide", h[i].0, h[j].0);
        }
    }
}

/// Figure 6: f1, f2, f3 with four constant locations; the first is fixed,
/// the second and fourth share p0 = (H1, H2, H1), the third gets p1.
#[test]
fn parameters_as_in_figure_6() {
    let case = load_merge_case("fig6.clif");
    let opts = MergeOptions::default();
    let plan = merge::combine(&merge::analyze(&case.module, &opts), &opts);
    assert_eq!(plan.groups.len(), 1);
    let group = plan.groups.values().next().unwrap();
    assert_eq!(group.locations.len(), 4);
    let locs = &group.locations;
    assert_eq!(group.fixed.len(), 1);
    assert_eq!(group.fixed[0].0, locs[0]);
    assert_eq!(group.params, vec![vec![locs[1], locs[3]], vec![locs[2]]]);
    assert_eq!(group.distinct, 3);
    assert!(group.benefit() > group.cost());
}

/// Two modules, one function each: without a summary nothing merges (a
/// single local candidate); with the combined summary both merge and their
/// bodies are identical up to the function's own name.
#[test]
fn cross_module_merging_through_a_summary() {
    let path = workspace().join("filetests/merge/callees.clif");
    let whole = load(&path, "a");
    let mut a = whole.module.clone();
    let mut b = whole.module.clone();
    b.name = "b".to_string();
    // Module a keeps %add_one, b keeps %add_two: one candidate each.
    a.functions
        .retain(|d| a.symbols[d.symbol as usize].name == "add_one");
    b.functions
        .retain(|d| b.symbols[d.symbol as usize].name == "add_two");
    // Each module's function is its entry point: merging keeps its thunk.
    for m in [&mut a, &mut b] {
        let s = m.functions[0].symbol as usize;
        m.symbols[s].linkage = Linkage::Export;
    }
    let opts = MergeOptions::default();
    assert_eq!(merge::run(&mut a.clone(), None, &opts).stats.merged, 0);
    let mut summary = merge::analyze(&a, &opts);
    summary.merge(merge::analyze(&b, &opts));
    // The cgdata round trip gives back the same summary.
    let mut data = CgData::new("aarch64");
    data.put(&summary);
    let decoded = CgData::decode(&data.encode(), Some("aarch64")).unwrap();
    assert_eq!(decoded.get::<Summary>().unwrap().unwrap(), summary);
    let plan = merge::combine(&summary, &opts);
    let ra = merge::run(&mut a, Some(&plan), &opts);
    let rb = merge::run(&mut b, Some(&plan), &opts);
    assert_eq!(
        (ra.stats.merged, rb.stats.merged),
        (1, 1),
        "{:?} {:?}",
        ra,
        rb
    );
    verify_all(&a, "a");
    verify_all(&b, "b");
    let body = |m: &ClifModule| {
        let def = m.functions.last().unwrap();
        assert!(m.symbols[def.symbol as usize]
            .name
            .ends_with(merge::BODY_SUFFIX));
        // Declarations of callees the body no longer calls directly emit
        // nothing; leave them out of the comparison.
        let text = def.func.display().to_string();
        text[text.find('(').unwrap()..]
            .lines()
            .filter(|l| !l.trim_start().starts_with("fn"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(body(&a), body(&b));
}

/// Every function hashes alike: groups form by shape alone, bodies differ,
/// and every program still computes what it did.
#[test]
fn forced_collisions_stay_correct() {
    let opts = MergeOptions {
        force_collisions: true,
        min_insts: 1,
        ..MergeOptions::default()
    };
    let mut merged = 0;
    for case in load_cases() {
        let before = to_testcase_functions(&case.module);
        let mut module = case.module.clone();
        merged += merge::run(&mut module, None, &opts).stats.merged;
        verify_all(&module, &case.name);
        let after = to_testcase_functions(&module);
        assert_runs_agree(&case, &before, &after);
    }
    assert!(merged > 0, "forced collisions merged nothing");
}

/// A stale plan (from other functions with the same hash and shape but
/// other constants at fixed locations) is refused by the pattern check.
#[test]
fn stale_plan_pattern_mismatch_is_refused() {
    let case = load_merge_case("fig6.clif");
    let opts = MergeOptions::default();
    let mut plan = merge::combine(&merge::analyze(&case.module, &opts), &opts);
    for group in plan.groups.values_mut() {
        for fixed in &mut group.fixed {
            fixed.1 ^= 1;
        }
    }
    let mut module = case.module.clone();
    let report = merge::run(&mut module, Some(&plan), &opts);
    assert_eq!(report.stats.merged, 0);
    assert_eq!(report.stats.pattern_mismatches, 3);
}

/// Without tail calls (x86-64 without frame pointers) every thunk calls and
/// returns, and still computes what the function did.
#[test]
fn call_and_return_thunks_without_tail_calls() {
    let opts = MergeOptions {
        tail_calls: false,
        ..MergeOptions::default()
    };
    let mut merged = 0;
    for case in load_cases() {
        let before = to_testcase_functions(&case.module);
        let mut module = case.module.clone();
        let report = merge::run(&mut module, None, &opts);
        merged += report.stats.merged;
        verify_all(&module, &case.name);
        let after = to_testcase_functions(&module);
        for f in &after {
            let text = f.display().to_string();
            if text.contains(merge::BODY_SUFFIX)
                && !f.name.to_string().ends_with(merge::BODY_SUFFIX)
            {
                assert!(!text.contains("return_call "), "{text}");
            }
        }
        assert_runs_agree(&case, &before, &after);
    }
    assert!(merged > 0);
}

/// Read-only data defined in the module is hashed by content: two string
/// tables with equal bytes under different names are one constant (nothing
/// to parameterize), with different bytes two.
#[test]
fn read_only_data_is_hashed_by_content() {
    let with_tables = |a: &[u8], b: &[u8]| {
        let mut case = load_merge_case("globals.clif");
        for (name, bytes) in [("table_a", a), ("table_b", b)] {
            let s = case.module.symbol_index(name).unwrap();
            case.module.symbols[s as usize].kind = SymbolKind::Data { writable: false };
            case.module.symbols[s as usize].linkage = Linkage::Local;
            case.module.data.push(parec_passes::clif_module::DataDef {
                symbol: s,
                bytes: bytes.to_vec(),
                align: 8,
                relocs: Vec::new(),
            });
        }
        let opts = MergeOptions::default();
        let plan = merge::combine(&merge::analyze(&case.module, &opts), &opts);
        (plan.groups.len(), plan.stats.identical)
    };
    assert_eq!(with_tables(b"same", b"same"), (0, 1));
    assert_eq!(with_tables(b"this", b"that"), (1, 0));
}

/// The static hot-loop rule and a profile ([`parec_passes::heat`]): with
/// `loop_callee_insts`, instances that differ only in a small callee called
/// inside a loop do not merge (the body would call it indirectly on every
/// iteration); a profile that knows them cold merges them anyway, and one
/// that knows them hot leaves them alone whatever the rule.
#[test]
fn loop_calls_stay_direct() {
    use parec_passes::heat::{Heat, HotCode};
    use std::sync::Arc;
    let case = load_merge_case("loop_calls.clif");
    let merged_with = |options: &MergeOptions| {
        let mut module = case.module.clone();
        let report = merge::run(&mut module, None, options);
        verify_all(&module, "loop_calls");
        assert_runs_agree(
            &case,
            &to_testcase_functions(&case.module),
            &to_testcase_functions(&module),
        );
        report
    };
    let profile = |heat: Heat| {
        let functions = ["repeat_inc", "repeat_dec"]
            .into_iter()
            .map(|name| (name.to_string(), heat))
            .collect();
        Arc::new(HotCode {
            functions,
            ..HotCode::default()
        })
    };
    assert_eq!(merged_with(&MergeOptions::default()).stats.merged, 2);
    let rule = MergeOptions {
        loop_callee_insts: 60,
        ..MergeOptions::default()
    };
    assert_eq!(merged_with(&rule).stats.merged, 0);
    let cold = MergeOptions {
        heat: profile(Heat::Cold),
        ..rule.clone()
    };
    assert_eq!(merged_with(&cold).stats.merged, 2);
    let hot = MergeOptions {
        heat: profile(Heat::Hot),
        ..MergeOptions::default()
    };
    let report = merged_with(&hot);
    assert_eq!(report.stats.merged, 0);
    let hot_remarks = report
        .remarks
        .iter()
        .filter(|r| r.to_string().contains("hot-function"))
        .count();
    assert_eq!(hot_remarks, 2);
}

/// Calls of alike callees in the members of a group (`merge::alike`): the
/// size inliner inlines them at their hot sites although merging keeps the
/// members (`InlineOptions::keep`), the members stay alike and still merge,
/// and the merged body of that group no longer calls anything in its loop.
/// Calls of callees of different shapes stay calls.
#[test]
fn alike_calls_inline_and_still_merge() {
    use parec_passes::callgraph::References;
    use parec_passes::inline::{self, InlineOptions, Policy};
    let case = load_merge_case("alike_calls.clif");
    let opts = MergeOptions::default();
    let planned = merge::planned(&case.module, None, &opts);
    let pairs = |v: &[(&str, &str)]| -> std::collections::BTreeSet<(String, String)> {
        v.iter()
            .map(|&(f, g)| (f.to_string(), g.to_string()))
            .collect()
    };
    assert_eq!(
        planned.alike_calls,
        pairs(&[("repeat_add3", "add3"), ("repeat_add5", "add5")])
    );
    let members: Vec<&str> = planned.members.iter().map(String::as_str).collect();
    assert_eq!(
        members,
        ["repeat_add3", "repeat_add5", "repeat_dec", "repeat_inc"]
    );

    let isa = support::aarch64();
    let mut module = case.module.clone();
    let options = InlineOptions {
        keep: planned.members.clone(),
        keep_alike: planned.alike_calls.clone(),
        ..InlineOptions::for_policy(Policy::Size)
    };
    let inlined = inline::run(&mut module, Some(&*isa), &options);
    verify_all(&module, "alike_calls (inlined)");
    assert_eq!(inlined.stats.inlined, 2, "{}", inlined.stats);
    assert_eq!(inlined.stats.hot_sites, 2, "{}", inlined.stats);
    let calls = |module: &ClifModule, f: &str| -> Vec<String> {
        let func = &module.function(f).unwrap().func;
        References::of(func)
            .callees()
            .iter()
            .map(|&s| module.symbols[s as usize].name.clone())
            .collect()
    };
    assert!(calls(&module, "repeat_add3").is_empty());
    assert_eq!(calls(&module, "repeat_inc"), ["inc"]);

    let merged = merge::run(&mut module, None, &opts);
    verify_all(&module, "alike_calls (inlined, merged)");
    assert_eq!(merged.stats.merged, 4, "both groups still merge");
    let body = module
        .functions
        .iter()
        .find(|d| module.symbols[d.symbol as usize].name == "repeat_add3.Tgm")
        .expect("the first group's body");
    assert!(References::of(&body.func).callees().is_empty());
    assert_runs_agree(
        &case,
        &to_testcase_functions(&case.module),
        &to_testcase_functions(&module),
    );
}
