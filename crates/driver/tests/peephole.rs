//! The machine peepholes (docs/DESIGN.md, "Peepholes and the code model")
//! on a program written for them (`examples/peepholes.pare`, which the
//! executor tests also run everywhere): what each rule leaves, that no
//! function grows, the listing as a snapshot (`snapshots/peephole/`); the
//! small machine passes after them, copy propagation, frame-pointer
//! omission and one epilogue per function ("Copy propagation and one
//! epilogue", "Frame-pointer omission"), on examples they fire on; and
//! the code model: `auto` picks `adr` for a small program and `adrp` for one
//! whose data is beyond `adr`'s reach, and `tiny` on such a program is a
//! link error naming the relocation, never a wrong address.

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use parec::build::{Backend, Build, BuildMode, Input, Units};
use parec::codegen::CodeModel;
use parec::pipeline::Pipeline;
use parec::target::{OptLevel, Target};
use support::{parec, workspace_root};

fn example() -> PathBuf {
    workspace_root().join("examples/peepholes.pare")
}

/// Every function of the program's objects at `-O2` with `passes`, by
/// name: its listing lines.
fn listings(passes: &str, code_model: CodeModel) -> BTreeMap<String, Vec<String>> {
    listings_of(&example(), passes, code_model)
}

/// [`listings`] of the program `main`.
fn listings_of(main: &Path, passes: &str, code_model: CodeModel) -> BTreeMap<String, Vec<String>> {
    let build = Build {
        pipeline: Pipeline::from_names(passes).unwrap(),
        level: OptLevel::O2,
        mode: BuildMode::Local,
        backend: Backend::Objects(Target::Aarch64),
        jobs: 1,
        units: Units::PerModule,
        code_model,
        runtime: Default::default(),
    };
    let output = build
        .run(Input::Pare(vec![main.to_path_buf()]))
        .unwrap_or_else(|_| panic!("does not build"));
    support::function_listings(&output.objects)
}

/// Instruction lines (relocation lines start with `R_` after the offset).
fn instructions(lines: &[String]) -> usize {
    lines.iter().filter(|l| !l.contains("R_AARCH64")).count()
}

fn count(lines: &[String], needle: &str) -> usize {
    lines.iter().filter(|l| l.contains(needle)).count()
}

fn all_lines(functions: &BTreeMap<String, Vec<String>>) -> Vec<String> {
    functions.values().flatten().cloned().collect()
}

#[test]
fn each_rule_fires_and_no_function_grows() {
    let plain = listings("", CodeModel::Auto);
    let tiny = listings("peephole", CodeModel::Auto);
    let small = listings("peephole", CodeModel::Small);
    assert_eq!(
        plain.keys().collect::<Vec<_>>(),
        tiny.keys().collect::<Vec<_>>()
    );
    for (name, before) in &plain {
        assert!(
            instructions(&tiny[name]) <= instructions(before),
            "{name} grew:\n{before:#?}\n{:#?}",
            tiny[name]
        );
    }
    let (plain_all, tiny_all, small_all) = (all_lines(&plain), all_lines(&tiny), all_lines(&small));
    // Rule 1: every `adrp`+`add` is an `adr` in the tiny code model only.
    assert!(count(&plain_all, "R_AARCH64_ADR_PREL_PG_HI21") > 0);
    assert_eq!(count(&tiny_all, "R_AARCH64_ADR_PREL_PG_HI21"), 0);
    assert_eq!(
        count(&tiny_all, "R_AARCH64_ADR_PREL_LO21"),
        count(&plain_all, "R_AARCH64_ADR_PREL_PG_HI21")
    );
    assert_eq!(
        count(&small_all, "R_AARCH64_ADR_PREL_PG_HI21"),
        count(&plain_all, "R_AARCH64_ADR_PREL_PG_HI21")
    );
    // Rules 2–4 in the program: fewer compares and boolean tests. In
    // `is_ident` the boolean tests go (`tst w0, #0xff; b.ne` → `cbnz`); its
    // repeated compares stay under the C convention, where the argument and
    // the result share x0 and the compares read two copies of the byte.
    assert!(
        count(&tiny_all, "cmp ") < count(&plain_all, "cmp "),
        "{tiny:#?}"
    );
    assert!(
        count(&tiny_all, "#0xff") < count(&plain_all, "#0xff"),
        "{tiny:#?}"
    );
    let (before, after) = (&plain["peepholes::is_ident"], &tiny["peepholes::is_ident"]);
    assert!(count(after, "#0xff") < count(before, "#0xff"), "{after:#?}");
    // Rule 3 on a loaded boolean: `if flags[i]` tests the byte directly.
    let count_true = &tiny["peepholes::count_true"];
    assert_eq!(count(count_true, "tst "), 0, "{count_true:#?}");
    assert!(count(count_true, "cbz ") + count(count_true, "cbnz ") > 0);
}

