//! Worker processes: the JIT runs, interpreter runs and AOT builds of many
//! programs in one long-lived process, a trap, crash or hang ending only
//! that process.
//!
//! # Why processes
//!
//! Generated code may trap (the runtime's `pare_trap` ends the process with
//! libc's `exit(101)`), crash or loop, and a program's output is what it
//! writes to descriptors 1 and 2, through C's `stdout` and `stderr`. So it
//! cannot run in the tester's own process; one `parec-tools exec-jit` child
//! per run pays a process start and a front end per configuration. A
//! worker (`parec-tools worker`) runs one `exec-*` command
//! ([`super::commands`]) after another, in process, and is replaced when a
//! command ends it.
//!
//! # Protocol
//!
//! The worker's standard input is one end of a Unix socket pair, which it
//! moves to a private descriptor at startup (the commands see `/dev/null`
//! as stdin, as `exec-*` children did). Each request is one line of JSON
//! holding the arguments of an `exec-*` command,
//! `{"args":["exec-jit","-Oz","--passes=gvn","/tmp/x/main.pare"]}`; each
//! reply is one line, `{"status":0,"retire":false,"phases":{...}}`, or
//! `{"error":"..."}` for a request that does not parse. Descriptors 1 and 2
//! are pipes to the parent: whatever a command writes (the program's
//! output, its `trap: ...` line, parec's `error:` lines, a panic's message)
//! goes there, as it went to an `exec-*` child's pipes, and C's `stdout`
//! is fully buffered on a pipe in both. The worker flushes C's and Rust's
//! streams before it replies, so when the reply arrives every byte of the
//! request's output is in the pipes: the parent reads them until they are
//! empty, and that is the request's output.
//!
//! # How a request ends
//!
//! The parent ([`Lease::run`]) reads the three descriptors with `poll`
//! until the reply or the deadline (so a chatty program never blocks on a
//! full pipe; at most [`OUTPUT_CAP`] bytes of each stream are kept, as
//! [`super::exec`] keeps). Then one of:
//! - a reply: the command's status is the one `parec-tools exec-*` would
//!   have exited with, and the worker takes the next request;
//! - the socket closes first: the command ended the process (a trap or
//!   `exit` in the program, a crash): the parent reads what is left in the
//!   pipes and takes the process's exit status (`101`, `128 + signal`);
//! - the deadline: the parent kills the worker and the run timed out.
//!
//! A worker that ended is replaced by a new one at the next request. So the
//! [`Captured`] of a request is the one an `exec-*` child would have given
//! for it, and outcomes compare as they did with one child per run.
//!
//! # What a request leaves behind
//!
//! Before the next request, the worker restores what a command may change
//! for the whole process and a fresh process would not have: the handlers
//! of `SIGSEGV` (a Pare `main` installs its stack-overflow handler) and
//! `SIGPIPE` (`parec run` restores the default). cranelift-jit never frees
//! finalized code and data, so each JIT run leaves its arena (1 GiB of
//! reserved address space and a few mappings): a worker retires after
//! [`REQUESTS_PER_WORKER`] requests. A panic in a command is reported as
//! `parec-tools` reports it (status 70) and retires the worker, whose state
//! may be half-updated.
//!
//! # Cost
//!
//! A process start per worker, per [`REQUESTS_PER_WORKER`] requests and per
//! command that ends its process (a trapping program ends its worker in
//! every configuration); otherwise a request costs two short socket writes
//! and a few `poll`s besides the command's own work.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::ExitStatusExt;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context as _};
use clap::Parser;
use serde_json::{json, Value};

use super::commands::{self, ExecCommand, JitPhases, Session, ICE_STATUS};
use super::exec::{wait_until, Captured, OUTPUT_CAP};

/// Requests a worker serves before it is replaced (see the module doc):
/// at most 128 GiB of reserved, untouched address space, and a process
/// start per 128 requests.
pub const REQUESTS_PER_WORKER: usize = 128;

/// The `parec-tools` subcommand that runs a worker.
pub const SUBCOMMAND: &str = "worker";

// ---------------------------------------------------------------------------
// The worker's side.

/// A request's arguments as the worker parses them: one `exec-*` command,
/// with the definitions of `parec-tools`'s own subcommands.
#[derive(Parser)]
#[command(name = "parec-tools", no_binary_name = true)]
struct Request {
    #[command(subcommand)]
    command: ExecCommand,
}

