//! The Pare runtime, written in CLIF, in two flavours ([`Runtime`]): on top
//! of a few C library functions, or freestanding on Linux system calls.
//!
//! Exported entry points (C calling convention, see [`RuntimeFn`]):
//! `pare_print_i64`, `pare_print_bool`, `pare_print_str`, `pare_new_array`,
//! `pare_alloc`, `pare_trap`, `pare_exit`, `pare_flush`, `pare_init`; one
//! local function, the signal handler `pare_on_fault`. Under
//! [`super::TrapLowering::SharedPaths`] also the shared trap paths
//! `pare_trap_<kind>`, one per kind of check ([`CHECKED_KINDS`]): each is
//! a tail call of `pare_trap(k)` (`mov w2, #k; b pare_trap`; both use the
//! `tail` convention, whose first argument is `x2`), exported, one section each, and reached by a `b`
//! from every function whose check of that kind fails. The entry points
//! are written once, against the few operations a flavour provides
//! ([`RtFn::write_stdout`], [`RtFn::flush_stdout_checked`], the allocation,
//! the exit, the signal set-up); only those differ.
//!
//! # The C library flavour ([`Runtime::Libc`])
//!
//! The JIT (which runs in parec's own process) and executables of programs
//! that call C (`extern fn`). Imported from libc: `fwrite`, `fflush`,
//! `ferror`, `calloc`, `exit`, `sigaltstack`, `sigaction` and the data
//! symbols `stdout`/`stderr` (each a `FILE *` variable: the runtime loads the
//! pointer from the symbol's address). No variadic function is called
//! (Cranelift cannot call them portably). Output goes through libc's
//! `stdout`, so it interleaves with C code writing there.
//!
//! # The freestanding flavour ([`Runtime::Freestanding`])
//!
//! Every other executable: no C library, no start files, only Linux system
//! calls, made through `pare_syscall(a0, a1, a2, a3, number) -> i64`, a
//! function of machine code per target ([`raw_code`]: `mov x8, x4; mov
//! x4, #-1; mov x5, #0; svc #0; ret` on aarch64, `mov rax, r8; mov r10,
//! rcx; or r8, -1; xor r9d, r9d; syscall; ret` on x86_64), since Cranelift
//! has no system-call instruction. It passes four arguments, and -1 and 0
//! as the fifth and sixth: the runtime's calls take at most four, but
//! `mmap`, whose anonymous mappings want no file (-1) at offset 0 (only
//! arguments a call passes cost code at its every call site). The `write`
//! loop `pare_write(fd, bytes, len) -> left` is machine code too (13
//! instructions on aarch64): the system call leaves the argument registers
//! alone, so the loop keeps its state in them, where CLIF calling
//! `pare_syscall` keeps it in callee-saved registers (32 instructions); so
//! is the exit, `pare_exit_group(status)` (`mov x8, #94; svc #0`), which
//! through `pare_syscall` would repeat its one argument in three more
//! registers and move the number into a fifth at each exit. The process
//! starts at `_start`, machine code too (it receives the stack the kernel
//! built, not a call): it calls `main` and passes its status to
//! `pare_exit` (`bl main; bl pare_exit`; x86_64 `call main; mov edi, eax;
//! call pare_exit`: the kernel leaves `rsp` 16-byte aligned, as a call
//! expects). Everything else is CLIF:
//!
//! - **stdout** is a buffer of [`OUT_BUFFER`] bytes in the runtime's state
//!   ([`STATE_SIZE`] zeroed bytes, `.bss`): `pare_out` appends to it,
//!   `pare_flush` (also when it is full) writes it out with `pare_write`
//!   (the `write` loop: a partial write continues with the rest, `EINTR`
//!   retries, any other error or a write of nothing fails) and traps
//!   `write error on stdout` on failure. Output to a pipe or a file is
//!   fully buffered, as the C library buffers it; on a terminal
//!   (`pare_init` asks the kernel with `ioctl(1, TCGETS)`) every piece of
//!   output is written at once. The C library buffers a terminal by lines:
//!   the lines a program prints appear at the same moments, a partial line
//!   (`print_str` without a newline) sooner. One check of a flag costs
//!   less code than looking for newlines. `pare_trap` writes
//!   what is buffered without checking, then its line to stderr (fd 2,
//!   unbuffered).
//! - **memory** comes from `mmap` (anonymous, private: zeroed by the
//!   kernel) through `pare_map`, which traps `out of memory` when the
//!   kernel refuses: `pare_alloc` bumps a pointer through chunks of
//!   [`HEAP_CHUNK`] bytes (8-byte aligned; the rest of a chunk too small
//!   for a request is left unused) and maps each request of
//!   [`LARGE_ALLOCATION`] bytes or more on its own. Memory is never freed
//!   (docs/LANGUAGE.md).
//! - **exit** is `exit_group` (`pare_exit_group`), after `pare_flush`
//!   (`pare_exit`) or the unchecked flush (`pare_trap`).
//! - **C functions**: `putchar`, `getchar`, `abs`, `labs` and `exit`
//!   ([`CFunction`]), the C functions the reference interpreter
//!   implements, are defined here with their C meaning, so a program whose
//!   `extern fn`s are among them needs no C library; `putchar` writes into
//!   the stdout buffer, so its output interleaves with `print`'s.
//! - **signals**: `sigaltstack` and `rt_sigaction` with the kernel's
//!   `struct sigaction` ([`KERNEL_SIGACTION_SIZE`]: handler, flags,
//!   restorer, an 8-byte mask, on both targets), which is not glibc's.
//!   x86_64 needs `SA_RESTORER` and a restorer, `pare_sigreturn` (`mov
//!   eax, 15; syscall`: `rt_sigreturn`), for a handler that returns; on
//!   aarch64 the kernel returns through its vDSO.
//!
//! `SIGPIPE` keeps its default action in both flavours: writing to a
//! closed pipe kills the program, as it kills a C program.
//!
//! # Invariants
//!
//! `pare_trap` and `pare_exit` flush stdout and never return (each call is
//! followed by a `trap`); allocations are zeroed and never null.
//!
//! Stack overflow: `main` calls `pare_init` first, which gives the thread an
//! alternate signal stack ([`ALT_STACK_SIZE`] bytes: from `calloc`, or in
//! the freestanding state) and installs `pare_on_fault` for `SIGSEGV`
//! (`SA_SIGINFO | SA_ONSTACK | SA_RESETHAND`). The stack's guard page (the
//! kernel's gap below the main thread's stack, the guard of a thread's
//! stack, qemu's guard page below the guest stack) turns an overflow into a
//! `SIGSEGV` whose fault address lies within [`FAULT_WINDOW`] of the
//! interrupted stack pointer (read from the `ucontext_t` at
//! [`super::Arch::ucontext_sp_offset`]); the handler, running on the
//! alternate stack, then traps `stack overflow` like any other trap. Any
//! other fault returns from the handler, whose action `SA_RESETHAND` has
//! reset to the default on entry, so the faulting instruction faults again
//! and the process dies of `SIGSEGV` as it would have without the handler.
//! Pare code itself cannot fault otherwise (every access is checked); C
//! code called through `extern fn` can.
//!
//! Write errors: a short `fwrite` to stdout, a failed flush of the buffer
//! (freestanding), and a failed flush of stdout in `pare_exit` and
//! `pare_flush` (which `main` calls before it returns), trap with
//! [`TrapKind::WriteError`]; with libc the flush checks `ferror` too, so an
//! error of a C function writing to stdout (`putchar`) counts. `pare_trap`
//! flushes without checking: its own message is the one to report.
//!
//! Data objects (all local): read-only `.rt.bools` ("false\ntrue\n"),
//! `.rt.trap_prefix` ("trap: "), the concatenated ends of the trap lines
//! `.rt.trap_text` ("<message>\n" per [`TrapKind`], then one for unknown
//! codes) and `.rt.trap_index`, an array of `(offset: u8, len: u8)` into
//! the text, one per code; freestanding, the writable, zeroed `.rt.state`
//! ([`STATE_SIZE`] bytes).

