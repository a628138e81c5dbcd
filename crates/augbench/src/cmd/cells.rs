//! `augbench cells …`: the command-line face of the evaluation cell engine in augbench-eval
//! (group, merge, show, summarize) and of augbench-cells' file I/O (convert). Parsing and printing
//! only; user-fixable engine errors become `UsageError` (exit 2), machine failures stay plain
//! errors (exit 1).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use augbench_cells::{CellsError, Format, io};
use augbench_core::UsageError;
use augbench_eval::render::{self, Filter, TextFormat};
use augbench_eval::summary::{self, SummaryOptions};
use augbench_eval::{CardSource, GroupOptions, merge};
use clap::{Args, Subcommand, ValueEnum};

#[derive(Debug, Subcommand)]
pub enum CellsCommand {
    /// Group per-sample metric rows (JSONL, CSV or Parquet) into per-(scene, phase) evaluation cells.
    Group(GroupArgs),
    /// Concatenate cell logs under the union of their columns.
    Merge(MergeArgs),
    /// Print a cell log as a table, CSV or JSON.
    Show(ShowArgs),
    /// Mean and scene-bootstrap interval of every metric, per group.
    Summarize(SummarizeArgs),
    /// Convert a cell log between Parquet and JSON Lines (formats follow the suffixes).
    Convert { input: PathBuf, output: PathBuf },
}

/// Output format of a written log.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum FormatArg {
    Auto,
    Parquet,
    Jsonl,
}

impl From<FormatArg> for Format {
    fn from(f: FormatArg) -> Self {
        match f {
            FormatArg::Auto => Format::Auto,
            FormatArg::Parquet => Format::Parquet,
            FormatArg::Jsonl => Format::Jsonl,
        }
    }
}

/// Text output format.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum TextArg {
    Table,
    Csv,
    Json,
}

impl From<TextArg> for TextFormat {
    fn from(f: TextArg) -> Self {
        match f {
            TextArg::Table => TextFormat::Table,
            TextArg::Csv => TextFormat::Csv,
            TextArg::Json => TextFormat::Json,
        }
    }
}

#[derive(Debug, Args)]
pub struct GroupArgs {
    /// Model name stamped on every cell.
    #[arg(long)]
    pub model: String,
    /// Task stamped on every cell.
    #[arg(long)]
    pub task: String,
    /// Metrics to keep, in order (default: every numeric non-metadata key of any row).
    #[arg(long, value_delimiter = ',')]
    pub metric_keys: Option<Vec<String>>,
    /// `auto` (detect this machine), `none`, or a JSON file with gpu_name, gpu_memory_gb, precision, batch_size.
    #[arg(long, default_value = "auto")]
    pub system_card: String,
    /// Version stamp of the model or adapter.
    #[arg(long)]
    pub git_sha: Option<String>,
    /// Output format (auto: by the output's suffix).
    #[arg(long, value_enum, default_value_t = FormatArg::Auto)]
    pub format: FormatArg,
    /// Per-sample rows: .jsonl, .csv or .parquet.
    pub rows: PathBuf,
    /// Cell log to write.
    #[arg(short, long)]
    pub output: PathBuf,
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Logs to merge, in order.
    #[arg(required = true, num_args = 1..)]
    pub inputs: Vec<PathBuf>,
    #[arg(short, long)]
    pub output: PathBuf,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    pub file: PathBuf,
    #[arg(long, value_enum, default_value_t = TextArg::Table)]
    pub format: TextArg,
    /// Keep rows where COLUMN equals VALUE (repeat to combine).
    #[arg(long, value_name = "COLUMN=VALUE")]
    pub filter: Vec<String>,
}

#[derive(Debug, Args)]
pub struct SummarizeArgs {
    pub file: PathBuf,
    /// Grouping columns, comma separated (`model` and `scene` are accepted for model_name, scene_id).
    #[arg(long, value_delimiter = ',')]
    pub by: Vec<String>,
    /// Bootstrap resamples (0: no interval).
    #[arg(long, default_value_t = summary::DEFAULT_BOOTSTRAP)]
    pub bootstrap: usize,
    #[arg(long, default_value_t = summary::DEFAULT_SEED)]
    pub seed: u64,
    /// Interval coverage.
    #[arg(long, default_value_t = summary::DEFAULT_CI)]
    pub ci: f64,
    #[arg(long, value_enum, default_value_t = TextArg::Table)]
    pub format: TextArg,
}

