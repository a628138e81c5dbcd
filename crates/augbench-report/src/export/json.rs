//! JSON export: the tables exactly as built (cells tagged by status), and the A/B and regression
//! reports as computed, for other tools.

use anyhow::Context;
use serde::Serialize;

use crate::judge::ab::AbReport;
use crate::judge::regression::RegressionReport;
use crate::table::Table;

pub fn render(tables: &[Table]) -> anyhow::Result<String> {
    pretty(
        &serde_json::json!({ "tables": tables }),
        "serializing tables to JSON",
    )
}

/// The A/B report as `ab::compare` made it.
pub fn ab(report: &AbReport) -> anyhow::Result<String> {
    pretty(report, "serializing the A/B report")
}

/// The regression report as `regression::compare` made it.
pub fn regression(report: &RegressionReport) -> anyhow::Result<String> {
    pretty(report, "serializing the regression report")
}

/// The tables (`render`'s text, as one object) and the A/B report in one object.
pub fn with_ab(tables: &str, report: &AbReport) -> anyhow::Result<String> {
    let tables: serde_json::Value = serde_json::from_str(tables)?;
    let both = serde_json::json!({ "tables": tables, "ab": report });
    Ok(format!("{}\n", serde_json::to_string_pretty(&both)?))
}

/// Pretty JSON with a final newline.
fn pretty<T: Serialize + ?Sized>(value: &T, what: &'static str) -> anyhow::Result<String> {
    let mut s = serde_json::to_string_pretty(value).context(what)?;
    s.push('\n');
    Ok(s)
}
