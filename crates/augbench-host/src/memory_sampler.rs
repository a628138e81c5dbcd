//! The memory of a process tree: one reading sums RSS and PSS from `/proc/<pid>/smaps_rollup`
//! over a root process and all its descendants (`TreeMemory`), and `Sampler` takes readings on a
//! background thread and keeps their peaks (`MemoryPeaks`), or the reason there are none.
//! Linux only: elsewhere every reading is unavailable. What is measured and why:
//! docs/pipeline.md, "Memory".

use std::collections::HashMap;
use std::io;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// `ESRCH`: `smaps_rollup` of a process that has exited but is not reaped yet (a zombie) or of a
/// kernel thread, which have no memory to read. Linux's value on every architecture.
const ESRCH: i32 = 3;

/// The default sampling period, from the one home of defaults (`core::policy`).
pub fn default_period() -> Duration {
    Duration::from_millis(augbench_core::policy::MEMORY_SAMPLE_PERIOD_MS)
}

/// The two fields of one process's `smaps_rollup`, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Rollup {
    pub rss_bytes: u64,
    pub pss_bytes: u64,
}

/// Why `smaps_rollup` text could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RollupError {
    #[error("no `{0}:` line")]
    Missing(&'static str),
    #[error("`{field}:` line is not `<number> kB`: {line:?}")]
    Malformed { field: &'static str, line: String },
}

/// Parses the text of `/proc/<pid>/smaps_rollup`: the `Rss:` and `Pss:` lines, in kB (the unit
/// the kernel always writes), as bytes. Other lines (`Pss_Anon:`, `SwapPss:`, the header) are
/// ignored.
pub fn parse_smaps_rollup(text: &str) -> Result<Rollup, RollupError> {
    let mut rss = None;
    let mut pss = None;
    for line in text.lines() {
        let Some((key, rest)) = line.split_once(':') else {
            continue;
        };
        let (field, slot) = match key {
            "Rss" => ("Rss", &mut rss),
            "Pss" => ("Pss", &mut pss),
            _ => continue,
        };
        let malformed = || RollupError::Malformed {
            field,
            line: line.to_string(),
        };
        let mut words = rest.split_whitespace();
        let kb = words
            .next()
            .and_then(|n| n.parse::<u64>().ok())
            .ok_or_else(malformed)?;
        if words.next() != Some("kB") || words.next().is_some() {
            return Err(malformed());
        }
        *slot = Some(kb.saturating_mul(1024));
    }
    Ok(Rollup {
        rss_bytes: rss.ok_or(RollupError::Missing("Rss"))?,
        pss_bytes: pss.ok_or(RollupError::Missing("Pss"))?,
    })
}

/// The parent pid in the text of `/proc/<pid>/stat`: the second field after the command name,
/// which is in parentheses and may itself hold spaces and parentheses (so the last `)` ends it).
pub fn parse_stat_ppid(text: &str) -> Option<u32> {
    let after_comm = text.get(text.rfind(')')? + 1..)?;
    let mut fields = after_comm.split_whitespace();
    let _state = fields.next()?;
    fields.next()?.parse().ok()
}

/// Why a process tree's memory could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unreadable {
    /// The root is not running (never was, exited, or is an unreaped zombie): there is no tree.
    #[error("process {pid} is not running")]
    RootGone { pid: u32 },
    /// A process of the tree exists but its memory cannot be read (permission, or an answer that
    /// does not parse): a sum without it would be too low, so there is no reading.
    #[error("cannot read the memory of process {pid}: {reason}")]
    Process { pid: u32, reason: String },
    /// The process table itself (`/proc`) cannot be listed: not Linux, or no procfs mounted.
    #[error("cannot list processes in /proc: {reason}")]
    ProcTable { reason: String },
}

/// One reading of a process tree: RSS and PSS summed over the root and every descendant alive
/// at the time of the reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TreeMemory {
    /// Resident pages of every process, a page shared by n processes counted n times.
    pub rss_bytes: u64,
    /// Proportional set size: a page shared by n processes counts 1/n in each, so the sum counts
    /// it once (a forked loader worker's copy-on-write pages are not counted per worker).
    pub pss_bytes: u64,
    /// Processes whose memory was read (the root included).
    pub processes: u32,
}

