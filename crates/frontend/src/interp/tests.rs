//! Unit tests: small TIR programs built by hand.

use super::*;
use crate::source::Span;
use crate::tir::*;

// ---- TIR constructors -------------------------------------------------------

fn ex(kind: ExprKind, ty: Ty) -> Expr {
    Expr {
        kind,
        ty,
        span: Span::default(),
    }
}
fn k(ty: Ty, v: i64) -> Expr {
    let v = ops::normalize(&ty, v);
    ex(ExprKind::Const(v), ty)
}
fn int(v: i64) -> Expr {
    k(Ty::I64, v)
}
fn boolean(b: bool) -> Expr {
    k(Ty::Bool, b as i64)
}
fn null(ty: Ty) -> Expr {
    ex(ExprKind::Null, ty)
}
fn string(s: &str) -> Expr {
    ex(ExprKind::Str(s.as_bytes().to_vec()), Ty::Str)
}
fn bin(op: BinOp, l: Expr, r: Expr) -> Expr {
    let ty = if op.is_comparison() {
        Ty::Bool
    } else {
        l.ty.clone()
    };
    ex(ExprKind::Binary(op, Box::new(l), Box::new(r)), ty)
}
fn un(op: UnOp, x: Expr) -> Expr {
    let ty = x.ty.clone();
    ex(ExprKind::Unary(op, Box::new(x)), ty)
}
fn logical(op: Logical, l: Expr, r: Expr) -> Expr {
    ex(ExprKind::Logical(op, Box::new(l), Box::new(r)), Ty::Bool)
}
fn cast(x: Expr, ty: Ty) -> Expr {
    ex(ExprKind::Cast(Box::new(x)), ty)
}
fn local(id: u32, ty: Ty) -> Expr {
    ex(ExprKind::Local(LocalId(id)), ty)
}
fn global(id: u32, ty: Ty) -> Expr {
    ex(ExprKind::Global(GlobalId(id)), ty)
}
fn call(f: u32, args: Vec<Expr>, ty: Ty) -> Expr {
    ex(ExprKind::Call(FuncId(f), args), ty)
}
fn call_extern(f: u32, args: Vec<Expr>, ty: Ty) -> Expr {
    ex(ExprKind::CallExtern(ExternId(f), args), ty)
}
fn builtin(b: Builtin, arg: Expr, ty: Ty) -> Expr {
    ex(ExprKind::Builtin(b, vec![arg]), ty)
}
fn len(x: Expr) -> Expr {
    builtin(Builtin::Len, x, Ty::I64)
}
fn field(base: Expr, s: u32, f: u32, ty: Ty) -> Expr {
    ex(ExprKind::Field(Box::new(base), StructId(s), f), ty)
}
fn index(base: Expr, i: Expr) -> Expr {
    let ty = match &base.ty {
        Ty::Array(elem) => (**elem).clone(),
        _ => Ty::U8,
    };
    ex(ExprKind::Index(Box::new(base), Box::new(i)), ty)
}
fn new_array(elem: Ty, n: Expr) -> Expr {
    let ty = Ty::Array(Box::new(elem.clone()));
    ex(ExprKind::NewArray(elem, Box::new(n)), ty)
}
fn new_struct(s: u32, inits: Vec<(u32, Expr)>) -> Expr {
    ex(
        ExprKind::NewStruct(StructId(s), inits),
        Ty::Struct(StructId(s)),
    )
}
fn if_else(c: Expr, then: Block, otherwise: Option<Block>) -> Expr {
    let ty = if otherwise.is_some() {
        then.ty.clone()
    } else {
        Ty::Unit
    };
    ex(ExprKind::If(Box::new(c), then, otherwise), ty)
}
fn block(stmts: Vec<Stmt>, tail: Option<Expr>) -> Block {
    let ty = tail.as_ref().map_or(Ty::Unit, |t| t.ty.clone());
    Block {
        stmts,
        tail: tail.map(Box::new),
        ty,
    }
}
fn arr(elem: Ty) -> Ty {
    Ty::Array(Box::new(elem))
}

fn print(x: Expr) -> Stmt {
    Stmt::Expr(builtin(Builtin::Print, x, Ty::Unit))
}
fn print_str(x: Expr) -> Stmt {
    Stmt::Expr(builtin(Builtin::PrintStr, x, Ty::Unit))
}
fn exit(code: Expr) -> Stmt {
    Stmt::Expr(builtin(Builtin::Exit, code, Ty::Never))
}
fn let_(id: u32, e: Expr) -> Stmt {
    Stmt::Let(LocalId(id), e)
}
fn set(id: u32, e: Expr) -> Stmt {
    Stmt::Assign(Place::Local(LocalId(id)), e)
}
fn expr(e: Expr) -> Stmt {
    Stmt::Expr(e)
}
fn if_stmt(c: Expr, then: Vec<Stmt>) -> Stmt {
    Stmt::Expr(if_else(c, block(then, None), None))
}
fn while_(c: Expr, body: Vec<Stmt>) -> Stmt {
    Stmt::While(c, block(body, None))
}
fn for_(var: u32, start: Expr, end: Expr, body: Vec<Stmt>) -> Stmt {
    Stmt::For {
        var: LocalId(var),
        start,
        end,
        body: block(body, None),
    }
}

fn func(symbol: &str, params: Vec<Ty>, locals: Vec<Ty>, ret: Ty, body: Block) -> Func {
    let num_params = params.len() as u32;
    let locals = params
        .into_iter()
        .chain(locals)
        .enumerate()
        .map(|(i, ty)| Local {
            name: format!("v{i}"),
            ty,
            mutable: true,
        })
        .collect();
    Func {
        symbol: symbol.into(),
        module: ModuleId(0),
        num_params,
        locals,
        ret,
        body,
        is_instance: false,
        is_main: false,
        linkage: Linkage::Local,
        span: Span::default(),
    }
}

/// Function 1 of every test program: `fn trace(x: i64) -> i64 { print(x); x }`,
/// to observe evaluation order.
const TRACE: u32 = 1;
fn trace(v: i64) -> Expr {
    call(TRACE, vec![int(v)], Ty::I64)
}

/// A program whose `main` (function 0) has the given locals, return type and body.
fn program(locals: Vec<Ty>, ret: Ty, body: Block) -> Program {
    let mut main = func("main", vec![], locals, ret, body);
    main.is_main = true;
    let trace = func(
        "main::trace",
        vec![Ty::I64],
        vec![],
        Ty::I64,
        block(vec![print(local(0, Ty::I64))], Some(local(0, Ty::I64))),
    );
    Program {
        modules: vec![ModuleInfo {
            name: "main".into(),
            emit: vec![FuncId(0), FuncId(1)],
            globals: vec![],
        }],
        funcs: vec![main, trace],
        main: FuncId(0),
        ..Program::default()
    }
}

