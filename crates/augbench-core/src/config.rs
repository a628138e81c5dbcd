//! Run configuration: the typed YAML schema (`version: 1`), loading with located errors, and
//! command-line overrides. Every field a user may leave out is an `Option`; `resolve` fills it from
//! policy so the resolved file is fully explicit and reproduces the same plan when fed back.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use augbench_catalog::config_error::ConfigError;
use augbench_catalog::matrix::{Device, Media, Mode};

pub const CONFIG_VERSION: u32 = 1;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    pub version: u32,
    #[serde(default)]
    pub selection: Selection,
    #[serde(default)]
    pub data: DataConfig,
    #[serde(default)]
    pub execution: Execution,
    #[serde(default)]
    pub output: OutputConfig,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cloud: Option<CloudConfig>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TransformSet {
    /// The curated set of the scenario (`specs/sets/<set>.txt`).
    Paper,
    /// Every transform in the registry.
    All,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ThreadPolicy {
    /// One thread everywhere (micro runs).
    Single,
    /// Production threading and loader workers (pipeline runs).
    PipelineDefault,
    /// Pipelines with one worker: controlled appendix and debug rows.
    PipelineSingleWorker,
}

/// What a pipeline row's clock covers (names kept from the reference benchmark, docs/pipeline.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PipelineScope {
    /// Decoded items preloaded in memory: the loader crops, augments, normalizes and batches.
    MemoryDataloaderAugment,
    /// The loader also decodes every file (the training view).
    DecodeDataloaderAugment,
    /// As `decode_dataloader_augment`, plus the pinned host-to-device copy of each batch (CUDA).
    DecodeDataloaderAugmentBatchCopy,
}

impl PipelineScope {
    pub const ALL: [PipelineScope; 3] = [
        PipelineScope::MemoryDataloaderAugment,
        PipelineScope::DecodeDataloaderAugment,
        PipelineScope::DecodeDataloaderAugmentBatchCopy,
    ];

    pub fn name(self) -> &'static str {
        match self {
            PipelineScope::MemoryDataloaderAugment => "memory_dataloader_augment",
            PipelineScope::DecodeDataloaderAugment => "decode_dataloader_augment",
            PipelineScope::DecodeDataloaderAugmentBatchCopy => {
                "decode_dataloader_augment_batch_copy"
            }
        }
    }

    /// Whether the loader decodes files (otherwise the items are decoded once, before).
    pub fn decodes(self) -> bool {
        self != PipelineScope::MemoryDataloaderAugment
    }
}

impl std::fmt::Display for PipelineScope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How the libraries of a micro run share the machine's time (docs/scheduling.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Schedule {
    /// A transform across all its libraries at once: live workers for each, then rounds in which
    /// every library times one run in a seeded random order; speedups are paired per round.
    Interleaved,
    /// One library after another, each in its own job (the order of the plan).
    Sequential,
}

/// What a micro row measures (docs/methodology.md, "Instruction counts").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Measure {
    /// Wall-clock time of the timed runs (items per second).
    Time,
    /// Instructions per item, counted under Valgrind (callgrind): repeatable on a busy machine.
    Instructions,
}

impl std::fmt::Display for Measure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Measure::Time => "time",
            Measure::Instructions => "instructions",
        })
    }
}

impl std::fmt::Display for Schedule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Schedule::Interleaved => "interleaved",
            Schedule::Sequential => "sequential",
        })
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Selection {
    pub scenario: Option<String>,
    pub mode: Option<Mode>,
    pub media: Option<Media>,
    pub libraries: Option<Vec<String>>,
    /// Decode scenarios: the video decoders to measure (instead of libraries and transforms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decoders: Option<Vec<String>>,
    pub transforms: Option<Vec<String>>,
    pub transform_set: Option<TransformSet>,
    pub spec: Option<PathBuf>,
    pub multichannel: Option<bool>,
    /// A/B: libraries named more than once, each with its own environment and label (§14).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variants: Option<Vec<VariantConfig>>,
    /// A/B: the label of the variant the others are compared against (default: the first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<String>,
    /// Detection and segmentation: the target sets measured with the image, each beside the
    /// image-only rows (`targets::TargetSet`, docs/targets.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub targets: Option<Vec<crate::targets::TargetSet>>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DataConfig {
    pub data_dir: Option<PathBuf>,
    pub gcs_uri: Option<String>,
    pub remote_data_dir: Option<String>,
    pub num_items: Option<u64>,
    pub num_channels: Option<u64>,
    pub clip_length: Option<u64>,
    /// Seed of the built-in synthetic dataset (used when `data_dir` is absent).
    pub synthetic_seed: Option<u64>,
    /// Target rows over a `data_dir`: its COCO annotations file (a relative path is read in
    /// `data_dir`). Without it, target rows use the built-in annotated synthetic dataset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<PathBuf>,
    /// What a bad annotation does: refuse the run (exit 2) or skip it, counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotation_errors: Option<AnnotationErrors>,
}

