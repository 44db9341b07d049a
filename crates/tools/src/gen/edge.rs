//! Constructs at the edges of LANGUAGE.md's rules, where bugs were found by
//! hand before the generator produced them (issue 18 §4):
//!
//! - `for` ranges whose bounds are expressions of every integer type, with
//!   an untyped literal (or constant expression of untyped literals) taking
//!   the other bound's type and wrapping to it (`b..260` with `b: u8` ends at
//!   `4`), bounds at the type's maximum (the counter must not wrap), and
//!   bounds with side effects (each evaluated once, low bound first);
//! - functions returning `str` literals, compared with `==`/`!=` against
//!   literals written in other modules and with other spellings of the same
//!   bytes (`"abc"` and `"\x61bc"` are one object), `null`, and `str` globals;
//! - recursion thousands of frames deep (well under the 100,000 frames
//!   LANGUAGE.md guarantees for small frames), plain and mutual across
//!   modules; with probability `trap_probability` 1,000,000 deep, which traps
//!   `stack overflow` in every executor;
//! - compound assignments `place op= e` whose `e` calls a probe that prints
//!   and assigns the counter global, whose place may be that very global (the
//!   old value is used), an array element (possibly out of bounds: the trap
//!   comes before `e` runs) or a field (possibly through `null`), with
//!   division by zero after `e` ran.
//!
//! Everything stays type-correct and terminating: trip counts are bounded by
//! construction (masked low bounds, known high bounds). The traps of the
//! compound assignments are drawn with ten times `trap_probability` (their
//! point is the order of the trap and the operand's output), the million-deep
//! recursion with `trap_probability` itself; with `trap_probability` 0
//! nothing traps.

use super::model::{DeepFn, ExtraFn, FnKind, Gen, Item, StrFn, Ty};
use super::scope::{Cx, Nullness, Var, VarKind};

/// String literals (as written) whose bytes collide across spellings:
/// `"abc"`/`"\x61bc"` and `"a\tb"`/`"a\x09b"` are equal, the rest differ
/// by a byte, a length or a case. With their lengths in bytes.
pub(crate) const STR_POOL: [(&str, usize); 8] = [
    ("\"abc\"", 3),
    ("\"\\x61bc\"", 3),
    ("\"abcd\"", 4),
    ("\"ab\"", 2),
    ("\"\"", 0),
    ("\"a\\tb\"", 3),
    ("\"a\\x09b\"", 3),
    ("\"Abc\"", 3),
];

/// Recursion depths of ordinary deep calls: thousands of frames, far below
/// the 10,000 frames LANGUAGE.md guarantees even for 800-byte frames.
const DEEP_MIN: i64 = 1000;
const DEEP_MAX: i64 = 8000;
/// A depth that traps `stack overflow` in every executor (LANGUAGE.md).
const DEEP_OVERFLOW: i64 = 1_000_000;

/// The two bounds of a generated `for` range and what is known of them.
struct ForBounds {
    lo: String,
    hi: String,
    /// The counter's values lie in this range (for safe indexing), if small.
    range: Option<(i64, i64)>,
    /// Most iterations the loop can run.
    trip: u64,
}

impl<'c, 'u, 'd> Gen<'c, 'u, 'd> {
    // ----- for loops with expression bounds -------------------------------

