//! The synthetic video files: UCF101-like Motion-JPEG AVIs (`policy::SYNTH_VIDEO_SIZE`,
//! `SYNTH_VIDEO_FPS`, a frame count per video drawn from `SYNTH_VIDEO_FRAMES`), each a camera pan
//! across a rendered scene. Every frame carries its own index in two flat gray bands (top left),
//! so a test can read back exactly which frames a clip holds after JPEG and any decoder.

use std::path::{Path, PathBuf};

use augbench_core::policy;
use image::{Rgb, RgbImage};
use indicatif::ProgressBar;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::{avi, synth};

/// One marker band: this many pixels wide and high (multiples of 16, the JPEG MCU, so each
/// band is whole flat blocks that JPEG keeps flat).
const BAND: (u32, u32) = (64, 32);
/// Gray levels are multiples of this: a decoder's error below half of it reads back exactly.
const LEVEL: u64 = 16;
/// The top-left region (width, height) that holds a frame's marker: what [`read_marker`] needs.
pub const MARKER_REGION: (u32, u32) = (2 * BAND.0, BAND.1);
/// Pixels left out at each band edge when reading (chroma upsampling can bleed across edges).
const INSET: u32 = 6;

/// The generator of video `index` (its own ChaCha stream, independent of the images').
fn video_rng(seed: u64, index: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5649_4445_4F00_0000);
    rng.set_stream(index);
    rng
}

/// The first draw of a video's generator: its frame count, from the policy range.
fn draw_count(rng: &mut ChaCha8Rng) -> u64 {
    let (lo, hi) = policy::SYNTH_VIDEO_FRAMES;
    rng.random_range(lo..=hi.max(lo))
}

/// Number of frames of video `index`.
pub fn frame_count(seed: u64, index: u64) -> u64 {
    draw_count(&mut video_rng(seed, index))
}

/// The two gray levels that encode frame `t`: (t / 16) * 16 and (t % 16) * 16.
pub fn marker_levels(t: u64) -> (u8, u8) {
    let high = ((t / LEVEL).min(255 / LEVEL) * LEVEL) as u8;
    let low = ((t % LEVEL) * LEVEL) as u8;
    (high, low)
}

/// Paints frame `t`'s marker bands into the top-left corner of `img`.
fn paint_marker(img: &mut RgbImage, t: u64) {
    let (high, low) = marker_levels(t);
    for (band, level) in [high, low].into_iter().enumerate() {
        let x0 = band as u32 * BAND.0;
        for y in 0..BAND.1.min(img.height()) {
            for x in x0..(x0 + BAND.0).min(img.width()) {
                img.put_pixel(x, y, Rgb([level; 3]));
            }
        }
    }
}

/// The mean gray of band `band`'s interior, rounded to the nearest level step.
fn read_band(img: &RgbImage, band: u32) -> Option<u64> {
    let x0 = band * BAND.0;
    if img.width() < x0 + BAND.0 || img.height() < BAND.1 {
        return None;
    }
    let (mut sum, mut n) = (0u64, 0u64);
    for y in INSET..BAND.1 - INSET {
        for x in x0 + INSET..x0 + BAND.0 - INSET {
            sum += img
                .get_pixel(x, y)
                .0
                .iter()
                .map(|&v| u64::from(v))
                .sum::<u64>();
            n += 3;
        }
    }
    let mean = sum as f64 / n as f64;
    Some(((mean / LEVEL as f64).round() as u64).min(255 / LEVEL))
}

/// The frame index a decoded synthetic frame carries, if it carries one.
pub fn read_marker(img: &RgbImage) -> Option<u64> {
    Some(read_band(img, 0)? * LEVEL + read_band(img, 1)?)
}

/// Frames of video `index`: a pan across a larger scene, each with its marker.
pub fn frames(seed: u64, index: u64) -> Vec<RgbImage> {
    let mut rng = video_rng(seed, index);
    let count = draw_count(&mut rng);
    let (w, h) = policy::SYNTH_VIDEO_SIZE;
    let margin = 2 * count as u32;
    let scene = synth::render(&mut rng, w + margin, h + margin);
    let (vx, vy) = (rng.random_range(0.0f32..2.0), rng.random_range(0.0f32..2.0));
    (0..count)
        .map(|t| {
            let (x, y) = ((vx * t as f32) as u32, (vy * t as f32) as u32);
            let mut f =
                image::imageops::crop_imm(&scene, x.min(margin), y.min(margin), w, h).to_image();
            paint_marker(&mut f, t);
            f
        })
        .collect()
}

/// Name of video `index` inside a dataset folder.
pub fn video_name(index: u64) -> String {
    format!("video_{index:06}.avi")
}

/// Video `index` as MJPEG AVI bytes.
pub fn video_bytes(seed: u64, index: u64) -> anyhow::Result<Vec<u8>> {
    let jpegs = frames(seed, index)
        .iter()
        .map(synth::encode_jpeg)
        .collect::<anyhow::Result<Vec<_>>>()?;
    let (w, h) = policy::SYNTH_VIDEO_SIZE;
    avi::avi_bytes(w, h, policy::SYNTH_VIDEO_FPS, &jpegs)
}

/// Writes videos `0..count` into `dir` (which must exist), in parallel; returns their paths.
pub fn write_videos(
    dir: &Path,
    seed: u64,
    count: u64,
    bar: &ProgressBar,
) -> anyhow::Result<Vec<PathBuf>> {
    synth::write_all(dir, count, bar, video_name, |i| video_bytes(seed, i))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_counts_are_seeded_and_in_range() {
        let (lo, hi) = policy::SYNTH_VIDEO_FRAMES;
        let counts: Vec<u64> = (0..50).map(|i| frame_count(3, i)).collect();
        assert!(counts.iter().all(|c| (lo..=hi).contains(c)), "{counts:?}");
        assert!(counts.iter().any(|&c| c != counts[0]), "counts vary");
        assert_eq!(
            counts,
            (0..50).map(|i| frame_count(3, i)).collect::<Vec<_>>()
        );
        assert_eq!(frames(3, 1).len() as u64, frame_count(3, 1));
    }

    #[test]
    fn every_marker_survives_jpeg() {
        let mut base = frames(5, 0).swap_remove(0);
        for t in 0..=policy::SYNTH_VIDEO_FRAMES.1 + 10 {
            paint_marker(&mut base, t);
            let jpeg = synth::encode_jpeg(&base).unwrap();
            let back = image::load_from_memory(&jpeg).unwrap().to_rgb8();
            assert_eq!(read_marker(&back), Some(t), "frame {t}");
        }
    }

    #[test]
    fn the_marker_reads_a_different_frame_as_different() {
        let f = frames(5, 2);
        assert_eq!(read_marker(&f[0]), Some(0));
        assert_eq!(read_marker(&f[17]), Some(17));
        assert_ne!(f[3], f[4]);
        assert_eq!(
            read_marker(&RgbImage::new(8, 8)),
            None,
            "too small to carry one"
        );
    }

    #[test]
    fn videos_are_reproducible() {
        assert_eq!(video_bytes(1, 0).unwrap(), video_bytes(1, 0).unwrap());
        assert_ne!(video_bytes(1, 0).unwrap(), video_bytes(2, 0).unwrap());
    }
}
