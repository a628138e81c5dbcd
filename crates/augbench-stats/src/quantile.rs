//! Order statistics of one sample: the values sorted, a percentile by linear interpolation
//! between closest ranks, and the median. Every other part of `stats` reads its percentiles
//! here: from sorted values (`percentile_sorted`, the definition), or by selecting only the one
//! or two order statistics a percentile reads from values in any order (`percentile_in_place`,
//! bit for bit the same). Pure.

pub(crate) fn sorted(xs: &[f64]) -> Vec<f64> {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    v
}

/// Where percentile `q` of `n` ≥ 2 sorted values falls: the ranks below and above it and the
/// fraction of the way between them.
pub(crate) fn interpolation_ranks(n: usize, q: f64) -> (usize, usize, f64) {
    let rank = (q / 100.0).clamp(0.0, 1.0) * (n - 1) as f64;
    let lo = rank.floor() as usize;
    let hi = rank.ceil() as usize;
    (lo, hi, rank - lo as f64)
}

/// Percentile `q` in [0, 100] of sorted values by linear interpolation between closest ranks.
pub fn percentile_sorted(sorted: &[f64], q: f64) -> f64 {
    match sorted.len() {
        0 => f64::NAN,
        1 => sorted[0],
        n => {
            let (lo, hi, frac) = interpolation_ranks(n, q);
            sorted[lo] + (sorted[hi] - sorted[lo]) * frac
        }
    }
}

/// `percentile_sorted(&sorted(xs), q)` without sorting: the order statistics at the two ranks
/// are selected (`f64::total_cmp`, a total order in which only equal bits compare equal, so each
/// order statistic is one bit pattern however it is found) and combined by the same expression.
/// Reorders `xs`.
pub(crate) fn percentile_in_place(xs: &mut [f64], q: f64) -> f64 {
    match xs.len() {
        0 => f64::NAN,
        1 => xs[0],
        n => {
            let (lo, hi, frac) = interpolation_ranks(n, q);
            let (_, &mut a, above) = xs.select_nth_unstable_by(lo, f64::total_cmp);
            // Everything above rank `lo` now lies after it: rank `lo + 1` is their least.
            let b = if hi > lo {
                least(above).unwrap_or(a)
            } else {
                a
            };
            a + (b - a) * frac
        }
    }
}

/// The least value by `f64::total_cmp`; `None` for no values.
fn least(xs: &[f64]) -> Option<f64> {
    xs.iter().copied().min_by(f64::total_cmp)
}

/// The median of values in any order, reordering them (`percentile_in_place` at 50).
pub(crate) fn median_in_place(xs: &mut [f64]) -> f64 {
    percentile_in_place(xs, 50.0)
}

pub fn median(xs: &[f64]) -> f64 {
    median_in_place(&mut xs.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use proptest::test_runner::RngSeed;

    /// The definition: sort a copy, read the percentile off it.
    fn by_sorting(xs: &[f64], q: f64) -> f64 {
        percentile_sorted(&sorted(xs), q)
    }

    /// Values with many repeats, signed zeros, infinities and NaNs of both signs among them.
    fn values() -> impl Strategy<Value = Vec<f64>> {
        let special = prop::sample::select(vec![
            0.0,
            -0.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            -f64::NAN,
            f64::MIN_POSITIVE,
            1.0,
        ]);
        let value = prop_oneof![
            4 => -1e6f64..1e6,
            3 => (0u8..4).prop_map(f64::from),
            1 => special,
        ];
        prop::collection::vec(value, 0..41)
    }

    fn q() -> impl Strategy<Value = f64> {
        prop_oneof![
            Just(50.0),
            Just(2.5),
            Just(97.5),
            Just(95.0),
            Just(0.0),
            Just(100.0),
            -10.0f64..110.0
        ]
    }

    #[test]
    fn known_medians_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(&[]).is_nan());
        // The interpolation's arithmetic, kept: a lone -0 is itself, a middle -0 reads +0.
        assert_eq!(median(&[-0.0]).to_bits(), (-0.0f64).to_bits());
        assert_eq!(median(&[-0.0, -0.0, -0.0]).to_bits(), 0.0f64.to_bits());
        assert!(median(&[f64::INFINITY; 3]).is_nan());
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 2000,
            rng_seed: RngSeed::Fixed(41),
            ..ProptestConfig::default()
        })]
        #[test]
        fn selecting_gives_the_bits_sorting_gives(xs in values(), q in q()) {
            let want = by_sorting(&xs, q);
            let mut buf = xs.clone();
            prop_assert_eq!(percentile_in_place(&mut buf, q).to_bits(), want.to_bits(), "{:?} q {}", xs, q);
            let mut buf = xs.clone();
            let m = by_sorting(&xs, 50.0).to_bits();
            prop_assert_eq!(median_in_place(&mut buf).to_bits(), m);
            prop_assert_eq!(median(&xs).to_bits(), m);
        }

        #[test]
        fn a_reordered_buffer_reads_the_same(xs in values(), q in q()) {
            // The bootstraps read two percentiles off one buffer, the second after the first
            // reordered it.
            let mut buf = xs.clone();
            let first = percentile_in_place(&mut buf, 100.0 - q);
            prop_assert_eq!(first.to_bits(), by_sorting(&xs, 100.0 - q).to_bits());
            prop_assert_eq!(percentile_in_place(&mut buf, q).to_bits(), by_sorting(&xs, q).to_bits());
        }
    }
}
