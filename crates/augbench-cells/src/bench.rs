//! Benchmark cells: one `BenchCell` per measured (run, library, transform, scenario, mode, device,
//! shape, scope, thread policy), appended to `<output>/cells.parquet` by `append_bench_cells`, which
//! replaces a row with the same key (so `--resume` never duplicates) and rewrites the file atomically.
//! Machine-card and output-form columns are optional on read (older logs lack them).

use std::path::Path;
use std::sync::Arc;

use arrow_array::builder::{Float64Builder, ListBuilder};
use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type};
use arrow_array::{Array, ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};

use crate::error::{CellsError, Location, Result};
use crate::io::{self, Format};
use crate::schema::{
    BENCH_CARD, BENCH_FIGURE, BENCH_FIXED, BENCH_FORM, BENCH_MEDIA, BENCH_METRICS, ColumnType,
    bench_schema, metric_col,
};
use crate::table::CellTable;

/// Measured figures of a benchmark cell; `None` where not measured (slow, unsupported, error).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BenchMetrics {
    /// Median throughput (items/s).
    pub median: Option<f64>,
    pub mean: Option<f64>,
    pub std: Option<f64>,
    /// Coefficient of variation (std / mean).
    pub cv: Option<f64>,
    /// Lower end of the interval of the median throughput.
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    pub time_per_item_ms: Option<f64>,
    pub warmup_passes: Option<f64>,
    pub gpu_peak_bytes: Option<f64>,
}

impl BenchMetrics {
    fn values(&self) -> [Option<f64>; 9] {
        [
            self.median,
            self.mean,
            self.std,
            self.cv,
            self.ci_low,
            self.ci_high,
            self.time_per_item_ms,
            self.warmup_passes,
            self.gpu_peak_bytes,
        ]
    }

    fn from_values(v: [Option<f64>; 9]) -> Self {
        let [
            median,
            mean,
            std,
            cv,
            ci_low,
            ci_high,
            time_per_item_ms,
            warmup_passes,
            gpu_peak_bytes,
        ] = v;
        Self {
            median,
            mean,
            std,
            cv,
            ci_low,
            ci_high,
            time_per_item_ms,
            warmup_passes,
            gpu_peak_bytes,
        }
    }
}

/// The machine card of the job that measured a cell (`BENCH_CARD` columns). Empty strings are
/// written as null; a log without these columns reads as the default.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CellCard {
    /// SIMD extensions, space-separated (`sse4_2 avx2 avx512f`).
    pub cpu_simd: String,
    pub physical_cores: Option<u64>,
    pub governor: String,
    pub kernel: String,
    /// `yes`, `no`, or empty when it cannot be told.
    pub hypervisor: String,
    /// `version sha target opt-level`.
    pub augbench_build: String,
    pub load_per_thread_before: Option<f64>,
    pub load_per_thread_after: Option<f64>,
    pub steal_percent_before: Option<f64>,
    pub steal_percent_after: Option<f64>,
}

impl CellCard {
    fn strings(&self) -> [Option<&str>; 5] {
        [
            Some(self.cpu_simd.as_str()),
            Some(self.governor.as_str()),
            Some(self.kernel.as_str()),
            Some(self.hypervisor.as_str()),
            Some(self.augbench_build.as_str()),
        ]
        .map(|s| s.filter(|v| !v.is_empty()))
    }

    fn figures(&self) -> [Option<f64>; 4] {
        [
            self.load_per_thread_before,
            self.load_per_thread_after,
            self.steal_percent_before,
            self.steal_percent_after,
        ]
    }
}

/// What the micro check saw of the library's own output, outside the timed runs (`BENCH_FORM`
/// columns); `None` where not known (pipeline rows, older logs, workers that cannot tell).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct OutputForm {
    /// Whether the output was already contiguous (false: a strided view or lazy work).
    pub contiguous: Option<bool>,
    /// Share (0–1) of apply + force spent forcing the output.
    pub force_share: Option<f64>,
}

