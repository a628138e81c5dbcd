//! `augbench plan`: prints the resolved config, the jobs and the expected files as YAML, and for
//! an A/B run each variant's environment: where it lives and whether the run will build it.

use std::process::ExitCode;

use augbench_core::plan::Plan;

use super::config_args::ConfigArgs;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub config: ConfigArgs,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let cfg = args.config.resolve()?;
    let plan = augbench_core::plan::build(&cfg);
    print!("{}", plan.to_yaml());
    print!("{}", variant_environments(&plan));
    Ok(ExitCode::SUCCESS)
}

/// `variant_environments:` — one entry per variant job (nothing when the run has none).
fn variant_environments(plan: &Plan) -> String {
    #[derive(serde::Serialize)]
    struct View {
        label: String,
        over_lock: String,
        installs: String,
        environment: String,
        state: String,
    }
    let views: Vec<View> = plan
        .jobs
        .iter()
        .filter_map(|j| Some((j, j.variant.as_ref()?)))
        .map(|(j, v)| {
            let (environment, state) = match augbench_exec::env::variant_env(&j.env_group, v) {
                Ok(e) if e.built => (e.dir.display().to_string(), "cached".to_string()),
                Ok(e) => (e.dir.display().to_string(), "to build".to_string()),
                Err(e) => (String::new(), format!("cannot plan: {e:#}")),
            };
            View {
                label: v.label.clone(),
                over_lock: format!("envs/{}.txt", j.env_group),
                installs: v.source.to_string(),
                environment,
                state,
            }
        })
        .collect();
    if views.is_empty() {
        return String::new();
    }
    #[derive(serde::Serialize)]
    struct Section {
        variant_environments: Vec<View>,
    }
    serde_saphyr::to_string(&Section {
        variant_environments: views,
    })
    .unwrap_or_default()
}
