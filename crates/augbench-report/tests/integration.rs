//! Every integration test of this crate, in one test binary (one compile and link instead of
//! one per file). Each module is one former test file; `cargo test
//! -p augbench-report --test integration <module>::` runs one of them.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

mod cells;
mod chromium;
mod common;
mod docs;
mod html;
mod plots;
mod regression;
mod simulated_gate;
mod simulated_verdicts;
mod tables;
