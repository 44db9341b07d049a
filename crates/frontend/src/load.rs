//! Loading a program: reading the given files, following `import`s to
//! sibling files, parsing every module and checking the whole program.
//!
//! Module names are file stems. The first path is the root module (its
//! `fn main` is the entry point). An `import m;` of a module not given on the
//! command line is looked up as `m.pare` in the importing file's directory;
//! if there is none, the checker reports the unknown module at the import.

use std::collections::VecDeque;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::ast;
use crate::source::{Diagnostic, Diagnostics, FileId, SourceMap, Span};
use crate::tir::Program;

/// Why a program could not be loaded.
#[derive(Debug)]
pub enum LoadError {
    /// A problem that has no place in a source file (unreadable file, bad file name).
    Message(String),
    /// Located problems in the sources (render with [`Diagnostics::render`]).
    Diagnostics(Diagnostics),
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Message(m) => write!(f, "{m}"),
            LoadError::Diagnostics(d) => write!(f, "{} error(s) in the sources", d.list.len()),
        }
    }
}

/// Reads, parses and checks the program rooted at `paths[0]`.
pub fn load_program(paths: &[PathBuf], sources: &mut SourceMap) -> Result<Program, LoadError> {
    load_program_observed(paths, sources, &mut |_| {})
}

/// The stages of loading a program, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadStage {
    /// Reading and parsing the given files and the files they import.
    Parse,
    /// Name resolution, type checking and monomorphization (the checker
    /// instantiates a generic function as it meets each new instance).
    Check,
}

/// [`load_program`], calling `ended` as each stage of [`LoadStage`] ends
/// successfully (for tools that time them).
pub fn load_program_observed(
    paths: &[PathBuf],
    sources: &mut SourceMap,
    ended: &mut dyn FnMut(LoadStage),
) -> Result<Program, LoadError> {
    let modules = load_modules(paths, sources)?;
    ended(LoadStage::Parse);
    let mut diags = Diagnostics::default();
    match crate::check::check_program(&modules, &mut diags) {
        Some(program) if !diags.has_errors() => {
            ended(LoadStage::Check);
            Ok(program)
        }
        _ => Err(LoadError::Diagnostics(diags)),
    }
}

/// Reads and parses the given files and the sibling files they import.
/// Parse errors in any file are reported together.
pub fn load_modules(
    paths: &[PathBuf],
    sources: &mut SourceMap,
) -> Result<Vec<ast::Module>, LoadError> {
    if paths.is_empty() {
        return Err(LoadError::Message("no input files".into()));
    }
    let mut diags = Diagnostics::default();
    let mut modules: Vec<ast::Module> = Vec::new();
    let mut origin: Vec<PathBuf> = Vec::new();
    let mut pending: VecDeque<PathBuf> = paths.iter().cloned().collect();
    // Given files first, in order; then imports, breadth-first, in source order.
    let mut given = paths.len();
    while let Some(path) = pending.pop_front() {
        let explicit = given > 0;
        given = given.saturating_sub(1);
        let name = module_name(&path)?;
        if let Some(i) = modules.iter().position(|m| m.name == name) {
            if explicit {
                return Err(LoadError::Message(format!(
                    "two modules named `{name}`: `{}` and `{}`",
                    origin[i].display(),
                    path.display()
                )));
            }
            continue;
        }
        let text = read_source(&path)?;
        let file = add_source(sources, &path, text, &mut diags);
        let module = crate::parser::parse_module(&name, file, sources.text(file), &mut diags);
        for import in imports(&module) {
            let known = modules.iter().any(|m| m.name == import)
                || pending.iter().any(|p| stem(p) == import);
            if !known && import != name {
                let sibling = path
                    .parent()
                    .unwrap_or(Path::new("."))
                    .join(format!("{import}.pare"));
                if sibling.is_file() {
                    pending.push_back(sibling);
                }
            }
        }
        modules.push(module);
        origin.push(path);
    }
    if diags.has_errors() {
        return Err(LoadError::Diagnostics(diags));
    }
    Ok(modules)
}

