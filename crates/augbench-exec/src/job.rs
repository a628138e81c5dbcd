//! One library's job as both schedules run it: its inputs, its live worker with the media loaded
//! (replaced when lost), the device it resolved to, and the spec it measures each transform
//! against. `lane::Lane` ties a worker to the job's `Recorder`.

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::Context;
use augbench_catalog::registry::{DtypeRule, OutputRule, TransformSpec};
use augbench_core::plan::Job;
use augbench_core::results::{DatasetInfo, ResultFile, Status, TransformResult};
use augbench_core::{Device, Mode, PipelineScope, RunConfig, UsageError, policy};
use indicatif::MultiProgress;

use crate::micro::MicroSettings;
use crate::progress::labelled_spinner;
use augbench_host::child::CommandLine;
use augbench_protocol::client::{Worker, WorkerError};
use augbench_protocol::protocol::{FailureKind, HelloResponse, LoadRequest, LoadResponse, Request};

/// Everything one job needs besides the plan entry.
pub struct JobInput<'a> {
    pub cfg: &'a RunConfig,
    pub job: &'a Job,
    pub command: CommandLine,
    pub paths: &'a [String],
    pub dataset: DatasetInfo,
    /// With `execution.check_equivalence`: the run's check as this job's library saw it.
    pub equivalence: Option<augbench_catalog::equivalence::EquivalenceSummary>,
    /// Target rows: the run's targets (this job loads its `paths`, the items that have them).
    pub targets: Option<&'a crate::run_media::TargetsMedia>,
}

pub struct JobOutcome {
    pub results: ResultFile,
    pub interrupted: bool,
}

/// A started worker with its media loaded.
pub(crate) struct Loaded {
    pub worker: Worker,
    pub hello: HelloResponse,
    pub load: LoadResponse,
    /// The device the media live on: the job's device, with `auto` resolved from `hello.devices`.
    pub device: String,
    /// With `--spec`: the spec file's transform names (`hello.spec.transforms`), measured instead
    /// of the registry's.
    pub custom: Option<Vec<String>>,
}

/// Whether a lost worker was lost to the user's Ctrl-C. The terminal sends SIGINT to the whole
/// process group, so a worker can die of it a moment before the coordinator's handler raises
/// `stop`; a lost worker waits briefly for the flag before its loss is recorded as an error.
pub(crate) fn stopped_by_user(stop: &std::sync::atomic::AtomicBool) -> bool {
    use std::sync::atomic::Ordering;
    for _ in 0..policy::STOP_GRACE_POLLS {
        if stop.load(Ordering::SeqCst) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    stop.load(Ordering::SeqCst)
}

/// The variable that pins a Python worker to one CPU (`threads.pin_cpu` in the worker).
const PIN_CPU_VAR: &str = "AUGBENCH_PIN_CPU";

/// The spec a transform is measured against: the registry's, or a spec file's.
pub(crate) fn spec_for(w: &Loaded, name: &str) -> Option<TransformSpec> {
    match &w.custom {
        Some(_) => Some(custom_transform(name)),
        None => augbench_catalog::recipe::Recipe::lookup(name).cloned(),
    }
}

/// The result of a name that is neither in the registry nor in a spec file.
pub(crate) fn not_in_registry(name: &str) -> TransformResult {
    let reason = format!("`{name}` is not in the transform registry");
    TransformResult::not_measured(Status::Error, serde_json::Value::Null, reason)
}

/// Starts the job's worker and loads its media; `pin`: the CPU it must run on (A/B pairs).
pub(crate) fn start_worker(
    input: &JobInput<'_>,
    mp: &MultiProgress,
    pin: Option<usize>,
) -> anyhow::Result<Loaded> {
    let timeout = MicroSettings::from_config(input.cfg, "cpu").request_timeout;
    let started = std::time::Instant::now();
    let mut command = input.command.clone();
    if let Some(cpu) = pin {
        command.env.push((PIN_CPU_VAR.to_string(), cpu.to_string()));
    }
    let mut worker = Worker::start(&command, policy::STDERR_TAIL_LINES)?;
    let raw = worker
        .request(&Request::Hello, timeout)
        .map_err(|e| bad_input(e, SPEC_HINT, false))
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
        pipeline: input.job.mode == Mode::Pipeline,
        preload: (input.job.mode == Mode::Pipeline).then(|| !pipeline_scope(input.cfg).decodes()),
        targets: targets_request(input),
    };
    let library = input.job.library.as_str();
    let load: Result<LoadResponse, WorkerError> = crate::time_split::in_row(library, "", || {
        crate::time_split::add("worker start", started.elapsed().as_secs_f64());
        crate::time_split::part("media load", || worker.call(&Request::Load(req), timeout))
    });
    spinner.finish_and_clear();
    let load = load
        .map_err(|e| bad_input(e, MEDIA_HINT, true))
        .with_context(|| format!("{} could not load the media", input.command.label))?;
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

/// The targets a target job's worker loads with its images (none for image-only rows).
fn targets_request(input: &JobInput<'_>) -> Option<augbench_protocol::protocol::TargetsRequest> {
    let (set, media) = input.job.targets.as_ref().zip(input.targets)?;
    Some(augbench_protocol::protocol::TargetsRequest {
        file: media.file.display().to_string(),
        kinds: set.names(),
    })
}

/// Hint of a spec file the worker refused.
const SPEC_HINT: &str =
    "fix the spec file (docs/specs.md: LIBRARY, __call__ and TRANSFORMS), or drop --spec";
/// Hint of media none of which decodes.
const MEDIA_HINT: &str = "check or replace the files named above, or remove data_dir to use the built-in synthetic dataset";

/// A worker failure of kind `bad_input` (the user's spec file or media) becomes a usage error
/// with `hint` (exit code 2 when every job fails so), listing the failure's detail lines (the
/// files and their reasons) when `list`; any other failure stays as it is.
fn bad_input(e: WorkerError, hint: &str, list: bool) -> anyhow::Error {
    let WorkerError::Failed { label, failure } = e else {
        return e.into();
    };
    if failure.kind != FailureKind::BadInput {
        return WorkerError::Failed { label, failure }.into();
    }
    let mut message = format!("{label}: {}", failure.error);
    let lines: Vec<&str> = failure.detail.lines().filter(|l| !l.is_empty()).collect();
    if list && !lines.is_empty() {
        message = format!("{label}: no file could be decoded:");
        for l in lines.iter().take(NAMED_SKIPS) {
            message.push_str(&format!("\n    {l}"));
        }
        if lines.len() > NAMED_SKIPS {
            message.push_str(&format!("\n    … and {} more", lines.len() - NAMED_SKIPS));
        }
    }
    UsageError::new(message, hint).into()
}

/// Undecodable files named one by one when none decodes; the rest are counted.
const NAMED_SKIPS: usize = 5;

/// The pipeline scope of a resolved config.
pub(crate) fn pipeline_scope(cfg: &RunConfig) -> PipelineScope {
    cfg.execution
        .pipeline_scope
        .unwrap_or(policy::DEFAULT_PIPELINE_SCOPE)
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
