//! Merge: one function becomes a `.Tgm` body and a thunk ([GFM] §3.4,
//! `createMergedFunc` and `createThunk` of Algorithm 3).
//!
//! Given a function `f` whose shape matches a [`Group`], the body
//! `f.Tgm` is `f` with one extra parameter per group parameter (appended to
//! the signature and the entry block, in the group's order) and every
//! location of parameter `k` replaced by it: an `iconst`, `symbol_value` or
//! `func_addr` becomes an alias of the parameter; a direct `call` or
//! `return_call` becomes `call_indirect` / `return_call_indirect` through it.
//! `f` itself becomes a thunk that materialises its own constants, read from
//! the first location of each parameter, and `return_call`s the body (tail
//! convention) or calls it and returns its results (C ABI, or targets where
//! [`MergeOptions::tail_calls`] is off).
//!
//! Soundness does not depend on the summary: `f.Tgm(args, consts(f))`
//! computes exactly `f(args)` because the constants are `f`'s own, whatever
//! group it was matched with. A stale or colliding summary can only make the
//! bodies of a group differ, which costs the thunks' size but nothing else.
//! The rewrite refuses (and changes nothing) when a location is not a
//! parameterizable operand of `f` or the operands of one parameter disagree
//! in type.

use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::ir::{
    AbiParam, ExtFuncData, ExternalName, Function, InstBuilder, InstructionData, Opcode, Type,
    Value,
};

use crate::clif_module::{ClifModule, FunctionDef, Linkage, SymbolKind};

use super::combine::Group;
use super::hash::{self, Operand, Shape};
use super::MergeOptions;

/// The suffix of merged bodies.
pub const BODY_SUFFIX: &str = ".Tgm";

/// Rewrites `module.functions[index]` into a thunk and appends its body.
/// Returns the body's name, or why nothing was done.
pub fn merge_function(
    module: &mut ClifModule,
    index: usize,
    shape: &Shape,
    group: &Group,
    opts: &MergeOptions,
) -> Result<String, String> {
    let pointer = opts.pointer_type;
    let def = &module.functions[index];
    let func = &def.func;
    let name = module.symbols[def.symbol as usize].name.clone();
    let body_name = format!("{name}{BODY_SUFFIX}");
    if module.symbol_index(&body_name).is_some() {
        return Err(format!("`{body_name}` already exists"));
    }
    let mut operands = Vec::with_capacity(group.params.len());
    for locations in &group.params {
        let mut ty = None;
        for &(i, _) in locations {
            let inst = *shape
                .insts
                .get(i as usize)
                .ok_or_else(|| format!("location {i} is past the end"))?;
            if hash::operand(func, inst).is_none() {
                return Err(format!("instruction {i} has no parameterizable operand"));
            }
            let t = hash::operand_type(func, inst, pointer);
            if ty.is_some_and(|u| u != t) {
                return Err(format!("parameter operands disagree in type at {i}"));
            }
            ty = Some(t);
        }
        let first = shape.insts[locations[0].0 as usize];
        operands.push((
            hash::operand(func, first).expect("checked"),
            ty.expect("a location"),
        ));
    }

    let mut body = func.clone();
    let entry = body
        .layout
        .entry_block()
        .ok_or_else(|| "no entry block".to_string())?;
    for (locations, &(_, ty)) in group.params.iter().zip(&operands) {
        body.signature.params.push(AbiParam::new(ty));
        let param = body.dfg.append_block_param(entry, ty);
        for &(i, _) in locations {
            replace_with_param(&mut body, shape.insts[i as usize], param);
        }
    }
    let body_symbol = module.declare(
        &body_name,
        SymbolKind::Function(body.signature.clone()),
        Linkage::Local,
    );
    body.name = ClifModule::func_name(body_symbol);

    let tail_call =
        opts.tail_calls && body.signature.call_conv == cranelift_codegen::isa::CallConv::Tail;
    let thunk = build_thunk(
        &module.functions[index].func,
        &operands,
        body_symbol,
        &body.signature,
        tail_call,
    );
    module.functions[index].func = thunk;
    module.functions.push(FunctionDef {
        symbol: body_symbol,
        func: body,
    });
    Ok(body_name)
}

