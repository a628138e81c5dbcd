//! The reference of how deterministic geometric transforms move an image's targets (masks,
//! boxes, keypoints): pure functions from an item's [`ItemTargets`] to the targets the
//! transform's output must carry. `augbench check equivalence --targets` compares every
//! library's emitted targets with it (docs/equivalence.md, "Targets").
//!
//! It lives beside [`ItemTargets`] because it is geometry on that type and nothing else: which
//! registry transform maps to which [`TargetMove`], with which parameters, is the check's concern
//! (`augbench-exec`), not the data's.
//!
//! **Pixel convention.** Box edges are continuous coordinates: pixel `(i, j)` covers `[i, i + 1) ×
//! [j, j + 1)` and the image spans `[0, W] × [0, H]`, so a horizontal flip maps a box `[x0, x1]`
//! to `[W − x1, W − x0]` (x → W − x). A keypoint under a flip is a pixel position, mirrored as
//! the mask's pixels are: `x → W − 1 − x` (pixel `i` to pixel `W − 1 − i`), which is what
//! AlbumentationsX, Albumentations 2.0.8, torchvision 0.29 and Kornia 0.9 all do (measured by
//! the check; `W − x` is the other convention in use, one pixel away). Every other move treats
//! keypoints like box edges. A resize to `S_w × S_h` scales x by `S_w / W` and y by `S_h / H`;
//! its mask takes, for each output pixel, the input pixel under the output pixel's centre
//! (`floor((i + 0.5) · W / S_w)`). A pad by `p` shifts by `p` and pads the mask with 0. A centre
//! crop to `w × h` starts at `floor((W − w) / 2)`, `floor((H − h) / 2)`, shifts by that offset,
//! clips boxes to the crop and drops a box with no area left, and drops keypoints outside `[0, w)
//! × [0, h)`.

use crate::targets::ItemTargets;

/// A deterministic transform as it moves targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetMove {
    /// Mirror left to right.
    HorizontalFlip,
    /// Mirror top to bottom.
    VerticalFlip,
    /// Resize to exactly `width × height`.
    Resize { width: u32, height: u32 },
    /// Pad every side by `padding` pixels (the mask with 0).
    Pad { padding: u32 },
    /// Crop `width × height` from the centre (offsets floored).
    CenterCrop { width: u32, height: u32 },
}

