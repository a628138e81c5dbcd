//! augbench-report: turns results (our result JSON, the public reference format, cell logs) into
//! what people read — comparison tables (markdown, CSV, JSON), regression verdicts, plots (SVG and
//! PNG), one self-contained HTML report, and refreshed README tables.

pub mod ab;
pub mod counts;
pub mod docs;
pub mod drift;
pub mod export;
pub mod figure;
pub mod html;
pub mod interval;
pub mod load;
pub mod model;
pub mod number;
pub mod output;
pub mod plot;
pub mod production;
pub mod production_change;
pub mod reference;
pub mod regression;
/// Deterministic fixtures: tests and demos only (`sample` feature).
#[cfg(any(test, feature = "sample"))]
pub mod sample;
pub mod summary;
pub mod table;
pub mod verdict;

pub use load::load_paths;
pub use model::{Dataset, Group, GroupKey, Row};
pub use table::{Sort, Table, TableOptions};
