//! Runs one job of the plan: starts the library's worker, loads media once, measures every
//! transform with the micro methodology, and rewrites the job's result file atomically after each
//! transform. A lost worker costs one transform (`error` with its stderr tail) and is replaced.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::Context;
use augbench_core::plan::Job;
use augbench_core::registry::{DtypeRule, OutputRule, Registry, TransformSpec};
use augbench_core::results::{
    BenchmarkParams, DatasetInfo, Metadata, RESULT_FORMAT_VERSION, ResultFile, Status, TimingInfo,
    TransformResult,
};
use augbench_core::{Device, RunConfig, UsageError, policy, stats};
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};

use crate::client::{Worker, WorkerCommand, WorkerError};
use crate::fsutil::write_atomic;
use crate::micro::{self, Measuring, MicroSettings, Phase, Started};
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
    /// The device the media live on: the job's device, with `auto` resolved from `hello.devices`.
    device: String,
    /// With `--spec`: the spec file's transform names (`hello.spec.transforms`), measured instead
    /// of the registry's.
    custom: Option<Vec<String>>,
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
        metadata: metadata(input, &w.hello, &w.load, &w.device),
        results: BTreeMap::new(),
    };
    let previous = previous.filter(|p| same_run_shape(p, &file, mp));
    let names = w.custom.clone().unwrap_or_else(|| job.transforms.clone());
    let processes = input.cfg.execution.processes.unwrap_or(1).max(1);
    let mut pending: Vec<&str> = Vec::new();
    for t in &names {
        match previous.as_ref().and_then(|p| reusable(p, t, processes)) {
            Some(r) => {
                file.results.insert(t.clone(), r);
            }
            None => pending.push(t),
        }
    }
    write_results(&job.output_file, &file)?;
    let mut rec = Recorder {
        path: &job.output_file,
        file,
        acc: BTreeMap::new(),
        bar: transforms_bar(mp, input, pending.len() as u64 * processes),
    };
    let mut interrupted = false;
    for p in 0..processes {
        if p > 0 {
            w.worker.shutdown();
            w = start_worker(input, mp)?;
        }
        let todo: Vec<&str> = pending
            .iter()
            .copied()
            .filter(|t| {
                p == 0
                    || rec
                        .acc
                        .get(*t)
                        .is_some_and(|r| r.status == Some(Status::Ok))
            })
            .collect();
        let finished = todo
            .chunks(policy::INTERLEAVED_TRANSFORMS.max(1))
            .try_fold(true, |ok, group| {
                anyhow::Ok(ok && interleaved(input, &mut w, group, &mut rec, mp, stop)?)
            })?;
        if !finished {
            interrupted = true;
            break;
        }
    }
    rec.bar
        .finish_with_message(if interrupted { "interrupted" } else { "done" });
    w.worker.shutdown();
    Ok(JobOutcome {
        results: rec.file,
        interrupted,
    })
}

/// A job's results as they come in: merged across processes, rewritten after each change.
struct Recorder<'a> {
    path: &'a Path,
    file: ResultFile,
    acc: BTreeMap<String, TransformResult>,
    bar: ProgressBar,
}

impl Recorder<'_> {
    /// Records a transform's result of one process, merged with the earlier processes', and
    /// rewrites the file at once: a run interrupted in a later process keeps what the earlier
    /// ones measured (`process_runs` shows how many contributed; `--resume` measures a transform
    /// again until every process has).
    fn record(&mut self, name: &str, r: TransformResult) -> anyhow::Result<()> {
        merge(&mut self.acc, name, r);
        self.file
            .results
            .insert(name.to_string(), self.acc[name].clone());
        write_results(self.path, &self.file)?;
        self.bar.inc(1);
        Ok(())
    }
}

/// What one step of a transform left.
enum Step {
    Interrupted,
    Done(Box<TransformResult>),
    Active,
}

