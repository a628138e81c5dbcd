//! The tables of a production run (docs/pipeline.md, "Production cells"): throughput and peak
//! PSS per (recipe, implementation), the median over seeds; coverage per implementation; each
//! implementation's speed against the first one over only the recipes both measured, with that
//! denominator and the single recipes' range; in a sweep of loader workers a column per
//! (implementation, count) and each count read against the first; and the page's heatmaps (and a
//! sweep's throughput-against-workers chart). Reads an output folder's
//! latest run; renders Markdown (`summary.md`, `compare`) and a self-contained page (`report`).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context;
use augbench_core::production::cell::{Cell, CellStatus, column};
use augbench_core::production::{LATEST_FILE, RECORD_FILE, run_dir};

use augbench_stats::median;

use crate::html::esc;

/// Entries by (recipe row, implementation).
pub(crate) type Table = BTreeMap<(String, String), Entry>;

/// The cells a run asked for, in config order: implementations (as table columns: each
/// implementation at each count of a loader-worker sweep), recipe rows and seeds. A pair
/// with no cell on disk is one the run has not measured yet (an interrupted run), which the
/// tables say apart from one the implementation cannot build.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Planned {
    pub implementations: Vec<String>,
    pub rows: Vec<String>,
    pub seeds: Vec<u64>,
    /// A sweep's implementations (by name) and loader-worker counts, in config order.
    pub sweep: Option<(Vec<String>, Vec<u64>)>,
}

impl Planned {
    /// What a production config asks for.
    pub fn of(p: &augbench_core::production::Production) -> Planned {
        let names: Vec<String> = p.implementations.iter().map(|i| i.name.clone()).collect();
        let sweep = p
            .settings
            .workers
            .is_sweep()
            .then(|| p.settings.workers.values().to_vec());
        Planned {
            implementations: columns(&names, sweep.as_deref()),
            sweep: sweep.map(|counts| (names, counts)),
            rows: p.recipes.iter().map(|r| r.row.clone()).collect(),
            seeds: p.seeds.clone(),
        }
    }

    /// What a run record's settings name (`implementations`, `rows`, `seeds`); a record written
    /// before rows were kept names recipe ids only, and then the rows come from the cells.
    fn from_record(settings: &serde_json::Value, cells: &[Cell]) -> Planned {
        let names = |key: &str| -> Vec<String> {
            settings[key]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|v| v.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default()
        };
        let (cell_rows, cell_imps) = order(cells);
        let rows = match names("rows") {
            rows if !rows.is_empty() => rows,
            _ => names("recipes")
                .iter()
                .map(|id| {
                    cells
                        .iter()
                        .find(|c| &c.id.recipe == id)
                        .map_or_else(|| id.clone(), |c| c.row.clone())
                })
                .collect(),
        };
        let sweep: Option<Vec<u64>> = settings["cell"]["workers"]
            .as_array()
            .map(|a| a.iter().filter_map(serde_json::Value::as_u64).collect());
        let named = names("implementations");
        let implementations = columns(&named, sweep.as_deref());
        Planned {
            sweep: sweep.map(|counts| (named, counts)),
            implementations: if implementations.is_empty() {
                cell_imps
            } else {
                implementations
            },
            rows: if rows.is_empty() { cell_rows } else { rows },
            seeds: settings["seeds"].as_array().map_or_else(
                || {
                    let mut seeds: Vec<u64> = cells.iter().map(|c| c.id.seed).collect();
                    seeds.sort_unstable();
                    seeds.dedup();
                    seeds
                },
                |a| a.iter().filter_map(serde_json::Value::as_u64).collect(),
            ),
        }
    }

    /// The number of cells the run asked for.
    pub fn cells(&self) -> usize {
        self.implementations.len() * self.rows.len() * self.seeds.len()
    }

    /// Whether `cell` is one the run asked for (a run grown or shrunk under the same id keeps
    /// the cells of its other settings on disk).
    fn asks_for(&self, cell: &Cell) -> bool {
        self.implementations.contains(&cell.id.column())
            && self.rows.contains(&cell.row)
            && self.seeds.contains(&cell.id.seed)
    }
}

/// The table columns of `implementations`: each one, or in a sweep each one at each count.
fn columns(implementations: &[String], sweep: Option<&[u64]>) -> Vec<String> {
    match sweep {
        None => implementations.to_vec(),
        Some(counts) => implementations
            .iter()
            .flat_map(|i| counts.iter().map(move |w| column(i, Some(*w))))
            .collect(),
    }
}

/// One (recipe, implementation) entry: the median over its measured seeds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Entry {
    pub(crate) items_per_sec: f64,
    /// Half the seeds' range of items/s over their median (`None` with one seed): how far the
    /// seeds' own figures are from the one shown.
    pub(crate) seed_spread: Option<f64>,
    pub(crate) pss_bytes: Option<u64>,
    /// GPU cells: the torch allocator's peak allocated bytes (median over seeds).
    pub(crate) gpu_bytes: Option<u64>,
    /// Seconds from building the loader to its first batch (median over seeds).
    pub(crate) first_batch_s: Option<f64>,
}

/// Half of `values`' range over `mid`; `None` for fewer than two values.
fn half_range(values: &[f64], mid: f64) -> Option<f64> {
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (values.len() > 1 && mid > 0.0).then(|| (hi - lo) / 2.0 / mid)
}

