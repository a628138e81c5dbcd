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
    let shape = if cfg.selection.mode == Some(augbench_core::Mode::Decode) {
        let clips = cfg.data.num_items.unwrap_or_default();
        format!("{} decoders, {clips} clips", plan.jobs.len())
    } else {
        let transforms = plan.jobs.first().map_or(0, |j| j.transforms.len());
        format!("{} jobs, {transforms} transforms each", plan.jobs.len())
    };
    println!("{}: ok ({shape})", args.config.config.display());
    Ok(ExitCode::SUCCESS)
}
