//! Adapter for `imageproc` 0.27: items are `image::RgbImage`s (imageproc's own image type).
//! Covers the geometric warps, filters, noise and drawing that apply to RGB directly;
//! grayscale-only functions (equalize, box filter, sharpen) answer `unsupported`.

use image::{Rgb, RgbImage};
use imageproc::drawing::draw_filled_rect;
use imageproc::filter::{gaussian_blur_f32, median_filter};
use imageproc::geometric_transformations::{
    Border, Interpolation, Projection, rotate_about_center, rotate90, rotate180, rotate270, warp,
};
use imageproc::noise::{gaussian_noise, salt_and_pepper_noise};
use imageproc::rect::Rect;
use rand::Rng;

use crate::draw;
use crate::params::{Interp, Params};
use crate::rgb::{self, rgb_image_io};
use crate::session::{Adapter, Op, unsupported};
use augbench_protocol::protocol::Failure;

pub(crate) struct Imageproc;

const LIB: &str = "imageproc";

impl Adapter for Imageproc {
    type Item = RgbImage;
    type Out = RgbImage;
    const LIBRARY: &'static str = LIB;

    rgb_image_io!();

    fn build(name: &str, p: &Params) -> Result<Op<Self>, Failure> {
        match name {
            "Rotate" => rotate(p),
            "Affine" | "Shear" => affine(name, p),
            "Perspective" => perspective(p),
            "RandomRotate90" => random_rotate90(p),
            "GaussianBlur" => {
                // gaussian_blur_f32 takes sigma only; its kernel size follows from sigma.
                let sigma = p.positive("sigma")? as f32;
                Ok(Box::new(move |img| Ok(gaussian_blur_f32(img, sigma))))
            }
            "MedianBlur" => {
                // Canonical kernel size k (odd) → imageproc radius (k − 1) / 2.
                let r = p.u32("blur_limit")?.saturating_sub(1) / 2;
                Ok(Box::new(move |img| Ok(median_filter(img, r, r))))
            }
            "GaussianNoise" | "SaltAndPepper" => noise(name, p),
            "Erasing" => erasing(p),
            _ => Err(unsupported(
                LIB,
                name,
                "no direct RGB equivalent in imageproc",
            )),
        }
    }
}

fn interpolation(p: &Params) -> Result<Interpolation, Failure> {
    Ok(match p.interpolation()? {
        Interp::Nearest => Interpolation::Nearest,
        Interp::Bilinear => Interpolation::Bilinear,
        Interp::Bicubic => Interpolation::Bicubic,
        Interp::Lanczos => return Err(unsupported(LIB, "lanczos", "no lanczos interpolation")),
    })
}

fn fill(p: &Params) -> Result<Border<Rgb<u8>>, Failure> {
    let v = p.u8("fill")?;
    Ok(Border::Constant(Rgb([v; 3])))
}

fn rotate(p: &Params) -> Result<Op<Imageproc>, Failure> {
    p.expect_str("mode", "constant")?;
    let (range, interp, border) = (p.range("angle_range")?, interpolation(p)?, fill(p)?);
    let mut rng = draw::transform_rng();
    // Canonical angles are degrees; imageproc takes radians (and turns clockwise, which a
    // symmetric range makes irrelevant).
    Ok(Box::new(move |img| {
        let theta = draw::uniform(&mut rng, range).to_radians() as f32;
        Ok(rotate_about_center(img, theta, interp, border))
    }))
}

