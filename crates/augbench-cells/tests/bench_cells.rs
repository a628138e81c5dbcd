//! Benchmark cells on synthetic results: appending creates `cells.parquet`, a `--resume` rerun
//! replaces rows with the same key instead of duplicating them, and the file reads in order.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

use augbench_cells::bench::{BenchCell, BenchMetrics, append_bench_cells, read_bench_cells};
use augbench_cells::schema::{
    BENCH_CARD, BENCH_FIGURE, BENCH_FIXED, BENCH_FORM, BENCH_MEDIA, BENCH_METRICS,
};

fn result(transform: &str, median: f64) -> BenchCell {
    BenchCell {
        run_id: "2026-01-01T00-00-00".into(),
        library: "albumentationsx".into(),
        library_version: "2.5.0".into(),
        transform: transform.into(),
        scenario: "image-rgb".into(),
        mode: "micro".into(),
        media: "image".into(),
        device: "cpu".into(),
        channels: 3,
        items: 2000,
        runs: 5,
        workers: 0,
        batch_size: 1,
        scope: "transform".into(),
        thread_policy: "single".into(),
        status: "ok".into(),
        cpu_name: "Test CPU".into(),
        cpu_cores: 2,
        ram_gb: 24.0,
        gpu_name: String::new(),
        gpu_memory_gb: None,
        os: "Linux".into(),
        rustc_version: "rustc 1.95.0".into(),
        toolkit_version: "0.1.0".into(),
        git_sha: "abc1234".into(),
        timestamp_utc: "2026-01-01T00:00:00+00:00".into(),
        throughputs: vec![median * 0.99, median, median * 1.01],
        metrics: BenchMetrics {
            median: Some(median),
            cv: Some(0.01),
            warmup_passes: Some(3.0),
            ..Default::default()
        },
        card: Default::default(),
        form: Default::default(),
        clip_length: None,
        figure: augbench_cells::CellFigure {
            estimator: "max".into(),
            value: Some(median * 1.05),
            low: Some(median),
            high: Some(median * 1.1),
        },
    }
}

#[test]
fn append_creates_then_extends_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out/cells.parquet");
    let r1 = append_bench_cells(&path, &[result("Resize", 100.0)]).unwrap();
    assert_eq!(
        (r1.rows_before, r1.appended, r1.replaced, r1.rows_after),
        (0, 1, 0, 1)
    );
    let r2 = append_bench_cells(&path, &[result("HorizontalFlip", 900.0)]).unwrap();
    assert_eq!((r2.rows_before, r2.appended, r2.rows_after), (1, 1, 2));
    let back = read_bench_cells(&path).unwrap();
    assert_eq!(
        back,
        vec![result("Resize", 100.0), result("HorizontalFlip", 900.0)]
    );
}

#[test]
fn a_resume_rerun_replaces_instead_of_duplicating() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cells.parquet");
    append_bench_cells(&path, &[result("Resize", 100.0), result("Blur", 50.0)]).unwrap();
    let r = append_bench_cells(&path, &[result("Resize", 120.0)]).unwrap();
    assert_eq!((r.appended, r.replaced, r.rows_after), (0, 1, 2));
    let back = read_bench_cells(&path).unwrap();
    assert_eq!(
        back[0].metrics.median,
        Some(120.0),
        "newer row wins, in place"
    );
    assert_eq!(back[1].transform, "Blur");
}

#[test]
fn the_file_has_the_fixed_columns_a_list_column_and_the_metric_columns() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cells.parquet");
    append_bench_cells(&path, &[result("Resize", 100.0)]).unwrap();
    let table = augbench_cells::read_table(&path).unwrap();
    let names = table.column_names();
    assert_eq!(
        names.len(),
        BENCH_FIXED.len()
            + BENCH_METRICS.len()
            + BENCH_CARD.len()
            + BENCH_FORM.len()
            + BENCH_MEDIA.len()
            + BENCH_FIGURE.len()
    );
    assert_eq!(names[BENCH_FIXED.len()], "metric:median");
    let tp = table.column_index("throughputs").unwrap();
    assert_eq!(
        table.value(0, tp, 0),
        augbench_cells::CellValue::List(vec![99.0, 100.0, 101.0])
    );
    assert_eq!(table.kind(), augbench_cells::schema::LogKind::Bench);
    let gpu = table.column_index("gpu_name").unwrap();
    assert_eq!(
        table.value(0, gpu, 0),
        augbench_cells::CellValue::Null,
        "empty gpu_name is null"
    );
}

/// The headline figure travels through the log; a log written before its columns existed reads
/// as the median, and says so.
#[test]
fn the_figure_round_trips_and_an_older_log_reads_as_its_median() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cells.parquet");
    append_bench_cells(&path, &[result("Resize", 100.0)]).unwrap();
    let back = read_bench_cells(&path).unwrap();
    let h = back[0].headline().unwrap();
    assert_eq!(
        (h.value, h.from_median, h.estimator.as_str()),
        (105.0, false, "max")
    );
    // A row without a figure (null columns, as in a log written before them).
    let old = BenchCell {
        figure: Default::default(),
        ..result("Blur", 100.0)
    };
    append_bench_cells(&path, &[old]).unwrap();
    let back = read_bench_cells(&path).unwrap();
    let h = back[1].headline().unwrap();
    assert_eq!((h.value, h.from_median), (100.0, true));
    assert!(h.label().contains("without a figure"), "{}", h.label());
}

