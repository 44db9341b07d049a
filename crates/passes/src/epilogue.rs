//! One epilogue per function: a return whose epilogue another return of the
//! function already has becomes a branch to that one.
//!
//! Cranelift emits the epilogue — restores of the callee-saved registers,
//! the frame record, `sp` — and `ret` at every `return` of the CLIF
//! function; a function with several returns repeats it (measured on
//! bench/ at `-Oz --two-rounds`: 55 functions, 1,376 bytes). clang -Oz
//! emits one epilogue and branches to it. This pass does the same on the
//! lifted code ([`crate::machine`]), as LLVM's tail merging
//! (`BranchFolder::TailMergeBlocks`) does for any common tail; here only
//! returns' tails are merged, whose instructions are position-independent
//! by construction.
//!
//! # Notation
//!
//! - The **epilogue** of a `ret` is the `ret` with the longest run of
//!   instructions right before it that restore callee-saved registers from
//!   the stack or move `sp` or `x29` ([`crate::machine::frame`]), none with
//!   a trap or call-site record.
//! - Two epilogues **share a tail** of `L` instructions when their last
//!   `L` words are equal (the `ret` at least).
//!
//! # Algorithm
//!
//! Per function, returns in layout order; each epilogue is **kept** (left
//! as it is) or **replaced**:
//!
//! 1. For the epilogue `C` of a `ret`, find the kept epilogue `K` with the
//!    longest shared tail, `L` instructions (ties: the earlier `K`).
//! 2. If the item before that tail of `C` can fall into it (it is an
//!    instruction that does not end the flow), the tail becomes one
//!    `b` to the first instruction of `K`'s tail — worth it when `L ≥ 2`.
//!    Otherwise control reaches the tail only by branches: the tail is
//!    deleted and every branch to it goes to `K`'s tail — worth it for
//!    any `L`.
//! 3. A branch (or jump-table entry) to the `i`-th instruction of the
//!    replaced tail goes to the `i`-th instruction of `K`'s tail: the same
//!    words run from there. A `C` that was not replaced is kept.
//! 4. Lay the function out again; if a branch is out of its range, the
//!    function keeps its code.
//!
//! # Invariants
//!
//! - Every path runs the same instructions as before, except one `b` more
//!   where a tail became a branch: the words of a shared tail are equal and
//!   hold no PC-relative field (restores, `sp` arithmetic and `ret`).
//! - Only instructions without trap or call-site records move; the function
//!   never grows; the output depends only on the input.
//!
//! # Cost
//!
//! Functions with fewer than two `ret` words are not lifted. Otherwise
//! lifting and layout are linear in the code; comparing tails is linear in
//! the number of returns times the kept epilogues (a handful).

use std::collections::BTreeMap;
use std::fmt;

use crate::machine::decode::{Decoder, Form};
use crate::machine::frame;
use crate::machine::lift::{self, Inst, Item, Label, LiftedFunction};
use crate::machine::{self, MachFunction};
use crate::remark::Remark;

/// The pass's name in remarks.
const PASS: &str = "epilogue";

/// `ret` (through `x30`).
const RET: u32 = 0xD65F_03C0;

/// The encoding of `b` with a zero offset (layout fills it in).
const B: u32 = 0x1400_0000;

/// What the pass did to a module.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EpilogueStats {
    /// Functions rewritten.
    pub functions: usize,
    /// Epilogue tails replaced by a branch.
    pub branched: usize,
    /// Epilogue tails deleted (only branches reached them).
    pub deleted: usize,
    pub bytes_before: u64,
    pub bytes_after: u64,
}

impl EpilogueStats {
    pub fn accumulate(&mut self, other: &EpilogueStats) {
        self.functions += other.functions;
        self.branched += other.branched;
        self.deleted += other.deleted;
        self.bytes_before += other.bytes_before;
        self.bytes_after += other.bytes_after;
    }
}

