//! Code generation of one module: Cranelift, the machine passes, an object.
//!
//! A [`ClifModule`] whose CLIF passes have run becomes one ELF object in
//! three steps, each timed ([`CodegenTimes`]):
//!
//! 1. *Cranelift* compiles every function for the target (e-graph, lowering,
//!    register allocation, emission) into a [`MachFunction`]: bytes, block
//!    starts, relocations by symbol, traps and call sites; at `-Oz` for
//!    aarch64 ([`CodegenOptions::choose_lowering`]) also without its
//!    mid-end, and each function keeps the lowering whose code is smaller
//!    after the machine passes of step 2 before the outliner
//!    (`parec_passes::mid_end`, [`LoweringStats`]);
//! 2. the *shared trap paths* pass (`parec_passes::traps`) completes the
//!    code if the lowering left its checks as `udf`s for it
//!    ([`CodegenOptions::trap_paths`]; at every level); then the pipeline's
//!    *machine passes* rewrite that code, in order — the peepholes
//!    ([`MachinePass::Peephole`], with `adr` for symbol addresses when the
//!    program's [`CodeModel`] allows), copy propagation
//!    ([`MachinePass::Copyprop`]), frame-pointer omission
//!    ([`MachinePass::Frame`]), one epilogue per function
//!    ([`MachinePass::Epilogue`]), then the outliner
//!    ([`MachinePass::Outline`]) against the global prefix tree of an
//!    earlier round if the build has one ([`OutlineContext`]);
//! 3. the code and the module's data are defined from bytes into a
//!    cranelift-object module, one section per function, and written with
//!    `.llvm_addrsig` ([`crate::object`]).
//!
//! Modules compile independently, `jobs` at a time; [`compile_all`] returns
//! the objects in input order, so the output does not depend on `-j`.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context as _, Result};
use cranelift_codegen::ir;
use cranelift_codegen::isa::CallConv;
use cranelift_module::{default_libcall_names, FuncId, Module as _};
use cranelift_object::{ObjectBuilder, ObjectModule};
use parec_passes::cgdata::Section as _;
use parec_passes::clif_module::{ClifModule, Linkage, SymbolKind};
use parec_passes::copyprop::{self, CopyStats};
use parec_passes::epilogue::{self, EpilogueStats};
use parec_passes::frame::{self, FrameStats};
use parec_passes::heat::HotCode;
use parec_passes::machine::decode::{Decoded, Decoder};
use parec_passes::machine::{lift::Emitted, MachFunction};
use parec_passes::mid_end;
use parec_passes::outline::global::OutlineTree;
use parec_passes::outline::{self, OutlineOptions, OutlineStats};
use parec_passes::peephole::{self, PeepholeOptions, PeepholeStats};
use parec_passes::remark::{self, Remark};
use parec_passes::sibcall::{self, SibcallOptions, SibcallStats};
use parec_passes::traps::{self, ResolvedPaths, TrapPaths, TrapStats};

use crate::clif_to_module::{
    add_parec_relocs, Colocation, CompiledFunction, LoweredFunction, ModuleDefiner, RelocTargets,
};
use crate::object::write_with_addrsig;
use crate::pipeline::MachinePass;
use crate::target::{OptLevel, Target};

/// How modules become objects.
#[derive(Clone, Debug)]
pub struct CodegenOptions {
    pub target: Target,
    pub level: OptLevel,
    /// The machine passes, in order (those that do not apply to the target
    /// are skipped).
    pub machine: Vec<MachinePass>,
    /// Number of modules compiled in parallel (at least 1).
    pub jobs: usize,
    /// Every symbol is within `adr`'s reach of the code once linked
    /// ([`CodeModel::near_symbols`]): the peepholes may use `adr`.
    pub near_symbols: bool,
    /// Set when the front end lowered checks to `udf`s that branch to
    /// shared trap paths ([`crate::frontend::Lowered::trap_paths`]): the
    /// machine pass `parec_passes::traps` then runs first on every module,
    /// at every level, whatever the pass list says — the code is not
    /// complete without it.
    pub trap_paths: Option<TrapPaths>,
    /// Each function's code is the cheapest of its lowerings
    /// (`parec_passes::mid_end`), where there are several: at `-Oz`, for
    /// aarch64. Set for a build's code generation, not for the size
    /// guard's measure, which prices the lowering every size pass measures.
    pub choose_lowering: bool,
}

