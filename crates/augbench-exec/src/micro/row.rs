//! One transform's row from start to finish, all runs in a row: setup (`setup::start`), then
//! timed runs (`measuring`) until the settings are met. The interleaved schedule drives the same
//! steps round by round instead.

use augbench_catalog::registry::TransformSpec;
use augbench_core::results::TransformResult;
use augbench_protocol::client::WorkerError;

use super::phase::Phase;
use super::session::Session;
use super::settings::MicroSettings;
use super::setup::{Started, start};

/// Measures one transform on a worker that already holds `items` loaded items, all runs in a row.
/// A failed request becomes an `unsupported`/`error` result; a lost worker is returned as `Err`.
pub fn measure(
    s: &mut dyn Session,
    spec: &TransformSpec,
    items: u64,
    set: &MicroSettings,
    on_phase: &mut dyn FnMut(Phase),
) -> Result<TransformResult, WorkerError> {
    let mut m = match start(s, spec, items, set, on_phase)? {
        Started::Finished(r) => return Ok(*r),
        Started::Measuring(m) => m,
    };
    while m.wants_more(set) {
        on_phase(Phase::Run(m.runs() + 1));
        if let Err(r) = m.run(s, items, set)? {
            return Ok(r);
        }
    }
    Ok(m.finish())
}