#[test]
fn appending_to_a_log_of_another_schema_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cells.parquet");
    // An evaluation log (its key columns, one cell), written as Parquet.
    let jsonl = dir.path().join("eval.jsonl");
    let row = r#"{"model_name": "m", "task": "t", "scene_id": "s", "phase": "p", "n_samples": 1, "frame_budget": 0}"#;
    std::fs::write(&jsonl, format!("{row}\n")).unwrap();
    let table = augbench_cells::read_table(&jsonl).unwrap();
    augbench_cells::write_table(&table, &path, augbench_cells::Format::Parquet).unwrap();
    let e = append_bench_cells(&path, &[result("Resize", 1.0)]).unwrap_err();
    assert!(e.to_string().contains("'run_id'"), "{e}");
}

#[test]
fn the_machine_card_round_trips_and_a_log_without_it_reads_as_empty() {
    let dir = tempfile::tempdir().unwrap();
    let mut cell = result("Resize", 100.0);
    cell.card = augbench_cells::CellCard {
        cpu_simd: "sse4_2 avx2 avx512f".into(),
        physical_cores: Some(1),
        governor: String::new(),
        kernel: "6.1.0".into(),
        hypervisor: "yes".into(),
        augbench_build: "0.1.0 abc x86_64-unknown-linux-gnu opt-level 3".into(),
        load_per_thread_before: Some(0.25),
        load_per_thread_after: Some(0.75),
        steal_percent_before: Some(0.5),
        steal_percent_after: None,
    };
    let path = dir.path().join("cells.parquet");
    append_bench_cells(&path, std::slice::from_ref(&cell)).unwrap();
    assert_eq!(read_bench_cells(&path).unwrap(), [cell.clone()]);
    // The same row without the card columns (a log written before them).
    let table = augbench_cells::read_table(&path).unwrap();
    let jsonl = dir.path().join("old.jsonl");
    augbench_cells::write_table(&table, &jsonl, augbench_cells::Format::Jsonl).unwrap();
    let text = std::fs::read_to_string(&jsonl).unwrap();
    let mut row: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(text.trim()).unwrap();
    for (name, _) in BENCH_CARD {
        row.remove(*name);
    }
    std::fs::write(&jsonl, serde_json::to_string(&row).unwrap() + "\n").unwrap();
    let back = read_bench_cells(&jsonl).unwrap();
    assert_eq!(back[0].card, augbench_cells::CellCard::default());
    assert_eq!(back[0].metrics, cell.metrics);
}

/// The cell's row as a JSON object (through a JSON Lines copy of the Parquet log).
fn json_row(
    parquet: &std::path::Path,
    jsonl: &std::path::Path,
) -> serde_json::Map<String, serde_json::Value> {
    let table = augbench_cells::read_table(parquet).unwrap();
    augbench_cells::write_table(&table, jsonl, augbench_cells::Format::Jsonl).unwrap();
    serde_json::from_str(std::fs::read_to_string(jsonl).unwrap().trim()).unwrap()
}

#[test]
fn the_output_form_round_trips_and_a_log_without_it_reads_as_unknown() {
    let dir = tempfile::tempdir().unwrap();
    let mut cell = result("HorizontalFlip", 500.0);
    cell.form = augbench_cells::OutputForm {
        contiguous: Some(false),
        force_share: Some(0.95),
    };
    let path = dir.path().join("cells.parquet");
    append_bench_cells(&path, std::slice::from_ref(&cell)).unwrap();
    assert_eq!(read_bench_cells(&path).unwrap(), [cell.clone()]);
    let jsonl = dir.path().join("cells.jsonl");
    let mut row = json_row(&path, &jsonl);
    assert_eq!(row["output_contiguous"], serde_json::json!(0));
    assert_eq!(row["force_share"], serde_json::json!(0.95));
    assert_eq!(read_bench_cells(&jsonl).unwrap(), [cell.clone()]);
    for (name, _) in BENCH_FORM {
        row.remove(*name);
    }
    std::fs::write(&jsonl, serde_json::to_string(&row).unwrap() + "\n").unwrap();
    let back = read_bench_cells(&jsonl).unwrap();
    assert_eq!(back[0].form, augbench_cells::OutputForm::default());
    assert_eq!(back[0].metrics, cell.metrics);
}

#[test]
fn an_output_contiguous_flag_other_than_0_or_1_is_an_error_naming_the_column() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cells.parquet");
    append_bench_cells(&path, &[result("Resize", 100.0)]).unwrap();
    let jsonl = dir.path().join("cells.jsonl");
    let mut row = json_row(&path, &jsonl);
    row.insert("output_contiguous".into(), serde_json::json!(2));
    std::fs::write(&jsonl, serde_json::to_string(&row).unwrap() + "\n").unwrap();
    let e = read_bench_cells(&jsonl).unwrap_err().to_string();
    assert!(
        e.contains("output_contiguous") && e.contains("0 (a view or lazy)"),
        "{e}"
    );
}
