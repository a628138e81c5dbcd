//! The Slurm engine: one `sbatch --array` job per machine shape (`--exclusive`, so two timed
//! tasks never share a node), files on the shared folder, followed with `scontrol` (and `sacct`
//! for jobs the controller has forgotten), cancelled with `scancel`, and a failed task
//! resubmitted alone as a new array of its index. Slurm's states are read in Batch's words.

use std::path::Path;
use std::process::Command;

use anyhow::Context;
use augbench_core::UsageError;
use augbench_host::child;
use serde_json::Value;

use crate::engine::Engine;
use crate::job::{JobRef, JobSpec, job_file};
use crate::store::Store;
use crate::task::TaskStatus;

/// Lines of a Slurm tool's stderr kept in an error.
const ERROR_TAIL_LINES: usize = 12;

pub struct Slurm;

/// Runs a Slurm client tool and returns its stdout.
fn run(tool: &str, args: &[&str]) -> anyhow::Result<String> {
    let done = child::run(Command::new(tool).args(args), ERROR_TAIL_LINES).map_err(|e| {
        UsageError::new(
            format!("cannot start `{tool}`: {}", e.into_io()),
            "run augbench where the Slurm client tools are on PATH (a login node), or install them (Debian: slurm-client)",
        )
    })?;
    if done.status.success() {
        return Ok(done.stdout_text());
    }
    anyhow::bail!(
        "`{tool} {}` failed (exit {}):\n{}",
        args.join(" "),
        done.status.code().unwrap_or(-1),
        done.stderr.trim_end()
    )
}

fn check_partition(partition: &str) -> anyhow::Result<()> {
    let found = run("sinfo", &["-h", "-p", partition, "-o", "%P"])?;
    if !found.trim().is_empty() {
        return Ok(());
    }
    let all = run("sinfo", &["-h", "-o", "%P"]).unwrap_or_default();
    let names: Vec<&str> = all.split_whitespace().collect();
    Err(UsageError::new(
        format!("Slurm has no partition `{partition}`"),
        format!(
            "set `cloud.partition` to one of: {} (or remove it for the default)",
            names.join(", ")
        ),
    )
    .into())
}

fn check_writable(dir: &Path) -> anyhow::Result<()> {
    let probe = dir.join(format!(
        ".augbench-write-check{}",
        augbench_host::fsutil::temp_suffix()
    ));
    let written = std::fs::create_dir_all(dir).and_then(|()| std::fs::write(&probe, b"ok"));
    let _ = std::fs::remove_file(&probe);
    written.map_err(|e| {
        UsageError::new(
            format!("cannot write to the shared folder {}: {e}", dir.display()),
            "set `cloud.shared_dir` to a folder you can write that every node mounts at the same path",
        )
        .into()
    })
}

/// The job spec file written at submission (`job::sbatch_spec`).
fn spec(cloud_dir: &Path, name: &str) -> anyhow::Result<Value> {
    let path = job_file(cloud_dir, name);
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{} is not a job spec", path.display()))
}

/// `sbatch --parsable --array=ARRAY OPTIONS SCRIPT`, after creating each task's folder (its
/// `--output` goes there); returns the job id.
fn sbatch(spec: &Value, array: &str, indices: &[u64]) -> anyhow::Result<String> {
    let tasks = spec["tasks"].as_str().unwrap_or_default();
    for i in indices {
        let dir = Path::new(tasks).join(i.to_string());
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let mut args = vec!["--parsable".to_string(), format!("--array={array}")];
    let options = spec["options"].as_array().into_iter().flatten();
    args.extend(options.filter_map(|o| o.as_str().map(str::to_string)));
    args.push(spec["script"].as_str().unwrap_or_default().to_string());
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run("sbatch", &refs)?;
    let id = out.trim().split(';').next().unwrap_or_default().to_string();
    anyhow::ensure!(!id.is_empty(), "sbatch printed no job id");
    Ok(id)
}

impl Engine for Slurm {
    fn store(&self) -> Store {
        Store::Shared
    }

    fn poll_sec(&self) -> u64 {
        augbench_core::policy::SLURM_POLL_SEC
    }

    fn preflight(&self, c: &augbench_core::config::CloudConfig) -> anyhow::Result<()> {
        run("sbatch", &["--version"])?;
        if let Some(p) = &c.partition {
            check_partition(p)?;
        }
        match &c.shared_dir {
            Some(dir) => check_writable(dir),
            None => anyhow::bail!("a Slurm run needs `cloud.shared_dir`"),
        }
    }

    fn submit(&self, job: &JobSpec, cloud_dir: &Path) -> anyhow::Result<JobRef> {
        let spec = spec(cloud_dir, &job.job.name)?;
        let indices: Vec<u64> = job.shards.iter().map(|s| s.index).collect();
        let array = spec["array"].as_str().unwrap_or_default().to_string();
        let id = sbatch(&spec, &array, &indices)?;
        Ok(JobRef {
            id: Some(id),
            ..job.job.clone()
        })
    }

    fn job_state(&self, job: &JobRef) -> anyhow::Result<String> {
        Ok(summary_state(&self.tasks(job)?))
    }

    fn tasks(&self, job: &JobRef) -> anyhow::Result<Vec<TaskStatus>> {
        let id = job.id.as_deref().unwrap_or_default();
        if let Ok(text) = run("scontrol", &["show", "job", "-o", id]) {
            return Ok(sorted(text.lines().flat_map(parse_scontrol).collect()));
        }
        let fields = "JobID,State,ExitCode";
        match run("sacct", &["-j", id, "-X", "-n", "-P", "-o", fields]) {
            Ok(text) => Ok(sorted(text.lines().flat_map(parse_sacct).collect())),
            Err(_) => Ok(Vec::new()),
        }
    }

    fn cancel(&self, job: &JobRef) -> anyhow::Result<()> {
        run("scancel", &[job.id.as_deref().unwrap_or_default()]).map(drop)
    }

    fn resubmit(&self, job: &JobRef, indices: &[u64], cloud_dir: &Path) -> anyhow::Result<JobRef> {
        let spec = spec(cloud_dir, &job.name)?;
        let array: Vec<String> = indices.iter().map(u64::to_string).collect();
        let id = sbatch(&spec, &array.join(","), indices)?;
        Ok(JobRef {
            id: Some(id),
            ..job.clone()
        })
    }
}

fn sorted(mut tasks: Vec<TaskStatus>) -> Vec<TaskStatus> {
    tasks.sort_by_key(|t| t.index);
    tasks
}

/// The job's state from its tasks': queued or running while any is, else failed or succeeded.
fn summary_state(tasks: &[TaskStatus]) -> String {
    let any = |s: &str| tasks.iter().any(|t| t.state == s);
    let state = match () {
        _ if tasks.is_empty() => "UNKNOWN",
        _ if any("RUNNING") => "RUNNING",
        _ if any("PENDING") => "QUEUED",
        _ if any("FAILED") => "FAILED",
        _ => "SUCCEEDED",
    };
    state.to_string()
}

/// Slurm's job state in Batch's words.
fn state_word(slurm: &str) -> &'static str {
    match slurm.split_whitespace().next().unwrap_or_default() {
        "PENDING" | "REQUEUED" | "SUSPENDED" | "RESV_DEL_HOLD" | "REQUEUE_HOLD" => "PENDING",
        "RUNNING" | "CONFIGURING" | "COMPLETING" | "STAGE_OUT" | "SIGNALING" => "RUNNING",
        "COMPLETED" => "SUCCEEDED",
        _ => "FAILED",
    }
}

