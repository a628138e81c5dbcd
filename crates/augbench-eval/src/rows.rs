//! Per-sample row files fed to the grouper: JSON Lines (one object per line), CSV (header row;
//! numbers parsed, `scene`/`phase`/`difficulty`/`id` kept as text) and Parquet (columnar, fast path).

use std::path::Path;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::{DataType, Schema};

use augbench_cells::error::{CellsError, Location, Result};
use augbench_cells::table::normalize;

use crate::group::{FieldValue, GroupOptions, GroupOutcome, Grouper};

/// Groups the per-sample rows of `path` (format by suffix: .jsonl/.ndjson/.json, .csv, .parquet/.pq).
pub fn group_file(path: &Path, opts: GroupOptions) -> Result<GroupOutcome> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    if !path.exists() {
        return Err(CellsError::NotFound {
            path: path.to_path_buf(),
        });
    }
    let mut g = Grouper::new(opts, path);
    match ext.as_str() {
        "jsonl" | "ndjson" | "json" => group_jsonl(path, &mut g)?,
        "csv" => group_csv(path, &mut g)?,
        "parquet" | "pq" => group_parquet(path, &mut g)?,
        _ => {
            return Err(CellsError::UnsupportedSuffix {
                path: path.to_path_buf(),
            });
        }
    }
    g.finish()
}

fn group_jsonl(path: &Path, g: &mut Grouper) -> Result<()> {
    augbench_cells::io::jsonl::for_each_object(path, |lineno, obj| {
        let fields: Vec<_> = obj
            .0
            .iter()
            .map(|(k, v)| (k.as_str(), FieldValue::from_json(v)))
            .collect();
        g.push_row(&fields, Location::Line(lineno))
    })
}

/// Keys whose CSV text is a label even when it looks like a number ("0001" stays "0001").
const TEXT_KEYS: &[&str] = &["id", "scene", "phase", "difficulty"];

fn csv_value<'a>(key: &str, text: &'a str) -> FieldValue<'a> {
    if text.is_empty() {
        return FieldValue::Null;
    }
    if TEXT_KEYS.contains(&key) {
        return FieldValue::Str(text);
    }
    if let Ok(i) = text.parse::<i64>() {
        return FieldValue::Int(i);
    }
    text.parse::<f64>()
        .map_or(FieldValue::Str(text), FieldValue::Float)
}

fn group_csv(path: &Path, g: &mut Grouper) -> Result<()> {
    let bad = |e: csv::Error| {
        let line = e.position().map_or(0, |p| p.line());
        CellsError::MalformedCsv {
            path: path.to_path_buf(),
            at: Location::Line(line),
            detail: e.to_string(),
        }
    };
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_path(path)
        .map_err(bad)?;
    let headers: Vec<String> = reader
        .headers()
        .map_err(bad)?
        .iter()
        .map(str::to_string)
        .collect();
    let mut record = csv::StringRecord::new();
    while reader.read_record(&mut record).map_err(bad)? {
        let line = record.position().map_or(0, |p| p.line());
        let fields: Vec<_> = headers
            .iter()
            .zip(record.iter())
            .map(|(h, t)| (h.as_str(), csv_value(h, t)))
            .collect();
        g.push_row(&fields, Location::Line(line))?;
    }
    Ok(())
}

fn group_parquet(path: &Path, g: &mut Grouper) -> Result<()> {
    let (_, batches) = augbench_cells::io::parquet::read_batches_dictionary(path)?;
    group_batches(g, &batches, path)
}

/// Feeds Parquet batches (from `read_batches_dictionary`) to the grouper; string columns may stay
/// dictionary-encoded, other columns are normalized to the canonical types.
pub fn group_batches(g: &mut Grouper, batches: &[RecordBatch], path: &Path) -> Result<()> {
    let mut offset = 0u64;
    for b in batches {
        g.push_batch(&normalize_keeping_dictionaries(b, path)?, offset)?;
        offset += b.num_rows() as u64;
    }
    Ok(())
}

fn normalize_keeping_dictionaries(batch: &RecordBatch, path: &Path) -> Result<RecordBatch> {
    let is_dict = |dt: &DataType| matches!(dt, DataType::Dictionary(_, v) if **v == DataType::Utf8);
    let schema = batch.schema();
    let plain: Vec<usize> = (0..batch.num_columns())
        .filter(|&i| !is_dict(schema.field(i).data_type()))
        .collect();
    let normalized = normalize(&batch.project(&plain).map_err(|e| corrupt(path, e))?, path)?;
    let (mut fields, mut columns) = (Vec::new(), Vec::new());
    let mut next_plain = 0;
    for (i, f) in schema.fields().iter().enumerate() {
        if is_dict(f.data_type()) {
            fields.push(f.as_ref().clone());
            columns.push(batch.column(i).clone());
        } else {
            fields.push(normalized.schema().field(next_plain).clone());
            columns.push(normalized.column(next_plain).clone());
            next_plain += 1;
        }
    }
    let opts = arrow_array::RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
    RecordBatch::try_new_with_options(Arc::new(Schema::new(fields)), columns, &opts)
        .map_err(|e| corrupt(path, e))
}

fn corrupt(path: &Path, e: arrow_schema::ArrowError) -> CellsError {
    CellsError::CorruptParquet {
        path: path.to_path_buf(),
        detail: e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_keeps_labels_as_text_and_parses_numbers() {
        assert_eq!(csv_value("scene", "0001"), FieldValue::Str("0001"));
        assert_eq!(csv_value("absrel", "3"), FieldValue::Int(3));
        assert_eq!(csv_value("absrel", "0.5"), FieldValue::Float(0.5));
        assert_eq!(csv_value("absrel", "n/a"), FieldValue::Str("n/a"));
        assert_eq!(csv_value("absrel", ""), FieldValue::Null);
    }
}
