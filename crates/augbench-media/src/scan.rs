//! Reading a real `data_dir`: image files found recursively by extension, or for video, video
//! files (`.mp4 .avi .mov .mkv .webm`) and folders of frame images; sorted, truncated to
//! `num_items`, with the dataset facts (file count, bytes, extensions) the results record.
//! Decoding and validation happen later (the clip cache for video, the worker's `load` for images).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::Context;
use augbench_core::results::DatasetInfo;
use augbench_core::{Media, UsageError};

/// Image file extensions read from a data folder (lower case; matching ignores case).
pub const IMAGE_EXTENSIONS: &[&str] = &["jpg", "jpeg", "png", "bmp", "webp"];
/// Video file extensions read from a data folder for video (lower case; matching ignores case).
pub const VIDEO_EXTENSIONS: &[&str] = &["mp4", "avi", "mov", "mkv", "webm"];

#[derive(Debug, Clone)]
pub struct Scanned {
    /// Image files, or clip folders for video.
    pub items: Vec<PathBuf>,
    pub info: DatasetInfo,
}

/// The lower-case extension of `path` when it is one of `known`.
fn extension_in(path: &Path, known: &[&str]) -> Option<String> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    known.contains(&ext.as_str()).then_some(ext)
}

fn extension(path: &Path) -> Option<String> {
    extension_in(path, IMAGE_EXTENSIONS).or_else(|| extension_in(path, VIDEO_EXTENSIONS))
}

/// Whether `path` names a video file (by extension).
pub fn is_video_file(path: &Path) -> bool {
    extension_in(path, VIDEO_EXTENSIONS).is_some()
}

/// The frame images directly inside a frame folder, sorted by name (their time order).
pub fn frame_files(folder: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let entries = std::fs::read_dir(folder)
        .with_context(|| format!("reading folder {}", folder.display()))?;
    let mut frames = Vec::new();
    for entry in entries {
        let path = entry
            .with_context(|| format!("reading folder {}", folder.display()))?
            .path();
        if extension_in(&path, IMAGE_EXTENSIONS).is_some() && path.is_file() {
            frames.push(path);
        }
    }
    frames.sort();
    Ok(frames)
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
    let (videos, images): (Vec<PathBuf>, Vec<PathBuf>) =
        files.into_iter().partition(|f| is_video_file(f));
    let mut items = match media {
        Media::Image => images.clone(),
        Media::Video => video_items(&videos, &images),
    };
    if items.is_empty() {
        return Err(empty(dir, media).into());
    }
    if let Some(n) = num_items {
        items.truncate(usize::try_from(n).unwrap_or(usize::MAX));
    }
    let used: Vec<&PathBuf> = match media {
        Media::Image => items.iter().collect(),
        Media::Video => used_by_clips(&items, &images),
    };
    let info = info(dir, media, &items, &used)?;
    Ok(Scanned { items, info })
}

/// Video items: video files and frame folders together, in sorted order.
fn video_items(videos: &[PathBuf], images: &[PathBuf]) -> Vec<PathBuf> {
    let mut items: Vec<PathBuf> = videos.to_vec();
    items.extend(clip_dirs(images));
    items.sort();
    items
}

/// The files behind video items: each video file, and the frames of each frame folder.
fn used_by_clips<'a>(items: &'a [PathBuf], images: &'a [PathBuf]) -> Vec<&'a PathBuf> {
    let folders: BTreeSet<&Path> = items
        .iter()
        .filter(|p| !is_video_file(p))
        .map(PathBuf::as_path)
        .collect();
    let frames = images
        .iter()
        .filter(|f| f.parent().is_some_and(|p| folders.contains(p)));
    items
        .iter()
        .filter(|p| is_video_file(p))
        .chain(frames)
        .collect()
}

fn empty(dir: &Path, media: Media) -> UsageError {
    let (what, exts, hint) = match media {
        Media::Image => (
            "images",
            IMAGE_EXTENSIONS.join(", "),
            "add image files, or remove data_dir to use the built-in synthetic dataset",
        ),
        Media::Video => (
            "videos (video files, or folders of frame images)",
            format!(
                "{}; {}",
                VIDEO_EXTENSIONS.join(", "),
                IMAGE_EXTENSIONS.join(", ")
            ),
            "add video files, or put each clip's frames in its own folder, or remove data_dir to use the built-in synthetic videos",
        ),
    };
    UsageError::new(
        format!("no {what} ({exts}) found under {}", dir.display()),
        hint,
    )
}

/// Collects image and video files below `dir`; symlinked folders are not followed (no loops).
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
        clips: None,
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

    #[test]
    fn video_files_and_frame_folders_are_both_items() {
        let t = tempfile::tempdir().unwrap();
        touch(&t.path().join("b/clip.MP4"), 7);
        touch(&t.path().join("a.avi"), 5);
        touch(&t.path().join("c/f0.png"), 2);
        touch(&t.path().join("c/f1.png"), 2);
        touch(&t.path().join("notes.txt"), 9);
        let s = scan(t.path(), Media::Video, None).unwrap();
        let names: Vec<String> = s
            .items
            .iter()
            .map(|p| p.strip_prefix(t.path()).unwrap().display().to_string())
            .collect();
        assert_eq!(names, vec!["a.avi", "b/clip.MP4", "c"]);
        assert_eq!((s.info.file_count, s.info.total_bytes), (3, 16));
        assert_eq!(s.info.extensions, vec!["avi", "mp4", "png"]);
        let s = scan(t.path(), Media::Video, Some(2)).unwrap();
        assert_eq!((s.info.file_count, s.info.total_bytes), (2, 12));
        let images = scan(t.path(), Media::Image, None).unwrap();
        assert_eq!(images.info.file_count, 2, "videos are not images");
    }

    #[test]
    fn a_folder_without_videos_names_the_video_extensions() {
        let t = tempfile::tempdir().unwrap();
        touch(&t.path().join("readme.md"), 1);
        let e = scan(t.path(), Media::Video, None).unwrap_err();
        let u = e.downcast_ref::<UsageError>().unwrap();
        assert!(u.message.contains("mp4, avi"), "{}", u.message);
    }
}
