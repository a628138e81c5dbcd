//! The in-memory cell log shared by both schemas: an Arrow schema plus record batches whose columns
//! hold only the canonical types (Utf8, Int64, Float64, List<Float64>). `normalize` brings files
//! written by other tools (pyarrow, pandas) to those types; typed views live in `bench` (and in
//! augbench-eval's `eval`).

use std::path::Path;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    ArrowPrimitiveType, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type,
    UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use arrow_array::{
    Array, ArrayRef, Float64Array, Int64Array, ListArray, RecordBatch, StringArray, new_null_array,
};
use arrow_schema::{DataType, Field, Schema, SchemaRef};

use crate::error::{CellsError, Result};
use crate::schema::{ColumnType, LogKind, known_type, metric_name};

/// One value of a cell-log column.
#[derive(Debug, Clone, PartialEq)]
pub enum CellValue<'a> {
    Null,
    Str(&'a str),
    Int(i64),
    Float(f64),
    /// A list of floats; a null item reads as NaN.
    List(Vec<f64>),
}

/// A cell log in memory: schema plus batches, every column in a canonical type.
#[derive(Debug, Clone)]
pub struct CellTable {
    schema: SchemaRef,
    batches: Vec<RecordBatch>,
}

impl CellTable {
    /// Wraps batches that already have `schema` and canonical column types.
    pub fn new(schema: SchemaRef, batches: Vec<RecordBatch>) -> Self {
        Self { schema, batches }
    }

    /// Normalizes batches read from `path` to the canonical types (see module docs).
    pub fn from_foreign(
        path: &Path,
        batches: Vec<RecordBatch>,
        schema: &SchemaRef,
    ) -> Result<Self> {
        let normalized = batches
            .iter()
            .map(|b| normalize(b, path))
            .collect::<Result<Vec<_>>>()?;
        let schema = match normalized.first() {
            Some(b) => b.schema(),
            None => normalize_schema(schema, path)?,
        };
        Ok(Self::new(schema, normalized))
    }

    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    pub fn batches(&self) -> &[RecordBatch] {
        &self.batches
    }

    pub fn num_rows(&self) -> usize {
        self.batches.iter().map(|b| b.num_rows()).sum()
    }

    /// Column names in order.
    pub fn column_names(&self) -> Vec<&str> {
        self.schema
            .fields()
            .iter()
            .map(|f| f.name().as_str())
            .collect()
    }

