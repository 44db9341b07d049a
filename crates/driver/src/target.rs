//! Compilation targets and their Cranelift ISAs.
//!
//! parec builds static Linux executables for aarch64 (the point of the
//! project; run under `qemu-aarch64-static`) and x86_64 (the host). Every ISA
//! is built with `is_pic=false`: executables are linked static and non-PIE, and
//! the JIT requires it.

use std::str::FromStr;

use anyhow::{anyhow, Result};
use cranelift_codegen::isa::{self, CallConv, OwnedTargetIsa};
use cranelift_codegen::settings::{self, Configurable};
use target_lexicon::Triple;

use crate::clif_pipeline::OptLevel;

/// A target parec can build executables for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Target {
    #[default]
    Aarch64,
    X86_64,
}

impl Target {
    pub fn triple_str(self) -> &'static str {
        match self {
            Target::Aarch64 => "aarch64-unknown-linux-gnu",
            Target::X86_64 => "x86_64-unknown-linux-gnu",
        }
    }

    pub fn triple(self) -> Triple {
        // Both strings are valid triples known to target-lexicon.
        Triple::from_str(self.triple_str()).unwrap_or_else(|_| Triple::host())
    }

    /// The architecture, as the Pare lowering names it.
    pub fn arch(self) -> pare_frontend::lower::Arch {
        match self {
            Target::Aarch64 => pare_frontend::lower::Arch::Aarch64,
            Target::X86_64 => pare_frontend::lower::Arch::X86_64,
        }
    }

    /// The platform C calling convention (for `main` and `extern` functions).
    pub fn c_call_conv(self) -> CallConv {
        CallConv::triple_default(&self.triple())
    }

    /// The Cranelift ISA for AOT compilation at `level`.
    pub fn isa(self, level: OptLevel) -> Result<OwnedTargetIsa> {
        self.isa_with_cfg_info(level, true)
    }

    /// Like [`Target::isa`], choosing whether Cranelift records block starts
    /// (`machine_code_cfg_info`, which the outliner needs; tests check that
    /// it does not change the code).
    pub fn isa_with_cfg_info(self, level: OptLevel, cfg_info: bool) -> Result<OwnedTargetIsa> {
        let builder = isa::lookup(self.triple())
            .map_err(|e| anyhow!("Cranelift cannot target {}: {e}", self.triple_str()))?;
        builder
            .finish(aot_flags(level, cfg_info)?)
            .map_err(|e| anyhow!("cannot configure Cranelift for {}: {e}", self.triple_str()))
    }
}

impl FromStr for Target {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "aarch64" | "aarch64-unknown-linux-gnu" | "aarch64-linux-gnu" => Ok(Target::Aarch64),
            "x86_64" | "x86_64-unknown-linux-gnu" | "x86_64-linux-gnu" => Ok(Target::X86_64),
            other => Err(format!(
                "unsupported target `{other}`; supported: aarch64-unknown-linux-gnu, x86_64-unknown-linux-gnu"
            )),
        }
    }
}

/// Cranelift settings every parec compilation shares: the level's
/// `opt_level`, non-PIC code (static executables, an in-process JIT), and the
/// verifier in debug builds.
fn base_settings(level: OptLevel) -> Result<settings::Builder> {
    let mut b = settings::builder();
    b.set("opt_level", level.cranelift_opt_level())?;
    b.set("is_pic", "false")?;
    b.set(
        "enable_verifier",
        if cfg!(debug_assertions) {
            "true"
        } else {
            "false"
        },
    )?;
    Ok(b)
}

/// Shared Cranelift flags of AOT builds.
fn aot_flags(level: OptLevel, cfg_info: bool) -> Result<settings::Flags> {
    let mut b = base_settings(level)?;
    // Pare code never unwinds; no `.eh_frame` is emitted, so skip the work.
    b.set("unwind_info", "false")?;
    // Block starts for the machine outliner's lifter (`parec_passes::outline`).
    // Only recorded: the code bytes are the same with and without it.
    b.set(
        "machine_code_cfg_info",
        if cfg_info { "true" } else { "false" },
    )?;
    Ok(settings::Flags::new(b))
}

/// The host ISA, configured for the JIT (`is_pic=false`, long-range libcalls).
pub fn host_jit_isa(level: OptLevel) -> Result<OwnedTargetIsa> {
    let mut b = base_settings(level)?;
    b.set("use_colocated_libcalls", "false")?;
    let isa_builder = cranelift_native::builder()
        .map_err(|e| anyhow!("the host machine is not supported: {e}"))?;
    isa_builder
        .finish(settings::Flags::new(b))
        .map_err(|e| anyhow!("cannot configure Cranelift for the host: {e}"))
}
