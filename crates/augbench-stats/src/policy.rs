//! The statistical policy: confidence, bootstrap resamples and seed, the drift floor and the
//! drift sentinel's thresholds, the headline estimator, the precision rule's constants. One home
//! for these numbers; `augbench_core::policy` re-exports them beside the rest of the defaults.

/// Drift sentinel: the reference kernel's relative spread over a transform's rounds
/// ((p90 − p10) / median of its times) at or below which the machine never counts as drifted;
/// above it, drift also has to exceed `DRIFT_FLOOR_MULTIPLE` times the sentinel's noise floor.
pub const DRIFT_MIN_SPREAD: f64 = 0.10;

/// Precision target: the most worker processes a transform takes. Past the configured
/// `processes`, a transform whose intervals over the processes are still wider than the target
/// takes one more while its budget lasts (rounds inside a process cannot narrow the spread
/// between processes).
pub const PRECISION_MAX_PROCESSES: u64 = 6;

/// Precision target: once the processes before this one show how far processes disagree (at
/// least `MIN_PROCESS_UNITS` of them), this process's rounds stop when its own intervals are
/// within this share of the widest interval over those processes (or the target, if wider).
/// Rounds narrow only the process's own figure; once it is known to half the width the
/// processes still leave, more rounds change the interval over the processes little, and only
/// more processes narrow it.
pub const PRECISION_SPREAD_SHARE: f64 = 0.5;

/// A transform's target is out of reach (no more processes) only when the most processes would,
/// by projection, leave its interval over them more than this many times the target: a spread
/// read from 3–5 processes is itself uncertain. Without the margin, transforms stopped at
/// ±3.7–5.4% over 3–5 processes that reached ±2.4–2.5% over 6 in other invocations; those at
/// ±13–17% over 3 were at ±7–8% over 5 in other invocations (docs/methodology.md).
pub const PRECISION_REACH_MARGIN: f64 = 2.0;

/// Precision target: from this many rounds in a process on, its rounds stop when the round cap
/// would, by projection, leave its own intervals more than `PRECISION_REACH_MARGIN` times its
/// aim. Fewer rounds are too erratic to judge from: a fastest-run interval over 3–5 runs carries
/// Student's t at 2–4 degrees of freedom, and one process's read ±520% after 3 rounds and ±8%
/// after 5 (docs/methodology.md, "Measuring to a precision").
pub const PRECISION_FUTILITY_ROUNDS: u64 = 6;

/// Precision target: the rule reads the intervals over worker processes after every process and
/// stops at the first narrow enough, so each look reads its interval at 1 − 5%/K
/// (`stats::precision::looks_factor`). K is the smallest that keeps the stated intervals' coverage
/// of a repeat at 95% within the Monte Carlo error in the simulator
/// (`crates/augbench-stats/tests/simulated_precision.rs`; figures in docs/methodology.md).
pub const PRECISION_LOOK_SPENDING: f64 = 3.0;

/// Precision target: the fewest pairs (a transform's two libraries over at least two worker
/// processes each) the run's prior of how far processes spread is fitted from
/// (`stats::spread::Spread::fit`): the spread of ln s² over fewer says nothing.
pub const SPREAD_PRIOR_MIN_ROWS: usize = 3;

/// Bootstrap resamples for the median interval, its seed and its confidence level.
pub const BOOTSTRAP_RESAMPLES: usize = 2000;
pub const BOOTSTRAP_SEED: u64 = 0;
pub const CONFIDENCE: f64 = 0.95;

/// Rerun interval floor (relative half-width): a repeat run is a new invocation on a machine
/// whose state drifts between invocations, which no single run can observe. Measured on a 2-core
/// VM with 3 processes × 3 runs: invocation-to-invocation median |Δ| 0.6–1.6% across rows, with
/// most quiet rows within 2%, while one run's values often agree within 0.3%.
pub const RERUN_DRIFT_FLOOR: f64 = 0.02;

/// The headline figure of a row (results' `figure_throughput`; tables, `compare`, regression
/// verdicts, plots and reports show it): the estimator that repeated best between back-to-back
/// invocations on a shared 2-core VM while reading close to a quiet measurement of the same row
/// (studies/estimator_study.sh; figures in docs/methodology.md).
pub const FIGURE_ESTIMATOR: crate::estimator::Estimator =
    crate::estimator::Estimator::ProcessMaxMedian;

/// The figure's rerun interval resamples worker processes only from this many on; with fewer
/// it resamples the pooled runs (two processes leave one degree of freedom). Also the fewest
/// processes the `unstable` process test judges (`stats::figure::fast_end_gap`; the run summary
/// says when a run has fewer) and from which paired rerun intervals drop Student's t.
pub const MIN_PROCESS_UNITS: usize = 3;

/// A row is `unstable` when its fastest worker process read more than this above its figure
/// (`stats::figure::fast_end_gap`). Calibrated with the estimator study (docs/methodology.md): on
/// 31 rows × 3 invocations of 3 processes it marked 11% of the rows, whose figures then moved 2.99×
/// as far between invocations as the unmarked rows' (25% vs 8%).
pub const UNSTABLE_PROCESS_GAP: f64 = 0.30;

/// Drift sentinel: a transform's rounds drifted when the sentinel's spread over them exceeds
/// this multiple of its noise floor (and `DRIFT_MIN_SPREAD`).
pub const DRIFT_FLOOR_MULTIPLE: f64 = 3.0;
