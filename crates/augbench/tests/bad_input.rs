//! The bad-input corpus: every `<case>.expect` file under `tests/bad_input/` is one case, run
//! through the real binary. Its input is the file named like it without `.expect`; the expect
//! file holds the command, the exit code and message fragments (format in bad_input/README.md).
//! Adding a case is adding a file (and its `.expect`); this one test walks the whole folder.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The corpus must not shrink below the size issue 15 asked for.
const MIN_CASES: usize = 60;
/// Cases run side by side (most of their time is process start-up and waiting on workers).
const THREADS: usize = 4;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bad_input")
}

#[derive(Debug, Default)]
struct Case {
    expect: PathBuf,
    input: PathBuf,
    command: String,
    exit: i32,
    stderr_contains: Vec<String>,
    stdout_contains: Vec<String>,
    /// Failures must name the input file and carry a hint, unless the case says why not.
    names_input: bool,
}

impl Case {
    fn parse(expect: &Path) -> Result<Case, String> {
        let text = std::fs::read_to_string(expect).map_err(|e| e.to_string())?;
        let input = PathBuf::from(expect.to_string_lossy().trim_end_matches(".expect"));
        let mut case = Case {
            expect: expect.to_path_buf(),
            input,
            exit: -1,
            names_input: true,
            ..Case::default()
        };
        for line in text.lines().map(str::trim) {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (key, value) = line
                .split_once(':')
                .ok_or_else(|| format!("not `key: value`: {line}"))?;
            let value = value.trim().to_string();
            match key.trim() {
                "command" => case.command = value,
                "exit" => case.exit = value.parse().map_err(|_| format!("bad exit: {value}"))?,
                "stderr_contains" => case.stderr_contains.push(value),
                "stdout_contains" => case.stdout_contains.push(value),
                "names_input" => case.names_input = value != "no",
                other => return Err(format!("unknown key `{other}`")),
            }
        }
        if case.command.is_empty() || case.exit < 0 {
            return Err("needs `command:` and `exit:`".into());
        }
        if !case.input.is_file() {
            return Err(format!("no input file {}", case.input.display()));
        }
        Ok(case)
    }

    /// Runs the case in a fresh folder; `Err` says what did not match.
    fn run(&self, cache: &Path) -> Result<(), String> {
        let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
        let input_dir = tmp.path().join("input");
        std::fs::create_dir_all(&input_dir).map_err(|e| e.to_string())?;
        let name = self.input.file_name().unwrap_or_default();
        let input = input_dir.join(name);
        std::fs::copy(&self.input, &input).map_err(|e| e.to_string())?;
        let fill = |s: &str| {
            s.replace("{input}", &input.display().to_string())
                .replace("{input_name}", &name.to_string_lossy())
                .replace("{input_dir}", &input_dir.display().to_string())
                .replace("{out}", &tmp.path().join("out").display().to_string())
                .replace(
                    "{support}",
                    &corpus().join("_support").display().to_string(),
                )
        };
        let args: Vec<String> = fill(&self.command)
            .split_whitespace()
            .map(String::from)
            .collect();
        let out = assert_cmd::Command::cargo_bin("augbench")
            .map_err(|e| e.to_string())?
            .env("AUGBENCH_CACHE", cache)
            .env_remove("AUGBENCH_TEST_FAULTS")
            .env_remove("RUST_BACKTRACE")
            .current_dir(tmp.path())
            .args(&args)
            .output()
            .map_err(|e| e.to_string())?;
        let stderr = String::from_utf8_lossy(&out.stderr);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let mut problems = Vec::new();
        if out.status.code() != Some(self.exit) {
            problems.push(format!(
                "exit {:?}, expected {}",
                out.status.code(),
                self.exit
            ));
        }
        if stderr.contains("panicked") {
            problems.push("panicked".into());
        }
        let mut wanted: Vec<(String, &str, &str)> = self
            .stderr_contains
            .iter()
            .map(|f| (fill(f), "stderr", stderr.as_ref()))
            .chain(
                self.stdout_contains
                    .iter()
                    .map(|f| (fill(f), "stdout", stdout.as_ref())),
            )
            .collect();
        if self.exit != 0 && self.names_input {
            wanted.push((name.to_string_lossy().into_owned(), "stderr", &stderr));
            wanted.push(("hint:".into(), "stderr", &stderr));
        }
        for (fragment, stream, text) in wanted {
            if !text.contains(&fragment) {
                problems.push(format!("{stream} lacks `{fragment}`"));
            }
        }
        if problems.is_empty() {
            return Ok(());
        }
        Err(format!(
            "{}\n    command: augbench {}\n    stderr: {}\n    stdout: {}",
            problems.join("; "),
            args.join(" "),
            stderr.trim().replace('\n', "\n            "),
            stdout.chars().take(400).collect::<String>().trim()
        ))
    }
}

/// Every `.expect` file below `dir` (sorted), skipping `_support`.
fn expect_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if p.is_dir() && !name.starts_with('_') {
            expect_files(&p, out);
        } else if name.ends_with(".expect") {
            out.push(p);
        }
    }
}

/// Files of the corpus that are neither a case's input nor its `.expect` (a forgotten sidecar).
fn orphans(dir: &Path, cases: &[Case]) -> Vec<PathBuf> {
    let mut all = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if p.is_dir() && !name.starts_with('_') {
                stack.push(p);
            } else if p.is_file() && d != dir {
                all.push(p);
            }
        }
    }
    all.retain(|p| !cases.iter().any(|c| &c.input == p || &c.expect == p));
    all.sort();
    all
}

#[test]
fn every_case_of_the_bad_input_corpus_fails_as_expected() {
    let dir = corpus();
    let mut expects = Vec::new();
    expect_files(&dir, &mut expects);
    let mut cases = Vec::new();
    let mut failures = Vec::new();
    for e in &expects {
        match Case::parse(e) {
            Ok(c) => cases.push(c),
            Err(why) => failures.push(format!("{}: {why}", e.display())),
        }
    }
    let stray = orphans(&dir, &cases);
    assert!(stray.is_empty(), "files without a case: {stray:?}");
    assert!(
        cases.len() >= MIN_CASES,
        "{} cases, at least {MIN_CASES} expected",
        cases.len()
    );
    let cache = tempfile::tempdir().unwrap();
    let queue = Mutex::new(cases.iter().collect::<VecDeque<_>>());
    let found = Mutex::new(failures);
    std::thread::scope(|s| {
        for _ in 0..THREADS {
            s.spawn(|| {
                while let Some(case) = queue.lock().unwrap().pop_front() {
                    if let Err(why) = case.run(cache.path()) {
                        let rel = case.expect.strip_prefix(&dir).unwrap_or(&case.expect);
                        found
                            .lock()
                            .unwrap()
                            .push(format!("{}: {why}", rel.display()));
                    }
                }
            });
        }
    });
    let mut failures = found.into_inner().unwrap();
    failures.sort();
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n  {}",
        failures.len(),
        cases.len(),
        failures.join("\n  ")
    );
    eprintln!("bad-input corpus: {} cases passed", cases.len());
}
