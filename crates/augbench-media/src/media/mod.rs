//! Media: the built-in synthetic dataset (images, and MJPEG AVI videos), the scan of a real
//! `data_dir`, and for video the clip sampling rule and the clip cache every worker loads from.
//! Decoding into each library's own format happens in the workers' `load`.

pub mod avi;
pub mod clip_cache;
pub mod clip_decode;
pub mod clips;
pub mod dataset;
pub mod scan;
pub mod synth;
pub mod synth_video;

pub use clip_cache::ClipCache;
pub use clip_decode::Decoder;
pub use dataset::{DatasetDir, synthetic_dataset, write_synthetic};
pub use scan::{IMAGE_EXTENSIONS, Scanned, VIDEO_EXTENSIONS, scan};
