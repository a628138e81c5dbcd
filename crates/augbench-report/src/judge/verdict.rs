//! The one rule that turns a ratio current ÷ baseline and its 95% confidence interval into a
//! verdict, for A/B rows and `compare --baseline/--current` rows alike (`decide`): `same` only
//! when the whole interval lies inside the minimum-effect band [1/(1 + m), 1 + m]; `regression`
//! (slower) when it is not inside the band and lies wholly below 1 (the data shows a slowdown and
//! cannot rule out one of m or more); `faster` mirrored; else `undecided`, with the smallest
//! change the interval could have shown (`undecided_note`). Also
//! the check of a minimum effect, and the one summary line of rows measured on neither side.
//! Pure.

use std::collections::BTreeMap;

use augbench_core::policy;
pub use augbench_stats::verdict::{
    MIN_UNITS, Verdict, band, decide, decide_in_family, family_confidence,
};
use serde::Serialize;

use crate::model::GroupKey;
use crate::output::usage;

/// `decide_in_family`, with the note of an `undecided` verdict: `undecided_note`, or for a change
/// the family interval does not confirm, that interval and its level (`rows` change claims).
pub fn decide_in_family_noted(
    ratio: f64,
    same: (f64, f64),
    change: (f64, f64),
    rows: usize,
    min_effect: f64,
) -> (Verdict, Option<String>) {
    let v = decide_in_family(ratio, same, change, min_effect);
    if v != Verdict::Undecided {
        return (v, None);
    }
    if decide(ratio, same, min_effect) == Verdict::Undecided {
        return (v, Some(undecided_note(same, min_effect)));
    }
    let note = format!(
        "the 95% interval excludes 1 but the {}% one over {rows} rows, [{:.3}, {:.3}], does not",
        percent(family_confidence(rows)),
        change.0,
        change.1
    );
    (v, Some(note))
}

/// `decide`, with `undecided_note` for an `undecided` verdict.
pub fn decide_noted(
    ratio: f64,
    interval: (f64, f64),
    min_effect: f64,
) -> (Verdict, Option<String>) {
    match decide(ratio, interval, min_effect) {
        Verdict::Undecided => (
            Verdict::Undecided,
            Some(undecided_note(interval, min_effect)),
        ),
        v => (v, None),
    }
}

/// Why an interval decided nothing: wider than the band, the smallest change it could have shown
/// (`could not see a change under 12%`, its half-width on the log scale); narrower, where it lies
/// (`-6.0% to +1.0%, across the 5% minimum effect`).
pub fn undecided_note((lo, hi): (f64, f64), min_effect: f64) -> String {
    if !(lo.is_finite() && hi.is_finite() && lo > 0.0 && hi >= lo) {
        return "no usable interval".into();
    }
    let h = (hi / lo).ln() / 2.0;
    if h > band(min_effect).1.ln() {
        return format!("could not see a change under {}", change(h.exp()));
    }
    format!(
        "{:+.1}% to {:+.1}%, across the {}% minimum effect",
        (lo - 1.0) * 100.0,
        (hi - 1.0) * 100.0,
        percent(min_effect)
    )
}

/// A factor above 1 as a change: `12%` below 2×, `6.2×` from there.
fn change(factor: f64) -> String {
    if factor >= 2.0 {
        format!("{factor:.1}×")
    } else {
        format!("{}%", percent(factor - 1.0))
    }
}

/// A fraction as a percentage without float noise: 0.15 → `15`, 0.075 → `7.5`.
pub fn percent(x: f64) -> String {
    let s = format!("{:.1}", x * 100.0);
    match s.strip_suffix(".0") {
        Some(whole) => whole.to_string(),
        None => s,
    }
}

/// The note of a row whose sides have too few runs (or rounds) to decide.
pub fn too_few_note(what: &str, counts: &str) -> String {
    format!("too few {what} for an interval ({counts}; {MIN_UNITS} needed)")
}

/// A minimum effect must lie strictly between 0 and 1; else a usage error naming one that works.
pub fn check_min_effect(min_effect: f64) -> anyhow::Result<()> {
    if min_effect.is_finite() && min_effect > 0.0 && min_effect < 1.0 {
        return Ok(());
    }
    Err(usage(
        format!("minimum effect {min_effect} is out of range"),
        format!(
            "give a fraction between 0 and 1, e.g. --min-effect {} for {}%",
            policy::REGRESSION_MIN_EFFECT,
            percent(policy::REGRESSION_MIN_EFFECT)
        ),
    ))
}

