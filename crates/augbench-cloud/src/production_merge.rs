//! `augbench cloud fetch` of a production run: every finished shard's cell files copied into the
//! local output folder's run, exactly where a local `augbench production` writes them
//! (`runs/<run id>/cells/…`), with the run's record (`run.json`, `latest.json`) naming every
//! cell the whole config asks for. Cells are immutable: one already on disk is never replaced.
//! A shard whose cells belong to another run id (a node whose machine or environments differ)
//! is named with the inputs that differ and skipped, as is a cell file that fails validation.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context;
use augbench_core::production::cell::read_valid;
use augbench_core::production::{LATEST_FILE, Production, RECORD_FILE, planned_settings, run_dir};
use augbench_host::fsutil::write_atomic;
use serde_json::Value;

use crate::merge::{FetchReport, classify, task_dir, write_if_changed};
use crate::record::CloudRun;
use crate::task::TaskStatus;

/// Merges the fetched production shards under `<out>/cloud/tasks/` into `out`.
pub fn merge(
    out: &Path,
    run: &CloudRun,
    p: &Production,
    states: &BTreeMap<u64, TaskStatus>,
) -> anyhow::Result<FetchReport> {
    let mut report = classify(out, run, states);
    let mut first: Option<(String, Value)> = None;
    for index in report.merged.clone() {
        let task_out = task_dir(out, index).join("out");
        let Some(record) = read_json(&task_out.join(LATEST_FILE)) else {
            report.skipped.push(format!(
                "task {index}: wrote no production record ({LATEST_FILE})"
            ));
            continue;
        };
        let id = record["run_id"].as_str().unwrap_or_default().to_string();
        match &first {
            Some((run_id, earlier)) if *run_id != id => {
                report.skipped.push(format!(
                    "task {index}: its cells belong to run {id}, not {run_id} (inputs that differ: {})",
                    changed(earlier, &record)
                ));
                continue;
            }
            Some(_) => {}
            None => first = Some((id.clone(), record)),
        }
        copy_cells(
            &run_dir(&task_out, &id),
            &run_dir(out, &id),
            &id,
            &mut report,
        )?;
    }
    if let Some((id, mut record)) = first {
        record["settings"] = planned_settings(p);
        let bytes = serde_json::to_vec_pretty(&record).context("encoding the run record")?;
        let path = run_dir(out, &id).join(RECORD_FILE);
        if !path.exists() {
            write_atomic(&path, &bytes)?;
        }
        write_if_changed(&out.join(LATEST_FILE), &bytes, &mut report)?;
    }
    Ok(report)
}

fn read_json(path: &Path) -> Option<Value> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

/// The inputs whose hashes differ between two run records.
fn changed(a: &Value, b: &Value) -> String {
    let (ia, ib) = (&a["inputs"], &b["inputs"]);
    let names: std::collections::BTreeSet<&String> = ia
        .as_object()
        .into_iter()
        .chain(ib.as_object())
        .flat_map(|m| m.keys())
        .collect();
    let differ: Vec<&str> = names
        .into_iter()
        .filter(|n| ia[n.as_str()] != ib[n.as_str()])
        .map(String::as_str)
        .collect();
    differ.join(", ")
}

/// Every valid cell file of run `id` under `from` to the same place under `to`; a file already
/// there is kept as it is.
fn copy_cells(from: &Path, to: &Path, id: &str, report: &mut FetchReport) -> anyhow::Result<()> {
    let cells = augbench_host::fsutil::files_under(&from.join("cells"));
    for path in cells
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
    {
        let rel = path.strip_prefix(from)?.to_path_buf();
        let bytes = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
        if let Err(why) = read_valid(&bytes, id) {
            report.skipped.push(format!("{}: {why}", rel.display()));
            continue;
        }
        let dst = to.join(&rel);
        if dst.exists() {
            report.unchanged += 1;
            continue;
        }
        write_atomic(&dst, &bytes)?;
        report.written.push(dst);
        report.cells_appended += 1;
    }
    Ok(())
}
