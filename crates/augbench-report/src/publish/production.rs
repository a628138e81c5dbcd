//! A production folder published: its latest run's cells and records, laid out as the folder
//! itself is (so `augbench report` and `compare` read the published copy too), the page and the
//! markdown tables, the machine card and the versions. One run id is one machine (the id hashes
//! the machine card), so a production folder never mixes machines.

use std::collections::BTreeMap;
use std::path::Path;

use augbench_core::UsageError;
use augbench_core::machine_card::MachineCard;
use augbench_core::production::cell::{Cell, read_valid};
use augbench_core::production::{LATEST_FILE, RECORD_FILE, run_dir};
use serde_json::{Value, json};

use super::describe::{Kind, head, machine_line, readme};
use super::folder::Folder;

/// Fills `f` from the production folder `dir`; returns the machine's line and the manifest head.
pub fn fill(dir: &Path, name: &str, f: &mut Folder<'_>) -> anyhow::Result<(String, Value)> {
    let run = crate::production::latest(dir)?;
    if run.cells.is_empty() {
        return Err(UsageError::new(
            format!(
                "{}: its latest run ({}) has no cells on disk",
                dir.display(),
                run.run_id
            ),
            "run `augbench production` into it first; publish a folder with measured cells",
        )
        .into());
    }
    let record = read_json(&run_dir(dir, &run.run_id).join(RECORD_FILE));
    let card: Option<MachineCard> = serde_json::from_value(record["machine"].clone()).ok();
    let machine = card.as_ref().map_or_else(
        || "a machine its record does not describe".into(),
        machine_line,
    );
    let rel = format!("runs/{}", run.run_id);
    copy_cells(dir, &run.run_id, &rel, f)?;
    f.json(&format!("{rel}/{RECORD_FILE}"), record.clone())?;
    f.json(LATEST_FILE, read_json(&dir.join(LATEST_FILE)))?;
    let tables = crate::production::markdown(&run.cells, &run.planned);
    f.text(
        "tables.md",
        &format!("# Production run {}\n\n{tables}", run.run_id),
    )?;
    let page = crate::production::html(&run.run_id, &run.cells, &run.planned);
    f.text("index.html", &page)?;
    f.json("machine.json", json!({"machine": machine, "card": card}))?;
    f.json("versions.json", versions(&run.cells))?;
    let what = format!(
        "Production cells of run {}: {} recipes × {} {}, {} cells, from JPEG on disk to a normalized batch.",
        run.run_id,
        run.planned.rows.len(),
        run.planned.implementations.len(),
        match run.planned.sweep {
            Some(_) => "columns (implementations at each count of loader workers)",
            None => "implementations",
        },
        run.cells.len()
    );
    f.text("README.md", &readme(name, &what, &machine, &FILES))?;
    let stamps = vec![];
    Ok((
        machine.clone(),
        head(name, Kind::Production, &machine, &stamps),
    ))
}

const FILES: [(&str, &str); 7] = [
    (
        "index.html",
        "the page: tables and heatmaps of throughput and memory",
    ),
    ("tables.md", "the tables in Markdown"),
    (
        "runs/<run id>/cells/",
        "one file per cell (recipe, implementation, seed), as `augbench production` wrote them",
    ),
    (
        "runs/<run id>/run.json",
        "the run's inputs, settings and machine card",
    ),
    (
        "latest.json",
        "which run is the latest (`augbench report --results .` reads this folder)",
    ),
    (
        "machine.json, versions.json",
        "the machine card; every implementation's library versions",
    ),
    ("manifest.json", "every file with its size and SHA-256"),
];

/// Copies every valid cell of the run, scrubbed (its digest written anew over the scrubbed
/// content, so the copy validates).
fn copy_cells(dir: &Path, run_id: &str, rel: &str, f: &mut Folder<'_>) -> anyhow::Result<()> {
    let cells_dir = run_dir(dir, run_id).join("cells");
    for path in augbench_host::fsutil::files_under(&cells_dir) {
        let Ok(bytes) = std::fs::read(&path) else {
            continue;
        };
        let Ok(cell) = read_valid(&bytes, run_id) else {
            continue;
        };
        let scrubbed = f.scrub_json(serde_json::to_value(&cell)?);
        let mut cell: Cell = serde_json::from_value(scrubbed)?;
        // its place under `cells/` (implementation, recipe, sweep count, seed): file names alone
        // repeat across implementations and recipes
        let under: Vec<String> = path
            .strip_prefix(&cells_dir)
            .unwrap_or(&path)
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        f.bytes(
            &format!("{rel}/cells/{}", under.join("/")),
            &cell.to_bytes(),
        )?;
    }
    Ok(())
}

/// A JSON file's value (`null` when it cannot be read).
fn read_json(path: &Path) -> Value {
    std::fs::read(path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

/// Every implementation's library versions, as its cells report them.
fn versions(cells: &[Cell]) -> Value {
    let by: BTreeMap<&str, &Value> = cells
        .iter()
        .map(|c| (c.id.implementation.as_str(), &c.versions))
        .collect();
    json!({"augbench": env!("CARGO_PKG_VERSION"), "implementations": by})
}
