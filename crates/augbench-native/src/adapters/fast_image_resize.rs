//! Adapter for `fast_image_resize` 6: items are its own `images::Image` (U8x3). It resizes, with
//! an optional source crop box, so it covers Resize, the max-size resizes and the crops that its
//! `ResizeOptions::crop` expresses directly; everything else answers `unsupported`. Resizes go
//! through `resize_typed::<U8x3>`, the routine `Resizer::resize` dispatches to for this pixel
//! type: the same work, without instantiating fir's kernels for all thirteen pixel types here.

use fast_image_resize::images::Image;
use fast_image_resize::pixels::U8x3;
use fast_image_resize::{FilterType, PixelType, ResizeAlg, ResizeOptions, Resizer};

use crate::draw::{self, MaxSide};
use crate::loader::Pixels;
use crate::params::{Interp, Params};
use crate::session::{Adapter, Op, unsupported};
use augbench_protocol::protocol::Failure;

pub(crate) struct Fir;

const LIB: &str = "fast_image_resize";

impl Adapter for Fir {
    type Item = Image<'static>;
    type Out = Image<'static>;
    const LIBRARY: &'static str = LIB;

    fn convert(width: u32, height: u32, hwc: Vec<u8>) -> Result<Self::Item, String> {
        Image::from_vec_u8(width, height, hwc, PixelType::U8x3).map_err(|e| e.to_string())
    }

    fn shape(item: &Self::Item) -> [u64; 3] {
        [u64::from(item.height()), u64::from(item.width()), 3]
    }

    fn out_shape(out: &Self::Out) -> [u64; 3] {
        Self::shape(out)
    }

    fn pixels(item: &Self::Item) -> Pixels<'_> {
        Pixels {
            width: item.width() as usize,
            height: item.height() as usize,
            channels: 3,
            data: item.buffer(),
        }
    }

    fn out_pixels(out: &Self::Out) -> Pixels<'_> {
        Self::pixels(out)
    }

    fn chain(out: Self::Out) -> Result<Self::Item, String> {
        Ok(out)
    }

    fn build(name: &str, p: &Params) -> Result<Op<Self>, Failure> {
        match name {
            "Resize" => {
                let s = p.dim("target_size")?;
                let options = ResizeOptions::new().resize_alg(algorithm(p)?);
                let mut resizer = Resizer::new();
                Ok(Box::new(move |src| {
                    resize_into(&mut resizer, src, (s, s), &options)
                }))
            }
            "LongestMaxSize" | "SmallestMaxSize" => max_size(name, p),
            "RandomCrop224" | "CenterCrop224" => crop(name, p),
            "RandomResizedCrop" => resized_crop(p),
            _ => Err(unsupported(
                LIB,
                name,
                "it only resizes (with an optional crop box)",
            )),
        }
    }
}

fn algorithm(p: &Params) -> Result<ResizeAlg, Failure> {
    Ok(match p.interpolation()? {
        Interp::Nearest => ResizeAlg::Nearest,
        // Convolution filters antialias on downscale, like PIL and torchvision (antialias=True).
        Interp::Bilinear => ResizeAlg::Convolution(FilterType::Bilinear),
        Interp::Bicubic => ResizeAlg::Convolution(FilterType::CatmullRom),
        Interp::Lanczos => ResizeAlg::Convolution(FilterType::Lanczos3),
    })
}

/// Resizes `src` (through `options`, which may hold a crop box) into a new `w×h` image.
fn resize_into(
    resizer: &mut Resizer,
    src: &Image<'static>,
    (w, h): (u32, u32),
    options: &ResizeOptions,
) -> Result<Image<'static>, String> {
    let mut dst = Image::new(w, h, PixelType::U8x3);
    let (Some(src_view), Some(mut dst_view)) =
        (src.typed_image::<U8x3>(), dst.typed_image_mut::<U8x3>())
    else {
        return Err(format!("{LIB}: items are U8x3, got {:?}", src.pixel_type()));
    };
    resizer
        .resize_typed(&src_view, &mut dst_view, options)
        .map_err(|e| e.to_string())?;
    Ok(dst)
}

fn max_size(name: &str, p: &Params) -> Result<Op<Fir>, Failure> {
    let max = p.dim("max_size")?;
    let side = if name == "LongestMaxSize" {
        MaxSide::Longest
    } else {
        MaxSide::Smallest
    };
    let options = ResizeOptions::new().resize_alg(algorithm(p)?);
    let mut resizer = Resizer::new();
    Ok(Box::new(move |src| {
        let size = draw::max_size_target((src.width(), src.height()), max, side);
        resize_into(&mut resizer, src, size, &options)
    }))
}

fn crop(name: &str, p: &Params) -> Result<Op<Fir>, Failure> {
    // A crop is a resize whose source crop box has the destination's size: fir copies the box
    // (no resampling happens at scale 1).
    let size = (p.dim("width")?, p.dim("height")?);
    let random = name == "RandomCrop224";
    let base = ResizeOptions::new().resize_alg(ResizeAlg::Nearest);
    let mut rng = draw::transform_rng();
    let mut resizer = Resizer::new();
    Ok(Box::new(move |src| {
        let dims = (src.width(), src.height());
        let (x, y) = if random {
            draw::random_crop(&mut rng, dims, size)?
        } else {
            draw::center_crop(dims, size)?
        };
        let options = base.crop(
            f64::from(x),
            f64::from(y),
            f64::from(size.0),
            f64::from(size.1),
        );
        resize_into(&mut resizer, src, size, &options)
    }))
}

fn resized_crop(p: &Params) -> Result<Op<Fir>, Failure> {
    let (oh, ow) = p.dims("size")?;
    let (scale, ratio) = (p.range("scale")?, p.range("ratio")?);
    let base = ResizeOptions::new().resize_alg(algorithm(p)?);
    let mut rng = draw::transform_rng();
    let mut resizer = Resizer::new();
    Ok(Box::new(move |src| {
        let (x, y, w, h) =
            draw::resized_crop_box(&mut rng, (src.width(), src.height()), scale, ratio);
        let options = base.crop(f64::from(x), f64::from(y), f64::from(w), f64::from(h));
        resize_into(&mut resizer, src, (ow, oh), &options)
    }))
}
