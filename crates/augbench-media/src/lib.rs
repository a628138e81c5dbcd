//! augbench-media: the data a run measures on — dataset folders and the synthetic image dataset
//! (`dataset`, `synth`), synthetic videos and the AVI writer/reader (`synth_video`, `avi`), video
//! clip sampling, decoding (in the video-decode environment) and the clip cache (`clips`,
//! `clip_decode`, `clip_cache`), and folder scanning (`scan`).

mod media;

pub use media::*;

// Sibling crates under the paths the modules name them by (`crate::cache::…`, `crate::env`).
use augbench_env as env;
use augbench_host::{cache, fsutil};
