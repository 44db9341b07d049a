//! If-conversion filetests: every `filetests/ifconv/*.clif` function is
//! converted under the size and the speed policy, verified, snapshotted,
//! checked for idempotence, and executed before and after with
//! cranelift-interpreter on its `; run:` lines (each line must hold before
//! and after). A second test compiles every function for aarch64 with and
//! without the size policy: none may grow.

use cranelift_codegen::ir::Function;
use parec_passes::ifconv::{self, IfconvOptions, IfconvStats};

mod support;
use support::{aarch64_at, code_size, interpret, load_function_cases, run_verified, workspace};

const POLICIES: [(&str, IfconvOptions); 2] = [
    ("size", IfconvOptions::SIZE),
    ("speed", IfconvOptions::SPEED),
];

fn converted(func: &Function, options: &IfconvOptions) -> (Function, IfconvStats) {
    run_verified(func, "ifconv", |f| ifconv::run(f, options))
}

#[test]
fn ifconv_filetests() {
    let cases = load_function_cases("ifconv");
    assert!(cases.len() >= 4, "expected at least 4 ifconv filetests");
    let mut failures = Vec::new();
    let mut totals = [IfconvStats::default(), IfconvStats::default()];
    for case in &cases {
        let mut snapshot = String::new();
        for ((policy, options), total) in POLICIES.iter().zip(&mut totals) {
            let optimized: Vec<(Function, IfconvStats)> =
                case.funcs.iter().map(|f| converted(f, options)).collect();
            let after: Vec<Function> = optimized.iter().map(|(f, _)| f.clone()).collect();
            for (f, stats) in &optimized {
                total.accumulate(stats);
                let (again, again_stats) = converted(f, options);
                if again.display().to_string() != f.display().to_string()
                    || again_stats.converted() > 0
                {
                    failures.push(format!(
                        "{}: not idempotent on {} ({policy})",
                        case.name, f.name
                    ));
                }
                snapshot.push_str(&format!("; {policy}: {stats}\n{}\n", f.display()));
            }
            for command in &case.runs {
                for (when, funcs) in [("before", &case.funcs), ("after", &after)] {
                    if let Err(e) = command.run(|name, args| interpret(funcs, name, args)) {
                        failures.push(format!(
                            "{}: `{command}` {when} ifconv ({policy}): {e}",
                            case.name
                        ));
                    }
                }
            }
        }
        insta::with_settings!({
            snapshot_path => workspace().join("snapshots/ifconv"),
            prepend_module_to_snapshot => false,
            omit_expression => true,
        }, {
            insta::assert_snapshot!(case.name.clone(), snapshot);
        });
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Both shapes convert, and each refusal happens, under each policy.
    let [size, speed] = totals;
    for total in [size, speed] {
        assert!(
            total.diamonds > 0 && total.triangles > 0 && total.refused_unsafe >= 4,
            "{total}"
        );
    }
    assert!(
        size.refused_cost >= 2 && speed.refused_cost >= 1,
        "{size} / {speed}"
    );
}

/// aarch64 bytes of every filetest function, Cranelift alone and after
/// the size policy, at the two optimization levels parec uses; no function
/// grows, and the shapes the cost rule refuses would have grown.
#[test]
fn ifconv_never_grows_aarch64_code() {
    let mut grew = Vec::new();
    for level in ["speed", "speed_and_size"] {
        let isa = aarch64_at(level);
        let (mut before, mut after, mut speed) = (0, 0, 0);
        for case in load_function_cases("ifconv") {
            for func in &case.funcs {
                let (f, _) = converted(func, &IfconvOptions::SIZE);
                let (s, _) = converted(func, &IfconvOptions::SPEED);
                let (b, a) = (code_size(&*isa, func), code_size(&*isa, &f));
                let sp = code_size(&*isa, &s);
                println!(
                    "{}:{} at {level}: {b} -> size {a}, speed {sp}",
                    case.name, func.name
                );
                if a > b {
                    grew.push(format!(
                        "{}:{} at {level}: {b} -> {a}",
                        case.name, func.name
                    ));
                }
                before += b;
                after += a;
                speed += sp;
            }
        }
        println!("ifconv over filetests at {level}: aarch64 bytes {before} -> size policy {after}, speed policy {speed}");
    }
    assert!(grew.is_empty(), "{}", grew.join("\n"));
}
