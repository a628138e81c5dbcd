//! augbench-protocol: the language-neutral worker protocol — the request/response types
//! (`protocol`), the coordinator's client that spawns a worker and talks to it (`client`, with
//! `WorkerCommand`, how a worker is started), the thread settings a worker starts with (`threads`)
//! and the output contract check of a `check` answer (`contract`). Depends only on augbench-core.

pub mod client;
pub mod contract;
pub mod protocol;
pub mod threads;
