//! A baseline artifact of repeated invocations (`augbench run --invocations N`, docs/ci.md): its
//! record (`baseline.json` beside the invocations' folders: which folders, and the drift between
//! them estimated as the gate estimates it, with the fraction `--drift` takes), written once the
//! invocations are done; and `expand`, which turns a `--baseline` folder holding such a record
//! into its invocations, so `compare --baseline DIR` reads them as `--baseline` repeated.

use std::path::{Path, PathBuf};

use anyhow::Context;
use augbench_core::naming;
use serde::{Deserialize, Serialize};

use crate::judge::drift::{self, DriftBasis};
use crate::model::Dataset;

/// `baseline.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Record {
    pub version: u32,
    /// The invocations' folders, relative to the baseline folder, in the order they ran.
    pub invocations: Vec<String>,
    /// The drift between them; absent when it could not be estimated (fewer than
    /// `policy::DRIFT_MIN_INVOCATIONS` invocations, or no row measured in every one).
    pub drift: Option<Drift>,
}

/// How far a row's figure moves between the invocations (`judge::drift::estimate`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Drift {
    /// ln sd of a figure between invocations (their sampling and the drift together).
    pub spread: f64,
    /// The same as a fraction (e^spread − 1): the value `compare --drift` takes, as the runner
    /// class's calibration for a later one-invocation baseline.
    pub fraction: f64,
    pub df: usize,
    pub rows: usize,
}

const VERSION: u32 = 1;

/// The record of the baseline in `out` over its `names` invocation folders (loaded as `compare`
/// loads them), written atomically to `<out>/baseline.json`.
pub fn write(out: &Path, names: &[String], invocations: &[Dataset]) -> anyhow::Result<Record> {
    let drift = match drift::basis(invocations, None) {
        DriftBasis::Estimated {
            spread, df, rows, ..
        } => Some(Drift {
            spread,
            fraction: spread.exp_m1(),
            df,
            rows,
        }),
        _ => None,
    };
    let record = Record {
        version: VERSION,
        invocations: names.to_vec(),
        drift,
    };
    let text = serde_json::to_string_pretty(&record)? + "\n";
    augbench_host::fsutil::write_atomic(&naming::baseline(out), text.as_bytes())?;
    Ok(record)
}

/// `--baseline` paths with each folder that holds a baseline record replaced by its invocation
/// folders, in order; other paths as given.
pub fn expand(paths: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in paths {
        match read(p)? {
            Some(record) => out.extend(record.invocations.iter().map(|name| p.join(name))),
            None => out.push(p.clone()),
        }
    }
    Ok(out)
}

/// The record in folder `dir`, if it holds one.
pub fn read(dir: &Path) -> anyhow::Result<Option<Record>> {
    let file = naming::baseline(dir);
    if !file.is_file() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(&file)
        .with_context(|| format!("reading the baseline record {}", file.display()))?;
    let record: Record = serde_json::from_str(&text).map_err(|e| {
        augbench_core::UsageError::new(
            format!("{}:{}:{}: {e}", file.display(), e.line(), e.column()),
            "this file is written by `augbench run --invocations N`; run that again, or pass the invocation folders as --baseline, once each",
        )
    })?;
    Ok(Some(record))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_with_a_record_expands_to_its_invocations_and_others_stay() {
        let dir = tempfile::tempdir().unwrap();
        let names: Vec<String> = (1..=3).map(naming::invocation_name).collect();
        let record = write(dir.path(), &names, &[Dataset::default()]).unwrap();
        assert_eq!(
            record.drift, None,
            "one empty invocation: nothing to estimate"
        );
        let other = PathBuf::from("elsewhere");
        let expanded = expand(&[dir.path().to_path_buf(), other.clone()]).unwrap();
        assert_eq!(
            expanded,
            vec![
                dir.path().join("invocation-1"),
                dir.path().join("invocation-2"),
                dir.path().join("invocation-3"),
                other
            ]
        );
        std::fs::write(
            naming::baseline(dir.path()),
            "{\"version\": 1,\n \"oops\": 2}",
        )
        .unwrap();
        let err = expand(&[dir.path().to_path_buf()]).unwrap_err().to_string();
        assert!(
            err.contains("baseline.json:2:") && err.contains("oops"),
            "{err}"
        );
    }
}
