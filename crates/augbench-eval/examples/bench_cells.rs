//! Rust side of `scripts/bench_cells.py` (a benchmark, not a test): times writing and reading a
//! seeded synthetic evaluation log, and grouping a per-sample Parquet file. Prints one JSON object.
//!
//! `bench_cells write-read <cells> <metrics> <dir> <repeat>` · `bench_cells group <rows.parquet> <repeat>`

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a development tool run by hand, not the product"
)]

use std::path::{Path, PathBuf};
use std::time::Instant;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use augbench_cells::io::parquet::read_batches_dictionary;
use augbench_cells::{Format, read_table};
use augbench_eval::rows::group_batches;
use augbench_eval::{EvalCell, EvalLog, GroupOptions, Grouper};

const SEED: u64 = 0;
const SCENES: usize = 5000;
const PHASES: [&str; 3] = ["clu", "int", "cln"];

fn synthetic_log(n: usize, metrics: usize) -> EvalLog {
    let mut rng = ChaCha8Rng::seed_from_u64(SEED);
    let cells = (0..n)
        .map(|i| EvalCell {
            model_name: format!("model_{}", i % 7),
            task: "monocular_depth".into(),
            scene_id: format!("scene_{:05}", i % SCENES),
            phase: PHASES[i % 3].into(),
            difficulty: Some(["easy", "medium", "hard"][i % 3].into()),
            n_samples: rng.random_range(1..200),
            frame_budget: 0,
            latency_ms_mean: Some(rng.random_range(1.0..50.0)),
            gpu_name: Some("NVIDIA L4".into()),
            gpu_memory_gb: Some(22.5),
            precision: Some("fp16".into()),
            batch_size: Some(8),
            toolkit_version: "0.1.0".into(),
            git_sha: Some("0a1b2c3".into()),
            timestamp_utc: "2026-01-01T00:00:00+00:00".into(),
            metrics: (0..metrics).map(|_| Some(rng.random::<f64>())).collect(),
        })
        .collect();
    EvalLog {
        metric_names: (0..metrics).map(|m| format!("m{m}")).collect(),
        cells,
    }
}

/// Best wall time of `repeat` calls, in seconds.
fn best<T>(repeat: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut best = f64::INFINITY;
    let mut last = None;
    for _ in 0..repeat.max(1) {
        let t = Instant::now();
        let out = f();
        best = best.min(t.elapsed().as_secs_f64());
        last = Some(out);
    }
    (best, last.expect("repeat is at least 1"))
}

fn write_read(
    n: usize,
    metrics: usize,
    dir: &Path,
    repeat: usize,
) -> Result<(), Box<dyn std::error::Error>> {
    let log = synthetic_log(n, metrics);
    let path = dir.join("rust_cells.parquet");
    let (to_table_s, table) = best(repeat, || log.to_table());
    let (write_table_s, res) = best(repeat, || {
        augbench_cells::write_table(&table, &path, Format::Parquet)
    });
    res?;
    let (write_typed_s, _) = best(repeat, || log.write(&path, Format::Parquet));
    let (read_table_s, t) = best(repeat, || read_table(&path));
    let rows = t?.num_rows();
    let (read_typed_s, l) = best(repeat, || EvalLog::read(&path));
    assert_eq!(l?.cells.len(), n);
    println!(
        "{}",
        serde_json::json!({
            "cells": rows, "metrics": metrics, "file": path, "bytes": std::fs::metadata(&path)?.len(),
            "to_table_s": to_table_s, "write_table_s": write_table_s, "write_typed_s": write_typed_s,
            "read_table_s": read_table_s, "read_typed_s": read_typed_s,
        })
    );
    Ok(())
}

fn group(rows: &Path, repeat: usize) -> Result<(), Box<dyn std::error::Error>> {
    let (read_s, batches) = best(repeat, || read_batches_dictionary(rows));
    let (_, batches) = batches?;
    let opts = GroupOptions {
        model_name: "m".into(),
        task: "t".into(),
        ..Default::default()
    };
    let (group_s, outcome) = best(repeat, || -> augbench_cells::Result<_> {
        let mut g = Grouper::new(opts.clone(), rows);
        group_batches(&mut g, &batches, rows)?;
        g.finish()
    });
    let outcome = outcome?;
    println!(
        "{}",
        serde_json::json!({
            "rows": outcome.rows, "cells": outcome.log.cells.len(), "metrics": outcome.log.metric_names,
            "read_s": read_s, "group_s": group_s,
        })
    );
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let num = |i: usize| -> Result<usize, Box<dyn std::error::Error>> {
        Ok(args.get(i).ok_or("missing argument")?.parse()?)
    };
    match args.first().map(String::as_str) {
        Some("write-read") => write_read(num(1)?, num(2)?, &PathBuf::from(args.get(3).ok_or("missing dir")?), num(4)?),
        Some("group") => group(Path::new(args.get(1).ok_or("missing rows file")?), num(2)?),
        _ => Err("usage: bench_cells write-read <cells> <metrics> <dir> <repeat> | group <rows.parquet> <repeat>".into()),
    }
}
