//! `parec ninja`: a Ninja build file for a program's separate compilation.
//!
//! The file runs the actions of [`crate::actions`] so that `ninja` builds
//! the program with its own parallelism (and any Ninja-driven remote
//! execution or cache can distribute it), producing the objects and the
//! executable `parec build` produces. Its edges, for a program whose
//! modules are `M…` (the runtime is one of them):
//!
//! ```text
//! one round:  plan ─▶ obj/M.o (each M) ─▶ EXE
//! two rounds: plan ─▶ round1/M.cgdata (each M) ─▶ round1.cgdata ─▶ obj/M.o (each M) ─▶ EXE
//! ```
//!
//! The plan reads every source; the action of module M reads M's source,
//! the sources M imports transitively, and the plan (round 2: and the
//! merged cgdata). Every action's outputs are written only when their bytes
//! change and every rule has `restat = 1`, so touching a module reruns the
//! plan and the actions of the modules that import it, and stops wherever
//! an output came out the same. A `generator` edge writes the file again
//! when a source changes (an `import` added or removed changes the graph);
//! every source is also the output of a `phony` edge without inputs, so
//! that a source deleted since (with the `import` of it) makes the file
//! out of date, and `ninja` writes it again before building, rather than
//! stopping at the missing file — what CMake ("A missing CMake input file
//! is not an error") and Meson do for the inputs of their regeneration.
//!
//! With `--profile-use FILE` (`--profile-mode`, `--profile-mismatch`),
//! every action takes the profile flags, and the plan and every compile
//! action list FILE among their inputs: each reads it (the plan classifies
//! the program's functions with it, a compile checks that it is the plan's
//! profile), so touching it reruns them all, and a rewritten profile
//! changes the plan (which records its content hash).
//!
//! The flags every action shares (`--target`, `-O`, `--passes`,
//! `--code-model`, `--runtime`) go to the plan and every compile; `--icf`
//! and `-s` to the link, which finds what the runtime stands on in the
//! objects, as `parec build` links them.
//!
//! Paths in the file are relative to its directory (the build directory,
//! where `ninja` runs): sources as seen from there, outputs inside it. The
//! parec binary is named by the path it was run as, or `--parec`.

use std::collections::{BTreeSet, VecDeque};
use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};

use anyhow::anyhow;
use parec_passes::profile::ProfileMode;

use crate::actions::ActionFlags;
use crate::codegen::CodeModel;
use crate::frontend::{self, SourceModule};
use crate::link::Icf;
use crate::outputs::Outputs;
use crate::profile::MismatchPolicy;
use crate::runtime::RuntimeChoice;
use crate::{io_error, Failure};

/// Options of `parec ninja`.
#[derive(Clone, Debug)]
pub struct NinjaOptions {
    pub files: Vec<PathBuf>,
    /// The build file; its directory is the build directory.
    pub out: PathBuf,
    pub flags: ActionFlags,
    pub icf: Icf,
    /// Leave the executable's symbol tables out (`-s`).
    pub strip: bool,
    /// The executable's name in the build directory (default: the root
    /// module's name).
    pub exe: Option<String>,
    /// The parec the build runs (default: this one).
    pub parec: Option<PathBuf>,
}

/// A module of the build: its name and the sources its object depends on.
struct BuildModule {
    name: String,
    /// Its source and those of every module it imports, transitively,
    /// relative to the build directory; empty for the runtime.
    sources: Vec<String>,
}

/// `parec ninja FILES -o build.ninja`.
pub fn generate(opts: &NinjaOptions) -> Result<i32, Failure> {
    let build_dir = build_directory(&opts.out)?;
    let parec = parec_path(opts)?;
    let mut inputs: Vec<PathBuf> = opts
        .files
        .iter()
        .chain(&opts.flags.profile.use_file)
        .cloned()
        .collect();
    // The build runs this parec: linking over it would destroy the tool.
    inputs.push(PathBuf::from(&parec));
    // The module names (object names) are known after the front end; the
    // files that do not depend on them are checked first.
    let mut outputs = build_outputs(opts, &build_dir, &[]);
    outputs.check(&inputs)?;
    // A bad profile is reported now, not by the first action that reads it.
    opts.flags.profile.read()?;
    let sources = frontend::source_modules(&opts.files)?;
    let mut modules = Vec::new();
    for module in &sources {
        modules.push(BuildModule {
            name: module.name.clone(),
            sources: closure(module, &sources)
                .iter()
                .map(|path| relative_to(path, &build_dir))
                .collect::<Result<_, _>>()?,
        });
    }
    modules.push(BuildModule {
        name: frontend::runtime_module_name(opts.flags.target),
        sources: Vec::new(),
    });
    outputs = build_outputs(opts, &build_dir, &modules);
    outputs.check(&inputs)?;
    let read: Vec<PathBuf> = sources.iter().map(|s| s.path.clone()).collect();
    outputs.check_not_read(&read)?;
    let text = NinjaFile {
        opts,
        parec,
        build_dir: &build_dir,
        modules: &modules,
        all_sources: sources
            .iter()
            .map(|s| relative_to(&s.path, &build_dir))
            .collect::<Result<_, _>>()?,
        profile: opts
            .flags
            .profile
            .use_file
            .as_ref()
            .map(|path| relative_to(path, &build_dir))
            .transpose()?,
    }
    .render()?;
    io_error::write_if_changed(&opts.out, text.as_bytes())?;
    Ok(0)
}

