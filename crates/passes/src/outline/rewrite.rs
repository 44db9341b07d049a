//! Rewriting: outlined bodies, and occurrences replaced by their call
//! sequences (module doc, step 7).
//!
//! A body is a copy of one occurrence with its frame: a thunk's final call
//! becomes a jump, a default frame gets a `ret`. An occurrence becomes the
//! call sequence of its variant; the first item of the sequence keeps the
//! occurrence's label, so branches to the occurrence now reach the call. The
//! call carries the body's summarised effects, so liveness in later rounds
//! sees what the call does without looking inside.

use cranelift_codegen::binemit::Reloc;

use super::select::FrameKind;
use super::CallVariant;
use crate::machine::decode::{self, Decoder, Effects, Form, CALL_KILLS, CALL_USES, LR};
use crate::machine::lift::{Inst, Item, Label, LiftedFunction};
use crate::machine::{MachReloc, RelocTarget};

/// An outlined function under construction.
pub struct OutlinedBody {
    pub items: Vec<(Label, Item)>,
    /// Effects of a call to it, for liveness in later rounds.
    pub call_effects: Effects,
    /// The instructions it replaced (as in the original functions).
    pub source: Vec<Item>,
    /// How many sequences it replaced.
    pub count: u64,
}

/// One occurrence to replace in a function.
#[derive(Clone, Copy, Debug)]
pub struct Replacement {
    /// Index of the occurrence's first item.
    pub start: usize,
    /// Items replaced.
    pub len: usize,
    pub variant: CallVariant,
    /// The outlined function called (index into the bodies).
    pub body: u32,
}

/// The outlined function for `seq` (a copy of one occurrence) that replaced
/// `count` sequences.
pub fn make_body(
    seq: &[(Label, Item)],
    frame: FrameKind,
    count: u64,
    decoder: &mut Decoder,
) -> OutlinedBody {
    let mut items: Vec<(Label, Item)> = seq
        .iter()
        .enumerate()
        .map(|(k, (_, item))| {
            let mut item = item.clone();
            if let Item::Inst(inst) = &mut item {
                inst.call_site = false;
            }
            (k as Label, item)
        })
        .collect();
    let (uses, defs) = seq.iter().fold((0, 0), |(u, d), (_, item)| match item {
        Item::Inst(i) => (u | i.effects.uses, d | i.effects.defs),
        _ => (u, d),
    });
    let call_effects = match frame {
        FrameKind::Tail => Effects {
            uses: uses | decode::RETURN_USES | CALL_USES,
            defs,
            kills: 0,
            writes_frame: false,
        },
        FrameKind::Thunk => {
            let Some((_, Item::Inst(last))) = items.last_mut() else {
                unreachable!("a thunk ends in a call")
            };
            last.word = match last.form {
                Form::Bl => 0x1400_0000 | (last.word & 0x03FF_FFFF),
                Form::Blr { rn } => 0xD61F_0000 | rn << 5,
                _ => unreachable!("a thunk ends in a call"),
            };
            last.form = Form::of(last.word);
            Effects {
                uses: uses | CALL_USES,
                defs: defs | CALL_KILLS,
                kills: CALL_KILLS,
                writes_frame: false,
            }
        }
        FrameKind::Default => {
            items.push((items.len() as Label, plain_inst(0xD65F_03C0, decoder)));
            Effects {
                uses,
                defs: defs | LR,
                kills: LR,
                writes_frame: false,
            }
        }
    };
    OutlinedBody {
        items,
        call_effects,
        source: seq.iter().map(|(_, item)| item.clone()).collect(),
        count,
    }
}

/// An instruction without relocation or records.
fn plain_inst(word: u32, decoder: &mut Decoder) -> Item {
    Item::Inst(Inst {
        word,
        form: Form::of(word),
        target: None,
        reloc: None,
        trap: None,
        call_site: false,
        jump_table: false,
        effects: decoder.effects(word),
    })
}

/// A `b`/`bl` to outlined function `index`.
fn call_inst(link: bool, index: u32, effects: Effects) -> Item {
    let word = if link { 0x9400_0000 } else { 0x1400_0000 };
    Item::Inst(Inst {
        word,
        form: Form::of(word),
        target: None,
        reloc: Some(MachReloc {
            offset: 0,
            kind: Reloc::Arm64Call.into(),
            target: RelocTarget::Outlined(index),
            addend: 0,
        }),
        trap: None,
        call_site: link,
        jump_table: false,
        effects,
    })
}

/// The call sequence replacing one occurrence.
fn call_sequence(
    variant: CallVariant,
    index: u32,
    bodies: &[OutlinedBody],
    decoder: &mut Decoder,
) -> Vec<Item> {
    let effects = bodies[index as usize].call_effects;
    match variant {
        CallVariant::TailCall => vec![call_inst(false, index, effects)],
        CallVariant::Thunk | CallVariant::NoLrSave => vec![call_inst(true, index, effects)],
        CallVariant::RegSave(r) => vec![
            // mov xR, x30
            plain_inst(0xAA1E_03E0 | r, decoder),
            call_inst(true, index, effects),
            // mov x30, xR
            plain_inst(0xAA00_03FE | r << 16, decoder),
        ],
        CallVariant::StackSave => vec![
            // str x30, [sp, #-16]!
            plain_inst(0xF81F_0FFE, decoder),
            call_inst(true, index, effects),
            // ldr x30, [sp], #16
            plain_inst(0xF841_07FE, decoder),
        ],
    }
}

/// Replaces each occurrence of `reps` (sorted by start, not overlapping) in
/// `func` by its call sequence.
pub fn rewrite(
    func: &mut LiftedFunction,
    reps: &[Replacement],
    bodies: &[OutlinedBody],
    decoder: &mut Decoder,
) {
    let old = std::mem::take(&mut func.items);
    let mut items = Vec::with_capacity(old.len());
    let mut reps = reps.iter().peekable();
    let mut i = 0;
    while i < old.len() {
        match reps.next_if(|rep| rep.start == i) {
            Some(rep) => {
                let calls = call_sequence(rep.variant, rep.body, bodies, decoder);
                for (k, item) in calls.into_iter().enumerate() {
                    // The first call item keeps the occurrence's label.
                    let label = if k == 0 {
                        old[i].0
                    } else {
                        func.next_label += 1;
                        func.next_label - 1
                    };
                    items.push((label, item));
                }
                i += rep.len;
            }
            None => {
                items.push(old[i].clone());
                i += 1;
            }
        }
    }
    func.items = items;
}
