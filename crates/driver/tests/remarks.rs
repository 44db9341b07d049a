//! Remarks (docs/REMARKS.md): every line of `--remarks=FILE` validates
//! against docs/remarks.schema.json; the remarks of each pass add up to the
//! statistics the pass reports (GVN's and merging's `PassStats`, the
//! outliner's `OutlineStats` and `--outline-stats`, the post-link merge
//! report); the text and JSON forms list the same decisions; the file does
//! not depend on `-j`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use parec::build::{Backend, Build, BuildMode, Input, Output, Units};
use parec::pipeline::{PassStats, Pipeline};
use parec::target::{OptLevel, Target};
use parec_passes::gvn::GvnStats;
use parec_passes::merge::{self, MergeOptions};
use parec_passes::remark::{Remark, RemarkKind};

mod support;
use support::{parec, run, workspace_root};

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn schema() -> jsonschema::Validator {
    let path = workspace_root().join("docs/remarks.schema.json");
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    jsonschema::validator_for(&schema).expect("the schema is a valid JSON Schema")
}

/// The JSON lines of `path`, each validated against the schema.
fn validated_lines(path: &Path) -> Vec<serde_json::Value> {
    let validator = schema();
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .map(|line| {
            let value: serde_json::Value =
                serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
            let errors: Vec<String> = validator
                .iter_errors(&value)
                .map(|e| format!("{e} at {}", e.instance_path()))
                .collect();
            assert!(errors.is_empty(), "{line}\n{}", errors.join("\n"));
            value
        })
        .collect()
}

/// `parec build MAIN -o DIR/prog ARGS`; returns stderr.
fn build(main: &Path, dir: &Path, args: &[&str]) -> String {
    let out = run(parec()
        .arg("build")
        .arg(main)
        .arg("-o")
        .arg(dir.join("prog"))
        .args(args));
    assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
    text(&out.stderr)
}

/// The number before `after` in `line`.
fn number_before(line: &str, after: &str) -> u64 {
    let at = line
        .find(after)
        .unwrap_or_else(|| panic!("no `{after}` in {line}"));
    line[..at]
        .split_whitespace()
        .last()
        .unwrap()
        .trim_start_matches('(')
        .parse()
        .unwrap_or_else(|e| panic!("{e}: {line}"))
}

/// Sum of the count `name` over the remarks of `pass`.
fn json_count(lines: &[serde_json::Value], pass: &str, name: &str) -> u64 {
    lines
        .iter()
        .filter(|l| l["pass"] == pass)
        .filter_map(|l| l["counts"][name].as_u64())
        .sum()
}

fn json_decisions(lines: &[serde_json::Value], pass: &str, decision: &str) -> usize {
    lines
        .iter()
        .filter(|l| l["pass"] == pass && l["decision"] == decision)
        .count()
}

