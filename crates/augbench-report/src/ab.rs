//! A/B verdicts of one run (DESIGN §14): each variant of a library against the run's baseline
//! variant, per transform, read from the paired evidence of the interleaved rounds: the median of
//! per-round ratios current ÷ baseline and the interval where a repeat's ratio lands. A row is
//! `slower` or `faster` only when that interval excludes 1 AND the change is at least the
//! minimum effect (`policy::REGRESSION_MIN_EFFECT` unless given); otherwise `no change`.

use std::collections::BTreeSet;
use std::fmt::Write;

use anyhow::Context;
use augbench_core::policy;
use serde::Serialize;

use crate::export::Format;
use crate::model::{Dataset, GroupKey, Row};
use crate::output::usage;
use crate::regression::Verdict;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AbRow {
    pub key: GroupKey,
    /// The library both variants are of.
    pub library: String,
    pub baseline: String,
    pub current: String,
    pub transform: String,
    /// Median over rounds of current ÷ baseline throughput.
    pub ratio: Option<f64>,
    /// The interval the verdict reads (where a repeat's ratio lands, 95%).
    pub interval: Option<(f64, f64)>,
    pub rounds: u64,
    pub verdict: Verdict,
    pub note: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AbReport {
    pub min_effect: f64,
    pub rows: Vec<AbRow>,
}

impl AbReport {
    pub fn count(&self, v: Verdict) -> usize {
        self.rows.iter().filter(|r| r.verdict == v).count()
    }

    pub fn has_regression(&self) -> bool {
        self.count(Verdict::Regression) > 0
    }

    /// The rows of one group (scenario, mode, device, sweep point), same minimum effect.
    pub fn of_group(&self, key: &GroupKey) -> AbReport {
        AbReport {
            min_effect: self.min_effect,
            rows: self
                .rows
                .iter()
                .filter(|r| &r.key == key)
                .cloned()
                .collect(),
        }
    }
}

impl AbRow {
    /// The ratio as every view prints it (`0.912`), `–` without paired evidence.
    pub fn ratio_text(&self) -> String {
        self.ratio.map_or_else(|| "–".into(), |x| format!("{x:.3}"))
    }

    /// The interval as every view prints it (`[0.890, 0.935]`), `–` without paired evidence.
    pub fn interval_text(&self) -> String {
        self.interval
            .map_or_else(|| "–".into(), |(lo, hi)| format!("[{lo:.3}, {hi:.3}]"))
    }

    /// The verdict word, with the reason when the row is not comparable.
    pub fn verdict_text(&self) -> String {
        match (self.verdict, &self.note) {
            (Verdict::NotComparable, Some(n)) => format!("not comparable: {n}"),
            (v, _) => word(v).to_string(),
        }
    }
}

/// The verdict of a paired ratio current ÷ baseline and its interval (pure).
pub fn verdict(ratio: f64, (lo, hi): (f64, f64), min_effect: f64) -> Verdict {
    let covers_one = lo <= 1.0 && 1.0 <= hi;
    if covers_one || (ratio - 1.0).abs() < min_effect {
        Verdict::Same
    } else if ratio < 1.0 {
        Verdict::Regression
    } else {
        Verdict::Faster
    }
}

/// The A/B rows of every variant in `data` against its run's baseline; `None` when no file of
/// `data` was measured as a variant.
pub fn compare(data: &Dataset, min_effect: f64) -> anyhow::Result<Option<AbReport>> {
    check_min_effect(min_effect)?;
    let pairs: BTreeSet<(GroupKey, String, String, String)> = data
        .sources
        .iter()
        .filter_map(|s| {
            let v = s.variant.as_ref()?;
            let key = s.key.clone();
            (v.label != v.baseline)
                .then(|| (key, v.library.clone(), v.baseline.clone(), v.label.clone()))
        })
        .collect();
    if pairs.is_empty() && !data.sources.iter().any(|s| s.variant.is_some()) {
        return Ok(None);
    }
    let mut rows = Vec::new();
    for (key, library, baseline, current) in pairs {
        let of = |label: &str| -> Vec<&Row> {
            data.rows
                .iter()
                .filter(|r| r.key() == key && r.library == label)
                .collect()
        };
        let (base_rows, cur_rows) = (of(&baseline), of(&current));
        let transforms: BTreeSet<&str> = base_rows
            .iter()
            .chain(&cur_rows)
            .map(|r| r.transform.as_str())
            .collect();
        for t in transforms {
            let mut row = AbRow {
                key: key.clone(),
                library: library.clone(),
                baseline: baseline.clone(),
                current: current.clone(),
                transform: t.to_string(),
                ratio: None,
                interval: None,
                rounds: 0,
                verdict: Verdict::NotComparable,
                note: None,
            };
            fill(
                &mut row,
                find(&base_rows, t),
                find(&cur_rows, t),
                min_effect,
            );
            rows.push(row);
        }
    }
    Ok(Some(AbReport { min_effect, rows }))
}

fn find<'a>(rows: &[&'a Row], transform: &str) -> Option<&'a Row> {
    rows.iter().copied().find(|r| r.transform == transform)
}

fn check_min_effect(min_effect: f64) -> anyhow::Result<()> {
    if min_effect.is_finite() && (0.0..1.0).contains(&min_effect) {
        return Ok(());
    }
    Err(usage(
        format!("minimum effect {min_effect} is out of range"),
        format!(
            "give a fraction from 0 to below 1 (the default {} means 5%)",
            policy::REGRESSION_MIN_EFFECT
        ),
    ))
}

