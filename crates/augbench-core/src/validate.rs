//! Validation rules of a run configuration. `names` checks spelled names before defaults are
//! filled; `rules` checks the cross-field rules on the resolved config. Each rule is one function
//! and one located error with a hint.

use crate::config::{PipelineScope, RunConfig, ThreadPolicy};
use crate::config_error::{ConfigError, Source, suggest};
use crate::matrix::{Device, Matrix, Media, Mode, ScenarioInfo};
use crate::policy;
use crate::registry::Registry;

type Check = Result<(), ConfigError>;

/// Names the user spelled: scenario, libraries, transforms; and `transform_set` needing a scenario.
pub fn names(cfg: &RunConfig, src: &Source) -> Check {
    let m = Matrix::get();
    if let Some(s) = &cfg.selection.scenario
        && m.scenario(s).is_none()
    {
        let msg = format!("unknown scenario `{s}`");
        return Err(src.error(
            &["selection", "scenario"],
            msg,
            suggest(s, &m.scenario_names()),
        ));
    }
    if cfg.selection.transform_set.is_some() && cfg.selection.scenario.is_none() {
        return Err(src.error(
            &["selection", "transform_set"],
            "`transform_set` needs a scenario".into(),
            format!(
                "add `scenario:` under `selection` (one of {})",
                m.scenario_names().join(", ")
            ),
        ));
    }
    for lib in cfg.selection.libraries.iter().flatten() {
        if m.library(lib).is_none() {
            let msg = format!("unknown library `{lib}`");
            return Err(src.error(
                &["selection", "libraries"],
                msg,
                suggest(lib, &m.library_names()),
            ));
        }
    }
    empty_transforms(cfg, src)?;
    let reg = Registry::get();
    for t in cfg.selection.transforms.iter().flatten() {
        if reg.spec(t).is_none() {
            let msg = format!("unknown transform `{t}`");
            let hint = suggest(t, &reg.names());
            return Err(src.error(&["selection", "transforms"], msg, hint));
        }
    }
    Ok(())
}

/// `transforms: []` (without a spec file) would measure nothing.
fn empty_transforms(cfg: &RunConfig, src: &Source) -> Check {
    if cfg.selection.spec.is_none() && cfg.selection.transforms.as_ref().is_some_and(Vec::is_empty)
    {
        return Err(src.error(
            &["selection", "transforms"],
            "`transforms` is empty: nothing would be measured".into(),
            "list at least one transform, or remove the key and set `transform_set`",
        ));
    }
    Ok(())
}

/// Cross-field rules on a resolved config.
pub fn rules(cfg: &RunConfig, scenario: &ScenarioInfo, src: &Source) -> Check {
    micro_needs_no_workers(cfg, src)?;
    media_matches_scenario(cfg, scenario, src)?;
    multichannel(cfg, src)?;
    libraries_support_selection(cfg, scenario, src)?;
    positive_counts(cfg, src)?;
    micro_batch(cfg, src)?;
    pipeline_settings(cfg, src)?;
    data_source(cfg, src)?;
    cloud(cfg, src)
}

fn micro_needs_no_workers(cfg: &RunConfig, src: &Source) -> Check {
    let workers = cfg.execution.workers.unwrap_or(0);
    if cfg.selection.mode == Some(Mode::Micro) && workers != 0 {
        return Err(src.error(
            &["execution", "workers"],
            format!("micro mode needs `workers: 0`, got {workers}"),
            "micro runs time one transform in one process; use `mode: pipeline` for loader workers",
        ));
    }
    Ok(())
}

fn media_matches_scenario(cfg: &RunConfig, scenario: &ScenarioInfo, src: &Source) -> Check {
    if cfg.selection.media != Some(scenario.media) {
        return Err(src.error(
            &["selection", "media"],
            format!("scenario `{}` is {} media", scenario.name, scenario.media),
            format!("remove `media:` or set it to `{}`", scenario.media),
        ));
    }
    Ok(())
}

fn multichannel(cfg: &RunConfig, src: &Source) -> Check {
    let channels = cfg.data.num_channels.unwrap_or(3);
    let multi = cfg.selection.multichannel.unwrap_or(false) || channels != 3;
    if multi && cfg.selection.media != Some(Media::Image) {
        return Err(src.error(
            &["selection", "multichannel"],
            "multichannel runs are for images only".into(),
            "use scenario `image-9ch`, or remove `multichannel`/`num_channels` for video",
        ));
    }
    if channels == 0 || !channels.is_multiple_of(3) {
        return Err(src.error(
            &["data", "num_channels"],
            format!("num_channels must be a positive multiple of 3, got {channels}"),
            "multichannel images are the RGB image stacked k times (3, 6, 9, …)",
        ));
    }
    Ok(())
}

