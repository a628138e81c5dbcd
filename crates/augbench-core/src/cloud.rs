//! Runs on another engine (docs/cluster.md), the pure part: the defaults of the `cloud:` section
//! for Google Cloud Batch and for Slurm, its validation rules (each naming the line), and the
//! split of a resolved plan into shards, one task each on either engine. Submission, scripts and
//! collection live in the augbench-cloud crate.

use serde::{Deserialize, Serialize};

use crate::config::{CloudConfig, CloudProvider, DataConfig, OutputConfig, RunConfig, Schedule};
use crate::plan;
use crate::policy;
use crate::selection::selected_transforms;
use augbench_catalog::config_error::{ConfigError, Source};
use augbench_catalog::matrix::{Device, Media, Mode};
use augbench_catalog::recipe::Recipe;

type Check = Result<(), ConfigError>;

/// One Batch task's part of the plan: these libraries, these transforms, on one VM.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub index: u64,
    /// Libraries (production: implementations).
    pub libraries: Vec<String>,
    /// Transforms (production: recipe ids).
    pub transforms: Vec<String>,
    /// Production: the seed of the shard's cells.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seeds: Option<Vec<u64>>,
}

/// The Batch location: `region`, else the region of `zone` (`us-central1-a` → `us-central1`).
pub fn region(c: &CloudConfig) -> Option<String> {
    c.region.clone().or_else(|| {
        let zone = c.zone.as_deref()?;
        zone.rsplit_once('-').map(|(r, _)| r.to_string())
    })
}

/// Fills every omitted field of a cloud section; needs selection and execution filled first.
pub fn fill(cfg: &mut RunConfig) {
    let shards = cfg
        .cloud
        .as_ref()
        .and_then(|c| c.shards)
        .unwrap_or_else(|| default_shards(cfg));
    let results = cfg.output.gcs_results_uri.clone();
    if let Some(c) = cfg.cloud.as_mut() {
        fill_engine(c, shards, results);
    }
}

/// The defaults every engine shares (`shards` resolved by the caller: a run's or a production
/// config's), then the engine's own.
pub fn fill_engine(c: &mut CloudConfig, shards: u64, results: Option<String>) {
    c.shards = Some(shards);
    c.parallelism.get_or_insert(shards);
    c.max_run_duration_sec
        .get_or_insert(policy::CLOUD_MAX_RUN_DURATION_SEC);
    let cache = *c.venv_cache.get_or_insert(true);
    c.dry_run.get_or_insert(false);
    c.attached.get_or_insert(false);
    if *c.provider.get_or_insert(CloudProvider::Gcp) == CloudProvider::Slurm {
        if cache && c.venv_cache_uri.is_none() {
            let shared = c.shared_dir.as_ref();
            c.venv_cache_uri = shared.map(|d| d.join("envs").to_string_lossy().into_owned());
        }
        return;
    }
    fill_batch(c, results);
}

/// The Cloud Batch defaults: location, machine shape, disk, Spot, the environment cache.
fn fill_batch(c: &mut CloudConfig, results: Option<String>) {
    if c.region.is_none() {
        c.region = region(c);
    }
    let gpu = c.gpu_type.is_some();
    if gpu {
        c.gpu_count.get_or_insert(policy::CLOUD_GPU_COUNT);
    }
    c.machine_type.get_or_insert_with(|| {
        let shape = match gpu {
            true => policy::CLOUD_GPU_MACHINE_TYPE,
            false => policy::CLOUD_CPU_MACHINE_TYPE,
        };
        shape.to_string()
    });
    c.disk_size_gb.get_or_insert(policy::CLOUD_DISK_SIZE_GB);
    c.preemptible.get_or_insert(false);
    if c.venv_cache == Some(true) && c.venv_cache_uri.is_none() {
        c.venv_cache_uri = results.map(|r| format!("{}/envs", r.trim_end_matches('/')));
    }
}

/// Transforms split across shards: the selection without the pipeline ceiling row, which every
/// pipeline shard measures on its own VM (its rows are read against it).
fn splittable(cfg: &RunConfig) -> (Vec<String>, Option<String>) {
    let mut names = selected_transforms(cfg);
    if cfg.selection.mode != Some(Mode::Pipeline) {
        return (names, None);
    }
    let ceiling = Recipe::get().ceiling.clone();
    names.retain(|n| *n != ceiling);
    (names, Some(ceiling))
}

