//! Text output of cell logs and summaries: an aligned table for people, CSV and JSON for tools, and
//! `key=value` row filters. Floats print in their shortest round-trip form; null prints as `null`
//! in tables, empty in CSV and `null` in JSON (where NaN and ±inf are null too).

use augbench_cells::error::{CellsError, Result};
use augbench_cells::io::jsonl::write_value;
use augbench_cells::table::{CellTable, CellValue};

use crate::summary::{SummaryRow, resolve_column};

/// Output format of `show` and `summarize`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextFormat {
    Table,
    Csv,
    Json,
}

/// Widest value shown in table format; longer values end in `…` (CSV and JSON print them whole).
pub const TABLE_MAX_WIDTH: usize = 48;

/// A `column=value` row filter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Filter {
    pub column: String,
    pub value: String,
}

impl std::str::FromStr for Filter {
    type Err = CellsError;
    fn from_str(s: &str) -> Result<Self> {
        match s.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => Ok(Filter {
                column: k.trim().to_string(),
                value: v.to_string(),
            }),
            _ => Err(CellsError::BadArgument {
                detail: format!("filter '{s}' is not of the form key=value"),
                hint: "write e.g. --filter phase=clu (repeat --filter to combine)".into(),
            }),
        }
    }
}

/// Plain text of a value (null → "").
pub fn plain(v: &CellValue<'_>) -> String {
    match v {
        CellValue::Null => String::new(),
        CellValue::Str(s) => (*s).to_string(),
        CellValue::Int(i) => i.to_string(),
        CellValue::Float(f) => format!("{f:?}"),
        CellValue::List(xs) => format!("{xs:?}"),
    }
}

