//! One run per output folder: `augbench run` holds `<output>/.augbench-run.lock` (pid, start time,
//! host), created atomically (`create_new`, i.e. O_EXCL). A second run on the folder is refused
//! while the holder lives; a lock whose process is gone from this host is taken over with a note.
//! The lock is released when its guard drops (normal end, error and Ctrl-C paths alike).

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use augbench_core::{UsageError, naming};
use serde::{Deserialize, Serialize};

/// Who holds an output folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holder {
    pub pid: u32,
    /// RFC 3339, UTC.
    pub started: String,
    pub host: String,
}

impl Holder {
    fn me() -> Holder {
        Holder {
            pid: std::process::id(),
            started: crate::facts::now_utc(),
            host: this_host(),
        }
    }
}

/// The held lock; dropping it removes the file (if it is still ours).
#[derive(Debug)]
pub struct RunLock {
    path: PathBuf,
    holder: Holder,
    /// Set when a stale lock was taken over: the line saying so.
    pub note: Option<String>,
}

impl RunLock {
    /// Takes the lock of `out` (created if missing), or refuses with a `UsageError` naming the
    /// live holder.
    pub fn acquire(out: &Path) -> anyhow::Result<RunLock> {
        std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
        let path = naming::run_lock(out);
        let me = Holder::me();
        let mut note = None;
        // Twice at most: a stale lock is removed once, then the folder is free or taken by a
        // run that won the race (refused like any live holder).
        for _ in 0..2 {
            match create(&path, &me) {
                Ok(()) => {
                    return Ok(RunLock {
                        path,
                        holder: me,
                        note,
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(e).with_context(|| format!("creating {}", path.display())),
            }
            let held = read_holder(&path);
            match held {
                Some(h) if h.host != me.host || process_alive(h.pid) => {
                    return Err(refusal(&path, &h, &me.host).into());
                }
                stale => {
                    remove_if_unchanged(&path, stale.as_ref())?;
                    note = Some(takeover_note(&path, stale.as_ref()));
                }
            }
        }
        let h = read_holder(&path).unwrap_or_else(|| me.clone());
        Err(refusal(&path, &h, &me.host).into())
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for RunLock {
    fn drop(&mut self) {
        // Only our own lock: a folder deleted mid-run, or a lock rewritten by hand, is left alone.
        if read_holder(&self.path).as_ref() == Some(&self.holder) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

fn takeover_note(path: &Path, stale: Option<&Holder>) -> String {
    match stale {
        Some(h) => format!(
            "note: took over the stale lock {}: its run (pid {} on {}, started {}) is no longer running",
            path.display(),
            h.pid,
            h.host,
            h.started
        ),
        None => format!("note: took over the unreadable lock {}", path.display()),
    }
}

fn create(path: &Path, me: &Holder) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    let text = serde_json::to_string(me).map_err(std::io::Error::other)?;
    f.write_all(text.as_bytes())?;
    f.sync_all()
}

/// The holder a lock file names; `None` when it cannot be read or parsed (taken as stale).
pub fn read_holder(path: &Path) -> Option<Holder> {
    parse_holder(&std::fs::read_to_string(path).ok()?)
}

/// Parses a lock file's text.
pub fn parse_holder(text: &str) -> Option<Holder> {
    serde_json::from_str(text).ok()
}

/// Removes a stale lock unless another run replaced it meanwhile.
fn remove_if_unchanged(path: &Path, seen: Option<&Holder>) -> anyhow::Result<()> {
    if read_holder(path).as_ref() != seen {
        return Ok(());
    }
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("removing the stale lock {}", path.display()))
        }
        _ => Ok(()),
    }
}

fn refusal(path: &Path, h: &Holder, my_host: &str) -> UsageError {
    let hint = if h.host == my_host {
        format!(
            "wait for it to finish, stop it, or choose another output folder (`output.output_dir`); if pid {} is not an augbench run, delete {}",
            h.pid,
            path.display()
        )
    } else {
        format!(
            "it runs on another host, so augbench cannot tell whether it is alive; if it is not, delete {}",
            path.display()
        )
    };
    UsageError::new(
        format!(
            "another augbench run is writing to {}: pid {} on {}, started {}",
            path.parent().unwrap_or(path).display(),
            h.pid,
            h.host,
            h.started
        ),
        hint,
    )
}

/// Whether a process with this pid exists on this host.
pub fn process_alive(pid: u32) -> bool {
    if cfg!(target_os = "linux") {
        return Path::new("/proc").join(pid.to_string()).exists() && !is_zombie(pid);
    }
    std::process::Command::new("kill")
        .args(["-0", &pid.to_string()])
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A zombie has exited; only its parent has not collected it yet.
fn is_zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, rest)| rest.trim_start().starts_with('Z'))
        })
        .unwrap_or(false)
}

/// This host's name as lock files record it.
pub fn this_host() -> String {
    sysinfo::System::host_name()
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "unknown host".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_on_the_same_folder_is_refused_and_released_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let lock = RunLock::acquire(dir.path()).unwrap();
        assert!(lock.note.is_none());
        let err = RunLock::acquire(dir.path()).unwrap_err();
        let usage = err.downcast_ref::<UsageError>().expect("a usage error");
        assert!(
            usage
                .message
                .contains(&format!("pid {}", std::process::id())),
            "{usage}"
        );
        drop(lock);
        assert!(!naming::run_lock(dir.path()).exists());
        RunLock::acquire(dir.path()).unwrap();
    }

    #[test]
    fn an_unreadable_lock_is_stale() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(naming::run_lock(dir.path()), "not json").unwrap();
        let lock = RunLock::acquire(dir.path()).unwrap();
        assert!(lock.note.as_deref().unwrap().contains("unreadable lock"));
        assert_eq!(read_holder(lock.path()).unwrap().pid, std::process::id());
    }

    #[test]
    fn holder_round_trips() {
        let h = Holder {
            pid: 7,
            started: "2025-01-01T00:00:00Z".into(),
            host: "box".into(),
        };
        assert_eq!(parse_holder(&serde_json::to_string(&h).unwrap()), Some(h));
        assert_eq!(parse_holder(""), None);
    }
}
