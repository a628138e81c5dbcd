//! CSV export in long form: one line per (group, transform, library) with status, the headline
//! figure (and which one it is), std,
//! interval, the row's speedup (paired or not, with its interval) and, where the library's output
//! was not contiguous, the share forcing it took, so spreadsheets and data frames can pivot it freely.

use anyhow::Context;

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
    let bytes = w.into_inner().context("finishing CSV")?;
    String::from_utf8(bytes).context("CSV is not UTF-8")
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
