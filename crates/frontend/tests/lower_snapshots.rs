//! Snapshots of lowered CLIF (`func.display()`) for representative functions,
//! plus structural checks of `lower_module`: symbols, linkage, data objects,
//! determinism, and verification of everything lowered.

#[path = "lower_support.rs"]
mod support;

use cranelift_codegen::ir::TrapCode;
use pare_frontend::lower::{
    lower_module, lower_program, runtime_module, string_literal_name, verify_module, Arch,
    LowerConfig, Runtime, ENTRY_POINT,
};
use pare_frontend::tir::{ModuleId, Program};
use parec_passes::clif_module::{ClifModule, Linkage, SymbolKind};
use support::{check_src, snapshot_config};

const PROGRAM: &str = "
struct Pair { a: i64, b: i32, c: bool }
global total: i64 = 0;
global table: [i32; 3] = [1, -2, 3];
fn div(x: i64, y: i64) -> i64 { x / y }
fn rem(x: i32, y: i32) -> i32 { x % y }
fn udiv(x: u8, y: u8) -> u8 { x / y + x % 16u8 }
fn by_const(x: i64) -> i64 { x / 7 + x % -1 }
fn sum(n: i64) -> i64 {
    let mut s = 0;
    for i in 0..n { if i % 3 == 0 { continue; } s += i; }
    while s > 100 { s = s - 100; }
    s
}
fn get(a: [i32], i: u8) -> i32 { a[i] = a[i] + 1i32; a[i] }
fn pair(x: i64) -> Pair { new Pair { a: x, b: 2i32, c: x > 0 } }
fn swap(p: Pair) -> i64 { p.a = p.b as i64; p.a }
fn max<T>(a: T, b: T) -> T { if a > b { a } else { b } }
fn main() -> i32 {
    total = div(1, 2) + sum(10) + max(3, 4) + by_const(5) + udiv(9u8, 2u8) as i64;
    print(swap(pair(total)));
    print_str(\"bye\\n\");
    rem(7i32, 2i32) + get(new [i32; 3], 1u8) + table[0] + max<i32>(1i32, 2i32)
}
";

fn snapshot(module: &ClifModule, symbol: &str) -> String {
    let def = module
        .function(symbol)
        .unwrap_or_else(|| panic!("no function {symbol}"));
    def.func.display().to_string()
}

macro_rules! assert_clif {
    ($name:expr, $text:expr) => {
        insta::with_settings!({snapshot_path => "../../../snapshots/lower", prepend_module_to_snapshot => false}, {
            insta::assert_snapshot!($name, $text);
        });
    };
}

fn program() -> Program {
    check_src(&[("main", PROGRAM)])
}

#[test]
fn snapshots_of_lowered_functions() {
    let p = program();
    let m = lower_program(&p, &snapshot_config());
    verify_module(&m).unwrap();
    assert_clif!("div_i64", snapshot(&m, "main::div"));
    assert_clif!("rem_i32", snapshot(&m, "main::rem"));
    assert_clif!("div_rem_u8", snapshot(&m, "main::udiv"));
    assert_clif!("div_by_constants", snapshot(&m, "main::by_const"));
    assert_clif!("loops", snapshot(&m, "main::sum"));
    assert_clif!("array_index", snapshot(&m, "main::get"));
    assert_clif!("new_struct", snapshot(&m, "main::pair"));
    assert_clif!("field_store", snapshot(&m, "main::swap"));
    assert_clif!("generic_instance_i64", snapshot(&m, "main::max<i64>"));
    assert_clif!("main", snapshot(&m, "main"));
}

/// A condition is lowered for control flow: `&&`, `||` and `!` are
/// branches straight to the arms (no `i8` join value tested again), the
/// right operand runs only when it decides (its bounds check included), and
/// a constant condition jumps.
#[test]
fn snapshot_of_short_circuit_conditions() {
    let p = check_src(&[(
        "main",
        "fn find(xs: [i64], x: i64) -> i64 {
            let mut i = 0;
            while i < len(xs) && !(xs[i] == x || xs[i] < 0) { i += 1; }
            if true && i > 2 { i } else { -1 }
        }
        fn main() -> i32 { find(new [i64; 4], 1) as i32 }",
    )]);
    let m = lower_program(&p, &snapshot_config());
    verify_module(&m).unwrap();
    assert_clif!("short_circuit_conditions", snapshot(&m, "main::find"));
}

