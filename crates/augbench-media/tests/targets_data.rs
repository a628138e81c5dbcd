//! Targets data: the annotated synthetic dataset reads back with the COCO reader, every bad
//! annotation is refused with a message naming the file and the annotation (or counted in skip
//! mode), and a folder's items are matched to COCO images.

use std::path::{Path, PathBuf};

use augbench_core::UsageError;
use augbench_core::config::AnnotationErrors;
use augbench_media::coco::{self, Annotations};
use augbench_media::{annotated, targets};
use serde_json::{Value, json};

fn bytes_of(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let name = |p: &Path| p.file_name().unwrap().to_string_lossy().into_owned();
    files
        .iter()
        .map(|p| (name(p), std::fs::read(p).unwrap()))
        .collect()
}

#[test]
fn the_annotated_dataset_reads_back_with_every_box_inside() {
    let cache = tempfile::tempdir().unwrap();
    let data = annotated::annotated_synthetic_dataset_in(cache.path(), 11, 5, None).unwrap();
    assert_eq!(data.dir.items.len(), 5);
    assert!(data.dir.info.synthetic);
    assert_eq!(data.annotations, data.dir.root.join("annotations.json"));
    let entries: Vec<_> = std::fs::read_dir(cache.path()).unwrap().collect();
    assert_eq!(entries.len(), 1, "no temporary folder is left behind");

    let read = Annotations::read(&data.annotations, AnnotationErrors::Refuse).unwrap();
    let matched = coco::for_items(&read, &data.dir.root, &data.dir.items).unwrap();
    assert_eq!(matched.with.len(), 5);
    assert!(matched.without.is_empty() && matched.missing.is_empty());
    for m in &matched.with {
        let t = &m.targets;
        assert!((3..=8).contains(&t.boxes.len()), "{}", m.file_name);
        assert_eq!(t.keypoints.len(), 4 * t.boxes.len());
        let (w, h) = (f64::from(t.width), f64::from(t.height));
        for &[x0, y0, x1, y1] in &t.boxes {
            assert!(0.0 <= x0 && x0 < x1 && x1 <= w, "{:?} in {w}x{h}", t.boxes);
            assert!(0.0 <= y0 && y0 < y1 && y1 <= h, "{:?} in {w}x{h}", t.boxes);
        }
        assert!(t.labels.iter().all(|l| (1..=5).contains(l)));
        assert!(t.mask.iter().any(|&v| v != 0));
        let img = image::open(&m.item).unwrap();
        assert_eq!((img.width(), img.height()), (t.width, t.height));
    }
}

#[test]
fn the_annotated_dataset_is_reproducible_and_cached() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let first = annotated::annotated_synthetic_dataset_in(a.path(), 4, 3, None).unwrap();
    let second = annotated::annotated_synthetic_dataset_in(b.path(), 4, 3, None).unwrap();
    let files = bytes_of(&first.dir.root);
    assert_eq!(files.len(), 4, "3 images and the annotations");
    assert_eq!(files, bytes_of(&second.dir.root));
    let stamp = std::fs::metadata(&first.annotations)
        .unwrap()
        .modified()
        .unwrap();
    let again = annotated::annotated_synthetic_dataset_in(a.path(), 4, 3, None).unwrap();
    assert_eq!(again.dir.root, first.dir.root);
    let later = std::fs::metadata(&again.annotations)
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(stamp, later, "a cached dataset is reused, not rewritten");
    let other = annotated::annotated_synthetic_dataset_in(a.path(), 5, 3, None).unwrap();
    assert_ne!(bytes_of(&other.dir.root), files);
}

#[test]
fn a_dataset_without_its_annotations_is_rebuilt() {
    let cache = tempfile::tempdir().unwrap();
    let first = annotated::annotated_synthetic_dataset_in(cache.path(), 2, 2, None).unwrap();
    std::fs::remove_file(&first.annotations).unwrap();
    let again = annotated::annotated_synthetic_dataset_in(cache.path(), 2, 2, None).unwrap();
    assert!(again.annotations.is_file());
}

/// One 10x8 image `a.jpg` (id 1), a good annotation (id 1) and `bad` (id 7).
fn document(bad: Value) -> String {
    let good = json!({"id": 1, "image_id": 1, "category_id": 2, "bbox": [1, 1, 4, 4],
        "segmentation": [[1, 1, 5, 1, 5, 5, 1, 5]], "keypoints": [2, 2, 2]});
    let doc = json!({
        "images": [{"id": 1, "file_name": "a.jpg", "width": 10, "height": 8}],
        "annotations": [good, bad],
        "categories": [{"id": 2, "name": "thing"}],
    });
    doc.to_string()
}

/// Annotation 7 with `field` replaced by `value`.
fn bad(field: &str, value: Value) -> Value {
    let mut ann = json!({"id": 7, "image_id": 1, "category_id": 3, "bbox": [2, 2, 3, 3]});
    ann[field] = value;
    ann
}

fn usage(err: &anyhow::Error) -> &UsageError {
    err.downcast_ref::<UsageError>()
        .unwrap_or_else(|| panic!("not a usage error: {err:#}"))
}

