//! A job's results as they come in: merged across worker processes and rewritten atomically
//! after every change, so an interrupt keeps what was measured; what `--resume` keeps from an
//! earlier run; and the metadata every result file carries.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context;
use augbench_catalog::recipe::Recipe;
use augbench_core::plan::Job;
use augbench_core::results::{
    BenchmarkParams, Metadata, RESULT_FORMAT_VERSION, ResultFile, Status, TimingInfo,
    TransformResult,
};
use augbench_core::{Mode, RunConfig, Schedule, policy};
use indicatif::MultiProgress;

use crate::job::{JobInput, Loaded};
use augbench_host::fsutil::write_atomic;
use augbench_protocol::protocol::{HelloResponse, LoadResponse};

pub(crate) struct Recorder<'a> {
    path: &'a Path,
    pub file: ResultFile,
    /// Each transform merged across the processes so far.
    pub acc: BTreeMap<String, TransformResult>,
    /// The earlier run's results that `--resume` may keep (same run shape).
    previous: Option<ResultFile>,
}

impl<'a> Recorder<'a> {
    /// The job's file, written at once (empty, or with nothing but its metadata).
    pub fn open(
        input: &'a JobInput<'a>,
        w: &Loaded,
        schedule: Schedule,
        mp: &MultiProgress,
    ) -> anyhow::Result<Recorder<'a>> {
        let path = input.job.output_file.as_path();
        let previous = if input.cfg.execution.resume == Some(true) {
            read_previous(path)?
        } else {
            None
        };
        let file = ResultFile {
            metadata: metadata(input, &w.hello, &w.load, &w.device, schedule),
            results: BTreeMap::new(),
        };
        let previous = previous.filter(|p| same_run_shape(p, &file, mp));
        let rec = Recorder {
            path,
            file,
            acc: BTreeMap::new(),
            previous,
        };
        rec.save()?;
        Ok(rec)
    }

    /// A finished result of the earlier run `--resume` may keep for `name` (see `reusable`).
    pub fn reusable(&self, name: &str, processes: u64) -> Option<TransformResult> {
        reusable(self.previous.as_ref()?, name, processes)
    }

    /// Keeps an earlier run's result as it is (`--resume`); written by the next `save`. A
    /// later process of the transform (a precision target's extra one) merges with it.
    pub fn keep(&mut self, name: &str, r: TransformResult) {
        self.acc.insert(name.to_string(), r.clone());
        self.file.results.insert(name.to_string(), r);
    }

    /// Records a transform's result of one process, merged with the earlier processes', and
    /// rewrites the file at once: a run interrupted in a later process keeps what the earlier
    /// ones measured (`process_runs` shows how many contributed; `--resume` measures a transform
    /// again until every process has).
    pub fn record(&mut self, name: &str, r: TransformResult) -> anyhow::Result<()> {
        merge(&mut self.acc, name, r);
        self.file
            .results
            .insert(name.to_string(), self.acc[name].clone());
        if self.file.metadata.mode == Mode::Pipeline.to_string() {
            // The ceiling row may come after the rows (a list that places it last): then each
            // row measured so far is compared with it now.
            let names: Vec<String> = if *name == Recipe::get().ceiling {
                self.acc.keys().cloned().collect()
            } else {
                vec![name.to_string()]
            };
            for n in names {
                flag_above_ceiling(&mut self.acc, &n);
                self.file.results.insert(n.clone(), self.acc[&n].clone());
            }
        }
        self.save()
    }

    /// Replaces the recorded result of `name` (annotations that need every library's runs).
    pub fn amend(&mut self, name: &str, r: TransformResult) -> anyhow::Result<()> {
        self.acc.insert(name.to_string(), r.clone());
        self.file.results.insert(name.to_string(), r);
        self.save()
    }

    pub fn save(&self) -> anyhow::Result<()> {
        write_results(self.path, &self.file)
    }

    /// The job's file, with the run's time split, this library's time per row and the machine's
    /// state at its end added (and written).
    pub fn close(mut self) -> ResultFile {
        let m = &mut self.file.metadata;
        m.time_split = crate::time_split::snapshot();
        m.time_by_row = crate::time_split::rows_of(&m.library);
        m.system_info.after = Some(augbench_host::machine::state());
        if let Err(e) = self.save() {
            eprintln!(
                "warning: the time split and machine state after the job were not written: {e:#}"
            );
        }
        self.file
    }
}

