//! Measuring to a precision (`execution.precision`): the stopping rule of a transform's rounds
//! (`stop_rule`, one pure function of the intervals' relative half-widths, the target and the
//! progress so far), the half-widths it reads (every paired speedup's rerun interval, or the one
//! library's headline figure's: the intervals results record and tables show, relative on the
//! log scale), and the one-line note a result carries. No I/O, no clocks.

use serde::{Deserialize, Serialize};

use super::logscale::df_index;
use super::logscale::log_half_width;
use super::paired::sampled_over_processes;
use super::spread::Spread;
use super::{PairedSummary, figure, paired};
use crate::duration::seconds as human;
use crate::policy;

/// Where a transform's rounds stand, for the stopping rule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress {
    /// Rounds taken so far (in this worker process).
    pub rounds: u64,
    /// Rounds always taken before the rule may stop (intervals of fewer mean little).
    pub min_rounds: u64,
    /// Rounds never exceeded, whatever the intervals say.
    pub max_rounds: u64,
    /// Runs of earlier processes that the intervals the rule reads pool with this process's
    /// (0 when they are this process's own).
    pub earlier_runs: u64,
    /// Seconds spent on the transform so far, and the seconds it may spend.
    pub elapsed_sec: f64,
    pub budget_sec: f64,
}

/// Relative slack for a half-width that equals the target but for floating-point rounding.
const ROUNDING: f64 = 1e-9;

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
    /// Each worker process's own rounds were within ± the target, but the intervals over the
    /// processes are not: the processes disagree, and only more processes can narrow that.
    ProcessesDisagree,
    /// The intervals over `processes` worker processes are so wide that even
    /// `policy::PRECISION_MAX_PROCESSES` would, by projection, leave them more than
    /// `policy::PRECISION_REACH_MARGIN` times the target (`out_of_reach`): no more processes
    /// are taken.
    OutOfReach { processes: u64 },
    /// The intervals are within the target, but over fewer than `policy::MIN_PROCESS_UNITS`
    /// worker processes: their runs are pooled as one unit (`stats::figure`), which cannot show
    /// how far the processes' speed levels spread, so only more processes can confirm them.
    TooFewProcesses { processes: u64 },
    /// The intervals this process's rounds read, over `runs` runs after its `rounds` rounds, are
    /// so wide that its round cap (`cap_runs` runs) would, by projection, leave them more than
    /// `policy::PRECISION_REACH_MARGIN` times its aim (`rounds_out_of_reach`): its rounds stop,
    /// and only more processes may still narrow the intervals over them.
    RoundsOutOfReach {
        rounds: u64,
        runs: u64,
        cap_runs: u64,
    },
}

/// The stopping rule: after `min_rounds`, stop as soon as every relative half-width is at most
/// `target` (an empty list has nothing left to pin down); after one round, when the budget is
/// spent; after `min_rounds`, when the round cap is spent, or when the cap would not bring the
/// widest within reach (`rounds_out_of_reach`).
/// A non-finite half-width (an interval that could not be formed) is never narrow. A
/// half-width equal to the target up to rounding (the drift floor goes through ln and exp) is
/// within it.
pub fn stop_rule(half_widths: &[f64], target: f64, p: Progress) -> Decision {
    if p.rounds == 0 {
        return Decision::More;
    }
    if p.rounds >= p.min_rounds && within(half_widths, target) {
        return Decision::Reached;
    }
    // The budget ends rounds even before the minimum (after one): a transform whose round
    // outlasts its process's share would otherwise spend several shares on rounds that cannot
    // narrow the spread between processes (docs/methodology.md, "The whole matrix").
    if p.elapsed_sec >= p.budget_sec {
        return Decision::BudgetSpent;
    }
    if p.rounds < p.min_rounds {
        return Decision::More;
    }
    if p.rounds >= p.max_rounds {
        return Decision::MaxRounds;
    }
    if rounds_out_of_reach(worst(half_widths), target, p) {
        return Decision::RoundsOutOfReach {
            rounds: p.rounds,
            runs: p.earlier_runs + p.rounds,
            cap_runs: p.earlier_runs + p.max_rounds,
        };
    }
    Decision::More
}

/// Whether rounds that stand at `half_width` after `p.rounds` of them could not reach `target`
/// by the round cap: from `policy::PRECISION_FUTILITY_ROUNDS` rounds on, the projection of the
/// half-width from the runs it covers to the runs it would cover at `p.max_rounds`
/// (`projected_runs_half_width`) is more than `policy::PRECISION_REACH_MARGIN` times the target.
/// Not for an interval that could not be formed (NaN).
pub fn rounds_out_of_reach(half_width: f64, target: f64, p: Progress) -> bool {
    let (runs, cap_runs) = (p.earlier_runs + p.rounds, p.earlier_runs + p.max_rounds);
    p.rounds >= policy::PRECISION_FUTILITY_ROUNDS
        && p.rounds < p.max_rounds
        && half_width.is_finite()
        && projected_runs_half_width(half_width, runs, cap_runs)
            > target * policy::PRECISION_REACH_MARGIN
}

