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

/// Pipeline results of two libraries, each with its `DecodeOnly` ceiling row: albumentationsx
/// Rotate runs at 92% of its ceiling, torchvision Rotate at 50% of its own.
pub fn pipeline_files() -> Vec<ResultFile> {
    let file = |library: &str, version: &str, ceiling: f64, rotate: f64| {
        sample::result_file(
            "image-rgb",
            augbench_core::Mode::Pipeline,
            library,
            version,
            &[
                ("DecodeOnly", sample::runs(ceiling)),
                ("Rotate", sample::runs(rotate)),
                ("Resize", sample::runs(ceiling * 0.75)),
            ],
        )
    };
    vec![
        file("albumentationsx", "2.5.0", 1000.0, 920.0),
        file("torchvision", "0.29.0", 800.0, 400.0),
    ]
}

/// A temporary folder holding `sample::demo()` (micro groups) and `pipeline_files()`.
pub fn demo_and_pipeline_dir() -> tempfile::TempDir {
    let dir = demo_dir();
    write_all(dir.path(), &pipeline_files());
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

/// A temporary folder holding `sample::ab_demo()`: two Pillow variants in the same rounds.
pub fn ab_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write_all(dir.path(), &sample::ab_demo());
    dir
}
