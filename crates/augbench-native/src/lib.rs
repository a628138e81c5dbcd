//! augbench-native: the native Rust worker behind `augbench worker`, serving the worker protocol
//! (`worker`) for the crates image, imageproc, fast_image_resize, kornia-rs and zune-image
//! (`library`): decoding in `load`, timing in `session`, each crate's transforms in
//! `adapters/<library>.rs`, pipeline mode in `pipeline` over the threaded `loader`. Only
//! `augbench worker` and the benches link it; augbench-exec never does.

mod adapters;
mod clips;
mod clock;
mod decode;
mod draw;
mod in_process;
mod library;
mod load;
pub mod loader;
mod markers;
mod params;
mod pipeline;
mod reply;
mod rgb;
pub mod sentinel;
mod session;
pub mod support;
pub mod versions;
mod worker;

pub use in_process::exchange;
pub use library::Library;
pub use worker::{ServeOptions, serve, serve_with};

/// Env var that enables the debug fault transforms (`__panic`, `__hang`, `__exit`).
pub use augbench_host::fsutil::TEST_FAULTS_ENV;

#[cfg(test)]
mod tests;
