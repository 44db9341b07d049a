//! Statement generation: declarations, assignments, prints, conditionals,
//! bounded loops, early exits, calls and repeated statement shapes.
//!
//! Termination: `for` loops have constant trip counts (or run over a known
//! array length, or `x..(x + k)`, or have masked expression bounds: see
//! `edge.rs`); `while` loops are guarded by a counter
//! that the body increments first and never assigns otherwise. The product
//! of enclosing trip counts is bounded by `max_loop_mult`, and every
//! statement and call is charged to the function's cost budget at that
//! multiplicity, so the program's total work stays small.
//!
//! Statements are produced as lines without indentation; nested blocks are
//! indented by four spaces relative to their parent.

use super::expr::Ex;
use super::model::{FnKind, Gen, Item, Ty};
use super::scope::{Cx, Nullness, Var, VarKind};

const ASSIGN_OPS: [&str; 10] = ["+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="];

fn indent(lines: Vec<String>) -> impl Iterator<Item = String> {
    lines.into_iter().map(|l| format!("    {l}"))
}

impl<'c, 'u, 'd> Gen<'c, 'u, 'd> {
    /// Expression depth for a new statement.
    pub(crate) fn depth(&mut self) -> u32 {
        1 + self.rng.below(self.cfg.max_expr_depth.max(1) as usize) as u32
    }

    /// Up to `n` statements (fewer when the function's quota runs out).
    pub(crate) fn stmts(&mut self, cx: &mut Cx, n: usize, out: &mut Vec<String>) {
        for _ in 0..n {
            if cx.stmts_left == 0 {
                break;
            }
            cx.stmts_left -= 1;
            cx.charge(1);
            // Now and then a nested block comment, which the lexer must skip whole.
            if self.rng.chance(1, 40) {
                out.push("/* block /* nested */ comment */".into());
            }
            self.stmt(cx, out);
        }
    }

    /// A nested block's lines (indented), its statements in a new scope.
    fn block(&mut self, cx: &mut Cx, out: &mut Vec<String>) {
        let n = 1 + self.rng.below(self.cfg.max_stmts_per_block.max(1));
        self.block_with(cx, n, out, |_, _, _| {});
    }

    /// A nested block whose first lines come from `prelude` (run in the new scope).
    fn block_with(
        &mut self,
        cx: &mut Cx,
        n: usize,
        out: &mut Vec<String>,
        prelude: impl FnOnce(&mut Self, &mut Cx, &mut Vec<String>),
    ) {
        cx.push();
        cx.nest += 1;
        let mut inner = Vec::new();
        prelude(self, cx, &mut inner);
        self.stmts(cx, n, &mut inner);
        cx.nest -= 1;
        cx.pop();
        out.extend(indent(inner));
    }

    fn stmt(&mut self, cx: &mut Cx, out: &mut Vec<String>) {
        let f = self.cfg.features;
        let nest = cx.nest < self.cfg.max_nest;
        let loops = nest && cx.allow_loops && cx.mult < self.cfg.max_loop_mult;
        let w = [
            5,                                     // print
            5,                                     // let
            5,                                     // assignment
            if nest { 3 } else { 0 },              // if
            if loops { 2 } else { 0 },             // for
            if loops { 2 } else { 0 },             // while
            if cx.loop_depth > 0 { 3 } else { 0 }, // break / continue
            if cx.allow_return { 1 } else { 0 },   // early return
            if cx.allow_calls { 3 } else { 0 },    // call statement
            if f.arrays { 2 } else { 0 },          // array
            if f.structs && !self.structs.is_empty() {
                2
            } else {
                0
            }, // struct
            if nest { 1 } else { 0 },              // block
            if f.shapes && !self.shapes.is_empty() {
                2
            } else {
                0
            }, // shape
            if f.side_effects && cx.allow_calls && nest {
                2
            } else {
                0
            },
            if f.strings { 1 } else { 0 }, // print_str
            if f.externs && cx.module == 0 && cx.allow_calls {
                1
            } else {
                0
            }, // putchar
            if loops { 2 } else { 0 },     // for with expression bounds
            if f.side_effects && cx.allow_calls {
                2
            } else {
                0
            }, // compound assignment with a side-effecting operand
        ];
        match self.rng.weighted(&w) {
            0 => self.print_stmt(cx, out),
            1 => self.let_stmt(cx, out),
            2 => self.assign_stmt(cx, out),
            3 => self.if_stmt(cx, out),
            4 => self.for_stmt(cx, out),
            5 => self.while_stmt(cx, out),
            6 => self.break_continue(cx, out),
            7 => self.early_return(cx, out),
            8 => self.call_stmt(cx, out),
            9 => self.let_array(cx, out),
            10 => self.let_struct(cx, out),
            11 => {
                out.push("{".into());
                self.block(cx, out);
                out.push("}".into());
            }
            12 => self.shape_stmt(cx, out),
            13 => self.side_effect_if(cx, out),
            14 => self.print_str(cx, out),
            16 => self.for_expr_bounds(cx, out),
            17 => self.effect_compound(cx, out),
            _ => {
                self.modules[0]
                    .externs
                    .insert("extern fn putchar(c: i32) -> i32;");
                let c = [65, 66, 10, 120, 61][self.rng.below(5)];
                out.push(format!("putchar({c});"));
            }
        }
    }

