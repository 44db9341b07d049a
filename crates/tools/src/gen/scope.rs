//! The state of the function being generated: lexical scopes with typed
//! variables, loop nesting, and the running cost estimate.
//!
//! Invariants: a variable is only offered where it is in scope; array
//! variables are immutable and carry their (minimum) length, so in-range
//! indices are known; non-null struct variables only ever hold non-null
//! references; loop counters and `for` variables are never assigned.

use super::model::Ty;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Nullness {
    NonNull,
    Null,
    /// Possibly null: read only behind a `!= null` test.
    Unknown,
}

#[derive(Clone, Debug)]
pub(crate) enum VarKind {
    Local,
    Param,
    /// A constant generic parameter.
    Const,
    /// A `for` variable; `Some((lo, hi))` when its values are known to lie in `lo..hi`.
    LoopVar(Option<(i64, i64)>),
    /// A `while` loop counter.
    Counter,
    /// An array with at least `len` elements (exactly `len` if `exact`).
    Array {
        len: usize,
        exact: bool,
    },
    StructRef(Nullness),
}

#[derive(Clone, Debug)]
pub(crate) struct Var {
    pub name: String,
    pub ty: Ty,
    pub mutable: bool,
    pub kind: VarKind,
}

impl Var {
    pub(crate) fn new(name: String, ty: Ty, mutable: bool, kind: VarKind) -> Var {
        Var {
            name,
            ty,
            mutable,
            kind,
        }
    }

    /// May be the target of an assignment.
    pub(crate) fn assignable(&self) -> bool {
        self.mutable && matches!(self.kind, VarKind::Local | VarKind::StructRef(_))
    }
}

/// Generation context of one function body.
pub(crate) struct Cx {
    pub module: usize,
    /// Functions `0..fn_limit` may be called.
    pub fn_limit: usize,
    scopes: Vec<Vec<Var>>,
    pub loop_depth: usize,
    /// Product of the trip counts of the enclosing loops.
    pub mult: u64,
    pub cost: u64,
    pub budget: u64,
    /// Return type (`None`: unit).
    pub ret: Option<Ty>,
    next_id: usize,
    /// Nesting of statement blocks.
    pub nest: usize,
    /// Name of the enclosing template's function parameter, if any.
    pub fn_param: Option<String>,
    /// Calls of `fn_param`, weighted by loop multiplicity.
    pub f_calls: u64,
    pub allow_calls: bool,
    pub allow_loops: bool,
    pub allow_return: bool,
    /// Statements this function may still emit.
    pub stmts_left: usize,
}

impl Cx {
    pub(crate) fn new(
        module: usize,
        fn_limit: usize,
        budget: u64,
        ret: Option<Ty>,
        stmts: usize,
    ) -> Cx {
        Cx {
            module,
            fn_limit,
            scopes: vec![Vec::new()],
            loop_depth: 0,
            mult: 1,
            cost: 0,
            budget,
            ret,
            next_id: 0,
            nest: 0,
            fn_param: None,
            f_calls: 0,
            allow_calls: true,
            allow_loops: true,
            allow_return: true,
            stmts_left: stmts,
        }
    }

    /// A fresh local name `prefix<N>`.
    pub(crate) fn fresh(&mut self, prefix: &str) -> String {
        self.next_id += 1;
        format!("{prefix}{}", self.next_id - 1)
    }

    pub(crate) fn push(&mut self) {
        self.scopes.push(Vec::new());
    }

    pub(crate) fn pop(&mut self) {
        self.scopes.pop();
    }

    pub(crate) fn declare(&mut self, v: Var) {
        if let Some(s) = self.scopes.last_mut() {
            s.push(v);
        }
    }

    /// The variables in scope, innermost first, shadowed ones left out.
    pub(crate) fn visible(&self) -> Vec<Var> {
        self.vars_where(|_| true)
    }

    /// Visible variables satisfying `keep`, innermost first.
    pub(crate) fn vars_where(&self, keep: impl Fn(&Var) -> bool) -> Vec<Var> {
        let mut seen: Vec<&str> = Vec::new();
        let mut out = Vec::new();
        for v in self.scopes.iter().rev().flat_map(|s| s.iter().rev()) {
            if seen.contains(&v.name.as_str()) {
                continue;
            }
            seen.push(&v.name);
            if keep(v) {
                out.push(v.clone());
            }
        }
        out
    }

    /// Marks the innermost variable called `name` as possibly null.
    pub(crate) fn forget_nullness(&mut self, name: &str) {
        for v in self
            .scopes
            .iter_mut()
            .rev()
            .flat_map(|s| s.iter_mut().rev())
        {
            if v.name == name {
                v.kind = VarKind::StructRef(Nullness::Unknown);
                return;
            }
        }
    }

    /// Whether work `cost` (per execution) fits the budget at the current loop depth.
    pub(crate) fn can_afford(&self, cost: u64) -> bool {
        self.cost.saturating_add(self.mult.saturating_mul(cost)) <= self.budget
    }

    pub(crate) fn charge(&mut self, cost: u64) {
        self.cost = self.cost.saturating_add(self.mult.saturating_mul(cost));
    }
}
