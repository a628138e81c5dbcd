//! The media of one run, prepared once for every job: a scanned `data_dir` or the cached
//! synthetic dataset, and for video the clip folders of the clip cache.

use std::path::PathBuf;

use augbench_core::{RunConfig, policy};
use indicatif::MultiProgress;

/// Media for every job of the run: a scanned `data_dir` or the cached synthetic dataset; for
/// video, the clip folders of the clip cache.
pub struct Media {
    pub paths: Vec<String>,
    pub info: augbench_core::results::DatasetInfo,
    /// Video: one clip-cache entry per input (readable or skipped with its reason), in input order.
    pub clip_entries: Vec<augbench_media::clip_decode::Entry>,
    /// Target rows: the targets file the workers read and the items it covers.
    pub targets: Option<TargetsMedia>,
}

/// The targets of a run with `selection.targets` (docs/targets.md): read from the COCO
/// annotations of `data_dir`, or drawn with the annotated synthetic dataset.
pub struct TargetsMedia {
    /// The worker's targets file (`naming::targets_file`), every item with targets.
    pub file: PathBuf,
    /// The items with targets, as the workers load them (image-only rows load every item).
    pub paths: Vec<String>,
    /// The annotations file read.
    pub annotations: String,
    /// Items of the dataset without targets (measured in image-only rows alone).
    pub without: u64,
    /// Annotations skipped as bad (`annotation_errors: skip`).
    pub skipped_annotations: u64,
}

pub fn prepare_media(cfg: &RunConfig, mp: &MultiProgress) -> anyhow::Result<Media> {
    let media = cfg.selection.media.unwrap_or(augbench_core::Media::Image);
    let n = cfg.data.num_items;
    let (mut items, mut info) = match &cfg.data.data_dir {
        Some(dir) => {
            let s = augbench_media::scan(dir, media, n)?;
            (s.items, s.info)
        }
        None => {
            let seed = cfg.data.synthetic_seed.unwrap_or(policy::SYNTH_SEED);
            let count = n.unwrap_or_else(|| policy::default_num_items(media));
            let d = augbench_media::synthetic_dataset(seed, count, media, Some(mp))?;
            (d.items, d.info)
        }
    };
    let mut clip_entries = Vec::new();
    if media == augbench_core::Media::Video {
        let clips = video_clips(cfg, &items, mp)?;
        info.skipped = clips.skipped().count() as u64;
        info.clips = Some(clips.info.clone());
        items = clips.clips;
        clip_entries = clips.entries;
    }
    let paths = items.iter().map(|p| p.display().to_string()).collect();
    Ok(Media {
        paths,
        info,
        clip_entries,
        targets: None,
    })
}

/// The clip cache of the video inputs (decoding them on first use), its skips reported.
fn video_clips(
    cfg: &RunConfig,
    items: &[PathBuf],
    mp: &MultiProgress,
) -> anyhow::Result<augbench_media::ClipCache> {
    let clip_length = cfg.data.clip_length.unwrap_or(policy::DEFAULT_CLIP_LENGTH);
    let decoder = if items.iter().any(|p| augbench_media::scan::is_video_file(p)) {
        let refresh = cfg.execution.refresh_requirements.unwrap_or(true);
        Some(crate::worker::clip_decoder(refresh, Some(mp))?)
    } else {
        None
    };
    let clips = augbench_media::clip_cache::build(items, clip_length, decoder.as_ref(), Some(mp))?;
    clips.report(mp);
    Ok(clips)
}
