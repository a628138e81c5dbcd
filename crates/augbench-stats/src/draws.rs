//! The bootstraps' draws, read without sorting them. Resampling units (worker processes, or
//! single values) are drawn with replacement and then values within each, asking the seeded
//! generator for exactly what building each draw as a list of values would; but each drawn value
//! is only counted at its place among every unit's values (sorted once), so a draw's percentile is
//! read off the counts in one pass instead of sorting the draw (and each drawn unit's largest
//! value off the highest place drawn from it). It is bit for bit what sorting the
//! drawn values gives (`quantile::percentile_sorted`): under `f64::total_cmp` only equal bits
//! compare equal, so the k-th drawn value in that order is one bit pattern however it is found.
//! Pure; the caller's generator.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::quantile::interpolation_ranks;

/// Units to draw from, and the counts of the current draw.
pub(crate) struct RankedDraws {
    /// Every value of every unit, by `f64::total_cmp`.
    sorted: Vec<f64>,
    /// Each unit's values, as their places in `sorted`, in the unit's order.
    units: Vec<Vec<usize>>,
    /// How many times the current draw holds each place of `sorted`.
    counts: Vec<u32>,
    /// Values in the current draw.
    drawn: usize,
    /// The highest place drawn from each unit of the current two-level draw, in draw order.
    maxima: Vec<usize>,
}

impl RankedDraws {
    pub(crate) fn new(units: &[Vec<f64>]) -> RankedDraws {
        let value = |&(u, i): &(usize, usize)| units[u][i];
        let mut places: Vec<(usize, usize)> = units
            .iter()
            .enumerate()
            .flat_map(|(u, values)| (0..values.len()).map(move |i| (u, i)))
            .collect();
        places.sort_by(|p, q| value(p).total_cmp(&value(q)));
        let mut ranked: Vec<Vec<usize>> = units.iter().map(|u| vec![0; u.len()]).collect();
        for (place, &(u, i)) in places.iter().enumerate() {
            ranked[u][i] = place;
        }
        RankedDraws {
            sorted: places.iter().map(value).collect(),
            units: ranked,
            counts: vec![0; places.len()],
            drawn: 0,
            maxima: Vec::new(),
        }
    }

    fn clear(&mut self) {
        self.counts.fill(0);
        self.drawn = 0;
        self.maxima.clear();
    }

    /// A two-level draw: as many units as there are, with replacement, then as many values as
    /// each holds, with replacement within it (unit, its values, next unit, …).
    pub(crate) fn draw_units(&mut self, rng: &mut ChaCha8Rng) {
        self.clear();
        let g = self.units.len();
        for _ in 0..g {
            let unit = &self.units[rng.random_range(0..g)];
            let mut top = None;
            for _ in 0..unit.len() {
                let place = unit[rng.random_range(0..unit.len())];
                self.counts[place] += 1;
                top = top.max(Some(place));
            }
            self.maxima.extend(top);
            self.drawn += unit.len();
        }
    }

    /// A one-level draw of the first unit's values: as many as it holds, with replacement, no
    /// unit drawn first.
    pub(crate) fn draw_values(&mut self, rng: &mut ChaCha8Rng) {
        self.clear();
        let Some(unit) = self.units.first() else {
            return;
        };
        for _ in 0..unit.len() {
            self.counts[unit[rng.random_range(0..unit.len())]] += 1;
        }
        self.drawn = unit.len();
    }

    /// Percentile `q` of the current draw: `percentile_sorted` of its values sorted.
    pub(crate) fn percentile(&self, q: f64) -> f64 {
        match self.drawn {
            0 => f64::NAN,
            1 => self.at_ranks(0, 0).0,
            n => {
                let (lo, hi, frac) = interpolation_ranks(n, q);
                let (a, b) = self.at_ranks(lo, hi);
                a + (b - a) * frac
            }
        }
    }

    /// The largest value of the current draw (the last of it sorted); NaN for none.
    pub(crate) fn largest(&self) -> f64 {
        let mut drawn = self.counts.iter().zip(&self.sorted).rev();
        drawn
            .find(|(count, _)| **count > 0)
            .map_or(f64::NAN, |(_, x)| *x)
    }

