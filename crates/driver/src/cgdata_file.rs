//! Reading and writing cgdata files.
//!
//! A cgdata file (`parec_passes::cgdata`) carries what round 1 of a build
//! learned about the whole program — the merge summary and the outline
//! prefix tree — to round 2 or to later builds. Reading checks the format,
//! the checksum and, when asked, the target; writing never replaces a file
//! that is not cgdata, so a mistyped path cannot destroy a source file.

use std::path::Path;

use anyhow::{anyhow, bail, Result};
use parec_passes::cgdata::{CgData, MAGIC};

use crate::io_error;

/// Reads and checks a cgdata file; with `target`, it must be for that
/// target.
pub fn read(path: &Path, target: Option<&str>) -> Result<CgData> {
    decode(path, &read_bytes(path)?, target)
}

/// The bytes of the cgdata file at `path`, unchecked.
pub fn read_bytes(path: &Path) -> Result<Vec<u8>> {
    io_error::read_bytes_as(path, "cgdata ")
}

/// Checks and decodes `bytes`, read from `path` (named in errors); with
/// `target`, they must be for that target.
pub fn decode(path: &Path, bytes: &[u8], target: Option<&str>) -> Result<CgData> {
    CgData::decode(bytes, target).map_err(|e| anyhow!("cgdata `{}`: {e}", path.display()))
}

/// Writes cgdata to `path`, refusing to replace a file that is not cgdata.
pub fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    check_replaceable(path)?;
    io_error::write(path, bytes)
}

/// Like [`write`], leaving the file alone when it already holds `bytes`
/// (its modification time moves only when its content does).
pub fn write_if_changed(path: &Path, bytes: &[u8]) -> Result<()> {
    check_replaceable(path)?;
    io_error::write_if_changed(path, bytes)
}

/// Whether `path` may be written: absent, empty or cgdata.
pub fn check_replaceable(path: &Path) -> Result<()> {
    if path.is_dir() {
        bail!("`{}` is a directory", path.display());
    }
    if let Some(existing) = io_error::read_prefix(path, MAGIC.len()) {
        if !existing.is_empty() && existing != MAGIC {
            bail!(
                "`{}` exists and is not a cgdata file; refusing to overwrite it",
                path.display()
            );
        }
    }
    Ok(())
}
