//! A size model: the aarch64 bytes Cranelift will emit for a CLIF function,
//! and what inlining a call or merging two functions changes, estimated
//! without compiling.
//!
//! # Notation
//!
//! `|f|` is the size in bytes of `f`'s machine code as Cranelift 0.135 emits
//! it for aarch64 (the passes' measuring ISA); `est(f)` is this model's
//! estimate of it. A [`Profile`] `P(f)` is a vector of counts over `f`'s
//! instructions and signature (calls, call arguments, loads, `movz`/`movk`
//! instructions of constants, conditional branches, ... — [`Count`]); it is
//! additive: the profile of a function built from pieces is the sum of the
//! pieces' profiles. `est(f) = w · φ(P(f))`, where `φ` maps the counts to
//! [`Feature`]s — the counts themselves, and the few functions of them that
//! are not additive (whether the function calls: its frame) — and `w` are
//! weights fitted by least squares to Cranelift's output ([`WEIGHTS`]).
//!
//! # Estimates of a change
//!
//! - Inlining `g` at one call site `s` of `f` ([`inline_delta`]):
//!   `P(f[g]) = P(f) − P(s) + B(g, s)`, where `P(s)` counts the call and its
//!   arguments and `B(g, s)` is `g`'s body as the inliner splices it: `g`'s
//!   counts without its signature, each `return` a jump to the call's
//!   continuation carrying the results, a jump into the body carrying the
//!   arguments. `Δ_est = est(f[g]) − est(f)` is computed from the profiles
//!   alone, in `O(|g|)`: the caller is not walked, so deciding every call of
//!   a caller costs time linear in its calls.
//! - Merging `f1` and `f2` into `M`: the benefit is the sum of the removed
//!   functions' estimates less `M`'s, the thunks' and the redirected
//!   callers' (each call site gains an identifier argument: one
//!   [`Count::CallArgs`]).
//! - A merge before `M` exists (`crate::fmerge::profit::aligned_saving`):
//!   the thesis' `Δ` read off the alignment — the shared instructions'
//!   bytes less a dispatch per unshared run and a `select` per differing
//!   operand — so that `-Os` generates `M` only for tries within its error
//!   range of the threshold (`crate::fmerge::FmergeOptions::screen_aligned`).
//!
//! # Accuracy and its use
//!
//! The model sees CLIF before Cranelift's e-graph, lowering and register
//! allocation: it cannot see constant folding across an inlined call's
//! arguments, register pressure, or which moves the allocator coalesces.
//! Its error, measured on bench/, examples/ and 300 generated programs
//! (the inliner's trials; fmerge's merges on bench/ and examples/), is
//! bounded by error ranges (`INLINE_MARGINS_*`, `MERGE_MARGIN`): a decision
//! whose estimate is farther from its threshold than the range is taken on
//! the estimate; one within it is measured while the function it changes
//! has measuring budget left ([`MeasureBudget`], [`Decide`]).
//!
//! # Sources and where this departs from them
//!
//! - [LLVM-INLINE] LLVM's `InlineCost` (`llvm/lib/Analysis/InlineCost.cpp`)
//!   estimates a call's cost by walking the callee's instructions with the
//!   call's arguments known (`CallAnalyzer`), charging `InstrCost` per
//!   instruction the target's `TTI::getInstructionCost(TCK_CodeSize)`
//!   says is not free, crediting the call's own instructions
//!   (`getCallsiteCost`) and a last-call bonus when the callee can be
//!   deleted, and compares the sum with a threshold (`-Oz`: near zero). This
//!   model does the same bookkeeping in bytes, with per-kind costs fitted to
//!   Cranelift's aarch64 output rather than a target's cost table, and adds
//!   what `InlineCost` leaves to the backend: the caller's frame (a leaf
//!   caller that starts calling gains a frame; one that stops loses it). It
//!   does not simulate the callee with constant arguments (LLVM's
//!   `SimplifyInstruction` during the walk); that error is part of the
//!   margin.
//! - [HYFM]/[F3M] decide a merge by the cost model of Rocha's thesis
//!   (`fmerge::profit`): `Δ = c(f1) + c(f2) − c(f12) − ε` with per-opcode
//!   sizes from the target's cost model; they then keep every merge with
//!   `Δ > 0`. parec keeps the thesis' model as the filter, and this model
//!   (fitted, with margins) decides which merges need Cranelift's bytes to
//!   be decided.
//!
//! # Cost
//!
//! `Profile::of` is one walk over a function's instructions, with one
//! look-up per argument; an inlining's delta costs a walk over the callee.

