//! Two production runs side by side (`augbench compare --baseline OLD --current NEW` on production
//! folders): per (recipe, implementation) measured by both, items/s and peak PSS of each and the
//! ratio current / baseline; per implementation the geometric mean over those recipes, with the
//! denominator and the single recipes' range. Ratios only: no verdict word, since no simulator has
//! tested a rule for production cells. Runs measured with other cell settings are refused, and so
//! are a sweep of loader workers against a run of one count or of other counts (the tables'
//! columns are (implementation, count) in a sweep).

use augbench_core::UsageError;
use augbench_core::production::cell::{Cell, settings_except_workers};

use crate::production::{Table, entries, order};

/// The cell settings both runs must share (every cell of a run carries the run's; in a sweep each
/// its own count of loader workers, which `swept` compares instead).
fn settings(cells: &[Cell]) -> Option<serde_json::Value> {
    let s = &cells.first()?.settings;
    Some(match swept(cells) {
        Some(_) => settings_except_workers(s),
        None => s.clone(),
    })
}

/// The loader-worker counts a run swept (its cells' ids), `None` for a run of one count.
fn swept(cells: &[Cell]) -> Option<std::collections::BTreeSet<u64>> {
    let counts: std::collections::BTreeSet<u64> =
        cells.iter().filter_map(|c| c.id.workers).collect();
    (!counts.is_empty()).then_some(counts)
}

