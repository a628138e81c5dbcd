//! The report page itself: the head with inline CSS and scripts, the header and legend, then per
//! group its views (table, charts, heatmap, speedups, A/B verdicts), each section drawn by the
//! sibling that owns it, and what could not run.

use std::fmt::Write;

use augbench_core::policy;

use crate::export::compare::Effects;
use crate::export::{
    FORCED_MARK, fmt_footer_speedup, fmt_median_std, fmt_row_speedup, forced_note, paired_note,
};
use crate::judge::ab;
use crate::model::Dataset;
use crate::plot;
use crate::table::{Cell, FIRST_BATCH_TITLE, Table, TableOptions, build_tables};

use super::markup::{anchor, esc};
use super::{context, data, equivalence, machine};

const CSS: &str = include_str!("page.css");
/// Reference switch and views (runs first: sorting by speedup reads the redrawn column).
const VIEWS_JS: &str = include_str!("views.js");
const SORT_JS: &str = include_str!("sort.js");

/// The whole page, with A/B verdicts at the policy's minimum effect.
pub fn render(data: &Dataset, opts: &TableOptions) -> anyhow::Result<String> {
    render_with(data, opts, policy::REGRESSION_MIN_EFFECT)
}

/// The whole page; A/B verdicts (`ab::compare`, as `compare` prints them) at `min_effect`, and
/// of instruction counts at policy's count minimum effect.
pub fn render_with(data: &Dataset, opts: &TableOptions, min_effect: f64) -> anyhow::Result<String> {
    let effects = Effects {
        time: min_effect,
        count: policy::COUNT_MIN_EFFECT,
    };
    render_effects(data, opts, effects)
}

/// The whole page; A/B verdicts of timed rows at `effects.time`, of counted rows at
/// `effects.count` (`ab::compare_with`).
pub fn render_effects(
    data: &Dataset,
    opts: &TableOptions,
    effects: Effects,
) -> anyhow::Result<String> {
    let tables = build_tables(data, opts)?;
    let ab = ab::compare_with(data, effects.time, effects.count)?;
    let why = tables.first().map_or("", |t| t.reference_why.describe());
    let mut body = String::new();
    header(&mut body, data, &tables, why);
    body.push_str("<div class=\"context\">");
    machine::section(&mut body, data);
    context::versions(&mut body, data);
    body.push_str("</div>\n");
    legend(&mut body, &tables);
    warnings(&mut body, data);
    for t in &tables {
        let has_ab = ab
            .as_ref()
            .is_some_and(|r| r.rows.iter().any(|row| row.key == t.key));
        group(&mut body, data, t, has_ab)?;
    }
    let json = data::json(data, &tables, why, ab.as_ref());
    Ok(format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>augbench report</title>\n<style>\n{CSS}</style>\n</head>\n<body>\n{body}\
         <script type=\"application/json\" id=\"augbench-data\">{json}</script>\n\
         <script>\n{VIEWS_JS}</script>\n<script>\n{SORT_JS}</script>\n</body>\n</html>\n"
    ))
}