impl RunConfig {
    /// The target sets this config measures (none: image-only rows alone).
    pub fn target_sets(&self) -> &[crate::targets::TargetSet] {
        self.selection.targets.as_deref().unwrap_or_default()
    }
}

/// What a bad COCO annotation does (`data.annotation_errors`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AnnotationErrors {
    /// The first bad annotation stops the run with its file, id and what is wrong (exit 2).
    Refuse,
    /// A bad annotation is skipped, counted and named in the run's record.
    Skip,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Warmup {
    pub window: Option<u64>,
    pub threshold: Option<f64>,
    pub max_passes: Option<u64>,
    pub min_windows: Option<u64>,
    pub max_seconds: Option<f64>,
    /// The untimed pass over every item that ends a micro warmup: `auto` (policy's rule by
    /// seconds per item), `always` or `never`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_pass: Option<FullPass>,
}

/// Whether a micro warmup ends with one untimed pass over every item (docs/methodology.md,
/// "One transform, step by step").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FullPass {
    /// A fast row takes the pass; a slower one only where its first pass over the warmup subset
    /// read cold (exec's `takes_full_pass`).
    Auto,
    Always,
    Never,
}

impl std::fmt::Display for FullPass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            FullPass::Auto => "auto",
            FullPass::Always => "always",
            FullPass::Never => "never",
        })
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Execution {
    pub schedule: Option<Schedule>,
    /// Micro only: time (the default) or instructions counted under Valgrind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measure: Option<Measure>,
    pub num_runs: Option<u64>,
    pub processes: Option<u64>,
    /// Measure to a precision: rounds and processes go on until every paired speedup's rerun
    /// interval (one library: its figure's) is within ± this fraction, or `transform_budget_sec`
    /// is spent.
    pub precision: Option<f64>,
    /// With `precision`: the seconds of timed rounds one transform may spend, all processes.
    pub transform_budget_sec: Option<f64>,
    pub batch_size: Option<u64>,
    /// Micro only, for libraries with a batched regime: items stacked into one call (1 = per item).
    pub micro_batch: Option<u64>,
    pub workers: Option<u64>,
    pub min_time: Option<f64>,
    pub min_batches: Option<u64>,
    pub pipeline_scope: Option<PipelineScope>,
    pub device: Option<Device>,
    pub thread_policy: Option<ThreadPolicy>,
    pub refresh_requirements: Option<bool>,
    pub slow_threshold_sec_per_item: Option<f64>,
    pub slow_preflight_items: Option<u64>,
    pub disable_slow_skip: Option<bool>,
    pub request_timeout_sec: Option<f64>,
    pub resume: Option<bool>,
    /// Before the timed measurements, run the equivalence check (`augbench check equivalence`)
    /// over the run's libraries and transforms; image-rgb micro runs on the CPU only.
    pub check_equivalence: Option<bool>,
    #[serde(default)]
    pub warmup: Warmup,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputConfig {
    pub output_dir: Option<PathBuf>,
    pub gcs_results_uri: Option<String>,
    /// Library the tables, the report and the run summary compare the others against; absent:
    /// AlbumentationsX when present, else the library measured on the most rows (the report
    /// crate's `reference` module owns that rule).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_library: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CloudProvider {
    /// Google Cloud Batch, through `gcloud`; files in a GCS bucket.
    Gcp,
    /// A Slurm cluster, through `sbatch`/`squeue`/`scancel`; files on a shared folder.
    Slurm,
}

/// A run sent to another engine (docs/cluster.md): one task per shard of the plan, one machine per
/// task. `provider: gcp` (the default) runs on Google Cloud Batch with results under
/// `output.gcs_results_uri`; `provider: slurm` runs one `sbatch --array` job with its files under
/// `shared_dir`. Omitted fields are filled by `resolve` (`crate::cloud`) from policy.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CloudConfig {
    pub provider: Option<CloudProvider>,
    /// Google Cloud project; absent means gcloud's configured project.
    pub project: Option<String>,
    /// Batch location; derived from `zone` when absent.
    pub region: Option<String>,
    /// Zone the VMs run in; absent means any zone of `region`.
    pub zone: Option<String>,
    pub machine_type: Option<String>,
    /// Accelerator type (e.g. `nvidia-l4`) for GPU jobs; absent for CPU machine shapes.
    pub gpu_type: Option<String>,
    pub gpu_count: Option<u64>,
    pub disk_size_gb: Option<u64>,
    /// Spot VMs; a preempted task is retried, a failed one is not.
    pub preemptible: Option<bool>,
    /// Write the job JSON, task script and plan into the output folder and call nothing.
    pub dry_run: Option<bool>,
    /// Wait for the job, show its tasks, and fetch the results at the end.
    pub attached: Option<bool>,
    /// Cache each built Python environment in GCS by lock hash, so later tasks restore it.
    pub venv_cache: Option<bool>,
    /// Where the environment cache lives (default `<gcs_results_uri>/envs`).
    pub venv_cache_uri: Option<String>,
    /// Tasks (VMs) running at once.
    pub parallelism: Option<u64>,
    /// Tasks the plan is split into (interleaved: slices of the transform list, every library in
    /// each; sequential: one library per task).
    pub shards: Option<u64>,
    /// A task running longer than this is stopped by Batch (Slurm: the array's `--time`).
    pub max_run_duration_sec: Option<u64>,
    /// Slurm: a folder every node reads and writes (bundle, task folders, environment cache).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_dir: Option<PathBuf>,
    /// Slurm: `--partition`; absent means the cluster's default partition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<String>,
    /// Slurm: `--account`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<String>,
    /// Slurm: `--constraint` (node features, e.g. one CPU model for every task).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub constraint: Option<String>,
    /// Slurm: `--gres` for GPU tasks (e.g. `gpu:1`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gres: Option<String>,
    /// Slurm: the augbench cache on each node (environments); absent means each node's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_cache_dir: Option<PathBuf>,
}

