//! The passes' unit of work: a CLIF module.
//!
//! A [`ClifModule`] is one compilation unit: the functions it defines (as
//! `ir::Function`s, and the few a language runtime gives as machine code,
//! [`RawFunctionDef`]), the data objects it defines, and a symbol table naming
//! everything those refer to, each with its linkage. It knows nothing of the
//! source language; the Pare lowering, `.clif` files and the tests all build
//! one, and the driver hands it to cranelift-jit or cranelift-object.
//!
//! Notation: every external reference inside a function is
//! `ExternalName::User(r)` with `func.params.user_named_funcs()[r] ==
//! UserExternalName { namespace: SYMBOL_NAMESPACE, index: s }`, where `s`
//! indexes [`ClifModule::symbols`]. A function's own name is
//! `UserFuncName::User(UserExternalName { namespace: SYMBOL_NAMESPACE, index: s })`
//! for its own symbol `s`.

use std::borrow::Borrow;
use std::collections::{BTreeSet, HashMap};
use std::hash::Hash;
use std::sync::{Arc, Mutex, MutexGuard};

use cranelift_codegen::ir::{self, ExternalName, UserExternalName, UserFuncName};
use cranelift_codegen::isa::TargetIsa;

use crate::code_cache::{self, CodeCache};

/// The namespace of [`UserExternalName`]s that index [`ClifModule::symbols`].
pub const SYMBOL_NAMESPACE: u32 = 0;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Linkage {
    /// Defined elsewhere.
    Import,
    /// Defined here, visible only in this object.
    Local,
    /// Defined here, visible to other objects.
    Export,
    /// Defined here and possibly in other objects too, always with the same
    /// contents: the linker keeps one definition and every object's
    /// references resolve to it (an ELF weak symbol). For objects named by
    /// their contents, such as Pare's string literals.
    Weak,
}

#[derive(Clone, Debug, PartialEq)]
pub enum SymbolKind {
    Function(ir::Signature),
    Data { writable: bool },
}

#[derive(Clone, Debug)]
pub struct Symbol {
    pub name: String,
    pub kind: SymbolKind,
    pub linkage: Linkage,
}

/// A defined function.
#[derive(Clone, Debug)]
pub struct FunctionDef {
    /// Index of its symbol in [`ClifModule::symbols`].
    pub symbol: u32,
    pub func: ir::Function,
}

impl FunctionDef {
    /// The name of its symbol in `symbols` (its module's
    /// [`ClifModule::symbols`]), or the function's own name when the symbol
    /// is missing: what remarks call it.
    pub fn symbol_name(&self, symbols: &[Symbol]) -> String {
        symbols
            .get(self.symbol as usize)
            .map_or_else(|| self.func.name.to_string(), |s| s.name.clone())
    }
}

/// A relocation in a data object: at `offset`, the address of `target` plus `addend`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DataReloc {
    pub offset: u32,
    pub target: u32,
    pub addend: i64,
}

/// A defined data object.
#[derive(Clone, Debug)]
pub struct DataDef {
    pub symbol: u32,
    pub bytes: Vec<u8>,
    pub align: u64,
    pub relocs: Vec<DataReloc>,
}

/// A function defined by its machine code for the module's target, not by
/// CLIF: the few instructions a language runtime cannot write in CLIF (an
/// entry point that receives the initial stack, a system call). Passes see
/// it as a function they cannot look into: they never change or delete it,
/// and the symbols its relocations name count as referenced
/// ([`ClifModule::raw_reloc_targets`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawFunctionDef {
    /// Index of its symbol in [`ClifModule::symbols`].
    pub symbol: u32,
    pub bytes: Vec<u8>,
    /// The alignment of its first byte.
    pub align: u32,
    pub relocs: Vec<RawReloc>,
}

/// A relocation in a [`RawFunctionDef`]: at `offset`, a field of kind
/// `kind` referring to `target` plus `addend`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawReloc {
    pub offset: u32,
    pub kind: cranelift_codegen::binemit::Reloc,
    pub target: u32,
    pub addend: i64,
}

