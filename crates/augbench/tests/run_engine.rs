//! End-to-end runs of the real binary on the native Rust workers: results JSON that parses with
//! our strict types, resume after Ctrl-C, and the bad inputs of the engine issue (corrupt and tiny
//! images, an empty data dir, a worker that panics or hangs, an output folder deleted mid-run).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

use std::path::{Path, PathBuf};
use std::process::{Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::Command;
use augbench_core::policy;
use augbench_core::results::{ResultFile, Status};
use predicates::prelude::*;

struct Env {
    _tmp: tempfile::TempDir,
    root: PathBuf,
}

impl Env {
    fn new() -> Env {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().to_path_buf();
        Env { _tmp: tmp, root }
    }

    fn path(&self, p: &str) -> PathBuf {
        self.root.join(p)
    }

    /// A config for `libraries` × `transforms` with a short request timeout.
    fn config(&self, libraries: &str, transforms: &str, extra_data: &str) -> PathBuf {
        let text = format!(
            "version: 1\nselection:\n  scenario: image-rgb\n  mode: micro\n  libraries: [{libraries}]\n  transforms: [{transforms}]\n\
             data:\n  num_items: 6\n{extra_data}execution:\n  num_runs: 2\n  min_time: 0.002\n  request_timeout_sec: 4\n  slow_threshold_sec_per_item: 5\n  warmup:\n    max_seconds: 0.2\n\
             output:\n  output_dir: {}\n",
            self.path("out").display()
        );
        let p = self.path("cfg.yaml");
        std::fs::write(&p, text).unwrap();
        p
    }

    fn cmd(&self) -> Command {
        let mut c = Command::cargo_bin("augbench").unwrap();
        c.env("AUGBENCH_CACHE", self.path("cache"))
            .env_remove("AUGBENCH_TEST_FAULTS");
        c
    }

    /// Starts `run` in the background with a fault mapped onto a real transform.
    fn spawn_run(&self, cfg: &Path, faults: &str) -> std::process::Child {
        StdCommand::new(assert_cmd::cargo::cargo_bin("augbench"))
            .env("AUGBENCH_CACHE", self.path("cache"))
            .env("AUGBENCH_TEST_FAULTS", faults)
            .args(["run", "--config"])
            .arg(cfg)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    }

    /// Sets `execution.processes` in a config written by `config`.
    fn set_processes(&self, cfg: &Path, n: u64) {
        let text = std::fs::read_to_string(cfg).unwrap();
        let text = text.replace("execution:\n", &format!("execution:\n  processes: {n}\n"));
        std::fs::write(cfg, text).unwrap();
    }

    /// Runs `cfg` with `faults`, sends Ctrl-C once `transform` is on disk, expects exit 1 and
    /// returns the image library's results as the interrupt left them.
    #[cfg(unix)]
    fn interrupt_after(&self, cfg: &Path, faults: &str, transform: &str) -> ResultFile {
        let results = self.path("out/image-rgb/micro/image_micro_results.json");
        let mut child = self.spawn_run(cfg, faults);
        wait_for(&results, |t| has_result(t, transform));
        let kill = StdCommand::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(kill.success());
        let code = child.wait().unwrap();
        assert_eq!(code.code(), Some(1), "an interrupted run exits 1");
        self.results("image")
    }

    /// `run --resume` on `cfg`, which must succeed.
    fn resume(&self, cfg: &Path) {
        self.cmd()
            .args(["run", "--resume", "--config"])
            .arg(cfg)
            .assert()
            .success();
    }

    fn text(&self, rel: &str) -> String {
        let p = self.path(rel);
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    }

    fn results(&self, lib: &str) -> ResultFile {
        let p = self.path(&format!("out/image-rgb/micro/{lib}_micro_results.json"));
        let text = self.text(&format!("out/image-rgb/micro/{lib}_micro_results.json"));
        serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("schema drift in {}: {e}", p.display()))
    }
}

fn status(f: &ResultFile, t: &str) -> Option<Status> {
    f.results.get(t).and_then(|r| r.status)
}

