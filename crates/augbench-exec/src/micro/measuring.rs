//! A transform under way: timed runs, one per call, so a scheduler can alternate the runs of
//! several libraries (docs/methodology.md), or one run taken in chunks of items, so that A/B
//! variants alternate chunk by chunk (docs/ab.md); and the transform's result from its runs.

use augbench_catalog::registry::TransformSpec;
use augbench_core::policy;
use augbench_core::results::TransformResult;

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
    warmed: Warmed,
    /// What the setup saw (boxed: `Started` holds a `Measuring` next to a boxed result).
    setup: Box<Setup>,
    throughputs: Vec<f64>,
    times: Vec<f64>,
    /// Thread CPU seconds of each run, while every run so far has one.
    cpu_times: Option<Vec<f64>>,
    /// Runs taken in chunks (boxed, as `setup`).
    chunks: Box<Chunks>,
}

/// What the warmup ran: passes over the subset and over every item.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Warmed {
    pub passes: u64,
    /// Whether it ended with the untimed pass over every item.
    pub full_pass: bool,
    /// The subset's cold pass (the preflight's, after its first item) over its warm rate (the
    /// last window's), where both were read.
    pub cold_ratio: Option<f64>,
}

/// Runs taken in chunks: the one under way, and the most chunks a run was taken in.
#[derive(Debug, Clone, Default)]
struct Chunks {
    partial: Option<Partial>,
    most: u64,
}

/// A run being taken in chunks: seconds per pass so far (wall, and CPU while every chunk had it).
#[derive(Debug, Clone, Copy)]
struct Partial {
    wall: f64,
    cpu: Option<f64>,
    chunks: u64,
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
        warmed: Warmed,
        checked: CheckResponse,
    ) -> Measuring {
        Measuring {
            name: spec.name.clone(),
            params: params.clone(),
            loops,
            per_item,
            slow_threshold: set.slow_threshold,
            preflight_items: set.preflight_items,
            warmed,
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
            chunks: Box::default(),
        }
    }

    /// Seconds one item takes here, as the preflight read it.
    pub fn seconds_per_item(&self) -> f64 {
        self.per_item
    }

    /// Passes each timed request makes (so that a run lasts `min_time`).
    pub fn loops(&self) -> u64 {
        self.loops
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
        let timed = match self.pass(s, 0, items, self.loops, set)? {
            Ok(timed) => timed,
            Err(result) => return Ok(Err(result)),
        };
        let (wall, cpu) = pass_seconds(&timed);
        self.push_run(items, wall, cpu);
        Ok(Ok(()))
    }

    /// One chunk of the run being taken in chunks: `loops` passes over items `start..start +
    /// count`, added to the run's seconds per pass. `close_run` ends the run.
    pub fn run_chunk(
        &mut self,
        s: &mut dyn Session,
        start: u64,
        count: u64,
        set: &MicroSettings,
    ) -> Result<Result<(), TransformResult>, WorkerError> {
        let timed = match self.pass(s, start, count, self.loops, set)? {
            Ok(timed) => timed,
            Err(result) => return Ok(Err(result)),
        };
        let (wall, cpu) = pass_seconds(&timed);
        let p = self.chunks.partial.get_or_insert(Partial {
            wall: 0.0,
            cpu: Some(0.0),
            chunks: 0,
        });
        p.wall += wall;
        p.cpu = p.cpu.zip(cpu).map(|(a, b)| a + b);
        p.chunks += 1;
        Ok(Ok(()))
    }

    /// Ends the run taken in chunks over `items` items (nothing when no chunk ran).
    pub fn close_run(&mut self, items: u64) {
        if let Some(p) = self.chunks.partial.take() {
            self.chunks.most = self.chunks.most.max(p.chunks);
            self.push_run(items, p.wall, p.cpu);
        }
    }

    /// A finished run: seconds per pass over `items` items, on the wall and the CPU clock.
    fn push_run(&mut self, items: u64, wall: f64, cpu: Option<f64>) {
        self.times.push(wall);
        self.throughputs.push(items as f64 / wall.max(1e-12));
        // A worker without a CPU clock (or one reply without it) leaves the row wall-clock only.
        self.cpu_times = self.cpu_times.take().zip(cpu).map(|(mut v, c)| {
            v.push(c);
            v
        });
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
        Ok(self.pass(s, 0, subset, 1, set)?.map(|_| ()))
    }

    /// `loops` passes over `count` items from `start`: nanoseconds per loop, or the
    /// transform's final result when the request failed.
    fn pass(
        &self,
        s: &mut dyn Session,
        start: u64,
        count: u64,
        loops: u64,
        set: &MicroSettings,
    ) -> Result<Result<TimeResponse, TransformResult>, WorkerError> {
        let req = TimeRequest {
            start,
            count,
            loops,
            markers: false,
        };
        settle(s.time_clocked(req, set.request_timeout), &self.params)
    }

    /// The transform's result from the runs so far.
    pub fn finish(self) -> TransformResult {
        let summary = augbench_stats::summarize(&self.throughputs);
        let mut r = TransformResult::measured(self.params, &summary, self.throughputs, self.times);
        r.warmup_iterations = self.warmed.passes;
        r.warmup_full_passes = Some(u64::from(self.warmed.full_pass));
        r.warmup_cold_ratio = self.warmed.cold_ratio;
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
        r.run_chunks = (self.chunks.most > 1).then_some(self.chunks.most);
        r
    }
}