/// A cell's headline figure (`BENCH_FIGURE` columns): the estimator's name (empty where the
/// row has no figure, or the log predates the columns) and the figure with its rerun interval.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CellFigure {
    pub estimator: String,
    pub value: Option<f64>,
    pub low: Option<f64>,
    pub high: Option<f64>,
}

/// One benchmark cell. Empty `gpu_name` and `git_sha` are written as null and read back as "".
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BenchCell {
    // Identifying key (one row per distinct value of these fields).
    pub run_id: String,
    pub library: String,
    pub library_version: String,
    pub transform: String,
    pub scenario: String,
    /// `micro` or `pipeline`.
    pub mode: String,
    /// `image` or `video`.
    pub media: String,
    pub device: String,
    pub channels: u64,
    pub items: u64,
    pub runs: u64,
    pub workers: u64,
    pub batch_size: u64,
    pub scope: String,
    pub thread_policy: String,
    // Outcome and context.
    /// `ok`, `slow`, `unsupported` or `error`.
    pub status: String,
    pub cpu_name: String,
    pub cpu_cores: u64,
    pub ram_gb: f64,
    pub gpu_name: String,
    pub gpu_memory_gb: Option<f64>,
    pub os: String,
    pub rustc_version: String,
    pub toolkit_version: String,
    pub git_sha: String,
    pub timestamp_utc: String,
    /// Throughput of each timed run (items/s), in run order.
    pub throughputs: Vec<f64>,
    pub metrics: BenchMetrics,
    pub card: CellCard,
    pub form: OutputForm,
    /// Video: frames per clip (`BENCH_MEDIA`); `None` for images and logs written before it.
    pub clip_length: Option<u64>,
    /// The headline figure; empty in logs written before it.
    pub figure: CellFigure,
}

impl BenchCell {
    /// The cell's headline figure as every reader shows it (`stats::headline`): its figure, or
    /// for a log without one the median, marked as such.
    pub fn headline(&self) -> Option<augbench_stats::Headline> {
        augbench_stats::headline(augbench_stats::Recorded {
            figure: self.figure.value,
            estimator: Some(self.figure.estimator.as_str()).filter(|e| !e.is_empty()),
            figure_low: self.figure.low,
            figure_high: self.figure.high,
            median: self.metrics.median,
            rerun_low: self.metrics.ci_low,
            rerun_high: self.metrics.ci_high,
        })
    }

    /// The identifying key, as text, for de-duplication.
    pub fn key(&self) -> [String; 15] {
        [
            self.run_id.clone(),
            self.library.clone(),
            self.library_version.clone(),
            self.transform.clone(),
            self.scenario.clone(),
            self.mode.clone(),
            self.media.clone(),
            self.device.clone(),
            self.channels.to_string(),
            self.items.to_string(),
            self.runs.to_string(),
            self.workers.to_string(),
            self.batch_size.to_string(),
            self.scope.clone(),
            self.thread_policy.clone(),
        ]
    }
}

/// What an append did.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct AppendReport {
    pub path: std::path::PathBuf,
    pub rows_before: usize,
    /// New rows added at the end.
    pub appended: usize,
    /// Existing rows replaced in place by a newer row with the same key.
    pub replaced: usize,
    pub rows_after: usize,
}

