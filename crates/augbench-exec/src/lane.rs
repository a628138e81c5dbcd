//! A library's job under way, as both schedules drive it: its live worker (`job::Loaded`, restarted
//! for each process round or after a loss) tied to the `Recorder` that writes its result file,
//! and, in interleaved pipeline runs, the worker's decode-ceiling companion loader.

use augbench_catalog::registry::TransformSpec;
use augbench_core::Schedule;
use augbench_core::results::{Status, TransformResult};
use indicatif::MultiProgress;

use crate::job::{JobInput, Loaded, start_worker};
use crate::micro::MicroSettings;
use crate::pipeline::PipelineRuns;
use crate::record::Recorder;
use augbench_protocol::client::WorkerError;

/// A library's job under way: its worker and its results.
pub(crate) struct Lane<'a> {
    pub input: &'a JobInput<'a>,
    pub w: Loaded,
    pub rec: Recorder<'a>,
    /// Pipeline, interleaved: the decode ceiling's companion loader in this worker.
    pub companion: Companion,
    /// A/B micro runs: the CPU this lane's worker runs on, the same for both workers of a
    /// process pair (`pin_for`).
    pub pin: Option<usize>,
}

/// The CPU the workers of process `p` run on in an A/B micro run of Python variants on one
/// thread: both variants of a pair on the same one (their chunks alternate, so they never run at
/// once, and a CPU that is slower for minutes slows both), the CPUs taken in turn over the pairs.
/// `None` for every other run: a plain run compares different libraries, and pinned together each
/// runs after the other has had its core's caches (Pillow's JpegCompression read 10% slower,
/// docs/ab.md); native workers do not read it.
pub(crate) fn pin_for(input: &JobInput<'_>, p: u64) -> Option<usize> {
    use augbench_core::config::{Measure, ThreadPolicy};
    let (cfg, mode) = (input.cfg, input.job.mode);
    let micro = mode == augbench_core::Mode::Micro;
    let time = cfg.execution.measure != Some(Measure::Instructions);
    let python = input.job.backend == augbench_core::Backend::PythonWorker;
    let threads = cfg.execution.thread_policy;
    let single = threads.unwrap_or(augbench_core::policy::default_thread_policy(mode))
        == ThreadPolicy::Single;
    let ab = cfg.selection.variants.is_some();
    if !(ab && micro && time && python && single) {
        return None;
    }
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    Some((p % cpus as u64) as usize)
}

/// The decode ceiling's companion loader in a lane's worker (the ceiling slot): started at the
/// first row of a worker process and kept up across its transforms, so every round times the
/// ceiling beside the row (docs/pipeline.md). A new worker starts without one.
#[derive(Default)]
pub(crate) enum Companion {
    #[default]
    NotStarted,
    Up(Box<PipelineRuns>),
    /// It did not start in this worker (its own row says why); rows go on without it.
    Unavailable,
}

impl<'a> Lane<'a> {
    /// Starts the job's worker and writes its result file (with what `--resume` keeps).
    pub fn open(
        input: &'a JobInput<'a>,
        schedule: Schedule,
        mp: &MultiProgress,
    ) -> anyhow::Result<Lane<'a>> {
        let pin = pin_for(input, 0);
        let w = start_worker(input, mp, pin)?;
        let rec = Recorder::open(input, &w, schedule, mp)?;
        Ok(Lane {
            input,
            w,
            rec,
            companion: Companion::NotStarted,
            pin,
        })
    }

    /// The transforms this job measures: the plan's, or a spec file's.
    pub fn names(&self) -> Vec<String> {
        self.w
            .custom
            .clone()
            .unwrap_or_else(|| self.input.job.transforms.clone())
    }

    pub fn settings(&self) -> MicroSettings {
        MicroSettings::from_config(self.input.cfg, &self.w.device)
    }

    /// A fresh worker process (the next process round, or after a loss).
    pub fn restart(&mut self, mp: &MultiProgress) -> anyhow::Result<()> {
        self.w.worker.close();
        self.companion = Companion::NotStarted;
        self.w = start_worker(self.input, mp, self.pin)?;
        Ok(())
    }

    /// A lost worker costs the transform in flight: its `error` (with the worker's story) is
    /// recorded, then a fresh worker is started. The outer `Err` is a failed write; the inner
    /// one a worker that cannot start again, which stops this library alone.
    pub fn record_loss(
        &mut self,
        spec: &TransformSpec,
        e: WorkerError,
        mp: &MultiProgress,
    ) -> anyhow::Result<anyhow::Result<()>> {
        let params = serde_json::to_value(&spec.params).unwrap_or_default();
        let result = TransformResult::not_measured(Status::Error, params, e.to_string());
        self.rec.record(&spec.name, result)?;
        self.companion = Companion::NotStarted;
        Ok(start_worker(self.input, mp, self.pin).map(|w| self.w = w))
    }

    /// A worker that a preflight past its wall cap killed is replaced for the next transform.
    pub fn revive(&mut self, mp: &MultiProgress) -> anyhow::Result<()> {
        if !self.w.worker.is_alive() {
            self.companion = Companion::NotStarted;
            self.w = start_worker(self.input, mp, self.pin)?;
        }
        Ok(())
    }

    /// Whether this job's transform ended `ok` in the processes so far.
    pub fn measured(&self, name: &str) -> bool {
        self.rec
            .acc
            .get(name)
            .is_some_and(|r| r.status == Some(Status::Ok))
    }

    pub fn shutdown(&mut self) {
        self.w.worker.close();
    }
}

/// What `over_processes` sweeps: the names, over how many processes, with which bar, display
/// and stop flag.
pub(crate) struct Sweep<'a> {
    pub names: &'a [String],
    pub processes: u64,
    pub bar: &'a indicatif::ProgressBar,
    pub mp: &'a MultiProgress,
    pub stop: &'a std::sync::atomic::AtomicBool,
}

/// The per-job process loop of the sequential schedule, shared by timing (`runner`) and
/// instruction counts (`counts`): `processes` worker processes in turn, the lane restarted
/// between them (`started` runs after each restart), each taking `names` in order, a later
/// process only the names the first one measured. `step` measures one name in the current
/// process (`p`, from 0) and answers false when the user interrupted; so does a raised `stop`
/// between names. The bar advances per name and ends `done` or `interrupted`. Returns whether
/// the user interrupted.
pub(crate) fn over_processes(
    lane: &mut Lane<'_>,
    sweep: Sweep<'_>,
    mut started: impl FnMut(&mut Lane<'_>) -> anyhow::Result<()>,
    mut step: impl FnMut(&mut Lane<'_>, &str, u64) -> anyhow::Result<bool>,
) -> anyhow::Result<bool> {
    let Sweep {
        names,
        processes,
        bar,
        mp,
        stop,
    } = sweep;
    let mut interrupted = false;
    'processes: for p in 0..processes {
        if p > 0 {
            lane.restart(mp)?;
            started(lane)?;
        }
        for name in names {
            if p > 0 && !lane.measured(name) {
                continue;
            }
            if stop.load(std::sync::atomic::Ordering::SeqCst) || !step(lane, name, p)? {
                interrupted = true;
                break 'processes;
            }
            bar.inc(1);
        }
    }
    bar.finish_with_message(if interrupted { "interrupted" } else { "done" });
    Ok(interrupted)
}
