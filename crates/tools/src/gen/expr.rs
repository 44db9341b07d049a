//! Typed expression generation.
//!
//! [`Gen::expr`] produces an expression of a requested scalar type from the
//! variables in scope, the program's globals, fields, array elements and the
//! callable functions and generic instances.
//!
//! Literal typing: Pare types an unsuffixed integer literal from its context
//! (a `let` with a declared type, a parameter, a field, the other operand of
//! an arithmetic or comparison operator, the return type) and otherwise as
//! `i64`. The generator writes an unsuffixed literal of a type other than
//! `i64` only where such a context exists: callers pass `bare_ok` to say
//! whether their position is one, and a binary operator lets at most one of
//! its operands be an unsuffixed literal. Shift operands, casts, `if`
//! branches, generic arguments of type parameters and assignments always get
//! typed literals.
//!
//! Safety: divisors are non-zero and never `-1` for a signed `/`, indices are
//! in range, fields are read through non-null references, unless a trap is
//! drawn with probability `trap_probability`. Every binary expression is
//! parenthesized, so comparisons never chain and `a < b` can never be
//! mistaken for generic arguments.

use super::model::{FnKind, Gen, Item, TemplateKind, Ty};
use super::scope::{Cx, Nullness, Var, VarKind};

/// A generated expression.
#[derive(Clone, Debug)]
pub(crate) struct Ex {
    pub text: String,
    /// An integer literal without suffix (typed by its context).
    pub lit: bool,
}

impl Ex {
    pub(crate) fn typed(text: String) -> Ex {
        Ex { text, lit: false }
    }
}

/// A function usable as the argument of a `fn(i64) -> i64` parameter.
enum FnArgCand {
    Fn(usize),
    Template(usize),
}

impl<'c, 'u, 'd> Gen<'c, 'u, 'd> {
    /// The names of the `str` globals of the module being generated.
    pub(crate) fn str_globals_here(&self, cx: &Cx) -> Vec<String> {
        self.strs
            .iter()
            .filter(|s| s.module == cx.module)
            .map(|s| s.name.clone())
            .collect()
    }

    /// An expression of scalar type `ty`, at most `depth` operators deep.
    pub(crate) fn expr(&mut self, cx: &mut Cx, ty: &Ty, depth: u32, bare_ok: bool) -> Ex {
        if depth == 0 {
            return self.leaf(cx, ty, bare_ok);
        }
        let made = if *ty == Ty::Bool {
            self.bool_expr(cx, depth)
        } else {
            self.int_expr(cx, ty, depth, bare_ok)
        };
        made.unwrap_or_else(|| self.leaf(cx, ty, bare_ok))
    }

    /// `ex` with a literal suffix if it is an unsuffixed literal.
    pub(crate) fn typed_ex(ex: Ex, ty: &Ty) -> Ex {
        if ex.lit {
            Ex::typed(format!("{}{}", ex.text, ty.prim()))
        } else {
            ex
        }
    }

    /// A variable or a literal.
    pub(crate) fn leaf(&mut self, cx: &mut Cx, ty: &Ty, bare_ok: bool) -> Ex {
        if self.rng.chance(2, 3) {
            if let Some(v) = self.var_read(cx, ty) {
                return v;
            }
        }
        self.lit(ty, bare_ok)
    }

    /// A scalar local, parameter, constant or global of type `ty`.
    fn var_read(&mut self, cx: &mut Cx, ty: &Ty) -> Option<Ex> {
        let locals = cx.vars_where(|v| {
            v.ty == *ty && !matches!(v.kind, VarKind::Array { .. } | VarKind::StructRef(_))
        });
        let globals: Vec<usize> = self.scalar_globals(ty);
        let n = locals.len() + globals.len();
        if n == 0 {
            return None;
        }
        let i = self.rng.below(n);
        if i < locals.len() {
            return Some(Ex::typed(locals[i].name.clone()));
        }
        Some(Ex::typed(
            self.qual(cx.module, Item::Global(globals[i - locals.len()])),
        ))
    }

    pub(crate) fn scalar_globals(&self, ty: &Ty) -> Vec<usize> {
        (0..self.globals.len())
            .filter(|&g| self.globals[g].ty == *ty)
            .collect()
    }

    // ----- literals -------------------------------------------------------

    /// A literal of scalar type `ty`; unsuffixed only if `bare_ok` (or `i64`).
    pub(crate) fn lit(&mut self, ty: &Ty, bare_ok: bool) -> Ex {
        match ty {
            Ty::Bool => Ex::typed(
                if self.rng.chance(1, 2) {
                    "true"
                } else {
                    "false"
                }
                .into(),
            ),
            Ty::U8 if self.rng.chance(1, 8) => Ex::typed(self.char_lit()),
            _ => {
                let v = if self.rng.prob(self.cfg.special_literal_probability) {
                    self.special_value(ty)
                } else if *ty == Ty::U8 {
                    self.rng.range(0, 40) as i128
                } else {
                    self.rng.range(-8, 40) as i128
                };
                self.lit_value(v, ty, bare_ok)
            }
        }
    }

    /// The literal `v` of integer type `ty` (wrapped to `ty` as Pare does).
    pub(crate) fn lit_value(&mut self, v: i128, ty: &Ty, bare_ok: bool) -> Ex {
        let neg = v < 0;
        let digits = self.magnitude_text(v.unsigned_abs());
        // A negative literal is `-` applied to a literal: give it its own type.
        let suffix = if (!bare_ok || neg) && *ty != Ty::I64 || self.rng.chance(1, 12) {
            ty.prim()
        } else {
            ""
        };
        let text = format!("{}{digits}{suffix}", if neg { "-" } else { "" });
        Ex {
            text,
            lit: suffix.is_empty(),
        }
    }

