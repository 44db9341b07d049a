//! Lifting emitted aarch64 code to an instruction list with symbolic
//! targets, and laying it out again.
//!
//! # Lifting
//!
//! Cranelift resolves every intra-function reference before it hands out the
//! bytes: only external references remain as relocations. Lifting recovers
//! the rest by recursive traversal from the entry, the block starts
//! (`machine_code_cfg_info`) and every branch target found on the way:
//!
//! - a word reached by control flow is an instruction; its [`Form`] says
//!   whether it branches, ends the flow, or holds a PC-relative field;
//! - `br` ending Cranelift's jump-table sequence (`cmp wI, #n; movz xB,
//!   #n; csel xB, xI, xB, lo; [csdb]; adr xA, #16; ldrsw; add; br xA`, any
//!   registers; [`jump_table_bound`], which also finds the bound when
//!   machine passes moved the `cmp` and `movz` or deleted a repeated
//!   `movz`) is followed by `n + 1` 32-bit offsets relative to the table
//!   start: they become [`Item::JumpEntry`]s and their targets are
//!   traversed;
//! - an `ldr` literal marks `size` bytes at its target as data (constant
//!   pools at the end, `ldr; b; .8byte` address literals inline); an
//!   `Abs8`/`Abs4` relocation marks its bytes as data;
//! - every byte not reached is data. Zero bytes that only align a following
//!   literal are padding and are regenerated on layout; any other unexplained
//!   byte makes the function *opaque*: it keeps its bytes and is never
//!   rewritten (it still round-trips).
//!
//! Every PC-relative field without a relocation gets a symbolic target (an
//! item label); relocations, trap records and call-site records are attached
//! to the item they cover. [`LiftedFunction::layout`] recomputes offsets,
//! re-encodes every PC-relative field and moves the records: on an untouched
//! lifted function it reproduces the original bytes exactly.

use cranelift_codegen::binemit::Reloc;
use cranelift_codegen::ir::TrapCode;
use std::collections::{BTreeMap, BTreeSet};

use super::decode::{Decoder, Effects, Form, CALL_KILLS, CALL_USES, RETURN_USES};
use super::{MachFunction, MachReloc, RelocKind, RelocTarget};

/// A stable name of an item, independent of its position: branch targets
/// refer to labels, so items can be inserted and removed.
pub type Label = u32;

/// One instruction of a lifted function.
#[derive(Clone, Debug)]
pub struct Inst {
    /// The instruction word as emitted (PC-relative fields are re-encoded on
    /// layout from [`Inst::target`]).
    pub word: u32,
    pub form: Form,
    /// The item a PC-relative field without relocation refers to.
    pub target: Option<Label>,
    /// The external reference of this word, if any.
    pub reloc: Option<MachReloc>,
    pub trap: Option<TrapCode>,
    /// A call-site record has its return address right after this word.
    pub call_site: bool,
    /// This `br` dispatches through the jump table that follows.
    pub jump_table: bool,
    pub effects: Effects,
}

impl Inst {
    /// Whether this is a call (`bl` or `blr`): it writes `x30`.
    pub fn is_call(&self) -> bool {
        matches!(self.form, Form::Bl | Form::Blr { .. })
    }

    /// Whether this is a jump to another function (a tail call through `b`
    /// with a relocation or a non-table `br`).
    pub fn is_tail_jump(&self) -> bool {
        match self.form {
            Form::B => self.reloc.is_some(),
            Form::Br { .. } => !self.jump_table,
            _ => false,
        }
    }
}

/// Bytes that are not instructions.
#[derive(Clone, Debug)]
pub struct Data {
    pub bytes: Vec<u8>,
    /// Alignment (relative to the function start) kept on layout.
    pub align: u32,
    /// Relocations inside, at offsets relative to the data's start.
    pub relocs: Vec<MachReloc>,
}

/// An element of a lifted function.
#[derive(Clone, Debug)]
pub enum Item {
    Inst(Inst),
    Data(Data),
    /// A 32-bit jump-table entry: `target - table start`.
    JumpEntry {
        table: Label,
        target: Label,
    },
}

impl Item {
    pub fn size(&self) -> u32 {
        match self {
            Item::Inst(_) | Item::JumpEntry { .. } => 4,
            Item::Data(d) => d.bytes.len() as u32,
        }
    }
}

/// A function as a list of labelled items.
#[derive(Clone, Debug)]
pub struct LiftedFunction {
    pub name: String,
    pub alignment: u32,
    pub items: Vec<(Label, Item)>,
    /// Why the function cannot be rewritten (it is then one opaque item).
    pub opaque: Option<String>,
    /// The next unused label.
    pub next_label: Label,
}