/// Under shared trap paths (aarch64 objects) a check is a branch to a
/// `trap` with its kind's code: no cold block calling `pare_trap`, no call at
/// all in `get` and `swap`; the runtime defines one tail-calling path per
/// kind. A division is the bare instruction: Cranelift's own division traps
/// are mapped to the division paths.
#[test]
fn snapshots_with_shared_trap_paths() {
    use pare_frontend::lower::{
        check_trap_code, trap_path_name, DivisionChecks, TrapLowering, CHECKED_KINDS,
    };
    let cfg = pare_frontend::lower::LowerConfig {
        traps: TrapLowering::SharedPaths {
            divisions: DivisionChecks::Instruction,
        },
        ..snapshot_config()
    };
    let m = lower_program(&program(), &cfg);
    verify_module(&m).unwrap();
    assert_clif!("shared_paths_div_i64", snapshot(&m, "main::div"));
    assert_clif!("shared_paths_rem_i32", snapshot(&m, "main::rem"));
    let paths = cfg.traps.shared_paths().unwrap().paths;
    for (code, kind) in [
        (TrapCode::INTEGER_DIVISION_BY_ZERO, "division_by_zero"),
        (TrapCode::INTEGER_OVERFLOW, "division_overflow"),
    ] {
        let path = format!("pare_trap_{kind}");
        assert!(paths.contains(&(code, path)), "{code} in {paths:?}");
    }
    assert_clif!("shared_paths_array_index", snapshot(&m, "main::get"));
    for symbol in ["main::div", "main::get", "main::swap"] {
        let text = snapshot(&m, symbol);
        assert!(!text.contains("call"), "{symbol} calls:\n{text}");
    }
    let rt = runtime_module(&cfg);
    verify_module(&rt).unwrap();
    for kind in CHECKED_KINDS {
        let name = trap_path_name(kind);
        let def = rt.function(&name).unwrap_or_else(|| panic!("no {name}"));
        let sym = &rt.symbols[def.symbol as usize];
        assert_eq!(sym.linkage, Linkage::Export, "{name}");
        let text = def.func.display().to_string();
        assert!(text.contains("return_call"), "{name}:\n{text}");
        // Apart from `user(1)`, the trap after a call that never returns.
        let after_noreturn = cranelift_codegen::ir::TrapCode::unwrap_user(1);
        assert_ne!(check_trap_code(kind), after_noreturn);
    }
    assert_clif!(
        "shared_paths_runtime_null",
        snapshot(&rt, "pare_trap_null_dereference")
    );
    // Calls keep the old lowering and define no paths.
    assert!(runtime_module(&snapshot_config())
        .function("pare_trap_null_dereference")
        .is_none());
}

#[test]
fn snapshots_of_the_runtime() {
    let rt = runtime_module(&snapshot_config());
    verify_module(&rt).unwrap();
    assert_clif!("runtime_print_i64", snapshot(&rt, "pare_print_i64"));
    assert_clif!("runtime_new_array", snapshot(&rt, "pare_new_array"));
    assert_clif!("runtime_trap", snapshot(&rt, "pare_trap"));
    assert_clif!("runtime_init", snapshot(&rt, "pare_init"));
    assert_clif!("runtime_on_fault", snapshot(&rt, "pare_on_fault"));
}

#[test]
fn runtime_symbols() {
    let rt = runtime_module(&snapshot_config());
    for name in [
        "pare_print_i64",
        "pare_print_bool",
        "pare_print_str",
        "pare_new_array",
        "pare_alloc",
        "pare_trap",
        "pare_exit",
        "pare_init",
    ] {
        let s = &rt.symbols[rt.symbol_index(name).unwrap() as usize];
        assert_eq!(s.linkage, Linkage::Export, "{name}");
        assert!(rt.function(name).is_some());
    }
    let handler = &rt.symbols[rt.symbol_index("pare_on_fault").unwrap() as usize];
    assert_eq!(handler.linkage, Linkage::Local);
    assert!(rt.function("pare_on_fault").is_some());
    for name in [
        "fwrite",
        "fflush",
        "calloc",
        "exit",
        "sigaltstack",
        "sigaction",
        "stdout",
        "stderr",
    ] {
        let s = &rt.symbols[rt.symbol_index(name).unwrap() as usize];
        assert_eq!(s.linkage, Linkage::Import, "{name}");
    }
    assert!(matches!(
        rt.symbols[rt.symbol_index("stdout").unwrap() as usize].kind,
        SymbolKind::Data { .. }
    ));
}