/// The command line: the file validates, and its counts agree with what
/// `--outline-stats` and the merge report print; `--remarks` prints the
/// same decisions as text.
#[test]
fn remarks_file_validates_and_agrees_with_printed_stats() {
    let tmp = tempfile::tempdir().unwrap();
    let zoo = workspace_root().join("bench/generic_zoo/main.pare");
    let file = tmp.path().join("remarks.jsonl");
    let remarks_arg = format!("--remarks={}", file.display());
    let stderr = build(
        &zoo,
        tmp.path(),
        &[
            "-Oz",
            "--two-rounds",
            &remarks_arg,
            "--outline-stats",
            "-j",
            "2",
        ],
    );
    let lines = validated_lines(&file);
    assert!(lines.len() > 300, "{} remarks", lines.len());
    for pass in ["gvn", "merge", "outline"] {
        assert!(
            lines.iter().any(|l| l["pass"] == pass),
            "no remark of {pass}"
        );
    }

    let total = stderr
        .lines()
        .find(|l| l.starts_with("outline: total:"))
        .unwrap_or_else(|| panic!("{stderr}"));
    assert_eq!(
        json_count(&lines, "outline", "outlined_functions"),
        number_before(total, " outlined functions")
    );
    assert_eq!(
        json_decisions(&lines, "outline", "outlined") as u64,
        number_before(total, " outlined functions")
    );
    assert_eq!(
        json_count(&lines, "outline", "sequences_replaced"),
        number_before(total, " sequences replaced")
    );
    assert_eq!(
        json_count(&lines, "outline", "global_sequences"),
        number_before(total, " by the global tree")
    );
    assert!(json_count(&lines, "outline", "global_sequences") > 0);
    // Per module too.
    for line in stderr.lines().filter(|l| l.starts_with("outline: ")) {
        let module = line["outline: ".len()..].split(':').next().unwrap();
        if module == "total" {
            continue;
        }
        let of_module: Vec<serde_json::Value> = lines
            .iter()
            .filter(|l| l["module"] == module)
            .cloned()
            .collect();
        assert_eq!(
            json_count(&of_module, "outline", "sequences_replaced"),
            number_before(line, " sequences replaced"),
            "{line}"
        );
    }

    let report = stderr
        .lines()
        .find(|l| l.starts_with("merge (two rounds):"))
        .unwrap_or_else(|| panic!("{stderr}"));
    let merged = number_before(report, " merged into");
    assert!(merged > 100, "{report}");
    assert_eq!(json_decisions(&lines, "merge", "merged") as u64, merged);
    assert_eq!(json_count(&lines, "merge", "merged"), merged);

    // The same decisions as text, in the same order.
    let stderr = build(&zoo, tmp.path(), &["-Oz", "--two-rounds", "--remarks"]);
    let text_remarks: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("remark: "))
        .collect();
    assert_eq!(text_remarks.len(), lines.len());
    for (text_line, json) in text_remarks.iter().zip(&lines) {
        let expected = format!(
            "remark: {}: {} {} [{}]: ",
            json["pass"].as_str().unwrap(),
            json["decision"].as_str().unwrap(),
            json["function"].as_str().unwrap(),
            json["module"].as_str().unwrap()
        );
        assert!(text_line.starts_with(&expected), "{text_line}\n{expected}");
    }
}

#[test]
fn remarks_file_does_not_depend_on_jobs() {
    let tmp = tempfile::tempdir().unwrap();
    let main = workspace_root().join("bench/sorts/main.pare");
    let mut files = Vec::new();
    for jobs in ["1", "2"] {
        let file = tmp.path().join(format!("r{jobs}.jsonl"));
        let arg = format!("--remarks={}", file.display());
        build(&main, tmp.path(), &["--two-rounds", &arg, "-j", jobs]);
        files.push(std::fs::read(&file).unwrap());
    }
    assert!(!files[0].is_empty());
    assert!(
        files[0] == files[1],
        "the remarks differ between -j1 and -j2"
    );
}

#[test]
fn a_bad_remarks_file_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let main = workspace_root().join("examples/hello.pare");
    let arg = format!(
        "--remarks={}",
        tmp.path().join("no/such/dir/r.jsonl").display()
    );
    let out = run(parec()
        .arg("build")
        .arg(&main)
        .arg("-o")
        .arg(tmp.path().join("prog"))
        .arg(&arg));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("error:"),
        "{}",
        text(&out.stderr)
    );
}

/// Builds `files` through the library at `-Oz`, as `parec build` does.
fn library_build(files: Vec<PathBuf>, mode: BuildMode) -> Output {
    library_build_at(files, mode, OptLevel::Oz)
}

fn library_build_at(files: Vec<PathBuf>, mode: BuildMode, level: OptLevel) -> Output {
    Build {
        pipeline: Pipeline::for_level(level),
        level,
        mode,
        backend: Backend::Objects(Target::Aarch64),
        jobs: 2,
        units: Units::PerModule,
        code_model: Default::default(),
        runtime: Default::default(),
    }
    .run(Input::Pare(files))
    .unwrap_or_else(|e| panic!("{:?}", anyhow::Error::from(e)))
}

