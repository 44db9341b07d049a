//! Alignment: which blocks and instructions of two functions are merged
//! ([HYFM] §3: Rocha et al., *HyFM: Function Merging for Free*, LCTES 2021;
//! full references in docs/DESIGN.md).
//!
//! # Notation
//!
//! The two functions are *side 0* and *side 1*. A function's *body* per
//! block is its non-constant, non-terminator instructions in layout order
//! (constants are operands: [`fingerprint::is_constant`]); the terminator is
//! aligned on its own. Two instructions are *mergeable* when their [`key`]s
//! are equal: same opcode, controlling type, result and argument types
//! (integer `return` operands of any width count as one type), and
//! equal immediates — memory flags with their alias region, offsets, trap
//! and condition codes, callees (by symbol and signature), global values (by
//! structure and symbol), stack slots (side 1's slots are paired with side
//! 0's of equal size, alignment and kind; a pair shares one slot) and vector
//! immediates. Value operands and branch destinations are not part of the
//! key: differing operands become `select`s and differing destinations a
//! dispatch on the function identifier ([`super::codegen`]). A direct call
//! to either of the two functions (recursion, mutual recursion) is keyed as
//! a *member call*, so a self-call in one matches a self-call in the other.
//!
//! # Algorithm
//!
//! 1. *Block pairing* (HyFM): for each side-0 block in layout order, the
//!    unpaired side-1 block with the smallest Manhattan distance between
//!    opcode-frequency vectors (ties: the closer relative layout position,
//!    then the earlier block).
//! 2. *Instruction alignment* inside the candidate pair: Needleman–Wunsch
//!    with match score 1 and gap score 0 (a longest common subsequence of
//!    mergeable instructions), or HyFM's pairwise alignment (`i`-th with
//!    `i`-th). The pair is kept only if at least half the instructions of
//!    the smaller block (terminator included) match; otherwise both blocks
//!    stay unpaired, since a pairing without matches only adds dispatch code.
//!
//! Cost: pairing is `O(B0·B1·F)` for `B` blocks and `F` distinct opcodes per
//! block; Needleman–Wunsch is `O(n·m)` per block pair, and falls back to the
//! pairwise alignment above [`MAX_DP_CELLS`].

use cranelift_codegen::entity::SecondaryMap;
use cranelift_codegen::ir::{
    Block, ExternalName, FuncRef, Function, GlobalValue, GlobalValueData, Inst, InstructionData,
    StackSlot, Type, UserExternalName, Value,
};
use hashbrown::HashMap;

use super::fingerprint::is_constant;

/// Above this many DP cells a block pair is aligned pairwise instead.
pub const MAX_DP_CELLS: usize = 1 << 20;

/// How instructions inside paired blocks are aligned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum AlignMode {
    /// Needleman–Wunsch (longest common subsequence of mergeable instructions).
    #[default]
    NeedlemanWunsch,
    /// HyFM's linear pairwise alignment: position `i` with position `i`.
    Pairwise,
}

/// A symbol as the merger compares it: module symbols by their
/// [`UserExternalName`], anything else by its text.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum NameKey {
    User(UserExternalName),
    Other(String),
}

impl NameKey {
    pub fn of(func: &Function, name: &ExternalName) -> NameKey {
        match name {
            ExternalName::User(r) => NameKey::User(func.params.user_named_funcs()[*r].clone()),
            other => NameKey::Other(other.display(Some(&func.params)).to_string()),
        }
    }
}

/// A constant operand, comparable across functions.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ConstKey {
    Int(Type, i64),
    F16(u16),
    F32(u32),
    F64(u64),
    Vector(Type, Vec<u8>),
    Symbol {
        ty: Type,
        name: NameKey,
        offset: i64,
        colocated: bool,
    },
    FuncAddr {
        ty: Type,
        name: NameKey,
        signature: String,
        colocated: bool,
    },
}

