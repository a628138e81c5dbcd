//! Facts about the job and the checkout, recorded in every result file: the machine card
//! (`machine`'s one probe) with the job's runtime, start time and the state at its start, and git
//! commit/branch/dirty of the current folder when it is a git checkout.

use std::process::Command;

use augbench_core::machine_card::MachineCard;
use augbench_core::results::EnvironmentInfo;

/// The machine card as a job's result file records it: the one probe (`machine::card`) with the
/// job's runtime, the time now, and the state at this moment as `before`.
pub fn system_info(runtime: &str) -> MachineCard {
    MachineCard {
        runtime: runtime.to_string(),
        timestamp: crate::facts::now_utc(),
        before: Some(crate::machine::state()),
        ..crate::machine::card()
    }
}

pub fn environment_info() -> EnvironmentInfo {
    EnvironmentInfo {
        argv: std::env::args().collect(),
        git_commit: git(&["rev-parse", "HEAD"]),
        git_branch: git(&["rev-parse", "--abbrev-ref", "HEAD"]),
        git_dirty: git(&["status", "--porcelain"]).map(|s| !s.is_empty()),
        toolkit_version: crate::facts::AUGBENCH_VERSION.to_string(),
    }
}

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Memory available to a new process now (bytes), when the system says.
pub fn available_memory() -> Option<u64> {
    let mut sys = sysinfo::System::new().ok()?;
    sys.refresh_memory();
    Some(sys.available_memory()).filter(|m| *m > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_jobs_card_is_the_one_probe_with_the_jobs_facts() {
        let info = system_info("rustc 1.95.0");
        assert_eq!(info.runtime, "rustc 1.95.0");
        assert!(info.timestamp.ends_with('Z'), "{}", info.timestamp);
        assert!(info.before.is_some() && info.after.is_none());
        assert_eq!(info.fixed(), crate::machine::card(), "nothing else differs");
    }
}
