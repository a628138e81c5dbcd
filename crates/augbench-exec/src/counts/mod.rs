//! `measure: instructions`: a micro job whose worker runs under callgrind (`valgrind`), one
//! library after another. Per worker process and transform: prepare, the output contract check,
//! one warm pass, then the counted loop over the row's items (the first loaded ones, at most
//! `policy::COUNT_MAX_ITEMS`); the counts of every process merge into the row's `instructions` record
//! (`augbench_core::counts`), stamped with the hash of the counted items (`items`) and the SIMD
//! note. Time fields stay empty: time under Valgrind is not a speed.

pub mod items;
pub mod valgrind;

use std::path::Path;
use std::sync::atomic::AtomicBool;

use augbench_catalog::registry::TransformSpec;
use augbench_core::counts::{COUNT_METHOD, InstructionRecord};
use augbench_core::results::{CONTRACT_ERROR, Status, TransformResult};
use augbench_core::{Schedule, policy};
use indicatif::MultiProgress;

use crate::job::{JobInput, JobOutcome, not_in_registry, spec_for, stopped_by_user};
use crate::lane::{Lane, Sweep, over_processes};
use crate::micro::{MicroSettings, Session, prepare_request, settle};
use crate::progress::steps_bar;
use augbench_protocol::client::WorkerError;
use augbench_protocol::protocol::TimeRequest;

/// What a counted run needs besides the job: Valgrind's version and the dumps folder the job's
/// wrapped worker command writes into.
pub struct Counting<'a> {
    pub tool: &'a str,
    pub dumps: &'a Path,
}

/// A counted run's state across its jobs: Valgrind's version and the folder callgrind dumps into
/// (emptied as it is read, removed at the end).
pub struct CountRun {
    tool: String,
    dumps: tempfile::TempDir,
}

impl CountRun {
    /// `Some` for a config with `measure: instructions` (Valgrind found and new enough).
    pub fn of(cfg: &augbench_core::RunConfig) -> anyhow::Result<Option<CountRun>> {
        if cfg.execution.measure != Some(augbench_core::Measure::Instructions) {
            return Ok(None);
        }
        let version = valgrind::version()?;
        let dumps = tempfile::Builder::new()
            .prefix("augbench-callgrind-")
            .tempdir()
            .map_err(|e| anyhow::anyhow!("creating a folder for callgrind's dumps: {e}"))?;
        Ok(Some(CountRun {
            tool: format!("{version} callgrind"),
            dumps,
        }))
    }

    /// A job's worker command under callgrind, dumping into this run's folder.
    pub fn wrap(
        &self,
        cmd: &augbench_host::child::CommandLine,
    ) -> augbench_host::child::CommandLine {
        valgrind::wrap(cmd, self.dumps.path())
    }

    pub fn run_job(
        &self,
        input: &JobInput<'_>,
        mp: &MultiProgress,
        stop: &AtomicBool,
    ) -> anyhow::Result<JobOutcome> {
        let counting = Counting {
            tool: &self.tool,
            dumps: self.dumps.path(),
        };
        // Only the items a row can count are loaded: decoding under Valgrind is slow too.
        let keep = input.paths.len().min(policy::COUNT_MAX_ITEMS as usize);
        let input = JobInput {
            paths: &input.paths[..keep],
            dataset: input.dataset.clone(),
            command: input.command.clone(),
            equivalence: input.equivalence.clone(),
            ..*input
        };
        run_job(&input, &counting, mp, stop)
    }
}

/// Runs one job's transforms under Valgrind, `processes` worker processes each.
pub fn run_job(
    input: &JobInput<'_>,
    counting: &Counting<'_>,
    mp: &MultiProgress,
    stop: &AtomicBool,
) -> anyhow::Result<JobOutcome> {
    let mut lane = Lane::open(input, Schedule::Sequential, mp)?;
    valgrind::instrument(lane.w.worker.pid())?;
    let processes = input
        .cfg
        .execution
        .processes
        .unwrap_or(policy::COUNT_PROCESSES);
    let names = lane.names();
    let label = format!("Instruction counts ({}, under valgrind)", input.job.library);
    let bar = steps_bar(mp, label, names.len() as u64 * processes);
    let stamp = Stamp {
        note: simd_note(&lane),
        items_hash: items::hash(input.paths, &lane.w.load, row_items(lane.w.load.count))?,
    };
    let sweep = Sweep {
        names: &names,
        processes,
        bar: &bar,
        mp,
        stop,
    };
    let interrupted = over_processes(
        &mut lane,
        sweep,
        |lane| valgrind::instrument(lane.w.worker.pid()),
        |lane, name, p| {
            bar.set_message(format!("{name}: process {}", p + 1));
            count_one(lane, name, counting, &stamp, mp, stop)
        },
    )?;
    lane.shutdown();
    Ok(JobOutcome {
        results: lane.rec.close(),
        interrupted,
    })
}

/// What every counted row of a job carries besides its counts: the SIMD note and the hash of
/// the items it counted (the same for every row and process of the job).
struct Stamp {
    note: Option<String>,
    items_hash: Option<String>,
}