    /// `for i in lo..hi { ... }` with non-literal, mixed literal/expression,
    /// wrapping or side-effecting bounds of a random integer type.
    pub(crate) fn for_expr_bounds(&mut self, cx: &mut Cx, out: &mut Vec<String>) {
        let ty = Ty::INTS[self.rng.below(3)].clone();
        let bounds = match self.rng.weighted(&[4, 2, 2, 2]) {
            1 => self.literal_low_bound(cx, &ty),
            2 => self.bounds_at_type_max(cx, &ty),
            3 => self
                .side_effect_bounds(cx, &ty)
                .unwrap_or_else(|| self.masked_low_bound(cx, &ty)),
            _ => self.masked_low_bound(cx, &ty),
        };
        let trip = bounds.trip.max(1);
        if !self.loop_fits(cx, trip) {
            self.print_stmt(cx, out);
            return;
        }
        let name = cx.fresh("i");
        out.push(format!("for {name} in {}..{} {{", bounds.lo, bounds.hi));
        let range = bounds.range;
        self.loop_body(cx, trip, out, move |_, cx, _| {
            cx.declare(Var::new(name, ty, false, VarKind::LoopVar(range)));
        });
        out.push("}".into());
    }

    /// `(e & 3)` of type `ty`: a non-literal bound in `0..=3`.
    fn masked(&mut self, cx: &mut Cx, ty: &Ty, mask: i64) -> String {
        let e = self.expr(cx, ty, 1, false);
        let e = Self::typed_ex(e, ty);
        format!("({} & {mask})", e.text)
    }

    /// `(e & 3)..hi` where `hi` is an untyped literal (taking `ty`, wrapping
    /// for `u8`/`i32` when written above the type's range), a constant
    /// expression of untyped literals, or another masked expression.
    fn masked_low_bound(&mut self, cx: &mut Cx, ty: &Ty) -> ForBounds {
        let lo = self.masked(cx, ty, 3);
        let max_trip = self.cfg.max_loop_trip.clamp(1, 12);
        let k = self.rng.range(0, max_trip);
        let (hi, top) = match self.rng.below(4) {
            // `256 + k` is the u8 value `k`; `2^32 + k` the i32 value `k`.
            1 if *ty == Ty::U8 => ((256 + k).to_string(), k),
            1 if *ty == Ty::I32 => ((4_294_967_296 + k).to_string(), k),
            2 => {
                let a = self.rng.range(0, k);
                (format!("({a} + {})", k - a), k)
            }
            3 => (self.masked(cx, ty, 7), 7),
            _ => (k.to_string(), k),
        };
        ForBounds {
            lo,
            hi,
            range: Some((0, top.max(1))),
            trip: top.max(0) as u64,
        }
    }

    /// `0..(e & 7)` or `(1 + 1)..((e & 7) + 2)`: the untyped literal is the
    /// low bound and takes the type of the high one.
    fn literal_low_bound(&mut self, cx: &mut Cx, ty: &Ty) -> ForBounds {
        let m = self.masked(cx, ty, 7);
        if self.rng.chance(1, 2) {
            ForBounds {
                lo: "0".into(),
                hi: m,
                range: Some((0, 7)),
                trip: 7,
            }
        } else {
            ForBounds {
                lo: "(1 + 1)".into(),
                hi: format!("({m} + 2)"),
                range: Some((2, 9)),
                trip: 7,
            }
        }
    }

    /// `((e & 3) + MAX - 3)..MAX` with `MAX` the type's maximum as an untyped
    /// literal: the counter reaches `MAX - 1` and must not wrap. Or
    /// `(e & 3)..MAX + 1`, whose high bound wraps to the type's minimum
    /// (`256` is the u8 `0`): no iteration.
    fn bounds_at_type_max(&mut self, cx: &mut Cx, ty: &Ty) -> ForBounds {
        let max: i128 = match ty {
            Ty::U8 => 255,
            Ty::I32 => 2_147_483_647,
            _ => 9_223_372_036_854_775_807,
        };
        let m = self.masked(cx, ty, 3);
        if *ty != Ty::I64 && self.rng.chance(1, 3) {
            return ForBounds {
                lo: m,
                hi: (max + 1).to_string(),
                range: None,
                trip: 0,
            };
        }
        ForBounds {
            lo: format!("({m} + {})", max - 3),
            hi: max.to_string(),
            range: None,
            trip: 3,
        }
    }

