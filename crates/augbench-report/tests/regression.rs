//! Regression verdicts: a synthetic 20% slowdown is flagged, an unchanged rerun passes, rows
//! measured on one side only are "not comparable", and intervals come from the runs when a file
//! has none.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

use crate::common;

use augbench_core::Mode;
use augbench_report::export::Format;
use augbench_report::regression::{self, Verdict};
use augbench_report::sample::{self, runs};
use augbench_report::{Dataset, load_paths};

fn load(files: &[augbench_core::results::ResultFile]) -> (tempfile::TempDir, Dataset) {
    let dir = tempfile::tempdir().unwrap();
    common::write_all(dir.path(), files);
    let data = load_paths(&[dir.path().to_path_buf()]).unwrap();
    (dir, data)
}

#[test]
fn twenty_percent_slowdown_is_flagged() {
    let baseline = sample::demo();
    let current: Vec<_> = baseline
        .iter()
        .map(|f| {
            if f.metadata.library == "torchvision" {
                sample::scaled(f, 0.8)
            } else {
                f.clone()
            }
        })
        .collect();
    let (_b, base) = load(&baseline);
    let (_c, cur) = load(&current);
    let report =
        regression::compare(&base, &cur, augbench_core::policy::REGRESSION_MIN_EFFECT).unwrap();
    let flagged: Vec<(&str, &str)> = report
        .rows
        .iter()
        .filter(|r| r.verdict == Verdict::Regression)
        .map(|r| (r.library.as_str(), r.transform.as_str()))
        .collect();
    assert_eq!(flagged.len(), 5, "{flagged:?}");
    assert!(flagged.iter().all(|(lib, _)| *lib == "torchvision"));
    assert!(
        report
            .rows
            .iter()
            .filter(|r| r.library == "torchvision" && r.delta_pct.is_some())
            .all(|r| (r.delta_pct.unwrap() + 20.0).abs() < 1e-6)
    );
    assert!(report.has_regression());
    insta::assert_snapshot!(regression::render(&report, Format::Markdown).unwrap());
}

#[test]
fn unchanged_rerun_passes() {
    let baseline = sample::demo();
    // A rerun with 1% noise in the other direction: within the minimum effect.
    let current: Vec<_> = baseline.iter().map(|f| sample::scaled(f, 1.01)).collect();
    let (_b, base) = load(&baseline);
    let (_c, cur) = load(&current);
    let report =
        regression::compare(&base, &cur, augbench_core::policy::REGRESSION_MIN_EFFECT).unwrap();
    assert!(
        !report.has_regression(),
        "{}",
        regression::render(&report, Format::Markdown).unwrap()
    );
    assert_eq!(report.count(Verdict::Faster), 0);
    assert_eq!(report.count(Verdict::Same), 15);
    assert_eq!(
        report.count(Verdict::NotComparable),
        5,
        "slow, unsupported and error rows"
    );
}

#[test]
fn faster_needs_the_minimum_effect() {
    let (_b, base) = load(&[sample::result_file(
        "image-rgb",
        Mode::Micro,
        "kornia",
        "1",
        &[("A", runs(1000.0)), ("B", runs(1000.0))],
    )]);
    let (_c, cur) = load(&[sample::result_file(
        "image-rgb",
        Mode::Micro,
        "kornia",
        "1",
        &[("A", runs(1040.0)), ("B", runs(1300.0))],
    )]);
    let report = regression::compare(&base, &cur, 0.05).unwrap();
    let verdicts: Vec<Verdict> = report.rows.iter().map(|r| r.verdict).collect();
    assert_eq!(
        verdicts,
        [Verdict::Same, Verdict::Faster],
        "4% is below the 5% effect; 30% is not"
    );
}

#[test]
fn one_sided_rows_are_not_comparable() {
    let (_b, base) = load(&[sample::result_file(
        "image-rgb",
        Mode::Micro,
        "kornia",
        "1",
        &[("A", runs(1000.0)), ("Gone", runs(5.0))],
    )]);
    let (_c, cur) = load(&[sample::result_file(
        "image-rgb",
        Mode::Micro,
        "kornia",
        "1",
        &[("A", runs(1000.0)), ("New", runs(5.0))],
    )]);
    let report = regression::compare(&base, &cur, 0.05).unwrap();
    let notes: Vec<String> = report.rows.iter().filter_map(|r| r.note.clone()).collect();
    assert_eq!(
        notes,
        [
            "baseline: measured; current: missing",
            "baseline: missing; current: measured"
        ]
    );
    insta::assert_snapshot!(regression::render(&report, Format::Csv).unwrap());
}

#[test]
fn reference_format_intervals_are_bootstrapped_from_runs() {
    let data = load_paths(&[common::fixture("reference")]).unwrap();
    let resize = data.rows.iter().find(|r| r.transform == "Resize").unwrap();
    assert_eq!((resize.ci_low, resize.ci_high), (None, None));
    let (lo, hi) = regression::interval(resize, resize.median.unwrap());
    // A rerun interval lies within the median ± the runs' range, widened by the small-sample
    // factor √(n/(n−1)) ≤ √2 (a difference of two resample medians cannot exceed the range).
    let range = (620.9 - 600.2) * 2f64.sqrt();
    assert!(
        lo < 612.3 && hi > 612.3 && lo >= 612.3 - range && hi <= 612.3 + range,
        "{lo} {hi}"
    );
    assert_eq!(
        (lo, hi),
        regression::interval(resize, resize.median.unwrap()),
        "seeded"
    );
}

#[test]
fn min_effect_out_of_range_is_a_usage_error() {
    let data = Dataset::default();
    let err = regression::compare(&data, &data, 1.5).unwrap_err();
    assert!(
        common::usage_message(&err)
            .unwrap()
            .contains("out of range")
    );
}

// ---- A/B verdicts of one run (`ab::compare`) ----------------------------------------------------

#[test]
fn ab_demo_gives_each_verdict_once() {
    let dir = common::ab_dir();
    let data = load_paths(&[dir.path().to_path_buf()]).unwrap();
    let report = augbench_report::ab::compare(&data, augbench_core::policy::REGRESSION_MIN_EFFECT)
        .unwrap()
        .unwrap();
    let verdicts: Vec<(&str, Verdict)> = report
        .rows
        .iter()
        .map(|r| (r.transform.as_str(), r.verdict))
        .collect();
    assert_eq!(
        verdicts,
        [
            ("Grayscale", Verdict::Same),
            ("HorizontalFlip", Verdict::Faster),
            ("Resize", Verdict::Regression),
            ("Rotate", Verdict::NotComparable),
        ]
    );
    insta::assert_snapshot!(
        "ab_demo_markdown",
        augbench_report::ab::render(&report, Format::Markdown).unwrap()
    );
}
