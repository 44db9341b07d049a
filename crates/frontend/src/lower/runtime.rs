//! The Pare runtime, written in CLIF on top of a few libc functions.
//!
//! Exported entry points (C calling convention, see [`RuntimeFn`]):
//! `pare_print_i64`, `pare_print_bool`, `pare_print_str`, `pare_new_array`,
//! `pare_alloc`, `pare_trap`, `pare_exit`, `pare_flush`, `pare_init`; one
//! local function, the signal handler `pare_on_fault`. Under
//! [`TrapLowering::SharedPaths`] also the shared trap paths
//! `pare_trap_<kind>`, one per kind of check ([`CHECKED_KINDS`]): each is
//! a tail call of `pare_trap(k)` (`mov w2, #k; b pare_trap`; both use the
//! `tail` convention, whose first argument is `x2`), exported, one section each, and reached by a `b`
//! from every function whose check of that kind fails. Imported from libc:
//! `fwrite`, `fflush`, `ferror`, `calloc`, `exit`, `sigaltstack`,
//! `sigaction`, `signal` and the data symbols `stdout`/`stderr` (each a
//! `FILE *` variable: the runtime loads the pointer from the symbol's
//! address). No variadic function is called (Cranelift cannot call them
//! portably).
//!
//! Invariants: output goes through libc's `stdout`, so it interleaves with C
//! code writing there; `pare_trap` and `pare_exit` flush `stdout` and never
//! return (each call is followed by a `trap`); allocations are zeroed.
//!
//! Stack overflow: `main` calls `pare_init` first, which gives the thread an
//! alternate signal stack ([`ALT_STACK_SIZE`] bytes from `calloc`) and
//! installs `pare_on_fault` for `SIGSEGV` (`SA_SIGINFO | SA_ONSTACK`). The
//! stack's guard page (the kernel's gap below the main thread's stack, the
//! guard of a thread's stack, qemu's guard page below the guest stack)
//! turns an overflow into a `SIGSEGV` whose fault address lies within
//! [`FAULT_WINDOW`] of the interrupted stack pointer (read from the
//! `ucontext_t` at [`super::Arch::ucontext_sp_offset`]); the handler, running
//! on the alternate stack, then traps `stack overflow` like any other trap.
//! Any other fault restores the default action and returns, so the faulting
//! instruction faults again and the process dies of `SIGSEGV` as it would
//! have without the handler. Pare code itself cannot fault otherwise (every
//! access is checked); C code called through `extern fn` can. The
//! `struct sigaction` and `stack_t` layouts and the constants are those of
//! Linux/glibc on both aarch64 and x86_64 ([`SIGACTION_SIZE`] and below).
//!
//! Write errors: a short `fwrite` to stdout, and a failed flush of stdout
//! in `pare_exit` and `pare_flush` (which `main` calls before it returns),
//! trap with [`TrapKind::WriteError`]; the flush checks `ferror` too, so an
//! error of a C function writing to stdout (`putchar`) counts. `pare_trap`
//! flushes without checking: its own message is the one to report.
//!
//! Data objects (all local, read-only): `.rt.true`, `.rt.false`, the
//! concatenated trap lines `.rt.trap_text` ("trap: <message>\n" per
//! [`TrapKind`], then a line for unknown codes) and `.rt.trap_index`, an
//! array of `(offset: u32, len: u32)` into the text, one per code.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    self, types, AbiParam, InstBuilder, StackSlotData, StackSlotKind, Value,
};
use cranelift_codegen::isa::CallConv;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use parec_passes::clif_module::{ClifModule, DataDef, FunctionDef, Linkage, SymbolKind};

use super::func::{NORETURN_TRAP, TRUSTED};
use super::memory::{self, Region};
use super::{trap_path_name, Imports, LowerConfig, RuntimeFn, TrapLowering, CHECKED_KINDS};
use crate::tir::{TrapKind, TRAP_EXIT_STATUS};

