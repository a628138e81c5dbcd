//! Adapter for kornia-rs (`kornia-image` + `kornia-imgproc` 0.2): items are `Image<u8, C>`.
//! Functions generic over the channel count serve both 3 and 9 channels; the 3-channel-only
//! ones (bilinear u8 resize, grayscale) are wired for `Kornia<3>` alone.

use kornia_image::{Image, ImageError, ImageSize};
use kornia_imgproc::color::{gray_from_rgb_u8, rgb_from_gray};
use kornia_imgproc::crop::crop_image;
use kornia_imgproc::filter::{box_blur_u8, gaussian_blur_u8, median_blur};
use kornia_imgproc::flip::{horizontal_flip, vertical_flip};
use kornia_imgproc::interpolation::InterpolationMode;
use kornia_imgproc::padding::{Padding2D, PaddingMode, spatial_padding};
use kornia_imgproc::resize::resize_fast_u8;
use kornia_imgproc::warp::warp_affine_u8;

use crate::draw::{self, MaxSide};
use crate::loader::Pixels;
use crate::params::{Interp, Params};
use crate::session::{Adapter, Op, unsupported};
use augbench_protocol::protocol::Failure;

pub(crate) struct Kornia<const C: usize>;

const LIB: &str = "kornia-rs";

type Img<const C: usize> = Image<u8, C>;

fn err(e: ImageError) -> String {
    e.to_string()
}

fn blank<const C: usize>(width: usize, height: usize) -> Result<Img<C>, String> {
    Img::<C>::from_size_val(ImageSize { width, height }, 0).map_err(err)
}

fn dims<const C: usize>(img: &Img<C>) -> (u32, u32) {
    (img.width() as u32, img.height() as u32)
}

impl Adapter for Kornia<3> {
    type Item = Img<3>;
    type Out = Img<3>;
    const LIBRARY: &'static str = LIB;

    fn convert(width: u32, height: u32, hwc: Vec<u8>) -> Result<Img<3>, String> {
        convert::<3>(width, height, hwc)
    }
    fn shape(item: &Img<3>) -> [u64; 3] {
        shape::<3>(item)
    }
    fn out_shape(out: &Img<3>) -> [u64; 3] {
        shape::<3>(out)
    }
    fn pixels(item: &Img<3>) -> Pixels<'_> {
        pixels::<3>(item)
    }
    fn out_pixels(out: &Img<3>) -> Pixels<'_> {
        pixels::<3>(out)
    }
    fn chain(out: Img<3>) -> Result<Img<3>, String> {
        Ok(out)
    }
    fn build(name: &str, p: &Params) -> Result<Op<Self>, Failure> {
        match name {
            "Resize" | "LongestMaxSize" | "SmallestMaxSize" => resize(name, p),
            "Grayscale" => grayscale(p),
            _ => build_common::<3, Self>(name, p),
        }
    }
}

impl Adapter for Kornia<9> {
    type Item = Img<9>;
    type Out = Img<9>;
    const LIBRARY: &'static str = LIB;

    fn convert(width: u32, height: u32, hwc: Vec<u8>) -> Result<Img<9>, String> {
        convert::<9>(width, height, hwc)
    }
    fn shape(item: &Img<9>) -> [u64; 3] {
        shape::<9>(item)
    }
    fn out_shape(out: &Img<9>) -> [u64; 3] {
        shape::<9>(out)
    }
    fn pixels(item: &Img<9>) -> Pixels<'_> {
        pixels::<9>(item)
    }
    fn out_pixels(out: &Img<9>) -> Pixels<'_> {
        pixels::<9>(out)
    }
    fn build(name: &str, p: &Params) -> Result<Op<Self>, Failure> {
        match name {
            "Resize" | "LongestMaxSize" | "SmallestMaxSize" => Err(unsupported(
                LIB,
                name,
                "its u8 bilinear resize takes 1, 3 or 4 channels",
            )),
            "Grayscale" => Err(unsupported(LIB, name, "gray_from_rgb takes 3 channels")),
            _ => build_common::<9, Self>(name, p),
        }
    }
}

fn convert<const C: usize>(width: u32, height: u32, hwc: Vec<u8>) -> Result<Img<C>, String> {
    let size = ImageSize {
        width: width as usize,
        height: height as usize,
    };
    Img::<C>::new(size, hwc).map_err(err)
}

fn pixels<const C: usize>(img: &Img<C>) -> Pixels<'_> {
    Pixels {
        width: img.width(),
        height: img.height(),
        channels: C,
        data: img.as_slice(),
    }
}

