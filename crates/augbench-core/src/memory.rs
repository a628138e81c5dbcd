//! Memory estimate of a plan: the decoded media each library's worker holds (items × pixels ×
//! channels × bytes per sample of its native layout; in pipeline mode only the memory scope
//! preloads, as uint8, plus the batches in flight). The interleaved schedule keeps every
//! library's worker alive at once, so it needs the sum; a sequential run needs the largest one.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::config::{RunConfig, Schedule};
use crate::policy;
use augbench_catalog::matrix::{Matrix, Media, Mode};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemoryEstimate {
    /// Decoded media per library (bytes), for the configured item count.
    pub per_library: BTreeMap<String, u64>,
    /// Bytes held at the same time under the run's schedule.
    pub held_at_once: u64,
    /// How the estimate was made (the item size it assumed).
    pub basis: String,
}

/// Samples (pixels × channels, × frames for video) of one nominal item: the synthetic dataset's
/// ImageNet-like sizes (their weighted mean) or its video frame size.
fn samples_per_item(cfg: &RunConfig) -> (u64, String) {
    let channels = cfg.data.num_channels.unwrap_or(policy::DEFAULT_CHANNELS);
    match cfg.selection.media.unwrap_or(Media::Image) {
        Media::Image => {
            let sizes = policy::SYNTH_IMAGE_SIZES;
            let weight: u64 = sizes.iter().map(|s| u64::from(s.2)).sum();
            let pixels: u64 = sizes
                .iter()
                .map(|(w, h, k)| u64::from(*w) * u64::from(*h) * u64::from(*k))
                .sum::<u64>()
                / weight.max(1);
            let basis = format!("{pixels} pixels × {channels} channels an image (ImageNet-like)");
            (pixels * channels, basis)
        }
        Media::Video => {
            let (w, h) = policy::SYNTH_VIDEO_SIZE;
            let frames = cfg.data.clip_length.unwrap_or(policy::DEFAULT_CLIP_LENGTH);
            let basis = format!("{frames} frames of {w}×{h} × {channels} channels a clip");
            (u64::from(w) * u64::from(h) * frames * channels, basis)
        }
    }
}

/// Pipeline mode: preloaded items (memory scope, uint8) plus the float32 batches the loader keeps
/// in flight (workers × prefetch, of the recipe's 3×224×224 output, × frames for clips); the
/// interleaved schedule keeps two loaders per worker (the row's and the decode ceiling's
/// companion).
fn pipeline_bytes(cfg: &RunConfig, samples: u64, schedule: Schedule) -> (u64, String) {
    let e = &cfg.execution;
    let scope = e.pipeline_scope.unwrap_or(policy::DEFAULT_PIPELINE_SCOPE);
    let items = cfg.data.num_items.unwrap_or(0);
    let preloaded = if scope.decodes() {
        0
    } else {
        items.saturating_mul(samples)
    };
    let frames = match cfg.selection.media.unwrap_or(Media::Image) {
        Media::Image => 1,
        Media::Video => cfg.data.clip_length.unwrap_or(policy::DEFAULT_CLIP_LENGTH),
    };
    let batch_bytes = e
        .batch_size
        .unwrap_or(policy::DEFAULT_BATCH_SIZE)
        .saturating_mul(frames)
        .saturating_mul(3 * 224 * 224 * 4);
    let in_flight = e
        .workers
        .unwrap_or_default()
        .max(1)
        .saturating_mul(policy::PIPELINE_PREFETCH_FACTOR + 2)
        .saturating_mul(batch_bytes);
    let (loaders, per) = match schedule {
        Schedule::Interleaved => (2, " × 2 loaders (the row's and the ceiling's companion)"),
        Schedule::Sequential => (1, ""),
    };
    let in_flight = in_flight.saturating_mul(loaders);
    let what = if scope.decodes() {
        "paths only (the loader decodes)"
    } else {
        "preloaded uint8 items"
    };
    (
        preloaded.saturating_add(in_flight),
        format!(
            "{what} + float32 batches in flight (workers × (prefetch + the one being filled + the one being consumed){per})"
        ),
    )
}

