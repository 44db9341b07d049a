//! `parec cgdata merge OUT IN...` and `parec cgdata show FILE`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::anyhow;
use parec_passes::cgdata::CgData;
use parec_passes::merge::{self, InlinerSummary, Summary};
use parec_passes::outline::global::OutlineTree;
use parec_passes::profile::{Profile, Thresholds};

use crate::outputs::Outputs;
use crate::target::merge_options;
use crate::Failure;
use crate::{cgdata_file, io_error};

/// Merges cgdata files (any order gives the same bytes) into `out`, which
/// may not be one of the inputs.
///
/// Inputs with the same content count once. Each input is one build's
/// publication: the summary section is a set (the same function summarized
/// twice is one function), but the outline tree adds up occurrence counts,
/// and a count of 2 makes round 2 outline a sequence on a single local
/// occurrence. A file named twice, or a copy of one, is the same build
/// published once, so counting it twice would invent occurrences; distinct
/// inputs are distinct builds and their counts add up. (A merged file does
/// not record which builds it holds: merging it again with one of its own
/// inputs counts that input twice.)
///
/// With `parts` (`--modules`), the inputs are the parts of one build — the
/// round-1 cgdata of each module of a separately compiled program — and
/// every input counts, equal or not, as the modules of `parec build` do.
///
/// `out` is written only when its content changes, so a build system that
/// compares outputs (Ninja's `restat`) stops rebuilding there.
pub fn merge_files(out: &Path, inputs: &[PathBuf], parts: bool) -> Result<i32, Failure> {
    let Some(first) = inputs.first() else {
        return Err(anyhow!("`cgdata merge` needs at least one input").into());
    };
    let mut output = Outputs::default();
    output.file(out, "output");
    output.check(inputs)?;
    let first_data = cgdata_file::read(first, None)?;
    let mut merged = CgData::new(&first_data.target);
    let mut distinct: Vec<CgData> = Vec::new();
    for path in inputs {
        let next = cgdata_file::read(path, Some(&merged.target))?;
        if !parts && distinct.contains(&next) {
            continue;
        }
        let section_error = |e| anyhow!("cgdata `{}`: {e}", path.display());
        merged
            .merge_section::<Summary>(&next)
            .map_err(section_error)?;
        merged
            .merge_section::<InlinerSummary>(&next)
            .map_err(section_error)?;
        merged
            .merge_section::<OutlineTree>(&next)
            .map_err(section_error)?;
        merged
            .merge_section::<Profile>(&next)
            .map_err(section_error)?;
        distinct.push(next);
    }
    cgdata_file::write_if_changed(out, &merged.encode())?;
    Ok(0)
}

/// Prints a cgdata file: its sections, the merge groups its summary
/// combines into (members, parameters, estimated benefit), and the outline
/// tree's sequences.
pub fn show(path: &Path) -> Result<i32, Failure> {
    let data = cgdata_file::read(path, None)?;
    let text = describe(&data).map_err(|e| anyhow!("cgdata `{}`: {e}", path.display()))?;
    io_error::write_stdout(text.as_bytes())?;
    Ok(0)
}

