//! Facts about the machine and the checkout, recorded in every result file: OS, CPU, memory,
//! timestamp, the machine card with the state at the job's start (`machine`), and git
//! commit/branch/dirty of the current folder when it is a git checkout.

use std::process::Command;

use augbench_core::results::{EnvironmentInfo, SystemInfo};

pub fn system_info(runtime: &str) -> SystemInfo {
    let (processor, memory) = cpu_and_memory();
    SystemInfo {
        runtime: runtime.to_string(),
        platform: format!(
            "{} {}",
            sysinfo::System::name().unwrap_or_else(|_| std::env::consts::OS.to_string()),
            sysinfo::System::os_version().unwrap_or_default()
        )
        .trim()
        .to_string(),
        machine: std::env::consts::ARCH.to_string(),
        processor,
        cpu_count: std::thread::available_parallelism().map_or(1, |n| n.get() as u64),
        memory_total_bytes: memory,
        timestamp: crate::facts::now_utc(),
        card: Some(augbench_core::results::MachineCard {
            before: Some(crate::machine::state()),
            ..crate::machine::card()
        }),
    }
}

fn cpu_and_memory() -> (String, u64) {
    let (brand, _, memory) = crate::facts::cpu();
    (brand.unwrap_or_default(), memory)
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