/// `704 ±2% (661 MiB)`: items/s, the seeds' half range when there are several, the memory.
fn shown(e: &Entry) -> String {
    let spread = e
        .seed_spread
        .map_or(String::new(), |s| format!(" ±{:.0}%", s * 100.0));
    format!("{:.0}{spread} ({})", e.items_per_sec, memory_text(e))
}

/// `661 MiB` (peak PSS of the loader's processes), then `GPU 1203 MiB` (the peak the torch
/// allocator held on the device) for a GPU cell.
pub(crate) fn memory_text(e: &Entry) -> String {
    let mib = |b: u64| format!("{:.0} MiB", b as f64 / 1048576.0);
    let pss = e.pss_bytes.map_or_else(|| "memory n/a".to_string(), mib);
    match e.gpu_bytes {
        Some(g) => format!("{pss}, GPU {}", mib(g)),
        None => pss,
    }
}

/// A GPU cell's peak allocated device memory, from the worker's account.
fn gpu_peak(c: &Cell) -> Option<f64> {
    c.measured
        .get("gpu_memory")?
        .get("peak_allocated_bytes")?
        .as_f64()
}

/// Entries by (recipe row, implementation); a pair with no measured seed is absent.
pub(crate) fn entries(cells: &[Cell]) -> Table {
    let mut seeds: BTreeMap<(String, String), Vec<&Cell>> = BTreeMap::new();
    for c in cells
        .iter()
        .filter(|c| c.status == CellStatus::Ok && c.items_per_sec.is_some())
    {
        seeds
            .entry((c.row.clone(), c.id.column()))
            .or_default()
            .push(c);
    }
    seeds
        .into_iter()
        .map(|(k, cs)| {
            let rates: Vec<f64> = cs.iter().filter_map(|c| c.items_per_sec).collect();
            let rate = median(&rates);
            let pss: Vec<f64> = cs
                .iter()
                .filter_map(|c| c.memory.as_ref())
                .filter(|m| m.unavailable.is_none())
                .map(|m| m.peak_pss_bytes as f64)
                .collect();
            let pss_bytes = (!pss.is_empty()).then(|| median(&pss) as u64);
            let gpu: Vec<f64> = cs.iter().filter_map(|c| gpu_peak(c)).collect();
            let gpu_bytes = (!gpu.is_empty()).then(|| median(&gpu) as u64);
            let first: Vec<f64> = cs
                .iter()
                .filter_map(|c| c.measured.get("time_to_first_batch")?.as_f64())
                .collect();
            let first_batch_s = (!first.is_empty()).then(|| median(&first));
            (
                k,
                Entry {
                    items_per_sec: rate,
                    seed_spread: half_range(&rates, rate),
                    pss_bytes,
                    gpu_bytes,
                    first_batch_s,
                },
            )
        })
        .collect()
}

/// Rows and implementations in the order the cells came (config order).
pub(crate) fn order(cells: &[Cell]) -> (Vec<String>, Vec<String>) {
    let mut rows: Vec<String> = Vec::new();
    let mut imps: Vec<String> = Vec::new();
    for c in cells {
        if !rows.contains(&c.row) {
            rows.push(c.row.clone());
        }
        if !imps.contains(&c.id.column()) {
            imps.push(c.id.column());
        }
    }
    (rows, imps)
}

/// What a pair without a figure shows: `error` where a cell of it failed, `unsupported` where
/// every seed's cell says the implementation cannot build the recipe, otherwise `not measured`
/// (no cell on disk yet: an interrupted run).
fn what_else(cells: &[Cell], planned: &Planned, row: &str, imp: &str) -> &'static str {
    let of_pair: Vec<&Cell> = cells
        .iter()
        .filter(|c| c.row == row && c.id.column() == imp)
        .collect();
    if of_pair.iter().any(|c| c.status == CellStatus::Error) {
        "error"
    } else if !of_pair.is_empty()
        && of_pair.len() >= planned.seeds.len()
        && of_pair.iter().all(|c| c.status == CellStatus::Unsupported)
    {
        "unsupported"
    } else {
        "not measured"
    }
}

/// Where the batches end, the cells' timing boundary: one line when every implementation ends in
/// the same place, and a warning naming each one's when they differ (their ratios then compare
/// different work: a host batch skips the copy to the device).
fn boundaries(cells: &[Cell], planned: &Planned) -> String {
    let by_imp = recorded(cells, planned, |c| c.boundary.as_deref());
    let mut kinds: Vec<&str> = by_imp.iter().map(|(_, b)| b.as_str()).collect();
    kinds.sort_unstable();
    kinds.dedup();
    match kinds.as_slice() {
        [] => String::new(),
        [one] => format!(
            "Timing boundary: every batch ends as {one}{}.\n\n",
            if one.starts_with("host") {
                " (normalized and cast on the CPU by the main process; the reference's CPU \
                 implementations end on a CUDA device instead)"
            } else {
                ""
            }
        ),
        _ => {
            let each: Vec<String> = by_imp
                .iter()
                .map(|(i, b)| format!("{i} ends as {b}"))
                .collect();
            format!(
                "**Mixed timing boundaries: {}.** Ratios between them compare different work.\n\n",
                each.join(", ")
            )
        }
    }
}

