//! Lowering of the typed program ([`tir`]) to Cranelift IR, and the Pare
//! runtime written in CLIF ([`runtime_module`]).
//!
//! The result is a [`ClifModule`]: defined functions, defined data objects and
//! a symbol table. [`lower_module`] produces one object's worth (a source
//! module's `emit` functions, its globals and its string literals; everything
//! else is imported); [`lower_program`] produces every function and global
//! once, for the JIT.
//!
//! Conventions (see `docs/LANGUAGE.md` and `docs/DESIGN.md`):
//! - Pare functions, `main` and `extern fn`s use the platform C convention
//!   ([`LowerConfig::c_call_conv`]): a call between Pare code and the
//!   runtime or C, or `f(g(x))`, finds its arguments where the results and
//!   arguments of the other side already are. (Cranelift's `tail`, the one
//!   convention with `return_call`, passes the first argument in `x2` on
//!   aarch64; only runtime functions that tail-call keep it. Pare has no
//!   tail calls of its own, and the machine pass `parec_passes::sibcall`
//!   makes a returned call a jump.) `main` is `() -> i32` whatever its Pare
//!   result type. Parameters and results of `main` and `extern fn`s
//!   narrower than 64 bits carry `sext` (i32) / `uext` (u8, bool) so either
//!   side may rely on the register being extended; those of Pare functions
//!   carry none (both sides are Cranelift's, which reads only the bits of
//!   the type).
//! - Types: `i64` → `I64`, `i32` → `I32`, `u8`/`bool` → `I8` (bools are 0 or
//!   1), references → the pointer type; unit has no CLIF value.
//! - Data layout as in [`tir`]: arrays and strings are `{ len: i64, elems }`
//!   with elements at offset 8; all data is little-endian (both targets are).
//! - Globals: a data object named by [`tir::GlobalDef::name`] holding the
//!   variable's value (1, 4 or 8 bytes). A fixed array global `[T; N]` is two
//!   data objects: the local, writable block `<name>.data` (length header and
//!   elements; a `str` element is a relocation to its literal) and the
//!   variable itself, 8 bytes initialized with a relocation to the block. A
//!   `str` global likewise points at its string literal.
//! - String literals: read-only data objects with the array layout, named
//!   by their contents ([`string_literal_name`]) and defined with
//!   [`Linkage::Weak`] by every module that uses them, so that equal
//!   literals are one object in the whole program (LANGUAGE.md: `==` on `str`
//!   is identity), in the JIT's single module and across the objects of an
//!   executable alike. The linker keeps one definition; identical-code
//!   folding and the merging pass (which hashes read-only data by contents)
//!   can only unify objects that are already equal.
//! - Every reference to a symbol is `colocated`: executables are static and
//!   non-PIC (docs/DESIGN.md, toolchain facts). A JIT must clear `colocated` on imports that
//!   resolve into shared libraries (see the JIT test).
//! - Symbols are declared in a fixed order: defined functions, defined
//!   globals, then whatever the function bodies reference, in lowering order.
//!
//! Every lowered function passes the Cranelift verifier (checked by a
//! `debug_assert` after each function).

mod func;
mod memory;
mod runtime;

use cranelift_codegen::ir::{self, types, AbiParam, ExtFuncData, ExternalName, GlobalValueData};
use cranelift_codegen::isa::CallConv;
use cranelift_codegen::settings;
use hashbrown::HashMap;
use parec_passes::clif_module::{ClifModule, DataDef, DataReloc, FunctionDef, Linkage, SymbolKind};

use crate::tir::{self, FuncId, GlobalId, GlobalInit, ModuleId, Program, Ty};

pub use runtime::{runtime_module, CFunction, ENTRY_POINT};

/// Target facts the lowering needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LowerConfig {
    /// The target's pointer type (`I64` on both supported targets).
    pub pointer_type: ir::Type,
    /// The target ISA's default calling convention, used for `main`, externs
    /// and the runtime.
    pub c_call_conv: CallConv,
    /// The target architecture (Linux on either), for the runtime's signal
    /// handler.
    pub arch: Arch,
    /// How a failed check reaches the runtime's `pare_trap`.
    pub traps: TrapLowering,
    /// What the runtime stands on: the C library, or Linux alone.
    pub runtime: Runtime,
}

