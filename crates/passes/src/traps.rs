//! Shared trap paths: a failed check's `udf` becomes a branch to one
//! program-wide function per kind of trap, and the `udf` after a call that
//! never returns goes away.
//!
//! A producer that lowers its checks to `trapz`/`trapnz` with a trap code of
//! its own, or to branches to a block holding only such a `trap` (Pare:
//! one per kind per function), gets from Cranelift's aarch64 backend a
//! conditional branch (`cbz`, `cbnz`, `tbz`, `b.cond`) to a `udf` with a
//! trap record (`trapz`: one out-of-line `udf` per check,
//! `MachBuffer::defer_trap`) and no call, so a function whose only call
//! would have been the trap keeps no frame. This pass completes that code:
//! it gives each such trap code the meaning "branch to the producer's shared
//! trap path for it" (Pare: `pare_trap_<kind>`, which calls `pare_trap(k)`).
//! A producer that has no such codes, or CLIF whose traps must stay traps
//! (a `.clif` file's `trapz user(N)`), never runs the pass.
//!
//! # Notation
//!
//! - A **path** is a function symbol `P(c)` that trap code `c` stands for:
//!   reaching a `udf` with code `c` must run `P(c)`, which never returns.
//! - An **island** is an instruction `b P(c)` (a `R_AARCH64_CALL26`
//!   relocation, so the linker adds a range-extension thunk when `P(c)` is
//!   beyond ±128 MiB: it never fails).
//! - A **noreturn call** is a `bl` to one of [`TrapPaths::noreturn`]; the
//!   `udf` Cranelift puts after it (the CLIF `trap` after the call) is
//!   **dead** when no branch reaches it.
//!
//! # Algorithm
//!
//! Per function ([`share_function`]):
//!
//! 1. Lift it ([`crate::machine::lift`]): items with symbolic branch targets.
//! 2. For each code `c`, the first `udf` with code `c` becomes the island
//!    `b P(c)`; every later `udf` with code `c` is deleted and the branches
//!    to it retargeted to that island, so all checks of a kind in a function
//!    share 4 bytes. (A later `udf` that something could fall into, i.e.
//!    not after an instruction that ends the flow, becomes an island of its
//!    own instead.)
//! 3. A dead `udf` after a noreturn call is deleted when an instruction (or
//!    the end of the function) follows: falling past a call that never
//!    returns is harmless, and data must not follow a call for the next
//!    lifting to see it as data.
//! 4. Only when the producer knows every path within ±1 MiB of every check
//!    ([`ResolvedPaths::near`]): each `b.cond`, `cbz` and `cbnz` to an
//!    island branches to the island's path itself, with the relocation
//!    `R_AARCH64_CONDBR19` ([`RelocKind::Aarch64CondBr19`]), and an island
//!    no branch names any more and nothing falls into is deleted. `tbz` and
//!    `tbnz` (±32 KiB) keep their island.
//! 5. Lay the items out again, moving block starts, relocations, trap and
//!    call-site records.
//!
//! If the function does not lift or its layout fails (a conditional branch
//! out of its ±1 MiB range to the shared island), each `udf` with a path's
//! code becomes `b P(c)` in place ([`patch_in_place`]): the same size, so
//! nothing moves, and the result is just as correct, only larger.
//!
//! Without that promise the conditional branches are never pointed at
//! `P(c)` directly: `R_AARCH64_CONDBR19` (±1 MiB; `tbz` ±32 KiB) cannot be
//! extended with a thunk by lld, and the `.text` of a large program exceeds
//! 1 MiB. One island per kind per function costs 4 bytes, where the call
//! stub of the old lowering (`mov w0, #k; bl pare_trap; udf`) cost 12 plus,
//! in a function that made no other call, its frame. The promise is the
//! one the producer's code model makes for every symbol (parec: the `tiny`
//! code model, under which `adr` reaches data the same ±1 MiB; the paths
//! are code of the program itself, nearer than its data).
//!
//! # Invariants
//!
//! - Every `udf` whose trap record has a path's code is gone: control that
//!   reached one now branches to its path. Other traps are untouched.
//! - Everything else computes what it did: only branches to deleted `udf`s
//!   change target, to an island that branches where the `udf` would have
//!   been made to; the only code deleted is `udf`s nothing reaches.
//! - No function grows; the output depends only on the input.
//!
//! # Cost
//!
//! Linear in code size per function (lifting, one walk over the items,
//! layout). The pass reads only the forms of instructions (their encoding
//! bits), never their register effects, so it lifts without a disassembler
//! ([`lift::lift_forms`]).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use cranelift_codegen::binemit::Reloc;
use cranelift_codegen::ir::TrapCode;

