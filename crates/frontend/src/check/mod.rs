//! Name resolution, type checking and monomorphization: [`ast`] → [`tir`].
//!
//! [`check_program`] works in phases over all modules at once:
//! 1. *collect*: every module's items go into its two namespaces (values:
//!    functions, externs, globals; types: structs), and imports are resolved;
//!    non-generic functions get their [`FuncId`]s here, in module and source
//!    order, so that they come first in [`tir::Program::funcs`];
//! 2. *declare*: struct fields and layouts, function and extern signatures,
//!    global types, the root module's `main`;
//! 3. *globals*: initializers are checked and folded to constants
//!    ([`consteval`]);
//! 4. *bodies*: every non-generic function body is checked ([`expr`]); a use
//!    of a generic function with concrete arguments creates (or reuses) an
//!    instance and queues its body ([`generics`]), and the queue is drained
//!    in FIFO order, so instance ids are deterministic. Generic functions
//!    never instantiated are checked in a names-only mode;
//! 5. *emit*: per-module emit lists and linkage ([`emit`]).
//!
//! Errors never stop the checker early: an erroneous expression gets the type
//! [`Ty::Never`], which is compatible with every type, so one mistake yields
//! one diagnostic. The program is returned only if no error was reported.
//! Maps that are iterated use `BTreeMap` or vectors, so output is
//! deterministic; `hashbrown` maps are only used for lookups.

mod consteval;
mod emit;
mod expr;
mod generics;
mod types;

pub use consteval::{eval_binop, eval_unop, normalize};
pub use types::{layout, ty_name};

use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;

use hashbrown::HashMap;

use crate::ast;
use crate::source::{Diagnostic, Diagnostics, FileId, Severity, Span};
use crate::tir::{self, ExternId, FuncId, GlobalId, ModuleId, StructId, Ty};

/// Maximum nesting of generic instantiations.
const MAX_INSTANCE_DEPTH: u32 = 64;
/// Maximum number of generic instances in a program: the depth limit alone
/// does not bound programs whose instantiation tree branches.
const MAX_INSTANCES: usize = 50_000;

/// Checks and monomorphizes a program; `modules[0]` is the root module.
/// Returns `None` iff errors were reported.
pub fn check_program(modules: &[ast::Module], diags: &mut Diagnostics) -> Option<tir::Program> {
    // The checker recurses over the syntax tree: give it a stack of its own.
    let diags_ref = &mut *diags;
    match crate::stack::on_phase_stack("pare-check", move || check_program_here(modules, diags_ref))
    {
        Some(program) => program,
        // No thread could be started: check on this one.
        None => check_program_here(modules, diags),
    }
}

fn check_program_here(modules: &[ast::Module], diags: &mut Diagnostics) -> Option<tir::Program> {
    let errors_before = count_errors(diags);
    let mut ck = Checker::new(modules, diags);
    ck.collect();
    ck.declare();
    ck.check_globals();
    ck.check_bodies();
    if count_errors(ck.diags) > errors_before {
        return None;
    }
    ck.finish()
}

fn count_errors(diags: &Diagnostics) -> usize {
    diags
        .list
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count()
}

/// Index of a generic function declaration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct GenericId(pub u32);

/// A compile-time argument of a generic instance.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum GArg {
    Type(Ty),
    /// A constant of an integer type or bool, normalized.
    Const(Ty, i64),
    Fn(FuncId),
}

/// Stands for "some function" when a generic is checked without arguments.
pub(crate) const PLACEHOLDER_FN: FuncId = FuncId(u32::MAX);

/// The generic parameters in scope in a function body, with their values.
pub(crate) type Env = Vec<(String, GArg)>;

#[derive(Clone, Copy, Debug)]
pub(crate) enum ItemKind {
    Func(FuncId),
    Generic(GenericId),
    /// Index into `Checker::extern_decls`.
    Extern(usize),
    Global(GlobalId),
    Struct(StructId),
}

