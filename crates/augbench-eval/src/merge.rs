//! Merging cell logs: rows are concatenated under the union schema (fixed columns in their schema's
//! order, then other columns, then `metric:` columns in first-seen order; a column missing from a
//! file is null there). A column whose type differs between files is an error; duplicate cells
//! (same identifying key) are all kept and reported so the caller can warn.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, new_null_array};
use arrow_schema::{DataType, Field, Schema};

use augbench_cells::error::{CellsError, Result};
use augbench_cells::io::read_table;
use augbench_cells::schema::{LogKind, known_type, metric_name};
use augbench_cells::table::{CellTable, CellValue};

/// A cell key that occurs more than once in the merged log.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DuplicateCell {
    /// `column=value` pairs of the key, comma separated.
    pub key: String,
    pub count: usize,
    /// Files holding the key, in input order (a file may appear once even if it holds it twice).
    pub files: Vec<PathBuf>,
}

/// Merged table plus the duplicates found.
#[derive(Debug, Clone)]
pub struct MergeOutcome {
    pub table: CellTable,
    pub duplicates: Vec<DuplicateCell>,
}

/// Reads and merges the given logs.
pub fn merge_files(paths: &[PathBuf]) -> Result<MergeOutcome> {
    let tables = paths
        .iter()
        .map(|p| Ok((p.clone(), read_table(p)?)))
        .collect::<Result<Vec<_>>>()?;
    merge_tables(&tables)
}

/// Merges tables already in memory; each is named by the path it came from.
pub fn merge_tables(inputs: &[(PathBuf, CellTable)]) -> Result<MergeOutcome> {
    let fields = union_fields(inputs)?;
    let schema = Arc::new(Schema::new(fields));
    let mut batches = Vec::new();
    for (_, t) in inputs {
        for b in t.batches() {
            batches.push(conform(b, &schema));
        }
    }
    let table = CellTable::new(schema, batches);
    let duplicates = find_duplicates(inputs, table.kind());
    Ok(MergeOutcome { table, duplicates })
}

/// The union of columns, ordered and type-checked.
fn union_fields(inputs: &[(PathBuf, CellTable)]) -> Result<Vec<Field>> {
    let mut seen: HashMap<String, (DataType, &Path)> = HashMap::new();
    let mut order: Vec<String> = Vec::new();
    for (path, t) in inputs {
        for f in t.schema().fields() {
            check_known_type(path, f)?;
            match seen.get(f.name()) {
                None => {
                    seen.insert(f.name().clone(), (f.data_type().clone(), path));
                    order.push(f.name().clone());
                }
                Some((dt, first)) if dt != f.data_type() => {
                    return Err(CellsError::MergeConflict {
                        column: f.name().clone(),
                        first: first.to_path_buf(),
                        first_type: dt.to_string(),
                        second: path.clone(),
                        second_type: f.data_type().to_string(),
                    });
                }
                Some(_) => {}
            }
        }
    }
    let kind = LogKind::detect(order.iter().map(String::as_str));
    let fixed: Vec<&str> = kind
        .fixed()
        .iter()
        .map(|(n, _)| *n)
        .filter(|n| seen.contains_key(*n))
        .collect();
    let others = order
        .iter()
        .filter(|n| !fixed.contains(&n.as_str()) && metric_name(n).is_none());
    let metrics = order.iter().filter(|n| metric_name(n).is_some());
    let names: Vec<&str> = fixed
        .iter()
        .copied()
        .chain(others.chain(metrics).map(String::as_str))
        .collect();
    Ok(names
        .into_iter()
        .map(|n| Field::new(n, seen[n].0.clone(), true))
        .collect())
}

/// A fixed (or metric) column must have the type of its schema.
fn check_known_type(path: &Path, f: &Field) -> Result<()> {
    match known_type(f.name()) {
        Some(t) if t.arrow() != *f.data_type() => Err(CellsError::ColumnType {
            path: path.to_path_buf(),
            column: f.name().clone(),
            expected: t.describe().to_string(),
            found: f.data_type().to_string(),
        }),
        _ => Ok(()),
    }
}

/// Re-lays a batch onto the union schema (missing columns become nulls).
fn conform(batch: &RecordBatch, schema: &Arc<Schema>) -> RecordBatch {
    let cols: Vec<ArrayRef> = schema
        .fields()
        .iter()
        .map(|f| match batch.schema().index_of(f.name()) {
            Ok(i) => batch.column(i).clone(),
            Err(_) => new_null_array(f.data_type(), batch.num_rows()),
        })
        .collect();
    let opts = arrow_array::RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
    // Types were checked by `union_fields`, so this cannot fail.
    RecordBatch::try_new_with_options(schema.clone(), cols, &opts)
        .unwrap_or_else(|_| RecordBatch::new_empty(schema.clone()))
}

fn key_text(v: &CellValue<'_>) -> String {
    match v {
        CellValue::Null => "null".into(),
        CellValue::Str(s) => (*s).to_string(),
        CellValue::Int(i) => i.to_string(),
        CellValue::Float(f) => format!("{f:?}"),
        CellValue::List(xs) => format!("{xs:?}"),
    }
}

fn find_duplicates(inputs: &[(PathBuf, CellTable)], kind: LogKind) -> Vec<DuplicateCell> {
    let key_cols = kind.key();
    if key_cols.is_empty() {
        return Vec::new();
    }
    let mut found: HashMap<String, DuplicateCell> = HashMap::new();
    let mut order = Vec::new();
    for (path, t) in inputs {
        let idx: Vec<Option<usize>> = key_cols.iter().map(|k| t.column_index(k)).collect();
        for (b, r) in t.positions() {
            let parts: Vec<String> = key_cols
                .iter()
                .zip(&idx)
                .map(|(k, i)| {
                    format!(
                        "{k}={}",
                        i.map_or("null".into(), |i| key_text(&t.value(b, i, r)))
                    )
                })
                .collect();
            let key = parts.join(", ");
            let entry = found.entry(key.clone()).or_insert_with(|| {
                order.push(key.clone());
                DuplicateCell {
                    key,
                    count: 0,
                    files: Vec::new(),
                }
            });
            entry.count += 1;
            if !entry.files.contains(path) {
                entry.files.push(path.clone());
            }
        }
    }
    order
        .into_iter()
        .filter_map(|k| found.remove(&k))
        .filter(|d| d.count > 1)
        .collect()
}
