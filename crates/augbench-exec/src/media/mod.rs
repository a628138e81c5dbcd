//! Media: the built-in synthetic dataset (generator and cached folders) and the scan of a real
//! `data_dir`. Decoding into each library's own format happens in the workers' `load`.

pub mod dataset;
pub mod scan;
pub mod synth;

pub use dataset::{DatasetDir, synthetic_dataset, write_synthetic};
pub use scan::{IMAGE_EXTENSIONS, Scanned, scan};
