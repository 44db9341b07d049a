//! I/O in the words the command line uses: files read with a bound,
//! files written, and the standard streams, every failure reported.
//!
//! **Files.** Every file parec reads goes through [`read_bytes`] or
//! [`read_text`] (or, for sources, the front end's loader), which read
//! through `pare_frontend::input::read_bounded`: a regular file is read to
//! its length, a pipe or device at most 64 MiB (`/dev/zero` does not make
//! parec read without end), a directory is refused by name. A failure
//! reads `cannot read `PATH`: REASON`, with the operating system's reason
//! and without Rust's `(os error N)` suffix.
//!
//! **Standard streams.** What parec prints on stdout (`--emit clif`/`asm`
//! without `-o`, `parec opt`, `size`, `cgdata show`) goes through
//! [`write_stdout`]: a failed write is an error (status 1), never lost
//! output with status 0. What it prints on stderr (remarks, statistics,
//! warnings, errors) goes through [`eprint`]: a failed write cannot be
//! reported on stderr, so it is remembered ([`stderr_failed`]) and turns a
//! successful exit status into 1.
//!
//! Both write with `write(2)` on the descriptor ([`RawStream`]), not with
//! Rust's `Stdout`/`Stderr`, which report success on a closed descriptor.
//! A stream closed when parec starts (`>&-`, `2>&-`) would otherwise not
//! even be seen: the Rust runtime reopens it on `/dev/null` before `main`.
//! So [`occupy_closed_streams`], run before the runtime's start
//! (`main.rs`), puts `/dev/null` there itself, opened in the direction
//! that fails: write-only for stdin, read-only for stdout and stderr.
//! Every write to a closed stdout or stderr then fails with `EBADF`, as on
//! a closed descriptor — parec's own, the interpreter's and the
//! JIT-compiled program's (through the C library) alike — while the
//! descriptor stays taken, so no file parec opens later lands on it and
//! receives what was meant for the stream. The descriptors are
//! close-on-exec: a program parec runs (the linker, qemu) starts with the
//! stream closed, as parec did.

use std::io::Write as _;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{anyhow, Result};
use pare_frontend::input::{read_bounded, ReadError};

/// An I/O error's reason without the "(os error N)" suffix.
pub fn reason(e: &std::io::Error) -> String {
    pare_frontend::input::os_reason(e)
}

/// Reads a text file (bounded, see the module doc).
pub fn read_text(path: &Path) -> Result<String> {
    let bytes = read_bytes(path)?;
    String::from_utf8(bytes)
        .map_err(|_| anyhow!("cannot read `{}`: it is not UTF-8 text", path.display()))
}

/// Reads a file's bytes (bounded, see the module doc).
pub fn read_bytes(path: &Path) -> Result<Vec<u8>> {
    read_bytes_as(path, "")
}

/// Reads a file's bytes; errors name it as `what` (`"cgdata "`: "cannot
/// read cgdata `PATH`").
pub fn read_bytes_as(path: &Path, what: &str) -> Result<Vec<u8>> {
    read_bounded(path, u64::MAX)
        .map_err(|e: ReadError| anyhow!("cannot read {what}`{}`: {e}", path.display()))
}

/// The first `n` bytes of the file at `path` (fewer if it is shorter), or
/// `None` if it cannot be read: what an output's existing content starts
/// with, to tell a file parec wrote from one it must not replace.
pub fn read_prefix(path: &Path, n: usize) -> Option<Vec<u8>> {
    use std::io::Read as _;
    let file = std::fs::File::open(path).ok()?;
    let mut prefix = Vec::with_capacity(n);
    file.take(n as u64).read_to_end(&mut prefix).ok()?;
    Some(prefix)
}

/// Writes a file, replacing it.
pub fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    std::fs::write(path, bytes)
        .map_err(|e| anyhow!("cannot write `{}`: {}", path.display(), reason(&e)))
}

/// Writes `bytes` to `path` unless the file already holds exactly these
/// bytes, so that its modification time moves only when its content does
/// (a build system's `restat` then stops rebuilding at an unchanged output).
/// Only a regular file of the same length is compared (a device such as
/// `/dev/null` is written to).
pub fn write_if_changed(path: &Path, bytes: &[u8]) -> Result<()> {
    let same_length = std::fs::metadata(path)
        .is_ok_and(|meta| meta.is_file() && meta.len() == bytes.len() as u64);
    match same_length.then(|| read_bounded(path, bytes.len() as u64)) {
        Some(Ok(existing)) if existing == bytes => Ok(()),
        _ => write(path, bytes),
    }
}

