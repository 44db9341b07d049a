//! Defining [`ClifModule`]s into a `cranelift_module::Module` (JIT or object).
//!
//! A ClifModule names everything through its own symbol table
//! (`UserExternalName { namespace: 0, index: symbol }`); cranelift-module
//! expects `namespace 0 = FuncId`, `namespace 1 = DataId`. [`ModuleDefiner`]
//! declares every symbol *by name* in the target module, so several
//! ClifModules can be defined into one Module (the JIT gets the whole program
//! plus the runtime) and an import in one is satisfied by a definition in
//! another; then it rewrites each function's external names to the
//! cranelift-module ids and compiles it with `Module::define_function`.
//!
//! Invariants checked before anything is declared (so that no malformed input
//! reaches cranelift-module, which panics on some of them):
//! - every `Local`/`Export` symbol has exactly one definition of its kind in
//!   its module and no `Import` symbol has one;
//! - every external name in a function and every data relocation refers to an
//!   existing symbol; data alignments are powers of two.
//!
//! The CLIF passes ([`crate::pipeline`]) run on the ClifModule before it
//! comes here; this module only translates and compiles. For the JIT it
//! compiles and defines each function ([`ModuleDefiner::define`]); for
//! objects it compiles every function to machine code first
//! ([`ModuleDefiner::compile_functions`]), so the machine passes can rewrite
//! it, and defines the result from bytes
//! ([`ModuleDefiner::define_machine_code`]).

use std::collections::{BTreeSet, HashMap};

use anyhow::{anyhow, bail, Context as _, Result};
use cranelift_codegen::binemit::Reloc;
use cranelift_codegen::ir::{self, ExternalName, GlobalValueData, UserExternalName};
use cranelift_codegen::Context;
use cranelift_module::{
    DataDescription, DataId, FuncId, FuncOrDataId, Linkage as ModLinkage, Module,
    ModuleDeclarations, ModuleReloc, ModuleRelocTarget,
};
use cranelift_object::ObjectProduct;
use parec_passes::clif_module::{ClifModule, Linkage, SymbolKind, SYMBOL_NAMESPACE};
use parec_passes::machine;
use parec_passes::mid_end;
use parec_passes::outline;

/// How references to symbols that no defined module provides are compiled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Colocation {
    /// As the ClifModule says (AOT: a static non-PIE link puts everything in range).
    AsGiven,
    /// References to imports that stay undefined in the Module become
    /// non-colocated (JIT: libc may be further than a PC-relative reach).
    FarImports,
}

/// Declares and defines ClifModules into one cranelift-module [`Module`].
pub struct ModuleDefiner<'m, M: Module> {
    module: &'m mut M,
    colocation: Colocation,
    /// Names of symbols whose address is taken by a non-call relocation in
    /// the code or data defined so far (the `.llvm_addrsig` set).
    address_significant: BTreeSet<String>,
}

impl<'m, M: Module> ModuleDefiner<'m, M> {
    pub fn new(module: &'m mut M, colocation: Colocation) -> Self {
        ModuleDefiner {
            module,
            colocation,
            address_significant: BTreeSet::new(),
        }
    }

    /// Declares every symbol of `clif` by name. Call this for every ClifModule
    /// before defining any, so that imports meet their definitions.
    pub fn declare(&mut self, clif: &ClifModule) -> Result<()> {
        check_module(clif)?;
        for sym in &clif.symbols {
            let linkage = map_linkage(sym.linkage);
            match &sym.kind {
                SymbolKind::Function(sig) => {
                    self.module
                        .declare_function(&sym.name, linkage, sig)
                        .with_context(|| format!("cannot declare function `{}`", sym.name))?;
                }
                SymbolKind::Data { writable } => {
                    self.module
                        .declare_data(&sym.name, linkage, *writable, false)
                        .with_context(|| format!("cannot declare data `{}`", sym.name))?;
                }
            }
        }
        Ok(())
    }

    /// Defines the data objects and compiles the functions of `clif`, which
    /// must have been [`declare`](Self::declare)d.
    pub fn define(&mut self, clif: &ClifModule) -> Result<()> {
        let ids = self.define_data_objects(clif)?;
        let mut ctx = self.module.make_context();
        for def in &clif.functions {
            let id = self.prepare(clif, &ids, def, &mut ctx)?;
            let name = &clif.symbols[def.symbol as usize].name;
            self.module.define_function(id, &mut ctx).map_err(|e| {
                anyhow!(
                    "cannot compile function `{name}`: {}",
                    describe_module_error(&e)
                )
            })?;
            let names = self.address_significant_of(&ctx)?;
            self.address_significant.extend(names);
        }
        self.define_raw_functions(clif)
    }

