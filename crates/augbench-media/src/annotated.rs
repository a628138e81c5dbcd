//! The annotated synthetic dataset on disk, generated only when targets are measured: the
//! synthetic images with shapes drawn in (`synth_targets`) as `img_NNNNNN.jpg`, and their COCO
//! instances file `annotations.json`, which `coco` reads like any user's. Cached under its own
//! key (the plain dataset's inputs plus "annotated" and `ANNOTATED_VERSION`), built in a temp
//! folder and renamed into place like the plain one (`dataset`), which it never changes.

use std::path::{Path, PathBuf};

use anyhow::Context;
use augbench_core::Media;
use augbench_host::cache;
use augbench_host::fsutil::{build_dir, write_atomic};
use indicatif::MultiProgress;
use sha2::{Digest, Sha256};

use crate::dataset::{self, DatasetDir};
use crate::{synth, synth_targets};

/// The COCO instances file inside an annotated dataset folder.
pub const ANNOTATIONS_FILE: &str = "annotations.json";

/// An annotated dataset: its images and its COCO instances file.
#[derive(Debug, Clone)]
pub struct AnnotatedDataset {
    pub dir: DatasetDir,
    pub annotations: PathBuf,
}

/// The cache key: the plain dataset's key, "annotated" and the shapes' version.
pub fn annotated_key(seed: u64, count: u64) -> String {
    let text = format!(
        "annotated;v{};{}",
        synth_targets::ANNOTATED_VERSION,
        dataset::synthetic_key(seed, count, Media::Image)
    );
    let digest = Sha256::digest(text.as_bytes());
    digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// The annotated synthetic dataset for (seed, count) in the cache, generated on first use.
pub fn annotated_synthetic_dataset(
    seed: u64,
    count: u64,
    progress: Option<&MultiProgress>,
) -> anyhow::Result<AnnotatedDataset> {
    annotated_synthetic_dataset_in(&cache::datasets_dir(), seed, count, progress)
}

/// [`annotated_synthetic_dataset`] below an explicit datasets folder.
pub fn annotated_synthetic_dataset_in(
    parent: &Path,
    seed: u64,
    count: u64,
    progress: Option<&MultiProgress>,
) -> anyhow::Result<AnnotatedDataset> {
    let root = parent.join(format!(
        "synthetic-annotated-{}",
        annotated_key(seed, count)
    ));
    if root.is_dir() {
        if let Some(found) = complete(&root, count)? {
            return Ok(found);
        }
        std::fs::remove_dir_all(&root)
            .with_context(|| format!("removing incomplete dataset {}", root.display()))?;
    }
    let make = |tmp: &Path| generate(tmp, seed, count, progress);
    // Another augbench that generated the same key first wrote the same bytes: theirs serves.
    build_dir(&root, make, |p| p.join(ANNOTATIONS_FILE).is_file())?;
    open(&root)
}

/// The dataset at `root` when it has `count` images and its annotations file.
fn complete(root: &Path, count: u64) -> anyhow::Result<Option<AnnotatedDataset>> {
    if !root.join(ANNOTATIONS_FILE).is_file() {
        return Ok(None);
    }
    let found = open(root)?;
    Ok((found.dir.items.len() as u64 == count).then_some(found))
}

fn open(root: &Path) -> anyhow::Result<AnnotatedDataset> {
    Ok(AnnotatedDataset {
        dir: dataset::existing(root, Media::Image)?,
        annotations: root.join(ANNOTATIONS_FILE),
    })
}

/// Writes the images (in parallel) and then the annotations into the new folder `dir`.
fn generate(
    dir: &Path,
    seed: u64,
    count: u64,
    progress: Option<&MultiProgress>,
) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let message = format!("Generate annotated synthetic images ({count})");
    let bar = dataset::progress_bar(progress, message, count);
    let written = synth::write_all(dir, count, &bar, synth::image_name, |i| {
        synth::encode_jpeg(&synth_targets::annotated_image(seed, i))
    });
    bar.finish_and_clear();
    written?;
    write_atomic(
        &dir.join(ANNOTATIONS_FILE),
        &synth_targets::coco_json(seed, count)?,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_differs_from_the_plain_one_and_by_input() {
        let k = annotated_key(1, 10);
        assert_eq!(k.len(), 16);
        assert_eq!(k, annotated_key(1, 10));
        assert_ne!(k, dataset::synthetic_key(1, 10, Media::Image));
        assert_ne!(k, annotated_key(2, 10));
        assert_ne!(k, annotated_key(1, 11));
    }
}
