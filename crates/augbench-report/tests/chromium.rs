//! The HTML report in headless Chromium (through scripts/chromium_check.sh): it loads without
//! console output, the screenshot is not blank, a `#sort=` hash sorts the tables, a `#ref=`
//! hash switches the reference (columns, speedups, footer, bars), `#view=` opens the bar,
//! pipeline, video and A/B views, and rows no library supports are one line. A page with a
//! script error must fail the same check. Without Chromium the tests fail under CI (`CI` set) and are
//! skipped with a message elsewhere.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use augbench_core::Mode;
use augbench_report::sample::{self, Outcome};
use augbench_report::{TableOptions, html, load_paths};

/// Whether Chromium is on PATH. Where the run promises it (`CI` set, or `AUGBENCH_EXPECT_TOOLS`
/// naming chromium) a missing one fails the test; elsewhere the test skips with a message.
fn chromium_on_path() -> bool {
    if std::env::var_os("CHROMIUM").is_some() {
        return true;
    }
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

/// Whether the browser tests can run: CI promises Chromium, so there its absence fails.
fn have_chromium() -> bool {
    if chromium_on_path() {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "CI promises Chromium for the report tests: install it (Debian: apt-get install -y chromium) or set CHROMIUM"
    );
    eprintln!("SKIPPED: no chromium on PATH (Debian: apt-get install -y chromium)");
    false
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

/// Writes the report of `dir` and returns the DOM Chromium saw after the scripts ran with `hash`.
fn dom_of(dir: &Path, hash: &str) -> String {
    let data = load_paths(&[dir.to_path_buf()]).unwrap();
    let page = dir.join("report.html");
    std::fs::write(
        &page,
        html::render(&data, &TableOptions::default()).unwrap(),
    )
    .unwrap();
    let out = dir.join("chromium");
    let run = check(&page, &out, hash);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    std::fs::read_to_string(out.join("dom.html")).unwrap()
}

/// The text of the first element after `from` that opens with `open`, up to `close`.
fn slice<'a>(dom: &'a str, from: &str, open: &str, close: &str) -> &'a str {
    let at = dom.find(from).unwrap_or_else(|| panic!("no {from:?}"));
    let rest = &dom[at..];
    let start = rest.find(open).unwrap_or_else(|| panic!("no {open:?}"));
    let rest = &rest[start..];
    &rest[..rest.find(close).unwrap_or(rest.len())]
}

/// Transform names of the first results table, in DOM order.
fn first_table_order(dom: &str) -> Vec<String> {
    let body = slice(dom, "class=\"results sortable\"", "<tbody>", "</tbody>");
    body.split("<tr><td data-value=\"")
        .skip(1)
        .map(|s| s[..s.find('"').unwrap()].to_string())
        .collect()
}

/// The `data-lib` of each header cell of the first results table, in DOM order.
fn first_table_columns(dom: &str) -> Vec<String> {
    let head = slice(dom, "class=\"results sortable\"", "<thead>", "</thead>");
    head.split("data-lib=\"")
        .skip(1)
        .map(|s| s[..s.find('"').unwrap()].to_string())
        .collect()
}

/// The speedup cell of `transform` in the first results table.
fn speedup_of(dom: &str, transform: &str) -> String {
    let table = slice(dom, "class=\"results sortable\"", "<tbody>", "</tbody>");
    let row = slice(
        table,
        &format!("data-value=\"{transform}\""),
        "<td",
        "</tr>",
    );
    let cell = &row[row.find("class=\"speedup\"").unwrap()..];
    cell[cell.find('>').unwrap() + 1..cell.find("</td>").unwrap()].to_string()
}

#[test]
fn report_renders_sorts_and_logs_nothing() {
    if !have_chromium() {
        return;
    }
    let dir = common::demo_dir();
    let dom = dom_of(dir.path(), "sort=transform:desc");
    assert!(
        dom.contains("data-sorted=\"transform:2\""),
        "both tables sorted"
    );
    let order = first_table_order(&dom);
    let mut expected = order.clone();
    expected.sort_by(|a, b| b.cmp(a));
    assert_eq!(order, expected);
    assert_eq!(order.first().map(String::as_str), Some("Rotate"));
    assert!(dom.contains("data-reference=\"albumentationsx\""));

    let shot = image::open(dir.path().join("chromium/screenshot.png"))
        .unwrap()
        .to_rgb8();
    assert_eq!(shot.width(), 1200);
    let ink = shot.pixels().filter(|p| p.0 != [255, 255, 255]).count() as f64
        / f64::from(shot.width() * shot.height());
    assert!(ink > 0.02, "screenshot is nearly blank ({ink})");
}

