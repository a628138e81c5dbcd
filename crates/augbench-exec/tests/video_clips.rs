//! The clip cache with the real decoder (OpenCV in the `video_decode` environment, built with uv
//! into the shared environment cache on first use): synthetic AVIs decode to clips whose frame
//! markers prove exactly which frames were sampled; Rust and Python agree on the sampling rule; a
//! second build reuses the cache; bad files are skipped with their reasons; nothing readable fails.

use std::path::{Path, PathBuf};
use std::process::Command;

use augbench_core::UsageError;
use augbench_exec::worker::clip_decoder;
use augbench_media::clip_decode::Decoder;
use augbench_media::clips::{SAMPLING_RULE, sample_indices};
use augbench_media::{avi, clip_cache, synth, synth_video};
use image::RgbImage;
use indicatif::ProgressBar;

const SEED: u64 = 7;

fn decoder() -> Decoder {
    clip_decoder(false, None).expect("the video_decode environment builds (needs uv and PyPI)")
}

/// The frame index each PNG of a clip folder carries, in file-name order.
fn markers(clip: &Path) -> Vec<u64> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(clip)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
        .iter()
        .map(|f| {
            let img = image::open(f).unwrap().to_rgb8();
            assert_eq!(img.dimensions(), augbench_core::policy::SYNTH_VIDEO_SIZE);
            synth_video::read_marker(&img)
                .unwrap_or_else(|| panic!("{} has no marker", f.display()))
        })
        .collect()
}

fn jpegs(frames: &[RgbImage]) -> Vec<Vec<u8>> {
    frames
        .iter()
        .map(|f| synth::encode_jpeg(f).unwrap())
        .collect()
}

#[test]
fn sampled_frames_are_exactly_the_rule_and_the_cache_is_reused() {
    let data = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let videos = synth_video::write_videos(data.path(), SEED, 3, &ProgressBar::hidden()).unwrap();
    // A video shorter than the clip is not an error: its last frame repeats.
    let short = data.path().join("short.avi");
    let frames = synth_video::frames(SEED, 0);
    let (w, h) = augbench_core::policy::SYNTH_VIDEO_SIZE;
    avi::write_avi(&short, w, h, 25, &jpegs(&frames[..5])).unwrap();
    let mut items = videos.clone();
    items.push(short);
    let counts: Vec<u64> = (0..3)
        .map(|i| synth_video::frame_count(SEED, i))
        .chain([5])
        .collect();

    let d = decoder();
    for clip_length in [16u64, 7] {
        let built =
            clip_cache::build_in(cache.path(), &items, clip_length, Some(&d), None).unwrap();
        assert!(!built.reused);
        assert_eq!(built.clips.len(), 4);
        assert!(
            built.info.decoder.starts_with("opencv "),
            "{}",
            built.info.decoder
        );
        assert_eq!(built.info.sampling_rule, SAMPLING_RULE);
        for ((clip, entry), n) in built.clips.iter().zip(&built.entries).zip(&counts) {
            let want = sample_indices(*n, clip_length);
            assert_eq!(entry.frames, *n, "{}", entry.source);
            assert_eq!(entry.indices, want, "{}", entry.source);
            assert_eq!(markers(clip), want, "{}: the frames on disk", entry.source);
        }
        assert_eq!(
            markers(&built.clips[3]),
            [0, 1, 2, 3]
                .into_iter()
                .chain(std::iter::repeat_n(4, clip_length as usize - 4))
                .collect::<Vec<_>>()
        );

        let manifest = built.root.join("manifest.json");
        let stamp = std::fs::metadata(&manifest).unwrap().modified().unwrap();
        let again =
            clip_cache::build_in(cache.path(), &items, clip_length, Some(&d), None).unwrap();
        assert!(again.reused, "a second build decodes nothing");
        assert_eq!(again.clips, built.clips);
        assert_eq!(
            std::fs::metadata(&manifest).unwrap().modified().unwrap(),
            stamp
        );
    }
}

