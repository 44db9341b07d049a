//! The three steps on single divisions of every kind, checked by running
//! the function before and after in Cranelift's interpreter and by the code
//! Cranelift emits.

use super::*;
use crate::code_cache::tests::aarch64;
use cranelift_codegen::data_value::DataValue;
use cranelift_interpreter::environment::FunctionStore;
use cranelift_interpreter::interpreter::{Interpreter, InterpreterState};
use cranelift_interpreter::step::ControlFlow;

fn parse(text: &str) -> ir::Function {
    cranelift_reader::parse_functions(text).unwrap().remove(0)
}

/// `f(x) = x op d` on `ty`.
fn division(op: &str, ty: &str, d: i64) -> ir::Function {
    parse(&format!(
        "function %f({ty}) -> {ty} {{
         block0(v0: {ty}):
            v1 = iconst.{ty} {d}
            v2 = {op} v0, v1
            return v2
         }}"
    ))
}

fn run(func: &ir::Function, arg: DataValue) -> DataValue {
    let mut store = FunctionStore::default();
    store.add(func.name.to_string(), func);
    let mut interpreter = Interpreter::new(InterpreterState::default().with_function_store(store));
    match interpreter
        .call_by_name(&func.name.to_string(), &[arg])
        .unwrap()
    {
        ControlFlow::Return(values) => values[0].clone(),
        other => panic!("{other:?}"),
    }
}

fn count(func: &ir::Function, opcode: Opcode) -> usize {
    func.layout
        .blocks()
        .flat_map(|b| func.layout.block_insts(b))
        .filter(|&i| func.dfg.insts[i].opcode() == opcode)
        .count()
}

fn code_bytes(func: &ir::Function, isa: &dyn TargetIsa) -> usize {
    let mut ctx = Context::for_function(func.clone());
    ctx.compile(isa, &mut ControlPlane::default())
        .unwrap()
        .code_buffer()
        .len()
}

/// Optimizes `func` keeping its divisions; the optimized function.
fn keep(func: &ir::Function, isa: &dyn TargetIsa) -> (ir::Function, Restored) {
    let mut ctx = Context::for_function(func.clone());
    let restored = optimize_keeping_divisions(&mut ctx, isa).unwrap();
    (ctx.func, restored)
}

const DIVISORS: [i64; 12] = [
    3,
    5,
    7,
    10,
    12,
    100,
    641,
    1_000_000_007,
    -3,
    -10,
    -1000,
    0x7fff_fff1,
];

#[test]
fn every_kind_of_constant_division_is_restored_and_computes_the_same() {
    let isa = aarch64();
    for ty in ["i32", "i64"] {
        for op in ["udiv", "sdiv", "urem", "srem"] {
            for d in DIVISORS {
                let before = division(op, ty, d);
                let (after, restored) = keep(&before, &*isa);
                let context = format!("{op}.{ty} by {d}:\n{after}");
                assert_eq!(
                    restored,
                    Restored {
                        restored: 1,
                        kept: 0
                    },
                    "{context}"
                );
                let div = if op.starts_with('s') {
                    Opcode::Sdiv
                } else {
                    Opcode::Udiv
                };
                assert_eq!(count(&after, div), 1, "{context}");
                assert_eq!(
                    count(&after, Opcode::Smulhi) + count(&after, Opcode::Umulhi),
                    0,
                    "{context}"
                );
                let record = record(&before)[0];
                for x in probes(&record) {
                    let arg = match ty {
                        "i32" => DataValue::I32(x as i32),
                        _ => DataValue::I64(x),
                    };
                    assert_eq!(
                        run(&before, arg.clone()),
                        run(&after, arg),
                        "{context} at {x}"
                    );
                }
            }
        }
    }
}

