//! `GEN_SEED=N cargo test -p pare-frontend --test gen_dump -- --nocapture`
//! prints the program of seed N (for inspecting the generator).

use pare_frontend::gen::{generate_from_seed, GenConfig};

#[test]
fn dump_seed_from_env() {
    let Ok(seed) = std::env::var("GEN_SEED") else {
        return;
    };
    let Ok(seed) = seed.parse::<u64>() else {
        return;
    };
    let p = generate_from_seed(seed, &GenConfig::default());
    println!("{}", p.to_text());
    if let Ok(dir) = std::env::var("GEN_DIR") {
        p.write_to_dir(std::path::Path::new(&dir)).expect("write");
    }
}

/// `GEN_STATS=N` prints, for seeds 0..N, line counts and interpretation
/// times (slowest first); `GEN_TRAP_P` overrides the trap probability.
#[test]
fn stats_from_env() {
    use pare_frontend::check::check_program;
    use pare_frontend::interp::{run_with_big_stack, Exit};
    use pare_frontend::parser::parse_module;
    use pare_frontend::source::{Diagnostics, SourceMap};
    let Ok(n) = std::env::var("GEN_STATS") else {
        return;
    };
    let Ok(n) = n.parse::<u64>() else { return };
    let mut cfg = GenConfig::default();
    if let Some(p) = std::env::var("GEN_TRAP_P")
        .ok()
        .and_then(|p| p.parse().ok())
    {
        cfg.trap_probability = p;
    }
    let mut rows = Vec::new();
    for seed in 0..n {
        let p = generate_from_seed(seed, &cfg);
        let mut sources = SourceMap::new();
        let mut diags = Diagnostics::default();
        let modules: Vec<_> = p
            .modules
            .iter()
            .map(|(name, text)| {
                let file = sources.add(format!("{name}.pare"), text.clone());
                parse_module(name, file, text, &mut diags)
            })
            .collect();
        let Some(program) = check_program(&modules, &mut diags) else {
            println!("seed {seed}: check failed");
            continue;
        };
        let mut out = Vec::new();
        let start = std::time::Instant::now();
        let exit = run_with_big_stack(&program, &mut out);
        let t = start.elapsed();
        let how = match exit {
            Exit::Status(s) => format!("status {s}"),
            Exit::Trap(k) => format!("trap {k:?}"),
            Exit::Error(e) => format!("ERROR {e}"),
        };
        rows.push((t, seed, p.line_count(), out.len(), how));
    }
    rows.sort();
    rows.reverse();
    for (t, seed, lines, out, how) in rows.iter().take(15) {
        println!("seed {seed}: {t:?} {lines} lines {out} output bytes {how}");
    }
    let mut lines: Vec<usize> = rows.iter().map(|r| r.2).collect();
    lines.sort();
    println!(
        "lines: min {} median {} max {}",
        lines[0],
        lines[lines.len() / 2],
        lines[lines.len() - 1]
    );
    for (_, seed, _, _, how) in &rows {
        if how.starts_with("trap") {
            println!("seed {seed}: {how}");
        }
    }
}

/// `GEN_TIME=N` interprets seed N five times and prints the times.
#[test]
fn time_from_env() {
    use pare_frontend::check::check_program;
    use pare_frontend::interp::run_with_big_stack;
    use pare_frontend::parser::parse_module;
    use pare_frontend::source::{Diagnostics, SourceMap};
    let Ok(seed) = std::env::var("GEN_TIME") else {
        return;
    };
    let Ok(seed) = seed.parse::<u64>() else {
        return;
    };
    let p = generate_from_seed(seed, &GenConfig::default());
    let mut sources = SourceMap::new();
    let mut diags = Diagnostics::default();
    let modules: Vec<_> = p
        .modules
        .iter()
        .map(|(name, text)| {
            let file = sources.add(format!("{name}.pare"), text.clone());
            parse_module(name, file, text, &mut diags)
        })
        .collect();
    let Some(program) = check_program(&modules, &mut diags) else {
        return;
    };
    for _ in 0..5 {
        let mut out = Vec::new();
        let start = std::time::Instant::now();
        let exit = run_with_big_stack(&program, &mut out);
        println!("{:?} {exit:?} {} bytes", start.elapsed(), out.len());
    }
}