/// A laid-out function: bytes and the records moved with the code.
#[derive(Clone, Debug, PartialEq)]
pub struct Emitted {
    pub bytes: Vec<u8>,
    pub alignment: u32,
    pub relocs: Vec<MachReloc>,
    pub traps: Vec<(u32, TrapCode)>,
    /// Return addresses of call sites.
    pub call_sites: Vec<u32>,
}

/// Why a layout failed (a field out of range): the caller keeps the original.
#[derive(Debug)]
pub struct LayoutError(pub String);

/// Lifts one compiled function (see the module doc).
pub fn lift(func: &MachFunction, decoder: &mut Decoder) -> LiftedFunction {
    lift_with(func, Some(decoder), Reach::Traced)
}

/// [`lift`] without register effects (every [`Inst::effects`] is empty):
/// for passes that read only forms, targets and records, which then need
/// no disassembler at all.
pub fn lift_forms(func: &MachFunction) -> LiftedFunction {
    lift_with(func, None, Reach::Traced)
}

/// Lifts code read back from a linked executable or an object file, for
/// reports: `func` has no block starts, trap or call-site records, and a
/// relocation on every PC-relative word that reaches outside it (the
/// caller makes them from the file's relocations or resolved addresses).
/// Code no branch reaches — the targets of a jump table in another
/// section — is decoded too, by a linear sweep over the words traversal
/// left unknown (zero words stay data). The result is for reading: it is
/// not meant to be laid out again.
pub fn lift_linked(func: &MachFunction, decoder: &mut Decoder) -> LiftedFunction {
    lift_with(func, Some(decoder), Reach::Swept)
}

/// Which words are instructions: those control reaches from the entry and
/// the block starts, or also every other non-zero word (linked code).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Reach {
    Traced,
    Swept,
}

fn lift_with(func: &MachFunction, decoder: Option<&mut Decoder>, reach: Reach) -> LiftedFunction {
    match Lifter::new(func, decoder, reach).run() {
        Ok(items) => {
            let next_label = items.len() as Label;
            LiftedFunction {
                name: func.name.clone(),
                alignment: func.alignment,
                items,
                opaque: None,
                next_label,
            }
        }
        Err(reason) => opaque(func, reason),
    }
}

/// The whole function as one data item.
fn opaque(func: &MachFunction, reason: String) -> LiftedFunction {
    LiftedFunction {
        name: func.name.clone(),
        alignment: func.alignment,
        items: vec![(
            0,
            Item::Data(Data {
                bytes: func.bytes.clone(),
                align: 1,
                relocs: func.relocs.clone(),
            }),
        )],
        opaque: Some(reason),
        next_label: 1,
    }
}

/// What a byte range of the function is, once traversal is done.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Unknown,
    Code,
    /// Data whose meaning is known (literal, jump table, relocated word).
    Data,
}

struct Lifter<'a> {
    func: &'a MachFunction,
    reach: Reach,
    /// The effects' decoder; `None`: no effects.
    decoder: Option<&'a mut Decoder>,
    kind: Vec<Kind>,
    /// Offsets that must start an item (branch and literal targets).
    targets: BTreeMap<u32, ()>,
    /// Literal regions: start → (size).
    literals: BTreeMap<u32, u32>,
    /// Jump tables: start → (entry count, the `br` offset).
    tables: BTreeMap<u32, u32>,
    jump_table_brs: Vec<u32>,
    relocs: BTreeMap<u32, MachReloc>,
}

impl<'a> Lifter<'a> {
    fn new(func: &'a MachFunction, decoder: Option<&'a mut Decoder>, reach: Reach) -> Self {
        let relocs = func.relocs.iter().map(|r| (r.offset, r.clone())).collect();
        Lifter {
            func,
            reach,
            decoder,
            kind: vec![Kind::Unknown; func.bytes.len()],
            targets: BTreeMap::new(),
            literals: BTreeMap::new(),
            tables: BTreeMap::new(),
            jump_table_brs: Vec::new(),
            relocs,
        }
    }

    fn word(&self, at: u32) -> Option<u32> {
        let at = at as usize;
        let bytes = self.func.bytes.get(at..at + 4)?;
        Some(u32::from_le_bytes(bytes.try_into().ok()?))
    }

    fn mark(&mut self, start: u32, len: u32, kind: Kind) -> Result<(), String> {
        let end = start as usize + len as usize;
        if end > self.kind.len() {
            return Err(format!("{kind:?} at {start:#x} runs past the end"));
        }
        for k in &mut self.kind[start as usize..end] {
            if *k != Kind::Unknown && *k != kind {
                return Err(format!("{start:#x} is both code and data"));
            }
            *k = kind;
        }
        Ok(())
    }