/// What the worker says after a request it finished.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Reply {
    /// The command ran: the status `parec-tools` would have exited with;
    /// `retire` after a panic.
    Finished {
        status: u8,
        phases: Option<JitPhases>,
        retire: bool,
    },
    /// The request was not a valid command.
    Refused(String),
}

/// `parec-tools worker`: serves requests on stdin until it closes.
pub fn serve() -> anyhow::Result<()> {
    let channel = take_stdin().context("cannot set up the worker's channel")?;
    let mut requests = BufReader::new(channel.try_clone()?);
    let mut replies = channel;
    let mut session = Session::default();
    let mut line = Vec::new();
    loop {
        line.clear();
        if requests.read_until(b'\n', &mut line)? == 0 {
            return Ok(());
        }
        let reply = serve_request(&line, &mut session);
        replies
            .write_all(reply.encode().as_bytes())
            .context("cannot reply on stdin (a worker's stdin is a socket it is sent requests and replies on)")?;
        if let Reply::Finished { retire: true, .. } = reply {
            return Ok(());
        }
    }
}

/// Moves stdin (the socket) to a new descriptor, closed on `exec`, and
/// puts `/dev/null` in its place.
fn take_stdin() -> io::Result<File> {
    let channel = io::stdin().as_fd().try_clone_to_owned()?;
    let null = File::open("/dev/null")?;
    // SAFETY: both descriptors are open; dup2 replaces descriptor 0 atomically.
    if unsafe { libc::dup2(null.as_raw_fd(), 0) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(File::from(channel))
}

/// Runs one request, leaving the process as it found it.
fn serve_request(line: &[u8], session: &mut Session) -> Reply {
    let command = match decode_request(line).and_then(|args| {
        Request::try_parse_from(args)
            .map(|r| r.command)
            .map_err(|e| e.to_string())
    }) {
        Ok(command) => command,
        Err(why) => return Reply::Refused(why),
    };
    let signals = SignalHandlers::save();
    let result = std::panic::catch_unwind(AssertUnwindSafe(|| commands::run(&command, session)));
    let (status, retire) = match result {
        Ok(result) => (commands::exit_status(result), false),
        Err(_) => {
            commands::report_internal_error();
            (ICE_STATUS, true)
        }
    };
    flush_output();
    signals.restore();
    Reply::Finished {
        status,
        phases: session.phases,
        retire,
    }
}

/// Flushes Rust's and C's output streams (the interpreter writes through
/// the former, JIT code through the latter).
fn flush_output() {
    let _ = io::stdout().flush();
    // SAFETY: fflush(NULL) flushes every C output stream; always valid.
    unsafe {
        libc::fflush(std::ptr::null_mut());
    }
}

/// The handlers of the signals a command may change for the process.
struct SignalHandlers {
    saved: Vec<(libc::c_int, libc::sigaction)>,
}

impl SignalHandlers {
    const SIGNALS: [libc::c_int; 2] = [libc::SIGSEGV, libc::SIGPIPE];

    fn save() -> SignalHandlers {
        let saved = Self::SIGNALS
            .iter()
            .filter_map(|&signal| {
                // SAFETY: a zeroed `sigaction` is a valid out-parameter;
                // querying a handler has no other precondition.
                unsafe {
                    let mut action: libc::sigaction = std::mem::zeroed();
                    (libc::sigaction(signal, std::ptr::null(), &mut action) == 0)
                        .then_some((signal, action))
                }
            })
            .collect();
        SignalHandlers { saved }
    }

    fn restore(&self) {
        for (signal, action) in &self.saved {
            // SAFETY: `action` was returned by sigaction for this signal.
            unsafe {
                libc::sigaction(*signal, action, std::ptr::null_mut());
            }
        }
    }
}

// ---------------------------------------------------------------------------
// The protocol.

fn encode_request(args: &[String]) -> String {
    format!("{}\n", json!({ "args": args }))
}

fn decode_request(line: &[u8]) -> Result<Vec<String>, String> {
    let value: Value =
        serde_json::from_slice(line).map_err(|e| format!("a request is not JSON: {e}"))?;
    let args = value
        .get("args")
        .and_then(Value::as_array)
        .ok_or("a request needs `args`, an array of strings")?;
    args.iter()
        .map(|a| {
            a.as_str()
                .map(str::to_string)
                .ok_or_else(|| "a request's `args` must be strings".to_string())
        })
        .collect()
}

impl Reply {
    fn encode(&self) -> String {
        let value = match self {
            Reply::Finished {
                status,
                phases,
                retire,
            } => json!({
                "status": status,
                "retire": retire,
                "phases": phases.map(|p| json!({
                    "front_end_ns": p.front_end.as_nanos() as u64,
                    "compile_ns": p.compile.as_nanos() as u64,
                    "run_ns": p.run.as_nanos() as u64,
                })),
            }),
            Reply::Refused(why) => json!({ "error": why }),
        };
        format!("{value}\n")
    }

    fn decode(line: &[u8]) -> Result<Reply, String> {
        let value: Value =
            serde_json::from_slice(line).map_err(|e| format!("a reply is not JSON: {e}"))?;
        if let Some(why) = value.get("error").and_then(Value::as_str) {
            return Ok(Reply::Refused(why.to_string()));
        }
        let status = value
            .get("status")
            .and_then(Value::as_u64)
            .and_then(|s| u8::try_from(s).ok())
            .ok_or("a reply has no `status` from 0 to 255")?;
        let retire = value
            .get("retire")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let phases = value.get("phases").filter(|p| !p.is_null()).map(|p| {
            let ns =
                |key: &str| Duration::from_nanos(p.get(key).and_then(Value::as_u64).unwrap_or(0));
            JitPhases {
                front_end: ns("front_end_ns"),
                compile: ns("compile_ns"),
                run: ns("run_ns"),
            }
        });
        Ok(Reply::Finished {
            status,
            phases,
            retire,
        })
    }
}

// ---------------------------------------------------------------------------
// The parent's side.

/// What one request produced: what an `exec-*` child would have, and where
/// the time of a JIT run went.
#[derive(Debug)]
pub struct WorkerRun {
    pub captured: Captured,
    pub phases: Option<JitPhases>,
}

/// Idle workers, started on demand. A [`Lease`] holds one worker for a
/// series of requests (one program's configurations: the worker keeps its
/// front end's output) and gives it back when dropped; there are never
/// more workers than leases held at once.
pub struct WorkerPool {
    tools: PathBuf,
    env: Vec<(String, String)>,
    idle: Mutex<Vec<Worker>>,
    started: AtomicUsize,
}

impl std::fmt::Debug for WorkerPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkerPool")
            .field("tools", &self.tools)
            .field("started", &self.started())
            .finish_non_exhaustive()
    }
}