/// Size of the decimal conversion buffer: sign, 20 digits, newline, rounded up.
const DECIMAL_BUFFER: u32 = 32;

/// Size of the alternate signal stack `pare_on_fault` runs on: room for
/// the handler, `pare_trap` and libc's `fflush`, `fwrite` and `exit` (and a
/// kernel signal frame, a few KiB with large vector registers).
pub const ALT_STACK_SIZE: i64 = 64 << 10;

/// A fault at most this far from the interrupted stack pointer (below or
/// above: a push or a pre-indexed store faults just below it, a store into
/// a frame just allocated above it) is a stack access, hence an overflow
/// into the guard page: the rest of the stack is mapped.
pub const FAULT_WINDOW: i64 = 64 << 10;

/// `SIGSEGV`, `SA_SIGINFO` and `SA_ONSTACK` (Linux, aarch64 and x86_64).
const SIGSEGV: i64 = 11;
const SA_SIGINFO: i64 = 0x4;
const SA_ONSTACK: i64 = 0x0800_0000;

/// glibc's `struct sigaction`: the handler at 0, the `sa_mask` signal set
/// (128 bytes, left empty) at 8, `int sa_flags` at 136, `sa_restorer` at
/// 144 (left null: libc supplies its own).
const SIGACTION_SIZE: i64 = 152;
const SIGACTION_FLAGS: i32 = 136;

/// `stack_t`: `void *ss_sp` at 0, `int ss_flags` at 8, `size_t ss_size` at 16.
const STACK_T_SIZE: i64 = 24;
const STACK_T_SIZE_FIELD: i32 = 16;

/// `siginfo_t`: the fault address `si_addr` at 16.
const SIGINFO_ADDR: i32 = 16;

/// The local symbol of the `SIGSEGV` handler.
const FAULT_HANDLER: &str = "pare_on_fault";

/// The libc functions the runtime calls.
#[derive(Clone, Copy)]
enum Libc {
    Fwrite,
    Fflush,
    Ferror,
    Calloc,
    Exit,
    Sigaltstack,
    Sigaction,
    Signal,
}

impl Libc {
    fn name(self) -> &'static str {
        match self {
            Libc::Fwrite => "fwrite",
            Libc::Fflush => "fflush",
            Libc::Ferror => "ferror",
            Libc::Calloc => "calloc",
            Libc::Exit => "exit",
            Libc::Sigaltstack => "sigaltstack",
            Libc::Sigaction => "sigaction",
            Libc::Signal => "signal",
        }
    }

    fn signature(self, cfg: &LowerConfig) -> ir::Signature {
        let ptr = AbiParam::new(cfg.pointer_type);
        let size = AbiParam::new(types::I64);
        let int = AbiParam::new(types::I32).sext();
        let mut sig = ir::Signature::new(cfg.c_call_conv);
        let (params, returns): (Vec<AbiParam>, Vec<AbiParam>) = match self {
            // size_t fwrite(const void *, size_t, size_t, FILE *)
            Libc::Fwrite => (vec![ptr, size, size, ptr], vec![size]),
            // int fflush(FILE *), int ferror(FILE *)
            Libc::Fflush | Libc::Ferror => (vec![ptr], vec![int]),
            // void *calloc(size_t, size_t)
            Libc::Calloc => (vec![size, size], vec![ptr]),
            // void exit(int)
            Libc::Exit => (vec![int], vec![]),
            // int sigaltstack(const stack_t *, stack_t *)
            Libc::Sigaltstack => (vec![ptr, ptr], vec![int]),
            // int sigaction(int, const struct sigaction *, struct sigaction *)
            Libc::Sigaction => (vec![int, ptr, ptr], vec![int]),
            // sighandler_t signal(int, sighandler_t)
            Libc::Signal => (vec![int, ptr], vec![ptr]),
        };
        sig.params = params;
        sig.returns = returns;
        sig
    }
}