impl TreeMemory {
    /// Reads the tree under `root_pid` now. Descendants are found by parent pid in
    /// `/proc/<pid>/stat` (the `children` files need a kernel option that not every kernel has).
    /// A descendant that exits between the listing and the reading is skipped: loader workers
    /// come and go. One that is there but cannot be read makes the whole reading `Unreadable`.
    pub fn read(root_pid: u32) -> Result<TreeMemory, Unreadable> {
        let tree = descendants(root_pid, &process_table()?);
        let mut total = TreeMemory {
            rss_bytes: 0,
            pss_bytes: 0,
            processes: 0,
        };
        for pid in std::iter::once(root_pid).chain(tree) {
            match read_rollup(pid) {
                Ok(Some(r)) => {
                    total.rss_bytes = total.rss_bytes.saturating_add(r.rss_bytes);
                    total.pss_bytes = total.pss_bytes.saturating_add(r.pss_bytes);
                    total.processes += 1;
                }
                Ok(None) if pid == root_pid => return Err(Unreadable::RootGone { pid }),
                Ok(None) => {}
                Err(reason) => return Err(Unreadable::Process { pid, reason }),
            }
        }
        Ok(total)
    }
}

/// Every process's parent: (pid, ppid) for each numeric entry of `/proc`. A process that exits
/// while the table is read is left out.
fn process_table() -> Result<Vec<(u32, u32)>, Unreadable> {
    let entries = std::fs::read_dir("/proc").map_err(|e| Unreadable::ProcTable {
        reason: e.to_string(),
    })?;
    let mut table = Vec::new();
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        if let Some(ppid) = parse_stat_ppid(&stat) {
            table.push((pid, ppid));
        }
    }
    Ok(table)
}

/// The descendants of `root` in a (pid, ppid) table, parents before their children.
fn descendants(root: u32, table: &[(u32, u32)]) -> Vec<u32> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for &(pid, ppid) in table {
        children.entry(ppid).or_default().push(pid);
    }
    let mut out = Vec::new();
    let mut next = vec![root];
    while let Some(parent) = next.pop() {
        for &child in children.get(&parent).into_iter().flatten() {
            // A pid is its own parent only in a corrupt table; never loop on it.
            if child != root && !out.contains(&child) {
                out.push(child);
                next.push(child);
            }
        }
    }
    out
}

/// One process's rollup; `None` when it has no memory to read (exited, a zombie, a kernel
/// thread), the reason when it is there but cannot be read.
fn read_rollup(pid: u32) -> Result<Option<Rollup>, String> {
    match std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")) {
        Ok(text) if text.trim().is_empty() => Ok(None),
        Ok(text) => parse_smaps_rollup(&text)
            .map(Some)
            .map_err(|e| format!("/proc/{pid}/smaps_rollup: {e}")),
        Err(e) if vanished(&e) => Ok(None),
        Err(e) => Err(format!("/proc/{pid}/smaps_rollup: {e}")),
    }
}

fn vanished(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::NotFound || e.raw_os_error() == Some(ESRCH)
}

/// The peaks of a sampled process tree: the one definition is augbench-core's (result and cell
/// files carry it); the sampling that fills it is this module's.
pub use augbench_core::results::MemoryPeaks;

/// Takes one reading into `peaks`; `clock` is the time accounting of the sampler's thread.
/// Returns false once sampling should end (unavailable).
fn take(peaks: &mut MemoryPeaks, root_pid: u32, clock: &mut Clock) -> bool {
    if peaks.unavailable.is_some() {
        return false;
    }
    let started = (Instant::now(), thread_cpu());
    let reading = TreeMemory::read(root_pid);
    clock.record(peaks, started);
    match reading {
        Ok(m) => {
            peaks.peak_rss_bytes = peaks.peak_rss_bytes.max(m.rss_bytes);
            peaks.peak_pss_bytes = peaks.peak_pss_bytes.max(m.pss_bytes);
            peaks.max_processes = peaks.max_processes.max(m.processes);
            peaks.samples += 1;
            true
        }
        // The tree may end before the sampler is stopped; the peaks so far stand.
        Err(Unreadable::RootGone { .. }) => true,
        Err(e) => {
            peaks.unavailable = Some(e.to_string());
            false
        }
    }
}

/// The peaks once sampling has ended: no reading at all is unavailable too.
fn finish(mut peaks: MemoryPeaks, root_pid: u32) -> MemoryPeaks {
    if peaks.samples == 0 && peaks.unavailable.is_none() {
        peaks.unavailable = Some(format!(
            "no reading of process {root_pid}'s tree: it was not running while sampled"
        ));
    }
    peaks
}

/// When the sampler's thread read, so far.
#[derive(Default)]
struct Clock {
    first: Option<Instant>,
    last_end: Option<Instant>,
    last_cost: Duration,
    total_cost: Duration,
}