/// Estimated seconds of one VM measuring `libraries` × `transforms` (docs/cloud.md): items ×
/// `policy::cloud_est_sec_per_item` × passes (processes × (runs + extra passes)) × rows.
/// Deliberately simple: it only sizes the default fan-out.
pub fn estimate_sec(cfg: &RunConfig, libraries: usize, transforms: usize) -> f64 {
    let media = cfg.selection.media.unwrap_or(Media::Image);
    let e = &cfg.execution;
    let items = cfg
        .data
        .num_items
        .unwrap_or(policy::default_num_items(media));
    let runs = e.num_runs.unwrap_or(policy::DEFAULT_NUM_RUNS) + policy::CLOUD_EST_EXTRA_PASSES;
    let passes = e.processes.unwrap_or(policy::DEFAULT_PROCESSES) * runs;
    let rows = (libraries * transforms) as f64;
    items as f64 * policy::cloud_est_sec_per_item(media) * passes as f64 * rows
}

/// Sequential: one library per shard. Interleaved: as many slices of the transform list as
/// keep each task under `policy::CLOUD_TASK_TARGET_SEC`, at most one transform per slice.
fn default_shards(cfg: &RunConfig) -> u64 {
    let libraries = cfg.selection.libraries.as_ref().map_or(0, Vec::len);
    if plan::schedule(cfg).0 == Schedule::Sequential {
        return libraries.max(1) as u64;
    }
    let (transforms, _) = splittable(cfg);
    let total = estimate_sec(cfg, libraries, transforms.len());
    let wanted = (total / policy::CLOUD_TASK_TARGET_SEC).ceil() as u64;
    wanted.clamp(1, transforms.len().max(1) as u64)
}

/// The shards of a resolved cloud config, in task index order.
pub fn shards(cfg: &RunConfig) -> Vec<Shard> {
    let libraries = cfg.selection.libraries.clone().unwrap_or_default();
    let (transforms, ceiling) = splittable(cfg);
    let with_ceiling = |mut slice: Vec<String>| {
        if let Some(c) = &ceiling {
            slice.insert(0, c.clone());
        }
        slice
    };
    if plan::schedule(cfg).0 == Schedule::Sequential {
        return libraries
            .iter()
            .zip(0..)
            .map(|(lib, index)| Shard {
                index,
                libraries: vec![lib.clone()],
                transforms: with_ceiling(transforms.clone()),
                seeds: None,
            })
            .collect();
    }
    let n = cfg
        .cloud
        .as_ref()
        .and_then(|c| c.shards)
        .unwrap_or(1)
        .max(1);
    split(&transforms, n as usize)
        .into_iter()
        .zip(0..)
        .map(|(slice, index)| Shard {
            index,
            libraries: libraries.clone(),
            transforms: with_ceiling(slice),
            seeds: None,
        })
        .collect()
}

/// `items` in `n` contiguous slices whose sizes differ by at most one (no empty slice).
pub(crate) fn split(items: &[String], n: usize) -> Vec<Vec<String>> {
    let n = n.clamp(1, items.len().max(1));
    let (base, extra) = (items.len() / n, items.len() % n);
    let mut out = Vec::with_capacity(n);
    let mut start = 0;
    for i in 0..n {
        let len = base + usize::from(i < extra);
        out.push(items[start..start + len].to_vec());
        start += len;
    }
    out
}

/// The cloud rules on a resolved config.
pub fn check(cfg: &RunConfig, src: &Source) -> Check {
    let Some(c) = &cfg.cloud else { return Ok(()) };
    check_engine(c, &cfg.output, &cfg.data, src)?;
    if c.provider != Some(CloudProvider::Slurm) {
        machine_shape(cfg, c, src)?;
    }
    shard_count(cfg, c, src)?;
    if cfg.selection.spec.is_some() {
        return Err(src.error(
            &["selection", "spec"],
            "cloud runs measure the registry's transforms; a local spec file is not uploaded"
                .into(),
            "run the spec file locally, or select registry transforms for the cloud run",
        ));
    }
    Ok(())
}

/// The rules of the engine a resolved cloud section names, for a run or a production config.
pub fn check_engine(c: &CloudConfig, out: &OutputConfig, data: &DataConfig, src: &Source) -> Check {
    if c.provider == Some(CloudProvider::Slurm) {
        slurm(out, data, c, src)?;
    } else {
        batch_only_keys(c, src)?;
        uris(out, data, c, src)?;
        location(c, src)?;
    }
    counts(c, src)
}

