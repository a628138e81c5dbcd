//! Paired statistics: two libraries timed in the same rounds (the interleaved schedule), compared
//! round by round. The speedup is the median of the per-round ratios, so the machine's drift,
//! which both libraries of a round share, cancels; its intervals resample rounds within worker
//! processes, on the log scale (`logscale`). Also the drift sentinel's spread. Pure; seeded.

use serde::{Deserialize, Serialize};

use super::bootstrap::{groups_split, split_groups};
use super::logscale;
use super::quantile::percentile_sorted;
use super::spread::Spread;
use crate::policy;

/// One library against a partner measured in the same rounds: `ratio` > 1 means this library
/// was faster (its throughput ÷ the partner's).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PairedSummary {
    pub partner: String,
    /// Median over rounds of (this throughput ÷ partner throughput).
    pub ratio: f64,
    /// Seeded bootstrap 95% interval of that median, resampling rounds within processes.
    pub ci_low: f64,
    pub ci_high: f64,
    /// Where the ratio of a repeat of the run lands (the rerun interval of the ratios).
    pub rerun_low: f64,
    pub rerun_high: f64,
    pub rounds: u64,
    /// The per-round ratios, in round order.
    pub ratios: Vec<f64>,
}

/// Pairs `a` and `b` round by round. `groups` are the rounds of consecutive worker processes
/// (empty: one process). `None` unless both have the same, non-zero number of rounds with a
/// positive, finite throughput on both sides (a round where either is NaN or zero is left out).
///
/// Everything is computed on ln(ratio) and exponentiated back (`logscale`): the ratio is the
/// median of the per-round ratios (the geometric middle of the two central ones for an even
/// count), its intervals are symmetric in log, never below zero, and pairing b with a gives
/// exactly the reciprocals.
pub fn paired(partner: &str, a: &[f64], b: &[f64], groups: &[usize]) -> Option<PairedSummary> {
    if a.is_empty() || a.len() != b.len() {
        return None;
    }
    let ok = |x: f64| x > 0.0 && x.is_finite();
    if !a.iter().zip(b).all(|(x, y)| ok(*x) && ok(*y)) {
        return paired_usable_rounds(partner, a, b);
    }
    let ratios: Vec<f64> = a.iter().zip(b).map(|(x, y)| x / y).collect();
    let logs: Vec<f64> = a.iter().zip(b).map(|(x, y)| x.ln() - y.ln()).collect();
    let ratio = middle_ratio(&ratios);
    let (ci, rerun) = logscale::median_log_half_widths(&logs, groups);
    // Over processes: `over_processes`, with the drift floor added; the simulator in
    // `tests/simulated_precision.rs` measures its coverage of a repeat.
    let rerun = match over_processes(&logs, groups, rerun, None) {
        Some((h, _)) => logscale::with_drift_floor(h),
        None => (rerun * rerun_t_factor(&logs, groups)).max(policy::RERUN_DRIFT_FLOOR.ln_1p()),
    };
    let (ci_low, ci_high) = logscale::around(ratio, ci);
    let (rerun_low, rerun_high) = logscale::around(ratio, rerun);
    Some(PairedSummary {
        partner: partner.to_string(),
        ratio,
        ci_low,
        ci_high,
        rerun_low,
        rerun_high,
        rounds: ratios.len() as u64,
        ratios,
    })
}

/// The part of a paired rerun half-width (log scale) that sampling explains over G ≥
/// `policy::MIN_PROCESS_UNITS` worker processes, and the degrees of freedom behind it: the wider
/// of Student's t over the processes' medians (guarded by their rounds, shrunk towards `prior`
/// when there is one: `logscale::process_rerun_half_width`) and `bootstrap`, the two-level
/// bootstrap of the median itself (the estimator the ratio is), which sees a slow process the
/// t interval's mean would not. `None` below the processes or with ragged groups.
pub fn over_processes(
    logs: &[f64],
    groups: &[usize],
    bootstrap: f64,
    prior: Option<&Spread>,
) -> Option<(f64, f64)> {
    logscale::process_rerun_half_width(logs, groups, prior).map(|(h, df)| (h.max(bootstrap), df))
}

/// The sampled rerun half-width (log scale) of a pair's per-round ln ratios over G ≥
/// `policy::MIN_PROCESS_UNITS` processes with `prior`, and its degrees of freedom
/// (`over_processes`); what the precision rule reads when the run's pairs give a prior.
pub fn sampled_over_processes(
    logs: &[f64],
    groups: &[usize],
    prior: Option<&Spread>,
) -> Option<(f64, f64)> {
    let (_, bootstrap) = logscale::median_log_half_widths(logs, groups);
    over_processes(logs, groups, bootstrap, prior)
}

