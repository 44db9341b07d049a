//! One test per rule, matches and non-matches, each verified after the pass.

use super::*;
use cranelift_codegen::settings;
use cranelift_codegen::verify_function;

/// Parses one function, runs the pass, verifies, checks idempotence.
fn combine(text: &str) -> (String, CombineStats) {
    let mut func = cranelift_reader::parse_functions(text).unwrap().remove(0);
    let stats = run(&mut func);
    let flags = settings::Flags::new(settings::builder());
    if let Err(e) = verify_function(&func, &flags) {
        panic!("verifier errors after combine:\n{e}\n{}", func.display());
    }
    let once = func.display().to_string();
    let again = run(&mut func);
    assert_eq!(again.rewrites(), 0, "not idempotent:\n{once}");
    (once, stats)
}

#[test]
fn address_constant_moves_into_the_offset_and_the_add_is_shared() {
    let (text, stats) = combine(
        "function %f(i64, i64) -> i32 {
         block0(v0: i64, v1: i64):
             v2 = iadd v0, v1
             v3 = load.i8 v2+8
             v4 = iconst.i64 1
             v5 = iadd v1, v4
             v6 = iadd v0, v5
             v7 = load.i8 v6+8
             v8 = iconst.i64 2
             v9 = iadd v8, v1
             v10 = iadd v9, v0
             store v3, v10-3
             v11 = uextend.i32 v7
             return v11
         }",
    );
    assert_eq!(stats.offsets_folded, 2, "{text}");
    assert_eq!(stats.adds_reused, 2, "{text}");
    assert!(
        text.contains("load.i8 v2+9") || text.contains("uload8.i32 v2+9"),
        "{text}"
    );
    assert!(text.contains("store v3, v2-1"), "{text}");
    assert_eq!(text.matches("iadd").count(), 1, "{text}");
}

#[test]
fn address_add_inserted_only_when_the_old_one_dies() {
    // `v6` is also returned: folding would add an `iadd` and keep `v6`'s.
    let kept = "function %f(i64, i64) -> i64 {
         block0(v0: i64, v1: i64):
             v4 = iconst.i64 1
             v5 = iadd v1, v4
             v6 = iadd v0, v5
             v7 = load.i64 v6
             v8 = iadd v7, v6
             return v8
         }";
    let (_, stats) = combine(kept);
    assert_eq!(stats.offsets_folded, 0);
    let (text, stats) = combine(&kept.replace("iadd v7, v6", "iadd v7, v7"));
    assert_eq!(stats.offsets_folded, 1, "{text}");
    assert!(text.contains("load.i64 v9+1"), "{text}");
}

#[test]
fn address_offsets_that_overflow_and_isub_of_constants() {
    let (text, stats) = combine(
        "function %f(i64) -> i64 {
         block0(v0: i64):
             v1 = iconst.i64 0x7fff_ffff
             v2 = iadd v0, v1
             v3 = load.i64 v2+8
             v4 = iconst.i64 16
             v5 = isub v0, v4
             v6 = load.i64 v5+16
             v7 = iadd v3, v6
             return v7
         }",
    );
    assert_eq!(stats.offsets_folded, 1, "{text}");
    assert!(text.contains("load.i64 v2+8"), "{text}");
    assert!(text.contains("load.i64 v0\n"), "{text}");
}

#[test]
fn address_add_that_does_not_dominate_is_not_reused() {
    let (text, stats) = combine(
        "function %f(i64, i64, i8) -> i64 {
         block0(v0: i64, v1: i64, v2: i8):
             brif v2, block1, block2
         block1:
             v3 = iadd v0, v1
             v4 = load.i64 v3
             return v4
         block2:
             v5 = iconst.i64 8
             v6 = iadd v1, v5
             v7 = iadd v0, v6
             v8 = load.i64 v7
             return v8
         }",
    );
    assert_eq!((stats.offsets_folded, stats.adds_reused), (1, 0), "{text}");
    assert!(text.contains("load.i64 v9+8"), "{text}");
}

