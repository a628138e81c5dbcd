//! Atomic file and folder writes: write a sibling temp file, flush it to disk, rename it over the
//! target. Parent folders are (re)created first, so a folder deleted mid-run is rebuilt on the
//! next write. A failed write removes its temp file and leaves the previous file as it was. The
//! one home of atomic writes (results, reports, cell logs, tarballs) and of folders built in a
//! temp sibling then renamed into place (`build_dir`: caches of environments, worker sources,
//! datasets, clips); tests simulate a full disk with
//! `AUGBENCH_TEST_FAULTS=diskfull:<file name>[+N]` (writes after the first N fail).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// Test-only faults, comma-separated: `diskfull:<file>[+N]` here; the native worker reads the
/// same variable for its fault transforms (`augbench-native`).
pub const TEST_FAULTS_ENV: &str = "AUGBENCH_TEST_FAULTS";

/// Writes `bytes` to `path` atomically (see the module doc); the one byte-slice entry point.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    write_streamed(path, |w| w.write_all(bytes)).map_err(|e| {
        let (action, source) = match e {
            AtomicWriteError::Body(source) => ("write", source),
            AtomicWriteError::Io { action, source, .. } => (action, source),
        };
        anyhow::Error::new(source).context(failed_write_message(path, action))
    })
}

/// Why [`write_streamed`] failed: the caller's `body`, or the file system (`action` on `path`).
/// Either way the previous file, if any, is unchanged and no temp file is left behind.
#[derive(Debug)]
pub enum AtomicWriteError<E> {
    Body(E),
    Io {
        path: PathBuf,
        action: &'static str,
        source: std::io::Error,
    },
}

impl<E: std::fmt::Display> std::fmt::Display for AtomicWriteError<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AtomicWriteError::Body(e) => write!(f, "{e}"),
            AtomicWriteError::Io { path, action, .. } => {
                write!(f, "{}: cannot {action}", path.display())
            }
        }
    }
}

impl<E: std::error::Error + 'static> std::error::Error for AtomicWriteError<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            AtomicWriteError::Body(e) => e.source(),
            AtomicWriteError::Io { source, .. } => Some(source),
        }
    }
}

/// Writes `path` atomically like [`write_atomic`], the content produced by `body` into a buffered
/// writer on the temp file (a streaming encoder such as Parquet's, or JSON Lines row by row). A
/// `body` error aborts the write as a full disk does.
pub fn write_streamed<E>(
    path: &Path,
    body: impl FnOnce(&mut BufWriter<File>) -> Result<(), E>,
) -> Result<(), AtomicWriteError<E>> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| io_error(dir, "create folder", e))?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(temp_name(&name));
    let moved = write_file(&tmp, path, &name, body).and_then(|()| {
        std::fs::rename(&tmp, path).map_err(|e| io_error(path, "rename the temp file onto it", e))
    });
    if moved.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    moved
}

/// [`write_streamed`] for a `body` that fails with an [`anyhow::Error`] and returns a value (a
/// tarball's byte count): a file-system failure reads as [`write_atomic`]'s does.
pub fn write_streamed_with<T>(
    path: &Path,
    body: impl FnOnce(&mut BufWriter<File>) -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    let mut value = None;
    write_streamed(path, |w| body(w).map(|v| value = Some(v))).map_err(|e| match e {
        AtomicWriteError::Body(e) => e,
        AtomicWriteError::Io { action, source, .. } => {
            anyhow::Error::new(source).context(failed_write_message(path, action))
        }
    })?;
    value.ok_or_else(|| anyhow::anyhow!("{}: the writer returned nothing", path.display()))
}

/// What [`build_dir`] placed at its target.
#[derive(Debug, PartialEq, Eq)]
pub enum Placed<T> {
    /// This call's folder, and what its `build` returned.
    Built(T),
    /// Another process placed a finished folder first; this call's was dropped.
    Theirs,
}

