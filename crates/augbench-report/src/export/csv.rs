//! CSV export in long form: one line per (group, transform, library) with status, the headline
//! figure (and which one it is), std,
//! interval, the row's speedup (paired or not, with its interval) and, where the library's output
//! was not contiguous, the share forcing it took, so spreadsheets and data frames can pivot it freely.
//! A/B and regression verdicts: one line per compared row, then the not-measured line.

use anyhow::Context;

use crate::judge::ab::{self, AbReport, AbRow};
use crate::judge::regression::{Comparison, RegressionReport};
use crate::judge::verdict::Verdict;
use crate::table::{Cell, Table};

const HEADER: [&str; 23] = [
    "scenario",
    "mode",
    "device",
    "variant",
    "transform",
    "library",
    "library_version",
    "status",
    "figure",
    "std",
    "ci_low",
    "ci_high",
    "unit",
    "reference",
    "speedup_reference_over_fastest_other",
    "speedup_paired",
    "speedup_ci_low",
    "speedup_ci_high",
    "reason",
    "frames_per_sec",
    "output_contiguous",
    "force_share",
    "figure_is",
];

pub fn render(tables: &[Table]) -> anyhow::Result<String> {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    w.write_record(HEADER).context("writing CSV")?;
    for t in tables {
        for r in &t.rows {
            for (i, (c, col)) in r.cells.iter().zip(&t.columns).enumerate() {
                let k = &t.key;
                let mut rec = vec![
                    k.scenario.clone(),
                    k.mode.clone(),
                    k.device.clone(),
                    k.variant.clone(),
                    r.transform.clone(),
                    col.library.clone(),
                    col.version.clone(),
                ];
                rec.extend(cell_fields(c));
                rec.push(t.unit.to_string());
                rec.push(t.reference.clone());
                rec.push(opt(r.speedup));
                rec.push(r.speedup_paired.to_string());
                rec.push(opt(r.speedup_ci.map(|c| c[0])));
                rec.push(opt(r.speedup_ci.map(|c| c[1])));
                rec.push(reason(c));
                rec.push(opt(r.frames_per_sec.get(i).copied().flatten()));
                rec.extend(form_fields(c));
                rec.push(t.figure.clone());
                w.write_record(&rec).context("writing CSV")?;
            }
        }
    }
    finish(w)
}

fn finish(w: ::csv::Writer<Vec<u8>>) -> anyhow::Result<String> {
    let bytes = w.into_inner().context("finishing CSV")?;
    String::from_utf8(bytes).context("CSV is not UTF-8")
}

const AB_HEADER: [&str; 16] = [
    "scenario",
    "mode",
    "device",
    "variant",
    "library",
    "baseline",
    "current",
    "transform",
    "ratio",
    "ci_low",
    "ci_high",
    "rerun_low",
    "rerun_high",
    "rounds",
    "verdict",
    "note",
];

/// A/B verdicts: one line per (variant pair, transform), then the transforms measured by neither.
pub fn ab(report: &AbReport) -> anyhow::Result<String> {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    w.write_record(AB_HEADER).context("writing CSV")?;
    for r in &report.rows {
        w.write_record(ab_record(r)).context("writing CSV")?;
    }
    if let Some(line) = report.not_measured.line("variants") {
        let last = not_measured_record(AB_HEADER.len(), ab::word(Verdict::NotComparable), line);
        w.write_record(&last).context("writing CSV")?;
    }
    finish(w)
}

fn ab_record(r: &AbRow) -> [String; 16] {
    let k = &r.key;
    [
        k.scenario.clone(),
        k.mode.clone(),
        k.device.clone(),
        k.variant.clone(),
        r.library.clone(),
        r.baseline.clone(),
        r.current.clone(),
        r.transform.clone(),
        opt(r.ratio),
        opt(r.interval.map(|i| i.0)),
        opt(r.interval.map(|i| i.1)),
        opt(r.rerun.map(|i| i.0)),
        opt(r.rerun.map(|i| i.1)),
        r.rounds.to_string(),
        ab::word(r.verdict).to_string(),
        r.notes_text().unwrap_or_default(),
    ]
}