    fn run(mut self) -> Result<Vec<(Label, Item)>, String> {
        let len = self.func.bytes.len() as u32;
        if !len.is_multiple_of(4) {
            return Err(format!("size {len} is not a multiple of 4"));
        }
        for r in &self.func.relocs {
            match r.kind {
                RelocKind::Cranelift(Reloc::Abs8) => self.mark(r.offset, 8, Kind::Data)?,
                RelocKind::Cranelift(Reloc::Abs4) => self.mark(r.offset, 4, Kind::Data)?,
                // Each of these is resolved by the linker at the word's own
                // (new) address: they move with their instruction.
                RelocKind::Cranelift(
                    Reloc::Arm64Call
                    | Reloc::Aarch64AdrPrelPgHi21
                    | Reloc::Aarch64AddAbsLo12Nc
                    | Reloc::Aarch64AdrGotPage21
                    | Reloc::Aarch64Ld64GotLo12Nc,
                )
                | RelocKind::Aarch64AdrPrelLo21
                | RelocKind::Aarch64CondBr19
                | RelocKind::Aarch64TstBr14 => {}
                other => return Err(format!("unsupported relocation {other:?}")),
            }
            if matches!(r.target, RelocTarget::FunctionOffset(_)) {
                return Err("relocation to an offset of the function itself".into());
            }
        }
        let mut work: Vec<u32> = vec![0];
        work.extend(self.func.bb_starts.iter().rev());
        while let Some(start) = work.pop() {
            self.trace(start, len, &mut work)?;
        }
        if self.reach == Reach::Swept {
            for at in (0..len).step_by(4) {
                if self.kind[at as usize] == Kind::Unknown && self.word(at) != Some(0) {
                    work.push(at);
                    while let Some(start) = work.pop() {
                        self.trace(start, len, &mut work)?;
                    }
                }
            }
        }
        self.items()
    }

    /// Decodes straight-line code from `at` until the flow ends.
    fn trace(&mut self, mut at: u32, len: u32, work: &mut Vec<u32>) -> Result<(), String> {
        if !at.is_multiple_of(4) {
            return Err(format!("block start {at:#x} is misaligned"));
        }
        while at < len {
            match self.kind[at as usize] {
                Kind::Code => return Ok(()),
                Kind::Data => return Err(format!("control flow reaches data at {at:#x}")),
                Kind::Unknown => {}
            }
            self.mark(at, 4, Kind::Code)?;
            let w = self.word(at).ok_or("truncated word")?;
            let form = Form::of(w);
            let relocated = self.relocs.contains_key(&at);
            if form.is_pc_relative() && !relocated {
                let target = i64::from(at) + form.offset(w);
                if target < 0 || target > i64::from(len) {
                    return Err(format!("{at:#x} refers outside the function"));
                }
                let target = target as u32;
                self.targets.insert(target, ());
                match form {
                    Form::LdrLiteral { size } if size > 0 => {
                        self.mark(target, size, Kind::Data)?;
                        let entry = self.literals.entry(target).or_insert(size);
                        *entry = (*entry).max(size);
                    }
                    Form::Adr => {
                        // A jump-table base, or some label: code or data,
                        // decided by traversal; keep it an item boundary.
                    }
                    Form::Adrp => return Err(format!("adrp without relocation at {at:#x}")),
                    Form::LdrLiteral { .. } => {}
                    _ => work.push(target),
                }
            }
            if let Form::Br { .. } = form {
                if let Some((table, count)) = self.jump_table_at(at) {
                    self.mark(table, count * 4, Kind::Data)?;
                    for i in 0..count {
                        let entry = self.word(table + 4 * i).ok_or("truncated jump table")?;
                        let target = i64::from(table) + i64::from(entry as i32);
                        if target < 0 || target >= i64::from(len) || target % 4 != 0 {
                            return Err(format!("jump table entry {i} at {table:#x} is bad"));
                        }
                        self.targets.insert(target as u32, ());
                        work.push(target as u32);
                    }
                    self.tables.insert(table, count);
                    self.jump_table_brs.push(at);
                }
            }
            if form.ends_flow() {
                return Ok(());
            }
            at += 4;
        }
        Ok(())
    }

    /// Recognises Cranelift's jump-table sequence ending in the `br` at
    /// `at` ([`jump_table_bound`]); returns the table's offset and entry
    /// count (the bound's entries and the default one).
    fn jump_table_at(&self, at: u32) -> Option<(u32, u32)> {
        let before: Vec<u32> = (0..=at / 4)
            .rev()
            .take(JT_PREFIX + JT_SCAN)
            .map_while(|i| self.word(4 * i))
            .collect();
        let starts_block = |back: usize| {
            let offset = at - 4 * back as u32;
            self.func.bb_starts.contains(&offset)
        };
        let bound = jump_table_bound(&before, starts_block)?;
        Some((at + 4, bound + 1))
    }

