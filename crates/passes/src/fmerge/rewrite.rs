//! Rewriting the module around a merged function `M` ([ROCHA-PHD], "Focusing
//! on Profitable Functions"; [HYFM] §3.3; full references in docs/DESIGN.md).
//!
//! Each original `fk` either
//! - becomes a *thunk* `fk(args) = M(args placed by Pk, k)`: a `return_call`
//!   when `fk` uses the tail convention, its returns are `M`'s and tail
//!   calls are allowed; otherwise a call, a narrowing of widened results,
//!   and a return (as `merge`'s C-ABI thunks do); or
//! - is *deleted*: when it is local to the module, every reference to it is
//!   a direct `call` or `return_call` ([`direct_call_sites`]: not
//!   address-taken, not in data), and its returns are `M`'s, each call site
//!   calls `M` with the identifier instead ([`redirect_calls`]) and its
//!   symbol is removed at the end of the pass ([`remove_symbols`]).
//!
//! Exported and address-taken functions always keep their symbol, as
//! thunks. A parameter position of `M` that `fk` does not use gets `fk`'s
//! own argument at that position if the type agrees (already in that
//! register: no instruction), else a zero.

use std::collections::BTreeSet;

use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::ir::{
    types, ExtFuncData, ExternalName, FuncRef, Function, GlobalValueData, Inst, InstBuilder,
    InstructionData, Opcode, Signature, Type, Value,
};

use crate::clif_module::{ClifModule, Linkage, SYMBOL_NAMESPACE};

use super::codegen::FID_TYPE;

/// How a side is kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keep {
    Thunk,
    Deleted,
}

/// The call to `M` for side `side` in `func` at the cursor: `args` are the
/// side's own arguments, placed by `positions`; unused positions get the
/// argument at the same index if its type agrees, else a zero.
fn merged_args(
    pos: &mut FuncCursor,
    args: &[Value],
    positions: &[usize],
    merged: &Signature,
    side: usize,
) -> Vec<Value> {
    let count = merged.params.len() - 1;
    let mut out: Vec<Option<Value>> = vec![None; count];
    for (i, &p) in positions.iter().enumerate() {
        out[p] = Some(args[i]);
    }
    let mut values = Vec::with_capacity(count + 1);
    for (p, slot) in out.into_iter().enumerate() {
        let ty = merged.params[p].value_type;
        let value = slot
            .or_else(|| {
                args.get(p)
                    .copied()
                    .filter(|&a| pos.func.dfg.value_type(a) == ty)
            })
            .unwrap_or_else(|| zero(pos, ty));
        values.push(value);
    }
    values.push(pos.ins().iconst(FID_TYPE, side as i64));
    values
}

fn zero(pos: &mut FuncCursor, ty: Type) -> Value {
    match ty {
        types::F32 => pos.ins().f32const(0.0),
        types::F64 => pos.ins().f64const(0.0),
        types::I128 => {
            let z = pos.ins().iconst(types::I64, 0);
            pos.ins().uextend(types::I128, z)
        }
        _ if ty.is_int() && !ty.is_vector() => pos.ins().iconst(ty, 0),
        _ => {
            let c = pos
                .func
                .dfg
                .constants
                .insert(vec![0u8; ty.bytes() as usize].into());
            pos.ins().vconst(ty, c)
        }
    }
}

/// Imports `M` (symbol `merged_symbol`, signature `merged`) into `func`.
fn import_merged(func: &mut Function, merged_symbol: u32, merged: &Signature) -> FuncRef {
    let signature = func.import_signature(merged.clone());
    let name = func.declare_imported_user_function(ClifModule::external_name(merged_symbol));
    func.import_function(ExtFuncData {
        name: ExternalName::user(name),
        signature,
        colocated: true,
        patchable: false,
    })
}

/// The thunk replacing `original` (side `side` of the merge).
pub fn build_thunk(
    original: &Function,
    merged: &Signature,
    merged_symbol: u32,
    positions: &[usize],
    side: usize,
    tail_calls: bool,
) -> Function {
    let mut thunk =
        Function::with_name_signature(original.name.clone(), original.signature.clone());
    let block = thunk.dfg.make_block();
    thunk.layout.append_block(block);
    let params: Vec<Value> = original
        .signature
        .params
        .iter()
        .map(|p| thunk.dfg.append_block_param(block, p.value_type))
        .collect();
    let callee = import_merged(&mut thunk, merged_symbol, merged);
    let mut pos = FuncCursor::new(&mut thunk).at_bottom(block);
    let args = merged_args(&mut pos, &params, positions, merged, side);
    let same_returns = original
        .signature
        .returns
        .iter()
        .map(|p| p.value_type)
        .eq(merged.returns.iter().map(|p| p.value_type));
    // `return_call` needs the `tail` convention on both sides (Cranelift's
    // `supports_tail_calls`); a C-convention thunk calls and returns, which
    // the machine pass `crate::sibcall` makes a jump.
    let tail =
        original.signature.call_conv == merged.call_conv && merged.call_conv.supports_tail_calls();
    if tail_calls && same_returns && tail {
        pos.ins().return_call(callee, &args);
        return thunk;
    }
    let call = pos.ins().call(callee, &args);
    let results = pos.func.dfg.inst_results(call).to_vec();
    let mut out = Vec::with_capacity(original.signature.returns.len());
    for (r, p) in results.iter().zip(&original.signature.returns) {
        let narrowed = if pos.func.dfg.value_type(*r) == p.value_type {
            *r
        } else {
            pos.ins().ireduce(p.value_type, *r)
        };
        out.push(narrowed);
    }
    pos.ins().return_(&out);
    thunk
}

