//! Which engine a provider names: the one place that knows every implementation of
//! `engine::Engine`.

use augbench_core::config::CloudProvider;

use crate::engine::Engine;

/// The engine of a provider.
pub fn of(provider: CloudProvider) -> Box<dyn Engine> {
    match provider {
        CloudProvider::Gcp => Box::new(crate::batch::Batch),
        CloudProvider::Slurm => Box::new(crate::slurm::Slurm),
    }
}
