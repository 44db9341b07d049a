//! The Pare front end, as the driver uses it: loading a program,
//! interpreting it, lowering it.
//!
//! This is the only part of the driver that knows Pare. It turns source files
//! into a checked [`Program`] (rendering diagnostics to stderr, coloured when
//! stderr is a terminal) and the program into [`ClifModule`]s: for the JIT the
//! whole program plus the runtime; for AOT one module per source module plus
//! the runtime, each to become one object.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use anyhow::anyhow;
use codespan_reporting::term::termcolor::{ColorChoice, StandardStream};
use cranelift_codegen::ir::types;
use pare_frontend::interp::{self, Exit};
use pare_frontend::lower::{self, Arch, CFunction, LowerConfig, Runtime, TrapLowering};
use pare_frontend::source::{Diagnostic, Diagnostics, SourceMap};
use pare_frontend::tir::{ModuleId, Program, TRAP_EXIT_STATUS};
use pare_frontend::{LoadError, LoadStage};
use parec_passes::clif_module::ClifModule;
use parec_passes::traps::TrapPaths;

use crate::runtime::RuntimeChoice;
use crate::target::Target;
use crate::Failure;

/// Stack size of the interpreter thread.
const INTERPRETER_STACK: usize = interp::BIG_STACK_SIZE;

/// Writes diagnostics to stderr, in colour if stderr is a terminal.
pub fn emit_diagnostics(diags: &Diagnostics, sources: &SourceMap) {
    let choice = if std::io::stderr().is_terminal() {
        ColorChoice::Auto
    } else {
        ColorChoice::Never
    };
    let mut stderr = StandardStream::stderr(choice);
    diags.emit(sources, &mut stderr);
    let _ = stderr.flush();
}

/// Reads, parses and checks the program rooted at `paths[0]`.
pub fn load(paths: &[PathBuf]) -> Result<Program, Failure> {
    load_reading(paths).map(|loaded| loaded.program)
}

/// A checked program and the files it was read from.
pub struct Loaded {
    pub program: Program,
    /// The given files and the imported modules the front end found, as
    /// named in diagnostics.
    pub files: Vec<PathBuf>,
    /// Their text, for diagnostics about the program as a whole.
    pub sources: SourceMap,
}

/// Like [`load`], also returning the files read.
pub fn load_reading(paths: &[PathBuf]) -> Result<Loaded, Failure> {
    load_reading_observed(paths, &mut |_| {})
}

/// [`load_reading`], calling `ended` as each stage ends (see
/// [`FrontEndStage`]).
fn load_reading_observed(
    paths: &[PathBuf],
    ended: &mut dyn FnMut(FrontEndStage),
) -> Result<Loaded, Failure> {
    let mut sources = SourceMap::new();
    let mut load_ended = |stage| {
        ended(match stage {
            LoadStage::Parse => FrontEndStage::Parse,
            LoadStage::Check => FrontEndStage::Check,
        })
    };
    match pare_frontend::load_program_observed(paths, &mut sources, &mut load_ended) {
        Ok(program) => Ok(Loaded {
            program,
            files: sources
                .file_ids()
                .map(|file| PathBuf::from(sources.name(file)))
                .collect(),
            sources,
        }),
        Err(LoadError::Diagnostics(diags)) => {
            emit_diagnostics(&diags, &sources);
            Err(Failure::Reported)
        }
        Err(LoadError::Message(message)) => Err(Failure::Error(anyhow!("{message}"))),
    }
}

