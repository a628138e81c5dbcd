//! What a run or a production config asks an engine to run, in one shape (`Request`): the
//! resolved cloud section, the shards and the config each shard's task runs, the Python
//! environment groups the tasks need, the resolved config kept in the bundle. `job` builds the
//! submission from it whichever config it came from.

use std::path::PathBuf;

use augbench_core::cloud::{self, Shard};
use augbench_core::config::{CloudConfig, DataConfig, OutputConfig, RunConfig};
use augbench_core::production::Production;
use augbench_core::{Matrix, Mode, naming};
use serde::{Deserialize, Serialize};

/// Which command a task runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// `augbench run` on a slice of a run config.
    #[default]
    Run,
    /// `augbench production` on a (recipe block, seed) of a production config.
    Production,
}

#[derive(Debug, Clone)]
pub struct Request {
    pub kind: Kind,
    pub cloud: CloudConfig,
    /// The local output folder (`<out>/cloud/` holds what is submitted).
    pub output: PathBuf,
    pub data: DataConfig,
    /// `output.gcs_results_uri` (Batch) or `cloud.shared_dir` (Slurm).
    pub store_root: String,
    /// Names the run (`<label>-…`) and labels a Batch job.
    pub label: String,
    pub shards: Vec<Shard>,
    /// (task index, config YAML) of each shard.
    pub shard_configs: Vec<(u64, String)>,
    pub env_groups: Vec<String>,
    /// The whole config, resolved, as the bundle keeps it (`fetch` reads it back).
    pub resolved_yaml: String,
}

fn store_root(c: &CloudConfig, gcs: &Option<String>) -> String {
    match &c.shared_dir {
        Some(dir) if c.provider == Some(augbench_core::config::CloudProvider::Slurm) => {
            dir.to_string_lossy().into_owned()
        }
        _ => gcs.clone().unwrap_or_default(),
    }
}

fn groups(libraries: impl Iterator<Item = String>, mode: Mode) -> Vec<String> {
    let m = Matrix::get();
    let mut groups: Vec<String> = libraries
        .filter_map(|l| m.library(&l))
        .map(|l| l.env_group_for(mode).to_string())
        .filter(|g| augbench_env::group_assets(g).is_some())
        .collect();
    groups.sort();
    groups.dedup();
    groups
}

impl Request {
    pub fn of_run(cfg: &RunConfig) -> anyhow::Result<Request> {
        let c = cfg
            .cloud
            .clone()
            .ok_or_else(|| anyhow::anyhow!("the config has no `cloud:` section"))?;
        let shards = cloud::shards(cfg);
        let shard_configs = shards
            .iter()
            .map(|s| Ok((s.index, run_shard_config(cfg, s)?)))
            .collect::<anyhow::Result<Vec<_>>>()?;
        let mode = cfg.selection.mode.unwrap_or(Mode::Micro);
        let mut env_groups = groups(cfg.selection.libraries.iter().flatten().cloned(), mode);
        if cfg.selection.media == Some(augbench_core::Media::Video) {
            env_groups.push(augbench_env::VIDEO_DECODE_GROUP.to_string());
            env_groups.sort();
            env_groups.dedup();
        }
        Ok(Request {
            kind: Kind::Run,
            store_root: store_root(&c, &cfg.output.gcs_results_uri),
            cloud: c,
            output: naming::output_dir(cfg),
            data: cfg.data.clone(),
            label: cfg.selection.scenario.clone().unwrap_or_default(),
            shards,
            shard_configs,
            env_groups,
            resolved_yaml: cfg.to_yaml(),
        })
    }

    pub fn of_production(p: &Production) -> anyhow::Result<Request> {
        let c = p
            .config
            .cloud
            .clone()
            .ok_or_else(|| anyhow::anyhow!("the config has no `cloud:` section"))?;
        let shards = augbench_core::production::shards(p);
        let shard_configs = shards
            .iter()
            .map(|s| Ok((s.index, production_shard_config(p, s)?)))
            .collect::<anyhow::Result<Vec<_>>>()?;
        let libraries = p
            .implementations
            .iter()
            .filter(|i| !i.native)
            .map(|i| i.library.clone());
        Ok(Request {
            kind: Kind::Production,
            store_root: store_root(&c, &p.config.output.gcs_results_uri),
            cloud: c,
            output: p.output_dir(),
            data: p.config.data.clone(),
            label: "production".to_string(),
            shards,
            shard_configs,
            env_groups: groups(libraries, Mode::Pipeline),
            resolved_yaml: serde_saphyr::to_string(&p.config)?,
        })
    }
}

/// A shard's config names no place: the task passes its own data folder and output folder.
fn local_only(out: &mut OutputConfig, data: &mut DataConfig) {
    out.gcs_results_uri = None;
    out.output_dir = None;
    data.gcs_uri = None;
    data.remote_data_dir = None;
    data.data_dir = None;
}

/// The config one task runs: the resolved config without its cloud parts, narrowed to the
/// shard's libraries and transforms, with the committed locks (the environment cache key).
fn run_shard_config(cfg: &RunConfig, shard: &Shard) -> anyhow::Result<String> {
    let mut s = cfg.clone();
    s.cloud = None;
    local_only(&mut s.output, &mut s.data);
    s.selection.libraries = Some(shard.libraries.clone());
    s.selection.transforms = Some(shard.transforms.clone());
    s.selection.transform_set = None;
    s.execution.refresh_requirements = Some(false);
    s.execution.resume = Some(false);
    let head = format!(
        "# Shard {} of a cloud run: `augbench run --config THIS --data-dir DATA --output OUT`.\n",
        shard.index
    );
    Ok(head + &serde_saphyr::to_string(&s)?)
}

/// The production config one task runs: the shard's recipes and seed, every implementation.
fn production_shard_config(p: &Production, shard: &Shard) -> anyhow::Result<String> {
    let mut s = p.config.clone();
    s.cloud = None;
    local_only(&mut s.output, &mut s.data);
    s.production.recipes = Some(shard.transforms.clone());
    s.production.seeds = shard.seeds.clone();
    let head = format!(
        "# Shard {} of a production run: `augbench production --config THIS --data-dir DATA --output-dir OUT`.\n",
        shard.index
    );
    Ok(head + &serde_saphyr::to_string(&s)?)
}
