//! The interleaved schedule end to end, on the real binary and the native Rust workers: the
//! default for micro runs, paired speedups from the same rounds, a transform that only one
//! library supports runs alone, a worker that dies mid-round costs only its own row, `--resume`
//! re-measures a transform across all libraries, `--schedule sequential` pairs nothing, and
//! `compare` shows the paired speedups from the result files and from the cell log.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

use std::path::PathBuf;

use assert_cmd::Command;
use augbench_core::results::{ResultFile, Status, TransformResult};
use predicates::str::contains;

const LIBS: [&str; 3] = ["image", "fast_image_resize", "kornia-rs"];

struct Env {
    _tmp: tempfile::TempDir,
    root: PathBuf,
}

impl Env {
    /// A config of the three crates × HorizontalFlip (image, kornia-rs), Resize (all three) and
    /// Pad (kornia-rs alone), with a short warmup: 3 timed requests of setup, then a rewarm and a
    /// timed run a round.
    fn new(processes: u64, runs: u64) -> Env {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().to_path_buf();
        let text = format!(
            "version: 1\nselection:\n  scenario: image-rgb\n  libraries: [{}]\n  transforms: [HorizontalFlip, Resize, Pad]\n\
             data:\n  num_items: 12\nexecution:\n  num_runs: {runs}\n  processes: {processes}\n  min_time: 0.002\n  request_timeout_sec: 20\n  slow_threshold_sec_per_item: 5\n\
             \x20 warmup:\n    window: 5\n    max_passes: 5\n    min_windows: 1\n\
             output:\n  output_dir: {}\n",
            LIBS.join(", "),
            root.join("out").display()
        );
        std::fs::write(root.join("cfg.yaml"), text).unwrap();
        Env { _tmp: tmp, root }
    }

    fn cmd(&self, faults: &str) -> Command {
        let mut c = Command::cargo_bin("augbench").unwrap();
        c.env("AUGBENCH_CACHE", self.root.join("cache"))
            .env("AUGBENCH_TEST_FAULTS", faults)
            .env("TMPDIR", &self.root) // the `level` fault's marker files
            .arg("run")
            .arg("--config")
            .arg(self.root.join("cfg.yaml"));
        c
    }

    fn path(&self, lib: &str) -> PathBuf {
        self.root
            .join(format!("out/image-rgb/micro/{lib}_micro_results.json"))
    }

    fn results(&self, lib: &str) -> ResultFile {
        let text = std::fs::read_to_string(self.path(lib)).unwrap();
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("schema drift for {lib}: {e}"))
    }

    fn result(&self, lib: &str, t: &str) -> TransformResult {
        self.results(lib).results[t].clone()
    }
}

fn partners(r: &TransformResult) -> Vec<&str> {
    r.paired.iter().map(|p| p.partner.as_str()).collect()
}