/// Every file `parec ninja` writes and the build it describes will write,
/// with `modules`' objects: none may be an input ([`Outputs`]).
fn build_outputs(opts: &NinjaOptions, build_dir: &Path, modules: &[BuildModule]) -> Outputs {
    let mut outputs = Outputs::default();
    outputs.file(&opts.out, "-o");
    outputs.later(&build_dir.join(executable_name(opts, modules)), "--exe");
    outputs.later(&build_dir.join(PLAN), "the plan");
    for module in modules {
        outputs.later(&build_dir.join(object_path(module)), "the object");
        if opts.flags.two_rounds {
            outputs.later(&build_dir.join(round1_path(module)), "the round-1 cgdata");
        }
    }
    if opts.flags.two_rounds {
        outputs.later(&build_dir.join(ROUND1), "the merged cgdata");
    }
    // Ninja's own state.
    for log in [".ninja_log", ".ninja_deps"] {
        outputs.later(&build_dir.join(log), "ninja's log");
    }
    outputs
}

/// The plan's file in the build directory.
const PLAN: &str = "program.plan";
/// Round 1's merged cgdata in the build directory.
const ROUND1: &str = "round1.cgdata";

/// A module's object in the build directory.
fn object_path(module: &BuildModule) -> String {
    format!("obj/{}", object_name(&module.name))
}

/// A module's round-1 cgdata in the build directory.
fn round1_path(module: &BuildModule) -> String {
    format!("round1/{}.cgdata", object_stem(&module.name))
}

/// The executable's name in the build directory: `--exe`, else the root
/// module's name (`modules` empty: the root file's stem, before the front
/// end has named the modules).
fn executable_name(opts: &NinjaOptions, modules: &[BuildModule]) -> String {
    match (&opts.exe, modules.first()) {
        (Some(name), _) => name.clone(),
        (None, Some(root)) => root.name.clone(),
        (None, None) => opts
            .files
            .first()
            .and_then(|f| f.file_stem())
            .map_or_else(String::new, |s| s.to_string_lossy().into_owned()),
    }
}

/// The parec the build runs, as written in the file.
fn parec_path(opts: &NinjaOptions) -> anyhow::Result<String> {
    let path = match &opts.parec {
        Some(path) => path.clone(),
        None => {
            std::env::current_exe().map_err(|e| anyhow!("cannot find parec's own path: {e}"))?
        }
    };
    path.to_str()
        .map(str::to_string)
        .ok_or_else(|| anyhow!("`{}` is not valid UTF-8", path.display()))
}

/// The canonical directory of the build file.
fn build_directory(out: &Path) -> anyhow::Result<PathBuf> {
    let dir = match out.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    dir.canonicalize().map_err(|e| {
        anyhow!(
            "cannot use the build directory `{}`: {}",
            dir.display(),
            io_error::reason(&e)
        )
    })
}

/// The source of `module` and of every module it imports, transitively,
/// in the order the front end found them.
fn closure<'a>(module: &'a SourceModule, all: &'a [SourceModule]) -> Vec<&'a Path> {
    let mut seen = BTreeSet::from([module.name.as_str()]);
    let mut queue = VecDeque::from([module]);
    while let Some(m) = queue.pop_front() {
        for import in &m.imports {
            if let Some(found) = all.iter().find(|s| &s.name == import) {
                if seen.insert(found.name.as_str()) {
                    queue.push_back(found);
                }
            }
        }
    }
    all.iter()
        .filter(|s| seen.contains(s.name.as_str()))
        .map(|s| s.path.as_path())
        .collect()
}

/// `path` relative to the canonical directory `base`.
fn relative_to(path: &Path, base: &Path) -> anyhow::Result<String> {
    let path = path
        .canonicalize()
        .map_err(|e| anyhow!("cannot read `{}`: {}", path.display(), io_error::reason(&e)))?;
    let from: Vec<Component> = base.components().collect();
    let to: Vec<Component> = path.components().collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut rel = PathBuf::new();
    for _ in common..from.len() {
        rel.push("..");
    }
    for part in &to[common..] {
        rel.push(part);
    }
    rel.to_str()
        .map(str::to_string)
        .ok_or_else(|| anyhow!("`{}` is not valid UTF-8", path.display()))
}

