//! Copying instructions of either side into the merged function: value
//! operands and branch destinations are given, entity references (callees,
//! signatures, global values, stack slots, constants, memory flags with
//! their alias regions) are imported once per side and entity.

use cranelift_codegen::entity::SecondaryMap;
use cranelift_codegen::ir::instructions::InstructionMapper;
use cranelift_codegen::ir::{
    self, Block, BlockArg, BlockCall, ExtFuncData, ExternalName, FuncRef, Function, GlobalValue,
    GlobalValueData, SigRef, StackSlot, Value, ValueList,
};
use hashbrown::HashMap;

/// Entity references of either side copied into `M`, each once.
#[derive(Default)]
pub struct Entities {
    pub(super) func_refs: HashMap<(usize, FuncRef), FuncRef>,
    pub(super) sig_refs: HashMap<(usize, SigRef), SigRef>,
    pub(super) globals: HashMap<(usize, GlobalValue), GlobalValue>,
    pub(super) slots: [SecondaryMap<StackSlot, Option<StackSlot>>; 2],
}

/// Copies one instruction of `src` into `dst`: operands from `args`, branch
/// destinations from `dests`, entities through [`Entities`].
pub struct Mapper<'a> {
    pub(super) src: &'a Function,
    pub(super) side: usize,
    pub(super) dst: &'a mut Function,
    pub(super) entities: &'a mut Entities,
    pub(super) args: std::vec::IntoIter<Value>,
    pub(super) dests: std::vec::IntoIter<Block>,
}

impl Mapper<'_> {
    fn name(&mut self, name: &ExternalName) -> ExternalName {
        match name {
            ExternalName::User(r) => {
                let user = self.src.params.user_named_funcs()[*r].clone();
                ExternalName::user(self.dst.declare_imported_user_function(user))
            }
            other => other.clone(),
        }
    }
}

impl InstructionMapper for Mapper<'_> {
    fn map_value(&mut self, _: Value) -> Value {
        self.args.next().expect("a merged value per operand")
    }

    fn map_value_list(&mut self, list: ValueList) -> ValueList {
        let n = list.len(&self.src.dfg.value_lists);
        let values: Vec<Value> = (0..n)
            .map(|_| self.args.next().expect("a merged value per operand"))
            .collect();
        ValueList::from_slice(&values, &mut self.dst.dfg.value_lists)
    }

    fn map_global_value(&mut self, gv: GlobalValue) -> GlobalValue {
        if let Some(&g) = self.entities.globals.get(&(self.side, gv)) {
            return g;
        }
        let mut data = self.src.global_values[gv].clone();
        match &mut data {
            GlobalValueData::Symbol { name, .. } => *name = self.name(&name.clone()),
            GlobalValueData::Load { base, flags, .. } => {
                *base = self.map_global_value(*base);
                *flags = self.map_mem_flags(*flags);
            }
            GlobalValueData::IAddImm { base, .. } => *base = self.map_global_value(*base),
            // Ineligible functions (special parameters) never get here.
            _ => {}
        }
        let g = self.dst.create_global_value(data);
        self.entities.globals.insert((self.side, gv), g);
        g
    }

    fn map_jump_table(&mut self, _: ir::JumpTable) -> ir::JumpTable {
        unreachable!("functions with jump tables are not merged")
    }

    fn map_exception_table(&mut self, _: ir::ExceptionTable) -> ir::ExceptionTable {
        unreachable!("functions with exception tables are not merged")
    }

    fn map_block_call(&mut self, _: BlockCall) -> BlockCall {
        let block = self.dests.next().expect("a destination per branch target");
        BlockCall::new(
            block,
            std::iter::empty::<BlockArg>(),
            &mut self.dst.dfg.value_lists,
        )
    }

    fn map_block(&mut self, _: Block) -> Block {
        unreachable!("functions with exception handler addresses are not merged")
    }

    fn map_func_ref(&mut self, func_ref: FuncRef) -> FuncRef {
        if let Some(&f) = self.entities.func_refs.get(&(self.side, func_ref)) {
            return f;
        }
        let ext = self.src.dfg.ext_funcs[func_ref].clone();
        let signature = self.map_sig_ref(ext.signature);
        let name = self.name(&ext.name);
        let data = ExtFuncData {
            name,
            signature,
            colocated: ext.colocated,
            patchable: ext.patchable,
        };
        let existing = self.dst.dfg.ext_funcs.iter().find(|(_, e)| {
            e.name == data.name
                && e.signature == data.signature
                && e.colocated == data.colocated
                && e.patchable == data.patchable
        });
        let f = match existing {
            Some((r, _)) => r,
            None => self.dst.import_function(data),
        };
        self.entities.func_refs.insert((self.side, func_ref), f);
        f
    }

    fn map_sig_ref(&mut self, sig_ref: SigRef) -> SigRef {
        if let Some(&s) = self.entities.sig_refs.get(&(self.side, sig_ref)) {
            return s;
        }
        let signature = &self.src.dfg.signatures[sig_ref];
        let existing = self
            .dst
            .dfg
            .signatures
            .iter()
            .find(|(_, s)| *s == signature)
            .map(|(r, _)| r);
        let s = existing.unwrap_or_else(|| self.dst.import_signature(signature.clone()));
        self.entities.sig_refs.insert((self.side, sig_ref), s);
        s
    }

    fn map_stack_slot(&mut self, slot: StackSlot) -> StackSlot {
        self.entities.slots[self.side][slot].expect("every stack slot is copied")
    }

    fn map_dynamic_stack_slot(&mut self, _: ir::DynamicStackSlot) -> ir::DynamicStackSlot {
        unreachable!("functions with dynamic stack slots are not merged")
    }

    fn map_constant(&mut self, constant: ir::Constant) -> ir::Constant {
        let data = self.src.dfg.constants.get(constant).clone();
        self.dst.dfg.constants.insert(data)
    }

    fn map_immediate(&mut self, immediate: ir::Immediate) -> ir::Immediate {
        let data = self
            .src
            .dfg
            .immediates
            .get(immediate)
            .cloned()
            .unwrap_or_default();
        self.dst.dfg.immediates.push(data)
    }

    fn map_mem_flags(&mut self, flags: ir::MemFlags) -> ir::MemFlags {
        let mut data = self.src.dfg.mem_flags[flags];
        if let Some(region) = data.alias_region() {
            let region = self
                .dst
                .dfg
                .alias_regions
                .insert(self.src.dfg.alias_regions[region].clone());
            data.set_alias_region(Some(region));
        }
        self.dst
            .dfg
            .mem_flags
            .insert(data)
            .expect("no more memory-flag sets than the two functions have together")
    }
}
