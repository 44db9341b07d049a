//! Code generation: one function that does what two aligned functions did,
//! chosen by a function identifier ([HYFM] §3.2 on [SALSSA]'s code
//! generator: Rocha et al., *Effective Function Merging in the SSA Form*,
//! PLDI 2020; full references in docs/DESIGN.md).
//!
//! # Notation
//!
//! `M` is the merged function, `fid` its last parameter (`i32`: 0 runs side
//! 0, 1 runs side 1). `Pk(i)` is the position in `M`'s parameter list of
//! side `k`'s parameter `i` ([`Merged::positions`]). A *unit* is a paired
//! block or a block of one side; `rep(k, b)` is the block of `M` standing for
//! side `k`'s block `b`.
//!
//! # Construction
//!
//! - *Parameters* (SalSSA): side 0's parameters come first; each side-1
//!   parameter reuses a side-0 parameter of the same type — the one it
//!   appears beside most often as the same operand of matched instructions,
//!   then the one at its own position — or gets a new position. `fid` is
//!   last, so a thunk leaves its own arguments where they are.
//! - *Returns*: equal return lists are kept; otherwise each position takes
//!   the wider of two integer types (a missing position counts as absent),
//!   and a side whose returns differ is *widened*: its values are
//!   zero-extended (and missing ones are zero) on return, and its callers
//!   narrow them. Any other difference refuses the merge.
//! - *Instructions*: a matched pair is emitted once, with `select fid, b, a`
//!   for each operand pair `a`, `b` that differs (two integer `return`s of
//!   different widths match: each side's value is extended first). A run
//!   of unmatched instructions that are all pure and cannot trap is
//!   *speculated*: both sides' parts run in the shared block and a
//!   `select` joins each pair of results that share a variable. Any other
//!   run becomes `brif fid, side1, side0` to blocks holding each side's
//!   part and a join. Unmatched terminators end their block the same way,
//!   without a join. Speculation matters beyond the branch it saves:
//!   Cranelift's e-graph places a pure value at its uses, so a value both
//!   arms of a dispatch use is computed once in each arm. Constants (see
//!   `fingerprint::is_constant`) are rematerialised where used, so two
//!   different constants cost one `select`.
//! - *Control flow*: a matched branch goes to `rep(0, t0)` when its two
//!   targets are paired; otherwise to a dispatch block `brif fid, e1, e0`.
//!   Block arguments travel through edge blocks (or, before a `jump`, the
//!   block itself) that assign the target's parameters.
//! - *Member calls* (a direct call of either function, recursion included)
//!   call `M` directly with the arguments placed by `Pc` for callee `c` and
//!   `fid = c` (for a matched pair, `fid` itself or `fid ^ 1` when the two
//!   calls go to different members).
//! - *Stack slots*: side 1's slots share side 0's slot of equal size,
//!   alignment and kind (see `align::pair_stack_slots`); memory flags are
//!   copied with their alias regions, by user id.
//!
//! # SSA repair
//!
//! Every value of either function is a `cranelift_frontend` variable, and
//! `M` is built with `FunctionBuilder`, whose SSA construction (Braun et
//! al., *Simple and Efficient Construction of Static Single Assignment
//! Form*, CC 2013) inserts a block parameter wherever definitions from two
//! paths meet, exactly SalSSA's phi placement. Two values *share* a
//! variable (union-find) when the alignment says so — the results of a
//! matched pair, the parameters at one position of paired blocks (same
//! type), function parameters at one position — or, to save `select`s and
//! block parameters, when they are *private* values (results of unmatched
//! instructions, parameters of unpaired blocks, function parameters) that
//! a matched instruction uses at the same operand, or results of the same
//! type in one unmatched run. A shared variable is only ever defined by
//! code that runs for both sides with a merged value, or by code of one
//! side with that side's value; a private variable may be defined anywhere,
//! because the other side never reads it. A variable not defined on some
//! path reads as zero there (the builder's default). Such a path is one of
//! the other side, where the value is never used. Afterwards what
//! Cranelift's `optimize` starts with is done here too (unreachable blocks,
//! block parameters with a single incoming value, aliases), and blocks that
//! only forward control are removed, so that the model prices the function
//! Cranelift will compile.
//!
//! This is where F3M §III-E found HyFM's bugs: HyFM repairs the SSA
//! violations it cannot solve with phis by storing to and reloading from
//! the stack, and placed the store wrongly after a phi followed by phis and
//! after an invoke used by a successor's phi, leaving undefined values.
//! Here nothing goes through memory: block parameters are variables like
//! any other value, and a definition by the last instruction of a block
//! reaches a successor's parameter through the edge's assignment.

use cranelift_codegen::entity::SecondaryMap;
use cranelift_codegen::ir::instructions::InstructionMapper;
use cranelift_codegen::ir::{
    self, types, AbiParam, Block, BlockArg, BlockCall, ExtFuncData, ExternalName, FuncRef,
    Function, Inst, InstBuilder, InstBuilderBase, InstructionData, Opcode, Signature, StackSlot,
    Type, UserFuncName, Value, ValueList,
};
use cranelift_codegen::isa::{CallConv, TargetFrontendConfig};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use hashbrown::HashMap;

use crate::clif_module::ClifModule;

mod cleanup;
mod copy;

use cleanup::clean_up;
use copy::{Entities, Mapper};

use super::align::{member_callee, Alignment, BlockAlignment, ConstKey, FuncView, Step};
use super::regions::RegionPlan;

/// The type of the function identifier.
pub const FID_TYPE: Type = types::I32;

/// Everything code generation needs about a pair.
pub struct Pair<'a> {
    pub views: [&'a FuncView<'a>; 2],
    pub alignment: &'a Alignment,
    /// Side 1's stack slot → the side-0 slot it shares.
    pub slot_partner: &'a SecondaryMap<StackSlot, Option<StackSlot>>,
    /// The symbols of side 0 and side 1.
    pub members: [u32; 2],
    /// The symbol `M` will have.
    pub merged_symbol: u32,
    /// At most this many parameters in `M`, `fid` included.
    pub max_params: usize,
    /// The regions whose blocks the alignment left unpaired to be copied
    /// whole ([`super::regions`]); empty: dispatch per instruction only.
    pub regions: &'a RegionPlan,
}

/// The merged function and how to call it for each side.
pub struct Merged {
    pub func: Function,
    /// `positions[k][i]`: where side `k`'s parameter `i` goes in `M`.
    pub positions: [Vec<usize>; 2],
    /// Whether side `k`'s return types differ from `M`'s.
    pub widened: [bool; 2],
    /// `select`s emitted for differing operands.
    pub selects: usize,
    /// Dispatch branches on `fid` emitted (unmatched runs, terminators and
    /// diverging destinations).
    pub dispatches: usize,
    /// Tests of `fid` in `M` as compiled (after the clean-up), by kind.
    pub tests: FidTests,
}

