//! The one place the reports read a result's headline throughput (items/s): the report, the
//! tables, `compare` and the run summary all take their number from here, so the figure they
//! show changes in one function.

use augbench_core::results::TransformResult;

/// The headline throughput of one transform's result (our result format).
pub fn throughput(r: &TransformResult) -> Option<f64> {
    r.median_throughput
}