/// The libc function the runtime exits through (it never returns).
pub(super) fn libc_exit() -> &'static str {
    Libc::Exit.name()
}

/// Builds the runtime module.
pub fn runtime_module(cfg: &LowerConfig) -> ClifModule {
    let mut clif = ClifModule::new("pare_runtime");
    for f in RuntimeFn::ALL {
        clif.declare(
            f.name(),
            SymbolKind::Function(f.signature(cfg)),
            Linkage::Export,
        );
    }
    let handler = clif.declare(
        FAULT_HANDLER,
        SymbolKind::Function(fault_handler_signature(cfg)),
        Linkage::Local,
    );
    for f in RuntimeFn::ALL {
        let symbol = clif.symbol_index(f.name()).unwrap_or_default();
        let func = build_function(&mut clif, cfg, Entry::Runtime(f), symbol);
        define(&mut clif, f.name(), symbol, func);
    }
    let func = build_function(&mut clif, cfg, Entry::FaultHandler, handler);
    define(&mut clif, FAULT_HANDLER, handler, func);
    // It reads the stack pointer at the machine's offset in `ucontext`.
    clif.target_specific.insert(FAULT_HANDLER.to_string());
    if cfg.traps == TrapLowering::SharedPaths {
        for kind in CHECKED_KINDS {
            let name = trap_path_name(kind);
            let symbol = clif.declare(
                &name,
                SymbolKind::Function(trap_path_signature()),
                Linkage::Export,
            );
            let func = build_function(&mut clif, cfg, Entry::TrapPath(kind), symbol);
            define(&mut clif, &name, symbol, func);
        }
    }
    clif
}

/// `pare_trap_<kind>()`, `tail` like `pare_trap` so it can tail-call it.
/// Reached by a branch; never returns.
fn trap_path_signature() -> ir::Signature {
    ir::Signature::new(CallConv::Tail)
}

fn define(clif: &mut ClifModule, name: &str, symbol: u32, func: ir::Function) {
    debug_assert!(
        super::verify(&func).is_ok(),
        "runtime function {name} fails verification: {}",
        super::verify(&func).unwrap_err()
    );
    clif.functions.push(FunctionDef { symbol, func });
}

/// A function of the runtime module.
#[derive(Clone, Copy)]
enum Entry {
    Runtime(RuntimeFn),
    /// `pare_on_fault`, installed by `pare_init`.
    FaultHandler,
    /// `pare_trap_<kind>`, the shared trap path of a kind of check
    /// ([`TrapLowering::SharedPaths`]).
    TrapPath(TrapKind),
}

/// `void pare_on_fault(int signal, siginfo_t *info, void *ucontext)`.
fn fault_handler_signature(cfg: &LowerConfig) -> ir::Signature {
    let ptr = AbiParam::new(cfg.pointer_type);
    let mut sig = ir::Signature::new(cfg.c_call_conv);
    sig.params = vec![AbiParam::new(types::I32).sext(), ptr, ptr];
    sig
}