/// Where `M` tests its identifier, as compiled (after the clean-up): the
/// branches that enter a region ([`super::regions`]), and the
/// instruction-level tests by what they cost a loop that runs them.
///
/// A `select` on `fid` whose two operands do not change in its loop
/// (constants, parameters, values computed before the loop) costs nothing
/// per iteration: Cranelift's e-graph places a pure value in the
/// outermost loop where its operands are available. What costs is a
/// branch on `fid` other than a region's entry, a `select` of values the
/// loop computes, and a `select` that becomes the divisor of a division
/// or remainder, which a constant divisor would have turned into a
/// multiplication (measured on bench/: merging `det_mod<P>` for two
/// moduli made `matrix` 1.15× slower).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FidTests {
    pub region_entries: usize,
    /// Of the regions entered inside a loop, the smallest side's CLIF
    /// instructions (the blocks its entry dominates in that loop): what a
    /// test and a jump on every iteration are paid against. `None`: no
    /// region is entered inside a loop.
    pub smallest_region_in_loop: Option<usize>,
    /// Instruction-level dispatch branches: in all, and inside loops.
    pub branches: usize,
    pub branches_in_loops: usize,
    /// `select`s on `fid`: in all, and inside loops with an operand the
    /// loop computes.
    pub selects: usize,
    pub varying_selects_in_loops: usize,
    /// `select`s that are a division's divisor: in all, inside loops.
    pub divisors: usize,
    pub divisors_in_loops: usize,
}

impl FidTests {
    /// Tests other than at regions' entries.
    pub fn instruction_level(&self) -> usize {
        self.branches + self.selects
    }

    /// The tests that cost a loop running them on every iteration.
    pub fn per_iteration(&self) -> usize {
        self.branches_in_loops + self.varying_selects_in_loops + self.divisors_in_loops
    }

    /// The tests that cost every call of `M`, or every iteration of a loop
    /// in it: branches other than regions' entries anywhere, divisors
    /// anywhere, and `select`s of values its loops compute.
    pub fn per_call(&self) -> usize {
        self.branches + self.divisors + self.varying_selects_in_loops
    }
}

/// Builds `M` for an aligned pair, or says why it cannot.
pub fn generate(pair: &Pair) -> Result<Merged, String> {
    let funcs = [pair.views[0].func, pair.views[1].func];
    let returns = merge_returns(&funcs[0].signature, &funcs[1].signature)?;
    let (positions, param_types) = map_parameters(pair)?;
    if param_types.len() + 1 > pair.max_params {
        return Err(format!(
            "{} parameters with the identifier (at most {})",
            param_types.len() + 1,
            pair.max_params
        ));
    }
    let widened = [0, 1].map(|k| return_types(&funcs[k].signature) != returns);
    // `M` takes its members' convention, so their thunks and their callers
    // pass arguments where `M` expects them (a pair of different
    // conventions gets Cranelift's own).
    let call_conv = match funcs[0].signature.call_conv {
        conv if conv == funcs[1].signature.call_conv => conv,
        _ => CallConv::Tail,
    };
    let mut signature = Signature::new(call_conv);
    signature
        .params
        .extend(param_types.iter().map(|&t| AbiParam::new(t)));
    signature.params.push(AbiParam::new(FID_TYPE));
    signature
        .returns
        .extend(returns.iter().map(|&t| AbiParam::new(t)));
    let mut func = Function::with_name_signature(
        UserFuncName::User(ClifModule::external_name(pair.merged_symbol)),
        signature,
    );
    let mut context = FunctionBuilderContext::new();
    let stats = {
        let builder = FunctionBuilder::new(&mut func, &mut context);
        let mut gen = Codegen::new(
            pair,
            builder,
            positions.clone(),
            param_types,
            returns,
            widened,
        );
        gen.unify();
        gen.emit_all();
        let stats = (
            gen.selects,
            gen.dispatches,
            std::mem::take(&mut gen.region_dispatches),
        );
        gen.builder.seal_all_blocks();
        gen.builder.finalize(TargetFrontendConfig {
            default_call_conv: call_conv,
            pointer_width: target_lexicon::PointerWidth::U64,
            page_size_align_log2: 12,
        });
        stats
    };
    clean_up(&mut func);
    let tests = fid_tests(&func, &stats.2);
    Ok(Merged {
        func,
        positions,
        widened,
        selects: stats.0,
        dispatches: stats.1,
        tests,
    })
}

/// Counts the tests of `fid` (the last entry parameter) in `func` (see
/// [`FidTests`]); `region_dispatches` are the `brif`s that enter regions.
fn fid_tests(func: &Function, region_dispatches: &hashbrown::HashSet<Inst>) -> FidTests {
    use cranelift_codegen::dominator_tree::DominatorTree;
    use cranelift_codegen::flowgraph::ControlFlowGraph;
    use cranelift_codegen::loop_analysis::LoopAnalysis;

    let mut tests = FidTests::default();
    let Some(entry) = func.layout.entry_block() else {
        return tests;
    };
    let Some(&fid) = func.dfg.block_params(entry).last() else {
        return tests;
    };
    let cfg = ControlFlowGraph::with_function(func);
    let domtree = DominatorTree::with_function(func, &cfg);
    let mut loops = LoopAnalysis::new();
    loops.compute(func, &cfg, &domtree);
    let mut divisors = hashbrown::HashSet::new();
    for block in func.layout.blocks() {
        for inst in func.layout.block_insts(block) {
            if matches!(
                func.dfg.insts[inst].opcode(),
                Opcode::Udiv | Opcode::Sdiv | Opcode::Urem | Opcode::Srem
            ) {
                divisors.insert(func.dfg.inst_args(inst)[1]);
            }
        }
    }
    for block in func.layout.blocks() {
        let in_loop = loops.innermost_loop(block);
        // Whether `v` changes from one iteration of the loop to the next.
        let varies = |v: Value| match (in_loop, func.dfg.value_def(v)) {
            (None, _) => false,
            (Some(lp), ir::ValueDef::Result(def, _)) => {
                !super::fingerprint::is_constant(func, def)
                    && func
                        .layout
                        .inst_block(def)
                        .is_some_and(|b| loops.is_in_loop(b, lp))
            }
            (Some(lp), ir::ValueDef::Param(b, _)) => loops.is_in_loop(b, lp),
            (Some(_), ir::ValueDef::Union(..)) => true,
        };
        for inst in func.layout.block_insts(block) {
            match func.dfg.insts[inst] {
                InstructionData::Brif { arg, blocks, .. } if arg == fid => {
                    if region_dispatches.contains(&inst) {
                        tests.region_entries += 1;
                        if let Some(lp) = in_loop {
                            // A side whose entry the other side reaches too
                            // (the join) is empty.
                            let side_insts = |entry: ir::Block| -> usize {
                                if cfg.pred_iter(entry).count() > 1 {
                                    return 0;
                                }
                                func.layout
                                    .blocks()
                                    .filter(|&b| {
                                        loops.is_in_loop(b, lp) && domtree.block_dominates(entry, b)
                                    })
                                    .map(|b| func.layout.block_insts(b).count())
                                    .sum()
                            };
                            let smaller = blocks
                                .iter()
                                .map(|call| side_insts(call.block(&func.dfg.value_lists)))
                                .min()
                                .unwrap_or(0);
                            tests.smallest_region_in_loop = Some(
                                tests
                                    .smallest_region_in_loop
                                    .map_or(smaller, |s| s.min(smaller)),
                            );
                        }
                    } else {
                        tests.branches += 1;
                        tests.branches_in_loops += usize::from(in_loop.is_some());
                    }
                }
                InstructionData::Ternary {
                    opcode: Opcode::Select,
                    args,
                } if args[0] == fid => {
                    tests.selects += 1;
                    let result = func.dfg.first_result(inst);
                    if divisors.contains(&result) {
                        tests.divisors += 1;
                        tests.divisors_in_loops += usize::from(in_loop.is_some());
                    }
                    if varies(args[1]) || varies(args[2]) {
                        tests.varying_selects_in_loops += 1;
                    }
                }
                _ => {}
            }
        }
    }
    tests
}

