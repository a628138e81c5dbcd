//! `augbench check equivalence --targets`: picks the libraries that move targets and the
//! transforms the targets reference covers, runs the check (`augbench_exec::equivalence::targets`)
//! and prints its table, notes and summary. Exit 1 when a library moves a target beyond the
//! tolerance without a known difference explaining it; 2 for a library or transform it cannot check.

use std::process::ExitCode;

use augbench_catalog::equivalence::EquivalenceSpec;
use augbench_core::{Matrix, Registry, UsageError};
use augbench_exec::equivalence::targets;
use indicatif::MultiProgress;

use super::check_args::{EquivalenceArgs, libraries, write_json};

pub(super) fn targets_cmd(a: &EquivalenceArgs) -> anyhow::Result<ExitCode> {
    let libraries = target_libraries(&a.libraries)?;
    let transforms = target_transforms(&a.transforms)?;
    // The standalone check reuses locked environments as they are (no re-resolution).
    let check = targets::run_targets_check(&libraries, &transforms, false, &MultiProgress::new())?;
    print!("{}", targets::table(&check));
    println!("{}", targets::LEGEND);
    let notes = targets::notes(&check);
    if !notes.is_empty() {
        print!("\n{notes}");
    }
    println!();
    print!("{}", targets::summary(&check));
    write_json(a.json.as_deref(), &check)?;
    Ok(if check.mismatched() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The CPU micro libraries of the scenario that move targets (matrix `targets: true`), or the
/// given ones when each of them is such a library.
fn target_libraries(given: &[String]) -> anyhow::Result<Vec<String>> {
    let matrix = Matrix::get();
    let with_targets: Vec<String> = libraries(&[])?
        .into_iter()
        .filter(|l| matrix.library(l).is_some_and(|i| i.targets))
        .collect();
    if given.is_empty() {
        return Ok(with_targets);
    }
    for l in given {
        if !with_targets.contains(l) {
            return Err(UsageError::new(
                format!("`{l}` cannot be checked on targets: it moves no masks, boxes or keypoints with the image (matrix `targets`)"),
                format!("choose from {}, or drop --targets", with_targets.join(", ")),
            )
            .into());
        }
    }
    Ok(given.to_vec())
}

/// The transforms the targets reference covers (registry order), or the given ones when each is
/// covered.
fn target_transforms(given: &[String]) -> anyhow::Result<Vec<String>> {
    let spec = &EquivalenceSpec::get().targets;
    let covered: Vec<String> = Registry::get()
        .names()
        .into_iter()
        .filter(|n| spec.transforms.contains_key(*n))
        .map(str::to_string)
        .collect();
    if given.is_empty() {
        return Ok(covered);
    }
    for t in given {
        if !covered.contains(t) {
            return Err(UsageError::new(
                format!("`{t}` is not covered by the targets check"),
                format!(
                    "choose from {} (specs/equivalence.yaml, `targets:`)",
                    covered.join(", ")
                ),
            )
            .into());
        }
    }
    Ok(given.to_vec())
}
