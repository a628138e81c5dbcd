//! The micro methodology against a scripted session (like hyperfine's mock executor): each test
//! fixes what the "worker" answers and checks the policy decisions — slow preflight, unsupported,
//! contract violations, warmup, runs and the precision target.

use std::collections::BTreeMap;
use std::time::Duration;

use augbench_catalog::registry::{DtypeRule, OutputRule, TransformSpec};
use augbench_core::results::Status;
use augbench_exec::micro::{MicroSettings, Session, WarmupSettings, measure};
use augbench_protocol::client::WorkerError;
use augbench_protocol::protocol::{
    CheckResponse, Failure, FailureKind, PrepareRequest, PrepareResponse, TimeRequest, TimeResponse,
};

/// A worker whose every loop over `count` items takes `ns_per_item × count` (plus a jitter pattern).
struct Scripted {
    ns_per_item: u64,
    jitter: Vec<i64>,
    calls: usize,
    unsupported: bool,
    output_shape: Vec<u64>,
    time_requests: Vec<TimeRequest>,
}

impl Scripted {
    fn new(ns_per_item: u64) -> Self {
        Scripted {
            ns_per_item,
            jitter: vec![0],
            calls: 0,
            unsupported: false,
            output_shape: vec![375, 500, 3],
            time_requests: Vec::new(),
        }
    }
}

impl Session for Scripted {
    fn prepare(
        &mut self,
        req: PrepareRequest,
        _: Duration,
    ) -> Result<PrepareResponse, WorkerError> {
        if self.unsupported {
            let failure = Failure {
                error: "no such op".into(),
                kind: FailureKind::Unsupported,
                detail: String::new(),
            };
            return Err(WorkerError::Failed {
                label: "scripted".into(),
                failure,
            });
        }
        Ok(PrepareResponse {
            transform: req.transform,
            regime: None,
            warnings: Vec::new(),
        })
    }
    fn check(&mut self, _: Duration) -> Result<CheckResponse, WorkerError> {
        Ok(CheckResponse {
            input_shape: vec![375, 500, 3],
            output_shape: self.output_shape.clone(),
            input_dtype: "uint8".into(),
            output_dtype: "uint8".into(),
            layout: "HWC".into(),
            ..Default::default()
        })
    }
    fn time_clocked(&mut self, req: TimeRequest, _: Duration) -> Result<TimeResponse, WorkerError> {
        self.time_requests.push(req);
        let base = (self.ns_per_item * req.count) as i64;
        let ns = (0..req.loops)
            .map(|_| {
                self.calls += 1;
                let j = self.jitter[self.calls % self.jitter.len()];
                (base + base * j / 100).max(1) as u64
            })
            .collect();
        // A worker that predates the CPU clock: the row stays wall-clock only.
        Ok(TimeResponse {
            ns,
            cpu_ns: Vec::new(),
        })
    }
}

fn spec(output: OutputRule) -> TransformSpec {
    TransformSpec {
        name: "HorizontalFlip".into(),
        params: BTreeMap::new(),
        output,
        dtype: DtypeRule::Same,
    }
}

fn settings() -> MicroSettings {
    MicroSettings {
        num_runs: 5,
        min_time: 0.01,
        slow_threshold: 0.05,
        preflight_items: 10,
        disable_slow_skip: false,
        precision_target: None,
        request_timeout: Duration::from_secs(10),
        device: "cpu".into(),
        cpu_clock: true,
        batch: None,
        warmup: WarmupSettings {
            window: 5,
            threshold: 0.05,
            max_passes: 1000,
            min_windows: 2,
            max_seconds: 5.0,
            full_pass: augbench_core::policy::WARMUP_FULL_PASS,
        },
    }
}

