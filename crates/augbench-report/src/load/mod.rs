//! Loading: results folders (every `*_results.json` below them), single result JSON files (ours,
//! strictly; the public reference format, leniently) and benchmark cell logs (Parquet / JSON
//! Lines), all into one `Dataset`. Rejects empty inputs and duplicate measurements with hints.

mod cells;
mod json_text;
mod ours;
mod reference;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context;
use augbench_core::results::{RESULT_FORMAT_VERSION, Status};
use augbench_core::stats;

use crate::model::{Dataset, Row};
use crate::output::usage;

/// Suffix of every result file augbench (and the reference benchmark) writes.
pub const RESULTS_SUFFIX: &str = "_results.json";

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
    let mut data = load_raw(path)?;
    let rows = std::mem::take(&mut data.rows);
    data.rows = rows
        .into_iter()
        .map(|r| finalize(r, &mut data.warnings))
        .collect();
    Ok(data)
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
    let mut files = Vec::new();
    collect_results(dir, &mut files)?;
    files.sort();
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

fn collect_results(dir: &Path, out: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    let entries =
        std::fs::read_dir(dir).with_context(|| format!("reading folder {}", dir.display()))?;
    for entry in entries {
        let path = entry
            .with_context(|| format!("reading folder {}", dir.display()))?
            .path();
        if path.is_dir() {
            collect_results(&path, out)?;
        } else if path.to_string_lossy().ends_with(RESULTS_SUFFIX) {
            out.push(path);
        }
    }
    Ok(())
}

/// Reads one result JSON: ours (has `metadata.format_version`) or the reference format.
fn load_result_file(path: &Path) -> anyhow::Result<Dataset> {
    let raw =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let text = json_text::non_finite_to_null(&raw);
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        usage(
            format!("{}: not valid JSON: {e}", path.display()),
            "the file may be truncated; rerun the job or remove the file",
        )
    })?;
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
            ours::load(path, &text)
        }
    }
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
        row.median = Some(stats::median(&row.throughputs));
        row.std = Some(stats::std_dev(&row.throughputs));
    }
    if row.status == Status::Ok && valid(row.median).is_none() {
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

/// Library and device from a result file name: `<lib>[_<more>][_dev-<d>]_results.json`. Known
/// library names (which may contain `_`) win; otherwise the part before the first `_`.
pub(crate) fn name_parts(path: &Path) -> (String, Option<String>) {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name
        .strip_suffix(RESULTS_SUFFIX)
        .unwrap_or(name.trim_end_matches(".json"));
    let device = stem.rsplit_once("_dev-").map(|(_, d)| d.to_string());
    let known = augbench_core::Matrix::get()
        .library_names()
        .into_iter()
        .filter(|l| stem == *l || stem.starts_with(&format!("{l}_")))
        .max_by_key(|l| l.len());
    let library = match known {
        Some(l) => l.to_string(),
        None => stem.split('_').next().unwrap_or(stem).to_string(),
    };
    (library, device)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn library_and_device_from_file_names() {
        let p = |s: &str| name_parts(Path::new(s));
        assert_eq!(
            p("o/fast_image_resize_micro_results.json"),
            ("fast_image_resize".into(), None)
        );
        assert_eq!(
            p("kornia_micro_dev-cuda_results.json"),
            ("kornia".into(), Some("cuda".into()))
        );
        assert_eq!(
            p("albumentations_results.json"),
            ("albumentations".into(), None)
        );
        assert_eq!(
            p("mylib_augment_n10_r3_w4_b32_results.json"),
            ("mylib".into(), None)
        );
    }
}