/// What the runtime module stands on ([`runtime_module`]; docs/DESIGN.md,
/// "The runtime"): the one decision that also tells the driver how to link.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Runtime {
    /// The C library: the JIT (parec's own process) and executables of
    /// programs that call C (`extern fn`), whose output must interleave
    /// with the C library's.
    #[default]
    Libc,
    /// Linux system calls alone: executables linked without the C library
    /// or start files, entered at [`ENTRY_POINT`].
    Freestanding,
}

impl Runtime {
    /// The name `--runtime` takes.
    pub fn name(self) -> &'static str {
        match self {
            Runtime::Libc => "libc",
            Runtime::Freestanding => "freestanding",
        }
    }
}

/// How a failed check (null, bounds, division) reaches `pare_trap`: the one
/// decision that also tells the driver whether its machine pass
/// `parec_passes::traps` must run ([`TrapLowering::shared_paths`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrapLowering {
    /// Every check branches to one cold block per kind per function, which
    /// calls `pare_trap(kind)` and traps. Complete in CLIF: the JIT and
    /// x86_64 objects, which parec's machine layer does not rewrite.
    Call,
    /// Every check branches to one cold block per kind per function that
    /// holds only a `trap` with the kind's trap code ([`check_trap_code`]):
    /// Cranelift emits a conditional branch to a `udf`, and no call, so a
    /// leaf function keeps no frame for its checks. (Branches, not
    /// `trapz`/`trapnz`: GVN proves checks redundant from the relations
    /// branches establish.) The code is not complete until the machine pass
    /// `parec_passes::traps` has turned each such `udf` into a branch to
    /// the kind's shared path `pare_trap_<kind>` ([`trap_path_name`],
    /// defined by the runtime module): aarch64 objects only.
    ///
    /// A division is the exception: its checks are Cranelift's own
    /// ([`TrapLowering::division_checks_in_clif`]). Cranelift's aarch64
    /// lowering of `sdiv`/`udiv`/`srem`/`urem` checks the divisor for zero
    /// (`cbz` to a `udf` with `int_divz`) and `sdiv` for `MIN / -1` (`cmn`,
    /// `ccmp`, `b.vs` to a `udf` with `int_ovf`), in that order, the order
    /// of Pare's checks; the machine pass gives those two codes the shared
    /// paths of `division by zero` and `division overflow`. Pare's own
    /// checks would be a second copy of each in front of the division —
    /// unless `divisions` says the code must be the JIT's
    /// ([`DivisionChecks`]).
    SharedPaths { divisions: DivisionChecks },
}

/// Who checks a division's divisor under [`TrapLowering::SharedPaths`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DivisionChecks {
    /// The CLIF instruction's own traps: the smallest code.
    Instruction,
    /// Pare's checks in front of the instruction, as
    /// [`TrapLowering::Call`] lowers them: the CLIF the JIT compiles, block
    /// for block, so that a profile the JIT recorded
    /// (`parec run --profile-generate`) matches the functions of a build
    /// that uses it (`--profile-use`; the profile hash,
    /// `parec_passes::profile::hash`, skips only trap blocks' contents,
    /// and a division checked by Pare has two more blocks than one that is
    /// not).
    AsTheJit,
}

impl TrapLowering {
    /// The lowering for code that becomes objects for `arch`: shared trap
    /// paths where parec's machine layer runs (aarch64), calls elsewhere;
    /// `profiled`: the build uses a profile the JIT recorded, so its
    /// divisions are checked as the JIT's are ([`DivisionChecks::AsTheJit`]).
    pub fn for_objects(arch: Arch, profiled: bool) -> TrapLowering {
        let divisions = if profiled {
            DivisionChecks::AsTheJit
        } else {
            DivisionChecks::Instruction
        };
        match arch {
            Arch::Aarch64 => TrapLowering::SharedPaths { divisions },
            Arch::X86_64 => TrapLowering::Call,
        }
    }

    /// Whether failed checks branch to the shared trap paths.
    pub fn has_shared_paths(self) -> bool {
        matches!(self, TrapLowering::SharedPaths { .. })
    }

