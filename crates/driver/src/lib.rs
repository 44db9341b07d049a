//! parec: the compiler driver for Pare and for CLIF.
//!
//! Data flows one way (see DESIGN.md): sources → [`ClifModule`]s (the Pare
//! frontend's lowering, or [`clif_file`] for `.clif` text) → the CLIF pass
//! [`clif_pipeline`] → either the JIT ([`jit`]) or AOT objects ([`object`],
//! one per module, with `.llvm_addrsig`) → [`link`] (static, `ld.lld --icf`)
//! → run (under qemu for aarch64). [`clif_to_module`] is the single bridge
//! from ClifModules to cranelift-module; [`commands`] implements the CLI.
//!
//! [`ClifModule`]: parec_passes::clif_module::ClifModule

pub mod asm;
pub mod bench;
pub mod cgdata_cmd;
pub mod clif_file;
pub mod clif_pipeline;
pub mod clif_to_module;
pub mod commands;
pub mod difftest;
pub mod jit;
pub mod link;
pub mod object;
pub mod opt;
pub mod rounds;
pub mod target;

pub mod pipeline;

/// How a command failed.
#[derive(Debug)]
pub enum Failure {
    /// Source diagnostics, already rendered to stderr.
    Reported,
    /// Anything else; printed as `error: ...`.
    Error(anyhow::Error),
}

impl From<anyhow::Error> for Failure {
    fn from(e: anyhow::Error) -> Self {
        Failure::Error(e)
    }
}