#[test]
fn wide_shift_of_a_zero_extended_value_is_narrowed() {
    let (text, stats) = combine(
        "function %f(i32) -> i32 {
         block0(v0: i32):
             v1 = sextend.i64 v0
             v2 = iconst.i64 0xffff_ffff
             v3 = band v1, v2
             v4 = iconst.i64 17
             v5 = sshr v3, v4
             v6 = ireduce.i32 v5
             return v6
         }",
    );
    assert_eq!(stats.shifts_narrowed, 1, "{text}");
    assert!(text.contains("ushr v0, v7"), "{text}");
    assert!(!text.contains("sshr") && !text.contains("band"), "{text}");
    // i8 through i32, `uextend`, `ushr`, mask first.
    let (text, stats) = combine(
        "function %f(i8) -> i8 {
         block0(v0: i8):
             v1 = uextend.i32 v0
             v2 = iconst.i8 3
             v5 = ushr v1, v2
             v6 = ireduce.i8 v5
             return v6
         }",
    );
    assert_eq!(stats.shifts_narrowed, 1, "{text}");
    assert!(text.contains("ushr v0, v7"), "{text}");
}

#[test]
fn wide_shifts_that_are_not_logical_narrow_shifts_stay() {
    for (mask, amount, ext, why) in [
        ("0xffff_ffff", "32", "sextend", "k >= width of x"),
        ("0xffff", "3", "sextend", "mask narrower than x"),
        ("0x1_ffff_ffff", "3", "sextend", "mask wider than x"),
        ("0xffff_ffff", "x", "sextend", "amount not constant"),
    ] {
        let amount = if amount == "x" {
            "v4 = sextend.i64 v0".to_string()
        } else {
            format!("v4 = iconst.i64 {amount}")
        };
        let (text, stats) = combine(&format!(
            "function %f(i32) -> i32 {{
             block0(v0: i32):
                 v1 = {ext}.i64 v0
                 v2 = iconst.i64 {mask}
                 v3 = band v1, v2
                 {amount}
                 v5 = sshr v3, v4
                 v6 = ireduce.i32 v5
                 return v6
             }}"
        ));
        assert_eq!(stats.shifts_narrowed, 0, "{why}: {text}");
    }
    // No mask at all: a sign-extended value's arithmetic shift.
    let (_, stats) = combine(
        "function %f(i32) -> i32 {
         block0(v0: i32):
             v1 = sextend.i64 v0
             v4 = iconst.i64 3
             v5 = sshr v1, v4
             v6 = ireduce.i32 v5
             return v6
         }",
    );
    assert_eq!(stats.shifts_narrowed, 0);
}

#[test]
fn shift_pairs_become_rotates_after_narrowing() {
    let (text, stats) = combine(
        "function %f(i32) -> i32 {
         block0(v0: i32):
             v1 = iconst.i32 15
             v2 = ishl v0, v1
             jump block1
         block1:
             v3 = sextend.i64 v0
             v4 = iconst.i64 0xffff_ffff
             v5 = band v3, v4
             v6 = iconst.i64 17
             v7 = sshr v5, v6
             v8 = ireduce.i32 v7
             v9 = bor v8, v2
             return v9
         }",
    );
    assert_eq!((stats.shifts_narrowed, stats.rotates), (1, 1), "{text}");
    assert!(text.contains("rotl.i32 v0, v1"), "{text}");
    assert!(!text.contains("ishl") && !text.contains("ushr"), "{text}");
}

#[test]
fn rotates_of_32_and_64_bits_and_non_rotates() {
    for (ty, k1, k2, op, rotates) in [
        ("i8", 3, 5, "bor", false),    // no narrow rotate on aarch64
        ("i16", 4, 12, "bxor", false), // (module doc)
        ("i32", 4, 28, "bxor", true),
        ("i64", 13, 51, "iadd", true),
        ("i64", 77, 51, "bor", true), // 77 mod 64 = 13
        ("i32", 15, 16, "bor", false),
        ("i32", 0, 32, "bor", false),
        ("i32", 15, 17, "band", false),
    ] {
        let (text, stats) = combine(&format!(
            "function %f({ty}) -> {ty} {{
             block0(v0: {ty}):
                 v1 = iconst.i32 {k1}
                 v2 = ishl v0, v1
                 v3 = iconst.i64 {k2}
                 v4 = ushr v0, v3
                 v5 = {op} v2, v4
                 return v5
             }}"
        ));
        assert_eq!(stats.rotates == 1, rotates, "{ty} {k1} {k2} {op}: {text}");
    }
    // Different values shifted.
    let (_, stats) = combine(
        "function %f(i32, i32) -> i32 {
         block0(v0: i32, v10: i32):
             v1 = iconst.i32 8
             v2 = ishl v0, v1
             v3 = iconst.i32 24
             v4 = ushr v10, v3
             v5 = bor v4, v2
             return v5
         }",
    );
    assert_eq!(stats.rotates, 0);
}

