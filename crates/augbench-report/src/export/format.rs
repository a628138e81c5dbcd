//! The output formats of the comparison tables, the A/B verdicts and the regression verdicts
//! (markdown, CSV, JSON), and rendering each in the format asked for: the one place that
//! dispatches to the per-format files.

use serde::Serialize;

use super::{csv, json, markdown};
use crate::judge::ab::AbReport;
use crate::judge::regression::RegressionReport;
use crate::table::Table;

/// Output format of `compare`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    #[default]
    Markdown,
    Csv,
    Json,
}

/// Renders tables in a format.
pub fn render(tables: &[Table], format: Format) -> anyhow::Result<String> {
    match format {
        Format::Markdown => Ok(markdown::render_all(tables)),
        Format::Csv => csv::render(tables),
        Format::Json => json::render(tables),
    }
}

/// Renders the A/B verdicts in a format.
pub fn render_ab(report: &AbReport, format: Format) -> anyhow::Result<String> {
    match format {
        Format::Markdown => Ok(markdown::ab(report)),
        Format::Csv => csv::ab(report),
        Format::Json => json::ab(report),
    }
}

/// Renders the regression verdicts in a format.
pub fn render_regression(report: &RegressionReport, format: Format) -> anyhow::Result<String> {
    match format {
        Format::Markdown => Ok(markdown::regression(report)),
        Format::Csv => csv::regression(report),
        Format::Json => json::regression(report),
    }
}

/// Rendered tables followed by the A/B verdicts (CSV: the verdicts alone; JSON: one object with
/// both).
pub fn render_with_ab(tables: String, report: &AbReport, format: Format) -> anyhow::Result<String> {
    Ok(match format {
        Format::Markdown => format!("{tables}\n## A/B verdicts\n\n{}", markdown::ab(report)),
        Format::Csv => csv::ab(report)?,
        Format::Json => json::with_ab(&tables, report)?,
    })
}
