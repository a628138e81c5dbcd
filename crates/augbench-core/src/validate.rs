//! Validation rules of a run configuration. `names` checks spelled names before defaults are
//! filled; `rules` checks the cross-field rules on the resolved config. Each rule is one function
//! and one located error with a hint. `measurable` and `device_present` are the rules of running
//! a resolved config here (`augbench run`; `augbench plan` still shows such a plan's jobs).

use crate::config::{PipelineScope, RunConfig, ThreadPolicy};
use crate::error::UsageError;
use crate::policy;
use augbench_catalog::config_error::{ConfigError, Source, suggest};
use augbench_catalog::matrix::{Device, Matrix, Media, Mode, ScenarioInfo};
use augbench_catalog::registry::Registry;

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
    if let Some(lib) = &cfg.output.reference_library
        && m.library(lib).is_none()
    {
        let msg = format!("unknown reference library `{lib}`");
        let hint = suggest(lib, &m.library_names());
        return Err(src.error(&["output", "reference_library"], msg, hint));
    }
    for d in cfg.selection.decoders.iter().flatten() {
        if m.decoder(d).is_none() {
            let msg = format!("unknown decoder `{d}`");
            let hint = suggest(d, &m.decoder_names());
            return Err(src.error(&["selection", "decoders"], msg, hint));
        }
    }
    empty_transforms(cfg, src)?;
    crate::variant::check(cfg, src)?;
    let reg = Registry::get();
    // Pipeline mode also knows its ceiling row; a list that names it keeps it where it stands.
    let pipeline = cfg.selection.mode == Some(augbench_catalog::matrix::Mode::Pipeline);
    let ceiling = |t: &str| pipeline && augbench_catalog::recipe::Recipe::get().is_ceiling(t);
    for t in cfg.selection.transforms.iter().flatten() {
        if reg.spec(t).is_none() && !ceiling(t) {
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
    decode_selection(cfg, scenario, src)?;
    micro_needs_no_workers(cfg, src)?;
    media_matches_scenario(cfg, scenario, src)?;
    multichannel(cfg, src)?;
    libraries_support_selection(cfg, scenario, src)?;
    positive_counts(cfg, src)?;
    micro_batch(cfg, src)?;
    pipeline_settings(cfg, src)?;
    data_source(cfg, src)?;
    equivalence_check(cfg, scenario, src)?;
    instructions(cfg, src)?;
    precision_runs_interleaved_micro(cfg, src)?;
    ab_processes(cfg, src)?;
    crate::target_rules::check(cfg, src)?;
    crate::cloud::check(cfg, src)
}

/// A decode scenario measures decoders (mode `decode`): no libraries, transforms or spec file,
/// only its own decoders, on the CPU, one pinned thread, one process each. A transform scenario
/// takes no decoders and no `mode: decode`.
fn decode_selection(cfg: &RunConfig, scenario: &ScenarioInfo, src: &Source) -> Check {
    let sel = &cfg.selection;
    if !scenario.is_decode() {
        return no_decode_keys(cfg, scenario, src);
    }
    let name = &scenario.name;
    let decoders = scenario.decoders.join(", ");
    if let Some(mode) = sel.mode.filter(|m| *m != Mode::Decode) {
        return Err(src.error(
            &["selection", "mode"],
            format!("scenario `{name}` measures video decoders (mode `decode`), not {mode} rows"),
            "remove `mode:` or set `mode: decode`",
        ));
    }
    let foreign = [
        ("libraries", sel.libraries.is_some()),
        ("transforms", sel.transforms.is_some()),
        ("transform_set", sel.transform_set.is_some()),
        ("spec", sel.spec.is_some()),
        ("variants", sel.variants.is_some()),
    ];
    if let Some((key, _)) = foreign.iter().find(|(_, set)| *set) {
        return Err(src.error(
            &["selection", key],
            format!(
                "scenario `{name}` decodes clips and applies no transform: `{key}` does not apply"
            ),
            format!("remove `{key}`; choose decoders with `decoders:` (of {name}: {decoders})"),
        ));
    }
    let chosen = sel.decoders.as_deref().unwrap_or_default();
    if let Some(d) = chosen.iter().find(|d| !scenario.decoders.contains(d)) {
        return Err(src.error(
            &["selection", "decoders"],
            format!("decoder `{d}` is not one of scenario `{name}`"),
            format!("decoders of {name}: {decoders}"),
        ));
    }
    if chosen.is_empty() {
        return Err(src.error(
            &["selection", "decoders"],
            "no decoders selected".into(),
            format!("decoders of {name}: {decoders}"),
        ));
    }
    decode_execution(cfg, name, src)
}

/// Decoders run on the CPU, each pinned to one thread in one worker process.
fn decode_execution(cfg: &RunConfig, name: &str, src: &Source) -> Check {
    let e = &cfg.execution;
    if e.device == Some(Device::Cuda) {
        return Err(src.error(
            &["execution", "device"],
            format!("the decoders of `{name}` run on the CPU"),
            "remove `device` or set `device: cpu`",
        ));
    }
    if let Some(p) = e.processes.filter(|p| *p != policy::DECODE_PROCESSES) {
        return Err(src.error(
            &["execution", "processes"],
            format!(
                "`{name}` runs each decoder in {} worker process, got `processes: {p}`",
                policy::DECODE_PROCESSES
            ),
            "remove `processes`; add runs with `num_runs`",
        ));
    }
    if let Some(w) = e.workers.filter(|w| *w != 0) {
        return Err(src.error(
            &["execution", "workers"],
            format!("`{name}` decodes in the decoder's own process, got `workers: {w}`"),
            "remove `workers` (or set it to 0)",
        ));
    }
    if e.resume == Some(true) {
        return Err(src.error(
            &["execution", "resume"],
            format!("`{name}` measures every decoder in the same rounds and cannot resume"),
            "run it again without `resume` / `--resume`",
        ));
    }
    if let Some(t) = e.thread_policy.filter(|t| *t != ThreadPolicy::Single) {
        let t = serde_json::to_value(t).unwrap_or_default();
        return Err(src.error(
            &["execution", "thread_policy"],
            format!(
                "`{name}` pins every decoder to one thread, got `thread_policy: {}`",
                t.as_str().unwrap_or_default()
            ),
            "remove `thread_policy` (or set it to `single`)",
        ));
    }
    Ok(())
}

/// `mode: decode` and `decoders` belong to decode scenarios.
fn no_decode_keys(cfg: &RunConfig, scenario: &ScenarioInfo, src: &Source) -> Check {
    let m = Matrix::get();
    let decode: Vec<&str> = m
        .scenarios
        .iter()
        .filter(|s| s.is_decode())
        .map(|s| s.name.as_str())
        .collect();
    let name = &scenario.name;
    if cfg.selection.mode == Some(Mode::Decode) {
        return Err(src.error(
            &["selection", "mode"],
            format!(
                "`mode: decode` measures video decoders, and scenario `{name}` measures transforms"
            ),
            format!(
                "use `scenario: {}` for decoders, or `mode: micro` / `mode: pipeline`",
                decode.join("|")
            ),
        ));
    }
    if cfg.selection.decoders.is_some() {
        return Err(src.error(
            &["selection", "decoders"],
            format!("scenario `{name}` measures libraries, not decoders"),
            format!("remove `decoders`, or use `scenario: {}`", decode.join("|")),
        ));
    }
    Ok(())
}

fn micro_needs_no_workers(cfg: &RunConfig, src: &Source) -> Check {
    let workers = cfg.execution.workers.unwrap_or(0);
    if workers > crate::policy::MAX_LOADER_WORKERS {
        return Err(src.error(
            &["execution", "workers"],
            format!(
                "`workers: {workers}` is more loader processes than augbench starts (at most {})",
                crate::policy::MAX_LOADER_WORKERS
            ),
            "loader workers are processes on this machine: use about as many as it has cores",
        ));
    }
    if cfg.selection.mode == Some(Mode::Micro) && workers != 0 {
        return Err(src.error(
            &["execution", "workers"],
            format!("micro mode needs `workers: 0`, got {workers}"),
            "micro runs time one transform in one process; use `mode: pipeline` for loader workers",
        ));
    }
    Ok(())
}

/// `precision` drives the rounds and extra processes of the interleaved micro schedule; no other
/// schedule or mode reads it, so a result would claim a precision it was not measured to.
fn precision_runs_interleaved_micro(cfg: &RunConfig, src: &Source) -> Check {
    if cfg.execution.precision.is_none() {
        return Ok(());
    }
    let refuse = |key: &[&str], what: &str, hint: &str| {
        let msg = format!("`precision` is measured by the interleaved micro schedule, not {what}");
        Err(src.error(key, msg, hint))
    };
    if cfg.selection.mode != Some(Mode::Micro) {
        let hint = "remove `precision`: pipeline and decode rows take `num_runs` runs";
        return refuse(&["selection", "mode"], "pipeline or decode mode", hint);
    }
    if cfg.selection.spec.is_some() {
        let hint = "remove `precision`, or name the transforms instead of a spec file";
        return refuse(&["selection", "spec"], "a spec file's sequential run", hint);
    }
    if cfg.execution.schedule == Some(crate::Schedule::Sequential) {
        let hint = "remove `schedule: sequential`, or remove `precision`";
        return refuse(&["execution", "schedule"], "the sequential schedule", hint);
    }
    Ok(())
}

/// `measure: instructions` counts one thread of a micro row on the CPU under Valgrind, in at
/// least `policy::COUNT_PROCESSES` processes (their spread is the count's repeatability).
fn instructions(cfg: &RunConfig, src: &Source) -> Check {
    let e = &cfg.execution;
    if e.measure != Some(crate::config::Measure::Instructions) {
        return Ok(());
    }
    let at = |key: &[&str], msg: String, hint: &str| Err(src.error(key, msg, hint));
    let mode = cfg.selection.mode.unwrap_or(Mode::Micro);
    if mode != Mode::Micro {
        return at(
            &["execution", "measure"],
            format!(
                "`measure: instructions` counts micro rows only, not `{mode}`: Valgrind runs one thread at a time, so a loader with workers (pipeline) or a decoder's threads (decode) would be counted serialized"
            ),
            "use `mode: micro`, or `measure: time` for this mode",
        );
    }
    if let Some(d) = e.device.filter(|d| *d == Device::Cuda) {
        return at(
            &["execution", "device"],
            format!(
                "`measure: instructions` counts CPU instructions; it cannot count work on `{d}`"
            ),
            "use `device: cpu` with instruction counts",
        );
    }
    if let Some(t) = e
        .thread_policy
        .filter(|t| *t != crate::config::ThreadPolicy::Single)
    {
        return at(
            &["execution", "thread_policy"],
            format!(
                "`measure: instructions` runs one thread (Valgrind serializes threads), got `{}`",
                serde_json::to_value(t)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default()
            ),
            "use `thread_policy: single` with instruction counts",
        );
    }
    if let Some(p) = e.processes.filter(|p| *p < policy::COUNT_PROCESSES) {
        return at(
            &["execution", "processes"],
            format!(
                "`measure: instructions` needs at least {} worker processes (their spread is the count's repeatability, which a verdict needs), got {p}",
                policy::COUNT_PROCESSES
            ),
            &format!(
                "set `processes: {}` (the smallest that works), or leave it out",
                policy::COUNT_PROCESSES
            ),
        );
    }
    if e.precision.is_some() {
        return at(
            &["execution", "precision"],
            "`precision` targets timing intervals; instruction counts repeat to ~0.01% and need none".into(),
            "remove `precision` with `measure: instructions`",
        );
    }
    if e.schedule == Some(crate::Schedule::Interleaved) {
        return at(
            &["execution", "schedule"],
            "`measure: instructions` runs one library after another: counts do not drift with the machine, so there is nothing to pair".into(),
            "remove `schedule`, or set `schedule: sequential`",
        );
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
    let device = cfg
        .execution
        .device
        .unwrap_or(augbench_catalog::matrix::Device::Cpu);
    let key = ["selection", "libraries"];
    let variants = cfg.selection.variants.iter().flatten();
    let named = cfg
        .selection
        .libraries
        .iter()
        .flatten()
        .map(|l| (l, &key[..]));
    let variant_key: &[&str] = &["selection", "variants", "library"];
    let named = named.chain(variants.clone().map(|v| (&v.library, variant_key)));
    for (name, key) in named {
        let Some(lib) = m.library(name) else { continue };
        if !scenario.libraries.contains(name) {
            let mut msg = format!("library `{name}` does not run scenario `{}`", scenario.name);
            if let Some(why) = lib.refuses.get(&scenario.name) {
                msg = format!("{msg}: {why}");
            }
            return Err(src.error(
                key,
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
                key,
                format!("library `{name}` has no {mode} mode"),
                format!(
                    "{name} runs in mode {} (see `augbench list libraries`)",
                    lib.modes
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        if !lib.supports_device(device) {
            let devices: Vec<String> = lib.devices.iter().map(ToString::to_string).collect();
            let msg = format!("library `{name}` does not run on device `{device}`");
            return Err(src.error(
                key,
                msg,
                format!(
                    "{name} supports: {} (or use `device: auto`)",
                    devices.join(", ")
                ),
            ));
        }
    }
    if cfg.selection.libraries.as_ref().is_some_and(Vec::is_empty) && variants.count() == 0 {
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
        let name = key.last().copied().unwrap_or_default();
        if value == Some(0) {
            return Err(src.error(
                key,
                format!("`{name}` must be at least 1"),
                "give a positive count",
            ));
        }
        let most = policy::max_count(name);
        if let Some(v) = value.filter(|v| *v > most) {
            return Err(src.error(
                key,
                format!("`{name}` is {v}, more than the largest allowed, {most}"),
                format!("give a count from 1 to {most}"),
            ));
        }
    }
    if let Some(w) = e.workers.filter(|w| *w > policy::max_count("workers")) {
        return Err(src.error(
            &["execution", "workers"],
            format!(
                "`workers` is {w}, more than the largest allowed, {}",
                policy::max_count("workers")
            ),
            format!("give a count from 0 to {}", policy::max_count("workers")),
        ));
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
    precision(e, src)
}

/// `precision` is a fraction in (0, 1); `transform_budget_sec` a positive number of seconds that
/// only means something with `precision`.
fn precision(e: &crate::config::Execution, src: &Source) -> Check {
    if let Some(t) = e.precision
        && !(t > 0.0 && t < 1.0)
    {
        return Err(src.error(
            &["execution", "precision"],
            format!("`precision` must be in (0, 1), got {t}"),
            "a relative half-width, e.g. 0.03 for ±3%",
        ));
    }
    precision_above_floor(e, src)?;
    let Some(b) = e.transform_budget_sec else {
        return Ok(());
    };
    let key = ["execution", "transform_budget_sec"];
    if !(b.is_finite() && b > 0.0 && b < 1e7) {
        return Err(src.error(
            &key,
            format!("`transform_budget_sec` must be a positive number of seconds, got {b}"),
            format!(
                "e.g. {} (seconds of timed rounds per transform)",
                crate::policy::DEFAULT_TRANSFORM_BUDGET_SEC
            ),
        ));
    }
    if e.precision.is_none() {
        return Err(src.error(
            &key,
            "`transform_budget_sec` bounds measuring to a precision, but no `precision` is set".into(),
            "add `precision` (e.g. 0.03), or remove the budget: without a precision every transform takes `num_runs` runs",
        ));
    }
    budget_holds_the_minimum_rounds(e, b, src)
}

/// Each process gets an equal share of `transform_budget_sec`, and a timed run lasts at least
/// `min_time`, so a budget below `processes × PRECISION_MIN_ROUNDS × min_time` cannot hold the
/// rounds the stopping rule needs before it may call a transform reached, even for the fastest
/// one (a spent budget ends the rounds after one, unreached).
fn budget_holds_the_minimum_rounds(
    e: &crate::config::Execution,
    budget: f64,
    src: &Source,
) -> Check {
    let (Some(processes), Some(min_time)) = (e.processes, e.min_time) else {
        return Ok(());
    };
    let smallest = processes as f64 * crate::policy::PRECISION_MIN_ROUNDS as f64 * min_time;
    // Read to the millisecond: 3 × 0.05 is 0.15000000000000002 in binary.
    let smallest = (smallest * 1000.0).ceil() / 1000.0;
    if budget >= smallest {
        return Ok(());
    }
    Err(src.error(
        &["execution", "transform_budget_sec"],
        format!(
            "`transform_budget_sec` {budget} s cannot hold one process's first {} rounds: each of \
             {processes} processes gets {:.3} s, and one timed run lasts at least `min_time` {min_time} s",
            crate::policy::PRECISION_MIN_ROUNDS,
            budget / processes as f64
        ),
        format!("the smallest budget that works here is {smallest} s (processes × {} rounds × min_time)", crate::policy::PRECISION_MIN_ROUNDS),
    ))
}

/// A `precision` below the drift floor can never be reached: no number of rounds or processes
/// narrows an interval past the drift between invocations (`policy::RERUN_DRIFT_FLOOR`).
fn precision_above_floor(e: &crate::config::Execution, src: &Source) -> Check {
    let floor = crate::policy::RERUN_DRIFT_FLOOR;
    match e.precision {
        Some(t) if t < floor => Err(src.error(
            &["execution", "precision"],
            format!(
                "`precision` ±{:.2}% is below the noise floor, ±{:.1}%: drift between \
                 invocations, which no number of rounds or processes narrows",
                t * 100.0,
                floor * 100.0
            ),
            format!("the smallest precision that can be reached is {floor}"),
        )),
        _ => Ok(()),
    }
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

/// `check_equivalence` applies each registry transform, per item, on the CPU, to RGB images: its
/// verdicts would be mislabelled on any run that measures something else, so such runs refuse it.
fn equivalence_check(cfg: &RunConfig, scenario: &ScenarioInfo, src: &Source) -> Check {
    if cfg.execution.check_equivalence != Some(true) {
        return Ok(());
    }
    let key = ["execution", "check_equivalence"];
    let hint = "remove `check_equivalence`, or run `augbench check equivalence --libraries … --transforms …` on its own";
    let e = &cfg.execution;
    let why = if scenario.name != augbench_catalog::equivalence::SCENARIO {
        format!(
            "scenario `{}`: the check compares RGB images, and this run measures other media or channels",
            scenario.name
        )
    } else if cfg.selection.mode != Some(Mode::Micro) {
        "the check applies each transform alone (micro), and this run measures pipelines".into()
    } else if e.device != Some(Device::Cpu) {
        "the check runs every library on the CPU, and this run's device is not `cpu`".into()
    } else if cfg.selection.spec.is_some() {
        "the check uses the registry's parameters, and this run measures a spec file's transforms"
            .into()
    } else if e.micro_batch.is_some_and(|b| b > 1) {
        "the check applies each transform per item, and this run measures a batched regime (`micro_batch`)".into()
    } else if cfg.is_cloud() {
        "a cloud run splits the transforms over tasks; the check runs on the local machine".into()
    } else {
        return Ok(());
    };
    Err(src.error(
        &key,
        format!("`check_equivalence: true` does not apply here: {why}"),
        hint,
    ))
}

/// A/B runs (`selection.variants`, micro and pipeline) judge on worker-process pairs: a time run
/// with fewer processes than `stats::paired::min_verdict_pairs` at the default minimum effect
/// could only say `undecided`. Instruction counts judge on their own repeatability
/// (`instructions`).
fn ab_processes(cfg: &RunConfig, src: &Source) -> Check {
    let e = &cfg.execution;
    let counts = e.measure == Some(crate::config::Measure::Instructions);
    let decode = cfg.selection.mode == Some(Mode::Decode);
    if cfg.selection.variants.is_none() || counts || decode {
        return Ok(());
    }
    let need = augbench_stats::paired::min_verdict_pairs(policy::REGRESSION_MIN_EFFECT);
    match e.processes.filter(|p| *p < need) {
        Some(p) => Err(src.error(
            &["execution", "processes"],
            format!(
                "A/B verdicts are judged on worker-process pairs, and {p} cannot decide a {}% change: even processes that agree to the drift floor leave a wider interval",
                policy::REGRESSION_MIN_EFFECT * 100.0
            ),
            format!("set `processes: {need}` (the smallest that can decide), or leave it out (docs/ab.md)"),
        )),
        None => Ok(()),
    }
}

/// Never write a result under a label it was not measured with: pipeline mode measures the RGB
/// recipe (on images, or on video clips); multichannel loaders do not exist yet. `file` is the
/// config the user gave, named in the message.
pub fn measurable(cfg: &RunConfig, file: &std::path::Path) -> Result<(), UsageError> {
    if cfg.selection.mode != Some(Mode::Pipeline) {
        return Ok(());
    }
    let media = cfg.selection.media.unwrap_or(Media::Image);
    let channels = cfg.data.num_channels.unwrap_or(policy::DEFAULT_CHANNELS);
    if channels == policy::DEFAULT_CHANNELS {
        return Ok(());
    }
    Err(UsageError::new(
        format!(
            "{} asks for a {channels}-channel {media} pipeline, and this build measures pipeline mode for RGB images and RGB video clips only",
            file.display()
        ),
        "use `mode: micro` for this scenario, or `scenario: image-rgb` (or `video-16f`) for pipeline rows; `augbench plan` still shows the jobs",
    ))
}

/// `device: cuda` needs a CUDA device on this machine (`cuda`: whether one is present).
pub fn device_present(cfg: &RunConfig, cuda: bool) -> Result<(), UsageError> {
    if cfg.execution.device != Some(Device::Cuda) || cuda {
        return Ok(());
    }
    Err(UsageError::new(
        "`device: cuda`, but this machine has no CUDA device (nvidia-smi lists no GPU, or CUDA_VISIBLE_DEVICES hides them); nothing was run",
        "use `device: auto` (CUDA where present, else the CPU) or `device: cpu`, or run on a machine with an NVIDIA GPU",
    ))
}

#[cfg(test)]
mod run_here_tests {
    use super::*;

    #[test]
    fn cuda_without_a_device_is_a_usage_error() {
        let mut cfg = RunConfig::default();
        cfg.execution.device = Some(Device::Cuda);
        let e = device_present(&cfg, false).unwrap_err();
        assert!(e.message.contains("no CUDA device"), "{}", e.message);
        assert!(e.hint.contains("device: auto"), "{}", e.hint);
        assert!(device_present(&cfg, true).is_ok());
        cfg.execution.device = Some(Device::Auto);
        assert!(device_present(&cfg, false).is_ok());
    }

    #[test]
    fn a_multichannel_pipeline_is_refused_and_rgb_is_not() {
        let mut cfg = RunConfig::default();
        cfg.selection.mode = Some(Mode::Pipeline);
        cfg.data.num_channels = Some(9);
        let e = measurable(&cfg, std::path::Path::new("x.yaml")).unwrap_err();
        assert!(
            e.message.starts_with("x.yaml asks for a 9-channel"),
            "{}",
            e.message
        );
        cfg.data.num_channels = Some(policy::DEFAULT_CHANNELS);
        assert!(measurable(&cfg, std::path::Path::new("x.yaml")).is_ok());
    }
}