#[test]
fn every_bad_annotation_is_refused_by_id_or_counted_when_skipping() {
    let rle = |size: Value, counts: Value| json!({"size": size, "counts": counts});
    let cases = [
        (bad("image_id", json!(99)), "image_id 99 names no image"),
        (bad("bbox", json!([2, 2, 0, 3])), "negative or zero size"),
        (bad("bbox", json!([2, 2, 3, -1])), "negative or zero size"),
        (bad("bbox", json!([8, 2, 3.5, 3])), "outside its 10x8 image"),
        (
            bad("bbox", json!([-1.5, 2, 3, 3])),
            "outside its 10x8 image",
        ),
        (bad("bbox", json!([1, 2, 3])), "not 4"),
        (
            bad("segmentation", json!([[1, 1, 4, 4]])),
            "fewer than 3 points",
        ),
        (
            bad("segmentation", json!([[1, 1, 4, 4, 5, 1, 2]])),
            "odd number of coordinates",
        ),
        (
            bad("segmentation", rle(json!([10, 8]), json!([80]))),
            "differs from its image",
        ),
        (
            bad("segmentation", rle(json!([8, 10]), json!([70, 5]))),
            "sum to 75",
        ),
        (
            bad("segmentation", rle(json!([8, 10]), json!("32X1O"))),
            "sum to 46",
        ),
        (
            bad("segmentation", rle(json!([8, 10]), json!("3 "))),
            "out of range",
        ),
        (bad("keypoints", json!([1, 2, 2, 3])), "not a multiple of 3"),
    ];
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("instances_bad.json");
    for (ann, what) in cases {
        std::fs::write(&path, document(ann)).unwrap();
        let err = Annotations::read(&path, AnnotationErrors::Refuse).unwrap_err();
        let text = usage(&err).to_string();
        assert!(text.contains(&path.display().to_string()), "{text}");
        assert!(text.contains("annotation 7"), "{text}");
        assert!(text.contains(what), "expected {what:?} in {text}");
        assert!(text.contains("annotation_errors: skip"), "{text}");

        let kept = Annotations::read(&path, AnnotationErrors::Skip).unwrap();
        assert_eq!(kept.skipped.len(), 1, "{what}");
        assert_eq!(kept.skipped[0].annotation_id, 7);
        assert!(
            kept.skipped[0].reason.contains(what),
            "{:?}",
            kept.skipped[0]
        );
        assert_eq!(kept.annotation_count(), 1, "the good annotation stays");
        let t = kept.targets("a.jpg").unwrap();
        assert_eq!(t.boxes, vec![[1.0, 1.0, 5.0, 5.0]]);
        assert_eq!(t.mask.iter().filter(|&&v| v == 2).count(), 16);
        assert_eq!(t.keypoints, vec![[2.0, 2.0]]);
    }
}

#[test]
fn good_rle_and_overlaps_paint_in_file_order() {
    // 10x8 image; the RLE covers column 0 fully (8 pixels), painted over the polygon's square.
    let ann = json!({"id": 7, "image_id": 1, "category_id": 9, "bbox": [0, 0, 1, 8],
        "segmentation": {"size": [8, 10], "counts": [0, 8, 72]}, "iscrowd": 1});
    let read = Annotations::parse(
        &document(ann),
        Path::new("x.json"),
        AnnotationErrors::Refuse,
    )
    .unwrap();
    let t = read.targets("a.jpg").unwrap();
    assert_eq!(t.labels, vec![2, 9]);
    assert_eq!(t.boxes[1], [0.0, 0.0, 1.0, 8.0]);
    let column: Vec<u8> = (0..8).map(|y| t.mask[y * 10]).collect();
    assert_eq!(column, vec![9; 8]);
    assert_eq!(t.mask[10 + 1], 2);
    assert_eq!(t.mask.iter().filter(|&&v| v == 2).count(), 16);
}

#[test]
fn files_that_are_not_coco_name_the_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("broken.json");
    std::fs::write(&path, "{\"images\": [\n  {\"id\": 1,,}]}").unwrap();
    let err = Annotations::read(&path, AnnotationErrors::Skip).unwrap_err();
    let text = usage(&err).to_string();
    assert!(
        text.contains("broken.json") && text.contains("is not valid JSON"),
        "{text}"
    );
    assert!(text.contains("line 2, column"), "{text}");

    std::fs::write(&path, "{\"images\": [{\"id\": \"one\"}]}").unwrap();
    let err = Annotations::read(&path, AnnotationErrors::Skip).unwrap_err();
    let text = usage(&err).to_string();
    assert!(text.contains("does not have the shape of COCO"), "{text}");
    assert!(text.contains("line 1, column"), "{text}");

    let missing = dir.path().join("nope.json");
    let err = Annotations::read(&missing, AnnotationErrors::Refuse).unwrap_err();
    assert!(usage(&err).message.contains("nope.json"), "{err}");
}

