//! Pipeline mode on the coordinator side (pipeline.md): the settings a resolved config gives, the
//! labels every pipeline result file carries (scope, decoder, loader shape), the seeded sample
//! order, and the window statistics (rate, first and second half, drift). Setting a transform up
//! and its windows are in `measure`; both schedules drive them as they drive micro runs.

mod measure;

pub use measure::{PipelineRuns, PipelineStarted, start};

use std::time::Duration;

use augbench_core::results::{PipelineInfo, TimingInfo, TransformResult};
use augbench_core::{PipelineScope, RunConfig, policy};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use crate::job::{JobInput, pipeline_scope};
use augbench_protocol::protocol::HelloResponse;

#[derive(Debug, Clone, PartialEq)]
pub struct PipelineSettings {
    pub scope: PipelineScope,
    pub workers: u64,
    pub batch_size: u64,
    pub prefetch: u64,
    pub min_batches: u64,
    pub min_time: f64,
    pub num_runs: u64,
    pub slow_threshold: f64,
    pub preflight_items: u64,
    pub disable_slow_skip: bool,
    pub request_timeout: Duration,
    /// GPU split: on CUDA, workers crop and the main process runs T and Normalize on the device.
    pub split: bool,
    /// Video: frames per item (each item is a clip of `clip_length` frames); `None` for images.
    pub frames: Option<u64>,
}

impl PipelineSettings {
    /// Reads a resolved config (every field is filled by `resolve`) for a job on `device`.
    pub fn from_config(cfg: &RunConfig, device: &str) -> PipelineSettings {
        let micro = crate::micro::MicroSettings::from_config(cfg, device);
        let e = &cfg.execution;
        let workers = e.workers.unwrap_or_default();
        PipelineSettings {
            scope: pipeline_scope(cfg),
            workers,
            batch_size: e.batch_size.unwrap_or(policy::DEFAULT_BATCH_SIZE),
            prefetch: policy::PIPELINE_PREFETCH_FACTOR,
            min_batches: e
                .min_batches
                .unwrap_or_else(|| policy::default_min_batches(workers)),
            min_time: micro.min_time,
            num_runs: micro.num_runs,
            slow_threshold: micro.slow_threshold,
            preflight_items: micro.preflight_items,
            disable_slow_skip: micro.disable_slow_skip,
            request_timeout: micro.request_timeout,
            split: device == augbench_core::Device::Cuda.to_string(),
            frames: (cfg.selection.media == Some(augbench_core::Media::Video))
                .then(|| cfg.data.clip_length.unwrap_or(policy::DEFAULT_CLIP_LENGTH)),
        }
    }

    /// The settings of `input`'s job on `device`: DALI runs its whole pipeline on the device
    /// (`mixed` decode), so it has no GPU split.
    pub(crate) fn for_job(input: &JobInput<'_>, device: &str) -> PipelineSettings {
        let mut set = PipelineSettings::from_config(input.cfg, device);
        set.split &= !dali(input);
        set
    }

    /// Batches taken untimed before a window (`policy::pipeline_warm_batches`).
    pub fn warm_batches(&self) -> u64 {
        policy::pipeline_warm_batches(self.workers, self.min_batches)
    }
}

/// The sample order every library's loader follows: a seeded permutation of the items.
pub fn sample_order(count: u64) -> Vec<u64> {
    let mut order: Vec<u64> = (0..count).collect();
    order.shuffle(&mut ChaCha8Rng::seed_from_u64(policy::PIPELINE_ORDER_SEED));
    order
}

/// The file-level pipeline labels of a job.
pub(crate) fn info(input: &JobInput<'_>, hello: &HelloResponse, device: &str) -> PipelineInfo {
    let set = PipelineSettings::for_job(input, device);
    let mut notes = Vec::new();
    if set.split {
        notes.push("GPU split: loader workers decode and crop; the main process copies each uint8 batch to the device (pinned), runs the transform and Normalize there, and synchronizes; both decode scopes include that copy, and a crop transform row runs in the workers (`transform_device`)".into());
    }
    if input.job.device == augbench_core::Device::Auto && device != "cuda" {
        notes.push(format!(
            "device `auto` fell back to `{device}`: the worker reports no CUDA device"
        ));
    }
    if set.workers == 0 {
        notes.push("workers: 0: the main process loads every batch (no loader workers)".into());
    }
    if dali(input) {
        notes.push(dali_note(&set, device));
    }
    if let Some(frames) = set.frames {
        notes.push(clip_note(frames, native(input)));
    }
    if native(input) {
        notes.push(native_note());
    }
    PipelineInfo {
        scope: set.scope.to_string(),
        decoder: hello
            .device_decoders
            .get(device)
            .or(hello.decoder.as_ref())
            .cloned()
            .unwrap_or_default(),
        workers: set.workers,
        main_process_loading: set.workers == 0,
        batch_size: set.batch_size,
        clip_length: set.frames,
        prefetch_factor: if set.workers == 0 { 0 } else { set.prefetch },
        min_batches: set.min_batches,
        min_time: set.min_time,
        split: set.split,
        order_seed: policy::PIPELINE_ORDER_SEED,
        notes,
    }
}

