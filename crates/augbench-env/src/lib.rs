//! augbench-env: the Python environments workers run in — uv (found or installed), the pinned
//! requirement groups and the worker packages embedded in the binary (`assets`), and building,
//! listing, locking and cleaning the cached environments (`build`).

mod env;

pub use env::*;

// Sibling crates under the paths the modules name them by (`crate::cache::…`).
use augbench_host::cache;
use augbench_protocol::client;
