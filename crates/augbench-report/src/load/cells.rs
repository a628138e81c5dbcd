//! Benchmark cell logs (Parquet or JSON Lines) into rows, read through augbench-cells. A log
//! that holds several runs keeps the newest row per (group, library, transform), with a warning.
//! Paired-speedup rows attach to their library's row.

use std::collections::BTreeMap;
use std::path::Path;

use augbench_cells::{BenchCell, CellsError, PAIRED_SCOPE, parse_paired_label, read_bench_cells};
use augbench_core::results::Status;
use augbench_core::{Media, policy};
use serde_json::json;

use crate::model::{Dataset, GroupKey, MeasuredOver, PairedRatio, Row, Source};
use crate::output::usage;

pub fn load(path: &Path) -> anyhow::Result<Dataset> {
    let cells = read_bench_cells(path).map_err(|e| cells_error(e, path))?;
    let mut data = Dataset::default();
    let mut newest: BTreeMap<(GroupKey, String, String), BenchCell> = BTreeMap::new();
    let mut dropped = 0usize;
    for c in cells {
        let k = (key(&c), c.library.clone(), c.transform.clone());
        match newest.get(&k) {
            Some(old) if old.timestamp_utc > c.timestamp_utc => dropped += 1,
            Some(_) => {
                dropped += 1;
                newest.insert(k, c);
            }
            None => {
                newest.insert(k, c);
            }
        }
    }
    if dropped > 0 {
        data.warnings.push(format!(
            "{}: holds several runs; used the newest row per transform and ignored {dropped} older rows",
            path.display()
        ));
    }
    let (paired, measured): (Vec<&BenchCell>, Vec<&BenchCell>) =
        newest.values().partition(|c| c.scope == PAIRED_SCOPE);
    for c in measured {
        data.rows.push(row(c, path, &mut data.warnings));
        let k = key(c);
        if !data
            .sources
            .iter()
            .any(|s| s.key == k && s.library == c.library)
        {
            data.sources.push(source(c, path));
        }
    }
    attach_paired(&mut data.rows, &paired);
    Ok(data)
}

/// Paired rows (`<lib> ÷ <partner>`) become the `paired` speedups of their library's row, when
/// that row comes from the same run.
fn attach_paired(rows: &mut [Row], paired: &[&BenchCell]) {
    for c in paired {
        let Some((lib, partner)) = parse_paired_label(&c.library) else {
            continue;
        };
        let k = key(c);
        let found = rows.iter_mut().find(|r| {
            r.key() == k
                && r.library == lib
                && r.transform == c.transform
                && r.pairing.as_deref() == Some(c.run_id.as_str())
        });
        if let (Some(r), Some(ratio)) = (found, c.metrics.median) {
            r.paired.push(PairedRatio {
                partner: partner.to_string(),
                ratio,
                ci_low: c.metrics.ci_low.unwrap_or(ratio),
                ci_high: c.metrics.ci_high.unwrap_or(ratio),
                rounds: c.throughputs.len() as u64,
                rerun: None,
                ratios: Vec::new(),
            });
        }
    }
}

fn cells_error(e: CellsError, path: &Path) -> anyhow::Error {
    if e.is_user_fixable() {
        usage(e.to_string(), e.hint())
    } else {
        anyhow::Error::new(e).context(format!("reading cell log {}", path.display()))
    }
}

fn key(c: &BenchCell) -> GroupKey {
    GroupKey {
        scenario: c.scenario.clone(),
        mode: c.mode.clone(),
        device: c.device.clone(),
        variant: {
            let sweep =
                (c.mode == "pipeline").then_some((c.scope.as_str(), c.workers, c.batch_size));
            let set = augbench_core::targets::split_label(&c.library).map(|(_, s)| s.to_string());
            crate::model::group_variant(sweep, set.as_deref())
        },
    }
}

fn row(c: &BenchCell, path: &Path, warnings: &mut Vec<String>) -> Row {
    let media = if c.media == "video" {
        Media::Video
    } else {
        Media::Image
    };
    let parsed = serde_json::from_value::<Status>(json!(c.status));
    if parsed.is_err() {
        warnings.push(format!(
            "{}: {} / {}: unknown status `{}`; shown as error",
            path.display(),
            c.library,
            c.transform,
            c.status
        ));
    }
    let k = key(c);
    // A video cell's frames per clip, as measured (logs written before the column show no frames/s).
    let clip_length = c.clip_length.filter(|_| media == Media::Video);
    Row {
        scenario: k.scenario,
        mode: k.mode,
        media,
        clip_length,
        library: c.library.clone(),
        library_version: c.library_version.clone(),
        device: k.device,
        variant: k.variant,
        transform: c.transform.clone(),
        status: parsed.as_ref().copied().unwrap_or(Status::Error),
        median: c.metrics.median,
        figure: c.figure.value,
        figure_estimator: Some(c.figure.estimator.clone()).filter(|e| !e.is_empty()),
        figure_interval: c.figure.low.zip(c.figure.high),
        std: c.metrics.std,
        ci_low: c.metrics.ci_low,
        ci_high: c.metrics.ci_high,
        rerun: None,
        throughputs: c.throughputs.clone(),
        cpu_throughputs: Vec::new(),
        process_runs: Vec::new(),
        paired: Vec::new(),
        pairing: Some(c.run_id.clone()),
        slow_threshold: policy::slow_threshold_sec_per_item(media),
        reason: parsed
            .err()
            .map(|_| format!("unknown status `{}`", c.status)),
        output_contiguous: c.form.contiguous,
        force_share: c.form.force_share,
        ceiling_share: None, // the cell log keeps no pipeline detail
        first_batch_s: None,
        instructions: None,
        params: None, // the cell log keeps the parameters' hash only
        source: path.to_path_buf(),
    }
}

fn source(c: &BenchCell, path: &Path) -> Source {
    Source {
        path: path.to_path_buf(),
        key: key(c),
        library: c.library.clone(),
        library_version: c.library_version.clone(),
        system_info: json!({
            "cpu": c.cpu_name, "cpu_cores": c.cpu_cores, "ram_gb": c.ram_gb, "gpu": c.gpu_name,
            "gpu_memory_gb": c.gpu_memory_gb, "os": c.os, "rustc": c.rustc_version,
            "toolkit_version": c.toolkit_version, "git_sha": c.git_sha,
        }),
        library_versions: BTreeMap::from([(c.library.clone(), c.library_version.clone())]),
        benchmark_params: json!({
            "items": c.items, "runs": c.runs, "workers": c.workers, "batch_size": c.batch_size,
            "channels": c.channels, "scope": c.scope, "thread_policy": c.thread_policy,
        }),
        thread_settings: json!({ "thread_policy": c.thread_policy }),
        equivalence: None,
        configured_reference: None,
        variant: None,
        data: Some(MeasuredOver {
            items: c.items,
            files: None,
        }),
    }
}
