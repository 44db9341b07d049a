//! Writes a seed corpus for the generator-driven cargo-fuzz targets
//! (`fuzz/fuzz_targets/clif_passes.rs`, `differential.rs`): for each seed of
//! `SEED..SEED+COUNT`, the first `LEN` bytes of that seed's generator input
//! (`parec_tools::gen::seed_input`, the bytes `parec fuzz --seed N` generates
//! from) to `DIR/seed-N`.
//!
//! `cargo run -p parec-tools --example fuzz_seeds -- SEED COUNT LEN DIR`
//!
//! Without a seed corpus libFuzzer starts from the empty input and grows it a
//! few bytes at a time, so a short run only sees the generator's smallest
//! programs; these files are real programs from the first execution on, and
//! the same on every machine, so a run with a fixed `-seed` is repeatable.

use std::path::PathBuf;
use std::process::ExitCode;

use parec_tools::gen::seed_input;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(seed), Some(count), Some(len), Some(dir), None) = (
        args.first().and_then(|s| s.parse::<u64>().ok()),
        args.get(1).and_then(|s| s.parse::<u64>().ok()),
        args.get(2).and_then(|s| s.parse::<usize>().ok()),
        args.get(3).map(PathBuf::from),
        args.get(4),
    ) else {
        eprintln!("usage: fuzz_seeds SEED COUNT LEN DIR");
        return ExitCode::from(2);
    };
    if let Err(e) = std::fs::create_dir_all(&dir) {
        eprintln!("cannot create {}: {e}", dir.display());
        return ExitCode::FAILURE;
    }
    for s in seed..seed.saturating_add(count) {
        let path = dir.join(format!("seed-{s}"));
        if let Err(e) = std::fs::write(&path, seed_input(s, len)) {
            eprintln!("cannot write {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}
