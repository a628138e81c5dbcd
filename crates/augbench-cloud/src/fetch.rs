//! `augbench cloud fetch`: mirror the run's task folders from its store (GCS or the shared folder)
//! into `<output>/cloud/tasks/` and merge them (`merge` for a run config, `production_merge` for
//! a production config); the engine's task states; resubmitting ended tasks without `DONE.json`
//! alone (`resubmit_failed`: Slurm's same array indices, a Batch job of their own).

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use anyhow::Context;
use augbench_core::{RunConfig, naming};

pub use crate::merge::{FetchReport, Missing, merge};
use crate::record::{CloudRun, JobRecord};
use crate::request::Kind;
use crate::task::TaskStatus;

/// Fetches and merges; `states` are the Batch task states where gcloud answered.
pub fn fetch(out: &Path, run: &CloudRun) -> anyhow::Result<FetchReport> {
    let local = naming::cloud_dir(out).join("tasks");
    std::fs::create_dir_all(&local).with_context(|| format!("creating {}", local.display()))?;
    let store = run.engine().store();
    store
        .mirror(&format!("{}/tasks", run.run_uri), &local)
        .context("fetching the run's task folders")?;
    let cfg_path = local.join("..").join(naming::RESOLVED_CONFIG_FILE);
    store
        .get(
            &format!("{}/bundle/{}", run.run_uri, naming::RESOLVED_CONFIG_FILE),
            &cfg_path,
        )
        .context("fetching the run's resolved config")?;
    let states = task_states(run);
    if run.kind == Kind::Production {
        let p = augbench_core::production::load(&cfg_path)?;
        return crate::production_merge::merge(out, run, &p, &states);
    }
    let cfg = RunConfig::load(&cfg_path)?;
    merge(out, run, &cfg, &states)
}

/// Task states by index (a resubmission's over the job the task failed in), or none where the
/// engine does not answer (the files still decide).
pub fn task_states(run: &CloudRun) -> BTreeMap<u64, TaskStatus> {
    crate::follow::newest_states(run, run.engine().as_ref()).unwrap_or_default()
}

/// Submits each ended task without `DONE.json` again, alone (one new job per job they failed
/// in), and records the new jobs in the run record; returns (task index, new job id).
pub fn resubmit_failed(
    out: &Path,
    run: &mut CloudRun,
    missing: &[Missing],
) -> anyhow::Result<Vec<(u64, String)>> {
    let engine = run.engine();
    let cloud_dir = naming::cloud_dir(out);
    let ended: HashSet<u64> = missing
        .iter()
        .filter(|m| m.ended)
        .map(|m| m.index)
        .collect();
    let mut by_job: BTreeMap<String, (crate::job::JobRef, Vec<_>)> = BTreeMap::new();
    for (job, shard) in run.shards() {
        if ended.contains(&shard.index) {
            let entry = by_job
                .entry(job.name.clone())
                .or_insert((job.clone(), Vec::new()));
            entry.1.push(shard.clone());
        }
    }
    let mut sent = Vec::new();
    for (job, shards) in by_job.into_values() {
        let indices: Vec<u64> = shards.iter().map(|s| s.index).collect();
        let new = engine.resubmit(&job, &indices, &cloud_dir)?;
        let id = new.id.clone().unwrap_or_else(|| new.name.clone());
        sent.extend(indices.iter().map(|i| (*i, id.clone())));
        run.jobs.push(JobRecord { job: new, shards });
    }
    run.write(out)?;
    Ok(sent)
}
