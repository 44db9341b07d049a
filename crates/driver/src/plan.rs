//! The program plan: what one module's compilation must know of the others.
//!
//! A module's object is not a function of its own sources alone. Within one
//! `parec build`, the passes of a module read facts that come from every
//! module of the program:
//!
//! - the inliner keeps the generic instances that other modules define too
//!   (the linker folds their copies), so it needs the local functions every
//!   module defines at that point;
//! - with cross-module merging (two rounds), the inliner leaves alone the
//!   functions merging is about to merge and merging follows a plan, both
//!   combined from the merge summary of every module at that point;
//! - the outliner treats functions several modules define alike in every
//!   module, so it needs the local functions every module defines after the
//!   CLIF passes.
//!
//! Separate compilation ([`crate::actions`]) therefore starts with one
//! program-wide step, `parec plan`, which runs the front end and the CLIF
//! passes on every module (no code generation) and records exactly those
//! facts, pass by pass, in a plan file. Each `parec compile --module M
//! --plan P` then runs the passes on M alone, taking the facts from the plan
//! where the whole build would compute them, and produces the bytes the
//! whole build produces for M. The plan changes only when a fact does: a
//! build system that compares outputs (Ninja's `restat`) recompiles the
//! other modules only then.
//!
//! With `--profile-use`, what the profile says of the program's functions
//! (a [`HotCode`]) is a fact of the same kind: the build classifies every
//! module's functions and the passes of one module read the union (a
//! generic instance several modules define is hot if any copy is). The
//! plan records that union, so that each compile reads exactly the
//! `HotCode` of the whole build; its flags record the profile by the hash
//! of its content, with the mode and the mismatch policy.
//!
//! The file is binary, little-endian and deterministic (sorted sets, the
//! merge summary's canonical encoding): magic `PARECPL\0`, a version, the
//! flags it was made with (target, optimization level, passes, rounds, code
//! model, runtime, profile), the program's module names, one record per
//! CLIF pass, the outliner's shared functions, the code model's choice for
//! the program, what the profile says of the program's functions and what
//! the runtime stands on; then the xxh3-64 checksum of every byte before
//! it, as cgdata files end (a plan changed by a byte is refused, never
//! compiled with).
//!
//! What the runtime stands on is a fact of the program too: `--runtime
//! auto` makes it freestanding unless a module declares an `extern fn`.
//! The plan records it, and a compile that settles otherwise (the program
//! changed) is refused.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::{anyhow, bail, Result};
use parec_passes::cgdata::{CgDataError, Reader, Section as _, Writer};
use parec_passes::heat::{Heat, HotCode};
use parec_passes::merge::Summary;

use crate::io_error;

/// The first bytes of a plan file.
pub const MAGIC: &[u8; 8] = b"PARECPL\0";
/// The plan format version; a plan of another version is refused.
pub const VERSION: u32 = 5;

/// The bytes of the checksum at the end of a plan file.
const CHECKSUM_BYTES: usize = 8;

/// The facts one CLIF pass reads from every module of the program.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PassFacts {
    /// The inliner: local functions that more than one module defines.
    /// GVN: the local functions that must stay alike
    /// (`parec_passes::gvn::kept_alike`).
    pub shared: Option<BTreeSet<String>>,
    /// Cross-module merging (and the inliner before it): the union of every
    /// module's merge summary, which the merge plan is combined from.
    pub summary: Option<Summary>,
}

/// What the flags of the build were; a module is compiled with the same.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PlanFlags {
    /// The target's cgdata name (`aarch64`, `x86_64`).
    pub target: String,
    /// `-O0`, `-O2` or `-Oz`.
    pub level: String,
    /// The pipeline's passes, as a `--passes` list.
    pub passes: String,
    /// Whether the build has two rounds (cross-module merging and outlining).
    pub two_rounds: bool,
    /// The `--code-model` flag (`auto`, `small`, `tiny`).
    pub code_model: String,
    /// The `--runtime` flag (`auto`, `freestanding`, `libc`).
    pub runtime: String,
    /// `--profile-use` and its flags, if the build uses a profile.
    pub profile: Option<PlanProfile>,
}

/// What a plan records of `--profile-use FILE`: the file's content by its
/// hash (a plan holds no path; a profile rewritten with other counts is
/// another profile), `--profile-mode` and `--profile-mismatch`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PlanProfile {
    /// xxh3-64 of the profile file's bytes.
    pub content_hash: u64,
    /// `optimistic` or `conservative`.
    pub mode: String,
    /// `error` or `warn`.
    pub mismatch: String,
}

