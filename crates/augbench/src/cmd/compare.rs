//! `augbench compare`: comparison tables of libraries (one per scenario, mode and device), plus
//! A/B verdicts of each variant against the baseline variant when the run measured variants; or,
//! with `--baseline` and `--current`, regression verdicts per row (of two production folders:
//! ratios, no verdict); or the tables of a production output folder's latest run. Also holds the
//! options the other report commands share (reference library, sort order, loading, warnings).

use std::path::PathBuf;
use std::process::ExitCode;

use augbench_core::policy;
use augbench_report::export::Format;
use augbench_report::export::compare::{self, Effects, Shown, Tally};
use augbench_report::{Dataset, Sort, TableOptions};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FormatArg {
    Markdown,
    Csv,
    Json,
}

impl From<Format> for FormatArg {
    fn from(f: Format) -> FormatArg {
        match f {
            Format::Markdown => FormatArg::Markdown,
            Format::Csv => FormatArg::Csv,
            Format::Json => FormatArg::Json,
        }
    }
}

impl From<FormatArg> for Format {
    fn from(f: FormatArg) -> Format {
        match f {
            FormatArg::Markdown => Format::Markdown,
            FormatArg::Csv => Format::Csv,
            FormatArg::Json => Format::Json,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SortArg {
    /// Transform name, A → Z.
    Name,
    /// Speedup of the reference library, largest first.
    Speedup,
}

impl From<Sort> for SortArg {
    fn from(s: Sort) -> SortArg {
        match s {
            Sort::Name => SortArg::Name,
            Sort::Speedup => SortArg::Speedup,
        }
    }
}

impl From<SortArg> for Sort {
    fn from(s: SortArg) -> Sort {
        match s {
            SortArg::Name => Sort::Name,
            SortArg::Speedup => Sort::Speedup,
        }
    }
}

/// Help of `--reference-library`, naming the default from policy.
pub fn reference_help() -> String {
    format!(
        "Library whose speedup over the others is shown [default: {} when present, else the first library by name]",
        policy::DEFAULT_REFERENCE_LIBRARY
    )
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Results folders (every *_results.json below them), result JSON files or cell logs (.parquet, .jsonl).
    #[arg(value_name = "RESULTS", conflicts_with_all = ["baseline", "current"])]
    pub results: Vec<PathBuf>,
    #[arg(long, value_name = "LIBRARY", help = reference_help())]
    pub reference_library: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::default().into())]
    pub format: FormatArg,
    /// Row order of each table.
    #[arg(long, value_enum, default_value_t = Sort::default().into())]
    pub sort: SortArg,
    /// Write to this file (atomically) instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Regression mode: the earlier run (folder, result file or cell log); given again for each
    /// further invocation of the same baseline, from which the drift between invocations is
    /// estimated (docs/ci.md). A folder written by `augbench run --invocations N` stands for all
    /// its invocations.
    #[arg(long, value_name = "RESULTS", requires = "current")]
    pub baseline: Vec<PathBuf>,
    /// Regression mode: the drift of a figure between invocations on this runner class (sd, as a
    /// fraction, e.g. 0.01), measured apart and kept with the baseline; in place of repeated
    /// baseline invocations.
    #[arg(long, value_name = "FRACTION", requires = "current", value_parser = drift_fraction)]
    pub drift: Option<f64>,
    /// Regression mode: the run to check against the baseline.
    #[arg(long, value_name = "RESULTS", requires = "baseline")]
    pub current: Option<PathBuf>,
    /// The minimum effect of timed regression and A/B verdicts; its help is `help_min_effect`.
    #[arg(long, value_name = "FRACTION", help = help_min_effect())]
    pub min_effect: Option<f64>,
    /// The minimum effect of instruction-count verdicts, apart from the time one; its help is
    /// `help_count_min_effect`.
    #[arg(long, value_name = "FRACTION", help = help_count_min_effect(), value_parser = count_fraction)]
    pub count_min_effect: Option<f64>,
    /// Exit with code 1 when any row is a regression (with `--baseline`/`--current`), or when any
    /// variant is slower than the baseline variant (an A/B run's folder).
    #[arg(long)]
    pub fail_on_regression: bool,
    /// Exit with code 1 when any compared row is undecided: its interval could not tell a change
    /// of the minimum effect from none.
    #[arg(long)]
    pub fail_on_undecided: bool,
}

/// Help for `--min-effect`, with policy's default for time.
fn help_min_effect() -> String {
    format!(
        "Timed regression and A/B verdicts: smallest relative change that counts, as a fraction (0.1 = 10% more or less time per item; instruction counts have --count-min-effect) [default: {}]",
        policy::REGRESSION_MIN_EFFECT
    )
}

/// Help for `--count-min-effect`, with policy's default for counts.
pub fn help_count_min_effect() -> String {
    format!(
        "Instruction-count verdicts (measure: instructions): smallest relative change of instructions per item that counts, as a fraction, whatever --min-effect says; counts guard against extra work, they are not a time verdict [default: {}]",
        policy::COUNT_MIN_EFFECT
    )
}

/// `--drift`: a fraction in [0, 1) (clap exits 2 otherwise).
fn drift_fraction(text: &str) -> Result<f64, String> {
    let hint = "give the drift as a fraction, e.g. --drift 0.01 for 1%";
    match text.parse::<f64>() {
        Ok(d) if d.is_finite() && (0.0..1.0).contains(&d) => Ok(d.ln_1p()),
        Ok(d) => Err(format!("drift {d} is out of range: {hint}")),
        Err(e) => Err(format!("{e}: {hint}")),
    }
}

/// `--count-min-effect`: a fraction strictly between 0 and 1 (clap exits 2 otherwise).
pub fn count_fraction(text: &str) -> Result<f64, String> {
    let hint = format!(
        "give a fraction between 0 and 1, e.g. --count-min-effect {}",
        policy::COUNT_MIN_EFFECT
    );
    match text.parse::<f64>() {
        Ok(m) if m.is_finite() && m > 0.0 && m < 1.0 => Ok(m),
        Ok(m) => Err(format!("minimum effect {m} is out of range: {hint}")),
        Err(e) => Err(format!("{e}: {hint}")),
    }
}

impl Args {
    /// The minimum effects, each from its own flag: of timed rows `--min-effect`, else policy's;
    /// of instruction counts `--count-min-effect`, else the count default.
    fn effects(&self) -> Effects {
        Effects {
            time: self.min_effect.unwrap_or(policy::REGRESSION_MIN_EFFECT),
            count: augbench_report::judge::counts::min_effect(self.count_min_effect),
        }
    }

