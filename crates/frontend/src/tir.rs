//! The typed, monomorphized program (TIR): what the checker produces and what
//! the reference interpreter and the lowering to CLIF consume.
//!
//! Invariants (established by `check`, relied on by `interp` and `lower`):
//! - every expression has its final type in [`Expr::ty`]; there are no type
//!   variables and no generics left: each generic instance is its own
//!   [`Func`] with the compile-time arguments substituted (constants are
//!   literals, function parameters are direct [`ExprKind::Call`]s);
//! - integer operations take operands of the same integer type as the result
//!   (except shifts: the amount may be any integer type) and wrap;
//! - `&&`/`||` are [`ExprKind::Logical`]; compound assignment is desugared;
//! - `for i in a..b` has its bounds' type as `i`'s type; `b` is evaluated once;
//! - places in [`Place`] are the only assignable expressions.
//!
//! Data layout (shared by the interpreter's checks and the lowering):
//! a struct value is a reference (pointer) to a heap block with the fields at
//! [`StructDef::field_offsets`]; an array `[T]` (and a `str`) is a reference to
//! a block `{ len: i64, elems: [T; len] }` with elements at offset 8, each
//! [`Ty::size`] bytes; the null reference is 0.

use crate::source::Span;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct FuncId(pub u32);
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StructId(pub u32);
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GlobalId(pub u32);
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ExternId(pub u32);
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LocalId(pub u32);
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ModuleId(pub u32);

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Ty {
    I64,
    I32,
    U8,
    Bool,
    /// No value: the result of a function without `->`, of statements, of `print`.
    Unit,
    /// A string literal's type: read-only bytes with the array layout.
    Str,
    /// Reference to a heap struct (may be null).
    Struct(StructId),
    /// Reference to a heap array `[T]` (may be null).
    Array(Box<Ty>),
    /// The type of the `null` literal before it meets a reference type; never
    /// survives checking except as the type of a `null` compared to `null`.
    Null,
    /// The type of expressions that never produce a value (`return`, `break`,
    /// `continue`, a call to a trapping builtin): unifies with anything.
    Never,
}

impl Ty {
    pub fn is_integer(&self) -> bool {
        matches!(self, Ty::I64 | Ty::I32 | Ty::U8)
    }
    pub fn is_signed(&self) -> bool {
        matches!(self, Ty::I64 | Ty::I32)
    }
    pub fn is_reference(&self) -> bool {
        matches!(self, Ty::Str | Ty::Struct(_) | Ty::Array(_) | Ty::Null)
    }
    /// Size in bytes of a value of this type in memory (fields, array elements).
    pub fn size(&self) -> u32 {
        match self {
            Ty::I64 => 8,
            Ty::I32 => 4,
            Ty::U8 | Ty::Bool => 1,
            Ty::Unit | Ty::Never => 0,
            Ty::Str | Ty::Struct(_) | Ty::Array(_) | Ty::Null => 8,
        }
    }
    /// Bit width of an integer type (bool: 8, as stored).
    pub fn bits(&self) -> u32 {
        self.size() * 8
    }
}

/// The whole program after checking and monomorphization.
#[derive(Clone, Debug, Default)]
pub struct Program {
    pub modules: Vec<ModuleInfo>,
    pub structs: Vec<StructDef>,
    pub globals: Vec<GlobalDef>,
    pub externs: Vec<ExternDef>,
    /// Every function and every generic instance, once.
    pub funcs: Vec<Func>,
    /// The program's `fn main`.
    pub main: FuncId,
}

impl Program {
    pub fn func(&self, id: FuncId) -> &Func {
        &self.funcs[id.0 as usize]
    }
    pub fn struct_def(&self, id: StructId) -> &StructDef {
        &self.structs[id.0 as usize]
    }
    pub fn global(&self, id: GlobalId) -> &GlobalDef {
        &self.globals[id.0 as usize]
    }
    pub fn extern_def(&self, id: ExternId) -> &ExternDef {
        &self.externs[id.0 as usize]
    }
}

