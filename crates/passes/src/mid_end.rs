//! Cranelift's mid-end for the smallest code (`-Oz`): each function's final
//! code is the smaller of its lowerings with and without it.
//!
//! Cranelift's mid-end ([`Context::optimize`]: the acyclic e-graph of
//! [Fal23], `cranelift/codegen/src/egraph/`, with the rewrite rules of
//! `opts/*.isle`) is built for speed. At `-Oz` it helps code size in some
//! functions and hurts it in others (measured over `bench/`, issue 32):
//!
//! - **What pays**: its rewrites (`x * 8` → `x << 3`, which aarch64 folds
//!   into the address as `add x0, x1, x2, lsl #3` where the plain lowering
//!   needs `mov` and `madd`; constant folding), and the rematerialization
//!   of constants next to their uses (`opts/remat.isle`), which keeps them
//!   out of registers across calls.
//! - **What costs**: elaboration. The e-graph forgets where a pure
//!   instruction was and places it again *just before its first use*
//!   (`egraph/elaborate.rs`), so a computation the program did early,
//!   `h = h * 31 + f(x)` after each call, moves to the end of the block and
//!   every call's result stays live across the calls that follow:
//!   callee-saved registers run out, results spill, moves multiply.
//!   Cranelift's own LICM (elaboration out of loops) adds register
//!   pressure the same way.
//!
//! # Notation
//!
//! A *lowering* ([`Lowering`]) turns a function's CLIF into machine code
//! for an ISA with `opt_level=speed_and_size` (`-Oz`,
//! [`crate::divisions::kept_by`]):
//! - [`Lowering::Measured`]: [`crate::code_cache::compile`], the mid-end
//!   inside Cranelift (divisions by constants kept, [`crate::divisions`]).
//!   Every size pass measures this one, so their decisions do not depend
//!   on this module.
//! - [`Lowering::Plain`]: no mid-end, the function as parec's CLIF passes
//!   left it (their GVN, PRE and LICM: `crate::gvn`), lowered by the ISA
//!   [`crate::divisions::without_mid_end`].
//!
//! The *price* of a lowering is the bytes of its code as the per-function
//! machine passes leave it (shared trap paths, peepholes, copy
//! propagation, frame, sibling calls, epilogues): what the object holds
//! before the outliner. The *estimate* ([`estimate`]) is its bytes as
//! Cranelift emitted them, less 4 for each trap that repeats a trap code
//! (the trap-path pass keeps one `udf` island per code and function).
//!
//! # Algorithm
//!
//! In the final code generation of an `-Oz` build (the driver's
//! `codegen::lower_module`), for each function `f`:
//! 1. **Lower** `f` by both lowerings ([`Lowerer::compile`]).
//! 2. **Filter** ([`plain_may_pay`]): `Plain` is a candidate only when its
//!    estimate is smaller than `Measured`'s. (Over `bench/` at `-Oz`, 595
//!    of 4,393 functions, holding 23% of the bytes; they have 90% of what
//!    `Plain` would save after the machine passes, and 6 of them, which
//!    would grow by 48 bytes in all, are refused by step 4.)
//! 3. **Price** (the driver): the machine passes run on the function
//!    lowered by `Plain` where it is a candidate, by `Measured` elsewhere;
//!    a candidate's `Measured` lowering is priced too.
//! 4. **Choose** ([`keeps_plain`]): a candidate keeps `Plain` unless its
//!    price is larger than `Measured`'s; then the driver runs the machine
//!    passes once more on its module with `Measured` for it.
//!
//! # Invariants and cost
//!
//! - Both lowerings compute `f`: the mid-end preserves semantics, and
//!   lowering without it is Cranelift's `opt_level=none`.
//! - A function's price is never larger than its `Measured` price: the
//!   machine passes before the outliner work on each function alone, so
//!   the price of a lowering does not depend on the other functions.
//!   The choice depends only on `f` and the ISA (the output is
//!   deterministic). The size passes never see it.
//! - Cost: per function of the final build, one more lowering (without the
//!   mid-end), and the machine passes once more on the candidates'
//!   `Measured` code. The size passes' trial compilations cost nothing
//!   more. A round of a two-round build reuses the first's lowering.
//!   The driver lowers a function that several modules define (a generic
//!   instance) by `Plain` through the build's [`CodeCache`], keyed by the
//!   ISA without the mid-end, so it is lowered once (in
//!   `bench/generic_zoo`, 207 of the 478 `Plain` lowerings are such
//!   repeats); any other function is lowered by `Plain` once per build,
//!   where the cache's key and stored entry would be pure cost. The cache
//!   is exact (its module doc): this changes compile time, never the
//!   choice.
//!
//! [Fal23]: C. Fallin, "ægraphs: Acyclic E-graphs for Efficient
//! Optimization in a Production Compiler", EGRAPHS 2023 workshop (and
//! `cranelift/codegen/src/egraph/mod.rs`, bytecodealliance/wasmtime).

