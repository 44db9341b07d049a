//! Program-level generation: modules, structs, globals, probe functions,
//! generic templates, bounded recursion, regular functions and `main`.
//!
//! Order matters: items are created so that every function only calls
//! functions created before it (templates only call their function
//! parameter, or earlier templates), which keeps the call graph acyclic
//! apart from the designated recursion, and lets each function's cost be
//! known when its callers are generated.

use super::edge::STR_POOL;
use super::model::{
    FnDef, FnKind, Gen, GlobalDef, Item, ModuleDef, ParamDef, Shape, StrGlobal, StructDef,
    Template, TemplateKind, Ty,
};
use super::scope::{Cx, Nullness, Var, VarKind};
use super::GeneratedProgram;

/// A function's name, place and signature.
struct FnSig {
    name: String,
    module: usize,
    params: Vec<ParamDef>,
    ret: Option<Ty>,
    kind: FnKind,
}

const FIELD_NAMES: [&str; 5] = ["a", "b", "c", "d", "e"];

/// `{ lines tail }` as a function body block.
fn body_text(lines: &[String], tail: Option<&str>) -> String {
    let mut s = String::from("{\n");
    for l in lines {
        s += &format!("    {l}\n");
    }
    if let Some(t) = tail {
        for l in t.lines() {
            s += &format!("    {l}\n");
        }
    }
    s += "}\n";
    s
}

impl<'c, 'u, 'd> Gen<'c, 'u, 'd> {
    pub(crate) fn program(mut self) -> GeneratedProgram {
        self.make_modules();
        self.make_structs();
        self.make_globals();
        self.make_probes();
        self.make_shapes();
        if self.cfg.features.strings {
            self.make_str_fns();
        }
        if self.cfg.features.generics {
            self.make_templates();
        }
        if self.cfg.features.recursion {
            self.make_recursion();
            self.make_deep_recursion();
        }
        self.make_functions();
        self.make_main();
        GeneratedProgram {
            modules: self.render(),
        }
    }

    fn random_module(&mut self) -> usize {
        self.rng.below(self.modules.len())
    }

    fn make_modules(&mut self) {
        let max = if self.cfg.features.multi_module {
            self.cfg.max_modules.clamp(1, 3)
        } else {
            1
        };
        let n = 1 + self.rng.below(max);
        for m in 0..n {
            let name = if m == 0 {
                "main".to_string()
            } else {
                format!("m{m}")
            };
            self.modules.push(ModuleDef {
                name,
                imports: Default::default(),
                externs: Default::default(),
            });
        }
    }

    fn make_structs(&mut self) {
        if !self.cfg.features.structs {
            return;
        }
        let n = 1 + self.rng.below(3);
        for s in 0..n {
            let module = self.random_module();
            let nf = 2 + self.rng.below(3);
            let fields: Vec<(String, Ty)> = FIELD_NAMES[..nf]
                .iter()
                .map(|f| (f.to_string(), Ty::SCALARS[self.rng.below(4)].clone()))
                .collect();
            let field_types = fields.iter().map(|(_, t)| t.prim().to_string()).collect();
            self.structs.push(StructDef {
                name: format!("S{s}"),
                module,
                fields,
                field_types,
                is_pub: false,
            });
        }
        // Reference fields (`r: S1`, possibly to the struct itself), added once
        // every struct exists.
        for s in 0..n {
            if self.rng.chance(1, 2) {
                let target = self.rng.below(n);
                let module = self.structs[s].module;
                let text = self.ty_text(module, &Ty::Struct(target));
                self.structs[s]
                    .fields
                    .push(("r".into(), Ty::Struct(target)));
                self.structs[s].field_types.push(text);
            }
        }
    }

    /// A constant initializer of scalar type `ty`.
    fn const_init(&mut self, ty: &Ty) -> String {
        match ty {
            Ty::Bool => ["true", "false", "!false", "!true"][self.rng.below(4)].to_string(),
            Ty::I64 => match self.rng.below(4) {
                1 => format!(
                    "({} * {})",
                    self.lit(ty, true).text,
                    self.lit(ty, true).text
                ),
                2 => format!("-{}", self.rng.range(1, 99)),
                _ => self.lit(ty, true).text,
            },
            _ => match self.rng.below(4) {
                1 => format!("({} as {})", self.lit(&Ty::I64, true).text, ty.prim()),
                2 => format!(
                    "({} + {})",
                    self.lit(ty, false).text,
                    self.lit(ty, true).text
                ),
                _ => self.lit(ty, false).text,
            },
        }
    }

