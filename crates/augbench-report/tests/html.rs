//! The HTML report: one self-contained file (no network loads), with system info, versions,
//! run parameters, sortable tables, inline SVG plots, the legend and the reasons for failures;
//! a pipeline group marks its decode-ceiling row.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

use crate::common;

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
        "<h2>Machine</h2>",
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
fn equivalence_of(library: &str) -> augbench_catalog::equivalence::EquivalenceSummary {
    use augbench_catalog::equivalence::{Diff, EquivalenceSummary, TransformEquivalence, Verdict};
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

/// Two result files of one machine: the native one with a machine card and `rustc`, the Python
/// one with `python`, written a minute apart.
fn two_runtimes_dir() -> tempfile::TempDir {
    use augbench_core::machine_card::{BuildInfo, MachineCard};
    let dir = tempfile::tempdir().unwrap();
    let card = MachineCard {
        processor: "AMD EPYC 7B13".into(),
        simd: Some(vec!["sse4_2".into(), "avx2".into()]),
        physical_cores: Some(1),
        cpu_count: 2,
        governor: None,
        kernel: Some("6.1.0-40-cloud-amd64".into()),
        hypervisor: Some(true),
        build: Some(BuildInfo {
            version: "0.1.0".into(),
            git_sha: "abc1234".into(),
            target: "x86_64-unknown-linux-gnu".into(),
            opt_level: "3".into(),
            profile: "release".into(),
        }),
        ..Default::default()
    };
    let files: Vec<_> = [
        ("image", "rustc 1.95.0", "00"),
        ("pillow", "python 3.11.2", "01"),
    ]
    .iter()
    .map(|(lib, runtime, minute)| {
        let mut f = augbench_report::sample::result_file(
            "image-rgb",
            augbench_core::Mode::Micro,
            lib,
            "1",
            &[("Resize", augbench_report::sample::runs(100.0))],
        );
        f.metadata.system_info = MachineCard {
            runtime: runtime.to_string(),
            timestamp: format!("2026-01-01T00:{minute}:00Z"),
            platform: f.metadata.system_info.platform.clone(),
            machine: f.metadata.system_info.machine.clone(),
            memory_total_bytes: f.metadata.system_info.memory_total_bytes,
            ..card.clone()
        };
        f
    })
    .collect();
    common::write_all(dir.path(), &files);
    dir
}

/// The machine section of a page.
fn machine_section(page: &str) -> &str {
    let at = page.find("<section id=\"machine\">").unwrap();
    &page[at..at + page[at..].find("</section>").unwrap()]
}

/// Rewrites every result file under `dir` in format 1's layout: the card nested under
/// `system_info.card`, with its own copies of the CPU name, threads and memory.
fn as_format_1(dir: &std::path::Path) {
    let flat_keys = ["runtime", "platform", "machine", "processor", "cpu_count"];
    for entry in walkdir(dir) {
        let mut v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&entry).unwrap()).unwrap();
        v["metadata"]["format_version"] = 1.into();
        let info = v["metadata"]["system_info"].as_object_mut().unwrap();
        let mut card = serde_json::Map::new();
        for key in info.keys().cloned().collect::<Vec<_>>() {
            if !flat_keys.contains(&key.as_str())
                && key != "memory_total_bytes"
                && key != "timestamp"
            {
                card.insert(key.clone(), info.remove(&key).unwrap());
            }
        }
        card.insert("cpu_model".into(), info["processor"].clone());
        card.insert("logical_threads".into(), info["cpu_count"].clone());
        card.insert(
            "memory_total_bytes".into(),
            info["memory_total_bytes"].clone(),
        );
        info.insert("card".into(), card.into());
        std::fs::write(&entry, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
    }
}

fn walkdir(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(walkdir(&path));
        } else if path.extension().is_some_and(|e| e == "json") {
            found.push(path);
        }
    }
    found
}

#[test]
fn format_1_files_with_a_nested_card_show_the_same_machine_card() {
    let dir = two_runtimes_dir();
    let page = |dir: &std::path::Path| {
        let data = load_paths(&[dir.to_path_buf()]).unwrap();
        machine_section(&html::render(&data, &TableOptions::default()).unwrap()).to_string()
    };
    let now = page(dir.path());
    as_format_1(dir.path());
    let text = std::fs::read_to_string(&walkdir(dir.path())[0]).unwrap();
    assert!(
        text.contains("\"card\"") && text.contains("\"cpu_model\""),
        "{text}"
    );
    assert_eq!(page(dir.path()), now);
    assert!(
        now.contains("<th scope=\"row\">SIMD</th><td>sse4_2 · avx2</td>"),
        "{now}"
    );
}

#[test]
fn the_machine_card_is_one_readable_table_that_lists_only_what_differs() {
    let dir = two_runtimes_dir();
    let data = load_paths(&[dir.path().to_path_buf()]).unwrap();
    let page = html::render(&data, &TableOptions::default()).unwrap();
    let card = machine_section(&page);
    assert_eq!(card.matches("<table").count(), 1, "{card}");
    assert!(
        !card.contains("{&quot;") && !card.contains("{\""),
        "no raw JSON: {card}"
    );
    for needle in [
        "<th scope=\"row\">CPU</th><td>AMD EPYC 7B13</td>",
        "<th scope=\"row\">Cores</th><td>1 physical, 2 logical</td>",
        "<th scope=\"row\">SIMD</th><td>sse4_2 · avx2</td>",
        "<th scope=\"row\">Kernel</th><td>6.1.0-40-cloud-amd64</td>",
        "<th scope=\"row\">Hypervisor</th><td>yes (virtual machine)</td>",
        "augbench 0.1.0 (abc1234), x86_64-unknown-linux-gnu, release profile, opt-level 3",
        "<li>rustc 1.95.0 <span class=\"who\">image</span></li>",
        "<li>python 3.11.2 <span class=\"who\">pillow</span></li>",
        "Measured 2026-01-01T00:00:00Z – 2026-01-01T00:01:00Z",
    ] {
        assert!(
            card.contains(needle),
            "machine card lacks {needle:?}: {card}"
        );
    }
    assert_eq!(
        card.matches("class=\"differs\"").count(),
        1,
        "only the runtime differs"
    );
    assert!(
        !card.contains("Governor"),
        "an unknown governor is left out"
    );
}

