//! The aarch64 machine-code layer the machine passes share: decoding,
//! lifting to instructions with symbolic targets, liveness, layout with
//! relocations, and loops on the machine control-flow graph.
//!
//! Cranelift exposes no instruction list after register allocation; what it
//! hands out is bytes with external relocations, trap and call-site records
//! and (with `machine_code_cfg_info`) block starts. Every machine pass —
//! shared trap paths ([`crate::traps`]), the peepholes
//! ([`crate::peephole`]), the outliner ([`crate::outline`]) — and the
//! instruction-role report ([`roles`]) work on that code through this
//! layer, as LLVM's machine passes share
//! `MachineInstr` and its analyses: none of them decodes or lays out code
//! itself, and none reaches into another for it.
//!
//! # Notation
//!
//! - A **function** is a [`MachFunction`]: bytes, block starts, external
//!   relocations ([`MachReloc`]: offset, [`RelocKind`], [`RelocTarget`],
//!   addend), trap records and call-site records, as Cranelift's
//!   `CompiledCode` gives them. Relocation targets are symbols of the module
//!   by index, functions the outliner created, or (never lifted) offsets in
//!   the function itself.
//! - A **word** is one 32-bit instruction; its [`decode::Form`] is its
//!   encoding class by fixed bits (branches, PC-relative forms, `udf`), its
//!   [`decode::Effects`] the registers it may read, may write and certainly
//!   overwrites, as a [`decode::RegSet`] (`x0`–`x30`, `sp`, NZCV,
//!   `v0`–`v31`, one bit for every other register).
//! - A **lifted** function ([`lift::LiftedFunction`]) is a list of items,
//!   each with a **label** (a name independent of its position): an
//!   instruction ([`lift::Inst`]: word, form, effects, the label a
//!   PC-relative field refers to, its relocation, trap and call-site
//!   records), data (literal pools, relocated words) or a jump-table entry.
//!   Passes insert, delete and replace items; branch targets follow labels.
//! - **Layout** ([`lift::LiftedFunction::layout`]) turns items back into
//!   [`lift::Emitted`] code: offsets, re-encoded PC-relative fields, records
//!   moved with their items; [`lift::relaid`] also moves the block starts.
//! - The **block graph** ([`cfg`]) has the function's basic blocks as
//!   nodes. **Liveness** ([`liveness`]) is per item: the registers live
//!   before and after it. **Loops** ([`loops`]) are sets of blocks.
//!
//! # What each part guarantees
//!
//! | part         | guarantee |
//! |--------------|-----------|
//! | [`decode`]   | forms and PC-relative offsets exactly as the Arm ARM encodes them; effects conservative in the directions liveness needs: uses and defs over-approximated, kills under-approximated |
//! | [`lift`]     | an untouched lifted function lays out to its exact original bytes and records; a function that does not lift cleanly (unexplained data, unsupported relocations) is *opaque*: one data item, never rewritten; code read back from linked files is lifted for reading only ([`lift::lift_linked`]) |
//! | [`cfg`]      | the successors of an item are every item control may reach next inside the function (jump tables included); blocks, reverse postorder and dominators of that graph |
//! | [`liveness`] | a register reported dead is dead on every path (unknown means live) |
//! | [`loops`]    | natural loops of back edges to dominating headers, irreducible cycles as loops too: an instruction is in a loop exactly when it lies on a cycle of the block graph |
//! | [`frame`]    | saves, restores and `sp`/`x29` writes recognised by shape: conservative for rewriting (a restore must load callee-saved registers only) |
//! | [`roles`]    | every item of a function gets one role (frame, call, check, trap, constant...): the roles add up to the function's size |
//!
//! A layout fails, rather than emitting wrong code, when a PC-relative
//! field is out of its range: the pass keeps the function's original code.
//!
//! # Cost
//!
//! Decoding by form is a few masks per word; register effects come from
//! capstone, cached per distinct word in a [`decode::Decoder`] (one per
//! thread). Lifting and layout are linear in the function's size (ordered
//! maps by offset: `O(n log n)`); liveness iterates a backward dataflow to
//! a fixed point, a few passes over the items for Cranelift's code; the
//! block graph is linear in the items, dominators a couple of passes over
//! its edges, loops linear in the blocks of each loop.

pub mod cfg;
pub mod decode;
pub mod frame;
pub mod lift;
pub mod liveness;
pub mod loops;
pub mod roles;

use std::fmt;

use cranelift_codegen::binemit::Reloc;
use cranelift_codegen::ir::TrapCode;

use lift::Emitted;

/// An external reference of emitted code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MachReloc {
    /// Offset of the relocated field from the start of the function.
    pub offset: u32,
    pub kind: RelocKind,
    pub target: RelocTarget,
    pub addend: i64,
}