    /// Defines the functions `clif` gives as machine code
    /// ([`ClifModule::raw_functions`]), which must have been
    /// [`declare`](Self::declare)d.
    pub fn define_raw_functions(&mut self, clif: &ClifModule) -> Result<()> {
        let ids = self.symbol_ids(clif)?;
        for raw in &clif.raw_functions {
            let name = &clif.symbols[raw.symbol as usize].name;
            let FuncOrDataId::Func(id) = ids[raw.symbol as usize] else {
                bail!("`{name}` is defined as a function but declared as data");
            };
            let mut relocs = Vec::with_capacity(raw.relocs.len());
            for r in &raw.relocs {
                let target = &clif.symbols[r.target as usize].name;
                if !is_call_reloc(r.kind) {
                    self.address_significant.insert(target.clone());
                }
                let target = module_name(ids[r.target as usize]);
                relocs.push(ModuleReloc {
                    offset: r.offset,
                    kind: r.kind,
                    name: ModuleRelocTarget::user(target.namespace, target.index),
                    addend: r.addend,
                });
            }
            self.module
                .define_function_bytes(id, u64::from(raw.align), &raw.bytes, &relocs)
                .map_err(|e| anyhow!("cannot define `{name}`: {}", describe_module_error(&e)))?;
        }
        Ok(())
    }

    /// Defines the data objects of `clif`; returns the ids of its symbols.
    /// Defines the data objects of `clif`, which must have been
    /// [`declare`](Self::declare)d (functions come from machine code:
    /// [`Self::define_machine_code`]).
    pub fn define_data_only(&mut self, clif: &ClifModule) -> Result<()> {
        self.define_data_objects(clif).map(|_| ())
    }

    /// Checks that each of `compiled`, made in another module where the
    /// same ClifModule was declared, has the same id here: the name its id
    /// is declared under is its own.
    pub fn check_ids(&self, compiled: &[CompiledFunction]) -> Result<()> {
        let decls = self.module.declarations();
        for c in compiled {
            let declared = decls.get_function_decl(c.id).linkage_name(c.id);
            if declared != c.code.name {
                bail!(
                    "function `{}` has the id of `{declared}` in this object",
                    c.code.name
                );
            }
        }
        Ok(())
    }

    fn define_data_objects(&mut self, clif: &ClifModule) -> Result<Vec<FuncOrDataId>> {
        let ids = self.symbol_ids(clif)?;
        for data in &clif.data {
            self.define_data(clif, &ids, data)?;
        }
        Ok(ids)
    }

    /// Puts `def` into `ctx` with module ids for names; returns its id.
    fn prepare(
        &self,
        clif: &ClifModule,
        ids: &[FuncOrDataId],
        def: &parec_passes::clif_module::FunctionDef,
        ctx: &mut Context,
    ) -> Result<FuncId> {
        let name = &clif.symbols[def.symbol as usize].name;
        let FuncOrDataId::Func(id) = ids[def.symbol as usize] else {
            bail!("`{name}` is defined as a function but declared as data");
        };
        ctx.clear();
        ctx.func = def.func.clone();
        self.remap_names(&mut ctx.func, ids)?;
        Ok(id)
    }

    /// Defines the data objects of `clif` and compiles its functions
    /// without defining them, for the machine-code outliner. Relocation
    /// targets are interned in `targets`.
    /// `shared` names the functions other modules define identically
    /// (see [`machine::MachFunction::shared`]).
    pub fn compile_functions(
        &mut self,
        clif: &ClifModule,
        targets: &mut RelocTargets,
        shared: &BTreeSet<String>,
    ) -> Result<Vec<CompiledFunction>> {
        self.define_data_only(clif)?;
        let lowered = self.lower_functions(clif, targets, shared, None)?;
        Ok(lowered.into_iter().map(|l| self.take(l)).collect())
    }

