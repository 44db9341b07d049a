use super::*;
use crate::cgdata::CgData;
use crate::clif_module::{FunctionDef, Linkage, SymbolKind};
use cranelift_reader::parse_functions;

/// A module of the CLIF `text`'s functions, named `names`; every external
/// name `u0:k` refers to symbol `k` (the functions first, then `extra`
/// symbols).
pub(crate) fn module(text: &str, names: &[&str], extra: &[&str]) -> ClifModule {
    let mut m = ClifModule::new("m");
    let funcs = parse_functions(text).unwrap();
    for (name, func) in names.iter().zip(&funcs) {
        m.declare(
            name,
            SymbolKind::Function(func.signature.clone()),
            Linkage::Export,
        );
    }
    for name in extra {
        let sig = ir::Signature::new(cranelift_codegen::isa::CallConv::Tail);
        m.declare(name, SymbolKind::Function(sig), Linkage::Import);
    }
    for (i, mut func) in funcs.into_iter().enumerate() {
        func.name = ClifModule::func_name(i as u32);
        m.functions.push(FunctionDef {
            symbol: i as u32,
            func,
        });
    }
    m
}

fn hash_of(text: &str, extra: &[&str]) -> u64 {
    let m = module(text, &["f"], extra);
    profile_hash(&m, &m.functions[0].func)
}

const LOOP: &str = "function u0:0(i64) -> i64 tail {
    sig0 = (i64) -> i64 tail
    fn0 = u0:1 sig0
block0(v0: i64):
    jump block1(v0)
block1(v1: i64):
    v2 = iconst.i64 1
    v3 = isub v1, v2
    v4 = call fn0(v3)
    brif v4, block1(v3), block2
block2:
    return v1
}";

#[test]
fn renumbering_entities_keeps_the_hash() {
    let renumbered = "function u0:0(i64) -> i64 tail {
    sig3 = (i64) -> i64 tail
    fn7 = u0:1 sig3
block5(v10: i64):
    jump block9(v10)
block9(v11: i64):
    v20 = iconst.i64 1
    v21 = isub v11, v20
    v22 = call fn7(v21)
    brif v22, block9(v21), block2
block2:
    return v11
}";
    assert_eq!(hash_of(LOOP, &["g"]), hash_of(renumbered, &["g"]));
}

#[test]
fn code_constants_and_callee_names_change_the_hash() {
    let base = hash_of(LOOP, &["g"]);
    assert_ne!(base, hash_of(LOOP, &["h"]), "callee name");
    assert_ne!(
        base,
        hash_of(&LOOP.replace("iconst.i64 1", "iconst.i64 2"), &["g"]),
        "constant"
    );
    assert_ne!(
        base,
        hash_of(&LOOP.replace("isub", "iadd"), &["g"]),
        "opcode"
    );
    assert_ne!(
        base,
        hash_of(
            &LOOP.replace("block1(v3), block2", "block2, block1(v3)"),
            &["g"]
        ),
        "branch targets"
    );
}

#[test]
fn trap_block_contents_do_not_count() {
    let with_call = "function u0:0(i64) -> i64 tail {
    sig0 = (i32) tail
    fn0 = u0:1 sig0
block0(v0: i64):
    brif v0, block1, block2
block1:
    return v0
block2 cold:
    v1 = iconst.i32 3
    call fn0(v1)
    trap user1
}";
    let bare = "function u0:0(i64) -> i64 tail {
block0(v0: i64):
    brif v0, block1, block2
block1:
    return v0
block2 cold:
    trap user42
}";
    assert_eq!(hash_of(with_call, &["pare_trap"]), hash_of(bare, &[]));
    // A block that does not end in a trap counts in full.
    let returning = bare.replace("trap user42", "return v0");
    assert_ne!(hash_of(&returning, &[]), hash_of(bare, &[]));
}

fn profile(entries: &[(&str, u64, &[u64])]) -> Profile {
    let mut p = Profile::default();
    for (name, hash, blocks) in entries {
        p.add(
            name.to_string(),
            *hash,
            FunctionProfile {
                blocks: blocks.to_vec(),
            },
        );
    }
    p
}

#[test]
fn the_section_round_trips_in_a_container() {
    let p = profile(&[("main", 7, &[1, 0, 3]), ("f", 9, &[100, 99]), ("g", 1, &[])]);
    let mut data = CgData::new(PROFILE_TARGET);
    data.put(&p);
    let bytes = data.encode();
    let back = CgData::decode(&bytes, Some(PROFILE_TARGET)).unwrap();
    assert_eq!(back.get::<Profile>().unwrap(), Some(p));
}

