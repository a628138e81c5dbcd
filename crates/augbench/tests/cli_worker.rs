//! `augbench worker` as a real process: the protocol on stdout, and the debug faults
//! (`AUGBENCH_TEST_FAULTS=1`) that the coordinator's crash/hang handling is tested against.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

fn worker(library: &str, faults: bool) -> Command {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("augbench"));
    cmd.args(["worker", "--library", library]);
    if faults {
        cmd.env("AUGBENCH_TEST_FAULTS", "1");
    } else {
        cmd.env_remove("AUGBENCH_TEST_FAULTS");
    }
    cmd
}

fn one_jpeg(dir: &Path) -> String {
    let out = dir.join("data");
    assert_cmd::Command::cargo_bin("augbench")
        .unwrap()
        .args(["data", "synth", "--n", "1", "--out"])
        .arg(&out)
        .assert()
        .success();
    out.join("img_000000.jpg").display().to_string()
}

fn script(path: &str, transform: &str) -> String {
    [
        json!({"op": "hello"}),
        json!({"op": "load", "media": "image", "paths": [path], "channels": 3, "clip_length": 16, "device": "cpu"}),
        json!({"op": "prepare", "transform": transform, "params": {}, "device": "cpu"}),
        json!({"op": "time", "start": 0, "count": 1, "loops": 1}),
        json!({"op": "shutdown"}),
    ]
    .iter()
    .map(|r| format!("{r}\n"))
    .collect()
}

fn lines(stdout: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_normal_session_answers_every_request_and_exits_zero() {
    let t = tempfile::tempdir().unwrap();
    let path = one_jpeg(t.path());
    let out = worker("imageproc", false)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            c.stdin
                .take()
                .unwrap()
                .write_all(script(&path, "Identity").as_bytes())?;
            c.wait_with_output()
        })
        .unwrap();
    assert!(out.status.success());
    let r = lines(&out.stdout);
    assert_eq!(r.len(), 5);
    assert!(r.iter().all(|v| v["ok"] == true), "{r:?}");
}

fn run_fault(transform: &str) -> std::process::Output {
    let t = tempfile::tempdir().unwrap();
    let path = one_jpeg(t.path());
    let mut child = worker("image", true)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(script(&path, transform).as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn exit_fault_ends_the_process_with_code_3() {
    let out = run_fault("__exit");
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(
        lines(&out.stdout).len(),
        3,
        "hello, load and prepare were answered"
    );
}

#[test]
fn panic_fault_kills_the_worker_without_corrupting_stdout() {
    let out = run_fault("__panic");
    assert!(!out.status.success());
    assert_eq!(lines(&out.stdout).len(), 3);
    assert!(String::from_utf8_lossy(&out.stderr).contains("injected fault"));
}

#[test]
fn hang_fault_never_answers_time() {
    let t = tempfile::tempdir().unwrap();
    let path = one_jpeg(t.path());
    let mut child = worker("image", true)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(script(&path, "__hang").as_bytes()).unwrap();
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    for _ in 0..3 {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        assert!(line.contains("\"ok\":true"), "{line}");
    }
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        child.try_wait().unwrap().is_none(),
        "the worker must still be hanging"
    );
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn faults_are_off_without_the_env_var() {
    let t = tempfile::tempdir().unwrap();
    let path = one_jpeg(t.path());
    let out = worker("image", false)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            c.stdin
                .take()
                .unwrap()
                .write_all(script(&path, "__exit").as_bytes())?;
            c.wait_with_output()
        })
        .unwrap();
    assert!(out.status.success());
    let r = lines(&out.stdout);
    assert_eq!(r[2]["kind"], "unsupported");
}

#[test]
fn unknown_library_is_rejected_by_the_cli() {
    worker("opencv", false)
        .output()
        .map(|o| assert_eq!(o.status.code(), Some(2)))
        .unwrap();
}
