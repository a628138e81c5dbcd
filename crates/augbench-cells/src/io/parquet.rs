//! Parquet reading and writing of cell logs (arrow-rs). Floats are stored as real IEEE values, so
//! NaN and ±inf survive a round trip. Files from other writers are normalized on read (see `table`).
//! Row groups are decoded in parallel, one thread per core, when a file has several. The decoder
//! panics on some corrupt files (parquet 60: a division by zero, a negative column range); such a
//! panic is contained and reported as a corrupt file, never shown as a crash.

use std::cell::Cell;
use std::fs::File;
use std::panic::AssertUnwindSafe;
use std::path::Path;

use arrow_array::RecordBatch;
use parquet::arrow::ArrowWriter;
use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::arrow_reader::{ArrowReaderOptions, ParquetRecordBatchReaderBuilder};
use parquet::basic::Compression;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::ColumnPath;

use augbench_host::fsutil;

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
    let props = writer_properties(table);
    fsutil::write_streamed(path, |w| {
        let mut writer =
            ArrowWriter::try_new(w, table.schema().clone(), Some(props)).map_err(werr)?;
        for batch in table.batches() {
            writer.write(batch).map_err(werr)?;
        }
        writer.close().map_err(werr)?;
        Ok(())
    })
    .map_err(CellsError::from_write)
}

/// Snappy, chunk statistics, dictionary encoding for string columns only (floats such as metrics
/// rarely repeat, so a dictionary attempt would only cost time).
fn writer_properties(table: &CellTable) -> WriterProperties {
    let mut props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
        .set_statistics_enabled(EnabledStatistics::Chunk)
        .set_dictionary_enabled(false);
    for f in table.schema().fields() {
        if f.data_type() == &DataType::Utf8 {
            props = props.set_column_dictionary_enabled(ColumnPath::from(f.name().as_str()), true);
        }
    }
    props.build()
}

/// Reads a Parquet cell log written by augbench or any other Parquet writer.
pub fn read(path: &Path) -> Result<CellTable> {
    let (schema, batches) = read_batches(path)?;
    CellTable::from_foreign(path, batches, &schema)
}

/// Reads the raw batches (not normalized) and the file's Arrow schema.
pub fn read_batches(path: &Path) -> Result<(SchemaRef, Vec<RecordBatch>)> {
    read_batches_with(path, false)
}

/// Like `read_batches`, but string columns come back dictionary-encoded (`Dictionary<Int32, Utf8>`),
/// which is how Parquet stores them: no per-row strings are built (the grouper's fast path).
pub fn read_batches_dictionary(path: &Path) -> Result<(SchemaRef, Vec<RecordBatch>)> {
    read_batches_with(path, true)
}

fn read_batches_with(path: &Path, dictionary: bool) -> Result<(SchemaRef, Vec<RecordBatch>)> {
    contained(path, || read_all(path, dictionary))
}

fn read_all(path: &Path, dictionary: bool) -> Result<(SchemaRef, Vec<RecordBatch>)> {
    let builder = open(path, dictionary)?;
    let schema = builder.schema().clone();
    let groups = builder.metadata().num_row_groups();
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(groups);
    if threads <= 1 {
        let batches = decode(path, builder, dictionary, None)?;
        return Ok((schema, batches.into_iter().flatten().collect()));
    }
    let chunks: Vec<Vec<usize>> = (0..threads)
        .map(|t| (0..groups).filter(|g| g % threads == t).collect())
        .collect();
    let per_thread = std::thread::scope(|s| {
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|rgs| {
                s.spawn(move || {
                    contained(path, || {
                        decode(path, open(path, dictionary)?, dictionary, Some(rgs))
                    })
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(corrupt(path, "decoder thread panicked")))
            })
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

/// Opens a reader; with `dictionary`, Utf8 columns are asked for as `Dictionary<Int32, Utf8>`.
fn open(path: &Path, dictionary: bool) -> Result<ParquetRecordBatchReaderBuilder<File>> {
    let file = File::open(path).map_err(|e| CellsError::io(path, "read", e))?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file)
        .map_err(|e| corrupt(path, &e.to_string()))?;
    if !dictionary {
        return Ok(builder);
    }
    let dict = DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8));
    let fields: Vec<Field> = builder
        .schema()
        .fields()
        .iter()
        .map(|f| match f.data_type() {
            DataType::Utf8 => Field::new(f.name(), dict.clone(), true),
            _ => f.as_ref().clone(),
        })
        .collect();
    let options = ArrowReaderOptions::new().with_schema(Arc::new(Schema::new(fields)));
    let file = File::open(path).map_err(|e| CellsError::io(path, "read", e))?;
    ParquetRecordBatchReaderBuilder::try_new_with_options(file, options)
        .map_err(|e| corrupt(path, &e.to_string()))
}

/// Decodes the given row groups (all when `None`); each group's batches are returned together.
fn decode(
    path: &Path,
    builder: ParquetRecordBatchReaderBuilder<File>,
    dictionary: bool,
    groups: Option<Vec<usize>>,
) -> Result<Vec<Vec<RecordBatch>>> {
    let Some(groups) = groups else {
        let reader = builder
            .with_batch_size(READ_BATCH_ROWS)
            .build()
            .map_err(|e| corrupt(path, &e.to_string()))?;
        let batches = reader.collect::<std::result::Result<Vec<_>, _>>();
        return Ok(vec![batches.map_err(|e| corrupt(path, &e.to_string()))?]);
    };
    drop(builder);
    let mut out = Vec::with_capacity(groups.len());
    for g in groups {
        let reader = open(path, dictionary)?
            .with_batch_size(READ_BATCH_ROWS)
            .with_row_groups(vec![g])
            .build()
            .map_err(|e| corrupt(path, &e.to_string()))?;
        let batches = reader.collect::<std::result::Result<Vec<_>, _>>();
        out.push(batches.map_err(|e| corrupt(path, &e.to_string()))?);
    }
    Ok(out)
}

thread_local! {
    /// Set while this thread runs the Parquet decoder under `contained`.
    static IN_DECODER: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f`, which calls the Parquet decoder on `path`; a panic of the decoder (a corrupt file it
/// does not check) becomes a `CorruptParquet` error, and its message stays off the terminal.
fn contained<T>(path: &Path, f: impl FnOnce() -> Result<T>) -> Result<T> {
    quiet_decoder_panics();
    let outer = IN_DECODER.with(|c| c.replace(true));
    let outcome = std::panic::catch_unwind(AssertUnwindSafe(f));
    IN_DECODER.with(|c| c.set(outer));
    outcome.unwrap_or_else(|payload| {
        let why = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "no message".into());
        Err(corrupt(
            path,
            &format!("the Parquet decoder failed on corrupt data ({why})"),
        ))
    })
}

/// Wraps the panic hook once: a panic inside `contained` is silent (it is reported as an error),
/// any other goes to the hook that was there before.
fn quiet_decoder_panics() {
    static WRAP: std::sync::Once = std::sync::Once::new();
    WRAP.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !IN_DECODER.with(Cell::get) {
                previous(info);
            }
        }));
    });
}

fn corrupt(path: &Path, detail: &str) -> CellsError {
    CellsError::CorruptParquet {
        path: path.to_path_buf(),
        detail: detail.to_string(),
    }
}
