//! The one error type of the cell logs, this crate's and augbench-eval's. Every variant names the
//! file (and the line, row or column where there is one) and carries a hint; `is_user_fixable`
//! tells the CLI which ones are usage mistakes (exit 2) and which are failures of the machine
//! (exit 1).

use std::path::{Path, PathBuf};

use augbench_host::fsutil::AtomicWriteError;

/// Where in an input file a value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Location {
    /// 1-based line of a JSON Lines or CSV file.
    Line(u64),
    /// 1-based row of a Parquet file or of an in-memory slice.
    Row(u64),
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Location::Line(n) => write!(f, "line {n}"),
            Location::Row(n) => write!(f, "row {n}"),
        }
    }
}

/// Errors of the cell logs.
#[derive(Debug, thiserror::Error)]
pub enum CellsError {
    #[error("{}: no such file", path.display())]
    NotFound { path: PathBuf },

    #[error("{}: cannot {action}: {source}", path.display())]
    Io {
        path: PathBuf,
        action: &'static str,
        #[source]
        source: std::io::Error,
    },

    #[error("{}: not a readable Parquet file: {detail}", path.display())]
    CorruptParquet { path: PathBuf, detail: String },

    #[error("{}: cannot write Parquet: {detail}", path.display())]
    ParquetWrite { path: PathBuf, detail: String },

    #[error("{}: {at}{column}: malformed JSON: {detail}", path.display())]
    MalformedJson {
        path: PathBuf,
        at: Location,
        /// `, column C (byte B)` where the parser stopped (B: offset in the file), or empty.
        column: String,
        detail: String,
    },

    #[error("{}: {at}: malformed CSV: {detail}", path.display())]
    MalformedCsv {
        path: PathBuf,
        at: Location,
        detail: String,
    },

    #[error("{}: {at}: column '{column}' holds {found} here, but {expected} at {first}", path.display())]
    TypeChange {
        path: PathBuf,
        at: Location,
        column: String,
        found: &'static str,
        expected: &'static str,
        first: Location,
    },

    #[error("{}: {at}: column '{column}' must be {expected}, found {found}", path.display())]
    BadValue {
        path: PathBuf,
        at: Location,
        column: String,
        expected: &'static str,
        found: String,
    },

    #[error("{}: column '{column}' has type {found}, expected {expected}", path.display())]
    ColumnType {
        path: PathBuf,
        column: String,
        expected: String,
        found: String,
    },

    #[error("{}: required column '{column}' is missing", path.display())]
    MissingColumn { path: PathBuf, column: String },

    #[error(
        "column '{column}' is {first_type} in {} but {second_type} in {}",
        first.display(),
        second.display()
    )]
    MergeConflict {
        column: String,
        first: PathBuf,
        first_type: String,
        second: PathBuf,
        second_type: String,
    },

    #[error("system card {origin}: {detail}")]
    SystemCard { origin: String, detail: String },

    #[error("unknown cell-log format '{given}'")]
    UnknownFormat { given: String },

    #[error("{}: unsupported input suffix", path.display())]
    UnsupportedSuffix { path: PathBuf },

    #[error("{detail}")]
    BadArgument { detail: String, hint: String },
}

impl CellsError {
    /// One sentence telling the user how to fix the problem.
    pub fn hint(&self) -> String {
        match self {
            CellsError::NotFound { .. } => "check the path; relative paths start at the current directory".into(),
            CellsError::Io { .. } => "check permissions and free disk space".into(),
            CellsError::CorruptParquet { .. } => {
                "the file is truncated or not Parquet; rewrite it, or give a .jsonl file".into()
            }
            CellsError::ParquetWrite { .. } => "this is a bug in augbench; please report it".into(),
            CellsError::MalformedJson { .. } => "each line must be one complete JSON object".into(),
            CellsError::MalformedCsv { .. } => "the first line must be a header and every row must have its fields".into(),
            CellsError::TypeChange { .. } => {
                "make every value of a metric a number (or null); pass --metric-keys to pick metrics explicitly".into()
            }
            CellsError::BadValue { .. } => "fix the value on that line or row".into(),
            CellsError::ColumnType { .. } => "write the column with the type of the cell-log contract".into(),
            CellsError::MissingColumn { .. } => "the file must hold every fixed column of the cell-log contract".into(),
            CellsError::MergeConflict { .. } => {
                "fixed columns must have the same type in every log; rewrite the odd file with the contract's types".into()
            }
            CellsError::SystemCard { .. } => {
                "pass a JSON object with gpu_name (string), gpu_memory_gb (number), precision (string), batch_size (integer), or 'auto', or 'none'".into()
            }
            CellsError::UnknownFormat { .. } => "use 'auto', 'parquet' or 'jsonl'".into(),
            CellsError::UnsupportedSuffix { .. } => "give a .jsonl, .csv, .parquet or .pq file".into(),
            CellsError::BadArgument { hint, .. } => hint.clone(),
        }
    }

    /// True for mistakes the user can fix (bad file, bad argument); false for machine failures.
    pub fn is_user_fixable(&self) -> bool {
        !matches!(
            self,
            CellsError::ParquetWrite { .. } | CellsError::Io { .. }
        )
    }

    /// A failed atomic write (`augbench_host::fsutil::write_streamed`): the body's own error, or
    /// the file system's as [`CellsError::Io`].
    pub(crate) fn from_write(e: AtomicWriteError<CellsError>) -> Self {
        match e {
            AtomicWriteError::Body(e) => e,
            AtomicWriteError::Io {
                path,
                action,
                source,
            } => CellsError::io(&path, action, source),
        }
    }

    /// A failed file operation on `path`; a missing file on read is [`CellsError::NotFound`].
    pub fn io(path: &Path, action: &'static str, source: std::io::Error) -> Self {
        if source.kind() == std::io::ErrorKind::NotFound && action == "read" {
            return CellsError::NotFound {
                path: path.to_path_buf(),
            };
        }
        CellsError::Io {
            path: path.to_path_buf(),
            action,
            source,
        }
    }
}

/// Result alias of the crate.
pub type Result<T> = std::result::Result<T, CellsError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_file_on_read_is_not_found_and_user_fixable() {
        let e = CellsError::io(
            Path::new("a.jsonl"),
            "read",
            std::io::ErrorKind::NotFound.into(),
        );
        assert!(matches!(e, CellsError::NotFound { .. }));
        assert!(e.is_user_fixable());
        assert_eq!(e.to_string(), "a.jsonl: no such file");
    }

    #[test]
    fn write_failures_are_not_user_fixable() {
        let e = CellsError::io(
            Path::new("out"),
            "write",
            std::io::ErrorKind::PermissionDenied.into(),
        );
        assert!(!e.is_user_fixable());
        assert!(!e.hint().is_empty());
    }
}