/// `0-2%3`, `1,3`, `5` → the indices (`%` limits what runs at once).
fn expand(array: &str) -> Vec<u64> {
    let list = array.split('%').next().unwrap_or_default();
    let list = list.trim_start_matches('[').trim_end_matches(']');
    list.split(',')
        .flat_map(|part| match part.split_once('-') {
            Some((a, b)) => match (a.parse::<u64>(), b.parse::<u64>()) {
                (Ok(a), Ok(b)) if a <= b => (a..=b).collect(),
                _ => Vec::new(),
            },
            None => part.parse().into_iter().collect(),
        })
        .collect()
}

fn tasks_of(array: &str, state: &str, exit: &str, reason: &str) -> Vec<TaskStatus> {
    let mut event = format!("Slurm state {state} (exit {exit})");
    if !reason.is_empty() && reason != "None" {
        event.push_str(&format!(", reason {reason}"));
    }
    expand(array)
        .into_iter()
        .map(|index| TaskStatus {
            index,
            state: state_word(state).to_string(),
            events: vec![event.clone()],
        })
        .collect()
}

/// One line of `scontrol show job -o`: `ArrayTaskId=…`, `JobState=…`, `ExitCode=…`, `Reason=…`.
fn parse_scontrol(line: &str) -> Vec<TaskStatus> {
    let field = |key: &str| {
        line.split_whitespace()
            .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
            .unwrap_or_default()
    };
    tasks_of(
        field("ArrayTaskId"),
        field("JobState"),
        field("ExitCode"),
        field("Reason"),
    )
}

/// One line of `sacct -X -n -P -o JobID,State,ExitCode`: `12_1|COMPLETED|0:0`, `12_[2-3]|…`.
fn parse_sacct(line: &str) -> Vec<TaskStatus> {
    let parts: Vec<&str> = line.split('|').collect();
    let [job, state, exit] = parts[..] else {
        return Vec::new();
    };
    let array = job.split_once('_').map(|(_, a)| a).unwrap_or_default();
    tasks_of(array, state, exit, "")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn array_ranges_expand() {
        assert_eq!(expand("0-2%3"), vec![0, 1, 2]);
        assert_eq!(expand("1,3"), vec![1, 3]);
        assert_eq!(expand("[2-3,7]"), vec![2, 3, 7]);
        assert_eq!(expand("x"), Vec::<u64>::new());
    }

    #[test]
    fn scontrol_and_sacct_lines_read_in_batch_words() {
        let line = "JobId=3 ArrayJobId=1 ArrayTaskId=1 JobName=a JobState=CANCELLED Reason=None ExitCode=0:15";
        let t = parse_scontrol(line);
        assert_eq!((t[0].index, t[0].state.as_str()), (1, "FAILED"));
        assert_eq!(t[0].events, vec!["Slurm state CANCELLED (exit 0:15)"]);
        let pending = parse_scontrol(
            "JobId=1 ArrayTaskId=2-3%1 JobState=PENDING Reason=JobArrayTaskLimit ExitCode=0:0",
        );
        assert_eq!(
            pending.iter().map(|t| t.index).collect::<Vec<_>>(),
            vec![2, 3]
        );
        assert!(
            pending
                .iter()
                .all(|t| t.state == "PENDING" && !t.finished())
        );
        let done = parse_sacct("12_0|COMPLETED|0:0");
        assert_eq!((done[0].index, done[0].state.as_str()), (0, "SUCCEEDED"));
        assert_eq!(summary_state(&[t[0].clone(), done[0].clone()]), "FAILED");
        assert_eq!(summary_state(&pending), "QUEUED");
    }
}
