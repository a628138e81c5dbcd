//! A transform under way: timed runs, one per call, so a scheduler can alternate the runs of
//! several libraries (docs/methodology.md), and the transform's result from its runs.

use augbench_core::policy;
use augbench_core::registry::TransformSpec;
use augbench_core::results::TransformResult;
use augbench_core::stats;

use super::requests::settle;
use super::session::Session;
use super::settings::MicroSettings;
use augbench_protocol::client::WorkerError;
use augbench_protocol::protocol::{CheckResponse, TimeRequest, TimeResponse};

/// A transform after its setup (contract check, preflight, warmup): collects timed runs, one per
/// call, so that a scheduler can alternate the runs of several libraries.
#[derive(Debug, Clone)]
pub struct Measuring {
    name: String,
    params: serde_json::Value,
    loops: u64,
    per_item: f64,
    slow_threshold: f64,
    preflight_items: u64,
    warmup_passes: u64,
    /// What the setup saw (boxed: `Started` holds a `Measuring` next to a boxed result).
    setup: Box<Setup>,
    throughputs: Vec<f64>,
    times: Vec<f64>,
    /// Thread CPU seconds of each run, while every run so far has one.
    cpu_times: Option<Vec<f64>>,
}

/// The output the contract check saw, and what the library warned while building the transform.
#[derive(Debug, Clone)]
struct Setup {
    output_shape: Vec<u64>,
    output_dtype: String,
    output_contiguous: Option<bool>,
    force_share: Option<f64>,
    warnings: Vec<String>,
}

impl Measuring {
    /// A transform whose setup found it ready for runs of `loops` passes each.
    pub(super) fn new(
        spec: &TransformSpec,
        params: &serde_json::Value,
        loops: u64,
        per_item: f64,
        set: &MicroSettings,
        warmup_passes: u64,
        checked: CheckResponse,
    ) -> Measuring {
        Measuring {
            name: spec.name.clone(),
            params: params.clone(),
            loops,
            per_item,
            slow_threshold: set.slow_threshold,
            preflight_items: set.preflight_items,
            warmup_passes,
            setup: Box::new(Setup {
                output_shape: checked.output_shape,
                output_dtype: checked.output_dtype,
                output_contiguous: checked.output_contiguous,
                force_share: checked.force_share,
                warnings: Vec::new(),
            }),
            throughputs: Vec::new(),
            times: Vec::new(),
            cpu_times: set.cpu_clock.then(Vec::new),
        }
    }