/// Whether `func` names symbol `symbol` anywhere.
fn mentions(func: &Function, symbol: u32) -> bool {
    func.params
        .user_named_funcs()
        .values()
        .any(|u| u.namespace == SYMBOL_NAMESPACE && u.index == symbol)
}

fn names(func: &Function, name: &ExternalName, symbol: u32) -> bool {
    match name {
        ExternalName::User(r) => {
            let u = &func.params.user_named_funcs()[*r];
            u.namespace == SYMBOL_NAMESPACE && u.index == symbol
        }
        _ => false,
    }
}

/// The functions of `funcs` that name `symbol`, each with its direct call
/// sites of it, or `None` if anything refers to it otherwise: a
/// `func_addr`, a symbol global value, a `try_call`, a data relocation
/// (`in_data`: the symbols the module's data relocations target, see
/// [`data_targets`]).
pub fn direct_call_sites<'a>(
    in_data: &BTreeSet<u32>,
    symbol: u32,
    funcs: impl Iterator<Item = (usize, &'a Function)>,
) -> Option<Vec<(usize, Vec<Inst>)>> {
    if in_data.contains(&symbol) {
        return None;
    }
    let mut callers = Vec::new();
    for (index, func) in funcs {
        if !mentions(func, symbol) {
            continue;
        }
        let address_taken = func.global_values.values().any(
            |gv| matches!(gv, GlobalValueData::Symbol { name, .. } if names(func, name, symbol)),
        );
        if address_taken {
            return None;
        }
        let mut sites = Vec::new();
        for block in func.layout.blocks() {
            for inst in func.layout.block_insts(block) {
                match func.dfg.insts[inst] {
                    InstructionData::Call {
                        opcode: Opcode::Call | Opcode::ReturnCall,
                        func_ref,
                        ..
                    } if names(func, &func.dfg.ext_funcs[func_ref].name, symbol) => {
                        sites.push(inst)
                    }
                    InstructionData::Call { func_ref, .. }
                    | InstructionData::FuncAddr { func_ref, .. }
                    | InstructionData::TryCall { func_ref, .. }
                        if names(func, &func.dfg.ext_funcs[func_ref].name, symbol) =>
                    {
                        return None
                    }
                    _ => {}
                }
            }
        }
        callers.push((index, sites));
    }
    Some(callers)
}

/// The symbols some data relocation of `module` targets, or a relocation of
/// one of its raw functions (code no pass sees). Computed once per
/// pass (merging changes no data) rather than by a scan of every data
/// object per deletion considered: a module can hold a string literal per
/// function.
pub fn data_targets(module: &ClifModule) -> BTreeSet<u32> {
    module
        .data
        .iter()
        .flat_map(|d| d.relocs.iter().map(|r| r.target))
        .chain(module.raw_reloc_targets())
        .collect()
}

/// Whether side `fk` (symbol `symbol`, defined as `func`) may be deleted
/// given `M`'s signature: local, and its returns are `M`'s.
pub fn may_delete(module: &ClifModule, symbol: u32, func: &Function, merged: &Signature) -> bool {
    module.symbols[symbol as usize].linkage == Linkage::Local
        && func
            .signature
            .returns
            .iter()
            .map(|p| p.value_type)
            .eq(merged.returns.iter().map(|p| p.value_type))
}

/// `func` with every direct call of `symbol` (side `side`) at `sites`
/// calling `M`. The references to `symbol` themselves are renamed to `M`
/// (they name nothing else: see [`direct_call_sites`]), so no reference to
/// the deleted symbol is left behind.
pub fn redirect_calls(
    func: &Function,
    symbol: u32,
    sites: &[Inst],
    merged: &Signature,
    merged_symbol: u32,
    positions: &[usize],
    side: usize,
) -> Function {
    let mut func = func.clone();
    let signature = func.import_signature(merged.clone());
    let refs: Vec<_> = func
        .dfg
        .ext_funcs
        .iter()
        .filter(|(_, ext)| names(&func, &ext.name, symbol))
        .map(|(r, _)| r)
        .collect();
    for &r in &refs {
        func.dfg.ext_funcs[r].signature = signature;
        func.dfg.ext_funcs[r].colocated = true;
    }
    let user_refs: Vec<_> = func
        .params
        .user_named_funcs()
        .iter()
        .filter(|(_, u)| u.namespace == SYMBOL_NAMESPACE && u.index == symbol)
        .map(|(r, _)| r)
        .collect();
    for r in user_refs {
        func.params
            .reset_user_func_name(r, ClifModule::external_name(merged_symbol));
    }
    for &inst in sites {
        let InstructionData::Call {
            opcode, func_ref, ..
        } = func.dfg.insts[inst]
        else {
            unreachable!("a direct call site")
        };
        let args = func.dfg.inst_args(inst).to_vec();
        let mut pos = FuncCursor::new(&mut func).at_inst(inst);
        let new_args = merged_args(&mut pos, &args, positions, merged, side);
        if opcode == Opcode::ReturnCall {
            func.replace(inst).return_call(func_ref, &new_args);
        } else {
            func.replace(inst).call(func_ref, &new_args);
        }
    }
    func
}
