//! The end-of-run terminal summary: transforms × libraries, median throughput per cell, with
//! `slow`, `–` (unsupported) and `error` markers. Reports proper live in augbench-report.

use std::collections::BTreeMap;

use augbench_core::results::{ResultFile, Status, TransformResult};

/// Renders one table for result files of the same scenario and mode. Rows follow `order`.
pub fn table(files: &[&ResultFile], order: &[String], unit: &str) -> String {
    let libs: Vec<&str> = files.iter().map(|f| f.metadata.library.as_str()).collect();
    let mut rows = vec![
        std::iter::once("Transform".to_string())
            .chain(libs.iter().map(|l| format!("{l} [{unit}]")))
            .collect::<Vec<_>>(),
    ];
    for t in order {
        let cells = files.iter().map(|f| cell(f.results.get(t)));
        rows.push(std::iter::once(t.clone()).chain(cells).collect());
    }
    augbench_core::text::columns(&rows, true, true)
}

fn cell(r: Option<&TransformResult>) -> String {
    let Some(r) = r else { return String::new() };
    match r.status {
        Some(Status::Ok) => {
            let m = r.median_throughput.unwrap_or(f64::NAN);
            let mark = if r.unstable { " ~" } else { "" };
            format!("{m:.0}{mark}")
        }
        Some(Status::Slow) => "slow".into(),
        Some(Status::Unsupported) => "–".into(),
        Some(Status::Error) => "error".into(),
        None => String::new(),
    }
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
