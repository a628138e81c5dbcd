//! CLI of the report commands (`compare`, `plot`, `report`, `docs update`): outputs and exit
//! codes — 0 ok, 1 regression with `--fail-on-regression`, an undecided row with
//! `--fail-on-undecided` or stale docs with `--check`, 2 bad usage.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

use std::path::Path;

use assert_cmd::Command;
use augbench_report::sample;
use predicates::prelude::*;

fn augbench() -> Command {
    Command::cargo_bin("augbench").unwrap()
}

/// `augbench compare --baseline B … --current C`: one `--baseline` per baseline invocation.
fn against(baselines: &[&Path], current: &Path) -> Command {
    let mut c = augbench();
    c.arg("compare");
    for b in baselines {
        c.arg("--baseline").arg(b);
    }
    c.arg("--current").arg(current);
    c
}

fn write(dir: &Path, files: &[augbench_core::results::ResultFile]) {
    for f in files {
        sample::write(dir, f).unwrap();
    }
}

fn demo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), &sample::demo());
    dir
}

/// The demo results with every throughput times `k`.
fn scaled(k: f64) -> Vec<augbench_core::results::ResultFile> {
    sample::demo()
        .iter()
        .map(|f| sample::scaled(f, k))
        .collect()
}

/// A folder of `scaled(k)`.
fn scaled_demo(k: f64) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), &scaled(k));
    dir
}

#[test]
fn compare_prints_one_table_per_group() {
    let dir = demo();
    augbench()
        .arg("compare")
        .arg(dir.path())
        .assert()
        .success()
        .stdout(predicate::str::contains("### image-rgb · micro · cpu"))
        .stdout(predicate::str::contains("### video-16f · micro · cpu"))
        .stdout(predicate::str::contains(
            "Speedup (albumentationsx / fastest other)",
        ));
}

#[test]
fn compare_formats_and_out_file() {
    let dir = demo();
    let out = dir.path().join("t.csv");
    augbench()
        .args(["compare", "--format", "csv", "--sort", "speedup", "-o"])
        .arg(&out)
        .arg(dir.path())
        .assert()
        .success();
    let csv = std::fs::read_to_string(&out).unwrap();
    assert!(csv.starts_with("scenario,mode,device,variant,transform,library"));
    augbench()
        .args(["compare", "--format", "json"])
        .arg(dir.path())
        .assert()
        .success()
        .stdout(predicate::str::starts_with("{\n  \"tables\""));
}

#[test]
fn bad_inputs_exit_2() {
    let dir = demo();
    augbench()
        .args(["compare", "--reference-library", "dali"])
        .arg(dir.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "present: albumentationsx, pillow, torchvision",
        ));
    let empty = tempfile::tempdir().unwrap();
    augbench()
        .arg("compare")
        .arg(empty.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("hint:"));
    augbench()
        .args(["compare", "no/such/folder"])
        .assert()
        .code(2);
    augbench()
        .arg("compare")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no results given"));
}

#[test]
fn newer_format_version_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let mut f = sample::result_file(
        "image-rgb",
        augbench_core::Mode::Micro,
        "kornia",
        "1",
        &[("A", sample::runs(5.0))],
    );
    f.metadata.format_version = augbench_core::results::RESULT_FORMAT_VERSION + 1;
    write(dir.path(), &[f]);
    augbench()
        .arg("compare")
        .arg(dir.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("upgrade augbench"));
}

#[test]
fn regression_exit_codes() {
    let base = demo();
    let slower = scaled_demo(0.8);
    let compare = |current: &Path, fail: bool| {
        let mut c = against(&[base.path()], current);
        if fail {
            // One baseline invocation: the gate needs the drift between invocations stated.
            c.args(["--fail-on-regression", "--drift", "0.005"]);
        }
        c.assert()
    };
    compare(slower.path(), true)
        .code(1)
        .stdout(predicate::str::contains("**regression**"));
    compare(slower.path(), false).success();
    compare(base.path(), true)
        .success()
        .stdout(predicate::str::contains("0 regression(s)"));
    against(&[base.path()], slower.path())
        // 20% fewer images a second is 25% more time per image: below a 30% minimum effect.
        .args([
            "--min-effect",
            "0.30",
            "--fail-on-regression",
            "--drift",
            "0",
        ])
        .assert()
        .success();
}

#[test]
fn a_gate_over_one_baseline_invocation_without_a_drift_is_refused() {
    let base = demo();
    against(&[base.path()], base.path())
        .arg("--fail-on-regression")
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "drift between invocations not estimated",
        ))
        .stderr(predicate::str::contains("--baseline once for each of 3"));
    // Without the gate the verdicts still show, and say what their interval rests on.
    against(&[base.path()], base.path())
        .assert()
        .success()
        .stdout(predicate::str::contains("not a 95% interval between runs"));
}

