//! augbench-cloud: cloud runs on Google Cloud Batch through the `gcloud` CLI (docs/cloud.md) —
//! dataset staging, the Batch job JSON and task script, submission, following a run, and
//! fetching its results into the local output. The config types, validation and sharding are
//! pure and live in augbench-core (`config::CloudConfig`, `cloud`). It ships jobs and never
//! measures: it uses the host (atomic writes, the tail of a log), environments (which groups a
//! task builds) and media (file extensions), never the coordinator (augbench-exec).

pub mod fetch;
pub mod follow;
pub mod gcloud;
pub mod job;
pub mod record;
pub mod stage;
pub mod submit;