/// Where a half-width over `runs` runs pooled as one unit would land over `cap_runs` of them:
/// such an interval scales as t(n − 1)/√(n − 1) on the log scale (a bootstrap spread over n runs
/// with its √(n/(n−1)) correction and Student's t for n − 1 degrees of freedom, `stats::figure`
/// and `stats::paired`), never below the drift floor.
pub fn projected_runs_half_width(half_width: f64, runs: u64, cap_runs: u64) -> f64 {
    let (n, m) = (runs.max(2), cap_runs.max(runs).max(2));
    let t = super::paired::t_over_z((m - 1) as usize) / super::paired::t_over_z((n - 1) as usize);
    let shrink = ((n - 1) as f64 / (m - 1) as f64).sqrt() * t;
    (half_width.ln_1p() * shrink)
        .max(policy::RERUN_DRIFT_FLOOR.ln_1p())
        .exp_m1()
}

/// The half-width a worker process's own rounds aim for: the target, or, when the earlier
/// processes' intervals over processes (`earlier_over`) are wider, `policy::PRECISION_SPREAD_SHARE`
/// of the widest of them, whichever is wider. Rounds cannot narrow the spread between processes,
/// so a process whose own figure is known to a fraction of it has what more rounds would give.
/// The target itself when no interval over the earlier processes could be formed.
pub fn process_target(target: f64, earlier_over: &[f64]) -> f64 {
    let spread = worst(earlier_over);
    if spread.is_finite() {
        target.max(policy::PRECISION_SPREAD_SHARE * spread)
    } else {
        target
    }
}

/// How a transform stands after a worker process's rounds: `in_process`, the stopping rule's
/// last word on that process's own runs, and `over_processes`, the half-widths over every
/// process so far (the intervals results record). Reached only when the latter are within the
/// target; rounds that stopped on their own precision in processes that disagree say so.
/// After `processes` processes, a target the most processes would not reach is out of reach.
/// Never reached below `policy::MIN_PROCESS_UNITS` processes: two processes settled at levels
/// 2× apart pool into runs whose fastest-run interval can still read ±1%.
pub fn after_process(
    in_process: Decision,
    over_processes: &[f64],
    target: f64,
    processes: u64,
) -> Decision {
    let max = policy::PRECISION_MAX_PROCESSES;
    let enough = processes >= policy::MIN_PROCESS_UNITS as u64;
    if within(over_processes, target) && enough {
        Decision::Reached
    } else if within(over_processes, target) {
        Decision::TooFewProcesses { processes }
    } else if out_of_reach(worst(over_processes), processes, target, max) {
        Decision::OutOfReach { processes }
    } else if matches!(in_process, Decision::Reached | Decision::ProcessesDisagree) {
        Decision::ProcessesDisagree
    } else {
        in_process
    }
}

/// Whether a transform takes one more worker process after `processes` of them (`record` is
/// its precision record over all of them): its intervals over the processes are not within the
/// target, some of its budget is left, and it is below `max_processes`. Rounds inside one
/// process narrow only that process's own interval; the intervals over processes (a figure that
/// is a median over processes, speedups paired per process) narrow only with more processes.
/// Nor does one whose target is out of reach (`out_of_reach`).
pub fn another_process(record: &PrecisionRecord, processes: u64, max_processes: u64) -> bool {
    let width = record.half_width.unwrap_or(f64::NAN);
    !record.reached
        && record.seconds < record.budget_sec
        && processes < max_processes
        && !out_of_reach(width, processes, record.target, max_processes)
}

/// Where a half-width over `processes` worker processes would land over `max_processes`: the
/// rerun interval over G processes scales as 1/√(G − 1) (a bootstrap spread over G units with
/// its √(G/(G−1)) correction, `stats::figure` and `stats::paired`) on the log scale, never below
/// the drift floor. The projection assumes the processes spread no wider than those so far.
pub fn projected_half_width(half_width: f64, processes: u64, max_processes: u64) -> f64 {
    let (p, m) = (processes.max(2), max_processes.max(processes));
    let spread = ((p - 1) as f64 / (m - 1) as f64).sqrt();
    let log = half_width.ln_1p() * spread;
    log.max(policy::RERUN_DRIFT_FLOOR.ln_1p()).exp_m1()
}

