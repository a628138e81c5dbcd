//! Evaluation cells (the seed contract): the typed `EvalCell` row, the `EvalLog` that owns the
//! union of metric columns, pre-aggregated cells for clip-level tasks, the log's Arrow schema and
//! conversion to and from augbench-cells' table, so they are written and read as Parquet or JSON
//! Lines. Enum-like values (phase, difficulty) are stored as their plain label: pass
//! `value.to_string()`.

use std::path::Path;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type};
use arrow_array::{Array, ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema, SchemaRef};

use augbench_cells::error::{CellsError, Location, Result};
use augbench_cells::io::{self, Format, WriteResult};
use augbench_cells::schema::{ColumnType, EVAL_FIXED, metric_col, metric_name};
use augbench_cells::table::CellTable;
use augbench_host::facts::AUGBENCH_VERSION;

use crate::stamp::CardStamp;

/// One (model, task, scene, phase, frame_budget) cell.
#[derive(Debug, Clone, PartialEq)]
pub struct EvalCell {
    pub model_name: String,
    pub task: String,
    pub scene_id: String,
    pub phase: String,
    pub difficulty: Option<String>,
    /// Number of samples averaged into the cell.
    pub n_samples: i64,
    /// 0 = full clip or per-frame task; > 0 = subsampled clip size.
    pub frame_budget: i64,
    pub latency_ms_mean: Option<f64>,
    pub gpu_name: Option<String>,
    pub gpu_memory_gb: Option<f64>,
    pub precision: Option<String>,
    pub batch_size: Option<i64>,
    pub toolkit_version: String,
    pub git_sha: Option<String>,
    /// ISO-8601 time the cell was made.
    pub timestamp_utc: String,
    /// Metric values aligned with [`EvalLog::metric_names`]; missing trailing entries are null.
    pub metrics: Vec<Option<f64>>,
}

/// A list of evaluation cells and the union of their metric names, in first-seen order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EvalLog {
    /// Metric names without the `metric:` prefix, in column order.
    pub metric_names: Vec<String>,
    pub cells: Vec<EvalCell>,
}

/// A cell whose metrics were aggregated by the caller (clip-level tasks): NaN values are kept.
#[derive(Debug, Clone, PartialEq)]
pub struct PreAggregated {
    pub model_name: String,
    pub task: String,
    pub scene_id: String,
    pub phase: String,
    pub n_samples: i64,
    pub difficulty: Option<String>,
    pub latency_ms_mean: Option<f64>,
    pub git_sha: Option<String>,
    /// Defaults to now when `None`.
    pub timestamp_utc: Option<String>,
    pub frame_budget: i64,
    /// Metric name → value; `Some(NaN)` stays NaN (attempted but undefined), `None` is null.
    pub metrics: Vec<(String, Option<f64>)>,
}

/// The Arrow schema of an evaluation log with the given metric names (without prefix).
pub fn eval_schema(metric_names: &[String]) -> SchemaRef {
    let fixed = EVAL_FIXED
        .iter()
        .map(|(n, t)| Field::new(*n, t.arrow(), true));
    let metrics = metric_names
        .iter()
        .map(|m| Field::new(metric_col(m), DataType::Float64, true));
    Arc::new(Schema::new(fixed.chain(metrics).collect::<Vec<_>>()))
}

/// Current UTC time in ISO-8601 with microseconds and `+00:00`.
pub fn now_utc() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, false)
}

impl EvalLog {
    /// The column position of a metric, adding it when new.
    pub fn metric_index(&mut self, name: &str) -> usize {
        match self.metric_names.iter().position(|n| n == name) {
            Some(i) => i,
            None => {
                self.metric_names.push(name.to_string());
                self.metric_names.len() - 1
            }
        }
    }

    /// The value of metric `name` in cell `cell` (None when missing or null).
    pub fn metric(&self, cell: usize, name: &str) -> Option<f64> {
        let i = self.metric_names.iter().position(|n| n == name)?;
        self.cells.get(cell)?.metrics.get(i).copied().flatten()
    }

