//! `parec bench --scaling`: how the compile phases grow with module size.
//!
//! A synthetic Pare module of N functions is generated from a few templates
//! (arithmetic, loops, arrays, calls to earlier functions, a GCD-like
//! `while`, redundant expressions), instantiated with constants drawn from a
//! fixed LCG, and a sixth of the functions are exact copies of an earlier
//! function apart from the name: the kind of similarity real code (and
//! monomorphized generics) has. The same N always gives the same text.
//!
//! For each N the module goes through [`Build::run`] with no pass (timed
//! stages: "frontend", "cranelift" and "object"), then each pass of
//! [`Pass::ALL`] runs alone on a fresh copy of the lowered modules (the
//! pass's own stage time, verifier off): CLIF passes on CLIF, machine passes
//! — the outliner — on the code Cranelift generated for them, so every row
//! times real work. Sizes below 10,000 functions are measured five times and
//! each phase's median taken (a phase of a 1,000-function module takes
//! milliseconds). Times are reported in total and per function; the growth
//! column is the per-function time at the largest N over that at the smallest,
//! and a phase whose growth exceeds [`SUPERLINEAR`] is flagged, since every
//! function has the same size distribution at every N.
//!
//! The front end is also run alone, stage by stage (`frontend: parse` —
//! reading and parsing the sources —, `frontend: check` — name resolution,
//! type checking and monomorphization, which instantiates generics as the
//! checker meets them —, `frontend: lower` — CLIF of every module and the
//! runtime), and every row has a peak-memory figure: the most heap bytes
//! live at once during the phase, counted by the binary's allocator
//! ([`crate::heap`]).
//!
//! The pass rows time the passes as `-Oz` runs them, size guard included
//! (GVN's guard compiles each changed function two or three times). Below the
//! table, GVN alone (`gvn::run`, no guard) is timed per 1,000 CLIF
//! instructions, with the largest function's own time.
//!
//! A second table times similar-function merging's candidate search alone
//! ([`search_scaling`]): F3M's LSH (adaptive and static) against exhaustive
//! pairwise ranking (MinHash and HyFM's opcode frequencies), at sizes up to
//! 100,000 functions without the frontend. The functions are the distinct
//! F3M instruction encodings of every function of the `bench/` corpus
//! (real code; the synthetic module's six templates would put nearly every
//! function in the same buckets), or of the 1,000-function synthetic module
//! when there is no corpus, repeated with every tenth encoding of each copy
//! perturbed (a copy number and position hash xored into the opcode byte),
//! so that copies are similar but not identical. Each function is ranked once (top 5, no
//! merging). Exhaustive ranking above 1,000 functions times 1,000 evenly
//! spaced queries and scales the time to all of them (every query does the
//! same work), which the table marks.

use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::heap::StagePeak;
use anyhow::{anyhow, Result};
use parec::build::{Backend, Build, BuildMode, Input, Units};
use parec::codegen::CodeModel;
use parec::frontend;
use parec::io_error::reason as io_reason;
use parec::pipeline::{Pass, Pipeline};
use parec::runtime::RuntimeChoice;
use parec::target::{OptLevel, Target};
use parec::Failure;
use parec_passes::clif_module::{count_insts, ClifModule};
use parec_passes::fmerge::{fingerprint, FmergeStats, FmergeTimes, LshParams, Search, SearchIndex};
use parec_passes::gvn;

/// Per-function growth (largest N over smallest) above which a phase is
/// reported as superlinear.
pub const SUPERLINEAR: f64 = 1.5;

/// The default module sizes (100k functions takes minutes in the frontend
/// and in Cranelift, so it is left to `--sizes`).
pub const DEFAULT_SIZES: &[usize] = &[1_000, 10_000];

