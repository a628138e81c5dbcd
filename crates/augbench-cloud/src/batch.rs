//! The Google Cloud Batch engine: what it alone does, through `gcloud` (submit the job JSON,
//! describe the job, list its tasks, delete it). Batch retries preempted tasks itself; a failed
//! task is not resubmitted alone (its task indices are fixed per job).

use std::path::Path;

use augbench_core::UsageError;

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
        Ok(gcloud::tasks(job)?)
    }

    fn cancel(&self, job: &JobRef) -> anyhow::Result<()> {
        Ok(gcloud::delete(job)?)
    }

    fn resubmit(&self, _job: &JobRef, _indices: &[u64], _dir: &Path) -> anyhow::Result<JobRef> {
        Err(UsageError::new(
            "--retry-failed resubmits tasks on Slurm only; a Batch job's task indices are fixed",
            "Batch retries preempted tasks itself (`preemptible: true`); for a failed task, fix its cause and submit a run of its shard's transforms",
        )
        .into())
    }
}
