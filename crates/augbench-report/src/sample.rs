//! Deterministic sample results (our result format) for tests and demos: build a `ResultFile`
//! from per-transform outcomes, scale it (a synthetic slowdown), pair files as the interleaved
//! rounds would, label them as A/B variants, and write them where `run` would.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use augbench_core::naming::{self, JobKey};
use augbench_core::results::{
    BenchmarkParams, DatasetInfo, EnvironmentInfo, Metadata, RESULT_FORMAT_VERSION, ResultFile,
    Status, TimingInfo, TransformResult,
};
use augbench_core::variant::VariantRecord;
use augbench_core::{Device, Matrix, Media, Mode, policy};

use augbench_host::fsutil::write_atomic;

/// What a library did with one transform.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Measured: per-run throughputs (items/s).
    Ok(Vec<f64>),
    /// Too slow: preflight throughput (items/s).
    Slow(f64),
    Unsupported(String),
    Error(String),
}

/// Items per run in sample files.
const ITEMS: u64 = 100;

fn media_of(scenario: &str) -> Media {
    Matrix::get()
        .scenario(scenario)
        .map_or(Media::Image, |s| s.media)
}

fn transform(outcome: &Outcome, threshold: f64) -> TransformResult {
    let params = serde_json::json!({});
    match outcome {
        Outcome::Ok(tps) => {
            let times = tps.iter().map(|t| ITEMS as f64 / t).collect();
            TransformResult::measured(params, &augbench_stats::summarize(tps), tps.clone(), times)
        }
        Outcome::Slow(tp) => TransformResult {
            status: Some(Status::Slow),
            supported: true,
            params,
            early_stopped: true,
            early_stop_reason: Some(format!(
                "preflight {:.3} s per item ≥ {threshold} s",
                1.0 / tp
            )),
            slow_threshold_sec_per_item: Some(threshold),
            preflight_sec_per_item: Some(1.0 / tp),
            preflight_throughput: Some(*tp),
            ..TransformResult::default()
        },
        Outcome::Unsupported(r) => {
            TransformResult::not_measured(Status::Unsupported, params, r.clone())
        }
        Outcome::Error(r) => TransformResult::not_measured(Status::Error, params, r.clone()),
    }
}

/// A complete result file for one (scenario, mode, library) on CPU.
pub fn result_file(
    scenario: &str,
    mode: Mode,
    library: &str,
    version: &str,
    entries: &[(&str, Outcome)],
) -> ResultFile {
    let media = media_of(scenario);
    let threshold = policy::slow_threshold_sec_per_item(media);
    let results = entries
        .iter()
        .map(|(n, o)| (n.to_string(), transform(o, threshold)))
        .collect();
    ResultFile {
        metadata: metadata(scenario, mode, library, version, media),
        results,
    }
}

fn metadata(scenario: &str, mode: Mode, library: &str, version: &str, media: Media) -> Metadata {
    let package = Matrix::get()
        .library(library)
        .map_or(library, |l| l.package.as_str());
    Metadata {
        format_version: RESULT_FORMAT_VERSION,
        system_info: augbench_core::machine_card::MachineCard {
            runtime: "python 3.11.2".into(),
            platform: "Linux-6.1-x86_64".into(),
            machine: "x86_64".into(),
            processor: "Sample CPU @ 3.0GHz".into(),
            cpu_count: 2,
            memory_total_bytes: 24 << 30,
            timestamp: "2026-01-01T00:00:00Z".into(),
            ..Default::default()
        },
        library_versions: BTreeMap::from([
            (package.to_string(), version.to_string()),
            ("numpy".into(), "2.4.0".into()),
        ]),
        thread_settings: augbench_protocol::threads::worker_env(
            augbench_core::config::ThreadPolicy::Single,
        )
        .into_iter()
        .collect(),
        environment: EnvironmentInfo {
            argv: vec!["augbench".into(), "run".into()],
            git_commit: None,
            git_branch: None,
            git_dirty: None,
            toolkit_version: "0.1.0".into(),
        },
        gpu: None,
        dataset: DatasetInfo {
            path: "synthetic".into(),
            media: media.to_string(),
            synthetic: true,
            file_count: ITEMS,
            total_bytes: 0,
            extensions: vec!["jpg".into()],
            skipped: 0,
            converted: 0,
            clips: None,
        },
        timing: TimingInfo {
            backend: "sample".into(),
            measurement_scope: match mode {
                Mode::Pipeline => policy::DEFAULT_PIPELINE_SCOPE.to_string(),
                Mode::Micro => "transform".to_string(),
                Mode::Decode => "decode".to_string(),
            },
            includes: vec![],
        },
        scenario: scenario.into(),
        mode: mode.to_string(),
        library: library.into(),
        device: Device::Cpu.to_string(),
        pipeline: None,
        equivalence: None,
        time_split: None,
        time_by_row: Vec::new(),
        benchmark_params: params(media, mode),
        run_config: serde_json::json!({}),
        variant: None,
        targets: None,
    }
}