    /// Decimal, hexadecimal, binary or `_`-separated spelling of `m` (< 2^64).
    fn magnitude_text(&mut self, m: u128) -> String {
        match self.rng.weighted(&[12, 2, 1, 1]) {
            1 => format!("{m:#x}"),
            2 if m < 4096 => format!("{m:#b}"),
            3 if m >= 1000 => {
                let s = m.to_string();
                let mut out = String::new();
                for (i, c) in s.chars().enumerate() {
                    if i > 0 && (s.len() - i).is_multiple_of(3) {
                        out.push('_');
                    }
                    out.push(c);
                }
                out
            }
            _ => m.to_string(),
        }
    }

    /// Boundary and wrapping values (all fit in 64 bits as written).
    fn special_value(&mut self, ty: &Ty) -> i128 {
        const I64: [i128; 12] = [
            9223372036854775807,
            -9223372036854775808,
            -1,
            0,
            1 << 32,
            18446744073709551615,
            1 << 62,
            2147483648,
            -9223372036854775807,
            0x5555_5555_5555_5555,
            4294967295,
            1_000_000_007,
        ];
        const I32: [i128; 9] = [
            2147483647,
            -2147483648,
            -1,
            4294967295,
            65536,
            2147483648,
            0x7fff_0000,
            -65537,
            1 << 40,
        ];
        const U8: [i128; 8] = [255, 128, 127, 256, 300, 0x1ff, -1, 200];
        let table: &[i128] = match ty {
            Ty::I32 => &I32,
            Ty::U8 => &U8,
            _ => &I64,
        };
        table[self.rng.below(table.len())]
    }

    fn char_lit(&mut self) -> String {
        const CHARS: [&str; 10] = [
            "'a'", "'Z'", "'0'", "'\\n'", "'\\t'", "'\\\\'", "'\\''", "'\\x41'", "'\\0'", "' '",
        ];
        CHARS[self.rng.below(CHARS.len())].to_string()
    }

    /// A string literal with escapes, and its length in bytes.
    pub(crate) fn str_lit(&mut self) -> (String, usize) {
        const PARTS: [(&str, usize); 11] = [
            ("pare", 4),
            ("\\n", 1),
            ("\\t", 1),
            ("\\\"q\\\"", 3),
            ("\\x41", 1),
            ("-", 1),
            ("\\\\", 1),
            ("ok", 2),
            ("\\r", 1),
            ("\\0", 1),
            ("\\'", 1),
        ];
        let mut text = String::from("\"");
        let mut len = 0;
        for _ in 0..1 + self.rng.below(4) {
            let (t, l) = PARTS[self.rng.below(PARTS.len())];
            text += t;
            len += l;
        }
        text.push('"');
        (text, len)
    }

    // ----- integer expressions ------------------------------------------

    fn int_expr(&mut self, cx: &mut Cx, ty: &Ty, depth: u32, bare_ok: bool) -> Option<Ex> {
        let f = &self.cfg.features;
        let w = [
            3,                                  // literal
            6,                                  // variable
            7,                                  // arithmetic
            2,                                  // division, remainder
            2,                                  // shift
            1,                                  // unary
            2,                                  // cast
            if f.arrays { 3 } else { 0 },       // element
            if f.structs { 3 } else { 0 },      // field
            if cx.allow_calls { 3 } else { 0 }, // call
            if f.generics && cx.allow_calls { 3 } else { 0 },
            1,                                         // if expression
            1,                                         // block expression
            if f.arrays || f.strings { 1 } else { 0 }, // len, string byte
            if f.externs && cx.module == 0 && cx.allow_calls {
                1
            } else {
                0
            },
            if cx.fn_param.is_some() && *ty == Ty::I64 {
                6
            } else {
                0
            },
        ];
        let d = depth - 1;
        match self.rng.weighted(&w) {
            0 => Some(self.lit(ty, bare_ok)),
            1 => self.var_read(cx, ty),
            2 => Some(self.arith(cx, ty, d)),
            3 => Some(self.div_rem(cx, ty, d)),
            4 => Some(self.shift(cx, ty, d)),
            5 => {
                let e = self.expr(cx, ty, d, false);
                let op = if self.rng.chance(1, 2) { "-" } else { "!" };
                Some(Ex::typed(format!("({op}{})", e.text)))
            }
            6 => Some(self.cast(cx, ty, d)),
            7 => self.element(cx, ty, d),
            8 => self.field(cx, ty, d),
            9 => self.call(cx, ty, d),
            10 => self.generic_call(cx, ty, d),
            11 => Some(self.if_expr(cx, ty, d)),
            12 => Some(self.block_expr(cx, ty, d)),
            13 => self.len_or_byte(cx, ty, d),
            14 => self.extern_call(cx, ty, d),
            _ => Some(self.fn_param_call(cx, d)),
        }
    }

    fn arith(&mut self, cx: &mut Cx, ty: &Ty, d: u32) -> Ex {
        const OPS: [&str; 6] = ["+", "-", "*", "&", "|", "^"];
        let op = OPS[self.rng.below(OPS.len())];
        let l = self.expr(cx, ty, d, true);
        let r = self.expr(cx, ty, d, !l.lit || *ty == Ty::I64);
        Ex::typed(format!("({} {op} {})", l.text, r.text))
    }

    fn div_rem(&mut self, cx: &mut Cx, ty: &Ty, d: u32) -> Ex {
        let rem = self.rng.chance(1, 2);
        let op = if rem { "%" } else { "/" };
        if !rem && *ty != Ty::U8 && self.rng.prob(self.cfg.trap_probability) {
            // MIN / -1: division overflow.
            let min = if *ty == Ty::I64 {
                "-9223372036854775808"
            } else {
                "-2147483648i32"
            };
            let m1 = if *ty == Ty::I64 { "-1" } else { "-1i32" };
            return Ex::typed(format!("({min} {op} {m1})"));
        }
        let l = self.expr(cx, ty, d, true);
        let r_bare = !l.lit || *ty == Ty::I64;
        let r = if self.rng.prob(self.cfg.trap_probability) {
            self.lit_value(0, ty, r_bare)
        } else {
            self.safe_divisor(cx, ty, d, r_bare, rem)
        };
        Ex::typed(format!("({} {op} {})", l.text, r.text))
    }

