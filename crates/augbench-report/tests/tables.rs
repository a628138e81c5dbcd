//! Comparison tables from result files: snapshots of every export format, the reference-format
//! reader, and the bad inputs (mixed scenarios, one library, NaN/zero, unknown version, unknown
//! reference library, empty folder, duplicates).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

use crate::common;

use augbench_core::Mode;
use augbench_core::results::Status;
use augbench_report::export::{self, Format};
use augbench_report::sample::{self, Outcome, runs};
use augbench_report::table::{Cell, build_tables};
use augbench_report::{Sort, TableOptions, load_paths};

fn tables_of(dir: &std::path::Path, opts: &TableOptions) -> Vec<augbench_report::Table> {
    build_tables(&load_paths(&[dir.to_path_buf()]).unwrap(), opts).unwrap()
}

#[test]
fn markdown_snapshot() {
    let dir = common::demo_dir();
    let tables = tables_of(dir.path(), &TableOptions::default());
    insta::assert_snapshot!(export::render(&tables, Format::Markdown).unwrap());
}

#[test]
fn markdown_sorted_by_speedup_snapshot() {
    let dir = common::demo_dir();
    let opts = TableOptions {
        sort: Sort::Speedup,
        reference: Some("torchvision".into()),
    };
    let tables = tables_of(dir.path(), &opts);
    insta::assert_snapshot!(export::markdown::render_table(&tables[0]));
}

#[test]
fn csv_snapshot() {
    let dir = common::demo_dir();
    let tables = tables_of(dir.path(), &TableOptions::default());
    insta::assert_snapshot!(export::render(&tables, Format::Csv).unwrap());
}

#[test]
fn json_snapshot() {
    let dir = common::demo_dir();
    let tables = tables_of(dir.path(), &TableOptions::default());
    let mut value: serde_json::Value =
        serde_json::from_str(&export::render(&tables, Format::Json).unwrap()).unwrap();
    round(&mut value);
    insta::assert_json_snapshot!(value);
}

/// Rounds every float to 9 significant digits, so last-bit changes in statistics don't churn
/// the snapshot.
fn round(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Number(n) if n.is_f64() => {
            let x = n.as_f64().unwrap();
            *v = serde_json::json!(format!("{x:.9e}").parse::<f64>().unwrap());
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(round),
        serde_json::Value::Object(o) => o.values_mut().for_each(round),
        _ => {}
    }
}

#[test]
fn mixed_scenarios_are_grouped_never_mixed() {
    let dir = common::demo_dir();
    let tables = tables_of(dir.path(), &TableOptions::default());
    let titles: Vec<&str> = tables.iter().map(|t| t.title.as_str()).collect();
    assert_eq!(
        titles,
        ["image-rgb · micro · cpu", "video-16f · micro · cpu"]
    );
    assert_eq!(tables[0].unit, "img/s");
    assert_eq!(tables[1].unit, "clips/s");
    assert_eq!(
        tables[1].columns.len(),
        1,
        "video table holds only the video library"
    );
    assert_eq!(
        (tables[0].frames_unit, tables[1].frames_unit),
        (None, Some("frames/s"))
    );
    assert!(tables[0].rows.iter().all(|r| r.frames_per_sec.is_empty()));
}

#[test]
fn video_cells_show_frames_per_second_from_the_clip_length() {
    let dir = common::demo_dir();
    let video = &tables_of(dir.path(), &TableOptions::default())[1];
    let clip = augbench_core::policy::DEFAULT_CLIP_LENGTH as f64;
    for row in &video.rows {
        let clips = row.cells[0].figure();
        let frames = row.frames_per_sec[0];
        assert_eq!(frames, clips.map(|c| c * clip), "{}", row.transform);
    }
    assert!(video.rows.iter().any(|r| r.frames_per_sec[0].is_some()));
}

#[test]
fn footer_speedup_uses_only_rows_both_measured() {
    let dir = common::demo_dir();
    let t = &tables_of(dir.path(), &TableOptions::default())[0];
    let pillow = t.footer.iter().find(|f| f.library == "pillow").unwrap();
    // Pillow measured Resize, HorizontalFlip, GaussianBlur: ratios 1.6, 0.75, 2.125 → median 1.6.
    assert_eq!((pillow.measured, pillow.common), (3, 3));
    assert!((pillow.median_speedup.unwrap() - 1.6).abs() < 1e-9);
}

#[test]
fn one_library_only_says_na() {
    let dir = tempfile::tempdir().unwrap();
    let f = sample::result_file(
        "image-rgb",
        Mode::Micro,
        "kornia",
        "0.9.0",
        &[("Resize", runs(100.0))],
    );
    common::write_all(dir.path(), &[f]);
    let t = &tables_of(dir.path(), &TableOptions::default())[0];
    assert_eq!(t.reference, "kornia", "falls back to the only library");
    assert_eq!(t.rows[0].speedup, None);
    assert!(export::markdown::render_table(t).contains("| Resize | 100 ± 1 | n/a |"));
}

