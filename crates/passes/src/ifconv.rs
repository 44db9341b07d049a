//! If-conversion on CLIF: two-way joins become `select`s.
//!
//! A front end lowers `if c { a } else { b }` to a branch whose two paths
//! meet in a block parameter. Cranelift keeps that control flow as it came
//! (its e-graph rewrites within the data flow; nothing in it turns a CFG
//! into a `select`), so a clamp or a saturating add costs a compare, a
//! conditional branch, an unconditional branch around the other arm and
//! often a move on each edge. This pass executes the arms of small two-way
//! joins unconditionally and picks the joined values with `select`, which
//! aarch64 lowers to `cmp` + `csel`: straight-line code, no branch to
//! mispredict.
//!
//! It follows LLVM's SimplifyCFG, `FoldTwoEntryPHINode` and
//! `SpeculativelyExecuteBB` (`llvm/lib/Transforms/Utils/SimplifyCFG.cpp`),
//! which fold the same shapes under a cost budget, and the classic
//! if-conversion of Allen, Kennedy, Porterfield and Warren, "Conversion of
//! control dependence to data dependence" (POPL 1983), restricted as
//! LLVM restricts it: only two-way joins of straight-line arms whose
//! instructions may execute speculatively, so no guard ever predicates an
//! instruction with an effect (their paper guards every statement of
//! arbitrary acyclic regions; here a path's effects keep their branch).
//!
//! # Notation
//!
//! `H` is the block that branches, `brif c, T(..), F(..)`; an *arm* is a
//! block entered only from `H`, without parameters, whose terminator is
//! `jump J(..)`; `J` is the join. `t_i` and `f_i` are the values `J`'s `i`-th
//! parameter receives when `c` is non-zero and when it is zero.
//!
//! # Shapes
//!
//! - **Diamond**: `T` and `F` are both arms to the same `J`, and `J` has
//!   exactly these two predecessors.
//! - **Triangle**: `T` is an arm to `J = F` (or, mirrored, `F` an arm to
//!   `J = T`), and `J` has exactly the two predecessors `H` and the arm.
//!
//! # Algorithm
//!
//! For every block `H` in layout order that ends in a shape whose arms hold
//! only *speculable* instructions (pure and non-trapping: integer and float
//! arithmetic without division, compares, extensions, constants, `select`;
//! no memory access, call, division, trapping conversion or `trap`), and
//! whose cost the [`IfconvOptions`] accept:
//!
//! 1. the arms' instructions move, in order, before `H`'s branch;
//! 2. each parameter of `J` becomes `t_i` when `t_i = f_i` (no select),
//!    `t_i` when the parameter has no use, and `select c, t_i, f_i`
//!    otherwise — except for *boolean joins*, where `c`, `t_i` and `f_i`
//!    are 0/1 values of one type (compares, the constants 0 and 1, and
//!    `band`/`bor`/`bxor` of such): `t_i = 1` (or `c`) and `f_i = 0` (or
//!    `c`) is `c` itself, `t_i = 1` (or `c`) is `bor c, f_i`, `f_i = 0` (or
//!    `c`) is `band c, t_i`. These are Pare's `a || b` and `a && b`, which
//!    the front end lowers to triangles: a chain of `||` becomes a chain
//!    of `bor`s, each link's condition the previous `bor`;
//! 3. the branch and the arms' jumps go, `J`'s instructions are appended to
//!    `H` and `J`'s parameters become aliases of the values of step 2: `H`,
//!    the arms and `J` are one block.
//!
//! The sweep repeats until nothing changes: an `if` nested in an arm makes
//! that arm a branch, and once converted the outer shape's arm is straight
//! line. `J`'s own terminator may start the next shape at `H`.
//!
//! # Cost
//!
//! In aarch64 instruction words, as Cranelift lowers the shapes
//! (`filetests/ifconv`, `ifconv_never_grows_aarch64_code`): the branch is a
//! compare and a `b.cond` when `c` is an `icmp`/`fcmp` (2 words), a
//! `cbnz` otherwise (1); a diamond's first arm ends in a `b` around the
//! other (1). Each `select` is a compare and a `csel`/`fcsel` (2: Cranelift
//! lowers every `select` of an `icmp` with its own `cmp`, and a `select` of
//! another value with a `cmp #0`); a boolean join's `bor`/`band` is 1, plus
//! a `cset` when `c` is a compare that only the branch read (`c` itself:
//! only the `cset`). The arms' instructions are emitted either way, once.
//! So the rewrite changes the size by `joins − branch − [diamond]` words,
//! ignoring the moves the join's parameters needed on each edge (which it
//! saves, so the estimate errs on the side of refusing: a triangle with two
//! selects, 28 → 24 bytes in `filetests/ifconv/cost.clif`, stays): under
//! [`IfconvOptions::no_larger`] only shapes where this is `≤ 0` convert — a
//! triangle or a diamond with one select, any link of an `||` or `&&`
//! chain. A diamond one of whose arms is empty costs no `b` (Cranelift
//! threads the empty arm's edge to the join). A shape estimated at `≤ 0`
//! may still grow the code: its arms' values and the value they replace
//! are now live at once, and register allocation may need a move
//! elsewhere (bench/matrix's `det_mod`, +4 bytes, and bench/backtrack's
//! `solve`, +8). So with a target ISA ([`run_measured`], what the pipeline
//! runs at `-Oz`, the level that measures; at `-Os` the compilations cost
//! 12% of its compile time on bench/ and the estimate decides alone) a
//! function with a conversion is compiled before and after; if it
//! grew, only the conversions estimated smaller are made (if some were
//! estimated *neutral*, at `0`), and none if it still grows. Only
//! functions with a conversion are compiled, at most three times. Under
//! [`IfconvOptions::max_speculated`] the arms together may hold at most that
//! many instructions, and the join at most that many selects and boolean
//! joins. Selects of
//! `i128` and vectors, which take several instructions, are not made.
//!
//! Levels: `-Os` and `-Oz` use the size policy (no larger, any arm length,
//! measured at `-Oz`; see docs/DESIGN.md, "If-conversion"), `-O2` the
//! speed policy: at most four speculated instructions and four selects, LLVM's
//! `two-entry-phi-node-folding-threshold` (4): on an out-of-order aarch64
//! core four single-cycle operations and a `csel` cost about as much as a
//! well-predicted branch and far less than a mispredicted one (10-15
//! cycles).
//!
//! # Invariants
//!
//! - The output passes Cranelift's verifier and computes what the input
//!   did: only instructions without effects or traps execute on a path
//!   that did not execute them before, and every value keeps its
//!   definition (the arms' values dominate `J` after the move, as `H`
//!   dominated them before).
//! - Only CLIF: every rule holds for every type `select` takes (integers,
//!   floats; conditions of any integer type, non-zero meaning the first
//!   target, as `brif` reads them).
//! - Linear per sweep (the control-flow graph is recomputed after each
//!   conversion: quadratic only in the number of converted shapes of one
//!   function); sweeps are bounded by the nesting depth of the shapes.
//!
//! # Place in the pipeline
//!
//! A named pass (`ifconv`, `ifconv-speed`) right after `combine`, the last
//! CLIF passes: after the mergers, so their hashes and alignments see the
//! code the front end wrote (converting first would change which bodies
//! are identical; any program's branches would merge as well as its
//! selects, but the merge plans of earlier rounds and cgdata were built
//! from branches), and after `combine`, whose address rule reuses `iadd`s
//! along chains of blocks that this pass would otherwise join.
//!
//! References (docs/DESIGN.md): [IFCONV], [SIMPLIFYCFG].

