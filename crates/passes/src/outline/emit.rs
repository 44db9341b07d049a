//! Emitting the result: layout, names and the size check (module doc,
//! step 8), the published sequences (step 9), and disassembly for reports.
//!
//! Every rewritten function is laid out again; one whose layout fails or
//! grows keeps its original bytes. Every outlined body is laid out and named
//! by the content hash of its bytes and relocations by symbol name, so equal
//! bodies of different modules get equal names. If a body does not lay out,
//! or local outlining would grow the module, the module is returned
//! untouched.

use std::collections::BTreeMap;

use hashbrown::HashMap;

use super::global::{self, OutlineTree};
use super::outliner::{OutlineRemark, PASS};
use super::rewrite::OutlinedBody;
use super::{OutlineResult, OutlineStats, OutlinedFunction};
use crate::machine::decode::Decoder;
use crate::machine::lift::{Emitted, Label, LiftedFunction};
use crate::machine::{MachFunction, MachReloc, RelocTarget};
use crate::remark::{Remark, RemarkKind};

/// Lays everything out, names the outlined functions, checks sizes and
/// publishes the outlined sequences; the remarks get the outlined
/// functions' names, and the decisions this step undoes.
pub(crate) fn finish(
    functions: &[MachFunction],
    lifted: &[LiftedFunction],
    bodies: &[OutlinedBody],
    symbol_names: &[String],
    mut stats: OutlineStats,
    remarks: Vec<OutlineRemark>,
) -> OutlineResult {
    let mut kept_original = Vec::new();
    let out_functions: Vec<Emitted> = functions
        .iter()
        .zip(lifted)
        .map(|(orig, func)| match func.layout() {
            Ok(e) if e.bytes.len() <= orig.bytes.len() => e,
            // A layout failure or growth (alignment padding): keep the original.
            laid_out => {
                if func.opaque.is_none() {
                    kept_original.push(layout_remark(orig, &laid_out));
                }
                orig.emitted()
            }
        })
        .collect();
    let Some(outlined) = lay_out_bodies(bodies, symbol_names) else {
        let why = "an outlined function does not lay out";
        return untouched(functions, stats, remarks, why);
    };
    stats.bytes_after = out_functions
        .iter()
        .map(|e| e.bytes.len() as u64)
        .sum::<u64>()
        + outlined
            .iter()
            .map(|o| o.code.bytes.len() as u64)
            .sum::<u64>();
    // Local outlining never grows a module; global outlining may, by the
    // bodies it creates optimistically for other modules' copies to fold.
    if stats.bytes_after > stats.bytes_before && stats.global_sequences == 0 {
        let why = format!(
            "the module would grow ({} -> {} bytes)",
            stats.bytes_before, stats.bytes_after
        );
        return untouched(functions, stats, remarks, &why);
    }
    let mut remarks: Vec<Remark> = remarks
        .into_iter()
        .map(|r| match r.body {
            Some(body) => Remark {
                function: outlined[body as usize].name.clone(),
                ..r.remark
            },
            None => r.remark,
        })
        .collect();
    remarks.extend(kept_original);
    OutlineResult {
        functions: out_functions,
        outlined,
        stats,
        published: published(bodies, symbol_names),
        remarks,
    }
}

/// The remark of a rewritten function that keeps its original bytes.
fn layout_remark(
    orig: &MachFunction,
    laid_out: &Result<Emitted, crate::machine::lift::LayoutError>,
) -> Remark {
    let why = match laid_out {
        Ok(e) => format!(
            "the rewritten code is larger ({} -> {} bytes: alignment)",
            orig.bytes.len(),
            e.bytes.len()
        ),
        Err(e) => format!("the rewritten code does not lay out: {}", e.0),
    };
    Remark::missed(PASS, "kept-original", &orig.name, why)
}

/// The module as it came in: nothing outlined. Every decision to outline
/// becomes a missed `reverted` remark saying `why`.
fn untouched(
    functions: &[MachFunction],
    stats: OutlineStats,
    remarks: Vec<OutlineRemark>,
    why: &str,
) -> OutlineResult {
    let remarks = remarks
        .into_iter()
        .map(|r| match r.body {
            Some(_) => Remark {
                kind: RemarkKind::Missed,
                decision: "reverted",
                reason: format!("{}; not outlined: {why}", r.remark.reason),
                counts: Vec::new(),
                ..r.remark
            },
            None => r.remark,
        })
        .collect();
    OutlineResult {
        functions: functions.iter().map(MachFunction::emitted).collect(),
        outlined: Vec::new(),
        published: OutlineTree::default(),
        stats: OutlineStats {
            outlined_functions: 0,
            sequences_replaced: 0,
            variants: [0; 5],
            global_sequences: 0,
            bytes_after: stats.bytes_before,
            ..stats
        },
        remarks,
    }
}

