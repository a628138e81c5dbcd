//! `augbench publish`: a results folder a reader opens without running anything. From the folder
//! of a run (result files, cell log, resolved config) or of a production run (its latest run's
//! cells and records) it builds, atomically, a self-contained folder: `index.html` (the page),
//! `tables.md`, the results themselves, `machine.json`, `versions.json`, a `README.md` and
//! `manifest.json` (every file's size and SHA-256). Nothing in it names a path of the machine it
//! was made on (`scrub`); results of two machines are refused.

mod describe;
mod folder;
mod production;
mod run;
pub mod scrub;

use std::path::{Path, PathBuf};

use augbench_core::UsageError;
use describe::Kind;
use folder::Folder;
pub use folder::MANIFEST_FILE;
use scrub::Scrub;

/// What to publish, and where.
#[derive(Debug, Clone)]
pub struct Request {
    /// A folder `augbench run` or `augbench production` wrote.
    pub results: PathBuf,
    /// The folder to write; its last part is the published name.
    pub out: PathBuf,
    /// Replace `out` when it exists.
    pub force: bool,
}

/// What was published.
#[derive(Debug, Clone, PartialEq)]
pub struct Published {
    pub files: usize,
    /// `run` or `production`.
    pub kind: &'static str,
    /// The machine, in one line.
    pub machine: String,
}

/// Publishes `req.results` into `req.out` (built beside it, then moved into place).
pub fn publish(req: &Request) -> anyhow::Result<Published> {
    check_out(req)?;
    let scrub = Scrub::for_machine(&req.results);
    let name = published_name(&req.out);
    let kind = source_kind(&req.results)?;
    let old = set_aside(&req.out)?;
    let placed = augbench_host::fsutil::build_own_dir(&req.out, |tmp| {
        let mut f = Folder::new(tmp, &scrub)?;
        let (machine, head) = match kind {
            Kind::Run => run::fill(&req.results, &name, &mut f)?,
            Kind::Production => production::fill(&req.results, &name, &mut f)?,
        };
        let files = f.finish(head)?;
        Ok((files, machine))
    });
    let (files, machine) = restore_or_drop(&req.out, old, placed)?;
    Ok(Published {
        files,
        kind: kind.word(),
        machine,
    })
}

/// Moves an existing `out` (which `--force` replaces) to a hidden sibling, so a publish that
/// fails leaves it as it was.
fn set_aside(out: &Path) -> anyhow::Result<Option<PathBuf>> {
    if !out.exists() {
        return Ok(None);
    }
    let name = published_name(out);
    let aside = out.with_file_name(format!(".{name}.{}", augbench_host::fsutil::temp_suffix()));
    std::fs::rename(out, &aside)
        .map_err(|e| anyhow::anyhow!("cannot replace {}: {e}", out.display()))?;
    Ok(Some(aside))
}

/// After the build: the set-aside folder is dropped when the new one is in place, and put back
/// when it is not.
fn restore_or_drop<T>(
    out: &Path,
    aside: Option<PathBuf>,
    placed: anyhow::Result<T>,
) -> anyhow::Result<T> {
    if let Some(aside) = aside {
        if placed.is_ok() {
            let _ = std::fs::remove_dir_all(&aside);
        } else {
            let _ = std::fs::rename(&aside, out);
        }
    }
    placed
}

/// Which kind of folder `results` is; a folder with neither result files nor a production run
/// is refused.
fn source_kind(results: &Path) -> anyhow::Result<Kind> {
    if !results.is_dir() {
        return Err(UsageError::new(
            format!("{} is not a folder", results.display()),
            "give --results the output folder of `augbench run` or `augbench production`",
        )
        .into());
    }
    if crate::production::is_output_folder(results) {
        return Ok(Kind::Production);
    }
    if crate::load::result_files(results)?.is_empty() {
        return Err(UsageError::new(
            format!("{} holds no results (no *_results.json, no latest.json)", results.display()),
            "give --results the output folder of `augbench run` or `augbench production`, after it measured something",
        )
        .into());
    }
    Ok(Kind::Run)
}

/// Refuses an existing `out` (unless `force`) and an `out` inside the results folder.
fn check_out(req: &Request) -> anyhow::Result<()> {
    let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    if abs(&req.out).starts_with(abs(&req.results)) {
        return Err(UsageError::new(
            format!("{} is inside the results folder", req.out.display()),
            "publish to a folder outside --results",
        )
        .into());
    }
    if req.out.exists() && !req.force {
        return Err(UsageError::new(
            format!("{} already exists; nothing was written", req.out.display()),
            "choose another --out, or pass --force to replace it",
        )
        .into());
    }
    Ok(())
}

/// The published name: `out`'s last part.
fn published_name(out: &Path) -> String {
    out.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "results".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use augbench_core::machine_card::MachineCard;
    use augbench_core::production::{LATEST_FILE, RECORD_FILE, run_dir};
    use serde_json::json;

    /// A production folder of run `r` with two cells, each where a run writes it (so both are
    /// `seed-1.json`, in folders of their own), whose worker account names a path below `dir`, as
    /// a real cell's decoder or data folder does.
    fn folder(dir: &Path) -> std::path::PathBuf {
        let out = dir.join("prod");
        for (imp, rate) in [("a_cpu", 100.0), ("b_cpu", 50.0)] {
            let mut c = crate::production::test_cell(imp, "Resize", 1, Some(rate), json!({}));
            c.measured = json!({"data": format!("{}/data/images", dir.display())});
            let path = augbench_core::production::cell::path(&run_dir(&out, "r"), &c.id);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, c.to_bytes()).unwrap();
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
