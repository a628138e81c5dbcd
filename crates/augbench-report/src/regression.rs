//! Regression check: a baseline run against a current one, row by row (group, library,
//! transform), on the rows' headline figures (`Row::headline`; both sides' medians where the two
//! runs recorded different figures, e.g. a file written before figures existed). A row is a
//! `regression` or `faster` only when each run's rerun interval (where a repeat's figure lands,
//! 95%) excludes the other run's figure AND the change is at least the minimum effect; otherwise
//! it is `same`. The ratio current ÷ baseline gets an interval on the log scale.

use std::collections::BTreeMap;
use std::fmt::Write;

use anyhow::Context;
use augbench_core::results::Status;
use augbench_core::stats::logscale;
use augbench_core::{policy, stats};
use serde::Serialize;

use crate::export::{Format, fmt_median_std};
use crate::model::{Dataset, GroupKey, Row, unit};
use crate::output::usage;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Regression,
    Faster,
    Same,
    /// Measured on one side only (missing, slow, unsupported or error on the other).
    NotComparable,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Regression => "regression",
            Verdict::Faster => "faster",
            Verdict::Same => "same",
            Verdict::NotComparable => "not comparable",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    pub key: GroupKey,
    pub library: String,
    pub transform: String,
    pub unit: &'static str,
    pub baseline: Option<f64>,
    pub baseline_interval: Option<(f64, f64)>,
    pub current: Option<f64>,
    pub current_interval: Option<(f64, f64)>,
    /// (current − baseline) / baseline × 100.
    pub delta_pct: Option<f64>,
    /// current ÷ baseline and its 95% interval on the log scale (from both rerun intervals).
    pub ratio: Option<f64>,
    pub ratio_interval: Option<(f64, f64)>,
    /// Which figure both sides show (`fastest run`, `median run`).
    pub figure: Option<String>,
    pub verdict: Verdict,
    pub note: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RegressionReport {
    pub min_effect: f64,
    pub rows: Vec<Comparison>,
}

impl RegressionReport {
    pub fn count(&self, v: Verdict) -> usize {
        self.rows.iter().filter(|r| r.verdict == v).count()
    }

    pub fn has_regression(&self) -> bool {
        self.count(Verdict::Regression) > 0
    }
}

/// The verdict for two medians and their rerun intervals (pure): a change needs each interval to
/// exclude the other side's median, and at least `min_effect`.
pub fn verdict(
    base: f64,
    base_ci: (f64, f64),
    cur: f64,
    cur_ci: (f64, f64),
    min_effect: f64,
) -> Verdict {
    let covers = |(lo, hi): (f64, f64), x: f64| lo <= x && x <= hi;
    let same = covers(base_ci, cur) || covers(cur_ci, base);
    let effect = (cur - base) / base;
    if same || effect.abs() < min_effect {
        Verdict::Same
    } else if cur < base {
        Verdict::Regression
    } else {
        Verdict::Faster
    }
}

/// The rerun interval of a measured row's median: its own when recorded, else a seeded bootstrap
/// of its runs, else the interval of the median it recorded, else the median alone.
pub fn interval(row: &Row, median: f64) -> (f64, f64) {
    match (row.rerun, row.ci_low, row.ci_high) {
        (Some((lo, hi)), _, _) if lo <= hi => (lo, hi),
        _ if row.throughputs.len() >= 2 => stats::rerun_interval(&row.throughputs, &[]),
        (_, Some(lo), Some(hi)) if lo <= hi => (lo, hi),
        _ => (median, median),
    }
}

type RowKey = (GroupKey, String, String);

fn index(data: &Dataset) -> BTreeMap<RowKey, &Row> {
    data.rows
        .iter()
        .map(|r| ((r.key(), r.library.clone(), r.transform.clone()), r))
        .collect()
}

