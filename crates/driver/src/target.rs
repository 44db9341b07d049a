//! Compilation targets, optimization levels and what they decide: the
//! Cranelift ISA and the options each pass takes from the target.
//!
//! parec builds static Linux executables for aarch64 (the point of the
//! project; run under `qemu-aarch64-static`) and x86_64 (the host). Every ISA
//! is built with `is_pic=false`: executables are linked static and non-PIE, and
//! the JIT requires it.

use std::str::FromStr;

use anyhow::{anyhow, bail, Result};
use cranelift_codegen::isa::{self, CallConv, OwnedTargetIsa, TargetIsa};
use cranelift_codegen::settings::{self, Configurable};
use parec_passes::clif_module::{ClifModule, CodegenSettings};
use parec_passes::fmerge::{self, FmergeOptions};
use parec_passes::merge::MergeOptions;
use parec_passes::size_model::Decide;
use target_lexicon::{Architecture, Triple};

/// Optimization level of a build.
///
/// The two size levels share every pass and differ in what they give up
/// for speed where code is hot (docs/DESIGN.md, "Hot code"): `-Oz` is the
/// smallest code whatever its speed, `-Os` small code at `-O2`'s speed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum OptLevel {
    /// No parec passes, Cranelift `opt_level=none`.
    O0,
    /// Speed: Cranelift `opt_level=speed`, parec's passes that never cost speed.
    O2,
    /// Size at speed (the default): Cranelift `opt_level=speed`, parec's
    /// size passes kept off hot code by the hot-site rules
    /// ([`crate::pipeline::Pass::SIZE_AT_SPEED`]).
    #[default]
    Os,
    /// The smallest code: Cranelift `opt_level=speed_and_size` (which
    /// keeps divisions by constants: `parec_passes::divisions`), all of
    /// parec's size passes.
    Oz,
}

impl OptLevel {
    /// Every level, in the order of the `-O` values.
    pub const ALL: [OptLevel; 4] = [OptLevel::O0, OptLevel::O2, OptLevel::Os, OptLevel::Oz];

    /// The value of Cranelift's `opt_level` setting for this level.
    pub fn cranelift_opt_level(self) -> &'static str {
        match self {
            OptLevel::O0 => "none",
            OptLevel::O2 | OptLevel::Os => "speed",
            OptLevel::Oz => "speed_and_size",
        }
    }

    /// The command-line flag (`-O0`, `-O2`, `-Os`, `-Oz`).
    pub fn flag(self) -> &'static str {
        match self {
            OptLevel::O0 => "-O0",
            OptLevel::O2 => "-O2",
            OptLevel::Os => "-Os",
            OptLevel::Oz => "-Oz",
        }
    }

    /// The value of `-O` (`0`, `2`, `s`, `z`).
    pub fn value(self) -> &'static str {
        &self.flag()[2..]
    }

    /// The level of a `-O` value, if it is one.
    pub fn from_value(value: &str) -> Option<OptLevel> {
        OptLevel::ALL.into_iter().find(|l| l.value() == value)
    }

    /// Whether the size passes run with the hot-site rules of `-Os`
    /// (speed where code is hot) rather than `-Oz`'s (bytes first).
    pub fn size_at_speed(self) -> bool {
        self == OptLevel::Os
    }

    /// How the size passes take their decisions at this level
    /// (`parec_passes::size_model::Decide`): `-Os` on the size model's
    /// estimates alone, so that it compiles nearly as fast as `-O2` (no
    /// trial is compiled: the inliner, the price and `fmerge` read the
    /// model, and the guard does not run: [`OptLevel::guards`]);
    /// `-Oz` estimates first and compiles the candidates
    /// near the threshold, for the last bytes.
    pub fn decide(self) -> Decide {
        if self.size_at_speed() {
            Decide::Estimate
        } else {
            Decide::default()
        }
    }

    /// Whether the size guard (`parec_passes::guard`) runs after the CLIF
    /// passes when a size pass does: at `-Oz`, not at `-Os`. The guard puts
    /// back every group of functions the passes made bigger, and `-Os`'s
    /// hot-site rules make hot code bigger on purpose: guarded, `-Os` lost
    /// the accessors it inlined into hot loops (bench/matrix: `at` and
    /// `set` called again in `det_mod`'s and `multiply_mod`'s loops, 2.7×
    /// `-O2`'s run time). Its compilations of the functions as they came
    /// in are `-Os` compile time besides.
    pub fn guards(self) -> bool {
        !self.size_at_speed()
    }
}

