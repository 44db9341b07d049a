//! Instruction combining on CLIF: the idioms Cranelift's e-graph leaves.
//!
//! Like LLVM's InstCombine ([INSTCOMBINE], `llvm/lib/Transforms/InstCombine`)
//! this pass rewrites small trees of instructions into fewer, cheaper ones by
//! local rules. It *complements* Cranelift's own mid-end rules (the ISLE
//! rewrites of `cranelift-codegen/src/opts/*.isle`, run in its e-graph): every
//! rule here is one that those files do not have, so the two never fight
//! over a pattern. Cranelift's rules simplify shifts, extensions and
//! constants one node at a time; they do not move constants into the offset
//! of a memory access, narrow a shift done through a wider type, recognize a
//! rotate written as two shifts, or give a load the extension its every use
//! asks for. Cranelift's lowering cannot either: it matches trees within one
//! block, and only one level of `iadd` into an address mode.
//!
//! # Notation
//!
//! `op.T a, b` is a CLIF instruction of controlling type `T`; `w(T)` is its
//! width in bits; `k` is a constant (an `iconst` of any type) and `[k]` its
//! value taken modulo `w(T)` for a shift amount (CLIF shifts and rotates take
//! their amount modulo the width). `zext(x)` is `x` zero-extended: either
//! `uextend.W x` or `band.W (sextend.W x | uextend.W x), 2^w(x)-1`.
//! `a + b` stands for `iadd` in either order.
//!
//! # Rules
//!
//! 1. **Address constants into offsets.** A memory access with an offset
//!    (every `Load` and `Store` format opcode: `load`, `uload8` … `istore32`,
//!    vector loads) at address `p: i64` where `p` flattens (through at most
//!    two levels of `iadd` and `isub` of a constant) to `a + k` or `a + b + k`
//!    with `k ≠ 0` accesses `a` or `a + b` at offset `offset + k` when that
//!    fits the 32-bit offset. For two leaves, an `iadd a, b` (either order)
//!    that dominates the access nearby (in its block or up a chain of
//!    blocks each entered only from the one before) is reused — four loads
//!    of `p + 4i + j` share one `add`. Otherwise the rewrite happens only
//!    when `p`'s own `iadd`s die with it (`p` is used only as an address,
//!    its inner `iadd` only by `p`; and, at offset 0, where register +
//!    register addressing makes `p` free, only then), inserting `iadd a, b` before the
//!    access for two leaves: an index `i + 1` that a bounds check also
//!    reads stays, and so does the access through it (Cranelift's e-graph
//!    would share the inserted `iadd` with any dominating one, however far,
//!    and keep that one's value live all the way).
//! 2. **Logical shifts written through a wider type.**
//!    `ireduce.T (sshr|ushr (zext(x)), k)` with `x: T` and `[k] < w(T)` is
//!    `ushr.T x, [k]`: the wide value's bits above `w(T)` are zero, so the
//!    arithmetic shift is logical and the low `w(T)` bits of the result are
//!    `x >>u [k]`.
//! 3. **Rotates.** `bor|bxor|iadd (ishl x, k1), (ushr x, k2)` (either operand
//!    order) with `[k1] + [k2] = w(T)` and `[k1] ≠ 0` is `rotl x, k1`: the two
//!    shifted values have no bit in common, so or, xor and add agree. Only
//!    for `i32` and `i64`: aarch64 has no 8- or 16-bit rotate, and Cranelift
//!    lowers `rotl.i16` in more bytes than the two shifts and the `orr`
//!    (16 → 20 bytes in `filetests/combine/rotates.clif`).
//! 4. **Extending loads.** A `load.T` of `i8`, `i16` or `i32` whose every use
//!    is one `uextend.W` (or every use one `sextend.W`), one `W` for all, is
//!    `uload8|16|32.W` (`sload…`): the extension is done by the load, which
//!    Cranelift's lowering only does when load and extension meet in one
//!    block with nothing between them that touches memory. Not when the
//!    load, its extensions and their uses are all in one block: there
//!    Cranelift usually fuses them itself, and the rewrite only moved
//!    registers (bench/generic_zoo grew 68 bytes at `-Os`). This leaves
//!    some `ldrb` + `uxtb` pairs: Cranelift lays a chain of blocks joined by
//!    jumps out as one and elaborates the extensions after all the chain's
//!    loads (bench/checksum's `murmur3`); extending those loads too removes
//!    them but grew generic_zoo at `-Os` by 20 bytes.
//!
//! Rules 2 and 3 run first (2 makes the shifts 3 recognizes), to a fixed
//! point; then rule 1; then rule 4 on fresh use lists. After the rules, pure
//! instructions left without a use are deleted (only in a function a rule
//! changed: the pass leaves alone what it did not rewrite).
//!
//! # Invariants
//!
//! - The output passes Cranelift's verifier and computes what the input
//!   did, traps included: no rule moves, adds or removes a memory access or
//!   a trapping instruction, and an access keeps its effective address (the
//!   same sum modulo 2^64), flags, type and place.
//! - The pass knows only CLIF (no front end): every rule holds for every
//!   integer type `i8`..`i64` as the CLIF reference defines its operations.
//! - The instruction count never grows: every rule replaces an instruction
//!   by one (rules 2 and 3 at most add the `iconst` of an amount, while the
//!   `band`/extension/shift they replace die), rule 1 inserts an `iadd` only
//!   when the access's own address `iadd` dies, rule 4 deletes the
//!   extensions.
//! - The pass is idempotent: a second run changes nothing.
//!
//! # Cost
//!
//! Linear in the function's instructions per phase (a use count and a map
//! from `iadd` operand pairs; dominance by Cranelift's dominator tree for
//! rule 1).
//!
//! # Place in the pipeline
//!
//! A named pass, `combine`, the last CLIF pass at `-O2`, `-Os` and `-Oz`,
//! rather than part of GVN's rewrite: its rules are not value numbering,
//! `--passes` can leave it out, `parec opt --passes combine` runs it alone
//! on a `.clif` file, and the leave-one-out test
//! (`crates/driver/tests/leave_one_out.rs`) checks that it pays for itself
//! on every program. It runs after GVN, so the `iadd`s rule 1 reuses are
//! already shared, and after both mergers: an offset is an immediate that
//! merging cannot turn into a parameter, so folding constants into offsets
//! first split merge groups (measured: bench/pipeline's seven `fsm::run`
//! bodies, one body after the linker folded them, became two, +404 bytes
//! at `-Oz`).
//!
//! References (docs/DESIGN.md): [INSTCOMBINE], LLVM's instruction
//! combiner; Cranelift's counterparts are the rules of
//! `cranelift-codegen/src/opts/{arithmetic,shifts,extends}.isle`.