/// The page's embedded data block, parsed.
fn embedded(page: &str) -> serde_json::Value {
    let at = page
        .find("<script type=\"application/json\" id=\"augbench-data\">")
        .unwrap();
    let json = &page[at..];
    let json = &json[json.find('>').unwrap() + 1..json.find("</script>").unwrap()];
    serde_json::from_str(json).unwrap()
}

#[test]
fn the_page_embeds_its_data_and_a_reference_switch() {
    let page = report();
    let v = embedded(&page);
    assert_eq!(v["reference"], "albumentationsx");
    assert_eq!(v["why"], "the default reference");
    assert_eq!(v["groups"][0]["rows"][0]["transform"], "ColorJitter");
    assert_eq!(
        v["groups"][0]["rows"][0]["cells"]["pillow"]["s"],
        "unsupported"
    );
    for lib in ["albumentationsx", "pillow", "torchvision"] {
        assert!(page.contains(&format!("<option value=\"{lib}\"")), "{lib}");
    }
}

#[test]
fn the_run_configs_reference_library_is_the_default_reference() {
    let dir = tempfile::tempdir().unwrap();
    let mut files = augbench_report::sample::demo();
    for f in &mut files {
        f.metadata.run_config = serde_json::json!({"output": {"reference_library": "pillow"}});
    }
    common::write_all(dir.path(), &files);
    let data = load_paths(&[dir.path().to_path_buf()]).unwrap();
    let page = html::render(&data, &TableOptions::default()).unwrap();
    assert!(page.contains("<option value=\"pillow\" selected>"));
    assert!(page.contains("from the run config (output.reference_library)"));
    let asked = TableOptions {
        reference: Some("torchvision".into()),
        ..TableOptions::default()
    };
    let page = html::render(&data, &asked).unwrap();
    assert!(page.contains("<option value=\"torchvision\" selected>"));
}

// ---- A/B view ------------------------------------------------------------------------------------

fn ab_page(min_effect: f64) -> (augbench_report::Dataset, String) {
    let dir = common::ab_dir();
    let data = load_paths(&[dir.path().to_path_buf()]).unwrap();
    let page = html::render_with(&data, &TableOptions::default(), min_effect).unwrap();
    (data, page)
}

#[test]
fn an_ab_run_gets_an_ab_tab_that_embeds_the_rows_compare_prints() {
    let min_effect = augbench_core::policy::REGRESSION_MIN_EFFECT;
    let (data, page) = ab_page(min_effect);
    assert_eq!(
        page.matches("<button type=\"button\" role=\"tab\" data-view=\"ab\">A/B verdicts</button>")
            .count(),
        1
    );
    assert!(page.contains("<div class=\"panel\" data-view=\"ab\"><div class=\"ab-view\""));
    let ab = embedded(&page)["groups"][0]["ab"].clone();
    let report = augbench_report::judge::ab::compare(&data, min_effect)
        .unwrap()
        .unwrap();
    assert_eq!(ab["rows"].as_array().unwrap().len(), report.rows.len());
    for (shown, row) in ab["rows"].as_array().unwrap().iter().zip(&report.rows) {
        assert_eq!(shown["transform"], row.transform.as_str());
        assert_eq!(shown["ratio"].as_f64(), row.ratio);
        assert_eq!(shown["low"].as_f64(), row.interval.map(|i| i.0));
        assert_eq!(shown["high"].as_f64(), row.interval.map(|i| i.1));
        assert_eq!(
            shown["verdict"],
            augbench_report::judge::ab::word(row.verdict)
        );
        assert_eq!(shown["ratio_text"], row.ratio_text().as_str());
        assert_eq!(shown["interval_text"], row.interval_text().as_str());
        assert_eq!(shown["verdict_text"], row.verdict_text().as_str());
    }
    assert_eq!(
        ab["summary"],
        augbench_report::judge::ab::summary(&report).as_str()
    );
    insta::assert_json_snapshot!("ab_view_data", ab);
}

#[test]
fn the_ab_view_reads_the_minimum_effect_it_is_given() {
    // Resize at 0.80 of the baseline: slower at 5%, no change at 30%.
    let verdict_of = |page: &str| {
        embedded(page)["groups"][0]["ab"]["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["transform"] == "Resize")
            .unwrap()["verdict"]
            .clone()
    };
    assert_eq!(verdict_of(&ab_page(0.05).1), "slower");
    assert_eq!(verdict_of(&ab_page(0.3).1), "no change");
}

#[test]
fn results_without_variants_have_no_ab_view() {
    let page = report();
    assert!(!page.contains("data-view=\"ab\""));
    assert!(
        embedded(&page)["groups"]
            .as_array()
            .unwrap()
            .iter()
            .all(|g| g.get("ab").is_none())
    );
}
