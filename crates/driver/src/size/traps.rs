//! Trap paths in machine code: the stubs inside functions, and functions
//! that are nothing but one.
//!
//! A *trap stub* is the code a failed check runs (docs/LANGUAGE.md, "Traps
//! and exit status"; the lowering's cold trap blocks): the trap code moved
//! into the first argument register, a call to a *trap target*, and the
//! undefined instruction Cranelift emits after a call that never returns —
//!
//! ```text
//! aarch64:  [mov w0|w2, #k]   bl T | b T   [udf #imm]
//! x86_64:   [mov edi, k | xor edi, edi]   call T | jmp T   [ud2]
//! ```
//!
//! (bracketed parts optional). The trap targets are `pare_trap` (the
//! runtime's helper), every function named as a shared trap path
//! ([`super::names::is_trap_path_name`]), and every function whose whole
//! code is one trap stub — what the outliner makes of `mov w2, #k; bl
//! pare_trap` (`mov w2, #k; b pare_trap`), and what the shared per-kind
//! trap paths `pare_trap_<kind>` are. A call's target is its resolved
//! address in an executable, its relocation's symbol in an object (of any
//! object: the paths are defined in the runtime's).
//!
//! On aarch64 a failed check of Pare code is `cbz`/`b.cond` to an island
//! `b pare_trap_<kind>` (one per kind per function, docs/DESIGN.md, "Trap
//! paths"): the island is a stub of one instruction, and the shared path
//! a function of its own. The stubs with a call (`mov w2, #k; bl
//! pare_trap`) remain in the runtime's own checks and on x86_64.

use std::collections::BTreeSet;

use super::elf::{Arch, CodeSection};

/// What a call or branch may reach that counts as a trap target.
#[derive(Clone, Debug, Default)]
pub struct TrapTargets {
    /// Executables: addresses of trap targets.
    pub addresses: BTreeSet<u64>,
    /// Objects: names of trap targets (relocation symbols).
    pub names: BTreeSet<String>,
}

/// A range of a code section: `start` (an address) and `size`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Range {
    pub start: u64,
    pub size: u64,
}

/// The trap stubs in `range` of `section`, in address order.
pub fn stubs(arch: Arch, section: &CodeSection, range: Range, targets: &TrapTargets) -> Vec<Range> {
    let Some(code) = bytes_of(section, range) else {
        return Vec::new();
    };
    match arch {
        Arch::Aarch64 => aarch64_stubs(section, range, code, targets),
        Arch::X86_64 => x86_64_stubs(section, range, code, targets),
    }
}

/// Bytes of the trap stubs in `range`.
pub fn stub_bytes(arch: Arch, section: &CodeSection, range: Range, targets: &TrapTargets) -> u64 {
    stubs(arch, section, range, targets)
        .iter()
        .map(|r| r.size)
        .sum()
}

/// Whether `range` is exactly one trap stub.
pub fn is_stub(arch: Arch, section: &CodeSection, range: Range, targets: &TrapTargets) -> bool {
    stubs(arch, section, range, targets) == [range]
}

fn bytes_of(section: &CodeSection, range: Range) -> Option<&[u8]> {
    let start = usize::try_from(range.start.checked_sub(section.address)?).ok()?;
    let end = start.checked_add(usize::try_from(range.size).ok()?)?;
    section.bytes.get(start..end)
}

/// Whether the call or branch whose target field is at `field` (an
/// address) and whose target is `resolved` reaches a trap target.
fn reaches_target(section: &CodeSection, field: u64, resolved: u64, targets: &TrapTargets) -> bool {
    if targets.addresses.contains(&resolved) {
        return true;
    }
    section
        .relocs
        .get(&(field - section.address))
        .is_some_and(|name| targets.names.contains(name))
}

fn aarch64_stubs(
    section: &CodeSection,
    range: Range,
    code: &[u8],
    targets: &TrapTargets,
) -> Vec<Range> {
    let words: Vec<u32> = code
        .chunks_exact(4)
        .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
        .collect();
    let mut stubs = Vec::new();
    let mut after_last = 0;
    for (i, &word) in words.iter().enumerate() {
        let is_bl = word & 0xFC00_0000 == 0x9400_0000;
        let is_b = word & 0xFC00_0000 == 0x1400_0000;
        if !is_bl && !is_b {
            continue;
        }
        let pc = range.start + 4 * i as u64;
        let offset = (((word & 0x03FF_FFFF) << 6) as i32 >> 4) as i64;
        if !reaches_target(section, pc, pc.wrapping_add_signed(offset), targets) {
            continue;
        }
        let first = if i > after_last && sets_first_argument_aarch64(words[i - 1]) {
            i - 1
        } else {
            i
        };
        let mut last = i;
        if is_bl && words.get(i + 1).is_some_and(|&w| w & 0xFFFF_0000 == 0) {
            last = i + 1;
        }
        stubs.push(Range {
            start: range.start + 4 * first as u64,
            size: 4 * (last - first + 1) as u64,
        });
        after_last = last + 1;
    }
    stubs
}

