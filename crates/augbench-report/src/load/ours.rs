//! Our own result files (`metadata.format_version` present): parsed strictly into core's
//! `ResultFile`, so any drift from the schema is an error naming the file, line and column.

use std::path::Path;

use augbench_core::Media;
use augbench_core::json_text::{self, Repaired};
use augbench_core::results::{ResultFile, Status, TransformResult};

use crate::model::{Dataset, GroupKey, MeasuredOver, PairedRatio, Row, Source};
use crate::output::usage;

/// Parses `repaired` (the text of `raw` with Python's NaN tokens as null); errors are placed
/// in `raw`.
pub fn load(path: &Path, raw: &str, repaired: &Repaired<'_>) -> anyhow::Result<Dataset> {
    let file: ResultFile = serde_json::from_str(&repaired.text).map_err(|e| {
        let at = json_text::error_at_repaired(raw, repaired, &e)
            .map(|a| format!(" at {a}"))
            .unwrap_or_default();
        usage(
            format!(
                "{}: does not match augbench's result format{at}: {}",
                path.display(),
                json_text::message(&e)
            ),
            "the file claims `metadata.format_version` but its fields differ; was it edited by hand?",
        )
    })?;
    let m = &file.metadata;
    let key = GroupKey {
        scenario: m.scenario.clone(),
        mode: m.mode.clone(),
        device: m.device.clone(),
        variant: variant(&file),
    };
    let media = match m.dataset.media.as_str() {
        "video" => Media::Video,
        _ => Media::Image,
    };
    let clip_length = (media == Media::Video)
        .then(|| {
            m.benchmark_params
                .clip_length
                .or(m.dataset.clips.as_ref().map(|c| c.clip_length))
        })
        .flatten();
    let adapter = m.variant.as_ref().map_or(&m.library, |v| &v.library);
    let version = super::reference::version_of(adapter, &m.library_versions);
    let threshold = m.benchmark_params.slow_threshold_sec_per_item;
    let rows = file
        .results
        .iter()
        .map(|(name, tr)| Row {
            scenario: key.scenario.clone(),
            mode: key.mode.clone(),
            media,
            clip_length,
            library: m.library.clone(),
            library_version: version.clone(),
            device: key.device.clone(),
            variant: key.variant.clone(),
            transform: name.clone(),
            status: status(tr),
            median: if status(tr) == Status::Slow {
                tr.preflight_throughput.or(tr.median_throughput)
            } else {
                tr.median_throughput
            },
            figure: tr.figure_throughput,
            figure_estimator: tr.figure_estimator.clone(),
            figure_interval: tr.figure_low.zip(tr.figure_high),
            std: tr.std_throughput,
            ci_low: tr.ci_low.or(tr.throughput_ci95.map(|c| c[0])),
            ci_high: tr.ci_high.or(tr.throughput_ci95.map(|c| c[1])),
            rerun: tr.rerun_low.zip(tr.rerun_high),
            throughputs: tr.throughputs.clone(),
            cpu_throughputs: cpu_throughputs(tr),
            process_runs: tr.process_runs.clone(),
            paired: tr
                .paired
                .iter()
                .map(|p| PairedRatio {
                    partner: p.partner.clone(),
                    ratio: p.ratio,
                    ci_low: p.ci_low,
                    ci_high: p.ci_high,
                    rounds: p.rounds,
                    rerun: Some((p.rerun_low, p.rerun_high)),
                    ratios: p.ratios.clone(),
                })
                .collect(),
            pairing: tr.rounds_id.clone(),
            slow_threshold: tr.slow_threshold_sec_per_item.unwrap_or(threshold),
            reason: tr.reason.clone().or(tr.early_stop_reason.clone()),
            output_contiguous: tr.output_contiguous,
            force_share: tr.force_share,
            ceiling_share: tr
                .pipeline
                .as_ref()
                .and_then(|p| p.ceiling.as_ref())
                .map(|c| c.ratio),
            first_batch_s: tr
                .pipeline
                .as_ref()
                .map(|p| p.time_to_first_batch)
                .filter(|s| s.is_finite() && *s > 0.0),
            instructions: tr.instructions.clone(),
            params: (!tr.params.is_null()).then(|| tr.params.clone()),
            source: path.to_path_buf(),
        })
        .collect();
    let source = Source {
        path: path.to_path_buf(),
        key,
        library: m.library.clone(),
        library_version: version,
        system_info: machine_facts(&m.system_info),
        library_versions: m.library_versions.clone(),
        benchmark_params: serde_json::to_value(&m.benchmark_params).unwrap_or_default(),
        thread_settings: serde_json::to_value(&m.thread_settings).unwrap_or_default(),
        equivalence: m.equivalence.clone(),
        configured_reference: m
            .run_config
            .pointer("/output/reference_library")
            .and_then(serde_json::Value::as_str)
            .map(str::to_string),
        variant: m.variant.clone(),
        data: Some(data(m)),
    };
    Ok(Dataset {
        rows,
        sources: vec![source],
        warnings: Vec::new(),
    })
}

/// What a file measured over: its items and the files they came from.
fn data(m: &augbench_core::results::Metadata) -> MeasuredOver {
    let d = &m.dataset;
    MeasuredOver {
        items: m.benchmark_params.num_items,
        files: Some(format!(
            "{} {} files, {} bytes{}",
            d.file_count,
            d.media,
            d.total_bytes,
            if d.synthetic { ", synthetic" } else { "" }
        )),
    }
}

/// The system as the report groups it: the machine card without its per-job load and steal
/// (which differ between any two jobs; they stay in the result files and the cells).
fn machine_facts(info: &augbench_core::machine_card::MachineCard) -> serde_json::Value {
    let info = augbench_core::machine_card::MachineCard {
        before: None,
        after: None,
        ..info.clone()
    };
    serde_json::to_value(&info).unwrap_or_default()
}

/// Pipeline sweep point and target set (`model::group_variant`); for micro, `batch <B>` in the
/// batched regime (its own group, never mixed with per-item numbers) and empty otherwise.
fn variant(file: &ResultFile) -> String {
    let m = &file.metadata;
    let p = &m.benchmark_params;
    if p.measure.as_deref() == Some(crate::model::COUNT_VARIANT) {
        return crate::model::COUNT_VARIANT.to_string();
    }
    let set = m.targets.as_ref().map(|t| t.set.as_str());
    if m.mode != "pipeline" && set.is_none() {
        return p
            .micro_batch
            .map_or(String::new(), |b| format!("batch {b}"));
    }
    let sweep = (m.mode == "pipeline").then_some((
        m.timing.measurement_scope.as_str(),
        p.workers,
        p.batch_size,
    ));
    crate::model::group_variant(sweep, set)
}

fn status(tr: &TransformResult) -> Status {
    match tr.status {
        Some(s) => s,
        None if !tr.supported => Status::Unsupported,
        None if tr.early_stopped => Status::Slow,
        None => Status::Ok,
    }
}

/// Items per thread-CPU second of each run: the run's items (throughput × wall seconds) over its
/// CPU seconds; empty unless every run has both clocks and a positive CPU time.
fn cpu_throughputs(tr: &TransformResult) -> Vec<f64> {
    let n = tr.throughputs.len();
    if tr.cpu_times.len() != n || tr.times.len() != n || tr.cpu_times.iter().any(|c| *c <= 0.0) {
        return Vec::new();
    }
    let runs = tr.throughputs.iter().zip(&tr.times).zip(&tr.cpu_times);
    runs.map(|((tp, wall), cpu)| tp * wall / cpu).collect()
}
