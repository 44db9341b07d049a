//! `parec cgdata merge OUT IN...` and `parec cgdata show FILE`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail};
use parec_passes::cgdata::{CgData, SectionKind};
use parec_passes::merge::{self, Summary};

use crate::rounds::{merge_options, read_cgdata, write_cgdata};
use crate::Failure;

/// Merges cgdata files (any order gives the same bytes) into `out`.
pub fn merge_files(out: &Path, inputs: &[PathBuf]) -> Result<i32, Failure> {
    let Some(first) = inputs.first() else {
        return Err(anyhow!("`cgdata merge` needs at least one input").into());
    };
    let first_data = read_cgdata(first, None)?;
    let mut merged = CgData::new(&first_data.target);
    for path in inputs {
        let next = read_cgdata(path, Some(&merged.target))?;
        // Only the sections this command knows how to merge are accepted.
        if let Some(kind) = next.kinds().find(|&k| k != SectionKind::Merge) {
            bail_unknown(path, kind.name())?;
        }
        merged
            .merge_section::<Summary>(&next)
            .map_err(|e| anyhow!("cgdata `{}`: {e}", path.display()))?;
    }
    write_cgdata(out, &merged.encode())?;
    Ok(0)
}

fn bail_unknown(path: &Path, kind: &str) -> anyhow::Result<()> {
    bail!(
        "cgdata `{}`: section `{kind}` cannot be merged by this parec",
        path.display()
    )
}

/// Prints a cgdata file: its sections, and the merge groups its summary
/// combines into (members, parameters, estimated benefit).
pub fn show(path: &Path) -> Result<i32, Failure> {
    let data = read_cgdata(path, None)?;
    print!(
        "{}",
        describe(&data).map_err(|e| anyhow!("cgdata `{}`: {e}", path.display()))?
    );
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
    let Some(summary) = data.get::<Summary>()? else {
        return Ok(s);
    };
    let plan = merge::combine(&summary, &merge_options());
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