/// The text of `cgdata show`.
pub fn describe(data: &CgData) -> Result<String, parec_passes::cgdata::CgDataError> {
    let mut s = String::new();
    let kinds: Vec<&str> = data.kinds().map(|k| k.name()).collect();
    let _ = writeln!(
        s,
        "cgdata version {}, target {}, sections: {}",
        parec_passes::cgdata::VERSION,
        data.target,
        if kinds.is_empty() {
            "(none)".to_string()
        } else {
            kinds.join(", ")
        }
    );
    if let Some(tree) = data.get::<OutlineTree>()? {
        describe_outline_tree(&mut s, &tree);
    }
    if let Some(profile) = data.get::<Profile>()? {
        describe_profile(&mut s, &profile);
    }
    if let Some(InlinerSummary(inliner)) = data.get::<InlinerSummary>()? {
        let _ = writeln!(
            s,
            "inliner: {} functions summarized before inlining (the plan the inliner prices merge members with)",
            inliner.functions().len()
        );
    }
    let Some(summary) = data.get::<Summary>()? else {
        return Ok(s);
    };
    let plan = merge::combine(&summary, &merge_options(None));
    let st = &plan.stats;
    let _ = writeln!(
        s,
        "merge: {} functions summarized; {} candidate classes: {} kept, {} identical, {} unprofitable, {} with too many parameters",
        st.functions, st.classes, st.groups, st.identical, st.unprofitable, st.too_many_params
    );
    let (mut benefit, mut cost) = (0u64, 0u64);
    for group in plan.groups.values() {
        benefit += group.benefit();
        cost += group.cost();
        let _ = writeln!(
            s,
            "{}: {} members ({} distinct), {} instructions, {} parameters, est. benefit {} bytes, cost {} bytes",
            merge::group_id(group),
            group.members.len(),
            group.distinct,
            group.inst_count,
            group.params.len(),
            group.benefit(),
            group.cost()
        );
        for (k, locs) in group.params.iter().enumerate() {
            let locs: Vec<String> = locs.iter().map(|(i, j)| format!("({i},{j})")).collect();
            let _ = writeln!(s, "  p{k}: {}", locs.join(" "));
        }
        for (module, name) in &group.members {
            let _ = writeln!(s, "  {module}: {name}");
        }
    }
    let _ = writeln!(
        s,
        "total: {} groups, est. benefit {benefit} bytes, cost {cost} bytes, net {} bytes",
        plan.groups.len(),
        benefit as i64 - cost as i64
    );
    Ok(s)
}

/// The outline section of `cgdata show`: how many sequences, and the most
/// frequent ones (their length and occurrence count; the hashes themselves
/// say nothing to a reader).
fn describe_outline_tree(s: &mut String, tree: &OutlineTree) {
    let occurrences: u64 = tree.sequences.values().sum();
    let instructions: usize = tree.sequences.keys().map(Vec::len).sum();
    let _ = writeln!(
        s,
        "outline: {} sequences ({} instructions) outlined {} times in round 1",
        tree.sequences.len(),
        instructions,
        occurrences
    );
    let mut by_count: Vec<(&Vec<u64>, u64)> =
        tree.sequences.iter().map(|(seq, &n)| (seq, n)).collect();
    by_count.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    for (seq, n) in by_count.iter().take(10) {
        let _ = writeln!(
            s,
            "  {:016x}: {} instructions, {} occurrences",
            seq[0],
            seq.len(),
            n
        );
    }
}

/// The profile section of `cgdata show`: totals, thresholds, and the
/// functions by largest block count (the hottest first).
fn describe_profile(s: &mut String, profile: &Profile) {
    let t = Thresholds::of(profile);
    let blocks: usize = profile.functions.values().map(|f| f.blocks.len()).sum();
    let hot = if t.hot == u64::MAX {
        "none".to_string()
    } else {
        t.hot.to_string()
    };
    let _ = writeln!(
        s,
        "profile: {} functions, {} blocks, {} block executions; hot from {hot}, cold up to {}",
        profile.functions.len(),
        blocks,
        profile.total(),
        t.cold
    );
    let mut by_max: Vec<_> = profile.functions.iter().collect();
    by_max.sort_by(|a, b| b.1.max().cmp(&a.1.max()).then_with(|| a.0.cmp(b.0)));
    for ((name, hash), f) in by_max.iter().take(20) {
        let class = match t.classify(f) {
            Some(parec_passes::heat::Heat::Hot) => "hot",
            Some(parec_passes::heat::Heat::Cold) => "cold",
            None => "-",
        };
        let _ = writeln!(
            s,
            "  {name} ({hash:016x}): entered {}, largest block {}, {} blocks, {class}",
            f.entry(),
            f.max(),
            f.blocks.len()
        );
    }
}
