//! Every integration test of augbench-exec, in one test binary (one compile and link): each
//! module is one test file; `cargo test -p augbench-exec --test integration <module>::` runs one.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

mod micro_methodology;
mod video_clips;