    fn random_scalar(&mut self) -> Ty {
        Ty::SCALARS[self.rng.weighted(&[4, 2, 2, 2])].clone()
    }

    pub(crate) fn print_stmt(&mut self, cx: &mut Cx, out: &mut Vec<String>) {
        let ty = self.random_scalar();
        // Now and then a deep expression, for register pressure.
        let d = if self.rng.chance(1, 12) {
            self.cfg.max_expr_depth + 2
        } else {
            self.depth()
        };
        let e = self.expr(cx, &ty, d, false);
        out.push(format!("print({});", e.text));
    }

    /// `let [mut] v[: T] = e;`, sometimes shadowing an earlier local.
    fn let_stmt(&mut self, cx: &mut Cx, out: &mut Vec<String>) {
        let ty = self.random_scalar();
        let annotated = self.rng.chance(1, 2);
        let mutable = self.rng.chance(2, 3);
        let d = self.depth();
        let e = self.expr(cx, &ty, d, annotated);
        // Only `v*` locals and `p*` parameters: templates and recursive
        // functions refer to their own names (`x`, `acc`, `d`) by type.
        let shadowable = cx.vars_where(|v| match v.kind {
            VarKind::Local => v.name.starts_with('v'),
            VarKind::Param => v.name.starts_with('p'),
            _ => false,
        });
        let name = if !shadowable.is_empty() && self.rng.chance(1, 8) {
            shadowable[self.rng.below(shadowable.len())].name.clone()
        } else {
            cx.fresh("v")
        };
        let m = if mutable { "mut " } else { "" };
        let t = if annotated {
            format!(": {}", ty.prim())
        } else {
            String::new()
        };
        out.push(format!("let {m}{name}{t} = {};", e.text));
        cx.declare(Var::new(name, ty, mutable, VarKind::Local));
    }

    /// One-line statements for value blocks: `let`, `print`, assignment.
    pub(crate) fn inline_stmt(&mut self, cx: &mut Cx, d: u32) -> Vec<String> {
        let mut out = Vec::new();
        match self.rng.below(3) {
            0 => {
                let ty = self.random_scalar();
                let e = self.expr(cx, &ty, d, true);
                let name = cx.fresh("t");
                out.push(format!("let {name}: {} = {};", ty.prim(), e.text));
                cx.declare(Var::new(name, ty, false, VarKind::Local));
            }
            1 => self.print_stmt(cx, &mut out),
            _ => self.scalar_assign(cx, d, &mut out),
        }
        out
    }

