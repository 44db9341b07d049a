//! ELF relocatable objects: the `.llvm_addrsig` section parec adds.
//!
//! One module becomes one object ([`crate::codegen`]): cranelift-object with
//! one section per function (so the linker's identical-code folding works per
//! function), `is_pic=false`, plus an `.llvm_addrsig` section listing the
//! symbols whose address is significant, so that `ld.lld --icf=safe` may fold
//! the others.
//!
//! `.llvm_addrsig` (sh_type `SHT_LLVM_ADDRSIG` = 0x6fff4c03, sh_link = the
//! `.symtab` index) holds ULEB128 symbol-table indices. Those indices exist
//! only once the object is written, so the object is written, read back to map
//! names to indices, given the section, written again (a section without
//! symbols does not move any symbol index — re-checked after the second write)
//! and its header's sh_link is patched in the bytes.

use std::collections::HashMap;

use anyhow::{anyhow, bail, Result};
use object::write::{Object, SectionId};
use object::{elf, Object as _, ObjectSection as _, ObjectSymbol as _, SectionFlags, SectionKind};

/// `SHT_LLVM_ADDRSIG`.
pub const SHT_LLVM_ADDRSIG: u32 = 0x6fff_4c03;
/// The name of the address-significance section.
pub const ADDRSIG_SECTION: &str = ".llvm_addrsig";

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