/// Both processes' CPU times, or none when either side lacks one for a run.
fn merged_cpu_times(old: &TransformResult, new: &TransformResult) -> Vec<f64> {
    let whole = |r: &TransformResult| r.cpu_times.len() == r.throughputs.len();
    if !(whole(old) && whole(new)) {
        return Vec::new();
    }
    old.cpu_times
        .iter()
        .chain(&new.cpu_times)
        .copied()
        .collect()
}

/// Combines measurements of the same transform from several worker processes.
fn merge(acc: &mut BTreeMap<String, TransformResult>, name: &str, new: TransformResult) {
    let merged = match acc.remove(name) {
        Some(old) if old.status == Some(Status::Ok) && new.status == Some(Status::Ok) => {
            let throughputs: Vec<f64> = old
                .throughputs
                .iter()
                .chain(&new.throughputs)
                .copied()
                .collect();
            let times: Vec<f64> = old.times.iter().chain(&new.times).copied().collect();
            let cpu_times = merged_cpu_times(&old, &new);
            let mut process_runs = old.process_runs.clone();
            if process_runs.is_empty() {
                process_runs.push(old.throughputs.len() as u64);
            }
            process_runs.push(new.throughputs.len() as u64);
            let groups: Vec<usize> = process_runs.iter().map(|n| *n as usize).collect();
            let summary = augbench_stats::summarize_grouped(&throughputs, &groups);
            let mut m = TransformResult::measured(old.params.clone(), &summary, throughputs, times);
            m.process_runs = process_runs;
            m.cpu_times = cpu_times;
            m.run_chunks = old.run_chunks.max(new.run_chunks);
            m.warmup_iterations = old.warmup_iterations + new.warmup_iterations;
            m.warmup_full_passes = match (old.warmup_full_passes, new.warmup_full_passes) {
                (Some(a), Some(b)) => Some(a + b),
                _ => None,
            };
            m.warmup_cold_ratio = match (old.warmup_cold_ratio, new.warmup_cold_ratio) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            };
            m.slow_threshold_sec_per_item = old.slow_threshold_sec_per_item;
            m.slow_preflight_items = old.slow_preflight_items;
            m.preflight_sec_per_item = old.preflight_sec_per_item;
            m.output_shape = old.output_shape;
            m.output_dtype = old.output_dtype;
            m.output_contiguous = old.output_contiguous.or(new.output_contiguous);
            m.force_share = old.force_share.or(new.force_share);
            m.rounds_id = old.rounds_id;
            m.pipeline = merge_pipeline(old.pipeline, new.pipeline);
            m.preflight_throughput = old.preflight_throughput;
            m.gpu_memory = old.gpu_memory.or(new.gpu_memory);
            // Measuring to a precision: the latest process's record counts every round so far.
            m.precision = new.precision.or(old.precision);
            m.warnings = old.warnings;
            for w in new.warnings {
                if !m.warnings.contains(&w) {
                    m.warnings.push(w);
                }
            }
            crate::pipeline::flag_drift(&mut m);
            m
        }
        // A later process that turned slow or failed does not erase the earlier processes' runs:
        // they stay, flagged; `--resume` measures the transform again (too few processes).
        Some(mut old) if old.status == Some(Status::Ok) => {
            let status = new.status.map_or("unknown".to_string(), |s| s.to_string());
            let why = new.reason.unwrap_or_default();
            old.unstable = true;
            old.unstable_reason = Some(format!("a later worker process ended {status}: {why}"));
            old
        }
        _ => new,
    };
    acc.insert(name.to_string(), merged);
}

