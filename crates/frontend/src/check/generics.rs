//! Calls and monomorphization.
//!
//! A call's callee is resolved to a function, an extern, a builtin, a generic
//! function or a function parameter of the enclosing generic. Calling a
//! generic function creates its instance for the given (or inferred)
//! arguments: [`Checker::instantiate`] memoizes instances by (generic,
//! arguments), computes the instance's signature right away and queues its
//! body, so instantiation never recurses on the Rust stack; the depth of
//! nested instantiations is bounded by [`MAX_INSTANCE_DEPTH`].
//!
//! Instance symbols are `module::name<arg,arg>` with types spelled as in
//! source, constants in decimal (`true`/`false` for bool) and function
//! arguments by their own symbol.

use std::rc::Rc;

use super::consteval::Folded;
use super::expr::FnCk;
use super::types::compatible;
use super::{
    Checker, Env, FnInfo, GArg, GenericId, Item, ItemKind, Ns, MAX_INSTANCES, MAX_INSTANCE_DEPTH,
    PLACEHOLDER_FN,
};
use crate::ast;
use crate::source::{Diagnostic, Span};
use crate::tir::{Builtin, Expr, ExprKind, ExternId, FuncId, Ty};

/// What a call's callee resolved to.
enum Callee {
    Func(FuncId),
    Extern(ExternId),
    Builtin(Builtin),
    Generic(GenericId),
    /// A function parameter of a generic checked in names-only mode.
    Placeholder,
    /// Already reported.
    Error,
}

impl<'a> Checker<'a> {
    /// Returns the instance of generic `g` for `args`, creating and queueing
    /// it if needed. `depth` is the depth the new instance would have.
    pub(crate) fn instantiate(
        &mut self,
        g: GenericId,
        args: Vec<GArg>,
        use_span: Span,
        depth: u32,
    ) -> Option<FuncId> {
        let key = (g, args);
        if let Some(&id) = self.instances.get(&key) {
            return Some(id);
        }
        let args = key.1.clone();
        let (module, decl) = (
            self.generics[g.0 as usize].module,
            self.generics[g.0 as usize].decl,
        );
        let symbol = self.instance_symbol(module, &decl.name.name, &args);
        if depth > MAX_INSTANCE_DEPTH {
            self.error(
                Diagnostic::error(use_span, "instantiation depth limit exceeded")
                    .with_label(format!("instantiating `{symbol}` here"))
                    .with_note(format!(
                        "generic instances may nest at most {MAX_INSTANCE_DEPTH} levels deep"
                    )),
            );
            return None;
        }
        if self.instances.len() >= MAX_INSTANCES {
            if !self.too_many_instances {
                self.too_many_instances = true;
                self.error(
                    Diagnostic::error(use_span, "too many generic instances")
                        .with_label(format!("instantiating `{symbol}` here"))
                        .with_note(format!(
                            "a program may have at most {MAX_INSTANCES} generic instances"
                        )),
                );
            }
            return None;
        }
        self.generics[g.0 as usize].instantiated = true;
        let env: Env = decl
            .generics
            .iter()
            .map(|p| super::generic_param_name(p).name.clone())
            .zip(args)
            .collect();
        let first_new = self.diags.list.len();
        let params: Vec<Ty> = decl
            .params
            .iter()
            .map(|p| self.resolve_type(module, &env, &p.ty))
            .collect();
        let ret = decl
            .ret
            .as_ref()
            .map_or(Ty::Unit, |t| self.resolve_type(module, &env, t));
        for d in &mut self.diags.list[first_new..] {
            d.notes.push(format!("in instance `{symbol}`"));
        }
        let id = FuncId(self.fns.len() as u32);
        self.fns.push(FnInfo {
            module,
            decl,
            env: Rc::new(env),
            params,
            ret,
            symbol,
            is_instance: true,
            depth,
            func: None,
        });
        self.instances.insert(key, id);
        self.queue.push_back(id);
        Some(id)
    }

