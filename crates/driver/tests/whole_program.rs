//! Whole-program compilation (`--lto`) and inlining across modules: one
//! object, the same bytes for any `-j`, calls across modules inlined only
//! when the modules are one unit, and the program's output unchanged (the
//! examples and the bench corpus also run with `--lto` in `examples.rs`).

use std::path::Path;
use std::process::Command;

mod support;
use support::{object_files, parec, run, workspace_root};

/// A two-module program: `main` calls a tiny public function of `util`.
fn write_program(dir: &Path) -> std::path::PathBuf {
    std::fs::write(
        dir.join("util.pare"),
        "pub fn twice(x: i64) -> i64 { x + x }\npub fn big(x: i64) -> i64 {\n    let mut s = 0;\n    for i in 0..x { s = s + i * x; }\n    s\n}\n",
    )
    .unwrap();
    let main = dir.join("main.pare");
    std::fs::write(
        &main,
        "import util;\nfn main() {\n    print(util::twice(21));\n    print(util::big(10));\n}\n",
    )
    .unwrap();
    main
}

/// `parec build SOURCE -o EXE ARGS` (with `--lto` if `lto`); its output,
/// which must be a success.
fn build(source: &Path, exe: &Path, args: &[&str], lto: bool) -> std::process::Output {
    build_with(parec(), source, exe, args, lto)
}

fn build_with(
    mut cmd: Command,
    source: &Path,
    exe: &Path,
    args: &[&str],
    lto: bool,
) -> std::process::Output {
    cmd.arg("build").arg(source).arg("-o").arg(exe).args(args);
    if lto {
        cmd.arg("--lto");
    }
    let out = run(&mut cmd);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn inlined_remarks(main: &Path, lto: bool) -> Vec<String> {
    let dir = main.parent().unwrap();
    let out = build(main, &dir.join("exe"), &["--remarks"], lto);
    let run_out = Command::new("qemu-aarch64-static")
        .arg(dir.join("exe"))
        .output()
        .expect("qemu-aarch64-static runs");
    assert_eq!(String::from_utf8_lossy(&run_out.stdout), "42\n450\n");
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.contains("inline: inlined"))
        .map(str::to_string)
        .collect()
}

#[test]
fn calls_across_modules_are_inlined_only_as_one_unit() {
    let tmp = tempfile::tempdir().unwrap();
    let main = write_program(tmp.path());
    let separate = inlined_remarks(&main, false);
    assert!(
        !separate.iter().any(|l| l.contains("util::twice")),
        "{separate:?}"
    );
    let whole = inlined_remarks(&main, true);
    assert!(whole.iter().any(|l| l.contains("util::twice")), "{whole:?}");
}

#[test]
fn one_object_and_the_same_bytes_for_any_jobs() {
    let root = workspace_root();
    let source = root.join("bench/lisp/main.pare");
    let tmp = tempfile::tempdir().unwrap();
    let mut objects = Vec::new();
    for jobs in ["1", "3"] {
        let out_dir = tmp.path().join(format!("j{jobs}"));
        let out = run(parec()
            .arg("build")
            .arg(&source)
            .args(["--lto", "--two-rounds", "--emit", "obj", "-j", jobs, "-o"])
            .arg(&out_dir));
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        objects.push(object_files(&out_dir));
    }
    assert_eq!(
        objects[0].len(),
        1,
        "one object: {:?}",
        objects[0].iter().map(|o| &o.0).collect::<Vec<_>>()
    );
    assert_eq!(objects[0][0].0, "main.o");
    assert!(objects[0] == objects[1], "-j1 and -j3 differ");
}

#[test]
fn whole_program_is_no_larger_than_per_module() {
    let root = workspace_root();
    let tmp = tempfile::tempdir().unwrap();
    for program in ["lisp", "pipeline"] {
        let source = root.join(format!("bench/{program}/main.pare"));
        let mut sizes = Vec::new();
        for lto in [false, true] {
            let exe = tmp.path().join(format!("{program}{lto}"));
            // Size passes only: inlining at hot sites (calls in loops)
            // trades bytes for time, and a whole program has more of them.
            let mut cmd = parec();
            cmd.env("PAREC_INLINE_HOT_INSTS", "0");
            build_with(cmd, &source, &exe, &["-Oz", "--two-rounds"], lto);
            sizes.push(support::text_size(&exe));
        }
        assert!(
            sizes[1] <= sizes[0],
            "{program}: per module {} bytes, --lto {}",
            sizes[0],
            sizes[1]
        );
    }
}

#[test]
fn modules_that_cannot_be_one_unit_are_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let file = |name: &str, value: i64| {
        let path = tmp.path().join(name);
        std::fs::write(
            &path,
            format!("function %f() -> i64 {{\nblock0:\n    v0 = iconst.i64 {value}\n    return v0\n}}\n"),
        )
        .unwrap();
        path
    };
    let (a, b) = (file("a.clif", 1), file("b.clif", 2));
    let out = run(parec()
        .arg("build")
        .arg(&a)
        .arg(&b)
        .args(["--lto", "--emit", "obj", "-o"])
        .arg(tmp.path().join("objs")));
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: `f` is defined by both module `a` and module `b`\n"
    );
}
