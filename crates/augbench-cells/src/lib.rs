//! augbench-cells: the benchmark cell log (one row per measured transform, `<out>/cells.parquet`)
//! and the cell-log layer the evaluation engine (augbench-eval) shares: the column registry of
//! both schemas, the typed table, Parquet (arrow-rs) and JSON Lines I/O and the one error type.
//! A benchmark cell's machine columns come from its result file's machine card. Parquet keeps
//! NaN and ±inf; JSON Lines writes them as null (JSON has no NaN).

pub mod bench;
pub mod error;
pub mod from_results;
pub mod io;
pub mod schema;
pub mod table;

pub use bench::{
    AppendReport, BenchCell, BenchMetrics, CellCard, CellFigure, OutputForm, append_bench_cells,
    read_bench_cells,
};
pub use error::{CellsError, Location, Result};
pub use from_results::{PAIRED_SCOPE, cells_from_results, paired_label, parse_paired_label};
pub use io::{Format, WriteResult, read_table, write_table};
pub use table::{CellTable, CellValue};