const REGRESSION_HEADER: [&str; 20] = [
    "scenario",
    "mode",
    "device",
    "variant",
    "library",
    "transform",
    "unit",
    "baseline",
    "baseline_rerun_low",
    "baseline_rerun_high",
    "current",
    "current_rerun_low",
    "current_rerun_high",
    "delta_pct",
    "ratio",
    "ratio_low",
    "ratio_high",
    "figure",
    "verdict",
    "note",
];

/// Regression verdicts: one line per compared row, then the rows measured on neither side.
pub fn regression(report: &RegressionReport) -> anyhow::Result<String> {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    w.write_record(REGRESSION_HEADER).context("writing CSV")?;
    for r in &report.rows {
        w.write_record(regression_record(r))
            .context("writing CSV")?;
    }
    if let Some(line) = report.not_measured.line("runs") {
        let verdict = Verdict::NotComparable.as_str();
        let last = not_measured_record(REGRESSION_HEADER.len(), verdict, line);
        w.write_record(&last).context("writing CSV")?;
    }
    finish(w)
}

fn regression_record(r: &Comparison) -> [String; 20] {
    let k = &r.key;
    [
        k.scenario.clone(),
        k.mode.clone(),
        k.device.clone(),
        k.variant.clone(),
        r.library.clone(),
        r.transform.clone(),
        r.unit.to_string(),
        opt(r.baseline),
        opt(r.baseline_interval.map(|c| c.0)),
        opt(r.baseline_interval.map(|c| c.1)),
        opt(r.current),
        opt(r.current_interval.map(|c| c.0)),
        opt(r.current_interval.map(|c| c.1)),
        opt(r.delta_pct),
        opt(r.ratio),
        opt(r.ratio_interval.map(|c| c.0)),
        opt(r.ratio_interval.map(|c| c.1)),
        r.figure.clone().unwrap_or_default(),
        r.verdict.as_str().to_string(),
        r.note.clone().unwrap_or_default(),
    ]
}

/// The last line of a verdict CSV: empty fields, then the verdict word and the not-measured line.
fn not_measured_record(columns: usize, verdict: &str, line: String) -> Vec<String> {
    let mut last = vec![String::new(); columns - 2];
    last.extend([verdict.to_string(), line]);
    last
}

/// output_contiguous (`true`/`false`), force_share; empty where not recorded.
fn form_fields(c: &Cell) -> [String; 2] {
    let form = c.form();
    [
        form.and_then(|f| f.output_contiguous)
            .map(|b| b.to_string())
            .unwrap_or_default(),
        opt(form.and_then(|f| f.force_share)),
    ]
}

/// status, figure (slow: the preflight throughput), std, ci_low, ci_high.
fn cell_fields(c: &Cell) -> [String; 5] {
    match c {
        Cell::Ok {
            figure,
            std,
            ci_low,
            ci_high,
            ..
        } => [
            "ok".into(),
            figure.to_string(),
            opt(*std),
            opt(*ci_low),
            opt(*ci_high),
        ],
        Cell::Slow { preflight } => [
            "slow".into(),
            opt(*preflight),
            String::new(),
            String::new(),
            String::new(),
        ],
        Cell::Unsupported { .. } => [
            "unsupported".into(),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
        ],
        Cell::Error { .. } => [
            "error".into(),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
        ],
        Cell::Missing => [
            "missing".into(),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
        ],
    }
}

fn reason(c: &Cell) -> String {
    match c {
        Cell::Unsupported { reason } | Cell::Error { reason } => reason.clone().unwrap_or_default(),
        _ => String::new(),
    }
}

fn opt(x: Option<f64>) -> String {
    x.map(num).unwrap_or_default()
}

/// A number with at most six decimals (trailing zeros dropped): enough for any throughput, and
/// free of last-bit noise.
pub fn num(x: f64) -> String {
    let s = format!("{x:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".to_string()
    } else {
        s.to_string()
    }
}