/// A Pare root module with `n` functions `f0`..`f{n-1}` of type
/// `(i64, i64) -> i64` and a `main` calling the last few.
pub fn synthetic_module(n: usize) -> String {
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move |bound: u64| -> u64 {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) % bound
    };
    let mut bodies: Vec<String> = Vec::with_capacity(n);
    let mut out = String::new();
    for k in 0..n {
        // Every sixth function (after the first few) copies an earlier body.
        let body = if k >= 6 && k % 6 == 5 {
            bodies[next(k as u64) as usize].clone()
        } else {
            template_body(k, &mut next)
        };
        let _ = writeln!(out, "fn f{k}(x: i64, y: i64) -> i64 {{\n{body}}}\n");
        bodies.push(body);
    }
    out.push_str("fn main() {\n    let mut s = 0;\n");
    for k in n.saturating_sub(8)..n {
        let _ = writeln!(out, "    s = s ^ f{k}({k}, 3);");
    }
    out.push_str("    print(s);\n}\n");
    out
}

/// The body of function `k` from template `k % 6`.
fn template_body(k: usize, next: &mut impl FnMut(u64) -> u64) -> String {
    let c1 = next(1000) + 1;
    let c2 = next(100_000) + 7;
    let sh = next(30) + 1;
    match k % 6 {
        0 => format!(
            "    let a = x * {c1} + y;\n    let b = a ^ (a >> {sh});\n    \
             if b > {c2} {{ b - x }} else {{ b + y }}\n"
        ),
        1 => format!(
            "    let mut s = x;\n    for i in 0..(y & 15) {{\n        s = s * {c1} + i;\n        \
             s = s ^ (s >> {sh});\n    }}\n    s\n"
        ),
        2 if k > 0 => {
            let j1 = next(k as u64);
            let j2 = next(k as u64);
            format!("    f{j1}(x, y & {c1}) + f{j2}(y, x >> {sh})\n")
        }
        3 => format!(
            "    let a = new [i64; 8];\n    for i in 0..8 {{\n        a[i] = x * i + {c1};\n    }}\n    \
             a[y & 7] + a[(y >> {sh}) & 7]\n"
        ),
        4 => format!(
            "    let mut a = x;\n    let mut b = y | 1;\n    let mut n = 0;\n    \
             while b != 0 && n < {c1} {{\n        let t = a % b;\n        a = b;\n        b = t;\n        \
             n = n + 1;\n    }}\n    a\n"
        ),
        _ => format!(
            "    let p = x * y + {c1};\n    let q = x * y + {c1};\n    \
             if x > y {{ p - q + (x + y) }} else {{ (x + y) * {c2} + (p >> {sh}) }}\n"
        ),
    }
}

/// The times of one module size.
#[derive(Clone, Debug)]
struct SizeTimes {
    functions: usize,
    /// Phases in the same order for every size.
    phases: Vec<Phase>,
    gvn_alone: GvnAlone,
    /// What similar-function merging did, and where its time went.
    fmerge: (FmergeStats, FmergeTimes),
}

/// One row of the table at one size.
#[derive(Clone, Debug)]
struct Phase {
    name: String,
    time: Duration,
    /// The most heap bytes live at once during the phase (`crate::heap`);
    /// `None` where the heap is not counted.
    peak: Option<usize>,
    /// What the peak covers, when more than the phase itself.
    peak_of: Option<&'static str>,
}

impl Phase {
    fn new(name: &str, time: Duration, peak: Option<usize>) -> Phase {
        Phase {
            name: name.to_string(),
            time,
            peak,
            peak_of: None,
        }
    }
}

/// GVN without the size guard over every function of a module.
#[derive(Clone, Debug, Default)]
struct GvnAlone {
    /// CLIF instructions before the pass, in all functions.
    insts: usize,
    time: Duration,
    /// The largest function's instructions and its time.
    largest: (usize, Duration),
    /// The same without PRE (`PreMode::Off`), to show PRE's share.
    without_pre: Duration,
}

