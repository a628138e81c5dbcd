//! augbench-env: the Python environments workers run in — uv found or installed into the cache
//! (`uv`), the pinned requirement groups and worker packages embedded in the binary (`assets`),
//! building, listing, locking and cleaning the content-hash-keyed cached environments, whose
//! Python the worker commands of augbench-exec run (`build`), and A/B variants (`variant`).

mod assets;
mod build;
mod uv;
mod variant;

pub use assets::{
    GroupAssets, VIDEO_DECODE_GROUP, adapter_builders, clips_source_dir, group_assets, groups,
    pinned_version, worker_source_dir,
};
pub use build::{EnvInfo, clean, ensure, list, lock_group};
pub use uv::{Installer, find_python, installer};
pub use variant::{VariantEnv, check_pins, ensure_variant, variant_env};