    /// Whether a division's checks (zero divisor, `MIN / -1`) are left to
    /// the CLIF instruction itself: its traps are then Pare's
    /// ([`TrapLowering::SharedPaths`]). Otherwise the lowering checks first
    /// and the instruction never traps.
    pub fn division_checks_in_clif(self) -> bool {
        self == TrapLowering::SharedPaths {
            divisions: DivisionChecks::Instruction,
        }
    }

    /// What the machine pass needs to complete this lowering's code: each
    /// check's trap code with its shared path (Cranelift's own division
    /// traps included, [`TrapLowering::division_checks_in_clif`]), and the
    /// functions that never return. `None` for [`TrapLowering::Call`],
    /// whose code is complete.
    pub fn shared_paths(self) -> Option<parec_passes::traps::TrapPaths> {
        match self {
            TrapLowering::Call => None,
            TrapLowering::SharedPaths { .. } => Some(parec_passes::traps::TrapPaths {
                paths: CHECKED_KINDS
                    .iter()
                    .map(|&kind| (check_trap_code(kind), trap_path_name(kind)))
                    .chain(
                        DIVISION_TRAPS
                            .iter()
                            .map(|&(code, kind)| (code, trap_path_name(kind))),
                    )
                    .collect(),
                noreturn: [
                    RuntimeFn::Trap.name(),
                    RuntimeFn::Exit.name(),
                    runtime::libc_exit(),
                ]
                .iter()
                .map(|name| name.to_string())
                .chain(CHECKED_KINDS.iter().map(|&kind| trap_path_name(kind)))
                .collect(),
            }),
        }
    }
}

/// The kinds of trap a check in lowered code raises: each has a shared
/// trap path under [`TrapLowering::SharedPaths`]. (The runtime's own
/// checks call `pare_trap` directly.)
pub const CHECKED_KINDS: [tir::TrapKind; 4] = [
    tir::TrapKind::DivisionByZero,
    tir::TrapKind::DivisionOverflow,
    tir::TrapKind::IndexOutOfBounds,
    tir::TrapKind::NullDereference,
];

/// Cranelift's trap codes of a division's own checks and the kind of Pare
/// trap each one is ([`TrapLowering::division_checks_in_clif`]). No other
/// instruction Pare's lowering emits traps with them: `int_ovf` comes
/// from `sdiv` alone (Pare has no floating point, no overflow-checked
/// arithmetic).
const DIVISION_TRAPS: [(ir::TrapCode, tir::TrapKind); 2] = [
    (
        ir::TrapCode::INTEGER_DIVISION_BY_ZERO,
        tir::TrapKind::DivisionByZero,
    ),
    (
        ir::TrapCode::INTEGER_OVERFLOW,
        tir::TrapKind::DivisionOverflow,
    ),
];

/// First of the user trap codes of checks: the trap block of kind `k`
/// traps with `user(CHECK_TRAP_BASE + k)`, apart from `user(1)`, the trap after
/// a call that never returns.
const CHECK_TRAP_BASE: u8 = 0x40;

/// The trap code of a check of `kind` under [`TrapLowering::SharedPaths`].
pub fn check_trap_code(kind: tir::TrapKind) -> ir::TrapCode {
    ir::TrapCode::unwrap_user(CHECK_TRAP_BASE + kind.code() as u8)
}

/// The runtime function a failed check of `kind` branches to under
/// [`TrapLowering::SharedPaths`]: `pare_trap_` and the message with
/// underscores (`pare_trap_null_dereference`).
pub fn trap_path_name(kind: tir::TrapKind) -> String {
    format!("pare_trap_{}", kind.message().replace(' ', "_"))
}

/// The architectures Pare compiles for, both on Linux with glibc.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arch {
    Aarch64,
    X86_64,
}

impl Arch {
    /// The architecture this program runs on, if Pare supports it.
    pub fn host() -> Option<Arch> {
        if cfg!(target_arch = "aarch64") {
            Some(Arch::Aarch64)
        } else if cfg!(target_arch = "x86_64") {
            Some(Arch::X86_64)
        } else {
            None
        }
    }

