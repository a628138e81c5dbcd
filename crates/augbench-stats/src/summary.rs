//! The summary of one row's runs (median, mean, std, CV, percentiles, the bootstrap and rerun
//! intervals, the headline figure) and the verdicts read from them: `unstable`, drift beyond the
//! sentinel's floor, and whether the runs are usable at all. Pure.

use serde::{Deserialize, Serialize};

use super::bootstrap::{bootstrap_median_ci, rerun_interval};
use super::figure::{self, Figure};
use super::quantile::{percentile_sorted, sorted};
use crate::policy;

/// Summary of one sample. All fields are `NaN`-free for a non-empty finite sample.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub n: usize,
    pub median: f64,
    pub mean: f64,
    pub std: f64,
    pub cv: f64,
    pub min: f64,
    pub max: f64,
    pub p50: f64,
    pub p75: f64,
    pub p90: f64,
    pub p95: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    /// Rerun interval: where the median of a repeat of the same measurement lands (95%).
    pub rerun_low: f64,
    pub rerun_high: f64,
    /// The headline figure (policy's estimator) and its rerun interval.
    pub figure: Figure,
    pub unstable: bool,
    pub unstable_reason: Option<String>,
}

pub fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// Sample standard deviation (n − 1); 0 for fewer than two values.
pub fn std_dev(xs: &[f64]) -> f64 {
    crate::spread::variance(xs).map_or(0.0, |(v, _)| v.sqrt())
}

/// Full summary with policy's bootstrap settings and instability rule (one process).
pub fn summarize(xs: &[f64]) -> Summary {
    summarize_grouped(xs, &[])
}

/// Full summary of values from consecutive worker processes with `groups` runs each.
pub fn summarize_grouped(xs: &[f64], groups: &[usize]) -> Summary {
    let s = sorted(xs);
    let mean = mean(xs);
    let std = std_dev(xs);
    let median = percentile_sorted(&s, 50.0);
    let cv = if mean > 0.0 { std / mean } else { 0.0 };
    let (ci_low, ci_high) = bootstrap_median_ci(
        xs,
        policy::BOOTSTRAP_RESAMPLES,
        policy::CONFIDENCE,
        policy::BOOTSTRAP_SEED,
    );
    let (rerun_low, rerun_high) = rerun_interval(xs, groups);
    let figure = figure::figure(xs, groups);
    let gap = figure::fast_end_gap(figure.estimator, xs, groups);
    let unstable_reason = instability(&figure, gap);
    Summary {
        n: xs.len(),
        median,
        mean,
        std,
        cv,
        min: s.first().copied().unwrap_or(f64::NAN),
        max: s.last().copied().unwrap_or(f64::NAN),
        p50: median,
        p75: percentile_sorted(&s, 75.0),
        p90: percentile_sorted(&s, 90.0),
        p95: percentile_sorted(&s, 95.0),
        ci_low,
        ci_high,
        rerun_low,
        rerun_high,
        figure,
        unstable: unstable_reason.is_some(),
        unstable_reason,
    }
}

/// Relative half-width of an interval around its median.
pub fn ci_half_width(median: f64, lo: f64, hi: f64) -> f64 {
    if median > 0.0 {
        (hi - lo) / 2.0 / median
    } else {
        0.0
    }
}

/// `unstable` predicts that a row's figure will not repeat: its fastest worker process read more
/// than `policy::UNSTABLE_PROCESS_GAP` above the figure (`figure::fast_end_gap`; rows of fewer
/// than `policy::MIN_PROCESS_UNITS` processes are never marked by it). The reason names the test,
/// its number and threshold.
pub fn instability(figure: &Figure, gap: Option<f64>) -> Option<String> {
    let gap = gap.filter(|g| *g > policy::UNSTABLE_PROCESS_GAP)?;
    Some(format!(
        "processes disagree: the fastest worker process read {:.0}% above the figure ({}) (> {:.0}%)",
        gap * 100.0,
        figure.estimator.label(),
        policy::UNSTABLE_PROCESS_GAP * 100.0
    ))
}