/// One function prepared for alignment and code generation.
pub struct FuncView<'f> {
    pub func: &'f Function,
    /// Blocks in layout order.
    pub blocks: Vec<Block>,
    /// Per block, the non-constant, non-terminator instructions.
    pub body: SecondaryMap<Block, Vec<Inst>>,
    /// Per block, its terminator.
    pub terminator: SecondaryMap<Block, Option<Inst>>,
    /// Values defined by constant instructions.
    pub constants: HashMap<Value, ConstKey>,
    /// Interned mergeability key of every non-constant instruction.
    pub keys: SecondaryMap<Inst, u32>,
    /// Per block, its opcode frequencies (sorted sparse list).
    pub frequencies: SecondaryMap<Block, Vec<(u16, u32)>>,
}

/// What the keys of a pair depend on: the two functions' symbols (member
/// calls) and the stack-slot pairing.
pub struct KeyContext {
    pub members: [u32; 2],
    /// Side 1's slot → the side-0 slot it shares, if any.
    pub slot_partner: SecondaryMap<StackSlot, Option<StackSlot>>,
}

/// Interns key byte strings to small ids shared by both sides.
#[derive(Default)]
pub struct Interner {
    ids: HashMap<Vec<u8>, u32>,
}

impl Interner {
    fn intern(&mut self, key: Vec<u8>) -> u32 {
        let next = self.ids.len() as u32 + 1;
        *self.ids.entry(key).or_insert(next)
    }
}

/// Pairs side 1's stack slots with side 0's of equal size, alignment and
/// kind, first unpaired in order. Both never run in one frame, so a pair
/// can share storage.
pub fn pair_stack_slots(
    f0: &Function,
    f1: &Function,
) -> SecondaryMap<StackSlot, Option<StackSlot>> {
    let mut partner = SecondaryMap::new();
    let mut taken = std::collections::BTreeSet::new();
    for (s1, d1) in f1.sized_stack_slots.iter() {
        let found = f0.sized_stack_slots.iter().find(|(s0, d0)| {
            !taken.contains(s0)
                && d0.size == d1.size
                && d0.align_shift == d1.align_shift
                && d0.kind == d1.kind
        });
        if let Some((s0, _)) = found {
            taken.insert(s0);
            partner[s1] = Some(s0);
        }
    }
    partner
}

impl<'f> FuncView<'f> {
    /// Prepares side `side` of a pair.
    pub fn new(
        func: &'f Function,
        side: usize,
        context: &KeyContext,
        interner: &mut Interner,
    ) -> FuncView<'f> {
        let mut view = FuncView {
            func,
            blocks: func.layout.blocks().collect(),
            body: SecondaryMap::new(),
            terminator: SecondaryMap::new(),
            constants: HashMap::new(),
            keys: SecondaryMap::new(),
            frequencies: SecondaryMap::new(),
        };
        for &block in &view.blocks {
            let mut opcodes = Vec::new();
            for inst in func.layout.block_insts(block) {
                if is_constant(func, inst) {
                    let result = func.dfg.first_result(inst);
                    view.constants.insert(result, const_key(func, inst));
                    continue;
                }
                opcodes.push(func.dfg.insts[inst].opcode() as u16);
                view.keys[inst] = interner.intern(key(func, inst, side, context));
                if func.dfg.insts[inst].opcode().is_terminator() {
                    view.terminator[block] = Some(inst);
                } else {
                    view.body[block].push(inst);
                }
            }
            opcodes.sort_unstable();
            let mut counts: Vec<(u16, u32)> = Vec::new();
            for op in opcodes {
                match counts.last_mut() {
                    Some((last, n)) if *last == op => *n += 1,
                    _ => counts.push((op, 1)),
                }
            }
            view.frequencies[block] = counts;
        }
        view
    }

    /// The constant a value stands for, if it is one.
    pub fn constant(&self, value: Value) -> Option<&ConstKey> {
        self.constants.get(&self.func.dfg.resolve_aliases(value))
    }

    /// The instructions of `block` that are aligned, terminator last.
    pub fn len(&self, block: Block) -> usize {
        self.body[block].len() + usize::from(self.terminator[block].is_some())
    }
}