#[test]
fn interleaved_is_the_default_and_pairs_libraries_round_by_round() {
    let env = Env::new(2, 3);
    env.cmd("").assert().success();
    for lib in LIBS {
        let params = &env.results(lib).metadata.benchmark_params;
        assert_eq!(params.schedule.as_deref(), Some("interleaved"), "{lib}");
    }
    let resize: Vec<TransformResult> = LIBS.iter().map(|l| env.result(l, "Resize")).collect();
    let id = resize[0].rounds_id.clone();
    assert!(id.is_some());
    for (lib, r) in LIBS.iter().zip(&resize) {
        assert_eq!(r.status, Some(Status::Ok), "{lib}: {:?}", r.reason);
        assert_eq!(r.rounds_id, id, "{lib} ran in the same rounds");
        assert_eq!(r.process_runs, vec![3, 3]);
        assert_eq!(r.paired.len(), 2, "{lib}: {:?}", partners(r));
        let drift = r.drift.as_ref().expect("the sentinel timed every round");
        assert_eq!(drift.times_ms.len(), 6);
    }
    // image ÷ fast_image_resize, round by round.
    let p = &resize[0]
        .paired
        .iter()
        .find(|p| p.partner == "fast_image_resize")
        .unwrap();
    assert_eq!(p.rounds, 6);
    for (i, ratio) in p.ratios.iter().enumerate() {
        let want = resize[0].throughputs[i] / resize[1].throughputs[i];
        assert!((ratio - want).abs() < 1e-9 * want, "round {i}");
    }
    assert!(p.ci_low <= p.ratio && p.ratio <= p.ci_high);
    // HorizontalFlip: fast_image_resize answers unsupported and drops out; the others pair.
    let flip_fir = env.result("fast_image_resize", "HorizontalFlip");
    assert_eq!(flip_fir.status, Some(Status::Unsupported));
    assert_eq!(
        partners(&env.result("image", "HorizontalFlip")),
        ["kornia-rs"]
    );
    // Pad: kornia-rs alone, and it says so.
    let pad = env.result("kornia-rs", "Pad");
    assert_eq!((pad.status, pad.alone), (Some(Status::Ok), Some(true)));
    assert!(pad.paired.is_empty());
    // `compare` draws speedups from the paired rounds, from the results and from the cell log.
    let out = env.root.join("out");
    for input in [out.clone(), out.join("cells.parquet")] {
        let mut c = Command::cargo_bin("augbench").unwrap();
        c.args(["compare", "--reference-library", "image"])
            .arg(&input)
            .assert()
            .success()
            .stdout(contains("are paired (2 of 2 rows)"))
            .stdout(contains("× ["))
            .stdout(contains("(2 paired)"));
    }
}

#[test]
fn a_worker_that_dies_mid_round_costs_only_its_row() {
    let env = Env::new(1, 4);
    // kornia-rs exits on its 5th Resize request: after 3 of setup and round 1's rewarm, the
    // timed run of round 1.
    env.cmd("exit:Resize@kornia-rs+4").assert().success();
    let dead = env.result("kornia-rs", "Resize");
    assert_eq!(dead.status, Some(Status::Error));
    let reason = dead.reason.unwrap_or_default();
    assert!(reason.contains("exit code 3"), "{reason}");
    for lib in ["image", "fast_image_resize"] {
        let r = env.result(lib, "Resize");
        assert_eq!(r.status, Some(Status::Ok), "{lib}");
        assert_eq!(r.throughputs.len(), 4, "{lib} kept all its rounds");
        assert_eq!(r.paired.len(), 1, "{lib}: {:?}", partners(&r));
    }
    // A fresh worker measures the next transform.
    let pad = env.result("kornia-rs", "Pad");
    assert_eq!(pad.status, Some(Status::Ok));
}

#[test]
fn resume_measures_an_unfinished_transform_again_in_every_library() {
    let env = Env::new(1, 3);
    env.cmd("").assert().success();
    let flip_id = env.result("image", "HorizontalFlip").rounds_id;
    let resize_id = env.result("image", "Resize").rounds_id;
    // As if the run had stopped before kornia-rs finished Resize.
    let path = env.path("kornia-rs");
    let mut file = env.results("kornia-rs");
    file.results.remove("Resize");
    std::fs::write(&path, serde_json::to_vec_pretty(&file).unwrap()).unwrap();
    env.cmd("").arg("--resume").assert().success();
    assert_eq!(
        env.result("image", "HorizontalFlip").rounds_id,
        flip_id,
        "kept"
    );
    let again: Vec<_> = LIBS
        .iter()
        .map(|l| env.result(l, "Resize").rounds_id)
        .collect();
    assert_ne!(again[0], resize_id, "measured again");
    assert!(again.iter().all(|id| *id == again[0]), "{again:?}");
    assert_eq!(env.result("kornia-rs", "Resize").paired.len(), 2);
}