impl ItemKind {
    fn describe(self) -> &'static str {
        match self {
            ItemKind::Func(_) | ItemKind::Generic(_) => "function",
            ItemKind::Extern(_) => "extern function",
            ItemKind::Global(_) => "global",
            ItemKind::Struct(_) => "struct",
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Item {
    pub kind: ItemKind,
    pub is_pub: bool,
    /// The span of the item's name at its definition.
    pub span: Span,
}

/// Which namespace a name is looked up in.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ns {
    Values,
    Types,
}

pub(crate) struct ModScope {
    pub name: String,
    pub file: FileId,
    pub imports: BTreeMap<String, ModuleId>,
    pub values: BTreeMap<String, Item>,
    pub types: BTreeMap<String, Item>,
}

/// A function (non-generic, or a generic instance) and its signature.
pub(crate) struct FnInfo<'a> {
    pub module: ModuleId,
    pub decl: &'a ast::FnDecl,
    pub env: Rc<Env>,
    pub params: Vec<Ty>,
    pub ret: Ty,
    pub symbol: String,
    pub is_instance: bool,
    /// Instantiation depth: 0 for non-generic functions.
    pub depth: u32,
    pub func: Option<tir::Func>,
}

pub(crate) struct GenericInfo<'a> {
    pub module: ModuleId,
    pub decl: &'a ast::FnDecl,
    pub instantiated: bool,
}

