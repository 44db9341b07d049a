//! Snapshot test of the frontend's error messages as `parec` prints them.
//!
//! For every `filetests/frontend/*.pare`, `parec interp FILE` must exit with
//! status 1; its stderr is compared with the insta snapshot
//! `snapshots/frontend/<stem>.snap` at the workspace root
//! (`INSTA_UPDATE=always cargo test` accepts new output). The workspace path
//! is normalized out, so snapshots do not depend on where the tree lives.

use std::path::PathBuf;

mod support;
use support::{parec, workspace_root};

#[test]
fn frontend_diagnostics_match_snapshots() {
    let root = workspace_root();
    let dir = root.join("filetests/frontend");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "pare"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no filetests/frontend/*.pare files");

    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(root.join("snapshots/frontend"));
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| {
        for file in &files {
            let relative = file.strip_prefix(&root).expect("file under the workspace");
            let o = parec()
                .arg("interp")
                .arg(relative)
                .current_dir(&root)
                .output()
                .expect("cannot run parec");
            let stderr = String::from_utf8_lossy(&o.stderr);
            assert_eq!(
                o.status.code(),
                Some(1),
                "{}: expected exit status 1; stderr:\n{stderr}",
                relative.display()
            );
            let prefix = format!("{}/", root.display());
            let normalized = stderr.replace(&prefix, "");
            let stem = file.file_stem().unwrap().to_string_lossy().into_owned();
            insta::assert_snapshot!(stem, normalized);
        }
    });
}
