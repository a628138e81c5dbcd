//! `augbench check equivalence --targets`: do the libraries move masks, boxes and keypoints the
//! same way? `moves` maps the covered registry transforms to the Rust reference's moves
//! (`augbench_media::target_reference`), `running` writes the annotated inputs and collects what
//! each library's worker emits, `verdict` judges it against the reference within the spec's
//! `targets:` tolerances and known differences, and `table` prints it (docs/equivalence.md,
//! "Targets"). This file declares the modules and runs the whole check.

mod moves;
mod running;
mod table;
mod verdict;

use anyhow::Context;
use indicatif::MultiProgress;

pub use moves::target_move;
pub use table::{LEGEND, notes, summary, table};
pub use verdict::{MaskDiff, PointsDiff, TargetsCheck, TargetsLine, TargetsTransformCheck};

/// The whole targets check for these libraries and transforms, in a scratch folder. `refresh`:
/// re-resolve the Python environments' locks.
pub fn run_targets_check(
    libraries: &[String],
    transforms: &[String],
    refresh: bool,
    mp: &MultiProgress,
) -> anyhow::Result<TargetsCheck> {
    let scratch = tempfile::tempdir().context("creating a scratch folder for the check")?;
    let inputs = running::write_inputs(scratch.path())?;
    let out = scratch.path().join("out");
    let collected = running::collect(libraries, transforms, &inputs, &out, refresh, mp)?;
    Ok(verdict::judge(transforms, &inputs.targets, &collected))
}
