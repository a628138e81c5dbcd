//! The one place the reports read a result's headline throughput (items/s): the report, the
//! tables, `compare` and the run summary all take their number from here, so the figure they
//! show changes in one function.

use augbench_core::results::TransformResult;

/// The headline throughput of one transform's result (our result format): the recorded figure,
/// or the median for a file written before figures existed (`TransformResult::headline`).
pub fn throughput(r: &TransformResult) -> Option<f64> {
    r.headline().map(|h| h.value)
}