/// Marks pipeline row `name` `unstable` when its figure reads above its ceiling row's beyond both
/// intervals (`augbench_stats::ceiling`). Only for rows without the ceiling's windows of their own rounds
/// (the sequential schedule): those are paired with them instead (`rounds::annotate`).
fn flag_above_ceiling(acc: &mut BTreeMap<String, TransformResult>, name: &str) {
    let ceiling_name = &Recipe::get().ceiling;
    let ceiling = acc
        .get(ceiling_name.as_str())
        .and_then(TransformResult::headline);
    let (Some(ceiling), Some(r)) = (ceiling, acc.get_mut(name)) else {
        return;
    };
    if r.pipeline
        .as_ref()
        .is_some_and(|p| !p.ceiling_throughputs.is_empty())
    {
        return;
    }
    let noted = r
        .unstable_reason
        .as_deref()
        .is_some_and(|s| s.contains("above its ceiling"));
    let why = r
        .headline()
        .and_then(|h| augbench_stats::ceiling::above_ceiling(&h, &ceiling, ceiling_name));
    if let Some(why) =
        why.filter(|_| name != ceiling_name && !noted && r.status == Some(Status::Ok))
    {
        r.add_unstable(why);
    }
}

/// A transform's loader details across processes: the first process's start, every window.
fn merge_pipeline(
    old: Option<augbench_core::results::PipelineDetail>,
    new: Option<augbench_core::results::PipelineDetail>,
) -> Option<augbench_core::results::PipelineDetail> {
    let (mut old, new) = match (old, new) {
        (Some(o), Some(n)) => (o, n),
        (o, n) => return o.or(n),
    };
    // The ceiling's windows pair with the row's only while every process has one beside each.
    let aligned =
        |p: &augbench_core::results::PipelineDetail| p.ceiling_throughputs.len() == p.batches.len();
    if aligned(&old) && aligned(&new) {
        old.ceiling_throughputs.extend(&new.ceiling_throughputs);
    } else {
        old.ceiling_throughputs.clear();
    }
    old.ceiling = None;
    old.batches.extend(new.batches);
    old.half_rates.extend(new.half_rates);
    old.drift = old.drift.max(new.drift);
    Some(old)
}

/// `--resume` keeps earlier results only when they were measured with the same run shape
/// (items, runs, channels, timing settings, thread policy, device); otherwise it says so.
fn same_run_shape(prev: &ResultFile, now: &ResultFile, mp: &MultiProgress) -> bool {
    let same = prev.metadata.benchmark_params == now.metadata.benchmark_params
        && prev.metadata.device == now.metadata.device
        && prev.metadata.pipeline == now.metadata.pipeline;
    if !same {
        // Through `suspend`, so the line shows with or without a terminal and never tears a bar.
        mp.suspend(|| {
            eprintln!(
                "resume: earlier {} results were measured with other settings; measuring every transform again",
                now.metadata.library
            )
        });
    }
    same
}

/// A previous result `--resume` keeps: finished, with the same parameters, and (when measured)
/// from every configured process.
fn reusable(prev: &ResultFile, name: &str, processes: u64) -> Option<TransformResult> {
    let r = prev.results.get(name)?;
    let spec = augbench_catalog::recipe::Recipe::lookup(name)?;
    let params = serde_json::to_value(&spec.params).ok()?;
    let measured_in = (r.process_runs.len() as u64).max(1);
    let complete = r.status != Some(Status::Ok) || measured_in >= processes;
    (r.is_finished() && complete && r.params == params).then(|| r.clone())
}

fn read_previous(path: &Path) -> anyhow::Result<Option<ResultFile>> {
    if !path.exists() {
        return Ok(None);
    }
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let file = serde_json::from_str(&text).with_context(|| {
        format!(
            "{} is not a result file this augbench can resume; move it away or drop --resume",
            path.display()
        )
    })?;
    Ok(Some(file))
}

pub fn write_results(path: &Path, file: &ResultFile) -> anyhow::Result<()> {
    let json = serde_json::to_vec_pretty(file).context("serializing results")?;
    write_atomic(path, &json)
}