use cranelift_codegen::entity::SecondaryMap;
use cranelift_codegen::ir::{self, BlockArg, Function, InstructionData, Opcode, Value};

use crate::merge::hash::materialisation_cost;

/// Additive counts over a function (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Count {
    /// One-instruction integer operations (add, logic, shifts, multiply).
    Alu,
    /// Extensions and reductions, often free.
    Extend,
    /// Integer and float comparisons.
    Compare,
    /// Conditional branches.
    Branch,
    /// Jumps to a block other than the next in the layout.
    Jump,
    /// Arguments passed along branch edges (moves the allocator may
    /// coalesce).
    BlockArgs,
    /// `select` and its kin.
    Select,
    /// `movz`/`movk` instructions materializing constants in registers.
    ConstInsns,
    Load,
    Store,
    /// Direct and indirect calls (not tail calls).
    Calls,
    /// Arguments of calls and tail calls.
    CallArgs,
    /// Results of calls.
    CallResults,
    /// Tail calls (`return_call`, `return_call_indirect`).
    TailCalls,
    /// `return` instructions (each repeats the epilogue).
    Returns,
    /// Values returned.
    ReturnArgs,
    /// `trapz`, `trapnz` and trapping conditions.
    CondTraps,
    /// Unconditional traps.
    Traps,
    /// Division and remainder by a variable.
    DivVar,
    /// Division and remainder by a constant that is not a power of two.
    DivConst,
    /// Symbol addresses (`symbol_value`, `func_addr`, `tls_value`).
    Symbols,
    /// Float arithmetic and conversions.
    Float,
    /// Float and vector constants.
    FloatConsts,
    /// Stack slot accesses.
    StackAccess,
    /// Stack slots declared.
    StackSlots,
    /// Entries of jump tables.
    TableEntries,
    /// Everything else.
    Other,
    /// Blocks.
    Blocks,
    /// Parameters of the function.
    Params,
    /// Integer operations and comparisons on 8- and 16-bit values, which
    /// aarch64 extends to a register's width first.
    Narrow,
}

/// The number of [`Count`]s.
pub const COUNTS: usize = Count::Narrow as usize + 1;

/// What the estimate is linear in: the counts, and the function-level
/// terms derived from them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feature {
    /// One of the counts.
    Count(Count),
    /// 1 if the function makes a call that is not a tail call: the frame
    /// record (`stp x29, x30` / `mov x29, sp` / `ldp`).
    Frame,
    /// `Frame` × returns: each return restores the frame.
    FrameReturns,
    /// 1 if the function has stack slots.
    StackFrame,
    /// 1: the part of every function the counts do not see.
    Base,
}

/// The features in [`WEIGHTS`]' order.
pub const FEATURES: [Feature; COUNTS + 4] = {
    let mut f = [Feature::Base; COUNTS + 4];
    let mut i = 0;
    while i < COUNTS {
        f[i] = Feature::Count(ALL_COUNTS[i]);
        i += 1;
    }
    f[COUNTS] = Feature::Frame;
    f[COUNTS + 1] = Feature::FrameReturns;
    f[COUNTS + 2] = Feature::StackFrame;
    f[COUNTS + 3] = Feature::Base;
    f
};

/// Every [`Count`], in order.
pub const ALL_COUNTS: [Count; COUNTS] = [
    Count::Alu,
    Count::Extend,
    Count::Compare,
    Count::Branch,
    Count::Jump,
    Count::BlockArgs,
    Count::Select,
    Count::ConstInsns,
    Count::Load,
    Count::Store,
    Count::Calls,
    Count::CallArgs,
    Count::CallResults,
    Count::TailCalls,
    Count::Returns,
    Count::ReturnArgs,
    Count::CondTraps,
    Count::Traps,
    Count::DivVar,
    Count::DivConst,
    Count::Symbols,
    Count::Float,
    Count::FloatConsts,
    Count::StackAccess,
    Count::StackSlots,
    Count::TableEntries,
    Count::Other,
    Count::Blocks,
    Count::Params,
    Count::Narrow,
];

/// Bytes per unit of each feature, in [`FEATURES`]' order.
pub const WEIGHTS: [f64; COUNTS + 4] = [
    3.3,  // Alu
    0.0,  // Extend
    5.4,  // Compare
    4.0,  // Branch
    0.0,  // Jump
    3.7,  // BlockArgs
    8.0,  // Select
    0.0,  // ConstInsns
    3.5,  // Load
    7.3,  // Store
    2.0,  // Calls
    4.6,  // CallArgs
    1.0,  // CallResults
    4.0,  // TailCalls
    1.7,  // Returns
    0.2,  // ReturnArgs
    8.0,  // CondTraps
    6.7,  // Traps
    12.0, // DivVar
    20.0, // DivConst
    5.0,  // Symbols
    4.0,  // Float
    8.0,  // FloatConsts
    4.0,  // StackAccess
    0.0,  // StackSlots
    4.0,  // TableEntries
    4.0,  // Other
    0.0,  // Blocks
    2.6,  // Params
    0.0,  // Narrow
    20.8, // Frame
    4.0,  // FrameReturns
    8.0,  // StackFrame
    0.0,  // Base
];