fn execute(p: &Program) -> (Exit, String) {
    let mut out = Vec::new();
    let exit = run_with_big_stack(p, &mut out);
    (exit, String::from_utf8(out).unwrap())
}

/// Runs a `main` with `locals` and statements `stmts`.
fn run_stmts(locals: Vec<Ty>, stmts: Vec<Stmt>) -> (Exit, String) {
    execute(&program(locals, Ty::Unit, block(stmts, None)))
}

/// The printed value of `e`, or how the program ended instead.
fn value(e: Expr) -> Result<String, Exit> {
    match run_stmts(vec![], vec![print(e)]) {
        (Exit::Status(0), out) => Ok(out.trim_end().to_string()),
        (exit, _) => Err(exit),
    }
}

fn binop(op: BinOp, ty: Ty, a: i64, b: i64) -> Result<String, Exit> {
    value(bin(op, k(ty.clone(), a), k(ty, b)))
}

fn ok(s: &str) -> Result<String, Exit> {
    Ok(s.to_string())
}
fn trap(kind: TrapKind) -> Result<String, Exit> {
    Err(Exit::Trap(kind))
}

// ---- operators --------------------------------------------------------------

#[test]
fn arithmetic_wraps_per_type() {
    use BinOp::*;
    assert_eq!(binop(Add, Ty::I64, i64::MAX, 1), ok("-9223372036854775808"));
    assert_eq!(binop(Sub, Ty::I64, i64::MIN, 1), ok("9223372036854775807"));
    assert_eq!(binop(Mul, Ty::I64, 1 << 62, 4), ok("0"));
    assert_eq!(binop(Add, Ty::I32, i32::MAX as i64, 1), ok("-2147483648"));
    assert_eq!(binop(Sub, Ty::I32, i32::MIN as i64, 1), ok("2147483647"));
    assert_eq!(binop(Mul, Ty::I32, 65536, 65536), ok("0"));
    assert_eq!(binop(Mul, Ty::I32, 65535, 65537), ok("-1"));
    assert_eq!(binop(Add, Ty::U8, 200, 100), ok("44"));
    assert_eq!(binop(Sub, Ty::U8, 1, 2), ok("255"));
    assert_eq!(binop(Mul, Ty::U8, 16, 17), ok("16"));
    assert_eq!(binop(Add, Ty::I64, 2, 3), ok("5"));
}

#[test]
fn division_and_remainder() {
    use BinOp::*;
    for ty in [Ty::I64, Ty::I32] {
        assert_eq!(binop(Div, ty.clone(), 7, 2), ok("3"));
        assert_eq!(binop(Div, ty.clone(), -7, 2), ok("-3"));
        assert_eq!(binop(Div, ty.clone(), 7, -2), ok("-3"));
        assert_eq!(binop(Rem, ty.clone(), -7, 2), ok("-1"));
        assert_eq!(binop(Rem, ty.clone(), 7, -2), ok("1"));
        assert_eq!(binop(Div, ty.clone(), 1, 0), trap(TrapKind::DivisionByZero));
        assert_eq!(binop(Rem, ty.clone(), 1, 0), trap(TrapKind::DivisionByZero));
    }
    assert_eq!(
        binop(Div, Ty::I64, i64::MIN, -1),
        trap(TrapKind::DivisionOverflow)
    );
    assert_eq!(binop(Rem, Ty::I64, i64::MIN, -1), ok("0"));
    assert_eq!(
        binop(Div, Ty::I32, i32::MIN as i64, -1),
        trap(TrapKind::DivisionOverflow)
    );
    assert_eq!(binop(Rem, Ty::I32, i32::MIN as i64, -1), ok("0"));
    assert_eq!(binop(Div, Ty::I32, i32::MIN as i64, 1), ok("-2147483648"));
    // i64::MIN / -1 is not the i32 minimum: only the i32 one traps for i32.
    assert_eq!(binop(Div, Ty::I64, i32::MIN as i64, -1), ok("2147483648"));
    // u8 division is unsigned.
    assert_eq!(binop(Div, Ty::U8, 200, 3), ok("66"));
    assert_eq!(binop(Rem, Ty::U8, 200, 3), ok("2"));
    assert_eq!(binop(Div, Ty::U8, 255, 255), ok("1"));
    assert_eq!(binop(Div, Ty::U8, 5, 0), trap(TrapKind::DivisionByZero));
    assert_eq!(binop(Rem, Ty::U8, 5, 0), trap(TrapKind::DivisionByZero));
}

#[test]
fn shifts_mask_the_amount() {
    use BinOp::*;
    assert_eq!(binop(Shl, Ty::I64, 1, 65), ok("2"));
    assert_eq!(binop(Shl, Ty::I64, 1, -1), ok("-9223372036854775808"));
    assert_eq!(binop(Shl, Ty::I64, 3, 63), ok("-9223372036854775808"));
    assert_eq!(binop(Shr, Ty::I64, -16, 2), ok("-4"));
    assert_eq!(binop(Shr, Ty::I64, -1, 63), ok("-1"));
    assert_eq!(
        binop(Shr, Ty::I64, i64::MIN, 64),
        ok("-9223372036854775808")
    );
    assert_eq!(binop(Shl, Ty::I32, 1, 33), ok("2"));
    assert_eq!(binop(Shl, Ty::I32, 1, 31), ok("-2147483648"));
    assert_eq!(binop(Shl, Ty::I32, 3, -1), ok("-2147483648"));
    assert_eq!(binop(Shr, Ty::I32, -8, 1), ok("-4"));
    assert_eq!(binop(Shr, Ty::I32, i32::MIN as i64, 31), ok("-1"));
    assert_eq!(binop(Shl, Ty::U8, 1, 9), ok("2"));
    assert_eq!(binop(Shl, Ty::U8, 0xff, 4), ok("240"));
    assert_eq!(binop(Shr, Ty::U8, 0x80, 7), ok("1"));
    assert_eq!(binop(Shr, Ty::U8, 0xff, 1), ok("127"));
    assert_eq!(binop(Shr, Ty::U8, 0xff, 15), ok("1"));
    // The amount may have another integer type than the left operand.
    assert_eq!(
        value(bin(Shl, int(1), k(Ty::U8, 255))),
        ok("-9223372036854775808")
    );
    assert_eq!(
        value(bin(Shl, int(1), k(Ty::I32, -1))),
        ok("-9223372036854775808")
    );
    assert_eq!(value(bin(Shl, k(Ty::I32, 1), int(32 + 4))), ok("16"));
    assert_eq!(value(bin(Shr, k(Ty::U8, 128), k(Ty::I32, -1))), ok("1"));
}

