//! Policy: every default augbench uses, in one place. Config types, CLI help, runners and tests
//! read these; nobody restates a number. Media-dependent defaults are functions of `Media`.

// The statistical constants live with the statistics (`augbench_stats::policy`); every other
// crate reads them here, beside the rest of the defaults.
pub use augbench_stats::policy::{
    BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, CONFIDENCE, DRIFT_FLOOR_MULTIPLE, DRIFT_MIN_SPREAD,
    FIGURE_ESTIMATOR, MIN_PROCESS_UNITS, PRECISION_FUTILITY_ROUNDS, PRECISION_LOOK_SPENDING,
    PRECISION_MAX_PROCESSES, PRECISION_REACH_MARGIN, PRECISION_SPREAD_SHARE, RERUN_DRIFT_FLOOR,
    UNSTABLE_PROCESS_GAP,
};

use augbench_catalog::matrix::{Media, Mode};

/// Items measured per library when the config does not say.
pub fn default_num_items(media: Media) -> u64 {
    match media {
        Media::Image => 2000,
        Media::Video => 50,
    }
}

/// A transform at or above this many seconds per item is recorded as `slow` after preflight.
pub fn slow_threshold_sec_per_item(media: Media) -> f64 {
    match media {
        Media::Image => 0.05,
        Media::Video => 2.0,
    }
}

/// Items timed by the slow-transform preflight.
pub fn slow_preflight_items(media: Media) -> u64 {
    match media {
        Media::Image => 10,
        Media::Video => 3,
    }
}

/// Warmup stability window (passes) per media.
pub fn warmup_window(media: Media) -> u64 {
    match media {
        Media::Image => 5,
        Media::Video => 20,
    }
}

/// Default thread policy per mode: micro and decode pin one thread, pipelines use production
/// threading.
pub fn default_thread_policy(mode: Mode) -> crate::config::ThreadPolicy {
    match mode {
        Mode::Micro | Mode::Decode => crate::config::ThreadPolicy::Single,
        Mode::Pipeline => crate::config::ThreadPolicy::PipelineDefault,
    }
}

/// The most loader workers a config may ask for: each is a process with its own copy of the
/// library, so beyond this a value is a typo (`1500` for `15`) rather than a machine.
pub const MAX_LOADER_WORKERS: u64 = 256;

/// Default loader workers per mode (micro must be 0).
pub fn default_workers(mode: Mode) -> u64 {
    match mode {
        Mode::Micro | Mode::Decode => 0,
        Mode::Pipeline => 4,
    }
}

/// Micro runs measure a transform across all its libraries at once, in paired rounds: on a shared
/// machine whose speed drifts on a seconds scale, libraries measured minutes apart are compared
/// under different machines (a sequential speedup moved 40–105% between invocations here).
pub const DEFAULT_SCHEDULE: crate::config::Schedule = crate::config::Schedule::Interleaved;
/// Seed of the per-round library order of the interleaved schedule (mixed with the transform,
/// the process and the round, so every round has its own order and a rerun repeats it).
pub const SCHEDULE_SEED: u64 = 7;
/// Drift sentinel: the reference kernel's working set (bytes) and passes over it per timing
/// (about 3 ms of deterministic memory and arithmetic work on a 2-core EPYC VM), and the timings
/// a round takes; the round keeps the fastest, since noise only ever adds time. One timing of
/// half this size spread 12–70% over a transform's rounds on a quiet machine.
pub const SENTINEL_BYTES: usize = 4 << 20;
pub const SENTINEL_PASSES: u32 = 2;
pub const SENTINEL_LOOPS: u64 = 3;
/// A sentinel request that takes longer than this is a lost sentinel: the run goes on without.
pub const SENTINEL_TIMEOUT_SEC: f64 = 30.0;
/// Memory estimate (plan): decoded bytes per image pixel and channel of a library's native
/// layout, when the matrix does not say otherwise (uint8).
pub const DECODED_BYTES_PER_SAMPLE: u64 = 1;
pub const DEFAULT_NUM_RUNS: u64 = 5;
/// Worker processes per transform, each with its own preflight, warmup and `num_runs` runs. Runs
/// of one process share its memory layout and agree closely; processes differ by a few percent
/// (AlbumentationsX Resize: ±0.5% within, ±2% between, on a 2-core VM), so a rerun interval
/// only covers a repeat's median when its values come from several processes.
pub const DEFAULT_PROCESSES: u64 = 3;
/// Pipeline runs build one loader per transform and process, and a window already spans many
/// batches from several loader workers: one process unless the config asks for more.
pub const DEFAULT_PIPELINE_PROCESSES: u64 = 1;

