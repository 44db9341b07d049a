//! The machine outliner on generated programs (the differential tester's
//! corpus, seeds 11000..11040): outlining never grows a module and shrinks
//! the corpus. That they still run correctly is `parec fuzz`'s job: its
//! `outline` and `Oz` configurations run the outliner under qemu.

use parec::build::{Backend, Build, BuildMode, Input, Units};
use parec::codegen;
use parec::pipeline::Pipeline;
use parec::target::{OptLevel, Target};
use parec_passes::outline::{self, OutlineOptions};
use parec_tools::gen::{generate_from_seed, GenConfig};

#[test]
fn generated_programs_shrink_and_never_grow() {
    let tmp = tempfile::tempdir().unwrap();
    let build = Build {
        pipeline: Pipeline::for_level(OptLevel::Oz),
        level: OptLevel::Oz,
        mode: BuildMode::Local,
        backend: Backend::Clif(Some(Target::Aarch64)),
        jobs: 1,
        units: Units::PerModule,
        code_model: Default::default(),
        runtime: Default::default(),
    };
    let (mut before, mut after, mut replaced) = (0u64, 0u64, 0usize);
    for seed in 11000..11040u64 {
        let program = generate_from_seed(seed, &GenConfig::default());
        let paths = program
            .write_to_dir(&tmp.path().join(seed.to_string()))
            .unwrap();
        let Ok(output) = build.run(Input::Pare(paths)) else {
            panic!("seed {seed} does not compile");
        };
        for module in &output.modules {
            let (functions, names) =
                codegen::machine_functions(module, Target::Aarch64, OptLevel::Oz, true).unwrap();
            let result = outline::outline_module(&functions, &names, &OutlineOptions::default());
            assert!(
                result.stats.bytes_after <= result.stats.bytes_before,
                "seed {seed}"
            );
            before += result.stats.bytes_before;
            after += result.stats.bytes_after;
            replaced += result.stats.sequences_replaced;
        }
    }
    eprintln!("generated corpus: code {before} -> {after} bytes, {replaced} sequences replaced");
    assert!(after < before);
}
