//! Where a run's files live between the machine that submits it and its tasks: a GCS bucket
//! through `gcloud storage` (Cloud Batch) or a folder on the cluster's shared filesystem (Slurm).
//! One set of operations, so the upload, fetch and log tails are written once for both engines.

use std::path::Path;

use anyhow::Context;
use augbench_host::fsutil::write_atomic;

use crate::gcloud;

/// A run's file store; paths in it are strings (`gs://…` or absolute paths).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Store {
    Gcs,
    Shared,
}

impl Store {
    /// Copies one local file to `remote`.
    pub fn put(self, local: &Path, remote: &str) -> anyhow::Result<()> {
        match self {
            Store::Gcs => Ok(gcloud::cp_path(local, remote)?),
            Store::Shared => copy_file(local, Path::new(remote)),
        }
    }

    /// Copies a local folder's files under `remote` (existing files replaced).
    pub fn put_dir(self, local: &Path, remote: &str) -> anyhow::Result<()> {
        match self {
            Store::Gcs => Ok(gcloud::rsync(&local.to_string_lossy(), remote)?),
            Store::Shared => copy_tree(local, Path::new(remote)),
        }
    }

    /// Copies one file of the store to a local path.
    pub fn get(self, remote: &str, local: &Path) -> anyhow::Result<()> {
        match self {
            Store::Gcs => Ok(gcloud::cp(remote, &local.to_string_lossy())?),
            Store::Shared => copy_file(Path::new(remote), local),
        }
    }

    /// Mirrors a folder of the store into a local folder (a missing store folder mirrors nothing).
    pub fn mirror(self, remote: &str, local: &Path) -> anyhow::Result<()> {
        match self {
            Store::Gcs => Ok(gcloud::rsync(remote, &local.to_string_lossy())?),
            Store::Shared if Path::new(remote).is_dir() => copy_tree(Path::new(remote), local),
            Store::Shared => Ok(()),
        }
    }

    pub fn exists(self, remote: &str) -> bool {
        match self {
            Store::Gcs => gcloud::exists(remote),
            Store::Shared => Path::new(remote).exists(),
        }
    }

    /// A text file of the store.
    pub fn read(self, remote: &str) -> anyhow::Result<String> {
        match self {
            Store::Gcs => Ok(gcloud::run(&["storage", "cat", remote])?),
            Store::Shared => {
                std::fs::read_to_string(remote).with_context(|| format!("reading {remote}"))
            }
        }
    }
}

fn copy_file(src: &Path, dst: &Path) -> anyhow::Result<()> {
    let bytes = std::fs::read(src).with_context(|| format!("reading {}", src.display()))?;
    write_with_mode(src, dst, &bytes)
}

/// Writes `bytes` (read from `src`) to `dst` atomically, with `src`'s mode.
fn write_with_mode(src: &Path, dst: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    write_atomic(dst, bytes)?;
    let mode = std::fs::metadata(src)?.permissions();
    std::fs::set_permissions(dst, mode)
        .with_context(|| format!("setting the mode of {}", dst.display()))
}

/// Every file under `src` to the same relative path under `dst`; unchanged files are left.
fn copy_tree(src: &Path, dst: &Path) -> anyhow::Result<()> {
    let entries = std::fs::read_dir(src).with_context(|| format!("reading {}", src.display()))?;
    for entry in entries {
        let entry = entry.with_context(|| format!("reading {}", src.display()))?;
        let (from, to) = (entry.path(), dst.join(entry.file_name()));
        if from.is_dir() {
            copy_tree(&from, &to)?;
            continue;
        }
        let bytes = std::fs::read(&from).with_context(|| format!("reading {}", from.display()))?;
        if std::fs::read(&to).ok().as_deref() != Some(bytes.as_slice()) {
            write_with_mode(&from, &to, &bytes)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shared_folder_mirrors_both_ways() {
        let t = tempfile::tempdir().unwrap();
        let src = t.path().join("src");
        std::fs::create_dir_all(src.join("a/b")).unwrap();
        std::fs::write(src.join("a/b/x.txt"), "x").unwrap();
        std::fs::write(src.join("top.txt"), "t").unwrap();
        let remote = t.path().join("remote");
        Store::Shared
            .put_dir(&src, &remote.to_string_lossy())
            .unwrap();
        assert_eq!(
            Store::Shared
                .read(&remote.join("a/b/x.txt").to_string_lossy())
                .unwrap(),
            "x"
        );
        let back = t.path().join("back");
        Store::Shared
            .mirror(&remote.to_string_lossy(), &back)
            .unwrap();
        assert_eq!(std::fs::read_to_string(back.join("top.txt")).unwrap(), "t");
        Store::Shared
            .mirror(&t.path().join("none").to_string_lossy(), &back)
            .unwrap();
        assert!(!Store::Shared.exists(&t.path().join("none").to_string_lossy()));
    }
}
