//! Hot code and the outliner (docs/DESIGN.md, "Hot code"), on a program
//! written for it (`examples/hot_and_cold.pare`, which the executor tests
//! also run everywhere): one loop in a hot function and in two cold twins.
//! Without a profile the static estimate leaves every loop alone; with a
//! profile of the program's own run the twins' loop is outlined and the hot
//! function is left as it is. The listings with the profile are a snapshot
//! (`snapshots/hot_code/`).

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parec::build::{Backend, Build, BuildMode, Input, Output, Units};
use parec::codegen::CodeModel;
use parec::pipeline::Pipeline;
use parec::profile::{MismatchPolicy, ProfileUse};
use parec::target::{OptLevel, Target};
use parec_passes::profile::ProfileMode;
use support::{parec, run, workspace_root};

fn example() -> PathBuf {
    workspace_root().join("examples/hot_and_cold.pare")
}

/// The program's profile from its own run (`parec run --profile-generate`).
fn own_profile(dir: &Path) -> PathBuf {
    let path = dir.join("own.prof");
    let o = run(parec()
        .arg("run")
        .arg(example())
        .arg("--profile-generate")
        .arg(&path));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    path
}

/// The program built at `-Oz` with only the machine passes (so that no
/// merger folds the twins first), with `profile` if given.
fn build(profile: Option<&Path>) -> Output {
    let mut pipeline = Pipeline::from_names("peephole,outline").unwrap();
    pipeline.profile = profile.map(|path| {
        Arc::new(ProfileUse::read(path, ProfileMode::Optimistic, MismatchPolicy::Error).unwrap())
    });
    let build = Build {
        pipeline,
        level: OptLevel::Oz,
        mode: BuildMode::Local,
        backend: Backend::Objects(Target::Aarch64),
        jobs: 1,
        units: Units::PerModule,
        code_model: CodeModel::Auto,
        runtime: Default::default(),
    };
    build
        .run(Input::Pare(vec![example()]))
        .unwrap_or_else(|_| panic!("does not build"))
}

fn calls_outlined(lines: &[String]) -> usize {
    lines
        .iter()
        .filter(|l| l.contains("OUTLINED_FUNCTION"))
        .count()
}

fn spins(listings: &BTreeMap<String, Vec<String>>) -> BTreeMap<&str, &Vec<String>> {
    listings
        .iter()
        .filter(|(name, _)| name.contains("spin_"))
        .map(|(name, lines)| (name.as_str(), lines))
        .collect()
}

#[test]
fn a_hot_loop_is_left_alone_and_its_cold_twins_are_outlined() {
    let tmp = tempfile::tempdir().unwrap();
    let profile = own_profile(tmp.path());

    let statically = support::function_listings(&build(None).objects);
    for (name, lines) in spins(&statically) {
        assert_eq!(
            calls_outlined(lines),
            0,
            "{name}: a loop outlined without a profile"
        );
    }

    let output = build(Some(&profile));
    let listings = support::function_listings(&output.objects);
    let spins = spins(&listings);
    assert_eq!(spins.len(), 3, "{:?}", spins.keys());
    for (name, lines) in &spins {
        let outlined = calls_outlined(lines);
        match name.ends_with("spin_hot") {
            true => assert_eq!(outlined, 0, "{name}: hot code outlined"),
            false => assert!(outlined > 0, "{name}: the cold loop was not outlined"),
        }
    }
    let remarks: Vec<String> = output.remarks().map(|r| r.to_string()).collect();
    assert!(
        remarks
            .iter()
            .any(|r| r.contains("hot-function") && r.contains("spin_hot")),
        "{remarks:#?}"
    );

    let text: String = spins
        .iter()
        .map(|(name, lines)| format!("{name}:\n    {}\n", lines.join("\n    ")))
        .collect();
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(workspace_root().join("snapshots/hot_code"));
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| insta::assert_snapshot!("hot_and_cold_profiled", text));
}
