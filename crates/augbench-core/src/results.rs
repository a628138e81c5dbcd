//! Result types: one JSON file per job, in the public reference benchmark's layout (top-level
//! `metadata` and `results`), plus our `ci_low`/`ci_high`. Our own files are read back with
//! `deny_unknown_fields`, so a schema drift fails loudly; `format_version` marks our files.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::machine_card::MachineCard;
use augbench_stats::{PairedSummary, Summary};

/// Version of our result layout. Readers reject files that claim a newer one. 2: the machine card
/// is `system_info` itself (format 1 nested it under `system_info.card`; still read).
pub const RESULT_FORMAT_VERSION: u32 = 2;

/// `error_kind` of a transform whose output or parameters broke the contract with the spec.
pub const CONTRACT_ERROR: &str = "contract";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResultFile {
    pub metadata: Metadata,
    pub results: BTreeMap<String, TransformResult>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Metadata {
    pub format_version: u32,
    /// The machine card, in the reference's `system_info` key (earlier layouts are lifted).
    #[serde(deserialize_with = "crate::machine_card::read_any_layout")]
    pub system_info: MachineCard,
    pub library_versions: BTreeMap<String, String>,
    pub thread_settings: BTreeMap<String, String>,
    pub environment: EnvironmentInfo,
    pub gpu: Option<serde_json::Value>,
    pub dataset: DatasetInfo,
    pub timing: TimingInfo,
    pub scenario: String,
    pub mode: String,
    pub library: String,
    pub device: String,
    pub benchmark_params: BenchmarkParams,
    pub run_config: serde_json::Value,
    /// Pipeline mode: how the loader ran (scope, decoder, workers, schedule); absent for micro.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pipeline: Option<PipelineInfo>,
    /// With `execution.check_equivalence`: the run's equivalence check as this library saw it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub equivalence: Option<augbench_catalog::equivalence::EquivalenceSummary>,
    /// Where the run's wall time went (all its libraries), taken when this file was closed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_split: Option<crate::time_split::TimeSplit>,
    /// This library's share of that time, per row (its own work first, as transform `""`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub time_by_row: Vec<crate::time_split::RowTime>,
    /// A/B runs: the variant this file measured (`library` above is its label).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<crate::variant::VariantRecord>,
    /// Target rows: what moved with each image, and from which annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub targets: Option<TargetsInfo>,
}

/// Target rows, for the whole file (docs/targets.md): the targets every row moved with the
/// image, the library whose own call moved them, and where they came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetsInfo {
    /// The target set (`mask+boxes`), in canonical order.
    pub set: String,
    /// The library measured (the file's `library` is its column, `<library>+<set>`).
    pub library: String,
    /// The annotations file read (COCO), or the annotated synthetic dataset's.
    pub annotations: String,
    /// Items measured with targets, and the dataset's items without any (image-only rows only).
    pub items: u64,
    pub items_without_targets: u64,
    /// Annotations skipped as bad (`data.annotation_errors: skip`), each counted here.
    pub skipped_annotations: u64,
    /// Totals over the items measured, as the worker loaded them.
    pub boxes: u64,
    pub keypoints: u64,
}

