//! A scripted session for the methodology's unit tests: every item takes 1 ms, its check reports a
//! strided output that forcing spends three quarters of the time on, and it logs what it was asked.

use std::time::Duration;

use augbench_core::registry::{DtypeRule, OutputRule, TransformSpec};

use super::session::Session;
use super::settings::{MicroSettings, WarmupSettings};
use augbench_protocol::client::WorkerError;
use augbench_protocol::protocol::{
    CheckResponse, PrepareRequest, PrepareResponse, TimeRequest, TimeResponse,
};

#[derive(Default)]
pub struct Log {
    pub prepares: usize,
    pub times: Vec<TimeRequest>,
}

impl Session for Log {
    fn prepare(&mut self, r: PrepareRequest, _: Duration) -> Result<PrepareResponse, WorkerError> {
        self.prepares += 1;
        Ok(PrepareResponse {
            transform: r.transform,
            regime: None,
            warnings: Vec::new(),
        })
    }
    fn check(&mut self, _: Duration) -> Result<CheckResponse, WorkerError> {
        Ok(CheckResponse {
            input_shape: vec![4, 4, 3],
            output_shape: vec![4, 4, 3],
            input_dtype: "uint8".into(),
            output_dtype: "uint8".into(),
            layout: "HWC".into(),
            output_contiguous: Some(false),
            force_share: Some(0.75),
        })
    }
    fn time_clocked(&mut self, r: TimeRequest, _: Duration) -> Result<TimeResponse, WorkerError> {
        self.times.push(r);
        Ok(TimeResponse {
            ns: vec![r.count * 1_000_000; r.loops as usize],
            // The thread had the core 90% of the time.
            cpu_ns: vec![r.count * 900_000; r.loops as usize],
        })
    }
}

pub fn ws() -> WarmupSettings {
    WarmupSettings {
        window: 3,
        threshold: 0.05,
        max_passes: 100,
        min_windows: 2,
        max_seconds: 10.0,
    }
}

pub fn settings(num_runs: u64) -> MicroSettings {
    MicroSettings {
        num_runs,
        min_time: 0.01,
        slow_threshold: 1.0,
        preflight_items: 2,
        disable_slow_skip: false,
        precision_target: None,
        request_timeout: Duration::from_secs(1),
        device: "cpu".into(),
        cpu_clock: true,
        batch: None,
        warmup: ws(),
    }
}

pub fn flip() -> TransformSpec {
    TransformSpec {
        name: "HorizontalFlip".into(),
        params: Default::default(),
        output: OutputRule::Same,
        dtype: DtypeRule::Same,
    }
}
