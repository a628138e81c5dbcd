//! Following a submitted run on either engine: task states (`augbench cloud status`), waiting
//! with a labelled progress bar and the log tail of each task that fails (`--gcp-attached`), and
//! `cancel`.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use augbench_core::policy;
use augbench_host::child::last_lines;
use indicatif::{ProgressBar, ProgressStyle};

use crate::record::CloudRun;
use crate::task::TaskStatus;

/// A job's state and its tasks' states.
#[derive(Debug, Clone)]
pub struct JobStatus {
    pub name: String,
    pub state: String,
    pub tasks: Vec<TaskStatus>,
}

pub fn status(run: &CloudRun) -> anyhow::Result<Vec<JobStatus>> {
    let engine = run.engine();
    run.jobs
        .iter()
        .map(|j| {
            Ok(JobStatus {
                name: j.job.name.clone(),
                state: engine.job_state(&j.job)?,
                tasks: engine.tasks(&j.job)?,
            })
        })
        .collect()
}

/// Counts of task states, e.g. `3 SUCCEEDED, 1 RUNNING`.
pub fn summary(tasks: &[TaskStatus]) -> String {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for t in tasks {
        *counts.entry(t.state.as_str()).or_default() += 1;
    }
    let parts: Vec<String> = counts.iter().map(|(s, n)| format!("{n} {s}")).collect();
    parts.join(", ")
}

/// The last lines of a task's log in the store (its own, else the engine's capture), or why
/// there is none.
pub fn log_tail(run: &CloudRun, index: u64) -> String {
    let store = run.engine().store();
    let uri = format!("{}/tasks/{index}/task.log", run.run_uri);
    let captured = format!("{}/tasks/{index}/slurm.out", run.run_uri);
    match store.read(&uri).or_else(|_| store.read(&captured)) {
        Ok(text) => last_lines(&text, policy::STDERR_TAIL_LINES),
        Err(_) => format!("(no log at {uri})"),
    }
}

/// Waits until every task has finished, drawing a progress bar and printing the log tail of
/// each task as it fails. Returns the final task states.
pub fn wait(run: &CloudRun) -> anyhow::Result<BTreeMap<u64, TaskStatus>> {
    let engine = run.engine();
    let total = run.shards().len();
    let bar = ProgressBar::new(total as u64);
    bar.set_style(
        ProgressStyle::with_template(
            "{prefix} [{bar:30}] {pos}/{len} tasks finished · {msg} ({elapsed})",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    bar.set_prefix(format!("Run {}", run.run_name));
    let mut reported = BTreeSet::new();
    loop {
        let tasks: Vec<TaskStatus> = newest_states(run, engine.as_ref())?.into_values().collect();
        for t in tasks.iter().filter(|t| t.state == "FAILED") {
            if reported.insert(t.index) {
                bar.suspend(|| {
                    eprintln!("task {} FAILED; its log ends with:", t.index);
                    eprintln!("{}", log_tail(run, t.index));
                });
            }
        }
        let done = tasks.iter().filter(|t| t.finished()).count();
        bar.set_position(done as u64);
        bar.set_message(summary(&tasks));
        if tasks.len() >= total && done == tasks.len() {
            bar.finish();
            return Ok(tasks.into_iter().map(|t| (t.index, t)).collect());
        }
        std::thread::sleep(Duration::from_secs(engine.poll_sec()));
    }
}

/// Each task's state from the newest job that runs it (a resubmission over the job it failed in).
pub fn newest_states(
    run: &CloudRun,
    engine: &dyn crate::engine::Engine,
) -> anyhow::Result<BTreeMap<u64, TaskStatus>> {
    let mut states = BTreeMap::new();
    for j in &run.jobs {
        let mut ours: BTreeSet<u64> = j.shards.iter().map(|s| s.index).collect();
        for t in engine.tasks(&j.job)? {
            if ours.remove(&t.index) {
                states.insert(t.index, t);
            }
        }
        // A Batch retry job whose tasks the engine lists not yet (queued) owns its shards all the
        // same: pending, not the older job's failure (so not resubmitted again).
        for index in ours.into_iter().filter(|_| j.job.task_shards.is_some()) {
            let pending = TaskStatus {
                index,
                state: "PENDING".into(),
                events: vec!["resubmitted; the engine lists no task for it yet".into()],
            };
            states.insert(index, pending);
        }
    }
    Ok(states)
}

/// Cancels every job of the run (Batch stops its tasks and deletes its VMs; Slurm `scancel`).
pub fn cancel(run: &CloudRun) -> anyhow::Result<()> {
    let engine = run.engine();
    for j in &run.jobs {
        engine.cancel(&j.job)?;
    }
    Ok(())
}
