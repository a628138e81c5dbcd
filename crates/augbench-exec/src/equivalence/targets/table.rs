//! The printed form of the targets check: a table with the transforms as rows and the libraries
//! as columns (each cell the verdict, the mask's differing share, the boxes' and keypoints'
//! largest |Δ| and kept/expected), the notes of the cells that are not plainly ok, and one
//! summary line.

use augbench_catalog::equivalence::Verdict;

use super::verdict::{MaskDiff, PointsDiff, TargetsCheck, TargetsLine};

/// What the cells' abbreviations mean, printed under the table.
pub const LEGEND: &str = "m: mask pixels that differ from the reference; b: boxes' max |Δ| px, kept/expected; k: keypoints' likewise";

/// The table: one row per transform, one column per library.
pub fn table(check: &TargetsCheck) -> String {
    let mut header = vec!["Transform".to_string(), "Class".into()];
    header.extend(check.libraries.iter().cloned());
    let mut rows = vec![header];
    for t in &check.transforms {
        let mut row = vec![t.transform.clone(), t.class.clone()];
        row.extend(check.libraries.iter().map(|lib| {
            t.libraries
                .iter()
                .find(|l| &l.library == lib)
                .map_or("–".into(), cell)
        }));
        rows.push(row);
    }
    augbench_core::text::columns(&rows, false, true)
}

fn cell(l: &TargetsLine) -> String {
    let mut parts = vec![l.verdict.word().to_string()];
    if let Some(m) = &l.mask {
        parts.push(format!("m {}", mask_text(m)));
    }
    if let Some(b) = &l.boxes {
        parts.push(format!("b {}", points_text(b)));
    }
    if let Some(k) = &l.keypoints {
        parts.push(format!("k {}", points_text(k)));
    }
    parts.join("  ")
}

fn mask_text(m: &MaskDiff) -> String {
    match (m.share, &m.problem) {
        (_, Some(_)) => "shape?".into(),
        (Some(s), None) => format!("{:.2}%", s * 100.0),
        (None, None) => "–".into(),
    }
}

fn points_text(p: &PointsDiff) -> String {
    let delta = p.max_abs_px.map_or("–".into(), |d| format!("{d:.2}"));
    format!("{delta} {}/{}", p.kept, p.expected)
}

/// The notes of every cell that is not plainly ok: `transform · library: note`.
pub fn notes(check: &TargetsCheck) -> String {
    check
        .transforms
        .iter()
        .flat_map(|t| {
            t.libraries
                .iter()
                .filter(|l| l.verdict != Verdict::Ok && !l.note.is_empty())
                .map(move |l| {
                    let word = l.verdict.word();
                    format!("  {} · {} ({word}): {}\n", t.transform, l.library, l.note)
                })
        })
        .collect()
}

/// One line: how many cells got each verdict.
pub fn summary(check: &TargetsCheck) -> String {
    let order = [
        Verdict::Ok,
        Verdict::KnownDifference,
        Verdict::Mismatch,
        Verdict::Unsupported,
        Verdict::Error,
    ];
    let lines: Vec<&TargetsLine> = check.transforms.iter().flat_map(|t| &t.libraries).collect();
    let counts: Vec<String> = order
        .iter()
        .map(|&v| (v, lines.iter().filter(|l| l.verdict == v).count()))
        .filter(|&(v, n)| n > 0 || v == Verdict::Mismatch)
        .map(|(v, n)| format!("{n} {}", v.word()))
        .collect();
    format!(
        "targets check: {} ({} transforms × {} libraries)\n",
        counts.join(", "),
        check.transforms.len(),
        check.libraries.len()
    )
}

#[cfg(test)]
mod tests {
    use super::super::verdict::TargetsTransformCheck;
    use super::*;

    #[test]
    fn cells_show_the_verdict_and_every_kind_and_the_summary_counts() {
        let line = TargetsLine {
            library: "kornia".into(),
            verdict: Verdict::KnownDifference,
            mask: Some(MaskDiff {
                share: Some(0.0123),
                problem: None,
            }),
            boxes: Some(PointsDiff {
                kept: 5,
                expected: 4,
                max_abs_px: Some(1.0),
                problem: Some("input 0: 5 kept, 4 expected".into()),
            }),
            keypoints: None,
            note: "boxes: keeps everything".into(),
        };
        let check = TargetsCheck {
            inputs: vec![[4, 2]],
            libraries: vec!["kornia".into(), "torchvision".into()],
            transforms: vec![TargetsTransformCheck {
                transform: "CenterCrop224".into(),
                class: "exact".into(),
                verdict: Verdict::KnownDifference,
                libraries: vec![line],
            }],
        };
        let text = table(&check);
        assert!(
            text.contains("known difference  m 1.23%  b 1.00 5/4"),
            "{text}"
        );
        assert!(notes(&check).contains("CenterCrop224 · kornia (known difference): boxes"));
        assert_eq!(
            summary(&check),
            "targets check: 1 known difference, 0 MISMATCH (1 transforms × 2 libraries)\n"
        );
    }
}