use cranelift_codegen::ir::TrapCode;
use cranelift_codegen::isa::{OwnedTargetIsa, TargetIsa};
use cranelift_codegen::{CompileError, CompiledCode, Context};

use crate::code_cache::{self, CodeCache};
use crate::divisions;
use crate::machine::MachFunction;

/// A way to lower a function at `-Oz` (module doc, notation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Lowering {
    /// [`code_cache::compile`]: what the size passes measured.
    Measured,
    /// Without the mid-end.
    Plain,
}

/// The lowerings of one ISA with `opt_level=speed_and_size` (one per
/// module of a build: it holds the ISA without the mid-end).
pub struct Lowerer<'i> {
    isa: &'i dyn TargetIsa,
    without_mid_end: OwnedTargetIsa,
}

impl<'i> Lowerer<'i> {
    /// `None` unless `isa` keeps divisions (`-Oz`): other levels keep
    /// Cranelift's mid-end as it is (speed).
    pub fn new(isa: &'i dyn TargetIsa) -> Option<Lowerer<'i>> {
        if !divisions::kept_by(isa) {
            return None;
        }
        let without_mid_end = divisions::without_mid_end(isa).ok()?;
        Some(Lowerer {
            isa,
            without_mid_end,
        })
    }

    /// Compiles `ctx.func` by `lowering` (step 1 of the module doc),
    /// through `cache` when there is one.
    pub fn compile<'c>(
        &self,
        ctx: &'c mut Context,
        lowering: Lowering,
        cache: Option<&CodeCache>,
    ) -> Result<&'c CompiledCode, CompileError<'c>> {
        match lowering {
            Lowering::Measured => code_cache::compile(ctx, self.isa, cache),
            // Through the cache when the caller gives one (module doc,
            // cost).
            Lowering::Plain => code_cache::compile_as_is(ctx, &*self.without_mid_end, cache),
        }
    }
}

/// The estimate of `func`'s price (module doc, notation): its bytes less
/// the `udf` of each trap that repeats a trap code.
pub fn estimate(func: &MachFunction) -> usize {
    let mut codes: Vec<TrapCode> = func.traps.iter().map(|&(_, code)| code).collect();
    codes.sort_unstable_by_key(|code| code.as_raw().get());
    codes.dedup();
    const UDF_BYTES: usize = 4;
    let repeated = func.traps.len() - codes.len();
    func.bytes.len().saturating_sub(UDF_BYTES * repeated)
}

/// Step 2 of the module doc: whether `plain`, the function lowered by
/// [`Lowering::Plain`], may be smaller than `measured` in the end.
pub fn plain_may_pay(measured: &MachFunction, plain: &MachFunction) -> bool {
    estimate(plain) < estimate(measured)
}

/// Step 4 of the module doc, on the prices of a candidate's two
/// lowerings: whether it keeps `Plain`.
pub fn keeps_plain(measured_price: usize, plain_price: usize) -> bool {
    plain_price <= measured_price
}

#[cfg(test)]
mod tests;
