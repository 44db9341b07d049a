//! The report as tables for a terminal.
//!
//! The file table puts every byte of the input files in one part (the
//! sections of each class listed beside it), adding up to the files' size.
//! The kind table covers all code, with percentages of the total; the
//! module, generic and function tables cover the program's own code (all
//! code with `--all`), with percentages of the own code. Marks after a
//! function: `shared with N` (folded or aliased code, counted once in
//! totals), `N copies` (equal names at different addresses), `trap N`
//! (bytes of trap stubs inside).

use std::fmt::Write as _;

use super::compare::{Change, Comparison, Delta};
use super::file::{Part, PartBytes};
use super::{FileReport, FunctionRow, GroupRow, Kind, Report};

/// Section names listed beside a file part at most.
const PART_SECTIONS: usize = 4;

/// The report: header, file parts, kinds, modules, generics, functions,
/// sections.
/// `top` limits the generic and function tables (0: no limit); `all`
/// includes the C library's modules and functions.
pub fn report(report: &Report, top: usize, all: bool) -> String {
    let mut out = String::new();
    let what = if report.executable {
        "executable"
    } else if report.inputs.len() == 1 {
        "object"
    } else {
        "objects"
    };
    let _ = writeln!(
        out,
        "parec size: {} ({} {what})",
        report.inputs.join(" "),
        report.arch.name()
    );
    let _ = writeln!(out, "file: {}", file_summary(&report.file));
    if report.file.inputs.iter().all(|i| i.stripped) {
        let _ = writeln!(
            out,
            "code: {} bytes; the program's own: unknown (no symbols name the code)",
            report.total
        );
    } else {
        let _ = writeln!(
            out,
            "code: {} bytes; the program's own: {} bytes ({})",
            report.total,
            report.own,
            percent(report.own, report.total)
        );
    }

    out.push('\n');
    file_table(&mut out, &report.file);

    out.push('\n');
    let total_functions = report.functions.len();
    let kind_rows: Vec<&GroupRow> = report.kinds.iter().collect();
    group_table(&mut out, "kind", &kind_rows, report.total, "% all", 0);
    let _ = writeln!(
        out,
        "{:<24} {:>9} {:>7} {:>9}",
        "total",
        report.total,
        percent(report.total, report.total),
        total_functions
    );

    let own_only = |g: &&GroupRow| all || g.name != super::LIBC_MODULE;
    let modules: Vec<&GroupRow> = report.modules.iter().filter(own_only).collect();
    out.push('\n');
    group_table(&mut out, "module", &modules, report.own, "% own", 0);

    if !report.generics.is_empty() {
        let generics: Vec<&GroupRow> = report.generics.iter().collect();
        out.push('\n');
        group_table(&mut out, "generic", &generics, report.own, "% own", top);
    }

    let functions: Vec<&FunctionRow> = report
        .functions
        .iter()
        .filter(|f| all || f.kind != Kind::Libc)
        .collect();
    out.push('\n');
    function_table(&mut out, &functions, report.own, top);

    out.push('\n');
    let _ = writeln!(out, "{:<24} {:>9}  class", "section", "bytes");
    for s in &report.sections {
        let _ = writeln!(out, "{:<24} {:>9}  {}", s.name, s.size, s.class.name());
    }
    out
}

/// `638840 bytes`, and which inputs are stripped.
fn file_summary(file: &FileReport) -> String {
    let mut text = format!("{} bytes", file.bytes);
    if file.inputs.len() > 1 {
        let _ = write!(text, " in {} files", file.inputs.len());
    }
    let stripped: Vec<&str> = file
        .inputs
        .iter()
        .filter(|i| i.stripped)
        .map(|i| i.path.as_str())
        .collect();
    if stripped.len() == file.inputs.len() {
        text.push_str("; stripped (no symbol table: code is attributed per section)");
    } else if !stripped.is_empty() {
        let _ = write!(
            text,
            "; stripped (no symbol table: code is attributed per section): {}",
            stripped.join(" ")
        );
    }
    text
}

/// Every part of the files, adding up to their size; then the memory of
/// the zero-initialised sections.
fn file_table(out: &mut String, file: &FileReport) {
    let _ = writeln!(
        out,
        "{:<24} {:>9} {:>7}  sections",
        "file part", "bytes", "% file"
    );
    for part in &file.parts {
        let line = format!(
            "{:<24} {:>9} {:>7}  {}",
            part.part.name(),
            part.bytes,
            percent(part.bytes, file.bytes),
            part_sections(part)
        );
        let _ = writeln!(out, "{}", line.trim_end());
    }
    let _ = writeln!(
        out,
        "{:<24} {:>9} {:>7}",
        "total",
        file.bytes,
        percent(file.bytes, file.bytes)
    );
    if file.zero_initialised > 0 {
        let _ = writeln!(
            out,
            "zero-initialised: {} bytes of memory, no file bytes",
            file.zero_initialised
        );
    }
}

/// The sections of a part of a class, the first few by name (a section
/// that is a part of its own is named already).
fn part_sections(part: &PartBytes) -> String {
    if matches!(part.part, Part::Section(_)) {
        return String::new();
    }
    let mut text = part
        .sections
        .iter()
        .take(PART_SECTIONS)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(" ");
    if part.sections.len() > PART_SECTIONS {
        let _ = write!(text, " ({} more)", part.sections.len() - PART_SECTIONS);
    }
    text
}

/// `part` as a percentage of `whole`, one decimal.
fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "-".to_string();
    }
    format!("{:.1}%", 100.0 * part as f64 / whole as f64)
}

