//! augbench-stats: the pure statistics of augbench's measurements (the model is criterion's
//! `stats` crate), one concern a module: percentiles and the median
//! in `quantile`, the seeded bootstrap and rerun intervals of the median (and the resampling
//! units, runs split into worker processes) in `bootstrap`, a bootstrap draw's percentile read
//! off counts of ranks instead of a sort in `draws`, a row's `Summary` and its `unstable`
//! rule in `summary`, the headline figure of a row and its read in `figure`, paired statistics of
//! two libraries measured in the same rounds in `paired`, log-scale ratio intervals in
//! `logscale`, Student's t and the normal quantile in `student`, the precision rule in `precision`, the run-wide prior of how far processes spread in `spread`, the interval over process pairs in `pair`, the verdict
//! words of a ratio and its interval in `verdict`,
//! the statistical constants in `policy`, the estimators by name in `estimator`, and how a
//! duration prints in `duration`. This file only declares them and re-exports their public items.
//! No I/O, no clocks, no other augbench crate; every random draw is seeded.

pub mod ceiling;
pub mod duration;
pub mod estimator;
pub mod figure;
pub mod logscale;
pub mod pair;
pub mod paired;
pub mod policy;
pub mod precision;
pub mod spread;
pub mod student;
pub mod verdict;

mod bootstrap;
mod draws;
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
