//! The shipped cost table (embedded `specs/costs.yaml`): what each library's worker start, media
//! load and each micro image row cost on the machine the table was measured on. `plan` reads it
//! where no earlier result of a job is in the output folder, before policy's flat costs.
//! `scripts/calibrate_costs.py` writes it from a run's results.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;

const COSTS_YAML: &str = include_str!("../../../specs/costs.yaml");

/// The table: where it was measured, and each library's costs.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Costs {
    /// The run and machine the figures come from, for `plan`'s basis line.
    pub measured: String,
    pub libraries: BTreeMap<String, LibraryCosts>,
}

/// One library's costs in a micro image run.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LibraryCosts {
    /// Seconds one worker process took to start (imports, hello), before its media load.
    pub worker_start_sec: f64,
    /// Seconds its media load took per item.
    pub load_sec_per_item: f64,
    /// Seconds per call of each transform the library measured (`ok` rows: its figure; `slow`
    /// rows: its preflight's, which is at or above the slow threshold).
    pub sec_per_item: BTreeMap<String, f64>,
}

impl Costs {
    pub fn get() -> &'static Costs {
        static COSTS: OnceLock<Costs> = OnceLock::new();
        COSTS.get_or_init(|| crate::embedded::parse("specs/costs.yaml", COSTS_YAML))
    }

    /// A micro image row's seconds per call, where the table has it.
    pub fn sec_per_item(&self, library: &str, transform: &str) -> Option<f64> {
        self.libraries
            .get(library)?
            .sec_per_item
            .get(transform)
            .copied()
    }

    pub fn library(&self, library: &str) -> Option<&LibraryCosts> {
        self.libraries.get(library)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::Matrix;
    use crate::registry::Registry;

    /// Every entry names a library of the matrix and a transform of the registry, with a cost
    /// that is a positive, finite number of seconds.
    #[test]
    fn every_entry_is_a_known_row_with_a_positive_cost() {
        let costs = Costs::get();
        assert!(!costs.libraries.is_empty());
        for (lib, c) in &costs.libraries {
            assert!(
                Matrix::get().library(lib).is_some(),
                "{lib} is not a library"
            );
            for s in [c.worker_start_sec, c.load_sec_per_item] {
                assert!(s.is_finite() && s >= 0.0, "{lib}: {s}");
            }
            assert!(!c.sec_per_item.is_empty(), "{lib} has no rows");
            for (t, s) in &c.sec_per_item {
                assert!(Registry::get().spec(t).is_some(), "{lib}: {t} is unknown");
                assert!(s.is_finite() && *s > 0.0, "{lib} {t}: {s}");
            }
        }
    }
}
