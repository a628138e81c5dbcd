//! Reading what the report is given: folders (every `*_results.json` below them, cloud copies
//! skipped), single result JSON files (ours or the reference format, each parsed by its sibling)
//! and cell logs, into one `Dataset`; the checks on version, unusable values and duplicates.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context;
use augbench_core::json_text::{self, Repaired};
use augbench_core::results::{RESULT_FORMAT_VERSION, Status};

use crate::model::{Dataset, Row};
use crate::output::usage;

use super::file_name::RESULTS_SUFFIX;
use super::{cells, ours, reference};

/// Loads every path (folder, result JSON or cell log) into one dataset.
pub fn load_paths(paths: &[PathBuf]) -> anyhow::Result<Dataset> {
    if paths.is_empty() {
        return Err(usage(
            "no results given",
            "pass a results folder (the run's output folder), a *_results.json file or a cell log",
        ));
    }
    let mut data = Dataset::default();
    for p in paths {
        data.extend(load_path(p)?);
    }
    check_duplicates(&data)?;
    if data.rows.is_empty() {
        let list: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        return Err(usage(
            format!("no transform results in {}", list.join(", ")),
            "the files were read but hold no `results` entries; did the run finish any transform?",
        ));
    }
    Ok(data)
}

fn load_path(path: &Path) -> anyhow::Result<Dataset> {
    Ok(finalize_all(load_raw(path)?))
}

/// One result JSON file from its bytes, checked and finalized as `load_paths` does for a file
/// (for callers that hold the bytes, such as the fuzz test); `path` names it in errors.
pub fn load_result_bytes(path: &Path, bytes: &[u8]) -> anyhow::Result<Dataset> {
    let data = finalize_all(parse_result_bytes(path, bytes)?);
    check_duplicates(&data)?;
    Ok(data)
}

fn finalize_all(mut data: Dataset) -> Dataset {
    let rows = std::mem::take(&mut data.rows);
    data.rows = rows
        .into_iter()
        .map(|r| finalize(r, &mut data.warnings))
        .collect();
    data
}

fn load_raw(path: &Path) -> anyhow::Result<Dataset> {
    if path.is_dir() {
        return load_dir(path);
    }
    if !path.exists() {
        return Err(usage(
            format!("{}: no such file or folder", path.display()),
            "check the path; pass the run's output folder or a *_results.json file",
        ));
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    if name.ends_with(".json") {
        load_result_file(path)
    } else if name.ends_with(".parquet") || name.ends_with(".jsonl") {
        cells::load(path)
    } else {
        Err(usage(
            format!("{}: not a results file", path.display()),
            "expected a folder, a *_results.json file, or a cell log (.parquet or .jsonl)",
        ))
    }
}

fn load_dir(dir: &Path) -> anyhow::Result<Dataset> {
    let files = result_files(dir)?;
    if files.is_empty() {
        return Err(usage(
            format!(
                "{}: no *{RESULTS_SUFFIX} files in this folder or below",
                dir.display()
            ),
            "point at the output folder of `augbench run`, or pass a cell log (cells.parquet) directly",
        ));
    }
    let mut data = Dataset::default();
    for f in files {
        data.extend(load_result_file(&f)?);
    }
    Ok(data)
}

/// Every `*_results.json` below `dir`, sorted: what `report`, `compare` and `publish` read from a
/// run's folder. Hidden entries (a folder built beside its final name, a staging copy) and a
/// cloud run's per-task copies (`is_cloud_copy`) are left out: each would count rows twice.
pub fn result_files(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    collect_results(dir, &mut files)?;
    files.sort();
    Ok(files)
}

fn collect_results(dir: &Path, out: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    let entries =
        std::fs::read_dir(dir).with_context(|| format!("reading folder {}", dir.display()))?;
    for entry in entries {
        let path = entry
            .with_context(|| format!("reading folder {}", dir.display()))?
            .path();
        let hidden = path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with('.'));
        if hidden {
            continue;
        }
        if path.is_dir() {
            if !is_cloud_copy(dir, &path) {
                collect_results(&path, out)?;
            }
        } else if path.to_string_lossy().ends_with(RESULTS_SUFFIX) {
            out.push(path);
        }
    }
    Ok(())
}

/// A cloud run's own folder (`cloud/` beside `cloud_run.json`): the per-task copies that
/// `augbench cloud fetch` already merged into the result files above it, so reading them as well
/// would count every row twice.
fn is_cloud_copy(parent: &Path, path: &Path) -> bool {
    path.file_name()
        .is_some_and(|n| n == augbench_core::naming::CLOUD_DIR)
        && augbench_core::naming::cloud_run(parent).is_file()
}

/// Reads one result JSON: ours (has `metadata.format_version`) or the reference format.
fn load_result_file(path: &Path) -> anyhow::Result<Dataset> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    parse_result_bytes(path, &bytes)
}

