//! Pure statistics of a sample of throughputs: median, mean, sample std, CV, percentiles (linear
//! interpolation), and a seeded percentile-bootstrap interval of the median. No I/O, no clocks.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

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
    if xs.len() < 2 {
        return 0.0;
    }
    let m = mean(xs);
    let ss: f64 = xs.iter().map(|x| (x - m).powi(2)).sum();
    (ss / (xs.len() - 1) as f64).sqrt()
}

fn sorted(xs: &[f64]) -> Vec<f64> {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    v
}

/// Percentile `q` in [0, 100] of sorted values by linear interpolation between closest ranks.
pub fn percentile_sorted(sorted: &[f64], q: f64) -> f64 {
    match sorted.len() {
        0 => f64::NAN,
        1 => sorted[0],
        n => {
            let rank = (q / 100.0).clamp(0.0, 1.0) * (n - 1) as f64;
            let lo = rank.floor() as usize;
            let hi = rank.ceil() as usize;
            let frac = rank - lo as f64;
            sorted[lo] + (sorted[hi] - sorted[lo]) * frac
        }
    }
}

pub fn median(xs: &[f64]) -> f64 {
    percentile_sorted(&sorted(xs), 50.0)
}

/// Percentile-bootstrap interval of the median with a seeded generator (reproducible).
pub fn bootstrap_median_ci(xs: &[f64], resamples: usize, confidence: f64, seed: u64) -> (f64, f64) {
    if xs.len() < 2 || resamples == 0 {
        let m = median(xs);
        return (m, m);
    }
    // Sorting first makes the interval independent of the order the values arrived in.
    let xs = &sorted(xs);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut buf = vec![0.0; xs.len()];
    let mut medians: Vec<f64> = (0..resamples)
        .map(|_| {
            for slot in buf.iter_mut() {
                *slot = xs[rng.random_range(0..xs.len())];
            }
            median(&buf)
        })
        .collect();
    medians.sort_by(f64::total_cmp);
    let alpha = (1.0 - confidence) / 2.0 * 100.0;
    let lo = percentile_sorted(&medians, alpha);
    let hi = percentile_sorted(&medians, 100.0 - alpha);
    let m = median(xs);
    (lo.min(m), hi.max(m))
}

/// Full summary with policy's bootstrap settings and instability rule.
pub fn summarize(xs: &[f64]) -> Summary {
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
    let unstable_reason = instability(cv, median, ci_low, ci_high);
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

fn instability(cv: f64, median: f64, lo: f64, hi: f64) -> Option<String> {
    let half = ci_half_width(median, lo, hi);
    if cv > policy::UNSTABLE_CV {
        Some(format!("cv {cv:.3} > {}", policy::UNSTABLE_CV))
    } else if half > policy::UNSTABLE_CI_HALF_WIDTH {
        Some(format!(
            "95% interval ±{:.1}% > ±{:.0}%",
            half * 100.0,
            policy::UNSTABLE_CI_HALF_WIDTH * 100.0
        ))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::{
        ChaCha8Rng, bootstrap_median_ci, mean, median, percentile_sorted, std_dev, summarize,
    };
    use proptest::prelude::*;
    use rand::{Rng as _, SeedableRng as _};

    #[test]
    fn known_values() {
        let xs = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(median(&xs), 2.5);
        assert_eq!(mean(&xs), 2.5);
        assert!((std_dev(&xs) - 1.2909944487358056).abs() < 1e-12);
        assert_eq!(percentile_sorted(&xs, 75.0), 3.25);
    }

    #[test]
    fn bootstrap_is_reproducible_for_a_seed() {
        let xs = [10.0, 11.0, 9.5, 10.2, 10.8, 9.9];
        assert_eq!(
            bootstrap_median_ci(&xs, 500, 0.95, 7),
            bootstrap_median_ci(&xs, 500, 0.95, 7)
        );
    }

    #[test]
    fn noisy_sample_is_unstable() {
        let s = summarize(&[1.0, 10.0, 1.0, 10.0]);
        assert!(s.unstable, "{s:?}");
        let s = summarize(&[100.0, 100.5, 99.8, 100.2, 100.1]);
        assert!(!s.unstable, "{s:?}");
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
        }

        #[test]
        fn std_is_nonnegative_and_zero_for_constants(x in 0.1f64..1e6, n in 1usize..20) {
            let xs = vec![x; n];
            prop_assert!(std_dev(&xs) <= 1e-12 * x);
            prop_assert!(std_dev(&[x, x * 2.0]) > 0.0);
        }
    }
}
