//! `augbench cloud fetch`: mirror the run's task folders from its store (GCS or the shared folder)
//! into `<output>/cloud/tasks/`, then merge every task that wrote `DONE.json` into the local
//! output: result files (each shard's transforms into one file per job, as a local run writes
//! them) and the cell log (one run id, rows replaced by key). Fetching again changes nothing. A
//! task without `DONE.json` is reported with its engine's state and log tail, never merged, and
//! can be resubmitted alone (`resubmit_failed`, Slurm).

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use anyhow::Context;
use augbench_cells::{BenchCell, append_bench_cells, read_bench_cells};
use augbench_core::results::ResultFile;
use augbench_core::{RunConfig, naming, policy};
use augbench_host::child::last_lines;
use augbench_host::fsutil::write_atomic;

use crate::engine::TaskStatus;
use crate::record::{CloudRun, JobRecord};
use crate::request::Kind;

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

pub(crate) fn task_dir(out: &Path, index: u64) -> PathBuf {
    naming::cloud_dir(out).join("tasks").join(index.to_string())
}

/// Fetches and merges; `states` are the Batch task states where gcloud answered.
pub fn fetch(out: &Path, run: &CloudRun) -> anyhow::Result<FetchReport> {
    let local = naming::cloud_dir(out).join("tasks");
    std::fs::create_dir_all(&local).with_context(|| format!("creating {}", local.display()))?;
    let store = run.engine().store();
    store
        .mirror(&format!("{}/tasks", run.run_uri), &local)
        .context("fetching the run's task folders")?;
    let cfg_path = local.join("..").join(naming::RESOLVED_CONFIG_FILE);
    store
        .get(
            &format!("{}/bundle/{}", run.run_uri, naming::RESOLVED_CONFIG_FILE),
            &cfg_path,
        )
        .context("fetching the run's resolved config")?;
    let states = task_states(run);
    if run.kind == Kind::Production {
        let p = augbench_core::production::load(&cfg_path)?;
        return crate::production_merge::merge(out, run, &p, &states);
    }
    let cfg = RunConfig::load(&cfg_path)?;
    merge(out, run, &cfg, &states)
}

/// The shards whose task wrote `DONE.json` (merged) and the others, each with why.
pub(crate) fn classify(
    out: &Path,
    run: &CloudRun,
    states: &BTreeMap<u64, TaskStatus>,
) -> FetchReport {
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

/// Task states by index (a resubmission's over the job the task failed in), or none where the
/// engine does not answer (the files still decide).
pub fn task_states(run: &CloudRun) -> BTreeMap<u64, TaskStatus> {
    crate::follow::newest_states(run, run.engine().as_ref()).unwrap_or_default()
}

/// Submits each ended task without `DONE.json` again, alone (one new job per job they failed
/// in), and records the new jobs in the run record; returns (task index, new job id).
pub fn resubmit_failed(
    out: &Path,
    run: &mut CloudRun,
    missing: &[Missing],
) -> anyhow::Result<Vec<(u64, String)>> {
    let engine = run.engine();
    let cloud_dir = naming::cloud_dir(out);
    let ended: HashSet<u64> = missing
        .iter()
        .filter(|m| m.ended)
        .map(|m| m.index)
        .collect();
    let mut by_job: BTreeMap<String, (crate::job::JobRef, Vec<_>)> = BTreeMap::new();
    for (job, shard) in run.shards() {
        if ended.contains(&shard.index) {
            let entry = by_job
                .entry(job.name.clone())
                .or_insert((job.clone(), Vec::new()));
            entry.1.push(shard.clone());
        }
    }
    let mut sent = Vec::new();
    for (job, shards) in by_job.into_values() {
        let indices: Vec<u64> = shards.iter().map(|s| s.index).collect();
        let new = engine.resubmit(&job, &indices, &cloud_dir)?;
        let id = new.id.clone().unwrap_or_default();
        sent.extend(indices.iter().map(|i| (*i, id.clone())));
        run.jobs.push(JobRecord { job: new, shards });
    }
    run.write(out)?;
    Ok(sent)
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

pub(crate) fn write_if_changed(
    path: &Path,
    bytes: &[u8],
    report: &mut FetchReport,
) -> anyhow::Result<()> {
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
