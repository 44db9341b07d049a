//! Separate compilation through Ninja: `parec ninja` writes a build file of
//! `parec plan`, `compile`, `cgdata merge --modules` and `link` actions, and
//! the real `ninja` (Debian's `ninja-build`, which scripts/test.sh installs)
//! runs it. The objects, round 1's cgdata and the executable must be the
//! bytes `parec build` writes, in one round and in two; a second run does
//! nothing; touching a module reruns only the actions of the modules that
//! import it; and the outputs hold no path of the machine they were built on.

mod support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use support::{object_files, parec, run, workspace_root};

/// The multi-module program the tests build.
fn zoo() -> PathBuf {
    workspace_root().join("bench/generic_zoo")
}

/// Copies the program's sources into `dir` (so tests may touch and edit
/// them) and returns the root module there.
fn copy_program(from: &Path, dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "pare") {
            std::fs::copy(&path, dir.join(path.file_name().unwrap())).unwrap();
        }
    }
    dir.join("main.pare")
}

fn check(o: &Output, what: &str) {
    assert!(
        o.status.success(),
        "{what} failed ({}):\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Runs `ninja` in `dir` and returns its stdout. Ninja must be installed
/// (scripts/test.sh installs `ninja-build`): a missing tool fails the test.
fn ninja(dir: &Path, args: &[&str]) -> String {
    let o = Command::new("ninja")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run ninja (install ninja-build; scripts/test.sh does): {e}")
        });
    check(&o, "ninja");
    String::from_utf8(o.stdout).unwrap()
}

/// Writes `dir/build.ninja` for the program rooted at `root`.
fn generate(root: &Path, dir: &Path, extra: &[&str]) {
    std::fs::create_dir_all(dir).unwrap();
    let o = run(parec()
        .arg("ninja")
        .arg(root)
        .arg("-o")
        .arg(dir.join("build.ninja"))
        .args(extra));
    check(&o, "parec ninja");
}

/// What `parec build` writes for `root`: objects into `dir/obj`, the
/// executable `dir/exe`, and with two rounds round 1's cgdata `dir/cgdata`.
fn reference_build(root: &Path, dir: &Path, two_rounds: bool) {
    std::fs::create_dir_all(dir).unwrap();
    let mut rounds: Vec<PathBuf> = Vec::new();
    if two_rounds {
        rounds = vec![
            "--two-rounds".into(),
            "--cgdata-generate".into(),
            dir.join("cgdata"),
        ];
    }
    let o = run(parec()
        .arg("build")
        .arg(root)
        .args(["--emit", "obj", "-o"])
        .arg(dir.join("obj"))
        .args(&rounds));
    check(&o, "parec build --emit obj");
    let o = run(parec()
        .arg("build")
        .arg(root)
        .arg("-o")
        .arg(dir.join("exe"))
        .args(&rounds[..rounds.len().min(1)]));
    check(&o, "parec build");
}

/// The actions a ninja run ran, by description (`ROUND1 num`, `LINK main`).
fn actions(stdout: &str) -> BTreeSet<String> {
    stdout
        .lines()
        .filter_map(|line| line.strip_prefix('[')?.split_once("] "))
        .map(|(_, action)| action.to_string())
        .collect()
}

fn same_bytes(a: &Path, b: &Path) {
    let (x, y) = (std::fs::read(a).unwrap(), std::fs::read(b).unwrap());
    assert!(x == y, "`{}` and `{}` differ", a.display(), b.display());
}

/// Builds the zoo with ninja and with `parec build` and compares every byte.
fn matches_parec_build(two_rounds: bool) {
    let tmp = tempfile::tempdir().unwrap();
    let root = zoo().join("main.pare");
    let reference = tmp.path().join("reference");
    reference_build(&root, &reference, two_rounds);
    let build = tmp.path().join("build");
    generate(
        &root,
        &build,
        if two_rounds { &["--two-rounds"] } else { &[] },
    );
    ninja(&build, &[]);

    let expected = object_files(&reference.join("obj"));
    assert_eq!(object_files(&build.join("obj")), expected, "objects differ");
    assert_eq!(expected.len(), 12, "11 modules and the runtime");
    same_bytes(&build.join("main"), &reference.join("exe"));
    if two_rounds {
        same_bytes(&build.join("round1.cgdata"), &reference.join("cgdata"));
    }
    let o = run(Command::new("qemu-aarch64-static").arg(build.join("main")));
    check(&o, "the executable");
    let expected_out = std::fs::read_to_string(zoo().join("expected.out")).unwrap();
    assert_eq!(String::from_utf8_lossy(&o.stdout), expected_out);

    let again = ninja(&build, &[]);
    assert!(again.contains("ninja: no work to do"), "{again}");
}

#[test]
fn one_round_is_parec_builds_bytes() {
    matches_parec_build(false);
}

#[test]
fn two_rounds_are_parec_builds_bytes() {
    matches_parec_build(true);
}

/// The modules of the zoo whose object depends on `num.pare`: it and the
/// modules importing it, directly or not.
const IMPORT_NUM: &[&str] = &[
    "inventory",
    "main",
    "num",
    "ring",
    "signal",
    "stats",
    "text",
];

