//! Intervals of ratios on the log scale: a ratio's interval is built on ln(ratio) and
//! exponentiated back, so it is never below zero, it is symmetric in log around the ratio
//! (ratio·e^−h to ratio·e^h), and the interval of b/a is exactly the reciprocal of a/b's. Used
//! by paired speedups and their rerun intervals, and by regression ratios. Pure; seeded.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::bootstrap::groups_split;
use super::draws::RankedDraws;
use super::quantile::{median, percentile_in_place};
use super::spread::{Spread, variance};
use crate::policy;

/// The interval ratio·e^∓h (h ≥ 0 on the log scale); the ratio itself for a non-positive one.
pub fn around(ratio: f64, h: f64) -> (f64, f64) {
    if ratio > 0.0 && ratio.is_finite() && h.is_finite() {
        (ratio * (-h.abs()).exp(), ratio * h.abs().exp())
    } else {
        (ratio, ratio)
    }
}

/// The median of log values (`exp` of it is the geometric middle of the ratios: the median
/// ratio for an odd count, the geometric mean of the two middle ratios for an even one).
pub fn median_log(logs: &[f64]) -> f64 {
    median(logs)
}

/// Half-widths on the log scale of the median of `logs` (per-round ln ratios, processes of
/// `groups` rounds each): the 95% interval of the median (the larger side of a seeded
/// two-level percentile bootstrap, so the interval is symmetric), and the rerun interval (95% of
/// |median of one resample − median of another|, scaled by √(G/(G−1)) for G units). Values and
/// units are ordered by magnitude first, so negating every value (swapping the two libraries)
/// gives the same resamples, negated: the interval of b/a is the reciprocal of a/b's. Each
/// resample is `RankedDraws::draw_units` (units with replacement, then values within each).
pub fn median_log_half_widths(logs: &[f64], groups: &[usize]) -> (f64, f64) {
    let m = median_log(logs);
    if logs.len() < 2 || !m.is_finite() {
        return (0.0, 0.0);
    }
    let units = magnitude_units(logs, groups);
    let g = units.len();
    let mut rng = ChaCha8Rng::seed_from_u64(policy::BOOTSTRAP_SEED);
    let mut draws = RankedDraws::new(&units);
    let mut draw = || {
        draws.draw_units(&mut rng);
        draws.percentile(50.0)
    };
    let n = policy::BOOTSTRAP_RESAMPLES;
    let mut meds: Vec<f64> = (0..n).map(|_| draw()).collect();
    let mut diffs: Vec<f64> = (0..n).map(|_| (draw() - draw()).abs()).collect();
    let alpha = (1.0 - policy::CONFIDENCE) / 2.0 * 100.0;
    let ci = (m - percentile_in_place(&mut meds, alpha))
        .max(percentile_in_place(&mut meds, 100.0 - alpha) - m)
        .max(0.0);
    let scale = if g > 1 {
        (g as f64 / (g - 1) as f64).sqrt()
    } else {
        1.0
    };
    (
        ci,
        percentile_in_place(&mut diffs, policy::CONFIDENCE * 100.0) * scale,
    )
}

/// The rerun half-width on the log scale over worker processes (`groups`, at least
/// `policy::MIN_PROCESS_UNITS` that split `logs`): each process's median ln ratio is one unit,
/// and a repeat invocation's mean of as many units lands within Student's t × the units' standard
/// deviation × √(2/G) of this one's, 95% of the time (the difference of two means of G,
/// `policy::CONFIDENCE`); `None` with fewer processes or ragged groups. The units' variance is
/// their spread (G − 1 degrees of freedom), shrunk towards `prior` when the run's other pairs
/// give one (`spread::Spread::moderate`: its degrees of freedom join), and never below what the
/// rounds inside the processes imply for a median of theirs (`within_unit_variance`, many
/// degrees of freedom): three processes that happen to agree closer than their own rounds allow
/// would otherwise give an interval too narrow, and a rule that stops on the first narrow one
/// would stop on exactly those. Also returns the degrees of freedom the t quantile used. The
/// drift floor, which no run can see, is added by the caller.
pub fn process_rerun_half_width(
    logs: &[f64],
    groups: &[usize],
    prior: Option<&Spread>,
) -> Option<(f64, f64)> {
    let g = groups.len();
    if g < policy::MIN_PROCESS_UNITS {
        return None;
    }
    let (own, own_df) = process_spread(logs, groups)?;
    let (between, between_df) = match prior {
        Some(p) => p.moderate(own, own_df),
        None => (own, own_df as f64),
    };
    let units = split(logs, groups);
    let (var, df) = match within_unit_variance(&units) {
        Some((within, df)) if within > between => (within, df as f64),
        _ => (between, between_df),
    };
    let t = super::student::quantile(df_index(df), 0.5 + policy::CONFIDENCE / 2.0);
    Some((t * var.sqrt() * (2.0 / g as f64).sqrt(), df))
}

