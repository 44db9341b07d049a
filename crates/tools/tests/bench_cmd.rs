//! End to end test of `parec bench` on two small corpus programs: the table's
//! rows and columns, positive size ratios, the file bytes beside the clang +
//! musl twins (checked against a `parec build` and a twin built here), and
//! the JSON report.

use std::path::{Path, PathBuf};
use std::process::Command;

use parec::pipeline::Pass;
use parec_tools::bench::{musl, text_size, STRIP, STRIP_FLAGS};

/// Two small, quick corpus programs.
const PROGRAMS: [&str; 2] = ["checksum", "matrix"];

/// The configuration names, in column order.
fn configs() -> Vec<String> {
    let mut names = vec![
        "Cranelift".to_string(),
        "-O2".to_string(),
        "-Os".to_string(),
    ];
    names.extend(Pass::ALL.iter().map(|p| p.name().to_string()));
    names.push("-Oz".into());
    names.push("-Oz 2 rounds".into());
    names.push("-Oz lto".into());
    names.push("-Oz 2 rounds lto".into());
    names.push("-Oz 2 rounds profile".into());
    names.push("-Os profile".into());
    names.push("clang -Oz".into());
    names.push("clang -Oz musl".into());
    names
}

fn cells(line: &str) -> Vec<String> {
    line.trim()
        .trim_matches('|')
        .split('|')
        .map(|c| c.trim().to_string())
        .collect()
}