/// The freestanding runtime imports only `main` (which `_start`
/// calls): no C library. Its system-call primitive, `write` loop, exit and
/// entry point are machine code for the target, its other helpers local
/// CLIF functions.
#[test]
fn freestanding_runtime_symbols() {
    for (arch, raw) in [
        (
            Arch::Aarch64,
            vec!["pare_syscall", "pare_write", "pare_exit_group", "_start"],
        ),
        (
            Arch::X86_64,
            vec![
                "pare_syscall",
                "pare_write",
                "pare_exit_group",
                "_start",
                "pare_sigreturn",
            ],
        ),
    ] {
        let cfg = LowerConfig {
            arch,
            runtime: Runtime::Freestanding,
            ..snapshot_config()
        };
        let rt = runtime_module(&cfg);
        verify_module(&rt).unwrap();
        let imports: Vec<&str> = rt
            .symbols
            .iter()
            .filter(|s| s.linkage == Linkage::Import)
            .map(|s| s.name.as_str())
            .collect();
        assert_eq!(imports, ["main"], "{arch:?}");
        let defined: Vec<&str> = rt
            .raw_functions
            .iter()
            .map(|f| rt.symbols[f.symbol as usize].name.as_str())
            .collect();
        assert_eq!(defined, raw, "{arch:?}");
        let start = &rt.symbols[rt.symbol_index(ENTRY_POINT).unwrap() as usize];
        assert_eq!(start.linkage, Linkage::Export);
        for helper in [
            "pare_write",
            "pare_out",
            "pare_map",
            "pare_syscall",
            "pare_exit_group",
        ] {
            let s = &rt.symbols[rt.symbol_index(helper).unwrap() as usize];
            assert_eq!(s.linkage, Linkage::Local, "{helper}");
        }
        // Every relocation of the machine code names a call of `main` or
        // `pare_exit` inside its bytes.
        for f in &rt.raw_functions {
            for r in &f.relocs {
                assert!((r.offset as usize) < f.bytes.len());
                let target = rt.symbols[r.target as usize].name.as_str();
                assert!(["main", "pare_exit"].contains(&target), "{target}");
            }
        }
    }
}

#[test]
fn snapshots_of_the_freestanding_runtime() {
    let cfg = LowerConfig {
        runtime: Runtime::Freestanding,
        ..snapshot_config()
    };
    let rt = runtime_module(&cfg);
    assert_clif!("freestanding_out", snapshot(&rt, "pare_out"));
    assert_clif!("freestanding_flush", snapshot(&rt, "pare_flush"));
    assert_clif!("freestanding_alloc", snapshot(&rt, "pare_alloc"));
    assert_clif!("freestanding_init", snapshot(&rt, "pare_init"));
    assert_clif!("freestanding_trap", snapshot(&rt, "pare_trap"));
}

/// The symbol table as `linkage name` lines, in order.
fn symbol_lines(m: &ClifModule) -> Vec<String> {
    m.symbols
        .iter()
        .map(|s| format!("{:?} {}", s.linkage, s.name))
        .collect()
}

