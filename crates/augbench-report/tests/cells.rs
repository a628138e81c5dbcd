//! Benchmark cell logs as report input: Parquet and JSON Lines, newest row per transform when a
//! log holds several runs, pipeline sweep points kept apart.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

use crate::common;

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

#[test]
fn a_batched_regime_stays_apart_from_per_item_numbers_in_files_and_cells() {
    use augbench_cells::from_results::cells_from_results;
    use augbench_core::Mode;
    use augbench_report::sample::{result_file, runs};
    let per_item = result_file(
        "image-rgb",
        Mode::Micro,
        "kornia",
        "0.9.0",
        &[("Resize", runs(300.0))],
    );
    let mut batched = result_file(
        "image-rgb",
        Mode::Micro,
        "kornia",
        "0.9.0",
        &[("Resize", runs(900.0))],
    );
    batched.metadata.benchmark_params.micro_batch = Some(32);
    let cells: Vec<BenchCell> = [&per_item, &batched]
        .iter()
        .flat_map(|f| cells_from_results(f, "run-1", "unknown"))
        .collect();
    let labels: Vec<&str> = cells.iter().map(|c| c.library.as_str()).collect();
    assert_eq!(labels, ["kornia", "kornia (batch 32)"]);
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("cells.parquet");
    append_bench_cells(&log, &cells).unwrap();
    let data = load_paths(&[log]).unwrap();
    let medians: Vec<Option<f64>> = data.rows.iter().map(|r| r.median).collect();
    assert_eq!(medians.len(), 2, "neither replaces the other: {medians:?}");
    // Result files: two files, two groups.
    let out = tempfile::tempdir().unwrap();
    for f in [&per_item, &batched] {
        augbench_report::sample::write(out.path(), f).unwrap();
    }
    let data = load_paths(&[out.path().to_path_buf()]).unwrap();
    let mut variants: Vec<String> = data.rows.iter().map(|r| r.variant.clone()).collect();
    variants.sort();
    assert_eq!(variants, ["", "batch 32"]);
}

/// Two libraries' micro results for HorizontalFlip: AlbumentationsX returned a view that forcing
/// spent 95% of the time on, Pillow a complete image.
fn flip_results() -> Vec<augbench_core::results::ResultFile> {
    use augbench_core::Mode;
    use augbench_report::sample::{result_file, runs};
    let form = [("albumentationsx", false, 0.95), ("pillow", true, 0.3)];
    form.iter()
        .map(|(library, contiguous, share)| {
            let mut f = result_file(
                "image-rgb",
                Mode::Micro,
                library,
                "1.0",
                &[("HorizontalFlip", runs(1000.0))],
            );
            for r in f.results.values_mut() {
                r.output_contiguous = Some(*contiguous);
                r.force_share = Some(*share);
            }
            f
        })
        .collect()
}

#[test]
fn the_output_form_flows_from_results_through_cells_into_every_report_format() {
    use augbench_cells::from_results::cells_from_results;
    use augbench_report::export::{Format, render};
    let cells: Vec<BenchCell> = flip_results()
        .iter()
        .flat_map(|f| cells_from_results(f, "run-1", "unknown"))
        .collect();
    let forms: Vec<_> = cells.iter().map(|c| c.form).collect();
    assert_eq!(
        forms[0],
        augbench_cells::OutputForm {
            contiguous: Some(false),
            force_share: Some(0.95)
        }
    );
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("cells.parquet");
    append_bench_cells(&log, &cells).unwrap();
    let data = load_paths(&[log]).unwrap();
    let rows: Vec<_> = data
        .rows
        .iter()
        .map(|r| (r.library.as_str(), r.output_contiguous, r.force_share))
        .collect();
    assert_eq!(
        rows,
        [
            ("albumentationsx", Some(false), Some(0.95)),
            ("pillow", Some(true), Some(0.3))
        ]
    );
    let tables = build_tables(&data, &TableOptions::default()).unwrap();
    let md = render(&tables, Format::Markdown).unwrap();
    assert!(md.contains("1000 ± 8†"), "the view's cell is marked:\n{md}");
    assert_eq!(md.matches('†').count(), 2, "one cell and the note:\n{md}");
    assert!(md.contains("HorizontalFlip (albumentationsx 95%)"), "{md}");
    let csv = render(&tables, Format::Csv).unwrap();
    assert!(
        csv.lines()
            .next()
            .unwrap()
            .ends_with(",output_contiguous,force_share,figure_is")
    );
    assert!(
        csv.contains(",false,0.95,") && csv.contains(",true,0.3,"),
        "{csv}"
    );
    let html = augbench_report::html::render(&data, &TableOptions::default()).unwrap();
    assert!(
        html.contains("forcing it took 95% of apply + force"),
        "tooltip"
    );
    assert!(
        html.contains("<span class=\"forced\">†</span>"),
        "legend line"
    );
}

