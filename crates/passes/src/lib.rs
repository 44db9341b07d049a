//! parec's size passes, for any producer of CLIF.
//!
//! The passes know Cranelift and nothing else: not Pare, not parec's driver.
//! Their unit of work is a [`clif_module::ClifModule`] — the functions and
//! data of one compilation unit with a symbol table naming everything they
//! refer to — so any front end that can describe its output that way can use
//! them, before handing the functions to Cranelift.
//!
//! | pass | works on | what it does |
//! |------|----------|--------------|
//! | [`inline`] | a CLIF module | inlining bottom-up over the call graph ([`callgraph`]) with Cranelift's inliner: at `-Oz` when measured machine code does not grow (a callee no larger than its call, or a local callee inlined everywhere and deleted), at `-O2` by a speed policy |
//! | [`whole_program`] | CLIF modules | links a program's modules into one, for whole-program compilation |
//! | [`gvn`] | one CLIF function | optimistic global value numbering with PRE and LICM; [`gvn::run_for_size`] keeps a rewrite only if the function's machine code does not grow |
//! | [`combine`] | one CLIF function | instruction combining, the rules Cranelift's e-graph lacks: address constants into memory offsets, logical shifts written through a wider type, rotates, extending loads |
//! | [`merge`] | a CLIF module | stable-hash merging of functions that differ only in constants: thunks and `.Tgm` bodies that the linker folds; whole-program via a summary |
//! | [`fmerge`] | a CLIF module | similar-function merging: MinHash/LSH candidate search, per-block alignment, one merged function with a function-identifier parameter; a merge is kept only if its measured machine code shrinks |
//! | [`machine`] | aarch64 machine code | the layer the machine passes share: decoding, lifting to instructions with symbolic targets, liveness, layout and relocations, loops |
//! | [`traps`] | a module's aarch64 machine code | shared trap paths: a check's `udf` becomes a branch to one program-wide path per kind |
//! | [`peephole`] | a module's aarch64 machine code | rewrites of what Cranelift's lowering leaves: `adr` for `adrp`+`add` (tiny code model), repeated computations, boolean tests as `cbz`/`cbnz`, branches on the compare, extensions of bytes |
//! | [`copyprop`] | a module's aarch64 machine code | machine copy propagation: a move's source definer writes its destination, or its one reader reads its source |
//! | [`frame`] | a module's aarch64 machine code | frame-pointer omission: a `mov x29, sp` nothing reads goes, and `x30` is saved beside an odd callee-saved register instead of `x29` |
//! | [`epilogue`] | a module's aarch64 machine code | one epilogue per function: a return whose epilogue another return has becomes a branch to it |
//! | [`outline`] | a module's aarch64 machine code | the machine outliner, local and against a global prefix tree |
//! | [`cgdata`] | files | the versioned, checksummed container that carries merge summaries and outline trees between build rounds |
//! | [`profile`] | CLIF modules, files | execution profiles: block counters, stable function keys, the hot and cold functions a build's passes read ([`heat`]) |
//!
//! The passes that decide by measured machine code (inlining, GVN's size
//! guard, similar-function merging) compile through the module's
//! [`code_cache`] when it has one ([`clif_module::ClifModule::set_code_cache`]):
//! a function compiled once is not compiled again by a later pass or by the
//! producer's code generation, which may use the same cache.
//!
//! Every pass reports its decisions as [`remark::Remark`]s, one per decision
//! about a function (docs/REMARKS.md).
//!
//! # Using the passes
//!
//! A module is built from CLIF functions whose external names are
//! `UserExternalName { namespace: 0, index: s }` with `s` an index into the
//! module's symbol table (see [`clif_module`]). The CLIF passes then rewrite
//! it in place:
//!
//! ```
//! use cranelift_codegen::ir::UserFuncName;
//! use parec_passes::clif_module::{ClifModule, FunctionDef, Linkage, SymbolKind};
//! use parec_passes::{gvn, merge};
//!
//! // Two functions that differ only in a constant, written as CLIF text.
//! let text = "
//!     function u0:0(i64) -> i64 tail {
//!     block0(v0: i64):
//!         v1 = iconst.i64 3
//!         v2 = imul v0, v1
//!         v3 = iadd v2, v1
//!         v4 = imul v3, v3
//!         v5 = iadd v4, v0
//!         return v5
//!     }
//!     function u0:1(i64) -> i64 tail {
//!     block0(v0: i64):
//!         v1 = iconst.i64 5
//!         v2 = imul v0, v1
//!         v3 = iadd v2, v1
//!         v4 = imul v3, v3
//!         v5 = iadd v4, v0
//!         return v5
//!     }";
//! let mut module = ClifModule::new("example");
//! for (i, mut func) in cranelift_reader::parse_functions(text).unwrap().into_iter().enumerate() {
//!     let symbol = module.declare(
//!         &format!("f{i}"),
//!         SymbolKind::Function(func.signature.clone()),
//!         Linkage::Export,
//!     );
//!     func.name = ClifModule::func_name(symbol);
//!     module.functions.push(FunctionDef { symbol, func });
//! }
//!
//! // GVN, function by function (with a target ISA, prefer `gvn::run_for_size`).
//! for def in &mut module.functions {
//!     gvn::run(&mut def.func);
//! }
//! // Merging within the module (no summary of other modules: `None`).
//! let report = merge::run(&mut module, None, &merge::MergeOptions::default());
//! assert_eq!(report.stats.merged, 2);
//! // `f0` and `f1` are now thunks passing 3 and 5 to `.Tgm` bodies that
//! // ld.lld's identical-code folding keeps one copy of.
//! assert!(module.symbols.iter().any(|s| s.name.ends_with(merge::BODY_SUFFIX)));
//! ```
//!
//! Machine code comes next: compile each function with Cranelift for
//! aarch64 (`machine_code_cfg_info` on, so block starts are recorded), give
//! [`outline::outline_module`] the code as [`machine::MachFunction`]s with
//! relocations by symbol, and define the functions it returns — plus the
//! `OUTLINED_FUNCTION_*` functions it created — from bytes
//! (`cranelift_module::Module::define_function_bytes`). parec's driver does
//! exactly this in its `codegen` module.
//!
//! For a whole program built in two rounds, every module's
//! [`merge::analyze`] summary and [`outline::OutlineResult::published`] tree
//! are merged ([`cgdata::Section::merge`]) and given back to each module's
//! [`merge::run`] and [`outline::OutlineOptions::global`]; docs/DESIGN.md
//! describes the protocol.
//!
//! Every pass states its algorithm, invariants, cost and sources in its
//! module documentation; docs/DESIGN.md has the full references.

pub mod callgraph;
pub mod cgdata;
pub mod clif_module;
pub mod code_cache;
pub mod combine;
pub mod copyprop;
pub mod divisions;
pub mod epilogue;
pub mod fmerge;
pub mod frame;
pub mod guard;
pub mod gvn;
pub mod heat;
pub mod ifconv;
pub mod inline;
pub mod machine;
pub mod merge;
pub mod mid_end;
pub mod outline;
pub mod peephole;
pub mod price;
pub mod profile;
pub mod remark;
pub mod sibcall;
pub mod size_model;
pub mod switches;
pub mod traps;
pub mod whole_program;