    /// Builds the item list from the classified bytes.
    fn items(mut self) -> Result<Vec<(Label, Item)>, String> {
        let len = self.func.bytes.len() as u32;
        let last_code_end = self
            .kind
            .iter()
            .rposition(|k| *k == Kind::Code)
            .map_or(0, |p| p as u32 + 1);
        let traps: BTreeMap<u32, TrapCode> = self.func.traps.iter().map(|&(o, c)| (o, c)).collect();
        let call_sites: Vec<u32> = self.func.call_sites.clone();
        let mut items: Vec<(u32, Item)> = Vec::new();
        let mut at = 0u32;
        while at < len {
            match self.kind[at as usize] {
                Kind::Code => {
                    let w = self.word(at).ok_or("truncated word")?;
                    items.push((at, Item::Inst(self.inst(at, w, &traps, &call_sites)?)));
                    at += 4;
                }
                _ => {
                    if let Some(&count) = self.tables.get(&at) {
                        for i in 0..count {
                            let entry = self.word(at + 4 * i).ok_or("truncated jump table")?;
                            let target = (i64::from(at) + i64::from(entry as i32)) as u32;
                            items.push((at + 4 * i, Item::JumpEntry { table: at, target }));
                        }
                        at += 4 * count;
                        continue;
                    }
                    let end = self.data_end(at, len);
                    if let Some(data) = self.data(at, end, last_code_end)? {
                        items.push((at, Item::Data(data)));
                    }
                    at = end;
                }
            }
        }
        // Offsets → labels (the item index in the original order).
        let label_of: BTreeMap<u32, Label> = items
            .iter()
            .enumerate()
            .map(|(i, (o, _))| (*o, i as Label))
            .collect();
        let label = |offset: u32| -> Result<Label, String> {
            label_of
                .get(&offset)
                .copied()
                .ok_or_else(|| format!("target {offset:#x} is not an item boundary"))
        };
        for &t in self.targets.keys() {
            if t < len {
                label(t)?;
            }
        }
        for &(offset, _) in &self.func.traps {
            if !matches!(items.get(label(offset)? as usize), Some((_, Item::Inst(_)))) {
                return Err(format!("trap at {offset:#x} is not on an instruction"));
            }
        }
        for &ret in &self.func.call_sites {
            let at = label(ret.checked_sub(4).ok_or("call site at 0")?)?;
            if !matches!(items.get(at as usize), Some((_, Item::Inst(i))) if i.call_site) {
                return Err(format!("call site {ret:#x} follows no instruction"));
            }
        }
        let mut out = Vec::with_capacity(items.len());
        for (i, (offset, mut item)) in items.into_iter().enumerate() {
            match &mut item {
                Item::Inst(inst) => {
                    if inst.form.is_pc_relative() && inst.reloc.is_none() {
                        let t = i64::from(offset) + inst.form.offset(inst.word);
                        if t == i64::from(len) {
                            return Err("a target at the function's end".into());
                        }
                        inst.target = Some(label(t as u32)?);
                    }
                }
                Item::JumpEntry { table, target } => {
                    *table = label(*table)?;
                    *target = label(*target)?;
                }
                Item::Data(_) => {}
            }
            out.push((i as Label, item));
        }
        Ok(out)
    }

    fn inst(
        &mut self,
        at: u32,
        w: u32,
        traps: &BTreeMap<u32, TrapCode>,
        call_sites: &[u32],
    ) -> Result<Inst, String> {
        let form = Form::of(w);
        let reloc = self.relocs.get(&at).cloned();
        let jump_table = self.jump_table_brs.contains(&at);
        let mut inst = Inst {
            word: w,
            form,
            target: None,
            reloc,
            trap: traps.get(&at).copied(),
            call_site: call_sites.contains(&(at + 4)),
            jump_table,
            effects: Effects::default(),
        };
        if let Some(decoder) = self.decoder.as_deref_mut() {
            inst.effects = control_effects(&inst, decoder.effects(w));
        }
        Ok(inst)
    }

    /// The end of the data run starting at `at`: the next code byte, table,
    /// literal start or relocated word.
    fn data_end(&self, at: u32, len: u32) -> u32 {
        let mut end = at + 1;
        while end < len
            && self.kind[end as usize] != Kind::Code
            && !self.tables.contains_key(&end)
            && !self.literals.contains_key(&end)
            && !self.relocs.contains_key(&end)
        {
            end += 1;
        }
        // A literal or relocated word is its own item.
        if let Some(&size) = self.literals.get(&at) {
            end = end.max(at + size).min(len);
            while end < len
                && self.kind[end as usize] == Kind::Data
                && !self.literals.contains_key(&end)
                && !self.tables.contains_key(&end)
                && !self.relocs.contains_key(&end)
                && self.literal_covers(end)
            {
                end += 1;
            }
        }
        end
    }

