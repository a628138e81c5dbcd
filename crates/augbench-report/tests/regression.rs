//! Regression and A/B verdicts: a synthetic 20% slowdown is flagged, an unchanged rerun passes,
//! what the data cannot tell (too few runs, a wide interval, a change across the minimum effect)
//! is "undecided", rows measured on one side only are "not comparable", rows measured on neither
//! collapse into one line, and intervals come from the runs when a file has none.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

use crate::common;

use augbench_core::Mode;
use augbench_report::export::Format;
use augbench_report::judge::regression::{self, Verdict};
use augbench_report::judge::verdict::Verdicts;
use augbench_report::sample::{self, Outcome, runs};
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
    insta::assert_snapshot!(
        augbench_report::export::render_regression(&report, Format::Markdown).unwrap()
    );
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
        augbench_report::export::render_regression(&report, Format::Markdown).unwrap()
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
fn a_change_needs_an_interval_past_the_band_that_excludes_one() {
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
        [Verdict::Faster, Verdict::Faster],
        "4% faster with an interval (+2% to +6%) that excludes 1 and reaches past the 5% band: \
         a 5% change cannot be ruled out; 30% is faster"
    );
    // The same data at a 50% minimum effect: the interval lies inside the band.
    let wide = regression::compare(&base, &cur, 0.5).unwrap();
    assert_eq!(wide.rows[0].verdict, Verdict::Same, "inside a 50% band");
}

/// Two files of one kornia row each: `base` and `cur` runs of transform `A`.
fn one_row_each(base: Vec<f64>, cur: Vec<f64>) -> regression::RegressionReport {
    let file = |tps: Vec<f64>| {
        sample::result_file(
            "image-rgb",
            Mode::Micro,
            "kornia",
            "1",
            &[("A", Outcome::Ok(tps))],
        )
    };
    let (_b, base) = load(&[file(base)]);
    let (_c, cur) = load(&[file(cur)]);
    regression::compare(&base, &cur, 0.05).unwrap()
}

#[test]
fn too_few_runs_are_undecided_not_same() {
    for runs in [1, 2] {
        let report = one_row_each(vec![1000.0; runs], vec![1000.0; runs]);
        let row = &report.rows[0];
        assert_eq!(row.verdict, Verdict::Undecided, "{runs} run(s)");
        assert_eq!(
            row.note.as_deref(),
            Some(
                format!("too few runs for an interval (baseline {runs}, current {runs}; 3 needed)")
                    .as_str()
            )
        );
        assert!(report.has_undecided() && !report.has_regression());
    }
}

#[test]
fn a_drop_the_data_cannot_tell_from_noise_is_undecided() {
    let noisy = vec![300.0, 1000.0, 2000.0, 600.0, 1500.0];
    let slower: Vec<f64> = noisy.iter().map(|x| x * 0.8).collect();
    let report = one_row_each(noisy, slower);
    let row = &report.rows[0];
    assert_eq!(row.verdict, Verdict::Undecided);
    let note = row.note.as_deref().unwrap();
    assert!(note.starts_with("could not see a change under"), "{note}");
    let (lo, hi) = row.ratio_interval.unwrap();
    assert!(lo < 1.0 && hi > 1.0, "{lo} {hi}");
}

