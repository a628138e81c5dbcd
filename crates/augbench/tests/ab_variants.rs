//! A/B runs end to end with real Pillow environments: two variants of Pillow in one interleaved
//! run, each in its own environment and result file, then `compare --fail-on-regression` on the
//! run's folder. A local checkout whose `Image.filter` does real extra work (scripts/ab_fixture.sh)
//! must fail the gate (exit 1); the same version as two variants (A/A) must pass it. Pipeline
//! (Pillow's loader, over torch_stack) and video micro (Kornia) variants run the same way, each
//! in its own environment, file and column, paired over the same rounds.
//! A checkout whose extra time the CPU clock cannot see (a helper thread, a sleep) must read
//! `slower` on the wall clock.
//! Uses the shared environment cache on purpose (the variant environments build once).
//! The tests that read a regression verdict are in module `alone`:
//! `scripts/test.sh` skips them in the main run by that name and runs them last, one at a time,
//! with nothing beside them.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

use std::path::{Path, PathBuf};
use std::process::Output;

use augbench_core::results::{ResultFile, Status};

/// The gate tests (module `alone`) run one at a time: the gate's verdict reads a rerun interval
/// that a torch worker starting beside it widened past any effect (a 0.21 ratio read
/// [0.008, 5.8], "no change", with the pipeline and video tests running at once). CI runs them
/// by themselves anyway; the lock keeps them apart in a plain `cargo test` too. The other tests
/// here hold no verdict to a noise level (a gate's exit code follows its own table; the clock
/// test's change is 1.5×), so they do not take it: a test thread waiting on the lock is a core
/// idle (in CI four such waits held three of four test threads for minutes).
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static RUNS: std::sync::Mutex<()> = std::sync::Mutex::new(());
    RUNS.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn bin() -> assert_cmd::Command {
    assert_cmd::Command::cargo_bin("augbench").unwrap()
}

fn text(out: &Output) -> String {
    format!(
        "status {:?}\n--- stdout\n{}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The pinned Pillow of envs/pillow.txt (the released version the checkout is compared with).
fn locked_pillow() -> String {
    let lock = include_str!("../../../envs/pillow.txt");
    let line = lock.lines().find(|l| l.starts_with("pillow==")).unwrap();
    line.trim().to_string()
}

/// The blur the fixture slows and a fast row beside it.
const TRANSFORMS: [&str; 2] = ["--transforms", "GaussianBlur,HorizontalFlip"];

/// An A/B micro run of `GaussianBlur` and `HorizontalFlip` with the two `--variant` flags.
fn ab_run(out: &Path, baseline: &str, current: &str) -> Output {
    let shape = [&TRANSFORMS[..], &["--num-items", "20", "--num-runs", "3"]].concat();
    ab_run_shaped(out, baseline, current, &shape)
}

/// `ab_run` with its own shape (`--transforms`, `--num-items`, `--num-runs`).
fn ab_run_shaped(out: &Path, baseline: &str, current: &str, shape: &[&str]) -> Output {
    let config =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/examples/ab_versions.yaml");
    bin()
        .arg("run")
        .arg("--config")
        .arg(config)
        .arg("--output")
        .arg(out)
        .args(shape)
        .arg("--no-refresh-requirements")
        .args(["--variant", baseline, "--variant", current])
        .output()
        .unwrap()
}

/// `compare <out> --fail-on-regression` at the default minimum effect.
fn gate(out: &Path) -> Output {
    bin()
        .arg("compare")
        .arg(out)
        .arg("--fail-on-regression")
        .output()
        .unwrap()
}

fn result_files(dir: &Path) -> Vec<PathBuf> {
    let micro = dir.join("image-rgb/micro");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&micro)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
}

/// A real slowdown well past the default 5% minimum effect, as real work: 25% more of the blur's
/// work (the blur is most, not all, of the row's time), at the A/A test's shape (`ab_run`: 20
/// images × 3 runs, half the time of the benchmark's 50 images). Seeing 5% is the benchmark's
/// claim (`scripts/bench_verdicts.sh`: 9 of 10 invocations, docs/ab.md "Measured"), not this
/// test's: at this shape a CI run once left the interval at ±4.5%, and on a host running 1.6×
/// slower than usual 12% more work read 0.936 [0.871, 1.006], `undecided`. 25% failed the gate in
/// every run since but one, on the same slowed host (0.921 [0.845, 1.005]), where the extra work
/// read diluted for a reason not yet found (docs/ab.md).
fn slow_checkout(dir: &Path) -> PathBuf {
    fixture_checkout(&dir.join("pillow-slow"), &["0.25"])
}

/// A local checkout whose `Image.filter` takes `share` of its own time again, spent as `mode`
/// says (scripts/ab_fixture.sh): `thread`, the extra work on a helper thread the caller waits for;
/// `sleep`, the caller sleeping. Its thread CPU time and its wall time disagree.
fn clock_checkout(dir: &Path, share: &str, mode: &str) -> PathBuf {
    fixture_checkout(&dir.join(format!("pillow-{mode}")), &[share, mode])
}

/// `scripts/ab_fixture.sh <augbench> <checkout> <args…>`: a slowed local checkout of Pillow.
fn fixture_checkout(checkout: &Path, args: &[&str]) -> PathBuf {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/ab_fixture.sh");
    let out = std::process::Command::new("bash")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_augbench"))
        .arg(checkout)
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    checkout.to_path_buf()
}

/// The A/B rows of `compare DIR --format json`, by (current variant, transform).
fn ab_rows(out: &Path) -> Rows {
    let shown = bin()
        .arg("compare")
        .arg(out)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(shown.status.success(), "{}", text(&shown));
    let json: serde_json::Value = serde_json::from_slice(&shown.stdout).unwrap();
    let mut rows = std::collections::BTreeMap::new();
    collect_rows(&json, &mut rows);
    rows
}

type Rows = std::collections::BTreeMap<(String, String), serde_json::Value>;

fn collect_rows(v: &serde_json::Value, rows: &mut Rows) {
    let name = |m: &serde_json::Map<String, serde_json::Value>, key: &str| {
        m[key].as_str().unwrap_or_default().to_string()
    };
    match v {
        serde_json::Value::Object(m) if m.contains_key("baseline") && m.contains_key("verdict") => {
            rows.insert((name(m, "current"), name(m, "transform")), v.clone());
        }
        serde_json::Value::Object(m) => m.values().for_each(|x| collect_rows(x, rows)),
        serde_json::Value::Array(a) => a.iter().for_each(|x| collect_rows(x, rows)),
        _ => {}
    }
}

#[test]
fn a_pin_that_does_not_resolve_stops_the_run_before_anything_is_built() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("bad");
    let run = ab_run(
        &out,
        &format!("pillow@released={}", locked_pillow()),
        "pillow@none=pillow==0.0.424242",
    );
    let shown = text(&run);
    assert_eq!(run.status.code(), Some(2), "{shown}");
    assert!(
        shown.contains("pin `pillow==0.0.424242` of variant `pillow@none` does not resolve"),
        "{shown}"
    );
    assert!(!out.join("image-rgb").exists(), "nothing measured: {shown}");
}

