//! GVN filetests: every `filetests/gvn/*.clif` function is optimized, verified,
//! snapshotted, checked for idempotence, and executed before and after with
//! cranelift-interpreter on its `; run:` lines (results and traps must agree).
//! A second test compares aarch64 code size with and without the pass.
//! `filetests/gvn_params/*.clif` are modules: GVN with the non-null
//! parameters its call sites prove (`gvn_params_filetests`).

use std::collections::BTreeSet;

use cranelift_codegen::ir::{Function, Opcode};
use cranelift_codegen::isa::{self, TargetIsa};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_codegen::{verify_function, Context};
use cranelift_reader::RunCommand;
use parec_passes::clif_module::count_insts;
use parec_passes::clif_module::ClifModule;
use parec_passes::gvn;
use parec_passes::heat::HotCode;

mod support;
use support::{
    expectations, interpret, load_function_cases, load_module_cases, run_differences, run_verified,
    snapshot_pass, to_testcase_functions, verify_all, workspace,
};

fn flags() -> settings::Flags {
    settings::Flags::new(settings::builder())
}

fn optimize(func: &Function) -> (Function, gvn::GvnStats) {
    run_verified(func, "GVN", gvn::run)
}

#[test]
fn gvn_filetests() {
    let cases = load_function_cases("gvn");
    assert!(
        cases.len() >= 40,
        "expected at least 40 GVN filetests, found {}",
        cases.len()
    );
    let mut failures = Vec::new();
    for case in &cases {
        let optimized: Vec<(Function, gvn::GvnStats)> = case.funcs.iter().map(optimize).collect();
        let after: Vec<Function> = optimized.iter().map(|(f, _)| f.clone()).collect();
        // Idempotence: a second run changes nothing.
        for (f, _) in &optimized {
            let (again, stats) = optimize(f);
            if again.display().to_string() != f.display().to_string() {
                failures.push(format!(
                    "{}: not idempotent on {} ({stats})",
                    case.name, f.name
                ));
            }
        }
        for command in &case.runs {
            // The file's expectation holds before the pass (a wrong
            // expectation would make the before/after comparison vacuous).
            // (`print:` lines state nothing: a trap is what some of them show.)
            if let RunCommand::Run(..) = command {
                if let Err(e) = command.run(|name, args| interpret(&case.funcs, name, args)) {
                    failures.push(format!("{}: `{command}` before GVN: {e}", case.name));
                }
            }
            let (RunCommand::Run(inv, _, _) | RunCommand::Print(inv)) = command;
            let (name, args) = (&inv.func, &inv.args);
            let before = interpret(&case.funcs, name, args);
            let after_result = interpret(&after, name, args);
            if before != after_result {
                failures.push(format!(
                    "{}: {name}{args:?}: before {before:?}, after {after_result:?}",
                    case.name
                ));
            }
        }
        let mut snapshot = String::new();
        for (f, stats) in &optimized {
            snapshot.push_str(&format!("; {stats}\n{}\n", f.display()));
        }
        insta::with_settings!({
            snapshot_path => workspace().join("snapshots/gvn"),
            prepend_module_to_snapshot => false,
            omit_expression => true,
        }, {
            insta::assert_snapshot!(case.name.clone(), snapshot);
        });
    }
    assert!(
        failures.is_empty(),
        "GVN filetest failures:\n{}",
        failures.join("\n")
    );
}

fn aarch64() -> std::sync::Arc<dyn TargetIsa> {
    let mut b = settings::builder();
    b.set("opt_level", "speed").unwrap();
    isa::lookup_by_name("aarch64")
        .unwrap()
        .finish(settings::Flags::new(b))
        .unwrap()
}

fn code_size(isa: &dyn TargetIsa, func: &Function) -> usize {
    try_code_size(isa, func).unwrap_or_else(|e| panic!("{}: {e}", func.name))
}

