//! The column registry of both cell-log schemas: the evaluation cells' fixed columns (the seed
//! contract, in its order; augbench-eval builds its log from them), the benchmark cells' fixed
//! columns, the `metric:` namespace, the identifying keys of a cell, and the Arrow types every
//! known column must have (what `io` and `table` normalize a file to).

use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema, SchemaRef};

/// Prefix of every metric column; it keeps metrics apart from the fixed columns.
pub const METRIC_PREFIX: &str = "metric:";

/// The canonical value types of a cell-log column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnType {
    /// UTF-8 string (Arrow `Utf8`).
    Utf8,
    /// 64-bit signed integer (counts).
    Int64,
    /// 64-bit float (figures and metrics).
    Float64,
    /// List of 64-bit floats (per-run throughputs).
    Float64List,
}

impl ColumnType {
    /// The Arrow type written to Parquet.
    pub fn arrow(self) -> DataType {
        match self {
            ColumnType::Utf8 => DataType::Utf8,
            ColumnType::Int64 => DataType::Int64,
            ColumnType::Float64 => DataType::Float64,
            ColumnType::Float64List => {
                DataType::List(Arc::new(Field::new("item", DataType::Float64, true)))
            }
        }
    }

    /// The canonical type of an Arrow type, if it is one of ours.
    pub fn from_arrow(dt: &DataType) -> Option<Self> {
        match dt {
            DataType::Utf8 => Some(ColumnType::Utf8),
            DataType::Int64 => Some(ColumnType::Int64),
            DataType::Float64 => Some(ColumnType::Float64),
            DataType::List(f) if f.data_type() == &DataType::Float64 => {
                Some(ColumnType::Float64List)
            }
            _ => None,
        }
    }

    /// Short human name used in error messages.
    pub fn describe(self) -> &'static str {
        match self {
            ColumnType::Utf8 => "a string",
            ColumnType::Int64 => "an integer",
            ColumnType::Float64 => "a number",
            ColumnType::Float64List => "a list of numbers",
        }
    }
}

/// Fixed columns of an evaluation cell, in the contract's order.
pub const EVAL_FIXED: &[(&str, ColumnType)] = &[
    ("model_name", ColumnType::Utf8),
    ("task", ColumnType::Utf8),
    ("scene_id", ColumnType::Utf8),
    ("phase", ColumnType::Utf8),
    ("difficulty", ColumnType::Utf8),
    ("n_samples", ColumnType::Int64),
    ("frame_budget", ColumnType::Int64),
    ("latency_ms_mean", ColumnType::Float64),
    ("gpu_name", ColumnType::Utf8),
    ("gpu_memory_gb", ColumnType::Float64),
    ("precision", ColumnType::Utf8),
    ("batch_size", ColumnType::Int64),
    ("toolkit_version", ColumnType::Utf8),
    ("git_sha", ColumnType::Utf8),
    ("timestamp_utc", ColumnType::Utf8),
];

/// Columns that identify one evaluation cell.
pub const EVAL_KEY: &[&str] = &["model_name", "task", "scene_id", "phase", "frame_budget"];

/// Fixed columns of a benchmark cell, in order.
pub const BENCH_FIXED: &[(&str, ColumnType)] = &[
    ("run_id", ColumnType::Utf8),
    ("library", ColumnType::Utf8),
    ("library_version", ColumnType::Utf8),
    ("transform", ColumnType::Utf8),
    ("scenario", ColumnType::Utf8),
    ("mode", ColumnType::Utf8),
    ("media", ColumnType::Utf8),
    ("device", ColumnType::Utf8),
    ("channels", ColumnType::Int64),
    ("items", ColumnType::Int64),
    ("runs", ColumnType::Int64),
    ("workers", ColumnType::Int64),
    ("batch_size", ColumnType::Int64),
    ("scope", ColumnType::Utf8),
    ("thread_policy", ColumnType::Utf8),
    ("status", ColumnType::Utf8),
    ("cpu_name", ColumnType::Utf8),
    ("cpu_cores", ColumnType::Int64),
    ("ram_gb", ColumnType::Float64),
    ("gpu_name", ColumnType::Utf8),
    ("gpu_memory_gb", ColumnType::Float64),
    ("os", ColumnType::Utf8),
    ("rustc_version", ColumnType::Utf8),
    ("toolkit_version", ColumnType::Utf8),
    ("git_sha", ColumnType::Utf8),
    ("timestamp_utc", ColumnType::Utf8),
    ("throughputs", ColumnType::Float64List),
];

/// Columns that identify one benchmark cell (the first 15 fixed columns).
pub const BENCH_KEY: &[&str] = &[
    "run_id",
    "library",
    "library_version",
    "transform",
    "scenario",
    "mode",
    "media",
    "device",
    "channels",
    "items",
    "runs",
    "workers",
    "batch_size",
    "scope",
    "thread_policy",
];

/// Machine-card columns of a benchmark cell, after the metrics: written always, read when present
/// (logs written before the card lack them).
pub const BENCH_CARD: &[(&str, ColumnType)] = &[
    ("cpu_simd", ColumnType::Utf8),
    ("physical_cores", ColumnType::Int64),
    ("governor", ColumnType::Utf8),
    ("kernel", ColumnType::Utf8),
    ("hypervisor", ColumnType::Utf8),
    ("augbench_build", ColumnType::Utf8),
    ("load_per_thread_before", ColumnType::Float64),
    ("load_per_thread_after", ColumnType::Float64),
    ("steal_percent_before", ColumnType::Float64),
    ("steal_percent_after", ColumnType::Float64),
];