/// Pipeline mode, for the whole file: what every row's clock covered and how the loader ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PipelineInfo {
    pub scope: String,
    /// The decoder the library read files with (the memory scope decoded them once, before).
    pub decoder: String,
    /// Loader worker processes; 0 = the main process loads (recorded as such).
    pub workers: u64,
    pub main_process_loading: bool,
    pub batch_size: u64,
    /// Video: frames per item (each item is a clip; batches are `B×T×3×H×W`); absent for images.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clip_length: Option<u64>,
    pub prefetch_factor: u64,
    pub min_batches: u64,
    pub min_time: f64,
    /// GPU split: workers crop, the main process runs T and Normalize on the device.
    pub split: bool,
    /// Seed of the sample order shared by every library.
    pub order_seed: u64,
    /// Notes on how the labels came to be (e.g. `device: auto` falling back to the CPU).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// Pipeline mode, per transform: the loader's start, its steady state, and what it delivered.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PipelineDetail {
    /// Seconds from building the loader's iterator to the first batch (worker start-up, the
    /// first decode and transform), kept out of every timed window.
    pub time_to_first_batch: f64,
    /// Batches taken after the first, before the clock started (every worker delivered and the
    /// prefetch queue filled).
    pub warm_batches: u64,
    /// Batches in each run's window.
    pub batches: Vec<u64>,
    /// Items/s of each run's first and second half of the window.
    pub half_rates: Vec<[f64; 2]>,
    /// The largest |second half / first half − 1| over the runs.
    pub drift: f64,
    /// The first batch as the output contract saw it.
    pub batch: serde_json::Value,
    /// Threads each loader worker reported.
    pub worker_threads: Vec<serde_json::Value>,
    /// Where the transform ran: the device (GPU split), or `cpu` in the loader workers (every
    /// CPU row, and crop transforms, which are the crop stage itself, under the split).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub transform_device: String,
    /// Items/s of the decode ceiling's windows timed in this row's rounds (the companion loader,
    /// one window beside each of the row's, in the same process split); empty when the rounds
    /// had none (the sequential schedule, the ceiling row itself, files written before).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ceiling_throughputs: Vec<f64>,
    /// This row against those windows, round by round (`ratio`: the row's share of its ceiling).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ceiling: Option<PairedSummary>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnvironmentInfo {
    pub argv: Vec<String>,
    pub git_commit: Option<String>,
    pub git_branch: Option<String>,
    pub git_dirty: Option<bool>,
    pub toolkit_version: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DatasetInfo {
    /// Folder read, or the synthetic dataset's cache folder.
    pub path: String,
    pub media: String,
    pub synthetic: bool,
    pub file_count: u64,
    pub total_bytes: u64,
    pub extensions: Vec<String>,
    /// Files skipped as unreadable or corrupt, and files converted (grayscale/RGBA → RGB).
    pub skipped: u64,
    pub converted: u64,
    /// Video: how the clips every library loaded were made (absent for images and old files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clips: Option<ClipsInfo>,
}

/// Video clips: sampled once, by one decoder, into a cache every library reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClipsInfo {
    /// Frames per clip.
    pub clip_length: u64,
    /// The frame-index rule, with its version (e.g. `linspace-floor-repeat-last/v1`).
    pub sampling_rule: String,
    /// Who decoded the video files (`opencv-python-headless 5.0.0`), or how frame folders were
    /// read (`frame-files (copied)`), joined by ` + ` when the dataset has both.
    pub decoder: String,
    /// The clip cache folder the workers read.
    pub cache: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimingInfo {
    pub backend: String,
    pub measurement_scope: String,
    pub includes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BenchmarkParams {
    pub num_items: u64,
    pub num_runs: u64,
    pub processes: u64,
    pub channels: u64,
    pub clip_length: Option<u64>,
    pub workers: u64,
    pub batch_size: u64,
    /// Micro batched regime: items per call; absent for the per-item regime.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub micro_batch: Option<u64>,
    pub min_time: f64,
    pub thread_policy: String,
    pub precision_target: Option<f64>,
    /// With `precision_target`: the seconds of timed rounds a transform may spend.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transform_budget_sec: Option<f64>,
    pub slow_threshold_sec_per_item: f64,
    pub slow_preflight_items: u64,
    pub disable_slow_skip: bool,
    pub warmup_window: u64,
    pub warmup_threshold: f64,
    pub max_warmup_iterations: u64,
    /// Micro: the warmup's full-pass setting (`auto`, `always`, `never`); absent in files
    /// written before it existed (they always took the pass).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_full_pass: Option<String>,
    /// Micro: `interleaved` (paired rounds across libraries) or `sequential`; absent in files
    /// written before schedules existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<String>,
    /// Micro: `instructions` when the rows are instruction counts under Valgrind; absent for
    /// time (and in files written before counts existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measure: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Slow,
    Unsupported,
    Error,
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Status::Ok => "ok",
            Status::Slow => "slow",
            Status::Unsupported => "unsupported",
            Status::Error => "error",
        })
    }
}

