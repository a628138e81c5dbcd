//! What the adapters of crates whose image type is `image::RgbImage` (image, imageproc) share:
//! the `Adapter` methods that convert, measure and expose an `RgbImage` (`rgb_image_io!`), and
//! `RandomRotate90` over each crate's own quarter turns (the turns themselves stay the crate's).

use image::RgbImage;
use rand::Rng;

use crate::draw;
use crate::params::Params;
use crate::session::{Adapter, Op};
use augbench_protocol::protocol::Failure;

/// The `convert`, `shape`, `out_shape`, `pixels`, `out_pixels` and `chain` methods of an
/// `Adapter` whose `Item` and `Out` are both `image::RgbImage`.
macro_rules! rgb_image_io {
    () => {
        fn convert(width: u32, height: u32, hwc: Vec<u8>) -> Result<image::RgbImage, String> {
            image::RgbImage::from_raw(width, height, hwc)
                .ok_or_else(|| "pixel buffer size mismatch".into())
        }

        fn shape(item: &image::RgbImage) -> [u64; 3] {
            [u64::from(item.height()), u64::from(item.width()), 3]
        }

        fn out_shape(out: &image::RgbImage) -> [u64; 3] {
            Self::shape(out)
        }

        fn pixels(item: &image::RgbImage) -> crate::loader::Pixels<'_> {
            crate::session::rgb_pixels(item)
        }

        fn out_pixels(out: &image::RgbImage) -> crate::loader::Pixels<'_> {
            Self::pixels(out)
        }

        fn chain(out: image::RgbImage) -> Result<image::RgbImage, String> {
            Ok(out)
        }
    };
}
pub(crate) use rgb_image_io;

/// A crate's quarter turns of an image: by one, two and three quarters.
pub(crate) type Turns = [fn(&RgbImage) -> RgbImage; 3];

/// `RandomRotate90`: a seeded draw of `times` in the spec's range, then that many quarter turns
/// with the crate's own `turns` (none: a copy, as every library returns a new image).
pub(crate) fn random_rotate90<A>(p: &Params, turns: Turns) -> Result<Op<A>, Failure>
where
    A: Adapter<Item = RgbImage, Out = RgbImage>,
{
    let (lo, hi) = p.range("times")?;
    let (lo, hi) = (lo as u32, hi as u32);
    let mut rng = draw::transform_rng();
    Ok(Box::new(move |img| {
        Ok(match rng.random_range(lo..=hi) % 4 {
            0 => img.clone(),
            k => turns[k as usize - 1](img),
        })
    }))
}