fn params(media: Media, mode: Mode) -> BenchmarkParams {
    BenchmarkParams {
        num_items: ITEMS,
        num_runs: policy::DEFAULT_NUM_RUNS,
        processes: policy::DEFAULT_PROCESSES,
        channels: policy::DEFAULT_CHANNELS,
        clip_length: (media == Media::Video).then_some(policy::DEFAULT_CLIP_LENGTH),
        workers: policy::default_workers(mode),
        batch_size: policy::DEFAULT_BATCH_SIZE,
        micro_batch: None,
        min_time: policy::DEFAULT_MIN_TIME_SEC,
        thread_policy: "single".into(),
        precision_target: None,
        transform_budget_sec: None,
        slow_threshold_sec_per_item: policy::slow_threshold_sec_per_item(media),
        slow_preflight_items: policy::slow_preflight_items(media),
        disable_slow_skip: false,
        warmup_window: policy::warmup_window(media),
        warmup_threshold: policy::WARMUP_THRESHOLD,
        max_warmup_iterations: policy::WARMUP_MAX_PASSES,
        warmup_full_pass: Some(policy::WARMUP_FULL_PASS.to_string()),
        schedule: None,
        measure: None,
    }
}

/// The same file with every throughput multiplied by `factor` (0.8 = 20% slower), summaries recomputed.
pub fn scaled(file: &ResultFile, factor: f64) -> ResultFile {
    let mut out = file.clone();
    for tr in out.results.values_mut() {
        if tr.status == Some(Status::Ok) {
            let tps: Vec<f64> = tr.throughputs.iter().map(|t| t * factor).collect();
            let times = tps.iter().map(|t| ITEMS as f64 / t).collect();
            *tr = TransformResult::measured(
                tr.params.clone(),
                &augbench_stats::summarize(&tps),
                tps,
                times,
            );
        }
    }
    out
}

/// Writes a file at the path `run` would use under `out`; returns the path.
pub fn write(out: &Path, file: &ResultFile) -> anyhow::Result<PathBuf> {
    let m = &file.metadata;
    let mode = if m.mode == "pipeline" {
        Mode::Pipeline
    } else {
        Mode::Micro
    };
    let key = JobKey {
        scenario: &m.scenario,
        mode,
        library: &m.library,
        device: Device::Cpu,
        scope: &m.timing.measurement_scope,
        num_items: Some(m.benchmark_params.num_items),
        num_runs: m.benchmark_params.num_runs,
        workers: m.benchmark_params.workers,
        batch_size: m.benchmark_params.batch_size,
        micro_batch: m
            .benchmark_params
            .micro_batch
            .unwrap_or(policy::DEFAULT_MICRO_BATCH),
        instructions: m.benchmark_params.measure.as_deref() == Some("instructions"),
    };
    let path = naming::result_file(out, &key);
    let text = serde_json::to_string_pretty(file)?;
    write_atomic(&path, text.as_bytes())?;
    Ok(path)
}

/// Five runs within 1.5% below `median`, three of them at it (tight, so intervals are narrow;
/// the median and the headline figure, the fastest run of the one process, are both `median`).
pub fn runs(median: f64) -> Outcome {
    Outcome::Ok(
        [0.985, 1.0, 1.0, 1.0, 0.9875]
            .iter()
            .map(|f| f * median)
            .collect(),
    )
}

/// A demo set: three image libraries (with slow, unsupported and error rows) and one video library.
pub fn demo() -> Vec<ResultFile> {
    let u = |s: &str| Outcome::Unsupported(s.to_string());
    vec![
        result_file(
            "image-rgb",
            Mode::Micro,
            "albumentationsx",
            "2.5.0",
            &[
                ("Resize", runs(2400.0)),
                ("HorizontalFlip", runs(9000.0)),
                ("GaussianBlur", runs(850.0)),
                ("Rotate", runs(1200.0)),
                ("ElasticTransform", Outcome::Slow(12.0)),
                ("ColorJitter", runs(410.0)),
            ],
        ),
        result_file(
            "image-rgb",
            Mode::Micro,
            "torchvision",
            "0.29.0",
            &[
                ("Resize", runs(800.0)),
                ("HorizontalFlip", runs(3100.0)),
                ("GaussianBlur", runs(300.0)),
                ("Rotate", runs(700.0)),
                ("ElasticTransform", Outcome::Slow(4.0)),
                ("ColorJitter", runs(95.0)),
            ],
        ),
        result_file(
            "image-rgb",
            Mode::Micro,
            "pillow",
            "13.0.0",
            &[
                ("Resize", runs(1500.0)),
                ("HorizontalFlip", runs(12000.0)),
                ("GaussianBlur", runs(400.0)),
                (
                    "Rotate",
                    Outcome::Error("worker exited with code -11".into()),
                ),
                ("ElasticTransform", u("no elastic transform in Pillow")),
                ("ColorJitter", u("no hue jitter in Pillow")),
            ],
        ),
        result_file(
            "video-16f",
            Mode::Micro,
            "albumentationsx",
            "2.5.0",
            &[("Resize", runs(45.0)), ("HorizontalFlip", runs(160.0))],
        ),
    ]
}