/// Runs the program with the reference interpreter; returns the exit status.
/// A trap prints `trap: <reason>` to stderr and gives status 101.
pub fn interpret(paths: &[PathBuf]) -> Result<i32, Failure> {
    let program = load(paths)?;
    // A tree-walking interpreter needs far more stack per Pare call than
    // compiled code; give it a large (lazily committed) stack of its own.
    let exit = std::thread::scope(|scope| -> anyhow::Result<Exit> {
        let handle = std::thread::Builder::new()
            .name("pare-interp".into())
            .stack_size(INTERPRETER_STACK)
            .spawn_scoped(scope, || {
                // Not Rust's `Stdout`, which hides a closed stream's errors.
                let mut out = std::io::BufWriter::new(crate::io_error::raw_stdout());
                let exit = interp::run(&program, &mut out);
                match out.flush() {
                    Ok(()) => exit,
                    Err(_) => exit.after_write_error(),
                }
            })
            .map_err(|e| anyhow!("cannot start the interpreter thread: {e}"))?;
        // A panic in the interpreter is a parec bug: let `main` report it.
        Ok(handle
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
    })?;
    match exit {
        Exit::Status(status) => Ok(status),
        Exit::Trap(kind) => {
            crate::io_error::eprintln(format_args!("trap: {}", kind.message()));
            Ok(TRAP_EXIT_STATUS)
        }
        Exit::Error(message) => Err(Failure::Error(anyhow!("{message}"))),
    }
}

fn lower_config(
    target_c_conv: cranelift_codegen::isa::CallConv,
    arch: Arch,
    traps: TrapLowering,
    runtime: Runtime,
) -> LowerConfig {
    LowerConfig {
        pointer_type: types::I64,
        c_call_conv: target_c_conv,
        arch,
        traps,
        runtime,
    }
}

/// A lowered program and the source files it was read from.
pub struct Lowered {
    pub modules: Vec<ClifModule>,
    /// See [`Loaded::files`].
    pub files: Vec<PathBuf>,
    /// What the machine pass `parec_passes::traps` needs to complete the
    /// code, when the lowering left checks as `udf`s for it
    /// ([`TrapLowering::shared_paths`]): code generation must run it.
    pub trap_paths: Option<TrapPaths>,
    /// What the runtime module stands on: how the objects are linked.
    pub runtime: Runtime,
}

/// The whole program plus the runtime, for the host JIT.
pub fn lower_for_jit(paths: &[PathBuf]) -> Result<Lowered, Failure> {
    let Loaded { program, files, .. } = load_reading(paths)?;
    let host_conv =
        cranelift_codegen::isa::CallConv::triple_default(&target_lexicon::Triple::host());
    let arch = Arch::host().ok_or_else(|| anyhow!("the JIT does not support this host"))?;
    // The JIT has no machine layer: checks call `pare_trap` in CLIF. It
    // runs in parec's process, on the C library parec runs on.
    let cfg = lower_config(host_conv, arch, TrapLowering::Call, Runtime::Libc);
    Ok(Lowered {
        modules: vec![
            lower::lower_program(&program, &cfg),
            lower::runtime_module(&cfg),
        ],
        files,
        trap_paths: cfg.traps.shared_paths(),
        runtime: cfg.runtime,
    })
}

/// One module of a program, lowered for AOT as [`lower_for_aot`] lowers it.
pub struct LoweredModule {
    pub module: ClifModule,
    /// The names of every module [`lower_for_aot`] would lower, in order
    /// (the runtime last).
    pub names: Vec<String>,
    /// See [`Loaded::files`].
    pub files: Vec<PathBuf>,
    /// See [`Lowered::trap_paths`].
    pub trap_paths: Option<TrapPaths>,
    /// See [`Lowered::runtime`].
    pub runtime: Runtime,
}

/// The module called `name` (a source module, or the runtime) of the program
/// rooted at `paths[0]`, for AOT: the same module [`lower_for_aot`] lowers,
/// without lowering the others. An unknown name is an error listing the
/// program's modules.
pub fn lower_one_for_aot(
    paths: &[PathBuf],
    target: Target,
    runtime: RuntimeChoice,
    profiled: bool,
    name: &str,
) -> Result<LoweredModule, Failure> {
    let Loaded {
        program,
        files,
        sources,
    } = load_reading(paths)?;
    let cfg = lower_config(
        target.c_call_conv(),
        target.arch(),
        object_trap_lowering(target, profiled),
        settle_runtime(runtime, &program, &sources)?,
    );
    let runtime = lower::runtime_module(&cfg);
    let mut names: Vec<String> = program.modules.iter().map(|m| m.name.clone()).collect();
    names.push(runtime.name.clone());
    let module = if name == runtime.name {
        runtime
    } else {
        let index = program.modules.iter().position(|m| m.name == name);
        let index = index.ok_or_else(|| {
            anyhow!(
                "the program has no module `{name}`; its modules are: {}",
                names.join(", ")
            )
        })?;
        lower::lower_module(&program, ModuleId(index as u32), &cfg)
    };
    Ok(LoweredModule {
        module,
        names,
        files,
        trap_paths: cfg.traps.shared_paths(),
        runtime: cfg.runtime,
    })
}

/// A source module of a program and the modules it imports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceModule {
    pub name: String,
    /// The file it was read from, as given or found next to its importer.
    pub path: PathBuf,
    /// The modules it imports, by name, in source order.
    pub imports: Vec<String>,
}

/// The modules of the program rooted at `paths[0]` and their imports, as
/// the front end finds them (parsed, not checked), root first.
pub fn source_modules(paths: &[PathBuf]) -> Result<Vec<SourceModule>, Failure> {
    let mut sources = SourceMap::new();
    let modules = match pare_frontend::load_modules(paths, &mut sources) {
        Ok(modules) => modules,
        Err(LoadError::Diagnostics(diags)) => {
            emit_diagnostics(&diags, &sources);
            return Err(Failure::Reported);
        }
        Err(LoadError::Message(message)) => return Err(Failure::Error(anyhow!("{message}"))),
    };
    Ok(modules
        .iter()
        .map(|m| SourceModule {
            name: m.name.clone(),
            path: PathBuf::from(sources.name(m.file)),
            imports: m
                .items
                .iter()
                .filter_map(|item| match item {
                    pare_frontend::ast::Item::Import(i) => Some(i.module.name.clone()),
                    _ => None,
                })
                .collect(),
        })
        .collect())
}

