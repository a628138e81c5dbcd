//! The hardware stamp of evaluation cells (`CardStamp`: GPU, its memory, precision, batch size)
//! and where `augbench cells group --system-card` takes it from (`CardSource`): this machine's
//! card (host's one probe), a JSON map such as a `system_card.json`, or nothing, with typed errors
//! naming the field.

use std::path::Path;

use serde_json::{Map, Value};

use augbench_cells::error::{CellsError, Result};

/// The hardware fields stamped onto every evaluation cell.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CardStamp {
    pub gpu_name: Option<String>,
    pub gpu_memory_gb: Option<f64>,
    pub precision: Option<String>,
    pub batch_size: Option<i64>,
}

/// The stamp of a machine card: its first GPU. Precision and batch size belong to the model under
/// test, never to the machine, so a card leaves them empty.
impl From<&augbench_core::machine_card::MachineCard> for CardStamp {
    fn from(card: &augbench_core::machine_card::MachineCard) -> Self {
        let gpu = card.gpus.first();
        CardStamp {
            gpu_name: gpu.map(|g| g.name.clone()).filter(|s| !s.is_empty()),
            gpu_memory_gb: gpu.and_then(|g| g.memory_gib),
            precision: None,
            batch_size: None,
        }
    }
}

/// Where the stamp comes from: this machine's card, a JSON map (e.g. a `system_card.json`), or
/// nothing.
#[derive(Debug, Clone)]
pub enum CardSource {
    Card(CardStamp),
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
            "auto" => Ok(CardSource::Card(CardStamp::from(
                &augbench_host::machine::card(),
            ))),
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
            CardSource::Card(c) => Ok(c.clone()),
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
    fn a_cards_stamp_is_its_first_gpu_and_no_model_settings() {
        let mut card = augbench_host::machine::card();
        card.gpus = ["NVIDIA L4", "NVIDIA T4"]
            .map(|name| augbench_core::machine_card::MachineGpu {
                name: name.into(),
                memory_gib: Some(22.5),
            })
            .to_vec();
        let s = CardStamp::from(&card);
        assert_eq!(s.gpu_name.as_deref(), Some("NVIDIA L4"));
        assert_eq!(
            (s.gpu_memory_gb, s.precision, s.batch_size),
            (Some(22.5), None, None)
        );
        card.gpus.clear();
        assert_eq!(CardStamp::from(&card), CardStamp::default());
    }

    #[test]
    fn auto_stamps_this_machines_card() {
        let source = CardSource::from_spec("auto").unwrap();
        assert!(matches!(source, CardSource::Card(_)), "{source:?}");
        let s = source.stamp("auto").unwrap();
        assert_eq!(s, CardStamp::from(&augbench_host::machine::card()));
    }
}
