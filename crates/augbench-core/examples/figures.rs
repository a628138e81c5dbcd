//! Study helper (studies/estimator_study.py): reads result files and prints, for every measured
//! row, each estimator's figure, the relative half-width of its rerun interval and the `unstable`
//! test's number (how far the fastest process read above the figure), with the row's drift
//! record, as one JSON line per row. The same functions `augbench run` records with.
//!
//!     cargo run --release -p augbench-core --example figures -- FILE...

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "study tool: a failure stops it with the message"
)]

use augbench_core::results::{ResultFile, Status};
use augbench_stats::{Estimator, figure::fast_end_gap, figure::figure_with};

const ESTIMATORS: [Estimator; 5] = [
    Estimator::Median,
    Estimator::P75,
    Estimator::P90,
    Estimator::Max,
    Estimator::ProcessMaxMedian,
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    for path in std::env::args().skip(1) {
        let text = std::fs::read_to_string(&path)?;
        let file: ResultFile = serde_json::from_str(&text)?;
        for (name, r) in &file.results {
            if r.status != Some(Status::Ok) {
                continue;
            }
            let groups: Vec<usize> = r.process_runs.iter().map(|n| *n as usize).collect();
            let figures: serde_json::Map<String, serde_json::Value> = ESTIMATORS
                .iter()
                .map(|e| {
                    let f = figure_with(*e, &r.throughputs, &groups);
                    let gap = fast_end_gap(*e, &r.throughputs, &groups);
                    let v = serde_json::json!({"value": f.value, "half_width": f.half_width(), "gap": gap});
                    (e.name().to_string(), v)
                })
                .collect();
            let line = serde_json::json!({
                "file": path,
                "library": file.metadata.library,
                "transform": name,
                "figures": figures,
                "drift": r.drift.as_ref().map(|d| serde_json::json!({"spread": d.spread, "floor": d.floor})),
            });
            println!("{line}");
        }
    }
    Ok(())
}
