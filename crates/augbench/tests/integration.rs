//! Every integration test of this crate, in one test binary (one compile and link instead of
//! one per file). Each module is one former test file; `cargo test
//! -p augbench --test integration <module>::` runs one of them. `fuzz` keeps a binary of its own:
//! it installs a process-wide panic hook, which counts every thread's panics.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

mod ab_variants;
mod bad_input;
mod check_equivalence;
mod check_targets;
mod cli_cells;
mod cli_config;
mod cli_data;
mod cli_doctor;
mod cli_lock;
mod cli_publish;
mod cli_report;
mod cli_video;
mod cli_video_decode;
mod cli_worker;
mod cloud_fake;
mod cluster_slurm;
mod crash_safety;
mod crate_edges;
mod docs_examples;
mod import_cycles;
mod instruction_counts;
mod library_mirrors;
mod library_registry;
mod pipeline_native;
mod pipeline_run;
mod production_run;
mod python_run;
mod run_engine;
mod run_interleaved;
mod summary_table;
mod targets_run;
mod video_pipeline_run;
