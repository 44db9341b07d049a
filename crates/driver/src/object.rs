//! AOT compilation of ClifModules to ELF relocatable objects.
//!
//! One [`ClifModule`] becomes one object: cranelift-object with one section per
//! function (so the linker's identical-code folding works per function),
//! `is_pic=false`, plus an `.llvm_addrsig` section listing the symbols whose
//! address is significant, so that `ld.lld --icf=safe` may fold the others.
//!
//! `.llvm_addrsig` (sh_type `SHT_LLVM_ADDRSIG` = 0x6fff4c03, sh_link = the
//! `.symtab` index) holds ULEB128 symbol-table indices. Those indices exist
//! only once the object is written, so the object is written, read back to map
//! names to indices, given the section, written again (a section without
//! symbols does not move any symbol index — re-checked after the second write)
//! and its header's sh_link is patched in the bytes.
//!
//! Determinism: the output depends only on the module and the options; `-j N`
//! compiles modules on N threads and returns the objects in input order.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use anyhow::{anyhow, bail, Context as _, Result};
use cranelift_module::default_libcall_names;
use cranelift_object::{ObjectBuilder, ObjectModule};
use object::write::{Object, SectionId};
use object::{elf, Object as _, ObjectSection as _, ObjectSymbol as _, SectionFlags, SectionKind};
use parec_passes::clif_module::{ClifModule, Linkage};
use rayon::prelude::*;

use crate::clif_pipeline::{OptLevel, Pipeline};
use crate::clif_to_module::{Colocation, ModuleDefiner, RelocTargets};
use crate::target::Target;
use parec_passes::cgdata::Section as _;
use parec_passes::outline::global::OutlineTree;
use parec_passes::outline::{self, OutlineOptions, OutlineStats};

/// `SHT_LLVM_ADDRSIG`.
pub const SHT_LLVM_ADDRSIG: u32 = 0x6fff_4c03;
/// The name of the address-significance section.
pub const ADDRSIG_SECTION: &str = ".llvm_addrsig";

/// Options of an AOT build.
#[derive(Clone, Debug)]
pub struct ObjectOptions {
    pub target: Target,
    pub level: OptLevel,
    pub pipeline: Pipeline,
    /// Number of modules compiled in parallel (at least 1).
    pub jobs: usize,
}

/// One compiled module: its name and the ELF bytes.
#[derive(Clone, Debug)]
pub struct CompiledObject {
    pub name: String,
    pub bytes: Vec<u8>,
    /// What the machine outliner did, if it ran.
    pub outline: Option<OutlineStats>,
    /// The outliner's publication for the global prefix tree (empty if it
    /// did not run): see [`combined_outline_tree`].
    pub outline_tree: OutlineTree,
}

/// What the outliner of one module knows about the rest of the build.
#[derive(Clone, Debug, Default)]
pub struct OutlineContext {
    /// Local functions other modules define too ([`shared_functions`]).
    pub shared: BTreeSet<String>,
    /// The global prefix tree of an earlier round (paper §2.2), if any.
    pub global: Option<Arc<OutlineTree>>,
}

/// Compiles every module to an object, `opts.jobs` at a time, in input order.
pub fn compile_all(modules: Vec<ClifModule>, opts: &ObjectOptions) -> Result<Vec<CompiledObject>> {
    compile_all_with_tree(modules, opts, None)
}

/// The outliner's publications of `objects` merged into one prefix tree
/// (round 1 of a two-round build; store it in cgdata as a section).
pub fn combined_outline_tree(objects: &[CompiledObject]) -> OutlineTree {
    let mut tree = OutlineTree::default();
    for obj in objects {
        tree.merge(obj.outline_tree.clone());
    }
    tree
}

/// [`compile_all`], outlining against `global`, the prefix tree of an
/// earlier round (round 2 of a two-round build).
pub fn compile_all_with_tree(
    modules: Vec<ClifModule>,
    opts: &ObjectOptions,
    global: Option<Arc<OutlineTree>>,
) -> Result<Vec<CompiledObject>> {
    let context = OutlineContext {
        shared: shared_functions(&modules),
        global,
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.jobs.max(1))
        .build()
        .map_err(|e| anyhow!("cannot start {} compile threads: {e}", opts.jobs))?;
    let results: Vec<Result<CompiledObject>> = pool.install(|| {
        modules
            .into_par_iter()
            .map(|m| compile_module_in(m, opts, &context))
            .collect()
    });
    results.into_iter().collect()
}

/// Names of the local functions defined by more than one module: generic
/// instances each module compiles for itself. The linker folds their copies
/// as long as the outliner treats every copy alike.
pub fn shared_functions(modules: &[ClifModule]) -> BTreeSet<String> {
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for m in modules {
        for def in &m.functions {
            if let Some(sym) = m.symbols.get(def.symbol as usize) {
                if sym.linkage == Linkage::Local {
                    *seen.entry(sym.name.as_str()).or_default() += 1;
                }
            }
        }
    }
    seen.into_iter()
        .filter(|&(_, n)| n > 1)
        .map(|(name, _)| name.to_string())
        .collect()
}

