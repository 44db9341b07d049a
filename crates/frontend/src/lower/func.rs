//! Lowering of one TIR function body to CLIF.
//!
//! Invariants kept while lowering:
//! - `reachable` is true iff the builder's current block is open (not yet
//!   terminated) and reachable. Nothing is emitted while it is false: code
//!   after a `return`, `break`, `continue`, trap or `exit` is dead and skipped.
//! - A join block is entered only if some branch targets it (`targeted`);
//!   otherwise it stays pristine (never inserted in the layout).
//! - Locals are cranelift-frontend `Variable`s; join blocks get block
//!   parameters only for if/logical expression values. Blocks are sealed as
//!   soon as all their predecessors are known; `seal_all_blocks` at the end is
//!   a safety net.
//! - Every check (null, bounds, division) is a `brif` to one cold trap block
//!   per trap kind, emitted at the end of the function. What the block does
//!   is chosen by [`LowerConfig::traps`](super::LowerConfig):
//!   - [`super::TrapLowering::Call`] (the JIT, x86_64): it calls `pare_trap` and
//!     then executes a `trap` (the call never returns);
//!   - [`super::TrapLowering::SharedPaths`] (aarch64 objects): it is one `trap`
//!     with the kind's trap code ([`super::check_trap_code`]), which
//!     Cranelift emits as a `udf` and no call, so a function whose only call
//!     was the trap needs no frame; the machine pass `parec_passes::traps`
//!     then makes each such `udf` a `b pare_trap_<kind>`, the kind's shared
//!     path in the runtime (docs/DESIGN.md, "Trap paths"). Without that pass
//!     the `udf` would be reached: the driver runs it whenever the lowering
//!     says so.
//!
//!   Checks stay branches (not `trapz`/`trapnz`) in both: GVN proves checks
//!   redundant from the relations that branches establish in the blocks
//!   they dominate (`parec_passes::gvn::predicates`). Under `SharedPaths` a
//!   division has no check of Pare's: the instruction's own traps, which
//!   Cranelift emits anyway, are mapped to the shared paths
//!   ([`super::TrapLowering::division_checks_in_clif`]).
//! - Loads and stores are `trusted` (aligned, non-trapping): each happens
//!   after the explicit null/bounds check that makes it so, or on a global's
//!   or stack slot's own address. Each names the alias region of the memory
//!   it touches, and length loads are `readonly` ([`memory`]).
//! - `facts` records what checks already established about SSA values (a
//!   reference is non-null, an array's loaded length, a checked element
//!   address) and the integer conversions already emitted. A fact is used only where the point that established it
//!   dominates: the structured constructs mark the facts at a branch and
//!   restore them at the join (whose immediate dominator is at or after the
//!   save point), so repeated checks of the same value are not emitted.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{self, types, BlockArg, InstBuilder, MemFlagsData, TrapCode, Value};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use hashbrown::{HashMap, HashSet};
use parec_passes::clif_module::ClifModule;

use super::memory::{self, Region};
use super::{
    check_trap_code, clif_type, func_signature, Imports, ModuleBuilder, RuntimeFn, CHECKED_KINDS,
};
use crate::tir::{
    BinOp, Block, Builtin, Expr, ExprKind, FuncId, Logical, Place, Stmt, TrapKind, Ty, UnOp,
};

/// The trap code of the `trap` that follows a call that never returns
/// (`pare_trap`, `pare_exit`), and of code the checker promised unreachable.
pub(crate) const NORETURN_TRAP: TrapCode = TrapCode::unwrap_user(1);

/// Memory flags of a checked access: aligned and known not to trap.
pub(crate) const TRUSTED: MemFlagsData = MemFlagsData::trusted();

/// Offset of the first element in an array or string block.
const ELEMS_OFFSET: i32 = 8;

/// Lowers function `id` of the program `mb` is building.
pub(super) fn lower_function(mb: &mut ModuleBuilder<'_>, id: FuncId) -> ir::Function {
    let f = mb.program.func(id);
    let symbol = mb.func_symbol(id);
    let mut func = ir::Function::with_name_signature(
        ClifModule::func_name(symbol),
        func_signature(f, &mb.cfg),
    );
    // A fresh context per function: `FunctionBuilder::finalize` (which would
    // reset a shared one) wants a target_lexicon pointer width, and this
    // crate does not depend on target_lexicon; the verifier checks the result.
    let mut fctx = FunctionBuilderContext::new();
    let builder = FunctionBuilder::new(&mut func, &mut fctx);
    let mut lowering = FnLower {
        mb,
        b: builder,
        f,
        vars: Vec::new(),
        fixed: vec![None; f.locals.len()],
        imports: Imports::default(),
        reachable: true,
        targeted: HashSet::new(),
        loops: Vec::new(),
        trap_blocks: [None; TrapKind::ALL.len()],
        facts: Facts::default(),
    };
    lowering.lower_body();
    drop(lowering);
    func
}