/// A program plan (see the module doc).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProgramPlan {
    pub flags: PlanFlags,
    /// The program's modules in build order, the runtime last: each becomes
    /// one object.
    pub modules: Vec<String>,
    /// One record per CLIF pass, in pipeline order.
    pub passes: Vec<PassFacts>,
    /// The outliner: local functions that more than one module defines
    /// after the CLIF passes.
    pub codegen_shared: BTreeSet<String>,
    /// The peepholes: the code model chose `adr` for symbol addresses
    /// (`crate::codegen::CodeModel::near_symbols`, from the whole program).
    pub near_symbols: bool,
    /// What the profile says of every module's functions, as the whole
    /// build's passes read it (empty without a profile).
    pub heat: HotCode,
    /// What the runtime stands on, as the flags settled it for the program
    /// (`freestanding` or `libc`): the runtime module's compile must lower
    /// the same.
    pub runtime: String,
}

impl ProgramPlan {
    /// The canonical bytes of the plan.
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::default();
        w.bytes_raw(MAGIC);
        w.u32(VERSION);
        w.str(&self.flags.target);
        w.str(&self.flags.level);
        w.str(&self.flags.passes);
        w.u8(u8::from(self.flags.two_rounds));
        w.str(&self.flags.code_model);
        w.str(&self.flags.runtime);
        write_profile_flags(&mut w, self.flags.profile.as_ref());
        write_names(&mut w, self.modules.iter());
        w.u32(self.passes.len() as u32);
        for facts in &self.passes {
            match &facts.shared {
                Some(shared) => {
                    w.u8(1);
                    write_names(&mut w, shared.iter());
                }
                None => w.u8(0),
            }
            match &facts.summary {
                Some(summary) => {
                    w.u8(1);
                    let mut inner = Writer::default();
                    summary.encode(&mut inner);
                    let bytes = inner.into_bytes();
                    w.u32(bytes.len() as u32);
                    w.bytes_raw(&bytes);
                }
                None => w.u8(0),
            }
        }
        write_names(&mut w, self.codegen_shared.iter());
        w.u8(u8::from(self.near_symbols));
        write_heat(&mut w, &self.heat);
        w.str(&self.runtime);
        let mut bytes = w.into_bytes();
        let checksum = xxhash_rust::xxh3::xxh3_64(&bytes);
        bytes.extend_from_slice(&checksum.to_le_bytes());
        bytes
    }

    /// Decodes a plan written by [`ProgramPlan::encode`].
    pub fn decode(bytes: &[u8]) -> Result<ProgramPlan, CgDataError> {
        let mut r = Reader::new(bytes);
        if r.take(MAGIC.len(), "the magic")? != MAGIC {
            return Err(CgDataError::Corrupt {
                offset: 0,
                reason: "not a parec plan file (bad magic)".to_string(),
            });
        }
        let version = r.u32("the version")?;
        if version != VERSION {
            return Err(CgDataError::Corrupt {
                offset: MAGIC.len(),
                reason: format!("plan version {version}; this parec reads version {VERSION}"),
            });
        }
        let header = r.offset();
        let body_end = bytes
            .len()
            .checked_sub(CHECKSUM_BYTES)
            .filter(|&end| end >= header)
            .ok_or(CgDataError::Truncated {
                offset: bytes.len(),
                what: "the checksum",
            })?;
        let (body, stored) = bytes.split_at(body_end);
        if xxhash_rust::xxh3::xxh3_64(body).to_le_bytes() != stored {
            return Err(CgDataError::Checksum);
        }
        let mut r = Reader::new(body);
        r.take(header, "the header")?;
        let flags = PlanFlags {
            target: r.str("the target")?,
            level: r.str("the level")?,
            passes: r.str("the passes")?,
            two_rounds: r.u8("the rounds")? != 0,
            code_model: r.str("the code model")?,
            runtime: r.str("the runtime flag")?,
            profile: read_profile_flags(&mut r)?,
        };
        let modules = read_names(&mut r)?.into_iter().collect();
        let count = r.count(2, "the pass count")?;
        let mut passes = Vec::with_capacity(count);
        for _ in 0..count {
            let shared = match r.u8("a shared-set flag")? {
                0 => None,
                _ => Some(read_names(&mut r)?.into_iter().collect()),
            };
            let summary = match r.u8("a summary flag")? {
                0 => None,
                _ => {
                    let len = r.count(1, "the summary length")?;
                    let mut inner = Reader::new(r.take(len, "the summary")?);
                    Some(Summary::decode(&mut inner)?)
                }
            };
            passes.push(PassFacts { shared, summary });
        }
        let codegen_shared = read_names(&mut r)?.into_iter().collect();
        let near_symbols = r.u8("the code model's choice")? != 0;
        let heat = read_heat(&mut r)?;
        let runtime = r.str("the runtime")?;
        if !r.at_end() {
            return Err(CgDataError::Corrupt {
                offset: r.offset(),
                reason: "trailing bytes".to_string(),
            });
        }
        Ok(ProgramPlan {
            flags,
            modules,
            passes,
            codegen_shared,
            near_symbols,
            heat,
            runtime,
        })
    }

    /// Reads and decodes a plan file.
    pub fn read(path: &Path) -> Result<ProgramPlan> {
        let bytes = io_error::read_bytes_as(path, "the plan ")?;
        ProgramPlan::decode(&bytes).map_err(|e| anyhow!("plan `{}`: {e}", path.display()))
    }

    /// Writes the plan to `path` unless it already holds these bytes (so
    /// that a build system comparing outputs sees no change), refusing to
    /// replace a file that is not a plan.
    pub fn write(&self, path: &Path) -> Result<()> {
        if let Some(existing) = io_error::read_prefix(path, MAGIC.len()) {
            if !existing.is_empty() && existing != MAGIC {
                bail!(
                    "`{}` exists and is not a parec plan; refusing to overwrite it",
                    path.display()
                );
            }
        }
        io_error::write_if_changed(path, &self.encode())
    }

    /// Whether `other` flags are the ones the plan was made with; the error
    /// names the first difference.
    pub fn check_flags(&self, other: &PlanFlags) -> Result<()> {
        let mine = &self.flags;
        let differs = |what: &str, plan: &str, given: &str| {
            anyhow!("the plan was made for {what} `{plan}`, this compile is for `{given}`; run `parec plan` with the same flags")
        };
        if mine.target != other.target {
            return Err(differs("target", &mine.target, &other.target));
        }
        if mine.level != other.level {
            return Err(differs("level", &mine.level, &other.level));
        }
        if mine.passes != other.passes {
            return Err(differs("passes", &mine.passes, &other.passes));
        }
        if mine.code_model != other.code_model {
            return Err(differs("code model", &mine.code_model, &other.code_model));
        }
        if mine.runtime != other.runtime {
            return Err(differs("runtime", &mine.runtime, &other.runtime));
        }
        if mine.two_rounds != other.two_rounds {
            let rounds = |two| if two { "two rounds" } else { "one round" };
            return Err(differs(
                "a build in",
                rounds(mine.two_rounds),
                rounds(other.two_rounds),
            ));
        }
        check_profile_flags(mine.profile.as_ref(), other.profile.as_ref())
    }
}

