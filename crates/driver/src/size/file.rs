//! Every byte of an ELF file in exactly one *part*: the headers, the
//! sections by class (code, data, relocations, symbols, strings), other
//! sections by name, and padding.
//!
//! # Notation
//!
//! A file of `n` bytes is the offsets `[0, n)`. A *region* is a range of
//! offsets that one thing of the file names: the ELF header (`[0,
//! e_ehsize)`), the program header table (`e_phnum × e_phentsize` bytes at
//! `e_phoff`), the section header table (`shnum × e_shentsize` at
//! `e_shoff`), and each section's `[sh_offset, sh_offset + sh_size)` —
//! except `SHT_NOBITS` sections (`.bss`, `.tbss`), which take memory and no
//! file bytes. Each section's region belongs to the part of its class
//! ([`SectionClass`], decided by [`classify`]); a section of class
//! [`SectionClass::Other`] is a part of its own, by name (`.eh_frame`,
//! `.comment`, notes).
//!
//! # Algorithm
//!
//! The regions are sorted by start offset and swept once: a region's bytes
//! before the sweep's position were counted already (regions of a
//! well-formed file do not overlap; a malformed file's overlapping or
//! out-of-file regions are clipped), and the bytes between the position
//! and the next region's start are **padding** (alignment between sections
//! and between segments, whose file offsets are congruent to their
//! addresses modulo the page size). So the parts add up to `n` exactly,
//! whatever the file says. Cost: `O(s log s)` for `s` sections.
//!
//! A file is **stripped** when it has no symbol table (`SHT_SYMTAB`): what
//! `strip`, `ld -s` and `parec build -s` leave. Its code has no function
//! names ([`super`] then attributes it per section).

use std::collections::BTreeMap;

use ::object::elf::{
    SHF_ALLOC, SHF_EXECINSTR, SHF_WRITE, SHT_ANDROID_REL, SHT_ANDROID_RELA, SHT_ANDROID_RELR,
    SHT_CREL, SHT_DYNSYM, SHT_FINI_ARRAY, SHT_INIT_ARRAY, SHT_NOBITS, SHT_NULL, SHT_PREINIT_ARRAY,
    SHT_PROGBITS, SHT_REL, SHT_RELA, SHT_RELR, SHT_STRTAB, SHT_SYMTAB, SHT_SYMTAB_SHNDX,
};
use ::object::read::elf::{FileHeader, SectionHeader as _};
use ::object::FileKind;
use anyhow::{anyhow, bail, Result};

use super::elf::SectionClass;

/// Where a byte of the file belongs (module doc). The order is the
/// report's: headers and classes of sections, then sections by name, the
/// section header table and padding.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Part {
    ElfHeader,
    ProgramHeaders,
    Code,
    ReadOnlyData,
    WritableData,
    Relocations,
    SymbolTable,
    StringTables,
    /// A section of no class, by name.
    Section(String),
    SectionHeaders,
    Padding,
}

impl Part {
    pub fn name(&self) -> &str {
        match self {
            Part::ElfHeader => "ELF header",
            Part::ProgramHeaders => "program headers",
            Part::Code => "code",
            Part::ReadOnlyData => "read-only data",
            Part::WritableData => "writable data",
            Part::Relocations => "relocations",
            Part::SymbolTable => "symbol table",
            Part::StringTables => "string tables",
            Part::Section(name) => name,
            Part::SectionHeaders => "section headers",
            Part::Padding => "padding",
        }
    }

    /// The part of a section's file bytes; `None` for a class that has
    /// none (zero-initialised).
    fn of_section(class: SectionClass, name: &str) -> Option<Part> {
        Some(match class {
            SectionClass::Code => Part::Code,
            SectionClass::ReadOnly => Part::ReadOnlyData,
            SectionClass::Writable => Part::WritableData,
            SectionClass::Bss => return None,
            SectionClass::Relocations => Part::Relocations,
            SectionClass::Symbols => Part::SymbolTable,
            SectionClass::Strings => Part::StringTables,
            SectionClass::Other => Part::Section(name.to_string()),
        })
    }
}

/// One section as the section header table gives it.
#[derive(Clone, Debug)]
pub struct Section {
    /// Its index in the section header table.
    pub index: usize,
    pub name: String,
    pub class: SectionClass,
    /// `sh_size`: file bytes, or memory for a zero-initialised section.
    pub size: u64,
}