fn shape<const C: usize>(img: &Img<C>) -> [u64; 3] {
    [img.height() as u64, img.width() as u64, C as u64]
}

/// Transforms whose kornia-imgproc functions are generic over the channel count.
fn build_common<const C: usize, A>(name: &str, p: &Params) -> Result<Op<A>, Failure>
where
    A: Adapter<Item = Img<C>, Out = Img<C>>,
{
    match name {
        "RandomCrop224" | "CenterCrop224" => crop::<C, A>(name, p),
        "HorizontalFlip" | "VerticalFlip" => {
            let horizontal = name == "HorizontalFlip";
            Ok(Box::new(move |src| {
                let mut dst = blank::<C>(src.width(), src.height())?;
                let r = if horizontal {
                    horizontal_flip(src, &mut dst)
                } else {
                    vertical_flip(src, &mut dst)
                };
                r.map_err(err)?;
                Ok(dst)
            }))
        }
        "Pad" => pad::<C, A>(p),
        "Affine" | "Shear" => affine::<C, A>(name, p),
        "GaussianBlur" | "MedianBlur" | "Blur" => blur::<C, A>(name, p),
        "Rotate" => Err(unsupported(
            LIB,
            name,
            "its u8 warp is bilinear only; the spec asks for nearest",
        )),
        "Perspective" => Err(unsupported(
            LIB,
            name,
            "kornia-imgproc 0.2 has no perspective-matrix solver",
        )),
        "Brightness" | "Contrast" => Err(unsupported(
            LIB,
            name,
            "its enhance functions take float images",
        )),
        "Equalize" | "CLAHE" => Err(unsupported(
            LIB,
            name,
            "it equalizes single-channel images only",
        )),
        _ => Err(unsupported(
            LIB,
            name,
            "kornia-imgproc has no direct equivalent",
        )),
    }
}

fn crop<const C: usize, A>(name: &str, p: &Params) -> Result<Op<A>, Failure>
where
    A: Adapter<Item = Img<C>, Out = Img<C>>,
{
    let size = (p.dim("width")?, p.dim("height")?);
    let random = name == "RandomCrop224";
    let mut rng = draw::transform_rng();
    Ok(Box::new(move |src| {
        let (x, y) = if random {
            draw::random_crop(&mut rng, dims(src), size)?
        } else {
            draw::center_crop(dims(src), size)?
        };
        let mut dst = blank::<C>(size.0 as usize, size.1 as usize)?;
        crop_image(src, &mut dst, x as usize, y as usize).map_err(err)?;
        Ok(dst)
    }))
}

fn pad<const C: usize, A>(p: &Params) -> Result<Op<A>, Failure>
where
    A: Adapter<Item = Img<C>, Out = Img<C>>,
{
    p.expect_str("border_mode", "constant")?;
    let (n, fill) = (p.u32("padding")? as usize, p.u8("fill")?);
    Ok(Box::new(move |src| {
        let padding = Padding2D {
            top: n,
            bottom: n,
            left: n,
            right: n,
        };
        let mut dst = blank::<C>(src.width() + 2 * n, src.height() + 2 * n)?;
        spatial_padding(src, &mut dst, padding, PaddingMode::Constant, [fill; C]).map_err(err)?;
        Ok(dst)
    }))
}

fn affine<const C: usize, A>(name: &str, p: &Params) -> Result<Op<A>, Failure>
where
    A: Adapter<Item = Img<C>, Out = Img<C>>,
{
    let mut rng = draw::transform_rng();
    // warp_affine_u8 takes the forward 2×3 matrix (it inverts it) and samples bilinearly with a
    // zero border, so Affine needs interpolation bilinear, mode constant and fill 0.
    let fixed = if name == "Affine" {
        if p.interpolation()? != Interp::Bilinear || p.u8("fill")? != 0 {
            return Err(unsupported(
                LIB,
                name,
                "its u8 warp is bilinear with a zero border only",
            ));
        }
        p.expect_str("mode", "constant")?;
        let (shift, shear, reference) =
            (p.pair("shift")?, p.pair("shear")?, p.f64("reference_size")?);
        Some((p.f64("angle")?, p.f64("scale")?, shift, shear, reference))
    } else {
        None
    };
    let s = if fixed.is_none() {
        p.f64("shear")?
    } else {
        0.0
    };
    Ok(Box::new(move |src| {
        let (w, h) = dims(src);
        let m = match fixed {
            // `shift` is in pixels of a `reference_size` image: scaled to this image's size.
            Some((angle, scale, shift, shear, reference)) => {
                let px = (
                    shift.0 * f64::from(w) / reference,
                    shift.1 * f64::from(h) / reference,
                );
                draw::affine_about_center((w, h), angle, px, scale, shear)
            }
            // Canonical `shear` s (degrees): a horizontal shear drawn in [−s, s].
            None => {
                let shear = (draw::uniform(&mut rng, (-s, s)), 0.0);
                draw::affine_about_center((w, h), 0.0, (0.0, 0.0), 1.0, shear)
            }
        };
        let mut dst = blank::<C>(src.width(), src.height())?;
        warp_affine_u8(src, &mut dst, &m).map_err(err)?;
        Ok(dst)
    }))
}

