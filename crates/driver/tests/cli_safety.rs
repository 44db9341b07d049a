//! The command line must not destroy or hang (issue 18, section 2; issue
//! 34): no output of any command over any of its inputs, output paths
//! checked before compiling, `-j` bounded, every write to a closed or full
//! stdout or stderr reported, every file read with a bound (`/dev/zero`, a
//! directory), plans checked, `cgdata merge` idempotent on equal inputs.
//! `PAREC_TEST_BIN=OLD_PAREC` runs them against another build (under
//! `ulimit -v`: an old parec reads `/dev/zero` until memory runs out).

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
                .args([
                    "build",
                    program,
                    "--target",
                    target,
                    "--runtime",
                    runtime,
                    "-o",
                ])
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

// Issue 34: the classes closed across every command — every output path
// against every input, every writer of stdout and stderr against a closed
// and a full stream, every file reader against `/dev/zero` and a
// directory. One fixture (a program and what the commands make of it)
// serves the three tables.

/// A program and the files the commands read: `main.pare` importing
/// `util.pare`, its executable `exe`, objects `objs/`, profile `prof`,
/// cgdata `a.cg`, plan `program.plan`, a trapping `trap.pare`, and what
/// cannot be read: `zero.pare`, `zero.clif` (links to `/dev/zero`),
/// `dir.pare`, `dir.clif` and `empty` (directories).
struct Fixture {
    dir: PathBuf,
}

static FIXTURE: std::sync::OnceLock<Fixture> = std::sync::OnceLock::new();

extern "C" fn remove_fixture() {
    if let Some(f) = FIXTURE.get() {
        let _ = std::fs::remove_dir_all(&f.dir);
    }
}

/// The fixture's directory, made once per test binary (removed at exit).
fn fixture() -> &'static Path {
    &FIXTURE
        .get_or_init(|| {
            let dir = tempfile::tempdir().unwrap().keep();
            // SAFETY: registers a plain function that only removes files.
            unsafe { libc::atexit(remove_fixture) };
            let d = dir.as_path();
            std::fs::write(d.join("main.pare"), MAIN).unwrap();
            std::fs::write(d.join("util.pare"), UTIL).unwrap();
            std::fs::write(d.join("trap.pare"), "fn main() { print(1 / (1 - 1)); }\n").unwrap();
            for args in [
                "build main.pare -o exe --cgdata-generate a.cg",
                "build main.pare --emit obj -o objs",
                "run main.pare --profile-generate prof",
                "plan main.pare -o program.plan",
            ] {
                let o = run(parec().current_dir(d).args(args.split_whitespace()));
                assert!(o.status.success(), "{args}: {}", stderr(&o));
            }
            for name in ["zero.pare", "zero.clif"] {
                std::os::unix::fs::symlink("/dev/zero", d.join(name)).unwrap();
            }
            for name in ["dir.pare", "dir.clif", "empty"] {
                std::fs::create_dir(d.join(name)).unwrap();
            }
            Fixture { dir }
        })
        .dir
}