    fn assign_stmt(&mut self, cx: &mut Cx, out: &mut Vec<String>) {
        let d = self.depth();
        let structs = cx.vars_where(|v| v.mutable && matches!(v.kind, VarKind::StructRef(_)));
        if !structs.is_empty() && self.rng.chance(1, 6) {
            let v = structs[self.rng.below(structs.len())].clone();
            self.struct_assign(cx, &v, d, out);
            return;
        }
        if self.rng.chance(1, 8) && self.link_assign(cx, d, out) {
            return;
        }
        if self.rng.chance(1, 8) && self.struct_global_assign(cx, d, out) {
            return;
        }
        self.scalar_assign(cx, d, out);
    }

    /// `place op= e;` to a mutable local, global, field or array element.
    fn scalar_assign(&mut self, cx: &mut Cx, d: u32, out: &mut Vec<String>) {
        let Some((place, ty)) = self.place(cx, d) else {
            self.print_stmt(cx, out);
            return;
        };
        let op = if ty == Ty::Bool || self.rng.chance(1, 2) {
            "="
        } else {
            ASSIGN_OPS[self.rng.below(10)]
        };
        let rhs = match op {
            "/=" | "%=" => self.divisor_for_assign(cx, &ty, d, op == "%="),
            "<<=" | ">>=" => {
                let amount_ty = Ty::INTS[self.rng.below(3)].clone();
                self.expr(cx, &amount_ty, d, false)
            }
            _ => self.expr(cx, &ty, d, false),
        };
        out.push(format!("{place} {op} {};", rhs.text));
    }

    fn divisor_for_assign(&mut self, cx: &mut Cx, ty: &Ty, d: u32, rem: bool) -> Ex {
        if self.rng.prob(self.cfg.trap_probability) {
            return self.lit_value(0, ty, false);
        }
        let e = self.expr(cx, ty, d, false);
        if rem && *ty != Ty::U8 && self.rng.chance(1, 5) {
            return self.lit_value(-1, ty, false);
        }
        Ex::typed(format!("(({} & 31) + 2)", e.text))
    }

    /// An assignable scalar place and its type.
    fn place(&mut self, cx: &mut Cx, d: u32) -> Option<(String, Ty)> {
        let locals = cx.vars_where(|v| v.assignable() && v.ty.is_scalar());
        let structs = cx.vars_where(|v| matches!(v.kind, VarKind::StructRef(Nullness::NonNull)));
        let arrays = cx.vars_where(|v| {
            matches!(v.kind, VarKind::Array { len, .. } if len > 0)
                && matches!(&v.ty, Ty::Array(elem) if elem.is_scalar())
        });
        let globals: Vec<usize> = (0..self.globals.len())
            .filter(|&g| self.globals[g].ty.is_scalar() || self.globals[g].len > 0)
            .collect();
        let w = [
            if locals.is_empty() { 0 } else { 6 },
            if structs.is_empty() { 0 } else { 2 },
            if arrays.is_empty() { 0 } else { 3 },
            if globals.is_empty() { 0 } else { 2 },
        ];
        if w.iter().all(|&x| x == 0) {
            return None;
        }
        match self.rng.weighted(&w) {
            0 => {
                let v = &locals[self.rng.below(locals.len())];
                Some((v.name.clone(), v.ty.clone()))
            }
            1 => {
                let v = structs[self.rng.below(structs.len())].clone();
                let Ty::Struct(s) = v.ty else { return None };
                let fields: Vec<(String, Ty)> = self.structs[s]
                    .fields
                    .iter()
                    .filter(|(_, t)| t.is_scalar())
                    .cloned()
                    .collect();
                let (f, t) = fields.get(self.rng.below(fields.len()))?.clone();
                Some((format!("{}.{f}", v.name), t))
            }
            2 => {
                let v = arrays[self.rng.below(arrays.len())].clone();
                let (Ty::Array(elem), VarKind::Array { len, .. }) = (&v.ty, &v.kind) else {
                    return None;
                };
                let idx = self.index(cx, Some(&v.name), *len, d.saturating_sub(1));
                Some((format!("{}[{idx}]", v.name), (**elem).clone()))
            }
            _ => {
                let g = globals[self.rng.below(globals.len())];
                let name = self.qual(cx.module, Item::Global(g));
                let (ty, len) = (self.globals[g].ty.clone(), self.globals[g].len);
                match ty {
                    Ty::Array(elem) => {
                        let idx = self.index(cx, Some(&name), len, d.saturating_sub(1));
                        Some((format!("{name}[{idx}]"), *elem))
                    }
                    scalar => Some((name, scalar)),
                }
            }
        }
    }

