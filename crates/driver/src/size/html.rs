//! `parec size --html OUT.html`: the program's own code as a treemap.
//!
//! One self-contained page (no network: the script and style are inline):
//! a header with the totals, the parts of the file with their bytes (every
//! file byte in one, [`super::file`]), a legend of the kinds with their
//! colours and bytes, and the treemap — modules, inside them generics (all
//! instances of one generic function) and functions — drawn by `treemap.js` from the
//! report's own functions, embedded as JSON. A function's area is its
//! bytes with shared (folded) blocks split evenly among the functions
//! sharing them (module doc of [`super`], "Attribution"), so the areas tile
//! the own code; trap stubs inside a function are a strip at its bottom in
//! the trap-path colour. Hovering shows a box's details as its title;
//! clicking shows them beside the map.

use serde_json::json;

use super::{Kind, Report};

/// The colour of each kind in the treemap and legend.
pub fn colour(kind: Kind) -> &'static str {
    match kind {
        Kind::Program => "#4e79a7",
        Kind::MergeThunk => "#f28e2b",
        Kind::MergeBody => "#e15759",
        Kind::Outlined => "#59a14f",
        Kind::TrapPath => "#edc948",
        Kind::Runtime => "#b07aa1",
        Kind::Libc => "#9c9c9c",
        Kind::Unknown => "#76b7b2",
        Kind::Padding => "#d4d4d4",
    }
}

const SCRIPT: &str = include_str!("treemap.js");

/// The page.
pub fn page(report: &Report) -> String {
    let functions: Vec<_> = report
        .own_functions()
        .map(|f| {
            json!({
                "name": f.name,
                "module": f.module,
                "kind": f.kind.name(),
                "generic": f.generic,
                "bytes": f.bytes,
                "share": f.share,
                "shared_with": f.shared_with,
                "copies": f.copies,
                "trap_bytes": f.trap_bytes,
            })
        })
        .collect();
    let data = json!({ "functions": functions }).to_string();
    let title = format!("parec size: {}", report.inputs.join(" "));
    let mut styles = String::new();
    let mut legend = String::new();
    for kind in Kind::ALL {
        styles.push_str(&format!(
            ".kind-{} {{ background: {}; }}\n",
            kind.name(),
            colour(kind)
        ));
        let bytes = report.kind(kind).map_or(0, |k| k.bytes);
        if bytes > 0 {
            legend.push_str(&format!(
                "<li><span class=\"swatch kind-{name}\"></span>{name} <b>{bytes}</b></li>",
                name = kind.name()
            ));
        }
    }
    let mut parts = String::new();
    for part in &report.file.parts {
        parts.push_str(&format!(
            "<li>{} <b>{}</b></li>",
            escape(part.part.name()),
            part.bytes
        ));
    }
    let stripped = if report.file.stripped() {
        " (stripped: no symbol table, code attributed per section)"
    } else {
        ""
    };
    format!(
        r#"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title}</title>
<style>
html, body {{ height: 100%; }}
body {{ margin: 0; font: 12px/1.3 sans-serif; color: #222; background: #fff; display: flex; flex-direction: column; }}
header {{ padding: 6px 10px; border-bottom: 1px solid #ccc; }}
h1 {{ font-size: 15px; margin: 0 0 4px; }}
#legend, #file {{ list-style: none; margin: 0; padding: 0; display: flex; flex-wrap: wrap; gap: 12px; }}
#file {{ margin-bottom: 4px; }}
.swatch {{ display: inline-block; width: 11px; height: 11px; margin-right: 4px; vertical-align: -1px; border: 1px solid #555; }}
main {{ display: flex; flex: 1; min-height: 0; }}
#treemap {{ position: relative; flex: 1; overflow: hidden; }}
#details {{ width: 220px; padding: 8px; white-space: pre-wrap; border-left: 1px solid #ccc; overflow: auto; }}
.node {{ position: absolute; box-sizing: border-box; overflow: hidden; border: 1px solid #fff; }}
.node.module {{ background: #3a3a3a; color: #fff; border-color: #222; }}
.node.generic {{ background: #7a7a7a; color: #fff; border-color: #444; }}
.node.fn {{ color: #fff; cursor: pointer; }}
.node.fn.kind-trap-path {{ color: #222; }}
.node:hover {{ outline: 2px solid #000; z-index: 1; }}
.label {{ position: relative; display: block; padding: 1px 3px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }}
.trap {{ position: absolute; left: 0; right: 0; bottom: 0; background: {trap}; }}
{styles}</style>
</head>
<body>
<header>
<h1>{title}</h1>
<div>{arch} {what}: file {file} bytes{stripped}, in these parts:</div>
<ul id="file">{parts}</ul>
<div>code {total} bytes, the program's own {own} bytes (drawn below: module &gt; generic &gt; function, area = bytes)</div>
<ul id="legend">{legend}</ul>
</header>
<main>
<div id="treemap"></div>
<div id="details">Click a box for its details.</div>
</main>
<script type="application/json" id="size-data">{data}</script>
<script>
{script}</script>
</body>
</html>
"#,
        title = escape(&title),
        arch = report.arch.name(),
        what = if report.executable {
            "executable"
        } else {
            "objects"
        },
        file = report.file.bytes,
        stripped = stripped,
        parts = parts,
        total = report.total,
        own = report.own,
        trap = colour(Kind::TrapPath),
        legend = legend,
        styles = styles,
        data = script_safe(&data),
        script = SCRIPT,
    )
}

/// Text for HTML element content.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// JSON that cannot end its `<script>` element early: `<`, `>` and `&` as
/// JSON escapes.
fn script_safe(json: &str) -> String {
    json.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}
