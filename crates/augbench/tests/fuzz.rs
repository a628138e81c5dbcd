//! Fuzzing on stable Rust: a seeded byte-mutation loop over the config parser, the results JSON
//! reader and the cell-log readers (JSON Lines and Parquet, then the typed evaluation and benchmark
//! readers and `cells summarize`), seeded from the shipped configs, the test fixtures, the
//! bad-input corpus and Parquet logs made at run time. Any panic fails the test and saves its input. A short
//! run is part of the suite; `AUGBENCH_FUZZ_CASES=N` runs N cases per target (docs/ci.md).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

use std::collections::BTreeSet;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Cases per target in the normal test run.
const DEFAULT_CASES: usize = 4000;
/// Generator seed unless `AUGBENCH_FUZZ_SEED` says otherwise.
const DEFAULT_SEED: u64 = 15;
/// Bootstrap resamples of the `summarize` step (the interval's value is not the point).
const FUZZ_BOOTSTRAP: usize = 20;
/// Mutations applied to one seed to make one case (1 to this many).
const MAX_MUTATIONS: usize = 4;
/// Extra copies of each seed the target reads without error.
const VALID_SEED_WEIGHT: usize = 8;
/// Panicking inputs kept and reported per target.
const KEPT_FAILURES: usize = 5;
/// Byte strings the parsers treat specially, inserted as a whole.
const TOKENS: &[&str] = &[
    "NaN",
    "-Infinity",
    "Infinity",
    "1e999",
    "-1",
    "18446744073709551616",
    "0",
    "0.0",
    "null",
    "true",
    "\"",
    "\\",
    "\\u0000",
    "{",
    "}",
    "[",
    "]",
    ":",
    ",",
    "\n",
    "\t",
    ": ",
    "- ",
    "&a ",
    "*a",
    "!!binary ",
    "---\n",
    "...",
    "~",
    "\u{feff}",
    "PAR1",
];

/// Every panic that reaches the hook (a reader's own threads included, whose panics a join may
/// turn into an error).
static PANICS: AtomicUsize = AtomicUsize::new(0);
/// Panics of the Parquet decoder that the cell reader contained (reported as corrupt files).
static CONTAINED: AtomicUsize = AtomicUsize::new(0);
/// Their distinct messages.
static CONTAINED_WHY: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());
/// Scalars swapped in for a value after `: ` (keeps a JSON or YAML text parseable more often).
const VALUES: &[&str] = &[
    "null",
    "true",
    "0",
    "-1",
    "1e308",
    "1e999",
    "-0.0",
    "NaN",
    "Infinity",
    "4294967296",
    "18446744073709551616",
    "\"\"",
    "\"x\"",
    "\"NaN\"",
    "[]",
    "{}",
    "[1, null]",
    "~",
    "''",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Files below `dir` whose names end with one of `suffixes` (sorted, `.expect` files excluded).
fn files(dir: &Path, suffixes: &[&str], out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        let name = p
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        if p.is_dir() && name != "target" && !name.starts_with('.') {
            files(&p, suffixes, out);
        } else if suffixes.iter().any(|s| name.ends_with(s)) {
            out.push(p);
        }
    }
}

/// Seed inputs: the files with `suffixes` under the shipped configs, the fixtures and the corpus.
fn seeds(suffixes: &[&str]) -> Vec<Vec<u8>> {
    let r = root();
    let mut paths = Vec::new();
    for dir in [
        "configs",
        "crates/augbench/tests",
        "crates/augbench-report/tests",
        "crates/augbench-cells/tests",
        "crates/augbench-eval/tests",
    ] {
        files(&r.join(dir), suffixes, &mut paths);
    }
    paths
        .iter()
        .filter_map(|p| std::fs::read(p).ok())
        .filter(|b| b.len() <= 1 << 20)
        .collect()
}

/// Replaces the value after the first `: ` at or after `at` (up to `,`, `}` or the line end)
/// with one of `VALUES`.
fn swap_value(rng: &mut ChaCha8Rng, data: &mut Vec<u8>, at: usize) {
    let Some(colon) = data[at..].windows(2).position(|w| w == b": ") else {
        return;
    };
    let start = at + colon + 2;
    let len = data[start..]
        .iter()
        .position(|b| matches!(b, b',' | b'}' | b'\n'))
        .unwrap_or(data.len() - start);
    let v = VALUES[rng.random_range(0..VALUES.len())].as_bytes();
    data.splice(start..start + len, v.iter().copied());
}