/// Additive counts of a function or a piece of one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Profile {
    pub counts: [i32; COUNTS],
}

impl std::ops::Index<Count> for Profile {
    type Output = i32;
    fn index(&self, c: Count) -> &i32 {
        &self.counts[c as usize]
    }
}

impl std::ops::IndexMut<Count> for Profile {
    fn index_mut(&mut self, c: Count) -> &mut i32 {
        &mut self.counts[c as usize]
    }
}

impl std::ops::AddAssign for Profile {
    fn add_assign(&mut self, o: Profile) {
        for (a, b) in self.counts.iter_mut().zip(o.counts) {
            *a += b;
        }
    }
}

impl std::ops::SubAssign for Profile {
    fn sub_assign(&mut self, o: Profile) {
        for (a, b) in self.counts.iter_mut().zip(o.counts) {
            *a -= b;
        }
    }
}

impl Profile {
    /// The counts of `func`.
    pub fn of(func: &Function) -> Profile {
        let uses = constant_uses(func);
        let live = Liveness::of(func);
        let mut p = Profile::default();
        p[Count::Params] = func.signature.params.len() as i32;
        p[Count::StackSlots] = func.sized_stack_slots.len() as i32;
        let mut numbering = ValueNumbering::default();
        let blocks: Vec<ir::Block> = func
            .layout
            .blocks()
            .filter(|&b| live.reachable[b])
            .collect();
        for (i, &block) in blocks.iter().enumerate() {
            p[Count::Blocks] += 1;
            let next = blocks.get(i + 1).copied();
            for inst in func.layout.block_insts(block) {
                if live.is_live(func, inst) && !numbering.is_redundant(func, inst) {
                    p.add_inst(func, inst, next, &uses);
                }
            }
        }
        p
    }

    /// The feature values of a function with these counts.
    pub fn features(&self) -> [f64; COUNTS + 4] {
        let mut x = [0.0; COUNTS + 4];
        for (i, &c) in self.counts.iter().enumerate() {
            x[i] = f64::from(c);
        }
        let frame = self[Count::Calls] > 0;
        x[COUNTS] = f64::from(u8::from(frame));
        x[COUNTS + 1] = if frame {
            f64::from(self[Count::Returns])
        } else {
            0.0
        };
        x[COUNTS + 2] = f64::from(u8::from(self[Count::StackSlots] > 0));
        x[COUNTS + 3] = 1.0;
        x
    }

    /// `est` of a function with these counts, in bytes.
    pub fn bytes(&self) -> i64 {
        let x = self.features();
        let sum: f64 = x.iter().zip(WEIGHTS).map(|(x, w)| x * w).sum();
        sum.round() as i64
    }