    fn instance_symbol(&self, module: super::ModuleId, name: &str, args: &[GArg]) -> String {
        let parts: Vec<String> = args
            .iter()
            .map(|a| match a {
                GArg::Type(t) => self.tn(t),
                GArg::Const(Ty::Bool, v) => (if *v != 0 { "true" } else { "false" }).to_string(),
                GArg::Const(_, v) => v.to_string(),
                GArg::Fn(f) => self
                    .fns
                    .get(f.0 as usize)
                    .map_or_else(|| "?".to_string(), |f| f.symbol.clone()),
            })
            .collect();
        format!(
            "{}::{}<{}>",
            self.scopes[module.0 as usize].name,
            name,
            parts.join(",")
        )
    }
}

impl<'c, 'a> FnCk<'c, 'a> {
    /// Checks `callee(args)`.
    pub fn call(&mut self, callee: &ast::Expr, args: &[ast::Expr], span: Span) -> Expr {
        let ast::ExprKind::Path(path, gargs) = &callee.kind else {
            self.type_err(
                Diagnostic::error(callee.span, "expected a function name")
                    .with_label("only named functions can be called"),
            );
            return self.args_unchecked(args, span);
        };
        match self.resolve_callee(path, gargs) {
            Callee::Func(f) => {
                let params = self.ck.fns[f.0 as usize].params.clone();
                let ret = self.ck.fns[f.0 as usize].ret.clone();
                let name = self.ck.fns[f.0 as usize].decl.name.name.clone();
                match self.args_against(&name, &params, args, span) {
                    Some(args) => Expr {
                        kind: ExprKind::Call(f, args),
                        ty: ret,
                        span,
                    },
                    None => Self::poison(span),
                }
            }
            Callee::Extern(x) => {
                let def = &self.ck.externs[x.0 as usize];
                let (params, ret, name) = (def.params.clone(), def.ret.clone(), def.name.clone());
                match self.args_against(&name, &params, args, span) {
                    Some(args) => Expr {
                        kind: ExprKind::CallExtern(x, args),
                        ty: ret,
                        span,
                    },
                    None => Self::poison(span),
                }
            }
            Callee::Builtin(b) => self.builtin(b, args, span),
            Callee::Generic(g) => {
                if self.names_only {
                    self.resolve_generic_arg_names(gargs);
                    return self.args_unchecked(args, span);
                }
                if gargs.is_empty() {
                    return match self.infer_instance(g, args, span) {
                        Some((f, checked)) => {
                            let params = self.ck.fns[f.0 as usize].params.clone();
                            let ret = self.ck.fns[f.0 as usize].ret.clone();
                            let args = checked
                                .into_iter()
                                .zip(&params)
                                .map(|(e, p)| self.coerce(e, p))
                                .collect();
                            Expr {
                                kind: ExprKind::Call(f, args),
                                ty: ret,
                                span,
                            }
                        }
                        None => Self::poison(span),
                    };
                }
                let instance = self
                    .explicit_args(g, gargs, path.span)
                    .and_then(|a| self.ck.instantiate(g, a, path.span, self.depth + 1));
                let Some(f) = instance else {
                    return self.args_unchecked(args, span);
                };
                let params = self.ck.fns[f.0 as usize].params.clone();
                let ret = self.ck.fns[f.0 as usize].ret.clone();
                let name = self.ck.fns[f.0 as usize].decl.name.name.clone();
                match self.args_against(&name, &params, args, span) {
                    Some(args) => Expr {
                        kind: ExprKind::Call(f, args),
                        ty: ret,
                        span,
                    },
                    None => Self::poison(span),
                }
            }
            Callee::Placeholder | Callee::Error => self.args_unchecked(args, span),
        }
    }

    /// Checks arguments with no expectations (after an error) and yields the
    /// error type.
    fn args_unchecked(&mut self, args: &[ast::Expr], span: Span) -> Expr {
        for a in args {
            self.expr(a, None);
        }
        Self::poison(span)
    }