fn build_function(
    clif: &mut ClifModule,
    cfg: &LowerConfig,
    entry_point: Entry,
    symbol: u32,
) -> ir::Function {
    let signature = match entry_point {
        Entry::Runtime(f) => f.signature(cfg),
        Entry::FaultHandler => fault_handler_signature(cfg),
        Entry::TrapPath(_) => trap_path_signature(),
    };
    let mut func = ir::Function::with_name_signature(ClifModule::func_name(symbol), signature);
    let mut fctx = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(&mut func, &mut fctx);
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    b.seal_block(entry);
    let params = b.block_params(entry).to_vec();
    let mut rt = RtFn {
        clif,
        cfg: *cfg,
        b,
        imports: Imports::default(),
    };
    match entry_point {
        Entry::Runtime(RuntimeFn::PrintI64) => rt.print_i64(params[0]),
        Entry::Runtime(RuntimeFn::PrintBool) => rt.print_bool(params[0]),
        Entry::Runtime(RuntimeFn::PrintStr) => rt.print_str(params[0]),
        Entry::Runtime(RuntimeFn::NewArray) => rt.new_array(params[0], params[1]),
        Entry::Runtime(RuntimeFn::Alloc) => rt.alloc(params[0]),
        Entry::Runtime(RuntimeFn::Trap) => rt.trap(params[0]),
        Entry::Runtime(RuntimeFn::Exit) => rt.exit(params[0]),
        Entry::Runtime(RuntimeFn::Flush) => rt.flush(),
        Entry::Runtime(RuntimeFn::Init) => rt.init(),
        Entry::FaultHandler => rt.on_fault(params[1], params[2]),
        Entry::TrapPath(kind) => rt.tail_call_trap(kind),
    }
    rt.b.seal_all_blocks();
    drop(rt);
    func
}

/// The state of one runtime function being built.
struct RtFn<'a, 'c> {
    clif: &'c mut ClifModule,
    cfg: LowerConfig,
    b: FunctionBuilder<'a>,
    imports: Imports,
}

impl RtFn<'_, '_> {
    // ---- helpers -----------------------------------------------------------

    fn call_libc(&mut self, f: Libc, args: &[Value]) -> Option<Value> {
        let sym = self.clif.declare(
            f.name(),
            SymbolKind::Function(f.signature(&self.cfg)),
            Linkage::Import,
        );
        self.call_symbol(sym, args)
    }

    /// The symbol of runtime function `f` (imported: it may be defined
    /// later in the module).
    fn runtime_symbol(&mut self, f: RuntimeFn) -> u32 {
        self.clif.declare(
            f.name(),
            SymbolKind::Function(f.signature(&self.cfg)),
            Linkage::Import,
        )
    }

    fn call_runtime(&mut self, f: RuntimeFn, args: &[Value]) {
        let sym = self.runtime_symbol(f);
        self.call_symbol(sym, args);
    }

    fn call_symbol(&mut self, sym: u32, args: &[Value]) -> Option<Value> {
        let callee = self.imports.func(self.b.func, self.clif, sym);
        let call = self.b.ins().call(callee, args);
        self.b.inst_results(call).first().copied()
    }

    fn address_of(&mut self, sym: u32) -> Value {
        let gv = self.imports.data(self.b.func, sym);
        self.b.ins().symbol_value(self.cfg.pointer_type, gv)
    }

    /// The address of the read-only data object `name` holding `bytes`,
    /// defining it on first use.
    fn constant_data(&mut self, name: &str, bytes: &[u8], align: u64) -> Value {
        let known = self.clif.symbol_index(name).is_some();
        let sym = self
            .clif
            .declare(name, SymbolKind::Data { writable: false }, Linkage::Local);
        if !known {
            self.clif.data.push(DataDef {
                symbol: sym,
                bytes: bytes.to_vec(),
                align,
                relocs: Vec::new(),
            });
        }
        self.address_of(sym)
    }

    /// Loads the `FILE *` stored in libc's variable `name` (`stdout`/`stderr`).
    fn c_stream(&mut self, name: &str) -> Value {
        let sym = self
            .clif
            .declare(name, SymbolKind::Data { writable: true }, Linkage::Import);
        let addr = self.address_of(sym);
        self.b.ins().load(self.cfg.pointer_type, TRUSTED, addr, 0)
    }

    /// `fwrite(bytes, 1, len, *stream)`; returns the number of bytes written.
    fn write(&mut self, stream: &str, bytes: Value, len: Value) -> Value {
        let file = self.c_stream(stream);
        let one = self.b.ins().iconst(types::I64, 1);
        self.call_libc(Libc::Fwrite, &[bytes, one, len, file])
            .unwrap_or(len)
    }

