//! The HTML report: one self-contained file (no network loads), with system info, versions,
//! run parameters, sortable tables, inline SVG plots, the legend and the reasons for failures;
//! a pipeline group marks its decode-ceiling row.

mod common;

use augbench_report::{TableOptions, html, load_paths};

fn report() -> String {
    let dir = common::demo_dir();
    let data = load_paths(&[dir.path().to_path_buf()]).unwrap();
    html::render(&data, &TableOptions::default()).unwrap()
}

#[test]
fn is_self_contained() {
    let page = report();
    for banned in [
        "<link",
        " src=",
        "@import",
        "url(",
        "https://",
        "fetch(",
        "XMLHttpRequest",
    ] {
        assert!(!page.contains(banned), "report contains {banned:?}");
    }
    // The only URL is the SVG namespace, which is a name, not a load.
    let urls = page.matches("http://").count();
    assert_eq!(urls, page.matches("http://www.w3.org/2000/svg").count());
}

#[test]
fn holds_every_section() {
    let page = report();
    for needle in [
        "<h2>System</h2>",
        "Sample CPU @ 3.0GHz",
        "<h2>Library versions</h2>",
        "torchvision</td><td>0.29.0",
        "Run parameters and thread settings",
        "slow_threshold_sec_per_item",
        "<h2>Legend</h2>",
        "≤20 img/s",
        "class=\"results sortable\"",
        "data-key=\"speedup\"",
        "<svg",
        "Transforms not measured, per library",
        "worker exited with code -11",
        "no hue jitter in Pillow",
        "location.hash",
    ] {
        assert!(page.contains(needle), "report lacks {needle:?}");
    }
    assert_eq!(
        page.matches("<svg").count(),
        4,
        "3 image charts + 1 video heatmap"
    );
}

#[test]
fn is_deterministic() {
    assert_eq!(report(), report());
}

#[test]
fn escapes_names() {
    let dir = tempfile::tempdir().unwrap();
    let f = augbench_report::sample::result_file(
        "image-rgb",
        augbench_core::Mode::Micro,
        "kornia",
        "1",
        &[(
            "<script>alert(1)</script>",
            augbench_report::sample::runs(5.0),
        )],
    );
    common::write_all(dir.path(), &[f]);
    let data = load_paths(&[dir.path().to_path_buf()]).unwrap();
    let page = html::render(&data, &TableOptions::default()).unwrap();
    assert!(!page.contains("<script>alert(1)"));
    assert!(page.contains("&lt;script&gt;alert(1)"));
}

#[test]
fn pipeline_group_marks_its_ceiling_row() {
    let dir = common::demo_and_pipeline_dir();
    let data = load_paths(&[dir.path().to_path_buf()]).unwrap();
    let page = html::render(&data, &TableOptions::default()).unwrap();
    let (micro, pipeline) = page.split_at(
        page.find("<section class=\"group\" id=\"g-image-rgb_pipeline")
            .unwrap(),
    );
    assert!(!micro.contains("class=\"ceiling\""));
    assert_eq!(pipeline.matches("<tr class=\"ceiling\">").count(), 1);
    for needle in [
        "<tr class=\"ceiling\"><td data-value=\"DecodeOnly\">DecodeOnly <span class=\"tag\">ceiling</span></td>",
        "920 ± 7 (92%)",
        "its row is outlined and tagged ceiling",
        "DecodeOnly (ceiling)",
    ] {
        assert!(
            pipeline.contains(needle),
            "pipeline section lacks {needle:?}"
        );
    }
    assert!(
        page.contains("tr.ceiling td {"),
        "page.css styles the ceiling row"
    );
}
