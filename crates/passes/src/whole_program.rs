//! Linking CLIF modules into one, for whole-program compilation (`--lto`).
//!
//! Per-module compilation gives each pass one module: inlining cannot see a
//! callee in another module, and every module that uses a generic instance
//! carries its own copy, which only the linker's identical-code folding
//! shares. [`link`] makes one [`ClifModule`] of a program's modules, as a
//! static linker would make one image of its objects, so that the CLIF
//! passes see every function once.
//!
//! # Symbol resolution
//!
//! Symbols are resolved by name, in module order:
//!
//! - an `Import` becomes whatever defines the name, or stays an import
//!   (C functions, the C library's data);
//! - an `Export` is the one definition of its name: a second is an error,
//!   as it is for the linker;
//! - a `Weak` definition is kept once: later modules' definitions of the same
//!   name are dropped (weak symbols have the same contents everywhere by
//!   contract; Pare's string literals are named by their contents);
//! - a `Local` symbol is private to its module. Locals of different modules
//!   with the same name are the same function when their bodies are equal
//!   after resolution (a generic instance every using module emits): it is
//!   kept once. Otherwise the later one is renamed `NAME.MODULE` (with a
//!   number if that is taken too), as are locals whose name a global symbol
//!   uses.
//!
//! Equality of local functions is decided optimistically: every same-name
//! local is first assumed equal to the earlier one, then each assumption
//! whose bodies differ under the resulting mapping is dropped (the function
//! is renamed), until none changes — the greatest fixed point, so mutually
//! recursive instances are recognized as equal too.
//!
//! # Invariants
//!
//! - The result defines every function (raw functions too) and data object
//!   of the inputs once, except dropped duplicates (weak, or equal local
//!   functions), and names each external reference by the resolved symbol.
//! - Deterministic: modules, symbols and functions keep their input order.
//! - All modules must ask for the same Cranelift settings; the result has
//!   them.
//!
//! # Cost
//!
//! Linear in the size of the modules, plus one printing of each local
//! function that shares its name with an earlier module's per round of the
//! fixed point (in practice one round).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use cranelift_codegen::ir::Function;

use crate::clif_module::{ClifModule, DataDef, FunctionDef, Linkage, Symbol, SYMBOL_NAMESPACE};

/// Why modules cannot be linked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LinkError {
    /// Two modules export the same name.
    DuplicateExport {
        name: String,
        first: String,
        second: String,
    },
    /// Two modules ask for different Cranelift settings.
    MixedSettings { first: String, second: String },
}

impl fmt::Display for LinkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LinkError::DuplicateExport {
                name,
                first,
                second,
            } => write!(
                f,
                "`{name}` is defined by both module `{first}` and module `{second}`"
            ),
            LinkError::MixedSettings { first, second } => write!(
                f,
                "modules `{first}` and `{second}` ask for different Cranelift settings; \
                 whole-program compilation needs one set"
            ),
        }
    }
}

impl std::error::Error for LinkError {}

/// Links `modules` into one module called `name`.
pub fn link(modules: Vec<ClifModule>, name: &str) -> Result<ClifModule, LinkError> {
    check_settings(&modules)?;
    let globals = global_names(&modules);
    let mut assumed_equal: BTreeSet<(usize, u32)> = BTreeSet::new();
    // Every same-name local function is first assumed equal to the first.
    let mut local_names: BTreeSet<&str> = BTreeSet::new();
    for (m, module) in modules.iter().enumerate() {
        for def in &module.functions {
            let symbol = &module.symbols[def.symbol as usize];
            let local = symbol.linkage == Linkage::Local && !globals.contains(symbol.name.as_str());
            if local && !local_names.insert(&symbol.name) {
                assumed_equal.insert((m, def.symbol));
            }
        }
    }
    loop {
        let linked = resolve(&modules, name, &globals, &assumed_equal)?;
        let refuted = linked.refuted(&modules, &assumed_equal);
        if refuted.is_empty() {
            return Ok(linked.finish(modules));
        }
        for key in refuted {
            assumed_equal.remove(&key);
        }
    }
}