impl WorkerPool {
    /// A pool of workers running `tools worker` with the extra environment `env`.
    pub fn new(tools: PathBuf, env: Vec<(String, String)>) -> WorkerPool {
        WorkerPool {
            tools,
            env,
            idle: Mutex::new(Vec::new()),
            started: AtomicUsize::new(0),
        }
    }

    /// An idle worker (or none yet: one starts at the first request).
    pub fn lease(&self) -> Lease<'_> {
        let worker = self.idle.lock().ok().and_then(|mut idle| idle.pop());
        Lease { pool: self, worker }
    }

    /// Workers started so far.
    pub fn started(&self) -> usize {
        self.started.load(Ordering::Relaxed)
    }

    fn start(&self) -> anyhow::Result<Worker> {
        self.started.fetch_add(1, Ordering::Relaxed);
        Worker::start(&self.tools, &self.env)
            .with_context(|| format!("cannot start a worker ({} worker)", self.tools.display()))
    }
}

/// The use of one worker, given back to its pool when dropped.
pub struct Lease<'a> {
    pool: &'a WorkerPool,
    worker: Option<Worker>,
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        if let (Some(worker), Ok(mut idle)) = (self.worker.take(), self.pool.idle.lock()) {
            idle.push(worker);
        }
    }
}

impl Lease<'_> {
    /// Runs the `exec-*` command `args` (its arguments after `parec-tools`)
    /// within `timeout`; an error is the tester's (no worker, a refused
    /// request), never the program's.
    pub fn run(&mut self, args: &[String], timeout: Duration) -> anyhow::Result<WorkerRun> {
        let start = Instant::now();
        let deadline = start + timeout;
        let mut worker = self.send(&encode_request(args))?;
        let Exchange {
            end,
            stdout,
            stderr,
        } = worker
            .collect(deadline)
            .context("cannot read from a worker")?;
        let (status, phases) = match end {
            End::Replied(line) => match Reply::decode(&line).map_err(|e| anyhow!(e))? {
                Reply::Finished {
                    status,
                    phases,
                    retire,
                } => {
                    worker.requests += 1;
                    if !retire && worker.requests < REQUESTS_PER_WORKER {
                        self.worker = Some(worker);
                    }
                    // The wait status of a process that exited with `status`.
                    (Some(ExitStatus::from_raw(i32::from(status) << 8)), phases)
                }
                Reply::Refused(why) => {
                    self.worker = Some(worker);
                    bail!("the worker refused `{}`: {why}", args.join(" "));
                }
            },
            End::Exited(status) => (Some(status), None),
            End::TimedOut => (None, None),
        };
        Ok(WorkerRun {
            captured: Captured {
                status,
                stdout: stdout.kept,
                stderr: stderr.kept,
                elapsed: start.elapsed(),
            },
            phases,
        })
    }

    /// Sends `request` to the leased worker, or to a new one if there is
    /// none or it has gone (nothing of the request ran then).
    fn send(&mut self, request: &str) -> anyhow::Result<Worker> {
        if let Some(mut worker) = self.worker.take() {
            if worker.send(request.as_bytes()).is_ok() {
                return Ok(worker);
            }
        }
        let mut worker = self.pool.start()?;
        worker
            .send(request.as_bytes())
            .context("cannot send a request to a new worker")?;
        Ok(worker)
    }
}