    fn add_inst(
        &mut self,
        func: &Function,
        inst: ir::Inst,
        next: Option<ir::Block>,
        uses: &SecondaryMap<Value, ConstantUses>,
    ) {
        let data = &func.dfg.insts[inst];
        for dest in data.branch_destination(&func.dfg.jump_tables, &func.dfg.exception_tables) {
            self[Count::BlockArgs] += dest.args(&func.dfg.value_lists).count() as i32;
        }
        let opcode = data.opcode();
        match *data {
            InstructionData::UnaryImm {
                opcode: Opcode::Iconst,
                imm,
            } => {
                let result = func.dfg.first_result(inst);
                if uses[result] != ConstantUses::Immediate {
                    let ty = func.dfg.value_type(result);
                    self[Count::ConstInsns] += (materialisation_cost(ty, imm.bits()) / 4) as i32;
                }
                return;
            }
            InstructionData::Jump { destination, .. } => {
                if Some(destination.block(&func.dfg.value_lists)) != next {
                    self[Count::Jump] += 1;
                }
                return;
            }
            InstructionData::BranchTable { table, .. } => {
                self[Count::TableEntries] +=
                    func.dfg.jump_tables[table].all_branches().len() as i32;
                self[Count::Branch] += 1;
                return;
            }
            _ => {}
        }
        let args = func.dfg.inst_args(inst).len() as i32;
        let narrow =
            |v: Value| func.dfg.value_type(v).is_int() && func.dfg.value_type(v).bits() < 32;
        if matches!(
            opcode,
            Opcode::Icmp
                | Opcode::Udiv
                | Opcode::Sdiv
                | Opcode::Urem
                | Opcode::Srem
                | Opcode::Ushr
                | Opcode::Sshr
        ) && func.dfg.inst_args(inst).iter().any(|&a| narrow(a))
        {
            self[Count::Narrow] += 1;
        }
        let results = func.dfg.inst_results(inst).len() as i32;
        let count = match opcode {
            Opcode::Call | Opcode::CallIndirect => {
                self[Count::CallArgs] += args - i32::from(opcode == Opcode::CallIndirect);
                self[Count::CallResults] += results;
                Count::Calls
            }
            Opcode::ReturnCall | Opcode::ReturnCallIndirect => {
                self[Count::CallArgs] += args - i32::from(opcode == Opcode::ReturnCallIndirect);
                Count::TailCalls
            }
            Opcode::Return => {
                self[Count::ReturnArgs] += args;
                Count::Returns
            }
            Opcode::Brif => Count::Branch,
            Opcode::Icmp | Opcode::Fcmp => Count::Compare,
            Opcode::Select | Opcode::SelectSpectreGuard | Opcode::Bitselect => Count::Select,
            Opcode::Uextend | Opcode::Sextend | Opcode::Ireduce | Opcode::Bitcast => Count::Extend,
            Opcode::Trapz | Opcode::Trapnz => Count::CondTraps,
            Opcode::Trap => Count::Traps,
            Opcode::Udiv | Opcode::Sdiv | Opcode::Urem | Opcode::Srem => {
                let divisor = func.dfg.resolve_aliases(func.dfg.inst_args(inst)[1]);
                match constant(func, divisor) {
                    Some(k) if k > 0 && (k as u64).is_power_of_two() => Count::Alu,
                    Some(_) => Count::DivConst,
                    None => Count::DivVar,
                }
            }
            Opcode::SymbolValue | Opcode::FuncAddr | Opcode::TlsValue => Count::Symbols,
            Opcode::F32const | Opcode::F64const | Opcode::Vconst => Count::FloatConsts,
            Opcode::StackAddr | Opcode::DynamicStackAddr => Count::StackAccess,
            _ if opcode.can_load() => Count::Load,
            _ if opcode.can_store() => Count::Store,
            _ if is_float(func, inst) => Count::Float,
            _ if is_alu(opcode) => Count::Alu,
            _ => Count::Other,
        };
        self[count] += 1;
    }
}

/// What Cranelift removes before it lowers anything: blocks the entry
/// cannot reach, and pure instructions whose results nothing live uses.
struct Liveness {
    reachable: SecondaryMap<ir::Block, bool>,
    used: SecondaryMap<Value, bool>,
}

impl Liveness {
    fn of(func: &Function) -> Liveness {
        let mut reachable = SecondaryMap::new();
        let mut stack: Vec<ir::Block> = func.layout.entry_block().into_iter().collect();
        while let Some(block) = stack.pop() {
            if std::mem::replace(&mut reachable[block], true) {
                continue;
            }
            if let Some(last) = func.layout.last_inst(block) {
                let data = &func.dfg.insts[last];
                let mut dests = data
                    .branch_destination(&func.dfg.jump_tables, &func.dfg.exception_tables)
                    .to_vec();
                // Cranelift folds a branch on a constant into a jump.
                if let InstructionData::Brif { arg, .. } = *data {
                    if let Some(k) = constant(func, func.dfg.resolve_aliases(arg)) {
                        dests = vec![dests[usize::from(k == 0)]];
                    }
                }
                for dest in dests {
                    let target = dest.block(&func.dfg.value_lists);
                    if !reachable[target] {
                        stack.push(target);
                    }
                }
            }
        }
        // Mark from the roots (instructions with effects) through arguments.
        let mut used: SecondaryMap<Value, bool> = SecondaryMap::new();
        let mut work: Vec<ir::Inst> = Vec::new();
        for block in func.layout.blocks().filter(|&b| reachable[b]) {
            for inst in func.layout.block_insts(block) {
                if !is_pure(func, inst) {
                    work.push(inst);
                }
            }
        }
        while let Some(inst) = work.pop() {
            for arg in func.dfg.inst_values(inst) {
                let arg = func.dfg.resolve_aliases(arg);
                if std::mem::replace(&mut used[arg], true) {
                    continue;
                }
                if let ir::ValueDef::Result(def, _) = func.dfg.value_def(arg) {
                    work.push(def);
                }
            }
        }
        Liveness { reachable, used }
    }