fn affine(name: &str, p: &Params) -> Result<Op<Imageproc>, Failure> {
    let border = Border::Constant(Rgb([0; 3]));
    if name == "Shear" {
        // Canonical `shear` s (degrees): a horizontal shear drawn in [−s, s], bilinear.
        let s = p.f64("shear")?;
        let mut rng = draw::transform_rng();
        return Ok(Box::new(move |img| {
            let shear = (draw::uniform(&mut rng, (-s, s)), 0.0);
            let m = draw::affine_about_center(img.dimensions(), 0.0, (0.0, 0.0), 1.0, shear);
            let proj = projection(m)?;
            Ok(warp(img, proj, Interpolation::Bilinear, border))
        }));
    }
    p.expect_str("mode", "constant")?;
    let (angle, scale, interp, border) = (
        p.f64("angle")?,
        p.f64("scale")?,
        interpolation(p)?,
        fill(p)?,
    );
    let (shift, shear, reference) = (p.pair("shift")?, p.pair("shear")?, p.f64("reference_size")?);
    Ok(Box::new(move |img| {
        let (w, h) = img.dimensions();
        // `shift` is in pixels of a `reference_size` image: scaled to this image's size.
        let px = (
            shift.0 * f64::from(w) / reference,
            shift.1 * f64::from(h) / reference,
        );
        let m = draw::affine_about_center((w, h), angle, px, scale, shear);
        Ok(warp(img, projection(m)?, interp, border))
    }))
}

fn projection(m: draw::Affine) -> Result<Projection, String> {
    Projection::from_matrix(draw::affine_to_3x3(m)).ok_or_else(|| "singular affine matrix".into())
}

fn perspective(p: &Params) -> Result<Op<Imageproc>, Failure> {
    let (scale, interp, border) = (p.range("scale")?, interpolation(p)?, fill(p)?);
    let mut rng = draw::transform_rng();
    // Each corner moves inward by a fraction of the size drawn in [0, s], s drawn in `scale`;
    // imageproc solves the homography from the four point pairs.
    Ok(Box::new(move |img| {
        let (w, h) = img.dimensions();
        let (wf, hf) = (w.saturating_sub(1) as f32, h.saturating_sub(1) as f32);
        let s = draw::uniform(&mut rng, scale);
        let mut d = || draw::uniform(&mut rng, (0.0, s)) as f32;
        let from = [(0.0, 0.0), (wf, 0.0), (wf, hf), (0.0, hf)];
        let to = [
            (d() * wf, d() * hf),
            (wf - d() * wf, d() * hf),
            (wf - d() * wf, hf - d() * hf),
            (d() * wf, hf - d() * hf),
        ];
        let proj = Projection::from_control_points(from, to)
            .ok_or_else(|| format!("no perspective transform for a {w}×{h} image"))?;
        Ok(warp(img, proj, interp, border))
    }))
}

fn random_rotate90(p: &Params) -> Result<Op<Imageproc>, Failure> {
    rgb::random_rotate90::<Imageproc>(p, [rotate90, rotate180, rotate270])
}

fn noise(name: &str, p: &Params) -> Result<Op<Imageproc>, Failure> {
    let mut rng = draw::transform_rng();
    if name == "GaussianNoise" {
        // Canonical mean/std are fractions of the max value; imageproc works in 0..255 units.
        // Its noise is independent per channel, which is the canonical per_channel = true.
        let (mean, std) = (p.f64("mean")? * 255.0, p.positive("std")? * 255.0);
        return Ok(Box::new(move |img| {
            Ok(gaussian_noise(img, mean, std, rng.random()))
        }));
    }
    // imageproc fixes salt vs pepper at 1:1, the middle of the canonical [0.4, 0.6].
    let amount = p.range("amount")?;
    Ok(Box::new(move |img| {
        let rate = draw::uniform(&mut rng, amount);
        Ok(salt_and_pepper_noise(img, rate, rng.random()))
    }))
}

fn erasing(p: &Params) -> Result<Op<Imageproc>, Failure> {
    let (scale, ratio, color) = (
        p.range("scale")?,
        p.range("ratio")?,
        Rgb([p.u8("fill")?; 3]),
    );
    let mut rng = draw::transform_rng();
    Ok(Box::new(move |img| {
        Ok(
            match draw::erasing_box(&mut rng, img.dimensions(), scale, ratio) {
                Some((x, y, w, h)) => {
                    let rect = Rect::at(x as i32, y as i32).of_size(w, h);
                    draw_filled_rect(img, rect, color)
                }
                None => img.clone(),
            },
        )
    }))
}
