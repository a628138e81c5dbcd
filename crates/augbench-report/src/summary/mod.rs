//! The end-of-run terminal summary of `augbench run`, rendered from what the run hands back
//! (`RunView`): the table of transforms × libraries (`table`; a decode run's decoders in
//! `decode`), the lines on the run under it (`lines`: figure, schedule, precision, time), and
//! where each job's file went. The caller prints the lines in order, each to its stream.

pub mod decode;
pub mod lines;
mod table;
pub mod targets;

use std::path::PathBuf;

use augbench_cells::AppendReport;
use augbench_core::Media;
use augbench_core::results::ResultFile;

pub use table::{reference_of, table};

/// The run summary's unit for instruction counts (never img/s: counts are not time).
const COUNT_TABLE_UNIT: &str = "M instr/item";
const COUNT_FIGURE_LINE: &str = "figure: millions of instructions per item, counted under Valgrind (callgrind), the median over worker processes; fewer is less work (docs/methodology.md, \"Instruction counts\")";

/// How a job ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobState {
    Finished,
    /// Stopped by Ctrl-C; its finished rows are in the file.
    Interrupted,
    /// Failed, with the reason.
    Failed(String),
}

/// One job of the run and where its file went.
#[derive(Debug, Clone)]
pub struct JobLine {
    pub library: String,
    pub file: PathBuf,
    pub state: JobState,
}

/// What a finished run hands the summary.
#[derive(Debug, Clone)]
pub struct RunView<'a> {
    /// The result files the run wrote (finished and interrupted jobs).
    pub files: Vec<&'a ResultFile>,
    /// The plan's transforms, in order (the table's rows).
    pub transforms: Vec<String>,
    pub media: Media,
    /// `output.reference_library` of the run's config.
    pub reference: Option<&'a str>,
    pub decode: bool,
    /// The run's time split line (`time: …`), when it was measured.
    pub time_split: Option<String>,
    pub jobs: Vec<JobLine>,
    /// The equivalence check's one-line summary, when the run checked.
    pub equivalence: Option<String>,
}

/// A line of the summary and its stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub text: String,
    /// Standard error (a failure) rather than standard output.
    pub to_stderr: bool,
}

impl Line {
    fn out(text: impl Into<String>) -> Line {
        Line {
            text: text.into(),
            to_stderr: false,
        }
    }
}

/// The cell log's line (standard error, before the summary).
pub fn cells_line(r: &AppendReport) -> String {
    format!(
        "cells: {} rows in {} ({} new, {} replaced)",
        r.rows_after,
        r.path.display(),
        r.appended,
        r.replaced
    )
}

/// The line after `run --invocations N`: where the baseline is, the drift between its
/// invocations (or why there is none), and the command that gates against it.
pub fn baseline_line(out: &std::path::Path, r: &crate::baseline::Record) -> String {
    let n = r.invocations.len();
    let drift = match &r.drift {
        Some(d) => format!(
            "a figure moves ±{:.1}% (sd) between them, over {} rows (recorded as drift.fraction {:.4}, what --drift takes)",
            d.spread * 100.0,
            d.rows,
            d.fraction
        ),
        None => format!(
            "the drift between them is not estimated (it needs {} invocations with a row measured in each)",
            augbench_core::policy::DRIFT_MIN_INVOCATIONS
        ),
    };
    format!(
        "baseline: {n} invocation{} in {}; {drift}; gate a later run with `augbench compare --baseline {} --current <run> --fail-on-regression`",
        if n == 1 { "" } else { "s" },
        out.display(),
        out.display()
    )
}

/// The whole summary of a run, in print order.
pub fn render(view: &RunView) -> Vec<Line> {
    let mut out = if view.decode {
        decode_lines(view)
    } else {
        transform_lines(view)
    };
    out.extend(job_lines(&view.jobs));
    if let Some(line) = &view.equivalence {
        out.push(Line::out(line.clone()));
    }
    out
}

