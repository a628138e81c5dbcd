//! The golden case computed by the reference implementation of the cell-log contract: grouping
//! `golden/rows.jsonl` must give `golden/expected_cells.json` (floats within 1e-12 relative).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

use std::path::{Path, PathBuf};

use augbench_cells::Format;
use augbench_cells::schema::EVAL_FIXED;
use augbench_eval::rows::group_file;
use augbench_eval::{CardSource, EvalLog, GroupOptions};
use serde_json::Value;

fn golden(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name)
}

fn options(metric_keys: Option<Vec<String>>) -> GroupOptions {
    let card: Value =
        serde_json::from_str(&std::fs::read_to_string(golden("system_card.json")).unwrap())
            .unwrap();
    let stamp = CardSource::from_json(card, "system_card.json")
        .unwrap()
        .stamp("system_card.json")
        .unwrap();
    GroupOptions {
        model_name: "DepthNet-S".into(),
        task: "monocular_depth".into(),
        git_sha: Some("0a1b2c3".into()),
        metric_keys,
        stamp,
    }
}

fn explicit_keys() -> Option<Vec<String>> {
    Some(vec!["absrel".into(), "rmse".into(), "delta1".into()])
}

/// The log as JSON objects in the expected file's layout, sorted by (scene_id, phase).
fn as_json(log: &EvalLog) -> Vec<serde_json::Map<String, Value>> {
    let table = log.to_table();
    let names = table.column_names();
    let mut rows: Vec<serde_json::Map<String, Value>> = table
        .positions()
        .map(|(b, r)| {
            names
                .iter()
                .enumerate()
                .filter(|(_, n)| !matches!(**n, "timestamp_utc" | "toolkit_version"))
                .map(|(c, n)| (n.to_string(), to_json(table.value(b, c, r))))
                .collect()
        })
        .collect();
    rows.sort_by_key(|r| (r["scene_id"].to_string(), r["phase"].to_string()));
    rows
}

fn to_json(v: augbench_cells::CellValue<'_>) -> Value {
    use augbench_cells::CellValue::*;
    match v {
        Null => Value::Null,
        Str(s) => Value::from(s),
        Int(i) => Value::from(i),
        Float(f) => Value::from(f),
        List(xs) => Value::from(xs),
    }
}

fn assert_close(got: &Value, want: &Value, ctx: &str) {
    match (got.as_f64(), want.as_f64()) {
        (Some(g), Some(w)) if want.is_f64() => {
            assert!(
                (g - w).abs() <= 1e-12 * w.abs().max(1e-300),
                "{ctx}: {g} != {w}"
            );
        }
        _ => assert_eq!(got, want, "{ctx}"),
    }
}

#[test]
fn grouping_the_golden_rows_gives_the_reference_cells() {
    let outcome = group_file(&golden("rows.jsonl"), options(explicit_keys())).unwrap();
    assert_eq!(
        outcome.skipped, 2,
        "one row without scene, one without phase"
    );
    let got = as_json(&outcome.log);
    let want: Vec<serde_json::Map<String, Value>> =
        serde_json::from_str(&std::fs::read_to_string(golden("expected_cells.json")).unwrap())
            .unwrap();
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(&want) {
        let gk: Vec<&String> = g.keys().collect();
        let wk: Vec<&String> = w.keys().collect();
        assert_eq!(gk.len(), wk.len(), "columns of {}", w["scene_id"]);
        for (k, wv) in w {
            assert_close(&g[k], wv, &format!("{} {} {k}", w["scene_id"], w["phase"]));
        }
    }
}

#[test]
fn auto_detection_over_all_rows_finds_the_same_metrics_and_no_metadata() {
    let outcome = group_file(&golden("rows.jsonl"), options(None)).unwrap();
    assert_eq!(outcome.log.metric_names, ["absrel", "rmse", "delta1"]);
}

#[test]
fn golden_cells_survive_parquet_with_the_contract_columns_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let log = group_file(&golden("rows.jsonl"), options(explicit_keys()))
        .unwrap()
        .log;
    let res = log
        .write(&dir.path().join("cells.parquet"), Format::Auto)
        .unwrap();
    assert_eq!(res.rows, 12);
    assert_eq!(
        res.metric_columns,
        ["metric:absrel", "metric:rmse", "metric:delta1"]
    );
    let table = augbench_cells::read_table(&res.path).unwrap();
    let fixed: Vec<&str> = EVAL_FIXED.iter().map(|(n, _)| *n).collect();
    assert_eq!(&table.column_names()[..fixed.len()], fixed.as_slice());
    assert_eq!(EvalLog::read(&res.path).unwrap(), log);
}

#[test]
fn parquet_rows_group_like_jsonl_rows() {
    let dir = tempfile::tempdir().unwrap();
    let table = augbench_cells::read_table(&golden("rows.jsonl")).unwrap();
    let pq = augbench_cells::write_table(&table, &dir.path().join("rows.parquet"), Format::Auto)
        .unwrap()
        .path;
    let from_parquet = group_file(&pq, options(None)).unwrap();
    let from_jsonl = group_file(&golden("rows.jsonl"), options(None)).unwrap();
    assert_eq!(from_parquet.skipped, from_jsonl.skipped);
    assert_eq!(as_json(&from_parquet.log), as_json(&from_jsonl.log));
}

#[test]
fn many_batches_and_row_groups_group_like_rows() {
    // More rows than one read batch and one row group, so the dictionary fast path spans both.
    let n = augbench_cells::io::parquet::ROW_GROUP_ROWS + 5000;
    let dir = tempfile::tempdir().unwrap();
    let rows: String = (0..n)
        .map(|i| {
            let phase = if i % 1000 == 7 {
                "null".to_string()
            } else {
                format!("\"p{}\"", i % 3)
            };
            format!(
                "{{\"scene\": \"s{}\", \"phase\": {phase}, \"x\": {}, \"frame_budget\": {}}}\n",
                i % 11,
                i % 5,
                i % 4
            )
        })
        .collect();
    let jsonl = dir.path().join("rows.jsonl");
    std::fs::write(&jsonl, rows).unwrap();
    let table = augbench_cells::read_table(&jsonl).unwrap();
    let pq = augbench_cells::write_table(&table, &dir.path().join("rows.parquet"), Format::Auto)
        .unwrap()
        .path;
    let a = group_file(&pq, options(None)).unwrap();
    let b = group_file(&jsonl, options(None)).unwrap();
    assert_eq!((a.rows, a.skipped), (b.rows, b.skipped));
    assert_eq!(as_json(&a.log), as_json(&b.log));
    assert_eq!(a.log.cells.len(), 33);
}