/// One mutated input: a seed changed by 1 to `MAX_MUTATIONS` flips, inserts, deletes, splices.
/// With `in_place`, most mutations keep every byte where it was (bit flips, overwrites), so a
/// format that locates its parts by offset (Parquet's footer) gets past its framing.
fn mutate(rng: &mut ChaCha8Rng, seeds: &[Vec<u8>], in_place: bool) -> Vec<u8> {
    let mut data = seeds[rng.random_range(0..seeds.len())].clone();
    for _ in 0..rng.random_range(1..=MAX_MUTATIONS) {
        let at = rng.random_range(0..=data.len());
        if in_place && !data.is_empty() && rng.random_bool(0.85) {
            let i = at.min(data.len() - 1);
            data[i] = if rng.random_bool(0.5) {
                data[i] ^ (1 << rng.random_range(0..8))
            } else {
                rng.random()
            };
            continue;
        }
        match rng.random_range(0..8) {
            0 if !data.is_empty() => {
                let i = at.min(data.len() - 1);
                data[i] ^= 1 << rng.random_range(0..8);
            }
            1 => data.insert(at, rng.random()),
            2 => {
                let t = TOKENS[rng.random_range(0..TOKENS.len())].as_bytes();
                data.splice(at..at, t.iter().copied());
            }
            3 => {
                let end = (at + rng.random_range(1..64)).min(data.len());
                data.drain(at..end);
            }
            4 => {
                let other = &seeds[rng.random_range(0..seeds.len())];
                let from = rng.random_range(0..=other.len());
                let to = (from + rng.random_range(1..256)).min(other.len());
                data.splice(at..at, other[from..to].iter().copied());
            }
            5 => data.truncate(at),
            6 if !in_place => swap_value(rng, &mut data, at),
            _ => {
                let end = (at + rng.random_range(1..32)).min(data.len());
                let chunk = data[at..end].to_vec();
                data.splice(end..end, chunk);
            }
        }
    }
    data
}

struct Figures {
    cases: usize,
    /// Cases the target read without an error (the rest were refused with one).
    accepted: usize,
    panics: usize,
    kept: Vec<PathBuf>,
}

/// Runs `cases` mutated inputs through `target`; a panic (caught, or counted by the hook in a
/// reader's own thread) is recorded with its input saved under `target/fuzz-failures/`.
fn fuzz(name: &str, suffixes: &[&str], target: impl Fn(&[u8]) -> bool) -> Figures {
    let mut seeds = seeds(suffixes);
    seeds.extend(extra_seeds(name));
    assert!(!seeds.is_empty(), "{name}: no seed files");
    // Seeds the target reads without error are drawn more often: their mutants reach deeper.
    let valid: Vec<Vec<u8>> = seeds.iter().filter(|s| target(s)).cloned().collect();
    for _ in 0..VALID_SEED_WEIGHT {
        seeds.extend(valid.iter().cloned());
    }
    let cases = env_usize("AUGBENCH_FUZZ_CASES").unwrap_or(DEFAULT_CASES);
    let seed = env_usize("AUGBENCH_FUZZ_SEED").map_or(DEFAULT_SEED, |s| s as u64);
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ name.len() as u64);
    let in_place = name == "cells-parquet";
    let mut figures = Figures {
        cases,
        accepted: 0,
        panics: 0,
        kept: Vec::new(),
    };
    let start = Instant::now();
    for i in 0..cases {
        let input = if i < seeds.len() {
            seeds[i].clone()
        } else {
            mutate(&mut rng, &seeds, in_place)
        };
        let before = PANICS.load(Ordering::SeqCst);
        let outcome = catch_unwind(AssertUnwindSafe(|| target(&input)));
        figures.accepted += usize::from(matches!(outcome, Ok(true)));
        if outcome.is_err() || PANICS.load(Ordering::SeqCst) != before {
            figures.panics += 1;
            if figures.kept.len() < KEPT_FAILURES {
                figures.kept.push(save_failure(name, i, &input));
            }
        }
    }
    eprintln!(
        "fuzz {name}: {cases} cases ({} seeds; {} read without error), {} panics, {:.1} s",
        seeds.len(),
        figures.accepted,
        figures.panics,
        start.elapsed().as_secs_f64()
    );
    figures
}

fn env_usize(key: &str) -> Option<usize> {
    std::env::var(key).ok()?.parse().ok()
}