impl fmt::Display for EpilogueStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} epilogues became a branch, {} deleted, in {} functions; code {} -> {} bytes",
            self.branched, self.deleted, self.functions, self.bytes_before, self.bytes_after
        )
    }
}

/// What the pass did to a module: statistics and one remark per function
/// it rewrote or had to leave as it was.
#[derive(Clone, Debug, Default)]
pub struct EpilogueReport {
    pub stats: EpilogueStats,
    pub remarks: Vec<Remark>,
}

/// Shares the epilogues of every function of a module (module doc).
pub fn run(functions: &mut [MachFunction]) -> EpilogueReport {
    run_decoding(functions, &mut Decoder::new())
}

/// [`run`] with `decoder`, which knows what the module's earlier machine
/// passes decoded (`crate::machine::decode::Decoded`).
pub fn run_decoding(functions: &mut [MachFunction], decoder: &mut Decoder) -> EpilogueReport {
    let mut report = EpilogueReport::default();
    let bytes = machine::rewrite_each(functions, |func| share_function(func, decoder, &mut report));
    report.stats.bytes_before = bytes.before;
    report.stats.bytes_after = bytes.after;
    report
}

fn share_function(func: &mut MachFunction, decoder: &mut Decoder, report: &mut EpilogueReport) {
    let returns = func.words().filter(|&w| w == RET).count();
    if returns < 2 {
        return;
    }
    let lifted = lift::lift(func, decoder);
    if lifted.opaque.is_some() {
        return;
    }
    let mut counts = EpilogueStats::default();
    let Some(rewritten) = share(&lifted, decoder, &mut counts) else {
        return;
    };
    match lift::relaid(func, &lifted, &rewritten) {
        Some(code) if code.bytes.len() < func.bytes.len() => {
            let saved = func.bytes.len() - code.bytes.len();
            report.remarks.push(
                Remark::passed(
                    PASS,
                    "shared",
                    &func.name,
                    format!(
                        "{} epilogues became a branch to another, {} were deleted",
                        counts.branched, counts.deleted
                    ),
                )
                .bytes(saved as i64)
                .count("functions", 1)
                .count("branched", counts.branched as u64)
                .count("deleted", counts.deleted as u64),
            );
            *func = code;
            counts.functions = 1;
            report.stats.accumulate(&counts);
        }
        Some(_) => {}
        None => report.remarks.push(Remark::missed(
            PASS,
            "kept-original",
            &func.name,
            "a branch of the rewritten code is out of range",
        )),
    }
}

/// An epilogue: the items `start..=ret` and their words.
struct Epilogue {
    start: usize,
    words: Vec<u32>,
}

/// `func` with its epilogues shared (module doc), or `None` if none is.
fn share(
    func: &LiftedFunction,
    decoder: &mut Decoder,
    counts: &mut EpilogueStats,
) -> Option<LiftedFunction> {
    let mut kept: Vec<Epilogue> = Vec::new();
    // Replaced items: the label each one's branches now go to; and the
    // first item of a tail that became a branch.
    let mut redirect: BTreeMap<Label, Label> = BTreeMap::new();
    let mut branch_at: BTreeMap<usize, Label> = BTreeMap::new();
    let mut deleted = vec![false; func.items.len()];
    for (ret, (_, item)) in func.items.iter().enumerate() {
        let Item::Inst(inst) = item else { continue };
        if inst.word != RET || inst.reloc.is_some() {
            continue;
        }
        let epilogue = epilogue_of(func, ret, decoder);
        let best = kept
            .iter()
            .map(|k| (shared_tail(&k.words, &epilogue.words), k))
            .max_by_key(|&(len, k)| (len, std::cmp::Reverse(k.start)));
        let Some((len, k)) = best else {
            kept.push(epilogue);
            continue;
        };
        let tail = ret + 1 - len;
        let falls_in =
            tail > 0 && matches!(&func.items[tail - 1].1, Item::Inst(i) if !i.form.ends_flow());
        if falls_in && len < 2 {
            kept.push(epilogue);
            continue;
        }
        let kept_tail = k.start + k.words.len() - len;
        for i in 0..len {
            redirect.insert(func.items[tail + i].0, func.items[kept_tail + i].0);
            deleted[tail + i] = true;
        }
        if falls_in {
            branch_at.insert(tail, func.items[kept_tail].0);
            counts.branched += 1;
        } else {
            counts.deleted += 1;
        }
    }
    if redirect.is_empty() {
        return None;
    }
    let mut out = LiftedFunction {
        items: Vec::with_capacity(func.items.len()),
        ..func.clone()
    };
    for (i, (label, item)) in func.items.iter().enumerate() {
        // The branch keeps the label of the tail it replaces (the item
        // before falls into it); branches to that label go straight to the
        // kept tail (`redirect`).
        if let Some(&target) = branch_at.get(&i) {
            out.items.push((*label, branch_to(target)));
            continue;
        }
        if deleted[i] {
            continue;
        }
        out.items.push((*label, retargeted(item, &redirect)));
    }
    Some(out)
}

