//! `augbench publish`: a results folder a reader opens without running anything. From the folder
//! of a run (result files, cell log, resolved config) or of a production run (its latest run's
//! cells and records) it builds, atomically, a self-contained folder: `index.html` (the page),
//! `tables.md`, the results themselves, `machine.json`, `versions.json`, a `README.md` and
//! `manifest.json` (every file's size and SHA-256). Nothing in it names a path of the machine it
//! was made on (`scrub`); results of two machines are refused.

mod folder;
mod production;
mod run;
pub mod scrub;

use std::path::{Path, PathBuf};

use augbench_core::UsageError;
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
    let placed = augbench_host::fsutil::build_dir(
        &req.out,
        |tmp| {
            let mut f = Folder::new(tmp, &scrub)?;
            let (machine, head) = match kind {
                Kind::Run => run::fill(&req.results, &name, &mut f)?,
                Kind::Production => production::fill(&req.results, &name, &mut f)?,
            };
            let files = f.finish(head)?;
            Ok((files, machine))
        },
        |_| false,
    );
    let placed = restore_or_drop(&req.out, old, placed)?;
    match placed {
        augbench_host::fsutil::Placed::Built((files, machine)) => Ok(Published {
            files,
            kind: kind.word(),
            machine,
        }),
        augbench_host::fsutil::Placed::Theirs => {
            anyhow::bail!("{} appeared while publishing", req.out.display())
        }
    }
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

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Run,
    Production,
}

impl Kind {
    fn word(self) -> &'static str {
        match self {
            Kind::Run => "run",
            Kind::Production => "production",
        }
    }
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
    if run::result_files(results).is_empty() {
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

/// The manifest's fields before its file list.
fn head(name: &str, kind: Kind, machine: &str, measured: &[String]) -> serde_json::Value {
    let (from, to) = (
        measured.iter().min().cloned().unwrap_or_default(),
        measured.iter().max().cloned().unwrap_or_default(),
    );
    serde_json::json!({
        "format": 1,
        "name": name,
        "kind": kind.word(),
        "machine": machine,
        "measured_from": from,
        "measured_to": to,
        "published_with": format!("augbench {}", env!("CARGO_PKG_VERSION")),
        "open": "index.html",
    })
}

/// A machine card in one line: CPU, threads, memory, architecture, OS, GPUs.
fn machine_line(card: &augbench_core::machine_card::MachineCard) -> String {
    let gib = card.memory_total_bytes as f64 / (1u64 << 30) as f64;
    let mut line = format!(
        "{}, {} threads, {gib:.0} GiB, {} {}",
        card.processor, card.cpu_count, card.machine, card.platform
    );
    if let Some(simd) = &card.simd {
        line.push_str(&format!(", SIMD {}", simd.join(" ")));
    }
    if card.hypervisor == Some(true) {
        line.push_str(", virtual machine");
    }
    for g in &card.gpus {
        line.push_str(&format!(", GPU {}", g.name));
    }
    line
}

/// The published README: what it is, the machine, how to open it, what each file is.
fn readme(name: &str, what: &str, machine: &str, files: &[(&str, &str)]) -> String {
    let mut out = format!(
        "# {name}\n\n{what}\n\nMeasured on: {machine}.\n\nOpen `index.html` in a browser (it loads nothing from the network). Published with augbench {}; `manifest.json` lists every file with its SHA-256.\n\n| file | what |\n|---|---|\n",
        env!("CARGO_PKG_VERSION")
    );
    for (file, about) in files {
        out.push_str(&format!("| `{file}` | {about} |\n"));
    }
    out
}
