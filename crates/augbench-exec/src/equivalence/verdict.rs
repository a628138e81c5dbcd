//! Verdicts of the equivalence check, computed from the collected outputs (no processes): a
//! deterministic transform's outputs against the reference library's within the spec's tolerance
//! class; a random transform's by statistics (shape by the registry's rule, two seeds differ).
//! Also the printed table.

use std::collections::BTreeMap;

pub use augbench_catalog::equivalence::Verdict;
use augbench_catalog::equivalence::{
    self, Diff, EquivalenceSpec, EquivalenceSummary, Pixels, TransformEquivalence,
};
use augbench_catalog::registry::OutputRule;
use augbench_core::Registry;
use serde::{Deserialize, Serialize};

use super::produced::{Output, Produced};

/// One library's line for one transform.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PairVerdict {
    pub library: String,
    pub verdict: Verdict,
    /// Against the reference (deterministic transforms; absent for the reference itself).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<Diff>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TransformCheck {
    pub transform: String,
    /// The tolerance class (deterministic transforms), or `random`.
    pub class: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    pub verdict: Verdict,
    pub libraries: Vec<PairVerdict>,
}

/// The whole check: inputs (width × height), the libraries it ran, and one entry per transform.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Check {
    pub inputs: Vec<[u32; 2]>,
    /// Absent in checks written before it was recorded.
    #[serde(default)]
    pub libraries: Vec<String>,
    pub transforms: Vec<TransformCheck>,
}

impl Check {
    /// True when any transform mismatched (the command's exit code 1).
    pub fn mismatched(&self) -> bool {
        self.transforms
            .iter()
            .any(|t| t.verdict == Verdict::Mismatch)
    }

    /// The transforms that mismatched, in order.
    pub fn mismatches(&self) -> Vec<&str> {
        self.transforms
            .iter()
            .filter(|t| t.verdict == Verdict::Mismatch)
            .map(|t| t.transform.as_str())
            .collect()
    }

    /// Whether this check ran exactly these libraries (any order) and transforms (in order).
    pub fn covers(&self, libraries: &[String], transforms: &[String]) -> bool {
        let mut mine = self.libraries.clone();
        let mut theirs = libraries.to_vec();
        mine.sort();
        theirs.sort();
        let names: Vec<&String> = self.transforms.iter().map(|t| &t.transform).collect();
        mine == theirs && names == transforms.iter().collect::<Vec<_>>()
    }

    /// What `library`'s result file records: per transform, the verdict and its own line;
    /// `file` is where the whole check was written (relative to the output folder).
    pub fn summary_for(&self, library: &str, file: &str) -> EquivalenceSummary {
        let transforms = self
            .transforms
            .iter()
            .filter_map(|t| {
                let line = t.libraries.iter().find(|l| l.library == library)?;
                let entry = TransformEquivalence {
                    class: t.class.clone(),
                    reference: t.reference.clone(),
                    verdict: t.verdict,
                    library_verdict: line.verdict,
                    diff: line.diff,
                    note: line.note.clone(),
                };
                Some((t.transform.clone(), entry))
            })
            .collect();
        EquivalenceSummary {
            file: file.to_string(),
            inputs: self.inputs.clone(),
            libraries: self.libraries.clone(),
            transforms,
        }
    }
}

pub fn is_deterministic(transform: &str) -> bool {
    EquivalenceSpec::get().class_of(transform).is_some()
}

/// Builds the check from `library → transform → Produced`, transforms in the given order.
pub fn judge(
    transforms: &[String],
    produced: &BTreeMap<String, BTreeMap<String, Produced>>,
    inputs: &[(u32, u32)],
) -> Check {
    let checks = transforms
        .iter()
        .map(|t| {
            let per_lib: Vec<(&str, &Produced)> = produced
                .iter()
                .filter_map(|(lib, m)| m.get(t).map(|p| (lib.as_str(), p)))
                .collect();
            judge_transform(t, &per_lib, inputs)
        })
        .collect();
    Check {
        inputs: inputs.iter().map(|&(w, h)| [w, h]).collect(),
        libraries: produced.keys().cloned().collect(),
        transforms: checks,
    }
}