#[test]
fn sorting_by_speedup_puts_the_largest_first() {
    if !have_chromium() {
        return;
    }
    let dir = common::demo_dir();
    let order = first_table_order(&dom_of(dir.path(), "sort=speedup"));
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
fn a_ref_hash_switches_the_reference_in_the_page() {
    if !have_chromium() {
        return;
    }
    let dir = common::demo_dir();
    let written = dom_of(dir.path(), "");
    assert_eq!(
        first_table_columns(&written),
        ["albumentationsx", "pillow", "torchvision"]
    );
    assert_eq!(speedup_of(&written, "HorizontalFlip"), "0.75×");

    let dom = dom_of(dir.path(), "ref=pillow");
    assert!(
        dom.contains("data-reference=\"pillow\""),
        "body records the reference"
    );
    assert_eq!(
        first_table_columns(&dom),
        ["pillow", "albumentationsx", "torchvision"],
        "the reference's column moves first"
    );
    // pillow 12000 img/s ÷ the fastest other (albumentationsx, 9000).
    assert_eq!(speedup_of(&dom, "HorizontalFlip"), "1.33×");
    assert_eq!(speedup_of(&dom, "Rotate"), "n/a", "pillow failed Rotate");
    let footer = slice(&dom, "class=\"footer\"", "<tbody>", "</tbody>");
    assert!(
        footer.starts_with(
            "<tbody><tr data-lib=\"pillow\"><td>pillow</td><td>3 / 6</td><td>reference</td>"
        ),
        "{footer}"
    );
    assert!(footer.contains("over 3 rows"), "{footer}");
    assert!(
        slice(&dom, "<select id=\"ref-select\"", "<select", "</select>")
            .contains("<option value=\"pillow\">")
    );
    assert!(dom.contains("chosen in this page"));
    assert!(
        dom.contains("class=\"chart-ref muted small stale\""),
        "the static charts say they were drawn for another reference"
    );
}

#[test]
fn the_bar_view_draws_every_row_on_one_log_scale() {
    if !have_chromium() {
        return;
    }
    let dir = common::demo_dir();
    let dom = dom_of(dir.path(), "view=bars&ref=torchvision");
    assert!(dom.contains("data-view=\"bars\""));
    let bars = slice(&dom, "class=\"bars\"", "<div", "</section>");
    assert_eq!(
        bars.matches("class=\"bar-row\"").count(),
        6,
        "one block per row"
    );
    assert!(bars.contains("log scale"));
    assert!(
        bars.contains("class=\"bar-line is-ref\" data-lib=\"torchvision\""),
        "the reference's bars are marked"
    );
    assert!(bars.contains("<b>9,000</b> img/s"));
    assert!(bars.contains("slow (≤20 img/s)"));
    let table_panel = slice(&dom, "class=\"group\"", "<div class=\"panel\"", ">");
    assert!(
        table_panel.contains("hidden"),
        "the table panel is hidden: {table_panel}"
    );
}

#[test]
fn the_pipeline_view_reads_each_library_against_its_own_ceiling() {
    if !have_chromium() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    common::write_all(dir.path(), &common::pipeline_files());
    let dom = dom_of(dir.path(), "view=pipeline");
    let card = slice(
        &dom,
        "class=\"ceiling-card is-ref\" data-lib=\"albumentationsx\"",
        "<h4",
        "class=\"ceiling-card",
    );
    assert!(card.contains("ceiling 1,000 img/s"), "{card}");
    assert!(card.contains("<b>92%</b> · 920"), "{card}");
    let other = slice(&dom, "data-lib=\"torchvision\"><h4", "<h4", "</div></div>");
    assert!(other.contains("<b>50%</b> · 400"), "{other}");
}

#[test]
fn the_video_view_shows_clips_and_frames() {
    if !have_chromium() {
        return;
    }
    let dir = common::demo_dir();
    let dom = dom_of(dir.path(), "view=video");
    let video = slice(&dom, "class=\"video-view\"", "<div", "</section>");
    // 45 clips/s × 16 frames per clip.
    assert!(
        video.contains("<b>45.0</b> clips/s · <b>720</b> frames/s"),
        "{video}"
    );
}

#[test]
fn the_ab_view_shows_each_transforms_ratio_interval_and_verdict() {
    if !have_chromium() {
        return;
    }
    let dir = common::ab_dir();
    let data = load_paths(&[dir.path().to_path_buf()]).unwrap();
    let report =
        augbench_report::judge::ab::compare(&data, augbench_core::policy::REGRESSION_MIN_EFFECT)
            .unwrap()
            .unwrap();
    let dom = dom_of(dir.path(), "view=ab");
    assert!(dom.contains("data-view=\"ab\""));
    let view = slice(&dom, "class=\"ab-view\"", "<h3", "</section>");
    assert!(
        view.starts_with("<h3 class=\"ab-pair\">pillow@13.0.0 ÷ pillow@11.3.0</h3>"),
        "{view}"
    );
    let row = |t: &str| slice(view, &format!("data-transform=\"{t}\""), "<td", "</tr>");
    let cell = |r: &str, class: &str| -> String {
        let c = &r[r.find(&format!("class=\"{class}\"")).unwrap()..];
        c[c.find('>').unwrap() + 1..c.find("</td>").unwrap()].to_string()
    };
    assert_eq!(
        view.matches("<tr class=\"ab-").count(),
        4,
        "one row per transform"
    );
    let expected = [
        ("Grayscale", "no change"),
        ("HorizontalFlip", "faster"),
        ("Resize", "slower"),
        ("Rotate", "not comparable: baseline ok, current error"),
    ];
    for ((t, verdict), r) in expected.iter().zip(&report.rows) {
        let shown = row(t);
        assert_eq!(cell(shown, "ab-verdict"), *verdict, "{t}");
        assert_eq!(cell(shown, "ab-ratio"), r.ratio_text(), "{t}");
        assert_eq!(cell(shown, "ab-interval"), r.interval_text(), "{t}");
    }
    assert_eq!(cell(row("Resize"), "ab-ratio"), "0.800");
    assert!(
        row("Resize").contains("class=\"ab-dot\""),
        "the ratio is drawn"
    );
    assert!(
        !row("Rotate").contains("class=\"ab-dot\""),
        "no ratio, no dot"
    );
    assert!(
        view.contains("A/B: 1 slower, 1 faster, 1 no change, 0 undecided, 1 not comparable"),
        "{view}"
    );
    let table_panel = slice(&dom, "class=\"group\"", "<div class=\"panel\"", ">");
    assert!(
        table_panel.contains("hidden"),
        "the A/B view is the one shown"
    );
}

#[test]
fn rows_no_library_supports_are_one_line() {
    if !have_chromium() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = |lib: &str, v: f64| {
        sample::result_file(
            "image-rgb",
            Mode::Micro,
            lib,
            "1",
            &[
                ("CLAHE", Outcome::Unsupported("no".into())),
                ("Equalize", Outcome::Unsupported("no".into())),
                ("Resize", sample::runs(v)),
            ],
        )
    };
    common::write_all(dir.path(), &[file("image", 100.0), file("pillow", 300.0)]);
    let dom = dom_of(dir.path(), "");
    assert_eq!(first_table_order(&dom), ["Resize"]);
    assert!(dom.contains("Not supported by any library here (2): CLAHE, Equalize"));
    assert!(
        dom.contains("data-reference=\"image\""),
        "a tie on measured rows goes to the first name"
    );
}

#[test]
fn a_script_error_fails_the_check() {
    if !have_chromium() {
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

/// The repository's published results folders (`results/*`, docs/publish.md): every file the
/// manifest lists has its size and SHA-256, and each page loads in Chromium without console
/// output and is not blank.
#[test]
fn the_published_folders_match_their_manifests_and_open_in_chromium() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../results");
    let folders: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    assert!(
        folders.len() >= 2,
        "results/ keeps the matrix and production folders"
    );
    let browser = have_chromium();
    for folder in folders {
        let manifest: serde_json::Value = serde_json::from_slice(
            &std::fs::read(folder.join(augbench_report::publish::MANIFEST_FILE)).unwrap(),
        )
        .unwrap();
        for f in manifest["files"].as_array().unwrap() {
            let bytes = std::fs::read(folder.join(f["path"].as_str().unwrap())).unwrap();
            assert_eq!(f["bytes"], bytes.len() as u64, "{}", folder.display());
            let sha = augbench_core::production::cell::sha256_hex(&bytes);
            assert_eq!(
                f["sha256"].as_str().unwrap(),
                sha,
                "{f} in {}",
                folder.display()
            );
        }
        if browser {
            let out = tempfile::tempdir().unwrap();
            let run = check(&folder.join("index.html"), out.path(), "");
            assert!(
                run.status.success(),
                "{}: {}",
                folder.display(),
                String::from_utf8_lossy(&run.stderr)
            );
        }
    }
}
