//! Markdown tables: `figure ± std` cells (the legend names the figure), the fastest library of a row in bold, slow cells as
//! `≤20 img/s`, unsupported as `–`, failures as `error`, then a legend and a per-library footer.
//! Video tables give each library a second column in frames/s.

use std::fmt::Write;

use crate::export::{
    FORCED_MARK, fmt_footer_speedup, fmt_median_std, fmt_row_speedup, forced_note, paired_note,
};
use crate::table::{Cell, Table, TableRow};

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
    let _ = writeln!(out, "\n{}\n", legend(t));
    out.push_str(&footer(t));
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
    if t.unit == crate::model::COUNT_UNIT {
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

fn escape(s: &str) -> String {
    s.replace('|', "\\|")
}