    /// A divisor that is never 0, and never -1 for a signed division.
    fn safe_divisor(&mut self, cx: &mut Cx, ty: &Ty, d: u32, bare_ok: bool, rem: bool) -> Ex {
        match self.rng.below(4) {
            0 | 1 => {
                let v: i128 = if *ty == Ty::U8 {
                    self.rng.range(1, 255) as i128
                } else if rem && self.rng.chance(1, 6) {
                    -1 // MIN % -1 is 0, not a trap
                } else {
                    const DIVS: [i128; 10] = [2, 3, 7, 10, 16, -2, -5, 100, 1_000_003, 2147483647];
                    DIVS[self.rng.below(DIVS.len())]
                };
                self.lit_value(v, ty, bare_ok)
            }
            2 => {
                let e = self.expr(cx, ty, d, false);
                Ex::typed(format!("(({} & 15) + 1)", e.text))
            }
            _ => {
                let e = self.expr(cx, ty, d, false);
                Ex::typed(format!("(({} & 63) | 1)", e.text))
            }
        }
    }

    fn shift(&mut self, cx: &mut Cx, ty: &Ty, d: u32) -> Ex {
        let op = if self.rng.chance(1, 2) { "<<" } else { ">>" };
        let l = self.expr(cx, ty, d, false);
        let l = Self::typed_ex(l, ty);
        let amount_ty = Ty::INTS[self.rng.below(3)].clone();
        let r = if self.rng.chance(1, 3) {
            const AMOUNTS: [i128; 8] = [1, 3, 7, 31, 63, 64, 65, -1];
            let v = AMOUNTS[self.rng.below(AMOUNTS.len())];
            self.lit_value(v, &amount_ty, false)
        } else {
            self.expr(cx, &amount_ty, d, false)
        };
        Ex::typed(format!("({} {op} {})", l.text, r.text))
    }

    fn cast(&mut self, cx: &mut Cx, ty: &Ty, d: u32) -> Ex {
        let from: Vec<Ty> = Ty::SCALARS.iter().filter(|t| *t != ty).cloned().collect();
        let src = from[self.rng.below(from.len())].clone();
        let e = self.expr(cx, &src, d, false);
        Ex::typed(format!("({} as {})", e.text, ty.prim()))
    }

    /// An array element `a[i]` of type `ty` (local, parameter or global array).
    fn element(&mut self, cx: &mut Cx, ty: &Ty, d: u32) -> Option<Ex> {
        let arr_ty = Ty::Array(Box::new(ty.clone()));
        if self.rng.chance(1, 5) {
            if let Some(e) = self.picked_element(cx, &arr_ty, d) {
                return Some(e);
            }
        }
        let (name, len) = self.pick_array(cx, &arr_ty, 1)?;
        let idx = self.index(cx, Some(&name), len, d);
        Some(Ex::typed(format!("{name}[{idx}]")))
    }

    /// The index of a `Pick` template, if the program has one.
    fn pick_template_index(&self) -> Option<usize> {
        self.templates
            .iter()
            .position(|t| t.kind == TemplateKind::Pick)
    }

    /// `pick<[T]>(c, a, b)[i]`: a type parameter instantiated with an array type.
    fn picked_element(&mut self, cx: &mut Cx, arr_ty: &Ty, d: u32) -> Option<Ex> {
        let t = self.pick_template_index()?;
        if !cx.allow_calls || !cx.can_afford(self.templates[t].base_cost) {
            return None;
        }
        let (a, la) = self.pick_array(cx, arr_ty, 1)?;
        let (b, lb) = self.pick_array(cx, arr_ty, 1)?;
        let name = self.qual(cx.module, Item::Template(t));
        let targ = self.ty_text(cx.module, arr_ty);
        let c = self.expr(cx, &Ty::Bool, d, false);
        cx.charge(self.templates[t].base_cost);
        self.templates[t].uses += 1;
        let call = format!("{name}<{targ}>({}, {a}, {b})", c.text);
        // No `len(..) - 1` here: a parameter array may be longer than its known length.
        let idx = self.index(cx, None, la.min(lb), d);
        Some(Ex::typed(format!("{call}[{idx}]")))
    }

    /// `pick<S>(c, p, q).f`: a type parameter instantiated with a struct type.
    fn picked_field(&mut self, cx: &mut Cx, ty: &Ty, d: u32) -> Option<Ex> {
        let t = self.pick_template_index()?;
        if !cx.allow_calls || !cx.can_afford(self.templates[t].base_cost) {
            return None;
        }
        let with_field: Vec<usize> = (0..self.structs.len())
            .filter(|&s| self.structs[s].fields.iter().any(|(_, ft)| ft == ty))
            .collect();
        let s = *self.rng.pick(&with_field)?;
        let name = self.qual(cx.module, Item::Template(t));
        let targ = self.ty_text(cx.module, &Ty::Struct(s));
        let c = self.expr(cx, &Ty::Bool, d, false);
        let p = self.struct_value(cx, s, d.saturating_sub(1));
        let q = self.struct_value(cx, s, d.saturating_sub(1));
        cx.charge(self.templates[t].base_cost);
        self.templates[t].uses += 1;
        let fields: Vec<String> = self.structs[s]
            .fields
            .iter()
            .filter(|(_, ft)| ft == ty)
            .map(|(n, _)| n.clone())
            .collect();
        let f = fields[self.rng.below(fields.len())].clone();
        Some(Ex::typed(format!(
            "{name}<{targ}>({}, {p}, {q}).{f}",
            c.text
        )))
    }