/// Whether the drift sentinel's spread over a transform's rounds is beyond what the sentinel
/// shows on its own: above `policy::DRIFT_MIN_SPREAD` and above `policy::DRIFT_FLOOR_MULTIPLE`
/// times its noise floor (its spread over back-to-back timings at the start of the run; `None`
/// when not measured). The reason names both numbers and thresholds.
pub fn drift_beyond_floor(spread: f64, floor: Option<f64>) -> Option<String> {
    let limit = floor.map_or(policy::DRIFT_MIN_SPREAD, |f| {
        (f * policy::DRIFT_FLOOR_MULTIPLE).max(policy::DRIFT_MIN_SPREAD)
    });
    (spread > limit).then(|| {
        let floor = floor.map_or_else(
            || "not measured".to_string(),
            |f| format!("{:.1}%", f * 100.0),
        );
        format!(
            "drift: the sentinel kernel's time spread {:.0}% over the rounds (> {:.0}%: {}× its noise floor {floor}, at least {:.0}%)",
            spread * 100.0,
            limit * 100.0,
            policy::DRIFT_FLOOR_MULTIPLE,
            policy::DRIFT_MIN_SPREAD * 100.0
        )
    })
}

/// Whether runs hold at least one positive, finite throughput; else why not (for an `error`
/// row: a figure of NaN or zero runs would divide by zero downstream).
pub fn usable_runs(xs: &[f64]) -> Result<(), String> {
    if xs.iter().any(|x| x.is_finite() && *x > 0.0) {
        return Ok(());
    }
    let nan = xs.iter().filter(|x| x.is_nan()).count();
    Err(format!(
        "no usable run: {} of {} runs NaN, the rest zero, negative or infinite",
        nan,
        xs.len()
    ))
}

#[cfg(test)]
mod tests {
    use super::{mean, std_dev, summarize};
    use crate::{median, percentile_sorted};
    use proptest::prelude::*;
    use rand::{Rng as _, SeedableRng as _};
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn known_values() {
        let xs = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(median(&xs), 2.5);
        assert_eq!(mean(&xs), 2.5);
        assert!((std_dev(&xs) - 1.2909944487358056).abs() < 1e-12);
        assert_eq!(percentile_sorted(&xs, 75.0), 3.25);
    }

    #[test]
    fn a_fast_process_far_above_the_others_is_unstable() {
        // Three processes: fastest runs 100, 104, 150 → the figure is 104, the fastest process
        // 44% above it.
        let runs = [90.0, 100.0, 95.0, 104.0, 99.0, 101.0, 150.0, 120.0, 130.0];
        let s = super::summarize_grouped(&runs, &[3, 3, 3]);
        let reason = s.unstable_reason.clone().unwrap_or_default();
        assert!(s.unstable, "{s:?}");
        assert!(
            reason.starts_with("processes disagree:") && reason.contains("44% above"),
            "{reason}"
        );
        // One slow process is what the figure's median ignores: not marked.
        let slow = [50.0, 48.0, 52.0, 104.0, 99.0, 101.0, 100.0, 98.0, 97.0];
        assert!(!super::summarize_grouped(&slow, &[3, 3, 3]).unstable);
    }

    #[test]
    fn one_process_cannot_tell_which_figures_repeat() {
        let s = summarize(&[1.0, 10.0, 1.0, 10.0]);
        assert!(!s.unstable, "{s:?}");
        assert_eq!(
            super::figure::fast_end_gap(s.figure.estimator, &[1.0, 10.0], &[1, 1]),
            None,
            "two processes are fewer than policy's minimum"
        );
    }

