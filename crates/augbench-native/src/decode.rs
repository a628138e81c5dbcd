//! `decode`: reads one image file into RGB8 pixels with the `image` crate (the native libraries'
//! decoder), refusing empty and truncated files with a reason. `load` decodes a dataset with it;
//! an adapter's default `read_file` (pipeline decode scopes) does too.

use std::io::Cursor;
use std::path::Path;

use image::{DynamicImage, ImageFormat, ImageReader};

/// Decoded RGB8 pixels, row-major HWC.
pub(crate) struct Rgb8 {
    pub width: u32,
    pub height: u32,
    pub data: Vec<u8>,
}

pub(crate) fn decode(path: &Path) -> Result<(Rgb8, bool), String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot open: {e}"))?;
    if bytes.is_empty() {
        return Err("empty file (0 bytes)".into());
    }
    let reader = ImageReader::new(Cursor::new(&bytes))
        .with_guessed_format()
        .map_err(|e| format!("cannot read: {e}"))?;
    if reader.format() == Some(ImageFormat::Jpeg) && !jpeg_is_complete(&bytes) {
        return Err("truncated JPEG: no end-of-image marker after the last scan".into());
    }
    let img = reader.decode().map_err(|e| format!("cannot decode: {e}"))?;
    let converted = !matches!(img, DynamicImage::ImageRgb8(_));
    let rgb = match img {
        DynamicImage::ImageRgb8(rgb) => rgb,
        other => other.to_rgb8(),
    };
    let (width, height) = rgb.dimensions();
    Ok((
        Rgb8 {
            width,
            height,
            data: rgb.into_raw(),
        },
        converted,
    ))
}

/// A complete JPEG has an end-of-image marker (FF D9) after its last start-of-scan (FF DA).
/// Entropy-coded data never contains FF D9 (0xFF bytes are stuffed), so a file cut inside its
/// last scan has none. The decoder would otherwise fill the missing rows silently, where
/// Pillow refuses the file.
pub(crate) fn jpeg_is_complete(bytes: &[u8]) -> bool {
    let marker = |m: u8| move |w: &[u8]| w[0] == 0xFF && w[1] == m;
    let Some(sos) = bytes.windows(2).rposition(marker(0xDA)) else {
        return false;
    };
    bytes[sos..].windows(2).any(marker(0xD9))
}