fn save_failure(name: &str, case: usize, input: &[u8]) -> PathBuf {
    let dir = root().join("target/fuzz-failures");
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join(format!("{name}-{case}.bin"));
    let _ = std::fs::write(&path, input);
    path
}

/// Seeds made at run time (no Parquet log is shipped as a file): every readable JSON Lines seed
/// as Parquet, the benchmark cells of every results fixture, and an evaluation log whose metric
/// column holds lists (a type normalisation lets through).
fn extra_seeds(name: &str) -> Vec<Vec<u8>> {
    if name != "cells-parquet" {
        return Vec::new();
    }
    let dir = tempfile::tempdir().unwrap();
    let dst = dir.path().join("seed.parquet");
    let as_parquet = |table: &augbench_cells::CellTable| {
        augbench_cells::io::write_table(table, &dst, augbench_cells::Format::Parquet)
            .ok()
            .and_then(|_| std::fs::read(&dst).ok())
    };
    let mut out = Vec::new();
    for jsonl in seeds(&[".jsonl"]) {
        let src = dir.path().join("seed.jsonl");
        std::fs::write(&src, &jsonl).unwrap();
        if let Ok(table) = augbench_cells::read_table(&src) {
            out.extend(as_parquet(&table));
        }
    }
    for json in seeds(&[".json"]) {
        let Ok(file) = serde_json::from_slice::<augbench_core::results::ResultFile>(&json) else {
            continue;
        };
        let cells = augbench_cells::cells_from_results(&file, "fuzz", "unknown");
        if !cells.is_empty() {
            out.extend(as_parquet(&augbench_cells::bench::to_table(&cells)));
        }
    }
    out.extend(as_parquet(&eval_log_with_list_metric()));
    out
}

/// An evaluation log whose `metric:a` column is `list<double>`.
fn eval_log_with_list_metric() -> augbench_cells::CellTable {
    use std::sync::Arc;
    let mut log = augbench_eval::EvalLog::default();
    let pre = augbench_eval::PreAggregated {
        model_name: "m".into(),
        task: "t".into(),
        scene_id: "s".into(),
        phase: "clu".into(),
        n_samples: 1,
        difficulty: None,
        latency_ms_mean: None,
        git_sha: None,
        timestamp_utc: None,
        frame_budget: 0,
        metrics: vec![("a".into(), Some(1.0))],
    };
    log.push_pre_aggregated(pre, &Default::default());
    let table = log.to_table();
    let batch = &table.batches()[0];
    let idx = batch.schema().index_of("metric:a").unwrap();
    let list =
        arrow_array::ListArray::from_iter_primitive::<arrow_array::types::Float64Type, _, _>(vec![
            Some(vec![Some(1.0), Some(2.0)]),
        ]);
    let mut fields: Vec<arrow_schema::Field> = batch
        .schema()
        .fields()
        .iter()
        .map(|f| f.as_ref().clone())
        .collect();
    fields[idx] = arrow_schema::Field::new(
        "metric:a",
        arrow_array::Array::data_type(&list).clone(),
        true,
    );
    let mut cols = batch.columns().to_vec();
    cols[idx] = Arc::new(list);
    let schema = Arc::new(arrow_schema::Schema::new(fields));
    let batch = arrow_array::RecordBatch::try_new(schema.clone(), cols).unwrap();
    augbench_cells::CellTable::new(schema, vec![batch])
}

/// The config target: parse, resolve with every default, build the plan.
fn config(bytes: &[u8]) -> bool {
    let path = Path::new("fuzz.yaml");
    let text = String::from_utf8_lossy(bytes);
    let Ok(cfg) = augbench_core::RunConfig::from_yaml(&text, path) else {
        return false;
    };
    let src = augbench_core::Source::new(path, &text);
    let Ok(cfg) = augbench_core::resolve::resolve(cfg, &src) else {
        return false;
    };
    let plan = augbench_core::plan::build(&cfg);
    !cfg.to_yaml().is_empty() && plan.jobs.len() < usize::MAX
}

/// The results target: the strict reader `--resume` uses, then the reader of `compare` and
/// `report` with the tables and regression verdicts built from what it read.
fn results(bytes: &[u8]) -> bool {
    let _ = serde_json::from_slice::<augbench_core::results::ResultFile>(bytes);
    let path = Path::new("fuzz_results.json");
    let Ok(data) = augbench_report::load::load_result_bytes(path, bytes) else {
        return false;
    };
    let opts = augbench_report::table::TableOptions::default();
    let _ = augbench_report::table::build_tables(&data, &opts);
    if let Ok(report) = augbench_report::judge::regression::compare(&data, &data, 0.05) {
        let _ = augbench_report::judge::regression::summary(&report);
    }
    true
}