    /// A visible array variable or global array of type `arr_ty` with at
    /// least `min_len` elements: its text and known length.
    pub(crate) fn pick_array(
        &mut self,
        cx: &mut Cx,
        arr_ty: &Ty,
        min_len: usize,
    ) -> Option<(String, usize)> {
        let mut cands: Vec<(Option<String>, Option<usize>, usize)> = Vec::new();
        for v in cx.vars_where(|v| v.ty == *arr_ty) {
            if let VarKind::Array { len, .. } = v.kind {
                if len >= min_len {
                    cands.push((Some(v.name), None, len));
                }
            }
        }
        for (g, def) in self.globals.iter().enumerate() {
            if def.ty == *arr_ty && def.len >= min_len {
                cands.push((None, Some(g), def.len));
            }
        }
        let i = self.rng.below(cands.len());
        let (name, global, len) = cands.get(i)?.clone();
        let text = match (name, global) {
            (Some(n), _) => n,
            (None, Some(g)) => self.qual(cx.module, Item::Global(g)),
            (None, None) => return None,
        };
        Some((text, len))
    }

    /// An index into `arr` (known length `len` ≥ 1): in range unless a trap is drawn.
    /// `arr` is the array's text when `len(arr) - 1` may be used.
    pub(crate) fn index(&mut self, cx: &mut Cx, arr: Option<&str>, len: usize, d: u32) -> String {
        if self.rng.prob(self.cfg.trap_probability) {
            return match self.rng.below(3) {
                0 => len.to_string(),
                1 => "-1".to_string(),
                _ => arr
                    .map(|a| format!("len({a})"))
                    .unwrap_or_else(|| len.to_string()),
            };
        }
        let loop_vars = cx.vars_where(
            |v| matches!(v.kind, VarKind::LoopVar(Some((lo, hi))) if lo >= 0 && hi <= len as i64),
        );
        // `i - 1` for a counter from at least 1 (the shape whose bounds
        // check GVN proves redundant: `xs[i - 1]` in `for i in 1..n`).
        let decremented = cx.vars_where(
            |v| matches!(v.kind, VarKind::LoopVar(Some((lo, hi))) if lo >= 1 && hi <= len as i64 + 1),
        );
        match self.rng.below(5) {
            1 if !loop_vars.is_empty() => loop_vars[self.rng.below(loop_vars.len())].name.clone(),
            4 if !decremented.is_empty() => {
                let v = &decremented[self.rng.below(decremented.len())];
                format!("({} - 1)", v.name)
            }
            2 => {
                let mask = (len + 1).next_power_of_two() / 2 - 1;
                let ity = Ty::INTS[self.rng.below(3)].clone();
                let e = self.expr(cx, &ity, d, false);
                format!("({} & {mask})", e.text)
            }
            3 if arr.is_some() => format!("(len({}) - 1)", arr.unwrap_or_default()),
            _ => {
                let k = self.rng.below(len) as i128;
                let ity = Ty::INTS[self.rng.below(3)].clone();
                self.lit_value(k, &ity, false).text
            }
        }
    }

    /// An in-range index without side effects: a literal or a loop variable.
    fn pure_index(&mut self, cx: &Cx, len: usize) -> String {
        let loop_vars = cx.vars_where(
            |v| matches!(v.kind, VarKind::LoopVar(Some((lo, hi))) if lo >= 0 && hi <= len as i64),
        );
        match self.rng.pick(&loop_vars) {
            Some(v) if self.rng.chance(1, 2) => v.name.clone(),
            _ => self.rng.below(len).to_string(),
        }
    }

    /// A field of type `ty` read through a struct variable or global.
    fn field(&mut self, cx: &mut Cx, ty: &Ty, d: u32) -> Option<Ex> {
        if self.rng.chance(1, 5) {
            if let Some(e) = self.picked_field(cx, ty, d) {
                return Some(e);
            }
        }
        // (variable name or global index, struct, nullness)
        let mut cands: Vec<(Result<String, usize>, usize, Nullness)> = Vec::new();
        for v in cx.visible() {
            if let (Ty::Struct(s), VarKind::StructRef(n)) = (&v.ty, &v.kind) {
                cands.push((Ok(v.name.clone()), *s, *n));
                // `p.r.f`: through a reference field, which may be null.
                if *n == Nullness::NonNull {
                    for (f, t) in &self.structs[*s].fields {
                        if let Ty::Struct(target) = t {
                            cands.push((Ok(format!("{}.{f}", v.name)), *target, Nullness::Unknown));
                        }
                    }
                }
            }
        }
        for g in 0..self.globals.len() {
            if let Ty::Struct(s) = self.globals[g].ty {
                cands.push((Err(g), s, Nullness::Unknown));
            }
        }
        // `a[k].f` in an array of structs. The null test evaluates `a[k]`
        // twice, so `k` must have no side effects: a literal or loop variable.
        for v in cx.vars_where(|v| matches!(v.kind, VarKind::Array { len, .. } if len > 0)) {
            if let (Ty::Array(elem), VarKind::Array { len, .. }) = (&v.ty, &v.kind) {
                if let Ty::Struct(s) = **elem {
                    let k = self.pure_index(cx, *len);
                    cands.push((Ok(format!("{}[{k}]", v.name)), s, Nullness::Unknown));
                }
            }
        }
        cands.retain(|(_, s, _)| self.structs[*s].fields.iter().any(|(_, t)| t == ty));
        let (var, s, null) = cands.get(self.rng.below(cands.len()))?.clone();
        let name = match var {
            Ok(n) => n,
            Err(g) => self.qual(cx.module, Item::Global(g)),
        };
        let fields: Vec<String> = self.structs[s]
            .fields
            .iter()
            .filter(|(_, t)| t == ty)
            .map(|(n, _)| n.clone())
            .collect();
        let f = fields[self.rng.below(fields.len())].clone();
        let trap = self.rng.prob(self.cfg.trap_probability);
        Some(match null {
            Nullness::NonNull => Ex::typed(format!("{name}.{f}")),
            Nullness::Null if !trap => {
                let dflt = Self::typed_ex(self.expr(cx, ty, d, false), ty);
                Ex::typed(format!(
                    "(if {name} == null {{ {} }} else {{ {name}.{f} }})",
                    dflt.text
                ))
            }
            Nullness::Unknown if !trap => {
                let dflt = Self::typed_ex(self.expr(cx, ty, d, false), ty);
                Ex::typed(format!(
                    "(if {name} != null {{ {name}.{f} }} else {{ {} }})",
                    dflt.text
                ))
            }
            _ => Ex::typed(format!("{name}.{f}")),
        })
    }