#[test]
fn steady_transform_is_measured_with_expected_throughput() {
    let mut s = Scripted::new(100_000); // 0.1 ms per item → 10 000 items/s
    let r = measure(
        &mut s,
        &spec(OutputRule::Same),
        100,
        &settings(),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(r.status, Some(Status::Ok));
    assert_eq!(r.num_successful_runs, 5);
    let median = r.median_throughput.unwrap();
    assert!((median - 10_000.0).abs() < 1.0, "{median}");
    assert!(r.warmup_iterations >= 10, "two windows of warmup at least");
    // one value lasts ≥ min_time: 100 items × 0.1 ms = 10 ms per pass → 1 loop.
    assert!(
        s.time_requests
            .iter()
            .filter(|t| t.count == 100)
            .all(|t| t.loops == 1)
    );
}

#[test]
fn fast_transform_loops_until_min_time() {
    let mut s = Scripted::new(1_000); // 1 µs per item, pass of 100 items = 0.1 ms
    measure(
        &mut s,
        &spec(OutputRule::Same),
        100,
        &settings(),
        &mut |_| {},
    )
    .unwrap();
    let run = s.time_requests.iter().rfind(|t| t.count == 100).unwrap();
    assert_eq!(run.loops, 100, "0.01 s / 0.1 ms");
}

#[test]
fn slow_transform_stops_after_preflight() {
    let mut s = Scripted::new(60_000_000); // 60 ms per item ≥ 50 ms threshold
    let r = measure(
        &mut s,
        &spec(OutputRule::Same),
        100,
        &settings(),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(r.status, Some(Status::Slow));
    assert!(
        r.throughputs.is_empty() && r.median_throughput.is_none(),
        "no fake percentiles"
    );
    // The preflight times its first item, then the rest of its items (the warmup subset's
    // cold pass); nothing runs after it.
    assert_eq!(s.time_requests.len(), 2, "only the preflight ran");
    assert!((r.preflight_sec_per_item.unwrap() - 0.06).abs() < 1e-9);
}

#[test]
fn disable_slow_skip_measures_slow_transforms() {
    let mut s = Scripted::new(60_000_000);
    let mut set = settings();
    set.disable_slow_skip = true;
    set.num_runs = 2;
    set.warmup.max_passes = 1;
    let r = measure(&mut s, &spec(OutputRule::Same), 3, &set, &mut |_| {}).unwrap();
    assert_eq!(r.status, Some(Status::Ok));
}

#[test]
fn unsupported_is_recorded_with_reason() {
    let mut s = Scripted::new(1000);
    s.unsupported = true;
    let r = measure(
        &mut s,
        &spec(OutputRule::Same),
        10,
        &settings(),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(r.status, Some(Status::Unsupported));
    assert!(!r.supported);
    assert_eq!(r.reason.as_deref(), Some("no such op"));
}

#[test]
fn contract_violation_is_an_error_and_nothing_is_timed() {
    let mut s = Scripted::new(1000);
    s.output_shape = vec![224, 224, 3];
    let r = measure(
        &mut s,
        &spec(OutputRule::Same),
        10,
        &settings(),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(r.status, Some(Status::Error));
    assert_eq!(
        r.error_kind.as_deref(),
        Some(augbench_core::results::CONTRACT_ERROR)
    );
    let reason = r.reason.unwrap();
    assert!(reason.starts_with("contract: output shape"), "{reason}");
    assert!(s.time_requests.is_empty());
}

#[test]
fn precision_target_adds_runs_until_the_interval_is_narrow() {
    let mut noisy = Scripted::new(100_000);
    noisy.jitter = vec![0, 8, -6, 3, -2, 7, -8, 1];
    let mut set = settings();
    set.num_runs = 3;
    // The figure's rerun interval is never narrower than the drift floor: the tightest target
    // that can be reached.
    set.precision_target = Some(augbench_core::policy::RERUN_DRIFT_FLOOR);
    let r = measure(&mut noisy, &spec(OutputRule::Same), 100, &set, &mut |_| {}).unwrap();
    assert!(
        r.num_successful_runs > 3,
        "runs were added: {}",
        r.num_successful_runs
    );
    let mut steady = Scripted::new(100_000);
    let r = measure(&mut steady, &spec(OutputRule::Same), 100, &set, &mut |_| {}).unwrap();
    assert_eq!(
        r.num_successful_runs, 3,
        "a steady sample meets the target at once"
    );
}