/// A/B runs (`selection.variants`, time): worker processes per transform. The process pair is
/// the verdict's unit (docs/ab.md): a simulator of per-process levels found the interval over 3
/// pairs honest but weak (t with 2 degrees of freedom) and over 6 both honest and stronger.
pub const AB_PROCESSES: u64 = 6;
/// A/B pipeline runs, whose every process starts a loader and its workers: the fewest process
/// pairs that can decide at the default minimum effect (`stats::paired::min_verdict_pairs`; a
/// test there holds the two equal).
pub const AB_PIPELINE_PROCESSES: u64 = 4;
/// Worker processes per transform of an A/B time run in `mode` when the config names none.
pub fn ab_processes(mode: Mode) -> u64 {
    match mode {
        Mode::Pipeline => AB_PIPELINE_PROCESSES,
        _ => AB_PROCESSES,
    }
}
/// A/B micro rounds alternate the variants in chunks of items lasting about this long (seconds),
/// not in whole runs: on a shared host the neighbours' load changes within a second, and two
/// variants timed a few tens of milliseconds apart see the same host (docs/ab.md, "Chunked
/// rounds": the ln ratio's round-to-round sd fell from 0.165 to 0.020 at load 2).
pub const AB_CHUNK_SEC: f64 = 0.01;
/// A/B verdicts read thread CPU time unless the variants' CPU ÷ wall differ by more than this
/// share of the minimum effect's band (on the log scale, ln(1 + m)) with a 95% interval over
/// process pairs that excludes no difference; then they read wall time. At a half, a disagreement
/// the CPU clock keeps can never on its own make a row read `slower` or `faster` that the wall
/// clock reads unchanged (docs/ab.md, "Which clock").
pub const AB_CLOCK_DISAGREEMENT: f64 = 0.5;

/// Worker processes per transform in `mode`.
pub fn default_processes(mode: Mode) -> u64 {
    match mode {
        Mode::Micro => DEFAULT_PROCESSES,
        Mode::Pipeline => DEFAULT_PIPELINE_PROCESSES,
        Mode::Decode => DECODE_PROCESSES,
    }
}
/// Decode scenarios: one worker process per decoder, alive for the whole run, so that every run
/// of every decoder is taken in the same rounds.
pub const DECODE_PROCESSES: u64 = 1;
/// Decode scenarios: untimed passes per decoder over the first `WARMUP_SUBSET_ITEMS` clips,
/// after the (also untimed) pass that checks every clip's frames.
pub const DECODE_WARMUP_PASSES: u64 = 1;
pub const DEFAULT_BATCH_SIZE: u64 = 32;
/// Micro: items per call. 1 is the per-item regime every library has; more is a batched regime.
pub const DEFAULT_MICRO_BATCH: u64 = 1;
/// `execution.check_equivalence`: runs skip the equivalence check unless the config asks for it
/// (it starts every library's worker once more, on the check's own images).
pub const DEFAULT_CHECK_EQUIVALENCE: bool = false;
/// One timed value lasts at least this long (the worker loops a pass until it does).
pub const DEFAULT_MIN_TIME_SEC: f64 = 0.05;
/// Pipeline: batches each loader worker keeps in flight (PyTorch's default `prefetch_factor`).
pub const PIPELINE_PREFETCH_FACTOR: u64 = 2;
/// Pipeline: the shortest steady-state window, in batches, for `workers` loader workers: four
/// full prefetch queues, so the batches in flight when the clock starts are a small share.
pub fn default_min_batches(workers: u64) -> u64 {
    workers.max(1).saturating_mul(4 * PIPELINE_PREFETCH_FACTOR)
}
/// Pipeline: batches taken untimed before a window (after the first batch, and again after a
/// loader sat idle between interleaved rounds): every worker delivers (batches go to workers in
/// turn) and refills its prefetch queue, and at least one window's worth passes, because a loader
/// that sat idle ran 10–25% slow for about its first 8 batches here (2 workers, batch 32;
/// balanced halves from 16 untimed batches on).
pub fn pipeline_warm_batches(workers: u64, min_batches: u64) -> u64 {
    let queue = workers.max(1).saturating_mul(PIPELINE_PREFETCH_FACTOR + 1);
    queue.max(min_batches)
}
/// Pipeline: seed of the sample order every library's loader follows.
pub const PIPELINE_ORDER_SEED: u64 = 11;

