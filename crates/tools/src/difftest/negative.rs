//! The negative oracle: ill-typed programs ([`crate::gen::negative`]) must be
//! rejected by the front end with a located diagnostic, and never make it
//! panic.
//!
//! Programs are checked in process, as [`super::check_program`] does (parse
//! and check the module texts), except the mutations about module names,
//! which only the file loader sees: those are written to a temporary
//! directory and loaded as `parec interp` loads them. Each check runs on its
//! own thread with a large stack, so a deeply nested input cannot take the
//! campaign down, and under `catch_unwind`, so a panic is a reported failure.
//!
//! A failure is an accepted program, a panic, or a rejection whose first
//! error has no usable location. Whether the first error is on the mutated
//! line is counted, not required: a checker may legitimately report a
//! consequence elsewhere first.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};
use pare_frontend::source::{Diagnostics, SourceMap};
use pare_frontend::LoadError;
use rayon::prelude::*;

use crate::gen::negative::{generate_negative, Mutation, NegativeProgram};
use crate::gen::GenConfig;

/// Stack of the checking thread: far more than the front end's nesting
/// limits need, even unoptimized.
const CHECK_STACK: usize = 256 << 20;

/// What the front end did with a negative program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Rejected; `line` is the first error's (module index, 1-based line).
    Rejected {
        line: Option<(usize, usize)>,
        message: String,
    },
    /// Accepted: an ill-typed program type-checks.
    Accepted,
    /// The front end panicked.
    Panicked(String),
    /// Rejected, but the first error has no location in the program.
    Unlocated(String),
}

impl Verdict {
    pub fn is_failure(&self) -> bool {
        !matches!(self, Verdict::Rejected { .. })
    }
}

/// Checks one negative program.
pub fn check_negative(n: &NegativeProgram) -> Verdict {
    let n = n.clone();
    let run = std::thread::Builder::new()
        .name("negative-check".into())
        .stack_size(CHECK_STACK)
        .spawn(move || {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                if n.mutation.needs_files() {
                    check_files(&n)
                } else {
                    check_texts(&n)
                }
            }))
        });
    match run.map(|h| h.join()) {
        Ok(Ok(Ok(verdict))) => verdict,
        Ok(Ok(Err(panic))) | Ok(Err(panic)) => Verdict::Panicked(panic_message(&*panic)),
        Err(e) => Verdict::Panicked(format!("cannot start the checking thread: {e}")),
    }
}

/// The message a panic carried (`panic!` with a literal or formatted).
pub(super) fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "(non-string panic)".into())
}

/// Parses and checks the module texts, as [`super::check_program`].
fn check_texts(n: &NegativeProgram) -> Verdict {
    let mut sources = SourceMap::new();
    let files: Vec<(&str, _)> = n
        .program
        .modules
        .iter()
        .map(|(name, text)| {
            (
                name.as_str(),
                sources.add(format!("{name}.pare"), text.clone()),
            )
        })
        .collect();
    match pare_frontend::check_sources(&sources, &files) {
        Ok(_) => Verdict::Accepted,
        Err(diags) => located(&diags, &sources, &files),
    }
}

/// Writes the modules to a temporary directory and loads them like `parec`.
fn check_files(n: &NegativeProgram) -> Verdict {
    let dir = match tempfile::Builder::new().prefix("parec-neg-").tempdir() {
        Ok(dir) => dir,
        Err(e) => return Verdict::Panicked(format!("no temporary directory: {e}")),
    };
    let paths = match n.program.write_to_dir(dir.path()) {
        Ok(paths) => paths,
        Err(e) => return Verdict::Panicked(format!("cannot write the program: {e}")),
    };
    let mut sources = SourceMap::new();
    match pare_frontend::load_program(&paths, &mut sources) {
        Ok(_) => Verdict::Accepted,
        // A file-level error: located if it names the offending file.
        Err(LoadError::Message(m)) => {
            let named = n
                .program
                .modules
                .iter()
                .skip(1)
                .any(|(name, _)| m.contains(&format!("{name}.pare")));
            if named {
                Verdict::Rejected {
                    line: None,
                    message: m,
                }
            } else {
                Verdict::Unlocated(m)
            }
        }
        Err(LoadError::Diagnostics(diags)) => {
            let files: Vec<(&str, _)> = n
                .program
                .modules
                .iter()
                .map(|(name, _)| name.as_str())
                .zip(sources.file_ids())
                .collect();
            located(&diags, &sources, &files)
        }
    }
}

/// The verdict on a rejection: the first error must lie in one of the
/// program's files, inside its text.
fn located(
    diags: &Diagnostics,
    sources: &SourceMap,
    files: &[(&str, pare_frontend::source::FileId)],
) -> Verdict {
    let rendered = diags.render(sources);
    let Some(first) = diags.list.first() else {
        return Verdict::Unlocated("rejected without a diagnostic".into());
    };
    let span = first.span;
    let module = files.iter().position(|(_, f)| *f == span.file);
    let in_text = module.is_some_and(|_| {
        let len = sources.text(span.file).len() as u32;
        span.start <= span.end && span.end <= len
    });
    match module {
        Some(m) if in_text => {
            let (line, _) = sources.line_col(span.file, span.start);
            Verdict::Rejected {
                line: Some((m, line)),
                message: rendered,
            }
        }
        _ => Verdict::Unlocated(rendered),
    }
}