#[test]
fn module_objects_define_their_own_functions_and_import_the_rest() {
    let p = check_src(&[
        (
            "main",
            "import util;
             extern fn putchar(c: i32) -> i32;
             fn main() { util::counter = util::twice<i64>(2); print(util::counter); putchar(10i32); print_str(\"x\"); }",
        ),
        (
            "util",
            "pub global counter: i64 = 1;
             global words: [u8; 2] = [104, 105];
             pub fn twice<T>(x: T) -> T { helper(); x + x }
             fn helper() { print_str(\"x\"); print(len(words)); }",
        ),
    ]);
    let cfg = snapshot_config();
    let main = lower_module(&p, ModuleId(0), &cfg);
    let util = lower_module(&p, ModuleId(1), &cfg);
    verify_module(&main).unwrap();
    verify_module(&util).unwrap();
    insta::with_settings!({snapshot_path => "../../../snapshots/lower", prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!("symbols_main", symbol_lines(&main).join("\n"));
        insta::assert_snapshot!("symbols_util", symbol_lines(&util).join("\n"));
    });
    // The instance is local in the object that uses it.
    let instance = main.symbol_index("util::twice<i64>").unwrap();
    assert_eq!(main.symbols[instance as usize].linkage, Linkage::Local);
    assert!(main.function("util::twice<i64>").is_some());
    // util's array global: the variable points at its local data block.
    let var = util.symbol_index("util::words").unwrap();
    let block = util.symbol_index("util::words.data").unwrap();
    let var_def = util.data.iter().find(|d| d.symbol == var).unwrap();
    assert_eq!(var_def.relocs.len(), 1);
    assert_eq!(var_def.relocs[0].target, block);
    let block_def = util.data.iter().find(|d| d.symbol == block).unwrap();
    assert_eq!(block_def.bytes, vec![2, 0, 0, 0, 0, 0, 0, 0, 104, 105]);
    // String literals: named by their contents, shared within a module and,
    // through weak linkage, with every other module that has them.
    let strings: Vec<_> = main
        .symbols
        .iter()
        .filter(|s| s.name.starts_with(".str."))
        .collect();
    assert_eq!(strings.len(), 1, "{:?}", symbol_lines(&main));
    assert_eq!(strings[0].linkage, Linkage::Weak);
    assert_eq!(strings[0].name, string_literal_name(b"x"));
    let in_util = util.symbol_index(&strings[0].name).expect("util's \"x\"");
    assert_eq!(util.symbols[in_util as usize].linkage, Linkage::Weak);
    assert_ne!(string_literal_name(b"x"), string_literal_name(b"y"));
}

#[test]
fn lowering_is_deterministic() {
    let p = program();
    let cfg = snapshot_config();
    let render = |m: &ClifModule| {
        let funcs: Vec<String> = m
            .functions
            .iter()
            .map(|f| f.func.display().to_string())
            .collect();
        (
            symbol_lines(m),
            funcs,
            m.data
                .iter()
                .map(|d| (d.symbol, d.bytes.clone()))
                .collect::<Vec<_>>(),
        )
    };
    let a = lower_program(&p, &cfg);
    let b = lower_program(&program(), &cfg);
    assert_eq!(render(&a), render(&b));
    let a = lower_module(&p, ModuleId(0), &cfg);
    let b = lower_module(&p, ModuleId(0), &cfg);
    assert_eq!(render(&a), render(&b));
}

/// Everything lowered compiles to machine code for both targets (aarch64 is
/// the AOT target; x86_64 the JIT host).
#[test]
fn compiles_for_aarch64_and_x86_64() {
    use cranelift_codegen::settings::{self, Configurable};
    let p = program();
    for triple in ["aarch64-unknown-linux-gnu", "x86_64-unknown-linux-gnu"] {
        let mut flags = settings::builder();
        flags.set("is_pic", "false").unwrap();
        let isa = cranelift_codegen::isa::lookup_by_name(triple)
            .unwrap()
            .finish(settings::Flags::new(flags))
            .unwrap();
        let arch = match triple {
            "aarch64-unknown-linux-gnu" => pare_frontend::lower::Arch::Aarch64,
            _ => pare_frontend::lower::Arch::X86_64,
        };
        for runtime in [Runtime::Libc, Runtime::Freestanding] {
            let cfg = pare_frontend::lower::LowerConfig {
                pointer_type: isa.pointer_type(),
                c_call_conv: isa.default_call_conv(),
                arch,
                traps: pare_frontend::lower::TrapLowering::for_objects(arch, false),
                runtime,
            };
            for m in [runtime_module(&cfg), lower_program(&p, &cfg)] {
                for def in &m.functions {
                    let mut ctx = cranelift_codegen::Context::for_function(def.func.clone());
                    let mut ctrl = cranelift_codegen::control::ControlPlane::default();
                    ctx.compile(&*isa, &mut ctrl).unwrap_or_else(|e| {
                        let name = &m.symbols[def.symbol as usize].name;
                        panic!("{triple} {runtime:?}: {name}: {e:?}")
                    });
                }
            }
        }
    }
}
