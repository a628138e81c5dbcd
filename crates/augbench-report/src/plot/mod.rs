//! Plots with plotters, as SVG and PNG, 1200 px wide: (a) speedup of the reference per
//! transform, (b) throughput heatmap, (c) distribution of speedups, (d) a production sweep's
//! throughput against loader workers. Text uses the embedded
//! DejaVu Sans (plotters' `ab_glyph` needs a registered font even for SVG). Pipeline groups
//! mark their decode-ceiling row (see `labels`).
//! `chart` says which charts a table gets and writes them; `speedup`, `heatmap`,
//! `distribution` and `workers` draw one kind each on what `axis`, `style`, `labels` and `draw` share. This file
//! only declares the modules and re-exports their items.

mod axis;
mod chart;
mod distribution;
mod draw;
mod heatmap;
mod labels;
mod speedup;
mod style;
mod workers;

pub use chart::{Chart, WIDTH, charts, write_plots};
pub use heatmap::{Grid, Heatmap};
pub use workers::WorkersChart;
