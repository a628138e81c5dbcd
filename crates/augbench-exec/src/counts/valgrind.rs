//! Valgrind for instruction counts: finding it (a missing or too old one is a usage error naming
//! the package), wrapping a worker's command in callgrind with the count markers, and reading
//! the dumps each counted loop leaves (`cg.<pid>.<part>`, the `summary:` line).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::Context;
use augbench_core::{UsageError, policy};

use augbench_host::child::CommandLine;

/// The install hint every Valgrind error carries.
const INSTALL: &str = "install it from the system package manager: `sudo apt-get install valgrind` (Debian, Ubuntu), `sudo dnf install valgrind` (Fedora), or use `measure: time`";

/// `valgrind-3.19.0`, checked against `policy::VALGRIND_MIN_VERSION`.
pub fn version() -> Result<String, UsageError> {
    let out = std::process::Command::new("valgrind")
        .arg("--version")
        .output()
        .map_err(|e| {
            UsageError::new(
                format!("`measure: instructions` needs Valgrind, which could not be started ({e})"),
                INSTALL,
            )
        })?;
    let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
    check_version(&text)?;
    Ok(text)
}

/// Whether `valgrind --version`'s answer is new enough (pure).
pub fn check_version(text: &str) -> Result<(), UsageError> {
    let (want_major, want_minor) = policy::VALGRIND_MIN_VERSION;
    let parsed = text.strip_prefix("valgrind-").and_then(|v| {
        let mut parts = v.split(['.', '-']);
        Some((
            parts.next()?.parse::<u32>().ok()?,
            parts.next()?.parse::<u32>().ok()?,
        ))
    });
    match parsed {
        Some(v) if v >= (want_major, want_minor) => Ok(()),
        _ => Err(UsageError::new(
            format!(
                "`measure: instructions` needs Valgrind {want_major}.{want_minor} or newer; `valgrind --version` said `{text}`"
            ),
            INSTALL,
        )),
    }
}

/// `cmd` under callgrind, its dumps written into `dumps` (one per counted loop).
pub fn wrap(cmd: &CommandLine, dumps: &Path) -> CommandLine {
    // Not canonicalized: a venv's `python` finds its packages through the path it is run by.
    let program = cmd.program.clone();
    let mut args = vec![
        "--tool=callgrind".to_string(),
        // Start-up (imports, media load) runs uninstrumented, several times faster; the
        // coordinator turns instrumentation on once the media are loaded (`instrument`).
        "--instr-atstart=no".to_string(),
        "--zero-before=getpgrp".to_string(),
        "--dump-before=getppid".to_string(),
        "--dump-instr=no".to_string(),
        "--quiet".to_string(),
        format!("--callgrind-out-file={}/cg.%p", dumps.display()),
        program.display().to_string(),
    ];
    args.extend(cmd.args.iter().cloned());
    CommandLine {
        program: PathBuf::from("valgrind"),
        args,
        env: cmd.env.clone(),
        label: format!("{} (under valgrind)", cmd.label),
    }
}

/// Turns callgrind's instrumentation on in the worker `pid` (`callgrind_control -i on`, through
/// Valgrind's gdbserver while the worker waits for its next request). Counts between the markers
/// are exact either way; before this, the worker ran uninstrumented and fast.
pub fn instrument(pid: u32) -> anyhow::Result<()> {
    let out = std::process::Command::new("callgrind_control")
        .args(["--instr=on", &pid.to_string()])
        .output()
        .context("starting callgrind_control (it comes with Valgrind)")?;
    let said = String::from_utf8_lossy(&out.stdout);
    if out.status.success() && said.contains("OK") {
        return Ok(());
    }
    anyhow::bail!(
        "callgrind_control could not turn instrumentation on in worker {pid}: {}{}",
        said.trim(),
        String::from_utf8_lossy(&out.stderr).trim()
    )
}