/// How far from the code its symbols may lie once linked: GCC's
/// `-mcmodel` for aarch64, chosen per program.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CodeModel {
    /// `tiny` for a program whose estimated size
    /// ([`estimated_image_bytes`]) is at most [`AUTO_TINY_LIMIT`], `small`
    /// otherwise.
    #[default]
    Auto,
    /// Symbols anywhere within ±4 GiB: addresses by `adrp`+`add`.
    Small,
    /// The linked image within ±1 MiB of the code: addresses by `adr`
    /// (`R_AARCH64_ADR_PREL_LO21`, which the linker checks: a program too
    /// large for it fails to link, naming the relocation; build it with
    /// `--code-model small`).
    Tiny,
}

/// The largest estimated size of a program's own code and data for which
/// [`CodeModel::Auto`] chooses `tiny`. A static executable also holds the
/// C library's code and data, which lie between the program's code and
/// its writable data: about 512 KiB with Debian 12's glibc (measured: the
/// empty program's `.text` to `.bss` span), so a quarter of `adr`'s reach
/// is left to the program, and the estimate errs upwards.
pub const AUTO_TINY_LIMIT: u64 = 256 * 1024;

/// An upper estimate of the machine code one CLIF instruction becomes
/// (aarch64 emits about 1.3 instructions per CLIF instruction on bench/;
/// this allows three times that, spills included).
pub const BYTES_PER_CLIF_INSTRUCTION: u64 = 16;

impl CodeModel {
    pub fn name(self) -> &'static str {
        match self {
            CodeModel::Auto => "auto",
            CodeModel::Small => "small",
            CodeModel::Tiny => "tiny",
        }
    }

    /// Whether code for `modules`, the whole program, may address symbols
    /// with `adr`.
    pub fn near_symbols(self, modules: &[ClifModule]) -> bool {
        match self {
            CodeModel::Small => false,
            CodeModel::Tiny => true,
            CodeModel::Auto => estimated_image_bytes(modules) <= AUTO_TINY_LIMIT,
        }
    }
}

impl std::str::FromStr for CodeModel {
    type Err = String;

    fn from_str(s: &str) -> Result<CodeModel, String> {
        [CodeModel::Auto, CodeModel::Small, CodeModel::Tiny]
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| format!("unknown code model `{s}`; expected auto, small or tiny"))
    }
}

/// An estimate, from above, of the bytes `modules` put in the linked
/// image: [`BYTES_PER_CLIF_INSTRUCTION`] per CLIF instruction, plus the
/// raw functions' bytes and every data object. It depends only on the CLIF (after the CLIF passes), so a
/// whole build and the plan of a separate one decide alike.
pub fn estimated_image_bytes(modules: &[ClifModule]) -> u64 {
    let code: u64 = modules
        .iter()
        .flat_map(|m| &m.functions)
        .map(|def| def.func.dfg.num_insts() as u64 * BYTES_PER_CLIF_INSTRUCTION)
        .sum();
    let raw: u64 = modules
        .iter()
        .flat_map(|m| &m.raw_functions)
        .map(|def| def.bytes.len() as u64)
        .sum();
    let data: u64 = modules
        .iter()
        .flat_map(|m| &m.data)
        .map(|d| d.bytes.len() as u64 + d.align)
        .sum();
    code + raw + data
}

/// What the outliner of one module knows about the rest of the build.
#[derive(Clone, Debug, Default)]
pub struct OutlineContext {
    /// Local functions other modules define too ([`shared_functions`]).
    pub shared: BTreeSet<String>,
    /// What is known of how often the code runs ([`crate::pipeline::Pipeline::heat`]).
    pub heat: Arc<HotCode>,
    /// The global prefix tree of an earlier round ([GFO], [GFM] §2.2 in
    /// docs/DESIGN.md), if any.
    pub global: Option<Arc<OutlineTree>>,
}

/// One compiled module: its name and the ELF bytes.
#[derive(Clone, Debug)]
pub struct CompiledObject {
    pub name: String,
    pub bytes: Vec<u8>,
    /// What the choice among lowerings did, if it ran.
    pub lowering: Option<LoweringStats>,
    /// What the shared-trap-path pass did, if it ran.
    pub traps: Option<TrapStats>,
    /// What the peepholes did, if they ran.
    pub peephole: Option<PeepholeStats>,
    /// What copy propagation did, if it ran.
    pub copyprop: Option<CopyStats>,
    /// What frame-pointer omission did, if it ran.
    pub frame: Option<FrameStats>,
    /// What the sibling-call pass did, if it ran.
    pub sibcall: Option<SibcallStats>,
    /// What the sharing of epilogues did, if it ran.
    pub epilogue: Option<EpilogueStats>,
    /// What the machine outliner did, if it ran.
    pub outline: Option<OutlineStats>,
    /// The outliner's publication for the global prefix tree (empty if it
    /// did not run): see [`combined_outline_tree`].
    pub outline_tree: OutlineTree,
    /// The machine passes' remarks, one per decision, in pass order.
    pub remarks: Vec<Remark>,
    pub times: CodegenTimes,
}

