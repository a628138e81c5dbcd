//! The memory sampler on real process trees (python3 workloads): peaks of a forked tree, PSS
//! counting copy-on-write pages once, children that come and go, and another user's process,
//! which root reads and an unprivileged reader may not. Run as root (as CI does), the unprivileged
//! reader is a copy of this test binary started as `nobody` through `setpriv` (util-linux).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use augbench_host::memory_sampler::{Sampler, TreeMemory, Unreadable};

const MB: u64 = 1 << 20;

/// Starts `python3 -c script` (python3 must be on PATH); the test reads its first stdout line.
fn python(script: &str) -> std::io::Result<(Child, BufReader<std::process::ChildStdout>)> {
    let mut cmd = Command::new("python3");
    cmd.args(["-c", script]);
    spawn(cmd)
}

/// Starts `cmd` with its stdout piped to the test.
fn spawn(mut cmd: Command) -> std::io::Result<(Child, BufReader<std::process::ChildStdout>)> {
    let mut child = cmd.stdout(Stdio::piped()).spawn()?;
    let out = child.stdout.take().ok_or(std::io::ErrorKind::BrokenPipe)?;
    Ok((child, BufReader::new(out)))
}

/// The workload's first line, which says it is ready.
fn first_line(out: &mut BufReader<std::process::ChildStdout>) -> std::io::Result<String> {
    let mut line = String::new();
    out.read_line(&mut line)?;
    Ok(line.trim().to_string())
}

/// Parent writes 50 MB, forks a child that writes 30 MB more (the parent's 50 MB stay shared
/// with it, copy-on-write), and both sleep (the child until the parent is gone). The child reports through a pipe, so "ready" means
/// both allocations are resident.
const FORKED_TREE: &str = r#"
import os, sys, time
a = bytearray(b"\x5a") * (50 << 20)
r, w = os.pipe()
parent = os.getpid()
pid = os.fork()
if pid == 0:
    b = bytearray(b"\xa5") * (30 << 20)
    os.write(w, b"1")
    while os.getppid() == parent:  # ends with the parent, which the test kills
        time.sleep(0.05)
    os._exit(0)
os.read(r, 1)
print("ready", flush=True)
time.sleep(60)
"#;

#[test]
fn peaks_of_a_forked_tree_count_every_process_and_shared_pages_once_in_pss() {
    let (mut child, mut out) = python(FORKED_TREE).unwrap();
    let sampler = Sampler::start(child.id(), Duration::from_millis(20)).unwrap();
    assert_eq!(first_line(&mut out).unwrap(), "ready");
    // Long enough for 5 samples at 20 ms even on a loaded machine (tests run side by side).
    std::thread::sleep(Duration::from_millis(600));
    let now = TreeMemory::read(child.id()).unwrap();
    let peaks = sampler.stop();
    child.kill().unwrap();
    child.wait().unwrap();

    assert_eq!(peaks.unavailable, None, "{peaks:?}");
    assert!(peaks.samples >= 5, "{peaks:?}");
    assert!(peaks.max_processes >= 2, "{peaks:?}");
    assert_eq!(now.processes, 2, "{now:?}");
    // 50 MB in the parent + 30 MB in the child, at least.
    assert!(peaks.peak_rss_bytes >= 80 * MB, "{peaks:?}");
    assert!(peaks.peak_pss_bytes >= 80 * MB, "{peaks:?}");
    assert!(peaks.peak_pss_bytes <= peaks.peak_rss_bytes, "{peaks:?}");
    // RSS counts the parent's 50 MB twice (both processes map them), PSS once.
    assert!(
        now.rss_bytes - now.pss_bytes >= 45 * MB,
        "shared pages not counted once in PSS: {now:?}"
    );
}

/// Forks short-lived children without pause for 2.5 s: many of them exit between the sampler's
/// listing of the tree and its reading of their memory.
const CHURN: &str = r#"
import os, time
print("ready", flush=True)
end = time.monotonic() + 2.5
while time.monotonic() < end:
    pids = [os.fork() for _ in range(4)]
    for p in pids:
        if p == 0:
            os._exit(0)
    for p in pids:
        os.waitpid(p, 0)
"#;

#[test]
fn children_that_exit_while_sampled_are_skipped_not_unavailable() {
    let (mut child, mut out) = python(CHURN).unwrap();
    let sampler = Sampler::start(child.id(), Duration::from_millis(2)).unwrap();
    assert_eq!(first_line(&mut out).unwrap(), "ready");
    child.wait().unwrap();
    let peaks = sampler.stop();
    assert_eq!(peaks.unavailable, None, "{peaks:?}");
    // Readings went on through the churn. How many is the sampler's share cap's business
    // (`policy::MEMORY_SAMPLE_MAX_SHARE`): reading a tree that forks without pause cost 30–60 ms
    // here, which stretched the 2 ms period to 1–2 s (1–2 samples in a 1.1 s churn in 6 of 30
    // tries on a 2-core VM, where `>= 10` failed).
    assert!(peaks.samples >= 2, "{peaks:?}");
}