use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::dominator_tree::DominatorTree;
use cranelift_codegen::flowgraph::ControlFlowGraph;
use cranelift_codegen::ir::immediates::Offset32;
use cranelift_codegen::ir::{
    types, Function, Inst, InstBuilder, InstructionData, Opcode, Type, Value, ValueDef,
};
use hashbrown::HashMap;
use std::fmt;

use crate::clif_module::ClifModule;
use crate::remark::Remark;

/// What the pass did to a function (or, summed, to a module).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CombineStats {
    /// Memory accesses whose address constant moved into the offset (rule 1).
    pub offsets_folded: u64,
    /// Of those, accesses that reused a dominating `iadd` of the two leaves.
    pub adds_reused: u64,
    /// Wide shifts of zero-extended values made narrow logical shifts (rule 2).
    pub shifts_narrowed: u64,
    /// Shift pairs recognized as rotates (rule 3).
    pub rotates: u64,
    /// Loads that took over the extension of their every use (rule 4).
    pub loads_extended: u64,
    /// Pure instructions deleted because the rules left them unused.
    pub removed: u64,
}

impl CombineStats {
    pub fn accumulate(&mut self, other: &CombineStats) {
        self.offsets_folded += other.offsets_folded;
        self.adds_reused += other.adds_reused;
        self.shifts_narrowed += other.shifts_narrowed;
        self.rotates += other.rotates;
        self.loads_extended += other.loads_extended;
        self.removed += other.removed;
    }

