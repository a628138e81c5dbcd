//! The headline figure of a row: one estimator over its timed runs (policy's choice, from the
//! estimator study in docs/methodology.md), its rerun interval on the log scale, and the one
//! function every reader calls to get "the figure of a row" from whatever a source recorded
//! (older files without the figure read as their median, and say so). Pure; seeded.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::bootstrap::{groups_split, split_groups};
use super::draws::RankedDraws;
use super::quantile::{median, median_in_place, percentile_in_place, percentile_sorted, sorted};
use crate::policy;

pub use crate::estimator::Estimator;

impl Estimator {
    /// The estimate over `units` (one slice of runs per worker process, or one unit per run);
    /// NaN when no unit has a run.
    pub fn of_units(self, units: &[Vec<f64>]) -> f64 {
        let all = || sorted(&units.concat());
        match self {
            Estimator::Median => percentile_sorted(&all(), 50.0),
            Estimator::P75 => percentile_sorted(&all(), 75.0),
            Estimator::P90 => percentile_sorted(&all(), 90.0),
            Estimator::Max => all().last().copied().unwrap_or(f64::NAN),
            Estimator::ProcessMaxMedian => {
                let maxima: Vec<f64> = units
                    .iter()
                    .filter_map(|u| u.iter().copied().max_by(f64::total_cmp))
                    .collect();
                median(&maxima)
            }
        }
    }

    /// `of_units` of the current draw of `draws` (its drawn units), bit for bit, without
    /// sorting it: percentiles off the draw's counts, the processes' fastest runs off the highest
    /// place drawn from each. `scratch` holds those fastest runs (whatever it held is dropped).
    fn of_draw(self, draws: &RankedDraws, scratch: &mut Vec<f64>) -> f64 {
        match self {
            Estimator::Median => draws.percentile(50.0),
            Estimator::P75 => draws.percentile(75.0),
            Estimator::P90 => draws.percentile(90.0),
            Estimator::Max => draws.largest(),
            Estimator::ProcessMaxMedian => {
                scratch.clear();
                scratch.extend(draws.unit_maxima());
                median_in_place(scratch)
            }
        }
    }

    /// The estimate of runs `xs` from consecutive processes of `groups` runs each (empty: one).
    pub fn apply(self, xs: &[f64], groups: &[usize]) -> f64 {
        self.of_units(&process_units(xs, groups))
    }
}

/// One slice per worker process when `groups` splits `xs`, else one process holding every run.
fn process_units(xs: &[f64], groups: &[usize]) -> Vec<Vec<f64>> {
    if groups_split(groups, xs.len()) {
        split_groups(xs, groups)
    } else {
        vec![sorted(xs)]
    }
}

/// A row's figure: the estimate and its 95% rerun interval (where a repeat's figure lands).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    pub estimator: Estimator,
    pub value: f64,
    pub low: f64,
    pub high: f64,
}

impl Figure {
    /// Relative half-width of the interval on the log scale: exp((ln high − ln low) / 2) − 1.
    pub fn half_width(&self) -> f64 {
        if self.low > 0.0 && self.high > 0.0 {
            ((self.high / self.low).ln() / 2.0).exp() - 1.0
        } else {
            f64::INFINITY
        }
    }
}

/// Policy's figure of runs `xs` (processes of `groups` runs each) with its rerun interval.
pub fn figure(xs: &[f64], groups: &[usize]) -> Figure {
    figure_with(policy::FIGURE_ESTIMATOR, xs, groups)
}

/// The figure by `estimator`. Its rerun interval is a seeded two-level bootstrap (processes, then
/// runs within each, as `bootstrap::grouped_medians`) of ln(estimate of one resample) − ln(estimate
/// of another), scaled for G resampled units (`small_sample_scale`), around ln(value),
/// never narrower than ±`policy::RERUN_DRIFT_FLOOR` (on the log scale), then exponentiated:
/// always positive, symmetric in log.
pub fn figure_with(estimator: Estimator, xs: &[f64], groups: &[usize]) -> Figure {
    let value = estimator.apply(xs, groups);
    let (low, high) = if value > 0.0 && value.is_finite() {
        let half = log_half_width(estimator, xs, groups);
        let floor = policy::RERUN_DRIFT_FLOOR.ln_1p();
        let h = half.max(floor);
        (value * (-h).exp(), value * h.exp())
    } else {
        (value, value)
    };
    Figure {
        estimator,
        value,
        low,
        high,
    }
}