pub fn run(cmd: CellsCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        CellsCommand::Group(a) => group(a),
        CellsCommand::Merge(a) => merge_cmd(a),
        CellsCommand::Show(a) => show(a),
        CellsCommand::Summarize(a) => summarize(a),
        CellsCommand::Convert { input, output } => convert(input, output),
    }
    .map(|()| ExitCode::SUCCESS)
}

/// User-fixable engine errors become `UsageError` (exit 2); the rest keep message and hint (exit 1).
fn lift(e: CellsError) -> anyhow::Error {
    if e.is_user_fixable() {
        UsageError::new(e.to_string(), e.hint()).into()
    } else {
        anyhow::anyhow!("{e}\n  hint: {}", e.hint())
    }
}

fn out(text: &str) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .context("cannot write to stdout")
}

fn group(a: GroupArgs) -> anyhow::Result<()> {
    let card = CardSource::from_spec(&a.system_card).map_err(lift)?;
    let stamp = card.stamp(&a.system_card).map_err(lift)?;
    let opts = GroupOptions {
        model_name: a.model,
        task: a.task,
        git_sha: a.git_sha,
        metric_keys: a.metric_keys,
        stamp,
    };
    let outcome = augbench_eval::rows::group_file(&a.rows, opts).map_err(lift)?;
    if outcome.skipped > 0 {
        eprintln!(
            "note: {} of {} rows skipped (no scene or phase)",
            outcome.skipped, outcome.rows
        );
    }
    if outcome.log.cells.is_empty() {
        eprintln!(
            "warning: {} holds no groupable rows; writing a schema-only log\n  hint: each row needs 'scene' and 'phase'",
            a.rows.display()
        );
    }
    let res = outcome
        .log
        .write(&a.output, a.format.into())
        .map_err(lift)?;
    eprintln!(
        "wrote {} cells to {} ({}; metric columns: {})",
        res.rows,
        res.path.display(),
        res.format,
        if res.metric_columns.is_empty() {
            "none".to_string()
        } else {
            res.metric_columns.join(", ")
        }
    );
    Ok(())
}

/// Duplicates printed by name before the rest are only counted.
const DUPLICATES_LISTED: usize = 5;

fn merge_cmd(a: MergeArgs) -> anyhow::Result<()> {
    let merged = merge::merge_files(&a.inputs).map_err(lift)?;
    if !merged.duplicates.is_empty() {
        eprintln!(
            "warning: {} duplicate cells kept (same identifying key):",
            merged.duplicates.len()
        );
        for d in merged.duplicates.iter().take(DUPLICATES_LISTED) {
            let files: Vec<String> = d.files.iter().map(|f| f.display().to_string()).collect();
            eprintln!("  {}× {} (in {})", d.count, d.key, files.join(", "));
        }
        if merged.duplicates.len() > DUPLICATES_LISTED {
            eprintln!(
                "  … and {} more",
                merged.duplicates.len() - DUPLICATES_LISTED
            );
        }
    }
    let res = io::write_table(&merged.table, &a.output, Format::Auto).map_err(lift)?;
    eprintln!(
        "wrote {} rows from {} logs to {} ({})",
        res.rows,
        a.inputs.len(),
        res.path.display(),
        res.format
    );
    Ok(())
}

fn show(a: ShowArgs) -> anyhow::Result<()> {
    let filters = a
        .filter
        .iter()
        .map(|f| f.parse::<Filter>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(lift)?;
    let table = io::read_table(&a.file).map_err(lift)?;
    let rows = render::filter_rows(&table, &filters).map_err(lift)?;
    out(&render::render_rows(&table, &rows, a.format.into()))
}

fn summarize(a: SummarizeArgs) -> anyhow::Result<()> {
    let table = io::read_table(&a.file).map_err(lift)?;
    let opts = SummaryOptions {
        by: a.by,
        bootstrap: a.bootstrap,
        seed: a.seed,
        ci: a.ci,
    };
    let rows = summary::summarize(&table, &opts).map_err(lift)?;
    out(&render::render_summary(&rows, a.format.into()))
}

fn convert(input: PathBuf, output: PathBuf) -> anyhow::Result<()> {
    let table = io::read_table(&input).map_err(lift)?;
    let res = io::write_table(&table, &output, Format::Auto).map_err(lift)?;
    eprintln!(
        "wrote {} rows to {} ({})",
        res.rows,
        res.path.display(),
        res.format
    );
    Ok(())
}