/// A cell-log target: the bytes written to a file with `suffix`, read as `cells show` reads it.
fn cells(dir: &Path, suffix: &str) -> impl Fn(&[u8]) -> bool {
    let path = dir.join(format!("fuzz{suffix}"));
    move |bytes: &[u8]| {
        std::fs::write(&path, bytes).unwrap();
        let table = match augbench_cells::read_table(&path) {
            Ok(t) => t,
            Err(e) => {
                let text = e.to_string();
                if let Some((_, why)) =
                    text.split_once("the Parquet decoder failed on corrupt data")
                {
                    CONTAINED.fetch_add(1, Ordering::SeqCst);
                    CONTAINED_WHY.lock().unwrap().insert(why.to_string());
                }
                return false;
            }
        };
        if let Ok(mut rows) = augbench_eval::render::filter_rows(&table, &[]) {
            rows.truncate(50);
            let json = augbench_eval::render::TextFormat::Json;
            let _ = augbench_eval::render::render_rows(&table, &rows, json);
        }
        typed_readers_and_summary(&table, &path);
        true
    }
}

/// What the typed readers and `cells summarize` make of a table that read without error.
fn typed_readers_and_summary(table: &augbench_cells::CellTable, path: &Path) {
    let _ = augbench_eval::EvalLog::from_table(table, path);
    let _ = augbench_cells::bench::from_table(table, path);
    let by = ["model", "phase", "library"]
        .iter()
        .filter(|c| augbench_eval::summary::resolve_column(table, c).is_some())
        .map(|c| c.to_string())
        .collect();
    let opts = augbench_eval::summary::SummaryOptions {
        by,
        bootstrap: FUZZ_BOOTSTRAP,
        ..Default::default()
    };
    if let Ok(rows) = augbench_eval::summary::summarize(table, &opts) {
        let _ =
            augbench_eval::render::render_summary(&rows, augbench_eval::render::TextFormat::Json);
    }
}

/// The per-sample rows target: the bytes as a `.jsonl` rows file, grouped into cells.
fn rows(dir: &Path) -> impl Fn(&[u8]) -> bool {
    let path = dir.join("rows.jsonl");
    move |bytes: &[u8]| {
        std::fs::write(&path, bytes).unwrap();
        let opts = augbench_eval::GroupOptions {
            model_name: "m".into(),
            task: "t".into(),
            ..Default::default()
        };
        augbench_eval::rows::group_file(&path, opts).is_ok()
    }
}

/// Where the cell-log targets write each input: a RAM disk where there is one (rewriting a file
/// on a journaling disk can cost milliseconds per case), else the system's temporary folder.
fn scratch_dir() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    if shm.is_dir()
        && let Ok(d) = tempfile::tempdir_in(shm)
    {
        return d;
    }
    tempfile::tempdir().unwrap()
}

#[test]
fn mutated_configs_results_and_cell_logs_never_panic() {
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {
        PANICS.fetch_add(1, Ordering::SeqCst);
    }));
    let dir = scratch_dir();
    let start = Instant::now();
    let all = [
        fuzz("config", &[".yaml", ".yml"], config),
        fuzz("results", &[".json"], results),
        fuzz("cells-jsonl", &[".jsonl"], cells(dir.path(), ".jsonl")),
        fuzz("cells-rows", &[".jsonl"], rows(dir.path())),
        fuzz(
            "cells-parquet",
            &[".parquet"],
            cells(dir.path(), ".parquet"),
        ),
    ];
    std::panic::set_hook(default_hook);
    let total: usize = all.iter().map(|f| f.cases).sum();
    let panics: usize = all.iter().map(|f| f.panics).sum();
    eprintln!(
        "fuzz: {total} cases in all, {panics} panics, {} Parquet decoder panics contained, {:.1} s",
        CONTAINED.load(Ordering::SeqCst),
        start.elapsed().as_secs_f64()
    );
    for why in CONTAINED_WHY.lock().unwrap().iter() {
        eprintln!("  contained Parquet decoder panic: {why}");
    }
    let kept: Vec<&PathBuf> = all.iter().flat_map(|f| &f.kept).collect();
    assert_eq!(panics, 0, "panicking inputs saved: {kept:?}");
}
