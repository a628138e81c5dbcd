//! The micro methodology (methodology.md), on the coordinator side: the settings it reads from the
//! resolved config, the `Session` it talks to a worker through, and `measure` (all runs in a
//! row). Setup (contract check, preflight, warmup) is in `setup`; timed runs in `measuring`.

mod measuring;
mod setup;
#[cfg(test)]
pub(crate) mod testing;

pub use measuring::Measuring;
pub(crate) use setup::slow_result;
pub use setup::{Started, loops_for, start, warmed_up};

use std::time::Duration;

use augbench_core::RunConfig;
use augbench_core::policy;
use augbench_core::registry::TransformSpec;
use augbench_core::results::{Status, TransformResult};

use augbench_protocol::client::{Worker, WorkerError};
use augbench_protocol::protocol::{
    CheckResponse, FailureKind, PrepareRequest, PrepareResponse, Request, TimeRequest, TimeResponse,
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
    fn time(&mut self, req: TimeRequest, timeout: Duration) -> Result<Vec<u64>, WorkerError> {
        Ok(self.time_clocked(req, timeout)?.ns)
    }
    /// Wall and thread-CPU nanoseconds per loop (`cpu_ns` empty where the worker has no CPU clock).
    fn time_clocked(
        &mut self,
        req: TimeRequest,
        timeout: Duration,
    ) -> Result<TimeResponse, WorkerError>;
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
    fn time_clocked(
        &mut self,
        req: TimeRequest,
        timeout: Duration,
    ) -> Result<TimeResponse, WorkerError> {
        self.call(&Request::Time(req), timeout)
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
    /// Whether runs record the timing thread's CPU time: only where that one thread does all the
    /// work (`thread_policy: single` on cpu; docs/methodology.md, "Thread CPU time").
    pub cpu_clock: bool,
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
            precision_target: e.precision,
            // Validation keeps the timeout positive and finite; never panic if it is not.
            request_timeout: Duration::try_from_secs_f64(timeout)
                .unwrap_or(Duration::from_secs_f64(policy::REQUEST_TIMEOUT_SEC)),
            device: device.to_string(),
            cpu_clock: device == "cpu"
                && e.thread_policy
                    .unwrap_or(augbench_core::config::ThreadPolicy::Single)
                    == augbench_core::config::ThreadPolicy::Single,
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
        if let Err(r) = m.run(s, items, set)? {
            return Ok(r);
        }
    }
    Ok(m.finish())
}

/// Maps a failed request to an `unsupported`/`error` result (the error named by its kind, a
/// `contract` reason marked as such); a lost worker stays an `Err`.
pub(crate) fn settle<T>(
    r: Result<T, WorkerError>,
    params: &serde_json::Value,
) -> Result<Result<T, TransformResult>, WorkerError> {
    match r {
        Ok(v) => Ok(Ok(v)),
        Err(WorkerError::Failed { failure, .. }) => {
            let reason = match failure.detail.trim() {
                "" => failure.error,
                d => format!("{}\n{}", failure.error, d),
            };
            Ok(Err(match failure.kind {
                FailureKind::Unsupported => {
                    TransformResult::not_measured(Status::Unsupported, params.clone(), reason)
                }
                kind => TransformResult::failed(params.clone(), kind.name(), reason),
            }))
        }
        Err(e) => Err(e),
    }
}

pub(crate) fn prepare_request(
    spec: &TransformSpec,
    params: &serde_json::Value,
    set: &MicroSettings,
) -> PrepareRequest {
    PrepareRequest {
        transform: spec.name.clone(),
        params: params.clone(),
        device: set.device.clone(),
        batch: set.batch,
        seed: None,
    }
}