/// Appends cells to the Parquet log at `path` (created if missing). A cell whose key is already in
/// the log replaces the older row in place; the file is rewritten atomically. Not safe against two
/// processes appending to the same file at once.
pub fn append_bench_cells(path: &Path, cells: &[BenchCell]) -> Result<AppendReport> {
    let mut all = if path.exists() {
        read_bench_cells(path)?
    } else {
        Vec::new()
    };
    let rows_before = all.len();
    let mut index: std::collections::HashMap<[String; 15], usize> =
        all.iter().enumerate().map(|(i, c)| (c.key(), i)).collect();
    let (mut appended, mut replaced) = (0, 0);
    for c in cells {
        match index.get(&c.key()) {
            Some(&i) => {
                all[i] = c.clone();
                replaced += usize::from(i < rows_before);
            }
            None => {
                index.insert(c.key(), all.len());
                all.push(c.clone());
                appended += 1;
            }
        }
    }
    io::write_table(&to_table(&all), path, Format::Parquet)?;
    Ok(AppendReport {
        path: path.to_path_buf(),
        rows_before,
        appended,
        replaced,
        rows_after: all.len(),
    })
}

/// Reads every benchmark cell of a log (Parquet or JSON Lines, by suffix).
pub fn read_bench_cells(path: &Path) -> Result<Vec<BenchCell>> {
    from_table(&io::read_table(path)?, path)
}

/// Builds the benchmark table (fixed columns, throughputs list, then the `metric:` columns).
pub fn to_table(cells: &[BenchCell]) -> CellTable {
    let schema = bench_schema();
    let s = |f: fn(&BenchCell) -> &str| -> ArrayRef {
        Arc::new(cells.iter().map(|c| Some(f(c))).collect::<StringArray>())
    };
    let so = |f: fn(&BenchCell) -> &str| -> ArrayRef {
        Arc::new(
            cells
                .iter()
                .map(|c| Some(f(c)).filter(|v| !v.is_empty()))
                .collect::<StringArray>(),
        )
    };
    let i = |f: fn(&BenchCell) -> u64| -> ArrayRef {
        Arc::new(
            cells
                .iter()
                .map(|c| Some(i64::try_from(f(c)).unwrap_or(i64::MAX)))
                .collect::<Int64Array>(),
        )
    };
    let x = |f: fn(&BenchCell) -> Option<f64>| -> ArrayRef {
        Arc::new(cells.iter().map(f).collect::<Float64Array>())
    };
    let mut cols: Vec<ArrayRef> = vec![
        s(|c| &c.run_id),
        s(|c| &c.library),
        s(|c| &c.library_version),
        s(|c| &c.transform),
        s(|c| &c.scenario),
        s(|c| &c.mode),
        s(|c| &c.media),
        s(|c| &c.device),
        i(|c| c.channels),
        i(|c| c.items),
        i(|c| c.runs),
        i(|c| c.workers),
        i(|c| c.batch_size),
        s(|c| &c.scope),
        s(|c| &c.thread_policy),
        s(|c| &c.status),
        s(|c| &c.cpu_name),
        i(|c| c.cpu_cores),
        x(|c| Some(c.ram_gb)),
        so(|c| &c.gpu_name),
        x(|c| c.gpu_memory_gb),
        s(|c| &c.os),
        s(|c| &c.rustc_version),
        s(|c| &c.toolkit_version),
        so(|c| &c.git_sha),
        s(|c| &c.timestamp_utc),
        throughputs(cells),
    ];
    for k in 0..BENCH_METRICS.len() {
        cols.push(Arc::new(
            cells
                .iter()
                .map(|c| c.metrics.values()[k])
                .collect::<Float64Array>(),
        ));
    }
    cols.extend(card_columns(cells));
    cols.extend(form_columns(cells));
    cols.push(Arc::new(
        cells
            .iter()
            .map(|c| c.clip_length.map(|n| i64::try_from(n).unwrap_or(i64::MAX)))
            .collect::<Int64Array>(),
    ));
    cols.extend(figure_columns(cells));
    // Every column was built from the same cells with the schema's types.
    let batches = RecordBatch::try_new(schema.clone(), cols)
        .map(|b| vec![b])
        .unwrap_or_default();
    CellTable::new(schema, batches)
}