/// Builds the folder `target` atomically: `build` creates and fills a fresh hidden sibling (the
/// path it is given, which does not exist yet), which is then renamed onto `target`. A `build`
/// error removes the sibling and is returned. When the rename fails because a folder that `done`
/// accepts appeared at `target` meanwhile (another process built the same thing), this call's
/// folder is dropped and theirs kept: losing that race is fine. The caller removes a stale
/// `target` before calling.
pub fn build_dir<T>(
    target: &Path,
    build: impl FnOnce(&Path) -> anyhow::Result<T>,
    done: impl Fn(&Path) -> bool,
) -> anyhow::Result<Placed<T>> {
    let tmp = dir_sibling(target)?;
    let built = build(&tmp);
    let moved = built.and_then(|v| match std::fs::rename(&tmp, target) {
        Ok(()) => Ok(Placed::Built(v)),
        Err(_) if done(target) => Ok(Placed::Theirs),
        Err(e) => Err(move_error(e, &tmp, target)),
    });
    if !matches!(moved, Ok(Placed::Built(_))) {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    moved
}

/// `build_dir` for a folder no other process builds (a published folder): there is no race to
/// lose, so a folder that appeared at `target` meanwhile is an error like any failed move.
pub fn build_own_dir<T>(
    target: &Path,
    build: impl FnOnce(&Path) -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    let tmp = dir_sibling(target)?;
    let moved = build(&tmp).and_then(|v| {
        std::fs::rename(&tmp, target)
            .map(|()| v)
            .map_err(|e| move_error(e, &tmp, target))
    });
    if moved.is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    moved
}

fn move_error(e: std::io::Error, tmp: &Path, target: &Path) -> anyhow::Error {
    anyhow::Error::new(e).context(format!(
        "cannot move {} into {}",
        tmp.display(),
        target.display()
    ))
}

/// A fresh hidden sibling path for building `target` (its parent created, nothing at the path).
fn dir_sibling(target: &Path) -> anyhow::Result<PathBuf> {
    let parent = target
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(|e| {
        anyhow::Error::new(e).context(format!("cannot create {}", parent.display()))
    })?;
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = parent.join(temp_name(&name));
    let _ = std::fs::remove_dir_all(&tmp);
    Ok(tmp)
}

/// The context of a failed byte write: it names the file, the step, and says the old one is intact.
fn failed_write_message(path: &Path, action: &str) -> String {
    let step = match action {
        "write" => String::new(),
        _ => format!(": cannot {action}"),
    };
    format!(
        "cannot write {}{step} (the previous version, if any, is unchanged)",
        path.display()
    )
}

fn io_error<E>(path: &Path, action: &'static str, source: std::io::Error) -> AtomicWriteError<E> {
    AtomicWriteError::Io {
        path: path.to_path_buf(),
        action,
        source,
    }
}

/// A hidden sibling name unique within this process (threads may write the same file at once).
fn temp_name(name: &str) -> String {
    format!(".{name}.{}", temp_suffix())
}

/// `tmp-<pid>-<n>`, unique to each call within this process: the process id alone is shared by
/// its threads (tests build one environment or dataset from several at once), and one thread's
/// fresh start would wipe another's work in progress.
/// Every file below `dir` (a missing or unreadable folder holds none), sorted.
pub fn files_under(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

pub fn temp_suffix() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!("tmp-{}-{n}", std::process::id())
}

/// Creates `tmp`, fills it through `body`, gives it `target`'s permissions and flushes it to disk.
fn write_file<E>(
    tmp: &Path,
    target: &Path,
    name: &str,
    body: impl FnOnce(&mut BufWriter<File>) -> Result<(), E>,
) -> Result<(), AtomicWriteError<E>> {
    let ioe = |e| io_error(target, "write", e);
    let file = File::create(tmp).map_err(ioe)?;
    let mut w = BufWriter::with_capacity(1 << 20, file);
    body(&mut w).map_err(AtomicWriteError::Body)?;
    if disk_full_now(name) {
        return Err(ioe(std::io::Error::new(
            std::io::ErrorKind::StorageFull,
            "No space left on device (simulated by AUGBENCH_TEST_FAULTS)",
        )));
    }
    let file = w.into_inner().map_err(|e| ioe(e.into_error()))?;
    keep_permissions(&file, target).map_err(ioe)?;
    file.sync_all().map_err(ioe)
}

/// Gives the temp file the permissions of the file it replaces, if there is one.
fn keep_permissions(tmp: &File, target: &Path) -> std::io::Result<()> {
    match std::fs::metadata(target) {
        Ok(meta) if meta.is_file() => tmp.set_permissions(meta.permissions()),
        _ => Ok(()),
    }
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
    fn every_temp_suffix_is_new() {
        let (a, b) = (temp_suffix(), temp_suffix());
        assert_ne!(a, b);
        assert!(
            a.starts_with(&format!("tmp-{}-", std::process::id())),
            "{a}"
        );
    }

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
    fn a_writer_body_streams_into_place_and_its_error_keeps_the_old_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("cells.jsonl");
        write_streamed(&p, |w| w.write_all(b"one\n")).unwrap();
        let e = write_streamed(&p, |w| {
            w.write_all(b"half")?;
            Err(std::io::Error::other("encoder failed"))
        })
        .unwrap_err();
        assert!(matches!(e, AtomicWriteError::Body(_)), "{e}");
        assert_eq!(std::fs::read(&p).unwrap(), b"one\n");
        let leftovers = std::fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(leftovers, 1, "no temp files left behind");
    }

    #[cfg(unix)]
    #[test]
    fn a_rewrite_keeps_the_permissions_of_the_file_it_replaces() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.txt");
        write_atomic(&p, b"one").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_atomic(&p, b"two").unwrap();
        let mode = std::fs::metadata(&p).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o640);
    }

    /// A folder with a done mark, as [`build_dir`]'s builds below leave it.
    fn fill(dir: &Path, who: &str) -> anyhow::Result<()> {
        std::fs::create_dir_all(dir)?;
        std::fs::write(dir.join("done"), who)?;
        Ok(())
    }

    fn is_done(dir: &Path) -> bool {
        dir.join("done").is_file()
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut n: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        n.sort();
        n
    }

    #[test]
    fn a_built_folder_is_renamed_into_place_with_nothing_left_beside_it() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("cache/env");
        let placed = build_dir(&target, |tmp| fill(tmp, "mine").map(|()| 7), is_done).unwrap();
        assert_eq!(placed, Placed::Built(7));
        assert_eq!(
            std::fs::read_to_string(target.join("done")).unwrap(),
            "mine"
        );
        assert_eq!(names(&dir.path().join("cache")), ["env"]);
    }

    #[test]
    fn losing_the_race_to_a_finished_folder_keeps_theirs_and_drops_ours() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("env");
        let placed = build_dir(
            &target,
            |tmp| {
                fill(tmp, "mine")?;
                fill(&target, "theirs") // another process finishes first
            },
            is_done,
        )
        .unwrap();
        assert_eq!(placed, Placed::Theirs);
        assert_eq!(
            std::fs::read_to_string(target.join("done")).unwrap(),
            "theirs"
        );
        assert_eq!(names(dir.path()), ["env"], "our temp folder is gone");
    }

    #[test]
    fn an_unfinished_folder_in_the_way_is_an_error_and_ours_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("env");
        let e = build_dir(
            &target,
            |tmp| {
                fill(tmp, "mine")?;
                std::fs::create_dir_all(target.join("half"))?;
                Ok(())
            },
            is_done,
        )
        .unwrap_err();
        assert!(format!("{e:#}").contains("cannot move"), "{e:#}");
        assert_eq!(names(dir.path()), ["env"]);
        assert!(!is_done(&target));
    }

    #[test]
    fn a_failed_build_leaves_no_folder_behind() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("env");
        let e = build_dir(
            &target,
            |tmp| -> anyhow::Result<()> {
                fill(tmp, "half")?;
                anyhow::bail!("installer failed")
            },
            is_done,
        )
        .unwrap_err();
        assert_eq!(e.to_string(), "installer failed");
        assert!(names(dir.path()).is_empty(), "{:?}", names(dir.path()));
    }

    #[test]
    fn an_own_folder_is_placed_or_its_move_fails_even_when_a_finished_one_appeared() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("published");
        let built = build_own_dir(&target, |tmp| fill(tmp, "mine").map(|()| 3)).unwrap();
        assert_eq!(built, 3);
        assert_eq!(names(dir.path()), ["published"]);
        let other = dir.path().join("other");
        let e = build_own_dir(&other, |tmp| {
            fill(tmp, "mine")?;
            fill(&other, "theirs") // what build_dir would keep as theirs
        })
        .unwrap_err();
        assert!(format!("{e:#}").contains("cannot move"), "{e:#}");
        assert_eq!(names(dir.path()), ["other", "published"], "ours is removed");
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