    // ----- calls -----------------------------------------------------------

    /// A call of an earlier function returning `ty`, if one fits the budget.
    fn call(&mut self, cx: &mut Cx, ty: &Ty, d: u32) -> Option<Ex> {
        let cands: Vec<usize> = (0..cx.fn_limit.min(self.fns.len()))
            .filter(|&i| {
                let f = &self.fns[i];
                f.ret.as_ref() == Some(ty) && f.kind != FnKind::Main && cx.can_afford(f.cost)
            })
            .collect();
        let i = *self.rng.pick(&cands)?;
        Some(Ex::typed(self.call_text(cx, i, d)))
    }

    /// `f(args)` for function `i`, charged to `cx`.
    pub(crate) fn call_text(&mut self, cx: &mut Cx, i: usize, d: u32) -> String {
        cx.charge(self.fns[i].cost);
        self.fns[i].calls += 1;
        let name = self.qual(cx.module, Item::Fn(i));
        let params = self.fns[i].params.clone();
        let is_rec = self.fns[i].kind == FnKind::Rec;
        let mut args = Vec::new();
        for (k, p) in params.iter().enumerate() {
            if is_rec && k == 0 {
                args.push(self.depth_arg(cx, d));
            } else {
                args.push(self.arg(cx, &p.ty, p.min_len, d));
            }
        }
        format!("{name}({})", args.join(", "))
    }

    /// An argument for a parameter of (concrete) type `ty`.
    pub(crate) fn arg(&mut self, cx: &mut Cx, ty: &Ty, min_len: usize, d: u32) -> String {
        match ty {
            Ty::Array(elem) => match self.pick_array(cx, ty, min_len) {
                Some((name, _)) => name,
                None => {
                    let n = min_len.max(1) + self.rng.below(3);
                    format!("new [{}; {n}]", elem.prim())
                }
            },
            Ty::Struct(s) => self.struct_value(cx, *s, d),
            scalar => self.expr(cx, scalar, d, true).text,
        }
    }

    /// A recursion depth argument: small, so recursion stays bounded.
    fn depth_arg(&mut self, cx: &mut Cx, d: u32) -> String {
        match self.rng.below(3) {
            2 => {
                let e = self.expr(cx, &Ty::I64, d, false);
                format!("({} & 7)", e.text)
            }
            1 => "-2".to_string(),
            _ => self.rng.range(0, self.cfg.max_rec_depth).to_string(),
        }
    }

    /// A returned value of type `ty` (a return type: scalar or struct).
    pub(crate) fn value_of(&mut self, cx: &mut Cx, ty: &Ty, d: u32) -> String {
        match ty {
            Ty::Struct(s) => self.struct_value(cx, *s, d),
            // The return type gives an unsuffixed literal its type.
            _ => self.expr(cx, ty, d, true).text,
        }
    }

    /// A non-null reference to a struct of type `s`: a variable, a call of a
    /// function returning one, or a new struct.
    pub(crate) fn struct_value(&mut self, cx: &mut Cx, s: usize, d: u32) -> String {
        if d > 0 && cx.allow_calls && self.rng.chance(1, 4) {
            let makers: Vec<usize> = (0..cx.fn_limit.min(self.fns.len()))
                .filter(|&i| {
                    self.fns[i].ret == Some(Ty::Struct(s)) && cx.can_afford(self.fns[i].cost)
                })
                .collect();
            if let Some(&i) = self.rng.pick(&makers) {
                return self.call_text(cx, i, d - 1);
            }
        }
        let vars = cx.vars_where(|v| {
            v.ty == Ty::Struct(s) && matches!(v.kind, VarKind::StructRef(Nullness::NonNull))
        });
        if !vars.is_empty() && self.rng.chance(3, 4) {
            return vars[self.rng.below(vars.len())].name.clone();
        }
        self.struct_new(cx, s, d)
    }

    /// `new S { ... }` with the fields in a random order.
    pub(crate) fn struct_new(&mut self, cx: &mut Cx, s: usize, d: u32) -> String {
        let name = self.qual(cx.module, Item::Struct(s));
        let mut fields = self.structs[s].fields.clone();
        for i in (1..fields.len()).rev() {
            let j = self.rng.below(i + 1);
            fields.swap(i, j);
        }
        let inits: Vec<String> = fields
            .iter()
            .map(|(f, t)| {
                let value = match t {
                    // Bounded by `d`: a struct may refer to its own type.
                    Ty::Struct(target) if d > 0 && self.rng.chance(1, 2) => {
                        self.struct_value(cx, *target, d - 1)
                    }
                    Ty::Struct(_) => "null".to_string(),
                    scalar => self.expr(cx, scalar, d, true).text,
                };
                format!("{f}: {value}")
            })
            .collect();
        format!("new {name} {{ {} }}", inits.join(", "))
    }