    fn make_globals(&mut self) {
        for m in 0..self.modules.len() {
            self.counters.push(self.globals.len());
            let name = format!("hits{m}");
            self.globals.push(GlobalDef {
                decl: format!("{name}: i64 = 0;"),
                name,
                module: m,
                ty: Ty::I64,
                len: 0,
                is_pub: false,
            });
        }
        if !self.cfg.features.globals {
            return;
        }
        for m in 0..self.modules.len() {
            for _ in 0..1 + self.rng.below(3) {
                let ty = Ty::SCALARS[self.rng.below(4)].clone();
                let name = format!("g{}", self.globals.len());
                let init = self.const_init(&ty);
                let decl = format!("{name}: {} = {init};", ty.prim());
                self.globals.push(GlobalDef {
                    name,
                    module: m,
                    ty,
                    len: 0,
                    decl,
                    is_pub: false,
                });
            }
            if self.cfg.features.arrays {
                for _ in 0..self.rng.below(3) {
                    let elem = Ty::SCALARS[self.rng.below(4)].clone();
                    let len = 1 + self.rng.below(self.cfg.max_array_len.max(1));
                    let name = format!("g{}", self.globals.len());
                    let elems: Vec<String> =
                        (0..len).map(|_| self.lit(&elem, false).text).collect();
                    let decl =
                        format!("{name}: [{}; {len}] = [{}];", elem.prim(), elems.join(", "));
                    self.globals.push(GlobalDef {
                        name,
                        module: m,
                        ty: Ty::Array(Box::new(elem)),
                        len,
                        decl,
                        is_pub: false,
                    });
                }
            }
            if self.cfg.features.structs && !self.structs.is_empty() && self.rng.chance(1, 3) {
                let s = self.rng.below(self.structs.len());
                let name = format!("g{}", self.globals.len());
                let tyname = self.ty_text(m, &Ty::Struct(s));
                let decl = format!("{name}: {tyname} = null;");
                self.globals.push(GlobalDef {
                    name,
                    module: m,
                    ty: Ty::Struct(s),
                    len: 0,
                    decl,
                    is_pub: false,
                });
            }
            if self.cfg.features.strings && self.rng.chance(1, 2) {
                let name = format!("msg{m}");
                // Sometimes a literal `str` functions return, so identity
                // comparisons with the global can be true.
                let (text, len) = match STR_POOL[self.rng.below(STR_POOL.len())] {
                    (lit, len) if len > 0 && self.rng.chance(1, 3) => (lit.to_string(), len),
                    _ => self.str_lit(),
                };
                // `str` globals are kept apart: they are only read, in their own module.
                let decl = format!("{name}: str = {text};");
                self.strs.push(StrGlobal {
                    name,
                    len,
                    module: m,
                    decl,
                });
            }
        }
    }

    /// `note`/`flag` functions: print and bump the module's counter.
    fn make_probes(&mut self) {
        for m in 0..self.modules.len() {
            if m > 0 && !self.rng.chance(1, 2) {
                continue;
            }
            let counter = self.counters[m];
            let hits = self.globals[counter].name.clone();
            let note = format!("note{m}");
            let text = format!(
                "fn {note}(x: i64) -> i64 {{\n    {hits} = {hits} + 1;\n    print(x);\n    x\n}}\n"
            );
            self.push_fn(
                FnSig {
                    name: note,
                    module: m,
                    params: vec![param("x", Ty::I64)],
                    ret: Some(Ty::I64),
                    kind: FnKind::Note,
                },
                3,
                text,
            );
            let flag = format!("flag{m}");
            let text =
                format!("fn {flag}(b: bool, t: i64) -> bool {{\n    {hits} += 1;\n    print(t);\n    b\n}}\n");
            self.push_fn(
                FnSig {
                    name: flag,
                    module: m,
                    params: vec![param("b", Ty::Bool), param("t", Ty::I64)],
                    ret: Some(Ty::Bool),
                    kind: FnKind::Flag,
                },
                3,
                text,
            );
        }
    }

