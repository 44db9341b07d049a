//! `parec size NEW --compare OLD`: what grew, shrank, appeared or vanished
//! between two builds, per function, per kind and per part of the file.
//!
//! Functions are matched by name (in objects, by object and name, as the
//! report's rows are); a function's size is its row's bytes, its folded
//! code included (marked `shared with N`, as in the report, so the deltas
//! of functions sharing code add up to more than the code that changed).
//! Deltas are `new − old`. Both builds must be the same kind of input (executables or
//! objects) for the same architecture.

use std::collections::BTreeMap;

use anyhow::{bail, Result};

use super::file::Part;
use super::Report;

/// How a function or kind changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    Grew,
    Shrank,
    Appeared,
    Vanished,
    Same,
}

impl Change {
    pub fn name(self) -> &'static str {
        match self {
            Change::Grew => "grew",
            Change::Shrank => "shrank",
            Change::Appeared => "appeared",
            Change::Vanished => "vanished",
            Change::Same => "same",
        }
    }
}

/// One function, kind or file part in both builds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delta {
    pub name: String,
    /// The function's module (empty for kinds and file parts).
    pub module: String,
    /// The kind in the new build (in the old one if it vanished); `file`
    /// for a file part.
    pub kind: String,
    /// Bytes in the old build (0 if absent).
    pub old: u64,
    pub new: u64,
    pub in_old: bool,
    pub in_new: bool,
    /// Functions sharing its code (folded), in the new build (in the old
    /// one if it vanished); 0 for kinds.
    pub shared_with: usize,
}

impl Delta {
    pub fn delta(&self) -> i64 {
        self.new as i64 - self.old as i64
    }

    pub fn change(&self) -> Change {
        match (self.in_old, self.in_new) {
            (false, _) => Change::Appeared,
            (_, false) => Change::Vanished,
            _ if self.new > self.old => Change::Grew,
            _ if self.new < self.old => Change::Shrank,
            _ => Change::Same,
        }
    }
}

/// A total in both builds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Totals {
    pub old: u64,
    pub new: u64,
}

impl Totals {
    pub fn delta(&self) -> i64 {
        self.new as i64 - self.old as i64
    }
}

/// The differences between two reports.
#[derive(Clone, Debug)]
pub struct Comparison {
    pub old_inputs: Vec<String>,
    pub new_inputs: Vec<String>,
    pub total: Totals,
    pub own: Totals,
    /// The files' bytes.
    pub file: Totals,
    /// Every file part of either build, in `file::Part` order.
    pub file_parts: Vec<Delta>,
    /// Every kind of either build, in the order of `Kind::ALL`.
    pub kinds: Vec<Delta>,
    /// Every function of either build, largest change first, then by name
    /// and module (unchanged ones last).
    pub functions: Vec<Delta>,
}

/// Compares `new` with `old`.
pub fn compare(old: &Report, new: &Report) -> Result<Comparison> {
    if old.executable != new.executable {
        bail!("--compare needs two executables or two sets of objects");
    }
    if old.arch != new.arch {
        bail!("--compare needs builds for the same architecture");
    }
    let key = |module: &str, name: &str| {
        if new.executable {
            (String::new(), name.to_string())
        } else {
            (module.to_string(), name.to_string())
        }
    };
    let mut functions: BTreeMap<(String, String), Delta> = BTreeMap::new();
    for f in &old.functions {
        functions.insert(
            key(&f.module, &f.name),
            Delta {
                name: f.name.clone(),
                module: f.module.clone(),
                kind: f.kind.name().to_string(),
                old: f.bytes,
                new: 0,
                in_old: true,
                in_new: false,
                shared_with: f.shared_with,
            },
        );
    }
    for f in &new.functions {
        let delta = functions
            .entry(key(&f.module, &f.name))
            .or_insert_with(|| Delta {
                name: f.name.clone(),
                module: f.module.clone(),
                kind: String::new(),
                old: 0,
                new: 0,
                in_old: false,
                in_new: false,
                shared_with: 0,
            });
        delta.module = f.module.clone();
        delta.shared_with = f.shared_with;
        delta.kind = f.kind.name().to_string();
        delta.new = f.bytes;
        delta.in_new = true;
    }
    let mut functions: Vec<Delta> = functions.into_values().collect();
    functions.sort_by(|a, b| {
        let same = |d: &Delta| d.change() == Change::Same;
        same(a)
            .cmp(&same(b))
            .then_with(|| b.delta().abs().cmp(&a.delta().abs()))
            .then_with(|| a.name.cmp(&b.name))
            .then_with(|| a.module.cmp(&b.module))
    });

    let kinds = super::Kind::ALL
        .iter()
        .filter_map(|kind| {
            let old_row = old.kind(*kind);
            let new_row = new.kind(*kind);
            (old_row.is_some() || new_row.is_some()).then(|| Delta {
                name: kind.name().to_string(),
                module: String::new(),
                kind: kind.name().to_string(),
                old: old_row.map_or(0, |r| r.bytes),
                new: new_row.map_or(0, |r| r.bytes),
                in_old: old_row.is_some(),
                in_new: new_row.is_some(),
                shared_with: 0,
            })
        })
        .collect();
    Ok(Comparison {
        old_inputs: old.inputs.clone(),
        new_inputs: new.inputs.clone(),
        total: Totals {
            old: old.total,
            new: new.total,
        },
        own: Totals {
            old: old.own,
            new: new.own,
        },
        file: Totals {
            old: old.file.bytes,
            new: new.file.bytes,
        },
        file_parts: file_parts(old, new),
        kinds,
        functions,
    })
}

/// The file parts of either build, in part order.
fn file_parts(old: &Report, new: &Report) -> Vec<Delta> {
    let mut parts: BTreeMap<&Part, Delta> = BTreeMap::new();
    let empty = |part: &Part| Delta {
        name: part.name().to_string(),
        module: String::new(),
        kind: "file".to_string(),
        old: 0,
        new: 0,
        in_old: false,
        in_new: false,
        shared_with: 0,
    };
    for p in &old.file.parts {
        let delta = parts.entry(&p.part).or_insert_with(|| empty(&p.part));
        delta.old = p.bytes;
        delta.in_old = true;
    }
    for p in &new.file.parts {
        let delta = parts.entry(&p.part).or_insert_with(|| empty(&p.part));
        delta.new = p.bytes;
        delta.in_new = true;
    }
    parts.into_values().collect()
}
