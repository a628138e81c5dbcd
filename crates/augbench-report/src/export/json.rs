//! JSON export: the tables exactly as built (cells tagged by status), for other tools.

use anyhow::Context;

use crate::table::Table;

pub fn render(tables: &[Table]) -> anyhow::Result<String> {
    let mut s = serde_json::to_string_pretty(&serde_json::json!({ "tables": tables }))
        .context("serializing tables to JSON")?;
    s.push('\n');
    Ok(s)
}
