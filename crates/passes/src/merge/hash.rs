//! The stable structural hash of a function ([GFM] §3.2, Algorithm 1; references in docs/DESIGN.md).
//!
//! A function is walked in layout order; instruction `i` is the `i`-th
//! instruction of the layout. Everything that shapes the code is fed to one
//! xxh3-64 stream: the signature, stack slots, block count and coldness, and
//! per instruction the opcode *name*, the controlling and result types, the
//! value operands as canonical numbers (block parameters and results numbered
//! in layout order, aliases resolved), branch targets as block positions with
//! their arguments, and every immediate (condition codes, memory flags,
//! offsets, trap codes, constants). Entity numbers (`v7`, `block3`, `fn2`)
//! never enter the hash, nor do pointers or hash-map orders, so the hash is
//! the same on every machine and in every run.
//!
//! A *parameterizable* operand is left out of the stream and recorded as a
//! [`Location`] `(i, j) → operand hash` instead: the callee of a direct call
//! or `func_addr` (hashed by symbol name), the symbol of a `symbol_value` /
//! `global_value` (by name; read-only data this module defines without
//! relocations by content), and an `iconst` all of whose uses are operands
//! where a run-time value costs no more than an immediate (see
//! [`iconst_is_parameterizable`]). Each instruction has at most one such
//! operand, the "reference" operand, numbered `j = 0`.

use cranelift_codegen::ir::{
    self, BlockArg, ExternalName, Function, GlobalValueData, Inst, InstructionData, Opcode,
    Signature, Type, Value,
};
use hashbrown::HashMap;
use xxhash_rust::xxh3::xxh3_64;

use crate::clif_module::{ClifModule, SymbolKind};

/// A parameterizable operand: instruction `inst`, operand `operand`, the
/// hash of what it refers to, and the aarch64 bytes a thunk spends to
/// materialise it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Location {
    pub inst: u32,
    pub operand: u32,
    pub hash: u64,
    pub cost: u32,
}

impl Location {
    /// The `(i, j)` position, without the hash.
    pub fn key(&self) -> (u32, u32) {
        (self.inst, self.operand)
    }
}

/// What a location refers to, recovered from the IR when rewriting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operand {
    /// `iconst` of this type and value.
    Imm(Type, i64),
    /// The symbol of this global value (a `symbol_value`/`global_value`).
    Global(ir::GlobalValue),
    /// The callee of a `call`, `return_call` or `func_addr`.
    Callee(ir::FuncRef),
}

/// The shape of one function as analysis sees it.
#[derive(Clone, Debug)]
pub struct Shape {
    /// The structural hash of everything but the locations.
    pub hash: u64,
    /// Instructions in layout order.
    pub insts: Vec<Inst>,
    /// The parameterizable operands, sorted by `(inst, operand)`.
    pub locations: Vec<Location>,
}

/// Which calls inside loops a [`Shape`] may turn into parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoopCalls<'a> {
    /// Every direct callee is a location (the paper's rule; identical-code
    /// folding, and functions a profile knows cold).
    Parameterize,
    /// The callee of a `call` inside a loop is part of the hash when it is
    /// one of these symbols (small functions of the module): a merged body
    /// would call it indirectly on every iteration, where the inliner
    /// would otherwise have inlined it ([`crate::heat`]).
    KeepCallsOf(&'a hashbrown::HashSet<u32>),
}