/// Where the time of one module's code generation went.
#[derive(Clone, Debug, Default)]
pub struct CodegenTimes {
    pub cranelift: Duration,
    /// Each machine pass that ran, in order.
    pub machine: Vec<(&'static str, Duration)>,
    pub object: Duration,
}

/// Compiles every module to an object, `opts.jobs` at a time, in input
/// order; the outliner works against `global`, the prefix tree of an
/// earlier round, if given.
pub fn compile_all(
    modules: &[ClifModule],
    opts: &CodegenOptions,
    global: Option<Arc<OutlineTree>>,
) -> Result<Vec<CompiledObject>> {
    let shared = shared_functions(modules);
    let lowered = lower_all(modules, opts, &shared)?;
    let context = OutlineContext {
        shared,
        global,
        heat: Arc::default(),
    };
    emit_all(modules, &lowered, opts, &context, Lowering::Counted)
}

/// Steps 1 and 2 up to the outliner for every module, `opts.jobs` at a
/// time, in input order: what every round of a build shares.
pub fn lower_all(
    modules: &[ClifModule],
    opts: &CodegenOptions,
    shared: &BTreeSet<String>,
) -> Result<Vec<LoweredModule>> {
    crate::parallel::map(opts.jobs, modules, |m| lower_module(m, opts, shared))?
        .into_iter()
        .collect()
}

/// The rest of steps 2 and 3 for every module, from its lowering, in
/// input order. A two-round build calls it once per round on the same
/// lowerings: round 2 reuses round 1's Cranelift code (the CLIF is the
/// same; only the outliner's prefix tree differs), with `Lowering::Reused`
/// so that the lowering's time is counted once.
pub fn emit_all(
    modules: &[ClifModule],
    lowered: &[LoweredModule],
    opts: &CodegenOptions,
    context: &OutlineContext,
    lowering: Lowering,
) -> Result<Vec<CompiledObject>> {
    let pairs: Vec<(&ClifModule, &LoweredModule)> = modules.iter().zip(lowered).collect();
    crate::parallel::map(opts.jobs, &pairs, |&(m, l)| {
        emit_module(m, l, opts, context, lowering)
    })?
    .into_iter()
    .collect()
}

/// Whether an object's times include its module's lowering.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lowering {
    /// The lowering was made for this object: its time counts.
    Counted,
    /// The lowering was made for an earlier round's object.
    Reused,
}

/// Names of the local functions defined by more than one module: generic
/// instances each module compiles for itself. The linker folds their copies
/// as long as the outliner treats every copy alike.
pub fn shared_functions(modules: &[ClifModule]) -> BTreeSet<String> {
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for m in modules {
        for def in &m.functions {
            if let Some(sym) = m.symbols.get(def.symbol as usize) {
                if sym.linkage == Linkage::Local {
                    *seen.entry(sym.name.as_str()).or_default() += 1;
                }
            }
        }
    }
    seen.into_iter()
        .filter(|&(_, n)| n > 1)
        .map(|(name, _)| name.to_string())
        .collect()
}

/// Compiles `module` to an ELF object as part of a build described by
/// `context`.
pub fn compile_module(
    module: &ClifModule,
    opts: &CodegenOptions,
    context: &OutlineContext,
) -> Result<CompiledObject> {
    let lowered = lower_module(module, opts, &context.shared)?;
    emit_module(module, &lowered, opts, context, Lowering::Counted)
}

/// A module's code after Cranelift, the shared-trap-path pass and the
/// machine passes before the outliner; the ids and relocation targets it
/// refers to are those of a cranelift-object module in which the module
/// was declared ([`ModuleDefiner::declare`]) and then the trap paths
/// resolved — an order [`emit_module`] repeats, so they stay valid there.
pub struct LoweredModule {
    compiled: Vec<CompiledFunction>,
    targets: RelocTargets,
    /// Symbols whose address the code takes (for `.llvm_addrsig`).
    address_significant: BTreeSet<String>,
    lowering: Option<LoweringStats>,
    traps: Option<TrapStats>,
    peephole: Option<PeepholeStats>,
    copyprop: Option<CopyStats>,
    frame: Option<FrameStats>,
    sibcall: Option<SibcallStats>,
    epilogue: Option<EpilogueStats>,
    /// What the machine passes decoded, for the outliner.
    decoded: Decoded,
    remarks: Vec<Remark>,
    times: CodegenTimes,
}