    /// Adds a function; returns its number.
    fn push_fn(&mut self, sig: FnSig, cost: u64, text: String) -> usize {
        self.spend_lines(&text);
        let FnSig {
            name,
            module,
            params,
            ret,
            kind,
        } = sig;
        self.fns.push(FnDef {
            name,
            module,
            params,
            ret,
            cost,
            kind,
            text,
            is_pub: false,
            calls: 0,
        });
        self.fns.len() - 1
    }

    fn make_shapes(&mut self) {
        if !self.cfg.features.shapes {
            return;
        }
        let mut ids: Vec<u8> = vec![0, 1, 2, 3];
        for _ in 0..2 + self.rng.below(2) {
            let id = ids.remove(self.rng.below(ids.len()));
            let consts = [
                self.rng.range(2, 40),
                self.rng.range(1, 1000),
                self.rng.range(1, 60),
            ];
            self.shapes.push(Shape { id, consts });
        }
    }

    // ----- generic templates -----------------------------------------------

    fn make_templates(&mut self) {
        let mut kinds = vec![
            TemplateKind::Scale(Ty::I64),
            TemplateKind::Pick,
            TemplateKind::Apply { with_const: false },
            TemplateKind::Mix,
            TemplateKind::Gate,
            TemplateKind::Fold,
            TemplateKind::Scale(Ty::I32),
            TemplateKind::Apply { with_const: true },
            TemplateKind::Scale(Ty::U8),
        ];
        let n = 2 + self.rng.below(5);
        for _ in 0..n {
            let kind = kinds.remove(self.rng.below(kinds.len()));
            self.make_template(kind);
        }
        let scale = self
            .templates
            .iter()
            .position(|t| t.kind == TemplateKind::Scale(Ty::I64));
        let apply = self
            .templates
            .iter()
            .position(|t| matches!(t.kind, TemplateKind::Apply { .. }));
        if let (Some(scale), Some(apply)) = (scale, apply) {
            if self.rng.chance(2, 3) {
                self.make_template(TemplateKind::Chain { scale, apply });
            }
        }
        if let Some(apply) = apply {
            if self.rng.chance(1, 2) {
                self.make_relay_template(apply);
            }
        }
    }

    /// `fn relay<op: fn(i64) -> i64>(x: i64) -> i64` passing its own function
    /// parameter on to an `Apply` template. Its signature is that of
    /// `Apply { with_const: false }`, which is how it is instantiated.
    fn make_relay_template(&mut self, apply: usize) {
        let module = self.random_module();
        let t = self.templates.len();
        let name = format!("relay{t}");
        let a = self.qual(module, Item::Template(apply));
        let extra = if self.templates[apply].kind == (TemplateKind::Apply { with_const: true }) {
            format!(", {}", self.const_arg(&Ty::I64))
        } else {
            String::new()
        };
        let text = format!(
            "fn {name}<op: fn(i64) -> i64>(x: i64) -> i64 {{\n    let y = {a}<op{extra}>(x);\n    print(y);\n    (y + op(x))\n}}\n"
        );
        let base_cost = self.templates[apply].base_cost + 3;
        let f_calls = self.templates[apply].f_calls + 1;
        self.templates[apply].uses += 1;
        self.spend_lines(&text);
        self.templates.push(Template {
            name,
            module,
            kind: TemplateKind::Apply { with_const: false },
            base_cost,
            f_calls,
            text,
            is_pub: false,
            uses: 0,
        });
    }

    fn template_cx(&self, module: usize, ret: Ty) -> Cx {
        let mut cx = Cx::new(module, 0, self.cfg.fn_cost_budget / 20, Some(ret), 3);
        cx.allow_calls = false;
        cx
    }

    fn make_template(&mut self, kind: TemplateKind) {
        let module = self.random_module();
        let t = self.templates.len();
        let (name, text, base_cost, f_calls) = match &kind {
            TemplateKind::Scale(k) => self.scale_template(t, module, k),
            TemplateKind::Gate => self.gate_template(t, module),
            TemplateKind::Apply { with_const } => self.apply_template(t, module, *with_const),
            TemplateKind::Fold => self.fold_template(t),
            TemplateKind::Pick => self.pick_template(t),
            TemplateKind::Mix => self.mix_template(t),
            TemplateKind::Chain { scale, apply } => self.chain_template(t, module, *scale, *apply),
        };
        self.spend_lines(&text);
        self.templates.push(Template {
            name,
            module,
            kind,
            base_cost,
            f_calls,
            text,
            is_pub: false,
            uses: 0,
        });
    }

