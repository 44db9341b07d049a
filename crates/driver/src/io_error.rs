//! I/O error messages in the words the command line uses.
//!
//! Every file parec reads or writes goes through these helpers, so an I/O
//! failure always reads `cannot read `PATH`: REASON`, with the operating
//! system's reason and without Rust's `(os error N)` suffix. What parec
//! itself prints on stdout (`--emit clif`/`asm` without `-o`, `parec opt`,
//! `cgdata show`) goes through [`write_stdout`]: a failed write is an
//! error (status 1), never lost output with status 0.

use std::io::Write as _;
use std::path::Path;

use anyhow::{anyhow, Result};

/// An I/O error's reason without the "(os error N)" suffix.
pub fn reason(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// Reads a text file.
pub fn read_text(path: &Path) -> Result<String> {
    std::fs::read_to_string(path)
        .map_err(|e| anyhow!("cannot read `{}`: {}", path.display(), reason(&e)))
}

/// Reads a file's bytes.
pub fn read_bytes(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| anyhow!("cannot read `{}`: {}", path.display(), reason(&e)))
}

/// Writes a file, replacing it.
pub fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    std::fs::write(path, bytes)
        .map_err(|e| anyhow!("cannot write `{}`: {}", path.display(), reason(&e)))
}

/// Writes `bytes` to `path` unless the file already holds exactly these
/// bytes, so that its modification time moves only when its content does
/// (a build system's `restat` then stops rebuilding at an unchanged output).
pub fn write_if_changed(path: &Path, bytes: &[u8]) -> Result<()> {
    match std::fs::read(path) {
        Ok(existing) if existing == bytes => Ok(()),
        _ => write(path, bytes),
    }
}

/// Creates a directory and its parents.
pub fn create_dir_all(path: &Path) -> Result<()> {
    std::fs::create_dir_all(path)
        .map_err(|e| anyhow!("cannot create `{}`: {}", path.display(), reason(&e)))
}

/// Writes `bytes` to stdout and flushes it.
pub fn write_stdout(bytes: &[u8]) -> Result<()> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(bytes)
        .and_then(|()| stdout.flush())
        .map_err(|e| anyhow!("cannot write to stdout: {}", reason(&e)))
}
