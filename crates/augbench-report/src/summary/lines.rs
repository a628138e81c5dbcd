//! The end-of-run terminal summary's lines on the run: the schedule (paired transforms, those
//! measured alone, machine drift), the status counts and the time per library and row kind. The table itself (reference first,
//! unsupported rows collapsed) lives in augbench-report's `summary`.

use std::collections::BTreeMap;

use augbench_core::policy;
use augbench_core::results::{ResultFile, Status};

/// The throughput unit of a run's media (`img/s`, `clips/s`).
pub fn unit(media: augbench_core::Media) -> &'static str {
    media.unit()
}

/// Which figure the table shows, and what `~` means; `None` without a measured row.
pub fn figure_line(files: &[&ResultFile]) -> Option<String> {
    let labels: std::collections::BTreeSet<String> = files
        .iter()
        .flat_map(|f| f.results.values())
        .filter(|r| r.status == Some(Status::Ok))
        .filter_map(|r| r.headline().map(|h| h.label()))
        .collect();
    if labels.is_empty() {
        return None;
    }
    let labels: Vec<String> = labels.into_iter().collect();
    let mut line = format!(
        "figure: {} · ~ unstable: the figure may not repeat (unstable_reason in the results says why)",
        labels.join("; ")
    );
    if let Some(p) = fewest_processes(files).filter(|p| *p < policy::MIN_PROCESS_UNITS as u64) {
        let processes = if p == 1 {
            "1 worker process".to_string()
        } else {
            format!("{p} worker processes")
        };
        line.push_str(&format!(
            "\n  {processes} per row: no row is judged by the process test (it needs {}); a figure \
             from so few processes can move far in a rerun, and nothing in its runs tells which \
             (execution.processes; docs/methodology.md, \"Reading an unstable row\")",
            policy::MIN_PROCESS_UNITS
        ));
    }
    Some(line)
}

/// The fewest worker processes any file with a measured row was configured with
/// (`benchmark_params.processes`; the files of one run share it); `None` without such a file.
fn fewest_processes(files: &[&ResultFile]) -> Option<u64> {
    files
        .iter()
        .filter(|f| f.results.values().any(|r| r.status == Some(Status::Ok)))
        .map(|f| f.metadata.benchmark_params.processes)
        .min()
}

/// How the libraries shared the machine: the schedule, the transforms with paired speedups, those
/// one library measured alone, and those where the drift sentinel saw the machine drift.
pub fn schedule_line(files: &[&ResultFile]) -> Option<String> {
    let schedule = files
        .iter()
        .find_map(|f| f.metadata.benchmark_params.schedule.clone())?;
    let mut paired = std::collections::BTreeSet::new();
    let mut alone = Vec::new();
    let mut drift = std::collections::BTreeSet::new();
    for f in files {
        for (t, r) in &f.results {
            if !r.paired.is_empty() {
                paired.insert(t.as_str());
            }
            if r.alone == Some(true) {
                alone.push(format!("{t} ({})", f.metadata.library));
            }
            if r.drift
                .as_ref()
                .is_some_and(|d| augbench_stats::drift_beyond_floor(d.spread, d.floor).is_some())
            {
                drift.insert(t.as_str());
            }
        }
    }
    let mut line = format!("schedule: {schedule}");
    if schedule == "interleaved" {
        line.push_str(&format!(
            "; {} transforms with paired speedups",
            paired.len()
        ));
    }
    if !alone.is_empty() {
        line.push_str(&format!("; measured alone: {}", alone.join(", ")));
    }
    if !drift.is_empty() {
        let names: Vec<&str> = drift.into_iter().collect();
        line.push_str(&format!("; machine drifted during: {}", names.join(", ")));
    }
    Some(line)
}

/// Measuring to a precision: how many transforms reached the target, and the rest with their
/// notes (`Rotate: not reached: ±4.1% after 45 s …`), or, past `policy::SUMMARY_MAX_NOTES` of
/// them, how wide they stood (median and widest). `None` without a precision target.
pub fn precision_line(files: &[&ResultFile]) -> Option<String> {
    let mut rows: BTreeMap<&str, &augbench_stats::precision::PrecisionRecord> = BTreeMap::new();
    for f in files {
        for (t, r) in &f.results {
            if let Some(p) = &r.precision {
                rows.entry(t.as_str()).or_insert(p);
            }
        }
    }
    let target = rows.values().next()?.target;
    let missed: Vec<(&str, &augbench_stats::precision::PrecisionRecord)> = rows
        .iter()
        .filter(|(_, p)| !p.reached)
        .map(|(t, p)| (*t, *p))
        .collect();
    let mut line = format!(
        "precision ±{:.1}%: reached in {} of {} transforms",
        target * 100.0,
        rows.len() - missed.len(),
        rows.len()
    );
    line.push_str(&paired_within(files, target));
    if missed.len() > policy::SUMMARY_MAX_NOTES {
        line.push_str(&missed_widths(&missed));
    } else if !missed.is_empty() {
        let notes: Vec<String> = missed
            .iter()
            .map(|(t, p)| format!("{t}: {}", p.note))
            .collect();
        line.push_str(&format!("; {}", notes.join("; ")));
    }
    Some(line)
}