    /// Adds a pre-aggregated cell with the complete fixed schema, stamped with `stamp`.
    pub fn push_pre_aggregated(&mut self, p: PreAggregated, stamp: &CardStamp) {
        let mut metrics = Vec::new();
        for (name, value) in &p.metrics {
            let i = self.metric_index(name);
            if metrics.len() <= i {
                metrics.resize(i + 1, None);
            }
            metrics[i] = *value;
        }
        self.cells.push(EvalCell {
            model_name: p.model_name,
            task: p.task,
            scene_id: p.scene_id,
            phase: p.phase,
            difficulty: p.difficulty,
            n_samples: p.n_samples,
            frame_budget: p.frame_budget,
            latency_ms_mean: p.latency_ms_mean,
            gpu_name: stamp.gpu_name.clone(),
            gpu_memory_gb: stamp.gpu_memory_gb,
            precision: stamp.precision.clone(),
            batch_size: stamp.batch_size,
            toolkit_version: AUGBENCH_VERSION.to_string(),
            git_sha: p.git_sha,
            timestamp_utc: p.timestamp_utc.unwrap_or_else(now_utc),
            metrics,
        });
    }

    /// Converts to the generic table (one batch; fixed columns in contract order, then metrics).
    pub fn to_table(&self) -> CellTable {
        let schema = eval_schema(&self.metric_names);
        let c = &self.cells;
        let s = |f: fn(&EvalCell) -> Option<&str>| -> ArrayRef {
            Arc::new(c.iter().map(f).collect::<StringArray>())
        };
        let i = |f: fn(&EvalCell) -> Option<i64>| -> ArrayRef {
            Arc::new(c.iter().map(f).collect::<Int64Array>())
        };
        let x = |f: fn(&EvalCell) -> Option<f64>| -> ArrayRef {
            Arc::new(c.iter().map(f).collect::<Float64Array>())
        };
        let mut cols: Vec<ArrayRef> = vec![
            s(|e| Some(&e.model_name)),
            s(|e| Some(&e.task)),
            s(|e| Some(&e.scene_id)),
            s(|e| Some(&e.phase)),
            s(|e| e.difficulty.as_deref()),
            i(|e| Some(e.n_samples)),
            i(|e| Some(e.frame_budget)),
            x(|e| e.latency_ms_mean),
            s(|e| e.gpu_name.as_deref()),
            x(|e| e.gpu_memory_gb),
            s(|e| e.precision.as_deref()),
            i(|e| e.batch_size),
            s(|e| Some(&e.toolkit_version)),
            s(|e| e.git_sha.as_deref()),
            s(|e| Some(&e.timestamp_utc)),
        ];
        for k in 0..self.metric_names.len() {
            cols.push(Arc::new(
                c.iter()
                    .map(|e| e.metrics.get(k).copied().flatten())
                    .collect::<Float64Array>(),
            ));
        }
        // Every column was built from the same cells with the schema's types.
        let batches = RecordBatch::try_new(schema.clone(), cols)
            .map(|b| vec![b])
            .unwrap_or_default();
        CellTable::new(schema, batches)
    }

    /// Reads evaluation cells from a table; `path` names the source in errors.
    pub fn from_table(table: &CellTable, path: &Path) -> Result<Self> {
        if table.num_rows() == 0 && table.column_names().is_empty() {
            return Ok(Self::default()); // an empty JSON Lines file
        }
        let names = table.column_names();
        let metric_cols: Vec<usize> = (0..names.len())
            .filter(|&i| metric_name(names[i]).is_some())
            .collect();
        let metric_names = metric_cols
            .iter()
            .filter_map(|&i| metric_name(names[i]))
            .map(str::to_string)
            .collect();
        check_metric_columns(table, &metric_cols, path)?;
        let mut cells = Vec::with_capacity(table.num_rows());
        let mut row0 = 0u64;
        for batch in table.batches() {
            let v = BatchView::new(batch, path, row0)?;
            for r in 0..batch.num_rows() {
                cells.push(v.cell(r, &metric_cols)?);
            }
            row0 += batch.num_rows() as u64;
        }
        check_fixed_columns(table, path)?;
        Ok(EvalLog {
            metric_names,
            cells,
        })
    }

    /// Writes the log (see [`io::write_table`] for formats and the NaN rule).
    pub fn write(&self, path: &Path, format: Format) -> Result<WriteResult> {
        io::write_table(&self.to_table(), path, format)
    }

