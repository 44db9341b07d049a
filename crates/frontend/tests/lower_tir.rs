//! Lowering of hand-built TIR (independent of the parser and checker):
//! diverging expressions in odd places, unit/never blocks, `main` result
//! conversions; everything is verified and run through the JIT.

#[path = "lower_support.rs"]
mod support;

use pare_frontend::lower::{lower_module, lower_program, verify_module};
use pare_frontend::source::Span;
use pare_frontend::tir::*;
use support::{host_config, run_program, Outcome};

fn e(kind: ExprKind, ty: Ty) -> Expr {
    Expr {
        kind,
        ty,
        span: Span::default(),
    }
}
fn int(v: i64) -> Expr {
    e(ExprKind::Const(v), Ty::I64)
}
fn local(id: u32, ty: Ty) -> Expr {
    e(ExprKind::Local(LocalId(id)), ty)
}
fn bin(op: BinOp, l: Expr, r: Expr) -> Expr {
    let ty = if op.is_comparison() {
        Ty::Bool
    } else {
        l.ty.clone()
    };
    e(ExprKind::Binary(op, Box::new(l), Box::new(r)), ty)
}
fn print(x: Expr) -> Stmt {
    Stmt::Expr(e(ExprKind::Builtin(Builtin::Print, vec![x]), Ty::Unit))
}
fn block(stmts: Vec<Stmt>, tail: Option<Expr>, ty: Ty) -> Block {
    Block {
        stmts,
        tail: tail.map(Box::new),
        ty,
    }
}
fn var(name: &str, ty: Ty) -> Local {
    Local {
        name: name.into(),
        ty,
        mutable: true,
    }
}
fn func(symbol: &str, params: u32, locals: Vec<Local>, ret: Ty, body: Block) -> Func {
    Func {
        symbol: symbol.into(),
        module: ModuleId(0),
        num_params: params,
        locals,
        ret,
        body,
        is_instance: symbol.contains('<'),
        is_main: symbol == "main",
        linkage: if symbol.contains('<') {
            Linkage::Local
        } else {
            Linkage::Export
        },
        span: Span::default(),
    }
}
fn program(funcs: Vec<Func>) -> Program {
    let main = funcs.iter().position(|f| f.is_main).unwrap() as u32;
    Program {
        modules: vec![ModuleInfo {
            name: "m".into(),
            emit: (0..funcs.len() as u32).map(FuncId).collect(),
            globals: vec![],
        }],
        funcs,
        main: FuncId(main),
        ..Program::default()
    }
}

/// `fn m::pick<i64>(x: i64) -> i64 { 1 + { if x > 3 { return x * 2; } else { return 0 - x; } } }`
/// — a never-typed block as an operand — and a loop `while true` left only
/// by `break`, and `main() -> i64` returning through an if-expression.
fn sample() -> Program {
    let ret = |x: Expr| Stmt::Return(Some(x));
    let diverging_if = e(
        ExprKind::If(
            Box::new(bin(BinOp::Gt, local(0, Ty::I64), int(3))),
            block(
                vec![ret(bin(BinOp::Mul, local(0, Ty::I64), int(2)))],
                None,
                Ty::Never,
            ),
            Some(block(
                vec![ret(bin(BinOp::Sub, int(0), local(0, Ty::I64)))],
                None,
                Ty::Never,
            )),
        ),
        Ty::Never,
    );
    let pick = func(
        "m::pick<i64>",
        1,
        vec![var("x", Ty::I64)],
        Ty::I64,
        block(vec![], Some(bin(BinOp::Add, int(1), diverging_if)), Ty::I64),
    );
    // let mut n = 0; while true { n = n + 1; if n == 5 { break; } } print(n);
    // print(pick(4)); print(pick(-2)); if n > 4 { n + 295 } else { 0 }
    let call = |x: i64| e(ExprKind::Call(FuncId(0), vec![int(x)]), Ty::I64);
    let body = block(
        vec![
            Stmt::Let(LocalId(0), int(0)),
            Stmt::While(
                e(ExprKind::Const(1), Ty::Bool),
                block(
                    vec![
                        Stmt::Assign(
                            Place::Local(LocalId(0)),
                            bin(BinOp::Add, local(0, Ty::I64), int(1)),
                        ),
                        Stmt::Expr(e(
                            ExprKind::If(
                                Box::new(bin(BinOp::Eq, local(0, Ty::I64), int(5))),
                                block(vec![Stmt::Break], None, Ty::Never),
                                None,
                            ),
                            Ty::Unit,
                        )),
                    ],
                    None,
                    Ty::Unit,
                ),
            ),
            print(local(0, Ty::I64)),
            print(call(4)),
            print(call(-2)),
        ],
        Some(e(
            ExprKind::If(
                Box::new(bin(BinOp::Gt, local(0, Ty::I64), int(4))),
                block(
                    vec![],
                    Some(bin(BinOp::Add, local(0, Ty::I64), int(295))),
                    Ty::I64,
                ),
                Some(block(vec![], Some(int(0)), Ty::I64)),
            ),
            Ty::I64,
        )),
        Ty::I64,
    );
    let main = func("main", 0, vec![var("n", Ty::I64)], Ty::I64, body);
    program(vec![pick, main])
}

#[test]
fn hand_built_program_verifies_and_runs() {
    let p = sample();
    verify_module(&lower_program(&p, &host_config())).unwrap();
    verify_module(&lower_module(&p, ModuleId(0), &host_config())).unwrap();
    // 300 & 255 == 44
    let out = run_program(&p);
    assert_eq!(
        out,
        Outcome {
            status: 44,
            stdout: "5\n8\n2\n".into(),
            stderr: String::new()
        }
    );
}

#[test]
fn dead_code_after_divergence_is_skipped() {
    // fn main() { return; print(1); exit(2); }  plus an operand that exits.
    let exit = |code: i64| {
        e(
            ExprKind::Builtin(Builtin::Exit, vec![e(ExprKind::Const(code), Ty::I32)]),
            Ty::Never,
        )
    };
    let main = func(
        "main",
        0,
        vec![],
        Ty::Unit,
        block(
            vec![
                print(bin(BinOp::Add, int(1), exit(7))),
                Stmt::Return(None),
                print(int(1)),
            ],
            None,
            Ty::Unit,
        ),
    );
    let p = program(vec![main]);
    let out = run_program(&p);
    assert_eq!(
        out,
        Outcome {
            status: 7,
            stdout: String::new(),
            stderr: String::new()
        }
    );
}