#[test]
fn bench_quick_on_two_programs() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench");
    let dir = tempfile::tempdir().unwrap();
    let json_path = dir.path().join("bench.json");
    let output = Command::new(env!("CARGO_BIN_EXE_parec-tools"))
        .arg("bench")
        .arg("--quick")
        .arg("--filter")
        .arg(PROGRAMS.join(","))
        .arg("--dir")
        .arg(&corpus)
        .arg("--json")
        .arg(&json_path)
        .output()
        .expect("cannot start parec-tools");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "parec bench failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );

    // The table: a header, a rule, one row per program in name order, geomean.
    let lines: Vec<&str> = stdout.lines().take_while(|l| l.starts_with('|')).collect();
    let configs = configs();
    let header = cells(lines[0]);
    let mut expected_header = vec!["program".to_string()];
    for config in &configs {
        for column in ["bytes", "vs Cranelift", "vs clang", "compile ms", "run ms"] {
            expected_header.push(format!("{config} {column}"));
        }
    }
    assert_eq!(header, expected_header);
    let rows: Vec<Vec<String>> = lines[2..].iter().map(|l| cells(l)).collect();
    let names: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(names, ["checksum", "matrix", "geomean"]);
    for row in &rows {
        assert_eq!(row.len(), expected_header.len(), "{row:?}");
        for (c, config) in configs.iter().enumerate() {
            let figure = |k: usize| -> f64 {
                row[1 + 5 * c + k]
                    .parse()
                    .unwrap_or_else(|_| panic!("{config} column {k} of {row:?}"))
            };
            assert!(figure(4) > 0.0, "run time in {row:?}");
            if config == "clang -Oz musl" {
                // zig compiles and links in one process: no compile time;
                // no code bytes either (module doc of `bench`).
                assert_eq!(
                    row[1 + 5 * c..1 + 5 * c + 4],
                    ["-", "-", "-", "-"],
                    "{row:?}"
                );
                continue;
            }
            assert!(figure(0) > 0.0, "bytes of {config} in {row:?}");
            assert!(figure(1) > 0.0 && figure(2) > 0.0, "ratios in {row:?}");
            assert!(figure(3) >= 0.0, "compile time in {row:?}");
        }
        // Each configuration is its own baseline.
        assert_eq!(row[2], "1.000");
        assert_eq!(row[1 + 5 * (configs.len() - 2) + 2], "1.000");
    }

    // Then each parec configuration against the targets: `-Oz 2 rounds`
    // keeps all of its own byte reduction, `-O2` runs at its own speed.
    let target_rows: Vec<Vec<String>> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("Against the targets"))
        .take_while(|l| !l.starts_with("File bytes"))
        .filter(|l| l.starts_with("| ") && !l.starts_with("| configuration"))
        .map(cells)
        .collect();
    let targeted: Vec<&String> = target_rows.iter().map(|r| &r[0]).collect();
    let expected: Vec<&String> = configs[1..configs.len() - 2].iter().collect();
    assert_eq!(targeted, expected, "{stdout}");
    let row = |name: &str| target_rows.iter().find(|r| r[0] == name).unwrap();
    assert_eq!(row("-Oz 2 rounds")[1], "100.0%");
    assert_eq!(row("-O2")[2], "1.000");
    assert_eq!(row("-O2")[6], "1.00");
    assert!(row("-Os")[1].ends_with('%'), "{:?}", row("-Os"));
    check_file_table(&stdout, &configs, &corpus);
    check_runtime_table(&stdout, &rows, &configs, &corpus);

    // Then the compile time of each parec configuration by stage; every
    // build has a front end and Cranelift, and -Oz its passes.
    let stage_rows: Vec<Vec<String>> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("Compile time by stage"))
        // The role table follows.
        .take_while(|l| !l.starts_with("| role"))
        .filter(|l| l.starts_with("| ") && !l.starts_with("| configuration"))
        .map(cells)
        .collect();
    let parec_configs: Vec<&String> = configs
        .iter()
        .filter(|c| !c.starts_with("clang -Oz"))
        .collect();
    let named: Vec<&String> = stage_rows.iter().map(|r| &r[0]).collect();
    assert_eq!(named, parec_configs, "{stdout}");
    for row in &stage_rows {
        assert!(row[1].parse::<f64>().unwrap() > 0.0, "{row:?}");
        for stage in ["frontend", "cranelift", "object"] {
            assert!(row[2].contains(&format!("{stage} ")), "{stage} in {row:?}");
        }
    }
    let oz = stage_rows.iter().find(|r| r[0] == "-Oz").unwrap();
    for stage in ["inline", "gvn", "merge", "fmerge", "peephole", "outline"] {
        assert!(oz[2].contains(&format!("{stage} ")), "{stage} in {oz:?}");
    }

    // The JSON holds the same programs and configurations, without errors.
    let text = std::fs::read_to_string(&json_path).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).expect("the JSON parses");
    let json_configs: Vec<&str> = json["configs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert_eq!(json_configs, configs);
    let programs = json["programs"].as_array().unwrap();
    assert_eq!(programs.len(), 2);
    for (program, name) in programs.iter().zip(PROGRAMS) {
        assert_eq!(program["name"], name);
        let results = program["results"].as_array().unwrap();
        assert_eq!(results.len(), configs.len());
        for (result, config) in results.iter().zip(&configs) {
            assert!(result["error"].is_null(), "{result}");
            if config != "clang -Oz musl" {
                assert!(result["bytes"].as_f64().unwrap() > 0.0);
                assert!(result["ratio_vs_cranelift"].as_f64().unwrap() > 0.0);
                assert!(result["ratio_vs_clang"].as_f64().unwrap() > 0.0);
            }
            let stripped = result["stripped_file_bytes"].as_f64().unwrap();
            assert!(stripped > 0.0 && stripped <= result["file_bytes"].as_f64().unwrap());
            assert!(result["ratio_stripped_vs_musl"].as_f64().unwrap() > 0.0);
        }
    }
    assert!(
        json["musl"]
            .as_str()
            .unwrap()
            .contains("aarch64-linux-musl"),
        "{}",
        json["musl"]
    );
    assert_eq!(json["geomean"].as_array().unwrap().len(), configs.len());
    let oz = &json["geomean"][configs.iter().position(|c| c == "-Oz").unwrap()];
    assert!(oz["compile_ms_total"].as_f64().unwrap() > 0.0);
    assert!(oz["reduction_kept"].as_f64().unwrap() > 0.0);
    assert!(oz["compile_vs_o2"].as_f64().unwrap() > 0.0);
    let o2 = configs.iter().position(|c| c == "-O2").unwrap();
    assert_eq!(programs[0]["results"][o2]["run_vs_o2"].as_f64(), Some(1.0));
    assert!(oz["compile_ms_by_stage"]["gvn"].as_f64().unwrap() >= 0.0);
}