    /// Whether `inst` survives dead-code elimination.
    fn is_live(&self, func: &Function, inst: ir::Inst) -> bool {
        !is_pure(func, inst) || func.dfg.inst_results(inst).iter().any(|&r| self.used[r])
    }
}

/// Whether `inst` has no effect besides its results.
fn is_pure(func: &Function, inst: ir::Inst) -> bool {
    let opcode = func.dfg.insts[inst].opcode();
    !(opcode.can_load()
        || opcode.can_store()
        || opcode.can_trap()
        || opcode.is_call()
        || opcode.is_branch()
        || opcode.is_terminator()
        || opcode.other_side_effects())
}

/// Cranelift's e-graph computes a pure expression once: a hash-consing
/// of pure instructions by opcode, type, immediates and (numbered)
/// arguments, in layout order. It ignores dominance (the e-graph only
/// reuses a value where it dominates; constants and addresses are
/// rematerialized), which is close enough for an estimate.
#[derive(Default)]
struct ValueNumbering {
    /// The first value computed by each expression, by the expression's hash.
    seen: hashbrown::HashMap<u64, Vec<(InstructionData, ir::Type, Value)>>,
    /// The value each redundant result stands for.
    leader: SecondaryMap<Value, Option<Value>>,
    /// An empty pool: pure instructions keep their arguments inline.
    pool: ir::ValueListPool,
}

impl ValueNumbering {
    /// Whether `inst` recomputes a value an earlier instruction computed.
    fn is_redundant(&mut self, func: &Function, inst: ir::Inst) -> bool {
        use std::hash::{Hash as _, Hasher as _};
        let data = &func.dfg.insts[inst];
        let results = func.dfg.inst_results(inst);
        if results.len() != 1 || !is_pure(func, inst) {
            return false;
        }
        let mut key = *data;
        for arg in key.arguments_mut(&mut self.pool) {
            let arg_value = func.dfg.resolve_aliases(*arg);
            *arg = self.leader[arg_value].unwrap_or(arg_value);
        }
        let ty = func.dfg.ctrl_typevar(inst);
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        key.hash(&mut hasher, &self.pool);
        ty.hash(&mut hasher);
        let bucket = self.seen.entry(hasher.finish()).or_default();
        let result = results[0];
        match bucket
            .iter()
            .find(|(d, t, _)| *t == ty && d.eq(&key, &self.pool))
        {
            Some(&(_, _, first)) => {
                self.leader[result] = Some(first);
                true
            }
            None => {
                bucket.push((key, ty, result));
                false
            }
        }
    }
}

/// Whether an instruction works on floats.
fn is_float(func: &Function, inst: ir::Inst) -> bool {
    let ty = func.dfg.ctrl_typevar(inst);
    ty.is_float()
        || func
            .dfg
            .inst_results(inst)
            .first()
            .is_some_and(|&r| func.dfg.value_type(r).is_float())
}

/// One-instruction integer operations on aarch64.
fn is_alu(opcode: Opcode) -> bool {
    use Opcode::*;
    matches!(
        opcode,
        Iadd | Isub
            | Ineg
            | Imul
            | Smulhi
            | Umulhi
            | Band
            | Bor
            | Bxor
            | Bnot
            | Ishl
            | Ushr
            | Sshr
            | Rotl
            | Rotr
            | Clz
            | Ctz
            | Bitrev
            | Bswap
            | Iabs
            | Smin
            | Smax
            | Umin
            | Umax
            | Bmask
            | Nop
    )
}

/// How a constant (an `iconst` result) is used, as far as seen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum ConstantUses {
    /// No use yet.
    #[default]
    Unused,
    /// Every use so far takes it as an immediate.
    Immediate,
    /// Some use needs it in a register.
    Register,
}

/// Per constant, whether every use takes it as an immediate. One walk over
/// the instructions; nothing is recorded for other values.
pub(crate) fn constant_uses(func: &Function) -> SecondaryMap<Value, ConstantUses> {
    let mut uses: SecondaryMap<Value, ConstantUses> = SecondaryMap::new();
    let mut record = |value: Value, use_site: Option<(Opcode, usize)>| {
        let value = func.dfg.resolve_aliases(value);
        let Some(imm) = constant(func, value) else {
            return;
        };
        let immediate = use_site.is_some_and(|(opcode, k)| takes_immediate(opcode, k, imm));
        uses[value] = match (uses[value], immediate) {
            (ConstantUses::Register, _) | (_, false) => ConstantUses::Register,
            (_, true) => ConstantUses::Immediate,
        };
    };
    for block in func.layout.blocks() {
        for inst in func.layout.block_insts(block) {
            let opcode = func.dfg.insts[inst].opcode();
            for (k, &a) in func.dfg.inst_args(inst).iter().enumerate() {
                record(a, Some((opcode, k)));
            }
            for call in func.dfg.insts[inst]
                .branch_destination(&func.dfg.jump_tables, &func.dfg.exception_tables)
            {
                for arg in call.args(&func.dfg.value_lists) {
                    if let BlockArg::Value(v) = arg {
                        // A block argument is a register.
                        record(v, None);
                    }
                }
            }
        }
    }
    uses
}

