//! Global function merging end to end: multi-module programs built with
//! `--two-rounds`, with cgdata from another program (stale), with forced
//! hash collisions, and with broken cgdata files; each built program runs
//! under `qemu-aarch64-static` and must print what the reference
//! interpreter printed (the `expected.out` files, which `tests/examples.rs`
//! checks against the interpreter). Also: cgdata bytes do not depend on
//! module order or `-j`, and `cgdata merge` does not depend on input order.

use std::path::{Path, PathBuf};
use std::process::Command;

use parec_passes::cgdata::{CgData, CgDataError, Reader, Section, SectionKind, Writer};
use parec_passes::merge::{InlinerSummary, Summary};
use parec_passes::outline::global::OutlineTree;

mod support;
use support::{object_files, parec, run, text_size, workspace_root};

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Builds `main` with `args`, runs it under qemu, returns (stdout, status,
/// parec's stderr).
fn build_and_run(
    main: &Path,
    dir: &Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> (String, i32, String) {
    let exe = dir.join("prog");
    let _ = std::fs::remove_file(&exe);
    let mut cmd = parec();
    cmd.arg("build").arg(main).arg("-o").arg(&exe).args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = run(&mut cmd);
    assert!(
        out.status.success(),
        "parec build {} {args:?} failed:\n{}",
        main.display(),
        text(&out.stderr)
    );
    let ran = run(Command::new("qemu-aarch64-static").arg(&exe));
    (
        text(&ran.stdout),
        ran.status.code().unwrap_or(-1),
        text(&out.stderr),
    )
}

/// Multi-module programs with their expected output.
fn programs() -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    for dir in [
        "examples/cyclic",
        "examples/geometry",
        "examples/growable",
        "examples/modsort",
        "examples/stats",
        "bench/generic_zoo",
        "bench/sorts",
        "bench/hashmap",
    ] {
        let d = workspace_root().join(dir);
        if !d.join("main.pare").exists() {
            continue;
        }
        let expected = std::fs::read_to_string(d.join("expected.out"))
            .unwrap_or_else(|e| panic!("{dir}/expected.out: {e}"));
        out.push((d.join("main.pare"), expected));
    }
    assert!(out.len() >= 6, "multi-module programs are missing");
    out
}

/// A named build: extra flags and environment variables.
type BuildConfig<'a> = (&'a str, &'a [&'a str], &'a [(&'a str, &'a str)]);

#[test]
fn two_rounds_local_and_forced_collisions_run_correctly() {
    let tmp = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    let configs: [BuildConfig; 4] = [
        ("two rounds", &["--two-rounds"], &[]),
        ("local", &[], &[]),
        ("two rounds -j1", &["--two-rounds", "-j1"], &[]),
        (
            "forced collisions",
            &["--two-rounds"],
            &[("PAREC_MERGE_FORCE_COLLISIONS", "1")],
        ),
    ];
    let mut merged_somewhere = false;
    for (main, expected) in programs() {
        for (name, args, env) in &configs {
            let (stdout, status, stderr) = build_and_run(&main, tmp.path(), args, env);
            if stdout != expected || status != 0 {
                failures.push(format!(
                    "{} ({name}): status {status}, output differs",
                    main.display()
                ));
            }
            if stderr.contains("bodies folded") && !stderr.contains(" 0 merged") {
                merged_somewhere = true;
            }
        }
    }
    assert!(merged_somewhere, "no build merged anything");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn two_rounds_merge_and_fold_generic_zoo() {
    let tmp = tempfile::tempdir().unwrap();
    let main = workspace_root().join("bench/generic_zoo/main.pare");
    // `-Oz`: every group merges (`-Os` splits those whose callees differ).
    let args = ["-Oz", "--two-rounds", "--remarks"];
    let (_, _, stderr) = build_and_run(&main, tmp.path(), &args, &[]);
    let report = stderr
        .lines()
        .find(|l| l.starts_with("merge (two rounds):"))
        .unwrap_or_else(|| panic!("no merge report:\n{stderr}"));
    let number = |after: &str| -> usize {
        let at = report.find(after).unwrap_or_else(|| panic!("{report}"));
        report[..at]
            .split_whitespace()
            .last()
            .unwrap()
            .trim_start_matches('(')
            .parse()
            .unwrap()
    };
    let merged = number(" merged into");
    let folded = number(" bodies folded");
    assert!(merged >= 100, "{report}");
    assert!(folded >= merged / 2, "{report}");
    let remarks = stderr
        .lines()
        .filter(|l| l.starts_with("remark: merge:"))
        .count();
    assert!(
        remarks >= merged,
        "one remark per decision: {remarks} < {merged}"
    );
}

/// cgdata from another program, and from a modified version of the same
/// program: possibly less merging, never a wrong result.
#[test]
fn stale_cgdata_is_safe() {
    let tmp = tempfile::tempdir().unwrap();
    let zoo = workspace_root().join("bench/generic_zoo/main.pare");
    let other = tmp.path().join("zoo.cgdata");
    let out = run(parec()
        .args(["build", "--two-rounds", "--emit", "obj", "-o"])
        .arg(tmp.path().join("objs"))
        .arg("--cgdata-generate")
        .arg(&other)
        .arg(&zoo));
    assert!(out.status.success(), "{}", text(&out.stderr));

    // A modified copy of modsort: other constants, one more function.
    let src = workspace_root().join("examples/modsort");
    let modified = tmp.path().join("modsort");
    std::fs::create_dir_all(&modified).unwrap();
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        let mut body = std::fs::read_to_string(&path).unwrap();
        if path.extension().is_some_and(|e| e == "pare") {
            body = body.replace("10", "11").replace("3", "4");
            body.push_str("\npub fn extra_fn_for_staleness(x: i64) -> i64 { x * 5 + 1 }\n");
        }
        std::fs::write(modified.join(path.file_name().unwrap()), body).unwrap();
    }
    let stale = tmp.path().join("stale.cgdata");
    let out = run(parec()
        .args(["build", "--emit", "obj", "-o"])
        .arg(tmp.path().join("objs2"))
        .arg("--cgdata-generate")
        .arg(&stale)
        .arg(modified.join("main.pare")));
    assert!(out.status.success(), "{}", text(&out.stderr));

    let expected = std::fs::read_to_string(src.join("expected.out")).unwrap();
    for cg in [&other, &stale] {
        for env in [&[][..], &[("PAREC_MERGE_FORCE_COLLISIONS", "1")][..]] {
            let (stdout, status, stderr) = build_and_run(
                &src.join("main.pare"),
                tmp.path(),
                &["--cgdata-use", cg.to_str().unwrap()],
                env,
            );
            assert_eq!(
                (stdout.as_str(), status),
                (expected.as_str(), 0),
                "{}: {stderr}",
                cg.display()
            );
        }
    }
}

