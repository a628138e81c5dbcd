//! `augbench plan`: prints the resolved config, the jobs and the expected files as YAML.

use std::process::ExitCode;

use super::config_args::ConfigArgs;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub config: ConfigArgs,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let cfg = args.config.resolve()?;
    print!("{}", augbench_core::plan::build(&cfg).to_yaml());
    Ok(ExitCode::SUCCESS)
}
