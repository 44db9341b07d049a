//! The command lines at the top of a `.clif` file — `test`, `set`,
//! `target` — read as Cranelift's own tools read them.
//!
//! The CLIF reference (cranelift's `docs/ir.md`, "Test files") and
//! cranelift-reader's `parse_target_specs` define them: `set NAME[=VALUE]...`
//! changes shared settings for every `target` line after it (the settings
//! accumulate); `target TRIPLE [ISA-FLAG[=VALUE]...]` adds a section: an ISA
//! with the shared settings so far and its own flags. A `set` after the
//! last `target` is an error ("dangling"). A file without `target` lines has
//! one section for any ISA.
//!
//! Which section applies is chosen as clif-util's `run` chooses it: the
//! first whose architecture is the one the code is for ([`Machine`]); a
//! file with `target` lines but none for that architecture is an error.
//! cranelift-reader itself cannot read every such file here, because it
//! builds an ISA for each `target` line and parec compiles in only the
//! aarch64 and x86-64 backends: the `set` before a `target s390x` would be
//! "dangling". So this module reads the command lines itself, with the
//! reader's own option parser (unknown settings and bad values are the
//! reader's errors), and hands the reader the file with those lines blanked
//! (same line numbers) for the functions.
//!
//! Settings that parec cannot honour are refused with their line:
//! `is_pic` (parec's executables are static and non-PIE, and JIT code is
//! non-PIC) and, in the JIT, `use_colocated_libcalls` (libc is beyond a
//! PC-relative reach of JIT code). The others reach Cranelift as given,
//! above the build's own (a file's `opt_level` beats `-O` for Cranelift;
//! `-O` still chooses parec's passes), except `machine_code_cfg_info`, which
//! parec sets for its outliner (it records block starts and changes no
//! code byte).

use std::str::FromStr;

use anyhow::{anyhow, bail, Result};
use cranelift_codegen::isa::{self, LookupError};
use cranelift_codegen::settings;
use cranelift_reader::{parse_option, Location, ParseError, TestOption};
use parec_passes::clif_module::CodegenSettings;
use target_lexicon::{Architecture, Triple};

use crate::target::{Machine, Target};

/// One setting as written, with its line.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Setting {
    name: String,
    value: String,
    line: usize,
}

/// One `target` line and the settings that apply to it.
#[derive(Clone, Debug)]
struct Section {
    architecture: Architecture,
    /// The triple as written.
    triple: String,
    /// The shared settings of every `set` line before it.
    shared: Vec<Setting>,
    /// The ISA flags on its line.
    isa: Vec<Setting>,
}

/// The command lines of a `.clif` file.
#[derive(Clone, Debug)]
pub struct Header {
    /// The shared settings of every `set` line.
    shared: Vec<Setting>,
    /// One per `target` line, in order; empty: the file is for any ISA.
    sections: Vec<Section>,
}

/// A header and the file text the reader should parse.
pub struct ReadHeader {
    pub header: Header,
    /// The file with its `set` and `target` lines blanked.
    pub body: String,
}

/// Reads the `test`, `set` and `target` lines at the top of `text` (from
/// the file `name`).
pub fn read(name: &str, text: &str) -> Result<ReadHeader> {
    let mut header = Header {
        shared: Vec::new(),
        sections: Vec::new(),
    };
    let mut body = String::with_capacity(text.len());
    // The line of the last `set` not followed by a `target`, once a
    // `target` was seen.
    let mut dangling = None;
    let mut in_header = true;
    for (index, raw) in text.split_inclusive('\n').enumerate() {
        let line = index + 1;
        let code = raw.split(';').next().unwrap_or("");
        let mut words = code.split_whitespace();
        let command = if in_header { words.next() } else { None };
        match command {
            None if in_header && code.trim().is_empty() => {}
            Some("test") => {}
            Some("set") => {
                for word in words {
                    header.shared.push(shared_setting(name, word, line)?);
                }
                if !header.sections.is_empty() {
                    dangling = Some(line);
                }
                body.push_str(line_ending(raw));
                continue;
            }
            Some("target") => {
                header
                    .sections
                    .push(section(name, words, &header.shared, line)?);
                dangling = None;
                body.push_str(line_ending(raw));
                continue;
            }
            _ => in_header = false,
        }
        body.push_str(raw);
    }
    if let Some(line) = dangling {
        bail!("{name}:{line}: dangling 'set' command after ISA specification has no effect.");
    }
    Ok(ReadHeader { header, body })
}

