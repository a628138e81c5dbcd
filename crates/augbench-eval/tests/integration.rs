//! Every integration test of this crate, in one test binary (one compile and link instead of
//! one per file). Each module is one former test file; `cargo test
//! -p augbench-eval --test integration <module>::` runs one of them. The binary is named
//! `integration`, so the snapshots in `snapshots/` are `integration__<module>__<test>.snap`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

mod bad_input;
mod golden;
mod render;
mod roundtrip;
mod summary;
