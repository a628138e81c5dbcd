//! Drift between invocations, for the gate between separate runs (`compare --baseline
//! --current`): what moves a row's figure from one invocation to the next that no single run can
//! see (the machine's state, a neighbour, another runner of the same class). The verdict's
//! interval adds it for both sides (docs/ci.md, "What the gate's interval rests on"): estimated
//! from repeated baseline invocations (`estimate`), or stated for the runner class (`--drift`),
//! or not known, which the gate refuses to judge with `--fail-on-regression`. Pure.

use std::collections::BTreeMap;

use augbench_core::policy;
use augbench_core::results::Status;
use serde::Serialize;

use crate::model::{Dataset, GroupKey, Row};

/// What the between-invocation term of a verdict's interval rests on.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "basis", rename_all = "snake_case")]
pub enum DriftBasis {
    /// The spread of the rows' figures over repeated baseline invocations, pooled over rows:
    /// one invocation's figure moves by `spread` (ln sd, sampling and drift together), read with
    /// Student's t at `df` = rows × (invocations − 1) degrees of freedom.
    Estimated {
        spread: f64,
        df: usize,
        invocations: usize,
        rows: usize,
    },
    /// τ as the user stated it for the runner class (`--drift`), added to what each side's
    /// rerun interval says of its sampling.
    Stated { tau: f64 },
    /// One baseline invocation and no stated drift: the interval is each side's rerun interval
    /// alone, whose only allowance for drift is the floor.
    Unknown { invocations: usize },
}

impl DriftBasis {
    /// Whether the interval has a between-invocation term from data or a statement.
    pub fn known(&self) -> bool {
        !matches!(self, DriftBasis::Unknown { .. })
    }

    /// The between-invocation term's ln sd: the stated τ, or the estimated spread of one
    /// invocation's figure (sampling and drift together); `None` when unknown.
    pub fn spread(&self) -> Option<f64> {
        match *self {
            DriftBasis::Estimated { spread, .. } => Some(spread),
            DriftBasis::Stated { tau } => Some(tau),
            DriftBasis::Unknown { .. } => None,
        }
    }

    /// Words for the summary line.
    pub fn describe(&self) -> String {
        match self {
            DriftBasis::Estimated {
                spread,
                df,
                invocations,
                rows,
            } => format!(
                "a figure moves ±{:.1}% (sd) between invocations, from {invocations} baseline invocations over {rows} rows, read with Student's t at {df} degrees of freedom",
                spread * 100.0
            ),
            DriftBasis::Stated { tau } => format!(
                "drift between invocations ±{:.1}% (sd), as stated with --drift",
                tau.exp_m1() * 100.0
            ),
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

/// A row's key: its group, library and transform.
pub fn key(r: &Row) -> RowKey {
    (r.key(), r.library.clone(), r.transform.clone())
}

/// The measured rows of one invocation, by key.
pub fn index(data: &Dataset) -> BTreeMap<RowKey, &Row> {
    data.rows
        .iter()
        .filter(|r| r.status == Status::Ok)
        .map(|r| (key(r), r))
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

/// The spread over repeated invocations: per row measured in every one, the variance of
/// ln(figure) over them (what one invocation's figure moves by: its sampling and the drift
/// between invocations together, read directly, so no model of either is needed), pooled over
/// rows (the mean, rows × (k − 1) degrees of freedom). Unknown when no row was measured in all.
pub fn estimate(baselines: &[Dataset]) -> DriftBasis {
    let indexes: Vec<_> = baselines.iter().map(index).collect();
    let vars: Vec<f64> = indexes[0]
        .keys()
        .filter_map(|k| {
            let rows: Option<Vec<&Row>> = indexes.iter().map(|ix| ix.get(k).copied()).collect();
            row_variance(&rows?)
        })
        .collect();
    if vars.is_empty() {
        return DriftBasis::Unknown {
            invocations: baselines.len(),
        };
    }
    let k = baselines.len();
    DriftBasis::Estimated {
        spread: (vars.iter().sum::<f64>() / vars.len() as f64).sqrt(),
        df: vars.len() * (k - 1),
        invocations: k,
        rows: vars.len(),
    }
}

/// One row's variance of ln(figure) over invocations.
fn row_variance(rows: &[&Row]) -> Option<f64> {
    let logs: Option<Vec<f64>> = rows.iter().map(|r| log_figure(r)).collect();
    let logs = logs?;
    let k = logs.len() as f64;
    let mean = logs.iter().sum::<f64>() / k;
    Some(logs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (k - 1.0))
}

/// ln(figure) of a measured row that recorded its figure's interval.
fn log_figure(r: &Row) -> Option<f64> {
    let h = r.headline()?;
    h.low.zip(h.high)?;
    (h.value > 0.0).then(|| h.value.ln())
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
        assert!(!one.known());
    }
}
