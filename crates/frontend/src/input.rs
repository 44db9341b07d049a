//! Reading input files with a bound on what is read.
//!
//! Every file parec reads (sources, `.clif` files, objects and executables,
//! plans, cgdata, profiles) is read through [`read_bounded`], so that no
//! input can make it read without end:
//!
//! - a regular file has a length: one above the reader's `limit` is refused
//!   before a byte is read (source files: [`SOURCE_LIMIT`], as spans are
//!   32-bit offsets);
//! - anything else (a pipe, a device such as `/dev/zero`) has no length to
//!   check, so at most [`STREAM_LIMIT`] bytes are read from it (and no more
//!   than `limit`): past that the read stops and is refused;
//! - a directory is refused by name ("it is a directory"), not by the
//!   operating system's "Is a directory (os error 21)".
//!
//! Errors carry the operating system's reason without Rust's
//! `(os error N)` suffix; the caller adds the path and what the file was.

use std::fmt;
use std::io::Read as _;
use std::path::Path;

/// The most bytes read from a file that is not a regular file.
pub const STREAM_LIMIT: u64 = 64 << 20;

/// The longest source file: a [`crate::source::Span`] holds 32-bit offsets.
pub const SOURCE_LIMIT: u64 = u32::MAX as u64;

/// Why a file could not be read.
#[derive(Debug)]
pub enum ReadError {
    /// The operating system refused (its reason).
    Io(std::io::Error),
    /// The path names a directory.
    Directory,
    /// A regular file longer than the reader's limit.
    TooLong { len: u64, limit: u64 },
    /// Not a regular file, and more than `limit` bytes came out of it.
    EndlessStream { limit: u64 },
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Io(e) => write!(f, "{}", os_reason(e)),
            ReadError::Directory => write!(f, "it is a directory"),
            ReadError::TooLong { len, limit } => {
                write!(f, "it is {len} bytes long, more than the {limit} bytes allowed")
            }
            ReadError::EndlessStream { limit } => write!(
                f,
                "it is not a regular file and gave more than {limit} bytes (the limit for pipes and devices)"
            ),
        }
    }
}

impl std::error::Error for ReadError {}

/// An I/O error's reason without the "(os error N)" suffix.
pub fn os_reason(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// The bytes of the file at `path`, at most `limit` of them (see the
/// module doc).
pub fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    let file = std::fs::File::open(path).map_err(ReadError::Io)?;
    let meta = file.metadata().map_err(ReadError::Io)?;
    if meta.is_dir() {
        return Err(ReadError::Directory);
    }
    let limit = if meta.is_file() {
        if meta.len() > limit {
            return Err(ReadError::TooLong {
                len: meta.len(),
                limit,
            });
        }
        limit
    } else {
        limit.min(STREAM_LIMIT)
    };
    let mut bytes = Vec::with_capacity(meta.len().min(limit) as usize);
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > limit {
        return Err(if meta.is_file() {
            // It grew while being read.
            ReadError::TooLong {
                len: bytes.len() as u64,
                limit,
            }
        } else {
            ReadError::EndlessStream { limit }
        });
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_are_bounded_for_every_kind_of_file() {
        let dir = std::env::temp_dir().join(format!("pare-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("f");
        std::fs::write(&file, b"hello").unwrap();
        assert_eq!(read_bounded(&file, 5).unwrap(), b"hello");
        assert!(matches!(
            read_bounded(&file, 4),
            Err(ReadError::TooLong { len: 5, limit: 4 })
        ));
        assert!(matches!(
            read_bounded(&dir, u64::MAX),
            Err(ReadError::Directory)
        ));
        // A device that never ends: the read stops after the limit.
        assert!(matches!(
            read_bounded(Path::new("/dev/zero"), 1000),
            Err(ReadError::EndlessStream { limit: 1000 })
        ));
        let missing = read_bounded(&dir.join("none"), 1).unwrap_err();
        assert_eq!(missing.to_string(), "No such file or directory");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