/// The targets `t` must become under `m`, or why `m` cannot apply to an image of `t`'s size.
pub fn expected(m: TargetMove, t: &ItemTargets) -> Result<ItemTargets, String> {
    match m {
        TargetMove::HorizontalFlip => Ok(flip(t, Axis::X)),
        TargetMove::VerticalFlip => Ok(flip(t, Axis::Y)),
        TargetMove::Resize { width, height } => resize(t, width, height),
        TargetMove::Pad { padding } => Ok(pad(t, padding)),
        TargetMove::CenterCrop { width, height } => center_crop(t, width, height),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Axis {
    X,
    Y,
}

fn flip(t: &ItemTargets, axis: Axis) -> ItemTargets {
    let (w, h) = (f64::from(t.width), f64::from(t.height));
    let boxes = t
        .boxes
        .iter()
        .map(|&[x0, y0, x1, y1]| match axis {
            Axis::X => [w - x1, y0, w - x0, y1],
            Axis::Y => [x0, h - y1, x1, h - y0],
        })
        .collect();
    let keypoints = t
        .keypoints
        .iter()
        .map(|&[x, y]| match axis {
            Axis::X => [w - 1.0 - x, y],
            Axis::Y => [x, h - 1.0 - y],
        })
        .collect();
    let (wu, hu) = (t.width as usize, t.height as usize);
    let mask = remap(wu, hu, wu, hu, &t.mask, |c, r| match axis {
        Axis::X => Some((wu - 1 - c, r)),
        Axis::Y => Some((c, hu - 1 - r)),
    });
    ItemTargets {
        width: t.width,
        height: t.height,
        boxes,
        labels: t.labels.clone(),
        keypoints,
        mask,
    }
}

fn resize(t: &ItemTargets, width: u32, height: u32) -> Result<ItemTargets, String> {
    if width == 0 || height == 0 || t.width == 0 || t.height == 0 {
        return Err(format!(
            "cannot resize {}x{} to {width}x{height}",
            t.width, t.height
        ));
    }
    let sx = f64::from(width) / f64::from(t.width);
    let sy = f64::from(height) / f64::from(t.height);
    let (wu, hu) = (t.width as usize, t.height as usize);
    let source = |dst: usize, scale: f64, len: usize| {
        let s = ((dst as f64 + 0.5) / scale).floor() as usize;
        s.min(len - 1)
    };
    let mask = remap(wu, hu, width as usize, height as usize, &t.mask, |c, r| {
        Some((source(c, sx, wu), source(r, sy, hu)))
    });
    Ok(ItemTargets {
        width,
        height,
        boxes: t
            .boxes
            .iter()
            .map(|&[x0, y0, x1, y1]| [x0 * sx, y0 * sy, x1 * sx, y1 * sy])
            .collect(),
        labels: t.labels.clone(),
        keypoints: t.keypoints.iter().map(|&[x, y]| [x * sx, y * sy]).collect(),
        mask,
    })
}

fn pad(t: &ItemTargets, padding: u32) -> ItemTargets {
    let p = padding as usize;
    let (wu, hu) = (t.width as usize, t.height as usize);
    let mask = remap(wu, hu, wu + 2 * p, hu + 2 * p, &t.mask, |c, r| {
        let (c, r) = (c.checked_sub(p)?, r.checked_sub(p)?);
        (c < wu && r < hu).then_some((c, r))
    });
    let d = f64::from(padding);
    ItemTargets {
        width: t.width + 2 * padding,
        height: t.height + 2 * padding,
        boxes: t
            .boxes
            .iter()
            .map(|&[x0, y0, x1, y1]| [x0 + d, y0 + d, x1 + d, y1 + d])
            .collect(),
        labels: t.labels.clone(),
        keypoints: t.keypoints.iter().map(|&[x, y]| [x + d, y + d]).collect(),
        mask,
    }
}

fn center_crop(t: &ItemTargets, width: u32, height: u32) -> Result<ItemTargets, String> {
    if width > t.width || height > t.height {
        return Err(format!(
            "a {width}x{height} centre crop does not fit a {}x{} image",
            t.width, t.height
        ));
    }
    let (ox, oy) = ((t.width - width) / 2, (t.height - height) / 2);
    let (wu, hu) = (t.width as usize, t.height as usize);
    let mask = remap(wu, hu, width as usize, height as usize, &t.mask, |c, r| {
        Some((c + ox as usize, r + oy as usize))
    });
    let (dx, dy) = (f64::from(ox), f64::from(oy));
    let (w, h) = (f64::from(width), f64::from(height));
    let mut out = ItemTargets {
        width,
        height,
        mask,
        ..ItemTargets::default()
    };
    for (&[x0, y0, x1, y1], &label) in t.boxes.iter().zip(&t.labels) {
        let b = [
            (x0 - dx).clamp(0.0, w),
            (y0 - dy).clamp(0.0, h),
            (x1 - dx).clamp(0.0, w),
            (y1 - dy).clamp(0.0, h),
        ];
        if b[2] > b[0] && b[3] > b[1] {
            out.boxes.push(b);
            out.labels.push(label);
        }
    }
    out.keypoints = t
        .keypoints
        .iter()
        .map(|&[x, y]| [x - dx, y - dy])
        .filter(|&[x, y]| (0.0..w).contains(&x) && (0.0..h).contains(&y))
        .collect();
    Ok(out)
}

/// A `dst_w × dst_h` mask whose pixel `(c, r)` is the source pixel `at(c, r)` names, or 0 where it
/// names none (or one outside the source, or the source is short).
fn remap(
    src_w: usize,
    src_h: usize,
    dst_w: usize,
    dst_h: usize,
    src: &[u8],
    at: impl Fn(usize, usize) -> Option<(usize, usize)>,
) -> Vec<u8> {
    let mut out = vec![0; dst_w * dst_h];
    for r in 0..dst_h {
        for c in 0..dst_w {
            if let Some((sc, sr)) = at(c, r).filter(|&(sc, sr)| sc < src_w && sr < src_h) {
                out[r * dst_w + c] = src.get(sr * src_w + sc).copied().unwrap_or(0);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A 4×3 item with one box, two keypoints and a mask 1..=12 row-major.
    fn item() -> ItemTargets {
        ItemTargets {
            width: 4,
            height: 3,
            boxes: vec![[0.5, 1.0, 2.0, 3.0]],
            labels: vec![7],
            keypoints: vec![[0.0, 0.0], [3.0, 2.5]],
            mask: (1..=12).collect(),
        }
    }

    #[test]
    fn a_flip_mirrors_boxes_keypoints_and_the_mask() {
        let f = expected(TargetMove::HorizontalFlip, &item()).unwrap();
        assert_eq!(f.boxes, vec![[2.0, 1.0, 3.5, 3.0]]);
        assert_eq!(
            f.keypoints,
            vec![[3.0, 0.0], [0.0, 2.5]],
            "pixel i to W − 1 − i"
        );
        assert_eq!(f.mask, vec![4, 3, 2, 1, 8, 7, 6, 5, 12, 11, 10, 9]);
        assert_eq!(f.labels, vec![7]);
        let v = expected(TargetMove::VerticalFlip, &item()).unwrap();
        assert_eq!(v.boxes, vec![[0.5, 0.0, 2.0, 2.0]]);
        assert_eq!(v.keypoints, vec![[0.0, 2.0], [3.0, -0.5]]);
        assert_eq!(v.mask, vec![9, 10, 11, 12, 5, 6, 7, 8, 1, 2, 3, 4]);
    }

    #[test]
    fn a_box_flipped_twice_is_itself() {
        for m in [TargetMove::HorizontalFlip, TargetMove::VerticalFlip] {
            let once = expected(m, &item()).unwrap();
            assert_ne!(once, item(), "{m:?} moves something");
            assert_eq!(expected(m, &once).unwrap(), item(), "{m:?}");
        }
    }

    #[test]
    fn resize_scales_exactly_and_samples_the_mask_at_pixel_centres() {
        let r = expected(
            TargetMove::Resize {
                width: 8,
                height: 6,
            },
            &item(),
        )
        .unwrap();
        assert_eq!((r.width, r.height), (8, 6));
        assert_eq!(r.boxes, vec![[1.0, 2.0, 4.0, 6.0]]);
        assert_eq!(r.keypoints, vec![[0.0, 0.0], [6.0, 5.0]]);
        assert_eq!(&r.mask[..8], &[1, 1, 2, 2, 3, 3, 4, 4]);
        assert_eq!(&r.mask[40..], &[9, 9, 10, 10, 11, 11, 12, 12]);
        let down = expected(
            TargetMove::Resize {
                width: 2,
                height: 1,
            },
            &item(),
        )
        .unwrap();
        // Centres 0.5 and 1.5 of 2 map to 1.0 and 3.0 of 4; row centre 0.5 of 1 to 1.5 of 3.
        assert_eq!(down.mask, vec![6, 8]);
        assert!(
            expected(
                TargetMove::Resize {
                    width: 0,
                    height: 2
                },
                &item()
            )
            .is_err()
        );
    }

    #[test]
    fn pad_shifts_and_pads_the_mask_with_zero() {
        let p = expected(TargetMove::Pad { padding: 1 }, &item()).unwrap();
        assert_eq!((p.width, p.height), (6, 5));
        assert_eq!(p.boxes, vec![[1.5, 2.0, 3.0, 4.0]]);
        assert_eq!(p.keypoints[1], [4.0, 3.5]);
        assert_eq!(&p.mask[..6], &[0; 6]);
        assert_eq!(&p.mask[6..12], &[0, 1, 2, 3, 4, 0]);
    }

    #[test]
    fn a_crop_clips_boxes_drops_what_is_outside_and_floors_its_offset() {
        let mut t = ItemTargets::empty(7, 5);
        t.boxes = vec![
            [0.0, 0.0, 1.0, 1.0],
            [1.0, 1.0, 4.0, 4.0],
            [2.0, 2.0, 3.0, 3.0],
        ];
        t.labels = vec![1, 2, 3];
        t.keypoints = vec![[0.5, 0.5], [2.0, 1.0], [5.0, 1.0]];
        t.mask[7 + 2] = 9;
        let c = expected(
            TargetMove::CenterCrop {
                width: 4,
                height: 4,
            },
            &t,
        )
        .unwrap();
        // Offset floor(3/2) = 1, floor(1/2) = 0: the first box lies left of the crop.
        assert_eq!(c.boxes, vec![[0.0, 1.0, 3.0, 4.0], [1.0, 2.0, 2.0, 3.0]]);
        assert_eq!(c.labels, vec![2, 3]);
        assert_eq!(c.keypoints, vec![[1.0, 1.0]]);
        assert_eq!(c.mask[4 + 1], 9);
        let too_big = TargetMove::CenterCrop {
            width: 8,
            height: 1,
        };
        assert!(expected(too_big, &t).is_err());
    }

    fn targets(w: u32, h: u32, boxes: Vec<[f64; 4]>, mask_seed: u8) -> ItemTargets {
        let n = w as usize * h as usize;
        ItemTargets {
            width: w,
            height: h,
            labels: (1..=boxes.len() as u32).collect(),
            keypoints: boxes.iter().map(|b| [b[0], b[3]]).collect(),
            boxes,
            mask: (0..n).map(|i| (i as u8).wrapping_mul(mask_seed)).collect(),
        }
    }

    fn arb_targets() -> impl Strategy<Value = ItemTargets> {
        (1u32..20, 1u32..20, any::<u8>()).prop_flat_map(|(w, h, seed)| {
            let (wf, hf) = (f64::from(w), f64::from(h));
            let one = (0.0..wf, 0.0..hf, 0.0..wf, 0.0..hf)
                .prop_map(|(a, b, c, d)| [a.min(c), b.min(d), a.max(c), b.max(d)]);
            prop::collection::vec(one, 0..5).prop_map(move |b| targets(w, h, b, seed))
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 128, rng_seed: proptest::test_runner::RngSeed::Fixed(11), ..ProptestConfig::default() })]
        #[test]
        fn flips_are_involutions_that_keep_boxes_inside(t in arb_targets()) {
            for m in [TargetMove::HorizontalFlip, TargetMove::VerticalFlip] {
                let once = expected(m, &t).unwrap();
                for b in &once.boxes {
                    prop_assert!(b[0] <= b[2] && b[1] <= b[3], "{b:?}");
                    prop_assert!(b[0] >= 0.0 && b[2] <= f64::from(t.width) + 1e-9);
                }
                let mut sorted = once.mask.clone();
                let mut before = t.mask.clone();
                sorted.sort_unstable();
                before.sort_unstable();
                prop_assert_eq!(sorted, before, "a flip permutes the mask");
                let back = expected(m, &once).unwrap();
                prop_assert_eq!(&back.mask, &t.mask);
                for (a, b) in back.boxes.iter().zip(&t.boxes) {
                    prop_assert!(a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-9));
                }
            }
        }

        #[test]
        fn resize_scales_by_the_side_ratio_and_an_integer_upscale_repeats_pixels(t in arb_targets(), k in 1u32..4) {
            let m = TargetMove::Resize { width: t.width * k, height: t.height * k };
            let r = expected(m, &t).unwrap();
            prop_assert_eq!(r.boxes.len(), t.boxes.len());
            for (a, b) in r.boxes.iter().zip(&t.boxes) {
                prop_assert!(a.iter().zip(b).all(|(x, y)| (x - y * f64::from(k)).abs() < 1e-9));
            }
            let w = r.width as usize;
            for (i, &v) in r.mask.iter().enumerate() {
                let (c, row) = (i % w, i / w);
                let src = (row / k as usize) * t.width as usize + c / k as usize;
                prop_assert_eq!(v, t.mask[src]);
            }
        }
    }
}