    /// Offset of the interrupted stack pointer in the `ucontext_t` a Linux
    /// `SA_SIGINFO` signal handler receives: `uc_mcontext.sp` on aarch64,
    /// `uc_mcontext.gregs[REG_RSP]` on x86_64 (kernel and glibc layout).
    pub(crate) fn ucontext_sp_offset(self) -> i32 {
        match self {
            Arch::Aarch64 => 432,
            Arch::X86_64 => 160,
        }
    }
}

/// The runtime's entry points, callable from lowered code. All use the C
/// calling convention but `pare_trap`, which uses `tail` so that the shared
/// trap paths (`pare_trap_<kind>`) reach it by a tail call: `mov w2, #k;
/// b pare_trap` (`tail` passes the first argument in `x2`), no frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum RuntimeFn {
    PrintI64,
    PrintBool,
    PrintStr,
    NewArray,
    Alloc,
    Trap,
    Exit,
    /// Called first by `main`: turns stack overflow into a trap.
    Init,
    Flush,
}

impl RuntimeFn {
    pub(crate) const ALL: [RuntimeFn; 9] = [
        RuntimeFn::PrintI64,
        RuntimeFn::PrintBool,
        RuntimeFn::PrintStr,
        RuntimeFn::NewArray,
        RuntimeFn::Alloc,
        RuntimeFn::Trap,
        RuntimeFn::Exit,
        RuntimeFn::Init,
        RuntimeFn::Flush,
    ];

    fn call_conv(self, cfg: &LowerConfig) -> CallConv {
        match self {
            RuntimeFn::Trap => CallConv::Tail,
            _ => cfg.c_call_conv,
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            RuntimeFn::PrintI64 => "pare_print_i64",
            RuntimeFn::PrintBool => "pare_print_bool",
            RuntimeFn::PrintStr => "pare_print_str",
            RuntimeFn::NewArray => "pare_new_array",
            RuntimeFn::Alloc => "pare_alloc",
            RuntimeFn::Trap => "pare_trap",
            RuntimeFn::Exit => "pare_exit",
            RuntimeFn::Init => "pare_init",
            RuntimeFn::Flush => "pare_flush",
        }
    }

    pub(crate) fn signature(self, cfg: &LowerConfig) -> ir::Signature {
        let ptr = cfg.pointer_type;
        let mut sig = ir::Signature::new(self.call_conv(cfg));
        let (params, rets): (&[AbiParam], &[AbiParam]) = match self {
            RuntimeFn::PrintI64 => (&[AbiParam::new(types::I64)], &[]),
            RuntimeFn::PrintBool => (&[AbiParam::new(types::I8).uext()], &[]),
            RuntimeFn::PrintStr => (&[AbiParam::new(ptr)], &[]),
            RuntimeFn::NewArray => (
                &[AbiParam::new(types::I64), AbiParam::new(types::I64)],
                &[AbiParam::new(ptr)],
            ),
            RuntimeFn::Alloc => (&[AbiParam::new(types::I64)], &[AbiParam::new(ptr)]),
            // `pare_trap` reads only the low 32 bits: under `tail`, which
            // is Cranelift's own convention, no extension is needed.
            RuntimeFn::Trap => (&[AbiParam::new(types::I32)], &[]),
            RuntimeFn::Exit => (&[AbiParam::new(types::I32).sext()], &[]),
            RuntimeFn::Init => (&[], &[]),
            RuntimeFn::Flush => (&[], &[]),
        };
        sig.params.extend_from_slice(params);
        sig.returns.extend_from_slice(rets);
        sig
    }
}

/// The CLIF type holding a value of `ty`, or `None` for types without values.
pub(crate) fn clif_type(ty: &Ty, cfg: &LowerConfig) -> Option<ir::Type> {
    match ty {
        Ty::I64 => Some(types::I64),
        Ty::I32 => Some(types::I32),
        Ty::U8 | Ty::Bool => Some(types::I8),
        Ty::Str | Ty::Struct(_) | Ty::Array(_) | Ty::Null => Some(cfg.pointer_type),
        Ty::Unit | Ty::Never => None,
    }
}

/// An ABI parameter for a C-convention value of type `ty`, extended to a
/// full register as C compilers do for narrow integers.
fn c_abi_param(ty: &Ty, cfg: &LowerConfig) -> Option<AbiParam> {
    let param = AbiParam::new(clif_type(ty, cfg)?);
    Some(match ty {
        Ty::I32 => param.sext(),
        Ty::U8 | Ty::Bool => param.uext(),
        _ => param,
    })
}

