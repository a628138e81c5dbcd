//! Pure statistics of a sample of throughputs, one concern a module: percentiles and the median
//! in `quantile`, the seeded bootstrap and rerun intervals of the median (and the resampling
//! units, runs split into worker processes) in `bootstrap`, a row's `Summary` and its `unstable`
//! rule in `summary`, the headline figure of a row and its read in `figure`, paired statistics of
//! two libraries measured in the same rounds in `paired`, log-scale ratio intervals in
//! `logscale`. This file only declares them and re-exports their public items. No I/O, no clocks.

pub mod ceiling;
pub mod figure;
pub mod logscale;
pub mod paired;
pub mod precision;
pub mod student;

mod bootstrap;
mod quantile;
mod summary;

pub use bootstrap::{bootstrap_median_ci, bootstrap_rerun_interval, rerun_interval};
pub use figure::{Estimator, Figure, Headline, Recorded, figure, headline};
pub use paired::{PairedSummary, drift_spread, paired};
pub use quantile::{median, percentile_sorted};
pub use summary::{
    Summary, ci_half_width, drift_beyond_floor, instability, mean, std_dev, summarize,
    summarize_grouped, usable_runs,
};
