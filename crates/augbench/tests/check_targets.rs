//! `augbench check equivalence --targets` with the real workers (cached environments): the
//! libraries' emitted masks, boxes and keypoints against augbench's reference must be ok or a
//! known difference; a library without targets or a transform the reference does not cover is a
//! usage error.

use serde_json::Value;

fn check_targets(args: &[&str]) -> (std::process::Output, Value) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let out = assert_cmd::Command::cargo_bin("augbench")
        .unwrap()
        .args(["check", "equivalence", "--targets", "--json"])
        .arg(&json)
        .args(args)
        .output()
        .unwrap();
    let value = std::fs::read_to_string(&json)
        .map(|t| serde_json::from_str(&t).unwrap())
        .unwrap_or(Value::Null);
    (out, value)
}

/// The line of `library` for `transform`.
fn line<'a>(check: &'a Value, transform: &str, library: &str) -> &'a Value {
    let t = check["transforms"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["transform"] == transform)
        .unwrap();
    t["libraries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["library"] == library)
        .unwrap()
}

fn assert_agrees(out: &std::process::Output, check: &Value, libraries: &[&str]) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("targets check: "), "{stdout}");
    for t in ["HorizontalFlip", "Resize"] {
        for lib in libraries {
            let l = line(check, t, lib);
            assert!(
                matches!(l["verdict"].as_str(), Some("ok" | "known_difference")),
                "{t} {lib}: {l}"
            );
            assert_eq!(l["boxes"]["kept"], l["boxes"]["expected"], "{t} {lib}: {l}");
            assert!(l["boxes"]["expected"].as_u64().unwrap() > 0, "{l}");
            assert!(l["keypoints"]["expected"].as_u64().unwrap() > 0, "{l}");
            assert!(
                l["mask"]["share"].as_f64().unwrap() < 0.01,
                "{t} {lib}: {l}"
            );
        }
    }
}

#[test]
fn albumentationsx_moves_targets_like_the_reference() {
    let (out, check) = check_targets(&[
        "--libraries",
        "albumentationsx",
        "--transforms",
        "HorizontalFlip,Resize",
    ]);
    assert_agrees(&out, &check, &["albumentationsx"]);
    let flip = line(&check, "HorizontalFlip", "albumentationsx");
    assert_eq!(flip["verdict"], "ok", "{flip}");
    assert_eq!(
        flip["mask"]["share"], 0.0,
        "a flip moves whole pixels: {flip}"
    );
    assert!(
        flip["keypoints"]["max_abs_px"].as_f64().unwrap() < 0.001,
        "{flip}"
    );
    assert_eq!(check["inputs"][1], serde_json::json!([333, 251]));
}

#[test]
fn torchvision_too_and_the_table_has_a_column_per_library() {
    let (out, check) = check_targets(&[
        "--libraries",
        "albumentationsx,torchvision",
        "--transforms",
        "HorizontalFlip,Resize",
    ]);
    assert_agrees(&out, &check, &["albumentationsx", "torchvision"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let header = stdout.lines().next().unwrap();
    assert!(
        header.contains("albumentationsx") && header.contains("torchvision"),
        "{header}"
    );
}

#[test]
fn a_library_without_targets_or_an_uncovered_transform_is_a_usage_error() {
    let (out, _) = check_targets(&["--libraries", "pillow"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("`pillow` cannot be checked on targets"),
        "{stderr}"
    );
    assert!(
        stderr.contains("albumentationsx"),
        "the hint lists the choices: {stderr}"
    );
    let (out, _) = check_targets(&["--transforms", "Rotate"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("not covered by the targets check"),
        "{stderr}"
    );
}