/// The immediate of `value`, if an `iconst` defines it.
pub(crate) fn constant(func: &Function, value: Value) -> Option<i64> {
    match func.dfg.value_def(value) {
        ir::ValueDef::Result(def, _) => match func.dfg.insts[def] {
            InstructionData::UnaryImm {
                opcode: Opcode::Iconst,
                imm,
            } => Some(imm.bits()),
            _ => None,
        },
        _ => None,
    }
}

/// Whether argument `k` of `opcode` can take the constant `value` as an
/// immediate: the second operand of an add, subtract or compare (12 bits)
/// or a shift amount.
fn takes_immediate(opcode: Opcode, k: usize, value: i64) -> bool {
    match opcode {
        Opcode::Iadd | Opcode::Isub | Opcode::Icmp => k == 1 && (-4095..=4095).contains(&value),
        Opcode::Ishl | Opcode::Ushr | Opcode::Sshr | Opcode::Rotl | Opcode::Rotr => k == 1,
        _ => false,
    }
}

/// Whether `value` is an integer constant.
pub fn is_constant(func: &Function, value: Value) -> bool {
    constant(func, func.dfg.resolve_aliases(value)).is_some()
}

/// The estimated bytes of `func`.
pub fn function_bytes(func: &Function) -> i64 {
    Profile::of(func).bytes()
}

/// What the estimate of inlining a callee needs to know of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CalleeSummary {
    /// `|g|`: measured, or this model's estimate.
    pub bytes: CalleeBytes,
    /// Calls `g` makes that are not tail calls (its frame).
    pub calls: i32,
    /// `g`'s `return`s (each a jump to the continuation once inlined).
    pub returns: i32,
}

/// The callee's size, and how it is known.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CalleeBytes {
    Measured(i64),
    Estimated(i64),
}

impl CalleeSummary {
    /// The summary of `g`, whose size is `bytes`.
    pub fn of(g: &Function, bytes: CalleeBytes) -> CalleeSummary {
        let mut calls = 0;
        let mut returns = 0;
        for block in g.layout.blocks() {
            for inst in g.layout.block_insts(block) {
                match g.dfg.insts[inst].opcode() {
                    Opcode::Call | Opcode::CallIndirect => calls += 1,
                    Opcode::Return => returns += 1,
                    _ => {}
                }
            }
        }
        CalleeSummary {
            bytes,
            calls,
            returns,
        }
    }
}

/// What the estimate of inlining needs to know of one call site.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SiteSummary {
    pub args: i32,
    /// Arguments the caller passes as integer constants.
    pub constant_args: i32,
    /// Results nothing in the caller uses.
    pub unused_results: i32,
}

impl SiteSummary {
    /// The summary of call `inst` of `caller`; `used` holds the values
    /// the caller's instructions use (see [`used_values`]).
    pub fn of(caller: &Function, inst: ir::Inst, used: &SecondaryMap<Value, bool>) -> SiteSummary {
        let args = caller.dfg.inst_args(inst);
        SiteSummary {
            args: args.len() as i32,
            constant_args: args.iter().filter(|&&a| is_constant(caller, a)).count() as i32,
            unused_results: caller
                .dfg
                .inst_results(inst)
                .iter()
                .filter(|&&r| !used[r])
                .count() as i32,
        }
    }
}

/// The values some instruction of `func` uses (aliases resolved).
pub fn used_values(func: &Function) -> SecondaryMap<Value, bool> {
    let mut used = SecondaryMap::new();
    for block in func.layout.blocks() {
        for inst in func.layout.block_insts(block) {
            for v in func.dfg.inst_values(inst) {
                used[func.dfg.resolve_aliases(v)] = true;
            }
        }
    }
    used
}

/// The calls `func` makes that are not tail calls (the frame's reason).
pub fn non_tail_calls(func: &Function) -> i32 {
    let mut calls = 0;
    for block in func.layout.blocks() {
        for inst in func.layout.block_insts(block) {
            let opcode = func.dfg.insts[inst].opcode();
            calls += i32::from(opcode.is_call() && !opcode.is_return());
        }
    }
    calls
}

