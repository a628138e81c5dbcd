//! The HTML report: one self-contained file (no network loads), with system info, versions,
//! run parameters, sortable tables, inline SVG plots, the legend and the reasons for failures;
//! a pipeline group marks its decode-ceiling row.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

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

/// `library`'s summary of a check where Grayscale is a known difference of `image` and
/// HorizontalFlip mismatches in `pillow`, against albumentationsx.
fn equivalence_of(library: &str) -> augbench_core::equivalence::EquivalenceSummary {
    use augbench_core::equivalence::{Diff, EquivalenceSummary, TransformEquivalence, Verdict};
    let line = |verdict, library_verdict, diff, note: &str| TransformEquivalence {
        class: "exact".into(),
        reference: Some("albumentationsx".into()),
        verdict,
        library_verdict,
        diff,
        note: note.into(),
    };
    let off = Diff {
        max_abs: 9,
        mean_abs: 0.5,
        psnr: Some(31.25),
    };
    let (flip, gray) = match library {
        "pillow" => (
            line(
                Verdict::Mismatch,
                Verdict::Mismatch,
                Some(off),
                "outside tolerance",
            ),
            line(
                Verdict::KnownDifference,
                Verdict::Ok,
                Some(Diff::IDENTICAL),
                "",
            ),
        ),
        "image" => (
            line(Verdict::Mismatch, Verdict::Ok, Some(Diff::IDENTICAL), ""),
            line(
                Verdict::KnownDifference,
                Verdict::KnownDifference,
                Some(off),
                "Rec. 709 <luma>",
            ),
        ),
        _ => (
            line(Verdict::Mismatch, Verdict::Ok, None, "reference"),
            line(Verdict::KnownDifference, Verdict::Ok, None, "reference"),
        ),
    };
    EquivalenceSummary {
        file: "equivalence.json".into(),
        inputs: vec![[500, 375], [333, 251]],
        libraries: vec!["albumentationsx".into(), "image".into(), "pillow".into()],
        transforms: [
            ("HorizontalFlip".to_string(), flip),
            ("Grayscale".to_string(), gray),
        ]
        .into_iter()
        .collect(),
    }
}

#[test]
fn the_equivalence_check_is_a_table_with_mismatches_highlighted_and_known_differences_noted() {
    assert!(!report().contains("Same work?"), "no check, no table");
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<_> = ["albumentationsx", "image", "pillow"]
        .iter()
        .map(|lib| {
            let mut f = augbench_report::sample::result_file(
                "image-rgb",
                augbench_core::Mode::Micro,
                lib,
                "1",
                &[
                    ("HorizontalFlip", augbench_report::sample::runs(900.0)),
                    ("Grayscale", augbench_report::sample::runs(500.0)),
                ],
            );
            f.metadata.equivalence = Some(equivalence_of(lib));
            f
        })
        .collect();
    common::write_all(dir.path(), &files);
    let data = load_paths(&[dir.path().to_path_buf()]).unwrap();
    let page = html::render(&data, &TableOptions::default()).unwrap();
    let at = page
        .find("<h3>Same work? (equivalence check)</h3>")
        .expect("the table");
    let section = &page[at..page[at..].find("</ol>").map_or(page.len(), |e| at + e)];
    for needle in [
        "2 lossless RGB check images (500×375, 333×251)",
        "<th>Transform</th><th>Class</th><th>Verdict</th><th>albumentationsx</th><th>image</th><th>pillow</th>",
        "<td class=\"eq-mismatch\">MISMATCH (reference albumentationsx)</td>",
        "<td class=\"eq-mismatch\" title=\"outside tolerance\">MISMATCH · max 9 · 31.2 dB</td>",
        "<td class=\"eq-ok\" title=\"\">ok · max 0 · inf dB</td>",
        "<td class=\"eq-ok\" title=\"reference\">reference</td>",
        "known difference · max 9 · 31.2 dB [1]</td>",
        "<li><b>Grayscale</b>, image: Rec. 709 &lt;luma&gt;</li>",
    ] {
        assert!(section.contains(needle), "lacks {needle:?} in:\n{section}");
    }
    assert!(
        page.contains("td.eq-mismatch {"),
        "page.css highlights mismatches"
    );
    assert!(!page.contains("<luma>"), "notes are escaped");
}
