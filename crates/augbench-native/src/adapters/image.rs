//! Adapter for the `image` crate (imageops, 0.25): items are `RgbImage`s. Covers the rgb-set
//! transforms imageops offers directly; every other name answers `unsupported`.

use std::io::Cursor;

use image::codecs::jpeg::JpegEncoder;
use image::imageops::{self, FilterType};
use image::{DynamicImage, ImageFormat, RgbImage};
use rand::Rng;

use crate::draw::{self, MaxSide};
use crate::params::{Interp, Params};
use crate::rgb::{self, Turns, rgb_image_io};
use crate::session::{Adapter, Op, unsupported};
use augbench_protocol::protocol::Failure;

pub(crate) struct ImageRs;

fn filter(interp: Interp) -> FilterType {
    match interp {
        Interp::Nearest => FilterType::Nearest,
        // imageops' Triangle is its (antialiased) bilinear filter.
        Interp::Bilinear => FilterType::Triangle,
        Interp::Bicubic => FilterType::CatmullRom,
        Interp::Lanczos => FilterType::Lanczos3,
    }
}

impl Adapter for ImageRs {
    type Item = RgbImage;
    type Out = RgbImage;
    const LIBRARY: &'static str = "image";

    rgb_image_io!();

    fn build(name: &str, p: &Params) -> Result<Op<Self>, Failure> {
        match name {
            "Resize" | "LongestMaxSize" | "SmallestMaxSize" => resize(name, p),
            "RandomCrop224" | "CenterCrop224" | "RandomResizedCrop" => crop(name, p),
            "HorizontalFlip" => Ok(Box::new(|img| Ok(imageops::flip_horizontal(img)))),
            "VerticalFlip" => Ok(Box::new(|img| Ok(imageops::flip_vertical(img)))),
            "RandomRotate90" => random_rotate90(p),
            "Grayscale" => grayscale(p),
            "Invert" => Ok(Box::new(|img| {
                let mut out = img.clone();
                imageops::invert(&mut out);
                Ok(out)
            })),
            "Brightness" | "Contrast" | "Hue" => color(name, p),
            "GaussianBlur" => gaussian_blur(p),
            "UnsharpMask" => unsharp_mask(p),
            "JpegCompression" => jpeg(p),
            _ => Err(unsupported(
                "image",
                name,
                "imageops has no direct equivalent",
            )),
        }
    }
}

fn resize(name: &str, p: &Params) -> Result<Op<ImageRs>, Failure> {
    let f = filter(p.interpolation()?);
    if name == "Resize" {
        let s = p.dim("target_size")?;
        return Ok(Box::new(move |img| Ok(imageops::resize(img, s, s, f))));
    }
    let max = p.dim("max_size")?;
    let side = if name == "LongestMaxSize" {
        MaxSide::Longest
    } else {
        MaxSide::Smallest
    };
    Ok(Box::new(move |img| {
        let (w, h) = draw::max_size_target(img.dimensions(), max, side);
        Ok(imageops::resize(img, w, h, f))
    }))
}

fn crop(name: &str, p: &Params) -> Result<Op<ImageRs>, Failure> {
    let mut rng = draw::transform_rng();
    if name == "RandomResizedCrop" {
        let (oh, ow) = p.dims("size")?;
        let (scale, ratio, f) = (
            p.range("scale")?,
            p.range("ratio")?,
            filter(p.interpolation()?),
        );
        // `resize` samples the `crop_imm` view directly: one resampling pass, no copy.
        return Ok(Box::new(move |img| {
            let (x, y, w, h) = draw::resized_crop_box(&mut rng, img.dimensions(), scale, ratio);
            Ok(imageops::resize(
                &*imageops::crop_imm(img, x, y, w, h),
                ow,
                oh,
                f,
            ))
        }));
    }
    let size = (p.dim("width")?, p.dim("height")?);
    let random = name == "RandomCrop224";
    Ok(Box::new(move |img| {
        let (x, y) = if random {
            draw::random_crop(&mut rng, img.dimensions(), size)?
        } else {
            draw::center_crop(img.dimensions(), size)?
        };
        Ok(imageops::crop_imm(img, x, y, size.0, size.1).to_image())
    }))
}

