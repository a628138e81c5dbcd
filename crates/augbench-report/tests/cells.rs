//! Benchmark cell logs as report input: Parquet and JSON Lines, newest row per transform when a
//! log holds several runs, pipeline sweep points kept apart.

mod common;

use augbench_cells::{BenchCell, BenchMetrics, append_bench_cells};
use augbench_core::results::Status;
use augbench_report::{TableOptions, load_paths, table::build_tables};

fn cell(library: &str, transform: &str, median: f64, run: &str, ts: &str) -> BenchCell {
    BenchCell {
        run_id: run.into(),
        library: library.into(),
        library_version: "1.0".into(),
        transform: transform.into(),
        scenario: "image-rgb".into(),
        mode: "micro".into(),
        media: "image".into(),
        device: "cpu".into(),
        channels: 3,
        items: 100,
        runs: 3,
        scope: "augment".into(),
        thread_policy: "single".into(),
        status: "ok".into(),
        timestamp_utc: ts.into(),
        throughputs: vec![median * 0.99, median, median * 1.01],
        metrics: BenchMetrics {
            median: Some(median),
            std: Some(median * 0.01),
            ..BenchMetrics::default()
        },
        ..BenchCell::default()
    }
}

#[test]
fn parquet_log_keeps_the_newest_run_per_transform() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("cells.parquet");
    append_bench_cells(
        &log,
        &[
            cell("kornia", "Resize", 100.0, "r1", "2026-01-01T00:00:00Z"),
            cell("kornia", "Resize", 150.0, "r2", "2026-01-02T00:00:00Z"),
            cell(
                "albumentationsx",
                "Resize",
                300.0,
                "r2",
                "2026-01-02T00:00:00Z",
            ),
        ],
    )
    .unwrap();
    let data = load_paths(&[log]).unwrap();
    assert_eq!(data.rows.len(), 2);
    assert_eq!(data.warnings.len(), 1, "{:?}", data.warnings);
    let kornia = data.rows.iter().find(|r| r.library == "kornia").unwrap();
    assert_eq!((kornia.status, kornia.median), (Status::Ok, Some(150.0)));
    let t = &build_tables(&data, &TableOptions::default()).unwrap()[0];
    assert_eq!(t.rows[0].speedup, Some(2.0));
}

#[test]
fn jsonl_log_with_pipeline_sweep_points_and_unknown_status() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("cells.parquet");
    let mut a = cell("kornia", "Resize", 100.0, "r1", "t");
    a.mode = "pipeline".into();
    a.workers = 4;
    a.batch_size = 32;
    let mut b = a.clone();
    b.workers = 8;
    let mut c = cell("kornia", "Blur", 1.0, "r1", "t");
    c.status = "exploded".into();
    append_bench_cells(&log, &[a, b, c]).unwrap();
    let jsonl = dir.path().join("cells.jsonl");
    let table = augbench_cells::read_table(&log).unwrap();
    augbench_cells::write_table(&table, &jsonl, augbench_cells::Format::Jsonl).unwrap();
    let data = load_paths(&[jsonl]).unwrap();
    let titles: Vec<String> = data.groups().iter().map(|g| g.key.title()).collect();
    assert_eq!(
        titles,
        [
            "image-rgb · micro · cpu",
            "image-rgb · pipeline · cpu · augment w4 b32",
            "image-rgb · pipeline · cpu · augment w8 b32",
        ]
    );
    let blur = data.rows.iter().find(|r| r.transform == "Blur").unwrap();
    assert_eq!(blur.status, Status::Error);
    assert!(
        data.warnings
            .iter()
            .any(|w| w.contains("unknown status `exploded`"))
    );
}

#[test]
fn a_corrupt_log_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("cells.parquet");
    std::fs::write(&log, b"not parquet").unwrap();
    let err = load_paths(&[log]).unwrap_err();
    assert!(
        common::usage_message(&err)
            .unwrap()
            .contains("cells.parquet")
    );
}
