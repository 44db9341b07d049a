//! The reference interpreter: runs a checked [`crate::tir::Program`] by walking its
//! tree. It is the oracle of differential testing, so it implements
//! `docs/LANGUAGE.md` exactly, including wrapping, traps and evaluation order.
//!
//! Representation (see the `ops` and `heap` submodules):
//! - every value is an `i64` normalized to its static type (`i32`
//!   sign-extended, `u8`/`bool` zero-extended, references as heap handles with
//!   0 for `null`, unit as 0), so values are `Copy` and operators never look at
//!   anything but their operands' static types;
//! - locals live in one value stack; a call's frame is the slice starting at
//!   its base, indexed by [`crate::tir::LocalId`] (parameters first);
//! - `break`, `continue`, `return`, traps, `exit` and interpreter errors travel
//!   as the error side of a `Result` (`Flow`) to the loop, call or top level
//!   that handles them.
//!
//! Evaluation order is left to right: operands, arguments and struct fields in
//! source order, then the operation; in an assignment the place's base (and
//! index) before the value, then the null and bounds checks.
//!
//! Recursion: each Pare call uses a few Rust frames of the evaluator, and
//! deeply nested expressions recurse too. Calls deeper than [`MAX_CALL_DEPTH`]
//! trap `stack overflow`, as compiled code does when its stack is full; to
//! reach that depth the interpreter needs a large Rust stack, which
//! [`run_with_big_stack`] provides. [`run`] uses the caller's thread and stack.
//!
//! Strings: literals with the same bytes are one read-only object in the
//! whole program, as in compiled code (LANGUAGE.md), and `==` on `str`
//! compares identity like on other references.
//!
//! Out of memory: the heap traps `out of memory` where compiled code does —
//! on array sizes whose `8 + len * elem_size` overflows (as the runtime's
//! `pare_new_array` does) and when the allocator refuses the memory, as
//! `calloc` does in compiled code; it sets no limit of its own.
//!
//! The input is trusted to satisfy the invariants in [`crate::tir`]; a TIR that
//! breaks them may make [`run`] panic ([`run_with_big_stack`] reports that as an
//! [`Exit::Error`]).

mod heap;
use crate::ops;
#[cfg(test)]
mod tests;

use crate::tir::{
    BinOp, Block, Builtin, Expr, ExprKind, FuncId, GlobalInit, Logical, Place, Program, Stmt,
    TrapKind, Ty, UnOp,
};
use heap::Heap;
use std::collections::HashMap;
use std::io::Write;

/// How a program run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Exit {
    /// `main` returned or the program called `exit`: the process status (0..=255).
    Status(i32),
    /// The program trapped (compiled code exits with status 101).
    Trap(TrapKind),
    /// The interpreter could not run the program to the end (an extern it does
    /// not implement, malformed TIR).
    Error(String),
}

impl Exit {
    /// How a run that ended as `self` ends when its output could not all be
    /// written (a failed final flush): a normal end becomes the
    /// [`TrapKind::WriteError`] trap, as in compiled code, whose runtime
    /// flushes stdout before `main` returns and in `exit`; a trap stays
    /// itself (the runtime's trap flushes without checking).
    pub fn after_write_error(self) -> Exit {
        match self {
            Exit::Status(_) => Exit::Trap(TrapKind::WriteError),
            other => other,
        }
    }
}

/// Deepest Pare call nesting the interpreter allows (`main` is the first
/// call); one more traps `stack overflow`. Compiled code has an 8 MiB stack
/// and overflows when its frames fill it: a small recursive function uses
/// 32-byte frames (the return address and frame pointer, a saved register
/// or spill slot), so it reaches this depth, 8 MiB / 32; functions with
/// more values live across calls overflow earlier, smaller frames later
/// (see LANGUAGE.md, "Traps and exit status").
pub const MAX_CALL_DEPTH: u32 = 1 << 18;

/// Stack size of the thread [`run_with_big_stack`] runs the interpreter on;
/// enough for [`MAX_CALL_DEPTH`] calls in unoptimized builds. Only the pages
/// actually used are committed.
pub const BIG_STACK_SIZE: usize = 4 << 30;

