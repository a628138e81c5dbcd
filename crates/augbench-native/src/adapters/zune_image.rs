//! Adapter for `zune-image` 0.5 with `zune-imageprocs` 0.5.1: items are zune's own planar
//! `Image` (RGB, u8), decoded by zune-image itself (zune-jpeg) in the pipeline's decode scopes.
//! Its operations work in place, so each call clones the item and runs one operation on the
//! clone (the allocation every other crate's returned image costs too). Only the operations
//! zune-imageprocs offers directly; every other name answers `unsupported`.

use std::path::Path;
use std::sync::OnceLock;

use zune_core::bytestream::ZCursor;
use zune_core::colorspace::ColorSpace;
use zune_core::options::DecoderOptions;
use zune_image::image::Image;
use zune_image::traits::OperationsTrait;
use zune_imageprocs::box_blur::BoxBlur;
use zune_imageprocs::crop::Crop;
use zune_imageprocs::flip::{Flip, FlipDirection};
use zune_imageprocs::gaussian_blur::GaussianBlur;
use zune_imageprocs::invert::Invert;
use zune_imageprocs::median::Median;
use zune_imageprocs::resize::{Resize, ResizeMethod};
use zune_imageprocs::transpose::Transpose;

use crate::draw::{self, MaxSide};
use crate::loader::Pixels;
use crate::params::{Interp, Params};
use crate::session::{Adapter, Op, unsupported};
use augbench_protocol::protocol::Failure;

pub(crate) struct Zune;

const LIB: &str = "zune-image";

/// An item: zune's planar image, plus its interleaved pixels for the pipeline's shared crop.
pub(crate) struct ZuneItem {
    image: Image,
    hwc: Vec<u8>,
    size: (u32, u32),
}

/// An output: zune's planar image; its interleaved pixels are made on first request (the
/// contract check, `emit`, and the pipeline's normalize read them, never the timed loop).
pub(crate) struct ZuneOut {
    image: Image,
    hwc: OnceLock<Vec<u8>>,
}

impl ZuneOut {
    fn new(image: Image) -> Self {
        ZuneOut {
            image,
            hwc: OnceLock::new(),
        }
    }

    fn size(&self) -> (u32, u32) {
        let (w, h) = self.image.dimensions();
        (w as u32, h as u32)
    }
}

impl Adapter for Zune {
    type Item = ZuneItem;
    type Out = ZuneOut;
    const LIBRARY: &'static str = LIB;

    fn convert(width: u32, height: u32, hwc: Vec<u8>) -> Result<ZuneItem, String> {
        if hwc.len() != width as usize * height as usize * 3 {
            return Err("pixel buffer size mismatch".into());
        }
        let image = Image::from_u8(&hwc, width as usize, height as usize, ColorSpace::RGB);
        Ok(ZuneItem {
            image,
            hwc,
            size: (width, height),
        })
    }

    fn read_file(path: &Path) -> Result<ZuneItem, String> {
        decode(path)
    }

    fn decoder() -> String {
        crate::versions::zune_decoder()
    }

    fn shape(item: &ZuneItem) -> [u64; 3] {
        [u64::from(item.size.1), u64::from(item.size.0), 3]
    }

    fn out_shape(out: &ZuneOut) -> [u64; 3] {
        let (w, h) = out.size();
        [u64::from(h), u64::from(w), 3]
    }

    fn pixels(item: &ZuneItem) -> Pixels<'_> {
        Pixels {
            width: item.size.0 as usize,
            height: item.size.1 as usize,
            channels: 3,
            data: &item.hwc,
        }
    }

    fn out_pixels(out: &ZuneOut) -> Pixels<'_> {
        let (w, h) = out.size();
        let data = out.hwc.get_or_init(|| {
            out.image
                .flatten_to_u8()
                .into_iter()
                .next()
                .unwrap_or_default()
        });
        Pixels {
            width: w as usize,
            height: h as usize,
            channels: 3,
            data,
        }
    }

    fn build(name: &str, p: &Params) -> Result<Op<Self>, Failure> {
        match name {
            "Resize" | "LongestMaxSize" | "SmallestMaxSize" => resize(name, p),
            "RandomCrop224" | "CenterCrop224" => crop(name, p),
            "HorizontalFlip" => Ok(apply(Flip::new(FlipDirection::Horizontal))),
            "VerticalFlip" => Ok(apply(Flip::new(FlipDirection::Vertical))),
            "Transpose" => Ok(apply(Transpose::new())),
            "Invert" => Ok(apply(Invert::new())),
            // zune's GaussianBlur takes sigma only and derives its kernel from it; the canonical
            // kernel_size cannot be passed alongside (as with imageops::blur).
            "GaussianBlur" => Ok(apply(GaussianBlur::new(p.positive("sigma")? as f32))),
            // BoxBlur's argument is the window width: radius 5 of the spec = a 5×5 box.
            "Blur" => Ok(apply(BoxBlur::new(p.dim("radius")? as usize))),
            // Median's radius r is a (2r+1)² window: blur_limit 5 → r = 2.
            "MedianBlur" => median(p),
            "Grayscale" => grayscale(p),
            _ => Err(unsupported(
                LIB,
                name,
                "zune-imageprocs has no direct equivalent",
            )),
        }
    }
}

