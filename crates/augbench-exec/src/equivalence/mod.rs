//! `augbench check equivalence`: `running` writes the check's input images, starts each
//! library's worker and collects what it emits for each transform ([`Produced`]); the verdicts
//! are computed in [`verdict`] from what was collected; [`in_run`] runs the same check inside
//! `augbench run`; [`targets`] is the check on masks, boxes and keypoints (`--targets`). This file
//! only declares the modules and re-exports their public items.

pub mod in_run;
pub mod targets;
pub mod verdict;

mod produced;
mod running;

pub use produced::{Output, Produced};
pub use running::{INPUT_SIZES, SEEDS, collect, run_check, write_inputs};
pub use verdict::{Check, PairVerdict, Verdict};