/// `examples/geometry` and its expected output; its cgdata, generated in
/// `dir`, is written to `cgdata`.
fn geometry_with_cgdata(dir: &Path, cgdata: &Path) -> (PathBuf, String) {
    let main = workspace_root().join("examples/geometry/main.pare");
    let expected =
        std::fs::read_to_string(workspace_root().join("examples/geometry/expected.out")).unwrap();
    let out = run(parec()
        .args(["build", "--emit", "obj", "-o"])
        .arg(dir.join("objs"))
        .arg("--cgdata-generate")
        .arg(cgdata)
        .arg(&main));
    assert!(out.status.success(), "{}", text(&out.stderr));
    (main, expected)
}

/// Checks that `--cgdata-use` of the file `contents` (case `name`) is
/// refused with an error containing `message` and the file's path, exit
/// status 1, and that with `--cgdata-ignore-errors` it is a warning and
/// the program builds (locally) and prints `expected`.
fn refused_unless_ignored(
    dir: &Path,
    main: &Path,
    expected: &str,
    name: &str,
    contents: &[u8],
    message: &str,
) {
    let path = dir.join(format!("{}.cgdata", name.replace(' ', "_")));
    std::fs::write(&path, contents).unwrap();
    let out = run(parec()
        .arg("build")
        .arg(main)
        .arg("-o")
        .arg(dir.join("prog"))
        .arg("--cgdata-use")
        .arg(&path));
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{name}: {stderr}");
    assert!(
        stderr.starts_with("error:")
            && stderr.contains(message)
            && stderr.contains(&path.display().to_string()),
        "{name}: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{name}: {stderr}");
    let (stdout, status, stderr) = build_and_run(
        main,
        dir,
        &[
            "--cgdata-use",
            path.to_str().unwrap(),
            "--cgdata-ignore-errors",
        ],
        &[],
    );
    assert!(stderr.contains("warning:"), "{name}: {stderr}");
    assert_eq!((stdout.as_str(), status), (expected, 0), "{name}");
}

/// A section payload written as given (a broken `inliner` section).
struct RawInliner(Vec<u8>);

impl Section for RawInliner {
    const KIND: SectionKind = SectionKind::Inliner;
    fn encode(&self, w: &mut Writer) {
        w.bytes_raw(&self.0);
    }
    fn decode(_: &mut Reader<'_>) -> Result<Self, CgDataError> {
        unreachable!("only written")
    }
    fn merge(&mut self, _: Self) {}
}

