//! Reading a real `data_dir`: image files found recursively by extension, or video clips as
//! folders of frame images; sorted, truncated to `num_items`, with the dataset facts
//! (file count, bytes, extensions) the results record. Decoding and validation happen later,
//! in the worker's `load` (which skips corrupt files and counts conversions).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::Context;
use augbench_core::results::DatasetInfo;
use augbench_core::{Media, UsageError};

/// Image file extensions read from a data folder (lower case; matching ignores case).
pub const IMAGE_EXTENSIONS: &[&str] = &["jpg", "jpeg", "png", "bmp", "webp"];

#[derive(Debug, Clone)]
pub struct Scanned {
    /// Image files, or clip folders for video.
    pub items: Vec<PathBuf>,
    pub info: DatasetInfo,
}

fn extension(path: &Path) -> Option<String> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    IMAGE_EXTENSIONS.contains(&ext.as_str()).then_some(ext)
}

/// Scans `dir` for `media`, keeping the first `num_items` items in sorted order.
pub fn scan(dir: &Path, media: Media, num_items: Option<u64>) -> anyhow::Result<Scanned> {
    if !dir.is_dir() {
        return Err(UsageError::new(
            format!("data_dir {} does not exist or is not a folder", dir.display()),
            "point data_dir at a folder of images, or remove it to use the built-in synthetic dataset",
        )
        .into());
    }
    let mut files = Vec::new();
    walk(dir, &mut files)?;
    files.sort();
    let mut items = match media {
        Media::Image => files.clone(),
        Media::Video => clip_dirs(&files),
    };
    if items.is_empty() {
        return Err(empty(dir, media).into());
    }
    if let Some(n) = num_items {
        items.truncate(usize::try_from(n).unwrap_or(usize::MAX));
    }
    let used: Vec<&PathBuf> = match media {
        Media::Image => items.iter().collect(),
        Media::Video => files
            .iter()
            .filter(|f| f.parent().is_some_and(|p| items.iter().any(|c| c == p)))
            .collect(),
    };
    let info = info(dir, media, &items, &used)?;
    Ok(Scanned { items, info })
}

fn empty(dir: &Path, media: Media) -> UsageError {
    let exts = IMAGE_EXTENSIONS.join(", ");
    let (what, hint) = match media {
        Media::Image => (
            "images",
            "add image files, or remove data_dir to use the built-in synthetic dataset",
        ),
        Media::Video => (
            "video clips (folders of frame images)",
            "put each clip's frames in its own folder",
        ),
    };
    UsageError::new(
        format!("no {what} ({exts}) found under {}", dir.display()),
        hint,
    )
}

/// Collects image files below `dir`; symlinked folders are not followed (no loops).
fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    let entries =
        std::fs::read_dir(dir).with_context(|| format!("reading folder {}", dir.display()))?;
    for entry in entries {
        let entry = entry.with_context(|| format!("reading folder {}", dir.display()))?;
        let path = entry.path();
        let kind = entry
            .file_type()
            .with_context(|| format!("reading {}", path.display()))?;
        if kind.is_dir() {
            walk(&path, out)?;
        } else if extension(&path).is_some() && path.is_file() {
            out.push(path);
        }
    }
    Ok(())
}

/// Folders that directly hold frame images, sorted.
fn clip_dirs(files: &[PathBuf]) -> Vec<PathBuf> {
    let dirs: BTreeSet<PathBuf> = files
        .iter()
        .filter_map(|f| f.parent().map(Path::to_path_buf))
        .collect();
    dirs.into_iter().collect()
}

fn info(
    dir: &Path,
    media: Media,
    items: &[PathBuf],
    files: &[&PathBuf],
) -> anyhow::Result<DatasetInfo> {
    let mut total_bytes = 0;
    let mut extensions = BTreeSet::new();
    for f in files {
        total_bytes += std::fs::metadata(f)
            .with_context(|| format!("reading {}", f.display()))?
            .len();
        extensions.extend(extension(f));
    }
    Ok(DatasetInfo {
        path: dir.display().to_string(),
        media: match media {
            Media::Image => "image".into(),
            Media::Video => "video".into(),
        },
        synthetic: false,
        file_count: items.len() as u64,
        total_bytes,
        extensions: extensions.into_iter().collect(),
        skipped: 0,
        converted: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(path: &Path, bytes: usize) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, vec![0u8; bytes]).unwrap();
    }

    #[test]
    fn images_are_found_recursively_sorted_and_truncated() {
        let t = tempfile::tempdir().unwrap();
        touch(&t.path().join("b/2.PNG"), 5);
        touch(&t.path().join("a.jpg"), 3);
        touch(&t.path().join("b/1.jpeg"), 4);
        touch(&t.path().join("notes.txt"), 9);
        let s = scan(t.path(), Media::Image, None).unwrap();
        let names: Vec<String> = s
            .items
            .iter()
            .map(|p| p.strip_prefix(t.path()).unwrap().display().to_string())
            .collect();
        assert_eq!(names, vec!["a.jpg", "b/1.jpeg", "b/2.PNG"]);
        assert_eq!((s.info.file_count, s.info.total_bytes), (3, 12));
        assert_eq!(s.info.extensions, vec!["jpeg", "jpg", "png"]);
        let s = scan(t.path(), Media::Image, Some(2)).unwrap();
        assert_eq!((s.info.file_count, s.info.total_bytes), (2, 7));
    }

    #[test]
    fn an_empty_folder_is_a_usage_error_naming_it() {
        let t = tempfile::tempdir().unwrap();
        touch(&t.path().join("readme.md"), 1);
        let e = scan(t.path(), Media::Image, None).unwrap_err();
        let u = e.downcast_ref::<UsageError>().unwrap();
        assert!(
            u.message.contains(&t.path().display().to_string()),
            "{}",
            u.message
        );
        assert!(!u.hint.is_empty());
        assert!(scan(&t.path().join("missing"), Media::Image, None).is_err());
    }

    #[test]
    fn clips_are_folders_of_frames() {
        let t = tempfile::tempdir().unwrap();
        for c in ["c2", "c1"] {
            for f in ["f0.jpg", "f1.jpg"] {
                touch(&t.path().join(c).join(f), 2);
            }
        }
        let s = scan(t.path(), Media::Video, Some(1)).unwrap();
        assert_eq!(s.items, vec![t.path().join("c1")]);
        assert_eq!((s.info.file_count, s.info.total_bytes), (1, 4));
    }
}