/// A list of numbers read back as it was written: serde_json writes a NaN or infinite float as
/// `null` (and Python's `json` writes `NaN`, read as `null`), so a `null` entry is read as NaN;
/// readers drop non-finite runs with a warning.
fn floats_or_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<f64>, D::Error> {
    let v: Vec<Option<f64>> = Deserialize::deserialize(d)?;
    Ok(v.into_iter().map(|x| x.unwrap_or(f64::NAN)).collect())
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransformResult {
    pub status: Option<Status>,
    pub supported: bool,
    /// Canonical parameters measured; `--resume` only skips a transform whose params match.
    pub params: serde_json::Value,
    #[serde(deserialize_with = "floats_or_null")]
    pub throughputs: Vec<f64>,
    pub median_throughput: Option<f64>,
    pub mean_throughput: Option<f64>,
    pub std_throughput: Option<f64>,
    pub cv_throughput: Option<f64>,
    pub throughput_ci95: Option<[f64; 2]>,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    /// 95% rerun interval: where a repeat's median lands (`stats::bootstrap_rerun_interval`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rerun_low: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rerun_high: Option<f64>,
    /// The headline figure: policy's estimator over `throughputs` (`figure_estimator` names it)
    /// and its 95% rerun interval on the log scale. Absent in older files: readers then show
    /// `median_throughput` and say so (`TransformResult::headline`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub figure_throughput: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub figure_estimator: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub figure_low: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub figure_high: Option<f64>,
    /// With `processes` > 1: runs per worker process, in the order of `throughputs`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub process_runs: Vec<u64>,
    pub p50_throughput: Option<f64>,
    pub p75_throughput: Option<f64>,
    pub p90_throughput: Option<f64>,
    pub p95_throughput: Option<f64>,
    /// Seconds per run (one pass over all items).
    #[serde(deserialize_with = "floats_or_null")]
    pub times: Vec<f64>,
    /// The timing thread's CPU seconds per run, beside `times` (docs/methodology.md, "Thread CPU
    /// time"): empty in older files and from workers without a CPU clock.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpu_times: Vec<f64>,
    /// A/B micro rows: the chunks of items each run was taken in, the variants alternating
    /// chunk by chunk within a round (docs/ab.md, "Chunked rounds"); absent for whole runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_chunks: Option<u64>,
    pub mean_time: Option<f64>,
    pub std_time: Option<f64>,
    pub num_successful_runs: u64,
    pub unstable: bool,
    pub unstable_reason: Option<String>,
    pub warmup_iterations: u64,
    /// Micro: how many of the row's processes ended their warmup with the untimed pass over
    /// every item (`execution.warmup.full_pass`); absent in files written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_full_passes: Option<u64>,
    /// Micro: the warmup subset's cold pass (the preflight's, after its first item) over its
    /// warm rate, the largest over the row's processes: what `full_pass: auto` reads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_cold_ratio: Option<f64>,
    pub early_stopped: bool,
    pub early_stop_reason: Option<String>,
    pub slow_threshold_sec_per_item: Option<f64>,
    pub slow_preflight_items: Option<u64>,
    pub preflight_sec_per_item: Option<f64>,
    pub preflight_throughput: Option<f64>,
    pub gpu_memory: Option<serde_json::Value>,
    pub reason: Option<String>,
    /// With status `error` from a worker's answer or the output check: the failure kind
    /// (`contract`, `exception`, `bad_request`); `contract` covers a broken output contract and a
    /// parameter the library did not take. Absent for a worker that was lost or timed out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<String>,
    /// Warnings the library emitted while the transform was built (none of them says a
    /// parameter was ignored: that is an `error` with kind `contract`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Output contract seen by the check (shape/dtype), for the record.
    pub output_shape: Option<Vec<u64>>,
    pub output_dtype: Option<String>,
    /// Micro: whether the library's own output was already contiguous (false: a strided view or
    /// lazy work that forcing finished), as the check saw it, outside the timed runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_contiguous: Option<bool>,
    /// Micro: the share (0–1) of apply + force the check spent forcing the output; near 1, the
    /// row measures the copy rather than the transform.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub force_share: Option<f64>,
    /// Interleaved schedule: the rounds this transform's runs were taken in. Libraries with the
    /// same id ran in the same rounds, run i of each in round i, so their runs pair up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds_id: Option<String>,
    /// Interleaved schedule: true when no other library timed this transform in its rounds (the
    /// others were unsupported, slow or failed), so it ran alone and has no paired speedups.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alone: Option<bool>,
    /// Interleaved schedule: this library against every other that measured the transform in the
    /// same rounds (ratio > 1: this one is faster).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paired: Vec<PairedSummary>,
    /// Interleaved schedule: the drift sentinel over this transform's rounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drift: Option<Drift>,
    /// Interleaved schedule with `execution.precision`: whether the rounds reached the target, at
    /// what width, after how many rounds and seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision: Option<augbench_stats::precision::PrecisionRecord>,
    /// Pipeline mode: the loader's start, warmup and windows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pipeline: Option<PipelineDetail>,
    /// `measure: instructions`: instructions per item counted under Valgrind, with the raw
    /// counts; the time fields of such a row stay empty (time under Valgrind is not a speed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<crate::counts::InstructionRecord>,
    /// Decode mode: the decoder, its access pattern, what a clip came back as, frames/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decode: Option<DecodeDetail>,
}

/// The one row of a decode result file (`results["decode"]`): throughputs in clips/s.
pub const DECODE_ROW: &str = "decode";

/// Decode mode, per decoder: how it read the same sampled frames of the same clips as every other
/// decoder, what a clip came back as, and the runs in frames/s (clips/s × `clip_length`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DecodeDetail {
    /// The decoder and its version (`decord 0.6.0`); the bare name when it did not start.
    pub decoder: String,
    /// How it reaches the sampled frames: `seek-per-frame`, `sequential` or `batch-fetch`.
    pub access: String,
    /// The frame-index rule every decoder was handed the indices of (`linspace-floor-…/v1`).
    pub sampling_rule: String,
    pub clip_length: u64,
    /// Clips decoded per run (the readable videos of the dataset).
    pub clips: u64,
    /// One clip as the decoder returned it (empty when it never returned one).
    pub sample: DecodedSample,
    /// Frames per second of each run, in run order.
    pub frames_per_sec: Vec<f64>,
    pub median_frames_per_sec: Option<f64>,
    pub frames_ci95: Option<[f64; 2]>,
    /// How the returned frames were checked against the sampled indices (once, untimed).
    pub verification: String,
    /// Seconds of that untimed pass over every clip.
    pub check_seconds: f64,
}