    /// Bounds that call a probe (which prints): LANGUAGE.md evaluates the low
    /// bound, then the high one, each once. `None` if no probe is callable.
    fn side_effect_bounds(&mut self, cx: &mut Cx, ty: &Ty) -> Option<ForBounds> {
        let lo = self.note_call(cx)?;
        let lo = self.cast_from_i64(&format!("({lo} & 3)"), ty);
        let (hi, top) = match self.note_call(cx) {
            Some(hi) if self.rng.chance(2, 3) => {
                (self.cast_from_i64(&format!("({hi} & 7)"), ty), 7)
            }
            _ => {
                let k = self.rng.range(1, self.cfg.max_loop_trip.clamp(1, 12));
                (k.to_string(), k)
            }
        };
        Some(ForBounds {
            lo,
            hi,
            range: Some((0, top)),
            trip: top as u64,
        })
    }

    /// `text` (an `i64` expression) converted to `ty`.
    fn cast_from_i64(&self, text: &str, ty: &Ty) -> String {
        if *ty == Ty::I64 {
            text.to_string()
        } else {
            format!("({text} as {})", ty.prim())
        }
    }

    /// `noteM(e)`: a call of a callable probe that prints `e`, adds one to its
    /// module's counter and returns `e`; charged to `cx`.
    fn note_call(&mut self, cx: &mut Cx) -> Option<String> {
        self.note_call_in(cx).map(|(text, _)| text)
    }

    /// [`Self::note_call`] and the module of the probe's counter.
    fn note_call_in(&mut self, cx: &mut Cx) -> Option<(String, usize)> {
        if !cx.allow_calls {
            return None;
        }
        let notes: Vec<usize> = (0..cx.fn_limit.min(self.fns.len()))
            .filter(|&i| self.fns[i].kind == FnKind::Note && cx.can_afford(self.fns[i].cost))
            .collect();
        let i = *self.rng.pick(&notes)?;
        cx.charge(self.fns[i].cost);
        self.fns[i].calls += 1;
        let name = self.qual(cx.module, Item::Fn(i));
        let x = self.expr(cx, &Ty::I64, 1, true);
        Some((format!("{name}({})", x.text), self.fns[i].module))
    }

    // ----- compound assignment with side effects ---------------------------

    /// `place op= e` where `e` calls a printing probe that assigns a counter
    /// global; the place is that counter, an array element or a field.
    pub(crate) fn effect_compound(&mut self, cx: &mut Cx, out: &mut Vec<String>) {
        let done = match self.rng.weighted(&[3, 4, 3]) {
            1 => self.effect_into_element(cx, out),
            2 => self.effect_into_field(cx, out),
            _ => false,
        };
        // The counter is always there when a probe is callable.
        if !done && !self.effect_into_counter(cx, out) {
            self.print_stmt(cx, out);
        }
    }

    /// Whether a trap site of this construct is drawn. Ten times the usual
    /// rate: the point is the order of the trap and the call's output.
    fn effect_trap(&mut self) -> bool {
        self.rng.prob(self.cfg.trap_probability * 10.0)
    }

    /// A compound operator and its right operand of type `ty` built from
    /// `call` (an `i64` expression with side effects); `trap` makes a
    /// divisor that is zero once `call` has run.
    fn effect_rhs(&mut self, call: &str, ty: &Ty, trap: bool) -> (&'static str, String) {
        const OPS: [&str; 10] = ["+=", "-=", "*=", "^=", "|=", "&=", "/=", "%=", "<<=", ">>="];
        if trap {
            let op = if self.rng.chance(1, 2) { "/=" } else { "%=" };
            return (op, self.cast_from_i64(&format!("({call} & 0)"), ty));
        }
        let op = OPS[self.rng.below(OPS.len())];
        let rhs = match op {
            // Never zero, never -1.
            "/=" | "%=" => self.cast_from_i64(&format!("(({call} & 15) + 1)"), ty),
            // Any integer type may be a shift amount.
            "<<=" | ">>=" => call.to_string(),
            _ => self.cast_from_i64(call, ty),
        };
        (op, rhs)
    }