/// Runs `program` on the current thread, writing its output to `stdout`.
/// Everything the program printed has been written (not flushed) on return.
/// Deep recursion needs a large stack: see [`run_with_big_stack`].
pub fn run(program: &Program, stdout: &mut dyn Write) -> Exit {
    let mut machine = Machine::new(program, stdout);
    let outcome = machine.init_globals().and_then(|()| machine.run_main());
    match outcome {
        Ok(status) => Exit::Status(status),
        Err(Flow::Exit(status)) => Exit::Status(status.into()),
        Err(Flow::Trap(kind)) => Exit::Trap(kind),
        Err(Flow::Error) => Exit::Error(std::mem::take(&mut machine.failure)),
        Err(Flow::Break | Flow::Continue | Flow::Return) => {
            Exit::Error("internal error: `break`, `continue` or `return` outside its scope".into())
        }
    }
}

/// Runs `program` like [`run`], on a new thread with a [`BIG_STACK_SIZE`]
/// stack, so that recursion up to [`MAX_CALL_DEPTH`] works. Output is passed to
/// the calling thread in chunks and written to `stdout` there, as it is produced.
/// If the system refuses so large a stack, a quarter of it is tried (still
/// plenty for optimized builds).
pub fn run_with_big_stack(program: &Program, stdout: &mut dyn Write) -> Exit {
    match run_on_thread(program, stdout, BIG_STACK_SIZE) {
        Ok(exit) => exit,
        Err(_) => match run_on_thread(program, stdout, BIG_STACK_SIZE / 4) {
            Ok(exit) => exit,
            Err(e) => Exit::Error(format!("cannot start the interpreter thread: {e}")),
        },
    }
}

/// Runs `program` on a new thread with `stack_size` bytes of stack; fails only
/// if the thread cannot be started (before anything ran).
fn run_on_thread(
    program: &Program,
    stdout: &mut dyn Write,
    stack_size: usize,
) -> std::io::Result<Exit> {
    let (sender, receiver) = std::sync::mpsc::sync_channel::<Vec<u8>>(8);
    std::thread::scope(|scope| {
        let worker = std::thread::Builder::new()
            .name("pare-interp".into())
            .stack_size(stack_size)
            .spawn_scoped(scope, move || {
                let mut out = ChannelWriter {
                    buf: Vec::with_capacity(CHUNK_SIZE),
                    sender,
                };
                let exit = run(program, &mut out);
                match out.flush() {
                    Err(_) => exit.after_write_error(),
                    Ok(()) => exit,
                }
            })?;
        // Dropping the receiver on a write error makes the worker's next send
        // fail, which ends the run.
        let mut write_failed = false;
        for chunk in receiver {
            if stdout.write_all(&chunk).is_err() {
                write_failed = true;
                break;
            }
        }
        let exit = worker
            .join()
            .unwrap_or_else(|_| Exit::Error("the interpreter panicked".into()));
        Ok(if write_failed {
            exit.after_write_error()
        } else {
            exit
        })
    })
}

const CHUNK_SIZE: usize = 1 << 16;

/// Collects output into chunks sent to the thread that owns the real writer.
struct ChannelWriter {
    buf: Vec<u8>,
    sender: std::sync::mpsc::SyncSender<Vec<u8>>,
}

impl Write for ChannelWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(bytes);
        if self.buf.len() >= CHUNK_SIZE {
            self.flush()?;
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let chunk = std::mem::replace(&mut self.buf, Vec::with_capacity(CHUNK_SIZE));
        self.sender
            .send(chunk)
            .map_err(|_| std::io::Error::other("output closed"))
    }
}

/// Why evaluation stopped going forward; the error side of every evaluation
/// step. Payloads that do not fit a byte live in the [`Machine`] (the returned
/// value, the error message), so an evaluation result is two registers.
#[derive(Clone, Copy, Debug)]
enum Flow {
    Break,
    Continue,
    /// `return`: the value is in [`Machine::returned`].
    Return,
    Trap(TrapKind),
    /// `exit(code)`: the final status, `code & 255`.
    Exit(u8),
    /// The interpreter gives up: the message is in [`Machine::failure`].
    Error,
}

impl From<TrapKind> for Flow {
    #[inline]
    fn from(kind: TrapKind) -> Flow {
        Flow::Trap(kind)
    }
}

type Eval = Result<i64, Flow>;

/// The C functions the interpreter implements, resolved once by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ExternFn {
    Putchar,
    Getchar,
    Abs,
    Labs,
    Exit,
    Unavailable,
}

