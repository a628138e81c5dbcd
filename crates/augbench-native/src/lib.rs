//! augbench-native: the native Rust worker — the image crates behind `augbench worker` (image,
//! imageproc, fast_image_resize, kornia-rs in `native`) and its threaded pipeline loader
//! (`loader`). Only the `augbench worker` subcommand and the benches link this crate; the
//! coordinator (augbench-exec) talks to it over the protocol and never links the image crates.

pub mod loader;
mod native;

pub use native::*;

// Sibling crates under the paths the modules name them by (`crate::protocol::…`).
#[cfg(test)]
use augbench_protocol::contract;
use augbench_protocol::protocol;