    fn extern_call(&mut self, cx: &mut Cx, ty: &Ty, d: u32) -> Option<Ex> {
        let (name, decl, shift) = match ty {
            Ty::I64 => ("labs", "extern fn labs(x: i64) -> i64;", 2),
            // With stdin closed (as every executor runs programs), `getchar` is -1.
            Ty::I32 if self.rng.chance(1, 4) => {
                self.modules[0]
                    .externs
                    .insert("extern fn getchar() -> i32;");
                return Some(Ex::typed("getchar()".into()));
            }
            Ty::I32 => ("abs", "extern fn abs(x: i32) -> i32;", 1),
            _ => return None,
        };
        self.modules[0].externs.insert(decl);
        let e = Self::typed_ex(self.expr(cx, ty, d, false), ty);
        // The shift keeps the argument away from MIN, whose absolute value is undefined in C.
        Some(Ex::typed(format!("{name}(({} >> {shift}))", e.text)))
    }

    /// `op(x)` inside a template with a function parameter `op`.
    fn fn_param_call(&mut self, cx: &mut Cx, d: u32) -> Ex {
        let op = cx.fn_param.clone().unwrap_or_default();
        cx.f_calls += cx.mult;
        let e = self.expr(cx, &Ty::I64, d, true);
        Ex::typed(format!("{op}({})", e.text))
    }

    fn len_or_byte(&mut self, cx: &mut Cx, ty: &Ty, d: u32) -> Option<Ex> {
        match ty {
            Ty::I64 => {
                let arrays = cx.vars_where(|v| matches!(v.kind, VarKind::Array { .. }));
                if !arrays.is_empty() && self.rng.chance(2, 3) {
                    return Some(Ex::typed(format!(
                        "len({})",
                        arrays[self.rng.below(arrays.len())].name
                    )));
                }
                let here = self.str_globals_here(cx);
                if let Some(sg) = self.rng.pick(&here).cloned() {
                    if self.rng.chance(1, 2) {
                        return Some(Ex::typed(format!("len({sg})")));
                    }
                }
                let (s, _) = self.str_lit();
                Some(Ex::typed(format!("len({s})")))
            }
            Ty::U8 if self.cfg.features.strings => {
                let here: Vec<(String, usize)> = self
                    .strs
                    .iter()
                    .filter(|s| s.module == cx.module)
                    .map(|s| (s.name.clone(), s.len))
                    .collect();
                let (s, len) = match self.rng.pick(&here).cloned() {
                    Some(g) if self.rng.chance(2, 3) => g,
                    _ => self.str_lit(),
                };
                let idx = self.index(cx, Some(&s), len, d);
                Some(Ex::typed(format!("{s}[{idx}]")))
            }
            _ => None,
        }
    }

    // ----- control-flow expressions ----------------------------------------

    /// `(if c { ... a } else { ... b })`, sometimes with an `else if`.
    fn if_expr(&mut self, cx: &mut Cx, ty: &Ty, d: u32) -> Ex {
        let c = self.expr(cx, &Ty::Bool, d, false);
        let a = self.value_block(cx, ty, d);
        let mut text = format!("(if {} {a}", c.text);
        if self.rng.chance(1, 4) {
            let c2 = self.expr(cx, &Ty::Bool, d, false);
            let b = self.value_block(cx, ty, d);
            text += &format!(" else if {} {b}", c2.text);
        }
        let e = self.value_block(cx, ty, d);
        text += &format!(" else {e})");
        Ex::typed(text)
    }

    fn block_expr(&mut self, cx: &mut Cx, ty: &Ty, d: u32) -> Ex {
        Ex::typed(format!("({})", self.value_block(cx, ty, d)))
    }

    /// `{ stmts tail }` on one line, its value of type `ty`.
    pub(crate) fn value_block(&mut self, cx: &mut Cx, ty: &Ty, d: u32) -> String {
        cx.push();
        let mut parts = Vec::new();
        if self.rng.chance(1, 3) {
            let n = 1 + self.rng.below(2);
            for _ in 0..n {
                parts.extend(self.inline_stmt(cx, d));
            }
        }
        let tail = self.expr(cx, ty, d, false);
        let tail = Self::typed_ex(tail, ty);
        cx.pop();
        parts.push(tail.text);
        format!("{{ {} }}", parts.join(" "))
    }

    // ----- bool expressions ----------------------------------------------

    fn bool_expr(&mut self, cx: &mut Cx, depth: u32) -> Option<Ex> {
        let f = &self.cfg.features;
        let w = [
            1,                                                // literal
            4,                                                // variable
            8,                                                // comparison
            2,                                                // bool equality
            if f.structs || f.arrays { 2 } else { 0 },        // reference equality
            2,                                                // not
            4,                                                // && ||
            if cx.allow_calls { 2 } else { 0 },               // call
            if f.arrays { 1 } else { 0 },                     // element
            if f.structs { 1 } else { 0 },                    // field
            1,                                                // if expression
            if f.generics && cx.allow_calls { 1 } else { 0 }, // pick<bool>
            if f.strings && cx.allow_calls && !self.str_fns.is_empty() {
                2
            } else {
                0
            }, // str identity
        ];
        let d = depth - 1;
        match self.rng.weighted(&w) {
            0 => Some(self.lit(&Ty::Bool, false)),
            1 => self.var_read(cx, &Ty::Bool),
            2 => Some(self.comparison(cx, d)),
            3 => {
                let a = self.expr(cx, &Ty::Bool, d, false);
                let b = self.expr(cx, &Ty::Bool, d, false);
                let op = if self.rng.chance(1, 2) { "==" } else { "!=" };
                Some(Ex::typed(format!("({} {op} {})", a.text, b.text)))
            }
            4 => self.ref_eq(cx),
            5 => {
                let e = self.expr(cx, &Ty::Bool, d, false);
                Some(Ex::typed(format!("(!{})", e.text)))
            }
            6 => Some(self.logic(cx, d)),
            7 => self.call(cx, &Ty::Bool, d),
            8 => self.element(cx, &Ty::Bool, d),
            9 => self.field(cx, &Ty::Bool, d),
            10 => Some(self.if_expr(cx, &Ty::Bool, d)),
            11 => self.generic_call(cx, &Ty::Bool, d),
            _ => self.str_compare(cx, d).map(Ex::typed),
        }
    }