use crate::machine::decode::Form;
use crate::machine::lift::{self, Inst, Item, Label, LiftedFunction};
use crate::machine::{MachFunction, MachReloc, RelocKind, RelocTarget};

/// The encoding of `b` with a zero offset (the relocation fills it in).
const B: u32 = 0x1400_0000;

/// What the producer's trap codes stand for, by symbol name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TrapPaths {
    /// Each trap code and the function a `udf` with it branches to.
    pub paths: Vec<(TrapCode, String)>,
    /// Functions that never return: `pare_trap`, `pare_exit`, the paths.
    pub noreturn: Vec<String>,
}

/// [`TrapPaths`] for one module's code: symbols by relocation target.
#[derive(Clone, Debug, Default)]
pub struct ResolvedPaths {
    pub paths: Vec<(TrapCode, RelocTarget)>,
    pub noreturn: BTreeSet<RelocTarget>,
    /// Every path lies within ±1 MiB of every check once linked (the
    /// producer knows the program that small): `b.cond`, `cbz` and `cbnz`
    /// branch to their path directly (step 3).
    pub near: bool,
}

impl ResolvedPaths {
    fn path(&self, code: TrapCode) -> Option<RelocTarget> {
        self.paths
            .iter()
            .find(|(c, _)| *c == code)
            .map(|&(_, target)| target)
    }
}

/// What the pass did to a module.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TrapStats {
    /// Trap `udf`s that became a branch to a path (islands, one per kind
    /// per function, or in place).
    pub islands: usize,
    /// Trap `udf`s deleted because a function's island of the kind
    /// replaces them.
    pub shared: usize,
    /// Dead `udf`s after noreturn calls deleted.
    pub dead_udfs: usize,
    /// Checks that branch straight to their path (with [`ResolvedPaths::near`]).
    pub direct: usize,
    /// Islands no branch needed any more, deleted.
    pub islands_deleted: usize,
    /// Functions patched in place because they did not lift or lay out.
    pub in_place: usize,
    pub bytes_before: u64,
    pub bytes_after: u64,
}

impl TrapStats {
    pub fn accumulate(&mut self, other: &TrapStats) {
        self.islands += other.islands;
        self.shared += other.shared;
        self.dead_udfs += other.dead_udfs;
        self.direct += other.direct;
        self.islands_deleted += other.islands_deleted;
        self.in_place += other.in_place;
        self.bytes_before += other.bytes_before;
        self.bytes_after += other.bytes_after;
    }
}

impl fmt::Display for TrapStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} islands ({} deleted: every check branches to its path), {} trap udfs shared, \
             {} checks branch straight to their path, {} dead udfs removed, \
             {} functions in place; code {} -> {} bytes",
            self.islands,
            self.islands_deleted,
            self.shared,
            self.direct,
            self.dead_udfs,
            self.in_place,
            self.bytes_before,
            self.bytes_after
        )
    }
}

/// Rewrites every function of a module (see the module doc).
pub fn run(functions: &mut [MachFunction], paths: &ResolvedPaths) -> TrapStats {
    let mut stats = TrapStats::default();
    for func in functions.iter_mut() {
        stats.bytes_before += func.bytes.len() as u64;
        if has_work(func, paths) {
            share_function(func, paths, &mut stats);
        }
        stats.bytes_after += func.bytes.len() as u64;
    }
    stats
}