/// Times `gvn::run` on a copy of every function of `modules`.
fn time_gvn_alone(modules: &[ClifModule]) -> GvnAlone {
    let mut alone = GvnAlone::default();
    for def in modules.iter().flat_map(|m| &m.functions) {
        let mut func = def.func.clone();
        let insts = count_insts(&func);
        let mut plain = func.clone();
        let start = Instant::now();
        gvn::run(&mut func);
        let time = start.elapsed();
        let start = Instant::now();
        gvn::run_with(
            &mut plain,
            gvn::GvnOptions {
                pre: gvn::PreMode::Off,
                ..Default::default()
            },
        );
        alone.without_pre += start.elapsed();
        alone.insts += insts;
        alone.time += time;
        if insts > alone.largest.0 {
            alone.largest = (insts, time);
        }
    }
    alone
}

/// `parec bench --scaling`: prints the tables; returns 0.
pub fn scaling(sizes: &[usize], search_sizes: &[usize]) -> Result<i32, Failure> {
    if sizes.is_empty() || sizes.contains(&0) || search_sizes.contains(&0) {
        return Err(anyhow!("--sizes and --search-sizes need positive function counts").into());
    }
    let mut sizes = sizes.to_vec();
    sizes.sort_unstable();
    sizes.dedup();
    let mut results = Vec::new();
    for &n in &sizes {
        results.push(measure_size_median(n)?);
    }
    parec::io_error::write_stdout(scaling_markdown(&results).as_bytes())?;
    if !search_sizes.is_empty() {
        let text = format!("\n{}", search_scaling(search_sizes)?);
        parec::io_error::write_stdout(text.as_bytes())?;
    }
    Ok(0)
}

/// Queries timed per exhaustive search above this many functions.
const EXHAUSTIVE_SAMPLE: usize = 1_000;

/// One search configuration's time at one size.
#[derive(Clone, Debug)]
struct SearchTime {
    time: Duration,
    /// Fingerprint comparisons per ranked function.
    comparisons: f64,
    /// Candidates returned per ranked function (at most 5).
    found: f64,
    extrapolated: bool,
}

/// The F3M encodings of `n` functions (see the module doc).
fn search_workload(base: &[Vec<u32>], n: usize) -> Vec<Vec<u32>> {
    let mix = |a: u64, b: u64| {
        let mut z = a.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ b.wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z ^= z >> 31;
        z.wrapping_mul(0x94d0_49bb_1331_11eb) >> 16
    };
    (0..n)
        .map(|i| {
            let mut e = base[i % base.len()].clone();
            let copy = (i / base.len()) as u64;
            if copy > 0 {
                for (p, x) in e.iter_mut().enumerate() {
                    let h = mix(i as u64, p as u64);
                    if h % 10 == 0 {
                        *x ^= (h >> 8) as u32 & 0xff | 1;
                    }
                }
            }
            e
        })
        .collect()
}

/// The distinct F3M encodings (of at least 3 instructions) of every
/// function of the programs in `dir`, if it holds a benchmark corpus.
fn corpus_encodings(dir: &Path) -> Result<Option<Vec<Vec<u32>>>> {
    let Ok(programs) = super::discover(dir, &[]) else {
        return Ok(None);
    };
    if programs.is_empty() {
        return Ok(None);
    }
    let mut base = Vec::new();
    for program in programs {
        let modules =
            lowered(&program.main).map_err(|e| anyhow!("`{}`: {e:#}", program.main.display()))?;
        base.extend(encodings_of(&modules));
    }
    base.sort();
    base.dedup();
    Ok(Some(base))
}

/// The distinct encodings of the 1,000-function synthetic module.
fn synthetic_encodings() -> Result<Vec<Vec<u32>>> {
    let dir = tempfile::Builder::new()
        .prefix("parec-scaling-")
        .tempdir()
        .map_err(|e| anyhow!("cannot create a temporary directory: {e}"))?;
    let main = dir.path().join("main.pare");
    std::fs::write(&main, synthetic_module(1_000))
        .map_err(|e| anyhow!("cannot write `{}`: {}", main.display(), io_reason(&e)))?;
    let modules = lowered(&main).map_err(|e| anyhow!("the synthetic module: {e:#}"))?;
    let mut base = encodings_of(&modules);
    base.sort();
    base.dedup();
    Ok(base)
}

