//! The self-contained HTML report: one file with inline CSS, inline scripts, the measurements
//! as embedded JSON and inline SVG plots, so it loads nothing from the network. Sections: the
//! reference switch, the machine card, library versions, legend, then per group its views
//! (table, per-transform bars, pipeline share of ceiling or video rates, heatmap, speedup
//! charts, and the A/B verdicts when the group measured variants of a library), the
//! equivalence check, run parameters and what was not measured.
//! `page` lays the page out; `machine`, `context`, `equivalence` and `data` draw its sections and
//! embedded data; `markup` holds the escaping they share. This file only declares the modules
//! and re-exports their items.

mod context;
mod data;
mod equivalence;
mod machine;
mod markup;
mod page;

pub use markup::esc;
pub use page::{render, render_effects, render_with};