/// Whether `func` has a trap with a path's code or a call that never
/// returns (the only things the pass changes).
fn has_work(func: &MachFunction, paths: &ResolvedPaths) -> bool {
    func.traps
        .iter()
        .any(|&(_, code)| paths.path(code).is_some())
        || func
            .relocs
            .iter()
            .any(|r| r.kind == Reloc::Arm64Call.into() && paths.noreturn.contains(&r.target))
}

/// Steps 1–4 of the module doc on one function, or the in-place patch.
fn share_function(func: &mut MachFunction, paths: &ResolvedPaths, stats: &mut TrapStats) {
    // Forms, targets and records are all the pass reads.
    let lifted = lift::lift_forms(func);
    if lifted.opaque.is_none() {
        let mut counts = TrapStats::default();
        let rewritten = rewrite_items(&lifted, paths, &mut counts);
        if let Some(code) = lift::relaid(func, &lifted, &rewritten) {
            *func = code;
            stats.accumulate(&counts);
            return;
        }
    }
    stats.in_place += 1;
    stats.islands += patch_in_place(func, paths);
}

/// Steps 2 and 3: the items with islands shared per kind and dead `udf`s
/// gone.
fn rewrite_items(
    lifted: &LiftedFunction,
    paths: &ResolvedPaths,
    stats: &mut TrapStats,
) -> LiftedFunction {
    let targeted = lifted.targeted_labels();
    let mut island_of: Vec<(TrapCode, Label)> = Vec::new();
    let mut replaced: BTreeMap<Label, Label> = BTreeMap::new();
    let mut items: Vec<(Label, Item)> = Vec::with_capacity(lifted.items.len());
    for (i, (label, item)) in lifted.items.iter().enumerate() {
        let previous = items.last().map(|(_, item)| item);
        let next = lifted.items.get(i + 1).map(|(_, item)| item);
        let Some(code) = trap_udf(item) else {
            items.push((*label, item.clone()));
            continue;
        };
        if let Some(path) = paths.path(code) {
            let shared = island_of.iter().find(|(c, _)| *c == code);
            match shared {
                Some(&(_, island)) if previous.is_some_and(ends_flow) => {
                    replaced.insert(*label, island);
                    stats.shared += 1;
                }
                _ => {
                    if shared.is_none() {
                        island_of.push((code, *label));
                    }
                    items.push((*label, Item::Inst(island(path))));
                    stats.islands += 1;
                }
            }
        } else if !targeted.contains(label)
            && previous.is_some_and(|p| is_noreturn_call(p, paths))
            && next.is_none_or(|n| matches!(n, Item::Inst(_)))
        {
            stats.dead_udfs += 1;
        } else {
            items.push((*label, item.clone()));
        }
    }
    retarget(&mut items, &replaced);
    if paths.near {
        branch_to_paths(&mut items, paths, stats);
    }
    LiftedFunction {
        items,
        ..lifted.clone()
    }
}