/// The bytes of the functions `functions` (indices) of `module` as
/// [`lower_module`] leaves them: after Cranelift, the shared trap paths and
/// the machine passes that work per function, before the outliner (which
/// works on the whole program). The size guard's measure
/// (`parec_passes::guard::GuardOptions::sizer`); only those functions are
/// compiled, through the module's code cache.
pub fn lowered_sizes(
    module: &ClifModule,
    functions: &[usize],
    opts: &CodegenOptions,
) -> Result<Vec<i64>> {
    // The module with only those functions (the others defined elsewhere,
    // as far as this lowering knows), without copying the others.
    let keep: BTreeSet<usize> = functions.iter().copied().collect();
    let mut part = ClifModule::default();
    part.name = module.name.clone();
    part.symbols = module.symbols.clone();
    part.data = module.data.clone();
    part.raw_functions = module.raw_functions.clone();
    part.settings = module.settings.clone();
    if let Some(cache) = module.code_cache() {
        part.set_code_cache(cache);
    }
    for (i, def) in module.functions.iter().enumerate() {
        match keep.contains(&i) {
            true => part.functions.push(def.clone()),
            false => part.symbols[def.symbol as usize].linkage = Linkage::Import,
        }
    }
    let lowered = lower_module(&part, opts, &BTreeSet::new())?;
    // The lowered functions are `functions` sorted.
    let by_index: BTreeMap<usize, i64> = keep
        .iter()
        .zip(&lowered.compiled)
        .map(|(&f, c)| (f, c.code.bytes.len() as i64))
        .collect();
    Ok(functions.iter().map(|f| by_index[f]).collect())
}

/// A new cranelift-object module for `module`'s object, with the module
/// declared.
fn object_module(module: &ClifModule, opts: &CodegenOptions) -> Result<ObjectModule> {
    let isa = opts.target.isa_with(opts.level, &module.settings)?;
    let mut builder = ObjectBuilder::new(
        isa,
        module.name.as_bytes().to_vec(),
        default_libcall_names(),
    )
    .map_err(|e| anyhow!("cannot create object for `{}`: {e}", module.name))?;
    builder.per_function_section(true);
    Ok(ObjectModule::new(builder))
}

