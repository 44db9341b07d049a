//! The profile hash: a function's identity in a profile.
//!
//! A profile counts the blocks of functions as one producer lowered them;
//! a later build reads the counts back for the functions it compiles. The
//! hash says whether a function is still the one that was counted: equal
//! hashes mean the same blocks in the same layout order doing the same
//! things, so count `i` belongs to the `i`-th block.
//!
//! The function is walked in layout order and fed to one xxh3-64 stream, as
//! the merge hash does (`crate::merge::hash`), but with nothing left out for
//! parameterization: the signature; per block its position and parameter
//! types; per instruction the opcode, the controlling and result types, the
//! value operands as canonical numbers (block parameters and results
//! numbered in layout order, aliases resolved), branch targets as block
//! positions with their arguments, and every immediate — constants, memory
//! flags by content, condition and trap codes, callees and global values by
//! symbol *name* with their signatures, stack slots by their size and
//! alignment in the order the code first uses them. Entity numbers (`v7`,
//! `block3`, `fn2`, `ss1`) never enter the stream, so renumbering a function
//! does not change its hash, and neither do pointers or map orders: the hash
//! is the same on every machine, in every run, and across rebuilds of an
//! unchanged source.
//!
//! # Trap blocks
//!
//! A block whose last instruction is `trap` enters the stream as "a trap
//! block" and nothing else: its parameters and instructions are skipped.
//! Such a block runs at most once per run, and producers lower the same
//! check differently for different executors: Pare's JIT lowering calls
//! `pare_trap(kind)` before the `trap`, its aarch64 lowering leaves the
//! `trap` alone for the shared trap paths. Skipping the contents makes the
//! JIT's profile apply to the aarch64 build. Nothing a trap block defines is
//! used elsewhere (it has no successors), so the canonical numbers of the
//! other blocks do not see it either.
//!
//! # What is deliberately not hashed
//!
//! - Block coldness (`set_cold_block`): a layout hint, not code.
//! - The `colocated` flag of callees and symbols: it says how far the
//!   target is (the JIT and an executable differ), not what the code does.
//! - The function's own name: the profile keys by name and hash together.

use cranelift_codegen::ir::{
    self, ExternalName, Function, GlobalValueData, Inst, InstructionData, Opcode,
};
use hashbrown::HashMap;

use crate::clif_module::ClifModule;
use crate::merge::hash::{feed_structure, Numbers, Stream};

/// Whether `block` ends in `trap` (see the module doc).
pub fn is_trap_block(func: &Function, block: ir::Block) -> bool {
    func.layout
        .last_inst(block)
        .is_some_and(|inst| func.dfg.insts[inst].opcode() == Opcode::Trap)
}

/// The profile hash of `func`, a function of `module` (whose symbol table
/// names its callees and globals).
pub fn profile_hash(module: &ClifModule, func: &Function) -> u64 {
    let mut walk = Walk {
        module,
        func,
        // Trap blocks' values are left out: their contents differ by
        // lowering and are not hashed.
        numbers: Numbers::of(func, |b| !is_trap_block(func, b)),
        slots: HashMap::new(),
        slot_order: Vec::new(),
        stream: Stream::default(),
    };
    walk.function();
    walk.stream.finish()
}

/// One walk over a function, feeding the stream.
struct Walk<'a> {
    module: &'a ClifModule,
    func: &'a Function,
    numbers: Numbers,
    /// Stack slots by first use: slot → its number.
    slots: HashMap<ir::StackSlot, u64>,
    slot_order: Vec<ir::StackSlot>,
    stream: Stream,
}

