//! GVN over the generated differential corpus: for each seeded program,
//! lowered for aarch64 as `parec build` does, every function is compiled by
//! Cranelift alone and after `gvn::run_for_size` (what `-Oz` runs). Per
//! function, neither the CLIF instruction count nor the aarch64 code bytes
//! may be larger after GVN; the pass's output must verify and a second run
//! must change nothing. Totals go to stderr (the CI log).
//!
//! `PAREC_GVN_CORPUS_COUNT=N` changes the number of programs (default 60).

use std::io::Write as _;

use cranelift_codegen::ir::Function;
use cranelift_codegen::isa::TargetIsa;
use cranelift_codegen::settings;
use pare_frontend::lower::{lower_program, LowerConfig};
use parec::target::{OptLevel, Target};
use parec_passes::clif_module::count_insts;
use parec_passes::gvn::{self, GvnStats};
use parec_tools::gen::{generate_from_seed, GenConfig};

/// First seed of the corpus (fixed: the figures are reproducible).
const FIRST_SEED: u64 = 7000;
const DEFAULT_PROGRAMS: u64 = 60;

/// Totals over the corpus.
#[derive(Default)]
struct Totals {
    programs: u64,
    functions: u64,
    insts_before: usize,
    insts_after: usize,
    bytes_before: usize,
    bytes_after: usize,
    /// aarch64 bytes with GVN but without PRE (guarded the same way), to
    /// show what PRE itself adds.
    bytes_without_pre: usize,
    /// Functions whose code GVN (with the guard) made smaller.
    smaller: u64,
    stats: GvnStats,
}

fn code_size(func: &Function, isa: &dyn TargetIsa) -> usize {
    parec_passes::code_cache::code_size(func, isa, None)
        .unwrap_or_else(|| panic!("{} does not compile", func.name))
}

#[test]
fn gvn_never_grows_generated_programs() {
    let count = std::env::var("PAREC_GVN_CORPUS_COUNT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_PROGRAMS);
    let target = Target::Aarch64;
    let isa = target.isa(OptLevel::Oz).expect("aarch64 ISA");
    let lower_cfg = LowerConfig {
        pointer_type: isa.pointer_type(),
        c_call_conv: target.c_call_conv(),
        arch: target.arch(),
        traps: pare_frontend::lower::TrapLowering::Call,
        runtime: pare_frontend::lower::Runtime::Libc,
    };
    let flags = settings::Flags::new(settings::builder());
    let mut totals = Totals::default();
    let mut failures = Vec::new();
    for seed in FIRST_SEED..FIRST_SEED + count {
        let generated = generate_from_seed(seed, &GenConfig::default());
        let program = pare_frontend::check_texts(&generated.modules)
            .unwrap_or_else(|e| panic!("seed {seed}: generated program does not check:\n{e}"));
        let module = lower_program(&program, &lower_cfg);
        totals.programs += 1;
        for def in &module.functions {
            let func = &def.func;
            let name = format!("seed {seed} {}", func.name);
            let mut after = func.clone();
            let stats = gvn::run_for_size(&mut after, &*isa);
            if let Err(e) = cranelift_codegen::verify_function(&after, &flags) {
                failures.push(format!("{name}: verifier errors after GVN:\n{e}"));
                continue;
            }
            // Idempotence of the pass itself (with PRE, unguarded).
            let mut once = func.clone();
            gvn::run(&mut once);
            let mut twice = once.clone();
            let second = gvn::run(&mut twice);
            if twice.display().to_string() != once.display().to_string() {
                failures.push(format!(
                    "{name}: a second GVN run changed the function ({second})"
                ));
                if std::env::var_os("PAREC_GVN_CORPUS_SHOW").is_some() {
                    eprintln!(
                        "{name}: once\n{}\ntwice\n{}",
                        once.display(),
                        twice.display()
                    );
                }
            }
            let (insts_before, insts_after) = (count_insts(func), count_insts(&after));
            let (bytes_before, bytes_after) = (code_size(func, &*isa), code_size(&after, &*isa));
            if insts_after > insts_before {
                failures.push(format!(
                    "{name}: CLIF instructions {insts_before} -> {insts_after}"
                ));
            }
            if bytes_after > bytes_before {
                failures.push(format!(
                    "{name}: aarch64 bytes {bytes_before} -> {bytes_after}"
                ));
            }
            totals.functions += 1;
            totals.insts_before += insts_before;
            totals.insts_after += insts_after;
            totals.bytes_before += bytes_before;
            totals.bytes_after += bytes_after;
            let mut without_pre = func.clone();
            gvn::run_with(
                &mut without_pre,
                gvn::GvnOptions {
                    pre: gvn::PreMode::Off,
                    ..Default::default()
                },
            );
            totals.bytes_without_pre += code_size(&without_pre, &*isa).min(bytes_before);
            totals.smaller += u64::from(bytes_after < bytes_before);
            totals.stats.accumulate(&stats);
        }
    }
    let percent = |a: usize, b: usize| 100.0 * (b as f64 - a as f64) / a.max(1) as f64;
    // Written to the process's stderr directly: test output capture would
    // swallow `eprintln!`, and the totals belong in the CI log.
    let _ = writeln!(
        std::io::stderr(),
        "GVN over the generated corpus (seeds {FIRST_SEED}..{}): {} programs, {} functions; \
         CLIF instructions {} -> {} ({:+.2}%); aarch64 bytes {} -> {} ({:+.2}%; without PRE {}); \
         {} functions smaller; {}",
        FIRST_SEED + count,
        totals.programs,
        totals.functions,
        totals.insts_before,
        totals.insts_after,
        percent(totals.insts_before, totals.insts_after),
        totals.bytes_before,
        totals.bytes_after,
        percent(totals.bytes_before, totals.bytes_after),
        totals.bytes_without_pre,
        totals.smaller,
        totals.stats
    );
    assert!(totals.functions > 0, "no function compiled");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
