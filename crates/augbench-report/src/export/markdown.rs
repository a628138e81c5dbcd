//! Markdown tables: `figure ± std` cells (the legend names the figure), the fastest library of a row in bold, slow cells as
//! `≤20 img/s`, unsupported as `–`, failures as `error`, then a legend and a per-library footer.
//! Video tables give each library a second column in frames/s. A/B and regression verdicts: one
//! table per group (and variant pair), then the not-measured line and the summary.

use std::fmt::Write;

use super::formatting::{
    FORCED_MARK, fmt_footer_speedup, fmt_median_std, fmt_row_speedup, forced_note, paired_note,
};
use crate::judge::ab::{self, AbReport, AbRow};
use crate::judge::regression::{self, Comparison, RegressionReport};
use crate::judge::verdict::Verdict;
use crate::model::{COUNT_UNIT, GroupKey};
use crate::number::decimals;
use crate::table::{Cell, FIRST_BATCH_TITLE, Table, TableRow};

/// Every table under a `### <group>` heading.
pub fn render_all(tables: &[Table]) -> String {
    let mut out = String::new();
    for t in tables {
        let _ = writeln!(out, "### {}\n", t.title);
        out.push_str(&render_table(t));
        out.push('\n');
    }
    out
}

/// One table with its legend and footer (what `docs update` puts between markers).
pub fn render_table(t: &Table) -> String {
    let mut out = String::new();
    let mut header = vec!["Transform".to_string()];
    for c in &t.columns {
        header.push(column_title(&c.library, &c.version, t.unit));
        if let Some(frames) = t.frames_unit {
            header.push(format!("[{frames}]"));
        }
    }
    header.push(format!("Speedup ({} / fastest other)", t.reference));
    let _ = writeln!(out, "| {} |", header.join(" | "));
    let _ = writeln!(out, "|---|{}", "--:|".repeat(header.len() - 1));
    for r in &t.rows {
        let _ = writeln!(out, "| {} |", row_cells(t, r).join(" | "));
    }
    if let Some(note) = t.unmeasured_note() {
        let _ = writeln!(out, "\n{}", escape(&note));
    }
    out.push_str(&first_batch_table(t));
    let _ = writeln!(out, "\n{}\n", legend(t));
    out.push_str(&footer(t));
    out
}

/// Pipeline groups: each cell's time to first batch, a table of its own (empty when no row
/// recorded one).
fn first_batch_table(t: &Table) -> String {
    let rows: Vec<&TableRow> = t
        .rows
        .iter()
        .filter(|r| !r.first_batch_s.is_empty())
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    let mut out = format!("\n{FIRST_BATCH_TITLE}\n\n| Transform |");
    for c in &t.columns {
        let _ = write!(out, " {} |", escape(&c.library));
    }
    let _ = writeln!(out, "\n|---|{}", "--:|".repeat(t.columns.len()));
    for r in rows {
        let cells: Vec<String> = r
            .first_batch_s
            .iter()
            .map(|s| s.map_or_else(|| "–".to_string(), |s| format!("{s:.2}")))
            .collect();
        let _ = writeln!(out, "| {} | {} |", escape(&r.transform), cells.join(" | "));
    }
    out
}

fn column_title(library: &str, version: &str, unit: &str) -> String {
    if version.is_empty() {
        format!("{library} [{unit}]")
    } else {
        format!("{library} {version} [{unit}]")
    }
}

fn row_cells(t: &Table, r: &TableRow) -> Vec<String> {
    let mut v = vec![escape(&r.transform)];
    for (i, (c, col)) in r.cells.iter().zip(&t.columns).enumerate() {
        let mut text = cell_text(t, c);
        if let Some(share) = r.of_ceiling.get(i).copied().flatten() {
            let _ = write!(text, " ({:.0}%)", share * 100.0);
        }
        let bold = r.fastest.as_deref() == Some(col.library.as_str());
        v.push(if bold { format!("**{text}**") } else { text });
        if t.frames_unit.is_some() {
            let frames = r.frames_per_sec.get(i).copied().flatten();
            v.push(frames.map_or_else(String::new, |f| format!("{f:.0}")));
        }
    }
    v.push(fmt_row_speedup(r));
    v
}

fn cell_text(t: &Table, c: &Cell) -> String {
    match c {
        Cell::Ok { figure, std, .. } => {
            let mark = if c.forced() { FORCED_MARK } else { "" };
            format!("{}{mark}", fmt_median_std(*figure, *std))
        }
        Cell::Slow { .. } => t.slow_label(),
        Cell::Unsupported { .. } | Cell::Missing => "–".into(),
        Cell::Error { .. } => "error".into(),
    }
}

fn legend(t: &Table) -> String {
    if t.unit == COUNT_UNIT {
        return format!(
            "**bold**: fewest instructions in the row · figure: {} · `–`: unsupported · `error`: failed",
            t.figure
        );
    }
    let mut s = format!(
        "**bold**: fastest in the row · `figure ± std` over runs, figure: {} · `{}`: too slow for training use, \
         not measured in full · `–`: unsupported · `error`: failed",
        t.figure,
        t.slow_label()
    );
    if let Some(frames) = t.frames_unit {
        let _ = write!(s, " · `[{frames}]`: the cell to its left × frames per clip");
    }
    if !t.reference_present {
        let _ = write!(s, " · speedup n/a: {} has no results here", t.reference);
    }
    if let Some(ceiling) = &t.ceiling {
        let _ = write!(
            s,
            " · `(x%)`: share of the library's own decode ceiling (`{ceiling}`: decode → crop → normalize, no transform)"
        );
    }
    if let Some(note) = paired_note(t) {
        let _ = write!(s, "\n\n{note}");
    }
    if let Some(note) = forced_note(t) {
        let _ = write!(s, "\n\n{}", escape(&note));
    }
    s
}

