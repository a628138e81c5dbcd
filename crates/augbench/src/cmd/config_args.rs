//! The `--config F` flag and the command-line overrides shared by `plan`, `validate` and `run`,
//! and the one function that turns them into a resolved, validated `RunConfig`.

use std::path::PathBuf;

use augbench_core::config::TransformSet;
use augbench_core::{
    ConfigError, Device, Measure, Media, Overrides, RunConfig, Schedule, Source, policy, resolve,
};

#[derive(Debug, Clone, clap::Args)]
pub struct ConfigArgs {
    /// Run configuration (YAML, `version: 1`); see configs/examples/.
    #[arg(long, short = 'c', value_name = "FILE")]
    pub config: PathBuf,
    /// Folder of media (read recursively); without it the built-in synthetic dataset is used.
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// COCO instances file of the `--data-dir` images (target rows; a relative path is read there).
    #[arg(long, value_name = "FILE")]
    pub annotations: Option<PathBuf>,
    /// Target sets measured with the image, beside the image-only rows (`boxes`,
    /// `mask+boxes+keypoints`; space- or comma-separated).
    #[arg(long, num_args = 1.., value_delimiter = ',', value_parser = parse_target_set)]
    pub targets: Option<Vec<augbench_core::targets::TargetSet>>,
    /// Output folder for results, cells and the resolved config.
    #[arg(long, short = 'o', value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// Libraries to run (space- or comma-separated).
    #[arg(long, num_args = 1.., value_delimiter = ',')]
    pub libraries: Option<Vec<String>>,
    /// Video decoders to measure (decode scenarios; space- or comma-separated).
    #[arg(long, num_args = 1.., value_delimiter = ',')]
    pub decoders: Option<Vec<String>>,
    /// Transforms to run (canonical names; space- or comma-separated).
    #[arg(long, num_args = 1.., value_delimiter = ',')]
    pub transforms: Option<Vec<String>>,
    /// Curated set of the scenario, or every registered transform.
    #[arg(long, value_enum)]
    pub transform_set: Option<TransformSetArg>,
    /// Custom spec file (Python) defining LIBRARY, __call__ and TRANSFORMS.
    #[arg(long, short = 's', value_name = "FILE")]
    pub spec: Option<PathBuf>,
    #[arg(long, short = 'n', help = help_num_items())]
    pub num_items: Option<u64>,
    #[arg(long, value_name = "N", help = format!("Frames per video clip (video scenarios) [default: {}]", policy::DEFAULT_CLIP_LENGTH))]
    pub clip_length: Option<u64>,
    /// A fixed run count; it replaces a precision target the config file sets.
    #[arg(long, short = 'r', help = format!("Timed runs per transform, in place of the config's precision target [default: {}]", policy::DEFAULT_NUM_RUNS))]
    pub num_runs: Option<u64>,
    /// Measure to a precision: rounds go on until every paired speedup's interval (one library:
    /// its figure's) is within ± this fraction (e.g. 0.03), or the transform's budget is spent.
    #[arg(long, value_name = "FRACTION", conflicts_with = "num_runs")]
    pub precision: Option<f64>,
    #[arg(long, value_name = "SEC", help = help_transform_budget())]
    pub transform_budget: Option<f64>,
    #[arg(long, value_enum)]
    pub device: Option<DeviceArg>,
    /// Loader workers (pipeline mode; micro needs 0).
    #[arg(long)]
    pub workers: Option<u64>,
    #[arg(long, help = format!("Batch size (pipeline mode) [default: {}]", policy::DEFAULT_BATCH_SIZE))]
    pub batch_size: Option<u64>,
    #[arg(long, value_name = "N", help = help_micro_batch())]
    pub micro_batch: Option<u64>,
    #[arg(long, value_enum, help = help_schedule())]
    pub schedule: Option<ScheduleArg>,
    #[arg(long, value_enum, help = help_measure())]
    pub measure: Option<MeasureArg>,
    /// A/B: a variant of a library, `[LABEL=]SOURCE` (repeat the flag): LABEL is `<library>[@tag]`,
    /// SOURCE a pin (`pillow==11.3.0`), a requirement file or a checkout folder
    /// (e.g. `--variant pillow@11.3.0=pillow==11.3.0 --variant pillow@local=../Pillow`).
    #[arg(long = "variant", value_name = "[LABEL=]SOURCE", value_parser = augbench_core::variant::parse_flag)]
    pub variants: Vec<augbench_core::variant::VariantConfig>,
    /// A/B: label of the variant the others are compared against [default: the first variant].
    #[arg(long, value_name = "LABEL")]
    pub baseline_variant: Option<String>,
    /// Use the existing requirement locks as they are.
    #[arg(long)]
    pub no_refresh_requirements: bool,
    /// Keep transforms already finished with the same parameters; measure only the rest.
    #[arg(long)]
    pub resume: bool,
}

/// `--targets boxes,mask+keypoints`: each value one target set.
fn parse_target_set(value: &str) -> Result<augbench_core::targets::TargetSet, String> {
    value.parse()
}

/// Help for `--num-items`, with policy's defaults per media.
fn help_num_items() -> String {
    format!(
        "Items (images or clips) per library [default: {} images, {} clips]",
        policy::default_num_items(Media::Image),
        policy::default_num_items(Media::Video)
    )
}

/// Help for `--micro-batch`, with the libraries that have a batched regime (from the matrix).
fn help_micro_batch() -> String {
    let batched: Vec<&str> = augbench_core::Matrix::get()
        .libraries
        .iter()
        .filter(|l| l.batched)
        .map(|l| l.name.as_str())
        .collect();
    format!(
        "Micro: apply each transform to a stack of N items per call, a regime of its own ({}) [default: {}]",
        batched.join(", "),
        policy::DEFAULT_MICRO_BATCH
    )
}