/// The value arguments of each destination of `inst`, a branch (none for
/// other instructions).
fn branch_args(func: &Function, inst: Inst) -> Vec<Vec<Value>> {
    func.dfg.insts[inst]
        .branch_destination(&func.dfg.jump_tables, &func.dfg.exception_tables)
        .iter()
        .map(|call| {
            call.args(&func.dfg.value_lists)
                .filter_map(|arg| match arg {
                    BlockArg::Value(v) => Some(v),
                    _ => None,
                })
                .collect()
        })
        .collect()
}

/// Whether an instruction may run on the other side's path too: no
/// memory, traps, calls, control flow or other side effects.
fn is_speculable(func: &Function, inst: Inst) -> bool {
    let op = func.dfg.insts[inst].opcode();
    !(op.can_trap()
        || op.can_load()
        || op.can_store()
        || op.is_call()
        || op.is_branch()
        || op.is_terminator()
        || op.other_side_effects())
}

fn return_types(sig: &Signature) -> Vec<Type> {
    sig.returns.iter().map(|p| p.value_type).collect()
}

/// `M`'s return types (see the module doc).
fn merge_returns(a: &Signature, b: &Signature) -> Result<Vec<Type>, String> {
    let (ra, rb) = (return_types(a), return_types(b));
    (0..ra.len().max(rb.len()))
        .map(|i| match (ra.get(i), rb.get(i)) {
            (Some(&x), Some(&y)) if x == y => Ok(x),
            (Some(&x), Some(&y))
                if x.is_int() && y.is_int() && !x.is_vector() && !y.is_vector() =>
            {
                Ok(if x.bits() >= y.bits() { x } else { y })
            }
            (Some(&x), None) | (None, Some(&x)) => Ok(x),
            (Some(x), Some(y)) => Err(format!("return types {x} and {y} cannot be merged")),
            (None, None) => unreachable!(),
        })
        .collect()
}

/// SalSSA's parameter merging (see the module doc): the positions of each
/// side's parameters and `M`'s parameter types (without `fid`).
fn map_parameters(pair: &Pair) -> Result<([Vec<usize>; 2], Vec<Type>), String> {
    let funcs = [pair.views[0].func, pair.views[1].func];
    let params = funcs.map(|f| {
        f.layout
            .entry_block()
            .map_or(&[][..], |e| f.dfg.block_params(e))
            .to_vec()
    });
    let index: [HashMap<Value, usize>; 2] =
        [0, 1].map(|k| params[k].iter().enumerate().map(|(i, &v)| (v, i)).collect());
    // How often side-0 parameter x and side-1 parameter y are the same
    // operand of matched instructions.
    let mut together: HashMap<(usize, usize), u32> = HashMap::new();
    let mut count = |i0: Inst, i1: Inst| {
        let a0 = funcs[0].dfg.inst_args(i0);
        let a1 = funcs[1].dfg.inst_args(i1);
        for (&x, &y) in a0.iter().zip(a1) {
            let x = index[0].get(&funcs[0].dfg.resolve_aliases(x));
            let y = index[1].get(&funcs[1].dfg.resolve_aliases(y));
            if let (Some(&x), Some(&y)) = (x, y) {
                *together.entry((x, y)).or_default() += 1;
            }
        }
    };
    for (b0, aligned) in pair.alignment.blocks.iter() {
        let Some(aligned) = aligned else { continue };
        for step in &aligned.steps {
            if let Step::Both(i0, i1) = *step {
                count(i0, i1);
            }
        }
        if aligned.terminators_match {
            let b1 = pair.alignment.partner[0][b0].expect("paired");
            if let (Some(t0), Some(t1)) =
                (pair.views[0].terminator[b0], pair.views[1].terminator[b1])
            {
                count(t0, t1);
            }
        }
    }
    let ty = |k: usize, i: usize| funcs[k].dfg.value_type(params[k][i]);
    let mut choices: Vec<(u32, bool, usize, usize)> = Vec::new();
    for x in 0..params[0].len() {
        for y in 0..params[1].len() {
            if ty(0, x) == ty(1, y) {
                let n = together.get(&(x, y)).copied().unwrap_or(0);
                choices.push((n, x != y, x, y));
            }
        }
    }
    choices.sort_by(|a, b| b.0.cmp(&a.0).then((a.1, a.2, a.3).cmp(&(b.1, b.2, b.3))));
    let mut of_side1: Vec<Option<usize>> = vec![None; params[1].len()];
    let mut taken = vec![false; params[0].len()];
    for (_, _, x, y) in choices {
        if !taken[x] && of_side1[y].is_none() {
            taken[x] = true;
            of_side1[y] = Some(x);
        }
    }
    let mut types: Vec<Type> = (0..params[0].len()).map(|i| ty(0, i)).collect();
    let side1 = of_side1
        .iter()
        .enumerate()
        .map(|(y, x)| {
            x.unwrap_or_else(|| {
                types.push(ty(1, y));
                types.len() - 1
            })
        })
        .collect();
    Ok(([(0..params[0].len()).collect(), side1], types))
}

/// Where a branch of `M` goes (see the module doc).
enum Dest {
    /// Straight to a unit's block.
    Direct(Block),
    /// Through `block`, which assigns the target's parameters.
    Edge(Block, Assign),
    /// Through `block`, which branches on `fid` to side 0's or side 1's;
    /// `region`: the two are the entries of corresponding regions.
    Dispatch {
        block: Block,
        dests: Box<[Dest; 2]>,
        region: bool,
    },
}

impl Dest {
    fn block(&self) -> Block {
        match self {
            Dest::Direct(b) | Dest::Edge(b, _) | Dest::Dispatch { block: b, .. } => *b,
        }
    }
}

/// Parameter assignments on the way to a block: side `k`'s `target` gets
/// `args` for each side present.
struct Assign {
    target: Block,
    sides: [Option<(Block, Vec<Value>)>; 2],
}

/// One variable per original value (shared ones unified), and the builder.
struct Codegen<'a, 'b> {
    pair: &'a Pair<'a>,
    funcs: [&'a Function; 2],
    builder: FunctionBuilder<'b>,
    positions: [Vec<usize>; 2],
    /// `inverse[c][p]`: which parameter of side `c` goes to position `p`.
    inverse: [Vec<Option<usize>>; 2],
    param_types: Vec<Type>,
    returns: Vec<Type>,
    widened: [bool; 2],
    fid: Value,
    parent: HashMap<(usize, Value), (usize, Value)>,
    /// Values that share a variable with a value of the other side.
    in_class: hashbrown::HashSet<(usize, Value)>,
    /// Instructions of a matched pair, per side.
    matched: [hashbrown::HashSet<Inst>; 2],
    /// Inside a speculated run: results already computed, before their
    /// variables are defined.
    speculated: HashMap<(usize, Value), Value>,
    vars: HashMap<(usize, Value), Variable>,
    reps: [SecondaryMap<Block, Option<Block>>; 2],
    entities: Entities,
    merged_ref: Option<FuncRef>,
    /// Constants materialised in the current block.
    constants: HashMap<(Block, ConstKey), Value>,
    selects: usize,
    dispatches: usize,
    /// The `brif`s on `fid` that enter a region.
    region_dispatches: hashbrown::HashSet<Inst>,
}

impl<'a, 'b> Codegen<'a, 'b> {
    fn new(
        pair: &'a Pair<'a>,
        builder: FunctionBuilder<'b>,
        positions: [Vec<usize>; 2],
        param_types: Vec<Type>,
        returns: Vec<Type>,
        widened: [bool; 2],
    ) -> Self {
        let mut inverse = [vec![None; param_types.len()], vec![None; param_types.len()]];
        for k in 0..2 {
            for (i, &p) in positions[k].iter().enumerate() {
                inverse[k][p] = Some(i);
            }
        }
        Codegen {
            pair,
            funcs: [pair.views[0].func, pair.views[1].func],
            builder,
            positions,
            inverse,
            param_types,
            returns,
            widened,
            fid: Value::from_u32(0),
            parent: HashMap::new(),
            in_class: hashbrown::HashSet::new(),
            matched: [hashbrown::HashSet::new(), hashbrown::HashSet::new()],
            speculated: HashMap::new(),
            vars: HashMap::new(),
            reps: [SecondaryMap::new(), SecondaryMap::new()],
            entities: Entities::default(),
            merged_ref: None,
            constants: HashMap::new(),
            selects: 0,
            dispatches: 0,
            region_dispatches: hashbrown::HashSet::new(),
        }
    }

