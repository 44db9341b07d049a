//! A cache of compiled machine code, shared by the passes that measure code
//! size and by the build's code generation.
//!
//! The size passes decide by compiling: the inliner compiles each caller
//! before and after inlining a callee, GVN's size guard compiles a function
//! before and after its rewrite (and again with less PRE when it grew), the
//! similar-function merger compiles both candidates and their merge, and
//! code generation finally compiles every function once more. Most of these
//! compilations are of a function some earlier step already compiled: the
//! inliner's accepted result is GVN's "before", GVN's accepted result is
//! the merger's measure of the function, and the merger's accepted result
//! is what code generation compiles. Recompiling them cost about a third of
//! an `-Oz` build. At `-Oz` code generation also lowers each function
//! without the mid-end (`crate::mid_end`'s `Plain`), a function several
//! modules define through the cache, so that it is lowered once.
//!
//! # Notation and algorithm
//!
//! A *key* is Cranelift's incremental-compilation key of a function for an
//! ISA ([`incremental_cache::compute_cache_key`]): a SHA-256 of the
//! function's *stencil* (its body, with the names it refers to replaced by
//! indices into its parameters) and of the ISA's name, triple and flags. An
//! *entry* is the compiled code of a stencil, serialized by Cranelift
//! ([`Context::compile_with_cache`]), with relocations naming those indices.
//!
//! [`CodeCache::compile`] computes the key; on a hit it rebuilds the code
//! from the entry and applies the function's own names; on a miss it
//! compiles and stores the entry. Code is a function of the key (Cranelift
//! compiles deterministically), so a hit gives the bytes, relocations, trap
//! and call-site records, and block offsets a compilation would give: the
//! cache changes compile time, never output. Two functions that differ only
//! in the names they call (a generic instance in two modules, a caller
//! before and after renaming) share an entry.
//!
//! # Invariants and cost
//!
//! - The map is only looked up and added to, never iterated, so the order
//!   in which threads fill it cannot show in any output.
//! - A key costs a hash of the function (small against compiling it); an
//!   entry holds the serialized code, a few times the function's machine
//!   code bytes. Entries live as long as the cache: one build.
//! - A failed compilation is not stored (the next attempt fails the same
//!   way, and reports its error).
//!
//! Under `opt_level=speed_and_size` (`-Oz`), a function with divisions by
//! constants is optimized before the lookup and keyed as optimized, for an
//! ISA without the mid-end ([`crate::divisions`]): for it, the mid-end runs
//! on every compilation, hit or miss.
//!
//! Cranelift's own users of this mechanism (Wasmtime's incremental cache)
//! keep entries across processes; parec keeps them for one build, where the
//! repeated compilations are.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use cranelift_codegen::control::ControlPlane;
use cranelift_codegen::incremental_cache::CacheKvStore;
use cranelift_codegen::ir::Function;
use cranelift_codegen::isa::TargetIsa;
use cranelift_codegen::CompileError;
use cranelift_codegen::{CompiledCode, Context};

use crate::divisions;

/// Compiled code by key, for one build (see the module doc).
#[derive(Default)]
pub struct CodeCache {
    entries: Mutex<HashMap<Vec<u8>, Arc<[u8]>>>,
    hits: AtomicU64,
    misses: AtomicU64,
}

/// How often a [`CodeCache`] saved a compilation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Compilations answered from the cache.
    pub hits: u64,
    /// Compilations run (and stored).
    pub misses: u64,
}

impl std::fmt::Debug for CodeCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CodeCache")
            .field("stats", &self.stats())
            .finish()
    }
}

impl CodeCache {
    pub fn new() -> CodeCache {
        CodeCache::default()
    }

    /// Compiles `ctx.func` for `isa` like [`Context::compile`], from the
    /// cache when the same stencil was compiled for the same ISA before.
    pub fn compile<'c>(
        &self,
        ctx: &'c mut Context,
        isa: &dyn TargetIsa,
    ) -> Result<&'c CompiledCode, CompileError<'c>> {
        let mut store = Store(self);
        let (code, hit) = ctx.compile_with_cache(isa, &mut store, &mut ControlPlane::default())?;
        let counter = if hit { &self.hits } else { &self.misses };
        counter.fetch_add(1, Ordering::Relaxed);
        Ok(code)
    }

    /// Bytes of machine code Cranelift emits for `func`, if it compiles.
    pub fn code_size(&self, func: &Function, isa: &dyn TargetIsa) -> Option<usize> {
        code_size(func, isa, Some(self))
    }

    pub fn stats(&self) -> CacheStats {
        CacheStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
        }
    }
}

/// Compiles `ctx.func` for `isa` like [`Context::compile`]: through `cache`
/// when there is one. Under `opt_level=speed_and_size`, a function with
/// divisions by constants keeps them ([`divisions`]).
pub fn compile<'c>(
    ctx: &'c mut Context,
    isa: &dyn TargetIsa,
    cache: Option<&CodeCache>,
) -> Result<&'c CompiledCode, CompileError<'c>> {
    if divisions::kept_by(isa) && divisions::has_constant_division(&ctx.func) {
        return compile_keeping_divisions(ctx, isa, cache);
    }
    compile_as_is(ctx, isa, cache)
}