/// Seconds per pass of a timed reply: wall, and CPU when every loop reported it.
fn pass_seconds(timed: &TimeResponse) -> (f64, Option<f64>) {
    let cpu = (timed.cpu_ns.len() == timed.ns.len()).then(|| mean_seconds(&timed.cpu_ns));
    (mean_seconds(&timed.ns), cpu)
}

/// The mean of per-loop nanoseconds, in seconds.
fn mean_seconds(ns: &[u64]) -> f64 {
    augbench_stats::mean(&ns.iter().map(|n| *n as f64 / 1e9).collect::<Vec<_>>())
}

fn precise_enough(xs: &[f64], target: Option<f64>) -> bool {
    let Some(target) = target else { return true };
    let widths = augbench_stats::precision::half_widths(&[xs], &[]);
    augbench_stats::precision::within(&widths, target)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::micro::testing::{Log, flip, settings};
    use crate::micro::{Started, start};

    /// A run taken in chunks times each range once, and reads as one run over every item: the
    /// sum of its chunks' seconds per pass, on both clocks.
    #[test]
    fn a_run_in_chunks_is_one_run_over_all_its_items() {
        let (mut log, set, items) = (Log::default(), settings(1), 40);
        let Ok(Started::Measuring(mut m)) = start(&mut log, &flip(), items, &set, &mut |_| {})
        else {
            panic!("expected a transform under way");
        };
        let before = log.times.len();
        for range in [(0, 13), (13, 13), (26, 14)] {
            m.run_chunk(&mut log, range.0, range.1, &set)
                .unwrap()
                .unwrap();
        }
        assert_eq!(m.runs(), 0, "a run ends when it is closed");
        m.close_run(items);
        let timed: Vec<(u64, u64)> = log.times[before..]
            .iter()
            .map(|t| (t.start, t.count))
            .collect();
        assert_eq!(timed, [(0, 13), (13, 13), (26, 14)]);
        let r = m.finish();
        // The test session takes 1 ms an item on the wall clock and 0.9 ms on the CPU clock.
        assert!((r.times[0] - 0.040).abs() < 1e-12, "{:?}", r.times);
        assert!((r.cpu_times[0] - 0.036).abs() < 1e-12, "{:?}", r.cpu_times);
        assert!((r.throughputs[0] - 1000.0).abs() < 1e-6);
        assert_eq!(r.run_chunks, Some(3));
    }

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