fn metadata(
    input: &JobInput<'_>,
    hello: &HelloResponse,
    load: &LoadResponse,
    device: &str,
    schedule: Schedule,
) -> Metadata {
    let cfg = input.cfg;
    let mut dataset = input.dataset.clone();
    dataset.skipped += load.skipped.len() as u64;
    dataset.converted += load.converted;
    Metadata {
        format_version: RESULT_FORMAT_VERSION,
        system_info: augbench_host::system::system_info(&hello.runtime),
        library_versions: hello.versions.clone(),
        thread_settings: thread_settings(hello),
        environment: augbench_host::system::environment_info(),
        gpu: None,
        dataset,
        timing: timing(input, device),
        scenario: input.job.scenario.clone(),
        mode: input.job.mode.to_string(),
        library: input.job.library.clone(),
        device: device.to_string(),
        benchmark_params: benchmark_params(cfg, input.job, load.count, schedule),
        run_config: serde_json::to_value(cfg).unwrap_or_default(),
        pipeline: (input.job.mode == Mode::Pipeline)
            .then(|| crate::pipeline::info(input, hello, device)),
        equivalence: input.equivalence.clone(),
        time_split: None,
        time_by_row: Vec::new(),
        variant: input
            .job
            .variant
            .as_ref()
            .map(augbench_core::variant::VariantRecord::of),
        targets: targets_info(input, load),
    }
}

/// Target rows: the set, the library that moved it, the annotations and what was loaded.
fn targets_info(
    input: &JobInput<'_>,
    load: &LoadResponse,
) -> Option<augbench_core::results::TargetsInfo> {
    let (set, media) = input.job.targets.as_ref().zip(input.targets)?;
    let loaded = load.targets.clone().unwrap_or_default();
    Some(augbench_core::results::TargetsInfo {
        set: set.to_string(),
        library: input.job.adapter.clone(),
        annotations: media.annotations.clone(),
        items: load.count,
        items_without_targets: media.without,
        skipped_annotations: media.skipped_annotations,
        boxes: loaded.boxes,
        keypoints: loaded.keypoints,
    })
}

/// The thread settings a worker reported in its `hello`, as text.
pub(crate) fn thread_settings(hello: &HelloResponse) -> BTreeMap<String, String> {
    hello
        .threads
        .iter()
        .map(|(k, v)| {
            (
                k.clone(),
                v.as_str().map_or_else(|| v.to_string(), str::to_string),
            )
        })
        .collect()
}

/// The run's shape as a result file records it, for a job that measured `count` items.
pub(crate) fn benchmark_params(
    cfg: &RunConfig,
    job: &Job,
    count: u64,
    schedule: Schedule,
) -> BenchmarkParams {
    let e = &cfg.execution;
    BenchmarkParams {
        num_items: count,
        num_runs: e.num_runs.unwrap_or_default(),
        processes: e.processes.unwrap_or(1),
        channels: cfg.data.num_channels.unwrap_or(policy::DEFAULT_CHANNELS),
        clip_length: (job.media == augbench_core::Media::Video)
            .then_some(cfg.data.clip_length.unwrap_or_default()),
        workers: e.workers.unwrap_or_default(),
        batch_size: e.batch_size.unwrap_or_default(),
        micro_batch: e.micro_batch.filter(|b| *b > policy::DEFAULT_MICRO_BATCH),
        min_time: e.min_time.unwrap_or_default(),
        thread_policy: e
            .thread_policy
            .map(|t| {
                serde_json::to_value(t)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default()
            })
            .unwrap_or_default(),
        precision_target: e.precision,
        transform_budget_sec: e.transform_budget_sec,
        slow_threshold_sec_per_item: e.slow_threshold_sec_per_item.unwrap_or_default(),
        slow_preflight_items: e.slow_preflight_items.unwrap_or_default(),
        disable_slow_skip: e.disable_slow_skip.unwrap_or_default(),
        warmup_window: e.warmup.window.unwrap_or_default(),
        warmup_threshold: e.warmup.threshold.unwrap_or_default(),
        max_warmup_iterations: e.warmup.max_passes.unwrap_or_default(),
        warmup_full_pass: e.warmup.full_pass.map(|f| f.to_string()),
        schedule: Some(schedule.to_string()),
        measure: e
            .measure
            .filter(|m| *m == augbench_core::Measure::Instructions)
            .map(|m| m.to_string()),
    }
}

