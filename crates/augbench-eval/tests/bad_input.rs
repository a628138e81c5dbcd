//! Every bad input of issue 5 gets a typed error naming the file (and line or row) with a hint:
//! truncated Parquet, a malformed JSONL line, a metric whose type changes, a missing rows file,
//! merge conflicts and duplicates, unicode and very long scene ids, and zero rows. Bad cell-log
//! files read on their own: augbench-cells' `bad_input`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

use std::path::{Path, PathBuf};

use augbench_cells::{CellsError, Format, read_table};
use augbench_eval::merge::merge_files;
use augbench_eval::rows::group_file;
use augbench_eval::{EvalLog, GroupOptions, PreAggregated};

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn opts() -> GroupOptions {
    GroupOptions {
        model_name: "m".into(),
        task: "t".into(),
        ..Default::default()
    }
}

fn sample_log(scene: &str, metric: &str) -> EvalLog {
    let mut log = EvalLog::default();
    log.push_pre_aggregated(
        PreAggregated {
            model_name: "m".into(),
            task: "t".into(),
            scene_id: scene.into(),
            phase: "clu".into(),
            n_samples: 1,
            difficulty: None,
            latency_ms_mean: None,
            git_sha: None,
            timestamp_utc: None,
            frame_budget: 0,
            metrics: vec![(metric.into(), Some(1.0))],
        },
        &Default::default(),
    );
    log
}

fn assert_user_error(e: &CellsError, must_contain: &[&str]) {
    let msg = e.to_string();
    for m in must_contain {
        assert!(msg.contains(m), "'{m}' not in: {msg}");
    }
    assert!(e.is_user_fixable(), "{msg}");
    assert!(!e.hint().is_empty());
}

#[test]
fn truncated_parquet_is_reported_as_corrupt_with_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let good = sample_log("s", "a")
        .write(&dir.path().join("good.parquet"), Format::Auto)
        .unwrap()
        .path;
    let bytes = std::fs::read(&good).unwrap();
    let bad = dir.path().join("cut.parquet");
    std::fs::write(&bad, &bytes[..bytes.len() / 2]).unwrap();
    let e = read_table(&bad).unwrap_err();
    assert!(matches!(e, CellsError::CorruptParquet { .. }));
    assert_user_error(&e, &["cut.parquet", "not a readable Parquet file"]);
}

#[test]
fn one_malformed_jsonl_line_is_named_by_number() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(
        dir.path(),
        "rows.jsonl",
        "{\"scene\": \"a\", \"phase\": \"clu\", \"x\": 1}\n\n{\"scene\": \"a\", \"phase\": \n",
    );
    let e = group_file(&p, opts()).unwrap_err();
    assert_user_error(&e, &["rows.jsonl", "line 3", "malformed JSON"]);
    let e = read_table(&p).unwrap_err();
    assert_user_error(&e, &["line 3"]);
}

#[test]
fn a_metric_whose_type_changes_between_rows_is_an_error_with_both_lines() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(
        dir.path(),
        "rows.jsonl",
        "{\"scene\": \"a\", \"phase\": \"clu\", \"absrel\": 0.1}\n{\"scene\": \"a\", \"phase\": \"clu\", \"absrel\": \"n/a\"}\n",
    );
    let e = group_file(&p, opts()).unwrap_err();
    assert!(matches!(e, CellsError::TypeChange { .. }));
    assert_user_error(
        &e,
        &["rows.jsonl", "line 2", "'absrel'", "a string", "line 1"],
    );
}

#[test]
fn a_missing_rows_file_is_not_found() {
    let e = group_file(Path::new("no/rows.jsonl"), opts()).unwrap_err();
    assert!(matches!(e, CellsError::NotFound { .. }));
    assert_user_error(&e, &["no/rows.jsonl", "no such file"]);
}

#[test]
fn merge_unions_columns_and_rejects_a_fixed_column_type_conflict() {
    let dir = tempfile::tempdir().unwrap();
    let a = sample_log("s1", "a")
        .write(&dir.path().join("a.parquet"), Format::Auto)
        .unwrap()
        .path;
    let b = sample_log("s2", "b")
        .write(&dir.path().join("b.jsonl"), Format::Auto)
        .unwrap()
        .path;
    let merged = merge_files(&[a.clone(), b]).unwrap();
    assert_eq!(merged.table.num_rows(), 2);
    assert_eq!(merged.table.metric_columns(), ["metric:a", "metric:b"]);
    assert!(merged.duplicates.is_empty());

    let conflict = write(dir.path(), "conflict.jsonl", "{\"extra\": 1}\n");
    let other = write(dir.path(), "other.jsonl", "{\"extra\": \"one\"}\n");
    let e = merge_files(&[conflict, other]).unwrap_err();
    assert!(matches!(e, CellsError::MergeConflict { .. }));
    assert_user_error(&e, &["'extra'", "conflict.jsonl", "other.jsonl"]);
}

#[test]
fn merge_reports_a_fixed_column_of_the_wrong_type() {
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    let a = sample_log("s1", "a")
        .write(&dir.path().join("a.parquet"), Format::Auto)
        .unwrap()
        .path;
    // A foreign Parquet log whose n_samples column holds text.
    let schema = Arc::new(arrow_schema::Schema::new(vec![
        arrow_schema::Field::new("scene_id", arrow_schema::DataType::Utf8, true),
        arrow_schema::Field::new("n_samples", arrow_schema::DataType::Utf8, true),
    ]));
    let cols: Vec<arrow_array::ArrayRef> = vec![
        Arc::new(arrow_array::StringArray::from(vec!["s2"])),
        Arc::new(arrow_array::StringArray::from(vec!["three"])),
    ];
    let batch = arrow_array::RecordBatch::try_new(schema.clone(), cols).unwrap();
    let table = augbench_cells::CellTable::new(schema, vec![batch]);
    let bad = augbench_cells::write_table(&table, &dir.path().join("bad.parquet"), Format::Auto)
        .unwrap()
        .path;
    let e = merge_files(&[a, bad]).unwrap_err();
    assert!(matches!(e, CellsError::ColumnType { .. }), "{e}");
    assert_user_error(&e, &["bad.parquet", "'n_samples'", "an integer"]);
}

