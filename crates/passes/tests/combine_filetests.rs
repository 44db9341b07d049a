//! Instruction-combining filetests: every `filetests/combine/*.clif`
//! function is combined, verified, snapshotted, checked for idempotence,
//! and executed before and after with cranelift-interpreter on its `; run:`
//! lines (each line must hold before and after). A second test compiles
//! every function for aarch64 with and without the pass: none may grow.

use cranelift_codegen::ir::Function;
use parec_passes::combine::{self, CombineStats};

mod support;
use support::{aarch64_at, code_size, interpret, load_function_cases, run_verified, workspace};

fn combined(func: &Function) -> (Function, CombineStats) {
    run_verified(func, "combine", combine::run)
}

#[test]
fn combine_filetests() {
    let cases = load_function_cases("combine");
    assert!(cases.len() >= 4, "expected at least 4 combine filetests");
    let mut failures = Vec::new();
    let mut total = CombineStats::default();
    for case in &cases {
        let optimized: Vec<(Function, CombineStats)> = case.funcs.iter().map(combined).collect();
        let after: Vec<Function> = optimized.iter().map(|(f, _)| f.clone()).collect();
        for (f, stats) in &optimized {
            total.accumulate(stats);
            let (again, _) = combined(f);
            if again.display().to_string() != f.display().to_string() {
                failures.push(format!("{}: not idempotent on {}", case.name, f.name));
            }
        }
        for command in &case.runs {
            for (when, funcs) in [("before", &case.funcs), ("after", &after)] {
                if let Err(e) = command.run(|name, args| interpret(funcs, name, args)) {
                    failures.push(format!("{}: `{command}` {when} combine: {e}", case.name));
                }
            }
        }
        let mut snapshot = String::new();
        for (f, stats) in &optimized {
            snapshot.push_str(&format!("; {stats}\n{}\n", f.display()));
        }
        insta::with_settings!({
            snapshot_path => workspace().join("snapshots/combine"),
            prepend_module_to_snapshot => false,
            omit_expression => true,
        }, {
            insta::assert_snapshot!(case.name.clone(), snapshot);
        });
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Every rule is exercised.
    assert!(total.offsets_folded > 0 && total.adds_reused > 0, "{total}");
    assert!(total.shifts_narrowed > 0 && total.rotates > 0 && total.loads_extended > 0);
}

/// aarch64 bytes of every filetest function, Cranelift alone and after
/// combine, at the two optimization levels parec uses; no function grows.
#[test]
fn combine_never_grows_aarch64_code() {
    let mut grew = Vec::new();
    for level in ["speed", "speed_and_size"] {
        let isa = aarch64_at(level);
        let (mut before, mut after) = (0, 0);
        for case in load_function_cases("combine") {
            for func in &case.funcs {
                let (f, _) = combined(func);
                let (b, a) = (code_size(&*isa, func), code_size(&*isa, &f));
                if a > b {
                    grew.push(format!(
                        "{}:{} at {level}: {b} -> {a}",
                        case.name, func.name
                    ));
                }
                before += b;
                after += a;
            }
        }
        println!("combine over filetests at {level}: aarch64 bytes {before} -> {after}");
    }
    assert!(grew.is_empty(), "{}", grew.join("\n"));
}
