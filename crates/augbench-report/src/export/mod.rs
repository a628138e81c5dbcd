//! Exporters, one file per format (markdown, CSV, JSON), of the comparison tables, the A/B
//! verdicts and the regression verdicts; `format`, the format asked for and the dispatch to
//! those files; `formatting`, the cell texts and notes they share so every output shows the same
//! digits; and `compare`, what `augbench compare` shows in one value. This file only declares the
//! modules and re-exports their items.

pub mod compare;
pub mod csv;
pub mod json;
pub mod markdown;

mod format;
mod formatting;

pub use crate::number::{decimals, fmt_num};
pub use format::{Format, render, render_ab, render_regression};
pub use formatting::{
    FORCED_MARK, fmt_footer_speedup, fmt_median_std, fmt_row_speedup, fmt_speedup, forced_note,
    paired_note,
};
