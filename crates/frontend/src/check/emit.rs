//! Per-module emit lists and linkage, computed on the finished program.
//!
//! A module's object contains its own non-generic functions (source order)
//! and every instance reachable from them through calls that go from an
//! emitted function to an instance (discovery order, breadth-first). A
//! non-generic function or a global becomes `Export` if it is `pub`, is
//! `main`, or is used by code emitted in another module's object; everything
//! else, and every instance, is `Local`.

use crate::tir::{
    Block, Expr, ExprKind, FuncId, GlobalId, Linkage, ModuleId, Place, Program, Stmt,
};

/// The functions called and globals used by a function body, in body order.
#[derive(Default)]
struct Uses {
    calls: Vec<FuncId>,
    globals: Vec<GlobalId>,
}

pub(super) fn assign_emit_and_linkage(p: &mut Program, pub_funcs: &[bool], pub_globals: &[bool]) {
    let uses: Vec<Uses> = p
        .funcs
        .iter()
        .map(|f| {
            let mut u = Uses::default();
            block_uses(&f.body, &mut u);
            u
        })
        .collect();

    for (i, f) in p.funcs.iter_mut().enumerate() {
        f.linkage = if f.is_main || (!f.is_instance && pub_funcs[i]) {
            Linkage::Export
        } else {
            Linkage::Local
        };
    }
    for (i, g) in p.globals.iter_mut().enumerate() {
        g.linkage = if pub_globals[i] {
            Linkage::Export
        } else {
            Linkage::Local
        };
        let m = g.module.0 as usize;
        if let Some(info) = p.modules.get_mut(m) {
            info.globals.push(GlobalId(i as u32));
        }
    }

    for m in 0..p.modules.len() {
        let module = ModuleId(m as u32);
        let mut emit: Vec<FuncId> = (0..p.funcs.len())
            .filter(|&i| !p.funcs[i].is_instance && p.funcs[i].module == module)
            .map(|i| FuncId(i as u32))
            .collect();
        let mut seen = vec![false; p.funcs.len()];
        for f in &emit {
            seen[f.0 as usize] = true;
        }
        let mut next = 0;
        while next < emit.len() {
            let f = emit[next];
            next += 1;
            for &callee in &uses[f.0 as usize].calls {
                let c = &p.funcs[callee.0 as usize];
                if c.is_instance {
                    if !seen[callee.0 as usize] {
                        seen[callee.0 as usize] = true;
                        emit.push(callee);
                    }
                } else if c.module != module {
                    p.funcs[callee.0 as usize].linkage = Linkage::Export;
                }
            }
            for &g in &uses[f.0 as usize].globals {
                if p.globals[g.0 as usize].module != module {
                    p.globals[g.0 as usize].linkage = Linkage::Export;
                }
            }
        }
        p.modules[m].emit = emit;
    }
}

fn block_uses(b: &Block, u: &mut Uses) {
    for s in &b.stmts {
        stmt_uses(s, u);
    }
    if let Some(t) = &b.tail {
        expr_uses(t, u);
    }
}

fn stmt_uses(s: &Stmt, u: &mut Uses) {
    match s {
        Stmt::Let(_, e) | Stmt::Expr(e) => expr_uses(e, u),
        Stmt::Assign(place, e) => {
            match place {
                Place::Local(_) => {}
                Place::Global(g) => u.globals.push(*g),
                Place::Field(b, _, _) => expr_uses(b, u),
                Place::Index(a, i) => {
                    expr_uses(a, u);
                    expr_uses(i, u);
                }
            }
            expr_uses(e, u);
        }
        Stmt::While(c, b) => {
            expr_uses(c, u);
            block_uses(b, u);
        }
        Stmt::For {
            start, end, body, ..
        } => {
            expr_uses(start, u);
            expr_uses(end, u);
            block_uses(body, u);
        }
        Stmt::Break | Stmt::Continue | Stmt::Return(None) => {}
        Stmt::Return(Some(e)) => expr_uses(e, u),
    }
}

fn expr_uses(e: &Expr, u: &mut Uses) {
    match &e.kind {
        ExprKind::Const(_) | ExprKind::Str(_) | ExprKind::Null | ExprKind::Local(_) => {}
        ExprKind::Global(g) => u.globals.push(*g),
        ExprKind::Unary(_, x)
        | ExprKind::Cast(x)
        | ExprKind::Field(x, _, _)
        | ExprKind::NewArray(_, x) => expr_uses(x, u),
        ExprKind::Binary(_, a, b) | ExprKind::Logical(_, a, b) | ExprKind::Index(a, b) => {
            expr_uses(a, u);
            expr_uses(b, u);
        }
        ExprKind::Call(f, args) => {
            for a in args {
                expr_uses(a, u);
            }
            u.calls.push(*f);
        }
        ExprKind::CallExtern(_, args) | ExprKind::Builtin(_, args) => {
            for a in args {
                expr_uses(a, u);
            }
        }
        ExprKind::NewStruct(_, fields) => {
            for (_, x) in fields {
                expr_uses(x, u);
            }
        }
        ExprKind::If(c, t, f) => {
            expr_uses(c, u);
            block_uses(t, u);
            if let Some(f) = f {
                block_uses(f, u);
            }
        }
        ExprKind::Block(b) => block_uses(b, u),
    }
}
