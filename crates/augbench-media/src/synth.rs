//! The deterministic synthetic image generator: ImageNet-like sizes drawn from
//! `policy::SYNTH_IMAGE_SIZES`, natural-image content (smooth gradients, hard-edged shapes,
//! value-noise texture at several scales, fine grain), written as JPEG. Image `i` depends only on
//! (seed, i), so generation runs in parallel and is byte-for-byte reproducible. The synthetic
//! videos (`synth_video`) pan across scenes rendered here.

use std::path::{Path, PathBuf};

use anyhow::Context;
use augbench_core::policy;
use image::RgbImage;
use image::codecs::jpeg::JpegEncoder;
use indicatif::ProgressBar;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

/// Bump when the rendered content changes (images here, videos in `synth_video`): it is part of
/// the dataset cache key. v2: videos are MJPEG AVI files instead of folders of frame JPEGs.
pub const GENERATOR_VERSION: u32 = 2;

/// The generator of item `index` (its own ChaCha stream, so items are independent).
fn item_rng(seed: u64, index: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(index);
    rng
}

/// Draws a size from the weighted size mix.
fn draw_size(rng: &mut ChaCha8Rng, mix: &[(u32, u32, u32)]) -> (u32, u32) {
    let total: u32 = mix.iter().map(|m| m.2).sum();
    let mut pick = rng.random_range(0..total.max(1));
    for &(w, h, weight) in mix {
        if pick < weight {
            return (w, h);
        }
        pick -= weight;
    }
    mix.first().map(|m| (m.0, m.1)).unwrap_or((500, 375))
}

/// Size `(width, height)` of image `index`, drawn from the policy size mix.
pub fn image_size(seed: u64, index: u64) -> (u32, u32) {
    draw_size(&mut item_rng(seed, index), policy::SYNTH_IMAGE_SIZES)
}

/// Image `index` of the set with `seed`: its size comes from the policy size mix.
pub fn image(seed: u64, index: u64) -> RgbImage {
    let mut rng = item_rng(seed, index);
    let (w, h) = draw_size(&mut rng, policy::SYNTH_IMAGE_SIZES);
    render(&mut rng, w, h)
}

/// One octave of value noise: random lattice values, smoothstep-interpolated.
struct Octave {
    grid: Vec<f32>,
    gw: usize,
    cols: Vec<(usize, f32)>,
    rows: Vec<(usize, f32)>,
    amp: f32,
}

impl Octave {
    fn new(rng: &mut ChaCha8Rng, w: u32, h: u32, cell: f32, amp: f32) -> Self {
        let gw = (w as f32 / cell) as usize + 2;
        let gh = (h as f32 / cell) as usize + 2;
        let grid = (0..gw * gh)
            .map(|_| rng.random_range(-1.0f32..1.0))
            .collect();
        let axis = |n: u32| -> Vec<(usize, f32)> {
            (0..n)
                .map(|i| {
                    let f = i as f32 / cell;
                    let t = f.fract();
                    (f as usize, t * t * (3.0 - 2.0 * t))
                })
                .collect()
        };
        Octave {
            grid,
            gw,
            cols: axis(w),
            rows: axis(h),
            amp,
        }
    }

    fn at(&self, x: usize, y: usize) -> f32 {
        let (cx, tx) = self.cols[x];
        let (cy, ty) = self.rows[y];
        let g = |i: usize, j: usize| self.grid[j * self.gw + i];
        let top = g(cx, cy) + (g(cx + 1, cy) - g(cx, cy)) * tx;
        let bottom = g(cx, cy + 1) + (g(cx + 1, cy + 1) - g(cx, cy + 1)) * tx;
        (top + (bottom - top) * ty) * self.amp
    }
}

/// A filled shape with a flat color: the hard edges of objects.
struct Shape {
    kind: u8,
    cx: f32,
    cy: f32,
    rx: f32,
    ry: f32,
    color: [f32; 3],
    alpha: f32,
}

impl Shape {
    fn random(rng: &mut ChaCha8Rng, w: u32, h: u32) -> Self {
        let (wf, hf) = (w as f32, h as f32);
        let r = wf.min(hf);
        Shape {
            kind: rng.random_range(0..2),
            cx: rng.random_range(0.0..wf),
            cy: rng.random_range(0.0..hf),
            rx: rng.random_range(0.05 * r..0.35 * r),
            ry: rng.random_range(0.05 * r..0.35 * r),
            color: [0; 3].map(|_| rng.random_range(0.0f32..255.0)),
            alpha: rng.random_range(0.5f32..1.0),
        }
    }

    fn covers(&self, x: f32, y: f32) -> bool {
        let (dx, dy) = ((x - self.cx) / self.rx, (y - self.cy) / self.ry);
        match self.kind {
            0 => dx * dx + dy * dy <= 1.0,
            _ => dx.abs() <= 1.0 && dy.abs() <= 1.0,
        }
    }
}