fn libraries_support_selection(cfg: &RunConfig, scenario: &ScenarioInfo, src: &Source) -> Check {
    let m = Matrix::get();
    let mode = cfg.selection.mode.unwrap_or(Mode::Micro);
    let device = cfg.execution.device.unwrap_or(crate::matrix::Device::Cpu);
    let key = ["selection", "libraries"];
    for name in cfg.selection.libraries.iter().flatten() {
        let Some(lib) = m.library(name) else { continue };
        if !scenario.libraries.contains(name) {
            let msg = format!("library `{name}` does not run scenario `{}`", scenario.name);
            return Err(src.error(
                &key,
                msg,
                format!(
                    "libraries of {}: {}",
                    scenario.name,
                    scenario.libraries.join(", ")
                ),
            ));
        }
        if !lib.modes.contains(&mode) {
            return Err(src.error(
                &key,
                format!("library `{name}` has no {mode} mode"),
                "see `augbench list libraries`",
            ));
        }
        if !lib.supports_device(device) {
            let devices: Vec<String> = lib.devices.iter().map(ToString::to_string).collect();
            let msg = format!("library `{name}` does not run on device `{device}`");
            return Err(src.error(
                &key,
                msg,
                format!(
                    "{name} supports: {} (or use `device: auto`)",
                    devices.join(", ")
                ),
            ));
        }
    }
    if cfg.selection.libraries.as_ref().is_some_and(Vec::is_empty) {
        return Err(src.error(
            &key,
            "no libraries selected".into(),
            format!(
                "libraries of {}: {}",
                scenario.name,
                scenario.libraries.join(", ")
            ),
        ));
    }
    Ok(())
}

fn positive_counts(cfg: &RunConfig, src: &Source) -> Check {
    let e = &cfg.execution;
    let checks: [(&[&str], Option<u64>); 6] = [
        (&["data", "num_items"], cfg.data.num_items),
        (&["data", "clip_length"], cfg.data.clip_length),
        (&["execution", "num_runs"], e.num_runs),
        (&["execution", "processes"], e.processes),
        (&["execution", "batch_size"], e.batch_size),
        (&["execution", "micro_batch"], e.micro_batch),
    ];
    for (key, value) in checks {
        if value == Some(0) {
            let name = key.last().copied().unwrap_or_default();
            return Err(src.error(
                key,
                format!("`{name}` must be at least 1"),
                "give a positive count",
            ));
        }
    }
    let seconds: [(&[&str], Option<f64>); 5] = [
        (&["execution", "min_time"], e.min_time),
        (&["execution", "request_timeout_sec"], e.request_timeout_sec),
        (
            &["execution", "slow_threshold_sec_per_item"],
            e.slow_threshold_sec_per_item,
        ),
        (
            &["execution", "warmup", "max_seconds"],
            e.warmup.max_seconds,
        ),
        (&["execution", "warmup", "threshold"], e.warmup.threshold),
    ];
    for (key, value) in seconds {
        if let Some(v) = value
            && !(v.is_finite() && v > 0.0 && v < 1e7)
        {
            let name = key.last().copied().unwrap_or_default();
            return Err(src.error(
                key,
                format!("`{name}` must be a positive finite number, got {v}"),
                "e.g. 0.05",
            ));
        }
    }
    if let Some(t) = e.precision_target
        && !(t > 0.0 && t < 1.0)
    {
        return Err(src.error(
            &["execution", "precision_target"],
            format!("precision_target must be in (0, 1), got {t}"),
            "e.g. 0.02 for ±2% on the median",
        ));
    }
    Ok(())
}