/// The bytes of every file of the fixture, by name (directories: their
/// files), to show that a command changed none.
fn fixture_contents(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    for entry in walk(dir) {
        if entry.is_file() && !entry.starts_with("/dev") {
            files.push((entry.clone(), std::fs::read(&entry).unwrap()));
        }
    }
    files.sort();
    files
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_symlink() {
            continue;
        }
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// Every file a command writes checked against every file it reads
/// (`crate::outputs`): each row names an input, or another output, as an
/// output, and is refused before anything is written.
#[test]
fn no_output_of_any_command_may_be_an_input() {
    let d = fixture();
    let before = fixture_contents(d);
    let refuse = "refusing to overwrite it";
    let same = "are the same file";
    let compile = "compile main.pare --module main --plan program.plan";
    let ninja = "ninja main.pare -o b.ninja";
    let rows: Vec<(String, &str)> = [
        // build --remarks=FILE, against every input and the other outputs.
        ("build main.pare -o x --remarks=main.pare", refuse),
        ("build main.pare -o x --remarks=util.pare", refuse),
        (
            "build main.pare -o x --profile-use prof --remarks=prof",
            refuse,
        ),
        (
            "build main.pare -o x --cgdata-use a.cg --remarks=./a.cg",
            refuse,
        ),
        ("build main.pare -o w --remarks=w", same),
        ("build main.pare -o x --cgdata-generate w --remarks=w", same),
        (
            "build main.pare -o x --profile-use prof --cgdata-generate prof",
            refuse,
        ),
        // run --profile-generate.
        ("run main.pare --profile-generate util.pare", refuse),
        ("run main.pare --profile-generate ./main.pare", refuse),
        // plan, compile, link.
        ("plan main.pare -o util.pare", refuse),
        ("plan main.pare -o prof --profile-use prof", refuse),
        (&format!("{compile} -o program.plan"), refuse),
        (&format!("{compile} -o util.pare"), refuse),
        (&format!("{compile} --cgdata-generate main.pare"), refuse),
        (&format!("{compile} -o x.o --cgdata-generate x.o"), same),
        (
            "link objs/main.o objs/util.o objs/pare_runtime.o -o objs/util.o",
            refuse,
        ),
        // ninja: the build file, the executable and what the build writes.
        ("ninja main.pare -o util.pare", refuse),
        (&format!("{ninja} --exe main.pare"), refuse),
        (&format!("{ninja} --exe util.pare"), refuse),
        (&format!("{ninja} --exe prof --profile-use prof"), refuse),
        (&format!("{ninja} --exe b.ninja"), same),
        (&format!("{ninja} --exe program.plan"), same),
        (&format!("{ninja} --exe obj/util.o"), same),
        (&format!("{ninja} --exe .ninja_log"), same),
        (&format!("{ninja} --exe obj"), "is the directory of"),
        (&format!("{ninja} --exe exe --parec exe"), refuse),
        ("ninja main.pare -o objs/b.ninja --exe ../main.pare", refuse),
        // size --html: the executable, an object of a directory, --compare's.
        ("size exe --html exe", refuse),
        ("size objs --html objs/util.o", refuse),
        ("size objs --compare exe --html ./exe", refuse),
        // cgdata merge.
        ("cgdata merge a.cg a.cg", refuse),
    ]
    .iter()
    .map(|(args, expected)| (args.to_string(), *expected))
    .collect();
    let mut problems = Vec::new();
    for (args, expected) in &rows {
        let o = run(parec().current_dir(d).args(args.split_whitespace()));
        if o.status.code() != Some(1) || !stderr(&o).contains(expected) {
            problems.push(format!("{args:?}: {:?} {}", o.status.code(), stderr(&o)));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(fixture_contents(d) == before, "an input changed");
}

/// How a test connects a standard stream of the command.
#[derive(Clone, Copy, Debug)]
enum Stream {
    /// Closed (`>&-`).
    Closed,
    /// `/dev/full`: every write fails with "No space left on device".
    Full,
}

/// Runs `cmd` with its descriptor `fd` (1 or 2) connected as `stream`
/// and the other one captured.
fn run_with(cmd: &mut Command, fd: i32, stream: Stream) -> Output {
    use std::os::unix::process::CommandExt;
    let full = || {
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap()
    };
    let (out, err) = match (fd, stream) {
        (1, Stream::Full) => (Stdio::from(full()), Stdio::piped()),
        (2, Stream::Full) => (Stdio::piped(), Stdio::from(full())),
        _ => (Stdio::piped(), Stdio::piped()),
    };
    cmd.stdin(Stdio::null()).stdout(out).stderr(err);
    if let Stream::Closed = stream {
        // SAFETY: `close` is async-signal-safe; it runs in the child
        // between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                libc::close(fd);
                Ok(())
            });
        }
    }
    let child = cmd.spawn().expect("cannot start a process");
    finish_within(child, Duration::from_secs(120), "a stream row")
}