/// Step 3 (with [`ResolvedPaths::near`]): every `b.cond`, `cbz` and `cbnz`
/// to an island branches to the island's path instead
/// (`R_AARCH64_CONDBR19`); an island then left without a branch to it,
/// and that nothing falls into (neither the previous item nor, for the
/// first item, the function's entry), is deleted. `tbz`/`tbnz` reach ±32 KiB
/// only: they keep their island.
fn branch_to_paths(items: &mut Vec<(Label, Item)>, paths: &ResolvedPaths, stats: &mut TrapStats) {
    let islands: BTreeMap<Label, MachReloc> = items
        .iter()
        .filter_map(|(label, item)| match item {
            Item::Inst(inst) if is_island(inst, paths) => Some((*label, inst.reloc.clone()?)),
            _ => None,
        })
        .collect();
    for (_, item) in items.iter_mut() {
        let Item::Inst(inst) = item else { continue };
        if !matches!(inst.form, Form::BCond | Form::Cbz) {
            continue;
        }
        let Some(path) = inst.target.and_then(|t| islands.get(&t)) else {
            continue;
        };
        inst.word = inst
            .form
            .with_offset(inst.word, 0)
            .expect("a zero offset fits every branch");
        inst.target = None;
        inst.reloc = Some(MachReloc {
            kind: RelocKind::Aarch64CondBr19,
            ..path.clone()
        });
        stats.direct += 1;
    }
    let targeted = lift::targeted_labels(items);
    let mut kept = Vec::with_capacity(items.len());
    for (label, item) in items.drain(..) {
        // The function's entry falls into its first item: an island there
        // is the function's whole body (a function that only traps).
        let falls_in = kept.last().is_none_or(|(_, previous)| !ends_flow(previous));
        let unused = islands.contains_key(&label) && !targeted.contains(&label) && !falls_in;
        if unused {
            stats.islands_deleted += 1;
        } else {
            kept.push((label, item));
        }
    }
    *items = kept;
}

/// Whether `inst` is an island: `b` to a path.
fn is_island(inst: &Inst, paths: &ResolvedPaths) -> bool {
    inst.form == Form::B
        && inst.reloc.as_ref().is_some_and(|r| {
            r.kind == Reloc::Arm64Call.into() && paths.paths.iter().any(|&(_, p)| p == r.target)
        })
}

/// The trap code of `item` if it is a `udf` with a trap record.
fn trap_udf(item: &Item) -> Option<TrapCode> {
    match item {
        Item::Inst(inst) if inst.form == Form::Udf => inst.trap,
        _ => None,
    }
}

/// The island `b path`.
fn island(path: RelocTarget) -> Inst {
    let form = Form::B;
    let mut inst = Inst {
        word: B,
        form,
        target: None,
        reloc: Some(MachReloc {
            offset: 0,
            kind: Reloc::Arm64Call.into(),
            target: path,
            addend: 0,
        }),
        trap: None,
        call_site: false,
        jump_table: false,
        effects: Default::default(),
    };
    inst.effects = lift::control_effects(&inst, Default::default());
    inst
}

/// Whether nothing falls through from `item` to the item after it.
fn ends_flow(item: &Item) -> bool {
    matches!(item, Item::Inst(inst) if inst.form.ends_flow())
}

/// Whether `item` is a `bl` to a function that never returns.
fn is_noreturn_call(item: &Item, paths: &ResolvedPaths) -> bool {
    matches!(item, Item::Inst(inst) if inst.form == Form::Bl
        && inst.reloc.as_ref().is_some_and(|r| paths.noreturn.contains(&r.target)))
}

/// Points every reference to a deleted `udf` at its kind's island.
fn retarget(items: &mut [(Label, Item)], replaced: &BTreeMap<Label, Label>) {
    let new = |label: &mut Label| {
        if let Some(&island) = replaced.get(label) {
            *label = island;
        }
    };
    for (_, item) in items.iter_mut() {
        match item {
            Item::Inst(inst) => {
                if let Some(target) = &mut inst.target {
                    new(target);
                }
            }
            Item::JumpEntry { target, .. } => new(target),
            Item::Data(_) => {}
        }
    }
}

