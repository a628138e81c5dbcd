//! One run per output folder, through the real binary: a lock held by a live process refuses a
//! second `run` at once (exit 2, naming the holder); a lock whose process is gone is taken over.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use augbench_core::naming;
use augbench_host::run_lock::{Holder, read_holder, this_host};
use predicates::prelude::*;

fn config(root: &Path) -> PathBuf {
    let text = format!(
        "version: 1\nselection:\n  scenario: image-rgb\n  mode: micro\n  libraries: [image]\n  transforms: [HorizontalFlip]\n\
         data:\n  num_items: 4\nexecution:\n  num_runs: 2\n  min_time: 0.002\n  warmup:\n    max_seconds: 0.1\n\
         output:\n  output_dir: {}\n",
        root.join("out").display()
    );
    let p = root.join("cfg.yaml");
    std::fs::write(&p, text).unwrap();
    p
}

fn write_lock(root: &Path, pid: u32) -> PathBuf {
    let out = root.join("out");
    std::fs::create_dir_all(&out).unwrap();
    let holder = Holder {
        pid,
        started: "2025-01-02T03:04:05Z".into(),
        host: this_host(),
    };
    let path = naming::run_lock(&out);
    std::fs::write(&path, serde_json::to_string(&holder).unwrap()).unwrap();
    path
}

fn run(root: &Path) -> assert_cmd::assert::Assert {
    Command::cargo_bin("augbench")
        .unwrap()
        .env("AUGBENCH_CACHE", root.join("cache"))
        .env_remove("AUGBENCH_TEST_FAULTS")
        .args(["run", "--config"])
        .arg(config(root))
        .assert()
}

#[test]
fn a_live_holder_refuses_a_second_run_naming_its_pid() {
    let tmp = tempfile::tempdir().unwrap();
    let mut holder = std::process::Command::new("sleep")
        .arg("60")
        .spawn()
        .unwrap();
    let lock = write_lock(tmp.path(), holder.id());
    let assert = run(tmp.path())
        .code(2)
        .stderr(predicate::str::contains(format!("pid {}", holder.id())))
        .stderr(predicate::str::contains("started 2025-01-02T03:04:05Z"));
    holder.kill().unwrap();
    holder.wait().unwrap();
    drop(assert);
    assert!(lock.exists(), "the holder's lock is left alone");
    assert!(
        !tmp.path().join("out/image-rgb").exists(),
        "nothing was measured"
    );
}

#[test]
fn a_stale_lock_is_taken_over_and_released_at_the_end() {
    let tmp = tempfile::tempdir().unwrap();
    let mut gone = std::process::Command::new("true").spawn().unwrap();
    let pid = gone.id();
    gone.wait().unwrap();
    let lock = write_lock(tmp.path(), pid);
    run(tmp.path())
        .success()
        .stderr(predicate::str::contains("took over the stale lock"))
        .stderr(predicate::str::contains(format!("pid {pid}")));
    assert!(
        tmp.path()
            .join("out/image-rgb/micro/image_micro_results.json")
            .exists()
    );
    assert_eq!(read_holder(&lock), None, "released on exit");
    assert!(!lock.exists());
}
