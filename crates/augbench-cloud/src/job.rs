//! What a run on another engine submits, built from a resolved config and pure: the run's layout
//! in its store, one config per shard, the task script (`templates/task.sh` with the engine's
//! prelude) and the job spec: the Google Cloud Batch job JSON (one task per shard, one task per
//! VM) or the Slurm array's `sbatch` options (one array task per shard, `--exclusive`).

use augbench_core::cloud::{self, Shard};
use augbench_core::config::{CloudConfig, CloudProvider};
use augbench_core::policy;

pub use crate::request::{Kind, Request};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

const TASK_TEMPLATE: &str = include_str!("../templates/task.sh");
const BATCH_PRELUDE: &str = include_str!("../templates/batch.sh");
const SLURM_PRELUDE: &str = include_str!("../templates/slurm.sh");
pub use crate::task::PREEMPTED_EXIT_CODE;

/// Where one run lives in its store: under `output.gcs_results_uri` (Batch) or
/// `cloud.shared_dir` (Slurm).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    pub results_uri: String,
    /// `<results>/<run name>`.
    pub run_uri: String,
    pub run_name: String,
}

impl Layout {
    pub fn new(results_uri: &str, run_name: &str) -> Self {
        let results_uri = results_uri.trim_end_matches('/').to_string();
        Layout {
            run_uri: format!("{results_uri}/{run_name}"),
            results_uri,
            run_name: run_name.to_string(),
        }
    }

    pub fn bundle(&self, file: &str) -> String {
        format!("{}/bundle/{file}", self.run_uri)
    }

    pub fn tasks(&self) -> String {
        format!("{}/tasks", self.run_uri)
    }

    /// `<results>/data/<sha256>.tar`: a staged dataset, shared by every run with the same bytes.
    pub fn staged_data(&self, sha256: &str) -> String {
        format!("{}/data/{sha256}.tar", self.results_uri)
    }
}

/// How an engine names a job: its name, location (Batch: the region; Slurm: the partition, or
/// empty for the default), project (Batch), and the id the engine gave it (Slurm's job id).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobRef {
    /// Job name (lower case letters, digits and `-`, at most 63 characters).
    pub name: String,
    pub location: String,
    pub project: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The shard each of the job's tasks runs, in task order, where that is not the task's own
    /// index: a Batch job resubmitting some shards numbers its tasks from 0 (Slurm keeps them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_shards: Option<Vec<u64>>,
}

/// The job of one machine shape, as its engine is asked to run it.
#[derive(Debug, Clone)]
pub struct JobSpec {
    pub job: JobRef,
    pub shards: Vec<Shard>,
    pub json: Value,
}

/// Everything a run uploads and submits.
#[derive(Debug, Clone)]
pub struct Submission {
    pub layout: Layout,
    pub data_uri: String,
    pub task_script: String,
    /// (task index, config YAML) of each shard.
    pub shard_configs: Vec<(u64, String)>,
    pub jobs: Vec<JobSpec>,
}

/// Where a job's spec is written under the run's `<output>/cloud/` folder.
pub fn job_file(cloud_dir: &std::path::Path, job: &str) -> std::path::PathBuf {
    cloud_dir.join(format!("{job}.json"))
}

/// The longest name Batch takes for a job.
pub const JOB_NAME_MAX: usize = 63;

/// A valid Batch job name from a run name: `augbench-<run>`, cut to `JOB_NAME_MAX` characters.
pub fn job_name(run_name: &str) -> String {
    let clean: String = format!("augbench-{run_name}")
        .chars()
        .map(|c| match c.to_ascii_lowercase() {
            c @ ('a'..='z' | '0'..='9') => c,
            _ => '-',
        })
        .collect();
    let cut: String = clean.chars().take(JOB_NAME_MAX).collect();
    cut.trim_end_matches('-').to_string()
}

