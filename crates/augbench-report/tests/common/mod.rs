//! Shared test helpers: demo results written into a temporary folder, as `augbench run` lays them out.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use augbench_core::results::ResultFile;
use augbench_report::sample;

pub fn write_all(dir: &Path, files: &[ResultFile]) -> Vec<PathBuf> {
    files
        .iter()
        .map(|f| sample::write(dir, f).unwrap())
        .collect()
}

/// A temporary folder holding `sample::demo()`.
pub fn demo_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write_all(dir.path(), &sample::demo());
    dir
}

pub fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

/// The `UsageError` inside an error chain, if any.
pub fn usage_message(err: &anyhow::Error) -> Option<String> {
    err.chain()
        .find_map(|e| e.downcast_ref::<augbench_core::UsageError>())
        .map(ToString::to_string)
}
