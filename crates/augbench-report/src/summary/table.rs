//! The end-of-run terminal summary: transforms × libraries, the headline throughput per cell,
//! with `slow`, `–` (unsupported) and `error` markers. The reference library (the rule of
//! `crate::reference`) comes first, and rows no library supports collapse into one line.

use augbench_core::results::{ResultFile, Status, TransformResult};

use crate::reference::{self, Choice};

/// The reference of a run's result files: `configured` (the run config's
/// `output.reference_library`) when present, else the default rule.
pub fn reference_of(files: &[&ResultFile], configured: Option<&str>) -> Choice {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for f in files {
        let ok = f
            .results
            .values()
            .filter(|r| r.status == Some(Status::Ok))
            .count();
        match counts.iter_mut().find(|(l, _)| *l == f.metadata.library) {
            Some((_, n)) => *n += ok,
            None => counts.push((f.metadata.library.clone(), ok)),
        }
    }
    // Without a requested library the choice cannot fail.
    reference::choose(None, configured, &counts).unwrap_or(Choice {
        library: String::new(),
        why: reference::Why::MostRows,
    })
}

/// Renders one table for result files of the same scenario and mode, rows in `order`, the
/// `reference` library's column first. Video runs (`clip_length` given) get a second column per
/// library: frames/s = clips/s × frames. Rows no library supports are named on a closing line.
pub fn table(
    files: &[&ResultFile],
    order: &[String],
    unit: &str,
    clip_length: Option<u64>,
    reference: &str,
) -> String {
    let mut files = files.to_vec();
    files.sort_by_key(|f| f.metadata.library != reference);
    let mut head = vec!["Transform".to_string()];
    for f in &files {
        let lib = &f.metadata.library;
        head.push(format!("{lib} [{unit}]"));
        if clip_length.is_some() {
            head.push(format!("{lib} [{}]", augbench_core::Media::FRAMES_UNIT));
        }
    }
    let mut rows = vec![head];
    let mut unsupported = Vec::new();
    for t in order {
        let results: Vec<Option<&TransformResult>> =
            files.iter().map(|f| f.results.get(t)).collect();
        if supported_nowhere(&results) {
            unsupported.push(t.as_str());
            continue;
        }
        let mut line = vec![t.clone()];
        for r in results {
            match clip_length {
                // Clip rates are small numbers: one decimal; frames/s as whole numbers.
                Some(frames) => line.extend([cell(r, 1, 1), cell(r, frames, 0)]),
                None => line.push(cell(r, 1, 0)),
            }
        }
        rows.push(line);
    }
    let mut out = augbench_core::text::columns(&rows, true, true);
    if !unsupported.is_empty() {
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&format!(
            "not supported by any library here ({}): {}\n",
            unsupported.len(),
            unsupported.join(", ")
        ));
    }
    out
}

/// Whether every library has the transform as unsupported (or no result for it at all).
fn supported_nowhere(results: &[Option<&TransformResult>]) -> bool {
    results
        .iter()
        .all(|r| r.is_none_or(|r| r.status == Some(Status::Unsupported)))
}

/// A cell: the throughput × `scale` (1 for items/s, the clip's frames for frames/s) with
/// `decimals`, or its status.
fn cell(r: Option<&TransformResult>, scale: u64, decimals: usize) -> String {
    let Some(r) = r else { return String::new() };
    match r.status {
        Some(Status::Ok) if r.instructions.is_some() => {
            let per_item = r.instructions.as_ref().map_or(f64::NAN, |c| c.per_item);
            format!("{:.2}", per_item / 1e6)
        }
        Some(Status::Ok) => {
            let m = crate::figure::throughput(r).unwrap_or(f64::NAN) * scale as f64;
            let mark = if r.unstable { " ~" } else { "" };
            format!("{m:.decimals$}{mark}")
        }
        Some(Status::Slow) => "slow".into(),
        Some(Status::Unsupported) => "–".into(),
        Some(Status::Error) => "error".into(),
        None => String::new(),
    }
}