fn header(out: &mut String, data: &Dataset, tables: &[Table], why: &str) {
    let reference = tables.first().map_or("", |t| t.reference.as_str());
    let _ = write!(
        out,
        "<header><h1>augbench report</h1><p class=\"sub\">{} result files · {} groups · {} libraries</p>\
         <div class=\"refbar\"><label for=\"ref-select\">Reference library</label> <select id=\"ref-select\">",
        data.sources.len(),
        tables.len(),
        data.libraries().len()
    );
    for lib in data.libraries() {
        let selected = if lib == reference { " selected" } else { "" };
        let _ = write!(
            out,
            "<option value=\"{0}\"{selected}>{0}</option>",
            esc(lib)
        );
    }
    let _ = write!(
        out,
        "</select> <span id=\"ref-why\" class=\"muted\">{}</span><p class=\"muted small\">Speedups read \
         <i>reference ÷ other</i>: above 1× the reference is faster. Switching recomputes the speedup column, \
         the footer and the bar views in this page; the static charts stay drawn for <b>{}</b>.</p></div>\
         </header>\n<nav><ul>",
        esc(why),
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

fn group(out: &mut String, data: &Dataset, t: &Table, has_ab: bool) -> anyhow::Result<()> {
    let id = anchor(t);
    let _ = writeln!(
        out,
        "<section class=\"group\" id=\"{id}\"><h2>{}</h2><p class=\"meta\">{} transforms · {} libraries · {}</p>",
        esc(&t.title),
        t.rows.len(),
        t.columns.len(),
        t.unit
    );
    if let Some(note) = t.unmeasured_note() {
        let _ = writeln!(out, "<p class=\"unmeasured\">{}</p>", esc(&note));
    }
    let charts = plot::charts(t);
    tabs(out, t, &charts, has_ab);
    out.push_str("<div class=\"panel\" data-view=\"table\">");
    results_table(out, t);
    footer_table(out, t);
    out.push_str("</div>\n");
    if t.frames_unit.is_none() {
        let _ = writeln!(
            out,
            "<div class=\"panel\" data-view=\"bars\"><div class=\"bars\" data-group=\"{id}\"></div></div>"
        );
    }
    if t.ceiling.is_some() {
        let _ = writeln!(
            out,
            "<div class=\"panel\" data-view=\"pipeline\"><div class=\"ceiling-view\" data-group=\"{id}\"></div></div>"
        );
    }
    if t.frames_unit.is_some() {
        let _ = writeln!(
            out,
            "<div class=\"panel\" data-view=\"video\"><div class=\"video-view\" data-group=\"{id}\"></div></div>"
        );
    }
    chart_panels(out, t, &charts)?;
    if has_ab {
        let _ = writeln!(
            out,
            "<div class=\"panel\" data-view=\"ab\"><div class=\"ab-view\" data-group=\"{id}\"></div></div>"
        );
    }
    equivalence::table(out, data, t);
    context::params(out, data, t);
    could_not_run(out, data, t);
    out.push_str("</section>\n");
    Ok(())
}

/// The view names of a group, in tab order.
fn views(t: &Table, charts: &[plot::Chart], has_ab: bool) -> Vec<(&'static str, &'static str)> {
    let mut v = vec![("table", "Table")];
    if t.frames_unit.is_some() {
        v.push(("video", "Clips/s and frames/s"));
    } else {
        v.push(("bars", "Per transform"));
    }
    if t.ceiling.is_some() {
        v.push(("pipeline", "Share of decode ceiling"));
    }
    if charts.iter().any(|c| matches!(c, plot::Chart::Heatmap(_))) {
        v.push(("heatmap", "Heatmap"));
    }
    if charts.iter().any(|c| !matches!(c, plot::Chart::Heatmap(_))) {
        v.push(("charts", "Speedup charts"));
    }
    if has_ab {
        v.push(("ab", "A/B verdicts"));
    }
    v
}

fn tabs(out: &mut String, t: &Table, charts: &[plot::Chart], has_ab: bool) {
    out.push_str("<div class=\"tabs\" role=\"tablist\">");
    for (key, label) in views(t, charts, has_ab) {
        let _ = write!(
            out,
            "<button type=\"button\" role=\"tab\" data-view=\"{key}\">{label}</button>"
        );
    }
    out.push_str("</div>\n");
}

/// The heatmap panel and the speedup charts panel (drawn for the page's reference).
fn chart_panels(out: &mut String, t: &Table, charts: &[plot::Chart]) -> anyhow::Result<()> {
    let (heat, rest): (Vec<&plot::Chart>, Vec<&plot::Chart>) = charts
        .iter()
        .partition(|c| matches!(c, plot::Chart::Heatmap(_)));
    for (view, list) in [("heatmap", heat), ("charts", rest)] {
        if list.is_empty() {
            continue;
        }
        let _ = write!(out, "<div class=\"panel\" data-view=\"{view}\">");
        if view == "charts" {
            let _ = write!(
                out,
                "<p class=\"chart-ref muted small\" data-drawn-for=\"{0}\">Drawn for reference <b>{0}</b>.</p>",
                esc(&t.reference)
            );
        }
        for chart in list {
            let _ = writeln!(
                out,
                "<figure>{}<figcaption>{}</figcaption></figure>",
                chart.svg()?,
                esc(chart.title())
            );
        }
        out.push_str("</div>\n");
    }
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
        let lib = esc(&c.library);
        let _ = write!(
            out,
            "<th data-key=\"{lib}\" data-lib=\"{lib}\" data-type=\"num\">{lib}<span class=\"ver\">{}</span> \
             <span class=\"unit\">[{}]</span></th>",
            esc(&version),
            t.unit
        );
        if let Some(frames) = t.frames_unit {
            let _ = write!(
                out,
                "<th data-key=\"{lib} {frames}\" data-lib=\"{lib}\" data-type=\"num\"><span class=\"unit\">[{frames}]</span></th>"
            );
        }
    }
    let _ = writeln!(
        out,
        "<th data-key=\"speedup\" data-type=\"num\" class=\"speedup\">Speedup (<span class=\"ref-name\">{}</span> / fastest other)</th></tr></thead><tbody>",
        esc(&t.reference)
    );
    for r in &t.rows {
        row_head(out, t, &r.transform);
        for (i, (cell, col)) in r.cells.iter().zip(&t.columns).enumerate() {
            let fastest = r.fastest.as_deref() == Some(col.library.as_str());
            let share = r.of_ceiling.get(i).copied().flatten();
            let lib = esc(&col.library);
            out.push_str(&cell_html(t, cell, fastest, share, &lib));
            if t.frames_unit.is_some() {
                let frames = r.frames_per_sec.get(i).copied().flatten();
                let (value, text) =
                    frames.map_or_else(Default::default, |f| (f.to_string(), format!("{f:.0}")));
                let _ = write!(
                    out,
                    "<td class=\"frames\" data-lib=\"{lib}\" data-value=\"{value}\">{text}</td>"
                );
            }
        }
        let value = r.speedup.map(|s| s.to_string()).unwrap_or_default();
        let _ = writeln!(
            out,
            "<td class=\"speedup\" data-value=\"{value}\">{}</td></tr>",
            fmt_row_speedup(r)
        );
    }
    out.push_str("</tbody></table>\n");
    first_batch_html(out, t);
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

/// Pipeline groups: each cell's time to first batch, a small table of its own under the main
/// one (nothing when no row recorded one).
fn first_batch_html(out: &mut String, t: &Table) {
    let rows: Vec<_> = t
        .rows
        .iter()
        .filter(|r| !r.first_batch_s.is_empty())
        .collect();
    if rows.is_empty() {
        return;
    }
    let _ = write!(
        out,
        "<p class=\"legend\">{}</p><table class=\"first-batch\"><thead><tr><th>Transform</th>",
        esc(FIRST_BATCH_TITLE)
    );
    for c in &t.columns {
        let _ = write!(out, "<th>{}</th>", esc(&c.library));
    }
    out.push_str("</tr></thead><tbody>");
    for r in rows {
        let _ = write!(out, "<tr><td>{}</td>", esc(&r.transform));
        for s in &r.first_batch_s {
            let text = s.map_or_else(|| "–".to_string(), |s| format!("{s:.2}"));
            let _ = write!(out, "<td>{text}</td>");
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table>\n");
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
fn cell_html(t: &Table, cell: &Cell, fastest: bool, share: Option<f64>, lib: &str) -> String {
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
        "<td class=\"{class}\" data-lib=\"{lib}\" data-value=\"{value}\" title=\"{}\">{}</td>",
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
        "<table class=\"footer\" data-group=\"{}\"><thead><tr><th>Library</th><th>Rows measured</th><th>Median \
         speedup of <span class=\"ref-name\">{}</span> (rows both measured)</th></tr></thead><tbody>",
        anchor(t),
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
    let _ = write!(
        out,
        "<details class=\"missing\"><summary>Transforms not measured, per library ({})</summary><ul class=\"missing\">",
        failed.len()
    );
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
    out.push_str("</ul></details>\n");
}