/// Per implementation (planned order) with a measured cell, the distinct values `field` reads
/// from its measured cells (`not recorded` where a cell has none), joined with " and ".
fn recorded<'a>(
    cells: &'a [Cell],
    planned: &Planned,
    field: impl Fn(&'a Cell) -> Option<&'a str>,
) -> Vec<(String, String)> {
    let mut out = Vec::new();
    // by implementation, not by column: a sweep's counts share one decoder and boundary
    let names = planned
        .sweep
        .as_ref()
        .map_or(&planned.implementations, |(names, _)| names);
    for imp in names {
        let mut seen: Vec<&str> = cells
            .iter()
            .filter(|c| &c.id.implementation == imp && c.status == CellStatus::Ok)
            .map(|c| field(c).unwrap_or("not recorded"))
            .collect();
        seen.sort_unstable();
        seen.dedup();
        if !seen.is_empty() {
            out.push((imp.clone(), seen.join(" and ")));
        }
    }
    out
}

/// What every cell ran with, as its file records it: batches, loader workers, dtype and file
/// order (one line per distinct setting, normally one), then each implementation's decoder (the
/// worker's own account; `not recorded` in cells from before).
fn setup(cells: &[Cell], planned: &Planned) -> String {
    let mut lines: Vec<String> = cells
        .iter()
        .filter_map(|c| settings_text(&c.settings, c.id.workers.is_some()))
        .collect();
    lines.sort_unstable();
    lines.dedup();
    let mut out: String = lines.iter().map(|l| format!("Cells: {l}.\n\n")).collect();
    let decoders: Vec<String> = recorded(cells, planned, |c| c.measured["decoder"].as_str())
        .into_iter()
        .map(|(imp, d)| format!("{imp} {d}"))
        .collect();
    if !decoders.is_empty() {
        out.push_str(&format!("Decoders: {}.\n\n", decoders.join("; ")));
    }
    out
}

/// `batch 16 (2 warm-up, 24 measured), 2 loader workers, prefetch 2, float16 224×224, file order
/// numpy-pcg64 per seed` from a cell's settings; `None` where they hold none of it. A cell of a
/// sweep (`swept`) names its loader workers in its column instead.
fn settings_text(s: &serde_json::Value, swept: bool) -> Option<String> {
    let n = |k: &str| s[k].as_u64();
    let (batch, workers) = (n("batch_size")?, n("workers")?);
    let mut text = format!("batch {batch}");
    if let (Some(w), Some(m)) = (n("warmup_batches"), n("measured_batches")) {
        text.push_str(&format!(" ({w} warm-up, {m} measured)"));
    }
    let loader = match workers {
        _ if swept => {
            "loader workers swept (each column names its count; 0: loading in the main process)"
                .to_string()
        }
        0 => "loading in the main process".to_string(),
        1 => "1 loader worker".to_string(),
        w => format!("{w} loader workers"),
    };
    text.push_str(&format!(", {loader}"));
    if let Some(p) = n("prefetch").filter(|_| workers > 0 || swept) {
        text.push_str(&format!(", prefetch {p}"));
    }
    if let (Some(d), Some(h), Some(w)) = (s["dtype"].as_str(), n("height"), n("width")) {
        text.push_str(&format!(", {d} {h}×{w}"));
    }
    if let Some(o) = s["order"].as_str() {
        text.push_str(&format!(", file order {o} per seed"));
    }
    Some(text)
}

/// `cells: 40 of 57 on disk; 17 not measured yet (…)` when the run is incomplete.
fn completeness(cells: &[Cell], planned: &Planned) -> String {
    let asked = planned.cells();
    let have = cells.iter().filter(|c| planned.asks_for(c)).count();
    if have >= asked {
        return format!("All {asked} cells of the run are on disk.\n\n");
    }
    format!(
        "**Incomplete: {have} of {asked} cells on disk, {} not measured yet** (run the same command \
         again: it keeps the cells on disk and measures the rest).\n\n",
        asked - have
    )
}

/// The run's tables as Markdown.
pub fn markdown(cells: &[Cell], planned: &Planned) -> String {
    let table = entries(cells);
    let mut out = completeness(cells, planned);
    out.push_str(&boundaries(cells, planned));
    out.push_str(&setup(cells, planned));
    out.push_str(
        "## Throughput (items/s, median over seeds, ± half the seeds' range; peak PSS of the loader's processes)\n\n",
    );
    out.push_str(&grid_table((cells, planned), &table, |e| Some(shown(e))));
    out.push_str(&sampling_line(cells));
    out.push_str(
        "\n## Time to first batch (s from building the loader to its first batch: worker start-up, first decode and recipe; median over seeds)\n\n",
    );
    out.push_str(&grid_table((cells, planned), &table, |e| {
        e.first_batch_s.map(|s| format!("{s:.2}"))
    }));
    out.push_str("\n## Coverage\n\n");
    for imp in &planned.implementations {
        out.push_str(&coverage_line(cells, planned, &table, imp));
    }
    out.push_str(&speedups(&planned.rows, &planned.implementations, &table));
    out.push_str(&scaling(planned, &table));
    out
}

/// In a sweep, each implementation's throughput at each later count against its first count, over
/// the recipes both measured: `- kornia_cpu: 1: 0.98× over 3/3 recipes (…); 2: 1.84× over 3/3 …`.
fn scaling(planned: &Planned, table: &Table) -> String {
    let Some((names, counts)) = &planned.sweep else {
        return String::new();
    };
    let Some(first) = counts.first() else {
        return String::new();
    };
    let all: Vec<&String> = planned.rows.iter().collect();
    let mut out = format!(
        "\n## Loader workers (each count's throughput against the first count, {first}; geometric mean over the recipes both counts measured)\n\n"
    );
    for name in names {
        let base = column(name, Some(*first));
        let each: Vec<String> = (counts.iter().skip(1))
            .map(|w| {
                let col = column(name, Some(*w));
                match geomean(&all, &col, &base, table) {
                    Some(r) => format!("{w}: {}", r.line(planned.rows.len())),
                    None => format!("{w}: no recipe measured at both counts"),
                }
            })
            .collect();
        out.push_str(&format!("- {name}: {}\n", each.join("; ")));
    }
    out
}

