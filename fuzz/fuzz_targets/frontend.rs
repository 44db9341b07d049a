//! Raw bytes → lexer, parser and checker: must never panic, whatever the input.
//!
//! Run: `cargo fuzz run --sanitizer none frontend` (from the repository root).
#![no_main]

use libfuzzer_sys::fuzz_target;
use pare_frontend::source::SourceMap;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data).into_owned();
    let mut sources = SourceMap::new();
    let file = sources.add("fuzz.pare", text);
    if let Err(diags) = pare_frontend::check_sources(&sources, &[("fuzz", file)]) {
        // Rendering must not panic either (spans must be inside the file).
        let _ = diags.render(&sources);
    }
});
