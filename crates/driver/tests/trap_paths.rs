//! The machine code of Pare's checks on aarch64 (docs/DESIGN.md, "Trap
//! paths"): a check branches to one island per kind per function, `b
//! pare_trap_<kind>`; a leaf function whose only call was the trap keeps no
//! frame; no `udf` follows a call that never returns; and a `.clif` file's
//! own `trapz user(N)` stays a trap. Under the tiny code model (a small
//! program's default) a check branches to the shared path itself
//! (`R_AARCH64_CONDBR19`) and keeps no island, and the executable traps
//! with the interpreter's message, also from a function that only traps.
//! The listing of a small program at
//! `-O2` is a snapshot (`snapshots/traps/`).

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use parec::build::{Backend, Build, BuildMode, Input, Units};
use parec::codegen::CodeModel;
use parec::pipeline::Pipeline;
use parec::target::{OptLevel, Target};

/// The checked functions live in a module of their own, so that no level
/// inlines them into `main` (inlining works within a module).
const UTIL: &str = "
pub struct Node { v: i64, next: Node }
pub fn pair_sum(a: [i64], i: i64) -> i64 { a[i] + a[i + 1] }
pub fn field(p: Node) -> i64 { p.v }
pub fn quot(x: i64, y: i64) -> i64 { x / y }
";

const MAIN: &str = "
import util;
fn main() {
    let a = new [i64; 3];
    print(util::pair_sum(a, 1));
    print(util::field(new util::Node { v: 5, next: null }));
    print(util::quot(7, 2));
    exit(3);
}
";

/// `udf #0xc11f`, Cranelift's trap, as `--emit asm` prints it.
const UDF: &str = ".word 0x0000c11f";

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The listing of every function of the objects of `input` at `level`
/// under `code_model`, by name.
fn listings(input: Input, level: OptLevel, code_model: CodeModel) -> BTreeMap<String, Vec<String>> {
    let build = Build {
        pipeline: Pipeline::for_level(level),
        level,
        mode: BuildMode::Local,
        backend: Backend::Objects(Target::Aarch64),
        jobs: 1,
        units: Units::PerModule,
        code_model,
        runtime: Default::default(),
    };
    let output = build
        .run(input)
        .unwrap_or_else(|_| panic!("does not build"));
    support::function_listings(&output.objects)
}

fn pare_listings(level: OptLevel, code_model: CodeModel) -> BTreeMap<String, Vec<String>> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("main.pare");
    std::fs::write(&path, MAIN).unwrap();
    std::fs::write(dir.path().join("util.pare"), UTIL).unwrap();
    listings(Input::Pare(vec![path]), level, code_model)
}

fn count(lines: &[String], needle: &str) -> usize {
    lines.iter().filter(|l| l.contains(needle)).count()
}

#[test]
fn checks_branch_to_one_island_per_kind_and_leaves_keep_no_frame() {
    for level in [OptLevel::O0, OptLevel::O2, OptLevel::Oz] {
        let functions = pare_listings(level, CodeModel::Small);
        let pair_sum = &functions["util::pair_sum"];
        let field = &functions["util::field"];
        for (name, code) in [("pair_sum", pair_sum), ("field", field)] {
            assert_eq!(
                count(code, "stp x29, x30"),
                0,
                "{level:?} {name}: {code:#?}"
            );
            assert_eq!(count(code, UDF), 0, "{level:?} {name}: {code:#?}");
            assert_eq!(count(code, "pare_trap\n"), 0);
        }
        // Two bounds checks and a null check: one island each kind.
        assert_eq!(
            count(pair_sum, "R_AARCH64_CALL26 pare_trap_index_out_of_bounds"),
            1,
            "{level:?}: {pair_sum:#?}"
        );
        assert_eq!(
            count(pair_sum, "R_AARCH64_CALL26 pare_trap_null_dereference"),
            1
        );
        let island_is_a_branch = pair_sum.iter().zip(pair_sum.iter().skip(1)).any(|(i, r)| {
            i.contains(" b #") && r.ends_with("R_AARCH64_CALL26 pare_trap_index_out_of_bounds")
        });
        assert!(island_is_a_branch, "{level:?}: {pair_sum:#?}");
        assert_eq!(
            count(&functions["util::quot"], "pare_trap_division_by_zero"),
            1
        );
        assert_eq!(
            count(&functions["util::quot"], "pare_trap_division_overflow"),
            1
        );
        // The shared paths: `mov w2, #k; b pare_trap`.
        let null = &functions["pare_trap_null_dereference"];
        assert_eq!(null.len(), 3, "{null:#?}");
        assert!(null[0].ends_with("mov w2, #3"), "{null:#?}");
        assert!(null[1].contains(" b #") && null[2].ends_with("pare_trap"));
    }
}

