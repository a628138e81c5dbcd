//! augbench-report: turns results (our result JSON, the public reference format, cell logs) into
//! what people read. `load` and `model` read them; `judge` decides (A/B verdicts, run against
//! run, instruction counts) and produces data; `baseline` records a baseline of repeated
//! invocations and expands it for the gate; the rest renders that data:
//! comparison tables (`table`) and their exporters (`export`, one file per format), plots (SVG
//! and PNG), one self-contained HTML page, the run summary, refreshed README tables, and a
//! published results folder (`publish`).

pub mod baseline;
pub mod docs;
pub mod export;
pub mod figure;
pub mod html;
pub mod judge;
pub mod load;
pub mod model;
pub mod number;
pub mod output;
pub mod plot;
pub mod production;
pub mod production_change;
pub mod publish;
pub mod reference;
/// Deterministic fixtures: tests and demos only (`sample` feature).
#[cfg(any(test, feature = "sample"))]
pub mod sample;
pub mod summary;
pub mod table;

pub use load::load_paths;
pub use model::{Dataset, Group, GroupKey, Row};
pub use table::{Sort, Table, TableOptions};