/// Steps 1 and 2 up to the outliner (see the module doc).
pub fn lower_module(
    module: &ClifModule,
    opts: &CodegenOptions,
    shared: &BTreeSet<String>,
) -> Result<LoweredModule> {
    let in_module = || format!("in module `{}`", module.name);
    let mut times = CodegenTimes::default();
    let mut obj = object_module(module, opts)?;
    let arch = obj.isa().triple().architecture;
    let mut definer = ModuleDefiner::new(&mut obj, Colocation::AsGiven);
    definer.declare(module).with_context(in_module)?;
    definer.define_data_only(module).with_context(in_module)?;

    let start = Instant::now();
    let mut targets = RelocTargets::default();
    let measured = definer
        .lower_functions(module, &mut targets, shared, None)
        .with_context(in_module)?;
    // The choice among lowerings: at `-Oz` (the ISA says), for the code
    // the machine passes price.
    let choice_isa = match opts.choose_lowering && MachinePass::Peephole.applies_to(arch) {
        true => Some(opts.target.isa_with(opts.level, &module.settings)?),
        false => None,
    };
    let lowerer = choice_isa.as_deref().and_then(mid_end::Lowerer::new);
    let plain = match &lowerer {
        Some(lowerer) => Some(
            definer
                .lower_functions(
                    module,
                    &mut targets,
                    shared,
                    Some((lowerer, mid_end::Lowering::Plain)),
                )
                .with_context(in_module)?,
        ),
        None => None,
    };
    times.cranelift = start.elapsed();

    let resolved = match &opts.trap_paths {
        Some(paths) => {
            if !matches!(arch, target_lexicon::Architecture::Aarch64(_)) {
                return Err(anyhow!("shared trap paths need aarch64 code")).with_context(in_module);
            }
            let mut resolved = resolve_trap_paths(paths, &mut definer, &mut targets)?;
            // The code model's promise (every symbol within ±1 MiB) covers
            // the paths: checks may branch to them directly.
            resolved.near = opts.near_symbols;
            Some(resolved)
        }
        None => None,
    };
    // One decoder for the module's machine passes: each decodes mostly the
    // words the one before it decoded.
    let mut decoder = Decoder::new();
    let passes = MachinePasses {
        module,
        opts,
        arch,
        resolved: resolved.as_ref(),
        targets: &targets,
    };
    // The passes before the outliner rewrite the code in place: each sees
    // the one before it as the code Cranelift emitted.
    let (chosen, functions, run, lowering_stats) = match plain {
        Some(plain) => {
            let start = Instant::now();
            let (chosen, functions, mut run, stats) =
                choose_lowerings(measured, plain, &passes, &mut decoder);
            // The passes' own times are those of the code kept; the rest
            // (pricing, a second run) is the choice's.
            let passes_time: Duration = run.times.iter().map(|(_, t)| *t).sum();
            let choice = start.elapsed().saturating_sub(passes_time);
            run.times.insert(0, ("lowering-choice", choice));
            (chosen, Some(functions), run, Some(stats))
        }
        None => (measured, None, MachineRun::default(), None),
    };
    let (ids, emitted): (Vec<FuncId>, Vec<MachFunction>) = chosen
        .into_iter()
        .map(|l| definer.take(l))
        .map(|c| (c.id, c.code))
        .unzip();
    let (functions, run) = match functions {
        Some(functions) => (functions, run),
        None => {
            let mut functions = emitted;
            let run = passes.run(&mut functions, &mut decoder);
            (functions, run)
        }
    };
    let compiled = ids
        .into_iter()
        .zip(functions)
        .map(|(id, code)| CompiledFunction { id, code })
        .collect();
    times.machine.extend(run.times);
    Ok(LoweredModule {
        compiled,
        targets,
        address_significant: definer.address_significant().clone(),
        lowering: lowering_stats,
        traps: run.traps,
        peephole: run.peephole,
        copyprop: run.copyprop,
        frame: run.frame,
        sibcall: run.sibcall,
        epilogue: run.epilogue,
        decoded: decoder.into_known(),
        remarks: run.remarks,
        times,
    })
}

/// The shared trap paths and the machine passes before the outliner, as
/// one module's code generation runs them.
struct MachinePasses<'a> {
    module: &'a ClifModule,
    opts: &'a CodegenOptions,
    arch: target_lexicon::Architecture,
    /// The trap paths, when the lowering left its checks to them.
    resolved: Option<&'a ResolvedPaths>,
    targets: &'a RelocTargets,
}

/// What [`MachinePasses::run`] did.
#[derive(Default)]
struct MachineRun {
    traps: Option<TrapStats>,
    peephole: Option<PeepholeStats>,
    copyprop: Option<CopyStats>,
    frame: Option<FrameStats>,
    sibcall: Option<SibcallStats>,
    epilogue: Option<EpilogueStats>,
    remarks: Vec<Remark>,
    times: Vec<(&'static str, Duration)>,
}

impl MachinePasses<'_> {
    /// Runs the passes on `functions`, in place. Each pass works on each
    /// function alone, so a function's result does not depend on the
    /// others in `functions`.
    fn run(&self, functions: &mut [MachFunction], decoder: &mut Decoder) -> MachineRun {
        let mut run = MachineRun::default();
        if let Some(resolved) = self.resolved {
            let start = Instant::now();
            run.traps = Some(traps::run(functions, resolved));
            run.times.push(("trap-paths", start.elapsed()));
        }
        let opts = self.opts;
        for &pass in opts.machine.iter().filter(|p| p.applies_to(self.arch)) {
            let start = Instant::now();
            match pass {
                MachinePass::Peephole => {
                    let options = PeepholeOptions {
                        near_symbols: opts.near_symbols,
                    };
                    let report = peephole::run_decoding(functions, &options, decoder);
                    run.remarks.extend(report.remarks);
                    run.peephole = Some(report.stats);
                }
                MachinePass::Copyprop => {
                    let report = copyprop::run_decoding(functions, decoder);
                    run.remarks.extend(report.remarks);
                    run.copyprop = Some(report.stats);
                }
                MachinePass::Frame => {
                    let report = frame::run_decoding(functions, decoder);
                    run.remarks.extend(report.remarks);
                    run.frame = Some(report.stats);
                }
                MachinePass::Sibcall => {
                    let mut options = sibcall_options(self.module, self.targets);
                    options.shared_epilogues = opts.machine.contains(&MachinePass::Epilogue);
                    let report = sibcall::run_decoding(functions, &options, decoder);
                    run.remarks.extend(report.remarks);
                    run.sibcall = Some(report.stats);
                }
                MachinePass::Epilogue => {
                    let report = epilogue::run_decoding(functions, decoder);
                    run.remarks.extend(report.remarks);
                    run.epilogue = Some(report.stats);
                }
                // The outliner works on the emitted code of each round.
                MachinePass::Outline => continue,
            }
            run.times.push((pass.name(), start.elapsed()));
        }
        run
    }
}