/// `; paired speedups within it: 44 of 359 (rerun intervals: median ±14.4%)`: each pair of
/// libraries once (its partner holds the reciprocal), by its rerun interval's relative
/// half-width on the log scale; empty without paired speedups. A transform's target reads the
/// widest of many intervals with a correction for its looks; this says how its pairs stand.
fn paired_within(files: &[&ResultFile], target: f64) -> String {
    let mut widths: Vec<f64> = files
        .iter()
        .flat_map(|f| {
            let lib = f.metadata.library.as_str();
            f.results
                .values()
                .flat_map(move |r| r.paired.iter().filter(move |p| lib < p.partner.as_str()))
        })
        .filter_map(|p| {
            let h = (p.rerun_high.ln() - p.rerun_low.ln()) / 2.0;
            h.is_finite().then(|| h.exp_m1())
        })
        .collect();
    if widths.is_empty() {
        return String::new();
    }
    widths.sort_by(f64::total_cmp);
    let within = widths
        .iter()
        .filter(|w| augbench_stats::precision::within(&[**w], target))
        .count();
    format!(
        "; paired speedups within it: {within} of {} (rerun intervals: median ±{:.1}%)",
        widths.len(),
        widths[widths.len() / 2] * 100.0
    )
}

/// `; not reached in 50 (median ±12.0%, widest ±80.0% at Rotate; …)` for many missed transforms.
fn missed_widths(missed: &[(&str, &augbench_stats::precision::PrecisionRecord)]) -> String {
    let mut widths: Vec<(f64, &str)> = missed
        .iter()
        .filter_map(|(t, p)| p.half_width.filter(|h| h.is_finite()).map(|h| (h, *t)))
        .collect();
    widths.sort_by(|a, b| a.0.total_cmp(&b.0));
    let open = missed.len() - widths.len();
    let mut parts = Vec::new();
    if let (Some(mid), Some(widest)) = (widths.get(widths.len() / 2), widths.last()) {
        parts.push(format!(
            "median ±{:.1}%, widest ±{:.1}% at {}",
            mid.0 * 100.0,
            widest.0 * 100.0,
            widest.1
        ));
    }
    if open > 0 {
        parts.push(format!("{open} with no interval formed"));
    }
    parts.push("each transform's note is in its results' `precision`".to_string());
    format!("; not reached in {} ({})", missed.len(), parts.join("; "))
}

/// The `time by library:` and `time by row kind:` lines, from each file's time per row (a row's
/// kind from its median throughput; its library's own work counts to no kind).
pub fn time_lines(files: &[&ResultFile]) -> Vec<String> {
    use augbench_core::time_split::{kind_line, library_line};
    let libraries: Vec<(String, Vec<_>)> = files
        .iter()
        .map(|f| (f.metadata.library.clone(), f.metadata.time_by_row.clone()))
        .collect();
    let rows: Vec<_> = files
        .iter()
        .flat_map(|f| {
            f.metadata
                .time_by_row
                .iter()
                .filter(|row| !row.transform.is_empty())
                .map(|row| (per_item_sec(f, &row.transform), row))
        })
        .collect();
    [library_line(&libraries), kind_line(&rows)]
        .into_iter()
        .flatten()
        .collect()
}

/// A measured row's median seconds an item.
fn per_item_sec(f: &ResultFile, transform: &str) -> Option<f64> {
    let r = f.results.get(transform)?;
    let rate = r
        .median_throughput
        .filter(|_| r.status == Some(Status::Ok))?;
    (rate > 0.0).then(|| 1.0 / rate)
}

