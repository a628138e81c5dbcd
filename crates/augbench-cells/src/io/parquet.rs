//! Parquet reading and writing of cell logs (arrow-rs). Floats are stored as real IEEE values, so
//! NaN and ±inf survive a round trip. Files from other writers are normalized on read (see `table`).
//! Row groups are decoded in parallel, one thread per core, when a file has several.

use std::fs::File;
use std::path::Path;

use arrow_array::RecordBatch;
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;

use crate::error::{CellsError, Result};
use crate::table::CellTable;

/// Rows per row group: small enough to decode row groups in parallel, large enough to compress well.
pub const ROW_GROUP_ROWS: usize = 256 * 1024;

/// Rows per decoded batch.
const READ_BATCH_ROWS: usize = 64 * 1024;

/// Writes the table atomically (an empty table writes a schema-only file).
pub fn write(table: &CellTable, path: &Path) -> Result<()> {
    let werr = |e: parquet::errors::ParquetError| CellsError::ParquetWrite {
        path: path.to_path_buf(),
        detail: e.to_string(),
    };
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
        .build();
    super::write_atomic(path, |w| {
        let mut writer = ArrowWriter::try_new(w, table.schema().clone(), Some(props)).map_err(werr)?;
        for batch in table.batches() {
            writer.write(batch).map_err(werr)?;
        }
        writer.close().map_err(werr)?;
        Ok(())
    })
}

/// Reads a Parquet cell log written by augbench or any other Parquet writer.
pub fn read(path: &Path) -> Result<CellTable> {
    let (schema, batches) = read_batches(path)?;
    CellTable::from_foreign(path, batches, &schema)
}

/// Reads the raw batches (not normalized) and the file's Arrow schema.
pub fn read_batches(path: &Path) -> Result<(arrow_schema::SchemaRef, Vec<RecordBatch>)> {
    let builder = open(path)?;
    let schema = builder.schema().clone();
    let groups = builder.metadata().num_row_groups();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(groups);
    if threads <= 1 {
        return Ok((schema, decode(path, builder, None)?));
    }
    let chunks: Vec<Vec<usize>> = (0..threads)
        .map(|t| (0..groups).filter(|g| g % threads == t).collect())
        .collect();
    let per_thread = std::thread::scope(|s| {
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|rgs| s.spawn(move || decode(path, open(path)?, Some(rgs))))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err(corrupt(path, "decoder thread panicked"))))
            .collect::<Result<Vec<_>>>()
    })?;
    Ok((schema, interleave(per_thread, threads)))
}

/// Restores file order from round-robin row-group chunks.
fn interleave(per_thread: Vec<Vec<Vec<RecordBatch>>>, threads: usize) -> Vec<RecordBatch> {
    let mut iters: Vec<_> = per_thread.into_iter().map(|v| v.into_iter()).collect();
    let mut out = Vec::new();
    'outer: loop {
        for it in iters.iter_mut().take(threads) {
            match it.next() {
                Some(group) => out.extend(group),
                None => break 'outer,
            }
        }
    }
    out
}

fn open(path: &Path) -> Result<ParquetRecordBatchReaderBuilder<File>> {
    let file = File::open(path).map_err(|e| CellsError::io(path, "read", e))?;
    ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| corrupt(path, &e.to_string()))
}

/// Decodes the given row groups (all when `None`); each group's batches are returned together.
fn decode(
    path: &Path,
    builder: ParquetRecordBatchReaderBuilder<File>,
    groups: Option<Vec<usize>>,
) -> Result<Vec<Vec<RecordBatch>>> {
    let Some(groups) = groups else {
        let reader = builder.with_batch_size(READ_BATCH_ROWS).build().map_err(|e| corrupt(path, &e.to_string()))?;
        let batches = reader.collect::<std::result::Result<Vec<_>, _>>();
        return Ok(vec![batches.map_err(|e| corrupt(path, &e.to_string()))?]);
    };
    let mut out = Vec::with_capacity(groups.len());
    for g in groups {
        let reader = open(path)?
            .with_batch_size(READ_BATCH_ROWS)
            .with_row_groups(vec![g])
            .build()
            .map_err(|e| corrupt(path, &e.to_string()))?;
        let batches = reader.collect::<std::result::Result<Vec<_>, _>>();
        out.push(batches.map_err(|e| corrupt(path, &e.to_string()))?);
    }
    drop(builder);
    Ok(out)
}

fn corrupt(path: &Path, detail: &str) -> CellsError {
    CellsError::CorruptParquet {
        path: path.to_path_buf(),
        detail: detail.to_string(),
    }
}