/// `Δ_est` of inlining `callee` (of `bytes`) at `sites` of `caller`, for a
/// pass that prices one inlining rather than walking every call of a
/// caller as the inliner does ([`inline_delta`]).
pub fn inline_delta_at(
    caller: &Function,
    callee: &Function,
    bytes: CalleeBytes,
    sites: &[ir::Inst],
) -> Estimate {
    let used = used_values(caller);
    let sites: Vec<SiteSummary> = sites
        .iter()
        .map(|&site| SiteSummary::of(caller, site, &used))
        .collect();
    inline_delta(
        &CalleeSummary::of(callee, bytes),
        &sites,
        non_tail_calls(caller),
    )
}

/// The terms `Δ_est` of an inlining is linear in (see [`inline_delta`]).
pub const INLINE_TERMS: usize = 8;

/// The terms of inlining `callee` at `sites` of a caller that makes
/// `caller_calls` calls (not tail calls) before.
pub fn inline_terms(
    callee: &CalleeSummary,
    sites: &[SiteSummary],
    caller_calls: i32,
) -> [f64; INLINE_TERMS] {
    let k = sites.len() as i32;
    let bytes = match callee.bytes {
        CalleeBytes::Measured(b) | CalleeBytes::Estimated(b) => b,
    };
    let calls_after = caller_calls - k + k * callee.calls;
    let frame_change = i32::from(calls_after > 0) - i32::from(caller_calls > 0);
    let sum = |f: fn(&SiteSummary) -> i32| f64::from(sites.iter().map(f).sum::<i32>());
    [
        f64::from(k) * bytes as f64,
        f64::from(k),
        f64::from(k * i32::from(callee.calls > 0)),
        f64::from(k * callee.returns),
        f64::from(frame_change),
        sum(|s| s.args),
        sum(|s| s.constant_args),
        sum(|s| s.unused_results),
    ]
}

/// How a pass takes a size decision: by compiling the candidates with
/// Cranelift, by this model, or by the model first and Cranelift where the
/// model cannot tell.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Decide {
    /// Compile every candidate (parec's decisions before the size model):
    /// exact, and what calibrating the model needs, but the compile time
    /// grows with the candidates times the functions they change.
    Measure,
    /// Estimate every candidate; compile only those whose estimate lies
    /// within the calibrated margin of the threshold, as long as the
    /// measuring budget lasts, and take the others on the estimate.
    #[default]
    EstimateThenMeasure,
    /// Decide on the estimate alone: nothing is compiled.
    Estimate,
}

impl Decide {
    /// The name in remarks and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Decide::Measure => "measure",
            Decide::EstimateThenMeasure => "estimate-then-measure",
            Decide::Estimate => "estimate",
        }
    }

    /// The mode called `name`.
    pub fn from_name(name: &str) -> Option<Decide> {
        [
            Decide::Measure,
            Decide::EstimateThenMeasure,
            Decide::Estimate,
        ]
        .into_iter()
        .find(|d| d.name() == name)
    }
}

/// An estimated byte count with the range Cranelift's is expected in: the
/// calibration's extremes (the 0.5% and 99.5% quantiles of the error on
/// the generated programs, widened to the largest errors seen on bench/ and
/// examples/).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Estimate {
    pub bytes: i64,
    pub low: i64,
    pub high: i64,
}

impl Estimate {
    /// An exact value (a measurement).
    pub fn exact(bytes: i64) -> Estimate {
        Estimate {
            bytes,
            low: bytes,
            high: bytes,
        }
    }

    /// Whether the measured value is surely at most `threshold`.
    pub fn surely_at_most(&self, threshold: i64) -> bool {
        self.high <= threshold
    }

    /// Whether the measured value is surely above `threshold`.
    pub fn surely_above(&self, threshold: i64) -> bool {
        self.low > threshold
    }
}

impl std::ops::Add for Estimate {
    type Output = Estimate;
    /// The sum's range is the sum of the ranges (errors are not assumed to
    /// cancel).
    fn add(self, o: Estimate) -> Estimate {
        Estimate {
            bytes: self.bytes + o.bytes,
            low: self.low + o.low,
            high: self.high + o.high,
        }
    }
}

/// Coefficients of [`inline_terms`], fitted (robust least squares) to the
/// measured growth of the inliner's 9,348 trials on bench/, examples/ and
/// 300 generated programs, with `|g|` measured and with `|g|` estimated.
const INLINE_WEIGHTS_MEASURED: [f64; INLINE_TERMS] =
    [0.98, 3.69, -19.33, -7.57, 30.09, -7.30, -8.13, -3.54];