/// Half-width on the log scale of policy's figure's rerun interval before the drift floor: the
/// part that sampling explains (the stopping rule widens it for its looks, then floors it).
pub fn sampled_log_half_width(xs: &[f64], groups: &[usize]) -> f64 {
    log_half_width(policy::FIGURE_ESTIMATOR, xs, groups)
}

/// Half-width on the log scale of the rerun interval of `estimator` (0 for fewer than 2 runs).
/// Each resample is `RankedDraws::draw_units`: units with replacement, then runs within each.
fn log_half_width(estimator: Estimator, xs: &[f64], groups: &[usize]) -> f64 {
    let units = rerun_units(xs, groups);
    let n: usize = units.iter().map(Vec::len).sum();
    if n < 2 {
        return 0.0;
    }
    let mut rng = ChaCha8Rng::seed_from_u64(policy::BOOTSTRAP_SEED);
    let (mut draws, mut scratch) = (RankedDraws::new(&units), Vec::new());
    let mut estimate = |rng: &mut ChaCha8Rng| {
        draws.draw_units(rng);
        estimator.of_draw(&draws, &mut scratch)
    };
    let mut d: Vec<f64> = (0..policy::BOOTSTRAP_RESAMPLES)
        .map(|_| {
            let a = estimate(&mut rng);
            let b = estimate(&mut rng);
            (a.ln() - b.ln()).abs()
        })
        .filter(|x| x.is_finite())
        .collect();
    percentile_in_place(&mut d, policy::CONFIDENCE * 100.0) * small_sample_scale(units.len(), n)
}

/// Small-sample correction of the bootstrap spread over G units: √(G/(G−1)) for the bootstrap's
/// underestimate; with pooled runs as the units (`units` = 1: one process, two, or groups that do
/// not split the runs), also Student's t.
/// Calibrated on the estimator study (docs/methodology.md): over 3 processes × 3 runs the
/// √(G/(G−1)) interval covered the next invocation's figure in 96% of 124 checks (with Student's
/// t as well: 99%, at a median half-width of ±170%), while a single process's runs miss the
/// process-to-process part of the noise and covered 73–92% even with Student's t.
fn small_sample_scale(units: usize, runs: usize) -> f64 {
    let g = if units > 1 { units } else { runs };
    let t = if units > 1 {
        1.0
    } else {
        super::paired::t_over_z(g - 1)
    };
    (g as f64 / (g - 1) as f64).sqrt() * t
}

/// How far the fastest worker process's own estimate lies above the row's figure (relative: 0.3
/// is 30% above), the `unstable` test's number; `None` below `policy::MIN_PROCESS_UNITS`
/// processes, where the runs of one process cannot show which figures repeat (a single process's
/// figure moved 12–33% between invocations, median, with nothing in its runs to tell which).
/// Interference only slows a process down, so one slow process is what the figure's median
/// ignores; a fast one far above the rest means the processes caught the machine in different
/// states and which of them did decides the figure.
pub fn fast_end_gap(estimator: Estimator, xs: &[f64], groups: &[usize]) -> Option<f64> {
    let usable = xs.iter().all(|x| x.is_finite() && *x > 0.0);
    let units = process_units(xs, groups);
    if !usable || units.len() < policy::MIN_PROCESS_UNITS {
        return None;
    }
    let value = estimator.of_units(&units);
    let fastest = units
        .iter()
        .map(|u| estimator.of_units(std::slice::from_ref(u)))
        .max_by(f64::total_cmp)?;
    (value > 0.0).then(|| fastest / value - 1.0)
}

/// Resampling units: the worker processes when `groups` splits the runs into at least
/// `policy::MIN_PROCESS_UNITS` of them; else one unit holding every finite run (resampled run by
/// run): two processes give one degree of freedom, whose Student factor (×9) would make any
/// interval useless, so their runs are pooled instead.
fn rerun_units(xs: &[f64], groups: &[usize]) -> Vec<Vec<f64>> {
    let usable: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    if usable.len() == xs.len() && groups.len() >= policy::MIN_PROCESS_UNITS {
        process_units(xs, groups)
    } else {
        vec![sorted(&usable)]
    }
}

/// The figure of a row as a reader sees it, whatever the source recorded.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Headline {
    pub value: f64,
    /// The estimator's name (`max`, `median`, …); `median` for sources without a figure.
    pub estimator: String,
    pub low: Option<f64>,
    pub high: Option<f64>,
    /// True when the source had no figure of its own and the median stands in for it.
    pub from_median: bool,
}

