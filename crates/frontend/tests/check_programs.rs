//! Source-level tests of the checker: parse Pare text, check it, and assert
//! on the typed program or on the diagnostics.

use pare_frontend::check::check_program;
use pare_frontend::parser::parse_module;
use pare_frontend::source::{Diagnostics, SourceMap};
use pare_frontend::tir::{self, ExprKind, Linkage, Program, Stmt, Ty};

/// Parses and checks modules given as (name, text); the first is the root.
fn check(mods: &[(&str, &str)]) -> (Option<Program>, Diagnostics, SourceMap) {
    let mut sources = SourceMap::new();
    let mut diags = Diagnostics::default();
    let modules: Vec<_> = mods
        .iter()
        .map(|(name, text)| {
            let file = sources.add(format!("{name}.pare"), text.to_string());
            parse_module(name, file, text, &mut diags)
        })
        .collect();
    assert!(
        !diags.has_errors(),
        "parse errors:\n{}",
        diags.render(&sources)
    );
    let p = check_program(&modules, &mut diags);
    assert_eq!(p.is_none(), diags.has_errors(), "None iff errors");
    (p, diags, sources)
}

fn ok_multi(mods: &[(&str, &str)]) -> Program {
    let (p, diags, sources) = check(mods);
    match p {
        Some(p) => p,
        None => panic!("unexpected errors:\n{}", diags.render(&sources)),
    }
}

fn ok(src: &str) -> Program {
    ok_multi(&[("main", src)])
}

/// The error messages (and notes) for a program expected to be rejected.
fn errors_multi(mods: &[(&str, &str)]) -> Vec<String> {
    let (p, diags, _) = check(mods);
    assert!(p.is_none());
    diags
        .list
        .iter()
        .map(|d| format!("{} {}", d.message, d.notes.join(" | ")))
        .collect()
}

fn errors(src: &str) -> Vec<String> {
    errors_multi(&[("main", src)])
}

#[track_caller]
fn assert_error(src: &str, needle: &str) {
    let errs = errors(src);
    assert!(
        errs.iter().any(|e| e.contains(needle)),
        "expected an error containing {needle:?}, got {errs:#?}"
    );
}

fn func<'p>(p: &'p Program, symbol: &str) -> &'p tir::Func {
    p.funcs
        .iter()
        .find(|f| f.symbol == symbol)
        .unwrap_or_else(|| {
            panic!(
                "no function {symbol}; have {:?}",
                p.funcs.iter().map(|f| &f.symbol).collect::<Vec<_>>()
            )
        })
}

fn symbols(p: &Program) -> Vec<&str> {
    p.funcs.iter().map(|f| f.symbol.as_str()).collect()
}

fn emit_symbols(p: &Program, module: usize) -> Vec<&str> {
    p.modules[module]
        .emit
        .iter()
        .map(|f| p.func(*f).symbol.as_str())
        .collect()
}

fn let_init<'p>(f: &'p tir::Func, name: &str) -> &'p tir::Expr {
    for s in &f.body.stmts {
        if let Stmt::Let(id, e) = s {
            if f.local(*id).name == name {
                return e;
            }
        }
    }
    panic!("no let {name}")
}

// ---- programs that check -------------------------------------------------------

#[test]
fn minimal_main() {
    let p = ok("fn main() { print(1); }");
    assert_eq!(symbols(&p), ["main"]);
    let m = p.func(p.main);
    assert!(m.is_main);
    assert_eq!(m.linkage, Linkage::Export);
    assert_eq!(m.ret, Ty::Unit);
}

#[test]
fn main_may_return_i32_or_i64() {
    ok("fn main() -> i32 { 3 }");
    ok("fn main() -> i64 { return 3; }");
}

