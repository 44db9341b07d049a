//! Writing the passes' remarks: text on stderr (`--remarks`) and JSON
//! lines (`--remarks=FILE`).
//!
//! Each JSON line is one [`Remark`], its fields in a fixed order (pass,
//! kind, decision, module, function, reason, bytes, counts), so the file is
//! byte-identical for identical builds whatever `-j`. docs/REMARKS.md
//! documents the fields and every pass's decisions, and
//! `docs/remarks.schema.json` is the JSON Schema of one line.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Result;
use parec_passes::remark::Remark;

use crate::io_error;

/// The remark as one line of JSON (no newline).
pub fn json_line(remark: &Remark) -> String {
    let mut line = String::from("{");
    let fields: [(&str, String); 6] = [
        ("pass", json_string(remark.pass)),
        ("kind", json_string(remark.kind.name())),
        ("decision", json_string(remark.decision)),
        ("module", json_string(&remark.module)),
        ("function", json_string(&remark.function)),
        ("reason", json_string(&remark.reason)),
    ];
    for (name, value) in fields {
        let _ = write!(line, "\"{name}\":{value},");
    }
    match remark.bytes {
        Some(bytes) => {
            let _ = write!(line, "\"bytes\":{bytes},");
        }
        None => line.push_str("\"bytes\":null,"),
    }
    line.push_str("\"counts\":{");
    for (i, (name, value)) in summed_counts(remark).into_iter().enumerate() {
        if i > 0 {
            line.push(',');
        }
        let _ = write!(line, "{}:{value}", json_string(name));
    }
    line.push_str("}}");
    line
}

/// The counts of `remark`, one entry per name (repeated names summed), in
/// the order first given.
fn summed_counts(remark: &Remark) -> Vec<(&'static str, u64)> {
    let mut counts: Vec<(&'static str, u64)> = Vec::new();
    for &(name, value) in &remark.counts {
        match counts.iter_mut().find(|(n, _)| *n == name) {
            Some((_, total)) => *total += value,
            None => counts.push((name, value)),
        }
    }
    counts
}

fn json_string(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

/// Writes `remarks` to `path` as JSON lines.
pub fn write_json_lines<'a>(
    path: &Path,
    remarks: impl IntoIterator<Item = &'a Remark>,
) -> Result<()> {
    let mut text = String::new();
    for remark in remarks {
        text.push_str(&json_line(remark));
        text.push('\n');
    }
    io_error::write(path, text.as_bytes())
}

/// Prints `remarks` to stderr, one `remark: ...` line each.
pub fn print_text<'a>(remarks: impl IntoIterator<Item = &'a Remark>) {
    let mut text = String::new();
    for remark in remarks {
        text.push_str(&format!("remark: {remark}\n"));
    }
    io_error::eprint(&text);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_line_has_every_field_in_order() {
        let remark = Remark::passed("merge", "merged", "m::f<\"q\">", "thunk")
            .in_module("m")
            .bytes(-3)
            .count("merged", 1)
            .count("merged", 1);
        assert_eq!(
            json_line(&remark),
            r#"{"pass":"merge","kind":"passed","decision":"merged","module":"m","function":"m::f<\"q\">","reason":"thunk","bytes":-3,"counts":{"merged":2}}"#
        );
        let value: serde_json::Value = serde_json::from_str(&json_line(&remark)).unwrap();
        assert_eq!(value["counts"]["merged"], 2);
    }

    #[test]
    fn unknown_bytes_are_null() {
        let remark = Remark::missed("gvn", "skipped", "f", "why");
        assert!(json_line(&remark).contains(r#""bytes":null,"counts":{}"#));
    }
}