    /// A random body in `cx` (already holding the parameters) ending in `tail`.
    fn template_body(
        &mut self,
        cx: &mut Cx,
        tail: impl FnOnce(&mut Self, &mut Cx) -> String,
    ) -> String {
        let mut lines = Vec::new();
        let n = 1 + self.rng.below(3);
        self.stmts(cx, n, &mut lines);
        let tail = tail(self, cx);
        body_text(&lines, Some(&tail))
    }

    fn scale_template(&mut self, t: usize, module: usize, k: &Ty) -> (String, String, u64, u64) {
        let name = format!("scale{t}");
        let p = k.prim();
        let mut cx = self.template_cx(module, k.clone());
        cx.declare(Var::new("x".into(), k.clone(), false, VarKind::Param));
        cx.declare(Var::new("K".into(), k.clone(), false, VarKind::Const));
        let body = self.template_body(&mut cx, |g, cx| {
            let e = g.expr(cx, &k.clone(), 2, true);
            format!("((x * K) + {})", e.text)
        });
        (
            name.clone(),
            format!("fn {name}<const K: {p}>(x: {p}) -> {p} {body}"),
            cx.cost + 2,
            0,
        )
    }

    fn gate_template(&mut self, t: usize, module: usize) -> (String, String, u64, u64) {
        let name = format!("gate{t}");
        let mut cx = self.template_cx(module, Ty::I64);
        cx.declare(Var::new("x".into(), Ty::I64, false, VarKind::Param));
        cx.declare(Var::new("B".into(), Ty::Bool, false, VarKind::Const));
        let body = self.template_body(&mut cx, |g, cx| {
            let a = g.value_block(cx, &Ty::I64, 2);
            let b = g.value_block(cx, &Ty::I64, 2);
            format!("if B {a} else {b}")
        });
        (
            name.clone(),
            format!("fn {name}<const B: bool>(x: i64) -> i64 {body}"),
            cx.cost + 2,
            0,
        )
    }

    fn apply_template(
        &mut self,
        t: usize,
        module: usize,
        with_const: bool,
    ) -> (String, String, u64, u64) {
        let name = format!("apply{t}");
        let mut cx = self.template_cx(module, Ty::I64);
        cx.fn_param = Some("op".into());
        cx.declare(Var::new("x".into(), Ty::I64, false, VarKind::Param));
        let generics = if with_const {
            cx.declare(Var::new("J".into(), Ty::I64, false, VarKind::Const));
            "<op: fn(i64) -> i64, const J: i64>"
        } else {
            "<op: fn(i64) -> i64>"
        };
        cx.declare(Var::new("acc".into(), Ty::I64, true, VarKind::Local));
        cx.f_calls += 1;
        let mut lines = vec!["let mut acc = op(x);".to_string()];
        let n = 1 + self.rng.below(3);
        self.stmts(&mut cx, n, &mut lines);
        cx.f_calls += 1;
        let e = self.expr(&mut cx, &Ty::I64, 2, true);
        let tail = format!("(acc ^ op({}))", e.text);
        let body = body_text(&lines, Some(&tail));
        let text = format!("fn {name}{generics}(x: i64) -> i64 {body}");
        (name, text, cx.cost + 3, cx.f_calls)
    }

    fn fold_template(&mut self, t: usize) -> (String, String, u64, u64) {
        let name = format!("fold{t}");
        let k = self.rng.range(1, 9);
        let combine = match self.rng.below(3) {
            1 => format!("s = (s ^ op(xs[i])) + {k};"),
            2 => format!("s = (s * {k}) + op(xs[i] + i);"),
            _ => "s = s + op(xs[i]);".to_string(),
        };
        let text = format!(
            "fn {name}<op: fn(i64) -> i64>(xs: [i64]) -> i64 {{\n    let mut s = 0;\n    for i in 0..len(xs) {{\n        {combine}\n    }}\n    s\n}}\n"
        );
        let trips = self.cfg.max_array_len.max(3) as u64 + 2;
        (name, text, 2 * trips + 2, trips)
    }