#[cfg(unix)]
#[test]
fn ctrl_c_loses_only_the_transform_in_flight_and_resume_pairs_it() {
    let env = Env::new(1, 2);
    let cfg = env.root.join("cfg.yaml");
    let text = std::fs::read_to_string(&cfg)
        .unwrap()
        .replace("request_timeout_sec: 20", "request_timeout_sec: 4")
        .replace(
            "[HorizontalFlip, Resize, Pad]",
            "[Resize, HorizontalFlip, Pad]",
        );
    std::fs::write(&cfg, text).unwrap();
    // kornia-rs hangs on HorizontalFlip (shape-preserving, so it passes the contract check), and
    // the run is still in it when Ctrl-C comes.
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("augbench"))
        .env("AUGBENCH_CACHE", env.root.join("cache"))
        .env("AUGBENCH_TEST_FAULTS", "hang:HorizontalFlip@kornia-rs")
        .args(["run", "--config"])
        .arg(&cfg)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while !std::fs::read_to_string(env.path("kornia-rs")).is_ok_and(|t| t.contains("\"paired\"")) {
        assert!(start.elapsed().as_secs() < 120, "Resize never finished");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let kill = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    assert_eq!(
        child.wait().unwrap().code(),
        Some(1),
        "an interrupted run exits 1"
    );
    let resize_id = env.result("image", "Resize").rounds_id;
    for lib in LIBS {
        assert!(
            env.results(lib).results.contains_key("Resize"),
            "{lib} kept Resize"
        );
    }
    for lib in ["image", "kornia-rs"] {
        let f = env.results(lib);
        assert!(
            !f.results.contains_key("HorizontalFlip"),
            "{lib}: in flight, not recorded"
        );
    }
    env.cmd("").arg("--resume").assert().success();
    assert_eq!(
        env.result("image", "Resize").rounds_id,
        resize_id,
        "not measured again"
    );
    for lib in ["image", "kornia-rs"] {
        let r = env.result(lib, "HorizontalFlip");
        assert_eq!((r.status, r.paired.len()), (Some(Status::Ok), 1), "{lib}");
    }
}

#[test]
fn sequential_schedule_measures_one_library_after_another_and_pairs_nothing() {
    let env = Env::new(1, 2);
    env.cmd("")
        .args(["--schedule", "sequential"])
        .assert()
        .success();
    for lib in LIBS {
        let f = env.results(lib);
        assert_eq!(
            f.metadata.benchmark_params.schedule.as_deref(),
            Some("sequential")
        );
        assert!(
            f.results
                .values()
                .all(|r| r.paired.is_empty() && r.rounds_id.is_none())
        );
    }
}

#[test]
fn plan_names_the_schedule_and_the_memory_it_holds() {
    let env = Env::new(1, 2);
    let mut c = Command::cargo_bin("augbench").unwrap();
    c.args(["plan", "--config"])
        .arg(env.root.join("cfg.yaml"))
        .assert()
        .success()
        .stdout(contains("name: interleaved"))
        .stdout(contains("memory_held_at_once:"));
    let mut c = Command::cargo_bin("augbench").unwrap();
    c.args(["plan", "--libraries", "image", "--config"])
        .arg(env.root.join("cfg.yaml"))
        .assert()
        .success()
        .stdout(contains("name: sequential"))
        .stdout(contains("one library"));
}

#[test]
fn every_result_file_keeps_its_time_per_row_and_the_summary_sums_it() {
    let env = Env::new(1, 2);
    env.cmd("")
        .args(["--transforms", "Resize"])
        .assert()
        .success()
        .stdout(contains("time by library: "))
        .stdout(contains("time by row kind: "));
    let (mut rows_sec, mut wall) = (0.0, 0.0_f64);
    for lib in LIBS {
        let m = env.results(lib).metadata;
        let part = |transform: &str, part: &str| {
            m.time_by_row
                .iter()
                .filter(|r| r.transform == transform)
                .flat_map(|r| &r.parts)
                .filter(|p| p.part == part)
                .map(|p| p.seconds)
                .sum::<f64>()
        };
        assert!(
            part("Resize", "timed runs") > 0.0,
            "{lib}: {:?}",
            m.time_by_row
        );
        assert!(part("", "worker start") > 0.0, "{lib}: {:?}", m.time_by_row);
        rows_sec += m.time_by_row.iter().map(|r| r.seconds()).sum::<f64>();
        wall = wall.max(m.time_split.expect("time split").wall_sec);
    }
    assert!(rows_sec <= wall, "rows {rows_sec} s > the run's {wall} s");
}

