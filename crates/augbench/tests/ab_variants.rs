//! A/B runs end to end with real Pillow environments: two variants of Pillow in one interleaved
//! run, each in its own environment and result file, then `compare --fail-on-regression` on the
//! run's folder. A local checkout whose `Image.resize` is made slower (scripts/ab_fixture.sh)
//! must fail the gate (exit 1); the same version as two variants (A/A) must pass it.
//! Uses the shared environment cache on purpose (the variant environments build once).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

use std::path::{Path, PathBuf};
use std::process::Output;

use augbench_core::results::ResultFile;

fn bin() -> assert_cmd::Command {
    assert_cmd::Command::cargo_bin("augbench").unwrap()
}

fn text(out: &Output) -> String {
    format!(
        "status {:?}\n--- stdout\n{}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The pinned Pillow of envs/pillow.txt (the released version the checkout is compared with).
fn locked_pillow() -> String {
    let lock = include_str!("../../../envs/pillow.txt");
    let line = lock.lines().find(|l| l.starts_with("pillow==")).unwrap();
    line.trim().to_string()
}

/// An A/B micro run of `Resize` and `HorizontalFlip` with the two `--variant` flags.
fn ab_run(out: &Path, baseline: &str, current: &str) -> Output {
    let config =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/examples/ab_versions.yaml");
    bin()
        .arg("run")
        .arg("--config")
        .arg(config)
        .arg("--output")
        .arg(out)
        .args(["--transforms", "Resize,HorizontalFlip", "--num-items", "20"])
        .args(["--num-runs", "3", "--no-refresh-requirements"])
        .args(["--variant", baseline, "--variant", current])
        .output()
        .unwrap()
}

/// `compare <out> --fail-on-regression` with a minimum effect far above this machine's noise
/// and far below the injected slowdown (resize twice as long: about 0.6× throughput).
fn gate(out: &Path) -> Output {
    bin()
        .arg("compare")
        .arg(out)
        .args(["--fail-on-regression", "--min-effect", "0.15"])
        .output()
        .unwrap()
}

fn result_files(dir: &Path) -> Vec<PathBuf> {
    let micro = dir.join("image-rgb/micro");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&micro)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
}

fn slow_checkout(dir: &Path) -> PathBuf {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/ab_fixture.sh");
    let checkout = dir.join("pillow-slow");
    let out = std::process::Command::new("bash")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_augbench"))
        .arg(&checkout)
        .arg("1.0")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    checkout
}

#[test]
fn a_slower_local_checkout_fails_the_gate_in_one_run() {
    let tmp = tempfile::tempdir().unwrap();
    let checkout = slow_checkout(tmp.path());
    let out = tmp.path().join("ab");
    let base = format!("pillow@released={}", locked_pillow());
    let cur = format!("pillow@local={}", checkout.display());
    let run = ab_run(&out, &base, &cur);
    assert!(run.status.success(), "{}", text(&run));
    let files = result_files(&out);
    let names: Vec<String> = files
        .iter()
        .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        [
            "pillow@local_micro_results.json",
            "pillow@released_micro_results.json"
        ]
    );
    let local: ResultFile =
        serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
    let v = local.metadata.variant.as_ref().unwrap();
    assert_eq!(
        (v.library.as_str(), v.baseline.as_str()),
        ("pillow", "pillow@released")
    );
    assert_eq!(local.metadata.library, "pillow@local");
    let paired = &local.results["Resize"].paired;
    assert!(
        paired.iter().all(|p| p.partner == "pillow@released"),
        "{paired:?}"
    );
    let verdicts = gate(&out);
    let shown = text(&verdicts);
    assert_eq!(
        verdicts.status.code(),
        Some(1),
        "{shown}\n--- run\n{}",
        text(&run)
    );
    assert!(
        shown.contains("| Resize |") && shown.contains("**slower**"),
        "{shown}"
    );
}

#[test]
fn the_same_version_twice_passes_the_gate() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("aa");
    let pin = locked_pillow();
    let run = ab_run(&out, &format!("pillow@a={pin}"), &format!("pillow@b={pin}"));
    assert!(run.status.success(), "{}", text(&run));
    let verdicts = gate(&out);
    let shown = text(&verdicts);
    assert_eq!(verdicts.status.code(), Some(0), "{shown}");
    assert!(shown.contains("A/B pillow@b ÷ pillow@a"), "{shown}");
    assert!(!shown.contains("**slower**"), "{shown}");
}

#[test]
fn a_pin_that_does_not_resolve_stops_the_run_before_anything_is_built() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("bad");
    let run = ab_run(
        &out,
        &format!("pillow@released={}", locked_pillow()),
        "pillow@none=pillow==0.0.424242",
    );
    let shown = text(&run);
    assert_eq!(run.status.code(), Some(2), "{shown}");
    assert!(
        shown.contains("pin `pillow==0.0.424242` of variant `pillow@none` does not resolve"),
        "{shown}"
    );
    assert!(!out.join("image-rgb").exists(), "nothing measured: {shown}");
}

#[test]
fn a_variant_whose_environment_fails_costs_that_variant_only() {
    let tmp = tempfile::tempdir().unwrap();
    let reqs = tmp.path().join("broken.txt");
    std::fs::write(&reqs, "augbench-no-such-distribution-xyz==1.0\n").unwrap();
    let out = tmp.path().join("half");
    let run = ab_run(
        &out,
        &format!("pillow@released={}", locked_pillow()),
        &format!("pillow@broken={}", reqs.display()),
    );
    let shown = text(&run);
    assert_eq!(run.status.code(), Some(1), "{shown}");
    assert!(shown.contains("pillow@broken FAILED"), "{shown}");
    assert!(
        shown.contains("augbench-no-such-distribution-xyz"),
        "installer's lines: {shown}"
    );
    let names: Vec<PathBuf> = result_files(&out);
    assert_eq!(names.len(), 1, "{names:?}");
    assert!(names[0].ends_with("pillow@released_micro_results.json"));
}