/// A target parec can build executables for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Target {
    #[default]
    Aarch64,
    X86_64,
}

impl Target {
    pub fn triple_str(self) -> &'static str {
        match self {
            Target::Aarch64 => "aarch64-unknown-linux-gnu",
            Target::X86_64 => "x86_64-unknown-linux-gnu",
        }
    }

    pub fn triple(self) -> Triple {
        // Both strings are valid triples known to target-lexicon.
        Triple::from_str(self.triple_str()).unwrap_or_else(|_| Triple::host())
    }

    /// The name cgdata files record for this target: a summary or outline
    /// tree made for one target is refused by builds for another.
    pub fn cgdata_name(self) -> String {
        self.triple().architecture.to_string()
    }

    /// The architecture, as the Pare lowering names it.
    pub fn arch(self) -> pare_frontend::lower::Arch {
        match self {
            Target::Aarch64 => pare_frontend::lower::Arch::Aarch64,
            Target::X86_64 => pare_frontend::lower::Arch::X86_64,
        }
    }

    /// The target of an architecture, if parec builds for it.
    pub fn from_architecture(architecture: Architecture) -> Option<Target> {
        [Target::Aarch64, Target::X86_64]
            .into_iter()
            .find(|t| t.triple().architecture == architecture)
    }

    /// The platform C calling convention (for `main` and `extern` functions).
    pub fn c_call_conv(self) -> CallConv {
        CallConv::triple_default(&self.triple())
    }

    /// The Cranelift ISA for AOT compilation at `level`.
    pub fn isa(self, level: OptLevel) -> Result<OwnedTargetIsa> {
        self.isa_with(level, &CodegenSettings::default())
    }

    /// The ISA for AOT compilation at `level` of code that asks for
    /// `settings` (a `.clif` file's `set` and `target` lines).
    pub fn isa_with(self, level: OptLevel, settings: &CodegenSettings) -> Result<OwnedTargetIsa> {
        self.build_isa(level, true, settings)
    }

    /// Like [`Target::isa`], choosing whether Cranelift records block starts
    /// (`machine_code_cfg_info`, which the outliner needs; tests check that
    /// it does not change the code).
    pub fn isa_with_cfg_info(self, level: OptLevel, cfg_info: bool) -> Result<OwnedTargetIsa> {
        self.build_isa(level, cfg_info, &CodegenSettings::default())
    }

    fn build_isa(
        self,
        level: OptLevel,
        cfg_info: bool,
        settings: &CodegenSettings,
    ) -> Result<OwnedTargetIsa> {
        let mut builder = isa::lookup(self.triple())
            .map_err(|e| anyhow!("Cranelift cannot target {}: {e}", self.triple_str()))?;
        apply(&mut builder, &settings.isa)?;
        builder
            .finish(aot_flags(level, cfg_info, settings)?)
            .map_err(|e| anyhow!("cannot configure Cranelift for {}: {e}", self.triple_str()))
    }
}

/// Where compiled code runs: on this machine through the JIT, or as a
/// target's objects and executables. It decides the ISA, and which section
/// of a `.clif` file with several `target` lines applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Machine {
    /// The host, in-process (`parec run`).
    Host,
    /// A target's objects and executables (`parec build`, `parec opt`).
    Target(Target),
}

impl Machine {
    pub fn architecture(self) -> Architecture {
        match self {
            Machine::Host => Triple::host().architecture,
            Machine::Target(target) => target.triple().architecture,
        }
    }