use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::entity::SecondaryMap;
use cranelift_codegen::flowgraph::ControlFlowGraph;
use cranelift_codegen::ir::{
    Block, Function, Inst, InstBuilder, InstructionData, Opcode, Value, ValueDef,
};
use cranelift_codegen::isa::TargetIsa;
use std::fmt;

use crate::clif_module::ClifModule;
use crate::code_cache::code_size;
use crate::remark::Remark;
use crate::size_model::{self, used_values};

/// When a shape is converted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IfconvOptions {
    /// Only when the estimated aarch64 code is no larger (module doc, Cost).
    pub no_larger: bool,
    /// Only when the estimated aarch64 code is smaller (what
    /// [`run_measured`] falls back to).
    pub smaller: bool,
    /// At most this many speculated instructions and this many selects.
    pub max_speculated: Option<usize>,
}

impl IfconvOptions {
    /// `-Os` and `-Oz`: never larger, whatever the arms' length.
    pub const SIZE: IfconvOptions = IfconvOptions {
        no_larger: true,
        smaller: false,
        max_speculated: None,
    };
    /// `-O2`: up to four speculated instructions and four selects.
    pub const SPEED: IfconvOptions = IfconvOptions {
        no_larger: false,
        smaller: false,
        max_speculated: Some(4),
    };
}

