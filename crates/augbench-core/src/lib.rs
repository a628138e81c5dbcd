//! augbench-core: the config language and what follows from it, pure — configuration types,
//! resolution and validation, policy defaults, the plan (and its device settling and estimate),
//! output naming and the result types. The embedded catalogs it reads are `augbench-catalog`,
//! the statistics `augbench-stats`. No processes, no network.

pub mod cloud;
pub mod config;
pub mod counts;
pub mod error;
pub mod json_text;
pub mod machine_card;
pub mod memory;
pub mod naming;
pub mod plan;
pub mod plan_estimate;
pub mod policy;
pub mod production;
pub mod resolve;
pub mod results;
pub mod selection;
pub mod settle;
pub mod target_rules;
pub mod targets;
pub mod text;
pub mod time_split;
pub mod validate;
pub mod variant;

pub use augbench_catalog::config_error::{ConfigError, Source};
pub use augbench_catalog::matrix::{Backend, Device, Matrix, Media, Mode};
pub use augbench_catalog::registry::Registry;
pub use config::{Measure, Overrides, PipelineScope, RunConfig, Schedule};
pub use error::UsageError;