    /// `r = q;` / `r = null;` for a mutable struct variable.
    fn struct_assign(&mut self, cx: &mut Cx, v: &Var, d: u32, out: &mut Vec<String>) {
        let Ty::Struct(s) = v.ty else { return };
        let nonnull = matches!(v.kind, VarKind::StructRef(Nullness::NonNull));
        let rhs = if !nonnull && self.rng.chance(1, 4) {
            "null".to_string()
        } else {
            self.struct_value(cx, s, d)
        };
        if !nonnull {
            cx.forget_nullness(&v.name);
        }
        out.push(format!("{} = {rhs};", v.name));
    }

    /// `p.r = q;` / `p.r = null;` through a non-null struct with a reference
    /// field, or `a[i] = q;` into an array of structs; false if there is none.
    fn link_assign(&mut self, cx: &mut Cx, d: u32, out: &mut Vec<String>) -> bool {
        let mut links = Vec::new();
        for v in cx.vars_where(|v| matches!(v.kind, VarKind::StructRef(Nullness::NonNull))) {
            let Ty::Struct(s) = v.ty else { continue };
            for (f, t) in &self.structs[s].fields {
                if let Ty::Struct(target) = t {
                    links.push((format!("{}.{f}", v.name), *target));
                }
            }
        }
        for v in cx.vars_where(|v| matches!(v.kind, VarKind::Array { len, .. } if len > 0)) {
            if let (Ty::Array(elem), VarKind::Array { len, .. }) = (&v.ty, &v.kind) {
                if let Ty::Struct(target) = **elem {
                    let idx = self.index(cx, Some(&v.name), *len, d.saturating_sub(1));
                    links.push((format!("{}[{idx}]", v.name), target));
                }
            }
        }
        let Some((place, target)) = self.rng.pick(&links).cloned() else {
            return false;
        };
        let rhs = if self.rng.chance(1, 4) {
            "null".to_string()
        } else {
            self.struct_value(cx, target, d)
        };
        out.push(format!("{place} = {rhs};"));
        true
    }

    /// `g = q;` / `g = null;` for a struct global (read only behind null
    /// tests); false if there is none.
    fn struct_global_assign(&mut self, cx: &mut Cx, d: u32, out: &mut Vec<String>) -> bool {
        let globals: Vec<(usize, usize)> = (0..self.globals.len())
            .filter_map(|g| match self.globals[g].ty {
                Ty::Struct(s) => Some((g, s)),
                _ => None,
            })
            .collect();
        let Some(&(g, s)) = self.rng.pick(&globals) else {
            return false;
        };
        let name = self.qual(cx.module, Item::Global(g));
        let rhs = if self.rng.chance(1, 4) {
            "null".to_string()
        } else {
            self.struct_value(cx, s, d)
        };
        out.push(format!("{name} = {rhs};"));
        true
    }

    fn if_stmt(&mut self, cx: &mut Cx, out: &mut Vec<String>) {
        let d = self.depth();
        let c = self.expr(cx, &Ty::Bool, d, false);
        out.push(format!("if {} {{", c.text));
        self.block(cx, out);
        let mut chain = 0;
        while chain < 2 && self.rng.chance(1, 3) {
            chain += 1;
            let c2 = self.expr(cx, &Ty::Bool, d, false);
            out.push(format!("}} else if {} {{", c2.text));
            self.block(cx, out);
        }
        if self.rng.chance(1, 2) {
            out.push("} else {".into());
            self.block(cx, out);
        }
        out.push("}".into());
    }

    /// Room for a loop of `trip` iterations under the multiplicity cap.
    pub(crate) fn loop_fits(&self, cx: &Cx, trip: u64) -> bool {
        cx.mult.saturating_mul(trip) <= self.cfg.max_loop_mult && cx.can_afford(trip)
    }

