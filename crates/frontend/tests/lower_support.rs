//! Shared helpers of the lowering tests (included with `#[path]` by the
//! `lower_*` test files; as a test target of its own it has no tests):
//! checking Pare source into TIR, and JIT-compiling ClifModules and running
//! `main` in a forked child whose stdout/stderr are captured.

#![allow(dead_code)]

use std::io::Read;
use std::os::fd::FromRawFd;

use cranelift_codegen::ir::{self, ExternalName, GlobalValueData, UserExternalName};
use cranelift_codegen::isa::CallConv;
use cranelift_codegen::settings::{self, Configurable};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{DataDescription, FuncOrDataId, Module};
use pare_frontend::lower::{Arch, LowerConfig, Runtime, TrapLowering};
use pare_frontend::tir::Program;
use parec_passes::clif_module::{ClifModule, Linkage, SymbolKind};

/// The lowering configuration of the host (x86_64 System V in CI).
pub fn host_config() -> LowerConfig {
    let isa = host_isa();
    LowerConfig {
        pointer_type: isa.pointer_type(),
        c_call_conv: isa.default_call_conv(),
        arch: Arch::host().expect("a supported host"),
        traps: TrapLowering::Call,
        runtime: Runtime::Libc,
    }
}

/// A fixed configuration for snapshots, independent of the host.
pub fn snapshot_config() -> LowerConfig {
    LowerConfig {
        pointer_type: ir::types::I64,
        c_call_conv: CallConv::SystemV,
        arch: Arch::Aarch64,
        traps: TrapLowering::Call,
        runtime: Runtime::Libc,
    }
}

fn host_isa() -> std::sync::Arc<dyn cranelift_codegen::isa::TargetIsa> {
    let mut flags = settings::builder();
    flags.set("is_pic", "false").unwrap();
    flags.set("use_colocated_libcalls", "false").unwrap();
    cranelift_native::builder()
        .expect("host ISA")
        .finish(settings::Flags::new(flags))
        .expect("host ISA flags")
}

/// Parses and checks modules given as `(name, text)`; the first is the root.
pub fn check_src(mods: &[(&str, &str)]) -> Program {
    pare_frontend::check_texts(mods).unwrap_or_else(|errors| panic!("errors:\n{errors}"))
}

fn jit_linkage(l: Linkage) -> cranelift_module::Linkage {
    match l {
        Linkage::Import => cranelift_module::Linkage::Import,
        Linkage::Local => cranelift_module::Linkage::Local,
        Linkage::Export => cranelift_module::Linkage::Export,
        Linkage::Weak => cranelift_module::Linkage::Preemptible,
    }
}

/// A finalized JIT module and the address of its `main`.
pub struct Jit {
    _module: JITModule,
    main: *const u8,
}

/// What a run of `main` did.
#[derive(Debug, PartialEq, Eq)]
pub struct Outcome {
    pub status: i32,
    pub stdout: String,
    pub stderr: String,
}

/// The symbol a function-level name refers to, if any.
fn symbol_of(func: &ir::Function, name: &ExternalName) -> Option<u32> {
    ClifModule::symbol_of(func, name)
}

