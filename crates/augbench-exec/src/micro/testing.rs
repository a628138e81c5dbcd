//! A scripted session for the methodology's unit tests: every item takes 1 ms (or `item_ns`),
//! plus `cold_ns` the first time it is seen; its check reports a strided output that forcing
//! spends three quarters of the time on, and it logs what it was asked.

use std::time::Duration;

use augbench_catalog::registry::{DtypeRule, OutputRule, TransformSpec};

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
    /// Nanoseconds an item takes (0: 1 ms).
    pub item_ns: u64,
    /// Nanoseconds an item takes on top the first time it is transformed.
    pub cold_ns: u64,
    /// Nanoseconds the very first call takes on top (what a transform pays once).
    pub once_ns: u64,
    seen: std::collections::BTreeSet<u64>,
}

impl Log {
    /// A session whose items take `item_ns`, plus `cold_ns` the first time.
    pub fn with(item_ns: u64, cold_ns: u64) -> Log {
        Log {
            item_ns,
            cold_ns,
            ..Log::default()
        }
    }

    fn pass_ns(&mut self, r: &TimeRequest) -> u64 {
        let item = if self.item_ns == 0 {
            1_000_000
        } else {
            self.item_ns
        };
        let cold = (r.start..r.start + r.count)
            .filter(|i| self.seen.insert(*i))
            .count() as u64;
        r.count * item + cold * self.cold_ns + std::mem::take(&mut self.once_ns)
    }
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
            targets_out: None,
        })
    }
    fn time_clocked(&mut self, r: TimeRequest, _: Duration) -> Result<TimeResponse, WorkerError> {
        self.times.push(r);
        let mut ns = vec![self.pass_ns(&r)];
        for _ in 1..r.loops {
            ns.push(self.pass_ns(&r));
        }
        Ok(TimeResponse {
            // The thread had the core 90% of the time.
            cpu_ns: ns.iter().map(|n| n / 10 * 9).collect(),
            ns,
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
        full_pass: augbench_core::config::FullPass::Auto,
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
