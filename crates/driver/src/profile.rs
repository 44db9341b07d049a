//! Execution profiles in the driver: `parec run --profile-generate FILE`
//! writes one, `parec build --profile-use FILE` reads it
//! (`parec_passes::profile` has the format and the classification).
//!
//! # Making a profile
//!
//! The executor is the JIT: it runs the very CLIF the build compiles, at
//! native speed (the reference interpreter is exact but walks the Pare tree,
//! not CLIF blocks, and is orders of magnitude slower). The program is
//! lowered as `parec run` lowers it; before any parec pass, every function
//! of every module (the runtime's too: counting it is harmless and tells
//! the build which runtime functions are hot) gets block counters
//! ([`instrument`]); the modules are compiled with Cranelift alone, so that
//! the keys, computed on the front end's CLIF, are the ones a build
//! computes. The profile is written when the program ends, however it
//! ends: after `main` returns, and from a C `atexit` handler when the
//! program calls `exit` or traps (the runtime's `pare_trap` and `pare_exit`
//! end the process with libc's `exit`). The program's output and exit
//! status are unchanged; a profile that cannot be written is an error on
//! stderr (and, after a normal return, exit status 1).
//!
//! # Using a profile
//!
//! A build reads the file once ([`ProfileUse::read`]; a truncated, corrupt,
//! wrong-version or non-profile file is an error naming the file and the
//! problem), then classifies each module's functions right after the front
//! end, before `--lto` links the modules and before any pass
//! ([`heat_of`]). A function the profile knows under another hash changed
//! since the profile was made: by default an error naming the functions;
//! with `--profile-mismatch warn` a warning, and the functions are unknown.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::{anyhow, bail, Result};
use parec_passes::cgdata::CgData;
use parec_passes::clif_module::ClifModule;
use parec_passes::heat::Heat;
use parec_passes::heat::HotCode;
use parec_passes::profile::{
    self, instrument, union_hot_code, Class, CounterMap, FunctionHeat, HeatCounts, Mismatch,
    Profile, ProfileMode, Thresholds, PROFILE_TARGET,
};
use parec_passes::remark::Remark;

use crate::cgdata_file;
use crate::plan::PlanProfile;

/// What a build does with a function the profile no longer matches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MismatchPolicy {
    /// Stop the build, naming the functions.
    #[default]
    Error,
    /// Warn on stderr and treat them as unknown.
    Warn,
}

impl MismatchPolicy {
    pub fn name(self) -> &'static str {
        match self {
            MismatchPolicy::Error => "error",
            MismatchPolicy::Warn => "warn",
        }
    }
}

impl std::str::FromStr for MismatchPolicy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "error" => Ok(MismatchPolicy::Error),
            "warn" => Ok(MismatchPolicy::Warn),
            _ => Err(format!(
                "unknown profile mismatch policy `{s}` (expected error or warn)"
            )),
        }
    }
}

/// `--profile-use FILE` with its mode and mismatch policy, read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfileUse {
    pub path: PathBuf,
    pub profile: Profile,
    /// xxh3-64 of the file's bytes: what a plan records of the profile
    /// (its content, not its path, so that plans hold no path and a
    /// rewritten profile is another profile).
    pub content_hash: u64,
    pub thresholds: Thresholds,
    pub mode: ProfileMode,
    pub mismatch: MismatchPolicy,
}

impl ProfileUse {
    /// Reads and checks the profile at `path`.
    pub fn read(path: &Path, mode: ProfileMode, mismatch: MismatchPolicy) -> Result<ProfileUse> {
        // One read gives both the hash and the profile, so the two cannot
        // come from different versions of a file rewritten meanwhile.
        let bytes = cgdata_file::read_bytes(path).map_err(|e| anyhow!("profile: {e:#}"))?;
        let profile = decode(path, &bytes)?;
        Ok(ProfileUse {
            path: path.to_path_buf(),
            content_hash: xxhash_rust::xxh3::xxh3_64(&bytes),
            thresholds: Thresholds::of(&profile),
            profile,
            mode,
            mismatch,
        })
    }

    /// What a program plan records of this profile use.
    pub fn plan_profile(&self) -> PlanProfile {
        PlanProfile {
            content_hash: self.content_hash,
            mode: self.mode.name().to_string(),
            mismatch: self.mismatch.name().to_string(),
        }
    }
}

/// Reads a profile file: a cgdata container for [`PROFILE_TARGET`] with a
/// profile section.
pub fn read(path: &Path) -> Result<Profile> {
    let bytes = cgdata_file::read_bytes(path).map_err(|e| anyhow!("profile: {e:#}"))?;
    decode(path, &bytes)
}