    /// Whether `offset` lies inside some literal region.
    fn literal_covers(&self, offset: u32) -> bool {
        self.literals
            .range(..=offset)
            .next_back()
            .is_some_and(|(&s, &size)| offset < s + size)
    }

    /// A data item for `[at, end)`; `last_code_end` separates inline data
    /// from the trailing constant pool (whose alignment is kept).
    /// `None` for padding that layout regenerates.
    fn data(&self, at: u32, end: u32, last_code_end: u32) -> Result<Option<Data>, String> {
        let bytes = self.func.bytes[at as usize..end as usize].to_vec();
        let relocs: Vec<MachReloc> = self
            .relocs
            .range(at..end)
            .map(|(_, r)| MachReloc {
                offset: r.offset - at,
                ..r.clone()
            })
            .collect();
        let explained = self.literals.contains_key(&at)
            || !relocs.is_empty()
            || (at..end).all(|o| self.literal_covers(o));
        if explained {
            let size = self.literals.get(&at).copied().unwrap_or(4);
            let align = if at >= last_code_end && size > 4 && at.is_multiple_of(size) {
                size.min(16)
            } else {
                4
            };
            return Ok(Some(Data {
                bytes,
                align,
                relocs,
            }));
        }
        // Zero padding before an aligned literal is regenerated on layout.
        let next_aligned = self
            .literals
            .get(&end)
            .is_some_and(|&size| end >= last_code_end && size > 4 && end.is_multiple_of(size));
        if next_aligned && relocs.is_empty() && bytes.iter().all(|&b| b == 0) && (end - at) < 16 {
            return Ok(None);
        }
        if self.reach == Reach::Swept {
            // Linked code is read, not laid out: keep every byte in place.
            return Ok(Some(Data {
                bytes,
                align: 1,
                relocs,
            }));
        }
        Err(format!("unexplained data at {at:#x}..{end:#x}"))
    }
}

/// Words of the fixed tail of a jump-table sequence (`csel`, `csdb`, `adr`,
/// `ldrsw`, `add`, `br`): the most [`jump_table_bound`] reads before its
/// backward scan.
const JT_PREFIX: usize = 6;
/// How many words before the `csel` [`jump_table_bound`] looks for the
/// bound and the compare.
const JT_SCAN: usize = 8;

