//! Parameter drawing and conversion shared by the adapters: crop boxes (random, center,
//! random-resized, erasing), aspect-preserving target sizes, and the forward 2×3 affine matrices
//! that turn canonical angles/shears/shifts into what the crates' warp functions take.
//! Nothing here touches pixels: these are the parameters a transform draws per call.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use std::cell::Cell;

/// Seed of every transform's parameter generator, created at `prepare` (micro mode).
const TRANSFORM_SEED: u64 = 0;

thread_local! {
    /// The seed transforms built on this thread start from (see [`with_seed`]).
    static SEED: Cell<u64> = const { Cell::new(TRANSFORM_SEED) };
}

pub(crate) fn transform_rng() -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(SEED.with(Cell::get))
}

/// Runs `build` with transforms seeded from `seed` (pipeline loader threads: one seed per
/// thread, so the threads draw different parameters), then restores the default.
pub(crate) fn with_seed<T>(seed: u64, build: impl FnOnce() -> T) -> T {
    SEED.with(|s| s.set(seed));
    let out = build();
    SEED.with(|s| s.set(TRANSFORM_SEED));
    out
}

/// Uniform draw in `[lo, hi]` (returns `lo` when the range is a single value).
pub(crate) fn uniform(rng: &mut ChaCha8Rng, (lo, hi): (f64, f64)) -> f64 {
    if hi > lo {
        rng.random_range(lo..=hi)
    } else {
        lo
    }
}

/// Top-left corner of a `cw×ch` crop at a random position.
pub(crate) fn random_crop(
    rng: &mut ChaCha8Rng,
    (w, h): (u32, u32),
    (cw, ch): (u32, u32),
) -> Result<(u32, u32), String> {
    fits((w, h), (cw, ch))?;
    Ok((rng.random_range(0..=w - cw), rng.random_range(0..=h - ch)))
}

/// Top-left corner of a centered `cw×ch` crop.
pub(crate) fn center_crop((w, h): (u32, u32), (cw, ch): (u32, u32)) -> Result<(u32, u32), String> {
    fits((w, h), (cw, ch))?;
    Ok(((w - cw) / 2, (h - ch) / 2))
}

fn fits((w, h): (u32, u32), (cw, ch): (u32, u32)) -> Result<(), String> {
    if cw > w || ch > h {
        return Err(format!("image {w}×{h} is smaller than the {cw}×{ch} crop"));
    }
    Ok(())
}

/// A crop box `(x, y, w, h)`.
pub(crate) type CropBox = (u32, u32, u32, u32);

/// Box of a random-resized crop: area fraction in `scale`, aspect ratio log-uniform in `ratio`,
/// ten attempts, then a central crop with the ratio clamped (the torchvision procedure).
pub(crate) fn resized_crop_box(
    rng: &mut ChaCha8Rng,
    (w, h): (u32, u32),
    scale: (f64, f64),
    ratio: (f64, f64),
) -> CropBox {
    let area = f64::from(w) * f64::from(h);
    let log_ratio = (ratio.0.ln(), ratio.1.ln());
    for _ in 0..10 {
        let target = area * uniform(rng, scale);
        let aspect = uniform(rng, log_ratio).exp();
        let cw = (target * aspect).sqrt().round() as u32;
        let ch = (target / aspect).sqrt().round() as u32;
        if cw > 0 && ch > 0 && cw <= w && ch <= h {
            return (
                rng.random_range(0..=w - cw),
                rng.random_range(0..=h - ch),
                cw,
                ch,
            );
        }
    }
    let in_ratio = f64::from(w) / f64::from(h);
    let (cw, ch) = if in_ratio < ratio.0 {
        (w, ((f64::from(w) / ratio.0).round() as u32).clamp(1, h))
    } else if in_ratio > ratio.1 {
        (((f64::from(h) * ratio.1).round() as u32).clamp(1, w), h)
    } else {
        (w, h)
    };
    ((w - cw) / 2, (h - ch) / 2, cw, ch)
}

/// Box of a random erasing: area fraction in `scale`, aspect ratio log-uniform in `ratio`,
/// ten attempts; `None` when nothing fits (the image is returned unchanged, as torchvision does).
pub(crate) fn erasing_box(
    rng: &mut ChaCha8Rng,
    (w, h): (u32, u32),
    scale: (f64, f64),
    ratio: (f64, f64),
) -> Option<CropBox> {
    let area = f64::from(w) * f64::from(h);
    let log_ratio = (ratio.0.ln(), ratio.1.ln());
    for _ in 0..10 {
        let target = area * uniform(rng, scale);
        let aspect = uniform(rng, log_ratio).exp();
        let eh = (target * aspect).sqrt().round() as u32;
        let ew = (target / aspect).sqrt().round() as u32;
        if eh > 0 && ew > 0 && eh < h && ew < w {
            return Some((
                rng.random_range(0..=w - ew),
                rng.random_range(0..=h - eh),
                ew,
                eh,
            ));
        }
    }
    None
}

/// Which side `max_size` bounds.
#[derive(Debug, Clone, Copy)]
pub(crate) enum MaxSide {
    Longest,
    Smallest,
}

