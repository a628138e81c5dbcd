//! `augbench run` with target rows (docs/targets.md), real workers: AlbumentationsX moves boxes,
//! masks and keypoints with the image on the annotated synthetic dataset, each set in its own
//! column, table and cost line, recorded in results and cells; Pillow gets no target rows and the
//! run says why; a COCO file over a folder measures the annotated items and counts the rest.

use std::path::{Path, PathBuf};
use std::process::Output;

use augbench_core::results::{ResultFile, Status};

fn support(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/bad_input/_support")
        .join(name)
}

fn run(dir: &Path, config: &str, extra: &[&str]) -> Output {
    let path = dir.join("targets.yaml");
    std::fs::write(&path, config).unwrap();
    let mut cmd = assert_cmd::Command::cargo_bin("augbench").unwrap();
    cmd.arg("run")
        .arg("--config")
        .arg(&path)
        .arg("--output")
        .arg(dir.join("out"))
        .args(["--no-refresh-requirements"])
        .args(extra);
    cmd.output().unwrap()
}

fn text(out: &Output) -> String {
    format!(
        "status {:?}\n--- stdout\n{}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn result(out: &Path, column: &str) -> ResultFile {
    let path = out.join(format!("image-rgb/micro/{column}_micro_results.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

const SYNTHETIC: &str = "version: 1
selection:
  scenario: image-rgb
  libraries: [albumentationsx, pillow]
  transforms: [HorizontalFlip, Resize]
  targets: [boxes, mask+keypoints]
data:
  num_items: 8
execution:
  num_runs: 3
  # one worker process a row: the test reads labels, tables and records, not a figure's spread,
  # and each AlbumentationsX process costs seconds of imports (3 processes took 30 s alone, 86 s
  # beside three other tests, the last test of CI's integration run)
  processes: 1
  disable_slow_skip: true
";

#[test]
fn target_rows_get_their_own_columns_tables_cost_and_record() {
    let t = tempfile::tempdir().unwrap();
    let out = run(t.path(), SYNTHETIC, &[]);
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("pillow: no target rows"), "{}", text(&out));
    for fragment in [
        "\nimage + boxes:",
        "\nimage + mask+keypoints:",
        "target cost",
    ] {
        assert!(stdout.contains(fragment), "{fragment}\n{}", text(&out));
    }
    let dir = t.path().join("out");
    let plain = result(&dir, "albumentationsx");
    assert!(plain.metadata.targets.is_none());
    for (column, set) in [
        ("albumentationsx+boxes", "boxes"),
        ("albumentationsx+mask+keypoints", "mask+keypoints"),
    ] {
        let file = result(&dir, column);
        let targets = file.metadata.targets.as_ref().expect(column);
        assert_eq!(targets.set, set);
        assert_eq!(targets.library, "albumentationsx");
        assert_eq!((targets.items, targets.items_without_targets), (8, 0));
        assert!(targets.annotations.ends_with("annotations.json"));
        for name in ["HorizontalFlip", "Resize"] {
            let row = &file.results[name];
            assert_eq!(
                row.status,
                Some(Status::Ok),
                "{column} {name}: {:?}",
                row.reason
            );
            let cost = row.paired.iter().find(|p| p.partner == "albumentationsx");
            assert!(cost.is_some_and(|p| p.ratio > 0.0), "{column} {name}");
        }
    }
    let boxes = result(&dir, "albumentationsx+boxes")
        .metadata
        .targets
        .unwrap();
    assert!(
        boxes.boxes >= 8 * 3,
        "3 to 8 shapes an image: {}",
        boxes.boxes
    );
    assert!(
        !dir.join("image-rgb/micro/pillow+boxes_micro_results.json")
            .exists()
    );
    let cells = augbench_cells::read_bench_cells(&dir.join("cells.parquet")).unwrap();
    assert!(
        cells
            .iter()
            .any(|c| c.library == "albumentationsx+mask+keypoints")
    );
}

#[test]
fn coco_annotations_over_a_folder_measure_the_annotated_items_and_count_the_rest() {
    let t = tempfile::tempdir().unwrap();
    let annotations = t.path().join("instances.json");
    let coco = serde_json::json!({
        "images": [{"id": 1, "file_name": "a.jpg", "width": 64, "height": 48}],
        "annotations": [
            {"id": 1, "image_id": 1, "category_id": 2, "bbox": [4, 6, 20, 10],
             "segmentation": [[4, 6, 24, 6, 24, 16, 4, 16]], "keypoints": [10, 8, 2, 0, 0, 0]},
            {"id": 2, "image_id": 1, "category_id": 1, "bbox": [30, 20, -3, 5]}
        ]
    });
    std::fs::write(&annotations, coco.to_string()).unwrap();
    let config = "version: 1
selection:
  scenario: image-rgb
  libraries: [albumentationsx]
  transforms: [HorizontalFlip]
  targets: [mask+boxes+keypoints]
data:
  annotation_errors: skip
execution:
  num_runs: 3
  # one worker process a row, as in SYNTHETIC
  processes: 1
  disable_slow_skip: true
";
    let images = support("coco_images");
    let flags = ["--data-dir", images.to_str().unwrap()];
    let flags = [
        &flags[..],
        &["--annotations", annotations.to_str().unwrap()],
    ]
    .concat();
    let out = run(t.path(), config, &flags);
    assert!(out.status.success(), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("1 bad annotations skipped (first: id 2"),
        "{}",
        text(&out)
    );
    let file = result(
        &t.path().join("out"),
        "albumentationsx+mask+boxes+keypoints",
    );
    let targets = file.metadata.targets.unwrap();
    assert_eq!((targets.items, targets.items_without_targets), (1, 1));
    assert_eq!(
        (
            targets.boxes,
            targets.keypoints,
            targets.skipped_annotations
        ),
        (1, 1, 1)
    );
    assert_eq!(file.results["HorizontalFlip"].status, Some(Status::Ok));
    let plain = result(&t.path().join("out"), "albumentationsx");
    assert_eq!(
        plain.metadata.benchmark_params.num_items, 2,
        "image-only rows take every item"
    );
}

#[test]
fn pipeline_rows_carry_targets_through_a_dataloader_in_their_own_table() {
    let t = tempfile::tempdir().unwrap();
    let config = "version: 1
selection:
  scenario: image-rgb
  mode: pipeline
  libraries: [albumentationsx]
  transforms: [HorizontalFlip]
  targets: [boxes]
data:
  num_items: 8
execution:
  num_runs: 1
  processes: 1
  workers: 1
  batch_size: 4
  disable_slow_skip: true
";
    let out = run(t.path(), config, &[]);
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("\nimage + boxes:"), "{}", text(&out));
    let folder = t.path().join("out/image-rgb/pipeline");
    let name = std::fs::read_dir(&folder)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .find(|n| n.starts_with("albumentationsx+boxes_") && n.ends_with("_results.json"))
        .unwrap_or_else(|| panic!("no albumentationsx+boxes result in {}", folder.display()));
    let file: ResultFile =
        serde_json::from_str(&std::fs::read_to_string(folder.join(name)).unwrap()).unwrap();
    assert_eq!(file.metadata.targets.as_ref().unwrap().set, "boxes");
    let row = &file.results["HorizontalFlip"];
    assert_eq!(row.status, Some(Status::Ok), "{:?}", row.reason);
    // The first batch's contract held on both halves: the images and one targets dict each.
    let row = serde_json::to_value(row).unwrap();
    let contract = row.pointer("/pipeline/batch").unwrap();
    assert_eq!(contract["shape"], serde_json::json!([4, 3, 224, 224]));
    assert_eq!(contract["targets"]["kinds"], serde_json::json!(["boxes"]));
    let cells = augbench_cells::read_bench_cells(&t.path().join("out/cells.parquet")).unwrap();
    assert!(
        cells
            .iter()
            .any(|c| c.library == "albumentationsx+boxes" && c.mode == "pipeline")
    );
}
