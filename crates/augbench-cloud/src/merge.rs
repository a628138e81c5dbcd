//! Merging what a run's tasks wrote, once fetched into `<output>/cloud/tasks/`: which shards
//! finished (`DONE.json`) and why the others did not (their engine's state and log tail), and for
//! a run config the result files (each shard's transforms into one file per job, as a local run
//! writes them) and the cell log (one run id, rows replaced by key). Merging again changes
//! nothing. Production runs merge their cell files in `production_merge`.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use anyhow::Context;
use augbench_cells::{BenchCell, append_bench_cells, read_bench_cells};
use augbench_core::results::ResultFile;
use augbench_core::{RunConfig, naming, policy};
use augbench_host::child::last_lines;
use augbench_host::fsutil::write_atomic;

use crate::record::CloudRun;
use crate::task::TaskStatus;

/// A task that cannot be merged.
#[derive(Debug, Clone, PartialEq)]
pub struct Missing {
    pub index: u64,
    /// `failed`, `preempted`, `exited 0 without DONE.json`, or the engine's state.
    pub reason: String,
    pub log_tail: String,
    /// Whether the engine is done with it (failed, cancelled, or gone): resubmitting it cannot
    /// run it twice at once.
    pub ended: bool,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct FetchReport {
    pub merged: Vec<u64>,
    pub missing: Vec<Missing>,
    /// Result files written (new or changed) and left as they were.
    pub written: Vec<PathBuf>,
    pub unchanged: usize,
    pub cells_appended: usize,
    pub cells_replaced: usize,
    /// What a merged task wrote that was not merged, each with why (a production cell of
    /// another run id, a cell that fails validation).
    pub skipped: Vec<String>,
}

pub fn task_dir(out: &Path, index: u64) -> PathBuf {
    naming::cloud_dir(out).join("tasks").join(index.to_string())
}

/// The shards whose task wrote `DONE.json` (merged) and the others, each with why.
pub fn classify(out: &Path, run: &CloudRun, states: &BTreeMap<u64, TaskStatus>) -> FetchReport {
    let mut report = FetchReport::default();
    for (_, shard) in run.shards() {
        let dir = task_dir(out, shard.index);
        if dir.join("DONE.json").is_file() {
            report.merged.push(shard.index);
        } else {
            report
                .missing
                .push(missing(shard.index, &dir, states.get(&shard.index)));
        }
    }
    report
}

/// Merges the fetched task folders under `<out>/cloud/tasks/` into `out`.
pub fn merge(
    out: &Path,
    run: &CloudRun,
    cfg: &RunConfig,
    states: &BTreeMap<u64, TaskStatus>,
) -> anyhow::Result<FetchReport> {
    let mut report = classify(out, run, states);
    merge_results(out, cfg, &report.merged.clone(), &mut report)?;
    merge_cells(out, run, &report.merged.clone(), &mut report)?;
    let resolved = naming::resolved_config(out);
    write_if_changed(&resolved, cfg.to_yaml().as_bytes(), &mut report)?;
    Ok(report)
}

fn missing(index: u64, dir: &Path, state: Option<&TaskStatus>) -> Missing {
    let slurm_word = state
        .and_then(|t| t.events.last())
        .filter(|e| e.starts_with("Slurm"));
    let reason = match state {
        Some(t) if t.state == "FAILED" && t.preempted() => "preempted (retries used up)".into(),
        Some(t) if t.state == "FAILED" => match slurm_word {
            Some(e) => format!("failed: {e}"),
            None => "failed".into(),
        },
        Some(t) if t.state == "SUCCEEDED" => "exited 0 without DONE.json".into(),
        Some(t) => format!("not finished ({})", t.state),
        None => "no DONE.json (the engine no longer knows the task)".into(),
    };
    Missing {
        index,
        reason,
        log_tail: log_tail(dir),
        ended: state.is_none_or(TaskStatus::finished),
    }
}

/// The end of the task's own log, else of what the engine captured (a task killed before it
/// uploaded its log), else why there is none.
fn log_tail(dir: &Path) -> String {
    ["task.log", "slurm.out"]
        .iter()
        .find_map(|name| std::fs::read_to_string(dir.join(name)).ok())
        .map(|t| last_lines(&t, policy::STDERR_TAIL_LINES))
        .unwrap_or_else(|| "(no task log was uploaded)".into())
}

/// Result files under a task's `out/`, by path relative to it.
fn result_files(task_out: &Path) -> anyhow::Result<Vec<(PathBuf, PathBuf)>> {
    let mut found = Vec::new();
    let mut stack = vec![task_out.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries {
            let path = e?.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.to_string_lossy().ends_with("_results.json") {
                let rel = path.strip_prefix(task_out)?.to_path_buf();
                found.push((rel, path));
            }
        }
    }
    found.sort();
    Ok(found)
}

/// One file per job: the lowest shard's metadata, every shard's transforms (the lowest shard's
/// row where two measured the same transform, e.g. the pipeline ceiling), the run's config.
fn merge_results(
    out: &Path,
    cfg: &RunConfig,
    shards: &[u64],
    report: &mut FetchReport,
) -> anyhow::Result<()> {
    let mut merged: BTreeMap<PathBuf, ResultFile> = BTreeMap::new();
    for &index in shards {
        for (rel, path) in result_files(&task_dir(out, index).join("out"))? {
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("reading {}", path.display()))?;
            let file: ResultFile = serde_json::from_str(&text)
                .with_context(|| format!("{} is not a result file", path.display()))?;
            match merged.get_mut(&rel) {
                Some(base) => {
                    for (name, r) in file.results {
                        base.results.entry(name).or_insert(r);
                    }
                }
                None => {
                    merged.insert(rel, file);
                }
            }
        }
    }
    let run_config = serde_json::to_value(cfg).context("encoding the run config")?;
    for (rel, mut file) in merged {
        file.metadata.run_config = run_config.clone();
        let json = serde_json::to_vec_pretty(&file).context("encoding results")?;
        write_if_changed(&out.join(rel), &json, report)?;
    }
    Ok(())
}

pub fn write_if_changed(path: &Path, bytes: &[u8], report: &mut FetchReport) -> anyhow::Result<()> {
    if std::fs::read(path).is_ok_and(|old| old == bytes) {
        report.unchanged += 1;
        return Ok(());
    }
    write_atomic(path, bytes)?;
    report.written.push(path.to_path_buf());
    Ok(())
}

/// Every merged task's cells under the run's cell id, the lowest shard's row where two shards
/// measured the same key; appended to `<out>/cells.parquet`, replacing rows with the same key.
fn merge_cells(
    out: &Path,
    run: &CloudRun,
    shards: &[u64],
    report: &mut FetchReport,
) -> anyhow::Result<()> {
    let mut seen = HashSet::new();
    let mut cells: Vec<BenchCell> = Vec::new();
    for &index in shards {
        let path = naming::cells_log(&task_dir(out, index).join("out"));
        if !path.is_file() {
            continue;
        }
        for mut cell in read_bench_cells(&path)? {
            cell.run_id = run.cell_run_id.clone();
            if seen.insert(cell.key()) {
                cells.push(cell);
            }
        }
    }
    if cells.is_empty() {
        return Ok(());
    }
    let r = append_bench_cells(&naming::cells_log(out), &cells)?;
    report.cells_appended = r.appended;
    report.cells_replaced = r.replaced;
    Ok(())
}
