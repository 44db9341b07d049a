//! End-to-end tests of the `parec` binary on CLIF programs (no Pare frontend
//! needed): JIT, AOT under qemu, objects (sections, `.llvm_addrsig`),
//! determinism, `parec opt`, and error handling.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use object::{Object as _, ObjectSection as _, ObjectSymbol as _};

mod support;
use support::{object_files, parec, run};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn jit_runs_main_with_putchar() {
    let o = run(parec().arg("run").arg(data("hello.clif")));
    assert_eq!(stdout(&o), "Hi\n", "stderr: {}", stderr(&o));
    assert_eq!(o.status.code(), Some(3));
}

#[test]
fn jit_links_several_modules() {
    let o = run(parec()
        .arg("run")
        .arg(data("two_main.clif"))
        .arg(data("two_lib.clif")));
    assert_eq!(stdout(&o), "B\n", "stderr: {}", stderr(&o));
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn aot_aarch64_runs_under_qemu() {
    let dir = tempfile::tempdir().unwrap();
    for (files, expected, status) in [
        (vec![data("hello.clif")], "Hi\n", 3),
        (vec![data("two_main.clif"), data("two_lib.clif")], "B\n", 0),
    ] {
        let exe = dir.path().join("prog");
        let o = run(parec().arg("build").args(&files).arg("-o").arg(&exe));
        assert!(o.status.success(), "build failed: {}", stderr(&o));
        let o = run(Command::new("qemu-aarch64-static").arg(&exe));
        assert_eq!(stdout(&o), expected);
        assert_eq!(o.status.code(), Some(status));
    }
}

#[test]
fn aot_x86_64_runs_natively() {
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("prog");
    let o = run(parec()
        .arg("build")
        .arg(data("hello.clif"))
        .args(["--target", "x86_64-unknown-linux-gnu", "-o"])
        .arg(&exe));
    assert!(o.status.success(), "build failed: {}", stderr(&o));
    let o = run(&mut Command::new(&exe));
    assert_eq!(stdout(&o), "Hi\n");
    assert_eq!(o.status.code(), Some(3));
}

fn build_objects(dir: &Path, files: &[PathBuf], extra: &[&str]) -> Vec<(String, Vec<u8>)> {
    let o = run(parec()
        .arg("build")
        .args(files)
        .args(["--emit", "obj"])
        .args(extra)
        .arg("-o")
        .arg(dir));
    assert!(o.status.success(), "build failed: {}", stderr(&o));
    object_files(dir)
}

#[test]
fn objects_have_one_section_per_function_and_addrsig() {
    let dir = tempfile::tempdir().unwrap();
    // With the C library: the file's module alone (a freestanding build
    // adds the runtime's object).
    let objs = build_objects(dir.path(), &[data("hello.clif")], &["--runtime", "libc"]);
    assert_eq!(objs.len(), 1);
    let file = object::File::parse(&*objs[0].1).unwrap();

    // Every function symbol sits alone in its own section.
    let funcs: Vec<_> = file
        .symbols()
        .filter(|s| s.kind() == object::SymbolKind::Text && s.is_definition())
        .collect();
    let names: Vec<&str> = funcs.iter().map(|s| s.name().unwrap()).collect();
    assert_eq!(names, ["emit", "emit2", "main"]);
    let mut sections: Vec<_> = funcs.iter().map(|s| s.section_index().unwrap()).collect();
    sections.dedup();
    assert_eq!(sections.len(), funcs.len());
    for s in &funcs {
        assert_eq!(s.address(), 0);
        let section = file.section_by_index(s.section_index().unwrap()).unwrap();
        assert_eq!(section.size(), s.size());
    }

    // `.llvm_addrsig`: type SHT_LLVM_ADDRSIG, linked to .symtab, listing the
    // address-taken `emit2` (func_addr) but not `emit` (only called).
    let addrsig = file
        .section_by_name(parec::object::ADDRSIG_SECTION)
        .expect("no .llvm_addrsig");
    let object::SectionFlags::Elf { sh_flags } = addrsig.flags() else {
        panic!("not ELF")
    };
    assert_eq!(sh_flags, u64::from(object::elf::SHF_EXCLUDE));
    let indices = parec::object::read_uleb128_list(addrsig.data().unwrap()).unwrap();
    let significant: Vec<String> = indices
        .iter()
        .map(|&i| {
            file.symbol_by_index(object::SymbolIndex(i as usize))
                .unwrap()
                .name()
                .unwrap()
                .to_string()
        })
        .collect();
    assert!(
        significant.contains(&"emit2".to_string()),
        "{significant:?}"
    );
    assert!(
        !significant.contains(&"emit".to_string()),
        "{significant:?}"
    );
    assert!(
        !significant.contains(&"main".to_string()),
        "{significant:?}"
    );

    let elf = object::read::elf::ElfFile64::<object::Endianness>::parse(&*objs[0].1).unwrap();
    let symtab = elf
        .sections()
        .find(|s| s.name() == Ok(".symtab"))
        .unwrap()
        .index()
        .0 as u32;
    let header = elf.section_by_name(".llvm_addrsig").unwrap();
    let header = header.elf_section_header();
    assert_eq!(
        header.sh_type.get(object::Endianness::Little),
        parec::object::SHT_LLVM_ADDRSIG
    );
    assert_eq!(header.sh_link.get(object::Endianness::Little), symtab);
}

#[test]
fn pare_objects_are_deterministic_across_runs_and_job_counts() {
    // A multi-module program with generic instances shared across modules.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/modsort/main.pare");
    let (a, b, c) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let files = [root];
    let one = build_objects(a.path(), &files, &["-j", "1"]);
    let two = build_objects(b.path(), &files, &["-j", "2"]);
    let again = build_objects(c.path(), &files, &["-j", "2"]);
    assert_eq!(one.len(), 5, "one object per module plus the runtime");
    assert_eq!(one, two);
    assert_eq!(two, again);
}

#[test]
fn objects_are_deterministic_across_job_counts() {
    let files = [
        data("two_main.clif"),
        data("two_lib.clif"),
        data("hello.clif"),
    ];
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let c = tempfile::tempdir().unwrap();
    let one = build_objects(a.path(), &files, &["-j", "1"]);
    let two = build_objects(b.path(), &files, &["-j", "2"]);
    let again = build_objects(c.path(), &files, &["-j", "2"]);
    // The three modules and the freestanding runtime's (they call only
    // `putchar`, which it defines).
    assert_eq!(one.len(), 4);
    assert_eq!(one, two);
    assert_eq!(two, again);
}

#[test]
fn emit_asm_lists_functions_and_relocations() {
    // A small program gets the tiny code model (`adr`) unless asked for
    // the small one (`adrp`+`add`). `-Oz`: `main` keeps its calls of
    // `emit` (at `-Os` the size model, which does not price the literal
    // that reaches a non-colocated `putchar`, inlines them).
    for (model, address) in [
        (None, "R_AARCH64_ADR_PREL_LO21 emit2"),
        (Some("tiny"), "R_AARCH64_ADR_PREL_LO21 emit2"),
        (Some("small"), "R_AARCH64_ADR_PREL_PG_HI21 emit2"),
    ] {
        let mut cmd = parec();
        cmd.arg("build")
            .arg(data("hello.clif"))
            .args(["-Oz", "--emit", "asm"]);
        if let Some(model) = model {
            cmd.arg(format!("--code-model={model}"));
        }
        let o = run(&mut cmd);
        assert!(o.status.success(), "{}", stderr(&o));
        let text = stdout(&o);
        for needle in [
            "emit:",
            "emit2:",
            "main:",
            "bl ",
            "R_AARCH64_CALL26 emit",
            address,
        ] {
            assert!(
                text.contains(needle),
                "{model:?}: `{needle}` missing from:\n{text}"
            );
        }
    }
}

#[test]
fn emit_clif_prints_functions() {
    let o = run(parec()
        .arg("build")
        .arg(data("hello.clif"))
        .args(["--emit", "clif", "-O0"]));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("function %main() -> i32 system_v"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn emit_obj_refuses_to_overwrite_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("out");
    std::fs::write(&file, "x").unwrap();
    let o = run(parec()
        .arg("build")
        .arg(data("hello.clif"))
        .args(["--emit", "obj", "-o"])
        .arg(&file));
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("is not a directory"), "{}", stderr(&o));
}

#[test]
fn opt_run_agrees_without_passes() {
    let o = run(parec()
        .arg("opt")
        .arg(data("arith.clif"))
        .args(["--run", "--stats", "--passes", ""]));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("function %add3(i32) -> i32"),
        "{}",
        stdout(&o)
    );
    assert!(stdout(&o).contains("fn0 = %add sig0"), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("4 run command(s) agree"),
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("%loop"), "{}", stderr(&o));
}

