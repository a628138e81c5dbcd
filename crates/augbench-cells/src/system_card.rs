//! The system card: what machine produced a cell, in the cells' columns. It probes nothing: it is
//! read from a result file's machine card (`From<&SystemInfo>`), or for `SystemCard::detect` from
//! host's one probe of this machine (plus the rustc on `PATH`). `CardStamp` is the part stamped
//! onto evaluation cells, taken from a card, a JSON map or nothing, with typed errors.

use std::process::Command;

use augbench_core::results::SystemInfo;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{CellsError, Result};

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

impl SystemCard {
    /// This machine now: host's one probe (`augbench_host::machine::card`) read as a result file
    /// records it, plus the rustc on `PATH`.
    pub fn detect() -> Self {
        let info = augbench_host::system::machine_info("");
        SystemCard {
            rustc_version: rustc_version(),
            ..SystemCard::from(&info)
        }
    }

    /// The fields stamped onto evaluation cells.
    pub fn stamp(&self) -> CardStamp {
        CardStamp {
            gpu_name: self.gpu_name.clone().filter(|s| !s.is_empty()),
            gpu_memory_gb: self.gpu_memory_gb,
            precision: self.precision.clone().filter(|s| !s.is_empty()),
            batch_size: self.batch_size,
        }
    }
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

/// The hardware fields stamped onto every evaluation cell.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CardStamp {
    pub gpu_name: Option<String>,
    pub gpu_memory_gb: Option<f64>,
    pub precision: Option<String>,
    pub batch_size: Option<i64>,
}

/// Where the stamp comes from: a card, a JSON map (e.g. a `system_card.json`), or nothing.
#[derive(Debug, Clone)]
pub enum CardSource {
    Card(SystemCard),
    Map(Map<String, Value>),
    None,
}

impl CardSource {
    /// Takes a JSON value: an object is a map, null is none, anything else is an error.
    pub fn from_json(value: Value, origin: &str) -> Result<Self> {
        match value {
            Value::Object(m) => Ok(CardSource::Map(m)),
            Value::Null => Ok(CardSource::None),
            other => Err(card_error(
                origin,
                format!("must be a JSON object or null, found {}", json_kind(&other)),
            )),
        }
    }

    /// Parses a command-line card spec: `auto` (detect the host), `none`, or a JSON file's path.
    pub fn from_spec(spec: &str) -> Result<Self> {
        match spec {
            "auto" => Ok(CardSource::Card(SystemCard::detect())),
            "none" => Ok(CardSource::None),
            file => {
                let path = std::path::Path::new(file);
                let text =
                    std::fs::read_to_string(path).map_err(|e| CellsError::io(path, "read", e))?;
                let value: Value = serde_json::from_str(&text).map_err(|e| {
                    let at = augbench_core::json_text::error_at(&text, &e)
                        .map(|a| format!(" at {a}"))
                        .unwrap_or_default();
                    let msg = augbench_core::json_text::message(&e);
                    card_error(file, format!("is not valid JSON{at}: {msg}"))
                })?;
                Self::from_json(value, file)
            }
        }
    }

    /// The stamp; a map with a wrongly typed field is an error naming the field.
    pub fn stamp(&self, origin: &str) -> Result<CardStamp> {
        match self {
            CardSource::Card(c) => Ok(c.stamp()),
            CardSource::None => Ok(CardStamp::default()),
            CardSource::Map(m) => Ok(CardStamp {
                gpu_name: map_str(m, "gpu_name", origin)?,
                gpu_memory_gb: map_f64(m, "gpu_memory_gb", origin)?,
                precision: map_str(m, "precision", origin)?,
                batch_size: map_i64(m, "batch_size", origin)?,
            }),
        }
    }
}

fn card_error(origin: &str, detail: String) -> CellsError {
    CellsError::SystemCard {
        origin: origin.to_string(),
        detail,
    }
}

/// Short name of a JSON value's kind for messages.
pub(crate) fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn map_str(m: &Map<String, Value>, key: &str, origin: &str) -> Result<Option<String>> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone()).filter(|s| !s.is_empty())),
        Some(v) => Err(card_error(
            origin,
            format!("'{key}' must be a string, found {}", json_kind(v)),
        )),
    }
}

fn map_f64(m: &Map<String, Value>, key: &str, origin: &str) -> Result<Option<f64>> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => Ok(n.as_f64()),
        Some(v) => Err(card_error(
            origin,
            format!("'{key}' must be a number, found {}", json_kind(v)),
        )),
    }
}

fn map_i64(m: &Map<String, Value>, key: &str, origin: &str) -> Result<Option<i64>> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) if n.is_i64() => Ok(n.as_i64()),
        Some(v) => Err(card_error(
            origin,
            format!("'{key}' must be an integer, found {}", json_kind(v)),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn map_stamps_the_four_fields_and_blank_strings_are_none() {
        let src = CardSource::from_json(json!({"gpu_name": "NVIDIA L4", "gpu_memory_gb": 22.5, "precision": "", "batch_size": 8, "other": 1}), "m").unwrap();
        let s = src.stamp("m").unwrap();
        assert_eq!(s.gpu_name.as_deref(), Some("NVIDIA L4"));
        assert_eq!(s.gpu_memory_gb, Some(22.5));
        assert_eq!(s.precision, None);
        assert_eq!(s.batch_size, Some(8));
    }

    #[test]
    fn non_object_cards_and_bad_field_types_are_typed_errors() {
        let e = CardSource::from_json(json!([1, 2]), "card.json").unwrap_err();
        assert_eq!(
            e.to_string(),
            "system card card.json: must be a JSON object or null, found an array"
        );
        let src = CardSource::from_json(json!({"batch_size": "8"}), "card.json").unwrap();
        let e = src.stamp("card.json").unwrap_err();
        assert!(
            e.to_string()
                .contains("'batch_size' must be an integer, found a string"),
            "{e}"
        );
        assert!(!e.hint().is_empty());
    }

    #[test]
    fn null_card_stamps_nothing() {
        let s = CardSource::from_json(Value::Null, "x")
            .unwrap()
            .stamp("x")
            .unwrap();
        assert_eq!(s, CardStamp::default());
    }

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

    #[test]
    fn detect_fills_versions() {
        let c = SystemCard::detect();
        assert_eq!(c.augbench_version, TOOLKIT_VERSION);
        assert!(!c.rustc_version.is_empty());
    }
}