/// The CLIF modules of the Pare program `main`, lowered for aarch64.
fn lowered(main: &Path) -> Result<Vec<ClifModule>> {
    let output = build(Pipeline::empty(), Backend::Clif(Some(Target::Aarch64)))
        .run(Input::Pare(vec![main.to_path_buf()]))
        .map_err(|e| match e {
            Failure::Reported => anyhow!("the program has errors"),
            Failure::Error(e) => e,
        })?;
    Ok(output.modules)
}

fn encodings_of(modules: &[ClifModule]) -> Vec<Vec<u32>> {
    modules
        .iter()
        .flat_map(|m| &m.functions)
        .map(|d| fingerprint::encodings(&d.func))
        .filter(|e| e.len() >= 3)
        .collect()
}

/// The CPU time of the calling thread: the search table measures work, not
/// wall time, so that other processes on the machine do not inflate it.
fn thread_cpu_time() -> Duration {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `clock_gettime` only writes the `timespec` it is given.
    let ok = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) } == 0;
    if !ok {
        return Duration::ZERO;
    }
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// Times one search over `functions`: index, then rank every function
/// (or every `stride`-th, scaled).
fn time_search(search: Search, functions: &[Vec<u32>]) -> SearchTime {
    let n = functions.len();
    let exhaustive = matches!(
        search,
        Search::ExhaustiveMinHash | Search::ExhaustiveFrequency
    );
    let stride = if exhaustive && n > EXHAUSTIVE_SAMPLE {
        n / EXHAUSTIVE_SAMPLE
    } else {
        1
    };
    let start = thread_cpu_time();
    let mut index = SearchIndex::new(search, n, 5);
    for e in functions {
        let frequency = (search == Search::ExhaustiveFrequency)
            .then(|| fingerprint::OpcodeFrequency::from_encodings(e));
        index.insert(e, frequency);
    }
    let build = thread_cpu_time() - start;
    let start = thread_cpu_time();
    let mut found = 0;
    let mut queries = 0;
    for id in (0..n).step_by(stride) {
        found += index.candidates(id).len();
        queries += 1;
    }
    let ranking = thread_cpu_time() - start;
    SearchTime {
        time: build + ranking.mul_f64(n as f64 / queries as f64),
        comparisons: index.comparisons as f64 / queries as f64,
        found: found as f64 / queries as f64,
        extrapolated: stride > 1,
    }
}

