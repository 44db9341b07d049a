//! `parec size`: snapshots of the text and JSON reports of small programs
//! (objects and executables), `--compare` of two builds that differ in
//! known functions, ICF-folded functions attributed to every sharer and
//! counted once, trap stubs on both targets, the invariants of the report
//! on a large program, every file byte accounted for (executables and
//! objects, stripped or not, with and without the C library), and bad
//! inputs.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

mod support;
use support::{parec, run, workspace_root};

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn snapshot(name: &str, value: &str) {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(workspace_root().join("snapshots/size"));
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| insta::assert_snapshot!(name, value));
}

/// `parec build ARGS` in `dir`, without inlining; panics on failure.
///
/// The programs here are built to show particular functions, thunks, bodies
/// and trap stubs; the inliner would fold most of them into `main`, so
/// `-Oz` runs its other passes and `-O2` is Cranelift alone.
fn build(dir: &Path, args: &[&str]) {
    let (level, passes) = match args.contains(&"-O2") {
        true => (None, ""),
        false => (Some("-Oz"), "gvn,merge,fmerge,outline"),
    };
    let out = run(parec()
        .current_dir(dir)
        .arg("build")
        .args(args)
        .args(level)
        .args(["--passes", passes]));
    assert!(
        out.status.success(),
        "build {args:?}: {}",
        text(&out.stderr)
    );
}

/// `parec size ARGS` in `dir`: stdout, or a panic.
fn size(dir: &Path, args: &[&str]) -> String {
    let out = run(parec().current_dir(dir).arg("size").args(args));
    assert!(out.status.success(), "size {args:?}: {}", text(&out.stderr));
    text(&out.stdout)
}

fn size_json(dir: &Path, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.push("--json");
    serde_json::from_str(&size(dir, &all)).unwrap()
}

/// Copies `example` (a file of examples/) into `dir` as `name`.
fn copy_example(example: &str, dir: &Path, name: &str) -> PathBuf {
    let to = dir.join(name);
    std::fs::copy(workspace_root().join("examples").join(example), &to).unwrap();
    to
}

fn functions(report: &Value) -> &Vec<Value> {
    report["functions"].as_array().unwrap()
}

fn function<'a>(report: &'a Value, name: &str) -> &'a Value {
    functions(report)
        .iter()
        .find(|f| f["name"] == name)
        .unwrap_or_else(|| panic!("no function `{name}`"))
}

fn group<'a>(report: &'a Value, table: &str, name: &str) -> Option<&'a Value> {
    report[table]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["name"] == name)
}

fn bytes(v: &Value) -> u64 {
    v["bytes"].as_u64().unwrap()
}

/// The objects of a small generic program at `-Oz`: the whole text report
/// and the JSON report (paths are relative, so both are stable).
#[test]
fn objects_report_snapshots() {
    let tmp = tempfile::tempdir().unwrap();
    copy_example("generic_consts.pare", tmp.path(), "generic_consts.pare");
    build(
        tmp.path(),
        &["generic_consts.pare", "--emit", "obj", "-o", "obj"],
    );
    snapshot(
        "generic_consts_objects_text",
        &size(tmp.path(), &["obj", "--top", "0"]),
    );
    snapshot(
        "generic_consts_objects_json",
        &size(tmp.path(), &["obj", "--json"]),
    );
}

/// An executable: the program's own rows and kinds (the C library's rows
/// depend on the installed libc, so they are left out of the snapshot).
#[test]
fn executable_report_snapshot() {
    let tmp = tempfile::tempdir().unwrap();
    copy_example("generic_consts.pare", tmp.path(), "generic_consts.pare");
    build(tmp.path(), &["generic_consts.pare", "-o", "prog"]);
    let report = size_json(tmp.path(), &["prog"]);
    let mut out = String::new();
    for kind in report["kinds"].as_array().unwrap() {
        if kind["name"] != "libc" && kind["name"] != "padding" {
            out.push_str(&format!(
                "kind {} {} bytes, {} shared, {} functions\n",
                kind["name"], kind["bytes"], kind["shared"], kind["functions"]
            ));
        }
    }
    for f in functions(&report).iter().filter(|f| f["kind"] != "libc") {
        out.push_str(&format!(
            "{} {} {} {} bytes, generic {}, shared with {}, copies {}, trap {}\n",
            f["kind"],
            f["module"],
            f["name"],
            f["bytes"],
            f["generic"],
            f["shared_with"],
            f["copies"],
            f["trap_bytes"]
        ));
    }
    snapshot("generic_consts_executable_own", &out);
    // The text report lists the same own functions first.
    let table = size(tmp.path(), &["prog", "--top", "3"]);
    let first = functions(&report)
        .iter()
        .find(|f| f["kind"] != "libc")
        .unwrap();
    assert!(table.contains(first["name"].as_str().unwrap()), "{table}");
    assert!(
        table.contains("more functions; --top 0 lists all"),
        "{table}"
    );
}