/// What the native loader does differently from the Python rows, said in every native file.
fn native_note() -> String {
    format!(
        "native loader (augbench's own, threads): each worker thread reads, decodes (the image crate), crops, runs the crate's transform and normalizes each item straight into its slot of a preallocated batch; the crop ({}) and Normalize are augbench's one shared implementation for every Rust crate (they are not what is compared), the transform is the crate's own; each loader thread has a one-thread rayon pool",
        augbench_core::recipe::Recipe::get().crop
    )
}

/// What DALI's pipeline is, said in every DALI file.
fn dali_note(set: &PipelineSettings, device: &str) -> String {
    let place = if device == "cuda" {
        "on the GPU (`device_id` 0): `mixed` decode, the operators on the device, each batch left in DALI's device buffer"
    } else {
        "CPU only (`device_id=None`): DALI's CPU decoder and CPU operators, each batch copied out of DALI's buffer into one NumPy array"
    };
    format!(
        "DALI pipeline (no DataLoader): fn.readers.file reads the files in the shared seeded order (fn.external_source feeds the preloaded items in the memory scope), then decode, the recipe as DALI operators (crop, transform, fn.crop_mirror_normalize) and DALI's batching; workers = DALI's num_threads ({}), prefetch_queue_depth {}; {place}",
        set.workers, set.prefetch
    )
}

/// How a video row's items are clips, said in every video pipeline file.
fn clip_note(frames: u64, native: bool) -> String {
    let draws = if native {
        "the Rust crates have no clip type: the transform runs frame by frame, and its random parameters are drawn per frame, as in video micro rows"
    } else {
        "the transform runs on the whole clip in the library's clip layout with one parameter draw per clip, as in video micro rows"
    };
    format!(
        "clips: each item is a clip of {frames} frames from the clip cache (`dataset.clips`: decoder and sampling rule); one crop window per clip, the same for all its frames; {draws}; batches are B×{frames}×3×H×W float32 and throughput counts clips (frames/s = clips/s × {frames})"
    )
}

fn native(input: &JobInput<'_>) -> bool {
    input.job.backend == augbench_core::Backend::NativeWorker
}

fn dali(input: &JobInput<'_>) -> bool {
    input.job.backend == augbench_core::Backend::DaliPipeline
}

/// What a pipeline row's clock covers, by scope (and the GPU split on CUDA).
pub(crate) fn timing(input: &JobInput<'_>, backend: String, device: &str) -> TimingInfo {
    let cfg = input.cfg;
    let scope = pipeline_scope(cfg);
    let split = PipelineSettings::for_job(input, device).split;
    let mut includes = Vec::new();
    if scope.decodes() && dali(input) {
        includes.push("decode (DALI's decoder, in DALI's pipeline)".to_string());
    } else if scope.decodes() {
        includes.push("decode (the library's decoder, in the loader workers)".to_string());
    }
    let collation = if native(input) {
        "collation: each item normalized in place into a preallocated batch buffer"
    } else if dali(input) {
        "DALI's batching, and the batch handed over as one array (copied out of DALI's buffer on the CPU)"
    } else {
        "collation into one batch tensor"
    };
    let recipe = if PipelineSettings::from_config(cfg, device).frames.is_some() {
        "crop (one window per clip), transform, normalize, TCHW float32 (the recipe, on clips)"
    } else {
        "crop, transform, normalize, CHW float32 (the recipe)"
    };
    includes.extend([
        recipe.to_string(),
        collation.to_string(),
        "delivery to the training step (steady-state window)".to_string(),
    ]);
    if split {
        includes.push("pinned host-to-device copy of each batch, transform and normalize on the device, synchronize (GPU split)".to_string());
    } else if scope == PipelineScope::DecodeDataloaderAugmentBatchCopy {
        includes.push("pinned host-to-device copy of each batch".to_string());
    }
    let loader = if native(input) {
        "native threads"
    } else if dali(input) {
        "DALI pipeline"
    } else {
        "torch DataLoader"
    };
    TimingInfo {
        backend: format!("{backend} ({loader})"),
        measurement_scope: scope.to_string(),
        includes,
    }
}

/// One window's rate and its halves, from batch arrival times (ns after the window started).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Window {
    pub items_per_sec: f64,
    pub seconds: f64,
    pub halves: [f64; 2],
}

impl Window {
    /// `None` without batches, or with arrival times that do not increase (a broken worker).
    pub fn from_arrivals(ns: &[u64], batch_size: u64) -> Option<Window> {
        let last = *ns.last()?;
        if last == 0 || ns.windows(2).any(|p| p[1] < p[0]) {
            return None;
        }
        let seconds = last as f64 / 1e9;
        let n = ns.len();
        let mid = n / 2;
        let t_mid = if mid == 0 { 0 } else { ns[mid - 1] };
        let rate = |batches: usize, span_ns: u64| {
            if span_ns == 0 {
                0.0
            } else {
                (batches as u64 * batch_size) as f64 / (span_ns as f64 / 1e9)
            }
        };
        Some(Window {
            items_per_sec: (n as u64 * batch_size) as f64 / seconds,
            seconds,
            halves: [rate(mid, t_mid), rate(n - mid, last - t_mid)],
        })
    }

