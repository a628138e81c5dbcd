//! augbench-exec: everything that runs — the worker protocol and client, the native Rust worker,
//! Python environments, media loading and the synthetic dataset, and the measurement loops.

pub mod cache;
pub mod client;
pub mod contract;
pub mod decode;
pub mod env;
pub mod equivalence;
pub mod fsutil;
pub mod job;
pub mod loader;
pub mod machine;
pub mod media;
pub mod micro;
pub mod native;
pub mod orchestrate;
pub mod pipeline;
mod precision;
pub mod protocol;
pub mod record;
pub mod rounds;
pub mod run_lock;
pub mod runner;
pub mod scheduler;
pub mod summary;
pub mod system;
pub mod threads;
pub mod time_split;
mod underway;