impl Walk<'_> {
    fn function(&mut self) {
        let func = self.func;
        self.stream.signature(&func.signature);
        for block in func.layout.blocks() {
            if is_trap_block(func, block) {
                self.stream.str("trap-block");
                continue;
            }
            self.stream.str("block");
            for &p in func.dfg.block_params(block) {
                self.stream.ty(func.dfg.value_type(p));
            }
            for inst in func.layout.block_insts(block) {
                self.instruction(inst);
            }
        }
        // The slots' shapes, in the order the code first used them.
        for slot in std::mem::take(&mut self.slot_order) {
            let data = &func.sized_stack_slots[slot];
            self.stream.u64(u64::from(data.size));
            self.stream.u64(u64::from(data.align_shift));
            self.stream.display(format_args!("{:?}", data.kind));
        }
    }

    fn instruction(&mut self, inst: Inst) {
        feed_structure(&mut self.stream, &self.numbers, self.func, inst);
        self.immediates(inst);
    }

    /// Feeds the immediates of `inst`: everything that is neither a value
    /// operand nor a branch target.
    fn immediates(&mut self, inst: Inst) {
        use InstructionData as D;
        let func = self.func;
        match func.dfg.insts[inst] {
            D::AtomicCas { flags, .. }
            | D::LoadNoOffset { flags, .. }
            | D::StoreNoOffset { flags, .. } => self.mem_flags(flags),
            D::AtomicRmw { flags, op, .. } => {
                self.mem_flags(flags);
                self.stream.display(op);
            }
            D::Load { flags, offset, .. } | D::Store { flags, offset, .. } => {
                self.mem_flags(flags);
                self.stream.u64(i64::from(offset) as u64);
            }
            D::BinaryImm8 { imm, .. } | D::TernaryImm8 { imm, .. } => {
                self.stream.u64(u64::from(imm))
            }
            D::CondTrap { code, .. } | D::Trap { code, .. } | D::IntAddTrap { code, .. } => {
                self.stream.display(code)
            }
            D::IntCompare { cond, .. } => self.stream.display(cond),
            D::FloatCompare { cond, .. } => self.stream.display(cond),
            D::CallIndirect { .. } | D::TryCallIndirect { .. } => {
                if let Some(sig) = func.dfg.call_signature(inst) {
                    self.stream.signature(&func.dfg.signatures[sig]);
                }
            }
            D::Call { func_ref, .. }
            | D::FuncAddr { func_ref, .. }
            | D::TryCall { func_ref, .. } => {
                let ext = &func.dfg.ext_funcs[func_ref];
                self.stream.signature(&func.dfg.signatures[ext.signature]);
                self.stream.str(&self.name(&ext.name));
            }
            D::StackAddr {
                stack_slot, offset, ..
            } => {
                let number = self.slot(stack_slot);
                self.stream.u64(number);
                self.stream.u64(i64::from(offset) as u64);
            }
            D::DynamicStackAddr {
                dynamic_stack_slot, ..
            } => {
                let data = &func.dynamic_stack_slots[dynamic_stack_slot];
                self.stream.display(format_args!("{:?}", data.kind));
                let ty = func.dfg.dynamic_types.get(data.dyn_ty);
                self.stream
                    .display(format_args!("{:?}", ty.map(|t| t.base_vector_ty)));
            }
            D::ExceptionHandlerAddress { imm, .. } => self.stream.u64(imm.bits() as u64),
            D::Shuffle { imm, .. } => {
                let bytes = func
                    .dfg
                    .immediates
                    .get(imm)
                    .map_or(&[][..], |c| c.as_slice());
                self.stream.bytes(bytes);
            }
            D::UnaryConst {
                constant_handle, ..
            } => self
                .stream
                .bytes(func.dfg.constants.get(constant_handle).as_slice()),
            D::UnaryIeee16 { imm, .. } => self.stream.u64(u64::from(imm.bits())),
            D::UnaryIeee32 { imm, .. } => self.stream.u64(u64::from(imm.bits())),
            D::UnaryIeee64 { imm, .. } => self.stream.u64(imm.bits()),
            D::UnaryImm { imm, .. } => self.stream.u64(imm.bits() as u64),
            D::UnaryGlobalValue { global_value, .. } => self.global(global_value),
            D::Binary { .. }
            | D::BranchTable { .. }
            | D::Brif { .. }
            | D::Jump { .. }
            | D::MultiAry { .. }
            | D::NullAry { .. }
            | D::Ternary { .. }
            | D::Unary { .. } => {}
        }
    }

    /// The number of `slot` in first-use order.
    fn slot(&mut self, slot: ir::StackSlot) -> u64 {
        let next = self.slots.len() as u64;
        *self.slots.entry(slot).or_insert_with(|| {
            self.slot_order.push(slot);
            next
        })
    }

    /// Memory flags by what they say, not by their index in the function's
    /// flag set; the alias region by its program-wide `user_id`.
    fn mem_flags(&mut self, flags: ir::MemFlags) {
        let data = self.func.dfg.mem_flags[flags];
        self.stream.display(data.with_alias_region(None));
        if let Some(region) = data.alias_region() {
            self.stream
                .u64(u64::from(self.func.dfg.alias_regions[region].user_id));
        }
    }

    /// A global value by its structure, symbols by name.
    fn global(&mut self, gv: ir::GlobalValue) {
        match &self.func.global_values[gv] {
            GlobalValueData::Symbol {
                name, offset, tls, ..
            } => {
                self.stream.str("symbol");
                self.stream.str(&self.name(name));
                self.stream.u64(offset.bits() as u64);
                self.stream.u64(u64::from(*tls));
            }
            GlobalValueData::Load {
                base,
                offset,
                global_type,
                flags,
            } => {
                self.stream.str("load");
                self.stream.u64(i64::from(*offset) as u64);
                self.stream.display(global_type);
                self.mem_flags(*flags);
                self.global(*base);
            }
            GlobalValueData::IAddImm {
                base,
                offset,
                global_type,
            } => {
                self.stream.str("iadd_imm");
                self.stream.u64(offset.bits() as u64);
                self.stream.display(global_type);
                self.global(*base);
            }
            GlobalValueData::VMContext => self.stream.str("vmctx"),
            GlobalValueData::DynScaleTargetConst { vector_type } => {
                self.stream.str("dyn_scale");
                self.stream.display(vector_type);
            }
        }
    }

    /// The symbol an external name refers to, by name (its display form
    /// if it is not a module symbol).
    fn name(&self, name: &ExternalName) -> String {
        crate::merge::hash::symbol_name(self.module, self.func, name)
    }
}