    #[test]
    fn drift_counts_only_beyond_the_sentinels_own_floor() {
        use super::drift_beyond_floor;
        use crate::policy::{DRIFT_FLOOR_MULTIPLE, DRIFT_MIN_SPREAD};
        let noisy_floor = DRIFT_MIN_SPREAD; // a sentinel that is itself this noisy
        let spread = noisy_floor * DRIFT_FLOOR_MULTIPLE * 0.9;
        assert_eq!(drift_beyond_floor(spread, Some(noisy_floor)), None);
        let why = drift_beyond_floor(spread, Some(0.01)).unwrap_or_default();
        assert!(
            why.starts_with("drift:") && why.contains("noise floor 1.0%"),
            "{why}"
        );
        assert_eq!(drift_beyond_floor(DRIFT_MIN_SPREAD * 0.5, None), None);
        assert!(drift_beyond_floor(DRIFT_MIN_SPREAD * 2.0, None).is_some());
    }

    #[test]
    fn runs_that_are_all_nan_or_zero_are_not_usable() {
        use super::usable_runs;
        assert!(
            usable_runs(&[f64::NAN, 0.0])
                .unwrap_err()
                .contains("1 of 2 runs NaN")
        );
        assert!(usable_runs(&[]).is_err());
        assert!(usable_runs(&[0.0, 3.0]).is_ok());
    }

    fn sample() -> impl Strategy<Value = Vec<f64>> {
        prop::collection::vec(0.001f64..1e7, 1..40)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, rng_seed: proptest::test_runner::RngSeed::Fixed(1), ..ProptestConfig::default() })]
        #[test]
        fn median_within_min_max(xs in sample()) {
            let s = summarize(&xs);
            prop_assert!(s.min <= s.median && s.median <= s.max);
        }

        #[test]
        fn interval_contains_median(xs in sample()) {
            let s = summarize(&xs);
            prop_assert!(s.ci_low <= s.median && s.median <= s.ci_high);
        }

        #[test]
        fn rerun_interval_contains_the_median_and_is_at_least_as_wide_as_the_ci(xs in sample()) {
            let s = summarize(&xs);
            prop_assert!(s.rerun_low <= s.median && s.median <= s.rerun_high);
            prop_assert!(s.rerun_high - s.rerun_low >= (s.ci_high - s.ci_low) * 0.9);
        }

        #[test]
        fn rerun_interval_is_never_narrower_than_the_drift_floor(xs in sample()) {
            let s = summarize(&xs);
            let floor = s.median * crate::policy::RERUN_DRIFT_FLOOR;
            prop_assert!(s.rerun_low <= s.median - floor * 0.999999);
            prop_assert!(s.rerun_high >= s.median + floor * 0.999999);
        }

        #[test]
        fn percentiles_are_ordered(xs in sample()) {
            let s = summarize(&xs);
            prop_assert!(s.min <= s.p50 && s.p50 <= s.p75 && s.p75 <= s.p90 && s.p90 <= s.p95 && s.p95 <= s.max);
        }

        #[test]
        fn invariant_to_permutation(xs in sample(), seed in 0u64..1000) {
            let mut ys = xs.clone();
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            for i in (1..ys.len()).rev() {
                ys.swap(i, rng.random_range(0..=i));
            }
            let (a, b) = (summarize(&xs), summarize(&ys));
            prop_assert_eq!(a.median, b.median);
            prop_assert!((a.mean - b.mean).abs() <= 1e-9 * a.mean.abs().max(1.0));
            prop_assert_eq!(a.p90, b.p90);
            prop_assert_eq!((a.ci_low, a.ci_high), (b.ci_low, b.ci_high));
            prop_assert_eq!((a.rerun_low, a.rerun_high), (b.rerun_low, b.rerun_high));
        }

        #[test]
        fn std_is_nonnegative_and_zero_for_constants(x in 0.1f64..1e6, n in 1usize..20) {
            let xs = vec![x; n];
            prop_assert!(std_dev(&xs) <= 1e-12 * x);
            prop_assert!(std_dev(&[x, x * 2.0]) > 0.0);
        }
    }
}