    fn view(&self, side: usize) -> &'a FuncView<'a> {
        self.pair.views[side]
    }

    fn resolve(&self, side: usize, v: Value) -> Value {
        self.funcs[side].dfg.resolve_aliases(v)
    }

    // --- union-find over (side, value) --------------------------------

    fn find(&mut self, key: (usize, Value)) -> (usize, Value) {
        let mut root = key;
        while let Some(&p) = self.parent.get(&root) {
            root = p;
        }
        let mut k = key;
        while let Some(&p) = self.parent.get(&k) {
            if p == root {
                break;
            }
            self.parent.insert(k, root);
            k = p;
        }
        root
    }

    /// Makes side 0's `a` and side 1's `b` one variable (same type only).
    fn union(&mut self, a: Value, b: Value) {
        let (a, b) = (self.resolve(0, a), self.resolve(1, b));
        if self.funcs[0].dfg.value_type(a) != self.funcs[1].dfg.value_type(b) {
            return;
        }
        let (ra, rb) = (self.find((0, a)), self.find((1, b)));
        if ra != rb {
            self.parent.insert(rb, ra);
            self.in_class.insert((0, a));
            self.in_class.insert((1, b));
        }
    }

    fn shared(&mut self, a: Value, b: Value) -> bool {
        let (a, b) = (self.resolve(0, a), self.resolve(1, b));
        self.find((0, a)) == self.find((1, b))
    }

    fn var(&mut self, side: usize, v: Value) -> Variable {
        let v = self.resolve(side, v);
        let root = self.find((side, v));
        if let Some(&var) = self.vars.get(&root) {
            return var;
        }
        let ty = self.funcs[root.0].dfg.value_type(root.1);
        let var = self.builder.declare_var(ty);
        self.vars.insert(root, var);
        var
    }

    /// The sharing relation (see the module doc), computed before any code:
    /// first what the alignment fixes (entry parameters by position, paired
    /// blocks' parameters, matched results), then, to save `select`s,
    /// values of one side each that a matched instruction uses at the same
    /// operand, then results of the unmatched runs by type.
    fn unify(&mut self) {
        let funcs = self.funcs;
        let alignment = self.pair.alignment;
        let entries = funcs.map(|f| f.layout.entry_block());
        if let [Some(e0), Some(e1)] = entries {
            for (y, &p) in self.positions[1].clone().iter().enumerate() {
                if p < funcs[0].dfg.block_params(e0).len() {
                    self.union(
                        funcs[0].dfg.block_params(e0)[p],
                        funcs[1].dfg.block_params(e1)[y],
                    );
                }
            }
        }
        let mut pairs: Vec<(Inst, Inst)> = Vec::new();
        let mut runs: Vec<(Vec<Inst>, Vec<Inst>)> = Vec::new();
        for (b0, aligned) in alignment.blocks.iter() {
            let Some(aligned) = aligned else { continue };
            let b1 = alignment.partner[0][b0].expect("paired");
            // Entry parameters are shared by position in `M`'s list above.
            if Some(b0) != entries[0] && Some(b1) != entries[1] {
                let p0 = funcs[0].dfg.block_params(b0).to_vec();
                let p1 = funcs[1].dfg.block_params(b1).to_vec();
                for (&a, &b) in p0.iter().zip(&p1) {
                    self.union(a, b);
                }
            }
            let mut run: (Vec<Inst>, Vec<Inst>) = (Vec::new(), Vec::new());
            for step in &aligned.steps {
                match *step {
                    Step::Both(i0, i1) => {
                        runs.push(std::mem::take(&mut run));
                        pairs.push((i0, i1));
                    }
                    Step::Left(i) => run.0.push(i),
                    Step::Right(i) => run.1.push(i),
                }
            }
            runs.push(run);
            if aligned.terminators_match {
                let terminators = (self.view(0).terminator[b0], self.view(1).terminator[b1]);
                if let (Some(t0), Some(t1)) = terminators {
                    pairs.push((t0, t1));
                }
            }
        }
        for &(i0, i1) in &pairs {
            self.matched[0].insert(i0);
            self.matched[1].insert(i1);
            let r0 = funcs[0].dfg.inst_results(i0).to_vec();
            let r1 = funcs[1].dfg.inst_results(i1).to_vec();
            for (&a, &b) in r0.iter().zip(&r1) {
                self.union(a, b);
            }
        }
        for &(i0, i1) in &pairs {
            let a0 = funcs[0].dfg.inst_args(i0).to_vec();
            let a1 = funcs[1].dfg.inst_args(i1).to_vec();
            for (&a, &b) in a0.iter().zip(&a1) {
                self.share_if_private(a, b);
            }
            // A matched branch's arguments too: what two regions pass on
            // to the block after them.
            let (d0, d1) = (branch_args(funcs[0], i0), branch_args(funcs[1], i1));
            for (args0, args1) in d0.iter().zip(&d1) {
                for (&a, &b) in args0.iter().zip(args1) {
                    self.share_if_private(a, b);
                }
            }
        }
        for (left, right) in runs {
            let types = |k: usize, i: Inst| {
                let dfg = &funcs[k].dfg;
                dfg.inst_results(i)
                    .iter()
                    .map(|&r| dfg.value_type(r))
                    .collect::<Vec<Type>>()
            };
            let mut used = vec![false; right.len()];
            for &i0 in &left {
                let t0 = types(0, i0);
                if t0.is_empty() {
                    continue;
                }
                if let Some(j) = (0..right.len()).find(|&j| !used[j] && types(1, right[j]) == t0) {
                    used[j] = true;
                    let r0 = funcs[0].dfg.inst_results(i0).to_vec();
                    let r1 = funcs[1].dfg.inst_results(right[j]).to_vec();
                    for (&a, &b) in r0.iter().zip(&r1) {
                        self.share_if_private(a, b);
                    }
                }
            }
        }
    }

    /// Shares `a` (side 0) and `b` (side 1) if neither shares yet and each
    /// is only ever defined on its own side's paths: a result of an
    /// unmatched instruction, a parameter of an unpaired block, or a
    /// function parameter (defined in `M`'s entry before anything else).
    /// Constants are not variables.
    fn share_if_private(&mut self, a: Value, b: Value) {
        let (a, b) = (self.resolve(0, a), self.resolve(1, b));
        if self.private(0, a) && self.private(1, b) {
            self.union(a, b);
        }
    }

    fn private(&self, k: usize, v: Value) -> bool {
        if self.in_class.contains(&(k, v)) || self.view(k).constants.contains_key(&v) {
            return false;
        }
        let func = self.funcs[k];
        match func.dfg.value_def(v) {
            ir::ValueDef::Result(inst, _) => !self.matched[k].contains(&inst),
            ir::ValueDef::Param(block, _) => {
                func.layout.entry_block() == Some(block)
                    || self.pair.alignment.partner[k][block].is_none()
            }
            ir::ValueDef::Union(..) => false,
        }
    }

