//! The clip cache: every video input (a video file, or a folder of frame images) becomes one
//! folder of exactly `clip_length` frames `frame_NNN.<ext>` in time order, which every worker
//! loads. Layout `<cache>/datasets/clips/<key>/{manifest.json, clip_NNNNNN/}`; the key hashes the
//! dataset fingerprint (paths, sizes, mtimes), clip length, sampling rule and decoder. Built in a
//! temporary folder and renamed into place; a later run with the same key decodes nothing.

use std::path::{Path, PathBuf};

use anyhow::Context;
use augbench_core::results::ClipsInfo;
use augbench_core::{UsageError, policy};
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::clip_decode::{DecodeJob, Decoder, Entry, JobItem};
use crate::clips::{SAMPLING_RULE, sample_indices};
use crate::scan::{frame_files, is_video_file};
use augbench_host::fsutil::{Placed, build_dir, write_atomic};

/// Bump when the folder layout or the manifest changes: part of the key.
pub const LAYOUT_VERSION: u32 = 1;
const MANIFEST: &str = "manifest.json";
/// How frame folders are read: their files are copied, not decoded.
const FRAME_FOLDER_READER: &str = "frame-files (copied)";

/// The clips of a dataset, ready for the workers.
#[derive(Debug, Clone)]
pub struct ClipCache {
    pub root: PathBuf,
    /// The clip folders, in input order (skipped inputs have none).
    pub clips: Vec<PathBuf>,
    /// One entry per input, in input order.
    pub entries: Vec<Entry>,
    pub info: ClipsInfo,
    /// Whether an existing cache was reused (nothing decoded).
    pub reused: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Manifest {
    layout: u32,
    key: String,
    clip_length: u64,
    sampling_rule: String,
    decoder: String,
    items: Vec<Entry>,
}

impl ClipCache {
    pub fn skipped(&self) -> impl Iterator<Item = &Entry> {
        self.entries.iter().filter(|e| e.skipped.is_some())
    }

