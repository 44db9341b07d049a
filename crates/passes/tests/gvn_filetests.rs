//! GVN filetests: every `filetests/gvn/*.clif` function is optimized, verified,
//! snapshotted, checked for idempotence, and executed before and after with
//! cranelift-interpreter on its `; run:` lines (results and traps must agree).
//! A second test compares aarch64 code size with and without the pass.

use cranelift_codegen::ir::Function;
use cranelift_codegen::isa::{self, TargetIsa};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_codegen::{verify_function, Context};
use cranelift_reader::{parse_run_command, parse_test, ParseOptions, RunCommand};
use parec_passes::clif_module::count_insts;
use parec_passes::gvn;

mod support;
use support::{clif_files, interpret, workspace};

struct Case {
    name: String,
    funcs: Vec<Function>,
    /// The `; run:` and `; print:` lines.
    runs: Vec<RunCommand>,
}

fn load_cases() -> Vec<Case> {
    clif_files("gvn")
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            let file = parse_test(&text, ParseOptions::default())
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let mut runs = Vec::new();
            let mut funcs = Vec::new();
            for (func, details) in file.functions {
                for c in &details.comments {
                    let cmd = parse_run_command(c.text, &func.signature).unwrap_or_else(|e| {
                        panic!("{}: bad run line {}: {e}", path.display(), c.text)
                    });
                    runs.extend(cmd);
                }
                funcs.push(func);
            }
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            Case { name, funcs, runs }
        })
        .collect()
}

fn flags() -> settings::Flags {
    settings::Flags::new(settings::builder())
}

fn optimize(func: &Function) -> (Function, gvn::GvnStats) {
    let mut f = func.clone();
    let stats = gvn::run(&mut f);
    if let Err(errors) = verify_function(&f, &flags()) {
        panic!(
            "verifier errors after GVN on {}:\n{errors}\n{}",
            func.name,
            f.display()
        );
    }
    (f, stats)
}

#[test]
fn gvn_filetests() {
    let cases = load_cases();
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
    for case in load_cases() {
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