    /// The counters by name, as remarks carry them (docs/REMARKS.md).
    pub fn counters(&self) -> [(&'static str, u64); 6] {
        [
            ("offsets_folded", self.offsets_folded),
            ("adds_reused", self.adds_reused),
            ("shifts_narrowed", self.shifts_narrowed),
            ("rotates", self.rotates),
            ("loads_extended", self.loads_extended),
            ("removed", self.removed),
        ]
    }

    /// How many rewrites the rules made.
    pub fn rewrites(&self) -> u64 {
        self.offsets_folded + self.shifts_narrowed + self.rotates + self.loads_extended
    }
}

impl fmt::Display for CombineStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} offsets folded ({} adds reused), {} shifts narrowed, {} rotates, {} loads extended, {} instructions removed",
            self.offsets_folded,
            self.adds_reused,
            self.shifts_narrowed,
            self.rotates,
            self.loads_extended,
            self.removed
        )
    }
}

/// What the pass did to a module: its statistics and one remark per
/// function it changed.
#[derive(Clone, Debug, Default)]
pub struct CombineReport {
    pub stats: CombineStats,
    pub remarks: Vec<Remark>,
}

/// Runs every rule on every function of `module`.
pub fn run_module(module: &mut ClifModule) -> CombineReport {
    let mut report = CombineReport::default();
    for def in &mut module.functions {
        let stats = run(&mut def.func);
        report.stats.accumulate(&stats);
        if stats.rewrites() == 0 {
            continue;
        }
        let name = def.symbol_name(&module.symbols);
        let remark = Remark::passed("combine", "combined", name, stats.to_string())
            .in_module(&module.name)
            .nonzero_counts(stats.counters());
        report.remarks.push(remark);
    }
    report
}

/// Runs every rule on `func` (module doc).
pub fn run(func: &mut Function) -> CombineStats {
    let mut stats = CombineStats::default();
    func.dfg.resolve_all_aliases();
    // Rules 2 and 3 to a fixed point (each rewrite removes a pattern, so
    // this ends; two rounds suffice unless the layout puts a user first).
    for _ in 0..4 {
        let before = stats;
        shifts_and_rotates(func, &mut stats);
        if before == stats {
            break;
        }
    }
    fold_address_offsets(func, &mut stats);
    if stats.rewrites() > 0 {
        stats.removed += delete_dead(func);
    }
    let before = stats.rewrites();
    extending_loads(func, &mut stats);
    if stats.rewrites() > before {
        stats.removed += delete_dead(func);
    }
    func.dfg.resolve_all_aliases();
    stats
}

/// The instruction defining `v` (after aliases), if an instruction does.
fn def_inst(func: &Function, v: Value) -> Option<Inst> {
    match func.dfg.value_def(func.dfg.resolve_aliases(v)) {
        ValueDef::Result(inst, _) => Some(inst),
        _ => None,
    }
}

/// The value of `v` if an `iconst` defines it (sign-extended from its type).
fn constant(func: &Function, v: Value) -> Option<i64> {
    let inst = def_inst(func, v)?;
    match func.dfg.insts[inst] {
        InstructionData::UnaryImm {
            opcode: Opcode::Iconst,
            imm,
        } => {
            let bits = func.dfg.value_type(v).bits();
            let raw = imm.bits();
            Some(if bits >= 64 {
                raw
            } else {
                (raw << (64 - bits)) >> (64 - bits)
            })
        }
        _ => None,
    }
}

/// `v`'s defining instruction and its two operands when it is `opcode`.
fn binary(func: &Function, v: Value, opcode: Opcode) -> Option<(Inst, Value, Value)> {
    let inst = def_inst(func, v)?;
    match func.dfg.insts[inst] {
        InstructionData::Binary { opcode: op, args } if op == opcode => Some((
            inst,
            func.dfg.resolve_aliases(args[0]),
            func.dfg.resolve_aliases(args[1]),
        )),
        _ => None,
    }
}

/// `v`'s operand when `opcode` (a unary instruction) defines it.
fn unary(func: &Function, v: Value, opcode: Opcode) -> Option<Value> {
    let inst = def_inst(func, v)?;
    match func.dfg.insts[inst] {
        InstructionData::Unary { opcode: op, arg } if op == opcode => {
            Some(func.dfg.resolve_aliases(arg))
        }
        _ => None,
    }
}

/// A scalar integer type of at most 64 bits.
fn is_int(ty: Type) -> bool {
    ty.is_int() && ty.bits() <= 64
}

