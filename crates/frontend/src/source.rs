//! Source files, spans and diagnostics.
//!
//! Every phase reports problems as [`Diagnostic`]s collected in a
//! [`Diagnostics`] list; the driver renders them rustc-style (file:line:col,
//! snippet, labels) with codespan-reporting. No phase panics on bad input.

use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label};
use codespan_reporting::files::SimpleFiles;
use codespan_reporting::term;

/// Index of a file in a [`SourceMap`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct FileId(pub u32);

/// A byte range in one file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Span {
    pub file: FileId,
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(file: FileId, start: usize, end: usize) -> Span {
        Span {
            file,
            start: start as u32,
            end: end as u32,
        }
    }
    /// The smallest span covering both (same file assumed).
    pub fn to(self, other: Span) -> Span {
        Span {
            file: self.file,
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }
}

/// The source files of one compilation.
#[derive(Default)]
pub struct SourceMap {
    files: SimpleFiles<String, String>,
    count: u32,
}

impl SourceMap {
    pub fn new() -> Self {
        Self::default()
    }
    /// Adds a file. Invalid UTF-8 is replaced (the lexer reports it as an error
    /// on the original bytes via [`SourceMap::add_bytes`]).
    pub fn add(&mut self, name: impl Into<String>, text: impl Into<String>) -> FileId {
        let id = self.files.add(name.into(), text.into());
        debug_assert_eq!(id as u32, self.count);
        self.count += 1;
        FileId(id as u32)
    }
    pub fn name(&self, file: FileId) -> &str {
        self.files
            .get(file.0 as usize)
            .map(|f| f.name().as_str())
            .unwrap_or("<unknown>")
    }
    pub fn text(&self, file: FileId) -> &str {
        self.files
            .get(file.0 as usize)
            .map(|f| f.source().as_str())
            .unwrap_or("")
    }
    pub fn file_ids(&self) -> impl Iterator<Item = FileId> {
        (0..self.count).map(FileId)
    }
    /// 1-based line and column of a byte offset.
    pub fn line_col(&self, file: FileId, offset: u32) -> (usize, usize) {
        let text = self.text(file);
        let offset = (offset as usize).min(text.len());
        let before = &text[..floor_char_boundary(text, offset)];
        let line = before.matches('\n').count() + 1;
        let col = before
            .rsplit('\n')
            .next()
            .map(|l| l.chars().count())
            .unwrap_or(0)
            + 1;
        (line, col)
    }
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
}

/// One problem found in the source.
#[derive(Clone, Debug)]
pub struct Diagnostic {
    pub severity: Severity,
    pub message: String,
    /// The primary location and its label (may be empty).
    pub span: Span,
    pub label: String,
    /// Secondary locations.
    pub secondary: Vec<(Span, String)>,
    pub notes: Vec<String>,
}

impl Diagnostic {
    pub fn error(span: Span, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Error,
            message: message.into(),
            span,
            label: String::new(),
            secondary: Vec::new(),
            notes: Vec::new(),
        }
    }
    pub fn with_label(mut self, label: impl Into<String>) -> Self {
        self.label = label.into();
        self
    }
    pub fn with_secondary(mut self, span: Span, label: impl Into<String>) -> Self {
        self.secondary.push((span, label.into()));
        self
    }
    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }
}

/// A list of diagnostics; phases push and go on where they can.
#[derive(Default, Debug)]
pub struct Diagnostics {
    pub list: Vec<Diagnostic>,
}

impl Diagnostics {
    pub fn push(&mut self, d: Diagnostic) {
        self.list.push(d);
    }
    pub fn has_errors(&self) -> bool {
        self.list.iter().any(|d| d.severity == Severity::Error)
    }
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
    /// Renders every diagnostic rustc-style, without colour (stable for snapshots).
    pub fn render(&self, sources: &SourceMap) -> String {
        let mut out = term::termcolor::NoColor::new(Vec::new());
        self.emit(sources, &mut out);
        String::from_utf8_lossy(&out.into_inner()).into_owned()
    }
    /// Renders to a terminal writer (colours if the writer supports them).
    pub fn emit(&self, sources: &SourceMap, out: &mut dyn term::termcolor::WriteColor) {
        let config = term::Config::default();
        for d in &self.list {
            let cs = to_codespan(d);
            // Rendering can only fail on an I/O error or an out-of-range span; fall back to one line.
            if term::emit(out, &config, &sources.files, &cs).is_err() {
                let (l, c) = sources.line_col(d.span.file, d.span.start);
                let _ = writeln!(
                    out,
                    "error: {} at {}:{}:{}",
                    d.message,
                    sources.name(d.span.file),
                    l,
                    c
                );
            }
        }
    }
}

fn to_codespan(d: &Diagnostic) -> CsDiagnostic<usize> {
    let base = match d.severity {
        Severity::Error => CsDiagnostic::error(),
        Severity::Warning => CsDiagnostic::warning(),
    };
    let mut labels = vec![Label::primary(
        d.span.file.0 as usize,
        d.span.start as usize..d.span.end as usize,
    )
    .with_message(d.label.clone())];
    for (s, l) in &d.secondary {
        labels.push(
            Label::secondary(s.file.0 as usize, s.start as usize..s.end as usize)
                .with_message(l.clone()),
        );
    }
    base.with_message(d.message.clone())
        .with_labels(labels)
        .with_notes(d.notes.clone())
}
