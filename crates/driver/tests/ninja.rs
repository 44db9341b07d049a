//! Separate compilation through Ninja: `parec ninja` writes a build file of
//! `parec plan`, `compile`, `cgdata merge --modules` and `link` actions, and
//! the real `ninja` (Debian's `ninja-build`, which scripts/test.sh installs)
//! runs it. The objects, round 1's cgdata and the executable must be the
//! bytes `parec build` writes, in one round and in two; a second run does
//! nothing; touching a module reruns only the actions of the modules that
//! import it; and the outputs hold no path of the machine they were built on.
//! With `--profile-use`, the same holds, a rewritten profile reruns every
//! compile, and a compile with another profile than the plan's is refused.

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
    reference_build_with(root, dir, two_rounds, &[]);
}

/// [`reference_build`] with more flags (`extra`) for both builds.
fn reference_build_with(root: &Path, dir: &Path, two_rounds: bool, extra: &[&str]) {
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
        .args(&rounds)
        .args(extra));
    check(&o, "parec build --emit obj");
    let o = run(parec()
        .arg("build")
        .arg(root)
        .arg("-o")
        .arg(dir.join("exe"))
        .args(&rounds[..rounds.len().min(1)])
        .args(extra));
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

/// Builds the zoo in `tmp` with ninja and with `parec build`, both with
/// `extra` flags, and compares every byte.
fn matches_parec_build_with(tmp: &Path, two_rounds: bool, extra: &[&str]) {
    let root = zoo().join("main.pare");
    let reference = tmp.join("reference");
    reference_build_with(&root, &reference, two_rounds, extra);
    let build = tmp.join("build");
    let mut flags = extra.to_vec();
    if two_rounds {
        flags.push("--two-rounds");
    }
    generate(&root, &build, &flags);
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

/// One round on the C library (`--runtime libc`, which the plan records
/// and every compile repeats); two rounds freestanding and stripped (`-s`,
/// which `parec link` takes): the bytes of `parec build` either way.
#[test]
fn one_round_is_parec_builds_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    matches_parec_build_with(tmp.path(), false, &["--runtime", "libc"]);
}

#[test]
fn two_rounds_are_parec_builds_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    matches_parec_build_with(tmp.path(), true, &["-s"]);
}

/// `parec run --profile-generate FILE` on `root`.
fn make_profile(root: &Path, profile: &Path) {
    let o = run(parec()
        .arg("run")
        .arg(root)
        .arg("--profile-generate")
        .arg(profile));
    check(&o, "parec run --profile-generate");
}

/// The zoo's profile in `dir/zoo.prof`, its path as a flag value.
fn zoo_profile(dir: &Path) -> String {
    let profile = dir.join("zoo.prof");
    make_profile(&zoo().join("main.pare"), &profile);
    profile.to_str().unwrap().to_string()
}

/// With a profile, Ninja builds `parec build --profile-use`'s bytes, which
/// are not the bytes of a build without it (so the comparison compares
/// something), and the plan holds no path of the profile.
fn profiled_matches_parec_build(two_rounds: bool) {
    let tmp = tempfile::tempdir().unwrap();
    let profile = zoo_profile(tmp.path());
    matches_parec_build_with(tmp.path(), two_rounds, &["--profile-use", &profile]);

    let unprofiled = tmp.path().join("unprofiled");
    reference_build(&zoo().join("main.pare"), &unprofiled, two_rounds);
    assert_ne!(
        object_files(&tmp.path().join("build/obj")),
        object_files(&unprofiled.join("obj")),
        "the profile changed no object"
    );
    let plan = std::fs::read(tmp.path().join("build/program.plan")).unwrap();
    let plan = String::from_utf8_lossy(&plan);
    assert!(!plan.contains("zoo.prof"), "the plan names the profile");
}

#[test]
fn one_round_with_a_profile_is_parec_builds_bytes() {
    profiled_matches_parec_build(false);
}

#[test]
fn two_rounds_with_a_profile_are_parec_builds_bytes() {
    profiled_matches_parec_build(true);
}