#[test]
fn bitwise_operators() {
    use BinOp::*;
    assert_eq!(binop(And, Ty::I64, 0b1100, 0b1010), ok("8"));
    assert_eq!(binop(Or, Ty::I64, 0b1100, 0b1010), ok("14"));
    assert_eq!(binop(Xor, Ty::I64, 0b1100, 0b1010), ok("6"));
    assert_eq!(binop(Xor, Ty::I32, -1, 1), ok("-2"));
    assert_eq!(binop(Or, Ty::U8, 0xf0, 0x0f), ok("255"));
    assert_eq!(binop(And, Ty::U8, 0xf0, 0x3c), ok("48"));
    assert_eq!(value(un(UnOp::BitNot, k(Ty::U8, 0))), ok("255"));
    assert_eq!(value(un(UnOp::BitNot, k(Ty::I32, 0))), ok("-1"));
    assert_eq!(value(un(UnOp::BitNot, int(5))), ok("-6"));
    assert_eq!(value(un(UnOp::Not, boolean(true))), ok("false"));
    assert_eq!(value(un(UnOp::Not, boolean(false))), ok("true"));
}

#[test]
fn negation_wraps() {
    assert_eq!(
        value(un(UnOp::Neg, int(i64::MIN))),
        ok("-9223372036854775808")
    );
    assert_eq!(
        value(un(UnOp::Neg, k(Ty::I32, i32::MIN as i64))),
        ok("-2147483648")
    );
    assert_eq!(value(un(UnOp::Neg, k(Ty::U8, 1))), ok("255"));
    assert_eq!(value(un(UnOp::Neg, k(Ty::U8, 0))), ok("0"));
    assert_eq!(value(un(UnOp::Neg, int(7))), ok("-7"));
}

#[test]
fn comparisons_signed_and_unsigned() {
    use BinOp::*;
    assert_eq!(binop(Lt, Ty::I64, -1, 0), ok("true"));
    assert_eq!(binop(Lt, Ty::I32, -1, 0), ok("true"));
    assert_eq!(binop(Gt, Ty::U8, 200, 100), ok("true"));
    assert_eq!(binop(Lt, Ty::U8, 255, 0), ok("false"));
    assert_eq!(binop(Le, Ty::I64, 3, 3), ok("true"));
    assert_eq!(binop(Ge, Ty::I32, 2, 3), ok("false"));
    assert_eq!(binop(Eq, Ty::U8, 256, 0), ok("true"));
    assert_eq!(binop(Ne, Ty::I64, 1, 2), ok("true"));
    assert_eq!(binop(Eq, Ty::Bool, 1, 1), ok("true"));
    assert_eq!(binop(Ne, Ty::Bool, 1, 0), ok("true"));
    assert_eq!(value(bin(Eq, null(Ty::Null), null(Ty::Null))), ok("true"));
}

#[test]
fn casts_truncate_and_extend_per_source_type() {
    assert_eq!(value(cast(int(0x1_8000_0000), Ty::I32)), ok("-2147483648"));
    assert_eq!(value(cast(int(300), Ty::U8)), ok("44"));
    assert_eq!(value(cast(int(-1), Ty::U8)), ok("255"));
    assert_eq!(value(cast(k(Ty::I32, -1), Ty::U8)), ok("255"));
    assert_eq!(value(cast(k(Ty::I32, -1), Ty::I64)), ok("-1"));
    assert_eq!(value(cast(k(Ty::U8, 255), Ty::I64)), ok("255"));
    assert_eq!(value(cast(k(Ty::U8, 255), Ty::I32)), ok("255"));
    assert_eq!(value(cast(boolean(true), Ty::I32)), ok("1"));
    assert_eq!(value(cast(boolean(false), Ty::I64)), ok("0"));
    assert_eq!(value(cast(boolean(true), Ty::U8)), ok("1"));
    // Casting back and forth keeps the wrapped value.
    assert_eq!(value(cast(cast(int(-129), Ty::U8), Ty::I32)), ok("127"));
}

#[test]
fn print_formats() {
    let (exit, out) = run_stmts(
        vec![],
        vec![
            print(int(i64::MIN)),
            print(k(Ty::I32, -5)),
            print(k(Ty::U8, 255)),
            print(boolean(true)),
            print(boolean(false)),
            print(int(0)),
            print_str(string("a\tb\n")),
        ],
    );
    assert_eq!(exit, Exit::Status(0));
    assert_eq!(out, "-9223372036854775808\n-5\n255\ntrue\nfalse\n0\na\tb\n");
}

// ---- control flow -----------------------------------------------------------

#[test]
fn logical_operators_short_circuit() {
    let t = |v: i64| bin(BinOp::Ne, trace(v), int(0));
    let (exit, out) = run_stmts(
        vec![],
        vec![
            print(logical(Logical::And, t(0), t(1))),
            print(logical(Logical::And, t(2), t(3))),
            print(logical(Logical::Or, t(4), t(5))),
            print(logical(Logical::Or, t(0), t(0))),
        ],
    );
    assert_eq!(exit, Exit::Status(0));
    assert_eq!(out, "0\nfalse\n2\n3\ntrue\n4\ntrue\n0\n0\nfalse\n");
}

#[test]
fn operands_and_arguments_left_to_right() {
    let mut p = program(
        vec![],
        Ty::Unit,
        block(
            vec![
                print(bin(BinOp::Sub, trace(1), trace(2))),
                print(call(2, vec![trace(3), trace(4), trace(5)], Ty::I64)),
            ],
            None,
        ),
    );
    // fn f(a, b, c) -> i64 { a * 100 + b * 10 + c }
    let body = bin(
        BinOp::Add,
        bin(
            BinOp::Add,
            bin(BinOp::Mul, local(0, Ty::I64), int(100)),
            bin(BinOp::Mul, local(1, Ty::I64), int(10)),
        ),
        local(2, Ty::I64),
    );
    p.funcs.push(func(
        "main::f",
        vec![Ty::I64; 3],
        vec![],
        Ty::I64,
        block(vec![], Some(body)),
    ));
    let (exit, out) = execute(&p);
    assert_eq!(exit, Exit::Status(0));
    assert_eq!(out, "1\n2\n-1\n3\n4\n5\n345\n");
}