    /// `hitsM op= noteM(e);`: the probe increments `hitsM`, and the
    /// assignment must combine the value `hitsM` had before the call.
    fn effect_into_counter(&mut self, cx: &mut Cx, out: &mut Vec<String>) -> bool {
        let Some((call, m)) = self.note_call_in(cx) else {
            return false;
        };
        let g = self.qual(cx.module, Item::Global(self.counters[m]));
        let trap = self.effect_trap();
        let (op, rhs) = self.effect_rhs(&call, &Ty::I64, trap);
        out.push(format!("{g} {op} {rhs};"));
        out.push(format!("print({g});"));
        true
    }

    /// `a[i] op= e` on an integer array: `i` may be out of bounds (the trap
    /// comes before the call in `e` prints) or itself call a probe (which
    /// prints before `e`'s).
    fn effect_into_element(&mut self, cx: &mut Cx, out: &mut Vec<String>) -> bool {
        // (a local's name or a global's index, element type, known length)
        let mut cands: Vec<(Result<String, usize>, Ty, usize)> = Vec::new();
        for v in cx.vars_where(|v| matches!(v.kind, VarKind::Array { len, .. } if len > 0)) {
            if let (Ty::Array(elem), VarKind::Array { len, .. }) = (&v.ty, &v.kind) {
                if elem.is_int() {
                    cands.push((Ok(v.name.clone()), (**elem).clone(), *len));
                }
            }
        }
        for g in 0..self.globals.len() {
            if let Ty::Array(elem) = &self.globals[g].ty {
                if elem.is_int() && self.globals[g].len > 0 {
                    cands.push((Err(g), (**elem).clone(), self.globals[g].len));
                }
            }
        }
        let Some((array, elem, len)) = self.rng.pick(&cands).cloned() else {
            return false;
        };
        let name = match array {
            Ok(name) => name,
            Err(g) => self.qual(cx.module, Item::Global(g)),
        };
        let out_of_bounds = self.effect_trap();
        let mut pure = true;
        let idx = if out_of_bounds {
            format!("len({name})")
        } else if self.rng.chance(1, 3) {
            let mask = (len + 1).next_power_of_two() / 2 - 1;
            match self.note_call(cx) {
                Some(call) => {
                    pure = false;
                    format!("({call} & {mask})")
                }
                None => self.rng.below(len).to_string(),
            }
        } else {
            self.rng.below(len).to_string()
        };
        let Some(call) = self.note_call(cx) else {
            return false;
        };
        let trap = !out_of_bounds && self.effect_trap();
        let (op, rhs) = self.effect_rhs(&call, &elem, trap);
        out.push(format!("{name}[{idx}] {op} {rhs};"));
        if pure && !out_of_bounds {
            out.push(format!("print({name}[{idx}]);"));
        }
        true
    }

    /// `s.f op= e` through a non-null struct variable, or (a trap site)
    /// through one known to be null: the trap comes before `e` runs.
    fn effect_into_field(&mut self, cx: &mut Cx, out: &mut Vec<String>) -> bool {
        let through_null = self.effect_trap();
        let wanted = if through_null {
            Nullness::Null
        } else {
            Nullness::NonNull
        };
        let mut cands: Vec<(String, String, Ty)> = Vec::new();
        for v in cx.vars_where(|v| matches!(v.kind, VarKind::StructRef(n) if n == wanted)) {
            let Ty::Struct(s) = v.ty else { continue };
            for (f, t) in &self.structs[s].fields {
                if t.is_int() {
                    cands.push((v.name.clone(), f.clone(), t.clone()));
                }
            }
        }
        let Some((var, field, ty)) = self.rng.pick(&cands).cloned() else {
            return false;
        };
        let Some(call) = self.note_call(cx) else {
            return false;
        };
        let (op, rhs) = self.effect_rhs(&call, &ty, false);
        out.push(format!("{var}.{field} {op} {rhs};"));
        if !through_null {
            out.push(format!("print({var}.{field});"));
        }
        true
    }

