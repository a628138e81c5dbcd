//! The Google Cloud Batch engine: what it alone does, through `gcloud` (submit the job JSON,
//! describe the job, list its tasks, delete it). Batch retries preempted tasks itself; failed
//! tasks are resubmitted as a job of their own, whose tasks are told their shards.

use std::path::Path;

use anyhow::Context;
use augbench_host::fsutil::write_atomic;
use serde_json::Value;

use crate::engine::Engine;
use crate::gcloud;
use crate::job::{JOB_NAME_MAX, JobRef, JobSpec, job_file};
use crate::store::Store;
use crate::task::TaskStatus;

pub struct Batch;

impl Engine for Batch {
    fn store(&self) -> Store {
        Store::Gcs
    }

    fn poll_sec(&self) -> u64 {
        augbench_core::policy::CLOUD_POLL_SEC
    }

    fn preflight(&self, _cloud: &augbench_core::config::CloudConfig) -> anyhow::Result<()> {
        Ok(())
    }

    fn submit(&self, job: &JobSpec, cloud_dir: &Path) -> anyhow::Result<JobRef> {
        gcloud::submit(&job.job, &job_file(cloud_dir, &job.job.name))?;
        Ok(job.job.clone())
    }

    fn job_state(&self, job: &JobRef) -> anyhow::Result<String> {
        Ok(gcloud::job_state(job)?)
    }

    fn tasks(&self, job: &JobRef) -> anyhow::Result<Vec<TaskStatus>> {
        let tasks = gcloud::tasks(job)?;
        let Some(shards) = &job.task_shards else {
            return Ok(tasks);
        };
        // A retry job's task i runs shard `shards[i]`; a task past the list runs none.
        let shard = |mut t: TaskStatus| {
            t.index = *shards.get(usize::try_from(t.index).ok()?)?;
            Some(t)
        };
        Ok(tasks.into_iter().filter_map(shard).collect())
    }

    fn cancel(&self, job: &JobRef) -> anyhow::Result<()> {
        Ok(gcloud::delete(job)?)
    }

    /// A job of its own for `indices`: the first job's JSON with one task per shard, its
    /// runnable told which (`AUGBENCH_SHARDS`, read before the task script starts: Batch numbers
    /// a job's tasks from 0, and a run submitted by an older augbench has an older task script),
    /// under the first free name `<first job>-r<n>`.
    fn resubmit(&self, job: &JobRef, indices: &[u64], cloud_dir: &Path) -> anyhow::Result<JobRef> {
        let base = first_job_name(&job.name);
        let first = job_file(cloud_dir, base);
        let text = std::fs::read_to_string(&first)
            .with_context(|| format!("reading the job file {}", first.display()))?;
        let mut json: Value = serde_json::from_str(&text)
            .with_context(|| format!("{} is not a Batch job's JSON", first.display()))?;
        retry_json(&mut json, indices)
            .with_context(|| format!("{} is not a Batch job augbench wrote", first.display()))?;
        let name = (1..)
            .map(|n| retry_name(base, n))
            .find(|n| !job_file(cloud_dir, n).exists())
            .unwrap_or_default();
        let path = job_file(cloud_dir, &name);
        write_atomic(&path, serde_json::to_string_pretty(&json)?.as_bytes())?;
        let new = JobRef {
            name,
            id: None,
            task_shards: Some(indices.to_vec()),
            ..job.clone()
        };
        gcloud::submit(&new, &path)?;
        Ok(new)
    }
}

/// The runnable's first line for a retry job: its task's shard from `AUGBENCH_SHARDS` as
/// `BATCH_TASK_INDEX`, so the task script runs that shard; a task without one stops.
const SHARD_OF_TASK: &str = r#"BATCH_TASK_INDEX="$(cut -d, -f"$((BATCH_TASK_INDEX + 1))" <<<"$AUGBENCH_SHARDS")"; [[ "$BATCH_TASK_INDEX" =~ ^[0-9]+$ ]] || { echo "no shard for this task in AUGBENCH_SHARDS=$AUGBENCH_SHARDS" >&2; exit 1; }; export BATCH_TASK_INDEX
"#;

