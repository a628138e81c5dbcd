//! The `gcloud` CLI, the only way augbench talks to Google Cloud: storage copies and listings,
//! and Batch jobs (submit, describe, tasks list, delete), each run through `host::child`. A failed
//! call keeps the tail of gcloud's own error text (quota, permissions, a machine type the region
//! lacks: not checkable offline).

use std::path::Path;
use std::process::Command;

use augbench_host::child;
use serde_json::Value;

use crate::job::JobRef;
use crate::task::TaskStatus;

/// Lines of gcloud's stderr kept in an error.
const ERROR_TAIL_LINES: usize = 12;

#[derive(Debug, thiserror::Error)]
pub enum GcloudError {
    #[error(
        "cannot start `gcloud`: {0}\n  hint: install the Google Cloud CLI (https://cloud.google.com/sdk/docs/install) and run `gcloud auth login`"
    )]
    Missing(std::io::Error),
    #[error("`gcloud {args}` failed (exit {code}):\n{stderr}")]
    Failed {
        args: String,
        code: i32,
        stderr: String,
    },
}

/// Runs `gcloud ARGS` and returns its stdout.
pub fn run(args: &[&str]) -> Result<String, GcloudError> {
    let done = child::run(Command::new("gcloud").args(args), ERROR_TAIL_LINES)
        .map_err(|e| GcloudError::Missing(e.into_io()))?;
    if done.status.success() {
        return Ok(done.stdout_text());
    }
    Err(GcloudError::Failed {
        args: args.join(" "),
        code: done.status.code().unwrap_or(-1),
        stderr: done.stderr,
    })
}

pub fn cp(src: &str, dst: &str) -> Result<(), GcloudError> {
    run(&["storage", "cp", src, dst]).map(drop)
}

pub fn cp_path(src: &Path, dst: &str) -> Result<(), GcloudError> {
    cp(&src.to_string_lossy(), dst)
}

pub fn rsync(src: &str, dst: &str) -> Result<(), GcloudError> {
    run(&["storage", "rsync", "--recursive", src, dst]).map(drop)
}

/// Whether an object exists (`gcloud storage ls` answers non-zero when nothing matches).
pub fn exists(uri: &str) -> bool {
    run(&["storage", "ls", uri]).is_ok()
}

fn with_location<'a>(job: &'a JobRef, args: &mut Vec<&'a str>) {
    args.extend(["--location", job.location.as_str()]);
    if let Some(p) = &job.project {
        args.extend(["--project", p.as_str()]);
    }
}

/// `gcloud batch jobs submit NAME --config FILE`.
pub fn submit(job: &JobRef, config: &Path) -> Result<Value, GcloudError> {
    let config = config.to_string_lossy();
    let mut args = vec!["batch", "jobs", "submit", job.name.as_str()];
    with_location(job, &mut args);
    args.extend(["--config", &config, "--format=json"]);
    let out = run(&args)?;
    Ok(serde_json::from_str(&out).unwrap_or(Value::String(out)))
}

/// The job's state (`QUEUED`, `SCHEDULED`, `RUNNING`, `SUCCEEDED`, `FAILED`, …).
pub fn job_state(job: &JobRef) -> Result<String, GcloudError> {
    let mut args = vec!["batch", "jobs", "describe", job.name.as_str()];
    with_location(job, &mut args);
    args.push("--format=json");
    let v: Value = serde_json::from_str(&run(&args)?).unwrap_or_default();
    Ok(v["status"]["state"]
        .as_str()
        .unwrap_or("UNKNOWN")
        .to_string())
}

pub fn tasks(job: &JobRef) -> Result<Vec<TaskStatus>, GcloudError> {
    let mut args = vec!["batch", "tasks", "list", "--job", job.name.as_str()];
    with_location(job, &mut args);
    args.push("--format=json");
    let v: Value = serde_json::from_str(&run(&args)?).unwrap_or_default();
    let mut tasks: Vec<TaskStatus> = v
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(parse_task)
        .collect();
    tasks.sort_by_key(|t| t.index);
    Ok(tasks)
}

/// `.../jobs/J/taskGroups/group0/tasks/3` → task 3, with its state and events.
fn parse_task(v: &Value) -> Option<TaskStatus> {
    let index = v["name"].as_str()?.rsplit('/').next()?.parse().ok()?;
    let status = &v["status"];
    let events = status["statusEvents"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            let code = e["taskExecution"]["exitCode"]
                .as_i64()
                .map(|c| format!(" (exit code {c})"))
                .unwrap_or_default();
            format!("{}{code}", e["description"].as_str().unwrap_or_default())
        })
        .collect();
    Some(TaskStatus {
        index,
        state: status["state"].as_str().unwrap_or("UNKNOWN").to_string(),
        events,
    })
}

/// `gcloud batch jobs delete NAME` (stops its tasks and deletes its VMs).
pub fn delete(job: &JobRef) -> Result<(), GcloudError> {
    let mut args = vec!["batch", "jobs", "delete", job.name.as_str()];
    with_location(job, &mut args);
    args.push("--quiet");
    run(&args).map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tasks_list_entries_parse_with_their_preemptions() {
        let v = serde_json::json!({
            "name": "projects/p/locations/us-central1/jobs/j/taskGroups/group0/tasks/3",
            "status": {
                "state": "SUCCEEDED",
                "statusEvents": [
                    {"description": "Task state is updated from RUNNING to FAILED", "taskExecution": {"exitCode": 50001}},
                    {"description": "Task state is updated from RUNNING to SUCCEEDED", "taskExecution": {"exitCode": 0}}
                ]
            }
        });
        let t = parse_task(&v).unwrap();
        assert_eq!((t.index, t.state.as_str()), (3, "SUCCEEDED"));
        assert!(t.preempted() && t.finished());
        assert!(parse_task(&serde_json::json!({"name": "x/tasks/notanumber"})).is_none());
    }
}
