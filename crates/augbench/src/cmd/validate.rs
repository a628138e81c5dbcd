//! `augbench validate`: checks a config (and overrides) and says what it would run.

use std::process::ExitCode;

use super::config_args::ConfigArgs;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub config: ConfigArgs,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let cfg = args.config.resolve()?;
    let plan = augbench_core::plan::build(&cfg);
    let transforms = plan.jobs.first().map_or(0, |j| j.transforms.len());
    println!(
        "{}: ok ({} jobs, {} transforms each)",
        args.config.config.display(),
        plan.jobs.len(),
        transforms
    );
    Ok(ExitCode::SUCCESS)
}
