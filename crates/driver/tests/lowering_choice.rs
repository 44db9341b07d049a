//! The choice between the lowerings with and without Cranelift's mid-end
//! at `-Oz` (`parec_passes::mid_end`, docs/DESIGN.md "The mid-end at
//! `-Oz`"), on every program of `examples/` and on two of `bench/`:
//!
//! - no function's code after the machine passes before the outliner is
//!   larger than the code of the lowering the size passes measured, and
//!   some are smaller;
//! - the choice's statistics agree with the code;
//! - the size guard's measure (no choice) and the levels other than `-Oz`
//!   are untouched.
//!
//! That the chosen code computes the same results is checked by
//! `tests/examples.rs` (every example and benchmark at `-Oz` under qemu),
//! by `filetests/clif/mid_end_choice.clif` and by the differential tester.

use std::collections::BTreeSet;
use std::path::PathBuf;

use parec::codegen;
use parec::target::OptLevel;

mod support;
use support::{codegen_options, modules_of, workspace_root};

/// The root file of every program in `examples/`, and of two benchmarks
/// the choice changes.
fn corpus() -> Vec<PathBuf> {
    let dir = workspace_root().join("examples");
    let mut out: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter_map(|path| match path.extension() {
            Some(e) if e == "pare" => Some(path),
            _ if path.join("main.pare").exists() => Some(path.join("main.pare")),
            _ => None,
        })
        .collect();
    out.sort();
    for bench in ["calc", "generic_zoo"] {
        out.push(workspace_root().join("bench").join(bench).join("main.pare"));
    }
    assert!(out.len() > 10, "the corpus is unexpectedly small");
    out
}

#[test]
fn the_chosen_lowering_is_never_larger_and_sometimes_smaller() {
    let mut smaller = 0;
    for root in corpus() {
        for module in modules_of(&root, OptLevel::Oz) {
            let what = format!("{}:{}", root.display(), module.name);
            let lower = |choose| {
                codegen::lower_module(
                    &module,
                    &codegen_options(OptLevel::Oz, choose),
                    &BTreeSet::new(),
                )
                .unwrap_or_else(|e| panic!("{what}: {e:#}"))
            };
            let measured = lower(false);
            let chosen = lower(true);
            assert!(measured.lowering_stats().is_none(), "{what}");
            let stats = chosen
                .lowering_stats()
                .unwrap_or_else(|| panic!("{what}: no choice at -Oz"));
            assert_eq!(stats.functions, module.functions.len(), "{what}");
            assert!(stats.plain <= stats.candidates, "{what}");
            assert!(stats.chosen_bytes <= stats.measured_bytes, "{what}");
            let before = measured.function_sizes();
            let after = chosen.function_sizes();
            assert_eq!(before.len(), after.len(), "{what}");
            let mut saved = 0;
            for ((name, b), (same, a)) in before.iter().zip(&after) {
                assert_eq!(name, same, "{what}");
                assert!(a <= b, "{what}: `{name}` grew from {b} to {a} bytes");
                saved += b - a;
                smaller += usize::from(a < b);
            }
            assert_eq!(
                saved as u64,
                stats.measured_bytes - stats.chosen_bytes,
                "{what}: the statistics are not the code's"
            );
        }
    }
    assert!(smaller > 0, "the choice changed no function of the corpus");
}

/// At `-O2` and `-Os` Cranelift's mid-end stays as it is: no choice, the
/// same code.
#[test]
fn other_levels_make_no_choice() {
    let root = workspace_root().join("bench/calc/main.pare");
    for level in [OptLevel::O2, OptLevel::Os] {
        for module in modules_of(&root, level) {
            let lower = |choose| {
                codegen::lower_module(&module, &codegen_options(level, choose), &BTreeSet::new())
                    .unwrap()
            };
            let (plain, chosen) = (lower(false), lower(true));
            assert!(chosen.lowering_stats().is_none());
            assert_eq!(plain.function_sizes(), chosen.function_sizes());
        }
    }
}