/// Aspect-preserving `(width, height)` whose longest (or smallest) side is `max_size`.
pub(crate) fn max_size_target((w, h): (u32, u32), max_size: u32, side: MaxSide) -> (u32, u32) {
    let reference = match side {
        MaxSide::Longest => w.max(h),
        MaxSide::Smallest => w.min(h),
    };
    let s = f64::from(max_size) / f64::from(reference.max(1));
    let scaled = |v: u32| ((f64::from(v) * s).round() as u32).max(1);
    (scaled(w), scaled(h))
}

/// A forward 2×3 affine matrix `[a, b, c, d, e, f]`: `x' = a·x + b·y + c`, `y' = d·x + e·y + f`.
pub(crate) type Affine = [f32; 6];

/// The canonical `Affine` parameters as one forward matrix about the image center:
/// `T(center + shift) · R(angle) · Shear(shear_x, shear_y) · S(scale) · T(-center)`.
/// Angles and shears are in degrees; `shift` is in pixels.
pub(crate) fn affine_about_center(
    (w, h): (u32, u32),
    angle_deg: f64,
    shift: (f64, f64),
    scale: f64,
    shear_deg: (f64, f64),
) -> Affine {
    let (cx, cy) = (f64::from(w) * 0.5, f64::from(h) * 0.5);
    let (sin, cos) = angle_deg.to_radians().sin_cos();
    let (shx, shy) = (
        shear_deg.0.to_radians().tan(),
        shear_deg.1.to_radians().tan(),
    );
    // R · Shear, where Shear = [[1, shx], [shy, 1]]; then the uniform scale.
    let m = [
        (cos - sin * shy) * scale,
        (cos * shx - sin) * scale,
        (sin + cos * shy) * scale,
        (sin * shx + cos) * scale,
    ];
    let c = cx + shift.0 - (m[0] * cx + m[1] * cy);
    let f = cy + shift.1 - (m[2] * cx + m[3] * cy);
    [m[0], m[1], c, m[2], m[3], f].map(|v| v as f32)
}

/// The 3×3 form of a 2×3 affine matrix (for projective APIs).
pub(crate) fn affine_to_3x3(m: Affine) -> [f32; 9] {
    [m[0], m[1], m[2], m[3], m[4], m[5], 0.0, 0.0, 1.0]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn with_seed_seeds_transforms_built_inside_it_and_restores_the_default() {
        let first = || rand::RngCore::next_u64(&mut transform_rng());
        let default = first();
        let seeded = with_seed(12, first);
        assert_ne!(default, seeded);
        assert_eq!(seeded, with_seed(12, first));
        assert_eq!(default, first());
    }
    use proptest::prelude::*;

    #[test]
    fn identity_parameters_give_the_identity_matrix() {
        let m = affine_about_center((500, 375), 0.0, (0.0, 0.0), 1.0, (0.0, 0.0));
        let expect = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0];
        for (a, b) in m.iter().zip(expect) {
            assert!((a - b).abs() < 1e-5, "{m:?}");
        }
    }

    #[test]
    fn the_center_moves_only_by_the_shift() {
        let m = affine_about_center((500, 375), 25.0, (20.0, -7.0), 2.0, (10.0, 15.0));
        let (x, y) = (250.0f32, 187.5f32);
        let xp = m[0] * x + m[1] * y + m[2];
        let yp = m[3] * x + m[4] * y + m[5];
        assert!(
            (xp - 270.0).abs() < 1e-3 && (yp - 180.5).abs() < 1e-3,
            "{xp} {yp}"
        );
    }

    #[test]
    fn crops_larger_than_the_image_are_refused() {
        let e = center_crop((1, 1), (224, 224)).unwrap_err();
        assert!(e.contains("1×1"), "{e}");
        assert!(random_crop(&mut transform_rng(), (100, 300), (224, 224)).is_err());
    }

    #[test]
    fn max_size_keeps_the_aspect() {
        assert_eq!(
            max_size_target((500, 375), 512, MaxSide::Longest),
            (512, 384)
        );
        assert_eq!(
            max_size_target((500, 375), 512, MaxSide::Smallest),
            (683, 512)
        );
        assert_eq!(max_size_target((1, 1), 512, MaxSide::Longest), (512, 512));
    }

    proptest! {
        #[test]
        fn resized_crop_boxes_lie_inside_the_image(w in 1u32..2000, h in 1u32..2000, seed in 0u64..1000) {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let (x, y, cw, ch) = resized_crop_box(&mut rng, (w, h), (0.08, 1.0), (0.75, 4.0 / 3.0));
            prop_assert!(cw >= 1 && ch >= 1 && x + cw <= w && y + ch <= h);
        }

        #[test]
        fn erasing_boxes_lie_inside_the_image(w in 1u32..2000, h in 1u32..2000, seed in 0u64..1000) {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            if let Some((x, y, ew, eh)) = erasing_box(&mut rng, (w, h), (0.02, 0.33), (0.3, 3.3)) {
                prop_assert!(ew >= 1 && eh >= 1 && x + ew <= w && y + eh <= h);
            }
        }
    }
}