/// Parses the bytes of one result JSON file; `path` names it in errors. Every malformed input
/// is a usage error naming the file and, where the parser stopped, the byte offset, line and
/// column; none panics (the fuzz test holds it to that).
fn parse_result_bytes(path: &Path, bytes: &[u8]) -> anyhow::Result<Dataset> {
    let raw = std::str::from_utf8(bytes).map_err(|e| {
        usage(
            format!(
                "{}: not UTF-8 text: invalid bytes at byte {}",
                path.display(),
                e.valid_up_to()
            ),
            "a result file is JSON text; was it overwritten, or is it another kind of file?",
        )
    })?;
    let repaired = json_text::non_finite_to_null(raw);
    let value: serde_json::Value =
        serde_json::from_str(&repaired.text).map_err(|e| invalid_json(path, raw, &repaired, &e))?;
    if !value
        .get("results")
        .is_some_and(serde_json::Value::is_object)
    {
        return Err(usage(
            format!("{}: no `results` object at the top level", path.display()),
            "a result file has top-level `metadata` and `results` keys",
        ));
    }
    match value.pointer("/metadata/format_version") {
        None | Some(serde_json::Value::Null) => Ok(reference::load(path, &value)),
        Some(v) => {
            check_version(path, v)?;
            ours::load(path, raw, &repaired)
        }
    }
}

/// A JSON syntax error, placed in the original text; a text that ends early is called truncated.
fn invalid_json(
    path: &Path,
    raw: &str,
    repaired: &Repaired<'_>,
    err: &serde_json::Error,
) -> anyhow::Error {
    let at = json_text::error_at_repaired(raw, repaired, err)
        .map(|a| format!(" at {a}"))
        .unwrap_or_default();
    let msg = json_text::message(err);
    if err.is_eof() {
        return usage(
            format!("{}: the JSON ends early{at}: {msg}", path.display()),
            "the file is truncated (an interrupted copy, or a full disk?); restore it, or rerun the job that wrote it",
        );
    }
    usage(
        format!("{}: not valid JSON{at}: {msg}", path.display()),
        "a result file is the JSON augbench writes; was it edited by hand? restore it, or rerun the job",
    )
}

fn check_version(path: &Path, v: &serde_json::Value) -> anyhow::Result<()> {
    match v.as_u64() {
        Some(n) if (1..=u64::from(RESULT_FORMAT_VERSION)).contains(&n) => Ok(()),
        Some(n) if n > u64::from(RESULT_FORMAT_VERSION) => Err(usage(
            format!(
                "{}: result format version {n} is newer than this augbench reads (up to {RESULT_FORMAT_VERSION})",
                path.display()
            ),
            "upgrade augbench to read this file",
        )),
        _ => Err(usage(
            format!("{}: unknown result format version {v}", path.display()),
            format!(
                "`metadata.format_version` must be an integer from 1 to {RESULT_FORMAT_VERSION}"
            ),
        )),
    }
}

/// Drops unusable values with a warning: non-finite or non-positive per-run throughputs, and a
/// measured row whose median is missing, NaN or zero (it becomes an `error` row). A measured
/// row with runs but no median gets the median and std of its runs.
pub(crate) fn finalize(mut row: Row, warnings: &mut Vec<String>) -> Row {
    let before = row.throughputs.len();
    row.throughputs.retain(|t| t.is_finite() && *t > 0.0);
    if row.throughputs.len() != before {
        warnings.push(format!(
            "{}: {} / {}: dropped {} NaN, infinite or non-positive per-run throughputs",
            row.source.display(),
            row.library,
            row.transform,
            before - row.throughputs.len()
        ));
    }
    let valid = |x: Option<f64>| x.filter(|v| v.is_finite() && *v > 0.0);
    if row.status == Status::Ok && row.median.is_none() && !row.throughputs.is_empty() {
        row.median = Some(augbench_stats::median(&row.throughputs));
        row.std = Some(augbench_stats::std_dev(&row.throughputs));
    }
    let counted = row
        .instructions
        .as_ref()
        .is_some_and(|c| c.per_item.is_finite() && c.per_item > 0.0);
    if row.status == Status::Ok && !counted && valid(row.median).is_none() {
        warnings.push(format!(
            "{}: {} / {}: median throughput is missing, NaN or zero; shown as error",
            row.source.display(),
            row.library,
            row.transform
        ));
        row.status = Status::Error;
        row.reason = Some("median throughput missing, NaN or zero".into());
    }
    row.median = valid(row.median);
    row.std = row.std.filter(|s| s.is_finite() && *s >= 0.0);
    row.ci_low = valid(row.ci_low);
    row.ci_high = valid(row.ci_high);
    if row.figure.is_some() && valid(row.figure).is_none() {
        warnings.push(format!(
            "{}: {} / {}: figure is NaN or zero; shown as the median",
            row.source.display(),
            row.library,
            row.transform
        ));
    }
    row.figure = valid(row.figure);
    row
}

fn check_duplicates(data: &Dataset) -> anyhow::Result<()> {
    let mut seen: BTreeMap<(crate::model::GroupKey, &str, &str), &Path> = BTreeMap::new();
    for r in &data.rows {
        let k = (r.key(), r.library.as_str(), r.transform.as_str());
        if let Some(first) = seen.insert(k, &r.source) {
            return Err(usage(
                format!(
                    "{} / {} in {} appears twice: in {} and in {}",
                    r.library,
                    r.transform,
                    r.key().title(),
                    first.display(),
                    r.source.display()
                ),
                "pass each run once (a folder and a file inside it, or a cell log and the JSON of the same run, count twice)",
            ));
        }
    }
    Ok(())
}