/// What the choice among lowerings did in one module
/// (`parec_passes::mid_end`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoweringStats {
    /// Functions lowered both ways.
    pub functions: usize,
    /// Functions whose `Plain` lowering was a candidate (its estimate was
    /// smaller).
    pub candidates: usize,
    /// Candidates that kept it.
    pub plain: usize,
    /// The candidates' bytes after the machine passes before the
    /// outliner, lowered by `Measured`.
    pub measured_bytes: u64,
    /// The same, lowered as chosen.
    pub chosen_bytes: u64,
}

/// Steps 2 to 4 of `parec_passes::mid_end`'s algorithm, on each function
/// of a module lowered by `Measured` (`measured[i]`) and by `Plain`
/// (`plain[i]`). Returns each function's chosen lowering, its code after
/// `passes` and what the passes did on that code.
fn choose_lowerings(
    measured: Vec<LoweredFunction>,
    plain: Vec<LoweredFunction>,
    passes: &MachinePasses<'_>,
    decoder: &mut Decoder,
) -> (
    Vec<LoweredFunction>,
    Vec<MachFunction>,
    MachineRun,
    LoweringStats,
) {
    let candidates: Vec<bool> = measured
        .iter()
        .zip(&plain)
        .map(|(m, p)| mid_end::plain_may_pay(&m.function.code, &p.function.code))
        .collect();
    // The candidates' `Measured` prices (the run's statistics are not the
    // module's: this code is not emitted).
    let mut priced: Vec<MachFunction> = measured
        .iter()
        .zip(&candidates)
        .filter(|&(_, &candidate)| candidate)
        .map(|(m, _)| m.function.code.clone())
        .collect();
    passes.run(&mut priced, decoder);
    let codes = |choice: &[bool]| -> Vec<MachFunction> {
        let pairs = measured.iter().zip(&plain).zip(choice);
        pairs
            .map(|((m, p), &plain)| match plain {
                true => p.function.code.clone(),
                false => m.function.code.clone(),
            })
            .collect()
    };
    let mut choice = candidates.clone();
    let mut functions = codes(&choice);
    let mut run = passes.run(&mut functions, decoder);
    let mut stats = LoweringStats {
        functions: measured.len(),
        ..LoweringStats::default()
    };
    let mut measured_prices = priced.iter().map(|f| f.bytes.len());
    for (i, chose_plain) in choice.iter_mut().enumerate() {
        if !candidates[i] {
            continue;
        }
        let measured_price = measured_prices.next().unwrap_or(0);
        let plain_price = functions[i].bytes.len();
        *chose_plain = mid_end::keeps_plain(measured_price, plain_price);
        stats.candidates += 1;
        stats.plain += usize::from(*chose_plain);
        stats.measured_bytes += measured_price as u64;
        stats.chosen_bytes += measured_price.min(plain_price) as u64;
    }
    if choice != candidates {
        // A candidate grew in the passes: the module's code is the
        // `Measured` lowering for it (rare; over bench/, a few functions).
        functions = codes(&choice);
        run = passes.run(&mut functions, decoder);
    }
    let chosen = measured
        .into_iter()
        .zip(plain)
        .zip(&choice)
        .map(|((m, p), &plain)| if plain { p } else { m })
        .collect();
    (chosen, functions, run, stats)
}

impl LoweredModule {
    /// Each function's name and bytes as the machine passes before the
    /// outliner left them, in definition order.
    pub fn function_sizes(&self) -> Vec<(String, usize)> {
        self.compiled
            .iter()
            .map(|c| (c.code.name.clone(), c.code.bytes.len()))
            .collect()
    }

    /// What the choice among lowerings did, if it ran.
    pub fn lowering_stats(&self) -> Option<&LoweringStats> {
        self.lowering.as_ref()
    }
}

