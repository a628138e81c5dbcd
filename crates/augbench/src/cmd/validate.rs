//! `augbench validate`: checks a config (and overrides) and says what it would run; a production
//! config is checked as `augbench production` reads it.

use std::process::ExitCode;

use super::config_args::ConfigArgs;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub config: ConfigArgs,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let path = &args.config.config;
    let text = std::fs::read_to_string(path).unwrap_or_default();
    if augbench_core::production::is_production_config(&text) {
        let p = augbench_core::production::load(path)?;
        let cells = p.cells();
        println!("{}: ok (production: {cells} cells)", path.display());
        return Ok(ExitCode::SUCCESS);
    }
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
