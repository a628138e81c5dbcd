//! The `augbench` binary: parses the command line and hands each subcommand to its module.
//! Thin by design: policy lives in augbench-core, work in the library crates.

mod cmd;

use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = cmd::parse();
    match cmd::dispatch(cli) {
        Ok(code) => code,
        Err(err) => cmd::report_error(&err),
    }
}
