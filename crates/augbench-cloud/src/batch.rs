//! The Google Cloud Batch engine: what it alone does, through `gcloud` (submit the job JSON,
//! describe the job, list its tasks, delete it). Batch retries preempted tasks itself; failed
//! tasks are resubmitted as a job of their own, whose tasks are told their shards.

use std::path::Path;

use anyhow::Context;
use augbench_host::fsutil::write_atomic;
use serde_json::Value;

use crate::engine::Engine;
use crate::gcloud;
use crate::job::{JobRef, JobSpec, job_file};
use crate::store::Store;
use crate::task::TaskStatus;

pub struct Batch;

impl Engine for Batch {
    fn store(&self) -> Store {
        Store::Gcs
    }

    fn poll_sec(&self) -> u64 {
        augbench_core::policy::CLOUD_POLL_SEC
    }

    fn preflight(&self, _cloud: &augbench_core::config::CloudConfig) -> anyhow::Result<()> {
        Ok(())
    }

    fn submit(&self, job: &JobSpec, cloud_dir: &Path) -> anyhow::Result<JobRef> {
        gcloud::submit(&job.job, &job_file(cloud_dir, &job.job.name))?;
        Ok(job.job.clone())
    }

    fn job_state(&self, job: &JobRef) -> anyhow::Result<String> {
        Ok(gcloud::job_state(job)?)
    }

    fn tasks(&self, job: &JobRef) -> anyhow::Result<Vec<TaskStatus>> {
        let mut tasks = gcloud::tasks(job)?;
        if let Some(shards) = &job.task_shards {
            for t in &mut tasks {
                t.index = shards.get(t.index as usize).copied().unwrap_or(t.index);
            }
        }
        Ok(tasks)
    }

    fn cancel(&self, job: &JobRef) -> anyhow::Result<()> {
        Ok(gcloud::delete(job)?)
    }

    /// A job of its own for `indices`: the first job's JSON with one task per shard, each told
    /// its shard (`AUGBENCH_SHARDS`; Batch numbers a job's tasks from 0), under the first free
    /// name `<job>-r<n>`.
    fn resubmit(&self, job: &JobRef, indices: &[u64], cloud_dir: &Path) -> anyhow::Result<JobRef> {
        let first = job_file(cloud_dir, &job.name);
        let text = std::fs::read_to_string(&first)
            .with_context(|| format!("reading the job file {}", first.display()))?;
        let mut json: Value = serde_json::from_str(&text)
            .with_context(|| format!("{} is not a Batch job's JSON", first.display()))?;
        let list: Vec<String> = indices.iter().map(u64::to_string).collect();
        let group = &mut json["taskGroups"][0];
        group["taskCount"] = Value::from(indices.len() as u64);
        group["taskSpec"]["environment"]["variables"]["AUGBENCH_SHARDS"] = list.join(",").into();
        let name = (1..)
            .map(|n| retry_name(&job.name, n))
            .find(|n| !job_file(cloud_dir, n).exists())
            .unwrap_or_default();
        let path = job_file(cloud_dir, &name);
        write_atomic(&path, serde_json::to_string_pretty(&json)?.as_bytes())?;
        let new = JobRef {
            name,
            id: None,
            task_shards: Some(indices.to_vec()),
            ..job.clone()
        };
        gcloud::submit(&new, &path)?;
        Ok(new)
    }
}

/// `<job>-r<n>`, cut so it stays a valid Batch job name (at most 63 characters).
fn retry_name(job: &str, n: u32) -> String {
    let tail = format!("-r{n}");
    let keep = job.len().min(63 - tail.len());
    format!("{}{tail}", job[..keep].trim_end_matches('-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_retry_name_stays_a_batch_job_name() {
        assert_eq!(retry_name("augbench-run", 2), "augbench-run-r2");
        let long = "a".repeat(63);
        let name = retry_name(&long, 12);
        assert_eq!((name.len(), name.ends_with("-r12")), (63, true));
    }
}