    /// The ISA for code asking for `settings`, at `level`.
    pub fn isa(self, level: OptLevel, settings: &CodegenSettings) -> Result<OwnedTargetIsa> {
        match self {
            Machine::Host => host_jit_isa_with(level, settings),
            Machine::Target(target) => target.isa_with(level, settings),
        }
    }
}

impl FromStr for Target {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "aarch64" | "aarch64-unknown-linux-gnu" | "aarch64-linux-gnu" => Ok(Target::Aarch64),
            "x86_64" | "x86_64-unknown-linux-gnu" | "x86_64-linux-gnu" => Ok(Target::X86_64),
            other => Err(format!(
                "unsupported target `{other}`; supported: aarch64-unknown-linux-gnu, x86_64-unknown-linux-gnu"
            )),
        }
    }
}

/// Cranelift settings every parec compilation shares: the level's
/// `opt_level`, non-PIC code (static executables, an in-process JIT), and the
/// verifier in debug builds.
fn base_settings(level: OptLevel) -> Result<settings::Builder> {
    let mut b = settings::builder();
    b.set("opt_level", level.cranelift_opt_level())?;
    b.set("is_pic", "false")?;
    b.set(
        "enable_verifier",
        if cfg!(debug_assertions) {
            "true"
        } else {
            "false"
        },
    )?;
    Ok(b)
}

/// Shared Cranelift flags of AOT builds, with a module's `settings`.
fn aot_flags(
    level: OptLevel,
    cfg_info: bool,
    settings: &CodegenSettings,
) -> Result<settings::Flags> {
    let mut b = base_settings(level)?;
    // Pare code never unwinds; no `.eh_frame` is emitted, so skip the work.
    b.set("unwind_info", "false")?;
    apply(&mut b, &settings.shared)?;
    // Static non-PIE executables: a `.clif` file asking for PIC is refused
    // when it is read (`crate::clif_file`).
    b.set("is_pic", "false")?;
    // Block starts for the machine passes' lifter (`parec_passes::machine`).
    // Only recorded: the code bytes are the same with and without it, so
    // parec's choice overrides a file's.
    b.set(
        "machine_code_cfg_info",
        if cfg_info { "true" } else { "false" },
    )?;
    Ok(settings::Flags::new(b))
}

/// The host ISA, configured for the JIT (`is_pic=false`, long-range libcalls).
pub fn host_jit_isa(level: OptLevel) -> Result<OwnedTargetIsa> {
    host_jit_isa_with(level, &CodegenSettings::default())
}

/// The host ISA for the JIT, for code asking for `settings`. The host's own
/// ISA features are detected; a file may ask for a subset of them (its
/// `target` line's flags), not for one this machine lacks.
pub fn host_jit_isa_with(level: OptLevel, settings: &CodegenSettings) -> Result<OwnedTargetIsa> {
    let mut b = base_settings(level)?;
    apply(&mut b, &settings.shared)?;
    // The JIT needs non-PIC code that reaches libc, which lies beyond a
    // PC-relative reach; a file asking otherwise is refused when read.
    b.set("is_pic", "false")?;
    b.set("use_colocated_libcalls", "false")?;
    let flags = settings::Flags::new(b);
    let native = || {
        cranelift_native::builder().map_err(|e| anyhow!("the host machine is not supported: {e}"))
    };
    let finish = |builder: isa::Builder| {
        builder
            .finish(flags.clone())
            .map_err(|e| anyhow!("cannot configure Cranelift for the host: {e}"))
    };
    if settings.isa.is_empty() {
        return finish(native()?);
    }
    let host = finish(native()?)?;
    let mut requested = native()?;
    apply(&mut requested, &settings.isa)?;
    let requested = finish(requested)?;
    let host_flags = host.isa_flags();
    for flag in requested.isa_flags() {
        let on_host = host_flags.iter().find(|f| f.name == flag.name);
        if flag.as_bool() == Some(true) && on_host.and_then(|f| f.as_bool()) == Some(false) {
            bail!(
                "the code asks for the ISA feature `{}`, which this machine lacks",
                flag.name
            );
        }
    }
    Ok(requested)
}

