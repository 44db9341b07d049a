//! The files a command writes, checked against the files it reads.
//!
//! parec never writes over one of its inputs: every file a command writes
//! (an executable, an object directory, assembly, CLIF, cgdata, remarks, a
//! plan, a profile, a size page, a build file and what that build will
//! write) whose path names a file the command reads (a source file, an
//! imported module, a `.clif` file, an object or executable it measures,
//! a `--cgdata-use`, `--profile-use` or plan file) is refused, and so are
//! two outputs of one command that name the same file, or an output file
//! that another output would need as its directory. Files are compared by
//! identity, not by spelling: on Unix two paths are the same file when
//! they have the same device and inode (so symbolic links, `./x` and `x`,
//! and hard links all count); elsewhere their canonical paths are
//! compared. A path that does not exist yet is no input; two such paths
//! are compared by where they will be (the canonical directory that
//! exists, joined with the rest).
//!
//! The checks run in two steps, both before anything is written:
//!
//! 1. [`Outputs::check`], before compiling: each output can be written
//!    where it is asked for (its directory exists; an output file is not a
//!    directory, an output directory is not a file), no two outputs are the
//!    same file and none is one of the command's explicit inputs;
//! 2. [`Outputs::check_not_read`], right after the front end, against the
//!    files it read: a Pare program's imports are found by the front end,
//!    so only then is the whole set of inputs known.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Result};

/// What kind of file system object an output is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputKind {
    /// A file, created or replaced; its directory must exist.
    File,
    /// A directory of files (`--emit obj`), created with its parents.
    Directory,
    /// A file a later step writes (an action of the build file `parec
    /// ninja` writes): its directory is created then, so it need not
    /// exist now.
    Later,
}

/// One path a command will write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedOutput {
    pub path: PathBuf,
    /// The flag that names it (`-o`, `--cgdata-generate`), for messages.
    pub flag: &'static str,
    pub kind: OutputKind,
}

/// Every path a command will write.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outputs {
    pub planned: Vec<PlannedOutput>,
}

impl Outputs {
    /// Adds an output file named by `flag` (`-` is stdout and is not added).
    pub fn file(&mut self, path: &Path, flag: &'static str) {
        self.add(path, flag, OutputKind::File);
    }

    /// Adds an output directory named by `flag`.
    pub fn directory(&mut self, path: &Path, flag: &'static str) {
        self.add(path, flag, OutputKind::Directory);
    }

    /// Adds a file a later step writes, named by `what`.
    pub fn later(&mut self, path: &Path, what: &'static str) {
        self.add(path, what, OutputKind::Later);
    }

    fn add(&mut self, path: &Path, flag: &'static str, kind: OutputKind) {
        if path != Path::new("-") {
            self.planned.push(PlannedOutput {
                path: path.to_path_buf(),
                flag,
                kind,
            });
        }
    }

    /// The output paths.
    pub fn paths(&self) -> impl Iterator<Item = &Path> {
        self.planned.iter().map(|o| o.path.as_path())
    }

    /// Before compiling: every output can be written, no two are the same
    /// file, none is one of `inputs`, and no output file is the directory
    /// of another output.
    ///
    /// Each path is looked up once (its identity if it exists, where it
    /// will be otherwise), so a build file's thousands of outputs cost
    /// thousands of lookups, not millions.
    pub fn check(&self, inputs: &[PathBuf]) -> Result<()> {
        let inputs: Vec<(FileId, &PathBuf)> = inputs
            .iter()
            .filter_map(|input| Some((identity(input)?, input)))
            .collect();
        let mut by_identity: HashMap<FileId, &PlannedOutput> = HashMap::new();
        let mut by_location: HashMap<PathBuf, &PlannedOutput> = HashMap::new();
        for output in &self.planned {
            check_writable(output)?;
            let id = identity(&output.path);
            if let Some((_, input)) = inputs.iter().find(|(input, _)| Some(input) == id.as_ref()) {
                bail!(
                    "{} `{}` is the input `{}`; refusing to overwrite it",
                    output.flag,
                    output.path.display(),
                    input.display()
                );
            }
            let location = planned_location(&output.path);
            let earlier = id
                .and_then(|id| by_identity.insert(id, output))
                .or_else(|| by_location.get(location.as_ref()?).copied());
            if let Some(other) = earlier {
                bail!(
                    "{} `{}` and {} `{}` are the same file",
                    other.flag,
                    other.path.display(),
                    output.flag,
                    output.path.display()
                );
            }
            if let Some(location) = location {
                by_location.insert(location, output);
            }
        }
        check_nesting(&self.planned, &by_location)
    }

    /// After the front end: no output is one of the files it `read`.
    pub fn check_not_read(&self, read: &[PathBuf]) -> Result<()> {
        for output in &self.planned {
            if let Some(source) = read.iter().find(|source| same_file(&output.path, source)) {
                bail!(
                    "{} `{}` is the source file `{}` of the program; refusing to overwrite it",
                    output.flag,
                    output.path.display(),
                    source.display()
                );
            }
        }
        Ok(())
    }
}

/// No output file is the directory another output is written in: each
/// output's ancestors are looked up among the outputs' locations.
fn check_nesting(
    planned: &[PlannedOutput],
    by_location: &HashMap<PathBuf, &PlannedOutput>,
) -> Result<()> {
    for output in planned {
        let Some(location) = planned_location(&output.path) else {
            continue;
        };
        for ancestor in location.ancestors().skip(1) {
            match by_location.get(ancestor) {
                Some(file) if file.kind != OutputKind::Directory => bail!(
                    "{} `{}` is the directory of {} `{}`; it cannot be a file too",
                    file.flag,
                    file.path.display(),
                    output.flag,
                    output.path.display()
                ),
                _ => {}
            }
        }
    }
    Ok(())
}

