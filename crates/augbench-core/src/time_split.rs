//! Where a run's wall time went (`metadata.time_split`, the run summary's `time:` line): seconds
//! per part (dataset, environments, worker starts, media load, the set-up phases, timed runs,
//! the drift sentinel), in the order they first occurred, and the rest as `other`; and the same
//! per row (`metadata.time_by_row`), summed per library and per row kind (fast or slow). Pure.

use augbench_stats::duration::seconds;

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

/// One row's share of a run's time (set-up phases, rewarms, timed runs), in its library's result
/// file. `transform` is empty for the library's own work (worker starts, media loads).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RowTime {
    pub transform: String,
    pub parts: Vec<TimePart>,
}

impl RowTime {
    pub fn seconds(&self) -> f64 {
        self.parts.iter().map(|p| p.seconds).sum()
    }
}

/// Rows' parts summed into one split (its wall time is the sum).
fn summed<'a>(rows: impl IntoIterator<Item = &'a RowTime>) -> TimeSplit {
    let mut s = TimeSplit::default();
    for r in rows {
        for p in &r.parts {
            s.add(&p.part, p.seconds);
        }
    }
    s.wall_sec = s.parts.iter().map(|p| p.seconds).sum();
    s
}

/// `12 s (timed runs 60%, warmup 30%)`: the total and its two largest parts.
fn share_text(s: &TimeSplit) -> String {
    let mut parts: Vec<&TimePart> = s.parts.iter().filter(|p| p.seconds > 0.0).collect();
    parts.sort_by(|a, b| b.seconds.total_cmp(&a.seconds));
    let total = s.wall_sec.max(f64::MIN_POSITIVE);
    let shares: Vec<String> = parts
        .iter()
        .take(2)
        .map(|p| format!("{} {:.0}%", p.part, 100.0 * p.seconds / total))
        .collect();
    format!("{} ({})", seconds(s.wall_sec), shares.join(", "))
}

/// The run summary's `time by library:` line, largest first (`None` without rows).
pub fn library_line(libraries: &[(String, Vec<RowTime>)]) -> Option<String> {
    let mut sums: Vec<(&str, TimeSplit)> = libraries
        .iter()
        .filter(|(_, rows)| !rows.is_empty())
        .map(|(lib, rows)| (lib.as_str(), summed(rows)))
        .collect();
    if sums.is_empty() {
        return None;
    }
    sums.sort_by(|a, b| b.1.wall_sec.total_cmp(&a.1.wall_sec));
    let shown: Vec<String> = sums
        .iter()
        .map(|(lib, s)| format!("{lib} {}", share_text(s)))
        .collect();
    Some(format!("time by library: {}", shown.join("; ")))
}

/// The run summary's `time by row kind:` line: rows (each with its median seconds an item, when
/// measured) split at `policy::FAST_ROW_SEC_PER_ITEM`; rows never measured (unsupported, failed)
/// are a third kind. `None` without rows.
pub fn kind_line(rows: &[(Option<f64>, &RowTime)]) -> Option<String> {
    let fast = crate::policy::FAST_ROW_SEC_PER_ITEM;
    let kind = |s: Option<f64>| match s {
        Some(s) if s < fast => 0,
        Some(_) => 1,
        None => 2,
    };
    let kinds = [
        format!("fast rows (under {} an item)", per_item(fast)),
        "slow rows".to_string(),
        "rows not measured".to_string(),
    ];
    let shown: Vec<String> = kinds
        .iter()
        .enumerate()
        .filter_map(|(k, name)| {
            let of: Vec<&RowTime> = rows
                .iter()
                .filter(|(s, _)| kind(*s) == k)
                .map(|(_, r)| *r)
                .collect();
            (!of.is_empty()).then(|| format!("{name}: {}, {}", of.len(), share_text(&summed(of))))
        })
        .collect();
    (!shown.is_empty()).then(|| format!("time by row kind: {}", shown.join("; ")))
}

/// Seconds an item for people: `1 ms`, `250 µs`.
fn per_item(s: f64) -> String {
    if s >= 1e-3 {
        format!("{} ms", s * 1e3)
    } else {
        format!("{} µs", s * 1e6)
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
    }

    fn row(transform: &str, parts: &[(&str, f64)]) -> RowTime {
        RowTime {
            transform: transform.to_string(),
            parts: parts
                .iter()
                .map(|(p, s)| TimePart {
                    part: p.to_string(),
                    seconds: *s,
                })
                .collect(),
        }
    }

    #[test]
    fn rows_sum_per_library_largest_first() {
        let libs = vec![
            (
                "image".to_string(),
                vec![row("Resize", &[("timed runs", 3.0), ("warmup", 1.0)])],
            ),
            (
                "kornia".to_string(),
                vec![
                    row("", &[("worker start", 4.0)]),
                    row("Resize", &[("timed runs", 12.0), ("warmup", 4.0)]),
                ],
            ),
            ("pillow".to_string(), Vec::new()),
        ];
        assert_eq!(
            library_line(&libs).unwrap(),
            "time by library: kornia 20 s (timed runs 60%, worker start 20%); image 4.0 s (timed runs 75%, warmup 25%)"
        );
        assert_eq!(library_line(&[]), None);
    }

    #[test]
    fn rows_split_into_fast_slow_and_not_measured() {
        let fast = crate::policy::FAST_ROW_SEC_PER_ITEM;
        let (a, b, c) = (
            row("HorizontalFlip", &[("warmup", 3.0), ("timed runs", 1.0)]),
            row("GaussianBlur", &[("timed runs", 9.0), ("warmup", 1.0)]),
            row("Posterize", &[("prepare", 0.5)]),
        );
        let rows = [(Some(fast / 10.0), &a), (Some(fast), &b), (None, &c)];
        assert_eq!(
            kind_line(&rows).unwrap(),
            "time by row kind: fast rows (under 1 ms an item): 1, 4.0 s (warmup 75%, timed runs 25%); \
             slow rows: 1, 10 s (timed runs 90%, warmup 10%); rows not measured: 1, 0.5 s (prepare 100%)"
        );
        assert_eq!(kind_line(&[]), None);
    }
}