/// `mov w0, #imm` / `mov x0, #imm` (movz, movn, or orr with the zero
/// register), or the same into `w2`/`x2`: the first argument of Cranelift's
/// `tail` convention, which `pare_trap` uses.
fn sets_first_argument_aarch64(word: u32) -> bool {
    let rd_is_0 = matches!(word & 0x1F, 0 | 2);
    let movz = word & 0x7F80_0000 == 0x5280_0000;
    let movn = word & 0x7F80_0000 == 0x1280_0000;
    let orr_zr = word & 0x7F80_0000 == 0x3200_0000 && (word >> 5) & 0x1F == 31;
    rd_is_0 && (movz || movn || orr_zr)
}

fn x86_64_stubs(
    section: &CodeSection,
    range: Range,
    code: &[u8],
    targets: &TrapTargets,
) -> Vec<Range> {
    let mut stubs = Vec::new();
    let mut after_last = 0;
    let mut i = 0;
    while i + 5 <= code.len() {
        let op = code[i];
        if op != 0xE8 && op != 0xE9 {
            i += 1;
            continue;
        }
        let rel = i32::from_le_bytes([code[i + 1], code[i + 2], code[i + 3], code[i + 4]]);
        let next = range.start + i as u64 + 5;
        if !reaches_target(
            section,
            next - 4,
            next.wrapping_add_signed(rel.into()),
            targets,
        ) {
            i += 1;
            continue;
        }
        let first = if i >= after_last + 5 && code[i - 5] == 0xBF {
            i - 5
        } else if i >= after_last + 2 && matches!(code[i - 2..i], [0x31, 0xFF] | [0x33, 0xFF]) {
            i - 2
        } else {
            i
        };
        let mut end = i + 5;
        if op == 0xE8 && code.get(end..end + 2) == Some(&[0x0F, 0x0B]) {
            end += 2;
        }
        stubs.push(Range {
            start: range.start + first as u64,
            size: (end - first) as u64,
        });
        after_last = end;
        i = end;
    }
    stubs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section(words: &[u32], address: u64) -> CodeSection {
        CodeSection {
            index: 1,
            name: ".text".into(),
            address,
            bytes: words.iter().flat_map(|w| w.to_le_bytes()).collect(),
            relocs: Default::default(),
        }
    }

    /// `bl` from `from` to `to`.
    fn bl(from: u64, to: u64) -> u32 {
        0x9400_0000 | (((to as i64 - from as i64) >> 2) as u32 & 0x03FF_FFFF)
    }

    #[test]
    fn aarch64_stub_with_mov_call_and_udf() {
        let trap = 0x1000;
        // ret; mov w0, #2; bl trap; udf #0xc11f
        let code = section(
            &[0xD65F_03C0, 0x5280_0040, bl(0x108, trap), 0x0000_C11F],
            0x100,
        );
        let targets = TrapTargets {
            addresses: [trap].into(),
            ..TrapTargets::default()
        };
        let range = Range {
            start: 0x100,
            size: 16,
        };
        assert_eq!(
            stubs(Arch::Aarch64, &code, range, &targets),
            [Range {
                start: 0x104,
                size: 12
            }]
        );
        assert!(!is_stub(Arch::Aarch64, &code, range, &targets));
        let stub = Range {
            start: 0x104,
            size: 12,
        };
        assert!(is_stub(Arch::Aarch64, &code, stub, &targets));
        // A call elsewhere is no stub.
        assert!(stubs(Arch::Aarch64, &code, range, &TrapTargets::default()).is_empty());
    }

    #[test]
    fn aarch64_stub_by_relocation_in_an_object() {
        let mut code = section(&[0x5280_0020, 0x1400_0000], 0);
        code.relocs.insert(4, "pare_trap".into());
        let targets = TrapTargets {
            names: ["pare_trap".to_string()].into(),
            ..TrapTargets::default()
        };
        let range = Range { start: 0, size: 8 };
        assert!(is_stub(Arch::Aarch64, &code, range, &targets));
    }

    #[test]
    fn aarch64_island_and_tail_convention_stub() {
        // cbz x0, +12; ret; b pare_trap_null_dereference; mov w2, #3; bl pare_trap
        let mut code = section(
            &[
                0xB400_0060,
                0xD65F_03C0,
                0x1400_0000,
                0x5280_0062,
                0x9400_0000,
            ],
            0,
        );
        code.relocs.insert(8, "pare_trap_null_dereference".into());
        code.relocs.insert(16, "pare_trap".into());
        let targets = TrapTargets {
            names: ["pare_trap".to_string(), "pare_trap_null_dereference".into()].into(),
            ..TrapTargets::default()
        };
        let range = Range { start: 0, size: 20 };
        assert_eq!(
            stubs(Arch::Aarch64, &code, range, &targets),
            [Range { start: 8, size: 4 }, Range { start: 12, size: 8 }]
        );
    }

    #[test]
    fn x86_64_stub() {
        // mov edi, 3; call +0 (to 0x20a); ud2
        let bytes = vec![0xBF, 3, 0, 0, 0, 0xE8, 0, 0, 0, 0, 0x0F, 0x0B];
        let code = CodeSection {
            index: 1,
            name: ".text".into(),
            address: 0x200,
            bytes,
            relocs: Default::default(),
        };
        let targets = TrapTargets {
            addresses: [0x20a].into(),
            ..TrapTargets::default()
        };
        let range = Range {
            start: 0x200,
            size: 12,
        };
        assert!(is_stub(Arch::X86_64, &code, range, &targets));
    }
}