    /// Checks call arguments against parameter types.
    fn args_against(
        &mut self,
        name: &str,
        params: &[Ty],
        args: &[ast::Expr],
        span: Span,
    ) -> Option<Vec<Expr>> {
        if params.len() != args.len() {
            self.arity_error(name, params.len(), args.len(), span);
            self.args_unchecked(args, span);
            return None;
        }
        Some(
            params
                .iter()
                .zip(args)
                .map(|(p, a)| {
                    let e = self.expr(a, Some(p));
                    self.coerce(e, p)
                })
                .collect(),
        )
    }

    fn arity_error(&mut self, name: &str, want: usize, have: usize, span: Span) {
        let plural = |n: usize| if n == 1 { "argument" } else { "arguments" };
        let was = if have == 1 { "was" } else { "were" };
        self.type_err(
            Diagnostic::error(
                span,
                format!(
                    "function `{name}` takes {want} {} but {have} {} {was} supplied",
                    plural(want),
                    plural(have)
                ),
            )
            .with_label(format!("expected {want} {}", plural(want))),
        );
    }

    fn resolve_callee(&mut self, path: &ast::Path, gargs: &[ast::GenericArg]) -> Callee {
        let name = &path.name.name;
        if path.module.is_none() {
            match self.env_lookup(name) {
                Some(GArg::Fn(f)) => {
                    if !gargs.is_empty() {
                        self.no_generic_args(path);
                        return Callee::Error;
                    }
                    return if f == PLACEHOLDER_FN {
                        Callee::Placeholder
                    } else {
                        Callee::Func(f)
                    };
                }
                Some(_) => {
                    self.name_err(
                        Diagnostic::error(
                            path.span,
                            format!("expected function, found generic parameter `{name}`"),
                        )
                        .with_label("not a function"),
                    );
                    return Callee::Error;
                }
                None => {}
            }
        }
        let item = match self.ck.lookup(self.module, path, Ns::Values) {
            Ok(item) => item,
            Err(()) => return Callee::Error,
        };
        match item {
            Some(Item {
                kind: ItemKind::Generic(g),
                ..
            }) => Callee::Generic(g),
            Some(_) if !gargs.is_empty() => {
                self.no_generic_args(path);
                Callee::Error
            }
            Some(Item {
                kind: ItemKind::Func(f),
                ..
            }) => Callee::Func(f),
            Some(Item {
                kind: ItemKind::Extern(i),
                ..
            }) => Callee::Extern(self.ck.extern_ids[i]),
            Some(Item {
                kind: ItemKind::Global(_) | ItemKind::Struct(_),
                ..
            }) => {
                self.type_err(
                    Diagnostic::error(
                        path.span,
                        format!("expected function, found global `{name}`"),
                    )
                    .with_label("not a function"),
                );
                Callee::Error
            }
            None => {
                let builtin = match name.as_str() {
                    "print" => Some(Builtin::Print),
                    "print_str" => Some(Builtin::PrintStr),
                    "len" => Some(Builtin::Len),
                    "exit" => Some(Builtin::Exit),
                    _ => None,
                };
                match builtin {
                    Some(b) if path.module.is_none() => {
                        if !gargs.is_empty() {
                            self.no_generic_args(path);
                            return Callee::Error;
                        }
                        Callee::Builtin(b)
                    }
                    _ => {
                        self.name_err(
                            Diagnostic::error(
                                path.span,
                                format!("cannot find function `{name}` in this scope"),
                            )
                            .with_label("not found in this scope"),
                        );
                        Callee::Error
                    }
                }
            }
        }
    }

    fn no_generic_args(&mut self, path: &ast::Path) {
        self.type_err(
            Diagnostic::error(
                path.span,
                format!("`{}` does not take generic arguments", path.name.name),
            )
            .with_label("not a generic function"),
        );
    }

