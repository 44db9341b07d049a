//! Differential testing in CI: generated programs through the interpreter,
//! the JIT and AOT under qemu in every pass configuration, the CLIF-level
//! pass checks, a planted miscompile that must be caught and shrunk, and
//! robustness of the frontend on mutated programs.
//!
//! `PAREC_DIFF_SEED=N` replays the extra seed (otherwise derived from the
//! time and printed); `PAREC_DIFF_COUNT=N` changes the number of fixed seeds;
//! `PAREC_DIFF_CONFIGS_PER_PROGRAM=N` the configurations each program is
//! checked in by each of the JIT and AOT (0: all of them, the full campaign
//! of `parec fuzz --seed 0 --count 500`).

use std::io::Write as _;
use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use pare_frontend::source::SourceMap;
use parec::target::OptLevel;
use parec_tools::difftest::{planted, CampaignReport, Executor, PassConfig, Runner, TestPass};
use parec_tools::gen::negative::Mutation;
use parec_tools::gen::{generate_from_seed, GenConfig};

/// Programs with fixed seeds per CI run.
const FIXED_PROGRAMS: u64 = 500;
/// Programs from the extra (time-derived) seed.
const EXTRA_PROGRAMS: u64 = 20;
/// Configurations each program is checked in, by the JIT and by AOT each,
/// taken in turn by seed ([`Runner::configs_for`]): every configuration
/// checks `2/C` of the programs in each executor (C the executor's
/// configurations: the JIT leaves out the machine passes alone but one,
/// compiled alike there; AOT counts those besides [`AOT_ALWAYS`]), 70 or
/// more of the 500. Every configuration for every program cost about four
/// times as much (most of CI's test time); the interpreter and the CLIF
/// checks still see every program.
const CONFIGS_PER_PROGRAM: usize = 2;
/// The configurations AOT checks every program in: the levels users build
/// with (`-Os` the default), every pass together, as executables under
/// qemu (the code model and the machine passes only exist there). A
/// miscompile that shows in one program of the 500 at `-O2` or `-Oz`
/// (generated seed 103 on the branch main-with-h32) is found whatever the
/// sampling.
const AOT_ALWAYS: [&str; 3] = ["O2", "Os", "Oz"];
/// Frontend inputs (mutated generated programs).
const FRONTEND_INPUTS: usize = 10_000;
/// Negative programs (one rule of LANGUAGE.md broken each) per CI run.
const NEGATIVE_PROGRAMS: u64 = 400;