    // --- values ---------------------------------------------------------

    /// Side `side`'s value `v` at the current point of `M`.
    fn operand(&mut self, side: usize, v: Value) -> Value {
        let v = self.resolve(side, v);
        if let Some(&local) = self.speculated.get(&(side, v)) {
            return local;
        }
        if let Some(c) = self.view(side).constants.get(&v) {
            return self.materialise(side, v, c.clone());
        }
        let var = self.var(side, v);
        self.builder.use_var(var)
    }

    /// A constant of side `side` (defined as `v`), once per block.
    fn materialise(&mut self, side: usize, v: Value, key: ConstKey) -> Value {
        let block = self.builder.current_block().expect("inside a block");
        if let Some(&c) = self.constants.get(&(block, key.clone())) {
            return c;
        }
        let def = self.funcs[side].dfg.value_def(v).unwrap_inst();
        let inst = self.copy(side, def, Vec::new(), Vec::new());
        let c = self.builder.func.dfg.first_result(inst);
        self.constants.insert((block, key), c);
        c
    }

    /// The value of a matched operand pair: shared, equal constants, or a
    /// `select` on `fid`.
    fn merged(&mut self, a: Value, b: Value) -> Value {
        let (a, b) = (self.resolve(0, a), self.resolve(1, b));
        let (ca, cb) = (
            self.view(0).constants.get(&a),
            self.view(1).constants.get(&b),
        );
        match (ca, cb) {
            (Some(x), Some(y)) if x == y => return self.materialise(0, a, x.clone()),
            (None, None) if self.shared(a, b) => {
                let var = self.var(0, a);
                return self.builder.use_var(var);
            }
            _ => {}
        }
        let x = self.operand(0, a);
        let y = self.operand(1, b);
        if x == y {
            return x;
        }
        self.selects += 1;
        self.builder.ins().select(self.fid, y, x)
    }

    /// A zero of type `ty` (for parameter slots a call does not use).
    fn zero(&mut self, ty: Type) -> Value {
        let b = &mut self.builder;
        match ty {
            types::I128 => {
                let zero = b.ins().iconst(types::I64, 0);
                b.ins().uextend(types::I128, zero)
            }
            _ if ty.is_int() && !ty.is_vector() => b.ins().iconst(ty, 0),
            types::F16 => b.ins().f16const(ir::immediates::Ieee16::with_bits(0)),
            types::F32 => b.ins().f32const(0.0),
            types::F64 => b.ins().f64const(0.0),
            _ => {
                let bytes = vec![0u8; ty.bytes() as usize];
                let c = b.func.dfg.constants.insert(bytes.into());
                if ty.is_vector() {
                    b.ins().vconst(ty, c)
                } else {
                    b.ins().f128const(c)
                }
            }
        }
    }

    fn define(&mut self, side: usize, original: &[Value], new: &[Value]) {
        for (&o, &n) in original.iter().zip(new) {
            let var = self.var(side, o);
            self.builder.def_var(var, n);
        }
    }

    /// Copies side `side`'s `inst` into the current block with `args` as
    /// operands and `dests` as branch destinations.
    fn copy(&mut self, side: usize, inst: Inst, args: Vec<Value>, dests: Vec<Block>) -> Inst {
        let src = self.funcs[side];
        let data = {
            let mut mapper = Mapper {
                src,
                side,
                dst: self.builder.func,
                entities: &mut self.entities,
                args: args.into_iter(),
                dests: dests.into_iter(),
            };
            src.dfg.insts[inst].map(&mut mapper)
        };
        self.builder.ins().build(data, src.dfg.ctrl_typevar(inst)).0
    }

    // --- layout -----------------------------------------------------------

    /// Creates every unit's block; returns the units in emission order:
    /// side 0's layout, each side-1-only block after the unit of the paired
    /// block that precedes it in side 1's layout.
    fn create_units(&mut self) -> Vec<(usize, Block)> {
        let alignment = self.pair.alignment;
        let mut after: HashMap<Option<Block>, Vec<Block>> = HashMap::new();
        let mut last = None;
        for &b1 in &self.view(1).blocks {
            match alignment.partner[1][b1] {
                Some(b0) => last = Some(b0),
                None => after.entry(last).or_default().push(b1),
            }
        }
        let mut units = Vec::new();
        let push_side1 = |units: &mut Vec<(usize, Block)>, key: Option<Block>| {
            for &b1 in after.get(&key).map_or(&[][..], |v| &v[..]) {
                units.push((1, b1));
            }
        };
        push_side1(&mut units, None);
        for &b0 in &self.view(0).blocks {
            units.push((0, b0));
            if alignment.partner[0][b0].is_some() {
                push_side1(&mut units, Some(b0));
            }
        }
        for &(side, b) in &units {
            let block = self.builder.create_block();
            self.reps[side][b] = Some(block);
            let mut cold = self.funcs[side].layout.is_cold(b);
            if side == 0 {
                if let Some(b1) = alignment.partner[0][b] {
                    self.reps[1][b1] = Some(block);
                    cold &= self.funcs[1].layout.is_cold(b1);
                }
            }
            if cold {
                self.builder.set_cold_block(block);
            }
        }
        units
    }

    fn rep(&self, side: usize, b: Block) -> Block {
        self.reps[side][b].expect("every block has a unit")
    }

    fn is_cold(&self, block: Block) -> bool {
        self.builder.func.layout.is_cold(block)
    }

    /// A new block, cold like `like`.
    fn block_like(&mut self, like: Block) -> Block {
        let b = self.builder.create_block();
        if self.is_cold(like) {
            self.builder.set_cold_block(b);
        }
        b
    }

    // --- emission ---------------------------------------------------------

    fn emit_all(&mut self) {
        let units = self.create_units();
        self.emit_entry();
        self.copy_stack_slots();
        for (side, b) in units {
            let rep = self.rep(side, b);
            self.builder.switch_to_block(rep);
            match (side, self.pair.alignment.blocks[b].as_ref()) {
                (0, Some(aligned)) => {
                    let b1 = self.pair.alignment.partner[0][b].expect("paired");
                    self.emit_paired(b, b1, aligned);
                }
                _ => self.emit_single_block(side, b),
            }
        }
    }

    /// `M`'s entry: parameters into variables, then to the entry units.
    fn emit_entry(&mut self) {
        let entry = self.builder.create_block();
        self.builder.append_block_params_for_function_params(entry);
        self.builder.switch_to_block(entry);
        let params = self.builder.block_params(entry).to_vec();
        self.fid = *params.last().expect("fid");
        let entries = self.funcs.map(|f| f.layout.entry_block());
        for (k, entry_k) in entries.iter().enumerate() {
            let Some(e) = *entry_k else { continue };
            let originals = self.funcs[k].dfg.block_params(e).to_vec();
            let values: Vec<Value> = self.positions[k].iter().map(|&p| params[p]).collect();
            self.define(k, &originals, &values);
        }
        match entries {
            [Some(e0), Some(e1)] if self.rep(0, e0) == self.rep(1, e1) => {
                let target = self.rep(0, e0);
                self.builder.ins().jump(target, &[]);
            }
            [Some(e0), Some(e1)] => {
                let (t0, t1) = (self.rep(0, e0), self.rep(1, e1));
                self.dispatches += 1;
                let branch = self.builder.ins().brif(self.fid, t1, &[], t0, &[]);
                if self.pair.regions.is_entry(0, e0) && self.pair.regions.is_entry(1, e1) {
                    self.region_dispatches.insert(branch);
                }
            }
            _ => unreachable!("merged functions have bodies"),
        }
    }

