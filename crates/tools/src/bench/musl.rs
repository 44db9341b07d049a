//! The file-size anchor of `parec bench`: the C twins built with clang `-Oz`
//! against **musl**, static, stripped, with unused sections collected — what
//! a C programmer who wants a small static executable picks. The toolchain
//! is the `ziglang` wheel from PyPI (`python3 -m ziglang cc`: clang with
//! musl for every target), pinned to [`ZIGLANG_VERSION`] and installed into
//! a virtual environment by `scripts/ziglang.sh` (which `scripts/test.sh`
//! runs); this module finds that environment and builds with it. zig's
//! cache lives inside the environment, so once installed (and warmed up by
//! the script) nothing needs the network.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{anyhow, bail, Result};

use parec::io_error::reason as io_reason;

/// The ziglang version `scripts/ziglang.sh` installs (zig 0.14.1's clang
/// is LLVM 19, as `clang-19` of the glibc anchor).
pub const ZIGLANG_VERSION: &str = "0.14.1";

/// The twins' flags after `python3 -m ziglang` (besides `-o` and the
/// source).
pub const FLAGS: &[&str] = &[
    "cc",
    "-target",
    "aarch64-linux-musl",
    "-Oz",
    "-static",
    "-s",
    "-ffunction-sections",
    "-fdata-sections",
    "-Wl,--gc-sections",
];

/// The environment variable that overrides where the environment is.
pub const VENV_VAR: &str = "PAREC_ZIGLANG_VENV";

/// The installed toolchain.
#[derive(Clone, Debug)]
pub struct Toolchain {
    /// The environment's directory.
    pub venv: PathBuf,
    /// Its `bin/python3`.
    pub python: PathBuf,
}

impl Toolchain {
    /// The environment `scripts/ziglang.sh` installs: `$PAREC_ZIGLANG_VENV`,
    /// else `${XDG_CACHE_HOME:-$HOME/.cache}/parec/ziglang`.
    pub fn venv() -> Result<PathBuf> {
        if let Some(dir) = std::env::var_os(VENV_VAR).filter(|d| !d.is_empty()) {
            return Ok(PathBuf::from(dir));
        }
        let cache = match std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
            Some(dir) => PathBuf::from(dir),
            None => {
                let home = std::env::var_os("HOME")
                    .filter(|d| !d.is_empty())
                    .ok_or_else(|| anyhow!("neither {VENV_VAR}, XDG_CACHE_HOME nor HOME is set"))?;
                PathBuf::from(home).join(".cache")
            }
        };
        Ok(cache.join("parec").join("ziglang"))
    }

    /// The installed toolchain, checked to be [`ZIGLANG_VERSION`]; an error
    /// that says to run `scripts/test.sh` when it is missing or another
    /// version.
    pub fn find() -> Result<Toolchain> {
        let venv = Toolchain::venv()?;
        let toolchain = Toolchain {
            python: venv.join("bin").join("python3"),
            venv,
        };
        let fix = format!(
            "run scripts/test.sh (or scripts/ziglang.sh), which installs the clang + musl \
             toolchain, ziglang {ZIGLANG_VERSION}, into `{}`",
            toolchain.venv.display()
        );
        let output = toolchain.command().arg("version").output().map_err(|e| {
            anyhow!(
                "cannot run `{}`: {}: {fix}",
                toolchain.python.display(),
                io_reason(&e)
            )
        })?;
        let version = String::from_utf8_lossy(&output.stdout).trim().to_string();
        if !output.status.success() {
            bail!(
                "`{} -m ziglang version` failed: {}: {fix}",
                toolchain.python.display(),
                String::from_utf8_lossy(&output.stderr).trim_end()
            );
        }
        if version != ZIGLANG_VERSION {
            bail!("the clang + musl toolchain is ziglang {version}, not {ZIGLANG_VERSION}: {fix}");
        }
        Ok(toolchain)
    }

    /// `python3 -m ziglang`, with zig's cache inside the environment.
    pub fn command(&self) -> Command {
        let mut cmd = Command::new(&self.python);
        cmd.arg("-m")
            .arg("ziglang")
            .env("ZIG_GLOBAL_CACHE_DIR", self.venv.join("zig-cache"));
        cmd
    }

    /// Builds the C file `source` into the executable `exe` with [`FLAGS`].
    pub fn build(&self, source: &Path, exe: &Path) -> Result<()> {
        let output = self
            .command()
            .args(FLAGS)
            .arg("-o")
            .arg(exe)
            .arg(source)
            .output()
            .map_err(|e| anyhow!("cannot run `{}`: {}", self.python.display(), io_reason(&e)))?;
        if !output.status.success() {
            bail!(
                "`python3 -m ziglang {}` failed on `{}`:\n{}",
                FLAGS.join(" "),
                source.display(),
                String::from_utf8_lossy(&output.stderr).trim_end()
            );
        }
        Ok(())
    }
}

/// The command line the twins are built with, for reports.
pub fn command_line() -> String {
    format!(
        "python3 -m ziglang {} (ziglang {ZIGLANG_VERSION})",
        FLAGS.join(" ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The script installs the version this module checks for, and
    /// warms up with the twins' flags.
    #[test]
    fn the_install_script_pins_the_same_version_and_flags() {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/ziglang.sh");
        let text = std::fs::read_to_string(&script).unwrap();
        assert!(
            text.contains(&format!("\nziglang_version={ZIGLANG_VERSION}\n")),
            "{} does not pin ziglang {ZIGLANG_VERSION}",
            script.display()
        );
        let flags = FLAGS[1..].join(" ");
        let joined = text.replace(" \\\n        ", " ");
        assert!(
            joined.contains(&flags),
            "{} does not build with `{flags}`",
            script.display()
        );
    }
}
