//! Alike calls: the calls in the members of a merge group that inlining may
//! expand without making the members differ.
//!
//! # Why
//!
//! The inliner leaves the functions merging will merge as they are
//! ([`super::planned`]): inlining a different callee into each member of a
//! group makes them differ, and each then costs its whole body again. But
//! generic code is where that rule costs speed: the instances of a generic
//! loop each call their own instance of a small helper, the merged body
//! calls it through a parameter (`blr`) on every iteration, and the callee
//! cannot be inlined there any more. When every member calls, at the same
//! instruction, a callee of the *same shape* — instances of one generic
//! function that differ only in constants or in the symbols they name —
//! inlining each member's own callee leaves the members alike up to
//! parameterizable operands: the group still merges, and its loops lose the
//! call. On bench/ at `-Oz`, `tokenizer` went from 1.28× to 1.09× `-O2`'s
//! run time and `hashmap` from 1.17× to 1.10×, and the bytes did not grow
//! (docs/DESIGN.md, "Hot code").
//!
//! # Definition
//!
//! For a group `G` whose members this module all defines, and the `p`-th
//! instruction in layout order (the same instruction of every member: their
//! stable hashes and instruction counts are equal), let the members' direct
//! calls there go to callees `g_m` defined in this module. The calls are
//! *alike* when every `g_m` has one shape key: [`hash::shape`] with every
//! callee, symbol and eligible constant as a location (the key is the hash,
//! the instruction count and the location positions — what [`super::run`]
//! groups by, with [`hash::LoopCalls::Parameterize`]). A pair
//! `(member, callee)` is alike when all of the member's calls of the callee
//! are. The inliner's hot-site rule then decides them as it decides any
//! call, and it decides alike for every member, since their callees have
//! the same instructions and their call sites the same loops.
//!
//! Groups with members in other modules are left out: their members decide
//! alike only if their callees are alike too, which this module cannot see
//! (two-round builds still stay consistent, since round 1 hashes the
//! functions after inlining).
//!
//! Cost: one shape hash per distinct callee at a member call site, one walk
//! over each member's instructions.

use std::collections::{BTreeMap, BTreeSet};

use cranelift_codegen::ir::{Function, InstructionData};
use hashbrown::HashMap;

use super::combine::Group;
use super::hash;
use crate::clif_module::ClifModule;

/// A callee's shape key: what grouping compares (hash, instruction count,
/// location positions).
type ShapeKey = (u64, usize, Vec<(u32, u32)>);

/// The alike `(caller, callee)` pairs, by name, over `groups`.
pub fn alike_calls<'g>(
    module: &ClifModule,
    groups: impl Iterator<Item = &'g Group>,
) -> BTreeSet<(String, String)> {
    let mut callees = Callees::new(module);
    let by_name: HashMap<&str, usize> = module
        .functions
        .iter()
        .enumerate()
        .map(|(i, def)| (module.symbols[def.symbol as usize].name.as_str(), i))
        .collect();
    // Per (caller index, callee symbol), whether every call seen is alike.
    let mut verdicts: BTreeMap<(usize, u32), bool> = BTreeMap::new();
    for group in groups {
        let members: Option<Vec<usize>> = group
            .members
            .iter()
            .map(|(m, name)| match *m == module.name {
                true => by_name.get(name.as_str()).copied(),
                false => None,
            })
            .collect();
        let Some(members) = members.filter(|m| m.len() >= 2) else {
            continue;
        };
        let calls: Vec<Vec<LocalCall>> = members
            .iter()
            .map(|&f| callees.local_calls(&module.functions[f].func))
            .collect();
        let positions = |c: &[LocalCall]| c.iter().map(|c| c.position).collect::<Vec<_>>();
        if calls.iter().any(|c| positions(c) != positions(&calls[0])) {
            // Not the same instructions after all (a hash collision).
            continue;
        }
        for site in 0..calls[0].len() {
            let first = callees.shape_key(calls[0][site].callee);
            let alike = first.is_some()
                && calls
                    .iter()
                    .all(|c| callees.shape_key(c[site].callee) == first);
            for (&f, c) in members.iter().zip(&calls) {
                *verdicts.entry((f, c[site].callee)).or_insert(true) &= alike;
            }
        }
    }
    verdicts
        .into_iter()
        .filter(|&(_, alike)| alike)
        .map(|((f, g), _)| {
            let caller = module.symbols[module.functions[f].symbol as usize]
                .name
                .clone();
            (caller, module.symbols[g as usize].name.clone())
        })
        .collect()
}

/// A direct call of a function the module defines.
#[derive(Clone, Copy, Debug)]
struct LocalCall {
    /// The call's position among the caller's instructions, in layout order.
    position: usize,
    callee: u32,
}

/// The module's functions by symbol, and their shape keys, computed once.
struct Callees<'m> {
    module: &'m ClifModule,
    by_symbol: HashMap<u32, usize>,
    keys: HashMap<u32, Option<ShapeKey>>,
}

impl<'m> Callees<'m> {
    fn new(module: &'m ClifModule) -> Callees<'m> {
        let by_symbol = module
            .functions
            .iter()
            .enumerate()
            .map(|(i, def)| (def.symbol, i))
            .collect();
        Callees {
            module,
            by_symbol,
            keys: HashMap::new(),
        }
    }

    /// The direct calls of `func` to functions the module defines.
    fn local_calls(&self, func: &Function) -> Vec<LocalCall> {
        let insts = func
            .layout
            .blocks()
            .flat_map(|b| func.layout.block_insts(b));
        insts
            .enumerate()
            .filter_map(|(position, inst)| match func.dfg.insts[inst] {
                InstructionData::Call { func_ref, .. } => {
                    let callee = ClifModule::symbol_of(func, &func.dfg.ext_funcs[func_ref].name)?;
                    self.by_symbol
                        .contains_key(&callee)
                        .then_some(LocalCall { position, callee })
                }
                _ => None,
            })
            .collect()
    }

    /// The shape key of the function defining `symbol`.
    fn shape_key(&mut self, symbol: u32) -> Option<ShapeKey> {
        let module = self.module;
        let by_symbol = &self.by_symbol;
        self.keys
            .entry(symbol)
            .or_insert_with(|| {
                let def = &module.functions[*by_symbol.get(&symbol)?];
                let shape = hash::shape(module, &def.func, hash::LoopCalls::Parameterize);
                let locations = shape.locations.iter().map(|l| l.key()).collect();
                Some((shape.hash, shape.insts.len(), locations))
            })
            .clone()
    }
}
