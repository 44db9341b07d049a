//! Reading an ELF file's code: sections, function symbols and, for
//! objects, the call relocations (with the `object` crate).
//!
//! A *code section* is an allocated, executable section (`SHF_ALLOC` and
//! `SHF_EXECINSTR`). A *code symbol* is a defined `STT_FUNC` (or
//! `STT_GNU_IFUNC`) symbol in a code section; mapping symbols (`$x`, `$d`)
//! and labels are not functions. A symbol's size is its `st_size`; a symbol
//! without one reaches to the next code symbol of its section, or the
//! section's end. `STT_FILE` symbols name the object each following local
//! symbol came from (cranelift-object writes one per module).

use std::collections::BTreeMap;
use std::path::Path;

use ::object::{
    Architecture, BinaryFormat, Object as _, ObjectKind, ObjectSection as _, ObjectSymbol as _,
    RelocationTarget, SymbolKind, SymbolSection,
};
use anyhow::{anyhow, bail, Context as _, Result};

use super::file::Layout;

/// The instruction sets `parec size` decodes (for trap stubs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arch {
    Aarch64,
    X86_64,
}

impl Arch {
    pub fn name(self) -> &'static str {
        match self {
            Arch::Aarch64 => "aarch64",
            Arch::X86_64 => "x86_64",
        }
    }
}

/// What a section holds ([`super::file::classify`] decides).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum SectionClass {
    Code,
    ReadOnly,
    Writable,
    /// Zero-initialised: takes memory, not file bytes.
    Bss,
    Relocations,
    Symbols,
    Strings,
    /// Anything else (notes, unwind tables, `.comment`, debug information):
    /// reported by name.
    Other,
}

impl SectionClass {
    pub fn name(self) -> &'static str {
        match self {
            SectionClass::Code => "code",
            SectionClass::ReadOnly => "read-only data",
            SectionClass::Writable => "writable data",
            SectionClass::Bss => "zero-initialised",
            SectionClass::Relocations => "relocations",
            SectionClass::Symbols => "symbol table",
            SectionClass::Strings => "string table",
            SectionClass::Other => "other",
        }
    }
}

/// A section: its name, size (file bytes, or memory for a
/// zero-initialised one) and class.
#[derive(Clone, Debug)]
pub struct SectionInfo {
    pub name: String,
    pub size: u64,
    pub class: SectionClass,
}

/// A code section's contents.
#[derive(Clone, Debug)]
pub struct CodeSection {
    pub index: usize,
    pub name: String,
    pub address: u64,
    pub bytes: Vec<u8>,
    /// Objects: the target symbol's name of each relocation, by offset in
    /// the section.
    pub relocs: BTreeMap<u64, String>,
}

impl CodeSection {
    pub fn end(&self) -> u64 {
        self.address + self.bytes.len() as u64
    }
}

/// A function symbol in a code section.
#[derive(Clone, Debug)]
pub struct CodeSymbol {
    pub name: String,
    /// Index into [`Image::code`].
    pub section: usize,
    pub address: u64,
    pub size: u64,
    pub global: bool,
    /// The `STT_FILE` symbol before it, for local symbols.
    pub file: Option<String>,
}

/// One input file's code.
#[derive(Clone, Debug)]
pub struct Image {
    pub path: String,
    /// An executable (linked), not a relocatable object.
    pub executable: bool,
    pub arch: Arch,
    /// Where every byte of the file went, and its sections.
    pub file: Layout,
    pub code: Vec<CodeSection>,
    /// Sorted by section, address and name.
    pub symbols: Vec<CodeSymbol>,
    /// The names of the `STT_FILE` symbols, in symbol table order: in an
    /// executable, the objects (that had one) in link order.
    pub files: Vec<String>,
}

/// Reads `path`: an aarch64 or x86_64 ELF executable or object.
pub fn read(path: &Path) -> Result<Image> {
    let bytes = crate::io_error::read_bytes(path)?;
    parse(&path.display().to_string(), &bytes)
}