/// A shift amount `[k]` for type `ty`: the constant `v` modulo `w(ty)`.
fn shift_amount(func: &Function, v: Value, ty: Type) -> Option<u32> {
    let k = constant(func, v)?;
    Some((k as u64 & (u64::from(ty.bits()) - 1)) as u32)
}

// ---------------------------------------------------------------------------
// Rules 2 and 3

fn shifts_and_rotates(func: &mut Function, stats: &mut CombineStats) {
    let mut pos = FuncCursor::new(func);
    while pos.next_block().is_some() {
        while let Some(inst) = pos.next_inst() {
            match pos.func.dfg.insts[inst].opcode() {
                Opcode::Ireduce if narrow_shift(&mut pos, inst) => {
                    stats.shifts_narrowed += 1;
                }
                Opcode::Bor | Opcode::Bxor | Opcode::Iadd if rotate(pos.func, inst) => {
                    stats.rotates += 1;
                }
                _ => {}
            }
        }
    }
}

/// `x` if `wide` is `zext(x)` with `x: narrow` (notation in the module doc).
fn zero_extended(func: &Function, wide: Value, narrow: Type) -> Option<Value> {
    let from_ext =
        |v: Value| unary(func, v, Opcode::Uextend).or_else(|| unary(func, v, Opcode::Sextend));
    if let Some(x) = unary(func, wide, Opcode::Uextend) {
        return (func.dfg.value_type(x) == narrow).then_some(x);
    }
    let (_, a, b) = binary(func, wide, Opcode::Band)?;
    let mask = (1u64 << narrow.bits()) - 1;
    for (ext, m) in [(a, b), (b, a)] {
        if constant(func, m).map(|m| m as u64 & type_mask(func.dfg.value_type(wide))) == Some(mask)
        {
            if let Some(x) = from_ext(ext) {
                if func.dfg.value_type(x) == narrow {
                    return Some(x);
                }
            }
        }
    }
    None
}

/// All ones in the width of `ty`.
fn type_mask(ty: Type) -> u64 {
    if ty.bits() >= 64 {
        u64::MAX
    } else {
        (1u64 << ty.bits()) - 1
    }
}

/// Rule 2 on `ireduce` instruction `inst` (the cursor stands on it).
fn narrow_shift(pos: &mut FuncCursor, inst: Inst) -> bool {
    let func = &*pos.func;
    let InstructionData::Unary { arg, .. } = func.dfg.insts[inst] else {
        return false;
    };
    let narrow = func.dfg.ctrl_typevar(inst);
    let shifted = func.dfg.resolve_aliases(arg);
    let wide = func.dfg.value_type(shifted);
    if !is_int(narrow) || !is_int(wide) {
        return false;
    }
    let Some((_, value, amount)) =
        binary(func, shifted, Opcode::Sshr).or_else(|| binary(func, shifted, Opcode::Ushr))
    else {
        return false;
    };
    let Some(k) = shift_amount(func, amount, wide) else {
        return false;
    };
    if k >= narrow.bits() {
        return false;
    }
    let Some(x) = zero_extended(func, value, narrow) else {
        return false;
    };
    let amount = pos.ins().iconst(narrow, i64::from(k));
    pos.func.replace(inst).ushr(x, amount);
    true
}

/// Rule 3 on `bor`, `bxor` or `iadd` instruction `inst`.
fn rotate(func: &mut Function, inst: Inst) -> bool {
    let InstructionData::Binary { args, .. } = func.dfg.insts[inst] else {
        return false;
    };
    let ty = func.dfg.ctrl_typevar(inst);
    if ty != types::I32 && ty != types::I64 {
        return false;
    }
    let [a, b] = args.map(|v| func.dfg.resolve_aliases(v));
    for (left, right) in [(a, b), (b, a)] {
        let (Some((_, x, k1)), Some((_, y, k2))) = (
            binary(func, left, Opcode::Ishl),
            binary(func, right, Opcode::Ushr),
        ) else {
            continue;
        };
        let (Some(s1), Some(s2)) = (shift_amount(func, k1, ty), shift_amount(func, k2, ty)) else {
            continue;
        };
        if x == y && s1 != 0 && s1 + s2 == ty.bits() {
            func.replace(inst).rotl(x, k1);
            return true;
        }
    }
    false
}

