//! Every `filetests/frontend/check_*.pare` program parses but is rejected by
//! the checker: it must report errors (never panic), and every diagnostic
//! must point into a source file. Imported modules are loaded from the same
//! directory, as the driver does.

use std::path::Path;

use pare_frontend::ast;
use pare_frontend::check::check_program;
use pare_frontend::parser::parse_module;
use pare_frontend::source::{Diagnostics, SourceMap};

/// Parses `root` and, transitively, the modules it imports from `dir`.
fn load(
    dir: &Path,
    root: &str,
    sources: &mut SourceMap,
    diags: &mut Diagnostics,
) -> Vec<ast::Module> {
    let mut modules: Vec<ast::Module> = Vec::new();
    let mut pending = vec![root.to_string()];
    while let Some(name) = pending.pop() {
        if modules.iter().any(|m| m.name == name) {
            continue;
        }
        let path = dir.join(format!("{name}.pare"));
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let file = sources.add(path.display().to_string(), text.clone());
        let module = parse_module(&name, file, &text, diags);
        for item in &module.items {
            if let ast::Item::Import(i) = item {
                pending.insert(0, i.module.name.clone());
            }
        }
        modules.push(module);
    }
    modules
}

#[test]
fn check_filetests_report_errors() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../filetests/frontend");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("check_") && n.ends_with(".pare"))
        .collect();
    names.sort();
    assert!(names.len() >= 12, "{names:?}");
    for name in names {
        let stem = name.trim_end_matches(".pare");
        let mut sources = SourceMap::new();
        let mut diags = Diagnostics::default();
        let modules = load(&dir, stem, &mut sources, &mut diags);
        assert!(
            !diags.has_errors(),
            "{name} has parse errors:\n{}",
            diags.render(&sources)
        );
        let text = std::fs::read_to_string(dir.join(&name)).unwrap();
        assert!(
            text.starts_with("// "),
            "{name} must start with a `// ` comment"
        );
        let program = check_program(&modules, &mut diags);
        assert!(
            program.is_none() && diags.has_errors(),
            "{name} was accepted"
        );
        let rendered = diags.render(&sources);
        if std::env::var_os("SHOW_DIAGNOSTICS").is_some() {
            println!("==== {name}\n{rendered}");
        }
    }
}