fn judge_transform(
    t: &str,
    per_lib: &[(&str, &Produced)],
    inputs: &[(u32, u32)],
) -> TransformCheck {
    let spec = EquivalenceSpec::get();
    let outputs: Vec<(&str, &Vec<Vec<Output>>)> = per_lib
        .iter()
        .filter_map(|(lib, p)| match p {
            Produced::Outputs(o) => Some((*lib, o)),
            _ => None,
        })
        .collect();
    let (class, mut lines, reference) = match spec.class_of(t) {
        Some((class, tol)) => {
            let names: Vec<&str> = outputs.iter().map(|(l, _)| *l).collect();
            let reference = spec.reference(&names);
            let lines = deterministic(t, &outputs, reference, &tol);
            (class.to_string(), lines, reference.map(str::to_string))
        }
        None => ("random".to_string(), random(t, &outputs, inputs), None),
    };
    lines.extend(per_lib.iter().filter_map(|(lib, p)| not_produced(lib, p)));
    lines.sort_by(|a, b| a.library.cmp(&b.library));
    let verdict = overall(&lines, outputs.len(), spec.class_of(t).is_some());
    TransformCheck {
        transform: t.to_string(),
        class,
        reference,
        verdict,
        libraries: lines,
    }
}

fn not_produced(lib: &str, p: &Produced) -> Option<PairVerdict> {
    let (verdict, note) = match p {
        Produced::Outputs(_) => return None,
        Produced::Unsupported(why) => (Verdict::Unsupported, why.clone()),
        Produced::Failed(why) => (Verdict::Error, why.clone()),
    };
    Some(PairVerdict {
        library: lib.to_string(),
        verdict,
        diff: None,
        note,
    })
}

fn deterministic(
    t: &str,
    outputs: &[(&str, &Vec<Vec<Output>>)],
    reference: Option<&str>,
    tol: &equivalence::Tolerance,
) -> Vec<PairVerdict> {
    let Some(reference) = reference else {
        return Vec::new();
    };
    let base = outputs
        .iter()
        .find(|(l, _)| *l == reference)
        .map(|(_, o)| &o[0]);
    outputs
        .iter()
        .map(|(lib, runs)| {
            let line = |verdict, diff, note: String| PairVerdict {
                library: lib.to_string(),
                verdict,
                diff,
                note,
            };
            if *lib == reference {
                return line(Verdict::Ok, None, "reference".into());
            }
            let known = EquivalenceSpec::get().known(t, lib);
            match (base.map(|b| diff_all(b, &runs[0])), known) {
                (Some(Ok(d)), _) if d.within(tol) => line(Verdict::Ok, Some(d), String::new()),
                (Some(Ok(d)), Some(why)) => line(Verdict::KnownDifference, Some(d), why.into()),
                (Some(Ok(d)), None) => line(Verdict::Mismatch, Some(d), "outside tolerance".into()),
                (Some(Err(e)), Some(why)) => {
                    line(Verdict::KnownDifference, None, format!("{why} ({e})"))
                }
                (Some(Err(e)), None) => line(Verdict::Mismatch, None, e),
                (None, _) => line(Verdict::Error, None, "no reference output".into()),
            }
        })
        .collect()
}