/// What the sibling-call pass needs to know of `module`: the relocation
/// targets of the functions whose arguments and results all travel in
/// registers ([`register_args`]).
fn sibcall_options(module: &ClifModule, targets: &RelocTargets) -> SibcallOptions {
    let register_args = module
        .symbols
        .iter()
        .filter(|sym| matches!(&sym.kind, SymbolKind::Function(sig) if register_args(sig)))
        .filter_map(|sym| targets.by_name(&sym.name))
        .collect();
    SibcallOptions {
        register_args,
        shared_epilogues: false,
    }
}

/// Whether a callee of signature `sig` takes every argument and returns
/// every result in registers on aarch64 (AAPCS64: `x0`–`x7` and `v0`–`v7`;
/// Cranelift's `tail` convention starts at `x2`), so that a caller may jump
/// to it after popping its own frame: no argument on the stack, no result
/// area the caller's frame holds.
fn register_args(sig: &ir::Signature) -> bool {
    let first_x = match sig.call_conv {
        CallConv::Tail => 2,
        CallConv::SystemV | CallConv::AppleAarch64 => 0,
        _ => return false,
    };
    let fits = |params: &[ir::AbiParam], first_x: usize| {
        let scalar = |p: &&ir::AbiParam| {
            p.purpose == ir::ArgumentPurpose::Normal
                && (p.value_type.is_int() || p.value_type.is_float())
                && p.value_type.bits() <= 64
        };
        let ints = params.iter().filter(|p| p.value_type.is_int()).count();
        let floats = params.iter().filter(|p| p.value_type.is_float()).count();
        params.iter().all(|p| scalar(&p)) && first_x + ints <= 8 && floats <= 8
    };
    fits(&sig.params, first_x) && fits(&sig.returns, 0)
}

/// The rest of step 2 — the outliner, against `context` — and step 3, from
/// `lowered`, the lowering of `module` (see the module doc).
pub fn emit_module(
    module: &ClifModule,
    lowered: &LoweredModule,
    opts: &CodegenOptions,
    context: &OutlineContext,
    lowering: Lowering,
) -> Result<CompiledObject> {
    let in_module = || format!("in module `{}`", module.name);
    let mut times = match lowering {
        Lowering::Counted => lowered.times.clone(),
        Lowering::Reused => CodegenTimes::default(),
    };
    let mut obj = object_module(module, opts)?;
    let arch = obj.isa().triple().architecture;
    let mut definer = ModuleDefiner::new(&mut obj, Colocation::AsGiven);
    definer.declare(module).with_context(in_module)?;
    definer.define_data_only(module).with_context(in_module)?;
    let mut targets = lowered.targets.clone();
    if let Some(paths) = &opts.trap_paths {
        // Declares the paths again, in the lowering's order: the same ids.
        resolve_trap_paths(paths, &mut definer, &mut targets)?;
    }
    definer
        .check_ids(&lowered.compiled)
        .with_context(in_module)?;

    let mut code = MachineCode::new(lowered.compiled.iter().map(|c| c.code.clone()).collect());
    code.remarks = lowered.remarks.clone();
    if opts.machine.contains(&MachinePass::Outline) && MachinePass::Outline.applies_to(arch) {
        let start = Instant::now();
        code.outline(&targets.names, context, &lowered.decoded);
        times
            .machine
            .push((MachinePass::Outline.name(), start.elapsed()));
    }

    let start = Instant::now();
    let parec_relocs = definer
        .define_machine_code(&lowered.compiled, &code.functions, &code.outlined, &targets)
        .with_context(in_module)?;
    definer
        .define_raw_functions(module)
        .with_context(in_module)?;
    let address_significant: Vec<String> = definer
        .address_significant()
        .union(&lowered.address_significant)
        .cloned()
        .collect();
    let mut product = obj.finish();
    add_parec_relocs(&mut product, &parec_relocs).with_context(in_module)?;
    remark::fill_module(&mut code.remarks, &module.name);
    let bytes = write_with_addrsig(product.object, &address_significant)
        .with_context(|| format!("cannot write the object of module `{}`", module.name))?;
    times.object = start.elapsed();
    Ok(CompiledObject {
        name: module.name.clone(),
        bytes,
        lowering: lowered.lowering.clone(),
        traps: lowered.traps.clone(),
        peephole: lowered.peephole.clone(),
        copyprop: lowered.copyprop.clone(),
        frame: lowered.frame.clone(),
        sibcall: lowered.sibcall.clone(),
        epilogue: lowered.epilogue.clone(),
        outline: code.outline_stats,
        outline_tree: code.outline_tree,
        remarks: code.remarks,
        times,
    })
}

