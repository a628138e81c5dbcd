//! Runs one job of the plan: starts the library's worker, loads media once, measures every
//! transform with the micro methodology, and rewrites the job's result file atomically after each
//! transform. A lost worker costs one transform (`error` with its stderr tail) and is replaced.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::Context;
use augbench_core::plan::Job;
use augbench_core::registry::Registry;
use augbench_core::results::{
    BenchmarkParams, DatasetInfo, Metadata, RESULT_FORMAT_VERSION, ResultFile, Status, TimingInfo,
    TransformResult,
};
use augbench_core::{RunConfig, policy, stats};
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};

use crate::client::{Worker, WorkerCommand, WorkerError};
use crate::fsutil::write_atomic;
use crate::micro::{self, MicroSettings, Phase};
use crate::protocol::{HelloResponse, LoadRequest, LoadResponse, Request};

/// Everything one job needs besides the plan entry.
pub struct JobInput<'a> {
    pub cfg: &'a RunConfig,
    pub job: &'a Job,
    pub command: WorkerCommand,
    pub paths: &'a [String],
    pub dataset: DatasetInfo,
}

pub struct JobOutcome {
    pub results: ResultFile,
    pub interrupted: bool,
}

/// A started worker with its media loaded.
struct Loaded {
    worker: Worker,
    hello: HelloResponse,
    load: LoadResponse,
}

pub fn run_job(
    input: &JobInput<'_>,
    mp: &MultiProgress,
    stop: &AtomicBool,
) -> anyhow::Result<JobOutcome> {
    let job = input.job;
    let previous = if input.cfg.execution.resume == Some(true) {
        read_previous(&job.output_file)?
    } else {
        None
    };
    let mut w = start_worker(input, mp)?;
    let mut file = ResultFile {
        metadata: metadata(input, &w.hello, &w.load),
        results: BTreeMap::new(),
    };
    let mut pending: Vec<&str> = Vec::new();
    for t in &job.transforms {
        match previous.as_ref().and_then(|p| reusable(p, t)) {
            Some(r) => {
                file.results.insert(t.clone(), r);
            }
            None => pending.push(t),
        }
    }
    write_results(&job.output_file, &file)?;
    let processes = input.cfg.execution.processes.unwrap_or(1).max(1);
    let bar = transforms_bar(mp, input, pending.len() as u64 * processes);
    let mut acc: BTreeMap<String, TransformResult> = BTreeMap::new();
    let mut interrupted = false;
    'outer: for p in 0..processes {
        if p > 0 {
            w.worker.shutdown();
            w = start_worker(input, mp)?;
        }
        let todo: Vec<&str> = pending
            .iter()
            .copied()
            .filter(|t| p == 0 || acc.get(*t).is_some_and(|r| r.status == Some(Status::Ok)))
            .collect();
        for t in &todo {
            if stop.load(Ordering::SeqCst) {
                interrupted = true;
                break 'outer;
            }
            bar.set_message(t.to_string());
            let Some(result) = measure_one(input, &mut w, t, &bar, mp, stop)? else {
                interrupted = true;
                break 'outer;
            };
            merge(&mut acc, t, result);
            if p + 1 == processes || acc.get(*t).is_some_and(|r| r.status != Some(Status::Ok)) {
                file.results.insert(t.to_string(), acc[*t].clone());
                write_results(&job.output_file, &file)?;
            }
            bar.inc(1);
        }
    }
    bar.finish_with_message(if interrupted { "interrupted" } else { "done" });
    w.worker.shutdown();
    Ok(JobOutcome {
        results: file,
        interrupted,
    })
}

/// Measures one transform; replaces the worker when it is lost. `None` means interrupted.
fn measure_one(
    input: &JobInput<'_>,
    w: &mut Loaded,
    name: &str,
    bar: &ProgressBar,
    mp: &MultiProgress,
    stop: &AtomicBool,
) -> anyhow::Result<Option<TransformResult>> {
    let Some(spec) = Registry::get().spec(name) else {
        let reason = format!("`{name}` is not in the transform registry");
        return Ok(Some(TransformResult::not_measured(
            Status::Error,
            serde_json::Value::Null,
            reason,
        )));
    };
    let settings = MicroSettings::from_config(input.cfg, &input.job.device.to_string());
    let items = w.load.count;
    let mut on_phase = |ph: Phase| {
        let label = match ph {
            Phase::Check => "check".to_string(),
            Phase::Preflight => "preflight".to_string(),
            Phase::Warmup => "warmup".to_string(),
            Phase::Run(i) => format!("run {i}"),
        };
        bar.set_message(format!("{name}: {label}"));
    };
    match micro::measure(&mut w.worker, spec, items, &settings, &mut on_phase) {
        Ok(r) => Ok(Some(r)),
        Err(_) if stop.load(Ordering::SeqCst) => Ok(None),
        Err(e) => {
            let params = serde_json::to_value(&spec.params).unwrap_or_default();
            let result = TransformResult::not_measured(Status::Error, params, e.to_string());
            *w = start_worker(input, mp)?;
            Ok(Some(result))
        }
    }
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
            let summary = stats::summarize(&throughputs);
            let mut m = TransformResult::measured(old.params.clone(), &summary, throughputs, times);
            m.warmup_iterations = old.warmup_iterations + new.warmup_iterations;
            m.slow_threshold_sec_per_item = old.slow_threshold_sec_per_item;
            m.slow_preflight_items = old.slow_preflight_items;
            m.preflight_sec_per_item = old.preflight_sec_per_item;
            m.output_shape = old.output_shape;
            m.output_dtype = old.output_dtype;
            m
        }
        _ => new,
    };
    acc.insert(name.to_string(), merged);
}

