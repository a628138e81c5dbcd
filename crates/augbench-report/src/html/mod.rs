//! The self-contained HTML report: one file with inline CSS, a small inline sorting script and
//! inline SVG plots, so it loads nothing from the network. Sections: legend, system, library
//! versions, then per group the sortable table, footer, run parameters, plots and what failed.

mod context;
mod equivalence;

use std::fmt::Write;

use crate::export::{
    FORCED_MARK, fmt_footer_speedup, fmt_median_std, fmt_row_speedup, forced_note, paired_note,
};
use crate::model::Dataset;
use crate::plot;
use crate::table::{Cell, Table, TableOptions, build_tables};

const CSS: &str = include_str!("page.css");
const JS: &str = include_str!("sort.js");

/// The whole page.
pub fn render(data: &Dataset, opts: &TableOptions) -> anyhow::Result<String> {
    let tables = build_tables(data, opts)?;
    let mut body = String::new();
    header(&mut body, data, &tables);
    legend(&mut body, &tables);
    context::system(&mut body, data);
    context::versions(&mut body, data);
    warnings(&mut body, data);
    for t in &tables {
        group(&mut body, data, t)?;
    }
    Ok(format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>augbench report</title>\n<style>\n{CSS}</style>\n</head>\n<body>\n{body}<script>\n{JS}</script>\n\
         </body>\n</html>\n"
    ))
}

/// HTML-escapes text.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

fn anchor(t: &Table) -> String {
    format!("g-{}", t.key.file_stem())
}

fn header(out: &mut String, data: &Dataset, tables: &[Table]) {
    let reference = tables.first().map_or("", |t| t.reference.as_str());
    let _ = write!(
        out,
        "<header><h1>augbench report</h1><p class=\"sub\">{} result sources · {} groups · reference library: \
         <b>{}</b></p></header>\n<nav><ul>",
        data.sources.len(),
        tables.len(),
        esc(reference)
    );
    for t in tables {
        let _ = write!(
            out,
            "<li><a href=\"#{}\">{}</a></li>",
            anchor(t),
            esc(&t.title)
        );
    }
    out.push_str("</ul></nav>\n");
}

fn legend(out: &mut String, tables: &[Table]) {
    let slow: Vec<String> = tables
        .iter()
        .map(Table::slow_label)
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let _ = writeln!(
        out,
        "<section id=\"legend\"><h2>Legend</h2><p class=\"legend\"><span class=\"fastest\">bold</span> fastest \
         library in the row · <span>figure ± std</span> over the timed runs (figure: {}) · <span class=\"slow\">{}</span> slow: \
         at or below the run's slow threshold, stopped after preflight · <span>–</span> unsupported by the \
         library · <span class=\"error\">error</span> failed (reasons below each table){} Speedups compare only \
         transforms both libraries measured. Click a column header to sort.</p></section>",
        esc(&figures(tables)),
        esc(&slow.join(" / ")),
        forced_legend(tables)
    );
}

/// The figures the tables show (`Table::figure`), joined.
fn figures(tables: &[Table]) -> String {
    let set: std::collections::BTreeSet<&str> = tables.iter().map(|t| t.figure.as_str()).collect();
    set.into_iter().collect::<Vec<_>>().join("; ")
}

/// The legend's line on `FORCED_MARK`, when some cell carries it.
fn forced_legend(tables: &[Table]) -> String {
    if tables.iter().all(|t| t.forced_cells().is_empty()) {
        return ".".into();
    }
    format!(
        " · <span class=\"forced\">{FORCED_MARK}</span> the library's output was a strided view or lazy, so the \
         row also times the copy that makes it contiguous (hover for the share of the time it took; listed \
         below each table)."
    )
}

fn warnings(out: &mut String, data: &Dataset) {
    if data.warnings.is_empty() {
        return;
    }
    out.push_str("<section id=\"notes\"><h2>Notes on the input</h2><ul class=\"warn\">");
    for w in &data.warnings {
        let _ = write!(out, "<li>{}</li>", esc(w));
    }
    out.push_str("</ul></section>\n");
}