/// The file name of a module's object, as `parec build --emit obj` names it.
pub fn object_name(module: &str) -> String {
    format!("{}.o", object_stem(module))
}

/// A module's name with the characters a file name should not hold as `_`.
pub fn object_stem(module: &str) -> String {
    module
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// A path in a Ninja `build` line: `$`, space and `:` escaped.
/// Paths as a Ninja input list.
fn ninja_paths(paths: &[String]) -> String {
    paths
        .iter()
        .map(|p| ninja_path(p))
        .collect::<Vec<_>>()
        .join(" ")
}

fn ninja_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for c in path.chars() {
        if matches!(c, '$' | ' ' | ':' | '\n') {
            out.push('$');
        }
        out.push(c);
    }
    out
}

/// A word of a shell command (in a Ninja variable: `$` escaped).
fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=,+@%".contains(c));
    let quoted = if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    };
    quoted.replace('$', "$$")
}

/// The build file being written.
struct NinjaFile<'a> {
    opts: &'a NinjaOptions,
    /// The parec the build runs.
    parec: String,
    build_dir: &'a Path,
    modules: &'a [BuildModule],
    /// Every source of the program, relative to the build directory.
    all_sources: Vec<String>,
    /// The `--profile-use` file, relative to the build directory.
    profile: Option<String>,
}