    fn pick_template(&mut self, t: usize) -> (String, String, u64, u64) {
        let name = format!("pick{t}");
        let body = match self.rng.below(3) {
            1 => "{\n    let t = a;\n    if c == (t == b) { b } else { t }\n}\n",
            2 => "{\n    let mut r = b;\n    if c {\n        r = a;\n    }\n    r\n}\n",
            _ => "{\n    if c { a } else { b }\n}\n",
        };
        (
            name.clone(),
            format!("fn {name}<T>(c: bool, a: T, b: T) -> T {body}"),
            3,
            0,
        )
    }

    fn mix_template(&mut self, t: usize) -> (String, String, u64, u64) {
        let name = format!("mix{t}");
        let first = self.mix_expr(2, &["a", "b"]);
        let tail = self.mix_expr(2, &["a", "b", "t"]);
        let text =
            format!("fn {name}<T>(a: T, b: T) -> T {{\n    let t = {first};\n    {tail}\n}}\n");
        (name, text, 3, 0)
    }

    /// An expression over integer variables of a type parameter: literals
    /// only beside a variable operand, divisors never zero or -1.
    fn mix_expr(&mut self, depth: u32, vars: &[&str]) -> String {
        let v = vars[self.rng.below(vars.len())];
        if depth == 0 {
            return v.to_string();
        }
        let l = self.mix_expr(depth - 1, vars);
        match self.rng.below(9) {
            0 => format!("({l} + {})", self.mix_expr(depth - 1, vars)),
            1 => format!("({l} - {})", self.rng.range(1, 99)),
            2 => format!("({l} * {})", self.mix_expr(depth - 1, vars)),
            3 => format!("({l} ^ {})", self.rng.range(1, 255)),
            4 => format!("({l} << {})", self.rng.range(0, 70)),
            5 => format!("({l} >> {})", self.rng.range(0, 9)),
            6 => format!("({l} / (({} & 7) + 1))", self.mix_expr(depth - 1, vars)),
            7 => format!("({l} | {})", self.mix_expr(depth - 1, vars)),
            _ => format!("({l} & {})", self.mix_expr(depth - 1, vars)),
        }
    }

    fn chain_template(
        &mut self,
        t: usize,
        module: usize,
        scale: usize,
        apply: usize,
    ) -> (String, String, u64, u64) {
        let name = format!("chain{t}");
        let s = self.qual(module, Item::Template(scale));
        let a = self.qual(module, Item::Template(apply));
        let extra = if self.templates[apply].kind == (TemplateKind::Apply { with_const: true }) {
            ", {K * 2}"
        } else {
            ""
        };
        let text = format!(
            "fn {name}<const K: i64>(x: i64) -> i64 {{\n    let y = {s}<(K + 1)>(x);\n    let z = {a}<{s}<K>{extra}>(y);\n    print(z);\n    (y ^ z)\n}}\n"
        );
        let sc = self.templates[scale].base_cost;
        let cost = sc + self.templates[apply].base_cost + self.templates[apply].f_calls * sc + 4;
        self.templates[scale].uses += 2;
        self.templates[apply].uses += 1;
        (name, text, cost, 0)
    }

    // ----- recursion -----------------------------------------------------

    fn rec_cx(&self, module: usize, fn_limit: usize) -> Cx {
        let mut cx = Cx::new(
            module,
            fn_limit,
            self.cfg.fn_cost_budget / 40,
            Some(Ty::I64),
            2,
        );
        cx.allow_calls = false;
        cx.allow_loops = false;
        cx.declare(Var::new("d".into(), Ty::I64, false, VarKind::Param));
        cx.declare(Var::new("x".into(), Ty::I64, false, VarKind::Param));
        cx
    }