fn runner() -> Runner {
    Runner::new(PathBuf::from(env!("CARGO_BIN_EXE_parec-tools")))
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

fn assert_clean(what: &str, report: &CampaignReport) {
    assert!(
        report.failures.is_empty(),
        "{what}: {} failing program(s):\n{}\nreproducers: {:?}",
        report.failures.len(),
        report.failures.join(""),
        report.reproducers
    );
}

fn print_report(what: &str, report: &CampaignReport) {
    println!("{what}: {}", report.summary());
    println!("{what}: {}", report.rates());
}

#[test]
fn generated_programs_agree_everywhere() {
    let out = tempfile::tempdir().unwrap();
    let mut runner = runner();
    runner.configs_per_program =
        env_u64("PAREC_DIFF_CONFIGS_PER_PROGRAM").map_or(CONFIGS_PER_PROGRAM, |n| n as usize);
    runner.aot_always = AOT_ALWAYS.map(String::from).to_vec();
    let count = env_u64("PAREC_DIFF_COUNT").unwrap_or(FIXED_PROGRAMS);
    let fixed = runner.campaign(0, count, out.path(), true);
    print_report("fixed seeds", &fixed);

    let extra_seed = env_u64("PAREC_DIFF_SEED").unwrap_or_else(|| {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        // Far from the fixed seeds; replay with PAREC_DIFF_SEED.
        1_000_000 + now.as_secs() % 1_000_000_000
    });
    // Written to the process's stderr directly: the test harness captures
    // `println!`/`eprintln!` of passing tests, and the seed must reach the CI log.
    let _ = writeln!(
        std::io::stderr(),
        "difftest extra seed: PAREC_DIFF_SEED={extra_seed} ({EXTRA_PROGRAMS} programs)"
    );
    let extra = runner.campaign(extra_seed, EXTRA_PROGRAMS, out.path(), true);
    print_report("extra seed", &extra);

    assert_clean("fixed seeds", &fixed);
    assert_clean(&format!("extra seed {extra_seed}"), &extra);
    assert_eq!(
        fixed.skipped, 0,
        "the interpreter must run every generated program"
    );
    assert!(fixed.clif.compared > 0, "the CLIF checks compared nothing");
    // Every program ran in the interpreter and in its configurations of
    // each executor, and every configuration of each executor ran its share
    // of the programs (N in every C consecutive seeds).
    let runs = |executor: Executor, config: Option<&str>| -> u64 {
        let matching = fixed
            .times
            .iter()
            .filter(|t| t.executor == executor && config.is_none_or(|c| t.config == c));
        matching.map(|t| t.runs as u64).sum()
    };
    assert_eq!(runs(Executor::Interp, None), count);
    for executor in [Executor::Jit, Executor::Aot] {
        let expected: usize = (0..count)
            .map(|seed| runner.configs_for(seed, executor).len())
            .sum();
        assert_eq!(runs(executor, None), expected as u64, "{executor:?}");
        let configs = runner.executor_configs(executor);
        let sampled = (1..configs.len()).contains(&runner.configs_per_program);
        for config in &configs {
            let always = !sampled
                || (executor == Executor::Aot && AOT_ALWAYS.contains(&config.name.as_str()));
            let least = match always {
                true => count,
                false => count / configs.len() as u64 * runner.configs_per_program as u64,
            };
            assert!(
                runs(executor, Some(&config.name)) >= least,
                "{executor:?} ran {} in fewer than {least} programs",
                config.name
            );
        }
    }
}

#[test]
fn planted_miscompile_is_caught_and_shrunk() {
    let out = tempfile::tempdir().unwrap();
    let mut runner = runner();
    runner.executors = vec![Executor::Jit];
    runner.configs = vec![PassConfig::new(
        planted::NAME,
        OptLevel::Oz,
        vec![TestPass::Planted],
    )];
    runner.clif_checks = false;
    runner.max_reproducers = 1;
    let report = runner.campaign(0, 2, out.path(), true);
    assert!(
        !report.failures.is_empty(),
        "the planted miscompile went unnoticed"
    );
    let dir = &report.reproducers[0];
    let mut lines = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "pare") {
            let text = std::fs::read_to_string(&path).unwrap();
            println!("{}:\n{text}", path.display());
            lines += text.lines().count();
        }
    }
    let report_text = std::fs::read_to_string(dir.join("REPORT.txt")).unwrap();
    println!("{report_text}");
    assert!(lines <= 25, "the reproducer has {lines} lines");
    assert!(report_text.contains("planted-iadd-isub"));
    assert!(dir.join("original/main.pare").exists());
}

/// The frontend never panics on mutated generated programs: deleted or
/// duplicated lines, flipped bytes, truncations, swapped tokens.
#[test]
fn frontend_survives_mutated_programs() {
    let cfg = GenConfig {
        max_lines: 120,
        ..GenConfig::default()
    };
    let mut rng = 0x1234_5678_9abc_def0u64;
    let mut next = move || {
        rng ^= rng >> 12;
        rng ^= rng << 25;
        rng ^= rng >> 27;
        rng.wrapping_mul(0x2545_f491_4f6c_dd1d)
    };
    let mut inputs = 0;
    let mut rejected = 0;
    let mut seed = 0;
    while inputs < FRONTEND_INPUTS {
        let program = generate_from_seed(seed, &cfg);
        seed += 1;
        for _ in 0..50 {
            let mut modules = program.modules.clone();
            let m = (next() % modules.len() as u64) as usize;
            let text = mutate(&modules[m].1, &mut next);
            modules[m].1 = text;
            let mut sources = SourceMap::new();
            let files: Vec<(String, _)> = modules
                .iter()
                .map(|(n, t)| (n.clone(), sources.add(format!("{n}.pare"), t.clone())))
                .collect();
            let refs: Vec<(&str, _)> = files.iter().map(|(n, f)| (n.as_str(), *f)).collect();
            if let Err(diags) = pare_frontend::check_sources(&sources, &refs) {
                rejected += 1;
                let _ = diags.render(&sources);
            }
            inputs += 1;
        }
    }
    println!("{inputs} mutated programs, {rejected} rejected with diagnostics");
    assert!(
        rejected > inputs / 4,
        "mutations should mostly break programs"
    );
}

