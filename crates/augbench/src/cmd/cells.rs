//! `augbench cells …`: the command-line face of the cell-log engine in augbench-cells.

use std::process::ExitCode;

use clap::Subcommand;

#[derive(Debug, Subcommand)]
pub enum CellsCommand {
    /// Convert a cell log between Parquet and JSON Lines.
    Convert {
        input: std::path::PathBuf,
        output: std::path::PathBuf,
    },
}

pub fn run(_cmd: CellsCommand) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not implemented yet")
}