fn group(out: &mut String, data: &Dataset, t: &Table) -> anyhow::Result<()> {
    let _ = writeln!(
        out,
        "<section class=\"group\" id=\"{}\"><h2>{}</h2>",
        anchor(t),
        esc(&t.title)
    );
    results_table(out, t);
    footer_table(out, t);
    equivalence::table(out, data, t);
    context::params(out, data, t);
    for chart in plot::charts(t) {
        let _ = writeln!(
            out,
            "<figure>{}<figcaption>{}</figcaption></figure>",
            chart.svg()?,
            esc(chart.title())
        );
    }
    could_not_run(out, data, t);
    out.push_str("</section>\n");
    Ok(())
}

fn results_table(out: &mut String, t: &Table) {
    out.push_str("<table class=\"results sortable\"><thead><tr><th data-key=\"transform\" data-type=\"text\">Transform</th>");
    for c in &t.columns {
        let version = if c.version.is_empty() {
            String::new()
        } else {
            format!(" {}", c.version)
        };
        let _ = write!(
            out,
            "<th data-key=\"{}\" data-type=\"num\">{}{} [{}]</th>",
            esc(&c.library),
            esc(&c.library),
            esc(&version),
            t.unit
        );
        if let Some(frames) = t.frames_unit {
            let _ = write!(
                out,
                "<th data-key=\"{} {frames}\" data-type=\"num\">[{frames}]</th>",
                esc(&c.library)
            );
        }
    }
    let _ = writeln!(
        out,
        "<th data-key=\"speedup\" data-type=\"num\">Speedup ({} / fastest other)</th></tr></thead><tbody>",
        esc(&t.reference)
    );
    for r in &t.rows {
        row_head(out, t, &r.transform);
        for (i, (cell, col)) in r.cells.iter().zip(&t.columns).enumerate() {
            let fastest = r.fastest.as_deref() == Some(col.library.as_str());
            let share = r.of_ceiling.get(i).copied().flatten();
            out.push_str(&cell_html(t, cell, fastest, share));
            if t.frames_unit.is_some() {
                let frames = r.frames_per_sec.get(i).copied().flatten();
                let (value, text) =
                    frames.map_or_else(Default::default, |f| (f.to_string(), format!("{f:.0}")));
                let _ = write!(
                    out,
                    "<td class=\"frames\" data-value=\"{value}\">{text}</td>"
                );
            }
        }
        let value = r.speedup.map(|s| s.to_string()).unwrap_or_default();
        let _ = writeln!(
            out,
            "<td data-value=\"{value}\">{}</td></tr>",
            fmt_row_speedup(r)
        );
    }
    out.push_str("</tbody></table>\n");
    if let Some(ceiling) = &t.ceiling {
        let note = format!(
            "(x%): share of the library's own decode ceiling ({ceiling}: decode → crop → normalize, no transform; \
             its row is outlined and tagged ceiling)"
        );
        let _ = writeln!(out, "<p class=\"legend\">{}</p>", esc(&note));
    }
    if let Some(frames) = t.frames_unit {
        let note = format!(
            "[{frames}]: the cell to its left × frames per clip (from each file's clip length)"
        );
        let _ = writeln!(out, "<p class=\"legend\">{}</p>", esc(&note));
    }
    if let Some(note) = paired_note(t) {
        let _ = writeln!(out, "<p class=\"legend\">{}</p>", esc(&note));
    }
    if let Some(note) = forced_note(t) {
        let _ = writeln!(out, "<p class=\"legend forced\">{}</p>", esc(&note));
    }
}

/// A row's opening and its transform cell; a pipeline group's ceiling row gets the `ceiling`
/// class (outlined by page.css) and a `ceiling` tag after its name.
fn row_head(out: &mut String, t: &Table, transform: &str) {
    let name = esc(transform);
    if t.ceiling.as_deref() == Some(transform) {
        let _ = write!(
            out,
            "<tr class=\"ceiling\"><td data-value=\"{name}\">{name} <span class=\"tag\">ceiling</span></td>"
        );
    } else {
        let _ = write!(out, "<tr><td data-value=\"{name}\">{name}</td>");
    }
}

