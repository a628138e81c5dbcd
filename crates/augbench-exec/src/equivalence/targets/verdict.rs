//! Verdicts of the targets check, from what was collected (no processes): per transform and
//! library, each kind of target against the Rust reference (`augbench_media::target_reference`)
//! within the transform's tolerance class of the spec's `targets:` section: masks by the share of
//! differing pixels, boxes and keypoints by the count kept and the largest |Δ| over the items
//! matched in order. A kind outside tolerance is a `known difference` where the spec explains the
//! library's convention, else a `MISMATCH`.

use std::collections::BTreeMap;

use augbench_catalog::equivalence::{EquivalenceSpec, TargetTolerance, Verdict};
use augbench_core::targets::TargetKind;
use augbench_media::target_reference::expected;
use augbench_media::targets::ItemTargets;
use serde::{Deserialize, Serialize};

use super::moves::target_move;
use super::running::{Collected, Emitted};

/// How a library's masks differ from the reference's (worst over the inputs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MaskDiff {
    /// Share (0–1) of pixels that differ, over the inputs whose mask has the expected shape.
    pub share: Option<f64>,
    /// A mask missing or of the wrong shape.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

/// How a library's boxes or keypoints differ from the reference's (over the inputs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointsDiff {
    /// Emitted, summed over the inputs.
    pub kept: usize,
    /// The reference's, summed over the inputs.
    pub expected: usize,
    /// Largest |Δ| of a coordinate in pixels, over the inputs whose counts agree (matched in order).
    pub max_abs_px: Option<f64>,
    /// Counts that disagree on an input, or labels that differ.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

/// One library's line for one transform.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetsLine {
    pub library: String,
    pub verdict: Verdict,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mask: Option<MaskDiff>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boxes: Option<PointsDiff>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keypoints: Option<PointsDiff>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetsTransformCheck {
    pub transform: String,
    /// The tolerance class of the spec's `targets:` section.
    pub class: String,
    pub verdict: Verdict,
    pub libraries: Vec<TargetsLine>,
}

/// The whole targets check: inputs (width × height), the libraries it ran, one entry per transform.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetsCheck {
    pub inputs: Vec<[u32; 2]>,
    pub libraries: Vec<String>,
    pub transforms: Vec<TargetsTransformCheck>,
}

impl TargetsCheck {
    /// True when any transform mismatched (the command's exit code 1).
    pub fn mismatched(&self) -> bool {
        self.transforms
            .iter()
            .any(|t| t.verdict == Verdict::Mismatch)
    }
}

/// Builds the check from the inputs' targets and `library → transform → Collected`.
pub fn judge(
    transforms: &[String],
    inputs: &[ItemTargets],
    collected: &BTreeMap<String, BTreeMap<String, Collected>>,
) -> TargetsCheck {
    let checks = transforms
        .iter()
        .map(|t| {
            let per_lib: Vec<(&str, &Collected)> = collected
                .iter()
                .filter_map(|(lib, m)| m.get(t).map(|c| (lib.as_str(), c)))
                .collect();
            judge_transform(t, inputs, &per_lib)
        })
        .collect();
    TargetsCheck {
        inputs: inputs.iter().map(|t| [t.width, t.height]).collect(),
        libraries: collected.keys().cloned().collect(),
        transforms: checks,
    }
}

fn judge_transform(
    t: &str,
    inputs: &[ItemTargets],
    per_lib: &[(&str, &Collected)],
) -> TargetsTransformCheck {
    let spec = &EquivalenceSpec::get().targets;
    let reference = spec
        .class_of(t)
        .ok_or_else(|| format!("`{t}` has no tolerance class under the spec's `targets:`"))
        .and_then(|(class, tol)| {
            let m = target_move(t)?;
            let exp = inputs
                .iter()
                .map(|i| expected(m, i))
                .collect::<Result<Vec<_>, _>>()?;
            Ok((class, tol, exp))
        });
    let class = reference.as_ref().map_or("–", |r| r.0).to_string();
    let libraries: Vec<TargetsLine> = per_lib
        .iter()
        .map(|(lib, c)| match (&reference, c) {
            (_, Collected::Unsupported(why)) => bare(lib, Verdict::Unsupported, why),
            (_, Collected::Failed(why)) => bare(lib, Verdict::Error, why),
            (Err(why), _) => bare(lib, Verdict::Error, why),
            (Ok((_, tol, exp)), Collected::Emitted(outs)) => line(t, lib, outs, exp, tol),
        })
        .collect();
    TargetsTransformCheck {
        transform: t.to_string(),
        class,
        verdict: overall(&libraries),
        libraries,
    }
}

