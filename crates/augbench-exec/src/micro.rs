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
    pub warmup: WarmupSettings,
}

impl MicroSettings {
    /// Reads a resolved config (every field is filled by `resolve`).
    pub fn from_config(cfg: &RunConfig, device: &str) -> MicroSettings {
        let e = &cfg.execution;
        let w = &e.warmup;
        MicroSettings {
            num_runs: e.num_runs.unwrap_or(policy::DEFAULT_NUM_RUNS),
            min_time: e.min_time.unwrap_or(policy::DEFAULT_MIN_TIME_SEC),
            slow_threshold: e.slow_threshold_sec_per_item.unwrap_or_default(),
            preflight_items: e.slow_preflight_items.unwrap_or(1),
            disable_slow_skip: e.disable_slow_skip.unwrap_or(false),
            precision_target: e.precision_target,
            request_timeout: Duration::from_secs_f64(
                e.request_timeout_sec.unwrap_or(policy::REQUEST_TIMEOUT_SEC),
            ),
            device: device.to_string(),
            warmup: WarmupSettings {
                window: w.window.unwrap_or(1).max(1),
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

/// Measures one transform on a worker that already holds `items` loaded items.
/// A failed request becomes an `unsupported`/`error` result; a lost worker is returned as `Err`.
pub fn measure(
    s: &mut dyn Session,
    spec: &TransformSpec,
    items: u64,
    set: &MicroSettings,
    on_phase: &mut dyn FnMut(Phase),
) -> Result<TransformResult, WorkerError> {
    let params = serde_json::to_value(&spec.params).unwrap_or_default();
    match measure_inner(s, spec, items, set, on_phase, &params) {
        Err(WorkerError::Failed { failure, .. }) => {
            let status = match failure.kind {
                FailureKind::Unsupported => Status::Unsupported,
                _ => Status::Error,
            };
            let reason = match failure.detail.trim() {
                "" => failure.error,
                d => format!("{}\n{}", failure.error, d),
            };
            Ok(TransformResult::not_measured(status, params, reason))
        }
        other => other,
    }
}

fn measure_inner(
    s: &mut dyn Session,
    spec: &TransformSpec,
    items: u64,
    set: &MicroSettings,
    on_phase: &mut dyn FnMut(Phase),
    params: &serde_json::Value,
) -> Result<TransformResult, WorkerError> {
    let timeout = set.request_timeout;
    let prep = PrepareRequest {
        transform: spec.name.clone(),
        params: params.clone(),
        device: set.device.clone(),
    };
    s.prepare(prep, timeout)?;
    on_phase(Phase::Check);
    let checked = s.check(timeout)?;
    if let Err(why) = contract::check(spec, &checked) {
        let reason = format!("output contract violated: {why}");
        return Ok(TransformResult::not_measured(
            Status::Error,
            params.clone(),
            reason,
        ));
    }
    on_phase(Phase::Preflight);
    let per_item = match preflight(s, items, set)? {
        Preflight::Slow(result) => return Ok(slow_result(params, set, result)),
        Preflight::PerItem(sec) => sec,
    };
    on_phase(Phase::Warmup);
    let warmup_passes = warmup(s, items, set)?;
    let loops = loops_for(per_item * items as f64, set.min_time);
    let (throughputs, times) = timed_runs(s, items, loops, set, on_phase)?;
    let summary = stats::summarize(&throughputs);
    let mut r = TransformResult::measured(params.clone(), &summary, throughputs, times);
    r.warmup_iterations = warmup_passes;
    r.slow_threshold_sec_per_item = Some(set.slow_threshold);
    r.slow_preflight_items = Some(set.preflight_items);
    r.preflight_sec_per_item = Some(per_item);
    r.output_shape = Some(checked.output_shape);
    r.output_dtype = Some(checked.output_dtype);
    Ok(r)
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
        Err(WorkerError::Timeout { .. }) if !set.disable_slow_skip => {
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
    Ok(rates.len() as u64)
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

fn timed_runs(
    s: &mut dyn Session,
    items: u64,
    loops: u64,
    set: &MicroSettings,
    on_phase: &mut dyn FnMut(Phase),
) -> Result<(Vec<f64>, Vec<f64>), WorkerError> {
    let mut throughputs = Vec::new();
    let mut times = Vec::new();
    let budget = match set.precision_target {
        Some(_) => policy::PRECISION_MAX_RUNS.max(set.num_runs),
        None => set.num_runs,
    };
    while (throughputs.len() as u64) < budget {
        on_phase(Phase::Run(throughputs.len() as u64 + 1));
        let ns = s.time(
            TimeRequest {
                start: 0,
                count: items,
                loops,
            },
            set.request_timeout,
        )?;
        let pass_sec = stats::mean(&ns.iter().map(|n| *n as f64 / 1e9).collect::<Vec<_>>());
        times.push(pass_sec);
        throughputs.push(items as f64 / pass_sec.max(1e-12));
        if throughputs.len() as u64 >= set.num_runs
            && precise_enough(&throughputs, set.precision_target)
        {
            break;
        }
    }
    Ok((throughputs, times))
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