    fn copy_stack_slots(&mut self) {
        for (slot, data) in self.funcs[0].sized_stack_slots.iter() {
            let new = self.builder.create_sized_stack_slot(data.clone());
            self.entities.slots[0][slot] = Some(new);
        }
        for (slot, data) in self.funcs[1].sized_stack_slots.iter() {
            let new = match self.pair.slot_partner[slot] {
                Some(s0) => self.entities.slots[0][s0].expect("copied"),
                None => self.builder.create_sized_stack_slot(data.clone()),
            };
            self.entities.slots[1][slot] = Some(new);
        }
    }

    fn emit_single_block(&mut self, side: usize, b: Block) {
        for &inst in &self.view(side).body[b] {
            self.emit_one(side, inst);
        }
        if let Some(t) = self.view(side).terminator[b] {
            self.emit_one(side, t);
        }
    }

    fn emit_paired(&mut self, b0: Block, b1: Block, aligned: &BlockAlignment) {
        let mut run: (Vec<Inst>, Vec<Inst>) = (Vec::new(), Vec::new());
        for step in &aligned.steps {
            match *step {
                Step::Both(i0, i1) => {
                    self.emit_run(&mut run);
                    self.emit_both(i0, i1);
                }
                Step::Left(i) => run.0.push(i),
                Step::Right(i) => run.1.push(i),
            }
        }
        let terminators = (self.view(0).terminator[b0], self.view(1).terminator[b1]);
        match terminators {
            (Some(t0), Some(t1)) if aligned.terminators_match => {
                self.emit_run(&mut run);
                self.emit_both(t0, t1);
            }
            (t0, t1) => {
                // The last unmatched run and each side's terminator end the
                // block under a dispatch, without a join.
                if self.speculable(&run) {
                    self.emit_speculated(&mut run);
                }
                let current = self.builder.current_block().expect("in a block");
                let s0 = self.block_like(current);
                let s1 = self.block_like(current);
                self.dispatches += 1;
                self.builder.ins().brif(self.fid, s1, &[], s0, &[]);
                for (k, (block, insts, t)) in
                    [(s0, &run.0, t0), (s1, &run.1, t1)].into_iter().enumerate()
                {
                    self.builder.switch_to_block(block);
                    for &i in insts {
                        self.emit_one(k, i);
                    }
                    if let Some(t) = t {
                        self.emit_one(k, t);
                    }
                }
            }
        }
    }

    /// An unmatched run: speculated if it can be, else `brif fid, side1,
    /// side0`, each side's part, a join.
    fn emit_run(&mut self, run: &mut (Vec<Inst>, Vec<Inst>)) {
        if run.0.is_empty() && run.1.is_empty() {
            return;
        }
        if self.speculable(run) {
            self.emit_speculated(run);
            return;
        }
        let current = self.builder.current_block().expect("in a block");
        let join = self.block_like(current);
        let parts = [&run.0, &run.1].map(|insts| (!insts.is_empty()).then(|| insts.clone()));
        let blocks = [0, 1].map(|k| parts[k].as_ref().map(|_| self.block_like(current)));
        self.dispatches += 1;
        self.builder.ins().brif(
            self.fid,
            blocks[1].unwrap_or(join),
            &[],
            blocks[0].unwrap_or(join),
            &[],
        );
        for k in 0..2 {
            if let (Some(block), Some(insts)) = (blocks[k], &parts[k]) {
                self.builder.switch_to_block(block);
                for &i in insts {
                    self.emit_one(k, i);
                }
                self.builder.ins().jump(join, &[]);
            }
        }
        self.builder.switch_to_block(join);
        run.0.clear();
        run.1.clear();
    }

    /// Whether a run can run for both sides in the shared block: every
    /// instruction is pure and cannot trap, and every result that shares a
    /// variable shares it with a result of the same run (so one `select`
    /// defines it; a definition on both sides' paths of a variable the
    /// other side reads elsewhere would be wrong). Speculation saves the
    /// dispatch, and keeps Cranelift's e-graph from computing the operands
    /// the two arms share in each arm (it places pure values at their uses,
    /// so sibling blocks both get a copy).
    fn speculable(&mut self, run: &(Vec<Inst>, Vec<Inst>)) -> bool {
        let funcs = self.funcs;
        let all_pure = run.0.iter().all(|&i| is_speculable(funcs[0], i))
            && run.1.iter().all(|&i| is_speculable(funcs[1], i));
        if !all_pure {
            return false;
        }
        let results = |k: usize, insts: &[Inst]| -> Vec<Value> {
            insts
                .iter()
                .flat_map(|&i| funcs[k].dfg.inst_results(i).to_vec())
                .collect()
        };
        let (r0, r1) = (results(0, &run.0), results(1, &run.1));
        let mut roots1 = Vec::with_capacity(r1.len());
        for &v in &r1 {
            roots1.push(self.find((1, v)));
        }
        for &v in &r0 {
            if self.in_class.contains(&(0, v)) && !roots1.contains(&self.find((0, v))) {
                return false;
            }
        }
        for (&v, root) in r1.iter().zip(&roots1) {
            if self.in_class.contains(&(1, v)) {
                let partner = r0.iter().any(|&u| self.find((0, u)) == *root);
                if !partner {
                    return false;
                }
            }
        }
        true
    }

    /// Emits a speculable run in the current block: both sides' parts, then
    /// one definition per variable (a `select` where the two sides share).
    fn emit_speculated(&mut self, run: &mut (Vec<Inst>, Vec<Inst>)) {
        let funcs = self.funcs;
        let mut produced: Vec<(usize, Value, Value)> = Vec::new();
        for (k, insts) in [(0, &run.0), (1, &run.1)] {
            for &inst in insts.iter() {
                let args: Vec<Value> = funcs[k]
                    .dfg
                    .inst_args(inst)
                    .to_vec()
                    .into_iter()
                    .map(|a| self.operand(k, a))
                    .collect();
                let new = self.copy(k, inst, args, Vec::new());
                let results = self.builder.inst_results(new).to_vec();
                for (&original, &value) in funcs[k].dfg.inst_results(inst).iter().zip(&results) {
                    self.speculated.insert((k, original), value);
                    produced.push((k, original, value));
                }
            }
        }
        self.speculated.clear();
        for &(k, original, value) in &produced {
            if !self.in_class.contains(&(k, original)) {
                let var = self.var(k, original);
                self.builder.def_var(var, value);
                continue;
            }
            if k == 1 {
                continue; // defined with its side-0 partner
            }
            let root = self.find((0, original));
            let partner = produced
                .iter()
                .find(|&&(j, o, _)| j == 1 && self.find((1, o)) == root)
                .map(|&(_, _, v)| v)
                .expect("a speculable run holds both sides of a shared variable");
            self.selects += 1;
            let merged = self.builder.ins().select(self.fid, partner, value);
            let var = self.var(0, original);
            self.builder.def_var(var, merged);
        }
        run.0.clear();
        run.1.clear();
    }