/// The outlined functions, laid out and named; `None` if one does not lay
/// out. A body equal to an earlier one of the module (the same sequence
/// outlined from two shared functions, each alone) gets the suffix `_<n>`.
fn lay_out_bodies(
    bodies: &[OutlinedBody],
    symbol_names: &[String],
) -> Option<Vec<OutlinedFunction>> {
    let mut outlined: Vec<OutlinedFunction> = Vec::with_capacity(bodies.len());
    let mut names_seen: HashMap<String, u32> = HashMap::new();
    for body in bodies {
        let func = LiftedFunction {
            name: String::new(),
            alignment: 4,
            items: body.items.clone(),
            opaque: None,
            next_label: body.items.len() as Label,
        };
        let code = func.layout().ok()?;
        let hash = content_hash(&code, symbol_names, &outlined);
        let mut name = format!("OUTLINED_FUNCTION_{hash:016x}");
        let seen = names_seen.entry(name.clone()).or_insert(0);
        if *seen > 0 {
            name = format!("{name}_{seen}");
        }
        *seen += 1;
        outlined.push(OutlinedFunction { name, code });
    }
    Some(outlined)
}

/// This module's part of the global tree: the stable hash sequence of every
/// outlined body whose source is stable, with the sequences it replaced.
fn published(bodies: &[OutlinedBody], symbol_names: &[String]) -> OutlineTree {
    let mut tree = OutlineTree::default();
    for body in bodies {
        if let Some(hashes) = global::sequence_hashes(&body.source, symbol_names) {
            tree.add(hashes, body.count);
        }
    }
    tree
}

/// The xxh3 of an outlined function's bytes and relocations, with targets by
/// name (so it is the same in every module).
fn content_hash(code: &Emitted, symbol_names: &[String], earlier: &[OutlinedFunction]) -> u64 {
    let mut buf = code.bytes.clone();
    for r in &code.relocs {
        buf.extend_from_slice(&r.offset.to_le_bytes());
        buf.extend_from_slice(format!("{:?}", r.kind).as_bytes());
        let name = match r.target {
            RelocTarget::Symbol(s) => symbol_names.get(s as usize).map_or("?", |s| s.as_str()),
            RelocTarget::Outlined(o) => earlier.get(o as usize).map_or("?", |o| o.name.as_str()),
            RelocTarget::FunctionOffset(_) => "?",
        };
        buf.extend_from_slice(name.as_bytes());
        buf.push(0);
        buf.extend_from_slice(&r.addend.to_le_bytes());
    }
    xxhash_rust::xxh3::xxh3_64(&buf)
}

/// Disassembles emitted code, one instruction per line with its relocation
/// (for snapshots and `--emit asm`-like reports).
pub fn disassemble(
    code: &Emitted,
    symbol_names: &[String],
    outlined: &[OutlinedFunction],
) -> String {
    let decoder = Decoder::new();
    let mut out = String::new();
    let relocs: BTreeMap<u32, &MachReloc> = code.relocs.iter().map(|r| (r.offset, r)).collect();
    for (k, chunk) in code.bytes.chunks(4).enumerate() {
        let at = 4 * k as u32;
        let word = u32::from_le_bytes(chunk.try_into().unwrap_or([0; 4]));
        out.push_str(&format!(
            "{at:5x}:  {}",
            decoder.render(word, u64::from(at))
        ));
        if let Some(r) = relocs.get(&at) {
            let name = match r.target {
                RelocTarget::Symbol(s) => symbol_names.get(s as usize).cloned().unwrap_or_default(),
                RelocTarget::Outlined(o) => outlined
                    .get(o as usize)
                    .map_or_else(|| format!("outlined#{o}"), |o| o.name.clone()),
                RelocTarget::FunctionOffset(o) => format!("self+{o}"),
            };
            out.push_str(&format!("    ; {:?} {name}", r.kind));
        }
        out.push('\n');
    }
    out
}