#[test]
fn a_variant_whose_environment_fails_costs_that_variant_only() {
    let tmp = tempfile::tempdir().unwrap();
    let reqs = tmp.path().join("broken.txt");
    std::fs::write(&reqs, "augbench-no-such-distribution-xyz==1.0\n").unwrap();
    let out = tmp.path().join("half");
    // The smallest run: the test reads which variant failed and which file was written.
    let run = ab_run_shaped(
        &out,
        &format!("pillow@released={}", locked_pillow()),
        &format!("pillow@broken={}", reqs.display()),
        &[
            "--transforms",
            "HorizontalFlip",
            "--num-items",
            "4",
            "--num-runs",
            "1",
        ],
    );
    let shown = text(&run);
    assert_eq!(run.status.code(), Some(1), "{shown}");
    assert!(shown.contains("pillow@broken FAILED"), "{shown}");
    assert!(
        shown.contains("augbench-no-such-distribution-xyz"),
        "installer's lines: {shown}"
    );
    let names: Vec<PathBuf> = result_files(&out);
    assert_eq!(names.len(), 1, "{names:?}");
    assert!(names[0].ends_with("pillow@released_micro_results.json"));
}

/// `<name>==<version>` of the distribution `name` in the committed lock `lock`.
fn locked(lock: &str, name: &str) -> String {
    let prefix = format!("{name}==");
    let line = lock.lines().find(|l| l.starts_with(&prefix)).unwrap();
    line.trim().to_string()
}

/// The default label of a `==` pin: `pillow@11.3.0`.
fn label_of(library: &str, pin: &str) -> String {
    format!("{library}@{}", pin.split_once("==").unwrap().1)
}

/// The pin of the baseline release in configs/examples/ab_versions.yaml (the older Pillow).
fn older_pillow() -> String {
    let text = include_str!("../../../configs/examples/ab_versions.yaml");
    let cfg = augbench_core::RunConfig::from_yaml(text, Path::new("ab_versions.yaml")).unwrap();
    let first = &cfg.selection.variants.unwrap()[0];
    first.pin.clone().unwrap()
}

