//! Lifting code forms the Pare corpus does not produce: jump tables
//! (`br_table`), constant pools (`f64const`, `vconst`, `f32const`), address
//! literals of far symbols, indirect and tail calls. Every function of
//! `filetests/outline/*.clif` is compiled for aarch64 with
//! `machine_code_cfg_info`, lifted, and laid out again: the result must be
//! the original bytes and records, and the expected data items must be there.

use cranelift_codegen::ir::{ExternalName, UserFuncName};
use cranelift_codegen::isa::{self, OwnedTargetIsa};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_codegen::{Context, FinalizedRelocTarget};
use cranelift_reader::{parse_test, ParseOptions};
use parec_passes::machine::decode::{Decoder, Form};
use parec_passes::machine::lift::{self, Item};
use parec_passes::machine::{loops, MachFunction, MachReloc, RelocTarget};
use parec_passes::outline::{self, OutlineOptions};

mod support;
use support::workspace;

fn aarch64(pic: bool) -> OwnedTargetIsa {
    let mut b = settings::builder();
    b.set("opt_level", "speed").unwrap();
    b.set("is_pic", if pic { "true" } else { "false" }).unwrap();
    b.set("machine_code_cfg_info", "true").unwrap();
    isa::lookup_by_name("aarch64")
        .unwrap()
        .finish(settings::Flags::new(b))
        .unwrap()
}

/// Compiles every function of a filetest to a [`MachFunction`]; relocation
/// targets are numbered by their rendering.
fn compile(file: &str, isa: &OwnedTargetIsa, names: &mut Vec<String>) -> Vec<MachFunction> {
    let path = workspace().join("filetests/outline").join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    let test = parse_test(&text, ParseOptions::default()).unwrap();
    let mut out = Vec::new();
    for (func, _) in test.functions {
        let name = match &func.name {
            UserFuncName::Testcase(t) => t.to_string(),
            other => other.to_string(),
        };
        let mut ctx = Context::for_function(func);
        ctx.compile(&**isa, &mut Default::default())
            .unwrap_or_else(|e| panic!("{file} {name}: {e:?}"));
        let compiled = ctx.compiled_code().unwrap();
        let relocs = compiled
            .buffer
            .relocs()
            .iter()
            .map(|r| {
                let target = match &r.target {
                    FinalizedRelocTarget::ExternalName(ExternalName::User(u)) => {
                        format!("{}", ctx.func.params.user_named_funcs()[*u])
                    }
                    other => format!("{other:?}"),
                };
                let index = names.iter().position(|n| *n == target).unwrap_or_else(|| {
                    names.push(target);
                    names.len() - 1
                });
                MachReloc {
                    offset: r.offset,
                    kind: r.kind.into(),
                    target: RelocTarget::Symbol(index as u32),
                    addend: r.addend,
                }
            })
            .collect();
        out.push(MachFunction {
            name,
            bytes: compiled.buffer.data().to_vec(),
            alignment: compiled.buffer.alignment,
            bb_starts: compiled.bb_starts.clone(),
            relocs,
            traps: compiled
                .buffer
                .traps()
                .iter()
                .map(|t| (t.offset, t.code))
                .collect(),
            call_sites: compiled.buffer.call_sites().map(|c| c.ret_addr).collect(),
            shared: false,
        });
    }
    out
}

/// Kinds of items found in a lifted function.
#[derive(Default, Debug)]
struct Census {
    jump_entries: usize,
    data: usize,
    aligned_data: usize,
    literal_loads: usize,
}

fn round_trip(file: &str, pic: bool) -> Census {
    let isa = aarch64(pic);
    let mut names = Vec::new();
    let mut decoder = Decoder::new();
    let mut census = Census::default();
    for f in compile(file, &isa, &mut names) {
        let lifted = lift::lift(&f, &mut decoder);
        assert_eq!(lifted.opaque, None, "{file} {}", f.name);
        assert_eq!(lifted.layout().unwrap(), f.emitted(), "{file} {}", f.name);
        for (_, item) in &lifted.items {
            match item {
                Item::JumpEntry { .. } => census.jump_entries += 1,
                Item::Data(d) => {
                    census.data += 1;
                    census.aligned_data += usize::from(d.align > 4);
                }
                Item::Inst(i) => {
                    census.literal_loads += usize::from(matches!(i.form, Form::LdrLiteral { .. }))
                }
            }
        }
        // Outlining a module of this function and a copy of it keeps the
        // layout consistent (branches, tables and literals re-encoded).
        let twin = MachFunction {
            name: format!("{}_twin", f.name),
            ..f.clone()
        };
        let result =
            outline::outline_module(&[f.clone(), twin], &names, &OutlineOptions::default());
        assert!(result.stats.bytes_after <= result.stats.bytes_before);
        for e in &result.functions {
            let relifted = lift::lift(
                &MachFunction {
                    name: f.name.clone(),
                    bytes: e.bytes.clone(),
                    alignment: e.alignment,
                    bb_starts: Vec::new(),
                    relocs: e.relocs.clone(),
                    traps: e.traps.clone(),
                    call_sites: e.call_sites.clone(),
                    shared: false,
                },
                &mut decoder,
            );
            assert_eq!(
                relifted.opaque, None,
                "{file} {}: rewritten code does not lift",
                f.name
            );
        }
    }
    census
}

#[test]
fn jump_tables_round_trip() {
    let census = round_trip("br_table.clif", false);
    assert!(census.jump_entries >= 8, "{census:?}");
}

#[test]
fn constant_pools_round_trip() {
    let census = round_trip("constants.clif", false);
    assert!(census.literal_loads >= 3, "{census:?}");
    assert!(census.aligned_data >= 1, "{census:?}");
}