fn bare(lib: &str, verdict: Verdict, note: &str) -> TargetsLine {
    TargetsLine {
        library: lib.to_string(),
        verdict,
        mask: None,
        boxes: None,
        keypoints: None,
        note: note.to_string(),
    }
}

/// One library's line: each kind compared, then judged against the tolerance and the spec's
/// known differences.
fn line(
    t: &str,
    lib: &str,
    outs: &[Emitted],
    exp: &[ItemTargets],
    tol: &TargetTolerance,
) -> TargetsLine {
    if outs.len() != exp.len() {
        let why = format!("{} outputs for {} inputs", outs.len(), exp.len());
        return bare(lib, Verdict::Mismatch, &why);
    }
    let mask = mask_diff(outs, exp);
    let boxes = boxes_diff(outs, exp);
    let keypoints = points_diff(
        outs.iter()
            .zip(exp)
            .map(|(o, e)| (&o.keypoints, &e.keypoints)),
    );
    let outside = [
        (TargetKind::Mask, mask_outside(&mask, tol), mask.share),
        (
            TargetKind::Boxes,
            points_outside(&boxes, tol),
            boxes.max_abs_px,
        ),
        (
            TargetKind::Keypoints,
            points_outside(&keypoints, tol),
            keypoints.max_abs_px,
        ),
    ];
    let (verdict, notes) = explain(t, lib, &outside, tol);
    TargetsLine {
        library: lib.to_string(),
        verdict,
        mask: Some(mask),
        boxes: Some(boxes),
        keypoints: Some(keypoints),
        note: notes.join("; "),
    }
}

/// The verdict over the kinds outside tolerance (`why`, and the measured value), each one a
/// known difference where the spec explains it (within its bound), else a mismatch; the notes.
fn explain(
    t: &str,
    lib: &str,
    outside: &[(TargetKind, Option<String>, Option<f64>)],
    tol: &TargetTolerance,
) -> (Verdict, Vec<String>) {
    let spec = &EquivalenceSpec::get().targets;
    let mut verdict = Verdict::Ok;
    let mut notes = Vec::new();
    for (kind, why, value) in outside {
        let Some(why) = why else { continue };
        match spec.known(t, lib, kind.name()) {
            Some(known) if known.explains(*value, tol) => {
                verdict = worse(verdict, Verdict::KnownDifference);
                notes.push(format!("{kind}: {}", known.why));
            }
            Some(known) => {
                verdict = Verdict::Mismatch;
                notes.push(format!(
                    "{kind}: {why}, beyond the known difference ({})",
                    known.why
                ));
            }
            None => {
                verdict = Verdict::Mismatch;
                notes.push(format!("{kind}: {why}"));
            }
        }
    }
    (verdict, notes)
}

fn worse(a: Verdict, b: Verdict) -> Verdict {
    if a == Verdict::Mismatch || b == Verdict::Mismatch {
        Verdict::Mismatch
    } else if a == Verdict::KnownDifference || b == Verdict::KnownDifference {
        Verdict::KnownDifference
    } else {
        a
    }
}

fn mask_diff(outs: &[Emitted], exp: &[ItemTargets]) -> MaskDiff {
    let mut diff = MaskDiff {
        share: None,
        problem: None,
    };
    for (i, (o, e)) in outs.iter().zip(exp).enumerate() {
        let want = [e.height as usize, e.width as usize];
        let share = match &o.mask {
            None => Err(format!("input {i}: no mask emitted")),
            Some(m) if m.hw != want => Err(format!(
                "input {i}: mask {}×{}, expected {}×{}",
                m.hw[1], m.hw[0], want[1], want[0]
            )),
            Some(m) => Ok(differing_share(&m.data, &e.mask)),
        };
        match share {
            Ok(s) => diff.share = Some(diff.share.map_or(s, |d: f64| d.max(s))),
            Err(why) => {
                diff.problem.get_or_insert(why);
            }
        }
    }
    diff
}

