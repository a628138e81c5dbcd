//! The "Same work? (equivalence check)" table of a group: shown when the group's result files
//! carry `metadata.equivalence` (a run with `execution.check_equivalence`). Transforms as rows,
//! libraries as columns; each cell is the library's verdict with its max |Δ| and PSNR against
//! the reference; mismatches are highlighted and known differences explained below the table.

use std::collections::BTreeMap;
use std::fmt::Write;

use augbench_catalog::equivalence::{TransformEquivalence, Verdict};

use super::markup::esc;
use crate::model::Dataset;
use crate::table::Table;

/// Per library (in the group's column order), its summary's transforms.
type Lines<'a> = Vec<(&'a str, &'a BTreeMap<String, TransformEquivalence>)>;

/// Writes the table when any of the group's sources carries the check; nothing otherwise.
pub fn table(out: &mut String, data: &Dataset, t: &Table) {
    let lines = lines(data, t);
    let Some(first) = data
        .sources
        .iter()
        .filter(|s| s.key == t.key)
        .find_map(|s| s.equivalence.as_ref())
    else {
        return;
    };
    let sizes: Vec<String> = first
        .inputs
        .iter()
        .map(|[w, h]| format!("{w}×{h}"))
        .collect();
    let _ = writeln!(
        out,
        "<h3>Same work? (equivalence check)</h3><p class=\"legend\">Each transform applied once in every \
         library to the same {} lossless RGB check images ({}), on the CPU, before and outside the timed runs. \
         Deterministic transforms are compared with the reference library's output (max |Δ| · PSNR, worst over \
         the images) within their tolerance class (specs/equivalence.yaml); random ones by output shape and two \
         seeds. The whole check: {} in the run's output folder.</p>",
        first.inputs.len(),
        esc(&sizes.join(", ")),
        esc(&first.file)
    );
    out.push_str(
        "<table class=\"equivalence\"><thead><tr><th>Transform</th><th>Class</th><th>Verdict</th>",
    );
    for (library, _) in &lines {
        let _ = write!(out, "<th>{}</th>", esc(library));
    }
    out.push_str("</tr></thead><tbody>");
    let mut known = Vec::new();
    for name in transforms(&lines, t) {
        row(out, &lines, &name, &mut known);
    }
    out.push_str("</tbody></table>\n");
    known_notes(out, &known);
}

/// The libraries whose result file in this group carries the check, in column order.
fn lines<'a>(data: &'a Dataset, t: &Table) -> Lines<'a> {
    let mut found: Lines<'a> = data
        .sources
        .iter()
        .filter(|s| s.key == t.key)
        .filter_map(|s| Some((s.library.as_str(), &s.equivalence.as_ref()?.transforms)))
        .collect();
    let rank = |lib: &str| t.columns.iter().position(|c| c.library == lib);
    found.sort_by_key(|(lib, _)| (rank(lib), lib.to_string()));
    found.dedup_by_key(|(lib, _)| *lib);
    found
}

/// The checked transforms: in the group table's row order, then any others by name.
fn transforms(lines: &Lines<'_>, t: &Table) -> Vec<String> {
    let mut names: Vec<String> = t
        .rows
        .iter()
        .map(|r| r.transform.clone())
        .filter(|n| lines.iter().any(|(_, m)| m.contains_key(n)))
        .collect();
    for (_, m) in lines {
        for n in m.keys() {
            if !names.contains(n) {
                names.push(n.clone());
            }
        }
    }
    names
}

fn row(out: &mut String, lines: &Lines<'_>, name: &str, known: &mut Vec<(String, String, String)>) {
    let Some(any) = lines.iter().find_map(|(_, m)| m.get(name)) else {
        return;
    };
    let reference = any
        .reference
        .as_deref()
        .map(|r| format!(" (reference {r})"))
        .unwrap_or_default();
    let _ = write!(
        out,
        "<tr><td>{}</td><td>{}</td><td class=\"{}\">{}{}</td>",
        esc(name),
        esc(&any.class),
        class(any.verdict),
        any.verdict.word(),
        esc(&reference)
    );
    for (library, m) in lines {
        match m.get(name) {
            Some(e) => {
                if e.library_verdict == Verdict::KnownDifference {
                    known.push((name.to_string(), library.to_string(), e.note.clone()));
                }
                cell(out, e, known.len());
            }
            None => out
                .push_str("<td class=\"unsupported\" title=\"not in this library's check\">–</td>"),
        }
    }
    out.push_str("</tr>\n");
}

/// One library's cell; `note_no`: the number of its known-difference note, when it has one.
fn cell(out: &mut String, e: &TransformEquivalence, note_no: usize) {
    let mut text = if e.note == "reference" {
        "reference".to_string()
    } else {
        e.library_verdict.word().to_string()
    };
    if let Some(d) = e.diff {
        let psnr = d.psnr.map_or("inf".to_string(), |p| format!("{p:.1}"));
        let _ = write!(text, " · max {} · {psnr} dB", d.max_abs);
    }
    if e.library_verdict == Verdict::KnownDifference {
        let _ = write!(text, " [{note_no}]");
    }
    let _ = write!(
        out,
        "<td class=\"{}\" title=\"{}\">{}</td>",
        class(e.library_verdict),
        esc(&e.note),
        esc(&text)
    );
}

fn class(v: Verdict) -> &'static str {
    match v {
        Verdict::Mismatch => "eq-mismatch",
        Verdict::KnownDifference | Verdict::SameForSeeds => "eq-known",
        Verdict::Error => "error",
        Verdict::Unsupported | Verdict::Alone => "unsupported",
        Verdict::Ok => "eq-ok",
    }
}

/// The known differences under the table, numbered as their cells are.
fn known_notes(out: &mut String, known: &[(String, String, String)]) {
    if known.is_empty() {
        return;
    }
    out.push_str("<p class=\"legend\">Known differences (explained in specs/equivalence.yaml; reported, not counted as mismatches):</p><ol class=\"known\">");
    for (transform, library, why) in known {
        let _ = write!(
            out,
            "<li><b>{}</b>, {}: {}</li>",
            esc(transform),
            esc(library),
            esc(why)
        );
    }
    out.push_str("</ol>\n");
}