/// A folder with `a.jpg`, `sub/b.jpg`, `sub/b2.jpg`, `c.jpg`, `d.jpg`; its items, sorted.
fn folder(root: &Path) -> Vec<PathBuf> {
    let names = ["a.jpg", "sub/b.jpg", "sub/b2.jpg", "c.jpg", "d.jpg"];
    std::fs::create_dir_all(root.join("sub")).unwrap();
    let mut items: Vec<PathBuf> = names.iter().map(|n| root.join(n)).collect();
    for item in &items {
        std::fs::write(item, b"not decoded here").unwrap();
    }
    items.sort();
    items
}

/// COCO images: a.jpg, sub/b.jpg and b2.jpg (annotated), c.jpg (no annotations) and `extra`.
fn folder_document(extra: &[&str]) -> String {
    let mut names = vec!["a.jpg", "sub/b.jpg", "b2.jpg", "c.jpg"];
    names.extend_from_slice(extra);
    let images: Vec<Value> = (1..)
        .zip(&names)
        .map(|(id, n)| json!({"id": id, "file_name": n, "width": 4, "height": 4}))
        .collect();
    let annotations: Vec<Value> = (1..=3)
        .map(|id| json!({"id": id, "image_id": id, "category_id": 1, "bbox": [0, 0, 2, 2]}))
        .collect();
    json!({"images": images, "annotations": annotations}).to_string()
}

#[test]
fn items_match_by_relative_path_or_bare_file_name() {
    let dir = tempfile::tempdir().unwrap();
    let items = folder(dir.path());
    let path = dir.path().join("instances.json");
    let read = Annotations::parse(&folder_document(&[]), &path, AnnotationErrors::Refuse).unwrap();
    let matched = coco::for_items(&read, dir.path(), &items).unwrap();
    let with: Vec<&str> = matched.with.iter().map(|m| m.file_name.as_str()).collect();
    assert_eq!(with, vec!["a.jpg", "sub/b.jpg", "b2.jpg"]);
    let without: Vec<PathBuf> = ["c.jpg", "d.jpg"]
        .iter()
        .map(|n| dir.path().join(n))
        .collect();
    assert_eq!(matched.without, without);
    assert_eq!(matched.with[1].item, dir.path().join("sub/b.jpg"));
    assert_eq!(matched.with[0].targets.boxes, vec![[0.0, 0.0, 2.0, 2.0]]);
}

#[test]
fn coco_images_without_files_are_refused_or_listed() {
    let dir = tempfile::tempdir().unwrap();
    let items = folder(dir.path());
    let path = dir.path().join("instances.json");
    let gone = [
        "g1.jpg", "g2.jpg", "g3.jpg", "g4.jpg", "g5.jpg", "g6.jpg", "g7.jpg",
    ];
    let text = folder_document(&gone);
    let read = Annotations::parse(&text, &path, AnnotationErrors::Refuse).unwrap();
    let err = coco::for_items(&read, dir.path(), &items).unwrap_err();
    let e = usage(&err);
    assert!(e.message.contains("instances.json"), "{e}");
    assert!(e.message.contains("7 image(s)"), "{e}");
    assert!(
        e.message
            .contains("g1.jpg, g2.jpg, g3.jpg, g4.jpg, g5.jpg, …"),
        "{e}"
    );
    assert!(!e.message.contains("g6.jpg"), "{e}");
    assert!(e.hint.contains("data.annotations"), "{e}");

    let skip = Annotations::parse(&text, &path, AnnotationErrors::Skip).unwrap();
    let matched = coco::for_items(&skip, dir.path(), &items).unwrap();
    assert_eq!(matched.missing, gone.map(String::from).to_vec());
    assert_eq!(matched.with.len(), 3);
    // Files beyond a truncated item list are not missing: they are in the folder.
    let all_here =
        Annotations::parse(&folder_document(&[]), &path, AnnotationErrors::Refuse).unwrap();
    let first = coco::for_items(&all_here, dir.path(), &items[..1]).unwrap();
    assert_eq!(first.with.len(), 1);
    assert!(first.missing.is_empty());
    let err = coco::for_items(&read, dir.path(), &items[..1]).unwrap_err();
    assert!(usage(&err).message.contains("7 image(s)"), "{err}");
}

#[test]
fn matched_targets_round_trip_through_the_targets_file() {
    let cache = tempfile::tempdir().unwrap();
    let data = annotated::annotated_synthetic_dataset_in(cache.path(), 3, 2, None).unwrap();
    let read = Annotations::read(&data.annotations, AnnotationErrors::Refuse).unwrap();
    let matched = coco::for_items(&read, &data.dir.root, &data.dir.items).unwrap();
    let items: Vec<(String, &targets::ItemTargets)> = matched
        .with
        .iter()
        .map(|m| (m.item.display().to_string(), &m.targets))
        .collect();
    let out = cache.path().join("out/targets.json");
    targets::write_targets_file(&out, &items).unwrap();
    let back = targets::read_targets_file(&out).unwrap();
    assert_eq!(back.len(), 2);
    for (name, t) in items {
        assert_eq!(back.get(&name), Some(t));
    }
}