    /// One instruction of one side.
    fn emit_one(&mut self, side: usize, inst: Inst) {
        let src = self.funcs[side];
        let data = src.dfg.insts[inst];
        match data {
            InstructionData::Jump { destination, .. } => {
                let assign = self.assign_single(side, destination);
                self.emit_jump(assign);
            }
            InstructionData::Brif { arg, blocks, .. } => {
                let cond = self.operand(side, arg);
                let dests = blocks.map(|call| self.dest_single(side, call));
                self.emit_brif(cond, dests);
            }
            InstructionData::Call { func_ref, .. }
                if member_callee(src, func_ref, self.pair.members).is_some() =>
            {
                let mut calls = [None, None];
                calls[side] = Some(inst);
                self.emit_member_call(calls);
            }
            _ if data.opcode() == Opcode::Return => {
                let args = src.dfg.inst_args(inst).to_vec();
                let values: Vec<(Value, Type)> = args
                    .iter()
                    .map(|&a| (self.operand(side, a), src.dfg.value_type(a)))
                    .collect();
                self.emit_return(values);
            }
            _ if self.widened[side]
                && matches!(
                    data.opcode(),
                    Opcode::ReturnCall | Opcode::ReturnCallIndirect
                ) =>
            {
                self.emit_call_then_return(side, inst);
            }
            _ => {
                let args: Vec<Value> = src
                    .dfg
                    .inst_args(inst)
                    .to_vec()
                    .into_iter()
                    .map(|a| self.operand(side, a))
                    .collect();
                let new = self.copy(side, inst, args, Vec::new());
                let results = self.builder.inst_results(new).to_vec();
                let originals = src.dfg.inst_results(inst).to_vec();
                self.define(side, &originals, &results);
            }
        }
    }

    /// A matched pair.
    fn emit_both(&mut self, i0: Inst, i1: Inst) {
        let (f0, f1) = (self.funcs[0], self.funcs[1]);
        match (f0.dfg.insts[i0], f1.dfg.insts[i1]) {
            (
                InstructionData::Jump {
                    destination: d0, ..
                },
                InstructionData::Jump {
                    destination: d1, ..
                },
            ) => {
                let dest = self.dest_pair(d0, d1, true);
                match dest {
                    Dest::Edge(_, assign) => self.emit_jump(assign),
                    other => {
                        let target = other.block();
                        self.builder.ins().jump(target, &[]);
                        self.fill(other);
                    }
                }
            }
            (
                InstructionData::Brif {
                    arg: c0,
                    blocks: b0,
                    ..
                },
                InstructionData::Brif {
                    arg: c1,
                    blocks: b1,
                    ..
                },
            ) => {
                let cond = self.merged(c0, c1);
                let dests = [0, 1].map(|j| self.dest_pair(b0[j], b1[j], false));
                self.emit_brif(cond, dests);
            }
            (InstructionData::Call { func_ref, .. }, _)
                if member_callee(f0, func_ref, self.pair.members).is_some() =>
            {
                self.emit_member_call([Some(i0), Some(i1)]);
            }
            (data, _) if data.opcode() == Opcode::Return => {
                // Integer returns of different widths match too (see
                // `align::key`): each side's value is extended to `M`'s
                // type first.
                let a0 = f0.dfg.inst_args(i0).to_vec();
                let a1 = f1.dfg.inst_args(i1).to_vec();
                let returns = self.returns.clone();
                let mut values = Vec::with_capacity(a0.len());
                for ((&a, &b), &ty) in a0.iter().zip(&a1).zip(&returns) {
                    let (ta, tb) = (f0.dfg.value_type(a), f1.dfg.value_type(b));
                    if ta == tb {
                        values.push((self.merged(a, b), ta));
                        continue;
                    }
                    let x = self.operand(0, a);
                    let y = self.operand(1, b);
                    let x = self.widen(x, ta, ty);
                    let y = self.widen(y, tb, ty);
                    self.selects += 1;
                    values.push((self.builder.ins().select(self.fid, y, x), ty));
                }
                self.emit_return(values);
            }
            _ => {
                let a0 = f0.dfg.inst_args(i0).to_vec();
                let a1 = f1.dfg.inst_args(i1).to_vec();
                let args: Vec<Value> = a0
                    .iter()
                    .zip(&a1)
                    .map(|(&a, &b)| self.merged(a, b))
                    .collect();
                let new = self.copy(0, i0, args, Vec::new());
                let results = self.builder.inst_results(new).to_vec();
                let originals = f0.dfg.inst_results(i0).to_vec();
                self.define(0, &originals, &results);
            }
        }
    }

    /// `return`, adapted to `M`'s return types (see the module doc).
    fn emit_return(&mut self, values: Vec<(Value, Type)>) {
        let returns = self.returns.clone();
        let adapted: Vec<Value> = returns
            .iter()
            .enumerate()
            .map(|(p, &ty)| match values.get(p) {
                Some(&(v, t)) => self.widen(v, t, ty),
                None => self.zero(ty),
            })
            .collect();
        self.builder.ins().return_(&adapted);
    }

    /// `v` of type `from` as `M`'s return type `to` (zero-extended).
    fn widen(&mut self, v: Value, from: Type, to: Type) -> Value {
        if from == to {
            v
        } else {
            self.builder.ins().uextend(to, v)
        }
    }

    /// A widened side's `return_call`: call, then return adapted results.
    fn emit_call_then_return(&mut self, side: usize, inst: Inst) {
        let src = self.funcs[side];
        let args: Vec<Value> = src
            .dfg
            .inst_args(inst)
            .to_vec()
            .into_iter()
            .map(|a| self.operand(side, a))
            .collect();
        let data = match src.dfg.insts[inst] {
            InstructionData::Call { func_ref, .. } => {
                let mut mapper = Mapper {
                    src,
                    side,
                    dst: self.builder.func,
                    entities: &mut self.entities,
                    args: Vec::new().into_iter(),
                    dests: Vec::new().into_iter(),
                };
                let func_ref = mapper.map_func_ref(func_ref);
                let list = ValueList::from_slice(&args, &mut self.builder.func.dfg.value_lists);
                InstructionData::Call {
                    opcode: Opcode::Call,
                    args: list,
                    func_ref,
                }
            }
            InstructionData::CallIndirect { sig_ref, .. } => {
                let mut mapper = Mapper {
                    src,
                    side,
                    dst: self.builder.func,
                    entities: &mut self.entities,
                    args: Vec::new().into_iter(),
                    dests: Vec::new().into_iter(),
                };
                let sig_ref = mapper.map_sig_ref(sig_ref);
                let list = ValueList::from_slice(&args, &mut self.builder.func.dfg.value_lists);
                InstructionData::CallIndirect {
                    opcode: Opcode::CallIndirect,
                    args: list,
                    sig_ref,
                }
            }
            other => unreachable!("not a tail call: {other:?}"),
        };
        let call = self.builder.ins().build(data, types::INVALID).0;
        let results = self.builder.inst_results(call).to_vec();
        let values = results
            .iter()
            .map(|&r| (r, self.builder.func.dfg.value_type(r)))
            .collect();
        self.emit_return(values);
    }

