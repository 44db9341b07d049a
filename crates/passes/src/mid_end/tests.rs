//! The two lowerings on a function the mid-end makes larger and on one it
//! makes smaller, the estimate of traps, and the choice.

use super::*;
use crate::code_cache::tests::aarch64_at as aarch64;
use cranelift_codegen::control::ControlPlane;
use cranelift_codegen::ir;

fn parse(text: &str) -> ir::Function {
    cranelift_reader::parse_functions(text).unwrap().remove(0)
}

/// `h = h * 31 + g(..)` after each of three calls: the mid-end's
/// elaboration sinks the steps below the last call (every result stays
/// live across the later calls), and shares one `31` among them.
const HASH: &str = "
function %hash(i64) -> i64 system_v {
    sig0 = (i64) -> i64 system_v
    fn0 = colocated %g sig0
block0(v0: i64):
    v1 = call fn0(v0)
    v2 = iconst.i64 31
    v3 = imul v0, v2
    v4 = iadd v3, v1
    v5 = iconst.i64 1
    v6 = iadd v0, v5
    v7 = call fn0(v6)
    v8 = iconst.i64 31
    v9 = imul v4, v8
    v10 = iadd v9, v7
    v11 = iconst.i64 2
    v12 = iadd v0, v11
    v13 = call fn0(v12)
    v14 = iconst.i64 31
    v15 = imul v10, v14
    v16 = iadd v15, v13
    return v16
}";

/// `a + k * 8 + a * 8`: the mid-end turns the multiplications into shifts,
/// which aarch64 folds into `add`.
const SCALED: &str = "
function %scaled(i64, i64) -> i64 system_v {
block0(v0: i64, v1: i64):
    v2 = iconst.i64 8
    v3 = imul v1, v2
    v4 = iadd v0, v3
    v5 = iconst.i64 8
    v6 = imul v0, v5
    v7 = iadd v4, v6
    return v7
}";

/// Machine code of `func` lowered by `lowering`, as the driver records it.
fn lowered(lowerer: &Lowerer<'_>, func: &ir::Function, lowering: Lowering) -> MachFunction {
    let mut ctx = Context::for_function(func.clone());
    let code = lowerer.compile(&mut ctx, lowering, None).unwrap();
    MachFunction {
        name: func.name.to_string(),
        bytes: code.code_buffer().to_vec(),
        alignment: code.buffer.alignment,
        bb_starts: code.bb_starts.clone(),
        relocs: Vec::new(),
        traps: code
            .buffer
            .traps()
            .iter()
            .map(|t| (t.offset, t.code))
            .collect(),
        call_sites: Vec::new(),
        shared: false,
    }
}

/// `Measured` is Cranelift's own compilation at `speed_and_size`; `Plain`
/// is the one without the mid-end. Here the mid-end costs bytes in
/// `%hash` and saves them in `%scaled`, and the filter says so.
#[test]
fn each_lowering_is_the_filter_s_candidate_where_it_is_smaller() {
    let isa = aarch64("speed_and_size");
    let lowerer = Lowerer::new(&*isa).unwrap();
    let hash = parse(HASH);
    let mut ctx = Context::for_function(hash.clone());
    let own = ctx.compile(&*isa, &mut ControlPlane::default()).unwrap();
    let measured = lowered(&lowerer, &hash, Lowering::Measured);
    assert_eq!(measured.bytes, own.code_buffer());
    let plain = lowered(&lowerer, &hash, Lowering::Plain);
    assert!(plain.bytes.len() < measured.bytes.len());
    assert!(plain_may_pay(&measured, &plain));

    let scaled = parse(SCALED);
    let measured = lowered(&lowerer, &scaled, Lowering::Measured);
    let plain = lowered(&lowerer, &scaled, Lowering::Plain);
    assert!(measured.bytes.len() < plain.bytes.len());
    assert!(!plain_may_pay(&measured, &plain));
}

/// Two checks of one kind lowered as `trapz` cost one `udf` after the
/// trap-path pass: the estimate counts one.
#[test]
fn the_estimate_counts_one_trap_per_code() {
    let func = parse(
        "function %f(i64, i64) -> i64 {
         block0(v0: i64, v1: i64):
            trapz v0, user66
            trapz v1, user66
            trapz v1, user67
            v2 = iadd v0, v1
            return v2
         }",
    );
    let isa = aarch64("speed_and_size");
    let code = lowered(&Lowerer::new(&*isa).unwrap(), &func, Lowering::Measured);
    assert_eq!(code.traps.len(), 3);
    assert_eq!(estimate(&code), code.bytes.len() - 4);
}

/// A candidate keeps `Plain` unless it ends up larger: a tie keeps the
/// smaller estimate's lowering.
#[test]
fn plain_is_kept_unless_its_price_is_larger() {
    assert!(keeps_plain(40, 36));
    assert!(keeps_plain(40, 40));
    assert!(!keeps_plain(40, 44));
}

/// The lowerings exist only at `-Oz` (`opt_level=speed_and_size`).
#[test]
fn other_levels_have_no_lowerer() {
    assert!(Lowerer::new(&*aarch64("speed")).is_none());
    assert!(Lowerer::new(&*aarch64("none")).is_none());
    assert!(Lowerer::new(&*aarch64("speed_and_size")).is_some());
}