/// A decoded clip as the decoder hands it back, in its native type.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DecodedSample {
    /// `numpy.ndarray`, `torch.Tensor`.
    pub type_name: String,
    /// `THWC` or `TCHW`.
    pub layout: String,
    pub shape: Vec<u64>,
    pub dtype: String,
    pub device: String,
    /// `RGB` or `BGR`.
    pub channel_order: String,
}

/// The drift sentinel: a fixed reference kernel timed once every round by the coordinator's own
/// native worker. Its spread is the machine's drift while the transform was measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Drift {
    /// (p90 − p10) / median of the kernel's times (`stats::drift_spread`).
    pub spread: f64,
    pub median_ms: f64,
    /// The kernel's time in each round (ms), in round order.
    pub times_ms: Vec<f64>,
    /// The sentinel's own noise floor: its spread over back-to-back timings before the run's
    /// first round (absent in older files and when it was not measured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub floor: Option<f64>,
}

impl TransformResult {
    /// A measured transform from its per-run throughputs (items/s) and times (s); an `error`
    /// with the reason (and the runs kept) when no run has a positive, finite throughput.
    pub fn measured(
        params: serde_json::Value,
        summary: &Summary,
        throughputs: Vec<f64>,
        times: Vec<f64>,
    ) -> Self {
        if let Err(why) = augbench_stats::usable_runs(&throughputs) {
            return TransformResult {
                throughputs,
                times,
                ..Self::not_measured(Status::Error, params, why)
            };
        }
        TransformResult {
            status: Some(Status::Ok),
            supported: true,
            params,
            median_throughput: Some(summary.median),
            mean_throughput: Some(summary.mean),
            std_throughput: Some(summary.std),
            cv_throughput: Some(summary.cv),
            throughput_ci95: Some([summary.ci_low, summary.ci_high]),
            ci_low: Some(summary.ci_low),
            ci_high: Some(summary.ci_high),
            rerun_low: Some(summary.rerun_low),
            rerun_high: Some(summary.rerun_high),
            figure_throughput: Some(summary.figure.value),
            figure_estimator: Some(summary.figure.estimator.name().to_string()),
            figure_low: Some(summary.figure.low),
            figure_high: Some(summary.figure.high),
            p50_throughput: Some(summary.p50),
            p75_throughput: Some(summary.p75),
            p90_throughput: Some(summary.p90),
            p95_throughput: Some(summary.p95),
            mean_time: Some(augbench_stats::mean(&times)),
            std_time: Some(augbench_stats::std_dev(&times)),
            num_successful_runs: throughputs.len() as u64,
            unstable: summary.unstable,
            unstable_reason: summary.unstable_reason.clone(),
            throughputs,
            times,
            ..Default::default()
        }
    }

    /// A transform that was not measured: `unsupported` or `error`, with the reason.
    pub fn not_measured(status: Status, params: serde_json::Value, reason: String) -> Self {
        TransformResult {
            status: Some(status),
            supported: status != Status::Unsupported,
            params,
            reason: Some(reason),
            ..Default::default()
        }
    }

    /// An `error` of a named kind; a `contract` reason starts with `contract: `.
    pub fn failed(params: serde_json::Value, kind: &str, reason: String) -> Self {
        let reason = if kind == CONTRACT_ERROR {
            format!("{CONTRACT_ERROR}: {reason}")
        } else {
            reason
        };
        TransformResult {
            error_kind: Some(kind.to_string()),
            ..Self::not_measured(Status::Error, params, reason)
        }
    }

