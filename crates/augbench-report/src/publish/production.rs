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

use super::folder::Folder;
use super::{Kind, head, machine_line, readme};

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
        "Production cells of run {}: {} recipes × {} implementations, {} cells, from JPEG on disk to a normalized batch.",
        run.run_id,
        run.planned.rows.len(),
        run.planned.implementations.len(),
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
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        f.bytes(&format!("{rel}/cells/{name}"), &cell.to_bytes())?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::publish::{Request, publish};

    /// A production folder of run `r` with two cells whose worker account names a path below
    /// `dir`, as a real cell's decoder or data folder does.
    fn folder(dir: &Path) -> std::path::PathBuf {
        let out = dir.join("prod");
        let cells = run_dir(&out, "r").join("cells");
        std::fs::create_dir_all(&cells).unwrap();
        for (imp, rate) in [("a_cpu", 100.0), ("b_cpu", 50.0)] {
            let mut c = crate::production::test_cell(imp, "Resize", 1, Some(rate), json!({}));
            c.measured = json!({"data": format!("{}/data/images", dir.display())});
            std::fs::write(cells.join(format!("{imp}.json")), c.to_bytes()).unwrap();
        }
        let card = MachineCard {
            processor: "Test CPU".into(),
            cpu_count: 2,
            ..MachineCard::default()
        };
        let record = json!({"run_id": "r", "machine": card, "settings": {}});
        std::fs::write(run_dir(&out, "r").join(RECORD_FILE), record.to_string()).unwrap();
        std::fs::write(out.join(LATEST_FILE), json!({"run_id": "r"}).to_string()).unwrap();
        out
    }

    #[test]
    fn a_published_production_run_reads_back_as_one_and_names_no_path() {
        let tmp = tempfile::tempdir().unwrap();
        let results = folder(tmp.path());
        let out = tmp.path().join("site").join("prod-small");
        let req = Request {
            results,
            out: out.clone(),
            force: false,
        };
        let done = publish(&req).unwrap();
        assert_eq!(done.kind, "production");
        assert!(
            done.machine.starts_with("Test CPU, 2 threads"),
            "{}",
            done.machine
        );
        let here = tmp.path().display().to_string();
        for f in augbench_host::fsutil::files_under(&out) {
            let text = std::fs::read_to_string(&f).unwrap();
            assert!(!text.contains(&here), "{} names {here}", f.display());
        }
        // The copy is a production folder: its cells validate under their new digests.
        let copy = crate::production::latest(&out).unwrap();
        assert_eq!(copy.cells.len(), 2);
        assert!(copy.unreadable.is_empty(), "{:?}", copy.unreadable);
        assert_eq!(copy.cells[0].measured["data"], "<local>/images");
        let tables = std::fs::read_to_string(out.join("tables.md")).unwrap();
        assert!(tables.starts_with("# Production run r"), "{tables}");
        assert!(out.join("index.html").is_file());
    }
}