/// `--cgdata-use` plans the inliner from the file's `inliner` section (the
/// summary round 1's inliner planned with, before inlining): a file
/// without it (an older parec's, or a build with no inliner before
/// merging) or with a broken one is refused with an error naming the file
/// and a non-zero exit, or with `--cgdata-ignore-errors` built locally;
/// `cgdata show` and `cgdata merge` carry the section.
#[test]
fn cgdata_inliner_section_missing_or_broken_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let good = tmp.path().join("good.cgdata");
    let (main, expected) = geometry_with_cgdata(tmp.path(), &good);
    let data = CgData::decode(&std::fs::read(&good).unwrap(), None).unwrap();
    let inliner = data
        .get::<InlinerSummary>()
        .unwrap()
        .expect("an inliner section");
    assert!(!inliner.0.functions().is_empty());
    let shown = text(&run(parec().args(["cgdata", "show"]).arg(&good)).stdout);
    assert!(
        shown.contains("sections: merge, outline, inliner"),
        "{shown}"
    );
    assert!(shown.contains("inliner: "), "{shown}");
    let merged = tmp.path().join("merged.cgdata");
    let out = run(parec().args(["cgdata", "merge"]).arg(&merged).arg(&good));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let merged = CgData::decode(&std::fs::read(&merged).unwrap(), None).unwrap();
    assert_eq!(merged.get::<InlinerSummary>().unwrap(), Some(inliner));

    let mut old = CgData::new(&data.target);
    old.put(&data.get::<Summary>().unwrap().unwrap());
    old.put(&data.get::<OutlineTree>().unwrap().unwrap());
    let mut broken = data.clone();
    broken.put(&RawInliner(vec![0, 0, 0, 0, 7]));
    let cases = [
        ("old", old, "no `inliner` section"),
        ("broken", broken, "unexpected bytes after inliner"),
    ];
    for (name, contents, message) in cases {
        refused_unless_ignored(
            tmp.path(),
            &main,
            &expected,
            name,
            &contents.encode(),
            message,
        );
    }
    // Without the inliner before merging, the merge summary is all a
    // build plans from.
    let out = run(parec()
        .args(["build", "--emit", "obj", "--passes", "gvn,merge", "-o"])
        .arg(tmp.path().join("objs2"))
        .arg("--cgdata-use")
        .arg(tmp.path().join("old.cgdata"))
        .arg(&main));
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn broken_cgdata_is_an_error_or_with_a_flag_a_warning() {
    let tmp = tempfile::tempdir().unwrap();
    let good = tmp.path().join("good.cgdata");
    let (main, expected) = geometry_with_cgdata(tmp.path(), &good);
    let bytes = std::fs::read(&good).unwrap();

    let mut corrupt = bytes.clone();
    let mid = corrupt.len() / 2;
    corrupt[mid] ^= 0x55;
    let mut version = bytes.clone();
    version[8..12].copy_from_slice(&99u32.to_le_bytes());
    let x86 = tmp.path().join("x86.cgdata");
    let out = run(parec()
        .args([
            "build",
            "--target",
            "x86_64-unknown-linux-gnu",
            "--emit",
            "obj",
            "-o",
        ])
        .arg(tmp.path().join("objs86"))
        .arg("--cgdata-generate")
        .arg(&x86)
        .arg(&main));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("truncated", bytes[..bytes.len() / 3].to_vec(), "truncated"),
        ("corrupt", corrupt, "checksum"),
        ("version", version, "version 99"),
        ("target", std::fs::read(&x86).unwrap(), "x86_64"),
        ("not cgdata", b"hello\n".to_vec(), "not a cgdata file"),
        ("empty", Vec::new(), "truncated"),
    ];
    for (name, contents, message) in cases {
        refused_unless_ignored(tmp.path(), &main, &expected, name, &contents, message);
    }
    // `cgdata show` and `cgdata merge` reject broken and mismatched files.
    let broken = tmp.path().join("corrupt.cgdata");
    let out = run(parec().args(["cgdata", "show"]).arg(&broken));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("checksum"));
    let merged = tmp.path().join("merged.cgdata");
    let out = run(parec()
        .args(["cgdata", "merge"])
        .arg(&merged)
        .arg(&good)
        .arg(&x86));
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("x86_64"),
        "{}",
        text(&out.stderr)
    );
    assert!(!merged.exists());
    // --cgdata-generate never replaces a file that is not cgdata.
    let precious = tmp.path().join("precious.txt");
    std::fs::write(&precious, "keep me").unwrap();
    let out = run(parec()
        .args(["build", "--emit", "obj", "-o"])
        .arg(tmp.path().join("objs3"))
        .arg("--cgdata-generate")
        .arg(&precious)
        .arg(&main));
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(std::fs::read_to_string(&precious).unwrap(), "keep me");
}

const LIB: &str = r#"
pub fn tri<const K: i64>(n: i64) -> i64 {
    if n <= 0 {
        return 0;
    }
    let a = n * K + 7;
    let b = (a ^ n) & 1023;
    tri<K>(n - 1) + a * 3 - b
}

pub fn even<const K: i64>(n: i64) -> i64 {
    if n <= 0 {
        return K;
    }
    let t = n * 5 + K;
    odd<K>(n - 1) + (t ^ 3) - t
}

pub fn odd<const K: i64>(n: i64) -> i64 {
    if n <= 0 {
        return 0 - K;
    }
    let t = n * 5 + K;
    even<K>(n - 1) + (t ^ 3) - t
}

pub fn double(x: i64) -> i64 { x * 2 }
pub fn triple(x: i64) -> i64 { x * 3 }

pub fn apply<f: fn(i64) -> i64>(x: i64) -> i64 {
    let mut s = 0;
    for i in 0..x {
        s = s + f(i) * 7 - (i ^ 5);
    }
    s
}
"#;

const OTHER: &str = r#"
import lib;

pub fn run() {
    print(lib::tri<3>(12));
    print(lib::tri<9>(12));
    print(lib::even<4>(9));
    print(lib::apply<lib::triple>(9));
}
"#;

