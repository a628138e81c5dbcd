//! The hardware stamp of evaluation cells (`CardStamp`: GPU, its memory, precision, batch size)
//! and where `augbench cells group --system-card` takes it from (`CardSource`): this machine's
//! system card, a JSON map such as a `system_card.json`, or nothing, with typed errors naming the
//! field. The benchmark cells' `SystemCard` is augbench-cells'.

use std::path::Path;

use serde_json::{Map, Value};

use augbench_cells::error::{CellsError, Result};
use augbench_cells::system_card::{SystemCard, rustc_version};

/// The hardware fields stamped onto every evaluation cell.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CardStamp {
    pub gpu_name: Option<String>,
    pub gpu_memory_gb: Option<f64>,
    pub precision: Option<String>,
    pub batch_size: Option<i64>,
}

/// The fields of a system card stamped onto evaluation cells (blank strings are none).
impl From<&SystemCard> for CardStamp {
    fn from(card: &SystemCard) -> Self {
        CardStamp {
            gpu_name: card.gpu_name.clone().filter(|s| !s.is_empty()),
            gpu_memory_gb: card.gpu_memory_gb,
            precision: card.precision.clone().filter(|s| !s.is_empty()),
            batch_size: card.batch_size,
        }
    }
}

/// This machine now: host's one probe (`augbench_host::machine::card`) read as a result file
/// records it, plus the rustc on `PATH`.
pub fn this_machine() -> SystemCard {
    let info = augbench_host::system::machine_info("");
    SystemCard {
        rustc_version: rustc_version(),
        ..SystemCard::from(&info)
    }
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
            "auto" => Ok(CardSource::Card(this_machine())),
            "none" => Ok(CardSource::None),
            file => {
                let path = Path::new(file);
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
            CardSource::Card(c) => Ok(CardStamp::from(c)),
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
fn json_kind(v: &Value) -> &'static str {
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
    use augbench_cells::system_card::TOOLKIT_VERSION;
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
    fn a_cards_stamp_keeps_its_gpu_and_drops_blank_strings() {
        let card = SystemCard {
            gpu_name: Some("NVIDIA L4".into()),
            gpu_memory_gb: Some(22.5),
            precision: Some(String::new()),
            batch_size: Some(4),
            ..SystemCard::default()
        };
        let s = CardSource::Card(card).stamp("auto").unwrap();
        assert_eq!(s.gpu_name.as_deref(), Some("NVIDIA L4"));
        assert_eq!(
            (s.gpu_memory_gb, s.precision, s.batch_size),
            (Some(22.5), None, Some(4))
        );
    }

    #[test]
    fn this_machine_fills_versions() {
        let c = this_machine();
        assert_eq!(c.augbench_version, TOOLKIT_VERSION);
        assert!(!c.rustc_version.is_empty());
    }
}