const V1: &str = "\
fn grow(x: i64) -> i64 { x + 1 }
fn same(x: i64) -> i64 { x * 7 - 3 }
fn gone(x: i64) -> i64 { x * x * 5 + 2 }
fn main() { print(grow(1)); print(same(2)); print(gone(3)); }
";

const V2: &str = "\
fn grow(x: i64) -> i64 { let mut s = x; for i in 0..x { s = s * 3 + i; } s }
fn same(x: i64) -> i64 { x * 7 - 3 }
fn added(x: i64) -> i64 { x * x * 9 + 4 }
fn main() { print(grow(1)); print(same(2)); print(added(3)); }
";

/// Two builds that differ in known functions: `grow` grew, `gone`
/// vanished, `added` appeared, nothing else changed; the program kind grew
/// by the sum.
#[test]
fn compare_finds_the_functions_that_changed() {
    let tmp = tempfile::tempdir().unwrap();
    for (dir, source) in [("v1", V1), ("v2", V2)] {
        let d = tmp.path().join(dir);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("main.pare"), source).unwrap();
        build(&d, &["main.pare", "-O2", "-o", "prog"]);
        build(&d, &["main.pare", "-O2", "--emit", "obj", "-o", "obj"]);
    }
    for (new, old) in [("v2/prog", "v1/prog"), ("v2/obj", "v1/obj")] {
        let diff = size_json(tmp.path(), &[new, "--compare", old]);
        let changed: Vec<(&str, &str, i64)> = functions(&diff)
            .iter()
            .filter(|d| d["change"] != "same")
            .map(|d| {
                (
                    d["name"].as_str().unwrap(),
                    d["change"].as_str().unwrap(),
                    d["delta"].as_i64().unwrap(),
                )
            })
            .collect();
        let names: Vec<(&str, &str)> = changed.iter().map(|&(n, c, _)| (n, c)).collect();
        assert_eq!(
            names.len(),
            3,
            "{new} vs {old}: exactly three functions change: {changed:?}"
        );
        assert!(names.contains(&("main::grow", "grew")), "{changed:?}");
        assert!(names.contains(&("main::gone", "vanished")), "{changed:?}");
        assert!(names.contains(&("main::added", "appeared")), "{changed:?}");
        let sum: i64 = changed.iter().map(|c| c.2).sum();
        let program = diff["kinds"]
            .as_array()
            .unwrap()
            .iter()
            .find(|k| k["name"] == "program")
            .unwrap();
        assert_eq!(program["delta"].as_i64().unwrap(), sum, "{new} vs {old}");
        assert_eq!(
            diff["own"]["delta"].as_i64().unwrap(),
            sum,
            "{new} vs {old}"
        );

        let table = size(tmp.path(), &[new, "--compare", old]);
        assert!(
            table.contains("functions: 1 grew, 0 shrank, 1 appeared, 1 vanished"),
            "{table}"
        );
        let grow_line = table.lines().find(|l| l.ends_with(" main::grow")).unwrap();
        assert!(grow_line.contains("grew"), "{grow_line}");
    }
    // Executables and objects do not compare.
    let out = run(parec()
        .current_dir(tmp.path())
        .args(["size", "v2/prog", "--compare", "v1/obj"]));
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("--compare needs"),
        "{}",
        text(&out.stderr)
    );
}

const TWINS: &str = "\
fn twin_a(x: i64) -> i64 { let y = x * 13 + 5; y * y - x }
fn twin_b(x: i64) -> i64 { let y = x * 13 + 5; y * y - x }
fn other(x: i64) -> i64 { x + 100 }
fn main() { print(twin_a(1) + twin_b(2) + other(3)); }
";