fn try_code_size(isa: &dyn TargetIsa, func: &Function) -> Result<usize, String> {
    let mut ctx = Context::for_function(func.clone());
    let mut ctrl = Default::default();
    ctx.compile(isa, &mut ctrl)
        .map(|c| c.code_buffer().len())
        .map_err(|e| format!("{e:?}"))
}

/// Per function: CLIF instructions and aarch64 bytes after (GVN + Cranelift)
/// vs Cranelift alone. With the size guard of `run_for_size` (what `-Oz`
/// uses) no function may grow; growth of the unguarded pass is reported.
#[test]
fn gvn_never_grows_aarch64_code() {
    let isa = aarch64();
    let (mut bytes_before, mut bytes_after, mut insts_before, mut insts_after) = (0, 0, 0, 0);
    let (mut grew, mut unguarded_growth, mut reverted) = (Vec::new(), Vec::new(), 0);
    let (mut unsupported, mut pre_dropped) = (Vec::new(), 0);
    for case in load_function_cases("gvn") {
        for func in &case.funcs {
            // Big-endian accesses do not compile for aarch64: such a
            // function is checked by the interpreter only.
            let Ok(before) = try_code_size(&*isa, func) else {
                unsupported.push(format!("{}:{}", case.name, func.name));
                continue;
            };
            let (plain, _) = optimize(func);
            let plain_size = code_size(&*isa, &plain);
            if plain_size > before {
                unguarded_growth.push(format!(
                    "{}:{} {before} -> {plain_size}",
                    case.name, func.name
                ));
            }
            let mut guarded = func.clone();
            let stats = gvn::run_for_size(&mut guarded, &*isa);
            verify_function(&guarded, &flags()).unwrap();
            reverted += stats.reverted;
            pre_dropped += stats.pre_dropped;
            let after = code_size(&*isa, &guarded);
            bytes_before += before;
            bytes_after += after;
            insts_before += count_insts(func);
            insts_after += count_insts(&guarded);
            if after > before {
                grew.push(format!(
                    "{}:{} grew from {before} to {after} bytes",
                    case.name, func.name
                ));
            }
        }
    }
    println!(
        "GVN over filetests: CLIF instructions {insts_before} -> {insts_after}; aarch64 bytes {bytes_before} -> {bytes_after} ({:.1}%); reverted by the size guard: {reverted}, PRE dropped: {pre_dropped} ({}); not compilable for aarch64: {}",
        100.0 * (bytes_after as f64 - bytes_before as f64) / bytes_before.max(1) as f64,
        unguarded_growth.join(", "),
        unsupported.join(", ")
    );
    assert_eq!(
        reverted as usize + pre_dropped as usize,
        unguarded_growth.len(),
        "the guard must undo exactly the functions that grew (PRE dropped or reverted)"
    );
    assert!(grew.is_empty(), "{}", grew.join("\n"));
}

/// What a `filetests/gvn_params` expectation says of the module after GVN:
/// `nonnull %f i j ...` — exactly these parameters of `%f` are known
/// non-null; `returns %f nonnull|unknown` — whether every return of `%f`
/// is known non-zero; `traps %f N` — `%f` has `N` `trap` instructions left.
fn check_params_expectation(
    expect: &str,
    module: &ClifModule,
    params: &gvn::NonnullParams,
) -> Result<(), String> {
    let mut words = expect.split_whitespace();
    let what = words.next().unwrap_or("");
    let name = words.next().unwrap_or("").trim_start_matches('%');
    let rest: Vec<&str> = words.collect();
    match what {
        "nonnull" => {
            let want: Vec<usize> = rest.iter().map(|w| w.parse().unwrap()).collect();
            let got = params.of_function(name);
            match got == want.as_slice() {
                true => Ok(()),
                false => Err(format!(
                    "%{name}: non-null parameters {got:?}, expected {want:?}"
                )),
            }
        }
        "returns" => {
            let got = match params.returns_nonnull(name) {
                true => "nonnull",
                false => "unknown",
            };
            match rest.first() == Some(&got) {
                true => Ok(()),
                false => Err(format!("%{name}: result {got}, expected {rest:?}")),
            }
        }
        "traps" => {
            let def = module.function(name).ok_or(format!("%{name} is gone"))?;
            let func = &def.func;
            let traps = func
                .layout
                .blocks()
                .flat_map(|b| func.layout.block_insts(b))
                .filter(|&i| func.dfg.insts[i].opcode() == Opcode::Trap)
                .count();
            let want: usize = rest[0].parse().unwrap();
            match traps == want {
                true => Ok(()),
                false => Err(format!("%{name}: {traps} traps, expected {want}")),
            }
        }
        _ => Err(format!("unknown expectation `{expect}`")),
    }
}

