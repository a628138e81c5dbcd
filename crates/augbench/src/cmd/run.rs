//! `augbench run`: resolves the config, writes it next to the results, and executes the plan.

use std::process::ExitCode;

use super::config_args::ConfigArgs;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub config: ConfigArgs,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let _cfg = args.config.resolve()?;
    anyhow::bail!("`augbench run` is not implemented yet")
}