/// Facts established by checks, valid at the current point (see module
/// doc). Scoping uses an undo log rather than copies, so saving and restoring
/// at each branch costs only what the branch added.
#[derive(Default)]
struct Facts {
    non_null: HashSet<Value>,
    /// Array (or string) reference → its loaded length.
    lengths: HashMap<Value, Value>,
    /// (array, index as lowered) → checked element address.
    elements: HashMap<(Value, Value), Value>,
    /// (value, type, sign-extend) → the value converted to the type.
    conversions: HashMap<(Value, ir::Type, bool), Value>,
    /// Every fact added, in order, to undo back to a [`Facts::mark`].
    log: Vec<Fact>,
}

enum Fact {
    NonNull(Value),
    Length(Value),
    Element((Value, Value)),
    Conversion((Value, ir::Type, bool)),
}

impl Facts {
    fn mark(&self) -> usize {
        self.log.len()
    }

    /// Forgets every fact added since `mark`.
    fn restore(&mut self, mark: usize) {
        for fact in self.log.drain(mark..) {
            match fact {
                Fact::NonNull(v) => self.non_null.remove(&v),
                Fact::Length(v) => self.lengths.remove(&v).is_some(),
                Fact::Element(k) => self.elements.remove(&k).is_some(),
                Fact::Conversion(k) => self.conversions.remove(&k).is_some(),
            };
        }
    }

    /// Records that `v` is non-null; false if already known.
    fn add_non_null(&mut self, v: Value) -> bool {
        let new = self.non_null.insert(v);
        if new {
            self.log.push(Fact::NonNull(v));
        }
        new
    }

    fn add_length(&mut self, array: Value, len: Value) {
        if self.lengths.insert(array, len).is_none() {
            self.log.push(Fact::Length(array));
        }
    }

    fn add_element(&mut self, key: (Value, Value), addr: Value) {
        if self.elements.insert(key, addr).is_none() {
            self.log.push(Fact::Element(key));
        }
    }

    fn add_conversion(&mut self, key: (Value, ir::Type, bool), converted: Value) {
        if self.conversions.insert(key, converted).is_none() {
            self.log.push(Fact::Conversion(key));
        }
    }
}

/// Branch targets of the innermost loops.
struct LoopTargets {
    continue_to: ir::Block,
    break_to: ir::Block,
}

struct FnLower<'a, 'm, 'p> {
    mb: &'m mut ModuleBuilder<'p>,
    b: FunctionBuilder<'a>,
    f: &'p crate::tir::Func,
    /// The variable of each local (`None` for locals without a value type).
    vars: Vec<Option<Variable>>,
    /// The value of each immutable local bound so far: a `let` without `mut`
    /// (and an immutable parameter) names one SSA value wherever it is in
    /// scope, so it needs no variable, and the facts about that value (a
    /// null check, a length) hold at every use — inside a loop too, where a
    /// variable would read a block parameter of the unsealed loop header.
    fixed: Vec<Option<Value>>,
    imports: Imports,
    reachable: bool,
    /// Blocks some emitted branch targets.
    targeted: HashSet<ir::Block>,
    loops: Vec<LoopTargets>,
    /// The shared trap block of each trap kind, indexed by its code.
    trap_blocks: [Option<ir::Block>; TrapKind::ALL.len()],
    facts: Facts,
}

impl<'p> FnLower<'_, '_, 'p> {
    // ---- function structure ------------------------------------------------

    fn lower_body(&mut self) {
        let entry = self.b.create_block();
        self.b.append_block_params_for_function_params(entry);
        self.b.switch_to_block(entry);
        self.b.seal_block(entry);
        let cfg = self.mb.cfg;
        for local in &self.f.locals {
            let var = clif_type(&local.ty, &cfg).map(|ty| self.b.declare_var(ty));
            self.vars.push(var);
        }
        if self.f.is_main {
            self.call_runtime(RuntimeFn::Init, &[]);
        }
        let params: Vec<Value> = self.b.block_params(entry).to_vec();
        let mut param_values = params.into_iter();
        for i in 0..self.f.num_params as usize {
            if let Some(var) = self.vars[i] {
                if let Some(v) = param_values.next() {
                    self.bind(i as u32, var, v);
                }
            }
        }
        let f = self.f;
        let value = self.block(&f.body);
        if self.reachable {
            self.emit_return(value);
        }
        self.emit_trap_blocks();
        self.b.seal_all_blocks();
    }

    /// Returns `value` from the function (`main` returns its C status).
    fn emit_return(&mut self, value: Option<Value>) {
        let needs_value = clif_type(&self.f.ret, &self.mb.cfg).is_some();
        if needs_value && value.is_none() {
            // Only for a body the checker typed inconsistently.
            self.unreachable();
            return;
        }
        if self.f.is_main {
            let status = match value {
                None => self.b.ins().iconst(types::I32, 0),
                Some(v) => self.resize_int(v, types::I32, self.f.ret.is_signed()),
            };
            // The C library flushes stdout after `main` without reporting
            // errors; the runtime flushes first and traps on a write error.
            // (Freestanding, `pare_exit` flushes again, finding nothing: a
            // program's own code is the same CLIF whatever its runtime
            // stands on, so that the JIT's profiles name it.)
            self.call_runtime(RuntimeFn::Flush, &[]);
            self.b.ins().return_(&[status]);
        } else {
            let rets: Vec<Value> = value.into_iter().collect();
            self.b.ins().return_(&rets);
        }
        self.reachable = false;
    }