/// The candidate-search table (see the module doc).
pub fn search_scaling(sizes: &[usize]) -> Result<String> {
    let mut sizes = sizes.to_vec();
    sizes.sort_unstable();
    sizes.dedup();
    let (base, source) = match corpus_encodings(Path::new("bench"))? {
        Some(base) => (base, "the bench/ corpus"),
        None => (
            synthetic_encodings()?,
            "the lowered 1,000-function synthetic module",
        ),
    };
    let searches = [
        ("LSH adaptive (F3M)", Search::LshAdaptive),
        ("LSH static k=200 b=100", Search::LshStatic),
        ("exhaustive MinHash", Search::ExhaustiveMinHash),
        (
            "exhaustive opcode frequency (HyFM)",
            Search::ExhaustiveFrequency,
        ),
    ];
    let mut times: Vec<Vec<SearchTime>> = Vec::new();
    for &n in &sizes {
        let functions = search_workload(&base, n);
        times.push(
            searches
                .iter()
                .map(|&(_, s)| time_search(s, &functions))
                .collect(),
        );
    }
    let mut out =
        String::from("fmerge candidate search (rank every function once, top 5):\n\n| search |");
    let mut rule = String::from("|---|");
    for &n in &sizes {
        let _ = write!(out, " {n} fns ms | µs/fn | cmp/fn | found/fn |");
        rule.push_str("---:|---:|---:|---:|");
    }
    let _ = writeln!(out, " growth per fn |\n{rule}---:|");
    for (s, (name, search)) in searches.iter().enumerate() {
        let mut line = format!("| {name} |");
        for (k, &n) in sizes.iter().enumerate() {
            let t = &times[k][s];
            let mark = if t.extrapolated { "*" } else { "" };
            let _ = write!(
                line,
                " {:.1}{mark} | {:.2} | {:.1} | {:.2} |",
                t.time.as_secs_f64() * 1000.0,
                t.time.as_secs_f64() * 1e6 / n as f64,
                t.comparisons,
                t.found
            );
        }
        let per_fn = |k: usize| times[k][s].time.as_secs_f64() / sizes[k] as f64;
        let growth = per_fn(sizes.len() - 1) / per_fn(0).max(f64::MIN_POSITIVE);
        let params = match search {
            Search::LshAdaptive => {
                let last = LshParams::adaptive(sizes[sizes.len() - 1]);
                format!(
                    " (b={}, t={:.2} at {} fns)",
                    last.bands,
                    last.threshold,
                    sizes[sizes.len() - 1]
                )
            }
            _ => String::new(),
        };
        let _ = writeln!(line, " {growth:.2}{params} |");
        out.push_str(&line);
    }
    let _ = writeln!(
        out,
        "\n* extrapolated from {EXHAUSTIVE_SAMPLE} evenly spaced queries. Times include \
         fingerprinting and indexing; {} distinct base functions (F3M encodings of {source}), \
         copies perturbed in every tenth encoding.",
        base.len()
    );
    Ok(out)
}

/// Sizes below this are measured [`SMALL_SIZE_RUNS`] times: a phase of a
/// 1,000-function module takes milliseconds, and one run of it varies with
/// the allocator's and the caches' state by more than the growth the table
/// looks for.
const SMALL_SIZE: usize = 10_000;

/// Runs per size below [`SMALL_SIZE`] (one at and above it).
const SMALL_SIZE_RUNS: usize = 5;

/// [`measure_size`], repeated for small sizes: each phase's time is its
/// median over the runs; peaks, GVN alone and `fmerge`'s figures are those
/// of the run whose total is the median.
fn measure_size_median(n: usize) -> Result<SizeTimes> {
    let runs = if n < SMALL_SIZE { SMALL_SIZE_RUNS } else { 1 };
    let mut all = (0..runs)
        .map(|_| measure_size(n))
        .collect::<Result<Vec<_>>>()?;
    let total = |r: &SizeTimes| r.phases.iter().map(|p| p.time).sum::<Duration>();
    all.sort_by_key(total);
    let phase_medians: Vec<Duration> = (0..all[0].phases.len())
        .map(|k| {
            let mut times: Vec<Duration> = all.iter().map(|r| r.phases[k].time).collect();
            times.sort_unstable();
            times[times.len() / 2]
        })
        .collect();
    let mut median = all.swap_remove(runs / 2);
    for (phase, time) in median.phases.iter_mut().zip(phase_medians) {
        phase.time = time;
    }
    Ok(median)
}