/// `file` (a result file of one library) as the A/B variant `label` of that library, installed
/// from `installed` and compared against the variant labelled `baseline`: its column and file
/// name become the label, as `run` writes a variant.
pub fn as_variant(file: ResultFile, label: &str, installed: &str, baseline: &str) -> ResultFile {
    let mut out = file;
    let library = std::mem::replace(&mut out.metadata.library, label.to_string());
    out.metadata.variant = Some(VariantRecord {
        library,
        label: label.to_string(),
        installed: installed.to_string(),
        baseline: baseline.to_string(),
    });
    out
}

/// Records `files` as timed in the same interleaved rounds (one process): every transform that
/// two or more of them measured gets one `rounds_id` and, per file, its paired summaries against
/// each other file (`augbench_stats::paired`, run i of each in round i).
pub fn interleave(files: &mut [ResultFile]) {
    let names: std::collections::BTreeSet<String> = files
        .iter()
        .flat_map(|f| f.results.keys().cloned())
        .collect();
    for name in names {
        let measured: Vec<(String, Vec<f64>)> = files
            .iter()
            .filter_map(|f| {
                let tr = f.results.get(&name)?;
                (tr.status == Some(Status::Ok))
                    .then(|| (f.metadata.library.clone(), tr.throughputs.clone()))
            })
            .collect();
        if measured.len() < 2 {
            continue;
        }
        for f in files.iter_mut() {
            let me = f.metadata.library.clone();
            let Some(tr) = f
                .results
                .get_mut(&name)
                .filter(|t| t.status == Some(Status::Ok))
            else {
                continue;
            };
            tr.rounds_id = Some(format!("sample-{name}"));
            let groups: Vec<usize> = tr.process_runs.iter().map(|n| *n as usize).collect();
            tr.paired = measured
                .iter()
                .filter(|(lib, _)| *lib != me)
                .filter_map(|(lib, tps)| augbench_stats::paired(lib, &tr.throughputs, tps, &groups))
                .collect();
        }
    }
}

/// An A/B demo: Pillow 11.3.0 (the baseline) and 13.0.0 as two variants in the same rounds,
/// 3 worker processes of 5 rounds each. Per round the current variant runs at a fixed factor of
/// the baseline, within ±1%: Resize 0.80 (slower), HorizontalFlip 1.25 (faster), Grayscale 1.01
/// (no change); its Rotate failed (not comparable).
pub fn ab_demo() -> Vec<ResultFile> {
    const DRIFT: [f64; 15] = [
        1.0, 1.03, 0.98, 1.01, 0.99, 0.97, 1.0, 0.96, 0.98, 0.97, 1.04, 1.06, 1.03, 1.05, 1.04,
    ];
    const JITTER: [f64; 15] = [
        1.0, 1.01, 0.99, 1.005, 0.995, 1.002, 0.992, 1.008, 0.998, 1.004, 0.998, 1.006, 0.994, 1.0,
        0.996,
    ];
    let base = |tp: f64| Outcome::Ok(DRIFT.iter().map(|d| tp * d).collect());
    let cur = |tp: f64, factor: f64| {
        Outcome::Ok(
            DRIFT
                .iter()
                .zip(JITTER)
                .map(|(d, j)| tp * d * factor * j)
                .collect(),
        )
    };
    let file = |version: &str, entries: &[(&str, Outcome)]| {
        result_file("image-rgb", Mode::Micro, "pillow", version, entries)
    };
    let baseline = file(
        "11.3.0",
        &[
            ("Resize", base(1500.0)),
            ("HorizontalFlip", base(9000.0)),
            ("Grayscale", base(4000.0)),
            ("Rotate", base(700.0)),
        ],
    );
    let current = file(
        "13.0.0",
        &[
            ("Resize", cur(1500.0, 0.80)),
            ("HorizontalFlip", cur(9000.0, 1.25)),
            ("Grayscale", cur(4000.0, 1.01)),
            (
                "Rotate",
                Outcome::Error("worker exited with code -11".into()),
            ),
        ],
    );
    let (a, b) = ("pillow@11.3.0", "pillow@13.0.0");
    let mut files = vec![
        as_variant(baseline, a, "pillow==11.3.0", a),
        as_variant(current, b, "pillow==13.0.0", a),
    ];
    for tr in files.iter_mut().flat_map(|f| f.results.values_mut()) {
        if tr.status == Some(Status::Ok) {
            tr.process_runs = vec![5, 5, 5];
        }
    }
    interleave(&mut files);
    files
}