#[test]
fn constants_fold_into_their_readers() {
    // Rule 7 after GVN (without it, `reset` keeps -100 in x0, which a
    // `ret` may read): `c.next > -100` compares with the immediate, its
    // constant register gone, and `c.value = 0` stores `xzr`.
    let plain = listings("gvn", CodeModel::Auto);
    let folded = listings("gvn,peephole", CodeModel::Auto);
    let (before, after) = (&plain["peepholes::reset"], &folded["peepholes::reset"]);
    assert_eq!(count(before, "cmn "), 0, "{before:#?}");
    assert_eq!(count(after, "cmn "), 1, "{after:#?}");
    assert_eq!(count(after, "#-0x64"), 0, "{after:#?}");
    assert!(instructions(after) < instructions(before));
    let stores_of_zero = |f: &BTreeMap<String, Vec<String>>| count(&all_lines(f), "str xzr");
    assert!(stores_of_zero(&folded) > stores_of_zero(&plain));
    let text: String = after.iter().map(|line| format!("    {line}\n")).collect();
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(workspace_root().join("snapshots/peephole"));
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| insta::assert_snapshot!("constants_reset", text));
}

/// Register moves (`mov xD, xS`, `mov wD, wS`) in `lines`.
fn register_moves(lines: &[String]) -> usize {
    let is_register = |op: &str| {
        let op = op.trim();
        (op.starts_with('x') || op.starts_with('w')) && op[1..].parse::<u32>().is_ok()
    };
    lines
        .iter()
        .filter_map(|l| l.split_once("mov ").map(|(_, operands)| operands))
        .filter(|operands| operands.split(',').all(is_register))
        .count()
}

#[test]
fn copy_propagation_deletes_moves_and_no_function_grows() {
    // `main` of loops.pare computes loop counters and call arguments into
    // temporaries and moves them on (docs/DESIGN.md, "Machine copy
    // propagation").
    let program = workspace_root().join("examples/loops.pare");
    let before = listings_of(&program, "peephole", CodeModel::Auto);
    let after = listings_of(&program, "peephole,copyprop", CodeModel::Auto);
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>()
    );
    for (name, code) in &after {
        assert!(
            instructions(code) <= instructions(&before[name]),
            "{name} grew:\n{:#?}\n{code:#?}",
            before[name]
        );
    }
    let main = (&before["main"], &after["main"]);
    assert!(
        register_moves(main.1) < register_moves(main.0),
        "{:#?}",
        main.1
    );
    assert_eq!(
        instructions(main.0) - instructions(main.1),
        register_moves(main.0) - register_moves(main.1)
    );
    // `mov x0, #0; mov x19, x0` became `mov x19, #0`: the peepholes'
    // constant operands (rule 7) do that before copy propagation runs.
    let plain = listings_of(&program, "", CodeModel::Auto);
    assert!(count(main.0, "mov x19, #0") > count(&plain["main"], "mov x19, #0"));
}

/// The registers (`x<n>`/`w<n>`, as numbers) an instruction line names.
fn named_registers(operands: &str) -> Vec<u32> {
    operands
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter_map(|t| {
            let rest = t.strip_prefix('x').or_else(|| t.strip_prefix('w'))?;
            rest.parse().ok()
        })
        .collect()
}

/// Whether the instruction `mnemonic operands` may write register `r`:
/// its first operand, unless it only reads (stores, compares, branches on
/// a register), or a base it writes back.
fn may_write(mnemonic: &str, operands: &str, r: u32) -> bool {
    let reads_only = mnemonic.starts_with("st")
        || [
            "cmp", "cmn", "tst", "ccmp", "ccmn", "cbz", "cbnz", "tbz", "tbnz",
        ]
        .contains(&mnemonic);
    let first = named_registers(operands.split(',').next().unwrap_or(""));
    let writeback = operands.contains('!') || operands.contains("], ");
    (!reads_only && first.contains(&r)) || (writeback && named_registers(operands).contains(&r))
}

