//! The machine outliner on the whole corpus (every program of `examples/`
//! and `bench/`, compiled for aarch64 at `-O2` and `-Oz`):
//!
//! - lifting and laying out an untouched function gives back its exact bytes,
//!   relocations, traps and call sites, and no function is left opaque;
//! - `machine_code_cfg_info` does not change the code;
//! - the lifter's branch targets agree with `aarch64-linux-gnu-objdump -d`,
//!   and every register objdump shows is one the decoder reports;
//! - outlining never grows a function or a module, and it does shrink the
//!   corpus.
//!
//! That outlined programs still compute the same results is checked by
//! `tests/examples.rs` (every example and benchmark at `-Oz`, which runs the
//! outliner, under qemu) and by the differential tester.

use std::path::{Path, PathBuf};
use std::process::Command;

use parec::codegen::{self, CompiledObject};
use parec::object;
use parec::target::{OptLevel, Target};
use parec_passes::machine::decode::{self, Decoder, Form};
use parec_passes::machine::{lift, MachFunction};
use parec_passes::outline::{self, OutlineOptions};

mod support;
use support::{codegen_options, modules_of, text_size, workspace_root};

/// The root file of every program in `examples/` and `bench/`.
fn corpus() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in ["examples", "bench"] {
        let dir = workspace_root().join(dir);
        let mut entries: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
            .map(|e| e.expect("directory entry").path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() && path.join("main.pare").exists() {
                out.push(path.join("main.pare"));
            } else if path.extension().is_some_and(|e| e == "pare") {
                out.push(path);
            }
        }
    }
    assert!(out.len() > 20, "the corpus is unexpectedly small");
    out
}

/// Every module of the corpus at `level`, compiled to machine functions.
fn compiled_corpus(level: OptLevel) -> Vec<(String, Vec<MachFunction>, Vec<String>)> {
    let mut out = Vec::new();
    for root in corpus() {
        for module in modules_of(&root, level) {
            let name = format!("{}:{}", root.display(), module.name);
            let (functions, names) =
                codegen::machine_functions(&module, Target::Aarch64, level, true)
                    .unwrap_or_else(|e| panic!("{name}: {e:#}"));
            out.push((name, functions, names));
        }
    }
    out
}