/// Fills the ratio and verdict from the current row's paired record against the baseline.
fn fill(row: &mut AbRow, base: Option<&Row>, cur: Option<&Row>, min_effect: f64) {
    let (Some(b), Some(c)) = (base, cur) else {
        row.note = Some(format!(
            "measured by {} only",
            if base.is_some() {
                "baseline"
            } else {
                "current"
            }
        ));
        return;
    };
    if b.measured().is_none() || c.measured().is_none() {
        row.note = Some(format!("baseline {}, current {}", b.status, c.status));
        return;
    }
    let same_rounds = c.pairing.is_some() && c.pairing == b.pairing;
    let paired = c.paired.iter().find(|p| p.partner == row.baseline);
    let Some(p) = paired.filter(|_| same_rounds) else {
        row.note = Some("not measured in the same rounds (no paired record)".into());
        return;
    };
    let interval = p.rerun.unwrap_or((p.ci_low, p.ci_high));
    row.ratio = Some(p.ratio);
    row.interval = Some(interval);
    row.rounds = p.rounds;
    row.verdict = verdict(p.ratio, interval, min_effect);
}

/// `slower`, `faster`, `no change`, `not comparable`.
pub fn word(v: Verdict) -> &'static str {
    match v {
        Verdict::Regression => "slower",
        Verdict::Faster => "faster",
        Verdict::Same => "no change",
        Verdict::NotComparable => "not comparable",
    }
}

/// One summary line: counts per verdict and the rule used.
pub fn summary(report: &AbReport) -> String {
    format!(
        "A/B: {} slower, {} faster, {} no change, {} not comparable (paired ratio current ÷ baseline over the same rounds; a change counts when its 95% rerun interval excludes 1 and |ratio − 1| ≥ {}%)",
        report.count(Verdict::Regression),
        report.count(Verdict::Faster),
        report.count(Verdict::Same),
        report.count(Verdict::NotComparable),
        report.min_effect * 100.0
    )
}

/// Renders the report in a format.
pub fn render(report: &AbReport, format: Format) -> anyhow::Result<String> {
    match format {
        Format::Markdown => Ok(render_markdown(report)),
        Format::Json => {
            let mut s =
                serde_json::to_string_pretty(report).context("serializing the A/B report")?;
            s.push('\n');
            Ok(s)
        }
        Format::Csv => render_csv(report),
    }
}

fn render_markdown(report: &AbReport) -> String {
    let mut out = String::new();
    let mut current: Option<(&GroupKey, &str, &str)> = None;
    for r in &report.rows {
        let head = (&r.key, r.baseline.as_str(), r.current.as_str());
        if current != Some(head) {
            let _ = write!(
                out,
                "{}### A/B {} ÷ {} · {}\n\n| Transform | Ratio | 95% rerun interval | Rounds | Verdict |\n|---|--:|---|--:|---|\n",
                if current.is_some() { "\n" } else { "" },
                r.current,
                r.baseline,
                r.key.title()
            );
            current = Some(head);
        }
        let verdict = match r.verdict {
            Verdict::Regression => format!("**{}**", r.verdict_text()),
            _ => r.verdict_text(),
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {verdict} |",
            r.transform.replace('|', "\\|"),
            r.ratio_text(),
            r.interval_text(),
            r.rounds
        );
    }
    let _ = writeln!(out, "\n{}", summary(report));
    out
}

fn render_csv(report: &AbReport) -> anyhow::Result<String> {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    let header = [
        "scenario",
        "mode",
        "device",
        "variant",
        "library",
        "baseline",
        "current",
        "transform",
        "ratio",
        "rerun_low",
        "rerun_high",
        "rounds",
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
            r.baseline.clone(),
            r.current.clone(),
            r.transform.clone(),
            o(r.ratio),
            o(r.interval.map(|i| i.0)),
            o(r.interval.map(|i| i.1)),
            r.rounds.to_string(),
            word(r.verdict).to_string(),
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
    fn an_interval_below_one_and_a_big_enough_drop_is_slower() {
        assert_eq!(verdict(0.90, (0.87, 0.93), 0.05), Verdict::Regression);
        assert_eq!(verdict(1.10, (1.07, 1.13), 0.05), Verdict::Faster);
    }

    #[test]
    fn an_interval_covering_one_or_a_small_change_is_no_change() {
        assert_eq!(verdict(0.90, (0.80, 1.01), 0.05), Verdict::Same);
        assert_eq!(verdict(0.97, (0.96, 0.98), 0.05), Verdict::Same);
        assert_eq!(verdict(0.97, (0.96, 0.98), 0.02), Verdict::Regression);
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, rng_seed: proptest::test_runner::RngSeed::Fixed(5), ..ProptestConfig::default() })]
        /// Swapping baseline and current (the ratio and its interval inverted) swaps the verdict,
        /// away from the minimum-effect boundary.
        #[test]
        fn inverting_the_ratio_mirrors_the_verdict(r in 0.5f64..2.0, w in 0.0f64..0.2) {
            let (lo, hi) = (r * (1.0 - w), r * (1.0 + w));
            let fwd = verdict(r, (lo, hi), 0.05);
            let back = verdict(1.0 / r, (1.0 / hi, 1.0 / lo), 0.05);
            let mirrored = match fwd { Verdict::Regression => Verdict::Faster, Verdict::Faster => Verdict::Regression, v => v };
            let near = (r - 1.0).abs() < 0.06 || (1.0 / r - 1.0).abs() < 0.06;
            prop_assert!(near || back == mirrored, "{fwd:?} vs {back:?}");
        }
    }
}