    /// `metric:` columns in order, with the prefix.
    pub fn metric_columns(&self) -> Vec<String> {
        self.column_names()
            .into_iter()
            .filter(|c| metric_name(c).is_some())
            .map(str::to_string)
            .collect()
    }

    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.schema.index_of(name).ok()
    }

    /// Which schema the columns follow.
    pub fn kind(&self) -> LogKind {
        LogKind::detect(self.schema.fields().iter().map(|f| f.name().as_str()))
    }

    /// Every (batch, row) position in order.
    pub fn positions(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.batches
            .iter()
            .enumerate()
            .flat_map(|(b, batch)| (0..batch.num_rows()).map(move |r| (b, r)))
    }

    /// The value at column `col` of row `row` in batch `batch`.
    pub fn value(&self, batch: usize, col: usize, row: usize) -> CellValue<'_> {
        value_at(self.batches[batch].column(col).as_ref(), row)
    }

    /// The same table with every string value passed through `f` (nulls stay null; other
    /// columns, the schema and the row order unchanged). `augbench publish` rewrites a log's
    /// machine paths with it.
    pub fn map_strings(&self, f: impl Fn(&str) -> String) -> Result<CellTable> {
        let batches = self
            .batches
            .iter()
            .map(|b| {
                let columns: Vec<ArrayRef> = b
                    .columns()
                    .iter()
                    .map(|c| match c.data_type() {
                        DataType::Utf8 => Arc::new(
                            c.as_string::<i32>()
                                .iter()
                                .map(|v| v.map(&f))
                                .collect::<StringArray>(),
                        ) as ArrayRef,
                        _ => c.clone(),
                    })
                    .collect();
                RecordBatch::try_new(b.schema(), columns).map_err(|e| CellsError::BadArgument {
                    detail: format!("cannot rebuild a cell batch: {e}"),
                    hint: "report this as a bug".into(),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(CellTable::new(self.schema.clone(), batches))
    }
}

/// Reads one value of a canonical-typed array.
pub fn value_at(array: &dyn Array, row: usize) -> CellValue<'_> {
    if array.is_null(row) {
        return CellValue::Null;
    }
    match array.data_type() {
        DataType::Utf8 => CellValue::Str(array.as_string::<i32>().value(row)),
        DataType::Int64 => CellValue::Int(array.as_primitive::<Int64Type>().value(row)),
        DataType::Float64 => CellValue::Float(array.as_primitive::<Float64Type>().value(row)),
        DataType::List(_) => {
            let item = array.as_list::<i32>().value(row);
            let floats = item.as_primitive::<Float64Type>();
            CellValue::List(floats.iter().map(|v| v.unwrap_or(f64::NAN)).collect())
        }
        _ => CellValue::Null,
    }
}

/// Brings one batch to canonical column types.
pub fn normalize(batch: &RecordBatch, path: &Path) -> Result<RecordBatch> {
    let mut fields = Vec::with_capacity(batch.num_columns());
    let mut columns = Vec::with_capacity(batch.num_columns());
    for (field, array) in batch.schema().fields().iter().zip(batch.columns()) {
        let array = normalize_array(field.name(), array, path)?;
        fields.push(Field::new(field.name(), array.data_type().clone(), true));
        columns.push(array);
    }
    let schema = Arc::new(Schema::new(fields));
    RecordBatch::try_new(schema, columns).map_err(|e| CellsError::CorruptParquet {
        path: path.to_path_buf(),
        detail: e.to_string(),
    })
}

/// The canonical schema of a file that holds no rows.
fn normalize_schema(schema: &SchemaRef, path: &Path) -> Result<SchemaRef> {
    let empty = RecordBatch::new_empty(schema.clone());
    Ok(normalize(&empty, path)?.schema())
}

fn normalize_array(name: &str, array: &ArrayRef, path: &Path) -> Result<ArrayRef> {
    let want = known_type(name);
    let unsupported = || CellsError::ColumnType {
        path: path.to_path_buf(),
        column: name.to_string(),
        expected: want
            .map_or(
                "a string, integer, float or list of floats",
                ColumnType::describe,
            )
            .to_string(),
        found: array.data_type().to_string(),
    };
    let converted: ArrayRef = match array.data_type() {
        DataType::Utf8 | DataType::Int64 | DataType::Float64
            if want != Some(ColumnType::Float64) =>
        {
            array.clone()
        }
        DataType::Float64 => array.clone(),
        DataType::List(f) if f.data_type() == &DataType::Float64 => canonical_list(array),
        DataType::Null => new_null_array(&want.unwrap_or(ColumnType::Utf8).arrow(), array.len()),
        DataType::LargeUtf8 => Arc::new(array.as_string::<i64>().iter().collect::<StringArray>()),
        DataType::Utf8View => Arc::new(array.as_string_view().iter().collect::<StringArray>()),
        DataType::Dictionary(_, _) => {
            dictionary_to_strings(name, array, path).ok_or_else(unsupported)?
        }
        DataType::Float32 => Arc::new(
            array
                .as_primitive::<Float32Type>()
                .iter()
                .map(|v| v.map(f64::from))
                .collect::<Float64Array>(),
        ),
        DataType::Int8 => ints::<Int8Type>(array, want),
        DataType::Int16 => ints::<Int16Type>(array, want),
        DataType::Int32 => ints::<Int32Type>(array, want),
        DataType::Int64 => ints::<Int64Type>(array, want),
        DataType::UInt8 => ints::<UInt8Type>(array, want),
        DataType::UInt16 => ints::<UInt16Type>(array, want),
        DataType::UInt32 => ints::<UInt32Type>(array, want),
        DataType::UInt64 => ints::<UInt64Type>(array, want),
        _ => return Err(unsupported()),
    };
    Ok(converted)
}

/// A list of floats with the canonical item field (other writers name it "element" or non-null).
fn canonical_list(array: &ArrayRef) -> ArrayRef {
    let l = array.as_list::<i32>();
    let field = Arc::new(Field::new("item", DataType::Float64, true));
    Arc::new(ListArray::new(
        field,
        l.offsets().clone(),
        l.values().clone(),
        l.nulls().cloned(),
    ))
}

/// Integers become Int64, or Float64 where the column is a known float column (metrics included).
fn ints<T: ArrowPrimitiveType>(array: &ArrayRef, want: Option<ColumnType>) -> ArrayRef {
    let prim = array.as_primitive::<T>();
    if want == Some(ColumnType::Float64) {
        let it = prim
            .iter()
            .map(|v| v.and_then(num_as_i128).map(|x| x as f64));
        Arc::new(it.collect::<Float64Array>())
    } else {
        // Values beyond i64 (only possible for UInt64) saturate; such counts do not occur in cell logs.
        let it = prim.iter().map(|v| {
            v.and_then(num_as_i128)
                .map(|x| x.clamp(i64::MIN as i128, i64::MAX as i128) as i64)
        });
        Arc::new(it.collect::<Int64Array>())
    }
}

fn num_as_i128<N: arrow_array::ArrowNativeTypeOp>(x: N) -> Option<i128> {
    x.to_i64()
        .map(i128::from)
        .or_else(|| x.to_usize().map(|u| u as i128))
}

/// Dictionary-encoded strings (pandas categoricals) become plain strings.
fn dictionary_to_strings(name: &str, array: &ArrayRef, path: &Path) -> Option<ArrayRef> {
    let dict = array.as_any_dictionary_opt()?;
    let values = normalize_array(name, dict.values(), path).ok()?;
    if values.data_type() != &DataType::Utf8 {
        return None;
    }
    let strings = values.as_string::<i32>();
    let keys = dict.normalized_keys();
    let out: StringArray = (0..array.len())
        .map(|i| (!array.is_null(i)).then(|| strings.value(keys[i])))
        .collect();
    Some(Arc::new(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Int32Array, NullArray};

    fn batch(cols: Vec<(&str, ArrayRef)>) -> RecordBatch {
        RecordBatch::try_from_iter(cols).unwrap()
    }

    #[test]
    fn map_strings_rewrites_strings_and_keeps_everything_else() {
        let b = batch(vec![
            (
                "path",
                Arc::new(StringArray::from(vec![Some("/home/a/x"), None])) as ArrayRef,
            ),
            ("n", Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef),
        ]);
        let table = CellTable::new(b.schema(), vec![b]);
        let mapped = table
            .map_strings(|s| s.replace("/home/a", "~"))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(mapped.value(0, 0, 0), CellValue::Str("~/x"));
        assert_eq!(mapped.value(0, 0, 1), CellValue::Null);
        assert_eq!(mapped.value(0, 1, 1), CellValue::Int(2));
        assert_eq!(mapped.schema(), table.schema());
    }

    #[test]
    fn null_typed_columns_take_their_known_type() {
        let b = batch(vec![
            ("git_sha", Arc::new(NullArray::new(2)) as ArrayRef),
            ("gpu_memory_gb", Arc::new(NullArray::new(2)) as ArrayRef),
            ("metric:x", Arc::new(NullArray::new(2)) as ArrayRef),
        ]);
        let n = normalize(&b, Path::new("f.parquet")).unwrap();
        assert_eq!(n.column(0).data_type(), &DataType::Utf8);
        assert_eq!(n.column(1).data_type(), &DataType::Float64);
        assert_eq!(n.column(2).data_type(), &DataType::Float64);
    }

    #[test]
    fn small_ints_widen_and_metric_ints_become_floats() {
        let b = batch(vec![
            (
                "n_samples",
                Arc::new(Int32Array::from(vec![Some(3), None])) as ArrayRef,
            ),
            (
                "metric:x",
                Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef,
            ),
        ]);
        let n = normalize(&b, Path::new("f.parquet")).unwrap();
        let t = CellTable::new(n.schema(), vec![n]);
        assert_eq!(t.value(0, 0, 0), CellValue::Int(3));
        assert_eq!(t.value(0, 0, 1), CellValue::Null);
        assert_eq!(t.value(0, 1, 1), CellValue::Float(2.0));
    }

    #[test]
    fn float_lists_get_the_canonical_item_field() {
        let plain = ListArray::from_iter_primitive::<Float64Type, _, _>(vec![Some(vec![
            Some(1.0),
            Some(2.0),
        ])]);
        let field = Arc::new(Field::new("element", DataType::Float64, true));
        let list = ListArray::new(field, plain.offsets().clone(), plain.values().clone(), None);
        let b = batch(vec![("throughputs", Arc::new(list) as ArrayRef)]);
        let n = normalize(&b, Path::new("f.parquet")).unwrap();
        assert_eq!(n.column(0).data_type(), &ColumnType::Float64List.arrow());
        let t = CellTable::new(n.schema(), vec![n]);
        assert_eq!(t.value(0, 0, 0), CellValue::List(vec![1.0, 2.0]));
    }

    #[test]
    fn unsupported_types_name_the_column() {
        let b = batch(vec![(
            "flag",
            Arc::new(arrow_array::BooleanArray::from(vec![true])) as ArrayRef,
        )]);
        let e = normalize(&b, Path::new("f.parquet")).unwrap_err();
        assert!(e.to_string().contains("'flag'"), "{e}");
    }
}
