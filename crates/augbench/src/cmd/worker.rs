//! `augbench worker --library <name>`: serves the worker protocol for a native Rust library on
//! stdin/stdout (the coordinator starts it; stderr is its log). A panic inside a transform ends
//! the process without touching stdout; the coordinator records it as `error`.

use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Native library to serve.
    #[arg(long, value_parser = library_names())]
    pub library: String,
}

fn library_names() -> clap::builder::PossibleValuesParser {
    let names = augbench_native::Library::ALL.map(augbench_native::Library::name);
    clap::builder::PossibleValuesParser::new(names)
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    // One line per panic (no backtrace), so the coordinator's stderr tail shows the cause.
    std::panic::set_hook(Box::new(|info| eprintln!("worker panicked: {info}")));
    let stdin = std::io::stdin().lock();
    let stdout = std::io::stdout().lock();
    augbench_native::serve(&args.library, stdin, stdout)?;
    Ok(ExitCode::SUCCESS)
}