    /// Prints the verdicts' summary where the output does not end with it (not markdown on
    /// standard output); exit code 1 when a failing verdict the flags ask about is present.
    fn finish(&self, tally: &Tally) -> ExitCode {
        if self.format != FormatArg::Markdown || self.out.is_some() {
            eprintln!("{}", tally.summary);
        }
        let failed = (self.fail_on_regression && tally.regression)
            || (self.fail_on_undecided && tally.undecided);
        if failed {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        }
    }
}

/// Loads results and prints the loader's warnings to standard error.
pub fn load(paths: &[PathBuf]) -> anyhow::Result<Dataset> {
    let data = augbench_report::load_paths(paths)?;
    for w in &data.warnings {
        eprintln!("warning: {w}");
    }
    Ok(data)
}

/// Prints `text` or writes it atomically to `out`.
pub fn emit(text: &str, out: Option<&PathBuf>) -> anyhow::Result<()> {
    match out {
        Some(path) => {
            augbench_host::fsutil::write_atomic(path, text.as_bytes())?;
            eprintln!("wrote {}", path.display());
        }
        None => print!("{text}"),
    }
    Ok(())
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if let Some(c) = &args.current {
        return run_regression(&args, &args.baseline, c);
    }
    if let [folder] = args.results.as_slice()
        && augbench_report::production::is_output_folder(folder)
    {
        return production(&args, folder);
    }
    let data = load(&args.results)?;
    let opts = TableOptions {
        reference: args.reference_library.clone(),
        sort: args.sort.into(),
    };
    let shown = compare::tables(&data, &opts, args.effects(), args.format.into())?;
    show(&args, &shown)
}

/// A production output folder: the tables of its latest run (Markdown).
fn production(args: &Args, folder: &std::path::Path) -> anyhow::Result<ExitCode> {
    if args.format != FormatArg::Markdown {
        return Err(augbench_core::UsageError::new(
            "production runs are shown as Markdown only",
            "drop --format, or read the cell files (runs/<run id>/cells) as JSON",
        )
        .into());
    }
    let run = augbench_report::production::latest(folder)?;
    for u in &run.unreadable {
        eprintln!("warning: cell file not read: {u}");
    }
    let text = format!(
        "# Production run {}\n\n{}",
        run.run_id,
        augbench_report::production::markdown(&run.cells, &run.planned)
    );
    emit(&text, args.out.as_ref())?;
    Ok(ExitCode::SUCCESS)
}

/// Two production folders' latest runs side by side: ratios, no verdict (exit 0).
fn production_change(
    args: &Args,
    baseline: &std::path::Path,
    current: &std::path::Path,
) -> anyhow::Result<ExitCode> {
    use augbench_report::production::{is_output_folder, latest};
    for folder in [baseline, current] {
        if !is_output_folder(folder) {
            return Err(augbench_core::UsageError::new(
                format!("{} is not a production output folder", folder.display()),
                "compare two folders written by `augbench production` (each has latest.json)",
            )
            .into());
        }
    }
    if args.format != FormatArg::Markdown {
        return Err(augbench_core::UsageError::new(
            "production runs are compared as Markdown only",
            "drop --format",
        )
        .into());
    }
    let (old, new) = (latest(baseline)?, latest(current)?);
    for u in old.unreadable.iter().chain(&new.unreadable) {
        eprintln!("warning: cell file not read: {u}");
    }
    augbench_report::production_change::check_comparable(&old.cells, &new.cells)?;
    let text = format!(
        "# Production run {} against baseline {}\n\n{}",
        new.run_id,
        old.run_id,
        augbench_report::production_change::markdown(&old.cells, &new.cells)
    );
    emit(&text, args.out.as_ref())?;
    Ok(ExitCode::SUCCESS)
}

/// Prints what `compare` shows, then the exit code its verdicts and the flags give.
fn show(args: &Args, shown: &Shown) -> anyhow::Result<ExitCode> {
    emit(&shown.text, args.out.as_ref())?;
    match &shown.verdicts {
        Some(tally) => Ok(args.finish(tally)),
        None => no_variants(args),
    }
}

/// Results without variants: fine, unless a `--fail-on-…` flag asked for verdicts.
fn no_variants(args: &Args) -> anyhow::Result<ExitCode> {
    let flag = match (args.fail_on_regression, args.fail_on_undecided) {
        (true, _) => "--fail-on-regression",
        (false, true) => "--fail-on-undecided",
        (false, false) => return Ok(ExitCode::SUCCESS),
    };
    Err(augbench_core::UsageError::new(
        format!("{flag} needs A/B variants or two runs: these results measured no variants"),
        "pass an A/B run's folder (selection.variants), or --baseline OLD --current NEW",
    )
    .into())
}

fn run_regression(
    args: &Args,
    baselines: &[PathBuf],
    current: &PathBuf,
) -> anyhow::Result<ExitCode> {
    let is_production = augbench_report::production::is_output_folder;
    if let [baseline] = baselines
        && (is_production(baseline) || is_production(current))
    {
        return production_change(args, baseline, current);
    }
    let invocations = augbench_report::baseline::expand(baselines)?
        .iter()
        .map(|b| load(std::slice::from_ref(b)))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let basis = augbench_report::judge::drift::basis(&invocations, args.drift);
    let cur = load(std::slice::from_ref(current))?;
    let timed = cur.rows.iter().any(|r| r.instructions.is_none());
    if args.fail_on_regression && timed && !basis.known() {
        return Err(gate_without_drift(&basis).into());
    }
    let shown = compare::regression(
        &invocations,
        &cur,
        args.effects(),
        args.drift,
        args.format.into(),
    )?;
    show(args, &shown)
}

/// `--fail-on-regression` on timed rows over one baseline invocation and no stated drift: the
/// gate would claim an error rate between runs it has not got (instruction counts need none).
fn gate_without_drift(
    basis: &augbench_report::judge::drift::DriftBasis,
) -> augbench_core::UsageError {
    augbench_core::UsageError::new(
        format!(
            "--fail-on-regression needs the drift between invocations, and it is not known: {}",
            basis.describe()
        ),
        format!(
            "pass --baseline once for each of {} or more invocations of the baseline, or --drift FRACTION measured for this runner class (docs/ci.md)",
            policy::DRIFT_MIN_INVOCATIONS
        ),
    )
}