/// Decodes the bytes of the profile file `path` (named in errors).
fn decode(path: &Path, bytes: &[u8]) -> Result<Profile> {
    let data = cgdata_file::decode(path, bytes, None).map_err(|e| anyhow!("profile: {e:#}"))?;
    if data.target != PROFILE_TARGET {
        bail!(
            "`{}` is the cgdata of a build for `{}`, not a profile (make one with `parec run --profile-generate FILE`)",
            path.display(),
            data.target
        );
    }
    data.get::<Profile>()
        .map_err(|e| anyhow!("profile `{}`: {e}", path.display()))?
        .ok_or_else(|| anyhow!("`{}` holds no profile section", path.display()))
}

/// The cgdata bytes of `profile`.
pub fn encode(profile: &Profile) -> Vec<u8> {
    let mut data = CgData::new(PROFILE_TARGET);
    data.put(profile);
    data.encode()
}

/// What a profile says of a program's modules.
#[derive(Debug, Default)]
pub struct ProgramHeat {
    pub hot_code: HotCode,
    /// One `profile` remark per function the profile no longer matches.
    pub remarks: Vec<Remark>,
    /// Functions by class, summed over the modules.
    pub counts: HeatCounts,
}

/// Classifies every function of `modules` (the front end's CLIF) with the
/// profile; mismatches are an error or a warning by its policy.
pub fn heat_of(modules: &[ClifModule], use_: &ProfileUse) -> Result<ProgramHeat> {
    let mut heat = ProgramHeat::default();
    let mut mismatches: Vec<Mismatch> = Vec::new();
    for module in modules {
        let m = profile::hot_code(module, &use_.profile, &use_.thresholds, use_.mode);
        union_hot_code(&mut heat.hot_code, m.hot_code);
        add_counts(&mut heat.counts, m.counts);
        heat.remarks.extend(
            m.functions
                .iter()
                .map(|f| class_remark(f, &m.mismatches, use_, &module.name)),
        );
        mismatches.extend(m.mismatches);
    }
    // A generic instance several modules define mismatches once: the
    // names, sorted, each once.
    let names: BTreeSet<&str> = mismatches.iter().map(|m| m.function.as_str()).collect();
    if !names.is_empty() {
        let names: Vec<&str> = names.into_iter().collect();
        let message = format!(
            "profile `{}` does not match {} function(s) of the program, changed since it was made: {}",
            use_.path.display(),
            names.len(),
            names.join(", ")
        );
        match use_.mismatch {
            MismatchPolicy::Error => bail!(
                "{message}\n(regenerate the profile with `parec run --profile-generate`, or build with `--profile-mismatch warn` to treat them as unprofiled)"
            ),
            MismatchPolicy::Warn => {
                crate::io_error::eprintln(format_args!("warning: {message}; building them as unprofiled"));
            }
        }
    }
    Ok(heat)
}

fn add_counts(into: &mut HeatCounts, c: HeatCounts) {
    into.hot += c.hot;
    into.cold += c.cold;
    into.lukewarm += c.lukewarm;
    into.unknown += c.unknown;
}

/// The remark of what the profile says of one function (docs/REMARKS.md,
/// `profile`).
fn class_remark(
    f: &FunctionHeat,
    mismatches: &[Mismatch],
    use_: &ProfileUse,
    module: &str,
) -> Remark {
    let treated = match (f.decided, &f.folds_with) {
        (Some(Heat::Hot), Some(twin)) => {
            format!("it folds with the hot `{twin}`, so the size passes leave it alone too")
        }
        (Some(Heat::Hot), None) => "the size passes leave it alone".to_string(),
        (Some(Heat::Cold), _) => "the size passes may do anything to it".to_string(),
        (None, _) => "the passes use their static estimate".to_string(),
    };
    let t = &use_.thresholds;
    let remark = match f.class {
        Class::Stale => {
            let m = mismatches.iter().find(|m| m.function == f.name);
            let profiled: Vec<String> = m
                .map(|m| m.profiled.iter().map(|h| format!("{h:016x}")).collect())
                .unwrap_or_default();
            let now = m.map_or(0, |m| m.hash);
            Remark::missed(
                "profile",
                "stale",
                f.name.clone(),
                format!(
                    "the profile counted another version of the function (hash {}, now {now:016x}); unprofiled: {treated}",
                    profiled.join(", ")
                ),
            )
        }
        Class::Unprofiled => Remark::analysis(
            "profile",
            "unprofiled",
            f.name.clone(),
            format!("not in the profile: {treated}"),
        ),
        class => Remark::analysis(
            "profile",
            class.name(),
            f.name.clone(),
            format!(
                "largest block count {} (hot from {}, cold up to {}, {} mode): {treated}",
                f.max,
                t.hot,
                t.cold,
                use_.mode.name()
            ),
        ),
    };
    remark.in_module(module).count(f.class.name(), 1)
}