/// Applies `(name, value)` settings in order.
fn apply(builder: &mut dyn Configurable, settings: &[(String, String)]) -> Result<()> {
    for (name, value) in settings {
        builder
            .set(name, value)
            .map_err(|e| anyhow!("Cranelift setting `{name}={value}`: {e}"))?;
    }
    Ok(())
}

/// The Cranelift settings of a build's modules, which must agree: the JIT
/// compiles a program with one ISA, and the passes measure code size with
/// one.
pub fn common_settings(modules: &[ClifModule]) -> Result<CodegenSettings> {
    let Some(first) = modules.first() else {
        return Ok(CodegenSettings::default());
    };
    if let Some(other) = modules.iter().find(|m| m.settings != first.settings) {
        bail!(
            "modules `{}` and `{}` ask for different Cranelift settings (their `set` and `target` lines); one build compiles with one set of settings",
            first.name,
            other.name
        );
    }
    Ok(first.settings.clone())
}

/// Testing: every function hashes alike (`PAREC_MERGE_FORCE_COLLISIONS=1`).
pub const FORCE_COLLISIONS_ENV: &str = "PAREC_MERGE_FORCE_COLLISIONS";

/// The merger's options for code generation by `isa` (or for no particular
/// ISA): defaults, plus the forced-collision test mode and the tunable
/// thresholds `PAREC_MERGE_MIN_INSTS` / `PAREC_MERGE_MIN_BENEFIT` (bytes)
/// and the static hot-loop rule `PAREC_MERGE_LOOP_CALLEE_INSTS`
/// (`MergeOptions::loop_callee_insts`) from the environment. Thunks call and return instead of tail-calling
/// where Cranelift's tail calls need frame pointers that the ISA does not
/// keep (x86-64).
pub fn merge_options(isa: Option<&dyn TargetIsa>) -> MergeOptions {
    let mut options = MergeOptions {
        force_collisions: std::env::var(FORCE_COLLISIONS_ENV).is_ok_and(|v| v == "1"),
        ..MergeOptions::default()
    };
    let number = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
    if let Some(n) = number("PAREC_MERGE_MIN_INSTS") {
        options.min_insts = n.min(u64::from(u32::MAX)) as u32;
    }
    if let Some(n) = number("PAREC_MERGE_MIN_BENEFIT") {
        options.min_benefit = n;
    }
    if let Some(n) = number("PAREC_MERGE_LOOP_CALLEE_INSTS") {
        options.loop_callee_insts = n as usize;
    }
    if let Some(isa) = isa {
        options.tail_calls = isa.triple().architecture != Architecture::X86_64
            || isa.flags().preserve_frame_pointers();
        options.sibling_calls = matches!(isa.triple().architecture, Architecture::Aarch64(_));
    }
    options
}