/// Makes the location at `inst` read `param` instead of its constant.
fn replace_with_param(body: &mut Function, inst: cranelift_codegen::ir::Inst, param: Value) {
    match body.dfg.insts[inst] {
        InstructionData::Call {
            opcode, func_ref, ..
        } => {
            let sig = body.dfg.ext_funcs[func_ref].signature;
            let args = body.dfg.inst_args(inst).to_vec();
            if opcode == Opcode::ReturnCall {
                body.replace(inst).return_call_indirect(sig, param, &args);
            } else {
                body.replace(inst).call_indirect(sig, param, &args);
            }
        }
        _ => {
            let result = body.dfg.first_result(inst);
            body.dfg.detach_inst_results(inst);
            body.dfg.change_to_alias(result, param);
            body.layout.remove_inst(inst);
        }
    }
}

/// `f(args) = f.Tgm(args, consts)`: a tail call for the tail convention,
/// call-and-return otherwise.
fn build_thunk(
    original: &Function,
    operands: &[(Operand, Type)],
    body_symbol: u32,
    body_signature: &cranelift_codegen::ir::Signature,
    tail_call: bool,
) -> Function {
    let mut thunk =
        Function::with_name_signature(original.name.clone(), original.signature.clone());
    let block = thunk.dfg.make_block();
    thunk.layout.append_block(block);
    let param_types: Vec<Type> = original
        .signature
        .params
        .iter()
        .map(|p| p.value_type)
        .collect();
    let mut args: Vec<Value> = param_types
        .into_iter()
        .map(|ty| thunk.dfg.append_block_param(block, ty))
        .collect();
    let mut pos = FuncCursor::new(&mut thunk).at_bottom(block);
    for &(operand, ty) in operands {
        let value = match operand {
            Operand::Imm(ty, imm) => pos.ins().iconst(ty, imm),
            Operand::Global(gv) => {
                let mut data = original.global_values[gv].clone();
                if let cranelift_codegen::ir::GlobalValueData::Symbol { name, .. } = &mut data {
                    *name = import_name(original, pos.func, name);
                }
                let new_gv = pos.func.create_global_value(data);
                pos.ins().symbol_value(ty, new_gv)
            }
            Operand::Callee(func_ref) => {
                let ext = &original.dfg.ext_funcs[func_ref];
                let signature = pos
                    .func
                    .import_signature(original.dfg.signatures[ext.signature].clone());
                let name = import_name(original, pos.func, &ext.name);
                let callee = pos.func.import_function(ExtFuncData {
                    name,
                    signature,
                    colocated: ext.colocated,
                    patchable: false,
                });
                pos.ins().func_addr(ty, callee)
            }
        };
        args.push(value);
    }
    let signature = pos.func.import_signature(body_signature.clone());
    let name = pos
        .func
        .declare_imported_user_function(ClifModule::external_name(body_symbol));
    let body = pos.func.import_function(ExtFuncData {
        name: ExternalName::user(name),
        signature,
        colocated: true,
        patchable: false,
    });
    if tail_call {
        pos.ins().return_call(body, &args);
    } else {
        let call = pos.ins().call(body, &args);
        let results = pos.func.dfg.inst_results(call).to_vec();
        pos.ins().return_(&results);
    }
    thunk
}

/// `name` of `from`, re-declared in `to`.
fn import_name(from: &Function, to: &mut Function, name: &ExternalName) -> ExternalName {
    match name {
        ExternalName::User(r) => {
            let user = from.params.user_named_funcs()[*r].clone();
            ExternalName::user(to.declare_imported_user_function(user))
        }
        other => other.clone(),
    }
}