#[test]
fn a_target_out_of_reach_takes_no_process_beyond_the_ones_that_show_it() {
    let env = Env::new(2, 3);
    // Every other worker process settles at twice the time (real extra work), so no number of
    // processes narrows the interval to the target. Each process's own rounds agree; the third
    // process shows the spread, and the projection to the most processes says it stays wider.
    env.cmd("level100:Pad@kornia-rs")
        .args(["--precision", "0.03", "--transform-budget", "600"])
        .args(["--transforms", "Pad"])
        .assert()
        .success()
        .stdout(contains("out of reach"));
    let units = augbench_core::policy::MIN_PROCESS_UNITS;
    let r = env.result("kornia-rs", "Pad");
    let p = r.precision.clone().expect("record");
    let over = format!("over {units} worker processes, out of reach");
    assert!(!p.reached && p.note.contains(&over), "{p:?}");
    assert_eq!(r.process_runs.len(), units, "{:?}", r.process_runs);
    assert!(p.seconds < p.budget_sec, "stopped with budget left: {p:?}");
}

#[test]
fn plan_estimates_the_time_and_says_what_on() {
    let env = Env::new(1, 2);
    let mut c = Command::cargo_bin("augbench").unwrap();
    c.args(["plan", "--config"])
        .arg(env.root.join("cfg.yaml"))
        .assert()
        .success()
        .stdout(contains("# time estimate: ~"))
        .stdout(contains(
            "rows from the shipped cost table (specs/costs.yaml: ",
        ));
    env.cmd("").assert().success();
    let mut c = Command::cargo_bin("augbench").unwrap();
    c.args(["plan", "--precision", "0.05", "--config"])
        .arg(env.root.join("cfg.yaml"))
        .assert()
        .success()
        .stdout(contains(" to "))
        .stdout(contains("rows from earlier results"));
}