/// Compares every row present in either run.
pub fn compare(
    baseline: &Dataset,
    current: &Dataset,
    min_effect: f64,
) -> anyhow::Result<RegressionReport> {
    if !(min_effect.is_finite() && (0.0..1.0).contains(&min_effect)) {
        return Err(usage(
            format!("minimum effect {min_effect} is out of range"),
            format!(
                "give a fraction from 0 to below 1 (the default {} means 5%)",
                policy::REGRESSION_MIN_EFFECT
            ),
        ));
    }
    let (b, c) = (index(baseline), index(current));
    let mut keys: Vec<&RowKey> = b.keys().chain(c.keys()).collect();
    keys.sort();
    keys.dedup();
    let rows = keys
        .into_iter()
        .map(|k| compare_row(k, b.get(k).copied(), c.get(k).copied(), min_effect))
        .collect();
    Ok(RegressionReport { min_effect, rows })
}

/// A measured row's figure, its rerun interval and which figure it is.
type Side = (f64, (f64, f64), String);

/// The figure of a measured row with its interval (`Row::headline`); with `median_only`, its
/// median (for two runs that recorded different figures).
fn side(r: Option<&Row>, median_only: bool) -> Option<Side> {
    let r = r.filter(|r| r.status == Status::Ok)?;
    let h = r.headline()?;
    if median_only || h.from_median {
        let m = r.median.filter(|m| *m > 0.0)?;
        return Some((m, interval(r, m), stats::Estimator::Median.label().into()));
    }
    let iv = h.low.zip(h.high).unwrap_or((h.value, h.value));
    Some((h.value, iv, h.label()))
}

/// Both sides on the same figure: their headline figures when the same estimator, else medians.
fn sides(b: Option<&Row>, c: Option<&Row>) -> (Option<Side>, Option<Side>, Option<String>) {
    let est = |r: Option<&Row>| r.and_then(Row::headline).map(|h| h.estimator);
    let differ = b.is_some() && c.is_some() && est(b) != est(c);
    let note = differ.then(|| {
        format!(
            "the runs recorded different figures ({} vs {}): compared medians",
            est(b).unwrap_or_default(),
            est(c).unwrap_or_default()
        )
    });
    (side(b, differ), side(c, differ), note)
}

fn compare_row(k: &RowKey, b: Option<&Row>, c: Option<&Row>, min_effect: f64) -> Comparison {
    let media = b
        .or(c)
        .map(|r| r.media)
        .unwrap_or(augbench_core::Media::Image);
    let (bm, cm, differ) = sides(b, c);
    let (verdict, delta, note) = match (&bm, &cm) {
        (Some((bv, bi, _)), Some((cv, ci, _))) => (
            verdict(*bv, *bi, *cv, *ci, min_effect),
            Some((cv - bv) / bv * 100.0),
            differ,
        ),
        _ => (Verdict::NotComparable, None, Some(one_sided(b, c))),
    };
    let ratio = match (&bm, &cm) {
        (Some((bv, (bl, bh), _)), Some((cv, (cl, ch), _))) => logscale::ratio_of(
            *cv,
            logscale::log_half_width(*cv, *cl, *ch),
            *bv,
            logscale::log_half_width(*bv, *bl, *bh),
        ),
        _ => None,
    };
    Comparison {
        key: k.0.clone(),
        library: k.1.clone(),
        transform: k.2.clone(),
        unit: unit(media),
        figure: cm.as_ref().or(bm.as_ref()).map(|x| x.2.clone()),
        baseline: bm.as_ref().map(|x| x.0),
        baseline_interval: bm.as_ref().map(|x| x.1),
        current: cm.as_ref().map(|x| x.0),
        current_interval: cm.as_ref().map(|x| x.1),
        delta_pct: delta,
        ratio: ratio.map(|r| r.0),
        ratio_interval: ratio.map(|r| r.1),
        verdict,
        note,
    }
}