/// Creates a directory and its parents.
pub fn create_dir_all(path: &Path) -> Result<()> {
    std::fs::create_dir_all(path)
        .map_err(|e| anyhow!("cannot create `{}`: {}", path.display(), reason(&e)))
}

/// A standard stream written with `write(2)`: every error reaches the
/// caller, `EBADF` (a closed stream) included.
pub struct RawStream(libc::c_int);

/// The process's stdout, unbuffered.
pub fn raw_stdout() -> RawStream {
    RawStream(libc::STDOUT_FILENO)
}

impl std::io::Write for RawStream {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        // SAFETY: `buf` is valid for `buf.len()` bytes; writing to a
        // descriptor that may be closed only fails.
        let n = unsafe { libc::write(self.0, buf.as_ptr().cast(), buf.len()) };
        if n < 0 {
            Err(std::io::Error::last_os_error())
        } else {
            Ok(n as usize)
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Writes `bytes` to stdout.
pub fn write_stdout(bytes: &[u8]) -> Result<()> {
    raw_stdout()
        .write_all(bytes)
        .map_err(|e| anyhow!("cannot write to stdout: {}", reason(&e)))
}

/// Set when a write to stderr failed.
static STDERR_FAILED: AtomicBool = AtomicBool::new(false);

/// Writes `text` to stderr; a failure is remembered ([`stderr_failed`]).
pub fn eprint(text: &str) {
    if RawStream(libc::STDERR_FILENO)
        .write_all(text.as_bytes())
        .is_err()
    {
        STDERR_FAILED.store(true, Ordering::Relaxed);
    }
}

/// Writes `text` and a newline to stderr, as [`eprint`].
pub fn eprintln(text: impl std::fmt::Display) {
    eprint(&format!("{text}\n"));
}

/// Whether a write to stderr failed: what parec meant to say there is lost.
pub fn stderr_failed() -> bool {
    STDERR_FAILED.load(Ordering::Relaxed)
}

/// The process's exit status for a command that ended with `status`: 1
/// instead of 0 if a write to stderr failed (the message is lost, the
/// command did not do all it should).
pub fn exit_status(status: u8) -> u8 {
    if status == 0 && stderr_failed() {
        1
    } else {
        status
    }
}

/// Prints clap's help, version or error (in colour on a terminal) through
/// [`write_stdout`] and [`eprint`], whose failures are reported (clap's own
/// printing ignores them); returns the exit status: clap's, or 1 if the
/// help could not be written.
pub fn report_clap(e: &clap::Error) -> u8 {
    use std::io::IsTerminal as _;
    let rendered = e.render();
    let text = |terminal: bool| match terminal {
        true => rendered.ansi().to_string(),
        false => rendered.to_string(),
    };
    if e.use_stderr() {
        eprint(&text(std::io::stderr().is_terminal()));
        return e.exit_code() as u8;
    }
    match write_stdout(text(std::io::stdout().is_terminal()).as_bytes()) {
        Ok(()) => e.exit_code() as u8,
        Err(err) => {
            eprintln(format_args!("error: {err:#}"));
            1
        }
    }
}

/// Puts `/dev/null` on each standard descriptor that is closed, in the
/// direction that fails (see the module doc). Runs before the Rust
/// runtime starts (`main.rs`), so it may only make system calls.
pub fn occupy_closed_streams() {
    for (fd, flags) in [
        (libc::STDIN_FILENO, libc::O_WRONLY),
        (libc::STDOUT_FILENO, libc::O_RDONLY),
        (libc::STDERR_FILENO, libc::O_RDONLY),
    ] {
        // SAFETY: `fcntl(F_GETFD)` only asks whether `fd` is open; `open`
        // gets a NUL-terminated path; `dup2`/`close` act on descriptors
        // this function just opened.
        unsafe {
            if libc::fcntl(fd, libc::F_GETFD) != -1 {
                continue;
            }
            let null = libc::open(c"/dev/null".as_ptr(), flags | libc::O_CLOEXEC);
            if null >= 0 && null != fd {
                // The lowest free descriptor is `fd` unless a lower one
                // is closed too, and those are taken first.
                libc::dup3(null, fd, libc::O_CLOEXEC);
                libc::close(null);
            }
        }
    }
}