/// One part's bytes in a file, and the sections they come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartBytes {
    pub part: Part,
    pub bytes: u64,
    /// Names of the sections in it, in file order, each once (empty for
    /// the header tables and padding).
    pub sections: Vec<String>,
}

/// Where every byte of one file went.
#[derive(Clone, Debug)]
pub struct Layout {
    /// The file's size.
    pub bytes: u64,
    /// No symbol table (module doc).
    pub stripped: bool,
    /// Every section but the null one, in index order.
    pub sections: Vec<Section>,
    /// In [`Part`] order, parts without bytes left out; they add up to
    /// [`Layout::bytes`].
    pub parts: Vec<PartBytes>,
    /// Memory of the zero-initialised sections (no file bytes).
    pub zero_initialised: u64,
}

/// The class of a section by its type, flags and name.
///
/// Symbol, string and relocation tables by type; `SHT_NOBITS` is
/// zero-initialised; allocated executable sections are code; allocated
/// program data (`SHT_PROGBITS` and the init/fini arrays) is read-only or
/// writable data — except the unwind tables (`.eh_frame`, its header and
/// `.gcc_except_table`), which the program never reads, so they show by
/// name. Everything else (notes, `.comment`, debug information,
/// `.dynamic`, hash tables) is [`SectionClass::Other`].
pub fn classify(name: &str, sh_type: u32, flags: u64) -> SectionClass {
    let alloc = flags & u64::from(SHF_ALLOC) != 0;
    match sh_type {
        SHT_SYMTAB | SHT_DYNSYM | SHT_SYMTAB_SHNDX => SectionClass::Symbols,
        SHT_STRTAB => SectionClass::Strings,
        SHT_REL | SHT_RELA | SHT_RELR | SHT_CREL | SHT_ANDROID_REL | SHT_ANDROID_RELA
        | SHT_ANDROID_RELR => SectionClass::Relocations,
        SHT_NOBITS => SectionClass::Bss,
        _ if alloc && flags & u64::from(SHF_EXECINSTR) != 0 => SectionClass::Code,
        SHT_PROGBITS | SHT_INIT_ARRAY | SHT_FINI_ARRAY | SHT_PREINIT_ARRAY
            if alloc && !is_unwind_table(name) =>
        {
            if flags & u64::from(SHF_WRITE) != 0 {
                SectionClass::Writable
            } else {
                SectionClass::ReadOnly
            }
        }
        _ => SectionClass::Other,
    }
}

fn is_unwind_table(name: &str) -> bool {
    matches!(name, ".eh_frame" | ".eh_frame_hdr" | ".gcc_except_table")
}

/// The layout of the ELF file `data`, called `name` in errors.
pub fn layout(name: &str, data: &[u8]) -> Result<Layout> {
    match FileKind::parse(data) {
        Ok(FileKind::Elf32) => {
            layout_of::<::object::elf::FileHeader32<::object::Endianness>>(name, data)
        }
        Ok(FileKind::Elf64) => {
            layout_of::<::object::elf::FileHeader64<::object::Endianness>>(name, data)
        }
        _ => bail!("`{name}`: only ELF files are supported"),
    }
}

/// A range of file offsets and its part.
struct Region {
    start: u64,
    size: u64,
    part: Part,
    /// The section it is, if it is one.
    section: Option<String>,
}

fn layout_of<Elf: FileHeader>(name: &str, data: &[u8]) -> Result<Layout> {
    let bad = |e: ::object::Error| anyhow!("`{name}`: malformed ELF file: {e}");
    let header = Elf::parse(data).map_err(bad)?;
    let endian = header.endian().map_err(bad)?;
    let table = header.sections(endian, data).map_err(bad)?;

    let mut regions = vec![Region {
        start: 0,
        size: u64::from(header.e_ehsize(endian)),
        part: Part::ElfHeader,
        section: None,
    }];
    let phnum = header.phnum(endian, data).map_err(bad)? as u64;
    regions.push(Region {
        start: header.e_phoff(endian).into(),
        size: phnum * u64::from(header.e_phentsize(endian)),
        part: Part::ProgramHeaders,
        section: None,
    });
    regions.push(Region {
        start: header.e_shoff(endian).into(),
        size: table.len() as u64 * u64::from(header.e_shentsize(endian)),
        part: Part::SectionHeaders,
        section: None,
    });

    let mut sections = Vec::new();
    let mut stripped = true;
    let mut zero_initialised = 0;
    for (index, section) in table.enumerate() {
        let sh_type = section.sh_type(endian);
        if sh_type == SHT_NULL {
            continue;
        }
        let section_name = table
            .section_name(endian, section)
            .map(|n| String::from_utf8_lossy(n).into_owned())
            .unwrap_or_else(|_| "?".to_string());
        let flags: u64 = section.sh_flags(endian).into();
        let size: u64 = section.sh_size(endian).into();
        let class = classify(&section_name, sh_type, flags);
        stripped &= sh_type != SHT_SYMTAB;
        match Part::of_section(class, &section_name) {
            Some(part) => regions.push(Region {
                start: section.sh_offset(endian).into(),
                size,
                part,
                section: Some(section_name.clone()),
            }),
            None if flags & u64::from(SHF_ALLOC) != 0 => zero_initialised += size,
            None => {}
        }
        sections.push(Section {
            index: index.0,
            name: section_name,
            class,
            size,
        });
    }

    let bytes = data.len() as u64;
    Ok(Layout {
        bytes,
        stripped,
        sections,
        parts: account(bytes, regions),
        zero_initialised,
    })
}

