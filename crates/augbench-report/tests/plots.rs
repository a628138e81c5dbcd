//! Plots: every chart is written as SVG and PNG, 1200 px wide, with text (the embedded font is
//! registered), not blank; a group with one library gets a heatmap but no speedup charts; a
//! pipeline group's charts mark the decode-ceiling row and its heatmap shows shares of it.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

use crate::common;

use augbench_core::Mode;
use augbench_report::sample::{self, runs};
use augbench_report::{TableOptions, load_paths, plot};

fn non_white_fraction(png: &[u8]) -> (u32, f64) {
    let img = image::load_from_memory(png).unwrap().to_rgb8();
    let non_white = img.pixels().filter(|p| p.0 != [255, 255, 255]).count();
    (
        img.width(),
        non_white as f64 / (img.width() * img.height()) as f64,
    )
}

#[test]
fn writes_all_charts_as_svg_and_png() {
    let dir = common::demo_dir();
    let out = tempfile::tempdir().unwrap();
    let data = load_paths(&[dir.path().to_path_buf()]).unwrap();
    let written = plot::write_plots(&data, out.path(), &TableOptions::default()).unwrap();
    let names: Vec<String> = written
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        [
            "image-rgb_micro_cpu_speedup.svg",
            "image-rgb_micro_cpu_speedup.png",
            "image-rgb_micro_cpu_heatmap.svg",
            "image-rgb_micro_cpu_heatmap.png",
            "image-rgb_micro_cpu_speedup_distribution.svg",
            "image-rgb_micro_cpu_speedup_distribution.png",
            "video-16f_micro_cpu_heatmap.svg",
            "video-16f_micro_cpu_heatmap.png",
        ]
    );
    for p in written.iter().filter(|p| p.extension().unwrap() == "png") {
        let (width, ink) = non_white_fraction(&std::fs::read(p).unwrap());
        assert_eq!(width, plot::WIDTH);
        assert!(ink > 0.05, "{} is nearly blank ({ink})", p.display());
    }
    let svg = std::fs::read_to_string(out.path().join("image-rgb_micro_cpu_speedup.svg")).unwrap();
    for text in [
        "Speedup of albumentationsx per transform",
        "vs torchvision",
        "log scale",
        "ColorJitter",
        "1× = equal speed",
    ] {
        assert!(svg.contains(text), "speedup SVG lacks {text:?}");
    }
    let heat = std::fs::read_to_string(out.path().join("image-rgb_micro_cpu_heatmap.svg")).unwrap();
    for text in [
        "Throughput, median of per-process fastest runs (img/s",
        "12000",
        "slow",
        "error",
        "Library",
        "Transform",
    ] {
        assert!(heat.contains(text), "heatmap SVG lacks {text:?}");
    }
}

#[test]
fn one_library_gets_only_a_heatmap() {
    let dir = tempfile::tempdir().unwrap();
    common::write_all(
        dir.path(),
        &[sample::result_file(
            "image-rgb",
            Mode::Micro,
            "kornia",
            "1",
            &[("A", runs(10.0))],
        )],
    );
    let data = load_paths(&[dir.path().to_path_buf()]).unwrap();
    let tables = augbench_report::table::build_tables(&data, &TableOptions::default()).unwrap();
    let names: Vec<&str> = plot::charts(&tables[0]).iter().map(|c| c.name()).collect();
    assert_eq!(names, ["heatmap"]);
}

#[test]
fn charts_are_deterministic() {
    let dir = common::demo_dir();
    let data = load_paths(&[dir.path().to_path_buf()]).unwrap();
    let tables = augbench_report::table::build_tables(&data, &TableOptions::default()).unwrap();
    for chart in plot::charts(&tables[0]) {
        assert_eq!(chart.svg().unwrap(), chart.svg().unwrap());
        assert_eq!(chart.png().unwrap(), chart.png().unwrap());
    }
}

/// Every chart's SVG of the group whose title contains `mode`, by chart name.
fn group_svgs(mode: &str) -> Vec<(&'static str, String)> {
    let dir = common::demo_and_pipeline_dir();
    let data = load_paths(&[dir.path().to_path_buf()]).unwrap();
    let tables = augbench_report::table::build_tables(&data, &TableOptions::default()).unwrap();
    let table = tables
        .iter()
        .find(|t| t.title.starts_with(&format!("image-rgb · {mode}")))
        .unwrap();
    assert_eq!(table.ceiling.is_some(), mode == "pipeline");
    plot::charts(table)
        .iter()
        .map(|c| (c.name(), c.svg().unwrap()))
        .collect()
}

fn svg_of<'a>(svgs: &'a [(&'static str, String)], name: &str) -> &'a str {
    &svgs.iter().find(|(n, _)| *n == name).unwrap().1
}

#[test]
fn pipeline_heatmap_marks_the_ceiling_and_shares_of_it() {
    let svgs = group_svgs("pipeline");
    let heat = svg_of(&svgs, "heatmap");
    for text in [
        "DecodeOnly (ceiling)",
        "Ceiling (outlined row): DecodeOnly = decode → crop → normalize, no transform",
        "(x%) = share of the library",
        "920 (92%)",
        "400 (50%)",
        "750 (75%)",
        "stroke-width=\"3\"",
    ] {
        assert!(heat.contains(text), "pipeline heatmap SVG lacks {text:?}");
    }
    assert!(
        !heat.contains("1000 ("),
        "the ceiling row shows no share of itself"
    );
    let speedup = svg_of(&svgs, "speedup");
    assert!(speedup.contains("DecodeOnly (ceiling)"));
}

#[test]
fn pipeline_heatmap_puts_the_ceiling_row_on_top() {
    let svgs = group_svgs("pipeline");
    let heat = svg_of(&svgs, "heatmap");
    let y_of = |label: &str| {
        let at = heat.find(label).unwrap();
        let tag = &heat[heat[..at].rfind("<text").unwrap()..at];
        let y = tag.split("y=\"").nth(1).unwrap();
        y[..y.find('"').unwrap()].parse::<f64>().unwrap()
    };
    assert!(y_of("DecodeOnly (ceiling)") < y_of("Resize"));
    assert!(y_of("Resize") < y_of("Rotate"));
}

#[test]
fn micro_heatmap_has_no_ceiling_marks() {
    let svgs = group_svgs("micro");
    let heat = svg_of(&svgs, "heatmap");
    for text in ["(ceiling)", "Ceiling", "%)", "stroke-width=\"3\""] {
        assert!(!heat.contains(text), "micro heatmap SVG has {text:?}");
    }
}