fn count(remarks: &[&Remark], pass: &str, name: &str) -> u64 {
    remarks
        .iter()
        .filter(|r| r.pass == pass)
        .map(|r| r.get_count(name))
        .sum()
}

fn decisions(remarks: &[&Remark], pass: &str, decision: &str) -> u64 {
    remarks
        .iter()
        .filter(|r| r.pass == pass && r.decision == decision)
        .count() as u64
}

/// Every counter of GVN's statistics that remarks carry.
fn gvn_counters(stats: &GvnStats) -> BTreeMap<&'static str, u64> {
    BTreeMap::from([
        ("values_replaced", stats.values_replaced),
        ("full_redundancies", stats.full_redundancies),
        ("partial_redundancies", stats.partial_redundancies),
        ("hoisted", stats.hoisted),
        ("constants_folded", stats.constants_folded),
        ("loads_removed", stats.loads_removed),
        ("loads_narrowed", stats.loads_narrowed),
        ("stores_removed", stats.stores_removed),
        ("params_removed", stats.params_removed),
        ("branches_folded", stats.branches_folded),
        ("blocks_removed", stats.blocks_removed),
        ("dead_removed", stats.dead_removed),
        ("pre_dropped", stats.pre_dropped),
        ("reverted", stats.reverted),
        ("skipped", stats.skipped),
    ])
}