#[test]
fn opt_run_reports_a_failing_run_line() {
    let o = run(parec().arg("opt").arg(data("wrong.clif")).arg("--run"));
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains("%add(1, 2)") && err.contains("returned [3]"),
        "{err}"
    );
}

#[test]
fn opt_rejects_unknown_passes() {
    let o = run(parec()
        .arg("opt")
        .arg(data("arith.clif"))
        .args(["--passes", "gvn,frobnicate"]));
    // A bad flag: clap's status and message.
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).starts_with("error: invalid value 'gvn,frobnicate' for '--passes <PASSES>': unknown pass `frobnicate`; available: inline, gvn, merge, fmerge, combine, switches, ifconv, peephole, copyprop, frame, sibcall, epilogue, outline, inline-speed, gvn-speed, ifconv-speed\n"),
        "{}",
        stderr(&o)
    );
}

/// `parec opt --passes PASS --run --stats` on every `.clif` file of
/// `filetests/DIR`: each must exit 0; their paths and standard errors.
fn opt_on_filetests(dir: &str, pass: &str) -> Vec<(PathBuf, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../filetests")
        .join(dir);
    let mut outputs = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "clif") {
            continue;
        }
        let o = run(parec()
            .arg("opt")
            .arg(&path)
            .args(["--passes", pass, "--run", "--stats"]));
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}: {}",
            path.display(),
            stderr(&o)
        );
        outputs.push((path, stderr(&o)));
    }
    outputs
}