/// Below this many batches an epoch per loader worker, a pipeline result says what an epoch loop
/// over its dataset would pay beside the steady state it measured (the refill at each epoch's
/// start is then a visible share; docs/pipeline.md, "Small datasets and epoch loops").
pub const PIPELINE_EPOCH_NOTE_BATCHES_PER_WORKER: u64 = 10;

/// Where `augbench production` writes when the config names no `output_dir`.
pub const PRODUCTION_OUTPUT_DIR: &str = "output/production";
/// Seconds a production worker may take to start, load its file list, or build a cell's loader.
pub const PRODUCTION_START_TIMEOUT_SEC: f64 = 300.0;
/// Seconds per item of a cell's batches beyond which its worker is taken as stuck and killed.
pub const PRODUCTION_CELL_SEC_PER_ITEM_LIMIT: f64 = 2.0;
/// Production cells: how many consecutive (recipe, seed) groups one implementation measures per
/// turn before the next implementation takes the same groups. Each turn starts a worker (2–4 s of
/// imports, untimed), so 1 would triple a run of short cells; a block of 4 keeps implementations
/// compared on a recipe within a few dozen cells of each other (docs/pipeline.md, "Order").
pub const PRODUCTION_ORDER_BLOCK: usize = 4;
/// Pipeline: the rate of a window's second half against its first half; a row whose windows moved
/// more than this, at the median over its windows, is flagged `unstable` (the loader had not
/// reached its steady state). The largest window alone marked 21 of 22 rows in the ceiling
/// pairing study, and those rows moved less between invocations than the rest (docs/methodology.md).
pub const PIPELINE_DRIFT_UNSTABLE: f64 = 0.10;
pub const DEFAULT_CLIP_LENGTH: u64 = 16;
pub const DEFAULT_CHANNELS: u64 = 3;
pub const DEFAULT_PIPELINE_SCOPE: crate::config::PipelineScope =
    crate::config::PipelineScope::DecodeDataloaderAugment;
/// Preflight stops after this wall time even if items remain; the transform is then `slow`.
pub const PREFLIGHT_MAX_SEC: f64 = 30.0;
/// Warmup: the relative rise of a window's mean rate over the window before it below which the
/// rate counts as flat (warm).
pub const WARMUP_THRESHOLD: f64 = 0.05;
/// Warmup: hard cap on passes.
pub const WARMUP_MAX_PASSES: u64 = 1000;
/// Warmup: windows that must pass before stability can be declared.
pub const WARMUP_MIN_WINDOWS: u64 = 2;
/// Warmup: wall-time cap in seconds.
pub const WARMUP_MAX_SEC: f64 = 5.0;
/// Warmup: whether it ends with an untimed pass over every item (`execution.warmup.full_pass`).
pub const WARMUP_FULL_PASS: crate::config::FullPass = crate::config::FullPass::Auto;
/// Warmup, `full_pass: auto`: a row faster than this many seconds an item always takes the
/// untimed pass over every item (it is cheap, and fast rows read a cold first run).
pub const WARMUP_FULL_PASS_MAX_SEC_PER_ITEM: f64 = 0.0025;
/// Warmup, `full_pass: auto`: a slower row takes the pass when its first pass over the warmup
/// subset (after the first item) read more than this much slower than its warm rate.
pub const WARMUP_COLD_RATIO: f64 = 0.10;
/// The run summary's precision line lists each missed transform's note up to this many; past
/// it, the line says how wide they stood (median and widest).
pub const SUMMARY_MAX_NOTES: usize = 5;
/// The run summary's row kinds: a fast row takes under this many seconds an item (its median),
/// a slow row this or more.
pub const FAST_ROW_SEC_PER_ITEM: f64 = 0.001;
/// `plan`'s estimate from the shipped cost table and policy's rough costs came within this
/// fraction of the measured wall time on the quickstart, the rgb micro matrix and a pipeline
/// config (2-core VM; figures in docs/methodology.md, "How close it comes"); `plan` states it.
pub const PLAN_POLICY_ERROR: f64 = 0.25;
/// Warmup passes run over at most this many items.
pub const WARMUP_SUBSET_ITEMS: u64 = 10;
/// Precision target (`execution.precision`): the most runs a library takes in one worker process
/// while its intervals are not yet narrow enough (sequential), or the most rounds a transform
/// takes in one process (interleaved).
pub const PRECISION_MAX_RUNS: u64 = 30;
/// Precision target: rounds every transform takes in each process before the stopping rule may
/// end them (a median interval of fewer values says little).
pub const PRECISION_MIN_ROUNDS: u64 = 3;
/// Precision target: seconds of timed rounds one transform may spend over all its processes when
/// `execution.transform_budget_sec` is not given (each process gets an equal share).
pub const DEFAULT_TRANSFORM_BUDGET_SEC: f64 = 30.0;
/// `refresh_requirements`: a lock re-resolved from `envs/<group>.in` is reused for this long
/// (seconds) before uv resolves it again, so runs with cached environments start at once.
pub const LOCK_REFRESH_MAX_AGE_SEC: f64 = 24.0 * 3600.0;
/// A lost worker waits this many 10 ms polls for the Ctrl-C flag before its loss is recorded
/// (the signal reaches the workers and the coordinator's handler at nearly the same time).
pub const STOP_GRACE_POLLS: u32 = 30;
/// A worker request that takes longer than this is treated as a hang; the worker is killed.
pub const REQUEST_TIMEOUT_SEC: f64 = 600.0;
/// Drift sentinel: back-to-back timings before a run's first round; their spread is the
/// sentinel's own noise floor.
pub const SENTINEL_FLOOR_REPEATS: usize = 6;
/// Synthetic dataset seed when the config does not give one.
pub const SYNTH_SEED: u64 = 42;

