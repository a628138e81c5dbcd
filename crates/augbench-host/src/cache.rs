//! The cache root: `$AUGBENCH_CACHE` if set, else the platform user cache dir + `augbench`.
//! Environments, the uv augbench installed, synthetic datasets, video clip caches and Python
//! workers' answers about what they build all live below it.

use std::path::PathBuf;

pub const CACHE_ENV: &str = "AUGBENCH_CACHE";

pub fn cache_root() -> PathBuf {
    if let Some(dir) = std::env::var_os(CACHE_ENV).filter(|v| !v.is_empty()) {
        return PathBuf::from(dir);
    }
    dirs::cache_dir()
        .unwrap_or_else(std::env::temp_dir)
        .join("augbench")
}

pub fn envs_dir() -> PathBuf {
    cache_root().join("envs")
}

pub fn datasets_dir() -> PathBuf {
    cache_root().join("datasets")
}

pub fn tools_dir() -> PathBuf {
    cache_root().join("tools")
}

/// Video clip caches; inside the datasets folder, so `augbench data clean` empties them too.
pub fn clips_dir() -> PathBuf {
    datasets_dir().join("clips")
}

/// Python workers' answers to what they build of the production catalog (augbench-exec).
pub fn coverage_dir() -> PathBuf {
    cache_root().join("coverage")
}