fn footer(t: &Table) -> String {
    let mut out = format!(
        "| Library | Rows measured | Median speedup of {} (rows both measured) |\n|---|--:|--:|\n",
        t.reference
    );
    for (i, f) in t.footer.iter().enumerate() {
        let speedup = if i == 0 && t.reference_present {
            "reference".to_string()
        } else if f.common == 0 {
            "n/a".to_string()
        } else {
            fmt_footer_speedup(f)
        };
        let _ = writeln!(
            out,
            "| {} | {} / {} | {speedup} |",
            f.library, f.measured, f.total
        );
    }
    out
}

/// A/B verdicts: a `### A/B current ÷ baseline · group` table per variant pair and group.
pub fn ab(report: &AbReport) -> String {
    let mut out = String::new();
    let mut current: Option<(&GroupKey, &str, &str)> = None;
    for r in &report.rows {
        let head = (&r.key, r.baseline.as_str(), r.current.as_str());
        if current != Some(head) {
            out.push_str(&ab_heading(r, current.is_some()));
            current = Some(head);
        }
        let _ = writeln!(out, "{}", ab_line(r));
    }
    if let Some(line) = report.not_measured_line() {
        let _ = writeln!(out, "\n{line}");
    }
    let _ = writeln!(out, "\n{}", ab::summary(report));
    out
}

fn ab_heading(r: &AbRow, after_table: bool) -> String {
    format!(
        "{}### A/B {} ÷ {} · {}\n\n| Transform | Ratio | 95% confidence interval | Rounds | Verdict |\n|---|--:|---|--:|---|\n",
        if after_table { "\n" } else { "" },
        r.current,
        r.baseline,
        r.key.title()
    )
}

fn ab_line(r: &AbRow) -> String {
    let verdict = match r.verdict {
        Verdict::Regression => format!("**{}**", r.verdict_text()),
        _ => r.verdict_text(),
    };
    format!(
        "| {} | {} | {} | {} | {verdict} |",
        escape(&r.transform),
        r.ratio_text(),
        r.interval_text(),
        r.rounds
    )
}

/// Regression verdicts: a `### group` table of every library's rows per group.
pub fn regression(report: &RegressionReport) -> String {
    let mut out = String::new();
    let mut current: Option<&GroupKey> = None;
    for r in &report.rows {
        if current != Some(&r.key) {
            out.push_str(&regression_heading(r, current.is_some()));
            current = Some(&r.key);
        }
        let _ = writeln!(out, "{}", regression_line(r));
    }
    if let Some(line) = report.not_measured.line("runs") {
        let _ = writeln!(out, "\nnot comparable: {line}");
    }
    let _ = writeln!(out, "\n{}", regression::summary(report));
    out
}

fn regression_heading(r: &Comparison, after_table: bool) -> String {
    format!(
        "{}### {}\n\n| Library | Transform | Figure | Baseline [{u}] | Current [{u}] | Δ% | Current ÷ baseline [CI] | Verdict |\n\
         |---|---|---|--:|--:|--:|--:|---|\n",
        if after_table { "\n" } else { "" },
        r.key.title(),
        u = r.unit
    )
}

fn regression_line(r: &Comparison) -> String {
    format!(
        "| {} | {} | {} | {} | {} | {} | {} | {} |",
        r.library,
        escape(&r.transform),
        r.figure.as_deref().unwrap_or("–"),
        fmt_side(r.baseline, r.baseline_interval),
        fmt_side(r.current, r.current_interval),
        r.delta_pct
            .map_or_else(|| "n/a".into(), |d| format!("{d:+.1}%")),
        fmt_ratio(r.ratio, r.ratio_interval),
        regression_verdict(r),
    )
}

/// The verdict cell: a regression in bold, with the note where it explains the word.
fn regression_verdict(r: &Comparison) -> String {
    let note = r.note.as_deref();
    match r.verdict {
        Verdict::Regression if r.unit == COUNT_UNIT => {
            format!("**regression** ({})", note.unwrap_or(""))
        }
        Verdict::Regression => "**regression**".to_string(),
        Verdict::NotComparable => format!("not comparable: {}", note.unwrap_or("")),
        v => match note {
            Some(note) => format!("{} ({note})", v.as_str()),
            None => v.as_str().to_string(),
        },
    }
}

/// `0.912 [0.890, 0.935]`; an instruction-count ratio (no interval) with four decimals.
fn fmt_ratio(r: Option<f64>, ci: Option<(f64, f64)>) -> String {
    match (r, ci) {
        (Some(r), Some((lo, hi))) => format!("{r:.3} [{lo:.3}, {hi:.3}]"),
        // Instruction counts: no interval, the threshold in the verdict's note decides.
        (Some(r), None) => format!("{r:.4}"),
        _ => "–".into(),
    }
}

/// One side's figure with its rerun interval, both with the figure's digits.
fn fmt_side(m: Option<f64>, ci: Option<(f64, f64)>) -> String {
    match (m, ci) {
        (Some(m), Some((lo, hi))) => {
            let d = decimals(m);
            format!("{} [{lo:.d$}, {hi:.d$}]", fmt_median_std(m, None))
        }
        (Some(m), None) => format!("{m:.3}"),
        _ => "–".into(),
    }
}

fn escape(s: &str) -> String {
    s.replace('|', "\\|")
}
