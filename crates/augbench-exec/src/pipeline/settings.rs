//! The settings a resolved config gives a pipeline job (loader workers, batches, windows, the
//! GPU split, clip length), which loader a job's backend runs (native threads, DALI's pipeline,
//! PyTorch's DataLoader), and the seeded sample order every library's loader follows.

use std::time::Duration;

use augbench_core::{PipelineScope, RunConfig, policy};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use crate::job::{JobInput, pipeline_scope};

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

    /// The most batches a loader can finish while nobody takes one (each worker holds `prefetch`
    /// requests): what fills its queue between two windows, while the coordinator records one
    /// and sends the next request. A window drains them untimed, or they would come free.
    pub fn queue_batches(&self) -> u64 {
        self.workers * self.prefetch
    }
}

/// The sample order every library's loader follows: a seeded permutation of the items.
pub fn sample_order(count: u64) -> Vec<u64> {
    seeded_order(count, policy::PIPELINE_ORDER_SEED)
}

/// The permutation of `count` items that `seed` gives (ChaCha8): pipeline rows use one seed,
/// production cells one per seed of the run.
pub fn seeded_order(count: u64, seed: u64) -> Vec<u64> {
    let mut order: Vec<u64> = (0..count).collect();
    order.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
    order
}

/// Whether the job runs a Rust crate in augbench's native loader.
pub(super) fn native(input: &JobInput<'_>) -> bool {
    input.job.backend == augbench_core::Backend::NativeWorker
}

/// Whether the job runs DALI's own pipeline (no DataLoader).
pub(super) fn dali(input: &JobInput<'_>) -> bool {
    input.job.backend == augbench_core::Backend::DaliPipeline
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let cfg =
            augbench_core::resolve::resolve(cfg, &augbench_core::Source::new(path, text)).unwrap();
        let s = PipelineSettings::from_config(&cfg, "cpu");
        let queue = 3 * (policy::PIPELINE_PREFETCH_FACTOR + 1);
        assert_eq!(s.warm_batches(), queue.max(s.min_batches));
        assert_eq!(s.min_batches, policy::default_min_batches(3));
        assert!(!s.split);
        assert!(PipelineSettings::from_config(&cfg, "cuda").split);
    }
}
