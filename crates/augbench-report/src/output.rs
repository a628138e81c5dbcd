//! Output plumbing shared by every report: atomic file writes (temp file in the same folder,
//! then rename, so a reader never sees half a file) and the usage-error constructor.

use std::io::Write;
use std::path::Path;

use anyhow::Context;
use augbench_core::UsageError;

/// Writes `bytes` to `path` atomically, creating the parent folder if needed.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir).with_context(|| format!("creating folder {}", dir.display()))?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".augbench-tmp-")
        .tempfile_in(dir)
        .with_context(|| format!("creating a temporary file in {}", dir.display()))?;
    tmp.write_all(bytes)
        .and_then(|()| copy_permissions(tmp.as_file(), path))
        .and_then(|()| tmp.as_file().sync_all())
        .with_context(|| format!("writing {}", path.display()))?;
    tmp.persist(path)
        .map_err(|e| e.error)
        .with_context(|| format!("renaming the temporary file onto {}", path.display()))?;
    Ok(())
}

/// Gives the temporary file the permissions of the file it replaces, else `rw-r--r--`
/// (temporary files start owner-only).
fn copy_permissions(tmp: &std::fs::File, path: &Path) -> std::io::Result<()> {
    match std::fs::metadata(path) {
        Ok(meta) => tmp.set_permissions(meta.permissions()),
        #[cfg(unix)]
        Err(_) => {
            use std::os::unix::fs::PermissionsExt;
            tmp.set_permissions(std::fs::Permissions::from_mode(0o644))
        }
        #[cfg(not(unix))]
        Err(_) => Ok(()),
    }
}

/// A mistake the user can fix (exit code 2), as an `anyhow::Error`.
pub fn usage(message: impl Into<String>, hint: impl Into<String>) -> anyhow::Error {
    UsageError::new(message, hint).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_and_replaces_without_leaving_temp_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("out.txt");
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "two");
        let names: Vec<_> = std::fs::read_dir(path.parent().unwrap()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }
}