impl ExternFn {
    fn from_name(name: &str) -> ExternFn {
        match name {
            "putchar" => ExternFn::Putchar,
            "getchar" => ExternFn::Getchar,
            "abs" => ExternFn::Abs,
            "labs" => ExternFn::Labs,
            "exit" => ExternFn::Exit,
            _ => ExternFn::Unavailable,
        }
    }
}

struct Machine<'p, 'w> {
    program: &'p Program,
    out: &'w mut dyn Write,
    /// Locals of all active calls, plus temporaries (arguments being
    /// evaluated, struct fields before allocation) above the top frame.
    stack: Vec<i64>,
    /// Base of the current call's frame in `stack`.
    frame: usize,
    depth: u32,
    globals: Vec<i64>,
    heap: Heap,
    externs: Vec<ExternFn>,
    /// String literal handles by the address of the literal's bytes in the TIR
    /// (stable for the whole run), so a literal is interned once.
    literals: HashMap<usize, i64>,
    /// Interned strings by content.
    interned: HashMap<&'p [u8], i64>,
    /// The value of the `return` being propagated as [`Flow::Return`].
    returned: i64,
    /// The message of the [`Flow::Error`] being propagated.
    failure: String,
}

impl<'p, 'w> Machine<'p, 'w> {
    fn new(program: &'p Program, out: &'w mut dyn Write) -> Self {
        Machine {
            program,
            out,
            stack: Vec::with_capacity(1 << 12),
            frame: 0,
            depth: 0,
            globals: vec![0; program.globals.len()],
            heap: Heap::default(),
            externs: program
                .externs
                .iter()
                .map(|e| ExternFn::from_name(&e.name))
                .collect(),
            literals: HashMap::new(),
            interned: HashMap::new(),
            returned: 0,
            failure: String::new(),
        }
    }

    fn init_globals(&mut self) -> Result<(), Flow> {
        let program = self.program;
        for (slot, global) in program.globals.iter().enumerate() {
            self.globals[slot] = match &global.init {
                GlobalInit::Array(elem, values) => {
                    let values: Vec<i64> =
                        values.iter().map(|v| self.scalar_init(elem, v)).collect();
                    self.heap.static_array(elem, &values)
                }
                init => self.scalar_init(&global.ty, init),
            };
        }
        Ok(())
    }

    /// The value of a global (or static array element) of type `ty`
    /// initialized with `init`, which is not an array.
    fn scalar_init(&mut self, ty: &Ty, init: &'p GlobalInit) -> i64 {
        match init {
            GlobalInit::Int(v) => ops::normalize(ty, *v),
            GlobalInit::Str(bytes) => self.intern(bytes),
            GlobalInit::Null | GlobalInit::Array(..) => 0,
        }
    }

    /// Calls `main` and turns its result into the exit status.
    fn run_main(&mut self) -> Result<i32, Flow> {
        let main = self.program.main;
        let Some(func) = self.program.funcs.get(main.0 as usize) else {
            return Err(self.fail("internal error: the program has no `main`".into()));
        };
        let value = self.call(main, &[])?;
        Ok(match func.ret {
            Ty::I32 | Ty::I64 | Ty::U8 => (value & 255) as i32,
            _ => 0,
        })
    }

    fn intern(&mut self, bytes: &'p [u8]) -> i64 {
        if let Some(&handle) = self.interned.get(bytes) {
            return handle;
        }
        let handle = self.heap.new_str(bytes);
        self.interned.insert(bytes, handle);
        handle
    }

    fn literal(&mut self, bytes: &'p [u8]) -> i64 {
        let address = bytes.as_ptr() as usize;
        if let Some(&handle) = self.literals.get(&address) {
            return handle;
        }
        let handle = self.intern(bytes);
        self.literals.insert(address, handle);
        handle
    }

    #[inline]
    fn local(&self, id: crate::tir::LocalId) -> i64 {
        self.stack[self.frame + id.0 as usize]
    }

    #[inline]
    fn set_local(&mut self, id: crate::tir::LocalId, value: i64) {
        self.stack[self.frame + id.0 as usize] = value;
    }