#[test]
fn three_baseline_invocations_estimate_the_drift_and_gate() {
    let invocations: Vec<_> = [1.0, 1.01, 0.99].iter().map(|k| scaled_demo(*k)).collect();
    let slower = scaled_demo(0.8);
    let baselines: Vec<&Path> = invocations.iter().map(|d| d.path()).collect();
    let gate = |current: &Path| {
        against(&baselines, current)
            .arg("--fail-on-regression")
            .assert()
    };
    gate(slower.path())
        .code(1)
        .stdout(predicate::str::contains("from 3 baseline invocations over"));
    gate(invocations[0].path())
        .success()
        .stdout(predicate::str::contains("0 regression(s)"));
}

/// Three invocations of the demo results (1.0, 1.01 and 0.99 of it) in `invocation-1..3` of one
/// folder, recorded as a baseline the way `run --invocations 3` records it.
fn baseline_folder() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let names: Vec<String> = (1..=3)
        .map(augbench_core::naming::invocation_name)
        .collect();
    for (name, k) in names.iter().zip([1.0, 1.01, 0.99]) {
        write(&dir.path().join(name), &scaled(k));
    }
    let loaded: Vec<_> = names
        .iter()
        .map(|n| augbench_report::load_paths(&[dir.path().join(n)]).unwrap())
        .collect();
    let record = augbench_report::baseline::write(dir.path(), &names, &loaded).unwrap();
    assert!(record.drift.is_some_and(|d| d.fraction > 0.0), "{record:?}");
    dir
}

#[test]
fn a_baseline_folder_of_invocations_gates_as_its_invocations_repeated() {
    let base = baseline_folder();
    let slower = scaled_demo(0.8);
    against(&[base.path()], slower.path())
        .arg("--fail-on-regression")
        .assert()
        .code(1)
        .stdout(predicate::str::contains("from 3 baseline invocations over"));
}

#[test]
fn a_baseline_invocation_from_another_machine_is_named_row_by_row() {
    let base = baseline_folder();
    let files: Vec<_> = sample::demo()
        .into_iter()
        .map(|mut f| {
            f.metadata.system_info.processor = "Some Other CPU".into();
            f
        })
        .collect();
    write(&base.path().join("invocation-3"), &files);
    let current = base.path().join("invocation-1");
    against(&[base.path()], &current)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "ran on other machines: baseline Some Other CPU",
        ));
}

/// A current run 2× slower than the demo baseline, with `change` made to each of its files, is
/// named `not comparable` in words holding each of `says`, and the gate fails on none of its rows.
fn not_comparable_with(change: fn(&mut augbench_core::results::ResultFile), says: &[&str]) {
    let base = demo();
    let current = tempfile::tempdir().unwrap();
    let files: Vec<_> = scaled(0.5)
        .into_iter()
        .map(|mut f| {
            change(&mut f);
            f
        })
        .collect();
    write(current.path(), &files);
    let out = against(&[base.path()], current.path())
        .arg("--drift")
        .arg("0.01")
        .arg("--fail-on-regression")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("0 regression(s)"), "{text}");
    for words in says {
        assert!(text.contains(words), "no {words:?} in:\n{text}");
    }
}

/// A current run over more items, measured to a precision where the baseline took a fixed run
/// count, or with one transform's parameters changed, measured other work: those rows are `not
/// comparable`, named, and the gate fails on none of them.
#[test]
fn rows_measured_over_other_data_or_with_other_settings_or_parameters_are_not_comparable() {
    not_comparable_with(
        |f| f.metadata.benchmark_params.num_items *= 2,
        &["measured over other data: baseline"],
    );
    not_comparable_with(
        |f| f.metadata.benchmark_params.precision_target = Some(0.05),
        &[
            "measured with other settings: baseline ",
            "current to ±5.0%",
        ],
    );

    let base = demo();
    let other_params = tempfile::tempdir().unwrap();
    let files: Vec<_> = scaled(0.5)
        .into_iter()
        .map(|mut f| {
            let (_, first) = f.results.iter_mut().next().unwrap();
            first.params = serde_json::json!({"changed": true});
            f
        })
        .collect();
    write(other_params.path(), &files);
    let out = against(&[base.path()], other_params.path())
        .arg("--drift")
        .arg("0.01")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    // One row per file at most: its first transform (where both runs measured it).
    let flagged = text.matches("measured with other parameters").count();
    assert!((1..=files.len()).contains(&flagged), "{text}");
    assert!(
        text.contains("**regression**"),
        "the other rows are judged:\n{text}"
    );
}