    /// |second half / first half − 1|.
    pub fn drift(&self) -> f64 {
        half_drift(self.halves)
    }
}

/// Flags a measured result whose typical window drifted more than policy allows: the median over
/// its windows of |second half / first half − 1| (`pipeline.drift` keeps the largest). One window
/// off on a shared host is noise; most of them off is a loader short of its steady state.
pub(crate) fn flag_drift(r: &mut TransformResult) {
    let Some(p) = &r.pipeline else { return };
    let drifts: Vec<f64> = p.half_rates.iter().map(|h| half_drift(*h)).collect();
    if drifts.is_empty() {
        return;
    }
    let typical = augbench_core::stats::median(&drifts);
    if typical > policy::PIPELINE_DRIFT_UNSTABLE && !r.unstable {
        r.unstable = true;
        r.unstable_reason = Some(format!(
            "the windows' second halves ran {:.0}% off their first (median over {} windows; limit {:.0}%)",
            typical * 100.0,
            drifts.len(),
            policy::PIPELINE_DRIFT_UNSTABLE * 100.0
        ));
    }
}

/// |second half / first half − 1| of one window's half rates (0 without a first half).
fn half_drift([a, b]: [f64; 2]) -> f64 {
    if a > 0.0 { (b / a - 1.0).abs() } else { 0.0 }
}

/// A loader detail of `windows` windows with these half rates and ceiling windows (unit tests).
#[cfg(test)]
pub(crate) fn test_detail(
    windows: usize,
    half_rates: Vec<[f64; 2]>,
    ceiling: &[f64],
) -> augbench_core::results::PipelineDetail {
    augbench_core::results::PipelineDetail {
        time_to_first_batch: 0.1,
        warm_batches: 4,
        batches: vec![16; windows],
        half_rates,
        drift: 0.0,
        batch: serde_json::Value::Null,
        worker_threads: Vec::new(),
        transform_device: String::new(),
        ceiling_throughputs: ceiling.to_vec(),
        ceiling: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_rates_its_halves() {
        // 4 batches of 10 items: 0.1 s each, then 0.2 s each.
        let ns = [100_000_000, 200_000_000, 400_000_000, 600_000_000];
        let w = Window::from_arrivals(&ns, 10).unwrap();
        assert!((w.items_per_sec - 40.0 / 0.6).abs() < 1e-9);
        assert!((w.halves[0] - 100.0).abs() < 1e-9);
        assert!((w.halves[1] - 50.0).abs() < 1e-9);
        assert!((w.drift() - 0.5).abs() < 1e-9);
        assert!(Window::from_arrivals(&[], 10).is_none());
        assert!(Window::from_arrivals(&[5, 3, 9], 10).is_none());
    }

    #[test]
    fn a_row_is_marked_when_its_typical_window_drifted_not_one_window() {
        let row = |halves: Vec<[f64; 2]>| {
            let t = vec![100.0; halves.len()];
            let s = augbench_core::stats::summarize(&t);
            let mut r = TransformResult::measured(serde_json::Value::Null, &s, t, vec![1.0; 3]);
            r.pipeline = Some(test_detail(halves.len(), halves, &[]));
            flag_drift(&mut r);
            r
        };
        let one_off = row(vec![[100.0, 140.0], [100.0, 102.0], [100.0, 97.0]]);
        assert!(!one_off.unstable, "{:?}", one_off.unstable_reason);
        let most_off = row(vec![[100.0, 140.0], [100.0, 120.0], [100.0, 97.0]]);
        let why = most_off.unstable_reason.unwrap_or_default();
        assert!(
            most_off.unstable && why.starts_with("the windows' second halves ran 20% off"),
            "{why}"
        );
        assert!(why.contains("median over 3 windows; limit 10%"), "{why}");
    }

    #[test]
    fn the_sample_order_is_a_seeded_permutation() {
        let a = sample_order(50);
        assert_eq!(a, sample_order(50));
        let mut sorted = a.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..50).collect::<Vec<u64>>());
        assert_ne!(a, sorted);
    }

    #[test]
    fn warm_batches_cover_every_worker_and_its_queue() {
        let text = "version: 1\nselection: {mode: pipeline, libraries: [torchvision]}\nexecution: {workers: 3}\n";
        let path = std::path::Path::new("t.yaml");
        let cfg = RunConfig::from_yaml(text, path).unwrap();
        let cfg = augbench_core::resolve(cfg, &augbench_core::Source::new(path, text)).unwrap();
        let s = PipelineSettings::from_config(&cfg, "cpu");
        let queue = 3 * (policy::PIPELINE_PREFETCH_FACTOR + 1);
        assert_eq!(s.warm_batches(), queue.max(s.min_batches));
        assert_eq!(s.min_batches, policy::default_min_batches(3));
        assert!(!s.split);
        assert!(PipelineSettings::from_config(&cfg, "cuda").split);
    }
}