#[test]
fn rust_and_python_sample_the_same_indices() {
    let d = decoder();
    let script = "import json\nfrom augbench_clips.decode import sample_indices, SAMPLING_RULE\n\
                  print(json.dumps({'rule': SAMPLING_RULE, 'grid': [[sample_indices(n, l) for l in range(0, 40)] for n in range(0, 260)]}))";
    // The decoder's own interpreter and environment (`PYTHONPATH` names the `augbench_clips`
    // package), with a script in place of the module.
    let out = Command::new(&d.command.program)
        .args(["-c", script])
        .envs(d.command.env.iter().map(|(k, v)| (k, v)))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["rule"], SAMPLING_RULE);
    let grid: Vec<Vec<Vec<u64>>> = serde_json::from_value(v["grid"].clone()).unwrap();
    for (n, row) in grid.iter().enumerate() {
        for (l, py) in row.iter().enumerate() {
            assert_eq!(&sample_indices(n as u64, l as u64), py, "n={n} L={l}");
        }
    }
}

/// A folder of broken inputs next to one good video; returns (folder, good video, bad files).
fn bad_inputs(dir: &Path) -> (PathBuf, Vec<(PathBuf, &'static str)>) {
    let good = synth_video::write_videos(dir, SEED, 1, &ProgressBar::hidden()).unwrap();
    let bytes = std::fs::read(&good[0]).unwrap();
    let header_cut = dir.join("header_cut.avi");
    std::fs::write(&header_cut, &bytes[..100]).unwrap();
    let zero = dir.join("zero_frames.avi");
    avi::write_avi(&zero, 320, 240, 25, &[]).unwrap();
    let garbage = dir.join("garbage.mp4");
    std::fs::write(
        &garbage,
        b"this is not a video at all, just text".repeat(50),
    )
    .unwrap();
    let tiny = dir.join("tiny.avi");
    avi::write_avi(&tiny, 1, 1, 25, &jpegs(&vec![RgbImage::new(1, 1); 4])).unwrap();
    let bad = vec![
        (header_cut, "cannot open"),
        (zero, "no frame could be decoded"),
        (garbage, "cannot open"),
        (tiny, "1x1 pixels"),
    ];
    (good[0].clone(), bad)
}

#[test]
fn unreadable_videos_are_skipped_with_their_reasons() {
    let data = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let (good, bad) = bad_inputs(data.path());
    // Truncated mid-stream: the frames before the cut still make a clip, with a note.
    let bytes = std::fs::read(&good).unwrap();
    let cut = data.path().join("cut_mid.avi");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let mut items = vec![good.clone(), cut];
    items.extend(bad.iter().map(|b| b.0.clone()));
    let built = clip_cache::build_in(cache.path(), &items, 16, Some(&decoder()), None).unwrap();
    assert_eq!(built.clips.len(), 2, "{:#?}", built.entries);
    let skipped: Vec<_> = built.skipped().collect();
    assert_eq!(skipped.len(), bad.len(), "{:#?}", built.entries);
    for (entry, (path, reason)) in skipped.iter().zip(&bad) {
        assert_eq!(entry.source, path.display().to_string());
        let why = entry.skipped.as_deref().unwrap();
        assert!(
            !why.is_empty() && why.contains(reason),
            "{}: {why}",
            path.display()
        );
    }
    let partial = &built.entries[1];
    assert!(partial.frames > 0 && partial.frames < synth_video::frame_count(SEED, 0));
    assert_eq!(markers(&built.clips[1]), sample_indices(partial.frames, 16));
    assert!(
        partial
            .note
            .as_deref()
            .unwrap_or_default()
            .contains("truncated"),
        "{partial:?}"
    );
}

#[test]
fn no_readable_video_is_a_usage_error_naming_the_files() {
    let data = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let (_, bad) = bad_inputs(data.path());
    let items: Vec<PathBuf> = bad.iter().map(|b| b.0.clone()).collect();
    let e = clip_cache::build_in(cache.path(), &items, 16, Some(&decoder()), None).unwrap_err();
    let u = e
        .downcast_ref::<UsageError>()
        .unwrap_or_else(|| panic!("{e:#}"));
    assert!(u.message.contains("none of the 4 videos"), "{}", u.message);
    assert!(u.message.contains("header_cut.avi"), "{}", u.message);
    assert_eq!(
        std::fs::read_dir(cache.path()).unwrap().count(),
        0,
        "nothing cached"
    );
}
