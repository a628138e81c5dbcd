//! `augbench production --plan`: what a production config would measure, before it measures
//! anything: the cells per implementation (the recipes listed for it that it builds, asked of
//! its worker or crate: `augbench_exec::production::coverage`),
//! the items each cell reads, the worker starts of the measuring order, and a time estimate from
//! the output folder's latest run: each count of loader workers from its cells of that count
//! measured with the other settings the same.

use std::collections::BTreeMap;
use std::path::Path;

use augbench_catalog::recipes::Recipe;
use augbench_core::production::cell::{Cell, CellStatus, settings_except_workers};
use augbench_core::production::{Implementation, Production};
use augbench_exec::production::coverage::{self, Coverage};

/// Worker starts of the measuring order: one per turn in which an implementation has a cell
/// listed for it (only one worker is up at a time; the run starts it for a recipe it then
/// refuses, too).
fn worker_starts(p: &Production) -> usize {
    let order = augbench_exec::production::run::cell_order(
        augbench_exec::production::run::Extent::of(p),
        augbench_core::policy::PRODUCTION_ORDER_BLOCK,
    );
    let measured = |turn: &&[augbench_exec::production::run::CellAt]| {
        turn.iter()
            .any(|c| Production::listed(&p.recipes[c.recipe], &p.implementations[c.implementation]))
    };
    order
        .chunk_by(|a, b| a.implementation == b.implementation)
        .filter(measured)
        .count()
}

/// Seconds per cell of each (implementation, recipe row) and of each implementation (median
/// over its cells), from the cells of an earlier run measured with `settings`.
struct Rates {
    run_id: String,
    /// By (implementation, loader workers, recipe row).
    cell_sec: BTreeMap<(String, u64, String), f64>,
    imp_sec: BTreeMap<String, f64>,
}

/// The median of `v`; `None` when it is empty.
fn median(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| augbench_stats::median(v))
}

/// A cell's wall time: the loader's start to its first batch, then every other batch at the
/// cell's own rate.
fn cell_seconds(c: &Cell, items: f64) -> Option<f64> {
    let rate = c.items_per_sec.filter(|r| *r > 0.0)?;
    let first = c.measured["time_to_first_batch"].as_f64().unwrap_or(0.0);
    Some(first + items / rate)
}

fn rates(p: &Production, out: &Path, items_after_first: f64) -> Option<Rates> {
    let run = augbench_report::production::latest(out).ok()?;
    // an earlier cell's rate serves every cell of its count measured with the rest the same
    let settings = settings_except_workers(&serde_json::to_value(&p.settings).ok()?);
    let counts = p.settings.workers.values();
    let mut per_cell: BTreeMap<(String, u64, String), Vec<f64>> = BTreeMap::new();
    for c in run.cells.iter().filter(|c| c.status == CellStatus::Ok) {
        let workers = c.settings["workers"].as_u64();
        let same = settings_except_workers(&c.settings) == settings;
        if let (true, Some(w), Some(s)) = (same, workers, cell_seconds(c, items_after_first))
            && counts.contains(&w)
        {
            let key = (c.id.implementation.clone(), w, c.row.clone());
            per_cell.entry(key).or_default().push(s);
        }
    }
    let mut per_imp: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for ((imp, _, _), v) in &per_cell {
        per_imp.entry(imp.clone()).or_default().extend(v);
    }
    let cell_sec = per_cell
        .into_iter()
        .filter_map(|(k, v)| Some((k, median(&v)?)))
        .collect();
    let imp_sec: BTreeMap<String, f64> = per_imp
        .into_iter()
        .filter_map(|(k, v)| Some((k, median(&v)?)))
        .collect();
    (!imp_sec.is_empty()).then_some(Rates {
        run_id: run.run_id,
        cell_sec,
        imp_sec,
    })
}