    /// `for i in a..b { ... }` with a bounded trip count.
    fn for_stmt(&mut self, cx: &mut Cx, out: &mut Vec<String>) {
        let max_trip = self.cfg.max_loop_trip.max(1);
        let name = cx.fresh("i");
        // Only arrays of known length: `i` may then index other arrays.
        let arrays = cx.vars_where(|v| matches!(v.kind, VarKind::Array { exact: true, .. }));
        let (head, ty, range, trip) = match self.rng.below(5) {
            1 => {
                let ty = Ty::INTS[1 + self.rng.below(2)].clone();
                let lo = self.rng.range(0, 3);
                let hi = lo + self.rng.range(1, max_trip);
                let p = ty.prim();
                (
                    format!("{lo}{p}..{hi}{p}"),
                    ty,
                    Some((lo, hi)),
                    (hi - lo) as u64,
                )
            }
            2 if !arrays.is_empty() => {
                let a = arrays[self.rng.below(arrays.len())].clone();
                let VarKind::Array { len, .. } = a.kind else {
                    return;
                };
                (
                    format!("0..len({})", a.name),
                    Ty::I64,
                    Some((0, len as i64)),
                    len as u64,
                )
            }
            3 => {
                let ty = Ty::INTS[self.rng.below(3)].clone();
                let k = self.rng.range(1, max_trip);
                let x = Self::typed_ex(self.leaf(cx, &ty, false), &ty);
                let hi = format!("({} + {k})", x.text);
                (format!("{}..{hi}", x.text), ty, None, k as u64)
            }
            _ => {
                let lo = self.rng.range(-2, 3);
                let hi = lo + self.rng.range(0, max_trip);
                (
                    format!("{lo}..{hi}"),
                    Ty::I64,
                    Some((lo, hi)),
                    (hi - lo).max(0) as u64,
                )
            }
        };
        let trip = trip.max(1);
        if !self.loop_fits(cx, trip) {
            self.print_stmt(cx, out);
            return;
        }
        out.push(format!("for {name} in {head} {{"));
        self.loop_body(cx, trip, out, move |_, cx, _| {
            cx.declare(Var::new(name, ty, false, VarKind::LoopVar(range)));
        });
        out.push("}".into());
    }

    /// A loop body run `trip` times at most.
    pub(crate) fn loop_body(
        &mut self,
        cx: &mut Cx,
        trip: u64,
        out: &mut Vec<String>,
        prelude: impl FnOnce(&mut Self, &mut Cx, &mut Vec<String>),
    ) {
        let saved = cx.mult;
        cx.mult = cx.mult.saturating_mul(trip);
        cx.loop_depth += 1;
        let n = 1 + self.rng.below(self.cfg.max_stmts_per_block.max(1));
        self.block_with(cx, n, out, prelude);
        cx.loop_depth -= 1;
        cx.mult = saved;
    }

    /// `let mut w = 0; while w < N [&& c] { w += 1; ... }`.
    fn while_stmt(&mut self, cx: &mut Cx, out: &mut Vec<String>) {
        let bound = self.rng.range(1, self.cfg.max_loop_trip.max(1));
        if !self.loop_fits(cx, bound as u64) {
            self.print_stmt(cx, out);
            return;
        }
        let ty = Ty::INTS[self.rng.weighted(&[3, 1, 1])].clone();
        let w = cx.fresh("w");
        let (decl, one) = if ty == Ty::I64 {
            (format!("let mut {w} = 0;"), "1".to_string())
        } else {
            (
                format!("let mut {w}: {} = 0;", ty.prim()),
                format!("1{}", ty.prim()),
            )
        };
        out.push(decl);
        cx.declare(Var::new(w.clone(), ty.clone(), true, VarKind::Counter));
        let mut cond = format!("{w} < {bound}");
        if self.rng.chance(1, 3) {
            let d = self.depth();
            let extra = self.logic_operand(cx, d);
            cond = format!("({cond}) && {extra}");
        }
        out.push(format!("while {cond} {{"));
        let inc = format!("{w} += {one};");
        self.loop_body(cx, bound as u64, out, move |_, _, lines| lines.push(inc));
        out.push("}".into());
    }

