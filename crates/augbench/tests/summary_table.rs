//! The end-of-run summary table `augbench run` prints: one column per library for images; for
//! video, clips/s and a second frames/s column per library (clips/s × the clip length).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

use augbench_core::Mode;
use augbench_report::sample::{Outcome, result_file, runs};
use augbench_report::summary;
use augbench_report::summary::lines::unit;

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[test]
fn video_summary_has_a_frames_column_per_library() {
    let a = result_file(
        "video-16f",
        Mode::Pipeline,
        "albumentationsx",
        "2.5.1",
        &[
            ("HorizontalFlip", runs(12.5)),
            ("Rotate", Outcome::Slow(0.2)),
        ],
    );
    let b = result_file(
        "video-16f",
        Mode::Pipeline,
        "torchvision",
        "0.24.0",
        &[
            ("HorizontalFlip", runs(9.25)),
            ("Rotate", Outcome::Unsupported("no".into())),
        ],
    );
    let order = names(&["HorizontalFlip", "Rotate"]);
    let unit = unit(augbench_core::Media::Video);
    insta::assert_snapshot!(summary::table(
        &[&a, &b],
        &order,
        unit,
        Some(16),
        "albumentationsx"
    ));
}

#[test]
fn image_summary_keeps_one_column_per_library() {
    let a = result_file(
        "image-rgb",
        Mode::Micro,
        "pillow",
        "12.0.0",
        &[("HorizontalFlip", runs(1234.4))],
    );
    let order = names(&["HorizontalFlip"]);
    let unit = unit(augbench_core::Media::Image);
    insta::assert_snapshot!(summary::table(&[&a], &order, unit, None, "pillow"));
}

#[test]
fn the_reference_comes_first_and_rows_no_library_supports_collapse() {
    let lib = |name: &str, flip: f64, rotate: Outcome| {
        result_file(
            "image-rgb",
            Mode::Micro,
            name,
            "1.0",
            &[
                ("CLAHE", Outcome::Unsupported("no CLAHE".into())),
                ("HorizontalFlip", runs(flip)),
                ("Rotate", rotate),
            ],
        )
    };
    let pillow = lib("pillow", 1000.0, runs(500.0));
    let image = lib("image", 800.0, Outcome::Unsupported("no".into()));
    let alb = lib("albumentationsx", 2000.0, runs(900.0));
    let files = [&pillow, &image, &alb];
    let chosen = summary::reference_of(&files, None);
    assert_eq!(chosen.library, "albumentationsx");
    assert_eq!(
        summary::reference_of(&files, Some("image")).library,
        "image",
        "the run config's output.reference_library wins"
    );
    assert_eq!(
        summary::reference_of(&files[..2], None).library,
        "pillow",
        "without AlbumentationsX: the library measured on the most rows"
    );
    let order = names(&["CLAHE", "HorizontalFlip", "Rotate"]);
    let text = summary::table(
        &files,
        &order,
        unit(augbench_core::Media::Image),
        None,
        &chosen.library,
    );
    insta::assert_snapshot!(text);
}