/// What the pass found and did in a function (or, summed, a module).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IfconvStats {
    /// Diamonds converted.
    pub diamonds: u64,
    /// Triangles converted.
    pub triangles: u64,
    /// Selects made.
    pub selects: u64,
    /// Joins of 0/1 values made `bor`/`band` of the condition, or the
    /// condition itself, instead of selects.
    pub boolean: u64,
    /// Instructions that now execute on both paths.
    pub speculated: u64,
    /// Of the shapes converted, those estimated at no change in size.
    pub neutral: u64,
    /// Functions whose conversions [`run_measured`] undid in part or in
    /// whole because Cranelift's code for them grew.
    pub measured_back: u64,
    /// Shapes left because an arm has an effect, may trap, or the join
    /// would need a select of a type it cannot have cheaply.
    pub refused_unsafe: u64,
    /// Shapes left by the cost rule of the options.
    pub refused_cost: u64,
}

impl IfconvStats {
    pub fn accumulate(&mut self, other: &IfconvStats) {
        self.diamonds += other.diamonds;
        self.triangles += other.triangles;
        self.selects += other.selects;
        self.boolean += other.boolean;
        self.speculated += other.speculated;
        self.neutral += other.neutral;
        self.measured_back += other.measured_back;
        self.refused_unsafe += other.refused_unsafe;
        self.refused_cost += other.refused_cost;
    }

    /// The counters by name, as remarks carry them (docs/REMARKS.md).
    pub fn counters(&self) -> [(&'static str, u64); 9] {
        [
            ("diamonds", self.diamonds),
            ("triangles", self.triangles),
            ("selects", self.selects),
            ("boolean", self.boolean),
            ("speculated", self.speculated),
            ("neutral", self.neutral),
            ("measured_back", self.measured_back),
            ("refused_unsafe", self.refused_unsafe),
            ("refused_cost", self.refused_cost),
        ]
    }

    /// Shapes converted.
    pub fn converted(&self) -> u64 {
        self.diamonds + self.triangles
    }
}

impl fmt::Display for IfconvStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} diamonds, {} triangles converted ({} selects, {} boolean joins, {} instructions speculated, {} estimated neutral), {} refused as unsafe, {} by cost, {} functions measured back",
            self.diamonds,
            self.triangles,
            self.selects,
            self.boolean,
            self.speculated,
            self.neutral,
            self.refused_unsafe,
            self.refused_cost,
            self.measured_back
        )
    }
}

/// What the pass did to a module: its statistics and one remark per
/// function with a shape (converted: passed; all refused: missed).
#[derive(Clone, Debug, Default)]
pub struct IfconvReport {
    pub stats: IfconvStats,
    pub remarks: Vec<Remark>,
}

/// Converts the shapes of every function of `module`.
/// With `measure`, the size policy checks its neutral conversions in
/// Cranelift's bytes for that ISA ([`run_measured`]).
pub fn run_module(
    module: &mut ClifModule,
    options: &IfconvOptions,
    measure: Option<&dyn TargetIsa>,
) -> IfconvReport {
    let mut report = IfconvReport::default();
    for def in &mut module.functions {
        let stats = match measure {
            Some(isa) if *options == IfconvOptions::SIZE => run_measured(&mut def.func, isa),
            _ => run(&mut def.func, options),
        };
        report.stats.accumulate(&stats);
        if stats == IfconvStats::default() {
            continue;
        }
        let name = def.symbol_name(&module.symbols);
        let remark = if stats.converted() > 0 {
            Remark::passed("ifconv", "if-converted", name, stats.to_string())
        } else {
            Remark::missed("ifconv", "not-if-converted", name, stats.to_string())
        };
        let remark = remark
            .in_module(&module.name)
            .nonzero_counts(stats.counters());
        report.remarks.push(remark);
    }
    report
}

