//! What a run gave: each job's outcome (finished, interrupted with its finished rows, or failed
//! with the whole error chain) and the run's report over them, for the summaries and exit codes.

use std::path::PathBuf;

use augbench_core::UsageError;
use augbench_core::plan::Job;
use augbench_core::results::ResultFile;

/// The outcome of one job.
pub enum JobStatus {
    Finished(ResultFile),
    Interrupted(ResultFile),
    Failed(JobFailure),
}

/// Why a job failed: the whole error chain in one message, and whether the user's input caused
/// it (a spec file or media to fix; see `RunReport::bad_input`).
#[derive(Debug, Clone)]
pub struct JobFailure {
    pub message: String,
    pub bad_input: bool,
}

impl JobFailure {
    /// A failure that is not the user's input to fix.
    pub fn message(message: String) -> Self {
        JobFailure {
            message,
            bad_input: false,
        }
    }

    pub(crate) fn of(e: &anyhow::Error) -> Self {
        JobFailure {
            message: format!("{e:#}"),
            bad_input: e.chain().any(|c| c.is::<UsageError>()),
        }
    }
}

impl std::fmt::Display for JobFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

pub struct RunReport {
    pub jobs: Vec<(Job, JobStatus)>,
    pub out_dir: PathBuf,
}

impl RunReport {
    pub fn interrupted(&self) -> bool {
        self.jobs
            .iter()
            .any(|(_, s)| matches!(s, JobStatus::Interrupted(_)))
    }

    /// The result files the run wrote: finished jobs and interrupted ones (their finished rows).
    pub fn written(&self) -> Vec<&ResultFile> {
        self.jobs
            .iter()
            .filter_map(|(_, s)| match s {
                JobStatus::Finished(f) | JobStatus::Interrupted(f) => Some(f),
                JobStatus::Failed(_) => None,
            })
            .collect()
    }

    pub fn failed(&self) -> bool {
        self.jobs
            .iter()
            .any(|(_, s)| matches!(s, JobStatus::Failed(_)))
    }

    /// Every job failed, each because of the user's input (bad media, a broken spec file):
    /// nothing was measured, and the fix is the user's (exit code 2).
    pub fn bad_input(&self) -> bool {
        !self.jobs.is_empty()
            && self
                .jobs
                .iter()
                .all(|(_, s)| matches!(s, JobStatus::Failed(f) if f.bad_input))
    }
}