/// The interval an A/B verdict reads: Student's t over process pairs, whose 95% the simulator
/// shows (`tests/simulated_verdicts.rs`).
pub const PAIRS_INTERVAL: &str = "95% confidence interval";
/// The interval a run-against-run verdict reads: built from each run's rerun interval, with no
/// simulator behind its level, so it carries no percentage.
pub const RUNS_INTERVAL: &str = "confidence interval (from both runs' rerun intervals)";

/// The rule in words for a verdict summary, with the interval read (`PAIRS_INTERVAL` or
/// `RUNS_INTERVAL`), the view's words for `same` and `regression` and the rows in the family of
/// change claims: `verdicts on the 95% confidence interval of current ÷ baseline: same when it
/// lies within [0.952, 1.050], the 5% minimum effect; …`.
pub fn rule(min_effect: f64, interval: &str, same: &str, slower: &str, rows: usize) -> String {
    let (lo, hi) = band(min_effect);
    let family = match rows {
        0 | 1 => String::new(),
        n => format!(
            " at {}% (the {n} rows compared share one 5% error rate)",
            percent(family_confidence(n))
        ),
    };
    format!(
        "verdicts on the {interval} of current ÷ baseline: {same} when it lies within \
         [{lo:.3}, {hi:.3}], the {}% minimum effect; {slower} or faster when it lies outside that \
         band and excludes 1{family}; else undecided",
        percent(min_effect)
    )
}

/// A report of verdict rows, A/B or run against run: its counts and the gate's two questions,
/// one rule for both (`ab::AbReport`, `regression::RegressionReport`).
pub trait Verdicts {
    /// The verdict of every row shown.
    fn row_verdicts(&self) -> Vec<Verdict>;
    /// The rows measured on neither side, kept out of the rows.
    fn unmeasured(&self) -> &Unmeasured;

    /// Rows of a verdict; `not comparable` counts the rows measured on neither side too.
    fn count(&self, v: Verdict) -> usize {
        let hidden = match v {
            Verdict::NotComparable => self.unmeasured().count(),
            _ => 0,
        };
        self.row_verdicts().iter().filter(|r| **r == v).count() + hidden
    }

    /// Counts of slower, faster, same, undecided and not comparable, in that order.
    fn counts(&self) -> [usize; 5] {
        use Verdict::*;
        [Regression, Faster, Same, Undecided, NotComparable].map(|v| self.count(v))
    }

    fn has_regression(&self) -> bool {
        self.count(Verdict::Regression) > 0
    }

    fn has_undecided(&self) -> bool {
        self.count(Verdict::Undecided) > 0
    }
}

/// Rows measured on neither side (unsupported, slow, error or missing in both), kept out of the
/// row lists and shown as one line; JSON gets `count` and `by_state`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Unmeasured {
    entries: Vec<(GroupKey, String)>,
}

#[derive(Serialize)]
struct UnmeasuredView<'a> {
    count: usize,
    by_state: BTreeMap<&'a str, usize>,
}

impl Serialize for Unmeasured {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        UnmeasuredView {
            count: self.count(),
            by_state: self.by_state(),
        }
        .serialize(s)
    }
}

impl Unmeasured {
    /// Records one row of group `key`: `state` is `unsupported` when both sides say so, else
    /// `<baseline> → <current>`.
    pub fn push(&mut self, key: GroupKey, baseline: &str, current: &str) {
        let state = if baseline == current {
            baseline.to_string()
        } else {
            format!("{baseline} → {current}")
        };
        self.entries.push((key, state));
    }

    pub fn count(&self) -> usize {
        self.entries.len()
    }

    pub fn by_state(&self) -> BTreeMap<&str, usize> {
        let mut m = BTreeMap::new();
        for (_, s) in &self.entries {
            *m.entry(s.as_str()).or_default() += 1;
        }
        m
    }

    /// The rows of one group.
    pub fn of_group(&self, key: &GroupKey) -> Unmeasured {
        let entries = self.entries.iter().filter(|e| &e.0 == key).cloned();
        Unmeasured {
            entries: entries.collect(),
        }
    }