#[test]
fn opt_runs_gvn_on_every_filetest() {
    let outputs = opt_on_filetests("gvn", "gvn");
    for (path, err) in &outputs {
        assert!(
            err.contains("gvn: values numbered"),
            "{}: no GVN statistics",
            path.display()
        );
    }
    let count = outputs.len();
    assert!(count >= 40, "only {count} GVN filetests");
}

#[test]
fn opt_runs_ifconv_on_its_filetests() {
    let mut converted = 0;
    for (path, err) in opt_on_filetests("ifconv", "ifconv") {
        assert!(err.contains("run command(s) agree"), "{err}");
        let stats = err
            .lines()
            .find(|l| l.starts_with("ifconv: "))
            .unwrap_or_else(|| panic!("{}: no ifconv statistics", path.display()));
        converted += stats
            .split(' ')
            .nth(1)
            .and_then(|w| w.parse::<u64>().ok())
            .expect("diamonds first");
    }
    assert!(converted > 0, "ifconv converted none of its filetests");
}

#[test]
fn opt_runs_combine_on_its_filetests() {
    let mut rewrites = 0;
    for (path, err) in opt_on_filetests("combine", "combine") {
        assert!(err.contains("run command(s) agree"), "{err}");
        let stats = err
            .lines()
            .find(|l| l.starts_with("combine: "))
            .map(str::to_string)
            .unwrap_or_else(|| panic!("{}: no combine statistics", path.display()));
        rewrites += stats
            .split(' ')
            .filter_map(|w| w.parse::<u64>().ok())
            .sum::<u64>();
    }
    assert!(rewrites > 0, "combine changed none of its filetests");
}

