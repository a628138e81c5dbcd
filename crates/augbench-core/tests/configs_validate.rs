//! Every `*.yaml` under the repository's `configs/` folder (recursively) parses, validates,
//! resolves and plans at least one job. The test fails if the folder holds no config at all.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

use std::path::{Path, PathBuf};

use augbench_core::{RunConfig, Source, plan, resolve};

fn configs_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs")
}

fn yaml_files(dir: &Path, found: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            yaml_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
            found.push(path);
        }
    }
}

/// The problem with one config file, shown relative to `configs/`, or `None` if it is valid.
fn problem(root: &Path, path: &Path) -> Option<String> {
    let shown = Path::new("configs").join(path.strip_prefix(root).unwrap_or(path));
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => return Some(format!("{}: {e}", shown.display())),
    };
    if augbench_core::production::is_production_config(&text) {
        return augbench_core::production::load(path)
            .err()
            .map(|e| format!("{}: {e}", shown.display()));
    }
    let cfg = RunConfig::from_yaml(&text, &shown)
        .and_then(|c| resolve::resolve(c, &Source::new(&shown, &text)));
    match cfg {
        Err(e) => Some(e.to_string()),
        Ok(cfg) if plan::build(&cfg).jobs.is_empty() => {
            Some(format!("{}: plans no jobs", shown.display()))
        }
        Ok(_) => None,
    }
}

#[test]
fn every_config_under_configs_validates() {
    let root = configs_root();
    let mut files = Vec::new();
    yaml_files(&root, &mut files);
    files.sort();
    assert!(
        !files.is_empty(),
        "no *.yaml under {}: the shipped configs are missing",
        root.display()
    );
    let problems: Vec<String> = files.iter().filter_map(|f| problem(&root, f)).collect();
    assert!(
        problems.is_empty(),
        "{} of {} configs are invalid:\n{}",
        problems.len(),
        files.len(),
        problems.join("\n")
    );
}

#[test]
fn both_config_folders_are_present() {
    let root = configs_root();
    for sub in ["examples", "paper"] {
        let mut files = Vec::new();
        yaml_files(&root.join(sub), &mut files);
        assert!(!files.is_empty(), "configs/{sub} holds no *.yaml");
    }
}