#[test]
fn divisions_lower_smaller_than_their_expansions() {
    let isa = aarch64();
    let plain = without_mid_end(&*isa).unwrap();
    for op in ["udiv", "sdiv", "urem", "srem"] {
        let before = division(op, "i64", 10);
        let (after, _) = keep(&before, &*isa);
        let expanded = code_bytes(&before, &*isa);
        let divided = code_bytes(&after, &*plain);
        // `mov`, the division, `ret`; a remainder adds `msub` and a second
        // `mov` of `d` (the division's lowering materializes its constant
        // divisor itself).
        let expected = if op.ends_with("rem") { 20 } else { 12 };
        assert_eq!(divided, expected, "{op}: {after}");
        assert!(expanded > divided + 8, "{op}: {expanded} bytes expanded");
    }
}

#[test]
fn a_quotient_and_its_remainder_share_one_division() {
    let isa = aarch64();
    let before = parse(
        "function %f(i64) -> i64, i64 {
         block0(v0: i64):
            v1 = iconst.i64 10
            v2 = sdiv v0, v1
            v3 = srem v0, v1
            return v2, v3
         }",
    );
    let (after, restored) = keep(&before, &*isa);
    assert_eq!(
        restored,
        Restored {
            restored: 1,
            kept: 0
        },
        "{after}"
    );
    assert_eq!(count(&after, Opcode::Sdiv), 1, "{after}");
}

#[test]
fn powers_of_two_zero_and_minus_one_are_left_to_the_mid_end() {
    for (op, d) in [
        ("sdiv", 8),
        ("sdiv", -8),
        ("udiv", 16),
        ("sdiv", -1),
        ("udiv", 0),
        ("srem", 1),
    ] {
        assert!(record(&division(op, "i64", d)).is_empty(), "{op} by {d}");
    }
    assert!(record(&division("sdiv", "i32", i32::MIN as i64)).is_empty());
    assert!(!record(&division("udiv", "i64", -3)).is_empty());
}

/// A tree of the expansion's shape that does not compute `x / d` (a wrong
/// multiplier) stays as it is.
#[test]
fn an_expansion_that_is_not_the_quotient_is_kept() {
    let mut func = parse(
        "function %f(i64) -> i64 {
         block0(v0: i64):
            v1 = iconst.i64 0x6666666666666667
            v2 = smulhi v0, v1
            v3 = iconst.i64 3
            v4 = sshr v2, v3
            v5 = iconst.i64 63
            v6 = ushr v4, v5
            v7 = iadd v4, v6
            return v7
         }",
    );
    let v = |n: u32| Value::from_u32(n);
    let mut record = ConstantDivision {
        result: v(7),
        numerator: v(0),
        divisor: 10,
        ty: types::I64,
        signed: true,
        remainder: false,
    };
    let mut ctx = Context::for_function(func.clone());
    ctx.compute_cfg();
    ctx.compute_domtree();
    // Shifted by 3, the multiplier divides by 20: not the quotient by 10.
    assert_eq!(
        restore(&mut func, &[record], &ctx.domtree),
        Restored {
            restored: 0,
            kept: 1
        }
    );
    assert_eq!(count(&func, Opcode::Sdiv), 0);
    // By 20 it is (Hacker's Delight's magic for 10, with one more shift).
    record.divisor = 20;
    assert_eq!(
        restore(&mut func, &[record], &ctx.domtree),
        Restored {
            restored: 1,
            kept: 0
        }
    );
    assert_eq!(count(&func, Opcode::Sdiv), 1);
}

/// A division whose result is unused is deleted by the mid-end: nothing to
/// restore, nothing kept.
#[test]
fn a_deleted_division_is_neither_restored_nor_kept() {
    let isa = aarch64();
    let before = parse(
        "function %f(i64) -> i64 {
         block0(v0: i64):
            v1 = iconst.i64 10
            v2 = sdiv v0, v1
            return v0
         }",
    );
    let (after, restored) = keep(&before, &*isa);
    assert_eq!(restored, Restored::default(), "{after}");
}