#[test]
fn opt_runs_switches_on_its_filetests() {
    let mut lowered = 0;
    for (path, err) in opt_on_filetests("switches", "switches") {
        assert!(err.contains("run command(s) agree"), "{err}");
        let stats = err
            .lines()
            .find(|l| l.starts_with("switches: "))
            .map(str::to_string)
            .unwrap_or_else(|| panic!("{}: no switches statistics", path.display()));
        lowered += stats
            .split(' ')
            .filter_map(|w| w.trim_end_matches(',').parse::<u64>().ok())
            .sum::<u64>();
    }
    assert!(lowered > 0, "switches changed none of its filetests");
}

#[test]
fn errors_exit_cleanly() {
    let o = run(parec().args(["run", "does-not-exist.clif"]));
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        "error: cannot read `does-not-exist.clif`: No such file or directory\n"
    );

    let o = run(parec().args(["build", "--no-such-flag"]));
    assert_eq!(o.status.code(), Some(2));

    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.clif");
    std::fs::write(
        &bad,
        "function %main() -> i32 system_v {\nblock0:\n  v0 = bogus\n}\n",
    )
    .unwrap();
    let o = run(parec().arg("run").arg(&bad));
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).starts_with("error: "), "{}", stderr(&o));

    // An import that nothing defines is an error, not a JIT panic.
    let undefined = dir.path().join("undef.clif");
    std::fs::write(
        &undefined,
        "function %main() -> i32 system_v {\n    fn0 = %no_such_function_anywhere() -> i32 system_v\nblock0:\n    v0 = call fn0()\n    return v0\n}\n",
    )
    .unwrap();
    let o = run(parec().arg("run").arg(&undefined));
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("undefined symbol `no_such_function_anywhere`"),
        "{}",
        stderr(&o)
    );
}

/// Cross-module flags without a pass that uses them are bad flags: status
/// 2, before anything is read (it was 1, a compile error), in every
/// command that takes them.
#[test]
fn cross_module_flags_without_their_passes_are_bad_flags() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("m.pare"), "fn main() { print(1); }\n").unwrap();
    let compile = [
        "compile", "m.pare", "--module", "m", "--plan", "p.plan", "-o", "m.o",
    ];
    for args in [
        vec!["build", "m.pare", "-o", "x", "-O0", "--two-rounds"],
        vec![
            "build",
            "m.pare",
            "-o",
            "x",
            "-O2",
            "--cgdata-generate",
            "a.cg",
        ],
        vec!["build", "m.pare", "-o", "x", "-O2", "--cgdata-use", "a.cg"],
        vec![
            "build",
            "m.pare",
            "-o",
            "x",
            "--passes",
            "gvn",
            "--two-rounds",
        ],
        vec!["plan", "m.pare", "-o", "p.plan", "-O0", "--two-rounds"],
        vec!["ninja", "m.pare", "-o", "b.ninja", "-O2", "--two-rounds"],
        [&compile[..], &["-O0", "--cgdata-generate", "m.cg"]].concat(),
        vec!["build", "m.pare", "-o", "x", "--passes", "gvn,nonsense"],
    ] {
        let o = run(parec().current_dir(d).args(&args));
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).starts_with("error: "),
            "{args:?}: {}",
            stderr(&o)
        );
    }
    assert_eq!(
        std::fs::read_dir(d).unwrap().count(),
        1,
        "something was written"
    );
}

/// Linked addresses of the `twin*` functions of `icf.clif` under an ICF mode
/// (linked with the C library: with `--gc-sections`, as freestanding
/// executables are linked, lld leaves the global symbols of folded
/// functions out of the symbol table).
fn twin_addresses(icf: &str) -> Vec<u64> {
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("icf");
    let o = run(parec()
        .arg("build")
        .arg(data("icf.clif"))
        .args(["--icf", icf, "--runtime", "libc", "-o"])
        .arg(&exe));
    assert!(o.status.success(), "build failed: {}", stderr(&o));
    let o = run(Command::new("qemu-aarch64-static").arg(&exe));
    assert_eq!(stdout(&o), "ABC\n");
    let bytes = std::fs::read(&exe).unwrap();
    let file = object::File::parse(&*bytes).unwrap();
    ["twin1", "twin2", "twin3"]
        .iter()
        .map(|name| {
            file.symbols()
                .find(|s| s.name() == Ok(name))
                .unwrap()
                .address()
        })
        .collect()
}