#[test]
fn loads_take_the_extension_of_their_every_use() {
    let (text, stats) = combine(
        "function %f(i64) -> i32, i64 {
         block0(v0: i64):
             v1 = load.i8 v0
             v5 = load.i32 v0+4
             jump block1
         block1:
             v2 = uextend.i32 v1
             v3 = uextend.i32 v1
             v4 = iadd v2, v3
             v6 = sextend.i64 v5
             return v4, v6
         }",
    );
    assert_eq!(stats.loads_extended, 2, "{text}");
    assert!(text.contains("uload8.i32 v0"), "{text}");
    assert!(text.contains("sload32 v0+4"), "{text}");
    assert!(!text.contains("extend"), "{text}");
}

#[test]
fn loads_with_other_uses_or_mixed_extensions_stay() {
    for (uses, why) in [
        ("v2 = uextend.i32 v1\n v3 = uextend.i64 v1", "two widths"),
        ("v2 = uextend.i32 v1\n v3 = sextend.i64 v1", "two kinds"),
        ("v2 = uextend.i32 v1\n v3 = iadd v1, v1", "another use"),
    ] {
        let (text, stats) = combine(&format!(
            "function %f(i64) {{
             block0(v0: i64):
                 v1 = load.i8 v0
                 {uses}
                 store v2, v0
                 store v3, v0
                 return
             }}"
        ));
        assert_eq!(stats.loads_extended, 0, "{why}: {text}");
    }
    // Load, extension and uses in one block: left to Cranelift's lowering.
    let (_, stats) = combine(
        "function %f(i64) -> i32 {
         block0(v0: i64):
             v1 = load.i8 v0
             v2 = uextend.i32 v1
             v3 = iadd v2, v2
             return v3
         }",
    );
    assert_eq!(stats.loads_extended, 0);
    // A load feeding a block parameter.
    let (_, stats) = combine(
        "function %f(i64) -> i32 {
         block0(v0: i64):
             v1 = load.i8 v0
             v2 = uextend.i32 v1
             jump block1(v1)
         block1(v3: i8):
             v4 = uextend.i32 v3
             v5 = iadd v2, v4
             return v5
         }",
    );
    assert_eq!(stats.loads_extended, 0);
}

#[test]
fn an_index_a_check_also_reads_keeps_its_add_unless_one_is_nearby() {
    let far = "function %f(i64, i64, i8) -> i64 {
         block0(v0: i64, v1: i64, v2: i8):
             v3 = iadd v0, v1
             v4 = load.i64 v3
             brif v2, block1, block2
         block1:
             jump block3
         block2:
             jump block3
         block3:
             v5 = iconst.i64 1
             v6 = iadd v1, v5
             v7 = iadd v0, v6
             v8 = load.i64 v7
             v9 = iadd v8, v6
             v10 = iadd v9, v4
             return v10
         }";
    let (text, stats) = combine(far);
    assert_eq!(stats.offsets_folded, 0, "{text}");
    // The index dies with the rewrite: folded (Cranelift shares the add).
    let (text, stats) = combine(&far.replace("iadd v8, v6", "iadd v8, v8"));
    assert_eq!(stats.offsets_folded, 1, "{text}");
    // An add in the same chain of blocks is reused whatever the index
    // (at a non-zero offset: see below).
    let chain = far
        .replace(
            "block2:\n             jump block3",
            "block2:\n             return v4",
        )
        .replace("load.i64 v7", "load.i64 v7+8");
    let (text, stats) = combine(&chain);
    assert_eq!((stats.offsets_folded, stats.adds_reused), (1, 1), "{text}");
    assert!(text.contains("load.i64 v3+9"), "{text}");
    // At offset 0 `a + (b + 1)` costs nothing with `b + 1` kept: left alone.
    let same_block_index_kept = "function %f(i64, i64) -> i64 {
         block0(v0: i64, v1: i64):
             v3 = iadd v0, v1
             v4 = load.i64 v3+8
             v5 = iconst.i64 1
             v6 = iadd v1, v5
             v7 = iadd v0, v6
             v8 = load.i64 v7
             v9 = iadd v8, v6
             v10 = iadd v9, v4
             return v10
         }";
    let (text, stats) = combine(same_block_index_kept);
    assert_eq!(stats.offsets_folded, 0, "{text}");
    let (text, stats) = combine(&same_block_index_kept.replace("load.i64 v7", "load.i64 v7+8"));
    assert_eq!((stats.offsets_folded, stats.adds_reused), (1, 1), "{text}");
}