/// The `BENCH_CARD` columns, in their order.
fn card_columns(cells: &[BenchCell]) -> Vec<ArrayRef> {
    let text = |k: usize| -> ArrayRef {
        Arc::new(
            cells
                .iter()
                .map(|c| c.card.strings()[k])
                .collect::<StringArray>(),
        )
    };
    let figure = |k: usize| -> ArrayRef {
        Arc::new(
            cells
                .iter()
                .map(|c| c.card.figures()[k])
                .collect::<Float64Array>(),
        )
    };
    let cores: ArrayRef = Arc::new(
        cells
            .iter()
            .map(|c| {
                c.card
                    .physical_cores
                    .map(|n| i64::try_from(n).unwrap_or(i64::MAX))
            })
            .collect::<Int64Array>(),
    );
    vec![
        text(0),
        cores,
        text(1),
        text(2),
        text(3),
        text(4),
        figure(0),
        figure(1),
        figure(2),
        figure(3),
    ]
}

/// The `BENCH_FORM` columns, in their order (contiguous as 1/0).
fn form_columns(cells: &[BenchCell]) -> [ArrayRef; 2] {
    [
        Arc::new(
            cells
                .iter()
                .map(|c| c.form.contiguous.map(i64::from))
                .collect::<Int64Array>(),
        ),
        Arc::new(
            cells
                .iter()
                .map(|c| c.form.force_share)
                .collect::<Float64Array>(),
        ),
    ]
}

/// The `BENCH_FIGURE` columns, in their order.
fn figure_columns(cells: &[BenchCell]) -> [ArrayRef; 4] {
    let x = |f: fn(&CellFigure) -> Option<f64>| -> ArrayRef {
        Arc::new(cells.iter().map(|c| f(&c.figure)).collect::<Float64Array>())
    };
    [
        Arc::new(
            cells
                .iter()
                .map(|c| Some(c.figure.estimator.as_str()).filter(|e| !e.is_empty()))
                .collect::<StringArray>(),
        ),
        x(|f| f.value),
        x(|f| f.low),
        x(|f| f.high),
    ]
}

fn throughputs(cells: &[BenchCell]) -> ArrayRef {
    let mut b = ListBuilder::new(Float64Builder::new());
    for c in cells {
        b.values().append_slice(&c.throughputs);
        b.append(true);
    }
    Arc::new(b.finish())
}

/// Reads benchmark cells from a table; every fixed and metric column must be present and typed.
pub fn from_table(table: &CellTable, path: &Path) -> Result<Vec<BenchCell>> {
    let idx = column_indices(table, path)?;
    let card = optional_indices(table, path, BENCH_CARD)?;
    let form = optional_indices(table, path, BENCH_FORM)?;
    let media = optional_indices(table, path, BENCH_MEDIA)?;
    let figure = optional_indices(table, path, BENCH_FIGURE)?;
    let mut out = Vec::with_capacity(table.num_rows());
    let mut row0 = 0u64;
    for batch in table.batches() {
        let v = View {
            batch,
            idx: &idx,
            card: &card,
            form: &form,
            media: &media,
            figure: &figure,
            path,
            row0,
        };
        for r in 0..batch.num_rows() {
            out.push(v.cell(r)?);
        }
        row0 += batch.num_rows() as u64;
    }
    Ok(out)
}

/// Column positions of the fixed columns then the metric columns, in schema order.
fn column_indices(table: &CellTable, path: &Path) -> Result<Vec<usize>> {
    let metric_cols: Vec<(String, crate::schema::ColumnType)> = BENCH_METRICS
        .iter()
        .map(|m| (metric_col(m), crate::schema::ColumnType::Float64))
        .collect();
    let wanted = BENCH_FIXED
        .iter()
        .map(|(n, t)| (n.to_string(), *t))
        .chain(metric_cols);
    wanted
        .map(|(name, ty)| {
            let i = table
                .column_index(&name)
                .ok_or_else(|| CellsError::MissingColumn {
                    path: path.to_path_buf(),
                    column: name.clone(),
                })?;
            let found = table.schema().field(i).data_type();
            if *found != ty.arrow() {
                return Err(CellsError::ColumnType {
                    path: path.to_path_buf(),
                    column: name,
                    expected: ty.describe().to_string(),
                    found: found.to_string(),
                });
            }
            Ok(i)
        })
        .collect()
}