#[test]
fn every_function_lifts_and_lays_out_to_its_exact_bytes() {
    let mut decoder = Decoder::new();
    let mut failures = Vec::new();
    let mut count = 0;
    for level in [OptLevel::O2, OptLevel::Oz] {
        for (module, functions, _) in compiled_corpus(level) {
            for f in &functions {
                count += 1;
                let lifted = lift::lift(f, &mut decoder);
                if let Some(reason) = &lifted.opaque {
                    failures.push(format!("{module} {} ({level:?}): opaque: {reason}", f.name));
                    continue;
                }
                match lifted.layout() {
                    Ok(e) if e == f.emitted() => {}
                    Ok(_) => failures.push(format!(
                        "{module} {} ({level:?}): layout differs from the original",
                        f.name
                    )),
                    Err(e) => failures.push(format!("{module} {} ({level:?}): {e:?}", f.name)),
                }
            }
        }
    }
    assert!(count > 200, "only {count} functions in the corpus");
    assert!(
        failures.is_empty(),
        "{} of {count} functions do not round-trip:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn block_start_recording_does_not_change_code() {
    for root in corpus() {
        for module in modules_of(&root, OptLevel::Oz) {
            let machine = |cfg_info| {
                codegen::machine_functions(&module, Target::Aarch64, OptLevel::Oz, cfg_info)
                    .unwrap()
            };
            let ((with, _), (without, _)) = (machine(true), machine(false));
            assert_eq!(with.len(), without.len());
            for (a, b) in with.iter().zip(&without) {
                assert_eq!(a.bytes, b.bytes, "{}: {}", root.display(), a.name);
                assert!(b.bb_starts.is_empty());
                assert!(!a.bb_starts.is_empty(), "{}: no block starts", a.name);
            }
        }
    }
}

#[test]
fn outlining_never_grows_a_function_or_a_module() {
    let mut before = 0u64;
    let mut after = 0u64;
    for (module, functions, names) in compiled_corpus(OptLevel::Oz) {
        let result = outline::outline_module(&functions, &names, &OutlineOptions::default());
        for (f, e) in functions.iter().zip(&result.functions) {
            assert!(
                e.bytes.len() <= f.bytes.len(),
                "{module} {}: {} -> {} bytes",
                f.name,
                f.bytes.len(),
                e.bytes.len()
            );
        }
        let outlined: u64 = result
            .outlined
            .iter()
            .map(|o| o.code.bytes.len() as u64)
            .sum();
        let total: u64 = result
            .functions
            .iter()
            .map(|e| e.bytes.len() as u64)
            .sum::<u64>()
            + outlined;
        let original: u64 = functions.iter().map(|f| f.bytes.len() as u64).sum();
        assert!(total <= original, "{module}: {original} -> {total} bytes");
        assert_eq!(result.stats.bytes_before, original);
        assert_eq!(result.stats.bytes_after, total);
        before += original;
        after += total;
    }
    assert!(
        after < before,
        "outlining saved nothing on the corpus ({before} bytes)"
    );
}

/// One instruction of `objdump -d`: address, word, mnemonic, operands.
struct DumpedInst {
    address: u64,
    word: u32,
    mnemonic: String,
    operands: String,
}

fn objdump(path: &Path) -> Vec<DumpedInst> {
    let out = Command::new("aarch64-linux-gnu-objdump")
        .arg("-d")
        .arg(path)
        .output()
        .expect("aarch64-linux-gnu-objdump runs");
    assert!(out.status.success(), "objdump failed on {}", path.display());
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut insts = Vec::new();
    for line in text.lines() {
        // "      44:\t94000000 \tbl\t44 <main::weaker+0x44>"
        let mut fields = line.split('\t');
        let (Some(addr), Some(word), Some(mnemonic)) =
            (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        let Some(addr) = addr.trim().strip_suffix(':') else {
            continue;
        };
        let (Ok(address), Ok(word)) = (
            u64::from_str_radix(addr, 16),
            u32::from_str_radix(word.trim(), 16),
        ) else {
            continue;
        };
        insts.push(DumpedInst {
            address,
            word,
            mnemonic: mnemonic.trim().to_string(),
            operands: fields.next().unwrap_or("").trim().to_string(),
        });
    }
    insts
}

#[test]
fn decoding_agrees_with_objdump() {
    let tmp = tempfile::tempdir().unwrap();
    let mut decoder = Decoder::new();
    let (mut checked, mut registers_checked) = (0, 0);
    let mut missed = Vec::new();
    for root in corpus() {
        let program = root.display().to_string();
        for level in [OptLevel::O2, OptLevel::Oz] {
            let modules = modules_of(&root, level);
            let objects =
                codegen::compile_all(&modules, &codegen_options(level, true), None).unwrap();
            for obj in &objects {
                let path = tmp.path().join("module.o");
                std::fs::write(&path, &obj.bytes).unwrap();
                for inst in objdump(&path) {
                    let form = Form::of(inst.word);
                    let expected = match inst.mnemonic.as_str() {
                        "b" => Some(Form::B),
                        "bl" => Some(Form::Bl),
                        m if m.starts_with("b.") => Some(Form::BCond),
                        "cbz" | "cbnz" => Some(Form::Cbz),
                        "tbz" | "tbnz" => Some(Form::Tbz),
                        "adr" => Some(Form::Adr),
                        "ret" => Some(Form::Ret { rn: 30 }),
                        _ => None,
                    };
                    if let Some(expected) = expected {
                        assert_eq!(
                            form, expected,
                            "{program}: {:#x} {}",
                            inst.word, inst.mnemonic
                        );
                    }
                    // A zero offset is a relocation's placeholder: objdump shows
                    // the symbol instead (nothing intra-function branches to itself).
                    let relocated = form.offset(inst.word) == 0;
                    if !relocated
                        && matches!(
                            form,
                            Form::B | Form::Bl | Form::BCond | Form::Cbz | Form::Tbz | Form::Adr
                        )
                    {
                        // The target is the last operand's hex value, before any "<sym>".
                        let target = inst
                            .operands
                            .split('<')
                            .next()
                            .unwrap_or("")
                            .split(',')
                            .map(str::trim)
                            .filter(|s| !s.is_empty())
                            .filter_map(|s| {
                                u64::from_str_radix(s.trim_start_matches("#0x"), 16).ok()
                            })
                            .next_back();
                        let computed = inst.address as i64 + form.offset(inst.word);
                        assert_eq!(
                            target.map(|t| t as i64),
                            Some(computed),
                            "{program}: {:#x}: {} {}",
                            inst.address,
                            inst.mnemonic,
                            inst.operands
                        );
                        checked += 1;
                    }
                    // Every register objdump shows must be among those the
                    // decoder says the instruction mentions: a missed
                    // register would make liveness unsound.
                    let shown = registers_in(&inst.operands, form.is_pc_relative());
                    let mentioned = decoder.effects(inst.word).mentions();
                    if shown & !mentioned != 0 {
                        missed.push(format!(
                            "{program}: {:#010x} {} {}",
                            inst.word, inst.mnemonic, inst.operands
                        ));
                    }
                    registers_checked += 1;
                }
            }
        }
    }
    assert!(checked > 100, "only {checked} branches checked");
    assert!(
        registers_checked > 1000,
        "only {registers_checked} instructions checked"
    );
    assert!(
        missed.is_empty(),
        "registers objdump shows but the decoder misses:\n{}",
        missed.join("\n")
    );
}

/// The registers named in objdump's operand text (without a PC-relative
/// target, whose hex address could look like `b4`).
fn registers_in(operands: &str, pc_relative: bool) -> u128 {
    let text = operands.split("//").next().unwrap_or("");
    let text = text.split('<').next().unwrap_or("");
    let text = if pc_relative {
        text.rsplit_once(',').map_or("", |(regs, _)| regs)
    } else {
        text
    };
    let mut set = 0u128;
    for token in text.split(|c: char| !c.is_ascii_alphanumeric()) {
        set |= match token {
            "sp" | "wsp" => decode::SP,
            _ => {
                let (prefix, digits) = token.split_at(token.len().min(1));
                match (prefix, digits.parse::<u32>()) {
                    ("x" | "w", Ok(n)) if n <= 30 => decode::x(n),
                    ("v" | "q" | "d" | "s" | "h" | "b", Ok(n)) if n < 32 => decode::v(n),
                    _ => 0,
                }
            }
        };
    }
    set
}

/// Links `objects` and runs the result under qemu; returns stdout and size.
fn link_and_run(objects: &[CompiledObject], dir: &Path, name: &str) -> (String, u64) {
    let sub = dir.join(name);
    std::fs::create_dir_all(&sub).unwrap();
    let paths = parec::commands::write_object_files(&sub, objects).unwrap();
    let exe = sub.join("a.out");
    let options = parec::link::LinkOptions {
        target: Target::Aarch64,
        icf: parec::link::Icf::All,
        runtime: parec::link::runtime_of_objects(&paths).unwrap(),
        strip: false,
    };
    parec::link::link_executable(&paths, &exe, &options).unwrap();
    let out = Command::new("qemu-aarch64-static")
        .arg(&exe)
        .output()
        .expect("qemu-aarch64-static runs");
    assert!(out.status.success(), "{name} failed under qemu");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        text_size(&exe),
    )
}

/// Two-round global outlining ([GFO], [GFM] §2.2 in docs/DESIGN.md) on every multi-module program:
/// round 1 publishes the outlined sequences of every module, round 2
/// outlines single local occurrences that the combined tree has. The programs
/// still print what they should, and round 2 does outline by the tree.
/// `--nocapture` shows each program's linked `.text` (minus an empty
/// program's) after local and after two-round outlining.
#[test]
fn two_round_global_outlining_keeps_programs_correct() {
    let tmp = tempfile::tempdir().unwrap();
    let opts = codegen_options(OptLevel::Oz, true);
    let empty = tmp.path().join("empty.pare");
    std::fs::write(&empty, "fn main() {\n}\n").unwrap();
    let empty_objects =
        codegen::compile_all(&modules_of(&empty, OptLevel::Oz), &opts, None).unwrap();
    let (_, empty_size) = link_and_run(&empty_objects, tmp.path(), "empty");
    let mut programs: Vec<PathBuf> = corpus()
        .into_iter()
        .filter(|p| p.ends_with("main.pare"))
        .map(|p| p.parent().unwrap().to_path_buf())
        .collect();
    programs.sort();
    let (mut by_tree, mut local_total, mut global_total) = (0, 0, 0);
    for dir in programs {
        let program = dir
            .strip_prefix(workspace_root())
            .unwrap()
            .display()
            .to_string();
        let expected = std::fs::read_to_string(dir.join("expected.out")).unwrap();
        let modules = modules_of(&dir.join("main.pare"), OptLevel::Oz);
        let round1 = codegen::compile_all(&modules, &opts, None).unwrap();
        let tree = codegen::combined_outline_tree(&round1);
        let round2 =
            codegen::compile_all(&modules, &opts, Some(std::sync::Arc::new(tree))).unwrap();
        let stats: Vec<_> = round2.iter().filter_map(|o| o.outline.clone()).collect();
        by_tree += stats.iter().map(|s| s.global_sequences).sum::<usize>();
        let name = program.replace('/', "_");
        let (out1, size1) = link_and_run(&round1, tmp.path(), &format!("{name}_1"));
        let (out2, size2) = link_and_run(&round2, tmp.path(), &format!("{name}_2"));
        assert_eq!(out1, expected, "{program} round 1");
        assert_eq!(out2, expected, "{program} round 2");
        let (local, global) = (size1 - empty_size, size2 - empty_size);
        eprintln!("{program:24} local {local:7} global {global:7}");
        local_total += local;
        global_total += global;
    }
    eprintln!(
        "{:24} local {local_total:7} global {global_total:7}",
        "TOTAL"
    );
    assert!(by_tree > 0, "round 2 outlined nothing by the tree");
}

/// `parec build --outline-stats` reports every module and a total; `-O2`
/// does not run the outliner.
#[test]
fn build_reports_outline_statistics() {
    let tmp = tempfile::tempdir().unwrap();
    let program = workspace_root().join("bench/graph/main.pare");
    let run = |level: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_parec"))
            .args(["build", level, "--outline-stats", "--emit", "obj", "-o"])
            .arg(tmp.path().join(level))
            .arg(&program)
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let oz = run("-Oz");
    assert!(oz.contains("outline: graph: "), "{oz}");
    let total = oz.lines().last().unwrap();
    assert!(total.starts_with("outline: total: "), "{oz}");
    assert!(!total.contains(" 0 sequences replaced"), "{oz}");
    let o2 = run("-O2");
    assert!(o2.contains("outline: graph: not run"), "{o2}");
}

/// The names an object's `.llvm_addrsig` section lists.
fn address_significant(bytes: &[u8]) -> std::collections::BTreeSet<String> {
    use ::object::{Object as _, ObjectSection as _, ObjectSymbol as _};
    let file = ::object::File::parse(bytes).unwrap();
    let section = file
        .section_by_name(object::ADDRSIG_SECTION)
        .expect("an address-significance section");
    let indices = object::read_uleb128_list(section.data().unwrap()).unwrap();
    indices
        .into_iter()
        .map(|i| {
            let sym = file
                .symbol_by_index(::object::SymbolIndex(i as usize))
                .unwrap();
            sym.name().unwrap().to_string()
        })
        .collect()
}

/// Outlining keeps `.llvm_addrsig` right: the same symbols are address
/// significant with and without it, and outlined functions (only ever
/// called) are not.
#[test]
fn address_significance_survives_outlining() {
    let mut nonempty = 0;
    for program in [
        "bench/generic_zoo/main.pare",
        "bench/lisp/main.pare",
        "bench/vm/main.pare",
    ] {
        // Everything -Oz runs, with and without the outliner (merging takes
        // addresses: a thunk passes its callees to the body).
        let modules = modules_of(&workspace_root().join(program), OptLevel::Oz);
        let mut without = codegen_options(OptLevel::Oz, true);
        without.machine.clear();
        let plain = codegen::compile_all(&modules, &without, None).unwrap();
        let outlined =
            codegen::compile_all(&modules, &codegen_options(OptLevel::Oz, true), None).unwrap();
        for (a, b) in plain.iter().zip(&outlined) {
            let (sa, sb) = (address_significant(&a.bytes), address_significant(&b.bytes));
            assert_eq!(sa, sb, "{program} {}", a.name);
            assert!(sb.iter().all(|n| !n.starts_with("OUTLINED_FUNCTION_")));
            nonempty += usize::from(!sa.is_empty());
        }
    }
    assert!(nonempty > 0, "no address-significant symbol anywhere");
}