/// `--icf=all` folds the twins: each row shows the whole block and `shared
/// with 1`, every total counts it once; `--icf=none` keeps two copies.
#[test]
fn icf_folded_functions_are_counted_once_and_attributed_to_both() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("main.pare"), TWINS).unwrap();
    build(
        tmp.path(),
        &["main.pare", "-O2", "--icf=all", "-o", "folded"],
    );
    build(
        tmp.path(),
        &["main.pare", "-O2", "--icf=none", "-o", "apart"],
    );
    let folded = size_json(tmp.path(), &["folded"]);
    let apart = size_json(tmp.path(), &["apart"]);

    let (a, b) = (
        function(&folded, "main::twin_a"),
        function(&folded, "main::twin_b"),
    );
    assert_eq!(a["address"], b["address"], "ICF did not fold the twins");
    assert_eq!(bytes(a), bytes(b));
    assert_eq!(a["shared_with"], 1);
    assert_eq!(b["shared_with"], 1);
    let twin = bytes(a);
    let (a2, b2) = (
        function(&apart, "main::twin_a"),
        function(&apart, "main::twin_b"),
    );
    assert_ne!(a2["address"], b2["address"]);
    assert_eq!(a2["shared_with"], 0);
    assert_eq!((bytes(a2), bytes(b2)), (twin, twin));

    // Counted once: the module, the kind and the own code are one twin
    // smaller than with two copies; the module table says nothing is
    // shared with other modules.
    let module = |r: &Value| bytes(group(r, "modules", "main").unwrap());
    let program = |r: &Value| bytes(group(r, "kinds", "program").unwrap());
    assert_eq!(module(&folded) + twin, module(&apart));
    assert_eq!(program(&folded) + twin, program(&apart));
    assert_eq!(
        folded["own"].as_u64().unwrap() + twin,
        apart["own"].as_u64().unwrap()
    );
    assert_eq!(group(&folded, "modules", "main").unwrap()["shared"], 0);

    let table = size(tmp.path(), &["folded", "--top", "0"]);
    for twin in [
        "main::twin_a  [shared with 1]",
        "main::twin_b  [shared with 1]",
    ] {
        assert!(table.contains(twin), "{table}");
    }
}

/// Merged bodies folded across modules in a large program (`-Oz`, which
/// merges every group; `-Os` splits those whose callees differ): the report's
/// invariants hold — shares tile the own code, kinds and modules add up to
/// their totals, every `.Tgm` body is a merge body and its function, unless
/// elided, a thunk.
#[test]
fn report_invariants_on_generic_zoo() {
    let tmp = tempfile::tempdir().unwrap();
    let main = workspace_root().join("bench/generic_zoo/main.pare");
    let out = run(parec()
        .current_dir(tmp.path())
        .arg("build")
        .arg(&main)
        .args(["-Oz", "--two-rounds", "-o", "zoo"]));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report = size_json(tmp.path(), &["zoo"]);
    let own = report["own"].as_u64().unwrap();
    let total = report["total"].as_u64().unwrap();

    let rows = functions(&report);
    let folded_bodies = rows
        .iter()
        .filter(|f| f["kind"] == "merge-body" && f["shared_with"].as_u64().unwrap() > 0)
        .count();
    assert!(folded_bodies > 50, "only {folded_bodies} folded bodies");
    for f in rows {
        let name = f["name"].as_str().unwrap();
        if let Some(thunk) = name.strip_suffix(".Tgm") {
            assert_eq!(f["kind"], "merge-body", "{name}");
            // Merging deletes a thunk whose callers all call the body
            // (`thunk-elided`); one that stays is a thunk.
            if let Some(t) = functions(&report).iter().find(|f| f["name"] == thunk) {
                assert_eq!(t["kind"], "merge-thunk", "{thunk}");
            }
        }
        if name.starts_with("OUTLINED_FUNCTION_") {
            assert!(
                f["kind"] == "outlined" || f["kind"] == "trap-path",
                "{name}: {}",
                f["kind"]
            );
        }
    }

    // Sharers of one block are listed with each other: splitting every
    // block evenly among its rows tiles the own code exactly.
    let shares: f64 = rows
        .iter()
        .filter(|f| f["kind"] != "libc")
        .map(|f| bytes(f) as f64 / (f["shared_with"].as_u64().unwrap() + 1) as f64)
        .sum();
    assert!((shares - own as f64).abs() < 1.0, "{shares} vs {own}");

    // Kinds: each block once per kind it has, so rows minus the bytes
    // counted by several kinds add up to the total.
    let sums = |table: &str| -> (u64, u64) {
        let rows = report[table].as_array().unwrap();
        let shared = rows.iter().map(|r| r["shared"].as_u64().unwrap()).sum();
        (rows.iter().map(bytes).sum(), shared)
    };
    let (kind_sum, kind_shared) = sums("kinds");
    assert!(kind_sum - kind_shared <= total && total <= kind_sum);
    // Modules cover every function's bytes: all but the padding.
    // (A freestanding executable may have none.)
    let padding = group(&report, "kinds", "padding").map_or(0, bytes);
    let covered = total - padding;
    let (module_sum, module_shared) = sums("modules");
    assert!(module_sum - module_shared <= covered && covered <= module_sum);
    assert!(bytes(group(&report, "kinds", "trap-path").unwrap()) > 0);
    assert!(bytes(group(&report, "kinds", "outlined").unwrap()) > 0);
    assert!(
        group(&report, "generics", "vec::map").unwrap()["functions"]
            .as_u64()
            .unwrap()
            > 10
    );
    assert_eq!(function(&report, "main")["module"], "main");
    assert_eq!(function(&report, "pare_trap")["kind"], "runtime");
    assert_eq!(function(&report, "pare_trap")["module"], "pare_runtime");
}