    /// Writes `len` bytes to stdout; traps if fewer were written.
    fn write_stdout(&mut self, bytes: Value, len: Value) {
        let written = self.write("stdout", bytes, len);
        let short = self.b.ins().icmp(IntCC::NotEqual, written, len);
        self.trap_if(short, TrapKind::WriteError);
    }

    /// `fflush(stdout)`; returns its result (0 on success).
    fn flush_stdout(&mut self) -> Option<Value> {
        let file = self.c_stream("stdout");
        self.call_libc(Libc::Fflush, &[file])
    }

    /// Flushes stdout; traps if the flush fails or stdout had an error
    /// before (`ferror`: a write of C code, or one the buffer hid).
    fn flush_stdout_checked(&mut self) {
        let flushed = self.flush_stdout();
        let file = self.c_stream("stdout");
        let error = self.call_libc(Libc::Ferror, &[file]);
        // Both return an `int` (their signatures say so).
        let (Some(flushed), Some(error)) = (flushed, error) else {
            return;
        };
        let failed = self.b.ins().bor(flushed, error);
        let failed = self.b.ins().icmp_imm_u(IntCC::NotEqual, failed, 0);
        self.trap_if(failed, TrapKind::WriteError);
    }

    /// Calls `pare_trap(kind)` (which does not return) and ends the block.
    fn trap_with(&mut self, kind: TrapKind) {
        let code = self.b.ins().iconst(types::I32, i64::from(kind.code()));
        self.call_runtime(RuntimeFn::Trap, &[code]);
        self.b.ins().trap(NORETURN_TRAP);
    }

    /// Tail-calls `pare_trap(kind)`: the body of a shared trap path.
    fn tail_call_trap(&mut self, kind: TrapKind) {
        let code = self.b.ins().iconst(types::I32, i64::from(kind.code()));
        let sym = self.runtime_symbol(RuntimeFn::Trap);
        let callee = self.imports.func(self.b.func, self.clif, sym);
        self.b.ins().return_call(callee, &[code]);
    }

    /// Continues in a new block if `cond` is zero, else traps with `kind`
    /// (the trap path is a cold block of its own).
    fn trap_if(&mut self, cond: Value, kind: TrapKind) {
        let trap = self.b.create_block();
        let cont = self.b.create_block();
        self.b.ins().brif(cond, trap, &[], cont, &[]);
        self.b.seal_block(trap);
        self.b.seal_block(cont);
        self.b.switch_to_block(trap);
        self.b.set_cold_block(trap);
        self.trap_with(kind);
        self.b.switch_to_block(cont);
    }

    // ---- the entry points --------------------------------------------------

