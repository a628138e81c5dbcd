//! augbench-media: the data a run measures on — dataset folders and the synthetic image dataset
//! (`dataset`, `synth`), synthetic MJPEG videos and the AVI writer/reader (`synth_video`, `avi`),
//! video clip sampling, decoding (by the command augbench-exec builds) and the clip cache every
//! worker loads from (`clips`, `clip_decode`, `clip_cache`), and the scan of a `data_dir` (`scan`).
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
