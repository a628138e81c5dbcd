//! A transform under way in either mode, as both schedules drive it: set up in a lane's worker
//! (micro: contract, preflight, warmup; pipeline: recipe, preflight, loader start), then timed
//! runs one call at a time (micro passes or pipeline windows), then its result. Also the decode
//! ceiling's companion loader that interleaved pipeline rounds time beside each row.

use augbench_catalog::registry::TransformSpec;
use augbench_core::Mode;
use augbench_core::results::TransformResult;

use crate::lane::{Companion, Lane};
use crate::micro::{self, Measuring, Phase, Started};
use crate::pipeline::{self, PipelineRuns, PipelineSettings, PipelineStarted};
use crate::time_split::{self, PhaseClock};
use augbench_protocol::client::WorkerError;
use augbench_protocol::protocol::LoaderSlot;

/// The time split's part for timed runs (a pipeline's include its rewarm batches).
const TIMED: &str = augbench_core::time_split::MEASUREMENT_PARTS[0];

pub(crate) enum Underway {
    Micro(Measuring),
    Pipeline(PipelineRuns),
}

/// What setting a transform up gave: its final result, or runs to take.
pub(crate) enum Begun {
    Finished(Box<TransformResult>),
    Underway(Underway),
}

/// Sets `spec` up in the lane's worker; `on_phase` hears each step's name.
pub(crate) fn begin(
    lane: &mut Lane<'_>,
    spec: &TransformSpec,
    on_phase: &mut dyn FnMut(String),
) -> Result<Begun, WorkerError> {
    // Each set-up phase's time goes to the run's time split under its name, and to the row's.
    let library = lane.input.job.library.clone();
    time_split::in_row(&library, &spec.name, || {
        let mut clock = PhaseClock::new("prepare");
        let begun = {
            let mut timed = |ph: String| {
                clock.enter(&ph);
                on_phase(ph);
            };
            set_up(lane, spec, &mut timed)
        };
        clock.finish();
        begun
    })
}

fn set_up(
    lane: &mut Lane<'_>,
    spec: &TransformSpec,
    on_phase: &mut dyn FnMut(String),
) -> Result<Begun, WorkerError> {
    let items = lane.w.load.count;
    if lane.input.job.mode == Mode::Pipeline {
        let set = pipeline_settings(lane);
        return Ok(
            match pipeline::start(
                &mut lane.w.worker,
                spec,
                LoaderSlot::Row,
                items,
                &set,
                on_phase,
            )? {
                PipelineStarted::Finished(r) => Begun::Finished(r),
                PipelineStarted::Underway(m) => Begun::Underway(Underway::Pipeline(m)),
            },
        );
    }
    let set = lane.settings();
    let mut phase = |ph| on_phase(phase_label(ph));
    Ok(
        match micro::start(&mut lane.w.worker, spec, items, &set, &mut phase)? {
            Started::Finished(r) => Begun::Finished(r),
            Started::Measuring(m) => Begun::Underway(Underway::Micro(m)),
        },
    )
}

/// Starts the decode ceiling's companion loader in the lane's worker unless it is up (then only
/// its earlier windows are dropped) or did not start already in this worker. `Err` is a lost
/// worker.
pub(crate) fn ensure_companion(
    lane: &mut Lane<'_>,
    on_phase: &mut dyn FnMut(String),
) -> Result<(), WorkerError> {
    match &mut lane.companion {
        Companion::Up(c) => {
            c.take_throughputs(); // an earlier transform's, whose row did not take them
            return Ok(());
        }
        Companion::Unavailable => return Ok(()),
        Companion::NotStarted => {}
    }
    let ceiling = &augbench_catalog::recipe::Recipe::get().ceiling;
    let Some(spec) = crate::job::spec_for(&lane.w, ceiling) else {
        lane.companion = Companion::Unavailable;
        return Ok(());
    };
    let items = lane.w.load.count;
    let set = pipeline_settings(lane);
    on_phase(format!("{ceiling} companion"));
    let w = &mut lane.w.worker;
    let started = time_split::part("ceiling companion start", || {
        pipeline::start(w, &spec, LoaderSlot::Ceiling, items, &set, on_phase)
    });
    lane.companion = match started? {
        PipelineStarted::Underway(m) => Companion::Up(Box::new(m)),
        PipelineStarted::Finished(_) => Companion::Unavailable,
    };
    Ok(())
}

/// One window of the lane's companion (rewarmed first: it sat idle while the rest ran). A window
/// that fails ends the companion (its loader is stopped) and is returned; the rows go on without
/// it. `Err` is a lost worker.
pub(crate) fn companion_window(
    lane: &mut Lane<'_>,
) -> Result<Result<(), TransformResult>, WorkerError> {
    let set = pipeline_settings(lane);
    let Lane { w, companion, .. } = lane;
    let Companion::Up(c) = companion else {
        return Ok(Ok(()));
    };
    let ran = time_split::part(TIMED, || c.run(&mut w.worker, &set, true))?;
    if ran.is_err()
        && let Companion::Up(c) = std::mem::replace(companion, Companion::Unavailable)
    {
        c.stop(&mut w.worker, &set);
    }
    Ok(ran)
}