/// Every command that writes stdout, with stdout closed and full: parec's
/// own output is an error (status 1), a program's traps (101), never lost
/// output with status 0, never a panic.
#[test]
fn every_writer_of_stdout_reports_a_closed_or_full_stream() {
    let d = fixture();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let hello = data.join("hello.clif");
    let arith = data.join("arith.clif");
    let own = "error: cannot write to stdout: ";
    let trap = "trap: write error on stdout\n";
    let program = "error: cannot write the program's output: ";
    let rows: Vec<(Vec<&std::ffi::OsStr>, i32, &str)> = vec![
        (args(&["build", "main.pare", "--emit", "clif"]), 1, own),
        (args(&["build", "main.pare", "--emit", "asm"]), 1, own),
        ([args(&["opt"]), vec![arith.as_os_str()]].concat(), 1, own),
        (args(&["size", "exe"]), 1, own),
        (args(&["size", "exe", "--json"]), 1, own),
        (args(&["size", "exe", "--compare", "exe"]), 1, own),
        (args(&["size", "objs", "--html", "page.html"]), 1, own),
        (args(&["cgdata", "show", "a.cg"]), 1, own),
        (args(&["--help"]), 1, own),
        (args(&["--version"]), 1, own),
        (args(&["build", "--help"]), 1, own),
        (args(&["interp", "main.pare"]), 101, trap),
        (args(&["run", "main.pare"]), 101, trap),
        (
            [args(&["run"]), vec![hello.as_os_str()]].concat(),
            1,
            program,
        ),
    ];
    let mut problems = Vec::new();
    for stream in [Stream::Closed, Stream::Full] {
        for (args, status, message) in &rows {
            let o = run_with(parec().current_dir(d).args(args), 1, stream);
            if o.status.code() != Some(*status) || !stderr(&o).starts_with(message) {
                problems.push(format!(
                    "{args:?} {stream:?}: {:?} {}",
                    o.status.code(),
                    stderr(&o)
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

fn args<'a>(words: &[&'a str]) -> Vec<&'a std::ffi::OsStr> {
    words.iter().map(|w| std::ffi::OsStr::new(*w)).collect()
}

/// Every command that writes stderr, with stderr closed and full: what
/// parec meant to say there is lost, so a success exits with status 1
/// (an error or a trap keeps its status), never a panic.
#[test]
fn every_writer_of_stderr_reports_a_closed_or_full_stream() {
    let d = fixture();
    let arith = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/arith.clif");
    std::fs::write(d.join("bad.cg"), "not cgdata").ok();
    let rows: Vec<(Vec<&std::ffi::OsStr>, i32)> = vec![
        // Successes that print on stderr.
        (args(&["build", "main.pare", "-o", "x1", "--remarks"]), 1),
        (
            args(&["build", "main.pare", "-o", "x2", "--outline-stats"]),
            1,
        ),
        (args(&["build", "main.pare", "-o", "x3", "--two-rounds"]), 1),
        (
            args(&[
                "build",
                "main.pare",
                "-o",
                "x4",
                "--cgdata-use",
                "bad.cg",
                "--cgdata-ignore-errors",
            ]),
            1,
        ),
        (
            [args(&["opt", "--run"]), vec![arith.as_os_str()]].concat(),
            1,
        ),
        (
            [args(&["opt", "--stats"]), vec![arith.as_os_str()]].concat(),
            1,
        ),
        // Failures and traps keep their status.
        (args(&["build", "missing.pare", "-o", "x5"]), 1),
        (args(&["build", "main.pare"]), 1),
        (args(&["build"]), 2),
        (args(&["interp", "trap.pare"]), 101),
        (args(&["run", "trap.pare"]), 101),
        // Nothing on stderr: nothing lost.
        (args(&["interp", "main.pare"]), 0),
        (args(&["run", "main.pare"]), 0),
    ];
    let mut problems = Vec::new();
    for stream in [Stream::Closed, Stream::Full] {
        for (args, status) in &rows {
            let o = run_with(parec().current_dir(d).args(args), 2, stream);
            if o.status.code() != Some(*status) {
                problems.push(format!("{args:?} {stream:?}: {:?}", o.status.code()));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Every file reader against a device without end (`/dev/zero`) and a
/// directory: a clear error (status 1) naming the file, promptly.
#[test]
fn every_file_reader_refuses_an_endless_device_and_a_directory() {
    let d = fixture();
    let compile = "compile main.pare --module main -o y.o";
    let mut problems = Vec::new();
    for (bad, source) in [("/dev/zero", "zero"), ("empty", "dir")] {
        let rows: Vec<String> = [
            // Sources, Pare and CLIF, in every command that reads them.
            format!("build {source}.pare -o y"),
            format!("run {source}.pare"),
            format!("interp {source}.pare"),
            format!("plan {source}.pare -o y.plan"),
            format!("compile {source}.pare --module {source} --plan program.plan -o y.o"),
            format!("ninja {source}.pare -o y.ninja"),
            format!("build {source}.clif -o y"),
            format!("run {source}.clif"),
            format!("opt {source}.clif"),
            // Profiles, cgdata, plans, objects and executables.
            format!("build main.pare -o y --profile-use {bad}"),
            format!("run main.pare --profile-use {bad}"),
            format!("plan main.pare -o y.plan --profile-use {bad}"),
            format!("ninja main.pare -o y.ninja --profile-use {bad}"),
            format!("build main.pare -o y --cgdata-use {bad}"),
            format!("{compile} --plan {bad}"),
            format!("{compile} --plan program.plan --cgdata-use {bad}"),
            format!("{compile} --plan program.plan --profile-use {bad}"),
            format!("cgdata show {bad}"),
            format!("cgdata merge y.cg {bad}"),
            format!("size {bad}"),
            format!("size exe --compare {bad}"),
            format!("link {bad} -o y"),
        ]
        .into();
        for args in &rows {
            let args: Vec<&str> = args.split_whitespace().collect();
            let mut cmd = parec();
            cmd.current_dir(d)
                .args(&args)
                .stdout(Stdio::null())
                .stderr(Stdio::piped());
            let child = cmd.spawn().unwrap();
            let o = finish_within(child, Duration::from_secs(30), &format!("{args:?}"));
            let err = stderr(&o);
            let named = err.contains(source) || err.contains(bad);
            // The device is refused for what it is, not after reading
            // until memory runs out (the link reads no object itself).
            let why = source == "dir" || args[0] == "link" || err.contains("not a regular file");
            if o.status.code() != Some(1)
                || !named
                || !why
                || err.contains("internal compiler error")
            {
                problems.push(format!("{args:?}: {:?} {err}", o.status.code()));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A plan changed by one byte is refused (a changed byte near its end once
/// decoded, and changed the objects): the file ends with a checksum.
#[test]
fn a_changed_plan_is_refused() {
    let d = fixture();
    let bytes = std::fs::read(d.join("program.plan")).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let changed = tmp.path().join("changed.plan");
    // Bytes of the last records (the code model's choice, the profile's
    // classes), with and without the checksum's eight at the end.
    for back in [9, 17] {
        let mut bytes = bytes.clone();
        let at = bytes.len() - back;
        bytes[at] ^= 0x01;
        std::fs::write(&changed, &bytes).unwrap();
        let o = run(parec()
            .current_dir(d)
            .args(["compile", "main.pare", "--module", "main", "--plan"])
            .arg(&changed)
            .arg("-o")
            .arg(tmp.path().join("m.o")));
        assert_eq!(o.status.code(), Some(1), "byte {at}: {}", stderr(&o));
        assert!(stderr(&o).contains("checksum"), "{}", stderr(&o));
    }
}
