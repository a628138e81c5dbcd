//! `augbench cells` end to end: group the golden rows, show, filter, merge (with the duplicate
//! warning), summarize, convert, and the exit codes and messages of bad input (2 = fix your input).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;

fn golden(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../augbench-eval/tests/golden")
        .join(name)
}

fn augbench() -> Command {
    Command::cargo_bin("augbench").unwrap()
}

/// Groups the golden rows with the golden card into `out`.
fn group_golden(out: &Path) {
    augbench()
        .args([
            "cells",
            "group",
            "--model",
            "DepthNet-S",
            "--task",
            "monocular_depth",
        ])
        .args([
            "--metric-keys",
            "absrel,rmse,delta1",
            "--git-sha",
            "0a1b2c3",
            "--system-card",
        ])
        .arg(golden("system_card.json"))
        .arg(golden("rows.jsonl"))
        .arg("-o")
        .arg(out)
        .assert()
        .success()
        .stderr(
            predicate::str::contains("wrote 12 cells")
                .and(predicate::str::contains("2 of 40 rows skipped")),
        );
}

fn show_json(file: &Path, filters: &[&str]) -> Vec<serde_json::Map<String, serde_json::Value>> {
    let mut cmd = augbench();
    cmd.args(["cells", "show", "--format", "json"]).arg(file);
    for f in filters {
        cmd.args(["--filter", f]);
    }
    let out = cmd.assert().success().get_output().stdout.clone();
    serde_json::from_slice(&out).unwrap()
}

#[test]
fn group_then_show_gives_the_contract_columns_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("cells.parquet");
    group_golden(&out);
    let rows = show_json(&out, &[]);
    assert_eq!(rows.len(), 12);
    let cols: Vec<&str> = rows[0].keys().map(String::as_str).collect();
    assert_eq!(cols.len(), 18);
    assert_eq!(rows[0]["gpu_name"], "NVIDIA L4");
    assert_eq!(rows[0]["batch_size"], 8);
    let clu = show_json(&out, &["phase=clu", "model=DepthNet-S"]);
    assert_eq!(clu.len(), 4);
}

#[test]
fn group_reads_csv_rows_and_detects_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("rows.csv");
    std::fs::write(
        &csv,
        "id,scene,phase,latency_ms,absrel\n0,0001,clu,10,0.5\n1,0001,clu,20,1.5\n",
    )
    .unwrap();
    let out = dir.path().join("cells.jsonl");
    augbench()
        .args([
            "cells",
            "group",
            "--model",
            "m",
            "--task",
            "t",
            "--system-card",
            "none",
        ])
        .arg(&csv)
        .arg("-o")
        .arg(&out)
        .assert()
        .success();
    let rows = show_json(&out, &[]);
    assert_eq!(rows[0]["scene_id"], "0001");
    assert_eq!(rows[0]["metric:absrel"], 1.0);
    assert_eq!(rows[0]["latency_ms_mean"], 15.0);
    assert_eq!(rows[0]["gpu_name"], serde_json::Value::Null);
}

#[test]
fn merge_keeps_duplicates_and_warns() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.parquet");
    group_golden(&a);
    let merged = dir.path().join("merged.parquet");
    augbench()
        .args(["cells", "merge"])
        .arg(&a)
        .arg(&a)
        .arg("-o")
        .arg(&merged)
        .assert()
        .success()
        .stderr(predicate::str::contains("warning: 12 duplicate cells kept"));
    assert_eq!(show_json(&merged, &[]).len(), 24);
}

#[test]
fn summarize_reports_mean_and_interval_per_group() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("cells.parquet");
    group_golden(&out);
    let run = || {
        augbench()
            .args([
                "cells",
                "summarize",
                "--by",
                "model,phase",
                "--format",
                "csv",
            ])
            .arg(&out)
            .assert()
            .success()
            .get_output()
            .stdout
            .clone()
    };
    let text = String::from_utf8(run()).unwrap();
    assert!(
        text.starts_with("model_name,phase,metric,n_cells,n_scenes,mean,ci_low,ci_high\n"),
        "{text}"
    );
    assert_eq!(text.lines().count(), 1 + 3 * 3, "3 phases × 3 metrics");
    assert_eq!(run(), text.as_bytes(), "seeded: same output twice");
}

#[test]
fn summarize_refuses_a_huge_bootstrap_with_exit_2_before_allocating() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("cells.parquet");
    group_golden(&out);
    augbench()
        .args(["cells", "summarize", "--bootstrap", &usize::MAX.to_string()])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("--bootstrap")
                .and(predicate::str::contains("limit"))
                .and(predicate::str::contains("hint")),
        );
}

#[test]
fn convert_round_trips_between_formats() {
    let dir = tempfile::tempdir().unwrap();
    let pq = dir.path().join("cells.parquet");
    group_golden(&pq);
    let jl = dir.path().join("cells.jsonl");
    augbench()
        .args(["cells", "convert"])
        .arg(&pq)
        .arg(&jl)
        .assert()
        .success();
    let back = dir.path().join("back.pq");
    augbench()
        .args(["cells", "convert"])
        .arg(&jl)
        .arg(&back)
        .assert()
        .success();
    assert_eq!(show_json(&pq, &[]), show_json(&back, &[]));
}

#[test]
fn empty_rows_write_a_schema_only_log_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let rows = dir.path().join("rows.jsonl");
    std::fs::write(&rows, "").unwrap();
    let out = dir.path().join("cells.parquet");
    augbench()
        .args([
            "cells",
            "group",
            "--model",
            "m",
            "--task",
            "t",
            "--system-card",
            "none",
        ])
        .arg(&rows)
        .arg("-o")
        .arg(&out)
        .assert()
        .success()
        .stderr(predicate::str::contains("schema-only"));
    augbench()
        .args(["cells", "show"])
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains("(0 rows)"));
}

fn assert_usage(cmd: &mut Command, needles: &[&str]) {
    let out = cmd.assert().code(2).get_output().stderr.clone();
    let text = String::from_utf8_lossy(&out);
    for n in needles {
        assert!(text.contains(n), "'{n}' not in: {text}");
    }
    assert!(text.contains("hint:"), "{text}");
}

#[test]
fn bad_input_exits_2_with_file_line_and_hint() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("rows.jsonl");
    std::fs::write(&bad, "{\"scene\": \"a\", \"phase\": \"clu\"}\n{oops\n").unwrap();
    let group = |input: &Path, card: &str| {
        let mut c = augbench();
        c.args([
            "cells",
            "group",
            "--model",
            "m",
            "--task",
            "t",
            "--system-card",
            card,
        ])
        .arg(input)
        .arg("-o")
        .arg(dir.path().join("o.parquet"));
        c
    };
    assert_usage(&mut group(&bad, "none"), &["rows.jsonl", "line 2"]);
    assert_usage(
        &mut group(Path::new("missing.jsonl"), "none"),
        &["missing.jsonl", "no such file"],
    );
    let card = dir.path().join("card.json");
    std::fs::write(&card, "[1]").unwrap();
    assert_usage(
        &mut group(&golden("rows.jsonl"), card.to_str().unwrap()),
        &["card.json", "JSON object"],
    );
    let junk = dir.path().join("junk.parquet");
    std::fs::write(&junk, "PAR1 nope").unwrap();
    assert_usage(
        augbench().args(["cells", "show"]).arg(&junk),
        &["junk.parquet", "Parquet"],
    );
    assert_usage(
        augbench()
            .args(["cells", "show", "--filter", "nofilter"])
            .arg(golden("rows.jsonl")),
        &["key=value"],
    );
}