fn blur<const C: usize, A>(name: &str, p: &Params) -> Result<Op<A>, Failure>
where
    A: Adapter<Item = Img<C>, Out = Img<C>>,
{
    #[derive(Clone, Copy)]
    enum Kind {
        Gaussian((usize, usize), (f32, f32)),
        Median(usize),
        Box(usize),
    }
    let kind = match name {
        "GaussianBlur" => {
            let (kh, kw) = p.pair("kernel_size")?;
            let sigma = p.f64("sigma")? as f32;
            // kornia takes (kernel_x, kernel_y) = (width, height); the spec lists [h, w].
            Kind::Gaussian((kw as usize, kh as usize), (sigma, sigma))
        }
        // Canonical kernel size; kornia's median_blur accepts 3 or 5 (it errors otherwise).
        "MedianBlur" => Kind::Median(p.u32("blur_limit")? as usize),
        _ => {
            p.expect_str("border_mode", "constant")?;
            // Canonical box radius r → kernel size 2r + 1.
            Kind::Box(2 * p.u32("radius")? as usize + 1)
        }
    };
    Ok(Box::new(move |src| {
        let mut dst = blank::<C>(src.width(), src.height())?;
        match kind {
            Kind::Gaussian(k, s) => gaussian_blur_u8(src, &mut dst, k, s),
            Kind::Median(k) => median_blur(src, &mut dst, k),
            Kind::Box(k) => box_blur_u8(src, &mut dst, (k, k)),
        }
        .map_err(err)?;
        Ok(dst)
    }))
}

fn resize(name: &str, p: &Params) -> Result<Op<Kornia<3>>, Failure> {
    let mode = match p.interpolation()? {
        Interp::Nearest => InterpolationMode::Nearest,
        Interp::Bilinear => InterpolationMode::Bilinear,
        Interp::Bicubic => InterpolationMode::Bicubic,
        Interp::Lanczos => InterpolationMode::Lanczos,
    };
    let target = if name == "Resize" {
        let s = p.dim("target_size")?;
        Target::Fixed(s, s)
    } else {
        let side = if name == "LongestMaxSize" {
            MaxSide::Longest
        } else {
            MaxSide::Smallest
        };
        Target::Max(p.dim("max_size")?, side)
    };
    // resize_fast_u8 antialiases on downscale (PIL/torchvision antialias=True).
    Ok(Box::new(move |src| {
        let (w, h) = match target {
            Target::Fixed(w, h) => (w, h),
            Target::Max(max, side) => draw::max_size_target(dims(src), max, side),
        };
        let mut dst = blank::<3>(w as usize, h as usize)?;
        resize_fast_u8(src, &mut dst, mode).map_err(err)?;
        Ok(dst)
    }))
}

#[derive(Clone, Copy)]
enum Target {
    Fixed(u32, u32),
    Max(u32, MaxSide),
}

fn grayscale(p: &Params) -> Result<Op<Kornia<3>>, Failure> {
    if p.u32("num_output_channels")? != 3 {
        return Err(unsupported(
            LIB,
            "Grayscale",
            "only num_output_channels 3 is wired",
        ));
    }
    // gray_from_rgb_u8 yields one channel; kornia's rgb_from_gray restores the three the spec
    // asks for.
    Ok(Box::new(|src| {
        let size = src.size();
        let mut gray = Image::<u8, 1>::from_size_val(size, 0).map_err(err)?;
        gray_from_rgb_u8(src, &mut gray).map_err(err)?;
        let mut dst = blank::<3>(size.width, size.height)?;
        rgb_from_gray(&gray, &mut dst).map_err(err)?;
        Ok(dst)
    }))
}
