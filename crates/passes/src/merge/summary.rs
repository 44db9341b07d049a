//! Stable function summaries ([GFM] §3.2) and their cgdata section.
//!
//! A [`Summary`] is the set of [`StableFunction`]s of one or more modules,
//! kept sorted so that its encoding is canonical and [`Section::merge`] (set
//! union) is commutative and associative.
//!
//! The summary taken where merging runs is section [`SectionKind::Merge`];
//! the one taken where the inliner runs, before it inlines, when merging
//! follows it, is [`InlinerSummary`] (section [`SectionKind::Inliner`],
//! same encoding): the inliner prices merge members against the plan
//! combined from the program as it sees it (`crate::price`), so a build
//! that reads its plans from a file needs both to decide as round 1 did.
//!
//! Encoding (section kind [`SectionKind::Merge`], little-endian):
//!
//! ```text
//! count     u32
//! function* count × hash u64, module str, name str, insts u32, c_abi u8,
//!                   sig_params u32, nlocs u32, nlocs × (inst u32, operand u32, hash u64, cost u32)
//! ```

use crate::cgdata::{CgDataError, Reader, Section, SectionKind, Writer};

use super::combine::GroupKey;
use super::hash::Location;

/// One function's summary: `(H, modName, fnName, i, locToHash)` of
/// Algorithm 1, plus whether it uses the C ABI (its thunk must call and
/// return rather than tail-call).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StableFunction {
    pub hash: u64,
    pub module: String,
    pub name: String,
    pub inst_count: u32,
    pub c_abi: bool,
    /// Number of parameters of its signature.
    pub sig_params: u32,
    /// Sorted by `(inst, operand)`.
    pub locations: Vec<Location>,
}

impl StableFunction {
    /// The `(i, j)` positions of the locations, in order.
    pub fn location_keys(&self) -> Vec<(u32, u32)> {
        self.locations.iter().map(Location::key).collect()
    }

    /// The key of the merge group it belongs to: functions merge when
    /// their stable hashes, instruction counts and locations agree.
    pub fn group_key(&self) -> GroupKey {
        (self.hash, self.inst_count, self.location_keys())
    }
}

/// A sorted, duplicate-free set of stable function summaries.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    functions: Vec<StableFunction>,
}

impl Summary {
    /// A summary of `functions` (sorted and deduplicated here).
    pub fn new(mut functions: Vec<StableFunction>) -> Summary {
        functions.sort();
        functions.dedup();
        Summary { functions }
    }

    pub fn functions(&self) -> &[StableFunction] {
        &self.functions
    }
}

impl Section for Summary {
    const KIND: SectionKind = SectionKind::Merge;

    fn encode(&self, w: &mut Writer) {
        w.u32(self.functions.len() as u32);
        for f in &self.functions {
            w.u64(f.hash);
            w.str(&f.module);
            w.str(&f.name);
            w.u32(f.inst_count);
            w.u8(u8::from(f.c_abi));
            w.u32(f.sig_params);
            w.u32(f.locations.len() as u32);
            for l in &f.locations {
                w.u32(l.inst);
                w.u32(l.operand);
                w.u64(l.hash);
                w.u32(l.cost);
            }
        }
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, CgDataError> {
        // The smallest function record: hash, two empty strings, insts,
        // c_abi and an empty location list.
        let count = r.count(8 + 4 + 4 + 4 + 1 + 4 + 4, "the merge function count")?;
        let mut functions = Vec::with_capacity(count);
        for _ in 0..count {
            let at = r.offset();
            let hash = r.u64("a function hash")?;
            let module = r.str("a module name")?;
            let name = r.str("a function name")?;
            let inst_count = r.u32("an instruction count")?;
            let c_abi = match r.u8("an ABI flag")? {
                0 => false,
                1 => true,
                other => {
                    return Err(CgDataError::Corrupt {
                        offset: at,
                        reason: format!("ABI flag {other} is neither 0 nor 1"),
                    })
                }
            };
            let sig_params = r.u32("a parameter count")?;
            let nlocs = r.count(20, "a location count")?;
            let mut locations = Vec::with_capacity(nlocs);
            for _ in 0..nlocs {
                locations.push(Location {
                    inst: r.u32("a location")?,
                    operand: r.u32("a location")?,
                    hash: r.u64("a location hash")?,
                    cost: r.u32("a location cost")?,
                });
            }
            if !locations.windows(2).all(|w| w[0].key() < w[1].key()) {
                return Err(CgDataError::Corrupt {
                    offset: at,
                    reason: format!("locations of `{name}` are not sorted"),
                });
            }
            functions.push(StableFunction {
                hash,
                module,
                name,
                inst_count,
                c_abi,
                sig_params,
                locations,
            });
        }
        Ok(Summary::new(functions))
    }

    fn merge(&mut self, other: Self) {
        let mut all = std::mem::take(&mut self.functions);
        all.extend(other.functions);
        *self = Summary::new(all);
    }
}

/// The merge summary the inliner planned with: the program before
/// inlining, when merging follows the inliner (module doc).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InlinerSummary(pub Summary);

impl Section for InlinerSummary {
    const KIND: SectionKind = SectionKind::Inliner;

    fn encode(&self, w: &mut Writer) {
        self.0.encode(w);
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, CgDataError> {
        Summary::decode(r).map(InlinerSummary)
    }

    fn merge(&mut self, other: Self) {
        self.0.merge(other.0);
    }
}