    /// The largest value drawn from each unit of the current two-level draw, in draw order.
    pub(crate) fn unit_maxima(&self) -> impl Iterator<Item = f64> + '_ {
        self.maxima.iter().map(|&place| self.sorted[place])
    }

    /// The drawn values at ranks `lo` ≤ `hi` (< the values drawn) of the draw sorted.
    fn at_ranks(&self, lo: usize, hi: usize) -> (f64, f64) {
        let mut through = 0;
        let mut a = None;
        for (&count, &x) in self.counts.iter().zip(&self.sorted) {
            through += count as usize;
            if a.is_none() && through > lo {
                a = Some(x);
            }
            if through > hi {
                return (a.unwrap_or(x), x);
            }
        }
        (f64::NAN, f64::NAN)
    }
}

#[cfg(test)]
mod tests {
    use super::{ChaCha8Rng, RankedDraws};
    use crate::quantile::{percentile_sorted, sorted};
    use proptest::prelude::{
        Just, ProptestConfig, Strategy, prop, prop_assert_eq, prop_oneof, proptest,
    };
    use proptest::test_runner::RngSeed;
    use rand::{Rng, SeedableRng};

    /// The definition: each draw built as a list of values (`bootstrap::grouped_medians` before
    /// it counted ranks), sorted, its percentile read.
    fn drawn_values(units: &[Vec<f64>], rng: &mut ChaCha8Rng) -> Vec<f64> {
        let mut out = Vec::new();
        for _ in 0..units.len() {
            let unit = &units[rng.random_range(0..units.len())];
            for _ in 0..unit.len() {
                out.push(unit[rng.random_range(0..unit.len())]);
            }
        }
        out
    }

    /// Ragged units of values with repeats, signed zeros, infinities and NaNs among them.
    fn units() -> impl Strategy<Value = Vec<Vec<f64>>> {
        let special = prop::sample::select(vec![
            0.0,
            -0.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            -f64::NAN,
        ]);
        let value = prop_oneof![4 => -1e3f64..1e3, 3 => (0u8..3).prop_map(f64::from), 1 => special];
        prop::collection::vec(prop::collection::vec(value, 1..9), 0..6)
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 1000,
            rng_seed: RngSeed::Fixed(43),
            ..ProptestConfig::default()
        })]
        #[test]
        fn counted_draws_read_the_bits_sorted_draws_do(units in units(), seed in 0u64..1000, q in prop_oneof![Just(50.0), 0.0f64..100.0]) {
            let mut draws = RankedDraws::new(&units);
            let (mut ours, mut theirs) = (ChaCha8Rng::seed_from_u64(seed), ChaCha8Rng::seed_from_u64(seed));
            for _ in 0..4 {
                draws.draw_units(&mut ours);
                let want = percentile_sorted(&sorted(&drawn_values(&units, &mut theirs)), q);
                prop_assert_eq!(draws.percentile(q).to_bits(), want.to_bits(), "{:?}", units);
            }
            // Both generators were asked for the same numbers: they stay in step.
            prop_assert_eq!(ours.random::<u64>(), theirs.random::<u64>());
        }

        #[test]
        fn counted_one_level_draws_read_the_bits_sorted_draws_do(units in units(), seed in 0u64..1000) {
            let Some(first) = units.first() else { return Ok(()) };
            let xs = sorted(first);
            let mut draws = RankedDraws::new(std::slice::from_ref(&xs));
            let (mut ours, mut theirs) = (ChaCha8Rng::seed_from_u64(seed), ChaCha8Rng::seed_from_u64(seed));
            for _ in 0..4 {
                draws.draw_values(&mut ours);
                let drawn: Vec<f64> = (0..xs.len()).map(|_| xs[theirs.random_range(0..xs.len())]).collect();
                let want = percentile_sorted(&sorted(&drawn), 50.0);
                prop_assert_eq!(draws.percentile(50.0).to_bits(), want.to_bits(), "{:?}", xs);
            }
            prop_assert_eq!(ours.random::<u64>(), theirs.random::<u64>());
        }
    }
}
