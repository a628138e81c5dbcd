//! Measuring to a precision (`execution.precision`): the stopping rule of a transform's rounds
//! (`stop_rule`, one pure function of the intervals' relative half-widths, the target and the
//! progress so far), the half-widths it reads today (each library's median interval and every
//! paired speedup's interval), and the one-line note a result carries. No I/O, no clocks.

use serde::{Deserialize, Serialize};

use super::{bootstrap_median_ci, ci_half_width, median, paired};
use crate::policy;
use crate::time_split::seconds as human;

/// Where a transform's rounds stand, for the stopping rule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress {
    /// Rounds taken so far (in this worker process).
    pub rounds: u64,
    /// Rounds always taken before the rule may stop (intervals of fewer mean little).
    pub min_rounds: u64,
    /// Rounds never exceeded, whatever the intervals say.
    pub max_rounds: u64,
    /// Seconds spent on the transform so far, and the seconds it may spend.
    pub elapsed_sec: f64,
    pub budget_sec: f64,
}

/// What the rule says about the next round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Take another round.
    More,
    /// Every interval is within ± the target.
    Reached,
    /// The time budget is spent before the intervals were narrow enough.
    BudgetSpent,
    /// The round cap is reached before the intervals were narrow enough.
    MaxRounds,
}

/// The stopping rule: after `min_rounds`, stop as soon as every relative half-width is at most
/// `target` (an empty list has nothing left to pin down), else when the budget or the round cap
/// is spent. A non-finite half-width (an interval that could not be formed) is never narrow.
pub fn stop_rule(half_widths: &[f64], target: f64, p: Progress) -> Decision {
    if p.rounds < p.min_rounds {
        return Decision::More;
    }
    if half_widths.iter().all(|w| w.is_finite() && *w <= target) {
        return Decision::Reached;
    }
    if p.elapsed_sec >= p.budget_sec {
        return Decision::BudgetSpent;
    }
    if p.rounds >= p.max_rounds {
        return Decision::MaxRounds;
    }
    Decision::More
}

/// The widest of `half_widths` (NaN when one is not finite, or when there are none).
pub fn worst(half_widths: &[f64]) -> f64 {
    half_widths
        .iter()
        .try_fold(f64::NAN, |acc: f64, w| w.is_finite().then(|| acc.max(*w)))
        .unwrap_or(f64::NAN)
}

/// The half-widths the rule reads today for libraries timed in the same rounds (`runs[i]` is
/// library i's throughputs, round by round; `groups` the rounds of consecutive worker
/// processes): each library's 95% interval of its median, then every pair's paired-speedup
/// interval, relative to the figure. A library without runs gives NaN.
pub fn half_widths(runs: &[&[f64]], groups: &[usize]) -> Vec<f64> {
    let mut out: Vec<f64> = runs.iter().map(|xs| median_half_width(xs)).collect();
    for (i, a) in runs.iter().enumerate() {
        for b in &runs[i + 1..] {
            out.push(match paired("", a, b, groups) {
                Some(p) => ci_half_width(p.ratio, p.ci_low, p.ci_high),
                None => f64::NAN,
            });
        }
    }
    out
}

fn median_half_width(xs: &[f64]) -> f64 {
    if xs.is_empty() || xs.iter().any(|x| !x.is_finite() || *x <= 0.0) {
        return f64::NAN;
    }
    let (lo, hi) = bootstrap_median_ci(
        xs,
        policy::BOOTSTRAP_RESAMPLES,
        policy::CONFIDENCE,
        policy::BOOTSTRAP_SEED,
    );
    ci_half_width(median(xs), lo, hi)
}

/// What measuring to a precision gave a transform, as its result records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrecisionRecord {
    /// The target relative half-width (`execution.precision`).
    pub target: f64,
    /// Seconds the transform may spend (`execution.transform_budget_sec`).
    pub budget_sec: f64,
    /// Whether every interval was within ± the target when the rounds stopped.
    pub reached: bool,
    /// The widest relative half-width when the rounds stopped (null when none could be formed).
    pub half_width: Option<f64>,
    /// Rounds taken (all processes) and seconds spent (set-up and rounds, all processes).
    pub rounds: u64,
    pub seconds: f64,
    /// One line for people: `reached ±2.1% after 12 rounds, 8.3 s` or
    /// `not reached: ±4.1% after 45 s (budget 45 s)`.
    pub note: String,
}

