//! Checking function bodies and global initializers: [`FnCk`].
//!
//! Expressions are checked bidirectionally: [`FnCk::expr`] takes an optional
//! expected type (a *hint*) that untyped integer literals and `null` adopt;
//! the caller then compares the result with what it needs
//! ([`FnCk::coerce`]). For a binary operator whose left operand is an untyped
//! literal, the right operand is checked first so that `1 + x` takes `x`'s
//! type. Errors produce expressions of type [`Ty::Never`] (compatible with
//! everything), so they do not cascade.
//!
//! Generic functions that are never instantiated are checked in *names-only*
//! mode: type parameters are bound to the error type, and only resolution
//! errors are reported ([`FnCk::type_err`] drops the others).

use std::rc::Rc;

use hashbrown::HashMap;

use super::consteval::{fold, normalize, Folded};
use super::types::compatible;
use super::{Checker, Env, GArg, GenericId, Item, ItemKind, Ns, PLACEHOLDER_FN};
use crate::ast;
use crate::source::{Diagnostic, Span};
use crate::tir::{self, Block, Expr, ExprKind, FuncId, LocalId, ModuleId, Place, Stmt, Ty};

/// How a local was introduced (for assignment diagnostics).
#[derive(Clone, Copy, PartialEq, Eq)]
enum LocalKind {
    Param,
    Let,
    ForVar,
    Hidden,
}

pub(crate) struct FnCk<'c, 'a> {
    pub ck: &'c mut Checker<'a>,
    pub module: ModuleId,
    pub env: Rc<Env>,
    pub locals: Vec<tir::Local>,
    local_info: Vec<(LocalKind, Span)>,
    scopes: Vec<Vec<(String, LocalId)>>,
    pub ret: Ty,
    loop_depth: u32,
    /// Instantiation depth of the function being checked.
    pub depth: u32,
    pub names_only: bool,
    /// Which expressions take their type from the context.
    pub untyped: Untyped,
}

/// Checks the body of function `id` (non-generic or instance).
pub(super) fn check_fn(ck: &mut Checker<'_>, id: FuncId) -> tir::Func {
    let info = &ck.fns[id.0 as usize];
    let (module, env, decl, ret, depth) = (
        info.module,
        info.env.clone(),
        info.decl,
        info.ret.clone(),
        info.depth,
    );
    let params = info.params.clone();
    let symbol = info.symbol.clone();
    let is_instance = info.is_instance;
    let mut c = FnCk::new(ck, module, env, ret.clone(), depth, false);
    let body = c.fn_body(decl, &params);
    let is_main = symbol == "main";
    tir::Func {
        symbol,
        module,
        num_params: params.len() as u32,
        locals: c.locals,
        ret,
        body,
        is_instance,
        is_main,
        linkage: tir::Linkage::Local,
        span: decl.span,
    }
}

/// Resolves names in a generic function that no one instantiated, with its
/// generic parameters bound to placeholders.
pub(super) fn check_generic_names_only(ck: &mut Checker<'_>, g: GenericId) {
    let (module, decl) = (
        ck.generics[g.0 as usize].module,
        ck.generics[g.0 as usize].decl,
    );
    let env: Env = decl
        .generics
        .iter()
        .map(|p| match p {
            ast::GenericParam::Type(n) => (n.name.clone(), GArg::Type(Ty::Never)),
            ast::GenericParam::Const(n, _) => (n.name.clone(), GArg::Const(Ty::Never, 0)),
            ast::GenericParam::Fn(n, _) => (n.name.clone(), GArg::Fn(PLACEHOLDER_FN)),
        })
        .collect();
    for p in &decl.generics {
        match p {
            ast::GenericParam::Type(_) => {}
            ast::GenericParam::Const(_, t) => {
                ck.resolve_type(module, &env, t);
            }
            ast::GenericParam::Fn(_, ft) => {
                for t in &ft.params {
                    ck.resolve_type(module, &env, t);
                }
                if let Some(t) = &ft.ret {
                    ck.resolve_type(module, &env, t);
                }
            }
        }
    }
    let params: Vec<Ty> = decl
        .params
        .iter()
        .map(|p| ck.resolve_type(module, &env, &p.ty))
        .collect();
    let ret = decl
        .ret
        .as_ref()
        .map_or(Ty::Unit, |t| ck.resolve_type(module, &env, t));
    let mut c = FnCk::new(ck, module, Rc::new(env), ret, 0, true);
    c.fn_body(decl, &params);
}

/// Checks a global's type and initializer; returns the global's type and its
/// folded initial value.
pub(super) fn check_global(
    ck: &mut Checker<'_>,
    m: ModuleId,
    decl: &ast::GlobalDecl,
) -> (Ty, tir::GlobalInit) {
    let mut c = FnCk::new(ck, m, Rc::new(Vec::new()), Ty::Unit, 0, false);
    c.global(decl)
}

impl<'c, 'a> FnCk<'c, 'a> {
    pub fn new(
        ck: &'c mut Checker<'a>,
        module: ModuleId,
        env: Rc<Env>,
        ret: Ty,
        depth: u32,
        names_only: bool,
    ) -> Self {
        FnCk {
            ck,
            module,
            env,
            locals: Vec::new(),
            local_info: Vec::new(),
            scopes: vec![Vec::new()],
            ret,
            loop_depth: 0,
            depth,
            names_only,
            untyped: Untyped::default(),
        }
    }

    // ---- diagnostics ---------------------------------------------------------------

    /// Reports an error that depends on types (dropped in names-only mode).
    pub fn type_err(&mut self, d: Diagnostic) {
        if !self.names_only {
            self.ck.error(d);
        }
    }

    /// Reports a resolution or structural error (always).
    pub fn name_err(&mut self, d: Diagnostic) {
        self.ck.error(d);
    }

    pub fn tn(&self, ty: &Ty) -> String {
        self.ck.tn(ty)
    }

    pub fn mismatch(&mut self, span: Span, want: &Ty, have: &Ty) {
        let (w, h) = (self.tn(want), self.tn(have));
        self.type_err(
            Diagnostic::error(
                span,
                format!("mismatched types: expected `{w}`, found `{h}`"),
            )
            .with_label(format!("expected `{w}`, found `{h}`")),
        );
    }

