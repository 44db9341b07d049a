//! Differential test of every example program in all three executors, and of
//! the benchmark corpus (`bench/NAME/main.pare` with `expected.out`) in the JIT
//! and under qemu (the interpreter is too slow for it in a debug build).
//!
//! Examples: `examples/X.pare` (single module) with `examples/X.out`, optional
//! `X.status` (default 0) and `X.err` (exact stderr; default empty), and
//! `examples/X/main.pare` (multi-module, the other modules found through
//! `import`) with `examples/X/expected.out`, `expected.status`, `expected.err`.
//! Each runs with `parec interp`, `parec run` (JIT) and `parec build` +
//! `qemu-aarch64-static` (x86_64 executables natively); every mismatch of
//! any of them is reported, then the test fails. Executables are
//! freestanding, but for programs that call C and the builds with
//! `--runtime libc`. Missing qemu or lld is a failure, not a skip.

use std::process::{Command, Output};

mod support;
use support::{compare, parec, programs_in, workspace_root, Example};

fn output(cmd: &mut Command, what: &str) -> Result<Output, String> {
    cmd.output()
        .map_err(|e| format!("{what}: cannot start: {e}"))
}

fn check_tool(tool: &str, arg: &str) {
    let ok = Command::new(tool)
        .arg(arg)
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    assert!(ok, "{tool} is not installed: run scripts/test.sh (it installs qemu-user-static, lld-19, the aarch64 cross gcc and libc)");
}

#[test]
fn at_least_fifteen_examples_exist() {
    let n = programs_in("examples").len();
    assert!(n >= 15, "only {n} examples found under examples/");
}

/// Runs every program with the interpreter (if `interp`), the JIT, and as
/// executables built with each of `levels` (flags separated by spaces),
/// aarch64 under qemu, x86_64 (`--target x86_64-unknown-linux-gnu`)
/// natively; returns every mismatch, in program order. The programs run on
/// one thread per core: the two tests of this file take unequal times, and
/// the longer one would otherwise keep a single core busy after the other
/// finished.
fn run_all(programs: &[Example], interp: bool, levels: &[&str]) -> Vec<String> {
    check_tool("qemu-aarch64-static", "--version");
    check_tool("ld.lld-19", "--version");
    check_tool("aarch64-linux-gnu-gcc", "--version");
    let tmp = tempfile::tempdir().expect("temporary directory");
    let next = std::sync::atomic::AtomicUsize::new(0);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut results: Vec<(usize, Vec<String>)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(ex) = programs.get(i) else {
                            return done;
                        };
                        done.push((i, run_one(ex, interp, levels, tmp.path())));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("a test thread panicked"))
            .collect()
    });
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().flat_map(|(_, p)| p).collect()
}

/// [`run_all`] for one program; executables are written to `tmp`.
fn run_one(ex: &Example, interp: bool, levels: &[&str], tmp: &std::path::Path) -> Vec<String> {
    let root = workspace_root();
    let mut problems = Vec::new();
    // Relative to the workspace root, so that any path in messages is stable.
    let source = ex.source.strip_prefix(&root).unwrap_or(&ex.source);
    let check = |problems: &mut Vec<String>, executor: &str, cmd: &mut Command| match output(
        cmd.current_dir(&root),
        executor,
    ) {
        Ok(o) => problems.extend(compare(ex, executor, &o)),
        Err(e) => problems.push(format!("{}: {e}", ex.name)),
    };
    if interp {
        check(&mut problems, "interp", parec().arg("interp").arg(source));
    }
    check(&mut problems, "jit", parec().arg("run").arg(source));
    for level in levels {
        let exe = tmp.join(format!("{}{}", ex.name, level.replace(' ', "")));
        let built = output(
            parec()
                .arg("build")
                .arg(source)
                .args(level.split_whitespace())
                .arg("-o")
                .arg(&exe)
                .current_dir(&root),
            "build",
        );
        let mut run = match level.contains("x86_64") {
            true => Command::new(&exe),
            false => {
                let mut qemu = Command::new("qemu-aarch64-static");
                qemu.arg(&exe);
                qemu
            }
        };
        match built {
            Ok(o) if o.status.success() => check(&mut problems, &format!("exe {level}"), &mut run),
            Ok(o) => problems.push(format!(
                "{} [build {level}]: failed with {:?}\n{}",
                ex.name,
                o.status.code(),
                String::from_utf8_lossy(&o.stderr)
            )),
            Err(e) => problems.push(format!("{}: {e}", ex.name)),
        }
    }
    problems
}

#[test]
fn examples_agree_in_interpreter_jit_and_qemu() {
    let examples = programs_in("examples");
    let problems = run_all(
        &examples,
        true,
        &[
            "-O2 --runtime libc",
            "-Oz",
            "-Oz --lto",
            "-O2 --target x86_64-unknown-linux-gnu",
        ],
    );
    assert!(
        problems.is_empty(),
        "{} mismatch(es) over {} examples:\n\n{}",
        problems.len(),
        examples.len(),
        problems.join("\n\n")
    );
}

#[test]
fn bench_corpus_runs_correctly_in_jit_and_qemu() {
    let programs = programs_in("bench");
    assert!(
        programs.len() >= 12,
        "only {} benchmark programs",
        programs.len()
    );
    let problems = run_all(&programs, false, &["-O2", "-Oz", "-Oz --lto --two-rounds"]);
    assert!(
        problems.is_empty(),
        "{} mismatch(es) over {} benchmark programs:\n\n{}",
        problems.len(),
        programs.len(),
        problems.join("\n\n")
    );
}

/// The small programs of `filetests/sizes/` (issue 31's costed decisions:
/// generic instances used once, twice, many times; families of similar
/// functions) compute the same in the interpreter, the JIT and at `-Oz`.
#[test]
fn size_programs_agree_in_interpreter_jit_and_qemu() {
    let programs = programs_in("filetests/sizes");
    assert!(
        programs.len() >= 10,
        "only {} size programs",
        programs.len()
    );
    let problems = run_all(&programs, true, &["-Oz --two-rounds"]);
    assert!(
        problems.is_empty(),
        "{} mismatch(es) over {} size programs:\n\n{}",
        problems.len(),
        programs.len(),
        problems.join("\n\n")
    );
}
