//! Where a run's wall time went (`metadata.time_split`, the run summary's `time:` line): seconds
//! per part (dataset, environments, worker starts, media load, the set-up phases, timed runs,
//! the drift sentinel), in the order they first occurred, and the rest as `other`. Pure.

use serde::{Deserialize, Serialize};

/// Parts a run's time splits into whose time is measurement proper; every other part is
/// overhead that a faster run may cut.
pub const MEASUREMENT_PARTS: &[&str] = &["timed runs"];

/// One part of a run's time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimePart {
    pub part: String,
    pub seconds: f64,
}

/// A run's time, split. `wall_sec` is the run's wall time up to when the split was taken; the
/// parts sum to at most it (`other` holds the rest).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimeSplit {
    pub wall_sec: f64,
    pub parts: Vec<TimePart>,
}

impl TimeSplit {
    /// Adds `seconds` to `part` (a new part goes last).
    pub fn add(&mut self, part: &str, seconds: f64) {
        match self.parts.iter_mut().find(|p| p.part == part) {
            Some(p) => p.seconds += seconds,
            None => self.parts.push(TimePart {
                part: part.to_string(),
                seconds,
            }),
        }
    }

    /// Seconds of the parts that are measurement proper.
    pub fn measuring_sec(&self) -> f64 {
        self.parts
            .iter()
            .filter(|p| MEASUREMENT_PARTS.contains(&p.part.as_str()))
            .map(|p| p.seconds)
            .sum()
    }

    /// The split with the wall time not covered by any part as `other`.
    pub fn with_other(mut self) -> TimeSplit {
        let covered: f64 = self.parts.iter().map(|p| p.seconds).sum();
        let rest = self.wall_sec - covered;
        if rest > 0.0 {
            self.add("other", rest);
        }
        self
    }

    /// One line for the run summary: `time: 312 s — timed runs 180 s (58%), worker start 40 s
    /// (13%), …`, largest part first.
    pub fn line(&self) -> String {
        // Parts under a twentieth of a second say nothing at this resolution.
        let mut parts: Vec<&TimePart> = self.parts.iter().filter(|p| p.seconds >= 0.05).collect();
        parts.sort_by(|a, b| b.seconds.total_cmp(&a.seconds));
        let wall = self.wall_sec.max(f64::MIN_POSITIVE);
        let shown: Vec<String> = parts
            .iter()
            .map(|p| {
                format!(
                    "{} {} ({:.0}%)",
                    p.part,
                    seconds(p.seconds),
                    100.0 * p.seconds / wall
                )
            })
            .collect();
        format!("time: {} — {}", seconds(self.wall_sec), shown.join(", "))
    }
}

/// Seconds for people: `0.4 s`, `12 s`, `5 min 3 s`.
pub fn seconds(s: f64) -> String {
    if s < 10.0 {
        format!("{s:.1} s")
    } else if s < 120.0 {
        format!("{s:.0} s")
    } else {
        let m = (s / 60.0).floor();
        format!("{m:.0} min {:.0} s", s - m * 60.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_add_up_and_the_rest_is_other() {
        let mut t = TimeSplit {
            wall_sec: 100.0,
            parts: Vec::new(),
        };
        t.add("worker start", 20.0);
        t.add("timed runs", 50.0);
        t.add("worker start", 5.0);
        let t = t.with_other();
        assert_eq!(t.parts[0].seconds, 25.0);
        assert_eq!(t.parts[2].part, "other");
        assert!((t.parts[2].seconds - 25.0).abs() < 1e-9);
        assert_eq!(t.measuring_sec(), 50.0);
        assert_eq!(
            t.line(),
            "time: 100 s — timed runs 50 s (50%), worker start 25 s (25%), other 25 s (25%)"
        );
        assert_eq!(seconds(303.0), "5 min 3 s");
    }
}