/// Decodes a file with zune-image's own decoder (zune-jpeg for JPEG), as RGB u8.
fn decode(path: &Path) -> Result<ZuneItem, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot open: {e}"))?;
    let mut image = Image::read(ZCursor::new(&bytes), DecoderOptions::default())
        .map_err(|e| format!("cannot decode: {e:?}"))?;
    if image.colorspace() != ColorSpace::RGB {
        image
            .convert_color(ColorSpace::RGB)
            .map_err(|e| format!("cannot convert to RGB: {e:?}"))?;
    }
    let (w, h) = image.dimensions();
    let hwc = image.flatten_to_u8().into_iter().next().unwrap_or_default();
    Ok(ZuneItem {
        image,
        hwc,
        size: (w as u32, h as u32),
    })
}

/// One in-place operation on a clone of the item.
fn apply(op: impl OperationsTrait + 'static) -> Op<Zune> {
    Box::new(move |item| {
        let mut image = item.image.clone();
        op.execute(&mut image).map_err(|e| format!("{e:?}"))?;
        Ok(ZuneOut::new(image))
    })
}

fn resize(name: &str, p: &Params) -> Result<Op<Zune>, Failure> {
    if p.interpolation()? != Interp::Bilinear {
        return Err(unsupported(
            LIB,
            name,
            "zune's resize has no nearest-neighbour filter; only bilinear is wired",
        ));
    }
    if name == "Resize" {
        let s = p.dim("target_size")? as usize;
        return Ok(apply(Resize::new(s, s, ResizeMethod::Bilinear)));
    }
    let max = p.dim("max_size")?;
    let side = if name == "LongestMaxSize" {
        MaxSide::Longest
    } else {
        MaxSide::Smallest
    };
    Ok(Box::new(move |item| {
        let (w, h) = draw::max_size_target(item.size, max, side);
        let mut image = item.image.clone();
        Resize::new(w as usize, h as usize, ResizeMethod::Bilinear)
            .execute(&mut image)
            .map_err(|e| format!("{e:?}"))?;
        Ok(ZuneOut::new(image))
    }))
}

fn crop(name: &str, p: &Params) -> Result<Op<Zune>, Failure> {
    let size = (p.dim("width")?, p.dim("height")?);
    let random = name == "RandomCrop224";
    let mut rng = draw::transform_rng();
    Ok(Box::new(move |item| {
        let (x, y) = if random {
            draw::random_crop(&mut rng, item.size, size)?
        } else {
            draw::center_crop(item.size, size)?
        };
        let mut image = item.image.clone();
        Crop::new(size.0 as usize, size.1 as usize, x as usize, y as usize)
            .execute(&mut image)
            .map_err(|e| format!("{e:?}"))?;
        Ok(ZuneOut::new(image))
    }))
}

fn median(p: &Params) -> Result<Op<Zune>, Failure> {
    let size = p.dim("blur_limit")?;
    if size % 2 == 0 {
        return Err(unsupported(
            LIB,
            "MedianBlur",
            "its window is 2r+1 wide: an even blur_limit has no radius",
        ));
    }
    Ok(apply(Median::new((size / 2) as usize)))
}

fn grayscale(p: &Params) -> Result<Op<Zune>, Failure> {
    if p.u32("num_output_channels")? != 3 {
        return Err(unsupported(
            LIB,
            "Grayscale",
            "only num_output_channels 3 is wired",
        ));
    }
    // zune's own colour conversions: RGB → Luma, then Luma → RGB for the three channels.
    Ok(Box::new(|item| {
        let mut image = item.image.clone();
        for to in [ColorSpace::Luma, ColorSpace::RGB] {
            image.convert_color(to).map_err(|e| format!("{e:?}"))?;
        }
        Ok(ZuneOut::new(image))
    }))
}