/// A running worker process.
struct Worker {
    child: Child,
    /// Requests out, replies in (non-blocking).
    channel: UnixStream,
    /// The worker's descriptors 1 and 2 (non-blocking).
    stdout: ChildStdout,
    stderr: ChildStderr,
    /// Requests it finished.
    requests: usize,
}

/// How a request ended, with the output it wrote.
struct Exchange {
    end: End,
    stdout: Capture,
    stderr: Capture,
}

enum End {
    /// The worker replied with this line.
    Replied(Vec<u8>),
    /// The worker's process ended with this status before replying.
    Exited(ExitStatus),
    /// The deadline passed; the worker was killed.
    TimedOut,
}

impl Drop for Worker {
    fn drop(&mut self) {
        // An idle worker would exit when its socket closes; killing it
        // returns at once whatever state it is in.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Worker {
    fn start(tools: &Path, env: &[(String, String)]) -> io::Result<Worker> {
        let (channel, theirs) = UnixStream::pair()?;
        let mut child = Command::new(tools)
            .arg(SUBCOMMAND)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::from(OwnedFd::from(theirs)))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        // The `Command`, and with it this process's copy of the worker's
        // end of the socket, is gone: the socket closes when the worker ends.
        let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(io::Error::other("the worker has no output pipes"));
        };
        let worker = Worker {
            child,
            channel,
            stdout,
            stderr,
            requests: 0,
        };
        set_nonblocking(worker.stdout.as_raw_fd())?;
        set_nonblocking(worker.stderr.as_raw_fd())?;
        worker.channel.set_nonblocking(true)?;
        Ok(worker)
    }

    /// Writes all of `bytes` to the socket (without `SIGPIPE` if the worker
    /// has gone).
    fn send(&mut self, mut bytes: &[u8]) -> io::Result<()> {
        let fd = self.channel.as_raw_fd();
        while !bytes.is_empty() {
            // SAFETY: `bytes` is a valid buffer of its length; `fd` is our socket.
            let sent =
                unsafe { libc::send(fd, bytes.as_ptr().cast(), bytes.len(), libc::MSG_NOSIGNAL) };
            if sent >= 0 {
                bytes = &bytes[sent as usize..];
                continue;
            }
            let error = io::Error::last_os_error();
            match error.kind() {
                io::ErrorKind::Interrupted => {}
                io::ErrorKind::WouldBlock => {
                    poll(&mut [pollfd(fd, libc::POLLOUT)], Duration::from_secs(1))?;
                }
                _ => return Err(error),
            }
        }
        Ok(())
    }

    /// Reads the worker's output and its reply until the reply, its end,
    /// or `deadline` (then kills it).
    fn collect(&mut self, deadline: Instant) -> io::Result<Exchange> {
        let mut stdout = Capture::new(OUTPUT_CAP);
        let mut stderr = Capture::new(OUTPUT_CAP);
        let mut reply = Capture::new(usize::MAX);
        loop {
            if let Some(end) = reply.kept.iter().position(|&b| b == b'\n') {
                // Flushed before the reply: all of the output is in the pipes.
                reply.kept.truncate(end);
                return self.finish(End::Replied(reply.kept), stdout, stderr);
            }
            if !reply.open {
                // The command ended the process.
                let end = match wait_until(&mut self.child, deadline)? {
                    Some(status) => End::Exited(status),
                    None => End::TimedOut,
                };
                return self.finish(end, stdout, stderr);
            }
            let now = Instant::now();
            if now >= deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                return self.finish(End::TimedOut, stdout, stderr);
            }
            let mut fds = Vec::with_capacity(3);
            fds.push(pollfd(self.channel.as_raw_fd(), libc::POLLIN));
            if stdout.open {
                fds.push(pollfd(self.stdout.as_raw_fd(), libc::POLLIN));
            }
            if stderr.open {
                fds.push(pollfd(self.stderr.as_raw_fd(), libc::POLLIN));
            }
            poll(&mut fds, deadline - now)?;
            stdout.read_available(&mut self.stdout)?;
            stderr.read_available(&mut self.stderr)?;
            reply.read_available(&mut self.channel)?;
        }
    }

    /// The exchange that ended with `end`, with the rest of the output:
    /// what the pipes hold now (all of it, since the worker flushed before
    /// replying, or has ended).
    fn finish(
        &mut self,
        end: End,
        mut stdout: Capture,
        mut stderr: Capture,
    ) -> io::Result<Exchange> {
        stdout.read_available(&mut self.stdout)?;
        stderr.read_available(&mut self.stderr)?;
        Ok(Exchange {
            end,
            stdout,
            stderr,
        })
    }
}

