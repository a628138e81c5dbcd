//! augbench-exec: the coordinator — plans become jobs (`job`, `scheduler`, `rounds`), each job
//! measured through a worker over the protocol (`micro`, `pipeline`, `decode`), the equivalence
//! check (`equivalence`), result records (`record`), the cell log's append (`cells_log`), and the
//! run itself: `session` owns one run end to end, `orchestrate` and `runner` execute its plan. It starts workers (`worker`) but never links the native image
//! crates: a native library's worker is the `augbench worker` subcommand (augbench-native).

pub mod cells_log;
pub mod counts;
pub mod decode;
pub mod equivalence;
pub mod job;
mod lane;
pub mod micro;
pub mod orchestrate;
mod outcome;
pub mod pipeline;
mod precision;
pub mod production;
mod progress;
pub mod record;
pub mod rounds;
mod run_media;
pub mod runner;
pub mod scheduler;
pub mod session;
pub mod time_split;
mod underway;
pub mod worker;