    /// Marks the result `unstable`, adding `why` after the reasons already given.
    pub fn add_unstable(&mut self, why: String) {
        self.unstable = true;
        self.unstable_reason = Some(match self.unstable_reason.take() {
            Some(prev) => format!("{prev}; {why}"),
            None => why,
        });
    }

    /// The row's headline figure as every reader shows it (`stats::headline`): the recorded
    /// figure, or for files without one the median, marked as such.
    pub fn headline(&self) -> Option<augbench_stats::Headline> {
        augbench_stats::headline(augbench_stats::Recorded {
            figure: self.figure_throughput,
            estimator: self.figure_estimator.as_deref(),
            figure_low: self.figure_low,
            figure_high: self.figure_high,
            median: self.median_throughput,
            rerun_low: self.rerun_low.or(self.ci_low),
            rerun_high: self.rerun_high.or(self.ci_high),
        })
    }

    /// Finished means a later `--resume` may keep it (errors are retried).
    pub fn is_finished(&self) -> bool {
        matches!(
            self.status,
            Some(Status::Ok | Status::Slow | Status::Unsupported)
        )
    }
}

/// The peaks of a sampled process tree (augbench-host's `memory_sampler` fills them), as a
/// production cell records them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryPeaks {
    /// The largest tree RSS of any reading (shared pages counted once per process).
    pub peak_rss_bytes: u64,
    /// The largest tree PSS of any reading (shared pages counted once).
    pub peak_pss_bytes: u64,
    /// Readings taken (a reading after the root exited is not one).
    pub samples: u64,
    /// The most processes any reading found.
    pub max_processes: u32,
    /// Set when the figures above must not be reported: a process of the tree could not be read
    /// (sampling stopped there), or no reading was taken at all. Says which and why.
    pub unavailable: Option<String>,
    /// Milliseconds from the first reading's start to the last one's end: with `samples`, the
    /// interval actually achieved (longer than the period for a large tree).
    pub span_ms: u64,
    /// CPU milliseconds the sampler's thread spent reading, all readings together: its own cost,
    /// taken from the loader it measures (wall time where the thread's CPU time is unreadable).
    pub reading_cpu_ms: u64,
}

impl MemoryPeaks {
    /// Peaks that must not be reported, with why.
    pub fn unavailable(reason: String) -> Self {
        MemoryPeaks {
            unavailable: Some(reason),
            ..MemoryPeaks::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_finite_runs_survive_a_json_round_trip_as_nan() {
        let r = TransformResult {
            throughputs: vec![1.0, f64::NAN],
            times: vec![f64::INFINITY],
            ..Default::default()
        };
        let text = serde_json::to_string(&r).unwrap();
        assert!(text.contains("\"throughputs\":[1.0,null]"), "{text}");
        let back: TransformResult = serde_json::from_str(&text).unwrap();
        assert_eq!(back.throughputs[0], 1.0);
        assert!(back.throughputs[1].is_nan() && back.times[0].is_nan());
    }

    #[test]
    fn runs_that_are_all_nan_or_zero_record_an_error_not_a_figure() {
        let xs = vec![f64::NAN, 0.0, f64::NAN];
        let s = augbench_stats::summarize(&xs);
        let r = TransformResult::measured(serde_json::Value::Null, &s, xs, vec![1.0; 3]);
        assert_eq!(r.status, Some(Status::Error));
        assert!(
            r.reason.as_deref().unwrap_or("").contains("no usable run"),
            "{r:?}"
        );
        assert_eq!((r.median_throughput, r.figure_throughput), (None, None));
        assert_eq!(r.throughputs.len(), 3);
    }

    #[test]
    fn a_measured_row_carries_its_figure_and_an_older_one_reads_as_its_median() {
        let xs = vec![100.0, 120.0, 90.0];
        let r = TransformResult::measured(
            serde_json::Value::Null,
            &augbench_stats::summarize(&xs),
            xs,
            vec![1.0; 3],
        );
        let h = r.headline().unwrap();
        assert_eq!(
            (h.value, h.from_median),
            (r.figure_throughput.unwrap(), false)
        );
        assert_eq!(h.estimator, crate::policy::FIGURE_ESTIMATOR.name());
        let old = TransformResult {
            figure_throughput: None,
            figure_estimator: None,
            ..r.clone()
        };
        let h = old.headline().unwrap();
        assert_eq!((h.value, h.from_median), (100.0, true));
    }
}