#[test]
fn while_with_break_and_continue() {
    // let mut i = 0; while true { i += 1; if i == 3 { continue; } if i > 5 { break; } print(i); }
    let i = || local(0, Ty::I64);
    let (exit, out) = run_stmts(
        vec![Ty::I64],
        vec![
            let_(0, int(0)),
            while_(
                boolean(true),
                vec![
                    set(0, bin(BinOp::Add, i(), int(1))),
                    if_stmt(bin(BinOp::Eq, i(), int(3)), vec![Stmt::Continue]),
                    if_stmt(bin(BinOp::Gt, i(), int(5)), vec![Stmt::Break]),
                    print(i()),
                ],
            ),
            print(i()),
        ],
    );
    assert_eq!(exit, Exit::Status(0));
    assert_eq!(out, "1\n2\n4\n5\n6\n");
}

#[test]
fn for_loops() {
    let i = || local(0, Ty::I64);
    // continue still increments; the end is evaluated once, after the start.
    let (exit, out) = run_stmts(
        vec![Ty::I64],
        vec![for_(
            0,
            trace(10),
            bin(BinOp::Add, trace(5), int(10)),
            vec![
                if_stmt(
                    bin(BinOp::Eq, bin(BinOp::Rem, i(), int(2)), int(0)),
                    vec![Stmt::Continue],
                ),
                if_stmt(bin(BinOp::Eq, i(), int(13)), vec![Stmt::Break]),
                print(i()),
            ],
        )],
    );
    assert_eq!(exit, Exit::Status(0));
    assert_eq!(out, "10\n5\n11\n");

    // No iterations when start >= end.
    let (_, out) = run_stmts(
        vec![Ty::I64],
        vec![for_(0, int(3), int(-3), vec![print(i())])],
    );
    assert_eq!(out, "");

    // u8 bounds: unsigned comparison, up to 255 without wrapping.
    let (_, out) = run_stmts(
        vec![Ty::U8, Ty::I64],
        vec![
            let_(1, int(0)),
            for_(
                0,
                k(Ty::U8, 250),
                k(Ty::U8, 255),
                vec![set(1, bin(BinOp::Add, local(1, Ty::I64), int(1)))],
            ),
            print(local(1, Ty::I64)),
        ],
    );
    assert_eq!(out, "5\n");

    // i32 negative range.
    let (_, out) = run_stmts(
        vec![Ty::I32],
        vec![for_(
            0,
            k(Ty::I32, -2),
            k(Ty::I32, 1),
            vec![print(local(0, Ty::I32))],
        )],
    );
    assert_eq!(out, "-2\n-1\n0\n");

    // Up to i64::MAX without overflow.
    let (exit, out) = run_stmts(
        vec![Ty::I64],
        vec![for_(0, int(i64::MAX - 2), int(i64::MAX), vec![print(i())])],
    );
    assert_eq!(exit, Exit::Status(0));
    assert_eq!(out, "9223372036854775805\n9223372036854775806\n");
}

#[test]
fn nested_loops_break_innermost() {
    // for i in 0..3 { for j in 0..3 { if j == 1 { break; } print(i * 10 + j); } }
    let (_, out) = run_stmts(
        vec![Ty::I64, Ty::I64],
        vec![for_(
            0,
            int(0),
            int(3),
            vec![for_(
                1,
                int(0),
                int(3),
                vec![
                    if_stmt(bin(BinOp::Eq, local(1, Ty::I64), int(1)), vec![Stmt::Break]),
                    print(bin(
                        BinOp::Add,
                        bin(BinOp::Mul, local(0, Ty::I64), int(10)),
                        local(1, Ty::I64),
                    )),
                ],
            )],
        )],
    );
    assert_eq!(out, "0\n10\n20\n");
}

#[test]
fn if_expression_and_blocks() {
    let choose = |c: bool| {
        if_else(
            boolean(c),
            block(vec![], Some(int(1))),
            Some(block(vec![print(int(7))], Some(int(2)))),
        )
    };
    assert_eq!(value(choose(true)), ok("1"));
    assert_eq!(value(choose(false)), ok("7\n2"));
    let b = ex(
        ExprKind::Block(block(vec![print(int(3))], Some(int(4)))),
        Ty::I64,
    );
    assert_eq!(value(b), ok("3\n4"));
}

#[test]
fn return_from_inside_loops() {
    // fn find(n) -> i64 { for i in 0..100 { while true { if i * i > n { return i; } break; } } -1 }
    let mut p = program(
        vec![],
        Ty::Unit,
        block(
            vec![
                print(call(2, vec![int(50)], Ty::I64)),
                print(call(2, vec![int(1 << 20)], Ty::I64)),
            ],
            None,
        ),
    );
    let i = || local(1, Ty::I64);
    let body = block(
        vec![for_(
            1,
            int(0),
            int(100),
            vec![while_(
                boolean(true),
                vec![
                    if_stmt(
                        bin(BinOp::Gt, bin(BinOp::Mul, i(), i()), local(0, Ty::I64)),
                        vec![Stmt::Return(Some(i()))],
                    ),
                    Stmt::Break,
                ],
            )],
        )],
        Some(int(-1)),
    );
    p.funcs.push(func(
        "main::find",
        vec![Ty::I64],
        vec![Ty::I64],
        Ty::I64,
        body,
    ));
    let (exit, out) = execute(&p);
    assert_eq!(exit, Exit::Status(0));
    assert_eq!(out, "8\n-1\n");
}

/// `fn fib(n: i64) -> i64 { if n < 2 { n } else { fib(n - 1) + fib(n - 2) } }`
fn fib_func() -> Func {
    let n = || local(0, Ty::I64);
    let body = if_else(
        bin(BinOp::Lt, n(), int(2)),
        block(vec![], Some(n())),
        Some(block(
            vec![],
            Some(bin(
                BinOp::Add,
                call(2, vec![bin(BinOp::Sub, n(), int(1))], Ty::I64),
                call(2, vec![bin(BinOp::Sub, n(), int(2))], Ty::I64),
            )),
        )),
    );
    func(
        "main::fib",
        vec![Ty::I64],
        vec![],
        Ty::I64,
        block(vec![], Some(body)),
    )
}