/// Copies `mov xB, xA` after a `mov xA, xB` in the same straight run of
/// `lines` (no branch target from the first on, no branch between except
/// to a trap, which has a relocation, and nothing between writing either
/// register): the destination already holds the source.
fn copies_back(lines: &[String]) -> usize {
    let parsed: Vec<(u64, String, String)> = lines
        .iter()
        .filter(|l| !l.contains("R_AARCH64"))
        .filter_map(|l| {
            let (address, rest) = l.split_once(':')?;
            let text = rest.trim().splitn(5, ' ').nth(4)?.trim();
            let (mnemonic, operands) = text.split_once(' ').unwrap_or((text, ""));
            let address = u64::from_str_radix(address, 16).ok()?;
            Some((address, mnemonic.to_string(), operands.to_string()))
        })
        .collect();
    let relocated: Vec<bool> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| !l.contains("R_AARCH64"))
        .map(|(i, _)| lines.get(i + 1).is_some_and(|n| n.contains("R_AARCH64")))
        .collect();
    let is_branch =
        |m: &str| m == "b" || m.starts_with("b.") || m.starts_with("cb") || m.starts_with("tb");
    let targets: Vec<u64> = parsed
        .iter()
        .filter(|(_, m, _)| is_branch(m))
        .filter_map(|(_, _, o)| {
            let offset = o.rsplit('#').next()?;
            match offset.strip_prefix("0x") {
                Some(hex) => u64::from_str_radix(hex, 16).ok(),
                None => offset.parse().ok(),
            }
        })
        .collect();
    let register_move = |m: &str, o: &str| -> Option<(u32, u32)> {
        let regs = named_registers(o);
        (m == "mov"
            && o.starts_with('x')
            && regs.len() == 2
            && o.split(',').all(|r| r.trim().starts_with('x')))
        .then(|| (regs[0], regs[1]))
    };
    let mut found = 0;
    for (i, (_, m, o)) in parsed.iter().enumerate() {
        let Some((a, b)) = register_move(m, o) else {
            continue;
        };
        for (j, (address, m2, o2)) in parsed.iter().enumerate().skip(i + 1) {
            if targets.contains(address) {
                break;
            }
            if register_move(m2, o2) == Some((b, a)) {
                found += 1;
                break;
            }
            let leaves = (is_branch(m2) && !relocated[j])
                || m2 == "bl"
                || m2 == "blr"
                || m2 == "ret"
                || m2 == "br";
            if leaves || may_write(m2, o2, a) || may_write(m2, o2, b) {
                break;
            }
        }
    }
    found
}

#[test]
fn copies_of_what_the_destination_holds_go() {
    // matrix.pare's loops carry values in two registers and copy them
    // back before the back edge (docs/DESIGN.md, "Copy propagation and one
    // epilogue": moves across blocks).
    let program = workspace_root().join("examples/matrix.pare");
    let before = listings_of(&program, "peephole", CodeModel::Auto);
    let after = listings_of(&program, "peephole,copyprop", CodeModel::Auto);
    let back = |functions: &BTreeMap<String, Vec<String>>| -> usize {
        functions.values().map(|lines| copies_back(lines)).sum()
    };
    assert!(back(&before) > 0, "{before:#?}");
    assert_eq!(back(&after), 0, "{after:#?}");
    for (name, code) in &after {
        assert!(
            instructions(code) <= instructions(&before[name]),
            "{name} grew"
        );
    }
}

#[test]
fn one_epilogue_per_function() {
    // `fact`, `power` and `hanoi` return from two places, each time
    // restoring their callee-saved registers and frame record.
    let program = workspace_root().join("examples/recursion.pare");
    let before = listings_of(&program, "peephole,copyprop", CodeModel::Auto);
    let after = listings_of(&program, "peephole,copyprop,epilogue", CodeModel::Auto);
    for (name, code) in &after {
        assert!(
            instructions(code) <= instructions(&before[name]),
            "{name} grew"
        );
    }
    for name in ["recursion::fact", "recursion::power", "recursion::hanoi"] {
        let rets = |code: &[String]| count(code, " ret");
        assert_eq!(rets(&before[name]), 2, "{name}: {:#?}", before[name]);
        assert_eq!(rets(&after[name]), 1, "{name}: {:#?}", after[name]);
        // The second epilogue became one `b`: its restores are gone.
        let restores = |code: &[String]| count(code, "[sp], #0x10");
        assert!(restores(&after[name]) < restores(&before[name]), "{name}");
    }
    let mut text = String::new();
    for line in &after["recursion::fact"] {
        text.push_str(&format!("{line}\n"));
    }
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(workspace_root().join("snapshots/peephole"));
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| insta::assert_snapshot!("epilogue_fact", text));
}