/// Computes the [`Shape`] of `func`, a function of `module`.
pub fn shape(module: &ClifModule, func: &Function, loop_calls: LoopCalls<'_>) -> Shape {
    let mut h = Stream::default();
    let numbers = Numbers::of(func, |_| true);
    let insts: Vec<Inst> = func
        .layout
        .blocks()
        .flat_map(|b| func.layout.block_insts(b))
        .collect();
    let param_iconsts = parameterizable_iconsts(func);
    let kept_in_loops = match loop_calls {
        LoopCalls::KeepCallsOf(small) => Some((crate::heat::in_loop_blocks(func), small)),
        LoopCalls::Parameterize => None,
    };
    let kept_call = |inst: Inst| {
        let Some((in_loop, small)) = &kept_in_loops else {
            return false;
        };
        let InstructionData::Call { func_ref, .. } = func.dfg.insts[inst] else {
            return false;
        };
        let callee = ClifModule::symbol_of(func, &func.dfg.ext_funcs[func_ref].name);
        callee.is_some_and(|s| small.contains(&s)) && crate::heat::inst_in_loop(func, in_loop, inst)
    };

    h.signature(&func.signature);
    for (_, slot) in func.sized_stack_slots.iter() {
        h.u64(u64::from(slot.size));
        h.u64(u64::from(slot.align_shift));
        h.display(format_args!("{:?}", slot.kind));
    }
    for block in func.layout.blocks() {
        h.str("block");
        h.u64(u64::from(func.layout.is_cold(block)));
        for &p in func.dfg.block_params(block) {
            h.ty(func.dfg.value_type(p));
        }
    }

    let mut locations = Vec::new();
    for (i, &inst) in insts.iter().enumerate() {
        let data = &func.dfg.insts[inst];
        feed_structure(&mut h, &numbers, func, inst);
        let reference = hash_immediates(module, func, inst, &mut h);
        if let Some((hash, cost)) = reference {
            let parameterizable = match data.opcode() {
                Opcode::Iconst => param_iconsts.contains(&inst),
                Opcode::Call => !kept_call(inst),
                _ => true,
            };
            if parameterizable {
                locations.push(Location {
                    inst: i as u32,
                    operand: 0,
                    hash,
                    cost,
                });
            } else {
                h.u64(hash);
            }
        }
    }
    Shape {
        hash: h.finish(),
        insts,
        locations,
    }
}

/// The parameterizable operand of `inst`, if it has one.
pub fn operand(func: &Function, inst: Inst) -> Option<Operand> {
    match func.dfg.insts[inst] {
        InstructionData::UnaryImm {
            opcode: Opcode::Iconst,
            imm,
        } => Some(Operand::Imm(
            func.dfg.value_type(func.dfg.first_result(inst)),
            imm.bits(),
        )),
        InstructionData::UnaryGlobalValue { global_value, .. } => {
            symbol_of_global(func, global_value).map(|_| Operand::Global(global_value))
        }
        InstructionData::Call { func_ref, .. } | InstructionData::FuncAddr { func_ref, .. } => {
            Some(Operand::Callee(func_ref))
        }
        _ => None,
    }
}

/// Feeds memory flags to `h`: what they say, not their index in the
/// function's flag set (which differs between functions that use the same
/// flags in another order), and the alias region by its program-wide
/// `user_id`.
fn hash_mem_flags(func: &Function, flags: ir::MemFlags, h: &mut Stream) {
    let data = func.dfg.mem_flags[flags];
    h.display(data.with_alias_region(None));
    if let Some(region) = data.alias_region() {
        h.u64(u64::from(func.dfg.alias_regions[region].user_id));
    }
}