/// Sweeps the regions (module doc, "Algorithm"): the parts of `bytes`
/// file bytes, adding up to `bytes`.
fn account(bytes: u64, mut regions: Vec<Region>) -> Vec<PartBytes> {
    regions.sort_by(|a, b| (a.start, &a.part).cmp(&(b.start, &b.part)));
    let mut parts: BTreeMap<Part, PartBytes> = BTreeMap::new();
    let mut add = |part: Part, n: u64, section: Option<String>| {
        let entry = parts.entry(part.clone()).or_insert_with(|| PartBytes {
            part,
            bytes: 0,
            sections: Vec::new(),
        });
        entry.bytes += n;
        if let Some(name) = section {
            if !entry.sections.contains(&name) {
                entry.sections.push(name);
            }
        }
    };
    let mut position = 0;
    for region in regions {
        let start = region.start.min(bytes).max(position);
        let end = region.start.saturating_add(region.size).min(bytes);
        if end <= start {
            continue;
        }
        if start > position {
            add(Part::Padding, start - position, None);
        }
        add(region.part, end - start, region.section);
        position = end;
    }
    if bytes > position {
        add(Part::Padding, bytes - position, None);
    }
    parts.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn region(start: u64, size: u64, part: Part) -> Region {
        Region {
            start,
            size,
            part,
            section: None,
        }
    }

    #[test]
    fn gaps_are_padding_and_overlaps_count_once() {
        let parts = account(
            100,
            vec![
                region(0, 64, Part::ElfHeader),
                // Overlaps the header by 4 bytes: counted once.
                region(60, 10, Part::Code),
                // Gap of 10 bytes, then a region that runs past the end.
                region(80, 50, Part::SectionHeaders),
            ],
        );
        let bytes: Vec<(&str, u64)> = parts.iter().map(|p| (p.part.name(), p.bytes)).collect();
        assert_eq!(
            bytes,
            [
                ("ELF header", 64),
                ("code", 6),
                ("section headers", 20),
                ("padding", 10)
            ]
        );
        assert_eq!(parts.iter().map(|p| p.bytes).sum::<u64>(), 100);
    }

    #[test]
    fn classes_by_type_flags_and_name() {
        let a = u64::from(SHF_ALLOC);
        let w = u64::from(SHF_WRITE);
        let x = u64::from(SHF_EXECINSTR);
        assert_eq!(classify(".text", SHT_PROGBITS, a | x), SectionClass::Code);
        assert_eq!(classify(".rodata", SHT_PROGBITS, a), SectionClass::ReadOnly);
        assert_eq!(classify(".eh_frame", SHT_PROGBITS, a), SectionClass::Other);
        assert_eq!(
            classify(".data", SHT_PROGBITS, a | w),
            SectionClass::Writable
        );
        assert_eq!(
            classify(".init_array", SHT_INIT_ARRAY, a | w),
            SectionClass::Writable
        );
        assert_eq!(classify(".bss", SHT_NOBITS, a | w), SectionClass::Bss);
        assert_eq!(
            classify(".rela.dyn", SHT_RELA, a),
            SectionClass::Relocations
        );
        assert_eq!(classify(".symtab", SHT_SYMTAB, 0), SectionClass::Symbols);
        assert_eq!(classify(".shstrtab", SHT_STRTAB, 0), SectionClass::Strings);
        assert_eq!(classify(".comment", SHT_PROGBITS, 0), SectionClass::Other);
        assert_eq!(classify(".note.gnu.build-id", 7, a), SectionClass::Other);
    }
}
