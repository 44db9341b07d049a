//! `.clif` files read as Cranelift's tools read them (issue 18, section 3).
//!
//! Every `filetests/clif/*.clif` file is a program in one of the shapes the
//! CLIF reference allows (command lines or none, several ISA sections,
//! settings the code needs, libcalls, tail calls, `uN:M` names, global
//! values without data, run and print lines). Each must pass
//! `parec opt --run` (every `; run:` line holds in the CLIF interpreter),
//! and, when it says `; status: N`, its `main` must exit with `N` in the
//! JIT, as an aarch64 executable under qemu and as an x86-64 executable.
//! Files whose command lines ask for what parec cannot do must be refused
//! with a clear message.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod support;
use support::{parec, run, workspace_root};

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn clif_files() -> Vec<PathBuf> {
    let dir = workspace_root().join("filetests/clif");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "clif"))
        .collect();
    files.sort();
    files
}

/// The `; status: N` a file's `main` exits with, if it has one.
fn expected_status(path: &Path) -> Option<i32> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("; status: "))
        .map(|n| n.trim().parse().unwrap())
}

/// The exit status of `cmd`, which must not be killed by a signal.
fn status(cmd: &mut Command, what: &str) -> i32 {
    let o = run(cmd);
    o.status
        .code()
        .unwrap_or_else(|| panic!("{what}: killed: {}", stderr(&o)))
}

#[test]
fn every_clif_filetest_runs_alike_everywhere() {
    let files = clif_files();
    assert!(files.len() >= 6, "only {} CLIF filetests", files.len());
    let dir = tempfile::tempdir().unwrap();
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let o = run(parec().arg("opt").arg(path).arg("--run"));
        assert_eq!(
            o.status.code(),
            Some(0),
            "{name}: opt --run: {}",
            stderr(&o)
        );
        assert!(
            stderr(&o).contains("run command(s) agree"),
            "{name}: {}",
            stderr(&o)
        );
        let Some(want) = expected_status(path) else {
            continue;
        };
        let jit = status(parec().arg("run").arg(path), &name);
        assert_eq!(jit, want, "{name}: parec run");
        for (target, runner) in [
            ("aarch64-unknown-linux-gnu", Some("qemu-aarch64-static")),
            ("x86_64-unknown-linux-gnu", None),
        ] {
            let exe = dir.path().join(format!("{name}.{target}"));
            let o = run(parec()
                .arg("build")
                .arg(path)
                .args(["--target", target, "-o"])
                .arg(&exe));
            assert!(o.status.success(), "{name}: build {target}: {}", stderr(&o));
            let mut cmd = match runner {
                Some(emulator) => {
                    let mut cmd = Command::new(emulator);
                    cmd.arg(&exe);
                    cmd
                }
                None => Command::new(&exe),
            };
            assert_eq!(status(&mut cmd, &name), want, "{name}: {target} executable");
        }
    }
}

/// Writes `text` as `name` in `dir`.
fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// `parec ARGS` must fail with status 1 and a message containing `expected`.
fn refused(args: &[&std::ffi::OsStr], expected: &str) {
    let o = run(parec().args(args));
    assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
    assert!(stderr(&o).contains(expected), "{args:?}: {}", stderr(&o));
}

const RETURNS_SEVEN: &str =
    "function %main() -> i32 system_v {\nblock0:\n    v0 = iconst.i32 7\n    return v0\n}\n";

#[test]
fn a_file_without_a_section_for_the_target_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "s390x_only.clif",
        &format!("test run\ntarget s390x\ntarget riscv64\n\n{RETURNS_SEVEN}"),
    );
    let exe = dir.path().join("exe");
    refused(
        &[
            "build".as_ref(),
            file.as_os_str(),
            "-o".as_ref(),
            exe.as_os_str(),
        ],
        "no `target` line for aarch64 (the file is for s390x, riscv64)",
    );
    refused(
        &["run".as_ref(), file.as_os_str()],
        "no `target` line for x86_64",
    );
    // `opt` takes the file's first target parec builds for, or --target.
    let x86 = write(
        dir.path(),
        "x86.clif",
        &format!("target x86_64\n{RETURNS_SEVEN}"),
    );
    let o = run(parec().arg("opt").arg(&x86));
    assert!(o.status.success(), "{}", stderr(&o));
    refused(
        &[
            "opt".as_ref(),
            x86.as_os_str(),
            "--target".as_ref(),
            "aarch64".as_ref(),
        ],
        "no `target` line for aarch64",
    );
}