/// Feeds the immediates of `inst` to `h`, except the reference operand
/// (callee, symbol or `iconst` value), whose `(hash, materialisation cost)`
/// is returned for the caller to record or hash.
fn hash_immediates(
    module: &ClifModule,
    func: &Function,
    inst: Inst,
    h: &mut Stream,
) -> Option<(u64, u32)> {
    use InstructionData as D;
    match func.dfg.insts[inst] {
        D::AtomicCas { flags, .. } | D::LoadNoOffset { flags, .. } => {
            hash_mem_flags(func, flags, h);
        }
        D::StoreNoOffset { flags, .. } => hash_mem_flags(func, flags, h),
        D::AtomicRmw { flags, op, .. } => {
            hash_mem_flags(func, flags, h);
            h.display(op);
        }
        D::Load { flags, offset, .. } | D::Store { flags, offset, .. } => {
            hash_mem_flags(func, flags, h);
            h.u64(i64::from(offset) as u64);
        }
        D::BinaryImm8 { imm, .. } | D::TernaryImm8 { imm, .. } => h.u64(u64::from(imm)),
        D::CondTrap { code, .. } | D::Trap { code, .. } | D::IntAddTrap { code, .. } => {
            h.display(code)
        }
        D::IntCompare { cond, .. } => h.display(cond),
        D::FloatCompare { cond, .. } => h.display(cond),
        D::CallIndirect { .. } | D::TryCallIndirect { .. } => {
            if let Some(sig) = func.dfg.call_signature(inst) {
                h.signature(&func.dfg.signatures[sig]);
            }
        }
        D::Call { func_ref, .. } | D::FuncAddr { func_ref, .. } => {
            let ext = &func.dfg.ext_funcs[func_ref];
            h.signature(&func.dfg.signatures[ext.signature]);
            h.u64(u64::from(ext.colocated));
            return Some((
                tagged(b'F', symbol_name(module, func, &ext.name).as_bytes()),
                8,
            ));
        }
        D::TryCall { func_ref, .. } => {
            // Not parameterized: a `try_call_indirect` would change the
            // exception-table shape; hash the callee into the structure.
            let ext = &func.dfg.ext_funcs[func_ref];
            h.signature(&func.dfg.signatures[ext.signature]);
            h.str(&symbol_name(module, func, &ext.name));
        }
        D::StackAddr {
            stack_slot, offset, ..
        } => {
            h.u64(u64::from(stack_slot.as_u32()));
            h.u64(i64::from(offset) as u64);
        }
        D::DynamicStackAddr {
            dynamic_stack_slot, ..
        } => h.u64(u64::from(dynamic_stack_slot.as_u32())),
        D::ExceptionHandlerAddress { imm, .. } => h.u64(imm.bits() as u64),
        D::Shuffle { imm, .. } => {
            let bytes = func
                .dfg
                .immediates
                .get(imm)
                .map_or(&[][..], |c| c.as_slice());
            h.bytes(bytes);
        }
        D::UnaryConst {
            constant_handle, ..
        } => h.bytes(func.dfg.constants.get(constant_handle).as_slice()),
        D::UnaryIeee16 { imm, .. } => h.u64(u64::from(imm.bits())),
        D::UnaryIeee32 { imm, .. } => h.u64(u64::from(imm.bits())),
        D::UnaryIeee64 { imm, .. } => h.u64(imm.bits()),
        D::UnaryImm { opcode, imm } => {
            if opcode == Opcode::Iconst {
                let ty = func.dfg.value_type(func.dfg.first_result(inst));
                let value = imm.bits();
                let mut bytes = ty.to_string().into_bytes();
                bytes.extend_from_slice(&value.to_le_bytes());
                return Some((tagged(b'I', &bytes), materialisation_cost(ty, value)));
            }
            h.u64(imm.bits() as u64);
        }
        D::UnaryGlobalValue { global_value, .. } => match symbol_of_global(func, global_value) {
            Some((name, offset, colocated)) => {
                h.u64(offset as u64);
                h.u64(u64::from(colocated));
                return Some((global_hash(module, func, name), 8));
            }
            None => hash_global(module, func, global_value, h),
        },
        D::Binary { .. }
        | D::BranchTable { .. }
        | D::Brif { .. }
        | D::Jump { .. }
        | D::MultiAry { .. }
        | D::NullAry { .. }
        | D::Ternary { .. }
        | D::Unary { .. } => {}
    }
    None
}

/// `(name, offset, colocated)` of a non-TLS symbol global value.
fn symbol_of_global(func: &Function, gv: ir::GlobalValue) -> Option<(&ExternalName, i64, bool)> {
    match &func.global_values[gv] {
        GlobalValueData::Symbol {
            name,
            offset,
            colocated,
            tls: false,
        } => Some((name, offset.bits(), *colocated)),
        _ => None,
    }
}

/// Hashes a global value that is not a plain symbol into the structure.
fn hash_global(module: &ClifModule, func: &Function, gv: ir::GlobalValue, h: &mut Stream) {
    match &func.global_values[gv] {
        GlobalValueData::Symbol {
            name, offset, tls, ..
        } => {
            h.str(&symbol_name(module, func, name));
            h.u64(offset.bits() as u64);
            h.u64(u64::from(*tls));
        }
        GlobalValueData::Load {
            base,
            offset,
            global_type,
            flags,
        } => {
            h.str("load");
            h.u64(i64::from(*offset) as u64);
            h.display(global_type);
            hash_mem_flags(func, *flags, h);
            hash_global(module, func, *base, h);
        }
        GlobalValueData::IAddImm {
            base,
            offset,
            global_type,
        } => {
            h.str("iadd_imm");
            h.u64(offset.bits() as u64);
            h.display(global_type);
            hash_global(module, func, *base, h);
        }
        other => h.display(format_args!("{other:?}")),
    }
}

