//! Decoding aarch64 instruction words: control flow, PC-relative fields and
//! register effects.
//!
//! Two decoders cooperate. The PC-relative and control-flow forms the
//! outliner must re-encode (`b`, `bl`, `b.cond`, `cbz`/`cbnz`, `tbz`/`tbnz`,
//! `adr`, `adrp`, `ldr` literal, `br`/`blr`/`ret`, `udf`) are recognised by
//! their fixed encoding bits ([`Form`]), exactly as the architecture manual
//! lays them out, so lifting never depends on a disassembler's rendering of
//! an offset. Register effects come from capstone's operand lists
//! ([`Decoder::effects`]), made conservative in the two directions liveness
//! needs: every register an instruction mentions counts as read and as
//! possibly written; a register counts as *killed* (fully overwritten, so
//! dead before the instruction) only for the destination of instruction
//! classes known to overwrite it whole.

use capstone::arch::arm64::{Arm64CC, Arm64OperandType};
use capstone::arch::{self, BuildsCapstone, DetailsArchInsn};
use capstone::{Capstone, RegId};
use hashbrown::HashMap;

/// A set of machine registers: bit `n` is `x<n>` for n < 31, then `sp`, the
/// NZCV flags, `v0`..`v31`, and one bit for every other (system) register.
pub type RegSet = u128;

/// The bit of `x<n>` (`n` ≤ 30).
pub const fn x(n: u32) -> RegSet {
    1 << n
}
pub const SP: RegSet = 1 << 31;
pub const NZCV: RegSet = 1 << 32;
/// The bit of `v<n>`.
pub const fn v(n: u32) -> RegSet {
    1 << (33 + n)
}
pub const OTHER: RegSet = 1 << 65;
pub const ALL_REGS: RegSet = (1 << 66) - 1;
pub const LR: RegSet = x(30);
pub const FP: RegSet = x(29);
/// The linker's veneer scratch registers, never allocated by Cranelift.
pub const IP0_IP1: RegSet = x(16) | x(17);

/// `x<lo>`..=`x<hi>`.
pub const fn x_range(lo: u32, hi: u32) -> RegSet {
    ((1 << (hi + 1)) - 1) & !((1 << lo) - 1)
}
const ALL_V: RegSet = ((1u128 << 32) - 1) << 33;

/// What a return (or a tail call) may read: results, callee-saved registers,
/// the frame and link registers, the stack pointer. Over-approximated for both
/// the platform ABI and Cranelift's `tail` convention.
pub const RETURN_USES: RegSet = x_range(0, 8) | x_range(19, 30) | SP | ALL_V;
/// What a call may read: the argument registers and the stack. Both
/// conventions Cranelift emits here pass integer arguments in `x0`–`x7`
/// at most (the platform ABI from `x0`, `tail` from `x2`: `x0` and `x1` are
/// reserved there) and the platform ABI's result area pointer in `x8`;
/// vector arguments are over-approximated. A call of an outlined function
/// carries the effects of its body instead (`outline::rewrite`), since an
/// outlined body may read any register.
pub const CALL_USES: RegSet = x_range(0, 8) | SP | ALL_V;
/// What every call certainly clobbers in both conventions.
pub const CALL_KILLS: RegSet = x_range(0, 17) | LR | NZCV;

/// The encoding class of one instruction word.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Form {
    /// `b` (26-bit offset).
    B,
    /// `bl` (26-bit offset).
    Bl,
    /// `b.cond` (19-bit offset).
    BCond,
    /// `cbz`/`cbnz` (19-bit offset).
    Cbz,
    /// `tbz`/`tbnz` (14-bit offset).
    Tbz,
    /// `ldr` (literal) loading `size` bytes (0 for `prfm`).
    LdrLiteral { size: u32 },
    /// `adr` (21-bit byte offset).
    Adr,
    /// `adrp` (21-bit page offset; only meaningful with a relocation).
    Adrp,
    /// `br xN`.
    Br { rn: u32 },
    /// `blr xN`.
    Blr { rn: u32 },
    /// `ret xN`.
    Ret { rn: u32 },
    /// `udf #imm`: a trap.
    Udf,
    /// Anything else: no PC-relative field, falls through.
    Plain,
}