    // ----- str-returning functions and string identity ---------------------

    /// One or two `fn litN(k: i64) -> str` returning pool literals, in
    /// random modules (so comparisons cross modules).
    pub(crate) fn make_str_fns(&mut self) {
        for _ in 0..1 + self.rng.below(2) {
            let module = self.rng.below(self.modules.len());
            let extra = self.extra_fns.len();
            let name = format!("lit{extra}");
            let a = STR_POOL[self.rng.below(STR_POOL.len())].0;
            let b = STR_POOL[self.rng.below(STR_POOL.len())].0;
            let text = if self.rng.chance(1, 2) {
                format!(
                    "fn {name}(k: i64) -> str {{\n    if (k & 1) == 0 {{ {a} }} else {{ {b} }}\n}}\n"
                )
            } else {
                format!(
                    "fn {name}(k: i64) -> str {{\n    let r: str = {a};\n    if (k & 1) == 1 {{\n        return {b};\n    }}\n    r\n}}\n"
                )
            };
            self.spend_lines(&text);
            self.extra_fns.push(ExtraFn {
                name,
                module,
                text,
                is_pub: false,
            });
            self.str_fns.push(StrFn {
                extra,
                lits: [a, b],
            });
        }
    }

    /// `(litN(k) == s)` / `!=` with `s` a literal (often one the function
    /// returns, possibly spelled differently), `null`, another function's
    /// result or a `str` global of this module.
    pub(crate) fn str_compare(&mut self, cx: &mut Cx, d: u32) -> Option<String> {
        let f = self.rng.pick(&self.str_fns).cloned()?;
        let lhs = self.str_fn_call(cx, f.extra, d);
        let here = self.str_globals_here(cx);
        let rhs = match self
            .rng
            .weighted(&[4, 3, 1, 2, if here.is_empty() { 0 } else { 2 }])
        {
            1 => STR_POOL[self.rng.below(STR_POOL.len())].0.to_string(),
            2 => "null".to_string(),
            3 => {
                let g = self.rng.pick(&self.str_fns).cloned()?;
                self.str_fn_call(cx, g.extra, d)
            }
            4 => here[self.rng.below(here.len())].clone(),
            _ => f.lits[self.rng.below(2)].to_string(),
        };
        let op = if self.rng.chance(3, 4) { "==" } else { "!=" };
        // Either operand order: identity is symmetric.
        Some(if self.rng.chance(1, 4) {
            format!("({rhs} {op} {lhs})")
        } else {
            format!("({lhs} {op} {rhs})")
        })
    }

    fn str_fn_call(&mut self, cx: &mut Cx, extra: usize, d: u32) -> String {
        cx.charge(3);
        let name = self.qual(cx.module, Item::Extra(extra));
        let k = self.expr(cx, &Ty::I64, d, true);
        format!("{name}({})", k.text)
    }

    // ----- deep recursion ---------------------------------------------------

