//! `augbench publish`: turns a run's or a production run's output folder into a self-contained
//! results folder a reader opens in a browser (`augbench_report::publish`).

use std::path::PathBuf;
use std::process::ExitCode;

use augbench_report::publish::{self, Request};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The output folder of `augbench run` or `augbench production`.
    #[arg(long, value_name = "DIR")]
    pub results: PathBuf,
    /// The folder to write (`results/<name>`); its last part names the published results.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Replace --out when it exists (the old folder stays if publishing fails).
    #[arg(long)]
    pub force: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let req = Request {
        results: args.results,
        out: args.out,
        force: args.force,
    };
    let done = publish::publish(&req)?;
    println!(
        "published {} ({} results, {} files; measured on {})\nopen {}",
        req.out.display(),
        done.kind,
        done.files,
        done.machine,
        req.out.join("index.html").display()
    );
    Ok(ExitCode::SUCCESS)
}