/// The constant key of a constant instruction.
pub fn const_key(func: &Function, inst: Inst) -> ConstKey {
    let ty = func.dfg.value_type(func.dfg.first_result(inst));
    match func.dfg.insts[inst] {
        InstructionData::UnaryImm { imm, .. } => ConstKey::Int(ty, imm.bits()),
        InstructionData::UnaryIeee16 { imm, .. } => ConstKey::F16(imm.bits()),
        InstructionData::UnaryIeee32 { imm, .. } => ConstKey::F32(imm.bits()),
        InstructionData::UnaryIeee64 { imm, .. } => ConstKey::F64(imm.bits()),
        InstructionData::UnaryConst {
            constant_handle, ..
        } => ConstKey::Vector(
            ty,
            func.dfg.constants.get(constant_handle).as_slice().to_vec(),
        ),
        InstructionData::UnaryGlobalValue { global_value, .. } => {
            match &func.global_values[global_value] {
                GlobalValueData::Symbol {
                    name,
                    offset,
                    colocated,
                    ..
                } => ConstKey::Symbol {
                    ty,
                    name: NameKey::of(func, name),
                    offset: offset.bits(),
                    colocated: *colocated,
                },
                other => unreachable!("not a constant global value: {other:?}"),
            }
        }
        InstructionData::FuncAddr { func_ref, .. } => {
            let ext = &func.dfg.ext_funcs[func_ref];
            ConstKey::FuncAddr {
                ty,
                name: NameKey::of(func, &ext.name),
                signature: func.dfg.signatures[ext.signature].to_string(),
                colocated: ext.colocated,
            }
        }
        ref other => unreachable!("not a constant instruction: {other:?}"),
    }
}

/// The member index (0 or 1) a direct call's callee is, if it is one.
pub fn member_callee(func: &Function, func_ref: FuncRef, members: [u32; 2]) -> Option<usize> {
    let ext = &func.dfg.ext_funcs[func_ref];
    let ExternalName::User(r) = ext.name else {
        return None;
    };
    let user = &func.params.user_named_funcs()[r];
    if user.namespace != crate::clif_module::SYMBOL_NAMESPACE {
        return None;
    }
    members.iter().position(|&m| m == user.index)
}

/// A byte string that builds a key.
#[derive(Default)]
struct KeyBytes(Vec<u8>);

impl KeyBytes {
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn text(&mut self, v: impl std::fmt::Display) {
        use std::io::Write as _;
        let _ = write!(self.0, "{v}");
        self.0.push(0xff);
    }
    fn ty(&mut self, ty: Type) {
        self.u64(u64::from(super::fingerprint::type_code(ty)) | (u64::from(ty.bits()) << 16));
    }
    fn name(&mut self, name: &NameKey) {
        match name {
            NameKey::User(u) => {
                self.u64(u64::from(u.namespace));
                self.u64(u64::from(u.index));
            }
            NameKey::Other(s) => self.text(s),
        }
    }
}

/// The mergeability key of a non-constant instruction (see the module doc).
fn key(func: &Function, inst: Inst, side: usize, context: &KeyContext) -> Vec<u8> {
    let dfg = &func.dfg;
    let mut k = KeyBytes::default();
    let data = &dfg.insts[inst];
    k.text(data.opcode());
    k.ty(dfg.ctrl_typevar(inst));
    for &r in dfg.inst_results(inst) {
        k.ty(dfg.value_type(r));
    }
    k.text("args");
    let is_return = data.opcode() == cranelift_codegen::ir::Opcode::Return;
    for &a in dfg.inst_args(inst) {
        let ty = dfg.value_type(a);
        // Integer returns of any width match: code generation extends the
        // narrower one to the merged function's return type.
        if is_return && ty.is_int() && !ty.is_vector() {
            k.text("int");
        } else {
            k.ty(ty);
        }
    }
    immediates(func, inst, side, context, &mut k);
    k.0
}