/// The bound `n` of Cranelift 0.135's jump-table sequence (`JTSequence` in
/// `cranelift/codegen/src/isa/aarch64/inst/emit.rs`, after the `cmp` its
/// lowering puts first), for any registers `i` (index), `a`, `b`:
///
/// ```text
///     cmp  wI, #n            ; or a register holding n; xI after a pass
///     movz xB, #n
///     csel xB, xI, xB, lo    ; out of range: entry n, the default
///     [csdb]
///     adr  xA, #16
///     ldrsw xB, [xA, wB, uxtw #2]
///     add  xA, xA, xB
///     br   xA
/// table: n + 1 words, each `target - table`
/// ```
///
/// `before[k]` is the word `k` words before the `br` (`before[0]` the
/// `br`); `starts_block(k)` whether it starts a block (control may enter
/// there from elsewhere). The fixed tail must be exact. The `cmp` and the
/// `movz` are found by a backward scan of at most [`JT_SCAN`] words from
/// the `csel` through words that write one register (`movz`/`movn`/`movk`,
/// `add`/`sub`, logical, conditional selects) or only the flags (`cmp`), so
/// that machine passes may move them apart or delete a `movz` that repeats
/// an earlier one (`crate::peephole` rule 2): the nearest flag write must
/// be a compare of `wI`/`xI` (with `#n`, or a register), `xI` unwritten
/// after it but by a clamp `csel xI, xI, xK, lo` (`crate::peephole` rule
/// 8 may leave one), and the nearest write of `xB` a `movz` of `n`; the
/// scan never passes a block start.
pub fn jump_table_bound(before: &[u32], starts_block: impl Fn(usize) -> bool) -> Option<u32> {
    let Form::Br { rn: a } = Form::of(*before.first()?) else {
        return None;
    };
    let reg = |w: u32, shift: u32| (w >> shift) & 31;
    let add = *before.get(1)?;
    let ldrsw = *before.get(2)?;
    let adr = *before.get(3)?;
    if add & 0xFFE0_FC00 != 0x8B00_0000 || reg(add, 0) != a || reg(add, 5) != a {
        return None;
    }
    let b = reg(add, 16);
    if b == a
        || ldrsw & 0xFFE0_FC00 != 0xB8A0_5800
        || reg(ldrsw, 0) != b
        || reg(ldrsw, 5) != a
        || reg(ldrsw, 16) != b
        || Form::of(adr) != Form::Adr
        || Form::Adr.offset(adr) != 16
        || reg(adr, 0) != a
    {
        return None;
    }
    let mut k = 4;
    if *before.get(k)? == CSDB {
        k += 1;
    }
    let csel = *before.get(k)?;
    // csel (32- or 64-bit), condition `lo`, `xB` kept when out of range.
    if csel & 0x7FE0_FC00 != 0x1A80_3000 || reg(csel, 0) != b || reg(csel, 16) != b {
        return None;
    }
    let i = reg(csel, 5);
    if i == b || (1..=k).any(&starts_block) {
        return None;
    }
    let mut compare: Option<Option<u32>> = None;
    let mut bound: Option<u32> = None;
    for back in k + 1..=k + JT_SCAN {
        let w = *before.get(back)?;
        let (rd, sets_flags) = single_write(w)?;
        if sets_flags && compare.is_none() {
            // The flags `csel` reads: `cmp wI|xI, #imm` or `cmp wI|xI, reg`.
            if rd != 31 || reg(w, 5) != i || w & 0x4000_0000 == 0 {
                return None;
            }
            compare = Some(match w & 0x1F00_0000 {
                0x1100_0000 if w & 0x0040_0000 == 0 => Some((w >> 10) & 0xFFF),
                0x0B00_0000 if w & 0x00C0_FC00 == 0 => None,
                _ => return None,
            });
        } else if rd == i && compare.is_none() {
            // Only a clamp of the index on the same condition (`csel xI,
            // xI, xK, lo`, the `umin` of `crate::switches`) keeps it below
            // the bound whenever `lo` holds.
            if w & 0x7FE0_FC00 != 0x1A80_3000 || reg(w, 5) != i {
                return None;
            }
        } else if rd == b && bound.is_none() {
            // movz xB|wB, #n (no shift)
            if w & 0x7FE0_0000 != 0x5280_0000 {
                return None;
            }
            bound = Some((w >> 5) & 0xFFFF);
        }
        if let (Some(imm), Some(n)) = (compare, bound) {
            return (imm.is_none_or(|imm| imm == n)).then_some(n);
        }
        if starts_block(back) {
            return None;
        }
    }
    None
}

/// `csdb`, Cranelift's speculation barrier in the sequence.
const CSDB: u32 = 0xD503_229F;

/// The register a word writes and whether it writes the flags too, for the
/// words [`jump_table_bound`] may scan past: move wide, `add`/`sub`
/// (immediate or shifted register), logical (shifted register) and the
/// conditional selects; `None` for any other word. Register 31 is `xzr`
/// or `sp` (neither is an allocatable index or temporary).
fn single_write(w: u32) -> Option<(u32, bool)> {
    let rd = w & 31;
    let s = w & 0x2000_0000 != 0;
    match w {
        _ if w & 0x1F80_0000 == 0x1280_0000 && w & 0x6000_0000 != 0x2000_0000 => Some((rd, false)),
        _ if w & 0x1F80_0000 == 0x1100_0000 => Some((rd, s)),
        _ if w & 0x1F20_0000 == 0x0B00_0000 => Some((rd, s)),
        _ if w & 0x1F00_0000 == 0x0A00_0000 => Some((rd, w & 0x6000_0000 == 0x6000_0000)),
        _ if w & 0x3FE0_0000 == 0x1A80_0000 => Some((rd, false)),
        _ => None,
    }
}

/// Adds the calling convention to the decoder's effects of control flow.
pub fn control_effects(inst: &Inst, mut e: Effects) -> Effects {
    match inst.form {
        Form::Bl | Form::Blr { .. } => {
            e.uses |= CALL_USES;
            e.defs |= CALL_KILLS;
            e.kills |= CALL_KILLS;
        }
        _ if inst.is_tail_jump() => {
            e.uses |= RETURN_USES | CALL_USES;
        }
        _ => {}
    }
    e
}

/// Labels some instruction or jump table of `items` refers to: the items
/// control can reach other than by falling through.
pub fn targeted_labels(items: &[(Label, Item)]) -> BTreeSet<Label> {
    let mut targeted = BTreeSet::new();
    for (_, item) in items {
        match item {
            Item::Inst(inst) => targeted.extend(inst.target),
            Item::JumpEntry { table, target } => {
                targeted.insert(*table);
                targeted.insert(*target);
            }
            Item::Data(_) => {}
        }
    }
    targeted
}

impl LiftedFunction {
    /// Labels some instruction or jump table refers to: the items control
    /// can reach other than by falling through.
    pub fn targeted_labels(&self) -> BTreeSet<Label> {
        targeted_labels(&self.items)
    }