/// Prints "ready", then sleeps until killed.
const SLEEPER: &str = "import time\nprint('ready', flush=True)\ntime.sleep(60)\n";

/// `setpriv` arguments that drop to user and group `nobody` (65534) before exec.
const AS_NOBODY: [&str; 3] = ["--reuid=65534", "--regid=65534", "--clear-groups"];

/// The probe reads the process this variable names (root's side sets it).
const PROBE_PID: &str = "AUGBENCH_TEST_PROBE_PID";

#[test]
fn another_users_process_is_read_by_root_and_unavailable_to_an_unprivileged_reader() {
    if effective_uid(&std::fs::read_to_string("/proc/self/status").unwrap()) == Some(0) {
        root_reads_a_process_of_nobody();
        nobody_cannot_read_a_process_of_root();
    } else {
        assert_unreadable(other_users_process());
    }
}

/// The unprivileged side, started by the test above as `nobody` when run as root; run by hand it
/// reads another user's process.
#[test]
#[ignore = "started as user nobody by another_users_process_is_read_by_root_and_unavailable_to_an_unprivileged_reader"]
fn unprivileged_probe() {
    let pid =
        std::env::var(PROBE_PID).map_or_else(|_| other_users_process(), |p| p.parse().unwrap());
    assert_unreadable(pid);
}

fn root_reads_a_process_of_nobody() {
    let mut cmd = Command::new("setpriv");
    // `sh`, not python3: the test's python3 may live below a folder nobody cannot enter.
    cmd.args(AS_NOBODY)
        .args(["sh", "-c", "echo ready; exec sleep 60"]);
    let (mut child, mut out) = spawn(cmd).unwrap();
    assert_eq!(first_line(&mut out).unwrap(), "ready");
    let now = TreeMemory::read(child.id());
    let peaks = Sampler::start(child.id(), Duration::from_millis(5)).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    let peaks = peaks.stop();
    child.kill().unwrap();
    child.wait().unwrap();
    let now = now.unwrap();
    assert_eq!(now.processes, 1, "{now:?}");
    assert!(now.rss_bytes > 0 && now.pss_bytes > 0, "{now:?}");
    assert_eq!(peaks.unavailable, None, "{peaks:?}");
    assert!(peaks.samples > 0, "{peaks:?}");
}

/// Runs [`unprivileged_probe`] as `nobody` in a copy of this test binary (the original may sit
/// below a folder `nobody` cannot enter) against a sleeper of root's.
fn nobody_cannot_read_a_process_of_root() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let open = std::fs::Permissions::from_mode(0o755);
    std::fs::set_permissions(dir.path(), open.clone()).unwrap();
    let exe = dir.path().join("memory_sampler_probe");
    std::fs::copy(std::env::current_exe().unwrap(), &exe).unwrap();
    std::fs::set_permissions(&exe, open).unwrap();
    let (mut target, mut out) = python(SLEEPER).unwrap();
    assert_eq!(first_line(&mut out).unwrap(), "ready");
    let probe = Command::new("setpriv")
        .args(AS_NOBODY)
        .arg(&exe)
        .args(["--exact", "unprivileged_probe", "--ignored", "--nocapture"])
        .env(PROBE_PID, target.id().to_string())
        .current_dir(dir.path())
        .output()
        .unwrap();
    target.kill().unwrap();
    target.wait().unwrap();
    let text = String::from_utf8_lossy(&probe.stdout);
    assert!(
        probe.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&probe.stderr)
    );
    assert!(text.contains("1 passed"), "the probe ran no test: {text}");
}

/// The reading of `pid`, a process this test may not read, is unavailable and names it.
fn assert_unreadable(pid: u32) {
    match TreeMemory::read(pid) {
        Err(Unreadable::Process { pid: p, reason }) => {
            assert_eq!(p, pid, "{reason}");
            assert!(
                reason.contains(&format!("/proc/{pid}/smaps_rollup")),
                "{reason}"
            );
        }
        other => panic!("expected process {pid} unreadable, got {other:?}"),
    }
    let peaks = Sampler::start(pid, Duration::from_millis(5))
        .unwrap()
        .stop();
    let reason = peaks.unavailable.unwrap();
    assert!(reason.contains(&format!("process {pid}")), "{reason}");
    assert_eq!(peaks.samples, 0);
}

/// The effective user id in a `/proc/<pid>/status` text.
fn effective_uid(status: &str) -> Option<u32> {
    let line = status.lines().find(|l| l.starts_with("Uid:"))?;
    line.split_whitespace().nth(2)?.parse().ok()
}

/// A running process whose memory this (unprivileged) test is denied: another user's.
fn other_users_process() -> u32 {
    let pids = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok());
    let denied = |pid: &u32| {
        std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup"))
            .is_err_and(|e| e.kind() == std::io::ErrorKind::PermissionDenied)
    };
    let mut pids = pids;
    pids.find(denied).expect(
        "no process of another user is visible here to be denied: run as root, which tests \
         both sides, or where /proc shows another user's processes",
    )
}