#[test]
fn near_checks_branch_straight_to_the_paths() {
    for level in [OptLevel::O0, OptLevel::O2, OptLevel::Oz] {
        let tiny = pare_listings(level, CodeModel::Tiny);
        let small = pare_listings(level, CodeModel::Small);
        let pair_sum = &tiny["util::pair_sum"];
        // Two bounds checks (`b.hs`) and a null check (`cbz`), no island.
        assert_eq!(
            count(pair_sum, "R_AARCH64_CONDBR19 pare_trap_index_out_of_bounds"),
            2,
            "{level:?}: {pair_sum:#?}"
        );
        assert_eq!(
            count(pair_sum, "R_AARCH64_CONDBR19 pare_trap_null_dereference"),
            1,
            "{level:?}: {pair_sum:#?}"
        );
        assert_eq!(
            count(pair_sum, "R_AARCH64_CALL26"),
            0,
            "{level:?}: {pair_sum:#?}"
        );
        // The program's code never grows (outlining may cut it differently).
        let instructions = |functions: &BTreeMap<String, Vec<String>>| {
            functions
                .values()
                .flatten()
                .filter(|l| !l.contains("; "))
                .count()
        };
        assert!(instructions(&tiny) < instructions(&small), "{level:?}");
    }
}

/// Builds `main` at `level` under the tiny code model, runs it under qemu
/// and checks that it prints, traps and exits as the interpreter does;
/// returns what the interpreter printed on stderr.
fn runs_as_interpreted(main: &Path, level: &str) -> String {
    let exe = main.with_file_name(format!("main{level}"));
    let built = support::run(
        support::parec()
            .args(["build", level, "--code-model", "tiny", "-o"])
            .arg(&exe)
            .arg(main),
    );
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let ran = support::run(&mut parec::link::run_command(&exe, Target::Aarch64));
    let interpreted = support::run(support::parec().arg("interp").arg(main));
    assert_eq!(ran.stdout, interpreted.stdout, "{level}");
    assert_eq!(ran.stderr, interpreted.stderr, "{level}");
    assert_eq!(ran.status.code(), interpreted.status.code(), "{level}");
    String::from_utf8_lossy(&interpreted.stderr).into_owned()
}

#[test]
fn a_direct_check_traps_with_the_interpreters_message() {
    let dir = tempfile::tempdir().unwrap();
    let main = dir.path().join("main.pare");
    std::fs::write(
        &main,
        "import util;\nfn main() {\n    let a = new [i64; 3];\n    print(util::pair_sum(a, 1));\n    \
         print(util::pair_sum(a, 2));\n}\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("util.pare"), UTIL).unwrap();
    assert!(runs_as_interpreted(&main, "-Os").contains("index out of bounds"));
}

#[test]
fn a_function_that_only_traps_traps() {
    // GVN folds `12 / 0` to `trap`: the function's whole body is its
    // island, which no branch names but the entry falls into (generated
    // program seed 103 ran on into the next function when it was deleted).
    let dir = tempfile::tempdir().unwrap();
    let main = dir.path().join("main.pare");
    std::fs::write(&main, "import m1;\nfn main() {\n    print(m1::f(1));\n}\n").unwrap();
    std::fs::write(
        dir.path().join("m1.pare"),
        "pub fn f(p: i64) -> i64 {\n    let mut h: i64 = 12 / 0;\n    p\n}\n",
    )
    .unwrap();
    for level in ["-O2", "-Os", "-Oz"] {
        assert!(runs_as_interpreted(&main, level).contains("division by zero"));
    }
}

#[test]
fn no_udf_follows_a_call_that_never_returns() {
    for level in [OptLevel::O0, OptLevel::O2, OptLevel::Oz] {
        let functions = pare_listings(level, CodeModel::Auto);
        for (name, code) in &functions {
            for (i, line) in code.iter().enumerate() {
                let noreturn = ["pare_trap", "pare_exit", "exit"]
                    .iter()
                    .any(|f| line.ends_with(&format!("R_AARCH64_CALL26 {f}")));
                if noreturn && code[i - 1].contains(" bl #") {
                    let next = code.get(i + 1).map_or("", String::as_str);
                    assert!(!next.contains(UDF), "{level:?} {name}: {code:#?}");
                }
            }
        }
        let main = &functions["main"];
        assert!(main.last().unwrap().ends_with("R_AARCH64_CALL26 pare_exit"));
    }
}

#[test]
fn a_clif_files_traps_stay_traps() {
    // `user67` is the code of a Pare null check (`check_trap_code`).
    let clif = "function %f(i64) -> i64 {\nblock0(v0: i64):\n    trapz v0, user67\n    \
                trapz v0, user1\n    return v0\n}\n";
    let module = parec::clif_file::ClifFile::parse("traps.clif", clif)
        .unwrap()
        .module;
    let functions = listings(Input::Modules(vec![module]), OptLevel::O2, CodeModel::Auto);
    let f = &functions["f"];
    assert_eq!(count(f, UDF), 2, "{f:#?}");
    assert_eq!(count(f, "pare_trap"), 0, "{f:#?}");
}

#[test]
fn listing_at_o2() {
    let functions = pare_listings(OptLevel::O2, CodeModel::Auto);
    let mut text = String::new();
    for name in [
        "util::pair_sum",
        "util::field",
        "util::quot",
        "main",
        "pare_trap_null_dereference",
    ] {
        text.push_str(&format!("{name}:\n"));
        for line in &functions[name] {
            text.push_str(&format!("    {line}\n"));
        }
    }
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(workspace_root().join("snapshots/traps"));
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| insta::assert_snapshot!("checks_o2", text));
}
