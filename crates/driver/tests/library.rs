//! Library-level tests on a ClifModule built by hand, shaped like the Pare
//! lowering's output: local data with a relocation, a writable data import
//! (`stdout`), a `tail`-convention local function, libc calls.

use cranelift_codegen::ir::{self, types, AbiParam, InstBuilder, MemFlagsData, Signature};
use cranelift_codegen::isa::CallConv;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use parec::build::{Backend, Build, BuildMode, Input, Units};
use parec::link::{self, Icf};
use parec::pipeline::Pipeline;
use parec::target::{OptLevel, Target};
use parec_passes::clif_module::{ClifModule, DataDef, DataReloc, FunctionDef, Linkage, SymbolKind};

fn sig(params: &[ir::Type], returns: &[ir::Type], conv: CallConv) -> Signature {
    let mut s = Signature::new(conv);
    s.params.extend(params.iter().map(|t| AbiParam::new(*t)));
    s.returns.extend(returns.iter().map(|t| AbiParam::new(*t)));
    s
}

fn frontend_config() -> cranelift_codegen::isa::TargetFrontendConfig {
    parec::target::host_jit_isa(OptLevel::O0)
        .unwrap()
        .frontend_config()
}

/// Imports symbol `index` of `m` as a function reference in `f`.
fn import_func(f: &mut ir::Function, m: &ClifModule, index: u32, colocated: bool) -> ir::FuncRef {
    let SymbolKind::Function(s) = &m.symbols[index as usize].kind else {
        unreachable!()
    };
    let signature = f.import_signature(s.clone());
    let name = f.declare_imported_user_function(ClifModule::external_name(index));
    f.import_function(ir::ExtFuncData {
        name: ir::ExternalName::user(name),
        signature,
        colocated,
        patchable: false,
    })
}

fn import_data(f: &mut ir::Function, index: u32, colocated: bool) -> ir::GlobalValue {
    let name = f.declare_imported_user_function(ClifModule::external_name(index));
    f.create_global_value(ir::GlobalValueData::Symbol {
        name: ir::ExternalName::user(name),
        offset: ir::immediates::Imm64::new(0),
        colocated,
        tls: false,
    })
}

/// `main` prints "OK\n" (one byte directly from `msg`, one through the
/// relocated pointer `ptr`, the newline from a tail-convention helper),
/// flushes `stdout` and returns 7.
fn module(c_conv: CallConv) -> ClifModule {
    let mut m = ClifModule::new("handmade");
    let main = m.declare(
        "main",
        SymbolKind::Function(sig(&[], &[types::I32], c_conv)),
        Linkage::Export,
    );
    let putchar = m.declare(
        "putchar",
        SymbolKind::Function(sig(&[types::I32], &[types::I32], c_conv)),
        Linkage::Import,
    );
    let fflush = m.declare(
        "fflush",
        SymbolKind::Function(sig(&[types::I64], &[types::I32], c_conv)),
        Linkage::Import,
    );
    let stdout = m.declare(
        "stdout",
        SymbolKind::Data { writable: true },
        Linkage::Import,
    );
    let msg = m.declare("msg", SymbolKind::Data { writable: false }, Linkage::Local);
    let ptr = m.declare("ptr", SymbolKind::Data { writable: true }, Linkage::Local);
    let newline = m.declare(
        "newline",
        SymbolKind::Function(sig(&[], &[types::I32], CallConv::Tail)),
        Linkage::Local,
    );
    m.data.push(DataDef {
        symbol: msg,
        bytes: b"OK\n\0".to_vec(),
        align: 1,
        relocs: vec![],
    });
    m.data.push(DataDef {
        symbol: ptr,
        bytes: vec![0; 8],
        align: 8,
        relocs: vec![DataReloc {
            offset: 0,
            target: msg,
            addend: 1,
        }],
    });

    let mut fctx = FunctionBuilderContext::new();

    let mut f = ir::Function::with_name_signature(
        ClifModule::func_name(newline),
        sig(&[], &[types::I32], CallConv::Tail),
    );
    let put = import_func(&mut f, &m, putchar, true);
    {
        let mut b = FunctionBuilder::new(&mut f, &mut fctx);
        let block = b.create_block();
        b.switch_to_block(block);
        b.seal_block(block);
        let ten = b.ins().iconst(types::I32, 10);
        b.ins().call(put, &[ten]);
        let zero = b.ins().iconst(types::I32, 0);
        b.ins().return_(&[zero]);
        b.finalize(frontend_config());
    }
    m.functions.push(FunctionDef {
        symbol: newline,
        func: f,
    });

    let mut f = ir::Function::with_name_signature(
        ClifModule::func_name(main),
        sig(&[], &[types::I32], c_conv),
    );
    let put = import_func(&mut f, &m, putchar, true);
    let flush = import_func(&mut f, &m, fflush, true);
    let nl = import_func(&mut f, &m, newline, true);
    let msg_gv = import_data(&mut f, msg, true);
    let ptr_gv = import_data(&mut f, ptr, true);
    let stdout_gv = import_data(&mut f, stdout, true);
    {
        let mut b = FunctionBuilder::new(&mut f, &mut fctx);
        let block = b.create_block();
        b.switch_to_block(block);
        b.seal_block(block);
        let flags = MemFlagsData::trusted();
        let msg_addr = b.ins().symbol_value(types::I64, msg_gv);
        let o = b.ins().uload8(types::I32, flags, msg_addr, 0);
        b.ins().call(put, &[o]);
        let ptr_addr = b.ins().symbol_value(types::I64, ptr_gv);
        let k_addr = b.ins().load(types::I64, flags, ptr_addr, 0);
        let k = b.ins().uload8(types::I32, flags, k_addr, 0);
        b.ins().call(put, &[k]);
        b.ins().call(nl, &[]);
        let stdout_addr = b.ins().symbol_value(types::I64, stdout_gv);
        let stream = b.ins().load(types::I64, flags, stdout_addr, 0);
        b.ins().call(flush, &[stream]);
        let seven = b.ins().iconst(types::I32, 7);
        b.ins().return_(&[seven]);
        b.finalize(frontend_config());
    }
    m.functions.push(FunctionDef {
        symbol: main,
        func: f,
    });
    m
}