/// Feeds the immediates and entity references of `inst` to `k`.
fn immediates(func: &Function, inst: Inst, side: usize, context: &KeyContext, k: &mut KeyBytes) {
    use InstructionData as D;
    let dfg = &func.dfg;
    let flags = |k: &mut KeyBytes, f: cranelift_codegen::ir::MemFlags| {
        let data = dfg.mem_flags[f];
        k.text(data.with_alias_region(None));
        match data.alias_region() {
            Some(region) => k.u64(u64::from(dfg.alias_regions[region].user_id)),
            None => k.u64(u64::MAX),
        }
    };
    match dfg.insts[inst] {
        D::AtomicCas { flags: f, .. }
        | D::LoadNoOffset { flags: f, .. }
        | D::StoreNoOffset { flags: f, .. } => flags(k, f),
        D::AtomicRmw { flags: f, op, .. } => {
            flags(k, f);
            k.text(op);
        }
        D::Load {
            flags: f, offset, ..
        }
        | D::Store {
            flags: f, offset, ..
        } => {
            flags(k, f);
            k.u64(i64::from(offset) as u64);
        }
        D::BinaryImm8 { imm, .. } | D::TernaryImm8 { imm, .. } => k.u64(u64::from(imm)),
        D::CondTrap { code, .. } | D::Trap { code, .. } | D::IntAddTrap { code, .. } => {
            k.text(code)
        }
        D::IntCompare { cond, .. } => k.text(cond),
        D::FloatCompare { cond, .. } => k.text(cond),
        D::CallIndirect { sig_ref, .. } => k.text(&dfg.signatures[sig_ref]),
        D::Call { func_ref, .. } => match member_callee(func, func_ref, context.members) {
            // Which member is decided by code generation; the argument and
            // result types above already say whether the calls agree.
            Some(_) => k.text("member"),
            None => callee(func, func_ref, k),
        },
        D::FuncAddr { func_ref, .. } => callee(func, func_ref, k),
        D::StackAddr {
            stack_slot, offset, ..
        } => {
            let canonical = match side {
                0 => u64::from(stack_slot.as_u32()),
                _ => context.slot_partner[stack_slot]
                    .map_or(1 << 40 | u64::from(stack_slot.as_u32()), |s| {
                        u64::from(s.as_u32())
                    }),
            };
            k.u64(canonical);
            k.u64(i64::from(offset) as u64);
        }
        D::UnaryGlobalValue { global_value, .. } => global_value_key(func, global_value, k),
        D::Shuffle { imm, .. } => {
            let bytes = dfg.immediates.get(imm).map_or(&[][..], |c| c.as_slice());
            k.u64(bytes.len() as u64);
            k.0.extend_from_slice(bytes);
        }
        D::UnaryConst {
            constant_handle, ..
        } => {
            let bytes = dfg.constants.get(constant_handle).as_slice();
            k.u64(bytes.len() as u64);
            k.0.extend_from_slice(bytes);
        }
        D::UnaryImm { imm, .. } => k.u64(imm.bits() as u64),
        D::UnaryIeee16 { imm, .. } => k.u64(u64::from(imm.bits())),
        D::UnaryIeee32 { imm, .. } => k.u64(u64::from(imm.bits())),
        D::UnaryIeee64 { imm, .. } => k.u64(imm.bits()),
        // Ineligible functions never get here (see `super::ineligible`);
        // keep them apart anyway.
        D::BranchTable { .. }
        | D::TryCall { .. }
        | D::TryCallIndirect { .. }
        | D::DynamicStackAddr { .. }
        | D::ExceptionHandlerAddress { .. } => k.u64(u64::from(inst.as_u32()) | 1 << 63),
        D::Binary { .. }
        | D::Brif { .. }
        | D::Jump { .. }
        | D::MultiAry { .. }
        | D::NullAry { .. }
        | D::Ternary { .. }
        | D::Unary { .. } => {}
    }
}

/// A direct callee: symbol, signature, colocation, patchability.
fn callee(func: &Function, func_ref: FuncRef, k: &mut KeyBytes) {
    let ext = &func.dfg.ext_funcs[func_ref];
    k.name(&NameKey::of(func, &ext.name));
    k.text(&func.dfg.signatures[ext.signature]);
    k.u64(u64::from(ext.colocated) | u64::from(ext.patchable) << 1);
}

