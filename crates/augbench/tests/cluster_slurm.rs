//! Runs on a real Slurm cluster: each test starts a one-node cluster of its own
//! (`scripts/slurm_cluster.sh`: munged, slurmctld and slurmd on this machine, state in a temporary
//! folder, stopped when the test ends) and submits real `sbatch --array` jobs through `augbench
//! run` with `cloud.provider: slurm`. The tests' clusters run side by side (each on its own ports,
//! state and munge socket, under the one node name this machine has; two ran jobs at once): a
//! lock between them held up to three of the four test threads idle while one cluster worked.
//! Covers a run split into 3 shards, merged and compared with
//! the same config run locally; one task cancelled (`scancel` of its array index) and then
//! resubmitted alone with `cloud fetch --retry-failed`, the finished shards untouched; and the
//! mistakes refused before anything is submitted. Where the run promises Slurm (`CI` set, or
//! `AUGBENCH_EXPECT_TOOLS` naming slurm), a machine without it fails these tests.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use assert_cmd::Command;
use augbench_core::results::ResultFile;
use predicates::str::contains;

const LIBS: [&str; 3] = ["image", "fast_image_resize", "kornia-rs"];
const TRANSFORMS: [&str; 3] = ["HorizontalFlip", "Resize", "Pad"];

fn promised() -> bool {
    std::env::var_os("CI").is_some()
        || std::env::var("AUGBENCH_EXPECT_TOOLS").is_ok_and(|t| t.contains("slurm"))
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/slurm_cluster.sh")
}

/// A running one-node cluster; stopped when dropped.
struct Cluster {
    state: PathBuf,
    conf: PathBuf,
}

impl Cluster {
    /// Starts one, or says why it cannot (and fails where the run promises Slurm).
    fn start(state: &Path) -> Option<Cluster> {
        let installed = ["slurmctld", "slurmd", "munged", "sbatch"].iter().all(|t| {
            std::process::Command::new("sh")
                .args(["-c", &format!("command -v {t}")])
                .output()
                .is_ok_and(|o| o.status.success())
        });
        if !installed {
            assert!(
                !promised(),
                "Slurm (slurm-wlm, munge) is missing and this run promises it; scripts/test.sh installs it"
            );
            eprintln!(
                "skipped: slurm-wlm and munge are not installed (apt-get install slurm-wlm munge)"
            );
            return None;
        }
        let out = std::process::Command::new("bash")
            .arg(script())
            .arg("start")
            .arg(state)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "the one-node cluster did not start:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        Some(Cluster {
            state: state.to_path_buf(),
            conf: state.join("slurm.conf"),
        })
    }

    /// Waits until the queue holds none of our jobs.
    fn drain(&self, within: Duration) {
        let start = Instant::now();
        loop {
            let out = std::process::Command::new("squeue")
                .args(["-h", "-o", "%i %T"])
                .env("SLURM_CONF", &self.conf)
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout).to_string();
            if out.status.success() && text.trim().is_empty() {
                return;
            }
            assert!(start.elapsed() < within, "the queue did not drain: {text}");
            std::thread::sleep(Duration::from_millis(500));
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = std::process::Command::new("bash")
            .arg(script())
            .arg("stop")
            .arg(&self.state)
            .output();
    }
}

/// Fields drop in order: the cluster stops before its state folder is removed.
struct Env {
    cluster: Cluster,
    root: PathBuf,
    _tmp: tempfile::TempDir,
}

impl Env {
    /// A cluster and a config of three crates × three transforms in three shards on the embedded
    /// dataset, beside the same config without its `cloud:` section.
    fn new(cloud_extra: &str) -> Option<Env> {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().to_path_buf();
        let cluster = Cluster::start(&root.join("cluster"))?;
        let body = format!(
            "version: 1\nselection:\n  scenario: image-rgb\n  libraries: [{}]\n  transforms: [{}]\n\
             data:\n  num_items: 6\nexecution:\n  num_runs: 2\n  processes: 1\n  min_time: 0.002\n  request_timeout_sec: 20\n\
             \x20 warmup:\n    window: 5\n    max_passes: 5\n    min_windows: 1\n",
            LIBS.join(", "),
            TRANSFORMS.join(", "),
        );
        let cloud = format!(
            "output:\n  output_dir: {}\ncloud:\n  provider: slurm\n  shared_dir: {}\n  shards: 3\n{cloud_extra}",
            root.join("out").display(),
            root.join("shared").display(),
        );
        let local = format!("output:\n  output_dir: {}\n", root.join("local").display());
        std::fs::write(root.join("slurm.yaml"), format!("{body}{cloud}")).unwrap();
        std::fs::write(root.join("local.yaml"), format!("{body}{local}")).unwrap();
        Some(Env {
            cluster,
            root,
            _tmp: tmp,
        })
    }

    fn out(&self) -> PathBuf {
        self.root.join("out")
    }