/// The worst difference over all inputs, or why the outputs cannot be compared.
fn diff_all(a: &[Output], b: &[Output]) -> Result<Diff, String> {
    if a.len() != b.len() {
        return Err(format!("{} outputs vs {}", a.len(), b.len()));
    }
    let diffs = a
        .iter()
        .zip(b)
        .enumerate()
        .map(|(i, (x, y))| {
            equivalence::compare(pixels(x), pixels(y)).map_err(|e| format!("input {i}: {e}"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Diff::worst(&diffs))
}

fn pixels(o: &Output) -> Pixels<'_> {
    Pixels {
        shape: o.shape,
        data: &o.data,
    }
}

fn random(
    t: &str,
    outputs: &[(&str, &Vec<Vec<Output>>)],
    inputs: &[(u32, u32)],
) -> Vec<PairVerdict> {
    let rule = Registry::get().spec(t).map(|s| s.output.clone());
    outputs
        .iter()
        .map(|(lib, runs)| {
            let (verdict, note) = match shape_problem(rule.as_ref(), &runs[0], inputs) {
                Some(why) => (Verdict::Mismatch, why),
                None if runs.len() > 1 && same_outputs(&runs[0], &runs[1]) => (
                    Verdict::SameForSeeds,
                    "identical outputs under two seeds".to_string(),
                ),
                None => (Verdict::Ok, String::new()),
            };
            PairVerdict {
                library: lib.to_string(),
                verdict,
                diff: None,
                note,
            }
        })
        .collect()
}

/// A shape that breaks the registry's output rule (or is not RGB or one band).
fn shape_problem(
    rule: Option<&OutputRule>,
    outs: &[Output],
    inputs: &[(u32, u32)],
) -> Option<String> {
    outs.iter()
        .zip(inputs)
        .enumerate()
        .find_map(|(i, (o, &(w, h)))| {
            let [oh, ow, oc] = o.shape;
            let expected = match rule {
                Some(OutputRule::Same) => Some((h as usize, w as usize)),
                Some(OutputRule::Fixed { size }) => Some((size[0] as usize, size[1] as usize)),
                _ => None,
            };
            let wrong_size = expected.is_some_and(|e| e != (oh, ow));
            (wrong_size || !(oc == 3 || oc == 1)).then(|| {
                format!("input {i} ({w}×{h}): output {oh}×{ow}×{oc} breaks the registry's rule")
            })
        })
}

fn same_outputs(a: &[Output], b: &[Output]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x.shape == y.shape && x.data == y.data)
}

fn overall(lines: &[PairVerdict], produced: usize, deterministic: bool) -> Verdict {
    let any = |v| lines.iter().any(|l| l.verdict == v);
    match produced {
        _ if any(Verdict::Mismatch) => Verdict::Mismatch,
        0 if any(Verdict::Error) => Verdict::Error,
        0 => Verdict::Unsupported,
        1 if deterministic => Verdict::Alone,
        _ if any(Verdict::SameForSeeds) => Verdict::SameForSeeds,
        _ if any(Verdict::KnownDifference) => Verdict::KnownDifference,
        _ => Verdict::Ok,
    }
}

/// The printed table: one line per transform and library.
pub fn table(check: &Check) -> String {
    let mut rows = vec![vec![
        "Transform".to_string(),
        "Class".into(),
        "Library".into(),
        "max|Δ|".into(),
        "mean|Δ|".into(),
        "PSNR dB".into(),
        "Verdict".into(),
        "Note".into(),
    ]];
    for t in &check.transforms {
        for (i, l) in t.libraries.iter().enumerate() {
            let first = i == 0;
            rows.push(vec![
                if first {
                    t.transform.clone()
                } else {
                    String::new()
                },
                if first {
                    t.class.clone()
                } else {
                    String::new()
                },
                l.library.clone(),
                l.diff.map_or("–".into(), |d| d.max_abs.to_string()),
                l.diff.map_or("–".into(), |d| format!("{:.2}", d.mean_abs)),
                l.diff.map_or("–".into(), |d| {
                    d.psnr.map_or("inf".into(), |p| format!("{p:.1}"))
                }),
                verdict_word(l.verdict).into(),
                short(&l.note),
            ]);
        }
    }
    augbench_core::text::columns(&rows, false, true)
}

/// One line per transform: its verdict and reference.
pub fn summary(check: &Check) -> String {
    check
        .transforms
        .iter()
        .map(|t| {
            let reference = t
                .reference
                .as_deref()
                .map(|r| format!(" (reference {r})"))
                .unwrap_or_default();
            format!("{}: {}{reference}\n", t.transform, verdict_word(t.verdict))
        })
        .collect()
}

pub fn verdict_word(v: Verdict) -> &'static str {
    v.word()
}