#[test]
fn quick_run_writes_strict_results_cells_and_a_summary() {
    let env = Env::new();
    let cfg = env.config(
        "image, kornia-rs",
        "HorizontalFlip, VerticalFlip, Rotate",
        "",
    );
    env.cmd()
        .args(["run", "--config"])
        .arg(&cfg)
        .assert()
        .success()
        .stdout(predicate::str::contains("HorizontalFlip").and(predicate::str::contains("img/s")));
    for lib in ["image", "kornia-rs"] {
        let f = env.results(lib);
        assert_eq!(f.metadata.library, lib);
        assert!(f.metadata.dataset.synthetic);
        let info = &f.metadata.system_info;
        assert!(
            info.simd.is_some() && info.build.is_some(),
            "a full machine card"
        );
        assert!(info.before.is_some() && info.after.is_some(), "{info:?}");
        let text = env.text(&format!("out/image-rgb/micro/{lib}_micro_results.json"));
        let raw: serde_json::Value = serde_json::from_str(&text).unwrap();
        let written = raw["metadata"]["system_info"].as_object().unwrap();
        for copy in ["card", "cpu_model", "logical_threads"] {
            assert!(
                !written.contains_key(copy),
                "one CPU name and count: {copy}"
            );
        }
        assert!(!info.processor.is_empty() && info.cpu_count > 0);
        let r = &f.results["HorizontalFlip"];
        assert_eq!(r.status, Some(Status::Ok));
        // num_runs 2 in each of policy's default number of worker processes.
        assert_eq!(r.throughputs.len() as u64, 2 * policy::DEFAULT_PROCESSES);
        assert!(r.median_throughput.unwrap() > 0.0);
        assert!(r.ci_low.unwrap() <= r.median_throughput.unwrap());
        // Native crates return owned buffers and force nothing: stated by construction.
        assert_eq!(
            (r.output_contiguous, r.force_share),
            (Some(true), Some(0.0))
        );
    }
    // Rotate: unsupported by kornia-rs (nearest warp), recorded with a reason, never timed.
    let k = env.results("kornia-rs");
    assert_eq!(status(&k, "Rotate"), Some(Status::Unsupported));
    assert!(
        k.results["Rotate"]
            .reason
            .as_deref()
            .is_some_and(|r| !r.is_empty())
    );
    let cells = augbench_cells::bench::read_bench_cells(&env.path("out/cells.parquet")).unwrap();
    let cpu = &k.metadata.system_info.processor;
    assert!(
        !cells.is_empty() && cells.iter().all(|c| &c.cpu_name == cpu),
        "cells: the card's CPU"
    );
    assert!(env.path("out/resolved_config.yaml").exists());
}

#[test]
fn processes_measure_in_fresh_workers_and_record_their_runs() {
    let env = Env::new();
    let cfg = env.config("image", "HorizontalFlip", "");
    env.set_processes(&cfg, 3);
    env.cmd()
        .args(["run", "--config"])
        .arg(&cfg)
        .assert()
        .success();
    let f = env.results("image");
    let r = &f.results["HorizontalFlip"];
    assert_eq!(f.metadata.benchmark_params.processes, 3);
    assert_eq!(r.throughputs.len(), 6);
    assert_eq!(r.process_runs, [2, 2, 2]);
    let m = r.median_throughput.unwrap();
    assert!(
        r.rerun_low.unwrap() <= m && m <= r.rerun_high.unwrap(),
        "{r:?}"
    );
}

#[cfg(unix)]
#[test]
fn an_interrupted_multi_process_run_keeps_the_runs_measured_so_far() {
    let env = Env::new();
    let cfg = env.config("image", "HorizontalFlip, VerticalFlip", "");
    env.set_processes(&cfg, 2);
    // VerticalFlip hangs; interrupt while process 1 is on it, after its HorizontalFlip is on disk.
    let before = env.interrupt_after(&cfg, "hang:VerticalFlip", "HorizontalFlip");
    let flip = &before.results["HorizontalFlip"];
    assert_eq!(flip.status, Some(Status::Ok));
    assert_eq!(flip.num_successful_runs, 2, "process 1's runs are on disk");
    env.resume(&cfg);
    let after = &env.results("image").results["HorizontalFlip"];
    assert_eq!(
        after.process_runs,
        [2, 2],
        "measured again in every process"
    );
}