    /// Terminates the current block with a trap: control cannot get here.
    fn unreachable(&mut self) {
        self.b.ins().trap(NORETURN_TRAP);
        self.reachable = false;
    }

    fn emit_trap_blocks(&mut self) {
        for kind in TrapKind::ALL {
            let Some(block) = self.trap_blocks[kind.code() as usize] else {
                continue;
            };
            self.b.switch_to_block(block);
            self.b.seal_block(block);
            if let Some(trap) = self.shared_trap_code(kind) {
                self.b.ins().trap(trap);
            } else {
                let code = self.b.ins().iconst(types::I32, i64::from(kind.code()));
                self.call_runtime(RuntimeFn::Trap, &[code]);
                self.b.ins().trap(NORETURN_TRAP);
            }
            self.b.set_cold_block(block);
        }
        self.reachable = false;
    }

    // ---- control-flow helpers ----------------------------------------------

    fn jump(&mut self, to: ir::Block, args: &[Value]) {
        let args: Vec<BlockArg> = args.iter().map(|&v| BlockArg::Value(v)).collect();
        self.b.ins().jump(to, &args);
        self.targeted.insert(to);
        self.reachable = false;
    }

    /// `brif cond, then(then_args), else(else_args)`.
    fn branch(
        &mut self,
        cond: Value,
        then: ir::Block,
        then_args: &[Value],
        els: ir::Block,
        else_args: &[Value],
    ) {
        let then_args: Vec<BlockArg> = then_args.iter().map(|&v| BlockArg::Value(v)).collect();
        let else_args: Vec<BlockArg> = else_args.iter().map(|&v| BlockArg::Value(v)).collect();
        self.b.ins().brif(cond, then, &then_args, els, &else_args);
        self.targeted.insert(then);
        self.targeted.insert(els);
        self.reachable = false;
    }

    /// Continues in `block` if some branch reaches it.
    fn enter(&mut self, block: ir::Block) {
        if self.targeted.contains(&block) {
            self.b.switch_to_block(block);
            self.reachable = true;
        } else {
            self.reachable = false;
        }
    }

    /// Enters a fresh block whose only predecessor was just emitted.
    fn enter_sealed(&mut self, block: ir::Block) {
        self.b.seal_block(block);
        self.enter(block);
    }

    fn trap_block(&mut self, kind: TrapKind) -> ir::Block {
        let slot = kind.code() as usize;
        match self.trap_blocks[slot] {
            Some(block) => block,
            None => {
                let block = self.b.create_block();
                self.trap_blocks[slot] = Some(block);
                block
            }
        }
    }

    /// The trap code of the trap block of `kind`, if checks are lowered as
    /// shared trap paths (see the module doc).
    fn shared_trap_code(&self, kind: TrapKind) -> Option<TrapCode> {
        let shared = self.mb.cfg.traps.has_shared_paths();
        (shared && CHECKED_KINDS.contains(&kind)).then(|| check_trap_code(kind))
    }

    /// Traps with `kind` if `cond` is non-zero.
    fn trap_if(&mut self, cond: Value, kind: TrapKind) {
        let trap = self.trap_block(kind);
        let cont = self.b.create_block();
        self.branch(cond, trap, &[], cont, &[]);
        self.enter_sealed(cont);
    }

    /// Traps with `kind` if `cond` is zero.
    fn trap_unless(&mut self, cond: Value, kind: TrapKind) {
        let trap = self.trap_block(kind);
        let cont = self.b.create_block();
        self.branch(cond, cont, &[], trap, &[]);
        self.enter_sealed(cont);
    }

    fn null_check(&mut self, reference: Value) {
        // A symbol's address (a string literal, a global block) is never null.
        if self.facts.add_non_null(reference) && !self.is_symbol_address(reference) {
            self.trap_unless(reference, TrapKind::NullDereference);
        }
    }

    /// Loads the length of a checked non-null array or string.
    fn length(&mut self, array: Value) -> Value {
        self.null_check(array);
        if let Some(&len) = self.facts.lengths.get(&array) {
            return len;
        }
        let movable = self.is_symbol_address(array);
        let flags = memory::length_load(self.b.func, movable);
        let len = self.b.ins().load(types::I64, flags, array, 0);
        self.facts.add_length(array, len);
        len
    }

    /// Whether `v` is a symbol's address (never null).
    fn is_symbol_address(&self, v: Value) -> bool {
        let dfg = &self.b.func.dfg;
        dfg.value_def(v)
            .inst()
            .is_some_and(|inst| dfg.insts[inst].opcode() == ir::Opcode::SymbolValue)
    }

    // ---- small value helpers -----------------------------------------------

    /// An integer constant of type `ty`, given as its i64 value (the
    /// immediate is masked to the type's width, as the verifier requires).
    fn iconst(&mut self, ty: ir::Type, value: i64) -> Value {
        let masked = match ty.bits() {
            bits @ 1..=63 => value & ((1i64 << bits) - 1),
            _ => value,
        };
        self.b.ins().iconst(ty, masked)
    }