/// Builds the submission of a request. `data_uri` is the dataset tarball in the store, or empty
/// where the tasks generate the embedded dataset (Slurm without `data_dir`).
pub fn build(req: &Request, layout: Layout, data_uri: &str) -> anyhow::Result<Submission> {
    let c = &req.cloud;
    let task_script = task_script(req, &layout, data_uri);
    let tasks = req.shards.len() as u64;
    let slurm = c.provider == Some(CloudProvider::Slurm);
    let job = JobSpec {
        job: JobRef {
            name: job_name(&layout.run_name),
            location: match slurm {
                true => c.partition.clone().unwrap_or_default(),
                false => cloud::region(c).unwrap_or_default(),
            },
            project: c.project.clone(),
            id: None,
            task_shards: None,
        },
        json: match slurm {
            true => sbatch_spec(c, &layout, tasks),
            false => job_json(&req.label, c, &layout, tasks),
        },
        shards: req.shards.clone(),
    };
    Ok(Submission {
        layout,
        data_uri: data_uri.to_string(),
        task_script,
        shard_configs: req.shard_configs.clone(),
        jobs: vec![job],
    })
}

/// The engine's part of the task script: the task index, the task's folders, the cache, and
/// `store_get`/`store_put`/`store_put_dir` for its store.
fn prelude(req: &Request) -> (String, &'static str) {
    let c = &req.cloud;
    if c.provider == Some(CloudProvider::Slurm) {
        let cache = c
            .node_cache_dir
            .as_ref()
            .map(|d| format!("export AUGBENCH_CACHE='{}'", d.display()))
            .unwrap_or_else(|| "# the augbench cache: each node's default".to_string());
        return (SLURM_PRELUDE.replace("{{NODE_CACHE}}", &cache), "Slurm");
    }
    let data_dir = req
        .data
        .remote_data_dir
        .clone()
        .unwrap_or_else(|| policy::CLOUD_REMOTE_DATA_DIR.to_string());
    let text = BATCH_PRELUDE.replace("{{REMOTE_DATA_DIR}}", &data_dir);
    (text, "Google Cloud Batch")
}

/// The task script: `templates/task.sh` with the engine's prelude and the run's values.
pub fn task_script(req: &Request, layout: &Layout, data_uri: &str) -> String {
    let c = &req.cloud;
    let cache = match c.venv_cache {
        Some(false) => String::new(),
        _ => c.venv_cache_uri.clone().unwrap_or_default(),
    };
    let (engine, engine_name) = prelude(req);
    let (command, output_flag) = match req.kind {
        Kind::Run => ("run", "--output"),
        Kind::Production => ("production", "--output-dir"),
    };
    TASK_TEMPLATE
        .replace("{{ENGINE}}", engine.trim_end())
        .replace("{{ENGINE_NAME}}", engine_name)
        .replace("{{RUN_NAME}}", &layout.run_name)
        .replace("{{RUN_URI}}", &layout.run_uri)
        .replace("{{DATA_URI}}", data_uri)
        .replace("{{ENV_GROUPS}}", &req.env_groups.join(" "))
        .replace("{{COMMAND}}", command)
        .replace("{{OUTPUT_FLAG}}", output_flag)
        .replace("{{VENV_CACHE_URI}}", &cache)
        .replace("{{SHARD_COUNT}}", &req.shards.len().to_string())
}

/// The Slurm array's `sbatch` options: `array` (every shard, at most `parallelism` at once) and
/// the options every submission of the run shares (a resubmission replaces only `array`).
pub fn sbatch_spec(c: &CloudConfig, layout: &Layout, tasks: u64) -> Value {
    let parallel = c.parallelism.unwrap_or(tasks).min(tasks);
    let minutes = c
        .max_run_duration_sec
        .unwrap_or(policy::CLOUD_MAX_RUN_DURATION_SEC)
        .div_ceil(60);
    let mut options = vec![
        format!("--job-name={}", job_name(&layout.run_name)),
        "--exclusive".to_string(),
        format!("--time={minutes}"),
        format!("--output={}/%a/slurm.out", layout.tasks()),
    ];
    let named = [
        ("partition", &c.partition),
        ("account", &c.account),
        ("constraint", &c.constraint),
        ("gres", &c.gres),
    ];
    for (flag, value) in named {
        if let Some(v) = value {
            options.push(format!("--{flag}={v}"));
        }
    }
    json!({
        "engine": "slurm",
        "array": format!("0-{}%{parallel}", tasks.saturating_sub(1)),
        "options": options,
        "script": layout.bundle("task.sh"),
        "tasks": layout.tasks(),
    })
}

