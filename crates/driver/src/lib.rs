//! parec: the compiler driver for Pare and for CLIF.
//!
//! Data flows one way (docs/DESIGN.md has the whole picture):
//!
//! ```text
//! .pare ─ frontend ─┐
//!                   ├─▶ ClifModules ─ CLIF passes ─┬─▶ jit (run on the host)
//! .clif ─ clif_file ┘      (pipeline, build)       └─▶ codegen: Cranelift ─ machine passes ─ object
//!                                                        ─▶ link (ld.lld --icf) ─▶ qemu / the host
//! ```
//!
//! [`build::Build::run`] is the one function every compilation goes through;
//! [`pipeline`] says which passes it runs, [`build::BuildMode`] what they
//! know of the rest of the program (cgdata, rounds). [`clif_to_module`] is
//! the single bridge from ClifModules to cranelift-module; [`commands`]
//! implements the command line.
//!
//! Modules and what they use (no cycles; `cargo test -p parec --test
//! module_graph` checks it):
//!
//! | module          | role                                               |
//! |-----------------|----------------------------------------------------|
//! | [`commands`]    | `parec run`, `interp`, `build`, `opt`, `size`      |
//! | [`cgdata_cmd`]  | `parec cgdata show`, `merge`                        |
//! | [`actions`]     | `parec plan`, `compile`, `link`: separate compilation |
//! | [`ninja`]       | `parec ninja`: a Ninja file of those actions       |
//! | [`build`]       | [`build::Build::run`], build modes, stage times    |
//! | [`pipeline`]    | CLIF and machine passes, the verifier              |
//! | [`plan`]        | what one module's compilation knows of the others  |
//! | [`runtime`]     | `--runtime`: what the runtime stands on, settled   |
//! | [`remarks`]     | the passes' remarks as text and JSON lines         |
//! | [`size`]        | `parec size`: where the bytes of a build went      |
//! | [`codegen`]     | Cranelift, machine passes, objects per module      |
//! | [`object`]      | ELF writing with `.llvm_addrsig`                   |
//! | [`clif_to_module`] | ClifModule → cranelift-module                   |
//! | [`jit`]         | running in-process                                 |
//! | [`frontend`]    | the Pare front end: load, interpret, lower         |
//! | [`clif_file`]   | `.clif` text as a ClifModule                       |
//! | [`clif_header`] | a `.clif` file's `set` and `target` lines          |
//! | [`opt`]         | `parec opt`: passes on a `.clif` file, run lines   |
//! | [`link`], [`link_report`] | linking, running; the post-link merge report |
//! | [`cgdata_file`] | cgdata file I/O                                    |
//! | [`target`]      | targets, levels, ISAs, per-target pass options     |
//! | [`asm`]         | `--emit asm`                                       |
//! | [`io_error`]    | I/O error messages                                 |
//! | [`outputs`]     | output paths checked against the inputs            |
//! | [`parallel`]    | the thread pool of a compilation                   |
//!
//! [`ClifModule`]: parec_passes::clif_module::ClifModule

pub mod actions;
pub mod asm;
pub mod build;
pub mod cgdata_cmd;
pub mod cgdata_file;
pub mod clif_file;
pub mod clif_header;
pub mod clif_to_module;
pub mod codegen;
pub mod commands;
pub mod frontend;
pub mod io_error;
pub mod jit;
pub mod link;
pub mod link_report;
pub mod ninja;
pub mod object;
pub mod opt;
pub mod outputs;
pub mod parallel;
pub mod pipeline;
pub mod plan;
pub mod profile;
pub mod remarks;
pub mod runtime;
pub mod size;
pub mod target;

/// How a command failed.
#[derive(Debug)]
pub enum Failure {
    /// Source diagnostics, already rendered to stderr.
    Reported,
    /// Anything else; printed as `error: ...`.
    Error(anyhow::Error),
}

impl From<anyhow::Error> for Failure {
    fn from(e: anyhow::Error) -> Self {
        Failure::Error(e)
    }
}

/// For callers that only report: diagnostics were already printed.
impl From<Failure> for anyhow::Error {
    fn from(f: Failure) -> Self {
        match f {
            Failure::Reported => anyhow::anyhow!("the program has errors (reported above)"),
            Failure::Error(e) => e,
        }
    }
}
