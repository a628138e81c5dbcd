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
    let with_targets = !cfg.target_sets().is_empty();
    let (mut items, mut info, annotations) = match &cfg.data.data_dir {
        Some(dir) => {
            let s = augbench_media::scan(dir, media, n)?;
            let annotations = cfg.data.annotations.as_ref().map(|a| dir.join(a));
            (s.items, s.info, annotations.map(|a| (dir.clone(), a)))
        }
        None if with_targets => {
            let (seed, count) = synthetic_size(cfg, media);
            let d = augbench_media::annotated_synthetic_dataset(seed, count, Some(mp))?;
            (d.dir.items, d.dir.info, Some((d.dir.root, d.annotations)))
        }
        None => {
            let (seed, count) = synthetic_size(cfg, media);
            let d = augbench_media::synthetic_dataset(seed, count, media, Some(mp))?;
            (d.items, d.info, None)
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
    let targets = match annotations.filter(|_| with_targets) {
        Some((root, file)) => Some(targets_media(cfg, &root, &file, &items, mp)?),
        None => None,
    };
    let paths = items.iter().map(|p| p.display().to_string()).collect();
    Ok(Media {
        paths,
        info,
        clip_entries,
        targets,
    })
}

/// Seed and item count of the built-in synthetic dataset.
fn synthetic_size(cfg: &RunConfig, media: augbench_core::Media) -> (u64, u64) {
    let seed = cfg.data.synthetic_seed.unwrap_or(policy::SYNTH_SEED);
    let count = cfg
        .data
        .num_items
        .unwrap_or_else(|| policy::default_num_items(media));
    (seed, count)
}

/// Reads the COCO annotations `file` of the items under `root`, writes the workers' targets
/// file into the output folder, and says what was left out.
fn targets_media(
    cfg: &RunConfig,
    root: &std::path::Path,
    file: &std::path::Path,
    items: &[PathBuf],
    mp: &MultiProgress,
) -> anyhow::Result<TargetsMedia> {
    let errors = cfg
        .data
        .annotation_errors
        .unwrap_or(augbench_core::policy::DEFAULT_ANNOTATION_ERRORS);
    let annotations = augbench_media::Annotations::read(file, errors)?;
    let matched = augbench_media::for_items(&annotations, root, items)?;
    if matched.with.is_empty() {
        let message = format!(
            "none of the {} items of {} has an annotation in {}",
            items.len(),
            root.display(),
            file.display()
        );
        let hint = "point `data.annotations` at the COCO file of this folder (its images' `file_name`s are paths relative to `data_dir`)";
        return Err(augbench_core::UsageError::new(message, hint).into());
    }
    let out = augbench_core::naming::targets_file(&augbench_core::naming::output_dir(cfg));
    let entries: Vec<(String, &augbench_media::ItemTargets)> = matched
        .with
        .iter()
        .map(|m| (m.item.display().to_string(), &m.targets))
        .collect();
    augbench_media::write_targets_file(&out, &entries)?;
    let media = TargetsMedia {
        file: out,
        paths: entries.into_iter().map(|(p, _)| p).collect(),
        annotations: file.display().to_string(),
        without: matched.without.len() as u64,
        skipped_annotations: annotations.skipped.len() as u64,
    };
    mp.suspend(|| eprintln!("{}", targets_line(&media, &annotations)));
    Ok(media)
}

/// `targets: 200 items from annotations.json (0 without annotations, measured image-only)`,
/// with the skipped annotations named.
fn targets_line(media: &TargetsMedia, annotations: &augbench_media::Annotations) -> String {
    let mut line = format!(
        "targets: {} items from {} ({} without annotations: image-only rows alone)",
        media.paths.len(),
        media.annotations,
        media.without
    );
    if let Some(first) = annotations.skipped.first() {
        line.push_str(&format!(
            "; {} bad annotations skipped (first: id {}: {})",
            annotations.skipped.len(),
            first.annotation_id,
            first.reason
        ));
    }
    line
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