/// Converts every shape of `func` the options accept (module doc).
pub fn run(func: &mut Function, options: &IfconvOptions) -> IfconvStats {
    let mut stats = IfconvStats::default();
    let mut cfg = ControlFlowGraph::with_function(func);
    // Refusals are counted in the last sweep only (earlier sweeps see the
    // same shapes again).
    loop {
        let mut changed = false;
        let mut refused = IfconvStats::default();
        let blocks: Vec<Block> = func.layout.blocks().collect();
        let used = used_values(func);
        let reachable = reachable_blocks(func, &cfg);
        for head in blocks {
            // Unreachable code is left alone: a cycle of unreachable
            // blocks could make a join feed itself.
            if !func.layout.is_block_inserted(head) || !reachable[head] {
                continue;
            }
            let Some(shape) = find_shape(func, &cfg, head) else {
                continue;
            };
            match judge(func, &shape, &used, options) {
                Verdict::Convert(conversion) => {
                    stats.neutral += u64::from(conversion.neutral);
                    convert(func, &shape, &conversion.incoming, &mut stats);
                    cfg.compute(func);
                    changed = true;
                }
                Verdict::Unsafe => refused.refused_unsafe += 1,
                Verdict::TooCostly => refused.refused_cost += 1,
            }
        }
        if !changed {
            stats.refused_unsafe = refused.refused_unsafe;
            stats.refused_cost = refused.refused_cost;
            break;
        }
    }
    if stats.converted() > 0 {
        func.dfg.resolve_all_aliases();
    }
    stats
}

/// The blocks reachable from the entry block. Conversions keep the set:
/// they merge reachable blocks into reachable blocks.
fn reachable_blocks(func: &Function, cfg: &ControlFlowGraph) -> SecondaryMap<Block, bool> {
    let mut reachable = SecondaryMap::new();
    let mut stack: Vec<Block> = func.layout.entry_block().into_iter().collect();
    while let Some(block) = stack.pop() {
        if reachable[block] {
            continue;
        }
        reachable[block] = true;
        stack.extend(cfg.succ_iter(block).filter(|&s| !reachable[s]));
    }
    reachable
}

/// [`run`] by the size policy, checked in Cranelift's bytes for `isa`:
/// when the function's code grew, only the conversions estimated smaller
/// are made (if some were estimated neutral), and none if the code still
/// grows (module doc, Cost).
pub fn run_measured(func: &mut Function, isa: &dyn TargetIsa) -> IfconvStats {
    let original = func.clone();
    let stats = run(func, &IfconvOptions::SIZE);
    if stats.converted() == 0 {
        return stats;
    }
    let Some(before) = code_size(&original, isa, None) else {
        return stats;
    };
    if code_size(func, isa, None).is_some_and(|after| after <= before) {
        return stats;
    }
    *func = original.clone();
    let smaller = IfconvOptions {
        smaller: true,
        ..IfconvOptions::SIZE
    };
    let mut fallback = if stats.neutral > 0 {
        run(func, &smaller)
    } else {
        IfconvStats::default()
    };
    if fallback.converted() > 0 && code_size(func, isa, None).is_none_or(|after| after > before) {
        *func = original;
        fallback = IfconvStats {
            refused_unsafe: stats.refused_unsafe,
            refused_cost: stats.refused_cost + stats.converted(),
            ..IfconvStats::default()
        };
    }
    fallback.measured_back = 1;
    fallback
}

/// A diamond or triangle ending at `head` (module doc, Shapes).
struct Shape {
    head: Block,
    branch: Inst,
    cond: Value,
    /// The arms, the `then` arm first; one for a triangle.
    arms: Vec<Block>,
    join: Block,
    /// What the join's parameters receive when `cond` is non-zero / zero.
    then_args: Vec<Value>,
    else_args: Vec<Value>,
}

impl Shape {
    fn is_diamond(&self) -> bool {
        self.arms.len() == 2
    }
}

/// The values a branch passes, aliases resolved (`None` if one is not a
/// plain value).
fn plain_args(func: &Function, call: &cranelift_codegen::ir::BlockCall) -> Option<Vec<Value>> {
    call.args(&func.dfg.value_lists)
        .map(|arg| Some(func.dfg.resolve_aliases(arg.as_value()?)))
        .collect()
}