const INLINE_WEIGHTS_ESTIMATED: [f64; INLINE_TERMS] =
    [0.97, 9.44, -20.62, -13.25, 21.80, -7.07, -5.75, -3.05];

/// The error range of an inlining's estimate, by `k·|g|` (the callee's
/// bytes times its sites): `(below, low, high)`.
type MarginTable = [(i64, i64, i64); 6];
const INLINE_MARGINS_MEASURED: MarginTable = [
    (32, -135, 51),
    (64, -102, 59),
    (128, -90, 74),
    (256, -211, 118),
    (512, -401, 223),
    (i64::MAX, -788, 208),
];
const INLINE_MARGINS_ESTIMATED: MarginTable = [
    (32, -145, 50),
    (64, -119, 67),
    (128, -88, 82),
    (256, -177, 135),
    (512, -380, 232),
    (i64::MAX, -1380, 480),
];

/// `Δ_est` of inlining `callee` at `sites` (all in one caller, which makes
/// `caller_calls` calls that are not tail calls), with its error range.
pub fn inline_delta(callee: &CalleeSummary, sites: &[SiteSummary], caller_calls: i32) -> Estimate {
    let terms = inline_terms(callee, sites, caller_calls);
    let (weights, margins, bytes) = match callee.bytes {
        CalleeBytes::Measured(b) => (&INLINE_WEIGHTS_MEASURED, &INLINE_MARGINS_MEASURED, b),
        CalleeBytes::Estimated(b) => (&INLINE_WEIGHTS_ESTIMATED, &INLINE_MARGINS_ESTIMATED, b),
    };
    let delta: f64 = terms.iter().zip(weights).map(|(t, w)| t * w).sum();
    let delta = delta.round() as i64;
    let scale = sites.len() as i64 * bytes;
    let &(_, low, high) = margins
        .iter()
        .find(|&&(below, _, _)| scale < below)
        .expect("the last row has no bound");
    Estimate {
        bytes: delta,
        low: delta + low,
        high: delta + high,
    }
}

/// The CLIF instructions the measurements that change one function (a
/// caller: the inliner's trials, the merger's redirected calls) may compile
/// in one pass: `max(floor, per_inst × |f|)` for a function of `|f|`
/// instructions when it is first measured. Beyond it decisions about the
/// function are taken on the estimate, so that measuring a function costs
/// `O(|f|)` compiled instructions whatever its number of calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MeasureBudget {
    pub floor: u64,
    pub per_inst: u64,
}

impl Default for MeasureBudget {
    /// Every caller of bench/, examples/ and 300 generated programs stays
    /// within the floor (the most costly compiled about 40,000
    /// instructions), so they are decided as before; a caller of 4,000
    /// calls is measured about ten times.
    fn default() -> Self {
        MeasureBudget {
            floor: 65_536,
            per_inst: 4,
        }
    }
}

impl MeasureBudget {
    /// The budget of a function of `insts` instructions.
    pub fn of(self, insts: usize) -> u64 {
        self.floor.max(self.per_inst * insts as u64)
    }
}

/// Bytes a redirected call costs its caller, in the estimate of a merge:
/// the merged function's identifier argument (a `movz`, and at times a move
/// it forces).
pub const REDIRECTED_CALL_BYTES: f64 = 4.6;

/// The error range of a merge's estimate: `(low, high)` bytes around it.
/// The measured benefit of the 102 merges fmerge measured on bench/ and
/// examples/ at `-Oz` lay between 77 bytes below the estimate and 290 above
/// it (the model underestimates: it cannot see the frame and the moves a
/// merged function saves twice); the range widens those extremes by a
/// tenth. It is wide: on that corpus 2 of the 102 merges are settled by
/// the estimate, both as measuring decides them, and measuring remains what
/// decides fmerge until the measuring budget is spent.
const MERGE_MARGIN: (i64, i64) = (-96, 320);

/// The estimated bytes a similar-function merge saves: the two originals'
/// estimates, less the merged function's, the thunks' and what the
/// redirected calls add to their callers, with its error range.
pub fn merge_benefit(
    originals: i64,
    merged: i64,
    thunks: i64,
    redirected_calls: usize,
) -> Estimate {
    let bytes =
        (originals - merged - thunks) as f64 - REDIRECTED_CALL_BYTES * redirected_calls as f64;
    let bytes = bytes.round() as i64;
    let (low, high) = MERGE_MARGIN;
    Estimate {
        bytes,
        low: bytes + low,
        high: bytes + high,
    }
}