/// How a relocation patches its field: one of Cranelift's kinds, or one
/// only parec's machine passes produce (Cranelift's `Reloc` has no such
/// variant, so the object writer adds these relocations itself).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum RelocKind {
    Cranelift(Reloc),
    /// `R_AARCH64_ADR_PREL_LO21`: the 21-bit byte offset of an `adr` to
    /// the target (±1 MiB). The linker resolves it at the word's own
    /// address and reports a target out of range: never a wrong address.
    Aarch64AdrPrelLo21,
    /// `R_AARCH64_CONDBR19`: the 19-bit word offset of a `b.cond`, `cbz`
    /// or `cbnz` to the target (±1 MiB). The linker adds no thunk for it:
    /// a target out of range is a link error.
    Aarch64CondBr19,
    /// `R_AARCH64_TSTBR14`: the 14-bit word offset of a `tbz` or `tbnz`
    /// (±32 KiB), likewise without a thunk.
    Aarch64TstBr14,
}

impl RelocKind {
    /// A number that names the kind in hashes and cgdata keys (Cranelift's
    /// kinds keep their discriminant, so existing keys do not change).
    pub fn code(self) -> u32 {
        match self {
            RelocKind::Cranelift(kind) => kind as u32,
            RelocKind::Aarch64AdrPrelLo21 => 0x1_0000,
            RelocKind::Aarch64CondBr19 => 0x1_0001,
            RelocKind::Aarch64TstBr14 => 0x1_0002,
        }
    }
}

impl From<Reloc> for RelocKind {
    fn from(kind: Reloc) -> RelocKind {
        RelocKind::Cranelift(kind)
    }
}

/// Printed as Cranelift prints its kinds (listings and outlined names).
impl fmt::Debug for RelocKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RelocKind::Cranelift(kind) => write!(f, "{kind:?}"),
            RelocKind::Aarch64AdrPrelLo21 => f.write_str("Aarch64AdrPrelLo21"),
            RelocKind::Aarch64CondBr19 => f.write_str("Aarch64CondBr19"),
            RelocKind::Aarch64TstBr14 => f.write_str("Aarch64TstBr14"),
        }
    }
}

/// What a relocation refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RelocTarget {
    /// A symbol of the module, by index into the module's symbol names
    /// (as given to [`crate::outline::outline_module`]).
    Symbol(u32),
    /// The outlined function with this index in
    /// [`crate::outline::OutlineResult::outlined`].
    Outlined(u32),
    /// An offset in the function itself (never outlined across).
    FunctionOffset(u32),
}

/// A module's code bytes before and after a machine pass.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CodeBytes {
    pub before: u64,
    pub after: u64,
}

/// Runs a machine pass's `rewrite` on every function of a module, in
/// order, and counts the code bytes before and after: the loop each
/// machine pass's `run_decoding` is.
pub fn rewrite_each(
    functions: &mut [MachFunction],
    mut rewrite: impl FnMut(&mut MachFunction),
) -> CodeBytes {
    let mut bytes = CodeBytes::default();
    for func in functions.iter_mut() {
        bytes.before += func.bytes.len() as u64;
        rewrite(func);
        bytes.after += func.bytes.len() as u64;
    }
    bytes
}

/// One compiled function, as Cranelift emitted it.
#[derive(Clone, Debug, PartialEq)]
pub struct MachFunction {
    pub name: String,
    pub bytes: Vec<u8>,
    pub alignment: u32,
    /// Block start offsets (`machine_code_cfg_info`).
    pub bb_starts: Vec<u32>,
    pub relocs: Vec<MachReloc>,
    pub traps: Vec<(u32, TrapCode)>,
    /// Return addresses of call sites.
    pub call_sites: Vec<u32>,
    /// An identical copy of this function is expected in other modules (a
    /// generic instance, a merged `.Tgm` body): it is outlined against
    /// itself only, so every copy stays identical and the linker folds them.
    pub shared: bool,
}

impl MachFunction {
    /// The instruction words of the function's bytes, in order.
    pub fn words(&self) -> impl Iterator<Item = u32> + '_ {
        self.bytes
            .chunks_exact(4)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
    }

    /// The function as laid out by Cranelift (for callers that keep it).
    pub fn emitted(&self) -> Emitted {
        Emitted {
            bytes: self.bytes.clone(),
            alignment: self.alignment,
            relocs: self.relocs.clone(),
            traps: self.traps.clone(),
            call_sites: self.call_sites.clone(),
        }
    }
}

/// Machine functions from words, for the unit tests of the machine passes.
#[cfg(test)]
pub(crate) mod testing {
    use super::MachFunction;

    /// A function of `words` with one block, no records.
    pub fn function(words: &[u32]) -> MachFunction {
        MachFunction {
            name: "f".into(),
            bytes: words.iter().flat_map(|w| w.to_le_bytes()).collect(),
            alignment: 4,
            bb_starts: vec![0],
            relocs: Vec::new(),
            traps: Vec::new(),
            call_sites: Vec::new(),
            shared: false,
        }
    }

    /// The words of `func`.
    pub fn words(func: &MachFunction) -> Vec<u32> {
        func.words().collect()
    }
}