/// Help for `--transform-budget`, with policy's default.
fn help_transform_budget() -> String {
    format!(
        "With --precision: seconds of timed rounds one transform may spend [default: {}]",
        policy::DEFAULT_TRANSFORM_BUDGET_SEC
    )
}

/// Help for `--measure`, with policy's default.
fn help_measure() -> String {
    format!(
        "Micro: what each row measures: wall-clock time, or instructions per item counted under Valgrind (repeatable on a busy machine; docs/methodology.md, \"Instruction counts\") [default: {}]",
        policy::DEFAULT_MEASURE
    )
}

/// Help for `--schedule`, with policy's default.
fn help_schedule() -> String {
    format!(
        "Micro: measure each transform across all libraries in paired rounds (interleaved), or one library after another (sequential) [default: {}]",
        policy::DEFAULT_SCHEDULE
    )
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum MeasureArg {
    Time,
    Instructions,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ScheduleArg {
    Interleaved,
    Sequential,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum TransformSetArg {
    Paper,
    All,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum DeviceArg {
    Cpu,
    Cuda,
    Auto,
}

impl ConfigArgs {
    fn overrides(&self) -> Overrides {
        Overrides {
            data_dir: self.data_dir.clone(),
            annotations: self.annotations.clone(),
            targets: self.targets.clone(),
            output: self.output.clone(),
            libraries: self.libraries.clone(),
            decoders: self.decoders.clone(),
            transforms: self.transforms.clone(),
            transform_set: self.transform_set.map(|t| match t {
                TransformSetArg::Paper => TransformSet::Paper,
                TransformSetArg::All => TransformSet::All,
            }),
            spec: self.spec.clone(),
            num_items: self.num_items,
            clip_length: self.clip_length,
            num_runs: self.num_runs,
            precision: self.precision,
            transform_budget_sec: self.transform_budget,
            device: self.device.map(|d| match d {
                DeviceArg::Cpu => Device::Cpu,
                DeviceArg::Cuda => Device::Cuda,
                DeviceArg::Auto => Device::Auto,
            }),
            workers: self.workers,
            batch_size: self.batch_size,
            micro_batch: self.micro_batch,
            schedule: self.schedule.map(|s| match s {
                ScheduleArg::Interleaved => Schedule::Interleaved,
                ScheduleArg::Sequential => Schedule::Sequential,
            }),
            measure: self.measure.map(|m| match m {
                MeasureArg::Time => Measure::Time,
                MeasureArg::Instructions => Measure::Instructions,
            }),
            variants: (!self.variants.is_empty()).then(|| self.variants.clone()),
            baseline: self.baseline_variant.clone(),
            no_refresh_requirements: self.no_refresh_requirements,
            resume: self.resume,
        }
    }

    /// (config key, flag) pairs the user set on the command line, for error messages.
    fn cli_keys(&self) -> Vec<(&'static str, &'static str)> {
        let pairs: [(&'static str, &'static str, bool); 20] = [
            ("data_dir", "--data-dir", self.data_dir.is_some()),
            ("annotations", "--annotations", self.annotations.is_some()),
            ("targets", "--targets", self.targets.is_some()),
            ("output_dir", "--output", self.output.is_some()),
            ("libraries", "--libraries", self.libraries.is_some()),
            ("decoders", "--decoders", self.decoders.is_some()),
            ("transforms", "--transforms", self.transforms.is_some()),
            (
                "transform_set",
                "--transform-set",
                self.transform_set.is_some(),
            ),
            ("spec", "--spec", self.spec.is_some()),
            ("num_items", "--num-items", self.num_items.is_some()),
            ("clip_length", "--clip-length", self.clip_length.is_some()),
            ("num_runs", "--num-runs", self.num_runs.is_some()),
            ("precision", "--precision", self.precision.is_some()),
            (
                "transform_budget_sec",
                "--transform-budget",
                self.transform_budget.is_some(),
            ),
            ("device", "--device", self.device.is_some()),
            ("workers", "--workers", self.workers.is_some()),
            ("batch_size", "--batch-size", self.batch_size.is_some()),
            ("micro_batch", "--micro-batch", self.micro_batch.is_some()),
            ("schedule", "--schedule", self.schedule.is_some()),
            ("measure", "--measure", self.measure.is_some()),
        ];
        let variant = !self.variants.is_empty();
        let variant_keys = [
            "variants",
            "library",
            "label",
            "pin",
            "requirements",
            "path",
        ]
        .map(|k| (k, "--variant", variant));
        let baseline = (
            "baseline",
            "--baseline-variant",
            self.baseline_variant.is_some(),
        );
        pairs
            .into_iter()
            .chain(variant_keys)
            .chain([baseline])
            .filter(|(_, _, set)| *set)
            .map(|(k, f, _)| (k, f))
            .collect()
    }

    /// Loads the file, applies what the user typed, validates and fills every default.
    pub fn resolve(&self) -> Result<RunConfig, ConfigError> {
        let text =
            std::fs::read_to_string(&self.config).map_err(|e| ConfigError::io(&self.config, &e))?;
        let mut cfg = RunConfig::from_yaml(&text, &self.config)?;
        self.overrides().apply(&mut cfg);
        let mut src = Source::new(&self.config, &text);
        src.cli_keys = self.cli_keys();
        resolve::resolve(cfg, &src)
    }
}