#[test]
fn recursion() {
    let mut p = program(
        vec![],
        Ty::Unit,
        block(vec![print(call(2, vec![int(20)], Ty::I64))], None),
    );
    p.funcs.push(fib_func());
    assert_eq!(execute(&p), (Exit::Status(0), "6765\n".to_string()));
}

/// `fn down(n: i64) -> i64 { if n == 0 { 0 } else { down(n - 1) + 1 } }` called
/// with `n`.
fn deep_recursion(n: i64) -> Program {
    let mut p = program(
        vec![],
        Ty::Unit,
        block(vec![print(call(2, vec![int(n)], Ty::I64))], None),
    );
    let arg = local(0, Ty::I64);
    let body = if_else(
        bin(BinOp::Eq, arg.clone(), int(0)),
        block(vec![], Some(int(0))),
        Some(block(
            vec![],
            Some(bin(
                BinOp::Add,
                call(2, vec![bin(BinOp::Sub, arg, int(1))], Ty::I64),
                int(1),
            )),
        )),
    );
    p.funcs.push(func(
        "main::down",
        vec![Ty::I64],
        vec![],
        Ty::I64,
        block(vec![], Some(body)),
    ));
    p
}

#[test]
fn deep_recursion_up_to_the_limit() {
    // main is one frame, so the limit leaves MAX_CALL_DEPTH - 1 for `down`.
    let depth = MAX_CALL_DEPTH as i64 - 2;
    assert_eq!(
        execute(&deep_recursion(depth)),
        (Exit::Status(0), format!("{depth}\n"))
    );
}

#[test]
fn too_deep_recursion_traps() {
    assert_eq!(
        execute(&deep_recursion(MAX_CALL_DEPTH as i64 - 1)),
        (Exit::Trap(TrapKind::StackOverflow), String::new())
    );
}

// ---- exit status -----------------------------------------------------------

#[test]
fn exit_status_from_main_and_exit() {
    assert_eq!(
        execute(&program(
            vec![],
            Ty::I32,
            block(vec![], Some(k(Ty::I32, 300)))
        ))
        .0,
        Exit::Status(44)
    );
    assert_eq!(
        execute(&program(vec![], Ty::I64, block(vec![], Some(int(-1))))).0,
        Exit::Status(255)
    );
    let early = block(
        vec![Stmt::Return(Some(int(7))), print(int(1))],
        Some(int(3)),
    );
    assert_eq!(
        execute(&program(vec![], Ty::I64, early)),
        (Exit::Status(7), String::new())
    );
    assert_eq!(
        run_stmts(vec![], vec![print(int(1))]),
        (Exit::Status(0), "1\n".into())
    );
    assert_eq!(
        run_stmts(
            vec![],
            vec![print(int(1)), exit(k(Ty::I32, 258)), print(int(2))]
        ),
        (Exit::Status(2), "1\n".into())
    );
    assert_eq!(
        run_stmts(vec![], vec![exit(k(Ty::I32, -1))]).0,
        Exit::Status(255)
    );
    // exit from a nested call ends the whole program.
    let mut p = program(
        vec![],
        Ty::Unit,
        block(vec![expr(call(2, vec![], Ty::Unit)), print(int(9))], None),
    );
    p.funcs.push(func(
        "main::quit",
        vec![],
        vec![],
        Ty::Unit,
        block(vec![exit(k(Ty::I32, 3))], None),
    ));
    assert_eq!(execute(&p), (Exit::Status(3), String::new()));
}

// ---- externs ----------------------------------------------------------------

fn with_externs(body: Vec<Stmt>) -> Program {
    let mut p = program(vec![], Ty::Unit, block(body, None));
    let ext = |name: &str, params: Vec<Ty>, ret: Ty| ExternDef {
        name: name.into(),
        params,
        ret,
        span: Span::default(),
    };
    p.externs = vec![
        ext("putchar", vec![Ty::I32], Ty::I32),
        ext("getchar", vec![], Ty::I32),
        ext("abs", vec![Ty::I32], Ty::I32),
        ext("labs", vec![Ty::I64], Ty::I64),
        ext("exit", vec![Ty::I32], Ty::Unit),
        ext("puts", vec![Ty::I64], Ty::I32),
    ];
    p
}

#[test]
fn implemented_externs() {
    let p = with_externs(vec![
        print(call_extern(0, vec![k(Ty::I32, 72)], Ty::I32)),
        print(call_extern(0, vec![k(Ty::I32, 256 + 10)], Ty::I32)),
        print(call_extern(1, vec![], Ty::I32)),
        print(call_extern(2, vec![k(Ty::I32, -5)], Ty::I32)),
        print(call_extern(2, vec![k(Ty::I32, i32::MIN as i64)], Ty::I32)),
        print(call_extern(3, vec![int(-1 << 40)], Ty::I64)),
        expr(call_extern(4, vec![k(Ty::I32, 513)], Ty::Unit)),
        print(int(99)),
    ]);
    assert_eq!(
        execute(&p),
        (
            Exit::Status(1),
            "H72\n\n10\n-1\n5\n-2147483648\n1099511627776\n".into()
        )
    );
}

#[test]
fn unavailable_extern_is_an_error_after_its_arguments() {
    let p = with_externs(vec![
        print(int(1)),
        print(call_extern(5, vec![trace(2)], Ty::I32)),
    ]);
    assert_eq!(
        execute(&p),
        (
            Exit::Error("extern function `puts` is not available in the interpreter".into()),
            "1\n2\n".into()
        )
    );
}

// ---- heap: arrays, structs, strings, globals -------------------------------

#[test]
fn arrays_are_zero_filled_per_element_type() {
    let a = |id: u32, ty: Ty| local(id, arr(ty));
    let (exit, out) = run_stmts(
        vec![
            arr(Ty::I64),
            arr(Ty::I32),
            arr(Ty::U8),
            arr(Ty::Bool),
            arr(arr(Ty::I64)),
        ],
        vec![
            let_(0, new_array(Ty::I64, int(3))),
            let_(1, new_array(Ty::I32, int(3))),
            let_(2, new_array(Ty::U8, k(Ty::U8, 3))),
            let_(3, new_array(Ty::Bool, int(3))),
            let_(4, new_array(arr(Ty::I64), int(3))),
            print(index(a(0, Ty::I64), int(2))),
            print(index(a(1, Ty::I32), int(2))),
            print(index(a(2, Ty::U8), int(2))),
            print(index(a(3, Ty::Bool), int(2))),
            print(bin(
                BinOp::Eq,
                index(a(4, arr(Ty::I64)), int(2)),
                null(arr(Ty::I64)),
            )),
            print(len(a(4, arr(Ty::I64)))),
            print(len(new_array(Ty::U8, int(0)))),
        ],
    );
    assert_eq!(exit, Exit::Status(0));
    assert_eq!(out, "0\n0\n0\nfalse\ntrue\n3\n0\n");
}