    /// Compiles the functions of `clif`, whose data objects
    /// [`ModuleDefiner::define_data_only`] defined, without defining them:
    /// as [`parec_passes::code_cache::compile`] does without `lowering`,
    /// else by `lowering`. Nothing is recorded until a function is
    /// [taken](ModuleDefiner::take).
    pub fn lower_functions(
        &mut self,
        clif: &ClifModule,
        targets: &mut RelocTargets,
        shared: &BTreeSet<String>,
        lowering: Option<(&mid_end::Lowerer<'_>, mid_end::Lowering)>,
    ) -> Result<Vec<LoweredFunction>> {
        let ids = self.symbol_ids(clif)?;
        let mut ctx = self.module.make_context();
        let mut out = Vec::with_capacity(clif.functions.len());
        for def in &clif.functions {
            let id = self.prepare(clif, &ids, def, &mut ctx)?;
            let name = clif.symbols[def.symbol as usize].name.clone();
            let cache = clif.code_cache();
            let fail = |e: cranelift_codegen::CodegenError| {
                anyhow!(
                    "cannot compile function `{name}`: {}",
                    describe_module_error(&cranelift_module::ModuleError::Compilation(e))
                )
            };
            let compiled = match lowering {
                None => {
                    parec_passes::code_cache::compile(&mut ctx, self.module.isa(), cache.as_deref())
                }
                Some((lowerer, lowering)) => {
                    // The final code generation lowers each function by
                    // `Plain` once: a function other modules define too is
                    // where the cache saves lowerings; for any other its
                    // key and entry are pure cost (`parec_passes::mid_end`).
                    let cache = match lowering {
                        mid_end::Lowering::Plain if !shared.contains(&name) => None,
                        _ => cache.as_deref(),
                    };
                    lowerer.compile(&mut ctx, lowering, cache)
                }
            };
            compiled.map_err(|e| fail(e.inner))?;
            let address_significant = self.address_significant_of(&ctx)?;
            let compiled = ctx
                .compiled_code()
                .ok_or_else(|| anyhow!("function `{name}` was not compiled"))?;
            let buffer = &compiled.buffer;
            let relocs = buffer
                .relocs()
                .iter()
                .map(|r| {
                    let module_reloc = ModuleReloc::from_mach_reloc(r, &ctx.func, id);
                    let target = targets.intern(&module_reloc.name, self.module.declarations());
                    machine::MachReloc {
                        offset: r.offset,
                        kind: r.kind.into(),
                        target,
                        addend: r.addend,
                    }
                })
                .collect();
            let code = machine::MachFunction {
                name: name.clone(),
                bytes: buffer.data().to_vec(),
                alignment: buffer.alignment,
                bb_starts: compiled.bb_starts.clone(),
                relocs,
                traps: buffer.traps().iter().map(|t| (t.offset, t.code)).collect(),
                call_sites: buffer.call_sites().map(|c| c.ret_addr).collect(),
                shared: shared.contains(&name),
            };
            out.push(LoweredFunction {
                function: CompiledFunction { id, code },
                address_significant,
            });
        }
        Ok(out)
    }

    /// The compiled function of `lowered`, its address-significant
    /// targets recorded: the lowering the object will hold.
    pub fn take(&mut self, lowered: LoweredFunction) -> CompiledFunction {
        self.address_significant.extend(lowered.address_significant);
        lowered.function
    }

    /// Defines the module's functions from machine code: `functions[i]` is
    /// the code of `compiled[i]` after the machine passes, and `outlined`
    /// are the functions the outliner created (declared here: local, one
    /// section each, referred to by [`machine::RelocTarget::Outlined`]).
    /// Returns the relocations of kinds Cranelift's object writer does not
    /// know, for [`add_parec_relocs`] to add once the object is finished.
    pub fn define_machine_code(
        &mut self,
        compiled: &[CompiledFunction],
        functions: &[machine::lift::Emitted],
        outlined: &[outline::OutlinedFunction],
        targets: &RelocTargets,
    ) -> Result<Vec<ParecReloc>> {
        let sig = ir::Signature::new(self.module.isa().default_call_conv());
        let mut outlined_ids = Vec::with_capacity(outlined.len());
        for f in outlined {
            let id = self
                .module
                .declare_function(&f.name, ModLinkage::Local, &sig)
                .with_context(|| format!("cannot declare outlined function `{}`", f.name))?;
            outlined_ids.push(id);
        }
        let mut parec_relocs = Vec::new();
        let bodies = outlined.iter().zip(&outlined_ids);
        let functions = compiled.iter().map(|c| c.id).zip(functions);
        for (id, code) in functions.chain(bodies.map(|(f, id)| (*id, &f.code))) {
            let mut relocs: Vec<ModuleReloc> = Vec::with_capacity(code.relocs.len());
            for r in &code.relocs {
                let name = match r.target {
                    machine::RelocTarget::Symbol(s) => targets.targets[s as usize].clone(),
                    machine::RelocTarget::Outlined(o) => {
                        ModuleRelocTarget::user(0, outlined_ids[o as usize].as_u32())
                    }
                    machine::RelocTarget::FunctionOffset(o) => {
                        ModuleRelocTarget::FunctionOffset(id, o)
                    }
                };
                match r.kind {
                    machine::RelocKind::Cranelift(kind) => relocs.push(ModuleReloc {
                        offset: r.offset,
                        kind,
                        name,
                        addend: r.addend,
                    }),
                    kind => parec_relocs.push(ParecReloc {
                        function: id,
                        offset: r.offset,
                        kind,
                        name,
                        addend: r.addend,
                    }),
                }
            }
            self.module
                .define_function_bytes(id, u64::from(code.alignment), &code.bytes, &relocs)
                .map_err(|e| anyhow!("cannot define function: {}", describe_module_error(&e)))?;
        }
        Ok(parec_relocs)
    }

    /// The relocation target of function `name`, declared as an import if
    /// the module does not know it yet (the shared trap paths, which code
    /// refers to only after the machine passes).
    pub fn function_target(
        &mut self,
        name: &str,
        targets: &mut RelocTargets,
    ) -> Result<machine::RelocTarget> {
        let id = match self.module.get_name(name) {
            Some(FuncOrDataId::Func(id)) => id,
            Some(FuncOrDataId::Data(_)) => bail!("`{name}` is data, not a function"),
            None => {
                let sig = ir::Signature::new(self.module.isa().default_call_conv());
                self.module
                    .declare_function(name, ModLinkage::Import, &sig)
                    .with_context(|| format!("cannot declare function `{name}`"))?
            }
        };
        let target = ModuleRelocTarget::user(0, id.as_u32());
        Ok(targets.intern(&target, self.module.declarations()))
    }

    /// Names of symbols referenced other than by a direct call or jump.
    pub fn address_significant(&self) -> &BTreeSet<String> {
        &self.address_significant
    }

    /// The cranelift-module id of each symbol of `clif`, by symbol index.
    fn symbol_ids(&self, clif: &ClifModule) -> Result<Vec<FuncOrDataId>> {
        clif.symbols
            .iter()
            .map(|s| {
                self.module
                    .get_name(&s.name)
                    .ok_or_else(|| anyhow!("symbol `{}` was not declared", s.name))
            })
            .collect()
    }

    fn define_data(
        &mut self,
        clif: &ClifModule,
        ids: &[FuncOrDataId],
        data: &parec_passes::clif_module::DataDef,
    ) -> Result<()> {
        let name = &clif.symbols[data.symbol as usize].name;
        let FuncOrDataId::Data(id) = ids[data.symbol as usize] else {
            bail!("`{name}` is defined as data but declared as a function");
        };
        let mut desc = DataDescription::new();
        let writable = matches!(
            clif.symbols[data.symbol as usize].kind,
            SymbolKind::Data { writable: true }
        );
        if writable && data.relocs.is_empty() && data.bytes.iter().all(|&b| b == 0) {
            desc.define_zeroinit(data.bytes.len());
        } else {
            desc.define(data.bytes.clone().into_boxed_slice());
        }
        desc.set_align(data.align.max(1));
        for reloc in &data.relocs {
            let target = &clif.symbols[reloc.target as usize];
            // Every data relocation stores an address: the target is address-significant.
            self.address_significant.insert(target.name.clone());
            match ids[reloc.target as usize] {
                FuncOrDataId::Func(f) => {
                    if reloc.addend != 0 {
                        bail!(
                            "data `{name}`: a function address (`{}`) cannot have an addend",
                            target.name
                        );
                    }
                    let fref = self.module.declare_func_in_data(f, &mut desc);
                    desc.write_function_addr(reloc.offset, fref);
                }
                FuncOrDataId::Data(d) => {
                    let gv = self.module.declare_data_in_data(d, &mut desc);
                    desc.write_data_addr(reloc.offset, gv, reloc.addend);
                }
            }
        }
        self.module
            .define_data(id, &desc)
            .map_err(|e| anyhow!("cannot define data `{name}`: {}", describe_module_error(&e)))
    }

    /// Rewrites `func`'s external names from ClifModule symbols to
    /// cranelift-module ids, and applies the colocation policy.
    fn remap_names(&self, func: &mut ir::Function, ids: &[FuncOrDataId]) -> Result<()> {
        let refs: Vec<(ir::UserExternalNameRef, UserExternalName)> = func
            .params
            .user_named_funcs()
            .iter()
            .map(|(r, n)| (r, n.clone()))
            .collect();
        for (r, name) in refs {
            if name.namespace != SYMBOL_NAMESPACE {
                bail!("external name {name} is not in the symbol namespace");
            }
            let id = ids
                .get(name.index as usize)
                .ok_or_else(|| anyhow!("external name {name} refers to no symbol"))?;
            func.params.reset_user_func_name(r, module_name(*id));
        }
        if let ir::UserFuncName::User(own) = &func.name {
            if let Some(id) = ids.get(own.index as usize) {
                func.name = ir::UserFuncName::User(module_name(*id));
            }
        }
        if self.colocation == Colocation::FarImports {
            self.make_imports_far(func);
        }
        Ok(())
    }

    /// Marks references to symbols without a definition in the Module as not colocated.
    fn make_imports_far(&self, func: &mut ir::Function) {
        let decls = self.module.declarations();
        let is_import = |func: &ir::Function, name: &ExternalName| -> bool {
            let ExternalName::User(r) = name else {
                return false;
            };
            let u = &func.params.user_named_funcs()[*r];
            match u.namespace {
                0 => {
                    decls
                        .get_function_decl(cranelift_module::FuncId::from_u32(u.index))
                        .linkage
                        == ModLinkage::Import
                }
                _ => {
                    decls
                        .get_data_decl(cranelift_module::DataId::from_u32(u.index))
                        .linkage
                        == ModLinkage::Import
                }
            }
        };
        let far_funcs: Vec<ir::FuncRef> = func
            .dfg
            .ext_funcs
            .iter()
            .filter(|(_, d)| is_import(func, &d.name))
            .map(|(f, _)| f)
            .collect();
        for f in far_funcs {
            func.dfg.ext_funcs[f].colocated = false;
        }
        let far_globals: Vec<ir::GlobalValue> = func
            .global_values
            .iter()
            .filter(|(_, gv)| matches!(gv, GlobalValueData::Symbol { name, .. } if is_import(func, name)))
            .map(|(g, _)| g)
            .collect();
        for g in far_globals {
            if let GlobalValueData::Symbol { colocated, .. } = &mut func.global_values[g] {
                *colocated = false;
            }
        }
    }

    /// The address-significant targets of a compiled function's
    /// relocations.
    fn address_significant_of(&self, ctx: &Context) -> Result<Vec<String>> {
        let compiled = ctx
            .compiled_code()
            .ok_or_else(|| anyhow!("function was not compiled"))?;
        let mut names = Vec::new();
        for reloc in compiled.buffer.relocs() {
            if is_call_reloc(reloc.kind) {
                continue;
            }
            if let cranelift_codegen::FinalizedRelocTarget::ExternalName(ExternalName::User(r)) =
                reloc.target
            {
                let u = &ctx.func.params.user_named_funcs()[r];
                let name = match u.namespace {
                    0 => {
                        &self
                            .module
                            .declarations()
                            .get_function_decl(cranelift_module::FuncId::from_u32(u.index))
                            .name
                    }
                    _ => {
                        &self
                            .module
                            .declarations()
                            .get_data_decl(cranelift_module::DataId::from_u32(u.index))
                            .name
                    }
                };
                if let Some(name) = name {
                    names.push(name.clone());
                }
            }
        }
        Ok(names)
    }
}

/// A compiled function awaiting the outliner.
pub struct CompiledFunction {
    pub id: FuncId,
    pub code: machine::MachFunction,
}

/// A function compiled by one lowering, not yet taken into the object
/// ([`ModuleDefiner::take`]).
pub struct LoweredFunction {
    pub function: CompiledFunction,
    /// The names its code takes the address of.
    address_significant: Vec<String>,
}

/// The relocation targets of a module's code, interned for the outliner
/// (which names them [`machine::RelocTarget::Symbol`] by index).
#[derive(Clone, Default)]
pub struct RelocTargets {
    pub targets: Vec<ModuleRelocTarget>,
    /// The linkage name of each target (outlined functions' content hashes
    /// use them, so they are the same in every module).
    pub names: Vec<String>,
    index: HashMap<String, u32>,
}

impl RelocTargets {
    fn intern(
        &mut self,
        target: &ModuleRelocTarget,
        decls: &ModuleDeclarations,
    ) -> machine::RelocTarget {
        let name = match target {
            ModuleRelocTarget::User {
                namespace: 0,
                index,
            } => decls
                .get_function_decl(FuncId::from_u32(*index))
                .linkage_name(FuncId::from_u32(*index))
                .into_owned(),
            ModuleRelocTarget::User { index, .. } => decls
                .get_data_decl(cranelift_module::DataId::from_u32(*index))
                .linkage_name(cranelift_module::DataId::from_u32(*index))
                .into_owned(),
            ModuleRelocTarget::FunctionOffset(_, offset) => {
                return machine::RelocTarget::FunctionOffset(*offset)
            }
            other => other.to_string(),
        };
        let next = self.targets.len() as u32;
        let i = *self.index.entry(name.clone()).or_insert_with(|| {
            self.targets.push(target.clone());
            self.names.push(name);
            next
        });
        machine::RelocTarget::Symbol(i)
    }
}

impl RelocTargets {
    /// The target named `name`, if some relocation refers to it.
    pub fn by_name(&self, name: &str) -> Option<machine::RelocTarget> {
        self.index
            .get(name)
            .map(|&i| machine::RelocTarget::Symbol(i))
    }
}

/// Relocations of direct calls and jumps: these do not take an address.
pub fn is_call_reloc(kind: Reloc) -> bool {
    matches!(
        kind,
        Reloc::Arm64Call | Reloc::X86CallPCRel4 | Reloc::X86CallPLTRel4
    )
}

fn module_name(id: FuncOrDataId) -> UserExternalName {
    match id {
        FuncOrDataId::Func(f) => UserExternalName {
            namespace: 0,
            index: f.as_u32(),
        },
        FuncOrDataId::Data(d) => UserExternalName {
            namespace: 1,
            index: d.as_u32(),
        },
    }
}

fn map_linkage(linkage: Linkage) -> ModLinkage {
    match linkage {
        Linkage::Import => ModLinkage::Import,
        Linkage::Local => ModLinkage::Local,
        Linkage::Export => ModLinkage::Export,
        Linkage::Weak => ModLinkage::Preemptible,
    }
}

/// Renders a cranelift-module error, including the verifier's report.
pub fn describe_module_error(e: &cranelift_module::ModuleError) -> String {
    match e {
        cranelift_module::ModuleError::Compilation(cranelift_codegen::CodegenError::Verifier(
            errors,
        )) => {
            format!("verifier errors:\n{errors}")
        }
        other => format!("{other}"),
    }
}

/// Checks the invariants listed in the module doc.
pub fn check_module(clif: &ClifModule) -> Result<()> {
    let mut definitions: HashMap<u32, usize> = HashMap::new();
    let n = clif.symbols.len() as u32;
    let symbol = |i: u32| -> Result<&parec_passes::clif_module::Symbol> {
        clif.symbols
            .get(i as usize)
            .ok_or_else(|| anyhow!("module `{}`: symbol index {i} out of range", clif.name))
    };
    for def in &clif.functions {
        let sym = symbol(def.symbol)?;
        if !matches!(sym.kind, SymbolKind::Function(_)) {
            bail!(
                "`{}` is defined as a function but declared as data",
                sym.name
            );
        }
        *definitions.entry(def.symbol).or_default() += 1;
        for (_, name) in def.func.params.user_named_funcs().iter() {
            if name.namespace != SYMBOL_NAMESPACE || name.index >= n {
                bail!(
                    "function `{}` refers to {name}, which is not a symbol of module `{}`",
                    sym.name,
                    clif.name
                );
            }
        }
    }
    for data in &clif.data {
        let sym = symbol(data.symbol)?;
        if !matches!(sym.kind, SymbolKind::Data { .. }) {
            bail!(
                "`{}` is defined as data but declared as a function",
                sym.name
            );
        }
        if !data.align.is_power_of_two() && data.align != 0 {
            bail!(
                "data `{}` has alignment {}, not a power of two",
                sym.name,
                data.align
            );
        }
        for reloc in &data.relocs {
            symbol(reloc.target)?;
            if reloc.offset as u64 + 8 > data.bytes.len() as u64 {
                bail!(
                    "data `{}` has a relocation at {} past its end",
                    sym.name,
                    reloc.offset
                );
            }
        }
        *definitions.entry(data.symbol).or_default() += 1;
    }
    for raw in &clif.raw_functions {
        let sym = symbol(raw.symbol)?;
        if !matches!(sym.kind, SymbolKind::Function(_)) {
            bail!(
                "`{}` is defined as a function but declared as data",
                sym.name
            );
        }
        if !raw.align.is_power_of_two() {
            bail!(
                "function `{}` has alignment {}, not a power of two",
                sym.name,
                raw.align
            );
        }
        for reloc in &raw.relocs {
            symbol(reloc.target)?;
            if reloc.offset as usize >= raw.bytes.len() {
                bail!(
                    "function `{}` has a relocation at {} past its end",
                    sym.name,
                    reloc.offset
                );
            }
        }
        *definitions.entry(raw.symbol).or_default() += 1;
    }
    for (i, sym) in clif.symbols.iter().enumerate() {
        let count = definitions.get(&(i as u32)).copied().unwrap_or(0);
        match (sym.linkage, count) {
            (Linkage::Import, 0) | (Linkage::Local | Linkage::Export | Linkage::Weak, 1) => {}
            (Linkage::Import, _) => bail!(
                "`{}` is an import but module `{}` defines it",
                sym.name,
                clif.name
            ),
            (_, 0) => bail!(
                "`{}` is declared in module `{}` but not defined",
                sym.name,
                clif.name
            ),
            (_, _) => bail!(
                "`{}` is defined more than once in module `{}`",
                sym.name,
                clif.name
            ),
        }
    }
    Ok(())
}

/// A relocation of a kind only parec's machine passes produce, in a
/// function defined from bytes.
#[derive(Clone, Debug)]
pub struct ParecReloc {
    pub function: FuncId,
    /// Offset of the field from the start of the function.
    pub offset: u32,
    pub kind: machine::RelocKind,
    pub name: ModuleRelocTarget,
    pub addend: i64,
}

/// Adds `relocs` to the finished object: each at its function's section
/// and offset, against the symbol of its target, as an ELF relocation.
pub fn add_parec_relocs(product: &mut ObjectProduct, relocs: &[ParecReloc]) -> Result<()> {
    for r in relocs {
        let r_type = match r.kind {
            machine::RelocKind::Aarch64AdrPrelLo21 => object::elf::R_AARCH64_ADR_PREL_LO21,
            machine::RelocKind::Aarch64CondBr19 => object::elf::R_AARCH64_CONDBR19,
            machine::RelocKind::Aarch64TstBr14 => object::elf::R_AARCH64_TSTBR14,
            machine::RelocKind::Cranelift(kind) => bail!("{kind:?} is Cranelift's to write"),
        };
        let function = product.function_symbol(r.function);
        let symbol = match r.name {
            ModuleRelocTarget::User {
                namespace: 0,
                index,
            } => product.function_symbol(FuncId::from_u32(index)),
            ModuleRelocTarget::User {
                namespace: 1,
                index,
            } => product.data_symbol(DataId::from_u32(index)),
            ref other => bail!("cannot relocate against {other:?}"),
        };
        let placed = product.object.symbol(function);
        let object::write::SymbolSection::Section(section) = placed.section else {
            bail!("function {:?} has no section", r.function);
        };
        let offset = placed.value + u64::from(r.offset);
        product
            .object
            .add_relocation(
                section,
                object::write::Relocation {
                    offset,
                    symbol,
                    addend: r.addend,
                    flags: object::RelocationFlags::Elf { r_type },
                },
            )
            .map_err(|e| anyhow!("cannot add a relocation: {e}"))?;
    }
    Ok(())
}