impl NinjaFile<'_> {
    fn render(&self) -> anyhow::Result<String> {
        let flags = &self.opts.flags;
        let two_rounds = flags.two_rounds;
        let mut s = String::new();
        let rounds = if two_rounds {
            "two rounds"
        } else {
            "one round"
        };
        let _ = writeln!(
            s,
            "# Written by `parec ninja` ({rounds}); run `ninja` in this directory.\n\
             # Rewritten by ninja itself when a source changes; do not edit.\n\
             ninja_required_version = 1.5\n"
        );
        let parec = &self.parec;
        let files: Vec<String> = self
            .opts
            .files
            .iter()
            .map(|f| relative_to(f, self.build_dir).map(|p| shell_word(&p)))
            .collect::<Result<_, _>>()?;
        let mut common = vec![
            "--target".to_string(),
            flags.target.triple().to_string(),
            flags.level.flag().to_string(),
        ];
        if let Some(passes) = &flags.passes {
            common.push(format!("--passes={}", shell_word(passes)));
        }
        if flags.code_model != CodeModel::default() {
            common.push(format!("--code-model={}", flags.code_model.name()));
        }
        if flags.runtime != RuntimeChoice::default() {
            common.push(format!("--runtime={}", flags.runtime.name()));
        }
        common.extend(self.profile_flags());
        let _ = writeln!(s, "parec = {}", shell_word(parec));
        let _ = writeln!(s, "program = {}", files.join(" "));
        let _ = writeln!(s, "flags = {}\n", common.join(" "));

        let plan_rounds = if two_rounds { " --two-rounds" } else { "" };
        rule(
            &mut s,
            "plan",
            &format!("$parec plan $program -o $out $flags{plan_rounds}"),
            "PLAN",
        );
        if !two_rounds {
            rule(
                &mut s,
                "compile",
                "$parec compile $program --module $module --plan program.plan $flags -o $out",
                "COMPILE $module",
            );
        } else {
            rule(&mut s, "round1", "$parec compile $program --module $module --plan program.plan $flags --cgdata-generate $out", "ROUND1 $module");
            rule(&mut s, "round2", "$parec compile $program --module $module --plan program.plan $flags --cgdata-use round1.cgdata -o $out", "ROUND2 $module");
            rule(
                &mut s,
                "cgdata_merge",
                "$parec cgdata merge --modules $out $in",
                "MERGE $out",
            );
        }
        let icf = self.opts.icf.name();
        let strip = if self.opts.strip { " -s" } else { "" };
        rule(
            &mut s,
            "link",
            &format!(
                "$parec link $in -o $out --target {} --icf {icf}{strip}",
                flags.target.triple()
            ),
            "LINK $out",
        );
        self.regenerate_rule(&mut s, parec, &files)?;

        let tool = self.tool_dependency(parec);
        let all = ninja_paths(&self.all_sources);
        // The plan and every compile action read the profile (round 2
        // too: its compile checks the profile against the plan).
        let profile = self.profile_dependency();
        let _ = writeln!(s, "build {PLAN}: plan | {all}{profile}{tool}\n");
        let objects: Vec<String> = self.modules.iter().map(object_path).collect();
        if two_rounds {
            let mut round1 = Vec::new();
            for module in self.modules {
                let out = round1_path(module);
                self.module_edge(&mut s, "round1", &out, module, &profile, &tool);
                round1.push(out);
            }
            let _ = writeln!(
                s,
                "build {ROUND1}: cgdata_merge {}{}\n",
                round1.join(" "),
                implicit(&tool)
            );
            for (module, out) in self.modules.iter().zip(&objects) {
                let more = format!(" {ROUND1}{profile}");
                self.module_edge(&mut s, "round2", out, module, &more, &tool);
            }
        } else {
            for (module, out) in self.modules.iter().zip(&objects) {
                self.module_edge(&mut s, "compile", out, module, &profile, &tool);
            }
        }
        let exe = executable_name(self.opts, self.modules);
        let _ = writeln!(
            s,
            "build {}: link {}{}\n",
            ninja_path(&exe),
            objects.join(" "),
            implicit(&tool)
        );
        let _ = writeln!(s, "default {}", ninja_path(&exe));
        Ok(s)
    }

    /// One module's compile edge of `rule`, depending on its sources, the
    /// plan and `more`.
    fn module_edge(
        &self,
        s: &mut String,
        rule: &str,
        out: &str,
        module: &BuildModule,
        more: &str,
        tool: &str,
    ) {
        let sources: String = module
            .sources
            .iter()
            .map(|p| format!(" {}", ninja_path(p)))
            .collect();
        let _ = writeln!(
            s,
            "build {}: {rule} |{sources} {PLAN}{more}{tool}\n  module = {}\n",
            ninja_path(out),
            shell_word(&module.name)
        );
    }

    /// The profile flags of every action (mode and policy when not the
    /// default), the file relative to the build directory.
    fn profile_flags(&self) -> Vec<String> {
        let Some(path) = &self.profile else {
            return Vec::new();
        };
        let profile = &self.opts.flags.profile;
        let mut flags = vec![format!("--profile-use {}", shell_word(path))];
        if profile.mode != ProfileMode::default() {
            flags.push(format!("--profile-mode {}", profile.mode.name()));
        }
        if profile.mismatch != MismatchPolicy::default() {
            flags.push(format!("--profile-mismatch {}", profile.mismatch.name()));
        }
        flags
    }

    /// The profile as an implicit input of an edge (`" FILE"`, or nothing).
    fn profile_dependency(&self) -> String {
        self.profile
            .as_deref()
            .map_or_else(String::new, |p| format!(" {}", ninja_path(p)))
    }

    /// The edge that writes this file again when a source changes.
    fn regenerate_rule(&self, s: &mut String, parec: &str, files: &[String]) -> anyhow::Result<()> {
        let flags = &self.opts.flags;
        let out = self
            .opts
            .out
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| anyhow!("`{}` is not a file name", self.opts.out.display()))?
            .to_string();
        let mut args = vec![
            files.join(" "),
            "-o".into(),
            shell_word(&out),
            "$flags".into(),
        ];
        if flags.two_rounds {
            args.push("--two-rounds".into());
        }
        args.push(format!("--icf {}", self.opts.icf.name()));
        if self.opts.strip {
            args.push("-s".into());
        }
        if let Some(exe) = &self.opts.exe {
            args.push(format!("--exe {}", shell_word(exe)));
        }
        args.push(format!("--parec {}", shell_word(parec)));
        rule(
            s,
            "regenerate",
            &format!("$parec ninja {}", args.join(" ")),
            "NINJA $out",
        );
        let _ = writeln!(s, "  generator = 1");
        let all = ninja_paths(&self.all_sources);
        let _ = writeln!(
            s,
            "build {}: regenerate | {all}{}\n",
            ninja_path(&out),
            self.tool_dependency(parec)
        );
        // A source that is gone (its import removed, the file deleted)
        // makes the file out of date instead of stopping ninja with
        // "missing and no known rule to make it", as CMake's and Meson's
        // build files treat their own inputs.
        let _ = writeln!(s, "build {all}: phony\n");
        Ok(())
    }

    /// An implicit dependency on the parec binary, when it names a file
    /// (a new parec rebuilds everything).
    fn tool_dependency(&self, parec: &str) -> String {
        let path = Path::new(parec);
        if path.is_absolute() && path.is_file() {
            format!(" {}", ninja_path(parec))
        } else {
            String::new()
        }
    }
}

/// An implicit-dependency list of `deps` (`" a b"`, or nothing).
fn implicit(deps: &str) -> String {
    if deps.is_empty() {
        String::new()
    } else {
        format!(" |{deps}")
    }
}

/// A rule: its command, a description and `restat` (every action leaves
/// an unchanged output alone).
fn rule(s: &mut String, name: &str, command: &str, description: &str) {
    let _ = writeln!(
        s,
        "rule {name}\n  command = {command}\n  description = {description}\n  restat = 1"
    );
    if name != "regenerate" {
        s.push('\n');
    }
}
