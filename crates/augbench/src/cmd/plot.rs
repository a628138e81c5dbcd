//! `augbench plot`: speedup bar charts, throughput heatmaps and speedup distributions, as SVG
//! and PNG, one set per scenario, mode and device.

use std::path::PathBuf;
use std::process::ExitCode;

use augbench_report::TableOptions;

use super::compare::{load, reference_help};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Results folders (every *_results.json below them), result JSON files or cell logs.
    #[arg(long, value_name = "RESULTS", required = true, num_args = 1..)]
    pub results: Vec<PathBuf>,
    /// Folder to write the plots into (created if missing).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    #[arg(long, value_name = "LIBRARY", help = reference_help())]
    pub reference_library: Option<String>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let data = load(&args.results)?;
    let opts = TableOptions {
        reference: args.reference_library,
        ..TableOptions::default()
    };
    let written = augbench_report::plot::write_plots(&data, &args.out, &opts)?;
    for p in &written {
        println!("{}", p.display());
    }
    if written.is_empty() {
        eprintln!("no plots: no group has a measured transform");
    }
    Ok(ExitCode::SUCCESS)
}
