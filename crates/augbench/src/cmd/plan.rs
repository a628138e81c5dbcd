//! `augbench plan`: prints the resolved config, the jobs and the expected files as YAML; for an
//! A/B run each variant's environment (where it lives, whether the run will build it); then a
//! time estimate as YAML comments (from policy, and from earlier results of the same jobs).

use std::process::ExitCode;

use augbench_core::plan::Plan;
use augbench_core::plan_estimate::{Prior, estimate};
use augbench_core::results::{ResultFile, Status};

use super::config_args::ConfigArgs;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub config: ConfigArgs,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let cfg = args.config.resolve()?;
    // The plan `run` would execute here: `device: auto` settled by this machine's CUDA devices.
    let cuda = augbench_host::machine::cuda_here();
    let plan = augbench_core::settle::for_machine(&cfg, cuda);
    print!("{}", plan.to_yaml());
    print!("{}", variant_environments(&plan));
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get() as u64);
    let mut prior = prior(&plan);
    prior.unbuildable = unbuildable(&plan, &prior);
    print!("{}", estimate(&plan, &prior, threads).comment());
    Ok(ExitCode::SUCCESS)
}

/// What earlier results of the plan's jobs (files that exist and parse) say about speed: each
/// measured transform's seconds per item, the transforms a library does not support, and a
/// worker start's seconds from the run's time split.
fn prior(plan: &Plan) -> Prior {
    let mut prior = Prior {
        table: Some(augbench_catalog::costs::Costs::get()),
        ..Prior::default()
    };
    let mut starts = Vec::new();
    for job in &plan.jobs {
        let Some(file) = std::fs::read_to_string(&job.output_file)
            .ok()
            .and_then(|t| serde_json::from_str::<ResultFile>(&t).ok())
        else {
            continue;
        };
        prior.sources.push(job.output_file.display().to_string());
        for (t, r) in &file.results {
            let key = (job.library.clone(), t.clone());
            let spi = match r.status {
                Some(Status::Ok) => r.median_throughput.map(|m| 1.0 / m),
                Some(Status::Slow) => {
                    prior.slow.insert(key.clone());
                    r.preflight_sec_per_item
                }
                Some(Status::Unsupported) => {
                    prior.unsupported.insert(key);
                    continue;
                }
                _ => None,
            };
            if let Some(s) = spi.filter(|s| s.is_finite() && *s > 0.0) {
                prior.sec_per_item.insert(key, s);
            }
        }
        if let Some(split) = &file.metadata.time_split {
            let n = plan.jobs.len() as f64 * file.metadata.benchmark_params.processes as f64;
            let start: f64 = split
                .parts
                .iter()
                .filter(|p| p.part == "worker start" || p.part == "media load")
                .map(|p| p.seconds)
                .sum();
            starts.push(start / n.max(1.0));
        }
    }
    prior.worker_start_sec = starts.first().copied();
    prior
}

/// Rows no earlier result speaks for that the job's adapter says it does not build: a native
/// crate's adapter answers at once (`augbench_native::support::builds`), a Python adapter names
/// what it builds (`augbench_env::adapter_builders`). Unknown support counts as built.
fn unbuildable(plan: &Plan, prior: &Prior) -> std::collections::BTreeSet<(String, String)> {
    let reg = augbench_catalog::registry::Registry::get();
    let mut out = std::collections::BTreeSet::new();
    for job in &plan.jobs {
        let native = augbench_native::Library::parse(&job.adapter).ok();
        let python = augbench_env::adapter_builders(&job.adapter);
        for name in &job.transforms {
            let key = (job.library.clone(), name.clone());
            if prior.sec_per_item.contains_key(&key) || prior.unsupported.contains(&key) {
                continue;
            }
            let builds = match (native, &python) {
                (Some(lib), _) => reg.spec(name).and_then(|spec| {
                    let params =
                        serde_json::Value::Object(spec.params.clone().into_iter().collect());
                    augbench_native::support::builds(lib, name, &params)
                }),
                (None, Some(names)) => Some(names.contains(name)),
                (None, None) => None,
            };
            if builds == Some(false) {
                out.insert(key);
            }
        }
    }
    out
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
            let (environment, state) = match augbench_env::variant_env(&j.env_group, v) {
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