#[test]
fn a_profile_keeps_hot_functions_from_the_size_passes() {
    // Not vacuous: the zoo's profile makes the size passes leave functions
    // alone, as remarks say.
    let tmp = tempfile::tempdir().unwrap();
    let profile = zoo_profile(tmp.path());
    let remarks = tmp.path().join("remarks.jsonl");
    let o = run(parec()
        .arg("build")
        .arg(zoo().join("main.pare"))
        .args(["--emit", "obj", "-o"])
        .arg(tmp.path().join("obj"))
        .args(["--profile-use", &profile])
        .arg(format!("--remarks={}", remarks.display())));
    check(&o, "parec build --profile-use");
    let text = std::fs::read_to_string(&remarks).unwrap();
    assert!(
        text.lines().any(|l| l.contains("\"hot-function\"")),
        "no hot-function remark"
    );
}

#[test]
fn a_rewritten_profile_reruns_every_compile() {
    let tmp = tempfile::tempdir().unwrap();
    let root = copy_program(&zoo(), &tmp.path().join("src"));
    let profile = tmp.path().join("app.prof");
    make_profile(&root, &profile);
    let build = tmp.path().join("build");
    generate(
        &root,
        &build,
        &["--two-rounds", "--profile-use", profile.to_str().unwrap()],
    );
    ninja(&build, &[]);
    let before = object_files(&build.join("obj"));
    let mut every_compile: BTreeSet<String> = ["PLAN".to_string()].into();
    for (name, _) in &before {
        let module = name.trim_end_matches(".o");
        every_compile.insert(format!("ROUND1 {module}"));
        every_compile.insert(format!("ROUND2 {module}"));
    }

    // The same runs counted twice: other bytes, so another content hash in
    // the plan, and every compile runs again. (The classes may move: a
    // function is hot only from an absolute amount of work on, which
    // doubled counts reach sooner; so the objects, and the link, may
    // change.) Written after the build, the file is newer than every
    // output.
    let doubled = tmp.path().join("doubled.prof");
    let o = run(parec()
        .args(["cgdata", "merge", "--modules"])
        .arg(&doubled)
        .arg(&profile)
        .arg(&profile));
    check(&o, "parec cgdata merge");
    assert_ne!(
        std::fs::read(&doubled).unwrap(),
        std::fs::read(&profile).unwrap()
    );
    let plan = std::fs::read(build.join("program.plan")).unwrap();
    std::fs::rename(&doubled, &profile).unwrap();
    let ran = actions(&ninja(&build, &[]));
    assert!(every_compile.is_subset(&ran), "{ran:?}");
    assert_ne!(std::fs::read(build.join("program.plan")).unwrap(), plan);
    let before = object_files(&build.join("obj"));
    assert!(ninja(&build, &[]).contains("no work to do"));

    // Touched, the same content: the plan comes out the same, but every
    // compile lists the profile among its inputs and runs again.
    let file = std::fs::File::options().write(true).open(&profile).unwrap();
    file.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(5))
        .unwrap();
    assert_eq!(actions(&ninja(&build, &[])), every_compile);
    assert_eq!(object_files(&build.join("obj")), before);
    assert!(ninja(&build, &[]).contains("no work to do"));
}

