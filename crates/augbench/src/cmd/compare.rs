//! `augbench compare`: placeholder until its capability lands.

use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`augbench compare` is not implemented yet")
}
