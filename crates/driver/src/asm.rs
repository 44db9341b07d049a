//! `--emit asm`: a disassembly listing of the functions in an object.
//!
//! Each function symbol of the object (one section per function) is
//! disassembled with capstone from its section bytes, offsets relative to the
//! function start. Relocations that apply inside an instruction are printed
//! under it, so calls and address materializations show their targets.
//! Bytes capstone cannot decode (e.g. literal pools) are printed as `.word`s.

use std::fmt::Write as _;

use anyhow::{anyhow, Result};
use capstone::arch::{self, BuildsCapstone};
use capstone::Capstone;
use object::{
    Object as _, ObjectSection as _, ObjectSymbol as _, RelocationFlags, RelocationTarget,
    SymbolKind,
};

use crate::target::Target;

/// Disassembles every function of the ELF object `bytes`.
pub fn disassemble_object(bytes: &[u8], target: Target) -> Result<String> {
    let file = object::File::parse(bytes).map_err(|e| anyhow!("cannot read object: {e}"))?;
    let cs = capstone_for(target)?;
    let mut functions: Vec<_> = file
        .symbols()
        .filter(|s| {
            s.kind() == SymbolKind::Text && s.is_definition() && s.section_index().is_some()
        })
        .collect();
    functions.sort_by_key(|s| (s.section_index().map(|i| i.0), s.address()));

    let mut out = String::new();
    for sym in functions {
        let name = sym.name().unwrap_or("?");
        let Some(section) = sym
            .section_index()
            .and_then(|i| file.section_by_index(i).ok())
        else {
            continue;
        };
        let data = section
            .data()
            .map_err(|e| anyhow!("cannot read section of `{name}`: {e}"))?;
        let start = sym.address() - section.address();
        let end = (start + sym.size()).min(data.len() as u64);
        let code = &data[start as usize..end as usize];
        let relocs: Vec<(u64, String)> = section
            .relocations()
            .filter(|(off, _)| *off >= start && *off < end)
            .map(|(off, r)| (off - start, describe_reloc(&file, &r)))
            .collect();
        let _ = writeln!(out, "{name}:");
        write_function(&mut out, &cs, code, &relocs)?;
        out.push('\n');
    }
    Ok(out)
}

fn capstone_for(target: Target) -> Result<Capstone> {
    let cs = match target {
        Target::Aarch64 => Capstone::new()
            .arm64()
            .mode(arch::arm64::ArchMode::Arm)
            .build(),
        Target::X86_64 => Capstone::new()
            .x86()
            .mode(arch::x86::ArchMode::Mode64)
            .build(),
    };
    cs.map_err(|e| anyhow!("cannot start the disassembler: {e}"))
}

/// Lists one function: decodable instructions, then undecodable words as data.
fn write_function(
    out: &mut String,
    cs: &Capstone,
    code: &[u8],
    relocs: &[(u64, String)],
) -> Result<()> {
    let mut offset = 0usize;
    while offset < code.len() {
        let insns = cs
            .disasm_all(&code[offset..], offset as u64)
            .map_err(|e| anyhow!("disassembly failed: {e}"))?;
        let mut decoded = 0usize;
        for insn in insns.iter() {
            let at = insn.address();
            let bytes = insn.bytes();
            let text = format!(
                "{} {}",
                insn.mnemonic().unwrap_or("?"),
                insn.op_str().unwrap_or("")
            );
            write_line(out, at, bytes, text.trim_end());
            write_relocs(out, relocs, at, at + bytes.len() as u64);
            decoded += bytes.len();
        }
        offset += decoded;
        if offset < code.len() {
            // Capstone stops at the first undecodable word (a literal pool, padding).
            let len = 4.min(code.len() - offset);
            let word = &code[offset..offset + len];
            let value = word
                .iter()
                .rev()
                .fold(0u32, |acc, b| (acc << 8) | u32::from(*b));
            write_line(out, offset as u64, word, &format!(".word 0x{value:08x}"));
            write_relocs(out, relocs, offset as u64, (offset + len) as u64);
            offset += len;
        }
    }
    Ok(())
}