/// Renders one natural-looking image of `w×h`.
pub fn render(rng: &mut ChaCha8Rng, w: u32, h: u32) -> RgbImage {
    let c0: [f32; 3] = [0; 3].map(|_| rng.random_range(20.0f32..235.0));
    let c1: [f32; 3] = [0; 3].map(|_| rng.random_range(20.0f32..235.0));
    let (sin, cos) = rng.random_range(0.0f32..std::f32::consts::TAU).sin_cos();
    let span = (w as f32 * cos.abs() + h as f32 * sin.abs()).max(1.0);
    // Texture at four scales (large blotches down to fine detail) plus a slow tint per channel.
    let base_cell = w.max(h) as f32 / rng.random_range(2.0f32..4.0);
    let octaves: Vec<Octave> = (0..4)
        .map(|o| {
            Octave::new(
                rng,
                w,
                h,
                (base_cell / 2f32.powi(o * 2)).max(2.0),
                40.0 / (o + 1) as f32,
            )
        })
        .collect();
    let tints: Vec<Octave> = (0..3)
        .map(|_| Octave::new(rng, w, h, base_cell, 25.0))
        .collect();
    let shapes: Vec<Shape> = (0..rng.random_range(3..9))
        .map(|_| Shape::random(rng, w, h))
        .collect();
    let grain_seed: u32 = rng.random();
    let mut img = RgbImage::new(w, h);
    for (x, y, px) in img.enumerate_pixels_mut() {
        let (xu, yu) = (x as usize, y as usize);
        let t = ((x as f32 * cos + y as f32 * sin) / span).rem_euclid(1.0);
        let lum: f32 = octaves.iter().map(|o| o.at(xu, yu)).sum();
        let grain = (hash(x, y, grain_seed) as f32 / u32::MAX as f32 - 0.5) * 12.0;
        let mut rgb: [f32; 3] =
            std::array::from_fn(|c| c0[c] + (c1[c] - c0[c]) * t + lum + tints[c].at(xu, yu));
        for s in shapes.iter().filter(|s| s.covers(x as f32, y as f32)) {
            for (v, color) in rgb.iter_mut().zip(s.color) {
                *v += (color + lum * 0.5 - *v) * s.alpha;
            }
        }
        px.0 = rgb.map(|v| (v + grain).clamp(0.0, 255.0) as u8);
    }
    img
}

/// A cheap integer hash for per-pixel grain (deterministic, no generator state per pixel).
fn hash(x: u32, y: u32, seed: u32) -> u32 {
    let mut v = x.wrapping_mul(0x9E37_79B1) ^ y.wrapping_mul(0x85EB_CA77) ^ seed;
    v ^= v >> 15;
    v = v.wrapping_mul(0x2C1B_3C6D);
    v ^= v >> 12;
    v = v.wrapping_mul(0x297A_2D39);
    v ^ (v >> 15)
}

pub fn encode_jpeg(img: &RgbImage) -> anyhow::Result<Vec<u8>> {
    let mut buf = Vec::new();
    JpegEncoder::new_with_quality(&mut buf, policy::SYNTH_JPEG_QUALITY)
        .encode_image(img)
        .context("encoding a synthetic JPEG")?;
    Ok(buf)
}

/// Writes files `0..count` into `dir` in parallel: `name(i)` holding `bytes(i)`; returns their
/// paths. The one writer behind synthetic images and videos.
pub(crate) fn write_all(
    dir: &Path,
    count: u64,
    bar: &ProgressBar,
    name: impl Fn(u64) -> String + Sync,
    bytes: impl Fn(u64) -> anyhow::Result<Vec<u8>> + Sync,
) -> anyhow::Result<Vec<PathBuf>> {
    (0..count)
        .into_par_iter()
        .map(|i| {
            let path = dir.join(name(i));
            std::fs::write(&path, bytes(i)?)
                .with_context(|| format!("writing {}", path.display()))?;
            bar.inc(1);
            Ok(path)
        })
        .collect()
}

/// Name of image `index` inside a dataset folder.
pub fn image_name(index: u64) -> String {
    format!("img_{index:06}.jpg")
}

/// Writes images `0..count` into `dir` (which must exist), in parallel; returns their paths.
pub fn write_images(
    dir: &Path,
    seed: u64,
    count: u64,
    bar: &ProgressBar,
) -> anyhow::Result<Vec<PathBuf>> {
    write_all(dir, count, bar, image_name, |i| {
        encode_jpeg(&image(seed, i))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_are_reproducible_and_differ_by_index() {
        let a = encode_jpeg(&image(7, 3)).unwrap();
        let b = encode_jpeg(&image(7, 3)).unwrap();
        assert_eq!(a, b);
        assert_ne!(image(7, 3), image(7, 4));
        assert_ne!(image(7, 3), image(8, 3));
    }

    #[test]
    fn sizes_come_from_the_policy_mix() {
        let sizes: std::collections::BTreeSet<(u32, u32)> =
            (0..200).map(|i| image_size(1, i)).collect();
        let allowed: Vec<(u32, u32)> = policy::SYNTH_IMAGE_SIZES
            .iter()
            .map(|m| (m.0, m.1))
            .collect();
        assert!(sizes.iter().all(|s| allowed.contains(s)), "{sizes:?}");
        assert_eq!(sizes.len(), allowed.len(), "{sizes:?}");
        assert_eq!(image(1, 5).dimensions(), image_size(1, 5));
    }

    #[test]
    fn content_is_not_flat_or_white_noise() {
        let img = image(42, 0);
        let px: Vec<f64> = img.pixels().map(|p| f64::from(p.0[1])).collect();
        let mean = px.iter().sum::<f64>() / px.len() as f64;
        let var = px.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / px.len() as f64;
        // Neighbouring pixels are strongly correlated (smooth regions), unlike white noise.
        let w = img.width() as usize;
        let diff = px.windows(2).enumerate().filter(|(i, _)| (i + 1) % w != 0);
        let local = diff.map(|(_, d)| (d[1] - d[0]).powi(2)).sum::<f64>() / px.len() as f64;
        assert!(var > 100.0, "too flat: variance {var}");
        assert!(
            local < 0.5 * var,
            "too noisy: local {local} vs variance {var}"
        );
    }
}