/// Runs the pipeline on `module` and compiles it to an ELF object.
pub fn compile_module(module: ClifModule, opts: &ObjectOptions) -> Result<CompiledObject> {
    compile_module_in(module, opts, &OutlineContext::default())
}

/// [`compile_module`] as part of a build described by `context`.
pub fn compile_module_in(
    mut module: ClifModule,
    opts: &ObjectOptions,
    context: &OutlineContext,
) -> Result<CompiledObject> {
    let isa = opts.target.isa(opts.level)?;
    opts.pipeline
        .run(&mut module, Some(&*isa))
        .map_err(|e| anyhow!("module `{}`: {e}", module.name))?;
    let mut builder = ObjectBuilder::new(
        isa,
        module.name.as_bytes().to_vec(),
        default_libcall_names(),
    )
    .map_err(|e| anyhow!("cannot create object for `{}`: {e}", module.name))?;
    builder.per_function_section(true);
    let mut obj = ObjectModule::new(builder);
    let outlines = opts.pipeline.outlines() && opts.target == Target::Aarch64;
    let mut outline_stats = None;
    let mut outline_tree = OutlineTree::default();
    let address_significant = {
        let mut definer = ModuleDefiner::new(&mut obj, Colocation::AsGiven);
        if outlines {
            let (stats, tree) = define_outlined(&mut definer, &module, context)
                .with_context(|| format!("in module `{}`", module.name))?;
            outline_stats = Some(stats);
            outline_tree = tree;
        } else {
            definer
                .declare_and_define(&module)
                .with_context(|| format!("in module `{}`", module.name))?;
        }
        definer
            .address_significant()
            .iter()
            .cloned()
            .collect::<Vec<_>>()
    };
    let product = obj.finish();
    let bytes = write_with_addrsig(product.object, &address_significant)
        .with_context(|| format!("cannot write the object of module `{}`", module.name))?;
    Ok(CompiledObject {
        name: module.name.clone(),
        bytes,
        outline: outline_stats,
        outline_tree,
    })
}

/// The machine code of every function of `module` after the pipeline, as
/// the outliner sees it, and the names of its relocation targets (for tests
/// and reports; nothing is written).
pub fn machine_functions(
    module: ClifModule,
    opts: &ObjectOptions,
) -> Result<(Vec<outline::MachFunction>, Vec<String>)> {
    machine_functions_with(module, opts, true)
}

/// [`machine_functions`], choosing Cranelift's `machine_code_cfg_info`.
pub fn machine_functions_with(
    mut module: ClifModule,
    opts: &ObjectOptions,
    cfg_info: bool,
) -> Result<(Vec<outline::MachFunction>, Vec<String>)> {
    let isa = opts.target.isa_with_cfg_info(opts.level, cfg_info)?;
    opts.pipeline
        .run(&mut module, Some(&*isa))
        .map_err(|e| anyhow!("module `{}`: {e}", module.name))?;
    let builder = ObjectBuilder::new(
        isa,
        module.name.as_bytes().to_vec(),
        default_libcall_names(),
    )
    .map_err(|e| anyhow!("cannot create object for `{}`: {e}", module.name))?;
    let mut obj = ObjectModule::new(builder);
    let mut definer = ModuleDefiner::new(&mut obj, Colocation::AsGiven);
    definer.declare(&module)?;
    let mut targets = RelocTargets::default();
    let compiled = definer.compile_functions(&module, &mut targets, &BTreeSet::new())?;
    Ok((
        compiled.into_iter().map(|c| c.code).collect(),
        targets.names,
    ))
}

/// Compiles every function of `module`, runs the machine outliner
/// (`parec_passes::outline`) across them, and defines the results.
fn define_outlined(
    definer: &mut ModuleDefiner<'_, ObjectModule>,
    module: &ClifModule,
    context: &OutlineContext,
) -> Result<(OutlineStats, OutlineTree)> {
    definer.declare(module)?;
    let mut targets = RelocTargets::default();
    let compiled = definer.compile_functions(module, &mut targets, &context.shared)?;
    let functions: Vec<_> = compiled.iter().map(|c| c.code.clone()).collect();
    let options = OutlineOptions {
        global: context.global.clone(),
        ..OutlineOptions::default()
    };
    let result = outline::outline_module(&functions, &targets.names, &options);
    definer.define_outlined(&compiled, &result, &targets)?;
    Ok((result.stats, result.published))
}

/// The outliner's statistics per module and in total, one line each
/// (`parec build --outline-stats`).
pub fn outline_report(objects: &[CompiledObject]) -> String {
    let mut total = OutlineStats::default();
    let mut text = String::new();
    for obj in objects {
        match &obj.outline {
            Some(stats) => {
                text.push_str(&format!("outline: {}: {stats}\n", obj.name));
                total.accumulate(stats);
            }
            None => text.push_str(&format!("outline: {}: not run\n", obj.name)),
        }
    }
    text.push_str(&format!("outline: total: {total}\n"));
    text
}