#[test]
fn literals_take_their_type_from_context() {
    let p = ok("fn f(x: u8) -> u8 { x }
        fn main() {
            let a: i32 = 7;
            let b = 300u8;
            let c = a + 1;
            let d = 1 + a;
            let e = f(257);
            let g = -1 as u8;
            let h: u8 = 'a';
            let i = 0xff_i32;
            print(b); print(c); print(d); print(e); print(g); print(h); print(i);
        }");
    let m = func(&p, "main");
    assert_eq!(let_init(m, "a").ty, Ty::I32);
    assert!(matches!(let_init(m, "b").kind, ExprKind::Const(44)));
    assert_eq!(let_init(m, "b").ty, Ty::U8);
    assert_eq!(let_init(m, "c").ty, Ty::I32);
    assert_eq!(let_init(m, "d").ty, Ty::I32);
    let ExprKind::Call(_, args) = &let_init(m, "e").kind else {
        panic!()
    };
    assert!(matches!(args[0].kind, ExprKind::Const(1)));
    assert_eq!(args[0].ty, Ty::U8);
    assert_eq!(let_init(m, "g").ty, Ty::U8);
    assert_eq!(let_init(m, "i").ty, Ty::I32);
}

#[test]
fn minimum_i64_literal() {
    let p = ok("fn main() { let x = -9223372036854775808; print(x); }");
    assert!(matches!(
        let_init(func(&p, "main"), "x").kind,
        ExprKind::Const(i64::MIN)
    ));
}

#[test]
fn operators_map_to_tir() {
    let p = ok("fn main() {
        let a = !true; let b = !5u8; let c = true && false || true;
        let d = 1u8 << 9; let e = 1 << 3u8; let f = 3 < 4; let g = -(2i32);
        print(a); print(b); print(c); print(d); print(e); print(f); print(g);
    }");
    let m = func(&p, "main");
    // Constant operands of unary operators are folded.
    assert!(matches!(let_init(m, "a").kind, ExprKind::Const(0)));
    assert!(matches!(let_init(m, "b").kind, ExprKind::Const(250)));
    assert!(matches!(
        let_init(m, "c").kind,
        ExprKind::Logical(tir::Logical::Or, _, _)
    ));
    assert_eq!(let_init(m, "d").ty, Ty::U8);
    assert_eq!(let_init(m, "e").ty, Ty::I64);
    assert_eq!(let_init(m, "f").ty, Ty::Bool);
    assert!(matches!(let_init(m, "g").kind, ExprKind::Const(-2)));
}

#[test]
fn not_on_runtime_values() {
    let p = ok(
        "fn f(b: bool, x: i32) { let a = !b; let c = !x; print(a); print(c); }
        fn main() { f(true, 1); }",
    );
    let f = func(&p, "main::f");
    assert!(matches!(
        let_init(f, "a").kind,
        ExprKind::Unary(tir::UnOp::Not, _)
    ));
    assert!(matches!(
        let_init(f, "c").kind,
        ExprKind::Unary(tir::UnOp::BitNot, _)
    ));
}

#[test]
fn references_and_null() {
    let p = ok("struct P { x: i64 }
        fn main() {
            let p: P = null;
            let q = new P { x: 1 };
            let same = p == q;
            let isnull = null == q;
            let a: [i64] = null;
            let nn = null == null;
            print(same); print(isnull); print(nn); print(len(a));
        }");
    let m = func(&p, "main");
    assert_eq!(let_init(m, "p").ty, Ty::Struct(tir::StructId(0)));
    let ExprKind::Binary(_, l, _) = &let_init(m, "isnull").kind else {
        panic!()
    };
    assert_eq!(l.ty, Ty::Struct(tir::StructId(0)));
}

#[test]
fn struct_layout_and_fields() {
    let p = ok("struct S { a: u8, b: i64, c: bool, d: i32 }
        struct E { }
        fn main() { let s = new S { d: 1, c: true, b: 2, a: 3 }; s.b = s.a as i64; let e = new E {}; print(s.d); }");
    let s = &p.structs[0];
    assert_eq!(s.name, "main::S");
    assert_eq!(s.field_offsets, [0, 8, 16, 20]);
    assert_eq!(s.size, 24);
    assert_eq!(p.structs[1].size, 1);
    let ExprKind::NewStruct(_, fields) = &let_init(func(&p, "main"), "s").kind else {
        panic!()
    };
    let order: Vec<u32> = fields.iter().map(|(i, _)| *i).collect();
    assert_eq!(order, [3, 2, 1, 0], "source order is evaluation order");
}

#[test]
fn arrays_strings_and_index_casts() {
    let p = ok("fn main() {
        let a = new [u8; 4];
        let i: i32 = 2;
        a[i] = 7;
        let s = \"hello\";
        let c = s[1u8];
        print(len(a) + len(s)); print(c); print(a[i]);
    }");
    let m = func(&p, "main");
    let Stmt::Assign(tir::Place::Index(_, idx), v) = &m.body.stmts[2] else {
        panic!("{:?}", m.body.stmts[2])
    };
    assert!(matches!(idx.kind, ExprKind::Cast(_)));
    assert_eq!(idx.ty, Ty::I64);
    assert_eq!(v.ty, Ty::U8);
    assert_eq!(let_init(m, "c").ty, Ty::U8);
}

#[test]
fn compound_assignment_desugaring() {
    let p = ok("global g: i64 = 1;
        struct P { x: i32 }
        fn main() {
            let mut x = 1;
            x += 2;
            g <<= 1u8;
            let a = new [i64; 3];
            a[x - 2] *= 5;
            let p = new P { x: 1 };
            p.x -= 1;
        }");
    let m = func(&p, "main");
    let stmts = &m.body.stmts;
    assert!(
        matches!(&stmts[1], Stmt::Assign(tir::Place::Local(_), e) if matches!(e.kind, ExprKind::Binary(tir::BinOp::Add, _, _)))
    );
    assert!(
        matches!(&stmts[2], Stmt::Assign(tir::Place::Global(_), e) if matches!(e.kind, ExprKind::Binary(tir::BinOp::Shl, _, _)))
    );
    // a[x - 2] *= 5  =>  let $array = a; let $index = x - 2; $array[$index] = $array[$index] * 5
    assert!(matches!(&stmts[4], Stmt::Let(id, _) if m.local(*id).name.starts_with('$')));
    assert!(
        matches!(&stmts[5], Stmt::Let(id, _) if m.local(*id).name.starts_with('$') && m.local(*id).ty == Ty::I64)
    );
    let Stmt::Assign(tir::Place::Index(a, i), rhs) = &stmts[6] else {
        panic!("{:?}", stmts[6])
    };
    assert!(matches!(a.kind, ExprKind::Local(_)) && matches!(i.kind, ExprKind::Local(_)));
    let ExprKind::Binary(tir::BinOp::Mul, read, _) = &rhs.kind else {
        panic!()
    };
    assert!(matches!(read.kind, ExprKind::Index(_, _)));
    assert!(matches!(&stmts[9], Stmt::Assign(tir::Place::Field(..), _)));
}

#[test]
fn if_expressions_and_never() {
    let p = ok(
        "fn sign(x: i64) -> i64 { if x < 0 { -1 } else if x == 0 { 0 } else { 1 } }
        fn abs(x: i64) -> i64 { if x < 0 { return -x; } else { return x; } }
        fn pick(b: bool) -> i32 { if b { 4 } else { exit(3) } }
        fn loop_forever() -> i64 { while true { } return 0; }
        fn main() { print(sign(-5)); print(abs(3)); print(pick(true)); print(loop_forever()); }",
    );
    assert_eq!(func(&p, "main::sign").body.ty, Ty::I64);
    assert_eq!(func(&p, "main::abs").body.ty, Ty::Never);
    assert_eq!(func(&p, "main::pick").body.ty, Ty::I32);
}

#[test]
fn loops_and_shadowing() {
    let p = ok("fn main() {
        let mut s = 0u8;
        for i in 0u8..10 { if i == 5 { continue; } s = s + i; }
        let mut n = 0;
        while n < 3 { n = n + 1; if n == 2 { break; } }
        let s = s as i64 + 1;
        print(s);
    }");
    let m = func(&p, "main");
    let Stmt::For { var, .. } = &m.body.stmts[1] else {
        panic!()
    };
    assert_eq!(m.local(*var).ty, Ty::U8);
    assert!(!m.local(*var).mutable);
    assert_eq!(m.locals.iter().filter(|l| l.name == "s").count(), 2);
}

#[test]
fn globals_are_folded() {
    let p = ok("global a: i64 = 1 + 2 * 3;
        global b: u8 = 250 + 10;
        global c: bool = !false;
        global d: i32 = -(1 << 31) as i32;
        pub global e: [i64; 3] = [1, -2, 3 * 4];
        global f: str = \"hi\";
        struct P { x: i64 }
        global g: P = null;
        global h: [u8; 2] = ['a', 0x1ff];
        global k: i64 = 7 / 2 % 3;
        global names: [str; 3] = [\"one\", null, \"two\"];
        global ps: [P; 2] = [null, null];
        fn main() { print(a); print(len(e)); }");
    let inits: Vec<&tir::GlobalInit> = p.globals.iter().map(|g| &g.init).collect();
    assert_eq!(inits[0], &tir::GlobalInit::Int(7));
    assert_eq!(inits[1], &tir::GlobalInit::Int(4));
    assert_eq!(inits[2], &tir::GlobalInit::Int(1));
    assert_eq!(inits[3], &tir::GlobalInit::Int(i32::MIN as i64));
    let ints = |values: &[i64]| values.iter().map(|&v| tir::GlobalInit::Int(v)).collect();
    assert_eq!(
        inits[4],
        &tir::GlobalInit::Array(Ty::I64, ints(&[1, -2, 12]))
    );
    assert_eq!(p.globals[4].ty, Ty::Array(Box::new(Ty::I64)));
    assert_eq!(p.globals[4].linkage, Linkage::Export);
    assert_eq!(p.globals[0].linkage, Linkage::Local);
    assert_eq!(inits[5], &tir::GlobalInit::Str(b"hi".to_vec()));
    assert_eq!(inits[6], &tir::GlobalInit::Null);
    assert_eq!(inits[7], &tir::GlobalInit::Array(Ty::U8, ints(&[97, 255])));
    assert_eq!(inits[8], &tir::GlobalInit::Int(0));
    assert_eq!(
        inits[9],
        &tir::GlobalInit::Array(
            Ty::Str,
            vec![
                tir::GlobalInit::Str(b"one".to_vec()),
                tir::GlobalInit::Null,
                tir::GlobalInit::Str(b"two".to_vec())
            ]
        )
    );
    assert_eq!(
        inits[10],
        &tir::GlobalInit::Array(Ty::Struct(tir::StructId(0)), vec![tir::GlobalInit::Null; 2])
    );
    assert_eq!(p.globals[0].name, "main::a");
    assert_eq!(p.modules[0].globals.len(), 11);
}

#[test]
fn externs_and_builtins() {
    let p = ok("extern fn putchar(c: i32) -> i32;
        extern fn abs(x: i32) -> i32;
        fn main() { putchar(65); print(abs(-3)); print_str(\"x\\n\"); exit(0); }");
    assert_eq!(p.externs.len(), 2);
    assert_eq!(p.externs[0].name, "putchar");
    assert_eq!(p.externs[0].params, [Ty::I32]);
    let m = func(&p, "main");
    assert!(
        matches!(&m.body.stmts[0], Stmt::Expr(e) if matches!(e.kind, ExprKind::CallExtern(..)))
    );
}

// ---- generics -------------------------------------------------------------------

const GENERIC_EXAMPLE: &str = "
fn max<T>(a: T, b: T) -> T { if a > b { a } else { b } }
fn scale<const K: i64>(x: i64) -> i64 { x * K }
fn sum_by<f: fn(i64) -> i64>(xs: [i64]) -> i64 {
    let mut s = 0;
    for i in 0..len(xs) { s = s + f(xs[i]); }
    s
}
fn main() { let a = new [i64; 3]; a[1] = 5; print(sum_by<scale<3>>(a)); print(max(2, 7)); print(max<i32>(1, 2)); }
";

#[test]
fn generic_kinds_and_symbols() {
    let p = ok(GENERIC_EXAMPLE);
    assert_eq!(
        symbols(&p),
        [
            "main",
            "main::scale<3>",
            "main::sum_by<main::scale<3>>",
            "main::max<i64>",
            "main::max<i32>"
        ]
    );
    let inst = func(&p, "main::sum_by<main::scale<3>>");
    assert!(inst.is_instance);
    assert_eq!(inst.linkage, Linkage::Local);
    let scale = func(&p, "main::scale<3>");
    let ExprKind::Binary(_, _, k) = &scale.body.tail.as_ref().unwrap().kind else {
        panic!()
    };
    assert!(matches!(k.kind, ExprKind::Const(3)));
    let maxi32 = func(&p, "main::max<i32>");
    assert_eq!(maxi32.ret, Ty::I32);
    assert_eq!(
        emit_symbols(&p, 0),
        [
            "main",
            "main::sum_by<main::scale<3>>",
            "main::max<i64>",
            "main::max<i32>",
            "main::scale<3>"
        ]
    );
}

#[test]
fn instances_are_memoized() {
    let p = ok("fn id<T>(x: T) -> T { x }
        fn main() { print(id(1)); print(id(2)); print(id<i64>(3)); print(id(true)); }");
    assert_eq!(symbols(&p), ["main", "main::id<i64>", "main::id<bool>"]);
}

#[test]
fn character_literals_are_generic_arguments() {
    let p = ok("fn count<const C: u8>(s: str) -> i64 {
            let mut n = 0; for i in 0..len(s) { if s[i] == C { n += 1; } } n
        }
        fn main() { print(count<'l'>(\"hello\")); print(count<108>(\"hello\")); print(count<('o')>(\"hello\")); }");
    assert_eq!(
        symbols(&p),
        ["main", "main::count<108>", "main::count<111>"]
    );
}

#[test]
fn inference_through_arrays_and_literal_args() {
    let p = ok("fn first<T>(xs: [T], d: T) -> T { if len(xs) > 0 { xs[0] } else { d } }
        fn main() { let a = new [u8; 2]; print(first(a, 9)); let s = new [[i32]; 1]; let z = first(s, null); }");
    assert!(symbols(&p).contains(&"main::first<u8>"));
    assert!(symbols(&p).contains(&"main::first<[i32]>"));
}

#[test]
fn const_params_arithmetic_bool_and_negative() {
    let p = ok(
        "fn pow<const N: i64>(x: i64) -> i64 { let mut r = 1; for i in 0..N { r *= x; } r }
        fn cube<const N: i64>(x: i64) -> i64 { pow<(N + 2)>(x) }
        fn flag<const B: bool, const K: u8>() -> u8 { if B { K } else { 0 } }
        fn neg<const K: i32>() -> i32 { K }
        fn main() { print(cube<1>(2)); print(flag<true, {255 + 2}>()); print(neg<-3>()); }",
    );
    let syms = symbols(&p);
    for s in [
        "main::cube<1>",
        "main::pow<3>",
        "main::flag<true,1>",
        "main::neg<-3>",
    ] {
        assert!(syms.contains(&s), "{s} missing from {syms:?}");
    }
}

#[test]
fn fn_params_passed_through_and_generic_fn_args() {
    let p = ok("fn inc(x: i64) -> i64 { x + 1 }
        fn twice<f: fn(i64) -> i64>(x: i64) -> i64 { f(f(x)) }
        fn apply<g: fn(i64) -> i64>(x: i64) -> i64 { twice<g>(x) }
        fn add<const K: i64>(x: i64) -> i64 { x + K }
        fn wrap<T, h: fn(T) -> T>(x: T) -> T { h(x) }
        fn main() { print(apply<inc>(1)); print(twice<add<5>>(1)); print(wrap<i64, inc>(3)); }");
    let syms = symbols(&p);
    assert!(syms.contains(&"main::apply<main::inc>"));
    assert!(syms.contains(&"main::twice<main::inc>"));
    assert!(syms.contains(&"main::twice<main::add<5>>"));
    assert!(syms.contains(&"main::wrap<i64,main::inc>"));
    let t = func(&p, "main::twice<main::inc>");
    let ExprKind::Call(callee, _) = &t.body.tail.as_ref().unwrap().kind else {
        panic!()
    };
    assert_eq!(p.func(*callee).symbol, "main::inc");
}

#[test]
fn uninstantiated_generics_are_not_type_checked() {
    ok("fn bad<T>(x: T) -> T { x + true }
        fn main() { }");
    // ...but their names are resolved.
    let errs = errors(
        "fn bad<T>(x: T) -> T { nothing(x) }
        fn main() { }",
    );
    assert!(
        errs.iter()
            .any(|e| e.contains("cannot find function `nothing`")),
        "{errs:?}"
    );
}

// ---- modules ----------------------------------------------------------------------

#[test]
fn multi_module_program_emit_and_linkage() {
    let main = "import util;
        fn helper(x: i64) -> i64 { x }
        fn main() {
            let p = new util::Point { x: 1, y: 2 };
            print(util::square(p.x));
            print(util::gmax(3, 4));
            print(util::counter);
            print(helper(1));
        }";
    let util = "pub struct Point { x: i64, y: i64 }
        pub global counter: i64 = 5;
        global hidden: i64 = 1;
        fn private_helper(x: i64) -> i64 { x + hidden }
        pub fn square(x: i64) -> i64 { private_helper(x) * x }
        pub fn gmax<T>(a: T, b: T) -> T { if a > b { private_helper(0); a } else { b } }
        fn unused() { }";
    let p = ok_multi(&[("main", main), ("util", util)]);
    assert_eq!(p.structs[0].name, "util::Point");
    assert_eq!(
        emit_symbols(&p, 0),
        ["main::helper", "main", "util::gmax<i64>"]
    );
    assert_eq!(
        emit_symbols(&p, 1),
        ["util::private_helper", "util::square", "util::unused"]
    );
    // The instance emitted in `main` calls util's private helper: exported.
    assert_eq!(func(&p, "util::private_helper").linkage, Linkage::Export);
    assert_eq!(func(&p, "util::square").linkage, Linkage::Export);
    assert_eq!(func(&p, "util::unused").linkage, Linkage::Local);
    assert_eq!(func(&p, "main::helper").linkage, Linkage::Local);
    assert_eq!(func(&p, "util::gmax<i64>").linkage, Linkage::Local);
    let hidden = p.globals.iter().find(|g| g.name == "util::hidden").unwrap();
    assert_eq!(hidden.linkage, Linkage::Local);
    assert_eq!(p.modules[1].name, "util");
}

#[test]
fn instance_used_by_two_modules_is_emitted_in_both() {
    let a = "import b; fn id<T>(x: T) -> T { x } pub fn use_id() -> i64 { id(1) } fn main() { print(b::g()); print(use_id()); }";
    let b = "import a; pub fn g() -> i64 { a::use_id() + a::pid(2) }";
    let (p, diags, sources) = check(&[("a", a), ("b", b)]);
    // `a::pid` does not exist.
    assert!(p.is_none());
    assert!(diags
        .render(&sources)
        .contains("cannot find function or global `pid` in module `a`"));
    let a = "import b; pub fn id<T>(x: T) -> T { x } pub fn use_id() -> i64 { id(1) } fn main() { print(b::g()); print(use_id()); }";
    let b = "import a; pub fn g() -> i64 { a::id<i64>(2) + a::id(3) }";
    let p = ok_multi(&[("a", a), ("b", b)]);
    assert_eq!(emit_symbols(&p, 0), ["a::use_id", "main", "a::id<i64>"]);
    assert_eq!(emit_symbols(&p, 1), ["b::g", "a::id<i64>"]);
}

#[test]
fn cyclic_imports_and_mutual_recursion() {
    let a = "import b; pub fn even(n: i64) -> bool { if n == 0 { true } else { b::odd(n - 1) } } fn main() { print(even(10)); }";
    let b = "import a; pub fn odd(n: i64) -> bool { if n == 0 { false } else { a::even(n - 1) } }";
    ok_multi(&[("a", a), ("b", b)]);
}

#[test]
fn generic_from_other_module_with_fn_arg() {
    let main = "import util; fn dbl(x: i64) -> i64 { x * 2 } fn main() { let a = new [i64; 2]; print(util::sum_by<dbl>(a)); print(util::sum_by<util::scale<3>>(a)); }";
    let util = "pub fn scale<const K: i64>(x: i64) -> i64 { x * K }
        pub fn sum_by<f: fn(i64) -> i64>(xs: [i64]) -> i64 { let mut s = 0; for i in 0..len(xs) { s += f(xs[i]); } s }";
    let p = ok_multi(&[("main", main), ("util", util)]);
    assert!(symbols(&p).contains(&"util::sum_by<main::dbl>"));
    assert!(symbols(&p).contains(&"util::sum_by<util::scale<3>>"));
    // main::dbl is only called from an instance emitted in main: stays local.
    assert_eq!(func(&p, "main::dbl").linkage, Linkage::Local);
}

// ---- errors ---------------------------------------------------------------------------

#[test]
fn error_type_mismatch() {
    assert_error(
        "fn main() { let x: i64 = true; }",
        "mismatched types: expected `i64`, found `bool`",
    );
    assert_error(
        "fn main() { let x = 1i32 + 2i64; }",
        "mismatched types: expected `i32`, found `i64`",
    );
    assert_error(
        "fn f(x: u8) { } fn main() { f(1i64); }",
        "expected `u8`, found `i64`",
    );
    assert_error("fn main() { if 1 { } }", "expected `bool`, found `i64`");
    assert_error(
        "fn main() { let x = if true { 1 } else { false }; }",
        "`if` and `else` have incompatible types",
    );
    assert_error(
        "fn main() { let x = null; }",
        "cannot infer the type of `null`",
    );
    assert_error("fn main() { let x = print(1); }", "cannot be stored");
    assert_error(
        "fn main() { let x = true + true; }",
        "cannot apply binary operator `+` to type `bool`",
    );
    assert_error(
        "fn main() { let x = -true; }",
        "cannot apply unary operator `-`",
    );
    assert_error(
        "fn main() { let x = \"a\" as i64; }",
        "invalid cast from `str` to `i64`",
    );
    assert_error("fn main() { let x = 1 as bool; }", "invalid cast");
    assert_error("fn main() { print(\"a\"); }", "`print` cannot print");
    assert_error(
        "fn main() { let x = 5; x.y; }",
        "no field `y` on type `i64`",
    );
    assert_error(
        "fn main() { let x = 5; x[0]; }",
        "cannot index into a value of type `i64`",
    );
}

#[test]
fn error_unknown_names() {
    assert_error(
        "fn main() { foo(1); }",
        "cannot find function `foo` in this scope",
    );
    assert_error(
        "fn main() { print(x); }",
        "cannot find value `x` in this scope",
    );
    assert_error(
        "fn main() { let x: Foo = null; }",
        "cannot find type `Foo` in this scope",
    );
    assert_error("fn main() { let p = new Q { }; }", "cannot find struct `Q`");
    assert_error(
        "fn main() { util::f(); }",
        "use of undeclared module `util`",
    );
    assert_error(
        "import nowhere; fn main() { }",
        "unresolved import: no module named `nowhere`",
    );
    assert_error("fn main() { let f = main; }", "is a function, not a value");
}

#[test]
fn error_private_items() {
    let util = "fn secret() -> i64 { 1 } struct S { x: i64 } global g: i64 = 1;";
    for (src, needle) in [
        (
            "import util; fn main() { print(util::secret()); }",
            "function `secret` is private",
        ),
        (
            "import util; fn main() { let s: util::S = null; }",
            "struct `S` is private",
        ),
        (
            "import util; fn main() { print(util::g); }",
            "global `g` is private",
        ),
    ] {
        let errs = errors_multi(&[("main", src), ("util", util)]);
        assert!(
            errs.iter().any(|e| e.contains(needle)),
            "{needle}: {errs:?}"
        );
    }
    // Without the import the module cannot be named.
    let errs = errors_multi(&[
        ("main", "fn main() { print(util::f()); }"),
        ("util", "pub fn f() -> i64 { 1 }"),
    ]);
    assert!(
        errs.iter().any(|e| e.contains("add `import util;`")),
        "{errs:?}"
    );
}

#[test]
fn error_duplicates() {
    assert_error(
        "fn f() { } fn f() { } fn main() { }",
        "the name `f` is defined multiple times",
    );
    assert_error(
        "struct S { } struct S { } fn main() { }",
        "the name `S` is defined multiple times",
    );
    assert_error(
        "global g: i64 = 1; fn g() { } fn main() { }",
        "the name `g` is defined multiple times",
    );
    assert_error(
        "struct S { a: i64, a: bool } fn main() { }",
        "field `a` is already declared",
    );
    assert_error(
        "fn f(a: i64, a: i64) { } fn main() { }",
        "bound more than once",
    );
    assert_error(
        "fn f<T, T>(a: T) { } fn main() { }",
        "already used for a generic parameter",
    );
    let errs = errors_multi(&[("main", "fn main() { }"), ("main", "fn g() { }")]);
    assert!(
        errs.iter()
            .any(|e| e.contains("module `main` is defined multiple times")),
        "{errs:?}"
    );
}

#[test]
fn error_bad_main() {
    assert_error("fn f() { }", "`main` function not found in module `main`");
    assert_error(
        "fn main(x: i64) { }",
        "`main` function has the wrong signature",
    );
    assert_error(
        "fn main() -> bool { true }",
        "`main` function has the wrong signature",
    );
    assert_error(
        "fn main<T>() { }",
        "`main` function is not allowed to have generic parameters",
    );
}

#[test]
fn error_calls() {
    assert_error(
        "fn f(a: i64) { } fn main() { f(1, 2); }",
        "function `f` takes 1 argument but 2 arguments were supplied",
    );
    assert_error(
        "fn main() { print(); }",
        "takes 1 argument but 0 arguments were supplied",
    );
    assert_error("fn main() { len(5); }", "`len` takes an array or `str`");
    assert_error(
        "global g: i64 = 1; fn main() { g(); }",
        "expected function, found global `g`",
    );
    assert_error(
        "extern fn f(s: str); fn main() { }",
        "type `str` is not allowed in an extern function",
    );
    assert_error(
        "fn f() { } fn main() { f<i64>(); }",
        "does not take generic arguments",
    );
}

#[test]
fn error_control_flow() {
    assert_error("fn main() { break; }", "`break` outside of a loop");
    assert_error("fn main() { continue; }", "`continue` outside of a loop");
    assert_error(
        "fn f() -> i64 { } fn main() { }",
        "mismatched types: expected `i64`, found `()`",
    );
    assert_error(
        "fn f(b: bool) -> i64 { if b { return 1; } } fn main() { }",
        "expected `i64`, found `()`",
    );
    assert_error(
        "fn f() -> i64 { return; } fn main() { }",
        "mismatched types: expected `i64`, found `()`",
    );
    assert_error(
        "fn f() { return 1; } fn main() { }",
        "expected `()`, found `i64`",
    );
    assert_error("fn f() { 1 } fn main() { }", "expected `()`, found `i64`");
    assert_error(
        "fn f() -> bool { 1 } fn main() { }",
        "expected `bool`, found `i64`",
    );
}

#[test]
fn error_assignments() {
    assert_error(
        "fn main() { let x = 1; x = 2; }",
        "cannot assign twice to immutable variable `x`",
    );
    assert_error(
        "fn f(a: i64) { a = 2; } fn main() { }",
        "cannot assign to parameter `a`",
    );
    assert_error(
        "fn main() { for i in 0..3 { i = 1; } }",
        "cannot assign to loop variable `i`",
    );
    assert_error(
        "fn main() { let s = \"ab\"; s[0] = 1; }",
        "cannot assign to an element of a `str`",
    );
    assert_error(
        "fn main() { 1 = 2; }",
        "invalid left-hand side of assignment",
    );
    assert_error("fn main() { let mut x = 1; x += true; }", "");
}

#[test]
fn error_structs() {
    assert_error(
        "struct P { x: i64, y: i64 } fn main() { let p = new P { x: 1 }; }",
        "missing field(s) `y` in initializer of `main::P`",
    );
    assert_error(
        "struct P { x: i64 } fn main() { let p = new P { x: 1, x: 2 }; }",
        "field `x` specified more than once",
    );
    assert_error(
        "struct P { x: i64 } fn main() { let p = new P { x: 1, z: 2 }; }",
        "struct `main::P` has no field named `z`",
    );
    assert_error(
        "struct P { x: i64 } fn main() { let p = new P { x: 1 }; print(p.q); }",
        "no field `q` on type `main::P`",
    );
}

#[test]
fn error_globals() {
    assert_error(
        "fn f() -> i64 { 1 } global g: i64 = f(); fn main() { }",
        "not a compile-time constant",
    );
    assert_error(
        "global a: i64 = 1; global b: i64 = a; fn main() { }",
        "not a compile-time constant",
    );
    assert_error(
        "global g: i64 = 1 / 0; fn main() { }",
        "attempt to divide by zero",
    );
    assert_error(
        "global g: [i64; 3] = [1, 2]; fn main() { }",
        "expected an array of 3 elements",
    );
    assert_error(
        "global g: [i64] = [1, 2]; fn main() { }",
        "needs a fixed-size array type",
    );
    assert_error(
        "struct P { x: i64 } global g: [P; 1] = [new P { x: 1 }]; fn main() { }",
        "not a compile-time constant",
    );
    assert_error(
        "global g: [str; 1] = [1]; fn main() { }",
        "mismatched types: expected `str`, found `i64`",
    );
    assert_error(
        "fn main() { let a: [i64; 3] = null; }",
        "fixed-size array types are only allowed",
    );
    assert_error(
        "fn main() { let a = [1, 2]; }",
        "array literals are only allowed",
    );
}

#[test]
fn error_generics() {
    let errs = errors("fn max<T>(a: T, b: T) -> T { if a > b { a } else { b } } fn main() { print(max(true, false)); }");
    assert!(
        errs.iter().any(
            |e| e.contains("cannot apply binary operator `>` to type `bool`")
                && e.contains("in instance `main::max<bool>`")
        ),
        "{errs:?}"
    );
    assert_error(
        "fn s<const K: i64>() { } fn main() { s<i64>(); }",
        "expected a constant as generic argument",
    );
    assert_error(
        "fn s<T>() { } fn main() { s<3>(); }",
        "expected a type as generic argument",
    );
    assert_error(
        "fn s<T>(x: T) { } fn main() { s<i64, i64>(1); }",
        "takes 1 generic argument but 2 were supplied",
    );
    assert_error(
        "fn s<const K: i64>() { } fn main() { s(); }",
        "cannot infer the generic arguments",
    );
    assert_error(
        "fn s<T>() { } fn main() { s(); }",
        "cannot infer type for type parameter `T`",
    );
    assert_error(
        "fn g(x: i32) -> i32 { x } fn h<f: fn(i64) -> i64>() { } fn main() { h<g>(); }",
        "mismatched function signature: expected `fn(i64) -> i64`, found `fn(i32) -> i32`",
    );
    assert_error(
        "fn h<f: fn(i64) -> i64>() { } fn main() { h<nope>(); }",
        "cannot find function `nope`",
    );
    assert_error(
        "fn s<const K: u8>() { } fn main() { let x: u8 = 1; s<x>(); }",
        "not a compile-time constant",
    );
    assert_error(
        "fn s<const K: i64>() { } fn main() { s<(1 / 0)>(); }",
        "attempt to divide by zero",
    );
}

#[test]
fn error_unbounded_generic_recursion() {
    let errs = errors("fn f<const N: i64>() { f<(N + 1)>(); } fn main() { f<0>(); }");
    assert_eq!(
        errs.iter()
            .filter(|e| e.contains("instantiation depth limit exceeded"))
            .count(),
        1,
        "{errs:?}"
    );
    let errs = errors("fn g<T>(x: T) { g<[T]>(null); } fn main() { g(1); }");
    assert!(
        errs.iter()
            .any(|e| e.contains("instantiation depth limit exceeded")),
        "{errs:?}"
    );
}

#[test]
fn several_errors_are_reported_without_cascades() {
    let errs = errors(
        "fn main() {
        let a: i64 = true;
        let b = undefined_thing + 1;
        let c = b * 2;
        foo();
        let d: bool = 3;
    }",
    );
    assert_eq!(errs.len(), 4, "{errs:#?}");
}

#[test]
fn error_branching_generic_recursion_terminates() {
    let errs =
        errors("fn f<const N: i64>() { f<(N * 2)>(); f<(N * 2 + 1)>(); } fn main() { f<1>(); }");
    assert!(
        errs.iter()
            .any(|e| e.contains("too many generic instances") || e.contains("depth limit")),
        "{errs:?}"
    );
}

#[test]
fn globals_may_refer_to_later_globals_only_to_be_rejected() {
    assert_error(
        "global b: i64 = c; global c: i64 = 1; fn main() { }",
        "not a compile-time constant",
    );
}

#[test]
fn errors_after_bad_struct_literal_are_still_reported() {
    let errs = errors("struct P { x: i64 } fn main() { let a = new P { }; print(a.w); }");
    assert_eq!(errs.len(), 2, "{errs:?}");
}

#[test]
fn long_operator_chains_do_not_overflow_the_stack() {
    let chain = vec!["1"; 250].join(" + ");
    let p = ok(&format!("fn main() {{ let x = {chain}; print(x); }}"));
    assert_eq!(let_init(func(&p, "main"), "x").ty, Ty::I64);
}

#[test]
fn untyped_if_and_block_operands_take_the_other_side_type() {
    let p = ok("fn max<T>(a: T, b: T) -> T { if a > b { a } else { b } }
        fn main() { let x: i32 = 1; let c = true; let y = if c { 1 } else { 2 } + x; let z = max({ 3 }, x); print(y); print(z); }");
    assert_eq!(let_init(func(&p, "main"), "y").ty, Ty::I32);
    assert!(symbols(&p).contains(&"main::max<i32>"));
}

#[test]
fn argument_independent_instance_errors_are_reported_once() {
    let errs = errors("fn f<T>(x: T) { let y: i64 = true; } fn main() { f(1); f(true); f(2u8); }");
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(errs[0].contains("in instance `main::f<i64>`"));
}

#[test]
fn uninstantiated_generics_resolve_generic_argument_names() {
    let errs = errors(
        "fn h<f: fn(i64) -> i64>(x: i64) -> i64 { f(x) }
        fn g<T>(x: i64) -> i64 { h<nope>(x) + h<T>(x) }
        fn main() { }",
    );
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(
        errs[0].contains("cannot find `nope` in this scope"),
        "{errs:?}"
    );
}

#[test]
fn no_modules_is_an_error() {
    let mut diags = Diagnostics::default();
    assert!(check_program(&[], &mut diags).is_none());
    assert!(diags.has_errors());
}
