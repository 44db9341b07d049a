//! Inlining filetests: every `filetests/inline/*.clif` file is one module
//! (functions named in run lines, and those a `; export: %f` line names, are
//! exported; the others are local). The size policy runs with aarch64
//! measurement; every function is verified; each `; run:` / `; print:` line
//! is executed with cranelift-interpreter before and after (results and
//! traps must agree); a second run must inline nothing; `; expect:` lines
//! state what the file is about:
//!
//! | expectation        | meaning                                              |
//! |--------------------|------------------------------------------------------|
//! | `inlined N`        | call sites inlined                                   |
//! | `deleted N`        | functions deleted                                    |
//! | `kept %f`, `gone %f` | `%f` is still defined / no longer exists           |
//! | `calls %f %g`      | `%f` still calls `%g` directly                       |
//! | `reads %f %s`      | a global value of `%f` names the symbol `%s`         |
//! | `remark TEXT`      | some remark contains TEXT                            |
//!
//! The result and the remarks are snapshotted in `snapshots/inline/`. The
//! speed policy runs on the same files (verifier and run lines).

use cranelift_codegen::ir::{Function, GlobalValueData};
use parec_passes::callgraph::References;
use parec_passes::clif_module::ClifModule;
use parec_passes::inline::{self, InlineOptions, InlineReport, MeasureBudget, Policy};
use parec_passes::size_model::Decide;

mod support;
use support::{
    aarch64, expectations, load_module_cases, parse_case, run_differences, snapshot_pass,
    to_testcase_functions, verify_all, Case,
};

fn defined<'m>(module: &'m ClifModule, name: &str) -> Option<&'m Function> {
    module
        .function(name.trim_start_matches('%'))
        .map(|d| &d.func)
}

/// Checks one expectation against the module after the pass.
fn check(expect: &str, report: &InlineReport, module: &ClifModule) -> Result<(), String> {
    let (what, value) = expect.split_once(' ').unwrap_or((expect, ""));
    let args: Vec<&str> = value.split_whitespace().collect();
    let count = |n: u64| match value.parse::<u64>() {
        Ok(v) if v == n => Ok(()),
        Ok(v) => Err(format!("expected {what} {v}, got {n}")),
        Err(_) => Err(format!("bad expectation `{expect}`")),
    };
    let symbol_name = |index: u32| module.symbols[index as usize].name.clone();
    match what {
        "inlined" => count(report.stats.inlined),
        "deleted" => count(report.stats.deleted),
        "kept" if defined(module, value).is_some() => Ok(()),
        "kept" => Err(format!("{value} was deleted")),
        "gone" if defined(module, value).is_none() => Ok(()),
        "gone" => Err(format!("{value} is still defined")),
        "calls" => {
            let func = defined(module, args[0]).ok_or(format!("{} is gone", args[0]))?;
            let callee = args[1].trim_start_matches('%');
            let calls = References::of(func).callees();
            match calls.iter().any(|&s| symbol_name(s) == callee) {
                true => Ok(()),
                false => Err(format!("{} no longer calls {}", args[0], args[1])),
            }
        }
        "reads" => {
            let func = defined(module, args[0]).ok_or(format!("{} is gone", args[0]))?;
            let wanted = args[1].trim_start_matches('%');
            let reads = func.global_values.values().any(|gv| match gv {
                GlobalValueData::Symbol { name, .. } => {
                    ClifModule::symbol_of(func, name).is_some_and(|s| symbol_name(s) == wanted)
                }
                _ => false,
            });
            match reads {
                true => Ok(()),
                false => Err(format!("{} does not name {}", args[0], args[1])),
            }
        }
        "remark" if report.remarks.iter().any(|r| r.to_string().contains(value)) => Ok(()),
        "remark" => Err(format!("no remark contains `{value}`")),
        _ => Err(format!("unknown expectation `{expect}`")),
    }
}

