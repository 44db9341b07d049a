//! Instruction roles: what every instruction of a function is there for —
//! the frame, a call and the moves around it, a check, a trap path,
//! constants, addresses, memory, compares and branches, arithmetic.
//!
//! The size passes count bytes; this says which bytes. Summed over a
//! program (`parec size --roles`) and set beside the same table for
//! clang's code of the same program, it shows where the difference is:
//! frames, checks, argument shuffling, constants rematerialised.
//!
//! # Notation
//!
//! - The function is lifted ([`super::lift`]); a relocation's target is
//!   a [`Callee`]: another function, an outlined function, or a **trap
//!   path** with the kind of check it stands for ([`Check`]), as the
//!   caller knows from the symbol's name. A **trap item** is a `udf`, an
//!   unconditional branch to a trap path (an *island*), or a call to one.
//! - **Callee-saved** registers are `x19`–`x30` and `v8`–`v15` (AAPCS64;
//!   Cranelift's `tail` convention saves the same).
//! - Blocks are the machine layer's ([`super::cfg`]); "in its block"
//!   means between the instruction and its block's first or last
//!   instruction. "Dead" is by [`super::liveness`] on the reads
//!   instructions name: a return or call is not taken to read every
//!   register its convention allows (`explicit_reads`).
//!
//! # Roles
//!
//! Each instruction gets the first role of this list that fits:
//!
//! | role | instructions |
//! |------|--------------|
//! | `trap` | trap items; the constant a call to a trap path takes in its block (`mov w2, #k` of `mov w2, #k; bl pare_trap`) |
//! | `null-check`, `bounds-check`, `division-check`, `other-check` | a conditional branch to a trap item or trap path, by the path's [`Check`]; a branch to a `udf` is a division check when a division follows within four instructions on its fall-through (Cranelift's own checks), else `other-check`. With a `b.cond`: the compares before it in its block that set its flags (back to the first unconditional one). With a bounds check: the load in its block of a register the compare reads that nothing else reads — not up to the branch, and dead where it falls through (the length load) |
//! | `outlined` | a call or tail call to an outlined function |
//! | `call` | `bl`, `blr`, and tail calls (`b` to another function, `br` not through a jump table) |
//! | `frame` | in the entry block, stores to `sp` of callee-saved registers not yet written and writes of `sp` or `x29`; in a block that returns or tail-calls, loads from `sp` into callee-saved registers nothing reads before the exit and writes of `sp` or `x29`; `ret` |
//! | `call-move` | register moves in a call's block before it whose destination is an argument register (`x0`–`x15`, `v0`–`v7`) nothing reads or writes between the move and the call; after a `bl`/`blr`, moves from a result register (`x0`–`x7`, `v0`–`v7`) nothing wrote since the call |
//! | `move` | other register-to-register moves |
//! | `constant` | constants into registers, literal loads, constant pools (data items) |
//! | `address` | `adr`, `adrp`, the `add` of a low 12 bits after an `adrp`, a `nop` after `adr` (lld's relaxation of `adrp`+`add`) |
//! | `memory` | other loads and stores |
//! | `compare-branch` | other compares, conditional selects, branches inside the function, jump tables |
//! | `arithmetic` | everything else |
//!
//! A function that does not lift is one `unknown` item. Whole functions
//! whose kind the caller knows (merge thunks, outlined functions, shared
//! trap paths) take [`Role::Thunk`], [`Role::Outlined`] or [`Role::Trap`]
//! from the caller, not from this classification.
//!
//! # Guarantees and limits
//!
//! Every byte of the function gets exactly one role, so the roles of a
//! function add up to its size. The classification reads code, not
//! intent: a register move the register allocator added to feed a call
//! and one the program asked for look alike; a spill of a callee-saved
//! register in the entry block before its first write would count as
//! frame. The rules hold for Cranelift's and clang's aarch64 code
//! alike, so the two are counted the same way.
//!
//! # Cost
//!
//! Lifting, the block graph and liveness, plus walks inside blocks:
//! linear in the code for Cranelift's and clang's short blocks (a walk is
//! bounded by its block).