    /// Reads a log written by augbench or by any tool following the contract.
    pub fn read(path: &Path) -> Result<Self> {
        Self::from_table(&io::read_table(path)?, path)
    }
}

/// Every `metric:*` column must be a double column: any other type (a `list<double>` passes
/// normalisation) is refused naming the column, never read as a double.
fn check_metric_columns(table: &CellTable, metric_cols: &[usize], path: &Path) -> Result<()> {
    for &i in metric_cols {
        let field = table.schema().field(i);
        if *field.data_type() != ColumnType::Float64.arrow() {
            return Err(CellsError::ColumnType {
                path: path.to_path_buf(),
                column: field.name().clone(),
                expected: ColumnType::Float64.describe().to_string(),
                found: field.data_type().to_string(),
            });
        }
    }
    Ok(())
}

/// Every fixed column must be present with its contract type.
fn check_fixed_columns(table: &CellTable, path: &Path) -> Result<()> {
    for (name, ty) in EVAL_FIXED {
        let Some(i) = table.column_index(name) else {
            return Err(CellsError::MissingColumn {
                path: path.to_path_buf(),
                column: name.to_string(),
            });
        };
        let found = table.schema().field(i).data_type();
        if *found != ty.arrow() {
            return Err(CellsError::ColumnType {
                path: path.to_path_buf(),
                column: name.to_string(),
                expected: ty.describe().to_string(),
                found: found.to_string(),
            });
        }
    }
    Ok(())
}

/// Position of a fixed column in `EVAL_FIXED`, computed at compile time (`ix!("task")`).
#[allow(
    clippy::panic,
    reason = "evaluated at compile time: a wrong name fails the build"
)]
const fn eval_index(name: &str) -> usize {
    let mut i = 0;
    while i < EVAL_FIXED.len() {
        let (a, b) = (EVAL_FIXED[i].0.as_bytes(), name.as_bytes());
        if a.len() == b.len() {
            let mut j = 0;
            while j < a.len() && a[j] == b[j] {
                j += 1;
            }
            if j == a.len() {
                return i;
            }
        }
        i += 1;
    }
    panic!("not a fixed evaluation column")
}

macro_rules! ix {
    ($name:literal) => {
        const { eval_index($name) }
    };
}

/// Typed access to the fixed columns of one batch (columns in `EVAL_FIXED` order).
struct BatchView<'a> {
    path: &'a Path,
    row0: u64,
    batch: &'a RecordBatch,
    cols: Vec<&'a dyn Array>,
}

impl<'a> BatchView<'a> {
    fn new(batch: &'a RecordBatch, path: &'a Path, row0: u64) -> Result<Self> {
        let schema = batch.schema();
        let mut cols = Vec::with_capacity(EVAL_FIXED.len());
        for (name, ty) in EVAL_FIXED {
            let i = schema
                .index_of(name)
                .map_err(|_| CellsError::MissingColumn {
                    path: path.to_path_buf(),
                    column: name.to_string(),
                })?;
            if *schema.field(i).data_type() != ty.arrow() {
                return Err(CellsError::ColumnType {
                    path: path.to_path_buf(),
                    column: name.to_string(),
                    expected: ty.describe().to_string(),
                    found: schema.field(i).data_type().to_string(),
                });
            }
            cols.push(batch.column(i).as_ref());
        }
        Ok(Self {
            path,
            row0,
            batch,
            cols,
        })
    }

    fn opt_str(&self, c: usize, r: usize) -> Option<String> {
        let a = self.cols[c].as_string::<i32>();
        a.is_valid(r).then(|| a.value(r).to_string())
    }

    fn opt_i64(&self, c: usize, r: usize) -> Option<i64> {
        let a = self.cols[c].as_primitive::<Int64Type>();
        a.is_valid(r).then(|| a.value(r))
    }

    fn opt_f64(&self, c: usize, r: usize) -> Option<f64> {
        let a = self.cols[c].as_primitive::<Float64Type>();
        a.is_valid(r).then(|| a.value(r))
    }

