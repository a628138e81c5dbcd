//! The micro methodology's settings, read from a resolved config: runs, minimum time, the slow
//! preflight, the precision target, timeouts, the batched regime and the warmup rule.

use std::time::Duration;

use augbench_core::RunConfig;
use augbench_core::policy;

#[derive(Debug, Clone, PartialEq)]
pub struct WarmupSettings {
    pub window: u64,
    pub threshold: f64,
    pub max_passes: u64,
    pub min_windows: u64,
    pub max_seconds: f64,
    pub full_pass: augbench_core::config::FullPass,
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
                full_pass: w.full_pass.unwrap_or(policy::WARMUP_FULL_PASS),
            },
        }
    }
}
