//! Bad cell-log files get a typed error naming the file (and line) with a hint when read:
//! garbage with a Parquet suffix, a metric column holding text, a fixed column of the wrong type,
//! a missing file. Bad per-sample rows, merges and evaluation logs: augbench-eval's `bad_input`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

use std::path::{Path, PathBuf};

use augbench_cells::{CellsError, read_table};

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
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
fn garbage_with_a_parquet_suffix_is_corrupt() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "junk.parquet", "this is not parquet at all");
    assert_user_error(&read_table(&p).unwrap_err(), &["junk.parquet"]);
}

#[test]
fn a_cell_log_metric_column_holding_text_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(
        dir.path(),
        "cells.jsonl",
        "{\"metric:x\": 1.5}\n{\"metric:x\": \"high\"}\n",
    );
    assert_user_error(
        &read_table(&p).unwrap_err(),
        &["cells.jsonl", "line 2", "'metric:x'"],
    );
}

#[test]
fn a_missing_file_is_not_found() {
    let e = read_table(Path::new("no/such/cells.parquet")).unwrap_err();
    assert!(matches!(e, CellsError::NotFound { .. }));
    assert_user_error(&e, &["no/such/cells.parquet", "no such file"]);
}

#[test]
fn a_jsonl_fixed_column_of_the_wrong_type_names_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let bad = write(
        dir.path(),
        "bad.jsonl",
        "{\"model_name\": \"m\"}\n{\"n_samples\": \"three\"}\n",
    );
    let e = read_table(&bad).unwrap_err();
    assert_user_error(&e, &["bad.jsonl", "line 2", "'n_samples'", "an integer"]);
}
