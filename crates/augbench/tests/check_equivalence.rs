//! `augbench check equivalence` with the real libraries: the whole curated rgb set across every
//! CPU library (Python workers in their cached environments, the Rust crates natively) must find
//! no mismatch the spec's tolerances and known differences do not explain, and the five
//! transforms of the example must each be compared across Python and Rust libraries.
//! And inside `augbench run` (`execution.check_equivalence: true`): `equivalence.json` beside the
//! results, each library's summary in its metadata, kept by `--resume`, shown in the HTML report.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

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
    let (out, _) = check(&["--libraries", "imgaug"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("`imgaug` cannot be checked"), "{stderr}");
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

const RUN_LIBRARIES: &[&str] = &["pillow", "image", "albumentationsx"];

/// A tiny micro run of HorizontalFlip and Grayscale with the check on or off, into `out`.
fn run_with_check(
    dir: &std::path::Path,
    on: bool,
    libraries: &[&str],
    extra: &[&str],
) -> std::process::Output {
    let out = dir.join("out");
    let config = dir.join(format!("run_{on}.yaml"));
    let text = format!(
        "version: 1\nselection:\n  scenario: image-rgb\n  mode: micro\n  libraries: [{}]\n  transforms: [HorizontalFlip, Grayscale]\ndata:\n  num_items: 8\nexecution:\n  num_runs: 2\n  processes: 1\n  check_equivalence: {on}\noutput:\n  output_dir: {}\n",
        libraries.join(", "),
        out.display()
    );
    std::fs::write(&config, text).unwrap();
    assert_cmd::Command::cargo_bin("augbench")
        .unwrap()
        .args(["run", "--no-refresh-requirements", "--config"])
        .arg(&config)
        .args(extra)
        .output()
        .unwrap()
}

fn shown(out: &std::process::Output) -> String {
    format!(
        "status {:?}\n--- stdout\n{}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// `metadata.equivalence` of `library`'s micro result file under `out`.
fn summary_of(out: &std::path::Path, library: &str) -> Value {
    let path = out.join(format!("image-rgb/micro/{library}_micro_results.json"));
    let text = std::fs::read_to_string(&path).unwrap();
    // Strictly typed first: the metadata's schema denies unknown fields.
    let _: augbench_core::results::ResultFile = serde_json::from_str(&text).unwrap();
    let file: Value = serde_json::from_str(&text).unwrap();
    file["metadata"]["equivalence"].clone()
}

#[test]
fn a_run_with_the_check_on_writes_it_records_it_resumes_it_and_reports_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let first = run_with_check(dir.path(), true, RUN_LIBRARIES, &[]);
    let text = shown(&first);
    assert!(first.status.success(), "{text}");
    assert!(
        text.contains("Equivalence check (before timing; not timed)"),
        "{text}"
    );
    assert!(
        text.contains("equivalence check: 1 known difference, 1 ok → "),
        "the run summary states the check: {text}"
    );
    let file = out.join("equivalence.json");
    let check: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let mut libs: Vec<&str> = check["libraries"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    libs.sort();
    assert_eq!(libs, ["albumentationsx", "image", "pillow"]);
    assert_eq!(check["transforms"][0]["transform"], "HorizontalFlip");
    let image = summary_of(&out, "image");
    assert_eq!(image["file"], "equivalence.json");
    let gray = &image["transforms"]["Grayscale"];
    assert_eq!(gray["library_verdict"], "known_difference", "{image}");
    assert!(gray["diff"]["max_abs"].as_u64().unwrap() > 0, "{gray}");
    assert!(gray["note"].as_str().unwrap().contains("709"), "{gray}");
    let flip = &summary_of(&out, "pillow")["transforms"]["HorizontalFlip"];
    assert_eq!(flip["library_verdict"], "ok", "{flip}");
    assert_eq!(flip["diff"]["max_abs"], 0, "{flip}");
    assert_eq!(flip["reference"], "albumentationsx", "{flip}");
    assert_eq!(
        summary_of(&out, "albumentationsx")["transforms"]["HorizontalFlip"]["note"],
        "reference"
    );

    let written = std::fs::read(&file).unwrap();
    let again = run_with_check(dir.path(), true, RUN_LIBRARIES, &["--resume"]);
    let text = shown(&again);
    assert!(again.status.success(), "{text}");
    assert!(
        text.contains("resume: keeping the equivalence check"),
        "{text}"
    );
    assert_eq!(
        std::fs::read(&file).unwrap(),
        written,
        "--resume keeps the check as written"
    );
    assert_eq!(summary_of(&out, "image")["transforms"]["Grayscale"], *gray);

    let page = dir.path().join("report.html");
    let report = assert_cmd::Command::cargo_bin("augbench")
        .unwrap()
        .args(["report", "--results"])
        .arg(&out)
        .arg("--out")
        .arg(&page)
        .output()
        .unwrap();
    assert!(report.status.success(), "{}", shown(&report));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("<h3>Same work? (equivalence check)</h3>"),
        "no table"
    );
    assert!(
        html.contains("known difference · max "),
        "image's Grayscale cell"
    );
}

#[test]
fn a_run_with_the_check_off_writes_no_check() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_with_check(dir.path(), false, &["image"], &[]);
    assert!(out.status.success(), "{}", shown(&out));
    assert!(!dir.path().join("out/equivalence.json").exists());
    assert!(summary_of(&dir.path().join("out"), "image").is_null());
    assert!(!shown(&out).contains("equivalence check"));
}