    pub(crate) fn comparison(&mut self, cx: &mut Cx, d: u32) -> Ex {
        const OPS: [&str; 6] = ["<", "<=", ">", ">=", "==", "!="];
        let ty = Ty::INTS[self.rng.below(3)].clone();
        let op = OPS[self.rng.below(OPS.len())];
        let a = self.expr(cx, &ty, d, true);
        let b = self.expr(cx, &ty, d, !a.lit || ty == Ty::I64);
        Ex::typed(format!("({} {op} {})", a.text, b.text))
    }

    /// `p == q`, `p != null`, `a == b` on references.
    fn ref_eq(&mut self, cx: &mut Cx) -> Option<Ex> {
        let refs =
            cx.vars_where(|v| matches!(v.kind, VarKind::StructRef(_) | VarKind::Array { .. }));
        let a: Var = refs.get(self.rng.below(refs.len()))?.clone();
        let same: Vec<&Var> = refs.iter().filter(|v| v.ty == a.ty).collect();
        let other = if self.rng.chance(1, 2) {
            same[self.rng.below(same.len())].name.clone()
        } else {
            "null".into()
        };
        let op = if self.rng.chance(1, 2) { "==" } else { "!=" };
        Some(Ex::typed(format!("({} {op} {other})", a.name)))
    }

    /// `a && b` / `a || b`, often with side effects (prints, counter bumps) in the operands.
    fn logic(&mut self, cx: &mut Cx, d: u32) -> Ex {
        let op = if self.rng.chance(1, 2) { "&&" } else { "||" };
        let a = self.logic_operand(cx, d);
        let b = self.logic_operand(cx, d);
        Ex::typed(format!("({a} {op} {b})"))
    }

    pub(crate) fn logic_operand(&mut self, cx: &mut Cx, d: u32) -> String {
        if self.cfg.features.side_effects && cx.allow_calls && self.rng.chance(1, 2) {
            if let Some(e) = self.side_effect_bool(cx, d) {
                return e;
            }
        }
        self.expr(cx, &Ty::Bool, d, false).text
    }

    /// A bool expression that prints or bumps a counter when evaluated.
    pub(crate) fn side_effect_bool(&mut self, cx: &mut Cx, d: u32) -> Option<String> {
        let kind = if self.rng.chance(1, 2) {
            FnKind::Flag
        } else {
            FnKind::Note
        };
        let cands: Vec<usize> = (0..cx.fn_limit.min(self.fns.len()))
            .filter(|&i| self.fns[i].kind == kind && cx.can_afford(self.fns[i].cost))
            .collect();
        let i = *self.rng.pick(&cands)?;
        cx.charge(self.fns[i].cost);
        self.fns[i].calls += 1;
        let name = self.qual(cx.module, Item::Fn(i));
        let tag = self.rng.range(100, 999);
        Some(if kind == FnKind::Flag {
            let b = self.expr(cx, &Ty::Bool, d, false);
            format!("{name}({}, {tag})", b.text)
        } else {
            let x = self.expr(cx, &Ty::I64, d, true);
            let op = ["<", ">", "==", "!="][self.rng.below(4)];
            format!("({name}({}) {op} {tag})", x.text)
        })
    }

    // ----- generic instances -----------------------------------------------

    /// A call of a generic instance returning `ty`.
    pub(crate) fn generic_call(&mut self, cx: &mut Cx, ty: &Ty, d: u32) -> Option<Ex> {
        let cands: Vec<usize> = (0..self.templates.len())
            .filter(|&t| match &self.templates[t].kind {
                TemplateKind::Scale(k) => k == ty,
                TemplateKind::Gate
                | TemplateKind::Apply { .. }
                | TemplateKind::Fold
                | TemplateKind::Chain { .. } => *ty == Ty::I64,
                TemplateKind::Pick => ty.is_scalar(),
                TemplateKind::Mix => ty.is_int(),
            })
            .collect();
        let t = *self.rng.pick(&cands)?;
        self.instance_call(cx, t, ty, d).map(Ex::typed)
    }