/// Counts of statuses across files, for the closing line.
pub fn status_counts(files: &[&ResultFile]) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for r in files.iter().flat_map(|f| f.results.values()) {
        let key = r.status.map_or("pending".to_string(), |s| s.to_string());
        *counts.entry(key).or_insert(0) += 1;
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &str =
        include_str!("../../../augbench/tests/bad_input/_support/valid_results.json");

    #[test]
    fn a_run_of_fewer_than_three_processes_says_its_rows_are_not_judged() {
        let mut file: ResultFile = serde_json::from_str(FIXTURE).unwrap();
        file.metadata.benchmark_params.processes = 1;
        let line = figure_line(&[&file]).unwrap();
        assert!(
            line.contains("1 worker process per row: no row is judged"),
            "{line}"
        );
        file.metadata.benchmark_params.processes = 2;
        let line = figure_line(&[&file]).unwrap();
        assert!(line.contains("2 worker processes per row"), "{line}");
        file.metadata.benchmark_params.processes = policy::MIN_PROCESS_UNITS as u64;
        let line = figure_line(&[&file]).unwrap();
        assert!(
            !line.contains("no row is judged") && !line.contains('\n'),
            "{line}"
        );
    }

    #[test]
    fn the_schedule_line_names_drift_from_the_drift_record_not_from_the_mark() {
        let mut file: ResultFile = serde_json::from_str(FIXTURE).unwrap();
        let drift = |spread| augbench_core::results::Drift {
            spread,
            median_ms: 3.0,
            times_ms: vec![3.0; 3],
            floor: Some(0.03),
        };
        let r = file.results.get_mut("HorizontalFlip").unwrap();
        r.drift = Some(drift(0.40));
        r.unstable = false;
        let line = schedule_line(&[&file]).unwrap();
        assert!(
            line.contains("machine drifted during: HorizontalFlip"),
            "{line}"
        );
        // Within 3× the floor and the minimum spread: no drift named.
        file.results.get_mut("HorizontalFlip").unwrap().drift = Some(drift(0.05));
        let line = schedule_line(&[&file]).unwrap();
        assert!(!line.contains("drifted"), "{line}");
    }

    /// Each pair once (from the library that sorts first), by its rerun interval on the log
    /// scale: ±4% and ±20% against a ±5% target.
    #[test]
    fn paired_speedups_are_counted_once_against_the_target() {
        use augbench_stats::paired::PairedSummary;
        let mut file: ResultFile = serde_json::from_str(FIXTURE).unwrap();
        file.metadata.library = "b".into();
        let pair = |partner: &str, h: f64| PairedSummary {
            partner: partner.into(),
            ratio: 2.0,
            ci_low: 2.0,
            ci_high: 2.0,
            rerun_low: 2.0 / (1.0 + h),
            rerun_high: 2.0 * (1.0 + h),
            rounds: 3,
            ratios: vec![2.0; 3],
        };
        let mut row = file.results.values().next().unwrap().clone();
        row.paired = vec![pair("c", 0.04), pair("a", 0.01)];
        file.results.insert("T1".into(), row.clone());
        row.paired = vec![pair("c", 0.20)];
        file.results.insert("T2".into(), row);
        let line = paired_within(&[&file], 0.05);
        assert_eq!(
            line,
            "; paired speedups within it: 1 of 2 (rerun intervals: median ±20.0%)"
        );
        file.results.retain(|t, _| t != "T1" && t != "T2");
        assert_eq!(paired_within(&[&file], 0.05), "");
    }

    #[test]
    fn many_missed_targets_are_summed_up_not_listed() {
        use augbench_stats::precision::PrecisionRecord;
        let mut file: ResultFile = serde_json::from_str(FIXTURE).unwrap();
        let template = file.results.values().next().unwrap().clone();
        let record = |h: f64| PrecisionRecord {
            target: 0.05,
            budget_sec: 4.0,
            reached: h <= 0.05,
            half_width: Some(h),
            rounds: 3,
            seconds: 4.0,
            note: format!("note {h}"),
        };
        file.results.clear();
        for k in 0..=policy::SUMMARY_MAX_NOTES {
            let mut r = template.clone();
            r.precision = Some(record(0.10 + k as f64 / 100.0));
            file.results.insert(format!("T{k}"), r);
        }
        let mut reached = template.clone();
        reached.precision = Some(record(0.01));
        file.results.insert("Reached".into(), reached);
        let n = policy::SUMMARY_MAX_NOTES + 1;
        let line = precision_line(&[&file]).unwrap();
        let widest = format!("widest ±{:.1}% at T{}", 10.0 + (n - 1) as f64, n - 1);
        assert!(
            line.contains(&format!("reached in 1 of {} transforms", n + 1)),
            "{line}"
        );
        assert!(
            line.contains(&format!("not reached in {n} (median ±")),
            "{line}"
        );
        assert!(
            line.contains(&widest) && !line.contains("note 0."),
            "{line}"
        );
        file.results.retain(|t, _| t == "T0" || t == "Reached");
        let line = precision_line(&[&file]).unwrap();
        assert!(line.contains("T0: note 0.1"), "{line}");
    }
}