#[test]
fn nan_and_zero_throughputs_become_errors_with_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let mut f = sample::result_file(
        "image-rgb",
        Mode::Micro,
        "kornia",
        "0.9.0",
        &[
            ("Zero", runs(100.0)),
            ("NotANumber", runs(100.0)),
            ("Fine", runs(100.0)),
        ],
    );
    f.results.get_mut("Zero").unwrap().median_throughput = Some(0.0);
    let nan = f.results.get_mut("NotANumber").unwrap();
    nan.median_throughput = Some(f64::NAN); // serialized as null
    nan.throughputs.clear();
    f.results.get_mut("Fine").unwrap().throughputs.push(0.0);
    common::write_all(dir.path(), &[f]);
    let data = load_paths(&[dir.path().to_path_buf()]).unwrap();
    assert_eq!(data.warnings.len(), 3, "{:#?}", data.warnings);
    let status = |t: &str| data.rows.iter().find(|r| r.transform == t).unwrap().status;
    assert_eq!(status("Zero"), Status::Error);
    assert_eq!(status("NotANumber"), Status::Error);
    assert_eq!(status("Fine"), Status::Ok);
    let fine = data.rows.iter().find(|r| r.transform == "Fine").unwrap();
    assert!(fine.throughputs.iter().all(|t| *t > 0.0));
}

#[test]
fn unknown_format_version_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut f = sample::result_file(
        "image-rgb",
        Mode::Micro,
        "kornia",
        "0.9.0",
        &[("Resize", runs(100.0))],
    );
    f.metadata.format_version = 99;
    let path = sample::write(dir.path(), &f).unwrap();
    let err = load_paths(&[path]).unwrap_err();
    let msg = common::usage_message(&err).expect("usage error");
    assert!(msg.contains("result format version 99 is newer"), "{msg}");
    assert!(msg.contains("kornia_micro_results.json"), "{msg}");
}

#[test]
fn drifted_schema_names_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let f = sample::result_file(
        "image-rgb",
        Mode::Micro,
        "kornia",
        "0.9.0",
        &[("Resize", runs(100.0))],
    );
    let path = sample::write(dir.path(), &f).unwrap();
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replacen("\"num_runs\"", "\"num_runz\"", 1);
    std::fs::write(&path, text).unwrap();
    let msg = common::usage_message(&load_paths(&[path]).unwrap_err()).unwrap();
    assert!(msg.contains("num_runz") && msg.contains("line"), "{msg}");
}

#[test]
fn missing_reference_library_lists_the_present_ones() {
    let dir = common::demo_dir();
    let data = load_paths(&[dir.path().to_path_buf()]).unwrap();
    let opts = TableOptions {
        reference: Some("dali".into()),
        ..TableOptions::default()
    };
    let msg = common::usage_message(&build_tables(&data, &opts).unwrap_err()).unwrap();
    assert!(
        msg.contains("`dali` is not in the results; present: albumentationsx, pillow, torchvision"),
        "{msg}"
    );
}

#[test]
fn empty_folder_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let msg = common::usage_message(&load_paths(&[dir.path().to_path_buf()]).unwrap_err()).unwrap();
    assert!(msg.contains("no *_results.json files"), "{msg}");
}

#[test]
fn the_same_run_twice_is_a_usage_error() {
    let dir = common::demo_dir();
    let file = dir.path().join("image-rgb/micro/pillow_micro_results.json");
    let msg =
        common::usage_message(&load_paths(&[dir.path().to_path_buf(), file]).unwrap_err()).unwrap();
    assert!(msg.contains("appears twice"), "{msg}");
}

#[test]
fn reference_format_is_read_leniently() {
    let data = load_paths(&[common::fixture("reference")]).unwrap();
    let row = |t: &str| data.rows.iter().find(|r| r.transform == t).unwrap();
    let resize = row("Resize");
    assert_eq!(
        (resize.scenario.as_str(), resize.mode.as_str()),
        ("image-rgb", "micro"),
        "from the path"
    );
    assert_eq!(
        (resize.library.as_str(), resize.library_version.as_str()),
        ("kornia", "0.8.1")
    );
    assert_eq!(resize.median, Some(612.3));
    assert_eq!(
        row("ElasticTransform").status,
        Status::Slow,
        "early-stopped preflight"
    );
    assert_eq!(row("Posterize").status, Status::Unsupported);
    assert_eq!(row("ColorJitter").status, Status::Error, "NaN median");
    let blur = row("GaussianBlur");
    assert_eq!(
        (blur.status, blur.median),
        (Status::Ok, Some(245.0)),
        "median of the finite runs"
    );
    assert_eq!(data.warnings.len(), 2, "{:#?}", data.warnings);
}