/// Why a row is not comparable: `slow in both runs`, or each side's state.
fn one_sided(b: Option<&Row>, c: Option<&Row>) -> String {
    let (b, c) = (describe(b), describe(c));
    if b == c {
        format!("{b} in both runs")
    } else {
        format!("baseline: {b}; current: {c}")
    }
}

fn describe(r: Option<&Row>) -> String {
    match r {
        None => "missing".into(),
        Some(r) if r.status == Status::Ok => "measured".into(),
        Some(r) => match &r.reason {
            Some(reason) => format!("{} ({reason})", r.status),
            None => r.status.to_string(),
        },
    }
}

/// Renders the report in a format.
pub fn render(report: &RegressionReport, format: Format) -> anyhow::Result<String> {
    match format {
        Format::Markdown => Ok(render_markdown(report)),
        Format::Json => {
            let mut s = serde_json::to_string_pretty(report)
                .context("serializing the regression report")?;
            s.push('\n');
            Ok(s)
        }
        Format::Csv => render_csv(report),
    }
}

/// One summary line: counts per verdict and the rule used.
pub fn summary(report: &RegressionReport) -> String {
    format!(
        "{} regression(s), {} faster, {} same, {} not comparable (a change counts when each run's 95% rerun \
         interval excludes the other's figure and |Δ| ≥ {}%)",
        report.count(Verdict::Regression),
        report.count(Verdict::Faster),
        report.count(Verdict::Same),
        report.count(Verdict::NotComparable),
        report.min_effect * 100.0
    )
}

fn render_markdown(report: &RegressionReport) -> String {
    let mut out = String::new();
    let mut current: Option<&GroupKey> = None;
    for r in &report.rows {
        if current != Some(&r.key) {
            let _ = write!(
                out,
                "{}### {}\n\n| Library | Transform | Figure | Baseline [{u}] | Current [{u}] | Δ% | Current ÷ baseline [95%] | Verdict |\n\
                 |---|---|---|--:|--:|--:|--:|---|\n",
                if current.is_some() { "\n" } else { "" },
                r.key.title(),
                u = r.unit
            );
            current = Some(&r.key);
        }
        let verdict = match r.verdict {
            Verdict::Regression => "**regression**".to_string(),
            Verdict::NotComparable => {
                format!("not comparable: {}", r.note.as_deref().unwrap_or(""))
            }
            v => match &r.note {
                Some(note) => format!("{} ({note})", v.as_str()),
                None => v.as_str().to_string(),
            },
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {verdict} |",
            r.library,
            r.transform.replace('|', "\\|"),
            r.figure.as_deref().unwrap_or("–"),
            fmt_side(r.baseline, r.baseline_interval),
            fmt_side(r.current, r.current_interval),
            r.delta_pct
                .map_or_else(|| "n/a".into(), |d| format!("{d:+.1}%")),
            fmt_ratio(r.ratio, r.ratio_interval),
        );
    }
    let _ = writeln!(out, "\n{}", summary(report));
    out
}

fn fmt_ratio(r: Option<f64>, ci: Option<(f64, f64)>) -> String {
    match (r, ci) {
        (Some(r), Some((lo, hi))) => format!("{r:.3} [{lo:.3}, {hi:.3}]"),
        _ => "–".into(),
    }
}

fn fmt_side(m: Option<f64>, ci: Option<(f64, f64)>) -> String {
    match (m, ci) {
        (Some(m), Some((lo, hi))) => {
            let d = crate::export::decimals(m);
            format!("{} [{lo:.d$}, {hi:.d$}]", fmt_median_std(m, None))
        }
        _ => "–".into(),
    }
}