    /// `if c { break; }` or `if c { continue; }` inside a loop.
    fn break_continue(&mut self, cx: &mut Cx, out: &mut Vec<String>) {
        let d = self.depth();
        let c = self.expr(cx, &Ty::Bool, d, false);
        let kw = if self.rng.chance(1, 2) {
            "break"
        } else {
            "continue"
        };
        if self.rng.chance(1, 3) {
            let e = self.expr(cx, &Ty::I64, 1, true);
            out.push(format!("if {} {{", c.text));
            out.push(format!("    print({});", e.text));
            out.push(format!("    {kw};"));
            out.push("}".into());
        } else {
            out.push(format!("if {} {{ {kw}; }}", c.text));
        }
    }

    /// `if c { return [e]; }`.
    fn early_return(&mut self, cx: &mut Cx, out: &mut Vec<String>) {
        let d = self.depth();
        let c = self.expr(cx, &Ty::Bool, d, false);
        let value = match cx.ret.clone() {
            Some(t) => format!(" {}", self.value_of(cx, &t, d)),
            None => String::new(),
        };
        out.push(format!("if {} {{", c.text));
        out.push(format!("    return{value};"));
        out.push("}".into());
    }

    /// A call whose result (if any) is discarded; the only use of unit functions.
    fn call_stmt(&mut self, cx: &mut Cx, out: &mut Vec<String>) {
        let d = self.depth().min(2);
        let cands: Vec<usize> = (0..cx.fn_limit.min(self.fns.len()))
            .filter(|&i| self.fns[i].kind != FnKind::Main && cx.can_afford(self.fns[i].cost))
            .collect();
        // Prefer unit functions: they have no other way to be called.
        let units: Vec<usize> = cands
            .iter()
            .copied()
            .filter(|&i| self.fns[i].ret.is_none())
            .collect();
        let pool = if !units.is_empty() && self.rng.chance(2, 3) {
            units
        } else {
            cands
        };
        if let Some(&i) = self.rng.pick(&pool) {
            let call = self.call_text(cx, i, d);
            let scalar = self.fns[i].ret.as_ref().is_some_and(Ty::is_scalar);
            if scalar && self.rng.chance(2, 3) {
                out.push(format!("print({call});"));
            } else {
                out.push(format!("{call};"));
            }
            return;
        }
        if self.cfg.features.generics && !self.templates.is_empty() {
            if let Some(e) = self.generic_call(cx, &Ty::I64, d) {
                out.push(format!("print({});", e.text));
                return;
            }
        }
        self.print_stmt(cx, out);
    }