#[test]
fn a_panicking_worker_costs_one_transform() {
    let env = Env::new();
    let cfg = env.config("image", "HorizontalFlip, VerticalFlip, Grayscale", "");
    env.cmd()
        .env("AUGBENCH_TEST_FAULTS", "panic:VerticalFlip")
        .args(["run", "--config"])
        .arg(&cfg)
        .assert()
        .success();
    let f = env.results("image");
    assert_eq!(status(&f, "HorizontalFlip"), Some(Status::Ok));
    assert_eq!(status(&f, "VerticalFlip"), Some(Status::Error));
    let reason = f.results["VerticalFlip"].reason.clone().unwrap();
    assert!(
        reason.contains("exited") && reason.contains("injected fault"),
        "{reason}"
    );
    assert_eq!(
        status(&f, "Grayscale"),
        Some(Status::Ok),
        "a fresh worker took over"
    );
}

#[test]
fn a_parameter_the_library_ignores_is_a_contract_error_and_warnings_are_recorded() {
    let env = Env::new();
    let cfg = env.config("image", "HorizontalFlip, VerticalFlip, Grayscale", "");
    env.cmd()
        .env(
            "AUGBENCH_TEST_FAULTS",
            "contract:VerticalFlip,warn:Grayscale",
        )
        .args(["run", "--config"])
        .arg(&cfg)
        .assert()
        .success();
    let f = env.results("image");
    let flip = &f.results["VerticalFlip"];
    assert_eq!(flip.status, Some(Status::Error));
    assert_eq!(
        flip.error_kind.as_deref(),
        Some(augbench_core::results::CONTRACT_ERROR)
    );
    let reason = flip.reason.clone().unwrap();
    assert!(
        reason.starts_with("contract: ") && reason.contains("did not take the parameters"),
        "{reason}"
    );
    let gray = &f.results["Grayscale"];
    assert_eq!(gray.status, Some(Status::Ok), "a warning is not fatal");
    assert_eq!(
        gray.warnings,
        ["UserWarning: injected warning while building Grayscale"]
    );
    let clean = &f.results["HorizontalFlip"];
    assert!(clean.warnings.is_empty() && clean.error_kind.is_none());
}

#[test]
fn a_hanging_worker_is_killed_at_the_timeout_and_a_deleted_output_folder_is_rebuilt() {
    let env = Env::new();
    let cfg = env.config("image", "HorizontalFlip, VerticalFlip, Grayscale", "");
    let out = env.path("out");
    let mut child = env.spawn_run(&cfg, "hang:VerticalFlip");
    // Wait until the first transform is on disk, then delete the whole output folder while the
    // worker hangs on the second one.
    wait_for(&out.join("image-rgb/micro/image_micro_results.json"), |t| {
        has_result(t, "HorizontalFlip")
    });
    std::fs::remove_dir_all(&out).unwrap();
    let status_code = child.wait().unwrap();
    assert!(status_code.success());
    let f = env.results("image");
    assert_eq!(
        status(&f, "HorizontalFlip"),
        Some(Status::Ok),
        "kept in memory and rewritten"
    );
    assert_eq!(status(&f, "VerticalFlip"), Some(Status::Error));
    assert!(
        f.results["VerticalFlip"]
            .reason
            .clone()
            .unwrap()
            .contains("did not answer")
    );
    assert_eq!(status(&f, "Grayscale"), Some(Status::Ok));
}

