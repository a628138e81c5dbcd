//! The published folder as it is filled: every file goes through the machine's scrub rules on
//! its way in and is listed in the manifest with its size and SHA-256; `finish` writes the
//! manifest and then reads every file back, refusing the folder if a path of this machine is
//! still in one.

use std::path::{Path, PathBuf};

use anyhow::Context;
use augbench_cells::io::{Format, read_table, write_table};
use augbench_cells::table::CellValue;
use serde::Serialize;

use super::scrub::Scrub;

/// The manifest's name in a published folder.
pub const MANIFEST_FILE: &str = "manifest.json";

/// One file of the manifest.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Entry {
    pub path: String,
    pub bytes: u64,
    pub sha256: String,
}

/// A folder being filled (the hidden sibling `fsutil::build_own_dir` hands out).
pub struct Folder<'a> {
    root: PathBuf,
    scrub: &'a Scrub,
    entries: Vec<Entry>,
}

impl<'a> Folder<'a> {
    pub fn new(root: &Path, scrub: &'a Scrub) -> anyhow::Result<Folder<'a>> {
        std::fs::create_dir_all(root).with_context(|| format!("creating {}", root.display()))?;
        Ok(Folder {
            root: root.to_path_buf(),
            scrub,
            entries: Vec::new(),
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Writes `text`, scrubbed, at `rel` (a `/`-separated path inside the folder).
    pub fn text(&mut self, rel: &str, text: &str) -> anyhow::Result<()> {
        self.bytes(rel, self.scrub.text(text).as_bytes())
    }

    /// `value` scrubbed (for content that is rebuilt before it is written).
    pub fn scrub_json(&self, value: serde_json::Value) -> serde_json::Value {
        self.scrub.json(value)
    }

    /// Writes `value`, scrubbed, as pretty JSON at `rel`.
    pub fn json(&mut self, rel: &str, value: serde_json::Value) -> anyhow::Result<()> {
        let mut text = serde_json::to_string_pretty(&self.scrub.json(value))?;
        text.push('\n');
        self.bytes(rel, text.as_bytes())
    }

    /// Copies the cell log at `from` with every string scrubbed, as Parquet at `rel`.
    pub fn cells(&mut self, rel: &str, from: &Path) -> anyhow::Result<()> {
        let table = read_table(from)?.map_strings(|s| self.scrub.text(s))?;
        let path = self.root.join(rel);
        write_table(&table, &path, Format::Parquet)?;
        self.entry(rel, &path)
    }

    /// Writes `bytes` as they are (already scrubbed) at `rel`.
    pub fn bytes(&mut self, rel: &str, bytes: &[u8]) -> anyhow::Result<()> {
        let path = self.root.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating {}", parent.display()))?;
        }
        std::fs::write(&path, bytes).with_context(|| format!("writing {}", path.display()))?;
        self.entry(rel, &path)
    }

    fn entry(&mut self, rel: &str, path: &Path) -> anyhow::Result<()> {
        let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        self.entries.retain(|e| e.path != rel);
        self.entries.push(Entry {
            path: rel.to_string(),
            bytes: bytes.len() as u64,
            sha256: augbench_core::production::cell::sha256_hex(&bytes),
        });
        Ok(())
    }

    /// Writes the manifest (`head`'s fields, then `files`), then checks every file for paths
    /// of this machine; returns the number of files, the manifest included.
    pub fn finish(mut self, head: serde_json::Value) -> anyhow::Result<usize> {
        self.entries.sort_by(|a, b| a.path.cmp(&b.path));
        let mut manifest = head;
        manifest["files"] = serde_json::to_value(&self.entries)?;
        self.json(MANIFEST_FILE, manifest)?;
        for e in &self.entries {
            self.check(&e.path)?;
        }
        Ok(self.entries.len())
    }

    /// Refuses a file that still names a path of this machine (a bug in the scrub rules: the
    /// folder is not published).
    fn check(&self, rel: &str) -> anyhow::Result<()> {
        let path = self.root.join(rel);
        let texts = if rel.ends_with(".parquet") {
            cell_strings(&path)?
        } else {
            vec![String::from_utf8_lossy(&std::fs::read(&path)?).into_owned()]
        };
        let leaks: Vec<String> = texts.iter().flat_map(|t| self.scrub.leaks(t)).collect();
        match leaks.first() {
            None => Ok(()),
            Some(first) => anyhow::bail!(
                "{rel} would name a path of this machine ({first}); nothing was published (please report this)"
            ),
        }
    }
}

/// Every string value of a cell log.
fn cell_strings(path: &Path) -> anyhow::Result<Vec<String>> {
    let table = read_table(path)?;
    let mut out = Vec::new();
    for (b, r) in table.positions() {
        for c in 0..table.schema().fields().len() {
            if let CellValue::Str(s) = table.value(b, c, r) {
                out.push(s.to_string());
            }
        }
    }
    Ok(out)
}