/// How often the memory sampler actually read the loader's processes (span ÷ readings, per
/// cell): the configured period is a floor that a large process tree stretches, so a peak
/// shorter than the achieved interval can be missed.
fn sampling_line(cells: &[Cell]) -> String {
    let intervals: Vec<f64> = cells
        .iter()
        .filter_map(|c| c.memory.as_ref())
        .filter(|m| m.unavailable.is_none() && m.samples > 1)
        .map(|m| m.span_ms as f64 / 1000.0 / (m.samples - 1) as f64)
        .collect();
    if intervals.is_empty() {
        return String::new();
    }
    let low = intervals.iter().copied().fold(f64::INFINITY, f64::min);
    let high = intervals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    format!(
        "\nMemory was read every {low:.2}–{high:.2} s (median {:.2} s over {} cells; configured every {:.2} s, stretched where reading a large process tree costs more than {:.0}% of a core).\n",
        median(&intervals),
        intervals.len(),
        augbench_core::policy::MEMORY_SAMPLE_PERIOD_MS as f64 / 1000.0,
        augbench_core::policy::MEMORY_SAMPLE_MAX_SHARE * 100.0,
    )
}

/// One Markdown table, recipes × implementations, of what `figure` shows of each entry; a pair
/// without an entry (or without that figure: `n/a`) says why (`what_else`).
fn grid_table(
    (cells, planned): (&[Cell], &Planned),
    table: &Table,
    figure: impl Fn(&Entry) -> Option<String>,
) -> String {
    let imps = &planned.implementations;
    let mut out = format!(
        "| recipe | {} |\n|---|{}\n",
        imps.join(" | "),
        "---:|".repeat(imps.len())
    );
    for row in &planned.rows {
        let values: Vec<String> = imps
            .iter()
            .map(|imp| match table.get(&(row.clone(), imp.clone())) {
                Some(e) => figure(e).unwrap_or_else(|| "n/a".to_string()),
                None => what_else(cells, planned, row, imp).to_string(),
            })
            .collect();
        out.push_str(&format!("| {row} | {} |\n", values.join(" | ")));
    }
    out
}

/// `- a_cpu: 11/12 recipes measured, 1 unsupported`: the recipes the implementation has a figure
/// for, then those it cannot build, failed or has not measured yet, each where there are any.
fn coverage_line(cells: &[Cell], planned: &Planned, table: &Table, imp: &str) -> String {
    let rows = &planned.rows;
    let measured = rows
        .iter()
        .filter(|r| table.contains_key(&((*r).clone(), imp.to_string())))
        .count();
    let mut line = format!("- {imp}: {measured}/{} recipes measured", rows.len());
    for what in ["unsupported", "error", "not measured"] {
        let n = rows
            .iter()
            .filter(|r| !table.contains_key(&((*r).clone(), imp.to_string())))
            .filter(|r| what_else(cells, planned, r, imp) == what)
            .count();
        if n > 0 {
            line.push_str(&format!(", {n} {what}"));
        }
    }
    line.push('\n');
    line
}

/// Speed ratios over a set of recipes: their geometric mean, how many, and the lowest and highest
/// single recipe's ratio (how far the mean speaks for every recipe).
pub(crate) struct Ratio {
    pub(crate) geomean: f64,
    recipes: usize,
    low: f64,
    high: f64,
}

impl Ratio {
    /// The summary of `ratios`; `None` when there are none.
    pub(crate) fn of(ratios: &[f64]) -> Option<Ratio> {
        let k = ratios.len();
        (k > 0).then(|| Ratio {
            geomean: (ratios.iter().map(|r| r.ln()).sum::<f64>() / k as f64).exp(),
            recipes: k,
            low: ratios.iter().copied().fold(f64::INFINITY, f64::min),
            high: ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        })
    }

    /// `0.96× over 11/12 recipes (per recipe 0.71–1.30×)`; one recipe has no range.
    pub(crate) fn line(&self, rows: usize) -> String {
        let range = match self.recipes {
            1 => String::new(),
            _ => format!(" (per recipe {:.2}–{:.2}×)", self.low, self.high),
        };
        format!(
            "{:.2}× over {}/{rows} recipes{range}",
            self.geomean, self.recipes
        )
    }
}

/// `imp`'s speed over `base`'s on the `rows` both measured.
fn geomean(rows: &[&String], imp: &str, base: &str, table: &Table) -> Option<Ratio> {
    let ratios: Vec<f64> = rows
        .iter()
        .filter_map(|r| {
            let a = table.get(&((*r).clone(), imp.to_string()))?;
            let b = table.get(&((*r).clone(), base.to_string()))?;
            Some(a.items_per_sec / b.items_per_sec)
        })
        .collect();
    Ratio::of(&ratios)
}

