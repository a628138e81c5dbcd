//! `augbench data`: placeholder until its capability lands.

use std::process::ExitCode;

#[derive(Debug, clap::Subcommand)]
pub enum DataCommand {
    /// Placeholder.
    Todo,
}

pub fn run(_cmd: DataCommand) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`augbench data` is not implemented yet")
}