/// Cranelift settings a module asks for on top of the build's: a `.clif`
/// file's `set` lines and the ISA flags of its `target` line, as `(name,
/// value)` pairs in file order. Empty for modules that take the build's
/// settings (every Pare module).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct CodegenSettings {
    /// Shared settings (`set opt_level=speed`, `set enable_pinned_reg`).
    pub shared: Vec<(String, String)>,
    /// ISA settings (`target x86_64 has_avx`).
    pub isa: Vec<(String, String)>,
}

impl CodegenSettings {
    pub fn is_empty(&self) -> bool {
        self.shared.is_empty() && self.isa.is_empty()
    }
}

#[derive(Clone, Debug, Default)]
pub struct ClifModule {
    pub name: String,
    /// The symbol table. Code may push to it directly; code that renames,
    /// removes or reorders symbols in place calls
    /// [`ClifModule::symbols_changed`] afterwards (see [`SymbolNames`]).
    pub symbols: Vec<Symbol>,
    pub functions: Vec<FunctionDef>,
    pub data: Vec<DataDef>,
    /// Functions defined by their machine code (none in most modules).
    pub raw_functions: Vec<RawFunctionDef>,
    /// The Cranelift settings its code is compiled with, on top of the
    /// build's.
    pub settings: CodegenSettings,
    /// Functions, by symbol name, that never return null — what the
    /// producer knows and CLIF cannot say (LLVM's `returns_nonnull`): a
    /// language runtime's allocation functions. GVN treats their results
    /// as non-zero.
    pub returns_nonnull: BTreeSet<String>,
    /// Functions, by symbol name, whose code depends on the target machine
    /// and not only on the source (a signal handler reading the machine's
    /// `ucontext`; a runtime standing on the operating system alone, where
    /// the profiled run stood on the C library): a profile made on one
    /// machine cannot name them on another, so profiles leave them out
    /// (`crate::profile`).
    pub target_specific: BTreeSet<String>,
    /// Symbol names to indices, for [`ClifModule::symbol_index`].
    names: Index<str>,
    /// Data symbols to their definitions, for [`ClifModule::data_def`].
    data_defs: Index<u32>,
    /// Where the passes that measure code and the build's code generation
    /// find code compiled before ([`ClifModule::code_size`]); shared by
    /// every module of a build and by clones.
    code_cache: Option<Arc<CodeCache>>,
}

/// An index of a vector the module keeps public (`symbols` by name, `data`
/// by symbol), so that a lookup takes constant time rather than a scan:
/// lowering a module of N functions declares each of them and everything
/// they call, and hashing a function for merging reads the data it names;
/// scanning made both quadratic.
///
/// The vectors stay public and passes push to them and rewrite them, so the
/// index does not assume it saw every change. It maps each key to its first
/// position among the first `covered` elements of the vector at `address`;
/// a lookup first indexes the elements pushed since, and starts over when
/// the vector moved (replaced, cloned, reallocated by a push) or shrank, or
/// when the index points at an element whose key is no longer the one
/// looked up (removed, reordered). What it cannot see is a key that
/// appeared in place, at a position it already covers (a rename, a removal
/// followed by pushes): code that renames, removes or reorders symbols or
/// data in place calls [`ClifModule::symbols_changed`]. Debug builds check
/// every answer against a scan.
///
/// The map is only ever queried, never iterated, so its order cannot reach
/// any output. A clone starts empty (its vector is elsewhere) and is rebuilt
/// at its first lookup. The mutex lets lookups through `&ClifModule` keep
/// the index up to date.
struct Index<Q: ?Sized + ToOwned>(Mutex<FirstPositions<Q>>);

struct FirstPositions<Q: ?Sized + ToOwned> {
    by_key: HashMap<Q::Owned, usize>,
    /// How many elements, from the first, are indexed.
    covered: usize,
    /// The address of the indexed vector's elements.
    address: usize,
}