    fn augbench(&self) -> Command {
        let mut c = Command::cargo_bin("augbench").unwrap();
        c.env("SLURM_CONF", &self.cluster.conf)
            .env("AUGBENCH_CACHE", self.root.join("cache"));
        c
    }

    fn run(&self, extra: &[&str]) -> Command {
        let mut c = self.augbench();
        c.args(["run", "--config"])
            .arg(self.root.join("slurm.yaml"))
            .args(extra);
        c
    }

    fn cloud(&self, verb: &str) -> Command {
        let mut c = self.augbench();
        c.args(["cloud", verb, "--output"]).arg(self.out());
        c
    }

    fn transforms(&self, out: &Path, lib: &str) -> Vec<String> {
        let p = out.join(format!("image-rgb/micro/{lib}_micro_results.json"));
        let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        let file: ResultFile = serde_json::from_str(&text).unwrap();
        file.results.keys().cloned().collect()
    }

    fn job_id(&self) -> String {
        let text = std::fs::read_to_string(self.out().join("cloud_run.json")).unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        v["jobs"][0]["id"].as_str().unwrap().to_string()
    }

    /// The shared folder's DONE.json of a task.
    fn done(&self, task: u64) -> PathBuf {
        let shared = self.root.join("shared");
        let run = std::fs::read_dir(&shared)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.join("tasks").is_dir())
            .unwrap();
        run.join(format!("tasks/{task}/DONE.json"))
    }
}

fn sorted(names: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = names.iter().map(|s| s.to_string()).collect();
    v.sort();
    v
}

#[test]
fn three_shards_on_slurm_merge_into_what_a_local_run_writes() {
    let Some(env) = Env::new("") else { return };
    env.run(&["--remote-attached"])
        .timeout(Duration::from_secs(300))
        .assert()
        .success()
        .stderr(contains("Slurm array job"))
        .stdout(contains("tasks merged: 0, 1, 2"));
    env.cloud("status")
        .assert()
        .success()
        .stdout(contains("3 SUCCEEDED"));
    env.augbench()
        .args(["run", "--config"])
        .arg(env.root.join("local.yaml"))
        .assert()
        .success();
    let local = env.root.join("local");
    for lib in LIBS {
        assert_eq!(
            env.transforms(&env.out(), lib),
            sorted(&TRANSFORMS),
            "{lib}"
        );
        assert_eq!(
            env.transforms(&env.out(), lib),
            env.transforms(&local, lib),
            "{lib}"
        );
    }
    let cells = |dir: &Path| augbench_cells::read_bench_cells(&dir.join("cells.parquet")).unwrap();
    let (remote, here) = (cells(&env.out()), cells(&local));
    assert_eq!(remote.len(), here.len(), "same cells as a local run");
    let keys = |c: &[augbench_cells::BenchCell]| {
        let mut k: Vec<(String, String)> = c
            .iter()
            .map(|c| (c.library.clone(), c.transform.clone()))
            .collect();
        k.sort();
        k
    };
    assert_eq!(keys(&remote), keys(&here));
}

#[test]
fn a_cancelled_task_is_named_and_resubmitted_alone() {
    let Some(env) = Env::new("") else { return };
    env.run(&[])
        .assert()
        .success()
        .stdout(contains("augbench cloud fetch"));
    // One node, --exclusive: task 1 waits behind task 0 and is cancelled before it starts.
    let id = env.job_id();
    std::process::Command::new("scancel")
        .arg(format!("{id}_1"))
        .env("SLURM_CONF", &env.cluster.conf)
        .status()
        .unwrap();
    env.cluster.drain(Duration::from_secs(240));
    env.cloud("fetch")
        .assert()
        .code(1)
        .stdout(contains("tasks merged: 0, 2"))
        .stderr(contains("task 1 not merged"));
    let finished = std::fs::metadata(env.done(0)).unwrap().modified().unwrap();
    env.cloud("fetch")
        .arg("--retry-failed")
        .assert()
        .code(1)
        .stdout(contains("resubmitted task 1 as job"));
    env.cluster.drain(Duration::from_secs(240));
    env.cloud("fetch")
        .assert()
        .success()
        .stdout(contains("tasks merged: 0, 1, 2"));
    let after = std::fs::metadata(env.done(0)).unwrap().modified().unwrap();
    assert_eq!(finished, after, "a finished shard is never rerun");
    env.cloud("status")
        .assert()
        .success()
        .stdout(contains("resubmitted as"));
    for lib in LIBS {
        assert_eq!(
            env.transforms(&env.out(), lib),
            sorted(&TRANSFORMS),
            "{lib}"
        );
    }
    env.cloud("fetch")
        .arg("--retry-failed")
        .assert()
        .success()
        .stdout(contains("nothing to resubmit"));
}

