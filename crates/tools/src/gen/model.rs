//! What the generator knows about the program it is writing: types, items
//! (structs, globals, functions, generic templates) and modules, plus the
//! rendering of items into module source text.
//!
//! Invariants:
//! - Every item has a program-unique name, so a name never needs resolving
//!   by scope; it is written `module::name` exactly when it is used from a
//!   module other than its own ([`Gen::qual`] records the import and marks
//!   the item `pub`).
//! - Functions are numbered in creation order. A function may only call
//!   functions with a smaller number (plus its designated recursion partner),
//!   so the call graph is acyclic apart from bounded recursion.

use std::collections::BTreeSet;

use super::rng::Rng;
use super::GenConfig;

/// A Pare type the generator uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Ty {
    I64,
    I32,
    U8,
    Bool,
    /// `[T]` with a scalar `T`.
    Array(Box<Ty>),
    /// A struct, by index into [`Gen::structs`].
    Struct(usize),
}

impl Ty {
    pub(crate) const INTS: [Ty; 3] = [Ty::I64, Ty::I32, Ty::U8];
    pub(crate) const SCALARS: [Ty; 4] = [Ty::I64, Ty::I32, Ty::U8, Ty::Bool];

    pub(crate) fn is_int(&self) -> bool {
        matches!(self, Ty::I64 | Ty::I32 | Ty::U8)
    }

    pub(crate) fn is_scalar(&self) -> bool {
        self.is_int() || *self == Ty::Bool
    }

    /// The keyword of a scalar type (also the literal suffix of an integer type).
    pub(crate) fn prim(&self) -> &'static str {
        match self {
            Ty::I64 => "i64",
            Ty::I32 => "i32",
            Ty::U8 => "u8",
            Ty::Bool => "bool",
            Ty::Array(_) | Ty::Struct(_) => "i64",
        }
    }
}

pub(crate) struct ModuleDef {
    pub name: String,
    pub imports: BTreeSet<usize>,
    /// `extern fn` declarations (root module only).
    pub externs: BTreeSet<&'static str>,
}

pub(crate) struct StructDef {
    pub name: String,
    pub module: usize,
    /// Scalar fields, then possibly one reference to a struct (never first).
    pub fields: Vec<(String, Ty)>,
    /// The fields' types as written in the struct's module.
    pub field_types: Vec<String>,
    pub is_pub: bool,
}

pub(crate) struct GlobalDef {
    pub name: String,
    pub module: usize,
    /// Scalar, `Array(elem)` for fixed arrays, or `Struct` (initialized `null`).
    pub ty: Ty,
    /// Length of a fixed array global.
    pub len: usize,
    /// The declaration after `global ` (`name: T = init;`), types already qualified.
    pub decl: String,
    pub is_pub: bool,
}

/// The string global used for `s[i]` and `len(s)`.
pub(crate) struct StrGlobal {
    pub name: String,
    pub len: usize,
    /// Used only from its own module.
    pub module: usize,
    /// The declaration after `global `.
    pub decl: String,
}

