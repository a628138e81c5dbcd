//! The sequential schedule: one library's job on its own. Starts the library's worker, loads
//! media once, measures every transform with its mode's methodology (micro: all runs of a
//! transform in a row; pipeline: one loader per transform), and rewrites the job's result file
//! after each transform. A lost worker costs one transform (`error` with its stderr tail) and is
//! replaced.

use std::sync::atomic::AtomicBool;

use augbench_core::results::Status;
use augbench_core::{Mode, Schedule};
use indicatif::MultiProgress;

use crate::job::{JobInput, JobOutcome, not_in_registry, spec_for, stopped_by_user};
use crate::lane::{Lane, Sweep, over_processes};
use crate::pipeline::PipelineSettings;
use crate::progress::steps_bar;

pub fn run_job(
    input: &JobInput<'_>,
    mp: &MultiProgress,
    stop: &AtomicBool,
) -> anyhow::Result<JobOutcome> {
    let mut lane = Lane::open(input, Schedule::Sequential, mp)?;
    let processes = input.cfg.execution.processes.unwrap_or(1).max(1);
    let mut pending: Vec<String> = Vec::new();
    for t in lane.names() {
        match lane.rec.reusable(&t, processes) {
            Some(r) => lane.rec.keep(&t, r),
            None => pending.push(t),
        }
    }
    lane.rec.save()?;
    let label = progress_label(input);
    let bar = steps_bar(mp, label, pending.len() as u64 * processes);
    let sweep = Sweep {
        names: &pending,
        processes,
        bar: &bar,
        mp,
        stop,
    };
    let interrupted = over_processes(
        &mut lane,
        sweep,
        |_| Ok(()),
        |lane, name, _| measure_one(lane, name, &bar, mp, stop),
    )?;
    lane.shutdown();
    Ok(JobOutcome {
        results: lane.rec.close(),
        interrupted,
    })
}

/// Measures one transform, all its runs in a row, and records it. False when the user
/// interrupted (nothing is recorded for the transform in flight).
fn measure_one(
    lane: &mut Lane<'_>,
    name: &str,
    bar: &indicatif::ProgressBar,
    mp: &MultiProgress,
    stop: &AtomicBool,
) -> anyhow::Result<bool> {
    let Some(spec) = spec_for(&lane.w, name) else {
        lane.rec.record(name, not_in_registry(name))?;
        return Ok(true);
    };
    let mut on_phase = |ph: String| bar.set_message(format!("{name}: {ph}"));
    let measured = crate::underway::measure(lane, &spec, &mut on_phase);
    match measured {
        // Ctrl-C reaches the loader's workers too: an error then is the user's stop, not a result.
        Ok(r) if r.status == Some(Status::Error) && stopped_by_user(stop) => return Ok(false),
        Ok(r) => {
            lane.rec.record(name, r)?;
            lane.revive(mp)?;
        }
        Err(_) if stopped_by_user(stop) => return Ok(false),
        Err(e) => lane.record_loss(&spec, e, mp)??,
    }
    Ok(true)
}

/// The job's progress bar label: `Micro transforms (<library>, <scenario>)` or
/// `Pipeline transforms (<library>, <scope>, w=<workers>, b=<batch_size>)`.
fn progress_label(input: &JobInput<'_>) -> String {
    let job = input.job;
    if job.mode == Mode::Pipeline {
        let set = PipelineSettings::from_config(input.cfg, "cpu");
        return format!(
            "Pipeline transforms ({}, {}, w={}, b={})",
            job.library, set.scope, set.workers, set.batch_size
        );
    }
    format!("Micro transforms ({}, {})", job.library, job.scenario)
}