/// What a bad COCO annotation does when `data.annotations` is set and `data.annotation_errors`
/// is not: it stops the run, naming the file, the annotation and the problem.
pub const DEFAULT_ANNOTATION_ERRORS: crate::config::AnnotationErrors =
    crate::config::AnnotationErrors::Refuse;
/// Lines of a dead worker's stderr kept in an `error` record.
pub const STDERR_TAIL_LINES: usize = 20;
/// Default output directory.
pub const DEFAULT_OUTPUT_DIR: &str = "output";
/// Synthetic image sizes as (width, height, weight): ImageNet-like landscape and portrait frames
/// around 500×375, plus a few larger ones. Each image draws its size with these weights.
pub const SYNTH_IMAGE_SIZES: &[(u32, u32, u32)] = &[
    (500, 375, 4),
    (375, 500, 2),
    (500, 333, 3),
    (333, 500, 2),
    (800, 600, 1),
    (1024, 768, 1),
];
/// JPEG quality of the synthetic images and video frames.
pub const SYNTH_JPEG_QUALITY: u8 = 90;
/// Frame size (width, height) of the synthetic video files: UCF101's 320×240.
pub const SYNTH_VIDEO_SIZE: (u32, u32) = (320, 240);
/// Frame rate of the synthetic video files (UCF101's 25 fps).
pub const SYNTH_VIDEO_FPS: u32 = 25;
/// Frame counts of the synthetic video files: each draws its own from this inclusive range
/// (UCF101-like clips of 1.6–4.8 s at 25 fps).
pub const SYNTH_VIDEO_FRAMES: (u64, u64) = (40, 120);
/// Clip cache: a video whose frames are narrower or lower than this (in pixels) is skipped as
/// too small to augment (a 1×1 video decodes, but no crop or resize of it means anything).
pub const MIN_VIDEO_SIDE: u32 = 16;
/// Clip cache: a video's decoded frames are held (so it is decoded once) up to this many bytes;
/// a longer video is read a second time for only its sampled frames.
pub const CLIP_DECODE_MEMORY_BYTES: u64 = 1 << 30;
/// Reports: the library whose speedup over the others tables and plots show, when present.
pub const DEFAULT_REFERENCE_LIBRARY: &str = "albumentationsx";
/// Regression and A/B verdicts: the smallest change in time per item (0.05 = 5% slower or
/// faster, the band `stats::paired::min_effect_band`) that can be a regression or an improvement.
pub const REGRESSION_MIN_EFFECT: f64 = 0.05;
/// The gate between separate runs (`compare --baseline --current`) estimates the drift between
/// invocations from this many baseline invocations or more (`--baseline` repeated); with fewer,
/// and no `--drift`, it does not know its between-run error rate and `--fail-on-regression` is
/// refused (docs/ci.md).
pub const DRIFT_MIN_INVOCATIONS: usize = 3;