/// Output-form columns of a benchmark cell, after the card: what the micro check saw of the
/// library's own output, outside the timed runs. `output_contiguous` is 1 (already contiguous),
/// 0 (a strided view or lazy work the row's forcing finished) or null (not known; the log's
/// types hold no booleans); `force_share` is the share (0–1) of apply + force spent forcing.
/// Written always, read when present (logs written before them lack them).
pub const BENCH_FORM: &[(&str, ColumnType)] = &[
    ("output_contiguous", ColumnType::Int64),
    ("force_share", ColumnType::Float64),
];

/// Media column of a benchmark cell, after the output form: `clip_length` is the frames per clip
/// of a video row (what its frames/s multiplies by), null for images. Written always, read when
/// present (logs written before it lack it, and their video rows show no frames/s).
pub const BENCH_MEDIA: &[(&str, ColumnType)] = &[("clip_length", ColumnType::Int64)];

/// Headline-figure columns of a benchmark cell, after the media column: the estimator's name and
/// the figure with its rerun interval (results' `figure_*`). Written always (null for rows
/// without a figure), read when present: logs written before them read as their median
/// (`augbench_stats::headline`).
pub const BENCH_FIGURE: &[(&str, ColumnType)] = &[
    ("figure_estimator", ColumnType::Utf8),
    ("metric:figure", ColumnType::Float64),
    ("metric:figure_low", ColumnType::Float64),
    ("metric:figure_high", ColumnType::Float64),
];

/// Metric names of a benchmark cell, in column order (each becomes `metric:<name>`).
pub const BENCH_METRICS: &[&str] = &[
    "median",
    "mean",
    "std",
    "cv",
    "ci_low",
    "ci_high",
    "time_per_item_ms",
    "warmup_passes",
    "gpu_peak_bytes",
];

/// Which of the two schemas a set of columns follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogKind {
    Eval,
    Bench,
    Other,
}

impl LogKind {
    /// Detects the schema from column names: all key columns of a schema must be present.
    pub fn detect<'a>(names: impl Iterator<Item = &'a str> + Clone) -> Self {
        let has = |key: &str| names.clone().any(|n| n == key);
        if BENCH_KEY.iter().all(|k| has(k)) {
            LogKind::Bench
        } else if EVAL_KEY.iter().all(|k| has(k)) {
            LogKind::Eval
        } else {
            LogKind::Other
        }
    }

    /// The fixed columns of the schema, in order.
    pub fn fixed(self) -> &'static [(&'static str, ColumnType)] {
        match self {
            LogKind::Eval => EVAL_FIXED,
            LogKind::Bench => BENCH_FIXED,
            LogKind::Other => &[],
        }
    }

    /// The columns identifying one cell.
    pub fn key(self) -> &'static [&'static str] {
        match self {
            LogKind::Eval => EVAL_KEY,
            LogKind::Bench => BENCH_KEY,
            LogKind::Other => &[],
        }
    }
}

/// Namespaced column name for a metric: `metric:absrel`.
pub fn metric_col(name: &str) -> String {
    format!("{METRIC_PREFIX}{name}")
}

/// The metric name of a `metric:` column, or `None` for any other column.
pub fn metric_name(column: &str) -> Option<&str> {
    column.strip_prefix(METRIC_PREFIX)
}

/// The type a known column must have: metrics are float64; fixed columns of either schema have theirs.
pub fn known_type(column: &str) -> Option<ColumnType> {
    if column.starts_with(METRIC_PREFIX) {
        return Some(ColumnType::Float64);
    }
    EVAL_FIXED
        .iter()
        .chain(BENCH_FIXED)
        .chain(BENCH_CARD)
        .chain(BENCH_FORM)
        .chain(BENCH_MEDIA)
        .chain(BENCH_FIGURE)
        .find(|(n, _)| *n == column)
        .map(|(_, t)| *t)
}

/// The Arrow schema of a benchmark log.
pub fn bench_schema() -> SchemaRef {
    let fixed = BENCH_FIXED
        .iter()
        .map(|(n, t)| Field::new(*n, t.arrow(), true));
    let metrics = BENCH_METRICS
        .iter()
        .map(|m| Field::new(metric_col(m), DataType::Float64, true));
    let card = BENCH_CARD
        .iter()
        .chain(BENCH_FORM)
        .chain(BENCH_MEDIA)
        .chain(BENCH_FIGURE)
        .map(|(n, t)| Field::new(*n, t.arrow(), true));
    Arc::new(Schema::new(
        fixed.chain(metrics).chain(card).collect::<Vec<_>>(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_types_cover_metrics_and_both_schemas() {
        assert_eq!(known_type("metric:x"), Some(ColumnType::Float64));
        assert_eq!(known_type("n_samples"), Some(ColumnType::Int64));
        assert_eq!(known_type("throughputs"), Some(ColumnType::Float64List));
        assert_eq!(known_type("whatever"), None);
    }

    #[test]
    fn detects_schema_kind_from_key_columns() {
        assert_eq!(LogKind::detect(EVAL_KEY.iter().copied()), LogKind::Eval);
        assert_eq!(LogKind::detect(BENCH_KEY.iter().copied()), LogKind::Bench);
        assert_eq!(LogKind::detect(["scene_id"].into_iter()), LogKind::Other);
    }

    #[test]
    fn bench_key_is_the_head_of_bench_fixed() {
        let head: Vec<&str> = BENCH_FIXED
            .iter()
            .take(BENCH_KEY.len())
            .map(|(n, _)| *n)
            .collect();
        assert_eq!(head, BENCH_KEY);
    }
}
