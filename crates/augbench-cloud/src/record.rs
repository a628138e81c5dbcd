//! `<output>/cloud_run.json`: what a run on another engine submitted (engine, job names and ids,
//! run prefix, shards, the cell run id, resubmissions), so `augbench cloud status|fetch|cancel`
//! can follow it from the output folder.

use std::path::Path;

use anyhow::Context;
use augbench_core::cloud::Shard;
use augbench_core::config::CloudProvider;
use augbench_core::{UsageError, naming};
use serde::{Deserialize, Serialize};

use crate::job::JobRef;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CloudRun {
    /// The engine (records written before Slurm was added have none: Cloud Batch).
    #[serde(default = "batch")]
    pub provider: CloudProvider,
    /// What the tasks run (records without it: `augbench run`).
    #[serde(default)]
    pub kind: crate::request::Kind,
    pub run_name: String,
    pub run_uri: String,
    pub data_uri: String,
    /// The run id stamped on every merged cell (the local run's id for the same config).
    pub cell_run_id: String,
    pub submitted_utc: String,
    pub jobs: Vec<JobRecord>,
    /// Commands that follow the run.
    pub follow: Vec<String>,
}

fn batch() -> CloudProvider {
    CloudProvider::Gcp
}

/// One submitted job; a resubmission of failed tasks is a job of its own, holding only them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobRecord {
    #[serde(flatten)]
    pub job: JobRef,
    pub shards: Vec<Shard>,
}

impl CloudRun {
    pub fn write(&self, out: &Path) -> anyhow::Result<()> {
        let json = serde_json::to_vec_pretty(self).context("encoding the cloud run record")?;
        augbench_host::fsutil::write_atomic(&naming::cloud_run(out), &json)
    }

    pub fn read(out: &Path) -> anyhow::Result<CloudRun> {
        let path = naming::cloud_run(out);
        let text = std::fs::read_to_string(&path).map_err(|_| {
            UsageError::new(
                format!(
                    "{} records no cloud run (no {})",
                    out.display(),
                    path.display()
                ),
                "pass the --output folder of a submitted `augbench run` with a `cloud:` section",
            )
        })?;
        serde_json::from_str(&text)
            .with_context(|| format!("{} is not a cloud run record", path.display()))
    }

    /// Every shard once, with the newest job that runs it (a resubmission replaces the job a
    /// shard failed in), in task index order.
    pub fn shards(&self) -> Vec<(&JobRef, &Shard)> {
        let mut newest = std::collections::BTreeMap::new();
        for j in &self.jobs {
            for s in &j.shards {
                newest.insert(s.index, (&j.job, s));
            }
        }
        newest.into_values().collect()
    }

    pub fn engine(&self) -> Box<dyn crate::engine::Engine> {
        crate::engines::of(self.provider)
    }
}