/// The signature of a Pare function: the platform C convention with the
/// arguments as they are (no extension attributes), or the C `() -> i32`
/// of `main`.
pub(crate) fn func_signature(f: &tir::Func, cfg: &LowerConfig) -> ir::Signature {
    if f.is_main {
        let mut sig = ir::Signature::new(cfg.c_call_conv);
        sig.params
            .extend(f.params().iter().filter_map(|l| c_abi_param(&l.ty, cfg)));
        sig.returns.push(AbiParam::new(types::I32));
        return sig;
    }
    let mut sig = ir::Signature::new(cfg.c_call_conv);
    sig.params.extend(
        f.params()
            .iter()
            .filter_map(|l| clif_type(&l.ty, cfg))
            .map(AbiParam::new),
    );
    sig.returns
        .extend(clif_type(&f.ret, cfg).map(AbiParam::new));
    sig
}

/// The C signature of an `extern fn`.
pub(crate) fn extern_signature(e: &tir::ExternDef, cfg: &LowerConfig) -> ir::Signature {
    let mut sig = ir::Signature::new(cfg.c_call_conv);
    sig.params
        .extend(e.params.iter().filter_map(|t| c_abi_param(t, cfg)));
    sig.returns.extend(c_abi_param(&e.ret, cfg));
    sig
}

fn linkage(l: tir::Linkage) -> Linkage {
    match l {
        tir::Linkage::Export => Linkage::Export,
        tir::Linkage::Local => Linkage::Local,
    }
}

/// Per-function cache of imported symbols (function references and symbol
/// global values), so each symbol is imported into a function once.
#[derive(Default)]
pub(crate) struct Imports {
    funcs: HashMap<u32, ir::FuncRef>,
    data: HashMap<u32, ir::GlobalValue>,
    /// Identical signatures share one `SigRef`.
    signatures: HashMap<ir::Signature, ir::SigRef>,
}

impl Imports {
    /// A `FuncRef` calling symbol `sym`, which must be a function symbol.
    pub(crate) fn func(
        &mut self,
        func: &mut ir::Function,
        clif: &ClifModule,
        sym: u32,
    ) -> ir::FuncRef {
        if let Some(&r) = self.funcs.get(&sym) {
            return r;
        }
        let sig = match &clif.symbols[sym as usize].kind {
            SymbolKind::Function(sig) => sig.clone(),
            // Only reachable if a name is used both as data and as a function
            // (e.g. an extern named like a runtime data symbol); the verifier
            // or the linker reports the mismatch.
            SymbolKind::Data { .. } => ir::Signature::new(CallConv::Tail),
        };
        let name = func.declare_imported_user_function(ClifModule::external_name(sym));
        let signature = *self
            .signatures
            .entry(sig)
            .or_insert_with_key(|sig| func.import_signature(sig.clone()));
        let r = func.import_function(ExtFuncData {
            name: ExternalName::user(name),
            signature,
            colocated: true,
            patchable: false,
        });
        self.funcs.insert(sym, r);
        r
    }

    /// A global value holding the address of symbol `sym`.
    pub(crate) fn data(&mut self, func: &mut ir::Function, sym: u32) -> ir::GlobalValue {
        if let Some(&gv) = self.data.get(&sym) {
            return gv;
        }
        let name = func.declare_imported_user_function(ClifModule::external_name(sym));
        let gv = func.create_global_value(GlobalValueData::Symbol {
            name: ExternalName::user(name),
            offset: ir::immediates::Imm64::new(0),
            colocated: true,
            tls: false,
        });
        self.data.insert(sym, gv);
        gv
    }
}

/// Builds one [`ClifModule`] from (part of) a program: owns the symbol table
/// and the data objects, and hands out symbols to the function lowering.
pub(crate) struct ModuleBuilder<'p> {
    pub(crate) program: &'p Program,
    pub(crate) cfg: LowerConfig,
    pub(crate) clif: ClifModule,
    /// String literal contents → symbol, for literals defined in this module.
    strings: HashMap<Vec<u8>, u32>,
}