impl Headline {
    /// Words for headers and legends: `fastest run`, or `median run (older file, no figure)`.
    pub fn label(&self) -> String {
        let words =
            Estimator::from_name(&self.estimator).map_or(self.estimator.as_str(), |e| e.label());
        if self.from_median {
            format!("{words} (file without a figure)")
        } else {
            words.to_string()
        }
    }
}

/// What a source recorded of a row, for `headline`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Recorded<'a> {
    pub figure: Option<f64>,
    pub estimator: Option<&'a str>,
    pub figure_low: Option<f64>,
    pub figure_high: Option<f64>,
    pub median: Option<f64>,
    pub rerun_low: Option<f64>,
    pub rerun_high: Option<f64>,
}

/// THE read of a row's headline figure: every table, comparison, verdict, plot and report calls
/// this. A usable recorded figure (finite, > 0) with its estimator and interval; else the median
/// with its rerun interval, marked `from_median`; else `None`.
pub fn headline(r: Recorded<'_>) -> Option<Headline> {
    let usable = |x: Option<f64>| x.filter(|v| v.is_finite() && *v > 0.0);
    if let Some(value) = usable(r.figure) {
        return Some(Headline {
            value,
            estimator: r.estimator.unwrap_or("unknown").to_string(),
            low: usable(r.figure_low),
            high: usable(r.figure_high),
            from_median: false,
        });
    }
    usable(r.median).map(|value| Headline {
        value,
        estimator: Estimator::Median.name().to_string(),
        low: usable(r.rerun_low),
        high: usable(r.rerun_high),
        from_median: true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn estimators_of_known_runs() {
        // Three processes of three runs; the third process is slow as a whole.
        let xs = [100.0, 98.0, 99.0, 101.0, 97.0, 100.0, 60.0, 62.0, 61.0];
        let g = [3, 3, 3];
        assert_eq!(Estimator::Median.apply(&xs, &g), 98.0);
        assert_eq!(Estimator::Max.apply(&xs, &g), 101.0);
        assert_eq!(Estimator::ProcessMaxMedian.apply(&xs, &g), 100.0);
        assert_eq!(Estimator::P90.apply(&xs, &g), 100.2);
        // Without a split, one process: its fastest run.
        assert_eq!(Estimator::ProcessMaxMedian.apply(&xs, &[]), 101.0);
        for e in [
            Estimator::Median,
            Estimator::P75,
            Estimator::P90,
            Estimator::Max,
            Estimator::ProcessMaxMedian,
        ] {
            assert_eq!(Estimator::from_name(e.name()), Some(e));
        }
    }

    #[test]
    fn older_sources_read_as_their_median_and_say_so() {
        let old = headline(Recorded {
            median: Some(500.0),
            rerun_low: Some(480.0),
            rerun_high: Some(520.0),
            ..Recorded::default()
        })
        .unwrap();
        assert_eq!((old.value, old.from_median), (500.0, true));
        assert_eq!(old.estimator, "median");
        assert!(old.label().contains("without a figure"), "{}", old.label());
        let new = headline(Recorded {
            figure: Some(550.0),
            estimator: Some("max"),
            median: Some(500.0),
            ..Recorded::default()
        })
        .unwrap();
        assert_eq!(
            (new.value, new.from_median, new.label().as_str()),
            (550.0, false, "fastest run")
        );
        let nan = Recorded {
            figure: Some(f64::NAN),
            median: Some(0.0),
            ..Recorded::default()
        };
        assert_eq!(headline(nan), None);
    }

    #[test]
    fn one_run_has_the_drift_floor_as_its_interval() {
        let f = figure_with(Estimator::Max, &[100.0], &[]);
        assert_eq!(f.value, 100.0);
        assert!((f.half_width() - policy::RERUN_DRIFT_FLOOR).abs() < 1e-9);
    }

    #[test]
    fn a_process_that_disagrees_widens_the_interval() {
        let steady = [100.0, 99.0, 100.5, 100.2, 99.8, 100.1, 99.9, 100.3, 100.0];
        let split = [100.0, 99.0, 100.5, 100.2, 99.8, 100.1, 60.0, 61.0, 60.5];
        let g = [3, 3, 3];
        for e in [Estimator::Median, Estimator::ProcessMaxMedian] {
            let (a, b) = (figure_with(e, &steady, &g), figure_with(e, &split, &g));
            assert!(b.half_width() > a.half_width() * 2.0, "{e:?}: {a:?} {b:?}");
        }
    }

    /// The definition of a resample: units with replacement, then runs with replacement within
    /// each, as lists of values.
    fn resample(units: &[Vec<f64>], rng: &mut ChaCha8Rng) -> Vec<Vec<f64>> {
        use rand::Rng;
        (0..units.len())
            .map(|_| {
                let u = &units[rng.random_range(0..units.len())];
                (0..u.len())
                    .map(|_| u[rng.random_range(0..u.len())])
                    .collect()
            })
            .collect()
    }

    /// Ragged units of runs with repeats, signed zeros, infinities and NaNs among them.
    fn ragged_units() -> impl Strategy<Value = Vec<Vec<f64>>> {
        let special = prop::sample::select(vec![0.0, -0.0, f64::INFINITY, f64::NAN, -1.0]);
        let run = prop_oneof![4 => 1e-3f64..1e3, 3 => (1u8..4).prop_map(f64::from), 1 => special];
        prop::collection::vec(prop::collection::vec(run, 1..8), 1..7)
    }

    fn runs() -> impl Strategy<Value = (Vec<f64>, Vec<usize>)> {
        (1usize..5, 1usize..5).prop_flat_map(|(procs, per)| {
            (
                prop::collection::vec(1e-3f64..1e7, procs * per),
                Just(vec![per; procs]),
            )
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 1000, rng_seed: proptest::test_runner::RngSeed::Fixed(44), ..ProptestConfig::default() })]
        #[test]
        fn an_estimate_of_a_counted_draw_is_the_estimate_of_its_runs(units in ragged_units(), seed in 0u64..1000) {
            let mut draws = RankedDraws::new(&units);
            let mut scratch = Vec::new();
            for e in [Estimator::Median, Estimator::P75, Estimator::P90, Estimator::Max, Estimator::ProcessMaxMedian] {
                let (mut ours, mut theirs) = (ChaCha8Rng::seed_from_u64(seed), ChaCha8Rng::seed_from_u64(seed));
                for _ in 0..3 {
                    draws.draw_units(&mut ours);
                    let want = e.of_units(&resample(&units, &mut theirs));
                    prop_assert_eq!(e.of_draw(&draws, &mut scratch).to_bits(), want.to_bits(), "{:?} {:?}", e, units);
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, rng_seed: proptest::test_runner::RngSeed::Fixed(2), ..ProptestConfig::default() })]
        #[test]
        fn figure_interval_is_positive_contains_the_value_and_is_log_symmetric((xs, g) in runs()) {
            for e in [Estimator::Median, Estimator::Max, Estimator::ProcessMaxMedian, Estimator::P90] {
                let f = figure_with(e, &xs, &g);
                prop_assert!(f.low > 0.0 && f.low <= f.value && f.value <= f.high);
                let (down, up) = ((f.value / f.low).ln(), (f.high / f.value).ln());
                prop_assert!((down - up).abs() <= 1e-9 * up.max(1.0), "{f:?}");
            }
        }

        #[test]
        fn figure_scales_with_the_runs((xs, g) in runs(), k in 0.01f64..100.0) {
            let f = figure(&xs, &g);
            let scaled: Vec<f64> = xs.iter().map(|x| x * k).collect();
            let s = figure(&scaled, &g);
            prop_assert!((s.value / (f.value * k) - 1.0).abs() < 1e-9);
            prop_assert!((s.half_width() - f.half_width()).abs() < 1e-6 * f.half_width().max(1.0));
        }

        #[test]
        fn the_process_gap_is_non_negative_scale_free_and_needs_three_processes((xs, g) in runs(), k in 0.01f64..100.0) {
            let gap = fast_end_gap(Estimator::ProcessMaxMedian, &xs, &g);
            prop_assert_eq!(gap.is_some(), g.len() >= policy::MIN_PROCESS_UNITS);
            if let Some(gap) = gap {
                prop_assert!(gap >= 0.0);
                let scaled: Vec<f64> = xs.iter().map(|x| x * k).collect();
                let again = fast_end_gap(Estimator::ProcessMaxMedian, &scaled, &g).unwrap_or(f64::NAN);
                prop_assert!((again - gap).abs() < 1e-9 * gap.max(1.0));
            }
            // Groups that do not split the runs (one run short) are no processes to judge.
            let short = &xs[..xs.len() - 1];
            prop_assert_eq!(fast_end_gap(Estimator::ProcessMaxMedian, short, &g), None);
        }
    }
}
