//! Snapshot tests of the machine outliner: one small module per call
//! variant, written as aarch64 words, with the disassembly before and after
//! (`snapshots/outline/`). Each case also checks that the variant it is named
//! after was chosen and that the module shrank.

use cranelift_codegen::binemit::Reloc;
use parec_passes::machine::{MachFunction, MachReloc, RelocTarget};
use parec_passes::outline::{self, disassemble, OutlineOptions, OutlineResult};

mod support;
use support::workspace;

/// Symbol 0 of every case.
const TRAP: &str = "pare_trap";

const RET: u32 = 0xD65F_03C0;
const PROLOGUE: [u32; 2] = [0xA9BF_7BFD, 0x9100_03FD]; // stp x29, x30, [sp, #-16]!; mov x29, sp
const EPILOGUE: u32 = 0xA8C1_7BFD; // ldp x29, x30, [sp], #16
const BL: u32 = 0x9400_0000;

fn add_reg(d: u32, n: u32, m: u32) -> u32 {
    0x8B00_0000 | m << 16 | n << 5 | d
}
fn add_imm(d: u32, n: u32, imm: u32) -> u32 {
    0x9100_0000 | imm << 10 | n << 5 | d
}
fn mov(d: u32, m: u32) -> u32 {
    0xAA00_03E0 | m << 16 | d
}
fn ldr(t: u32, n: u32, scaled: u32) -> u32 {
    0xF940_0000 | scaled << 10 | n << 5 | t
}
fn str(t: u32, n: u32, scaled: u32) -> u32 {
    0xF900_0000 | scaled << 10 | n << 5 | t
}

/// A function from words; `calls` are the indices of `bl pare_trap` words.
fn function(name: &str, words: &[u32]) -> MachFunction {
    let relocs = words
        .iter()
        .enumerate()
        .filter(|(_, &w)| w == BL)
        .map(|(i, _)| MachReloc {
            offset: 4 * i as u32,
            kind: Reloc::Arm64Call.into(),
            target: RelocTarget::Symbol(0),
            addend: 0,
        })
        .collect();
    let call_sites = words
        .iter()
        .enumerate()
        .filter(|(_, &w)| w == BL)
        .map(|(i, _)| 4 * i as u32 + 4)
        .collect();
    MachFunction {
        name: name.to_string(),
        bytes: words.iter().flat_map(|w| w.to_le_bytes()).collect(),
        alignment: 4,
        bb_starts: vec![0],
        relocs,
        traps: Vec::new(),
        call_sites,
        shared: false,
    }
}

fn run_case(name: &str, functions: Vec<MachFunction>) -> OutlineResult {
    let names = vec![TRAP.to_string()];
    let result = outline::outline_module(&functions, &names, &OutlineOptions::default());
    let mut text = format!("; {}\n", result.stats);
    for (f, after) in functions.iter().zip(&result.functions) {
        text.push_str(&format!(
            "\n{} (before):\n{}",
            f.name,
            disassemble(&f.emitted(), &names, &[])
        ));
        text.push_str(&format!(
            "{} (after):\n{}",
            f.name,
            disassemble(after, &names, &result.outlined)
        ));
    }
    for o in &result.outlined {
        text.push_str(&format!(
            "\n{}:\n{}",
            o.name,
            disassemble(&o.code, &names, &result.outlined)
        ));
    }
    insta::with_settings!({
        snapshot_path => workspace().join("snapshots/outline"),
        prepend_module_to_snapshot => false,
        omit_expression => true,
    }, {
        insta::assert_snapshot!(name, text);
    });
    assert!(
        result.stats.bytes_after < result.stats.bytes_before,
        "{name}: nothing saved"
    );
    result
}

/// Two leaf functions `f1`, `f2`: `body`, then a distinct `add x0, x0, #k`
/// (so they are not identical) and `ret`.
fn two_leaves_ending(body: &[u32]) -> Vec<MachFunction> {
    (1..=2)
        .map(|k| {
            let mut w = body.to_vec();
            w.extend([add_imm(0, 0, k), RET]);
            function(&format!("f{k}"), &w)
        })
        .collect()
}

/// [GFM] Figure 2 (docs/DESIGN.md): `lsl; add; ret` ending three leaf functions.
#[test]
fn tail_call() {
    let lsl_x0_7 = 0xD379_E000;
    let add_x0_x8_77 = add_imm(0, 8, 77);
    let fs = (1..=3)
        .map(|k| function(&format!("f{k}"), &[mov(0, k), lsl_x0_7, add_x0_x8_77, RET]))
        .collect();
    let r = run_case("tail_call", fs);
    assert_eq!(r.stats.variants, [3, 0, 0, 0, 0]);
}

/// `mov w0, #3; bl pare_trap` in three functions with frames: the call
/// becomes the outlined function's tail jump.
#[test]
fn thunk() {
    let fs = (1..=3)
        .map(|k| {
            function(
                &format!("f{k}"),
                &[
                    PROLOGUE[0],
                    PROLOGUE[1],
                    add_imm(1, 1, k),
                    0x5280_0060,
                    BL,
                    EPILOGUE,
                    RET,
                ],
            )
        })
        .collect();
    let r = run_case("thunk", fs);
    assert_eq!(r.stats.variants, [0, 3, 0, 0, 0]);
}