/// What the clock covers, by mode (and pipeline scope).
fn timing(input: &JobInput<'_>, device: &str) -> TimingInfo {
    let backend = input.job.backend.to_string();
    if input.job.mode == Mode::Pipeline {
        return crate::pipeline::timing(input, backend, device);
    }
    TimingInfo {
        backend,
        measurement_scope: "transform".to_string(),
        includes: vec![
            "transform".into(),
            "output materialization (contiguous, device sync)".into(),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn measured(throughputs: &[f64]) -> TransformResult {
        let s = augbench_stats::summarize(throughputs);
        TransformResult::measured(
            serde_json::Value::Null,
            &s,
            throughputs.to_vec(),
            vec![0.1; throughputs.len()],
        )
    }

    #[test]
    fn a_row_above_its_ceiling_beyond_the_intervals_is_marked_with_why() {
        let ceiling = Recipe::get().ceiling.clone();
        let mut acc = BTreeMap::new();
        acc.insert(
            ceiling.clone(),
            measured(&[700.0, 730.0, 720.0, 710.0, 725.0]),
        );
        acc.insert(
            "HorizontalFlip".into(),
            measured(&[838.0, 840.0, 836.0, 839.0, 837.0]),
        );
        acc.insert(
            "Rotate".into(),
            measured(&[400.0, 410.0, 405.0, 402.0, 408.0]),
        );
        for name in ["HorizontalFlip", "Rotate"] {
            flag_above_ceiling(&mut acc, name);
            flag_above_ceiling(&mut acc, name); // said once, however often it is recorded
        }
        let flip = &acc["HorizontalFlip"];
        let why = flip.unstable_reason.as_deref().unwrap_or_default();
        assert!(
            flip.unstable && why.starts_with("above its ceiling: 840 img/s"),
            "{why}"
        );
        assert_eq!(why.matches("above its ceiling").count(), 1, "{why}");
        assert!(
            !acc["Rotate"].unstable,
            "{:?}",
            acc["Rotate"].unstable_reason
        );
        // Without a ceiling row (not measured, or not pipeline) nothing is compared.
        let mut alone = BTreeMap::new();
        alone.insert("HorizontalFlip".into(), measured(&[838.0, 840.0]));
        flag_above_ceiling(&mut alone, "HorizontalFlip");
        assert!(!alone["HorizontalFlip"].unstable);
        // A row paired with the ceiling of its own rounds is judged there, not against the row.
        let mut paired = measured(&[838.0, 840.0, 836.0]);
        paired.pipeline = Some(detail(3, &[900.0, 905.0, 899.0]));
        acc.insert("HorizontalFlip".into(), paired);
        flag_above_ceiling(&mut acc, "HorizontalFlip");
        assert!(!acc["HorizontalFlip"].unstable);
    }

    fn detail(windows: usize, ceiling: &[f64]) -> augbench_core::results::PipelineDetail {
        crate::pipeline::test_detail(windows, Vec::new(), ceiling)
    }

    #[test]
    fn the_ceiling_windows_join_across_processes_only_while_each_has_one_per_window() {
        let join = |old: &[f64], new: &[f64]| {
            let mut acc = BTreeMap::new();
            for ceiling in [old, new] {
                let mut r = measured(&[500.0, 510.0]);
                r.pipeline = Some(detail(2, ceiling));
                merge(&mut acc, "Rotate", r);
            }
            acc.remove("Rotate").and_then(|r| r.pipeline).unwrap()
        };
        let both = join(&[600.0, 610.0], &[620.0, 630.0]);
        assert_eq!(both.ceiling_throughputs, [600.0, 610.0, 620.0, 630.0]);
        assert_eq!(both.batches.len(), 4);
        // A process whose companion ended early breaks the pairing for the whole row.
        assert!(
            join(&[600.0, 610.0], &[620.0])
                .ceiling_throughputs
                .is_empty()
        );
        assert!(join(&[], &[620.0, 630.0]).ceiling_throughputs.is_empty());
    }
}