/// Parses and checks modules whose text is already in `sources`
/// (`(module name, file)` pairs, root first). For tests and tools.
pub fn check_sources(
    sources: &SourceMap,
    files: &[(&str, FileId)],
) -> Result<Program, Diagnostics> {
    let mut diags = Diagnostics::default();
    let modules: Vec<ast::Module> = files
        .iter()
        .map(|(name, file)| {
            crate::parser::parse_module(name, *file, sources.text(*file), &mut diags)
        })
        .collect();
    if diags.has_errors() {
        return Err(diags);
    }
    match crate::check::check_program(&modules, &mut diags) {
        Some(program) if !diags.has_errors() => Ok(program),
        _ => Err(diags),
    }
}

/// Parses and checks modules given as `(module name, text)` pairs, root
/// first, without touching the file system (tests, fuzzers, generators). On
/// errors, returns the diagnostics rendered as text.
pub fn check_texts<N: AsRef<str>, T: AsRef<str>>(modules: &[(N, T)]) -> Result<Program, String> {
    let mut sources = SourceMap::new();
    let files: Vec<(&str, FileId)> = modules
        .iter()
        .map(|(name, text)| {
            let name = name.as_ref();
            (
                name,
                sources.add(format!("{name}.pare"), text.as_ref().to_string()),
            )
        })
        .collect();
    check_sources(&sources, &files).map_err(|diags| diags.render(&sources))
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn module_name(path: &Path) -> Result<String, LoadError> {
    let name = stem(path);
    let ident = !name.is_empty()
        && name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !ident {
        return Err(LoadError::Message(format!(
            "`{}`: the module name `{name}` (the file name without extension) must be an identifier",
            path.display()
        )));
    }
    // A keyword could never be imported or named in a path (`fn::f`).
    if crate::lexer::is_keyword(&name) {
        return Err(LoadError::Message(format!(
            "`{}`: the module name `{name}` (the file name without extension) is a keyword; rename the file",
            path.display()
        )));
    }
    Ok(name)
}

fn read_source(path: &Path) -> Result<Vec<u8>, LoadError> {
    crate::input::read_bounded(path, crate::input::SOURCE_LIMIT)
        .map_err(|e| LoadError::Message(format!("cannot read `{}`: {e}", path.display())))
}

/// Adds a file to the source map; invalid UTF-8 is reported at its first bad
/// byte and replaced, so later phases still see (and report on) the rest.
fn add_source(
    sources: &mut SourceMap,
    path: &Path,
    bytes: Vec<u8>,
    diags: &mut Diagnostics,
) -> FileId {
    match String::from_utf8(bytes) {
        Ok(text) => sources.add(path.display().to_string(), text),
        Err(e) => {
            let bad = e.utf8_error().valid_up_to();
            let text = String::from_utf8_lossy(e.as_bytes()).into_owned();
            let file = sources.add(path.display().to_string(), text);
            // The lossy text has the same prefix, so `bad` is a valid offset in it.
            diags.push(
                Diagnostic::error(
                    Span::new(file, bad, bad + 1),
                    "source file is not valid UTF-8",
                )
                .with_label("invalid byte here"),
            );
            file
        }
    }
}

fn imports(module: &ast::Module) -> impl Iterator<Item = String> + '_ {
    module.items.iter().filter_map(|item| match item {
        ast::Item::Import(i) => Some(i.module.name.clone()),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rejection(path: &str) -> String {
        match module_name(Path::new(path)) {
            Ok(name) => panic!("`{path}` accepted as module `{name}`"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn module_names_are_identifiers_that_are_not_keywords() {
        assert_eq!(module_name(Path::new("dir/util.pare")).unwrap(), "util");
        assert_eq!(module_name(Path::new("fns.pare")).unwrap(), "fns");
        assert_eq!(module_name(Path::new("_for.pare")).unwrap(), "_for");
        assert_eq!(
            rejection("dir/fn.pare"),
            "`dir/fn.pare`: the module name `fn` (the file name without extension) is a keyword; rename the file"
        );
        for keyword in ["struct", "null", "true", "const", "as"] {
            assert!(rejection(&format!("{keyword}.pare")).contains("is a keyword"));
        }
        assert!(rejection("1st.pare").contains("must be an identifier"));
        assert!(rejection("a-b.pare").contains("must be an identifier"));
    }
}