    fn builtin(&mut self, b: Builtin, args: &[ast::Expr], span: Span) -> Expr {
        let name = match b {
            Builtin::Print => "print",
            Builtin::PrintStr => "print_str",
            Builtin::Len => "len",
            Builtin::Exit => "exit",
        };
        if args.len() != 1 {
            self.arity_error(name, 1, args.len(), span);
            return self.args_unchecked(args, span);
        }
        let (arg, ty) = match b {
            Builtin::Print => {
                let e = self.expr(&args[0], None);
                if !(e.ty.is_integer() || matches!(e.ty, Ty::Bool | Ty::Never)) {
                    let n = self.tn(&e.ty);
                    self.type_err(
                        Diagnostic::error(
                            e.span,
                            format!("`print` cannot print a value of type `{n}`"),
                        )
                        .with_label("expected an integer or `bool`; use `print_str` for a `str`"),
                    );
                }
                (e, Ty::Unit)
            }
            Builtin::PrintStr => {
                let e = self.expr(&args[0], Some(&Ty::Str));
                (self.coerce(e, &Ty::Str), Ty::Unit)
            }
            Builtin::Len => {
                let mut e = self.expr(&args[0], None);
                match &e.ty {
                    Ty::Array(_) | Ty::Str | Ty::Never => {}
                    // `len(null)` traps at run time; give the null a type.
                    Ty::Null => e.ty = Ty::Str,
                    other => {
                        let n = self.tn(other);
                        self.type_err(
                            Diagnostic::error(
                                e.span,
                                format!("`len` takes an array or `str`, found `{n}`"),
                            )
                            .with_label("not an array"),
                        );
                    }
                }
                (e, Ty::I64)
            }
            Builtin::Exit => {
                let e = self.expr(&args[0], Some(&Ty::I32));
                (self.coerce(e, &Ty::I32), Ty::Never)
            }
        };
        Expr {
            kind: ExprKind::Builtin(b, vec![arg]),
            ty,
            span,
        }
    }

    // ---- generic arguments ---------------------------------------------------------

    /// Evaluates explicit generic arguments for generic `g`.
    fn explicit_args(
        &mut self,
        g: GenericId,
        gargs: &[ast::GenericArg],
        span: Span,
    ) -> Option<Vec<GArg>> {
        let (gm, decl) = (
            self.ck.generics[g.0 as usize].module,
            self.ck.generics[g.0 as usize].decl,
        );
        if gargs.len() != decl.generics.len() {
            let n = decl.generics.len();
            self.type_err(
                Diagnostic::error(
                    span,
                    format!(
                        "function `{}` takes {n} generic argument{} but {} {} supplied",
                        decl.name.name,
                        if n == 1 { "" } else { "s" },
                        gargs.len(),
                        if gargs.len() == 1 { "was" } else { "were" }
                    ),
                )
                .with_label(format!(
                    "expected {n} generic argument{}",
                    if n == 1 { "" } else { "s" }
                )),
            );
            return None;
        }
        let mut env: Env = Vec::new();
        let mut ok = true;
        for (p, a) in decl.generics.iter().zip(gargs) {
            let value = match p {
                ast::GenericParam::Type(_) => self.type_arg(a).map(GArg::Type),
                ast::GenericParam::Const(_, t) => {
                    let ty = self.ck.resolve_type(gm, &env, t);
                    if !(ty.is_integer() || ty == Ty::Bool) {
                        if ty != Ty::Never {
                            let n = self.tn(&ty);
                            self.type_err(
                                Diagnostic::error(t.span, format!("constant generic parameters must be integers or `bool`, not `{n}`"))
                                    .with_label("invalid type"),
                            );
                        }
                        None
                    } else {
                        self.const_arg(a, &ty).map(|v| GArg::Const(ty, v))
                    }
                }
                ast::GenericParam::Fn(pname, ft) => {
                    let params: Vec<Ty> = ft
                        .params
                        .iter()
                        .map(|t| self.ck.resolve_type(gm, &env, t))
                        .collect();
                    let ret = ft
                        .ret
                        .as_ref()
                        .map_or(Ty::Unit, |t| self.ck.resolve_type(gm, &env, t));
                    self.fn_arg(a, pname, &params, &ret).map(GArg::Fn)
                }
            };
            match value {
                Some(v) => env.push((super::generic_param_name(p).name.clone(), v)),
                None => ok = false,
            }
        }
        ok.then(|| env.into_iter().map(|(_, v)| v).collect())
    }

