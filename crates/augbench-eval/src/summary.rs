//! Summaries of a cell log: per group (columns chosen by the user) and per metric, the mean over
//! cells and a percentile bootstrap interval that resamples *scenes* with replacement (each cell is
//! its own unit when the log has no `scene_id`). Null and NaN values are left out. Seeded, so the
//! same file, options and seed give the same interval. The defaults live here and nowhere else.

use std::collections::HashMap;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use augbench_cells::error::{CellsError, Result};
use augbench_cells::table::{CellTable, CellValue};

/// Bootstrap resamples, generator seed and interval coverage by default: policy's, read here so
/// the CLI help and the library agree.
pub use augbench_core::policy::{
    BOOTSTRAP_RESAMPLES as DEFAULT_BOOTSTRAP, BOOTSTRAP_SEED as DEFAULT_SEED,
    CONFIDENCE as DEFAULT_CI,
};

/// Most bootstrap resamples accepted: each resample keeps one mean per metric, so an unbounded
/// count is an unbounded allocation. 500× the default is far past where the interval settles.
pub const MAX_BOOTSTRAP: usize = 1_000_000;

/// Short names accepted for grouping columns.
pub const COLUMN_ALIASES: &[(&str, &str)] = &[("model", "model_name"), ("scene", "scene_id")];

/// The column whose values are resampled.
pub const RESAMPLE_UNIT: &str = "scene_id";

/// How to summarize.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryOptions {
    /// Grouping columns (aliases allowed).
    pub by: Vec<String>,
    /// Resamples; 0 skips the interval.
    pub bootstrap: usize,
    pub seed: u64,
    /// Interval coverage, strictly between 0 and 1.
    pub ci: f64,
}

impl Default for SummaryOptions {
    fn default() -> Self {
        Self {
            by: Vec::new(),
            bootstrap: DEFAULT_BOOTSTRAP,
            seed: DEFAULT_SEED,
            ci: DEFAULT_CI,
        }
    }
}

/// One (group, metric) line of a summary.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SummaryRow {
    /// (column, value) of each grouping column; null is "".
    pub group: Vec<(String, String)>,
    pub metric: String,
    /// Cells with a value for this metric.
    pub n_cells: usize,
    /// Resampling units (scenes) with a value.
    pub n_units: usize,
    pub mean: Option<f64>,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
}

/// Finds a column by name or alias.
pub fn resolve_column(table: &CellTable, name: &str) -> Option<usize> {
    table.column_index(name).or_else(|| {
        COLUMN_ALIASES
            .iter()
            .find(|(a, _)| *a == name)
            .and_then(|(_, full)| table.column_index(full))
    })
}

fn check(table: &CellTable, opts: &SummaryOptions) -> Result<Vec<usize>> {
    if opts.bootstrap > MAX_BOOTSTRAP {
        return Err(CellsError::BadArgument {
            detail: format!(
                "--bootstrap {} is more resamples than the limit of {MAX_BOOTSTRAP}",
                opts.bootstrap
            ),
            hint: format!(
                "the default {DEFAULT_BOOTSTRAP} is enough for a 95% interval; pass at most {MAX_BOOTSTRAP}"
            ),
        });
    }
    if !(opts.ci > 0.0 && opts.ci < 1.0) {
        return Err(CellsError::BadArgument {
            detail: format!("--ci must be strictly between 0 and 1, got {}", opts.ci),
            hint: format!("for a 95% interval pass {DEFAULT_CI}"),
        });
    }
    if table.num_rows() == 0 {
        return Err(CellsError::BadArgument {
            detail: "the log has no cells to summarize (0 rows)".into(),
            hint: "check that grouping produced cells, or merge logs that hold some".into(),
        });
    }
    opts.by
        .iter()
        .map(|b| {
            resolve_column(table, b).ok_or_else(|| CellsError::BadArgument {
                detail: format!("no column '{b}' to group by"),
                hint: format!("columns are: {}", table.column_names().join(", ")),
            })
        })
        .collect()
}

fn text(v: CellValue<'_>) -> String {
    match v {
        CellValue::Null => String::new(),
        CellValue::Str(s) => s.to_string(),
        CellValue::Int(i) => i.to_string(),
        CellValue::Float(f) => format!("{f:?}"),
        CellValue::List(xs) => format!("{xs:?}"),
    }
}

/// Per-unit (sum, count) of every metric.
struct Group {
    key: Vec<String>,
    units: Vec<Vec<(f64, u64)>>,
    unit_index: HashMap<String, usize>,
}