fn render_csv(report: &RegressionReport) -> anyhow::Result<String> {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    let header = [
        "scenario",
        "mode",
        "device",
        "variant",
        "library",
        "transform",
        "unit",
        "baseline",
        "baseline_rerun_low",
        "baseline_rerun_high",
        "current",
        "current_rerun_low",
        "current_rerun_high",
        "delta_pct",
        "ratio",
        "ratio_low",
        "ratio_high",
        "figure",
        "verdict",
        "note",
    ];
    w.write_record(header).context("writing CSV")?;
    let o = |x: Option<f64>| x.map(crate::export::csv::num).unwrap_or_default();
    for r in &report.rows {
        let k = &r.key;
        w.write_record([
            k.scenario.clone(),
            k.mode.clone(),
            k.device.clone(),
            k.variant.clone(),
            r.library.clone(),
            r.transform.clone(),
            r.unit.to_string(),
            o(r.baseline),
            o(r.baseline_interval.map(|c| c.0)),
            o(r.baseline_interval.map(|c| c.1)),
            o(r.current),
            o(r.current_interval.map(|c| c.0)),
            o(r.current_interval.map(|c| c.1)),
            o(r.delta_pct),
            o(r.ratio),
            o(r.ratio_interval.map(|c| c.0)),
            o(r.ratio_interval.map(|c| c.1)),
            r.figure.clone().unwrap_or_default(),
            r.verdict.as_str().to_string(),
            r.note.clone().unwrap_or_default(),
        ])
        .context("writing CSV")?;
    }
    String::from_utf8(w.into_inner().context("finishing CSV")?).context("CSV is not UTF-8")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn twenty_percent_slower_with_tight_intervals_is_a_regression() {
        let v = verdict(1000.0, (990.0, 1010.0), 800.0, (790.0, 810.0), 0.05);
        assert_eq!(v, Verdict::Regression);
    }

    #[test]
    fn overlapping_intervals_that_exclude_each_others_median_are_a_change() {
        let v = verdict(1000.0, (900.0, 1100.0), 880.0, (800.0, 960.0), 0.05);
        assert_eq!(v, Verdict::Regression);
        // One interval covering the other median is enough to call it the same.
        let v = verdict(1000.0, (870.0, 1100.0), 880.0, (800.0, 960.0), 0.05);
        assert_eq!(v, Verdict::Same);
    }

    #[test]
    fn overlapping_intervals_are_same_even_for_big_changes() {
        assert_eq!(
            verdict(1000.0, (700.0, 1300.0), 800.0, (600.0, 1000.0), 0.05),
            Verdict::Same
        );
    }

    #[test]
    fn small_effect_is_same_even_without_overlap() {
        assert_eq!(
            verdict(1000.0, (999.0, 1001.0), 980.0, (979.0, 981.0), 0.05),
            Verdict::Same
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, rng_seed: proptest::test_runner::RngSeed::Fixed(3), ..ProptestConfig::default() })]
        /// Swapping baseline and current swaps regression and faster.
        #[test]
        fn verdict_is_antisymmetric(b in 1.0f64..1e5, c in 1.0f64..1e5, wb in 0.0f64..0.3, wc in 0.0f64..0.3) {
            let (bi, ci) = ((b * (1.0 - wb), b * (1.0 + wb)), (c * (1.0 - wc), c * (1.0 + wc)));
            let fwd = verdict(b, bi, c, ci, 0.05);
            let back = verdict(c, ci, b, bi, 0.05);
            let mirrored = match fwd { Verdict::Regression => Verdict::Faster, Verdict::Faster => Verdict::Regression, v => v };
            // The relative effect is measured against the baseline, so it is asymmetric near the
            // threshold; away from it the verdicts must mirror.
            let near = ((c - b) / b).abs() < 0.06 || ((b - c) / c).abs() < 0.06;
            prop_assert!(near || back == mirrored, "{fwd:?} vs {back:?}");
        }

        #[test]
        fn identical_runs_are_same(b in 1.0f64..1e5, w in 0.0f64..0.3) {
            let i = (b * (1.0 - w), b * (1.0 + w));
            prop_assert_eq!(verdict(b, i, b, i, 0.05), Verdict::Same);
        }
    }
}
