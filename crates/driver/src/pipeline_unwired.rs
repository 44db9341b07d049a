//! Stand-in for `pipeline.rs` while the Pare frontend's `load_program`,
//! `interp::run` and `lower::*` are not in this tree: the same functions,
//! reporting that this build cannot compile Pare sources. `.clif` inputs work.

use std::path::PathBuf;

use anyhow::anyhow;
use parec_passes::clif_module::ClifModule;

use crate::target::Target;
use crate::Failure;

fn unavailable(paths: &[PathBuf]) -> Failure {
    let first = paths
        .first()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    Failure::Error(anyhow!(
        "`{first}`: this build of parec has no Pare frontend; only .clif inputs are supported"
    ))
}

/// See `pipeline.rs`.
pub fn interpret(paths: &[PathBuf]) -> Result<i32, Failure> {
    Err(unavailable(paths))
}

/// See `pipeline.rs`.
pub fn lower_for_jit(paths: &[PathBuf]) -> Result<Vec<ClifModule>, Failure> {
    Err(unavailable(paths))
}

/// See `pipeline.rs`.
pub fn lower_for_aot(paths: &[PathBuf], _target: Target) -> Result<Vec<ClifModule>, Failure> {
    Err(unavailable(paths))
}