impl Form {
    /// Classifies an instruction word by its encoding bits.
    pub fn of(w: u32) -> Form {
        let rn = (w >> 5) & 31;
        match w {
            _ if w & 0xFC00_0000 == 0x1400_0000 => Form::B,
            _ if w & 0xFC00_0000 == 0x9400_0000 => Form::Bl,
            _ if w & 0xFF00_0010 == 0x5400_0000 => Form::BCond,
            _ if w & 0x7E00_0000 == 0x3400_0000 => Form::Cbz,
            _ if w & 0x7E00_0000 == 0x3600_0000 => Form::Tbz,
            _ if w & 0x3B00_0000 == 0x1800_0000 => {
                let vector = (w >> 26) & 1 == 1;
                let size = match (w >> 30, vector) {
                    (0, false) | (2, false) | (0, true) => 4,
                    (1, false) | (1, true) => 8,
                    (2, true) => 16,
                    _ => 0,
                };
                Form::LdrLiteral { size }
            }
            _ if w & 0x9F00_0000 == 0x1000_0000 => Form::Adr,
            _ if w & 0x9F00_0000 == 0x9000_0000 => Form::Adrp,
            _ if w & 0xFFFF_FC1F == 0xD61F_0000 => Form::Br { rn },
            _ if w & 0xFFFF_FC1F == 0xD63F_0000 => Form::Blr { rn },
            _ if w & 0xFFFF_FC1F == 0xD65F_0000 => Form::Ret { rn },
            _ if w & 0xFFFF_0000 == 0 => Form::Udf,
            _ => Form::Plain,
        }
    }

    /// Whether the word holds a PC-relative offset (the linker fills it when
    /// a relocation is attached; otherwise it points into the function).
    pub fn is_pc_relative(self) -> bool {
        matches!(
            self,
            Form::B
                | Form::Bl
                | Form::BCond
                | Form::Cbz
                | Form::Tbz
                | Form::LdrLiteral { .. }
                | Form::Adr
                | Form::Adrp
        )
    }

    /// Whether control never reaches the next word.
    pub fn ends_flow(self) -> bool {
        matches!(
            self,
            Form::B | Form::Br { .. } | Form::Ret { .. } | Form::Udf
        )
    }

    /// The signed byte offset encoded in a PC-relative word (from the word's
    /// own address; `adrp` gives pages of 4 KiB).
    pub fn offset(self, w: u32) -> i64 {
        let sext = |value: u32, bits: u32| -> i64 {
            let shift = 64 - bits;
            (i64::from(value) << shift) >> shift
        };
        match self {
            Form::B | Form::Bl => sext(w & 0x03FF_FFFF, 26) * 4,
            Form::BCond | Form::Cbz | Form::LdrLiteral { .. } => sext((w >> 5) & 0x7_FFFF, 19) * 4,
            Form::Tbz => sext((w >> 5) & 0x3FFF, 14) * 4,
            Form::Adr | Form::Adrp => {
                let imm = ((w >> 5) & 0x7_FFFF) << 2 | ((w >> 29) & 3);
                let value = sext(imm, 21);
                if self == Form::Adrp {
                    value * 4096
                } else {
                    value
                }
            }
            _ => 0,
        }
    }

    /// `w` with its PC-relative field set to `offset` bytes, or `None` if
    /// the offset is misaligned or out of the field's range.
    pub fn with_offset(self, w: u32, offset: i64) -> Option<u32> {
        let field = |value: i64, bits: u32| -> Option<u32> {
            let limit = 1i64 << (bits - 1);
            (-limit..limit)
                .contains(&value)
                .then(|| (value as u32) & ((1u32 << bits) - 1))
        };
        let words = |value: i64| (value % 4 == 0).then_some(value / 4);
        match self {
            Form::B | Form::Bl => Some(w & !0x03FF_FFFF | field(words(offset)?, 26)?),
            Form::BCond | Form::Cbz | Form::LdrLiteral { .. } => {
                Some(w & !(0x7_FFFF << 5) | field(words(offset)?, 19)? << 5)
            }
            Form::Tbz => Some(w & !(0x3FFF << 5) | field(words(offset)?, 14)? << 5),
            Form::Adr => {
                let imm = field(offset, 21)?;
                Some(w & !(0x7_FFFF << 5 | 3 << 29) | (imm >> 2) << 5 | (imm & 3) << 29)
            }
            _ => None,
        }
    }
}

