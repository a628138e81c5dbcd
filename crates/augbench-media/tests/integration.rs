//! Every integration test of this crate, in one test binary (one compile and link instead of
//! one per file). Each module is one former test file; `cargo test
//! -p augbench-media --test integration <module>::` runs one of them.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

mod native_media;
mod targets_data;