/// Each implementation against the first: over the recipes both measured, then over the recipes
/// every implementation measured (the one set on which all of them can be ranked).
fn speedups(rows: &[String], imps: &[String], table: &Table) -> String {
    let Some(base) = imps.first() else {
        return String::new();
    };
    let all: Vec<&String> = rows.iter().collect();
    let common: Vec<&String> = rows
        .iter()
        .filter(|r| {
            imps.iter()
                .all(|i| table.contains_key(&((*r).clone(), i.clone())))
        })
        .collect();
    let mut out =
        format!("\n## Speed against {base} (geometric mean over the recipes both measured)\n\n");
    for imp in imps.iter().skip(1) {
        out.push_str(&match geomean(&all, imp, base, table) {
            None => format!("- {imp}: no recipe measured by both\n"),
            Some(r) => format!("- {imp}: {}\n", r.line(rows.len())),
        });
    }
    if imps.len() > 2 {
        out.push_str(&format!(
            "\nOver the {}/{} recipes every implementation measured: ",
            common.len(),
            rows.len()
        ));
        let each: Vec<String> = imps
            .iter()
            .skip(1)
            .filter_map(|imp| {
                geomean(&common, imp, base, table).map(|r| format!("{imp} {:.2}×", r.geomean))
            })
            .collect();
        out.push_str(&if each.is_empty() {
            "none\n".to_string()
        } else {
            format!("{}\n", each.join(", "))
        });
    }
    out
}

/// The latest run of a production output folder.
pub struct LatestRun {
    pub run_id: String,
    pub cells: Vec<Cell>,
    /// The cells the run asked for (its record; the cells themselves for a record without it).
    pub planned: Planned,
    /// Cell files that could not be read or failed validation, each with why (left out).
    pub unreadable: Vec<String>,
}

/// Whether `path` is a production output folder (it has a latest run's record).
pub fn is_output_folder(path: &Path) -> bool {
    path.join(LATEST_FILE).is_file()
}

/// The latest run's cells, in the run's own order of implementations and recipes.
pub fn latest(out: &Path) -> anyhow::Result<LatestRun> {
    let latest = out.join(LATEST_FILE);
    let text = std::fs::read(&latest).with_context(|| format!("reading {}", latest.display()))?;
    let record: serde_json::Value = serde_json::from_slice(&text)
        .with_context(|| format!("{} is not a run record", latest.display()))?;
    let run_id = record["run_id"]
        .as_str()
        .with_context(|| format!("{} names no run_id", latest.display()))?
        .to_string();
    let dir = run_dir(out, &run_id);
    // The latest invocation's settings (`latest.json` is rewritten by every run; the run's own
    // `run.json` keeps the first invocation's): the cells the latest run asked for.
    let order = match &record["settings"] {
        serde_json::Value::Null => std::fs::read(dir.join(RECORD_FILE))
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .map(|r| r["settings"].clone())
            .unwrap_or_default(),
        settings => settings.clone(),
    };
    let mut run = LatestRun {
        run_id,
        cells: Vec::new(),
        planned: Planned::default(),
        unreadable: Vec::new(),
    };
    for path in augbench_host::fsutil::files_under(&dir.join("cells")) {
        let read = std::fs::read(&path).map_err(|e| e.to_string());
        match read.and_then(|b| augbench_core::production::cell::read_valid(&b, &run.run_id)) {
            Ok(c) => run.cells.push(c),
            Err(e) => run.unreadable.push(format!("{}: {e}", path.display())),
        }
    }
    let rank = |list: &serde_json::Value, key: &str| {
        list.as_array()
            .and_then(|a| a.iter().position(|v| v.as_str() == Some(key)))
            .unwrap_or(usize::MAX)
    };
    run.cells.sort_by_key(|c| {
        (
            rank(&order["implementations"], &c.id.implementation),
            c.id.workers,
            rank(&order["recipes"], &c.id.recipe),
            c.id.seed,
        )
    });
    run.planned = Planned::from_record(&order, &run.cells);
    Ok(run)
}