/// Every pair's spread between processes in runs timed in the same rounds (`runs[i]` is library
/// i's throughputs, round by round; `groups` the rounds of consecutive processes, at least two):
/// the rows `spread::Spread::fit` takes. A pair with a round that is not positive and finite on both
/// sides gives none.
pub fn process_spreads(runs: &[&[f64]], groups: &[usize]) -> Vec<(f64, usize)> {
    let ok = |x: &f64| x.is_finite() && *x > 0.0;
    let mut out = Vec::new();
    for (i, a) in runs.iter().enumerate() {
        for b in &runs[i + 1..] {
            if a.len() != b.len() || !a.iter().chain(b.iter()).all(ok) {
                continue;
            }
            let logs: Vec<f64> = a
                .iter()
                .zip(b.iter())
                .map(|(x, y)| x.ln() - y.ln())
                .collect();
            out.extend(logscale::process_spread(&logs, groups));
        }
    }
    out
}

/// Small-sample widening of the paired rerun interval where it is not formed over processes
/// (`logscale::process_rerun_half_width`): Student's t over the normal quantile when the
/// resampled units are rounds or two processes; none over `policy::MIN_PROCESS_UNITS` or more
/// worker processes whose rounds do not split evenly.
fn rerun_t_factor(logs: &[f64], groups: &[usize]) -> f64 {
    let units = split_groups(logs, groups).len();
    if groups_split(groups, logs.len()) && groups.len() >= policy::MIN_PROCESS_UNITS {
        1.0
    } else {
        t_over_z(units.saturating_sub(1))
    }
}

/// The median ratio for an odd count; for an even one the geometric mean of the two middle
/// ratios (the exponentiated median of their logs), so a/b and b/a are reciprocal.
fn middle_ratio(ratios: &[f64]) -> f64 {
    let mut s = ratios.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] * s[n / 2]).sqrt()
    }
}

/// Rounds where both throughputs are positive and finite, paired as one process (the process
/// split no longer lines up); `None` when no round is left.
fn paired_usable_rounds(partner: &str, a: &[f64], b: &[f64]) -> Option<PairedSummary> {
    let ok = |x: f64| x > 0.0 && x.is_finite();
    let (a, b): (Vec<f64>, Vec<f64>) = a
        .iter()
        .zip(b)
        .filter(|(x, y)| ok(**x) && ok(**y))
        .map(|(x, y)| (*x, *y))
        .unzip();
    if a.is_empty() {
        return None;
    }
    paired(partner, &a, &b, &[])
}

/// Student's t quantile (two-sided 95%) with `df` degrees of freedom over the normal one (1.96);
/// 1 for `df` 0 (nothing to correct with).
pub fn t_over_z(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    let t = match df {
        0 => return 1.0,
        d if d <= T.len() => T[d - 1],
        // Beyond the table: the usual 1/df approach of t to the normal quantile.
        d => 1.96 + 2.4 / d as f64,
    };
    t / 1.96
}

/// THE minimum-effect band of a throughput ratio current ÷ baseline, [1/(1 + m), 1 + m]: a
/// change of m is a run that takes 1 + m times as long (5% slower: ratio 1/1.05 = 0.952) or as
/// short. Symmetric on the log scale (half-width `ln(1 + m)`), so inverting a ratio mirrors it.
pub fn min_effect_band(min_effect: f64) -> (f64, f64) {
    let edge = 1.0 + min_effect;
    (1.0 / edge, edge)
}

/// The fewest worker-process pairs whose interval over them (a t interval of the pairs' median
/// log ratios, `augbench_report::judge::interval::process_pair_interval`) can lie inside the band of
/// `min_effect` at all: when the processes of each variant agree to the drift floor
/// (`policy::RERUN_DRIFT_FLOOR` each, so a pair's log ratio spreads √2 times that). Fewer pairs
/// can only ever say `undecided` or call a change far larger than `min_effect`.
pub fn min_verdict_pairs(min_effect: f64) -> u64 {
    let band = min_effect_band(min_effect.max(1e-6)).1.ln();
    let sd = std::f64::consts::SQRT_2 * crate::policy::RERUN_DRIFT_FLOOR.ln_1p();
    let z = super::student::normal_quantile(0.5 + crate::policy::CONFIDENCE / 2.0);
    (2u64..1000)
        .find(|&n| z * t_over_z(n as usize - 1) * sd / (n as f64).sqrt() <= band)
        .unwrap_or(1000)
}