/// Runs an A/B config of HorizontalFlip into `dir/out`: `head` (scenario and mode lines), two
/// pinned variants of `library` (the first is the baseline), then `tail` (data and execution).
/// Returns the output folder and the (baseline, current) labels.
fn run_ab(
    dir: &Path,
    head: &str,
    library: &str,
    pins: [&str; 2],
    tail: &str,
) -> (PathBuf, String, String) {
    let variants: String = pins
        .iter()
        .map(|p| format!("    - {{library: {library}, pin: '{p}'}}\n"))
        .collect();
    let config = dir.join("ab.yaml");
    let yaml = format!(
        "version: 1\nselection:\n  {head}\n  transforms: [HorizontalFlip]\n  variants:\n{variants}{tail}\n"
    );
    std::fs::write(&config, yaml).unwrap();
    let out = dir.join("out");
    run_config(&config, &out);
    (out, label_of(library, pins[0]), label_of(library, pins[1]))
}

/// `augbench run --config <config> --output <out>`, which must succeed.
fn run_config(config: &Path, out: &Path) {
    let run = bin()
        .args(["run", "--no-refresh-requirements", "--config"])
        .arg(config)
        .arg("--output")
        .arg(out)
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", text(&run));
}

fn read_result(path: &Path) -> ResultFile {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{} missing: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// Each variant's file: labelled, measured with its own installed version, recorded as a
/// variant of `library` against `base`, interleaved, and `transform` paired with the partner.
fn assert_variant_file(file: &ResultFile, library: &str, pin: &str, partner: &str, base: &str) {
    let label = label_of(library, pin);
    let m = &file.metadata;
    assert_eq!(m.library, label);
    let version = pin.split_once("==").unwrap().1;
    assert_eq!(
        m.library_versions.get(library).map(String::as_str),
        Some(version),
        "{label} ran in its own environment: {:?}",
        m.library_versions
    );
    let v = m.variant.as_ref().unwrap();
    assert_eq!(
        (v.library.as_str(), v.label.as_str()),
        (library, label.as_str())
    );
    assert_eq!(v.baseline, base);
    assert_eq!(m.benchmark_params.schedule.as_deref(), Some("interleaved"));
    let flip = &file.results["HorizontalFlip"];
    assert_eq!(flip.status, Some(Status::Ok), "{label}: {flip:?}");
    assert!(!flip.paired.is_empty(), "{label}: {flip:?}");
    assert!(
        flip.paired.iter().all(|p| p.partner == partner),
        "{label}: {:?}",
        flip.paired
    );
}

/// `compare <out>` shows the A/B table of `heading` with a HorizontalFlip row that has a ratio and
/// a verdict word, and each gate's exit code follows the words of the table: 1 from
/// `--fail-on-regression` exactly when a row says `slower`, from `--fail-on-undecided` exactly
/// when a row says `undecided` (docs/ci.md: the flags compose; a gate wanting both passes both).
/// (A/B time runs take at least the pairs a verdict needs, so the
/// word is the data's, not a want of processes.)
fn assert_gates_follow_the_table(out: &Path, heading: &str) {
    let compare = bin().arg("compare").arg(out).output().unwrap();
    let shown = text(&compare);
    assert!(shown.contains(heading), "{heading} not in:\n{shown}");
    let table = &shown[shown.find(heading).unwrap()..];
    let rows: Vec<&str> = table.lines().filter(|l| l.starts_with("| ")).collect();
    let flip = rows
        .iter()
        .find(|l| l.starts_with("| HorizontalFlip |"))
        .unwrap_or_else(|| panic!("no HorizontalFlip row under {heading}:\n{shown}"));
    assert!(!flip.contains("too few worker-process pairs"), "{flip}");
    let verdict = |l: &&str| -> String {
        let cells = l.trim_end().trim_end_matches('|');
        cells
            .rsplit('|')
            .next()
            .unwrap_or("")
            .trim()
            .trim_matches('*')
            .to_string()
    };
    let says = |w: &str| {
        rows.iter()
            .map(verdict)
            .any(|v| v.trim().trim_matches('*').starts_with(w))
    };
    let slower = says("slower");
    let undecided = says("undecided");
    for (flag, fails) in [
        ("--fail-on-regression", slower),
        ("--fail-on-undecided", undecided),
    ] {
        let gate = bin().arg("compare").arg(out).arg(flag).output().unwrap();
        let want = if fails { 1 } else { 0 };
        assert_eq!(gate.status.code(), Some(want), "{flag}: {}", text(&gate));
    }
}

/// Pipeline mode: two Pillow releases, each with its own DataLoader (2 loader workers) in its own
/// environment over torch_stack, one file per label, windows interleaved in the same rounds, in
/// the process pairs a verdict needs (the config names none: `policy::ab_processes`).
#[test]
fn pipeline_variants_run_their_own_loaders_in_their_own_environments() {
    let tmp = tempfile::tempdir().unwrap();
    let (old, new) = (older_pillow(), locked_pillow());
    // Slow skip off: on this loaded 2-core machine the loader's 10-item preflight read above the
    // pipeline slow threshold (0.1 s an item at load 9), and a `slow` row has nothing to pair.
    let (out, base, cur) = run_ab(
        tmp.path(),
        "scenario: image-rgb\n  mode: pipeline",
        "pillow",
        [&old, &new],
        "data: {num_items: 16}\nexecution: {num_runs: 2, workers: 2, batch_size: 4, device: cpu, disable_slow_skip: true}",
    );
    for (pin, partner) in [(&old, &cur), (&new, &base)] {
        let name = format!(
            "{}_decode_dataloader_augment_n16_r2_w2_b4_results.json",
            label_of("pillow", pin)
        );
        let file = read_result(&out.join("image-rgb/pipeline").join(name));
        assert_variant_file(&file, "pillow", pin, partner, &base);
        let p = file.metadata.pipeline.as_ref().unwrap();
        assert_eq!((p.workers, p.main_process_loading), (2, false), "{p:?}");
        let d = file.results["HorizontalFlip"].pipeline.clone().unwrap();
        let workers: Vec<_> = d
            .worker_threads
            .iter()
            .map(|t| t["worker"].clone())
            .collect();
        assert_eq!(workers, [serde_json::json!(0), serde_json::json!(1)]);
        assert_eq!(
            file.results["HorizontalFlip"].process_runs.len() as u64,
            augbench_core::policy::ab_processes(augbench_core::Mode::Pipeline)
        );
    }
    assert_gates_follow_the_table(
        &out,
        &format!(
            "A/B {cur} ÷ {base} · image-rgb · pipeline · cpu · decode_dataloader_augment w2 b4"
        ),
    );
}

/// Video micro: two Kornia releases on 16-frame clips, each in its own environment over
/// torch_stack, paired over the same rounds.
#[test]
fn video_micro_variants_pair_clips_in_their_own_environments() {
    let tmp = tempfile::tempdir().unwrap();
    // The release before the locked one (pure Python, so it installs over the same torch).
    let (old, new) = (
        "kornia==0.8.3".to_string(),
        locked(include_str!("../../../envs/torch_stack.txt"), "kornia"),
    );
    let (out, base, cur) = run_ab(
        tmp.path(),
        "scenario: video-16f\n  mode: micro",
        "kornia",
        [&old, &new],
        "data: {num_items: 4}\nexecution: {num_runs: 3, processes: 4, device: cpu}",
    );
    for (pin, partner) in [(&old, &cur), (&new, &base)] {
        let name = format!("{}_micro_results.json", label_of("kornia", pin));
        let file = read_result(&out.join("video-16f/micro").join(name));
        assert_variant_file(&file, "kornia", pin, partner, &base);
        assert_eq!(file.metadata.scenario, "video-16f");
    }
    assert_gates_follow_the_table(
        &out,
        &format!("A/B {cur} ÷ {base} · video-16f · micro · cpu"),
    );
}

/// A current variant whose extra time its timing thread's CPU clock cannot see (work moved to a
/// helper thread it waits for; sleeping) is judged on the wall clock and says why, where the CPU
/// clock alone would read no change. 50% more time, so the choice of clock holds beside the other
/// tests; the changed row's verdict is never `same` there (a quiet machine reads `regression`:
/// the tests in `alone` hold verdicts, and that untouched rows stay on the CPU clock). Both
/// checkouts are variants of one run against the released Pillow: a 1.5× change needs few items
/// and runs to show (its ratio read 0.64–0.66 with intervals ±1% at 8 items × 2 runs), and a short
/// warmup (the test reads the clock, not a warm figure). Slow skip off: beside the other tests
/// a CI run's preflight read the slowed blur above the micro slow threshold (`baseline ok, current
/// slow`), and a `slow` row has nothing to pair.
#[test]
fn time_on_a_helper_thread_or_asleep_is_judged_on_the_wall_clock() {
    let tmp = tempfile::tempdir().unwrap();
    let modes = ["thread", "sleep"];
    let checkouts: String = modes
        .iter()
        .map(|mode| {
            let checkout = clock_checkout(tmp.path(), "0.5", mode);
            format!(
                "    - {{library: pillow, label: 'pillow@{mode}', path: '{}'}}\n",
                checkout.display()
            )
        })
        .collect();
    let config = tmp.path().join("clock.yaml");
    std::fs::write(
        &config,
        format!(
            "version: 1\nselection:\n  scenario: image-rgb\n  mode: micro\n  transforms: [GaussianBlur, HorizontalFlip]\n  variants:\n    - {{library: pillow, label: 'pillow@released', pin: '{}'}}\n{checkouts}data: {{num_items: 8}}\nexecution: {{num_runs: 2, disable_slow_skip: true, warmup: {{window: 2, min_windows: 1}}}}\n",
            locked_pillow()
        ),
    )
    .unwrap();
    let out = tmp.path().join("ab");
    run_config(&config, &out);
    let rows = ab_rows(&out);
    for mode in modes {
        let current = format!("pillow@{mode}");
        let blur = &rows[&(current.clone(), "GaussianBlur".to_string())];
        assert_eq!(blur["baseline"], "pillow@released", "{mode}: {blur:#}");
        assert_eq!(blur["clock"], "wall", "{mode}: {blur:#}");
        assert!(
            blur["clock_note"].as_str().is_some_and(|n| !n.is_empty()),
            "{mode}: {blur:#}"
        );
        assert!(
            blur["verdict"] == "regression" || blur["verdict"] == "undecided",
            "{mode}: {blur:#}"
        );
        // The untouched row is left alone here: beside three other tests its CPU ÷ wall moves
        // with the load (a CI run read 0.91 against 0.99 and went to the wall clock; another read
        // 0.959 [0.932, 0.987] on the CPU clock). The A/A test in `alone` holds its clock.
        let flip = &rows[&(current, "HorizontalFlip".to_string())];
        assert_eq!(
            flip["clock_note"].is_null(),
            flip["clock"] == "cpu",
            "{mode}: {flip:#}"
        );
    }
}

/// The verdict tests: the A/B gate must fail a slower checkout and pass the same version twice.
mod alone {
    use super::*;

    #[test]
    fn a_slower_local_checkout_fails_the_gate_in_one_run() {
        let _one = one_at_a_time();
        let tmp = tempfile::tempdir().unwrap();
        let checkout = slow_checkout(tmp.path());
        let out = tmp.path().join("ab");
        let base = format!("pillow@released={}", locked_pillow());
        let cur = format!("pillow@local={}", checkout.display());
        let run = ab_run(&out, &base, &cur);
        assert!(run.status.success(), "{}", text(&run));
        let files = result_files(&out);
        let names: Vec<String> = files
            .iter()
            .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            [
                "pillow@local_micro_results.json",
                "pillow@released_micro_results.json"
            ]
        );
        let local: ResultFile =
            serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
        let v = local.metadata.variant.as_ref().unwrap();
        assert_eq!(
            (v.library.as_str(), v.baseline.as_str()),
            ("pillow", "pillow@released")
        );
        assert_eq!(local.metadata.library, "pillow@local");
        let blur = &local.results["GaussianBlur"];
        let paired = &blur.paired;
        assert!(
            paired.iter().all(|p| p.partner == "pillow@released"),
            "{paired:?}"
        );
        // The variants alternate in chunks of items within each round (docs/ab.md).
        assert!(
            blur.run_chunks.is_some_and(|c| c > 1),
            "{:?}",
            blur.run_chunks
        );
        let verdicts = gate(&out);
        let shown = text(&verdicts);
        assert_eq!(
            verdicts.status.code(),
            Some(1),
            "{shown}\n--- run\n{}",
            text(&run)
        );
        assert!(
            shown.contains("| GaussianBlur |") && shown.contains("**slower**"),
            "{shown}"
        );
    }

    #[test]
    fn the_same_version_twice_passes_the_gate() {
        let _one = one_at_a_time();
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("aa");
        let pin = locked_pillow();
        let run = ab_run(&out, &format!("pillow@a={pin}"), &format!("pillow@b={pin}"));
        assert!(run.status.success(), "{}", text(&run));
        let verdicts = gate(&out);
        let shown = text(&verdicts);
        assert_eq!(verdicts.status.code(), Some(0), "{shown}");
        assert!(shown.contains("A/B pillow@b ÷ pillow@a"), "{shown}");
        assert!(!shown.contains("**slower**"), "{shown}");
        // The same code twice: the clocks agree, so no row leaves the CPU clock.
        for (name, row) in ab_rows(&out) {
            assert_eq!(row["clock"], "cpu", "{name:?}: {row:#}");
            assert!(row["clock_note"].is_null(), "{name:?}: {row:#}");
        }
    }
}