use cranelift_codegen::binemit::Reloc;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    self, types, AbiParam, InstBuilder, StackSlotData, StackSlotKind, Value,
};
use cranelift_codegen::isa::CallConv;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use parec_passes::clif_module::{
    ClifModule, DataDef, FunctionDef, Linkage, RawFunctionDef, RawReloc, SymbolKind,
};

use super::func::{NORETURN_TRAP, TRUSTED};
use super::memory::{self, Region};
use super::{trap_path_name, Arch, Imports, LowerConfig, Runtime, RuntimeFn, CHECKED_KINDS};
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

/// `SIGSEGV` and the `sa_flags` bits the handler is installed with (Linux,
/// aarch64 and x86_64): `SA_SIGINFO`, `SA_ONSTACK`, `SA_RESETHAND`, and
/// `SA_RESTORER` (the kernel's, freestanding x86_64 only).
const SIGSEGV: i64 = 11;
const SA_SIGINFO: i64 = 0x4;
const SA_ONSTACK: i64 = 0x0800_0000;
const SA_RESETHAND: i64 = 0x8000_0000;
const SA_RESTORER: i64 = 0x0400_0000;

/// glibc's `struct sigaction`: the handler at 0, the `sa_mask` signal set
/// (128 bytes, left empty) at 8, `int sa_flags` at 136, `sa_restorer` at
/// 144 (left null: libc supplies its own).
const SIGACTION_SIZE: i64 = 152;
const SIGACTION_FLAGS: i32 = 136;

/// The kernel's `struct sigaction` (`rt_sigaction`, aarch64 and x86_64
/// alike): the handler at 0, `unsigned long sa_flags` at 8, `sa_restorer`
/// at 16, the mask at 24, of [`KERNEL_SIGSET_SIZE`] bytes (left empty).
pub const KERNEL_SIGACTION_SIZE: i64 = 32;
const KERNEL_SIGACTION_FLAGS: i32 = 8;
const KERNEL_SIGACTION_RESTORER: i32 = 16;
/// The signal-set size `rt_sigaction` takes: 64 signals.
const KERNEL_SIGSET_SIZE: i64 = 8;

/// `stack_t`: `void *ss_sp` at 0, `int ss_flags` at 8, `size_t ss_size` at 16.
const STACK_T_SIZE: i64 = 24;
const STACK_T_SIZE_FIELD: i32 = 16;

/// `siginfo_t`: the fault address `si_addr` at 16.
const SIGINFO_ADDR: i32 = 16;

/// Freestanding stdout buffer: the size of the C library's for a pipe or a
/// file (`st_blksize`, 4 KiB).
pub const OUT_BUFFER: i64 = 4096;

/// Freestanding allocation: the size of the chunks small requests are
/// carved from, and the size from which a request gets a mapping of its own
/// (the C library's default `mmap` threshold).
pub const HEAP_CHUNK: i64 = 1 << 20;
pub const LARGE_ALLOCATION: i64 = 128 << 10;

/// The layout of the freestanding runtime's state `.rt.state`: bytes
/// buffered for stdout, whether stdout is a terminal (then unbuffered), the
/// next free heap byte and the end of the current chunk, the `stack_t` and
/// the kernel `struct sigaction` `pare_init` passes to the kernel, the
/// buffer and the alternate signal stack (16-byte aligned). The words code
/// reads often come first, within reach of a load's immediate offset.
const STATE_OUT_LEN: i32 = 0;
const STATE_TERMINAL: i32 = 8;
const STATE_HEAP_NEXT: i32 = 16;
const STATE_HEAP_END: i32 = 24;
const STATE_STACK_T: i64 = 32;
const STATE_SIGACTION: i64 = STATE_STACK_T + STACK_T_SIZE;
const STATE_OUT: i64 = (STATE_SIGACTION + KERNEL_SIGACTION_SIZE + 15) & !15;
const STATE_ALT_STACK: i64 = STATE_OUT + OUT_BUFFER;
pub const STATE_SIZE: i64 = STATE_ALT_STACK + ALT_STACK_SIZE;

/// `mmap` protection and flags: `PROT_READ | PROT_WRITE`, `MAP_PRIVATE |
/// MAP_ANONYMOUS`.
const PROT_READ_WRITE: i64 = 0x3;
const MAP_PRIVATE_ANONYMOUS: i64 = 0x22;

/// `ioctl` request for a terminal's attributes (`TCGETS`, both targets);
/// it fails on anything that is not a terminal. The kernel's `struct
/// termios` it fills is 36 bytes; the stdout buffer, empty then, holds it.
const TCGETS: i64 = 0x5401;

/// `EINTR`, as a system call returns it (negated).
const EINTR: i64 = 4;

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

/// The Linux system calls of the freestanding runtime.
#[derive(Clone, Copy)]
enum Sys {
    Read,
    Write,
    ExitGroup,
    Mmap,
    Sigaltstack,
    RtSigaction,
    Ioctl,
}

impl Sys {
    /// The system call's number on `arch` (the generic table on aarch64).
    fn number(self, arch: Arch) -> i64 {
        match (self, arch) {
            (Sys::Read, Arch::Aarch64) => 63,
            (Sys::Read, Arch::X86_64) => 0,
            (Sys::Write, Arch::Aarch64) => 64,
            (Sys::Write, Arch::X86_64) => 1,
            (Sys::ExitGroup, Arch::Aarch64) => 94,
            (Sys::ExitGroup, Arch::X86_64) => 231,
            (Sys::Mmap, Arch::Aarch64) => 222,
            (Sys::Mmap, Arch::X86_64) => 9,
            (Sys::Sigaltstack, Arch::Aarch64) => 132,
            (Sys::Sigaltstack, Arch::X86_64) => 131,
            (Sys::RtSigaction, Arch::Aarch64) => 134,
            (Sys::RtSigaction, Arch::X86_64) => 13,
            (Sys::Ioctl, Arch::Aarch64) => 29,
            (Sys::Ioctl, Arch::X86_64) => 16,
        }
    }
}

/// `rt_sigreturn` on x86_64, which `pare_sigreturn` makes.
const X86_64_RT_SIGRETURN: u8 = 15;