#[test]
fn rows_measured_on_another_machine_are_not_comparable() {
    let base = demo();
    let other = tempfile::tempdir().unwrap();
    let files: Vec<_> = sample::demo()
        .into_iter()
        .map(|mut f| {
            f.metadata.system_info.processor = "Some Other CPU".into();
            f
        })
        .collect();
    write(other.path(), &files);
    against(&[base.path()], other.path())
        .assert()
        .success()
        .stdout(predicate::str::contains("ran on other machines: baseline"))
        .stdout(predicate::str::contains("current Some Other CPU"));
}

#[test]
fn undecided_rows_fail_only_with_fail_on_undecided() {
    let base = demo();
    // 1% faster with ±2% intervals at a 1% minimum effect: each interval covers 1 and reaches
    // past the band's edge, so the data can neither call a change nor rule one out.
    let nudged = scaled_demo(1.01);
    let compare = |current: &Path, flag: &str, min_effect: &str| {
        against(&[base.path()], current)
            .arg(flag)
            .args(["--min-effect", min_effect])
            .assert()
    };
    compare(nudged.path(), "--fail-on-undecided", "0.01")
        .code(1)
        .stdout(predicate::str::contains(
            "1.010 [0.990, 1.030] | undecided (could not see a change under 2%)",
        ))
        .stdout(predicate::str::contains(
            "not comparable: 5 rows measured in neither run (1 error, 2 slow, 2 unsupported)",
        ));
    against(&[base.path()], nudged.path())
        .args([
            "--fail-on-regression",
            "--drift",
            "0",
            "--min-effect",
            "0.01",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "0 regression(s), 0 faster, 0 same, 15 undecided",
        ));
    compare(base.path(), "--fail-on-undecided", "0.05").success();
    // Without variants or two runs there is nothing to be undecided about: bad usage.
    augbench()
        .arg("compare")
        .arg(base.path())
        .arg("--fail-on-undecided")
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--fail-on-undecided needs A/B variants",
        ));
}

#[test]
fn a_minimum_effect_of_zero_or_one_exits_2_naming_one_that_works() {
    let dir = demo();
    for m in ["0", "1", "-0.1"] {
        against(&[dir.path()], dir.path())
            .arg(format!("--min-effect={m}"))
            .assert()
            .code(2)
            .stderr(predicate::str::contains("out of range"))
            .stderr(predicate::str::contains("--min-effect 0.05"));
    }
}

#[test]
fn regression_flags_conflict_with_positional_results() {
    let dir = demo();
    augbench()
        .arg("compare")
        .arg(dir.path())
        .arg("--baseline")
        .arg(dir.path())
        .assert()
        .code(2);
}

#[test]
fn plot_writes_svg_and_png() {
    let dir = demo();
    let out = dir.path().join("plots");
    augbench()
        .args(["plot", "--results"])
        .arg(dir.path())
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    for name in [
        "image-rgb_micro_cpu_speedup",
        "image-rgb_micro_cpu_heatmap",
        "image-rgb_micro_cpu_speedup_distribution",
    ] {
        assert!(out.join(format!("{name}.svg")).is_file(), "{name}.svg");
        assert!(out.join(format!("{name}.png")).is_file(), "{name}.png");
    }
}

#[test]
fn report_writes_one_html_file() {
    let dir = demo();
    let out = dir.path().join("r/report.html");
    augbench()
        .args(["report", "--results"])
        .arg(dir.path())
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>") && html.contains("<svg"));
    let names: Vec<_> = std::fs::read_dir(out.parent().unwrap()).unwrap().collect();
    assert_eq!(names.len(), 1, "no temporary files left behind");
}

#[test]
fn report_of_an_ab_run_has_the_ab_view_at_the_given_minimum_effect() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), &sample::ab_demo());
    let out = dir.path().join("report.html");
    let page = |min_effect: &str| {
        augbench()
            .args(["report", "--min-effect", min_effect, "--results"])
            .arg(dir.path())
            .arg("--out")
            .arg(&out)
            .assert()
            .success();
        std::fs::read_to_string(&out).unwrap()
    };
    let html = page("0.05");
    assert!(html.contains("data-view=\"ab\">A/B verdicts</button>"));
    assert!(html.contains("\"verdict\":\"slower\""));
    assert!(
        !page("0.3").contains("\"verdict\":\"slower\""),
        "Resize's 20% drop is below 30%"
    );
    augbench()
        .args(["report", "--min-effect", "1.5", "--results"])
        .arg(dir.path())
        .arg("--out")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "minimum effect 1.5 is out of range",
        ));
}