use super::cfg::Cfg;
use super::decode::{self, x_range, Class, Decoder, Effects, Form, RegSet, Shape, NZCV};
use super::frame;
use super::lift::{Inst, Item, LiftedFunction};
use super::liveness::{self, Liveness};
use super::RelocTarget;

/// What an instruction is for (module doc, "Roles").
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Role {
    Frame,
    Call,
    CallMove,
    Move,
    NullCheck,
    BoundsCheck,
    DivisionCheck,
    OtherCheck,
    Trap,
    Thunk,
    Outlined,
    Constant,
    Address,
    Memory,
    CompareBranch,
    Arithmetic,
    Unknown,
}

impl Role {
    pub const ALL: [Role; 17] = [
        Role::Frame,
        Role::Call,
        Role::CallMove,
        Role::Move,
        Role::NullCheck,
        Role::BoundsCheck,
        Role::DivisionCheck,
        Role::OtherCheck,
        Role::Trap,
        Role::Thunk,
        Role::Outlined,
        Role::Constant,
        Role::Address,
        Role::Memory,
        Role::CompareBranch,
        Role::Arithmetic,
        Role::Unknown,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Role::Frame => "frame",
            Role::Call => "call",
            Role::CallMove => "call-move",
            Role::Move => "move",
            Role::NullCheck => "null-check",
            Role::BoundsCheck => "bounds-check",
            Role::DivisionCheck => "division-check",
            Role::OtherCheck => "other-check",
            Role::Trap => "trap",
            Role::Thunk => "thunk",
            Role::Outlined => "outlined",
            Role::Constant => "constant",
            Role::Address => "address",
            Role::Memory => "memory",
            Role::CompareBranch => "compare-branch",
            Role::Arithmetic => "arithmetic",
            Role::Unknown => "unknown",
        }
    }

    /// The role named `name` ([`Role::name`]).
    pub fn by_name(name: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.name() == name)
    }

    /// The index of the role in [`Role::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    fn of_check(check: Check) -> Role {
        match check {
            Check::Null => Role::NullCheck,
            Check::Bounds => Role::BoundsCheck,
            Check::Division => Role::DivisionCheck,
            Check::Other => Role::OtherCheck,
        }
    }
}

/// The kind of check a trap path stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Check {
    Null,
    Bounds,
    Division,
    Other,
}

/// What a relocation target is, as the caller knows it by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Callee {
    /// Another function, or data.
    Function,
    /// A function the outliner made.
    Outlined,
    /// A trap path (or the trap helper) for checks of this kind.
    Trap(Check),
}

/// Bytes per role, indexed by [`Role::index`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RoleBytes(pub [u64; Role::ALL.len()]);

impl RoleBytes {
    pub fn get(&self, role: Role) -> u64 {
        self.0[role.index()]
    }

    pub fn add(&mut self, role: Role, bytes: u64) {
        self.0[role.index()] += bytes;
    }

    pub fn add_all(&mut self, other: &RoleBytes) {
        for (a, b) in self.0.iter_mut().zip(other.0) {
            *a += b;
        }
    }

    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }

    /// All of `bytes` in one role.
    pub fn all_in(role: Role, bytes: u64) -> RoleBytes {
        let mut out = RoleBytes::default();
        out.add(role, bytes);
        out
    }
}

/// The bytes of each role in `func`, whose items have the `roles` of
/// [`classify`].
pub fn role_bytes(func: &LiftedFunction, roles: &[Role]) -> RoleBytes {
    let mut out = RoleBytes::default();
    for ((_, item), &role) in func.items.iter().zip(roles) {
        out.add(role, u64::from(item.size()));
    }
    out
}

/// Registers a call may read arguments from (over-approximated for the
/// `tail` convention).
const ARGUMENTS: RegSet = x_range(0, 15) | VECTOR_ARGUMENTS;
/// Registers a call may return results in.
const RESULTS: RegSet = x_range(0, 7) | VECTOR_ARGUMENTS;
const VECTOR_ARGUMENTS: RegSet = decode::v(0)
    | decode::v(1)
    | decode::v(2)
    | decode::v(3)
    | decode::v(4)
    | decode::v(5)
    | decode::v(6)
    | decode::v(7);
/// How far after a check a division makes it a division check.
const DIVISION_REACH: usize = 4;