impl<'p> ModuleBuilder<'p> {
    fn new(program: &'p Program, cfg: &LowerConfig, name: &str) -> Self {
        ModuleBuilder {
            program,
            cfg: *cfg,
            clif: ClifModule::new(name),
            strings: HashMap::new(),
        }
    }

    /// Declares function `id` as defined here, with its own linkage.
    fn declare_defined_func(&mut self, id: FuncId) -> u32 {
        let f = self.program.func(id);
        let sig = func_signature(f, &self.cfg);
        self.clif
            .declare(&f.symbol, SymbolKind::Function(sig), linkage(f.linkage))
    }

    /// The symbol of function `id` (an import unless declared as defined).
    pub(crate) fn func_symbol(&mut self, id: FuncId) -> u32 {
        let f = self.program.func(id);
        let sig = func_signature(f, &self.cfg);
        self.clif
            .declare(&f.symbol, SymbolKind::Function(sig), Linkage::Import)
    }

    pub(crate) fn extern_symbol(&mut self, id: tir::ExternId) -> u32 {
        let e = self.program.extern_def(id);
        let sig = extern_signature(e, &self.cfg);
        self.clif
            .declare(&e.name, SymbolKind::Function(sig), Linkage::Import)
    }

    pub(crate) fn runtime_symbol(&mut self, f: RuntimeFn) -> u32 {
        let sig = f.signature(&self.cfg);
        if matches!(f, RuntimeFn::NewArray | RuntimeFn::Alloc) {
            // They trap rather than return null.
            self.clif.returns_nonnull.insert(f.name().to_string());
        }
        self.clif
            .declare(f.name(), SymbolKind::Function(sig), Linkage::Import)
    }

    /// The symbol of global `id`'s variable (an import unless defined here).
    pub(crate) fn global_symbol(&mut self, id: GlobalId) -> u32 {
        let g = self.program.global(id);
        self.clif.declare(
            &g.name,
            SymbolKind::Data { writable: true },
            Linkage::Import,
        )
    }

    /// The symbol of the read-only data object holding string literal
    /// `bytes` (`{ len, bytes }`), defining it on first use (see the module
    /// doc for its name and linkage).
    pub(crate) fn string_symbol(&mut self, bytes: &[u8]) -> u32 {
        if let Some(&sym) = self.strings.get(bytes) {
            return sym;
        }
        let sym = self.clif.declare(
            &string_literal_name(bytes),
            SymbolKind::Data { writable: false },
            Linkage::Weak,
        );
        let mut data = (bytes.len() as i64).to_le_bytes().to_vec();
        data.extend_from_slice(bytes);
        self.clif.data.push(DataDef {
            symbol: sym,
            bytes: data,
            align: 8,
            relocs: Vec::new(),
        });
        self.strings.insert(bytes.to_vec(), sym);
        sym
    }

    /// Declares and defines global `id` (see the module doc for the layout).
    fn define_global(&mut self, id: GlobalId) {
        let g = self.program.global(id);
        let var = self.clif.declare(
            &g.name,
            SymbolKind::Data { writable: true },
            linkage(g.linkage),
        );
        let (bytes, align, relocs) = match &g.init {
            GlobalInit::Int(v) => {
                let size = g.ty.size().clamp(1, 8) as usize;
                (v.to_le_bytes()[..size].to_vec(), size as u64, Vec::new())
            }
            GlobalInit::Null => (vec![0; 8], 8, Vec::new()),
            GlobalInit::Str(s) => {
                let target = self.string_symbol(s);
                (
                    vec![0; 8],
                    8,
                    vec![DataReloc {
                        offset: 0,
                        target,
                        addend: 0,
                    }],
                )
            }
            GlobalInit::Array(elem, values) => {
                let block_name = format!("{}.data", g.name);
                let target = self.clif.declare(
                    &block_name,
                    SymbolKind::Data { writable: true },
                    Linkage::Local,
                );
                let size = elem.size().clamp(1, 8) as usize;
                let mut block = (values.len() as i64).to_le_bytes().to_vec();
                let mut block_relocs = Vec::new();
                for v in values {
                    match v {
                        GlobalInit::Int(v) => block.extend_from_slice(&v.to_le_bytes()[..size]),
                        GlobalInit::Str(s) => {
                            let literal = self.string_symbol(s);
                            block_relocs.push(DataReloc {
                                offset: block.len() as u32,
                                target: literal,
                                addend: 0,
                            });
                            block.extend_from_slice(&[0; 8]);
                        }
                        GlobalInit::Null | GlobalInit::Array(..) => {
                            block.resize(block.len() + size, 0)
                        }
                    }
                }
                self.clif.data.push(DataDef {
                    symbol: target,
                    bytes: block,
                    align: 8,
                    relocs: block_relocs,
                });
                (
                    vec![0; 8],
                    8,
                    vec![DataReloc {
                        offset: 0,
                        target,
                        addend: 0,
                    }],
                )
            }
        };
        self.clif.data.push(DataDef {
            symbol: var,
            bytes,
            align,
            relocs,
        });
    }