#[test]
fn out_of_order_functions_are_corrupt() {
    let mut w = crate::cgdata::Writer::default();
    w.u32(2);
    for name in ["b", "a"] {
        w.str(name);
        w.u64(0);
        w.u32(0);
    }
    let bytes = w.into_bytes();
    let mut r = Reader::new(&bytes);
    assert!(matches!(
        Profile::decode(&mut r),
        Err(CgDataError::Corrupt { .. })
    ));
}

#[test]
fn merge_sums_in_any_order() {
    let a = profile(&[("f", 1, &[1, 2]), ("g", 2, &[5])]);
    let b = profile(&[("f", 1, &[10, 20, 30]), ("h", 3, &[1])]);
    let c = profile(&[("g", 2, &[u64::MAX])]);
    let mut x = a.clone();
    x.merge(b.clone());
    x.merge(c.clone());
    let mut y = c;
    y.merge(b);
    y.merge(a);
    assert_eq!(x, y);
    assert_eq!(x.functions[&("f".into(), 1)].blocks, [11, 22, 30]);
    assert_eq!(x.functions[&("g".into(), 2)].blocks, [u64::MAX]);
}

#[test]
fn thresholds_follow_the_percentiles() {
    // 100,000 in the loop, 1 elsewhere: 99% of the blocks, and of the
    // work, is reached by `hot`.
    let p = profile(&[
        ("hot", 1, &[1, 100_000, 1]),
        ("warm", 2, &[1]),
        ("cold", 3, &[0]),
    ]);
    let t = Thresholds::of(&p);
    assert_eq!(t.hot, 100_000);
    assert_eq!(t.hot_work, 100_002);
    assert_eq!(t.cold, 1);
    let classes: Vec<Option<Heat>> = p.functions.values().map(|f| t.classify(f)).collect();
    // Keys sort by name: cold, hot, warm.
    assert_eq!(
        classes,
        [Some(Heat::Cold), Some(Heat::Hot), Some(Heat::Cold)]
    );
    // A function doing all of a tiny program's work is still not hot: it
    // ran fewer than MIN_HOT_WORK blocks.
    let small = profile(&[("small", 1, &[1, 1000, 1])]);
    let t = Thresholds::of(&small);
    assert_eq!(t.hot_work, MIN_HOT_WORK);
    assert_eq!(t.classify(&small.functions[&("small".into(), 1)]), None);
    // Nothing counted: nothing hot, everything cold.
    let empty = Thresholds::of(&profile(&[("f", 1, &[0, 0])]));
    assert_eq!(
        empty.classify(&FunctionProfile { blocks: vec![0, 0] }),
        Some(Heat::Cold)
    );
}

#[test]
fn modes_decide_the_unknown_and_lukewarm() {
    // Four different functions (identical ones would fold: see
    // `a_function_folding_with_a_hot_one_is_hot`).
    let text = "function u0:0() tail {
block0:
    return
}
function u0:1() tail {
block0:
    v0 = iconst.i64 1
    return
}
function u0:2() tail {
block0:
    v0 = iconst.i64 2
    return
}
function u0:3() tail {
block0:
    v0 = iconst.i64 0
    return
}";
    let m = module(text, &["hot", "warm", "cold", "changed"], &[]);
    let hash = |i: usize| profile_hash(&m, &m.functions[i].func);
    let mut counts: Vec<(&str, u64, &[u64])> = vec![
        ("hot", hash(0), &[100_000_000]),
        ("cold", hash(2), &[0]),
        ("changed", 12345, &[5]),
    ];
    // `hot` does nearly all the work; `warm`'s 300 is above the cold count
    // (the blocks of `tail` make up the last millionth).
    let filler = [100u64; 200];
    counts.push(("filler", 1, &filler));
    let tail = [1u64; 200];
    counts.push(("tail", 2, &tail));
    counts.push(("warm", hash(1), &[300]));
    let p = profile(&counts);
    let t = Thresholds::of(&p);
    let opt = hot_code(&m, &p, &t, ProfileMode::Optimistic);
    assert_eq!(opt.hot_code.heat("hot"), Some(Heat::Hot));
    assert_eq!(opt.hot_code.heat("cold"), Some(Heat::Cold));
    // Optimistic: lukewarm is known not hot (no static guessing).
    assert_eq!(opt.hot_code.heat("warm"), Some(Heat::Cold));
    assert_eq!(opt.hot_code.heat("changed"), None);
    assert_eq!(
        opt.counts,
        HeatCounts {
            hot: 1,
            cold: 1,
            lukewarm: 1,
            unknown: 1
        }
    );
    assert_eq!(opt.mismatches.len(), 1);
    assert_eq!(opt.mismatches[0].function, "changed");
    assert_eq!(opt.mismatches[0].profiled, [12345]);
    let cons = hot_code(&m, &p, &t, ProfileMode::Conservative);
    assert_eq!(cons.hot_code.heat("hot"), Some(Heat::Hot));
    assert_eq!(cons.hot_code.heat("cold"), Some(Heat::Cold));
    assert_eq!(cons.hot_code.heat("warm"), Some(Heat::Hot));
    assert_eq!(cons.hot_code.heat("changed"), Some(Heat::Hot));
}