fn mutate(text: &str, next: &mut impl FnMut() -> u64) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    if lines.is_empty() {
        return text.to_string();
    }
    let mut pick = |n: usize| (next() % n.max(1) as u64) as usize;
    match pick(5) {
        0 => {
            let i = pick(lines.len());
            lines.remove(i);
        }
        1 => {
            let i = pick(lines.len());
            let l = lines[i].clone();
            lines.insert(pick(lines.len()), l);
        }
        2 => {
            let mut bytes = lines.join("\n").into_bytes();
            if !bytes.is_empty() {
                let i = pick(bytes.len());
                bytes[i] = b"{}();,:<>=+-*/ax0\"'"[pick(19)];
            }
            return String::from_utf8_lossy(&bytes).into_owned();
        }
        3 => {
            let joined = lines.join("\n");
            let mut cut = pick(joined.len());
            while !joined.is_char_boundary(cut) {
                cut -= 1;
            }
            return joined[..cut].to_string();
        }
        _ => {
            let i = pick(lines.len());
            let words: Vec<&str> = lines[i].split(' ').collect();
            if words.len() > 1 {
                let a = pick(words.len());
                let b = pick(words.len());
                let mut w: Vec<String> = words.iter().map(|s| s.to_string()).collect();
                w.swap(a, b);
                lines[i] = w.join(" ");
            }
        }
    }
    lines.join("\n")
}

/// `parec-tools fuzz`: exit 0 when everything agrees; 1 and the reproducer
/// path on stdout when not. The planted pass is the tester's own: `parec`
/// itself does not know it.
#[test]
fn fuzz_command_exit_status_and_reproducer_path() {
    let out = tempfile::tempdir().unwrap();
    let tools = || std::process::Command::new(env!("CARGO_BIN_EXE_parec-tools"));
    let clean = tools()
        .args([
            "fuzz",
            "--seed",
            "7",
            "--count",
            "2",
            "--executors",
            "interp,jit",
        ])
        .arg("--out")
        .arg(out.path())
        .output()
        .unwrap();
    assert_eq!(
        clean.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&clean.stderr)
    );

    let planted = tools()
        .args(["fuzz", "--seed", "0", "--count", "1", "--executors", "jit"])
        .args(["--configs", planted::NAME, "--no-shrink", "--no-clif"])
        .arg("--out")
        .arg(out.path())
        .output()
        .unwrap();
    assert_eq!(planted.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&planted.stdout);
    let dir = PathBuf::from(stdout.trim());
    assert!(dir.join("REPORT.txt").exists(), "no reproducer at {dir:?}");
    assert!(dir.join("main.pare").exists());

    let unknown = tools()
        .args(["fuzz", "--configs", "no-such-pass", "--count", "1"])
        .output()
        .unwrap();
    assert_eq!(unknown.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&unknown.stderr).contains("unknown configuration `no-such-pass`")
    );
}

/// Negative generation: every generated ill-typed program is rejected by the
/// front end with a located diagnostic and no panic, over every mutation
/// kind; `parec-tools fuzz --count 0 --negative N` runs only those and says so.
#[test]
fn negative_programs_are_rejected() {
    let out = tempfile::tempdir().unwrap();
    let mut runner = runner();
    runner.negative = NEGATIVE_PROGRAMS;
    let report = runner.campaign(0, 0, out.path(), true);
    print_report("negative", &report);
    for (kind, (programs, rejected)) in &report.negative.by_kind {
        println!("{kind:?}: {rejected} of {programs} rejected");
    }
    assert_clean("negative programs", &report);
    assert_eq!(report.negative.programs as u64, NEGATIVE_PROGRAMS);
    assert_eq!(report.negative.rejected as u64, NEGATIVE_PROGRAMS);
    assert_eq!(report.negative.by_kind.len(), Mutation::ALL.len());
    assert!(
        report.negative.at_site * 10 >= report.negative.sited * 9,
        "first errors mostly away from the mutated line: {}",
        report.negative.summary()
    );

    let cli = std::process::Command::new(env!("CARGO_BIN_EXE_parec-tools"))
        .args(["fuzz", "--seed", "3", "--count", "0", "--negative", "40"])
        .arg("--out")
        .arg(out.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&cli.stderr);
    assert_eq!(cli.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("negative: 40 programs, 40 rejected"),
        "{stderr}"
    );
}

/// A few programs, which all hold the constructs of the generator's
/// `edge.rs` (expression `for` bounds, `str` identity across modules, deep
/// recursion, compound assignment with side effects), agree between the
/// interpreter and the JIT without and with the passes.
#[test]
fn edge_constructs_agree_in_the_jit() {
    let out = tempfile::tempdir().unwrap();
    let mut runner = runner();
    runner.executors = vec![Executor::Jit];
    runner.configs = PassConfig::parse_list("Cranelift,Oz").unwrap();
    runner.clif_checks = false;
    let report = runner.campaign(900, 6, out.path(), true);
    print_report("edge constructs", &report);
    assert_clean("edge constructs", &report);
    assert_eq!(report.skipped, 0);
}
