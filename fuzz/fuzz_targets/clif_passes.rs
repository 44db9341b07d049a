//! Fuzzer bytes → program generator → lowered CLIF → every CLIF pass alone,
//! each followed by Cranelift's verifier and, for functions the CLIF
//! interpreter can run on their own, a comparison of results and traps
//! before and after the pass on pseudo-random arguments
//! (`parec_tools::difftest::clif_check`). Everything runs in process.
//!
//! Run: `cargo fuzz run --sanitizer none clif_passes` (from the repository root).
#![no_main]

use arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;
use parec::pipeline::{Pass, Pipeline};
use parec_tools::difftest::{check_program, clif_check};
use parec_tools::gen::{generate, GenConfig};

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let Ok(program) = generate(&mut u, &GenConfig::default()) else {
        return;
    };
    let checked = match check_program(&program) {
        Ok(p) => p,
        Err(diags) => panic!(
            "the generator wrote an ill-typed program:\n{diags}\n{}",
            program.to_text()
        ),
    };
    let seed = data.len() as u64;
    let clif_passes = Pipeline::from_passes(Pass::ALL).clif;
    let (_, failures) = clif_check::check_program(&checked, &clif_passes, seed);
    assert!(
        failures.is_empty(),
        "{}\n{}",
        failures.join("\n"),
        program.to_text()
    );
});