/// A global value by structure, its symbol by name.
fn global_value_key(func: &Function, gv: GlobalValue, k: &mut KeyBytes) {
    match &func.global_values[gv] {
        GlobalValueData::Symbol {
            name,
            offset,
            colocated,
            tls,
        } => {
            k.text("symbol");
            k.name(&NameKey::of(func, name));
            k.u64(offset.bits() as u64);
            k.u64(u64::from(*colocated) | u64::from(*tls) << 1);
        }
        GlobalValueData::Load {
            base,
            offset,
            global_type,
            flags,
        } => {
            k.text("load");
            k.u64(i64::from(*offset) as u64);
            k.ty(*global_type);
            k.text(func.dfg.mem_flags[*flags].with_alias_region(None));
            global_value_key(func, *base, k);
        }
        GlobalValueData::IAddImm {
            base,
            offset,
            global_type,
        } => {
            k.text("iadd_imm");
            k.u64(offset.bits() as u64);
            k.ty(*global_type);
            global_value_key(func, *base, k);
        }
        other => k.text(format_args!("{other:?}")),
    }
}

/// One step of a block alignment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Mergeable instructions, one per side.
    Both(Inst, Inst),
    /// An instruction of side 0 only.
    Left(Inst),
    /// An instruction of side 1 only.
    Right(Inst),
}

/// The alignment of one block pair's bodies, and whether the terminators
/// are mergeable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockAlignment {
    pub steps: Vec<Step>,
    pub terminators_match: bool,
}

impl BlockAlignment {
    /// Matched instructions, terminator included.
    pub fn matched(&self) -> usize {
        self.steps
            .iter()
            .filter(|s| matches!(s, Step::Both(..)))
            .count()
            + usize::from(self.terminators_match)
    }
}

/// The alignment of two functions.
#[derive(Clone)]
pub struct Alignment {
    /// Side 0's block → its side-1 partner, and the reverse.
    pub partner: [SecondaryMap<Block, Option<Block>>; 2],
    /// Per side-0 block with a partner, the alignment of the pair.
    pub blocks: SecondaryMap<Block, Option<BlockAlignment>>,
    /// Matched instructions over all pairs.
    pub matched: usize,
}

/// Pairs blocks and aligns their instructions (see the module doc).
pub fn align(v0: &FuncView, v1: &FuncView, mode: AlignMode) -> Alignment {
    let mut alignment = Alignment {
        partner: [SecondaryMap::new(), SecondaryMap::new()],
        blocks: SecondaryMap::new(),
        matched: 0,
    };
    let (n0, n1) = (v0.blocks.len(), v1.blocks.len());
    for (p0, &b0) in v0.blocks.iter().enumerate() {
        let best = v1
            .blocks
            .iter()
            .enumerate()
            .filter(|(_, &b1)| alignment.partner[1][b1].is_none())
            .min_by_key(|&(p1, &b1)| {
                (
                    distance(&v0.frequencies[b0], &v1.frequencies[b1]),
                    (p0 * n1).abs_diff(p1 * n0),
                    p1,
                )
            });
        let Some((_, &b1)) = best else {
            break;
        };
        let aligned = align_blocks(v0, b0, v1, b1, mode);
        let smaller = v0.len(b0).min(v1.len(b1));
        if aligned.matched() == 0 || 2 * aligned.matched() < smaller {
            continue;
        }
        alignment.matched += aligned.matched();
        alignment.partner[0][b0] = Some(b1);
        alignment.partner[1][b1] = Some(b0);
        alignment.blocks[b0] = Some(aligned);
    }
    alignment
}

/// Manhattan distance between sorted sparse frequency lists.
fn distance(a: &[(u16, u32)], b: &[(u16, u32)]) -> u32 {
    let (mut i, mut j, mut d) = (0, 0, 0);
    while i < a.len() || j < b.len() {
        match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) if x.0 == y.0 => {
                d += x.1.abs_diff(y.1);
                i += 1;
                j += 1;
            }
            (Some(x), Some(y)) if x.0 < y.0 => {
                d += x.1;
                i += 1;
            }
            (Some(x), None) => {
                d += x.1;
                i += 1;
            }
            (_, Some(y)) => {
                d += y.1;
                j += 1;
            }
            (None, None) => break,
        }
    }
    d
}