#[derive(Clone, Debug)]
pub(crate) struct ParamDef {
    pub name: String,
    pub ty: Ty,
    /// For array parameters: every caller passes at least this many elements.
    pub min_len: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FnKind {
    /// Prints and bumps a counter, returns its argument.
    Note,
    /// Prints a tag, bumps a counter, returns its bool argument.
    Flag,
    /// `(d: i64, x: i64) -> i64`, recursion bounded by `d`.
    Rec,
    Regular,
    Main,
}

pub(crate) struct FnDef {
    pub name: String,
    pub module: usize,
    pub params: Vec<ParamDef>,
    pub ret: Option<Ty>,
    /// Estimated work of one call (statements executed, callees included).
    pub cost: u64,
    pub kind: FnKind,
    /// Source text without the leading `pub `.
    pub text: String,
    pub is_pub: bool,
    /// Number of call sites generated so far.
    pub calls: usize,
}

/// The shapes of generic functions the generator writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum TemplateKind {
    /// `fn n<const K: T>(x: T) -> T` for an integer `T`.
    Scale(Ty),
    /// `fn n<const B: bool>(x: i64) -> i64`.
    Gate,
    /// `fn n<op: fn(i64) -> i64[, const J: i64]>(x: i64) -> i64` (relay
    /// templates, which pass `op` on to another instance, have this kind too).
    Apply { with_const: bool },
    /// `fn n<op: fn(i64) -> i64>(xs: [i64]) -> i64`: folds `op` over `xs`.
    Fold,
    /// `fn n<T>(c: bool, a: T, b: T) -> T`: valid for every type.
    Pick,
    /// `fn n<T>(a: T, b: T) -> T`: valid for integer types.
    Mix,
    /// `fn n<const K: i64>(x: i64) -> i64` calling a `Scale(I64)` and an
    /// `Apply` instance with arguments computed from `K`.
    Chain { scale: usize, apply: usize },
}

pub(crate) struct Template {
    pub name: String,
    pub module: usize,
    pub kind: TemplateKind,
    /// Work of one call, not counting calls of the function parameter.
    pub base_cost: u64,
    /// How many times one call calls its function parameter (at most).
    pub f_calls: u64,
    pub text: String,
    pub is_pub: bool,
    /// Number of instances/call sites generated.
    pub uses: usize,
}

/// A function outside the ordinary call pools (see [`super::edge`]): a
/// `str`-returning function or a deeply recursive one. Kept apart from
/// [`Gen::fns`] so no ordinary call site picks it with arbitrary arguments.
pub(crate) struct ExtraFn {
    pub name: String,
    pub module: usize,
    /// Source text without the leading `pub `.
    pub text: String,
    pub is_pub: bool,
}

/// `fn sN(k: i64) -> str` returning one of two literals (see [`super::edge`]).
#[derive(Clone, Debug)]
pub(crate) struct StrFn {
    /// Index into [`Gen::extra_fns`].
    pub extra: usize,
    /// The literal returned for even `k`, then for odd `k`, as written.
    pub lits: [&'static str; 2],
}

/// A deeply recursive function `fn deepN(n: i64, x: i64) -> i64` (see [`super::edge`]).
#[derive(Clone, Debug)]
pub(crate) struct DeepFn {
    /// Index into [`Gen::extra_fns`].
    pub extra: usize,
}

/// An item that can be named from another module.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Item {
    Fn(usize),
    Global(usize),
    Struct(usize),
    Template(usize),
    Extra(usize),
}

/// A statement pattern repeated across functions (material for outlining).
#[derive(Clone, Debug)]
pub(crate) struct Shape {
    pub id: u8,
    pub consts: [i64; 3],
}

/// The generator: configuration, choices, and the program so far.
pub(crate) struct Gen<'c, 'u, 'd> {
    pub rng: Rng<'u, 'd>,
    pub cfg: &'c GenConfig,
    pub modules: Vec<ModuleDef>,
    pub structs: Vec<StructDef>,
    pub globals: Vec<GlobalDef>,
    pub strs: Vec<StrGlobal>,
    pub fns: Vec<FnDef>,
    pub templates: Vec<Template>,
    pub shapes: Vec<Shape>,
    pub extra_fns: Vec<ExtraFn>,
    pub str_fns: Vec<StrFn>,
    pub deep_fns: Vec<DeepFn>,
    /// Index of each module's hit counter global.
    pub counters: Vec<usize>,
    /// Lines still to spend in the whole program (keeps it near `max_lines`).
    pub lines_left: usize,
}