    /// `214 rows unsupported in both runs`, or `5 rows measured in neither run (2 slow, …)`;
    /// `None` without any.
    pub fn line(&self, runs: &str) -> Option<String> {
        let n = self.count();
        let rows = if n == 1 { "row" } else { "rows" };
        let by = self.by_state();
        let only = by
            .keys()
            .next()
            .filter(|k| by.len() == 1 && !k.contains('→'));
        match only {
            _ if n == 0 => None,
            Some(state) => Some(format!("{n} {rows} {state} in both {runs}")),
            None => {
                let parts: Vec<String> = by.iter().map(|(s, c)| format!("{c} {s}")).collect();
                Some(format!(
                    "{n} {rows} measured in neither {} ({})",
                    runs.trim_end_matches('s'),
                    parts.join(", ")
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const M: f64 = 0.05;

    #[test]
    fn a_band_contained_interval_is_same() {
        assert_eq!(decide(1.0, (0.98, 1.02), M), Verdict::Same);
        assert_eq!(
            decide(0.96, (0.953, 0.97), M),
            Verdict::Same,
            "below 1, inside"
        );
        assert_eq!(decide(1.0, (1.0 / 1.05, 1.05), M), Verdict::Same, "edges");
    }

    #[test]
    fn the_band_is_a_change_in_time() {
        // 5% slower is 1.05 times as long per item: throughput ratio 1/1.05.
        let (lo, hi) = band(M);
        assert!((lo - 1.0 / 1.05).abs() < 1e-12 && (hi - 1.05).abs() < 1e-12);
        // A run 5% slower in time reads about 0.952; an interval around it that excludes 1 and
        // reaches past the edge cannot rule out a 5% slowdown (it read `same` on a band of 1 − m).
        assert_eq!(decide(0.954, (0.950, 0.957), M), Verdict::Regression);
        assert_eq!(decide(0.956, (0.9535, 0.958), M), Verdict::Same);
    }

    #[test]
    fn below_one_and_beyond_the_band_is_a_regression() {
        assert_eq!(decide(0.90, (0.87, 0.93), M), Verdict::Regression);
        assert_eq!(decide(0.93, (0.90, 0.97), M), Verdict::Regression);
        assert_eq!(decide(1.10, (1.07, 1.13), M), Verdict::Faster);
        // A 5% slowdown reads about 0.952, inside the band's edge: the interval decides, and one
        // that excludes 1 and reaches past the edge cannot rule out a 5% change.
        assert_eq!(decide(0.952, (0.935, 0.97), M), Verdict::Regression);
        assert_eq!(decide(1.0 / 0.952, (1.03, 1.07), M), Verdict::Faster);
    }

    #[test]
    fn what_the_data_cannot_tell_is_undecided() {
        // The row: −20% with an interval from 0.13 to 4.9.
        assert_eq!(decide(0.8, (0.130, 4.938), M), Verdict::Undecided);
        // Covering 1 and reaching past the band.
        assert_eq!(decide(0.90, (0.80, 1.01), M), Verdict::Undecided);
        assert_eq!(decide(f64::NAN, (0.9, 1.1), M), Verdict::Undecided);
        assert_eq!(decide(1.0, (1.1, 0.9), M), Verdict::Undecided);
    }

    #[test]
    fn notes_say_what_the_interval_could_see() {
        let h = 1.12f64;
        assert_eq!(
            undecided_note((1.0 / h, h), M),
            "could not see a change under 12%"
        );
        assert_eq!(
            undecided_note((0.130, 4.938), M),
            "could not see a change under 6.2×"
        );
        assert_eq!(
            undecided_note((0.94, 1.01), M),
            "-6.0% to +1.0%, across the 5% minimum effect"
        );
    }

    #[test]
    fn a_family_reads_changes_at_a_stricter_level_and_same_at_95() {
        assert!((family_confidence(1) - 0.95).abs() < 1e-12);
        assert!((family_confidence(3) - (1.0 - 0.05 / 3.0)).abs() < 1e-12);
        assert_eq!(family_confidence(0), family_confidence(1));
        // The 95% interval shows a slowdown; the family one reaches 1: undecided, and says why.
        let (v, note) = decide_in_family_noted(0.97, (0.94, 0.99), (0.93, 1.01), 3, M);
        assert_eq!(v, Verdict::Undecided);
        assert_eq!(
            note.as_deref(),
            Some(
                "the 95% interval excludes 1 but the 98.3% one over 3 rows, [0.930, 1.010], does not"
            )
        );
        // Both exclude 1: a regression; inside the band: same, whatever the family interval.
        let slow = decide_in_family(0.93, (0.91, 0.95), (0.90, 0.96), M);
        assert_eq!(slow, Verdict::Regression);
        let same = decide_in_family(1.0, (0.98, 1.02), (0.9, 1.1), M);
        assert_eq!(same, Verdict::Same);
        let wide = decide_in_family_noted(1.0, (1.0 / 1.2, 1.2), (0.7, 1.3), 3, M);
        assert_eq!(wide.1.as_deref(), Some("could not see a change under 20%"));
    }

    #[test]
    fn out_of_range_minimum_effects_are_usage_errors() {
        for m in [0.0, -0.1, 1.0, 1.5, f64::NAN] {
            let e = check_min_effect(m).unwrap_err().to_string();
            assert!(e.contains("out of range"), "{e}");
        }
        assert!(check_min_effect(0.05).is_ok());
        assert_eq!(percent(0.15), "15");
    }

    #[test]
    fn unmeasured_rows_make_one_line() {
        let key = GroupKey {
            scenario: "image-rgb".into(),
            mode: "micro".into(),
            device: "cpu".into(),
            variant: String::new(),
        };
        let mut u = Unmeasured::default();
        assert_eq!(u.line("runs"), None);
        u.push(key.clone(), "unsupported", "unsupported");
        u.push(key.clone(), "unsupported", "unsupported");
        assert_eq!(u.line("runs").unwrap(), "2 rows unsupported in both runs");
        u.push(key, "missing", "error");
        assert_eq!(
            u.line("runs").unwrap(),
            "3 rows measured in neither run (1 missing → error, 2 unsupported)"
        );
    }

    fn mirrored(v: Verdict) -> Verdict {
        match v {
            Verdict::Regression => Verdict::Faster,
            Verdict::Faster => Verdict::Regression,
            v => v,
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, rng_seed: proptest::test_runner::RngSeed::Fixed(7), ..ProptestConfig::default() })]

        /// An interval inside the band is never a change, wherever the ratio lies in it.
        #[test]
        fn a_band_contained_interval_is_never_a_change(m in 0.01f64..0.5, a in 0.0f64..1.0, b in 0.0f64..1.0, t in 0.0f64..1.0) {
            let (l, h) = band(m);
            let (x, y) = (l + (h - l) * a.min(b), l + (h - l) * a.max(b));
            let v = decide(x + (y - x) * t, (x, y), m);
            prop_assert!(v != Verdict::Regression && v != Verdict::Faster, "{v:?}");
        }

        /// An interval that contains 1 is never a change.
        #[test]
        fn an_interval_containing_one_is_never_a_change(m in 0.0f64..0.9, lo in 0.01f64..1.0, hi in 1.0f64..100.0, t in 0.0f64..1.0) {
            let v = decide(lo + (hi - lo) * t, (lo, hi), m);
            prop_assert!(v != Verdict::Regression && v != Verdict::Faster, "{v:?}");
        }

        /// `same` only for an interval inside the band; a change only for one that excludes 1
        /// and reaches past the band's edge on its side.
        #[test]
        fn verdicts_keep_to_the_band(m in 0.01f64..0.5, r in 0.2f64..5.0, w in 0.0f64..0.5) {
            let (lo, hi) = (r * (-w).exp(), r * w.exp());
            let (l, h) = band(m);
            match decide(r, (lo, hi), m) {
                Verdict::Same => prop_assert!(l <= lo && hi <= h),
                Verdict::Regression => prop_assert!(hi < 1.0 && lo < l),
                Verdict::Faster => prop_assert!(lo > 1.0 && hi > h),
                _ => {}
            }
        }

        /// A family never calls a change its row's own 95% interval would not, and never
        /// changes a `same`.
        #[test]
        fn a_family_only_withholds_changes(m in 0.01f64..0.5, r in 0.2f64..5.0, w in 0.0f64..0.5, extra in 1.0f64..2.0) {
            let (same, change) = ((r * (-w).exp(), r * w.exp()), (r * (-w * extra).exp(), r * (w * extra).exp()));
            let alone = decide(r, same, m);
            let fam = decide_in_family(r, same, change, m);
            prop_assert!(fam == alone || fam == Verdict::Undecided, "{alone:?} → {fam:?}");
            prop_assert!(alone != Verdict::Same || fam == Verdict::Same);
        }

        /// Swapping baseline and current (ratio and interval inverted) mirrors the verdict, away
        /// from the band's edges, where rounding may fall either way.
        #[test]
        fn inverting_the_ratio_mirrors_the_verdict(r in 0.3f64..3.0, w in 0.0f64..0.3) {
            let (lo, hi) = (r * (-w).exp(), r * w.exp());
            let fwd = decide(r, (lo, hi), M);
            let back = decide(1.0 / r, (1.0 / hi, 1.0 / lo), M);
            let (l, h) = band(M);
            let near = |x: f64| (x / l).ln().abs() < 1e-9 || (x / h).ln().abs() < 1e-9 || (x.ln()).abs() < 1e-9;
            prop_assert!(near(r) || near(lo) || near(hi) || back == mirrored(fwd), "{fwd:?} vs {back:?}");
        }
    }
}