    fn make_recursion(&mut self) {
        for _ in 0..1 + self.rng.below(2) {
            let module = self.random_module();
            let i = self.fns.len();
            let name = format!("rec{i}");
            let mut cx = self.rec_cx(module, i);
            let mut lines = vec![
                "if d <= 0 {".to_string(),
                "    return x;".into(),
                "}".into(),
            ];
            let n = self.rng.below(3);
            self.stmts(&mut cx, n, &mut lines);
            let tail = if self.rng.chance(1, 2) {
                let e = self.expr(&mut cx, &Ty::I64, 2, true);
                format!("{name}(d - 1, {})", e.text)
            } else {
                let a = self.expr(&mut cx, &Ty::I64, 1, true);
                let b = self.expr(&mut cx, &Ty::I64, 1, true);
                format!("if (x & 1) == 0 {{\n    {name}(d - 1, (x / 2) + {})\n}} else {{\n    {name}(d - 1, ((x * 3) + 1) ^ {})\n}}", a.text, b.text)
            };
            let text = format!(
                "fn {name}(d: i64, x: i64) -> i64 {}",
                body_text(&lines, Some(&tail))
            );
            let cost = self.rec_cost(cx.cost);
            self.push_fn(
                FnSig {
                    name,
                    module,
                    params: rec_params(),
                    ret: Some(Ty::I64),
                    kind: FnKind::Rec,
                },
                cost,
                text,
            );
        }
        if self.rng.chance(1, 2) {
            self.make_mutual_recursion();
        }
    }

    fn rec_cost(&self, body: u64) -> u64 {
        (self.cfg.max_rec_depth.max(0) as u64 + 1) * (body + 3)
    }

    /// Two functions calling each other with a decreasing depth, possibly in
    /// different modules.
    fn make_mutual_recursion(&mut self) {
        let (ma, mb) = (self.random_module(), self.random_module());
        let ia = self.push_fn(
            FnSig {
                name: String::new(),
                module: ma,
                params: rec_params(),
                ret: Some(Ty::I64),
                kind: FnKind::Rec,
            },
            0,
            String::new(),
        );
        let ib = self.push_fn(
            FnSig {
                name: String::new(),
                module: mb,
                params: rec_params(),
                ret: Some(Ty::I64),
                kind: FnKind::Rec,
            },
            0,
            String::new(),
        );
        self.fns[ia].name = format!("even{ia}");
        self.fns[ib].name = format!("odd{ib}");
        let mut max_body = 0;
        for (me, other) in [(ia, ib), (ib, ia)] {
            let module = self.fns[me].module;
            let callee = self.qual(module, Item::Fn(other));
            let mut cx = self.rec_cx(module, ia);
            let base = self.expr(&mut cx, &Ty::I64, 1, true);
            let mut lines = vec![
                "if d <= 0 {".to_string(),
                format!("    return {};", base.text),
                "}".into(),
            ];
            let n = self.rng.below(2);
            self.stmts(&mut cx, n, &mut lines);
            let e = self.expr(&mut cx, &Ty::I64, 2, true);
            let tail = format!("{callee}(d - 1, {})", e.text);
            self.fns[me].text = format!(
                "fn {}(d: i64, x: i64) -> i64 {}",
                self.fns[me].name,
                body_text(&lines, Some(&tail))
            );
            max_body = max_body.max(cx.cost);
        }
        let cost = self.rec_cost(max_body);
        for f in [ia, ib] {
            let text = self.fns[f].text.clone();
            self.spend_lines(&text);
        }
        self.fns[ia].cost = cost;
        self.fns[ib].cost = cost;
    }

    // ----- regular functions and main -------------------------------------

    /// Statements allowed for the next function: its share of the lines
    /// left (a statement takes about 2.5 lines with its blocks and shapes).
    fn stmt_quota(&self, remaining_fns: usize) -> usize {
        let fair = self.lines_left * 2 / 5 / remaining_fns.max(1);
        fair.min(self.cfg.max_fn_stmts).max(2)
    }

    /// Charges the lines of an item's text to the program's line budget.
    pub(crate) fn spend_lines(&mut self, text: &str) {
        self.lines_left = self.lines_left.saturating_sub(text.lines().count() + 1);
    }

    fn make_functions(&mut self) {
        let min = self.cfg.min_functions.clamp(1, 12);
        let max = self.cfg.max_functions.clamp(min, 12);
        let n = min + self.rng.below(max - min + 1);
        // Declarations, and the lines `main` adds after its random statements.
        let decls =
            self.structs.len() + self.globals.len() + self.strs.len() + 2 * self.modules.len();
        let reserve = 2 * decls + 4 * self.templates.len() + 2 * n + 8;
        self.lines_left = self.lines_left.saturating_sub(reserve);
        for k in 0..n {
            let quota = self.stmt_quota(n - k + 1);
            self.make_function(k, quota);
        }
    }