/// How an instruction touches registers (see the module doc for the
/// directions of approximation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Effects {
    /// Registers possibly read (over-approximation).
    pub uses: RegSet,
    /// Registers possibly written, or mentioned at all (over-approximation).
    pub defs: RegSet,
    /// Registers certainly overwritten whole (under-approximation).
    pub kills: RegSet,
    /// Registers written through a base-register writeback or as a
    /// destination: used to spot frame set-up (`sp`, `x29` writes).
    pub writes_frame: bool,
}

impl Effects {
    /// Effects that pin everything: for words no decoder understands.
    pub const OPAQUE: Effects = Effects {
        uses: ALL_REGS,
        defs: ALL_REGS,
        kills: 0,
        writes_frame: true,
    };

    pub fn mentions(&self) -> RegSet {
        self.uses | self.defs
    }
}

/// Mnemonics whose first operand is a general-purpose destination they
/// overwrite whole (writes to `wN` zero the upper half). Partial writers
/// (`movk`, `bfi`, `bfxil`, `bfm`) and compares are deliberately absent.
pub(crate) const PURE_DEST: &[&str] = &[
    "add", "adds", "sub", "subs", "and", "ands", "orr", "eor", "eon", "orn", "bic", "bics", "mov",
    "movz", "movn", "mvn", "neg", "negs", "mul", "mneg", "madd", "msub", "smull", "umull", "smulh",
    "umulh", "smaddl", "umaddl", "smsubl", "umsubl", "sdiv", "udiv", "lsl", "lsr", "asr", "ror",
    "lslv", "lsrv", "asrv", "rorv", "sxtb", "sxth", "sxtw", "uxtb", "uxth", "ubfx", "sbfx",
    "ubfiz", "sbfiz", "ubfm", "sbfm", "extr", "csel", "csinc", "csinv", "csneg", "cset", "csetm",
    "cinc", "cinv", "cneg", "clz", "cls", "rbit", "rev", "rev16", "rev32", "adr", "adrp", "ldr",
    "ldrb", "ldrh", "ldrsb", "ldrsh", "ldrsw", "ldur", "ldurb", "ldurh", "ldursb", "ldursh",
    "ldursw", "ldar", "ldarb", "ldarh", "ldaxr", "ldaxrb", "ldaxrh", "ldxr", "ldxrb", "ldxrh",
    "adc", "adcs", "sbc", "sbcs", "ngc", "ngcs", "fmov", "fcvtzs", "fcvtzu", "fcvtas", "fcvtau",
    "fcvtms", "fcvtmu", "fcvtps", "fcvtpu", "fcvtns", "fcvtnu", "umov", "smov", "cnt",
];
/// Loads of a register pair: both destinations are overwritten.
const PAIR_DEST: &[&str] = &["ldp", "ldpsw", "ldnp", "ldaxp", "ldxp"];
/// Mnemonics that overwrite NZCV whole.
const FLAG_SETTERS: &[&str] = &[
    "cmp", "cmn", "tst", "adds", "subs", "ands", "bics", "negs", "ngcs", "adcs", "sbcs", "fcmp",
    "fcmpe", "ccmp", "ccmn", "fccmp", "fccmpe",
];
/// Mnemonics that read NZCV without a condition-code operand.
const FLAG_READERS: &[&str] = &["adc", "adcs", "sbc", "sbcs", "ngc", "ngcs"];

/// What a non-branch instruction does, coarsely: the classes reports name
/// instructions by ([`super::roles`]). Branches are told by their
/// [`Form`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Class {
    /// A copy of one register into another (`mov`, `fmov` between
    /// registers, vector `mov`): no computation.
    Move,
    /// A constant into a register (`mov #imm`, `movz`, `movn`, `movk`,
    /// `fmov #imm`, a literal load).
    Constant,
    /// An address (`adr`, `adrp`).
    Address,
    /// A load from memory (`sp`-relative: [`Shape::sp_based`]).
    Load,
    /// A store to memory.
    Store,
    /// A compare: sets the flags, writes no register (`cmp`, `cmn`, `tst`,
    /// `ccmp`, `fcmp`...).
    Compare,
    /// A register from the flags (`cset`, `csel`, `cinc`...).
    Select,
    /// `sdiv`, `udiv`.
    Divide,
    /// `nop` and other hints.
    Nop,
    /// Anything else: arithmetic, logic, shifts, extensions, conversions.
    Other,
}