/// `block` as an arm of `head`: entered only from `head`'s branch, without
/// parameters, ending in a `jump`. Returns the jump's target and arguments.
fn arm_of(
    func: &Function,
    cfg: &ControlFlowGraph,
    head: Block,
    block: Block,
) -> Option<(Block, Vec<Value>)> {
    if block == head
        || Some(block) == func.layout.entry_block()
        || !func.dfg.block_params(block).is_empty()
    {
        return None;
    }
    let mut preds = cfg.pred_iter(block);
    match (preds.next(), preds.next()) {
        (Some(p), None) if p.block == head => {}
        _ => return None,
    }
    let last = func.layout.last_inst(block)?;
    match &func.dfg.insts[last] {
        InstructionData::Jump { destination, .. } => {
            let target = destination.block(&func.dfg.value_lists);
            Some((target, plain_args(func, destination)?))
        }
        _ => None,
    }
}

/// Whether `join` has exactly the predecessors `a` and `b`.
fn joins_exactly(cfg: &ControlFlowGraph, join: Block, a: Block, b: Block) -> bool {
    let preds: Vec<Block> = cfg.pred_iter(join).map(|p| p.block).collect();
    preds.len() == 2 && preds.contains(&a) && preds.contains(&b)
}

fn find_shape(func: &Function, cfg: &ControlFlowGraph, head: Block) -> Option<Shape> {
    let branch = func.layout.last_inst(head)?;
    let InstructionData::Brif { arg, blocks, .. } = &func.dfg.insts[branch] else {
        return None;
    };
    let pool = &func.dfg.value_lists;
    let (t, f) = (blocks[0].block(pool), blocks[1].block(pool));
    if t == f {
        return None;
    }
    let valid_join = |join: Block| {
        join != head && Some(join) != func.layout.entry_block() && join != t && join != f
    };
    let shape =
        |arms: Vec<Block>, join: Block, then_args: Vec<Value>, else_args: Vec<Value>| Shape {
            head,
            branch,
            cond: func.dfg.resolve_aliases(*arg),
            arms,
            join,
            then_args,
            else_args,
        };
    let then_arm = arm_of(func, cfg, head, t);
    let else_arm = arm_of(func, cfg, head, f);
    match (then_arm, else_arm) {
        (Some((jt, at)), Some((jf, af))) if jt == jf => {
            (valid_join(jt) && joins_exactly(cfg, jt, t, f)).then(|| shape(vec![t, f], jt, at, af))
        }
        (Some((jt, at)), _) if jt == f => {
            let join_ok = f != head && Some(f) != func.layout.entry_block();
            let af = plain_args(func, &blocks[1])?;
            (join_ok && joins_exactly(cfg, f, head, t)).then(|| shape(vec![t], f, at, af))
        }
        (_, Some((jf, af))) if jf == t => {
            let join_ok = t != head && Some(t) != func.layout.entry_block();
            let at = plain_args(func, &blocks[0])?;
            (join_ok && joins_exactly(cfg, t, head, f)).then(|| shape(vec![f], t, at, af))
        }
        _ => None,
    }
}

/// How a shape is converted.
struct Conversion {
    /// What each parameter of the join receives.
    incoming: Vec<Incoming>,
    /// Whether the estimate is no change in size (module doc, Cost).
    neutral: bool,
}

enum Verdict {
    Convert(Conversion),
    Unsafe,
    TooCostly,
}

/// Whether `inst` may execute on a path that did not execute it: no
/// effect, no trap, and cheap (no division even where it cannot trap).
pub(crate) fn speculable(func: &Function, inst: Inst) -> bool {
    use Opcode::*;
    let opcode = func.dfg.insts[inst].opcode();
    matches!(
        opcode,
        Iconst
            | F32const
            | F64const
            | Iadd
            | Isub
            | Ineg
            | Iabs
            | Imul
            | Umulhi
            | Smulhi
            | Smin
            | Smax
            | Umin
            | Umax
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
            | Cls
            | Ctz
            | Popcnt
            | Bitrev
            | Bswap
            | Bmask
            | Icmp
            | Fcmp
            | Select
            | Uextend
            | Sextend
            | Ireduce
            | Fadd
            | Fsub
            | Fmul
            | Fneg
            | Fabs
            | Fcopysign
            | Fmin
            | Fmax
            | Fpromote
            | Fdemote
            | FcvtFromSint
            | FcvtFromUint
            | FcvtToSintSat
            | FcvtToUintSat
    ) && !func.dfg.inst_results(inst).iter().any(|&v| {
        let ty = func.dfg.value_type(v);
        ty.is_vector() || ty.bits() > 64
    })
}