fn differing_share(a: &[u8], b: &[u8]) -> f64 {
    let differing = a.iter().zip(b).filter(|(x, y)| x != y).count();
    differing as f64 / a.len().max(1) as f64
}

fn boxes_diff(outs: &[Emitted], exp: &[ItemTargets]) -> PointsDiff {
    let mut diff = points_diff(outs.iter().zip(exp).map(|(o, e)| (&o.boxes, &e.boxes)));
    let relabelled = outs.iter().zip(exp).position(|(o, e)| {
        o.boxes.len() == e.boxes.len()
            && (o.labels.len() != e.labels.len()
                || o.labels
                    .iter()
                    .zip(&e.labels)
                    .any(|(a, &b)| *a != i64::from(b)))
    });
    if let (None, Some(i)) = (&diff.problem, relabelled) {
        diff.problem = Some(format!("input {i}: labels differ"));
    }
    diff
}

/// Counts summed over the inputs; the largest |Δ| over inputs whose counts agree.
fn points_diff<'a, const N: usize>(
    pairs: impl Iterator<Item = (&'a Vec<[f64; N]>, &'a Vec<[f64; N]>)>,
) -> PointsDiff {
    let mut diff = PointsDiff {
        kept: 0,
        expected: 0,
        max_abs_px: None,
        problem: None,
    };
    for (i, (got, want)) in pairs.enumerate() {
        diff.kept += got.len();
        diff.expected += want.len();
        if got.len() != want.len() {
            let why = format!("input {i}: {} kept, {} expected", got.len(), want.len());
            diff.problem.get_or_insert(why);
            continue;
        }
        let worst = got
            .iter()
            .zip(want)
            .flat_map(|(a, b)| a.iter().zip(b).map(|(x, y)| (x - y).abs()))
            .fold(0.0f64, f64::max);
        diff.max_abs_px = Some(diff.max_abs_px.map_or(worst, |d| d.max(worst)));
    }
    diff
}

/// Why the masks are outside tolerance, if they are.
fn mask_outside(d: &MaskDiff, tol: &TargetTolerance) -> Option<String> {
    if let Some(p) = &d.problem {
        return Some(p.clone());
    }
    let share = d.share.unwrap_or(0.0);
    (share > tol.mask_share + 1e-12).then(|| format!("{:.2}% of pixels differ", share * 100.0))
}

/// Why boxes or keypoints are outside tolerance, if they are.
fn points_outside(d: &PointsDiff, tol: &TargetTolerance) -> Option<String> {
    if let Some(p) = &d.problem {
        return Some(p.clone());
    }
    let worst = d.max_abs_px.unwrap_or(0.0);
    (worst > tol.coord_px).then(|| format!("max |Δ| {worst:.3} px"))
}

fn overall(lines: &[TargetsLine]) -> Verdict {
    let any = |v| lines.iter().any(|l: &TargetsLine| l.verdict == v);
    if any(Verdict::Mismatch) {
        Verdict::Mismatch
    } else if any(Verdict::KnownDifference) {
        Verdict::KnownDifference
    } else if any(Verdict::Ok) {
        Verdict::Ok
    } else if any(Verdict::Error) {
        Verdict::Error
    } else {
        Verdict::Unsupported
    }
}

#[cfg(test)]
mod tests {
    use super::super::running::EmittedMask;
    use super::*;

    fn input() -> ItemTargets {
        let mut t = ItemTargets::empty(4, 2);
        t.boxes = vec![[0.0, 0.0, 1.0, 2.0]];
        t.labels = vec![3];
        t.keypoints = vec![[0.5, 0.5]];
        t.mask[0] = 3;
        t
    }