/// The name of the counters' data object of module `index`.
fn counters_symbol(index: usize) -> String {
    format!("__parec_profile_counters.{index}")
}

/// Instruments every module (the front end's CLIF, before any pass) and
/// returns where each module's counters are.
pub fn instrument_modules(modules: &mut [ClifModule]) -> Vec<CounterMap> {
    modules
        .iter_mut()
        .enumerate()
        .map(|(i, m)| instrument(m, &counters_symbol(i)))
        .collect()
}

/// The counters of a running program and the file they go to.
struct Sink {
    path: PathBuf,
    /// Each module's map and the address of its counters.
    counters: Vec<(CounterMap, usize)>,
}

impl Sink {
    /// The profile the counters hold now.
    fn profile(&self) -> Profile {
        let mut profile = Profile::default();
        for (map, address) in &self.counters {
            let counts: Vec<u64> = (0..map.count)
                // SAFETY: `address` is the JIT's data object of `map.count`
                // eight-byte aligned counters, alive until the process
                // ends; the program's thread is done writing them (it
                // returned, or it is this thread, in `exit`).
                .map(|i| unsafe { std::ptr::read_volatile((*address as *const u64).add(i)) })
                .collect();
            use parec_passes::cgdata::Section as _;
            profile.merge(map.profile(&counts));
        }
        profile
    }

    fn write(&self) -> Result<()> {
        cgdata_file::write(&self.path, &encode(&self.profile()))
            .map_err(|e| anyhow!("cannot write the profile: {e:#}"))
    }
}

/// The profile still to be written, if a profiled program is running.
static SINK: Mutex<Option<Sink>> = Mutex::new(None);

/// Arms the writing of the profile to `path` from the counters at
/// `counters` (map, address): now by [`write_armed_profile`], or by the C
/// library's `exit` if the program ends the process first.
pub fn arm(path: &Path, counters: Vec<(CounterMap, usize)>) -> Result<()> {
    let mut sink = SINK.lock().map_err(|_| anyhow!("profile state poisoned"))?;
    *sink = Some(Sink {
        path: path.to_path_buf(),
        counters,
    });
    drop(sink);
    register_exit_handler()
}

/// Writes the armed profile, if not written yet.
pub fn write_armed_profile() -> Result<()> {
    let sink = SINK.lock().ok().and_then(|mut s| s.take());
    match sink {
        Some(sink) => sink.write(),
        None => Ok(()),
    }
}

/// `atexit` handler: the program called `exit` (or trapped).
extern "C" fn write_at_exit() {
    if let Err(e) = write_armed_profile() {
        crate::io_error::eprintln(format_args!("error: {e:#}"));
    }
}

fn register_exit_handler() -> Result<()> {
    static REGISTERED: std::sync::Once = std::sync::Once::new();
    let mut failed = false;
    REGISTERED.call_once(|| {
        // SAFETY: registering a plain `extern "C" fn()` with no
        // preconditions; it only takes the mutex-guarded sink.
        failed = unsafe { libc::atexit(write_at_exit) } != 0;
    });
    if failed {
        bail!("cannot register the profile writer with atexit");
    }
    Ok(())
}

/// Checks before running that the profile can later be written to `path`:
/// its directory exists and it is absent, empty, or cgdata.
pub fn check_output(path: &Path) -> Result<()> {
    cgdata_file::check_replaceable(path)
}

/// The profile flags of a build.
#[derive(Clone, Debug, Default)]
pub struct ProfileFlags {
    /// `--profile-use FILE`.
    pub use_file: Option<PathBuf>,
    /// `--profile-mode` (default optimistic).
    pub mode: ProfileMode,
    /// `--profile-mismatch` (default error).
    pub mismatch: MismatchPolicy,
}

impl ProfileFlags {
    /// The profile to build with, read and checked, if one is given.
    pub fn read(&self) -> Result<Option<Arc<ProfileUse>>> {
        self.use_file
            .as_deref()
            .map(|path| ProfileUse::read(path, self.mode, self.mismatch).map(Arc::new))
            .transpose()
    }
}

/// Finds each module's counters in the JIT's data (`data`, see
/// `crate::jit::execute_with`): `(map, address)` pairs for [`arm`].
pub fn locate_counters(
    maps: Vec<CounterMap>,
    data: crate::jit::DataLookup,
) -> Result<Vec<(CounterMap, usize)>> {
    maps.into_iter()
        .map(|map| {
            let (address, size) = data(&map.symbol)
                .ok_or_else(|| anyhow!("the profile counters `{}` are missing", map.symbol))?;
            if size < map.count * 8 || !(address as usize).is_multiple_of(8) {
                bail!("the profile counters `{}` are malformed", map.symbol);
            }
            Ok((map, address as usize))
        })
        .collect()
}
