//! `augbench docs`: placeholder until its capability lands.

use std::process::ExitCode;

#[derive(Debug, clap::Subcommand)]
pub enum DocsCommand {
    /// Placeholder.
    Todo,
}

pub fn run(_cmd: DocsCommand) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`augbench docs` is not implemented yet")
}