/// The drift sentinel's spread over a run: (p90 − p10) / median of the kernel's times. A quiet
/// machine stays within a few percent; above `policy::DRIFT_MIN_SPREAD` results say it drifted.
pub fn drift_spread(times: &[f64]) -> f64 {
    let mut s = times.to_vec();
    s.sort_by(f64::total_cmp);
    let m = percentile_sorted(&s, 50.0);
    if s.len() < 2 || m <= 0.0 {
        return 0.0;
    }
    (percentile_sorted(&s, 90.0) - percentile_sorted(&s, 10.0)) / m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_need_more_pairs_for_a_smaller_effect() {
        // At ±5%: 3 pairs leave a t(2) interval of about ±7% even when processes agree to 2%.
        assert_eq!(min_verdict_pairs(0.05), 4);
        assert_eq!(min_verdict_pairs(0.10), 3);
        assert!(min_verdict_pairs(0.01) > 20);
    }
    use crate::median;
    use proptest::prelude::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn ratio_is_the_median_of_per_round_ratios() {
        let a = [200.0, 100.0, 150.0];
        let b = [100.0, 50.0, 100.0];
        let p = paired("b", &a, &b, &[]).unwrap();
        assert_eq!(p.ratios, vec![2.0, 2.0, 1.5]);
        assert_eq!(p.ratio, 2.0);
        assert_eq!((p.rounds, p.partner.as_str()), (3, "b"));
        assert!(p.ci_low <= p.ratio && p.ratio <= p.ci_high);
        assert!(p.rerun_low <= p.ratio * 0.98 + 1e-12 && p.rerun_high >= p.ratio * 1.02 - 1e-12);
    }

    #[test]
    fn students_t_widens_rounds_and_two_processes_but_not_three() {
        assert_eq!(t_over_z(0), 1.0);
        assert!((t_over_z(2) - 4.303 / 1.96).abs() < 1e-12);
        assert!(t_over_z(14) < 1.1 && t_over_z(100) < t_over_z(30));
        let a = [200.0, 230.0, 170.0, 215.0, 185.0, 222.0];
        let b = [100.0; 6];
        let logs: Vec<f64> = a.iter().map(|x: &f64| (x / 100.0).ln()).collect();
        let half = |p: &PairedSummary| (p.rerun_high / p.ratio).ln();
        let floor = policy::RERUN_DRIFT_FLOOR.ln_1p();
        let expect = |groups: &[usize], t: f64| {
            let (_, raw) = logscale::median_log_half_widths(&logs, groups);
            (raw * t).max(floor)
        };
        let close = |x: f64, y: f64| (x - y).abs() < 1e-9;
        // Over 3 processes: the wider of the processes' t interval and the bootstrap, with the
        // drift floor added in quadrature (`logscale::process_rerun_half_width`).
        let three = paired("b", &a, &b, &[2, 2, 2]).unwrap();
        let (t, _) = logscale::process_rerun_half_width(&logs, &[2, 2, 2], None).unwrap();
        let boot = logscale::median_log_half_widths(&logs, &[2, 2, 2]).1;
        assert!(
            close(half(&three), logscale::with_drift_floor(t.max(boot))),
            "3 processes: {} vs t {t}, bootstrap {boot}",
            half(&three)
        );
        let two = paired("b", &a, &b, &[3, 3]).unwrap();
        assert!(
            close(half(&two), expect(&[3, 3], t_over_z(1))),
            "2 processes: t(1)"
        );
        let unsplit = paired("b", &a, &b, &[2, 2, 1]).unwrap();
        assert!(
            close(half(&unsplit), expect(&[], t_over_z(5))),
            "groups that do not split the rounds: the rounds, with t(5)"
        );
        let one = paired("b", &a, &b, &[]).unwrap();
        assert!(
            close(half(&one), expect(&[], t_over_z(5))),
            "6 rounds: t(5)"
        );
    }

    #[test]
    fn unequal_or_empty_rounds_do_not_pair() {
        assert!(paired("b", &[1.0, 2.0], &[1.0], &[]).is_none());
        assert!(paired("b", &[], &[], &[]).is_none());
    }

    /// The reason for pairing: a machine whose speed drifts by ±40% between rounds moves both
    /// libraries of a round alike. The paired ratio stays near the truth (2.0) and its interval
    /// stays narrow, while the ratio of the two unpaired medians wanders with the drift.
    #[test]
    fn pairing_cancels_drift_that_unpaired_medians_see() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let mut worst_paired: f64 = 0.0;
        let mut worst_unpaired: f64 = 0.0;
        for _ in 0..50 {
            let speed: Vec<f64> = (0..10).map(|_| rng.random_range(0.6..1.4)).collect();
            let noise = |rng: &mut ChaCha8Rng| rng.random_range(0.99..1.01);
            let a: Vec<f64> = speed.iter().map(|s| 2000.0 * s * noise(&mut rng)).collect();
            let b: Vec<f64> = speed.iter().map(|s| 1000.0 * s * noise(&mut rng)).collect();
            let p = paired("b", &a, &b, &[]).unwrap();
            worst_paired = worst_paired.max((p.ratio / 2.0 - 1.0).abs());
            // Unpaired: each library's median taken from a different half of the run.
            let unpaired = median(&a[..5]) / median(&b[5..]);
            worst_unpaired = worst_unpaired.max((unpaired / 2.0 - 1.0).abs());
        }
        assert!(worst_paired < 0.02, "paired off by {worst_paired}");
        assert!(
            worst_unpaired > 0.10,
            "unpaired off by only {worst_unpaired}"
        );
    }

    #[test]
    fn drift_spread_of_a_steady_and_a_drifting_kernel() {
        assert_eq!(drift_spread(&[5.0; 8]), 0.0);
        assert_eq!(drift_spread(&[5.0]), 0.0);
        let drifting = [4.0, 4.2, 5.0, 5.5, 6.0, 6.5, 4.1, 6.4];
        assert!(drift_spread(&drifting) > policy::DRIFT_MIN_SPREAD);
    }

    /// The case of issue 22: a ratio near 3.9 with one wild process read [−0.65, 8.52] on the
    /// linear scale. On the log scale the interval stays positive.
    #[test]
    fn a_wild_process_cannot_push_the_interval_below_zero() {
        let a = [390.0, 400.0, 380.0, 395.0, 385.0, 390.0, 40.0, 900.0, 60.0];
        let b = [100.0; 9];
        let p = paired("b", &a, &b, &[3, 3, 3]).unwrap();
        assert!(p.rerun_low > 0.0 && p.ci_low > 0.0, "{p:?}");
        assert!(p.rerun_low < p.ratio && p.ratio < p.rerun_high);
    }

    #[test]
    fn rounds_with_nan_or_zero_are_left_out_and_none_left_is_no_pairing() {
        let p = paired("b", &[200.0, f64::NAN, 210.0], &[100.0, 100.0, 0.0], &[]).unwrap();
        assert_eq!((p.rounds, p.ratio), (1, 2.0));
        assert!(paired("b", &[f64::NAN, 1.0], &[1.0, 0.0], &[]).is_none());
    }

    fn rounds() -> impl Strategy<Value = (Vec<f64>, Vec<f64>, Vec<usize>)> {
        (1usize..4, 1usize..6).prop_flat_map(|(procs, per)| {
            let n = procs * per;
            (
                prop::collection::vec(1e-2f64..1e6, n),
                prop::collection::vec(1e-2f64..1e6, n),
                Just(if procs > 1 { vec![per; procs] } else { vec![] }),
            )
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, rng_seed: proptest::test_runner::RngSeed::Fixed(3), ..ProptestConfig::default() })]
        #[test]
        fn intervals_are_positive_and_symmetric_in_log((a, b, g) in rounds()) {
            let p = paired("b", &a, &b, &g).unwrap();
            for (lo, hi) in [(p.ci_low, p.ci_high), (p.rerun_low, p.rerun_high)] {
                prop_assert!(lo > 0.0 && lo <= p.ratio && p.ratio <= hi, "{p:?}");
                let (down, up) = ((p.ratio / lo).ln(), (hi / p.ratio).ln());
                prop_assert!((down - up).abs() <= 1e-9 * up.max(1.0), "{p:?}");
            }
        }

        #[test]
        fn the_interval_of_b_over_a_is_the_reciprocal_of_a_over_b((a, b, g) in rounds()) {
            let ab = paired("b", &a, &b, &g).unwrap();
            let ba = paired("a", &b, &a, &g).unwrap();
            let close = |x: f64, y: f64| (x * y - 1.0).abs() < 1e-9;
            prop_assert!(close(ab.ratio, ba.ratio), "{} {}", ab.ratio, ba.ratio);
            prop_assert!(close(ab.ci_low, ba.ci_high) && close(ab.ci_high, ba.ci_low), "{ab:?} {ba:?}");
            prop_assert!(close(ab.rerun_low, ba.rerun_high) && close(ab.rerun_high, ba.rerun_low), "{ab:?} {ba:?}");
        }
    }
}
