//! The synthetic dataset on disk: written once per key, reused, byte-identical for the same
//! inputs, never left half-written (videos are MJPEG AVI files); and the scan of the folder it
//! produces.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

use augbench_core::Media;
use augbench_media::{dataset, scan};

fn bytes(paths: &[std::path::PathBuf]) -> Vec<Vec<u8>> {
    paths.iter().map(|p| std::fs::read(p).unwrap()).collect()
}

#[test]
fn synthetic_images_are_cached_by_key_and_reproducible() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let first = dataset::synthetic_dataset_in(a.path(), 9, 6, Media::Image, None).unwrap();
    assert_eq!(first.items.len(), 6);
    assert!(first.info.synthetic);
    assert_eq!(first.info.extensions, vec!["jpg"]);
    assert!(first.root.starts_with(a.path()));
    let entries: Vec<_> = std::fs::read_dir(a.path()).unwrap().collect();
    assert_eq!(entries.len(), 1, "no temporary folder is left behind");

    let modified = std::fs::metadata(&first.items[0])
        .unwrap()
        .modified()
        .unwrap();
    let again = dataset::synthetic_dataset_in(a.path(), 9, 6, Media::Image, None).unwrap();
    assert_eq!(again.items, first.items);
    assert_eq!(
        std::fs::metadata(&again.items[0])
            .unwrap()
            .modified()
            .unwrap(),
        modified,
        "reused, not rewritten"
    );

    let elsewhere = dataset::synthetic_dataset_in(b.path(), 9, 6, Media::Image, None).unwrap();
    assert_eq!(
        bytes(&elsewhere.items),
        bytes(&first.items),
        "same seed, same bytes"
    );
    let other = dataset::synthetic_dataset_in(b.path(), 10, 6, Media::Image, None).unwrap();
    assert_ne!(bytes(&other.items), bytes(&first.items));
}

#[test]
fn an_incomplete_cached_dataset_is_regenerated() {
    let a = tempfile::tempdir().unwrap();
    let ds = dataset::synthetic_dataset_in(a.path(), 3, 4, Media::Image, None).unwrap();
    std::fs::remove_file(&ds.items[3]).unwrap();
    let again = dataset::synthetic_dataset_in(a.path(), 3, 4, Media::Image, None).unwrap();
    assert_eq!(again.items.len(), 4);
}

#[test]
fn synthetic_videos_are_avi_files() {
    let a = tempfile::tempdir().unwrap();
    let ds = dataset::synthetic_dataset_in(a.path(), 1, 2, Media::Video, None).unwrap();
    assert_eq!(ds.items.len(), 2);
    assert_eq!(ds.info.extensions, vec!["avi"]);
    let head = std::fs::read(&ds.items[0]).unwrap();
    assert_eq!((&head[..4], &head[8..12]), (&b"RIFF"[..], &b"AVI "[..]));
    let s = scan::scan(&ds.root, Media::Video, None).unwrap();
    assert_eq!(s.items, ds.items);
}

#[test]
fn write_synthetic_refuses_a_folder_with_files() {
    let a = tempfile::tempdir().unwrap();
    std::fs::write(a.path().join("keep.txt"), "x").unwrap();
    let e = dataset::write_synthetic(a.path(), 1, 2, Media::Image, None).unwrap_err();
    assert!(
        e.downcast_ref::<augbench_core::UsageError>().is_some(),
        "{e}"
    );
    assert!(a.path().join("keep.txt").exists());
}