    fn required<T>(&self, v: Option<T>, c: usize, r: usize) -> Result<T> {
        v.ok_or_else(|| CellsError::BadValue {
            path: self.path.to_path_buf(),
            at: Location::Row(self.row0 + r as u64 + 1),
            column: EVAL_FIXED[c].0.to_string(),
            expected: "a value (the column is required)",
            found: "null".into(),
        })
    }

    fn cell(&self, r: usize, metric_cols: &[usize]) -> Result<EvalCell> {
        let req_s = |c: usize| self.required(self.opt_str(c, r), c, r);
        Ok(EvalCell {
            model_name: req_s(ix!("model_name"))?,
            task: req_s(ix!("task"))?,
            scene_id: req_s(ix!("scene_id"))?,
            phase: req_s(ix!("phase"))?,
            difficulty: self.opt_str(ix!("difficulty"), r),
            n_samples: self.required(self.opt_i64(ix!("n_samples"), r), ix!("n_samples"), r)?,
            frame_budget: self.opt_i64(ix!("frame_budget"), r).unwrap_or(0),
            latency_ms_mean: self.opt_f64(ix!("latency_ms_mean"), r),
            gpu_name: self.opt_str(ix!("gpu_name"), r),
            gpu_memory_gb: self.opt_f64(ix!("gpu_memory_gb"), r),
            precision: self.opt_str(ix!("precision"), r),
            batch_size: self.opt_i64(ix!("batch_size"), r),
            toolkit_version: self.opt_str(ix!("toolkit_version"), r).unwrap_or_default(),
            git_sha: self.opt_str(ix!("git_sha"), r),
            timestamp_utc: self.opt_str(ix!("timestamp_utc"), r).unwrap_or_default(),
            metrics: metric_cols
                .iter()
                .map(|&c| {
                    let a = self.batch.column(c).as_primitive::<Float64Type>();
                    a.is_valid(r).then(|| a.value(r))
                })
                .collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pre(metrics: Vec<(&str, Option<f64>)>) -> PreAggregated {
        PreAggregated {
            model_name: "m".into(),
            task: "video_depth".into(),
            scene_id: "s".into(),
            phase: "clu".into(),
            n_samples: 16,
            difficulty: None,
            latency_ms_mean: None,
            git_sha: None,
            timestamp_utc: Some("2026-01-01T00:00:00+00:00".into()),
            frame_budget: 25,
            metrics: metrics
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        }
    }

    #[test]
    fn eval_schema_starts_with_the_contract_columns_in_order() {
        let s = eval_schema(&["absrel".into()]);
        let names: Vec<&str> = s.fields().iter().map(|f| f.name().as_str()).collect();
        assert_eq!(names[0], "model_name");
        assert_eq!(names[14], "timestamp_utc");
        assert_eq!(names[15], "metric:absrel");
        assert_eq!(s.field(5).data_type(), &DataType::Int64);
    }

    #[test]
    fn pre_aggregated_keeps_nan_and_unions_metrics() {
        let mut log = EvalLog::default();
        let stamp = CardStamp {
            gpu_name: Some("G".into()),
            ..Default::default()
        };
        log.push_pre_aggregated(
            pre(vec![("opw", Some(f64::NAN)), ("absrel", Some(0.1))]),
            &stamp,
        );
        log.push_pre_aggregated(pre(vec![("tae", Some(1.0))]), &stamp);
        assert_eq!(log.metric_names, ["opw", "absrel", "tae"]);
        assert!(log.metric(0, "opw").unwrap().is_nan());
        assert_eq!(log.metric(1, "absrel"), None);
        assert_eq!(log.cells[1].gpu_name.as_deref(), Some("G"));
        assert_eq!(log.cells[0].frame_budget, 25);
    }

    #[test]
    fn table_round_trip_is_identity_with_ragged_metrics() {
        let mut log = EvalLog::default();
        log.push_pre_aggregated(pre(vec![("a", Some(1.0))]), &CardStamp::default());
        log.push_pre_aggregated(pre(vec![("b", Some(2.0))]), &CardStamp::default());
        let back = EvalLog::from_table(&log.to_table(), Path::new("mem")).unwrap();
        assert_eq!(back.metric_names, log.metric_names);
        assert_eq!(back.cells[0].metrics, vec![Some(1.0), None]);
        assert_eq!(back.cells[1].metrics, vec![None, Some(2.0)]);
    }
}
