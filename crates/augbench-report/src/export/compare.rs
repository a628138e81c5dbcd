//! What `augbench compare` shows, as one value: the library tables (with the A/B verdicts of a
//! run that measured variants) or the regression verdicts of two runs, computed and rendered in
//! one format, with the verdicts' summary line and the flags `--fail-on-…` read.

use super::format::{Format, render, render_regression, render_with_ab};
use crate::judge::ab::{self, AbReport};
use crate::judge::regression::{self, RegressionReport};
use crate::judge::verdict::Verdicts;
use crate::model::Dataset;
use crate::table::{self, TableOptions};

/// The smallest relative changes that count: of timed rows, and of instruction counts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Effects {
    pub time: f64,
    pub count: f64,
}

/// The text to print, and the verdicts' outcome where there were verdicts.
#[derive(Debug, Clone, PartialEq)]
pub struct Shown {
    pub text: String,
    /// `None`: tables of results that measured no variants.
    pub verdicts: Option<Tally>,
}

/// A verdict report's outcome: its summary line, and whether a row is slower or undecided.
#[derive(Debug, Clone, PartialEq)]
pub struct Tally {
    pub summary: String,
    pub regression: bool,
    pub undecided: bool,
}

impl Tally {
    fn of_ab(report: &AbReport) -> Tally {
        Tally {
            summary: ab::summary(report),
            regression: report.has_regression(),
            undecided: report.has_undecided(),
        }
    }

    fn of_regression(report: &RegressionReport) -> Tally {
        Tally {
            summary: regression::summary(report),
            regression: report.has_regression(),
            undecided: report.has_undecided(),
        }
    }
}

/// The library tables, followed by the A/B verdicts when `data` measured variants.
pub fn tables(
    data: &Dataset,
    opts: &TableOptions,
    effects: Effects,
    format: Format,
) -> anyhow::Result<Shown> {
    let tables = table::build_tables(data, opts)?;
    let report = ab::compare_with(data, effects.time, effects.count)?;
    let mut text = render(&tables, format)?;
    if let Some(report) = &report {
        text = render_with_ab(text, report, format)?;
    }
    Ok(Shown {
        text,
        verdicts: report.as_ref().map(Tally::of_ab),
    })
}

/// The regression verdicts of `current` against the baseline's invocations, row by row.
pub fn regression(
    invocations: &[Dataset],
    current: &Dataset,
    effects: Effects,
    drift: Option<f64>,
    format: Format,
) -> anyhow::Result<Shown> {
    let report =
        regression::compare_runs(invocations, current, (effects.time, effects.count), drift)?;
    Ok(Shown {
        text: render_regression(&report, format)?,
        verdicts: Some(Tally::of_regression(&report)),
    })
}