/// The first job's JSON made a retry of `indices`: one task per shard, at most that many at
/// once, each told its shard. An error where the JSON lacks a task group with a script runnable.
fn retry_json(json: &mut Value, indices: &[u64]) -> anyhow::Result<()> {
    let group = json
        .pointer_mut("/taskGroups/0")
        .filter(|g| g.is_object())
        .context("no taskGroups[0]")?;
    let count = indices.len() as u64;
    group["taskCount"] = count.into();
    let parallelism = group["parallelism"].as_u64().unwrap_or(count).min(count);
    group["parallelism"] = parallelism.into();
    let list: Vec<String> = indices.iter().map(u64::to_string).collect();
    let spec = &mut group["taskSpec"];
    spec["environment"]["variables"]["AUGBENCH_SHARDS"] = list.join(",").into();
    let text = spec
        .pointer_mut("/runnables/0/script/text")
        .filter(|t| t.is_string())
        .context("no script runnable in taskSpec.runnables[0]")?;
    *text = format!("{SHARD_OF_TASK}{}", text.as_str().unwrap_or_default()).into();
    Ok(())
}

/// The first job's name from a retry's (`<first>-r<n>`, any depth).
fn first_job_name(name: &str) -> &str {
    let mut base = name;
    while let Some((head, n)) = base.rsplit_once("-r")
        && !n.is_empty()
        && n.bytes().all(|b| b.is_ascii_digit())
    {
        base = head;
    }
    base
}

/// `<job>-r<n>`, cut so it stays a valid Batch job name (at most `JOB_NAME_MAX` characters).
fn retry_name(job: &str, n: u32) -> String {
    let tail = format!("-r{n}");
    let keep = job.len().min(JOB_NAME_MAX - tail.len());
    format!("{}{tail}", job[..keep].trim_end_matches('-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_retry_name_stays_a_batch_job_name() {
        assert_eq!(retry_name("augbench-run", 2), "augbench-run-r2");
        let long = "a".repeat(63);
        let name = retry_name(&long, 12);
        assert_eq!((name.len(), name.ends_with("-r12")), (63, true));
        assert_eq!(
            first_job_name("augbench-x-20261207t0205-r1"),
            "augbench-x-20261207t0205"
        );
        assert_eq!(first_job_name("augbench-x-r1-r2"), "augbench-x");
        assert_eq!(first_job_name("augbench-run"), "augbench-run");
    }

    /// The retry job: one task per shard, parallelism capped, each task's shard read first.
    #[test]
    fn a_retry_job_runs_one_task_per_shard_each_told_its_shard() {
        let mut json = serde_json::json!({"taskGroups": [{"taskCount": 6, "parallelism": 6,
            "taskSpec": {"runnables": [{"script": {"text": "exec bash task.sh\n"}}]}}]});
        retry_json(&mut json, &[1, 4]).unwrap();
        let group = &json["taskGroups"][0];
        assert_eq!(
            (group["taskCount"].as_u64(), group["parallelism"].as_u64()),
            (Some(2), Some(2))
        );
        let vars = &group["taskSpec"]["environment"]["variables"];
        assert_eq!(vars["AUGBENCH_SHARDS"], "1,4");
        let text = group["taskSpec"]["runnables"][0]["script"]["text"]
            .as_str()
            .unwrap();
        assert!(
            text.starts_with(SHARD_OF_TASK) && text.ends_with("exec bash task.sh\n"),
            "{text}"
        );
        // The shell line itself: task 1 runs shard 4, a task past the list stops.
        let run = |task: &str| {
            let script = format!("{SHARD_OF_TASK}echo \"$BATCH_TASK_INDEX\"");
            std::process::Command::new("bash")
                .args(["-c", &script])
                .env("BATCH_TASK_INDEX", task)
                .env("AUGBENCH_SHARDS", "1,4")
                .output()
                .unwrap()
        };
        assert_eq!(String::from_utf8_lossy(&run("1").stdout), "4\n");
        assert!(!run("2").status.success());
        let mut empty = serde_json::json!({});
        assert!(retry_json(&mut empty, &[1]).is_err());
    }
}