/// `filetests/gvn_params`: each file is one module (functions its run lines
/// call, and `; export:` ones, exported; the others local). GVN runs on the
/// module with the size guard's aarch64 measure, then again with the
/// non-null parameters, as the pipeline runs them; every function is
/// verified, a second run changes nothing, the run lines agree before and
/// after (traps included), the `; expect:` lines hold, and the result is
/// snapshotted in `snapshots/gvn_params/`.
#[test]
fn gvn_params_filetests() {
    let isa = support::aarch64();
    let hot = HotCode::default();
    let no_shared = BTreeSet::new();
    let no_calls = gvn::CallSites {
        before: None,
        excluded: &no_shared,
    };
    let cases = load_module_cases("gvn_params");
    assert!(cases.len() >= 4, "expected at least 4 gvn_params filetests");
    let mut failures = Vec::new();
    for case in &cases {
        let before = to_testcase_functions(&case.module);
        let params = gvn::NonnullParams::of(&[&case.module], &BTreeSet::new());
        let mut module = case.module.clone();
        let mut report = gvn::run_module(&mut module, Some(&*isa), &hot);
        let second_run = gvn::run_nonnull_params(&mut module, Some(&*isa), &hot, &no_calls);
        report.stats.accumulate(&second_run.stats);
        report.remarks.extend(second_run.remarks);
        verify_all(&module, &case.name);
        let mut again = module.clone();
        let mut second = gvn::run_module(&mut again, Some(&*isa), &hot);
        let params_again = gvn::run_nonnull_params(&mut again, Some(&*isa), &hot, &no_calls);
        second.stats.accumulate(&params_again.stats);
        if second.stats.changed() {
            failures.push(format!(
                "{}: a second run changed: {}",
                case.name, second.stats
            ));
        }
        for expect in expectations("gvn_params", case) {
            if let Err(e) = check_params_expectation(&expect, &module, &params) {
                failures.push(format!("{}: {e}", case.name));
            }
        }
        let after = to_testcase_functions(&module);
        failures.extend(run_differences(case, &before, &after));
        snapshot_pass("gvn_params", case, &report.stats, &report.remarks, &after);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A function of one parameter that null-checks it, then runs `body`
/// (which defines `v1`, the result), with the declarations `decls`.
fn checked(name: &str, decls: &str, body: &str) -> String {
    format!(
        "function %{name}(i64) -> i64 tail {{
{decls}block0(v0: i64):
    brif v0, block1, block9
block1:
    {body}
    return v1
block9 cold:
    trap user67
}}
"
    )
}