/// Whether a transform's target is out of reach after `processes` processes whose intervals
/// over them are `half_width` wide: there are enough of them (`policy::MIN_PROCESS_UNITS`) to
/// show the spread, fewer than `max_processes`, and even `max_processes` would leave the
/// interval more than `policy::PRECISION_REACH_MARGIN` times `target` (`projected_half_width`).
/// Not for an interval that could not be formed (NaN): nothing tells how far it is.
pub fn out_of_reach(half_width: f64, processes: u64, target: f64, max_processes: u64) -> bool {
    processes >= policy::MIN_PROCESS_UNITS as u64
        && processes < max_processes
        && half_width.is_finite()
        && projected_half_width(half_width, processes, max_processes)
            > target * policy::PRECISION_REACH_MARGIN
}

/// Whether every half-width is finite and at most `target` (up to rounding); true for none.
pub fn within(half_widths: &[f64], target: f64) -> bool {
    half_widths
        .iter()
        .all(|w| w.is_finite() && *w <= target * (1.0 + ROUNDING))
}

/// The widest of `half_widths` (NaN when one is not finite, or when there are none).
pub fn worst(half_widths: &[f64]) -> f64 {
    half_widths
        .iter()
        .try_fold(f64::NAN, |acc: f64, w| w.is_finite().then(|| acc.max(*w)))
        .unwrap_or(f64::NAN)
}

/// The half-widths the rule reads for libraries timed in the same rounds (`runs[i]` is library
/// i's throughputs, round by round; `groups` the rounds of consecutive worker processes): with
/// two or more libraries, every pair's paired-speedup rerun interval (the comparison a run is for,
/// and the figure that repeats: what moves a library between invocations, the machine's state
/// while a process ran, its partner in the same rounds shares); with one library, its headline
/// figure's rerun interval. Each is the interval results record and tables show
/// (`stats::paired`, `stats::figure`), relative on the log scale (e^h − 1 for a half-width h of
/// ln), so a target of ±3% means the same for a figure and a ratio. A library without usable
/// runs, or a pair that cannot be formed, gives NaN (never narrow). The simulator in
/// `tests/simulated_precision.rs` measures how often a rerun lands within what they state when the
/// rule stops on them (docs/methodology.md, "Measuring to a precision").
pub fn half_widths(runs: &[&[f64]], groups: &[usize]) -> Vec<f64> {
    half_widths_with(runs, groups, None)
}

/// `half_widths`, with every pair's spread between processes shrunk towards `prior`, the run's
/// pairs' (`spread::Spread::fit` over `paired::process_spreads`): what the rule reads over processes once
/// the run has one. A single library's figure has no partner to pair with and reads as before.
pub fn half_widths_with(runs: &[&[f64]], groups: &[usize], prior: Option<&Spread>) -> Vec<f64> {
    if let [one] = runs {
        return vec![figure_half_width(one, groups)];
    }
    let mut out = Vec::new();
    for (i, a) in runs.iter().enumerate() {
        for b in &runs[i + 1..] {
            let pair = paired("", a, b, groups);
            out.push(pair.map_or(f64::NAN, |p| pair_half_width(&p, groups, prior)));
        }
    }
    out
}

/// A pair's relative half-width: over worker processes, its rerun interval (as recorded, or
/// with its spread shrunk towards `prior`) with the part sampling explains widened for the rule's
/// looks (`looks_factor_at` its degrees of freedom; the drift floor, which no look changes, stays
/// as recorded: `logscale::with_drift_floor`); below `policy::MIN_PROCESS_UNITS` processes
/// (where the figure pools its runs too, and Student's factor for one or two processes makes
/// every interval useless), its interval over rounds, never narrower than the drift floor.
fn pair_half_width(p: &PairedSummary, groups: &[usize], prior: Option<&Spread>) -> f64 {
    if groups.len() < policy::MIN_PROCESS_UNITS {
        return log_half_width(p.ratio, p.ci_low, p.ci_high)
            .exp_m1()
            .max(policy::RERUN_DRIFT_FLOOR);
    }
    if let Some(prior) = prior {
        let logs: Vec<f64> = p.ratios.iter().map(|r| r.ln()).collect();
        if let Some((sampled, df)) = sampled_over_processes(&logs, groups, Some(prior)) {
            return super::logscale::with_drift_floor(sampled * looks_factor_at(df)).exp_m1();
        }
    }
    let recorded = log_half_width(p.ratio, p.rerun_low, p.rerun_high);
    let floor = policy::RERUN_DRIFT_FLOOR.ln_1p();
    let sampled = (recorded * recorded - floor * floor).max(0.0).sqrt();
    super::logscale::with_drift_floor(sampled * looks_factor(groups.len())).exp_m1()
}