/// Measures `group` on one worker process: each transform is set up and takes its first run,
/// then the other runs come in rounds, one run of every transform per round, so a slow drift of
/// the machine's load spreads over all of them instead of biasing whichever ran during it, and
/// each interval spans the whole measurement. Returns false when interrupted (the group's
/// unfinished transforms are measured again by `--resume`).
fn interleaved(
    input: &JobInput<'_>,
    w: &mut Loaded,
    group: &[&str],
    rec: &mut Recorder<'_>,
    mp: &MultiProgress,
    stop: &AtomicBool,
) -> anyhow::Result<bool> {
    let mut active: Vec<(TransformSpec, Measuring)> = Vec::new();
    for name in group {
        if stop.load(Ordering::SeqCst) {
            return Ok(false);
        }
        let Some(spec) = spec_for(w, name) else {
            let reason = format!("`{name}` is not in the transform registry");
            let r = TransformResult::not_measured(Status::Error, serde_json::Value::Null, reason);
            rec.record(name, r)?;
            continue;
        };
        let started = start_one(input, w, &spec, &rec.bar, mp, stop)?;
        match started {
            Err(Step::Interrupted) => return Ok(false),
            Err(Step::Done(r)) => rec.record(name, *r)?,
            Err(Step::Active) => {}
            Ok(m) => active.push((spec, m)),
        }
    }
    while !active.is_empty() {
        let mut next = Vec::new();
        // With one transform left the worker still holds it between runs.
        let switched = active.len() > 1;
        for (spec, mut m) in active {
            if stop.load(Ordering::SeqCst) {
                return Ok(false);
            }
            let set = MicroSettings::from_config(input.cfg, &w.device);
            if !m.wants_more(&set) {
                rec.record(&spec.name, m.finish())?;
                continue;
            }
            rec.bar
                .set_message(format!("{}: run {}", spec.name, m.runs() + 1));
            match run_once(input, w, &spec, &mut m, switched, mp, stop)? {
                Step::Interrupted => return Ok(false),
                Step::Done(r) => rec.record(&spec.name, *r)?,
                Step::Active => next.push((spec, m)),
            }
        }
        active = next;
    }
    Ok(true)
}

/// The spec a transform is measured against: the registry's, or a spec file's.
fn spec_for(w: &Loaded, name: &str) -> Option<TransformSpec> {
    match &w.custom {
        Some(_) => Some(custom_transform(name)),
        None => Registry::get().spec(name).cloned(),
    }
}

/// Sets up one transform and takes its first run; `Err(step)` when it needs no more runs.
fn start_one(
    input: &JobInput<'_>,
    w: &mut Loaded,
    spec: &TransformSpec,
    bar: &ProgressBar,
    mp: &MultiProgress,
    stop: &AtomicBool,
) -> anyhow::Result<Result<Measuring, Step>> {
    let set = MicroSettings::from_config(input.cfg, &w.device);
    let items = w.load.count;
    let mut on_phase = |ph: Phase| {
        let label = match ph {
            Phase::Check => "check".to_string(),
            Phase::Preflight => "preflight".to_string(),
            Phase::Warmup => "warmup".to_string(),
            Phase::Run(i) => format!("run {i}"),
        };
        bar.set_message(format!("{}: {label}", spec.name));
    };
    let mut m = match micro::start(&mut w.worker, spec, items, &set, &mut on_phase) {
        Ok(Started::Finished(r)) => {
            // A preflight past its wall cap killed the worker: replace it for the next transform.
            if !w.worker.is_alive() {
                *w = start_worker(input, mp)?;
            }
            return Ok(Err(Step::Done(r)));
        }
        Ok(Started::Measuring(m)) => m,
        Err(e) => return lost(input, w, spec, e, mp, stop).map(Err),
    };
    on_phase(Phase::Run(1));
    Ok(match run_once(input, w, spec, &mut m, false, mp, stop)? {
        Step::Active => Ok(m),
        other => Err(other),
    })
}