/// One cell; `share`: the throughput's share of the library's decode ceiling (pipeline groups).
fn cell_html(t: &Table, cell: &Cell, fastest: bool, share: Option<f64>) -> String {
    let (class, value, text, title) = match cell {
        Cell::Ok { figure, std, .. } => {
            let class = if fastest { "ok fastest" } else { "ok" };
            let mut text = fmt_median_std(*figure, *std);
            if let Some(s) = share {
                let _ = write!(text, " ({:.0}%)", s * 100.0);
            }
            let title = forced_title(cell);
            if !title.is_empty() {
                text.push_str(FORCED_MARK);
            }
            (class, figure.to_string(), text, title)
        }
        Cell::Slow { preflight } => {
            let title = preflight
                .map(|p| format!("preflight {p:.2} {}", t.unit))
                .unwrap_or_default();
            ("slow", String::new(), t.slow_label(), title)
        }
        Cell::Unsupported { reason } => (
            "unsupported",
            String::new(),
            "–".into(),
            reason.clone().unwrap_or_default(),
        ),
        Cell::Missing => ("unsupported", String::new(), "–".into(), "no result".into()),
        Cell::Error { reason } => (
            "error",
            String::new(),
            "error".into(),
            reason.clone().unwrap_or_default(),
        ),
    };
    format!(
        "<td class=\"{class}\" data-value=\"{value}\" title=\"{}\">{}</td>",
        esc(&title),
        esc(&text)
    )
}

/// A marked cell's tooltip: what forcing its output cost (empty for a contiguous output).
fn forced_title(cell: &Cell) -> String {
    if !cell.forced() {
        return String::new();
    }
    match cell.form().and_then(|f| f.force_share) {
        Some(s) => format!(
            "output not contiguous (a view or lazy): forcing it took {:.0}% of apply + force in the untimed check",
            s * 100.0
        ),
        None => "output not contiguous (a view or lazy): the row also times forcing it".into(),
    }
}

fn footer_table(out: &mut String, t: &Table) {
    let _ = write!(
        out,
        "<table class=\"footer\"><thead><tr><th>Library</th><th>Rows measured</th><th>Median speedup of {} \
         (rows both measured)</th></tr></thead><tbody>",
        esc(&t.reference)
    );
    for (i, f) in t.footer.iter().enumerate() {
        let speedup = match (i, f.common) {
            (0, _) if t.reference_present => "reference".to_string(),
            (_, 0) => "n/a".to_string(),
            _ => fmt_footer_speedup(f),
        };
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{} / {}</td><td>{speedup}</td></tr>",
            esc(&f.library),
            f.measured,
            f.total
        );
    }
    out.push_str("</tbody></table>\n");
}

fn could_not_run(out: &mut String, data: &Dataset, t: &Table) {
    let mut failed: Vec<_> = data
        .rows
        .iter()
        .filter(|r| r.key() == t.key && r.status != augbench_core::results::Status::Ok)
        .collect();
    if failed.is_empty() {
        return;
    }
    failed.sort_by(|a, b| (&a.library, &a.transform).cmp(&(&b.library, &b.transform)));
    out.push_str("<h3>Transforms not measured, per library</h3><ul class=\"missing\">");
    for (i, r) in failed.iter().enumerate() {
        if i == 0 || failed[i - 1].library != r.library {
            let close = if i == 0 { "" } else { "</ul></li>" };
            let _ = write!(out, "{close}<li><b>{}</b><ul>", esc(&r.library));
        }
        let reason = r
            .reason
            .as_deref()
            .map(|s| format!(": {}", esc(s)))
            .unwrap_or_default();
        let _ = write!(out, "<li>{} ({}){reason}</li>", esc(&r.transform), r.status);
    }
    out.push_str("</ul></li>");
    out.push_str("</ul>\n");
}