#[test]
fn docs_update_is_idempotent_and_check_detects_staleness() {
    let dir = demo();
    let readme = dir.path().join("README.md");
    std::fs::write(&readme, "# R\n<!-- AUGBENCH:IMAGE-RGB-MICRO:START -->\nstale\n<!-- AUGBENCH:IMAGE-RGB-MICRO:END -->\n").unwrap();
    let update = |check: bool| {
        let mut c = augbench();
        c.args(["docs", "update"])
            .arg(&readme)
            .arg("--results")
            .arg(dir.path());
        if check {
            c.arg("--check");
        }
        c.assert()
    };
    update(true).code(1);
    update(false).success();
    let once = std::fs::read_to_string(&readme).unwrap();
    update(false).success();
    assert_eq!(once, std::fs::read_to_string(&readme).unwrap());
    update(true).success();
    std::fs::write(
        &readme,
        "<!-- AUGBENCH:NOPE-MICRO:START -->\n<!-- AUGBENCH:NOPE-MICRO:END -->\n",
    )
    .unwrap();
    update(false).code(2).stderr(predicate::str::contains(
        "available: IMAGE-RGB-MICRO, VIDEO-16F-MICRO",
    ));
}

// ---- instruction counts: their own minimum effect and item set -------------------------------

/// A counted run of Pillow's GaussianBlur: `per_item` instructions per item in two processes,
/// over items hashed as `hash` (`None`: a file written before item hashes).
fn counted(dir: &Path, per_item: u64, hash: Option<&str>) {
    use augbench_core::counts::{COUNT_METHOD, InstructionRecord};
    use augbench_core::results::{Status, TransformResult};
    let items = augbench_core::policy::COUNT_MAX_ITEMS;
    let mut rec = InstructionRecord {
        tool: "valgrind-3.19.0 callgrind".into(),
        method: COUNT_METHOD.into(),
        items,
        items_hash: hash.map(str::to_string),
        ..Default::default()
    };
    for wobble in [0, 40] {
        rec.add_process(&[per_item * items + wobble], &[1.0]);
    }
    let mut tr = TransformResult::not_measured(Status::Ok, serde_json::json!({}), String::new());
    tr.supported = true;
    tr.reason = None;
    tr.instructions = Some(rec);
    let mut file = sample::result_file(
        "image-rgb",
        augbench_core::Mode::Micro,
        "pillow",
        "13.0.0",
        &[],
    );
    file.metadata.benchmark_params.measure = Some("instructions".into());
    file.results.insert("GaussianBlur".into(), tr);
    write(dir, &[file]);
}

fn compare_counts(base: &Path, cur: &Path, flags: &[&str]) -> assert_cmd::assert::Assert {
    augbench()
        .arg("compare")
        .arg("--baseline")
        .arg(base)
        .arg("--current")
        .arg(cur)
        .arg("--fail-on-regression")
        .args(flags)
        .assert()
}

#[test]
fn a_two_percent_count_change_fails_the_gate_whatever_the_time_minimum_effect() {
    let (base, slow) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    counted(base.path(), 80_000_000, Some("0123456789abcdef"));
    counted(slow.path(), 81_600_000, Some("0123456789abcdef"));
    compare_counts(base.path(), slow.path(), &["--min-effect", "0.05"])
        .code(1)
        .stdout(predicate::str::contains(
            "**regression** (instructions +2.00% per item",
        ))
        .stdout(predicate::str::contains("unless --count-min-effect"))
        .stdout(predicate::str::contains("not a time verdict"));
    compare_counts(base.path(), slow.path(), &["--count-min-effect", "0.05"])
        .success()
        .stdout(predicate::str::contains("threshold ±5.00%"));
    compare_counts(base.path(), slow.path(), &["--count-min-effect", "1.5"])
        .code(2)
        .stderr(predicate::str::contains("--count-min-effect"));
}

#[test]
fn counts_over_other_items_are_not_comparable_and_an_older_file_is_unchecked() {
    let (base, other, old) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    counted(base.path(), 80_000_000, Some("aaaaaaaaaaaaaaaa"));
    counted(other.path(), 80_000_000, Some("bbbbbbbbbbbbbbbb"));
    counted(old.path(), 80_000_000, None);
    compare_counts(base.path(), other.path(), &[])
        .success()
        .stdout(predicate::str::contains(
            "counted over different items: baseline aaaaaaaaaaaaaaaa, current bbbbbbbbbbbbbbbb",
        ))
        .stdout(predicate::str::contains("1 not comparable"));
    compare_counts(old.path(), base.path(), &[])
        .success()
        .stdout(predicate::str::contains("the item set was not checked"))
        .stdout(predicate::str::contains("1 same"));
}

#[test]
fn the_count_minimum_effect_shown_in_help_is_policys() {
    let policy = |x: f64| format!("[default: {x}]");
    for cmd in ["compare", "report"] {
        let out = augbench().args([cmd, "--help"]).output().unwrap();
        let help = String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        assert!(help.contains("--count-min-effect"), "{cmd}: {help}");
        let count = policy(augbench_core::policy::COUNT_MIN_EFFECT);
        let time = policy(augbench_core::policy::REGRESSION_MIN_EFFECT);
        assert!(
            help.contains(&count) && help.contains(&time),
            "{cmd}: {help}"
        );
    }
}