const MAIN: &str = r#"
import lib;
import other;

fn main() {
    print(lib::tri<3>(10));
    print(lib::tri<5>(10));
    print(lib::even<2>(7));
    print(lib::odd<3>(8));
    print(lib::apply<lib::double>(21));
    print(lib::apply<lib::triple>(21));
    other::run();
}
"#;

/// Recursive and mutually recursive generic instances across modules, and
/// instances over function parameters: two rounds, local, and forced
/// collisions all print what the interpreter prints.
#[test]
fn recursive_and_function_parameter_instances() {
    let tmp = tempfile::tempdir().unwrap();
    for (name, body) in [
        ("lib.pare", LIB),
        ("other.pare", OTHER),
        ("main.pare", MAIN),
    ] {
        std::fs::write(tmp.path().join(name), body).unwrap();
    }
    let main = tmp.path().join("main.pare");
    let interp = run(parec().arg("interp").arg(&main));
    assert!(interp.status.success(), "{}", text(&interp.stderr));
    let expected = text(&interp.stdout);
    let mut merged = false;
    for (args, env) in [
        (&["--two-rounds", "--remarks"][..], &[][..]),
        (&[][..], &[][..]),
        (
            &["--two-rounds"][..],
            &[("PAREC_MERGE_FORCE_COLLISIONS", "1")][..],
        ),
    ] {
        let (stdout, status, stderr) = build_and_run(&main, tmp.path(), args, env);
        assert_eq!(
            (stdout.as_str(), status),
            (expected.as_str(), 0),
            "{args:?}: {stderr}"
        );
        merged |= stderr.contains("tri<") && stderr.contains(".Tgm");
    }
    assert!(merged, "the recursive instances were not merged");
    // The host JIT merges locally too (thunks call and return on x86-64).
    let jit = run(parec().arg("run").arg(&main));
    assert_eq!(text(&jit.stdout), expected, "{}", text(&jit.stderr));
}

/// A CLIF program whose merged function's address is taken: the address
/// is the thunk's, and calling through it computes what it did.
#[test]
fn address_taken_functions_stay_correct() {
    let tmp = tempfile::tempdir().unwrap();
    let clif = tmp.path().join("addr.clif");
    std::fs::write(
        &clif,
        r#"
function %scale2(i64) -> i64 tail {
block0(v0: i64):
    v1 = iconst.i64 2
    v2 = imul v0, v1
    v3 = iadd v2, v0
    v4 = bxor v3, v1
    v5 = imul v4, v4
    v6 = isub v5, v2
    v7 = iadd v6, v3
    v8 = bor v7, v4
    return v8
}

function %scale3(i64) -> i64 tail {
block0(v0: i64):
    v1 = iconst.i64 3
    v2 = imul v0, v1
    v3 = iadd v2, v0
    v4 = bxor v3, v1
    v5 = imul v4, v4
    v6 = isub v5, v2
    v7 = iadd v6, v3
    v8 = bor v7, v4
    return v8
}

function %main() -> i32 system_v {
    sig0 = (i64) -> i64 tail
    fn0 = colocated %scale3 sig0
    fn1 = colocated %scale2 sig0

block0:
    v0 = iconst.i64 7
    v1 = func_addr.i64 fn0
    v2 = call_indirect sig0, v1(v0)
    v3 = call fn1(v0)
    v4 = iadd v2, v3
    v5 = ireduce.i32 v4
    v6 = iconst.i32 255
    v7 = band v5, v6
    return v7
}
"#,
    )
    .unwrap();
    let jit = run(parec().args(["run", "-O2"]).arg(&clif));
    let exe = tmp.path().join("addr");
    let out = run(parec()
        .arg("build")
        .arg(&clif)
        .arg("-o")
        .arg(&exe)
        .arg("--remarks"));
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("remark: merge: merged scale3 [")
            && stderr.contains("thunk of `scale3.Tgm`"),
        "{stderr}"
    );
    let ran = run(Command::new("qemu-aarch64-static").arg(&exe));
    assert!(jit.status.code().is_some(), "{}", text(&jit.stderr));
    assert_eq!(ran.status.code(), jit.status.code());
}

fn generate(args: &[&str], files: &[PathBuf], out: &Path, dir: &Path) -> Vec<u8> {
    let _ = std::fs::remove_file(out);
    let o = run(parec()
        .args(["build", "--emit", "obj", "-o"])
        .arg(dir)
        .args(args)
        .arg("--cgdata-generate")
        .arg(out)
        .args(files));
    assert!(o.status.success(), "{}", text(&o.stderr));
    std::fs::read(out).unwrap()
}

