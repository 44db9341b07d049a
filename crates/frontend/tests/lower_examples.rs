//! Runs the example programs (`examples/`, see its README) through the
//! lowering and the JIT and compares stdout, stderr and exit status with the
//! expected files. Also verifies `lower_module` of every module. The
//! directory is `$PARE_EXAMPLES` if set, else the workspace's `examples/`;
//! when neither exists there is nothing to run.

#[path = "lower_support.rs"]
mod support;

use std::fs;
use std::path::{Path, PathBuf};

use pare_frontend::lower::{lower_module, verify_module};
use pare_frontend::tir::ModuleId;
use support::{check_src, host_config, run_program, Outcome};

fn examples_dir() -> PathBuf {
    match std::env::var_os("PARE_EXAMPLES") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples"),
    }
}

fn read_or(path: &Path, default: &str) -> String {
    fs::read_to_string(path).unwrap_or_else(|_| default.to_string())
}

/// One example: its modules (root first) and expected outcome.
fn load(path: &Path) -> (Vec<(String, String)>, Outcome) {
    let stem = |p: &Path| p.file_stem().unwrap().to_string_lossy().into_owned();
    let (mut modules, expected_base) = if path.is_dir() {
        let mut files: Vec<PathBuf> = fs::read_dir(path)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "pare"))
            .collect();
        files.sort_by_key(|p| (stem(p) != "main", p.clone()));
        let modules = files
            .iter()
            .map(|p| (stem(p), fs::read_to_string(p).unwrap()))
            .collect();
        (modules, path.join("expected"))
    } else {
        (
            vec![(stem(path), fs::read_to_string(path).unwrap())],
            path.with_extension(""),
        )
    };
    modules.dedup();
    let with = |ext: &str| expected_base.with_extension(ext);
    let expected = Outcome {
        status: read_or(&with("status"), "0").trim().parse().unwrap(),
        stdout: read_or(&with("out"), ""),
        stderr: read_or(&with("err"), ""),
    };
    (modules, expected)
}

#[test]
fn examples_run_as_expected() {
    let dir = examples_dir();
    let Ok(entries) = fs::read_dir(&dir) else {
        eprintln!("no examples at {}", dir.display());
        return;
    };
    let mut paths: Vec<PathBuf> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir() || p.extension().is_some_and(|e| e == "pare"))
        .collect();
    paths.sort();
    let mut failures = Vec::new();
    for path in &paths {
        let (modules, expected) = load(path);
        let refs: Vec<(&str, &str)> = modules
            .iter()
            .map(|(n, t)| (n.as_str(), t.as_str()))
            .collect();
        let program = check_src(&refs);
        for m in 0..program.modules.len() {
            let lowered = lower_module(&program, ModuleId(m as u32), &host_config());
            if let Err(e) = verify_module(&lowered) {
                failures.push(format!("{}: module {m}: {e}", path.display()));
            }
        }
        let out = run_program(&program);
        if out != expected {
            failures.push(format!(
                "{}:\n  got      {out:?}\n  expected {expected:?}",
                path.display()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} examples failed:\n{}",
        failures.len(),
        paths.len(),
        failures.join("\n")
    );
}