/// The end of line of `raw`, standing for the whole blanked line.
fn line_ending(raw: &str) -> &'static str {
    if raw.ends_with('\n') {
        "\n"
    } else {
        ""
    }
}

/// A reader error at `line` of `name`.
fn located(name: &str, line: usize, e: impl Into<ParseError>) -> anyhow::Error {
    let e: ParseError = e.into();
    anyhow!("{name}:{line}: {}", e.message)
}

/// One word of a `set` line, checked against Cranelift's shared settings.
fn shared_setting(name: &str, word: &str, line: usize) -> Result<Setting> {
    let mut builder = settings::builder();
    parse_option(word, &mut builder, Location { line_number: line })
        .map_err(|e| located(name, line, e))?;
    Ok(setting(word, line))
}

/// A setting word as a name and a value (`true` for a bare flag).
fn setting(word: &str, line: usize) -> Setting {
    let (name, value) = match TestOption::new(word) {
        TestOption::Flag(name) => (name, "true"),
        TestOption::Value(name, value) => (name, value),
    };
    Setting {
        name: name.to_string(),
        value: value.to_string(),
        line,
    }
}

/// A `target` line: its triple and ISA flags (checked when parec has the
/// backend; a section for another ISA is kept only to be named in errors).
fn section<'a>(
    name: &str,
    mut words: impl Iterator<Item = &'a str>,
    shared: &[Setting],
    line: usize,
) -> Result<Section> {
    let Some(triple) = words.next() else {
        bail!("{name}:{line}: expected target triple");
    };
    let parsed = Triple::from_str(triple).map_err(|e| anyhow!("{name}:{line}: {e}"))?;
    let words: Vec<&str> = words.collect();
    match isa::lookup(parsed.clone()) {
        Ok(mut builder) => {
            for word in &words {
                parse_option(word, &mut builder, Location { line_number: line })
                    .map_err(|e| located(name, line, e))?;
            }
        }
        Err(LookupError::SupportDisabled | LookupError::Unsupported) => {}
    }
    Ok(Section {
        architecture: parsed.architecture,
        triple: triple.to_string(),
        shared: shared.to_vec(),
        isa: words.iter().map(|w| setting(w, line)).collect(),
    })
}

impl Header {
    /// The target of the first `target` line that parec builds for.
    pub fn first_target(&self) -> Option<Target> {
        self.sections
            .iter()
            .find_map(|s| Target::from_architecture(s.architecture))
    }

    /// The settings of the section for `machine`, checked that parec can
    /// honour them.
    pub fn settings_for(&self, name: &str, machine: Machine) -> Result<CodegenSettings> {
        let architecture = machine.architecture();
        let (shared, isa) = if self.sections.is_empty() {
            (&self.shared, &Vec::new())
        } else {
            let section = self
                .sections
                .iter()
                .find(|s| s.architecture == architecture)
                .ok_or_else(|| {
                    let triples: Vec<&str> =
                        self.sections.iter().map(|s| s.triple.as_str()).collect();
                    anyhow!(
                        "{name}: no `target` line for {architecture} (the file is for {})",
                        triples.join(", ")
                    )
                })?;
            (&section.shared, &section.isa)
        };
        for s in shared {
            check_honoured(name, s, machine)?;
        }
        let pairs = |list: &[Setting]| {
            list.iter()
                .map(|s| (s.name.clone(), s.value.clone()))
                .collect()
        };
        Ok(CodegenSettings {
            shared: pairs(shared),
            isa: pairs(isa),
        })
    }
}

