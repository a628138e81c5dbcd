//! One decoder of a decode run: its worker process in the decoder's environment, the untimed
//! pass that reads and checks every clip, its timed passes, and what ended it early (`unsupported`
//! with the worker's reason, or `error`).

use std::path::PathBuf;
use std::time::Duration;

use augbench_catalog::matrix::DecoderInfo;
use augbench_core::config::ThreadPolicy;
use augbench_core::plan::Job;
use augbench_core::results::Status;
use augbench_core::{Matrix, RunConfig, policy};
use indicatif::MultiProgress;

use super::verify;
use crate::worker::{self, Role, Target};
use augbench_host::child::CommandLine;
use augbench_protocol::client::{Worker, WorkerError};
use augbench_protocol::protocol::{
    DecodeItem, DecodeOpenRequest, DecodeOpenResponse, DecodeTimeRequest, FailureKind,
    HelloResponse, Request, TimeResponse,
};

/// A decoder's state: measuring, or stopped with a status and its reason.
pub struct Lane<'a> {
    pub job: &'a Job,
    pub info: Option<&'static DecoderInfo>,
    worker: Option<Worker>,
    pub hello: Option<HelloResponse>,
    pub open: Option<DecodeOpenResponse>,
    pub verification: String,
    /// Seconds of each timed pass over every clip, in run order.
    pub times: Vec<f64>,
    pub stopped: Option<(Status, String)>,
    /// The worker could not be had at all (environment or process): the job failed.
    pub failed_to_start: bool,
    timeout: Duration,
}

impl<'a> Lane<'a> {
    /// Starts the decoder's worker and reads every clip once, checking its frames
    /// (`verify`: against the synthetic frame markers).
    pub fn open(
        cfg: &RunConfig,
        job: &'a Job,
        items: &[DecodeItem],
        verify: bool,
        mp: &MultiProgress,
    ) -> Lane<'a> {
        let secs = cfg
            .execution
            .request_timeout_sec
            .unwrap_or(policy::REQUEST_TIMEOUT_SEC);
        let mut lane = Lane {
            job,
            info: Matrix::get().decoder(&job.library),
            worker: None,
            hello: None,
            open: None,
            verification: String::new(),
            times: Vec::new(),
            stopped: None,
            failed_to_start: false,
            timeout: Duration::from_secs_f64(secs),
        };
        let started =
            command(cfg, job, mp).and_then(|c| Ok(Worker::start(&c, policy::STDERR_TAIL_LINES)?));
        match started {
            Ok(w) => lane.worker = Some(w),
            Err(e) => {
                lane.failed_to_start = true;
                lane.stop(Status::Error, format!("{e:#}"));
                return lane;
            }
        }
        if let Err((status, why)) = lane.hello().and_then(|()| lane.check(items, verify)) {
            lane.stop(status, why);
        }
        lane
    }

    pub fn ready(&self) -> bool {
        self.stopped.is_none()
    }

    /// One timed pass over the first `count` clips: seconds.
    pub fn time(&mut self, count: u64) -> Result<f64, WorkerError> {
        let req = Request::DecodeTime(DecodeTimeRequest { count });
        let w = self.worker.as_mut().ok_or_else(|| lost(self.job))?;
        let r: TimeResponse = w.call(&req, self.timeout)?;
        Ok(r.ns.iter().sum::<u64>() as f64 / 1e9)
    }

    /// Ends the decoder here with `status` and its reason; its worker is closed.
    pub fn stop(&mut self, status: Status, why: String) {
        self.stopped.get_or_insert((status, why));
        if let Some(mut w) = self.worker.take() {
            w.close();
        }
    }

    pub fn close(&mut self) {
        if let Some(w) = self.worker.take() {
            w.shutdown();
        }
    }

    fn hello(&mut self) -> Result<(), (Status, String)> {
        let timeout = self.timeout;
        let w = self
            .worker
            .as_mut()
            .ok_or_else(|| (Status::Error, "no worker".into()))?;
        let hello: HelloResponse = w.call(&Request::Hello, timeout).map_err(classify)?;
        let want = self.info.map(|d| d.access.to_string());
        if hello.access != want {
            let why = format!(
                "the {} worker reads frames by `{}`, and specs/matrix.yaml says `{}`",
                self.job.library,
                hello.access.as_deref().unwrap_or("?"),
                want.unwrap_or_default()
            );
            return Err((Status::Error, why));
        }
        self.hello = Some(hello);
        Ok(())
    }

    /// The untimed pass: every clip read once, its shape checked by the worker and, on the
    /// synthetic videos, its frames checked against the sampled indices here.
    fn check(&mut self, items: &[DecodeItem], verify: bool) -> Result<(), (Status, String)> {
        let dir = verify.then(|| check_dir(&self.job.library));
        let req = Request::DecodeOpen(DecodeOpenRequest {
            items: items.to_vec(),
            verify: dir.as_deref().map(verify::region),
        });
        if let Some(d) = &dir {
            std::fs::create_dir_all(d)
                .map_err(|e| (Status::Error, format!("{}: {e}", d.display())))?;
        }
        let timeout = self.timeout;
        let w = self
            .worker
            .as_mut()
            .ok_or_else(|| (Status::Error, "no worker".into()))?;
        let open: Result<DecodeOpenResponse, _> = w.call(&req, timeout);
        let checked = match (&open, &dir) {
            (Ok(_), Some(d)) => Some(verify::check(d, items)),
            _ => None,
        };
        if let Some(d) = &dir {
            let _ = std::fs::remove_dir_all(d);
        }
        self.open = Some(open.map_err(classify)?);
        self.verification = match checked {
            Some(Ok(frames)) => format!("frame markers: all {frames} frames are the sampled indices"),
            Some(Err(why)) => return Err((Status::Error, format!("wrong frames: {why}"))),
            None => "shape only: clip_length frames × H × W × 3 uint8 (real files carry no frame markers)".into(),
        };
        Ok(())
    }
}

/// How to start the decode worker of `job`: its decoder in its group's environment, one thread.
fn command(cfg: &RunConfig, job: &Job, mp: &MultiProgress) -> anyhow::Result<CommandLine> {
    let refresh = cfg.execution.refresh_requirements.unwrap_or(true);
    let threads = ThreadPolicy::Single;
    worker::command(Target::of_job(job), Role::Decoder, threads, refresh, mp)
}

/// A failed request as a row status: the worker's `unsupported` stays unsupported.
fn classify(e: WorkerError) -> (Status, String) {
    match &e {
        WorkerError::Failed { failure, .. } if failure.kind == FailureKind::Unsupported => {
            (Status::Unsupported, failure.error.clone())
        }
        _ => (Status::Error, e.to_string()),
    }
}

fn lost(job: &Job) -> WorkerError {
    WorkerError::Died {
        label: format!("{} decoder", job.library),
        op: "decode_time".into(),
        status: "not running".into(),
        stderr_tail: String::new(),
    }
}

/// A fresh folder for one decoder's marker regions.
fn check_dir(decoder: &str) -> PathBuf {
    std::env::temp_dir().join(format!(
        "augbench-decode-check-{}-{decoder}",
        std::process::id()
    ))
}
