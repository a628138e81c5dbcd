//! Snapshots of `show` output (table, CSV, JSON) of a small evaluation log, and filtering; the
//! snapshots are `snapshots/integration__render__*.snap`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

use augbench_eval::render::{Filter, TextFormat, filter_rows, render_rows};
use augbench_eval::{CardStamp, EvalLog, PreAggregated};

fn log() -> EvalLog {
    let mut log = EvalLog::default();
    let stamp = CardStamp {
        gpu_name: Some("NVIDIA L4".into()),
        gpu_memory_gb: Some(22.5),
        precision: Some("fp16".into()),
        batch_size: Some(8),
    };
    for (scene, phase, v) in [
        ("kitchen_0", "clu", Some(0.25)),
        ("東京", "int", Some(f64::NAN)),
        ("kitchen_1", "clu", None),
    ] {
        log.push_pre_aggregated(
            PreAggregated {
                model_name: "DepthNet-S".into(),
                task: "monocular_depth".into(),
                scene_id: scene.into(),
                phase: phase.into(),
                n_samples: 3,
                difficulty: Some("easy".into()),
                latency_ms_mean: Some(20.5),
                git_sha: Some("0a1b2c3".into()),
                timestamp_utc: Some("2026-01-01T00:00:00+00:00".into()),
                frame_budget: 0,
                metrics: vec![("absrel".into(), v), ("rmse".into(), Some(1.0 / 3.0))],
            },
            &stamp,
        );
    }
    for c in &mut log.cells {
        c.toolkit_version = "0.0.0-test".into();
    }
    log
}

fn show(format: TextFormat, filters: &[&str]) -> String {
    let table = log().to_table();
    let filters: Vec<Filter> = filters.iter().map(|f| f.parse().unwrap()).collect();
    let rows = filter_rows(&table, &filters).unwrap();
    render_rows(&table, &rows, format)
}

#[test]
fn table_snapshot() {
    insta::assert_snapshot!(show(TextFormat::Table, &[]));
}

#[test]
fn csv_snapshot_with_filter() {
    insta::assert_snapshot!(show(TextFormat::Csv, &["phase=clu"]));
}

#[test]
fn json_snapshot_with_two_filters() {
    insta::assert_snapshot!(show(TextFormat::Json, &["phase=clu", "scene=kitchen_0"]));
}

#[test]
fn filter_on_unknown_column_is_an_error_listing_columns() {
    let table = log().to_table();
    let e = filter_rows(&table, &["nope=1".parse().unwrap()]).unwrap_err();
    assert!(e.hint().contains("scene_id"));
}
