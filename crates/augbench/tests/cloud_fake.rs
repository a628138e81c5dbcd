//! Cloud runs end to end against the fake `gcloud` (tests/fake_gcloud/gcloud, first on PATH):
//! storage is a local folder, and `batch jobs submit` runs every task script locally with
//! BATCH_TASK_INDEX set, on the native Rust crates and a tiny synthetic dataset. Covers dry run,
//! detached submit → status → fetch (twice), attached runs, and injected faults: a preempted
//! task, a failing task, a task without DONE.json, and a failed upload.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use augbench_core::results::ResultFile;
use predicates::str::contains;

const LIBS: [&str; 3] = ["image", "fast_image_resize", "kornia-rs"];
const TRANSFORMS: [&str; 3] = ["HorizontalFlip", "Resize", "Pad"];

struct Env {
    _tmp: tempfile::TempDir,
    root: PathBuf,
}

fn fake_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fake_gcloud")
}

impl Env {
    /// Six synthetic images and a config of three crates × three transforms in three shards.
    fn new() -> Env {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().to_path_buf();
        let env = Env { _tmp: tmp, root };
        env.augbench()
            .args(["data", "synth", "--n", "6", "--out"])
            .arg(env.root.join("media"))
            .assert()
            .success();
        std::fs::write(env.root.join("media/._junk.jpg"), b"appledouble").unwrap();
        let body = format!(
            "version: 1\nselection:\n  scenario: image-rgb\n  libraries: [{}]\n  transforms: [{}]\n\
             data:\n  data_dir: {}\n  num_items: 6\nexecution:\n  num_runs: 2\n  processes: 1\n  min_time: 0.002\n  request_timeout_sec: 20\n  slow_threshold_sec_per_item: 5\n\
             \x20 warmup:\n    window: 5\n    max_passes: 5\n    min_windows: 1\n",
            LIBS.join(", "),
            TRANSFORMS.join(", "),
            env.root.join("media").display(),
        );
        let cloud = format!(
            "output:\n  output_dir: {}\n  gcs_results_uri: gs://bench/results\n\
             cloud:\n  zone: us-central1-a\n  shards: 3\n  preemptible: true\n",
            env.out().display()
        );
        let local = format!(
            "output:\n  output_dir: {}\n",
            env.root.join("local").display()
        );
        std::fs::write(env.root.join("cloud.yaml"), format!("{body}{cloud}")).unwrap();
        std::fs::write(env.root.join("local.yaml"), format!("{body}{local}")).unwrap();
        env
    }

    fn out(&self) -> PathBuf {
        self.root.join("out")
    }

    fn augbench(&self) -> Command {
        let path = format!(
            "{}:{}",
            fake_dir().display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut c = Command::cargo_bin("augbench").unwrap();
        c.env("PATH", path)
            .env("FAKE_GCLOUD_ROOT", self.root.join("gcloud"))
            .env("AUGBENCH_CACHE", self.root.join("cache"));
        c
    }

    fn run(&self, extra: &[&str]) -> Command {
        let mut c = self.augbench();
        c.args(["run", "--config"])
            .arg(self.root.join("cloud.yaml"))
            .args(extra);
        c
    }

    fn cloud(&self, verb: &str) -> Command {
        let mut c = self.augbench();
        c.args(["cloud", verb, "--output"]).arg(self.out());
        c
    }

    fn calls(&self) -> String {
        std::fs::read_to_string(self.root.join("gcloud/calls.log")).unwrap_or_default()
    }

    fn results(&self, out: &Path, lib: &str) -> ResultFile {
        let p = out.join(format!("image-rgb/micro/{lib}_micro_results.json"));
        let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        serde_json::from_str(&text).unwrap()
    }

    fn transforms(&self, out: &Path, lib: &str) -> Vec<String> {
        self.results(out, lib).results.keys().cloned().collect()
    }

    /// Every file under the output folder except the fetched mirror, with its bytes.
    fn snapshot(&self) -> Vec<(PathBuf, Vec<u8>)> {
        let mut files = Vec::new();
        let mut stack = vec![self.out()];
        while let Some(dir) = stack.pop() {
            for e in std::fs::read_dir(&dir).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() && !p.ends_with("cloud") {
                    stack.push(p);
                } else if p.is_file() {
                    files.push((p.clone(), std::fs::read(&p).unwrap()));
                }
            }
        }
        files.sort();
        files
    }
}

fn sorted(names: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = names.iter().map(|s| s.to_string()).collect();
    v.sort();
    v
}

#[test]
fn dry_run_writes_the_job_and_calls_nothing() {
    let env = Env::new();
    env.run(&["--gcp-dry-run"])
        .assert()
        .success()
        .stdout(contains("nothing was uploaded or submitted"));
    assert_eq!(env.calls(), "", "a dry run calls no gcloud");
    let cloud = env.out().join("cloud");
    let job = std::fs::read_dir(&cloud)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "json"))
        .expect("job JSON");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(job).unwrap()).unwrap();
    assert_eq!(json["taskGroups"][0]["taskCount"], 3);
    assert_eq!(json["taskGroups"][0]["taskCountPerNode"], 1);
    for f in [
        "bundle/task.sh",
        "bundle/plan.yaml",
        "bundle/shards/2.yaml",
        "data.tar",
    ] {
        assert!(cloud.join(f).is_file(), "{f}");
    }
    assert!(!env.out().join("cloud_run.json").exists());
}

