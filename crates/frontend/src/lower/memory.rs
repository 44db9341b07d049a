//! What the lowered code says about memory: alias regions and memory flags.
//!
//! Pare is memory-safe and type-safe, so every access the lowering emits
//! touches exactly one kind of memory, and the kinds never overlap. Each kind
//! is a Cranelift alias region ([`AliasRegionData`], user-defined in
//! Cranelift 0.135), so Cranelift's alias analysis and parec's GVN
//! (`parec_passes::gvn`, memory states per region) know that a store to one
//! kind leaves every other kind as it was:
//!
//! | region    | memory                                                         |
//! |-----------|----------------------------------------------------------------|
//! | `length`  | the length word at offset 0 of an array or string block        |
//! | `element` | the elements of an array, the bytes of a string (offset ≥ 8)    |
//! | `field`   | the fields of a struct block                                    |
//! | `global`  | a module-level variable's data object                           |
//!
//! Memory the runtime alone touches (its output buffer, libc's variables,
//! signal structures) has no region: Cranelift treats an access without a
//! region as one to any region, which is always sound.
//!
//! A length is written once, by the runtime, into a block no Pare code has
//! seen yet (`pare_new_array`; a string literal's is in read-only data), and
//! never again. Length loads are therefore also `readonly`: no store the
//! function can execute changes what they read, across calls too. They are
//! `can_move` (free to hoist) only where the reference cannot be null by
//! construction — a symbol's address; anywhere else a hoisted load could run
//! above the null check that guards it (the bug that made Cranelift add
//! `can_move`).
//!
//! Region `user_id`s are fixed program-wide (Cranelift's inliner merges a
//! callee's regions into the caller's by `user_id`), and regions are added
//! to a function the first time it uses them.

use cranelift_codegen::ir::{self, AliasRegionData, MemFlagsData};

/// The kinds of memory Pare code accesses (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Region {
    Length,
    Element,
    Field,
    Global,
}

impl Region {
    /// The region's program-wide id ("PAR" and a kind number).
    fn user_id(self) -> u32 {
        const BASE: u32 = 0x5041_5200;
        BASE + match self {
            Region::Length => 1,
            Region::Element => 2,
            Region::Field => 3,
            Region::Global => 4,
        }
    }

    fn description(self) -> &'static str {
        match self {
            Region::Length => "pare array length",
            Region::Element => "pare array element",
            Region::Field => "pare struct field",
            Region::Global => "pare global",
        }
    }

    /// The flags of a checked access to this region of `func`: aligned and
    /// known not to trap (it follows the null and bounds checks that make it
    /// so, or is at a global's own address).
    pub(crate) fn trusted(self, func: &mut ir::Function) -> MemFlagsData {
        let region = func.dfg.alias_regions.insert(AliasRegionData {
            user_id: self.user_id(),
            description: self.description().into(),
        });
        MemFlagsData::trusted().with_alias_region(Some(region))
    }
}

/// The flags of a length load (see the module doc); `movable` when the block
/// is known to exist wherever the load could be moved to.
pub(crate) fn length_load(func: &mut ir::Function, movable: bool) -> MemFlagsData {
    let flags = Region::Length.trusted(func).with_readonly();
    if movable {
        flags.with_can_move()
    } else {
        flags
    }
}