#[test]
fn result_files_carry_the_output_form_and_rows_without_it_are_unmarked() {
    let out = tempfile::tempdir().unwrap();
    let mut files = flip_results();
    files[0].results.values_mut().for_each(|r| {
        r.output_contiguous = None;
        r.force_share = None;
    });
    for f in &files {
        augbench_report::sample::write(out.path(), f).unwrap();
    }
    let data = load_paths(&[out.path().to_path_buf()]).unwrap();
    let pillow = data.rows.iter().find(|r| r.library == "pillow").unwrap();
    assert_eq!(
        (pillow.output_contiguous, pillow.force_share),
        (Some(true), Some(0.3))
    );
    let tables = build_tables(&data, &TableOptions::default()).unwrap();
    let md = augbench_report::export::render(&tables, augbench_report::export::Format::Markdown)
        .unwrap();
    assert!(!md.contains('†'), "no view, no marker:\n{md}");
}

#[test]
fn video_cells_give_frames_from_their_own_clip_length() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("cells.parquet");
    let video = |library: &str, clip_length: Option<u64>| {
        let mut c = cell(library, "HorizontalFlip", 10.0, "r1", "t");
        c.scenario = "video-16f".into();
        c.media = "video".into();
        c.clip_length = clip_length;
        c
    };
    // An 8-frame run of the 16-frame scenario (`--clip-length 8`), and a row of an older log.
    append_bench_cells(
        &log,
        &[video("kornia", Some(8)), video("torchvision", None)],
    )
    .unwrap();
    let data = load_paths(&[log]).unwrap();
    let frames = |library: &str| {
        let row = data.rows.iter().find(|r| r.library == library).unwrap();
        row.frames_per_sec()
    };
    assert_eq!(frames("kornia"), Some(80.0));
    assert_eq!(frames("torchvision"), None, "no clip length: no frames/s");
}

#[test]
fn a_video_result_file_gives_its_cells_the_clip_length_it_ran_with() {
    use augbench_cells::from_results::cells_from_results;
    use augbench_core::Mode;
    use augbench_core::results::ClipsInfo;
    use augbench_report::sample::{result_file, runs};
    let mut f = result_file(
        "video-16f",
        Mode::Micro,
        "kornia",
        "0.9.0",
        &[("Resize", runs(20.0))],
    );
    f.metadata.dataset.clips = Some(ClipsInfo {
        clip_length: 8,
        sampling_rule: "linspace-floor-repeat-last/v1".into(),
        decoder: "opencv".into(),
        cache: "clips".into(),
    });
    let cells = cells_from_results(&f, "run-1", "unknown");
    assert_eq!(cells[0].clip_length, Some(8));
    let image = result_file(
        "image-rgb",
        Mode::Micro,
        "kornia",
        "0.9.0",
        &[("Resize", runs(20.0))],
    );
    let cells = cells_from_results(&image, "run-1", "unknown");
    assert_eq!(cells[0].clip_length, None);
}
