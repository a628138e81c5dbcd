//! `augbench check equivalence` with the real libraries: the whole curated rgb set across every
//! CPU library (Python workers in their cached environments, the Rust crates natively) must find
//! no mismatch the spec's tolerances and known differences do not explain, and the five
//! transforms of the example must each be compared across Python and Rust libraries.

use std::collections::BTreeSet;

use serde_json::Value;

const EXAMPLE: &[&str] = &[
    "HorizontalFlip",
    "Resize",
    "Grayscale",
    "Invert",
    "CenterCrop224",
];

fn check(args: &[&str]) -> (std::process::Output, Value) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("check.json");
    let out = assert_cmd::Command::cargo_bin("augbench")
        .unwrap()
        .args(["check", "equivalence", "--json"])
        .arg(&json)
        .args(args)
        .output()
        .unwrap();
    let value = std::fs::read_to_string(&json)
        .map(|t| serde_json::from_str(&t).unwrap())
        .unwrap_or(Value::Null);
    (out, value)
}

#[test]
fn the_rgb_set_matches_across_every_library() {
    let (out, check) = check(&[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "a mismatch (or a failure):\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let transforms = check["transforms"].as_array().unwrap();
    let rgb = augbench_core::Registry::get().set("rgb").unwrap();
    assert_eq!(transforms.len(), rgb.len());
    for t in transforms {
        let verdict = t["verdict"].as_str().unwrap();
        assert_ne!(verdict, "error", "{t}");
        assert_ne!(verdict, "mismatch", "{t}");
    }
    for name in EXAMPLE {
        let t = transforms.iter().find(|t| t["transform"] == *name).unwrap();
        assert!(
            matches!(t["verdict"].as_str(), Some("ok" | "known_difference")),
            "{t}"
        );
        let compared: BTreeSet<&str> = t["libraries"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|l| l["verdict"] == "ok" || l["verdict"] == "known_difference")
            .filter_map(|l| l["library"].as_str())
            .collect();
        assert!(compared.contains("albumentationsx"), "{name}: {compared:?}");
        assert!(compared.contains("torchvision"), "{name}: {compared:?}");
        assert!(compared.contains("image"), "{name}: {compared:?}");
    }
    assert!(
        stdout.contains("HorizontalFlip: ok (reference albumentationsx)"),
        "{stdout}"
    );
}

#[test]
fn an_unknown_library_or_transform_is_a_usage_error() {
    let (out, _) = check(&["--libraries", "opencv"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("`opencv` cannot be checked"), "{stderr}");
    assert!(
        stderr.contains("kornia-rs"),
        "the hint lists the choices: {stderr}"
    );
    let (out, _) = check(&["--transforms", "Flipp"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn native_crates_alone_compare_without_python() {
    let (out, check) = check(&[
        "--libraries",
        "image,kornia-rs,fast_image_resize",
        "--transforms",
        "Resize,HorizontalFlip,Rotate",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let t = &check["transforms"][0];
    assert_eq!(t["reference"], "image", "{t}");
    assert_eq!(check["transforms"][2]["class"], "random");
}