    /// Checks that `e` can be used where a `want` is needed; gives `null` its
    /// reference type.
    pub fn coerce(&mut self, mut e: Expr, want: &Ty) -> Expr {
        if compatible(&e.ty, want) {
            if e.ty == Ty::Null && *want != Ty::Never {
                e.ty = want.clone();
            }
        } else {
            self.mismatch(e.span, want, &e.ty);
        }
        e
    }

    pub fn poison(span: Span) -> Expr {
        Expr {
            kind: ExprKind::Const(0),
            ty: Ty::Never,
            span,
        }
    }

    pub fn resolve_type(&mut self, t: &ast::TypeExpr) -> Ty {
        let env = self.env.clone();
        self.ck.resolve_type(self.module, &env, t)
    }

    // ---- locals ----------------------------------------------------------------------

    fn new_local(
        &mut self,
        name: &str,
        ty: Ty,
        mutable: bool,
        kind: LocalKind,
        span: Span,
    ) -> LocalId {
        let id = LocalId(self.locals.len() as u32);
        self.locals.push(tir::Local {
            name: name.to_string(),
            ty,
            mutable,
        });
        self.local_info.push((kind, span));
        if kind != LocalKind::Hidden {
            if let Some(scope) = self.scopes.last_mut() {
                scope.push((name.to_string(), id));
            }
        }
        id
    }

    pub fn find_local(&self, name: &str) -> Option<LocalId> {
        self.scopes
            .iter()
            .rev()
            .flat_map(|s| s.iter().rev())
            .find(|(n, _)| n == name)
            .map(|(_, id)| *id)
    }

    fn local_expr(&self, id: LocalId, span: Span) -> Expr {
        Expr {
            kind: ExprKind::Local(id),
            ty: self.locals[id.0 as usize].ty.clone(),
            span,
        }
    }