/// The name of the runtime module, the last object of every AOT build
/// (the same in both flavours).
pub fn runtime_module_name(target: Target) -> String {
    runtime_module(target, Runtime::Libc).name
}

/// The runtime module for objects of `target` that do not complete their
/// checks through shared trap paths (`.clif` programs, whose traps stay
/// traps), standing on `runtime`.
pub fn runtime_module(target: Target, runtime: Runtime) -> ClifModule {
    let cfg = lower_config(
        target.c_call_conv(),
        target.arch(),
        TrapLowering::Call,
        runtime,
    );
    lower::runtime_module(&cfg)
}

/// What the runtime of `program`'s executable stands on, as `choice` asks:
/// the C library for a program that declares an `extern fn` the
/// freestanding runtime does not define ([`CFunction`]; under `auto`),
/// Linux alone otherwise. Asking for a freestanding build of a program
/// that needs the C library is an error located at the first such `extern
/// fn`.
pub fn settle_runtime(
    choice: RuntimeChoice,
    program: &Program,
    sources: &SourceMap,
) -> Result<Runtime, Failure> {
    let mut needs_c = program
        .externs
        .iter()
        .filter(|e| CFunction::named(&e.name).is_none());
    choice.settle(needs_c.next()).map_err(|first| {
        let others = needs_c.count();
        let mut diagnostic = Diagnostic::error(
            first.span,
            format!(
                "`extern fn {}` needs the C library, but the build is freestanding",
                first.name
            ),
        )
        .with_label("a C function the freestanding runtime does not define")
        .with_note(
            "--runtime freestanding links no C library (its runtime defines only putchar, \
             getchar, abs, labs and exit); --runtime libc (or auto, the default) links \
             programs that call other C functions against it",
        );
        if others > 0 {
            diagnostic = diagnostic.with_note(format!("and {others} more `extern fn`"));
        }
        let mut diags = Diagnostics::default();
        diags.push(diagnostic);
        emit_diagnostics(&diags, sources);
        Failure::Reported
    })
}

/// How checks are lowered in code that becomes objects for `target`: the
/// one place that decides, for the lowering ([`lower_for_aot`]) and hence
/// for code generation ([`Lowered::trap_paths`]).
///
/// `profiled`: the build uses a profile (`--profile-use`), which the JIT
/// recorded on its own lowering; the checks are then lowered as the JIT
/// lowers them where that changes blocks (a division's), so the profile's
/// functions match ([`pare_frontend::lower::DivisionChecks::AsTheJit`]).
pub fn object_trap_lowering(target: Target, profiled: bool) -> TrapLowering {
    TrapLowering::for_objects(target.arch(), profiled)
}

/// The stages of the front end, in order, for tools that time them
/// ([`lower_for_aot_observed`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrontEndStage {
    /// Reading and parsing the sources and the modules they import.
    Parse,
    /// Name resolution, type checking and monomorphization.
    Check,
    /// CLIF for every module and the runtime.
    Lower,
}

impl FrontEndStage {
    pub fn name(self) -> &'static str {
        match self {
            FrontEndStage::Parse => "parse",
            FrontEndStage::Check => "check",
            FrontEndStage::Lower => "lower",
        }
    }
}

/// One module per source module, then the runtime (standing on what
/// `runtime` settles to: [`settle_runtime`]), for AOT objects; `profiled`
/// as [`object_trap_lowering`] takes it.
pub fn lower_for_aot(
    paths: &[PathBuf],
    target: Target,
    runtime: RuntimeChoice,
    profiled: bool,
) -> Result<Lowered, Failure> {
    lower_for_aot_observed(paths, target, runtime, profiled, &mut |_| {})
}

/// [`lower_for_aot`], calling `ended` as each [`FrontEndStage`] ends.
pub fn lower_for_aot_observed(
    paths: &[PathBuf],
    target: Target,
    runtime: RuntimeChoice,
    profiled: bool,
    ended: &mut dyn FnMut(FrontEndStage),
) -> Result<Lowered, Failure> {
    let Loaded {
        program,
        files,
        sources,
    } = load_reading_observed(paths, ended)?;
    let traps = object_trap_lowering(target, profiled);
    let runtime = settle_runtime(runtime, &program, &sources)?;
    let cfg = lower_config(target.c_call_conv(), target.arch(), traps, runtime);
    let mut modules: Vec<ClifModule> = (0..program.modules.len())
        .map(|m| lower::lower_module(&program, ModuleId(m as u32), &cfg))
        .collect();
    modules.push(lower::runtime_module(&cfg));
    ended(FrontEndStage::Lower);
    Ok(Lowered {
        modules,
        files,
        trap_paths: cfg.traps.shared_paths(),
        runtime: cfg.runtime,
    })
}