/// Counts one transform in the lane's current process and records the merged row. False when
/// the user interrupted.
fn count_one(
    lane: &mut Lane<'_>,
    name: &str,
    counting: &Counting<'_>,
    stamp: &Stamp,
    mp: &MultiProgress,
    stop: &AtomicBool,
) -> anyhow::Result<bool> {
    let Some(spec) = spec_for(&lane.w, name) else {
        lane.rec.record(name, not_in_registry(name))?;
        return Ok(true);
    };
    let set = lane.settings();
    let loaded = lane.w.load.count;
    let counted = crate::time_split::part("counted rows", || {
        count_transform(&mut lane.w.worker, &spec, &set, loaded, counting)
    });
    let mut result = match counted {
        Err(_) if stopped_by_user(stop) => return Ok(false),
        Err(e) => {
            lane.record_loss(&spec, e, mp)??;
            valgrind::instrument(lane.w.worker.pid())?;
            return Ok(true);
        }
        Ok(r) => r,
    };
    if let Some(rec) = result.instructions.as_mut() {
        rec.note.clone_from(&stamp.note);
        rec.items_hash.clone_from(&stamp.items_hash);
    }
    let merged = merge(lane.rec.acc.get(name), result);
    lane.rec.amend(name, merged)?;
    Ok(true)
}

/// One process's counts of one transform: a row with a one-process `instructions` record, or
/// the unsupported/error row the worker's answer makes; a lost worker is `Err`.
pub fn count_transform(
    s: &mut dyn Session,
    spec: &TransformSpec,
    set: &MicroSettings,
    loaded: u64,
    counting: &Counting<'_>,
) -> Result<TransformResult, WorkerError> {
    let params = serde_json::to_value(&spec.params).unwrap_or_default();
    let timeout = set.request_timeout;
    let prepared = settle(
        s.prepare(prepare_request(spec, &params, set), timeout),
        &params,
    )?;
    if let Err(r) = prepared {
        return Ok(r);
    }
    let checked = match settle(s.check(timeout), &params)? {
        Ok(c) => c,
        Err(r) => return Ok(r),
    };
    if let Err(why) = augbench_protocol::contract::check(spec, &checked) {
        return Ok(TransformResult::failed(params, CONTRACT_ERROR, why));
    }
    let counted = |s: &mut dyn Session, count: u64, markers: bool| {
        let before = valgrind::parts(counting.dumps).map_err(lost)?;
        let req = TimeRequest {
            start: 0,
            count,
            loops: 1,
            markers,
        };
        let ns = settle(s.time(req, timeout), &params)?;
        let counts = valgrind::new_counts(counting.dumps, &before).map_err(lost)?;
        Ok::<_, WorkerError>(ns.map(|ns| (ns, counts)))
    };
    let n = row_items(loaded);
    if let Err(r) = counted(s, n, false)? {
        return Ok(r);
    }
    let (ns, counts) = match counted(s, n, true)? {
        Ok(v) => v,
        Err(r) => return Ok(r),
    };
    if counts.len() != 1 {
        return Ok(markers_failed(&params, counts.len()));
    }
    let mut record = InstructionRecord {
        tool: counting.tool.to_string(),
        method: COUNT_METHOD.to_string(),
        items: n,
        ..Default::default()
    };
    let wall: Vec<f64> = ns.iter().map(|v| *v as f64 / 1e9).collect();
    record.add_process(&counts, &wall);
    let mut r = TransformResult::not_measured(Status::Ok, params, String::new());
    r.supported = true;
    r.reason = None;
    r.output_shape = Some(checked.output_shape.clone());
    r.output_dtype = Some(checked.output_dtype.clone());
    r.instructions = Some(record);
    Ok(r)
}

/// Items per counted loop: the first loaded items, at most `policy::COUNT_MAX_ITEMS` (pure; never
/// from a measurement, so every run and variant of the same media counts the same items).
pub fn row_items(loaded: u64) -> u64 {
    loaded.clamp(1, policy::COUNT_MAX_ITEMS)
}

/// A counted request that did not leave exactly one dump per loop: something else in the worker
/// calls the markers, so its counts cannot be separated.
fn markers_failed(params: &serde_json::Value, dumps: usize) -> TransformResult {
    let reason = format!(
        "a counted loop left {dumps} callgrind dumps instead of 1: the library itself calls getpgrp() or getppid(), so its loops cannot be counted apart"
    );
    TransformResult::not_measured(Status::Error, params.clone(), reason)
}

/// Callgrind's dumps could not be read: the counts of this worker are lost with it.
fn lost(e: anyhow::Error) -> WorkerError {
    WorkerError::Protocol {
        label: "callgrind".into(),
        op: "time".into(),
        problem: format!("{e:#}"),
        line: String::new(),
    }
}

/// The row so far (earlier processes) with this process's counts added.
fn merge(previous: Option<&TransformResult>, new: TransformResult) -> TransformResult {
    let (Some(prev), Some(rec)) = (previous, new.instructions.as_ref()) else {
        return new;
    };
    let Some(mut acc) = prev.instructions.clone() else {
        return new;
    };
    let wall = rec.wall_seconds.clone();
    acc.add_process(&rec.counts, &wall);
    let mut merged = prev.clone();
    merged.instructions = Some(acc);
    merged
}

/// A note when the worker under Valgrind sees fewer SIMD features than the machine has: a
/// library that dispatches on them counts a narrower path than it runs natively.
fn simd_note(lane: &Lane<'_>) -> Option<String> {
    let seen = lane.w.hello.cpu_features.as_ref()?;
    let machine = augbench_host::machine::card().simd.unwrap_or_default();
    let missing: Vec<&String> = machine
        .iter()
        .filter(|f| !seen.contains(f) && f.as_str() != "neon")
        .collect();
    (!missing.is_empty()).then(|| {
        let names: Vec<&str> = missing.iter().map(|s| s.as_str()).collect();
        format!(
            "under Valgrind the worker's CPU detection does not see {} (the machine has it): a library that dispatches on it counts a narrower code path than it runs natively",
            names.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_items_are_the_first_loaded_items_up_to_the_cap() {
        assert_eq!(row_items(100), policy::COUNT_MAX_ITEMS);
        assert_eq!(row_items(3), 3);
        assert_eq!(row_items(0), 1);
    }
}
