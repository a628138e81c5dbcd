//! The estimators a row's headline figure can be read with, by name: what results and cells
//! record (`figure_estimator`) and what tables say. Policy names the chosen one; `stats::figure`
//! computes them.

use serde::{Deserialize, Serialize};

/// A way to reduce a row's per-run throughputs (from one or more worker processes) to one number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Estimator {
    Median,
    P75,
    P90,
    /// The fastest run.
    Max,
    /// The median over worker processes of each process's fastest run.
    ProcessMaxMedian,
}

impl Estimator {
    /// The name results and cells record (`figure_estimator`).
    pub fn name(self) -> &'static str {
        match self {
            Estimator::Median => "median",
            Estimator::P75 => "p75",
            Estimator::P90 => "p90",
            Estimator::Max => "max",
            Estimator::ProcessMaxMedian => "process_max_median",
        }
    }

    /// Words for table headers and legends.
    pub fn label(self) -> &'static str {
        match self {
            Estimator::Median => "median run",
            Estimator::P75 => "75th percentile run",
            Estimator::P90 => "90th percentile run",
            Estimator::Max => "fastest run",
            Estimator::ProcessMaxMedian => "median of per-process fastest runs",
        }
    }

    pub fn from_name(name: &str) -> Option<Estimator> {
        [
            Estimator::Median,
            Estimator::P75,
            Estimator::P90,
            Estimator::Max,
            Estimator::ProcessMaxMedian,
        ]
        .into_iter()
        .find(|e| e.name() == name)
    }
}
