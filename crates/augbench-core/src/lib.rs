//! augbench-core: the pure heart of augbench — configuration types and validation, the transform
//! registry, the scenario/library matrix, policy defaults, the plan, output naming, result types and
//! statistics. No processes, no network.

pub mod error;

pub use error::UsageError;