impl Clock {
    /// Accounts for a reading that started at `started` (wall clock, the thread's CPU time) and
    /// has just ended, in `peaks` too. Its cost is the CPU time it took: on a busy machine the
    /// wall time of a reading is mostly waiting for a core, which takes nothing from the loader.
    fn record(&mut self, peaks: &mut MemoryPeaks, started: (Instant, Option<Duration>)) {
        let (wall, cpu) = started;
        let end = Instant::now();
        let first = *self.first.get_or_insert(wall);
        self.last_end = Some(end);
        self.last_cost = match (cpu, thread_cpu()) {
            (Some(before), Some(after)) => after.saturating_sub(before),
            _ => end - wall,
        };
        self.total_cost += self.last_cost;
        peaks.span_ms = millis(end - first);
        peaks.reading_cpu_ms = millis(self.total_cost);
    }

    /// The earliest start of the next reading that keeps the last one's cost within
    /// `MEMORY_SAMPLE_MAX_SHARE` of one core over the time until the next one starts.
    fn earliest_next(&self) -> Instant {
        let share = augbench_core::policy::MEMORY_SAMPLE_MAX_SHARE;
        let end = self.last_end.unwrap_or_else(Instant::now);
        end + self.last_cost.mul_f64((1.0 - share) / share)
    }
}

/// The CPU time of the calling thread so far (the first field of `/proc/thread-self/schedstat`,
/// in ns, current to the last scheduler tick); `None` where the kernel does not provide it.
fn thread_cpu() -> Option<Duration> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = text.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(ns))
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Samples a process tree on a background thread from `start` to `stop`: one reading at start,
/// one every period, and one at stop, so a tree read at least once is read at its end. A reading
/// that costs much CPU (a large tree) pushes the next one back so that reading takes at most
/// `MEMORY_SAMPLE_MAX_SHARE` of a core; `MemoryPeaks::span_ms` tells the interval achieved.
pub struct Sampler {
    stop_tx: mpsc::Sender<()>,
    thread: JoinHandle<MemoryPeaks>,
    root_pid: u32,
}

impl Sampler {
    /// Starts sampling the tree under `root_pid` every `period` (`default_period()` normally).
    pub fn start(root_pid: u32, period: Duration) -> io::Result<Sampler> {
        let (stop_tx, stop_rx) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name(format!("memory-sampler-{root_pid}"))
            .spawn(move || {
                let mut peaks = MemoryPeaks::default();
                let mut clock = Clock::default();
                let mut next = Instant::now();
                loop {
                    if !take(&mut peaks, root_pid, &mut clock) {
                        return peaks;
                    }
                    // A fixed schedule (a late reading does not push every later one back),
                    // stretched so that reading stays within its share of the time.
                    next = (next + period).max(clock.earliest_next());
                    let wait = next.saturating_duration_since(Instant::now());
                    match stop_rx.recv_timeout(wait) {
                        Err(RecvTimeoutError::Timeout) => {}
                        Ok(()) | Err(RecvTimeoutError::Disconnected) => {
                            take(&mut peaks, root_pid, &mut clock);
                            return peaks;
                        }
                    }
                }
            })?;
        Ok(Sampler {
            stop_tx,
            thread,
            root_pid,
        })
    }