/// [`compile`] without looking at divisions: `ctx.func` as it is, by
/// `isa`, through `cache` when there is one.
pub fn compile_as_is<'c>(
    ctx: &'c mut Context,
    isa: &dyn TargetIsa,
    cache: Option<&CodeCache>,
) -> Result<&'c CompiledCode, CompileError<'c>> {
    match cache {
        Some(cache) => cache.compile(ctx, isa),
        None => ctx.compile(isa, &mut ControlPlane::default()),
    }
}

/// [`compile`] of a function whose divisions by constants are kept: the
/// mid-end first, the divisions restored, then the lowering by `isa`
/// without its mid-end ([`divisions`]'s algorithm). The cache's key is
/// then the optimized function's.
fn compile_keeping_divisions<'c>(
    ctx: &'c mut Context,
    isa: &dyn TargetIsa,
    cache: Option<&CodeCache>,
) -> Result<&'c CompiledCode, CompileError<'c>> {
    let lowering = divisions::optimize_keeping_divisions(ctx, isa)
        .and_then(|_| divisions::without_mid_end(isa));
    match lowering {
        Ok(lowering) => compile_as_is(ctx, &*lowering, cache),
        Err(inner) => Err(CompileError {
            inner,
            func: &ctx.func,
        }),
    }
}

/// Bytes of machine code Cranelift emits for `func`, if it compiles:
/// through `cache` when there is one.
pub fn code_size(func: &Function, isa: &dyn TargetIsa, cache: Option<&CodeCache>) -> Option<usize> {
    let mut ctx = Context::for_function(func.clone());
    compile(&mut ctx, isa, cache)
        .ok()
        .map(|code| code.code_buffer().len())
}

/// The [`CacheKvStore`] view of a shared cache (Cranelift asks for `&mut`).
struct Store<'a>(&'a CodeCache);

impl CacheKvStore for Store<'_> {
    fn get(&self, key: &[u8]) -> Option<Cow<'_, [u8]>> {
        let entries = self.0.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries.get(key).map(|entry| Cow::Owned(entry.to_vec()))
    }

    fn insert(&mut self, key: &[u8], val: Vec<u8>) {
        let mut entries = self.0.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries.entry(key.to_vec()).or_insert_with(|| val.into());
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use cranelift_codegen::settings::{self, Configurable};

    /// The aarch64 ISA the size levels compile with.
    pub(crate) fn aarch64() -> cranelift_codegen::isa::OwnedTargetIsa {
        aarch64_at("speed_and_size")
    }

    /// The aarch64 ISA at Cranelift's `opt_level` setting `opt_level`.
    pub(crate) fn aarch64_at(opt_level: &str) -> cranelift_codegen::isa::OwnedTargetIsa {
        let mut flags = settings::builder();
        flags.set("opt_level", opt_level).unwrap();
        cranelift_codegen::isa::lookup_by_name("aarch64")
            .unwrap()
            .finish(settings::Flags::new(flags))
            .unwrap()
    }

    fn parse(text: &str) -> Function {
        cranelift_reader::parse_functions(text).unwrap().remove(0)
    }

    /// A hit gives the code the function's own compilation gives, also when
    /// the entry came from a function calling another callee (relocations
    /// name callees through the function's own parameters).
    #[test]
    fn a_hit_is_the_compiled_code_with_its_own_names() {
        let isa = aarch64();
        let caller = |callee: &str| {
            parse(&format!(
                "function u0:0(i64) -> i64 {{
                    sig0 = (i64) -> i64
                    fn0 = {callee} sig0
                 block0(v0: i64):
                    v1 = call fn0(v0)
                    v2 = iconst.i64 7
                    v3 = iadd v1, v2
                    return v3
                 }}"
            ))
        };
        let cache = CodeCache::new();
        for callee in ["u0:1", "u0:2", "u0:1"] {
            let func = caller(callee);
            let mut plain = Context::for_function(func.clone());
            let expected = plain
                .compile(&*isa, &mut ControlPlane::default())
                .unwrap()
                .clone();
            let mut cached = Context::for_function(func);
            let got = cache.compile(&mut cached, &*isa).unwrap();
            assert_eq!(*got, expected);
        }
        assert_eq!(cache.stats(), CacheStats { hits: 2, misses: 1 });
    }

    /// Functions that differ in their body or in the ISA do not share code.
    #[test]
    fn other_bodies_and_isas_miss() {
        let cache = CodeCache::new();
        let f = |imm: i64| {
            parse(&format!(
                "function u0:0(i64) -> i64 {{
                 block0(v0: i64):
                    v1 = iconst.i64 {imm}
                    v2 = iadd v0, v1
                    return v2
                 }}"
            ))
        };
        let isa = aarch64();
        let x86 = cranelift_codegen::isa::lookup_by_name("x86_64")
            .unwrap()
            .finish(settings::Flags::new(settings::builder()))
            .unwrap();
        cache.code_size(&f(1), &*isa).unwrap();
        cache.code_size(&f(1 << 40), &*isa).unwrap();
        cache.code_size(&f(1), &*x86).unwrap();
        assert_eq!(cache.stats(), CacheStats { hits: 0, misses: 3 });
        assert_eq!(cache.code_size(&f(1), &*isa), code_size(&f(1), &*isa, None));
        assert_eq!(cache.stats().hits, 1);
    }
}