    /// The build warnings to record with the result.
    pub(super) fn with_warnings(mut self, warnings: Vec<String>) -> Measuring {
        self.setup.warnings = warnings;
        self
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn runs(&self) -> u64 {
        self.throughputs.len() as u64
    }

    /// Items per second of each run so far.
    pub fn throughputs(&self) -> &[f64] {
        &self.throughputs
    }

    /// Whether another run is due: fewer than `num_runs`, or (with a precision target) the
    /// interval is still too wide and the run budget is not spent.
    pub fn wants_more(&self, set: &MicroSettings) -> bool {
        let budget = match set.precision_target {
            Some(_) => policy::PRECISION_MAX_RUNS.max(set.num_runs),
            None => set.num_runs,
        };
        let n = self.runs();
        n < budget
            && !(n >= set.num_runs && precise_enough(&self.throughputs, set.precision_target))
    }

    /// One timed run over all items, on a worker where this transform is prepared and warm (a
    /// worker holds one transform at a time, so it still does). A failed request returns the
    /// transform's final `unsupported`/`error` result; a lost worker is an `Err`.
    pub fn run(
        &mut self,
        s: &mut dyn Session,
        items: u64,
        set: &MicroSettings,
    ) -> Result<Result<(), TransformResult>, WorkerError> {
        let timed = match self.pass(s, items, self.loops, set)? {
            Ok(timed) => timed,
            Err(result) => return Ok(Err(result)),
        };
        let pass_sec = mean_seconds(&timed.ns);
        self.times.push(pass_sec);
        self.throughputs.push(items as f64 / pass_sec.max(1e-12));
        // A worker without a CPU clock (or one reply without it) leaves the row wall-clock only.
        let cpu = (timed.cpu_ns.len() == timed.ns.len()).then(|| mean_seconds(&timed.cpu_ns));
        self.cpu_times = self.cpu_times.take().zip(cpu).map(|(mut v, c)| {
            v.push(c);
            v
        });
        Ok(Ok(()))
    }

    /// An untimed pass over the first `policy::WARMUP_SUBSET_ITEMS` items, for a worker that sat
    /// idle while other libraries ran (interleaved rounds): the timed run that follows starts
    /// from the state a run in a row would have. Failures are the transform's final result.
    pub fn rewarm(
        &mut self,
        s: &mut dyn Session,
        items: u64,
        set: &MicroSettings,
    ) -> Result<Result<(), TransformResult>, WorkerError> {
        let subset = policy::WARMUP_SUBSET_ITEMS.clamp(1, items.max(1));
        Ok(self.pass(s, subset, 1, set)?.map(|_| ()))
    }

    /// `loops` passes over the first `count` items: nanoseconds per loop, or the transform's
    /// final result when the request failed.
    fn pass(
        &self,
        s: &mut dyn Session,
        count: u64,
        loops: u64,
        set: &MicroSettings,
    ) -> Result<Result<TimeResponse, TransformResult>, WorkerError> {
        let req = TimeRequest {
            start: 0,
            count,
            loops,
            markers: false,
        };
        settle(s.time_clocked(req, set.request_timeout), &self.params)
    }

    /// The transform's result from the runs so far.
    pub fn finish(self) -> TransformResult {
        let summary = stats::summarize(&self.throughputs);
        let mut r = TransformResult::measured(self.params, &summary, self.throughputs, self.times);
        r.warmup_iterations = self.warmup_passes;
        r.slow_threshold_sec_per_item = Some(self.slow_threshold);
        r.slow_preflight_items = Some(self.preflight_items);
        r.preflight_sec_per_item = Some(self.per_item);
        let setup = *self.setup;
        r.output_shape = Some(setup.output_shape);
        r.output_dtype = Some(setup.output_dtype);
        r.output_contiguous = setup.output_contiguous;
        r.force_share = setup.force_share;
        r.warnings = setup.warnings;
        r.cpu_times = self.cpu_times.unwrap_or_default();
        r
    }
}

/// The mean of per-loop nanoseconds, in seconds.
fn mean_seconds(ns: &[u64]) -> f64 {
    stats::mean(&ns.iter().map(|n| *n as f64 / 1e9).collect::<Vec<_>>())
}

fn precise_enough(xs: &[f64], target: Option<f64>) -> bool {
    let Some(target) = target else { return true };
    let widths = stats::precision::half_widths(&[xs], &[]);
    stats::precision::within(&widths, target)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::micro::testing::{Log, flip, settings};
    use crate::micro::{Started, start};

    #[test]
    fn runs_on_a_worker_that_holds_the_transform_are_not_prepared_again() {
        let (mut log, set, items) = (Log::default(), settings(3), 40);
        let Ok(Started::Measuring(mut m)) = start(&mut log, &flip(), items, &set, &mut |_| {})
        else {
            panic!("expected a transform under way");
        };
        let before = log.times.len();
        while m.wants_more(&set) {
            m.run(&mut log, items, &set).unwrap().unwrap();
        }
        assert_eq!(log.prepares, 1, "prepared once, before warmup");
        let timed = &log.times[before..];
        assert_eq!(timed.len(), 3, "one request a run");
        assert!(
            timed.iter().all(|t| (t.count, t.loops) == (40, 1)),
            "{timed:?}"
        );
        let r = m.finish();
        assert_eq!(r.throughputs.len(), 3);
        assert_eq!(
            (r.output_contiguous, r.force_share),
            (Some(false), Some(0.75)),
            "the check's output form reaches the row"
        );
        assert!(
            r.median_throughput
                .is_some_and(|t| (t - 1000.0).abs() < 1e-6)
        );
        assert_eq!(
            r.cpu_times.len(),
            3,
            "each run's thread CPU time beside its wall time"
        );
        for (cpu, wall) in r.cpu_times.iter().zip(&r.times) {
            assert!(
                (cpu / wall - 0.9).abs() < 1e-9,
                "cpu {cpu} s against wall {wall} s"
            );
        }
    }

    #[test]
    fn a_rewarm_is_one_untimed_pass_over_the_warmup_subset() {
        let (mut log, set, items) = (Log::default(), settings(3), 40);
        let Ok(Started::Measuring(mut m)) = start(&mut log, &flip(), items, &set, &mut |_| {})
        else {
            panic!("expected a transform under way");
        };
        m.rewarm(&mut log, items, &set).unwrap().unwrap();
        let last = log.times.last().unwrap();
        assert_eq!((last.count, last.loops), (policy::WARMUP_SUBSET_ITEMS, 1));
        assert_eq!(m.runs(), 0, "not a timed run");
    }

    #[test]
    fn precision_target_none_is_always_enough() {
        assert!(precise_enough(&[1.0, 100.0], None));
        assert!(!precise_enough(&[1.0, 100.0, 3.0, 50.0], Some(0.03)));
        assert!(precise_enough(
            &[100.0, 100.1, 99.9, 100.0, 100.05],
            Some(0.03)
        ));
        // The figure's interval, not the median's: a lone fast run is no figure yet.
        let lone_fast = [100.0, 100.0, 100.1, 99.9, 100.0, 100.05, 99.95, 130.0];
        assert!(!precise_enough(&lone_fast, Some(0.03)));
        // Never narrower than the drift floor: a target below it is never reached.
        let below = policy::RERUN_DRIFT_FLOOR / 2.0;
        assert!(!precise_enough(&[100.0; 8], Some(below)));
    }
}