/// `augbench run` warns that the machine is busy above this one-minute load per logical thread.
pub const BUSY_LOAD_PER_THREAD: f64 = 0.5;

/// `augbench run` warns that the machine is busy above this share of stolen CPU time (%).
pub const BUSY_STEAL_PERCENT: f64 = 2.0;

/// Milliseconds over which CPU steal is sampled (`/proc/stat` before and after).
pub const STEAL_SAMPLE_MS: u64 = 200;

/// Milliseconds between two readings of a process tree's memory (`host::memory_sampler`): short
/// enough to catch a loader's peak; `MEMORY_SAMPLE_MAX_SHARE` stretches it for a large tree
/// (docs/pipeline.md, "Memory").
pub const MEMORY_SAMPLE_PERIOD_MS: u64 = 50;
/// The largest share of one core the memory sampler spends reading (its thread's CPU time over
/// wall time): a reading walks every resident page of the tree (about 16 µs of CPU per MB of RSS
/// on the 2-core development VM, 10–17 ms for a 700 MB tree), so a large tree is read less often
/// than every period rather than taking CPU from the loader being measured. At 10% a production
/// cell's throughput read 5% lower with the sampler on 2 cores (median of 16 pairs), at 3% 3.5%
/// (docs/pipeline.md, "Production cells").
pub const MEMORY_SAMPLE_MAX_SHARE: f64 = 0.03;

/// Cloud: machine shape of CPU rows (the reference benchmark's CPU shape).
pub const CLOUD_CPU_MACHINE_TYPE: &str = "c4-standard-16";
/// Cloud: machine shape of GPU rows (one NVIDIA L4), used when `gpu_type` is set.
pub const CLOUD_GPU_MACHINE_TYPE: &str = "g2-standard-16";
/// Cloud: accelerators per GPU VM.
pub const CLOUD_GPU_COUNT: u64 = 1;
/// Cloud: boot disk of each VM (GB): OS, Python environments, the unpacked dataset, results.
pub const CLOUD_DISK_SIZE_GB: u64 = 200;
/// Cloud: the wall time one Batch task aims to stay under; the default shard count is the
/// estimated work over this (see `crate::cloud::estimate_sec`).
pub const CLOUD_TASK_TARGET_SEC: f64 = 3600.0;
/// Cloud: Batch stops a task after this long (three times the target: the estimate is rough).
pub const CLOUD_MAX_RUN_DURATION_SEC: u64 = 3 * 3600;
/// Cloud: how often a task preempted on a Spot VM is retried (never on any other failure).
pub const CLOUD_PREEMPTION_RETRIES: u64 = 3;
/// Cloud: the estimate behind the default shard count: seconds one library spends per item on
/// one timed pass of one transform. A rough middle of the paper rows on one core (image
/// transforms run from 0.2 to 20 ms per image; slow ones are cut by preflight).
pub fn cloud_est_sec_per_item(media: Media) -> f64 {
    match media {
        Media::Image => 0.004,
        Media::Video => 0.06,
    }
}
/// Plan estimate: seconds one worker start takes (process, imports, hello), before its media
/// load. A Python worker imports its library (AlbumentationsX: 5–8 s on a 2-core VM).
pub const EST_PYTHON_WORKER_START_SEC: f64 = 6.0;
pub const EST_NATIVE_WORKER_START_SEC: f64 = 0.1;
/// Plan estimate: seconds per transform, library and process of set-up besides its preflight
/// and warmup passes (prepare, the contract check, the protocol). 88 rows of 11 libraries spent
/// 1.1 s on these together on a 2-core VM.
pub const EST_SETUP_SEC: f64 = 0.02;
/// Plan estimate: seconds a worker takes to decode one item of its media when it loads them.
pub fn est_decode_sec_per_item(media: Media) -> f64 {
    match media {
        Media::Image => 0.005,
        Media::Video => 0.1,
    }
}
/// Plan estimate, pipeline: seconds one loader worker spends per item on the recipe around T
/// (read, decode, crop, normalize, batch) plus a middle T on the crop. The README's pipeline
/// example (2 workers, 9 libraries) delivered a median of 650 images a second on a 2-core VM.
pub fn est_pipeline_sec_per_item(media: Media) -> f64 {
    match media {
        Media::Image => 0.003,
        Media::Video => 0.05,
    }
}
/// Plan estimate: how many times an image-only row's cost a target row (`selection.targets`)
/// costs where nothing measured the target row itself. Pipeline loaders with boxes or a mask
/// took 1.4–1.8× their image-only loaders' time in one run of the shipped example (each row read
/// 0.46–0.98 of the image-only loader's speed; docs/targets.md, "Pipeline mode"); micro rows
/// with all three kinds ran at 0.09–0.77 of the image-only speed, 2.2× at the median
/// (docs/targets.md, "Measured").
pub fn est_target_row_factor(mode: Mode) -> f64 {
    match mode {
        Mode::Pipeline => 1.6,
        _ => 2.2,
    }
}
/// Plan estimate, pipeline: seconds a loader takes to start (its workers forked, its first
/// batch), before its warm batches. The README's pipeline example started 56 loaders, warm
/// batches included, in 62 s.
pub const EST_LOADER_START_SEC: f64 = 0.3;
/// Cloud: passes over the items beyond the timed runs (preflight, warmup), per process.
pub const CLOUD_EST_EXTRA_PASSES: u64 = 2;
/// Cloud: where the task script unpacks the dataset on the VM when `data.remote_data_dir` is absent.
pub const CLOUD_REMOTE_DATA_DIR: &str = "/mnt/disks/augbench/data";
/// Cloud Batch: seconds between two looks at an attached run's tasks (each look is an API call).
pub const CLOUD_POLL_SEC: u64 = 20;
/// Slurm: seconds between two looks at an attached run's tasks (`scontrol show job`, answered
/// by the controller from memory).
pub const SLURM_POLL_SEC: u64 = 3;