/// The freestanding runtime's functions of machine code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Raw {
    /// `pare_syscall(a0, a1, a2, a3, number) -> i64`: the system call
    /// (fifth and sixth arguments -1 and 0).
    Syscall,
    /// `pare_write(fd, bytes, len) -> left`: the `write` loop (see
    /// [`raw_code`]).
    Write,
    /// `pare_exit_group(status)`: ends the process (see [`raw_code`]).
    ExitGroup,
    /// `_start`: the process's entry point.
    Start,
    /// `pare_sigreturn`: a signal handler's return (x86_64 only).
    Sigreturn,
}

impl Raw {
    fn name(self) -> &'static str {
        match self {
            Raw::Syscall => "pare_syscall",
            Raw::Write => "pare_write",
            Raw::ExitGroup => "pare_exit_group",
            Raw::Start => "_start",
            Raw::Sigreturn => "pare_sigreturn",
        }
    }

    /// The functions `arch` needs.
    fn needed(arch: Arch) -> &'static [Raw] {
        match arch {
            Arch::Aarch64 => &[Raw::Syscall, Raw::Write, Raw::ExitGroup, Raw::Start],
            Arch::X86_64 => &[
                Raw::Syscall,
                Raw::Write,
                Raw::ExitGroup,
                Raw::Start,
                Raw::Sigreturn,
            ],
        }
    }

    fn signature(self, cfg: &LowerConfig) -> ir::Signature {
        let mut sig = ir::Signature::new(cfg.c_call_conv);
        let size = AbiParam::new(types::I64);
        match self {
            Raw::Syscall => {
                sig.params = vec![size; 5];
                sig.returns = vec![size];
            }
            Raw::Write => {
                sig.params = vec![size, AbiParam::new(cfg.pointer_type), size];
                sig.returns = vec![size];
            }
            // The kernel reads the status's low 8 bits: an `int` will do.
            Raw::ExitGroup => sig.params = vec![AbiParam::new(types::I32)],
            Raw::Start | Raw::Sigreturn => {}
        }
        sig
    }

    /// `_start` is the entry point the linker is told of; the others
    /// are the runtime's own.
    fn linkage(self) -> Linkage {
        match self {
            Raw::Start => Linkage::Export,
            Raw::Syscall | Raw::Write | Raw::ExitGroup | Raw::Sigreturn => Linkage::Local,
        }
    }
}

/// The name of the freestanding runtime's entry point: the executable's
/// entry (`ld.lld -e`).
pub const ENTRY_POINT: &str = "_start";

/// A call in a raw function's machine code: `(offset, kind, callee,
/// addend)`.
type RawCall = (u32, Reloc, &'static str, i64);

/// The machine code of `raw` for `arch`: its bytes, and its calls.
fn raw_code(raw: Raw, arch: Arch) -> (Vec<u8>, Vec<RawCall>) {
    let words = |words: &[u32]| words.iter().flat_map(|w| w.to_le_bytes()).collect();
    match (raw, arch) {
        // mov x8, x4; mov x4, #-1; mov x5, #0; svc #0; ret
        (Raw::Syscall, Arch::Aarch64) => (
            words(&[
                0xaa04_03e8,
                0x9280_0004,
                0xd280_0005,
                0xd400_0001,
                0xd65f_03c0,
            ]),
            vec![],
        ),
        // mov rax, r8; mov r10, rcx; or r8, -1; xor r9d, r9d; syscall; ret
        (Raw::Syscall, Arch::X86_64) => (
            vec![
                0x4c, 0x89, 0xc0, 0x49, 0x89, 0xca, 0x49, 0x83, 0xc8, 0xff, 0x45, 0x31, 0xc9, 0x0f,
                0x05, 0xc3,
            ],
            vec![],
        ),
        // The `write` loop: writes all `len` (> 0) bytes to `fd`: after a
        // partial write, the rest; after `EINTR`, again. Returns the
        // number of bytes left unwritten: 0, unless a write failed or wrote
        // nothing. Machine code, since the system call leaves every
        // argument register but the result's as it was: the loop keeps its
        // state in them, where CLIF would keep it in callee-saved registers
        // across a call of `pare_syscall`.
        //
        //       mov  x3, x0
        // loop: mov  x0, x3
        //       mov  x8, #64      (write)
        //       svc  #0
        //       cmn  x0, #4       (-EINTR: again)
        //       b.eq loop
        //       cmp  x0, #0       (an error, or nothing written: done)
        //       b.le done
        //       add  x1, x1, x0
        //       subs x2, x2, x0
        //       b.ne loop
        // done: mov  x0, x2
        //       ret
        (Raw::Write, Arch::Aarch64) => (
            words(&[
                0xaa00_03e3,
                0xaa03_03e0,
                0xd280_0008 | (Sys::Write.number(arch) as u32) << 5,
                0xd400_0001,
                0xb100_101f,
                0x54ff_ff80,
                0xf100_001f,
                0x5400_008d,
                0x8b00_0021,
                0xeb00_0042,
                0x54ff_fee1,
                0xaa02_03e0,
                0xd65f_03c0,
            ]),
            vec![],
        ),
        //       mov  r8, rdi
        // loop: mov  eax, 1       (write)
        //       mov  rdi, r8
        //       syscall           (clobbers rcx and r11 only)
        //       cmp  rax, -4      (-EINTR: again)
        //       je   loop
        //       test rax, rax     (an error, or nothing written: done)
        //       jle  done
        //       add  rsi, rax
        //       sub  rdx, rax
        //       jne  loop
        // done: mov  rax, rdx
        //       ret
        (Raw::Write, Arch::X86_64) => (
            [
                [0x49, 0x89, 0xf8, 0xb8].as_slice(),
                &(Sys::Write.number(arch) as u32).to_le_bytes(),
                &[
                    0x4c, 0x89, 0xc7, 0x0f, 0x05, 0x48, 0x83, 0xf8, 0xfc, 0x74, 0xf0, 0x48, 0x85,
                    0xc0, 0x7e, 0x08, 0x48, 0x01, 0xc6, 0x48, 0x29, 0xc2, 0x75, 0xe3, 0x48, 0x89,
                    0xd0, 0xc3,
                ],
            ]
            .concat(),
            vec![],
        ),
        // `exit_group(status)`, without a return: `mov x8, #94; svc #0`
        // (x86_64 `mov eax, 231; syscall`). Its own function, since through
        // `pare_syscall` its one argument would be repeated in three more
        // registers and the number moved into a fifth at each exit.
        (Raw::ExitGroup, Arch::Aarch64) => (
            words(&[
                0xd280_0008 | (Sys::ExitGroup.number(arch) as u32) << 5,
                0xd400_0001,
            ]),
            vec![],
        ),
        (Raw::ExitGroup, Arch::X86_64) => (
            [
                [0xb8].as_slice(),
                &(Sys::ExitGroup.number(arch) as u32).to_le_bytes(),
                &[0x0f, 0x05],
            ]
            .concat(),
            vec![],
        ),
        // bl main; bl pare_exit
        (Raw::Start, Arch::Aarch64) => (
            words(&[0x9400_0000, 0x9400_0000]),
            vec![
                (0, Reloc::Arm64Call, "main", 0),
                (4, Reloc::Arm64Call, RuntimeFn::Exit.name(), 0),
            ],
        ),
        // call main; mov edi, eax; call pare_exit
        (Raw::Start, Arch::X86_64) => (
            vec![0xe8, 0, 0, 0, 0, 0x89, 0xc7, 0xe8, 0, 0, 0, 0],
            vec![
                (1, Reloc::X86CallPCRel4, "main", -4),
                (8, Reloc::X86CallPCRel4, RuntimeFn::Exit.name(), -4),
            ],
        ),
        // mov eax, 15; syscall
        (Raw::Sigreturn, _) => (vec![0xb8, X86_64_RT_SIGRETURN, 0, 0, 0, 0x0f, 0x05], vec![]),
    }
}

/// The freestanding runtime's local functions of CLIF.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Helper {
    /// `pare_out(bytes, len)`: appends to stdout's buffer.
    Out,
    /// `pare_map(len) -> block`: a new mapping; traps when refused.
    Map,
}