/// The dump files in `dumps` (`cg.<pid>.<part>`), ordered by process and part.
pub fn parts(dumps: &Path) -> anyhow::Result<BTreeSet<(u64, u64, PathBuf)>> {
    let mut out = BTreeSet::new();
    let entries = std::fs::read_dir(dumps)
        .with_context(|| format!("reading callgrind's dumps in {}", dumps.display()))?;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        let mut fields = name.split('.');
        let (Some("cg"), Some(pid), Some(part), None) =
            (fields.next(), fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        if let (Ok(pid), Ok(part)) = (pid.parse(), part.parse()) {
            out.insert((pid, part, entry.path()));
        }
    }
    Ok(out)
}

/// The counts of the dumps that appeared since `before`, in order; each file is removed once read.
pub fn new_counts(
    dumps: &Path,
    before: &BTreeSet<(u64, u64, PathBuf)>,
) -> anyhow::Result<Vec<u64>> {
    let mut counts = Vec::new();
    for (_, _, path) in parts(dumps)?.difference(before) {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading callgrind's dump {}", path.display()))?;
        let count = summary(&text).with_context(|| {
            format!("callgrind's dump {} has no `summary:` line", path.display())
        })?;
        counts.push(count);
        let _ = std::fs::remove_file(path);
    }
    Ok(counts)
}

/// The instructions of one dump: its `summary:` line (pure).
pub fn summary(dump: &str) -> Option<u64> {
    dump.lines()
        .find_map(|l| l.strip_prefix("summary:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_line_is_the_count() {
        let dump = "version: 1\ncreator: callgrind-3.19.0\npart: 2\ndesc: Trigger: --dump-before=getppid\nevents: Ir\nsummary: 492420833\ntotals: 492420843\n";
        assert_eq!(summary(dump), Some(492_420_833));
        assert_eq!(summary("events: Ir\n"), None);
    }

    #[test]
    fn old_or_odd_versions_are_refused_with_the_package_named() {
        assert!(check_version("valgrind-3.19.0").is_ok());
        assert!(check_version("valgrind-3.22.0.GIT").is_ok());
        let e = check_version("valgrind-3.10.1").unwrap_err();
        assert!(e.message.contains("3.15 or newer"), "{e}");
        assert!(e.hint.contains("apt-get install valgrind"), "{e}");
        assert!(check_version("").is_err());
    }

    #[test]
    fn the_wrapped_command_runs_the_worker_under_callgrind_with_both_markers() {
        let cmd = CommandLine {
            program: PathBuf::from("/no/such/python"),
            args: vec!["-m".into(), "augbench_worker".into()],
            env: augbench_protocol::threads::worker_env(
                augbench_core::config::ThreadPolicy::Single,
            ),
            label: "pillow worker".into(),
        };
        let w = wrap(&cmd, Path::new("/tmp/d"));
        assert_eq!(w.program, PathBuf::from("valgrind"));
        assert!(w.args.contains(&"--zero-before=getpgrp".to_string()));
        assert!(w.args.contains(&"--instr-atstart=no".to_string()));
        assert!(w.args.contains(&"--dump-before=getppid".to_string()));
        assert!(
            w.args
                .contains(&"--callgrind-out-file=/tmp/d/cg.%p".to_string())
        );
        assert_eq!(
            &w.args[w.args.len() - 3..],
            ["/no/such/python", "-m", "augbench_worker"]
        );
        assert_eq!(w.env, cmd.env);
    }

    #[test]
    fn dumps_are_read_in_order_once_and_the_final_dump_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, n: u64| {
            std::fs::write(dir.path().join(name), format!("events: Ir\nsummary: {n}\n")).unwrap()
        };
        write("cg.7.1", 10);
        let before = parts(dir.path()).unwrap();
        write("cg.7.2", 20);
        write("cg.7.10", 30);
        write("cg.7", 99);
        assert_eq!(new_counts(dir.path(), &before).unwrap(), vec![20, 30]);
        assert_eq!(new_counts(dir.path(), &before).unwrap(), Vec::<u64>::new());
    }
}
