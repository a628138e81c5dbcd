//! augbench-core: the pure heart of augbench — configuration types and validation, the transform
//! registry, the scenario/library matrix, policy defaults, the plan, output naming, result types and
//! statistics. No processes, no network.

pub mod cloud;
pub mod config;
pub mod config_error;
pub mod costs;
pub mod counts;
mod embedded;
pub mod equivalence;
pub mod error;
pub mod json_text;
pub mod machine_card;
pub mod matrix;
pub mod memory;
pub mod naming;
pub mod plan;
pub mod plan_estimate;
pub mod policy;
pub mod production;
pub mod recipe;
pub mod recipes;
pub mod registry;
pub mod resolve;
pub mod results;
pub mod selection;
pub mod settle;
pub mod text;
pub mod time_split;
pub mod validate;
pub mod variant;

pub use config::{Measure, Overrides, PipelineScope, RunConfig, Schedule};
pub use config_error::{ConfigError, Source};
pub use error::UsageError;
pub use matrix::{Backend, Device, Matrix, Media, Mode};
pub use registry::Registry;
pub use resolve::resolve;
