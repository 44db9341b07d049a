//! The random program generator against the parser, checker and reference
//! interpreter: every generated program must parse, type-check, and run to
//! the end (a trap is fine, an interpreter error is not) quickly.

use std::time::{Duration, Instant};

use arbitrary::Unstructured;
use pare_frontend::interp::{run_with_big_stack, Exit};
use pare_frontend::tir::Program;
use parec_tools::gen::{generate, generate_from_seed, Features, GenConfig, GeneratedProgram};

const SEEDS: u64 = 200;

/// Parses and checks a program's modules (root first); the rendered
/// diagnostics on failure.
fn check_sources(p: &GeneratedProgram) -> Result<Program, String> {
    pare_frontend::check_texts(&p.modules)
}

fn failure_report(seed: u64, p: &GeneratedProgram, why: &str) -> String {
    format!("seed {seed}:\n{why}\n{}", p.to_text())
}

#[test]
fn generated_programs_parse_and_check() {
    let cfg = GenConfig::default();
    let mut failures = Vec::new();
    let mut summary = String::new();
    for seed in 0..SEEDS {
        let p = generate_from_seed(seed, &cfg);
        if let Err(e) = check_sources(&p) {
            let first: Vec<&str> = e.lines().take(8).collect();
            summary += &format!("seed {seed}: {}\n", first.join("\n    "));
            failures.push(failure_report(seed, &p, &e));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {SEEDS} programs failed to check:\n{summary}\nfirst:\n{}",
        failures.len(),
        failures[0]
    );
}

#[test]
fn generated_programs_run_to_the_end() {
    let cfg = GenConfig::default();
    let mut traps = 0;
    let mut slowest = (Duration::ZERO, 0);
    let mut total = Duration::ZERO;
    let mut output_bytes = 0;
    for seed in 0..SEEDS {
        let p = generate_from_seed(seed, &cfg);
        let program = match check_sources(&p) {
            Ok(program) => program,
            Err(e) => panic!("{}", failure_report(seed, &p, &e)),
        };
        let mut out = Vec::new();
        let start = Instant::now();
        let exit = run_with_big_stack(&program, &mut out);
        let took = start.elapsed();
        total += took;
        output_bytes += out.len();
        if took > slowest.0 {
            slowest = (took, seed);
        }
        match exit {
            Exit::Error(e) => panic!(
                "{}",
                failure_report(seed, &p, &format!("interpreter error: {e}"))
            ),
            Exit::Trap(_) => traps += 1,
            Exit::Status(_) => {}
        }
    }
    eprintln!(
        "{SEEDS} programs: {traps} trapped, {:.0} programs/s interpreted, slowest {:?} (seed {}), {} output bytes",
        SEEDS as f64 / total.as_secs_f64(),
        slowest.0,
        slowest.1,
        output_bytes
    );
    assert!(traps * 4 <= SEEDS as usize, "too many traps: {traps}");
}

/// With `trap_probability` 0 every division, index and field access is
/// written to be safe: no program may trap.
#[test]
fn programs_without_trap_sites_never_trap() {
    let cfg = GenConfig {
        trap_probability: 0.0,
        ..GenConfig::default()
    };
    for seed in 0..SEEDS {
        let p = generate_from_seed(seed, &cfg);
        let program = match check_sources(&p) {
            Ok(program) => program,
            Err(e) => panic!("{}", failure_report(seed, &p, &e)),
        };
        let mut out = Vec::new();
        let exit = run_with_big_stack(&program, &mut out);
        assert!(
            matches!(exit, Exit::Status(_)),
            "{}",
            failure_report(seed, &p, &format!("{exit:?}"))
        );
    }
}

/// The required content shows up across seeds (guards against a change
/// silently switching a feature off).
#[test]
fn programs_cover_the_language() {
    let cfg = GenConfig::default();
    let texts: Vec<String> = (0..SEEDS)
        .map(|s| generate_from_seed(s, &cfg).to_text())
        .collect();
    let share = |needle: &str| texts.iter().filter(|t| t.contains(needle)).count();
    for (needle, min) in [
        ("import ", 100),
        ("m1::", 100),
        ("<const K: i64>", 40),
        ("<op: fn(i64) -> i64", 60),
        ("<T>(c: bool, a: T, b: T)", 40),
        ("fn rec", 100),
        ("(d - 1,", 150),
        ("while ", 150),
        ("break;", 40),
        ("continue;", 40),
        ("new [", 150),
        ("= null", 100),
        (" != null", 100),
        ("global ", 150),
        (" as ", 150),
        (" << ", 150),
        (" >> ", 150),
        (" % ", 150),
        (" / ", 150),
        ("&&", 150),
        ("||", 150),
        ("9223372036854775807", 40),
        ("} else {", 150),
        ("print_str(", 80),
        ("struct ", 150),
    ] {
        let n = share(needle);
        eprintln!("{n:4} programs contain `{needle}`");
        assert!(
            n >= min,
            "`{needle}` in only {n} of {SEEDS} programs (expected ≥ {min})"
        );
    }
}

/// Every feature switched off still gives valid programs.
#[test]
fn minimal_features_give_valid_programs() {
    let features = Features {
        generics: false,
        structs: false,
        arrays: false,
        globals: false,
        recursion: false,
        externs: false,
        strings: false,
        shapes: false,
        side_effects: false,
        multi_module: false,
    };
    let cfg = GenConfig {
        features,
        ..GenConfig::default()
    };
    for seed in 0..50 {
        let p = generate_from_seed(seed, &cfg);
        assert_eq!(p.modules.len(), 1);
        let program = match check_sources(&p) {
            Ok(program) => program,
            Err(e) => panic!("{}", failure_report(seed, &p, &e)),
        };
        let exit = run_with_big_stack(&program, &mut Vec::new());
        assert!(
            !matches!(exit, Exit::Error(_)),
            "{}",
            failure_report(seed, &p, &format!("{exit:?}"))
        );
    }
}

#[test]
fn same_seed_gives_same_text() {
    let cfg = GenConfig::default();
    for seed in 0..SEEDS {
        assert_eq!(
            generate_from_seed(seed, &cfg),
            generate_from_seed(seed, &cfg),
            "seed {seed}"
        );
    }
    assert_ne!(generate_from_seed(1, &cfg), generate_from_seed(2, &cfg));
}

#[test]
fn programs_are_modest_and_balanced() {
    let cfg = GenConfig::default();
    for seed in 0..SEEDS {
        let p = generate_from_seed(seed, &cfg);
        assert_eq!(p.modules[0].0, "main");
        assert!(p.modules[0].1.contains("fn main()"), "seed {seed}");
        assert!(p.modules.len() <= 3);
        assert!(
            p.line_count() <= cfg.max_lines + 60,
            "seed {seed}: {} lines",
            p.line_count()
        );
        for (name, text) in &p.modules {
            let depth = text.chars().try_fold(0i64, |d, c| {
                let d = match c {
                    '{' | '(' | '[' => d + 1,
                    '}' | ')' | ']' => d - 1,
                    _ => d,
                };
                (d >= 0).then_some(d)
            });
            // String and char literals never contain brackets, so counting is exact.
            assert_eq!(depth, Some(0), "seed {seed}: unbalanced brackets in {name}");
        }
    }
}

#[test]
fn short_or_empty_input_still_gives_valid_programs() {
    let cfg = GenConfig::default();
    for len in [0usize, 1, 7, 64, 500] {
        let bytes: Vec<u8> = (0..len).map(|i| (i * 37 % 251) as u8).collect();
        let mut u = Unstructured::new(&bytes);
        let p = generate(&mut u, &cfg).expect("generation never fails");
        if let Err(e) = check_sources(&p) {
            panic!("{len} bytes:\n{e}\n{}", p.to_text());
        }
    }
}

/// Arbitrary byte strings, as a fuzzer would feed them (including all-0xff
/// input, which takes the last option of every choice), give valid programs.
#[test]
fn arbitrary_bytes_give_valid_programs() {
    let cfg = GenConfig::default();
    let mut state = 0x1234_5678_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut inputs: Vec<Vec<u8>> = vec![vec![0xff; 4096], vec![0x80; 4096], vec![0; 4096]];
    for _ in 0..40 {
        let len = (next() % 3000) as usize;
        inputs.push((0..len).map(|_| next() as u8).collect());
    }
    for bytes in &inputs {
        let mut u = Unstructured::new(bytes);
        let p = generate(&mut u, &cfg).expect("generation never fails");
        let program = match check_sources(&p) {
            Ok(program) => program,
            Err(e) => panic!("{} bytes:\n{e}\n{}", bytes.len(), p.to_text()),
        };
        let exit = run_with_big_stack(&program, &mut Vec::new());
        assert!(!matches!(exit, Exit::Error(_)), "{exit:?}\n{}", p.to_text());
    }
}

#[test]
fn generation_is_fast() {
    let cfg = GenConfig::default();
    let start = Instant::now();
    let mut lines = 0;
    for seed in 0..SEEDS {
        lines += generate_from_seed(seed, &cfg).line_count();
    }
    let took = start.elapsed();
    eprintln!(
        "generated {SEEDS} programs ({lines} lines) in {took:?}: {:.0} programs/s",
        SEEDS as f64 / took.as_secs_f64()
    );
    assert!(took < Duration::from_secs(30));
}