/// Trap stubs are found on x86_64 too, and `main` takes the module of the
/// code around it.
#[test]
fn x86_64_executable_with_trap_stubs() {
    let tmp = tempfile::tempdir().unwrap();
    copy_example("trap_index.pare", tmp.path(), "trap_index.pare");
    build(
        tmp.path(),
        &[
            "trap_index.pare",
            "--target",
            "x86_64-unknown-linux-gnu",
            "-o",
            "prog",
        ],
    );
    let report = size_json(tmp.path(), &["prog"]);
    assert_eq!(report["arch"], "x86_64");
    let main = function(&report, "main");
    assert_eq!(main["module"], "trap_index");
    assert_eq!(main["kind"], "program");
    assert!(main["trap_bytes"].as_u64().unwrap() > 0, "{main}");
    assert!(bytes(group(&report, "kinds", "trap-path").unwrap()) > 0);
}

/// `tool ARGS` in `dir` (clang-19, ld.lld-19, llvm-strip-19: installed by
/// scripts/test.sh); panics on failure.
fn tool(dir: &Path, tool: &str, args: &[&str]) {
    let out = Command::new(tool)
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {tool} ({e}): run scripts/test.sh"));
    assert!(
        out.status.success(),
        "{tool} {args:?}: {}",
        text(&out.stderr)
    );
}

/// A little-endian `u16` of an ELF header at `at`.
fn header_u16(file: &[u8], at: usize) -> u64 {
    u64::from(u16::from_le_bytes([file[at], file[at + 1]]))
}

/// File part `name` of a report, if it has bytes.
fn file_part<'a>(report: &'a Value, name: &str) -> Option<&'a Value> {
    group(&report["file"], "parts", name)
}

/// The bytes of file part `name` in a report (0 if it has none).
fn part(report: &Value, name: &str) -> u64 {
    file_part(report, name).map_or(0, bytes)
}