/// The [`Class`] of a word and what its operands are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Shape {
    pub class: Class,
    /// A load or store whose base register is `sp`.
    pub sp_based: bool,
    /// A load or store that writes its base register back.
    pub writeback: bool,
    /// The first operand is a 32-bit general-purpose register (`wN`): a
    /// destination there is written zero-extended.
    pub narrow_destination: bool,
}

/// What a [`Decoder`] has learned of instruction words: their effects and
/// shapes, pure functions of the word. Code repeats words a lot, and
/// capstone's detailed decoding dominates lifting time, so a module's
/// machine passes hand one on to the next ([`Decoder::with_known`],
/// [`Decoder::into_known`]) rather than decode the same words again.
#[derive(Clone, Debug, Default)]
pub struct Decoded {
    effects: HashMap<u32, Effects>,
    shapes: HashMap<u32, Shape>,
}

/// A capstone instance with a register-name cache and what it decoded
/// ([`Decoded`]). Not `Sync`: make one per thread (the machine passes make
/// one per module).
pub struct Decoder {
    cs: Capstone,
    regs: HashMap<u16, RegSet>,
    known: Decoded,
}

impl Decoder {
    pub fn new() -> Decoder {
        Decoder::with_known(Decoded::default())
    }

    /// A decoder that knows what another one decoded.
    pub fn with_known(known: Decoded) -> Decoder {
        let cs = Capstone::new()
            .arm64()
            .mode(arch::arm64::ArchMode::Arm)
            .detail(true)
            .build()
            .expect("capstone supports aarch64");
        Decoder {
            cs,
            regs: HashMap::new(),
            known,
        }
    }

    /// What this decoder decoded, for the next pass's decoder.
    pub fn into_known(self) -> Decoded {
        self.known
    }

    /// The mnemonic and operands of `w`, for diagnostics and snapshots.
    pub fn render(&self, w: u32, address: u64) -> String {
        match self.cs.disasm_count(&w.to_le_bytes(), address, 1) {
            Ok(insns) => match insns.iter().next() {
                Some(i) => format!(
                    "{} {}",
                    i.mnemonic().unwrap_or("?"),
                    i.op_str().unwrap_or("")
                )
                .trim_end()
                .to_string(),
                None => format!(".word {w:#010x}"),
            },
            Err(_) => format!(".word {w:#010x}"),
        }
    }

    fn reg_bits(cs: &Capstone, cache: &mut HashMap<u16, RegSet>, reg: RegId) -> RegSet {
        if reg.0 == 0 {
            return 0;
        }
        *cache
            .entry(reg.0)
            .or_insert_with(|| register_bits(&cs.reg_name(reg).unwrap_or_default()))
    }

    /// The register effects of `w` (the control-flow forms are refined by
    /// the lifter, which knows calls from jumps).
    pub fn effects(&mut self, w: u32) -> Effects {
        if let Some(&e) = self.known.effects.get(&w) {
            return e;
        }
        let e = self.decode_effects(w);
        self.known.effects.insert(w, e);
        e
    }

    /// The [`Shape`] of `w` (branch forms are [`Class::Other`]: tell them
    /// by their [`Form`]).
    pub fn shape(&mut self, w: u32) -> Shape {
        if let Some(&shape) = self.known.shapes.get(&w) {
            return shape;
        }
        let shape = self.decode_shape(w);
        self.known.shapes.insert(w, shape);
        shape
    }