/// Totals of a negative campaign.
#[derive(Clone, Debug, Default)]
pub struct NegativeReport {
    pub programs: usize,
    pub rejected: usize,
    /// Programs with a known offending line, and how many of them had
    /// their first error on it.
    pub sited: usize,
    pub at_site: usize,
    /// Programs and rejections per mutation kind.
    pub by_kind: BTreeMap<Mutation, (usize, usize)>,
    /// Labels and summaries of failing programs.
    pub failures: Vec<String>,
    pub reproducers: Vec<PathBuf>,
    pub wall: Duration,
}

impl NegativeReport {
    pub fn summary(&self) -> String {
        format!(
            "negative: {} programs, {} rejected with a located diagnostic, {} failing; first error on the mutated line in {} of {}; {} mutation kinds in {:.1}s",
            self.programs,
            self.rejected,
            self.failures.len(),
            self.at_site,
            self.sited,
            self.by_kind.len(),
            self.wall.as_secs_f64()
        )
    }
}

/// Generates and checks the negative programs of seeds `seed..seed+count`
/// in parallel; reports in seed order and saves up to `max_reproducers`
/// failing programs under `out`.
pub fn campaign(
    gen: &GenConfig,
    seed: u64,
    count: u64,
    out: &Path,
    max_reproducers: usize,
    verbose: bool,
) -> NegativeReport {
    let start = Instant::now();
    let results: Vec<(NegativeProgram, Verdict)> = (seed..seed.saturating_add(count))
        .into_par_iter()
        .map(|s| {
            let n = generate_negative(s, gen);
            let v = check_negative(&n);
            (n, v)
        })
        .collect();
    let mut report = NegativeReport {
        programs: results.len(),
        ..NegativeReport::default()
    };
    for (n, v) in &results {
        let entry = report.by_kind.entry(n.mutation).or_default();
        entry.0 += 1;
        if let Verdict::Rejected { line, .. } = v {
            entry.1 += 1;
            report.rejected += 1;
            if let Some(site) = n.site {
                report.sited += 1;
                if *line == Some(site) {
                    report.at_site += 1;
                }
            }
        }
        if !v.is_failure() {
            continue;
        }
        let summary = failure_summary(n, v);
        if verbose {
            parec::io_error::eprint(&summary);
        }
        report.failures.push(summary);
        if report.reproducers.len() < max_reproducers {
            match save_reproducer(n, v, out) {
                Ok(dir) => {
                    if verbose {
                        parec::io_error::eprintln(format_args!("reproducer: {}", dir.display()));
                    }
                    report.reproducers.push(dir);
                }
                Err(e) => parec::io_error::eprintln(format_args!(
                    "error: cannot save the reproducer: {e:#}"
                )),
            }
        }
    }
    report.wall = start.elapsed();
    report
}

fn failure_summary(n: &NegativeProgram, v: &Verdict) -> String {
    let what = match v {
        Verdict::Accepted => "the checker accepts it".to_string(),
        Verdict::Panicked(m) => format!("the front end panics: {m}"),
        Verdict::Unlocated(m) => format!("rejected without a location: {}", m.trim()),
        Verdict::Rejected { .. } => "rejected".to_string(),
    };
    format!(
        "negative seed {} ({}: {}): {what}\n",
        n.seed,
        n.mutation.name(),
        n.mutation.rule()
    )
}

/// Writes the program, the mutation and the verdict to `out/negative-seed-N/`.
pub fn save_reproducer(n: &NegativeProgram, v: &Verdict, out: &Path) -> Result<PathBuf> {
    let dir = out.join(format!("negative-seed-{}", n.seed));
    n.program
        .write_to_dir(&dir)
        .with_context(|| format!("cannot write {}", dir.display()))?;
    let mut report = String::new();
    let _ = writeln!(report, "{}", failure_summary(n, v).trim_end());
    let _ = writeln!(
        report,
        "\nmutation {}: breaks \"{}\"",
        n.mutation.name(),
        n.mutation.rule()
    );
    if let Some((m, line)) = n.site {
        let _ = writeln!(
            report,
            "offending line: {}.pare:{line}",
            n.program.modules[m].0
        );
    }
    let _ = writeln!(report, "inserted:\n{}\n", n.inserted);
    let files: Vec<String> = n
        .program
        .modules
        .iter()
        .map(|(name, _)| format!("{name}.pare"))
        .collect();
    let _ = writeln!(
        report,
        "reproduce: parec interp {}   (must fail with a located error)\nverdict: {v:?}",
        files.join(" ")
    );
    std::fs::write(dir.join("REPORT.txt"), report)?;
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::negative::generate_negative_with;

    /// Every mutation kind yields, for some seed, a program the front end
    /// rejects with a located error; prints what every kind gets.
    #[test]
    fn every_mutation_kind_is_rejected() {
        let cfg = GenConfig::default();
        let mut missing = Vec::new();
        for kind in Mutation::ALL {
            let mut rejected = 0;
            let mut verdicts = Vec::new();
            for seed in 0..6 {
                let Some(n) = generate_negative_with(seed, &cfg, kind) else {
                    continue;
                };
                let v = check_negative(&n);
                if matches!(v, Verdict::Rejected { .. }) {
                    rejected += 1;
                }
                verdicts.push(match &v {
                    Verdict::Rejected { line, .. } => {
                        format!("rejected at {line:?} (site {:?})", n.site)
                    }
                    other => format!("{other:?}\n{}", n.inserted),
                });
            }
            parec::io_error::eprintln(format_args!("{kind:?}: {rejected} rejected"));
            for v in &verdicts {
                parec::io_error::eprintln(format_args!("    {v}"));
            }
            if rejected == 0 {
                missing.push(kind);
            }
        }
        assert!(missing.is_empty(), "never rejected: {missing:?}");
    }
}
