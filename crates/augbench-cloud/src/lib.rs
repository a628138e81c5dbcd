//! augbench-cloud: runs on another engine (docs/cluster.md), Google Cloud Batch through the
//! `gcloud` CLI or Slurm through `sbatch` — dataset staging, the job spec and task script,
//! submission, following a run, fetching and merging its results into the local output. The
//! config types, validation and sharding are pure and live in augbench-core (`config::CloudConfig`,
//! `cloud`). It ships jobs and never measures: it uses the host (atomic writes, the tail of a
//! log), environments (which groups a task builds) and media (file extensions), never the
//! coordinator (augbench-exec).

pub mod batch;
pub mod engine;
pub mod engines;
pub mod fetch;
pub mod follow;
pub mod gcloud;
pub mod job;
pub mod merge;
pub mod production_merge;
pub mod record;
pub mod request;
pub mod slurm;
pub mod stage;
pub mod store;
pub mod submit;
pub mod task;