#[test]
fn mistakes_are_refused_before_anything_is_submitted() {
    let Some(env) = Env::new("  partition: nosuch\n") else {
        return;
    };
    env.run(&[])
        .assert()
        .code(2)
        .stderr(contains("no partition `nosuch`"))
        .stderr(contains("one of: augbench"));
    assert!(!env.out().join("cloud_run.json").exists());
    // No Slurm tools on PATH.
    env.run(&[])
        .env("PATH", "/nonexistent")
        .assert()
        .code(2)
        .stderr(contains("cannot start `sbatch`"));
    // A shared folder that is not a folder.
    let text = std::fs::read_to_string(env.root.join("slurm.yaml")).unwrap();
    std::fs::write(env.root.join("file"), b"x").unwrap();
    let blocked = text.replace("  partition: nosuch\n", "").replace(
        &env.root.join("shared").display().to_string(),
        &env.root.join("file/shared").display().to_string(),
    );
    std::fs::write(env.root.join("blocked.yaml"), blocked).unwrap();
    env.augbench()
        .args(["run", "--config"])
        .arg(env.root.join("blocked.yaml"))
        .assert()
        .code(2)
        .stderr(contains("cannot write to the shared folder"));
    // An output folder that already follows a run.
    std::fs::create_dir_all(env.out()).unwrap();
    std::fs::write(
        env.out().join("cloud_run.json"),
        r#"{"run_name":"earlier","run_uri":"/x","data_uri":"","cell_run_id":"c","submitted_utc":"2026-01-01T00:00:00Z","jobs":[],"follow":[]}"#,
    )
    .unwrap();
    env.augbench()
        .args(["run", "--config"])
        .arg(env.root.join("blocked.yaml"))
        .assert()
        .code(2)
        .stderr(contains("already follows run earlier"));
}

/// The cell files under a production output folder's runs, by path relative to it.
fn cell_files(out: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![out.join("runs")];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.components().any(|c| c.as_os_str() == "cells") {
                found.push(p.strip_prefix(out).unwrap().display().to_string());
            }
        }
    }
    found.sort();
    found
}

#[test]
fn a_production_config_in_four_shards_merges_into_the_local_run() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let Some(cluster) = Cluster::start(&root.join("cluster")) else {
        return;
    };
    let body = "version: 1\nproduction:\n  implementations: [image_cpu, fast_image_resize_cpu]\n  \
                recipes: [Resize, HorizontalFlip, Pad, Invert]\n  seeds: [137, 138]\n  batch_size: 4\n  \
                warmup_batches: 1\n  measured_batches: 3\n  workers: 1\ndata:\n  num_items: 12\n";
    let slurm = format!(
        "{body}output:\n  output_dir: {}\ncloud:\n  provider: slurm\n  shared_dir: {}\n  shards: 4\n",
        root.join("out").display(),
        root.join("shared").display()
    );
    let local = format!(
        "{body}output:\n  output_dir: {}\n",
        root.join("local").display()
    );
    std::fs::write(root.join("slurm.yaml"), slurm).unwrap();
    std::fs::write(root.join("local.yaml"), local).unwrap();
    let augbench = || {
        let mut c = Command::cargo_bin("augbench").unwrap();
        c.env("SLURM_CONF", &cluster.conf)
            .env("AUGBENCH_CACHE", root.join("cache"));
        c
    };
    augbench()
        .args(["production", "--remote-attached", "--config"])
        .arg(root.join("slurm.yaml"))
        .timeout(Duration::from_secs(300))
        .assert()
        .success()
        .stderr(contains("with 4 tasks"))
        .stdout(contains("tasks merged: 0, 1, 2, 3"))
        .stdout(contains("16 cells"));
    augbench()
        .args(["production", "--config"])
        .arg(root.join("local.yaml"))
        .assert()
        .success();
    let merged = cell_files(&root.join("out"));
    assert_eq!(merged.len(), 16, "2 implementations × 4 recipes × 2 seeds");
    assert_eq!(
        merged,
        cell_files(&root.join("local")),
        "the same run id and cells as here"
    );
    assert!(root.join("out/latest.json").is_file());
    // A cell of another run in a shard's folder is named and skipped; the others stay.
    let run = std::fs::read_dir(root.join("shared"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.join("tasks").is_dir())
        .unwrap();
    let task = run.join("tasks/0/out");
    let cells = task.join(cell_files(&task).first().unwrap());
    let mut cell: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&cells).unwrap()).unwrap();
    cell["id"]["run_id"] = "0123456789abcdef".into();
    let stray = cells.with_file_name("seed-999.json");
    std::fs::write(&stray, serde_json::to_vec(&cell).unwrap()).unwrap();
    augbench()
        .args(["cloud", "fetch", "--output"])
        .arg(root.join("out"))
        .assert()
        .success()
        .stderr(contains(
            "seed-999.json: it belongs to run 0123456789abcdef",
        ));
    assert_eq!(cell_files(&root.join("out")), merged);
}