fn pipeline_settings(lane: &Lane<'_>) -> PipelineSettings {
    PipelineSettings::for_job(lane.input, &lane.w.device)
}

impl Underway {
    pub fn is_pipeline(&self) -> bool {
        matches!(self, Underway::Pipeline(_))
    }

    pub fn runs(&self) -> u64 {
        match self {
            Underway::Micro(m) => m.runs(),
            Underway::Pipeline(m) => m.runs(),
        }
    }

    /// Items per second of each run so far.
    pub fn throughputs(&self) -> Vec<f64> {
        match self {
            Underway::Micro(m) => m.throughputs().to_vec(),
            Underway::Pipeline(m) => m.throughputs(),
        }
    }

    pub fn wants_more(&self, lane: &Lane<'_>) -> bool {
        match self {
            Underway::Micro(m) => m.wants_more(&lane.settings()),
            Underway::Pipeline(m) => m.wants_more(&pipeline_settings(lane)),
        }
    }

    /// One timed run. `shared`: other libraries ran since this one's last run, so it is rewarmed
    /// first (micro: an untimed pass over the warmup subset; pipeline: the loader's refilled queue
    /// drained). A failed request is the transform's final result; a lost worker is `Err`.
    pub fn run(
        &mut self,
        lane: &mut Lane<'_>,
        transform: &str,
        shared: bool,
    ) -> Result<Result<(), TransformResult>, WorkerError> {
        let library = lane.input.job.library.clone();
        time_split::in_row(&library, transform, || self.run_in_row(lane, shared))
    }

    fn run_in_row(
        &mut self,
        lane: &mut Lane<'_>,
        shared: bool,
    ) -> Result<Result<(), TransformResult>, WorkerError> {
        let items = lane.w.load.count;
        match self {
            Underway::Pipeline(m) => {
                let set = pipeline_settings(lane);
                time_split::part(TIMED, || m.run(&mut lane.w.worker, &set, shared))
            }
            Underway::Micro(m) => {
                let set = lane.settings();
                let worker = &mut lane.w.worker;
                if shared
                    && let Err(failed) =
                        time_split::part("rewarm", || m.rewarm(worker, items, &set))?
                {
                    return Ok(Err(failed));
                }
                time_split::part(TIMED, || m.run(worker, items, &set))
            }
        }
    }

    /// The micro transform under way, for runs taken in chunks (`None` for a pipeline row).
    pub fn micro(&self) -> Option<&Measuring> {
        match self {
            Underway::Micro(m) => Some(m),
            Underway::Pipeline(_) => None,
        }
    }

    /// One chunk of a micro run (items `start..start + count`), timed like a run; a pipeline row
    /// has no chunks. Failures as in `run`.
    pub fn run_chunk(
        &mut self,
        lane: &mut Lane<'_>,
        transform: &str,
        (start, count): (u64, u64),
    ) -> Result<Result<(), TransformResult>, WorkerError> {
        let Underway::Micro(m) = self else {
            return Ok(Ok(()));
        };
        let library = lane.input.job.library.clone();
        let set = lane.settings();
        let worker = &mut lane.w.worker;
        time_split::in_row(&library, transform, || {
            time_split::part(TIMED, || m.run_chunk(worker, start, count, &set))
        })
    }

    /// Ends a micro run taken in chunks over `items` items.
    pub fn close_run(&mut self, items: u64) {
        if let Underway::Micro(m) = self {
            m.close_run(items);
        }
    }

    /// The transform's result (a pipeline's loader is ended first).
    pub fn finish(self, lane: &mut Lane<'_>) -> TransformResult {
        match self {
            Underway::Micro(m) => m.finish(),
            Underway::Pipeline(m) => {
                let set = pipeline_settings(lane);
                m.finish(&mut lane.w.worker, &set)
            }
        }
    }
}

/// Sets `spec` up and takes all its runs in a row (the sequential schedule).
pub(crate) fn measure(
    lane: &mut Lane<'_>,
    spec: &TransformSpec,
    on_phase: &mut dyn FnMut(String),
) -> Result<TransformResult, WorkerError> {
    let mut m = match begin(lane, spec, on_phase)? {
        Begun::Finished(r) => return Ok(*r),
        Begun::Underway(m) => m,
    };
    while m.wants_more(lane) {
        on_phase(format!("run {}", m.runs() + 1));
        if let Err(r) = m.run(lane, &spec.name, false)? {
            return Ok(r);
        }
    }
    Ok(m.finish(lane))
}

/// The progress display's word for a phase of the methodology.
pub(crate) fn phase_label(ph: Phase) -> String {
    match ph {
        Phase::Check => "check".to_string(),
        Phase::Preflight => "preflight".to_string(),
        Phase::Warmup => "warmup".to_string(),
        Phase::Run(i) => format!("run {i}"),
    }
}
