//! The report and the comparison as JSON, for tools (`--json`).
//!
//! ```text
//! { "inputs": [...], "executable": bool, "arch": "aarch64",
//!   "total": bytes, "own": bytes,
//!   "kinds":    [{"name", "bytes", "shared", "functions"}],
//!   "modules":  [...same...], "generics": [...same...],
//!   "functions": [{"name", "module", "kind", "generic", "bytes", "copies",
//!                  "shared_with", "trap_bytes", "address"}],
//!   "sections": [{"name", "bytes", "class"}],
//!   "stripped": bool,
//!   "file": {"bytes", "zero_initialised",
//!            "inputs": [{"path", "bytes", "stripped"}],
//!            "parts": [{"name", "bytes", "sections": [name]}]} }
//! ```
//!
//! Every function is listed, the C library's included; every section, by
//! class and name; the file parts add up to `file.bytes`. The meaning of
//! each field is in the module doc of [`super`]. A comparison is
//! `{"old_inputs", "new_inputs", "total": {"old", "new", "delta"}, "own":
//! ..., "file": ..., "file_parts": [delta], "kinds": [delta], "functions":
//! [delta]}` with a delta `{"name", "module", "kind", "old", "new",
//! "delta", "change", "shared_with"}` (a file part's kind is `file`).

use serde_json::{json, Value};

use super::compare::{Comparison, Delta, Totals};
use super::{FileReport, FunctionRow, GroupRow, Report};

/// The report as pretty-printed JSON, with a final newline.
pub fn report(report: &Report) -> String {
    let value = json!({
        "inputs": report.inputs,
        "executable": report.executable,
        "arch": report.arch.name(),
        "total": report.total,
        "own": report.own,
        "kinds": report.kinds.iter().map(group).collect::<Vec<_>>(),
        "modules": report.modules.iter().map(group).collect::<Vec<_>>(),
        "generics": report.generics.iter().map(group).collect::<Vec<_>>(),
        "functions": report.functions.iter().map(function).collect::<Vec<_>>(),
        "sections": report.sections.iter().map(|s| json!({
            "name": s.name,
            "bytes": s.size,
            "class": s.class.name(),
        })).collect::<Vec<_>>(),
        "stripped": report.file.stripped(),
        "file": file(&report.file),
    });
    pretty(&value)
}

fn file(file: &FileReport) -> Value {
    json!({
        "bytes": file.bytes,
        "zero_initialised": file.zero_initialised,
        "inputs": file.inputs.iter().map(|i| json!({
            "path": i.path,
            "bytes": i.bytes,
            "stripped": i.stripped,
        })).collect::<Vec<_>>(),
        "parts": file.parts.iter().map(|p| json!({
            "name": p.part.name(),
            "bytes": p.bytes,
            "sections": p.sections,
        })).collect::<Vec<_>>(),
    })
}

fn group(row: &GroupRow) -> Value {
    json!({
        "name": row.name,
        "bytes": row.bytes,
        "shared": row.shared,
        "functions": row.functions,
    })
}

fn function(row: &FunctionRow) -> Value {
    json!({
        "name": row.name,
        "module": row.module,
        "kind": row.kind.name(),
        "generic": row.generic,
        "bytes": row.bytes,
        "copies": row.copies,
        "shared_with": row.shared_with,
        "trap_bytes": row.trap_bytes,
        "address": row.address,
    })
}

/// The comparison as pretty-printed JSON, with a final newline.
pub fn comparison(diff: &Comparison) -> String {
    let value = json!({
        "old_inputs": diff.old_inputs,
        "new_inputs": diff.new_inputs,
        "total": totals(&diff.total),
        "own": totals(&diff.own),
        "file": totals(&diff.file),
        "file_parts": diff.file_parts.iter().map(delta).collect::<Vec<_>>(),
        "kinds": diff.kinds.iter().map(delta).collect::<Vec<_>>(),
        "functions": diff.functions.iter().map(delta).collect::<Vec<_>>(),
    });
    pretty(&value)
}

fn totals(t: &Totals) -> Value {
    json!({"old": t.old, "new": t.new, "delta": t.delta()})
}

fn delta(d: &Delta) -> Value {
    json!({
        "name": d.name,
        "module": d.module,
        "kind": d.kind,
        "old": d.old,
        "new": d.new,
        "delta": d.delta(),
        "change": d.change().name(),
        "shared_with": d.shared_with,
    })
}

fn pretty(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(value).expect("JSON values always serialize");
    text.push('\n');
    text
}