/// The file parts of `path` add up to its size, and the header tables
/// are the sizes the ELF header gives (read here from the file's bytes:
/// `e_ehsize`, `e_phentsize × e_phnum`, `e_shentsize × e_shnum`); the
/// code part is the code the kinds divide. Returns the JSON report.
fn check_file_bytes(dir: &Path, path: &str, stripped: bool) -> Value {
    let report = size_json(dir, &[path]);
    let file = std::fs::read(dir.join(path)).unwrap();
    let size = file.len() as u64;
    assert_eq!(report["file"]["bytes"], size, "{path}");
    let parts = report["file"]["parts"].as_array().unwrap();
    assert_eq!(
        parts.iter().map(bytes).sum::<u64>(),
        size,
        "{path}: {parts:?}"
    );
    assert_eq!(report["stripped"], stripped, "{path}");
    assert_eq!(report["file"]["inputs"][0]["stripped"], stripped, "{path}");
    assert_eq!(part(&report, "ELF header"), header_u16(&file, 52), "{path}");
    assert_eq!(
        part(&report, "program headers"),
        header_u16(&file, 54) * header_u16(&file, 56),
        "{path}"
    );
    assert_eq!(
        part(&report, "section headers"),
        header_u16(&file, 58) * header_u16(&file, 60),
        "{path}"
    );
    assert_eq!(part(&report, "code"), report["total"], "{path}");
    let kinds: Vec<&str> = report["kinds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["name"].as_str().unwrap())
        .collect();
    if stripped {
        assert_eq!(part(&report, "symbol table"), 0, "{path}");
        assert_eq!(kinds, ["unknown"], "{path}");
        // One row per code section, named after it.
        let mut rows: Vec<&str> = functions(&report)
            .iter()
            .map(|f| f["name"].as_str().unwrap())
            .collect();
        let code = file_part(&report, "code").unwrap();
        let mut sections: Vec<&str> = code["sections"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap())
            .collect();
        rows.sort_unstable();
        sections.sort_unstable();
        assert_eq!(rows, sections, "{path}");
    } else {
        assert!(part(&report, "symbol table") > 0, "{path}");
        assert!(kinds.contains(&"program"), "{path}: {kinds:?}");
    }
    report
}

/// Every byte of an executable and of an object, stripped (`llvm-strip`)
/// and not: the parts add up; stripping drops the symbol table and keeps
/// the code, which the stripped report attributes per section; the text
/// report and `--compare` say so.
#[test]
fn file_bytes_add_up_stripped_and_unstripped() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    copy_example("hello.pare", dir, "hello.pare");
    build(dir, &["hello.pare", "-o", "prog"]);
    build(dir, &["hello.pare", "--emit", "obj", "-o", "obj"]);
    tool(dir, "llvm-strip-19", &["-o", "prog.stripped", "prog"]);
    tool(
        dir,
        "llvm-strip-19",
        &["-o", "hello.stripped.o", "obj/hello.o"],
    );

    let prog = check_file_bytes(dir, "prog", false);
    let stripped = check_file_bytes(dir, "prog.stripped", true);
    assert!(part(&prog, "read-only data") > 0, "{prog}");
    // Freestanding: the runtime's state (the stdout buffer) is `.bss`,
    // which takes no file bytes.
    assert_eq!(part(&prog, "writable data"), 0, "{prog}");
    assert!(
        prog["file"]["zero_initialised"].as_u64().unwrap() > 0,
        "{prog}"
    );
    assert!(part(&prog, "string tables") > part(&stripped, "string tables"));
    assert_eq!(prog["total"], stripped["total"]);
    assert_eq!(function(&stripped, ".text")["module"], "(unknown)");
    let object = check_file_bytes(dir, "obj/hello.o", false);
    assert!(part(&object, "relocations") > 0, "{object}");
    let stripped_object = check_file_bytes(dir, "hello.stripped.o", true);
    assert_eq!(object["total"], stripped_object["total"]);

    let table = size(dir, &["prog.stripped"]);
    assert!(
        table.contains("stripped (no symbol table: code is attributed per section)"),
        "{table}"
    );
    assert!(table.contains("the program's own: unknown"), "{table}");
    assert!(table.lines().any(|l| l.starts_with("total ")), "{table}");

    let diff = size_json(dir, &["prog.stripped", "--compare", "prog"]);
    let (old, new) = (
        std::fs::metadata(dir.join("prog")).unwrap().len() as i64,
        std::fs::metadata(dir.join("prog.stripped")).unwrap().len() as i64,
    );
    assert_eq!(diff["file"]["delta"].as_i64().unwrap(), new - old);
    let symbols = group(&diff, "file_parts", "symbol table").unwrap();
    assert_eq!(symbols["change"], "vanished", "{symbols}");
    let parts_delta: i64 = diff["file_parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["delta"].as_i64().unwrap())
        .sum();
    assert_eq!(parts_delta, new - old);
}

/// A freestanding executable as parec's freestanding runtime links one
/// (`_start`, the runtime's `pare_*` functions and a system-call primitive,
/// no C library; made here from assembly with clang-19 and ld.lld-19):
/// `_start` is the runtime's, no code is `libc`; linked with `-s` it has no
/// symbol table, and its bytes still add up.
#[test]
fn freestanding_executable_without_libc() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut source = String::from("\t.text\n");
    for (name, body) in [
        ("_start", &["bl main", "mov x8, #94", "b pare_syscall"][..]),
        ("pare_syscall", &["svc #0", "ret"]),
        (
            "pare_print_str",
            &[
                "mov x2, x1",
                "mov x1, x0",
                "mov x0, #1",
                "mov x8, #64",
                "b pare_syscall",
            ],
        ),
        (
            "main",
            &[
                "stp x29, x30, [sp, #-16]!",
                "adrp x0, message",
                "add x0, x0, :lo12:message",
                "mov x1, #6",
                "bl pare_print_str",
                "mov x0, #0",
                "ldp x29, x30, [sp], #16",
                "ret",
            ],
        ),
    ] {
        source.push_str(&format!(
            "\t.globl {name}\n\t.type {name}, %function\n{name}:\n"
        ));
        for instruction in body {
            source.push_str(&format!("\t{instruction}\n"));
        }
        source.push_str(&format!("\t.size {name}, .-{name}\n"));
    }
    source.push_str("\t.section .rodata\nmessage:\n\t.ascii \"hello\\n\"\n");
    std::fs::write(dir.join("start.s"), source).unwrap();
    tool(
        dir,
        "clang-19",
        &[
            "--target=aarch64-linux-gnu",
            "-c",
            "start.s",
            "-o",
            "start.o",
        ],
    );
    tool(dir, "ld.lld-19", &["-static", "-o", "free", "start.o"]);
    tool(
        dir,
        "ld.lld-19",
        &["-static", "-s", "-o", "free.stripped", "start.o"],
    );

    let report = check_file_bytes(dir, "free", false);
    assert_eq!(function(&report, "_start")["kind"], "runtime");
    assert_eq!(function(&report, "_start")["module"], "pare_runtime");
    assert_eq!(function(&report, "pare_syscall")["kind"], "runtime");
    assert_eq!(function(&report, "main")["kind"], "program");
    assert!(group(&report, "kinds", "libc").is_none(), "{report}");
    assert_eq!(report["own"], report["total"]);
    assert_eq!(part(&report, "read-only data"), 6);
    let stripped = check_file_bytes(dir, "free.stripped", true);
    assert_eq!(stripped["total"], report["total"]);
}