/// The file-bytes table: per configuration the executable, a stripped copy
/// and that over the musl twin, for each program, the geometric mean and
/// the largest. The figures are what a user gets: checksum's `-Oz` equal
/// `parec build -Oz` and its stripped copy, its musl twin the twin built
/// here with the documented command.
/// The lines of the markdown table after the line starting with `title`
/// (and the blank line that follows it).
fn table_after<'a>(stdout: &'a str, title: &str) -> Vec<&'a str> {
    stdout
        .lines()
        .skip_while(|l| !l.starts_with(title))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .collect()
}

fn check_file_table(stdout: &str, configs: &[String], corpus: &Path) {
    let lines = table_after(stdout, "File bytes:");
    let header = cells(lines[0]);
    let mut expected = vec!["program".to_string()];
    for config in configs {
        for column in ["file", "stripped", "vs musl"] {
            expected.push(format!("{config} {column}"));
        }
    }
    assert_eq!(header, expected, "{stdout}");
    let rows: Vec<Vec<String>> = lines[2..].iter().map(|l| cells(l)).collect();
    let names: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(names, ["checksum", "matrix", "geomean", "largest"]);
    let musl = configs.len() - 1;
    let figure = |row: &[String], c: usize, k: usize| -> f64 {
        row[1 + 3 * c + k]
            .parse()
            .unwrap_or_else(|_| panic!("{} column {k} of {row:?}", configs[c]))
    };
    for row in &rows {
        for (c, config) in configs.iter().enumerate() {
            let (file, stripped, vs_musl) =
                (figure(row, c, 0), figure(row, c, 1), figure(row, c, 2));
            assert!(stripped > 0.0 && stripped <= file, "{config} in {row:?}");
            if row[0] != "largest" {
                let expected = stripped / figure(row, musl, 1);
                assert!((vs_musl - expected).abs() < 0.001, "{config} in {row:?}");
            }
        }
        // The twins are built stripped: their own anchor.
        assert_eq!(figure(row, musl, 0), figure(row, musl, 1), "{row:?}");
        assert_eq!(row[1 + 3 * musl + 2], "1.000");
    }

    let dir = tempfile::tempdir().unwrap();
    let checksum = corpus.join("checksum");
    let twin = dir.path().join("twin");
    let toolchain = musl::Toolchain::find().unwrap_or_else(|e| panic!("{e}"));
    toolchain
        .build(&checksum.join("checksum.c"), &twin)
        .unwrap();
    assert_eq!(figure(&rows[0], musl, 0), file_len(&twin));

    let exe = dir.path().join("checksum");
    build_oz(&checksum.join("main.pare"), &exe);
    let stripped = dir.path().join("checksum.stripped");
    let status = Command::new(STRIP)
        .args(STRIP_FLAGS)
        .arg("-o")
        .arg(&stripped)
        .arg(&exe)
        .status()
        .unwrap_or_else(|e| panic!("cannot run {STRIP}: {e} (run scripts/test.sh)"));
    assert!(status.success());
    let oz = configs.iter().position(|c| c == "-Oz").unwrap();
    assert_eq!(figure(&rows[0], oz, 0), file_len(&exe));
    assert_eq!(figure(&rows[0], oz, 1), file_len(&stripped));
}

