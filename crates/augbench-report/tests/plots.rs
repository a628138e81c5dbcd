//! Plots: every chart is written as SVG and PNG, 1200 px wide, with text (the embedded font is
//! registered), not blank; a group with one library gets a heatmap but no speedup charts.

mod common;

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
        "Median throughput (img/s",
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
