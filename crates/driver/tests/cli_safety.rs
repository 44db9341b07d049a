//! The command line must not destroy or hang (issue 18, section 2): no
//! output over an input, output paths checked before compiling, `-j`
//! bounded, write errors on stdout reported, `cgdata merge` idempotent on
//! equal inputs.

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

mod support;
use support::{parec, run};

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

const MAIN: &str = "import util;\nfn main() { print(util::twice(21)); }\n";
const UTIL: &str = "pub fn twice(x: i64) -> i64 { x * 2 }\n";

/// A directory holding `main.pare`, which imports `util.pare`.
fn program() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let main = dir.path().join("main.pare");
    let util = dir.path().join("util.pare");
    std::fs::write(&main, MAIN).unwrap();
    std::fs::write(&util, UTIL).unwrap();
    (dir, main, util)
}

/// Runs `parec ARGS` in `dir`; it must fail with status 1 and a message
/// containing `expected`.
fn refused(dir: &Path, args: &[&str], expected: &str) {
    let o = run(parec().current_dir(dir).args(args));
    assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
    assert!(stderr(&o).contains(expected), "{args:?}: {}", stderr(&o));
}

#[test]
fn no_output_may_be_an_input() {
    let (dir, main, util) = program();
    let d = dir.path();
    std::os::unix::fs::symlink("main.pare", d.join("alias.pare")).unwrap();
    std::fs::write(d.join("old.cg"), "").unwrap();
    let refuse = "refusing to overwrite it";
    for args in [
        &["build", "main.pare", "-o", "main.pare"][..],
        &["build", "main.pare", "-o", "./main.pare", "--emit", "asm"],
        &["build", "main.pare", "-o", "alias.pare"],
        // Imports are found by the front end: refused after it, before
        // anything is written.
        &["build", "main.pare", "-o", "util.pare"],
        &["build", "main.pare", "-o", "util.pare", "--emit", "clif"],
        &[
            "build",
            "main.pare",
            "-o",
            "x",
            "--cgdata-generate",
            "util.pare",
        ],
        &[
            "build",
            "main.pare",
            "-o",
            "x",
            "--two-rounds",
            "--cgdata-generate",
            "./main.pare",
        ],
        &[
            "build",
            "main.pare",
            "-o",
            "old.cg",
            "--cgdata-use",
            "old.cg",
        ],
    ] {
        refused(d, args, refuse);
    }
    refused(
        d,
        &["build", "main.pare", "-o", "x", "--cgdata-generate", "./x"],
        "are the same file",
    );
    assert_eq!(std::fs::read_to_string(&main).unwrap(), MAIN);
    assert_eq!(std::fs::read_to_string(&util).unwrap(), UTIL);
}

#[test]
fn output_paths_are_checked_before_compiling() {
    let (dir, _, _) = program();
    let d = dir.path();
    // The source does not even check: the output is refused first.
    std::fs::write(d.join("bad.pare"), "fn main() { undefined(); }\n").unwrap();
    refused(
        d,
        &["build", "bad.pare", "-o", "no/such/dir/x"],
        "cannot write -o `no/such/dir/x`: `no/such/dir` does not exist",
    );
    std::fs::create_dir(d.join("out")).unwrap();
    refused(
        d,
        &["build", "bad.pare", "-o", "out"],
        "-o `out` is a directory",
    );
    refused(
        d,
        &[
            "build",
            "bad.pare",
            "-o",
            "x",
            "--cgdata-generate",
            "none/x.cg",
        ],
        "`none` does not exist",
    );
    std::fs::write(d.join("file"), "").unwrap();
    refused(
        d,
        &["build", "bad.pare", "--emit", "obj", "-o", "file"],
        "exists and is not a directory",
    );
    // An object directory is created, with its parents.
    let o =
        run(parec()
            .current_dir(d)
            .args(["build", "main.pare", "--emit", "obj", "-o", "new/objs"]));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(d.join("new/objs/main.o").is_file());
}

#[test]
fn absurd_job_counts_are_bounded() {
    let (dir, _, _) = program();
    let d = dir.path();
    let mut exes = Vec::new();
    for jobs in ["1", "100000"] {
        let exe = d.join(format!("j{jobs}"));
        let mut cmd = parec();
        cmd.current_dir(d)
            .args(["build", "main.pare", "-j", jobs, "-o"])
            .arg(&exe)
            .stderr(Stdio::piped());
        let child = cmd.spawn().unwrap();
        let o = finish_within(child, Duration::from_secs(120), &format!("-j {jobs}"));
        assert!(o.status.success(), "-j {jobs}: {}", stderr(&o));
        assert!(!stderr(&o).contains("stack guard"), "{}", stderr(&o));
        exes.push(std::fs::read(&exe).unwrap());
    }
    assert_eq!(exes[0], exes[1], "the output depends on -j");
}