// ---------------------------------------------------------------------------
// Rule 1

/// An address as a sum: up to two non-constant leaves and a constant.
struct AddressSum {
    leaves: Vec<Value>,
    constant: i64,
    /// The `iadd`/`isub` values the sum was flattened through, the address
    /// first.
    interior: Vec<Value>,
}

/// Flattens `v: i64` through `iadd` and `isub`-of-a-constant, `depth` levels.
fn flatten(func: &Function, v: Value, depth: u32, sum: &mut AddressSum) {
    if let Some(k) = constant(func, v) {
        sum.constant = sum.constant.wrapping_add(k);
        return;
    }
    if depth > 0 {
        if let Some((_, a, b)) = binary(func, v, Opcode::Iadd) {
            sum.interior.push(v);
            flatten(func, a, depth - 1, sum);
            flatten(func, b, depth - 1, sum);
            return;
        }
        if let Some((_, a, b)) = binary(func, v, Opcode::Isub) {
            if let Some(k) = constant(func, b) {
                sum.interior.push(v);
                flatten(func, a, depth - 1, sum);
                sum.constant = sum.constant.wrapping_sub(k);
                return;
            }
        }
    }
    sum.leaves.push(v);
}

/// The address operand of a memory access with an offset, and the offset.
fn address_of(data: &InstructionData) -> Option<(usize, i32)> {
    match *data {
        InstructionData::Load { offset, .. } => Some((0, offset.into())),
        InstructionData::Store { offset, .. } => Some((1, offset.into())),
        _ => None,
    }
}

/// How many times each value is used (after aliases), by instructions in
/// the layout.
pub(crate) fn use_counts(func: &Function) -> HashMap<Value, u32> {
    let mut counts = HashMap::new();
    for block in func.layout.blocks() {
        for inst in func.layout.block_insts(block) {
            for v in func.dfg.inst_values(inst) {
                *counts.entry(func.dfg.resolve_aliases(v)).or_insert(0) += 1;
            }
        }
    }
    counts
}

fn fold_address_offsets(func: &mut Function, stats: &mut CombineStats) {
    let counts = use_counts(func);
    // How many of each value's uses are the address of an access.
    let mut address_uses: HashMap<Value, u32> = HashMap::new();
    // Every `iadd.i64 a, b` by its operands, in layout order.
    let mut adds: HashMap<(Value, Value), Vec<Inst>> = HashMap::new();
    let mut accesses = Vec::new();
    for block in func.layout.blocks() {
        for inst in func.layout.block_insts(block) {
            let data = &func.dfg.insts[inst];
            if let Some((index, _)) = address_of(data) {
                let addr = func.dfg.resolve_aliases(func.dfg.inst_args(inst)[index]);
                *address_uses.entry(addr).or_insert(0) += 1;
                accesses.push(inst);
            } else if let InstructionData::Binary {
                opcode: Opcode::Iadd,
                args,
            } = *data
            {
                if func.dfg.ctrl_typevar(inst) == types::I64 {
                    let key = (
                        func.dfg.resolve_aliases(args[0]),
                        func.dfg.resolve_aliases(args[1]),
                    );
                    adds.entry(key).or_default().push(inst);
                }
            }
        }
    }
    if accesses.is_empty() {
        return;
    }
    let cfg = ControlFlowGraph::with_function(func);
    let domtree = DominatorTree::with_function(func, &cfg);
    for inst in accesses {
        let (index, offset) = address_of(&func.dfg.insts[inst]).expect("an access");
        let addr = func.dfg.resolve_aliases(func.dfg.inst_args(inst)[index]);
        if func.dfg.value_type(addr) != types::I64 {
            continue;
        }
        let mut sum = AddressSum {
            leaves: Vec::new(),
            constant: 0,
            interior: Vec::new(),
        };
        flatten(func, addr, 2, &mut sum);
        if sum.constant == 0 || sum.leaves.len() > 2 || sum.leaves.is_empty() {
            continue;
        }
        let Ok(new_offset) = i32::try_from(i64::from(offset) + sum.constant) else {
            continue;
        };
        // The address must be used only as an address, or the rewrite
        // keeps its `iadd` and adds a use of the leaves (measured:
        // `pare_print_i64`'s `store` grew 8 bytes when its address also
        // went to a block parameter). Whether every `iadd` of it dies: each
        // inner node is used only by its parent too.
        if counts.get(&addr) != address_uses.get(&addr) {
            continue;
        }
        let dies = sum.interior[1..]
            .iter()
            .all(|v| counts.get(v).copied() == Some(1));
        // At offset 0 with an inner `iadd` that stays, the access costs no
        // instruction of its own (aarch64's register + register mode), and
        // `a + b` at an offset would need `a + b` in a register (measured:
        // `pare_print_i64` grew 8 bytes).
        if offset == 0 && !dies {
            continue;
        }
        let new_addr = match sum.leaves[..] {
            [a] if dies => a,
            [_] => continue,
            [a, b] => {
                let nearby = [(a, b), (b, a)].iter().find_map(|key| {
                    adds.get(key)?
                        .iter()
                        .find(|&&add| dominates_nearby(func, &cfg, &domtree, add, inst))
                        .map(|&add| func.dfg.first_result(add))
                });
                match nearby {
                    Some(v) => {
                        stats.adds_reused += 1;
                        v
                    }
                    None if dies => {
                        let mut pos = FuncCursor::new(func).at_inst(inst);
                        let v = pos.ins().iadd(a, b);
                        let add = pos.func.dfg.value_def(v).unwrap_inst();
                        adds.entry((a, b)).or_default().push(add);
                        v
                    }
                    None => continue,
                }
            }
            _ => unreachable!("one or two leaves"),
        };
        func.dfg.inst_args_mut(inst)[index] = new_addr;
        match &mut func.dfg.insts[inst] {
            InstructionData::Load { offset, .. } | InstructionData::Store { offset, .. } => {
                *offset = Offset32::new(new_offset)
            }
            _ => unreachable!("an access"),
        }
        stats.offsets_folded += 1;
    }
}