    pub fn env_lookup(&self, name: &str) -> Option<GArg> {
        self.env
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, a)| a.clone())
    }

    // ---- functions and globals ----------------------------------------------------------

    fn fn_body(&mut self, decl: &ast::FnDecl, params: &[Ty]) -> Block {
        for (p, ty) in decl.params.iter().zip(params) {
            if let Some(prev) = decl
                .params
                .iter()
                .take_while(|q| !std::ptr::eq(*q, p))
                .find(|q| q.name.name == p.name.name)
            {
                self.name_err(
                    Diagnostic::error(
                        p.name.span,
                        format!(
                            "identifier `{}` is bound more than once in this parameter list",
                            p.name.name
                        ),
                    )
                    .with_label("used as parameter more than once")
                    .with_secondary(prev.name.span, "first bound here"),
                );
            }
            self.new_local(
                &p.name.name,
                ty.clone(),
                false,
                LocalKind::Param,
                p.name.span,
            );
        }
        let ret = self.ret.clone();
        let hint = if ret == Ty::Unit {
            None
        } else {
            Some(ret.clone())
        };
        let mut body = self.block(&decl.body, hint.as_ref());
        match (&ret, &body.ty) {
            (_, Ty::Never) => {}
            (Ty::Unit, Ty::Unit) => {}
            (Ty::Unit, have) => {
                let span = body.tail.as_ref().map_or(decl.body.span, |t| t.span);
                let have = have.clone();
                self.type_err(
                    Diagnostic::error(
                        span,
                        format!(
                            "mismatched types: expected `()`, found `{}`",
                            self.tn(&have)
                        ),
                    )
                    .with_label(format!("expected `()`, found `{}`", self.tn(&have)))
                    .with_secondary(
                        decl.name.span,
                        "this function returns nothing; add `-> T` to return a value",
                    ),
                );
            }
            (want, Ty::Unit) if body.tail.is_none() => {
                let w = self.tn(want);
                let mut d = Diagnostic::error(
                    decl.name.span,
                    format!("mismatched types: expected `{w}`, found `()`"),
                )
                .with_label(
                    "implicitly returns `()` as its body has no tail or `return` expression",
                );
                if let Some(r) = &decl.ret {
                    d = d.with_secondary(
                        r.span,
                        format!("expected `{w}` because of this return type"),
                    );
                }
                self.type_err(d);
            }
            (want, have) => {
                if compatible(have, want) {
                    body.ty = want.clone();
                } else {
                    let span = body.tail.as_ref().map_or(decl.body.span, |t| t.span);
                    let (want, have) = (want.clone(), have.clone());
                    self.mismatch(span, &want, &have);
                }
            }
        }
        body
    }

    fn global(&mut self, decl: &ast::GlobalDecl) -> (Ty, tir::GlobalInit) {
        if let ast::TypeExprKind::FixedArray(elem, len) = &decl.ty.kind {
            return self.fixed_array_global(decl, elem, len);
        }
        let ty = self.resolve_type(&decl.ty);
        if let ast::ExprKind::ArrayLit(_) = decl.init.kind {
            self.type_err(
                Diagnostic::error(
                    decl.init.span,
                    "an array literal needs a fixed-size array type",
                )
                .with_label("array literal")
                .with_secondary(decl.ty.span, "write the type as `[T; N]`"),
            );
            return (ty, tir::GlobalInit::Null);
        }
        let e = self.expr(&decl.init, Some(&ty));
        let e = self.coerce(e, &ty);
        let init = match self.fold_constant(&e) {
            Some(Folded::Int(v)) => tir::GlobalInit::Int(v),
            Some(Folded::Null) => tir::GlobalInit::Null,
            Some(Folded::Str(s)) => tir::GlobalInit::Str(s),
            None => tir::GlobalInit::Int(0),
        };
        (ty, init)
    }

    fn fixed_array_global(
        &mut self,
        decl: &ast::GlobalDecl,
        elem: &ast::TypeExpr,
        len: &ast::Expr,
    ) -> (Ty, tir::GlobalInit) {
        let elem_ty = self.resolve_type(elem);
        let ty = Ty::Array(Box::new(elem_ty.clone()));
        let len_e = self.expr(len, Some(&Ty::I64));
        let len_e = self.coerce(len_e, &Ty::I64);
        let n = match self.fold_constant(&len_e) {
            Some(Folded::Int(n)) if n >= 0 => Some(n as usize),
            Some(_) => {
                self.type_err(
                    Diagnostic::error(len.span, "array length must be a non-negative constant")
                        .with_label("negative length"),
                );
                None
            }
            None => None,
        };
        let ast::ExprKind::ArrayLit(elems) = &decl.init.kind else {
            self.type_err(
                Diagnostic::error(
                    decl.init.span,
                    "a fixed-size array global must be initialized with an array literal",
                )
                .with_label("expected `[e0, e1, ...]`"),
            );
            return (ty, tir::GlobalInit::Null);
        };
        let mut values = Vec::with_capacity(elems.len());
        for x in elems {
            let e = self.expr(x, Some(&elem_ty));
            let e = self.coerce(e, &elem_ty);
            match self.fold_constant(&e) {
                Some(Folded::Int(v)) => values.push(tir::GlobalInit::Int(v)),
                Some(Folded::Null) => values.push(tir::GlobalInit::Null),
                Some(Folded::Str(s)) => values.push(tir::GlobalInit::Str(s)),
                None => {}
            }
        }
        if let Some(n) = n {
            if elems.len() != n {
                self.type_err(
                    Diagnostic::error(
                        decl.init.span,
                        format!(
                            "expected an array of {n} elements, found one of {} elements",
                            elems.len()
                        ),
                    )
                    .with_label(format!("{} elements", elems.len()))
                    .with_secondary(len.span, format!("the type says {n}")),
                );
            }
        }
        (ty, tir::GlobalInit::Array(elem_ty, values))
    }

    /// Folds a checked constant expression, reporting why it is not one.
    pub fn fold_constant(&mut self, e: &Expr) -> Option<Folded> {
        if e.ty == Ty::Never {
            return None; // already reported
        }
        match fold(e) {
            Ok(v) => Some(v),
            Err(err) => {
                self.type_err(Diagnostic::error(err.span, err.message).with_label(err.label));
                None
            }
        }
    }

    // ---- blocks and statements ---------------------------------------------------------

    pub fn block(&mut self, b: &ast::Block, hint: Option<&Ty>) -> Block {
        self.scopes.push(Vec::new());
        let mut stmts = Vec::new();
        let mut diverges = false;
        for s in &b.stmts {
            diverges |= self.stmt(s, &mut stmts);
        }
        let tail = b.tail.as_ref().map(|t| Box::new(self.expr(t, hint)));
        self.scopes.pop();
        let ty = if diverges {
            Ty::Never
        } else {
            tail.as_ref().map_or(Ty::Unit, |t| t.ty.clone())
        };
        Block { stmts, tail, ty }
    }

    /// Checks a statement, appending its TIR to `out`; returns whether it
    /// never completes.
    fn stmt(&mut self, s: &ast::Stmt, out: &mut Vec<Stmt>) -> bool {
        match &s.kind {
            ast::StmtKind::Let {
                mutable,
                name,
                ty,
                init,
            } => self.let_stmt(*mutable, name, ty.as_ref(), init, out),
            ast::StmtKind::Assign { target, op, value } => {
                self.assign(target, *op, value, s.span, out)
            }
            ast::StmtKind::Expr(e) => {
                let e = self.expr(e, None);
                let never = e.ty == Ty::Never;
                out.push(Stmt::Expr(e));
                never
            }
            ast::StmtKind::While { cond, body } => {
                let c = self.expr(cond, Some(&Ty::Bool));
                let c = self.coerce(c, &Ty::Bool);
                self.loop_depth += 1;
                let b = self.block(body, None);
                self.loop_depth -= 1;
                out.push(Stmt::While(c, b));
                false
            }
            ast::StmtKind::For {
                var,
                start,
                end,
                body,
            } => {
                let (start, end) = self.operands(start, end, None);
                let ty = self.range_type(&start, &end);
                self.scopes.push(Vec::new());
                let v = self.new_local(&var.name, ty, false, LocalKind::ForVar, var.span);
                self.loop_depth += 1;
                let body = self.block(body, None);
                self.loop_depth -= 1;
                self.scopes.pop();
                out.push(Stmt::For {
                    var: v,
                    start,
                    end,
                    body,
                });
                false
            }
            ast::StmtKind::Break | ast::StmtKind::Continue => {
                let is_break = matches!(s.kind, ast::StmtKind::Break);
                let word = if is_break { "break" } else { "continue" };
                if self.loop_depth == 0 {
                    self.name_err(
                        Diagnostic::error(s.span, format!("`{word}` outside of a loop"))
                            .with_label(format!("cannot `{word}` outside of a loop")),
                    );
                }
                out.push(if is_break {
                    Stmt::Break
                } else {
                    Stmt::Continue
                });
                true
            }
            ast::StmtKind::Return(value) => {
                self.return_stmt(value.as_ref(), s.span, out);
                true
            }
        }
    }

    /// The type of the variable of `for i in start..end`: both bounds must
    /// be integers of one type (an untyped literal bound has already taken
    /// the other bound's type, as an operand of a binary operator does).
    /// Each bound that is not an integer is reported at that bound; after
    /// an error the variable has the error type.
    fn range_type(&mut self, start: &Expr, end: &Expr) -> Ty {
        let mut ok = true;
        for bound in [start, end] {
            if !(bound.ty.is_integer() || bound.ty == Ty::Never) {
                let n = self.tn(&bound.ty);
                self.type_err(
                    Diagnostic::error(
                        bound.span,
                        format!("`for` range bounds must be integers, found `{n}`"),
                    )
                    .with_label(format!("this is of type `{n}`")),
                );
                ok = false;
            }
        }
        if !ok {
            return Ty::Never;
        }
        if start.ty != end.ty && start.ty != Ty::Never && end.ty != Ty::Never {
            let (s, e) = (self.tn(&start.ty), self.tn(&end.ty));
            self.type_err(
                Diagnostic::error(
                    end.span,
                    format!("mismatched `for` range bounds: `{s}` and `{e}`"),
                )
                .with_label(format!("this is of type `{e}`"))
                .with_secondary(start.span, format!("this is of type `{s}`"))
                .with_note("both bounds must have the same integer type; convert one with `as`"),
            );
            return Ty::Never;
        }
        if start.ty == Ty::Never {
            end.ty.clone()
        } else {
            start.ty.clone()
        }
    }

    fn let_stmt(
        &mut self,
        mutable: bool,
        name: &ast::Ident,
        ty: Option<&ast::TypeExpr>,
        init: &ast::Expr,
        out: &mut Vec<Stmt>,
    ) -> bool {
        let declared = ty.map(|t| self.resolve_type(t));
        let e = self.expr(init, declared.as_ref());
        let (e, lty) = match declared {
            Some(t) => (self.coerce(e, &t), t),
            None => {
                let lty = match &e.ty {
                    Ty::Null => {
                        self.type_err(
                            Diagnostic::error(init.span, "cannot infer the type of `null`")
                                .with_label("add a type annotation to the `let`"),
                        );
                        Ty::Never
                    }
                    Ty::Unit => {
                        self.type_err(
                            Diagnostic::error(init.span, "a value of type `()` cannot be stored")
                                .with_label("this expression has no value"),
                        );
                        Ty::Never
                    }
                    t => t.clone(),
                };
                (e, lty)
            }
        };
        let never = e.ty == Ty::Never;
        let id = self.new_local(&name.name, lty, mutable, LocalKind::Let, name.span);
        out.push(Stmt::Let(id, e));
        never
    }

    fn return_stmt(&mut self, value: Option<&ast::Expr>, span: Span, out: &mut Vec<Stmt>) {
        let ret = self.ret.clone();
        match value {
            Some(v) => {
                if ret == Ty::Unit {
                    let e = self.expr(v, None);
                    if !matches!(e.ty, Ty::Unit | Ty::Never) {
                        let n = self.tn(&e.ty);
                        self.type_err(
                            Diagnostic::error(
                                v.span,
                                format!("mismatched types: expected `()`, found `{n}`"),
                            )
                            .with_label("this function returns nothing"),
                        );
                    }
                    out.push(Stmt::Return(Some(e)));
                } else {
                    let e = self.expr(v, Some(&ret));
                    let e = self.coerce(e, &ret);
                    out.push(Stmt::Return(Some(e)));
                }
            }
            None => {
                if !matches!(ret, Ty::Unit | Ty::Never) {
                    let n = self.tn(&ret);
                    self.type_err(
                        Diagnostic::error(
                            span,
                            format!("mismatched types: expected `{n}`, found `()`"),
                        )
                        .with_label(format!("`return;` in a function that returns `{n}`")),
                    );
                }
                out.push(Stmt::Return(None));
            }
        }
    }

    /// `place = value;` and `place op= value;`. Compound assignment to a
    /// field or element evaluates the base (and index) once, into hidden locals.
    fn assign(
        &mut self,
        target: &ast::Expr,
        op: Option<ast::BinOp>,
        value: &ast::Expr,
        span: Span,
        out: &mut Vec<Stmt>,
    ) -> bool {
        let Some((place, ty)) = self.place(target) else {
            let v = self.expr(value, None);
            return v.ty == Ty::Never;
        };
        let Some(op) = op else {
            let v = self.expr(value, Some(&ty));
            let v = self.coerce(v, &ty);
            let never = v.ty == Ty::Never;
            out.push(Stmt::Assign(place, v));
            return never;
        };
        let (place, read) = match place {
            Place::Local(id) => (
                Place::Local(id),
                Expr {
                    kind: ExprKind::Local(id),
                    ty: ty.clone(),
                    span: target.span,
                },
            ),
            Place::Global(g) => (
                Place::Global(g),
                Expr {
                    kind: ExprKind::Global(g),
                    ty: ty.clone(),
                    span: target.span,
                },
            ),
            Place::Field(base, sid, idx) => {
                let tmp = self.new_local(
                    "$base",
                    base.ty.clone(),
                    false,
                    LocalKind::Hidden,
                    target.span,
                );
                let bspan = base.span;
                out.push(Stmt::Let(tmp, *base));
                let read = Expr {
                    kind: ExprKind::Field(Box::new(self.local_expr(tmp, bspan)), sid, idx),
                    ty: ty.clone(),
                    span: target.span,
                };
                (
                    Place::Field(Box::new(self.local_expr(tmp, bspan)), sid, idx),
                    read,
                )
            }
            Place::Index(arr, index) => {
                let ta =
                    self.new_local("$array", arr.ty.clone(), false, LocalKind::Hidden, arr.span);
                let ti = self.new_local("$index", Ty::I64, false, LocalKind::Hidden, index.span);
                let (aspan, ispan) = (arr.span, index.span);
                out.push(Stmt::Let(ta, *arr));
                out.push(Stmt::Let(ti, *index));
                let mk = |c: &Self| Expr {
                    kind: ExprKind::Index(
                        Box::new(c.local_expr(ta, aspan)),
                        Box::new(c.local_expr(ti, ispan)),
                    ),
                    ty: ty.clone(),
                    span: target.span,
                };
                let read = mk(self);
                (
                    Place::Index(
                        Box::new(self.local_expr(ta, aspan)),
                        Box::new(self.local_expr(ti, ispan)),
                    ),
                    read,
                )
            }
        };
        if is_comparison_or_logical(op) {
            self.type_err(Diagnostic::error(
                span,
                "invalid compound assignment operator",
            ));
            return false;
        }
        let hint = if matches!(op, ast::BinOp::Shl | ast::BinOp::Shr) {
            None
        } else {
            Some(ty.clone())
        };
        let rhs = self.expr(value, hint.as_ref());
        let combined = self.build_binary(op, read, rhs, span);
        let combined = self.coerce(combined, &ty);
        let never = combined.ty == Ty::Never;
        out.push(Stmt::Assign(place, combined));
        never
    }

    /// Checks an assignment target; `None` after reporting an error.
    fn place(&mut self, target: &ast::Expr) -> Option<(Place, Ty)> {
        match &target.kind {
            ast::ExprKind::Path(path, args) if args.is_empty() => {
                if path.module.is_none() {
                    if let Some(id) = self.find_local(&path.name.name) {
                        return self.local_place(id, path);
                    }
                    if self.env_lookup(&path.name.name).is_some() {
                        self.type_err(
                            Diagnostic::error(
                                target.span,
                                format!("cannot assign to generic parameter `{}`", path.name.name),
                            )
                            .with_label("not a variable"),
                        );
                        return None;
                    }
                }
                match self.ck.lookup(self.module, path, Ns::Values) {
                    Ok(Some(Item {
                        kind: ItemKind::Global(g),
                        ..
                    })) => {
                        let ty = self.ck.globals[g.0 as usize].ty.clone();
                        Some((Place::Global(g), ty))
                    }
                    Ok(Some(_)) => {
                        self.type_err(
                            Diagnostic::error(target.span, "invalid left-hand side of assignment")
                                .with_label("cannot assign to a function"),
                        );
                        None
                    }
                    Ok(None) => {
                        self.name_err(
                            Diagnostic::error(
                                path.span,
                                format!("cannot find value `{}` in this scope", path.name.name),
                            )
                            .with_label("not found in this scope"),
                        );
                        None
                    }
                    Err(()) => None,
                }
            }
            ast::ExprKind::Field(base, name) => {
                let b = self.expr(base, None);
                let (sid, idx, ty) = self.field_of(&b, name)?;
                Some((Place::Field(Box::new(b), sid, idx), ty))
            }
            ast::ExprKind::Index(base, index) => {
                let b = self.expr(base, None);
                if b.ty == Ty::Str {
                    self.type_err(
                        Diagnostic::error(target.span, "cannot assign to an element of a `str`")
                            .with_label("strings are read-only"),
                    );
                    return None;
                }
                let elem = self.elem_type(&b)?;
                let i = self.index_expr(index);
                Some((Place::Index(Box::new(b), Box::new(i)), elem))
            }
            _ => {
                self.expr(target, None);
                self.type_err(
                    Diagnostic::error(target.span, "invalid left-hand side of assignment")
                        .with_label("cannot assign to this expression"),
                );
                None
            }
        }
    }

    fn local_place(&mut self, id: LocalId, path: &ast::Path) -> Option<(Place, Ty)> {
        let local = &self.locals[id.0 as usize];
        let ty = local.ty.clone();
        if local.mutable {
            return Some((Place::Local(id), ty));
        }
        let (kind, decl_span) = self.local_info[id.0 as usize];
        let name = &path.name.name;
        let d = match kind {
            LocalKind::Param => {
                Diagnostic::error(path.span, format!("cannot assign to parameter `{name}`"))
                    .with_label("parameters are immutable")
                    .with_secondary(decl_span, "parameter declared here")
            }
            LocalKind::ForVar => Diagnostic::error(
                path.span,
                format!("cannot assign to loop variable `{name}`"),
            )
            .with_label("`for` loop variables are immutable")
            .with_secondary(decl_span, "declared here"),
            _ => Diagnostic::error(
                path.span,
                format!("cannot assign twice to immutable variable `{name}`"),
            )
            .with_label("cannot assign twice to immutable variable")
            .with_secondary(
                decl_span,
                format!("help: consider making this binding mutable: `mut {name}`"),
            ),
        };
        self.type_err(d);
        None
    }

    // ---- expressions ------------------------------------------------------------------------

    pub fn expr(&mut self, e: &ast::Expr, hint: Option<&Ty>) -> Expr {
        let span = e.span;
        let mk = |kind, ty| Expr { kind, ty, span };
        match &e.kind {
            ast::ExprKind::Int(v, suffix) => {
                let ty = match suffix.as_deref() {
                    Some("i64") => Ty::I64,
                    Some("i32") => Ty::I32,
                    Some("u8") => Ty::U8,
                    Some(other) => {
                        self.type_err(
                            Diagnostic::error(
                                span,
                                format!("invalid suffix `{other}` for number literal"),
                            )
                            .with_label("the suffix must be one of `i64`, `i32`, `u8`"),
                        );
                        Ty::I64
                    }
                    None => match hint {
                        Some(t) if t.is_integer() => t.clone(),
                        _ => Ty::I64,
                    },
                };
                mk(ExprKind::Const(normalize(&ty, *v as i64)), ty)
            }
            ast::ExprKind::Bool(b) => mk(ExprKind::Const(*b as i64), Ty::Bool),
            ast::ExprKind::Char(c) => mk(ExprKind::Const(*c as i64), Ty::U8),
            ast::ExprKind::Str(s) => mk(ExprKind::Str(s.clone()), Ty::Str),
            ast::ExprKind::Null => {
                let ty = match hint {
                    Some(t) if t.is_reference() => t.clone(),
                    _ => Ty::Null,
                };
                mk(ExprKind::Null, ty)
            }
            ast::ExprKind::Path(path, args) => self.path_expr(path, args, span),
            ast::ExprKind::Unary(op, x) => self.unary(*op, x, hint, span),
            ast::ExprKind::Binary(op, l, r) => self.binary(*op, l, r, hint, span),
            ast::ExprKind::Cast(x, t) => self.cast(x, t, span),
            ast::ExprKind::Call(callee, args) => self.call(callee, args, span),
            ast::ExprKind::Field(base, name) => {
                let b = self.expr(base, None);
                match self.field_of(&b, name) {
                    Some((sid, idx, ty)) => mk(ExprKind::Field(Box::new(b), sid, idx), ty),
                    None => Self::poison(span),
                }
            }
            ast::ExprKind::Index(base, index) => {
                let b = self.expr(base, None);
                let elem = self.elem_type(&b);
                let i = self.index_expr(index);
                match elem {
                    Some(ty) => mk(ExprKind::Index(Box::new(b), Box::new(i)), ty),
                    None => Self::poison(span),
                }
            }
            ast::ExprKind::NewArray(t, n) => {
                let elem = self.resolve_type(t);
                let n = self.expr(n, Some(&Ty::I64));
                let n = self.coerce(n, &Ty::I64);
                mk(
                    ExprKind::NewArray(elem.clone(), Box::new(n)),
                    Ty::Array(Box::new(elem)),
                )
            }
            ast::ExprKind::NewStruct(path, fields) => self.new_struct(path, fields, span),
            ast::ExprKind::ArrayLit(elems) => {
                for x in elems {
                    self.expr(x, None);
                }
                self.type_err(
                    Diagnostic::error(span, "array literals are only allowed as initializers of fixed-size array globals")
                        .with_label("use `new [T; n]` and fill the array"),
                );
                Self::poison(span)
            }
            ast::ExprKind::If(c, then, els) => self.if_expr(c, then, els.as_deref(), hint, span),
            ast::ExprKind::Block(b) => {
                let b = self.block(b, hint);
                let ty = b.ty.clone();
                mk(ExprKind::Block(b), ty)
            }
        }
    }

    fn path_expr(&mut self, path: &ast::Path, args: &[ast::GenericArg], span: Span) -> Expr {
        let name = &path.name.name;
        if path.module.is_none() && args.is_empty() {
            if let Some(id) = self.find_local(name) {
                return self.local_expr(id, span);
            }
            match self.env_lookup(name) {
                Some(GArg::Const(ty, v)) => {
                    return Expr {
                        kind: ExprKind::Const(v),
                        ty,
                        span,
                    }
                }
                Some(GArg::Type(_)) => {
                    self.name_err(
                        Diagnostic::error(
                            span,
                            format!("expected value, found type parameter `{name}`"),
                        )
                        .with_label("not a value"),
                    );
                    return Self::poison(span);
                }
                Some(GArg::Fn(_)) => {
                    self.not_a_value(span, name);
                    return Self::poison(span);
                }
                None => {}
            }
        }
        match self.ck.lookup(self.module, path, Ns::Values) {
            Ok(Some(Item {
                kind: ItemKind::Global(g),
                ..
            })) if args.is_empty() => {
                let ty = self.ck.globals[g.0 as usize].ty.clone();
                Expr {
                    kind: ExprKind::Global(g),
                    ty,
                    span,
                }
            }
            Ok(Some(_)) => {
                self.not_a_value(span, name);
                Self::poison(span)
            }
            Ok(None) => {
                if path.module.is_none() && is_builtin(name) {
                    self.not_a_value(span, name);
                } else {
                    self.name_err(
                        Diagnostic::error(
                            path.span,
                            format!("cannot find value `{name}` in this scope"),
                        )
                        .with_label("not found in this scope"),
                    );
                }
                Self::poison(span)
            }
            Err(()) => Self::poison(span),
        }
    }

    fn not_a_value(&mut self, span: Span, name: &str) {
        self.type_err(
            Diagnostic::error(span, format!("`{name}` is a function, not a value"))
                .with_label("functions can only be called"),
        );
    }

    fn unary(&mut self, op: ast::UnOp, x: &ast::Expr, hint: Option<&Ty>, span: Span) -> Expr {
        let x = self.expr(x, hint);
        let ty = x.ty.clone();
        let top = match op {
            ast::UnOp::Neg if ty.is_integer() || ty == Ty::Never => tir::UnOp::Neg,
            ast::UnOp::Not if ty == Ty::Bool || ty == Ty::Never => tir::UnOp::Not,
            ast::UnOp::Not if ty.is_integer() => tir::UnOp::BitNot,
            _ => {
                let sym = if op == ast::UnOp::Neg { "-" } else { "!" };
                let n = self.tn(&ty);
                self.type_err(
                    Diagnostic::error(
                        span,
                        format!("cannot apply unary operator `{sym}` to type `{n}`"),
                    )
                    .with_label(format!("operator `{sym}` does not apply to `{n}`")),
                );
                return Self::poison(span);
            }
        };
        if let (ExprKind::Const(v), false) = (&x.kind, ty == Ty::Never) {
            let v = super::consteval::eval_unop(top, &ty, *v);
            return Expr {
                kind: ExprKind::Const(v),
                ty,
                span,
            };
        }
        Expr {
            kind: ExprKind::Unary(top, Box::new(x)),
            ty,
            span,
        }
    }

    /// Checks two operands that must have the same type; the side that is an
    /// untyped literal takes the other side's type.
    fn operands(&mut self, l: &ast::Expr, r: &ast::Expr, hint: Option<&Ty>) -> (Expr, Expr) {
        let (mut le, mut re) = if self.untyped.get(l) && !self.untyped.get(r) {
            let re = self.expr(r, hint);
            let h = concrete(&re.ty).or(hint.cloned());
            (self.expr(l, h.as_ref()), re)
        } else {
            let le = self.expr(l, hint);
            let h = concrete(&le.ty).or(hint.cloned());
            let re = self.expr(r, h.as_ref());
            (le, re)
        };
        if compatible(&re.ty, &le.ty) {
            if le.ty == Ty::Null && re.ty.is_reference() && re.ty != Ty::Null {
                le.ty = re.ty.clone();
            } else if re.ty == Ty::Null && le.ty.is_reference() && le.ty != Ty::Null {
                re.ty = le.ty.clone();
            }
        }
        (le, re)
    }

    fn binary(
        &mut self,
        op: ast::BinOp,
        l: &ast::Expr,
        r: &ast::Expr,
        hint: Option<&Ty>,
        span: Span,
    ) -> Expr {
        use ast::BinOp as B;
        match op {
            B::And | B::Or => {
                let le = self.expr(l, Some(&Ty::Bool));
                let le = self.coerce(le, &Ty::Bool);
                let re = self.expr(r, Some(&Ty::Bool));
                let re = self.coerce(re, &Ty::Bool);
                let lop = if op == B::And {
                    tir::Logical::And
                } else {
                    tir::Logical::Or
                };
                Expr {
                    kind: ExprKind::Logical(lop, Box::new(le), Box::new(re)),
                    ty: Ty::Bool,
                    span,
                }
            }
            B::Shl | B::Shr => {
                let h = hint.filter(|t| t.is_integer());
                let le = self.expr(l, h);
                let re = self.expr(r, None);
                self.build_binary(op, le, re, span)
            }
            B::Eq | B::Ne | B::Lt | B::Le | B::Gt | B::Ge => {
                let (le, re) = self.operands(l, r, None);
                self.build_binary(op, le, re, span)
            }
            _ => {
                let h = hint.filter(|t| t.is_integer());
                let (le, re) = self.operands(l, r, h);
                self.build_binary(op, le, re, span)
            }
        }
    }

    /// Type-checks a binary operator (not `&&`/`||`) on checked operands.
    pub fn build_binary(&mut self, op: ast::BinOp, le: Expr, re: Expr, span: Span) -> Expr {
        use ast::BinOp as B;
        let top = match op {
            B::Add => tir::BinOp::Add,
            B::Sub => tir::BinOp::Sub,
            B::Mul => tir::BinOp::Mul,
            B::Div => tir::BinOp::Div,
            B::Rem => tir::BinOp::Rem,
            B::BitAnd => tir::BinOp::And,
            B::BitOr => tir::BinOp::Or,
            B::BitXor => tir::BinOp::Xor,
            B::Shl => tir::BinOp::Shl,
            B::Shr => tir::BinOp::Shr,
            B::Eq => tir::BinOp::Eq,
            B::Ne => tir::BinOp::Ne,
            B::Lt => tir::BinOp::Lt,
            B::Le => tir::BinOp::Le,
            B::Gt => tir::BinOp::Gt,
            B::Ge => tir::BinOp::Ge,
            B::And | B::Or => {
                self.type_err(Diagnostic::error(
                    span,
                    "logical operator in an invalid position",
                ));
                return Self::poison(span);
            }
        };
        let never = le.ty == Ty::Never || re.ty == Ty::Never;
        let operand_ty = if le.ty == Ty::Never {
            re.ty.clone()
        } else {
            le.ty.clone()
        };
        if matches!(op, B::Shl | B::Shr) {
            for e in [&le, &re] {
                if !(e.ty.is_integer() || e.ty == Ty::Never) {
                    self.bad_operand(op, e, span);
                    return Self::poison(span);
                }
            }
            let ty = le.ty.clone();
            return Expr {
                kind: ExprKind::Binary(top, Box::new(le), Box::new(re)),
                ty,
                span,
            };
        }
        if !compatible(&re.ty, &le.ty) {
            let (w, h) = (self.tn(&le.ty), self.tn(&re.ty));
            self.type_err(
                Diagnostic::error(
                    re.span,
                    format!("mismatched types: expected `{w}`, found `{h}`"),
                )
                .with_label(format!("expected `{w}`, found `{h}`"))
                .with_secondary(le.span, format!("this is of type `{w}`")),
            );
            return Self::poison(span);
        }
        let ok = never
            || match op {
                B::Eq | B::Ne => {
                    operand_ty.is_integer() || operand_ty == Ty::Bool || operand_ty.is_reference()
                }
                _ => operand_ty.is_integer(),
            };
        if !ok {
            self.bad_operand(op, &le, span);
            return Self::poison(span);
        }
        let ty = if top.is_comparison() {
            Ty::Bool
        } else if never {
            Ty::Never
        } else {
            operand_ty
        };
        Expr {
            kind: ExprKind::Binary(top, Box::new(le), Box::new(re)),
            ty,
            span,
        }
    }

    fn bad_operand(&mut self, op: ast::BinOp, e: &Expr, span: Span) {
        let (sym, n) = (op_symbol(op), self.tn(&e.ty));
        self.type_err(
            Diagnostic::error(
                span,
                format!("cannot apply binary operator `{sym}` to type `{n}`"),
            )
            .with_label(format!("operator `{sym}` does not apply to `{n}`")),
        );
    }

    fn cast(&mut self, x: &ast::Expr, t: &ast::TypeExpr, span: Span) -> Expr {
        let target = self.resolve_type(t);
        let x = self.expr(x, None);
        let from_ok = x.ty.is_integer() || x.ty == Ty::Bool || x.ty == Ty::Never;
        let to_ok = target.is_integer() || target == Ty::Never;
        if !from_ok || !to_ok {
            let (f, to) = (self.tn(&x.ty), self.tn(&target));
            self.type_err(
                Diagnostic::error(span, format!("invalid cast from `{f}` to `{to}`")).with_label(
                    "`as` converts between integer types and from `bool` to an integer type",
                ),
            );
            return Self::poison(span);
        }
        Expr {
            kind: ExprKind::Cast(Box::new(x)),
            ty: target,
            span,
        }
    }

    /// Resolves `b.name` for a checked base: (struct, field index, field type).
    fn field_of(&mut self, b: &Expr, name: &ast::Ident) -> Option<(tir::StructId, u32, Ty)> {
        match &b.ty {
            Ty::Struct(sid) => {
                let def = &self.ck.structs[sid.0 as usize];
                match def.fields.iter().position(|(n, _)| *n == name.name) {
                    Some(i) => Some((*sid, i as u32, def.fields[i].1.clone())),
                    None => {
                        let n = def.name.clone();
                        self.type_err(
                            Diagnostic::error(
                                name.span,
                                format!("no field `{}` on type `{n}`", name.name),
                            )
                            .with_label("unknown field"),
                        );
                        None
                    }
                }
            }
            Ty::Never => None,
            other => {
                let n = self.tn(other);
                self.type_err(
                    Diagnostic::error(name.span, format!("no field `{}` on type `{n}`", name.name))
                        .with_label(format!("`{n}` is not a struct")),
                );
                None
            }
        }
    }

    fn elem_type(&mut self, b: &Expr) -> Option<Ty> {
        match &b.ty {
            Ty::Array(t) => Some((**t).clone()),
            Ty::Str => Some(Ty::U8),
            Ty::Never => None,
            other => {
                let n = self.tn(other);
                self.type_err(
                    Diagnostic::error(b.span, format!("cannot index into a value of type `{n}`"))
                        .with_label("not an array or `str`"),
                );
                None
            }
        }
    }

    /// Checks an index and converts it to i64.
    fn index_expr(&mut self, index: &ast::Expr) -> Expr {
        let i = self.expr(index, None);
        match &i.ty {
            Ty::I64 | Ty::Never => i,
            t if t.is_integer() => {
                let span = i.span;
                Expr {
                    kind: ExprKind::Cast(Box::new(i)),
                    ty: Ty::I64,
                    span,
                }
            }
            other => {
                let n = self.tn(other);
                self.type_err(
                    Diagnostic::error(
                        i.span,
                        format!("array index must be an integer, found `{n}`"),
                    )
                    .with_label("not an integer"),
                );
                Self::poison(i.span)
            }
        }
    }

    fn new_struct(
        &mut self,
        path: &ast::Path,
        fields: &[(ast::Ident, ast::Expr)],
        span: Span,
    ) -> Expr {
        let sid = match self.ck.lookup(self.module, path, Ns::Types) {
            Ok(Some(Item {
                kind: ItemKind::Struct(sid),
                ..
            })) => Some(sid),
            Ok(_) => {
                self.name_err(
                    Diagnostic::error(
                        path.span,
                        format!("cannot find struct `{}` in this scope", path.name.name),
                    )
                    .with_label("not found in this scope"),
                );
                None
            }
            Err(()) => None,
        };
        let Some(sid) = sid else {
            for (_, x) in fields {
                self.expr(x, None);
            }
            return Self::poison(span);
        };
        let def_fields = self.ck.structs[sid.0 as usize].fields.clone();
        let sname = self.ck.structs[sid.0 as usize].name.clone();
        let mut seen: Vec<Option<Span>> = vec![None; def_fields.len()];
        let mut out = Vec::with_capacity(fields.len());
        let mut ok = true;
        for (name, x) in fields {
            match def_fields.iter().position(|(n, _)| *n == name.name) {
                Some(i) => {
                    let e = self.expr(x, Some(&def_fields[i].1));
                    let e = self.coerce(e, &def_fields[i].1);
                    if let Some(prev) = seen[i] {
                        self.type_err(
                            Diagnostic::error(
                                name.span,
                                format!("field `{}` specified more than once", name.name),
                            )
                            .with_label("used more than once")
                            .with_secondary(prev, "first use here"),
                        );
                        ok = false;
                    }
                    seen[i] = Some(name.span);
                    out.push((i as u32, e));
                }
                None => {
                    self.expr(x, None);
                    self.type_err(
                        Diagnostic::error(
                            name.span,
                            format!("struct `{sname}` has no field named `{}`", name.name),
                        )
                        .with_label("unknown field"),
                    );
                    ok = false;
                }
            }
        }
        let missing: Vec<String> = def_fields
            .iter()
            .zip(&seen)
            .filter(|(_, s)| s.is_none())
            .map(|((n, _), _)| format!("`{n}`"))
            .collect();
        if !missing.is_empty() {
            self.type_err(
                Diagnostic::error(
                    path.span,
                    format!(
                        "missing field(s) {} in initializer of `{sname}`",
                        missing.join(", ")
                    ),
                )
                .with_label("every field must be given"),
            );
            ok = false;
        }
        if !ok {
            // Keep the struct type so that later uses are still checked.
            return Expr {
                kind: ExprKind::Const(0),
                ty: Ty::Struct(sid),
                span,
            };
        }
        Expr {
            kind: ExprKind::NewStruct(sid, out),
            ty: Ty::Struct(sid),
            span,
        }
    }

    fn if_expr(
        &mut self,
        c: &ast::Expr,
        then: &ast::Block,
        els: Option<&ast::Expr>,
        hint: Option<&Ty>,
        span: Span,
    ) -> Expr {
        let cond = self.expr(c, Some(&Ty::Bool));
        let cond = self.coerce(cond, &Ty::Bool);
        let mut tb = self.block(then, hint);
        let Some(els) = els else {
            return Expr {
                kind: ExprKind::If(Box::new(cond), tb, None),
                ty: Ty::Unit,
                span,
            };
        };
        let h = concrete(&tb.ty).or(hint.cloned());
        let mut ee = self.expr(els, h.as_ref());
        let mut eb = match &mut ee.kind {
            ExprKind::Block(b) => std::mem::replace(
                b,
                Block {
                    stmts: Vec::new(),
                    tail: None,
                    ty: Ty::Unit,
                },
            ),
            _ => {
                let ty = ee.ty.clone();
                Block {
                    stmts: Vec::new(),
                    tail: Some(Box::new(ee)),
                    ty,
                }
            }
        };
        let ty = if !compatible(&eb.ty, &tb.ty) {
            let (t, e) = (self.tn(&tb.ty), self.tn(&eb.ty));
            let then_span = tb.tail.as_ref().map_or(then.span, |x| x.span);
            self.type_err(
                Diagnostic::error(els.span, "`if` and `else` have incompatible types")
                    .with_label(format!("expected `{t}`, found `{e}`"))
                    .with_secondary(then_span, format!("this is of type `{t}`")),
            );
            Ty::Never
        } else if tb.ty == Ty::Never || (tb.ty == Ty::Null && eb.ty != Ty::Never) {
            eb.ty.clone()
        } else {
            tb.ty.clone()
        };
        if tb.ty == Ty::Null && ty.is_reference() {
            tb.ty = ty.clone();
            if let Some(t) = tb.tail.as_mut() {
                t.ty = ty.clone();
            }
        }
        if eb.ty == Ty::Null && ty.is_reference() {
            eb.ty = ty.clone();
            if let Some(t) = eb.tail.as_mut() {
                t.ty = ty.clone();
            }
        }
        Expr {
            kind: ExprKind::If(Box::new(cond), tb, Some(eb)),
            ty,
            span,
        }
    }
}

