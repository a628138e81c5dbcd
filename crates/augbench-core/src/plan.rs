//! The plan: the pure expansion of a resolved config into jobs
//! (scenario × library × mode × device), each with its backend, environment group, transforms
//! and output file, plus the schedule the jobs run under and the memory it needs.
//! `augbench plan` prints it; `augbench run` executes it.

use std::path::PathBuf;

use serde::Serialize;

use crate::config::{RunConfig, Schedule};
use crate::memory::{self, MemoryEstimate};
use crate::naming::{self, JobKey, output_dir};
use crate::policy;
use crate::selection::selected_transforms;
use crate::targets::{self, TargetSet};
use crate::variant::Variant;
use augbench_catalog::matrix::{Backend, Device, Matrix, Media, Mode};

#[derive(Debug, Clone, Serialize)]
pub struct Job {
    pub scenario: String,
    pub mode: Mode,
    pub media: Media,
    /// The column the job fills: the library, or a variant's label.
    pub library: String,
    /// The library the worker runs (`--library`): the library itself, or the variant's library.
    pub adapter: String,
    /// A/B: the variant this job measures (its environment is built over `env_group`'s).
    pub variant: Option<Variant>,
    pub backend: Backend,
    pub env_group: String,
    pub device: Device,
    pub output_file: PathBuf,
    pub transforms: Vec<String>,
    /// Target rows: the targets moved with the image (`None`: image-only rows).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub targets: Option<TargetSet>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    pub config: RunConfig,
    pub jobs: Vec<Job>,
    pub expected_files: Vec<PathBuf>,
    /// The schedule the jobs run under (the config's, unless it cannot apply: see `schedule`).
    pub schedule: Schedule,
    /// Why the schedule differs from the config's, when it does.
    pub schedule_note: Option<String>,
    pub memory: MemoryEstimate,
    /// Target rows a selected library gets none of, each with why.
    pub target_notes: Vec<String>,
}

/// The schedule a resolved config runs under. Interleaving needs two or more libraries and the
/// registry's transforms (a spec file runs alone); one library measured to a precision keeps the
/// interleaved schedule, whose rounds and extra processes are what the precision rule drives.
pub fn schedule(cfg: &RunConfig) -> (Schedule, Option<String>) {
    let asked = cfg.execution.schedule.unwrap_or(policy::DEFAULT_SCHEDULE);
    if asked == Schedule::Sequential {
        return (asked, None);
    }
    let libraries = match cfg.selection.mode {
        Some(Mode::Decode) => cfg.selection.decoders.as_ref().map_or(0, Vec::len),
        _ => {
            cfg.selection.libraries.as_ref().map_or(0, Vec::len)
                + cfg.selection.variants.as_ref().map_or(0, Vec::len)
        }
    };
    if cfg.selection.spec.is_some() {
        let why = "a spec file runs its one library alone (sequential)";
        return (Schedule::Sequential, Some(why.into()));
    }
    if libraries < 2 && cfg.execution.precision.is_none() {
        let why = "one library: nothing to interleave with, measured alone (sequential)";
        return (Schedule::Sequential, Some(why.into()));
    }
    (asked, None)
}

/// Expands a resolved config. Libraries unknown to the matrix were rejected by validation.
pub fn build(cfg: &RunConfig) -> Plan {
    let jobs = if cfg.selection.mode == Some(Mode::Decode) {
        decode_jobs(cfg)
    } else {
        transform_jobs(cfg)
    };
    let mut expected_files: Vec<PathBuf> = jobs.iter().map(|j| j.output_file.clone()).collect();
    expected_files.push(naming::resolved_config(&output_dir(cfg)));
    expected_files.push(naming::cells_log(&output_dir(cfg)));
    let (schedule, schedule_note) = schedule(cfg);
    Plan {
        config: cfg.clone(),
        jobs,
        expected_files,
        schedule,
        schedule_note,
        memory: memory::estimate(cfg, schedule),
        target_notes: target_notes(cfg),
    }
}