    fn generic_arg_span(a: &ast::GenericArg) -> Span {
        match a {
            ast::GenericArg::Path(p, _) => p.span,
            ast::GenericArg::ArrayType(t) => t.span,
            ast::GenericArg::Const(e) => e.span,
        }
    }

    fn type_arg(&mut self, a: &ast::GenericArg) -> Option<Ty> {
        let ty = match a {
            ast::GenericArg::Path(p, sub) if sub.is_empty() => {
                let t = ast::TypeExpr {
                    kind: ast::TypeExprKind::Named(p.clone()),
                    span: p.span,
                };
                self.resolve_type(&t)
            }
            ast::GenericArg::ArrayType(t) => self.resolve_type(t),
            _ => {
                self.type_err(
                    Diagnostic::error(
                        Self::generic_arg_span(a),
                        "expected a type as generic argument",
                    )
                    .with_label("this generic parameter is a type parameter"),
                );
                return None;
            }
        };
        (ty != Ty::Never).then_some(ty)
    }

    fn const_arg(&mut self, a: &ast::GenericArg, ty: &Ty) -> Option<i64> {
        let e = match a {
            ast::GenericArg::Const(e) => self.expr(e, Some(ty)),
            ast::GenericArg::Path(p, sub) if sub.is_empty() && self.names_a_type(p) => {
                self.type_err(
                    Diagnostic::error(
                        p.span,
                        format!(
                            "expected a constant as generic argument, found type `{}`",
                            p.name.name
                        ),
                    )
                    .with_label("this generic parameter is a constant"),
                );
                return None;
            }
            ast::GenericArg::Path(p, sub) if sub.is_empty() => {
                let x = ast::Expr {
                    kind: ast::ExprKind::Path(p.clone(), Vec::new()),
                    span: p.span,
                };
                self.expr(&x, Some(ty))
            }
            _ => {
                self.type_err(
                    Diagnostic::error(
                        Self::generic_arg_span(a),
                        "expected a constant as generic argument",
                    )
                    .with_label("this generic parameter is a constant"),
                );
                return None;
            }
        };
        if e.ty == Ty::Never {
            return None;
        }
        let e = self.coerce(e, ty);
        if !compatible(&e.ty, ty) {
            return None;
        }
        match self.fold_constant(&e) {
            Some(Folded::Int(v)) => Some(v),
            _ => None,
        }
    }

    /// Names-only mode: reports generic arguments that name nothing.
    fn resolve_generic_arg_names(&mut self, gargs: &[ast::GenericArg]) {
        for a in gargs {
            match a {
                ast::GenericArg::Path(p, sub) => {
                    self.resolve_generic_arg_names(sub);
                    let known = self.names_a_type(p)
                        || (p.module.is_none()
                            && (self.env_lookup(&p.name.name).is_some()
                                || self.find_local(&p.name.name).is_some()));
                    if known {
                        continue;
                    }
                    match self.ck.lookup(self.module, p, Ns::Values) {
                        Ok(Some(_)) | Err(()) => {}
                        Ok(None) => self.name_err(
                            Diagnostic::error(
                                p.span,
                                format!("cannot find `{}` in this scope", p.name.name),
                            )
                            .with_label("not a type, function or constant in scope"),
                        ),
                    }
                }
                ast::GenericArg::ArrayType(t) => {
                    self.resolve_type(t);
                }
                ast::GenericArg::Const(e) => {
                    self.expr(e, None);
                }
            }
        }
    }