#[test]
fn handmade_module_verifies() {
    parec::pipeline::verify_module(&module(CallConv::SystemV), None).unwrap();
}

/// A build of hand-made modules at `level`, ending at `backend`.
fn build(level: OptLevel, backend: Backend) -> Build {
    Build {
        pipeline: Pipeline::for_level(level),
        level,
        mode: BuildMode::Local,
        backend,
        jobs: 1,
        units: Units::PerModule,
        code_model: Default::default(),
        runtime: Default::default(),
    }
}

/// Runs `modules` in the JIT after `level`'s passes.
fn jit(
    modules: Vec<parec_passes::clif_module::ClifModule>,
    level: OptLevel,
) -> anyhow::Result<i32> {
    let output = build(level, Backend::Jit).run(Input::Modules(modules))?;
    parec::jit::execute(output.modules, level)
}

#[test]
fn handmade_module_runs_in_the_jit() {
    let status = jit(vec![module(CallConv::SystemV)], OptLevel::Oz).unwrap();
    assert_eq!(status, 7);
}

#[test]
fn handmade_module_runs_under_qemu() {
    let output = build(OptLevel::Oz, Backend::Objects(Target::Aarch64))
        .run(Input::Modules(vec![module(Target::Aarch64.c_call_conv())]))
        .unwrap();
    let obj = &output.objects[0];
    let dir = tempfile::tempdir().unwrap();
    let o = dir.path().join("handmade.o");
    std::fs::write(&o, &obj.bytes).unwrap();
    let exe = dir.path().join("handmade");
    let options = link::LinkOptions {
        target: Target::Aarch64,
        icf: Icf::All,
        runtime: output.runtime,
        strip: false,
    };
    link::link_executable(&[o], &exe, &options).unwrap();
    let out = link::run_command(&exe, Target::Aarch64).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "OK\n");
    assert_eq!(out.status.code(), Some(7));
}

#[test]
fn malformed_modules_are_errors_not_panics() {
    // A local symbol without a definition.
    let mut m = module(CallConv::SystemV);
    m.declare(
        "ghost",
        SymbolKind::Data { writable: false },
        Linkage::Local,
    );
    let err = parec::clif_to_module::check_module(&m)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("`ghost` is declared in module `handmade` but not defined"),
        "{err}"
    );

    // A data relocation past the end of its object.
    let mut m = module(CallConv::SystemV);
    m.data[1].relocs[0].offset = 4;
    assert!(parec::clif_to_module::check_module(&m).is_err());

    // No `main`.
    let mut m = module(CallConv::SystemV);
    m.symbols[0].name = "not_main".into();
    let err = jit(vec![m], OptLevel::O0).unwrap_err();
    assert!(err.to_string().contains("no `main`"), "{err}");
}
