//! Optimization remarks: one record per decision a pass makes about a
//! function.
//!
//! A [`Remark`] says which pass decided what about which function, why, and
//! how many bytes the decision is worth. It is the shape of LLVM's
//! optimization records (`-fsave-optimization-record`: `Pass`, `Name`,
//! `Function`, `Args`, one YAML document per remark, `!Passed`, `!Missed`
//! or `!Analysis`), flattened to the fields every parec pass fills. The
//! driver writes remarks as text on stderr (`parec build --remarks`) or as
//! JSON lines (`--remarks=FILE`); docs/REMARKS.md fixes the JSON form and
//! `docs/remarks.schema.json` is its JSON Schema.
//!
//! # Adding remarks to a pass
//!
//! Return them beside the pass's statistics (`merge::MergeReport`,
//! `gvn::GvnReport`, `outline::OutlineResult`), one per decision, in a
//! deterministic order (function order, then the order the decisions were
//! made):
//!
//! ```
//! use parec_passes::remark::Remark;
//!
//! let remark = Remark::passed("merge", "merged", "main::scale<3>", "into `main::scale<3>.Tgm`")
//!     .in_module("main")
//!     .bytes(12)
//!     .count("members", 4);
//! assert_eq!(
//!     remark.to_string(),
//!     "merge: merged main::scale<3> [main]: into `main::scale<3>.Tgm` (+12 bytes)"
//! );
//! ```
//!
//! Rules every pass follows, so remarks can be counted and compared:
//!
//! - `decision` is a short, stable, kebab-case identifier (`merged`,
//!   `single-local`, `outlined`); the same decision has the same identifier
//!   every time, and each identifier is documented in docs/REMARKS.md with
//!   the statistic it adds up to. `reason` is for people and may change.
//! - `counts` carry the numbers the decision adds to the pass's statistics
//!   under the statistic's name, so a test can check that the remarks and
//!   the statistics agree.
//! - `bytes` is what the decision saves (negative: what it costs), in the
//!   pass's own measure (estimated or measured, as docs/REMARKS.md says per
//!   decision); for a missed decision, what applying it would have saved.
//!   `None` when the pass cannot tell.
//! - Machine-code passes may leave `module` empty: they see code, not
//!   modules; the driver fills it in.

use std::fmt;

/// Whether a decision changed the code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RemarkKind {
    /// The pass transformed the function (LLVM's `!Passed`).
    Passed,
    /// The pass considered a transformation and did not apply it
    /// (`!Missed`).
    Missed,
    /// A fact the pass found that is not a transformation (`!Analysis`).
    Analysis,
}

impl RemarkKind {
    /// The name in JSON and text: `passed`, `missed`, `analysis`.
    pub fn name(self) -> &'static str {
        match self {
            RemarkKind::Passed => "passed",
            RemarkKind::Missed => "missed",
            RemarkKind::Analysis => "analysis",
        }
    }
}

/// One decision of one pass about one function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Remark {
    /// The pass, by its command-line name (`gvn`, `merge`, `outline`).
    pub pass: &'static str,
    pub kind: RemarkKind,
    /// What was decided: a stable kebab-case identifier (module doc).
    pub decision: &'static str,
    /// The module the function belongs to (empty until known).
    pub module: String,
    /// The function decided about. Decisions that create a function (an
    /// outlined function) name the function created.
    pub function: String,
    /// Why, in words.
    pub reason: String,
    /// Bytes the decision saves (negative: costs); for a missed decision,
    /// what applying it would have saved. `None` when unknown.
    pub bytes: Option<i64>,
    /// The decision's share of the pass's statistics, by statistic name.
    pub counts: Vec<(&'static str, u64)>,
}

impl Remark {
    /// A remark of `kind`.
    pub fn new(
        pass: &'static str,
        kind: RemarkKind,
        decision: &'static str,
        function: impl Into<String>,
        reason: impl Into<String>,
    ) -> Remark {
        Remark {
            pass,
            kind,
            decision,
            module: String::new(),
            function: function.into(),
            reason: reason.into(),
            bytes: None,
            counts: Vec::new(),
        }
    }

    /// The pass transformed `function`.
    pub fn passed(
        pass: &'static str,
        decision: &'static str,
        function: impl Into<String>,
        reason: impl Into<String>,
    ) -> Remark {
        Remark::new(pass, RemarkKind::Passed, decision, function, reason)
    }

    /// The pass left `function` as it was.
    pub fn missed(
        pass: &'static str,
        decision: &'static str,
        function: impl Into<String>,
        reason: impl Into<String>,
    ) -> Remark {
        Remark::new(pass, RemarkKind::Missed, decision, function, reason)
    }

    /// A fact about `function`.
    pub fn analysis(
        pass: &'static str,
        decision: &'static str,
        function: impl Into<String>,
        reason: impl Into<String>,
    ) -> Remark {
        Remark::new(pass, RemarkKind::Analysis, decision, function, reason)
    }

    /// With the module set.
    pub fn in_module(mut self, module: impl Into<String>) -> Remark {
        self.module = module.into();
        self
    }

    /// With the bytes the decision saves.
    pub fn bytes(mut self, bytes: i64) -> Remark {
        self.bytes = Some(bytes);
        self
    }

    /// With `value` added to the statistic `name`.
    pub fn count(mut self, name: &'static str, value: u64) -> Remark {
        self.counts.push((name, value));
        self
    }

    /// With each of `counters` that is not zero added (a pass's statistics
    /// for one function, as its remark carries them).
    pub fn nonzero_counts(
        mut self,
        counters: impl IntoIterator<Item = (&'static str, u64)>,
    ) -> Remark {
        for (name, value) in counters {
            if value > 0 {
                self = self.count(name, value);
            }
        }
        self
    }

    /// The value of the count `name` (0 if absent).
    pub fn get_count(&self, name: &str) -> u64 {
        self.counts
            .iter()
            .filter(|(n, _)| *n == name)
            .map(|(_, v)| v)
            .sum()
    }
}

/// `PASS: DECISION FUNCTION [MODULE]: REASON (+BYTES bytes)`: the text
/// form of `--remarks`.
impl fmt::Display for Remark {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} {}", self.pass, self.decision, self.function)?;
        if !self.module.is_empty() {
            write!(f, " [{}]", self.module)?;
        }
        write!(f, ": {}", self.reason)?;
        if let Some(bytes) = self.bytes {
            write!(f, " ({bytes:+} bytes)")?;
        }
        Ok(())
    }
}

/// Sets the module of every remark in `remarks` that has none.
pub fn fill_module(remarks: &mut [Remark], module: &str) {
    for remark in remarks.iter_mut().filter(|r| r.module.is_empty()) {
        remark.module = module.to_string();
    }
}