#[test]
fn duplicate_cells_on_merge_are_kept_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let a = sample_log("s1", "a")
        .write(&dir.path().join("a.parquet"), Format::Auto)
        .unwrap()
        .path;
    let b = sample_log("s1", "a")
        .write(&dir.path().join("b.parquet"), Format::Auto)
        .unwrap()
        .path;
    let merged = merge_files(&[a.clone(), b.clone()]).unwrap();
    assert_eq!(merged.table.num_rows(), 2);
    assert_eq!(merged.duplicates.len(), 1);
    assert_eq!(merged.duplicates[0].count, 2);
    assert_eq!(merged.duplicates[0].files, vec![a, b]);
    assert!(merged.duplicates[0].key.contains("scene_id=s1"));
}

#[test]
fn unicode_and_very_long_scene_ids_round_trip_in_both_formats() {
    let dir = tempfile::tempdir().unwrap();
    let long = "場景-🚀-".repeat(2000);
    let rows: String = ["киев_0", "東京", long.as_str()]
        .iter()
        .map(|s| {
            format!(
                "{{\"scene\": {}, \"phase\": \"clu\", \"m\": 1}}\n",
                serde_json::to_string(s).unwrap()
            )
        })
        .collect();
    let p = write(dir.path(), "rows.jsonl", &rows);
    let log = group_file(&p, opts()).unwrap().log;
    assert_eq!(log.cells[2].scene_id, long);
    for name in ["c.parquet", "c.jsonl"] {
        let path = log
            .write(&dir.path().join(name), Format::Auto)
            .unwrap()
            .path;
        let back = EvalLog::read(&path).unwrap();
        let scenes: Vec<&str> = back.cells.iter().map(|c| c.scene_id.as_str()).collect();
        assert_eq!(scenes, ["киев_0", "東京", long.as_str()]);
    }
}

#[test]
fn zero_rows_write_a_schema_only_parquet_that_reads_back_empty() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "rows.jsonl", "");
    let outcome = group_file(&p, opts()).unwrap();
    assert_eq!((outcome.rows, outcome.log.cells.len()), (0, 0));
    let res = outcome
        .log
        .write(&dir.path().join("cells"), Format::Auto)
        .unwrap();
    assert_eq!(res.path, dir.path().join("cells.parquet"));
    let table = read_table(&res.path).unwrap();
    assert_eq!(table.num_rows(), 0);
    assert_eq!(
        table.column_names().len(),
        augbench_cells::schema::EVAL_FIXED.len()
    );
    assert_eq!(EvalLog::read(&res.path).unwrap(), EvalLog::default());
}

#[test]
fn rows_without_scene_or_phase_are_skipped_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(
        dir.path(),
        "rows.jsonl",
        "{\"phase\": \"clu\", \"m\": 1}\n{\"scene\": \"a\", \"m\": 2}\n{\"scene\": \"a\", \"phase\": null}\n",
    );
    let outcome = group_file(&p, opts()).unwrap();
    assert_eq!(
        (outcome.rows, outcome.skipped, outcome.log.cells.len()),
        (3, 3, 0)
    );
}

#[test]
fn malformed_csv_names_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "rows.csv", "scene,phase,m\na,clu,1\nb,clu\n");
    let e = group_file(&p, opts()).unwrap_err();
    assert_user_error(&e, &["rows.csv", "line 3"]);
}

#[test]
fn an_unsupported_rows_suffix_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "rows.txt", "x");
    assert!(matches!(
        group_file(&p, opts()).unwrap_err(),
        CellsError::UnsupportedSuffix { .. }
    ));
}

#[test]
fn a_parquet_metric_column_of_lists_is_refused_naming_the_column() {
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    // A contract-valid log, then its metric column replaced by a list<double> column.
    let good = sample_log("s", "a").to_table();
    let b = &good.batches()[0];
    let schema = b.schema();
    let idx = schema.index_of("metric:a").unwrap();
    let list =
        arrow_array::ListArray::from_iter_primitive::<arrow_array::types::Float64Type, _, _>(vec![
            Some(vec![Some(1.0), Some(2.0)]),
        ]);
    let mut fields: Vec<arrow_schema::Field> =
        schema.fields().iter().map(|f| f.as_ref().clone()).collect();
    fields[idx] = arrow_schema::Field::new(
        "metric:a",
        arrow_array::Array::data_type(&list).clone(),
        true,
    );
    let mut cols: Vec<arrow_array::ArrayRef> = b.columns().to_vec();
    cols[idx] = Arc::new(list);
    let schema = Arc::new(arrow_schema::Schema::new(fields));
    let batch = arrow_array::RecordBatch::try_new(schema.clone(), cols).unwrap();
    let table = augbench_cells::CellTable::new(schema, vec![batch]);
    let path = augbench_cells::write_table(&table, &dir.path().join("lists.parquet"), Format::Auto)
        .unwrap()
        .path;
    let e = EvalLog::read(&path).unwrap_err();
    assert!(matches!(e, CellsError::ColumnType { .. }), "{e}");
    assert_user_error(&e, &["lists.parquet", "'metric:a'", "a number"]);
}