/// The role of every item of `func` (module doc); `callee` says what a
/// relocation's target is.
pub fn classify(
    func: &LiftedFunction,
    callee: &dyn Fn(RelocTarget) -> Callee,
    decoder: &mut Decoder,
) -> Vec<Role> {
    if func.opaque.is_some() {
        return vec![Role::Unknown; func.items.len()];
    }
    Classifier::new(func, callee, decoder).run()
}

/// One function being classified.
struct Classifier<'a> {
    func: &'a LiftedFunction,
    callee: &'a dyn Fn(RelocTarget) -> Callee,
    cfg: Cfg,
    /// Liveness of the registers instructions name (`explicit_reads`).
    live: Liveness,
    /// The class of every instruction item.
    class: Vec<Option<Class>>,
    /// The shape of every instruction item.
    shapes: Vec<Option<Shape>>,
    roles: Vec<Option<Role>>,
    /// The check kind of every trap item.
    trap_kind: Vec<Option<Check>>,
}

impl<'a> Classifier<'a> {
    fn new(
        func: &'a LiftedFunction,
        callee: &'a dyn Fn(RelocTarget) -> Callee,
        decoder: &mut Decoder,
    ) -> Self {
        let n = func.items.len();
        let shapes: Vec<Option<Shape>> = func
            .items
            .iter()
            .map(|(_, item)| match item {
                Item::Inst(inst) => Some(decoder.shape(inst.word)),
                _ => None,
            })
            .collect();
        let class = shapes.iter().map(|s| s.map(|s| s.class)).collect();
        Classifier {
            func,
            callee,
            cfg: Cfg::new(func),
            live: liveness::compute(&explicit_reads(func)),
            class,
            shapes,
            roles: vec![None; n],
            trap_kind: vec![None; n],
        }
    }

    fn run(mut self) -> Vec<Role> {
        self.relocated_and_traps();
        self.checks();
        self.frame();
        self.call_moves();
        (0..self.func.items.len())
            .map(|i| self.roles[i].unwrap_or_else(|| self.plain_role(i)))
            .collect()
    }

