//! The one rule that turns a ratio current ÷ baseline and its confidence interval into a
//! verdict word, for A/B rows and run-against-run rows alike (`decide`): `same` only when the
//! whole interval lies inside the minimum-effect band [1/(1 + m), 1 + m]; a change (`regression`
//! slower, `faster`) when it lies outside the band and wholly on one side of 1; else `undecided`.
//! A family of change claims reads each change at `family_confidence` (Bonferroni). The notes
//! and rule text around these words live with the reports (`augbench_report::judge::verdict`).

use serde::Serialize;

use crate::paired::min_effect_band;
use crate::policy;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Regression,
    Faster,
    Same,
    /// The interval cannot tell: it reaches past the band on a side, or crosses its edge.
    Undecided,
    /// Measured on one side only (missing, slow, unsupported or error on the other).
    NotComparable,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Regression => "regression",
            Verdict::Faster => "faster",
            Verdict::Same => "same",
            Verdict::Undecided => "undecided",
            Verdict::NotComparable => "not comparable",
        }
    }
}

/// Fewest resampling units (runs of a row, rounds of a pair) whose interval may decide: with two,
/// a bootstrap interval is the range of two values, too narrow to trust.
pub const MIN_UNITS: usize = 3;

/// The minimum-effect band (`paired::min_effect_band`, its one home): [1/(1 + m), 1 + m], a run
/// m slower or faster in time; symmetric on the log scale, so inverting a ratio and its interval
/// mirrors the verdict.
pub fn band(min_effect: f64) -> (f64, f64) {
    min_effect_band(min_effect)
}

/// THE verdict of a ratio current ÷ baseline and its confidence interval at a minimum effect
/// (a fraction in [0, 1)); `Undecided` for a ratio or interval that is not positive and finite.
/// A change is called on the interval alone, never on the ratio: an interval inside the band is
/// `Same`; one outside it that excludes 1 is a change (it reaches past the band's edge, so a
/// change of the minimum effect cannot be ruled out). Under no change each side is called with
/// the interval's error rate (≤ 2.5%, `tests/simulated_verdicts.rs`).
pub fn decide(ratio: f64, (lo, hi): (f64, f64), min_effect: f64) -> Verdict {
    let ok = |x: f64| x.is_finite() && x > 0.0;
    let usable = ok(ratio) && ok(lo) && ok(hi) && lo <= hi;
    if !usable || !(0.0..1.0).contains(&min_effect) {
        return Verdict::Undecided;
    }
    let (low_edge, high_edge) = band(min_effect);
    if low_edge <= lo && hi <= high_edge {
        Verdict::Same
    } else if hi < 1.0 {
        Verdict::Regression
    } else if lo > 1.0 {
        Verdict::Faster
    } else {
        Verdict::Undecided
    }
}

/// The confidence each of `rows` change claims is read at so that together they keep the error
/// rate of one (1 − `policy::CONFIDENCE`, Bonferroni): 95% for one row, 98.3% for three. A gate
/// asks whether *any* row changed, so a report's change claims are one family.
pub fn family_confidence(rows: usize) -> f64 {
    1.0 - (1.0 - policy::CONFIDENCE) / rows.max(1) as f64
}

/// `decide` in a family of change claims: `same` reads the row's own 95% interval `same`, a
/// change (`slower`, `faster`) reads `change`, the row's interval at `family_confidence` (at
/// least as wide). A row whose 95% interval shows a change that its family interval does not
/// is `undecided`.
pub fn decide_in_family(
    ratio: f64,
    same: (f64, f64),
    change: (f64, f64),
    min_effect: f64,
) -> Verdict {
    match decide(ratio, same, min_effect) {
        Verdict::Regression | Verdict::Faster => match decide(ratio, change, min_effect) {
            v @ (Verdict::Regression | Verdict::Faster) => v,
            _ => Verdict::Undecided,
        },
        v => v,
    }
}

/// How much wider a normal interval at the confidence of a family of `family` change claims is
/// than at `policy::CONFIDENCE`.
pub fn family_widening(family: usize) -> f64 {
    let p = |confidence: f64| 1.0 - (1.0 - confidence) / 2.0;
    let z = |confidence: f64| crate::student::normal_quantile(p(confidence));
    z(family_confidence(family)) / z(policy::CONFIDENCE)
}