fn random_rotate90(p: &Params) -> Result<Op<ImageRs>, Failure> {
    // imageops rotates clockwise where np.rot90 turns counter-clockwise; the cost is the same.
    let turns: Turns = [imageops::rotate90, imageops::rotate180, imageops::rotate270];
    rgb::random_rotate90::<ImageRs>(p, turns)
}

fn grayscale(p: &Params) -> Result<Op<ImageRs>, Failure> {
    if p.u32("num_output_channels")? != 3 {
        return Err(unsupported(
            "image",
            "Grayscale",
            "only num_output_channels 3 is wired",
        ));
    }
    // imageops::grayscale yields one channel; image's own Luma→RGB conversion restores the
    // three channels the spec asks for.
    Ok(Box::new(|img| {
        Ok(DynamicImage::ImageLuma8(imageops::grayscale(img)).to_rgb8())
    }))
}

fn color(name: &str, p: &Params) -> Result<Op<ImageRs>, Failure> {
    let mut rng = draw::transform_rng();
    match name {
        "Brightness" => {
            // Canonical: additive beta as a fraction of the max value (255); imageops::brighten
            // adds an integer in 0..255 units, so beta·255.
            let limit = p.range("brightness_limit")?;
            Ok(Box::new(move |img| {
                let value = (draw::uniform(&mut rng, limit) * 255.0).round() as i32;
                Ok(imageops::brighten(img, value))
            }))
        }
        "Contrast" => {
            // Canonical: multiplicative factor alpha = 1 + limit. imageops::contrast(c) scales by
            // ((100 + c) / 100)² about mid-grey, so c = 100·(√alpha − 1).
            let limit = p.range("contrast_limit")?;
            Ok(Box::new(move |img| {
                let alpha = (1.0 + draw::uniform(&mut rng, limit)).max(0.0);
                Ok(imageops::contrast(
                    img,
                    (100.0 * (alpha.sqrt() - 1.0)) as f32,
                ))
            }))
        }
        _ => {
            // Canonical hue shift in degrees; huerotate takes degrees too.
            let degrees = p.f64("hue")?.round() as i32;
            Ok(Box::new(move |img| Ok(imageops::huerotate(img, degrees))))
        }
    }
}

fn gaussian_blur(p: &Params) -> Result<Op<ImageRs>, Failure> {
    // imageops::blur takes sigma only and derives its kernel size from it; the canonical
    // kernel_size cannot be passed alongside.
    let sigma = p.positive("sigma")? as f32;
    Ok(Box::new(move |img| Ok(imageops::blur(img, sigma))))
}

fn unsharp_mask(p: &Params) -> Result<Op<ImageRs>, Failure> {
    let (klo, khi) = p.range("blur_limit")?;
    let threshold = p.f64("threshold")?.round() as i32;
    let mut rng = draw::transform_rng();
    // Kernel size: an odd size in blur_limit; sigma_limit 0 means "from the kernel size" with
    // OpenCV's rule σ = 0.3·((k − 1)/2 − 1) + 0.8. Threshold is in 0..255 units in both.
    // imageops::unsharpen has no `alpha` (its amount is fixed at 1): that parameter is not honoured.
    let odd: Vec<u32> = (klo as u32..=khi as u32).filter(|k| k % 2 == 1).collect();
    if odd.is_empty() {
        return Err(unsupported(
            "image",
            "UnsharpMask",
            "blur_limit holds no odd kernel size",
        ));
    }
    Ok(Box::new(move |img| {
        let k = f64::from(odd[rng.random_range(0..odd.len())]);
        let sigma = 0.3 * ((k - 1.0) * 0.5 - 1.0) + 0.8;
        Ok(imageops::unsharpen(img, sigma as f32, threshold))
    }))
}

fn jpeg(p: &Params) -> Result<Op<ImageRs>, Failure> {
    let quality = p.range("quality")?;
    let mut rng = draw::transform_rng();
    // Encode at the drawn quality and decode again, both with image's own JPEG codec.
    Ok(Box::new(move |img| {
        let q = draw::uniform(&mut rng, quality).round().clamp(1.0, 100.0) as u8;
        let mut buf = Vec::new();
        JpegEncoder::new_with_quality(&mut buf, q)
            .encode_image(img)
            .map_err(|e| format!("JPEG encode: {e}"))?;
        let decoded = image::load(Cursor::new(buf), ImageFormat::Jpeg)
            .map_err(|e| format!("JPEG decode: {e}"))?;
        Ok(decoded.into_rgb8())
    }))
}