    fn inst(&self, i: usize) -> Option<&'a Inst> {
        match &self.func.items.get(i)?.1 {
            Item::Inst(inst) => Some(inst),
            _ => None,
        }
    }

    fn effects(&self, i: usize) -> Effects {
        self.inst(i)
            .map_or_else(Effects::default, |inst| inst.effects)
    }

    fn set(&mut self, i: usize, role: Role) {
        if self.roles[i].is_none() {
            self.roles[i] = Some(role);
        }
    }

    /// The item indices of the block of item `i`, before and after it.
    fn block_of(&self, i: usize) -> Option<std::ops::Range<usize>> {
        let b = self.cfg.block_of[i]?;
        Some(self.cfg.blocks[b].clone())
    }

    /// The callee of a relocated instruction, if the relocation is a
    /// branch's or call's.
    fn branch_callee(&self, inst: &Inst) -> Option<Callee> {
        let r = inst.reloc.as_ref()?;
        match inst.form {
            Form::B | Form::Bl | Form::BCond | Form::Cbz | Form::Tbz => {
                Some((self.callee)(r.target))
            }
            _ => None,
        }
    }

    /// Trap items, checks branching straight to a trap path, calls and
    /// tail calls: the roles relocations decide.
    fn relocated_and_traps(&mut self) {
        for i in 0..self.func.items.len() {
            let Some(inst) = self.inst(i) else { continue };
            let conditional = matches!(inst.form, Form::BCond | Form::Cbz | Form::Tbz);
            match (inst.form, self.branch_callee(inst)) {
                (Form::Udf, _) => {
                    self.roles[i] = Some(Role::Trap);
                }
                (_, Some(Callee::Trap(check))) if conditional => {
                    self.roles[i] = Some(Role::of_check(check));
                }
                (_, Some(Callee::Trap(check))) => {
                    self.roles[i] = Some(Role::Trap);
                    self.trap_kind[i] = Some(check);
                    if inst.form == Form::Bl {
                        self.stub_constant(i);
                    }
                }
                (_, Some(Callee::Outlined)) => self.roles[i] = Some(Role::Outlined),
                (Form::B | Form::Bl, Some(Callee::Function)) => self.roles[i] = Some(Role::Call),
                // A call of the function itself.
                (Form::Bl, None) => self.roles[i] = Some(Role::Call),
                (Form::Blr { .. }, _) => self.roles[i] = Some(Role::Call),
                (Form::Br { .. }, _) if !inst.jump_table => self.roles[i] = Some(Role::Call),
                _ => {}
            }
        }
    }

    /// The constant a call to a trap path at `call` takes: a constant into
    /// an argument register in its block that nothing else reads.
    fn stub_constant(&mut self, call: usize) {
        let Some(block) = self.block_of(call) else {
            return;
        };
        for j in (block.start..call).rev() {
            let dest = self.effects(j).kills & ARGUMENTS;
            if self.class[j] == Some(Class::Constant)
                && dest != 0
                && !self.read_between(dest, j, call)
            {
                self.set(j, Role::Trap);
                return;
            }
        }
    }

    /// Whether an item strictly between `from` and `to` reads any of `regs`.
    fn read_between(&self, regs: RegSet, from: usize, to: usize) -> bool {
        (from + 1..to).any(|k| self.effects(k).uses & regs != 0)
    }

    /// Whether an item strictly between `from` and `to` mentions `regs`.
    fn touched_between(&self, regs: RegSet, from: usize, to: usize) -> bool {
        (from + 1..to).any(|k| self.effects(k).mentions() & regs != 0)
    }

    /// Conditional branches to trap items inside the function, and the
    /// compares and length loads of every check.
    fn checks(&mut self) {
        let index_of: std::collections::HashMap<_, _> = self
            .func
            .items
            .iter()
            .enumerate()
            .map(|(i, (label, _))| (*label, i))
            .collect();
        for i in 0..self.func.items.len() {
            let Some(inst) = self.inst(i) else { continue };
            if !matches!(inst.form, Form::BCond | Form::Cbz | Form::Tbz) {
                continue;
            }
            if inst.reloc.is_none() {
                let Some(&t) = inst.target.and_then(|l| index_of.get(&l)) else {
                    continue;
                };
                if self.roles[t] != Some(Role::Trap) {
                    continue;
                }
                let check = match self.trap_kind[t] {
                    Some(check) => check,
                    None if self.division_follows(i) => Check::Division,
                    None => Check::Other,
                };
                self.roles[i] = Some(Role::of_check(check));
            }
            let Some(role) = self.roles[i].filter(|r| is_check(*r)) else {
                continue;
            };
            if inst.form == Form::BCond {
                self.check_compares(i, role);
            }
        }
    }

    /// Whether a division follows the check at `i` on its fall-through,
    /// within [`DIVISION_REACH`] instructions.
    fn division_follows(&self, i: usize) -> bool {
        (i + 1..self.func.items.len())
            .take(DIVISION_REACH)
            .map_while(|k| self.class[k])
            .any(|c| c == Class::Divide)
    }

    /// The compares that set the flags of the check `b.cond` at `i`, and
    /// for a bounds check the length loads they read.
    fn check_compares(&mut self, i: usize, role: Role) {
        let Some(block) = self.block_of(i) else {
            return;
        };
        for j in (block.start..i).rev() {
            let e = self.effects(j);
            if e.defs & NZCV == 0 {
                continue;
            }
            if self.class[j] != Some(Class::Compare) || self.roles[j].is_some() {
                return;
            }
            self.roles[j] = Some(role);
            if role == Role::BoundsCheck {
                self.length_loads(j, i, block.start);
            }
            if e.uses & NZCV == 0 {
                return;
            }
        }
    }

    /// The loads in its block of registers the compare at `cmp`, for the
    /// check at `branch`, reads that nothing else reads: not read up to
    /// the branch, nor where the check falls through
    /// ([`Classifier::dead_on_fall_through`]).
    fn length_loads(&mut self, cmp: usize, branch: usize, start: usize) {
        let read = self.effects(cmp).uses & x_range(0, 30);
        for j in (start..cmp).rev() {
            let e = self.effects(j);
            let written = e.defs & read & !e.uses;
            if written == 0 {
                continue;
            }
            let single = (e.defs & x_range(0, 30)).count_ones() == 1;
            let dead_after = !self.read_between(written, cmp, branch + 1)
                && self.dead_on_fall_through(written, branch);
            if self.class[j] == Some(Class::Load)
                && single
                && dead_after
                && !self.read_between(written, j, cmp)
                && self.roles[j].is_none()
            {
                self.roles[j] = Some(Role::BoundsCheck);
            }
            return;
        }
    }

    /// Whether `regs` are dead where the branch at `branch` falls through,
    /// counting the reads instructions name (`explicit_reads`).
    fn dead_on_fall_through(&self, regs: RegSet, branch: usize) -> bool {
        match self.func.items.get(branch + 1) {
            Some((_, Item::Inst(_))) => self.live.live_in[branch + 1] & regs == 0,
            _ => true,
        }
    }

    /// Prologue, epilogues and returns.
    fn frame(&mut self) {
        let Some(entry) = self.cfg.block_of.iter().flatten().next().copied() else {
            return;
        };
        let mut written: RegSet = 0;
        for i in self.cfg.blocks[entry].clone() {
            let e = self.effects(i);
            let save = self
                .shape(i)
                .and_then(|shape| frame::stored_callee_saved(shape, &e))
                .is_some_and(|stored| stored & written == 0);
            if save || self.writes_frame(i) {
                self.set(i, Role::Frame);
            }
            if self.class[i] != Some(Class::Store) {
                written |= e.defs;
            }
        }
        for i in 0..self.func.items.len() {
            let Some(inst) = self.inst(i) else { continue };
            let exit = match inst.form {
                Form::Ret { .. } => {
                    self.set(i, Role::Frame);
                    true
                }
                _ => {
                    inst.is_tail_jump() || self.roles[i] == Some(Role::Call) && inst.form == Form::B
                }
            };
            if exit {
                self.epilogue(i);
            }
        }
    }

    /// Whether item `i` writes `sp` or `x29` (frame set-up or tear-down).
    fn writes_frame(&self, i: usize) -> bool {
        self.inst(i).is_some_and(frame::adjusts_frame)
    }

    fn shape(&self, i: usize) -> Option<Shape> {
        self.shapes[i]
    }

    /// The restores and `sp` writes of the block that exits at `exit`.
    fn epilogue(&mut self, exit: usize) {
        let Some(block) = self.block_of(exit) else {
            return;
        };
        for j in (block.start..exit).rev() {
            let e = self.effects(j);
            let restore = self
                .shape(j)
                .and_then(|shape| frame::loaded_callee_saved(shape, &e))
                .is_some_and(|loaded| !self.read_between(loaded, j, exit));
            if restore || self.writes_frame(j) {
                self.set(j, Role::Frame);
            }
        }
    }

    /// Argument moves before calls and result moves after them.
    fn call_moves(&mut self) {
        for c in 0..self.func.items.len() {
            if self.roles[c] != Some(Role::Call) {
                continue;
            }
            let Some(block) = self.block_of(c) else {
                continue;
            };
            let Some(call) = self.inst(c) else { continue };
            let previous_call = (block.start..c)
                .rev()
                .find(|&k| self.inst(k).is_some_and(Inst::is_call));
            let from = previous_call.map_or(block.start, |k| k + 1);
            for m in (from..c).rev() {
                let Some(dest) = self.move_destination(m) else {
                    continue;
                };
                if dest & !ARGUMENTS == 0 && !self.touched_between(dest, m, c) {
                    self.set(m, Role::CallMove);
                }
            }
            if !call.is_call() {
                continue;
            }
            for m in c + 1..block.end {
                if self.inst(m).is_some_and(Inst::is_call) {
                    break;
                }
                let Some(dest) = self.move_destination(m) else {
                    continue;
                };
                let source = self.effects(m).uses & !dest;
                let since_call = (c + 1..m).any(|k| self.effects(k).defs & source != 0);
                if source != 0 && source & !RESULTS == 0 && !since_call {
                    self.set(m, Role::CallMove);
                }
            }
        }
    }

    /// The destination of a register move not yet given a role.
    fn move_destination(&self, i: usize) -> Option<RegSet> {
        if self.class[i] != Some(Class::Move) || self.roles[i].is_some() {
            return None;
        }
        let e = self.effects(i);
        let dest = (e.defs & !e.uses & !NZCV) | e.kills;
        (dest != 0).then_some(dest)
    }

    /// The role an item has by its class alone.
    fn plain_role(&self, i: usize) -> Role {
        let inst = match &self.func.items[i].1 {
            Item::Inst(inst) => inst,
            Item::Data(_) => return Role::Constant,
            Item::JumpEntry { .. } => return Role::CompareBranch,
        };
        match inst.form {
            Form::Plain | Form::LdrLiteral { .. } | Form::Adr | Form::Adrp => {}
            _ => return Role::CompareBranch,
        }
        match self.class[i] {
            Some(Class::Move) => Role::Move,
            Some(Class::Constant) => Role::Constant,
            Some(Class::Address) => Role::Address,
            Some(Class::Load | Class::Store) if self.is_address_load(inst) => Role::Address,
            Some(Class::Load | Class::Store) => Role::Memory,
            Some(Class::Compare | Class::Select) => Role::CompareBranch,
            Some(Class::Nop) if self.after_adr(i) => Role::Address,
            _ if self.is_low_address(i, inst) => Role::Address,
            _ => Role::Arithmetic,
        }
    }

    /// A GOT load: the address of a symbol.
    fn is_address_load(&self, inst: &Inst) -> bool {
        use cranelift_codegen::binemit::Reloc;
        inst.reloc
            .as_ref()
            .is_some_and(|r| r.kind == super::RelocKind::Cranelift(Reloc::Aarch64Ld64GotLo12Nc))
    }

    fn after_adr(&self, i: usize) -> bool {
        i > 0 && self.inst(i - 1).is_some_and(|p| p.form == Form::Adr)
    }

    /// `add xD, xN, #lo12` completing an `adrp xN` of its block (with a
    /// relocation in objects, resolved in executables).
    fn is_low_address(&self, i: usize, inst: &Inst) -> bool {
        const ADD_IMMEDIATE_64: u32 = 0x9100_0000;
        if inst.word & 0xFF80_0000 != ADD_IMMEDIATE_64 {
            return false;
        }
        let base = x_range(0, 30) & inst.effects.uses;
        let Some(block) = self.block_of(i) else {
            return false;
        };
        (block.start..i)
            .rev()
            .find(|&k| self.effects(k).defs & base != 0)
            .and_then(|k| self.inst(k))
            .is_some_and(|writer| writer.form == Form::Adrp)
    }
}