/// The operand hash of a data symbol: read-only data defined here without
/// relocations is hashed by content (so equal string literals under
/// different module-local names agree), everything else by name.
fn global_hash(module: &ClifModule, func: &Function, name: &ExternalName) -> u64 {
    if let Some(s) = ClifModule::symbol_of(func, name) {
        if let Some(sym) = module.symbols.get(s as usize) {
            if sym.kind == (SymbolKind::Data { writable: false }) {
                if let Some(d) = module.data_def(s) {
                    if d.relocs.is_empty() {
                        let mut bytes = d.align.to_le_bytes().to_vec();
                        bytes.extend_from_slice(&d.bytes);
                        return tagged(b'D', &bytes);
                    }
                }
            }
        }
    }
    tagged(b'S', symbol_name(module, func, name).as_bytes())
}

/// The symbol name an external name refers to (its display form if it is
/// not a module symbol).
pub fn symbol_name(module: &ClifModule, func: &Function, name: &ExternalName) -> String {
    ClifModule::symbol_of(func, name)
        .and_then(|s| module.symbols.get(s as usize))
        .map_or_else(
            || name.display(Some(&func.params)).to_string(),
            |s| s.name.clone(),
        )
}

fn tagged(tag: u8, bytes: &[u8]) -> u64 {
    let mut v = Vec::with_capacity(bytes.len() + 1);
    v.push(tag);
    v.extend_from_slice(bytes);
    xxh3_64(&v)
}

/// aarch64 bytes to put `value` of type `ty` in a register: one `movz`/`movn`
/// plus one `movk` per further non-trivial 16-bit chunk (logical immediates
/// are ignored: the estimate errs high).
pub fn materialisation_cost(ty: Type, value: i64) -> u32 {
    let bits = ty.bits().clamp(8, 64);
    let v = if bits == 64 {
        value as u64
    } else {
        (value as u64) & ((1u64 << bits) - 1)
    };
    let chunks = bits.div_ceil(16);
    let count = |x: u64, trivial: u64| {
        (0..chunks)
            .filter(|c| (x >> (16 * c)) & 0xffff != trivial)
            .count()
            .max(1)
    };
    let mask = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let plain = count(v, 0);
    let inverted = count(!v & mask, 0);
    4 * plain.min(inverted) as u32
}

/// `iconst`s every use of which is an operand where a register costs no
/// more than the constant: arithmetic (`iadd isub imul band bor bxor`),
/// comparisons, the stored value of a store, select arms, call and return
/// arguments. Shift amounts, divisors and addresses are excluded: there an
/// immediate is cheaper, or lets Cranelift strength-reduce.
fn parameterizable_iconsts(func: &Function) -> hashbrown::HashSet<Inst> {
    let mut ok: HashMap<Value, bool> = HashMap::new();
    let mut def_inst: HashMap<Value, Inst> = HashMap::new();
    for block in func.layout.blocks() {
        for inst in func.layout.block_insts(block) {
            if func.dfg.insts[inst].opcode() == Opcode::Iconst {
                let r = func.dfg.first_result(inst);
                if func.dfg.value_type(r).bits() <= 64 {
                    ok.insert(r, true);
                    def_inst.insert(r, inst);
                }
            }
        }
    }
    for block in func.layout.blocks() {
        for inst in func.layout.block_insts(block) {
            let data = &func.dfg.insts[inst];
            let args = func.dfg.inst_args(inst);
            for (k, &a) in args.iter().enumerate() {
                let a = func.dfg.resolve_aliases(a);
                if let Some(flag) = ok.get_mut(&a) {
                    *flag &= iconst_is_parameterizable(data.opcode(), k);
                }
            }
            for call in data.branch_destination(&func.dfg.jump_tables, &func.dfg.exception_tables) {
                for arg in call.args(&func.dfg.value_lists) {
                    if let BlockArg::Value(v) = arg {
                        if let Some(flag) = ok.get_mut(&func.dfg.resolve_aliases(v)) {
                            *flag = false;
                        }
                    }
                }
            }
        }
    }
    ok.into_iter()
        .filter(|&(_, good)| good)
        .map(|(v, _)| def_inst[&v])
        .collect()
}