/// Waits for `child`, killing it and failing the test after `limit`.
fn finish_within(mut child: std::process::Child, limit: Duration, what: &str) -> Output {
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// Runs `cmd` with stdout on `/dev/full`.
fn to_full_device(cmd: &mut Command) -> Output {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full");
    cmd.stdout(full).output().expect("cannot start a process")
}

/// A program's outcome with stdout on `/dev/full`: status and stderr.
fn outcome_on_full_device(cmd: &mut Command) -> (Option<i32>, String) {
    let o = to_full_device(cmd);
    (o.status.code(), stderr(&o))
}

#[test]
fn write_errors_on_stdout_trap_in_every_executor() {
    let (dir, _, _) = program();
    let d = dir.path();
    std::fs::write(
        d.join("many.pare"),
        "fn main() { let mut i = 0; while i < 100000 { print(i); i = i + 1; } }\n",
    )
    .unwrap();
    std::fs::write(d.join("exits.pare"), "fn main() { print(5); exit(3); }\n").unwrap();
    let trap = (Some(101), "trap: write error on stdout\n".to_string());
    for program in ["main.pare", "many.pare", "exits.pare"] {
        for command in ["run", "interp"] {
            let got = outcome_on_full_device(parec().current_dir(d).args([command, program]));
            assert_eq!(got, trap, "parec {command} {program}");
        }
        // Freestanding executables of both targets, and one on the C library.
        for (target, emulator, runtime) in [
            ("aarch64", Some("qemu-aarch64-static"), "auto"),
            ("x86_64", None, "auto"),
            ("x86_64", None, "libc"),
        ] {
            let exe = d.join(format!("{program}.{target}.{runtime}"));
            let o = run(parec()
                .current_dir(d)
                .args(["build", program, "--target", target, "--runtime", runtime, "-o"])
                .arg(&exe));
            assert!(o.status.success(), "{}", stderr(&o));
            let mut cmd = match emulator {
                Some(e) => {
                    let mut c = Command::new(e);
                    c.arg(&exe);
                    c
                }
                None => Command::new(&exe),
            };
            assert_eq!(
                outcome_on_full_device(&mut cmd),
                trap,
                "{program} for {target}, runtime {runtime}"
            );
        }
    }
    // Without the full device, `exit(3)` is status 3.
    let o = run(parec().current_dir(d).args(["run", "exits.pare"]));
    assert_eq!(o.status.code(), Some(3));
}

#[test]
fn a_closed_pipe_ends_every_executor_alike() {
    // A compiled program writing to a closed pipe is killed by SIGPIPE;
    // `parec run` and `parec interp` let it be killed the same way.
    let (dir, _, _) = program();
    let d = dir.path();
    std::fs::write(
        d.join("endless.pare"),
        "fn main() { while true { print(1); } }\n",
    )
    .unwrap();
    let exe = d.join("endless");
    let o = run(parec()
        .current_dir(d)
        .args(["build", "endless.pare", "-o"])
        .arg(&exe));
    assert!(o.status.success(), "{}", stderr(&o));
    let mut qemu = Command::new("qemu-aarch64-static");
    qemu.arg(&exe);
    let mut jit = parec();
    jit.current_dir(d).args(["run", "endless.pare"]);
    let mut interp = parec();
    interp.current_dir(d).args(["interp", "endless.pare"]);
    for (name, cmd) in [
        ("executable", &mut qemu),
        ("run", &mut jit),
        ("interp", &mut interp),
    ] {
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut out = child.stdout.take().unwrap();
        let mut first = [0u8; 2];
        std::io::Read::read_exact(&mut out, &mut first).unwrap();
        drop(out);
        let status = finish_within(child, Duration::from_secs(60), name).status;
        assert_eq!(status.signal(), Some(libc_sigpipe()), "{name}: {status:?}");
    }
}

/// SIGPIPE's number on Linux.
fn libc_sigpipe() -> i32 {
    13
}

#[test]
fn parec_reports_its_own_write_errors() {
    let (dir, _, _) = program();
    let d = dir.path();
    let o = to_full_device(
        parec()
            .current_dir(d)
            .args(["build", "main.pare", "--emit", "clif"]),
    );
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        "error: cannot write to stdout: No space left on device\n"
    );
    let o = run(parec().current_dir(d).args([
        "build",
        "main.pare",
        "-o",
        "exe",
        "--cgdata-generate",
        "a.cg",
    ]));
    assert!(o.status.success(), "{}", stderr(&o));
    let o = to_full_device(parec().current_dir(d).args(["cgdata", "show", "a.cg"]));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("cannot write to stdout"),
        "{}",
        stderr(&o)
    );
    // A `.clif` program has no Pare runtime: the JIT's flush after `main`
    // reports the lost output.
    let hello = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/hello.clif");
    let o = to_full_device(parec().arg("run").arg(&hello));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(
        stderr(&o),
        "error: cannot write the program's output: No space left on device\n"
    );
    let clif = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/arith.clif");
    let o = to_full_device(parec().arg("opt").arg(&clif));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("cannot write to stdout"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn cgdata_merge_counts_equal_inputs_once_and_keeps_its_inputs() {
    let (dir, _, _) = program();
    let d = dir.path();
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let sources: Vec<PathBuf> = ["hashing.pare", "life.pare", "bst.pare"]
        .iter()
        .map(|f| examples.join(f))
        .collect();
    let o = run(parec().current_dir(d).arg("build").args(&sources).args([
        "-o",
        "exe",
        "--cgdata-generate",
        "a.cg",
    ]));
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::copy(d.join("a.cg"), d.join("copy.cg")).unwrap();
    let show = |file: &str| {
        let o = run(parec().current_dir(d).args(["cgdata", "show", file]));
        assert!(o.status.success(), "{}", stderr(&o));
        String::from_utf8(o.stdout).unwrap()
    };
    let original = show("a.cg");
    assert!(original.contains("outline:"), "{original}");
    for inputs in [&["a.cg", "a.cg"][..], &["a.cg", "copy.cg", "./a.cg"]] {
        let o = run(parec()
            .current_dir(d)
            .args(["cgdata", "merge", "m.cg"])
            .args(inputs));
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(show("m.cg"), original, "merge {inputs:?}");
        assert_eq!(
            std::fs::read(d.join("m.cg")).unwrap(),
            std::fs::read(d.join("a.cg")).unwrap()
        );
    }
    refused(
        d,
        &["cgdata", "merge", "a.cg", "copy.cg", "a.cg"],
        "refusing to overwrite it",
    );
}