fn check_settings(modules: &[ClifModule]) -> Result<(), LinkError> {
    let Some(first) = modules.first() else {
        return Ok(());
    };
    match modules.iter().find(|m| m.settings != first.settings) {
        Some(other) => Err(LinkError::MixedSettings {
            first: first.name.clone(),
            second: other.name.clone(),
        }),
        None => Ok(()),
    }
}

/// Names that some module imports, exports or defines weakly.
fn global_names(modules: &[ClifModule]) -> BTreeSet<&str> {
    modules
        .iter()
        .flat_map(|m| &m.symbols)
        .filter(|s| s.linkage != Linkage::Local)
        .map(|s| s.name.as_str())
        .collect()
}

/// A symbol table for the linked module and each input symbol's place in
/// it, under one set of equality assumptions.
struct Resolution {
    module: ClifModule,
    /// `map[m][s]`: the linked symbol of module `m`'s symbol `s`.
    map: Vec<Vec<u32>>,
    /// Input definitions that are dropped: `(module, symbol)`.
    dropped: BTreeSet<(usize, u32)>,
    /// The linked symbol's defining `(module, symbol)`.
    definer: BTreeMap<u32, (usize, u32)>,
}

fn resolve(
    modules: &[ClifModule],
    name: &str,
    globals: &BTreeSet<&str>,
    assumed_equal: &BTreeSet<(usize, u32)>,
) -> Result<Resolution, LinkError> {
    let mut out = ClifModule::new(name);
    if let Some(first) = modules.first() {
        out.settings = first.settings.clone();
    }
    let mut by_name: BTreeMap<String, u32> = BTreeMap::new();
    let mut map = Vec::with_capacity(modules.len());
    let mut dropped = BTreeSet::new();
    let mut definer: BTreeMap<u32, (usize, u32)> = BTreeMap::new();
    for (m, module) in modules.iter().enumerate() {
        let defined = defined_symbols(module);
        let mut module_map = Vec::with_capacity(module.symbols.len());
        for (s, symbol) in module.symbols.iter().enumerate() {
            let s = s as u32;
            let existing = by_name.get(&symbol.name).copied();
            let linked = match symbol.linkage {
                Linkage::Local if globals.contains(symbol.name.as_str()) || existing.is_some() => {
                    match existing {
                        Some(e) if assumed_equal.contains(&(m, s)) => {
                            dropped.insert((m, s));
                            e
                        }
                        _ => {
                            let renamed = fresh_name(&by_name, &symbol.name, &module.name);
                            push(&mut out, &mut by_name, &renamed, symbol, symbol.linkage)
                        }
                    }
                }
                _ => match existing {
                    None => push(&mut out, &mut by_name, &symbol.name, symbol, symbol.linkage),
                    Some(e) => {
                        let current = out.symbols[e as usize].linkage;
                        match (current, symbol.linkage) {
                            (_, Linkage::Import) => {}
                            (Linkage::Import, linkage) => out.symbols[e as usize].linkage = linkage,
                            (Linkage::Weak, Linkage::Weak) => {
                                dropped.insert((m, s));
                            }
                            _ => {
                                let first = definer
                                    .get(&e)
                                    .map_or(String::new(), |&(fm, _)| modules[fm].name.clone());
                                return Err(LinkError::DuplicateExport {
                                    name: symbol.name.clone(),
                                    first,
                                    second: module.name.clone(),
                                });
                            }
                        }
                        e
                    }
                },
            };
            if defined.contains(&s) && !dropped.contains(&(m, s)) {
                definer.insert(linked, (m, s));
            }
            module_map.push(linked);
        }
        map.push(module_map);
    }
    Ok(Resolution {
        module: out,
        map,
        dropped,
        definer,
    })
}

fn defined_symbols(module: &ClifModule) -> BTreeSet<u32> {
    let functions = module.functions.iter().map(|d| d.symbol);
    functions
        .chain(module.data.iter().map(|d| d.symbol))
        .chain(module.raw_functions.iter().map(|d| d.symbol))
        .collect()
}