    /// Converts integer `v` to `ty`: truncates, or sign-/zero-extends.
    /// Conversions are pure, so one already emitted at a dominating point is
    /// reused (this lets the element cache recognise `a[i as i64]` twice).
    fn resize_int(&mut self, v: Value, ty: ir::Type, signed: bool) -> Value {
        let from = self.b.func.dfg.value_type(v);
        if from.bits() == ty.bits() {
            return v;
        }
        let key = (v, ty, signed && from.bits() < ty.bits());
        if let Some(&done) = self.facts.conversions.get(&key) {
            return done;
        }
        let converted = if from.bits() > ty.bits() {
            self.b.ins().ireduce(ty, v)
        } else if signed {
            self.b.ins().sextend(ty, v)
        } else {
            self.b.ins().uextend(ty, v)
        };
        self.facts.add_conversion(key, converted);
        converted
    }

    fn call_runtime(&mut self, f: RuntimeFn, args: &[Value]) -> Option<Value> {
        let sym = self.mb.runtime_symbol(f);
        self.call_symbol(sym, args)
    }

    fn call_symbol(&mut self, sym: u32, args: &[Value]) -> Option<Value> {
        let callee = self.imports.func(self.b.func, &self.mb.clif, sym);
        let call = self.b.ins().call(callee, args);
        self.b.inst_results(call).first().copied()
    }

    fn symbol_address(&mut self, sym: u32) -> Value {
        let gv = self.imports.data(self.b.func, sym);
        self.b.ins().symbol_value(self.mb.cfg.pointer_type, gv)
    }

    /// Gives local `id` its first value `v`: an immutable local is `v`
    /// from here on; a mutable one is variable `var`.
    fn bind(&mut self, id: u32, var: Variable, v: Value) {
        if self.f.locals[id as usize].mutable {
            self.b.def_var(var, v);
        } else {
            self.fixed[id as usize] = Some(v);
        }
    }

    /// The variable of local `id` (`None` for locals without a value).
    fn var(&self, id: u32) -> Option<Variable> {
        self.vars.get(id as usize).copied().flatten()
    }

    fn ty(&self, ty: &Ty) -> Option<ir::Type> {
        clif_type(ty, &self.mb.cfg)
    }

    // ---- blocks and statements ---------------------------------------------

    /// Lowers a block; returns its value (if it has one and is reachable).
    fn block(&mut self, block: &'p Block) -> Option<Value> {
        for stmt in &block.stmts {
            if !self.reachable {
                return None;
            }
            self.stmt(stmt);
        }
        let value = match &block.tail {
            Some(tail) if self.reachable => self.expr(tail),
            _ => None,
        };
        if self.reachable && block.ty == Ty::Never {
            self.unreachable();
        }
        value.filter(|_| self.reachable)
    }

    fn stmt(&mut self, stmt: &'p Stmt) {
        match stmt {
            Stmt::Let(local, init) => {
                let value = self.expr(init);
                if let (Some(var), Some(v)) = (self.var(local.0), value) {
                    if self.reachable {
                        self.bind(local.0, var, v);
                    }
                }
            }
            Stmt::Assign(place, value) => self.assign(place, value),
            Stmt::Expr(e) => {
                self.expr(e);
            }
            Stmt::While(cond, body) => self.while_loop(cond, body),
            Stmt::For {
                var,
                start,
                end,
                body,
            } => self.for_loop(var.0, start, end, body),
            Stmt::Break | Stmt::Continue => match self.loops.last() {
                Some(targets) => {
                    let to = if matches!(stmt, Stmt::Break) {
                        targets.break_to
                    } else {
                        targets.continue_to
                    };
                    self.jump(to, &[]);
                }
                None => self.unreachable(),
            },
            Stmt::Return(value) => {
                let v = match value {
                    Some(e) => self.expr(e),
                    None => None,
                };
                if self.reachable {
                    self.emit_return(v);
                }
            }
        }
    }

    /// Stores to `place`: the place's operands, then the value, then the
    /// checks, then the store (the order the language specifies).
    fn assign(&mut self, place: &'p Place, value: &'p Expr) {
        match place {
            Place::Local(local) => {
                let v = self.expr(value);
                if let (Some(var), Some(v), true) = (self.var(local.0), v, self.reachable) {
                    self.b.def_var(var, v);
                }
            }
            Place::Global(id) => {
                let Some(v) = self.value(value) else { return };
                let sym = self.mb.global_symbol(*id);
                let addr = self.symbol_address(sym);
                let flags = Region::Global.trusted(self.b.func);
                self.b.ins().store(flags, v, addr, 0);
            }
            Place::Field(base, sid, field) => {
                let Some(p) = self.value(base) else { return };
                let Some(v) = self.value(value) else { return };
                let offset = self.field_offset(*sid, *field);
                self.null_check(p);
                let flags = Region::Field.trusted(self.b.func);
                self.b.ins().store(flags, v, p, offset);
            }
            Place::Index(base, index) => {
                let Some(a) = self.value(base) else { return };
                let Some(i) = self.value(index) else { return };
                let Some(v) = self.value(value) else { return };
                let elem = element_type(&base.ty);
                let addr = self.element_address(a, i, &index.ty, &elem);
                let flags = Region::Element.trusted(self.b.func);
                self.b.ins().store(flags, v, addr, ELEMS_OFFSET);
            }
        }
    }