#[test]
fn icf_modes_fold_as_the_addrsig_section_allows() {
    // all: every identical body folds.
    let a = twin_addresses("all");
    assert!(a[0] == a[1] && a[1] == a[2], "{a:x?}");
    // safe: twin2 is address-significant (func_addr), so only twin1/twin3 fold.
    let s = twin_addresses("safe");
    assert!(s[0] == s[2] && s[0] != s[1], "{s:x?}");
    // none: nothing folds.
    let n = twin_addresses("none");
    assert!(n[0] != n[1] && n[1] != n[2] && n[0] != n[2], "{n:x?}");
}

/// The differential tester's planted miscompile is not a pass of the
/// compiler: only `parec-tools` knows it.
#[test]
fn planted_miscompile_is_not_a_parec_pass() {
    let o = run(parec()
        .args(["run", "--passes", "planted-iadd-isub"])
        .arg(data("arith.clif")));
    assert_eq!(o.status.code(), Some(2), "stderr: {}", stderr(&o));
    assert!(
        stderr(&o)
            .contains("unknown pass `planted-iadd-isub`; available: inline, gvn, merge, fmerge, combine, switches, ifconv, peephole, copyprop, frame, sibcall, epilogue, outline, inline-speed, gvn-speed, ifconv-speed"),
        "stderr: {}",
        stderr(&o)
    );
}

/// `parec fuzz` and `parec bench` run `parec-tools` from parec's own
/// directory with the same arguments and exit with its status; without it,
/// they say how to build it.
#[test]
fn fuzz_and_bench_forward_to_parec_tools() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("parec");
    std::fs::copy(env!("CARGO_BIN_EXE_parec"), &copy).unwrap();

    let alone = run(Command::new(&copy)
        .args(["bench", "--quick"])
        .env("PATH", ""));
    assert_eq!(alone.status.code(), Some(1));
    assert!(
        stderr(&alone).contains("cargo build --release -p parec-tools"),
        "stderr: {}",
        stderr(&alone)
    );

    let log = dir.path().join("args");
    let tools = dir.path().join("parec-tools");
    std::fs::write(
        &tools,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$@\" > '{}'\nexit 3\n",
            log.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&tools, std::fs::Permissions::from_mode(0o755)).unwrap();
    for (command, args) in [
        ("fuzz", &["--seed", "5", "--configs", "Oz"][..]),
        ("bench", &["--quick", "--filter", "a,b", "--help"][..]),
    ] {
        let o = run(Command::new(&copy).arg(command).args(args));
        assert_eq!(o.status.code(), Some(3), "stderr: {}", stderr(&o));
        let seen = std::fs::read_to_string(&log).unwrap();
        let mut expected = vec![command];
        expected.extend(args);
        assert_eq!(seen.lines().collect::<Vec<_>>(), expected);
    }
}