#[test]
fn rows_measured_in_neither_run_collapse_into_one_line() {
    let (_b, base) = load(&sample::demo());
    let (_c, cur) = load(&sample::demo());
    let report = regression::compare(&base, &cur, 0.05).unwrap();
    assert!(
        report
            .rows
            .iter()
            .all(|r| r.verdict != Verdict::NotComparable)
    );
    assert_eq!(report.count(Verdict::NotComparable), 5);
    let md = augbench_report::export::render_regression(&report, Format::Markdown).unwrap();
    assert!(
        md.contains(
            "\nnot comparable: 5 rows measured in neither run (1 error, 2 slow, 2 unsupported)\n"
        ),
        "{md}"
    );
    assert!(!md.contains("| ElasticTransform |"), "{md}");
    let json: serde_json::Value = serde_json::from_str(
        &augbench_report::export::render_regression(&report, Format::Json).unwrap(),
    )
    .unwrap();
    assert_eq!(json["not_measured"]["count"], 5);
    assert_eq!(json["not_measured"]["by_state"]["unsupported"], 2);
    let csv = augbench_report::export::render_regression(&report, Format::Csv).unwrap();
    assert!(
        csv.ends_with(
            ",,not comparable,\"5 rows measured in neither run (1 error, 2 slow, 2 unsupported)\"\n"
        ),
        "{csv}"
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
    insta::assert_snapshot!(
        augbench_report::export::render_regression(&report, Format::Csv).unwrap()
    );
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
    for m in [1.5, 1.0, 0.0, -0.05] {
        let err = regression::compare(&data, &data, m).unwrap_err();
        let msg = common::usage_message(&err).unwrap();
        assert!(msg.contains("out of range"), "{msg}");
        assert!(
            msg.contains("--min-effect 0.05"),
            "a value that works: {msg}"
        );
    }
}

// ---- A/B verdicts of one run (`ab::compare`) ----------------------------------------------------

#[test]
fn ab_demo_gives_each_verdict_once() {
    let dir = common::ab_dir();
    let data = load_paths(&[dir.path().to_path_buf()]).unwrap();
    let report =
        augbench_report::judge::ab::compare(&data, augbench_core::policy::REGRESSION_MIN_EFFECT)
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
        augbench_report::export::render_ab(&report, Format::Markdown).unwrap()
    );
}

/// An A/B folder of two Pillow variants over `entries` of each, interleaved.
fn ab_of(
    base: &[(&str, Outcome)],
    cur: &[(&str, Outcome)],
) -> augbench_report::judge::ab::AbReport {
    let (a, b) = ("pillow@a", "pillow@b");
    let file = |label: &str, entries: &[(&str, Outcome)]| {
        let f = sample::result_file("image-rgb", Mode::Micro, "pillow", "1", entries);
        sample::as_variant(f, label, "pillow==1", a)
    };
    let mut files = vec![file(a, base), file(b, cur)];
    // Rows of five runs as two worker processes (2 + 3 rounds): two process pairs, the fewest
    // an A/B interval is built over; shorter rows stay one process.
    for tr in files.iter_mut().flat_map(|f| f.results.values_mut()) {
        if tr.throughputs.len() == 5 {
            tr.process_runs = vec![2, 3];
        }
    }
    sample::interleave(&mut files);
    let (_dir, data) = load(&files);
    augbench_report::judge::ab::compare(&data, 0.05)
        .unwrap()
        .unwrap()
}

#[test]
fn ab_rows_of_one_process_pair_are_undecided() {
    let report = ab_of(
        &[("A", Outcome::Ok(vec![1000.0, 1010.0]))],
        &[("A", Outcome::Ok(vec![700.0, 707.0]))],
    );
    let row = &report.rows[0];
    assert_eq!(row.verdict, Verdict::Undecided);
    assert_eq!(
        row.verdict_text(),
        "undecided (too few worker-process pairs for an interval (1; 2 needed): process pairs are the verdict's unit (docs/ab.md))"
    );
}

#[test]
fn ab_transforms_measured_by_neither_variant_collapse_into_one_line() {
    let u = || Outcome::Unsupported("no such thing".into());
    let report = ab_of(
        &[("A", runs(1000.0)), ("U", u()), ("V", u())],
        &[("A", runs(1000.0)), ("U", u()), ("V", u())],
    );
    let transforms: Vec<&str> = report.rows.iter().map(|r| r.transform.as_str()).collect();
    assert_eq!(transforms, ["A"]);
    assert_eq!(report.rows[0].verdict, Verdict::Same);
    assert_eq!(
        report.not_measured_line().as_deref(),
        Some("not comparable: 2 rows unsupported in both variants")
    );
    let md = augbench_report::export::render_ab(&report, Format::Markdown).unwrap();
    assert!(
        md.contains("\nnot comparable: 2 rows unsupported in both variants\n"),
        "{md}"
    );
    assert!(md.contains(", 2 not comparable ("), "{md}");
}
