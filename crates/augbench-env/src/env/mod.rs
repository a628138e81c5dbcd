//! Python environments per environment group: the embedded requirement inputs and locks, uv
//! discovery (or installing uv into the cache), content-hash-keyed cached venvs, and the command
//! that starts a library's Python worker inside its environment.

mod assets;
mod build;
mod uv;
mod variant;

pub use assets::{
    GROUPS, GroupAssets, VIDEO_DECODE_GROUP, clips_source_dir, group_assets, pinned_version,
    worker_source_dir,
};
pub use build::{
    EnvInfo, clean, decoder_worker_command, ensure, list, lock_group, python_worker_command,
};
pub use uv::{Installer, find_python, installer};
pub use variant::{VariantEnv, check_pins, ensure_variant, variant_env};