    /// What a library that follows the reference emits for a horizontal flip of [`input`].
    fn flipped() -> Emitted {
        let mut mask = vec![0; 8];
        mask[3] = 3;
        Emitted {
            image_hw: [2, 4],
            boxes: vec![[3.0, 0.0, 4.0, 2.0]],
            labels: vec![3],
            keypoints: vec![[2.5, 0.5]],
            mask: Some(EmittedMask {
                hw: [2, 4],
                data: mask,
            }),
        }
    }

    fn judge_flip(lib: &str, e: Emitted) -> TargetsTransformCheck {
        let collected = BTreeMap::from([(
            lib.to_string(),
            BTreeMap::from([("HorizontalFlip".to_string(), Collected::Emitted(vec![e]))]),
        )]);
        judge(&["HorizontalFlip".into()], &[input()], &collected)
            .transforms
            .remove(0)
    }

    #[test]
    fn a_library_that_follows_the_reference_is_ok() {
        let c = judge_flip("torchvision", flipped());
        assert_eq!(c.verdict, Verdict::Ok, "{c:?}");
        assert_eq!(c.class, "exact");
        let l = &c.libraries[0];
        assert_eq!(l.mask.as_ref().unwrap().share, Some(0.0));
        assert_eq!(l.boxes.as_ref().unwrap().max_abs_px, Some(0.0));
    }

    #[test]
    fn one_pixel_of_mask_or_a_dropped_box_is_a_mismatch() {
        let mut e = flipped();
        if let Some(m) = e.mask.as_mut() {
            m.data[2] = 1;
        }
        let c = judge_flip("torchvision", e);
        assert_eq!(c.verdict, Verdict::Mismatch, "{c:?}");
        assert!(c.libraries[0].note.contains("mask: 12.50%"), "{c:?}");
        let mut e = flipped();
        e.boxes.clear();
        e.labels.clear();
        let c = judge_flip("torchvision", e);
        assert_eq!(c.verdict, Verdict::Mismatch);
        let boxes = c.libraries[0].boxes.as_ref().unwrap();
        assert_eq!((boxes.kept, boxes.expected), (0, 1));
        let mut e = flipped();
        e.labels = vec![4];
        assert_eq!(judge_flip("torchvision", e).verdict, Verdict::Mismatch);
        let mut e = flipped();
        e.mask = Some(EmittedMask {
            hw: [4, 2],
            data: vec![0; 8],
        });
        let c = judge_flip("torchvision", e);
        assert!(
            c.libraries[0].note.contains("mask 2×4, expected 4×2"),
            "{c:?}"
        );
    }

    #[test]
    fn a_convention_the_spec_explains_is_a_known_difference_within_its_bound() {
        // Kornia flips box corners as points (W − 1 − x): one pixel, and no more, is explained.
        let shifted = |d: f64| {
            let mut e = flipped();
            e.boxes = vec![[3.0 - d, 0.0, 4.0 - d, 2.0]];
            e
        };
        let c = judge_flip("kornia", shifted(1.0));
        assert_eq!(c.verdict, Verdict::KnownDifference, "{c:?}");
        assert!(c.libraries[0].note.starts_with("boxes: "), "{c:?}");
        let c = judge_flip("kornia", shifted(3.0));
        assert_eq!(c.verdict, Verdict::Mismatch, "{c:?}");
        assert!(
            c.libraries[0].note.contains("beyond the known difference"),
            "{c:?}"
        );
        let c = judge_flip("torchvision", shifted(1.0));
        assert_eq!(c.verdict, Verdict::Mismatch, "{c:?}");
    }

    #[test]
    fn unsupported_and_failed_libraries_are_reported_not_failed() {
        let collected = BTreeMap::from([
            (
                "kornia".to_string(),
                BTreeMap::from([("Pad".to_string(), Collected::Unsupported("no pad".into()))]),
            ),
            (
                "torchvision".to_string(),
                BTreeMap::from([("Pad".to_string(), Collected::Failed("boom".into()))]),
            ),
        ]);
        let c = judge(&["Pad".into()], &[input()], &collected);
        assert!(!c.mismatched());
        assert_eq!(c.transforms[0].verdict, Verdict::Error);
        assert_eq!(c.transforms[0].libraries[0].verdict, Verdict::Unsupported);
    }
}