    fn decode_shape(&mut self, w: u32) -> Shape {
        let other = Shape {
            class: Class::Other,
            sp_based: false,
            writeback: false,
            narrow_destination: false,
        };
        match Form::of(w) {
            Form::LdrLiteral { .. } => {
                return Shape {
                    class: Class::Constant,
                    ..other
                }
            }
            Form::Adr | Form::Adrp => {
                return Shape {
                    class: Class::Address,
                    ..other
                }
            }
            Form::Plain => {}
            _ => return other,
        }
        let Decoder {
            cs, regs: cache, ..
        } = self;
        let Ok(insns) = cs.disasm_count(&w.to_le_bytes(), 0, 1) else {
            return other;
        };
        let Some(insn) = insns.iter().next() else {
            return other;
        };
        let Ok(detail) = cs.insn_detail(insn) else {
            return other;
        };
        let arch_detail = detail.arch_detail();
        let Some(arm) = arch_detail.arm64() else {
            return other;
        };
        let mut registers = 0;
        let mut immediates = 0;
        let mut sp_based = false;
        let mut narrow_destination = false;
        for (k, op) in arm.operands().enumerate() {
            match op.op_type {
                Arm64OperandType::Reg(r) => {
                    registers += 1;
                    if k == 0 {
                        narrow_destination = cs.reg_name(r).is_some_and(|n| n.starts_with('w'));
                    }
                }
                Arm64OperandType::Imm(_) | Arm64OperandType::Fp(_) | Arm64OperandType::Cimm(_) => {
                    immediates += 1
                }
                Arm64OperandType::Mem(m) => {
                    sp_based |= Self::reg_bits(cs, cache, m.base()) == SP;
                }
                _ => {}
            }
        }
        let mnemonic = insn.mnemonic().unwrap_or("");
        let class = class_of(mnemonic, registers, immediates);
        Shape {
            class,
            sp_based: sp_based && matches!(class, Class::Load | Class::Store),
            writeback: arm.writeback(),
            narrow_destination,
        }
    }

    fn decode_effects(&mut self, w: u32) -> Effects {
        let form = Form::of(w);
        match form {
            Form::Udf => return Effects::default(),
            Form::Ret { rn } => {
                return Effects {
                    uses: RETURN_USES | x(rn),
                    defs: x(rn),
                    ..Effects::default()
                }
            }
            _ => {}
        }
        let Decoder {
            cs, regs: cache, ..
        } = self;
        let Ok(insns) = cs.disasm_count(&w.to_le_bytes(), 0, 1) else {
            return Effects::OPAQUE;
        };
        let Some(insn) = insns.iter().next() else {
            return Effects::OPAQUE;
        };
        let Ok(detail) = cs.insn_detail(insn) else {
            return Effects::OPAQUE;
        };
        let mnemonic = insn.mnemonic().unwrap_or("").to_string();
        let arch_detail = detail.arch_detail();
        let Some(arm) = arch_detail.arm64() else {
            return Effects::OPAQUE;
        };
        let mut operand_regs: Vec<RegSet> = Vec::new();
        let mut uses: RegSet = 0;
        let mut defs: RegSet = 0;
        let mut writes_frame = false;
        for op in arm.operands() {
            match op.op_type {
                Arm64OperandType::Reg(r) => operand_regs.push(Self::reg_bits(cs, cache, r)),
                Arm64OperandType::Mem(m) => {
                    let base = Self::reg_bits(cs, cache, m.base());
                    let index = Self::reg_bits(cs, cache, m.index());
                    uses |= base | index;
                    if arm.writeback() {
                        defs |= base;
                        writes_frame |= base & (SP | FP) != 0;
                    }
                    operand_regs.push(0);
                }
                Arm64OperandType::RegMrs(_)
                | Arm64OperandType::RegMsr(_)
                | Arm64OperandType::Sys(_)
                | Arm64OperandType::Pstate(_) => {
                    uses |= OTHER;
                    defs |= OTHER;
                    operand_regs.push(0);
                }
                _ => operand_regs.push(0),
            }
        }
        for &r in detail.regs_read() {
            uses |= Self::reg_bits(cs, cache, r);
        }
        for &r in detail.regs_write() {
            defs |= Self::reg_bits(cs, cache, r);
        }
        // Writeback with a post-index immediate: capstone lists it as a
        // separate immediate operand; the base is already handled.
        let dest_count = if PAIR_DEST.contains(&mnemonic.as_str()) {
            2
        } else if PURE_DEST.contains(&mnemonic.as_str()) {
            1
        } else {
            0
        };
        let mut kills: RegSet = 0;
        for (i, &regs) in operand_regs.iter().enumerate() {
            defs |= regs;
            if i < dest_count {
                // A destination that is a general-purpose register is
                // overwritten whole; vector destinations may be partial.
                if regs & x_range(0, 30) != 0 {
                    kills |= regs;
                }
                writes_frame |= regs & (SP | FP) != 0;
            } else {
                uses |= regs;
            }
        }
        if dest_count == 0 {
            // Unknown destination semantics: anything mentioned may be
            // written, including the frame registers.
            writes_frame |= defs & (SP | FP) != 0;
        }
        let cc = arm.cc();
        if (cc != Arm64CC::ARM64_CC_INVALID && cc != Arm64CC::ARM64_CC_AL)
            || FLAG_READERS.contains(&mnemonic.as_str())
        {
            uses |= NZCV;
        }
        if FLAG_SETTERS.contains(&mnemonic.as_str()) {
            kills |= NZCV;
            defs |= NZCV;
        }
        if arm.update_flags() {
            defs |= NZCV;
        }
        if matches!(mnemonic.as_str(), "ccmp" | "ccmn" | "fccmp" | "fccmpe") {
            uses |= NZCV;
        }
        // Branch forms: the lifter adds call and return conventions.
        if let Form::Br { rn } | Form::Blr { rn } = form {
            uses |= x(rn);
        }
        // Conditional branches write nothing; `cbz`/`tbz` test a register,
        // not the flags (capstone reports both as possible).
        if matches!(form, Form::BCond | Form::Cbz | Form::Tbz) {
            defs = 0;
            kills = 0;
            if form != Form::BCond {
                uses &= !NZCV;
            }
        }
        Effects {
            uses,
            defs: defs | kills,
            kills,
            writes_frame,
        }
    }
}