/// A kind, module or generic table; `top` rows at most (0: all).
fn group_table(
    out: &mut String,
    title: &str,
    rows: &[&GroupRow],
    whole: u64,
    percent_title: &str,
    top: usize,
) {
    let functions_title = if title == "generic" {
        "instances"
    } else {
        "functions"
    };
    let _ = writeln!(
        out,
        "{title:<24} {:>9} {percent_title:>7} {functions_title:>9} {:>9}",
        "bytes", "shared"
    );
    let shown = if top == 0 {
        rows.len()
    } else {
        top.min(rows.len())
    };
    for row in &rows[..shown] {
        let shared = if row.shared > 0 {
            row.shared.to_string()
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "{:<24} {:>9} {:>7} {:>9} {:>9}",
            row.name,
            row.bytes,
            percent(row.bytes, whole),
            row.functions,
            shared
        );
    }
    if shown < rows.len() {
        let rest: u64 = rows[shown..].iter().map(|r| r.bytes).sum();
        let _ = writeln!(
            out,
            "{:<24} {:>9}   ({} more rows)",
            "...",
            rest,
            rows.len() - shown
        );
    }
}

/// The function table, largest first.
fn function_table(out: &mut String, rows: &[&FunctionRow], whole: u64, top: usize) {
    let _ = writeln!(
        out,
        "{:>9} {:>7}  {:<12} {:<16} function",
        "bytes", "% own", "kind", "module"
    );
    let shown = if top == 0 {
        rows.len()
    } else {
        top.min(rows.len())
    };
    for row in &rows[..shown] {
        let _ = writeln!(
            out,
            "{:>9} {:>7}  {:<12} {:<16} {}{}",
            row.bytes,
            percent(row.bytes, whole),
            row.kind.name(),
            row.module,
            row.name,
            marks(row)
        );
    }
    if shown < rows.len() {
        let rest: u64 = rows[shown..].iter().map(|r| r.bytes).sum();
        let _ = writeln!(
            out,
            "{rest:>9}          ({} more functions; --top 0 lists all)",
            rows.len() - shown
        );
    }
}

/// A table of kinds or file parts in both builds.
fn delta_table(out: &mut String, title: &str, rows: &[Delta]) {
    let _ = writeln!(
        out,
        "{title:<24} {:>9} {:>9} {:>9}  change",
        "old", "new", "delta"
    );
    for row in rows {
        let _ = writeln!(
            out,
            "{:<24} {:>9} {:>9} {:>+9}  {}",
            row.name,
            row.old,
            row.new,
            row.delta(),
            row.change().name()
        );
    }
}

/// `  [shared with 2, 3 copies, trap 24]`, or nothing.
fn marks(row: &FunctionRow) -> String {
    let mut marks = Vec::new();
    if row.shared_with > 0 {
        marks.push(format!("shared with {}", row.shared_with));
    }
    if row.copies > 1 {
        marks.push(format!("{} copies", row.copies));
    }
    if row.trap_bytes > 0 && row.kind != Kind::TrapPath {
        marks.push(format!("trap {}", row.trap_bytes));
    }
    if marks.is_empty() {
        String::new()
    } else {
        format!("  [{}]", marks.join(", "))
    }
}

/// A comparison: totals, kinds, then functions that changed, largest
/// change first (`top` rows at most, 0: all).
pub fn comparison(diff: &Comparison, top: usize) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "parec size: {} compared with {}",
        diff.new_inputs.join(" "),
        diff.old_inputs.join(" ")
    );
    let _ = writeln!(
        out,
        "file: {} -> {} bytes ({:+})",
        diff.file.old,
        diff.file.new,
        diff.file.delta()
    );
    let _ = writeln!(
        out,
        "code: {} -> {} bytes ({:+}); the program's own: {} -> {} bytes ({:+})",
        diff.total.old,
        diff.total.new,
        diff.total.delta(),
        diff.own.old,
        diff.own.new,
        diff.own.delta()
    );
    out.push('\n');
    delta_table(&mut out, "file part", &diff.file_parts);
    out.push('\n');
    delta_table(&mut out, "kind", &diff.kinds);
    let changed: Vec<&Delta> = diff
        .functions
        .iter()
        .filter(|d| d.change() != Change::Same)
        .collect();
    out.push('\n');
    let counts: Vec<String> = [
        Change::Grew,
        Change::Shrank,
        Change::Appeared,
        Change::Vanished,
    ]
    .iter()
    .map(|c| {
        let n = changed.iter().filter(|d| d.change() == *c).count();
        format!("{n} {}", c.name())
    })
    .collect();
    let _ = writeln!(out, "functions: {}", counts.join(", "));
    let _ = writeln!(
        out,
        "{:>9} {:>9} {:>9}  {:<9} {:<16} function",
        "old", "new", "delta", "change", "module"
    );
    let shown = if top == 0 {
        changed.len()
    } else {
        top.min(changed.len())
    };
    for row in &changed[..shown] {
        let shared = if row.shared_with > 0 {
            format!("  [shared with {}]", row.shared_with)
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "{:>9} {:>9} {:>+9}  {:<9} {:<16} {}{shared}",
            row.old,
            row.new,
            row.delta(),
            row.change().name(),
            row.module,
            row.name
        );
    }
    if shown < changed.len() {
        let rest: i64 = changed[shown..].iter().map(|d| d.delta()).sum();
        let _ = writeln!(
            out,
            "{:>29}  ({} more changes; --top 0 lists all)",
            format!("{rest:+}"),
            changed.len() - shown
        );
    }
    out
}