/// The library: each pass's remarks add up to its statistics, on programs
/// where GVN reverts functions (bignum), merging and global outlining work
/// (generic_zoo, two rounds) and the rest.
/// A machine pass's statistics, which its remarks must add up to.
struct MachineCounts {
    pass: &'static str,
    /// Each count and its statistic.
    counts: Vec<(&'static str, usize)>,
    /// The decision of a rewritten function and how many there were.
    passed: (&'static str, usize),
    /// Code bytes before and after the pass.
    bytes: (u64, u64),
}

impl MachineCounts {
    fn check(&self, remarks: &[&Remark], context: &str) {
        for &(name, value) in &self.counts {
            assert_eq!(
                count(remarks, self.pass, name),
                value as u64,
                "{context}: {} {name}",
                self.pass
            );
        }
        let (decision, functions) = self.passed;
        assert_eq!(
            decisions(remarks, self.pass, decision),
            functions as u64,
            "{context}"
        );
        let saved: i64 = remarks
            .iter()
            .filter(|r| r.pass == self.pass)
            .filter_map(|r| r.bytes)
            .sum();
        assert_eq!(
            saved,
            self.bytes.0 as i64 - self.bytes.1 as i64,
            "{context}: {}",
            self.pass
        );
    }
}

/// `-Os` decides on estimates where measuring costs the time: the inliner
/// compiles no trial, and `fmerge` rejects tries on the alignment's
/// estimate without generating the merged function; `-Oz` compiles the
/// inliner's trials near its threshold and generates every aligned pair.
/// The screened tries are remarked as the model's rejections.
#[test]
fn os_decides_on_estimates_and_oz_measures() {
    let file = workspace_root().join("bench/bignum/main.pare");
    let mut counts = BTreeMap::new();
    for level in [OptLevel::Os, OptLevel::Oz] {
        let output = library_build_at(vec![file.clone()], BuildMode::Local, level);
        let remarks: Vec<&Remark> = output.remarks().collect();
        let (mut trials, mut generated, mut screened, mut attempted) = (0, 0, 0, 0);
        for run in &output.passes {
            match &run.outcome.stats {
                PassStats::Inline(stats) => trials += stats.measured,
                PassStats::Fmerge(stats, _) => {
                    generated += stats.generated;
                    screened += stats.screened;
                    attempted += stats.attempted;
                }
                _ => {}
            }
        }
        let not_generated = remarks
            .iter()
            .filter(|r| r.pass == "fmerge" && r.reason.contains("(not generated)"))
            .count();
        assert_eq!(not_generated, screened, "{level:?}");
        counts.insert(level.flag(), (trials, generated, screened, attempted));
    }
    let (trials, generated, screened, attempted) = counts["-Os"];
    assert_eq!(trials, 0, "-Os compiled inliner trials");
    assert!(
        screened > 0 && generated + screened <= attempted,
        "-Os: {counts:?}"
    );
    let (trials, generated, screened, attempted) = counts["-Oz"];
    assert!(trials > 0, "-Oz compiled no inliner trial");
    assert_eq!(screened, 0, "-Oz screened tries");
    assert!(
        generated > counts["-Os"].1 && generated <= attempted,
        "{counts:?}"
    );
}

#[test]
fn remarks_add_up_to_every_pass_statistics() {
    let root = workspace_root();
    let programs = [
        ("bench/bignum/main.pare", BuildMode::Local),
        ("bench/calc/main.pare", BuildMode::Local),
        (
            "bench/generic_zoo/main.pare",
            BuildMode::TwoRounds { publish: None },
        ),
    ];
    let mut reverted = 0;
    for (file, mode) in programs {
        let output = library_build(vec![root.join(file)], mode);
        let remarks: Vec<&Remark> = output.remarks().collect();
        for remark in &remarks {
            assert!(!remark.module.is_empty(), "{file}: {remark}");
            assert!(!remark.function.is_empty(), "{file}: {remark}");
        }
        for run in &output.passes {
            match &run.outcome.stats {
                PassStats::Gvn(stats) => {
                    for (name, value) in gvn_counters(stats) {
                        assert_eq!(count(&remarks, "gvn", name), value, "{file}: gvn {name}");
                    }
                    assert_eq!(decisions(&remarks, "gvn", "reverted"), stats.reverted);
                    assert_eq!(decisions(&remarks, "gvn", "pre-reduced"), stats.pre_dropped);
                    assert_eq!(decisions(&remarks, "gvn", "skipped"), stats.skipped);
                    reverted += stats.reverted;
                }
                PassStats::Merge(stats) => {
                    assert_eq!(decisions(&remarks, "merge", "merged"), stats.merged as u64);
                    assert_eq!(count(&remarks, "merge", "merged"), stats.merged as u64);
                    assert_eq!(
                        decisions(&remarks, "merge", "pattern-mismatch"),
                        stats.pattern_mismatches as u64
                    );
                    assert_eq!(
                        decisions(&remarks, "merge", "single-local"),
                        stats.single_local as u64
                    );
                    assert_eq!(
                        decisions(&remarks, "merge", "linker-folds"),
                        stats.linker_folds as u64
                    );
                    assert_eq!(
                        count(&remarks, "merge", "linker_folds"),
                        stats.linker_folds as u64
                    );
                    assert_eq!(
                        count(&remarks, "merge", "thunks_elided"),
                        stats.thunks_elided as u64
                    );
                    assert_eq!(
                        decisions(&remarks, "merge", "thunk-elided")
                            + decisions(&remarks, "merge", "thunk-kept"),
                        stats.merged as u64,
                        "{file}: every thunk's fate"
                    );
                }
                PassStats::Combine(stats) => {
                    for (name, value) in stats.counters() {
                        assert_eq!(count(&remarks, "combine", name), value, "{file}: {name}");
                    }
                }
                PassStats::Ifconv(stats) => {
                    for (name, value) in stats.counters() {
                        assert_eq!(count(&remarks, "ifconv", name), value, "{file}: {name}");
                    }
                }
                PassStats::Switches(stats) => {
                    for (name, value) in stats.counters() {
                        assert_eq!(count(&remarks, "switches", name), value, "{file}: {name}");
                    }
                }
                PassStats::Guard(stats) => {
                    assert_eq!(
                        decisions(&remarks, "guard", "reverted"),
                        stats.reverted as u64
                    );
                    assert_eq!(count(&remarks, "guard", "reverted"), stats.reverted as u64);
                }
                PassStats::Fmerge(stats, _) => {
                    let pairs = [
                        ("merged", stats.merged),
                        ("refused", stats.refused),
                        ("rejected-by-model", stats.rejected_by_model),
                        ("rejected-by-measurement", stats.rejected_by_measurement),
                        ("rejected-by-estimate", stats.rejected_by_estimate),
                    ];
                    for (decision, value) in pairs {
                        assert_eq!(
                            decisions(&remarks, "fmerge", decision),
                            value as u64,
                            "{file}: fmerge {decision}"
                        );
                    }
                }
                PassStats::Inline(stats) => {
                    assert_eq!(
                        count(&remarks, "inline", "inlined"),
                        stats.inlined,
                        "{file}"
                    );
                    assert_eq!(
                        count(&remarks, "inline", "refused"),
                        stats.refused,
                        "{file}"
                    );
                    assert_eq!(
                        count(&remarks, "inline", "deleted"),
                        stats.deleted,
                        "{file}"
                    );
                    assert_eq!(decisions(&remarks, "inline", "deleted"), stats.deleted);
                    assert_eq!(decisions(&remarks, "inline", "grew"), stats.refused);
                }
                PassStats::Custom(_) => unreachable!("no custom pass at -Oz"),
            }
        }
        for obj in &output.objects {
            let peephole = obj.peephole.as_ref().expect("the peepholes ran");
            let of_object: Vec<&Remark> = obj.remarks.iter().collect();
            let context = format!("{file}: module {}", obj.name);
            let passes = [
                MachineCounts {
                    pass: "peephole",
                    counts: vec![
                        ("functions", peephole.functions),
                        ("near_addresses", peephole.near_addresses),
                        ("repeated", peephole.repeated),
                        ("boolean_branches", peephole.boolean_branches),
                        ("compare_branches", peephole.compare_branches),
                        ("byte_extensions", peephole.byte_extensions),
                        ("compare_extensions", peephole.compare_extensions),
                        ("constant_operands", peephole.constant_operands),
                    ],
                    passed: ("rewritten", peephole.functions),
                    bytes: (peephole.bytes_before, peephole.bytes_after),
                },
                {
                    let copyprop = obj.copyprop.as_ref().expect("copy propagation ran");
                    MachineCounts {
                        pass: "copyprop",
                        counts: vec![("functions", copyprop.functions), ("moves", copyprop.moves)],
                        passed: ("propagated", copyprop.functions),
                        bytes: (copyprop.bytes_before, copyprop.bytes_after),
                    }
                },
                {
                    let frame = obj.frame.as_ref().expect("frame pointers were omitted");
                    MachineCounts {
                        pass: "frame",
                        counts: vec![
                            ("functions", frame.functions),
                            ("omitted", frame.omitted),
                            ("packed", frame.packed),
                        ],
                        passed: ("packed", frame.packed),
                        bytes: (frame.bytes_before, frame.bytes_after),
                    }
                },
                {
                    let epilogue = obj.epilogue.as_ref().expect("the epilogues were shared");
                    MachineCounts {
                        pass: "epilogue",
                        counts: vec![
                            ("functions", epilogue.functions),
                            ("branched", epilogue.branched),
                            ("deleted", epilogue.deleted),
                        ],
                        passed: ("shared", epilogue.functions),
                        bytes: (epilogue.bytes_before, epilogue.bytes_after),
                    }
                },
            ];
            for pass in &passes {
                pass.check(&of_object, &context);
            }
            let stats = obj.outline.as_ref().expect("the outliner ran");
            let of_module: Vec<&Remark> = obj.remarks.iter().collect();
            assert!(of_module.iter().all(|r| r.module == obj.name));
            let name = format!("{file}: module {}", obj.name);
            let outlined = |n| count(&of_module, "outline", n) as usize;
            assert_eq!(
                outlined("outlined_functions"),
                stats.outlined_functions,
                "{name}"
            );
            assert_eq!(
                decisions(&of_module, "outline", "outlined") as usize,
                stats.outlined_functions,
                "{name}"
            );
            assert_eq!(
                outlined("sequences_replaced"),
                stats.sequences_replaced,
                "{name}"
            );
            assert_eq!(
                outlined("global_sequences"),
                stats.global_sequences,
                "{name}"
            );
            assert_eq!(
                outlined("opaque_functions"),
                stats.opaque_functions,
                "{name}"
            );
            // Each outlined remark names a function of the object.
            for r in of_module.iter().filter(|r| r.decision == "outlined") {
                assert!(r.function.starts_with("OUTLINED_FUNCTION_"), "{r}");
                assert_eq!(r.kind, RemarkKind::Passed);
            }
        }
    }
    assert!(reverted > 0, "no program made GVN revert a function");
}

/// The merge pass alone with a stale plan: a function whose constants no
/// longer fit its group (pattern mismatch) leaves the other member a
/// single local candidate; remarks and statistics agree decision by
/// decision.
#[test]
fn merge_remarks_agree_with_a_stale_plan() {
    let tmp = tempfile::tempdir().unwrap();
    let module_text = |k2: &str| {
        format!(
            "fn f1(x: i64) -> i64 {{ let y = x * 3 + 7; y * y + x * 11 }}\n\
             fn f2(x: i64) -> i64 {{ let y = x * 5 + 9; y * y + x * {k2} }}\n\
             fn g(x: i64) -> i64 {{ let mut s = 0; for i in 0..x {{ s += i * 2; }} s }}\n\
             fn main() {{ print(f1(2) + f2(3) + g(4)); }}\n"
        )
    };
    let lower = |name: &str, body: String| {
        let path = tmp.path().join(name).join("main.pare");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, body).unwrap();
        support::clif_build(Pipeline::empty(), OptLevel::Oz)
            .run(Input::Pare(vec![path]))
            .unwrap_or_else(|e| panic!("{:?}", anyhow::Error::from(e)))
            .modules
    };
    let check = |report: &merge::MergeReport| {
        let remarks: Vec<&Remark> = report.remarks.iter().collect();
        assert_eq!(
            decisions(&remarks, "merge", "merged"),
            report.stats.merged as u64
        );
        assert_eq!(
            decisions(&remarks, "merge", "pattern-mismatch"),
            report.stats.pattern_mismatches as u64
        );
        assert_eq!(
            count(&remarks, "merge", "pattern_mismatches"),
            report.stats.pattern_mismatches as u64
        );
        assert_eq!(
            decisions(&remarks, "merge", "single-local"),
            report.stats.single_local as u64
        );
    };

    // A plan made from v1, where f1 and f2 form a group of this module
    // whose last constant (11) is fixed. In v2, f2 has 13 there: its
    // pattern no longer fits, and f1 is left a single local candidate.
    let options = MergeOptions::default();
    let v1 = lower("v1", module_text("11"));
    let plan = merge::combine(&parec::build::summarize(&v1, &options), &options);
    assert!(
        !plan.groups.is_empty(),
        "v1's f1 and f2 do not form a group"
    );
    let (mut mismatches, mut single) = (0, 0);
    for mut module in lower("v2", module_text("13")) {
        let report = merge::run(&mut module, Some(&plan), &options);
        check(&report);
        mismatches += report.stats.pattern_mismatches;
        single += report.stats.single_local;
    }
    assert!(mismatches > 0, "no pattern mismatch with the stale plan");
    assert!(single > 0, "no single local candidate with the stale plan");
}

/// Each pass's decisions as docs/REMARKS.md's tables list them: the
/// section `### `PASS`` and its rows `| `decision` | kind |`.
fn documented_decisions() -> BTreeMap<String, BTreeMap<String, String>> {
    let doc = std::fs::read_to_string(workspace_root().join("docs/REMARKS.md")).unwrap();
    let mut passes: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in doc.lines() {
        if let Some(heading) = line.strip_prefix("### `") {
            current = heading.split('`').next().map(str::to_string);
            continue;
        }
        let (Some(pass), Some(row)) = (&current, line.strip_prefix("| `")) else {
            continue;
        };
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        if let ["passed" | "missed" | "analysis", ..] = cells[1..] {
            let decision = cells[0].trim_end_matches('`').to_string();
            passes
                .entry(pass.clone())
                .or_default()
                .insert(decision, cells[1].to_string());
        }
    }
    passes
}

/// Each pass's decisions as docs/remarks.schema.json's rules list them.
fn schema_decisions() -> BTreeMap<String, BTreeMap<String, String>> {
    let path = workspace_root().join("docs/remarks.schema.json");
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let strings = |v: &serde_json::Value| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(str::to_string))
            .collect()
    };
    let mut passes: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for pass in strings(&schema["properties"]["pass"]["enum"]) {
        passes.insert(pass, BTreeMap::new());
    }
    let rules = schema["allOf"].as_array().unwrap();
    // First the decisions each pass may take, then the kind of each.
    for rule in rules {
        let pass = rule["if"]["properties"]["pass"]["const"].as_str().unwrap();
        if rule["if"]["properties"]["decision"].is_null() {
            for decision in strings(&rule["then"]["properties"]["decision"]["enum"]) {
                let decisions = passes.get_mut(pass).expect("a rule of an unlisted pass");
                decisions.insert(decision, String::new());
            }
        }
    }
    for rule in rules {
        let pass = rule["if"]["properties"]["pass"]["const"].as_str().unwrap();
        let kind = &rule["then"]["properties"]["kind"]["const"];
        for decision in strings(&rule["if"]["properties"]["decision"]["enum"]) {
            let slot = passes[pass].get(&decision).cloned();
            assert_eq!(
                slot.as_deref(),
                Some(""),
                "{pass}: {decision}: kind rule twice or unlisted"
            );
            passes
                .get_mut(pass)
                .unwrap()
                .insert(decision, kind.as_str().unwrap().to_string());
        }
    }
    passes
}

