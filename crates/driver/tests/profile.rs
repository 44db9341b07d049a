//! Execution profiles end to end, through the `parec` binary: `parec run
//! --profile-generate` and `parec build --profile-use` (docs/DESIGN.md,
//! "Profiles").

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use support::{object_files, parec, run, workspace_root};

fn bench(name: &str) -> PathBuf {
    workspace_root().join("bench").join(name).join("main.pare")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `parec run FILE --profile-generate PROFILE`.
fn generate(source: &Path, profile: &Path) -> Output {
    run(parec()
        .arg("run")
        .arg(source)
        .arg("--profile-generate")
        .arg(profile))
}

fn generated(source: &Path, profile: &Path) -> Vec<u8> {
    let o = generate(source, profile);
    assert!(o.status.success(), "{}", text(&o.stderr));
    std::fs::read(profile).unwrap()
}

/// `parec build SOURCE --profile-use PROFILE EXTRA... --remarks=REMARKS`
/// with objects into `out`.
fn build_objects(source: &Path, profile: &Path, out: &Path, extra: &[&str]) -> Output {
    build_emitting(source, profile, "obj", out, extra)
}

/// `parec build SOURCE --profile-use PROFILE EXTRA --emit EMIT -o OUT`.
fn build_emitting(source: &Path, profile: &Path, emit: &str, out: &Path, extra: &[&str]) -> Output {
    run(parec()
        .arg("build")
        .arg(source)
        .arg("--profile-use")
        .arg(profile)
        .args(extra)
        .args(["--emit", emit, "-o"])
        .arg(out))
}

fn remarks_of(file: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The profile remarks of a build: (decision, function).
fn profile_decisions(file: &Path) -> Vec<(String, String)> {
    remarks_of(file)
        .into_iter()
        .filter(|r| r["pass"] == "profile")
        .map(|r| {
            (
                r["decision"].as_str().unwrap().to_string(),
                r["function"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn profiles_are_deterministic_and_match_the_aarch64_build() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["generic_zoo", "primes"] {
        let source = bench(name);
        let a = generated(&source, &dir.path().join("a.prof"));
        let b = generated(&source, &dir.path().join("b.prof"));
        assert_eq!(a, b, "{name}: two runs gave different profiles");
        let profile = dir.path().join("a.prof");
        let mut objects = Vec::new();
        for jobs in ["1", "2"] {
            let out = dir.path().join(format!("obj{jobs}"));
            let remarks = dir.path().join(format!("r{jobs}.json"));
            let o = build_objects(
                &source,
                &profile,
                &out,
                &["-j", jobs, &format!("--remarks={}", remarks.display())],
            );
            assert!(o.status.success(), "{name}: {}", text(&o.stderr));
            objects.push((object_files(&out), std::fs::read(&remarks).unwrap()));
            // Every function the JIT ran is found in the aarch64 build: the
            // only unprofiled ones are the runtime's (the aarch64 shared
            // trap paths, the target-specific fault handler and, in a
            // freestanding build, every function of the runtime, which the
            // JIT's libc runtime cannot name: `_start` and the C functions
            // it defines too); none is stale.
            for r in remarks_of(&remarks)
                .iter()
                .filter(|r| r["pass"] == "profile")
            {
                assert_ne!(r["decision"], "stale", "{name}: {r}");
                if r["decision"] == "unprofiled" {
                    assert_eq!(r["module"], "pare_runtime", "{name}: no profile: {r}");
                }
            }
        }
        assert!(objects[0] == objects[1], "{name}: -j 1 and -j 2 differ");
    }
}

#[test]
fn programs_that_exit_or_trap_still_write_their_profile() {
    let root = workspace_root();
    let dir = tempfile::tempdir().unwrap();
    for (source, status) in [
        (root.join("examples/exit_code.pare"), 3),
        (
            root.join("filetests/executors/compound_assignment_div.pare"),
            101,
        ),
        (root.join("filetests/executors/stack_overflow.pare"), 101),
    ] {
        let plain = run(parec().arg("run").arg(&source));
        let profile = dir.path().join("p.prof");
        let _ = std::fs::remove_file(&profile);
        let profiled = generate(&source, &profile);
        assert_eq!(plain.status.code(), Some(status), "{}", source.display());
        assert_eq!(profiled.status.code(), plain.status.code());
        assert_eq!(profiled.stdout, plain.stdout);
        assert_eq!(profiled.stderr, plain.stderr);
        let show = run(parec().args(["cgdata", "show"]).arg(&profile));
        assert!(show.status.success(), "{}", text(&show.stderr));
        assert!(text(&show.stdout).contains("target clif, sections: profile"));
    }
}

const LOOP_PROGRAM: &str = "fn spin(n: i64) -> i64 {
    let mut s = 0;
    for i in 0..n {
        s += i % 7;
    }
    s
}

fn never(x: i64) -> i64 {
    x * 3 + 1
}

fn main() {
    print(spin(100000));
    if spin(1) == 5 {
        print(never(2));
    }
}
";

fn write_program(dir: &Path, text: &str) -> PathBuf {
    let path = dir.join("main.pare");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_hot_loop_is_hot_and_a_function_never_called_is_cold() {
    let dir = tempfile::tempdir().unwrap();
    let source = write_program(dir.path(), LOOP_PROGRAM);
    let profile = dir.path().join("p.prof");
    generated(&source, &profile);
    for (mode, never) in [("optimistic", "cold"), ("conservative", "cold")] {
        let remarks = dir.path().join("r.json");
        let o = build_objects(
            &source,
            &profile,
            &dir.path().join("obj"),
            &[
                "--profile-mode",
                mode,
                &format!("--remarks={}", remarks.display()),
            ],
        );
        assert!(o.status.success(), "{}", text(&o.stderr));
        let decisions = profile_decisions(&remarks);
        let of = |f: &str| {
            decisions
                .iter()
                .find(|(_, name)| name == f)
                .map(|(d, _)| d.clone())
        };
        assert_eq!(of("main::spin").as_deref(), Some("hot"), "{decisions:?}");
        assert_eq!(of("main::never").as_deref(), Some(never), "{decisions:?}");
    }
}

#[test]
fn an_edited_function_is_reported_and_warn_builds_anyway() {
    let dir = tempfile::tempdir().unwrap();
    let source = write_program(dir.path(), LOOP_PROGRAM);
    let profile = dir.path().join("p.prof");
    generated(&source, &profile);
    write_program(dir.path(), &LOOP_PROGRAM.replace("x * 3 + 1", "x * 5 + 1"));
    let out = dir.path().join("obj");
    let o = build_objects(&source, &profile, &out, &[]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(
        err.contains("does not match 1 function(s)") && err.contains("main::never"),
        "{err}"
    );
    assert!(err.contains("--profile-generate"), "{err}");
    let remarks = dir.path().join("r.json");
    let o = build_objects(
        &source,
        &profile,
        &out,
        &[
            "--profile-mismatch",
            "warn",
            &format!("--remarks={}", remarks.display()),
        ],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(
        err.contains("warning:") && err.contains("main::never"),
        "{err}"
    );
    assert!(profile_decisions(&remarks).contains(&("stale".into(), "main::never".into())));
}

/// Generic instances several modules define, edited since the profile:
/// each is named once in the error, however many modules define it (the
/// list once repeated them per module).
#[test]
fn stale_instances_are_named_once() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let util = |body: &str| {
        std::fs::write(
            d.join("util.pare"),
            format!("pub fn twice<T>(x: T) -> T {{ x + x{body} }}\npub fn thrice<T>(x: T) -> T {{ x + x + x{body} }}\n"),
        )
        .unwrap()
    };
    util("");
    std::fs::write(
        d.join("m2.pare"),
        "import util;\npub fn g(x: i64) -> i64 { util::twice<i64>(x) + util::thrice<i64>(x) }\n",
    )
    .unwrap();
    let source = write_program(
        d,
        "import util;\nimport m2;\nfn main() { print(util::twice<i64>(3)); print(util::thrice<i64>(3)); print(m2::g(4)); }\n",
    );
    let profile = d.join("p.prof");
    generated(&source, &profile);
    util(" + 1");
    let o = build_objects(&source, &profile, &d.join("obj"), &[]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(
        err.contains("does not match 2 function(s) of the program, changed since it was made: util::thrice<i64>, util::twice<i64>\n"),
        "{err}"
    );
}

/// Two instances of one generic function over types of one representation
/// compile to the same code, which the linker folds. The profile knows one
/// hot and the other lukewarm; the lukewarm one is treated as hot too (it
/// folds with it), so both still compile alike and fold.
const TWINS_PROGRAM: &str = "fn total<T>(xs: T, times: i64) -> i64 {
    let mut s = 0;
    for r in 0..times {
        for i in 0..len(xs) {
            s += (xs[i] as i64) * (r + 1);
        }
    }
    s
}

fn main() {
    let a = new [u8; 64];
    for i in 0..64 {
        a[i] = i as u8;
    }
    print(total<[u8]>(a, 5000));
    print(total<str>(\"abc\", 1));
}
";

/// The instructions of `function` in a `--emit asm` listing.
fn listing_of<'a>(asm: &'a str, function: &str) -> Vec<&'a str> {
    asm.lines()
        .skip_while(|l| *l != format!("{function}:"))
        .skip(1)
        .take_while(|l| l.starts_with(' ') && !l.trim().is_empty())
        .collect()
}

#[test]
fn a_function_that_folds_with_a_hot_one_is_hot_too() {
    let dir = tempfile::tempdir().unwrap();
    let source = write_program(dir.path(), TWINS_PROGRAM);
    let profile = dir.path().join("p.prof");
    generated(&source, &profile);
    let remarks = dir.path().join("r.json");
    let asm = dir.path().join("p.s");
    let remarks_flag = format!("--remarks={}", remarks.display());
    let o = build_emitting(&source, &profile, "asm", &asm, &[&remarks_flag]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let decisions = profile_decisions(&remarks);
    assert!(
        decisions.contains(&("hot".into(), "main::total<[u8]>".into())),
        "{decisions:?}"
    );
    let twin = remarks_of(&remarks)
        .into_iter()
        .find(|r| r["pass"] == "profile" && r["function"] == "main::total<str>")
        .expect("a profile remark for the other instance");
    assert_eq!(twin["decision"], "lukewarm", "{twin}");
    assert!(
        twin.to_string()
            .contains("folds with the hot `main::total<[u8]>`"),
        "{twin}"
    );
    let asm = std::fs::read_to_string(&asm).unwrap();
    let hot = listing_of(&asm, "main::total<[u8]>");
    assert!(!hot.is_empty(), "{asm}");
    assert_eq!(
        hot,
        listing_of(&asm, "main::total<str>"),
        "the two still fold"
    );
}

/// `parec run --profile-use`: the JIT build consults the profile as
/// `parec build` does — the program's output is the same, a function edited
/// since is an error naming it (or, with `warn`, a warning), and a file that
/// is not a profile is an error naming the file.
#[test]
fn run_uses_profiles_as_build_does() {
    let dir = tempfile::tempdir().unwrap();
    let source = write_program(dir.path(), LOOP_PROGRAM);
    let profile = dir.path().join("p.prof");
    let plain = run(parec().arg("run").arg(&source));
    assert!(plain.status.success(), "{}", text(&plain.stderr));
    generated(&source, &profile);
    let run_with = |extra: &[&str]| {
        run(parec()
            .arg("run")
            .arg(&source)
            .arg("--profile-use")
            .arg(&profile)
            .args(extra))
    };
    let o = run_with(&[]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), text(&plain.stdout));

    write_program(dir.path(), &LOOP_PROGRAM.replace("x * 3 + 1", "x * 5 + 1"));
    let o = run_with(&[]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(o.stdout.is_empty(), "nothing runs: {}", text(&o.stdout));
    assert!(
        text(&o.stderr).contains("main::never"),
        "{}",
        text(&o.stderr)
    );
    let o = run_with(&["--profile-mismatch", "warn"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("warning:"), "{}", text(&o.stderr));

    std::fs::write(&profile, "not a profile").unwrap();
    let o = run_with(&[]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(err.contains("p.prof") && !err.contains("panicked"), "{err}");
    let o = run(parec()
        .arg("run")
        .arg(&source)
        .arg("--profile-use")
        .arg(&profile)
        .arg("--profile-generate")
        .arg(dir.path().join("q.prof")));
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
}

/// Runs a build with the profile `bytes` and returns its stderr, checking
/// that it failed cleanly (status 1, no panic).
fn build_with_bad_profile(dir: &Path, bytes: &[u8]) -> String {
    let source = write_program(dir, LOOP_PROGRAM);
    let profile = dir.join("bad.prof");
    std::fs::write(&profile, bytes).unwrap();
    let o = build_objects(&source, &profile, &dir.join("obj"), &[]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.contains("bad.prof"), "the error names the file: {err}");
    err
}

#[test]
fn bad_profiles_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let source = write_program(dir.path(), LOOP_PROGRAM);
    let good = generated(&source, &dir.path().join("good.prof"));

    let err = build_with_bad_profile(dir.path(), &good[..good.len() - 5]);
    assert!(err.contains("truncated"), "{err}");
    let mut flipped = good.clone();
    flipped[good.len() / 2] ^= 0x10;
    let err = build_with_bad_profile(dir.path(), &flipped);
    assert!(err.contains("corrupt"), "{err}");
    let mut version = good.clone();
    version[8] = 99;
    let err = build_with_bad_profile(dir.path(), &version);
    assert!(err.contains("version 99"), "{err}");
    let err = build_with_bad_profile(dir.path(), LOOP_PROGRAM.as_bytes());
    assert!(err.contains("not a cgdata file"), "{err}");

    // A build's cgdata is no profile.
    let cgdata = dir.path().join("build.cgdata");
    let o = run(parec()
        .arg("build")
        .arg(&source)
        .arg("--cgdata-generate")
        .arg(&cgdata)
        .args(["--emit", "obj", "-o"])
        .arg(dir.path().join("obj")));
    assert!(o.status.success(), "{}", text(&o.stderr));
    let err = build_with_bad_profile(dir.path(), &std::fs::read(&cgdata).unwrap());
    assert!(err.contains("not a profile"), "{err}");
}

#[test]
fn generating_never_overwrites_what_is_not_a_profile() {
    let dir = tempfile::tempdir().unwrap();
    let source = write_program(dir.path(), LOOP_PROGRAM);
    let o = generate(&source, &source);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("refusing to overwrite"));
    let other = dir.path().join("notes.txt");
    std::fs::write(&other, "keep me").unwrap();
    let o = generate(&source, &other);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("refusing to overwrite"));
    assert_eq!(std::fs::read_to_string(&other).unwrap(), "keep me");
}

/// The profile section of `cgdata show`, line by line.
fn shown(profile: &Path) -> String {
    let o = run(parec().args(["cgdata", "show"]).arg(profile));
    assert!(o.status.success(), "{}", text(&o.stderr));
    text(&o.stdout)
}

fn merge(out: &Path, inputs: &[&Path], modules: bool) -> Vec<u8> {
    let mut cmd = parec();
    cmd.args(["cgdata", "merge"]);
    if modules {
        cmd.arg("--modules");
    }
    let o = run(cmd.arg(out).args(inputs));
    assert!(o.status.success(), "{}", text(&o.stderr));
    std::fs::read(out).unwrap()
}

#[test]
fn merging_profiles_sums_counts_in_any_order() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.prof");
    let b = dir.path().join("b.prof");
    let source = write_program(dir.path(), LOOP_PROGRAM);
    generated(&source, &a);
    generated(&bench("primes"), &b);
    let ab = merge(&dir.path().join("ab.prof"), &[&a, &b], false);
    let ba = merge(&dir.path().join("ba.prof"), &[&b, &a], false);
    assert_eq!(ab, ba);
    // With --modules every input counts, a repeated one too.
    merge(&dir.path().join("aa.prof"), &[&a, &a], true);
    let total = |profile: &Path| -> u64 {
        let show = shown(profile);
        let l = show.lines().find(|l| l.starts_with("profile:")).unwrap();
        l.split(", ")
            .nth(2)
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    // The runtime's functions are in both programs: their counts add up.
    assert_eq!(total(&dir.path().join("ab.prof")), total(&a) + total(&b));
    assert_eq!(total(&dir.path().join("aa.prof")), 2 * total(&a));
}

/// Runs an aarch64 executable under qemu.
fn qemu(exe: &Path) -> Output {
    Command::new("qemu-aarch64-static")
        .arg(exe)
        .output()
        .expect("qemu-aarch64-static is not installed: run scripts/test.sh")
}

#[test]
fn profiles_change_decisions_never_results() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["primes", "generic_zoo"] {
        let source = bench(name);
        let profile = dir.path().join(format!("{name}.prof"));
        generated(&source, &profile);
        let expected = std::fs::read(source.with_file_name("expected.out")).unwrap();
        for mode in ["optimistic", "conservative"] {
            let exe = dir.path().join(format!("{name}-{mode}"));
            let o = run(parec()
                .arg("build")
                .arg(&source)
                .arg("--profile-use")
                .arg(&profile)
                .args(["--profile-mode", mode, "-o"])
                .arg(&exe));
            assert!(o.status.success(), "{name}: {}", text(&o.stderr));
            let ran = qemu(&exe);
            assert!(ran.status.success(), "{name} {mode}");
            assert!(ran.stdout == expected, "{name} {mode}: output differs");
        }
    }
}