/// One source module and what its object file must contain.
#[derive(Clone, Debug)]
pub struct ModuleInfo {
    pub name: String,
    /// Functions defined in this module's object, in a deterministic order:
    /// the module's own non-generic functions in source order, then the generic
    /// instances they reach (transitively, through instances only), in
    /// discovery order. An instance appears in every module that uses it.
    pub emit: Vec<FuncId>,
    /// Globals defined in this module.
    pub globals: Vec<GlobalId>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Linkage {
    /// Visible to other objects (a `pub` function, or one another module's
    /// instance calls, or `main`).
    Export,
    /// Local to the object (private functions, every generic instance).
    Local,
}

#[derive(Clone, Debug)]
pub struct StructDef {
    /// Qualified name: `util::Point`.
    pub name: String,
    pub module: ModuleId,
    pub fields: Vec<(String, Ty)>,
    /// Byte offset of each field (natural alignment).
    pub field_offsets: Vec<u32>,
    /// Allocation size in bytes (at least 1).
    pub size: u32,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct GlobalDef {
    /// Qualified name: `util::counter`; also its symbol name.
    pub name: String,
    pub module: ModuleId,
    pub ty: Ty,
    pub init: GlobalInit,
    pub linkage: Linkage,
    pub span: Span,
}

/// A global's constant initial value.
#[derive(Clone, Debug, PartialEq)]
pub enum GlobalInit {
    /// An integer or bool (0/1), already wrapped to the type's width.
    Int(i64),
    /// The null reference.
    Null,
    /// A fixed-size array `[T; N]`: the global's type is `[T]` and it refers
    /// to a static array block with these elements: `Int` (wrapped to `T`),
    /// `Null` or `Str`, never `Array`.
    Array(Ty, Vec<GlobalInit>),
    /// A string literal (type `str`).
    Str(Vec<u8>),
}

#[derive(Clone, Debug)]
pub struct ExternDef {
    /// The C symbol name.
    pub name: String,
    pub params: Vec<Ty>,
    pub ret: Ty,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct Func {
    /// Stable mangled symbol name: `util::sum_by<main::scale<3>>`,
    /// `sort::max<i64>`, `main` for the program's entry point.
    pub symbol: String,
    /// Module whose source defines this function (or its generic).
    pub module: ModuleId,
    /// Number of leading `locals` that are parameters.
    pub num_params: u32,
    /// All locals, parameters first; a local is assigned once per `let` but
    /// may be reassigned if mutable.
    pub locals: Vec<Local>,
    pub ret: Ty,
    pub body: Block,
    /// True for generic instances (emitted locally in every module using them).
    pub is_instance: bool,
    /// True for the program's `fn main` (C ABI, returns the exit status as i32).
    pub is_main: bool,
    pub linkage: Linkage,
    pub span: Span,
}

impl Func {
    pub fn params(&self) -> &[Local] {
        &self.locals[..self.num_params as usize]
    }
    pub fn local(&self, id: LocalId) -> &Local {
        &self.locals[id.0 as usize]
    }
}

#[derive(Clone, Debug)]
pub struct Local {
    pub name: String,
    pub ty: Ty,
    pub mutable: bool,
}

#[derive(Clone, Debug)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub tail: Option<Box<Expr>>,
    /// Type of the block's value (Unit without a tail, Never if it never ends).
    pub ty: Ty,
}

#[derive(Clone, Debug)]
pub enum Stmt {
    Let(LocalId, Expr),
    Assign(Place, Expr),
    Expr(Expr),
    While(Expr, Block),
    /// `for var in start..end body`: `end` is evaluated once, before the loop;
    /// the loop runs while `var < end` (signed or unsigned per the type),
    /// incrementing `var` by 1 after each iteration (also on `continue`).
    For {
        var: LocalId,
        start: Expr,
        end: Expr,
        body: Block,
    },
    Break,
    Continue,
    Return(Option<Expr>),
}

#[derive(Clone, Debug)]
pub enum Place {
    Local(LocalId),
    Global(GlobalId),
    /// `base.field`
    Field(Box<Expr>, StructId, u32),
    /// `array[index]`
    Index(Box<Expr>, Box<Expr>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    /// Traps on zero divisor; signed: traps on `MIN / -1`.
    Div,
    /// Traps on zero divisor; signed `MIN % -1` is 0.
    Rem,
    And,
    Or,
    Xor,
    /// Shift amount masked to the width of the left operand's type.
    Shl,
    /// Arithmetic for signed types, logical for `u8`.
    Shr,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl BinOp {
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
        )
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    /// Wrapping negation (integers).
    Neg,
    /// Logical not (bool).
    Not,
    /// Bitwise not (integers).
    BitNot,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Logical {
    And,
    Or,
}

/// Built-in functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Builtin {
    /// `print(x)`: integer in decimal (per its type's signedness) or bool as
    /// `true`/`false`, then a newline.
    Print,
    /// `print_str(s)`: the bytes of a `str`, no newline added.
    PrintStr,
    /// `len(a)`: length of an array or `str` as i64; traps on null.
    Len,
    /// `exit(code)`: flush output, end the program with status `code & 255`.
    Exit,
}

/// Reasons for a trap. The program prints `trap: <message>` on stderr and
/// exits with status 101.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TrapKind {
    DivisionByZero,
    /// Signed `MIN / -1`.
    DivisionOverflow,
    IndexOutOfBounds,
    NullDereference,
    NegativeLength,
    OutOfMemory,
    /// Recursion deeper than the stack allows (compiled code: a fault on the
    /// stack's guard page; the interpreter: [`crate::interp::MAX_CALL_DEPTH`]).
    StackOverflow,
    /// Output to stdout could not be written (a full disk, a closed
    /// stream): found by the write that fails or, for buffered output, by
    /// the flush when the program ends.
    WriteError,
}

impl TrapKind {
    pub const ALL: [TrapKind; 8] = [
        TrapKind::DivisionByZero,
        TrapKind::DivisionOverflow,
        TrapKind::IndexOutOfBounds,
        TrapKind::NullDereference,
        TrapKind::NegativeLength,
        TrapKind::OutOfMemory,
        TrapKind::StackOverflow,
        TrapKind::WriteError,
    ];
    /// The code passed to the runtime's trap function.
    pub fn code(self) -> i32 {
        self as i32
    }
    pub fn from_code(code: i32) -> Option<TrapKind> {
        Self::ALL.get(usize::try_from(code).ok()?).copied()
    }
    /// The message after `trap: `.
    pub fn message(self) -> &'static str {
        match self {
            TrapKind::DivisionByZero => "division by zero",
            TrapKind::DivisionOverflow => "division overflow",
            TrapKind::IndexOutOfBounds => "index out of bounds",
            TrapKind::NullDereference => "null dereference",
            TrapKind::NegativeLength => "negative array length",
            TrapKind::OutOfMemory => "out of memory",
            TrapKind::StackOverflow => "stack overflow",
            TrapKind::WriteError => "write error on stdout",
        }
    }
}

/// Exit status of a program that trapped.
pub const TRAP_EXIT_STATUS: i32 = 101;

#[derive(Clone, Debug)]
pub struct Expr {
    pub kind: ExprKind,
    pub ty: Ty,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum ExprKind {
    /// An integer or bool constant (bool: 0 or 1), wrapped to the type's width
    /// and sign- or zero-extended to i64 per the type.
    Const(i64),
    /// A string literal: the lowering puts it in read-only data with the array layout.
    Str(Vec<u8>),
    Null,
    Local(LocalId),
    Global(GlobalId),
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    Logical(Logical, Box<Expr>, Box<Expr>),
    /// Integer-to-integer or bool-to-integer conversion: truncates, or
    /// sign-/zero-extends per the source type.
    Cast(Box<Expr>),
    Call(FuncId, Vec<Expr>),
    CallExtern(ExternId, Vec<Expr>),
    Builtin(Builtin, Vec<Expr>),
    /// `base.field` (traps on null).
    Field(Box<Expr>, StructId, u32),
    /// `array[index]` (traps on null, index < 0 or index >= len).
    Index(Box<Expr>, Box<Expr>),
    /// `new [elem; len]`: zero-filled (traps on len < 0).
    NewArray(Ty, Box<Expr>),
    /// `new S { f: e, ... }`: every field exactly once, as (field index,
    /// initializer) in source order, which is also the evaluation order.
    NewStruct(StructId, Vec<(u32, Expr)>),
    If(Box<Expr>, Block, Option<Block>),
    Block(Block),
}

/// Dropping a chain `e1 + e2 + ... + en` recursively would take a stack
/// frame per operator; binary operands are dropped from a work list instead.
/// (Every other kind of node nests at most [`crate::parser::MAX_DEPTH`] deep.)
impl Drop for Expr {
    fn drop(&mut self) {
        let placeholder = || ExprKind::Const(0);
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