/// A module's machine code between Cranelift and the object.
struct MachineCode {
    /// The functions as Cranelift emitted them, with their block starts.
    cranelift: Vec<MachFunction>,
    /// The module's functions as the machine passes left them, in
    /// definition order.
    functions: Vec<Emitted>,
    /// Functions the outliner created.
    outlined: Vec<outline::OutlinedFunction>,
    outline_stats: Option<OutlineStats>,
    outline_tree: OutlineTree,
    /// The machine passes' remarks.
    remarks: Vec<Remark>,
}

impl MachineCode {
    fn new(cranelift: Vec<MachFunction>) -> MachineCode {
        MachineCode {
            functions: cranelift.iter().map(MachFunction::emitted).collect(),
            cranelift,
            outlined: Vec::new(),
            outline_stats: None,
            outline_tree: OutlineTree::default(),
            remarks: Vec::new(),
        }
    }

    /// Runs the machine outliner. It lifts the code as Cranelift emitted it
    /// (or as the shared-trap-path pass and the peepholes re-laid it out in
    /// [`lower_module`], block starts included), so it runs after every
    /// other machine pass.
    /// `decoded`: what the machine passes before it decoded.
    fn outline(&mut self, names: &[String], context: &OutlineContext, decoded: &Decoded) {
        let options = OutlineOptions {
            global: context.global.clone(),
            heat: context.heat.clone(),
            ..OutlineOptions::default()
        };
        let decoder = Decoder::with_known(decoded.clone());
        let result = outline::outline_module_decoding(&self.cranelift, names, &options, decoder);
        self.functions = result.functions;
        self.outlined = result.outlined;
        self.outline_stats = Some(result.stats);
        self.outline_tree = result.published;
        self.remarks.extend(result.remarks);
    }
}

/// The shared trap paths by relocation target in one module's code: each
/// path is declared (as an import outside the runtime) so islands can
/// refer to it; a noreturn function no relocation names is not called.
fn resolve_trap_paths<M: cranelift_module::Module>(
    paths: &TrapPaths,
    definer: &mut ModuleDefiner<'_, M>,
    targets: &mut RelocTargets,
) -> Result<ResolvedPaths> {
    let mut resolved = ResolvedPaths::default();
    for (code, name) in &paths.paths {
        let target = definer.function_target(name, targets)?;
        resolved.paths.push((*code, target));
    }
    resolved.noreturn = paths
        .noreturn
        .iter()
        .filter_map(|name| targets.by_name(name))
        .collect();
    Ok(resolved)
}

/// The machine code of every function of `module` as Cranelift emits it
/// for `target`, and the names of its relocation targets — what the
/// outliner sees (for tests and reports; nothing is written).
/// `cfg_info` chooses Cranelift's `machine_code_cfg_info`.
pub fn machine_functions(
    module: &ClifModule,
    target: Target,
    level: OptLevel,
    cfg_info: bool,
) -> Result<(Vec<MachFunction>, Vec<String>)> {
    let isa = target.isa_with_cfg_info(level, cfg_info)?;
    let builder = ObjectBuilder::new(
        isa,
        module.name.as_bytes().to_vec(),
        default_libcall_names(),
    )
    .map_err(|e| anyhow!("cannot create object for `{}`: {e}", module.name))?;
    let mut obj = ObjectModule::new(builder);
    let mut definer = ModuleDefiner::new(&mut obj, Colocation::AsGiven);
    definer.declare(module)?;
    let mut targets = RelocTargets::default();
    let compiled = definer.compile_functions(module, &mut targets, &BTreeSet::new())?;
    Ok((
        compiled.into_iter().map(|c| c.code).collect(),
        targets.names,
    ))
}

/// The outliner's publications of `objects` merged into one prefix tree
/// (round 1 of a two-round build; stored in cgdata as a section).
pub fn combined_outline_tree(objects: &[CompiledObject]) -> OutlineTree {
    let mut tree = OutlineTree::default();
    for obj in objects {
        tree.merge(obj.outline_tree.clone());
    }
    tree
}

/// The outliner's statistics per module and in total, one line each
/// (`parec build --outline-stats`).
pub fn outline_report(objects: &[CompiledObject]) -> String {
    let mut total = OutlineStats::default();
    let mut text = String::new();
    for obj in objects {
        match &obj.outline {
            Some(stats) => {
                text.push_str(&format!("outline: {}: {stats}\n", obj.name));
                total.accumulate(stats);
            }
            None => text.push_str(&format!("outline: {}: not run\n", obj.name)),
        }
    }
    text.push_str(&format!("outline: total: {total}\n"));
    text
}