/// Keys that only one engine reads, each with the engine that reads it.
fn keys_set(c: &CloudConfig, slurm_keys: bool) -> Vec<&'static str> {
    let set: Vec<(&'static str, bool)> = if slurm_keys {
        vec![
            ("shared_dir", c.shared_dir.is_some()),
            ("partition", c.partition.is_some()),
            ("account", c.account.is_some()),
            ("constraint", c.constraint.is_some()),
            ("gres", c.gres.is_some()),
            ("node_cache_dir", c.node_cache_dir.is_some()),
        ]
    } else {
        vec![
            ("project", c.project.is_some()),
            ("region", c.region.is_some()),
            ("zone", c.zone.is_some()),
            ("machine_type", c.machine_type.is_some()),
            ("gpu_type", c.gpu_type.is_some()),
            ("gpu_count", c.gpu_count.is_some()),
            ("disk_size_gb", c.disk_size_gb.is_some()),
            ("preemptible", c.preemptible.is_some()),
        ]
    };
    set.into_iter()
        .filter(|(_, on)| *on)
        .map(|(k, _)| k)
        .collect()
}

fn batch_only_keys(c: &CloudConfig, src: &Source) -> Check {
    match keys_set(c, true).first() {
        Some(key) => Err(src.error(
            &["cloud", key],
            format!("`{key}` is a Slurm setting, and this run goes to Google Cloud Batch"),
            "add `provider: slurm` to the `cloud:` section, or remove the key",
        )),
        None => Ok(()),
    }
}

/// The Slurm rules: an absolute shared folder, no Batch or GCS keys.
fn slurm(out: &OutputConfig, data: &DataConfig, c: &CloudConfig, src: &Source) -> Check {
    if let Some(key) = keys_set(c, false).first() {
        return Err(src.error(
            &["cloud", key],
            format!("`{key}` is a Google Cloud Batch setting, and this run goes to Slurm"),
            "remove it (Slurm: partition, account, constraint, gres, max_run_duration_sec)",
        ));
    }
    let gcs: [(&[&str], bool); 2] = [
        (
            &["output", "gcs_results_uri"],
            out.gcs_results_uri.is_some(),
        ),
        (&["data", "gcs_uri"], data.gcs_uri.is_some()),
    ];
    if let Some((key, _)) = gcs.iter().find(|(_, on)| *on) {
        return Err(src.error(
            key,
            "a Slurm run keeps its files on `cloud.shared_dir`, not in GCS".into(),
            "remove the gs:// setting; give `data.data_dir` (staged onto the shared folder) or nothing (the embedded dataset)",
        ));
    }
    match &c.shared_dir {
        Some(d) if d.is_absolute() => Ok(()),
        Some(d) => Err(src.error(
            &["cloud", "shared_dir"],
            format!("`shared_dir: {}` is relative; every node must find it by the same path", d.display()),
            "give an absolute path on the cluster's shared filesystem",
        )),
        None => Err(src.error(
            &["cloud"],
            "a Slurm run needs `cloud.shared_dir`".into(),
            "set `shared_dir:` to a folder every node mounts at the same path (bundle, task folders, environment cache)",
        )),
    }
}

fn gs(uri: &str) -> bool {
    uri.strip_prefix("gs://")
        .is_some_and(|rest| !rest.is_empty() && !rest.starts_with('/'))
}

fn uris(out: &OutputConfig, data: &DataConfig, c: &CloudConfig, src: &Source) -> Check {
    let Some(results) = &out.gcs_results_uri else {
        return Err(src.error(
            &["cloud"],
            "cloud runs need `output.gcs_results_uri`".into(),
            "set `output.gcs_results_uri: gs://bucket/results` (every task writes its results, logs and DONE.json there)",
        ));
    };
    let checks: [(&[&str], Option<&String>); 3] = [
        (&["output", "gcs_results_uri"], Some(results)),
        (&["data", "gcs_uri"], data.gcs_uri.as_ref()),
        (&["cloud", "venv_cache_uri"], c.venv_cache_uri.as_ref()),
    ];
    for (key, uri) in checks {
        if let Some(u) = uri
            && !gs(u)
        {
            let name = key.last().copied().unwrap_or_default();
            return Err(src.error(
                key,
                format!("`{name}` must be a gs:// URI, got `{u}`"),
                "e.g. gs://my-bucket/augbench",
            ));
        }
    }
    if data.data_dir.is_none() && data.gcs_uri.is_none() {
        return Err(src.error(
            &["cloud"],
            "cloud runs need a dataset: `data.data_dir` (staged and uploaded) or `data.gcs_uri`".into(),
            "set `data.data_dir` to a local folder, or `data.gcs_uri` to a tarball made by `augbench stage`",
        ));
    }
    Ok(())
}