/// `func` with the reads the calling conventions imply taken off calls,
/// returns and tail calls: what they name is all they read. Liveness on it
/// says whether the program itself reads a register again; the machine
/// layer's liveness, which must assume a return reads every result
/// register and a call every argument register, keeps too much alive for
/// a report (a length register would stay live to the end of a function
/// that returns, and into every trap path).
fn explicit_reads(func: &LiftedFunction) -> LiftedFunction {
    let mut func = func.clone();
    for (_, item) in &mut func.items {
        let Item::Inst(inst) = item else { continue };
        let named = match inst.form {
            Form::Ret { rn } | Form::Br { rn } | Form::Blr { rn } => decode::x(rn),
            Form::B | Form::Bl | Form::Udf => 0,
            _ => continue,
        };
        inst.effects.uses = named;
    }
    func
}

fn is_check(role: Role) -> bool {
    matches!(
        role,
        Role::NullCheck | Role::BoundsCheck | Role::DivisionCheck | Role::OtherCheck
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::lift::lift_linked;
    use crate::machine::testing::function;
    use crate::machine::{MachReloc, RelocKind};
    use cranelift_codegen::binemit::Reloc;
    use Role::*;

    const RET: u32 = 0xD65F_03C0;
    const UDF: u32 = 0x0000_C11F;
    /// `b` and `bl` with a zero offset (the relocation's).
    const B: u32 = 0x1400_0000;
    const BL: u32 = 0x9400_0000;

    /// The roles of `words`, with relocations `(offset, kind, symbol)` to
    /// the symbols `names`, whose callees the name says as `parec size`
    /// would.
    fn roles_of(words: &[u32], relocs: &[(u32, RelocKind, usize)], names: &[&str]) -> Vec<Role> {
        let mut func = function(words);
        func.relocs = relocs
            .iter()
            .map(|&(offset, kind, symbol)| MachReloc {
                offset,
                kind,
                target: RelocTarget::Symbol(symbol as u32),
                addend: 0,
            })
            .collect();
        let mut decoder = Decoder::new();
        let lifted = lift_linked(&func, &mut decoder);
        assert!(lifted.opaque.is_none(), "{:?}", lifted.opaque);
        let callee = |target: RelocTarget| match target {
            RelocTarget::Symbol(s) => {
                let name = names[s as usize];
                if name.starts_with("OUTLINED_FUNCTION_") {
                    Callee::Outlined
                } else if name.contains("null") {
                    Callee::Trap(Check::Null)
                } else if name.contains("bounds") {
                    Callee::Trap(Check::Bounds)
                } else if name.starts_with("pare_trap") {
                    Callee::Trap(Check::Other)
                } else {
                    Callee::Function
                }
            }
            _ => Callee::Function,
        };
        let roles = classify(&lifted, &callee, &mut decoder);
        assert_eq!(role_bytes(&lifted, &roles).total(), 4 * words.len() as u64);
        roles
    }

    fn call() -> RelocKind {
        RelocKind::Cranelift(Reloc::Arm64Call)
    }

    #[test]
    fn prologue_epilogue_and_return_are_the_frame() {
        let words = [
            0xA9BF_7BFD, // stp x29, x30, [sp, #-16]!
            0x9100_03FD, // mov x29, sp
            0xF81F_0FF3, // str x19, [sp, #-16]!
            0xAA00_03F3, // mov x19, x0
            BL,          // bl f
            0x8B13_0000, // add x0, x0, x19
            0xF841_07F3, // ldr x19, [sp], #16
            0xA8C1_7BFD, // ldp x29, x30, [sp], #16
            RET,
        ];
        let roles = roles_of(&words, &[(16, call(), 0)], &["f"]);
        assert_eq!(
            roles,
            [Frame, Frame, Frame, Move, Call, Arithmetic, Frame, Frame, Frame]
        );
    }

    #[test]
    fn moves_into_arguments_and_out_of_results_belong_to_the_call() {
        let words = [
            0xAA14_03E2, // mov x2, x20        argument
            0xAA15_03E3, // mov x3, x21        argument
            0xAA14_03E5, // mov x5, x20        read before the call: a move
            0x9100_04A4, // add x4, x5, #1
            BL,          // bl g
            0xAA00_03F6, // mov x22, x0        result
            0xAA16_03F7, // mov x23, x22       a move
            RET,
        ];
        let roles = roles_of(&words, &[(16, call(), 0)], &["g"]);
        assert_eq!(
            roles,
            [CallMove, CallMove, Move, Arithmetic, Call, CallMove, Move, Frame]
        );
    }

    #[test]
    fn a_null_check_branches_to_an_island() {
        let words = [
            0xB400_0060, // cbz x0, island
            0xF940_0401, // ldr x1, [x0, #8]
            RET,
            B, // island: b pare_trap_null_dereference
        ];
        let roles = roles_of(&words, &[(12, call(), 0)], &["pare_trap_null_dereference"]);
        assert_eq!(roles, [NullCheck, Memory, Frame, Trap]);
    }

    #[test]
    fn a_bounds_check_has_its_compare_and_length_load() {
        let words = [
            0xF940_0402, // ldr x2, [x0, #8]   the length: only compared
            0xEB02_003F, // cmp x1, x2
            0x5400_0062, // b.hs island
            0x8B01_0000, // add x0, x0, x1
            RET,
            B, // island: b pare_trap_index_out_of_bounds
        ];
        let roles = roles_of(
            &words,
            &[(20, call(), 0)],
            &["pare_trap_index_out_of_bounds"],
        );
        assert_eq!(
            roles,
            [
                BoundsCheck,
                BoundsCheck,
                BoundsCheck,
                Arithmetic,
                Frame,
                Trap
            ]
        );
        // A length that is also used after the check is the program's load.
        let words = [
            0xF940_0402, // ldr x2, [x0, #8]
            0xEB02_003F, // cmp x1, x2
            0x5400_0062, // b.hs island
            0x8B02_0000, // add x0, x0, x2
            RET,
            B,
        ];
        let roles = roles_of(
            &words,
            &[(20, call(), 0)],
            &["pare_trap_index_out_of_bounds"],
        );
        assert_eq!(
            roles,
            [Memory, BoundsCheck, BoundsCheck, Arithmetic, Frame, Trap]
        );
    }

    #[test]
    fn checks_before_a_division_are_division_checks() {
        let words = [
            0xB400_00C1, // cbz x1, udf
            0xB100_043F, // cmn x1, #1
            0xFA41_0800, // ccmp x0, #1, #0, eq
            0x5400_0066, // b.vs udf
            0x9AC1_0C00, // sdiv x0, x0, x1
            RET,
            UDF,
        ];
        let roles = roles_of(&words, &[], &[]);
        assert_eq!(
            roles,
            [
                DivisionCheck,
                DivisionCheck,
                DivisionCheck,
                DivisionCheck,
                Arithmetic,
                Frame,
                Trap
            ]
        );
        // A check whose fall-through does not divide.
        let words = [0xB400_0040, RET, UDF]; // cbz x0, udf
        assert_eq!(roles_of(&words, &[], &[]), [OtherCheck, Frame, Trap]);
    }

    #[test]
    fn constants_addresses_memory_and_compares() {
        let words = [
            0xD280_00A0, // mov x0, #5
            0xF2A0_0020, // movk x0, #1, lsl #16
            0x9000_0001, // adrp x1, sym
            0x9100_4021, // add x1, x1, #16
            0xF940_0022, // ldr x2, [x1]
            0xEB00_005F, // cmp x2, x0
            0x5400_0041, // b.ne +8
            0xF900_0022, // str x2, [x1]
            RET,
        ];
        let page = RelocKind::Cranelift(Reloc::Aarch64AdrPrelPgHi21);
        let roles = roles_of(&words, &[(8, page, 0)], &["sym"]);
        assert_eq!(
            roles,
            [
                Constant,
                Constant,
                Address,
                Address,
                Memory,
                CompareBranch,
                CompareBranch,
                Memory,
                Frame
            ]
        );
    }

    #[test]
    fn trap_stubs_and_outlined_calls() {
        let words = [
            0xB400_0060, // cbz x0, stub
            BL,          // bl OUTLINED_FUNCTION_1
            RET,
            0x5280_0062, // stub: mov w2, #3
            BL,          // bl pare_trap
            UDF,
        ];
        let roles = roles_of(
            &words,
            &[(4, call(), 0), (16, call(), 1)],
            &["OUTLINED_FUNCTION_1", "pare_trap"],
        );
        assert_eq!(roles, [OtherCheck, Outlined, Frame, Trap, Trap, Trap]);
    }

    #[test]
    fn a_check_may_branch_straight_to_the_trap_path() {
        let words = [
            0xB400_0000, // cbz x0, pare_trap_null_dereference
            RET,
        ];
        let roles = roles_of(
            &words,
            &[(0, RelocKind::Aarch64CondBr19, 0)],
            &["pare_trap_null_dereference"],
        );
        assert_eq!(roles, [NullCheck, Frame]);
    }

    #[test]
    fn literal_pools_are_constants_and_opaque_code_unknown() {
        let words = [
            0x5800_0040, // ldr x0, #8
            RET,
            0x1234_5678, // the literal
            0x0000_0000,
        ];
        assert_eq!(roles_of(&words, &[], &[]).len(), 3);
        let mut func = function(&[0x5800_0040, RET, 0x1234_5678, 0]);
        let mut decoder = Decoder::new();
        let lifted = lift_linked(&func, &mut decoder);
        let roles = classify(&lifted, &|_| Callee::Function, &mut decoder);
        assert_eq!(role_bytes(&lifted, &roles).get(Constant), 4 + 8);
        // A branch into the middle of data: not liftable.
        func.bytes = [0x1400_0002u32, 0, 0]
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect();
        func.bytes.truncate(10);
        let lifted = lift_linked(&func, &mut decoder);
        let roles = classify(&lifted, &|_| Callee::Function, &mut decoder);
        assert_eq!(roles, [Unknown]);
    }
}
