//! `<output>/cloud_run.json`: what a cloud run submitted (job names, run prefix, shards, the
//! cell run id), so `augbench cloud status|fetch|cancel` can follow it from the output folder.

use std::path::Path;

use anyhow::Context;
use augbench_core::cloud::Shard;
use augbench_core::{UsageError, naming};
use serde::{Deserialize, Serialize};

use crate::job::JobRef;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CloudRun {
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

    /// Every shard of every job, with its job.
    pub fn shards(&self) -> impl Iterator<Item = (&JobRef, &Shard)> {
        self.jobs
            .iter()
            .flat_map(|j| j.shards.iter().map(move |s| (&j.job, s)))
    }
}
