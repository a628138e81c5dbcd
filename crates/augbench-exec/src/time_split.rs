//! The run's clock: every part of a run adds its seconds here (one process runs one run), and
//! result files and the run summary take the split (`augbench_core::time_split`) from it.
//! `start` marks the run's beginning; `part` times a closure; `PhaseClock` times the set-up
//! phases a transform goes through. Time spent inside `in_row` also counts to that row (library,
//! transform), which its library's result file takes (`rows_of`).

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Instant;

use augbench_core::time_split::{RowTime, TimeSplit};

/// A row of the run: (library, transform); the transform is empty for the library's own work
/// (worker starts, media loads).
type Row = (String, String);

struct Clock {
    start: Option<Instant>,
    split: TimeSplit,
    /// The row that time added now counts to as well.
    row: Option<Row>,
    rows: BTreeMap<Row, TimeSplit>,
}

static CLOCK: Mutex<Clock> = Mutex::new(Clock {
    start: None,
    split: TimeSplit {
        wall_sec: 0.0,
        parts: Vec::new(),
    },
    row: None,
    rows: BTreeMap::new(),
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
        c.row = None;
        c.rows.clear();
    });
}

/// Adds `seconds` to `part`, and to the current row's `part` when inside `in_row`.
pub fn add(part: &str, seconds: f64) {
    with(|c| {
        c.split.add(part, seconds);
        if let Some(row) = c.row.clone() {
            c.rows.entry(row).or_default().add(part, seconds);
        }
    });
}

/// Runs `f` with the time it adds also counted to `library`'s row `transform` (empty: the
/// library's own work, such as starting its worker).
pub fn in_row<T>(library: &str, transform: &str, f: impl FnOnce() -> T) -> T {
    let row = (library.to_string(), transform.to_string());
    let outer = with(|c| c.row.replace(row));
    let out = f();
    with(|c| c.row = outer);
    out
}

/// Seconds counted to `transform` so far, every library's row of it.
pub fn transform_seconds(transform: &str) -> f64 {
    with(|c| {
        c.rows
            .iter()
            .filter(|((_, t), _)| t == transform)
            .flat_map(|(_, split)| &split.parts)
            .map(|p| p.seconds)
            .sum()
    })
}

/// `library`'s rows so far, in transform order (its own work first).
pub fn rows_of(library: &str) -> Vec<RowTime> {
    with(|c| {
        c.rows
            .iter()
            .filter(|((lib, _), _)| lib == library)
            .map(|((_, transform), split)| RowTime {
                transform: transform.clone(),
                parts: split.parts.clone(),
            })
            .collect()
    })
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