/// The bytes read from one stream, at most `cap` kept.
struct Capture {
    kept: Vec<u8>,
    cap: usize,
    /// Not at its end yet.
    open: bool,
}

impl Capture {
    fn new(cap: usize) -> Capture {
        Capture {
            kept: Vec::new(),
            cap,
            open: true,
        }
    }

    /// Reads what `source` (non-blocking) has now, to its end if its
    /// writers are gone.
    fn read_available(&mut self, source: &mut impl Read) -> io::Result<()> {
        let mut buf = [0u8; 8192];
        while self.open {
            match source.read(&mut buf) {
                Ok(0) => self.open = false,
                Ok(n) => {
                    let room = self.cap.saturating_sub(self.kept.len());
                    self.kept.extend_from_slice(&buf[..n.min(room)]);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::ConnectionReset => self.open = false,
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

fn pollfd(fd: RawFd, events: libc::c_short) -> libc::pollfd {
    libc::pollfd {
        fd,
        events,
        revents: 0,
    }
}

/// Waits until one of `fds` is ready or `timeout` passes.
fn poll(fds: &mut [libc::pollfd], timeout: Duration) -> io::Result<()> {
    // Round up: a zero timeout would spin until the deadline.
    let millis = timeout.as_micros().div_ceil(1000).min(i32::MAX as u128) as libc::c_int;
    // SAFETY: `fds` is a valid array of its length.
    let ready = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, millis) };
    if ready < 0 {
        let error = io::Error::last_os_error();
        if error.kind() != io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
    Ok(())
}

fn set_nonblocking(fd: RawFd) -> io::Result<()> {
    // SAFETY: F_GETFL and F_SETFL on an open descriptor of ours.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0 || libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_round_trip() {
        let args = vec![
            "exec-jit".to_string(),
            "-Oz".into(),
            "a b\n\"c\".pare".into(),
        ];
        let line = encode_request(&args);
        assert_eq!(line.matches('\n').count(), 1, "one line per request");
        assert_eq!(decode_request(line.as_bytes()), Ok(args));
        assert!(decode_request(b"{\"args\": [1]}").is_err());
        assert!(decode_request(b"exec-jit").is_err());
    }

    #[test]
    fn replies_round_trip() {
        let finished = Reply::Finished {
            status: 101,
            phases: Some(JitPhases {
                front_end: Duration::from_micros(5),
                compile: Duration::from_millis(20),
                run: Duration::from_nanos(7),
            }),
            retire: false,
        };
        for reply in [finished, Reply::Refused("no such command".into())] {
            assert_eq!(
                Reply::decode(reply.encode().trim_end().as_bytes()),
                Ok(reply)
            );
        }
        assert!(Reply::decode(b"{\"status\": 300}").is_err());
    }

    #[test]
    fn requests_parse_as_the_exec_commands() {
        let parse = |args: &[&str]| Request::try_parse_from(args).map(|r| r.command);
        assert!(matches!(
            parse(&["exec-jit", "-O2", "--passes=gvn", "a.pare"]),
            Ok(ExecCommand::ExecJit(_))
        ));
        assert!(parse(&["exec-jit"]).is_err(), "files are required");
        assert!(parse(&["fuzz"]).is_err(), "only exec commands");
    }
}