/// `main` is the root module's in an executable as in the objects,
/// whatever module's code the linker placed next to it (it was given the
/// module of the function after it: `m2`'s, or the runtime's in a
/// one-module program).
#[test]
fn main_is_the_root_modules_in_executables() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(
        d.join("r.pare"),
        "import m2;\nfn main() { print(m2::f(42)); }\n",
    )
    .unwrap();
    std::fs::write(d.join("m2.pare"), "pub fn f(x: i64) -> i64 { x * 3 + 1 }\n").unwrap();
    std::fs::write(d.join("alone.pare"), "fn main() { print(42); }\n").unwrap();
    for (root, extra) in [("r", &[][..]), ("r", &["--lto"]), ("alone", &[])] {
        let source = format!("{root}.pare");
        let exe = format!("{root}{}", extra.join(""));
        build(
            d,
            &[&[source.as_str(), "-o", exe.as_str()][..], extra].concat(),
        );
        let report = size_json(d, &[&exe]);
        assert_eq!(function(&report, "main")["module"], root, "{exe}");
        let objs = format!("{exe}.objs");
        build(
            d,
            &[
                &[source.as_str(), "--emit", "obj", "-o", objs.as_str()][..],
                extra,
            ]
            .concat(),
        );
        let report = size_json(d, &[&objs]);
        assert_eq!(function(&report, "main")["module"], root, "{objs}");
    }
}

#[test]
fn bad_inputs_are_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let not_elf = tmp.path().join("notes.txt");
    std::fs::write(&not_elf, "hello").unwrap();
    copy_example("hello.pare", tmp.path(), "hello.pare");
    build(tmp.path(), &["hello.pare", "-o", "prog"]);
    build(tmp.path(), &["hello.pare", "--emit", "obj", "-o", "obj"]);
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    for (args, message) in [
        (vec!["notes.txt"], "is not an object file or executable"),
        (vec!["missing"], "cannot read `missing`"),
        (vec!["prog", "obj"], "give one executable, or objects"),
        (vec!["empty"], "holds no .o files"),
    ] {
        let out = run(parec().current_dir(tmp.path()).arg("size").args(&args));
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let stderr = text(&out.stderr);
        assert!(
            stderr.starts_with("error: ") && stderr.contains(message),
            "{args:?}: {stderr}"
        );
    }
}
