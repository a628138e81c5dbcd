//! The machine card: the one type for the machine that measured (CPU, SIMD, memory, GPUs, the
//! augbench build, load and steal around a job). Result files carry it as `metadata.system_info`,
//! whose first seven keys are the reference format's; each fact is written once. Files of result
//! format 1, which nested the card under `system_info.card`, are lifted into this layout on read.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

/// What a reader needs to judge a number's noise and its dependence on the CPU.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MachineCard {
    /// `python 3.11.7` for Python workers, `rustc 1.95.0` for native ones (empty on a card that
    /// describes no job: `doctor`'s, a production run record's).
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

/// Reads a `system_info` in either layout: this one, or format 1's, which nested the card under
/// `card` beside the reference keys. The nested card's CPU name and thread count win where they
/// are set: in the first files that had a card, `processor` was another probe's CPU name. A
/// wrong key or type inside `system_info` is reported at the end of the object, naming the key.
pub fn read_any_layout<'de, D: Deserializer<'de>>(d: D) -> Result<MachineCard, D::Error> {
    let mut map = Map::<String, Value>::deserialize(d)?;
    if let Some(nested) = map.remove("card") {
        lift(nested, &mut map).map_err(serde::de::Error::custom)?;
    }
    MachineCard::deserialize(Value::Object(map)).map_err(serde::de::Error::custom)
}

/// Moves format 1's nested card into the flat layout.
fn lift(nested: Value, map: &mut Map<String, Value>) -> Result<(), String> {
    let Value::Object(nested) = nested else {
        return Err("`system_info.card` must be an object (the machine card of format 1)".into());
    };
    for (key, value) in nested {
        let flat = match key.as_str() {
            "cpu_model" => "processor",
            "logical_threads" => "cpu_count",
            "memory_total_bytes" => continue, // a copy of the reference key
            other => other,
        };
        let copy = matches!(flat, "processor" | "cpu_count");
        if map.contains_key(flat) && !copy {
            return Err(format!(
                "`system_info` has `{flat}` both flat and under `card`: a file mixes two layouts"
            ));
        }
        let set = !(value.is_null() || value == "" || value == 0);
        if set || !map.contains_key(flat) {
            map.insert(flat.to_string(), value);
        }
    }
    Ok(())
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

    fn format_1() -> Value {
        let mut old = reference_fields();
        old["card"] = json!({"cpu_model": "other name", "simd": ["avx2"], "physical_cores": 1,
            "logical_threads": 9, "governor": null, "kernel": null, "hypervisor": true,
            "build": {"version": "0.1.0", "git_sha": "x", "target": "t", "opt_level": "3",
                "profile": "release"},
            "memory_total_bytes": 7, "before": null});
        old
    }

    #[test]
    fn a_nested_card_is_lifted_its_names_winning_where_set() {
        let card = read(format_1());
        assert_eq!((card.processor.as_str(), card.cpu_count), ("other name", 9));
        assert_eq!(
            card.memory_total_bytes, 8,
            "the reference key, not the copy"
        );
        assert_eq!(card.simd, Some(vec!["avx2".to_string()]));
        assert_eq!(
            (card.physical_cores, card.hypervisor),
            (Some(1), Some(true))
        );
        assert_eq!(card.build.map(|b| b.profile).as_deref(), Some("release"));
        let mut unset = format_1();
        unset["card"]["cpu_model"] = json!("");
        unset["card"]["gpus"] = json!([{"name": "NVIDIA L4", "memory_gib": 22.5}]);
        unset["card"]["after"] = json!({"timestamp": "t", "load_1m": 1.0, "load_per_thread": 0.5, "steal_percent": null});
        let card = read(unset);
        assert_eq!(
            card.processor, "AMD EPYC 7B13",
            "an empty nested name keeps the flat one"
        );
        assert_eq!(
            (card.gpus.len(), card.after.map(|a| a.load_1m)),
            (1, Some(1.0))
        );
        let text = serde_json::to_string(&read(reference_fields())).unwrap();
        assert!(!text.contains("card") && !text.contains("gpus"), "{text}");
    }

    #[test]
    fn a_card_that_is_no_object_or_mixes_layouts_is_refused() {
        let mut v = reference_fields();
        v["card"] = json!([1]);
        let e = read_any_layout(v).unwrap_err().to_string();
        assert!(e.contains("must be an object"), "{e}");
        let mut v = format_1();
        v["simd"] = json!(["avx2"]);
        let e = read_any_layout(v).unwrap_err().to_string();
        assert!(e.contains("mixes two layouts"), "{e}");
    }

    #[test]
    fn the_reference_keys_come_first_and_the_card_reads_back() {
        let card = MachineCard {
            simd: Some(vec!["avx2".into()]),
            gpus: vec![MachineGpu {
                name: "NVIDIA L4".into(),
                memory_gib: Some(22.5),
            }],
            ..read(reference_fields())
        };
        let text = serde_json::to_string(&card).unwrap();
        let at = |key: &str| text.find(&format!("\"{key}\":")).unwrap();
        let reference = [
            "runtime",
            "platform",
            "machine",
            "processor",
            "cpu_count",
            "memory_total_bytes",
            "timestamp",
        ];
        let places: Vec<usize> = reference.iter().map(|k| at(k)).collect();
        assert!(places.is_sorted() && places[6] < at("simd"), "{text}");
        assert_eq!(read(serde_json::from_str(&text).unwrap()), card);
    }

    #[test]
    fn an_unknown_or_missing_key_is_still_refused() {
        let mut v = reference_fields();
        v["cpu_model"] = json!("x");
        let e = read_any_layout(v).unwrap_err().to_string();
        assert!(e.contains("cpu_model"), "{e}");
        let mut v = reference_fields();
        v.as_object_mut().unwrap().remove("timestamp");
        let e = read_any_layout(v).unwrap_err().to_string();
        assert!(e.contains("timestamp"), "{e}");
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