fn measure_size(n: usize) -> Result<SizeTimes> {
    let dir = tempfile::Builder::new()
        .prefix("parec-scaling-")
        .tempdir()
        .map_err(|e| anyhow!("cannot create a temporary directory: {e}"))?;
    let main = dir.path().join("main.pare");
    std::fs::write(&main, synthetic_module(n))
        .map_err(|e| anyhow!("cannot write `{}`: {}", main.display(), io_reason(&e)))?;

    let has_errors = |e: Failure| match e {
        Failure::Reported => anyhow!("the synthetic module of {n} functions has errors"),
        Failure::Error(e) => e,
    };
    let mut phases = front_end_stages(&main).map_err(has_errors)?;

    // Cranelift alone: the front end, code generation and object writing.
    let whole_build = StagePeak::start();
    let baseline = build(Pipeline::empty(), Backend::Objects(Target::Aarch64))
        .run(Input::Pare(vec![main]))
        .map_err(has_errors)?;
    let build_peak = whole_build.bytes();
    let modules = baseline.modules;
    let functions = modules.iter().map(|m| m.functions.len()).sum();
    phases.push(Phase {
        peak_of: Some("the whole build (front end, Cranelift, objects)"),
        ..Phase::new("frontend", baseline.times.get("frontend"), build_peak)
    });
    let mut fmerge = (FmergeStats::default(), FmergeTimes::default());

    // Each pass alone on the lowered modules: CLIF passes stop after
    // themselves; machine passes need code, and only their own stage counts.
    for &pass in Pass::ALL {
        let backend = match pass {
            Pass::Clif(_) => Backend::Clif(Some(Target::Aarch64)),
            Pass::Machine(_) => Backend::Objects(Target::Aarch64),
        };
        let input = Input::Modules(modules.clone());
        let peak = StagePeak::start();
        let output = build(Pipeline::from_passes(&[pass]), backend)
            .run(input)
            .map_err(|e| anyhow!("pass `{}`: {:#}", pass.name(), anyhow::Error::from(e)))?;
        let peak_of = match pass {
            Pass::Clif(_) => None,
            Pass::Machine(_) => Some("the pass with Cranelift and objects"),
        };
        phases.push(Phase {
            peak_of,
            ..Phase::new(pass.name(), output.times.get(pass.name()), peak.bytes())
        });
        if let Some((stats, times)) = output.fmerge_stats() {
            fmerge = (stats.clone(), *times);
        }
    }

    let gvn_alone = time_gvn_alone(&modules);
    for stage in ["cranelift", "object"] {
        phases.push(Phase {
            peak_of: Some("the whole build (front end, Cranelift, objects)"),
            ..Phase::new(stage, baseline.times.get(stage), build_peak)
        });
    }
    Ok(SizeTimes {
        functions,
        phases,
        gvn_alone,
        fmerge,
    })
}

/// The front end's own stages on `main` (reading and parsing, checking,
/// lowering; see [`frontend::FrontEndStage`]), each with its time and peak
/// heap.
fn front_end_stages(main: &Path) -> Result<Vec<Phase>, Failure> {
    let mut phases = Vec::new();
    let mut start = Instant::now();
    let mut peak = StagePeak::start();
    let runtime = RuntimeChoice::Auto;
    frontend::lower_for_aot_observed(
        &[main.to_path_buf()],
        Target::Aarch64,
        runtime,
        false,
        &mut |stage| {
            let name = format!("frontend: {}", stage.name());
            phases.push(Phase::new(&name, start.elapsed(), peak.bytes()));
            start = Instant::now();
            peak = StagePeak::start();
        },
    )?;
    Ok(phases)
}

/// A one-thread `-Oz` build with `pipeline`, without the verifier (timing).
fn build(mut pipeline: Pipeline, backend: Backend) -> Build {
    pipeline.verify = false;
    Build {
        pipeline,
        level: OptLevel::Oz,
        mode: BuildMode::Local,
        backend,
        jobs: 1,
        units: Units::PerModule,
        code_model: CodeModel::default(),
        runtime: RuntimeChoice::Auto,
    }
}