/// The inliner's options for `policy` at `level`: defaults; at `-Os` the
/// hot-site rules (docs/DESIGN.md, "Hot code"): hot sites inlined in merge
/// members whatever their callees (groups whose callees differ split) and
/// hot accessors inlined up to [`HOT_ACCESSOR_INSTS`], and every call of a
/// callee `-O2` calls tiny (`SpeedLimits::tiny`) inlined, loop or not, in
/// the functions that may run many times (`InlineOptions::hot_tiny_insts`);
/// plus from the environment the static hot-site limits
/// `PAREC_INLINE_HOT_INSTS` (`InlineOptions::hot_callee_insts`),
/// `PAREC_INLINE_HOT_ACCESSOR_INSTS` and `PAREC_INLINE_HOT_TINY_INSTS`
/// (`InlineOptions::hot_tiny_insts`),
/// and how size decisions are taken, `PAREC_INLINE_DECIDE` (`measure`,
/// `estimate-then-measure`, `estimate`: `InlineOptions::decide`); unparsable
/// values are ignored.
pub fn inline_options(
    policy: parec_passes::inline::Policy,
    level: OptLevel,
) -> parec_passes::inline::InlineOptions {
    let mut options = parec_passes::inline::InlineOptions::for_policy(policy);
    options.decide = level.decide();
    if level.size_at_speed() {
        options.hot_sites_in_members = true;
        options.hot_accessor_insts = HOT_ACCESSOR_INSTS;
        options.hot_tiny_insts = options.speed.tiny;
    }
    let number = |name: &str| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
    };
    if let Some(n) = number("PAREC_INLINE_HOT_INSTS") {
        options.hot_callee_insts = n;
    }
    if let Some(n) = number("PAREC_INLINE_HOT_ACCESSOR_INSTS") {
        options.hot_accessor_insts = n;
    }
    if let Some(n) = number("PAREC_INLINE_HOT_TINY_INSTS") {
        options.hot_tiny_insts = n;
    }
    if let Some(decide) = std::env::var("PAREC_INLINE_DECIDE")
        .ok()
        .and_then(|v| Decide::from_name(&v))
    {
        options.decide = decide;
    }
    options
}

/// `-Os`'s exploration threshold in similar-function merging (candidates
/// tried per function; `-Oz` tries `FmergeOptions::default`'s 5): each try
/// generates a merged function, the better part of `-Os`'s compile time
/// beyond `-O2`'s, and the first two ranked candidates find nearly all of
/// the merges (bench/, one run: 69.8% of `-Oz --two-rounds`' reduction kept
/// with 2, 69.7% with 5, at 1.88× against 2.12× `-O2`'s compile time).
pub const OS_FMERGE_EXPLORATION: usize = 2;

/// `-Os`'s least size of each side of a region that a merged function
/// enters inside a loop (`FmergeOptions::region_min_insts_in_loop`).
pub const OS_REGION_MIN_INSTS_IN_LOOP: usize = 8;

/// `-Os`'s limit on hot accessors (`InlineOptions::hot_accessor_insts`):
/// `-O2`'s limit on callees in loops.
pub const HOT_ACCESSOR_INSTS: usize = 60;