/// The plan as YAML, then the estimate as comments.
pub fn show(p: &Production, config: &Path, out: &Path) -> String {
    let s = &p.settings;
    let items = (s.warmup_batches + s.measured_batches) * s.batch_size;
    let extent = augbench_exec::production::run::Extent::of(p);
    let total = p.cells();
    let workers = serde_json::to_string(&s.workers).unwrap_or_default();
    let sweep = if s.workers.is_sweep() {
        format!(" × {} loader-worker counts", extent.workers)
    } else {
        String::new()
    };
    let mut text = format!(
        "production:\n  config: {}\n  cells: {total}  # {} implementations × {} recipes × {} seed(s){sweep}\n  per_cell: {{batch_size: {}, warmup_batches: {}, measured_batches: {}, items: {items}, workers: {}, prefetch: {}, dtype: {}, decoders: {}}}\n  output_dir: {}\n  implementations:\n",
        config.display(),
        p.implementations.len(),
        p.recipes.len(),
        p.seeds.len(),
        s.batch_size,
        s.warmup_batches,
        s.measured_batches,
        workers.replace(',', ", "),
        s.prefetch,
        s.dtype,
        s.decoders.as_str(),
        out.display()
    );
    let asked = coverage::ask_all(&p.catalog, &p.implementations, &p.recipes);
    let mut to_measure = Vec::new();
    for (imp, answer) in p.implementations.iter().zip(&asked) {
        let recipes: Vec<&Recipe> = p
            .recipes
            .iter()
            .filter(|r| answer.measures(imp, r))
            .collect();
        let decoder = p
            .decoder_for(imp)
            .map(|d| format!(", decoder: {d}"))
            .unwrap_or_default();
        text.push_str(&format!(
            "    - {{name: {}, recipes: {}/{}, cells_to_measure: {}{decoder}}}{}\n",
            imp.name,
            recipes.len(),
            p.recipes.len(),
            recipes.len() * p.seeds.len() * extent.workers,
            coverage_comment(answer)
        ));
        to_measure.push((imp, recipes));
    }
    let starts = worker_starts(p);
    text.push_str(&format!("  worker_starts: {starts}\n"));
    let after_first = ((items - s.batch_size) as f64).max(0.0);
    text.push_str(&estimate(p, out, &to_measure, after_first, starts));
    text
}

/// Where an implementation's recipe count comes from, as a comment after its line.
fn coverage_comment(answer: &Coverage) -> String {
    match answer {
        Coverage::Asked { refused } if refused.is_empty() => "  # asked: builds every one".into(),
        Coverage::Asked { refused } => {
            let each: Vec<String> = refused
                .iter()
                .map(|(r, why)| format!("{r} ({why})"))
                .collect();
            format!("  # asked: refuses {}", each.join("; "))
        }
        Coverage::NotAsked { why } => format!("  # the catalog's list, not asked: {why}"),
    }
}

fn estimate(
    p: &Production,
    out: &Path,
    to_measure: &[(&Implementation, Vec<&Recipe>)],
    after_first: f64,
    starts: usize,
) -> String {
    let Some(rates) = rates(p, out, after_first) else {
        return format!(
            "# estimate: none: no earlier run in {} has cells measured with these settings (a run of this config, even a stopped one, gives the next plan its rates)\n",
            out.display()
        );
    };
    let mut seconds = 0.0;
    let mut unknown = Vec::new();
    for (imp, recipes) in to_measure {
        let Some(&typical) = rates.imp_sec.get(&imp.name) else {
            if !recipes.is_empty() {
                unknown.push(imp.name.as_str());
            }
            continue;
        };
        for (r, w) in recipes
            .iter()
            .flat_map(|r| p.settings.workers.values().iter().map(move |w| (r, *w)))
        {
            let key = (imp.name.clone(), w, r.row.clone());
            let cell = rates.cell_sec.get(&key).copied().unwrap_or(typical);
            seconds += cell * p.seeds.len() as f64;
        }
    }
    let mut line = format!(
        "# estimate: {:.1} min of cells at the rates of run {} in {} (each cell: its loader's start, then its batches), plus {starts} worker starts of a few seconds each and one read of every file\n",
        seconds / 60.0,
        rates.run_id,
        out.display()
    );
    if !unknown.is_empty() {
        line.push_str(&format!(
            "# not estimated (no earlier cell): {}\n",
            unknown.join(", ")
        ));
    }
    line
}
