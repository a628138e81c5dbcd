//! Loading: results folders (every `*_results.json` below them), single result JSON files (ours,
//! strictly; the public reference format, leniently) and benchmark cell logs (Parquet / JSON
//! Lines), all into one `Dataset`. Rejects empty inputs and duplicate measurements with hints.
//! `paths` reads them, `ours`, `reference` and `cells` parse each kind, and `file_name` holds
//! the file name convention they share. This file only declares the modules and re-exports.

mod cells;
mod file_name;
mod ours;
mod paths;
mod reference;

pub use file_name::RESULTS_SUFFIX;
pub use paths::{load_paths, load_result_bytes, result_files};