pub(crate) struct Checker<'a> {
    pub modules: &'a [ast::Module],
    pub diags: &'a mut Diagnostics,
    pub scopes: Vec<ModScope>,
    pub structs: Vec<tir::StructDef>,
    pub struct_names: Vec<String>,
    struct_decls: Vec<(ModuleId, &'a ast::StructDecl)>,
    pub globals: Vec<tir::GlobalDef>,
    global_decls: Vec<(ModuleId, &'a ast::GlobalDecl)>,
    pub externs: Vec<tir::ExternDef>,
    extern_decls: Vec<(ModuleId, &'a ast::ExternFn)>,
    /// `ExternId` of each entry of `extern_decls` (externs are shared by C name).
    pub extern_ids: Vec<ExternId>,
    pub fns: Vec<FnInfo<'a>>,
    pub generics: Vec<GenericInfo<'a>>,
    pub instances: HashMap<(GenericId, Vec<GArg>), FuncId>,
    pub queue: VecDeque<FuncId>,
    /// (span, message) of diagnostics reported in instance bodies.
    instance_errors: hashbrown::HashSet<(Span, String)>,
    /// Set once the [`MAX_INSTANCES`] error has been reported.
    pub too_many_instances: bool,
    main: Option<FuncId>,
}

impl<'a> Checker<'a> {
    fn new(modules: &'a [ast::Module], diags: &'a mut Diagnostics) -> Self {
        Checker {
            modules,
            diags,
            scopes: Vec::new(),
            structs: Vec::new(),
            struct_names: Vec::new(),
            struct_decls: Vec::new(),
            globals: Vec::new(),
            global_decls: Vec::new(),
            externs: Vec::new(),
            extern_decls: Vec::new(),
            extern_ids: Vec::new(),
            fns: Vec::new(),
            generics: Vec::new(),
            instances: HashMap::new(),
            queue: VecDeque::new(),
            too_many_instances: false,
            instance_errors: hashbrown::HashSet::new(),
            main: None,
        }
    }

    pub fn error(&mut self, d: Diagnostic) {
        self.diags.push(d);
    }

    pub fn tn(&self, ty: &Ty) -> String {
        ty_name(ty, &self.struct_names)
    }

    // ---- phase 1: collect -------------------------------------------------

    fn collect(&mut self) {
        let mut by_name: BTreeMap<String, ModuleId> = BTreeMap::new();
        for (i, m) in self.modules.iter().enumerate() {
            let id = ModuleId(i as u32);
            if by_name.contains_key(&m.name) {
                self.error(
                    Diagnostic::error(
                        Span::new(m.file, 0, 0),
                        format!("module `{}` is defined multiple times", m.name),
                    )
                    .with_note("each module must have a unique name (its file stem)"),
                );
            } else {
                by_name.insert(m.name.clone(), id);
            }
            self.scopes.push(ModScope {
                name: m.name.clone(),
                file: m.file,
                imports: BTreeMap::new(),
                values: BTreeMap::new(),
                types: BTreeMap::new(),
            });
        }
        for (i, m) in self.modules.iter().enumerate() {
            let id = ModuleId(i as u32);
            for item in &m.items {
                self.collect_item(id, item, &by_name);
            }
        }
    }

    fn collect_item(
        &mut self,
        m: ModuleId,
        item: &'a ast::Item,
        by_name: &BTreeMap<String, ModuleId>,
    ) {
        match item {
            ast::Item::Import(imp) => match by_name.get(&imp.module.name) {
                Some(&target) => {
                    self.scopes[m.0 as usize]
                        .imports
                        .insert(imp.module.name.clone(), target);
                }
                None => self.error(
                    Diagnostic::error(
                        imp.span,
                        format!("unresolved import: no module named `{}`", imp.module.name),
                    )
                    .with_label("no such module"),
                ),
            },
            ast::Item::Fn(f) => {
                let kind = if f.generics.is_empty() {
                    let id = FuncId(self.fns.len() as u32);
                    let symbol = self.plain_symbol(m, &f.name.name);
                    self.fns.push(FnInfo {
                        module: m,
                        decl: f,
                        env: Rc::new(Vec::new()),
                        params: Vec::new(),
                        ret: Ty::Unit,
                        symbol,
                        is_instance: false,
                        depth: 0,
                        func: None,
                    });
                    ItemKind::Func(id)
                } else {
                    let id = GenericId(self.generics.len() as u32);
                    self.generics.push(GenericInfo {
                        module: m,
                        decl: f,
                        instantiated: false,
                    });
                    ItemKind::Generic(id)
                };
                self.define(
                    m,
                    Ns::Values,
                    &f.name,
                    Item {
                        kind,
                        is_pub: f.is_pub,
                        span: f.name.span,
                    },
                );
            }
            ast::Item::Extern(x) => {
                let kind = ItemKind::Extern(self.extern_decls.len());
                self.extern_decls.push((m, x));
                self.define(
                    m,
                    Ns::Values,
                    &x.name,
                    Item {
                        kind,
                        is_pub: false,
                        span: x.name.span,
                    },
                );
            }
            ast::Item::Struct(s) => {
                let id = StructId(self.structs.len() as u32);
                let name = format!("{}::{}", self.scopes[m.0 as usize].name, s.name.name);
                self.struct_names.push(name.clone());
                self.structs.push(tir::StructDef {
                    name,
                    module: m,
                    fields: Vec::new(),
                    field_offsets: Vec::new(),
                    size: 1,
                    span: s.span,
                });
                self.struct_decls.push((m, s));
                self.define(
                    m,
                    Ns::Types,
                    &s.name,
                    Item {
                        kind: ItemKind::Struct(id),
                        is_pub: s.is_pub,
                        span: s.name.span,
                    },
                );
            }
            ast::Item::Global(g) => {
                let id = GlobalId(self.globals.len() as u32);
                self.globals.push(tir::GlobalDef {
                    name: format!("{}::{}", self.scopes[m.0 as usize].name, g.name.name),
                    module: m,
                    ty: Ty::Never,
                    init: tir::GlobalInit::Int(0),
                    linkage: tir::Linkage::Local,
                    span: g.span,
                });
                self.global_decls.push((m, g));
                self.define(
                    m,
                    Ns::Values,
                    &g.name,
                    Item {
                        kind: ItemKind::Global(id),
                        is_pub: g.is_pub,
                        span: g.name.span,
                    },
                );
            }
        }
    }

    fn plain_symbol(&self, m: ModuleId, name: &str) -> String {
        if m.0 == 0 && name == "main" {
            "main".to_string()
        } else {
            format!("{}::{}", self.scopes[m.0 as usize].name, name)
        }
    }

    fn define(&mut self, m: ModuleId, ns: Ns, name: &ast::Ident, item: Item) {
        let scope = &mut self.scopes[m.0 as usize];
        let map = if ns == Ns::Values {
            &mut scope.values
        } else {
            &mut scope.types
        };
        if let Some(prev) = map.get(&name.name) {
            let prev_span = prev.span;
            self.error(
                Diagnostic::error(
                    name.span,
                    format!("the name `{}` is defined multiple times", name.name),
                )
                .with_label(format!("`{}` redefined here", name.name))
                .with_secondary(
                    prev_span,
                    format!("previous definition of `{}` here", name.name),
                ),
            );
        } else {
            map.insert(name.name.clone(), item);
        }
    }

    // ---- name lookup ----------------------------------------------------------

    /// Resolves the module part of a qualified path as seen from module `m`:
    /// the module itself or one it imports.
    pub fn resolve_module(&mut self, m: ModuleId, q: &ast::Ident) -> Option<ModuleId> {
        let scope = &self.scopes[m.0 as usize];
        if q.name == scope.name {
            return Some(m);
        }
        if let Some(&t) = scope.imports.get(&q.name) {
            return Some(t);
        }
        let known = self.scopes.iter().any(|s| s.name == q.name);
        let mut d = Diagnostic::error(
            q.span,
            format!("failed to resolve: use of undeclared module `{}`", q.name),
        )
        .with_label(format!("use of undeclared module `{}`", q.name));
        if known {
            d = d.with_note(format!("add `import {};` to this module", q.name));
        }
        self.error(d);
        None
    }

    /// Looks up `path` in namespace `ns` from module `m`, checking visibility.
    /// `Err(())`: an error was already reported; `Ok(None)`: not found.
    pub fn lookup(&mut self, m: ModuleId, path: &ast::Path, ns: Ns) -> Result<Option<Item>, ()> {
        let target = match &path.module {
            None => m,
            Some(q) => self.resolve_module(m, q).ok_or(())?,
        };
        let scope = &self.scopes[target.0 as usize];
        let map = if ns == Ns::Values {
            &scope.values
        } else {
            &scope.types
        };
        let Some(item) = map.get(&path.name.name).copied() else {
            if target != m {
                let what = if ns == Ns::Values {
                    "function or global"
                } else {
                    "struct"
                };
                let module_name = scope.name.clone();
                self.error(
                    Diagnostic::error(
                        path.name.span,
                        format!(
                            "cannot find {what} `{}` in module `{module_name}`",
                            path.name.name
                        ),
                    )
                    .with_label(format!("not found in `{module_name}`")),
                );
                return Err(());
            }
            return Ok(None);
        };
        if target != m && !item.is_pub {
            let what = item.kind.describe();
            self.error(
                Diagnostic::error(
                    path.name.span,
                    format!("{what} `{}` is private", path.name.name),
                )
                .with_label(format!("private {what}"))
                .with_secondary(
                    item.span,
                    format!("`{}` is defined here without `pub`", path.name.name),
                ),
            );
            return Err(());
        }
        Ok(Some(item))
    }

    /// Resolves a type expression in module `m` with generic parameters
    /// `env`. Reports errors and returns [`Ty::Never`] for them. Fixed-size
    /// arrays are rejected (globals handle them before calling this).
    pub fn resolve_type(&mut self, m: ModuleId, env: &Env, t: &ast::TypeExpr) -> Ty {
        match &t.kind {
            ast::TypeExprKind::Array(elem) => Ty::Array(Box::new(self.resolve_type(m, env, elem))),
            ast::TypeExprKind::FixedArray(..) => {
                self.error(
                    Diagnostic::error(
                        t.span,
                        "fixed-size array types are only allowed as the type of a global",
                    )
                    .with_label("use `[T]` here"),
                );
                Ty::Never
            }
            ast::TypeExprKind::Named(path) => self.resolve_named_type(m, env, path),
        }
    }

    fn resolve_named_type(&mut self, m: ModuleId, env: &Env, path: &ast::Path) -> Ty {
        if path.module.is_none() {
            let prim = match path.name.name.as_str() {
                "i64" => Some(Ty::I64),
                "i32" => Some(Ty::I32),
                "u8" => Some(Ty::U8),
                "bool" => Some(Ty::Bool),
                "str" => Some(Ty::Str),
                _ => None,
            };
            if let Some(p) = prim {
                return p;
            }
            if let Some((_, arg)) = env.iter().rev().find(|(n, _)| *n == path.name.name) {
                return match arg {
                    GArg::Type(t) => t.clone(),
                    _ => {
                        self.error(
                            Diagnostic::error(
                                path.span,
                                format!(
                                    "expected type, found generic parameter `{}`",
                                    path.name.name
                                ),
                            )
                            .with_label("not a type"),
                        );
                        Ty::Never
                    }
                };
            }
        }
        match self.lookup(m, path, Ns::Types) {
            Ok(Some(Item {
                kind: ItemKind::Struct(id),
                ..
            })) => Ty::Struct(id),
            Ok(_) => {
                self.error(
                    Diagnostic::error(
                        path.span,
                        format!("cannot find type `{}` in this scope", path.name.name),
                    )
                    .with_label("not found in this scope"),
                );
                Ty::Never
            }
            Err(()) => Ty::Never,
        }
    }

    // ---- phase 2: declare ------------------------------------------------------

    fn declare(&mut self) {
        self.declare_structs();
        self.declare_fns();
        self.declare_externs();
        self.declare_main();
    }

    fn declare_structs(&mut self) {
        let empty = Vec::new();
        for (i, &(m, decl)) in self.struct_decls.clone().iter().enumerate() {
            let mut fields: Vec<(String, Ty)> = Vec::new();
            for f in &decl.fields {
                let ty = self.resolve_type(m, &empty, &f.ty);
                if let Some(prev) = decl
                    .fields
                    .iter()
                    .find(|p| p.name.name == f.name.name && !std::ptr::eq(*p, f))
                {
                    if fields.iter().any(|(n, _)| *n == f.name.name) {
                        self.error(
                            Diagnostic::error(
                                f.name.span,
                                format!("field `{}` is already declared", f.name.name),
                            )
                            .with_label("field already declared")
                            .with_secondary(
                                prev.name.span,
                                format!("`{}` first declared here", f.name.name),
                            ),
                        );
                        continue;
                    }
                }
                fields.push((f.name.name.clone(), ty));
            }
            let tys: Vec<Ty> = fields.iter().map(|(_, t)| t.clone()).collect();
            let (offsets, size) = layout(&tys);
            let def = &mut self.structs[i];
            def.fields = fields;
            def.field_offsets = offsets;
            def.size = size;
        }
    }

    fn declare_fns(&mut self) {
        for i in 0..self.fns.len() {
            let (m, decl) = (self.fns[i].module, self.fns[i].decl);
            let env = Vec::new();
            let params = decl
                .params
                .iter()
                .map(|p| self.resolve_type(m, &env, &p.ty))
                .collect();
            let ret = decl
                .ret
                .as_ref()
                .map_or(Ty::Unit, |t| self.resolve_type(m, &env, t));
            self.fns[i].params = params;
            self.fns[i].ret = ret;
        }
        for g in 0..self.generics.len() {
            self.check_generic_params(GenericId(g as u32));
        }
    }

    /// Reports duplicate generic parameter names of a generic function.
    fn check_generic_params(&mut self, g: GenericId) {
        let decl = self.generics[g.0 as usize].decl;
        let names: Vec<&ast::Ident> = decl.generics.iter().map(generic_param_name).collect();
        for (i, n) in names.iter().enumerate() {
            if let Some(prev) = names[..i].iter().find(|p| p.name == n.name) {
                self.error(
                    Diagnostic::error(
                        n.span,
                        format!(
                            "the name `{}` is already used for a generic parameter",
                            n.name
                        ),
                    )
                    .with_label("already used")
                    .with_secondary(prev.span, format!("first use of `{}`", n.name)),
                );
            }
        }
    }

    fn declare_externs(&mut self) {
        let mut by_c_name: BTreeMap<String, ExternId> = BTreeMap::new();
        for &(m, decl) in self.extern_decls.clone().iter() {
            let env = Vec::new();
            let mut params = Vec::new();
            for p in &decl.params {
                let ty = self.resolve_type(m, &env, &p.ty);
                self.check_extern_type(&ty, p.ty.span);
                params.push(ty);
            }
            let ret = match &decl.ret {
                Some(t) => {
                    let ty = self.resolve_type(m, &env, t);
                    self.check_extern_type(&ty, t.span);
                    ty
                }
                None => Ty::Unit,
            };
            let id = match by_c_name.get(&decl.name.name) {
                Some(&id) => {
                    let prev = &self.externs[id.0 as usize];
                    if prev.params != params || prev.ret != ret {
                        let prev_span = prev.span;
                        self.error(
                            Diagnostic::error(
                                decl.name.span,
                                format!(
                                    "extern function `{}` is declared with different signatures",
                                    decl.name.name
                                ),
                            )
                            .with_label("this signature differs")
                            .with_secondary(prev_span, "from this declaration"),
                        );
                    }
                    id
                }
                None => {
                    let id = ExternId(self.externs.len() as u32);
                    self.externs.push(tir::ExternDef {
                        name: decl.name.name.clone(),
                        params,
                        ret,
                        span: decl.span,
                    });
                    by_c_name.insert(decl.name.name.clone(), id);
                    id
                }
            };
            self.extern_ids.push(id);
        }
    }

    fn check_extern_type(&mut self, ty: &Ty, span: Span) {
        if !(ty.is_integer() || *ty == Ty::Bool || *ty == Ty::Never) {
            let name = self.tn(ty);
            self.error(
                Diagnostic::error(
                    span,
                    format!("type `{name}` is not allowed in an extern function"),
                )
                .with_label("only `i64`, `i32`, `u8` and `bool` can cross the C boundary"),
            );
        }
    }

    fn declare_main(&mut self) {
        let Some(root) = self.scopes.first() else {
            self.error(Diagnostic::error(Span::default(), "no modules to check"));
            return;
        };
        let root_file = root.file;
        let root_name = root.name.clone();
        match root.values.get("main").copied() {
            Some(Item {
                kind: ItemKind::Func(id),
                span,
                ..
            }) => {
                let info = &self.fns[id.0 as usize];
                let ok_ret = matches!(info.ret, Ty::Unit | Ty::I32 | Ty::I64 | Ty::Never);
                if !info.decl.params.is_empty() || !ok_ret {
                    self.error(
                        Diagnostic::error(span, "`main` function has the wrong signature")
                            .with_label(
                                "`main` must take no parameters and return nothing, `i32` or `i64`",
                            ),
                    );
                }
                self.main = Some(id);
            }
            Some(Item {
                kind: ItemKind::Generic(_),
                span,
                ..
            }) => self.error(
                Diagnostic::error(
                    span,
                    "`main` function is not allowed to have generic parameters",
                )
                .with_label("`main` cannot be generic"),
            ),
            Some(Item { span, .. }) => self.error(
                Diagnostic::error(span, "`main` must be a function").with_label("not a function"),
            ),
            None => self.error(
                Diagnostic::error(
                    Span::new(root_file, 0, 0),
                    format!("`main` function not found in module `{root_name}`"),
                )
                .with_note("the root module must define `fn main()`"),
            ),
        }
    }

    // ---- phase 3: globals ---------------------------------------------------------

    fn check_globals(&mut self) {
        // Initializers may mention globals declared later (to be told they
        // are not constants): give every global its type first. Errors in
        // the types are reported by the full check below, so this pass is
        // silent.
        let empty = Vec::new();
        for i in 0..self.global_decls.len() {
            let (m, decl) = self.global_decls[i];
            let first_new = self.diags.list.len();
            let ty = match &decl.ty.kind {
                ast::TypeExprKind::FixedArray(elem, _) => {
                    Ty::Array(Box::new(self.resolve_type(m, &empty, elem)))
                }
                _ => self.resolve_type(m, &empty, &decl.ty),
            };
            self.diags.list.truncate(first_new);
            self.globals[i].ty = ty;
        }
        for i in 0..self.global_decls.len() {
            let (m, decl) = self.global_decls[i];
            let (ty, init) = expr::check_global(self, m, decl);
            self.globals[i].ty = ty;
            self.globals[i].init = init;
        }
    }

    // ---- phase 4: bodies ------------------------------------------------------------

    fn check_bodies(&mut self) {
        let plain = self.fns.len();
        for i in 0..plain {
            self.check_body(FuncId(i as u32));
        }
        while let Some(id) = self.queue.pop_front() {
            self.check_body(id);
        }
        for g in 0..self.generics.len() {
            if !self.generics[g].instantiated {
                expr::check_generic_names_only(self, GenericId(g as u32));
            }
        }
    }

    fn check_body(&mut self, id: FuncId) {
        let first_new = self.diags.list.len();
        let func = expr::check_fn(self, id);
        if self.fns[id.0 as usize].is_instance {
            self.annotate_instance_errors(id, first_new);
        }
        self.fns[id.0 as usize].func = Some(func);
    }

    /// Adds the instance's name to the diagnostics its body produced, and
    /// drops those already reported, identically, for another instance of
    /// the same generic (an error that does not depend on the arguments).
    fn annotate_instance_errors(&mut self, id: FuncId, first_new: usize) {
        let note = format!("in instance `{}`", self.fns[id.0 as usize].symbol);
        let new: Vec<Diagnostic> = self.diags.list.drain(first_new..).collect();
        for mut d in new {
            let key = (d.span, d.message.clone());
            if self.instance_errors.insert(key) {
                d.notes.push(note.clone());
                self.diags.push(d);
            }
        }
    }

    // ---- phase 5: output ------------------------------------------------------------

    fn finish(self) -> Option<tir::Program> {
        let main = self.main?;
        let pub_funcs: Vec<bool> = self.fns.iter().map(|f| f.decl.is_pub).collect();
        let pub_globals: Vec<bool> = self.global_decls.iter().map(|(_, g)| g.is_pub).collect();
        let funcs: Option<Vec<tir::Func>> = self.fns.into_iter().map(|f| f.func).collect();
        let mut program = tir::Program {
            modules: self
                .scopes
                .iter()
                .map(|s| tir::ModuleInfo {
                    name: s.name.clone(),
                    emit: Vec::new(),
                    globals: Vec::new(),
                })
                .collect(),
            structs: self.structs,
            globals: self.globals,
            externs: self.externs,
            funcs: funcs?,
            main,
        };
        emit::assign_emit_and_linkage(&mut program, &pub_funcs, &pub_globals);
        Some(program)
    }
}

pub(crate) fn generic_param_name(p: &ast::GenericParam) -> &ast::Ident {
    match p {
        ast::GenericParam::Type(n)
        | ast::GenericParam::Const(n, _)
        | ast::GenericParam::Fn(n, _) => n,
    }
}
