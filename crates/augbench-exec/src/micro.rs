//! The micro methodology (DESIGN §5), on the coordinator side: contract check, slow preflight,
//! adaptive warmup, timed runs and the optional precision target. Every number comes from the
//! resolved config (which took it from policy). Talks to any worker through `Session`.

use std::time::{Duration, Instant};

use augbench_core::RunConfig;
use augbench_core::policy;
use augbench_core::registry::TransformSpec;
use augbench_core::results::{Status, TransformResult};
use augbench_core::stats;

use crate::client::{Worker, WorkerError};
use crate::contract;
use crate::protocol::{
    CheckResponse, FailureKind, PrepareRequest, PrepareResponse, Request, TimeRequest,
};

/// What the methodology needs from a worker. `Worker` implements it; tests may script one.
pub trait Session {
    fn prepare(
        &mut self,
        req: PrepareRequest,
        timeout: Duration,
    ) -> Result<PrepareResponse, WorkerError>;
    fn check(&mut self, timeout: Duration) -> Result<CheckResponse, WorkerError>;
    /// Nanoseconds per loop.
    fn time(&mut self, req: TimeRequest, timeout: Duration) -> Result<Vec<u64>, WorkerError>;
}

impl Session for Worker {
    fn prepare(
        &mut self,
        req: PrepareRequest,
        timeout: Duration,
    ) -> Result<PrepareResponse, WorkerError> {
        self.call(&Request::Prepare(req), timeout)
    }
    fn check(&mut self, timeout: Duration) -> Result<CheckResponse, WorkerError> {
        self.call(&Request::Check, timeout)
    }
    fn time(&mut self, req: TimeRequest, timeout: Duration) -> Result<Vec<u64>, WorkerError> {
        let r: crate::protocol::TimeResponse = self.call(&Request::Time(req), timeout)?;
        Ok(r.ns)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct WarmupSettings {
    pub window: u64,
    pub threshold: f64,
    pub max_passes: u64,
    pub min_windows: u64,
    pub max_seconds: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct MicroSettings {
    pub num_runs: u64,
    pub min_time: f64,
    pub slow_threshold: f64,
    pub preflight_items: u64,
    pub disable_slow_skip: bool,
    pub precision_target: Option<f64>,
    pub request_timeout: Duration,
    pub device: String,
    /// Batched regime: items per call (`None` = the per-item regime).
    pub batch: Option<u64>,
    pub warmup: WarmupSettings,
}

impl MicroSettings {
    /// Reads a resolved config (every field is filled by `resolve`).
    pub fn from_config(cfg: &RunConfig, device: &str) -> MicroSettings {
        let e = &cfg.execution;
        let w = &e.warmup;
        // `resolve` fills every field; the fallbacks are policy's own values for the media.
        let media = cfg.selection.media.unwrap_or(augbench_core::Media::Image);
        let timeout = e.request_timeout_sec.unwrap_or(policy::REQUEST_TIMEOUT_SEC);
        MicroSettings {
            num_runs: e.num_runs.unwrap_or(policy::DEFAULT_NUM_RUNS),
            min_time: e.min_time.unwrap_or(policy::DEFAULT_MIN_TIME_SEC),
            slow_threshold: e
                .slow_threshold_sec_per_item
                .unwrap_or_else(|| policy::slow_threshold_sec_per_item(media)),
            preflight_items: e
                .slow_preflight_items
                .unwrap_or_else(|| policy::slow_preflight_items(media)),
            disable_slow_skip: e.disable_slow_skip.unwrap_or(false),
            precision_target: e.precision_target,
            // Validation keeps the timeout positive and finite; never panic if it is not.
            request_timeout: Duration::try_from_secs_f64(timeout)
                .unwrap_or(Duration::from_secs_f64(policy::REQUEST_TIMEOUT_SEC)),
            device: device.to_string(),
            batch: e.micro_batch.filter(|b| *b > policy::DEFAULT_MICRO_BATCH),
            warmup: WarmupSettings {
                window: w
                    .window
                    .unwrap_or_else(|| policy::warmup_window(media))
                    .max(1),
                threshold: w.threshold.unwrap_or(policy::WARMUP_THRESHOLD),
                max_passes: w.max_passes.unwrap_or(policy::WARMUP_MAX_PASSES),
                min_windows: w.min_windows.unwrap_or(policy::WARMUP_MIN_WINDOWS),
                max_seconds: w.max_seconds.unwrap_or(policy::WARMUP_MAX_SEC),
            },
        }
    }
}

/// Phases reported to the progress display.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Check,
    Preflight,
    Warmup,
    Run(u64),
}

/// Measures one transform on a worker that already holds `items` loaded items, all runs in a row.
/// A failed request becomes an `unsupported`/`error` result; a lost worker is returned as `Err`.
pub fn measure(
    s: &mut dyn Session,
    spec: &TransformSpec,
    items: u64,
    set: &MicroSettings,
    on_phase: &mut dyn FnMut(Phase),
) -> Result<TransformResult, WorkerError> {
    let mut m = match start(s, spec, items, set, on_phase)? {
        Started::Finished(r) => return Ok(*r),
        Started::Measuring(m) => m,
    };
    while m.wants_more(set) {
        on_phase(Phase::Run(m.runs() + 1));
        if let Err(r) = settle(m.timed_run(s, items, set), &m.params)? {
            return Ok(r);
        }
    }
    Ok(m.finish())
}

/// A transform after its setup (contract check, preflight, warmup): collects timed runs, one per
/// call, so that a runner can interleave the runs of several transforms.
#[derive(Debug, Clone)]
pub struct Measuring {
    name: String,
    params: serde_json::Value,
    loops: u64,
    per_item: f64,
    slow_threshold: f64,
    preflight_items: u64,
    warmup_passes: u64,
    output_shape: Vec<u64>,
    output_dtype: String,
    throughputs: Vec<f64>,
    times: Vec<f64>,
}

/// What `start` leaves: a transform that needs no timed runs (unsupported, slow, error), or one
/// ready for them.
pub enum Started {
    Finished(Box<TransformResult>),
    Measuring(Measuring),
}

/// Prepares, checks, preflights and warms up one transform; no timed run yet.
pub fn start(
    s: &mut dyn Session,
    spec: &TransformSpec,
    items: u64,
    set: &MicroSettings,
    on_phase: &mut dyn FnMut(Phase),
) -> Result<Started, WorkerError> {
    let params = serde_json::to_value(&spec.params).unwrap_or_default();
    Ok(
        match settle(start_inner(s, spec, items, set, on_phase, &params), &params)? {
            Ok(started) => started,
            Err(r) => Started::Finished(Box::new(r)),
        },
    )
}

/// Maps a failed request to an `unsupported`/`error` result; a lost worker stays an `Err`.
fn settle<T>(
    r: Result<T, WorkerError>,
    params: &serde_json::Value,
) -> Result<Result<T, TransformResult>, WorkerError> {
    match r {
        Ok(v) => Ok(Ok(v)),
        Err(WorkerError::Failed { failure, .. }) => {
            let status = match failure.kind {
                FailureKind::Unsupported => Status::Unsupported,
                _ => Status::Error,
            };
            let reason = match failure.detail.trim() {
                "" => failure.error,
                d => format!("{}\n{}", failure.error, d),
            };
            Ok(Err(TransformResult::not_measured(
                status,
                params.clone(),
                reason,
            )))
        }
        Err(e) => Err(e),
    }
}

fn prepare_request(
    spec: &TransformSpec,
    params: &serde_json::Value,
    set: &MicroSettings,
) -> PrepareRequest {
    PrepareRequest {
        transform: spec.name.clone(),
        params: params.clone(),
        device: set.device.clone(),
        batch: set.batch,
    }
}

fn start_inner(
    s: &mut dyn Session,
    spec: &TransformSpec,
    items: u64,
    set: &MicroSettings,
    on_phase: &mut dyn FnMut(Phase),
    params: &serde_json::Value,
) -> Result<Started, WorkerError> {
    let timeout = set.request_timeout;
    let prepared = s.prepare(prepare_request(spec, params, set), timeout)?;
    if let Some(batch) = set.batch
        && prepared.regime.as_deref() != Some("batch")
    {
        let reason = format!("the worker did not enter the batched regime (micro_batch {batch})");
        let r = TransformResult::not_measured(Status::Error, params.clone(), reason);
        return Ok(Started::Finished(Box::new(r)));
    }
    on_phase(Phase::Check);
    let checked = s.check(timeout)?;
    if let Err(why) = contract::check(spec, &checked) {
        let reason = format!("output contract violated: {why}");
        let r = TransformResult::not_measured(Status::Error, params.clone(), reason);
        return Ok(Started::Finished(Box::new(r)));
    }
    on_phase(Phase::Preflight);
    let per_item = match preflight(s, items, set)? {
        Preflight::Slow(result) => {
            return Ok(Started::Finished(Box::new(slow_result(
                params, set, result,
            ))));
        }
        Preflight::PerItem(sec) => sec,
    };
    on_phase(Phase::Warmup);
    let warmup_passes = warmup(s, items, set)?;
    Ok(Started::Measuring(Measuring {
        name: spec.name.clone(),
        params: params.clone(),
        loops: loops_for(per_item * items as f64, set.min_time),
        per_item,
        slow_threshold: set.slow_threshold,
        preflight_items: set.preflight_items,
        warmup_passes,
        output_shape: checked.output_shape,
        output_dtype: checked.output_dtype,
        throughputs: Vec::new(),
        times: Vec::new(),
    }))
}

impl Measuring {
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn runs(&self) -> u64 {
        self.throughputs.len() as u64
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

    /// One timed run over all items, on a worker where this transform is prepared and warm.
    fn timed_run(
        &mut self,
        s: &mut dyn Session,
        items: u64,
        set: &MicroSettings,
    ) -> Result<(), WorkerError> {
        let req = TimeRequest {
            start: 0,
            count: items,
            loops: self.loops,
        };
        let ns = s.time(req, set.request_timeout)?;
        let pass_sec = stats::mean(&ns.iter().map(|n| *n as f64 / 1e9).collect::<Vec<_>>());
        self.times.push(pass_sec);
        self.throughputs.push(items as f64 / pass_sec.max(1e-12));
        Ok(())
    }

    /// One more timed run. When the worker `switched` to another transform since this one's last
    /// run (interleaved rounds), this one is prepared again (same seed) and run once over the
    /// warmup subset, untimed, first; otherwise the worker still holds it, prepared and warm.
    /// A failed request returns the transform's final `error` result.
    pub fn interleaved_run(
        &mut self,
        s: &mut dyn Session,
        spec: &TransformSpec,
        items: u64,
        set: &MicroSettings,
        switched: bool,
    ) -> Result<Result<(), TransformResult>, WorkerError> {
        let params = self.params.clone();
        let mut round = || -> Result<(), WorkerError> {
            if switched && self.runs() > 0 {
                s.prepare(prepare_request(spec, &params, set), set.request_timeout)?;
                let subset = policy::WARMUP_SUBSET_ITEMS.clamp(1, items.max(1));
                let rewarm = TimeRequest {
                    start: 0,
                    count: subset,
                    loops: 1,
                };
                s.time(rewarm, set.request_timeout)?;
            }
            self.timed_run(s, items, set)
        };
        settle(round(), &params)
    }

    /// The transform's result from the runs so far.
    pub fn finish(self) -> TransformResult {
        let summary = stats::summarize(&self.throughputs);
        let mut r = TransformResult::measured(self.params, &summary, self.throughputs, self.times);
        r.warmup_iterations = self.warmup_passes;
        r.slow_threshold_sec_per_item = Some(self.slow_threshold);
        r.slow_preflight_items = Some(self.preflight_items);
        r.preflight_sec_per_item = Some(self.per_item);
        r.output_shape = Some(self.output_shape);
        r.output_dtype = Some(self.output_dtype);
        r
    }
}

enum Preflight {
    PerItem(f64),
    /// Seconds per item measured (or the lower bound when the preflight hit its wall cap).
    Slow(f64),
}

fn preflight(
    s: &mut dyn Session,
    items: u64,
    set: &MicroSettings,
) -> Result<Preflight, WorkerError> {
    let count = set.preflight_items.clamp(1, items.max(1));
    let cap = Duration::from_secs_f64(policy::PREFLIGHT_MAX_SEC).min(set.request_timeout);
    let timeout = if set.disable_slow_skip {
        set.request_timeout
    } else {
        cap
    };
    let ns = match s.time(
        TimeRequest {
            start: 0,
            count,
            loops: 1,
        },
        timeout,
    ) {
        Ok(ns) => ns,
        // Past the preflight's own wall cap the transform is slow; at the request timeout it hangs.
        Err(WorkerError::Timeout { .. }) if !set.disable_slow_skip && cap < set.request_timeout => {
            return Ok(Preflight::Slow(cap.as_secs_f64() / count as f64));
        }
        Err(e) => return Err(e),
    };
    let per_item = ns.first().copied().unwrap_or(0) as f64 / 1e9 / count as f64;
    if !set.disable_slow_skip && per_item >= set.slow_threshold {
        return Ok(Preflight::Slow(per_item));
    }
    Ok(Preflight::PerItem(per_item.max(1e-9)))
}

fn slow_result(params: &serde_json::Value, set: &MicroSettings, per_item: f64) -> TransformResult {
    let reason = format!(
        "preflight: {per_item:.4} s/item ≥ slow threshold {} s/item",
        set.slow_threshold
    );
    TransformResult {
        status: Some(Status::Slow),
        supported: true,
        params: params.clone(),
        early_stopped: true,
        early_stop_reason: Some(reason),
        slow_threshold_sec_per_item: Some(set.slow_threshold),
        slow_preflight_items: Some(set.preflight_items),
        preflight_sec_per_item: Some(per_item),
        preflight_throughput: Some(1.0 / per_item),
        ..Default::default()
    }
}

/// Loops of a pass needed so one timed value lasts at least `min_time`.
pub fn loops_for(pass_seconds: f64, min_time: f64) -> u64 {
    if pass_seconds <= 0.0 {
        return 1;
    }
    ((min_time / pass_seconds).ceil() as u64).clamp(1, 100_000)
}

/// Runs warmup passes over a small subset until the window rule says stable; returns passes run.
fn warmup(s: &mut dyn Session, items: u64, set: &MicroSettings) -> Result<u64, WorkerError> {
    let w = &set.warmup;
    let subset = policy::WARMUP_SUBSET_ITEMS.clamp(1, items.max(1));
    let started = Instant::now();
    let mut rates: Vec<f64> = Vec::new();
    // Ask for one window of passes per request, so protocol cost stays out of short passes.
    let per_request = w.window.min(w.max_passes.max(1));
    while (rates.len() as u64) < w.max_passes && started.elapsed().as_secs_f64() < w.max_seconds {
        let ns = s.time(
            TimeRequest {
                start: 0,
                count: subset,
                loops: per_request,
            },
            set.request_timeout,
        )?;
        rates.extend(
            ns.iter()
                .map(|n| subset as f64 / (*n as f64 / 1e9).max(1e-12)),
        );
        if warmed_up(&rates, w) {
            break;
        }
    }
    // One untimed pass over every item: the subset is warm, the rest would otherwise make the
    // first timed run of each process a cold one (a few percent to 30% slower, as measured).
    let full_pass = items > subset;
    if full_pass {
        let all = TimeRequest {
            start: 0,
            count: items,
            loops: 1,
        };
        s.time(all, set.request_timeout)?;
    }
    Ok(rates.len() as u64 + u64::from(full_pass))
}

/// The window rule: after `min_windows` windows, the mean of the last window is within
/// `threshold` (relative) of the running mean of all passes.
pub fn warmed_up(rates: &[f64], w: &WarmupSettings) -> bool {
    let window = w.window.max(1) as usize;
    if rates.len() < window * w.min_windows.max(1) as usize {
        return false;
    }
    let last = stats::mean(&rates[rates.len() - window..]);
    let all = stats::mean(rates);
    all > 0.0 && ((last - all) / all).abs() < w.threshold
}

fn precise_enough(xs: &[f64], target: Option<f64>) -> bool {
    let Some(target) = target else { return true };
    let m = stats::median(xs);
    let (lo, hi) = stats::bootstrap_median_ci(
        xs,
        policy::BOOTSTRAP_RESAMPLES,
        policy::CONFIDENCE,
        policy::BOOTSTRAP_SEED,
    );
    stats::ci_half_width(m, lo, hi) <= target
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ws() -> WarmupSettings {
        WarmupSettings {
            window: 3,
            threshold: 0.05,
            max_passes: 100,
            min_windows: 2,
            max_seconds: 10.0,
        }
    }

    #[test]
    fn warmup_needs_min_windows_then_stability() {
        assert!(!warmed_up(&[100.0; 5], &ws()));
        assert!(warmed_up(&[100.0; 6], &ws()));
        assert!(!warmed_up(&[10.0, 10.0, 10.0, 100.0, 100.0, 100.0], &ws()));
    }

    #[test]
    fn loops_reach_min_time() {
        assert_eq!(loops_for(0.001, 0.05), 50);
        assert_eq!(loops_for(1.0, 0.05), 1);
        assert_eq!(loops_for(0.0, 0.05), 1);
    }

    /// A worker where every item takes 1 ms; it logs what it was asked.
    #[derive(Default)]
    struct Log {
        prepares: usize,
        times: Vec<TimeRequest>,
    }

    impl Session for Log {
        fn prepare(
            &mut self,
            r: PrepareRequest,
            _: Duration,
        ) -> Result<PrepareResponse, WorkerError> {
            self.prepares += 1;
            Ok(PrepareResponse {
                transform: r.transform,
                regime: None,
            })
        }
        fn check(&mut self, _: Duration) -> Result<CheckResponse, WorkerError> {
            Ok(CheckResponse {
                input_shape: vec![4, 4, 3],
                output_shape: vec![4, 4, 3],
                input_dtype: "uint8".into(),
                output_dtype: "uint8".into(),
                layout: "HWC".into(),
            })
        }
        fn time(&mut self, r: TimeRequest, _: Duration) -> Result<Vec<u64>, WorkerError> {
            self.times.push(r);
            Ok(vec![r.count * 1_000_000; r.loops as usize])
        }
    }

    fn settings(num_runs: u64) -> MicroSettings {
        MicroSettings {
            num_runs,
            min_time: 0.01,
            slow_threshold: 1.0,
            preflight_items: 2,
            disable_slow_skip: false,
            precision_target: None,
            request_timeout: Duration::from_secs(1),
            device: "cpu".into(),
            batch: None,
            warmup: ws(),
        }
    }

    /// Runs every later run of one transform; returns (time requests per run, prepares).
    fn later_runs(switched: bool) -> (Vec<Vec<TimeRequest>>, usize) {
        let spec = TransformSpec {
            name: "HorizontalFlip".into(),
            params: Default::default(),
            output: augbench_core::registry::OutputRule::Same,
            dtype: augbench_core::registry::DtypeRule::Same,
        };
        let (mut log, set, items) = (Log::default(), settings(3), 40);
        let Ok(Started::Measuring(mut m)) = start(&mut log, &spec, items, &set, &mut |_| {}) else {
            panic!("expected a transform under way");
        };
        assert_eq!(log.prepares, 1);
        let mut asked = Vec::new();
        while m.wants_more(&set) {
            let before = log.times.len();
            m.interleaved_run(&mut log, &spec, items, &set, switched)
                .unwrap()
                .unwrap();
            asked.push(log.times[before..].to_vec());
        }
        let r = m.finish();
        assert_eq!(r.throughputs.len(), 3);
        assert!(
            r.median_throughput
                .is_some_and(|t| (t - 1000.0).abs() < 1e-6)
        );
        (asked, log.prepares)
    }

    #[test]
    fn interleaved_runs_prepare_again_and_rewarm_before_each_later_run() {
        let (asked, prepares) = later_runs(true);
        assert_eq!((asked.len(), prepares), (3, 3));
        for (round, reqs) in asked.iter().enumerate() {
            let timed = reqs.last().unwrap();
            assert_eq!(
                (timed.count, timed.loops),
                (40, 1),
                "a full pass, 40 ms ≥ min_time"
            );
            match round {
                0 => assert_eq!(reqs.len(), 1, "the first run follows warmup directly"),
                _ => assert_eq!(
                    (reqs.len(), reqs[0].count),
                    (2, 10),
                    "an untimed rewarm first"
                ),
            }
        }
    }

    #[test]
    fn warmup_ends_with_one_untimed_pass_over_every_item() {
        let spec = TransformSpec {
            name: "HorizontalFlip".into(),
            params: Default::default(),
            output: augbench_core::registry::OutputRule::Same,
            dtype: augbench_core::registry::DtypeRule::Same,
        };
        let (mut log, set) = (Log::default(), settings(3));
        let Ok(Started::Measuring(_)) = start(&mut log, &spec, 40, &set, &mut |_| {}) else {
            panic!("expected a transform under way");
        };
        let last = log.times.last().unwrap();
        assert_eq!((last.start, last.count, last.loops), (0, 40, 1));
        assert!(
            log.times[..log.times.len() - 1]
                .iter()
                .all(|t| t.count < 40)
        );
    }

    #[test]
    fn runs_on_a_worker_that_still_holds_the_transform_are_not_prepared_again() {
        let (asked, prepares) = later_runs(false);
        assert_eq!(prepares, 1, "prepared once, before warmup");
        assert!(asked.iter().all(|reqs| reqs.len() == 1), "{asked:?}");
    }

    #[test]
    fn precision_target_none_is_always_enough() {
        assert!(precise_enough(&[1.0, 100.0], None));
        assert!(!precise_enough(&[1.0, 100.0, 3.0, 50.0], Some(0.01)));
        assert!(precise_enough(
            &[100.0, 100.1, 99.9, 100.0, 100.05],
            Some(0.01)
        ));
    }
}