fn push(
    out: &mut ClifModule,
    by_name: &mut BTreeMap<String, u32>,
    name: &str,
    symbol: &Symbol,
    linkage: Linkage,
) -> u32 {
    out.symbols.push(Symbol {
        name: name.to_string(),
        kind: symbol.kind.clone(),
        linkage,
    });
    let index = (out.symbols.len() - 1) as u32;
    by_name.insert(name.to_string(), index);
    index
}

/// `NAME.MODULE`, or `NAME.MODULE.N` for the first free `N`.
fn fresh_name(by_name: &BTreeMap<String, u32>, name: &str, module: &str) -> String {
    let base = format!("{name}.{module}");
    (1..)
        .map(|n| match n {
            1 => base.clone(),
            n => format!("{base}.{n}"),
        })
        .find(|candidate| !by_name.contains_key(candidate))
        .expect("an unused name")
}

impl Resolution {
    /// Module `m`'s function defining symbol `s`, renamed into the linked
    /// symbol table.
    fn relocated(&self, m: usize, def: &FunctionDef) -> Function {
        let mut func = def.func.clone();
        let map = &self.map[m];
        func.name = ClifModule::func_name(map[def.symbol as usize]);
        let refs: Vec<_> = func.params.user_named_funcs().keys().collect();
        for r in refs {
            let mut user = func.params.user_named_funcs()[r].clone();
            if user.namespace == SYMBOL_NAMESPACE {
                if let Some(&linked) = map.get(user.index as usize) {
                    user.index = linked;
                    func.params.reset_user_func_name(r, user);
                }
            }
        }
        func
    }

    /// The assumptions whose bodies differ under this resolution.
    fn refuted(
        &self,
        modules: &[ClifModule],
        assumed_equal: &BTreeSet<(usize, u32)>,
    ) -> Vec<(usize, u32)> {
        let mut refuted = Vec::new();
        for &(m, s) in assumed_equal {
            let linked = self.map[m][s as usize];
            let Some(&(fm, fs)) = self.definer.get(&linked) else {
                refuted.push((m, s));
                continue;
            };
            let mine = modules[m].functions.iter().find(|d| d.symbol == s);
            let theirs = modules[fm].functions.iter().find(|d| d.symbol == fs);
            let equal = match (mine, theirs) {
                (Some(a), Some(b)) => {
                    printed(&self.relocated(m, a)) == printed(&self.relocated(fm, b))
                }
                _ => false,
            };
            if !equal {
                refuted.push((m, s));
            }
        }
        refuted
    }

    /// The linked module: every kept definition, relocated.
    fn finish(mut self, modules: Vec<ClifModule>) -> ClifModule {
        for (m, module) in modules.iter().enumerate() {
            for def in &module.functions {
                if self.dropped.contains(&(m, def.symbol)) {
                    continue;
                }
                let func = self.relocated(m, def);
                let symbol = self.map[m][def.symbol as usize];
                self.module.functions.push(FunctionDef { symbol, func });
            }
            for data in &module.data {
                if self.dropped.contains(&(m, data.symbol)) {
                    continue;
                }
                let map = &self.map[m];
                let mut data = data.clone();
                data.symbol = map[data.symbol as usize];
                for reloc in &mut data.relocs {
                    reloc.target = map[reloc.target as usize];
                }
                self.module.data.push(DataDef { ..data });
            }
            for raw in &module.raw_functions {
                let map = &self.map[m];
                let mut raw = raw.clone();
                raw.symbol = map[raw.symbol as usize];
                for reloc in &mut raw.relocs {
                    reloc.target = map[reloc.target as usize];
                }
                self.module.raw_functions.push(raw);
            }
            // By the name each symbol has in the whole program (locals
            // may have been renamed).
            for name in &module.returns_nonnull {
                if let Some(i) = module.symbol_index(name) {
                    let symbol = self.map[m][i as usize];
                    let linked = self.module.symbols[symbol as usize].name.clone();
                    self.module.returns_nonnull.insert(linked);
                }
            }
            for name in &module.target_specific {
                if let Some(i) = module.symbol_index(name) {
                    let symbol = self.map[m][i as usize];
                    let linked = self.module.symbols[symbol as usize].name.clone();
                    self.module.target_specific.insert(linked);
                }
            }
        }
        self.module
    }
}

