//! `stage`: the same folder gives the same bytes whatever the files' times and creation order;
//! only media files go in, never hidden files or macOS junk; headers carry fixed metadata.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

use std::path::Path;

use augbench_cloud::stage::{sha256_file, stage};

fn put(root: &Path, rel: &str, bytes: &[u8]) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, bytes).unwrap();
}

fn dataset(root: &Path, order: &[&str]) {
    for rel in order {
        put(root, rel, rel.as_bytes());
    }
    put(root, "._b.jpg", b"appledouble");
    put(root, ".DS_Store", b"finder");
    put(root, "sub/.DS_Store", b"finder");
    put(root, ".hidden/c.jpg", b"hidden");
    put(root, "notes.txt", b"not media");
}

const MEDIA: [&str; 4] = ["z.png", "a.jpg", "sub/clip.MP4", "sub/frames/0001.jpg"];

fn entries(tar: &Path) -> Vec<(String, u64, u64, u64, u32)> {
    let mut archive = tar::Archive::new(std::fs::File::open(tar).unwrap());
    archive
        .entries()
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let h = e.header();
            let name = e.path().unwrap().to_string_lossy().to_string();
            (
                name,
                h.mtime().unwrap(),
                h.uid().unwrap(),
                h.gid().unwrap(),
                h.mode().unwrap(),
            )
        })
        .collect()
}

#[test]
fn same_folder_same_bytes_media_only() {
    let tmp = tempfile::tempdir().unwrap();
    let (one, two) = (tmp.path().join("one"), tmp.path().join("two"));
    dataset(&one, &MEDIA);
    let mut reversed = MEDIA;
    reversed.reverse();
    dataset(&two, &reversed);
    let a = stage(&one, &tmp.path().join("a.tar")).unwrap();
    let b = stage(&two, &tmp.path().join("out/b.tar")).unwrap();
    assert_eq!(a.sha256, b.sha256);
    assert_eq!(
        std::fs::read(&a.path).unwrap(),
        std::fs::read(&b.path).unwrap()
    );
    assert_eq!(a.sha256, sha256_file(&a.path).unwrap());
    assert_eq!(a.files, 4);
    let names: Vec<String> = entries(&a.path).into_iter().map(|e| e.0).collect();
    assert_eq!(
        names,
        ["a.jpg", "sub/clip.MP4", "sub/frames/0001.jpg", "z.png"]
    );
    for (name, mtime, uid, gid, mode) in entries(&a.path) {
        assert_eq!((uid, gid, mode), (0, 0, 0o644), "{name}");
        assert_eq!(mtime, entries(&b.path)[0].1, "{name}");
    }
}

#[test]
fn content_changes_change_the_hash() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("d");
    dataset(&dir, &MEDIA);
    let a = stage(&dir, &tmp.path().join("a.tar")).unwrap();
    put(&dir, "a.jpg", b"changed");
    let b = stage(&dir, &tmp.path().join("b.tar")).unwrap();
    assert_ne!(a.sha256, b.sha256);
}

#[test]
fn a_folder_without_media_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    put(tmp.path(), "d/notes.txt", b"x");
    let e = stage(&tmp.path().join("d"), &tmp.path().join("a.tar")).unwrap_err();
    assert!(e.to_string().contains("no media files"), "{e}");
    assert!(!tmp.path().join("a.tar").exists());
}