    /// The offset of every item's label in the layout.
    pub fn offsets(&self) -> BTreeMap<Label, u32> {
        let mut offsets: BTreeMap<Label, u32> = BTreeMap::new();
        let mut at = 0u32;
        for (label, item) in &self.items {
            if let Item::Data(d) = item {
                at = at.next_multiple_of(d.align.max(1));
            }
            offsets.insert(*label, at);
            at += item.size();
        }
        offsets
    }

    /// Lays the items out: offsets (with alignment padding for data),
    /// PC-relative fields re-encoded, records moved. A function left
    /// without code is refused: its entry would run into whatever the
    /// linker places next (the caller keeps the code it had).
    pub fn layout(&self) -> Result<Emitted, LayoutError> {
        if self.items.is_empty() {
            return Err(LayoutError("a function cannot be left without code".into()));
        }
        let offsets = self.offsets();
        let at = self
            .items
            .last()
            .map_or(0, |(label, item)| offsets[label] + item.size());
        let offset_of = |l: Label| -> Result<u32, LayoutError> {
            offsets
                .get(&l)
                .copied()
                .ok_or_else(|| LayoutError(format!("label {l} has no item")))
        };
        let mut out = Emitted {
            bytes: Vec::with_capacity(at as usize),
            alignment: self.alignment,
            relocs: Vec::new(),
            traps: Vec::new(),
            call_sites: Vec::new(),
        };
        for (label, item) in &self.items {
            let here = offset_of(*label)?;
            out.bytes.resize(here as usize, 0);
            match item {
                Item::Inst(inst) => {
                    let mut word = inst.word;
                    if let Some(t) = inst.target {
                        let delta = i64::from(offset_of(t)?) - i64::from(here);
                        word = inst.form.with_offset(word, delta).ok_or_else(|| {
                            LayoutError(format!("{}: branch at {here:#x} out of range", self.name))
                        })?;
                    }
                    out.bytes.extend_from_slice(&word.to_le_bytes());
                    if let Some(r) = &inst.reloc {
                        out.relocs.push(MachReloc {
                            offset: here,
                            ..r.clone()
                        });
                    }
                    if let Some(code) = inst.trap {
                        out.traps.push((here, code));
                    }
                    if inst.call_site {
                        out.call_sites.push(here + 4);
                    }
                }
                Item::Data(d) => {
                    out.bytes.extend_from_slice(&d.bytes);
                    for r in &d.relocs {
                        out.relocs.push(MachReloc {
                            offset: here + r.offset,
                            ..r.clone()
                        });
                    }
                }
                Item::JumpEntry { table, target } => {
                    let delta = i64::from(offset_of(*target)?) - i64::from(offset_of(*table)?);
                    let delta = i32::try_from(delta)
                        .map_err(|_| LayoutError("jump-table entry out of range".into()))?;
                    out.bytes.extend_from_slice(&delta.to_le_bytes());
                }
            }
        }
        Ok(out)
    }
}

