//! A run's folder published: its result files (under `results/`), its cell log and resolved
//! config, the page and the markdown tables drawn from the published results, the machine card
//! and the versions. Result files of more than one machine are refused.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context;
use augbench_core::UsageError;
use augbench_core::machine_card::MachineCard;
use augbench_core::naming::{CELLS_FILE, RESOLVED_CONFIG_FILE};
use augbench_core::policy;
use augbench_core::results::ResultFile;
use serde_json::{Value, json};

use super::describe::{Kind, head, machine_line, readme};
use super::folder::Folder;
use crate::TableOptions;
use crate::export::Format;
use crate::export::compare::{self, Effects};

/// One result file of the run.
struct Source {
    /// Its path below the results folder, `/`-separated.
    rel: String,
    value: Value,
    file: ResultFile,
}

/// Fills `f` from the run folder `dir`; returns the machine's line and the manifest head.
pub fn fill(dir: &Path, name: &str, f: &mut Folder<'_>) -> anyhow::Result<(String, Value)> {
    let sources = read_sources(dir)?;
    let card = one_machine(&sources)?;
    let machine = machine_line(&card);
    for s in &sources {
        f.json(&format!("results/{}", s.rel), s.value.clone())?;
    }
    if dir.join(CELLS_FILE).is_file() {
        f.cells(CELLS_FILE, &dir.join(CELLS_FILE))?;
    }
    if let Ok(text) = std::fs::read_to_string(dir.join(RESOLVED_CONFIG_FILE)) {
        f.text(RESOLVED_CONFIG_FILE, &text)?;
    }
    pages(f)?;
    f.json("machine.json", machine_json(&machine, &card, &sources))?;
    f.json("versions.json", versions(&sources))?;
    let what = format!("{}{}", describe(&sources), load_line(&sources));
    f.text("README.md", &readme(name, &what, &machine, &run_files(f)))?;
    let stamps: Vec<String> = sources
        .iter()
        .map(|s| s.file.metadata.system_info.timestamp.clone())
        .filter(|t| !t.is_empty())
        .collect();
    Ok((machine.clone(), head(name, Kind::Run, &machine, &stamps)))
}

/// Every result file, read and checked against this augbench's result layout.
fn read_sources(dir: &Path) -> anyhow::Result<Vec<Source>> {
    crate::load::result_files(dir)?
        .into_iter()
        .map(|path| {
            let bytes = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
            let value: Value = serde_json::from_slice(&bytes).map_err(|e| {
                UsageError::new(
                    format!("{}:{}:{}: not JSON: {e}", path.display(), e.line(), e.column()),
                    "publish folders written by `augbench run`; remove or repair this file",
                )
            })?;
            let file: ResultFile = serde_json::from_value(value.clone()).map_err(|e| {
                UsageError::new(
                    format!("{}: not an augbench result file: {e}", path.display()),
                    "publish folders written by `augbench run` (the reference's own files are read by `report`, not published)",
                )
            })?;
            let rel = path.strip_prefix(dir).unwrap_or(&path);
            let rel = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            Ok(Source { rel, value, file })
        })
        .collect()
}

/// The one machine every file was measured on (its card without per-job facts or build).
fn one_machine(sources: &[Source]) -> anyhow::Result<MachineCard> {
    let mut machines: BTreeMap<String, (MachineCard, Vec<&str>)> = BTreeMap::new();
    for s in sources {
        let card = MachineCard {
            build: None,
            ..s.file.metadata.system_info.fixed()
        };
        let key = serde_json::to_string(&card)?;
        machines
            .entry(key)
            .or_insert((card, Vec::new()))
            .1
            .push(&s.rel);
    }
    let mut all = machines.into_values();
    match (all.next(), all.len()) {
        (Some((card, _)), 0) => Ok(card),
        (first, _) => {
            let list: Vec<String> = first
                .into_iter()
                .chain(all)
                .map(|(card, files)| format!("{} ({})", machine_line(&card), files.join(", ")))
                .collect();
            Err(UsageError::new(
                format!("the results come from more than one machine: {}", list.join("; ")),
                "publish each machine's results under a name of its own (one --results folder per machine)",
            )
            .into())
        }
    }
}