/// Aligns the bodies of `b0` and `b1`; terminators are compared apart.
pub(super) fn align_blocks(
    v0: &FuncView,
    b0: Block,
    v1: &FuncView,
    b1: Block,
    mode: AlignMode,
) -> BlockAlignment {
    let s0: Vec<(Inst, u32)> = v0.body[b0].iter().map(|&i| (i, v0.keys[i])).collect();
    let s1: Vec<(Inst, u32)> = v1.body[b1].iter().map(|&i| (i, v1.keys[i])).collect();
    let steps = match mode {
        AlignMode::NeedlemanWunsch if (s0.len() + 1) * (s1.len() + 1) <= MAX_DP_CELLS => {
            needleman_wunsch(&s0, &s1)
        }
        _ => pairwise(&s0, &s1),
    };
    let terminators_match = match (v0.terminator[b0], v1.terminator[b1]) {
        (Some(t0), Some(t1)) => v0.keys[t0] == v1.keys[t1],
        _ => false,
    };
    BlockAlignment {
        steps,
        terminators_match,
    }
}

/// Needleman–Wunsch with match 1, mismatch and gap 0: a longest common
/// subsequence of equal keys. Traceback prefers a match, then a gap in
/// side 1 (consuming side 0 first), so the result is deterministic.
fn needleman_wunsch(s0: &[(Inst, u32)], s1: &[(Inst, u32)]) -> Vec<Step> {
    let (n, m) = (s0.len(), s1.len());
    let width = m + 1;
    // score[i][j]: best alignment of the suffixes s0[i..], s1[j..].
    let mut score = vec![0u32; (n + 1) * width];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            let diagonal = if s0[i].1 == s1[j].1 {
                score[(i + 1) * width + j + 1] + 1
            } else {
                0
            };
            score[i * width + j] = diagonal
                .max(score[(i + 1) * width + j])
                .max(score[i * width + j + 1]);
        }
    }
    let mut steps = Vec::with_capacity(n.max(m));
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        if i < n
            && j < m
            && s0[i].1 == s1[j].1
            && score[i * width + j] == score[(i + 1) * width + j + 1] + 1
        {
            steps.push(Step::Both(s0[i].0, s1[j].0));
            i += 1;
            j += 1;
        } else if i < n && (j == m || score[i * width + j] == score[(i + 1) * width + j]) {
            steps.push(Step::Left(s0[i].0));
            i += 1;
        } else {
            steps.push(Step::Right(s1[j].0));
            j += 1;
        }
    }
    steps
}

/// HyFM's pairwise alignment: position `i` with position `i`.
fn pairwise(s0: &[(Inst, u32)], s1: &[(Inst, u32)]) -> Vec<Step> {
    let mut steps = Vec::with_capacity(s0.len().max(s1.len()));
    for k in 0..s0.len().max(s1.len()) {
        match (s0.get(k), s1.get(k)) {
            (Some(a), Some(b)) if a.1 == b.1 => steps.push(Step::Both(a.0, b.0)),
            (a, b) => {
                if let Some(a) = a {
                    steps.push(Step::Left(a.0));
                }
                if let Some(b) = b {
                    steps.push(Step::Right(b.0));
                }
            }
        }
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seq(keys: &[u32]) -> Vec<(Inst, u32)> {
        keys.iter()
            .enumerate()
            .map(|(i, &k)| (Inst::from_u32(i as u32), k))
            .collect()
    }

    #[test]
    fn needleman_wunsch_finds_the_longest_common_subsequence() {
        let a = seq(&[1, 2, 3, 4, 5]);
        let b = seq(&[1, 3, 9, 4, 5]);
        let steps = needleman_wunsch(&a, &b);
        let both = steps.iter().filter(|s| matches!(s, Step::Both(..))).count();
        assert_eq!(both, 4);
        // Every instruction of each side appears once, in order.
        let left: Vec<u32> = steps
            .iter()
            .filter_map(|s| match s {
                Step::Both(x, _) | Step::Left(x) => Some(x.as_u32()),
                Step::Right(_) => None,
            })
            .collect();
        assert_eq!(left, vec![0, 1, 2, 3, 4]);
    }

    #[test]
    fn pairwise_matches_positions_only() {
        let steps = pairwise(&seq(&[1, 2, 3]), &seq(&[1, 3]));
        assert_eq!(
            steps.iter().filter(|s| matches!(s, Step::Both(..))).count(),
            1
        );
        assert_eq!(steps.len(), 4);
    }
}