    /// Lowers function `id` (already declared) and adds its definition.
    fn define_func(&mut self, id: FuncId) {
        let symbol = self.func_symbol(id);
        let func = func::lower_function(self, id);
        debug_assert!(
            verify(&func).is_ok(),
            "lowered function {} fails verification: {}\n{}",
            self.program.func(id).symbol,
            verify(&func).unwrap_err(),
            func.display()
        );
        self.clif.functions.push(FunctionDef { symbol, func });
    }
}

/// The symbol of string literal `bytes` in every object of the program:
/// `.str.` and the 128-bit xxh3 hash of the bytes in hex, so that equal
/// literals get one name everywhere and different ones (but for a 128-bit
/// hash collision) different names.
pub fn string_literal_name(bytes: &[u8]) -> String {
    format!(".str.{:032x}", xxhash_rust::xxh3::xxh3_128(bytes))
}

/// Runs Cranelift's verifier on `func` with ISA-independent default flags.
pub fn verify(func: &ir::Function) -> Result<(), String> {
    let flags = settings::Flags::new(settings::builder());
    cranelift_codegen::verifier::verify_function(func, &flags).map_err(|e| e.to_string())
}

/// Verifies every function of `m`, naming the first one that fails.
pub fn verify_module(m: &ClifModule) -> Result<(), String> {
    for f in &m.functions {
        verify(&f.func).map_err(|e| format!("{}: {e}", m.symbols[f.symbol as usize].name))?;
    }
    Ok(())
}

/// Lowers one source module: its `emit` functions, its globals and the string
/// literals they use; every other symbol is an import.
///
/// Like [`lower_program`], runs on a thread of its own with a large stack
/// (see [`crate::stack`]).
pub fn lower_module(p: &Program, m: ModuleId, cfg: &LowerConfig) -> ClifModule {
    crate::stack::on_phase_stack("pare-lower", || lower_module_here(p, m, cfg))
        .unwrap_or_else(|| lower_module_here(p, m, cfg))
}

fn lower_module_here(p: &Program, m: ModuleId, cfg: &LowerConfig) -> ClifModule {
    let info = &p.modules[m.0 as usize];
    let mut mb = ModuleBuilder::new(p, cfg, &info.name);
    for &f in &info.emit {
        mb.declare_defined_func(f);
    }
    for &g in &info.globals {
        mb.define_global(g);
    }
    for &f in &info.emit {
        mb.define_func(f);
    }
    mb.clif
}

/// Lowers the whole program into one module (every function and global
/// once), as the JIT wants it. The module is named `program`.
/// The lowering recurses over expressions (as deep as the parser allows), so
/// it runs on a thread of its own with a large stack (see [`crate::stack`]).
pub fn lower_program(p: &Program, cfg: &LowerConfig) -> ClifModule {
    crate::stack::on_phase_stack("pare-lower", || lower_program_here(p, cfg))
        .unwrap_or_else(|| lower_program_here(p, cfg))
}

fn lower_program_here(p: &Program, cfg: &LowerConfig) -> ClifModule {
    let mut mb = ModuleBuilder::new(p, cfg, "program");
    let funcs = (0..p.funcs.len() as u32).map(FuncId);
    for f in funcs.clone() {
        mb.declare_defined_func(f);
    }
    for g in 0..p.globals.len() as u32 {
        mb.define_global(GlobalId(g));
    }
    for f in funcs {
        mb.define_func(f);
    }
    mb.clif
}
