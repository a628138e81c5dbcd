//! The end-of-run summary table `augbench run` prints: one column per library for images; for
//! video, clips/s and a second frames/s column per library (clips/s × the clip length).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

use augbench_core::Mode;
use augbench_exec::summary;
use augbench_report::sample::{Outcome, result_file, runs};

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
    let unit = summary::unit(augbench_core::Media::Video);
    insta::assert_snapshot!(summary::table(&[&a, &b], &order, unit, Some(16)));
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
    let unit = summary::unit(augbench_core::Media::Image);
    insta::assert_snapshot!(summary::table(&[&a], &order, unit, None));
}