/// The runtime table: every parec configuration's runtime code, for each
/// program, as a geometric mean and for the empty program. The figures are what a user gets:
/// checksum's `-Oz` runtime code is what `parec size` attributes to the
/// kind `runtime` in `parec build -Oz`'s executable, and its own-code
/// bytes in the main table (`rows`) are that executable's `.text` without
/// it, minus the same of the empty program's: the runtime functions
/// checksum reaches beyond the empty program's are not its own code.
fn check_runtime_table(stdout: &str, rows: &[Vec<String>], configs: &[String], corpus: &Path) {
    let lines = table_after(stdout, "Runtime code:");
    assert!(!lines.is_empty(), "no runtime table in\n{stdout}");
    let parec_configs: Vec<&String> = configs
        .iter()
        .filter(|c| !c.starts_with("clang -Oz"))
        .collect();
    let mut expected = vec!["program".to_string()];
    expected.extend(parec_configs.iter().map(|c| format!("{c} runtime")));
    assert_eq!(cells(lines[0]), expected, "{stdout}");
    let table: Vec<Vec<String>> = lines[2..].iter().map(|l| cells(l)).collect();
    let names: Vec<&str> = table.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(names, ["checksum", "matrix", "geomean", "(empty program)"]);
    for row in &table {
        for (c, config) in parec_configs.iter().enumerate() {
            let bytes: f64 = row[1 + c]
                .parse()
                .unwrap_or_else(|_| panic!("{config} in {row:?}"));
            assert!(bytes > 0.0, "{config} in {row:?}");
        }
    }

    let dir = tempfile::tempdir().unwrap();
    let parec = sibling("parec");
    let runtime = |exe: &Path| -> u64 {
        let size = Command::new(&parec)
            .args(["size", "--json"])
            .arg(exe)
            .output()
            .unwrap();
        assert!(
            size.status.success(),
            "{}",
            String::from_utf8_lossy(&size.stderr)
        );
        let json: serde_json::Value = serde_json::from_slice(&size.stdout).unwrap();
        let kinds = json["kinds"].as_array().unwrap();
        let row = kinds
            .iter()
            .find(|k| k["name"] == "runtime")
            .expect("runtime code");
        row["bytes"].as_u64().unwrap() - row["shared"].as_u64().unwrap()
    };
    let exe = dir.path().join("checksum");
    build_oz(&corpus.join("checksum/main.pare"), &exe);
    let empty_source = dir.path().join("main.pare");
    std::fs::write(&empty_source, "fn main() {}\n").unwrap();
    let empty = dir.path().join("empty");
    build_oz(&empty_source, &empty);
    let oz = parec_configs.iter().position(|c| *c == "-Oz").unwrap();
    let (program_runtime, empty_runtime) = (runtime(&exe), runtime(&empty));
    assert_eq!(table[0][1 + oz], program_runtime.to_string());
    assert_eq!(table[3][1 + oz], empty_runtime.to_string());
    assert!(
        program_runtime > empty_runtime,
        "checksum prints: it reaches more of the runtime than the empty program"
    );
    let own = |exe: &Path, runtime: u64| text_size(exe).unwrap() - runtime;
    let expected_own = own(&exe, program_runtime) - own(&empty, empty_runtime);
    assert_eq!(
        rows[0][1 + 5 * oz],
        expected_own.to_string(),
        "{:?}",
        rows[0]
    );
}

/// `parec build -Oz source -o exe`, which must succeed.
fn build_oz(source: &Path, exe: &Path) {
    let parec = sibling("parec");
    let built = Command::new(&parec)
        .arg("build")
        .arg(source)
        .args(["-Oz", "-o"])
        .arg(exe)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", parec.display()));
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
}

fn file_len(path: &Path) -> f64 {
    std::fs::metadata(path).unwrap().len() as f64
}

/// A binary of the workspace beside `parec-tools` (`parec`, which `parec
/// bench` itself runs for profiles).
fn sibling(name: &str) -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_parec-tools")).with_file_name(name)
}

#[test]
fn bench_reports_a_wrong_output_and_fails() {
    // A copy of one program whose expected output is wrong.
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/checksum");
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("checksum");
    std::fs::create_dir(&copy).unwrap();
    for file in ["main.pare", "checksum.c"] {
        std::fs::copy(corpus.join(file), copy.join(file)).unwrap();
    }
    std::fs::write(copy.join("expected.out"), "not the output\n").unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_parec-tools"))
        .arg("bench")
        .arg("--quick")
        .arg("--dir")
        .arg(dir.path())
        .output()
        .expect("cannot start parec-tools");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        output.status.code(),
        Some(1),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(stdout.contains("| checksum | FAILED"), "{stdout}");
    assert!(
        stderr.contains("error: checksum (Cranelift): stdout differs from expected.out"),
        "{stderr}"
    );
}

