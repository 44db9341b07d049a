//! Fuzzer bytes → program generator → the differential runner: the
//! reference interpreter (in process) against the JIT (run by `parec-tools
//! worker` processes, since a trapping program ends its process; the
//! workers live as long as the fuzzer), under every pass configuration.
//! `PAREC_FUZZ_AOT=1` adds AOT builds run under qemu.
//!
//! The `parec-tools` binary comes from `PAREC_TOOLS_BIN`, else
//! `target/release/parec-tools` (build it first: `cargo build --release -p
//! parec-tools`). On a mismatch the
//! program is reduced and saved under `fuzz/artifacts/differential-repro/`,
//! and the target panics so libFuzzer keeps the input.
//!
//! Run: `cargo fuzz run --sanitizer none differential` (from the repository root).
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;
use parec_tools::difftest::{Executor, Runner};
use parec_tools::gen::{generate, GenConfig};

fn runner() -> &'static Runner {
    static RUNNER: OnceLock<Runner> = OnceLock::new();
    RUNNER.get_or_init(|| {
        let tools = std::env::var_os("PAREC_TOOLS_BIN")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                PathBuf::from(concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/../target/release/parec-tools"
                ))
            });
        assert!(
            tools.exists(),
            "no parec-tools binary at {}: build it (cargo build --release -p parec-tools) or set PAREC_TOOLS_BIN",
            tools.display()
        );
        let mut runner = Runner::new(tools);
        runner.executors = vec![Executor::Interp, Executor::Jit];
        if std::env::var("PAREC_FUZZ_AOT").is_ok_and(|v| v == "1") {
            runner.executors.push(Executor::Aot);
        }
        runner.clif_checks = false;
        runner
    })
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let Ok(program) = generate(&mut u, &GenConfig::default()) else {
        return;
    };
    let runner = runner();
    let result = runner.check_case("fuzz-input", program, 0);
    if result.failed() {
        let out = PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/artifacts/differential-repro"
        ));
        let saved = runner.save_reproducer(&result, &out);
        panic!("{}reproducer: {saved:?}", result.summary());
    }
});