impl<Q> FirstPositions<Q>
where
    Q: ?Sized + ToOwned + Hash + Eq,
    Q::Owned: Hash + Eq + Borrow<Q>,
{
    /// Brings the index up to date with `items`, as far as it can tell.
    fn refresh<T>(&mut self, items: &[T], key: impl Fn(&T) -> &Q) {
        let address = items.as_ptr() as usize;
        if address != self.address || self.covered > items.len() {
            self.clear(address);
        }
        for (i, item) in items.iter().enumerate().skip(self.covered) {
            self.by_key.entry(key(item).to_owned()).or_insert(i);
        }
        self.covered = items.len();
    }

    fn clear(&mut self, address: usize) {
        self.by_key.clear();
        self.covered = 0;
        self.address = address;
    }

    /// The first position of `wanted` in `items`, refreshing first.
    fn find<T>(&mut self, items: &[T], key: impl Fn(&T) -> &Q, wanted: &Q) -> Option<usize> {
        self.refresh(items, &key);
        let found = self.by_key.get(wanted).copied();
        if found.is_none_or(|i| key(&items[i]) == wanted) {
            return found;
        }
        // An element was removed or moved under the index: start over.
        self.clear(items.as_ptr() as usize);
        self.refresh(items, &key);
        self.by_key.get(wanted).copied()
    }

    /// Indexes the element just pushed onto `items`, whose earlier elements
    /// the index covers: cheaper than a rebuild when the push moved the
    /// vector.
    fn pushed<T>(&mut self, items: &[T], key: impl Fn(&T) -> &Q) {
        let last = items.len() - 1;
        self.by_key
            .entry(key(&items[last]).to_owned())
            .or_insert(last);
        self.covered = items.len();
        self.address = items.as_ptr() as usize;
    }
}

impl<Q: ?Sized + ToOwned> Index<Q> {
    fn lock(&self) -> MutexGuard<'_, FirstPositions<Q>> {
        // The index holds no invariant a panic elsewhere could break.
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn get_mut(&mut self) -> &mut FirstPositions<Q> {
        self.0
            .get_mut()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl<Q: ?Sized + ToOwned> Default for Index<Q> {
    fn default() -> Self {
        Index(Mutex::new(FirstPositions {
            by_key: HashMap::new(),
            covered: 0,
            address: 0,
        }))
    }
}

impl<Q: ?Sized + ToOwned> Clone for Index<Q> {
    fn clone(&self) -> Self {
        Index::default()
    }
}

impl<Q: ?Sized + ToOwned> std::fmt::Debug for Index<Q> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Index")
    }
}

fn symbol_name(symbol: &Symbol) -> &str {
    &symbol.name
}

fn data_symbol(def: &DataDef) -> &u32 {
    &def.symbol
}

/// The index a scan of `symbols` finds `name` at: what the index must agree
/// with (debug builds check every lookup).
fn scan(symbols: &[Symbol], name: &str) -> Option<u32> {
    symbols
        .iter()
        .position(|s| s.name == name)
        .map(|i| i as u32)
}

impl ClifModule {
    pub fn new(name: impl Into<String>) -> Self {
        ClifModule {
            name: name.into(),
            ..Default::default()
        }
    }

    /// Compiles through `cache` from now on (see [`crate::code_cache`]).
    pub fn set_code_cache(&mut self, cache: Arc<CodeCache>) {
        self.code_cache = Some(cache);
    }

    /// The cache this module's code is compiled through, if any.
    pub fn code_cache(&self) -> Option<Arc<CodeCache>> {
        self.code_cache.clone()
    }

    /// Bytes of machine code Cranelift emits for `func` (one of this
    /// module's functions, or a candidate for one), if it compiles: through
    /// the module's code cache when it has one.
    pub fn code_size(&self, func: &ir::Function, isa: &dyn TargetIsa) -> Option<usize> {
        code_cache::code_size(func, isa, self.code_cache.as_deref())
    }