/// Refuses runs whose cells were measured with other settings, naming the first that differs.
pub fn check_comparable(baseline: &[Cell], current: &[Cell]) -> Result<(), UsageError> {
    let (Some(b), Some(c)) = (settings(baseline), settings(current)) else {
        return Err(UsageError::new(
            "a production run to compare has no readable cell",
            "run `augbench production` for both folders first",
        ));
    };
    let (sb, sc) = (swept(baseline), swept(current));
    if sb != sc {
        let say = |s: &Option<std::collections::BTreeSet<u64>>| match s {
            None => "measured one count of loader workers".to_string(),
            Some(counts) => format!(
                "swept loader workers {}",
                counts
                    .iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        return Err(UsageError::new(
            format!(
                "the baseline {} and the current run {}: their columns do not pair",
                say(&sb),
                say(&sc)
            ),
            "compare runs of one production config (the same `workers:`)",
        ));
    }
    let keys = b.as_object().into_iter().flat_map(|o| o.keys());
    if let Some(k) = keys.clone().find(|k| b.get(*k) != c.get(*k)) {
        return Err(UsageError::new(
            format!(
                "the runs' cells were measured with different settings: `{k}` is {} in the baseline and {} in the current run",
                b[k.as_str()],
                c.get(k.as_str()).cloned().unwrap_or_default()
            ),
            "compare runs of one production config (only the implementations, recipes and seeds may differ)",
        ));
    }
    Ok(())
}

/// The comparison as Markdown.
pub fn markdown(baseline: &[Cell], current: &[Cell]) -> String {
    let (b, c) = (entries(baseline), entries(current));
    let (rows, imps) = order(&[current, baseline].concat());
    let mut out = String::from(
        "## Current against baseline (items/s and peak PSS, median over seeds; ratio current / baseline)\n\n\
         | recipe | implementation | baseline | current | ratio | PSS ratio |\n|---|---|---:|---:|---:|---:|\n",
    );
    for row in &rows {
        for imp in &imps {
            if let Some(line) = pair_line(row, imp, &b, &c) {
                out.push_str(&line);
            }
        }
    }
    out.push_str(
        "\n## Per implementation (geometric mean over the recipes both runs measured)\n\n",
    );
    for imp in &imps {
        out.push_str(&summary_line(imp, &rows, &b, &c));
    }
    out.push_str(
        "\nRatios only: no rule for production cells has a tested error rate yet, so this names no regression (exit 0).\n",
    );
    out
}

fn key(row: &str, imp: &str) -> (String, String) {
    (row.to_string(), imp.to_string())
}

fn pair_line(row: &str, imp: &str, b: &Table, c: &Table) -> Option<String> {
    let (old, new) = (b.get(&key(row, imp))?, c.get(&key(row, imp))?);
    let mib = crate::production::memory_text;
    let pss = match (old.pss_bytes, new.pss_bytes) {
        (Some(o), Some(n)) if o > 0 => format!("{:.2}×", n as f64 / o as f64),
        _ => "n/a".into(),
    };
    Some(format!(
        "| {row} | {imp} | {:.0} ({}) | {:.0} ({}) | {:.2}× | {pss} |\n",
        old.items_per_sec,
        mib(old),
        new.items_per_sec,
        mib(new),
        new.items_per_sec / old.items_per_sec
    ))
}

/// `- image_cpu: 0.97× over 8/12 recipes (per recipe 0.91–1.02×)`, over the recipes both runs
/// measured for `imp`, out of every recipe either run has.
fn summary_line(imp: &str, rows: &[String], b: &Table, c: &Table) -> String {
    let ratios: Vec<f64> = rows
        .iter()
        .filter_map(|r| {
            Some(c.get(&key(r, imp))?.items_per_sec / b.get(&key(r, imp))?.items_per_sec)
        })
        .collect();
    match crate::production::Ratio::of(&ratios) {
        None => format!("- {imp}: no recipe measured by both runs\n"),
        Some(r) => format!("- {imp}: {}\n", r.line(rows.len())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(imp: &str, row: &str, rate: Option<f64>, batch: u64) -> Cell {
        let settings = serde_json::json!({"batch_size": batch, "workers": 2});
        crate::production::test_cell(imp, row, 137, rate, settings)
    }

    #[test]
    fn ratios_cover_the_recipes_both_runs_measured_and_name_no_verdict() {
        let old = vec![
            cell("a_cpu", "Resize", Some(100.0), 16),
            cell("a_cpu", "Pad", Some(200.0), 16),
            cell("a_cpu", "Invert", None, 16),
        ];
        let new = vec![
            cell("a_cpu", "Resize", Some(50.0), 16),
            cell("a_cpu", "Pad", Some(400.0), 16),
            cell("a_cpu", "Invert", Some(10.0), 16),
        ];
        check_comparable(&old, &new).unwrap();
        let md = markdown(&old, &new);
        assert!(
            md.contains("| Resize | a_cpu | 100 (memory n/a) | 50 (memory n/a) | 0.50× | n/a |"),
            "{md}"
        );
        assert!(!md.contains("| Invert |"), "{md}");
        assert!(
            md.contains("- a_cpu: 1.00× over 2/3 recipes (per recipe 0.50–2.00×)"),
            "{md}"
        );
        assert!(!md.contains("slower") && !md.contains("faster"), "{md}");
    }

    #[test]
    fn runs_of_other_settings_are_refused_naming_the_setting() {
        let old = vec![cell("a_cpu", "Resize", Some(100.0), 16)];
        let new = vec![cell("a_cpu", "Resize", Some(100.0), 32)];
        let e = check_comparable(&old, &new).unwrap_err();
        assert!(
            e.message
                .contains("`batch_size` is 16 in the baseline and 32"),
            "{}",
            e.message
        );
        assert!(check_comparable(&[], &new).is_err());
    }

    /// Two sweeps of the same counts pair column by column (their cells' settings differ only in
    /// each count); a sweep against one count, or against other counts, is refused by name.
    #[test]
    fn a_sweep_compares_with_a_sweep_of_the_same_counts_only() {
        let swept = |w: u64, rate: f64| {
            let settings = serde_json::json!({"batch_size": 16, "workers": w});
            let mut c = crate::production::test_cell("a_cpu", "Resize", 137, Some(rate), settings);
            c.id.workers = Some(w);
            c
        };
        let old = vec![swept(0, 100.0), swept(2, 180.0)];
        let new = vec![swept(0, 90.0), swept(2, 200.0)];
        check_comparable(&old, &new).unwrap();
        let md = markdown(&old, &new);
        assert!(
            md.contains(
                "| Resize | a_cpu (2 workers) | 180 (memory n/a) | 200 (memory n/a) | 1.11× | n/a |"
            ),
            "{md}"
        );
        let single = vec![cell("a_cpu", "Resize", Some(100.0), 16)];
        let e = check_comparable(&single, &new).unwrap_err();
        assert!(e.message.contains("the baseline measured one count of loader workers and the current run swept loader workers 0, 2"), "{}", e.message);
        let e = check_comparable(&old, &[swept(0, 1.0), swept(4, 1.0)]).unwrap_err();
        assert!(
            e.message.contains("swept loader workers 0, 4"),
            "{}",
            e.message
        );
    }
}