/// One figure of every (recipe, implementation) entry as a heatmap's grid: a pair without the
/// figure is `–`, or `error` where a cell of it failed.
fn grid(
    (cells, planned): (&[Cell], &Planned),
    table: &Table,
    (what, unit): (String, &'static str),
    figure: impl Fn(&Entry) -> Option<f64>,
) -> crate::plot::Grid {
    use crate::table::Cell as Shown;
    let shown =
        |row: &String, imp: &String| match table.get(&(row.clone(), imp.clone())).and_then(&figure)
        {
            Some(figure) => Shown::Ok {
                figure,
                std: None,
                ci_low: None,
                ci_high: None,
                form: None,
            },
            None if what_else(cells, planned, row, imp) == "error" => Shown::Error { reason: None },
            None => Shown::Missing,
        };
    crate::plot::Grid {
        title: format!("{what} ({unit})"),
        unit,
        axes: ("Implementation", "Recipe"),
        rows: planned
            .rows
            .iter()
            .map(|r| {
                let row = planned.implementations.iter().map(|i| shown(r, i));
                (r.clone(), row.collect())
            })
            .collect(),
        columns: planned.implementations.clone(),
    }
}

/// The throughput and memory heatmaps (recipes × implementations, log colour scales) as inline
/// SVG; a chart that cannot be drawn is a line saying why, and the tables stay.
fn heatmaps(run_id: &str, cells: &[Cell], planned: &Planned) -> String {
    use crate::plot::{Chart, Heatmap};
    let table = entries(cells);
    let speed = grid(
        (cells, planned),
        &table,
        (
            format!("Throughput, median over seeds — run {run_id}"),
            "items/s",
        ),
        |e| Some(e.items_per_sec),
    );
    let memory = grid(
        (cells, planned),
        &table,
        (
            format!("Peak PSS of the loader's processes — run {run_id}"),
            "MiB",
        ),
        |e| e.pss_bytes.map(|b| b as f64 / 1048576.0),
    );
    let mut out = String::new();
    if let Some(chart) = workers_chart(run_id, planned, &table) {
        out.push_str(&match Chart::Workers(chart).svg() {
            Ok(svg) => format!("<figure>{svg}</figure>\n"),
            Err(e) => format!(
                "<p>Throughput against loader workers: not drawn: {}</p>\n",
                esc(&e.to_string())
            ),
        });
    }
    for g in [speed, memory] {
        let title = esc(&g.title);
        match Heatmap::grid(g).map(|h| Chart::Heatmap(h).svg()) {
            Some(Ok(svg)) => out.push_str(&format!("<figure>{svg}</figure>\n")),
            Some(Err(e)) => out.push_str(&format!(
                "<p>{title}: not drawn: {}</p>\n",
                esc(&e.to_string())
            )),
            None => {}
        }
    }
    out
}

/// A sweep's throughput against loader workers: per implementation, at each count the geometric
/// mean over the recipes it measured at every count (`None` outside a sweep).
fn workers_chart(
    run_id: &str,
    planned: &Planned,
    table: &Table,
) -> Option<crate::plot::WorkersChart> {
    let (names, counts) = planned.sweep.as_ref()?;
    let lines = names
        .iter()
        .map(|name| {
            let at = |row: &String, w: u64| table.get(&(row.clone(), column(name, Some(w))));
            let rows: Vec<&String> = (planned.rows.iter())
                .filter(|r| counts.iter().all(|w| at(r, *w).is_some()))
                .collect();
            let points = counts
                .iter()
                .filter_map(|w| {
                    let rates: Vec<f64> = rows
                        .iter()
                        .filter_map(|r| Some(at(r, *w)?.items_per_sec.ln()))
                        .collect();
                    let mean = rates.iter().sum::<f64>() / rates.len().max(1) as f64;
                    (!rates.is_empty()).then(|| (*w, mean.exp()))
                })
                .collect();
            (format!("{name} ({} recipes)", rows.len()), points)
        })
        .collect();
    crate::plot::WorkersChart::new(
        format!("Throughput against loader workers (geometric mean over recipes) — run {run_id}"),
        lines,
    )
}

/// The run's tables, then its heatmaps, as one self-contained HTML page.
pub fn html(run_id: &str, cells: &[Cell], planned: &Planned) -> String {
    let mut body = String::new();
    let mut in_table = false;
    for line in markdown(cells, planned).lines() {
        let row = line.starts_with('|');
        if row != in_table {
            body.push_str(if row { "<table>\n" } else { "</table>\n" });
            in_table = row;
        }
        body.push_str(&html_line(line));
    }
    if in_table {
        body.push_str("</table>\n");
    }
    body.push_str(&heatmaps(run_id, cells, planned));
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>augbench production run {run_id}</title>\n\
         <style>body{{font-family:system-ui,sans-serif;margin:2em}}table{{border-collapse:collapse}}\
         td,th{{border:1px solid #ccc;padding:.3em .6em}}td{{text-align:right}}td:first-child{{text-align:left}}</style>\n\
         </head>\n<body>\n<h1>augbench production run {run_id}</h1>\n{body}</body>\n</html>\n"
    )
}

/// One line of the Markdown above as HTML (headings, table rows, list items).
fn html_line(line: &str) -> String {
    if let Some(h) = line.strip_prefix("## ") {
        return format!("<h2>{}</h2>\n", esc(h));
    }
    if let Some(item) = line.strip_prefix("- ") {
        return format!("<p>{}</p>\n", esc(item));
    }
    if line.starts_with("|---") {
        return String::new();
    }
    if let Some(row) = line.strip_prefix("| ") {
        let cells: Vec<String> = row
            .trim_end_matches(" |")
            .split(" | ")
            .map(|c| format!("<td>{}</td>", esc(c)))
            .collect();
        return format!("<tr>{}</tr>\n", cells.concat());
    }
    match line.trim() {
        "" => String::new(),
        text => format!("<p>{}</p>\n", esc(&text.replace("**", ""))),
    }
}

/// A cell as the tests of this file and `production_change` build them.
#[cfg(test)]
pub(crate) fn test_cell(
    imp: &str,
    row: &str,
    seed: u64,
    rate: Option<f64>,
    settings: serde_json::Value,
) -> Cell {
    use augbench_core::production::cell::{CELL_SCHEMA, CellId};
    Cell {
        schema: CELL_SCHEMA,
        id: CellId {
            run_id: "r".into(),
            family: "rgb".into(),
            implementation: imp.into(),
            recipe: format!("{row}+Normalize+ToTensor"),
            seed,
            workers: None,
        },
        row: row.into(),
        status: match rate {
            Some(_) => CellStatus::Ok,
            None => CellStatus::Unsupported,
        },
        reason: None,
        items_per_sec: rate,
        memory: None,
        measured: serde_json::Value::Null,
        boundary: Some(format!(
            "{} float16",
            if imp.ends_with("_gpu") {
                "cuda"
            } else {
                "host"
            }
        )),
        settings,
        versions: serde_json::Value::Null,
        digest: String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(imp: &str, row: &str, seed: u64, rate: Option<f64>) -> Cell {
        test_cell(imp, row, seed, rate, serde_json::Value::Null)
    }

    /// The tables of `cells` as a run that asked for exactly the cells there are.
    fn md(cells: &[Cell]) -> String {
        markdown(
            cells,
            &Planned::from_record(&serde_json::Value::Null, cells),
        )
    }

    /// A sweep's record names its counts: each implementation at each count is a column of its
    /// own, the cells are counted per count, and each count's speed is read against the first.
    #[test]
    fn a_sweep_of_loader_workers_gets_a_column_per_count_and_a_scaling_line() {
        let record = serde_json::json!({
            "implementations": ["a_cpu"], "rows": ["Resize", "Pad"], "seeds": [1],
            "cell": {"workers": [0, 2]},
        });
        let swept = |row: &str, w: u64, rate: f64| {
            let settings = serde_json::json!({"batch_size": 16, "workers": w, "prefetch": 2});
            let mut c = test_cell("a_cpu", row, 1, Some(rate), settings);
            c.id.workers = Some(w);
            c
        };
        let cells = vec![
            swept("Resize", 0, 100.0),
            swept("Resize", 2, 180.0),
            swept("Pad", 0, 50.0),
        ];
        let planned = Planned::from_record(&record, &cells);
        assert_eq!(
            planned.implementations,
            ["a_cpu (0 workers)", "a_cpu (2 workers)"]
        );
        let text = markdown(&cells, &planned);
        assert!(text.contains("Incomplete: 3 of 4 cells"), "{text}");
        assert!(
            text.contains("| recipe | a_cpu (0 workers) | a_cpu (2 workers) |"),
            "{text}"
        );
        assert!(
            text.contains("| Pad | 50 (memory n/a) | not measured |"),
            "{text}"
        );
        assert!(
            text.contains("batch 16, loader workers swept (each column names its count; 0: loading in the main process), prefetch 2."),
            "{text}"
        );
        assert!(
            text.contains("- a_cpu: 2: 1.80× over 1/2 recipes\n"),
            "{text}"
        );
        let page = html("r", &cells, &planned);
        assert!(
            page.contains("Throughput against loader workers") && page.contains("<svg"),
            "the page draws the sweep"
        );
        let single = Planned::from_record(&serde_json::json!({"implementations": ["a_cpu"]}), &[]);
        assert_eq!(single.implementations, ["a_cpu"]);
        assert!(single.sweep.is_none());
    }

    #[test]
    fn an_interrupted_run_says_how_many_cells_are_missing_and_which() {
        let planned = Planned {
            implementations: vec!["a_cpu".into(), "b_cpu".into()],
            rows: vec!["Resize".into(), "Pad".into(), "Invert".into()],
            seeds: vec![1, 2],
            sweep: None,
        };
        let mut failed = cell("a_cpu", "Invert", 1, None);
        failed.status = CellStatus::Error;
        let cells = vec![
            cell("a_cpu", "Resize", 1, Some(100.0)),
            cell("a_cpu", "Resize", 2, Some(100.0)),
            cell("b_cpu", "Resize", 1, Some(200.0)),
            cell("b_cpu", "Pad", 1, None),
            cell("b_cpu", "Pad", 2, None),
            failed,
            // a cell of a seed the latest invocation did not ask for (a run shrunk by a seed)
            cell("b_cpu", "Resize", 3, Some(200.0)),
        ];
        let text = markdown(&cells, &planned);
        assert!(
            text.contains("Incomplete: 6 of 12 cells on disk, 6 not measured yet"),
            "{text}"
        );
        assert!(
            text.contains("| Pad | not measured | unsupported |"),
            "{text}"
        );
        assert!(text.contains("| Invert | error | not measured |"), "{text}");
        assert!(
            text.contains("- a_cpu: 1/3 recipes measured, 1 error, 1 not measured\n"),
            "{text}"
        );
        assert!(
            text.contains("- b_cpu: 1/3 recipes measured, 1 unsupported, 1 not measured\n"),
            "{text}"
        );
        let complete = md(&cells[..1]);
        assert!(
            complete.starts_with("All 1 cells of the run are on disk."),
            "{complete}"
        );
        let page = html("r", &cells, &planned);
        assert!(
            page.contains("<p>Incomplete: 6 of 12 cells on disk"),
            "{page}"
        );
    }

    #[test]
    fn a_record_without_rows_takes_them_from_the_cells_and_its_recipe_ids() {
        let settings = serde_json::json!({
            "implementations": ["a_cpu", "b_cpu"],
            "recipes": ["Resize+Normalize+ToTensor", "Pad+Normalize+ToTensor"],
            "seeds": [137],
        });
        let planned = Planned::from_record(&settings, &[cell("b_cpu", "Resize", 137, Some(1.0))]);
        assert_eq!(planned.rows, ["Resize", "Pad+Normalize+ToTensor"]);
        assert_eq!(planned.implementations, ["a_cpu", "b_cpu"]);
        assert_eq!(planned.cells(), 4);
        assert_eq!(planned.seeds, [137]);
    }

    #[test]
    fn speedups_cover_only_the_recipes_both_measured_and_say_how_many() {
        let cells = vec![
            cell("a_cpu", "Resize", 1, Some(100.0)),
            cell("a_cpu", "Resize", 2, Some(300.0)),
            cell("b_cpu", "Resize", 1, Some(400.0)),
            cell("a_cpu", "Pad", 1, Some(100.0)),
            cell("b_cpu", "Pad", 1, None),
            cell("a_cpu", "Invert", 1, None),
            cell("b_cpu", "Invert", 1, Some(50.0)),
        ];
        let md = md(&cells);
        assert!(
            md.contains("| Resize | 200 ±50% (memory n/a) | 400 (memory n/a) |"),
            "{md}"
        );
        assert!(
            md.contains("| Pad | 100 (memory n/a) | not measured |"),
            "two seeds asked: {md}"
        );
        assert!(md.contains("- a_cpu: 2/3 recipes measured"), "{md}");
        assert!(md.contains("- b_cpu: 2.00× over 1/3 recipes\n"), "{md}");
        assert!(
            !md.contains("every implementation measured"),
            "two: the pair is all: {md}"
        );
    }

    #[test]
    fn a_summary_of_all_implementations_covers_only_the_recipes_all_measured() {
        let cells = vec![
            cell("a_cpu", "Resize", 1, Some(100.0)),
            cell("b_cpu", "Resize", 1, Some(200.0)),
            cell("c_cpu", "Resize", 1, Some(50.0)),
            cell("a_cpu", "Pad", 1, Some(100.0)),
            cell("b_cpu", "Pad", 1, Some(800.0)),
            cell("c_cpu", "Pad", 1, None),
        ];
        let md = md(&cells);
        assert!(
            md.contains("- b_cpu: 4.00× over 2/2 recipes (per recipe 2.00–8.00×)"),
            "{md}"
        );
        assert!(
            md.contains(
                "Over the 1/2 recipes every implementation measured: b_cpu 2.00×, c_cpu 0.50×"
            ),
            "{md}"
        );
    }

    /// Each cell's settings and decoder, as recorded, in one place of the summary and the page.
    #[test]
    fn the_cells_settings_and_each_implementations_decoder_are_named() {
        let settings = serde_json::json!({
            "batch_size": 16, "warmup_batches": 2, "measured_batches": 24, "workers": 2,
            "prefetch": 2, "dtype": "float16", "height": 224, "width": 224, "order": "numpy-pcg64",
        });
        let mut cells = vec![
            test_cell("a_cpu", "Resize", 1, Some(1.0), settings.clone()),
            test_cell("b_cpu", "Resize", 1, Some(1.0), settings),
        ];
        cells[0].measured = serde_json::json!({"decoder": "simplejpeg"});
        let text = md(&cells);
        assert!(
            text.contains("Cells: batch 16 (2 warm-up, 24 measured), 2 loader workers, prefetch 2, float16 224×224, file order numpy-pcg64 per seed.\n"),
            "{text}"
        );
        assert!(
            text.contains("Decoders: a_cpu simplejpeg; b_cpu not recorded.\n"),
            "{text}"
        );
        let planned = Planned::from_record(&serde_json::Value::Null, &cells);
        assert!(html("r", &cells, &planned).contains("<p>Decoders: a_cpu simplejpeg"));
    }

    #[test]
    fn the_achieved_sampling_interval_is_shown() {
        let mut cells = vec![
            cell("a_cpu", "Resize", 1, Some(1.0)),
            cell("a_cpu", "Pad", 1, Some(1.0)),
        ];
        for (c, (span, samples)) in cells.iter_mut().zip([(1000, 11), (3000, 4)]) {
            c.memory = Some(augbench_core::results::MemoryPeaks {
                samples,
                span_ms: span,
                ..Default::default()
            });
        }
        let text = md(&cells);
        assert!(text.contains("Memory was read every 0.10–1.00 s (median 0.55 s over 2 cells; configured every 0.05 s"), "{text}");
    }

    #[test]
    fn the_timing_boundary_is_named_and_a_mix_is_a_warning() {
        let cpu = [
            cell("a_cpu", "Resize", 1, Some(1.0)),
            cell("b_cpu", "Resize", 1, Some(1.0)),
        ];
        assert!(md(&cpu).contains("Timing boundary: every batch ends as host float16 (normalized"));
        let mixed = [
            cell("a_cpu", "Resize", 1, Some(1.0)),
            cell("a_gpu", "Resize", 1, Some(1.0)),
        ];
        let text = md(&mixed);
        assert!(
            text.contains("**Mixed timing boundaries: a_cpu ends as host float16, a_gpu ends as cuda float16.**"),
            "{text}"
        );
        let page = html(
            "r",
            &mixed,
            &Planned::from_record(&serde_json::Value::Null, &mixed),
        );
        assert!(page.contains("<p>Mixed timing boundaries"), "{page}");
    }

    #[test]
    fn time_to_first_batch_is_a_table_of_its_own_median_over_seeds() {
        let mut cells = vec![
            cell("a_cpu", "Resize", 1, Some(100.0)),
            cell("a_cpu", "Resize", 2, Some(100.0)),
            cell("a_cpu", "Resize", 3, Some(100.0)),
            cell("b_cpu", "Resize", 1, Some(100.0)),
        ];
        for (c, s) in cells.iter_mut().zip([1.5, 0.5, 2.25]) {
            c.measured = serde_json::json!({ "time_to_first_batch": s });
        }
        let text = md(&cells);
        let table = text.split("## Time to first batch").nth(1).unwrap();
        assert!(table.contains("| Resize | 1.50 | n/a |"), "{text}");
    }

    #[test]
    fn a_gpu_cell_shows_its_device_peak_beside_its_pss() {
        let mut gpu = cell("torchvision_gpu", "Resize", 1, Some(900.0));
        gpu.measured = serde_json::json!({"gpu_memory": {"peak_allocated_bytes": 3 * 1048576, "peak_reserved_bytes": 4 * 1048576}});
        let md = md(&[cell("torchvision_cpu", "Resize", 1, Some(300.0)), gpu]);
        assert!(
            md.contains("| Resize | 300 (memory n/a) | 900 (memory n/a, GPU 3 MiB) |"),
            "{md}"
        );
    }
}
