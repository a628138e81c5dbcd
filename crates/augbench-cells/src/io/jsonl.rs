//! JSON Lines reading and writing of cell logs. One object per line, keys in column order. NaN and
//! ±inf are written as null (JSON has no NaN); on read, Python's `NaN`/`Infinity` tokens are also
//! accepted and read as null. Column types come from the schema registry or are inferred per column,
//! and a value whose type differs from its column's is an error naming the line.

use std::fmt;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::sync::Arc;

use arrow_array::builder::{Float64Builder, ListBuilder};
use arrow_array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{Field, Schema};
use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::Value;

use augbench_core::json_text::{self, non_finite_to_null};
use augbench_host::fsutil;

use crate::error::{CellsError, Location, Result};
use crate::schema::{ColumnType, known_type};
use crate::table::{CellTable, CellValue};

/// One JSON object with its keys in file order.
pub struct OrderedObject(pub Vec<(String, Value)>);

impl<'de> Deserialize<'de> for OrderedObject {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = OrderedObject;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut m: A,
            ) -> std::result::Result<OrderedObject, A::Error> {
                let mut out = Vec::with_capacity(m.size_hint().unwrap_or(16));
                while let Some((k, v)) = m.next_entry::<String, Value>()? {
                    out.push((k, v));
                }
                Ok(OrderedObject(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// Parses one line; Python-style `NaN`, `Infinity`, `-Infinity` tokens are read as null (strings
/// holding those words are untouched). `offset` is the line's byte offset in the file, so an
/// error names line, column and byte.
pub fn parse_line(line: &str, path: &Path, lineno: u64, offset: u64) -> Result<OrderedObject> {
    let repaired = non_finite_to_null(line);
    serde_json::from_str::<OrderedObject>(&repaired.text).map_err(|e| {
        let at = json_text::error_at_repaired(line, &repaired, &e);
        let mut detail = json_text::message(&e);
        if line.trim_start().starts_with('[') {
            detail.push_str(" (a JSON array: JSON Lines holds one object per line)");
        }
        CellsError::MalformedJson {
            path: path.to_path_buf(),
            at: Location::Line(lineno),
            column: at.map_or_else(String::new, |a| {
                format!(", column {} (byte {})", a.column, offset + a.byte as u64)
            }),
            detail,
        }
    })
}

/// Calls `f(line_number, object)` for every non-blank line of a JSON Lines file.
pub fn for_each_object(
    path: &Path,
    mut f: impl FnMut(u64, OrderedObject) -> Result<()>,
) -> Result<()> {
    let file = std::fs::File::open(path).map_err(|e| CellsError::io(path, "read", e))?;
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let mut line = String::new();
    let (mut lineno, mut offset) = (0u64, 0u64);
    loop {
        line.clear();
        let n = reader.read_line(&mut line).map_err(|e| match e.kind() {
            std::io::ErrorKind::InvalidData => CellsError::MalformedJson {
                path: path.to_path_buf(),
                at: Location::Line(lineno + 1),
                column: String::new(),
                detail: "not valid UTF-8".into(),
            },
            _ => CellsError::io(path, "read", e),
        })?;
        if n == 0 {
            return Ok(());
        }
        lineno += 1;
        if !line.trim().is_empty() {
            f(lineno, parse_line(line.trim_end(), path, lineno, offset)?)?;
        }
        offset += n as u64;
    }
}

/// Reads a JSON Lines cell log into a table.
pub fn read(path: &Path) -> Result<CellTable> {
    let mut cols: Vec<ColBuilder> = Vec::new();
    let mut index = std::collections::HashMap::<String, usize>::new();
    let mut rows = 0usize;
    for_each_object(path, |lineno, obj| {
        for (key, value) in obj.0 {
            let i = *index.entry(key.clone()).or_insert_with(|| {
                cols.push(ColBuilder::new(key, rows));
                cols.len() - 1
            });
            cols[i].push(value, rows, lineno, path)?;
        }
        rows += 1;
        Ok(())
    })?;
    let (fields, arrays): (Vec<Field>, Vec<ArrayRef>) = cols
        .into_iter()
        .map(|c| {
            let name = c.name.clone();
            let a = c.finish(rows);
            (Field::new(name, a.data_type().clone(), true), a)
        })
        .unzip();
    let schema = Arc::new(Schema::new(fields));
    let batches = if rows == 0 {
        vec![]
    } else {
        let opts = arrow_array::RecordBatchOptions::new().with_row_count(Some(rows));
        let batch =
            RecordBatch::try_new_with_options(schema.clone(), arrays, &opts).map_err(|e| {
                CellsError::MalformedJson {
                    path: path.to_path_buf(),
                    at: Location::Line(0),
                    column: String::new(),
                    detail: e.to_string(),
                }
            })?;
        vec![batch]
    };
    Ok(CellTable::new(schema, batches))
}

/// The values of one column while a JSON Lines file is read.
enum ColData {
    Nulls,
    Str(Vec<Option<String>>),
    Int(Vec<Option<i64>>),
    Float(Vec<Option<f64>>),
    List(Vec<Option<Vec<Option<f64>>>>),
}

struct ColBuilder {
    name: String,
    known: Option<ColumnType>,
    data: ColData,
    first_line: u64,
}

impl ColBuilder {
    fn new(name: String, rows_before: usize) -> Self {
        let known = known_type(&name);
        let mut b = Self {
            name,
            known,
            data: ColData::Nulls,
            first_line: 0,
        };
        if let Some(t) = known {
            b.data = b.empty_of(t);
        }
        b.pad(rows_before);
        b
    }

    fn empty_of(&self, t: ColumnType) -> ColData {
        match t {
            ColumnType::Utf8 => ColData::Str(Vec::new()),
            ColumnType::Int64 => ColData::Int(Vec::new()),
            ColumnType::Float64 => ColData::Float(Vec::new()),
            ColumnType::Float64List => ColData::List(Vec::new()),
        }
    }

    fn pad(&mut self, rows: usize) {
        match &mut self.data {
            ColData::Nulls => {}
            ColData::Str(v) => v.resize(rows, None),
            ColData::Int(v) => v.resize(rows, None),
            ColData::Float(v) => v.resize(rows, None),
            ColData::List(v) => v.resize(rows, None),
        }
    }

    fn type_of(data: &ColData) -> Option<ColumnType> {
        match data {
            ColData::Nulls => None,
            ColData::Str(_) => Some(ColumnType::Utf8),
            ColData::Int(_) => Some(ColumnType::Int64),
            ColData::Float(_) => Some(ColumnType::Float64),
            ColData::List(_) => Some(ColumnType::Float64List),
        }
    }

    /// Appends `value` as row `row` (earlier missing rows become null).
    fn push(&mut self, value: Value, row: usize, lineno: u64, path: &Path) -> Result<()> {
        let vt = json_type(&value, path, lineno, &self.name)?;
        let Some(vt) = vt else { return Ok(()) }; // null: padding covers it
        if matches!(self.data, ColData::Nulls) {
            self.data = self.empty_of(vt);
        }
        if self.first_line == 0 {
            self.first_line = lineno;
        }
        self.pad(row);
        self.promote_if_needed(vt);
        let have = Self::type_of(&self.data).unwrap_or(vt);
        match (&mut self.data, value) {
            (ColData::Str(v), Value::String(s)) => v.push(Some(s)),
            (ColData::Int(v), Value::Number(n)) if n.is_i64() => v.push(n.as_i64()),
            (ColData::Float(v), Value::Number(n)) => v.push(n.as_f64()),
            (ColData::List(v), Value::Array(a)) => {
                v.push(Some(a.iter().map(Value::as_f64).collect()))
            }
            _ => return Err(self.type_change(have, vt, lineno, path)),
        }
        Ok(())
    }

    /// An inferred integer column becomes a float column at its first float value.
    fn promote_if_needed(&mut self, vt: ColumnType) {
        if self.known.is_none()
            && vt == ColumnType::Float64
            && let ColData::Int(v) = &self.data
        {
            self.data = ColData::Float(v.iter().map(|x| x.map(|i| i as f64)).collect());
        }
    }

    fn type_change(
        &self,
        have: ColumnType,
        found: ColumnType,
        lineno: u64,
        path: &Path,
    ) -> CellsError {
        if let Some(known) = self.known {
            return CellsError::BadValue {
                path: path.to_path_buf(),
                at: Location::Line(lineno),
                column: self.name.clone(),
                expected: known.describe(),
                found: found.describe().to_string(),
            };
        }
        CellsError::TypeChange {
            path: path.to_path_buf(),
            at: Location::Line(lineno),
            column: self.name.clone(),
            found: found.describe(),
            expected: have.describe(),
            first: Location::Line(self.first_line.max(1)),
        }
    }

    fn finish(mut self, rows: usize) -> ArrayRef {
        if matches!(self.data, ColData::Nulls) {
            self.data = self.empty_of(self.known.unwrap_or(ColumnType::Utf8));
        }
        self.pad(rows);
        match self.data {
            ColData::Nulls => Arc::new(StringArray::new_null(rows)),
            ColData::Str(v) => Arc::new(v.into_iter().collect::<StringArray>()),
            ColData::Int(v) => Arc::new(v.into_iter().collect::<Int64Array>()),
            ColData::Float(v) => Arc::new(v.into_iter().collect::<Float64Array>()),
            ColData::List(v) => {
                let mut b = ListBuilder::new(Float64Builder::new());
                for item in v {
                    match item {
                        Some(xs) => {
                            b.values().extend(xs);
                            b.append(true);
                        }
                        None => b.append(false),
                    }
                }
                Arc::new(b.finish())
            }
        }
    }
}

/// The column type a JSON value belongs to (None for null); booleans and objects are rejected.
fn json_type(v: &Value, path: &Path, lineno: u64, column: &str) -> Result<Option<ColumnType>> {
    let bad = |found: &str| CellsError::BadValue {
        path: path.to_path_buf(),
        at: Location::Line(lineno),
        column: column.to_string(),
        expected: "a string, a number, a list of numbers or null",
        found: found.to_string(),
    };
    Ok(match v {
        Value::Null => None,
        Value::String(_) => Some(ColumnType::Utf8),
        Value::Number(n) if n.is_i64() => Some(ColumnType::Int64),
        Value::Number(_) => Some(ColumnType::Float64),
        Value::Array(a) if a.iter().all(|x| x.is_number() || x.is_null()) => {
            Some(ColumnType::Float64List)
        }
        Value::Array(_) => return Err(bad("a list holding non-numbers")),
        Value::Bool(_) => return Err(bad("a boolean")),
        Value::Object(_) => return Err(bad("an object")),
    })
}

/// Writes the table as JSON Lines, atomically; non-finite floats become null.
pub fn write(table: &CellTable, path: &Path) -> Result<()> {
    let names: Vec<String> = table
        .column_names()
        .iter()
        .map(|n| serde_json::to_string(n).unwrap_or_default())
        .collect();
    fsutil::write_streamed(path, |w| {
        for (b, r) in table.positions() {
            write_row(w, table, &names, b, r).map_err(|e| CellsError::io(path, "write", e))?;
        }
        Ok(())
    })
    .map_err(CellsError::from_write)
}

fn write_row(
    w: &mut impl Write,
    table: &CellTable,
    names: &[String],
    b: usize,
    r: usize,
) -> std::io::Result<()> {
    w.write_all(b"{")?;
    for (c, name) in names.iter().enumerate() {
        if c > 0 {
            w.write_all(b", ")?;
        }
        w.write_all(name.as_bytes())?;
        w.write_all(b": ")?;
        write_value(w, &table.value(b, c, r))?;
    }
    w.write_all(b"}\n")
}

/// JSON text of a value; serde_json writes non-finite floats as null.
pub fn write_value(w: &mut impl Write, v: &CellValue<'_>) -> std::io::Result<()> {
    let res = match v {
        CellValue::Null => serde_json::to_writer(&mut *w, &()),
        CellValue::Str(s) => serde_json::to_writer(&mut *w, s),
        CellValue::Int(i) => serde_json::to_writer(&mut *w, i),
        CellValue::Float(f) => serde_json::to_writer(&mut *w, f),
        CellValue::List(xs) => serde_json::to_writer(&mut *w, xs),
    };
    res.map_err(std::io::Error::other)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_nonfinite_tokens_are_read_as_null_and_strings_stay() {
        let s = r#"{"a": NaN, "b": -Infinity, "c": "NaN \" Infinity", "d": Infinity}"#;
        let o = parse_line(s, Path::new("f"), 1, 0).unwrap();
        let v: Vec<&Value> = o.0.iter().map(|(_, v)| v).collect();
        assert_eq!(v[0], &Value::Null);
        assert_eq!(v[1], &Value::Null);
        assert_eq!(v[2], &Value::String("NaN \" Infinity".into()));
        assert_eq!(v[3], &Value::Null);
    }

    #[test]
    fn ordered_object_keeps_key_order() {
        let o = parse_line(r#"{"z": 1, "a": 2}"#, Path::new("f"), 1, 0).unwrap();
        let keys: Vec<&str> = o.0.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["z", "a"]);
    }

    #[test]
    fn malformed_line_names_the_line() {
        let e = parse_line("{\"a\": ", Path::new("f.jsonl"), 7, 100)
            .err()
            .unwrap();
        assert!(
            e.to_string()
                .starts_with("f.jsonl: line 7, column 7 (byte 106): malformed JSON"),
            "{e}"
        );
    }
}