/// `tables.md` and `index.html`, drawn from the results as published.
fn pages(f: &mut Folder<'_>) -> anyhow::Result<()> {
    let data = crate::load_paths(&[f.root().join("results")])?;
    let opts = TableOptions::default();
    let effects = Effects {
        time: policy::REGRESSION_MIN_EFFECT,
        count: policy::COUNT_MIN_EFFECT,
    };
    let shown = compare::tables(&data, &opts, effects, Format::Markdown)?;
    f.text("tables.md", &shown.text)?;
    let html = crate::html::render_effects(&data, &opts, effects)?;
    f.text("index.html", &html)
}

fn machine_json(line: &str, card: &MachineCard, sources: &[Source]) -> Value {
    let jobs: Vec<Value> = sources
        .iter()
        .map(|s| {
            let c = &s.file.metadata.system_info;
            json!({"file": s.rel, "started": c.timestamp, "before": c.before, "after": c.after})
        })
        .collect();
    json!({"machine": line, "card": card, "jobs": jobs})
}

/// augbench's build and each job's runtime and library versions.
fn versions(sources: &[Source]) -> Value {
    let build = sources
        .iter()
        .find_map(|s| s.file.metadata.system_info.build.clone());
    let jobs: BTreeMap<&str, Value> = sources
        .iter()
        .map(|s| {
            let m = &s.file.metadata;
            let runtime = &m.system_info.runtime;
            (
                s.rel.as_str(),
                json!({"library": m.library, "runtime": runtime, "versions": m.library_versions}),
            )
        })
        .collect();
    json!({"augbench": build, "jobs": jobs})
}

/// One sentence on what the run measured.
fn describe(sources: &[Source]) -> String {
    let mut libs: Vec<&str> = sources
        .iter()
        .map(|s| s.file.metadata.library.as_str())
        .collect();
    libs.dedup();
    let m = sources.first().map(|s| &s.file.metadata);
    let (scenario, mode, device) = m.map_or(("", "", ""), |m| {
        (m.scenario.as_str(), m.mode.as_str(), m.device.as_str())
    });
    let transforms: std::collections::BTreeSet<&String> =
        sources.iter().flat_map(|s| s.file.results.keys()).collect();
    format!(
        "{} transforms of the {scenario} scenario, {mode} mode, on {device}, for {}.",
        transforms.len(),
        libs.join(", ")
    )
}

/// The machine's load around the jobs, in one sentence (empty when no card recorded it): the
/// figures a reader needs to judge how quiet the machine was.
fn load_line(sources: &[Source]) -> String {
    let loads: Vec<f64> = sources
        .iter()
        .flat_map(|s| {
            let c = &s.file.metadata.system_info;
            [&c.before, &c.after].map(|m| m.as_ref().map(|m| m.load_per_thread))
        })
        .flatten()
        .filter(|l| l.is_finite())
        .collect();
    let lo = loads.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = loads.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if loads.is_empty() {
        return String::new();
    }
    format!(
        " The 1-minute load per thread read {lo:.2}–{hi:.2} when the jobs started and ended (1.0: every thread busy; `machine.json` has each job's)."
    )
}

/// The files of a published run, for its README.
fn run_files(f: &Folder<'_>) -> Vec<(&'static str, &'static str)> {
    let mut files = vec![
        (
            "index.html",
            "the page: tables, plots, the machine card, versions",
        ),
        ("tables.md", "the comparison tables in Markdown"),
        (
            "results/",
            "one result file per library (JSON), as `augbench run` wrote them",
        ),
    ];
    if f.root().join(CELLS_FILE).is_file() {
        files.push((
            CELLS_FILE,
            "the cell log (Parquet, one row per measured transform)",
        ));
    }
    if f.root().join(RESOLVED_CONFIG_FILE).is_file() {
        files.push((
            RESOLVED_CONFIG_FILE,
            "the config as run: `augbench run --config resolved_config.yaml` measures it again",
        ));
    }
    files.extend([
        (
            "machine.json",
            "the machine card, and the load around each job",
        ),
        (
            "versions.json",
            "augbench's build and every library's version",
        ),
        ("manifest.json", "every file with its size and SHA-256"),
    ]);
    files
}