    /// A call of an instance of template `t` with result type `ty`, or `None`
    /// if no instance fits the budget.
    pub(crate) fn instance_call(
        &mut self,
        cx: &mut Cx,
        t: usize,
        ty: &Ty,
        d: u32,
    ) -> Option<String> {
        let kind = self.templates[t].kind.clone();
        let base = self.templates[t].base_cost;
        let f_calls = self.templates[t].f_calls;
        if !cx.can_afford(base) {
            return None;
        }
        let name = self.qual(cx.module, Item::Template(t));
        let (text, cost) = match kind {
            TemplateKind::Scale(k) => {
                let karg = self.const_arg(&k);
                let x = self.expr(cx, &k, d, true);
                (format!("{name}<{karg}>({})", x.text), base)
            }
            TemplateKind::Gate => {
                let b = if self.rng.chance(1, 2) {
                    "true"
                } else {
                    "false"
                };
                let x = self.expr(cx, &Ty::I64, d, true);
                (format!("{name}<{b}>({})", x.text), base)
            }
            TemplateKind::Chain { .. } => {
                let karg = self.const_arg(&Ty::I64);
                let x = self.expr(cx, &Ty::I64, d, true);
                (format!("{name}<{karg}>({})", x.text), base)
            }
            TemplateKind::Apply { with_const } => {
                let room = self.room_per_call(cx, base, f_calls);
                let (f, fcost) = self.fn_arg(cx, 0, room)?;
                let extra = if with_const {
                    format!(", {}", self.const_arg(&Ty::I64))
                } else {
                    String::new()
                };
                let x = self.expr(cx, &Ty::I64, d, true);
                (
                    format!("{name}<{f}{extra}>({})", x.text),
                    base + f_calls * fcost,
                )
            }
            TemplateKind::Fold => {
                let room = self.room_per_call(cx, base, f_calls);
                let (f, fcost) = self.fn_arg(cx, 0, room)?;
                let xs = self.arg(cx, &Ty::Array(Box::new(Ty::I64)), 0, d);
                (format!("{name}<{f}>({xs})"), base + f_calls * fcost)
            }
            TemplateKind::Pick => {
                let c = self.expr(cx, &Ty::Bool, d, false);
                let a = self.expr(cx, ty, d, false);
                let b = self.expr(cx, ty, d, false);
                let targs = if *ty == Ty::I64 && self.rng.chance(1, 2) {
                    String::new()
                } else {
                    format!("<{}>", ty.prim())
                };
                (
                    format!("{name}{targs}({}, {}, {})", c.text, a.text, b.text),
                    base,
                )
            }
            TemplateKind::Mix => {
                let a = Self::typed_ex(self.expr(cx, ty, d, false), ty);
                let b = self.expr(cx, ty, d, false);
                let targs = if self.rng.chance(1, 2) {
                    String::new()
                } else {
                    format!("<{}>", ty.prim())
                };
                (format!("{name}{targs}({}, {})", a.text, b.text), base)
            }
        };
        if !cx.can_afford(cost) {
            return None;
        }
        cx.charge(cost);
        self.templates[t].uses += 1;
        Some(text)
    }

    /// The most a function argument may cost per call of a template instance.
    fn room_per_call(&self, cx: &Cx, base: u64, f_calls: u64) -> u64 {
        let left = cx.budget.saturating_sub(cx.cost) / cx.mult.max(1);
        left.saturating_sub(base) / f_calls.max(1)
    }

    /// A constant generic argument of type `ty`.
    pub(crate) fn const_arg(&mut self, ty: &Ty) -> String {
        // A character literal is a bare `u8` constant argument (`count<'l'>`).
        if *ty == Ty::U8 && self.rng.chance(1, 4) {
            return self.char_lit();
        }
        let sfx = if *ty == Ty::I64 { "" } else { ty.prim() };
        match self.rng.below(7) {
            1 => format!("-{}{sfx}", self.rng.range(1, 9)),
            2 if *ty == Ty::I64 => "9223372036854775807".into(),
            3 => format!(
                "({}{sfx} + {}{sfx})",
                self.rng.range(0, 9),
                self.rng.range(1, 9)
            ),
            4 => format!(
                "{{{}{sfx} * {}{sfx}}}",
                self.rng.range(1, 9),
                self.rng.range(1, 9)
            ),
            _ => format!("{}{sfx}", self.rng.range(0, 12)),
        }
    }

    /// A function argument for a `fn(i64) -> i64` parameter costing at most
    /// `max_cost` per call: an earlier function or a template instance.
    /// Returns its text and cost.
    pub(crate) fn fn_arg(
        &mut self,
        cx: &mut Cx,
        level: u32,
        max_cost: u64,
    ) -> Option<(String, u64)> {
        let mut cands = Vec::new();
        for i in 0..cx.fn_limit.min(self.fns.len()) {
            let f = &self.fns[i];
            if f.params.len() == 1
                && f.params[0].ty == Ty::I64
                && f.ret == Some(Ty::I64)
                && matches!(f.kind, FnKind::Note | FnKind::Regular)
                && f.cost <= max_cost
            {
                cands.push(FnArgCand::Fn(i));
            }
        }
        for (t, tpl) in self.templates.iter().enumerate() {
            let sig_ok = match tpl.kind {
                TemplateKind::Scale(ref k) => *k == Ty::I64,
                TemplateKind::Gate | TemplateKind::Chain { .. } => true,
                TemplateKind::Apply { .. } => level == 0,
                _ => false,
            };
            if sig_ok && tpl.base_cost <= max_cost {
                cands.push(FnArgCand::Template(t));
            }
        }
        let pick = self.rng.below(cands.len());
        match cands.get(pick)? {
            FnArgCand::Fn(i) => {
                let i = *i;
                self.fns[i].calls += 1;
                Some((self.qual(cx.module, Item::Fn(i)), self.fns[i].cost))
            }
            FnArgCand::Template(t) => {
                let t = *t;
                let name = self.qual(cx.module, Item::Template(t));
                let base = self.templates[t].base_cost;
                let out = match self.templates[t].kind.clone() {
                    TemplateKind::Scale(_) | TemplateKind::Chain { .. } => {
                        Some((format!("{name}<{}>", self.const_arg(&Ty::I64)), base))
                    }
                    TemplateKind::Gate => Some((
                        format!(
                            "{name}<{}>",
                            if self.rng.chance(1, 2) {
                                "true"
                            } else {
                                "false"
                            }
                        ),
                        base,
                    )),
                    TemplateKind::Apply { with_const } => {
                        let f_calls = self.templates[t].f_calls.max(1);
                        let room = max_cost.saturating_sub(base) / f_calls;
                        let (inner, icost) = self.fn_arg(cx, level + 1, room)?;
                        let extra = if with_const {
                            format!(", {}", self.const_arg(&Ty::I64))
                        } else {
                            String::new()
                        };
                        Some((format!("{name}<{inner}{extra}>"), base + f_calls * icost))
                    }
                    _ => None,
                };
                if out.is_some() {
                    self.templates[t].uses += 1;
                }
                out
            }
        }
    }
}
