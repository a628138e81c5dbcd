//! Atomic file writes: write a sibling temp file, flush it to disk, rename it over the target.
//! Parent folders are (re)created first, so a folder deleted mid-run is rebuilt on the next write.
//! A failed write removes its temp file and leaves the previous file as it was. Tests simulate a
//! full disk with `AUGBENCH_TEST_FAULTS=diskfull:<file name>[+N]` (writes after the first N fail).

use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};

use anyhow::Context;

/// Test-only faults, comma-separated: `diskfull:<file>[+N]` here; the native worker reads the
/// same variable for its fault transforms (`augbench-native`).
pub const TEST_FAULTS_ENV: &str = "AUGBENCH_TEST_FAULTS";

pub fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot write {}: cannot create its folder", path.display()))?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let written = write_file(&tmp, bytes, &name);
    let moved = written.and_then(|()| std::fs::rename(&tmp, path));
    if let Err(e) = moved {
        let _ = std::fs::remove_file(&tmp);
        return Err(e).with_context(|| {
            format!(
                "cannot write {} (the previous version, if any, is unchanged)",
                path.display()
            )
        });
    }
    Ok(())
}

/// Creates `tmp` with `bytes` and flushes it to disk.
fn write_file(tmp: &Path, bytes: &[u8], name: &str) -> std::io::Result<()> {
    let mut f = std::fs::File::create(tmp)?;
    if disk_full_now(name) {
        f.write_all(&bytes[..bytes.len() / 2])?;
        return Err(std::io::Error::new(
            std::io::ErrorKind::StorageFull,
            "No space left on device (simulated by AUGBENCH_TEST_FAULTS)",
        ));
    }
    f.write_all(bytes)?;
    f.sync_all()
}

/// Writes to `name` so far, for the `diskfull:<name>+N` test fault.
static WRITES: AtomicU32 = AtomicU32::new(0);

/// Whether the test fault `diskfull:<name>[+N]` makes this write to `name` fail.
fn disk_full_now(name: &str) -> bool {
    let Ok(spec) = std::env::var(TEST_FAULTS_ENV) else {
        return false;
    };
    let Some(after) = disk_full_after(&spec, name) else {
        return false;
    };
    WRITES.fetch_add(1, Ordering::SeqCst) >= after
}

/// `N` of a `diskfull:<name>[+N]` entry for `name` in a comma-separated fault list.
fn disk_full_after(spec: &str, name: &str) -> Option<u32> {
    spec.split(',').find_map(|entry| {
        let target = entry.strip_prefix("diskfull:")?;
        let (file, after) = match target.split_once('+') {
            Some((f, n)) => (f, n.parse().ok()?),
            None => (target, 0),
        };
        (file == name).then_some(after)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_and_recreates_missing_parents() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a/b/c.json");
        write_atomic(&p, b"1").unwrap();
        std::fs::remove_dir_all(dir.path().join("a")).unwrap();
        write_atomic(&p, b"2").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"2");
        let leftovers = std::fs::read_dir(p.parent().unwrap()).unwrap().count();
        assert_eq!(leftovers, 1, "no temp files left behind");
    }

    #[test]
    fn a_failed_write_keeps_the_old_file_and_removes_its_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.json");
        write_atomic(&p, b"old").unwrap();
        // Renaming over a folder fails after the temp file was written in full.
        let blocked = dir.path().join("blocked");
        std::fs::create_dir_all(blocked.join("inside")).unwrap();
        let e = write_atomic(&blocked, b"new").unwrap_err();
        assert!(format!("{e:#}").contains("cannot write"), "{e:#}");
        assert!(format!("{e:#}").contains("blocked"), "{e:#}");
        assert_eq!(std::fs::read(&p).unwrap(), b"old");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 2, "only r.json and the folder: {names:?}");
    }

    #[test]
    fn disk_full_fault_entries_parse() {
        assert_eq!(disk_full_after("diskfull:r.json", "r.json"), Some(0));
        assert_eq!(
            disk_full_after("hang:Rotate,diskfull:r.json+2", "r.json"),
            Some(2)
        );
        assert_eq!(disk_full_after("diskfull:r.json", "other.json"), None);
        assert_eq!(disk_full_after("diskfull:r.json+x", "r.json"), None);
    }
}