/// The facts hold over every source's call sites: a function the size
/// guard may put back (here `%caller` as it came in, before `%wrapper` was
/// inlined into it) brings back a call that passes an unchecked value, so
/// `%get`'s parameter is not known non-null although every call in the
/// module GVN rewrites is checked.
#[test]
fn nonnull_params_hold_over_the_module_as_it_came_in() {
    let get = checked("get", "", "v1 = load.i64 notrap aligned v0");
    let call_get = "    fn0 = colocated %get(i64) -> i64 tail\n";
    let rewritten = format!(
        "{get}; export: %caller\n{}",
        checked("caller", call_get, "v1 = call fn0(v0)")
    );
    let came_in = format!(
        "{get}
; export: %caller
function %caller(i64) -> i64 tail {{
    fn0 = colocated %get(i64) -> i64 tail
block0(v0: i64):
    v1 = call fn0(v0)
    return v1
}}
"
    );
    let a = support::parse_case(&rewritten, "rewritten", "m").module;
    let b = support::parse_case(&came_in, "came_in", "m").module;
    let none = BTreeSet::new();
    assert_eq!(
        gvn::NonnullParams::of(&[&a], &none).of_function("get"),
        &[0]
    );
    assert_eq!(gvn::NonnullParams::of(&[&a, &b], &none).count(), 0);
    // Another module defines `%get` too: no fact, whatever the calls.
    let shared: BTreeSet<String> = ["get".to_string()].into();
    assert_eq!(gvn::NonnullParams::of(&[&a], &shared).count(), 0);
    let mut module = a.clone();
    let calls = gvn::CallSites {
        before: Some(&b),
        excluded: &none,
    };
    gvn::run_module(&mut module, None, &HotCode::default());
    gvn::run_nonnull_params(&mut module, None, &HotCode::default(), &calls);
    let traps = |m: &ClifModule| m.function("get").unwrap().func.display().to_string();
    assert!(traps(&module).contains("trap user67"), "{}", traps(&module));
}

/// Non-null results hold over every source's returns too: `%make`
/// returns its parameter after checking it, but as it came in (the size
/// guard may put it back) it returns it unchecked, so `%caller`'s check of
/// its result stays. A caller that must stay alike is told nothing.
#[test]
fn nonnull_results_hold_over_the_module_as_it_came_in() {
    let caller = "; export: %caller
function %caller(i64) -> i64 tail {
    fn0 = colocated %make(i64) -> i64 tail
block0(v0: i64):
    v1 = call fn0(v0)
    brif v1, block1, block9
block1:
    v2 = load.i64 notrap aligned v1
    return v2
block9 cold:
    trap user68
}
";
    let rewritten = format!("{}{caller}", checked("make", "", "v1 = iadd v0, v0"))
        .replace("return v1", "return v0");
    let came_in = format!(
        "function %make(i64) -> i64 tail {{
block0(v0: i64):
    return v0
}}
{caller}"
    );
    let a = support::parse_case(&rewritten, "rewritten", "m").module;
    let b = support::parse_case(&came_in, "came_in", "m").module;
    let none = BTreeSet::new();
    let facts = gvn::NonnullParams::of(&[&a], &none);
    assert!(facts.returns_nonnull("make"));
    assert!(facts
        .results_told("caller")
        .is_some_and(|t| t.contains("make")));
    let facts = gvn::NonnullParams::of(&[&a, &b], &none);
    assert!(!facts.returns_nonnull("make") && facts.is_empty());
    let alike: BTreeSet<String> = ["caller".to_string()].into();
    assert!(gvn::NonnullParams::of(&[&a], &alike)
        .results_told("caller")
        .is_none());
    let traps = |m: &ClifModule| m.function("caller").unwrap().func.display().to_string();
    for (before, kept) in [(None, false), (Some(&b), true)] {
        let mut module = a.clone();
        let calls = gvn::CallSites {
            before,
            excluded: &none,
        };
        gvn::run_module(&mut module, None, &HotCode::default());
        gvn::run_nonnull_params(&mut module, None, &HotCode::default(), &calls);
        assert_eq!(
            traps(&module).contains("trap user68"),
            kept,
            "{}",
            traps(&module)
        );
    }
}

