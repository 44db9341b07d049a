//! Linking objects into static executables and running them.
//!
//! Executables are static and non-PIE (docs/DESIGN.md, toolchain facts: cranelift-object's
//! non-PIC code crashes in a PIE). The link is driven by `ld.lld-19` directly,
//! with the C start files and libraries located through the target's gcc
//! (`-print-file-name`):
//!
//! ```text
//! ld.lld-19 -m aarch64linux -static -o OUT crt1.o crti.o crtbeginT.o OBJS --icf=all \
//!     -L$G -L$L --start-group -lgcc -lgcc_eh -lc -lm --end-group crtend.o crtn.o
//! ```
//!
//! The C math library is there for Cranelift's libcalls: `ceil`, `floor`,
//! `nearest`, `trunc` and `fma` on floats become calls to `ceilf`, `floor`,
//! `nearbyintf`, ... where the ISA has no instruction for them (x86-64
//! without SSE 4.1). A static link takes only the members a program uses,
//! so programs that make no such call are the same bytes.
//!
//! aarch64 programs run under `qemu-aarch64-static` (no binfmt_misc here);
//! x86_64 programs run directly. A missing tool is an error that says how to
//! install it, never a panic.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::str::FromStr;

use anyhow::{anyhow, bail, Result};

use crate::target::Target;

/// The linker.
pub const LLD: &str = "ld.lld-19";
/// The aarch64 user-mode emulator.
pub const QEMU_AARCH64: &str = "qemu-aarch64-static";

/// The linker's identical-code-folding mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Icf {
    /// Fold every identical function (parec's default).
    #[default]
    All,
    /// Fold only functions whose address is not significant (`.llvm_addrsig`).
    Safe,
    None,
}

impl Icf {
    /// The name `--icf` takes.
    pub fn name(self) -> &'static str {
        match self {
            Icf::All => "all",
            Icf::Safe => "safe",
            Icf::None => "none",
        }
    }

    fn flag(self) -> &'static str {
        match self {
            Icf::All => "--icf=all",
            Icf::Safe => "--icf=safe",
            Icf::None => "--icf=none",
        }
    }
}

impl FromStr for Icf {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "all" => Ok(Icf::All),
            "safe" => Ok(Icf::Safe),
            "none" => Ok(Icf::None),
            other => Err(format!(
                "unknown ICF mode `{other}`; expected all, safe or none"
            )),
        }
    }
}

/// The C compiler driver used to locate start files and libraries.
fn gcc(target: Target) -> &'static str {
    match target {
        Target::Aarch64 => "aarch64-linux-gnu-gcc",
        Target::X86_64 => "gcc",
    }
}

/// The lld emulation name.
fn emulation(target: Target) -> &'static str {
    match target {
        Target::Aarch64 => "aarch64linux",
        Target::X86_64 => "elf_x86_64",
    }
}

/// Runs a tool, turning "not found" into an installation hint.
fn run_tool(cmd: &mut Command, tool: &str, package: &str) -> Result<Output> {
    cmd.output().map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            anyhow!("{tool} not found: run scripts/test.sh or apt-get install {package}")
        } else {
            anyhow!("cannot run {tool}: {e}")
        }
    })
}

/// The full path of a start file or library, as the target's gcc knows it.
fn find_file(target: Target, file: &str) -> Result<PathBuf> {
    let tool = gcc(target);
    let package = match target {
        Target::Aarch64 => "gcc-aarch64-linux-gnu libc6-dev-arm64-cross",
        Target::X86_64 => "gcc libc6-dev",
    };
    let out = run_tool(
        Command::new(tool).arg(format!("-print-file-name={file}")),
        tool,
        package,
    )?;
    let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    // gcc prints the bare name back when it cannot find the file.
    if !out.status.success() || !path.is_absolute() || !path.exists() {
        bail!("{tool} cannot find `{file}`: install {package}");
    }
    Ok(path)
}

/// Links `objects` into the static executable `out`.
pub fn link_executable(objects: &[PathBuf], out: &Path, target: Target, icf: Icf) -> Result<()> {
    let crt1 = find_file(target, "crt1.o")?;
    let crti = find_file(target, "crti.o")?;
    let crtn = find_file(target, "crtn.o")?;
    let crtbegin = find_file(target, "crtbeginT.o")?;
    let crtend = find_file(target, "crtend.o")?;
    let libc_dir = crt1
        .parent()
        .ok_or_else(|| anyhow!("no directory for {}", crt1.display()))?;
    let gcc_dir = crtbegin
        .parent()
        .ok_or_else(|| anyhow!("no directory for {}", crtbegin.display()))?;

    let mut cmd = Command::new(LLD);
    cmd.args(["-m", emulation(target), "-static", "-o"])
        .arg(out);
    cmd.arg(&crt1).arg(&crti).arg(&crtbegin);
    cmd.args(objects);
    cmd.arg(icf.flag());
    cmd.arg(format!("-L{}", gcc_dir.display()))
        .arg(format!("-L{}", libc_dir.display()));
    cmd.args([
        "--start-group",
        "-lgcc",
        "-lgcc_eh",
        "-lc",
        "-lm",
        "--end-group",
    ]);
    cmd.arg(&crtend).arg(&crtn);
    let output = run_tool(&mut cmd, LLD, "lld-19")?;
    if !output.status.success() {
        let message = String::from_utf8_lossy(&output.stderr);
        let near = ["R_AARCH64_ADR_PREL_LO21", "R_AARCH64_CONDBR19"];
        let hint = if near.iter().any(|r| message.contains(&format!("{r} out of range"))) {
            "\n(the objects use the tiny code model, whose `adr` and checks' branches to \
             the trap paths reach ±1 MiB: build them with --code-model small)"
        } else {
            ""
        };
        bail!("linking failed:\n{}{hint}", message.trim_end());
    }
    Ok(())
}

/// The command that runs an executable built for `target`.
pub fn run_command(exe: &Path, target: Target) -> Command {
    match target {
        Target::Aarch64 => {
            let mut cmd = Command::new(QEMU_AARCH64);
            cmd.arg(exe);
            cmd
        }
        Target::X86_64 => Command::new(exe),
    }
}

/// Runs an executable built for `target` with inherited stdio; returns its
/// exit status (128 + signal number if it was killed by a signal).
pub fn run_executable(exe: &Path, target: Target, args: &[String]) -> Result<i32> {
    let mut cmd = run_command(exe, target);
    cmd.args(args);
    let status = cmd.status().map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound && target == Target::Aarch64 {
            anyhow!(
                "{QEMU_AARCH64} not found: run scripts/test.sh or apt-get install qemu-user-static"
            )
        } else {
            anyhow!("cannot run {}: {e}", exe.display())
        }
    })?;
    Ok(exit_code(status))
}

/// Exit code of a finished process, shell-style for signals.
pub fn exit_code(status: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(1)
}
