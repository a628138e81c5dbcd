//! The run's clock: every part of a run adds its seconds here (one process runs one run), and
//! result files and the run summary take the split (`augbench_core::time_split`) from it.
//! `start` marks the run's beginning; `part` times a closure; `PhaseClock` times the set-up
//! phases a transform goes through.

use std::sync::Mutex;
use std::time::Instant;

use augbench_core::time_split::TimeSplit;

struct Clock {
    start: Option<Instant>,
    split: TimeSplit,
}

static CLOCK: Mutex<Clock> = Mutex::new(Clock {
    start: None,
    split: TimeSplit {
        wall_sec: 0.0,
        parts: Vec::new(),
    },
});

fn with<T>(f: impl FnOnce(&mut Clock) -> T) -> T {
    let mut guard = CLOCK
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    f(&mut guard)
}

/// Marks the run's beginning (the split's wall time counts from here) and forgets earlier parts.
pub fn start() {
    with(|c| {
        c.start = Some(Instant::now());
        c.split = TimeSplit::default();
    });
}

/// Adds `seconds` to `part`.
pub fn add(part: &str, seconds: f64) {
    with(|c| c.split.add(part, seconds));
}

/// Runs `f`, adding its wall time to `part`.
pub fn part<T>(name: &str, f: impl FnOnce() -> T) -> T {
    let t = Instant::now();
    let out = f();
    add(name, t.elapsed().as_secs_f64());
    out
}

/// The split so far, with the uncovered rest as `other` (none when `start` was never called).
pub fn snapshot() -> Option<TimeSplit> {
    with(|c| {
        let start = c.start?;
        let mut s = c.split.clone();
        s.wall_sec = start.elapsed().as_secs_f64();
        Some(s.with_other())
    })
}

/// Times consecutive phases (`enter` ends the previous one); the time before the first named
/// phase goes to `first`.
pub struct PhaseClock {
    current: String,
    since: Instant,
}

impl PhaseClock {
    pub fn new(first: &str) -> PhaseClock {
        PhaseClock {
            current: first.to_string(),
            since: Instant::now(),
        }
    }

    pub fn enter(&mut self, phase: &str) {
        add(&self.current, self.since.elapsed().as_secs_f64());
        self.current = phase.to_string();
        self.since = Instant::now();
    }

    pub fn finish(self) {
        add(&self.current, self.since.elapsed().as_secs_f64());
    }
}