/// The file `parec build -s` writes for `examples/hello.pare` (at most
/// 2 KiB on aarch64: issue 30) and what it prints, for both targets; the
/// layout of freestanding executables: code and read-only data in one
/// read-only, executable segment, data in one writable one, never both,
/// a stack that is not executable, no interpreter, no `.comment`, notes or
/// `.eh_frame`, the entry at `_start`; `-s` drops the symbol tables.
#[test]
fn freestanding_executables_are_small_and_never_writable_and_executable() {
    let root = support::workspace_root();
    let hello = root.join("examples/hello.pare");
    let expected = std::fs::read_to_string(root.join("examples/hello.out")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for (target, limit) in [("aarch64", 2048), ("x86_64", 2560)] {
        let triple = format!("{target}-unknown-linux-gnu");
        let [full, stripped] = ["", "-s"].map(|strip| {
            let exe = dir.path().join(format!("hello-{target}{strip}"));
            let o = run(parec()
                .arg("build")
                .arg(&hello)
                .args(["--target", &triple, "-o"])
                .arg(&exe)
                .args((!strip.is_empty()).then_some(strip)));
            assert!(o.status.success(), "{target}: {}", stderr(&o));
            exe
        });
        let size = std::fs::metadata(&stripped).unwrap().len();
        assert!(size <= limit, "{target}: hello is {size} bytes");
        for exe in [&full, &stripped] {
            let o = match target {
                "aarch64" => run(Command::new("qemu-aarch64-static").arg(exe)),
                _ => run(&mut Command::new(exe)),
            };
            assert_eq!(stdout(&o), expected, "{target}");
            assert_eq!(o.status.code(), Some(0));
        }
        let bytes = std::fs::read(&full).unwrap();
        let file = object::File::parse(&*bytes).unwrap();
        let entry = file
            .symbols()
            .find(|s| s.name() == Ok("_start"))
            .expect("_start");
        assert_eq!(file.entry(), entry.address(), "{target}");
        assert!(file.symbols().any(|s| s.name() == Ok("pare_syscall")));
        check_freestanding_layout(&bytes, target);
        let bytes = std::fs::read(&stripped).unwrap();
        check_freestanding_layout(&bytes, target);
        let file = object::File::parse(&*bytes).unwrap();
        assert!(
            file.section_by_name(".symtab").is_none(),
            "{target}: -s keeps symbols"
        );
    }
}

/// See [`freestanding_executables_are_small_and_never_writable_and_executable`].
fn check_freestanding_layout(bytes: &[u8], target: &str) {
    use object::elf;
    use object::read::elf::{FileHeader as _, ProgramHeader as _};
    let header = elf::FileHeader64::<object::Endianness>::parse(bytes).unwrap();
    let endian = header.endian().unwrap();
    let mut loads = Vec::new();
    let mut stack = None;
    for ph in header.program_headers(endian, bytes).unwrap() {
        let flags = ph.p_flags(endian);
        match ph.p_type(endian) {
            elf::PT_LOAD => loads.push(flags),
            elf::PT_GNU_STACK => stack = Some(flags),
            other => panic!("{target}: program header of type {other:#x}"),
        }
    }
    let (w, x) = (elf::PF_W, elf::PF_X);
    assert!(
        loads.iter().all(|f| f & w == 0 || f & x == 0),
        "{target}: {loads:?}"
    );
    assert_eq!(loads.iter().filter(|&&f| f & x != 0).count(), 1, "{target}");
    assert!(loads.len() <= 2, "{target}: {loads:?}");
    assert_eq!(stack.map(|f| f & x), Some(0), "{target}: executable stack");
    let file = object::File::parse(bytes).unwrap();
    for section in file.sections() {
        let name = section.name().unwrap();
        assert!(
            !matches!(name, ".comment" | ".interp" | ".dynamic")
                && !name.starts_with(".note")
                && !name.starts_with(".eh_frame"),
            "{target}: section {name}"
        );
    }
}

/// A `.clif` program that needs no C library links freestanding: the
/// runtime joins it for its entry and exit (`main`'s status).
#[test]
fn clif_programs_without_imports_link_freestanding() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("status.clif");
    std::fs::write(
        &source,
        "function %main() -> i32 system_v {\nblock0:\n    v0 = iconst.i32 42\n    return v0\n}\n",
    )
    .unwrap();
    let exe = dir.path().join("status");
    let o = run(parec().arg("build").arg(&source).arg("-o").arg(&exe));
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(Command::new("qemu-aarch64-static").arg(&exe));
    assert_eq!(o.status.code(), Some(42));
    let bytes = std::fs::read(&exe).unwrap();
    let file = object::File::parse(&*bytes).unwrap();
    assert!(file.symbols().any(|s| s.name() == Ok("_start")));
}