/// Words the branch takes: `cmp` + `b.cond` when the condition is a compare
/// Cranelift lowers into flags, `cbnz` otherwise.
fn branch_words(func: &Function, cond: Value) -> i64 {
    let is_compare = match func.dfg.value_def(cond) {
        ValueDef::Result(inst, _) => {
            matches!(func.dfg.insts[inst].opcode(), Opcode::Icmp | Opcode::Fcmp)
        }
        _ => false,
    };
    if is_compare {
        2
    } else {
        1
    }
}

/// The arms' instructions, without their jumps.
fn arm_body(func: &Function, arm: Block) -> Vec<Inst> {
    let last = func.layout.last_inst(arm);
    func.layout
        .block_insts(arm)
        .filter(|&i| Some(i) != last)
        .collect()
}

/// What a parameter of the join becomes (module doc, step 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Incoming {
    /// The `then` value: both edges pass it, or the parameter has no use.
    Then,
    /// `cond` itself: the edges pass 1 and 0, and `cond` is a 0/1 value
    /// of the parameter's type.
    Cond,
    /// `bor cond, f`: the `then` edge passes 1 (or `cond`), both are 0/1
    /// values.
    Or,
    /// `band cond, t`: the `else` edge passes 0 (or `cond`), both are 0/1
    /// values.
    And,
    /// `select cond, t, f`.
    Select,
}

/// The constant `value` is, if an `iconst` defines it (aliases resolved).
fn constant(func: &Function, value: Value) -> Option<i64> {
    size_model::constant(func, func.dfg.resolve_aliases(value))
}

/// Whether `value` is always 0 or 1: a compare, the constant 0 or 1, or
/// `band`/`bor`/`bxor` of such values (what `&&` and `||` join into once
/// converted), looked through to a small depth.
fn is_boolean(func: &Function, value: Value, depth: u32) -> bool {
    let value = func.dfg.resolve_aliases(value);
    if matches!(constant(func, value), Some(0 | 1)) {
        return true;
    }
    let Some(inst) = func.dfg.value_def(value).inst() else {
        return false;
    };
    match func.dfg.insts[inst].opcode() {
        Opcode::Icmp | Opcode::Fcmp => true,
        Opcode::Band | Opcode::Bor | Opcode::Bxor if depth > 0 => func
            .dfg
            .inst_args(inst)
            .iter()
            .all(|&a| is_boolean(func, a, depth - 1)),
        _ => false,
    }
}

/// What each of the join's parameters becomes. `used` may say a value is
/// used that no longer is (the sweep computed it before its last
/// conversions), never the other way round: what a conversion makes uses
/// only values its branches already passed.
fn incoming(func: &Function, shape: &Shape, used: &SecondaryMap<Value, bool>) -> Vec<Incoming> {
    let params = func.dfg.block_params(shape.join);
    let cond_type = func.dfg.value_type(shape.cond);
    let boolean_cond = is_boolean(func, shape.cond, 4);
    (0..shape.then_args.len())
        .map(|i| {
            let (t, f) = (shape.then_args[i], shape.else_args[i]);
            if t == f || !used[params[i]] {
                return Incoming::Then;
            }
            if !boolean_cond || func.dfg.value_type(params[i]) != cond_type {
                return Incoming::Select;
            }
            // `cond` is 1 on the `then` edge and 0 on the other.
            let then_one = t == shape.cond || constant(func, t) == Some(1);
            let else_zero = f == shape.cond || constant(func, f) == Some(0);
            match (then_one, else_zero) {
                (true, true) => Incoming::Cond,
                (true, false) if is_boolean(func, f, 4) => Incoming::Or,
                (false, true) if is_boolean(func, t, 4) => Incoming::And,
                _ => Incoming::Select,
            }
        })
        .collect()
}

