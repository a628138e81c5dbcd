//! augbench-cells: the cell-log engine. One engine, two schemas — evaluation cells (per-(scene, phase)
//! metric cells of the seed contract) and benchmark cells (one row per measured transform) — written
//! and read as typed Parquet (arrow-rs) or JSON Lines, grouped, merged and summarized with bootstrap
//! intervals. Parquet keeps NaN and ±inf; JSON Lines writes them as null (JSON has no NaN).

pub mod bench;
pub mod error;
pub mod eval;
pub mod from_results;
pub mod group;
pub mod io;
pub mod merge;
pub mod render;
pub mod rows;
pub mod schema;
pub mod summary;
pub mod system_card;
pub mod table;

pub use bench::{
    AppendReport, BenchCell, BenchMetrics, CellCard, CellFigure, OutputForm, append_bench_cells,
    read_bench_cells,
};
pub use error::{CellsError, Location, Result};
pub use eval::{EvalCell, EvalLog, PreAggregated};
pub use from_results::{PAIRED_SCOPE, cells_from_results, paired_label, parse_paired_label};
pub use group::{GroupOptions, GroupOutcome, Grouper};
pub use io::{Format, WriteResult, read_table, write_table};
pub use merge::{MergeOutcome, merge_files};
pub use system_card::{CardSource, CardStamp, SystemCard};
pub use table::{CellTable, CellValue};