#[test]
fn frame_pointers_are_omitted_and_frames_packed() {
    // `fact` saves one callee-saved register (x19) beside its frame
    // record: the record's slot takes x19 and x30. A list without `frame`
    // keeps every frame record (what a profiler that walks x29 needs).
    let program = workspace_root().join("examples/recursion.pare");
    let before = listings_of(&program, "peephole,copyprop", CodeModel::Auto);
    let after = listings_of(&program, "peephole,copyprop,frame", CodeModel::Auto);
    let set_ups = |code: &[String]| count(code, "mov x29, sp");
    let records = |code: &[String]| count(code, "stp x29, x30, [sp, #-0x10]!");
    for (name, code) in &before {
        assert_eq!(set_ups(code), records(code), "{name}: {code:#?}");
    }
    for (name, code) in &after {
        assert!(set_ups(code) == 0, "{name}: {code:#?}");
        assert!(
            instructions(code) + set_ups(&before[name]) <= instructions(&before[name]),
            "{name}"
        );
    }
    let fact = &after["recursion::fact"];
    assert_eq!(records(fact), 0, "{fact:#?}");
    assert_eq!(count(fact, "stp x19, x30, [sp, #-0x10]!"), 1, "{fact:#?}");
    assert_eq!(count(fact, "ldp x19, x30, [sp], #0x10"), 2, "{fact:#?}");
    assert_eq!(
        instructions(&before["recursion::fact"]) - instructions(fact),
        4
    );
    let mut text = String::new();
    for line in fact {
        text.push_str(&format!("{line}\n"));
    }
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(workspace_root().join("snapshots/peephole"));
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| insta::assert_snapshot!("frame_fact", text));
}

#[test]
fn listing() {
    let functions = listings("peephole", CodeModel::Auto);
    let mut text = String::new();
    for name in [
        "peepholes::is_ident",
        "peepholes::count_true",
        "peepholes::digits",
    ] {
        text.push_str(&format!("{name}:\n"));
        for line in &functions[name] {
            text.push_str(&format!("    {line}\n"));
        }
    }
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(workspace_root().join("snapshots/peephole"));
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| insta::assert_snapshot!("peepholes_o2", text));
}

/// A program whose 1.2 MB global puts its data beyond `adr`'s reach.
fn far_data_program(dir: &Path) -> PathBuf {
    let n = 150_000;
    let ones = vec!["1"; n].join(", ");
    let source = format!(
        "global big: [i64; {n}] = [{ones}];\nglobal after: i64 = 7;\n\
         fn main() {{\n    big[{last}] = 5;\n    print(big[{last}] + after);\n}}\n",
        last = n - 1
    );
    let path = dir.join("far.pare");
    std::fs::write(&path, source).unwrap();
    path
}

#[test]
fn code_model_auto_is_small_for_far_data_and_tiny_there_fails_to_link() {
    let dir = tempfile::tempdir().unwrap();
    let source = far_data_program(dir.path());
    let exe = dir.path().join("far");
    let built = parec()
        .arg("build")
        .arg(&source)
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let ran = parec::link::run_command(&exe, Target::Aarch64)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&ran.stdout), "12\n");

    let tiny = dir.path().join("far-tiny");
    let failed = parec()
        .arg("build")
        .arg(&source)
        .args(["--code-model", "tiny", "-o"])
        .arg(&tiny)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&failed.stderr);
    assert_eq!(failed.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("R_AARCH64_ADR_PREL_LO21 out of range"),
        "{stderr}"
    );
    assert!(stderr.contains("--code-model small"), "{stderr}");
    assert!(!tiny.exists(), "no executable is left behind");
}

#[test]
fn a_bad_code_model_is_refused() {
    let o = parec()
        .arg("build")
        .arg(example())
        .args(["--code-model", "huge"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("unknown code model `huge`"), "{stderr}");
}

#[test]
fn functions_with_jump_tables_are_lifted_and_their_index_clamped_once() {
    // `filetests/executors/jump_tables.pare` (run by every executor at
    // every level): `switches` makes `f1`'s chain over a 64-bit value a
    // table, clamping the index before Cranelift's sequence compares it
    // again. The machine layer lifts the function (its table is data it
    // lays out again) and rule 8 deletes the second compare and the clamp.
    let program = workspace_root().join("filetests/executors/jump_tables.pare");
    let tables = listings_of(&program, "gvn-speed,switches", CodeModel::Auto);
    let rewritten = listings_of(
        &program,
        "gvn-speed,switches,peephole,copyprop",
        CodeModel::Auto,
    );
    let (before, after) = (&tables["jump_tables::f1"], &rewritten["jump_tables::f1"]);
    let table_branches = |lines: &[String]| count(lines, "br x");
    assert_eq!(table_branches(before), 1, "{before:#?}");
    assert_eq!(table_branches(after), 1, "{after:#?}");
    let selects = |lines: &[String]| count(lines, "csel");
    assert_eq!(
        (selects(before), selects(after)),
        (2, 1),
        "{before:#?}\n{after:#?}"
    );
    let compares = |lines: &[String]| count(lines, "cmp ");
    assert_eq!(
        compares(before) - compares(after),
        1,
        "{before:#?}\n{after:#?}"
    );
}
