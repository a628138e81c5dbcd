//! The memory sampler on real process trees (python3 workloads): peaks of a forked tree, PSS
//! counting copy-on-write pages once, children that come and go, and a process it may not read.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use augbench_host::memory_sampler::{Sampler, TreeMemory, Unreadable};

const MB: u64 = 1 << 20;

/// Starts `python3 -c script` (python3 must be on PATH); the test reads its first stdout line.
fn python(script: &str) -> std::io::Result<(Child, BufReader<std::process::ChildStdout>)> {
    let mut child = Command::new("python3")
        .args(["-c", script])
        .stdout(Stdio::piped())
        .spawn()?;
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
    std::thread::sleep(Duration::from_millis(200));
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

/// Forks short-lived children without pause for about a second: many of them exit between the
/// sampler's listing of the tree and its reading of their memory.
const CHURN: &str = r#"
import os, time
print("ready", flush=True)
end = time.monotonic() + 1.0
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
    assert!(peaks.samples >= 10, "{peaks:?}");
}

#[test]
fn a_process_that_cannot_be_read_makes_the_reading_unavailable_naming_it() {
    // Where pid 1's memory is readable (not in a sandbox that hides it) there is nothing to test.
    if std::fs::read_to_string("/proc/1/smaps_rollup")
        .err()
        .is_none_or(|e| e.kind() != std::io::ErrorKind::PermissionDenied)
    {
        eprintln!("skipped: /proc/1/smaps_rollup is readable here");
        return;
    }
    match TreeMemory::read(1) {
        Err(Unreadable::Process { pid: 1, reason }) => {
            assert!(reason.contains("/proc/1/smaps_rollup"), "{reason}");
        }
        other => panic!("expected pid 1 unreadable, got {other:?}"),
    }
    let peaks = Sampler::start(1, Duration::from_millis(5)).unwrap().stop();
    let reason = peaks.unavailable.unwrap();
    assert!(reason.contains("process 1"), "{reason}");
    assert_eq!(peaks.samples, 0);
}
