//! `augbench doctor` through the real binary: the machine card and the busy checks as text and as
//! JSON. Values are machine-specific, so the asserts are structural.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

use assert_cmd::Command;
use augbench_host::machine::SIMD_FLAGS;
use predicates::prelude::*;

fn doctor() -> Command {
    let mut c = Command::cargo_bin("augbench").unwrap();
    c.arg("doctor");
    c
}

#[test]
fn text_output_names_every_card_line_and_both_checks() {
    let mut a = doctor().assert().success();
    for line in [
        "machine card",
        "cpu",
        "simd",
        "cores / threads",
        "memory",
        "gpus",
        "governor",
        "kernel",
        "virtualised",
        "augbench",
        "checks",
        "load per thread",
        "cpu steal",
    ] {
        a = a.stdout(predicate::str::contains(line));
    }
    a.stdout(predicate::str::contains(env!("CARGO_PKG_VERSION")));
}

#[test]
fn json_output_is_the_card_with_its_state_and_the_checks() {
    let out = doctor().arg("--json").output().unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let card: augbench_core::machine_card::MachineCard =
        serde_json::from_value(v["card"].clone()).expect("the card's schema");
    let build = card.build.expect("the build");
    assert_eq!(build.version, env!("CARGO_PKG_VERSION"));
    assert!(!build.git_sha.is_empty() && !build.target.is_empty());
    assert!(card.cpu_count >= 1);
    assert!(card.memory_total_bytes > 0, "memory is on the card");
    let simd = card.simd.expect("the SIMD list");
    assert!(simd.iter().all(|f| SIMD_FLAGS.contains(&f.as_str())));
    let state = card.before.expect("the state now");
    assert!(state.load_1m >= 0.0 && state.load_per_thread >= 0.0);
    let names: Vec<&str> = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["load per thread", "cpu steal"]);
    assert!(v["checks"][0]["ok"].is_boolean());
}
