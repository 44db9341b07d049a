//! Linking objects into static executables and running them.
//!
//! Executables are static and non-PIE (docs/DESIGN.md, toolchain facts: cranelift-object's
//! non-PIC code crashes in a PIE). The link is driven by `ld.lld-19` directly,
//! in one of two ways, as the runtime among the objects stands
//! ([`Runtime`], settled by the build):
//!
//! **Freestanding** (no C library): the objects alone, entered at the
//! runtime's `_start`, laid out by [`FREESTANDING_SCRIPT`]:
//!
//! ```text
//! ld.lld-19 -m aarch64linux -static -o OUT OBJS --icf=all -e _start --gc-sections \
//!     --build-id=none -z norelro [--strip-all] -T freestanding.ld
//! ```
//!
//! `--gc-sections` drops every function and data object nothing reaches
//! from the entry point (each is a section of its own); the script puts
//! the ELF and program headers, `.rodata` and `.text` in one read-only,
//! executable segment and `.data` and `.bss` in one writable segment (never
//! both writable and executable: W^X), adds `PT_GNU_STACK` (a stack that is
//! not executable) and nothing else: no `PT_PHDR`, no interpreter, no
//! `.comment`, `.note*` or `.eh_frame`. The writable segment starts on a
//! new page at the same offset within the page as in the file, so no
//! padding separates them in the file. `--strip-all` (`-s`) leaves the
//! symbol tables out; the section headers stay (lld cannot omit them).
//!
//! **With the C library** (programs that call C), the start files and
//! libraries located through the target's gcc (`-print-file-name`):
//!
//! ```text
//! ld.lld-19 -m aarch64linux -static -o OUT crt1.o crti.o crtbeginT.o OBJS --icf=all \
//!     [--strip-all] -L$G -L$L --start-group -lgcc -lgcc_eh -lc -lm --end-group crtend.o crtn.o
//! ```
//!
//! The C math library is there for Cranelift's libcalls: `ceil`, `floor`,
//! `nearest`, `trunc` and `fma` on floats become calls to `ceilf`, `floor`,
//! `nearbyintf`, ... where the ISA has no instruction for them (x86-64
//! without SSE 4.1). A static link takes only the members a program uses,
//! so programs that make no such call are the same bytes. (Pare has no
//! floats; a freestanding `.clif` program that makes such a call fails to
//! link, with a hint.)
//!
//! aarch64 programs run under `qemu-aarch64-static` (no binfmt_misc here);
//! x86_64 programs run directly. A missing tool is an error that says how to
//! install it, never a panic.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::str::FromStr;

use anyhow::{anyhow, bail, Result};

use pare_frontend::lower::{Runtime, ENTRY_POINT};

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

/// How objects become an executable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkOptions {
    pub target: Target,
    pub icf: Icf,
    /// What the runtime among the objects stands on.
    pub runtime: Runtime,
    /// Leave the symbol tables out (`-s`/`--strip`).
    pub strip: bool,
}

/// Links `objects` into the static executable `out`.
pub fn link_executable(objects: &[PathBuf], out: &Path, opts: &LinkOptions) -> Result<()> {
    let mut cmd = Command::new(LLD);
    cmd.args(["-m", emulation(opts.target), "-static", "-o"])
        .arg(out);
    let scratch = tempfile::Builder::new()
        .prefix("parec-link-")
        .tempdir()
        .map_err(|e| anyhow!("cannot create a temporary directory: {e}"))?;
    match opts.runtime {
        Runtime::Libc => with_libc(&mut cmd, objects, opts)?,
        Runtime::Freestanding => freestanding(
            &mut cmd,
            objects,
            opts,
            &scratch.path().join("freestanding.ld"),
        )?,
    }
    let output = run_tool(&mut cmd, LLD, "lld-19")?;
    if !output.status.success() {
        let message = String::from_utf8_lossy(&output.stderr);
        let near = ["R_AARCH64_ADR_PREL_LO21", "R_AARCH64_CONDBR19"];
        let hint = if near
            .iter()
            .any(|r| message.contains(&format!("{r} out of range")))
        {
            "\n(the objects use the tiny code model, whose `adr` and checks' branches to \
             the trap paths reach ±1 MiB: build them with --code-model small)"
        } else if opts.runtime == Runtime::Freestanding && message.contains("undefined symbol") {
            "\n(a freestanding executable has no C library: build with --runtime libc \
             to call C functions, Cranelift's libcalls included)"
        } else {
            ""
        };
        bail!("linking failed:\n{}{hint}", message.trim_end());
    }
    Ok(())
}

/// The arguments of a link against the C library: its start files around
/// the objects, its libraries after them.
fn with_libc(cmd: &mut Command, objects: &[PathBuf], opts: &LinkOptions) -> Result<()> {
    let target = opts.target;
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
    cmd.arg(&crt1).arg(&crti).arg(&crtbegin);
    cmd.args(objects);
    cmd.arg(opts.icf.flag());
    if opts.strip {
        cmd.arg("--strip-all");
    }
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
    Ok(())
}

/// The linker script of freestanding executables (module doc). The base
/// address is lld's default for both targets; the page size is the
/// target's largest (64 KiB on aarch64, 4 KiB on x86_64).
pub const FREESTANDING_SCRIPT: &str = "\
PHDRS {
  text PT_LOAD FILEHDR PHDRS FLAGS(5);
  data PT_LOAD FLAGS(6);
  stack PT_GNU_STACK FLAGS(6);
}
SECTIONS {
  . = 0x200000 + SIZEOF_HEADERS;
  .rodata : { *(.rodata .rodata.*) } :text
  .text : { *(.text .text.*) } :text
  . = ALIGN(CONSTANT(MAXPAGESIZE)) + (. & (CONSTANT(MAXPAGESIZE) - 1));
  .data : { *(.data .data.*) } :data
  .bss : { *(.bss .bss.*) *(COMMON) } :data
  /DISCARD/ : { *(.comment) *(.note .note.*) *(.eh_frame .eh_frame_hdr) }
}
";

/// The arguments of a freestanding link (module doc): the objects alone;
/// the linker script is written to `script`.
fn freestanding(
    cmd: &mut Command,
    objects: &[PathBuf],
    opts: &LinkOptions,
    script: &Path,
) -> Result<()> {
    crate::io_error::write(script, FREESTANDING_SCRIPT.as_bytes())?;
    cmd.args(objects);
    cmd.arg(opts.icf.flag());
    cmd.args([
        "-e",
        ENTRY_POINT,
        "--gc-sections",
        "--build-id=none",
        "-z",
        "norelro",
    ]);
    if opts.strip {
        cmd.arg("--strip-all");
    }
    cmd.arg("-T").arg(script);
    Ok(())
}

/// What the runtime among `objects` stands on: freestanding if one of them
/// defines the freestanding runtime's entry point (`parec link`, which is
/// given objects only; `parec build` knows it from the front end).
pub fn runtime_of_objects(objects: &[PathBuf]) -> Result<Runtime> {
    use object::{Object as _, ObjectSymbol as _};
    for path in objects {
        let bytes = std::fs::read(path).map_err(|e| {
            anyhow!(
                "cannot read the object `{}`: {}",
                path.display(),
                crate::io_error::reason(&e)
            )
        })?;
        let file = object::File::parse(&*bytes)
            .map_err(|e| anyhow!("`{}` is not an object file: {e}", path.display()))?;
        let defines_entry = file
            .symbols()
            .any(|s| s.is_definition() && s.name() == Ok(ENTRY_POINT));
        if defines_entry {
            return Ok(Runtime::Freestanding);
        }
    }
    Ok(Runtime::Libc)
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