/// Writes `object` with an `.llvm_addrsig` section listing `names` (those
/// present in its symbol table, in symbol-index order).
pub fn write_with_addrsig(mut object: Object<'static>, names: &[String]) -> Result<Vec<u8>> {
    let first = object.write().map_err(|e| anyhow!("{e}"))?;
    let indices = symbol_indices(&first)?;
    let mut significant: Vec<u32> = names
        .iter()
        .filter_map(|n| indices.get(n.as_bytes()).copied())
        .collect();
    significant.sort_unstable();
    significant.dedup();

    let section = add_addrsig_section(&mut object);
    let mut contents = Vec::new();
    for index in &significant {
        write_uleb128(&mut contents, u64::from(*index));
    }
    object.set_section_data(section, contents, 1);
    let mut bytes = object.write().map_err(|e| anyhow!("{e}"))?;

    if symbol_indices(&bytes)? != indices {
        bail!("adding {ADDRSIG_SECTION} changed the symbol table");
    }
    patch_addrsig_link(&mut bytes)?;
    Ok(bytes)
}

fn add_addrsig_section(object: &mut Object<'static>) -> SectionId {
    let id = object.add_section(
        Vec::new(),
        ADDRSIG_SECTION.as_bytes().to_vec(),
        SectionKind::Elf(SHT_LLVM_ADDRSIG),
    );
    // Like LLVM: the linker consumes the section and never copies it to the output.
    object.section_mut(id).flags = SectionFlags::Elf {
        sh_flags: u64::from(elf::SHF_EXCLUDE),
    };
    id
}

/// Symbol name → ELF symbol-table index of every named symbol.
fn symbol_indices(bytes: &[u8]) -> Result<HashMap<Vec<u8>, u32>> {
    let file =
        object::File::parse(bytes).map_err(|e| anyhow!("cannot read back the object: {e}"))?;
    let mut map = HashMap::new();
    for sym in file.symbols() {
        let name = sym
            .name_bytes()
            .map_err(|e| anyhow!("bad symbol name: {e}"))?;
        if !name.is_empty() {
            map.insert(name.to_vec(), sym.index().0 as u32);
        }
    }
    Ok(map)
}

/// Sets the `sh_link` of the `.llvm_addrsig` section header to the `.symtab` index.
fn patch_addrsig_link(bytes: &mut [u8]) -> Result<()> {
    let (header_offset, symtab_index) = {
        let file = object::read::elf::ElfFile64::<object::Endianness>::parse(&*bytes)
            .map_err(|e| anyhow!("cannot read back the object: {e}"))?;
        if file.endian() != object::Endianness::Little {
            bail!("only little-endian objects are supported");
        }
        let symtab = file
            .sections()
            .find(|s| s.name() == Ok(".symtab"))
            .ok_or_else(|| anyhow!("the object has no .symtab"))?;
        let addrsig = file
            .sections()
            .find(|s| s.name() == Ok(ADDRSIG_SECTION))
            .ok_or_else(|| anyhow!("the object has no {ADDRSIG_SECTION}"))?;
        let e_shoff = file.elf_header().e_shoff.get(object::Endianness::Little);
        let e_shentsize = u64::from(
            file.elf_header()
                .e_shentsize
                .get(object::Endianness::Little),
        );
        (
            e_shoff + addrsig.index().0 as u64 * e_shentsize,
            symtab.index().0 as u32,
        )
    };
    // Elf64_Shdr: sh_name u32, sh_type u32, sh_flags u64, sh_addr u64, sh_offset u64, sh_size u64, sh_link u32.
    let at = usize::try_from(header_offset + 40)
        .map_err(|_| anyhow!("section header offset overflows"))?;
    let field = bytes
        .get_mut(at..at + 4)
        .ok_or_else(|| anyhow!("section header out of range"))?;
    field.copy_from_slice(&symtab_index.to_le_bytes());
    Ok(())
}

fn write_uleb128(out: &mut Vec<u8>, mut value: u64) {
    loop {
        let byte = (value & 0x7f) as u8;
        value >>= 7;
        if value == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

/// Decodes the ULEB128 indices of an `.llvm_addrsig` section (for checks and tests).
pub fn read_uleb128_list(mut data: &[u8]) -> Result<Vec<u64>> {
    let mut out = Vec::new();
    while !data.is_empty() {
        let mut value = 0u64;
        let mut shift = 0;
        loop {
            let (&byte, rest) = data
                .split_first()
                .ok_or_else(|| anyhow!("truncated ULEB128"))?;
            data = rest;
            if shift >= 64 {
                bail!("ULEB128 value too large");
            }
            value |= u64::from(byte & 0x7f) << shift;
            shift += 7;
            if byte & 0x80 == 0 {
                break;
            }
        }
        out.push(value);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uleb128_round_trip() {
        let values = [0u64, 1, 127, 128, 300, 1 << 40];
        let mut bytes = Vec::new();
        for v in values {
            write_uleb128(&mut bytes, v);
        }
        assert_eq!(read_uleb128_list(&bytes).unwrap(), values);
    }
}