    /// Writes `x` in decimal and a newline: digits are produced from the
    /// end of a stack buffer from the unsigned magnitude (`0 - x` wraps to
    /// the right magnitude for `i64::MIN`), then the sign.
    fn print_i64(&mut self, x: Value) {
        let ptr = self.cfg.pointer_type;
        let slot = self.b.create_sized_stack_slot(StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            DECIMAL_BUFFER,
            3,
        ));
        let buf = self.b.ins().stack_addr(ptr, slot, 0);
        let newline = self.b.ins().iconst(types::I8, i64::from(b'\n'));
        self.b
            .ins()
            .store(TRUSTED, newline, buf, DECIMAL_BUFFER as i32 - 1);
        let negative = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, x, 0);
        let negated = self.b.ins().ineg(x);
        let magnitude = self.b.ins().select(negative, negated, x);
        let end = self
            .b
            .ins()
            .iconst(types::I64, i64::from(DECIMAL_BUFFER - 1));

        let digit_loop = self.b.create_block();
        let n = self.b.append_block_param(digit_loop, types::I64);
        let pos = self.b.append_block_param(digit_loop, types::I64);
        let sign = self.b.create_block();
        let sign_pos = self.b.append_block_param(sign, types::I64);
        let minus = self.b.create_block();
        let output = self.b.create_block();
        let start = self.b.append_block_param(output, types::I64);
        self.b
            .ins()
            .jump(digit_loop, &[magnitude.into(), end.into()]);

        self.b.switch_to_block(digit_loop);
        let ten = self.b.ins().iconst(types::I64, 10);
        let quotient = self.b.ins().udiv(n, ten);
        let tens = self.b.ins().imul(quotient, ten);
        let remainder = self.b.ins().isub(n, tens);
        let low = self.b.ins().ireduce(types::I8, remainder);
        let digit = self.b.ins().iadd_imm_u(low, i64::from(b'0'));
        let next = self.b.ins().iadd_imm_s(pos, -1);
        let at = self.b.ins().iadd(buf, next);
        self.b.ins().store(TRUSTED, digit, at, 0);
        self.b.ins().brif(
            quotient,
            digit_loop,
            &[quotient.into(), next.into()],
            sign,
            &[next.into()],
        );
        self.b.seal_block(digit_loop);

        self.b.switch_to_block(sign);
        self.b.seal_block(sign);
        self.b
            .ins()
            .brif(negative, minus, &[], output, &[sign_pos.into()]);

        self.b.switch_to_block(minus);
        self.b.seal_block(minus);
        let dash = self.b.ins().iconst(types::I8, i64::from(b'-'));
        let before = self.b.ins().iadd_imm_s(sign_pos, -1);
        let at = self.b.ins().iadd(buf, before);
        self.b.ins().store(TRUSTED, dash, at, 0);
        self.b.ins().jump(output, &[before.into()]);

        self.b.switch_to_block(output);
        self.b.seal_block(output);
        let text = self.b.ins().iadd(buf, start);
        let size = self.b.ins().iconst(types::I64, i64::from(DECIMAL_BUFFER));
        let len = self.b.ins().isub(size, start);
        self.write_stdout(text, len);
        self.b.ins().return_(&[]);
    }

    /// Writes `true\n` or `false\n`.
    fn print_bool(&mut self, value: Value) {
        let yes = self.b.create_block();
        let no = self.b.create_block();
        let output = self.b.create_block();
        let text = self.b.append_block_param(output, self.cfg.pointer_type);
        let len = self.b.append_block_param(output, types::I64);
        self.b.ins().brif(value, yes, &[], no, &[]);
        for (block, word) in [(yes, "true\n"), (no, "false\n")] {
            self.b.switch_to_block(block);
            self.b.seal_block(block);
            let name = format!(".rt.{}", word.trim_end());
            let addr = self.constant_data(&name, word.as_bytes(), 1);
            let n = self.b.ins().iconst(types::I64, word.len() as i64);
            self.b.ins().jump(output, &[addr.into(), n.into()]);
        }
        self.b.switch_to_block(output);
        self.b.seal_block(output);
        self.write_stdout(text, len);
        self.b.ins().return_(&[]);
    }

    /// Writes the bytes of a string (`{ len, bytes }`); traps on null.
    fn print_str(&mut self, s: Value) {
        let is_null = self.b.ins().icmp_imm_u(IntCC::Equal, s, 0);
        self.trap_if(is_null, TrapKind::NullDereference);
        let flags = memory::length_load(self.b.func, false);
        let len = self.b.ins().load(types::I64, flags, s, 0);
        let bytes = self.b.ins().iadd_imm_u(s, 8);
        self.write_stdout(bytes, len);
        self.b.ins().return_(&[]);
    }

    /// A zeroed array block of `len` elements of `elem_size` bytes, with the
    /// length stored at offset 0. Traps on a negative length, on a size that
    /// overflows 64 bits and when calloc fails.
    fn new_array(&mut self, len: Value, elem_size: Value) {
        let negative = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, len, 0);
        self.trap_if(negative, TrapKind::NegativeLength);
        let high = self.b.ins().umulhi(len, elem_size);
        let elems = self.b.ins().imul(len, elem_size);
        let total = self.b.ins().iadd_imm_u(elems, 8);
        let wrapped = self.b.ins().icmp(IntCC::UnsignedLessThan, total, elems);
        let too_big = self.b.ins().icmp_imm_u(IntCC::NotEqual, high, 0);
        let overflow = self.b.ins().bor(wrapped, too_big);
        self.trap_if(overflow, TrapKind::OutOfMemory);
        let one = self.b.ins().iconst(types::I64, 1);
        let block = self.call_libc(Libc::Calloc, &[one, total]).unwrap_or(one);
        let failed = self.b.ins().icmp_imm_u(IntCC::Equal, block, 0);
        self.trap_if(failed, TrapKind::OutOfMemory);
        let flags = Region::Length.trusted(self.b.func);
        self.b.ins().store(flags, len, block, 0);
        self.b.ins().return_(&[block]);
    }

    /// `size` zeroed bytes; traps when calloc fails.
    fn alloc(&mut self, size: Value) {
        let one = self.b.ins().iconst(types::I64, 1);
        let block = self.call_libc(Libc::Calloc, &[one, size]).unwrap_or(one);
        let failed = self.b.ins().icmp_imm_u(IntCC::Equal, block, 0);
        self.trap_if(failed, TrapKind::OutOfMemory);
        self.b.ins().return_(&[block]);
    }

    /// Flushes stdout, writes `trap: <message>\n` to stderr (the message is
    /// looked up in a table; unknown codes get a generic line) and exits with
    /// status 101.
    fn trap(&mut self, code: Value) {
        self.flush_stdout();
        let (text, index) = trap_tables();
        let known = TrapKind::ALL.len() as i64;
        let in_range = self
            .b
            .ins()
            .icmp_imm_u(IntCC::UnsignedLessThan, code, known);
        let unknown = self.b.ins().iconst(types::I32, known);
        let entry = self.b.ins().select(in_range, code, unknown);
        let entry = self.b.ins().uextend(types::I64, entry);
        let entry_offset = self.b.ins().ishl_imm_u(entry, 3);
        let index_addr = self.constant_data(".rt.trap_index", &index, 4);
        let entry_addr = self.b.ins().iadd(index_addr, entry_offset);
        let offset = self.b.ins().uload32(TRUSTED, entry_addr, 0);
        let len = self.b.ins().uload32(TRUSTED, entry_addr, 4);
        let text_addr = self.constant_data(".rt.trap_text", &text, 1);
        let line = self.b.ins().iadd(text_addr, offset);
        self.write("stderr", line, len);
        let status = self.b.ins().iconst(types::I32, i64::from(TRAP_EXIT_STATUS));
        self.call_libc(Libc::Exit, &[status]);
        self.b.ins().trap(NORETURN_TRAP);
    }

    /// Flushes stdout and exits with `code`; traps if the flush fails.
    fn exit(&mut self, code: Value) {
        self.flush_stdout_checked();
        self.call_libc(Libc::Exit, &[code]);
        self.b.ins().trap(NORETURN_TRAP);
    }

    /// Installs `pare_on_fault` for `SIGSEGV` on an alternate signal stack
    /// (see the module doc). One zeroed block holds the alternate stack,
    /// then the `stack_t` and the `struct sigaction` passed to libc, so only
    /// the non-zero fields are stored. Without memory for it, stack overflow
    /// stays a plain `SIGSEGV`.
    fn init(&mut self) {
        let ptr = self.cfg.pointer_type;
        let one = self.b.ins().iconst(types::I64, 1);
        let size = self
            .b
            .ins()
            .iconst(types::I64, ALT_STACK_SIZE + STACK_T_SIZE + SIGACTION_SIZE);
        let block = self.call_libc(Libc::Calloc, &[one, size]).unwrap_or(one);
        let failed = self.b.ins().icmp_imm_u(IntCC::Equal, block, 0);
        let install = self.b.create_block();
        let done = self.b.create_block();
        self.b.ins().brif(failed, done, &[], install, &[]);
        self.b.seal_block(install);
        self.b.switch_to_block(install);

        let stack = self.b.ins().iadd_imm_u(block, ALT_STACK_SIZE);
        self.b.ins().store(TRUSTED, block, stack, 0);
        let stack_size = self.b.ins().iconst(types::I64, ALT_STACK_SIZE);
        self.b
            .ins()
            .store(TRUSTED, stack_size, stack, STACK_T_SIZE_FIELD);
        let null = self.b.ins().iconst(ptr, 0);
        self.call_libc(Libc::Sigaltstack, &[stack, null]);

        let action = self.b.ins().iadd_imm_u(stack, STACK_T_SIZE);
        let handler_sym = self.clif.symbol_index(FAULT_HANDLER).unwrap_or_default();
        let handler_ref = self.imports.func(self.b.func, self.clif, handler_sym);
        let handler = self.b.ins().func_addr(ptr, handler_ref);
        self.b.ins().store(TRUSTED, handler, action, 0);
        let flags = self.b.ins().iconst(types::I32, SA_SIGINFO | SA_ONSTACK);
        self.b.ins().store(TRUSTED, flags, action, SIGACTION_FLAGS);
        let segv = self.b.ins().iconst(types::I32, SIGSEGV);
        self.call_libc(Libc::Sigaction, &[segv, action, null]);
        self.b.ins().jump(done, &[]);

        self.b.seal_block(done);
        self.b.switch_to_block(done);
        self.b.ins().return_(&[]);
    }

    /// The `SIGSEGV` handler: a fault within [`FAULT_WINDOW`] of the
    /// interrupted stack pointer traps `stack overflow`; any other restores
    /// the default action and returns (to fault again and die).
    fn on_fault(&mut self, info: Value, ucontext: Value) {
        let address = self.b.ins().load(types::I64, TRUSTED, info, SIGINFO_ADDR);
        let sp = self.b.ins().load(
            types::I64,
            TRUSTED,
            ucontext,
            self.cfg.arch.ucontext_sp_offset(),
        );
        // `address - sp` in [-FAULT_WINDOW, FAULT_WINDOW): one unsigned compare.
        let distance = self.b.ins().isub(address, sp);
        let shifted = self.b.ins().iadd_imm_u(distance, FAULT_WINDOW);
        let near = self
            .b
            .ins()
            .icmp_imm_u(IntCC::UnsignedLessThan, shifted, 2 * FAULT_WINDOW);
        self.trap_if(near, TrapKind::StackOverflow);
        let segv = self.b.ins().iconst(types::I32, SIGSEGV);
        let default_action = self.b.ins().iconst(self.cfg.pointer_type, 0);
        self.call_libc(Libc::Signal, &[segv, default_action]);
        self.b.ins().return_(&[]);
    }

    /// Flushes stdout; traps if the flush fails. `main` calls it before it
    /// returns, since the C library's exit flushes without reporting errors.
    fn flush(&mut self) {
        self.flush_stdout_checked();
        self.b.ins().return_(&[]);
    }
}

/// The trap lines (one per [`TrapKind`] code, then one for unknown codes)
/// and their `(offset, len)` index, both little-endian `u32`s.
fn trap_tables() -> (Vec<u8>, Vec<u8>) {
    let mut text = Vec::new();
    let mut index = Vec::new();
    let lines = TrapKind::ALL
        .iter()
        .map(|k| format!("trap: {}\n", k.message()));
    for line in lines.chain(std::iter::once("trap: unknown trap\n".to_string())) {
        index.extend_from_slice(&(text.len() as u32).to_le_bytes());
        index.extend_from_slice(&(line.len() as u32).to_le_bytes());
        text.extend_from_slice(line.as_bytes());
    }
    (text, index)
}