    fn while_loop(&mut self, cond: &'p Expr, body: &'p Block) {
        let header = self.b.create_block();
        let body_block = self.b.create_block();
        let exit = self.b.create_block();
        self.jump(header, &[]);
        self.enter(header);
        self.cond_branch(cond, body_block, exit);
        if self.targeted.contains(&body_block) {
            // The blocks of the condition before its first branch dominate
            // the body and the exit; what the rest of it established is
            // forgotten by `cond_branch`.
            let at_branch = self.facts.mark();
            self.enter_sealed(body_block);
            self.loops.push(LoopTargets {
                continue_to: header,
                break_to: exit,
            });
            self.block(body);
            self.loops.pop();
            if self.reachable {
                self.jump(header, &[]);
            }
            self.facts.restore(at_branch);
        }
        self.b.seal_block(header);
        self.enter_sealed(exit);
    }

    /// `for var in start..end body`: `end` is evaluated once; `continue`
    /// goes to the increment.
    fn for_loop(&mut self, var: u32, start: &'p Expr, end: &'p Expr, body: &'p Block) {
        let Some(first) = self.value(start) else {
            return;
        };
        let Some(limit) = self.value(end) else { return };
        let Some(var) = self.var(var) else { return };
        let less = if start.ty.is_signed() {
            IntCC::SignedLessThan
        } else {
            IntCC::UnsignedLessThan
        };
        self.b.def_var(var, first);
        let header = self.b.create_block();
        let body_block = self.b.create_block();
        let step = self.b.create_block();
        let exit = self.b.create_block();
        let before = self.facts.mark();
        self.jump(header, &[]);
        self.enter(header);
        let i = self.b.use_var(var);
        let more = self.b.ins().icmp(less, i, limit);
        self.branch(more, body_block, &[], exit, &[]);
        self.enter_sealed(body_block);
        self.loops.push(LoopTargets {
            continue_to: step,
            break_to: exit,
        });
        self.block(body);
        self.loops.pop();
        if self.reachable {
            self.jump(step, &[]);
        }
        // The step and the exit are dominated by the loop entry only.
        self.facts.restore(before);
        self.enter_sealed(step);
        if self.reachable {
            let i = self.b.use_var(var);
            let ty = self.b.func.dfg.value_type(i);
            let one = self.iconst(ty, 1);
            let next = self.b.ins().iadd(i, one);
            self.b.def_var(var, next);
            self.jump(header, &[]);
        }
        self.b.seal_block(header);
        self.enter_sealed(exit);
    }

    // ---- expressions -------------------------------------------------------

    /// Lowers `e` for a value; `None` means control does not continue.
    fn value(&mut self, e: &'p Expr) -> Option<Value> {
        let v = self.expr(e);
        v.filter(|_| self.reachable)
    }

    /// Lowers `e`; returns its value, or `None` for unit and for expressions
    /// after which control does not continue.
    fn expr(&mut self, e: &'p Expr) -> Option<Value> {
        if !self.reachable {
            return None;
        }
        let v = self.expr_kind(e);
        if self.reachable && e.ty == Ty::Never {
            self.unreachable();
        }
        v.filter(|_| self.reachable)
    }

    fn expr_kind(&mut self, e: &'p Expr) -> Option<Value> {
        match &e.kind {
            ExprKind::Const(c) => {
                let ty = self.ty(&e.ty)?;
                Some(self.iconst(ty, *c))
            }
            ExprKind::Str(bytes) => {
                let sym = self.mb.string_symbol(bytes);
                Some(self.symbol_address(sym))
            }
            ExprKind::Null => Some(self.iconst(self.mb.cfg.pointer_type, 0)),
            ExprKind::Local(local) => {
                if let Some(v) = self.fixed[local.0 as usize] {
                    return Some(v);
                }
                let var = self.var(local.0)?;
                Some(self.b.use_var(var))
            }
            ExprKind::Global(id) => {
                let ty = self.ty(&self.mb.program.global(*id).ty)?;
                let sym = self.mb.global_symbol(*id);
                let addr = self.symbol_address(sym);
                let flags = Region::Global.trusted(self.b.func);
                Some(self.b.ins().load(ty, flags, addr, 0))
            }
            ExprKind::Unary(op, operand) => {
                let v = self.value(operand)?;
                Some(self.unary(*op, v, &operand.ty))
            }
            ExprKind::Binary(op, lhs, rhs) => self.binary(*op, lhs, rhs),
            ExprKind::Logical(op, lhs, rhs) => self.logical(*op, lhs, rhs),
            ExprKind::Cast(inner) => {
                let v = self.value(inner)?;
                let ty = self.ty(&e.ty)?;
                Some(self.resize_int(v, ty, inner.ty.is_signed()))
            }
            ExprKind::Call(callee, args) => {
                let args = self.values(args)?;
                self.call_func(*callee, &args)
            }
            ExprKind::CallExtern(callee, args) => {
                let args = self.values(args)?;
                let sym = self.mb.extern_symbol(*callee);
                self.call_symbol(sym, &args)
            }
            ExprKind::Builtin(builtin, args) => self.builtin(*builtin, args),
            ExprKind::Field(base, sid, field) => {
                let p = self.value(base)?;
                let ty = self.ty(&e.ty)?;
                let offset = self.field_offset(*sid, *field);
                self.null_check(p);
                let flags = Region::Field.trusted(self.b.func);
                Some(self.b.ins().load(ty, flags, p, offset))
            }
            ExprKind::Index(base, index) => {
                let a = self.value(base)?;
                let i = self.value(index)?;
                let elem = element_type(&base.ty);
                let ty = self.ty(&elem)?;
                let addr = self.element_address(a, i, &index.ty, &elem);
                let flags = Region::Element.trusted(self.b.func);
                Some(self.b.ins().load(ty, flags, addr, ELEMS_OFFSET))
            }
            ExprKind::NewArray(elem, len) => {
                let n = self.value(len)?;
                let n = self.resize_int(n, types::I64, len.ty.is_signed());
                let size = self.iconst(types::I64, i64::from(elem.size()));
                let array = self.call_runtime(RuntimeFn::NewArray, &[n, size])?;
                // The runtime returns a block holding `n` (it traps on a
                // negative length and on a failed allocation).
                self.facts.add_non_null(array);
                self.facts.add_length(array, n);
                Some(array)
            }
            ExprKind::NewStruct(sid, fields) => self.new_struct(*sid, fields),
            ExprKind::If(cond, then, els) => self.if_expr(&e.ty, cond, then, els.as_ref()),
            ExprKind::Block(block) => self.block(block),
        }
    }