/// Before any run, the rows an adapter does not build cost nothing in the estimate: the
/// quickstart's Rust crates and Pillow build a fraction of the paper set, and the estimate says
/// how many rows it left out (a run's summary counts the same rows `unsupported`).
#[test]
fn plan_leaves_out_the_rows_the_adapters_do_not_build() {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = Command::cargo_bin("augbench")
        .unwrap()
        .current_dir(tmp.path())
        .args(["plan", "--config"])
        .arg(root.join("configs/examples/quickstart.yaml"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.contains("rows the adapters do not build cost nothing"))
        .unwrap_or_else(|| panic!("no adapter line in:\n{text}"));
    let n: usize = line
        .rsplit("; ")
        .next()
        .and_then(|p| p.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    assert!(
        n > 100,
        "the Rust crates build few of the paper set: {line}"
    );
}

/// The tests whose verdict waits on a loose target being *reached* over the configured
/// processes (a target is never reached over fewer than `policy::MIN_PROCESS_UNITS`): a row's
/// fastest-run interval over pooled runs widens past ±90% when one run falls
/// in a moment the cores are free and the rest share them with other tests (CI runs four at a
/// time on 2 cores). They run last, by themselves, with the other `alone` modules.
mod alone {
    use super::*;

    /// One library: a row of its own has only its figure's interval to narrow. A pair's interval
    /// over 3 processes of 12-item runs (the runs of some crates here are bimodal, 800 and 1300
    /// img/s in one process) stays wider than any target below ±100%.
    const ONE: [&str; 1] = ["image"];

    #[test]
    fn a_precision_target_stops_rounds_when_reached_and_says_when_not() {
        let units = augbench_core::policy::MIN_PROCESS_UNITS;
        let env = Env::new(units as u64, 3);
        // A loose target stops the rounds once reached, and a row says where it stands. Whether
        // ±90% is reached over 3 processes is the machine's: with 4.5 times a resampled interval
        // over 3 units, processes ~15% apart (CI, under load) already leave it wider.
        env.cmd("")
            .args(["--precision", "0.9", "--transform-budget", "30"])
            .args(["--libraries", ONE[0]])
            .assert()
            .success()
            .stdout(contains("precision ±90.0%: reached in"))
            .stdout(contains("time: "));
        let min = augbench_core::policy::PRECISION_MIN_ROUNDS;
        for lib in ONE {
            let r = env.result(lib, "Resize");
            let p = r
                .precision
                .clone()
                .unwrap_or_else(|| panic!("{lib}: no record"));
            if p.reached {
                // Never over fewer processes than show their spread; one more when the configured
                // ones left it wider (the rule's unit tests pin "no process once reached").
                let taken = r.process_runs.len() as u64;
                let most = augbench_core::policy::PRECISION_MAX_PROCESSES;
                assert!(
                    (units as u64..=most).contains(&taken),
                    "{lib}: {taken} processes"
                );
            } else {
                let more = r.process_runs.len() > units || p.seconds >= p.budget_sec;
                assert!(p.note.starts_with("not reached") && more, "{lib}: {p:?}");
            }
            // It waits for the minimum in each process. How soon after it the rows are narrow
            // depends on the machine's noise (the pure rule's unit tests pin "stops at the minimum
            // when narrow"); under CI load a real row may need many more.
            assert!(
                p.rounds >= units as u64 * min,
                "{lib}: {} rounds, the minimum is {min} in each of {units} processes",
                p.rounds
            );
            assert_eq!(
                r.throughputs.len() as u64,
                p.rounds,
                "{lib}: one run per round"
            );
            let split = env.results(lib).metadata.time_split.expect("time split");
            assert!(
                split.measuring_sec() > 0.0 && split.wall_sec > 0.0,
                "{split:?}"
            );
        }
        // An unreachable target (processes at two speed levels) stops, at the budget or out of
        // reach, and says so.
        env.cmd("level100:Resize@image")
            .args(["--precision", "0.03", "--transform-budget", "0.2"])
            .assert()
            .success()
            .stdout(contains("not reached"));
        let r = env.result("image", "Resize");
        let p = r.precision.clone().expect("record");
        assert!(!p.reached && p.note.starts_with("not reached"), "{p:?}");
        assert!(
            r.process_runs.len() as u64 <= augbench_core::policy::PRECISION_MAX_PROCESSES,
            "{:?}",
            r.process_runs
        );
    }

    #[test]
    fn resume_takes_the_extra_processes_a_precision_run_was_stopped_before() {
        let units = augbench_core::policy::MIN_PROCESS_UNITS;
        let env = Env::new(units as u64, 3);
        // A budget the configured processes spend: the first run takes no extra process whether
        // or not its rows reach the target.
        let args = ["--precision", "0.9", "--transform-budget", "0.2"];
        let args = [&args[..], &["--libraries", ONE[0]]].concat();
        env.cmd("").args(&args).assert().success();
        // As if the run had stopped after its configured processes, before Resize's extra ones:
        // its record is not reached yet, with all of its budget left.
        for lib in ONE {
            let mut file = env.results(lib);
            let r = file.results.get_mut("Resize").unwrap();
            assert_eq!(r.process_runs.len(), units, "{lib}: {:?}", r.process_runs);
            let p = r.precision.as_mut().unwrap();
            (p.reached, p.seconds) = (false, 0.0);
            std::fs::write(env.path(lib), serde_json::to_vec(&file).unwrap()).unwrap();
        }
        let flip_before = env.result("image", "HorizontalFlip");
        let runs_before = flip_before.throughputs.len();
        let flip_done = !augbench_stats::precision::another_process(
            flip_before.precision.as_ref().expect("record"),
            flip_before.process_runs.len() as u64,
            augbench_core::policy::PRECISION_MAX_PROCESSES,
        );
        env.cmd("").args(&args).arg("--resume").assert().success();
        for lib in ONE {
            let r = env.result(lib, "Resize");
            assert!(r.process_runs.len() > units, "{lib}: {:?}", r.process_runs);
            assert_eq!(
                r.throughputs.len() as u64,
                r.process_runs.iter().sum::<u64>()
            );
            let drift = r.drift.expect("the sentinel's times");
            assert_eq!(
                drift.times_ms.len(),
                r.throughputs.len(),
                "{lib}: one per round"
            );
        }
        // The first run took every process the rule wanted for it (reached, budget spent or at
        // the most processes), so resume keeps it as it was.
        assert!(flip_done, "{:?}", flip_before.precision);
        let flip = env.result("image", "HorizontalFlip");
        assert_eq!(
            flip.throughputs.len(),
            runs_before,
            "a transform the rule had finished is kept as it was"
        );
    }
}