fn short(note: &str) -> String {
    const MAX: usize = 60;
    let first = note.lines().next().unwrap_or("");
    if first.chars().count() > MAX {
        format!("{}…", first.chars().take(MAX).collect::<String>())
    } else {
        first.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const INPUTS: [(u32, u32); 1] = [(3, 2)];

    fn out(shape: [usize; 3], fill: u8) -> Output {
        Output {
            shape,
            data: vec![fill; shape.iter().product()],
        }
    }

    fn produced(
        entries: &[(&str, Produced)],
        t: &str,
    ) -> BTreeMap<String, BTreeMap<String, Produced>> {
        entries
            .iter()
            .map(|(lib, p)| {
                (
                    lib.to_string(),
                    BTreeMap::from([(t.to_string(), p.clone())]),
                )
            })
            .collect()
    }

    fn once(o: Output) -> Produced {
        Produced::Outputs(vec![vec![o]])
    }

    fn judge_one(t: &str, entries: &[(&str, Produced)]) -> TransformCheck {
        judge(&[t.to_string()], &produced(entries, t), &INPUTS)
            .transforms
            .remove(0)
    }

    fn line<'a>(c: &'a TransformCheck, lib: &str) -> &'a PairVerdict {
        c.libraries.iter().find(|l| l.library == lib).unwrap()
    }

    #[test]
    fn an_exact_transform_mismatches_on_one_value_and_names_the_reference() {
        let mut off = out([2, 3, 3], 9);
        off.data[4] = 10;
        let c = judge_one(
            "HorizontalFlip",
            &[
                ("torchvision", once(out([2, 3, 3], 9))),
                ("albumentationsx", once(out([2, 3, 3], 9))),
                ("pillow", once(off)),
                ("imageproc", Produced::Unsupported("no flip".into())),
            ],
        );
        assert_eq!(c.reference.as_deref(), Some("albumentationsx"));
        assert_eq!(c.verdict, Verdict::Mismatch);
        assert_eq!(line(&c, "torchvision").verdict, Verdict::Ok);
        assert_eq!(line(&c, "pillow").diff.unwrap().max_abs, 1);
        assert_eq!(line(&c, "imageproc").verdict, Verdict::Unsupported);
        let check = Check {
            inputs: vec![],
            libraries: vec![],
            transforms: vec![c],
        };
        assert!(check.mismatched());
        assert!(table(&check).contains("MISMATCH"));
    }

    #[test]
    fn a_shape_difference_is_a_mismatch_and_a_known_difference_is_not() {
        let c = judge_one(
            "Resize",
            &[
                ("albumentationsx", once(out([2, 3, 3], 0))),
                ("kornia", once(out([3, 2, 3], 0))),
            ],
        );
        assert_eq!(line(&c, "kornia").verdict, Verdict::Mismatch);
        assert!(
            line(&c, "kornia").note.contains("shape"),
            "{:?}",
            line(&c, "kornia")
        );
        let c = judge_one(
            "Grayscale",
            &[
                ("albumentationsx", once(out([2, 3, 3], 100))),
                ("image", once(out([2, 3, 1], 120))),
            ],
        );
        assert_eq!(line(&c, "image").verdict, Verdict::KnownDifference);
        assert!(line(&c, "image").note.contains("709"));
        assert_eq!(c.verdict, Verdict::KnownDifference);
    }

    #[test]
    fn random_transforms_are_judged_by_shape_and_by_seeds() {
        let two = |a: u8, b: u8| {
            Produced::Outputs(vec![vec![out([2, 3, 3], a)], vec![out([2, 3, 3], b)]])
        };
        let c = judge_one(
            "Rotate",
            &[("pillow", two(1, 2)), ("torchvision", two(3, 3))],
        );
        assert_eq!(c.class, "random");
        assert_eq!(line(&c, "pillow").verdict, Verdict::Ok);
        assert_eq!(line(&c, "torchvision").verdict, Verdict::SameForSeeds);
        assert_eq!(c.verdict, Verdict::SameForSeeds);
        let wrong = Produced::Outputs(vec![vec![out([4, 3, 3], 1)], vec![out([4, 3, 3], 2)]]);
        let c = judge_one("Rotate", &[("kornia", wrong)]);
        assert_eq!(
            c.verdict,
            Verdict::Mismatch,
            "Rotate keeps the input's shape"
        );
    }

    #[test]
    fn nothing_to_compare_is_alone_unsupported_or_error() {
        let c = judge_one("Invert", &[("pillow", once(out([2, 3, 3], 0)))]);
        assert_eq!(c.verdict, Verdict::Alone);
        let c = judge_one("Invert", &[("image", Produced::Unsupported("x".into()))]);
        assert_eq!(c.verdict, Verdict::Unsupported);
        let c = judge_one("Invert", &[("image", Produced::Failed("boom".into()))]);
        assert_eq!(c.verdict, Verdict::Error);
    }
}