/// Whether argument `k` of an `opcode` instruction may be a run-time value
/// instead of an `iconst` at no cost in code size.
pub fn iconst_is_parameterizable(opcode: Opcode, k: usize) -> bool {
    match opcode {
        Opcode::Iadd
        | Opcode::Isub
        | Opcode::Imul
        | Opcode::Band
        | Opcode::Bor
        | Opcode::Bxor
        | Opcode::Icmp
        | Opcode::Call
        | Opcode::ReturnCall
        | Opcode::Return => true,
        // `select c, x, y`: the arms, not the condition.
        Opcode::Select => k > 0,
        // `store x, p`: the value, not the address.
        Opcode::Store => k == 0,
        _ => false,
    }
}

/// Canonical numbers of values and blocks: positions in a layout walk
/// (also the profile hash's, `crate::profile::hash`, which leaves the
/// values of blocks it does not hash out).
pub(crate) struct Numbers {
    values: HashMap<Value, u64>,
    blocks: HashMap<ir::Block, u64>,
}

impl Numbers {
    /// Every block numbered in layout order; the values of the blocks
    /// `numbered` accepts, in layout order.
    pub(crate) fn of(func: &Function, numbered: impl Fn(ir::Block) -> bool) -> Numbers {
        let mut values = HashMap::new();
        let mut blocks = HashMap::new();
        for block in func.layout.blocks() {
            blocks.insert(block, blocks.len() as u64);
            if !numbered(block) {
                continue;
            }
            for &p in func.dfg.block_params(block) {
                values.insert(p, values.len() as u64);
            }
            for inst in func.layout.block_insts(block) {
                for &r in func.dfg.inst_results(inst) {
                    values.insert(r, values.len() as u64);
                }
            }
        }
        Numbers { values, blocks }
    }

    pub(crate) fn value(&self, func: &Function, v: Value) -> u64 {
        let v = func.dfg.resolve_aliases(v);
        // A value defined nowhere in the layout (malformed input) still
        // hashes deterministically, apart from every defined one.
        self.values.get(&v).copied().unwrap_or(u64::MAX)
    }

    pub(crate) fn block(&self, b: ir::Block) -> u64 {
        self.blocks.get(&b).copied().unwrap_or(u64::MAX)
    }
}

/// Feeds what `inst` is apart from its immediates: the opcode name, the
/// controlling and result types, the value operands as canonical numbers,
/// and the branch targets as block positions with their arguments. The
/// part every structural hash of a function shares: the merge hash
/// ([`shape`]), the profile hash (`crate::profile::hash`) and the inliner's
/// sibling key (`crate::inline`).
pub(crate) fn feed_structure(h: &mut Stream, numbers: &Numbers, func: &Function, inst: Inst) {
    let data = &func.dfg.insts[inst];
    h.opcode(data.opcode());
    h.ty(func.dfg.ctrl_typevar(inst));
    for &r in func.dfg.inst_results(inst) {
        h.ty(func.dfg.value_type(r));
    }
    for &a in func.dfg.inst_args(inst) {
        h.u64(numbers.value(func, a));
    }
    for call in data.branch_destination(&func.dfg.jump_tables, &func.dfg.exception_tables) {
        h.u64(numbers.block(call.block(&func.dfg.value_lists)));
        for arg in call.args(&func.dfg.value_lists) {
            match arg {
                BlockArg::Value(v) => h.u64(numbers.value(func, v)),
                BlockArg::TryCallRet(n) => h.u64(0x1_0000_0000 | u64::from(n)),
                BlockArg::TryCallExn(n) => h.u64(0x2_0000_0000 | u64::from(n)),
            }
        }
    }
}