    /// A call of a member (one side's, or a matched pair's): `M` with the
    /// arguments placed for the callee and the callee's identifier.
    fn emit_member_call(&mut self, calls: [Option<Inst>; 2]) {
        let callee = |k: usize| {
            calls[k].map(|i| {
                let InstructionData::Call { func_ref, .. } = self.funcs[k].dfg.insts[i] else {
                    unreachable!("a direct call")
                };
                member_callee(self.funcs[k], func_ref, self.pair.members).expect("a member")
            })
        };
        let callees = [callee(0), callee(1)];
        let mut args = Vec::with_capacity(self.param_types.len() + 1);
        for p in 0..self.param_types.len() {
            let arg = |k: usize| -> Option<Value> {
                let c = callees[k]?;
                let i = self.inverse[c][p]?;
                Some(self.funcs[k].dfg.inst_args(calls[k]?)[i])
            };
            let value = match (arg(0), arg(1)) {
                (Some(a), Some(b)) => self.merged(a, b),
                (Some(a), None) => self.operand(0, a),
                (None, Some(b)) => self.operand(1, b),
                (None, None) => self.zero(self.param_types[p]),
            };
            args.push(value);
        }
        let fid = match callees {
            [Some(0), Some(1)] => self.fid,
            [Some(1), Some(0)] => {
                let one = self.builder.ins().iconst(FID_TYPE, 1);
                self.builder.ins().bxor(self.fid, one)
            }
            [Some(c), _] | [None, Some(c)] => self.builder.ins().iconst(FID_TYPE, c as i64),
            [None, None] => unreachable!("a member call has a side"),
        };
        args.push(fid);
        let merged = self.merged_ref();
        let side = if calls[0].is_some() { 0 } else { 1 };
        let original = calls[side].expect("present");
        if self.funcs[side].dfg.insts[original].opcode() == Opcode::ReturnCall {
            self.builder.ins().return_call(merged, &args);
            return;
        }
        let call = self.builder.ins().call(merged, &args);
        let results = self.builder.inst_results(call).to_vec();
        for (k, call) in calls.iter().enumerate() {
            let Some(inst) = *call else { continue };
            let originals = self.funcs[k].dfg.inst_results(inst).to_vec();
            let narrowed: Vec<Value> = originals
                .iter()
                .zip(&results)
                .map(|(&o, &r)| {
                    let ty = self.funcs[k].dfg.value_type(o);
                    if self.builder.func.dfg.value_type(r) == ty {
                        r
                    } else {
                        self.builder.ins().ireduce(ty, r)
                    }
                })
                .collect();
            self.define(k, &originals, &narrowed);
        }
    }

    /// A reference to `M` itself.
    fn merged_ref(&mut self) -> FuncRef {
        if let Some(f) = self.merged_ref {
            return f;
        }
        let signature = self.builder.func.signature.clone();
        let sig = self.builder.import_signature(signature);
        let name = self
            .builder
            .func
            .declare_imported_user_function(ClifModule::external_name(self.pair.merged_symbol));
        let f = self.builder.import_function(ExtFuncData {
            name: ExternalName::user(name),
            signature: sig,
            colocated: true,
            patchable: false,
        });
        self.merged_ref = Some(f);
        f
    }

    // --- branches -----------------------------------------------------------

    /// The assignment of side `side`'s branch target `call`.
    fn assign_single(&mut self, side: usize, call: BlockCall) -> Assign {
        let pool = &self.funcs[side].dfg.value_lists;
        let target = call.block(pool);
        let args = call
            .args(pool)
            .map(|a| match a {
                BlockArg::Value(v) => v,
                other => unreachable!("no exception-table arguments: {other}"),
            })
            .collect();
        let mut sides = [None, None];
        sides[side] = Some((target, args));
        Assign {
            target: self.rep(side, target),
            sides,
        }
    }

    fn has_params(&self, assign: &Assign) -> bool {
        assign.sides.iter().enumerate().any(|(k, s)| {
            s.as_ref()
                .is_some_and(|(t, _)| !self.funcs[k].dfg.block_params(*t).is_empty())
        })
    }

    /// Where a branch of one side goes.
    fn dest_single(&mut self, side: usize, call: BlockCall) -> Dest {
        let assign = self.assign_single(side, call);
        if !self.has_params(&assign) {
            return Dest::Direct(assign.target);
        }
        let block = self.block_like(assign.target);
        Dest::Edge(block, assign)
    }

    /// Where a matched branch goes: one target if the two are paired, a
    /// dispatch otherwise. `in_place` (a `jump`) lets the assignment happen
    /// in the current block.
    fn dest_pair(&mut self, c0: BlockCall, c1: BlockCall, in_place: bool) -> Dest {
        let t0 = c0.block(&self.funcs[0].dfg.value_lists);
        let t1 = c1.block(&self.funcs[1].dfg.value_lists);
        if self.rep(0, t0) == self.rep(1, t1) {
            let mut assign = self.assign_single(0, c0);
            assign.sides[1] = self.assign_single(1, c1).sides[1].take();
            if !self.has_params(&assign) {
                return Dest::Direct(assign.target);
            }
            let block = if in_place {
                self.builder.current_block().expect("in a block")
            } else {
                self.block_like(assign.target)
            };
            return Dest::Edge(block, assign);
        }
        let region = self.pair.regions.is_entry(0, t0) && self.pair.regions.is_entry(1, t1);
        let d0 = self.dest_single(0, c0);
        let d1 = self.dest_single(1, c1);
        let current = self.builder.current_block().expect("in a block");
        let block = self.block_like(current);
        Dest::Dispatch {
            block,
            dests: Box::new([d0, d1]),
            region,
        }
    }

    /// `jump` with its assignment done in the current block.
    fn emit_jump(&mut self, assign: Assign) {
        let target = assign.target;
        self.assign(&assign);
        self.builder.ins().jump(target, &[]);
    }

    fn emit_brif(&mut self, cond: Value, dests: [Dest; 2]) {
        let (then, other) = (dests[0].block(), dests[1].block());
        self.builder.ins().brif(cond, then, &[], other, &[]);
        let [d0, d1] = dests;
        self.fill(d0);
        self.fill(d1);
    }

    /// Emits the edge and dispatch blocks of a destination.
    fn fill(&mut self, dest: Dest) {
        match dest {
            Dest::Direct(_) => {}
            Dest::Edge(block, assign) => {
                self.builder.switch_to_block(block);
                self.emit_jump(assign);
            }
            Dest::Dispatch {
                block,
                dests,
                region,
            } => {
                self.builder.switch_to_block(block);
                self.dispatches += 1;
                let [d0, d1] = *dests;
                let (then, other) = (d1.block(), d0.block());
                let branch = self.builder.ins().brif(self.fid, then, &[], other, &[]);
                if region {
                    self.region_dispatches.insert(branch);
                }
                self.fill(d1);
                self.fill(d0);
            }
        }
    }

    /// Assigns the target's parameters: all values first, then all
    /// definitions (a parallel copy). Parameters at one position of a
    /// paired target that share a variable get the merged value.
    fn assign(&mut self, assign: &Assign) {
        let mut defs: Vec<(Variable, Value)> = Vec::new();
        match &assign.sides {
            [Some((t0, a0)), Some((t1, a1))] => {
                let p0 = self.funcs[0].dfg.block_params(*t0).to_vec();
                let p1 = self.funcs[1].dfg.block_params(*t1).to_vec();
                for q in 0..p0.len().max(p1.len()) {
                    match (p0.get(q), p1.get(q)) {
                        (Some(&x), Some(&y)) if self.shared(x, y) => {
                            let v = self.merged(a0[q], a1[q]);
                            defs.push((self.var(0, x), v));
                        }
                        (x, y) => {
                            if let Some(&x) = x {
                                let v = self.operand(0, a0[q]);
                                defs.push((self.var(0, x), v));
                            }
                            if let Some(&y) = y {
                                let v = self.operand(1, a1[q]);
                                defs.push((self.var(1, y), v));
                            }
                        }
                    }
                }
            }
            sides => {
                for (k, side) in sides.iter().enumerate() {
                    let Some((t, args)) = side else { continue };
                    let params = self.funcs[k].dfg.block_params(*t).to_vec();
                    for (&p, &a) in params.iter().zip(args) {
                        let v = self.operand(k, a);
                        defs.push((self.var(k, p), v));
                    }
                }
            }
        }
        for (var, value) in defs {
            self.builder.def_var(var, value);
        }
    }
}
