//! Benchmark cells from a job's result file: one `BenchCell` per transform, stamped with the run
//! id, the file's machine card, the rustc on `PATH` and the checkout's git sha, plus one row per
//! paired speedup (scope `PAIRED_SCOPE`, library `<lib> ÷ <partner>`, the per-round ratios as its
//! values). The run id is the caller's (it hashes the resolved config, so a `--resume` of the same
//! run replaces its rows).

use augbench_core::results::{ResultFile, TransformResult};
use augbench_stats::PairedSummary;

use crate::bench::{BenchCell, BenchMetrics, CellCard, CellFigure, OutputForm};

/// Converts every transform of `file` into a benchmark cell.
/// `rustc_version` is the caller's: the compiler is not the machine's.
pub fn cells_from_results(file: &ResultFile, run_id: &str, rustc_version: &str) -> Vec<BenchCell> {
    let m = &file.metadata;
    let matrix = augbench_core::Matrix::get();
    // A variant's file is labelled; its package is its library's.
    let adapter = m.variant.as_ref().map_or(&m.library, |v| &v.library);
    let package = matrix
        .library(adapter)
        .map(|l| l.package.clone())
        .or_else(|| matrix.decoder(&m.library).map(|d| d.package.clone()));
    let version = package
        .and_then(|p| m.library_versions.get(&p))
        .or_else(|| m.library_versions.get(&m.library))
        .or_else(|| m.library_versions.values().next())
        .cloned()
        .unwrap_or_default();
    let p = &m.benchmark_params;
    // A batched regime is its own library label in the log, so it never shares a cell key (and a
    // report row) with the per-item numbers.
    let library = regime_label(&m.library, p.micro_batch);
    let card = &m.system_info;
    let machine = cell_card(card);
    let gpu = card.gpus.first();
    let clip_length = m
        .dataset
        .clips
        .as_ref()
        .map(|c| c.clip_length)
        .or_else(|| m.pipeline.as_ref().and_then(|p| p.clip_length));
    let cells: Vec<BenchCell> = file
        .results
        .iter()
        .map(|(name, r)| BenchCell {
            run_id: run_id.to_string(),
            library: library.clone(),
            library_version: version.clone(),
            transform: name.clone(),
            scenario: m.scenario.clone(),
            mode: m.mode.clone(),
            media: m.dataset.media.clone(),
            device: m.device.clone(),
            channels: p.channels,
            items: p.num_items,
            runs: p.num_runs,
            workers: p.workers,
            batch_size: p.batch_size,
            scope: m.timing.measurement_scope.clone(),
            thread_policy: p.thread_policy.clone(),
            status: r.status.map(|s| s.to_string()).unwrap_or_default(),
            cpu_name: card.processor.clone(),
            cpu_cores: card.cpu_count,
            ram_gb: card.memory_total_bytes as f64 / f64::from(1u32 << 30),
            gpu_name: gpu.map(|g| g.name.clone()).unwrap_or_default(),
            gpu_memory_gb: gpu.and_then(|g| g.memory_gib),
            os: card.platform.clone(),
            rustc_version: rustc_version.to_string(),
            toolkit_version: m.environment.toolkit_version.clone(),
            git_sha: m.environment.git_commit.clone().unwrap_or_default(),
            timestamp_utc: m.system_info.timestamp.clone(),
            throughputs: r.throughputs.clone(),
            metrics: metrics(r),
            card: machine.clone(),
            form: OutputForm {
                contiguous: r.output_contiguous,
                force_share: r.force_share,
            },
            clip_length: r.decode.as_ref().map(|d| d.clip_length).or(clip_length),
            figure: figure(r),
        })
        .collect();
    let paired: Vec<BenchCell> = cells
        .iter()
        .flat_map(|cell| {
            let r = &file.results[&cell.transform];
            r.paired.iter().map(move |pr| {
                let partner = regime_label(&pr.partner, p.micro_batch);
                paired_cell(cell, pr, &partner)
            })
        })
        .collect();
    cells.into_iter().chain(paired).collect()
}

/// The machine card's facts beyond the reference fields, as cell columns (empty for result files
/// written before the card).
fn cell_card(c: &augbench_core::machine_card::MachineCard) -> CellCard {
    let (before, after) = (c.before.as_ref(), c.after.as_ref());
    CellCard {
        cpu_simd: c.simd.as_deref().unwrap_or_default().join(" "),
        physical_cores: c.physical_cores,
        governor: c.governor.clone().unwrap_or_default(),
        kernel: c.kernel.clone().unwrap_or_default(),
        hypervisor: c
            .hypervisor
            .map(|h| if h { "yes" } else { "no" }.to_string())
            .unwrap_or_default(),
        augbench_build: c.build.as_ref().map_or(String::new(), |b| {
            format!(
                "{} {} {} opt-level {}",
                b.version, b.git_sha, b.target, b.opt_level
            )
        }),
        load_per_thread_before: before.map(|s| s.load_per_thread),
        load_per_thread_after: after.map(|s| s.load_per_thread),
        steal_percent_before: before.and_then(|s| s.steal_percent),
        steal_percent_after: after.and_then(|s| s.steal_percent),
    }
}

/// A library's label in the log: a batched regime is its own label (`kornia (batch 32)`).
fn regime_label(library: &str, micro_batch: Option<u64>) -> String {
    match micro_batch {
        Some(b) => format!("{library} (batch {b})"),
        None => library.to_string(),
    }
}

/// Scope of the rows that hold paired speedups rather than throughputs.
pub const PAIRED_SCOPE: &str = "paired ratio";

/// `pillow ÷ albumentationsx`: the library label of a paired row.
pub fn paired_label(library: &str, partner: &str) -> String {
    format!("{library} ÷ {partner}")
}

/// The (library, partner) of a paired row's label.
pub fn parse_paired_label(label: &str) -> Option<(&str, &str)> {
    label.split_once(" ÷ ")
}

/// A paired speedup as a row of its own: the per-round ratios are its values, the median ratio
/// and its interval its metrics.
fn paired_cell(cell: &BenchCell, p: &PairedSummary, partner: &str) -> BenchCell {
    BenchCell {
        library: paired_label(&cell.library, partner),
        scope: PAIRED_SCOPE.to_string(),
        throughputs: p.ratios.clone(),
        metrics: BenchMetrics {
            median: Some(p.ratio),
            ci_low: Some(p.ci_low),
            ci_high: Some(p.ci_high),
            ..BenchMetrics::default()
        },
        form: OutputForm::default(), // a ratio of two rows, not an output
        figure: CellFigure::default(),
        ..cell.clone()
    }
}

/// The row's recorded headline figure (empty for results without one).
fn figure(r: &TransformResult) -> CellFigure {
    CellFigure {
        estimator: r.figure_estimator.clone().unwrap_or_default(),
        value: r.figure_throughput,
        low: r.figure_low,
        high: r.figure_high,
    }
}

fn metrics(r: &TransformResult) -> BenchMetrics {
    let gpu_peak = r
        .gpu_memory
        .as_ref()
        .and_then(|g| g.get("peak_bytes").and_then(serde_json::Value::as_f64));
    BenchMetrics {
        median: r.median_throughput,
        mean: r.mean_throughput,
        std: r.std_throughput,
        cv: r.cv_throughput,
        ci_low: r.ci_low,
        ci_high: r.ci_high,
        time_per_item_ms: r.median_throughput.filter(|m| *m > 0.0).map(|m| 1000.0 / m),
        warmup_passes: (r.num_successful_runs > 0).then_some(r.warmup_iterations as f64),
        gpu_peak_bytes: gpu_peak,
    }
}