fn write_line(out: &mut String, offset: u64, bytes: &[u8], text: &str) {
    let hex: Vec<String> = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let _ = writeln!(out, "  {offset:6x}:  {:<29} {text}", hex.join(" "));
}

fn write_relocs(out: &mut String, relocs: &[(u64, String)], from: u64, to: u64) {
    for (_, text) in relocs.iter().filter(|(off, _)| *off >= from && *off < to) {
        let _ = writeln!(out, "  {:6}   {:<29} ; {text}", "", "");
    }
}

fn describe_reloc(file: &object::File, r: &object::Relocation) -> String {
    let target = match r.target() {
        RelocationTarget::Symbol(i) => file
            .symbol_by_index(i)
            .ok()
            .and_then(|s| s.name().ok().map(str::to_string))
            .unwrap_or_else(|| "?".into()),
        RelocationTarget::Section(i) => file
            .section_by_index(i)
            .ok()
            .and_then(|s| s.name().ok().map(str::to_string))
            .unwrap_or_else(|| "?".into()),
        _ => "?".into(),
    };
    let kind = match r.flags() {
        RelocationFlags::Elf { r_type } => elf_reloc_name(file.architecture(), r_type),
        other => format!("{other:?}"),
    };
    match r.addend() {
        0 => format!("{kind} {target}"),
        a if a > 0 => format!("{kind} {target}+{a}"),
        a => format!("{kind} {target}{a}"),
    }
}

fn elf_reloc_name(arch: object::Architecture, r_type: u32) -> String {
    use object::elf::*;
    let name = match (arch, r_type) {
        (object::Architecture::Aarch64, R_AARCH64_ABS64) => "R_AARCH64_ABS64",
        (object::Architecture::Aarch64, R_AARCH64_CALL26) => "R_AARCH64_CALL26",
        (object::Architecture::Aarch64, R_AARCH64_JUMP26) => "R_AARCH64_JUMP26",
        (object::Architecture::Aarch64, R_AARCH64_ADR_PREL_PG_HI21) => "R_AARCH64_ADR_PREL_PG_HI21",
        (object::Architecture::Aarch64, R_AARCH64_ADD_ABS_LO12_NC) => "R_AARCH64_ADD_ABS_LO12_NC",
        (object::Architecture::Aarch64, R_AARCH64_ADR_PREL_LO21) => "R_AARCH64_ADR_PREL_LO21",
        (object::Architecture::Aarch64, R_AARCH64_CONDBR19) => "R_AARCH64_CONDBR19",
        (object::Architecture::Aarch64, R_AARCH64_TSTBR14) => "R_AARCH64_TSTBR14",
        (object::Architecture::Aarch64, R_AARCH64_ADR_GOT_PAGE) => "R_AARCH64_ADR_GOT_PAGE",
        (object::Architecture::Aarch64, R_AARCH64_LD64_GOT_LO12_NC) => "R_AARCH64_LD64_GOT_LO12_NC",
        (object::Architecture::X86_64, R_X86_64_64) => "R_X86_64_64",
        (object::Architecture::X86_64, R_X86_64_PC32) => "R_X86_64_PC32",
        (object::Architecture::X86_64, R_X86_64_PLT32) => "R_X86_64_PLT32",
        (object::Architecture::X86_64, R_X86_64_GOTPCREL) => "R_X86_64_GOTPCREL",
        (object::Architecture::X86_64, R_X86_64_GOTPCRELX) => "R_X86_64_GOTPCRELX",
        (object::Architecture::X86_64, R_X86_64_REX_GOTPCRELX) => "R_X86_64_REX_GOTPCRELX",
        _ => return format!("reloc#{r_type}"),
    };
    name.to_string()
}
