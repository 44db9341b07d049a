//! Running a child process with captured output and a time limit: an AOT
//! executable under qemu (JIT runs and builds go to workers, whose
//! outcomes are the same [`Captured`]: see [`super::worker`]).
//!
//! Any generated or shrunk program may loop or crash, so it runs in a
//! process of its own. Output is read on helper threads (so a chatty child never
//! blocks on a full pipe) and capped at [`OUTPUT_CAP`] bytes per stream; the
//! rest is read and dropped. A child still running at the deadline is killed.

use std::io::Read;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Bytes kept of each output stream.
pub const OUTPUT_CAP: usize = 1 << 20;

/// What a child process did.
#[derive(Debug)]
pub struct Captured {
    /// `None` if it was killed at the deadline.
    pub status: Option<ExitStatus>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub elapsed: Duration,
}

/// Runs `cmd` (stdin closed) until it ends or `timeout` passes.
pub fn run_with_timeout(cmd: &mut Command, timeout: Duration) -> std::io::Result<Captured> {
    let start = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let stdout = reader(child.stdout.take());
    let stderr = reader(child.stderr.take());
    let status = wait_until(&mut child, start + timeout)?;
    let stdout = stdout.join().unwrap_or_default();
    let stderr = stderr.join().unwrap_or_default();
    Ok(Captured {
        status,
        stdout,
        stderr,
        elapsed: start.elapsed(),
    })
}

/// Waits for `child`, killing it at `deadline` (then `None`).
pub(super) fn wait_until(
    child: &mut Child,
    deadline: Instant,
) -> std::io::Result<Option<ExitStatus>> {
    // Poll with a growing interval: most children end within milliseconds.
    let mut pause = Duration::from_micros(100);
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        let now = Instant::now();
        if now >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Ok(None);
        }
        std::thread::sleep(pause.min(deadline - now));
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}

/// Reads a pipe to its end on a thread, keeping the first [`OUTPUT_CAP`] bytes.
fn reader<R: Read + Send + 'static>(pipe: Option<R>) -> JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let Some(mut pipe) = pipe else {
            return kept;
        };
        let mut buf = [0u8; 8192];
        loop {
            match pipe.read(&mut buf) {
                Ok(0) | Err(_) => return kept,
                Ok(n) => {
                    let room = OUTPUT_CAP.saturating_sub(kept.len());
                    kept.extend_from_slice(&buf[..n.min(room)]);
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captures_output_and_status() {
        let c = run_with_timeout(
            Command::new("sh").args(["-c", "echo out; echo err >&2; exit 3"]),
            Duration::from_secs(10),
        )
        .unwrap();
        assert_eq!(c.stdout, b"out\n");
        assert_eq!(c.stderr, b"err\n");
        assert_eq!(c.status.and_then(|s| s.code()), Some(3));
    }

    #[test]
    fn kills_at_the_deadline() {
        let c = run_with_timeout(
            Command::new("sh").args(["-c", "exec sleep 5"]),
            Duration::from_millis(100),
        )
        .unwrap();
        assert!(c.status.is_none());
        assert!(c.elapsed < Duration::from_secs(4));
    }
}