/// Whether `output` can be created where it is asked for.
fn check_writable(output: &PlannedOutput) -> Result<()> {
    let path = &output.path;
    let shown = path.display();
    if path.as_os_str().is_empty() {
        bail!("{}: the output path is empty", output.flag);
    }
    match output.kind {
        OutputKind::Later => {
            if path.is_dir() {
                bail!("{} `{shown}` is a directory", output.flag);
            }
        }
        OutputKind::File => {
            if path.is_dir() {
                bail!("{} `{shown}` is a directory", output.flag);
            }
            let dir = parent_dir(path);
            if !dir.is_dir() {
                let why = if dir.exists() {
                    "is not a directory"
                } else {
                    "does not exist"
                };
                bail!(
                    "cannot write {} `{shown}`: `{}` {why}",
                    output.flag,
                    dir.display()
                );
            }
        }
        OutputKind::Directory => {
            if path.exists() && !path.is_dir() {
                bail!(
                    "{} `{shown}` exists and is not a directory; refusing to overwrite it",
                    output.flag
                );
            }
        }
    }
    Ok(())
}

/// The directory a file path is in (`.` for a bare name).
fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

/// Whether two existing paths are the same file.
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (identity(a), identity(b)) {
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

/// Where a path that may not exist yet will be: its deepest existing
/// directory, canonical, joined with the names below it.
fn planned_location(path: &Path) -> Option<PathBuf> {
    let mut names = vec![path.file_name()?];
    let mut dir = parent_dir(path);
    let mut location = loop {
        if let Ok(existing) = dir.canonicalize() {
            break existing;
        }
        names.push(dir.file_name()?);
        dir = parent_dir(dir);
    };
    location.extend(names.iter().rev());
    Some(location)
}

/// What identifies an existing file: device and inode on Unix.
#[cfg(unix)]
type FileId = (u64, u64);
#[cfg(not(unix))]
type FileId = PathBuf;

/// What identifies an existing file (after following symbolic links).
#[cfg(unix)]
fn identity(path: &Path) -> Option<FileId> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
fn identity(path: &Path) -> Option<FileId> {
    path.canonicalize().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outputs(paths: &[(&Path, OutputKind)]) -> Outputs {
        let mut out = Outputs::default();
        for (path, kind) in paths {
            out.add(path, "-o", *kind);
        }
        out
    }

    #[test]
    fn an_input_is_refused_however_it_is_spelled() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("main.pare");
        std::fs::write(&input, "fn main() {}").unwrap();
        let link = dir.path().join("link.pare");
        std::os::unix::fs::symlink(&input, &link).unwrap();
        let hard = dir.path().join("hard.pare");
        std::fs::hard_link(&input, &hard).unwrap();
        let dotted = dir.path().join(".").join("main.pare");
        for spelling in [&input, &link, &hard, &dotted] {
            let err = outputs(&[(spelling, OutputKind::File)])
                .check(std::slice::from_ref(&input))
                .unwrap_err();
            assert!(err.to_string().contains("refusing to overwrite"), "{err}");
        }
        let fresh = dir.path().join("main");
        outputs(&[(&fresh, OutputKind::File)])
            .check(std::slice::from_ref(&input))
            .unwrap();
    }

    #[test]
    fn outputs_must_be_creatable() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("no/such/dir/x");
        let err = outputs(&[(&missing, OutputKind::File)])
            .check(&[])
            .unwrap_err();
        assert!(err.to_string().contains("does not exist"), "{err}");
        let err = outputs(&[(dir.path(), OutputKind::File)])
            .check(&[])
            .unwrap_err();
        assert!(err.to_string().contains("is a directory"), "{err}");
        let file = dir.path().join("f");
        std::fs::write(&file, "").unwrap();
        let err = outputs(&[(&file, OutputKind::Directory)])
            .check(&[])
            .unwrap_err();
        assert!(err.to_string().contains("not a directory"), "{err}");
        // An object directory is created with its parents.
        outputs(&[(&missing, OutputKind::Directory)])
            .check(&[])
            .unwrap();
    }

    #[test]
    fn two_outputs_may_not_be_one_file() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("out");
        let b = dir.path().join(".").join("out");
        let err = outputs(&[(&a, OutputKind::File), (&b, OutputKind::File)])
            .check(&[])
            .unwrap_err();
        assert!(err.to_string().contains("same file"), "{err}");
        // Paths below a directory that does not exist yet are compared by
        // where they will be.
        let later = dir.path().join("obj/m.o");
        let again = dir.path().join("./obj/./m.o");
        let err = outputs(&[(&later, OutputKind::Later), (&again, OutputKind::Later)])
            .check(&[])
            .unwrap_err();
        assert!(err.to_string().contains("same file"), "{err}");
    }

    #[test]
    fn an_output_file_may_not_be_another_outputs_directory() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("obj");
        let below = dir.path().join("obj/sub/m.o");
        let err = outputs(&[(&below, OutputKind::Later), (&file, OutputKind::Later)])
            .check(&[])
            .unwrap_err();
        assert!(err.to_string().contains("is the directory of"), "{err}");
        // A directory output may hold other outputs.
        outputs(&[(&file, OutputKind::Directory), (&below, OutputKind::Later)])
            .check(&[])
            .unwrap();
    }
}