#[test]
fn reference_format_next_to_ours_snapshot() {
    let dir = common::demo_dir();
    let data = load_paths(&[dir.path().to_path_buf(), common::fixture("reference")]).unwrap();
    let tables = build_tables(&data, &TableOptions::default()).unwrap();
    insta::assert_snapshot!(export::markdown::render_table(&tables[0]));
}

#[test]
fn slow_cells_use_the_runs_own_threshold() {
    let dir = tempfile::tempdir().unwrap();
    let mut f = sample::result_file(
        "image-rgb",
        Mode::Micro,
        "kornia",
        "0.9.0",
        &[("Blur", Outcome::Slow(3.0))],
    );
    f.metadata.benchmark_params.slow_threshold_sec_per_item = 0.1;
    f.results
        .get_mut("Blur")
        .unwrap()
        .slow_threshold_sec_per_item = Some(0.1);
    common::write_all(dir.path(), &[f]);
    let t = &tables_of(dir.path(), &TableOptions::default())[0];
    assert!(matches!(t.rows[0].cells[0], Cell::Slow { preflight: Some(p) } if p == 3.0));
    assert_eq!(t.slow_label(), "≤10 img/s");
}

/// Rust crates and Pillow, no AlbumentationsX: `fast_image_resize` measures one row, Pillow three,
/// and `CLAHE` no library supports.
fn without_albumentationsx() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let no = || Outcome::Unsupported("no".into());
    let file = |lib: &str, entries: &[(&str, Outcome)]| {
        sample::result_file("image-rgb", Mode::Micro, lib, "1", entries)
    };
    let files = [
        file(
            "fast_image_resize",
            &[
                ("CLAHE", no()),
                ("Resize", runs(1600.0)),
                ("Rotate", no()),
                ("HorizontalFlip", no()),
            ],
        ),
        file(
            "pillow",
            &[
                ("CLAHE", no()),
                ("Resize", runs(480.0)),
                ("Rotate", runs(1000.0)),
                ("HorizontalFlip", runs(2600.0)),
            ],
        ),
    ];
    common::write_all(dir.path(), &files);
    dir
}

#[test]
fn without_albumentationsx_the_library_measured_most_is_the_reference_and_empty_rows_collapse() {
    let dir = without_albumentationsx();
    let tables = tables_of(dir.path(), &TableOptions::default());
    let t = &tables[0];
    assert_eq!(
        t.reference, "pillow",
        "not the first name (fast_image_resize)"
    );
    assert_eq!(t.reference_why, augbench_report::reference::Why::MostRows);
    assert_eq!(t.unmeasured, ["CLAHE"]);
    assert!(t.rows.iter().all(|r| r.transform != "CLAHE"));
    insta::assert_snapshot!(augbench_report::export::markdown::render_table(t));
}

/// Pipeline rows that recorded their time to first batch get a table of it under their group
/// (markdown, and the page); a library without one reads `–` there.
#[test]
fn pipeline_groups_show_each_cells_time_to_first_batch() {
    use augbench_core::results::PipelineDetail;
    let dir = tempfile::tempdir().unwrap();
    for (lib, first) in [("pillow", Some(0.42)), ("torchvision", None)] {
        let mut f = sample::result_file(
            "image-rgb",
            Mode::Pipeline,
            lib,
            "1.0",
            &[("Resize", runs(100.0)), ("HorizontalFlip", runs(200.0))],
        );
        if let Some(s) = first {
            let r = f.results.get_mut("Resize").unwrap();
            r.pipeline = Some(PipelineDetail {
                time_to_first_batch: s,
                ..PipelineDetail::default()
            });
        }
        sample::write(dir.path(), &f).unwrap();
    }
    let tables = tables_of(dir.path(), &TableOptions::default());
    let md = export::render(&tables, Format::Markdown).unwrap();
    assert!(
        md.contains(augbench_report::table::FIRST_BATCH_TITLE),
        "{md}"
    );
    assert!(md.contains("| Resize | 0.42 | – |"), "{md}");
    assert!(
        !md.contains("| HorizontalFlip | –"),
        "a row without any is left out: {md}"
    );
    let page = augbench_report::html::render(
        &load_paths(&[dir.path().to_path_buf()]).unwrap(),
        &TableOptions::default(),
    )
    .unwrap();
    assert!(
        page.contains("<td>Resize</td><td>0.42</td><td>–</td>"),
        "page"
    );
}
