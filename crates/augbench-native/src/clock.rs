//! The two clocks a timed loop reads: the wall clock (`Instant`) and the timing thread's own CPU
//! clock (`CLOCK_THREAD_CPUTIME_ID`), which leaves out the time the thread waited for a core on
//! a loaded host (docs/methodology.md, "Thread CPU time"). `Loops` collects both per loop.

use std::time::Instant;

use augbench_protocol::protocol::TimeResponse;

/// The calling thread's CPU time in nanoseconds (0 where the clock cannot be read).
pub(crate) fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0;
    }
    let secs = u64::try_from(ts.tv_sec).unwrap_or(0);
    let nanos = u64::try_from(ts.tv_nsec).unwrap_or(0);
    secs.saturating_mul(1_000_000_000).saturating_add(nanos)
}

/// Wall and thread-CPU nanoseconds of each loop, in order.
#[derive(Debug, Default)]
pub(crate) struct Loops {
    response: TimeResponse,
}

/// One loop's start on both clocks.
pub(crate) struct Started {
    wall: Instant,
    cpu: u64,
}

impl Loops {
    pub fn with_capacity(loops: u64) -> Self {
        let n = usize::try_from(loops).unwrap_or(0);
        Loops {
            response: TimeResponse {
                ns: Vec::with_capacity(n),
                cpu_ns: Vec::with_capacity(n),
            },
        }
    }

    /// Reads both clocks at the start of a loop (CPU clock first, wall clock last).
    pub fn start() -> Started {
        let cpu = thread_cpu_ns();
        Started {
            wall: Instant::now(),
            cpu,
        }
    }

    /// Records a loop begun at `started` (wall clock first, CPU clock last).
    pub fn stop(&mut self, started: Started) {
        let wall = started.wall.elapsed();
        let cpu = thread_cpu_ns().saturating_sub(started.cpu);
        let r = &mut self.response;
        r.ns.push(u64::try_from(wall.as_nanos()).unwrap_or(u64::MAX));
        r.cpu_ns.push(cpu);
    }

    pub fn finish(self) -> TimeResponse {
        self.response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_advances_with_work_and_never_exceeds_wall_time_by_much() {
        let mut loops = Loops::with_capacity(2);
        for _ in 0..2 {
            let s = Loops::start();
            let mut x = 0u64;
            for i in 0..2_000_000u64 {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
            }
            loops.stop(s);
        }
        let r = loops.finish();
        assert_eq!(r.ns.len(), 2);
        assert_eq!(r.cpu_ns.len(), 2);
        for (wall, cpu) in r.ns.iter().zip(&r.cpu_ns) {
            assert!(*cpu > 0, "the thread's CPU clock did not advance");
            // The CPU clock's granularity may round up a little, never by a whole loop.
            assert!(
                *cpu <= wall + wall / 2 + 1_000_000,
                "cpu {cpu} ns > wall {wall} ns"
            );
        }
    }
}