/// The similar-function merger's options for code generation by `isa`:
/// defaults, the tail-call rule of [`merge_options`], and from the
/// environment (unparsable values are ignored, as for `PAREC_MERGE_*`):
/// `PAREC_FMERGE_SEARCH` (`adaptive`, `static`, `exhaustive`,
/// `exhaustive-frequency`), `PAREC_FMERGE_EXPLORATION` (candidates tried per
/// function), `PAREC_FMERGE_ALIGN` (`nw`, `pairwise`),
/// `PAREC_FMERGE_MIN_INSTS`, `PAREC_FMERGE_MIN_BENEFIT` (bytes),
/// `PAREC_FMERGE_MAX_MEMBERS` (originals per merged function; 2 merges pairs
/// only), `PAREC_FMERGE_MEASURE_ALL=1` (measure what the model rejects too,
/// to evaluate it), `PAREC_FMERGE_DECIDE` (`measure`, `estimate-then-measure`,
/// `estimate`: `FmergeOptions::decide`), `PAREC_FMERGE_SCREEN` (`0`/`1`:
/// `FmergeOptions::screen_aligned`) and `PAREC_FMERGE_EXCLUDE`
/// (comma-separated functions not to touch: the hook for hot code).
///
/// At `-Os`, decisions on the size model's estimates ([`OptLevel::decide`]),
/// tries rejected on the alignment's estimate before code generation where
/// it is clear of the threshold (`FmergeOptions::screen_aligned`),
/// [`OS_FMERGE_EXPLORATION`] candidates per function, and the rule for hot
/// code: a merged function may not test its
/// identifier in every iteration of a loop (`FmergeOptions::loops_untested`:
/// a region's entry or a `select` of loop-invariant values may stay; a region
/// entered in a loop has at least [`OS_REGION_MIN_INSTS_IN_LOOP`] instructions
/// each side, `PAREC_FMERGE_REGION_MIN_INSTS_IN_LOOP` overrides it), and region-level
/// dispatch (at `-Oz` only for pairs a profile knows hot). `PAREC_FMERGE_REGIONS=0`
/// turns region-level dispatch off, `=1` on at every level, `PAREC_FMERGE_HOT_REGIONS=0` keeps
/// functions a profile knows hot out of merging (to measure what each
/// adds).
pub fn fmerge_options(isa: Option<&dyn TargetIsa>, level: OptLevel) -> FmergeOptions {
    let var = |name: &str| std::env::var(name).ok();
    let number = |name: &str| var(name).and_then(|v| v.parse::<i64>().ok());
    let mut options = FmergeOptions {
        tail_calls: merge_options(isa).tail_calls,
        sibling_calls: merge_options(isa).sibling_calls,
        loops_untested: level.size_at_speed(),
        // Region-level dispatch is what lets -Os merge instances without
        // testing the identifier in their loops. At -Oz, where any test
        // may stay, it merged pairs whose alternatives were smaller
        // (measured: examples/growable +140 bytes against leaving fmerge
        // out, bench/pipeline --lto +312 against per module), against
        // 208 bytes it saved over bench/: only hot pairs (a profile) get it.
        regions: level.size_at_speed(),
        decide: level.decide(),
        screen_aligned: level.decide() == Decide::Estimate,
        ..FmergeOptions::default()
    };
    if level.size_at_speed() {
        options.exploration = OS_FMERGE_EXPLORATION;
        options.region_min_insts_in_loop = OS_REGION_MIN_INSTS_IN_LOOP;
    }
    if let Some(n) = number("PAREC_FMERGE_REGION_MIN_INSTS_IN_LOOP").filter(|&n| n >= 0) {
        options.region_min_insts_in_loop = n as usize;
    }
    match var("PAREC_FMERGE_REGIONS").as_deref() {
        Some("0") => options.regions = false,
        Some("1") => options.regions = true,
        _ => {}
    }
    if var("PAREC_FMERGE_HOT_REGIONS").is_some_and(|v| v == "0") {
        options.hot_regions = false;
    }
    if let Some(search) = var("PAREC_FMERGE_SEARCH").and_then(|v| fmerge::Search::from_name(&v)) {
        options.search = search;
    }
    if let Some(n) = number("PAREC_FMERGE_EXPLORATION").filter(|&n| n > 0) {
        options.exploration = n as usize;
    }
    match var("PAREC_FMERGE_ALIGN").as_deref() {
        Some("nw") => options.align = fmerge::AlignMode::NeedlemanWunsch,
        Some("pairwise") => options.align = fmerge::AlignMode::Pairwise,
        _ => {}
    }
    if let Some(n) = number("PAREC_FMERGE_MIN_INSTS").filter(|&n| n >= 0) {
        options.min_insts = n as usize;
    }
    if let Some(n) = number("PAREC_FMERGE_MIN_BENEFIT") {
        options.min_benefit = n;
    }
    if let Some(n) = number("PAREC_FMERGE_MAX_MEMBERS").filter(|&n| n >= 2) {
        options.max_members = n as usize;
    }
    options.measure_all = var("PAREC_FMERGE_MEASURE_ALL").is_some_and(|v| v == "1");
    if let Some(decide) = var("PAREC_FMERGE_DECIDE").and_then(|v| Decide::from_name(&v)) {
        options.decide = decide;
    }
    match var("PAREC_FMERGE_SCREEN").as_deref() {
        Some("0") => options.screen_aligned = false,
        Some("1") => options.screen_aligned = true,
        _ => {}
    }
    if let Some(list) = var("PAREC_FMERGE_EXCLUDE") {
        options.exclude = list
            .split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(String::from)
            .collect();
    }
    options
}
