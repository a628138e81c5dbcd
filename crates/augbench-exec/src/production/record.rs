//! A production run's record: `runs/<run id>/run.json` (every input's hash, the resolved
//! settings, the machine card), written once when the run id is new, and `latest.json` in the
//! output folder, which tells the next run which inputs changed when its id differs.

use std::path::Path;

use augbench_core::production::{LATEST_FILE, Production, RECORD_FILE};
use augbench_host::fsutil::write_atomic;
use indicatif::MultiProgress;
use serde::{Deserialize, Serialize};

use super::identity::RunInputs;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunRecord {
    pub run_id: String,
    pub inputs: RunInputs,
    #[serde(default)]
    pub settings: serde_json::Value,
    #[serde(default)]
    pub machine: serde_json::Value,
}

/// Writes the run's record where it is missing and says what differs from the latest run.
pub fn open(
    out: &Path,
    run_dir: &Path,
    run_id: &str,
    inputs: &RunInputs,
    p: &Production,
    mp: &MultiProgress,
) -> anyhow::Result<()> {
    let record = RunRecord {
        run_id: run_id.to_string(),
        inputs: inputs.clone(),
        settings: augbench_core::production::planned_settings(p),
        machine: serde_json::to_value(augbench_host::machine::card()).unwrap_or_default(),
    };
    let bytes = serde_json::to_vec_pretty(&record)?;
    let latest = out.join(LATEST_FILE);
    if let Some(before) = read(&latest).filter(|b| b.run_id != run_id) {
        let changed = inputs.changed_since(&before.inputs).join(", ");
        mp.suspend(|| {
            eprintln!(
                "note: new run id {run_id} (the latest was {}): changed inputs: {changed}",
                before.run_id
            )
        });
    }
    let path = run_dir.join(RECORD_FILE);
    if !path.exists() {
        write_atomic(&path, &bytes)?;
    }
    write_atomic(&latest, &bytes)
}

/// The record at `path`, when there is a readable one.
pub fn read(path: &Path) -> Option<RunRecord> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}