/// A swap of two fields inside functions that saved `x30` in their frame:
/// a plain `bl`.
#[test]
fn no_lr_save() {
    let swap = [ldr(0, 21, 1), ldr(1, 22, 1), str(1, 21, 1), str(0, 22, 1)];
    let fs = (1..=2)
        .map(|k| {
            let mut w = PROLOGUE.to_vec();
            w.extend(swap);
            w.extend([add_imm(0, 0, k), EPILOGUE, RET]);
            function(&format!("f{k}"), &w)
        })
        .collect();
    let r = run_case("no_lr_save", fs);
    assert_eq!(r.stats.variants, [0, 0, 2, 0, 0]);
}

/// Eight instructions in leaf functions (no frame, `x30` live): `x30` goes
/// to a free register around the call.
#[test]
fn register_save() {
    let body: Vec<u32> = (0..8)
        .map(|i| add_reg(i % 4, (i + 1) % 4, (i + 2) % 4))
        .collect();
    let fs = two_leaves_ending(&body);
    let r = run_case("register_save", fs);
    assert_eq!(r.stats.variants, [0, 0, 0, 2, 0]);
}

/// Leaf functions whose sequence uses every caller-saved temporary while
/// arguments and callee-saved registers are live: `x30` goes on the stack.
#[test]
fn stack_save() {
    let mut body = vec![add_reg(9, 0, 1)];
    body.extend((10..=15).map(|r| add_reg(r, r - 1, 1)));
    body.push(add_reg(0, 15, 1));
    let fs = two_leaves_ending(&body);
    let r = run_case("stack_save", fs);
    assert_eq!(r.stats.variants, [0, 0, 0, 0, 2]);
}

/// Nothing that touches the frame or `x30` is outlined, and a sequence that
/// does not pay stays: identical prologues and epilogues are left alone.
#[test]
fn frames_are_never_outlined() {
    let fs: Vec<MachFunction> = (1..=4)
        .map(|k| {
            function(
                &format!("f{k}"),
                &[PROLOGUE[0], PROLOGUE[1], add_imm(0, 0, k), EPILOGUE, RET],
            )
        })
        .collect();
    let names = vec![TRAP.to_string()];
    let result = outline::outline_module(&fs, &names, &OutlineOptions::default());
    assert!(result.outlined.is_empty());
    for (f, e) in fs.iter().zip(&result.functions) {
        assert_eq!(e, &f.emitted());
    }
}

/// A sequence whose end has NZCV live (a compare feeding a branch) is not
/// outlined without the branch: the flags must be dead at both ends.
#[test]
fn live_flags_block_outlining() {
    let cmp_x0_x1 = 0xEB01_001F;
    let b_ne_plus8 = 0x5400_0041;
    let fs: Vec<MachFunction> = (1..=4)
        .map(|k| {
            let mut f = function(
                &format!("f{k}"),
                &[
                    PROLOGUE[0],
                    PROLOGUE[1],
                    mov(2, 3),
                    mov(4, 5),
                    mov(6, 7),
                    mov(8, 9),
                    cmp_x0_x1,
                    b_ne_plus8,
                    add_imm(0, 0, k),
                    EPILOGUE,
                    RET,
                ],
            );
            f.bb_starts = vec![0, 32, 36];
            f
        })
        .collect();
    let names = vec![TRAP.to_string()];
    let result = outline::outline_module(&fs, &names, &OutlineOptions::default());
    assert_eq!(result.outlined.len(), 1);
    let text = disassemble(&result.outlined[0].code, &names, &[]);
    assert!(text.contains("mov x8, x9"), "{text}");
    assert!(!text.contains("cmp"), "outlined a live compare:\n{text}");
}

/// A shared function (a generic instance other modules also compile) is
/// outlined against itself only: it comes out the same whatever else its
/// module holds, so the linker still folds its copies. A function with the
/// same bytes is treated alike.
#[test]
fn shared_functions_are_outlined_alone() {
    let stub = [0x5280_0060, BL]; // mov w0, #3; bl pare_trap
    let shared_body: Vec<u32> = [PROLOGUE[0], PROLOGUE[1], add_imm(1, 1, 9)]
        .into_iter()
        .chain(stub)
        .chain([EPILOGUE, RET])
        .collect();
    let mut shared = function("g<i64>", &shared_body);
    shared.shared = true;
    let twin = function("g<u64>", &shared_body);
    let others: Vec<MachFunction> = (1..=3)
        .map(|k| {
            function(
                &format!("f{k}"),
                &[
                    PROLOGUE[0],
                    PROLOGUE[1],
                    add_imm(1, 1, k),
                    stub[0],
                    stub[1],
                    EPILOGUE,
                    RET,
                ],
            )
        })
        .collect();
    let names = vec![TRAP.to_string()];
    let alone = outline::outline_module(&[shared.clone()], &names, &OutlineOptions::default());
    let mut module = vec![shared.clone(), twin];
    module.extend(others);
    let together = outline::outline_module(&module, &names, &OutlineOptions::default());
    let text = |r: &OutlineResult, i: usize| disassemble(&r.functions[i], &names, &r.outlined);
    assert_eq!(text(&together, 0), text(&alone, 0));
    assert_eq!(
        text(&together, 1),
        text(&alone, 0),
        "the twin is treated alike"
    );
    assert_eq!(
        together.stats.variants[1], 3,
        "the others still share the stub"
    );
}
