//! Drift between invocations, for the gate between separate runs (`compare --baseline
//! --current`): what moves a row's figure from one invocation to the next that no single run can
//! see (the machine's state, a neighbour, another runner of the same class). The verdict's
//! interval adds it for both sides (docs/ci.md, "What the gate's interval rests on"): estimated
//! from repeated baseline invocations (`estimate`), or stated for the runner class (`--drift`),
//! or not known, which the gate refuses to judge with `--fail-on-regression`. Pure.

use std::collections::BTreeMap;

use augbench_core::policy;
use augbench_core::results::Status;
use augbench_core::stats::student;
use serde::Serialize;

use crate::model::{Dataset, GroupKey, Row};

/// What the between-invocation term of a verdict's interval rests on.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "basis", rename_all = "snake_case")]
pub enum DriftBasis {
    /// τ̂ from the spread of the rows' figures over repeated baseline invocations, after what
    /// each invocation's own intervals explain.
    Estimated {
        /// ln sd of one invocation's figure about the rows' long-run level.
        tau: f64,
        invocations: usize,
        rows: usize,
    },
    /// τ as the user stated it for the runner class (`--drift`).
    Stated { tau: f64 },
    /// One baseline invocation and no stated drift: the interval is each side's rerun interval
    /// alone, whose only allowance for drift is the floor.
    Unknown { invocations: usize },
}

impl DriftBasis {
    /// τ, where known.
    pub fn tau(&self) -> Option<f64> {
        match self {
            DriftBasis::Estimated { tau, .. } | DriftBasis::Stated { tau } => Some(*tau),
            DriftBasis::Unknown { .. } => None,
        }
    }

    /// Words for the summary line.
    pub fn describe(&self) -> String {
        match self {
            DriftBasis::Estimated {
                tau,
                invocations,
                rows,
            } => format!(
                "drift between invocations ±{:.1}% (sd), estimated from {invocations} baseline invocations over {rows} rows",
                tau * 100.0
            ),
            DriftBasis::Stated { tau } => {
                format!(
                    "drift between invocations ±{:.1}% (sd), as stated with --drift",
                    tau * 100.0
                )
            }
            DriftBasis::Unknown { invocations } => format!(
                "drift between invocations not estimated ({invocations} baseline invocation{}): the interval allows only the ±{:.0}% floor for it, so it is not a 95% interval between runs; give the baseline as {} invocations (--baseline repeated) or state --drift",
                if *invocations == 1 { "" } else { "s" },
                policy::RERUN_DRIFT_FLOOR * 100.0,
                policy::DRIFT_MIN_INVOCATIONS
            ),
        }
    }
}

/// One row's key across runs.
pub type RowKey = (GroupKey, String, String);

/// The measured rows of one invocation, by key.
pub fn index(data: &Dataset) -> BTreeMap<RowKey, &Row> {
    data.rows
        .iter()
        .filter(|r| r.status == Status::Ok)
        .map(|r| ((r.key(), r.library.clone(), r.transform.clone()), r))
        .collect()
}

/// The basis of a gate over `baselines` (one dataset per invocation) and a stated `drift`: the
/// stated one wins; else an estimate from `policy::DRIFT_MIN_INVOCATIONS` or more invocations;
/// else unknown.
pub fn basis(baselines: &[Dataset], drift: Option<f64>) -> DriftBasis {
    if let Some(tau) = drift {
        return DriftBasis::Stated { tau };
    }
    if baselines.len() < policy::DRIFT_MIN_INVOCATIONS {
        return DriftBasis::Unknown {
            invocations: baselines.len(),
        };
    }
    estimate(baselines)
}

/// τ̂ over repeated invocations: per row measured in every one, the variance of ln(figure) over
/// them less the mean sampling variance its own recorded intervals give (each a 95% rerun
/// interval, √2 × 1.96 sd), pooled over rows (the mean: each row's excess is unbiased, and a
/// row's two or three invocations alone say little); never below zero.
pub fn estimate(baselines: &[Dataset]) -> DriftBasis {
    let indexes: Vec<_> = baselines.iter().map(index).collect();
    let excess: Vec<f64> = indexes[0]
        .keys()
        .filter_map(|k| {
            let rows: Option<Vec<&Row>> = indexes.iter().map(|ix| ix.get(k).copied()).collect();
            row_excess(&rows?)
        })
        .collect();
    let tau = if excess.is_empty() {
        f64::NAN
    } else {
        (excess.iter().sum::<f64>() / excess.len() as f64)
            .max(0.0)
            .sqrt()
    };
    if !tau.is_finite() {
        return DriftBasis::Unknown {
            invocations: baselines.len(),
        };
    }
    DriftBasis::Estimated {
        tau,
        invocations: baselines.len(),
        rows: excess.len(),
    }
}

/// One row's variance of ln(figure) over invocations less its mean sampling variance.
fn row_excess(rows: &[&Row]) -> Option<f64> {
    let parts: Option<Vec<(f64, f64)>> = rows.iter().map(|r| log_and_sampling(r)).collect();
    let parts = parts?;
    let k = parts.len() as f64;
    let mean = parts.iter().map(|p| p.0).sum::<f64>() / k;
    let var = parts.iter().map(|p| (p.0 - mean).powi(2)).sum::<f64>() / (k - 1.0);
    let sampling = parts.iter().map(|p| p.1).sum::<f64>() / k;
    Some(var - sampling)
}

/// ln(figure) of a measured row and the sampling variance its rerun interval implies.
pub fn log_and_sampling(r: &Row) -> Option<(f64, f64)> {
    let h = r.headline()?;
    let (lo, hi) = h.low.zip(h.high)?;
    let half = (hi / lo).ln() / 2.0;
    let z = student::normal_quantile(0.5 + policy::CONFIDENCE / 2.0);
    let sd = half / (z * std::f64::consts::SQRT_2);
    (h.value > 0.0 && sd.is_finite()).then(|| (h.value.ln(), sd * sd))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stated_drift_wins_and_one_invocation_is_unknown() {
        assert_eq!(basis(&[], Some(0.01)), DriftBasis::Stated { tau: 0.01 });
        let one = basis(&[Dataset::default()], None);
        assert_eq!(one, DriftBasis::Unknown { invocations: 1 });
        assert!(
            one.describe().contains("--baseline repeated"),
            "{}",
            one.describe()
        );
        assert_eq!(one.tau(), None);
    }
}
