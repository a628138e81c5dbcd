//! Resolution: validates a loaded config (plus overrides) and fills every omitted field from the
//! matrix and policy, so the result is fully explicit. `resolve(resolve(x)) == resolve(x)`.

use std::path::PathBuf;

use crate::config::{RunConfig, TransformSet};
use crate::policy;
use crate::validate;
use augbench_catalog::config_error::{ConfigError, Source, suggest};
use augbench_catalog::matrix::{Device, Matrix, Media, Mode, ScenarioInfo, ScenarioKind};

pub use crate::selection::selected_transforms;

/// Validates and fills defaults. The returned config has every field of the run explicit.
pub fn resolve(mut cfg: RunConfig, src: &Source) -> Result<RunConfig, ConfigError> {
    validate::names(&cfg, src)?;
    let scenario = resolve_scenario(&mut cfg, src)?;
    fill_selection(&mut cfg, scenario);
    fill_data(&mut cfg, scenario);
    fill_execution(&mut cfg);
    if cfg.output.output_dir.is_none() {
        cfg.output.output_dir = Some(PathBuf::from(policy::DEFAULT_OUTPUT_DIR));
    }
    crate::cloud::fill(&mut cfg);
    crate::variant::fill(&mut cfg);
    validate::rules(&cfg, scenario, src)?;
    Ok(cfg)
}

fn resolve_scenario(
    cfg: &mut RunConfig,
    src: &Source,
) -> Result<&'static ScenarioInfo, ConfigError> {
    let m = Matrix::get();
    let sel = &cfg.selection;
    let found = match &sel.scenario {
        Some(name) => m.scenario(name),
        None if sel.mode == Some(Mode::Decode) => m.scenario_of_kind(ScenarioKind::Decode),
        None => {
            let media = sel.media.unwrap_or(Media::Image);
            let channels = cfg.data.num_channels.unwrap_or(policy::DEFAULT_CHANNELS);
            let channels = if channels == policy::DEFAULT_CHANNELS {
                3
            } else {
                9
            };
            m.scenario_for(media, channels)
        }
    };
    let scenario = found.ok_or_else(|| {
        src.error(
            &["selection", "scenario"],
            "no scenario matches this selection".into(),
            suggest("", &m.scenario_names()),
        )
    })?;
    cfg.selection.scenario = Some(scenario.name.clone());
    Ok(scenario)
}

fn fill_selection(cfg: &mut RunConfig, scenario: &ScenarioInfo) {
    if scenario.is_decode() {
        return fill_decode_selection(cfg, scenario);
    }
    let m = Matrix::get();
    let sel = &mut cfg.selection;
    let mode = *sel.mode.get_or_insert(Mode::Micro);
    sel.media.get_or_insert(scenario.media);
    sel.multichannel
        .get_or_insert(scenario.media == Media::Image && scenario.channels > 3);
    let device = cfg.execution.device.unwrap_or(Device::Cpu);
    // An A/B run measures its variants; other libraries only when listed.
    if sel.variants.as_ref().is_some_and(|v| !v.is_empty()) {
        sel.libraries.get_or_insert_with(Vec::new);
    }
    sel.libraries.get_or_insert_with(|| {
        scenario
            .libraries
            .iter()
            .filter_map(|l| m.library(l))
            .filter(|l| l.modes.contains(&mode) && l.supports_device(device))
            .map(|l| l.name.clone())
            .collect()
    });
    if sel.transforms.is_none() {
        sel.transform_set.get_or_insert(TransformSet::Paper);
    }
}

/// A decode scenario selects decoders (all of the scenario's by default); no libraries, no
/// transforms. What the user wrote is kept, so validation can point at what does not belong.
fn fill_decode_selection(cfg: &mut RunConfig, scenario: &ScenarioInfo) {
    let sel = &mut cfg.selection;
    sel.mode.get_or_insert(Mode::Decode);
    sel.media.get_or_insert(scenario.media);
    sel.multichannel.get_or_insert(false);
    sel.decoders
        .get_or_insert_with(|| scenario.decoders.clone());
}