/// The Batch runnable: fetch the task script from the bundle and run it.
fn bootstrap(layout: &Layout) -> String {
    format!(
        "set -euo pipefail\nscript=\"${{TMPDIR:-/tmp}}/augbench-task-$BATCH_TASK_INDEX.sh\"\ngcloud storage cp '{}' \"$script\"\nexec bash \"$script\"\n",
        layout.bundle("task.sh")
    )
}

/// The Batch job JSON (`gcloud batch jobs submit --config`).
pub fn job_json(label_text: &str, c: &CloudConfig, layout: &Layout, tasks: u64) -> Value {
    let spot = c.preemptible.unwrap_or(false);
    let mut task_spec = json!({
        "runnables": [{ "script": { "text": bootstrap(layout) } }],
        "maxRunDuration": format!("{}s", c.max_run_duration_sec.unwrap_or(policy::CLOUD_MAX_RUN_DURATION_SEC)),
        "maxRetryCount": if spot { policy::CLOUD_PREEMPTION_RETRIES } else { 0 },
    });
    if spot {
        task_spec["lifecyclePolicies"] = json!([{
            "action": "RETRY_TASK",
            "actionCondition": { "exitCodes": [PREEMPTED_EXIT_CODE] }
        }]);
    }
    let mut policy_json = json!({
        "machineType": c.machine_type,
        "provisioningModel": if spot { "SPOT" } else { "STANDARD" },
        "bootDisk": { "sizeGb": c.disk_size_gb.unwrap_or(policy::CLOUD_DISK_SIZE_GB) },
    });
    let mut instance = json!({});
    if let Some(gpu) = &c.gpu_type {
        policy_json["accelerators"] = json!([{
            "type": gpu,
            "count": c.gpu_count.unwrap_or(policy::CLOUD_GPU_COUNT)
        }]);
        instance["installGpuDrivers"] = json!(true);
    }
    instance["policy"] = policy_json;
    let location = match &c.zone {
        Some(z) => format!("zones/{z}"),
        None => format!("regions/{}", cloud::region(c).unwrap_or_default()),
    };
    json!({
        "taskGroups": [{
            "taskCount": tasks,
            "parallelism": c.parallelism.unwrap_or(tasks).min(tasks),
            "taskCountPerNode": 1,
            "taskSpec": task_spec,
        }],
        "allocationPolicy": {
            "location": { "allowedLocations": [location] },
            "instances": [instance],
        },
        "labels": {
            "augbench-run": label(&layout.run_name),
            "augbench-scenario": label(label_text),
        },
        "logsPolicy": { "destination": "CLOUD_LOGGING" },
    })
}

/// A GCP label value: lower case letters, digits, `-` and `_`, at most 63 characters.
fn label(value: &str) -> String {
    value
        .chars()
        .map(|c| match c.to_ascii_lowercase() {
            c @ ('a'..='z' | '0'..='9' | '-' | '_') => c,
            _ => '-',
        })
        .take(63)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_names_are_valid_batch_names() {
        let n = job_name("image-rgb-micro-0123456789ab-20260101T120000");
        assert_eq!(n, "augbench-image-rgb-micro-0123456789ab-20260101t120000");
        let long = job_name(&"x_".repeat(80));
        assert!(long.len() <= 63 && !long.ends_with('-'), "{long}");
        assert!(long.chars().all(|c| c.is_ascii_lowercase() || c == '-'));
    }

    #[test]
    fn layout_paths() {
        let l = Layout::new("gs://b/results/", "r1");
        assert_eq!(l.run_uri, "gs://b/results/r1");
        assert_eq!(l.bundle("task.sh"), "gs://b/results/r1/bundle/task.sh");
        assert_eq!(l.staged_data("ab"), "gs://b/results/data/ab.tar");
    }
}