#[test]
fn cgdata_bytes_do_not_depend_on_module_order_or_jobs() {
    let tmp = tempfile::tempdir().unwrap();
    let zoo = workspace_root().join("bench/generic_zoo/main.pare");
    let cg = tmp.path().join("a.cgdata");
    let objs = tmp.path().join("objs");
    let j1 = generate(&["-j1"], std::slice::from_ref(&zoo), &cg, &objs);
    let j2 = generate(&["-j2"], std::slice::from_ref(&zoo), &cg, &objs);
    assert_eq!(j1, j2, "cgdata differs between -j1 and -j2");

    // CLIF modules in both orders.
    let a = workspace_root().join("filetests/merge/fig6.clif");
    let b = workspace_root().join("filetests/merge/recursive.clif");
    let ab = generate(&[], &[a.clone(), b.clone()], &cg, &objs);
    let ba = generate(&[], &[b, a], &cg, &objs);
    assert_eq!(ab, ba, "cgdata depends on module order");

    // `cgdata merge` in any input order gives the same bytes.
    let x = tmp.path().join("x.cgdata");
    let y = tmp.path().join("y.cgdata");
    std::fs::write(&x, &j1).unwrap();
    std::fs::write(&y, &ab).unwrap();
    let m1 = tmp.path().join("m1.cgdata");
    let m2 = tmp.path().join("m2.cgdata");
    assert!(
        run(parec().args(["cgdata", "merge"]).arg(&m1).arg(&x).arg(&y))
            .status
            .success()
    );
    assert!(
        run(parec().args(["cgdata", "merge"]).arg(&m2).arg(&y).arg(&x))
            .status
            .success()
    );
    assert_eq!(std::fs::read(&m1).unwrap(), std::fs::read(&m2).unwrap());
    let show = run(parec().args(["cgdata", "show"]).arg(&m1));
    let shown = text(&show.stdout);
    assert!(show.status.success());
    assert!(
        shown.contains("target aarch64") && shown.contains("est. benefit"),
        "{shown}"
    );
    assert!(shown.contains("  p0: "), "{shown}");
}

/// Objects from a two-round build are byte-identical for -j1 and -j2.
#[test]
fn two_round_objects_do_not_depend_on_jobs() {
    let tmp = tempfile::tempdir().unwrap();
    let zoo = workspace_root().join("bench/generic_zoo/main.pare");
    let mut outputs = Vec::new();
    for j in ["-j1", "-j2"] {
        let dir = tmp.path().join(j);
        let o = run(parec()
            .args(["build", "--two-rounds", "--emit", "obj", j, "-o"])
            .arg(&dir)
            .arg(&zoo));
        assert!(o.status.success(), "{}", text(&o.stderr));
        let files = object_files(&dir);
        outputs.push(files);
    }
    assert_eq!(outputs[0], outputs[1]);
}

/// One cgdata file carries both round-1 results: the merge summary and the
/// outline tree. `--two-rounds` and `--cgdata-use` of a generated file give
/// the same executable, smaller than a local build, at `-Oz` and at the
/// default level, and `cgdata show` and `cgdata merge` handle both sections.
#[test]
fn cgdata_carries_merge_summary_and_outline_tree() {
    let tmp = tempfile::tempdir().unwrap();
    let main = workspace_root().join("bench/generic_zoo/main.pare");
    let expected =
        std::fs::read_to_string(workspace_root().join("bench/generic_zoo/expected.out")).unwrap();
    let build = |name: &str, args: &[&str]| -> (Vec<u8>, u64) {
        let exe = tmp.path().join(name);
        let out = run(parec()
            .arg("build")
            .arg(&main)
            .arg("-o")
            .arg(&exe)
            .args(args));
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
        let ran = run(Command::new("qemu-aarch64-static").arg(&exe));
        assert_eq!(text(&ran.stdout), expected, "{args:?}");
        (std::fs::read(&exe).unwrap(), text_size(&exe))
    };
    // At `-Oz` and at the default level (`-Os`): `--cgdata-use` of the file
    // round 1 wrote gives the executable `--two-rounds` gives, byte for
    // byte, and both are smaller than a local build.
    for (level, flags) in [("oz", &["-Oz"][..]), ("default", &[][..])] {
        let file = tmp.path().join(format!("zoo-{level}.cgdata"));
        let file = file.to_str().unwrap();
        let local = build(&format!("local-{level}"), flags);
        build(
            &format!("generate-{level}"),
            &[flags, &["--cgdata-generate", file]].concat(),
        );
        let used = build(
            &format!("used-{level}"),
            &[flags, &["--cgdata-use", file]].concat(),
        );
        let two_rounds = build(
            &format!("two-{level}"),
            &[flags, &["--two-rounds"]].concat(),
        );
        assert!(
            used.0 == two_rounds.0,
            "{level}: --cgdata-use differs from --two-rounds"
        );
        // Code, not file size: two rounds add thunk and body symbols.
        assert!(
            two_rounds.1 < local.1,
            "{level}: two rounds are not smaller"
        );
    }
    let cgdata = tmp.path().join("zoo-oz.cgdata");
    let cg = cgdata.to_str().unwrap();

    let show = run(parec().args(["cgdata", "show", cg]));
    let shown = text(&show.stdout);
    assert!(show.status.success(), "{}", text(&show.stderr));
    assert!(shown.contains("sections: merge, outline"), "{shown}");
    let outline_line = shown
        .lines()
        .find(|l| l.starts_with("outline: "))
        .unwrap_or_else(|| panic!("no outline section shown:\n{shown}"));
    assert!(!outline_line.starts_with("outline: 0 "), "{outline_line}");

    let merged = tmp.path().join("merged.cgdata");
    let out = run(parec()
        .args(["cgdata", "merge"])
        .arg(&merged)
        .args([cg, cg]));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let merged_show = text(&run(parec().args(["cgdata", "show"]).arg(&merged)).stdout);
    assert!(
        merged_show.contains("sections: merge, outline"),
        "{merged_show}"
    );
}