/// The variance of the processes' median ln ratios (`groups` that split `logs`, at least two of
/// them) and its degrees of freedom: what `spread::Spread::fit` learns a run's prior from.
pub fn process_spread(logs: &[f64], groups: &[usize]) -> Option<(f64, usize)> {
    if groups.len() < 2 || !groups_split(groups, logs.len()) {
        return None;
    }
    let medians: Vec<f64> = split(logs, groups).iter().map(|u| median_log(u)).collect();
    variance(&medians)
}

/// Degrees of freedom as Student's table takes them: whole, at least 1, at most the cap.
pub fn df_index(df: f64) -> usize {
    df.clamp(1.0, super::spread::DF_CAP) as usize
}

/// `xs` cut into consecutive slices of `groups` values each (the caller checked they fit).
fn split<'x>(xs: &'x [f64], groups: &[usize]) -> Vec<&'x [f64]> {
    let mut rest = xs;
    groups
        .iter()
        .map(|&n| {
            let (head, tail) = rest.split_at(n);
            rest = tail;
            head
        })
        .collect()
}

/// The variance a process's median ln ratio has from its rounds alone, averaged over the
/// processes ((π/2)·s²/n per process, the large-sample variance of a median of n normal values;
/// heavier tails make it err wide), with its degrees of freedom (Σ n − 1); `None` when a process
/// has fewer than two rounds.
fn within_unit_variance(units: &[&[f64]]) -> Option<(f64, usize)> {
    let mut total = 0.0;
    let mut df = 0;
    for u in units {
        let n = u.len();
        if n < 2 {
            return None;
        }
        let m = u.iter().sum::<f64>() / n as f64;
        let s2 = u.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1) as f64;
        total += std::f64::consts::FRAC_PI_2 * s2 / n as f64;
        df += n - 1;
    }
    Some((total / units.len() as f64, df))
}

/// A half-width that sampling explains combined with the drift floor (both 95% half-widths of
/// independent parts, on the log scale): √(h² + floor²).
pub fn with_drift_floor(h: f64) -> f64 {
    h.hypot(policy::RERUN_DRIFT_FLOOR.ln_1p())
}

/// Resampling units ordered by magnitude (|x|, then sign), so the order does not depend on the
/// order values arrived in, nor on the sign of every value.
fn magnitude_units(xs: &[f64], groups: &[usize]) -> Vec<Vec<f64>> {
    let key = |x: &f64| (x.abs().to_bits(), x.is_sign_negative());
    let by_magnitude = |mut v: Vec<f64>| {
        v.sort_by_key(key);
        v
    };
    let fits = groups_split(groups, xs.len());
    if !fits {
        return by_magnitude(xs.to_vec())
            .into_iter()
            .map(|x| vec![x])
            .collect();
    }
    let mut rest = xs;
    let mut units: Vec<Vec<f64>> = groups
        .iter()
        .map(|&n| {
            let (head, tail) = rest.split_at(n);
            rest = tail;
            by_magnitude(head.to_vec())
        })
        .collect();
    units.sort_by(|a, b| a.iter().map(key).cmp(b.iter().map(key)));
    units
}

/// The ratio a/b of two figures with log-scale half-widths `ha`, `hb` (independent), and its
/// interval: ln(a/b) ± √(ha² + hb²). `None` unless both are positive and finite.
pub fn ratio_of(a: f64, ha: f64, b: f64, hb: f64) -> Option<(f64, (f64, f64))> {
    let ok = |x: f64| x > 0.0 && x.is_finite();
    if !(ok(a) && ok(b)) {
        return None;
    }
    let r = a / b;
    Some((r, around(r, ha.hypot(hb))))
}

/// Half-width on the log scale of an interval (lo, hi) around `x`: the larger side.
pub fn log_half_width(x: f64, lo: f64, hi: f64) -> f64 {
    if x > 0.0 && lo > 0.0 && hi > 0.0 {
        (x / lo).ln().max((hi / x).ln()).max(0.0)
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn around_is_positive_and_log_symmetric() {
        let (lo, hi) = around(4.0, 2.0_f64.ln());
        assert!((lo - 2.0).abs() < 1e-12 && (hi - 8.0).abs() < 1e-12);
        assert_eq!(around(0.0, 1.0), (0.0, 0.0));
    }

    #[test]
    fn ratio_of_two_figures() {
        let (r, (lo, hi)) = ratio_of(200.0, 0.03, 100.0, 0.04).unwrap();
        assert_eq!(r, 2.0);
        assert!((hi / r).ln() - 0.05 < 1e-12 && (r / lo).ln() - 0.05 < 1e-12);
        assert!(ratio_of(0.0, 0.1, 1.0, 0.1).is_none());
        assert!((log_half_width(2.0, 1.0, 3.0) - 2.0_f64.ln()).abs() < 1e-12);
    }
}