#[test]
fn a_compile_with_another_profile_than_the_plans_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let root = zoo().join("main.pare");
    let profile = tmp.path().join("app.prof");
    make_profile(&root, &profile);
    let plan = tmp.path().join("program.plan");
    check(
        &run(parec()
            .arg("plan")
            .arg(&root)
            .arg("-o")
            .arg(&plan)
            .arg("--profile-use")
            .arg(&profile)),
        "parec plan --profile-use",
    );
    let other = tmp.path().join("other.prof");
    let o = run(parec()
        .args(["cgdata", "merge", "--modules"])
        .arg(&other)
        .arg(&profile)
        .arg(&profile));
    check(&o, "parec cgdata merge");
    let compile = |extra: &[&str]| {
        let mut cmd = parec();
        cmd.arg("compile")
            .arg(&root)
            .args(["--module", "num", "--plan"])
            .arg(&plan)
            .arg("-o")
            .arg(tmp.path().join("num.o"))
            .args(extra);
        cmd
    };
    let profile = profile.to_str().unwrap();
    check(
        &run(&mut compile(&["--profile-use", profile])),
        "parec compile with the plan's profile",
    );
    let err = fails(&mut compile(&["--profile-use", other.to_str().unwrap()]));
    assert!(err.contains("another profile"), "{err}");
    let err = fails(&mut compile(&[]));
    assert!(err.contains("this compile has no profile"), "{err}");
    let err = fails(&mut compile(&[
        "--profile-use",
        profile,
        "--profile-mode",
        "conservative",
    ]));
    assert!(err.contains("profile mode `optimistic`"), "{err}");
    let err = fails(&mut compile(&[
        "--profile-use",
        profile,
        "--profile-mismatch",
        "warn",
    ]));
    assert!(err.contains("mismatch policy `error`"), "{err}");
    // A plan without a profile refuses a compile with one.
    let plain = tmp.path().join("plain.plan");
    check(
        &run(parec().arg("plan").arg(&root).arg("-o").arg(&plain)),
        "parec plan",
    );
    let err = fails(
        parec()
            .arg("compile")
            .arg(&root)
            .args(["--module", "num", "--plan"])
            .arg(&plain)
            .arg("-o")
            .arg(tmp.path().join("num.o"))
            .args(["--profile-use", profile]),
    );
    assert!(err.contains("made without a profile"), "{err}");
    // The profile is an input: no action writes over it.
    let err = fails(
        parec()
            .arg("compile")
            .arg(&root)
            .args(["--module", "num", "--plan"])
            .arg(&plan)
            .args(["--profile-use", profile, "-o", profile]),
    );
    assert!(err.contains("refusing to overwrite"), "{err}");
    let err = fails(
        parec()
            .arg("plan")
            .arg(&root)
            .args(["--profile-use", profile, "-o", profile]),
    );
    assert!(err.contains("refusing to overwrite"), "{err}");
    // `parec ninja` reads the profile too: a missing or bad one is an error
    // now rather than in the build.
    let out = tmp.path().join("build.ninja");
    // (A copy of the plan: the plan itself is a file this build would
    // write, refused as such before the profile is read.)
    let not_a_profile = tmp.path().join("not-a-profile");
    std::fs::copy(&plan, &not_a_profile).unwrap();
    for bad in [tmp.path().join("missing.prof"), not_a_profile] {
        let err = fails(
            parec()
                .arg("ninja")
                .arg(&root)
                .arg("-o")
                .arg(&out)
                .arg("--profile-use")
                .arg(&bad),
        );
        assert!(err.contains("profile"), "{err}");
    }
    assert!(!out.exists());
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
    assert!(err.contains("the plan was made for level `-Os`"), "{err}");
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

/// An `import` removed and its file deleted: `ninja` writes the build file
/// again and builds, as CMake's and Meson's build files do when an input of
/// their regeneration is gone (it stopped with "missing and no known rule
/// to make it" until `parec ninja` was run by hand).
#[test]
fn a_deleted_import_regenerates_the_build_file() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    let main = src.join("main.pare");
    let util = src.join("util.pare");
    std::fs::write(
        &main,
        "import util;\nfn main() { print(util::twice(21)); }\n",
    )
    .unwrap();
    std::fs::write(&util, "pub fn twice(x: i64) -> i64 { x * 2 }\n").unwrap();
    let build = tmp.path().join("build");
    generate(&main, &build, &[]);
    ninja(&build, &[]);
    std::fs::write(&main, "fn main() { print(42); }\n").unwrap();
    std::fs::remove_file(&util).unwrap();
    let ran = actions(&ninja(&build, &[]));
    assert!(ran.contains("NINJA build.ninja"), "{ran:?}");
    assert!(ran.contains("LINK main"), "{ran:?}");
    let reference = tmp.path().join("reference");
    reference_build(&main, &reference, false);
    same_bytes(&build.join("main"), &reference.join("exe"));
    assert!(
        actions(&ninja(&build, &[])).is_empty(),
        "a second run did something"
    );
}
