//! End to end test of `parec bench` on two small corpus programs: the table's
//! rows and columns, positive size ratios, and the JSON report.

use std::path::Path;
use std::process::Command;

use parec::pipeline::Pass;

/// Two small, quick corpus programs.
const PROGRAMS: [&str; 2] = ["checksum", "matrix"];

/// The configuration names, in column order.
fn configs() -> Vec<String> {
    let mut names = vec!["Cranelift".to_string(), "-O2".to_string(), "-Os".to_string()];
    names.extend(Pass::ALL.iter().map(|p| p.name().to_string()));
    names.push("-Oz".into());
    names.push("-Oz 2 rounds".into());
    names.push("-Oz lto".into());
    names.push("-Oz 2 rounds lto".into());
    names.push("-Oz 2 rounds profile".into());
    names.push("-Os profile".into());
    names.push("clang -Oz".into());
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
            assert!(figure(0) > 0.0, "bytes of {config} in {row:?}");
            assert!(figure(1) > 0.0 && figure(2) > 0.0, "ratios in {row:?}");
            assert!(figure(3) >= 0.0 && figure(4) > 0.0, "times in {row:?}");
        }
        // Each configuration is its own baseline.
        assert_eq!(row[2], "1.000");
        assert_eq!(row[1 + 5 * (configs.len() - 1) + 2], "1.000");
    }

    // Then each parec configuration against the targets: `-Oz 2 rounds`
    // keeps all of its own byte reduction, `-O2` runs at its own speed.
    let target_rows: Vec<Vec<String>> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("Against the targets"))
        .take_while(|l| !l.starts_with("Compile time by stage"))
        .filter(|l| l.starts_with("| ") && !l.starts_with("| configuration"))
        .map(cells)
        .collect();
    let targeted: Vec<&String> = target_rows.iter().map(|r| &r[0]).collect();
    let expected: Vec<&String> = configs[1..configs.len() - 1].iter().collect();
    assert_eq!(targeted, expected, "{stdout}");
    let row = |name: &str| target_rows.iter().find(|r| r[0] == name).unwrap();
    assert_eq!(row("-Oz 2 rounds")[1], "100.0%");
    assert_eq!(row("-O2")[2], "1.000");
    assert_eq!(row("-O2")[6], "1.00");
    assert!(row("-Os")[1].ends_with('%'), "{:?}", row("-Os"));

    // Then the compile time of each parec configuration by stage; every
    // build has a front end and Cranelift, and -Oz its passes.
    let stage_rows: Vec<Vec<String>> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("Compile time by stage"))
        .filter(|l| l.starts_with("| ") && !l.starts_with("| configuration"))
        .map(cells)
        .collect();
    let parec_configs: Vec<&String> = configs.iter().filter(|c| *c != "clang -Oz").collect();
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
        for result in results {
            assert!(result["error"].is_null(), "{result}");
            assert!(result["bytes"].as_f64().unwrap() > 0.0);
            assert!(result["ratio_vs_cranelift"].as_f64().unwrap() > 0.0);
            assert!(result["ratio_vs_clang"].as_f64().unwrap() > 0.0);
        }
    }
    assert_eq!(json["geomean"].as_array().unwrap().len(), configs.len());
    let oz = &json["geomean"][configs.iter().position(|c| c == "-Oz").unwrap()];
    assert!(oz["compile_ms_total"].as_f64().unwrap() > 0.0);
    assert!(oz["reduction_kept"].as_f64().unwrap() > 0.0);
    assert!(oz["compile_vs_o2"].as_f64().unwrap() > 0.0);
    let o2 = configs.iter().position(|c| c == "-O2").unwrap();
    assert_eq!(programs[0]["results"][o2]["run_vs_o2"].as_f64(), Some(1.0));
    assert!(oz["compile_ms_by_stage"]["gvn"].as_f64().unwrap() >= 0.0);
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