    /// Takes a last reading, ends the thread and returns the peaks.
    pub fn stop(self) -> MemoryPeaks {
        // The thread may have ended already (unavailable); then nobody receives, which is fine.
        let _ = self.stop_tx.send(());
        let peaks = self.thread.join().unwrap_or_else(|_| {
            MemoryPeaks::unavailable("the memory sampler's thread panicked".to_string())
        });
        finish(peaks, self.root_pid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROLLUP: &str = "\
55d820b2c000-7ffe03a87000 ---p 00000000 00:00 0                          [rollup]
Rss:                1756 kB
Pss:                 315 kB
Pss_Dirty:           116 kB
Pss_Anon:            116 kB
Pss_File:            199 kB
Pss_Shmem:             0 kB
Shared_Clean:       1600 kB
Private_Dirty:       116 kB
SwapPss:               0 kB
";

    #[test]
    fn parses_rss_and_pss_in_bytes_ignoring_the_other_pss_lines() {
        assert_eq!(
            parse_smaps_rollup(ROLLUP),
            Ok(Rollup {
                rss_bytes: 1756 * 1024,
                pss_bytes: 315 * 1024,
            })
        );
    }

    #[test]
    fn a_missing_field_is_an_error_naming_it() {
        let no_pss = ROLLUP.replace("Pss:                 315 kB\n", "");
        assert_eq!(
            parse_smaps_rollup(&no_pss),
            Err(RollupError::Missing("Pss"))
        );
        assert_eq!(parse_smaps_rollup(""), Err(RollupError::Missing("Rss")));
    }

    #[test]
    fn a_value_that_is_not_kilobytes_is_malformed() {
        for bad in [
            "Rss: 12 MB",
            "Rss: twelve kB",
            "Rss: 12",
            "Rss: 12 kB extra",
        ] {
            let text = ROLLUP.replace("Rss:                1756 kB", bad);
            let err = parse_smaps_rollup(&text).unwrap_err();
            assert!(
                matches!(&err, RollupError::Malformed { field: "Rss", line } if line == bad),
                "{bad}: {err}"
            );
        }
    }

    #[test]
    fn ppid_is_read_after_a_command_name_with_spaces_and_parentheses() {
        assert_eq!(
            parse_stat_ppid("4242 (python3) S 17 4242 17 0 -1"),
            Some(17)
        );
        assert_eq!(parse_stat_ppid("9 (a) b (c) R 1 9 9 0"), Some(1));
        assert_eq!(parse_stat_ppid("9 (x) R"), None);
        assert_eq!(parse_stat_ppid("garbage"), None);
    }

    #[test]
    fn descendants_follow_parents_across_generations_and_ignore_others() {
        let table = [(10, 1), (11, 10), (12, 11), (13, 10), (20, 1), (21, 20)];
        let mut d = descendants(10, &table);
        d.sort_unstable();
        assert_eq!(d, vec![11, 12, 13]);
        assert!(descendants(12, &table).is_empty());
        // A corrupt table with a cycle ends.
        let mut cyc = descendants(1, &[(2, 1), (1, 2)]);
        cyc.sort_unstable();
        assert_eq!(cyc, vec![2]);
    }

    #[test]
    fn this_process_reads_as_a_tree_of_at_least_one() {
        let m = TreeMemory::read(std::process::id()).unwrap();
        assert!(m.processes >= 1);
        assert!(
            m.rss_bytes > 0 && m.pss_bytes > 0 && m.pss_bytes <= m.rss_bytes,
            "{m:?}"
        );
    }

    #[test]
    fn a_pid_that_is_not_running_is_root_gone_and_a_sampler_says_unavailable() {
        // Above the largest pid_max Linux allows (2^22), so never a running process.
        let pid = (1 << 22) + 1;
        assert_eq!(TreeMemory::read(pid), Err(Unreadable::RootGone { pid }));
        let peaks = Sampler::start(pid, Duration::from_millis(5))
            .unwrap()
            .stop();
        assert_eq!(peaks.samples, 0);
        assert!(
            peaks
                .unavailable
                .as_deref()
                .unwrap()
                .contains(&pid.to_string()),
            "{peaks:?}"
        );
    }

    #[test]
    fn a_slow_reading_pushes_the_next_one_back_to_keep_its_share_of_the_time() {
        let end = Instant::now();
        let clock = Clock {
            first: Some(end),
            last_end: Some(end),
            last_cost: Duration::from_millis(10),
            total_cost: Duration::from_millis(10),
        };
        let share = augbench_core::policy::MEMORY_SAMPLE_MAX_SHARE;
        let gap = clock.earliest_next() - end;
        let expected = Duration::from_millis(10).mul_f64((1.0 - share) / share);
        assert_eq!(gap, expected);
        // The reading's 10 ms over the time from its start to the next one's is the share.
        let ratio = 0.010 / (0.010 + gap.as_secs_f64());
        assert!((ratio - share).abs() < 1e-9, "{ratio}");
    }

    #[test]
    fn this_threads_cpu_time_is_readable_and_grows() {
        // The kernel brings the figure up to date at its ticks: spin until it moves (a few ms).
        let before = thread_cpu().expect("/proc/thread-self/schedstat");
        let start = Instant::now();
        let mut x = 0u64;
        while thread_cpu().unwrap() == before && start.elapsed() < Duration::from_secs(5) {
            for i in 0..100_000u64 {
                x = std::hint::black_box(x.wrapping_add(i));
            }
        }
        assert!(thread_cpu().unwrap() > before, "{x}");
    }

    #[test]
    fn peaks_round_trip_through_json() {
        let peaks = MemoryPeaks {
            peak_rss_bytes: 3,
            peak_pss_bytes: 2,
            samples: 5,
            max_processes: 4,
            span_ms: 250,
            reading_cpu_ms: 7,
            unavailable: Some("cannot read the memory of process 1: denied".to_string()),
        };
        let json = serde_json::to_string(&peaks).unwrap();
        assert_eq!(serde_json::from_str::<MemoryPeaks>(&json).unwrap(), peaks);
    }
}