/// Whether a compile uses the profile (content, mode, mismatch policy)
/// the plan was made with; the error names the difference.
fn check_profile_flags(plan: Option<&PlanProfile>, given: Option<&PlanProfile>) -> Result<()> {
    let again = "run `parec plan` with the same profile flags";
    match (plan, given) {
        (None, None) => Ok(()),
        (None, Some(_)) => {
            bail!("the plan was made without a profile, this compile uses `--profile-use`; {again}")
        }
        (Some(_), None) => {
            bail!("the plan was made with `--profile-use`, this compile has no profile; {again}")
        }
        (Some(plan), Some(given)) if plan.content_hash != given.content_hash => bail!(
            "the plan was made with another profile (content hash {:016x}), this compile's profile has content hash {:016x}; {again}",
            plan.content_hash,
            given.content_hash
        ),
        (Some(plan), Some(given)) if plan.mode != given.mode => bail!(
            "the plan was made for profile mode `{}`, this compile is for `{}`; {again}",
            plan.mode,
            given.mode
        ),
        (Some(plan), Some(given)) if plan.mismatch != given.mismatch => bail!(
            "the plan was made for profile mismatch policy `{}`, this compile is for `{}`; {again}",
            plan.mismatch,
            given.mismatch
        ),
        _ => Ok(()),
    }
}

fn write_profile_flags(w: &mut Writer, profile: Option<&PlanProfile>) {
    match profile {
        Some(p) => {
            w.u8(1);
            w.u64(p.content_hash);
            w.str(&p.mode);
            w.str(&p.mismatch);
        }
        None => w.u8(0),
    }
}

fn read_profile_flags(r: &mut Reader<'_>) -> Result<Option<PlanProfile>, CgDataError> {
    if r.u8("the profile flag")? == 0 {
        return Ok(None);
    }
    Ok(Some(PlanProfile {
        content_hash: r.u64("the profile's content hash")?,
        mode: r.str("the profile mode")?,
        mismatch: r.str("the profile mismatch policy")?,
    }))
}

/// The byte a function's [`Heat`] is written as.
fn heat_byte(heat: Heat) -> u8 {
    match heat {
        Heat::Hot => 0,
        Heat::Cold => 1,
    }
}