    /// Prints each skipped input with its reason, each note, and the count of skipped inputs.
    pub fn report(&self, mp: &MultiProgress) {
        let skipped: Vec<&Entry> = self.skipped().collect();
        mp.suspend(|| {
            for e in &self.entries {
                if let Some(note) = &e.note {
                    eprintln!("note: {}: {note}", e.source);
                }
            }
            for e in &skipped {
                let reason = e.skipped.as_deref().unwrap_or_default();
                eprintln!("warning: skipped {}: {reason}", e.source);
            }
            if !skipped.is_empty() {
                eprintln!(
                    "warning: {} of {} videos skipped as unreadable; the run uses the other {}",
                    skipped.len(),
                    self.entries.len(),
                    self.clips.len()
                );
            }
        });
    }
}

/// The clip cache of `items` under the cache root, built on first use. `decoder` is needed only
/// when `items` hold video files.
pub fn build(
    items: &[PathBuf],
    clip_length: u64,
    decoder: Option<&Decoder>,
    mp: Option<&MultiProgress>,
) -> anyhow::Result<ClipCache> {
    build_in(
        &augbench_host::cache::clips_dir(),
        items,
        clip_length,
        decoder,
        mp,
    )
}

/// [`build`] below an explicit folder.
pub fn build_in(
    parent: &Path,
    items: &[PathBuf],
    clip_length: u64,
    decoder: Option<&Decoder>,
    mp: Option<&MultiProgress>,
) -> anyhow::Result<ClipCache> {
    anyhow::ensure!(clip_length > 0, "clip_length must be at least 1");
    let key = cache_key(items, clip_length, decoder)?;
    let root = parent.join(&key);
    if let Some(m) = read_manifest(&root, &key) {
        return Ok(from_manifest(root, m, true));
    }
    if root.exists() {
        // A cache folder whose manifest is missing or whose clips were removed: build it again.
        std::fs::remove_dir_all(&root)
            .with_context(|| format!("removing incomplete clip cache {}", root.display()))?;
    }
    let make = |tmp: &Path| {
        std::fs::create_dir_all(tmp).with_context(|| format!("creating {}", tmp.display()))?;
        let m = fill(tmp, items, clip_length, decoder, mp)?;
        none_readable(&m)?;
        write_manifest(tmp, &key, m)
    };
    let done = |r: &Path| read_manifest(r, &key).is_some();
    match build_dir(&root, make, done)? {
        Placed::Built(m) => Ok(from_manifest(root, m, false)),
        // Another augbench built the same key first: use theirs.
        Placed::Theirs => {
            let m = read_manifest(&root, &key)
                .with_context(|| format!("reading the clip cache {}", root.display()))?;
            Ok(from_manifest(root, m, true))
        }
    }
}

/// Name of the clip folder of input `index`, and of frame `k` inside it.
pub fn clip_name(index: usize) -> String {
    format!("clip_{index:06}")
}

fn frame_name(k: usize, ext: &str) -> String {
    format!("frame_{k:03}.{ext}")
}

/// The key: everything that changes the clips.
fn cache_key(
    items: &[PathBuf],
    clip_length: u64,
    decoder: Option<&Decoder>,
) -> anyhow::Result<String> {
    let mut h = Sha256::new();
    let identity = decoder.map_or("none", |d| d.identity.as_str());
    let head = format!(
        "layout={LAYOUT_VERSION};rule={SAMPLING_RULE};L={clip_length};min_side={};decoder={identity};frames={FRAME_FOLDER_READER}",
        policy::MIN_VIDEO_SIDE
    );
    h.update(head.as_bytes());
    for item in items {
        if is_video_file(item) {
            fingerprint(&mut h, item)?;
        } else {
            h.update(format!("\0folder:{}", item.display()).as_bytes());
            for f in frame_files(item)? {
                fingerprint(&mut h, &f)?;
            }
        }
    }
    let digest = h.finalize();
    Ok(digest.iter().take(8).map(|b| format!("{b:02x}")).collect())
}

/// Path, size and modification time of one file.
fn fingerprint(h: &mut Sha256, file: &Path) -> anyhow::Result<()> {
    let meta = std::fs::metadata(file).with_context(|| format!("reading {}", file.display()))?;
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    h.update(format!("\0{}|{}|{mtime}", file.display(), meta.len()).as_bytes());
    Ok(())
}

fn read_manifest(root: &Path, key: &str) -> Option<Manifest> {
    let text = std::fs::read_to_string(root.join(MANIFEST)).ok()?;
    let m: Manifest = serde_json::from_str(&text).ok()?;
    let complete =
        m.items.iter().filter_map(|e| e.clip.as_ref()).all(|c| {
            std::fs::read_dir(root.join(c)).is_ok_and(|d| d.count() as u64 == m.clip_length)
        });
    (m.key == key && m.layout == LAYOUT_VERSION && complete).then_some(m)
}

fn write_manifest(dir: &Path, key: &str, mut m: Manifest) -> anyhow::Result<Manifest> {
    m.key = key.to_string();
    let text = serde_json::to_vec_pretty(&m).context("encoding the clip manifest")?;
    write_atomic(&dir.join(MANIFEST), &text)?;
    Ok(m)
}

fn from_manifest(root: PathBuf, m: Manifest, reused: bool) -> ClipCache {
    let clips = m
        .items
        .iter()
        .filter_map(|e| e.clip.as_ref().map(|c| root.join(c)))
        .collect();
    let info = ClipsInfo {
        clip_length: m.clip_length,
        sampling_rule: m.sampling_rule,
        decoder: m.decoder,
        cache: root.display().to_string(),
    };
    ClipCache {
        root,
        clips,
        entries: m.items,
        info,
        reused,
    }
}

/// Materializes every clip into `dir`: frame folders by copying, video files by the decoder.
fn fill(
    dir: &Path,
    items: &[PathBuf],
    clip_length: u64,
    decoder: Option<&Decoder>,
    mp: Option<&MultiProgress>,
) -> anyhow::Result<Manifest> {
    let bar = bar(mp, items.len() as u64, clip_length);
    let result = fill_with(dir, items, clip_length, decoder, &bar);
    bar.finish_and_clear();
    result
}

fn fill_with(
    dir: &Path,
    items: &[PathBuf],
    clip_length: u64,
    decoder: Option<&Decoder>,
    bar: &ProgressBar,
) -> anyhow::Result<Manifest> {
    let mut entries: Vec<Option<Entry>> = vec![None; items.len()];
    let mut readers = Vec::new();
    for (i, item) in items.iter().enumerate().filter(|(_, p)| !is_video_file(p)) {
        entries[i] = Some(copy_folder(item, &dir.join(clip_name(i)), clip_length)?);
        bar.inc(1);
    }
    if entries.iter().any(Option::is_some) {
        readers.push(FRAME_FOLDER_READER.to_string());
    }
    let videos: Vec<usize> = (0..items.len())
        .filter(|&i| is_video_file(&items[i]))
        .collect();
    if !videos.is_empty() {
        let decoder = decoder.context("video files need the video decoder")?;
        let job = decode_job(dir, items, &videos, clip_length);
        let decoded = decoder.decode(&job, dir, bar)?;
        for (i, e) in videos.into_iter().zip(decoded.entries) {
            entries[i] = Some(e);
        }
        readers.insert(0, decoded.decoder);
    }
    Ok(Manifest {
        layout: LAYOUT_VERSION,
        key: String::new(),
        clip_length,
        sampling_rule: SAMPLING_RULE.to_string(),
        decoder: readers.join(" + "),
        items: entries.into_iter().flatten().collect(),
    })
}

fn decode_job(dir: &Path, items: &[PathBuf], videos: &[usize], clip_length: u64) -> DecodeJob {
    DecodeJob {
        clip_length,
        min_side: policy::MIN_VIDEO_SIDE,
        memory_bytes: policy::CLIP_DECODE_MEMORY_BYTES,
        items: videos
            .iter()
            .map(|&i| JobItem {
                source: items[i].display().to_string(),
                out: dir.join(clip_name(i)).display().to_string(),
            })
            .collect(),
    }
}

/// A frame folder's clip: the sampling rule over its sorted frame files, each sampled file
/// copied (repeats allowed) as `frame_NNN.<ext>`.
fn copy_folder(src: &Path, dst: &Path, clip_length: u64) -> anyhow::Result<Entry> {
    let files = frame_files(src)?;
    if files.is_empty() {
        return Ok(Entry::skip(src, "the folder holds no frame images"));
    }
    std::fs::create_dir_all(dst).with_context(|| format!("creating {}", dst.display()))?;
    let indices = sample_indices(files.len() as u64, clip_length);
    for (k, &i) in indices.iter().enumerate() {
        let file = &files[i as usize];
        let ext = file
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        let to = dst.join(frame_name(k, &ext));
        std::fs::copy(file, &to)
            .with_context(|| format!("copying {} to {}", file.display(), to.display()))?;
    }
    Ok(Entry {
        clip: dst.file_name().map(|n| n.to_string_lossy().into_owned()),
        skipped: None,
        frames: files.len() as u64,
        indices,
        ..Entry::skip(src, "")
    })
}

/// Exit 2 with the reasons when no input became a clip.
fn none_readable(m: &Manifest) -> anyhow::Result<()> {
    if m.items.iter().any(|e| e.clip.is_some()) {
        return Ok(());
    }
    let reasons: Vec<String> = m
        .items
        .iter()
        .take(3)
        .map(|e| format!("{}: {}", e.source, e.skipped.as_deref().unwrap_or("?")))
        .collect();
    let more = m.items.len().saturating_sub(reasons.len());
    let more = if more > 0 {
        format!("\n  … and {more} more")
    } else {
        String::new()
    };
    Err(UsageError::new(
        format!(
            "none of the {} videos could be read:\n  {}{more}",
            m.items.len(),
            reasons.join("\n  ")
        ),
        "check the files (ffprobe FILE shows what is wrong), or remove data_dir to use the built-in synthetic videos",
    )
    .into())
}

/// The progress bar, labelled `Build video clips (N, L frames)`.
fn bar(mp: Option<&MultiProgress>, count: u64, clip_length: u64) -> ProgressBar {
    let Some(multi) = mp else {
        return ProgressBar::hidden();
    };
    let style = ProgressStyle::with_template("{msg} {bar:30} {pos}/{len} [{elapsed}]")
        .unwrap_or_else(|_| ProgressStyle::default_bar());
    let bar = multi.add(ProgressBar::new(count).with_style(style));
    bar.set_message(format!("Build video clips ({count}, {clip_length} frames)"));
    bar
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder(root: &Path, name: &str, frames: usize) -> PathBuf {
        let dir = root.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        for t in 0..frames {
            std::fs::write(dir.join(format!("img{t:02}.jpg")), format!("frame {t}")).unwrap();
        }
        dir
    }

    fn clip_contents(clip: &Path) -> Vec<(String, String)> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(clip)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        files
            .iter()
            .map(|f| {
                let name = f.file_name().unwrap().to_string_lossy().into_owned();
                (name, std::fs::read_to_string(f).unwrap())
            })
            .collect()
    }