fn location(c: &CloudConfig, src: &Source) -> Check {
    let (Some(region), zone) = (&c.region, &c.zone) else {
        return Err(src.error(
            &["cloud"],
            "cloud runs need `cloud.region` or `cloud.zone`".into(),
            "e.g. `zone: us-central1-a` (Batch runs the job in that zone's region)",
        ));
    };
    if let Some(z) = zone
        && !z.starts_with(&format!("{region}-"))
    {
        return Err(src.error(
            &["cloud", "zone"],
            format!("zone `{z}` is not in region `{region}`"),
            "remove `region` (it follows the zone) or pick a zone of that region",
        ));
    }
    Ok(())
}

/// A GPU shape only where a job runs on CUDA, and CUDA jobs only on a GPU shape.
fn machine_shape(cfg: &RunConfig, c: &CloudConfig, src: &Source) -> Check {
    // `auto` stays `auto` only for libraries that have CUDA (the others are planned on the CPU).
    let cuda = cfg
        .selection
        .libraries
        .iter()
        .flatten()
        .any(|lib| plan::job_key(cfg, lib).device != Device::Cpu);
    if let Some(gpu) = &c.gpu_type
        && !cuda
    {
        return Err(src.error(
            &["cloud", "gpu_type"],
            format!("`gpu_type: {gpu}` on a CPU-only run: every job of this run is planned on the CPU"),
            format!(
                "remove `gpu_type` and use a CPU shape (e.g. {}), or select libraries with `device: cuda` or `auto`",
                policy::CLOUD_CPU_MACHINE_TYPE
            ),
        ));
    }
    if cfg.execution.device == Some(Device::Cuda) && c.gpu_type.is_none() {
        return Err(src.error(
            &["execution", "device"],
            "`device: cuda` needs a GPU machine shape".into(),
            format!(
                "set `cloud.gpu_type` (e.g. nvidia-l4 with machine_type {})",
                policy::CLOUD_GPU_MACHINE_TYPE
            ),
        ));
    }
    Ok(())
}

fn counts(c: &CloudConfig, src: &Source) -> Check {
    let checks: [(&str, Option<u64>); 5] = [
        ("shards", c.shards),
        ("parallelism", c.parallelism),
        ("gpu_count", c.gpu_count),
        ("disk_size_gb", c.disk_size_gb),
        ("max_run_duration_sec", c.max_run_duration_sec),
    ];
    for (key, value) in checks {
        if value == Some(0) {
            return Err(src.error(
                &["cloud", key],
                format!("`{key}` must be at least 1"),
                "give a positive count, or leave it out for the default",
            ));
        }
    }
    Ok(())
}

fn shard_count(cfg: &RunConfig, c: &CloudConfig, src: &Source) -> Check {
    let n = c.shards.unwrap_or(1);
    let libraries = cfg.selection.libraries.as_ref().map_or(0, Vec::len) as u64;
    let key = ["cloud", "shards"];
    if plan::schedule(cfg).0 == Schedule::Sequential {
        if n != libraries.max(1) {
            return Err(src.error(
                &key,
                format!("the sequential schedule runs one library per shard: {libraries} shards, not {n}"),
                "remove `shards`, or use `schedule: interleaved` to split the transform list",
            ));
        }
        return Ok(());
    }
    let transforms = splittable(cfg).0.len() as u64;
    if n > transforms.max(1) {
        return Err(src.error(
            &key,
            format!("{n} shards for {transforms} transforms: a shard holds at least one transform"),
            format!("use at most {transforms} shards"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("t{i}")).collect()
    }

    #[test]
    fn split_is_balanced_contiguous_and_complete() {
        for (len, n) in [(10, 3), (3, 5), (7, 7), (1, 1), (40, 6)] {
            let items = names(len);
            let parts = split(&items, n);
            assert_eq!(parts.len(), n.min(len));
            assert_eq!(parts.concat(), items, "{len}/{n}");
            let sizes: Vec<usize> = parts.iter().map(Vec::len).collect();
            let (lo, hi) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
            assert!(hi - lo <= 1 && *lo >= 1, "{sizes:?}");
        }
    }

    #[test]
    fn region_follows_the_zone_unless_given() {
        let mut c = CloudConfig {
            zone: Some("us-central1-a".into()),
            ..CloudConfig::default()
        };
        assert_eq!(region(&c).as_deref(), Some("us-central1"));
        c.region = Some("europe-west4".into());
        assert_eq!(region(&c).as_deref(), Some("europe-west4"));
    }

    #[test]
    fn gs_uris_need_a_bucket() {
        assert!(gs("gs://b/results"));
        assert!(!gs("gs://"));
        assert!(!gs("s3://b/x"));
        assert!(!gs("/local/path"));
    }
}
