//! Crash safety of the real binary: a coordinator killed with SIGKILL mid-run loses nothing it
//! finished (`--resume` keeps those entries byte for byte), a results write that fails (a full
//! disk, simulated) leaves the previous file intact and exits 1 naming it, and a results file cut
//! short by hand is reported by `compare` and `report` with its path and byte offset.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

use std::path::{Path, PathBuf};
use std::process::{Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::Command;
use augbench_core::results::{ResultFile, Status};
use predicates::prelude::*;
use serde_json::Value;

const TRANSFORMS: [&str; 3] = ["HorizontalFlip", "VerticalFlip", "Grayscale"];

struct Env {
    _tmp: tempfile::TempDir,
    root: PathBuf,
}

impl Env {
    fn new() -> Env {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().to_path_buf();
        Env { _tmp: tmp, root }
    }

    fn path(&self, p: &str) -> PathBuf {
        self.root.join(p)
    }

    /// A native-only config: `libraries` × the three transforms, one process, a long request
    /// timeout (so a hanging transform stays in flight until the test acts).
    fn config(&self, libraries: &str) -> PathBuf {
        let text = format!(
            "version: 1\nselection:\n  scenario: image-rgb\n  mode: micro\n  libraries: [{libraries}]\n  transforms: [{}]\n\
             data:\n  num_items: 6\nexecution:\n  num_runs: 2\n  processes: 1\n  min_time: 0.002\n  request_timeout_sec: 120\n  warmup:\n    max_seconds: 0.2\n\
             output:\n  output_dir: {}\n",
            TRANSFORMS.join(", "),
            self.path("out").display()
        );
        let p = self.path("cfg.yaml");
        std::fs::write(&p, text).unwrap();
        p
    }

    fn results_path(&self, lib: &str) -> PathBuf {
        self.path(&format!("out/image-rgb/micro/{lib}_micro_results.json"))
    }

    fn cmd(&self) -> Command {
        let mut c = Command::cargo_bin("augbench").unwrap();
        c.env("AUGBENCH_CACHE", self.path("cache"))
            .env_remove("AUGBENCH_TEST_FAULTS");
        c
    }

    fn run(&self, cfg: &Path, faults: Option<&str>) -> assert_cmd::assert::Assert {
        let mut c = self.cmd();
        if let Some(f) = faults {
            c.env("AUGBENCH_TEST_FAULTS", f);
        }
        c.args(["run", "--config"]).arg(cfg).assert()
    }
}

/// The `results` entries of a result file as raw JSON values (what is on disk, byte for byte
/// after serde_json's number round trip).
fn raw_results(path: &Path) -> serde_json::Map<String, Value> {
    let text = std::fs::read_to_string(path).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    v["results"].as_object().cloned().unwrap_or_default()
}

fn strict(path: &Path) -> ResultFile {
    let text = std::fs::read_to_string(path).unwrap();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Temp files a writer left in the folder of `path`.
fn leftovers(path: &Path) -> Vec<String> {
    std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp"))
        .collect()
}

fn wait_for(what: &str, ready: impl Fn() -> bool) {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(120) {
        if ready() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("{what} never happened");
}

/// A coordinator started in a process group of its own; dropping it kills whatever of the group
/// is left (the workers a killed coordinator orphaned).
#[cfg(unix)]
struct Group(std::process::Child);

#[cfg(unix)]
impl Group {
    fn spawn(env: &Env, cfg: &Path, faults: &str) -> Group {
        use std::os::unix::process::CommandExt;
        let child = StdCommand::new(assert_cmd::cargo::cargo_bin("augbench"))
            .env("AUGBENCH_CACHE", env.path("cache"))
            .env("AUGBENCH_TEST_FAULTS", faults)
            .args(["run", "--config"])
            .arg(cfg)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap();
        Group(child)
    }

    fn kill(pid: &str) {
        let _ = StdCommand::new("kill").args(["-KILL", pid]).status();
    }
}

#[cfg(unix)]
impl Drop for Group {
    fn drop(&mut self) {
        // `pkill -g` matches only members of this group. Never `kill -KILL -<pgid>`: once the
        // group is gone, some `kill` builds read that as `-1` and signal every process we own.
        let pgid = self.0.id().to_string();
        let _ = StdCommand::new("pkill")
            .args(["-KILL", "-g", &pgid])
            .status();
        let _ = self.0.wait();
    }
}

#[cfg(unix)]
#[test]
fn sigkill_of_the_coordinator_then_resume_keeps_every_finished_transform_byte_for_byte() {
    let env = Env::new();
    let libraries = ["image", "kornia-rs"];
    let cfg = env.config(&libraries.join(", "));
    // Both libraries hang on VerticalFlip: HorizontalFlip is finished and on disk, VerticalFlip
    // is in flight when the coordinator dies.
    let mut group = Group::spawn(&env, &cfg, "hang:VerticalFlip");
    wait_for("HorizontalFlip on disk for every library", || {
        libraries.iter().all(|l| {
            std::fs::read_to_string(env.results_path(l))
                .ok()
                .and_then(|t| serde_json::from_str::<ResultFile>(&t).ok())
                .is_some_and(|f| f.results.contains_key("HorizontalFlip"))
        })
    });
    Group::kill(&group.0.id().to_string());
    let status = group.0.wait().unwrap();
    assert!(!status.success(), "killed: {status:?}");

    let mut before = Vec::new();
    for lib in libraries {
        let path = env.results_path(lib);
        let file = strict(&path);
        let raw = raw_results(&path);
        assert!(
            !raw.contains_key("VerticalFlip"),
            "{lib}: the transform in flight is not on disk"
        );
        let finished: Vec<(String, Value)> = file
            .results
            .iter()
            .filter(|(_, r)| r.is_finished())
            .map(|(name, _)| (name.clone(), raw[name].clone()))
            .collect();
        assert!(
            finished.iter().any(|(n, _)| n == "HorizontalFlip"),
            "{lib}: {finished:?}"
        );
        before.push((lib, finished));
    }

    env.cmd()
        .args(["run", "--resume", "--config"])
        .arg(&cfg)
        .assert()
        .success();
    for (lib, finished) in before {
        let path = env.results_path(lib);
        let after = raw_results(&path);
        for (name, value) in finished {
            assert_eq!(after[&name], value, "{lib} / {name} changed on resume");
        }
        let file = strict(&path);
        for t in TRANSFORMS {
            assert_eq!(
                file.results.get(t).and_then(|r| r.status),
                Some(Status::Ok),
                "{lib} / {t} after resume"
            );
        }
    }
}

#[test]
fn a_failed_results_write_keeps_the_previous_file_and_exits_1_naming_it() {
    let env = Env::new();
    let cfg = env.config("image");
    env.run(&cfg, None).success();
    let path = env.results_path("image");
    let previous = std::fs::read(&path).unwrap();

    // The disk is full from the first write on: the earlier run's file stays as it was.
    let name = "diskfull:image_micro_results.json";
    env.run(&cfg, Some(name))
        .code(1)
        .stderr(predicate::str::contains(path.display().to_string()))
        .stderr(predicate::str::contains("No space left on device"))
        .stderr(predicate::str::contains("panicked").not());
    assert_eq!(
        std::fs::read(&path).unwrap(),
        previous,
        "previous file intact"
    );
    assert_eq!(leftovers(&path), Vec::<String>::new());

    // The disk fills up mid-run, a few writes in: the file holds the last complete write (it
    // parses, strictly), short of the transforms still to come, and nothing half written.
    env.run(&cfg, Some(&format!("{name}+3")))
        .code(1)
        .stderr(predicate::str::contains(path.display().to_string()));
    let file = strict(&path);
    assert!(
        file.results.len() < TRANSFORMS.len(),
        "{:?}",
        file.results.keys()
    );
    assert_eq!(leftovers(&path), Vec::<String>::new());
}

#[test]
fn a_truncated_results_file_is_reported_with_path_and_byte_offset() {
    let env = Env::new();
    let cfg = env.config("image");
    env.run(&cfg, None).success();
    let good = std::fs::read(env.results_path("image")).unwrap();
    let cut = env.path("cut");
    std::fs::create_dir_all(&cut).unwrap();
    for at in [0, 1, good.len() / 3, good.len() - 2] {
        let file = cut.join("image_micro_results.json");
        std::fs::write(&file, &good[..at]).unwrap();
        let shown = file.display().to_string();
        let ends = format!("ends early at byte {at} (line ");
        for args in [
            vec!["compare".to_string(), cut.display().to_string()],
            vec![
                "report".into(),
                "--results".into(),
                shown.clone(),
                "--out".into(),
                env.path("r.html").display().to_string(),
            ],
        ] {
            env.cmd()
                .args(&args)
                .assert()
                .code(2)
                .stderr(predicate::str::contains(&shown))
                .stderr(predicate::str::contains(&ends))
                .stderr(predicate::str::contains("hint: the file is truncated"))
                .stderr(predicate::str::contains("panicked").not());
        }
    }
}
