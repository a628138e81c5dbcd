//! The equivalence check inside `augbench run` (`execution.check_equivalence`): run once, before
//! the timed measurements and outside them, over the run's libraries and transforms; written whole
//! to `<output>/equivalence.json`; each job's result file records its library's summary.
//! `--resume` keeps an earlier check of the same libraries and transforms.

use std::path::Path;

use anyhow::Context;
use augbench_catalog::equivalence::EquivalenceSummary;
use augbench_core::plan::Plan;
use augbench_core::{naming, resolve};
use indicatif::MultiProgress;

use super::verdict::Check;
use augbench_host::fsutil::write_atomic;

/// The run's check, when its config asks for one: an earlier one kept by `--resume`, or a new one.
pub fn for_run(plan: &Plan, mp: &MultiProgress) -> anyhow::Result<Option<Check>> {
    let cfg = &plan.config;
    if cfg.execution.check_equivalence != Some(true) {
        return Ok(None);
    }
    let libraries = run_libraries(plan);
    let transforms = resolve::selected_transforms(cfg);
    let path = naming::equivalence(&augbench_core::naming::output_dir(cfg));
    if cfg.execution.resume == Some(true)
        && let Some(kept) = earlier(&path, &libraries, &transforms)
    {
        mp.suspend(|| {
            eprintln!(
                "resume: keeping the equivalence check in {}",
                path.display()
            )
        });
        return Ok(Some(kept));
    }
    let refresh = cfg.execution.refresh_requirements.unwrap_or(true);
    let check = super::running::run_check(&libraries, &transforms, refresh, mp)?;
    let text = serde_json::to_string_pretty(&check).context("serializing the check")?;
    write_atomic(&path, text.as_bytes())?;
    Ok(Some(check))
}

/// `library`'s summary of `check`, as its result file records it.
pub fn summary(check: &Check, library: &str) -> EquivalenceSummary {
    check.summary_for(library, naming::EQUIVALENCE_FILE)
}

/// The libraries of the plan's jobs, in plan order, each once.
fn run_libraries(plan: &Plan) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for j in &plan.jobs {
        if !out.contains(&j.library) {
            out.push(j.library.clone());
        }
    }
    out
}

/// An earlier check at `path` of exactly these libraries and transforms (unreadable: none).
fn earlier(path: &Path, libraries: &[String], transforms: &[String]) -> Option<Check> {
    let text = std::fs::read_to_string(path).ok()?;
    let check: Check = serde_json::from_str(&text).ok()?;
    check.covers(libraries, transforms).then_some(check)
}

/// The summary line of a run: verdict counts, the mismatching transforms, and the file.
pub fn summary_line(check: &Check, out_dir: &Path) -> String {
    let mut counts: std::collections::BTreeMap<&str, usize> = Default::default();
    for t in &check.transforms {
        *counts.entry(t.verdict.word()).or_default() += 1;
    }
    let counts: Vec<String> = counts.iter().map(|(k, v)| format!("{v} {k}")).collect();
    let mismatches = check.mismatches();
    let which = if mismatches.is_empty() {
        String::new()
    } else {
        format!(" (MISMATCH: {})", mismatches.join(", "))
    };
    format!(
        "equivalence check: {}{which} → {}",
        counts.join(", "),
        naming::equivalence(out_dir).display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::equivalence::verdict::{PairVerdict, TransformCheck, Verdict};

    fn check(verdict: Verdict) -> Check {
        Check {
            inputs: vec![[3, 2]],
            libraries: vec!["pillow".into(), "image".into()],
            transforms: vec![TransformCheck {
                transform: "HorizontalFlip".into(),
                class: "exact".into(),
                reference: Some("pillow".into()),
                verdict,
                libraries: vec![PairVerdict {
                    library: "image".into(),
                    verdict,
                    diff: None,
                    note: String::new(),
                }],
            }],
        }
    }

    #[test]
    fn a_mismatch_is_named_in_the_summary_line() {
        let line = summary_line(&check(Verdict::Mismatch), Path::new("out"));
        assert!(
            line.contains("1 MISMATCH (MISMATCH: HorizontalFlip)"),
            "{line}"
        );
        assert!(line.ends_with("equivalence.json"), "{line}");
        let line = summary_line(&check(Verdict::Ok), Path::new("out"));
        assert!(line.starts_with("equivalence check: 1 ok →"), "{line}");
    }

    #[test]
    fn resume_keeps_only_a_check_of_the_same_libraries_and_transforms() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("equivalence.json");
        std::fs::write(&path, serde_json::to_string(&check(Verdict::Ok)).unwrap()).unwrap();
        let libs = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let flip = libs(&["HorizontalFlip"]);
        assert!(earlier(&path, &libs(&["image", "pillow"]), &flip).is_some());
        assert!(earlier(&path, &libs(&["image"]), &flip).is_none());
        assert!(earlier(&path, &libs(&["image", "pillow"]), &libs(&["Resize"])).is_none());
        std::fs::write(&path, "{ torn").unwrap();
        assert!(earlier(&path, &libs(&["image", "pillow"]), &flip).is_none());
    }

    #[test]
    fn a_library_summary_holds_its_own_line_and_the_verdict() {
        let s = summary(&check(Verdict::KnownDifference), "image");
        assert_eq!(s.file, naming::EQUIVALENCE_FILE);
        let t = &s.transforms["HorizontalFlip"];
        assert_eq!(t.library_verdict, Verdict::KnownDifference);
        assert_eq!(t.reference.as_deref(), Some("pillow"));
        assert!(summary(&check(Verdict::Ok), "kornia").transforms.is_empty());
    }
}