/// One timed run of a transform that is under way.
fn run_once(
    input: &JobInput<'_>,
    w: &mut Loaded,
    spec: &TransformSpec,
    m: &mut Measuring,
    switched: bool,
    mp: &MultiProgress,
    stop: &AtomicBool,
) -> anyhow::Result<Step> {
    let set = MicroSettings::from_config(input.cfg, &w.device);
    match m.interleaved_run(&mut w.worker, spec, w.load.count, &set, switched) {
        Ok(Ok(())) => Ok(Step::Active),
        Ok(Err(r)) => Ok(Step::Done(Box::new(r))),
        Err(e) => lost(input, w, spec, e, mp, stop),
    }
}

/// A lost worker costs the transform in flight (`error` with the worker's story) and is
/// replaced; when the user interrupted, nothing is recorded.
fn lost(
    input: &JobInput<'_>,
    w: &mut Loaded,
    spec: &TransformSpec,
    e: WorkerError,
    mp: &MultiProgress,
    stop: &AtomicBool,
) -> anyhow::Result<Step> {
    if stop.load(Ordering::SeqCst) {
        return Ok(Step::Interrupted);
    }
    let params = serde_json::to_value(&spec.params).unwrap_or_default();
    let result = TransformResult::not_measured(Status::Error, params, e.to_string());
    *w = start_worker(input, mp)?;
    Ok(Step::Done(Box::new(result)))
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
            let mut process_runs = old.process_runs.clone();
            if process_runs.is_empty() {
                process_runs.push(old.throughputs.len() as u64);
            }
            process_runs.push(new.throughputs.len() as u64);
            let groups: Vec<usize> = process_runs.iter().map(|n| *n as usize).collect();
            let summary = stats::summarize_grouped(&throughputs, &groups);
            let mut m = TransformResult::measured(old.params.clone(), &summary, throughputs, times);
            m.process_runs = process_runs;
            m.warmup_iterations = old.warmup_iterations + new.warmup_iterations;
            m.slow_threshold_sec_per_item = old.slow_threshold_sec_per_item;
            m.slow_preflight_items = old.slow_preflight_items;
            m.preflight_sec_per_item = old.preflight_sec_per_item;
            m.output_shape = old.output_shape;
            m.output_dtype = old.output_dtype;
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

fn start_worker(input: &JobInput<'_>, mp: &MultiProgress) -> anyhow::Result<Loaded> {
    let timeout = MicroSettings::from_config(input.cfg, "cpu").request_timeout;
    let mut worker = Worker::spawn(&input.command, policy::STDERR_TAIL_LINES)?;
    let raw = worker
        .request(&Request::Hello, timeout)
        .with_context(|| format!("starting {}", input.command.label))?;
    let hello: HelloResponse = serde_json::from_value(raw.clone())
        .with_context(|| format!("{} sent a malformed hello: {raw}", input.command.label))?;
    let device = resolve_device(
        input.job.device,
        &worker_devices(&raw),
        &input.command.label,
    )?;
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
        device: device.clone(),
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
        device,
        custom: spec_transforms(&raw),
    })
}

/// `hello.spec.transforms`: present when the worker serves a `--spec` file.
fn spec_transforms(hello: &serde_json::Value) -> Option<Vec<String>> {
    let list = hello.get("spec")?.get("transforms")?.as_array()?;
    Some(
        list.iter()
            .filter_map(|t| t.as_str().map(str::to_string))
            .collect(),
    )
}

/// A spec-file transform: its parameters live in the spec file, so only rank, channels and dtype
/// of the output are checked.
fn custom_transform(name: &str) -> TransformSpec {
    TransformSpec {
        name: name.to_string(),
        params: BTreeMap::new(),
        output: OutputRule::Depends,
        dtype: DtypeRule::Same,
    }
}