#[test]
fn touching_a_module_reruns_only_what_imports_it() {
    let tmp = tempfile::tempdir().unwrap();
    let root = copy_program(&zoo(), &tmp.path().join("src"));
    let build = tmp.path().join("build");
    generate(&root, &build, &["--two-rounds"]);
    ninja(&build, &[]);
    let before = object_files(&build.join("obj"));

    // A newer modification time, the same content: the plan, the merged
    // cgdata and the objects come out the same, so nothing is linked again.
    let file = std::fs::File::options()
        .write(true)
        .open(root.with_file_name("num.pare"))
        .unwrap();
    file.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(5))
        .unwrap();
    let ran = actions(&ninja(&build, &[]));
    let mut expected: BTreeSet<String> =
        ["PLAN".to_string(), "NINJA build.ninja".to_string()].into();
    for module in IMPORT_NUM {
        expected.insert(format!("ROUND1 {module}"));
        expected.insert(format!("ROUND2 {module}"));
    }
    assert_eq!(ran, expected);
    assert_eq!(object_files(&build.join("obj")), before);
    assert!(ninja(&build, &[]).contains("no work to do"));
}

#[test]
fn an_edited_module_rebuilds_to_parec_builds_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let root = copy_program(&zoo(), &tmp.path().join("src"));
    let build = tmp.path().join("build");
    generate(&root, &build, &[]);
    ninja(&build, &[]);

    // A different constant in one function of num: its importers compile
    // again (one round: the plan's facts stay the same, so no other module
    // does) and the result is what `parec build` makes of the new sources.
    let num = root.with_file_name("num.pare");
    let text = std::fs::read_to_string(&num).unwrap();
    let edited = text.replacen("(x % M + M) % M", "(x % M + M + M) % M", 1);
    assert_ne!(text, edited);
    std::fs::write(&num, edited).unwrap();
    let ran = actions(&ninja(&build, &[]));
    let compiled: BTreeSet<&str> = ran
        .iter()
        .filter_map(|a| a.strip_prefix("COMPILE "))
        .collect();
    assert!(
        !compiled.is_empty() && compiled.iter().all(|m| IMPORT_NUM.contains(m)),
        "{ran:?}"
    );

    let reference = tmp.path().join("reference");
    reference_build(&root, &reference, false);
    assert_eq!(
        object_files(&build.join("obj")),
        object_files(&reference.join("obj"))
    );
    same_bytes(&build.join("main"), &reference.join("exe"));
}

#[test]
fn outputs_hold_no_path_of_the_build() {
    let tmp = tempfile::tempdir().unwrap();
    let mut builds = Vec::new();
    for place in ["one/deeper/place", "two"] {
        let dir = tmp.path().join(place);
        let root = copy_program(&zoo(), &dir.join("src"));
        let build = dir.join("out");
        generate(&root, &build, &["--two-rounds"]);
        ninja(&build, &[]);
        builds.push(build);
    }
    assert_eq!(
        object_files(&builds[0].join("obj")),
        object_files(&builds[1].join("obj"))
    );
    same_bytes(&builds[0].join("main"), &builds[1].join("main"));
    same_bytes(
        &builds[0].join("round1.cgdata"),
        &builds[1].join("round1.cgdata"),
    );
    let tmp_name = tmp
        .path()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    for (name, bytes) in object_files(&builds[0].join("obj")) {
        let text = String::from_utf8_lossy(&bytes);
        assert!(
            !text.contains(&tmp_name) && !text.contains("/src/"),
            "{name} holds a path"
        );
    }
    // The build file names the sources relative to the build directory.
    let file = std::fs::read_to_string(builds[1].join("build.ninja")).unwrap();
    assert!(file.contains("program = ../src/main.pare"), "{file}");
}

/// Runs a failing parec command and returns its stderr.
fn fails(cmd: &mut Command) -> String {
    let o = run(cmd);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stderr).unwrap()
}

#[test]
fn bad_actions_are_clear_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let root = zoo().join("main.pare");
    let plan = tmp.path().join("program.plan");
    check(
        &run(parec().arg("plan").arg(&root).arg("-o").arg(&plan)),
        "parec plan",
    );
    let compile = |extra: &[&str]| {
        let mut cmd = parec();
        cmd.arg("compile")
            .arg(&root)
            .arg("--plan")
            .arg(&plan)
            .arg("-o")
            .arg(tmp.path().join("x.o"))
            .args(extra);
        cmd
    };
    let err = fails(&mut compile(&["--module", "nosuch"]));
    assert!(
        err.contains("no module `nosuch`") && err.contains("pare_runtime"),
        "{err}"
    );
    let err = fails(&mut compile(&["--module", "num", "-O2"]));
    assert!(err.contains("the plan was made for level `-Oz`"), "{err}");
    let round1 = tmp.path().join("r1.cgdata");
    let err = fails(compile(&["--module", "num", "--cgdata-generate"]).arg(&round1));
    assert!(err.contains("one round"), "{err}");
    std::fs::write(tmp.path().join("bad.plan"), "not a plan").unwrap();
    let err = fails(
        parec()
            .arg("compile")
            .arg(&root)
            .args(["--module", "num", "--plan"])
            .arg(tmp.path().join("bad.plan"))
            .arg("-o")
            .arg(tmp.path().join("x.o")),
    );
    assert!(err.contains("not a parec plan"), "{err}");
    let err = fails(
        parec()
            .arg("compile")
            .arg(&root)
            .args(["--module", "num", "--plan"])
            .arg(tmp.path().join("missing.plan"))
            .arg("-o")
            .arg(tmp.path().join("x.o")),
    );
    assert!(err.contains("cannot read the plan"), "{err}");
    // An output over an input is refused.
    let err = fails(
        parec()
            .arg("compile")
            .arg(&root)
            .args(["--module", "num", "--plan"])
            .arg(&plan)
            .arg("-o")
            .arg(&plan),
    );
    assert!(err.contains("refusing to overwrite"), "{err}");
    let err = fails(
        parec()
            .arg("link")
            .arg(tmp.path().join("none.o"))
            .arg("-o")
            .arg(tmp.path().join("exe")),
    );
    assert!(err.contains("cannot read the object"), "{err}");
}