impl Helper {
    const ALL: [Helper; 2] = [Helper::Out, Helper::Map];

    fn name(self) -> &'static str {
        match self {
            Helper::Out => "pare_out",
            Helper::Map => "pare_map",
        }
    }

    fn signature(self, cfg: &LowerConfig) -> ir::Signature {
        let ptr = AbiParam::new(cfg.pointer_type);
        let size = AbiParam::new(types::I64);
        // `pare_out` tail-calls itself: `tail`, Cranelift's convention.
        let call_conv = match self {
            Helper::Out => CallConv::Tail,
            Helper::Map => cfg.c_call_conv,
        };
        let mut sig = ir::Signature::new(call_conv);
        let (params, returns) = match self {
            Helper::Out => (vec![ptr, size], vec![]),
            Helper::Map => (vec![size], vec![ptr]),
        };
        sig.params = params;
        sig.returns = returns;
        sig
    }
}

/// The C functions the freestanding runtime defines itself, with their C
/// meaning: those the reference interpreter implements too (docs/
/// LANGUAGE.md, "Declarations"), so that a program whose `extern fn`s are
/// among them needs no C library. `putchar` writes into the runtime's
/// stdout buffer, so its output interleaves with `print`'s; `exit` is
/// `pare_exit` (stdout flushed and checked, as the builtin `exit` and the
/// interpreter do it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CFunction {
    Putchar,
    Getchar,
    Abs,
    Labs,
    Exit,
}

impl CFunction {
    pub const ALL: [CFunction; 5] = [
        CFunction::Putchar,
        CFunction::Getchar,
        CFunction::Abs,
        CFunction::Labs,
        CFunction::Exit,
    ];

    pub fn name(self) -> &'static str {
        match self {
            CFunction::Putchar => "putchar",
            CFunction::Getchar => "getchar",
            CFunction::Abs => "abs",
            CFunction::Labs => "labs",
            CFunction::Exit => "exit",
        }
    }

    /// The C function called `name`, if the freestanding runtime defines it.
    pub fn named(name: &str) -> Option<CFunction> {
        CFunction::ALL.into_iter().find(|f| f.name() == name)
    }

    /// `int putchar(int)`, `int getchar(void)`, `int abs(int)`, `long
    /// labs(long)`, `void exit(int)`.
    fn signature(self, cfg: &LowerConfig) -> ir::Signature {
        let int = AbiParam::new(types::I32).sext();
        let long = AbiParam::new(types::I64);
        let mut sig = ir::Signature::new(cfg.c_call_conv);
        let (params, returns) = match self {
            CFunction::Putchar | CFunction::Abs => (vec![int], vec![int]),
            CFunction::Getchar => (vec![], vec![int]),
            CFunction::Labs => (vec![long], vec![long]),
            CFunction::Exit => (vec![int], vec![]),
        };
        sig.params = params;
        sig.returns = returns;
        sig
    }
}

/// The name of the freestanding runtime's state.
const STATE: &str = ".rt.state";