#[cfg(unix)]
#[test]
fn ctrl_c_keeps_finished_results_and_resume_continues() {
    let env = Env::new();
    let cfg = env.config("image", "HorizontalFlip, VerticalFlip, Grayscale", "");
    // One process, so HorizontalFlip is complete before VerticalFlip starts (with several,
    // see `an_interrupted_multi_process_run_keeps_the_runs_measured_so_far`).
    env.set_processes(&cfg, 1);
    let before = env.interrupt_after(&cfg, "hang:VerticalFlip", "HorizontalFlip");
    assert_eq!(status(&before, "HorizontalFlip"), Some(Status::Ok));
    assert_eq!(
        status(&before, "VerticalFlip"),
        None,
        "the transform in flight is not recorded"
    );
    env.resume(&cfg);
    let after = env.results("image");
    assert_eq!(
        after.results["HorizontalFlip"], before.results["HorizontalFlip"],
        "not measured again"
    );
    assert_eq!(status(&after, "VerticalFlip"), Some(Status::Ok));
    assert_eq!(status(&after, "Grayscale"), Some(Status::Ok));
}

#[test]
fn corrupt_truncated_and_tiny_images_are_reported_not_fatal() {
    let env = Env::new();
    let data = env.path("data");
    env.cmd()
        .args(["data", "synth", "--n", "3", "--out"])
        .arg(&data)
        .assert()
        .success();
    let first = sorted_files(&data)[0].clone();
    let bytes = std::fs::read(&first).unwrap();
    std::fs::write(data.join("zz_truncated.jpg"), &bytes[..bytes.len() / 2]).unwrap();
    std::fs::write(data.join("zz_corrupt.jpg"), b"not a jpeg at all").unwrap();
    image::RgbImage::new(1, 1)
        .save(data.join("zz_tiny.png"))
        .unwrap();
    let extra = format!("  data_dir: {}\n", data.display());
    let cfg = env.config("image", "HorizontalFlip, CenterCrop224", &extra);
    env.cmd()
        .args(["run", "--config"])
        .arg(&cfg)
        .assert()
        .success();
    let f = env.results("image");
    assert_eq!(
        f.metadata.dataset.skipped, 2,
        "corrupt and truncated files are skipped and counted"
    );
    assert_eq!(
        f.metadata.benchmark_params.num_items, 4,
        "3 synthetic + the 1×1 image"
    );
    assert_eq!(status(&f, "HorizontalFlip"), Some(Status::Ok));
    // The 1×1 image cannot be cropped to 224×224: an error with the reason, not a crash.
    assert_eq!(status(&f, "CenterCrop224"), Some(Status::Error));
    assert!(
        f.results["CenterCrop224"]
            .reason
            .clone()
            .unwrap()
            .contains("1×1")
    );
}

#[test]
fn an_empty_data_dir_is_a_usage_error() {
    let env = Env::new();
    std::fs::create_dir_all(env.path("empty")).unwrap();
    let extra = format!("  data_dir: {}\n", env.path("empty").display());
    let cfg = env.config("image", "HorizontalFlip", &extra);
    env.cmd()
        .args(["run", "--config"])
        .arg(&cfg)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("empty").and(predicate::str::contains("hint")));
}

/// True once the result file lists `transform` under `results` (the config inside the metadata
/// names every transform from the start, so a text search would fire too early).
fn has_result(text: &str, transform: &str) -> bool {
    serde_json::from_str::<ResultFile>(text).is_ok_and(|f| f.results.contains_key(transform))
}

fn sorted_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    v.sort();
    v
}

fn wait_for(path: &Path, ready: impl Fn(&str) -> bool) {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(120) {
        if std::fs::read_to_string(path).is_ok_and(|t| ready(&t)) {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("{} never became ready", path.display());
}

#[test]
fn resume_with_other_settings_measures_again() {
    let env = Env::new();
    let cfg = env.config("image", "HorizontalFlip", "");
    env.cmd()
        .args(["run", "--config"])
        .arg(&cfg)
        .assert()
        .success();
    assert_eq!(
        env.results("image").results["HorizontalFlip"].num_successful_runs,
        2 * policy::DEFAULT_PROCESSES
    );
    env.cmd()
        .args(["run", "--resume", "--num-runs", "3", "--config"])
        .arg(&cfg)
        .assert()
        .success()
        .stderr(predicate::str::contains("other settings"));
    assert_eq!(
        env.results("image").results["HorizontalFlip"].num_successful_runs,
        3 * policy::DEFAULT_PROCESSES
    );
}