/// Summarizes every metric column of `table`.
pub fn summarize(table: &CellTable, opts: &SummaryOptions) -> Result<Vec<SummaryRow>> {
    let by = check(table, opts)?;
    let metrics: Vec<usize> = table
        .column_names()
        .iter()
        .enumerate()
        .filter(|(_, n)| augbench_cells::schema::metric_name(n).is_some())
        .map(|(i, _)| i)
        .collect();
    let groups = collect_groups(table, &by, &metrics);
    let by_names: Vec<String> = by
        .iter()
        .map(|&i| table.column_names()[i].to_string())
        .collect();
    let mut out = Vec::new();
    for g in &groups {
        let intervals = bootstrap(g, metrics.len(), opts);
        for (m, &col) in metrics.iter().enumerate() {
            let (sum, n) = g
                .units
                .iter()
                .fold((0.0, 0), |(s, c), u| (s + u[m].0, c + u[m].1));
            out.push(SummaryRow {
                group: by_names
                    .iter()
                    .cloned()
                    .zip(g.key.iter().cloned())
                    .collect(),
                metric: table.column_names()[col].to_string(),
                n_cells: n as usize,
                n_units: g.units.iter().filter(|u| u[m].1 > 0).count(),
                mean: (n > 0).then(|| sum / n as f64),
                ci_low: intervals[m].map(|i| i.0),
                ci_high: intervals[m].map(|i| i.1),
            });
        }
    }
    Ok(out)
}

fn collect_groups(table: &CellTable, by: &[usize], metrics: &[usize]) -> Vec<Group> {
    let unit_col = table.column_index(RESAMPLE_UNIT);
    let mut groups: Vec<Group> = Vec::new();
    let mut index: HashMap<Vec<String>, usize> = HashMap::new();
    for (row, (b, r)) in table.positions().enumerate() {
        let key: Vec<String> = by.iter().map(|&c| text(table.value(b, c, r))).collect();
        let gi = *index.entry(key.clone()).or_insert_with(|| {
            groups.push(Group {
                key,
                units: Vec::new(),
                unit_index: HashMap::new(),
            });
            groups.len() - 1
        });
        let g = &mut groups[gi];
        let unit = unit_col.map_or_else(|| format!("#{row}"), |c| text(table.value(b, c, r)));
        let ui = *g.unit_index.entry(unit).or_insert_with(|| {
            g.units.push(vec![(0.0, 0); metrics.len()]);
            g.units.len() - 1
        });
        for (m, &c) in metrics.iter().enumerate() {
            if let CellValue::Float(v) = table.value(b, c, r)
                && !v.is_nan()
            {
                g.units[ui][m].0 += v;
                g.units[ui][m].1 += 1;
            }
        }
    }
    groups
}

/// Percentile bootstrap interval of each metric's mean, resampling units with replacement.
fn bootstrap(g: &Group, n_metrics: usize, opts: &SummaryOptions) -> Vec<Option<(f64, f64)>> {
    if opts.bootstrap == 0 || g.units.is_empty() {
        return vec![None; n_metrics];
    }
    let mut rng = ChaCha8Rng::seed_from_u64(opts.seed);
    let n = g.units.len();
    let mut stats: Vec<Vec<f64>> = vec![Vec::with_capacity(opts.bootstrap); n_metrics];
    let mut acc = vec![(0.0, 0u64); n_metrics];
    for _ in 0..opts.bootstrap {
        acc.iter_mut().for_each(|a| *a = (0.0, 0));
        for _ in 0..n {
            let u = &g.units[rng.random_range(0..n)];
            for (a, x) in acc.iter_mut().zip(u) {
                a.0 += x.0;
                a.1 += x.1;
            }
        }
        for (s, a) in stats.iter_mut().zip(&acc) {
            if a.1 > 0 {
                s.push(a.0 / a.1 as f64);
            }
        }
    }
    let alpha = (1.0 - opts.ci) / 2.0;
    stats
        .into_iter()
        .map(|mut s| {
            s.sort_by(f64::total_cmp);
            Some((quantile(&s, alpha)?, quantile(&s, 1.0 - alpha)?))
        })
        .collect()
}

/// Linear-interpolated quantile of sorted values (NumPy's default method).
pub fn quantile(sorted: &[f64], q: f64) -> Option<f64> {
    let last = sorted.len().checked_sub(1)?;
    let pos = q.clamp(0.0, 1.0) * last as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    Some(sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantile_interpolates_like_numpy() {
        let s = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile(&s, 0.5), Some(2.5));
        assert_eq!(quantile(&s, 0.0), Some(1.0));
        assert_eq!(quantile(&s, 1.0), Some(4.0));
        assert_eq!(quantile(&[], 0.5), None);
    }
}