/// Why a selected library gets no target rows (it has no API that moves targets).
fn target_notes(cfg: &RunConfig) -> Vec<String> {
    if cfg.target_sets().is_empty() {
        return Vec::new();
    }
    let m = Matrix::get();
    cfg.selection
        .libraries
        .iter()
        .flatten()
        .filter_map(|name| m.library(name))
        .filter(|lib| !lib.targets)
        .map(|lib| {
            format!(
                "{}: no target rows: it has no API that moves masks, boxes or keypoints with the image",
                lib.name
            )
        })
        .collect()
}

/// One job per selected decoder (decode scenarios): a Python worker in the decoder's group.
fn decode_jobs(cfg: &RunConfig) -> Vec<Job> {
    let m = Matrix::get();
    let out = output_dir(cfg);
    cfg.selection
        .decoders
        .iter()
        .flatten()
        .filter_map(|name| m.decoder(name))
        .map(|d| {
            let key = job_key(cfg, &d.name);
            Job {
                scenario: key.scenario.to_string(),
                mode: Mode::Decode,
                media: Media::Video,
                library: d.name.clone(),
                adapter: d.name.clone(),
                variant: None,
                backend: Backend::PythonWorker,
                env_group: d.env_group.clone(),
                device: Device::Cpu,
                output_file: naming::result_file(&out, &key),
                transforms: Vec::new(),
                targets: None,
            }
        })
        .collect()
}

/// One job per selected library (then one per target set where the library moves targets, its
/// column `<library>+<set>`), then one per variant, each over the selected transforms.
fn transform_jobs(cfg: &RunConfig) -> Vec<Job> {
    let m = Matrix::get();
    let plain = cfg
        .selection
        .libraries
        .iter()
        .flatten()
        .filter_map(|name| m.library(name))
        .flat_map(|lib| {
            let sets = cfg.target_sets().iter().filter(|_| lib.targets);
            let with = sets.map(move |set| (lib, targets::label(&lib.name, set), None, Some(set)));
            std::iter::once((lib, lib.name.clone(), None, None)).chain(with)
        });
    let variants = crate::variant::planned(cfg)
        .into_iter()
        .filter_map(|v| Some((m.library(&v.library)?, v.label.clone(), Some(v), None)));
    plain
        .chain(variants)
        .map(|(lib, label, variant, set)| transform_job(cfg, lib, label, variant, set))
        .collect()
}

/// One library's job over the selected transforms, filling the column `label`.
fn transform_job(
    cfg: &RunConfig,
    lib: &augbench_catalog::matrix::LibraryInfo,
    label: String,
    variant: Option<Variant>,
    targets: Option<&TargetSet>,
) -> Job {
    let mut key = job_key(cfg, &lib.name);
    key.library = &label;
    Job {
        scenario: key.scenario.to_string(),
        mode: key.mode,
        media: cfg.selection.media.unwrap_or(Media::Image),
        library: label.clone(),
        adapter: lib.name.clone(),
        variant,
        backend: lib.backend,
        env_group: lib.env_group_for(key.mode).to_string(),
        device: key.device,
        output_file: naming::result_file(&output_dir(cfg), &key),
        transforms: selected_transforms(cfg),
        targets: targets.cloned(),
    }
}

/// The naming key of one library's job under a resolved config.
pub fn job_key<'a>(cfg: &'a RunConfig, library: &'a str) -> JobKey<'a> {
    let e = &cfg.execution;
    let lib_has_cuda = Matrix::get()
        .library(library)
        .is_some_and(|l| l.devices.contains(&Device::Cuda));
    let mode = cfg.selection.mode.unwrap_or(Mode::Micro);
    // `auto` means CUDA where the library has it: CPU-only libraries are planned on the CPU, and
    // so are decoders (validation refuses `cuda` for them).
    let device = match e.device.unwrap_or(Device::Cpu) {
        _ if mode == Mode::Decode => Device::Cpu,
        Device::Auto if !lib_has_cuda => Device::Cpu,
        d => d,
    };
    JobKey {
        scenario: cfg.selection.scenario.as_deref().unwrap_or_default(),
        mode,
        library,
        device,
        scope: e
            .pipeline_scope
            .unwrap_or(policy::DEFAULT_PIPELINE_SCOPE)
            .name(),
        num_items: cfg.data.num_items,
        num_runs: e.num_runs.unwrap_or_default(),
        workers: e.workers.unwrap_or_default(),
        batch_size: e.batch_size.unwrap_or_default(),
        micro_batch: e.micro_batch.unwrap_or(policy::DEFAULT_MICRO_BATCH),
        instructions: mode == Mode::Micro
            && e.measure == Some(crate::config::Measure::Instructions),
    }
}

