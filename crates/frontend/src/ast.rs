//! The Pare syntax tree, as the parser produces it.
//!
//! Every node carries a [`Span`] (file and byte range) so that every later
//! phase can report errors at the source. Names are plain strings here; the
//! checker resolves them. Generic functions are kept as written: the
//! monomorphizer (in `check`) instantiates them.

use crate::source::{FileId, Span};

/// One source file: a Pare module.
#[derive(Clone, Debug)]
pub struct Module {
    /// Module name: the file stem (`util.pare` is module `util`).
    pub name: String,
    pub file: FileId,
    pub items: Vec<Item>,
}

#[derive(Clone, Debug)]
pub enum Item {
    Import(Import),
    Fn(FnDecl),
    Extern(ExternFn),
    Struct(StructDecl),
    Global(GlobalDecl),
}

/// `import util;`
#[derive(Clone, Debug)]
pub struct Import {
    pub module: Ident,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

/// A possibly module-qualified name: `f`, `util::f`.
#[derive(Clone, Debug)]
pub struct Path {
    /// `Some("util")` for `util::f`.
    pub module: Option<Ident>,
    pub name: Ident,
    pub span: Span,
}

/// `[pub] fn name<generics>(params) [-> ret] { body }`
#[derive(Clone, Debug)]
pub struct FnDecl {
    pub is_pub: bool,
    pub name: Ident,
    pub generics: Vec<GenericParam>,
    pub params: Vec<Param>,
    /// `None` means the unit type (no value).
    pub ret: Option<TypeExpr>,
    pub body: Block,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum GenericParam {
    /// `T`
    Type(Ident),
    /// `const K: i64`
    Const(Ident, TypeExpr),
    /// `f: fn(i64, i64) -> i64`
    Fn(Ident, FnTypeExpr),
}

#[derive(Clone, Debug)]
pub struct FnTypeExpr {
    pub params: Vec<TypeExpr>,
    pub ret: Option<Box<TypeExpr>>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct Param {
    pub name: Ident,
    pub ty: TypeExpr,
    pub span: Span,
}

/// `extern fn putchar(c: i32) -> i32;`
#[derive(Clone, Debug)]
pub struct ExternFn {
    pub name: Ident,
    pub params: Vec<Param>,
    pub ret: Option<TypeExpr>,
    pub span: Span,
}

/// `[pub] struct Point { x: i64, y: i64 }`
#[derive(Clone, Debug)]
pub struct StructDecl {
    pub is_pub: bool,
    pub name: Ident,
    pub fields: Vec<Param>,
    pub span: Span,
}

/// `[pub] global name: T = init;`
#[derive(Clone, Debug)]
pub struct GlobalDecl {
    pub is_pub: bool,
    pub name: Ident,
    pub ty: TypeExpr,
    pub init: Expr,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum TypeExprKind {
    /// `i64`, `i32`, `u8`, `bool`, `str`, a struct name, a type parameter, `util::Point`.
    Named(Path),
    /// `[T]`: heap array (a reference).
    Array(Box<TypeExpr>),
    /// `[T; N]`: fixed-size array, only in global declarations.
    FixedArray(Box<TypeExpr>, Box<Expr>),
}

#[derive(Clone, Debug)]
pub struct TypeExpr {
    pub kind: TypeExprKind,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    /// Trailing expression without `;`: the block's value.
    pub tail: Option<Box<Expr>>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum StmtKind {
    /// `let [mut] name [: T] = e;`
    Let {
        mutable: bool,
        name: Ident,
        ty: Option<TypeExpr>,
        init: Expr,
    },
    /// `place = e;` and compound `place op= e;` (op is `Some`).
    Assign {
        target: Expr,
        op: Option<BinOp>,
        value: Expr,
    },
    /// `e;`, or a block-like expression (`if`, `while`, block) in statement position.
    Expr(Expr),
    While {
        cond: Expr,
        body: Block,
    },
    /// `for i in a..b { }`
    For {
        var: Ident,
        start: Expr,
        end: Expr,
        body: Block,
    },
    Break,
    Continue,
    Return(Option<Expr>),
}

#[derive(Clone, Debug)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    /// `&&` (short-circuit)
    And,
    /// `||` (short-circuit)
    Or,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    /// `-e`: wrapping negation.
    Neg,
    /// `!e`: logical not on bool, bitwise not on integers.
    Not,
}

/// Explicit generic arguments at a use site: `scale<3>`, `max<i64>`, `sum_by<scale<3>>`.
/// The parser cannot tell a type from a function name (`Foo` vs `foo`), so a
/// path argument stays a [`GenericArg::Path`] and the checker decides.
#[derive(Clone, Debug)]
pub enum GenericArg {
    /// A path, possibly itself with generic arguments: `i64`, `Point`, `util::scale<3>`, `T`, `f`.
    Path(Path, Vec<GenericArg>),
    /// `[T]`
    ArrayType(Box<TypeExpr>),
    /// A constant expression: `3`, `-1`, `'a'`, `K`, `K + 1`, `(N * 2)`.
    Const(Box<Expr>),
}

#[derive(Clone, Debug)]
pub enum ExprKind {
    /// Integer literal, with an optional type suffix (`5u8`, `7i32`).
    Int(u64, Option<String>),
    Bool(bool),
    /// Character literal `'a'`: a `u8`.
    Char(u8),
    /// String literal, unescaped bytes.
    Str(Vec<u8>),
    Null,
    /// A name, possibly qualified, with optional generic arguments: `x`, `util::g`, `scale<3>`.
    Path(Path, Vec<GenericArg>),
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `e as T`
    Cast(Box<Expr>, TypeExpr),
    /// `callee(args)`; the callee is a path expression (functions are not values).
    Call(Box<Expr>, Vec<Expr>),
    /// `e.field`
    Field(Box<Expr>, Ident),
    /// `e[i]`
    Index(Box<Expr>, Box<Expr>),
    /// `new [T; n]`
    NewArray(TypeExpr, Box<Expr>),
    /// `new Point { x: 1, y: 2 }`
    NewStruct(Path, Vec<(Ident, Expr)>),
    /// `[1, 2, 3]`: only as a global initializer.
    ArrayLit(Vec<Expr>),
    If(Box<Expr>, Block, Option<Box<Expr>>),
    Block(Block),
}

#[derive(Clone, Debug)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

/// Dropping a chain `e1 + e2 + ... + en` recursively would take a stack
/// frame per operator; binary operands are dropped from a work list instead.
/// (Every other kind of node nests at most [`crate::parser::MAX_DEPTH`] deep.)
impl Drop for Expr {
    fn drop(&mut self) {
        let placeholder = || ExprKind::Int(0, None);
        let ExprKind::Binary(_, l, r) = std::mem::replace(&mut self.kind, placeholder()) else {
            return;
        };
        let mut pending = vec![l, r];
        while let Some(mut e) = pending.pop() {
            if let ExprKind::Binary(_, l, r) = std::mem::replace(&mut e.kind, placeholder()) {
                pending.push(l);
                pending.push(r);
            }
        }
    }
}
