//! Video inputs through the real binary: `--clip-length` reaches the resolved config, and a
//! `data_dir` whose videos are all unreadable stops the run with exit 2, naming every file and
//! its reason, before any worker starts. The decoder environment comes from the shared cache.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

use std::path::Path;

use assert_cmd::Command;
use predicates::str::contains;

const VIDEO_CONFIG: &str = "../../configs/examples/local_video_micro_cpu.yaml";

fn config() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(VIDEO_CONFIG)
}

#[test]
fn clip_length_flag_overrides_the_config() {
    Command::cargo_bin("augbench")
        .unwrap()
        .args(["plan", "--clip-length", "8", "--config"])
        .arg(config())
        .assert()
        .success()
        .stdout(contains("clip_length: 8"));
    Command::cargo_bin("augbench")
        .unwrap()
        .args(["plan", "--clip-length", "0", "--config"])
        .arg(config())
        .assert()
        .code(2)
        .stderr(contains("--clip-length"));
}

#[test]
fn only_unreadable_videos_exit_2_with_each_reason() {
    let t = tempfile::tempdir().unwrap();
    let data = t.path().join("videos");
    std::fs::create_dir_all(data.join("sub")).unwrap();
    std::fs::write(data.join("garbage.mp4"), b"not a video".repeat(40)).unwrap();
    std::fs::write(data.join("sub/empty.avi"), b"").unwrap();
    Command::cargo_bin("augbench")
        .unwrap()
        .args(["run", "--no-refresh-requirements", "--config"])
        .arg(config())
        .arg("--data-dir")
        .arg(&data)
        .arg("--output")
        .arg(t.path().join("out"))
        .assert()
        .code(2)
        .stderr(contains("none of the 2 videos could be read"))
        .stderr(contains("garbage.mp4: OpenCV cannot open it"))
        .stderr(contains("empty.avi"))
        .stderr(contains("hint"));
}
