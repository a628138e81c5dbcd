//! The measurements the page's script reads, embedded as one JSON block: per group its
//! libraries, visible rows and, per row and library, status, throughput, frames/s, share of the
//! decode ceiling and the paired ratios; and, in an A/B run, the group's A/B rows exactly as
//! `ab::compare` made them (ratio, confidence interval, verdict and their texts, and the line of
//! transforms measured by neither variant). With it the page switches reference, redraws the
//! speedup column and footer, and draws the bar, pipeline, video and A/B views without a server.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::judge::ab::{self, AbReport};
use crate::model::Dataset;
use crate::table::{Cell, Table};

#[derive(Serialize)]
struct Page<'a> {
    /// The reference the page was written with, and why.
    reference: &'a str,
    why: &'static str,
    /// Every library present (the colour order of the views).
    libraries: Vec<&'a str>,
    groups: Vec<GroupData<'a>>,
}

#[derive(Serialize)]
struct GroupData<'a> {
    id: String,
    title: &'a str,
    unit: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    frames_unit: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ceiling: Option<&'a str>,
    slow_label: String,
    /// Libraries of the group with their versions, in the written table's column order.
    libraries: Vec<[&'a str; 2]>,
    rows: Vec<RowData<'a>>,
    /// A/B verdicts of the group's variants, when it has any.
    #[serde(skip_serializing_if = "Option::is_none")]
    ab: Option<AbData>,
}

/// The A/B rows of one group, as `ab::compare` made them.
#[derive(Serialize)]
struct AbData {
    min_effect: f64,
    /// The minimum-effect band the verdicts read (`verdict::band`), [low, high]: the page draws
    /// it as given, never from a formula of its own.
    band: [f64; 2],
    /// `ab::summary` of the group's rows.
    summary: String,
    rows: Vec<AbRowData>,
    /// The one line of transforms measured by neither variant, when any.
    #[serde(skip_serializing_if = "Option::is_none")]
    not_measured: Option<String>,
}

#[derive(Serialize)]
struct AbRowData {
    transform: String,
    library: String,
    baseline: String,
    current: String,
    ratio: Option<f64>,
    low: Option<f64>,
    high: Option<f64>,
    rounds: u64,
    /// `ab::word`: slower | faster | no change | undecided | not comparable.
    verdict: &'static str,
    ratio_text: String,
    interval_text: String,
    verdict_text: String,
}

#[derive(Serialize)]
struct RowData<'a> {
    transform: &'a str,
    /// By library name.
    cells: BTreeMap<&'a str, CellData>,
    /// `"a>b"` → [ratio, low, high]: a ÷ b over the interleaved rounds both were timed in, with
    /// its rerun interval (the interval over rounds for a source without one).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    paired: BTreeMap<String, [f64; 3]>,
}

#[derive(Serialize)]
struct CellData {
    /// ok | slow | unsupported | error | missing.
    s: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    v: Option<f64>,
    /// Video: frames/s.
    #[serde(skip_serializing_if = "Option::is_none")]
    f: Option<f64>,
    /// Pipeline: share of the library's own decode ceiling.
    #[serde(skip_serializing_if = "Option::is_none")]
    share: Option<f64>,
}

/// The JSON text for `<script type="application/json">`: `<`, `>` and `&` (only ever inside JSON
/// strings) as `\u` escapes, so no name can end the block or open markup.
pub fn json(data: &Dataset, tables: &[Table], why: &'static str, ab: Option<&AbReport>) -> String {
    let page = Page {
        reference: tables.first().map_or("", |t| t.reference.as_str()),
        why,
        libraries: data.libraries(),
        groups: tables.iter().map(|t| group(data, t, ab)).collect(),
    };
    serde_json::to_string(&page)
        .unwrap_or_else(|_| "{}".into())
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

fn group<'a>(data: &'a Dataset, t: &'a Table, ab: Option<&AbReport>) -> GroupData<'a> {
    let groups = data.groups();
    let g = groups.iter().find(|g| g.key == t.key);
    let libs: Vec<&str> = t.columns.iter().map(|c| c.library.as_str()).collect();
    let rows = t
        .rows
        .iter()
        .map(|r| {
            let cells = r
                .cells
                .iter()
                .zip(&libs)
                .enumerate()
                .map(|(i, (c, lib))| {
                    let frames = r.frames_per_sec.get(i).copied().flatten();
                    let share = r.of_ceiling.get(i).copied().flatten();
                    (*lib, cell(c, frames, share))
                })
                .collect();
            let mut paired = BTreeMap::new();
            for a in &libs {
                for b in libs.iter().filter(|b| *b != a) {
                    if let Some(p) = g.and_then(|g| g.paired(a, b, &r.transform)) {
                        let (lo, hi) = p.rerun.unwrap_or((p.ci_low, p.ci_high));
                        paired.insert(format!("{a}>{b}"), [p.ratio, lo, hi]);
                    }
                }
            }
            RowData {
                transform: &r.transform,
                cells,
                paired,
            }
        })
        .collect();
    GroupData {
        id: super::markup::anchor(t),
        title: &t.title,
        unit: t.unit,
        frames_unit: t.frames_unit,
        ceiling: t.ceiling.as_deref(),
        slow_label: t.slow_label(),
        libraries: t
            .columns
            .iter()
            .map(|c| [c.library.as_str(), c.version.as_str()])
            .collect(),
        rows,
        ab: ab.map(|r| r.of_group(&t.key)).and_then(ab_data),
    }
}

/// The group's A/B rows; `None` when it has none.
fn ab_data(report: AbReport) -> Option<AbData> {
    if report.rows.is_empty() {
        return None;
    }
    let summary = ab::summary(&report);
    let not_measured = report.not_measured_line();
    let rows = report
        .rows
        .iter()
        .map(|r| AbRowData {
            transform: r.transform.clone(),
            library: r.library.clone(),
            baseline: r.baseline.clone(),
            current: r.current.clone(),
            ratio: r.ratio,
            low: r.interval.map(|i| i.0),
            high: r.interval.map(|i| i.1),
            rounds: r.rounds,
            verdict: ab::word(r.verdict),
            ratio_text: r.ratio_text(),
            interval_text: r.interval_text(),
            verdict_text: r.verdict_text(),
        })
        .collect();
    let (low, high) = crate::judge::verdict::band(report.min_effect);
    Some(AbData {
        min_effect: report.min_effect,
        band: [low, high],
        summary,
        rows,
        not_measured,
    })
}

fn cell(c: &Cell, frames: Option<f64>, share: Option<f64>) -> CellData {
    let (s, v) = match c {
        Cell::Ok { figure, .. } => ("ok", Some(*figure)),
        Cell::Slow { preflight } => ("slow", *preflight),
        Cell::Unsupported { .. } => ("unsupported", None),
        Cell::Error { .. } => ("error", None),
        Cell::Missing => ("missing", None),
    };
    CellData {
        s,
        v,
        f: frames,
        share,
    }
}
