//! `parec size --html`: the treemap page renders in a real headless browser
//! (Debian's `chromium`, which scripts/test.sh installs): after the page's
//! script ran, the DOM holds one box per module and per function of the
//! program's own code, with their names; the screenshot is a PNG of the
//! window's size, not blank, with each kind's colour where the report says
//! that kind has bytes.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

mod support;
use support::{parec, run, workspace_root};

const WIDTH: u32 = 1200;
const HEIGHT: u32 = 800;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Headless Chromium as root in a sandbox-less container, with no
/// network traffic of its own and a fresh profile.
fn chromium(profile: &Path) -> Command {
    let mut cmd = Command::new("chromium");
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--hide-scrollbars",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .arg(format!("--window-size={WIDTH},{HEIGHT}"));
    cmd
}

/// Runs a Chromium command; chromium missing is a failure, not a skip.
fn run_chromium(cmd: &mut Command) -> std::process::Output {
    let out = cmd.output().unwrap_or_else(|e| {
        panic!("cannot run chromium ({e}): scripts/test.sh installs it (apt-get install chromium)")
    });
    assert!(
        out.status.success(),
        "chromium failed: {}",
        text(&out.stderr)
    );
    out
}

/// Whether `dom` has a box of class `class` named `name` (an attribute
/// serialiser may or may not escape `<` and `>`).
fn has_box(dom: &str, class: &str, name: &str) -> bool {
    let escaped = name
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    [name.to_string(), escaped].iter().any(|n| {
        dom.contains(&format!("class=\"{class}\" data-name=\"{n}\""))
            || dom.contains(&format!("data-name=\"{n}\" class=\"{class}\""))
    })
}

fn rgb(hex: &str) -> [u8; 3] {
    let v = u32::from_str_radix(hex.trim_start_matches('#'), 16).unwrap();
    [(v >> 16) as u8, (v >> 8) as u8, v as u8]
}

#[test]
fn treemap_renders_in_headless_chromium() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::copy(
        workspace_root().join("examples/generic_consts.pare"),
        dir.join("generic_consts.pare"),
    )
    .unwrap();
    let built = run(parec()
        .current_dir(dir)
        .args(["build", "generic_consts.pare", "-o", "prog"]));
    assert!(built.status.success(), "{}", text(&built.stderr));
    let sized = run(parec()
        .current_dir(dir)
        .args(["size", "prog", "--json", "--html", "map.html"]));
    assert!(sized.status.success(), "{}", text(&sized.stderr));
    let report: Value = serde_json::from_slice(&sized.stdout).unwrap();
    let page = std::fs::read_to_string(dir.join("map.html")).unwrap();
    assert!(
        !page.contains("http://") && !page.contains("https://") && !page.contains(" src="),
        "the page must not load anything"
    );
    // The header lists every part of the file with its bytes.
    for part in report["file"]["parts"].as_array().unwrap() {
        let item = format!(
            "<li>{} <b>{}</b></li>",
            part["name"].as_str().unwrap(),
            part["bytes"]
        );
        assert!(page.contains(&item), "no {item} in the page");
    }
    let own: Vec<&Value> = report["functions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] != "libc")
        .collect();
    assert!(own.len() > 10, "{} own functions", own.len());
    let url = format!("file://{}", dir.join("map.html").display());

    // The DOM after the script ran: a box per module and per function.
    let dom = text(
        &run_chromium(
            chromium(&dir.join("profile-dom"))
                .arg("--dump-dom")
                .arg(&url),
        )
        .stdout,
    );
    let drawn = format!("data-drawn=\"{}\"", own.len());
    assert!(dom.contains(&drawn), "not every function drawn ({drawn})");
    for module in ["generic_consts", "pare_runtime"] {
        assert!(
            has_box(&dom, "node module", module),
            "no box for module {module}"
        );
    }
    for f in &own {
        let class = format!("node fn kind-{}", f["kind"].as_str().unwrap());
        let name = f["name"].as_str().unwrap();
        assert!(has_box(&dom, &class, name), "no box for {name} ({class})");
    }
    assert!(has_box(&dom, "node generic", "generic_consts::pow"));
    assert!(
        dom.contains("class=\"label\">generic_consts</span>"),
        "no module label"
    );

    // The screenshot: the window's size, not blank, each kind's colour.
    let png = dir.join("map.png");
    run_chromium(
        chromium(&dir.join("profile-shot"))
            .arg(format!("--screenshot={}", png.display()))
            .arg(&url),
    );
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&png).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut pixels).unwrap();
    assert_eq!((info.width, info.height), (WIDTH, HEIGHT));
    let channels = info.color_type.samples();
    assert!(channels >= 3, "{:?}", info.color_type);
    let count = |colour: [u8; 3]| {
        pixels[..info.buffer_size()]
            .chunks_exact(channels)
            .filter(|p| p[..3] == colour)
            .count()
    };
    let white = count([255, 255, 255]);
    let total = (WIDTH * HEIGHT) as usize;
    assert!(
        white < total / 2,
        "mostly blank: {white} of {total} pixels white"
    );
    for kind in report["kinds"].as_array().unwrap() {
        let name = kind["name"].as_str().unwrap();
        if name == "libc" || name == "padding" {
            continue;
        }
        let colour = rgb(parec::size::html::colour(kind_of(name)));
        let seen = count(colour);
        assert!(seen > 50, "kind {name}: {seen} pixels of its colour");
    }
    let program = count(rgb(parec::size::html::colour(parec::size::Kind::Program)));
    assert!(program > total / 20, "program code covers {program} pixels");
}

fn kind_of(name: &str) -> parec::size::Kind {
    *parec::size::Kind::ALL
        .iter()
        .find(|k| k.name() == name)
        .unwrap()
}
