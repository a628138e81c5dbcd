//! augbench-exec: everything that runs — the worker protocol and client, the native Rust worker,
//! Python environments, media loading and the synthetic dataset, and the measurement loops.

pub mod cache;
pub mod protocol;