impl<'c, 'u, 'd> Gen<'c, 'u, 'd> {
    pub(crate) fn new(rng: Rng<'u, 'd>, cfg: &'c GenConfig) -> Self {
        Gen {
            rng,
            cfg,
            modules: Vec::new(),
            structs: Vec::new(),
            globals: Vec::new(),
            strs: Vec::new(),
            fns: Vec::new(),
            templates: Vec::new(),
            shapes: Vec::new(),
            extra_fns: Vec::new(),
            str_fns: Vec::new(),
            deep_fns: Vec::new(),
            counters: Vec::new(),
            lines_left: cfg.max_lines,
        }
    }

    /// The name of `item` as written in module `from`: qualified (and the
    /// import and `pub` recorded) when the item lives elsewhere.
    pub(crate) fn qual(&mut self, from: usize, item: Item) -> String {
        let (module, name) = match item {
            Item::Fn(i) => (self.fns[i].module, self.fns[i].name.clone()),
            Item::Global(i) => (self.globals[i].module, self.globals[i].name.clone()),
            Item::Struct(i) => (self.structs[i].module, self.structs[i].name.clone()),
            Item::Template(i) => (self.templates[i].module, self.templates[i].name.clone()),
            Item::Extra(i) => (self.extra_fns[i].module, self.extra_fns[i].name.clone()),
        };
        if module == from {
            return name;
        }
        self.modules[from].imports.insert(module);
        match item {
            Item::Fn(i) => self.fns[i].is_pub = true,
            Item::Global(i) => self.globals[i].is_pub = true,
            Item::Struct(i) => self.structs[i].is_pub = true,
            Item::Template(i) => self.templates[i].is_pub = true,
            Item::Extra(i) => self.extra_fns[i].is_pub = true,
        }
        format!("{}::{}", self.modules[module].name, name)
    }

    /// `ty` as written in module `from`.
    pub(crate) fn ty_text(&mut self, from: usize, ty: &Ty) -> String {
        match ty {
            Ty::Array(elem) => format!("[{}]", self.ty_text(from, elem)),
            Ty::Struct(s) => self.qual(from, Item::Struct(*s)),
            scalar => scalar.prim().to_string(),
        }
    }

    /// Every module's source text, root first.
    pub(crate) fn render(&self) -> Vec<(String, String)> {
        (0..self.modules.len())
            .map(|m| (self.modules[m].name.clone(), self.render_module(m)))
            .collect()
    }

    fn render_module(&self, m: usize) -> String {
        let mut out = format!(
            "// module {}: generated by pare_frontend::gen\n",
            self.modules[m].name
        );
        for &i in &self.modules[m].imports {
            out += &format!("import {};\n", self.modules[i].name);
        }
        for e in &self.modules[m].externs {
            out += &format!("{e}\n");
        }
        out.push('\n');
        for s in self.structs.iter().filter(|s| s.module == m) {
            let fields: Vec<String> = s
                .fields
                .iter()
                .zip(&s.field_types)
                .map(|((n, _), t)| format!("{n}: {t}"))
                .collect();
            out += &format!(
                "{}struct {} {{ {} }}\n",
                pub_kw(s.is_pub),
                s.name,
                fields.join(", ")
            );
        }
        for g in self.globals.iter().filter(|g| g.module == m) {
            out += &format!("{}global {}\n", pub_kw(g.is_pub), g.decl);
        }
        for s in self.strs.iter().filter(|s| s.module == m) {
            out += &format!("global {}\n", s.decl);
        }
        for t in self.templates.iter().filter(|t| t.module == m) {
            out += &format!("\n{}{}", pub_kw(t.is_pub), t.text);
        }
        for f in self.extra_fns.iter().filter(|f| f.module == m) {
            out += &format!("\n{}{}", pub_kw(f.is_pub), f.text);
        }
        for f in self.fns.iter().filter(|f| f.module == m) {
            out += &format!("\n{}{}", pub_kw(f.is_pub && f.kind != FnKind::Main), f.text);
        }
        out
    }
}

fn pub_kw(is_pub: bool) -> &'static str {
    if is_pub {
        "pub "
    } else {
        ""
    }
}
