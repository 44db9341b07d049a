//! `parec size --roles`: the roles of an example program's own code add
//! up to its own code, per function and in total, name its checks, calls,
//! frames and trap paths, from an executable and from objects alike;
//! `--compare` shows the change of each role; a C program's executable
//! (clang's) is classified the same way; x86_64 code and stripped files
//! are refused with the file's name.
//! (The rules themselves have unit tests on hand-written instructions:
//! `parec_passes::machine::roles`.)

use std::path::Path;
use std::process::Command;

use serde_json::Value;

mod support;
use support::{parec, run, workspace_root};

fn build(dir: &Path, args: &[&str]) {
    // A program with every role `check_report` asks for: null checks of
    // loaded references (examples/sorting.pare lost its last one to the
    // non-null results of `gvn::nonnull_params`).
    let source = workspace_root().join("examples/tokenizer.pare");
    let out = run(parec()
        .current_dir(dir)
        .arg("build")
        .arg(&source)
        .args(args));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn size(dir: &Path, args: &[&str]) -> String {
    let out = run(parec().current_dir(dir).arg("size").args(args));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn json(dir: &Path, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.push("--json");
    serde_json::from_str(&size(dir, &all)).unwrap()
}

fn sum(roles: &Value) -> u64 {
    roles
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum()
}

/// Checks the invariants of a role report and returns its roles.
fn check_report(report: &Value) -> &serde_json::Map<String, Value> {
    let own = report["own"].as_u64().unwrap();
    let roles = report["roles"].as_object().unwrap();
    assert_eq!(sum(&report["roles"]), own, "{report:#}");
    assert_eq!(report["opaque_blocks"], 0);
    assert!(!roles.contains_key("unknown"), "{roles:?}");
    for f in report["functions"].as_array().unwrap() {
        assert_eq!(sum(&f["roles"]), f["bytes"].as_u64().unwrap(), "{f:#}");
    }
    for role in [
        "frame",
        "call",
        "call-move",
        "null-check",
        "bounds-check",
        "trap",
        "constant",
        "memory",
        "compare-branch",
        "arithmetic",
    ] {
        assert!(
            roles.get(role).is_some_and(|b| b.as_u64() > Some(0)),
            "no {role}: {roles:?}"
        );
    }
    roles
}

#[test]
fn roles_of_an_executable_and_its_objects_add_up() {
    let tmp = tempfile::tempdir().unwrap();
    build(tmp.path(), &["-Oz", "-o", "prog"]);
    build(tmp.path(), &["-Oz", "--emit", "obj", "-o", "obj"]);
    let exe = json(tmp.path(), &["prog", "--roles"]);
    check_report(&exe);
    let objects = json(tmp.path(), &["obj", "--roles"]);
    let from_objects = check_report(&objects);
    // The same code before and after linking: the checks are the same.
    for role in ["null-check", "bounds-check"] {
        assert_eq!(from_objects[role], exe["roles"][role], "{role}");
    }
    let table = size(tmp.path(), &["prog", "--roles", "--top", "3"]);
    let own = exe["own"].as_u64().unwrap();
    assert!(
        table.contains(&format!("the program's own code: {own} bytes")),
        "{table}"
    );
    let total = table.lines().find(|l| l.starts_with("total")).unwrap();
    assert!(
        total.split_whitespace().any(|w| w == own.to_string()),
        "{table}"
    );
    assert!(table.contains("more functions"), "{table}");
}

#[test]
fn compare_shows_each_role_change() {
    let tmp = tempfile::tempdir().unwrap();
    build(tmp.path(), &["-O2", "-o", "o2"]);
    build(tmp.path(), &["-Oz", "-o", "oz"]);
    let old = json(tmp.path(), &["o2", "--roles"]);
    let new = json(tmp.path(), &["oz", "--roles"]);
    let diff = json(tmp.path(), &["oz", "--roles", "--compare", "o2"]);
    assert_eq!(diff["total"]["old"], old["own"]);
    assert_eq!(diff["total"]["new"], new["own"]);
    for row in diff["roles"].as_array().unwrap() {
        let role = row["role"].as_str().unwrap();
        let bytes = |report: &Value| report["roles"][role].as_u64().unwrap_or(0) as i64;
        assert_eq!(row["old"].as_i64().unwrap(), bytes(&old), "{role}");
        assert_eq!(row["new"].as_i64().unwrap(), bytes(&new), "{role}");
        assert_eq!(
            row["delta"].as_i64().unwrap(),
            bytes(&new) - bytes(&old),
            "{role}"
        );
    }
    let table = size(tmp.path(), &["oz", "--roles", "--compare", "o2"]);
    assert!(
        table.contains("delta") && table.contains("frame"),
        "{table}"
    );
}

#[test]
fn x86_64_code_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    build(
        tmp.path(),
        &[
            "--target",
            "x86_64-unknown-linux-gnu",
            "--emit",
            "obj",
            "-o",
            "obj",
        ],
    );
    let out = run(parec()
        .current_dir(tmp.path())
        .args(["size", "obj", "--roles"]));
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("aarch64"));
}

#[test]
fn a_stripped_executable_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    build(tmp.path(), &["-o", "prog"]);
    let stripped = run(Command::new("llvm-strip-19")
        .current_dir(tmp.path())
        .args(["-o", "stripped", "prog"]));
    assert!(stripped.status.success());
    let out = run(parec()
        .current_dir(tmp.path())
        .args(["size", "stripped", "--roles"]));
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("stripped: the file is stripped"),
        "{stderr}"
    );
}

#[test]
fn a_c_programs_executable_has_roles_too() {
    let tmp = tempfile::tempdir().unwrap();
    let source = workspace_root().join("bench/primes/primes.c");
    let built = run(Command::new("clang-19")
        .current_dir(tmp.path())
        .args([
            "--target=aarch64-linux-gnu",
            "-Oz",
            "-static",
            "-fuse-ld=lld",
            "-o",
            "c",
        ])
        .arg(&source));
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let report = json(tmp.path(), &["c", "--roles"]);
    let functions = report["functions"].as_array().unwrap();
    let main = functions
        .iter()
        .find(|f| f["name"] == "main")
        .expect("main is own code");
    assert!(sum(&main["roles"]) > 0, "{main}");
    assert_eq!(
        sum(&report["roles"]),
        report["own"].as_u64().unwrap(),
        "{report:#}"
    );
    assert_eq!(report["opaque_blocks"], 0);
}
