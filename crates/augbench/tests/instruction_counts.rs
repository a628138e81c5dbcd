//! `measure: instructions` end to end, under the real Valgrind: counted rows of a native crate
//! and of Pillow (tool, method, raw counts, a repeatability of a few hundredths of a percent at
//! most), and the count gate: a real 2% slowdown (the transform once more on a centred crop of 2%
//! of each item, `AUGBENCH_TEST_FAULTS=extra2:…`) fails `compare --fail-on-regression` while the
//! unchanged transform reads `same`, and an A/A pair passes it. CI installs Valgrind
//! (scripts/test.sh); these tests fail without it, never skip.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

use std::path::{Path, PathBuf};

use augbench_core::results::{ResultFile, Status};

fn config(dir: &Path, libraries: &str, transforms: &str) -> PathBuf {
    let text = format!(
        "version: 1\nselection:\n  scenario: image-rgb\n  mode: micro\n  libraries: [{libraries}]\n  transforms: [{transforms}]\n\
         data:\n  num_items: 6\nexecution:\n  measure: instructions\noutput:\n  output_dir: {}\n",
        dir.join("out").display()
    );
    let p = dir.join("cfg.yaml");
    std::fs::write(&p, text).unwrap();
    p
}

/// `augbench run --config cfg --output out`, with `faults` in the environment (may be empty).
fn run(cfg: &Path, out: &Path, faults: &str) {
    let mut cmd = assert_cmd::Command::cargo_bin("augbench").unwrap();
    cmd.args(["run", "--no-refresh-requirements", "--config"])
        .arg(cfg)
        .arg("--output")
        .arg(out);
    if faults.is_empty() {
        cmd.env_remove("AUGBENCH_TEST_FAULTS");
    } else {
        cmd.env("AUGBENCH_TEST_FAULTS", faults);
    }
    let o = cmd.output().unwrap();
    assert!(
        o.status.success(),
        "{:?}\n{}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("[M instr/item]"), "{stdout}");
    assert!(
        !stdout.contains("img/s"),
        "counts are never shown as img/s:\n{stdout}"
    );
}

fn results(out: &Path, library: &str) -> ResultFile {
    let p = out.join(format!(
        "image-rgb/micro/{library}_micro_instructions_results.json"
    ));
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap()
}

fn compare(base: &Path, cur: &Path) -> (Option<i32>, String) {
    let mut cmd = assert_cmd::Command::cargo_bin("augbench").unwrap();
    let o = cmd
        .args(["compare", "--fail-on-regression", "--baseline"])
        .arg(base)
        .arg("--current")
        .arg(cur)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    (o.status.code(), text)
}

/// The markdown line of `transform` in a compare output.
fn line<'a>(text: &'a str, transform: &str) -> &'a str {
    text.lines()
        .find(|l| l.contains(&format!("| {transform} ")))
        .unwrap_or_else(|| panic!("no line for {transform}:\n{text}"))
}

#[test]
fn a_two_percent_slowdown_fails_the_count_gate_and_a_repeat_passes_it() {
    let t = tempfile::tempdir().unwrap();
    let cfg = config(t.path(), "image", "GaussianBlur, HorizontalFlip");
    let (a, b, c) = (t.path().join("a"), t.path().join("b"), t.path().join("c"));
    run(&cfg, &a, "");
    run(&cfg, &b, "extra2:GaussianBlur");
    run(&cfg, &c, "");
    let base = results(&a, "image");
    for (name, r) in &base.results {
        assert_eq!(r.status, Some(Status::Ok), "{name}: {:?}", r.reason);
        let rec = r.instructions.as_ref().unwrap();
        assert_eq!(
            rec.process_loops,
            vec![1, 1],
            "{name}: two processes, one loop each"
        );
        assert!(rec.tool.contains("callgrind"), "{rec:?}");
        assert!(rec.per_item > 1e5, "{name}: {rec:?}");
        assert!(
            rec.repeatability < 1e-3,
            "{name}: a native count repeats: {rec:?}"
        );
        assert!(
            r.throughputs.is_empty(),
            "no time is recorded as a speed under Valgrind"
        );
    }
    let slowed = results(&b, "image");
    for (name, r) in &slowed.results {
        let (x, y) = (
            r.instructions.as_ref().unwrap(),
            base.results[name].instructions.as_ref().unwrap(),
        );
        assert_eq!(
            x.items, y.items,
            "{name}: a slower transform counts the same items"
        );
    }
    let (code, text) = compare(&a, &b);
    assert_eq!(code, Some(1), "2% more work fails the gate:\n{text}");
    assert!(line(&text, "GaussianBlur").contains("regression"), "{text}");
    assert!(line(&text, "HorizontalFlip").contains("same"), "{text}");
    let (code, text) = compare(&a, &c);
    assert_eq!(code, Some(0), "A/A passes the gate:\n{text}");
    assert!(line(&text, "GaussianBlur").contains("same"), "{text}");
}

#[test]
fn pillow_is_counted_under_valgrind_with_its_cpu_features_compared() {
    let t = tempfile::tempdir().unwrap();
    let cfg = config(t.path(), "pillow", "HorizontalFlip, Resize");
    let out = t.path().join("out");
    run(&cfg, &out, "");
    let f = results(&out, "pillow");
    assert_eq!(
        f.metadata.benchmark_params.measure.as_deref(),
        Some("instructions")
    );
    for (name, r) in &f.results {
        assert_eq!(r.status, Some(Status::Ok), "{name}: {:?}", r.reason);
        let rec = r.instructions.as_ref().unwrap();
        assert_eq!(rec.counts.len(), 2, "{name}: {rec:?}");
        assert!(rec.repeatability < 2e-3, "{name}: {rec:?}");
    }
}
