//! `augbench check equivalence`: do the libraries do the same work? Applies each transform in
//! every selected library to the same decoded images and prints, per library, how far its output
//! is from the reference library's (deterministic transforms) or whether its statistics hold
//! (random ones). Exit 1 when a deterministic transform mismatches beyond its tolerance.

use std::process::ExitCode;

use anyhow::Context;
use augbench_catalog::equivalence::SCENARIO;
use augbench_core::{Matrix, Registry, UsageError};
use augbench_exec::equivalence;
use indicatif::MultiProgress;

use super::check_args::{EquivalenceArgs, libraries, write_json};

#[derive(Debug, clap::Subcommand)]
pub enum CheckCommand {
    /// Same transform, same images, every library: pixel differences and a verdict per transform
    /// (tolerances in specs/equivalence.yaml).
    Equivalence(EquivalenceArgs),
}

pub fn run(cmd: CheckCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        CheckCommand::Equivalence(a) => equivalence_cmd(a),
    }
}

fn equivalence_cmd(a: EquivalenceArgs) -> anyhow::Result<ExitCode> {
    if a.targets {
        return super::check_targets::targets_cmd(&a);
    }
    let libraries = libraries(&a.libraries)?;
    let transforms = transforms(&a.transforms)?;
    // The standalone check reuses locked environments as they are (no re-resolution).
    let check = equivalence::run_check(&libraries, &transforms, false, &MultiProgress::new())?;
    print!("{}", equivalence::verdict::table(&check));
    println!();
    print!("{}", equivalence::verdict::summary(&check));
    write_json(a.json.as_deref(), &check)?;
    Ok(if check.mismatched() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
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