fn start_worker(input: &JobInput<'_>, mp: &MultiProgress) -> anyhow::Result<Loaded> {
    let timeout = Duration::from_secs_f64(
        input
            .cfg
            .execution
            .request_timeout_sec
            .unwrap_or(policy::REQUEST_TIMEOUT_SEC),
    );
    let mut worker = Worker::spawn(&input.command, policy::STDERR_TAIL_LINES)?;
    let hello: HelloResponse = worker
        .call(&Request::Hello, timeout)
        .with_context(|| format!("starting {}", input.command.label))?;
    let channels = input
        .cfg
        .data
        .num_channels
        .unwrap_or(policy::DEFAULT_CHANNELS);
    let media = input.job.media;
    let noun = if media == augbench_core::Media::Video {
        "videos"
    } else {
        "images"
    };
    let spinner = labelled_spinner(
        mp,
        format!("Load {noun} ({}, {channels}ch)", input.job.library),
    );
    let req = LoadRequest {
        media: media.to_string(),
        paths: input.paths.to_vec(),
        channels,
        clip_length: input
            .cfg
            .data
            .clip_length
            .unwrap_or(policy::DEFAULT_CLIP_LENGTH),
        device: input.job.device.to_string(),
    };
    let load: Result<LoadResponse, WorkerError> = worker.call(&Request::Load(req), timeout);
    spinner.finish_and_clear();
    let load = load.with_context(|| format!("{} could not load the media", input.command.label))?;
    if load.count == 0 {
        anyhow::bail!(
            "{} loaded no items: all {} files were skipped (first reason: {})",
            input.command.label,
            input.paths.len(),
            load.skipped
                .first()
                .map_or("none given", |s| s.reason.as_str())
        );
    }
    Ok(Loaded {
        worker,
        hello,
        load,
    })
}

fn labelled_spinner(mp: &MultiProgress, label: String) -> ProgressBar {
    let pb = mp.add(ProgressBar::new_spinner());
    pb.set_style(
        ProgressStyle::with_template("{spinner} {prefix} {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    pb.set_prefix(label);
    pb.enable_steady_tick(Duration::from_millis(120));
    pb
}

fn transforms_bar(mp: &MultiProgress, input: &JobInput<'_>, len: u64) -> ProgressBar {
    let pb = mp.add(ProgressBar::new(len));
    let style = ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} {elapsed} {msg}")
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
    pb.set_style(style);
    pb.set_prefix(format!(
        "Micro transforms ({}, {})",
        input.job.library, input.job.scenario
    ));
    pb
}

/// A finished result from an earlier run with the same parameters, kept by `--resume`.
fn reusable(prev: &ResultFile, name: &str) -> Option<TransformResult> {
    let r = prev.results.get(name)?;
    let spec = Registry::get().spec(name)?;
    let params = serde_json::to_value(&spec.params).ok()?;
    (r.is_finished() && r.params == params).then(|| r.clone())
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

fn metadata(input: &JobInput<'_>, hello: &HelloResponse, load: &LoadResponse) -> Metadata {
    let cfg = input.cfg;
    let e = &cfg.execution;
    let threads = hello
        .threads
        .iter()
        .map(|(k, v)| {
            (
                k.clone(),
                v.as_str().map_or_else(|| v.to_string(), str::to_string),
            )
        })
        .collect();
    let mut dataset = input.dataset.clone();
    dataset.skipped += load.skipped.len() as u64;
    dataset.converted += load.converted;
    Metadata {
        format_version: RESULT_FORMAT_VERSION,
        system_info: crate::system::system_info(&hello.runtime),
        library_versions: hello.versions.clone(),
        thread_settings: threads,
        environment: crate::system::environment_info(),
        gpu: None,
        dataset,
        timing: TimingInfo {
            backend: input.job.backend.to_string(),
            measurement_scope: "transform".to_string(),
            includes: vec![
                "transform".into(),
                "output materialization (contiguous, device sync)".into(),
            ],
        },
        scenario: input.job.scenario.clone(),
        mode: input.job.mode.to_string(),
        library: input.job.library.clone(),
        device: input.job.device.to_string(),
        benchmark_params: BenchmarkParams {
            num_items: load.count,
            num_runs: e.num_runs.unwrap_or_default(),
            processes: e.processes.unwrap_or(1),
            channels: cfg.data.num_channels.unwrap_or(policy::DEFAULT_CHANNELS),
            clip_length: (input.job.media == augbench_core::Media::Video)
                .then_some(cfg.data.clip_length.unwrap_or_default()),
            workers: e.workers.unwrap_or_default(),
            batch_size: e.batch_size.unwrap_or_default(),
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
            precision_target: e.precision_target,
            slow_threshold_sec_per_item: e.slow_threshold_sec_per_item.unwrap_or_default(),
            slow_preflight_items: e.slow_preflight_items.unwrap_or_default(),
            disable_slow_skip: e.disable_slow_skip.unwrap_or_default(),
            warmup_window: e.warmup.window.unwrap_or_default(),
            warmup_threshold: e.warmup.threshold.unwrap_or_default(),
            max_warmup_iterations: e.warmup.max_passes.unwrap_or_default(),
        },
        run_config: serde_json::to_value(cfg).unwrap_or_default(),
    }
}
