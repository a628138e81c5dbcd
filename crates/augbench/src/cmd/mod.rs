//! Subcommand table and error-to-exit-code mapping (0 ok, 1 failed run or regression, 2 bad usage).
//! Each subcommand lives in its own file and exposes `Args` plus `run(args) -> Result<ExitCode>`.

pub mod cells;
pub mod check;
mod check_args;
mod check_targets;
pub mod cloud;
pub mod compare;
mod config_args;
pub mod data;
pub mod docs;
pub mod doctor;
pub mod env;
pub mod help;
pub mod init;
pub mod list;
mod output;
pub mod plan;
pub mod plot;
pub mod production;
mod production_plan;
pub mod publish;
pub mod report;
pub mod run;
pub mod stage;
pub mod validate;
pub mod worker;

use std::process::ExitCode;

use augbench_core::{ConfigError, UsageError};
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

/// augbench — fair, reproducible benchmarks of image and video augmentation libraries.
#[derive(Debug, Parser)]
#[command(name = "augbench", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Write an example config built into augbench into the current folder (no name: list them).
    Init(init::Args),
    /// Measure: run every job of the plan and write results, cells and the resolved config.
    Run(run::Args),
    /// Print the resolved config, the jobs and the files a run would write (YAML).
    Plan(plan::Args),
    /// Check a config and its overrides without running anything.
    Validate(validate::Args),
    /// Show the support matrix and the transform registry.
    List(list::Args),
    /// Evaluation and benchmark cell logs: group, merge, show, summarize, convert.
    #[command(subcommand)]
    Cells(cells::CellsCommand),
    /// Checks: `equivalence` (do the libraries do the same work?).
    #[command(subcommand)]
    Check(check::CheckCommand),
    /// Compare libraries (tables), or a baseline against a current run (regression verdicts).
    Compare(compare::Args),
    /// Production cells: catalog recipes from files on disk to a normalized batch, per seed.
    Production(production::Args),
    /// Speedup and throughput plots (SVG and PNG).
    Plot(plot::Args),
    /// One self-contained HTML report.
    Report(report::Args),
    /// A results folder a reader opens without running anything (page, tables, results, cell
    /// log, machine card, versions, manifest), with no path of this machine in it.
    Publish(publish::Args),
    /// Refresh result tables between AUGBENCH markers in a markdown file.
    #[command(subcommand)]
    Docs(docs::DocsCommand),
    /// Python environments per library group: list, build, clean, lock.
    #[command(subcommand)]
    Env(env::EnvCommand),
    /// The machine card (CPU, SIMD, governor, virtualisation, build) and the busy checks of `run`.
    Doctor(doctor::Args),
    /// Pack a data folder into a deterministic tarball for cloud runs; prints its SHA-256.
    Stage(stage::Args),
    /// Follow a cloud run: status, fetch (merge results and cells), cancel.
    #[command(subcommand)]
    Cloud(cloud::CloudCommand),
    /// Datasets: generate the synthetic dataset, clean the cache.
    #[command(subcommand)]
    Data(data::DataCommand),
    /// Serve the worker protocol for a native Rust library (used by `run`).
    #[command(hide = true)]
    Worker(worker::Args),
}

/// Parses the command line with the docs pointer added to every help page; exits on bad usage
/// (code 2) or after printing help, as clap does.
pub fn parse() -> Cli {
    let mut matches = help::with_docs(Cli::command()).get_matches();
    Cli::from_arg_matches_mut(&mut matches).unwrap_or_else(|e| e.exit())
}

pub fn dispatch(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Init(a) => init::run(a),
        Command::Run(a) => run::run(a),
        Command::Plan(a) => plan::run(a),
        Command::Validate(a) => validate::run(a),
        Command::List(a) => list::run(a),
        Command::Cells(c) => cells::run(c),
        Command::Check(c) => check::run(c),
        Command::Compare(a) => compare::run(a),
        Command::Production(a) => production::run(a),
        Command::Plot(a) => plot::run(a),
        Command::Report(a) => report::run(a),
        Command::Publish(a) => publish::run(a),
        Command::Docs(c) => docs::run(c),
        Command::Env(c) => env::run(c),
        Command::Doctor(a) => doctor::run(a),
        Command::Stage(a) => stage::run(a),
        Command::Cloud(c) => cloud::run(c),
        Command::Data(c) => data::run(c),
        Command::Worker(a) => worker::run(a),
    }
}

/// Prints an error chain without a backtrace and picks the exit code.
pub fn report_error(err: &anyhow::Error) -> ExitCode {
    eprintln!("error: {err}");
    for cause in err.chain().skip(1) {
        eprintln!("  caused by: {cause}");
    }
    if is_usage(err) {
        ExitCode::from(2)
    } else {
        ExitCode::from(1)
    }
}

fn is_usage(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.is::<UsageError>()
            || e.is::<ConfigError>()
            || e.is::<augbench_catalog::recipes::CatalogError>()
            || e.is::<augbench_core::production::ProductionConfigError>()
    })
}
