//! Switch-lowering filetests: every `filetests/switches/*.clif` function
//! is lowered (unmeasured, and measured for aarch64 as the pipeline runs
//! it), verified, snapshotted, checked for idempotence, and executed
//! before and after with cranelift-interpreter on its `; run:` lines (each
//! line must hold before and after). A second test compiles every function
//! for aarch64 before and after the measured pass: none may grow, and the
//! shapes the module doc promises are made.

use cranelift_codegen::ir::{Function, Opcode};
use parec_passes::switches::{self, SwitchOptions, SwitchStats};

mod support;
use support::{aarch64_at, code_size, interpret, load_function_cases, run_verified, workspace};

fn lowered(func: &Function) -> (Function, SwitchStats) {
    run_verified(func, "switches", |f| {
        switches::run(f, &SwitchOptions::default())
    })
}

fn has(func: &Function, opcode: Opcode) -> bool {
    func.layout
        .blocks()
        .flat_map(|b| func.layout.block_insts(b))
        .any(|i| func.dfg.insts[i].opcode() == opcode)
}

#[test]
fn switches_filetests() {
    let cases = load_function_cases("switches");
    assert!(cases.len() >= 3, "expected at least 3 switches filetests");
    let isa = aarch64_at("speed_and_size");
    let mut failures = Vec::new();
    let mut total = SwitchStats::default();
    for case in &cases {
        let mut snapshot = String::new();
        let mut after = Vec::new();
        let mut measured = Vec::new();
        for func in &case.funcs {
            let (f, stats) = lowered(func);
            total.accumulate(&stats);
            let (again, again_stats) = lowered(&f);
            if again.display().to_string() != f.display().to_string() || again_stats.rewrites() > 0
            {
                failures.push(format!("{}: not idempotent on {}", case.name, f.name));
            }
            snapshot.push_str(&format!("; {stats}\n{}\n", f.display()));
            after.push(f);
            let (m, _) = run_verified(func, "switches (measured)", |f| {
                switches::run_measured(f, &*isa, None)
            });
            measured.push(m);
        }
        for command in &case.runs {
            for (when, funcs) in [
                ("before", &case.funcs),
                ("after", &after),
                ("after (measured)", &measured),
            ] {
                if let Err(e) = command.run(|name, args| interpret(funcs, name, args)) {
                    failures.push(format!("{}: `{command}` {when} switches: {e}", case.name));
                }
            }
        }
        insta::with_settings!({
            snapshot_path => workspace().join("snapshots/switches"),
            prepend_module_to_snapshot => false,
            omit_expression => true,
        }, {
            insta::assert_snapshot!(case.name.clone(), snapshot);
        });
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Every shape is made somewhere.
    assert!(
        total.links > 0 && total.common_dests > 0 && total.tables >= 2 && total.sets >= 5,
        "{total}"
    );
}

/// The shapes each function must (or must not) become, unmeasured.
#[test]
fn switches_make_the_promised_shapes() {
    let mut seen = 0;
    for case in load_function_cases("switches") {
        for func in &case.funcs {
            let name = func.name.to_string();
            let (f, stats) = lowered(func);
            let table = has(&f, Opcode::BrTable);
            let shift = has(&f, Opcode::Ushr);
            let expected_table = matches!(name.as_str(), "%dispatch" | "%letters");
            assert_eq!(table, expected_table, "{name}: br_table\n{}", f.display());
            match name.as_str() {
                "%is_punct" | "%is_op_char" | "%is_ident_start" | "%not_space" | "%count_space" => {
                    assert!(shift && stats.sets > 0, "{name}: bit test\n{}", f.display())
                }
                "%is_digit" => assert!(stats.sets > 0 && !shift, "{name}\n{}", f.display()),
                "%side_effect" | "%two_values" | "%sparse" | "%sparse_set" => {
                    assert_eq!(stats.rewrites(), 0, "{name}\n{}", f.display())
                }
                _ => {}
            }
            seen += 1;
        }
    }
    assert!(seen >= 10, "{seen} functions");
}

/// aarch64 bytes of every filetest function before and after the measured
/// pass, at the two optimization levels parec uses: none grows.
#[test]
fn switches_never_grow_aarch64_code() {
    let mut grew = Vec::new();
    for level in ["speed", "speed_and_size"] {
        let isa = aarch64_at(level);
        let (mut before, mut after) = (0, 0);
        for case in load_function_cases("switches") {
            for func in &case.funcs {
                let (f, _) =
                    run_verified(func, "switches", |f| switches::run_measured(f, &*isa, None));
                let (b, a) = (code_size(&*isa, func), code_size(&*isa, &f));
                println!("{}:{} at {level}: {b} -> {a}", case.name, func.name);
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
        println!("switches over filetests at {level}: aarch64 bytes {before} -> {after}");
        assert!(after < before, "{level}: {before} -> {after}");
    }
    assert!(grew.is_empty(), "{}", grew.join("\n"));
}
