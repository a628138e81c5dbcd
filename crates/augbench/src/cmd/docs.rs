//! `augbench docs update FILE --results DIR`: refreshes the tables between
//! `<!-- AUGBENCH:<NAME>:START -->` and `<!-- AUGBENCH:<NAME>:END -->` markers in a markdown file.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use augbench_report::{Sort, TableOptions};

use super::compare::{SortArg, load, reference_help};

#[derive(Debug, clap::Subcommand)]
pub enum DocsCommand {
    /// Replace each marked block (NAME = SCENARIO-MODE in upper case, e.g. IMAGE-RGB-MICRO) with a fresh table.
    Update(UpdateArgs),
}

#[derive(Debug, clap::Args)]
pub struct UpdateArgs {
    /// The markdown file to update in place.
    pub file: PathBuf,
    /// Results folders (every *_results.json below them), result JSON files or cell logs.
    #[arg(long, value_name = "RESULTS", required = true, num_args = 1..)]
    pub results: Vec<PathBuf>,
    #[arg(long, value_name = "LIBRARY", help = reference_help())]
    pub reference_library: Option<String>,
    /// Row order of each table.
    #[arg(long, value_enum, default_value_t = Sort::default().into())]
    pub sort: SortArg,
    /// Write nothing; exit with code 1 when the file is out of date (for CI).
    #[arg(long)]
    pub check: bool,
}

pub fn run(cmd: DocsCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        DocsCommand::Update(args) => update(args),
    }
}

fn update(args: UpdateArgs) -> anyhow::Result<ExitCode> {
    let text = std::fs::read_to_string(&args.file)
        .with_context(|| format!("reading {}", args.file.display()))?;
    let data = load(&args.results)?;
    let opts = TableOptions {
        reference: args.reference_library,
        sort: args.sort.into(),
    };
    let tables = augbench_report::table::build_tables(&data, &opts)?;
    let updated = augbench_report::docs::update(&text, &tables, &args.file.display().to_string())?;
    let changed = updated.text != text;
    if args.check {
        let state = if changed { "out of date" } else { "up to date" };
        eprintln!(
            "{}: {state} ({})",
            args.file.display(),
            updated.names.join(", ")
        );
        return Ok(if changed {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        });
    }
    if changed {
        augbench_host::fsutil::write_atomic(&args.file, updated.text.as_bytes())?;
    }
    eprintln!(
        "{}: refreshed {}",
        args.file.display(),
        updated.names.join(", ")
    );
    Ok(ExitCode::SUCCESS)
}