/// Decoders: clips/s and frames/s per decoder.
fn decode_lines(view: &RunView) -> Vec<Line> {
    if view.files.is_empty() {
        return Vec::new();
    }
    vec![Line::out(format!("\n{}", decode::table(&view.files)))]
}

/// Transforms: the table, the figure and reference lines, then the run's lines.
fn transform_lines(view: &RunView) -> Vec<Line> {
    let files = &view.files;
    let mut out = Vec::new();
    let counted = files
        .iter()
        .any(|f| f.metadata.benchmark_params.measure.is_some());
    let image_only = targets::files_of(files, None);
    if !image_only.is_empty() {
        out.extend(table_lines(view, &image_only, counted, None));
    }
    for set in targets::sets(files) {
        let with = targets::files_of(files, Some(&set));
        out.extend(table_lines(view, &with, counted, Some(&set)));
    }
    if let Some(cost) = targets::cost_lines(files, &view.transforms) {
        out.push(Line::out(cost));
    }
    let counts = lines::status_counts(files);
    let counts: Vec<String> = counts.iter().map(|(k, v)| format!("{v} {k}")).collect();
    out.push(Line::out(format!("transforms: {}", counts.join(", "))));
    let optional = [lines::schedule_line(files), lines::precision_line(files)];
    out.extend(optional.into_iter().flatten().map(Line::out));
    out.extend(view.time_split.iter().cloned().map(Line::out));
    out.extend(lines::time_lines(files).into_iter().map(Line::out));
    out
}

/// One table of `files` (all image-only, or all of one target set, titled `image + <set>`),
/// then its figure and reference lines.
fn table_lines(
    view: &RunView,
    files: &[&ResultFile],
    counted: bool,
    set: Option<&str>,
) -> Vec<Line> {
    let reference = reference_of(files, view.reference);
    let unit = table_unit(view, counted);
    let table = table(
        files,
        &view.transforms,
        &unit,
        clip_length(view),
        &reference.library,
    );
    let title = set.map_or(String::new(), |s| format!("\nimage + {s}:"));
    let mut out = vec![Line::out(format!("{title}\n{table}"))];
    // The figure line is said once, under the image-only table.
    if set.is_none() {
        if counted {
            out.push(Line::out(COUNT_FIGURE_LINE));
        } else if let Some(line) = lines::figure_line(files) {
            out.push(Line::out(line));
        }
    }
    out.push(Line::out(format!(
        "reference: {} ({})",
        reference.library,
        reference.why.describe()
    )));
    out
}

/// The table's column unit: a pipeline number is only meaningful with its loader shape.
fn table_unit(view: &RunView, counted: bool) -> String {
    let noun = lines::unit(view.media);
    match view.files.iter().find_map(|f| f.metadata.pipeline.as_ref()) {
        Some(p) => format!("{noun} (pipeline, w={}, b={})", p.workers, p.batch_size),
        None if counted => COUNT_TABLE_UNIT.to_string(),
        None => noun.to_string(),
    }
}

/// Frames per clip of a video run, from its result files (every library's is the same).
fn clip_length(view: &RunView) -> Option<u64> {
    if view.media != Media::Video {
        return None;
    }
    view.files
        .iter()
        .find_map(|f| f.metadata.benchmark_params.clip_length)
}

/// Each job's file, or why it failed.
fn job_lines(jobs: &[JobLine]) -> Vec<Line> {
    jobs.iter()
        .map(|j| match &j.state {
            JobState::Finished => Line::out(format!("  {} → {}", j.library, j.file.display())),
            JobState::Interrupted => Line::out(format!(
                "  {} → {} (interrupted; rerun with --resume)",
                j.library,
                j.file.display()
            )),
            JobState::Failed(e) => Line {
                text: format!("  {} FAILED: {e}", j.library),
                to_stderr: true,
            },
        })
        .collect()
}