    /// `fn deepN(n: i64, x: i64) -> i64` recursing `n` deep with a value
    /// live across the call, or a pair recursing into each other across
    /// modules. Called from `main` only ([`Self::call_deep`]).
    pub(crate) fn make_deep_recursion(&mut self) {
        let k = self.rng.range(3, 13);
        let mul = self.rng.range(2, 9);
        if self.modules.len() > 1 && self.rng.chance(1, 2) {
            let (ma, mb) = (0, 1 + self.rng.below(self.modules.len() - 1));
            let a = self.push_extra(ma, String::new());
            let b = self.push_extra(mb, String::new());
            self.extra_fns[a].name = format!("deep{a}");
            self.extra_fns[b].name = format!("deep{b}");
            for (me, other) in [(a, b), (b, a)] {
                let module = self.extra_fns[me].module;
                let callee = self.qual(module, Item::Extra(other));
                let text = self.deep_text(&self.extra_fns[me].name.clone(), &callee, k, mul);
                self.spend_lines(&text);
                self.extra_fns[me].text = text;
            }
            self.deep_fns.push(DeepFn { extra: a });
        } else {
            let module = self.rng.below(self.modules.len());
            let a = self.push_extra(module, String::new());
            let name = format!("deep{a}");
            let text = self.deep_text(&name, &name, k, mul);
            self.spend_lines(&text);
            self.extra_fns[a].name = name;
            self.extra_fns[a].text = text;
            self.deep_fns.push(DeepFn { extra: a });
        }
    }

    fn push_extra(&mut self, module: usize, text: String) -> usize {
        self.extra_fns.push(ExtraFn {
            name: String::new(),
            module,
            text,
            is_pub: false,
        });
        self.extra_fns.len() - 1
    }

    /// The text of a deep function `name` calling `callee`; `y` stays live
    /// across the call, so the frame is more than a return address.
    fn deep_text(&self, name: &str, callee: &str, k: i64, mul: i64) -> String {
        format!(
            "fn {name}(n: i64, x: i64) -> i64 {{\n    if n <= 0 {{\n        return x;\n    }}\n    let y = (x * {mul}) ^ n;\n    {callee}(n - 1, (y & 65535)) + (y & {k})\n}}\n"
        )
    }

