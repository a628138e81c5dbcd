//! The system card: what machine produced a benchmark cell, in the cells' columns. It probes
//! nothing: it is read from a result file's machine card (`From<&SystemInfo>`), plus the rustc on
//! `PATH` (`rustc_version`). The stamp evaluation cells carry is augbench-eval's (`stamp`).

use std::process::Command;

use augbench_core::results::SystemInfo;
use serde::{Deserialize, Serialize};

/// The augbench version stamped as `toolkit_version`.
pub const TOOLKIT_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Version string used when a tool does not answer.
pub const UNKNOWN: &str = "unknown";

/// Hardware and software context of a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SystemCard {
    pub cpu_name: Option<String>,
    pub cpu_cores: Option<u64>,
    pub ram_gb: Option<f64>,
    pub gpu_name: Option<String>,
    pub gpu_memory_gb: Option<f64>,
    /// Numeric precision of the model under test (e.g. `fp16`); never detected, set by the caller.
    pub precision: Option<String>,
    /// Batch size of the model under test; never detected, set by the caller.
    pub batch_size: Option<i64>,
    pub os: Option<String>,
    pub rustc_version: String,
    pub augbench_version: String,
}

/// The machine a result file records: its machine card (the reference fields for files written
/// before the card), the first GPU of the card's list. `rustc_version` is not the machine's:
/// it stays `unknown` here, for the caller to fill.
impl From<&SystemInfo> for SystemCard {
    fn from(info: &SystemInfo) -> Self {
        let card = info.card.as_ref();
        let gpu = card.and_then(|c| c.gpus.first());
        let cpu = card.map_or(&info.processor, |c| &c.cpu_model);
        let cores = card.map_or(info.cpu_count, |c| c.logical_threads);
        let memory = card.and_then(|c| c.memory_total_bytes);
        let memory = memory.unwrap_or(info.memory_total_bytes);
        SystemCard {
            cpu_name: Some(cpu.clone()).filter(|s| !s.is_empty()),
            cpu_cores: (cores > 0).then_some(cores),
            ram_gb: (memory > 0).then(|| memory as f64 / f64::from(1u32 << 30)),
            gpu_name: gpu.map(|g| g.name.clone()),
            gpu_memory_gb: gpu.and_then(|g| g.memory_gib),
            precision: None,
            batch_size: None,
            os: Some(info.platform.clone()).filter(|s| !s.is_empty()),
            rustc_version: UNKNOWN.to_string(),
            augbench_version: TOOLKIT_VERSION.to_string(),
        }
    }
}

/// `rustc --version` of the compiler on `PATH` (`unknown` when it does not answer).
pub fn rustc_version() -> String {
    Command::new("rustc")
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| UNKNOWN.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_files_card_is_the_system_card() {
        let mut info = augbench_host::system::machine_info("rustc 1.95.0");
        let card = info.card.as_mut().unwrap();
        card.gpus = vec![augbench_host::gpu::Gpu {
            name: "NVIDIA L4".into(),
            memory_gib: Some(22.5),
        }];
        card.memory_total_bytes = Some(8 << 30);
        let card = card.clone();
        let s = SystemCard::from(&info);
        assert_eq!(
            s.cpu_name,
            Some(card.cpu_model.clone()).filter(|c| !c.is_empty())
        );
        assert_eq!(s.cpu_cores, Some(card.logical_threads));
        assert_eq!(s.ram_gb, Some(8.0));
        assert_eq!(s.gpu_name.as_deref(), Some("NVIDIA L4"));
        assert_eq!(s.gpu_memory_gb, Some(22.5));
        assert_eq!(s.rustc_version, UNKNOWN);
    }

    #[test]
    fn a_file_without_a_card_reads_its_reference_fields() {
        let mut info = augbench_host::system::machine_info("python 3.11.7");
        info.card = None;
        info.processor = "Old CPU".into();
        info.memory_total_bytes = 0;
        let s = SystemCard::from(&info);
        assert_eq!(s.cpu_name.as_deref(), Some("Old CPU"));
        assert_eq!((s.ram_gb, s.gpu_name), (None, None));
    }
}