    /// The symbols the relocations of [`ClifModule::raw_functions`] name:
    /// referenced from code no pass sees.
    pub fn raw_reloc_targets(&self) -> impl Iterator<Item = u32> + '_ {
        self.raw_functions
            .iter()
            .flat_map(|f| f.relocs.iter().map(|r| r.target))
    }

    /// Index of the symbol called `name`, if any (the first, should a pass
    /// have pushed two of that name).
    pub fn symbol_index(&self, name: &str) -> Option<u32> {
        let found = self.names.lock().find(&self.symbols, symbol_name, name);
        let found = found.map(|i| i as u32);
        debug_assert_eq!(found, scan(&self.symbols, name), "stale index of `{name}`");
        found
    }

    /// Adds a symbol, or returns the existing one of that name (upgrading an
    /// import to a definition's linkage).
    pub fn declare(&mut self, name: &str, kind: SymbolKind, linkage: Linkage) -> u32 {
        let names = self.names.get_mut();
        let found = names
            .find(&self.symbols, symbol_name, name)
            .map(|i| i as u32);
        debug_assert_eq!(found, scan(&self.symbols, name), "stale index of `{name}`");
        if let Some(i) = found {
            let s = &mut self.symbols[i as usize];
            if s.linkage == Linkage::Import && linkage != Linkage::Import {
                s.linkage = linkage;
            }
            return i;
        }
        let index = self.symbols.len() as u32;
        self.symbols.push(Symbol {
            name: name.to_string(),
            kind,
            linkage,
        });
        // `find` brought the index up to date: add the new symbol to it
        // rather than rebuild it when the push moved the vector.
        names.pushed(&self.symbols, symbol_name);
        index
    }

    /// Tells the indexes that symbols were renamed, removed or reordered in
    /// place (assigning `symbols[i].name` or `data[i].symbol`, `retain`):
    /// they are rebuilt at the next lookup. Pushing symbols or data needs no
    /// call.
    pub fn symbols_changed(&mut self) {
        self.names.get_mut().clear(0);
        self.data_defs.get_mut().clear(0);
    }

    /// The data object defining symbol `symbol`, if this module defines it
    /// (the first, should there be two).
    pub fn data_def(&self, symbol: u32) -> Option<&DataDef> {
        let found = self.data_defs.lock().find(&self.data, data_symbol, &symbol);
        debug_assert_eq!(
            found,
            self.data.iter().position(|d| d.symbol == symbol),
            "stale data index of symbol {symbol}"
        );
        found.map(|i| &self.data[i])
    }

    /// The [`UserExternalName`] that refers to symbol `index`.
    pub fn external_name(index: u32) -> UserExternalName {
        UserExternalName {
            namespace: SYMBOL_NAMESPACE,
            index,
        }
    }

    /// The function name to give an `ir::Function` defining symbol `index`.
    pub fn func_name(index: u32) -> UserFuncName {
        UserFuncName::User(Self::external_name(index))
    }

    /// The symbol a function-level external name refers to.
    pub fn symbol_of(func: &ir::Function, name: &ExternalName) -> Option<u32> {
        match name {
            ExternalName::User(r) => {
                let u = &func.params.user_named_funcs()[*r];
                (u.namespace == SYMBOL_NAMESPACE).then_some(u.index)
            }
            _ => None,
        }
    }

    /// The function defining symbol `name`, if this module defines it.
    pub fn function(&self, name: &str) -> Option<&FunctionDef> {
        self.function_index(name).map(|i| &self.functions[i])
    }

    /// The index in `functions` of the function defining symbol `name`, if
    /// this module defines it.
    pub fn function_index(&self, name: &str) -> Option<usize> {
        let s = self.symbol_index(name)?;
        self.functions.iter().position(|f| f.symbol == s)
    }

    /// Total number of CLIF instructions in the defined functions.
    pub fn inst_count(&self) -> usize {
        self.functions.iter().map(|f| count_insts(&f.func)).sum()
    }
}

/// Number of instructions in a function's layout.
pub fn count_insts(func: &ir::Function) -> usize {
    func.layout
        .blocks()
        .map(|b| func.layout.block_insts(b).count())
        .sum()
}

