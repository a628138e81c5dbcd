//! The engines a run's shards go to, behind one trait: Google Cloud Batch (`batch`) and Slurm
//! (`slurm`). Each holds only what differs between them (checks before submitting, submit,
//! task states, cancel, resubmitting failed tasks, where files live); the shard plan, the bundle,
//! the task script and the merge are shared (`job`, `submit`, `fetch`).

use std::path::Path;

use crate::job::{JobRef, JobSpec};
use crate::store::Store;
use crate::task::TaskStatus;

/// What differs between the engines.
pub trait Engine {
    /// Where the run's bundle and task folders live.
    fn store(&self) -> Store;
    /// Seconds between two looks at an attached run's tasks.
    fn poll_sec(&self) -> u64;
    /// Engine checks that can fail before anything is uploaded (a missing tool, a partition
    /// that does not exist, a shared folder that is not writable).
    fn preflight(&self, cloud: &augbench_core::config::CloudConfig) -> anyhow::Result<()>;
    /// Submits a prepared job (its spec file is under `cloud_dir`); returns it with its id.
    fn submit(&self, job: &JobSpec, cloud_dir: &Path) -> anyhow::Result<JobRef>;
    /// The job's state, in Batch's words.
    fn job_state(&self, job: &JobRef) -> anyhow::Result<String>;
    fn tasks(&self, job: &JobRef) -> anyhow::Result<Vec<TaskStatus>>;
    fn cancel(&self, job: &JobRef) -> anyhow::Result<()>;
    /// Submits only these tasks of a job again, as a new job.
    fn resubmit(&self, job: &JobRef, indices: &[u64], cloud_dir: &Path) -> anyhow::Result<JobRef>;
}
