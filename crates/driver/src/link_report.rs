//! What the linker made of a merging build ([GFM] Table 3; references in
//! docs/DESIGN.md).
//!
//! After linking, the `.Tgm` bodies in the executable's symbol table are
//! counted with how many of them the linker folded (equal addresses); a
//! merged function whose body was not folded is a *mismatch*: it became a
//! thunk for nothing.

use std::path::Path;

use ::object::{Object as _, ObjectSymbol as _};
use anyhow::{anyhow, Result};
use parec_passes::merge::{self, MergeStats};

/// The post-link merge report of the executable `exe`: `mode` says where
/// the merge plan came from, `stats` what merging did.
pub fn merge_report(exe: &Path, mode: &str, stats: &MergeStats) -> Result<String> {
    let bytes = crate::io_error::read_bytes(exe)?;
    let file = ::object::File::parse(&*bytes)
        .map_err(|e| anyhow!("cannot read `{}`: {e}", exe.display()))?;
    let mut bodies: Vec<u64> = file
        .symbols()
        .filter(|s| s.name().is_ok_and(|n| n.ends_with(merge::BODY_SUFFIX)))
        .map(|s| s.address())
        .collect();
    bodies.sort_unstable();
    let created = bodies.len();
    let mut unfolded = 0;
    for (i, &a) in bodies.iter().enumerate() {
        let shared = (i > 0 && bodies[i - 1] == a) || bodies.get(i + 1) == Some(&a);
        if !shared {
            unfolded += 1;
        }
    }
    let mut distinct = bodies.clone();
    distinct.dedup();
    let folded = created - distinct.len();
    let total = stats.functions.max(1) as f64;
    Ok(format!(
        "merge ({mode}): {} functions, {} merged into .Tgm bodies ({:.1}%), {} bodies folded by the linker, {} mismatched ({:.1}% of functions, {:.1}% of merged)",
        stats.functions,
        stats.merged,
        100.0 * stats.merged as f64 / total,
        folded,
        unfolded,
        100.0 * unfolded as f64 / total,
        100.0 * unfolded as f64 / stats.merged.max(1) as f64,
    ))
}
