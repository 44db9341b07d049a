//! Block counters: the instrumentation that makes a profile.
//!
//! [`instrument`] gives every block of every function of a module a 64-bit
//! counter in one zero-initialized writable data object of the module, and
//! at the top of the block, after its parameters, increments it:
//!
//! ```text
//! v1 = symbol_value.i64 gv0          ; the counters' object
//! v2 = load.i64 notrap aligned v1+8k ; counter k
//! v3 = iadd_imm v2, 1
//! store notrap aligned v3, v1+8k
//! ```
//!
//! The increments are plain loads and stores, not atomics: the programs
//! profiled are single-threaded, and the counters of a multi-threaded one
//! would only lose counts, never be wrong otherwise. The [`CounterMap`]
//! records which counters belong to which function; the profile keys are
//! computed *before* the instrumentation, from the code as the producer
//! lowered it, which is the code a build will look the counts up for.
//!
//! Cost: four instructions per block; one pass over the module.

use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::ir::{self, types, GlobalValueData, InstBuilder, MemFlagsData};

use super::hash::profile_hash;
use super::{FunctionProfile, Profile};
use crate::clif_module::{ClifModule, DataDef, Linkage, SymbolKind};

/// The counters of one function: `blocks` counters from `first`, one per
/// block in layout order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionCounters {
    pub name: String,
    pub hash: u64,
    pub first: usize,
    pub blocks: usize,
    /// Whether the profile names it: not when its code depends on the
    /// target machine ([`ClifModule::target_specific`]).
    pub profiled: bool,
}

/// Where [`instrument`] put the counters of a module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CounterMap {
    /// The data object holding the counters (`8 × count` bytes).
    pub symbol: String,
    /// The functions, in module order.
    pub functions: Vec<FunctionCounters>,
    /// The number of counters.
    pub count: usize,
}

impl CounterMap {
    /// The profile of a run that left `counters` (the data object's
    /// contents, `count` values) behind. Missing counters read as zero.
    pub fn profile(&self, counters: &[u64]) -> Profile {
        let mut profile = Profile::default();
        for f in self.functions.iter().filter(|f| f.profiled) {
            let blocks = (f.first..f.first + f.blocks)
                .map(|i| counters.get(i).copied().unwrap_or(0))
                .collect();
            profile.add(f.name.clone(), f.hash, FunctionProfile { blocks });
        }
        profile
    }
}

/// Adds a counter to every block of every function of `module`, in a new
/// local data object named `symbol` (which must not name a symbol of the
/// module yet), and returns the map of the counters.
pub fn instrument(module: &mut ClifModule, symbol: &str) -> CounterMap {
    let mut functions = Vec::with_capacity(module.functions.len());
    let mut count = 0;
    for def in &module.functions {
        let blocks = def.func.layout.blocks().count();
        let name = &module.symbols[def.symbol as usize].name;
        functions.push(FunctionCounters {
            profiled: !module.target_specific.contains(name),
            name: name.clone(),
            hash: profile_hash(module, &def.func),
            first: count,
            blocks,
        });
        count += blocks;
    }
    let data = module.declare(symbol, SymbolKind::Data { writable: true }, Linkage::Local);
    module.data.push(DataDef {
        symbol: data,
        bytes: vec![0; count * 8],
        align: 8,
        relocs: Vec::new(),
    });
    for (def, counters) in module.functions.iter_mut().zip(&functions) {
        count_blocks(&mut def.func, data, counters.first);
    }
    CounterMap {
        symbol: symbol.to_string(),
        functions,
        count,
    }
}

/// Increments counter `first + i` at the top of the `i`-th block of `func`.
fn count_blocks(func: &mut ir::Function, data: u32, first: usize) {
    let name = func.declare_imported_user_function(ClifModule::external_name(data));
    let counters = func.create_global_value(GlobalValueData::Symbol {
        name: ir::ExternalName::user(name),
        offset: ir::immediates::Imm64::new(0),
        colocated: true,
        tls: false,
    });
    let blocks: Vec<ir::Block> = func.layout.blocks().collect();
    let mut pos = FuncCursor::new(func);
    for (i, block) in blocks.into_iter().enumerate() {
        pos = pos.at_first_inst(block);
        let base = pos.ins().symbol_value(types::I64, counters);
        let byte = (first + i) * 8;
        // Offsets are 32-bit; beyond 2 GiB of counters, add to the address.
        let (addr, offset) = match i32::try_from(byte) {
            Ok(offset) => (base, offset),
            Err(_) => (pos.ins().iadd_imm_u(base, byte as i64), 0),
        };
        let flags = MemFlagsData::trusted();
        let old = pos.ins().load(types::I64, flags, addr, offset);
        let new = pos.ins().iadd_imm_u(old, 1);
        pos.ins().store(flags, new, addr, offset);
    }
}