impl PrecisionRecord {
    /// The record of rounds that stopped with `decision` at `worst` (NaN: no interval formed).
    pub fn new(
        decision: Decision,
        worst: f64,
        target: f64,
        budget_sec: f64,
        rounds: u64,
        seconds: f64,
    ) -> PrecisionRecord {
        let reached = decision == Decision::Reached;
        let width = if worst.is_finite() {
            format!("±{:.1}%", worst * 100.0)
        } else {
            "no interval".to_string()
        };
        let (took, budget) = (human(seconds), human(budget_sec));
        let note = match decision {
            Decision::Reached => format!("reached {width} after {rounds} rounds, {took}"),
            Decision::BudgetSpent | Decision::More => format!(
                "not reached: {width} after {took} (budget {budget}, target ±{:.1}%)",
                target * 100.0
            ),
            Decision::MaxRounds => format!(
                "not reached: {width} after {rounds} rounds (the cap), {took} (target ±{:.1}%)",
                target * 100.0
            ),
        };
        PrecisionRecord {
            target,
            budget_sec,
            reached,
            half_width: worst.is_finite().then_some(worst),
            rounds,
            seconds,
            note,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn at(rounds: u64, elapsed_sec: f64) -> Progress {
        Progress {
            rounds,
            min_rounds: 3,
            max_rounds: 50,
            elapsed_sec,
            budget_sec: 10.0,
        }
    }

    #[test]
    fn the_rule_waits_for_the_minimum_then_stops_when_every_interval_is_narrow() {
        assert_eq!(stop_rule(&[0.001], 0.03, at(2, 0.0)), Decision::More);
        assert_eq!(
            stop_rule(&[0.01, 0.02], 0.03, at(3, 0.0)),
            Decision::Reached
        );
        assert_eq!(stop_rule(&[0.01, 0.04], 0.03, at(3, 1.0)), Decision::More);
        assert_eq!(stop_rule(&[], 0.03, at(3, 0.0)), Decision::Reached);
    }

    #[test]
    fn the_budget_and_the_cap_end_rounds_that_are_not_narrow_enough() {
        assert_eq!(stop_rule(&[0.05], 0.03, at(4, 10.0)), Decision::BudgetSpent);
        assert_eq!(stop_rule(&[0.05], 0.03, at(50, 1.0)), Decision::MaxRounds);
        assert_eq!(
            stop_rule(&[0.01], 0.03, at(50, 99.0)),
            Decision::Reached,
            "reached wins over a spent budget"
        );
        assert_eq!(
            stop_rule(&[f64::NAN], 0.03, at(4, 10.0)),
            Decision::BudgetSpent,
            "an interval that could not be formed is never narrow"
        );
    }

    #[test]
    fn half_widths_cover_each_library_and_each_pair() {
        let a = [100.0, 101.0, 99.0, 100.5, 100.2];
        let b = [50.0, 50.5, 49.5, 50.2, 50.1];
        let w = half_widths(&[&a, &b], &[]);
        assert_eq!(w.len(), 3, "two libraries and their pair");
        assert!(w.iter().all(|x| *x > 0.0 && *x < 0.02), "{w:?}");
        let w = half_widths(&[&a, &[]], &[]);
        assert!(w[1].is_nan() && w[2].is_nan(), "{w:?}");
    }

    #[test]
    fn the_note_says_what_happened() {
        let r = PrecisionRecord::new(Decision::BudgetSpent, 0.041, 0.03, 45.0, 30, 45.2);
        assert_eq!(
            r.note,
            "not reached: ±4.1% after 45 s (budget 45 s, target ±3.0%)"
        );
        assert!(!r.reached);
        let r = PrecisionRecord::new(Decision::Reached, 0.021, 0.03, 45.0, 12, 8.34);
        assert_eq!(r.note, "reached ±2.1% after 12 rounds, 8.3 s");
        assert_eq!(worst(&[0.01, 0.03]), 0.03);
        assert!(worst(&[0.01, f64::NAN]).is_nan());
    }

    proptest! {
        #[test]
        fn narrower_intervals_never_need_more_rounds(
            ws in proptest::collection::vec(0.0f64..0.2, 0..6),
            target in 0.001f64..0.5,
            rounds in 0u64..60,
            elapsed in 0.0f64..20.0,
        ) {
            let p = Progress { rounds, min_rounds: 3, max_rounds: 50, elapsed_sec: elapsed, budget_sec: 10.0 };
            let halved: Vec<f64> = ws.iter().map(|w| w / 2.0).collect();
            if stop_rule(&ws, target, p) != Decision::More {
                prop_assert_ne!(stop_rule(&halved, target, p), Decision::More);
            }
            if rounds >= p.min_rounds && ws.iter().all(|w| *w <= target) {
                prop_assert_eq!(stop_rule(&ws, target, p), Decision::Reached);
            }
        }
    }
}
