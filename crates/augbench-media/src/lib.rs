//! augbench-media: the data a run measures on — dataset folders and the synthetic image dataset
//! (`dataset`, `synth`), synthetic MJPEG videos and the AVI writer/reader (`synth_video`, `avi`),
//! video clip sampling, decoding (by the command augbench-exec builds) and the clip cache every
//! worker loads from (`clips`, `clip_decode`, `clip_cache`), and the scan of a `data_dir` (`scan`).
//! Decoding into each library's own format happens in the workers' `load`.
//!
//! Targets measured with the image (mask, boxes, keypoints): their kinds, one item's targets and
//! the worker's targets file (`targets`), COCO instances annotations read and matched to a
//! folder's items (`coco`, over the polygon fill and RLE codecs of `raster`), and the annotated
//! synthetic dataset, shapes drawn into the synthetic images with a COCO file (`synth_targets`,
//! `annotated`).

pub mod annotated;
pub mod avi;
pub mod clip_cache;
pub mod clip_decode;
pub mod clips;
pub mod coco;
pub mod dataset;
pub mod raster;
pub mod scan;
pub mod synth;
pub mod synth_targets;
pub mod synth_video;
pub mod target_reference;
pub mod targets;

pub use annotated::{AnnotatedDataset, annotated_synthetic_dataset};
pub use clip_cache::ClipCache;
pub use clip_decode::Decoder;
pub use coco::{Annotations, Matched, for_items};
pub use dataset::{DatasetDir, synthetic_dataset, write_synthetic};
pub use scan::{IMAGE_EXTENSIONS, Scanned, VIDEO_EXTENSIONS, scan};
pub use targets::{ItemTargets, write_targets_file};
