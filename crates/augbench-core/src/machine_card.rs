//! The machine card: the one type for the machine that measured (CPU, SIMD, memory, GPUs, the
//! augbench build, load and steal around a job). Result files carry it as `metadata.system_info`,
//! whose first seven keys are the reference format's; each fact is written once. Files written
//! while the card was nested under `system_info.card` are lifted into this layout when read.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

/// What a reader needs to judge a number's noise and its dependence on the CPU.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MachineCard {
    /// `python 3.11.7` for Python workers, `rustc 1.95.0` for native ones (empty on a card that
    /// describes no job).
    #[serde(default)]
    pub runtime: String,
    /// The OS name and version (`Ubuntu 24.04`).
    pub platform: String,
    /// The CPU architecture (`x86_64`).
    pub machine: String,
    /// The CPU's model name (`/proc/cpuinfo`, else the OS).
    pub processor: String,
    /// Logical threads.
    pub cpu_count: u64,
    pub memory_total_bytes: u64,
    /// When the job started (empty on a card that describes no job).
    #[serde(default)]
    pub timestamp: String,
    /// SIMD extensions present, of `sse4_2`, `avx2`, `avx512f`, `neon`; absent in files written
    /// before the card.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub simd: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub physical_cores: Option<u64>,
    /// cpufreq scaling governor of CPU 0, where readable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub governor: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<String>,
    /// Whether the CPU reports running under a hypervisor (`None`: cannot tell).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hypervisor: Option<bool>,
    /// The augbench binary that measured; absent in files written before the card.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<BuildInfo>,
    /// The GPUs `nvidia-smi` listed, in its order; empty without one and in older files.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gpus: Vec<MachineGpu>,
    /// Load and steal when the job started and when it ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<MachineState>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<MachineState>,
}

/// One GPU of the machine card.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MachineGpu {
    pub name: String,
    /// Total memory in GiB, where `nvidia-smi` reports a number.
    pub memory_gib: Option<f64>,
}

/// The augbench binary that measured.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BuildInfo {
    pub version: String,
    /// Commit the binary was built from (`unknown` outside a git checkout).
    pub git_sha: String,
    pub target: String,
    pub opt_level: String,
    pub profile: String,
}

/// How busy the machine was at one moment.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MachineState {
    pub timestamp: String,
    /// One-minute load average.
    pub load_1m: f64,
    /// `load_1m` divided by the logical threads.
    pub load_per_thread: f64,
    /// Share of CPU time stolen by the hypervisor over a short sample (Linux `/proc/stat`).
    pub steal_percent: Option<f64>,
}

impl MachineCard {
    /// The card with its per-job facts (runtime, time, load and steal) cleared: what stays the
    /// same between two jobs on one machine.
    pub fn fixed(&self) -> MachineCard {
        MachineCard {
            runtime: String::new(),
            timestamp: String::new(),
            before: None,
            after: None,
            ..self.clone()
        }
    }
}

/// Reads a `system_info` in either layout: this one, or the earlier one that nested the card
/// under `card` and repeated its CPU name, threads and memory there (those copies are dropped).
pub fn read_any_layout<'de, D: Deserializer<'de>>(d: D) -> Result<MachineCard, D::Error> {
    let mut map = Map::<String, Value>::deserialize(d)?;
    if let Some(Value::Object(nested)) = map.remove("card") {
        for (key, value) in nested {
            if !matches!(
                key.as_str(),
                "cpu_model" | "logical_threads" | "memory_total_bytes"
            ) {
                map.entry(key).or_insert(value);
            }
        }
    }
    MachineCard::deserialize(Value::Object(map)).map_err(serde::de::Error::custom)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn reference_fields() -> Value {
        json!({
            "runtime": "rustc 1.95.0", "platform": "Debian 12", "machine": "x86_64",
            "processor": "AMD EPYC 7B13", "cpu_count": 2, "memory_total_bytes": 8,
            "timestamp": "2026-01-02T03:04:05Z"
        })
    }

    fn read(v: Value) -> MachineCard {
        read_any_layout(v).unwrap()
    }

    #[test]
    fn a_nested_card_is_lifted_and_its_copies_dropped() {
        let mut old = reference_fields();
        old["card"] = json!({"cpu_model": "other name", "simd": ["avx2"], "physical_cores": 1,
            "logical_threads": 9, "governor": null, "kernel": null, "hypervisor": true,
            "build": {"version": "0.1.0", "git_sha": "x", "target": "t", "opt_level": "3",
                "profile": "release"},
            "before": null});
        let card = read(old);
        assert_eq!(
            (card.processor.as_str(), card.cpu_count),
            ("AMD EPYC 7B13", 2)
        );
        assert_eq!(card.simd, Some(vec!["avx2".to_string()]));
        assert_eq!(
            (card.physical_cores, card.hypervisor),
            (Some(1), Some(true))
        );
        assert_eq!(card.build.map(|b| b.profile).as_deref(), Some("release"));
        let text = serde_json::to_string(&read(reference_fields())).unwrap();
        assert!(!text.contains("card") && !text.contains("gpus"), "{text}");
    }

    #[test]
    fn each_fact_is_written_once_and_reads_back() {
        let card = MachineCard {
            simd: Some(vec!["avx2".into()]),
            gpus: vec![MachineGpu {
                name: "NVIDIA L4".into(),
                memory_gib: Some(22.5),
            }],
            ..read(reference_fields())
        };
        let text = serde_json::to_string(&card).unwrap();
        assert_eq!(text.matches("AMD EPYC").count(), 1, "{text}");
        let back: MachineCard = read(serde_json::from_str(&text).unwrap());
        assert_eq!(back, card);
    }

    #[test]
    fn an_unknown_key_is_still_refused() {
        let mut v = reference_fields();
        v["cpu_model"] = json!("x");
        let e = read_any_layout(v).unwrap_err().to_string();
        assert!(e.contains("cpu_model"), "{e}");
    }

    #[test]
    fn fixed_drops_only_the_jobs_facts() {
        let mut card = read(reference_fields());
        card.before = Some(MachineState::default());
        let fixed = card.fixed();
        assert_eq!((fixed.runtime.as_str(), fixed.timestamp.as_str()), ("", ""));
        assert_eq!((fixed.before, fixed.processor), (None, card.processor));
    }
}
