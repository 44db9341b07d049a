//! Helpers shared by the driver's integration tests (each test file includes
//! this module with `mod support;` and uses what it needs).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The workspace root, canonical.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("workspace root")
}

/// A `parec` command: the binary under test, or the one `PAREC_TEST_BIN`
/// names (to show that a regression test fails with an older parec).
pub fn parec() -> Command {
    match std::env::var_os("PAREC_TEST_BIN") {
        Some(bin) => Command::new(bin),
        None => Command::new(env!("CARGO_BIN_EXE_parec")),
    }
}

/// Runs `cmd` to completion.
pub fn run(cmd: &mut Command) -> Output {
    cmd.output().expect("cannot start a process")
}

/// The files of `dir` (e.g. `--emit obj` output) as (name, bytes), by name.
pub fn object_files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| {
            let p = e.unwrap().path();
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    files.sort();
    files
}