/// Functions with their heat, then hot call sites by caller (both sorted:
/// `BTreeMap`/`BTreeSet` order).
fn write_heat(w: &mut Writer, heat: &HotCode) {
    w.u32(heat.functions.len() as u32);
    for (name, &h) in &heat.functions {
        w.str(name);
        w.u8(heat_byte(h));
    }
    w.u32(heat.hot_sites.len() as u32);
    for (caller, sites) in &heat.hot_sites {
        w.str(caller);
        w.u32(sites.len() as u32);
        for &site in sites {
            w.u32(site);
        }
    }
}

fn read_heat(r: &mut Reader<'_>) -> Result<HotCode, CgDataError> {
    let mut functions = BTreeMap::new();
    for _ in 0..r.count(5, "the profiled function count")? {
        let name = r.str("a profiled function")?;
        let offset = r.offset();
        let heat = match r.u8("a function's heat")? {
            0 => Heat::Hot,
            1 => Heat::Cold,
            other => {
                return Err(CgDataError::Corrupt {
                    offset,
                    reason: format!("unknown heat {other}"),
                })
            }
        };
        functions.insert(name, heat);
    }
    let mut hot_sites = BTreeMap::new();
    for _ in 0..r.count(8, "the hot caller count")? {
        let caller = r.str("a hot caller")?;
        let count = r.count(4, "a hot site count")?;
        let sites = (0..count)
            .map(|_| r.u32("a hot site"))
            .collect::<Result<BTreeSet<u32>, _>>()?;
        hot_sites.insert(caller, sites);
    }
    Ok(HotCode {
        functions,
        hot_sites,
    })
}

fn write_names<'a>(w: &mut Writer, names: impl ExactSizeIterator<Item = &'a String>) {
    w.u32(names.len() as u32);
    for name in names {
        w.str(name);
    }
}

fn read_names(r: &mut Reader<'_>) -> Result<Vec<String>, CgDataError> {
    let count = r.count(4, "a name count")?;
    (0..count).map(|_| r.str("a name")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> ProgramPlan {
        ProgramPlan {
            flags: PlanFlags {
                target: "aarch64".into(),
                level: "z".into(),
                passes: "inline,gvn".into(),
                two_rounds: true,
                code_model: "auto".into(),
                runtime: "auto".into(),
                profile: Some(PlanProfile {
                    content_hash: 0x0123_4567_89ab_cdef,
                    mode: "optimistic".into(),
                    mismatch: "warn".into(),
                }),
            },
            modules: vec!["main".into(), "pare_runtime".into()],
            passes: vec![
                PassFacts {
                    shared: Some(["a".to_string(), "b".to_string()].into()),
                    summary: Some(Summary::default()),
                },
                PassFacts::default(),
            ],
            codegen_shared: ["b".to_string()].into(),
            near_symbols: true,
            heat: HotCode {
                functions: [("a".to_string(), Heat::Hot), ("b".to_string(), Heat::Cold)].into(),
                hot_sites: [("a".to_string(), [3, 7].into())].into(),
            },
            runtime: "freestanding".into(),
        }
    }

    #[test]
    fn round_trip() {
        let plan = sample();
        let bytes = plan.encode();
        assert_eq!(ProgramPlan::decode(&bytes).unwrap(), plan);
    }

    #[test]
    fn corrupt_plans_are_errors() {
        let bytes = sample().encode();
        for len in 0..bytes.len() {
            assert!(ProgramPlan::decode(&bytes[..len]).is_err(), "prefix {len}");
        }
        let mut bad = bytes.clone();
        bad[0] = b'X';
        assert!(ProgramPlan::decode(&bad).is_err());
        // Any one byte changed is refused (issue 34: a changed byte of a
        // module name or a summary decoded, and changed the objects).
        for at in 0..bytes.len() {
            let mut changed = bytes.clone();
            changed[at] ^= 0x01;
            assert!(ProgramPlan::decode(&changed).is_err(), "byte {at} changed");
        }
    }

    #[test]
    fn plans_without_a_profile_round_trip() {
        let mut plan = sample();
        plan.flags.profile = None;
        plan.heat = HotCode::default();
        assert_eq!(ProgramPlan::decode(&plan.encode()).unwrap(), plan);
    }

    #[test]
    fn a_compile_with_another_profile_is_refused() {
        let plan = sample();
        let mut flags = plan.flags.clone();
        assert!(plan.check_flags(&flags).is_ok());
        flags.profile.as_mut().unwrap().content_hash ^= 1;
        let err = plan.check_flags(&flags).unwrap_err().to_string();
        assert!(err.contains("another profile"), "{err}");
        flags = plan.flags.clone();
        flags.profile.as_mut().unwrap().mode = "conservative".into();
        let err = plan.check_flags(&flags).unwrap_err().to_string();
        assert!(err.contains("profile mode `optimistic`"), "{err}");
        flags.profile = None;
        let err = plan.check_flags(&flags).unwrap_err().to_string();
        assert!(err.contains("no profile"), "{err}");
    }
}