/// Command-line overrides. `None` means the user did not type the flag, so the file wins.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overrides {
    pub data_dir: Option<PathBuf>,
    pub annotations: Option<PathBuf>,
    pub targets: Option<Vec<crate::targets::TargetSet>>,
    pub output: Option<PathBuf>,
    pub libraries: Option<Vec<String>>,
    pub decoders: Option<Vec<String>>,
    pub transforms: Option<Vec<String>>,
    pub transform_set: Option<TransformSet>,
    pub spec: Option<PathBuf>,
    pub num_items: Option<u64>,
    /// Frames per video clip.
    pub clip_length: Option<u64>,
    pub num_runs: Option<u64>,
    pub precision: Option<f64>,
    pub transform_budget_sec: Option<f64>,
    pub device: Option<Device>,
    pub workers: Option<u64>,
    pub batch_size: Option<u64>,
    pub micro_batch: Option<u64>,
    pub schedule: Option<Schedule>,
    pub measure: Option<Measure>,
    /// A/B variants (`--variant`); they replace the file's `variants`.
    pub variants: Option<Vec<VariantConfig>>,
    /// The baseline variant's label (`--baseline-variant`).
    pub baseline: Option<String>,
    pub no_refresh_requirements: bool,
    pub resume: bool,
}

impl Overrides {
    /// Applies only what the user typed.
    pub fn apply(&self, cfg: &mut RunConfig) {
        set_if(&mut cfg.data.data_dir, &self.data_dir);
        set_if(&mut cfg.data.annotations, &self.annotations);
        set_if(&mut cfg.selection.targets, &self.targets);
        set_if(&mut cfg.output.output_dir, &self.output);
        set_if(&mut cfg.selection.libraries, &self.libraries);
        set_if(&mut cfg.selection.decoders, &self.decoders);
        set_if(&mut cfg.selection.transforms, &self.transforms);
        set_if(&mut cfg.selection.transform_set, &self.transform_set);
        set_if(&mut cfg.selection.spec, &self.spec);
        set_if(&mut cfg.data.num_items, &self.num_items);
        set_if(&mut cfg.data.clip_length, &self.clip_length);
        set_if(&mut cfg.execution.num_runs, &self.num_runs);
        set_if(&mut cfg.execution.precision, &self.precision);
        set_if(
            &mut cfg.execution.transform_budget_sec,
            &self.transform_budget_sec,
        );
        self.replace_file_precision(cfg);
        set_if(&mut cfg.execution.device, &self.device);
        set_if(&mut cfg.execution.workers, &self.workers);
        set_if(&mut cfg.execution.batch_size, &self.batch_size);
        set_if(&mut cfg.execution.micro_batch, &self.micro_batch);
        set_if(&mut cfg.execution.schedule, &self.schedule);
        set_if(&mut cfg.execution.measure, &self.measure);
        if self.variants.is_some() {
            // The file's baseline names one of the variants the flags replace.
            cfg.selection.baseline = None;
        }
        set_if(&mut cfg.selection.variants, &self.variants);
        set_if(&mut cfg.selection.baseline, &self.baseline);
        if self.no_refresh_requirements {
            cfg.execution.refresh_requirements = Some(false);
        }
        if self.resume {
            cfg.execution.resume = Some(true);
        }
    }
}

