//! Facts about the machine and the checkout, recorded in every result file: OS, timestamp, the
//! machine card with the state at the job's start (`machine`; the CPU name, thread count and
//! memory of the reference layout are copied from it), and git commit/branch/dirty of the current
//! folder when it is a git checkout.

use std::process::Command;

use augbench_core::results::{EnvironmentInfo, SystemInfo};

/// The machine as a result file records it, with the state at this moment as the card's `before`.
pub fn system_info(runtime: &str) -> SystemInfo {
    let mut info = machine_info(runtime);
    if let Some(card) = info.card.as_mut() {
        card.before = Some(crate::machine::state());
    }
    info
}

/// The machine's fixed facts in the result files' layout, all from the one card
/// (`machine::card`): `processor`, `cpu_count` and `memory_total_bytes` repeat the card's CPU
/// model, threads and memory for readers of the reference format. No state is sampled.
pub fn machine_info(runtime: &str) -> SystemInfo {
    let card = crate::machine::card();
    SystemInfo {
        runtime: runtime.to_string(),
        platform: platform(),
        machine: std::env::consts::ARCH.to_string(),
        processor: card.cpu_model.clone(),
        cpu_count: card.logical_threads,
        memory_total_bytes: card.memory_total_bytes.unwrap_or_default(),
        timestamp: crate::facts::now_utc(),
        card: Some(card),
    }
}

/// The OS name and version (`Ubuntu 24.04`).
fn platform() -> String {
    format!(
        "{} {}",
        sysinfo::System::name().unwrap_or_else(|_| std::env::consts::OS.to_string()),
        sysinfo::System::os_version().unwrap_or_default()
    )
    .trim()
    .to_string()
}

pub fn environment_info() -> EnvironmentInfo {
    EnvironmentInfo {
        argv: std::env::args().collect(),
        git_commit: git(&["rev-parse", "HEAD"]),
        git_branch: git(&["rev-parse", "--abbrev-ref", "HEAD"]),
        git_dirty: git(&["status", "--porcelain"]).map(|s| !s.is_empty()),
        toolkit_version: env!("CARGO_PKG_VERSION").to_string(),
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
    fn the_reference_fields_repeat_the_one_card() {
        let info = machine_info("rustc 1.95.0");
        let card = info.card.as_ref().unwrap();
        assert_eq!(info.processor, card.cpu_model);
        assert_eq!(info.cpu_count, card.logical_threads);
        assert_eq!(
            Some(info.memory_total_bytes),
            card.memory_total_bytes.or(Some(0))
        );
        assert_eq!(card.before, None, "no state sampled");
    }
}