#[test]
fn settings_parec_cannot_honour_are_refused_with_their_line() {
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("exe");
    let pic = write(
        dir.path(),
        "pic.clif",
        &format!("set is_pic\n{RETURNS_SEVEN}"),
    );
    refused(
        &[
            "build".as_ref(),
            pic.as_os_str(),
            "-o".as_ref(),
            exe.as_os_str(),
        ],
        "pic.clif:1: `is_pic` cannot be honoured",
    );
    let colocated = write(
        dir.path(),
        "colocated.clif",
        &format!("\nset use_colocated_libcalls=true\n{RETURNS_SEVEN}"),
    );
    refused(
        &["run".as_ref(), colocated.as_os_str()],
        "colocated.clif:2: `use_colocated_libcalls` cannot be honoured by the JIT",
    );
    let o = run(parec().arg("build").arg(&colocated).arg("-o").arg(&exe));
    assert!(o.status.success(), "{}", stderr(&o));
    let unknown = write(
        dir.path(),
        "unknown.clif",
        &format!("set frobnicate=3\n{RETURNS_SEVEN}"),
    );
    refused(
        &["run".as_ref(), unknown.as_os_str()],
        "unknown.clif:1: unknown setting 'frobnicate=3'",
    );
    let dangling = write(
        dir.path(),
        "dangling.clif",
        &format!("target x86_64\ntarget aarch64\nset opt_level=none\n{RETURNS_SEVEN}"),
    );
    refused(
        &["run".as_ref(), dangling.as_os_str()],
        "dangling.clif:3: dangling 'set' command",
    );
    let tail = write(
        dir.path(),
        "tail.clif",
        "target x86_64\nfunction %f(i64) -> i64 tail {\n    fn0 = %f(i64) -> i64 tail\nblock0(v0: i64):\n    return_call fn0(v0)\n}\n",
    );
    refused(
        &["opt".as_ref(), tail.as_os_str()],
        "tail calls on x86-64 need `set preserve_frame_pointers=true`",
    );
    let wide = write(
        dir.path(),
        "wide.clif",
        "function %w(i128) -> i128 {\nblock0(v0: i128):\n    return v0\n}\n",
    );
    refused(
        &[
            "opt".as_ref(),
            wide.as_os_str(),
            "--target".as_ref(),
            "x86_64".as_ref(),
        ],
        "i128 parameters and results on x86-64 need `set enable_llvm_abi_extensions=true`",
    );
    let limit = write(
        dir.path(),
        "limit.clif",
        "function %f(i64 vmctx) {\n    gv0 = vmctx\n    gv1 = iadd_imm.i64 gv0, 8\n    stack_limit = gv1\nblock0(v0: i64):\n    return\n}\n",
    );
    refused(
        &[
            "build".as_ref(),
            limit.as_os_str(),
            "--emit".as_ref(),
            "clif".as_ref(),
        ],
        "Cranelift computes a stack limit only from `vmctx` and `load`",
    );
}

#[test]
fn files_of_one_build_must_agree_on_their_settings() {
    let dir = tempfile::tempdir().unwrap();
    let main = write(
        dir.path(),
        "main.clif",
        "set opt_level=none\nfunction %main() -> i32 system_v {\n    fn0 = %seven() -> i32 system_v\nblock0:\n    v0 = call fn0()\n    return v0\n}\n",
    );
    let lib = write(
        dir.path(),
        "lib.clif",
        "function %seven() -> i32 system_v {\nblock0:\n    v0 = iconst.i32 7\n    return v0\n}\n",
    );
    refused(
        &["run".as_ref(), main.as_os_str(), lib.as_os_str()],
        "modules `main` and `lib` ask for different Cranelift settings",
    );
    std::fs::write(
        &lib,
        "set opt_level=none\nfunction %seven() -> i32 system_v {\nblock0:\n    v0 = iconst.i32 7\n    return v0\n}\n",
    )
    .unwrap();
    let o = run(parec().arg("run").arg(&main).arg(&lib));
    assert_eq!(o.status.code(), Some(7), "{}", stderr(&o));
}

/// The functions of CLIF text, without `;` comment lines and blank lines.
fn functions_only(text: &str) -> String {
    text.lines()
        .filter(|l| !l.starts_with(';') && !l.trim().is_empty())
        .map(|l| format!("{l}\n"))
        .collect()
}