/// How far up a chain of single-predecessor blocks a reused `iadd` may
/// be: further, keeping its value live costs a register across code that
/// recomputed it in the same instruction count (measured: `lex` in
/// bench/tokenizer grew 28 bytes when a distant `iadd` was reused).
const NEARBY_BLOCKS: usize = 8;

/// Whether `add` dominates `access` within its block or a chain of blocks
/// each entered only from the one before (an extended basic block).
fn dominates_nearby(
    func: &Function,
    cfg: &ControlFlowGraph,
    domtree: &DominatorTree,
    add: Inst,
    access: Inst,
) -> bool {
    let Some(target) = func.layout.inst_block(add) else {
        return false;
    };
    let mut block = func.layout.inst_block(access).expect("access in layout");
    for _ in 0..=NEARBY_BLOCKS {
        if block == target {
            return domtree.dominates(add, access, &func.layout);
        }
        let mut preds = cfg.pred_iter(block);
        match (preds.next(), preds.next()) {
            (Some(pred), None) => block = pred.block,
            _ => return false,
        }
    }
    false
}

// ---------------------------------------------------------------------------
// Rule 4

fn extending_loads(func: &mut Function, stats: &mut CombineStats) {
    // Each value's users (after aliases), in layout order.
    let mut users: HashMap<Value, Vec<Inst>> = HashMap::new();
    let mut loads = Vec::new();
    for block in func.layout.blocks() {
        for inst in func.layout.block_insts(block) {
            for v in func.dfg.inst_values(inst) {
                users
                    .entry(func.dfg.resolve_aliases(v))
                    .or_default()
                    .push(inst);
            }
            if let InstructionData::Load {
                opcode: Opcode::Load,
                ..
            } = func.dfg.insts[inst]
            {
                loads.push(inst);
            }
        }
    }
    for load in loads {
        let InstructionData::Load {
            arg, flags, offset, ..
        } = func.dfg.insts[load]
        else {
            continue;
        };
        let result = func.dfg.first_result(load);
        let narrow = func.dfg.value_type(result);
        let Some(uses) = users.get(&result) else {
            continue;
        };
        let Some((opcode, wide)) = common_extension(func, uses) else {
            continue;
        };
        if all_in_one_block(func, load, uses, &users) {
            continue;
        }
        let Some(opcode) = extending_load(opcode, narrow, wide) else {
            continue;
        };
        let extends = uses.clone();
        func.dfg.insts[load] = InstructionData::Load {
            opcode,
            arg,
            flags,
            offset,
        };
        func.dfg.clear_results(load);
        let loaded = func.dfg.make_inst_results(load, wide);
        debug_assert_eq!(loaded, 1);
        let loaded = func.dfg.first_result(load);
        for extend in extends {
            let extended = func.dfg.first_result(extend);
            func.layout.remove_inst(extend);
            func.dfg.clear_results(extend);
            func.dfg.change_to_alias(extended, loaded);
            stats.removed += 1;
        }
        stats.loads_extended += 1;
    }
}