/// Refuses a shared setting that parec's code cannot have.
fn check_honoured(name: &str, s: &Setting, machine: Machine) -> Result<()> {
    let line = s.line;
    let on = s.value == "true";
    match s.name.as_str() {
        "is_pic" if on => bail!(
            "{name}:{line}: `is_pic` cannot be honoured: parec links static non-PIE executables and runs JIT code, both non-PIC"
        ),
        "use_colocated_libcalls" if on && machine == Machine::Host => bail!(
            "{name}:{line}: `use_colocated_libcalls` cannot be honoured by the JIT: the C library's functions lie beyond a PC-relative reach of JIT code"
        ),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const AARCH64: Machine = Machine::Target(Target::Aarch64);
    const X86_64: Machine = Machine::Target(Target::X86_64);

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn settings_accumulate_and_sections_are_chosen_by_architecture() {
        let text = "test run\nset opt_level=speed\ntarget x86_64 has_sse41\nset enable_multi_ret_implicit_sret\ntarget aarch64\ntarget s390x\ntarget riscv64 has_c\n\nfunction %f() {\nblock0:\n  return\n}\n";
        let read = read("t.clif", text).unwrap();
        assert_eq!(read.body.lines().count(), text.lines().count());
        assert!(read.body.starts_with("test run\n\n\n"), "{}", read.body);
        let x86 = read.header.settings_for("t.clif", X86_64).unwrap();
        assert_eq!(x86.shared, pairs(&[("opt_level", "speed")]));
        assert_eq!(x86.isa, pairs(&[("has_sse41", "true")]));
        let arm = read.header.settings_for("t.clif", AARCH64).unwrap();
        assert_eq!(
            arm.shared,
            pairs(&[
                ("opt_level", "speed"),
                ("enable_multi_ret_implicit_sret", "true")
            ])
        );
        assert!(arm.isa.is_empty());
    }

    #[test]
    fn without_target_lines_the_settings_apply_to_any_isa() {
        let read = read(
            "t.clif",
            "set enable_pinned_reg ; why\nfunction %f() {\nblock0:\n  return\n}\n",
        )
        .unwrap();
        for machine in [AARCH64, X86_64, Machine::Host] {
            let s = read.header.settings_for("t.clif", machine).unwrap();
            assert_eq!(s.shared, pairs(&[("enable_pinned_reg", "true")]));
        }
    }

    #[test]
    fn bad_headers_are_errors_with_their_line() {
        let cases = [
            ("target x86_64\nset opt_level=none\n", "t.clif:2: dangling"),
            (
                "set no_such_setting\n",
                "t.clif:1: unknown setting 'no_such_setting'",
            ),
            ("set opt_level=fastest\n", "t.clif:1: invalid setting value"),
            ("target aarch64 has_nothing\n", "t.clif:1: unknown setting"),
            ("target\n", "t.clif:1: expected target triple"),
        ];
        for (text, expected) in cases {
            let err = read("t.clif", text).err().map(|e| e.to_string());
            assert!(
                err.as_deref().is_some_and(|e| e.starts_with(expected)),
                "{text:?}: {err:?}"
            );
        }
    }

    #[test]
    fn a_missing_section_and_unhonourable_settings_are_refused() {
        let read1 = read("t.clif", "target s390x\ntarget x86_64\n").unwrap();
        let err = read1.header.settings_for("t.clif", AARCH64).unwrap_err();
        assert_eq!(
            err.to_string(),
            "t.clif: no `target` line for aarch64 (the file is for s390x, x86_64)"
        );
        let pic = read("t.clif", "set is_pic\n").unwrap();
        let err = pic.header.settings_for("t.clif", AARCH64).unwrap_err();
        assert!(err
            .to_string()
            .starts_with("t.clif:1: `is_pic` cannot be honoured"));
        let colocated = read("t.clif", "\nset use_colocated_libcalls=true\n").unwrap();
        colocated.header.settings_for("t.clif", AARCH64).unwrap();
        let err = colocated
            .header
            .settings_for("t.clif", Machine::Host)
            .unwrap_err();
        assert!(err
            .to_string()
            .starts_with("t.clif:2: `use_colocated_libcalls`"));
    }

    #[test]
    fn the_header_ends_at_the_first_function() {
        let text = "function %f() {\nblock0:\n  return\n}\n; set opt_level=none\n";
        let read = read("t.clif", text).unwrap();
        assert_eq!(read.body, text);
        assert!(read.header.sections.is_empty() && read.header.shared.is_empty());
    }
}
