//! Small facts every part of augbench reads the same way: the time now (UTC, RFC 3339), the CPU
//! brand and the total memory as sysinfo reports them, augbench's version and the rustc on
//! `PATH`. Each is written once here; the CPU brand and memory are read only by the machine card's
//! probe (`machine::card`). (The last lines of a process's output are `child`'s.)

/// The time now, UTC, to the second (`2026-01-02T03:04:05Z`).
pub fn now_utc() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// The CPU brand of the first logical CPU (trimmed; `None` when sysinfo cannot tell) and the
/// total memory in bytes (0 when it cannot).
pub fn cpu() -> (Option<String>, u64) {
    let Ok(mut sys) = sysinfo::System::new() else {
        return (None, 0);
    };
    sys.refresh_cpu_list(sysinfo::CpuRefreshKind::nothing());
    sys.refresh_memory();
    let brand = sys
        .cpus()
        .first()
        .map(|c| c.brand().trim().to_string())
        .filter(|s| !s.is_empty());
    (brand, sys.total_memory())
}

/// augbench's version: the workspace's, one for every crate.
pub const AUGBENCH_VERSION: &str = env!("CARGO_PKG_VERSION");

/// `rustc --version` of the compiler on `PATH` (`unknown` when it does not answer).
pub fn rustc_version() -> String {
    std::process::Command::new("rustc")
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn now_is_rfc3339_utc_to_the_second() {
        let t = now_utc();
        assert_eq!(t.len(), 20, "{t}");
        assert!(t.ends_with('Z'), "{t}");
    }
}