    /// Whether a path written as a generic argument names a type (a
    /// primitive, a type parameter or a struct) rather than a value.
    fn names_a_type(&self, p: &ast::Path) -> bool {
        if p.module.is_none() {
            if matches!(p.name.name.as_str(), "i64" | "i32" | "u8" | "bool" | "str") {
                return true;
            }
            if let Some(a) = self.env_lookup(&p.name.name) {
                return matches!(a, GArg::Type(_));
            }
        }
        let target = match &p.module {
            None => Some(self.module),
            Some(q) => {
                let scope = &self.ck.scopes[self.module.0 as usize];
                if q.name == scope.name {
                    Some(self.module)
                } else {
                    scope.imports.get(&q.name).copied()
                }
            }
        };
        target.is_some_and(|m| {
            self.ck.scopes[m.0 as usize]
                .types
                .contains_key(&p.name.name)
        })
    }

    /// Resolves a function generic argument and checks its signature.
    fn fn_arg(
        &mut self,
        a: &ast::GenericArg,
        pname: &ast::Ident,
        params: &[Ty],
        ret: &Ty,
    ) -> Option<FuncId> {
        let ast::GenericArg::Path(path, sub) = a else {
            self.type_err(
                Diagnostic::error(
                    Self::generic_arg_span(a),
                    "expected a function as generic argument",
                )
                .with_label(format!("`{}` is a function parameter", pname.name)),
            );
            return None;
        };
        let f = match self.resolve_callee(path, sub) {
            Callee::Func(f) => f,
            Callee::Generic(g) => {
                if sub.is_empty() {
                    self.type_err(
                        Diagnostic::error(
                            path.span,
                            format!(
                                "generic function `{}` needs generic arguments here",
                                path.name.name
                            ),
                        )
                        .with_label("write its arguments: `f<...>`"),
                    );
                    return None;
                }
                let args = self.explicit_args(g, sub, path.span)?;
                self.ck.instantiate(g, args, path.span, self.depth + 1)?
            }
            Callee::Extern(_) | Callee::Builtin(_) => {
                self.type_err(
                    Diagnostic::error(
                        path.span,
                        format!("`{}` cannot be a generic argument", path.name.name),
                    )
                    .with_label("only Pare functions can be passed as function arguments"),
                );
                return None;
            }
            Callee::Placeholder | Callee::Error => return None,
        };
        let info = &self.ck.fns[f.0 as usize];
        if info.params != params || info.ret != *ret {
            let have = self.signature(&info.params.clone(), &info.ret.clone());
            let want = self.signature(params, ret);
            self.type_err(
                Diagnostic::error(
                    path.span,
                    format!("mismatched function signature: expected `{want}`, found `{have}`"),
                )
                .with_label(format!("`{}` has signature `{have}`", path.name.name))
                .with_secondary(pname.span, format!("`{}` requires `{want}`", pname.name)),
            );
            return None;
        }
        Some(f)
    }

    fn signature(&self, params: &[Ty], ret: &Ty) -> String {
        let ps: Vec<String> = params.iter().map(|t| self.tn(t)).collect();
        match ret {
            Ty::Unit => format!("fn({})", ps.join(", ")),
            r => format!("fn({}) -> {}", ps.join(", "), self.tn(r)),
        }
    }

    // ---- inference ---------------------------------------------------------------------------