/// A function's text and its table of external names, for equality: the
/// text shows global values' names by reference number only, so the table
/// is compared too (equal functions whose tables are numbered differently
/// are merely kept apart).
fn printed(func: &Function) -> String {
    let mut func = func.clone();
    func.name = ClifModule::func_name(0);
    format!("{}{:?}", func.display(), func.params.user_named_funcs())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clif_module::{DataDef, SymbolKind};

    /// A module `name` defining `(symbol, linkage, constant)` functions of
    /// type `() -> i64` that return their constant, and importing `imports`.
    fn module(name: &str, functions: &[(&str, Linkage, i64)], imports: &[&str]) -> ClifModule {
        let mut m = ClifModule::new(name);
        for &(symbol, linkage, value) in functions {
            let text = format!(
                "function u0:0() -> i64 tail {{\nblock0:\n    v0 = iconst.i64 {value}\n    return v0\n}}"
            );
            let mut func = cranelift_reader::parse_functions(&text).unwrap().remove(0);
            let s = m.declare(
                symbol,
                SymbolKind::Function(func.signature.clone()),
                linkage,
            );
            func.name = ClifModule::func_name(s);
            m.functions.push(FunctionDef { symbol: s, func });
        }
        for &import in imports {
            m.declare(
                import,
                SymbolKind::Data { writable: false },
                Linkage::Import,
            );
        }
        m
    }

    fn names(m: &ClifModule) -> Vec<(&str, Linkage)> {
        m.symbols
            .iter()
            .map(|s| (s.name.as_str(), s.linkage))
            .collect()
    }

    #[test]
    fn imports_resolve_to_definitions_and_equal_locals_are_kept_once() {
        let a = module(
            "a",
            &[("inst", Linkage::Local, 7), ("f", Linkage::Export, 1)],
            &["g"],
        );
        let b = module(
            "b",
            &[("inst", Linkage::Local, 7), ("g", Linkage::Export, 2)],
            &["f"],
        );
        let linked = link(vec![a, b], "a").unwrap();
        assert_eq!(
            names(&linked),
            [
                ("inst", Linkage::Local),
                ("f", Linkage::Export),
                ("g", Linkage::Export)
            ]
        );
        assert_eq!(linked.functions.len(), 3, "one copy of `inst`");
    }

    #[test]
    fn different_locals_of_one_name_are_renamed() {
        let a = module("a", &[("helper", Linkage::Local, 1)], &[]);
        let b = module("b", &[("helper", Linkage::Local, 2)], &[]);
        let linked = link(vec![a, b], "a").unwrap();
        assert_eq!(
            names(&linked),
            [("helper", Linkage::Local), ("helper.b", Linkage::Local)]
        );
        assert_eq!(linked.functions.len(), 2);
    }

    #[test]
    fn weak_data_is_kept_once_and_duplicate_exports_are_errors() {
        let weak = |name: &str| {
            let mut m = ClifModule::new(name);
            let s = m.declare(
                ".str.x",
                SymbolKind::Data { writable: false },
                Linkage::Weak,
            );
            m.data.push(DataDef {
                symbol: s,
                bytes: vec![1, 2, 3],
                align: 1,
                relocs: Vec::new(),
            });
            m
        };
        let linked = link(vec![weak("a"), weak("b")], "a").unwrap();
        assert_eq!(linked.data.len(), 1);

        let a = module("a", &[("f", Linkage::Export, 1)], &[]);
        let b = module("b", &[("f", Linkage::Export, 2)], &[]);
        let err = link(vec![a, b], "a").unwrap_err();
        assert_eq!(
            err.to_string(),
            "`f` is defined by both module `a` and module `b`"
        );
    }

    #[test]
    fn mixed_settings_are_errors() {
        let a = module("a", &[("f", Linkage::Export, 1)], &[]);
        let mut b = module("b", &[("g", Linkage::Export, 2)], &[]);
        b.settings
            .shared
            .push(("opt_level".to_string(), "none".to_string()));
        assert!(matches!(
            link(vec![a, b], "a"),
            Err(LinkError::MixedSettings { .. })
        ));
    }
}
