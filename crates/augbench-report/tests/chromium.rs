//! The HTML report in headless Chromium (through scripts/chromium_check.sh): it loads without
//! console output, the screenshot is not blank, and a `#sort=` hash sorts the tables. A page
//! with a script error must fail the same check. Without Chromium: skipped with a message, or a
//! failure where the run promises it (CI).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use augbench_report::{TableOptions, html, load_paths};

/// Whether Chromium is on PATH. Where the run promises it (`CI` set, or `AUGBENCH_EXPECT_TOOLS`
/// naming chromium) a missing one fails the test; elsewhere the test skips with a message.
fn chromium_on_path() -> bool {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let found = std::env::split_paths(&path).any(|d| {
        ["chromium", "chromium-browser", "google-chrome"]
            .iter()
            .any(|b| d.join(b).is_file())
    });
    let promised = std::env::var_os("CI").is_some_and(|v| !v.is_empty())
        || std::env::var("AUGBENCH_EXPECT_TOOLS")
            .is_ok_and(|t| t.split(',').any(|n| n.trim() == "chromium"));
    assert!(
        found || !promised,
        "this run promises Chromium (CI or AUGBENCH_EXPECT_TOOLS) and none is on PATH (Debian: apt-get install -y chromium)"
    );
    found
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/chromium_check.sh")
}

fn check(page: &Path, out: &Path, hash: &str) -> std::process::Output {
    Command::new("bash")
        .arg(script())
        .arg(page)
        .arg(out)
        .arg(hash)
        .output()
        .unwrap()
}

/// Transform names of the first results table, in DOM order.
fn first_table_order(dom: &str) -> Vec<String> {
    let start = dom.find("class=\"results sortable\"").unwrap();
    let body = &dom[start..start + dom[start..].find("</tbody>").unwrap()];
    body.split("<tr><td data-value=\"")
        .skip(1)
        .map(|s| s[..s.find('"').unwrap()].to_string())
        .collect()
}

#[test]
fn report_renders_sorts_and_logs_nothing() {
    if !chromium_on_path() {
        eprintln!("SKIPPED: no chromium on PATH (Debian: apt-get install -y chromium)");
        return;
    }
    let dir = common::demo_dir();
    let data = load_paths(&[dir.path().to_path_buf()]).unwrap();
    let page = dir.path().join("report.html");
    std::fs::write(
        &page,
        html::render(&data, &TableOptions::default()).unwrap(),
    )
    .unwrap();
    let out = dir.path().join("chromium");
    let run = check(&page, &out, "sort=transform:desc");
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );

    let dom = std::fs::read_to_string(out.join("dom.html")).unwrap();
    assert!(
        dom.contains("data-sorted=\"transform:2\""),
        "both tables sorted"
    );
    let order = first_table_order(&dom);
    let mut expected = order.clone();
    expected.sort_by(|a, b| b.cmp(a));
    assert_eq!(order, expected);
    assert_eq!(order.first().map(String::as_str), Some("Rotate"));

    let shot = image::open(out.join("screenshot.png")).unwrap().to_rgb8();
    assert_eq!(shot.width(), 1200);
    let ink = shot.pixels().filter(|p| p.0 != [255, 255, 255]).count() as f64
        / f64::from(shot.width() * shot.height());
    assert!(ink > 0.02, "screenshot is nearly blank ({ink})");
}

#[test]
fn sorting_by_speedup_puts_the_largest_first() {
    if !chromium_on_path() {
        eprintln!("SKIPPED: no chromium on PATH (Debian: apt-get install -y chromium)");
        return;
    }
    let dir = common::demo_dir();
    let data = load_paths(&[dir.path().to_path_buf()]).unwrap();
    let page = dir.path().join("report.html");
    std::fs::write(
        &page,
        html::render(&data, &TableOptions::default()).unwrap(),
    )
    .unwrap();
    let run = check(&page, &dir.path().join("c"), "sort=speedup");
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let dom = std::fs::read_to_string(dir.path().join("c/dom.html")).unwrap();
    let order = first_table_order(&dom);
    assert_eq!(
        order,
        [
            "ColorJitter",
            "GaussianBlur",
            "Rotate",
            "Resize",
            "HorizontalFlip",
            "ElasticTransform"
        ]
    );
}

#[test]
fn a_script_error_fails_the_check() {
    if !chromium_on_path() {
        eprintln!("SKIPPED: no chromium on PATH (Debian: apt-get install -y chromium)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("bad.html");
    std::fs::write(
        &page,
        "<!DOCTYPE html><html><body><p>x</p><script>notDefined();</script></body></html>",
    )
    .unwrap();
    let run = check(&page, &dir.path().join("out"), "");
    assert_eq!(run.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&run.stderr).contains("Uncaught ReferenceError"));
}