/// `hello.devices` (docs/protocol.md); a worker that does not list devices runs on the CPU only.
fn worker_devices(hello: &serde_json::Value) -> Vec<String> {
    match hello.get("devices").and_then(serde_json::Value::as_array) {
        Some(list) => list
            .iter()
            .filter_map(|d| d.as_str().map(str::to_string))
            .collect(),
        None => vec![Device::Cpu.to_string()],
    }
}

/// The device a job runs on: `auto` becomes CUDA where the worker has it and CPU otherwise; an
/// explicit device the worker lacks is a usage error for this job.
pub fn resolve_device(
    requested: Device,
    available: &[String],
    label: &str,
) -> Result<String, UsageError> {
    let has = |d: Device| available.iter().any(|a| *a == d.to_string());
    match requested {
        Device::Auto if has(Device::Cuda) => Ok(Device::Cuda.to_string()),
        Device::Auto => Ok(Device::Cpu.to_string()),
        d if has(d) => Ok(d.to_string()),
        d => Err(UsageError::new(
            format!(
                "{label} cannot run on `{d}`: the worker reports devices [{}] (for CUDA: torch.cuda.is_available() is False)",
                available.join(", ")
            ),
            format!(
                "use `device: auto` to fall back to the CPU, or run on a machine with a {d} device"
            ),
        )),
    }
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

/// `--resume` keeps earlier results only when they were measured with the same run shape
/// (items, runs, channels, timing settings, thread policy, device); otherwise it says so.
fn same_run_shape(prev: &ResultFile, now: &ResultFile, mp: &MultiProgress) -> bool {
    let same = prev.metadata.benchmark_params == now.metadata.benchmark_params
        && prev.metadata.device == now.metadata.device;
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

/// A finished result from an earlier run with the same parameters, kept by `--resume`.
/// A previous result `--resume` keeps: finished, with the same parameters, and (when measured)
/// from every configured process.
fn reusable(prev: &ResultFile, name: &str, processes: u64) -> Option<TransformResult> {
    let r = prev.results.get(name)?;
    let spec = Registry::get().spec(name)?;
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
) -> Metadata {
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
        device: device.to_string(),
        benchmark_params: BenchmarkParams {
            num_items: load.count,
            num_runs: e.num_runs.unwrap_or_default(),
            processes: e.processes.unwrap_or(1),
            channels: cfg.data.num_channels.unwrap_or(policy::DEFAULT_CHANNELS),
            clip_length: (input.job.media == augbench_core::Media::Video)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn devs(list: &[&str]) -> Vec<String> {
        list.iter().map(|d| d.to_string()).collect()
    }

    #[test]
    fn auto_takes_cuda_where_the_worker_has_it_and_cpu_otherwise() {
        let gpu = devs(&["cpu", "cuda"]);
        let cpu = devs(&["cpu"]);
        assert_eq!(resolve_device(Device::Auto, &gpu, "w").unwrap(), "cuda");
        assert_eq!(resolve_device(Device::Auto, &cpu, "w").unwrap(), "cpu");
        assert_eq!(resolve_device(Device::Cpu, &gpu, "w").unwrap(), "cpu");
    }

    #[test]
    fn cuda_without_cuda_is_a_usage_error_naming_the_worker() {
        let e = resolve_device(Device::Cuda, &devs(&["cpu"]), "kornia worker").unwrap_err();
        assert!(
            e.message.contains("kornia worker cannot run on `cuda`"),
            "{e}"
        );
        assert!(e.hint.contains("device: auto"), "{e}");
    }

    #[test]
    fn a_hello_without_devices_means_cpu_only() {
        assert_eq!(worker_devices(&serde_json::json!({})), devs(&["cpu"]));
        let hello = serde_json::json!({"devices": ["cpu", "cuda"]});
        assert_eq!(worker_devices(&hello), devs(&["cpu", "cuda"]));
    }
}
