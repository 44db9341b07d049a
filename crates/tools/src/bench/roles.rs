//! The role table of `parec bench`: the program's own code by instruction
//! role ([`parec_passes::machine::roles`]) under parec's main
//! configurations, beside clang's code of the C twins classified the same
//! way.
//!
//! A parec cell's roles are those of its executable's own code (`parec
//! size --roles`: every block once, as the linker left it). clang's are
//! those of the twin's object (`twin.o`): all of its code is the
//! program's, and no library code is mixed in. The table sums the
//! programs with no failed cell; the `gap` column is the last parec column
//! shown minus clang.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Result;
use parec::size::roles::{self as size_roles, roles_json};
use parec_passes::machine::roles::{Role, RoleBytes};
use serde_json::Value;

use super::{Config, Report};

/// The configurations the table shows, when measured (and clang).
const SHOWN: [&str; 6] = [
    "Cranelift",
    "-O2",
    "-Oz",
    "-Oz 2 rounds",
    "-Oz lto",
    "-Oz 2 rounds lto",
];

/// The roles of one cell's code: the executable's own code, or for clang
/// the twin's object in `dir`.
pub fn of_cell(config: &Config, dir: &Path, exe: &Path) -> Result<Option<RoleBytes>> {
    let input = match config {
        Config::Pare { .. } => exe.to_path_buf(),
        Config::Clang => dir.join(super::TWIN_OBJECT),
        // A stripped executable: no symbol tells its own code from musl's.
        Config::Musl => return Ok(None),
    };
    Ok(Some(size_roles::of_files(&[input])?.roles.total))
}

/// The role table as markdown (empty if no program is complete or no
/// configuration has roles).
pub fn table(report: &Report) -> String {
    let rows = report.complete_rows();
    let Some(clang) = report.index_of(super::CLANG_NAME) else {
        return String::new();
    };
    let columns: Vec<usize> = (0..report.configs.len())
        .filter(|&c| c == clang || SHOWN.contains(&report.configs[c].as_str()))
        .filter(|&c| rows.iter().all(|&p| report.cells[p][c].roles.is_some()))
        .collect();
    if rows.is_empty() || columns.len() < 2 || !columns.contains(&clang) {
        return String::new();
    }
    let totals: Vec<RoleBytes> = columns.iter().map(|&c| sum(report, &rows, c)).collect();
    let last_parec = totals.len() - 2;
    let mut out = String::from(
        "\nThe program's own code by instruction role (bytes summed over the programs; parec: the \
         executable's own code, clang: the twin's object; `parec size --roles`):\n\n| role |",
    );
    for &c in &columns {
        let _ = write!(out, " {} |", report.configs[c]);
    }
    let _ = writeln!(
        out,
        " gap ({} − clang) |",
        report.configs[columns[last_parec]]
    );
    out.push_str("|---|");
    for _ in 0..=columns.len() {
        out.push_str("---:|");
    }
    out.push('\n');
    let clang_roles = &totals[totals.len() - 1];
    for role in Role::ALL {
        if totals.iter().all(|t| t.get(role) == 0) {
            continue;
        }
        let _ = write!(out, "| {} |", role.name());
        for t in &totals {
            let _ = write!(out, " {} |", t.get(role));
        }
        let gap = totals[last_parec].get(role) as i64 - clang_roles.get(role) as i64;
        let _ = writeln!(out, " {gap:+} |");
    }
    let _ = write!(out, "| total |");
    for t in &totals {
        let _ = write!(out, " {} |", t.total());
    }
    let gap = totals[last_parec].total() as i64 - clang_roles.total() as i64;
    let _ = writeln!(out, " {gap:+} |");
    out
}

/// Configuration `c`'s roles summed over `rows`.
fn sum(report: &Report, rows: &[usize], c: usize) -> RoleBytes {
    let mut total = RoleBytes::default();
    for &p in rows {
        if let Some(roles) = &report.cells[p][c].roles {
            total.add_all(roles);
        }
    }
    total
}

/// A cell's roles as JSON (`null` without).
pub fn cell_json(roles: Option<&RoleBytes>) -> Value {
    roles.map_or(Value::Null, roles_json)
}

/// Configuration `c`'s roles summed over the complete rows, as JSON.
pub fn total_json(report: &Report, c: usize) -> Value {
    let rows = report.complete_rows();
    if rows.iter().any(|&p| report.cells[p][c].roles.is_none()) || rows.is_empty() {
        return Value::Null;
    }
    roles_json(&sum(report, &rows, c))
}
