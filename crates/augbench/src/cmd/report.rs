//! `augbench report`: one self-contained HTML file (inline CSS, script and SVG plots), with the
//! A/B verdicts `compare` prints when the results measured variants of a library; or the tables
//! of a production output folder's latest run.

use std::path::PathBuf;
use std::process::ExitCode;

use augbench_core::policy;
use augbench_report::{Sort, TableOptions};

use super::compare::{SortArg, count_fraction, load, reference_help};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Results folders (every *_results.json below them), result JSON files or cell logs.
    #[arg(long, value_name = "RESULTS", required = true, num_args = 1..)]
    pub results: Vec<PathBuf>,
    /// The HTML file to write.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    #[arg(long, value_name = "LIBRARY", help = reference_help())]
    pub reference_library: Option<String>,
    /// Initial row order of each table.
    #[arg(long, value_enum, default_value_t = Sort::default().into())]
    pub sort: SortArg,
    /// A/B verdicts: smallest relative change that counts, as a fraction (0.1 = 10% more or less
    /// time per item), as in `compare`.
    #[arg(long, value_name = "FRACTION", default_value_t = policy::REGRESSION_MIN_EFFECT)]
    pub min_effect: f64,
    /// A/B verdicts of instruction counts: smallest relative change of instructions per item
    /// that counts, whatever --min-effect says, as in `compare`.
    #[arg(long, value_name = "FRACTION", default_value_t = policy::COUNT_MIN_EFFECT, value_parser = count_fraction)]
    pub count_min_effect: f64,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if let [folder] = args.results.as_slice()
        && augbench_report::production::is_output_folder(folder)
    {
        let run = augbench_report::production::latest(folder)?;
        let html = augbench_report::production::html(&run.run_id, &run.cells, &run.planned);
        augbench_host::fsutil::write_atomic(&args.out, html.as_bytes())?;
        println!("{}", args.out.display());
        return Ok(ExitCode::SUCCESS);
    }
    let data = load(&args.results)?;
    let opts = TableOptions {
        reference: args.reference_library,
        sort: args.sort.into(),
    };
    let effects = augbench_report::export::compare::Effects {
        time: args.min_effect,
        count: args.count_min_effect,
    };
    let html = augbench_report::html::render_effects(&data, &opts, effects)?;
    augbench_host::fsutil::write_atomic(&args.out, html.as_bytes())?;
    println!("{}", args.out.display());
    Ok(ExitCode::SUCCESS)
}
