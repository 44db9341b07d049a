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
//! times real work. Times are reported in total and per function; the growth
//! column is the per-function time at the largest N over that at the smallest,
//! and a phase whose growth exceeds [`SUPERLINEAR`] is flagged, since every
//! function has the same size distribution at every N.
//!
//! The pass rows time the passes as `-Oz` runs them, size guard included
//! (GVN's guard compiles each changed function two or three times). Below the
//! table, GVN alone (`gvn::run`, no guard) is timed per 1,000 CLIF
//! instructions, with the largest function's own time.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Result};
use parec::build::{Backend, Build, BuildMode, Input};
use parec::io_error::reason as io_reason;
use parec::pipeline::{Pass, Pipeline};
use parec::target::{OptLevel, Target};
use parec::Failure;
use parec_passes::clif_module::{count_insts, ClifModule};
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
    /// `(phase, time)`, phases in the same order for every size.
    phases: Vec<(String, Duration)>,
    gvn_alone: GvnAlone,
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

/// `parec bench --scaling`: prints the table; returns 0.
pub fn scaling(sizes: &[usize]) -> Result<i32, Failure> {
    if sizes.is_empty() || sizes.contains(&0) {
        return Err(anyhow!("--sizes needs positive function counts").into());
    }
    let mut sizes = sizes.to_vec();
    sizes.sort_unstable();
    sizes.dedup();
    let mut results = Vec::new();
    for &n in &sizes {
        results.push(measure_size(n)?);
    }
    print!("{}", scaling_markdown(&results));
    Ok(0)
}

fn measure_size(n: usize) -> Result<SizeTimes> {
    let dir = tempfile::Builder::new()
        .prefix("parec-scaling-")
        .tempdir()
        .map_err(|e| anyhow!("cannot create a temporary directory: {e}"))?;
    let main = dir.path().join("main.pare");
    std::fs::write(&main, synthetic_module(n))
        .map_err(|e| anyhow!("cannot write `{}`: {}", main.display(), io_reason(&e)))?;

    // Cranelift alone: the front end, code generation and object writing.
    let baseline = build(Pipeline::empty(), Backend::Objects(Target::Aarch64))
        .run(Input::Pare(vec![main]))
        .map_err(|e| match e {
            Failure::Reported => anyhow!("the synthetic module of {n} functions has errors"),
            Failure::Error(e) => e,
        })?;
    let modules = baseline.modules;
    let functions = modules.iter().map(|m| m.functions.len()).sum();
    let mut phases = vec![("frontend".to_string(), baseline.times.get("frontend"))];

    // Each pass alone on the lowered modules: CLIF passes stop after
    // themselves; machine passes need code, and only their own stage counts.
    for &pass in Pass::ALL {
        let backend = match pass {
            Pass::Clif(_) => Backend::Clif(Some(Target::Aarch64)),
            Pass::Machine(_) => Backend::Objects(Target::Aarch64),
        };
        let output = build(Pipeline::from_passes(&[pass]), backend)
            .run(Input::Modules(modules.clone()))
            .map_err(|e| anyhow!("pass `{}`: {:#}", pass.name(), anyhow::Error::from(e)))?;
        phases.push((pass.name().to_string(), output.times.get(pass.name())));
    }

    let gvn_alone = time_gvn_alone(&modules);
    phases.push(("cranelift".to_string(), baseline.times.get("cranelift")));
    phases.push(("object".to_string(), baseline.times.get("object")));
    Ok(SizeTimes {
        functions,
        phases,
        gvn_alone,
    })
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
    }
}

fn scaling_markdown(results: &[SizeTimes]) -> String {
    let mut out = String::new();
    let mut header = String::from("| phase |");
    let mut rule = String::from("|---|");
    for r in results {
        let _ = write!(
            header,
            " {} fns ms | {} fns µs/fn |",
            r.functions, r.functions
        );
        rule.push_str("---:|---:|");
    }
    let _ = writeln!(out, "{header} growth per fn | |\n{rule}---:|---|");
    let per_fn = |r: &SizeTimes, i: usize| r.phases[i].1.as_secs_f64() * 1e6 / r.functions as f64;
    for (i, (phase, _)) in results[0].phases.iter().enumerate() {
        let mut line = format!("| {phase} |");
        for r in results {
            let _ = write!(
                line,
                " {:.1} | {:.2} |",
                r.phases[i].1.as_secs_f64() * 1000.0,
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
    let _ = writeln!(
        out,
        "\nFunctions counted after lowering (the program's and the runtime's); one run each; \
         growth above {SUPERLINEAR} is flagged."
    );
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
