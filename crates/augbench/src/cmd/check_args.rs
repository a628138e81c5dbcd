//! The arguments of `augbench check equivalence` and the helpers its pixel check (`check`) and
//! its targets check (`check_targets`) share: the library list and the JSON file.

use std::path::{Path, PathBuf};

use anyhow::Context;
use augbench_catalog::equivalence::SCENARIO;
use augbench_core::{Matrix, Mode, UsageError};

#[derive(Debug, clap::Args)]
pub struct EquivalenceArgs {
    /// Libraries to compare (comma-separated; default: every CPU library of the image-rgb scenario).
    #[arg(long, value_delimiter = ',')]
    pub libraries: Vec<String>,
    /// Transforms to check (comma-separated; default: the image-rgb scenario's curated set).
    #[arg(long, value_delimiter = ',')]
    pub transforms: Vec<String>,
    /// Also write the whole check as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Check masks, boxes and keypoints instead of pixels: each library that moves targets
    /// against augbench's reference (default libraries: those with targets; default transforms:
    /// those under `targets:` in specs/equivalence.yaml).
    #[arg(long)]
    pub targets: bool,
}

/// Writes `value` as pretty JSON to `path`, atomically (nothing without a path).
pub(super) fn write_json(path: Option<&Path>, value: &impl serde::Serialize) -> anyhow::Result<()> {
    let Some(path) = path else {
        return Ok(());
    };
    let text = serde_json::to_string_pretty(value)?;
    augbench_host::fsutil::write_atomic(path, text.as_bytes())
        .with_context(|| format!("writing {}", path.display()))
}

pub(super) fn libraries(given: &[String]) -> anyhow::Result<Vec<String>> {
    let matrix = Matrix::get();
    let scenario = matrix
        .scenario(SCENARIO)
        .context("the support matrix has no image-rgb scenario")?;
    let checkable: Vec<String> = scenario
        .libraries
        .iter()
        .filter(|l| {
            matrix.library(l).is_some_and(|i| {
                i.modes.contains(&Mode::Micro) && i.supports_device(augbench_core::Device::Cpu)
            })
        })
        .cloned()
        .collect();
    if given.is_empty() {
        return Ok(checkable);
    }
    for l in given {
        if !checkable.contains(l) {
            return Err(UsageError::new(
                format!("`{l}` cannot be checked: it is not a CPU micro library of {SCENARIO}"),
                format!("choose from {}", checkable.join(", ")),
            )
            .into());
        }
    }
    Ok(given.to_vec())
}
