//! Pipeline mode on the coordinator side (pipeline.md), one concern a module: the settings a
//! resolved config gives and the seeded sample order (`settings`), the labels every pipeline
//! result file carries (scope, decoder, loader shape; `labels`), and the window statistics (rate,
//! first and second half, drift; `window`). Setting a transform up and its windows are in
//! `measure`; both schedules drive them as they drive micro runs. This file only declares the
//! modules and re-exports their items.

mod labels;
mod measure;
mod settings;
mod window;

pub(crate) use labels::{info, timing};
pub use measure::{PipelineRuns, PipelineStarted, start};
pub use settings::{PipelineSettings, sample_order, seeded_order};
pub use window::Window;
pub(crate) use window::flag_drift;
#[cfg(test)]
pub(crate) use window::test_detail;
