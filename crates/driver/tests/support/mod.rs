//! Helpers shared by the driver's integration tests (each test file includes
//! this module with `mod support;` and uses what it needs).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use parec::build::{Backend, Build, BuildMode, Input, Units};
use parec::codegen::CodegenOptions;
use parec::pipeline::Pipeline;
use parec::target::{OptLevel, Target};
use parec_passes::clif_module::ClifModule;

/// The workspace root, canonical.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("workspace root")
}

/// A `parec` command: the binary under test, or the one `PAREC_TEST_BIN`
/// names (to show that a regression test fails on an older build).
pub fn parec() -> Command {
    match std::env::var_os("PAREC_TEST_BIN") {
        Some(bin) => Command::new(bin),
        None => Command::new(env!("CARGO_BIN_EXE_parec")),
    }
}

/// Runs `cmd` to completion.
pub fn run(cmd: &mut Command) -> Output {
    cmd.output().expect("cannot start a process")
}

/// The files of `dir` (e.g. `--emit obj` output) as (name, bytes), by name.
pub fn object_files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| {
            let p = e.unwrap().path();
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    files.sort();
    files
}

/// A program with its expected outcome.
pub struct Example {
    pub name: String,
    /// The root source file.
    pub source: PathBuf,
    pub stdout: String,
    pub status: i32,
    pub stderr: String,
}

fn read_optional(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

fn parse_status(path: &Path) -> i32 {
    read_optional(path).map_or(0, |s| {
        s.trim()
            .parse()
            .unwrap_or_else(|_| panic!("{}: not an exit status", path.display()))
    })
}

/// Every program under `subdir` of the workspace (`examples`, `bench`,
/// `filetests/executors`) with its expectations, sorted by name.
pub fn programs_in(subdir: &str) -> Vec<Example> {
    let dir = workspace_root().join(subdir);
    let mut out = Vec::new();
    let entries =
        std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("directory entry").path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if path.is_dir() && path.join("main.pare").exists() {
            let expected_out = path.join("expected.out");
            out.push(Example {
                source: path.join("main.pare"),
                stdout: read_optional(&expected_out)
                    .unwrap_or_else(|| panic!("{} is missing", expected_out.display())),
                status: parse_status(&path.join("expected.status")),
                stderr: read_optional(&path.join("expected.err")).unwrap_or_default(),
                name,
            });
        } else if path.extension().is_some_and(|e| e == "pare") {
            let expected_out = path.with_extension("out");
            out.push(Example {
                source: path.clone(),
                stdout: read_optional(&expected_out)
                    .unwrap_or_else(|| panic!("{} is missing", expected_out.display())),
                status: parse_status(&path.with_extension("status")),
                stderr: read_optional(&path.with_extension("err")).unwrap_or_default(),
                name,
            });
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// Compares one executor's result with the expectations; returns the mismatches.
pub fn compare(example: &Example, executor: &str, o: &Output) -> Vec<String> {
    let mut problems = Vec::new();
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    if stdout != example.stdout {
        problems.push(format!(
            "{} [{executor}]: stdout differs\n--- expected\n{}--- actual\n{}---",
            example.name, example.stdout, stdout
        ));
    }
    if o.status.code() != Some(example.status) {
        problems.push(format!(
            "{} [{executor}]: exit status {:?}, expected {}",
            example.name,
            o.status.code(),
            example.status
        ));
    }
    if stderr != example.stderr {
        problems.push(format!(
            "{} [{executor}]: stderr differs\n--- expected\n{}--- actual\n{}---",
            example.name, example.stderr, stderr
        ));
    }
    problems
}

/// Linked `.text` bytes of an executable.
pub fn text_size(exe: &Path) -> u64 {
    let out = Command::new("aarch64-linux-gnu-size")
        .arg("-A")
        .arg(exe)
        .output()
        .expect("aarch64-linux-gnu-size runs");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| {
            let mut f = l.split_whitespace();
            (f.next() == Some(".text")).then(|| f.next()?.parse().ok())?
        })
        .expect("a .text section")
}

/// The listing of every function of aarch64 `objects` (`--emit asm`'s
/// form), by name: one trimmed line per instruction or relocation.
pub fn function_listings(
    objects: &[parec::codegen::CompiledObject],
) -> std::collections::BTreeMap<String, Vec<String>> {
    let mut functions = std::collections::BTreeMap::new();
    for object in objects {
        let text =
            parec::asm::disassemble_object(&object.bytes, parec::target::Target::Aarch64).unwrap();
        let mut current: Option<String> = None;
        for line in text.lines() {
            if let Some(name) = line.strip_suffix(':').filter(|_| !line.starts_with(' ')) {
                current = Some(name.to_string());
                functions.insert(name.to_string(), Vec::new());
            } else if let Some(name) = &current {
                if !line.trim().is_empty() {
                    let lines: &mut Vec<String> = functions.get_mut(name).unwrap();
                    lines.push(line.trim().to_string());
                }
            }
        }
    }
    functions
}

/// The modules of the program `root` after the CLIF passes of `level`:
/// what Cranelift compiles.
pub fn modules_of(root: &Path, level: OptLevel) -> Vec<ClifModule> {
    clif_build(Pipeline::for_level(level), level)
        .run(Input::Pare(vec![root.to_path_buf()]))
        .unwrap_or_else(|_| panic!("{} does not compile", root.display()))
        .modules
}

/// A build at `level` with `pipeline` that stops after the CLIF passes:
/// one module per unit, for aarch64, one job.
pub fn clif_build(pipeline: Pipeline, level: OptLevel) -> Build {
    Build {
        pipeline,
        level,
        mode: BuildMode::Local,
        backend: Backend::Clif(Some(Target::Aarch64)),
        jobs: 1,
        units: Units::PerModule,
        code_model: Default::default(),
        runtime: Default::default(),
    }
}

/// aarch64 code generation as `level` does it (its machine passes, the
/// shared trap paths, one job), with or without the lowering choice.
pub fn codegen_options(level: OptLevel, choose_lowering: bool) -> CodegenOptions {
    CodegenOptions {
        target: Target::Aarch64,
        level,
        machine: Pipeline::for_level(level).machine,
        jobs: 1,
        near_symbols: false,
        trap_paths: parec::frontend::object_trap_lowering(Target::Aarch64, false).shared_paths(),
        choose_lowering,
    }
}