    /// `let a = new [T; n];`, often filled by a loop.
    fn let_array(&mut self, cx: &mut Cx, out: &mut Vec<String>) {
        if !self.structs.is_empty() && self.rng.chance(1, 5) {
            self.let_struct_array(cx, out);
            return;
        }
        let elem = self.random_scalar();
        let name = cx.fresh("a");
        let p = elem.prim();
        let annotated = self.rng.chance(1, 3);
        let t = if annotated {
            format!(": [{p}]")
        } else {
            String::new()
        };
        if self.rng.prob(self.cfg.trap_probability) {
            out.push(format!("let {name}{t} = new [{p}; -1];"));
            cx.declare(Var::new(
                name,
                Ty::Array(Box::new(elem)),
                false,
                VarKind::Array {
                    len: 0,
                    exact: true,
                },
            ));
            return;
        }
        let len = 1 + self.rng.below(self.cfg.max_array_len.max(1));
        // Sometimes a run-time length in `len..len + 3`: then only `len` is known.
        let (len, exact, trips) = if len + 3 <= self.cfg.max_array_len && self.rng.chance(1, 4) {
            let e = self.expr(cx, &Ty::I64, 1, false);
            out.push(format!(
                "let {name}{t} = new [{p}; (({} & 3) + {len})];",
                e.text
            ));
            (len, false, len + 3)
        } else {
            out.push(format!("let {name}{t} = new [{p}; {len}];"));
            (len, true, len)
        };
        if self.rng.chance(2, 3) && cx.allow_loops && self.loop_fits(cx, trips as u64) {
            let i = cx.fresh("i");
            cx.push();
            let range = exact.then_some((0, len as i64));
            cx.declare(Var::new(i.clone(), Ty::I64, false, VarKind::LoopVar(range)));
            let saved = cx.mult;
            cx.mult = cx.mult.saturating_mul(trips as u64);
            cx.charge(1);
            let value = if elem == Ty::Bool {
                format!("(({i} & 1) == 0)")
            } else if elem == Ty::I64 {
                let e = self.expr(cx, &elem, 1, true);
                format!("(({i} * {}) ^ {})", self.rng.range(1, 9), e.text)
            } else {
                let e = self.expr(cx, &elem, 1, false);
                format!("(({i} as {p}) + {})", e.text)
            };
            cx.mult = saved;
            cx.pop();
            let bound = if exact {
                len.to_string()
            } else {
                format!("len({name})")
            };
            out.push(format!(
                "for {i} in 0..{bound} {{ {name}[{i}] = {value}; }}"
            ));
        }
        cx.declare(Var::new(
            name,
            Ty::Array(Box::new(elem)),
            false,
            VarKind::Array { len, exact },
        ));
    }

    /// `let a = new [S; n];` (elements start null), often filled by a loop.
    /// Its elements are read only behind null tests.
    fn let_struct_array(&mut self, cx: &mut Cx, out: &mut Vec<String>) {
        let s = self.rng.below(self.structs.len());
        let name = cx.fresh("a");
        let tyname = self.qual(cx.module, Item::Struct(s));
        let len = 1 + self.rng.below(self.cfg.max_array_len.max(1));
        out.push(format!("let {name} = new [{tyname}; {len}];"));
        if self.rng.chance(2, 3) && cx.allow_loops && self.loop_fits(cx, len as u64) {
            let i = cx.fresh("i");
            cx.push();
            cx.declare(Var::new(
                i.clone(),
                Ty::I64,
                false,
                VarKind::LoopVar(Some((0, len as i64))),
            ));
            let saved = cx.mult;
            cx.mult = cx.mult.saturating_mul(len as u64);
            cx.charge(1);
            let value = self.struct_value(cx, s, 1);
            cx.mult = saved;
            cx.pop();
            let skip = if self.rng.chance(1, 2) {
                format!("if ({i} & 1) == 1 {{ continue; }} ")
            } else {
                String::new()
            };
            out.push(format!(
                "for {i} in 0..{len} {{ {skip}{name}[{i}] = {value}; }}"
            ));
        }
        let ty = Ty::Array(Box::new(Ty::Struct(s)));
        cx.declare(Var::new(
            name,
            ty,
            false,
            VarKind::Array { len, exact: true },
        ));
    }

    /// A struct variable: `new S {..}`, `null`, or an alias of another one.
    fn let_struct(&mut self, cx: &mut Cx, out: &mut Vec<String>) {
        let s = self.rng.below(self.structs.len());
        let d = self.depth().min(2);
        let name = cx.fresh("s");
        let tyname = self.qual(cx.module, Item::Struct(s));
        let ty = Ty::Struct(s);
        match self.rng.weighted(&[6, 2, 2]) {
            1 => {
                out.push(format!("let mut {name}: {tyname} = null;"));
                cx.declare(Var::new(name, ty, true, VarKind::StructRef(Nullness::Null)));
            }
            2 => {
                let v = self.struct_value(cx, s, d);
                out.push(format!("let {name}: {tyname} = {v};"));
                cx.declare(Var::new(
                    name,
                    ty,
                    false,
                    VarKind::StructRef(Nullness::NonNull),
                ));
            }
            _ => {
                let v = self.struct_new(cx, s, d);
                let mutable = self.rng.chance(1, 3);
                out.push(format!(
                    "let {}{name} = {v};",
                    if mutable { "mut " } else { "" }
                ));
                cx.declare(Var::new(
                    name,
                    ty,
                    mutable,
                    VarKind::StructRef(Nullness::NonNull),
                ));
            }
        }
    }