#[test]
fn detached_submit_then_status_then_fetch_twice_matches_a_local_run() {
    let env = Env::new();
    env.run(&[])
        .assert()
        .success()
        .stdout(contains("augbench cloud fetch --output"));
    assert!(env.out().join("cloud_run.json").is_file());
    assert!(env.calls().contains("\"submit\""));
    env.cloud("status")
        .assert()
        .success()
        .stdout(contains("3 SUCCEEDED"));
    env.cloud("fetch")
        .assert()
        .success()
        .stdout(contains("tasks merged: 0, 1, 2"));
    let first = env.snapshot();
    env.cloud("fetch")
        .assert()
        .success()
        .stdout(contains("files written: 0"));
    assert_eq!(env.snapshot(), first, "fetching twice changes nothing");

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
        let (cloud, here) = (env.results(&env.out(), lib), env.results(&local, lib));
        for t in TRANSFORMS {
            assert_eq!(cloud.results[t].status, here.results[t].status, "{lib} {t}");
        }
    }
    let rows = |dir: &Path| {
        augbench_cells::read_bench_cells(&dir.join("cells.parquet"))
            .unwrap()
            .len()
    };
    assert_eq!(rows(&env.out()), rows(&local), "same cells as a local run");
    // The output folder itself, as after a local run: the fetched per-task copies under `cloud/`
    // are not read a second time.
    for results in [env.out(), env.out().join("cells.parquet")] {
        env.augbench()
            .args(["report", "--results"])
            .arg(&results)
            .arg("--out")
            .arg(env.root.join("report.html"))
            .assert()
            .success();
    }
    env.augbench()
        .arg("compare")
        .arg(env.out())
        .assert()
        .success();
}

#[test]
fn attached_run_retries_a_preempted_task_and_fetches_everything() {
    let env = Env::new();
    env.run(&["--gcp-attached"])
        .env("FAKE_GCLOUD_PREEMPT_TASK", "1")
        .assert()
        .success()
        .stdout(contains("tasks merged: 0, 1, 2"));
    env.cloud("status")
        .assert()
        .success()
        .stdout(contains("(preempted)"));
    for lib in LIBS {
        assert_eq!(
            env.transforms(&env.out(), lib),
            sorted(&TRANSFORMS),
            "{lib}"
        );
    }
}

#[test]
fn a_failing_task_shows_its_log_and_the_others_are_fetched() {
    let env = Env::new();
    env.run(&["--gcp-attached"])
        .env("FAKE_GCLOUD_FAIL_TASK", "1")
        .assert()
        .code(1)
        .stderr(contains("task 1 FAILED"))
        .stderr(contains("injected failure"))
        .stderr(contains("task 1 not merged: failed"));
    let lost = TRANSFORMS[1];
    for lib in LIBS {
        let got = env.transforms(&env.out(), lib);
        assert!(!got.contains(&lost.to_string()), "{lib}: {got:?}");
        assert_eq!(got.len(), 2, "{lib}: {got:?}");
    }
}

/// `fetch --retry-failed` on Batch: the failed shard alone goes out as a job of its own whose
/// one task runs that shard; the next fetch merges it, the finished shards never ran again.
#[test]
fn a_failed_task_is_resubmitted_alone_as_a_job_of_its_own() {
    let env = Env::new();
    env.run(&[])
        .env("FAKE_GCLOUD_FAIL_TASK", "1")
        .assert()
        .success();
    env.cloud("fetch")
        .arg("--retry-failed")
        .assert()
        .code(1)
        .stderr(contains("task 1 not merged: failed"))
        .stdout(contains("resubmitted task 1 as job "));
    let record: serde_json::Value =
        serde_json::from_slice(&std::fs::read(env.out().join("cloud_run.json")).unwrap()).unwrap();
    let retry = &record["jobs"][1];
    let name = retry["name"]
        .as_str()
        .unwrap_or_else(|| panic!("{record:#}"));
    assert!(name.ends_with("-r1"), "{record:#}");
    assert_eq!(retry["task_shards"], serde_json::json!([1]), "{record:#}");
    // The retry job ran one task (Batch's index 0), on shard 1's transforms.
    let vm = env.root.join("gcloud/vm").join(name);
    let tasks: Vec<_> = std::fs::read_dir(&vm)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(tasks, ["0"], "{}", vm.display());
    env.cloud("status")
        .assert()
        .success()
        .stdout(contains(format!("job {name}")));
    env.cloud("fetch")
        .assert()
        .success()
        .stdout(contains("tasks merged: 0, 1, 2"));
    for lib in LIBS {
        assert_eq!(
            env.transforms(&env.out(), lib),
            sorted(&TRANSFORMS),
            "{lib}"
        );
    }
    let submits = env.calls().matches("\"submit\"").count();
    assert_eq!(submits, 2, "one first job, one retry: {}", env.calls());
}

#[test]
fn a_task_that_exits_0_without_done_json_is_reported_not_merged() {
    let env = Env::new();
    env.run(&[])
        .env("FAKE_GCLOUD_NO_DONE_TASK", "2")
        .assert()
        .success();
    env.cloud("fetch")
        .assert()
        .code(1)
        .stdout(contains("tasks merged: 0, 1"))
        .stderr(contains("task 2 not merged: exited 0 without DONE.json"));
}

#[test]
fn a_failed_upload_submits_nothing() {
    let env = Env::new();
    env.run(&[])
        .env("FAKE_GCLOUD_FAIL_UPLOAD", "1")
        .assert()
        .code(1)
        .stderr(contains("nothing was submitted"))
        .stderr(contains("fake upload failure"));
    assert!(!env.calls().contains("\"submit\""), "{}", env.calls());
    assert!(!env.out().join("cloud_run.json").exists());
}