/// The estimate for the libraries of a resolved config under its schedule.
pub fn estimate(cfg: &RunConfig, schedule: Schedule) -> MemoryEstimate {
    let (samples, basis) = samples_per_item(cfg);
    if cfg.selection.mode == Some(Mode::Decode) {
        // A decoder holds the clip it is decoding (the check pass keeps no clip either).
        let per_decoder: BTreeMap<String, u64> = cfg
            .selection
            .decoders
            .iter()
            .flatten()
            .map(|d| (d.clone(), samples))
            .collect();
        return finish(
            per_decoder,
            schedule,
            format!("{basis}; one clip at a time per decoder"),
        );
    }
    if cfg.selection.mode == Some(Mode::Pipeline) {
        let (bytes, what) = pipeline_bytes(cfg, samples, schedule);
        let per_library: BTreeMap<String, u64> = columns(cfg)
            .into_iter()
            .map(|(column, _)| (column, bytes))
            .collect();
        return finish(per_library, schedule, format!("{basis}; {what}"));
    }
    let items = cfg.data.num_items.unwrap_or(0);
    let m = Matrix::get();
    let per_library: BTreeMap<String, u64> = columns(cfg)
        .into_iter()
        .filter_map(|(column, name)| Some((column, m.library(&name)?)))
        .map(|(column, l)| {
            let bytes = l
                .bytes_per_sample
                .unwrap_or(policy::DECODED_BYTES_PER_SAMPLE);
            (column, items.saturating_mul(samples).saturating_mul(bytes))
        })
        .collect();
    finish(per_library, schedule, basis)
}

/// Every column of the run (a library, or a variant's label) with the library it runs.
fn columns(cfg: &RunConfig) -> Vec<(String, String)> {
    let plain = cfg.selection.libraries.iter().flatten();
    let plain = plain.map(|l| (l.clone(), l.clone()));
    let variants = crate::variant::planned(cfg).into_iter();
    plain
        .chain(variants.map(|v| (v.label, v.library)))
        .collect()
}

fn finish(per_library: BTreeMap<String, u64>, schedule: Schedule, basis: String) -> MemoryEstimate {
    let held_at_once = match schedule {
        Schedule::Interleaved => per_library.values().fold(0u64, |a, b| a.saturating_add(*b)),
        Schedule::Sequential => per_library.values().copied().max().unwrap_or(0),
    };
    MemoryEstimate {
        per_library,
        held_at_once,
        basis,
    }
}

/// `1.2 GiB`, `340 MiB`.
pub fn human_bytes(bytes: u64) -> String {
    const MIB: f64 = 1024.0 * 1024.0;
    let mib = bytes as f64 / MIB;
    if mib >= 1024.0 {
        format!("{:.1} GiB", mib / 1024.0)
    } else {
        format!("{mib:.0} MiB")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(libraries: &[&str], items: u64) -> RunConfig {
        let mut c = RunConfig::default();
        c.selection.libraries = Some(libraries.iter().map(|s| s.to_string()).collect());
        c.data.num_items = Some(items);
        c
    }

    #[test]
    fn interleaved_holds_every_library_and_sequential_the_largest() {
        let c = cfg(&["pillow", "kornia"], 100);
        let i = estimate(&c, Schedule::Interleaved);
        let s = estimate(&c, Schedule::Sequential);
        let (pillow, kornia) = (i.per_library["pillow"], i.per_library["kornia"]);
        assert_eq!(kornia, 4 * pillow, "kornia holds float32");
        assert_eq!(i.held_at_once, pillow + kornia);
        assert_eq!(s.held_at_once, kornia);
        assert!(
            pillow > 100 * 300 * 300 * 3,
            "ImageNet-like items: {pillow}"
        );
    }

    #[test]
    fn a_video_pipeline_counts_every_frame_of_its_clips() {
        let mut c = cfg(&["torchvision"], 10);
        c.selection.mode = Some(Mode::Pipeline);
        c.execution.pipeline_scope = Some(crate::PipelineScope::MemoryDataloaderAugment);
        let image = estimate(&c, Schedule::Sequential).held_at_once;
        c.selection.media = Some(Media::Video);
        c.data.clip_length = Some(8);
        let video = estimate(&c, Schedule::Sequential);
        let (w, h) = policy::SYNTH_VIDEO_SIZE;
        let preloaded = 10 * 8 * u64::from(w) * u64::from(h) * 3;
        let batch = policy::DEFAULT_BATCH_SIZE * 8 * 3 * 224 * 224 * 4;
        let in_flight = (policy::PIPELINE_PREFETCH_FACTOR + 2) * batch;
        assert_eq!(video.held_at_once, preloaded + in_flight);
        assert!(video.held_at_once > 8 * image / 2, "{video:?} vs {image}");
        assert!(video.basis.contains("8 frames"), "{}", video.basis);
        // Interleaved, each worker keeps the ceiling's companion loader beside the row's.
        let both = estimate(&c, Schedule::Interleaved);
        assert_eq!(both.held_at_once, preloaded + 2 * in_flight);
        assert!(both.basis.contains("2 loaders"), "{}", both.basis);
    }

    #[test]
    fn bytes_read_as_people_write_them() {
        assert_eq!(human_bytes(3 * 1024 * 1024), "3 MiB");
        assert_eq!(human_bytes(3 * 1024 * 1024 * 1024 / 2), "1.5 GiB");
    }
}