/// `--runtime freestanding` for a program that calls a C function the
/// freestanding runtime does not define is an error naming the function
/// and where it is declared (or imported); `putchar` and the others it
/// defines need no C library (`hello.clif` calls `putchar`).
#[test]
fn freestanding_builds_of_programs_that_call_c_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("c.pare");
    std::fs::write(
        &source,
        "fn main() {\n    print(putchar(getpid()));\n}\nextern fn getpid() -> i32;\n\
         extern fn putchar(c: i32) -> i32;\n",
    )
    .unwrap();
    let clif = dir.path().join("c.clif");
    std::fs::write(
        &clif,
        "function %main() -> i32 system_v {\n    fn0 = %getpid() -> i32 system_v\n\
         block0:\n    v0 = call fn0()\n    return v0\n}\n",
    )
    .unwrap();
    for input in [source, clif] {
        let o = run(parec()
            .arg("build")
            .arg(&input)
            .args(["--runtime", "freestanding", "-o"])
            .arg(dir.path().join("exe")));
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(stderr(&o).contains("getpid"), "{}", stderr(&o));
        assert!(stderr(&o).contains("freestanding"), "{}", stderr(&o));
        assert!(!dir.path().join("exe").exists());
    }
    let exe = dir.path().join("hello");
    let o = run(parec()
        .arg("build")
        .arg(data("hello.clif"))
        .args(["--runtime", "freestanding", "-o"])
        .arg(&exe));
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(Command::new("qemu-aarch64-static").arg(&exe));
    assert_eq!(stdout(&o), "Hi\n");
    assert_eq!(o.status.code(), Some(3));
    let o = run(parec()
        .arg("build")
        .arg(dir.path().join("c.pare"))
        .args(["--runtime", "freestanding", "-o"])
        .arg(dir.path().join("exe")));
    assert!(stderr(&o).contains("c.pare:4:1"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("c.pare:5:1"), "{}", stderr(&o));
}

/// On a terminal the freestanding runtime writes each piece of output at
/// once (`pare_init` asks the kernel with `ioctl(TCGETS)`): a program that
/// prints a partial line and then runs on shows it while it runs. Its
/// stdout here is a pseudo-terminal; with a pipe or a file the line would
/// wait in the buffer until the program ends, which this one never does
/// (it is killed once the line has come, or after 60 seconds).
#[test]
fn freestanding_output_to_a_terminal_is_written_at_once() {
    use std::io::Read as _;
    use std::os::fd::{FromRawFd as _, OwnedFd};
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("spin.pare");
    std::fs::write(
        &source,
        "fn main() { print_str(\"ready\"); let mut i = 0; while i >= 0 { i = i + 1; } }\n",
    )
    .unwrap();
    for target in ["aarch64", "x86_64"] {
        let exe = dir.path().join(format!("spin-{target}"));
        let o = run(parec()
            .arg("build")
            .arg(&source)
            .args(["-O2", "--target", target, "-o"])
            .arg(&exe));
        assert!(o.status.success(), "{target}: {}", stderr(&o));
        // SAFETY: plain calls of the C library's pseudo-terminal functions;
        // each descriptor is owned by one `OwnedFd`, and `ptsname_r` writes
        // at most `name.len()` bytes.
        let (master, slave) = unsafe {
            let master = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
            assert!(master >= 0, "posix_openpt");
            assert_eq!(libc::grantpt(master), 0);
            assert_eq!(libc::unlockpt(master), 0);
            let mut name = [0 as libc::c_char; 128];
            assert_eq!(libc::ptsname_r(master, name.as_mut_ptr(), name.len()), 0);
            let slave = libc::open(name.as_ptr(), libc::O_RDWR | libc::O_NOCTTY);
            assert!(slave >= 0, "open the terminal");
            (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave))
        };
        let mut cmd = match target {
            "aarch64" => {
                let mut c = Command::new("qemu-aarch64-static");
                c.arg(&exe);
                c
            }
            _ => Command::new(&exe),
        };
        let mut child = cmd.stdout(slave).spawn().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut master = std::fs::File::from(master);
            let mut seen = Vec::new();
            let mut chunk = [0u8; 64];
            while !seen.ends_with(b"ready") {
                match master.read(&mut chunk) {
                    Ok(n) if n > 0 => seen.extend_from_slice(&chunk[..n]),
                    _ => break,
                }
            }
            let _ = tx.send(seen);
        });
        let seen = rx.recv_timeout(std::time::Duration::from_secs(60));
        let running = child.try_wait().unwrap().is_none();
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(seen.as_deref(), Ok(&b"ready"[..]), "{target}");
        assert!(running, "{target}: the program ended");
    }
}