/// The schema accepts exactly the documented remarks: every pass, every
/// decision, each with its kind (it once lacked `hot-function`, issue 34).
#[test]
fn the_schema_lists_every_documented_decision_with_its_kind() {
    let documented = documented_decisions();
    assert!(documented.len() >= 7, "{documented:?}");
    assert_eq!(schema_decisions(), documented);
}

/// A profiled build's remarks validate, `hot-function` and the `profile`
/// pass's included.
#[test]
fn a_profiled_build_remarks_validate() {
    let tmp = tempfile::tempdir().unwrap();
    let example = workspace_root().join("examples/hot_and_cold.pare");
    let profile = tmp.path().join("own.prof");
    let o = run(parec()
        .arg("run")
        .arg(&example)
        .arg("--profile-generate")
        .arg(&profile));
    assert!(o.status.success(), "{}", text(&o.stderr));
    let file = tmp.path().join("remarks.jsonl");
    // Without the inliner, which would inline the hot function away, and
    // without fmerge's merges of hot functions by region
    // (`PAREC_FMERGE_HOT_REGIONS=0`), which would merge it away.
    let o = run(parec()
        .arg("build")
        .arg(&example)
        .arg("-o")
        .arg(tmp.path().join("prog"))
        .args([
            "--passes=merge,fmerge,peephole,outline",
            "--profile-use",
            profile.to_str().unwrap(),
            &format!("--remarks={}", file.display()),
        ])
        .env("PAREC_FMERGE_HOT_REGIONS", "0"));
    assert!(o.status.success(), "{}", text(&o.stderr));
    let lines = validated_lines(&file);
    for pass in ["merge", "fmerge", "outline"] {
        assert!(
            json_decisions(&lines, pass, "hot-function") > 0,
            "no hot-function remark of {pass}"
        );
    }
    for decision in ["hot", "cold"] {
        assert!(
            json_decisions(&lines, "profile", decision) > 0,
            "no profile remark {decision}"
        );
    }
}