/// Whether `load`, its extensions `extends` and all their uses are in one
/// block: Cranelift's lowering then usually fuses load and extension
/// itself, and rewriting them only moves registers around (measured on
/// bench/: rewriting such loads too grew `generic_zoo` at `-Os` by 68
/// bytes, `inventory::report` alone by 56, in more register moves).
fn all_in_one_block(
    func: &Function,
    load: Inst,
    extends: &[Inst],
    users: &HashMap<Value, Vec<Inst>>,
) -> bool {
    let block = func.layout.inst_block(load);
    extends.iter().all(|&extend| {
        func.layout.inst_block(extend) == block
            && users
                .get(&func.dfg.first_result(extend))
                .is_none_or(|uses| uses.iter().all(|&u| func.layout.inst_block(u) == block))
    })
}

/// The extension every one of `uses` is, and its type, if they agree.
fn common_extension(func: &Function, uses: &[Inst]) -> Option<(Opcode, Type)> {
    let mut common = None;
    for &user in uses {
        let opcode = func.dfg.insts[user].opcode();
        if !matches!(opcode, Opcode::Uextend | Opcode::Sextend) {
            return None;
        }
        let this = (opcode, func.dfg.ctrl_typevar(user));
        if *common.get_or_insert(this) != this {
            return None;
        }
    }
    common
}

/// The load of `narrow` that extends it as `extend` does to `wide`.
fn extending_load(extend: Opcode, narrow: Type, wide: Type) -> Option<Opcode> {
    let signed = extend == Opcode::Sextend;
    Some(match (narrow, wide, signed) {
        (types::I8, types::I16 | types::I32 | types::I64, false) => Opcode::Uload8,
        (types::I8, types::I16 | types::I32 | types::I64, true) => Opcode::Sload8,
        (types::I16, types::I32 | types::I64, false) => Opcode::Uload16,
        (types::I16, types::I32 | types::I64, true) => Opcode::Sload16,
        (types::I32, types::I64, false) => Opcode::Uload32,
        (types::I32, types::I64, true) => Opcode::Sload32,
        _ => return None,
    })
}

// ---------------------------------------------------------------------------
// Clean-up

/// Whether `opcode` computes a value and nothing else.
fn is_pure(opcode: Opcode) -> bool {
    !(opcode.can_trap()
        || opcode.can_load()
        || opcode.can_store()
        || opcode.other_side_effects()
        || opcode.is_call()
        || opcode.is_branch()
        || opcode.is_terminator()
        || opcode.is_return())
}

/// Deletes pure instructions whose results are unused; how many.
pub(crate) fn delete_dead(func: &mut Function) -> u64 {
    let mut counts = use_counts(func);
    let mut removed = 0;
    let mut changed = true;
    while changed {
        changed = false;
        let mut pos = FuncCursor::new(func);
        while pos.next_block().is_some() {
            while let Some(inst) = pos.next_inst() {
                let dfg = &pos.func.dfg;
                if !is_pure(dfg.insts[inst].opcode())
                    || dfg.inst_results(inst).is_empty()
                    || dfg
                        .inst_results(inst)
                        .iter()
                        .any(|r| counts.get(r).is_some_and(|&n| n > 0))
                {
                    continue;
                }
                let args: Vec<Value> = dfg
                    .inst_values(inst)
                    .map(|v| dfg.resolve_aliases(v))
                    .collect();
                for v in args {
                    if let Some(n) = counts.get_mut(&v) {
                        *n -= 1;
                    }
                }
                pos.remove_inst_and_step_back();
                removed += 1;
                changed = true;
            }
        }
    }
    removed
}

#[cfg(test)]
mod tests;
