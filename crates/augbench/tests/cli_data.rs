//! `augbench data synth` and `augbench data clean` through the real binary.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

use assert_cmd::Command;
use predicates::str::contains;

fn augbench(cache: &std::path::Path) -> Command {
    let mut cmd = Command::cargo_bin("augbench").unwrap();
    cmd.env("AUGBENCH_CACHE", cache);
    cmd
}

fn listing(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    files.sort();
    files
}

#[test]
fn synth_is_deterministic_for_a_seed() {
    let t = tempfile::tempdir().unwrap();
    for name in ["a", "b"] {
        augbench(t.path())
            .args(["data", "synth", "--n", "3", "--seed", "7", "--out"])
            .arg(t.path().join(name))
            .assert()
            .success()
            .stdout(contains("wrote 3 images"));
    }
    let a = listing(&t.path().join("a"));
    assert_eq!(a.len(), 3);
    assert_eq!(a, listing(&t.path().join("b")));
    augbench(t.path())
        .args(["data", "synth", "--n", "3", "--seed", "8", "--out"])
        .arg(t.path().join("c"))
        .assert()
        .success();
    assert_ne!(a, listing(&t.path().join("c")));
}

#[test]
fn synth_refuses_a_folder_with_files() {
    let t = tempfile::tempdir().unwrap();
    std::fs::write(t.path().join("x.txt"), "keep").unwrap();
    augbench(t.path())
        .args(["data", "synth", "--n", "1", "--out"])
        .arg(t.path())
        .assert()
        .code(2)
        .stderr(contains("is not empty"))
        .stderr(contains("hint"));
}

#[test]
fn synth_help_shows_the_policy_seed() {
    let t = tempfile::tempdir().unwrap();
    let seed = augbench_core::policy::SYNTH_SEED.to_string();
    augbench(t.path())
        .args(["data", "synth", "--help"])
        .assert()
        .success()
        .stdout(contains(format!("[default: {seed}]")));
}

#[test]
fn clean_removes_the_dataset_cache() {
    let t = tempfile::tempdir().unwrap();
    let datasets = t.path().join("datasets");
    std::fs::create_dir_all(datasets.join("synthetic-image-x")).unwrap();
    augbench(t.path())
        .args(["data", "clean"])
        .assert()
        .success();
    assert!(!datasets.exists());
    assert!(
        t.path().exists(),
        "only the datasets part of the cache goes"
    );
}

#[test]
fn synth_video_writes_avi_files() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("v");
    augbench(t.path())
        .args(["data", "synth", "--video", "--n", "2", "--out"])
        .arg(&out)
        .assert()
        .success()
        .stdout(contains("wrote 2 videos"));
    let files = listing(&out);
    let names: Vec<&str> = files.iter().map(|f| f.0.as_str()).collect();
    assert_eq!(names, vec!["video_000000.avi", "video_000001.avi"]);
    assert!(files.iter().all(|f| f.1.starts_with(b"RIFF")));
}