    /// `if <operands with side effects> { ... }`.
    fn side_effect_if(&mut self, cx: &mut Cx, out: &mut Vec<String>) {
        let d = self.depth();
        let Some(a) = self.side_effect_bool(cx, d) else {
            self.print_stmt(cx, out);
            return;
        };
        let b = self.logic_operand(cx, d);
        let op = if self.rng.chance(1, 2) { "&&" } else { "||" };
        let neg = if self.rng.chance(1, 4) { "!" } else { "" };
        out.push(format!("if {neg}({a} {op} {b}) {{"));
        self.block(cx, out);
        out.push("}".into());
    }

    fn print_str(&mut self, cx: &mut Cx, out: &mut Vec<String>) {
        let here = self.str_globals_here(cx);
        let s = match self.rng.pick(&here).cloned() {
            Some(g) if self.rng.chance(1, 3) => g,
            _ => self.str_lit().0,
        };
        out.push(format!("print_str({s});"));
    }

    /// One instance of a program-wide statement shape (material for outlining).
    pub(crate) fn shape_stmt(&mut self, cx: &mut Cx, out: &mut Vec<String>) {
        let Some(shape) = self.rng.pick(&self.shapes).cloned() else {
            return;
        };
        let [c1, c2, c3] = shape.consts;
        let v = cx.fresh("h");
        match shape.id {
            1 if cx.allow_loops && self.loop_fits(cx, 6) => {
                let i = cx.fresh("i");
                let x = self.expr(cx, &Ty::I64, 2, true);
                out.push(format!("let mut {v} = {};", x.text));
                out.push(format!("for {i} in 0..6 {{"));
                out.push(format!("    {v} = ({v} * {c1}) ^ ({i} + {c2});"));
                out.push(format!(
                    "    if ({v} & {}) == 0 {{ {v} = {v} + {c3}; }}",
                    c3.rem_euclid(8)
                ));
                out.push("}".into());
                out.push(format!("print({v});"));
                cx.charge(6 * 2);
                cx.declare(Var::new(v, Ty::I64, true, VarKind::Local));
            }
            2 => {
                let x = self.expr(cx, &Ty::I64, 2, true);
                out.push(format!("let {v} = {};", x.text));
                out.push(format!(
                    "if ({v} & {}) == {} {{",
                    c1.rem_euclid(16),
                    c2.rem_euclid(16)
                ));
                out.push(format!("    print(({v} + {c3}));"));
                out.push("} else {".into());
                out.push(format!("    print(({v} - {c3}));"));
                out.push("}".into());
                cx.declare(Var::new(v, Ty::I64, false, VarKind::Local));
            }
            3 => {
                let x = self.expr(cx, &Ty::I32, 2, true);
                let w = cx.fresh("h");
                let k1 = self.lit_value(c1 as i128, &Ty::I32, true).text;
                let k2 = self.lit_value(c2 as i128, &Ty::I32, true).text;
                out.push(format!("let {v}: i32 = {};", x.text));
                out.push(format!("let {w}: i32 = ({v} * {k1}) + {k2};"));
                out.push(format!("print(({w} >> {}));", c3.rem_euclid(32)));
                cx.declare(Var::new(v, Ty::I32, false, VarKind::Local));
                cx.declare(Var::new(w, Ty::I32, false, VarKind::Local));
            }
            _ => {
                let x = self.expr(cx, &Ty::I64, 2, true);
                out.push(format!("let mut {v}: i64 = {};", x.text));
                out.push(format!("{v} = ({v} * {c1}) + ({v} ^ {c2});"));
                out.push(format!(
                    "{v} = ({v} >> {}) | ({v} << 3);",
                    c3.rem_euclid(64)
                ));
                out.push(format!("print({v});"));
                cx.declare(Var::new(v, Ty::I64, true, VarKind::Local));
            }
        }
    }
}