/// The epilogue of the `ret` at item `ret` (module doc, "Notation").
fn epilogue_of(func: &LiftedFunction, ret: usize, decoder: &mut Decoder) -> Epilogue {
    let mut start = ret;
    while start > 0 {
        let Item::Inst(inst) = &func.items[start - 1].1 else {
            break;
        };
        if !is_epilogue_instruction(inst, decoder) {
            break;
        }
        start -= 1;
    }
    let words = func.items[start..=ret]
        .iter()
        .map(|(_, item)| match item {
            Item::Inst(inst) => inst.word,
            _ => unreachable!("epilogues are instructions"),
        })
        .collect();
    Epilogue { start, words }
}

fn is_epilogue_instruction(inst: &Inst, decoder: &mut Decoder) -> bool {
    if inst.trap.is_some() || inst.call_site || inst.form.is_pc_relative() {
        return false;
    }
    let shape = decoder.shape(inst.word);
    frame::loaded_callee_saved(shape, &inst.effects).is_some() || frame::adjusts_frame(inst)
}

/// The number of equal words at the ends of `a` and `b`.
fn shared_tail(a: &[u32], b: &[u32]) -> usize {
    a.iter()
        .rev()
        .zip(b.iter().rev())
        .take_while(|(x, y)| x == y)
        .count()
}

/// `b target`.
fn branch_to(target: Label) -> Item {
    let mut inst = Inst {
        word: B,
        form: Form::B,
        target: Some(target),
        reloc: None,
        trap: None,
        call_site: false,
        jump_table: false,
        effects: Default::default(),
    };
    inst.effects = lift::control_effects(&inst, Default::default());
    Item::Inst(inst)
}