/// Drops the external functions `func` declares but no instruction uses,
/// and the external names nothing uses any more.
///
/// Inlining leaves the caller's import of the callee behind (Cranelift's
/// inliner only rewrites the call), and a pass that then deletes the callee
/// must not leave a name of the deleted symbol anywhere. Kept entities are
/// renumbered in their original order, so the result does not depend on
/// how the function was built.
pub fn prune_external_names(func: &mut ir::Function) {
    use cranelift_codegen::entity::{EntityRef as _, PrimaryMap};

    // Function references used by instructions, in ascending order.
    let mut used = vec![false; func.dfg.ext_funcs.len()];
    let insts: Vec<ir::Inst> = func
        .layout
        .blocks()
        .flat_map(|b| func.layout.block_insts(b))
        .collect();
    for &inst in &insts {
        if let Some(r) = func_ref_mut(&mut func.dfg.insts[inst]) {
            used[r.index()] = true;
        }
    }
    let mut new_ref = vec![None; used.len()];
    let mut ext_funcs = PrimaryMap::new();
    for (r, data) in func.dfg.ext_funcs.iter() {
        if used[r.index()] {
            new_ref[r.index()] = Some(ext_funcs.push(data.clone()));
        }
    }
    for &inst in &insts {
        if let Some(r) = func_ref_mut(&mut func.dfg.insts[inst]) {
            *r = new_ref[r.index()].expect("a used reference is kept");
        }
    }
    func.dfg.ext_funcs = ext_funcs;

    // External names used by the kept functions and the global values.
    let old_names = func.params.user_named_funcs().clone();
    let base = func.params.base_srcloc();
    let mut params = ir::function::FunctionParameters::new();
    if !base.is_default() {
        params.ensure_base_srcloc(base);
    }
    let mut rename = |name: &mut ExternalName| {
        if let ExternalName::User(r) = name {
            *r = params.ensure_user_func_name(old_names[*r].clone());
        }
    };
    for data in func.dfg.ext_funcs.values_mut() {
        rename(&mut data.name);
    }
    for gv in func.global_values.values_mut() {
        if let ir::GlobalValueData::Symbol { name, .. } = gv {
            rename(name);
        }
    }
    func.params = params;
}

/// The function reference an instruction uses, if any.
fn func_ref_mut(data: &mut ir::InstructionData) -> Option<&mut ir::FuncRef> {
    match data {
        ir::InstructionData::Call { func_ref, .. }
        | ir::InstructionData::FuncAddr { func_ref, .. }
        | ir::InstructionData::TryCall { func_ref, .. } => Some(func_ref),
        _ => None,
    }
}

/// Removes the functions at `deleted` (indices into `module.functions`),
/// whose bodies nothing calls any more, then every remaining function's
/// leftover declaration of them and their symbols.
pub fn remove_functions(module: &mut ClifModule, deleted: &BTreeSet<usize>) {
    if deleted.is_empty() {
        return;
    }
    let removed: BTreeSet<u32> = deleted
        .iter()
        .map(|&f| module.functions[f].symbol)
        .collect();
    let mut index = 0;
    module.functions.retain(|_| {
        index += 1;
        !deleted.contains(&(index - 1))
    });
    for def in &mut module.functions {
        let names_removed = def
            .func
            .params
            .user_named_funcs()
            .values()
            .any(|u| u.namespace == SYMBOL_NAMESPACE && removed.contains(&u.index));
        if names_removed {
            prune_external_names(&mut def.func);
        }
    }
    remove_symbols(module, &removed);
}

