//! The CLIF pass pipeline: the one place that orders parec's passes.
//!
//! Every path that compiles CLIF (the JIT, AOT objects, `parec opt`) runs a
//! [`ClifModule`] through [`Pipeline::run`] before handing it to Cranelift,
//! whose own `Context::compile` then runs the e-graph optimizer, lowering and
//! register allocation. A pipeline is a list of [`Pass`]es in execution order;
//! `-O0` / `-O2` / `-Oz` and `parec opt --passes` only choose the list.
//!
//! The order at `-Oz` ([`Pass::ALL`]):
//!
//! ```text
//! gvn      CLIF, per function          parec_passes::gvn
//! merge    CLIF, per module            parec_passes::merge (cgdata: crate::rounds)
//! fmerge   CLIF, per module            parec_passes::fmerge (remarks: crate::rounds)
//!   ── Cranelift: e-graph, lowering, register allocation, emission ──
//! outline  aarch64 code, per module    parec_passes::outline (crate::object; cgdata: crate::rounds)
//! ```
//!
//! `outline` is a machine-code pass: its place in the list only says that it
//! runs; [`crate::object`] runs it after Cranelift. [`crate::rounds`] splits a
//! build at `merge` to give merging the summary of every module, and repeats
//! code generation for global outlining (`--two-rounds`, `--cgdata-*`).
//!
//! Invariants:
//! - passes see the module in [`ClifModule`] form (external names are
//!   `UserExternalName { namespace: 0, index: symbol }`), never the
//!   cranelift-module ids;
//! - when [`Pipeline::verify`] is set (always in debug builds and tests),
//!   Cranelift's verifier runs on every function after every pass, and a
//!   verifier error stops the pipeline naming the pass and the function.
//!
//! Levels: `-O0` and `-O2` run no parec pass (`-O2` is Cranelift alone, the
//! baseline every size figure is compared to); `-Oz` runs [`Pass::ALL`] in
//! order. With a target ISA, size passes keep a function's rewrite only if
//! its machine code does not grow (see `parec_passes::gvn::run_for_size`).

use cranelift_codegen::ir;
use cranelift_codegen::isa::TargetIsa;
use cranelift_codegen::settings;
use parec_passes::clif_module::ClifModule;
use parec_passes::gvn::{self, GvnStats};

/// A CLIF pass parec can run. Passes are added here as variants; the match
/// in `Pass::run` dispatches to each pass's single public entry point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pass {
    /// Optimistic global value numbering (`parec_passes::gvn`).
    Gvn,
    /// Stable-hash global function merging (`parec_passes::merge`). Run
    /// alone, as here, it merges within the module; builds route it through
    /// [`crate::rounds`], which can give it a cgdata summary instead.
    Merge,
    /// Similar-function merging (`parec_passes::fmerge`) on what `Merge`
    /// left. Builds route it through [`crate::rounds`] for its remarks.
    Fmerge,
    /// The aarch64 machine outliner (`parec_passes::outline`). It works on
    /// emitted machine code, so at the CLIF level it does nothing; the AOT
    /// object writer runs it when the pipeline contains it.
    Outline,
    /// A deliberate miscompile for testing the differential tester
    /// ([`crate::difftest::planted`]); never in [`Pass::ALL`], and accepted
    /// by [`Pass::from_name`] only when `PAREC_TEST_PLANTED=1`.
    #[doc(hidden)]
    Planted,
}

impl Pass {
    /// Every pass, in the order `-Oz` runs them.
    pub const ALL: &'static [Pass] = &[Pass::Gvn, Pass::Merge, Pass::Fmerge, Pass::Outline];

    /// The name used on the command line (`--passes gvn,merge`).
    pub fn name(self) -> &'static str {
        match self {
            Pass::Gvn => "gvn",
            Pass::Merge => "merge",
            Pass::Fmerge => "fmerge",
            Pass::Outline => "outline",
            Pass::Planted => crate::difftest::planted::NAME,
        }
    }

    /// Looks a pass up by its command-line name. The planted test-only pass
    /// is found only when the environment enables it.
    pub fn from_name(name: &str) -> Option<Pass> {
        if name == Pass::Planted.name() && crate::difftest::planted::enabled() {
            return Some(Pass::Planted);
        }
        Self::ALL.iter().copied().find(|p| p.name() == name)
    }

    /// Runs the pass on every function of `module`; returns its statistics
    /// as one line. With `isa`, rewrites that grow machine code are undone.
    fn run(self, module: &mut ClifModule, isa: Option<&dyn TargetIsa>) -> String {
        match self {
            Pass::Gvn => {
                let mut total = GvnStats::default();
                for def in &mut module.functions {
                    let stats = match isa {
                        Some(isa) => gvn::run_for_size(&mut def.func, isa),
                        None => gvn::run(&mut def.func),
                    };
                    total.accumulate(&stats);
                }
                total.to_string()
            }
            Pass::Merge => {
                let options = crate::rounds::merge_options_for(isa);
                parec_passes::merge::run(module, None, &options)
                    .stats
                    .to_string()
            }
            Pass::Fmerge => crate::rounds::run_fmerge(module, isa).stats.to_string(),
            Pass::Outline => "runs on machine code (AOT, aarch64)".to_string(),
            Pass::Planted => crate::difftest::planted::run(module),
        }
    }
}

/// Optimization level of a build.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum OptLevel {
    /// No parec passes, Cranelift `opt_level=none`.
    O0,
    /// Speed: Cranelift `opt_level=speed`, parec's passes that never cost speed.
    O2,
    /// Size (the default): Cranelift `opt_level=speed`, all of parec's size passes.
    #[default]
    Oz,
}