/// A batched micro regime (`micro_batch` > 1) needs micro mode, libraries that have one (matrix
/// `batched`), and at least one batch of items.
fn micro_batch(cfg: &RunConfig, src: &Source) -> Check {
    let batch = cfg
        .execution
        .micro_batch
        .unwrap_or(policy::DEFAULT_MICRO_BATCH);
    if batch <= 1 {
        return Ok(());
    }
    let key = ["execution", "micro_batch"];
    if cfg.selection.mode != Some(Mode::Micro) {
        return Err(src.error(
            &key,
            format!("micro_batch {batch} is for micro mode"),
            "pipeline runs batch with `batch_size`; remove `micro_batch`",
        ));
    }
    let m = Matrix::get();
    let batched: Vec<&str> = m
        .libraries
        .iter()
        .filter(|l| l.batched)
        .map(|l| l.name.as_str())
        .collect();
    for name in cfg.selection.libraries.iter().flatten() {
        if !batched.contains(&name.as_str()) {
            return Err(src.error(
                &key,
                format!("library `{name}` has no batched regime (micro_batch {batch})"),
                format!(
                    "libraries with one: {}; run the others in a config without `micro_batch`",
                    batched.join(", ")
                ),
            ));
        }
    }
    let items = cfg.data.num_items.unwrap_or(0);
    if items < batch {
        return Err(src.error(
            &["data", "num_items"],
            format!("num_items {items} is less than one batch (micro_batch {batch})"),
            "give at least micro_batch items",
        ));
    }
    Ok(())
}

/// Pipeline labels must be what was measured: the batch-copy scope exists only on CUDA, and the
/// single-worker policy means one loader worker.
fn pipeline_settings(cfg: &RunConfig, src: &Source) -> Check {
    if cfg.selection.mode != Some(Mode::Pipeline) {
        return Ok(());
    }
    if cfg.selection.spec.is_some() {
        return Err(src.error(
            &["selection", "spec"],
            "a spec file defines micro transforms; pipeline rows use the registry's transforms in the recipe of specs/recipe.yaml".into(),
            "use `mode: micro` with the spec file, or drop `spec` and select registry transforms",
        ));
    }
    let e = &cfg.execution;
    let scope = e.pipeline_scope.unwrap_or(policy::DEFAULT_PIPELINE_SCOPE);
    if scope == PipelineScope::DecodeDataloaderAugmentBatchCopy && e.device != Some(Device::Cuda) {
        return Err(src.error(
            &["execution", "pipeline_scope"],
            format!(
                "`{scope}` times the host-to-device copy of each batch, which needs `device: cuda`"
            ),
            "use `pipeline_scope: decode_dataloader_augment` on the CPU, or `device: cuda`",
        ));
    }
    let workers = e.workers.unwrap_or_default();
    if e.thread_policy == Some(ThreadPolicy::PipelineSingleWorker) && workers != 1 {
        return Err(src.error(
            &["execution", "workers"],
            format!("thread_policy `pipeline-single-worker` runs one loader worker, got `workers: {workers}`"),
            "set `workers: 1`, or use `thread_policy: pipeline-default`",
        ));
    }
    if e.min_batches == Some(0) {
        return Err(src.error(
            &["execution", "min_batches"],
            "`min_batches` must be at least 1".into(),
            format!(
                "leave it out for the default ({} batches with {workers} workers)",
                policy::default_min_batches(workers)
            ),
        ));
    }
    Ok(())
}

fn data_source(cfg: &RunConfig, src: &Source) -> Check {
    if cfg.is_cloud() {
        return Ok(());
    }
    if cfg.data.data_dir.is_none() && cfg.data.gcs_uri.is_some() {
        return Err(src.error(
            &["data", "gcs_uri"],
            "`gcs_uri` is only read by cloud runs; this is a local run with no `data_dir`".into(),
            "set `data_dir` to a local folder, add a `cloud:` section, or remove `gcs_uri` to use the built-in synthetic dataset",
        ));
    }
    Ok(())
}

fn cloud(cfg: &RunConfig, src: &Source) -> Check {
    let Some(c) = &cfg.cloud else { return Ok(()) };
    if c.attached.unwrap_or(false) {
        return Ok(());
    }
    if cfg.data.gcs_uri.is_none() {
        return Err(src.error(&["cloud"], "detached cloud runs need `data.gcs_uri`".into(), "point `data.gcs_uri` at a dataset tarball, e.g. gs://bucket/val.tar, or set `cloud.attached: true`"));
    }
    if cfg.output.gcs_results_uri.is_none() {
        return Err(src.error(
            &["cloud"],
            "detached cloud runs need `output.gcs_results_uri`".into(),
            "set `output.gcs_results_uri: gs://bucket/results`, or `cloud.attached: true`",
        ));
    }
    Ok(())
}