    fn random_param_ty(&mut self) -> (Ty, usize) {
        let f = self.cfg.features;
        match self.rng.weighted(&[
            8,
            if f.arrays { 1 } else { 0 },
            if f.structs && !self.structs.is_empty() {
                1
            } else {
                0
            },
        ]) {
            1 => {
                let elem = Ty::SCALARS[self.rng.below(4)].clone();
                (Ty::Array(Box::new(elem)), 1 + self.rng.below(4))
            }
            2 => (Ty::Struct(self.rng.below(self.structs.len())), 0),
            _ => (Ty::SCALARS[self.rng.weighted(&[4, 2, 2, 2])].clone(), 0),
        }
    }

    fn make_function(&mut self, k: usize, quota: usize) {
        let module = self.random_module();
        let index = self.fns.len();
        let name = format!("f{index}");
        // The first functions take and return one i64, so they can be
        // passed to `fn(i64) -> i64` generic parameters.
        let (params, ret) = if k < 2 && self.rng.chance(3, 4) {
            (vec![param("p0", Ty::I64)], Some(Ty::I64))
        } else {
            // Sometimes more parameters than argument registers (8 on
            // aarch64), so that some are passed on the stack.
            let np = if self.rng.chance(1, 8) {
                7 + self.rng.below(5)
            } else {
                self.rng.below(4)
            };
            let params = (0..np)
                .map(|i| {
                    let (ty, min_len) = self.random_param_ty();
                    ParamDef {
                        name: format!("p{i}"),
                        ty,
                        min_len,
                    }
                })
                .collect();
            let ret = if self.rng.chance(1, 5) {
                None
            } else if !self.structs.is_empty() && self.rng.chance(1, 8) {
                Some(Ty::Struct(self.rng.below(self.structs.len())))
            } else {
                Some(Ty::SCALARS[self.rng.weighted(&[4, 2, 2, 2])].clone())
            };
            (params, ret)
        };
        let mut cx = Cx::new(module, index, self.cfg.fn_cost_budget, ret.clone(), quota);
        let mut header = Vec::new();
        for p in &params {
            let kind = match p.ty {
                Ty::Array(_) => VarKind::Array {
                    len: p.min_len,
                    exact: false,
                },
                Ty::Struct(_) => VarKind::StructRef(Nullness::NonNull),
                _ => VarKind::Param,
            };
            header.push(format!("{}: {}", p.name, self.ty_text(module, &p.ty)));
            cx.declare(Var::new(p.name.clone(), p.ty.clone(), false, kind));
        }
        let mut lines = Vec::new();
        // Start with a shape half the time, so that shapes repeat across functions.
        if self.cfg.features.shapes && !self.shapes.is_empty() && self.rng.chance(1, 2) {
            cx.charge(1);
            self.shape_stmt(&mut cx, &mut lines);
        }
        let n = cx.stmts_left;
        self.stmts(&mut cx, n, &mut lines);
        self.print_some_locals(&mut cx, &mut lines);
        let tail = ret.as_ref().map(|t| {
            let d = self.depth();
            self.value_of(&mut cx, t, d)
        });
        let ret_text = match &ret {
            Some(t) => format!(" -> {}", self.ty_text(module, t)),
            None => String::new(),
        };
        let text = format!(
            "fn {name}({}){ret_text} {}",
            header.join(", "),
            body_text(&lines, tail.as_deref())
        );
        let cost = cx.cost + 2;
        self.push_fn(
            FnSig {
                name,
                module,
                params,
                ret,
                kind: FnKind::Regular,
            },
            cost,
            text,
        );
    }

    /// Prints up to two mutable scalar locals at the end of a body: values
    /// computed but never printed would hide wrong code.
    fn print_some_locals(&mut self, cx: &mut Cx, lines: &mut Vec<String>) {
        let locals = cx.vars_where(|v| v.assignable() && v.ty.is_scalar());
        for _ in 0..locals.len().min(2) {
            if self.rng.chance(2, 3) {
                let v = &locals[self.rng.below(locals.len())];
                lines.push(format!("print({});", v.name));
            }
        }
    }