/// How much wider the rule reads an interval over `units` worker processes than results record
/// it: the rule looks after every process and stops on the first narrow enough, so it reads each
/// look at the level `policy::PRECISION_LOOK_SPENDING` spends (Student's t for `units − 1`
/// degrees of freedom at 1 − 5%/K over the t at 95%: `looks_factor_at`). K is set from the
/// simulator (`tests/simulated_precision.rs`), which measures what the stated intervals then
/// cover.
pub fn looks_factor(units: usize) -> f64 {
    looks_factor_at(units.saturating_sub(1).max(1) as f64)
}

/// `looks_factor` for an interval whose spread is worth `df` degrees of freedom.
pub fn looks_factor_at(df: f64) -> f64 {
    let df = df_index(df);
    let alpha = 1.0 - policy::CONFIDENCE;
    let spent = alpha / policy::PRECISION_LOOK_SPENDING;
    let q = |a: f64| super::student::quantile(df, 1.0 - a / 2.0);
    q(spent) / q(alpha)
}

/// The relative half-width of the figure's rerun interval; NaN unless every run is positive and
/// finite.
fn figure_half_width(xs: &[f64], groups: &[usize]) -> f64 {
    if xs.is_empty() || xs.iter().any(|x| !x.is_finite() || *x <= 0.0) {
        return f64::NAN;
    }
    figure(xs, groups).half_width()
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
    /// Rounds taken and seconds of rounds spent, all processes.
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
        PrecisionRecord::with_own(decision, worst, None, target, budget_sec, rounds, seconds)
    }

    /// As `new`, with `own`: the widest half-width of the latest process's own rounds when they
    /// stopped (what a `ProcessesDisagree` note quotes; the target when `None`).
    pub fn with_own(
        decision: Decision,
        worst: f64,
        own: Option<f64>,
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
                "not reached: {width} after {rounds} rounds (the cap per process), {took} (target ±{:.1}%)",
                target * 100.0
            ),
            Decision::ProcessesDisagree => format!(
                "not reached: {width} over the worker processes, which disagree (the latest one's own rounds were within ±{:.1}%); {rounds} rounds, {took}",
                own.unwrap_or(target) * 100.0
            ),
            Decision::RoundsOutOfReach {
                rounds: own_rounds,
                runs,
                cap_runs,
            } => {
                let own = own.unwrap_or(f64::NAN);
                let cap = cap_runs - (runs - own_rounds);
                format!(
                    "not reached: {width} over the worker processes; the intervals the latest one's rounds read stood at ±{:.1}% after {own_rounds}, out of reach within a process: its cap of {cap} rounds would narrow them to about ±{:.1}%, far wider than its aim; {rounds} rounds, {took}",
                    own * 100.0,
                    projected_runs_half_width(own, runs, cap_runs) * 100.0
                )
            }
            Decision::TooFewProcesses { processes } => format!(
                "not reached: {width} over only {processes} worker process{}, too few to show how far processes spread (it takes {}); {rounds} rounds, {took}",
                if processes == 1 { "" } else { "es" },
                policy::MIN_PROCESS_UNITS
            ),
            Decision::OutOfReach { processes } => {
                let max = policy::PRECISION_MAX_PROCESSES;
                let projected = projected_half_width(worst, processes, max);
                format!(
                    "not reached: {width} over {processes} worker processes, out of reach: {max} would narrow it to about ±{:.1}%, far wider than the target ±{:.1}%; {rounds} rounds, {took}",
                    projected * 100.0,
                    target * 100.0
                )
            }
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
    use crate::policy;
    use proptest::prelude::*;

    fn at(rounds: u64, elapsed_sec: f64) -> Progress {
        Progress {
            rounds,
            min_rounds: 3,
            max_rounds: 50,
            earlier_runs: 0,
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
    fn a_spent_budget_ends_rounds_before_the_minimum_but_never_before_the_first() {
        assert_eq!(stop_rule(&[f64::NAN], 0.03, at(0, 99.0)), Decision::More);
        assert_eq!(
            stop_rule(&[f64::NAN], 0.03, at(1, 10.0)),
            Decision::BudgetSpent
        );
        assert_eq!(stop_rule(&[0.05], 0.03, at(2, 9.9)), Decision::More);
        assert_eq!(
            stop_rule(&[0.001], 0.03, at(2, 10.0)),
            Decision::BudgetSpent,
            "narrow before the minimum is not reached"
        );
    }

    #[test]
    fn the_rule_reads_the_figures_interval_not_the_medians() {
        // One process. The median of these runs is pinned down, but the fastest run (the figure
        // of one process) is a lone outlier a repeat may not see again.
        let lone_fast = [100.0, 100.0, 100.1, 99.9, 100.0, 100.05, 99.95, 130.0];
        let (lo, hi) = super::super::bootstrap_median_ci(
            &lone_fast,
            policy::BOOTSTRAP_RESAMPLES,
            policy::CONFIDENCE,
            policy::BOOTSTRAP_SEED,
        );
        assert!(
            super::super::ci_half_width(100.0, lo, hi) < 0.01,
            "median pinned"
        );
        let w = half_widths(&[&lone_fast], &[]);
        assert!(w[0] > 0.1, "figure not pinned: {w:?}");
        assert_eq!(stop_rule(&w, 0.03, at(5, 0.0)), Decision::More);
        // The other way round: a scattered median, but the fastest run repeats.
        let steady_top = [50.0, 60.0, 70.0, 80.0, 100.0, 100.0, 100.0, 100.0];
        let w = half_widths(&[&steady_top], &[]);
        assert!(w[0] <= 0.03, "{w:?}");
        assert_eq!(stop_rule(&w, 0.03, at(5, 0.0)), Decision::Reached);
    }

    #[test]
    fn each_width_is_the_interval_a_result_records() {
        let a = [100.0, 104.0, 99.0, 101.0, 97.0, 100.0, 96.0, 103.0, 98.0];
        let b = [50.0, 53.0, 49.5, 52.0, 48.0, 50.1, 47.0, 51.0, 49.0];
        let g = [3, 3, 3];
        // Two libraries: the rule reads their pair's rerun interval as recorded, its sampled
        // part widened for the looks (the floor, in quadrature, as recorded).
        let w = half_widths(&[&a, &b], &g);
        let p = paired("", &a, &b, &g).unwrap();
        let recorded = (p.rerun_high / p.ratio).ln();
        let floor = policy::RERUN_DRIFT_FLOOR.ln_1p();
        let sampled = (recorded * recorded - floor * floor).max(0.0).sqrt();
        let expect = (sampled * looks_factor(3)).hypot(floor).exp_m1();
        assert_eq!(w.len(), 1);
        assert!((w[0] - expect).abs() < 1e-12, "{w:?} vs {expect}");
        assert!(
            w[0] >= recorded.exp_m1() * (1.0 - 1e-12),
            "never narrower than recorded"
        );
        assert!(looks_factor(3) > 1.0 && looks_factor(6) < looks_factor(3));
        // One library: its figure's rerun interval, as recorded.
        let w = half_widths(&[&a], &g);
        assert!((w[0] - figure(&a, &g).half_width()).abs() < 1e-12, "{w:?}");
    }

    #[test]
    fn a_prior_from_the_runs_pairs_narrows_three_processes_but_not_a_wide_pair() {
        // Three processes whose medians spread 1.5%: alone, Student's t at 2 degrees of freedom
        // (and the looks at 2); with a prior of the same spread worth 40 degrees of freedom,
        // about half as wide. A pair spreading 10× the prior's stays far wider than the target.
        let b = [100.0; 9];
        let a = [101.5, 101.6, 101.4, 100.0, 100.1, 99.9, 98.5, 98.6, 98.4];
        let g = [3, 3, 3];
        let prior = Spread {
            var: 0.015f64.powi(2),
            df: 40.0,
        };
        let alone = half_widths(&[&a, &b], &g)[0];
        let with = half_widths_with(&[&a, &b], &g, Some(&prior))[0];
        assert!(
            with < 0.6 * alone && with > policy::RERUN_DRIFT_FLOOR,
            "{with} vs {alone}"
        );
        let wide = [115.0, 115.1, 114.9, 100.0, 100.1, 99.9, 85.0, 85.1, 84.9];
        let w = half_widths_with(&[&wide, &b], &g, Some(&prior))[0];
        assert!(w > 0.15, "{w}");
        assert_eq!(
            half_widths_with(&[&a], &g, Some(&prior)),
            half_widths(&[&a], &g),
            "one library"
        );
    }

    #[test]
    fn a_target_at_the_drift_floor_is_reachable() {
        let flat = [100.0; 6];
        let w = half_widths(&[&flat, &flat], &[]);
        assert!(
            w.iter()
                .all(|x| (x - policy::RERUN_DRIFT_FLOOR).abs() < 1e-12),
            "{w:?}"
        );
        let target = policy::RERUN_DRIFT_FLOOR;
        assert_eq!(stop_rule(&w, target, at(3, 0.0)), Decision::Reached);
        assert_eq!(stop_rule(&w, target * 0.99, at(3, 0.0)), Decision::More);
    }

    #[test]
    fn half_widths_cover_each_pair_or_the_one_figure() {
        let a = [100.0, 101.0, 99.0, 100.5, 100.2];
        let b = [50.0, 50.5, 49.5, 50.2, 50.1];
        let c = [25.0, 25.5, 24.5, 25.2, 25.1];
        assert_eq!(half_widths(&[&a, &b], &[]).len(), 1, "one pair");
        let w = half_widths(&[&a, &b, &c], &[]);
        assert_eq!(w.len(), 3, "three pairs");
        // Steady runs: every interval is at the drift floor (±2%), none wider.
        let floor = policy::RERUN_DRIFT_FLOOR;
        assert!(w.iter().all(|x| (x - floor).abs() < 1e-9), "{w:?}");
        let w = half_widths(&[&a, &[]], &[]);
        assert!(w[0].is_nan(), "{w:?}");
        let zero = [100.0, 0.0, 99.0];
        let w = half_widths(&[&zero], &[]);
        assert!(w[0].is_nan(), "a zero run is no figure: {w:?}");
        assert_eq!(stop_rule(&w, 0.5, at(5, 0.0)), Decision::More);
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

    #[test]
    fn a_process_aims_for_a_share_of_the_earlier_processes_spread_never_below_the_target() {
        let share = policy::PRECISION_SPREAD_SHARE;
        assert_eq!(process_target(0.03, &[0.02, 0.40]), share * 0.40);
        assert_eq!(
            process_target(0.03, &[0.01, 0.02]),
            0.03,
            "narrow: the target"
        );
        assert_eq!(process_target(0.03, &[0.02, f64::NAN]), 0.03, "no interval");
        assert_eq!(process_target(0.03, &[]), 0.03, "no earlier processes");
        let r = PrecisionRecord::with_own(
            Decision::ProcessesDisagree,
            0.4,
            Some(0.17),
            0.03,
            30.0,
            9,
            4.0,
        );
        assert!(
            r.note.contains("own rounds were within ±17.0%"),
            "{}",
            r.note
        );
    }

    #[test]
    fn a_narrow_interval_over_too_few_processes_takes_another_process() {
        // Two processes pool their runs as one unit; the fastest runs of one of them can read
        // ±1% while the other runs at half its speed.
        let below = policy::MIN_PROCESS_UNITS as u64 - 1;
        let d = after_process(Decision::Reached, &[0.01], 0.03, below);
        assert_eq!(d, Decision::TooFewProcesses { processes: below });
        let r = PrecisionRecord::new(d, 0.01, 0.03, 30.0, 6, 2.0);
        assert!(!r.reached);
        assert!(
            r.note.contains("too few to show how far processes spread"),
            "{}",
            r.note
        );
        assert!(another_process(&r, below, 6));
        assert_eq!(
            after_process(Decision::Reached, &[0.01], 0.03, below + 1),
            Decision::Reached
        );
    }

    #[test]
    fn processes_that_disagree_are_named_and_take_another_process_while_budget_is_left() {
        // ±4.5% over 3 processes: 6 would narrow it to about ±2.8%, within ±3%.
        let wide = [0.02, 0.045];
        assert_eq!(
            after_process(Decision::Reached, &wide, 0.03, 3),
            Decision::ProcessesDisagree
        );
        assert_eq!(
            after_process(Decision::BudgetSpent, &wide, 0.03, 3),
            Decision::BudgetSpent,
            "a process that spent its budget says so"
        );
        assert_eq!(
            after_process(Decision::BudgetSpent, &[0.02], 0.03, 3),
            Decision::Reached,
            "over the processes is what counts"
        );
        let r = PrecisionRecord::new(Decision::ProcessesDisagree, 0.045, 0.03, 30.0, 9, 4.0);
        assert!(!r.reached);
        assert!(r.note.contains("processes, which disagree"), "{}", r.note);
        assert!(another_process(&r, 3, 6));
        assert!(!another_process(&r, 6, 6), "the cap");
        let spent = PrecisionRecord::new(Decision::ProcessesDisagree, 0.045, 0.03, 30.0, 9, 30.0);
        assert!(!another_process(&spent, 3, 6), "the budget");
        let done = PrecisionRecord::new(Decision::Reached, 0.02, 0.03, 30.0, 9, 4.0);
        assert!(!another_process(&done, 3, 6));
    }

    #[test]
    fn a_target_the_most_processes_would_not_reach_is_out_of_reach_and_says_so() {
        let max = policy::PRECISION_MAX_PROCESSES;
        // ±40% over 3 processes: 6 would narrow the spread by √(2/5).
        let projected = projected_half_width(0.40, 3, max);
        let by_hand = 0.40f64.ln_1p() * (2.0f64 / 5.0).sqrt();
        assert!((projected - by_hand.exp_m1()).abs() < 1e-12, "{projected}");
        assert!((0.2..0.25).contains(&projected), "{projected}");
        let margin = policy::PRECISION_REACH_MARGIN;
        assert!(out_of_reach(0.40, 3, projected / margin * 0.9, max));
        assert!(
            !out_of_reach(0.40, 3, projected / margin * 1.1, max),
            "within the margin of a wider target"
        );
        assert!(!out_of_reach(0.08, 3, 0.03, max), "near enough to try");
        assert!(
            !out_of_reach(0.15, 2, 0.03, max),
            "two processes show no spread"
        );
        assert!(
            !out_of_reach(f64::NAN, 3, 0.03, max),
            "no interval: nothing to tell"
        );
        assert!(
            !out_of_reach(0.15, max, 0.03, max),
            "at the cap the cap says it"
        );
        assert_eq!(
            after_process(Decision::Reached, &[0.02, 0.40], 0.03, 3),
            Decision::OutOfReach { processes: 3 }
        );
        let r = PrecisionRecord::new(
            Decision::OutOfReach { processes: 3 },
            0.40,
            0.03,
            30.0,
            9,
            4.0,
        );
        assert_eq!(
            r.note,
            "not reached: ±40.0% over 3 worker processes, out of reach: 6 would narrow it to about ±23.7%, far wider than the target ±3.0%; 9 rounds, 4.0 s"
        );
        assert!(!another_process(&r, 3, max), "no more processes for it");
    }

    #[test]
    fn rounds_whose_cap_would_leave_them_far_from_the_aim_stop_once_there_are_enough() {
        let (from, cap) = (policy::PRECISION_FUTILITY_ROUNDS, 30);
        let pooled = |rounds, earlier_runs| Progress {
            rounds,
            min_rounds: 3,
            max_rounds: cap,
            earlier_runs,
            elapsed_sec: 1.0,
            budget_sec: 10.0,
        };
        let at = |rounds| pooled(rounds, 0);
        // ±40% over 6 runs: 30 would narrow it to about ±11.8% (√(5/29) and t(29)/t(5)), far
        // wider than ±3%.
        let own = Decision::RoundsOutOfReach {
            rounds: from,
            runs: from,
            cap_runs: cap,
        };
        assert_eq!(stop_rule(&[0.01, 0.40], 0.03, at(from)), own);
        let projected = projected_runs_half_width(0.40, from, cap);
        assert!((0.115..0.12).contains(&projected), "{projected}");
        // Pooled with an earlier process's 30 runs, this process's rounds narrow it less.
        assert_eq!(
            stop_rule(&[0.15], 0.03, pooled(from, 30)),
            Decision::RoundsOutOfReach {
                rounds: from,
                runs: 30 + from,
                cap_runs: 30 + cap
            }
        );
        assert_eq!(
            stop_rule(&[0.15], 0.03, at(from)),
            Decision::More,
            "its own 6 runs: about ±4.7% by 30, within reach"
        );
        assert_eq!(
            stop_rule(&[0.40], 0.03, at(from - 1)),
            Decision::More,
            "too few rounds to judge"
        );
        assert_eq!(
            stop_rule(&[0.08], 0.03, at(from)),
            Decision::More,
            "about ±2.6% projected: within reach"
        );
        assert_eq!(
            stop_rule(&[f64::NAN], 0.005, at(from)),
            Decision::More,
            "no interval: nothing to tell"
        );
        assert_eq!(stop_rule(&[0.40], 0.03, at(cap)), Decision::MaxRounds);
        assert_eq!(
            stop_rule(&[0.40], 0.30, at(from)),
            Decision::More,
            "a wide aim (a share of the processes' spread) is within reach"
        );
        // After the process, the intervals over the processes decide; else the rounds say why.
        assert_eq!(after_process(own, &[0.02], 0.03, 3), Decision::Reached);
        assert_eq!(after_process(own, &[0.3], 0.03, 2), own);
        let r = PrecisionRecord::with_own(own, 0.3, Some(0.4), 0.03, 30.0, 12, 5.0);
        assert_eq!(
            r.note,
            "not reached: ±30.0% over the worker processes; the intervals the latest one's rounds read stood at ±40.0% after 6, out of reach within a process: its cap of 30 rounds would narrow them to about ±11.8%, far wider than its aim; 12 rounds, 5.0 s"
        );
        assert!(
            another_process(&r, 2, 6),
            "more processes may still narrow it"
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, rng_seed: proptest::test_runner::RngSeed::Fixed(23), ..ProptestConfig::default() })]
        #[test]
        fn a_projection_never_widens_and_never_drops_below_the_floor(
            w in 0.0f64..2.0,
            processes in 2u64..6,
        ) {
            let max = policy::PRECISION_MAX_PROCESSES;
            let projected = projected_half_width(w, processes, max);
            prop_assert!(projected <= w.max(policy::RERUN_DRIFT_FLOOR) * (1.0 + 1e-12));
            prop_assert!(projected >= policy::RERUN_DRIFT_FLOOR * (1.0 - 1e-12));
            prop_assert!(projected_half_width(w, max, max) <= w.max(policy::RERUN_DRIFT_FLOOR) * (1.0 + 1e-12));
        }

        #[test]
        fn rounds_stop_as_out_of_reach_only_when_their_projection_is_past_the_margin(
            w in 0.0f64..3.0,
            rounds in 3u64..40,
            earlier_runs in prop_oneof![Just(0u64), 3u64..60],
            target in 0.005f64..0.2,
        ) {
            let p = Progress { rounds, min_rounds: 3, max_rounds: 30, earlier_runs, elapsed_sec: 0.0, budget_sec: 1.0 };
            let (runs, cap_runs) = (earlier_runs + rounds, earlier_runs + 30);
            let projected = projected_runs_half_width(w, runs, cap_runs);
            let floor = policy::RERUN_DRIFT_FLOOR;
            prop_assert!(projected <= w.max(floor) * (1.0 + 1e-12), "a projection never widens");
            prop_assert!(projected >= floor * (1.0 - 1e-12));
            if let Decision::RoundsOutOfReach { rounds: r, runs: n, cap_runs: m } = stop_rule(&[w], target, p) {
                prop_assert_eq!((r, n, m), (rounds, runs, cap_runs));
                prop_assert!((policy::PRECISION_FUTILITY_ROUNDS..30).contains(&rounds));
                prop_assert!(projected > target * policy::PRECISION_REACH_MARGIN);
            } else if (policy::PRECISION_FUTILITY_ROUNDS..30).contains(&rounds) && w > target {
                prop_assert!(projected <= target * policy::PRECISION_REACH_MARGIN);
            }
        }
    }

    /// Two libraries' runs of the same rounds, 1–4 processes of 1–6 rounds each.
    fn two_libraries() -> impl Strategy<Value = (Vec<f64>, Vec<f64>, Vec<usize>)> {
        (1usize..5, 1usize..7).prop_flat_map(|(procs, per)| {
            let n = procs * per;
            (
                proptest::collection::vec(1.0f64..1e5, n),
                proptest::collection::vec(1.0f64..1e5, n),
                Just(vec![per; procs]),
            )
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 40, rng_seed: proptest::test_runner::RngSeed::Fixed(22), ..ProptestConfig::default() })]
        #[test]
        fn widths_are_the_figures_never_below_the_floor_and_blind_to_scale_and_order(
            (a, b, g) in two_libraries(),
            k in 0.01f64..100.0,
        ) {
            let w = half_widths(&[&a], &g);
            let own = figure(&a, &g).half_width();
            prop_assert!((w[0] - own).abs() <= 1e-9 * own.max(1e-3), "{:?} vs {}", w, own);
            let pair = half_widths(&[&a, &b], &g);
            prop_assert_eq!(pair.len(), 1);
            let floor = policy::RERUN_DRIFT_FLOOR * (1.0 - 1e-9);
            prop_assert!(w.iter().chain(&pair).all(|x| x.is_finite() && *x >= floor), "{:?}", pair);
            // Scaling a library's runs (a faster machine) leaves its figure's width.
            let scaled: Vec<f64> = a.iter().map(|x| x * k).collect();
            let s = half_widths(&[&scaled], &g);
            prop_assert!((s[0] - w[0]).abs() <= 1e-6 * w[0], "{:?} vs {:?}", w, s);
            // Swapping the libraries keeps the pair's width.
            let r = half_widths(&[&b, &a], &g);
            prop_assert!((r[0] - pair[0]).abs() <= 1e-9 * pair[0].max(1e-3), "{:?} vs {:?}", r, pair);
        }
    }

    proptest! {
        #[test]
        fn narrower_intervals_never_need_more_rounds_to_be_judged(
            ws in proptest::collection::vec(0.0f64..0.2, 0..6),
            target in 0.001f64..0.5,
            rounds in 0u64..60,
            elapsed in 0.0f64..20.0,
        ) {
            let p = Progress { rounds, min_rounds: 3, max_rounds: 50, earlier_runs: 0, elapsed_sec: elapsed, budget_sec: 10.0 };
            let halved: Vec<f64> = ws.iter().map(|w| w / 2.0).collect();
            // Rounds that stop for being far from the aim may go on when narrower; any other
            // stop holds for narrower intervals, and a narrower interval out of reach is a wider
            // one's too.
            let (wide, narrow) = (stop_rule(&ws, target, p), stop_rule(&halved, target, p));
            if !matches!(wide, Decision::More | Decision::RoundsOutOfReach { .. }) {
                prop_assert_ne!(narrow, Decision::More);
            }
            if matches!(narrow, Decision::RoundsOutOfReach { .. }) {
                prop_assert_eq!(wide, narrow);
            }
            if rounds >= p.min_rounds && ws.iter().all(|w| *w <= target) {
                prop_assert_eq!(stop_rule(&ws, target, p), Decision::Reached);
            }
        }
    }
}