#[test]
fn inline_filetests() {
    let cases = load_module_cases("inline");
    assert!(cases.len() >= 12, "expected at least 12 inline filetests");
    let isa = aarch64();
    let options = InlineOptions::for_policy(Policy::Size);
    let mut failures = Vec::new();
    for case in cases {
        let before = to_testcase_functions(&case.module);
        let mut module = case.module.clone();
        let report = inline::run(&mut module, Some(&*isa), &options);
        verify_all(&module, &case.name);
        let mut again = module.clone();
        let second = inline::run(&mut again, Some(&*isa), &options);
        if second.stats.inlined != 0 || second.stats.deleted != 0 {
            failures.push(format!(
                "{}: a second run changed the module: {}",
                case.name, second.stats
            ));
        }
        for expect in expectations("inline", &case) {
            if let Err(e) = check(&expect, &report, &module) {
                let remarks: Vec<String> = report.remarks.iter().map(|r| r.to_string()).collect();
                failures.push(format!("{}: {e}\n{}", case.name, remarks.join("\n")));
            }
        }
        let after = to_testcase_functions(&module);
        failures.extend(run_differences(&case, &before, &after));
        snapshot_pass("inline", &case, &report.stats, &report.remarks, &after);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Without hot sites, the size policy never lets a module grow: the
/// measured bytes of all its functions after the pass are at most those
/// before. (Hot sites trade bytes for time: `hot_site.clif`.)
#[test]
fn the_module_never_grows() {
    let isa = aarch64();
    let options = InlineOptions {
        hot_callee_insts: 0,
        ..InlineOptions::for_policy(Policy::Size)
    };
    for case in load_module_cases("inline") {
        let total = |m: &ClifModule| -> usize {
            m.functions
                .iter()
                .map(|d| parec_passes::code_cache::code_size(&d.func, &*isa, None).unwrap())
                .sum()
        };
        let before = total(&case.module);
        let mut module = case.module.clone();
        inline::run(&mut module, Some(&*isa), &options);
        let after = total(&module);
        assert!(after <= before, "{}: {before} -> {after} bytes", case.name);
    }
}

/// The speed policy on the same files: verified, and the run lines agree.
#[test]
fn speed_policy_is_correct() {
    let options = InlineOptions::for_policy(Policy::Speed);
    let mut inlined = 0;
    let mut failures = Vec::new();
    for case in load_module_cases("inline") {
        let before = to_testcase_functions(&case.module);
        let mut module = case.module.clone();
        let report = inline::run(&mut module, None, &options);
        inlined += report.stats.inlined;
        verify_all(&module, &format!("{} (speed)", case.name));
        let after = to_testcase_functions(&module);
        failures.extend(run_differences(&case, &before, &after));
    }
    assert!(inlined > 0);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A caller the pipeline keeps as it is (a member the constant merger will
/// merge) still calls its callees: the speed policy inlines everywhere else
/// but deletes nothing such a caller calls (once, a `--passes
/// inline-speed,merge` build of bench/generic_zoo called a deleted function).
#[test]
fn kept_callers_keep_their_callees() {
    let case = load_module_cases("inline")
        .into_iter()
        .find(|c| c.name == "kept_caller")
        .expect("filetests/inline/kept_caller.clif");
    let mut options = InlineOptions::for_policy(Policy::Speed);
    options.keep.insert("b".to_string());
    let before = to_testcase_functions(&case.module);
    let mut module = case.module.clone();
    let report = inline::run(&mut module, None, &options);
    verify_all(&module, "kept_caller (speed, %b kept)");
    assert_eq!(report.stats.inlined, 1, "{}", report.stats);
    assert_eq!(report.stats.deleted, 0, "{}", report.stats);
    for expect in ["kept %tiny", "calls %b %tiny"] {
        check(expect, &report, &module).unwrap();
    }
    let after = to_testcase_functions(&module);
    let differences = run_differences(&case, &before, &after);
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// A tiny callee (`%mix`, 11 CLIF instructions) called outside loops by
/// `%leaf`, which a loop of `%driver` calls, and by `%once`, which nothing
/// in the module calls; all three are exported.
const TINY_CALLEE: &str = "
; export: %mix
; export: %leaf
; export: %once
; export: %driver
function %mix(i64, i64) -> i64 tail {
block0(v0: i64, v1: i64):
    v2 = iconst.i64 31
    v3 = imul v0, v2
    v4 = bxor v3, v1
    v5 = iconst.i64 5
    v6 = rotl v4, v5
    v7 = iconst.i64 0x9e37_79b9
    v8 = imul v6, v7
    v9 = iconst.i64 13
    v10 = ushr v8, v9
    v11 = bxor v8, v10
    return v11
}

function %leaf(i64) -> i64 tail {
    fn0 = colocated %mix(i64, i64) -> i64 tail
block0(v0: i64):
    v1 = iconst.i64 7
    v2 = call fn0(v0, v1)
    return v2
}

function %once(i64) -> i64 tail {
    fn0 = colocated %mix(i64, i64) -> i64 tail
block0(v0: i64):
    v1 = iconst.i64 9
    v2 = call fn0(v0, v1)
    return v2
}

function %driver(i64) -> i64 tail {
    fn0 = colocated %leaf(i64) -> i64 tail
block0(v0: i64):
    v1 = iconst.i64 0
    jump block1(v1, v0)

block1(v2: i64, v3: i64):
    v4 = call fn0(v3)
    v5 = iconst.i64 1
    v6 = iadd v2, v5
    v7 = iconst.i64 10
    v8 = icmp slt v6, v7
    brif v8, block1(v6, v4), block2

block2:
    return v4
}
; print: %driver(3)
; print: %leaf(-12345)
; print: %once(99)
";

/// `InlineOptions::hot_tiny_insts` (`-Os`): a tiny callee is a hot site
/// outside loops in a function that may run many times (here `%leaf`,
/// called in a loop), not in one that runs a bounded number of times
/// (`%once`), nor in a merge member whose group would split on it. The
/// print lines agree.
#[test]
fn tiny_callees_are_hot_where_their_callers_repeat() {
    let case = parse_case(TINY_CALLEE, "tiny_callee_outside_loops", "m");
    let isa = aarch64();
    let run = |options: &InlineOptions| {
        let before = to_testcase_functions(&case.module);
        let mut module = case.module.clone();
        let report = inline::run(&mut module, Some(&*isa), options);
        verify_all(&module, "tiny_callee_outside_loops");
        let after = to_testcase_functions(&module);
        let differences = run_differences(&case, &before, &after);
        assert!(differences.is_empty(), "{}", differences.join("\n"));
        let calls = |caller: &str| check(&format!("calls {caller} %mix"), &report, &module).is_ok();
        (calls("%leaf"), calls("%once"))
    };
    let tiny = InlineOptions {
        hot_tiny_insts: 12,
        ..InlineOptions::for_policy(Policy::Size)
    };
    assert_eq!(run(&tiny), (false, true));
    assert_eq!(run(&InlineOptions::for_policy(Policy::Size)), (true, true));
    let mut member = tiny.clone();
    member.keep.insert("leaf".to_string());
    assert_eq!(run(&member), (true, true));
    // One instruction fewer than the callee: not tiny.
    let smaller = InlineOptions {
        hot_tiny_insts: 10,
        ..tiny
    };
    assert_eq!(run(&smaller), (true, true));
}

/// Decisions taken on estimates (every trial: `Decide::Estimate`, and a
/// spent measuring budget) keep every file's semantics: the verifier passes
/// and the run lines agree. (The decisions themselves may differ from the
/// measured ones: that is the estimate's error.)
#[test]
fn estimated_decisions_keep_semantics() {
    let isa = aarch64();
    let modes = [
        InlineOptions {
            decide: Decide::Estimate,
            ..InlineOptions::for_policy(Policy::Size)
        },
        InlineOptions {
            measure_budget: MeasureBudget {
                floor: 0,
                per_inst: 0,
            },
            ..InlineOptions::for_policy(Policy::Size)
        },
    ];
    let mut failures = Vec::new();
    for options in &modes {
        for case in load_module_cases("inline") {
            let before = to_testcase_functions(&case.module);
            let mut module = case.module.clone();
            let report = inline::run(&mut module, Some(&*isa), options);
            assert_eq!(
                report.stats.measured, 0,
                "{}: nothing may be compiled",
                case.name
            );
            verify_all(&module, &case.name);
            let after = to_testcase_functions(&module);
            failures.extend(run_differences(&case, &before, &after));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A module whose exported `main` calls `n` small local functions, each
/// once, in a chain (`v{k+1} = call g{k}(v{k})`); each callee stores to a
/// global and calls an import.
fn chain_of_calls(n: usize) -> Case {
    let mut text = String::new();
    for k in 0..n {
        text.push_str(&format!(
            "function %g{k}(i64) -> i64 tail {{
                 sig0 = (i64) system_v
                 fn0 = %print sig0
                 gv0 = symbol %counter
             block0(v0: i64):
                 v1 = iconst.i64 {k}
                 v2 = iadd v0, v1
                 v3 = symbol_value.i64 gv0
                 store v2, v3
                 call fn0(v2)
                 return v2
             }}\n"
        ));
    }
    text.push_str(
        "; export: %main\nfunction %main(i64) -> i64 tail {\n    sig0 = (i64) -> i64 tail\n",
    );
    for k in 0..n {
        text.push_str(&format!("    fn{k} = %g{k} sig0\n"));
    }
    text.push_str("block0(v0: i64):\n");
    for k in 0..n {
        text.push_str(&format!("    v{} = call fn{k}(v{k})\n", k + 1));
    }
    text.push_str(&format!("    return v{n}\n}}\n"));
    parse_case(&text, "chain", "m")
}

/// Issue 34 item 8: the trials of one caller compile `O(|f|)` CLIF
/// instructions whatever its number of calls. Measuring every trial (the
/// inliner before the size model, `Decide::Measure`) compiles the caller
/// once per call — quadratic —; the measuring budget bounds it. A budget
/// floor of 1,000 instructions keeps the test to a few hundred small
/// compilations.
#[test]
fn trials_of_a_caller_compile_linear_instructions() {
    let isa = aarch64();
    let budget = MeasureBudget {
        floor: 1_000,
        per_inst: 4,
    };
    let compiled = |n: usize, decide: Decide| -> (u64, usize) {
        let mut module = chain_of_calls(n).module;
        let size = module.inst_count();
        let options = InlineOptions {
            decide,
            measure_budget: budget,
            ..InlineOptions::for_policy(Policy::Size)
        };
        let report = inline::run(&mut module, Some(&*isa), &options);
        assert_eq!(report.stats.inlined, n as u64, "every call is inlined");
        (report.stats.compiled_insts, size)
    };
    for n in [80, 160] {
        let (bounded, size) = compiled(n, Decide::EstimateThenMeasure);
        assert!(
            bounded <= 6 * size as u64,
            "{n} calls: {bounded} instructions compiled for a module of {size}"
        );
    }
    // The bound fails without the budget: the old inliner's cost.
    let (measured, size) = compiled(80, Decide::Measure);
    assert!(measured > 24 * size as u64, "{measured} for {size}");
}

/// A module whose exported `main` calls `n` one-line local functions
/// (`x * c + k`), each once, in a chain: the shape of issue 34's program.
fn chain_of_one_liners(n: usize) -> Case {
    let mut text = String::new();
    for k in 0..n {
        text.push_str(&format!(
            "function %g{k}(i64) -> i64 tail {{
             block0(v0: i64):
                 v1 = iconst.i64 {}
                 v2 = imul v0, v1
                 v3 = iconst.i64 {k}
                 v4 = iadd v2, v3
                 return v4
             }}\n",
            k % 7 + 3
        ));
    }
    text.push_str(
        "; export: %main\nfunction %main(i64) -> i64 tail {\n    sig0 = (i64) -> i64 tail\n",
    );
    for k in 0..n {
        text.push_str(&format!("    fn{k} = %g{k} sig0\n"));
    }
    text.push_str("block0(v0: i64):\n");
    for k in 0..n {
        text.push_str(&format!("    v{} = call fn{k}(v{k})\n", k + 1));
    }
    text.push_str(&format!("    return v{n}\n}}\n"));
    parse_case(&text, "one_liners", "m")
}

/// Issue 34 item 8, the decisions: once a caller's budget is spent, its
/// trials near the threshold are decided on the estimate corrected by the
/// model's error on its measured trials, and take the decisions measuring
/// takes. The callees are in `keep` (the constant merger will merge them,
/// as in the driver), so each inlining must not grow `main`: the raw
/// estimate (+1 byte) refused what Cranelift's bytes (−8 to −12) accept.
#[test]
fn budget_spent_decisions_follow_the_measured_ones() {
    let isa = aarch64();
    let n = 60;
    let run = |decide: Decide| {
        let mut module = chain_of_one_liners(n).module;
        let keep = module
            .symbols
            .iter()
            .filter(|s| s.name.starts_with('g'))
            .map(|s| s.name.clone())
            .collect();
        let options = InlineOptions {
            decide,
            keep,
            measure_budget: MeasureBudget {
                floor: 1_000,
                per_inst: 0,
            },
            ..InlineOptions::for_policy(Policy::Size)
        };
        let report = inline::run(&mut module, Some(&*isa), &options);
        (report.stats.inlined, report.stats.estimated)
    };
    let (measured, _) = run(Decide::Measure);
    let (bounded, estimated) = run(Decide::EstimateThenMeasure);
    assert!(
        estimated > n as u64 / 2,
        "{estimated} of {n} trials decided on estimates"
    );
    assert_eq!(bounded, measured);
}

/// Inlinings decided on estimates are made in batches (`Inliner::flush`):
/// the result is the function inlining them one at a time gives, which is
/// what `Decide::Measure` does — here both decide to inline every call.
#[test]
fn batched_inlining_equals_one_at_a_time() {
    let isa = aarch64();
    let run = |decide: Decide| {
        let mut module = chain_of_calls(40).module;
        let options = InlineOptions {
            decide,
            ..InlineOptions::for_policy(Policy::Size)
        };
        let report = inline::run(&mut module, Some(&*isa), &options);
        assert_eq!(report.stats.inlined, 40);
        to_testcase_functions(&module)
            .iter()
            .map(|f| f.display().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(run(Decide::Estimate), run(Decide::Measure));
}

/// One instance `%g{tag}` of a generic `x * k % p` and its exported
/// caller `%f{tag}`, which calls it at `sites` sites in a chain.
fn instance_text(tag: &str, k: i64, p: i64, sites: usize) -> String {
    let mut text = format!(
        "function %g{tag}(i64) -> i64 tail {{
         block0(v0: i64):
             v1 = iconst.i64 {k}
             v2 = imul v0, v1
             v3 = iconst.i64 {p}
             v4 = urem v2, v3
             return v4
         }}
         ; export: %f{tag}
         function %f{tag}(i64) -> i64 tail {{
             sig0 = (i64) -> i64 tail
             fn0 = colocated %g{tag} sig0
         block0(v0: i64):\n"
    );
    for s in 0..sites {
        text.push_str(&format!("    v{} = call fn0(v{s})\n", s + 1));
    }
    text.push_str(&format!("    return v{sites}\n}}\n"));
    text
}

/// Instances of one generic that differ only in constants are decided
/// alike (the inliner's sibling classes): each alone, some are inlined
/// into their caller and deleted and others kept, as their constants cost
/// a few bytes more or less; together, each pair found so is all inlined
/// and deleted or all kept, on the pair's summed growth and size. (Two
/// instances decided apart no longer merge: bench/matrix's `det_mod`.)
#[test]
fn instances_of_one_generic_are_decided_alike() {
    let isa = aarch64();
    let options = InlineOptions::for_policy(Policy::Size);
    let constants = [
        (3, 7),
        (0x1234, 998_244_353),
        (0x1234_5678, 1_000_000_007),
        (0x1234_5678_9abc, 1_048_583),
        (0x0123_4567_89ab_cdef, 65_537),
    ];
    let deleted = |text: &str| -> Vec<bool> {
        let mut module = parse_case(text, "instances", "m").module;
        inline::run(&mut module, Some(&*isa), &options);
        ["ga", "gb"]
            .iter()
            .filter(|g| text.contains(&format!("%{g}(")))
            .map(|g| module.function(g).is_none())
            .collect()
    };
    let mut differing = 0;
    for sites in 2..=4 {
        let alone: Vec<bool> = constants
            .iter()
            .map(|&(k, p)| deleted(&instance_text("a", k, p, sites))[0])
            .collect();
        for a in 0..constants.len() {
            for b in a + 1..constants.len() {
                if alone[a] == alone[b] {
                    continue;
                }
                differing += 1;
                let ((ka, pa), (kb, pb)) = (constants[a], constants[b]);
                let text = instance_text("a", ka, pa, sites) + &instance_text("b", kb, pb, sites);
                let together = deleted(&text);
                assert_eq!(
                    together[0], together[1],
                    "{sites} sites, {:?} and {:?}: decided apart",
                    constants[a], constants[b]
                );
            }
        }
    }
    assert!(
        differing > 0,
        "no instances decided apart alone: the test shows nothing"
    );
}
