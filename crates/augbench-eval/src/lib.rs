//! augbench-eval: the evaluation cell engine behind `augbench cells`. Per-sample metric rows
//! (JSON Lines, CSV, Parquet) are grouped into per-(scene, phase) evaluation cells (the seed
//! contract) stamped with a system card; any cell log, evaluation or benchmark, is merged, shown
//! and summarized with scene-bootstrap intervals. Tables, files and errors are augbench-cells'.

pub mod eval;
pub mod group;
pub mod merge;
pub mod render;
pub mod rows;
pub mod stamp;
pub mod summary;

pub use eval::{EvalCell, EvalLog, PreAggregated};
pub use group::{GroupOptions, GroupOutcome, Grouper};
pub use merge::{MergeOutcome, merge_files};
pub use stamp::{CardSource, CardStamp};