#[test]
fn calls_and_far_symbols_round_trip() {
    round_trip("calls.clif", false);
    round_trip("calls.clif", true);
}

/// The outliner's hot-code rule: the items of a loop (from a backward
/// branch's target to the branch) are hot, the rest is not, and a loop body
/// repeated in two functions is not outlined.
#[test]
fn loops_are_hot_and_left_alone() {
    let isa = aarch64(false);
    let mut names = Vec::new();
    let functions = compile("hot_loop.clif", &isa, &mut names);
    let mut decoder = Decoder::new();
    for f in &functions {
        let lifted = lift::lift(f, &mut decoder);
        let hot = loops::loop_items(&lifted);
        let hot_count = hot.iter().filter(|&&h| h).count();
        assert!(hot_count >= 8, "{}: {hot_count} hot items", f.name);
        assert!(!hot[0], "{}: the entry is not in the loop", f.name);
        assert!(
            !hot[hot.len() - 1],
            "{}: the return is not in the loop",
            f.name
        );
    }
    let result = outline::outline_module(&functions, &names, &OutlineOptions::default());
    assert_eq!(result.stats.sequences_replaced, 0, "{:?}", result.stats);
    assert!(result.stats.hot_instructions >= 16, "{:?}", result.stats);
    // The two loop bodies: the sequences skipped as hot.
    assert!(result.stats.hot_sequences >= 2, "{:?}", result.stats);
}

/// Issue 34, item 11: a short loop first, then straight-line code. Cranelift
/// lays the loop's body out after the code that follows the loop, so that
/// code lies between the loop's header and its branch back; it is not in
/// the loop (natural loops on the block graph, [`loops`]) and is outlined,
/// while the loop's own instructions stay.
#[test]
fn code_after_a_loop_laid_out_before_its_body_is_outlined() {
    let isa = aarch64(false);
    let mut names = Vec::new();
    let functions = compile("loop_first.clif", &isa, &mut names);
    let result = outline::outline_module(&functions, &names, &OutlineOptions::default());
    assert!(result.stats.sequences_replaced >= 2, "{:?}", result.stats);
    let mut decoder = Decoder::new();
    let mut loop_instructions = 0;
    for f in &functions {
        let lifted = lift::lift(f, &mut decoder);
        let in_loop = loops::loop_items(&lifted);
        // The layout this test is about: the return lies between the
        // loop's first and last instruction.
        let first = in_loop.iter().position(|&l| l).unwrap();
        let last = in_loop.iter().rposition(|&l| l).unwrap();
        let ret = lifted
            .items
            .iter()
            .position(
                |(_, item)| matches!(item, Item::Inst(i) if matches!(i.form, Form::Ret { .. })),
            )
            .unwrap();
        assert!(
            first < ret && ret < last,
            "{}: {first} {ret} {last}",
            f.name
        );
        let straight = in_loop[first..last].iter().filter(|&&l| !l).count();
        assert!(
            straight >= 10,
            "{}: {straight} items between header and latch outside the loop",
            f.name
        );
        loop_instructions += in_loop.iter().filter(|&&l| l).count();
    }
    assert_eq!(
        result.stats.hot_instructions, loop_instructions,
        "{:?}",
        result.stats
    );
    // Nothing of the loops was outlined: each function keeps every loop
    // instruction (an outlined sequence would leave one call for several).
    for (f, after) in functions.iter().zip(&result.functions) {
        let mut count = |func: &MachFunction| {
            let lifted = lift::lift(func, &mut decoder);
            assert!(lifted.opaque.is_none(), "{:?}", lifted.opaque);
            loops::loop_items(&lifted).iter().filter(|&&l| l).count()
        };
        let relaid = MachFunction {
            bytes: after.bytes.clone(),
            relocs: after.relocs.clone(),
            traps: after.traps.clone(),
            call_sites: after.call_sites.clone(),
            bb_starts: vec![0],
            ..f.clone()
        };
        assert!(
            relaid.bytes.len() < f.bytes.len(),
            "{}: nothing outlined",
            f.name
        );
        assert_eq!(count(&relaid), count(f), "{}", f.name);
    }
}

/// With a profile ([`parec_passes::heat::HotCode`]) the loops of functions
/// known cold are outlined like any other code, and nothing at all is
/// outlined from functions known hot.
#[test]
fn a_profile_decides_over_loops() {
    use parec_passes::heat::{Heat, HotCode};
    use std::sync::Arc;
    let isa = aarch64(false);
    let mut names = Vec::new();
    let functions = compile("hot_loop.clif", &isa, &mut names);
    let with = |heat: Heat| {
        let hot_code = HotCode {
            functions: functions.iter().map(|f| (f.name.clone(), heat)).collect(),
            ..HotCode::default()
        };
        let options = OutlineOptions {
            heat: Arc::new(hot_code),
            ..OutlineOptions::default()
        };
        outline::outline_module(&functions, &names, &options)
    };
    let cold = with(Heat::Cold);
    assert!(cold.stats.sequences_replaced >= 2, "{:?}", cold.stats);
    assert_eq!(cold.stats.hot_instructions, 0, "{:?}", cold.stats);
    let hot = with(Heat::Hot);
    assert_eq!(hot.stats.sequences_replaced, 0, "{:?}", hot.stats);
    assert_eq!(hot.stats.hot_functions, 2, "{:?}", hot.stats);
    let remarks: Vec<String> = hot.remarks.iter().map(|r| r.to_string()).collect();
    assert!(
        remarks
            .iter()
            .filter(|r| r.contains("hot-function"))
            .count()
            == 2,
        "{remarks:?}"
    );
}