    /// Lowers each expression for its value, left to right.
    fn values(&mut self, exprs: &'p [Expr]) -> Option<Vec<Value>> {
        let mut values = Vec::with_capacity(exprs.len());
        for e in exprs {
            let v = self.expr(e);
            if !self.reachable {
                return None;
            }
            values.extend(v);
        }
        Some(values)
    }

    fn call_func(&mut self, callee: FuncId, args: &[Value]) -> Option<Value> {
        let sym = self.mb.func_symbol(callee);
        let result = self.call_symbol(sym, args)?;
        let f = self.mb.program.func(callee);
        if f.is_main {
            // `main` returns its C status (i32); convert back to its Pare type.
            let ty = self.ty(&f.ret)?;
            return Some(self.resize_int(result, ty, true));
        }
        Some(result)
    }

    fn unary(&mut self, op: UnOp, v: Value, ty: &Ty) -> Value {
        match (op, ty) {
            (UnOp::Neg, _) => self.b.ins().ineg(v),
            (UnOp::Not | UnOp::BitNot, Ty::Bool) => {
                let one = self.iconst(types::I8, 1);
                self.b.ins().bxor(v, one)
            }
            (UnOp::Not | UnOp::BitNot, _) => self.b.ins().bnot(v),
        }
    }

    fn binary(&mut self, op: BinOp, lhs: &'p Expr, rhs: &'p Expr) -> Option<Value> {
        let x = self.value(lhs)?;
        let y = self.value(rhs)?;
        let signed = lhs.ty.is_signed();
        let ins = self.b.ins();
        Some(match op {
            BinOp::Add => ins.iadd(x, y),
            BinOp::Sub => ins.isub(x, y),
            BinOp::Mul => ins.imul(x, y),
            BinOp::And => ins.band(x, y),
            BinOp::Or => ins.bor(x, y),
            BinOp::Xor => ins.bxor(x, y),
            BinOp::Div | BinOp::Rem => return Some(self.div_rem(op, signed, x, y, rhs)),
            BinOp::Shl | BinOp::Shr => {
                // ishl/sshr/ushr take the amount modulo the width of `x`,
                // exactly Pare's rule; only the amount's type is adjusted.
                let ty = self.b.func.dfg.value_type(x);
                let amount = self.resize_int(y, ty, false);
                let ins = self.b.ins();
                match (op, signed) {
                    (BinOp::Shl, _) => ins.ishl(x, amount),
                    (_, true) => ins.sshr(x, amount),
                    (_, false) => ins.ushr(x, amount),
                }
            }
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                ins.icmp(compare_cc(op, signed), x, y)
            }
        })
    }

    /// Division and remainder with Pare's checks: a zero divisor traps, signed
    /// `MIN / -1` traps, signed `MIN % -1` is 0. Where the division's own
    /// traps are Pare's ([`super::TrapLowering::division_checks_in_clif`]: aarch64
    /// objects) the CLIF instruction is all: `sdiv`/`udiv`/`urem` trap as
    /// Pare does, and CLIF's `srem` traps only on a zero divisor (`MIN % -1`
    /// is 0: Cranelift's mid-end folds `srem x, -1` to 0 and its aarch64
    /// lowering computes it with `sdiv`, which does not trap, and `msub`).
    /// Otherwise the checks come first, as branches, and for `srem` the
    /// divisor -1 is replaced by 1, which gives the same remainder 0 for
    /// every dividend (cranelift-interpreter, which the differential tester
    /// runs on this code, traps on `MIN % -1`). Checks a constant divisor
    /// makes moot are not emitted.
    fn div_rem(&mut self, op: BinOp, signed: bool, x: Value, y: Value, divisor: &Expr) -> Value {
        let constant = match divisor.kind {
            ExprKind::Const(c) => Some(c),
            _ => None,
        };
        let ty = self.b.func.dfg.value_type(x);
        if signed && op == BinOp::Rem && constant == Some(-1) {
            return self.iconst(ty, 0);
        }
        if self.mb.cfg.traps.division_checks_in_clif() {
            let ins = self.b.ins();
            return match (op, signed) {
                (BinOp::Div, true) => ins.sdiv(x, y),
                (_, true) => ins.srem(x, y),
                (BinOp::Div, false) => ins.udiv(x, y),
                (_, false) => ins.urem(x, y),
            };
        }
        if constant.is_none_or(|c| c == 0) {
            self.trap_unless(y, TrapKind::DivisionByZero);
        }
        let may_be_minus_one = signed && constant.is_none_or(|c| c == -1);
        match (op, signed) {
            (BinOp::Div, true) => {
                if may_be_minus_one {
                    let min = self.iconst(ty, i64::MIN >> (64 - ty.bits()));
                    let x_is_min = self.b.ins().icmp(IntCC::Equal, x, min);
                    let minus_one = self.iconst(ty, -1);
                    let y_is_minus_one = self.b.ins().icmp(IntCC::Equal, y, minus_one);
                    let overflow = self.b.ins().band(x_is_min, y_is_minus_one);
                    self.trap_if(overflow, TrapKind::DivisionOverflow);
                }
                self.b.ins().sdiv(x, y)
            }
            (_, true) => {
                let divisor = if may_be_minus_one {
                    let minus_one = self.iconst(ty, -1);
                    let y_is_minus_one = self.b.ins().icmp(IntCC::Equal, y, minus_one);
                    let one = self.iconst(ty, 1);
                    self.b.ins().select(y_is_minus_one, one, y)
                } else {
                    y
                };
                self.b.ins().srem(x, divisor)
            }
            (BinOp::Div, false) => self.b.ins().udiv(x, y),
            (_, false) => self.b.ins().urem(x, y),
        }
    }

    /// Short-circuit `&&` / `||`: the left operand's value is what the
    /// short-circuit edge passes (false for `&&`, true for `||`).
    fn logical(&mut self, op: Logical, lhs: &'p Expr, rhs: &'p Expr) -> Option<Value> {
        let a = self.value(lhs)?;
        let rhs_block = self.b.create_block();
        let merge = self.b.create_block();
        let result = self.b.append_block_param(merge, types::I8);
        match op {
            Logical::And => self.branch(a, rhs_block, &[], merge, &[a]),
            Logical::Or => self.branch(a, merge, &[a], rhs_block, &[]),
        }
        let at_branch = self.facts.mark();
        self.enter_sealed(rhs_block);
        if let Some(b) = self.value(rhs) {
            self.jump(merge, &[b]);
        }
        self.facts.restore(at_branch);
        self.enter_sealed(merge);
        self.reachable.then_some(result)
    }

    /// Lowers `cond` (a bool) for control flow only: branches to `then` if
    /// it is true and to `els` if it is false, and leaves the current block
    /// terminated. `&&`, `||` and `!` become branches rather than values
    /// (no bool is materialized and tested again), and a constant jumps.
    /// Facts established inside a right operand hold only where that operand
    /// ran, so they are forgotten; those of a left operand (which runs first,
    /// on every path) stay.
    fn cond_branch(&mut self, cond: &'p Expr, then: ir::Block, els: ir::Block) {
        if !self.reachable {
            return;
        }
        match &cond.kind {
            ExprKind::Logical(op, lhs, rhs) => {
                let rhs_block = self.b.create_block();
                match op {
                    Logical::And => self.cond_branch(lhs, rhs_block, els),
                    Logical::Or => self.cond_branch(lhs, then, rhs_block),
                }
                let before_rhs = self.facts.mark();
                self.enter_sealed(rhs_block);
                self.cond_branch(rhs, then, els);
                self.facts.restore(before_rhs);
            }
            ExprKind::Unary(UnOp::Not, operand) if cond.ty == Ty::Bool => {
                self.cond_branch(operand, els, then)
            }
            ExprKind::Const(c) => self.jump(if *c != 0 { then } else { els }, &[]),
            _ => {
                if let Some(c) = self.value(cond) {
                    self.branch(c, then, &[], els, &[]);
                }
            }
        }
    }

    fn if_expr(
        &mut self,
        ty: &Ty,
        cond: &'p Expr,
        then: &'p Block,
        els: Option<&'p Block>,
    ) -> Option<Value> {
        let then_block = self.b.create_block();
        let merge = self.b.create_block();
        let result_ty = self.ty(ty);
        let result = result_ty.map(|t| self.b.append_block_param(merge, t));
        let else_block = match els {
            Some(_) => self.b.create_block(),
            None => merge,
        };
        self.cond_branch(cond, then_block, else_block);
        let at_branch = self.facts.mark();
        self.enter_sealed(then_block);
        self.branch_into(then, merge, result_ty.is_some());
        self.facts.restore(at_branch);
        if let Some(els) = els {
            self.enter_sealed(else_block);
            self.branch_into(els, merge, result_ty.is_some());
            self.facts.restore(at_branch);
        }
        self.enter_sealed(merge);
        result.filter(|_| self.reachable)
    }

    /// Lowers one arm of an `if`, then jumps to `merge` (with the arm's value
    /// if the `if` has one).
    fn branch_into(&mut self, arm: &'p Block, merge: ir::Block, with_value: bool) {
        let v = self.block(arm);
        if !self.reachable {
            return;
        }
        match (with_value, v) {
            (true, Some(v)) => self.jump(merge, &[v]),
            (true, None) => self.unreachable(),
            (false, _) => self.jump(merge, &[]),
        }
    }

    fn builtin(&mut self, builtin: Builtin, args: &'p [Expr]) -> Option<Value> {
        let values = self.values(args)?;
        let (&arg, arg_ty) = values.first().zip(args.first().map(|a| &a.ty))?;
        match builtin {
            Builtin::Print => match arg_ty {
                Ty::Bool => self.call_runtime(RuntimeFn::PrintBool, &[arg]),
                _ => {
                    let wide = self.resize_int(arg, types::I64, arg_ty.is_signed());
                    self.call_runtime(RuntimeFn::PrintI64, &[wide])
                }
            },
            Builtin::PrintStr => self.call_runtime(RuntimeFn::PrintStr, &[arg]),
            Builtin::Len => Some(self.length(arg)),
            Builtin::Exit => {
                let code = self.resize_int(arg, types::I32, arg_ty.is_signed());
                self.call_runtime(RuntimeFn::Exit, &[code]);
                self.unreachable();
                None
            }
        }
    }

    /// `new S { ... }`: evaluates the initializers in source order, then
    /// allocates (zeroed) and stores them.
    fn new_struct(
        &mut self,
        sid: crate::tir::StructId,
        fields: &'p [(u32, Expr)],
    ) -> Option<Value> {
        let mut values = Vec::with_capacity(fields.len());
        for (field, init) in fields {
            let v = self.expr(init);
            if !self.reachable {
                return None;
            }
            values.extend(v.map(|v| (*field, v)));
        }
        let size = self.mb.program.struct_def(sid).size;
        let size = self.iconst(types::I64, i64::from(size.max(1)));
        let p = self.call_runtime(RuntimeFn::Alloc, &[size])?;
        // The runtime traps instead of returning null.
        self.facts.add_non_null(p);
        for (field, v) in values {
            let offset = self.field_offset(sid, field);
            let flags = Region::Field.trusted(self.b.func);
            self.b.ins().store(flags, v, p, offset);
        }
        Some(p)
    }

    // ---- memory ------------------------------------------------------------

    fn field_offset(&self, sid: crate::tir::StructId, field: u32) -> i32 {
        let def = self.mb.program.struct_def(sid);
        def.field_offsets
            .get(field as usize)
            .map_or(0, |&o| o as i32)
    }

    /// Checks `array` (non-null) and `index` (`0 <= index < len`, as one
    /// unsigned compare) and returns the address of element `index` minus
    /// [`ELEMS_OFFSET`].
    fn element_address(&mut self, array: Value, index: Value, index_ty: &Ty, elem: &Ty) -> Value {
        if let Some(&addr) = self.facts.elements.get(&(array, index)) {
            return addr;
        }
        let key = (array, index);
        let len = self.length(array);
        let index = self.resize_int(index, types::I64, index_ty.is_signed());
        let out_of_bounds = self
            .b
            .ins()
            .icmp(IntCC::UnsignedGreaterThanOrEqual, index, len);
        self.trap_if(out_of_bounds, TrapKind::IndexOutOfBounds);
        let scaled = match elem.size() {
            0 | 1 => index,
            size => self.b.ins().imul_imm_u(index, i64::from(size)),
        };
        let scaled = self.resize_int(scaled, self.mb.cfg.pointer_type, false);
        let addr = self.b.ins().iadd(array, scaled);
        self.facts.add_element(key, addr);
        addr
    }
}

/// The element type of an array or string type.
fn element_type(ty: &Ty) -> Ty {
    match ty {
        Ty::Array(elem) => (**elem).clone(),
        _ => Ty::U8,
    }
}

fn compare_cc(op: BinOp, signed: bool) -> IntCC {
    match (op, signed) {
        (BinOp::Eq, _) => IntCC::Equal,
        (BinOp::Ne, _) => IntCC::NotEqual,
        (BinOp::Lt, true) => IntCC::SignedLessThan,
        (BinOp::Le, true) => IntCC::SignedLessThanOrEqual,
        (BinOp::Gt, true) => IntCC::SignedGreaterThan,
        (BinOp::Ge, true) => IntCC::SignedGreaterThanOrEqual,
        (BinOp::Lt, false) => IntCC::UnsignedLessThan,
        (BinOp::Le, false) => IntCC::UnsignedLessThanOrEqual,
        (BinOp::Gt, false) => IntCC::UnsignedGreaterThan,
        (_, false) => IntCC::UnsignedGreaterThanOrEqual,
        (_, true) => IntCC::SignedGreaterThanOrEqual,
    }
}