    #[test]
    fn frame_folders_become_clips_of_exactly_l_frames() {
        let data = tempfile::tempdir().unwrap();
        let cache = tempfile::tempdir().unwrap();
        let items = vec![folder(data.path(), "a", 10), folder(data.path(), "b", 2)];
        let c = build_in(cache.path(), &items, 4, None, None).unwrap();
        assert!(!c.reused);
        assert_eq!(c.clips.len(), 2);
        let a = clip_contents(&c.clips[0]);
        let want: Vec<(String, String)> = [0, 3, 6, 9]
            .iter()
            .enumerate()
            .map(|(k, t)| (format!("frame_{k:03}.jpg"), format!("frame {t}")))
            .collect();
        assert_eq!(a, want);
        let b: Vec<String> = clip_contents(&c.clips[1])
            .into_iter()
            .map(|x| x.1)
            .collect();
        assert_eq!(
            b,
            vec!["frame 0", "frame 1", "frame 1", "frame 1"],
            "last frame repeats"
        );
        assert_eq!(c.entries[0].indices, vec![0, 3, 6, 9]);
        assert_eq!(c.info.decoder, FRAME_FOLDER_READER);
        assert_eq!(c.info.sampling_rule, SAMPLING_RULE);
        let left: Vec<_> = std::fs::read_dir(cache.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "no temporary folder is left behind");
    }