/// Parses the ELF file `bytes`, called `name` in errors.
pub fn parse(name: &str, bytes: &[u8]) -> Result<Image> {
    let file = ::object::File::parse(bytes)
        .map_err(|e| anyhow!("`{name}` is not an object file or executable: {e}"))?;
    if file.format() != BinaryFormat::Elf {
        bail!("`{name}`: only ELF files are supported");
    }
    let arch = match file.architecture() {
        Architecture::Aarch64 => Arch::Aarch64,
        Architecture::X86_64 => Arch::X86_64,
        other => bail!("`{name}`: unsupported architecture {other:?} (aarch64 and x86_64 are)"),
    };
    let executable = match file.kind() {
        ObjectKind::Executable | ObjectKind::Dynamic => true,
        ObjectKind::Relocatable => false,
        other => bail!("`{name}`: unsupported ELF file kind {other:?}"),
    };

    let layout = super::file::layout(name, bytes)?;
    let code_sections: BTreeMap<usize, &str> = layout
        .sections
        .iter()
        .filter(|s| s.class == SectionClass::Code)
        .map(|s| (s.index, s.name.as_str()))
        .collect();
    let mut code = Vec::new();
    let mut code_index: BTreeMap<usize, usize> = BTreeMap::new();
    for section in file.sections() {
        let Some(&section_name) = code_sections.get(&section.index().0) else {
            continue;
        };
        let data = section
            .data()
            .map_err(|e| anyhow!("`{name}`: section `{section_name}`: {e}"))?;
        let mut relocs = BTreeMap::new();
        if !executable {
            for (offset, reloc) in section.relocations() {
                if let RelocationTarget::Symbol(index) = reloc.target() {
                    if let Ok(target) = file.symbol_by_index(index) {
                        relocs.insert(offset, target.name().unwrap_or("?").to_string());
                    }
                }
            }
        }
        code_index.insert(section.index().0, code.len());
        code.push(CodeSection {
            index: section.index().0,
            name: section_name.to_string(),
            address: section.address(),
            bytes: data.to_vec(),
            relocs,
        });
    }

    let mut symbols = Vec::new();
    let mut files = Vec::new();
    let mut file_name: Option<String> = None;
    for symbol in file.symbols() {
        let symbol_name = symbol.name().unwrap_or("");
        if symbol.kind() == SymbolKind::File {
            file_name = Some(symbol_name.to_string());
            files.push(symbol_name.to_string());
            continue;
        }
        if symbol.kind() != SymbolKind::Text || !symbol.is_definition() {
            continue;
        }
        let SymbolSection::Section(index) = symbol.section() else {
            continue;
        };
        let Some(&section) = code_index.get(&index.0) else {
            continue;
        };
        if symbol_name.is_empty() || symbol_name.starts_with('$') {
            continue;
        }
        symbols.push(CodeSymbol {
            name: symbol_name.to_string(),
            section,
            address: symbol.address(),
            size: symbol.size(),
            global: symbol.is_global(),
            file: if symbol.is_local() {
                file_name.clone()
            } else {
                None
            },
        });
    }
    symbols.sort_by(|a, b| (a.section, a.address, &a.name).cmp(&(b.section, b.address, &b.name)));
    fill_missing_sizes(&mut symbols, &code);
    Ok(Image {
        path: name.to_string(),
        executable,
        arch,
        file: layout,
        code,
        symbols,
        files,
    })
}

/// A symbol without a size reaches to the next symbol of its section that
/// starts later, or to the section's end.
fn fill_missing_sizes(symbols: &mut [CodeSymbol], code: &[CodeSection]) {
    for i in 0..symbols.len() {
        if symbols[i].size != 0 {
            continue;
        }
        let (section, address) = (symbols[i].section, symbols[i].address);
        let next = symbols[i + 1..]
            .iter()
            .find(|s| s.section != section || s.address > address)
            .filter(|s| s.section == section)
            .map_or(code[section].end(), |s| s.address);
        symbols[i].size = next.saturating_sub(address);
    }
}

/// The `.o` files of a directory, by name (for `parec size DIR`).
pub fn objects_in(dir: &Path) -> Result<Vec<std::path::PathBuf>> {
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read `{}`", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "o"))
        .collect();
    files.sort();
    if files.is_empty() {
        bail!("`{}` holds no .o files", dir.display());
    }
    Ok(files)
}