    /// Infers the type arguments of generic `g` from the call's arguments and
    /// returns the instance with the checked arguments (in source order).
    /// Arguments that are untyped literals are checked last, with the
    /// parameter type as a hint once it is known.
    fn infer_instance(
        &mut self,
        g: GenericId,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<(FuncId, Vec<Expr>)> {
        let (gm, decl) = (
            self.ck.generics[g.0 as usize].module,
            self.ck.generics[g.0 as usize].decl,
        );
        let names: Vec<String> = decl
            .generics
            .iter()
            .map(|p| super::generic_param_name(p).name.clone())
            .collect();
        if decl
            .generics
            .iter()
            .any(|p| !matches!(p, ast::GenericParam::Type(_)))
        {
            self.type_err(
                Diagnostic::error(span, format!("cannot infer the generic arguments of `{}`", decl.name.name))
                    .with_label("only type parameters can be inferred; give the arguments explicitly: `f<...>(...)`"),
            );
            self.args_unchecked(args, span);
            return None;
        }
        if decl.params.len() != args.len() {
            self.arity_error(&decl.name.name, decl.params.len(), args.len(), span);
            self.args_unchecked(args, span);
            return None;
        }
        let mut bound: Vec<Option<Ty>> = vec![None; names.len()];
        let untyped: Vec<bool> = args.iter().map(|a| self.untyped.get(a)).collect();
        let order: Vec<usize> = (0..args.len())
            .filter(|&i| !untyped[i])
            .chain((0..args.len()).filter(|&i| untyped[i]))
            .collect();
        let mut checked: Vec<Option<Expr>> = vec![None; args.len()];
        for i in order {
            let hint = self.param_hint(gm, &decl.params[i].ty, &names, &bound);
            let e = self.expr(&args[i], hint.as_ref());
            match_type(&decl.params[i].ty, &e.ty, &names, &mut bound);
            checked[i] = Some(e);
        }
        let checked: Vec<Expr> = checked.into_iter().flatten().collect();
        let mut targs = Vec::with_capacity(names.len());
        for (n, b) in names.iter().zip(bound) {
            match b {
                Some(t) => targs.push(GArg::Type(t)),
                None => {
                    if checked.iter().all(|e| e.ty != Ty::Never) {
                        self.type_err(
                            Diagnostic::error(
                                span,
                                format!(
                                    "cannot infer type for type parameter `{n}` of `{}`",
                                    decl.name.name
                                ),
                            )
                            .with_label(format!("specify it: `{}<...>(...)`", decl.name.name)),
                        );
                    }
                    return None;
                }
            }
        }
        let f = self.ck.instantiate(g, targs, span, self.depth + 1)?;
        Some((f, checked))
    }

    /// The type of a generic's parameter if every type parameter it mentions
    /// is already inferred.
    fn param_hint(
        &mut self,
        gm: super::ModuleId,
        t: &ast::TypeExpr,
        names: &[String],
        bound: &[Option<Ty>],
    ) -> Option<Ty> {
        let mut mentioned = Vec::new();
        mentions(t, names, &mut mentioned);
        let mut env: Env = Vec::new();
        for i in mentioned {
            env.push((names[i].clone(), GArg::Type(bound[i].clone()?)));
        }
        let first_new = self.ck.diags.list.len();
        let ty = self.ck.resolve_type(gm, &env, t);
        self.ck.diags.list.truncate(first_new);
        (ty != Ty::Never).then_some(ty)
    }
}

/// Type parameters (indices into `names`) that a type expression mentions.
fn mentions(t: &ast::TypeExpr, names: &[String], out: &mut Vec<usize>) {
    match &t.kind {
        ast::TypeExprKind::Named(p) if p.module.is_none() => {
            if let Some(i) = names.iter().position(|n| *n == p.name.name) {
                out.push(i);
            }
        }
        ast::TypeExprKind::Named(_) => {}
        ast::TypeExprKind::Array(e) | ast::TypeExprKind::FixedArray(e, _) => {
            mentions(e, names, out)
        }
    }
}

/// Binds type parameters by matching a parameter's type expression against
/// an argument's type; the first binding wins (a conflict is then reported as
/// an ordinary argument type mismatch).
fn match_type(t: &ast::TypeExpr, ty: &Ty, names: &[String], bound: &mut [Option<Ty>]) {
    match (&t.kind, ty) {
        (_, Ty::Never | Ty::Null | Ty::Unit) => {}
        (ast::TypeExprKind::Named(p), _) if p.module.is_none() => {
            if let Some(i) = names.iter().position(|n| *n == p.name.name) {
                if bound[i].is_none() {
                    bound[i] = Some(ty.clone());
                }
            }
        }
        (ast::TypeExprKind::Array(e), Ty::Array(elem)) => match_type(e, elem, names, bound),
        _ => {}
    }
}
