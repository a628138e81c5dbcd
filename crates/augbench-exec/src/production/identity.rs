//! A production run's identity: one hash per input (the resolved settings, the recipe catalog,
//! the dataset's files and contents, the environment locks, augbench's version, the machine
//! card), the run id made of them, and which inputs differ between two runs.

use std::collections::BTreeMap;

use anyhow::Context;
use augbench_core::production::cell::sha256_hex;
use serde::{Deserialize, Serialize};

/// Every input of a run, hashed one by one so a changed run id can say which changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunInputs(pub BTreeMap<String, String>);

impl RunInputs {
    pub fn new() -> RunInputs {
        RunInputs(BTreeMap::new())
    }

    pub fn add(&mut self, name: &str, bytes: &[u8]) {
        self.0.insert(name.to_string(), sha256_hex(bytes));
    }

    /// The run id: the first 16 hex digits of the hash of every input's hash, in name order.
    pub fn run_id(&self) -> String {
        let joined: String = self.0.iter().map(|(k, v)| format!("{k}={v}\n")).collect();
        sha256_hex(joined.as_bytes())[..16].to_string()
    }

    /// The inputs whose hash differs from `earlier`'s (or that only one of them has).
    pub fn changed_since(&self, earlier: &RunInputs) -> Vec<String> {
        let mut names: Vec<&String> = self.0.keys().chain(earlier.0.keys()).collect();
        names.sort();
        names.dedup();
        names
            .into_iter()
            .filter(|n| self.0.get(*n) != earlier.0.get(*n))
            .cloned()
            .collect()
    }
}

impl Default for RunInputs {
    fn default() -> Self {
        RunInputs::new()
    }
}

/// The dataset's identity: each file's name, size and content hash, in the run's order.
pub fn dataset_bytes(paths: &[String]) -> anyhow::Result<Vec<u8>> {
    let mut out = Vec::new();
    for path in paths {
        let bytes = std::fs::read(path).with_context(|| format!("reading {path}"))?;
        let name = std::path::Path::new(path)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        out.extend(format!("{name} {} {}\n", bytes.len(), sha256_hex(&bytes)).bytes());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_run_id_follows_every_input_and_names_what_changed() {
        let mut a = RunInputs::new();
        a.add("catalog", b"one");
        a.add("dataset", b"files");
        let mut b = a.clone();
        assert_eq!(a.run_id(), b.run_id());
        assert!(b.changed_since(&a).is_empty());
        b.add("dataset", b"other files");
        assert_ne!(a.run_id(), b.run_id());
        assert_eq!(b.changed_since(&a), vec!["dataset".to_string()]);
        b.add("machine", b"x");
        assert_eq!(
            b.changed_since(&a),
            vec!["dataset".to_string(), "machine".to_string()]
        );
        assert_eq!(a.run_id().len(), 16);
    }
}
