//! Writes generated Pare programs to disk, for size figures over the
//! generated corpus (the differential tester's programs, `parec fuzz`).
//!
//! `cargo run -p parec-tools --example gen_corpus -- SEED COUNT DIR` writes the
//! programs of seeds `SEED..SEED+COUNT` to `DIR/seed-N/` (root module
//! `main.pare` first), each with the reference interpreter's output in
//! `expected.out` and its exit status in `expected.status`.

use std::path::PathBuf;
use std::process::ExitCode;

use pare_frontend::interp::{self, Exit};
use parec_tools::gen::{generate_from_seed, GenConfig};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(seed), Some(count), Some(dir)) = (
        args.first().and_then(|s| s.parse::<u64>().ok()),
        args.get(1).and_then(|s| s.parse::<u64>().ok()),
        args.get(2).map(PathBuf::from),
    ) else {
        eprintln!("usage: gen_corpus SEED COUNT DIR");
        return ExitCode::from(2);
    };
    let config = GenConfig::default();
    for s in seed..seed.saturating_add(count) {
        let program = generate_from_seed(s, &config);
        let texts: Vec<(&str, &str)> = program
            .modules
            .iter()
            .map(|(name, text)| (name.as_str(), text.as_str()))
            .collect();
        let checked = match pare_frontend::check_texts(&texts) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("seed {s}: the generated program does not check: {e}");
                return ExitCode::FAILURE;
            }
        };
        let mut stdout = Vec::new();
        // Generated programs recurse thousands of frames deep: the interpreter
        // needs more than the main thread's stack.
        let status = match interp::run_with_big_stack(&checked, &mut stdout) {
            Exit::Status(code) => code.to_string(),
            Exit::Trap(kind) => format!("trap {kind:?}"),
            Exit::Error(e) => format!("error {e}"),
        };
        let out = dir.join(format!("seed-{s}"));
        let written = program.write_to_dir(&out).and_then(|_| {
            std::fs::write(out.join("expected.out"), &stdout)?;
            std::fs::write(out.join("expected.status"), status + "\n")
        });
        if let Err(e) = written {
            eprintln!("cannot write {}: {e}", out.display());
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}