/// Whether expressions' types come from their context (an unsuffixed
/// integer literal or `null`, possibly under operators), remembered per
/// syntax node: checking a chain `e1 + e2 + ... + en` asks about every
/// prefix, which would cost quadratic time unmemoized.
#[derive(Default)]
pub(crate) struct Untyped {
    known: HashMap<*const ast::Expr, bool>,
}

impl Untyped {
    pub(crate) fn get(&mut self, e: &ast::Expr) -> bool {
        let key: *const ast::Expr = e;
        if let Some(&known) = self.known.get(&key) {
            return known;
        }
        let untyped = match &e.kind {
            ast::ExprKind::Int(_, None) | ast::ExprKind::Null => true,
            ast::ExprKind::Unary(_, x) => self.get(x),
            ast::ExprKind::Binary(op, l, r) => match op {
                ast::BinOp::Shl | ast::BinOp::Shr => self.get(l),
                ast::BinOp::Add
                | ast::BinOp::Sub
                | ast::BinOp::Mul
                | ast::BinOp::Div
                | ast::BinOp::Rem
                | ast::BinOp::BitAnd
                | ast::BinOp::BitOr
                | ast::BinOp::BitXor => self.get(l) && self.get(r),
                _ => false,
            },
            ast::ExprKind::If(_, then, Some(els)) => self.block(then) && self.get(els),
            ast::ExprKind::Block(b) => self.block(b),
            _ => false,
        };
        self.known.insert(key, untyped);
        untyped
    }