#[test]
fn opt_applies_the_size_guard_of_builds() {
    // `parec opt --passes gvn` must keep exactly the rewrites that
    // `parec build --passes gvn` keeps for the same target: the size guard
    // reverts a function whose code the rewrite would grow (on aarch64,
    // folding `x * y` to 0 on the false edge of `x != 0` is one).
    let dir = workspace_root().join("filetests/gvn");
    let mut reverted = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "clif") {
            continue;
        }
        for target in ["aarch64", "x86_64"] {
            let opt = run(parec()
                .arg("opt")
                .arg(&path)
                .args(["--passes", "gvn", "--stats", "--target", target]));
            if target == "x86_64" && stderr(&opt).contains("on x86-64 need `set") {
                continue; // i128 in signatures: refused, as the next test checks
            }
            assert!(opt.status.success(), "{}: {}", path.display(), stderr(&opt));
            // With the C library no runtime module joins the file's (a
            // freestanding build of a `.clif` program adds one).
            let build = run(parec().arg("build").arg(&path).args([
                "--passes",
                "gvn",
                "--emit",
                "clif",
                "--target",
                target,
                "--runtime",
                "libc",
            ]));
            assert!(
                build.status.success(),
                "{}: {}",
                path.display(),
                stderr(&build)
            );
            assert_eq!(
                functions_only(&String::from_utf8_lossy(&opt.stdout)),
                functions_only(&String::from_utf8_lossy(&build.stdout)),
                "{} for {target}: opt and build differ",
                path.display()
            );
            if target == "aarch64" && !stderr(&opt).contains("reverted 0") {
                reverted += 1;
            }
        }
    }
    assert!(reverted > 0, "no filetest exercises the size guard");
}

#[test]
fn deep_recursion_in_run_lines_is_a_failure_not_a_crash() {
    // Calls that are not tail calls nest on the interpreter's heap up to a
    // bound; deeper is a failed run line (status 1), never a stack overflow.
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "deep.clif",
        "function %down(i64) -> i64 {\n    fn0 = %down(i64) -> i64\nblock0(v0: i64):\n    brif v0, block1, block2\nblock1:\n    v1 = iconst.i64 1\n    v2 = isub v0, v1\n    v3 = call fn0(v2)\n    v4 = iadd v3, v1\n    return v4\nblock2:\n    return v0\n}\n; run: %down(100000) == 100000\n; run: %down(3000000) == 3000000\n",
    );
    let o = run(parec().arg("opt").arg(&file).arg("--run"));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("calls nest deeper than 262144"),
        "{}",
        stderr(&o)
    );
    assert!(!stderr(&o).contains("%down(100000)"), "{}", stderr(&o));
}

/// What `parec opt` prints of a file whose entity numbers skip is valid
/// CLIF with dense numbers: no placeholder (`symbol %`, a function without
/// a signature) is left, and the output reads again.
#[test]
fn numbers_a_file_skips_are_closed() {
    let file = workspace_root().join("filetests/clif/skipped_numbers.clif");
    let o = run(parec().arg("opt").arg(&file));
    assert!(o.status.success(), "{}", stderr(&o));
    let printed = String::from_utf8(o.stdout).unwrap();
    assert!(!printed.contains("symbol %\n"), "{printed}");
    assert!(!printed.contains("sig4294967295"), "{printed}");
    for (entity, count) in [("    fn", 3), ("    gv", 2)] {
        let numbers: Vec<String> = printed
            .lines()
            .filter(|l| l.starts_with(entity) && l.contains(" = "))
            .map(|l| l.split(" = ").next().unwrap().trim().to_string())
            .collect();
        let dense: Vec<String> = (0..count)
            .map(|i| format!("{}{i}", entity.trim()))
            .collect();
        assert_eq!(numbers, dense, "{printed}");
    }
    let dir = tempfile::tempdir().unwrap();
    let again = write(dir.path(), "again.clif", &printed);
    let o = run(parec().arg("opt").arg(&again).arg("--run"));
    assert!(o.status.success(), "{}", stderr(&o));
}

/// A `; run:` line with the wrong number of arguments says so (the CLIF
/// reader said "expected a comma between invocation arguments").
#[test]
fn a_run_line_with_the_wrong_argument_count_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let add = "function %add(i64, i64) -> i64 {\nblock0(v0: i64, v1: i64):\n    v2 = iadd v0, v1\n    return v2\n}\n";
    for (call, given) in [("%add(1)", 1), ("%add(1, 2, 3)", 3), ("%add()", 0)] {
        let file = write(
            dir.path(),
            "add.clif",
            &format!("{add}; run: {call} == 3\n"),
        );
        refused(
            &[std::ffi::OsStr::new("opt"), file.as_os_str()],
            &format!("`%add` takes 2 argument(s), the command gives {given}"),
        );
    }
}