#[test]
fn array_elements_keep_their_type() {
    let place =
        |id: u32, ty: Ty, i: i64| Place::Index(Box::new(local(id, arr(ty))), Box::new(int(i)));
    let (exit, out) = run_stmts(
        vec![arr(Ty::I32), arr(Ty::U8), arr(Ty::I64)],
        vec![
            let_(0, new_array(Ty::I32, int(2))),
            let_(1, new_array(Ty::U8, int(2))),
            let_(2, new_array(Ty::I64, int(2))),
            Stmt::Assign(place(0, Ty::I32, 1), k(Ty::I32, -7)),
            Stmt::Assign(place(1, Ty::U8, 0), k(Ty::U8, 250)),
            Stmt::Assign(place(2, Ty::I64, 1), int(i64::MIN)),
            print(index(local(0, arr(Ty::I32)), int(1))),
            print(index(local(1, arr(Ty::U8)), k(Ty::U8, 0))),
            print(index(local(2, arr(Ty::I64)), k(Ty::I32, 1))),
            // Aliasing: another reference to the same array sees the write.
            print(bin(
                BinOp::Eq,
                local(0, arr(Ty::I32)),
                local(0, arr(Ty::I32)),
            )),
            print(bin(
                BinOp::Eq,
                new_array(Ty::I64, int(1)),
                new_array(Ty::I64, int(1)),
            )),
        ],
    );
    assert_eq!(exit, Exit::Status(0));
    assert_eq!(out, "-7\n250\n-9223372036854775808\ntrue\nfalse\n");
}

#[test]
fn array_traps() {
    let a = || local(0, arr(Ty::I64));
    let with_array = |stmt: Stmt| {
        run_stmts(
            vec![arr(Ty::I64)],
            vec![let_(0, new_array(Ty::I64, int(3))), stmt],
        )
        .0
    };
    assert_eq!(
        with_array(print(index(a(), int(3)))),
        Exit::Trap(TrapKind::IndexOutOfBounds)
    );
    assert_eq!(
        with_array(print(index(a(), int(-1)))),
        Exit::Trap(TrapKind::IndexOutOfBounds)
    );
    assert_eq!(
        with_array(print(index(a(), int(i64::MIN)))),
        Exit::Trap(TrapKind::IndexOutOfBounds)
    );
    let write = |i: i64| Stmt::Assign(Place::Index(Box::new(a()), Box::new(int(i))), int(1));
    assert_eq!(with_array(write(3)), Exit::Trap(TrapKind::IndexOutOfBounds));
    assert_eq!(with_array(write(2)), Exit::Status(0));
    let null_array = || null(arr(Ty::I64));
    assert_eq!(
        value(index(null_array(), int(0))),
        Err(Exit::Trap(TrapKind::NullDereference))
    );
    assert_eq!(
        value(len(null_array())),
        Err(Exit::Trap(TrapKind::NullDereference))
    );
    let null_write = Stmt::Assign(
        Place::Index(Box::new(null_array()), Box::new(int(0))),
        int(1),
    );
    assert_eq!(
        run_stmts(vec![], vec![null_write]).0,
        Exit::Trap(TrapKind::NullDereference)
    );
    // The null check comes before the bounds check.
    assert_eq!(
        value(index(null_array(), int(-1))),
        Err(Exit::Trap(TrapKind::NullDereference))
    );
}

#[test]
fn allocation_traps() {
    assert_eq!(
        value(len(new_array(Ty::I64, int(-1)))),
        Err(Exit::Trap(TrapKind::NegativeLength))
    );
    assert_eq!(
        value(len(new_array(Ty::U8, int(i64::MIN)))),
        Err(Exit::Trap(TrapKind::NegativeLength))
    );
    // 8 + len * 8 overflows.
    assert_eq!(
        value(len(new_array(Ty::I64, int(1 << 61)))),
        Err(Exit::Trap(TrapKind::OutOfMemory))
    );
    assert_eq!(
        value(len(new_array(Ty::U8, int(i64::MAX)))),
        Err(Exit::Trap(TrapKind::OutOfMemory))
    );
    // More than the allocator can give (2^62 bytes): `mmap` or `calloc`
    // fails in compiled code, the allocation here.
    assert_eq!(
        value(len(new_array(Ty::I64, int(1 << 59)))),
        Err(Exit::Trap(TrapKind::OutOfMemory))
    );
    // A large allocation costs only what is touched, and the interpreter
    // has no limit of its own (it had one at 4 GiB; compiled code runs
    // these): 4 GiB in one array, and five 1 GiB arrays.
    assert_eq!(
        value(len(new_array(Ty::U8, int(4294967295)))),
        ok("4294967295")
    );
    let (exit, out) = run_stmts(
        vec![Ty::I64, arr(Ty::U8)],
        vec![for_(
            0,
            int(0),
            int(5),
            vec![
                let_(1, new_array(Ty::U8, int(1 << 30))),
                print(local(0, Ty::I64)),
            ],
        )],
    );
    assert_eq!(exit, Exit::Status(0));
    assert_eq!(out, "0\n1\n2\n3\n4\n");
}

#[test]
fn index_assignment_evaluation_order() {
    // a[i] = e evaluates a, i, e, then checks null, then bounds.
    let arr_from_trace = |v: i64, a: Expr| {
        ex(
            ExprKind::Block(block(vec![expr(trace(v))], Some(a))),
            arr(Ty::I64),
        )
    };
    let assign = |a: Expr, i: i64| {
        Stmt::Assign(
            Place::Index(Box::new(arr_from_trace(1, a)), Box::new(trace(i))),
            trace(3),
        )
    };
    let (exit, out) = run_stmts(vec![], vec![assign(null(arr(Ty::I64)), 2)]);
    assert_eq!(
        (exit, out),
        (
            Exit::Trap(TrapKind::NullDereference),
            "1\n2\n3\n".to_string()
        )
    );
    let (exit, out) = run_stmts(vec![], vec![assign(new_array(Ty::I64, int(2)), 5)]);
    assert_eq!(
        (exit, out),
        (
            Exit::Trap(TrapKind::IndexOutOfBounds),
            "1\n5\n3\n".to_string()
        )
    );
    // A trap in the value comes before the place's checks.
    let div0 = Stmt::Assign(
        Place::Index(Box::new(null(arr(Ty::I64))), Box::new(int(0))),
        bin(BinOp::Div, int(1), int(0)),
    );
    assert_eq!(
        run_stmts(vec![], vec![div0]).0,
        Exit::Trap(TrapKind::DivisionByZero)
    );
}