    fn block(&mut self, b: &ast::Block) -> bool {
        b.tail.as_ref().is_some_and(|t| self.get(t))
    }
}

/// A type that can serve as a hint for the other operand.
fn concrete(ty: &Ty) -> Option<Ty> {
    match ty {
        Ty::Never | Ty::Null | Ty::Unit => None,
        t => Some(t.clone()),
    }
}

pub(crate) fn is_builtin(name: &str) -> bool {
    matches!(name, "print" | "print_str" | "len" | "exit")
}

fn op_symbol(op: ast::BinOp) -> &'static str {
    use ast::BinOp as B;
    match op {
        B::Add => "+",
        B::Sub => "-",
        B::Mul => "*",
        B::Div => "/",
        B::Rem => "%",
        B::BitAnd => "&",
        B::BitOr => "|",
        B::BitXor => "^",
        B::Shl => "<<",
        B::Shr => ">>",
        B::Eq => "==",
        B::Ne => "!=",
        B::Lt => "<",
        B::Le => "<=",
        B::Gt => ">",
        B::Ge => ">=",
        B::And => "&&",
        B::Or => "||",
    }
}

/// Operators that cannot form a compound assignment.
fn is_comparison_or_logical(op: ast::BinOp) -> bool {
    use ast::BinOp as B;
    matches!(
        op,
        B::Eq | B::Ne | B::Lt | B::Le | B::Gt | B::Ge | B::And | B::Or
    )
}