    /// Evaluates an expression. Every arm beyond the trivial ones is its own
    /// method: in unoptimized builds a function's frame holds the temporaries of
    /// all its arms, and `eval` is on every recursion path, so keeping it lean
    /// keeps deep recursion within the stack.
    fn eval(&mut self, expr: &'p Expr) -> Eval {
        match &expr.kind {
            ExprKind::Const(v) => Ok(*v),
            ExprKind::Local(id) => Ok(self.local(*id)),
            ExprKind::Global(id) => Ok(self.globals[id.0 as usize]),
            ExprKind::Null => Ok(0),
            ExprKind::Str(bytes) => Ok(self.literal(bytes)),
            ExprKind::Binary(op, left, right) => self.binary(*op, left, right),
            ExprKind::Unary(op, operand) => self.unary(*op, operand),
            ExprKind::Logical(op, left, right) => self.logical(*op, left, right),
            ExprKind::Cast(operand) => self.cast(&expr.ty, operand),
            ExprKind::Call(func, args) => self.call(*func, args),
            ExprKind::CallExtern(id, args) => self.call_extern(id.0 as usize, args),
            ExprKind::Builtin(builtin, args) => self.builtin(*builtin, args),
            ExprKind::Field(base, _, index) => self.field(base, *index),
            ExprKind::Index(base, index) => self.index(base, index),
            ExprKind::NewArray(elem, len) => self.new_array(elem, len),
            ExprKind::NewStruct(id, inits) => self.new_struct(id.0 as usize, inits),
            ExprKind::If(cond, then, otherwise) => self.if_else(cond, then, otherwise.as_ref()),
            ExprKind::Block(block) => self.block(block),
        }
    }

    #[inline]
    fn binary(&mut self, op: BinOp, left: &'p Expr, right: &'p Expr) -> Eval {
        let a = self.eval(left)?;
        let b = self.eval(right)?;
        Ok(ops::binary(op, &left.ty, a, b)?)
    }

    #[inline]
    fn unary(&mut self, op: UnOp, operand: &'p Expr) -> Eval {
        let a = self.eval(operand)?;
        Ok(ops::unary(op, &operand.ty, a))
    }

    #[inline]
    fn logical(&mut self, op: Logical, left: &'p Expr, right: &'p Expr) -> Eval {
        let a = self.eval(left)?;
        match (op, a != 0) {
            (Logical::And, false) => Ok(0),
            (Logical::Or, true) => Ok(1),
            _ => self.eval(right),
        }
    }

    /// Operands are normalized to the source type, so any extension is already
    /// done; normalizing to the target type truncates.
    #[inline]
    fn cast(&mut self, target: &Ty, operand: &'p Expr) -> Eval {
        let a = self.eval(operand)?;
        Ok(ops::normalize(target, a))
    }

    #[inline]
    fn field(&mut self, base: &'p Expr, index: u32) -> Eval {
        let handle = self.eval(base)?;
        Ok(self.heap.field(handle, index)?)
    }

    #[inline]
    fn index(&mut self, base: &'p Expr, index: &'p Expr) -> Eval {
        let handle = self.eval(base)?;
        let i = self.eval(index)?;
        if base.ty == Ty::Str {
            Ok(self.heap.str_byte(handle, i)?)
        } else {
            Ok(self.heap.element(handle, i)?)
        }
    }

    #[inline(never)]
    fn new_array(&mut self, elem: &Ty, len: &'p Expr) -> Eval {
        let len = self.eval(len)?;
        Ok(self.heap.new_array(elem, len)?)
    }

    #[inline]
    fn if_else(&mut self, cond: &'p Expr, then: &'p Block, otherwise: Option<&'p Block>) -> Eval {
        if self.eval(cond)? != 0 {
            self.block(then)
        } else if let Some(otherwise) = otherwise {
            self.block(otherwise)
        } else {
            Ok(0)
        }
    }

    fn block(&mut self, block: &'p Block) -> Eval {
        for stmt in &block.stmts {
            self.stmt(stmt)?;
        }
        match &block.tail {
            Some(tail) => self.eval(tail),
            None => Ok(0),
        }
    }