/// `func` laid out as `rewritten`, a rewrite of its lifting `original`
/// (the same labels, items changed or removed), with its block starts
/// moved; `None` if the layout fails (the caller keeps `func`).
pub fn relaid(
    func: &MachFunction,
    original: &LiftedFunction,
    rewritten: &LiftedFunction,
) -> Option<MachFunction> {
    let emitted = rewritten.layout().ok()?;
    let old_offsets = original.offsets();
    let new_offsets = rewritten.offsets();
    let label_at: BTreeMap<u32, Label> = old_offsets.iter().map(|(&l, &o)| (o, l)).collect();
    let old_len = func.bytes.len() as u32;
    let new_len = emitted.bytes.len() as u32;
    let bb_starts = func
        .bb_starts
        .iter()
        .filter_map(|start| match label_at.get(start) {
            Some(label) => new_offsets.get(label).copied(),
            None => (*start == old_len).then_some(new_len),
        })
        .collect();
    Some(MachFunction {
        name: func.name.clone(),
        bytes: emitted.bytes,
        alignment: emitted.alignment,
        bb_starts,
        relocs: emitted.relocs,
        traps: emitted.traps,
        call_sites: emitted.call_sites,
        shared: func.shared,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::testing::function;

    const MOVZ_X2_3: u32 = 0xD280_0062;
    const CMP_X1_X2: u32 = 0xEB02_003F;
    const CSEL_X1_X1_X2_LO: u32 = 0x9A82_3021;
    const CMP_W1_3: u32 = 0x7100_0C3F;
    const CSEL_X2_X1_X2_LO: u32 = 0x9A82_3022;
    /// `adr x3, #16; ldrsw x2, [x3, w2, uxtw #2]; add x3, x3, x2; br x3`.
    const TAIL: [u32; 4] = [0x1000_0083, 0xB8A2_5862, 0x8B02_0063, 0xD61F_0060];
    /// Four entries at the table's start (n = 3 and the default) and two
    /// targets: `mov x0, #1; ret` 16 bytes on, `mov x0, #2; ret` 24 on.
    const TABLE_AND_TARGETS: [u32; 8] = [
        16,
        24,
        16,
        24,
        0xD280_0020,
        0xD65F_03C0,
        0xD280_0040,
        0xD65F_03C0,
    ];

    fn with_table(prefix: &[u32]) -> MachFunction {
        let words: Vec<u32> = prefix
            .iter()
            .chain(&TAIL)
            .chain(&TABLE_AND_TARGETS)
            .copied()
            .collect();
        function(&words)
    }

    fn entries(lifted: &LiftedFunction) -> usize {
        let entries = lifted.items.iter();
        entries
            .filter(|(_, item)| matches!(item, Item::JumpEntry { .. }))
            .count()
    }

    #[test]
    fn cranelift_sequence_with_any_registers_lifts() {
        let f = with_table(&[CMP_W1_3, MOVZ_X2_3, CSEL_X2_X1_X2_LO]);
        let lifted = lift_forms(&f);
        assert_eq!(lifted.opaque, None);
        assert_eq!(entries(&lifted), 4);
        assert_eq!(lifted.layout().unwrap().bytes, f.bytes);
    }

    #[test]
    fn clamped_index_with_the_bound_made_once_lifts() {
        // The `switches` pass's `umin` and the sequence, the second `movz`
        // deleted as a repetition (the code of bench/vm's `run`).
        let f = with_table(&[
            MOVZ_X2_3,
            CMP_X1_X2,
            CSEL_X1_X1_X2_LO,
            CMP_W1_3,
            CSEL_X2_X1_X2_LO,
        ]);
        let lifted = lift_forms(&f);
        assert_eq!(lifted.opaque, None);
        assert_eq!(entries(&lifted), 4);
        // Deleting a word before the table moves it and its targets: the
        // entries (relative to the table) stay, the `adr` still points at it.
        let mut shorter = lifted.clone();
        shorter.items.remove(1);
        let emitted = shorter.layout().unwrap();
        let words: Vec<u32> = emitted
            .bytes
            .chunks_exact(4)
            .map(|w| u32::from_le_bytes(w.try_into().unwrap()))
            .collect();
        assert_eq!(words[4..8], TAIL);
        assert_eq!(words[8..16], TABLE_AND_TARGETS);
        // The sequence's `cmp` deleted (`crate::peephole` rule 8): the
        // flags of the clamp's compare, a clamp between.
        let f = with_table(&[MOVZ_X2_3, CMP_X1_X2, CSEL_X1_X1_X2_LO, CSEL_X2_X1_X2_LO]);
        assert_eq!(entries(&lift_forms(&f)), 4);
    }

    #[test]
    fn sequences_that_do_not_bound_the_index_are_not_tables() {
        const CSEL_HS: u32 = 0x9A82_2022;
        const LDR_X2: u32 = 0xF940_0002;
        const CMP_W1_4: u32 = 0x7100_103F;
        const ADD_X1_1: u32 = 0x9100_0421;
        let cases: [&[u32]; 5] = [
            // The index is kept on `hs`, not `lo`.
            &[CMP_W1_3, MOVZ_X2_3, CSEL_HS],
            // The bound is loaded, not a constant.
            &[CMP_W1_3, LDR_X2, CSEL_X2_X1_X2_LO],
            // The compare disagrees with the bound.
            &[CMP_W1_4, MOVZ_X2_3, CSEL_X2_X1_X2_LO],
            // The index changes after the compare.
            &[CMP_W1_3, MOVZ_X2_3, ADD_X1_1, CSEL_X2_X1_X2_LO],
            // No compare sets the flags.
            &[MOVZ_X2_3, CSEL_X2_X1_X2_LO],
        ];
        for prefix in cases {
            let lifted = lift_forms(&with_table(prefix));
            assert!(lifted.opaque.is_some(), "{prefix:x?}");
        }
    }

    #[test]
    fn the_bound_is_not_looked_for_past_a_block_start() {
        let mut f = with_table(&[CMP_W1_3, MOVZ_X2_3, CMP_W1_3, CSEL_X2_X1_X2_LO]);
        assert_eq!(lift_forms(&f).opaque, None);
        // Entered at the second `cmp`, `x2` is whatever the other path left.
        f.bb_starts.push(8);
        assert!(lift_forms(&f).opaque.is_some());
    }
}
