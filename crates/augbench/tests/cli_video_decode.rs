//! The decode scenario through the real binary, the real environments (shared cache) and the
//! synthetic videos: a tiny run (4 clips, 2 runs) writes one result file per decoder, at least
//! three decoders measure the sampled frames (checked against the frame markers), and a decoder
//! that cannot run says why. Where the run promises FFmpeg (`CI` set, or `AUGBENCH_EXPECT_TOOLS`
//! naming ffmpeg; scripts/test.sh installs it) all four measure, torchvision's torchcodec too;
//! elsewhere only torchvision may be unsupported, for want of FFmpeg's shared libraries.
//! Unreadable files in a `data_dir` are skipped by name, as for clips.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use augbench_core::results::{DECODE_ROW, ResultFile, Status};
use predicates::str::contains;

const CONFIG: &str = "../../configs/examples/local_video_decode.yaml";

fn config() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(CONFIG)
}

fn decode_run(out: &Path, extra: &[&str]) -> assert_cmd::assert::Assert {
    Command::cargo_bin("augbench")
        .unwrap()
        .args([
            "run",
            "--no-refresh-requirements",
            "--num-items",
            "4",
            "--num-runs",
            "2",
        ])
        .args(extra)
        .arg("--config")
        .arg(config())
        .arg("--output")
        .arg(out)
        .assert()
}

/// Whether this run promises FFmpeg (torchcodec, torchvision's decoder, loads its libraries).
fn ffmpeg_promised() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty())
        || std::env::var("AUGBENCH_EXPECT_TOOLS")
            .is_ok_and(|t| t.split(',').any(|n| n.trim() == "ffmpeg"))
}

/// Every decoder's file, read back with the typed reader (unknown fields are refused).
fn files(out: &Path) -> Vec<ResultFile> {
    let dir = out.join("video-decode-16f/decode");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap())
        .collect()
}

#[test]
fn decoders_measure_the_same_sampled_frames_and_unsupported_ones_say_why() {
    let t = tempfile::tempdir().unwrap();
    decode_run(t.path(), &[])
        .success()
        .stdout(contains("clips/s"))
        .stdout(contains("frames/s"))
        .stdout(contains("access"));
    let files = files(t.path());
    let names: Vec<&str> = files.iter().map(|f| f.metadata.library.as_str()).collect();
    assert_eq!(names, ["decord", "opencv", "pyav", "torchvision"]);
    let mut ok = 0;
    for f in &files {
        let row = &f.results[DECODE_ROW];
        let d = row.decode.as_ref().expect("decode detail");
        assert_eq!(
            (f.metadata.mode.as_str(), d.clip_length, d.clips),
            ("decode", 16, 4)
        );
        match row.status {
            Some(Status::Ok) => {
                ok += 1;
                assert_eq!(row.throughputs.len(), 2, "{}", f.metadata.library);
                assert_eq!(d.frames_per_sec.len(), 2);
                let fps = d.median_frames_per_sec.unwrap();
                assert!((fps - 16.0 * row.median_throughput.unwrap()).abs() < 1e-6);
                assert!(
                    d.verification.contains("all 64 frames"),
                    "{}",
                    d.verification
                );
                assert_eq!(d.sample.shape.first(), Some(&16));
                assert_eq!(d.sample.dtype, "uint8");
                assert!(!d.access.is_empty() && !d.decoder.is_empty());
            }
            Some(Status::Unsupported) if !ffmpeg_promised() => {
                let why = row.reason.as_deref().unwrap_or_default();
                assert_eq!(f.metadata.library, "torchvision", "{why}");
                assert!(why.contains("FFmpeg"), "torchvision: {why}");
            }
            other => panic!("{}: {other:?} {:?}", f.metadata.library, row.reason),
        }
    }
    let want = if ffmpeg_promised() { 4 } else { 3 };
    assert!(ok >= want, "only {ok} decoders measured");
    assert!(t.path().join("cells.parquet").exists());
}

#[test]
fn unreadable_files_are_skipped_by_name_and_the_rest_are_decoded() {
    let t = tempfile::tempdir().unwrap();
    let data = t.path().join("videos");
    Command::cargo_bin("augbench")
        .unwrap()
        .args(["data", "synth", "--video", "--n", "2", "--out"])
        .arg(&data)
        .assert()
        .success();
    std::fs::write(data.join("empty.avi"), b"").unwrap();
    std::fs::write(data.join("junk.mp4"), b"not a video".repeat(40)).unwrap();
    let out = t.path().join("out");
    Command::cargo_bin("augbench")
        .unwrap()
        .args([
            "run",
            "--no-refresh-requirements",
            "--num-runs",
            "1",
            "--decoders",
            "opencv,pyav",
        ])
        .arg("--config")
        .arg(config())
        .arg("--data-dir")
        .arg(&data)
        .arg("--output")
        .arg(&out)
        .assert()
        .success()
        .stderr(contains("skipped"))
        .stderr(contains("empty.avi"))
        .stderr(contains("junk.mp4"));
    for f in files(&out) {
        let row = &f.results[DECODE_ROW];
        assert_eq!(row.status, Some(Status::Ok), "{:?}", row.reason);
        let d = row.decode.as_ref().unwrap();
        assert_eq!(d.clips, 2);
        assert!(
            d.verification.starts_with("shape only"),
            "{}",
            d.verification
        );
    }
}

#[test]
fn a_decode_config_asking_for_libraries_exits_2_at_its_line() {
    let t = tempfile::tempdir().unwrap();
    let cfg = t.path().join("bad.yaml");
    std::fs::write(
        &cfg,
        "version: 1\nselection:\n  scenario: video-decode-16f\n  libraries: [kornia]\n",
    )
    .unwrap();
    Command::cargo_bin("augbench")
        .unwrap()
        .args(["validate", "--config"])
        .arg(&cfg)
        .assert()
        .code(2)
        .stderr(contains("bad.yaml:4:3"))
        .stderr(contains("applies no transform"))
        .stderr(contains("hint"));
}