/// What [`Stream`] remembers of the text of opcodes, types and signatures:
/// formatting them took most of the structural hash's time (a signature is
/// written at every call). The text is that of their `Display`, so the
/// stream's bytes are the same as if formatted each time.
#[derive(Default)]
struct Texts {
    words: HashMap<Text, Box<[u8]>>,
    signatures: HashMap<Signature, Box<[u8]>>,
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Text {
    Opcode(Opcode),
    Type(Type),
}

thread_local! {
    static TEXTS: std::cell::RefCell<Texts> = std::cell::RefCell::new(Texts::default());
}

/// A length-delimited byte stream hashed with xxh3-64 at the end (also
/// the profile hash's, `crate::profile::hash`).
#[derive(Default)]
pub(crate) struct Stream {
    buf: Vec<u8>,
}

impl Stream {
    pub(crate) fn u64(&mut self, v: u64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    pub(crate) fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }
    pub(crate) fn bytes(&mut self, b: &[u8]) {
        self.u64(b.len() as u64);
        self.buf.extend_from_slice(b);
    }
    /// A value's text, written in place (no allocation), then a byte that
    /// never occurs in UTF-8 as a terminator.
    pub(crate) fn display(&mut self, v: impl std::fmt::Display) {
        use std::io::Write as _;
        let _ = write!(self.buf, "{v}");
        self.buf.push(0xff);
    }
    pub(crate) fn ty(&mut self, ty: Type) {
        if ty == ir::types::INVALID {
            // No controlling type (its `Display` would panic).
            self.buf.push(0xfe);
        } else {
            let key = Text::Type(ty);
            self.remembered(
                ty,
                |t| t.words.get(&key),
                |t, text| t.words.insert(key, text),
            );
        }
    }
    /// An opcode's name, as [`Stream::display`] writes it.
    pub(crate) fn opcode(&mut self, opcode: Opcode) {
        let key = Text::Opcode(opcode);
        self.remembered(
            opcode,
            |t| t.words.get(&key),
            |t, text| t.words.insert(key, text),
        );
    }
    /// A signature's text, as [`Stream::display`] writes it.
    pub(crate) fn signature(&mut self, signature: &Signature) {
        self.remembered(
            signature,
            |t| t.signatures.get(signature),
            |t, text| t.signatures.insert(signature.clone(), text),
        );
    }
    /// `v`'s text, as [`Stream::display`] writes it, formatted once per
    /// thread: `get` finds it in [`TEXTS`], `put` records it there.
    fn remembered<D: std::fmt::Display, R>(
        &mut self,
        v: D,
        get: impl Fn(&Texts) -> Option<&Box<[u8]>>,
        put: impl FnOnce(&mut Texts, Box<[u8]>) -> R,
    ) {
        let known = TEXTS.with_borrow(|texts| {
            self.buf.extend_from_slice(get(texts)?);
            Some(())
        });
        match known {
            Some(()) => self.buf.push(0xff),
            None => {
                let text = self.displayed(v);
                TEXTS.with_borrow_mut(|texts| put(texts, text));
            }
        }
    }
    /// Writes `v` as [`Stream::display`] does and returns its text.
    fn displayed(&mut self, v: impl std::fmt::Display) -> Box<[u8]> {
        let start = self.buf.len();
        self.display(v);
        self.buf[start..self.buf.len() - 1].into()
    }
    pub(crate) fn finish(&self) -> u64 {
        xxh3_64(&self.buf)
    }
}

/// The type of the value a location's operand stands for.
pub fn operand_type(func: &Function, inst: Inst, pointer: Type) -> Type {
    match func.dfg.insts[inst] {
        InstructionData::Call { .. } => pointer,
        _ => func.dfg.value_type(func.dfg.first_result(inst)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cranelift_codegen::ir::types;

    #[test]
    fn materialisation() {
        assert_eq!(materialisation_cost(types::I64, 0), 4);
        assert_eq!(materialisation_cost(types::I64, 42), 4);
        assert_eq!(materialisation_cost(types::I64, -1), 4);
        assert_eq!(materialisation_cost(types::I64, 0x1_0001), 8);
        assert_eq!(materialisation_cost(types::I64, 0x5851_f42d_4c95_7f2d), 16);
        assert_eq!(materialisation_cost(types::I32, -2), 4);
    }
}