/// Two instances of a generic loop that call different predicates (the
/// shape of `primes`' `count_if`): `-Oz` merges them into one body that
/// calls its predicate through a parameter on every iteration; `-Os` (the
/// default) inlines each instance's own predicate at the hot site, so the
/// group splits and nothing calls through a parameter. Both print what
/// the interpreter prints.
#[test]
fn os_splits_groups_whose_callees_differ_in_loops() {
    let tmp = tempfile::tempdir().unwrap();
    let main = tmp.path().join("split.pare");
    std::fs::write(
        &main,
        "fn is_even(n: i64) -> bool { n % 2 == 0 }\n\
         fn is_square(n: i64) -> bool {\n\
         \x20   let mut r = 0;\n\
         \x20   while r * r < n { r += 1; }\n\
         \x20   r * r == n\n\
         }\n\
         fn count_if<pred: fn(i64) -> bool>(lo: i64, hi: i64) -> i64 {\n\
         \x20   let mut c = 0;\n\
         \x20   for n in lo..hi { if pred(n) { c += 1; } }\n\
         \x20   c\n\
         }\n\
         fn main() {\n\
         \x20   print(count_if<is_even>(0, 1000));\n\
         \x20   print(count_if<is_square>(0, 1000));\n\
         \x20   print(count_if<is_even>(5, 100));\n\
         \x20   print(count_if<is_square>(5, 100));\n\
         \x20   print(count_if<is_even>(7, 50));\n\
         \x20   print(count_if<is_square>(7, 50));\n\
         }\n",
    )
    .unwrap();
    // Three calls of each instance: inlining them into `main` would cost
    // more than merging them (`parec_passes::price`), so `-Oz` merges.
    const EXPECTED: &str = "500\n32\n47\n7\n21\n5\n";
    let merged = |remarks: &str| merged_count(remarks, "split::count_if");
    let inlined =
        |remarks: &str, callee: &str| inlined_into_instance(remarks, "split", "count_if", callee);
    let (out, status, oz) = build_and_run(&main, tmp.path(), &["-Oz", "--remarks"], &[]);
    assert_eq!((out.as_str(), status), (EXPECTED, 0));
    assert_eq!(merged(&oz), 2, "{oz}");
    assert!(!inlined(&oz, "is_even"), "{oz}");
    let (out, status, os) = build_and_run(&main, tmp.path(), &["--remarks"], &[]);
    assert_eq!((out.as_str(), status), (EXPECTED, 0));
    assert_eq!(merged(&os), 0, "{os}");
    assert!(inlined(&os, "is_even") && inlined(&os, "is_square"), "{os}");
}

/// A tree insert that keeps its nodes' heights (the shape of bench/trees'
/// `avl::update`): `height` is called in recursive code, on every level of
/// every insert, and in no loop, so the loop rule does not see it. `-Oz`
/// keeps the calls (inlining grows the callers); `-Os` inlines the tiny
/// callee wherever it is called, as `-O2` does
/// (`InlineOptions::hot_tiny_insts`). Every build prints what the
/// interpreter prints.
#[test]
fn os_inlines_tiny_callees_outside_loops() {
    let tmp = tempfile::tempdir().unwrap();
    let main = tmp.path().join("tree.pare");
    std::fs::write(
        &main,
        "struct Node { key: i64, height: i64, left: Node, right: Node }\n\
         fn max(a: i64, b: i64) -> i64 { if a > b { a } else { b } }\n\
         fn height(n: Node) -> i64 { if n == null { 0 } else { n.height } }\n\
         fn update(n: Node) { n.height = 1 + max(height(n.left), height(n.right)); }\n\
         fn insert(n: Node, key: i64) -> Node {\n\
         \x20   if n == null { return new Node { key: key, height: 1, left: null, right: null }; }\n\
         \x20   if key < n.key { n.left = insert(n.left, key); } else { n.right = insert(n.right, key); }\n\
         \x20   update(n);\n\
         \x20   n\n\
         }\n\
         fn main() {\n\
         \x20   let mut root: Node = null;\n\
         \x20   for i in 0..50 { root = insert(root, (i * 37) % 101); }\n\
         \x20   print(height(root));\n\
         \x20   print(height(root.left) - height(root.right));\n\
         }\n",
    )
    .unwrap();
    const EXPECTED: &str = "9\n-8\n";
    let interpreted = run(parec().arg("interp").arg(&main));
    assert_eq!(text(&interpreted.stdout), EXPECTED);
    let hot = |remarks: &str| {
        remarks.lines().any(|l| {
            l.starts_with("remark: inline: inlined tree::height [tree]: into `tree::update`: hot")
        })
    };
    let calls_height = |remarks: &str| {
        remarks
            .lines()
            .any(|l| l.starts_with("remark: inline: grew tree::height [tree]: into `tree::update`"))
    };
    let (out, status, oz) = build_and_run(&main, tmp.path(), &["-Oz", "--remarks"], &[]);
    assert_eq!((out.as_str(), status), (EXPECTED, 0));
    assert!(!hot(&oz), "{oz}");
    let (out, status, os) = build_and_run(&main, tmp.path(), &["--remarks"], &[]);
    assert_eq!((out.as_str(), status), (EXPECTED, 0));
    assert!(hot(&os), "{os}");
    // The rule is what inlines it: without it `-Os` keeps the calls.
    let (out, status, off) = build_and_run(
        &main,
        tmp.path(),
        &["--remarks"],
        &[("PAREC_INLINE_HOT_TINY_INSTS", "0")],
    );
    assert_eq!((out.as_str(), status), (EXPECTED, 0));
    assert!(!hot(&off) && calls_height(&off), "{off}");
}

