//! augbench-host: facts about and services of the machine augbench runs on — the machine card and
//! its state (`machine`), system and checkout facts recorded in results (`system`), small shared
//! facts (`facts`: the time now, the CPU brand), child processes with the tail of their stderr
//! (`child`), the run lock (`run_lock`), atomic file and folder writes (`fsutil`), the NVIDIA GPUs
//! `nvidia-smi` lists (`gpu`) and the cache root (`cache`), and the memory of a process tree
//! sampled over time (`memory_sampler`). Depends only on augbench-core.

pub mod cache;
pub mod child;
pub mod facts;
pub mod fsutil;
pub mod gpu;
pub mod machine;
pub mod memory_sampler;
pub mod run_lock;
pub mod system;