impl Default for Decoder {
    fn default() -> Self {
        Decoder::new()
    }
}

/// The [`Class`] of a non-branch instruction from capstone's mnemonic (its
/// preferred alias: `mov`, `cmp`, `cset`...) and the number of register
/// and immediate operands.
fn class_of(mnemonic: &str, registers: usize, immediates: usize) -> Class {
    match mnemonic {
        "mov" | "fmov" if immediates > 0 => Class::Constant,
        "mov" | "fmov" if registers == 2 => Class::Move,
        "movz" | "movn" | "movk" | "movi" | "mvni" => Class::Constant,
        "adr" | "adrp" => Class::Address,
        "cmp" | "cmn" | "tst" | "ccmp" | "ccmn" | "fcmp" | "fcmpe" | "fccmp" | "fccmpe" => {
            Class::Compare
        }
        "cset" | "csetm" | "csel" | "csinc" | "csinv" | "csneg" | "cinc" | "cinv" | "cneg"
        | "fcsel" => Class::Select,
        "sdiv" | "udiv" => Class::Divide,
        "nop" | "hint" | "bti" | "paciasp" | "pacibsp" | "autiasp" | "autibsp" | "yield" => {
            Class::Nop
        }
        m if m.starts_with("ld") => Class::Load,
        m if m.starts_with("st") => Class::Store,
        _ => Class::Other,
    }
}