/// Struct 0: `struct Pair { a: i64, b: u8, next: Pair }`; struct 1 has no fields.
fn with_structs(locals: Vec<Ty>, body: Vec<Stmt>) -> Program {
    let mut p = program(locals, Ty::Unit, block(body, None));
    p.structs = vec![
        StructDef {
            name: "main::Pair".into(),
            module: ModuleId(0),
            fields: vec![
                ("a".into(), Ty::I64),
                ("b".into(), Ty::U8),
                ("next".into(), Ty::Struct(StructId(0))),
            ],
            field_offsets: vec![0, 8, 16],
            size: 24,
            span: Span::default(),
        },
        StructDef {
            name: "main::Empty".into(),
            module: ModuleId(0),
            fields: vec![],
            field_offsets: vec![],
            size: 1,
            span: Span::default(),
        },
    ];
    p
}

fn pair() -> Ty {
    Ty::Struct(StructId(0))
}

#[test]
fn structs() {
    let p = || local(0, pair());
    let q = || local(1, pair());
    let prog = with_structs(
        vec![pair(), pair(), Ty::Struct(StructId(1))],
        vec![
            // Fields given out of declaration order are evaluated as written.
            let_(
                0,
                new_struct(
                    0,
                    vec![
                        (1, cast(trace(300), Ty::U8)),
                        (0, trace(1)),
                        (2, null(pair())),
                    ],
                ),
            ),
            let_(
                1,
                new_struct(0, vec![(0, int(2)), (1, k(Ty::U8, 3)), (2, p())]),
            ),
            print(field(p(), 0, 0, Ty::I64)),
            print(field(p(), 0, 1, Ty::U8)),
            print(bin(BinOp::Eq, field(p(), 0, 2, pair()), null(pair()))),
            print(bin(BinOp::Eq, field(q(), 0, 2, pair()), p())),
            print(bin(BinOp::Eq, q(), p())),
            Stmt::Assign(
                Place::Field(Box::new(field(q(), 0, 2, pair())), StructId(0), 0),
                int(-5),
            ),
            print(field(p(), 0, 0, Ty::I64)),
            let_(2, new_struct(1, vec![])),
            print(bin(
                BinOp::Eq,
                local(2, Ty::Struct(StructId(1))),
                new_struct(1, vec![]),
            )),
            print(bin(
                BinOp::Eq,
                local(2, Ty::Struct(StructId(1))),
                local(2, Ty::Struct(StructId(1))),
            )),
        ],
    );
    let (exit, out) = execute(&prog);
    assert_eq!(exit, Exit::Status(0));
    assert_eq!(out, "300\n1\n1\n44\ntrue\ntrue\nfalse\n-5\nfalse\ntrue\n");
}

#[test]
fn struct_traps_and_order() {
    let read = with_structs(vec![], vec![print(field(null(pair()), 0, 0, Ty::I64))]);
    assert_eq!(execute(&read).0, Exit::Trap(TrapKind::NullDereference));
    // p.f = e: base, value, then the null check.
    let base = ex(
        ExprKind::Block(block(vec![expr(trace(1))], Some(null(pair())))),
        pair(),
    );
    let write = with_structs(
        vec![],
        vec![Stmt::Assign(
            Place::Field(Box::new(base), StructId(0), 0),
            trace(2),
        )],
    );
    assert_eq!(
        execute(&write),
        (Exit::Trap(TrapKind::NullDereference), "1\n2\n".into())
    );
    // A linked list built in a loop.
    let node = || local(1, pair());
    let list = with_structs(
        vec![Ty::I64, pair(), Ty::I64],
        vec![
            let_(1, null(pair())),
            for_(
                0,
                int(0),
                int(5),
                vec![set(
                    1,
                    new_struct(
                        0,
                        vec![(0, local(0, Ty::I64)), (1, k(Ty::U8, 0)), (2, node())],
                    ),
                )],
            ),
            let_(2, int(0)),
            while_(
                bin(BinOp::Ne, node(), null(pair())),
                vec![
                    set(
                        2,
                        bin(
                            BinOp::Add,
                            bin(BinOp::Mul, local(2, Ty::I64), int(10)),
                            field(node(), 0, 0, Ty::I64),
                        ),
                    ),
                    set(1, field(node(), 0, 2, pair())),
                ],
            ),
            print(local(2, Ty::I64)),
        ],
    );
    assert_eq!(execute(&list), (Exit::Status(0), "43210\n".into()));
}

#[test]
fn strings() {
    let (exit, out) = run_stmts(
        vec![Ty::Str],
        vec![
            let_(0, string("hello")),
            print(len(local(0, Ty::Str))),
            print(index(local(0, Ty::Str), int(1))),
            print(bin(BinOp::Eq, local(0, Ty::Str), string("hello"))),
            print(bin(BinOp::Eq, local(0, Ty::Str), string("world"))),
            print(len(string(""))),
            print_str(string("")),
            print_str(local(0, Ty::Str)),
        ],
    );
    assert_eq!(exit, Exit::Status(0));
    assert_eq!(out, "5\n101\ntrue\nfalse\n0\nhello");
    assert_eq!(
        value(index(string("ab"), int(2))),
        Err(Exit::Trap(TrapKind::IndexOutOfBounds))
    );
    assert_eq!(
        value(len(null(Ty::Str))),
        Err(Exit::Trap(TrapKind::NullDereference))
    );
    assert_eq!(
        run_stmts(vec![], vec![print_str(null(Ty::Str))]).0,
        Exit::Trap(TrapKind::NullDereference)
    );
}