    fn stmt(&mut self, stmt: &'p Stmt) -> Result<(), Flow> {
        match stmt {
            Stmt::Let(id, init) => {
                let value = self.eval(init)?;
                self.set_local(*id, value);
            }
            Stmt::Assign(place, value) => self.assign(place, value)?,
            Stmt::Expr(expr) => {
                self.eval(expr)?;
            }
            Stmt::While(cond, body) => {
                while self.eval(cond)? != 0 {
                    match self.block(body) {
                        Ok(_) | Err(Flow::Continue) => {}
                        Err(Flow::Break) => break,
                        Err(other) => return Err(other),
                    }
                }
            }
            Stmt::For {
                var,
                start,
                end,
                body,
            } => self.for_loop(*var, start, end, body)?,
            Stmt::Break => return Err(Flow::Break),
            Stmt::Continue => return Err(Flow::Continue),
            Stmt::Return(value) => {
                let value = match value {
                    Some(value) => self.eval(value)?,
                    None => 0,
                };
                self.returned = value;
                return Err(Flow::Return);
            }
        }
        Ok(())
    }

    /// `for var in start..end body`. The counter lives in `var`'s slot (the
    /// body cannot assign it). Normalized values compare correctly as `i64`
    /// for every integer type, and `var < end` guarantees `var + 1` does not
    /// leave the type's range.
    fn for_loop(
        &mut self,
        var: crate::tir::LocalId,
        start: &'p Expr,
        end: &'p Expr,
        body: &'p Block,
    ) -> Result<(), Flow> {
        let mut i = self.eval(start)?;
        let end = self.eval(end)?;
        while i < end {
            self.set_local(var, i);
            match self.block(body) {
                Ok(_) | Err(Flow::Continue) => {}
                Err(Flow::Break) => break,
                Err(other) => return Err(other),
            }
            i += 1;
        }
        Ok(())
    }

    /// `place = value`: the place's base and index first, then the value, then
    /// the null and bounds checks.
    fn assign(&mut self, place: &'p Place, value: &'p Expr) -> Result<(), Flow> {
        match place {
            Place::Local(id) => {
                let v = self.eval(value)?;
                self.set_local(*id, v);
            }
            Place::Global(id) => {
                let v = self.eval(value)?;
                self.globals[id.0 as usize] = v;
            }
            Place::Field(base, _, index) => {
                let handle = self.eval(base)?;
                let v = self.eval(value)?;
                self.heap.set_field(handle, *index, v)?;
            }
            Place::Index(base, index) => {
                let handle = self.eval(base)?;
                let i = self.eval(index)?;
                let v = self.eval(value)?;
                if base.ty == Ty::Str {
                    return Err(
                        self.fail("internal error: assignment to an element of a `str`".into())
                    );
                }
                self.heap.set_element(handle, i, v)?;
            }
        }
        Ok(())
    }

    /// Evaluates `args` left to right onto the value stack, returning their
    /// base; on failure the stack is restored before the flow propagates.
    fn push_args(&mut self, args: &'p [Expr]) -> Result<usize, Flow> {
        let base = self.stack.len();
        for arg in args {
            match self.eval(arg) {
                Ok(v) => self.stack.push(v),
                Err(flow) => {
                    self.stack.truncate(base);
                    return Err(flow);
                }
            }
        }
        Ok(base)
    }

    /// Calls a Pare function: the evaluated arguments become the first slots of
    /// the callee's frame.
    #[inline(never)]
    fn call(&mut self, id: FuncId, args: &'p [Expr]) -> Eval {
        let program = self.program;
        let Some(func) = program.funcs.get(id.0 as usize) else {
            return Err(self.fail(format!("internal error: call to unknown function {}", id.0)));
        };
        let base = self.push_args(args)?;
        if self.depth >= MAX_CALL_DEPTH {
            self.stack.truncate(base);
            return Err(Flow::Trap(TrapKind::StackOverflow));
        }
        self.stack.resize(base + func.locals.len(), 0);
        let caller_frame = std::mem::replace(&mut self.frame, base);
        self.depth += 1;
        let result = self.block(&func.body);
        self.depth -= 1;
        self.frame = caller_frame;
        self.stack.truncate(base);
        match result {
            Ok(v) => Ok(v),
            Err(Flow::Return) => Ok(self.returned),
            Err(Flow::Break | Flow::Continue) => Err(self.fail(format!(
                "internal error: `break` or `continue` escapes `{}`",
                func.symbol
            ))),
            Err(other) => Err(other),
        }
    }