/// Words of what `incoming` makes (module doc, Cost): a select is a
/// compare and a `csel`; `cond` as a value costs a `cset` when it was a
/// compare only the branch read; `bor`/`band` one word more.
fn incoming_words(incoming: &[Incoming], compare_cond: bool) -> i64 {
    let cset = i64::from(compare_cond);
    incoming
        .iter()
        .map(|k| match k {
            Incoming::Then => 0,
            Incoming::Cond => cset,
            Incoming::Or | Incoming::And => 1 + cset,
            Incoming::Select => 2,
        })
        .sum()
}

fn judge(
    func: &Function,
    shape: &Shape,
    used: &SecondaryMap<Value, bool>,
    options: &IfconvOptions,
) -> Verdict {
    let body: Vec<Inst> = shape.arms.iter().flat_map(|&a| arm_body(func, a)).collect();
    if !body.iter().all(|&i| speculable(func, i)) {
        return Verdict::Unsafe;
    }
    let incoming = incoming(func, shape, used);
    let params = func.dfg.block_params(shape.join);
    let wide = params.iter().zip(&incoming).any(|(&p, &k)| {
        let ty = func.dfg.value_type(p);
        k == Incoming::Select && (ty.is_vector() || ty.bits() > 64)
    });
    if wide {
        return Verdict::Unsafe;
    }
    let branch = branch_words(func, shape.cond);
    // A diamond's `b` around the other arm: not when an arm is empty, whose
    // edge Cranelift threads straight to the join (it is a triangle then).
    let around = shape.is_diamond() && shape.arms.iter().all(|&a| !arm_body(func, a).is_empty());
    let saved = branch + i64::from(around);
    let change = incoming_words(&incoming, branch == 2) - saved;
    if (options.no_larger && change > 0) || (options.smaller && change >= 0) {
        return Verdict::TooCostly;
    }
    if let Some(cap) = options.max_speculated {
        let made = incoming.iter().filter(|&&k| k != Incoming::Then).count();
        if body.len() > cap || made > cap {
            return Verdict::TooCostly;
        }
    }
    Verdict::Convert(Conversion {
        incoming,
        neutral: change == 0,
    })
}

/// Rewrites `shape` into one straight-line block (module doc, Algorithm).
fn convert(func: &mut Function, shape: &Shape, incoming: &[Incoming], stats: &mut IfconvStats) {
    // 1. The arms' instructions move before the branch; the arms go.
    for &arm in &shape.arms {
        for inst in arm_body(func, arm) {
            func.layout.remove_inst(inst);
            func.layout.insert_inst(inst, shape.branch);
            stats.speculated += 1;
        }
        func.layout.remove_block_and_insts(arm);
    }
    // 2. What each of the join's parameters receives.
    let mut cursor = FuncCursor::new(func).at_inst(shape.branch);
    let (c, t, f) = (shape.cond, &shape.then_args, &shape.else_args);
    let values: Vec<Value> = incoming
        .iter()
        .enumerate()
        .map(|(i, kind)| {
            match kind {
                Incoming::Then => {}
                Incoming::Select => stats.selects += 1,
                _ => stats.boolean += 1,
            }
            match kind {
                Incoming::Then => t[i],
                Incoming::Cond => c,
                Incoming::Or => cursor.ins().bor(c, f[i]),
                Incoming::And => cursor.ins().band(c, t[i]),
                Incoming::Select => cursor.ins().select(c, t[i], f[i]),
            }
        })
        .collect();
    // 3. The join becomes the rest of the head.
    func.layout.remove_inst(shape.branch);
    let params = func.dfg.detach_block_params(shape.join);
    for (i, &value) in values.iter().enumerate() {
        let param = params
            .get(i, &func.dfg.value_lists)
            .expect("one value per parameter");
        func.dfg.change_to_alias(param, value);
    }
    while let Some(inst) = func.layout.first_inst(shape.join) {
        func.layout.remove_inst(inst);
        func.layout.append_inst(inst, shape.head);
    }
    func.layout.remove_block(shape.join);
    if shape.is_diamond() {
        stats.diamonds += 1;
    } else {
        stats.triangles += 1;
    }
}