#[test]
fn globals() {
    let mut p = program(
        vec![Ty::I64],
        Ty::Unit,
        block(
            vec![
                Stmt::Assign(
                    Place::Global(GlobalId(0)),
                    bin(BinOp::Add, global(0, Ty::I64), int(1)),
                ),
                print(global(0, Ty::I64)),
                print(global(1, Ty::I32)),
                print(len(global(2, arr(Ty::I32)))),
                for_(
                    0,
                    int(0),
                    len(global(2, arr(Ty::I32))),
                    vec![print(index(global(2, arr(Ty::I32)), local(0, Ty::I64)))],
                ),
                Stmt::Assign(
                    Place::Index(Box::new(global(2, arr(Ty::I32))), Box::new(int(0))),
                    k(Ty::I32, 9),
                ),
                print(index(global(2, arr(Ty::I32)), int(0))),
                print(index(global(3, arr(Ty::U8)), int(0))),
                print_str(global(4, Ty::Str)),
                print(bin(BinOp::Eq, global(4, Ty::Str), string("hi\n"))),
                print(bin(BinOp::Eq, global(5, pair()), null(pair()))),
                print(index(global(2, arr(Ty::I32)), int(3))),
            ],
            None,
        ),
    );
    let g = |name: &str, ty: Ty, init: GlobalInit| GlobalDef {
        name: format!("main::{name}"),
        module: ModuleId(0),
        ty,
        init,
        linkage: Linkage::Local,
        span: Span::default(),
    };
    p.globals = vec![
        g("counter", Ty::I64, GlobalInit::Int(41)),
        g("small", Ty::I32, GlobalInit::Int(-3)),
        g(
            "table",
            arr(Ty::I32),
            GlobalInit::Array(Ty::I32, [1, -2, 3].map(GlobalInit::Int).to_vec()),
        ),
        g(
            "bytes",
            arr(Ty::U8),
            GlobalInit::Array(Ty::U8, vec![GlobalInit::Int(255)]),
        ),
        g("greeting", Ty::Str, GlobalInit::Str(b"hi\n".to_vec())),
        g("nothing", pair(), GlobalInit::Null),
    ];
    let (exit, out) = execute(&p);
    assert_eq!(exit, Exit::Trap(TrapKind::IndexOutOfBounds));
    assert_eq!(out, "42\n-3\n3\n1\n-2\n3\n9\n255\nhi\ntrue\ntrue\n");
}

#[test]
fn output_before_a_trap_is_kept() {
    let (exit, out) = run_stmts(
        vec![],
        vec![
            print(int(1)),
            print(bin(BinOp::Rem, int(1), int(0))),
            print(int(2)),
        ],
    );
    assert_eq!(
        (exit, out),
        (Exit::Trap(TrapKind::DivisionByZero), "1\n".into())
    );
}

#[test]
fn run_on_the_current_thread() {
    let mut p = program(
        vec![],
        Ty::Unit,
        block(vec![print(call(2, vec![int(15)], Ty::I64))], None),
    );
    p.funcs.push(fib_func());
    let mut out = Vec::new();
    assert_eq!(run(&p, &mut out), Exit::Status(0));
    assert_eq!(out, b"610\n");
}

#[test]
fn large_output_streams_through_the_channel() {
    let (exit, out) = run_stmts(
        vec![Ty::I64],
        vec![for_(
            0,
            int(0),
            int(100_000),
            vec![print(local(0, Ty::I64))],
        )],
    );
    assert_eq!(exit, Exit::Status(0));
    assert_eq!(out.lines().count(), 100_000);
    assert!(out.ends_with("99999\n"));
}

/// Throughput check, run by hand in release:
/// `cargo test --release -p pare-frontend --lib interp::tests::throughput -- --ignored --nocapture`.
#[test]
#[ignore]
fn throughput() {
    // let mut s = 0; let a = new [i64; 1024];
    // for i in 0..N { a[i & 1023] = s; s = s + (i * 3 ^ (i >> 2)) + a[(i + 1) & 1023] % 7; } print(s);
    const N: i64 = 20_000_000;
    let s = || local(0, Ty::I64);
    let a = || local(1, arr(Ty::I64));
    let i = || local(2, Ty::I64);
    let masked = |e: Expr| bin(BinOp::And, e, int(1023));
    let step = bin(
        BinOp::Add,
        bin(
            BinOp::Add,
            s(),
            bin(
                BinOp::Xor,
                bin(BinOp::Mul, i(), int(3)),
                bin(BinOp::Shr, i(), int(2)),
            ),
        ),
        bin(
            BinOp::Rem,
            index(a(), masked(bin(BinOp::Add, i(), int(1)))),
            int(7),
        ),
    );
    let p = program(
        vec![Ty::I64, arr(Ty::I64), Ty::I64],
        Ty::Unit,
        block(
            vec![
                let_(0, int(0)),
                let_(1, new_array(Ty::I64, int(1024))),
                for_(
                    2,
                    int(0),
                    int(N),
                    vec![
                        Stmt::Assign(Place::Index(Box::new(a()), Box::new(masked(i()))), s()),
                        set(0, step),
                    ],
                ),
                print(s()),
            ],
            None,
        ),
    );
    let start = std::time::Instant::now();
    let (exit, _) = execute(&p);
    let elapsed = start.elapsed();
    assert_eq!(exit, Exit::Status(0));
    // About 20 expression nodes and statements per iteration.
    let ops = N as f64 * 20.0;
    println!(
        "{:.1} ns/iteration, {:.0}M ops/s",
        elapsed.as_nanos() as f64 / N as f64,
        ops / elapsed.as_secs_f64() / 1e6
    );
}

/// Call throughput, run by hand in release like [`throughput`].
#[test]
#[ignore]
fn call_throughput() {
    let mut p = program(
        vec![],
        Ty::Unit,
        block(vec![print(call(2, vec![int(30)], Ty::I64))], None),
    );
    p.funcs.push(fib_func());
    let start = std::time::Instant::now();
    let (exit, out) = execute(&p);
    let elapsed = start.elapsed();
    assert_eq!((exit, out.as_str()), (Exit::Status(0), "832040\n"));
    // fib(30) makes 2,692,537 calls.
    println!("{:.1} ns/call", elapsed.as_nanos() as f64 / 2_692_537.0);
}

/// A writer that refuses everything.
struct BrokenPipe;

impl std::io::Write for BrokenPipe {
    fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
        Err(std::io::Error::new(
            std::io::ErrorKind::BrokenPipe,
            "closed",
        ))
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn output_errors_end_the_run() {
    let p = program(
        vec![Ty::I64],
        Ty::Unit,
        block(
            vec![for_(
                0,
                int(0),
                int(1 << 40),
                vec![print(local(0, Ty::I64))],
            )],
            None,
        ),
    );
    for exit in [
        run(&p, &mut BrokenPipe),
        run_with_big_stack(&p, &mut BrokenPipe),
    ] {
        assert_eq!(exit, Exit::Trap(TrapKind::WriteError));
    }
}