    /// `print(deepN(DEPTH, x));` in `main` for every deep function: thousands
    /// of frames, or (rarely) a million, which traps `stack overflow`.
    pub(crate) fn call_deep(&mut self, lines: &mut Vec<String>) {
        for i in 0..self.deep_fns.len() {
            let extra = self.deep_fns[i].extra;
            let name = self.qual(0, Item::Extra(extra));
            let depth = if self.rng.prob(self.cfg.trap_probability) {
                DEEP_OVERFLOW
            } else {
                self.rng.range(DEEP_MIN, DEEP_MAX)
            };
            let x = self.rng.range(0, 1000);
            lines.push(format!("print({name}({depth}, {x}));"));
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::gen::{generate_from_seed, GenConfig};

    const SEEDS: u64 = 200;

    /// A construct: what it is, the fewest programs that must show it, and
    /// the line test that finds it.
    type Case<'a> = (&'a str, usize, &'a dyn Fn(&str) -> bool);

    /// Programs (of `SEEDS`) with a line satisfying `pred`.
    fn programs_with(cfg: &GenConfig, pred: impl Fn(&str) -> bool) -> usize {
        (0..SEEDS)
            .filter(|&s| {
                generate_from_seed(s, cfg)
                    .modules
                    .iter()
                    .any(|(_, text)| text.lines().any(|l| pred(l.trim())))
            })
            .count()
    }

    /// The `lo..hi` of a `for` line.
    fn for_range(line: &str) -> Option<(&str, &str)> {
        let rest = line.strip_prefix("for ")?.split_once(" in ")?.1;
        let range = rest.strip_suffix('{')?.trim_end();
        range.split_once("..")
    }

    fn starts_with_digit(s: &str) -> bool {
        s.starts_with(|c: char| c.is_ascii_digit())
    }

    /// Every construct of this module shows up in a fair share of programs,
    /// so the generator cannot silently stop producing one.
    #[test]
    fn edge_constructs_appear() {
        let cfg = GenConfig::default();
        let cases: [Case; 14] = [
            ("`for` with a non-literal low bound", 100, &|l| {
                for_range(l).is_some_and(|(lo, _)| lo.starts_with('(') && lo.contains("& 3)"))
            }),
            (
                "`for` with an untyped literal high bound after an expression",
                40,
                &|l| {
                    for_range(l).is_some_and(|(lo, hi)| lo.ends_with(')') && starts_with_digit(hi))
                },
            ),
            (
                "`for` with an untyped literal low bound before an expression",
                20,
                &|l| {
                    for_range(l).is_some_and(|(lo, hi)| {
                        (lo == "0" || lo == "(1 + 1)") && hi.contains("& 7)")
                    })
                },
            ),
            (
                "`for` with a bound that wraps (`256`, `2^32 + k`)",
                10,
                &|l| {
                    for_range(l).is_some_and(|(_, hi)| {
                        hi.parse::<i64>().is_ok_and(|v| {
                            (256..=268).contains(&v)
                                || (4_294_967_296..=4_294_967_308).contains(&v)
                                || v == 2_147_483_648
                        })
                    })
                },
            ),
            ("`for` up to the type's maximum", 20, &|l| {
                for_range(l).is_some_and(|(_, hi)| {
                    ["255", "2147483647", "9223372036854775807"].contains(&hi)
                })
            }),
            ("`for` bounds with side effects", 20, &|l| {
                for_range(l).is_some_and(|(lo, _)| lo.contains("note"))
            }),
            ("`for` bounds of type u8", 30, &|l| {
                for_range(l).is_some_and(|(lo, _)| lo.contains("u8") && lo.contains("& 3)"))
            }),
            (
                "a `str` function's result compared with a literal",
                80,
                &|l| {
                    l.contains("lit")
                        && (l.contains("== \"") || l.contains("\" ==") || l.contains("!= \""))
                },
            ),
            ("a `str` function of another module compared", 30, &|l| {
                l.contains("::lit") && (l.contains(" == ") || l.contains(" != "))
            }),
            ("a deep recursive call", 150, &|l| {
                l.starts_with("print(")
                    && l.contains("deep")
                    && l.split(['(', ','])
                        .any(|t| t.parse::<i64>().is_ok_and(|d| d >= 1000))
            }),
            ("mutual deep recursion across modules", 40, &|l| {
                l.contains("::deep")
            }),
            ("`g op= f()` where `f` assigns `g`", 60, &|l| {
                l.starts_with("hits")
                    && l.contains("= ")
                    && l.contains("note")
                    && !l.starts_with("hits0 = hits0")
                    && !l.contains("+= 1;")
            }),
            ("`a[i] op= f()` with a printing call", 80, &|l| {
                l.contains("] ")
                    && l.contains("= ")
                    && l.contains("note")
                    && !l.starts_with("let ")
                    && !l.starts_with("print")
            }),
            ("`s.f op= f()` with a printing call", 5, &|l| {
                l.starts_with('s') && l.contains('.') && l.contains("= ") && l.contains("note")
            }),
        ];
        let mut missing = Vec::new();
        for (what, min, pred) in cases {
            let n = programs_with(&cfg, pred);
            eprintln!("{n:4} of {SEEDS} programs: {what}");
            if n < min {
                missing.push(format!("{what}: {n} < {min}"));
            }
        }
        assert!(missing.is_empty(), "too rare: {missing:#?}");
    }

    /// The trap sites of this module appear when traps are likely: an
    /// out-of-bounds place before a printing call, division by zero after
    /// one, and a million-deep recursion.
    #[test]
    fn edge_trap_sites_appear() {
        let cfg = GenConfig {
            trap_probability: 0.2,
            ..GenConfig::default()
        };
        let oob = programs_with(&cfg, |l| {
            l.contains("[len(") && l.contains("note") && l.contains("= ")
        });
        let div0 = programs_with(&cfg, |l| l.contains("& 0)") && l.contains("note"));
        let overflow = programs_with(&cfg, |l| l.contains("(1000000,"));
        eprintln!("{oob} out-of-bounds, {div0} division-by-zero, {overflow} stack-overflow sites");
        assert!(oob >= 5 && div0 >= 5 && overflow >= 5);
    }
}
