//! augbench-protocol: the language-neutral worker protocol — the request/response types
//! (`protocol`), the coordinator's client that starts a worker from a built command and talks to
//! it (`client`), the thread settings a worker starts with (`threads`) and the output contract
//! check of a `check` answer (`contract`). Depends on augbench-core, and on augbench-host for
//! starting a child process (`host::child`).

pub mod client;
pub mod contract;
pub mod protocol;
pub mod threads;
