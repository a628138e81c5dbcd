//! Reading and writing cell logs: format choice by suffix, atomic writes (host's), the write report.
//! Parquet carries NaN and ±inf as real floats; JSON Lines writes them as null because JSON has
//! no NaN (so a JSONL round trip turns non-finite metrics into missing values).

pub mod jsonl;
pub mod parquet;

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use crate::error::{CellsError, Result};
use crate::table::CellTable;

/// On-disk format of a cell log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// Pick by suffix: `.jsonl` → JSON Lines, `.parquet`/`.pq` → Parquet, anything else → Parquet
    /// with the suffix replaced by `.parquet`.
    Auto,
    Parquet,
    Jsonl,
}

impl FromStr for Format {
    type Err = CellsError;
    fn from_str(s: &str) -> Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "auto" => Ok(Format::Auto),
            "parquet" => Ok(Format::Parquet),
            "jsonl" => Ok(Format::Jsonl),
            _ => Err(CellsError::UnknownFormat {
                given: s.to_string(),
            }),
        }
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Format::Auto => "auto",
            Format::Parquet => "parquet",
            Format::Jsonl => "jsonl",
        })
    }
}

/// What a write produced.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct WriteResult {
    /// The file written (its suffix may differ from the requested one under `Format::Auto`).
    pub path: PathBuf,
    /// `Parquet` or `Jsonl`, never `Auto`.
    pub format: Format,
    pub rows: usize,
    /// `metric:` columns written, in column order.
    pub metric_columns: Vec<String>,
}

fn suffix(path: &Path) -> String {
    path.extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase()
}

/// The concrete format and file path a write with `format` goes to.
pub fn resolve_target(path: &Path, format: Format) -> (PathBuf, Format) {
    match (format, suffix(path).as_str()) {
        (Format::Auto, "jsonl") => (path.to_path_buf(), Format::Jsonl),
        (Format::Auto, "parquet" | "pq") => (path.to_path_buf(), Format::Parquet),
        (Format::Auto, _) => (path.with_extension("parquet"), Format::Parquet),
        (f, _) => (path.to_path_buf(), f),
    }
}

/// Writes a table atomically in the chosen format.
pub fn write_table(table: &CellTable, path: &Path, format: Format) -> Result<WriteResult> {
    let (target, format) = resolve_target(path, format);
    match format {
        Format::Jsonl => jsonl::write(table, &target)?,
        _ => parquet::write(table, &target)?,
    }
    Ok(WriteResult {
        path: target,
        format,
        rows: table.num_rows(),
        metric_columns: table.metric_columns(),
    })
}

/// Reads a cell log, choosing the format by suffix (`.parquet`/`.pq` → Parquet, `.jsonl` → JSON
/// Lines; any other suffix is sniffed: Parquet magic bytes → Parquet, else JSON Lines).
pub fn read_table(path: &Path) -> Result<CellTable> {
    if is_parquet(path)? {
        parquet::read(path)
    } else {
        jsonl::read(path)
    }
}

/// Whether `path` should be read as Parquet.
pub fn is_parquet(path: &Path) -> Result<bool> {
    match suffix(path).as_str() {
        "parquet" | "pq" => Ok(true),
        "jsonl" | "ndjson" | "json" => Ok(false),
        _ => {
            let mut magic = [0u8; 4];
            let mut f = File::open(path).map_err(|e| CellsError::io(path, "read", e))?;
            let n = f
                .read(&mut magic)
                .map_err(|e| CellsError::io(path, "read", e))?;
            Ok(n == 4 && &magic == b"PAR1")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_picks_format_by_suffix_and_defaults_to_parquet() {
        assert_eq!(
            resolve_target(Path::new("a.jsonl"), Format::Auto).1,
            Format::Jsonl
        );
        assert_eq!(
            resolve_target(Path::new("a.PQ"), Format::Auto).1,
            Format::Parquet
        );
        let (p, f) = resolve_target(Path::new("out/cells.txt"), Format::Auto);
        assert_eq!(
            (p, f),
            (PathBuf::from("out/cells.parquet"), Format::Parquet)
        );
        let (p, _) = resolve_target(Path::new("cells"), Format::Auto);
        assert_eq!(p, PathBuf::from("cells.parquet"));
    }

    #[test]
    fn explicit_format_keeps_the_path() {
        let (p, f) = resolve_target(Path::new("c.txt"), Format::Jsonl);
        assert_eq!((p, f), (PathBuf::from("c.txt"), Format::Jsonl));
    }

    #[test]
    fn format_parses_case_insensitively_and_rejects_others() {
        assert_eq!("JSONL".parse::<Format>().unwrap(), Format::Jsonl);
        assert!(matches!(
            "csv".parse::<Format>(),
            Err(CellsError::UnknownFormat { .. })
        ));
    }
}