/// The bit of a capstone register name (`x3`, `w3`, `sp`, `q7`, `nzcv`...).
fn register_bits(name: &str) -> RegSet {
    match name {
        "" | "xzr" | "wzr" => return 0,
        "sp" | "wsp" => return SP,
        "fp" => return FP,
        "lr" => return LR,
        "nzcv" => return NZCV,
        _ => {}
    }
    let (prefix, digits) = name.split_at(1);
    match (prefix, digits.parse::<u32>()) {
        ("x" | "w", Ok(n)) if n <= 30 => x(n),
        ("v" | "q" | "d" | "s" | "h" | "b" | "z", Ok(n)) if n < 32 => v(n),
        _ => OTHER,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_and_offsets_round_trip() {
        // b #-8, bl #0x40, b.ne #0x18, cbz x2, #0x3c, tbz w1, #3, #-0x10,
        // ldr d0, #0x20, adr x16, #0x10.
        let cases: &[(u32, Form, i64)] = &[
            (0x17FF_FFFE, Form::B, -8),
            (0x9400_0010, Form::Bl, 0x40),
            (0x5400_00C1, Form::BCond, 0x18),
            (0xB400_01E2, Form::Cbz, 0x3c),
            (0x361F_FF81, Form::Tbz, -0x10),
            (0x5C00_0100, Form::LdrLiteral { size: 8 }, 0x20),
            (0x1000_0090, Form::Adr, 0x10),
        ];
        for &(w, form, offset) in cases {
            assert_eq!(Form::of(w), form, "{w:#x}");
            assert_eq!(form.offset(w), offset, "{w:#x}");
            assert_eq!(form.with_offset(w, offset), Some(w), "{w:#x}");
        }
        assert_eq!(Form::Tbz.with_offset(0x3600_0000, 1 << 20), None);
    }

    #[test]
    fn effects_of_common_instructions() {
        let mut d = Decoder::new();
        // mov x16, #5: kills x16.
        let e = d.effects(0xD280_00B0);
        assert_eq!(e.kills & x(16), x(16));
        assert_eq!(e.uses & x(16), 0);
        // movk x16, #1, lsl #16: reads x16.
        let e = d.effects(0xF2A0_0030);
        assert_eq!(e.kills & x(16), 0);
        assert_eq!(e.uses & x(16), x(16));
        // cmp x12, x0: kills NZCV, reads both.
        let e = d.effects(0xEB00_019F);
        assert_eq!(e.kills, NZCV);
        assert_eq!(e.uses & (x(12) | x(0)), x(12) | x(0));
        // cset x2, gt reads NZCV.
        let e = d.effects(0x9A9F_D7E2);
        assert_ne!(e.uses & NZCV, 0);
        assert_eq!(e.kills, x(2));
        // stp x29, x30, [sp, #-16]!: frame set-up.
        let e = d.effects(0xA9BF_7BFD);
        assert!(e.writes_frame);
        assert_ne!(e.uses & LR, 0);
        // ldr x0, [x3, #8]: kills x0, reads x3.
        let e = d.effects(0xF940_0460);
        assert_eq!(e.kills, x(0));
        assert_eq!(e.uses, x(3));
    }

    #[test]
    fn shapes_of_common_instructions() {
        let mut d = Decoder::new();
        let class = |d: &mut Decoder, w: u32| d.shape(w).class;
        assert_eq!(class(&mut d, 0xAA01_03E0), Class::Move); // mov x0, x1
        assert_eq!(class(&mut d, 0x1E60_4020), Class::Move); // fmov d0, d1
        assert_eq!(class(&mut d, 0xD280_00B0), Class::Constant); // mov x16, #5
        assert_eq!(class(&mut d, 0xF2A0_0030), Class::Constant); // movk x16, #1, lsl #16
        assert_eq!(class(&mut d, 0xEB00_019F), Class::Compare); // cmp x12, x0
        assert_eq!(class(&mut d, 0x9A9F_D7E2), Class::Select); // cset x2, gt
        assert_eq!(class(&mut d, 0x9AC1_0C00), Class::Divide); // sdiv x0, x0, x1
        assert_eq!(class(&mut d, 0x8B01_0000), Class::Other); // add x0, x0, x1
        assert_eq!(class(&mut d, 0xD503_201F), Class::Nop);
        assert_eq!(class(&mut d, 0x9000_0000), Class::Address); // adrp x0, 0
        assert_eq!(class(&mut d, 0x5800_0040), Class::Constant); // ldr x0, #8
                                                                 // ldr x0, [x3, #8]; stp x29, x30, [sp, #-16]!; str x19, [sp, #8].
        let load = d.shape(0xF940_0460);
        assert_eq!((load.class, load.sp_based), (Class::Load, false));
        assert!(!load.writeback && !load.narrow_destination);
        let push = d.shape(0xA9BF_7BFD);
        assert_eq!((push.class, push.sp_based), (Class::Store, true));
        assert!(push.writeback);
        // add w0, w1, #1: a 32-bit destination.
        assert!(d.shape(0x1100_0420).narrow_destination);
        let save = d.shape(0xF900_07F3);
        assert_eq!((save.class, save.sp_based), (Class::Store, true));
    }
}