fn fill_data(cfg: &mut RunConfig, scenario: &ScenarioInfo) {
    let d = &mut cfg.data;
    d.num_items
        .get_or_insert(policy::default_num_items(scenario.media));
    d.num_channels.get_or_insert(scenario.channels);
    let clip = scenario.clip_length.unwrap_or(policy::DEFAULT_CLIP_LENGTH);
    d.clip_length.get_or_insert(clip);
    if d.data_dir.is_none() && cfg.cloud.is_none() {
        d.synthetic_seed.get_or_insert(policy::SYNTH_SEED);
    }
    if d.annotations.is_some() {
        d.annotation_errors
            .get_or_insert(policy::DEFAULT_ANNOTATION_ERRORS);
    }
}

fn fill_execution(cfg: &mut RunConfig) {
    let mode = cfg.selection.mode.unwrap_or(Mode::Micro);
    let media = cfg.selection.media.unwrap_or(Media::Image);
    let ab = cfg
        .selection
        .variants
        .as_ref()
        .is_some_and(|v| !v.is_empty());
    let e = &mut cfg.execution;
    if e.measure == Some(crate::config::Measure::Instructions) {
        // Counts do not drift with the machine: nothing to pair, one library after another.
        e.schedule.get_or_insert(crate::Schedule::Sequential);
        e.processes.get_or_insert(policy::COUNT_PROCESSES);
    } else if ab && mode != Mode::Decode {
        e.processes.get_or_insert(policy::ab_processes(mode));
    }
    e.schedule.get_or_insert(policy::DEFAULT_SCHEDULE);
    e.num_runs.get_or_insert(policy::DEFAULT_NUM_RUNS);
    if e.precision.is_some() {
        e.transform_budget_sec
            .get_or_insert(policy::DEFAULT_TRANSFORM_BUDGET_SEC);
    }
    e.processes.get_or_insert(policy::default_processes(mode));
    e.batch_size.get_or_insert(policy::DEFAULT_BATCH_SIZE);
    e.micro_batch.get_or_insert(policy::DEFAULT_MICRO_BATCH);
    e.workers.get_or_insert(policy::default_workers(mode));
    e.min_time.get_or_insert(policy::DEFAULT_MIN_TIME_SEC);
    let workers = e.workers.unwrap_or_default();
    e.min_batches
        .get_or_insert(policy::default_min_batches(workers));
    e.pipeline_scope
        .get_or_insert(policy::DEFAULT_PIPELINE_SCOPE);
    e.device.get_or_insert(Device::Cpu);
    e.thread_policy
        .get_or_insert(policy::default_thread_policy(mode));
    e.refresh_requirements.get_or_insert(true);
    e.slow_threshold_sec_per_item
        .get_or_insert(policy::slow_threshold_sec_per_item(media));
    e.slow_preflight_items
        .get_or_insert(policy::slow_preflight_items(media));
    e.disable_slow_skip.get_or_insert(false);
    e.request_timeout_sec
        .get_or_insert(policy::REQUEST_TIMEOUT_SEC);
    e.resume.get_or_insert(false);
    e.check_equivalence
        .get_or_insert(policy::DEFAULT_CHECK_EQUIVALENCE);
    let w = &mut e.warmup;
    w.window.get_or_insert(policy::warmup_window(media));
    w.threshold.get_or_insert(policy::WARMUP_THRESHOLD);
    w.max_passes.get_or_insert(policy::WARMUP_MAX_PASSES);
    w.min_windows.get_or_insert(policy::WARMUP_MIN_WINDOWS);
    w.max_seconds.get_or_insert(policy::WARMUP_MAX_SEC);
    w.full_pass.get_or_insert(policy::WARMUP_FULL_PASS);
}