/// Turns every `udf` with a path's code into `b` to the path, where it is;
/// returns how many.
fn patch_in_place(func: &mut MachFunction, paths: &ResolvedPaths) -> usize {
    let mut patched = 0;
    let mut kept = Vec::with_capacity(func.traps.len());
    for &(offset, code) in &func.traps {
        let at = offset as usize;
        let is_udf = func
            .bytes
            .get(at..at + 4)
            .is_some_and(|w| Form::of(u32::from_le_bytes([w[0], w[1], w[2], w[3]])) == Form::Udf);
        match paths.path(code) {
            Some(path) if is_udf => {
                func.bytes[at..at + 4].copy_from_slice(&B.to_le_bytes());
                func.relocs.push(MachReloc {
                    offset,
                    kind: Reloc::Arm64Call.into(),
                    target: path,
                    addend: 0,
                });
                patched += 1;
            }
            _ => kept.push((offset, code)),
        }
    }
    func.traps = kept;
    func.relocs.sort_by_key(|r| r.offset);
    patched
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::testing::{self, words};

    const RET: u32 = 0xD65F_03C0;
    const BL: u32 = 0x9400_0000;
    const MOV_X0_1: u32 = 0xD280_0020;
    /// Cranelift's trap instruction, `udf #0xc11f`.
    const UDF: u32 = 0x0000_C11F;
    const PATH: RelocTarget = RelocTarget::Symbol(7);
    const NORETURN: RelocTarget = RelocTarget::Symbol(3);

    fn check_code() -> TrapCode {
        TrapCode::unwrap_user(0x42)
    }

    /// `cbz xN, #offset` (bytes from the instruction).
    fn cbz(register: u32, offset: i32) -> u32 {
        0xB400_0000 | ((((offset / 4) as u32) & 0x7_FFFF) << 5) | register
    }

    fn function(words: &[u32], traps: &[(u32, TrapCode)]) -> MachFunction {
        MachFunction {
            traps: traps.to_vec(),
            ..testing::function(words)
        }
    }

    fn paths() -> ResolvedPaths {
        ResolvedPaths {
            paths: vec![(check_code(), PATH)],
            noreturn: [NORETURN, PATH].into(),
            near: false,
        }
    }

    #[test]
    fn near_paths_are_branched_to_directly() {
        let code = check_code();
        let near = ResolvedPaths {
            near: true,
            ..paths()
        };
        // cbz, b.hs and tbz to the kind's udf: the tbz keeps the island.
        let tbz = 0x3600_0041; // tbz w1, #0, +8
        let b_hs = 0x5400_0062; // b.hs +12
        let mut funcs = [function(&[cbz(0, 16), b_hs, tbz, RET, UDF], &[(16, code)])];
        let stats = run(&mut funcs, &near);
        assert_eq!(words(&funcs[0]), [cbz(0, 0), 0x5400_0002, tbz, RET, B]);
        let direct = |offset| MachReloc {
            offset,
            kind: RelocKind::Aarch64CondBr19,
            target: PATH,
            addend: 0,
        };
        assert_eq!(funcs[0].relocs, [direct(0), direct(4), island_reloc(16)]);
        assert_eq!((stats.direct, stats.islands_deleted), (2, 0));
        // Without the tbz, the island goes.
        let b_hs = 0x5400_0042; // b.hs +8
        let mut funcs = [function(&[cbz(0, 12), b_hs, RET, UDF], &[(12, code)])];
        let stats = run(&mut funcs, &near);
        assert_eq!(words(&funcs[0]), [cbz(0, 0), 0x5400_0002, RET]);
        assert_eq!(funcs[0].relocs, [direct(0), direct(4)]);
        assert_eq!((stats.direct, stats.islands_deleted), (2, 1));
        assert_eq!((stats.bytes_before, stats.bytes_after), (16, 12));
    }

    #[test]
    fn a_function_that_only_traps_keeps_its_island() {
        // GVN reduces a function whose first statement divides by zero to
        // `trap`: its entry falls into the island, which must stay even
        // though no branch names it (generated program seed 103 ran on
        // into the next function when it was deleted).
        let near = ResolvedPaths {
            near: true,
            ..paths()
        };
        let mut funcs = [function(&[UDF], &[(0, check_code())])];
        let stats = run(&mut funcs, &near);
        assert_eq!(words(&funcs[0]), [B]);
        assert_eq!(funcs[0].relocs, [island_reloc(0)]);
        assert_eq!((stats.islands, stats.islands_deleted), (1, 0));
    }

    fn island_reloc(offset: u32) -> MachReloc {
        MachReloc {
            offset,
            kind: Reloc::Arm64Call.into(),
            target: PATH,
            addend: 0,
        }
    }

    #[test]
    fn checks_of_a_kind_share_one_island() {
        let code = check_code();
        let mut funcs = [function(
            &[cbz(0, 12), cbz(1, 12), RET, UDF, UDF],
            &[(12, code), (16, code)],
        )];
        let stats = run(&mut funcs, &paths());
        assert_eq!(words(&funcs[0]), [cbz(0, 12), cbz(1, 8), RET, B]);
        assert_eq!(funcs[0].relocs, [island_reloc(12)]);
        assert!(funcs[0].traps.is_empty());
        assert_eq!((stats.islands, stats.shared, stats.in_place), (1, 1, 0));
        assert_eq!((stats.bytes_before, stats.bytes_after), (20, 16));
    }

    #[test]
    fn a_trap_code_without_path_stays_a_trap() {
        // What a `.clif` file's `trapz v0, user5` becomes.
        let other = TrapCode::unwrap_user(5);
        let original = function(&[cbz(0, 8), RET, UDF], &[(8, other)]);
        let mut funcs = [original.clone()];
        let stats = run(&mut funcs, &paths());
        assert_eq!(funcs[0], original);
        assert_eq!(stats.islands, 0);
    }

    #[test]
    fn the_udf_after_a_call_that_never_returns_goes() {
        let after_call = TrapCode::unwrap_user(1);
        let mut f = function(&[cbz(0, 12), MOV_X0_1, RET, BL, UDF], &[(16, after_call)]);
        f.relocs.push(MachReloc {
            offset: 12,
            kind: Reloc::Arm64Call.into(),
            target: NORETURN,
            addend: 0,
        });
        f.call_sites = vec![16];
        let mut funcs = [f];
        let stats = run(&mut funcs, &paths());
        assert_eq!(words(&funcs[0]), [cbz(0, 12), MOV_X0_1, RET, BL]);
        assert_eq!(funcs[0].call_sites, [16]);
        assert!(funcs[0].traps.is_empty());
        assert_eq!(stats.dead_udfs, 1);
    }

    #[test]
    fn the_udf_after_another_call_stays() {
        let after_call = TrapCode::unwrap_user(1);
        let mut f = function(&[BL, UDF], &[(4, after_call)]);
        f.relocs.push(MachReloc {
            offset: 0,
            kind: Reloc::Arm64Call.into(),
            target: RelocTarget::Symbol(9),
            addend: 0,
        });
        let original = f.clone();
        let mut funcs = [f];
        run(&mut funcs, &paths());
        assert_eq!(funcs[0], original);
    }

    #[test]
    fn a_udf_reached_by_falling_through_gets_its_own_island() {
        let code = check_code();
        let mut funcs = [function(
            &[cbz(0, 12), cbz(1, 12), RET, UDF, MOV_X0_1, UDF],
            &[(12, code), (20, code)],
        )];
        let stats = run(&mut funcs, &paths());
        assert_eq!(
            words(&funcs[0]),
            [cbz(0, 12), cbz(1, 12), RET, B, MOV_X0_1, B]
        );
        assert_eq!(funcs[0].relocs, [island_reloc(12), island_reloc(20)]);
        assert_eq!((stats.islands, stats.shared), (2, 0));
    }

    #[test]
    fn a_function_that_does_not_lift_is_patched_in_place() {
        let code = check_code();
        // Unexplained data after the island makes the function opaque.
        let mut funcs = [function(
            &[cbz(0, 12), cbz(1, 12), RET, UDF, UDF, 0xDEAD_BEEF],
            &[(12, code), (16, code)],
        )];
        let stats = run(&mut funcs, &paths());
        assert_eq!(
            words(&funcs[0]),
            [cbz(0, 12), cbz(1, 12), RET, B, B, 0xDEAD_BEEF]
        );
        assert_eq!(funcs[0].relocs, [island_reloc(12), island_reloc(16)]);
        assert!(funcs[0].traps.is_empty());
        assert_eq!((stats.islands, stats.in_place), (2, 1));
    }
}
