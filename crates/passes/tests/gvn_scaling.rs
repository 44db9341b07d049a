//! GVN on a large function: at least 20,000 instructions, a loop around a
//! long chain of diamonds with redundant expressions. The pass must finish,
//! verify, and need few analysis passes (no quadratic behaviour: each pass is
//! linear; the time is printed, not asserted — figures come from benchmarks).

use cranelift_codegen::settings;
use cranelift_codegen::verify_function;
use cranelift_reader::{parse_test, ParseOptions};
use parec_passes::clif_module::count_insts;
use parec_passes::gvn;

/// `segments` diamonds inside one loop; each computes `a + b` twice (once with
/// swapped operands), and joins with a value congruent on both edges.
fn big_function(segments: usize) -> String {
    let mut s = String::from("function %big(i64, i64) -> i64 {\nblock0(v0: i64, v1: i64):\n    v2 = iconst.i64 0\n    jump block1(v2, v0)\n\n");
    let mut v = 3;
    let next = |v: &mut usize| {
        *v += 1;
        *v - 1
    };
    // block1(counter, acc): loop header
    let (ctr, acc) = (next(&mut v), next(&mut v));
    s += &format!("block1(v{ctr}: i64, v{acc}: i64):\n    jump block2(v{acc})\n\n");
    let mut cur = acc;
    for i in 0..segments {
        let (hdr, left, right, join) = (2 + 3 * i, 3 + 3 * i, 4 + 3 * i, 5 + 3 * i);
        let p = next(&mut v);
        let (x, y, c, l, r) = (
            next(&mut v),
            next(&mut v),
            next(&mut v),
            next(&mut v),
            next(&mut v),
        );
        let _ = cur;
        s += &format!(
            "block{hdr}(v{p}: i64):\n    v{x} = iadd v{p}, v1\n    v{y} = iadd v1, v{p}\n    v{c} = icmp slt v{x}, v{y}\n    brif v{c}, block{left}, block{right}\n\n\
             block{left}:\n    v{l} = iadd v{p}, v1\n    jump block{join}(v{l})\n\n\
             block{right}:\n    v{r} = iadd v1, v{p}\n    jump block{join}(v{r})\n\n"
        );
        cur = p;
    }
    let last = 2 + 3 * segments;
    let (p, one, n, c) = (next(&mut v), next(&mut v), next(&mut v), next(&mut v));
    s += &format!(
        "block{last}(v{p}: i64):\n    v{one} = iconst.i64 1\n    v{n} = iadd v{ctr}, v{one}\n    v{c} = icmp slt v{n}, v1\n    brif v{c}, block1(v{n}, v{p}), block{}\n\n",
        last + 1
    );
    s += &format!("block{}:\n    return v{p}\n}}\n", last + 1);
    s
}

/// Parses the one function of `text` (at least 20,000 instructions), runs
/// GVN on it, verifies the result and prints the time; returns the
/// instruction counts before and after, and the statistics.
fn run_gvn(text: &str, what: &str) -> (usize, usize, gvn::GvnStats) {
    let mut func = parse_test(text, ParseOptions::default())
        .unwrap()
        .functions
        .remove(0)
        .0;
    let before = count_insts(&func);
    assert!(before >= 20_000, "only {before} instructions");
    let start = std::time::Instant::now();
    let stats = gvn::run(&mut func);
    let elapsed = start.elapsed();
    verify_function(&func, &settings::Flags::new(settings::builder())).unwrap();
    let after = count_insts(&func);
    println!("{what} on {before} instructions: {after} after, {stats}; {elapsed:?}");
    (before, after, stats)
}

#[test]
fn gvn_handles_20k_instructions() {
    let (before, after, stats) = run_gvn(&big_function(2600), "GVN");
    assert_eq!(stats.skipped, 0, "no fixed point: {stats}");
    assert!(stats.iterations <= 4, "too many passes: {stats}");
    // Each diamond's second `a + b` and both arm copies are redundant, and
    // each `x < y` with x == y folds, so every branch folds.
    assert!(after < before / 2, "{before} -> {after}");
    assert_eq!(stats.branches_folded, 2600);
}

/// `segments` diamonds inside one loop, each with a loop-invariant
/// `a + c_i` (LICM) and a partially redundant `p * b` after the join
/// (computed on the left arm only: PRE inserts it on the right arm).
fn pre_function(segments: usize) -> String {
    let mut s = String::from(
        "function %pre_big(i64, i64, i64) -> i64 {\nblock0(v0: i64, v1: i64, v2: i64):\n    \
         v3 = iconst.i64 0\n    jump block1(v3, v3)\n\n",
    );
    let mut v = 4;
    let mut next = || {
        v += 1;
        v - 1
    };
    let (ctr, acc) = (next(), next());
    s += &format!("block1(v{ctr}: i64, v{acc}: i64):\n    jump block2(v{acc})\n\n");
    for i in 0..segments {
        let (hdr, left, right, join) = (2 + 4 * i, 3 + 4 * i, 4 + 4 * i, 5 + 4 * i);
        let [p, c, inv, x, cond, y, q, z, sum] = [(); 9].map(|_| next());
        s += &format!(
            "block{hdr}(v{p}: i64):\n    v{c} = iconst.i64 {}\n    v{inv} = iadd v0, v{c}\n    \
             v{x} = iadd v{p}, v{inv}\n    v{cond} = icmp slt v{x}, v2\n    \
             brif v{cond}, block{left}, block{right}\n\n\
             block{left}:\n    v{y} = imul v{p}, v1\n    jump block{join}(v{y})\n\n\
             block{right}:\n    jump block{join}(v{x})\n\n\
             block{join}(v{q}: i64):\n    v{z} = imul v{p}, v1\n    v{sum} = iadd v{q}, v{z}\n    \
             jump block{}(v{sum})\n\n",
            i + 1,
            join + 1
        );
    }
    let last = 2 + 4 * segments;
    let [p, one, n, c] = [(); 4].map(|_| next());
    s += &format!(
        "block{last}(v{p}: i64):\n    v{one} = iconst.i64 1\n    v{n} = iadd v{ctr}, v{one}\n    \
         v{c} = icmp slt v{n}, v2\n    brif v{c}, block1(v{n}, v{p}), block{}\n\n",
        last + 1
    );
    s += &format!("block{}:\n    return v{p}\n}}\n", last + 1);
    s
}

#[test]
fn gvn_pre_handles_20k_instructions() {
    let segments = 2000;
    let (before, after, stats) = run_gvn(&pre_function(segments), "GVN with PRE");
    assert_eq!(stats.skipped, 0, "no fixed point: {stats}");
    // Each segment's invariant moves to the preheader (with its constant),
    // and each partial redundancy gets its one insertion.
    assert_eq!(stats.hoisted, segments as u64, "{stats}");
    assert_eq!(stats.partial_redundancies, segments as u64, "{stats}");
    assert!(after <= before, "{before} -> {after}");
    assert!(stats.pre_rounds <= 2, "too many PRE rounds: {stats}");
}