    #[inline(never)]
    fn call_extern(&mut self, index: usize, args: &'p [Expr]) -> Eval {
        let program = self.program;
        let (Some(def), Some(&kind)) = (program.externs.get(index), self.externs.get(index)) else {
            return Err(self.fail(format!("internal error: call to unknown extern {index}")));
        };
        let base = self.push_args(args)?;
        let arg = self.stack.get(base).copied();
        self.stack.truncate(base);
        let result = match (kind, arg) {
            // C's putchar writes and returns the byte as an unsigned char.
            (ExternFn::Putchar, Some(c)) => {
                self.write(&[c as u8])?;
                c & 255
            }
            (ExternFn::Getchar, _) => -1,
            (ExternFn::Abs, Some(x)) => (x as i32).wrapping_abs() as i64,
            (ExternFn::Labs, Some(x)) => x.wrapping_abs(),
            (ExternFn::Exit, Some(code)) => return Err(Flow::Exit(code as u8)),
            (ExternFn::Unavailable, _) => {
                return Err(self.fail(format!(
                    "extern function `{}` is not available in the interpreter",
                    def.name
                )))
            }
            (_, None) => {
                return Err(self.fail(format!(
                    "extern function `{}` called without an argument",
                    def.name
                )))
            }
        };
        Ok(ops::normalize(&def.ret, result))
    }

    #[inline(never)]
    fn builtin(&mut self, builtin: Builtin, args: &'p [Expr]) -> Eval {
        let Some(arg) = args.first() else {
            return Err(self.fail(format!(
                "internal error: builtin {builtin:?} without an argument"
            )));
        };
        let value = self.eval(arg)?;
        match builtin {
            Builtin::Print => {
                if arg.ty == Ty::Bool {
                    self.write(if value != 0 { b"true\n" } else { b"false\n" })?;
                } else {
                    self.write_decimal_line(value)?;
                }
                Ok(0)
            }
            Builtin::PrintStr => {
                let bytes = self.heap.str_bytes(value)?;
                match self.out.write_all(bytes) {
                    Ok(()) => Ok(0),
                    Err(_) => Err(Flow::Trap(TrapKind::WriteError)),
                }
            }
            Builtin::Len => match arg.ty {
                Ty::Str => Ok(self.heap.str_bytes(value)?.len() as i64),
                _ => Ok(self.heap.array_len(value)?),
            },
            Builtin::Exit => Err(Flow::Exit(value as u8)),
        }
    }

    #[inline(never)]
    fn new_struct(&mut self, index: usize, inits: &'p [(u32, Expr)]) -> Eval {
        let program = self.program;
        let Some(def) = program.structs.get(index) else {
            return Err(self.fail(format!("internal error: unknown struct {index}")));
        };
        let base = self.stack.len();
        for (_, init) in inits {
            match self.eval(init) {
                Ok(v) => self.stack.push(v),
                Err(flow) => {
                    self.stack.truncate(base);
                    return Err(flow);
                }
            }
        }
        let allocated = self.heap.new_struct(def.fields.len());
        let result = allocated.and_then(|handle| {
            for (k, (field, _)) in inits.iter().enumerate() {
                self.heap.set_field(handle, *field, self.stack[base + k])?;
            }
            Ok(handle)
        });
        self.stack.truncate(base);
        Ok(result?)
    }

    /// Writes program output; a failed write traps, as a short `fwrite`
    /// does in compiled code.
    fn write(&mut self, bytes: &[u8]) -> Result<(), Flow> {
        match self.out.write_all(bytes) {
            Ok(()) => Ok(()),
            Err(_) => Err(Flow::Trap(TrapKind::WriteError)),
        }
    }

    /// Stops the run with [`Exit::Error`]`(message)`.
    #[cold]
    fn fail(&mut self, message: String) -> Flow {
        self.failure = message;
        Flow::Error
    }

    /// `print` of an integer: its normalized value is its value, so signed
    /// and unsigned types print alike.
    fn write_decimal_line(&mut self, value: i64) -> Result<(), Flow> {
        let mut buf = [0u8; 24];
        let mut at = buf.len() - 1;
        buf[at] = b'\n';
        let mut magnitude = value.unsigned_abs();
        loop {
            at -= 1;
            buf[at] = b'0' + (magnitude % 10) as u8;
            magnitude /= 10;
            if magnitude == 0 {
                break;
            }
        }
        if value < 0 {
            at -= 1;
            buf[at] = b'-';
        }
        self.write(&buf[at..])
    }
}