    fn make_main(&mut self) {
        let index = self.fns.len();
        let quota = self.stmt_quota(1);
        let mut cx = Cx::new(0, index, self.cfg.main_cost_budget, None, quota);
        // An early return from `main` would skip most of the program.
        cx.allow_return = false;
        let mut lines = Vec::new();
        let n = cx.stmts_left;
        self.stmts(&mut cx, n, &mut lines);
        self.print_some_locals(&mut cx, &mut lines);
        self.exercise_templates(&mut cx, &mut lines);
        self.call_uncalled(&mut cx, &mut lines);
        self.call_deep(&mut lines);
        self.print_globals(&mut lines);
        // How the program ends: `main` returns nothing, calls `exit`, or
        // returns its status as an i32 or i64.
        let hits = self.globals[self.counters[0]].name.clone();
        let (ret, tail) = match self.rng.weighted(&[10, 1, 1, 1]) {
            1 => {
                lines.push(format!("exit((({hits} & 7) + 3) as i32);"));
                ("", None)
            }
            2 => (" -> i32", Some(format!("(({hits} & 7) as i32)"))),
            3 => (" -> i64", Some(format!("({hits} & 15)"))),
            _ => ("", None),
        };
        let text = format!("fn main(){ret} {}", body_text(&lines, tail.as_deref()));
        self.push_fn(
            FnSig {
                name: "main".into(),
                module: 0,
                params: Vec::new(),
                ret: None,
                kind: FnKind::Main,
            },
            cx.cost,
            text,
        );
    }

    /// Prints every global's final value (arrays element by element), so a
    /// wrong store anywhere shows in the output.
    fn print_globals(&mut self, lines: &mut Vec<String>) {
        for g in 0..self.globals.len() {
            let ty = self.globals[g].ty.clone();
            let name = self.qual(0, Item::Global(g));
            match ty {
                Ty::Array(_) => {
                    lines.push(format!("for i in 0..len({name}) {{ print({name}[i]); }}"))
                }
                Ty::Struct(s) => {
                    let f = self.structs[s].fields[0].0.clone();
                    lines.push(format!("if {name} != null {{ print({name}.{f}); }}"));
                }
                _ => lines.push(format!("print({name});")),
            }
        }
    }

    /// Calls of every template with 2–5 different argument sets.
    fn exercise_templates(&mut self, cx: &mut Cx, lines: &mut Vec<String>) {
        cx.budget = cx.budget.saturating_add(self.cfg.fn_cost_budget);
        for t in 0..self.templates.len() {
            let count = 2 + self.rng.below(4);
            let mut seen: Vec<String> = Vec::new();
            for _ in 0..count {
                let ty = match self.templates[t].kind.clone() {
                    TemplateKind::Scale(k) => k,
                    TemplateKind::Pick => Ty::SCALARS[self.rng.below(4)].clone(),
                    TemplateKind::Mix => Ty::INTS[self.rng.below(3)].clone(),
                    _ => Ty::I64,
                };
                if let Some(call) = self.instance_call(cx, t, &ty, 1) {
                    if !seen.contains(&call) {
                        lines.push(format!("print({call});"));
                        seen.push(call);
                    }
                }
            }
        }
    }

    /// Calls from `main` of the functions nobody called.
    fn call_uncalled(&mut self, cx: &mut Cx, lines: &mut Vec<String>) {
        for i in 0..self.fns.len() {
            if self.fns[i].calls > 0 || !matches!(self.fns[i].kind, FnKind::Regular | FnKind::Rec) {
                continue;
            }
            cx.budget = cx.budget.saturating_add(self.fns[i].cost);
            let call = self.call_text(cx, i, 1);
            match self.fns[i].ret.clone() {
                Some(Ty::Struct(s)) => {
                    let field = self.structs[s].fields[0].0.clone();
                    lines.push(format!("print({call}.{field});"));
                }
                Some(_) => lines.push(format!("print({call});")),
                None => lines.push(format!("{call};")),
            }
        }
    }
}

fn param(name: &str, ty: Ty) -> ParamDef {
    ParamDef {
        name: name.into(),
        ty,
        min_len: 0,
    }
}

fn rec_params() -> Vec<ParamDef> {
    vec![param("d", Ty::I64), param("x", Ty::I64)]
}