impl Overrides {
    /// A run count or a spec file typed on the command line, with no `--precision`, replaces a
    /// precision target (and its budget) the file sets: the user's flag is honoured, never
    /// outranked by the file, and a spec file's sequential run takes `num_runs` runs as it did
    /// before the shipped configs set a precision.
    fn replace_file_precision(&self, cfg: &mut RunConfig) {
        let fixed = self.num_runs.is_some() || self.spec.is_some();
        if fixed && self.precision.is_none() {
            cfg.execution.precision = None;
            if self.transform_budget_sec.is_none() {
                cfg.execution.transform_budget_sec = None;
            }
        }
    }
}

fn set_if<T: Clone>(slot: &mut Option<T>, value: &Option<T>) {
    if let Some(v) = value {
        *slot = Some(v.clone());
    }
}

impl RunConfig {
    /// Parses YAML text; `file` is only used to name the source in errors.
    pub fn from_yaml(text: &str, file: &Path) -> Result<RunConfig, ConfigError> {
        if is_production_config(text) {
            return Err(ConfigError::at_key(
                file,
                text,
                &["production"],
                "this is a production config (production cells), not a run config",
                format!(
                    "run it with `augbench production --config {}`",
                    file.display()
                ),
            ));
        }
        let cfg: RunConfig =
            serde_saphyr::from_str(text).map_err(|e| ConfigError::from_parse(file, text, &e))?;
        if cfg.version != CONFIG_VERSION {
            return Err(ConfigError::at_key(
                file,
                text,
                &["version"],
                format!("unsupported config version {}", cfg.version),
                format!("this augbench reads `version: {CONFIG_VERSION}`"),
            ));
        }
        Ok(cfg)
    }

    /// Reads and parses a config file.
    pub fn load(path: &Path) -> Result<RunConfig, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError::io(path, &e))?;
        RunConfig::from_yaml(&text, path)
    }

    pub fn to_yaml(&self) -> String {
        // Serializing plain data structs cannot fail; fall back to JSON (valid YAML) if it ever does.
        serde_saphyr::to_string(self)
            .unwrap_or_else(|_| serde_json::to_string_pretty(self).unwrap_or_default())
    }

    pub fn is_cloud(&self) -> bool {
        self.cloud.is_some()
    }

    /// The engine of a run with a `cloud:` section (Cloud Batch unless it names Slurm).
    pub fn cloud_provider(&self) -> Option<CloudProvider> {
        let c = self.cloud.as_ref()?;
        Some(c.provider.unwrap_or(CloudProvider::Gcp))
    }
}

/// One variant as written under `selection.variants`. Exactly one of `pin`, `requirements` and
/// `path` says what is installed over the library's own environment.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VariantConfig {
    /// The library (a Python library of the matrix) this is a variant of.
    pub library: String,
    /// Column and file-name label; default `<library>@<version>` for a `==` pin,
    /// `<library>@<file stem>` for a requirement file, `<library>@local` for a checkout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// A requirement line installed over the library's environment (`pillow==11.3.0`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pin: Option<String>,
    /// A requirement file installed over the library's environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requirements: Option<PathBuf>,
    /// A local checkout (a folder with `pyproject.toml`, `setup.py` or `setup.cfg`), installed
    /// into its own cached environment, rebuilt when its files change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
}

/// Whether a config's text is a production config (a top-level `production:` key) rather than a
/// run config: `validate` and the tests that walk `configs/` read each kind with its own reader,
/// and each reader names the other command for the other kind.
pub fn is_production_config(text: &str) -> bool {
    text.lines()
        .any(|l| l.trim_end() == "production:" || l.starts_with("production: "))
}