/// Positions of optional columns (`BENCH_CARD`, `BENCH_FORM`); a present column must have its type.
fn optional_indices(
    table: &CellTable,
    path: &Path,
    columns: &[(&str, ColumnType)],
) -> Result<Vec<Option<usize>>> {
    columns
        .iter()
        .map(|(name, ty)| {
            let Some(i) = table.column_index(name) else {
                return Ok(None);
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
            Ok(Some(i))
        })
        .collect()
}

struct View<'a> {
    batch: &'a RecordBatch,
    idx: &'a [usize],
    /// Positions of the `BENCH_CARD` columns, `None` where the log lacks one.
    card: &'a [Option<usize>],
    /// Positions of the `BENCH_FORM` columns, likewise.
    form: &'a [Option<usize>],
    /// Positions of the `BENCH_MEDIA` columns, likewise.
    media: &'a [Option<usize>],
    /// Positions of the `BENCH_FIGURE` columns, likewise.
    figure: &'a [Option<usize>],
    path: &'a Path,
    row0: u64,
}

impl View<'_> {
    fn col(&self, k: usize) -> &dyn Array {
        self.batch.column(self.idx[k]).as_ref()
    }

    fn s(&self, k: usize, r: usize) -> String {
        let a = self.col(k).as_string::<i32>();
        if a.is_valid(r) {
            a.value(r).to_string()
        } else {
            String::new()
        }
    }

    fn u(&self, k: usize, r: usize) -> Result<u64> {
        let a = self.col(k).as_primitive::<Int64Type>();
        let v = if a.is_valid(r) { a.value(r) } else { 0 };
        u64::try_from(v).map_err(|_| CellsError::BadValue {
            path: self.path.to_path_buf(),
            at: Location::Row(self.row0 + r as u64 + 1),
            column: BENCH_FIXED[k].0.to_string(),
            expected: "a non-negative integer",
            found: v.to_string(),
        })
    }

    fn f(&self, k: usize, r: usize) -> Option<f64> {
        let a = self.col(k).as_primitive::<Float64Type>();
        a.is_valid(r).then(|| a.value(r))
    }

    fn list(&self, k: usize, r: usize) -> Vec<f64> {
        let a = self.col(k).as_list::<i32>();
        if a.is_null(r) {
            return Vec::new();
        }
        a.value(r)
            .as_primitive::<Float64Type>()
            .iter()
            .map(|v| v.unwrap_or(f64::NAN))
            .collect()
    }

    fn cell(&self, r: usize) -> Result<BenchCell> {
        let m0 = BENCH_FIXED.len();
        let metrics: [Option<f64>; 9] = std::array::from_fn(|k| self.f(m0 + k, r));
        Ok(BenchCell {
            run_id: self.s(0, r),
            library: self.s(1, r),
            library_version: self.s(2, r),
            transform: self.s(3, r),
            scenario: self.s(4, r),
            mode: self.s(5, r),
            media: self.s(6, r),
            device: self.s(7, r),
            channels: self.u(8, r)?,
            items: self.u(9, r)?,
            runs: self.u(10, r)?,
            workers: self.u(11, r)?,
            batch_size: self.u(12, r)?,
            scope: self.s(13, r),
            thread_policy: self.s(14, r),
            status: self.s(15, r),
            cpu_name: self.s(16, r),
            cpu_cores: self.u(17, r)?,
            ram_gb: self.f(18, r).unwrap_or(f64::NAN),
            gpu_name: self.s(19, r),
            gpu_memory_gb: self.f(20, r),
            os: self.s(21, r),
            rustc_version: self.s(22, r),
            toolkit_version: self.s(23, r),
            git_sha: self.s(24, r),
            timestamp_utc: self.s(25, r),
            throughputs: self.list(26, r),
            metrics: BenchMetrics::from_values(metrics),
            card: self.card_of(r),
            form: self.form_of(r)?,
            clip_length: self.clip_length_of(r)?,
            figure: self.figure_of(r),
        })
    }

    fn figure_of(&self, r: usize) -> CellFigure {
        let col = |k: usize| self.figure[k].map(|i| self.batch.column(i).as_ref());
        let x = |k: usize| {
            col(k)
                .map(|a| a.as_primitive::<Float64Type>())
                .filter(|a| a.is_valid(r))
                .map(|a| a.value(r))
        };
        CellFigure {
            estimator: col(0)
                .map(|a| a.as_string::<i32>())
                .filter(|a| a.is_valid(r))
                .map_or_else(String::new, |a| a.value(r).to_string()),
            value: x(1),
            low: x(2),
            high: x(3),
        }
    }

    fn clip_length_of(&self, r: usize) -> Result<Option<u64>> {
        let Some(i) = self.media[0] else {
            return Ok(None);
        };
        let a = self.batch.column(i).as_primitive::<Int64Type>();
        if !a.is_valid(r) {
            return Ok(None);
        }
        let v = a.value(r);
        match u64::try_from(v) {
            Ok(n) if n > 0 => Ok(Some(n)),
            _ => Err(CellsError::BadValue {
                path: self.path.to_path_buf(),
                at: Location::Row(self.row0 + r as u64 + 1),
                column: BENCH_MEDIA[0].0.to_string(),
                expected: "frames per clip (a whole number >= 1) or null",
                found: v.to_string(),
            }),
        }
    }

    fn form_of(&self, r: usize) -> Result<OutputForm> {
        let col = |k: usize| self.form[k].map(|i| self.batch.column(i).as_ref());
        let flag = col(0)
            .map(|a| a.as_primitive::<Int64Type>())
            .filter(|a| a.is_valid(r))
            .map(|a| a.value(r));
        let contiguous = match flag {
            None => None,
            Some(0) => Some(false),
            Some(1) => Some(true),
            Some(v) => {
                return Err(CellsError::BadValue {
                    path: self.path.to_path_buf(),
                    at: Location::Row(self.row0 + r as u64 + 1),
                    column: BENCH_FORM[0].0.to_string(),
                    expected: "1 (contiguous), 0 (a view or lazy) or null",
                    found: v.to_string(),
                });
            }
        };
        let force_share = col(1)
            .map(|a| a.as_primitive::<Float64Type>())
            .filter(|a| a.is_valid(r))
            .map(|a| a.value(r));
        Ok(OutputForm {
            contiguous,
            force_share,
        })
    }

    fn card_of(&self, r: usize) -> CellCard {
        let col = |k: usize| self.card[k].map(|i| self.batch.column(i).as_ref());
        let text = |k: usize| {
            col(k)
                .map(|a| a.as_string::<i32>())
                .filter(|a| a.is_valid(r))
                .map_or_else(String::new, |a| a.value(r).to_string())
        };
        let figure = |k: usize| {
            col(k)
                .map(|a| a.as_primitive::<Float64Type>())
                .filter(|a| a.is_valid(r))
                .map(|a| a.value(r))
        };
        let cores = col(1)
            .map(|a| a.as_primitive::<Int64Type>())
            .filter(|a| a.is_valid(r))
            .and_then(|a| u64::try_from(a.value(r)).ok());
        CellCard {
            cpu_simd: text(0),
            physical_cores: cores,
            governor: text(2),
            kernel: text(3),
            hypervisor: text(4),
            augbench_build: text(5),
            load_per_thread_before: figure(6),
            load_per_thread_after: figure(7),
            steal_percent_before: figure(8),
            steal_percent_after: figure(9),
        }
    }
}