/// `item` with its branch target or jump-table entry redirected.
fn retargeted(item: &Item, redirect: &BTreeMap<Label, Label>) -> Item {
    let map = |l: Label| redirect.get(&l).copied().unwrap_or(l);
    match item {
        Item::Inst(inst) => Item::Inst(Inst {
            target: inst.target.map(map),
            ..inst.clone()
        }),
        Item::JumpEntry { table, target } => Item::JumpEntry {
            table: *table,
            target: map(*target),
        },
        Item::Data(_) => item.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::testing::{function, words};
    use crate::machine::{MachReloc, RelocKind, RelocTarget};
    use cranelift_codegen::binemit::Reloc;

    const BL: u32 = 0x9400_0000;
    const RESTORE_X19: u32 = 0xF841_07F3; // ldr x19, [sp], #16
    const RESTORE_FRAME: u32 = 0xA8C1_7BFD; // ldp x29, x30, [sp], #16

    fn shared(words_in: &[u32], relocs: &[u32]) -> (Vec<u32>, EpilogueReport) {
        let mut func = function(words_in);
        func.relocs = relocs
            .iter()
            .map(|&offset| MachReloc {
                offset,
                kind: RelocKind::Cranelift(Reloc::Arm64Call),
                target: RelocTarget::Symbol(0),
                addend: 0,
            })
            .collect();
        let mut functions = vec![func];
        let report = run(&mut functions);
        (words(&functions[0]), report)
    }

    #[test]
    fn a_second_epilogue_becomes_a_branch_to_the_first() {
        let before = [
            0xA9BF_7BFD, // stp x29, x30, [sp, #-16]!
            0x9100_03FD, // mov x29, sp
            0xF81F_0FF3, // str x19, [sp, #-16]!
            0xB400_00A0, // cbz x0, 0x20
            BL,          // bl f
            RESTORE_X19,
            RESTORE_FRAME,
            RET,
            0xD280_0020, // 0x20: mov x0, #1
            RESTORE_X19,
            RESTORE_FRAME,
            RET,
        ];
        let (after, report) = shared(&before, &[16]);
        assert_eq!(
            after,
            [
                0xA9BF_7BFD,
                0x9100_03FD,
                0xF81F_0FF3,
                0xB400_00A0,
                BL,
                RESTORE_X19,
                RESTORE_FRAME,
                RET,
                0xD280_0020,
                0x17FF_FFFC, // b 0x14
            ]
        );
        assert_eq!(report.stats.branched, 1);
        assert_eq!(report.stats.bytes_before - report.stats.bytes_after, 8);
        assert_eq!(report.remarks[0].decision, "shared");
    }

    #[test]
    fn a_return_only_branches_reach_is_deleted() {
        let before = [
            0xB400_0060, // cbz x0, 0x0c
            0x9100_0400, // add x0, x0, #1
            RET,
            RET, // 0x0c: only the cbz reaches it
        ];
        let (after, report) = shared(&before, &[]);
        assert_eq!(after, [0xB400_0040, 0x9100_0400, RET]); // cbz x0, 0x08
        assert_eq!(report.stats.deleted, 1);
    }

    #[test]
    fn a_lone_return_control_falls_into_stays() {
        let before = [
            0xB400_0040, // cbz x0, 0x08
            RET,
            0x9100_0400, // add x0, x0, #1
            RET,
        ];
        let (after, report) = shared(&before, &[]);
        assert_eq!(after, before);
        assert_eq!(report.stats.functions, 0);
    }

    #[test]
    fn a_shorter_epilogue_branches_into_a_longer_one() {
        let before = [
            0xB400_0080, // cbz x0, 0x10
            RESTORE_X19,
            RESTORE_FRAME,
            RET,
            0x9100_0400, // 0x10: add x0, x0, #1
            RESTORE_FRAME,
            RET,
        ];
        let (after, _) = shared(&before, &[]);
        assert_eq!(
            after,
            [
                0xB400_0080,
                RESTORE_X19,
                RESTORE_FRAME,
                RET,
                0x9100_0400,
                0x17FF_FFFD, // b 0x08
            ]
        );
    }

    #[test]
    fn branches_into_a_replaced_tail_follow_it() {
        let before = [
            0xB400_0060, // cbz x0, 0x0c
            RESTORE_FRAME,
            RET,
            0x9100_0400, // 0x0c: add x0, x0, #1
            RESTORE_FRAME,
            0xD503_201F, // nop: not an epilogue instruction
            RET,         // a lone `ret` the nop falls into: kept
        ];
        let (after, report) = shared(&before, &[]);
        assert_eq!(after, before);
        assert_eq!(report.stats.functions, 0);
        let before = [
            0xB400_0080, // cbz x0, 0x10
            0xB400_0081, // cbz x1, 0x14: into the second epilogue
            RESTORE_FRAME,
            RET,
            0x9100_0400, // 0x10: add x0, x0, #1
            RESTORE_FRAME,
            RET,
        ];
        let (after, _) = shared(&before, &[]);
        assert_eq!(
            after,
            [
                0xB400_0080,
                0xB400_0021, // cbz x1, 0x08: the kept tail
                RESTORE_FRAME,
                RET,
                0x9100_0400,
                0x17FF_FFFD, // b 0x08
            ]
        );
    }
}