/// Positions of the rows matching every filter (values compared as plain text).
pub fn filter_rows(table: &CellTable, filters: &[Filter]) -> Result<Vec<(usize, usize)>> {
    let cols = filters
        .iter()
        .map(|f| {
            resolve_column(table, &f.column).ok_or_else(|| CellsError::BadArgument {
                detail: format!("no column '{}' to filter on", f.column),
                hint: format!("columns are: {}", table.column_names().join(", ")),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(table
        .positions()
        .filter(|&(b, r)| {
            filters
                .iter()
                .zip(&cols)
                .all(|(f, &c)| plain(&table.value(b, c, r)) == f.value)
        })
        .collect())
}

/// Renders the given rows of a table.
pub fn render_rows(table: &CellTable, rows: &[(usize, usize)], format: TextFormat) -> String {
    let headers: Vec<String> = table.column_names().iter().map(|s| s.to_string()).collect();
    let n = headers.len();
    let grid: Vec<Vec<CellValue<'_>>> = rows
        .iter()
        .map(|&(b, r)| (0..n).map(|c| table.value(b, c, r)).collect())
        .collect();
    render_grid(&headers, &grid, format)
}

/// Renders summary rows: group columns, metric, counts, mean and interval.
pub fn render_summary(rows: &[SummaryRow], format: TextFormat) -> String {
    let mut headers: Vec<String> = rows
        .first()
        .map(|r| r.group.iter().map(|g| g.0.clone()).collect())
        .unwrap_or_default();
    headers
        .extend(["metric", "n_cells", "n_scenes", "mean", "ci_low", "ci_high"].map(String::from));
    let f = |v: Option<f64>| v.map_or(CellValue::Null, CellValue::Float);
    let grid: Vec<Vec<CellValue<'_>>> = rows
        .iter()
        .map(|r| {
            let mut line: Vec<CellValue<'_>> =
                r.group.iter().map(|g| CellValue::Str(&g.1)).collect();
            line.push(CellValue::Str(&r.metric));
            line.push(CellValue::Int(r.n_cells as i64));
            line.push(CellValue::Int(r.n_units as i64));
            line.extend([f(r.mean), f(r.ci_low), f(r.ci_high)]);
            line
        })
        .collect();
    render_grid(&headers, &grid, format)
}

/// Renders a header and rows of values in the chosen format.
pub fn render_grid(headers: &[String], grid: &[Vec<CellValue<'_>>], format: TextFormat) -> String {
    match format {
        TextFormat::Table => table_text(headers, grid),
        TextFormat::Csv => csv_text(headers, grid),
        TextFormat::Json => json_text(headers, grid),
    }
}

fn shorten(s: String) -> String {
    if s.chars().count() <= TABLE_MAX_WIDTH {
        return s;
    }
    let mut out: String = s.chars().take(TABLE_MAX_WIDTH - 1).collect();
    out.push('…');
    out
}

fn table_text(headers: &[String], grid: &[Vec<CellValue<'_>>]) -> String {
    let cells: Vec<Vec<String>> = grid
        .iter()
        .map(|row| {
            row.iter()
                .map(|v| {
                    if *v == CellValue::Null {
                        "null".to_string()
                    } else {
                        shorten(plain(v))
                    }
                })
                .collect()
        })
        .collect();
    let widths: Vec<usize> = (0..headers.len())
        .map(|c| {
            cells
                .iter()
                .map(|r| r[c].chars().count())
                .chain([headers[c].chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |vals: &[String]| -> String {
        let parts: Vec<String> = vals
            .iter()
            .zip(&widths)
            .map(|(v, w)| format!("{v:<w$}"))
            .collect();
        parts.join("  ").trim_end().to_string() + "\n"
    };
    let mut out = line(headers);
    out += &line(&widths.iter().map(|w| "-".repeat(*w)).collect::<Vec<_>>());
    cells.iter().for_each(|r| out += &line(r));
    out + &format!("({} rows)\n", grid.len())
}

fn csv_text(headers: &[String], grid: &[Vec<CellValue<'_>>]) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut write = || -> std::result::Result<(), csv::Error> {
        w.write_record(headers)?;
        for row in grid {
            w.write_record(row.iter().map(plain))?;
        }
        w.flush()?;
        Ok(())
    };
    // Writing to memory cannot fail.
    let _ = write();
    String::from_utf8_lossy(&w.into_inner().unwrap_or_default()).into_owned()
}

fn json_text(headers: &[String], grid: &[Vec<CellValue<'_>>]) -> String {
    let mut out: Vec<u8> = b"[\n".to_vec();
    let keys: Vec<String> = headers
        .iter()
        .map(|h| serde_json::to_string(h).unwrap_or_default())
        .collect();
    for (i, row) in grid.iter().enumerate() {
        out.extend_from_slice(b"  {");
        for (c, v) in row.iter().enumerate() {
            if c > 0 {
                out.extend_from_slice(b", ");
            }
            out.extend_from_slice(keys[c].as_bytes());
            out.extend_from_slice(b": ");
            // Writing to memory cannot fail.
            let _ = write_value(&mut out, v);
        }
        out.extend_from_slice(if i + 1 < grid.len() { b"},\n" } else { b"}\n" });
    }
    out.extend_from_slice(b"]\n");
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filter_parses_key_value_and_rejects_others() {
        let f: Filter = "phase=clu".parse().unwrap();
        assert_eq!(
            f,
            Filter {
                column: "phase".into(),
                value: "clu".into()
            }
        );
        assert!("phase".parse::<Filter>().is_err());
        assert!("=x".parse::<Filter>().is_err());
    }

    #[test]
    fn long_unicode_values_shorten_on_char_boundaries() {
        let s = "场景".repeat(100);
        let short = shorten(s);
        assert_eq!(short.chars().count(), TABLE_MAX_WIDTH);
        assert!(short.ends_with('…'));
    }

    #[test]
    fn json_writes_nan_as_null_and_keeps_column_order() {
        let h = vec!["z".to_string(), "a".to_string()];
        let g = vec![vec![CellValue::Float(f64::NAN), CellValue::Int(1)]];
        assert_eq!(json_text(&h, &g), "[\n  {\"z\": null, \"a\": 1}\n]\n");
    }
}