fn scaling_markdown(results: &[SizeTimes]) -> String {
    let mut out = String::new();
    let mut header = String::from("| phase |");
    let mut rule = String::from("|---|");
    for r in results {
        let _ = write!(
            header,
            " {} fns ms | {} fns µs/fn | {} fns peak MB |",
            r.functions, r.functions, r.functions
        );
        rule.push_str("---:|---:|---:|");
    }
    let _ = writeln!(out, "{header} growth per fn | |\n{rule}---:|---|");
    let per_fn =
        |r: &SizeTimes, i: usize| r.phases[i].time.as_secs_f64() * 1e6 / r.functions as f64;
    let mut notes: Vec<&str> = Vec::new();
    for (i, phase) in results[0].phases.iter().enumerate() {
        let mut name = phase.name.clone();
        if let Some(of) = phase.peak_of {
            let k = match notes.iter().position(|n| *n == of) {
                Some(k) => k,
                None => {
                    notes.push(of);
                    notes.len() - 1
                }
            };
            name.push_str(&"†".repeat(k + 1));
        }
        let mut line = format!("| {name} |");
        for r in results {
            let peak = match r.phases[i].peak {
                Some(bytes) => format!("{:.1}", bytes as f64 / 1e6),
                None => "–".to_string(),
            };
            let _ = write!(
                line,
                " {:.1} | {:.2} | {peak} |",
                r.phases[i].time.as_secs_f64() * 1000.0,
                per_fn(r, i)
            );
        }
        let first = per_fn(&results[0], i);
        let last = per_fn(&results[results.len() - 1], i);
        let growth = if first > 0.0 { last / first } else { 0.0 };
        let flag = if results.len() > 1 && growth > SUPERLINEAR {
            "superlinear"
        } else {
            ""
        };
        let _ = writeln!(line, " {growth:.2} | {flag} |");
        out.push_str(&line);
    }
    for r in results {
        let g = &r.gvn_alone;
        let per_k =
            |t: Duration, insts: usize| t.as_secs_f64() * 1e6 * 1000.0 / insts.max(1) as f64;
        let _ = writeln!(
            out,
            "\nGVN alone (no size guard), {} fns: {} CLIF instructions in {:.1} ms = {:.1} µs per \
             1,000 instructions ({:.1} without PRE); largest function {} instructions in {:.2} ms \
             ({:.1} µs per 1,000).",
            r.functions,
            g.insts,
            g.time.as_secs_f64() * 1000.0,
            per_k(g.time, g.insts),
            per_k(g.without_pre, g.insts),
            g.largest.0,
            g.largest.1.as_secs_f64() * 1000.0,
            per_k(g.largest.1, g.largest.0)
        );
    }
    for r in results {
        let (stats, times) = &r.fmerge;
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        let _ = writeln!(
            out,
            "\nfmerge alone, {} fns: search {:.1} ms, alignment and code generation {:.1} ms, \
             measurement {:.1} ms; {} candidates, {} attempted, {} merged, {} rejected by the \
             model, {} by measurement.",
            r.functions,
            ms(times.search),
            ms(times.merge),
            ms(times.measure),
            stats.candidates,
            stats.attempted,
            stats.merged,
            stats.rejected_by_model,
            stats.rejected_by_measurement
        );
    }
    let _ = writeln!(
        out,
        "\nFunctions counted after lowering (the program's and the runtime's); the median of {SMALL_SIZE_RUNS} runs \
         below {SMALL_SIZE} functions, one run from there; \
         growth above {SUPERLINEAR} is flagged. Peak MB: the most heap bytes live at once during \
         the phase, including what earlier phases left live (a pass row's build starts from a \
         copy of the lowered modules, which the benchmark also keeps: twice the modules); \
         `frontend` and `cranelift`/`object` are stages of one build, whose peak they share; \
         the `frontend: …` rows are a second run of the front end alone, stage by stage."
    );
    for (k, of) in notes.iter().enumerate() {
        let _ = writeln!(out, "{} peak of {of}.", "†".repeat(k + 1));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synthetic_modules_are_deterministic_and_sized() {
        let text = synthetic_module(40);
        assert_eq!(text, synthetic_module(40));
        assert_eq!(text.matches("\nfn f").count() + 1, 40);
        assert!(text.contains("fn f39(x: i64, y: i64) -> i64 {"));
        assert!(text.ends_with("    print(s);\n}\n"));
    }
}