#[test]
fn bench_scaling_times_every_phase() {
    let output = Command::new(env!("CARGO_BIN_EXE_parec-tools"))
        .args(["bench", "--scaling", "--sizes", "20,40"])
        .output()
        .expect("cannot start parec-tools");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "stdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let (phases, search) = stdout
        .split_once("fmerge candidate search")
        .expect("a candidate-search table");
    let rows = |text: &str| -> Vec<Vec<String>> {
        text.lines()
            .filter(|l| l.starts_with('|'))
            .skip(2)
            .map(cells)
            .collect()
    };
    let phase_rows = rows(phases);
    // Names without the marks (†) that say what a peak covers.
    let names: Vec<&str> = phase_rows
        .iter()
        .map(|r| r[0].trim_end_matches('†'))
        .collect();
    let mut expected = vec![
        "frontend: parse",
        "frontend: check",
        "frontend: lower",
        "frontend",
    ];
    expected.extend(Pass::ALL.iter().map(|p| p.name()));
    expected.extend(["cranelift", "object"]);
    assert_eq!(names, expected);
    // Every phase does real work, the machine outliner included, and has
    // a peak heap (the binary counts its allocations).
    for row in &phase_rows {
        let ms: f64 = row[1].parse().unwrap();
        assert!(ms > 0.0, "{row:?}");
        let peak_mb: f64 = row[3].parse().unwrap();
        assert!(peak_mb > 0.0, "{row:?}");
    }
    assert!(phases.contains("† peak of the whole build"), "{phases}");
    let searches: Vec<String> = rows(search).into_iter().map(|r| r[0].clone()).collect();
    assert_eq!(
        searches,
        [
            "LSH adaptive (F3M)",
            "LSH static k=200 b=100",
            "exhaustive MinHash",
            "exhaustive opcode frequency (HyFM)"
        ]
    );
}

/// `parec-tools` writes through parec's checked writers (issue 34): its
/// help to a closed or full stdout is an error (status 1), never lost
/// output with status 0.
#[test]
fn help_to_a_closed_or_full_stdout_is_an_error() {
    use std::os::unix::process::CommandExt as _;
    for args in [&["--help"][..], &["bench", "--help"], &["fuzz", "--help"]] {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let o = Command::new(env!("CARGO_BIN_EXE_parec-tools"))
            .args(args)
            .stdout(full)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?} full: {err}");
        assert!(
            err.contains("cannot write to stdout: No space left"),
            "{err}"
        );
        let mut closed = Command::new(env!("CARGO_BIN_EXE_parec-tools"));
        closed.args(args);
        // SAFETY: `close` is async-signal-safe; it runs between fork and exec.
        unsafe {
            closed.pre_exec(|| {
                libc::close(1);
                Ok(())
            });
        }
        let o = closed.output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?} closed: {err}");
        assert!(
            err.contains("cannot write to stdout: Bad file descriptor"),
            "{err}"
        );
    }
}

/// `--json` may not name a file of the corpus (issue 34: every output of
/// every command is checked against its inputs); refused before measuring.
#[test]
fn the_json_report_may_not_replace_a_corpus_file() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/checksum");
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("checksum");
    std::fs::create_dir(&copy).unwrap();
    for entry in std::fs::read_dir(&corpus).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, copy.join(path.file_name().unwrap())).unwrap();
    }
    let main = copy.join("main.pare");
    let before = std::fs::read(&main).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_parec-tools"))
        .args(["bench", "--quick", "--dir"])
        .arg(dir.path())
        .arg("--json")
        .arg(&main)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("refusing to overwrite it"), "{err}");
    assert_eq!(std::fs::read(&main).unwrap(), before);
}
