//! One production cell as a file (written by augbench-exec, read by augbench-report):
//! `cells/<implementation>/<recipe>/seed-<n>.json` under the run's folder
//! (`…/workers-<w>/seed-<n>.json` in a sweep of loader workers), written once (atomically) and
//! never rewritten while it is valid. A file is valid when
//! it parses, names the cell and run it sits under, and its digest matches its content.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

pub const CELL_SCHEMA: u32 = 1;

/// Which cell: (family, implementation, recipe, seed) of one run, and its loader workers where
/// the run sweeps them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CellId {
    pub run_id: String,
    pub family: String,
    pub implementation: String,
    pub recipe: String,
    pub seed: u64,
    /// Its count of loader workers in a sweep (`Workers::Sweep`); absent where every cell of the
    /// run has the same count (its settings name it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workers: Option<u64>,
}

impl CellId {
    /// The column its figures go in: the implementation, with the loader workers in a sweep.
    pub fn column(&self) -> String {
        column(&self.implementation, self.workers)
    }
}

/// A table column: `kornia_cpu`, or in a sweep `kornia_cpu (4 workers)`.
pub fn column(implementation: &str, workers: Option<u64>) -> String {
    match workers {
        None => implementation.to_string(),
        Some(1) => format!("{implementation} (1 worker)"),
        Some(w) => format!("{implementation} ({w} workers)"),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CellStatus {
    Ok,
    /// The implementation cannot build a stage, or the catalog does not list it for the recipe.
    Unsupported,
    Error,
}

/// What one cell measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    pub schema: u32,
    pub id: CellId,
    pub row: String,
    pub status: CellStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Items per second over the measured batches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items_per_sec: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<crate::results::MemoryPeaks>,
    /// The worker's account: batch arrivals, contract, loader, threads, decoder.
    #[serde(default)]
    pub measured: serde_json::Value,
    /// Settings the cell ran with (batch size, batches, workers, prefetch, dtype, size).
    pub settings: serde_json::Value,
    /// Where its batches end (`Implementation::boundary`: `host float16`, `cuda float16`);
    /// absent in cells written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boundary: Option<String>,
    /// Library versions the worker reported.
    #[serde(default)]
    pub versions: serde_json::Value,
    /// SHA-256 of this file's JSON with `digest` empty.
    #[serde(default)]
    pub digest: String,
}

impl Cell {
    fn content_digest(&self) -> String {
        let mut bare = self.clone();
        bare.digest = String::new();
        sha256_hex(serde_json::to_string(&bare).unwrap_or_default().as_bytes())
    }

    /// The file's bytes, digest filled in.
    pub fn to_bytes(&mut self) -> Vec<u8> {
        self.digest = self.content_digest();
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text.into_bytes()
    }
}

/// Cell settings less the loader workers: in a sweep each cell names its own count, so cells of
/// one run (or of two runs, or an earlier cell and a config) agree on everything else.
pub fn settings_except_workers(settings: &serde_json::Value) -> serde_json::Value {
    let mut s = settings.clone();
    if let Some(o) = s.as_object_mut() {
        o.remove("workers");
    }
    s
}

/// Where `id`'s file lives under the run folder `run_dir`.
pub fn path(run_dir: &Path, id: &CellId) -> PathBuf {
    let recipe = run_dir
        .join("cells")
        .join(&id.implementation)
        .join(&id.recipe);
    let dir = match id.workers {
        Some(w) => recipe.join(format!("workers-{w}")),
        None => recipe,
    };
    dir.join(format!("seed-{}.json", id.seed))
}

/// The finished cell at `path` for `id`, or why it cannot be kept (None: no file).
pub fn validate(path: &Path, id: &CellId) -> Option<Result<Cell, String>> {
    let bytes = std::fs::read(path).ok()?;
    Some(check(&bytes, id))
}

/// A cell file of run `run_id` (any cell of it): parsed, of this schema and run, its digest
/// matching its content.
pub fn read_valid(bytes: &[u8], run_id: &str) -> Result<Cell, String> {
    let cell: Cell = serde_json::from_slice(bytes).map_err(|e| format!("not a cell file: {e}"))?;
    if cell.schema != CELL_SCHEMA {
        return Err(format!(
            "cell schema {} (this augbench writes {CELL_SCHEMA})",
            cell.schema
        ));
    }
    if cell.id.run_id != run_id {
        return Err(format!("it belongs to run {}", cell.id.run_id));
    }
    if cell.digest != cell.content_digest() {
        return Err("its content does not match its digest (edited or cut short)".into());
    }
    Ok(cell)
}

fn check(bytes: &[u8], id: &CellId) -> Result<Cell, String> {
    let cell = read_valid(bytes, &id.run_id)?;
    if &cell.id != id {
        return Err("it names another cell".into());
    }
    if cell.status == CellStatus::Error {
        return Err(format!(
            "it recorded an error: {}",
            cell.reason.as_deref().unwrap_or("")
        ));
    }
    Ok(cell)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell() -> Cell {
        Cell {
            schema: CELL_SCHEMA,
            id: CellId {
                run_id: "r".into(),
                family: "rgb".into(),
                implementation: "pillow_cpu".into(),
                recipe: "Resize224+Normalize+ToTensor".into(),
                seed: 137,
                workers: None,
            },
            row: "Resize".into(),
            status: CellStatus::Ok,
            reason: None,
            items_per_sec: Some(100.0),
            memory: None,
            measured: serde_json::json!({"ns": [1, 2]}),
            settings: serde_json::json!({}),
            boundary: Some("host float16".into()),
            versions: serde_json::json!({}),
            digest: String::new(),
        }
    }

    #[test]
    fn a_written_cell_validates_and_an_edited_one_does_not() {
        let mut c = cell();
        let bytes = c.to_bytes();
        assert_eq!(check(&bytes, &c.id).unwrap(), c);
        let edited = String::from_utf8(bytes.clone())
            .unwrap()
            .replace("100.0", "120.0");
        assert!(
            check(edited.as_bytes(), &c.id)
                .unwrap_err()
                .contains("digest")
        );
        assert!(
            check(&bytes[..bytes.len() / 2], &c.id)
                .unwrap_err()
                .contains("not a cell")
        );
        let mut other = c.id.clone();
        other.seed = 138;
        assert!(check(&bytes, &other).unwrap_err().contains("another cell"));
        other = c.id.clone();
        other.run_id = "s".into();
        assert!(
            check(&bytes, &other)
                .unwrap_err()
                .contains("belongs to run r")
        );
    }

    /// A cell of a sweep has its own file and column; one without a count reads as it did before
    /// sweeps (no `workers` key in its id).
    #[test]
    fn a_swept_cell_has_its_own_file_and_column() {
        let mut c = cell();
        let single = c.to_bytes();
        assert!(!String::from_utf8(single).unwrap().contains("\"workers\""));
        let run = Path::new("r");
        assert_eq!(
            path(run, &c.id),
            run.join("cells/pillow_cpu/Resize224+Normalize+ToTensor/seed-137.json")
        );
        assert_eq!(c.id.column(), "pillow_cpu");
        c.id.workers = Some(4);
        let bytes = c.to_bytes();
        assert_eq!(check(&bytes, &c.id).unwrap().id.workers, Some(4));
        assert_eq!(
            path(run, &c.id),
            run.join("cells/pillow_cpu/Resize224+Normalize+ToTensor/workers-4/seed-137.json")
        );
        assert_eq!(c.id.column(), "pillow_cpu (4 workers)");
        let mut other = c.id.clone();
        other.workers = Some(2);
        assert!(check(&bytes, &other).unwrap_err().contains("another cell"));
    }

    #[test]
    fn an_error_cell_is_measured_again() {
        let mut c = cell();
        c.status = CellStatus::Error;
        c.reason = Some("worker died".into());
        let bytes = c.to_bytes();
        assert!(check(&bytes, &c.id).unwrap_err().contains("worker died"));
    }
}