#[test]
fn instrumented_code_verifies_and_maps_counters() {
    let mut m = module(LOOP, &["f"], &["g"]);
    let before = profile_hash(&m, &m.functions[0].func);
    let map = instrument(&mut m, "__parec_profile_counters");
    assert_eq!(map.count, 3);
    assert_eq!(map.functions[0].hash, before);
    assert_eq!(m.data.last().unwrap().bytes.len(), 24);
    let func = &m.functions[0].func;
    let flags = cranelift_codegen::settings::Flags::new(cranelift_codegen::settings::builder());
    cranelift_codegen::verifier::verify_function(func, &flags).unwrap();
    // Every block starts with its increment.
    let text = func.display().to_string();
    assert_eq!(text.matches("load.i64 notrap aligned").count(), 3);
    let p = map.profile(&[1, 10, 1]);
    assert_eq!(p.functions[&("f".into(), before)].blocks, [1, 10, 1]);
}

#[test]
fn hot_sites_are_calls_in_hot_blocks() {
    let m = module(LOOP, &["f"], &["g"]);
    let hash = profile_hash(&m, &m.functions[0].func);
    let p = profile(&[("f", hash, &[1, 100_000, 1])]);
    let heat = hot_code(&m, &p, &Thresholds::of(&p), ProfileMode::Optimistic);
    let func = &m.functions[0].func;
    let call = func
        .layout
        .blocks()
        .flat_map(|b| func.layout.block_insts(b))
        .find(|&i| func.dfg.insts[i].opcode() == ir::Opcode::Call)
        .unwrap();
    assert!(heat.hot_code.is_hot_site("f", call));
    assert!(heat.hot_code.is_hot("f"));
    // Too little work to be hot: no hot function, no hot site.
    let p = profile(&[("f", hash, &[1, 1000, 1])]);
    let heat = hot_code(&m, &p, &Thresholds::of(&p), ProfileMode::Optimistic);
    assert!(!heat.hot_code.is_hot("f"));
    assert!(!heat.hot_code.is_hot_site("f", call));
}

/// A function identical to a hot one (the linker folds the two) is hot
/// too, whatever the profile says of it, and says which one it folds with.
#[test]
fn a_function_folding_with_a_hot_one_is_hot() {
    let text = "function u0:0(i64) -> i64 tail {
block0(v0: i64):
    v1 = iadd v0, v0
    return v1
}
function u0:1(i64) -> i64 tail {
block0(v0: i64):
    v1 = iadd v0, v0
    return v1
}
function u0:2(i64) -> i64 tail {
block0(v0: i64):
    v1 = isub v0, v0
    return v1
}";
    let m = module(text, &["hot", "twin", "other"], &[]);
    let hash = |i: usize| profile_hash(&m, &m.functions[i].func);
    let filler = [100u64; 200];
    let counts: Vec<(&str, u64, &[u64])> = vec![
        ("hot", hash(0), &[100_000_000]),
        ("twin", hash(1), &[0]),
        ("other", hash(2), &[0]),
        ("filler", 1, &filler),
    ];
    let p = profile(&counts);
    let heat = hot_code(&m, &p, &Thresholds::of(&p), ProfileMode::Optimistic);
    assert_eq!(heat.hot_code.heat("hot"), Some(Heat::Hot));
    assert_eq!(heat.hot_code.heat("twin"), Some(Heat::Hot));
    assert_eq!(heat.hot_code.heat("other"), Some(Heat::Cold));
    let twin = heat.functions.iter().find(|f| f.name == "twin").unwrap();
    assert_eq!(twin.class, Class::Cold, "the profile's own class is kept");
    assert_eq!(twin.folds_with.as_deref(), Some("hot"));
    assert_eq!(heat.counts.hot, 1, "counts are the profile's classes");
}