/// An open-addressing probe whose hash function is a parameter (the shape
/// of bench/generic_zoo's `set::slot<h>`): the tiny hash is called once,
/// outside any loop, and the probe loop follows. `-Oz` merges the two
/// instances into one body that calls the hash through a parameter; an
/// unknown callee may write any memory, so the loop after it reloads the
/// table's fields on every step. `-Os` inlines each instance's own hash
/// (`InlineOptions::hot_tiny_insts`: a loop follows the site, so the tiny
/// rule splits the group rather than leaving it to the merger; each hash,
/// called once, is then deleted). Every build prints what the interpreter
/// prints.
#[test]
fn os_inlines_tiny_callees_that_a_loop_follows() {
    let tmp = tempfile::tempdir().unwrap();
    let main = tmp.path().join("probe.pare");
    std::fs::write(
        &main,
        "struct Table { keys: [i64], used: [bool] }\n\
         fn low(k: i64) -> i64 { k % 64 }\n\
         fn spread(k: i64) -> i64 { k * 7 + 3 }\n\
         fn slot<h: fn(i64) -> i64>(t: Table, key: i64) -> i64 {\n\
         \x20   let mask = len(t.keys) - 1;\n\
         \x20   let mut i = h(key) & mask;\n\
         \x20   while t.used[i] && t.keys[i] != key { i = (i + 1) & mask; }\n\
         \x20   i\n\
         }\n\
         fn add<h: fn(i64) -> i64>(t: Table, key: i64) {\n\
         \x20   let i = slot<h>(t, key);\n\
         \x20   t.used[i] = true;\n\
         \x20   t.keys[i] = key;\n\
         }\n\
         fn main() {\n\
         \x20   let a = new Table { keys: new [i64; 64], used: new [bool; 64] };\n\
         \x20   let b = new Table { keys: new [i64; 64], used: new [bool; 64] };\n\
         \x20   for k in 0..40 { add<low>(a, k * 5); add<spread>(b, k * 5); }\n\
         \x20   let mut sum = 0;\n\
         \x20   for k in 0..60 { sum += slot<low>(a, k) * 3 + slot<spread>(b, k); }\n\
         \x20   print(sum);\n\
         \x20   print(slot<low>(a, 35) + slot<spread>(b, 35));\n\
         }\n",
    )
    .unwrap();
    const EXPECTED: &str = "7226\n91\n";
    let interpreted = run(parec().arg("interp").arg(&main));
    assert_eq!(text(&interpreted.stdout), EXPECTED);
    let merged_slots = |remarks: &str| merged_count(remarks, "probe::slot");
    let inlined =
        |remarks: &str, callee: &str| inlined_into_instance(remarks, "probe", "slot", callee);
    let (out, status, oz) = build_and_run(&main, tmp.path(), &["-Oz", "--remarks"], &[]);
    assert_eq!((out.as_str(), status), (EXPECTED, 0));
    assert_eq!(merged_slots(&oz), 2, "{oz}");
    let (out, status, os) = build_and_run(&main, tmp.path(), &["--remarks"], &[]);
    assert_eq!((out.as_str(), status), (EXPECTED, 0));
    assert_eq!(merged_slots(&os), 0, "{os}");
    assert!(inlined(&os, "low") && inlined(&os, "spread"), "{os}");
}