/// Builds the runtime module of `cfg.runtime`'s flavour.
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
    let helpers: &[Helper] = match cfg.runtime {
        Runtime::Libc => &[],
        Runtime::Freestanding => &Helper::ALL,
    };
    for h in helpers {
        clif.declare(
            h.name(),
            SymbolKind::Function(h.signature(cfg)),
            Linkage::Local,
        );
    }
    if cfg.runtime == Runtime::Freestanding {
        define_raw_functions(&mut clif, cfg);
        for f in CFunction::ALL {
            let symbol = clif.declare(
                f.name(),
                SymbolKind::Function(f.signature(cfg)),
                Linkage::Export,
            );
            let func = build_function(&mut clif, cfg, Entry::C(f), symbol);
            define(&mut clif, f.name(), symbol, func);
        }
    }
    for f in RuntimeFn::ALL {
        let symbol = clif.symbol_index(f.name()).unwrap_or_default();
        let func = build_function(&mut clif, cfg, Entry::Runtime(f), symbol);
        define(&mut clif, f.name(), symbol, func);
    }
    let func = build_function(&mut clif, cfg, Entry::FaultHandler, handler);
    define(&mut clif, FAULT_HANDLER, handler, func);
    // It reads the stack pointer at the machine's offset in `ucontext`.
    clif.target_specific.insert(FAULT_HANDLER.to_string());
    if cfg.runtime == Runtime::Freestanding {
        // Profiles come from the JIT, whose runtime stands on the C
        // library: they cannot name the freestanding runtime's functions.
        for f in RuntimeFn::ALL {
            clif.target_specific.insert(f.name().to_string());
        }
        for h in helpers {
            clif.target_specific.insert(h.name().to_string());
        }
        for f in CFunction::ALL {
            clif.target_specific.insert(f.name().to_string());
        }
    }
    for &h in helpers {
        let symbol = clif.symbol_index(h.name()).unwrap_or_default();
        let func = build_function(&mut clif, cfg, Entry::Helper(h), symbol);
        define(&mut clif, h.name(), symbol, func);
    }
    if cfg.traps.has_shared_paths() {
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

/// Defines the freestanding runtime's functions of machine code for
/// `cfg.arch` ([`raw_code`]).
fn define_raw_functions(clif: &mut ClifModule, cfg: &LowerConfig) {
    for &raw in Raw::needed(cfg.arch) {
        let symbol = clif.declare(
            raw.name(),
            SymbolKind::Function(raw.signature(cfg)),
            raw.linkage(),
        );
        let (bytes, calls) = raw_code(raw, cfg.arch);
        let relocs = calls
            .into_iter()
            .map(|(offset, kind, callee, addend)| {
                let sig = match callee {
                    "main" => main_signature(cfg),
                    _ => RuntimeFn::Exit.signature(cfg),
                };
                let target = clif.declare(callee, SymbolKind::Function(sig), Linkage::Import);
                RawReloc {
                    offset,
                    kind,
                    target,
                    addend,
                }
            })
            .collect();
        clif.raw_functions.push(RawFunctionDef {
            symbol,
            bytes,
            align: 4,
            relocs,
        });
    }
}

/// `int main(void)`, as every Pare `main` is lowered.
fn main_signature(cfg: &LowerConfig) -> ir::Signature {
    let mut sig = ir::Signature::new(cfg.c_call_conv);
    sig.returns.push(AbiParam::new(types::I32));
    sig
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
    /// ([`super::TrapLowering::SharedPaths`]).
    TrapPath(TrapKind),
    /// A local function of the freestanding runtime.
    Helper(Helper),
    /// A C function the freestanding runtime defines.
    C(CFunction),
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
        Entry::Helper(h) => h.signature(cfg),
        Entry::C(f) => f.signature(cfg),
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
        is_flush: matches!(entry_point, Entry::Runtime(RuntimeFn::Flush)),
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
        Entry::Helper(Helper::Out) => rt.out(params[0], params[1]),
        Entry::Helper(Helper::Map) => rt.map(params[0]),
        Entry::C(CFunction::Putchar) => rt.putchar(params[0]),
        Entry::C(CFunction::Getchar) => rt.getchar(),
        Entry::C(CFunction::Abs | CFunction::Labs) => rt.abs(params[0]),
        Entry::C(CFunction::Exit) => rt.exit(params[0]),
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
    /// Whether the function is `pare_flush`.
    is_flush: bool,
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

    fn call_runtime(&mut self, f: RuntimeFn, args: &[Value]) -> Option<Value> {
        let sym = self.runtime_symbol(f);
        self.call_symbol(sym, args)
    }

    /// Calls the freestanding helper `h` (declared by [`runtime_module`]).
    fn call_helper(&mut self, h: Helper, args: &[Value]) -> Option<Value> {
        let sym = self.clif.declare(
            h.name(),
            SymbolKind::Function(h.signature(&self.cfg)),
            Linkage::Import,
        );
        self.call_symbol(sym, args)
    }

    /// Calls the machine-code function `raw` ([`raw_code`]).
    fn call_raw(&mut self, raw: Raw, args: &[Value]) -> Option<Value> {
        let sym = self.clif.declare(
            raw.name(),
            SymbolKind::Function(raw.signature(&self.cfg)),
            Linkage::Import,
        );
        self.call_symbol(sym, args)
    }

    /// Makes system call `call` with one to four `args`; returns its
    /// result (`-errno` on failure). The kernel ignores the arguments a
    /// call does not take: those up to the fourth repeat the last one
    /// passed, a register already live at the call (a zero constant would
    /// be one more value, kept in a callee-saved register where it is used
    /// again after a call). See the module doc for the fifth and sixth.
    fn syscall(&mut self, call: Sys, args: &[Value]) -> Value {
        let mut all = args.to_vec();
        let last = *args.last().expect("a system call takes an argument");
        all.resize(4, last);
        all.push(self.b.ins().iconst(types::I64, call.number(self.cfg.arch)));
        let result = self.call_raw(Raw::Syscall, &all);
        result.expect("pare_syscall returns a value")
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

    /// The address of the function `name`, defined in this module.
    fn function_address(&mut self, name: &str) -> Value {
        let sym = self.clif.symbol_index(name).unwrap_or_default();
        let callee = self.imports.func(self.b.func, self.clif, sym);
        self.b.ins().func_addr(self.cfg.pointer_type, callee)
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

    /// The address of the freestanding runtime's state (zeroed, writable),
    /// defining it on first use.
    fn state(&mut self) -> Value {
        let known = self.clif.symbol_index(STATE).is_some();
        let sym = self
            .clif
            .declare(STATE, SymbolKind::Data { writable: true }, Linkage::Local);
        if !known {
            self.clif.data.push(DataDef {
                symbol: sym,
                bytes: vec![0; STATE_SIZE as usize],
                align: 16,
                relocs: Vec::new(),
            });
        }
        self.address_of(sym)
    }

    fn iconst(&mut self, value: i64) -> Value {
        self.b.ins().iconst(types::I64, value)
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
    fn fwrite(&mut self, stream: &str, bytes: Value, len: Value) -> Value {
        let file = self.c_stream(stream);
        let one = self.iconst(1);
        self.call_libc(Libc::Fwrite, &[bytes, one, len, file])
            .unwrap_or(len)
    }

    /// Writes `len` bytes to stdout; traps if that fails.
    fn write_stdout(&mut self, bytes: Value, len: Value) {
        match self.cfg.runtime {
            Runtime::Libc => {
                let written = self.fwrite("stdout", bytes, len);
                let short = self.b.ins().icmp(IntCC::NotEqual, written, len);
                self.trap_if(short, TrapKind::WriteError);
            }
            Runtime::Freestanding => {
                self.call_helper(Helper::Out, &[bytes, len]);
            }
        }
    }

    /// Writes `len` bytes to stderr, whatever comes of it.
    fn write_stderr(&mut self, bytes: Value, len: Value) {
        match self.cfg.runtime {
            Runtime::Libc => {
                self.fwrite("stderr", bytes, len);
            }
            Runtime::Freestanding => {
                let fd = self.iconst(2);
                self.call_raw(Raw::Write, &[fd, bytes, len]);
            }
        }
    }

    /// Flushes stdout without checking: `pare_trap`'s, whose own message is
    /// the one to report.
    fn flush_stdout_unchecked(&mut self) {
        match self.cfg.runtime {
            Runtime::Libc => {
                let file = self.c_stream("stdout");
                self.call_libc(Libc::Fflush, &[file]);
            }
            Runtime::Freestanding => {
                let state = self.state();
                let len = self.b.ins().load(types::I64, TRUSTED, state, STATE_OUT_LEN);
                let write = self.b.create_block();
                let done = self.b.create_block();
                self.b.ins().brif(len, write, &[], done, &[]);
                self.b.switch_to_block(write);
                let fd = self.iconst(1);
                let buffer = self.b.ins().iadd_imm_u(state, STATE_OUT);
                self.call_raw(Raw::Write, &[fd, buffer, len]);
                self.b.ins().jump(done, &[]);
                self.b.switch_to_block(done);
            }
        }
    }

    /// Flushes stdout; traps if that fails or (libc) stdout had an error
    /// before (`ferror`: a write of C code, or one the buffer hid).
    /// Freestanding, `pare_flush` does it and the others call it.
    fn flush_stdout_checked(&mut self) {
        match self.cfg.runtime {
            Runtime::Libc => {
                let file = self.c_stream("stdout");
                let flushed = self.call_libc(Libc::Fflush, &[file]);
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
            Runtime::Freestanding if !self.is_flush => {
                self.call_runtime(RuntimeFn::Flush, &[]);
            }
            Runtime::Freestanding => {
                let state = self.state();
                let len = self.b.ins().load(types::I64, TRUSTED, state, STATE_OUT_LEN);
                let write = self.b.create_block();
                let done = self.b.create_block();
                self.b.ins().brif(len, write, &[], done, &[]);
                self.b.switch_to_block(write);
                let zero = self.iconst(0);
                self.b.ins().store(TRUSTED, zero, state, STATE_OUT_LEN);
                let fd = self.iconst(1);
                let buffer = self.b.ins().iadd_imm_u(state, STATE_OUT);
                let failed = self.call_raw(Raw::Write, &[fd, buffer, len]);
                let failed = failed.expect("pare_write returns a value");
                self.trap_if(failed, TrapKind::WriteError);
                self.b.ins().jump(done, &[]);
                self.b.switch_to_block(done);
            }
        }
    }

    /// `size` zeroed bytes (`size` may be zero); traps when there is no
    /// memory for them.
    fn allocate(&mut self, size: Value) -> Value {
        match self.cfg.runtime {
            Runtime::Libc => {
                let one = self.iconst(1);
                let block = self.call_libc(Libc::Calloc, &[one, size]).unwrap_or(one);
                let failed = self.b.ins().icmp_imm_u(IntCC::Equal, block, 0);
                self.trap_if(failed, TrapKind::OutOfMemory);
                block
            }
            Runtime::Freestanding => self
                .call_runtime(RuntimeFn::Alloc, &[size])
                .expect("pare_alloc returns a value"),
        }
    }

    /// Ends the process with `status`.
    fn exit_process(&mut self, status: Value) {
        match self.cfg.runtime {
            Runtime::Libc => {
                self.call_libc(Libc::Exit, &[status]);
            }
            Runtime::Freestanding => {
                self.call_raw(Raw::ExitGroup, &[status]);
            }
        }
        self.b.ins().trap(NORETURN_TRAP);
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
        let end = self.iconst(i64::from(DECIMAL_BUFFER - 1));

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
        let ten = self.iconst(10);
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
        let size = self.iconst(i64::from(DECIMAL_BUFFER));
        let len = self.b.ins().isub(size, start);
        self.write_stdout(text, len);
        self.b.ins().return_(&[]);
    }

    /// Writes `true\n` or `false\n`: from `.rt.bools` (`false\ntrue\n`),
    /// the 6 bytes at 0 or the 5 at 6, chosen without a branch.
    fn print_bool(&mut self, value: Value) {
        let words = b"false\ntrue\n";
        let table = self.constant_data(".rt.bools", words, 1);
        let value = self.b.ins().uextend(types::I64, value);
        let offset = self.b.ins().imul_imm_s(value, 6);
        let text = self.b.ins().iadd(table, offset);
        let six = self.iconst(6);
        let len = self.b.ins().isub(six, value);
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
    /// overflows 64 bits and when there is no memory for it.
    fn new_array(&mut self, len: Value, elem_size: Value) {
        let negative = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, len, 0);
        self.trap_if(negative, TrapKind::NegativeLength);
        // Two checks branching to one trap: the product needs more than 64
        // bits, or adding the length word wraps (then the sum is below 8).
        let high = self.b.ins().umulhi(len, elem_size);
        let elems = self.b.ins().imul(len, elem_size);
        let total = self.b.ins().iadd_imm_u(elems, 8);
        let overflow = self.b.create_block();
        let fits = self.b.create_block();
        let in_range = self.b.create_block();
        self.b.ins().brif(high, overflow, &[], fits, &[]);
        self.b.switch_to_block(fits);
        let wrapped = self.b.ins().icmp_imm_u(IntCC::UnsignedLessThan, total, 8);
        self.b.ins().brif(wrapped, overflow, &[], in_range, &[]);
        self.b.switch_to_block(overflow);
        self.b.set_cold_block(overflow);
        self.trap_with(TrapKind::OutOfMemory);
        self.b.switch_to_block(in_range);
        let block = self.allocate(total);
        let flags = Region::Length.trusted(self.b.func);
        self.b.ins().store(flags, len, block, 0);
        self.b.ins().return_(&[block]);
    }

    /// `size` zeroed bytes; traps when there is no memory for them. The
    /// freestanding allocator (module doc): a request of at least
    /// [`LARGE_ALLOCATION`] bytes is mapped on its own (a size no mapping
    /// can have fails there); a smaller one, rounded up to 8 bytes, is
    /// carved from the current chunk, or from a new one if the rest of the
    /// current is not larger than the request (so that the first request,
    /// before any chunk, and a request of zero bytes get one too: the
    /// result is never null).
    fn alloc(&mut self, size: Value) {
        if self.cfg.runtime == Runtime::Libc {
            let block = self.allocate(size);
            self.b.ins().return_(&[block]);
            return;
        }
        let large = self.b.create_block();
        let small = self.b.create_block();
        let is_large =
            self.b
                .ins()
                .icmp_imm_u(IntCC::UnsignedGreaterThanOrEqual, size, LARGE_ALLOCATION);
        self.b.ins().brif(is_large, large, &[], small, &[]);

        self.b.switch_to_block(large);
        let block = self.call_helper(Helper::Map, &[size]);
        let block = block.expect("pare_map returns a value");
        self.b.ins().return_(&[block]);

        self.b.switch_to_block(small);
        let rounded = self.b.ins().iadd_imm_u(size, 7);
        let rounded = self.b.ins().band_imm_s(rounded, -8);
        let state = self.state();
        let next = self
            .b
            .ins()
            .load(types::I64, TRUSTED, state, STATE_HEAP_NEXT);
        let end = self
            .b
            .ins()
            .load(types::I64, TRUSTED, state, STATE_HEAP_END);
        let left = self.b.ins().isub(end, next);
        let too_small = self
            .b
            .ins()
            .icmp(IntCC::UnsignedLessThanOrEqual, left, rounded);
        let carve = self.b.create_block();
        let from = self.b.append_block_param(carve, self.cfg.pointer_type);
        let new_chunk = self.b.create_block();
        self.b
            .ins()
            .brif(too_small, new_chunk, &[], carve, &[next.into()]);

        self.b.switch_to_block(new_chunk);
        let chunk_size = self.iconst(HEAP_CHUNK);
        let chunk = self.call_helper(Helper::Map, &[chunk_size]);
        let chunk = chunk.expect("pare_map returns a value");
        let chunk_end = self.b.ins().iadd_imm_u(chunk, HEAP_CHUNK);
        self.b
            .ins()
            .store(TRUSTED, chunk_end, state, STATE_HEAP_END);
        self.b.ins().jump(carve, &[chunk.into()]);

        self.b.switch_to_block(carve);
        let after = self.b.ins().iadd(from, rounded);
        self.b.ins().store(TRUSTED, after, state, STATE_HEAP_NEXT);
        self.b.ins().return_(&[from]);
    }

    /// Flushes stdout, writes `trap: <message>\n` to stderr (the prefix,
    /// then the message and newline, looked up in a table; unknown codes
    /// get a generic message) and exits with status 101.
    fn trap(&mut self, code: Value) {
        self.flush_stdout_unchecked();
        let prefix = self.constant_data(".rt.trap_prefix", TRAP_PREFIX.as_bytes(), 1);
        let prefix_len = self.iconst(TRAP_PREFIX.len() as i64);
        self.write_stderr(prefix, prefix_len);
        let (text, index) = trap_tables();
        let known = TrapKind::ALL.len() as i64;
        let unknown = self.b.ins().iconst(types::I32, known);
        let entry = self.b.ins().umin(code, unknown);
        let entry = self.b.ins().uextend(types::I64, entry);
        let entry_offset = self.b.ins().ishl_imm_u(entry, 1);
        let index_addr = self.constant_data(".rt.trap_index", &index, 1);
        let entry_addr = self.b.ins().iadd(index_addr, entry_offset);
        let offset = self.b.ins().uload8(types::I64, TRUSTED, entry_addr, 0);
        let len = self.b.ins().uload8(types::I64, TRUSTED, entry_addr, 1);
        let text_addr = self.constant_data(".rt.trap_text", &text, 1);
        let line = self.b.ins().iadd(text_addr, offset);
        self.write_stderr(line, len);
        let status = self.b.ins().iconst(types::I32, i64::from(TRAP_EXIT_STATUS));
        self.exit_process(status);
    }

    /// Flushes stdout and exits with `code`; traps if the flush fails.
    fn exit(&mut self, code: Value) {
        self.flush_stdout_checked();
        self.exit_process(code);
    }

    /// Installs `pare_on_fault` for `SIGSEGV` on an alternate signal stack
    /// (see the module doc); freestanding, first asks whether stdout is a
    /// terminal (line-buffered then).
    fn init(&mut self) {
        match self.cfg.runtime {
            Runtime::Libc => self.init_with_libc(),
            Runtime::Freestanding => self.init_freestanding(),
        }
        self.b.ins().return_(&[]);
    }

    /// One zeroed block from `calloc` holds the alternate stack, then the
    /// `stack_t` and the `struct sigaction` passed to libc, so only the
    /// non-zero fields are stored. Without memory for it, stack overflow
    /// stays a plain `SIGSEGV`.
    fn init_with_libc(&mut self) {
        let ptr = self.cfg.pointer_type;
        let one = self.iconst(1);
        let size = self.iconst(ALT_STACK_SIZE + STACK_T_SIZE + SIGACTION_SIZE);
        let block = self.call_libc(Libc::Calloc, &[one, size]).unwrap_or(one);
        let failed = self.b.ins().icmp_imm_u(IntCC::Equal, block, 0);
        let install = self.b.create_block();
        let done = self.b.create_block();
        self.b.ins().brif(failed, done, &[], install, &[]);
        self.b.seal_block(install);
        self.b.switch_to_block(install);

        let stack = self.b.ins().iadd_imm_u(block, ALT_STACK_SIZE);
        self.b.ins().store(TRUSTED, block, stack, 0);
        let stack_size = self.iconst(ALT_STACK_SIZE);
        self.b
            .ins()
            .store(TRUSTED, stack_size, stack, STACK_T_SIZE_FIELD);
        let null = self.b.ins().iconst(ptr, 0);
        self.call_libc(Libc::Sigaltstack, &[stack, null]);

        let action = self.b.ins().iadd_imm_u(stack, STACK_T_SIZE);
        let handler = self.function_address(FAULT_HANDLER);
        self.b.ins().store(TRUSTED, handler, action, 0);
        // `int sa_flags`: SA_RESETHAND is its sign bit.
        let flags = (SA_SIGINFO | SA_ONSTACK | SA_RESETHAND) as u32 as i32;
        let flags = self.b.ins().iconst(types::I32, i64::from(flags));
        self.b.ins().store(TRUSTED, flags, action, SIGACTION_FLAGS);
        let segv = self.b.ins().iconst(types::I32, SIGSEGV);
        self.call_libc(Libc::Sigaction, &[segv, action, null]);
        self.b.ins().jump(done, &[]);

        self.b.seal_block(done);
        self.b.switch_to_block(done);
    }

    /// The alternate stack, the `stack_t` and the kernel's `struct
    /// sigaction` lie in the runtime's state (zeroed: only the non-zero
    /// fields are stored). A failing system call leaves stack overflow a
    /// plain `SIGSEGV`, as without memory in the libc flavour.
    fn init_freestanding(&mut self) {
        let state = self.state();
        // stdout is unbuffered when it is a terminal: TCGETS succeeds.
        let stdout = self.iconst(1);
        let tcgets = self.iconst(TCGETS);
        let termios = self.b.ins().iadd_imm_u(state, STATE_OUT);
        let answer = self.syscall(Sys::Ioctl, &[stdout, tcgets, termios]);
        let terminal = self.b.ins().icmp_imm_u(IntCC::Equal, answer, 0);
        let terminal = self.b.ins().uextend(types::I64, terminal);
        self.b.ins().store(TRUSTED, terminal, state, STATE_TERMINAL);

        let stack = self.b.ins().iadd_imm_u(state, STATE_STACK_T);
        let alt_stack = self.b.ins().iadd_imm_u(state, STATE_ALT_STACK);
        self.b.ins().store(TRUSTED, alt_stack, stack, 0);
        let stack_size = self.iconst(ALT_STACK_SIZE);
        self.b
            .ins()
            .store(TRUSTED, stack_size, stack, STACK_T_SIZE_FIELD);
        // No old stack wanted: null.
        let null = self.iconst(0);
        self.syscall(Sys::Sigaltstack, &[stack, null]);

        let action = self.b.ins().iadd_imm_u(state, STATE_SIGACTION);
        let handler = self.function_address(FAULT_HANDLER);
        self.b.ins().store(TRUSTED, handler, action, 0);
        let mut flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
        if self.cfg.arch == Arch::X86_64 {
            // The kernel returns from an x86_64 handler only through a
            // restorer of the program's.
            flags |= SA_RESTORER;
            let restorer = self.function_address(Raw::Sigreturn.name());
            self.b
                .ins()
                .store(TRUSTED, restorer, action, KERNEL_SIGACTION_RESTORER);
        }
        let flags = self.iconst(flags);
        self.b
            .ins()
            .store(TRUSTED, flags, action, KERNEL_SIGACTION_FLAGS);
        let segv = self.iconst(SIGSEGV);
        let sigset_size = self.iconst(KERNEL_SIGSET_SIZE);
        self.syscall(Sys::RtSigaction, &[segv, action, null, sigset_size]);
    }

    /// The `SIGSEGV` handler: a fault within [`FAULT_WINDOW`] of the
    /// interrupted stack pointer traps `stack overflow`; any other returns
    /// (to fault again and die: `SA_RESETHAND` restored the default action).
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
        self.b.ins().return_(&[]);
    }

    /// Flushes stdout; traps if the flush fails. `main` calls it before it
    /// returns, since the C library's exit flushes without reporting errors.
    fn flush(&mut self) {
        self.flush_stdout_checked();
        self.b.ins().return_(&[]);
    }

    // ---- the C functions of the freestanding runtime -----------------------

    /// `int putchar(int c)`: writes `(unsigned char) c` to stdout, through
    /// the runtime's buffer; returns it. (A failed write traps `write error
    /// on stdout`, as every output of a Pare program does.)
    fn putchar(&mut self, c: Value) {
        let byte = self.b.ins().ireduce(types::I8, c);
        let slot =
            self.b
                .create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 1, 0));
        let at = self.b.ins().stack_addr(self.cfg.pointer_type, slot, 0);
        self.b.ins().store(TRUSTED, byte, at, 0);
        let one = self.iconst(1);
        self.call_helper(Helper::Out, &[at, one]);
        // Read back from the slot, so that no register keeps it across the call.
        let at = self.b.ins().stack_addr(self.cfg.pointer_type, slot, 0);
        let written = self.b.ins().uload8(types::I32, TRUSTED, at, 0);
        self.b.ins().return_(&[written]);
    }

    /// `int getchar(void)`: the next byte of stdin (`read`, one byte at a
    /// time: no input is read ahead), or -1 at its end or on an error;
    /// `EINTR` reads again.
    fn getchar(&mut self) {
        let slot =
            self.b
                .create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 1, 0));
        let again = self.b.create_block();
        let got = self.b.create_block();
        let not_got = self.b.create_block();
        let none = self.b.create_block();
        self.b.ins().jump(again, &[]);
        self.b.switch_to_block(again);
        let at = self.b.ins().stack_addr(self.cfg.pointer_type, slot, 0);
        let stdin = self.iconst(0);
        let one = self.iconst(1);
        let read = self.syscall(Sys::Read, &[stdin, at, one]);
        let is_one = self.b.ins().icmp_imm_u(IntCC::Equal, read, 1);
        self.b.ins().brif(is_one, got, &[], not_got, &[]);
        self.b.switch_to_block(got);
        let byte = self.b.ins().uload8(types::I32, TRUSTED, at, 0);
        self.b.ins().return_(&[byte]);
        self.b.switch_to_block(not_got);
        let interrupted = self.b.ins().icmp_imm_s(IntCC::Equal, read, -EINTR);
        self.b.ins().brif(interrupted, again, &[], none, &[]);
        self.b.switch_to_block(none);
        let eof = self.b.ins().iconst(types::I32, -1);
        self.b.ins().return_(&[eof]);
    }

    /// `int abs(int)` and `long labs(long)`: the magnitude (the most
    /// negative value is its own, as two's complement wraps).
    fn abs(&mut self, x: Value) {
        let negative = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, x, 0);
        let negated = self.b.ins().ineg(x);
        let magnitude = self.b.ins().select(negative, negated, x);
        self.b.ins().return_(&[magnitude]);
    }

    // ---- the freestanding helpers ------------------------------------------

    /// `pare_out(bytes, len)`: appends `len` bytes to stdout's buffer, a
    /// byte at a time (output comes in short pieces), the count of bytes
    /// buffered kept in a register and stored once. When the buffer is
    /// full, it is stored, flushed, and the rest goes round again: on
    /// aarch64 by a tail call of itself, so that the flush is no call in a
    /// loop, which the size inliner copies as hot (x86_64 tail calls need
    /// frame pointers: a loop there); only the position in the bytes and
    /// their end live across that call. On a terminal, the buffer is then written out.
    /// Traps `write error on stdout` when a write fails.
    fn out(&mut self, bytes: Value, len: Value) {
        let ptr = self.cfg.pointer_type;
        let start = self.b.create_block();
        let start_bytes = self.b.append_block_param(start, ptr);
        let start_len = self.b.append_block_param(start, types::I64);
        self.b.ins().jump(start, &[bytes.into(), len.into()]);
        self.b.switch_to_block(start);
        let state = self.state();
        let used = self.b.ins().load(types::I64, TRUSTED, state, STATE_OUT_LEN);

        // next(at, used): the bytes from `at` to `end` to go, `used` buffered.
        let end = self.b.ins().iadd(start_bytes, start_len);
        let next = self.b.create_block();
        let at = self.b.append_block_param(next, ptr);
        let used_now = self.b.append_block_param(next, types::I64);
        let more = self.b.create_block();
        let put = self.b.create_block();
        let full = self.b.create_block();
        let done = self.b.create_block();
        self.b.ins().jump(next, &[start_bytes.into(), used.into()]);

        self.b.switch_to_block(next);
        let unfinished = self.b.ins().icmp(IntCC::NotEqual, at, end);
        self.b.ins().brif(unfinished, more, &[], done, &[]);

        self.b.switch_to_block(more);
        let is_full = self.b.ins().icmp_imm_u(IntCC::Equal, used_now, OUT_BUFFER);
        self.b.ins().brif(is_full, full, &[], put, &[]);

        self.b.switch_to_block(put);
        let byte = self.b.ins().load(types::I8, TRUSTED, at, 0);
        let to = self.b.ins().iadd(state, used_now);
        self.b.ins().store(TRUSTED, byte, to, STATE_OUT as i32);
        let at_next = self.b.ins().iadd_imm_u(at, 1);
        let used_next = self.b.ins().iadd_imm_u(used_now, 1);
        self.b.ins().jump(next, &[at_next.into(), used_next.into()]);

        // The buffer is full: write it out, then the rest.
        self.b.switch_to_block(full);
        self.b.set_cold_block(full);
        self.b.ins().store(TRUSTED, used_now, state, STATE_OUT_LEN);
        self.call_runtime(RuntimeFn::Flush, &[]);
        let left = self.b.ins().isub(end, at);
        match self.cfg.arch {
            Arch::Aarch64 => {
                let sym = self.clif.declare(
                    Helper::Out.name(),
                    SymbolKind::Function(Helper::Out.signature(&self.cfg)),
                    Linkage::Import,
                );
                let callee = self.imports.func(self.b.func, self.clif, sym);
                self.b.ins().return_call(callee, &[at, left]);
            }
            Arch::X86_64 => {
                self.b.ins().jump(start, &[at.into(), left.into()]);
            }
        }

        // All buffered. On a terminal, output is written at once.
        self.b.switch_to_block(done);
        self.b.ins().store(TRUSTED, used_now, state, STATE_OUT_LEN);
        let terminal = self
            .b
            .ins()
            .load(types::I64, TRUSTED, state, STATE_TERMINAL);
        let flush = self.b.create_block();
        let exit = self.b.create_block();
        self.b.ins().brif(terminal, flush, &[], exit, &[]);
        self.b.switch_to_block(flush);
        self.call_runtime(RuntimeFn::Flush, &[]);
        self.b.ins().jump(exit, &[]);
        self.b.switch_to_block(exit);
        self.b.ins().return_(&[]);
    }

    /// `pare_map(len) -> block`: `len` new zeroed bytes from `mmap`; traps
    /// `out of memory` when the kernel refuses (any length it cannot map).
    fn map(&mut self, len: Value) {
        let null = self.iconst(0);
        let prot = self.iconst(PROT_READ_WRITE);
        let flags = self.iconst(MAP_PRIVATE_ANONYMOUS);
        // No file, offset 0: the fifth and sixth arguments `pare_syscall` passes.
        let block = self.syscall(Sys::Mmap, &[null, len, prot, flags]);
        // An error is -4095..-1; a mapping is a user-space address, below
        // 2^63 on both targets: the sign tells them apart (a compare with 0,
        // where -4096 needs a register of its own).
        let failed = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, block, 0);
        self.trap_if(failed, TrapKind::OutOfMemory);
        self.b.ins().return_(&[block]);
    }
}

/// What every trap line starts with.
const TRAP_PREFIX: &str = "trap: ";

/// The rest of the trap lines, `<message>\n` (one per [`TrapKind`] code,
/// then one for unknown codes), and their `(offset, len)` index, a byte
/// each (the text is shorter than 256 bytes: checked here).
fn trap_tables() -> (Vec<u8>, Vec<u8>) {
    let byte = |n: usize| u8::try_from(n).expect("the trap lines fit in 256 bytes");
    let mut text = Vec::new();
    let mut index = Vec::new();
    let lines = TrapKind::ALL.iter().map(|k| format!("{}\n", k.message()));
    for line in lines.chain(std::iter::once("unknown trap\n".to_string())) {
        index.push(byte(text.len()));
        index.push(byte(line.len()));
        text.extend_from_slice(line.as_bytes());
    }
    byte(text.len());
    (text, index)
}