/// JIT-compiles `modules` (whose symbols must not clash) into one module.
pub fn jit(modules: &[&ClifModule]) -> Jit {
    let builder = JITBuilder::with_isa(host_isa(), cranelift_module::default_libcall_names());
    let mut jit = JITModule::new(builder);
    let ids: Vec<Vec<FuncOrDataId>> = modules
        .iter()
        .map(|m| {
            m.symbols
                .iter()
                .map(|s| match &s.kind {
                    SymbolKind::Function(sig) => FuncOrDataId::Func(
                        jit.declare_function(&s.name, jit_linkage(s.linkage), sig)
                            .unwrap_or_else(|e| panic!("{}: {e}", s.name)),
                    ),
                    SymbolKind::Data { writable } => FuncOrDataId::Data(
                        jit.declare_data(&s.name, jit_linkage(s.linkage), *writable, false)
                            .unwrap_or_else(|e| panic!("{}: {e}", s.name)),
                    ),
                })
                .collect()
        })
        .collect();
    for (m, ids) in modules.iter().zip(&ids) {
        for def in &m.functions {
            let mut func = def.func.clone();
            // Imports live in shared libraries, possibly far away: no
            // PC-relative references to them.
            let is_import = |func: &ir::Function, name: &ExternalName| {
                symbol_of(func, name)
                    .is_some_and(|s| m.symbols[s as usize].linkage == Linkage::Import)
            };
            let far: Vec<_> = func
                .dfg
                .ext_funcs
                .keys()
                .filter(|&r| is_import(&func, &func.dfg.ext_funcs[r].name))
                .collect();
            for r in far {
                func.dfg.ext_funcs[r].colocated = false;
            }
            let far: Vec<_> = func
                .global_values
                .keys()
                .filter(|&g| matches!(&func.global_values[g], GlobalValueData::Symbol { name, .. } if is_import(&func, name)))
                .collect();
            for g in far {
                if let GlobalValueData::Symbol { colocated, .. } = &mut func.global_values[g] {
                    *colocated = false;
                }
            }
            let names: Vec<_> = func
                .params
                .user_named_funcs()
                .iter()
                .map(|(r, n)| (r, n.clone()))
                .collect();
            for (r, name) in names {
                let remapped = match ids[name.index as usize] {
                    FuncOrDataId::Func(f) => UserExternalName {
                        namespace: 0,
                        index: f.as_u32(),
                    },
                    FuncOrDataId::Data(d) => UserExternalName {
                        namespace: 1,
                        index: d.as_u32(),
                    },
                };
                func.params.reset_user_func_name(r, remapped);
            }
            let FuncOrDataId::Func(id) = ids[def.symbol as usize] else {
                panic!("function symbol is data")
            };
            let mut ctx = cranelift_codegen::Context::for_function(func);
            jit.define_function(id, &mut ctx)
                .unwrap_or_else(|e| panic!("{}: {e:?}", m.symbols[def.symbol as usize].name));
        }
        for def in &m.data {
            let mut desc = DataDescription::new();
            desc.define(def.bytes.clone().into_boxed_slice());
            desc.set_align(def.align);
            for reloc in &def.relocs {
                match ids[reloc.target as usize] {
                    FuncOrDataId::Data(d) => {
                        let gv = jit.declare_data_in_data(d, &mut desc);
                        desc.write_data_addr(reloc.offset, gv, reloc.addend);
                    }
                    FuncOrDataId::Func(f) => {
                        let fr = jit.declare_func_in_data(f, &mut desc);
                        desc.write_function_addr(reloc.offset, fr);
                    }
                }
            }
            let FuncOrDataId::Data(id) = ids[def.symbol as usize] else {
                panic!("data symbol is a function")
            };
            jit.define_data(id, &desc).unwrap();
        }
    }
    jit.finalize_definitions().unwrap();
    let main = match jit.get_name("main") {
        Some(FuncOrDataId::Func(id)) => jit.get_finalized_function(id),
        _ => std::ptr::null(),
    };
    Jit { _module: jit, main }
}

impl Jit {
    /// Runs `main` in a forked child (so traps and `exit` end the child, not
    /// the test) with stdout and stderr captured through pipes.
    pub fn run(&self) -> Outcome {
        assert!(!self.main.is_null(), "no main");
        // SAFETY: plain POSIX calls; the child only runs the JIT code, which
        // uses libc's stdio and allocator (fork-safe in glibc), then exits.
        unsafe {
            let mut out = [0; 2];
            let mut err = [0; 2];
            assert_eq!(libc::pipe(out.as_mut_ptr()), 0);
            assert_eq!(libc::pipe(err.as_mut_ptr()), 0);
            libc::fflush(std::ptr::null_mut());
            let pid = libc::fork();
            assert!(pid >= 0, "fork failed");
            if pid == 0 {
                libc::dup2(out[1], 1);
                libc::dup2(err[1], 2);
                for fd in out.iter().chain(&err) {
                    libc::close(*fd);
                }
                let main: extern "C" fn() -> i32 = std::mem::transmute(self.main);
                let status = main();
                libc::exit(status);
            }
            libc::close(out[1]);
            libc::close(err[1]);
            let mut stdout = String::new();
            std::fs::File::from_raw_fd(out[0])
                .read_to_string(&mut stdout)
                .unwrap();
            let mut stderr = String::new();
            std::fs::File::from_raw_fd(err[0])
                .read_to_string(&mut stderr)
                .unwrap();
            let mut wstatus = 0;
            assert_eq!(libc::waitpid(pid, &mut wstatus, 0), pid);
            assert!(
                libc::WIFEXITED(wstatus),
                "child died abnormally: {wstatus:#x}\nstdout: {stdout}\nstderr: {stderr}"
            );
            Outcome {
                status: libc::WEXITSTATUS(wstatus),
                stdout,
                stderr,
            }
        }
    }
}

/// Checks, lowers (whole program + runtime), verifies, JIT-compiles and runs.
pub fn run_src(mods: &[(&str, &str)]) -> Outcome {
    let program = check_src(mods);
    run_program(&program)
}

pub fn run_program(program: &Program) -> Outcome {
    let cfg = host_config();
    let lowered = pare_frontend::lower::lower_program(program, &cfg);
    pare_frontend::lower::verify_module(&lowered).unwrap();
    let runtime = pare_frontend::lower::runtime_module(&cfg);
    pare_frontend::lower::verify_module(&runtime).unwrap();
    jit(&[&runtime, &lowered]).run()
}
