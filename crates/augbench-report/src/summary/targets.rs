//! Target rows in the run summary (docs/targets.md): each target set's own table (`image +
//! boxes` is not `image`), and what the targets cost: each library's row with a set against the
//! same library's image-only row, paired round by round in the same run.

use augbench_core::results::{ResultFile, Status};

/// The target set of a result file (`None`: image-only rows).
pub fn set_of(file: &ResultFile) -> Option<&str> {
    file.metadata.targets.as_ref().map(|t| t.set.as_str())
}

/// The target sets among `files`, in the order they first appear.
pub fn sets(files: &[&ResultFile]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for set in files.iter().filter_map(|f| set_of(f)) {
        if !out.iter().any(|s| s == set) {
            out.push(set.to_string());
        }
    }
    out
}

/// The files of one target set (`None`: the image-only files).
pub fn files_of<'a>(files: &[&'a ResultFile], set: Option<&str>) -> Vec<&'a ResultFile> {
    files.iter().copied().filter(|f| set_of(f) == set).collect()
}

/// What the targets cost, one line per target column: per transform the speed with targets ÷
/// the same library's image-only speed (the median of the per-round ratios, with its rerun
/// interval); `None` when no target file pairs with its image-only row.
pub fn cost_lines(files: &[&ResultFile], order: &[String]) -> Option<String> {
    let mut lines = Vec::new();
    for f in files {
        let Some(t) = &f.metadata.targets else {
            continue;
        };
        let cells: Vec<String> = order
            .iter()
            .filter_map(|name| cost_cell(f, &t.library, name))
            .collect();
        if !cells.is_empty() {
            lines.push(format!("  {}: {}", f.metadata.library, cells.join(", ")));
        }
    }
    if lines.is_empty() {
        return None;
    }
    Some(format!(
        "target cost (speed with targets ÷ the same library's image-only speed, paired per round; 0.50 = twice the time):\n{}",
        lines.join("\n")
    ))
}

/// `HorizontalFlip 0.62 (0.60–0.64)`: one transform's paired ratio against `library`.
fn cost_cell(file: &ResultFile, library: &str, name: &str) -> Option<String> {
    let row = file.results.get(name)?;
    if row.status != Some(Status::Ok) {
        return None;
    }
    let p = row.paired.iter().find(|p| p.partner == library)?;
    Some(format!(
        "{name} {:.2} ({:.2}–{:.2})",
        p.ratio, p.rerun_low, p.rerun_high
    ))
}
