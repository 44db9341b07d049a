//! The driver's modules do not use each other in circles.
//!
//! Every `src/*.rs` file except the crate root is a module; module `a` uses
//! `b` when its code (comments and doc links excluded) names `crate::b`,
//! directly or inside a `use crate::{...}` group. The graph must be
//! acyclic: a new edge that closes a cycle fails this test, naming the
//! cycle. `--nocapture` prints the graph.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Module name → the modules it uses.
type Graph = BTreeMap<String, BTreeSet<String>>;

/// `text` without `//` comments (line and doc comments) and string literals.
fn code_only(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let mut in_string = false;
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '"' => in_string = !in_string,
                '\\' if in_string => {
                    chars.next();
                }
                '/' if !in_string && chars.peek() == Some(&'/') => break,
                _ if in_string => {}
                _ => out.push(c),
            }
        }
        out.push('\n');
    }
    out
}

/// The top-level names inside the braces that start at `text[0] == '{'`.
fn group_names(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut depth = 0;
    let mut current = String::new();
    for c in text.chars() {
        match c {
            '{' => {
                depth += 1;
                if depth > 1 {
                    current.push(c);
                }
            }
            '}' => {
                depth -= 1;
                if depth == 0 {
                    names.push(std::mem::take(&mut current));
                    break;
                }
                current.push(c);
            }
            ',' if depth == 1 => names.push(std::mem::take(&mut current)),
            _ => current.push(c),
        }
    }
    names
        .iter()
        .filter_map(|n| {
            let first = n.trim().split("::").next()?.trim();
            (!first.is_empty()).then(|| first.to_string())
        })
        .collect()
}

/// The modules of the crate that `code` names through `crate::`.
fn uses(code: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        let names = if rest.starts_with('{') {
            group_names(rest)
        } else {
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            vec![rest[..end].to_string()]
        };
        found.extend(names.into_iter().filter(|n| modules.contains(n)));
    }
    found
}

fn driver_graph() -> Graph {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = BTreeMap::new();
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        if path.extension().is_some_and(|e| e == "rs") && stem != "lib" && stem != "main" {
            files.insert(stem.to_string(), std::fs::read_to_string(&path).unwrap());
        }
    }
    let modules: BTreeSet<String> = files.keys().cloned().collect();
    files
        .iter()
        .map(|(name, text)| {
            let mut used = uses(&code_only(text), &modules);
            used.remove(name);
            (name.clone(), used)
        })
        .collect()
}

/// A cycle of `graph`, if it has one.
fn find_cycle(graph: &Graph) -> Option<Vec<String>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Open,
        Done,
    }
    fn visit(
        node: &str,
        graph: &Graph,
        marks: &mut BTreeMap<String, Mark>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match marks.get(node) {
            Some(Mark::Done) => return None,
            Some(Mark::Open) => {
                let start = path.iter().position(|n| n == node).unwrap_or(0);
                let mut cycle = path[start..].to_vec();
                cycle.push(node.to_string());
                return Some(cycle);
            }
            None => {}
        }
        marks.insert(node.to_string(), Mark::Open);
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, marks, path) {
                return Some(cycle);
            }
        }
        path.pop();
        marks.insert(node.to_string(), Mark::Done);
        None
    }
    let mut marks = BTreeMap::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut marks, &mut Vec::new()))
}

#[test]
fn driver_modules_form_no_cycle() {
    let graph = driver_graph();
    assert!(graph.len() > 10, "only {} modules found", graph.len());
    for (module, used) in &graph {
        println!(
            "{module} -> {}",
            used.iter().cloned().collect::<Vec<_>>().join(", ")
        );
    }
    if let Some(cycle) = find_cycle(&graph) {
        panic!(
            "the driver's modules use each other in a circle: {}",
            cycle.join(" -> ")
        );
    }
}

/// The checker itself finds what it should: group imports, nested paths,
/// references in comments ignored, and cycles.
#[test]
fn the_checker_sees_uses_and_cycles() {
    let modules: BTreeSet<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
    let code = code_only(
        "use crate::{a, b::{X, Y}};\n// crate::c is only mentioned\nlet s = \"crate::c\";\n",
    );
    assert_eq!(
        uses(&code, &modules),
        ["a", "b"].iter().map(|s| s.to_string()).collect()
    );
    let mut graph = Graph::new();
    graph.insert("a".into(), ["b".to_string()].into());
    graph.insert("b".into(), ["c".to_string()].into());
    graph.insert("c".into(), BTreeSet::new());
    assert_eq!(find_cycle(&graph), None);
    graph.get_mut("c").unwrap().insert("a".into());
    assert_eq!(
        find_cycle(&graph),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
}
