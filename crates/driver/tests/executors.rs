//! Every program of `filetests/executors/` (the examples' format: `X.pare`
//! with `X.out`, optional `X.status` and `X.err`, or a directory `X/` with
//! `main.pare` and `expected.*`) must give exactly the expected stdout, exit
//! status and stderr in every executor and at every level: the interpreter,
//! the JIT, aarch64 executables at `-O0`, `-O2`, `-Oz` and `-Oz --two-rounds`
//! under qemu, and x86_64 executables at `-O0` and `-Oz`, run natively.
//! Executables are freestanding (the default for programs without `extern
//! fn`) but at `-O2` on aarch64 and `-O0` on x86_64, which stand on the C
//! library (`--runtime libc`). These are the
//! regression tests of semantics that once differed between executors
//! (issue 18); `PAREC_TEST_BIN=OLD_PAREC` runs them against another build.

use std::path::Path;
use std::process::{Command, Output};

mod support;
use support::{compare, parec, programs_in, workspace_root, Example};

/// An executable build: the flags after `parec build`, and how to run the result.
struct Build {
    flags: &'static [&'static str],
    under_qemu: bool,
}

const BUILDS: [Build; 6] = [
    Build {
        flags: &["-O0"],
        under_qemu: true,
    },
    Build {
        flags: &["-O2", "--runtime", "libc"],
        under_qemu: true,
    },
    Build {
        flags: &["-Oz"],
        under_qemu: true,
    },
    Build {
        flags: &["-Oz", "--two-rounds"],
        under_qemu: true,
    },
    Build {
        flags: &[
            "-O0",
            "--target",
            "x86_64-unknown-linux-gnu",
            "--runtime",
            "libc",
        ],
        under_qemu: false,
    },
    Build {
        flags: &["-Oz", "--target", "x86_64-unknown-linux-gnu"],
        under_qemu: false,
    },
];

fn run(cmd: &mut Command, what: &str) -> Result<Output, String> {
    cmd.output()
        .map_err(|e| format!("{what}: cannot start: {e}"))
}

/// Runs `program` in every executor; returns every mismatch.
fn check_everywhere(program: &Example, tmp: &Path) -> Vec<String> {
    let root = workspace_root();
    let source = program
        .source
        .strip_prefix(&root)
        .unwrap_or(&program.source);
    let mut problems = Vec::new();
    let mut check = |executor: &str, result: Result<Output, String>| match result {
        Ok(o) => problems.extend(compare(program, executor, &o)),
        Err(e) => problems.push(format!("{}: {e}", program.name)),
    };
    for command in ["interp", "run"] {
        let result = run(parec().arg(command).arg(source).current_dir(&root), command);
        check(command, result);
    }
    for (i, build) in BUILDS.iter().enumerate() {
        let label = format!("build {}", build.flags.join(" "));
        let exe = tmp.join(format!("{}.{i}", program.name));
        let built = run(
            parec()
                .arg("build")
                .arg(source)
                .args(build.flags)
                .arg("-o")
                .arg(&exe)
                .current_dir(&root),
            &label,
        );
        match built {
            Ok(o) if o.status.success() => {
                let mut cmd = if build.under_qemu {
                    let mut c = Command::new("qemu-aarch64-static");
                    c.arg(&exe);
                    c
                } else {
                    Command::new(&exe)
                };
                let result = run(&mut cmd, &label);
                check(&label, result);
            }
            Ok(o) => check(&label, Ok(o)),
            Err(e) => check(&label, Err(e)),
        }
    }
    problems
}

#[test]
fn every_executor_and_level_agrees_on_the_regression_programs() {
    let programs = programs_in("filetests/executors");
    assert!(!programs.is_empty(), "no programs in filetests/executors");
    let tmp = tempfile::tempdir().expect("temporary directory");
    let problems: Vec<String> = programs
        .iter()
        .flat_map(|p| check_everywhere(p, tmp.path()))
        .collect();
    assert!(
        problems.is_empty(),
        "{} mismatch(es) over {} programs:\n\n{}",
        problems.len(),
        programs.len(),
        problems.join("\n\n")
    );
}

/// A flat chain of 10,000 terms is not deep nesting (issue 18): every
/// executor accepts and runs it.
#[test]
fn a_flat_chain_of_ten_thousand_terms_runs_everywhere() {
    let tmp = tempfile::tempdir().expect("temporary directory");
    let terms: Vec<&str> = (0..10_000)
        .map(|i| if i % 7 == 3 { "x" } else { "3" })
        .collect();
    let source = tmp.path().join("chain.pare");
    std::fs::write(
        &source,
        format!(
            "fn main() {{\n    let x: i32 = 2147483647;\n    print({});\n    print({});\n}}\n",
            terms.join(" + "),
            terms.join(" * ")
        ),
    )
    .expect("write the program");
    let xs = terms.iter().filter(|t| **t == "x").count() as u32;
    let threes = terms.len() as u32 - xs;
    let sum = (i32::MAX.wrapping_mul(xs as i32)).wrapping_add(3i32.wrapping_mul(threes as i32));
    let product = i32::MAX
        .wrapping_pow(xs)
        .wrapping_mul(3i32.wrapping_pow(threes));
    let program = Example {
        name: "chain".into(),
        source,
        stdout: format!("{sum}\n{product}\n"),
        status: 0,
        stderr: String::new(),
    };
    let problems = check_everywhere(&program, tmp.path());
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

/// The runtime turns only stack overflow into a trap: a fault elsewhere (here
/// in C code reading address 16) still kills the program with `SIGSEGV`, in
/// the JIT and in executables of both targets.
#[test]
fn other_faults_are_not_reported_as_stack_overflow() {
    use std::os::unix::process::ExitStatusExt;
    let tmp = tempfile::tempdir().expect("temporary directory");
    let source = tmp.path().join("fault.pare");
    std::fs::write(
        &source,
        "extern fn strlen(s: i64) -> i64;\nfn main() { print(strlen(16)); }\n",
    )
    .expect("write the program");
    let mut runs = vec![(
        "run".to_string(),
        run(parec().arg("run").arg(&source), "run"),
    )];
    for (i, build) in BUILDS.iter().enumerate() {
        let exe = tmp.path().join(format!("fault.{i}"));
        let built = run(
            parec()
                .arg("build")
                .arg(&source)
                .args(build.flags)
                .arg("-o")
                .arg(&exe),
            "build",
        )
        .expect("parec build");
        assert!(
            built.status.success(),
            "{}",
            String::from_utf8_lossy(&built.stderr)
        );
        let mut cmd = if build.under_qemu {
            let mut c = Command::new("qemu-aarch64-static");
            c.arg(&exe);
            c
        } else {
            Command::new(&exe)
        };
        runs.push((build.flags.join(" "), run(&mut cmd, "executable")));
    }
    for (label, result) in runs {
        let o = result.expect("the program runs");
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(
            o.status.signal(),
            Some(11),
            "{label}: {:?} {stderr}",
            o.status
        );
        assert!(!stderr.contains("trap:"), "{label}: {stderr}");
    }
}
