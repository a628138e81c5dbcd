//! One task's state as its engine reports it, in Batch's words, so status, waiting and fetch
//! read both engines alike.

use serde::Deserialize;

/// Batch's exit code for a task whose Spot VM was preempted (Batch troubleshooting, reserved
/// exit codes); the only failure a cloud run retries.
pub const PREEMPTED_EXIT_CODE: i64 = 50001;

/// One task as its engine reports it, in Batch's words (`PENDING`, `RUNNING`, `SUCCEEDED`,
/// `FAILED`, …), so status, waiting and fetch read both engines alike.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct TaskStatus {
    pub index: u64,
    pub state: String,
    /// What the engine says happened, oldest first (exit codes, preemptions, Slurm's own state).
    pub events: Vec<String>,
}

impl TaskStatus {
    pub fn finished(&self) -> bool {
        matches!(self.state.as_str(), "SUCCEEDED" | "FAILED")
    }

    /// Whether any attempt of the task ended in a Spot preemption (or a Slurm preemption).
    pub fn preempted(&self) -> bool {
        let code = PREEMPTED_EXIT_CODE.to_string();
        self.events
            .iter()
            .any(|e| e.contains(&code) || e.to_ascii_lowercase().contains("preempt"))
    }
}