/// A ring read through an accessor whose index function is a constant
/// parameter (the shape of bench/generic_zoo's `ring::get<N>`, called in
/// `window_max<N>`'s loops): the accessor has no loop, nor does one follow
/// its call of the tiny `wrap<N>`, but it runs on every iteration of the
/// loop that calls it. At `-Oz` the windows are a nest of instances
/// (`parec_passes::price`, decision 3): merging each level (a body that
/// calls `wrap<N>` through a parameter in the loop) costs more than
/// inlining `wrap<N>` into `get<N>` and `get<N>` into `window<N>`, then
/// merging the two windows with `fmerge`, which `-Oz` does (64 bytes
/// smaller). `-Os` inlines each accessor's own `wrap<N>`
/// (`InlineOptions::hot_tiny_insts`: a member called inside a loop splits
/// its group; c91be1c left `wrap<N>` a call in the loop), and no `wrap<N>`
/// is left. Every build prints what the interpreter prints.
#[test]
fn os_inlines_tiny_callees_of_functions_called_in_loops() {
    let tmp = tempfile::tempdir().unwrap();
    let main = tmp.path().join("ring.pare");
    std::fs::write(
        &main,
        "fn wrap<const N: i64>(i: i64) -> i64 { i % N }\n\
         fn get<const N: i64>(data: [i64], head: i64, i: i64) -> i64 {\n\
         \x20   data[wrap<N>(head + i)]\n\
         }\n\
         fn window<const N: i64>(data: [i64], head: i64) -> i64 {\n\
         \x20   let mut m = 0;\n\
         \x20   for k in 0..N { m = m * 3 + get<N>(data, head, k); }\n\
         \x20   m\n\
         }\n\
         fn main() {\n\
         \x20   let a = new [i64; 5];\n\
         \x20   let b = new [i64; 7];\n\
         \x20   for i in 0..5 { a[i] = i * 2 + 1; }\n\
         \x20   for i in 0..7 { b[i] = 10 - i; }\n\
         \x20   let mut sum = 0;\n\
         \x20   for h in 0..9 { sum += window<5>(a, h) + window<7>(b, h); }\n\
         \x20   print(sum);\n\
         }\n",
    )
    .unwrap();
    let interpreted = run(parec().arg("interp").arg(&main));
    let expected = text(&interpreted.stdout);
    let merged_windows = |remarks: &str| merged_count(remarks, "ring::window");
    let (out, status, oz) = build_and_run(&main, tmp.path(), &["-Oz", "--remarks"], &[]);
    assert_eq!((out.as_str(), status), (expected.as_str(), 0));
    assert_eq!(merged_windows(&oz), 0, "{oz}");
    let nest = "remark: price: inline-nest ring::window<5> [ring]";
    let fmerged = "remark: fmerge: merged ring::window<5> [ring]: with ring::window<7>";
    assert!(oz.lines().any(|l| l.starts_with(nest)), "{oz}");
    assert!(oz.lines().any(|l| l.starts_with(fmerged)), "{oz}");
    let (out, status, os) = build_and_run(&main, tmp.path(), &["--remarks"], &[]);
    assert_eq!((out.as_str(), status), (expected.as_str(), 0));
    assert_eq!(merged_windows(&os), 0, "{os}");
    let wrap_inlined = |remarks: &str, n: u32| {
        let site = format!("remark: inline: inlined ring::wrap<{n}> [ring]: into `ring::get<{n}>`");
        let deleted =
            format!("remark: inline: deleted ring::wrap<{n}> [ring]: inlined into every caller");
        remarks.lines().any(|l| l.starts_with(&site))
            && remarks.lines().any(|l| l.starts_with(&deleted))
    };
    assert!(wrap_inlined(&os, 5) && wrap_inlined(&os, 7), "{os}");
    assert!(wrap_inlined(&oz, 5) && wrap_inlined(&oz, 7), "{oz}");
}

#[test]
fn the_guard_keeps_a_merged_body_a_kept_caller_names() {
    // Generated seed 154, reduced: fmerge merges the two instances and
    // `main` calls the merged body; the guard reverted the body alone and
    // deleted it while `main` still called it (a debug assertion; release
    // builds would have renumbered the call to another function).
    let dir = tempfile::tempdir().unwrap();
    let main = dir.path().join("main.pare");
    std::fs::write(
        &main,
        "struct S1 { a: i64, b: u8, c: u8, d: i32 }\nglobal g1: bool = true;\nglobal g2: u8 = 0;\n\
         fn scale1<const K: u8>(x: u8) -> u8 {\n    (x * K) + if g1 { 0 } else { x }\n}\n\
         fn main() {\n    let s2: S1 = new S1 { b: 0, c: 0b11010, a: 9, d: 28 };\n    \
         print(scale1<4u8>(g2));\n    print(scale1<12u8>(s2.b));\n    exit(0 as i32);\n}\n",
    )
    .unwrap();
    let (stdout, status, stderr) = build_and_run(
        &main,
        dir.path(),
        &["-Oz", "--passes", "fmerge", "--remarks"],
        &[("PAREC_FMERGE_REGIONS", "1")],
    );
    assert_eq!((stdout.as_str(), status), ("0\n0\n", 0), "{stderr}");
}

/// How many `merge` remarks say that a function whose name starts with
/// `name` was merged.
fn merged_count(remarks: &str, name: &str) -> usize {
    let prefix = format!("remark: merge: merged {name}");
    remarks.lines().filter(|l| l.starts_with(&prefix)).count()
}

/// Whether a remark says `module::callee` was inlined into the instance
/// `module::caller<module::callee>`.
fn inlined_into_instance(remarks: &str, module: &str, caller: &str, callee: &str) -> bool {
    let site = format!(
        "remark: inline: inlined {module}::{callee} [{module}]: into `{module}::{caller}<{module}::{callee}>`"
    );
    remarks.lines().any(|l| l.starts_with(&site))
}
