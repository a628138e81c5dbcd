//! The micro methodology (methodology.md), on the coordinator side, one concern a module: the
//! settings it reads from the resolved config (`settings`), the `Session` it talks to a worker
//! through (`session`), the requests it sends (`requests`), the phases it reports (`phase`), setup
//! (contract check, preflight, warmup) in `setup`, timed runs in `measuring`, and `measure` (all
//! runs in a row) in `row`. This file only declares the modules and re-exports their items.

mod measuring;
mod phase;
mod requests;
mod row;
mod session;
mod settings;
mod setup;
#[cfg(test)]
pub(crate) mod testing;

pub use measuring::Measuring;
pub use phase::Phase;
pub(crate) use requests::{prepare_request, settle};
pub use row::measure;
pub use session::Session;
pub use settings::{MicroSettings, WarmupSettings};
pub(crate) use setup::slow_result;
pub use setup::{Started, loops_for, start, warmed_up};