impl Plan {
    /// The plan as YAML: resolved config, then jobs, then expected files.
    pub fn to_yaml(&self) -> String {
        #[derive(Serialize)]
        struct JobView<'a> {
            scenario: &'a str,
            mode: Mode,
            media: Media,
            #[serde(skip_serializing_if = "Option::is_none")]
            library: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            decoder: Option<&'a str>,
            /// Target rows: the targets moved with the image.
            #[serde(skip_serializing_if = "Option::is_none")]
            targets: Option<String>,
            /// A/B: the library this variant is of, what it installs, and its role.
            #[serde(skip_serializing_if = "Option::is_none")]
            variant_of: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            installs: Option<String>,
            #[serde(skip_serializing_if = "Option::is_none")]
            compared_against: Option<&'a str>,
            backend: Backend,
            env_group: &'a str,
            device: Device,
            output_file: &'a PathBuf,
            /// Decode jobs: how the decoder reaches the sampled frames, and what it returns.
            #[serde(skip_serializing_if = "Option::is_none")]
            access: Option<augbench_catalog::matrix::Access>,
            #[serde(skip_serializing_if = "Option::is_none")]
            output: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            transform_count: Option<usize>,
            #[serde(skip_serializing_if = "Option::is_none")]
            transforms: Option<&'a [String]>,
        }
        #[derive(Serialize)]
        struct ScheduleView<'a> {
            name: Schedule,
            #[serde(skip_serializing_if = "Option::is_none")]
            note: Option<&'a str>,
            /// Decoded media held at once: every library's with `interleaved`.
            memory_held_at_once: String,
            memory_per_library: std::collections::BTreeMap<&'a str, String>,
            memory_basis: &'a str,
        }
        #[derive(Serialize)]
        struct View<'a> {
            config: &'a RunConfig,
            schedule: ScheduleView<'a>,
            jobs: Vec<JobView<'a>>,
            #[serde(skip_serializing_if = "<[String]>::is_empty")]
            no_target_rows: &'a [String],
            expected_files: &'a [PathBuf],
        }
        let jobs = self
            .jobs
            .iter()
            .map(|j| {
                let decoder = (j.mode == Mode::Decode)
                    .then(|| Matrix::get().decoder(&j.library))
                    .flatten();
                let transforms = decoder.is_none().then_some(j.transforms.as_slice());
                JobView {
                    scenario: &j.scenario,
                    mode: j.mode,
                    media: j.media,
                    library: decoder.is_none().then_some(j.library.as_str()),
                    decoder: decoder.map(|d| d.name.as_str()),
                    targets: j.targets.as_ref().map(ToString::to_string),
                    variant_of: j.variant.as_ref().map(|v| v.library.as_str()),
                    installs: j.variant.as_ref().map(|v| v.source.to_string()),
                    compared_against: j
                        .variant
                        .as_ref()
                        .filter(|v| v.baseline != v.label)
                        .map(|v| v.baseline.as_str()),
                    backend: j.backend,
                    env_group: &j.env_group,
                    device: j.device,
                    output_file: &j.output_file,
                    access: decoder.map(|d| d.access),
                    output: decoder.map(|d| d.output.as_str()),
                    transform_count: transforms.map(<[String]>::len),
                    transforms,
                }
            })
            .collect();
        let schedule = ScheduleView {
            name: self.schedule,
            note: self.schedule_note.as_deref(),
            memory_held_at_once: memory::human_bytes(self.memory.held_at_once),
            memory_per_library: self
                .memory
                .per_library
                .iter()
                .map(|(k, v)| (k.as_str(), memory::human_bytes(*v)))
                .collect(),
            memory_basis: &self.memory.basis,
        };
        let view = View {
            config: &self.config,
            schedule,
            jobs,
            no_target_rows: &self.target_notes,
            expected_files: &self.expected_files,
        };
        serde_saphyr::to_string(&view).unwrap_or_default()
    }
}