/// Instruction counts (`execution.measure: instructions`, docs/methodology.md "Instruction
/// counts"): the smallest relative change of instructions per item that is a regression or an
/// improvement (on top of `COUNT_REPEATABILITY_FACTOR` × the measured repeatability).
pub const COUNT_MIN_EFFECT: f64 = 0.01;
/// What a micro row measures when the config does not say (`execution.measure`).
pub const DEFAULT_MEASURE: crate::config::Measure = crate::config::Measure::Time;
/// A count change must also exceed this many times the larger side's repeatability (the spread
/// of instructions per item between its worker processes).
pub const COUNT_REPEATABILITY_FACTOR: f64 = 10.0;
/// Worker processes per transform under Valgrind: the default and the fewest that measure the
/// count's repeatability.
pub const COUNT_PROCESSES: u64 = 2;
/// Counted items per row: the first min(loaded, this) items, the same in every run and variant.
/// Never sized from a measurement: a size taken from the row's own count moved with the change
/// under test (10% more work halved one row's items, and the two runs were not comparable).
pub const COUNT_MAX_ITEMS: u64 = 10;
/// The oldest Valgrind `measure: instructions` runs with (`--dump-before`/`--zero-before`
/// matching in shared libraries, as used by augbench, is checked against 3.19).
pub const VALGRIND_MIN_VERSION: (u32, u32) = (3, 15);
/// Plan estimate under Valgrind: wall-time factor over native code (callgrind, no cache
/// simulation), and seconds a worker takes to start under it.
pub const VALGRIND_SLOWDOWN: f64 = 60.0;
pub const VALGRIND_WORKER_START_SEC: f64 = 20.0;

/// The largest value each count setting takes (`validate` refuses more, naming the bound): far
/// beyond any run that finishes, small enough that plans and estimates stay finite.
pub fn max_count(name: &str) -> u64 {
    match name {
        "num_items" => 10_000_000,
        "clip_length" => 10_000,
        "num_runs" => 100_000,
        "processes" => 1_000,
        "batch_size" | "micro_batch" => 65_536,
        "workers" => 1_024,
        _ => u64::MAX,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ab_process_counts_can_decide_at_the_default_minimum_effect() {
        let need = augbench_stats::paired::min_verdict_pairs(REGRESSION_MIN_EFFECT);
        assert!(need <= AB_PROCESSES);
        assert_eq!(need, AB_PIPELINE_PROCESSES);
    }
}