    #[test]
    fn a_second_build_reuses_and_a_change_rebuilds() {
        let data = tempfile::tempdir().unwrap();
        let cache = tempfile::tempdir().unwrap();
        let items = vec![folder(data.path(), "a", 5)];
        let first = build_in(cache.path(), &items, 3, None, None).unwrap();
        let again = build_in(cache.path(), &items, 3, None, None).unwrap();
        assert!(again.reused);
        assert_eq!(again.root, first.root);
        let other_length = build_in(cache.path(), &items, 4, None, None).unwrap();
        assert!(!other_length.reused);
        assert_ne!(other_length.root, first.root);
        std::fs::remove_file(first.clips[0].join("frame_001.jpg")).unwrap();
        let repaired = build_in(cache.path(), &items, 3, None, None).unwrap();
        assert!(!repaired.reused, "a clip missing a frame is built again");
        assert_eq!(std::fs::read_dir(&repaired.clips[0]).unwrap().count(), 3);
        std::fs::write(items[0].join("img99.jpg"), "new frame").unwrap();
        let changed = build_in(cache.path(), &items, 3, None, None).unwrap();
        assert!(!changed.reused, "a new frame changes the fingerprint");
    }

    #[test]
    fn videos_without_a_decoder_fail_and_leave_nothing() {
        let data = tempfile::tempdir().unwrap();
        let cache = tempfile::tempdir().unwrap();
        let video = data.path().join("v.avi");
        std::fs::write(&video, b"RIFF").unwrap();
        let e = build_in(cache.path(), &[video], 4, None, None).unwrap_err();
        assert!(format!("{e:#}").contains("video decoder"), "{e:#}");
        assert_eq!(std::fs::read_dir(cache.path()).unwrap().count(), 0);
    }

    #[test]
    fn nothing_readable_is_a_usage_error_with_the_reasons() {
        let m = Manifest {
            layout: LAYOUT_VERSION,
            key: String::new(),
            clip_length: 4,
            sampling_rule: SAMPLING_RULE.into(),
            decoder: "opencv 5".into(),
            items: vec![
                Entry::skip(Path::new("/d/zero.avi"), "no frame could be decoded"),
                Entry::skip(Path::new("/d/junk.mp4"), "OpenCV cannot open it"),
            ],
        };
        let e = none_readable(&m).unwrap_err();
        let u = e.downcast_ref::<UsageError>().unwrap();
        assert!(u.message.contains("none of the 2 videos"), "{}", u.message);
        assert!(
            u.message.contains("/d/junk.mp4: OpenCV cannot open it"),
            "{}",
            u.message
        );
        assert!(!u.hint.is_empty());
    }
}
