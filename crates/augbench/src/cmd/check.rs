//! `augbench check equivalence`: do the libraries do the same work? Applies each transform in
//! every selected library to the same decoded images and prints, per library, how far its output
//! is from the reference library's (deterministic transforms) or whether its statistics hold
//! (random ones). Exit 1 when a deterministic transform mismatches beyond its tolerance.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use augbench_catalog::equivalence::SCENARIO;
use augbench_core::{Matrix, Mode, Registry, UsageError};
use augbench_exec::equivalence;
use indicatif::MultiProgress;

#[derive(Debug, clap::Subcommand)]
pub enum CheckCommand {
    /// Same transform, same images, every library: pixel differences and a verdict per transform
    /// (tolerances in specs/equivalence.yaml).
    Equivalence(EquivalenceArgs),
}

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
}

pub fn run(cmd: CheckCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        CheckCommand::Equivalence(a) => equivalence_cmd(a),
    }
}

fn equivalence_cmd(a: EquivalenceArgs) -> anyhow::Result<ExitCode> {
    let libraries = libraries(&a.libraries)?;
    let transforms = transforms(&a.transforms)?;
    // The standalone check reuses locked environments as they are (no re-resolution).
    let check = equivalence::run_check(&libraries, &transforms, false, &MultiProgress::new())?;
    print!("{}", equivalence::verdict::table(&check));
    println!();
    print!("{}", equivalence::verdict::summary(&check));
    if let Some(path) = &a.json {
        let text = serde_json::to_string_pretty(&check)?;
        augbench_host::fsutil::write_atomic(path, text.as_bytes())
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(if check.mismatched() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn libraries(given: &[String]) -> anyhow::Result<Vec<String>> {
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

fn transforms(given: &[String]) -> anyhow::Result<Vec<String>> {
    let registry = Registry::get();
    if given.is_empty() {
        let set = matrix_set()?;
        return Ok(registry
            .set(&set)
            .map(<[String]>::to_vec)
            .unwrap_or_default());
    }
    for t in given {
        if registry.spec(t).is_none() {
            return Err(UsageError::new(
                format!("`{t}` is not in the transform registry"),
                "`augbench list transforms` shows the registered names".to_string(),
            )
            .into());
        }
    }
    Ok(given.to_vec())
}

fn matrix_set() -> anyhow::Result<String> {
    Ok(Matrix::get()
        .scenario(SCENARIO)
        .context("the support matrix has no image-rgb scenario")?
        .set
        .clone())
}