/// Removes the symbols in `removed` (no longer defined nor referenced) and
/// renumbers the others everywhere: function names, external names, data.
pub fn remove_symbols(module: &mut ClifModule, removed: &BTreeSet<u32>) {
    if removed.is_empty() {
        return;
    }
    let mut new_index = Vec::with_capacity(module.symbols.len());
    let mut next = 0u32;
    for s in 0..module.symbols.len() as u32 {
        new_index.push((!removed.contains(&s)).then(|| {
            next += 1;
            next - 1
        }));
    }
    let map = |s: u32| new_index[s as usize].expect("a removed symbol is still defined");
    let mut s = 0u32;
    module.symbols.retain(|_| {
        s += 1;
        !removed.contains(&(s - 1))
    });
    module.symbols_changed();
    for def in &mut module.functions {
        def.symbol = map(def.symbol);
        def.func.name = ClifModule::func_name(def.symbol);
        let refs: Vec<_> = def.func.params.user_named_funcs().keys().collect();
        for r in refs {
            let mut user = def.func.params.user_named_funcs()[r].clone();
            if user.namespace == SYMBOL_NAMESPACE {
                // A deleted function is named nowhere: passes redirect or
                // prune every reference before they delete it.
                match new_index.get(user.index as usize) {
                    Some(&Some(n)) => {
                        user.index = n;
                        def.func.params.reset_user_func_name(r, user);
                    }
                    Some(None) => debug_assert!(false, "a deleted symbol is still named"),
                    None => {}
                }
            }
        }
    }
    for data in &mut module.data {
        data.symbol = map(data.symbol);
        for reloc in &mut data.relocs {
            reloc.target = map(reloc.target);
        }
    }
    for raw in &mut module.raw_functions {
        raw.symbol = map(raw.symbol);
        for reloc in &mut raw.relocs {
            reloc.target = map(reloc.target);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(module: &mut ClifModule, name: &str) -> u32 {
        module.declare(name, SymbolKind::Data { writable: false }, Linkage::Local)
    }

    fn push(module: &mut ClifModule, name: &str) {
        module.symbols.push(Symbol {
            name: name.to_string(),
            kind: SymbolKind::Data { writable: false },
            linkage: Linkage::Import,
        });
    }

    /// The index answers as a scan would after every kind of change the
    /// passes make to the symbol table.
    #[test]
    fn symbol_index_follows_the_table() {
        let mut m = ClifModule::new("m");
        for k in 0..100 {
            assert_eq!(data(&mut m, &format!("s{k}")), k);
        }
        assert_eq!(data(&mut m, "s42"), 42);
        assert_eq!(m.symbol_index("s99"), Some(99));
        assert_eq!(m.symbol_index("t"), None);

        // Pushed directly, without `declare`.
        push(&mut m, "t");
        assert_eq!(m.symbol_index("t"), Some(100));
        assert_eq!(data(&mut m, "t"), 100);
        assert_eq!(m.symbols[100].linkage, Linkage::Local, "an import upgraded");

        // Removed: the others renumbered.
        remove_symbols(&mut m, &BTreeSet::from([0, 50]));
        assert_eq!(m.symbol_index("s0"), None);
        assert_eq!(m.symbol_index("s50"), None);
        assert_eq!(m.symbol_index("s1"), Some(0));
        assert_eq!(m.symbol_index("t"), Some(98));

        // Renamed in place.
        m.symbols[3].name = "renamed".to_string();
        m.symbols_changed();
        assert_eq!(m.symbol_index("renamed"), Some(3));
        assert_eq!(m.symbol_index("s4"), None);

        // Reordered: a stale position is noticed.
        m.symbols.swap(0, 1);
        assert_eq!(m.symbol_index("s1"), Some(1));
        assert_eq!(m.symbol_index("s2"), Some(0));

        // A clone has its own index; the vector replaced.
        let mut copy = m.clone();
        assert_eq!(copy.symbol_index("t"), Some(98));
        copy.symbols = vec![m.symbols[98].clone()];
        assert_eq!(copy.symbol_index("t"), Some(0));
        assert_eq!(copy.symbol_index("s1"), None);
        assert_eq!(data(&mut copy, "u"), 1);
        assert_eq!(m.symbol_index("u"), None);
    }

    /// The data index answers as a scan would, before and after symbols
    /// are removed and data objects renumbered.
    #[test]
    fn data_def_follows_the_table() {
        let mut m = ClifModule::new("m");
        for k in 0..10 {
            let symbol = data(&mut m, &format!("d{k}"));
            m.data.push(DataDef {
                symbol,
                bytes: vec![k as u8],
                align: 1,
                relocs: Vec::new(),
            });
        }
        assert_eq!(m.data_def(3).map(|d| d.bytes[0]), Some(3));
        let extra = data(&mut m, "no-data");
        assert!(m.data_def(extra).is_none());
        m.data.retain(|d| d.symbol != 2);
        remove_symbols(&mut m, &BTreeSet::from([2]));
        assert_eq!(m.data_def(2).map(|d| d.bytes[0]), Some(3));
        assert_eq!(m.data_def(8).map(|d| d.bytes[0]), Some(9));
        assert!(m.data_def(9).is_none(), "`no-data` has no definition");
    }
}