impl OptLevel {
    /// The value of Cranelift's `opt_level` setting for this level.
    pub fn cranelift_opt_level(self) -> &'static str {
        match self {
            OptLevel::O0 => "none",
            OptLevel::O2 | OptLevel::Oz => "speed",
        }
    }
}

/// An ordered list of passes and whether to verify after each.
#[derive(Clone, Debug)]
pub struct Pipeline {
    pub passes: Vec<Pass>,
    /// Run Cranelift's verifier on every function after every pass.
    pub verify: bool,
}

/// Instruction counts of one function before and after the pipeline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionStats {
    pub name: String,
    pub before: usize,
    pub after: usize,
}

impl Pipeline {
    /// The pipeline of an optimization level: no parec pass below `-Oz`.
    pub fn for_level(level: OptLevel) -> Pipeline {
        let passes = match level {
            OptLevel::O0 | OptLevel::O2 => Vec::new(),
            OptLevel::Oz => Pass::ALL.to_vec(),
        };
        Pipeline {
            passes,
            verify: cfg!(debug_assertions),
        }
    }

    /// Parses a comma-separated pass list (`""` is the empty pipeline).
    pub fn from_names(list: &str) -> Result<Pipeline, String> {
        let mut passes = Vec::new();
        for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            match Pass::from_name(name) {
                Some(p) => passes.push(p),
                None => {
                    return Err(format!(
                        "unknown pass `{name}`; available: {}",
                        available_passes()
                    ))
                }
            }
        }
        Ok(Pipeline {
            passes,
            verify: cfg!(debug_assertions),
        })
    }

    /// Splits the pipeline around [`Pass::Merge`]: the passes before it, and
    /// those after it (`None` if it does not merge). Two-round builds run the
    /// first part, then merging with a summary, then the second.
    pub fn split_at_merge(&self) -> Option<(Pipeline, Pipeline)> {
        self.split_at(Pass::Merge)
    }

    /// Splits the pipeline around the first `pass`: the passes before it,
    /// and those after it.
    pub fn split_at(&self, pass: Pass) -> Option<(Pipeline, Pipeline)> {
        let at = self.passes.iter().position(|&p| p == pass)?;
        let part = |passes: &[Pass]| Pipeline {
            passes: passes.to_vec(),
            verify: self.verify,
        };
        Some((part(&self.passes[..at]), part(&self.passes[at + 1..])))
    }

    /// Whether the machine outliner runs after code generation.
    pub fn outlines(&self) -> bool {
        self.passes.contains(&Pass::Outline)
    }

    /// Runs the passes in order on `module`, verifying after each if asked.
    /// `isa` is used by the verifier for target-specific checks, if given.
    pub fn run(&self, module: &mut ClifModule, isa: Option<&dyn TargetIsa>) -> Result<(), String> {
        self.run_reporting(module, isa).map(|_| ())
    }

    /// Like [`Pipeline::run`], returning each pass's statistics line.
    pub fn run_reporting(
        &self,
        module: &mut ClifModule,
        isa: Option<&dyn TargetIsa>,
    ) -> Result<Vec<(&'static str, String)>, String> {
        let mut reports = Vec::new();
        for &pass in &self.passes {
            reports.push((pass.name(), pass.run(module, isa)));
            if self.verify {
                verify_module(module, isa)
                    .map_err(|e| format!("after pass `{}`: {e}", pass.name()))?;
            }
        }
        Ok(reports)
    }
}

/// The names of all passes, for error messages.
pub fn available_passes() -> String {
    if Pass::ALL.is_empty() {
        "(none)".to_string()
    } else {
        Pass::ALL
            .iter()
            .map(|p| p.name())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Runs Cranelift's verifier on every function of `module`.
pub fn verify_module(module: &ClifModule, isa: Option<&dyn TargetIsa>) -> Result<(), String> {
    for def in &module.functions {
        verify_function(&def.func, isa).map_err(|e| {
            let name = module
                .symbols
                .get(def.symbol as usize)
                .map_or("?", |s| s.name.as_str());
            format!("function `{name}` fails verification:\n{e}")
        })?;
    }
    Ok(())
}

/// Runs Cranelift's verifier on one function.
pub fn verify_function(func: &ir::Function, isa: Option<&dyn TargetIsa>) -> Result<(), String> {
    let flags = settings::Flags::new(settings::builder());
    let result = match isa {
        Some(isa) => cranelift_codegen::verify_function(func, isa),
        None => cranelift_codegen::verify_function(func, &flags),
    };
    result.map_err(|errors| {
        cranelift_codegen::print_errors::pretty_verifier_error(func, None, errors)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_list_is_empty_pipeline() {
        assert!(Pipeline::from_names("").unwrap().passes.is_empty());
        assert!(Pipeline::from_names(" , ").unwrap().passes.is_empty());
    }

    #[test]
    fn unknown_pass_is_rejected() {
        let err = Pipeline::from_names("gvn,nope").unwrap_err();
        assert_eq!(
            err,
            "unknown pass `nope`; available: gvn, merge, fmerge, outline"
        );
    }

    #[test]
    fn levels_choose_passes() {
        assert!(Pipeline::for_level(OptLevel::O0).passes.is_empty());
        assert!(
            Pipeline::for_level(OptLevel::O2).passes.is_empty(),
            "-O2 is Cranelift alone"
        );
        assert_eq!(
            Pipeline::for_level(OptLevel::Oz).passes,
            vec![Pass::Gvn, Pass::Merge, Pass::Fmerge, Pass::Outline]
        );
    }
}
