//! One adapter per native library, each file named after its crate (as
//! `python/augbench_worker/adapters/<library>.py` is for the Python ones): the crate's calls behind
//! the `session::Adapter` trait, and `unsupported` with a reason for what it cannot do.

mod fast_image_resize;
mod image;
mod imageproc;
mod kornia_rs;
mod zune_image;

pub(crate) use self::fast_image_resize::Fir;
pub(crate) use self::image::ImageRs;
pub(crate) use self::imageproc::Imageproc;
pub(crate) use self::kornia_rs::Kornia;
pub(crate) use self::zune_image::Zune;