/// Functions that must stay alike are not specialized: `%get_a` and
/// `%get_b` differ in the offset they read, and `%sum_b` calls another
/// function than `%sum_a`; `%sum_a` and `%twin_a` are the same code (the
/// linker folds them into one), so they keep their checks although every
/// call passes a checked reference.
#[test]
fn look_alikes_keep_their_checks() {
    let mut text = String::from("; export: %entry\n");
    for (name, body) in [
        ("get_a", "v1 = load.i64 notrap aligned v0"),
        ("get_b", "v1 = load.i64 notrap aligned v0+8"),
        ("sum_a", "v1 = call fn0(v0)"),
        ("sum_b", "v1 = call fn1(v0)"),
        ("twin_a", "v1 = call fn0(v0)"),
    ] {
        let decls = "    fn0 = colocated %get_a(i64) -> i64 tail
    fn1 = colocated %get_b(i64) -> i64 tail
";
        text.push_str(&checked(name, decls, body));
    }
    text.push_str(
        "function %entry(i64) -> i64 tail {
    fn0 = colocated %sum_a(i64) -> i64 tail
    fn1 = colocated %sum_b(i64) -> i64 tail
    fn2 = colocated %twin_a(i64) -> i64 tail
block0(v0: i64):
    brif v0, block1, block9
block1:
    v1 = call fn0(v0)
    v2 = call fn1(v0)
    v3 = call fn2(v0)
    v4 = iadd v1, v2
    v5 = iadd v4, v3
    return v5
block9 cold:
    trap user67
}
",
    );
    let module = support::parse_case(&text, "look_alikes", "m").module;
    let alike = gvn::kept_alike(std::slice::from_ref(&module));
    let names: Vec<&str> = alike.iter().map(String::as_str).collect();
    assert_eq!(names, ["sum_a", "twin_a"]);
    let params = gvn::NonnullParams::of(&[&module], &alike);
    assert_eq!(params.of_function("get_a"), &[0]);
    assert_eq!(params.of_function("get_b"), &[0]);
    // `%sum_b` only passes its parameter on: no reference, nothing told.
    assert!(params.of_function("sum_b").is_empty());
    assert_eq!(params.count(), 2);
}

/// `filetests/gvn_groups/*.clif` are modules: GVN by its size policy, then
/// [`gvn::keep_groups_alike`] against the module as it came in, then local
/// merging, as `-Oz` runs them. Every function is verified, run lines
/// agree, and `; expect:` lines count the groups kept alike (`kept-alike
/// N`) and the functions merged (`merged N`); remarks and the result are
/// snapshotted in `snapshots/gvn_groups/`.
#[test]
fn gvn_groups_filetests() {
    let isa = support::aarch64();
    let hot = HotCode::default();
    let options = parec_passes::merge::MergeOptions::default();
    let cases = load_module_cases("gvn_groups");
    assert!(!cases.is_empty(), "expected gvn_groups filetests");
    let mut failures = Vec::new();
    for case in &cases {
        let before = to_testcase_functions(&case.module);
        let mut module = case.module.clone();
        let groups = gvn::groups_before_gvn(&module, &options).expect("a merge group");
        let mut report = gvn::run_module(&mut module, Some(&*isa), &hot);
        let kept = gvn::keep_groups_alike(&groups, &mut module, &*isa, &options);
        verify_all(&module, &case.name);
        let merged = parec_passes::merge::run(&mut module, None, &options);
        verify_all(&module, &case.name);
        for expect in expectations("gvn_groups", case) {
            let (what, value) = expect.split_once(' ').unwrap_or((&expect, ""));
            let got = match what {
                "kept-alike" => kept.len(),
                "merged" => merged.stats.merged,
                _ => {
                    failures.push(format!("{}: unknown expectation `{expect}`", case.name));
                    continue;
                }
            };
            if value.parse::<usize>() != Ok(got) {
                failures.push(format!("{}: expected {expect}, got {got}", case.name));
            }
        }
        report.remarks.extend(kept);
        report.remarks.extend(merged.remarks);
        let after = to_testcase_functions(&module);
        failures.extend(run_differences(case, &before, &after));
        snapshot_pass("gvn_groups", case, &report.stats, &report.remarks, &after);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
