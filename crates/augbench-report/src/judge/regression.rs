//! Regression check: a baseline run (one or more invocations) against a current one, row by row
//! (group, library, transform), on the rows' headline figures (`Row::headline`; both sides'
//! medians where the two runs recorded different figures, e.g. a file written before figures
//! existed). The ratio current ÷ baseline (the baseline's geometric mean over its invocations)
//! gets an interval on the log scale from each side's confidence interval of its figure plus the
//! drift between invocations (`drift`: estimated from repeated baselines, stated, or unknown,
//! which the summary says), and `verdict::decide_in_family` reads it (`same`, `regression`,
//! `faster` or `undecided`; a change on the interval widened so that every row's change claims
//! together keep 5%); a side with fewer than `verdict::MIN_UNITS` runs leaves the row
//! `undecided`; rows measured on other machines, over other data (items, files), with other
//! settings (a precision target or run count, processes, threads) or with other transform
//! parameters are `not comparable`. Rows measured on neither
//! side collapse into one line.

use std::collections::BTreeMap;

use augbench_core::results::Status;
use augbench_stats::logscale;
use serde::Serialize;

pub use crate::judge::verdict::Verdict;
use crate::judge::verdict::{self, Unmeasured, Verdicts};
use crate::model::{Dataset, GroupKey, MeasuredOver, Row, unit};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    pub key: GroupKey,
    pub library: String,
    pub transform: String,
    pub unit: &'static str,
    pub baseline: Option<f64>,
    /// The figure's rerun interval (where a repeat lands, 95%), shown; it never decides.
    pub baseline_interval: Option<(f64, f64)>,
    pub current: Option<f64>,
    pub current_interval: Option<(f64, f64)>,
    /// (current − baseline) / baseline × 100.
    pub delta_pct: Option<f64>,
    /// current ÷ baseline and its 95% confidence interval on the log scale (from both sides'
    /// confidence intervals): what the verdict reads.
    pub ratio: Option<f64>,
    pub ratio_interval: Option<(f64, f64)>,
    /// The same interval at the report's family level (`verdict::family_confidence` of
    /// `RegressionReport::family`): `regression` and `faster` read it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub change_interval: Option<(f64, f64)>,
    /// Which figure both sides show (`fastest run`, `median run`).
    pub figure: Option<String>,
    pub verdict: Verdict,
    pub note: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RegressionReport {
    pub min_effect: f64,
    /// What the interval's between-invocation term rests on.
    pub drift: crate::judge::drift::DriftBasis,
    /// Rows measured on both sides: the family whose change claims share one 5% error rate.
    pub family: usize,
    /// Every row measured on at least one side.
    pub rows: Vec<Comparison>,
    /// Rows measured on neither side (`not comparable`, one line).
    pub not_measured: Unmeasured,
}

impl Verdicts for RegressionReport {
    fn row_verdicts(&self) -> Vec<Verdict> {
        self.rows.iter().map(|r| r.verdict).collect()
    }

    fn unmeasured(&self) -> &Unmeasured {
        &self.not_measured
    }
}

/// The rerun interval of a measured row's median: its own when recorded, else a seeded bootstrap
/// of its runs, else the interval of the median it recorded, else the median alone.
pub fn interval(row: &Row, median: f64) -> (f64, f64) {
    rerun(row).unwrap_or(match (row.ci_low, row.ci_high) {
        (Some(lo), Some(hi)) if lo <= hi => (lo, hi),
        _ => (median, median),
    })
}

/// The median's rerun interval: recorded, else bootstrapped from two or more runs.
fn rerun(row: &Row) -> Option<(f64, f64)> {
    match row.rerun {
        Some((lo, hi)) if lo <= hi => Some((lo, hi)),
        _ if row.throughputs.len() >= 2 => {
            Some(augbench_stats::rerun_interval(&row.throughputs, &[]))
        }
        _ => None,
    }
}

/// Half-width on the log scale of the 95% confidence interval of `x` implied by its rerun
/// interval: a rerun interval is the 95% spread of the difference of two independent repeats,
/// √2 times one estimate's. `None` for an empty or non-positive interval.
fn confidence_from_rerun(x: f64, (lo, hi): (f64, f64)) -> Option<f64> {
    let h = logscale::log_half_width(x, lo, hi) / std::f64::consts::SQRT_2;
    (lo < hi && h > 0.0).then_some(h)
}

/// The median's confidence half-width on the log scale: from its rerun interval, else the
/// interval of the median it recorded.
fn median_confidence(row: &Row, m: f64) -> Option<f64> {
    if let Some(iv) = rerun(row) {
        return confidence_from_rerun(m, iv);
    }
    match (row.ci_low, row.ci_high) {
        (Some(lo), Some(hi)) if lo < hi => Some(logscale::log_half_width(m, lo, hi)),
        _ => None,
    }
}

use crate::judge::drift::RowKey;

/// Every row of a run, measured or not, by key.
fn index(data: &Dataset) -> BTreeMap<RowKey, &Row> {
    data.rows
        .iter()
        .map(|r| (crate::judge::drift::key(r), r))
        .collect()
}

/// Compares every row present in either run.
pub fn compare(
    baseline: &Dataset,
    current: &Dataset,
    min_effect: f64,
) -> anyhow::Result<RegressionReport> {
    compare_with(
        baseline,
        current,
        min_effect,
        crate::judge::counts::min_effect(None),
    )
}

/// `compare`, with the minimum effect of instruction-count rows given apart.
pub fn compare_with(
    baseline: &Dataset,
    current: &Dataset,
    min_effect: f64,
    count_min_effect: f64,
) -> anyhow::Result<RegressionReport> {
    let effects = (min_effect, count_min_effect);
    compare_runs(std::slice::from_ref(baseline), current, effects, None)
}

/// Every row present in the first baseline invocation or the current run, against the
/// baseline's `invocations` (the first decides which rows it has; the others add their figures
/// and the drift estimate), at the (time, count) minimum effects, with a stated `drift` (τ, ln
/// sd between invocations) or none.
pub fn compare_runs(
    invocations: &[Dataset],
    current: &Dataset,
    (min_effect, count_min_effect): (f64, f64),
    drift: Option<f64>,
) -> anyhow::Result<RegressionReport> {
    verdict::check_min_effect(min_effect)?;
    verdict::check_min_effect(count_min_effect)?;
    let Some(baseline) = invocations.first() else {
        anyhow::bail!("no baseline invocation to compare against");
    };
    let basis = crate::judge::drift::basis(invocations, drift);
    let (b, c) = (index(baseline), index(current));
    let others: Vec<_> = invocations[1..]
        .iter()
        .map(crate::judge::drift::index)
        .collect();
    let mut keys: Vec<&RowKey> = b.keys().chain(c.keys()).collect();
    keys.sort();
    keys.dedup();
    let family = keys
        .iter()
        .filter(|k| is_measured(b.get(**k).copied()) && is_measured(c.get(**k).copied()))
        .count();
    let mut report = RegressionReport {
        min_effect,
        drift: basis.clone(),
        family,
        rows: Vec::new(),
        not_measured: Unmeasured::default(),
    };
    let provenance = Provenance::of(invocations, current);
    for k in keys {
        let (br, cr) = (b.get(k).copied(), c.get(k).copied());
        if !is_measured(br) && !is_measured(cr) {
            report
                .not_measured
                .push(k.0.clone(), &state(br), &state(cr));
            continue;
        }
        let repeats: Vec<&Row> = others.iter().filter_map(|ix| ix.get(k).copied()).collect();
        // Every baseline invocation against the current run: a drift estimated over invocations
        // from other machines is no drift of this one.
        let differ = |c| {
            br.iter()
                .chain(&repeats)
                .find_map(|b| provenance.differ(b, c))
        };
        if let Some(note) = cr.and_then(differ) {
            report.rows.push(not_comparable(k, br, cr, note));
            continue;
        }
        let counted = br
            .zip(cr)
            .and_then(|(b, c)| crate::judge::counts::verdict(b, c, count_min_effect));
        let rule = Rule {
            min_effect,
            family,
            between: &basis,
        };
        report.rows.push(match counted {
            Some(v) => count_row(k, br, cr, v),
            None => compare_row(k, (br, &repeats), cr, rule),
        });
    }
    Ok(report)
}

/// What each result file ran on (its card's CPU and thread count), measured over (items and
/// files) and measured with (`measured_with`): two rows differing in any of them, or in the
/// transform's parameters, measured other work.
struct Provenance<'a> {
    cards: BTreeMap<&'a std::path::Path, Card<'a>>,
}

/// One result file's side of `Provenance`.
struct Card<'a> {
    machine: String,
    data: Option<&'a MeasuredOver>,
    settings: Option<String>,
}

impl<'a> Provenance<'a> {
    fn of(invocations: &'a [Dataset], current: &'a Dataset) -> Provenance<'a> {
        let cards = invocations
            .iter()
            .flat_map(|d| &d.sources)
            .chain(&current.sources)
            .map(|s| {
                let card = Card {
                    machine: machine_kind(&s.system_info),
                    data: s.data.as_ref(),
                    settings: measured_with(&s.benchmark_params),
                };
                (s.path.as_path(), card)
            })
            .collect();
        Provenance { cards }
    }

    /// Why `b` and `c` are not comparable, where both say enough to tell: `ran on other
    /// machines: …`, `measured over other data: …`, `measured with other settings: …` or
    /// `measured with other parameters: …`.
    fn differ(&self, b: &Row, c: &Row) -> Option<String> {
        let (cb, cc) = (
            self.cards.get(b.source.as_path())?,
            self.cards.get(c.source.as_path())?,
        );
        let (mb, mc) = (&cb.machine, &cc.machine);
        if !mb.is_empty() && !mc.is_empty() && mb != mc {
            return Some(format!(
                "ran on other machines: baseline {mb}; current {mc}"
            ));
        }
        if let Some((db, dc)) = cb.data.zip(cc.data).filter(|(db, dc)| db.differs(dc)) {
            return Some(format!(
                "measured over other data: baseline {}; current {}",
                db.describe(),
                dc.describe()
            ));
        }
        if let Some((sb, sc)) = cb.settings.as_ref().zip(cc.settings.as_ref())
            && sb != sc
        {
            return Some(format!(
                "measured with other settings: baseline {sb}; current {sc}"
            ));
        }
        b.params
            .as_ref()
            .zip(c.params.as_ref())
            .filter(|(pb, pc)| pb != pc)
            .map(|(pb, pc)| format!("measured with other parameters: baseline {pb}; current {pc}"))
    }
}

/// `3 runs, 3 processes, thread policy single`, or `to ±5.0%, 3 processes, …` for a
/// run measured to a precision: the settings that move a row's figure. Rounds to a precision
/// against a fixed run count read the same rows' figures 2-24% apart (a median of 7-12% in three
/// alternating pairs, docs/ci.md), and the figure is the fastest process's, so the count of
/// processes moves it too. `None` for a file that does not record them (the reference's format,
/// the cell log).
fn measured_with(params: &serde_json::Value) -> Option<String> {
    let precision = params.get("precision_target")?;
    let runs = match precision.as_f64() {
        Some(p) => format!("to ±{:.1}%", p * 100.0),
        None => format!("{} runs", params.get("num_runs")?.as_u64()?),
    };
    let processes = params.get("processes")?.as_u64()?;
    let threads = params.get("thread_policy")?.as_str()?;
    Some(format!(
        "{runs}, {processes} processes, thread policy {threads}"
    ))
}

/// `AMD EPYC 7B13 × 2 threads`: a machine card's kind (empty when the file has none).
fn machine_kind(info: &serde_json::Value) -> String {
    let cpu = info.get("processor").and_then(|v| v.as_str()).unwrap_or("");
    let threads = info.get("cpu_count").and_then(serde_json::Value::as_u64);
    match threads {
        Some(n) if !cpu.is_empty() => format!("{cpu} × {n} threads"),
        _ => cpu.to_string(),
    }
}

/// A row that both runs measured, but not comparably (other machines, data or parameters).
fn not_comparable(k: &RowKey, b: Option<&Row>, c: Option<&Row>, note: String) -> Comparison {
    let media = b.or(c).map_or(augbench_core::Media::Image, |r| r.media);
    Comparison {
        key: k.0.clone(),
        library: k.1.clone(),
        transform: k.2.clone(),
        unit: unit(media),
        figure: None,
        baseline: b.and_then(|r| r.headline()).map(|h| h.value),
        baseline_interval: None,
        current: c.and_then(|r| r.headline()).map(|h| h.value),
        current_interval: None,
        delta_pct: None,
        ratio: None,
        ratio_interval: None,
        change_interval: None,
        verdict: Verdict::NotComparable,
        note: Some(note),
    }
}

fn is_measured(r: Option<&Row>) -> bool {
    r.is_some_and(|r| r.status == Status::Ok)
}

/// `missing`, or the row's status.
fn state(r: Option<&Row>) -> String {
    r.map_or_else(|| "missing".into(), |r| r.status.to_string())
}

/// A measured row as one side of a comparison.
struct Side {
    value: f64,
    /// The interval shown beside the figure (its rerun interval).
    shown: (f64, f64),
    label: String,
    /// Half-width on the log scale of the value's 95% confidence interval.
    confidence: Option<f64>,
    /// Positive, finite runs.
    runs: usize,
    /// Invocations the value is the geometric mean of (1 for the current run).
    invocations: usize,
    /// The sd of ln(value) over those invocations (0 for one).
    own_spread: f64,
}

/// The figure of a measured row with its intervals (`Row::headline`); with `median_only`, its
/// median (for two runs that recorded different figures).
fn side(r: Option<&Row>, median_only: bool) -> Option<Side> {
    let r = r.filter(|r| r.status == Status::Ok)?;
    let h = r.headline()?;
    let runs = r
        .throughputs
        .iter()
        .filter(|x| x.is_finite() && **x > 0.0)
        .count();
    if median_only || h.from_median {
        let m = r.median.filter(|m| *m > 0.0)?;
        return Some(Side {
            value: m,
            shown: interval(r, m),
            label: augbench_stats::Estimator::Median.label().into(),
            confidence: median_confidence(r, m),
            runs,
            invocations: 1,
            own_spread: 0.0,
        });
    }
    let recorded = h.low.zip(h.high);
    Some(Side {
        value: h.value,
        shown: recorded.unwrap_or((h.value, h.value)),
        label: h.label(),
        confidence: recorded.and_then(|iv| confidence_from_rerun(h.value, iv)),
        runs,
        invocations: 1,
        own_spread: 0.0,
    })
}

/// The baseline side over its invocations: `first` with the `repeats` of other invocations
/// (measured on the same figure): the geometric mean of their values (the first's interval shown
/// around it), and the root mean square of their confidence half-widths ÷ √k.
fn over_invocations(first: Side, repeats: &[&Row]) -> Side {
    let more: Vec<(f64, f64)> = repeats
        .iter()
        .filter_map(|r| {
            side(
                Some(*r),
                first.label == augbench_stats::Estimator::Median.label(),
            )
        })
        .filter_map(|s| s.confidence.map(|h| (s.value.ln(), h)))
        .collect();
    let Some(h0) = first.confidence.filter(|_| !more.is_empty()) else {
        return first;
    };
    let all: Vec<(f64, f64)> = std::iter::once((first.value.ln(), h0))
        .chain(more)
        .collect();
    let k = all.len() as f64;
    let value = (all.iter().map(|p| p.0).sum::<f64>() / k).exp();
    let rms = (all.iter().map(|p| p.1 * p.1).sum::<f64>() / k).sqrt();
    let moved = value / first.value;
    let mean = value.ln();
    let own = all.iter().map(|p| (p.0 - mean).powi(2)).sum::<f64>() / (k - 1.0);
    Side {
        value,
        shown: (first.shown.0 * moved, first.shown.1 * moved),
        confidence: Some(rms / k.sqrt()),
        invocations: all.len(),
        own_spread: own.sqrt(),
        ..first
    }
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

/// A measured pair's ratio, its confidence interval and verdict, with the note of an
/// `undecided` one.
struct Judged {
    ratio: f64,
    interval: Option<(f64, f64)>,
    change: Option<(f64, f64)>,
    verdict: Verdict,
    note: Option<String>,
}

/// What `judge` reads besides the two sides.
#[derive(Debug, Clone, Copy)]
struct Rule<'a> {
    min_effect: f64,
    /// Rows in the family of change claims.
    family: usize,
    /// What the interval's between-invocation term rests on.
    between: &'a crate::judge::drift::DriftBasis,
}

fn judge(b: &Side, c: &Side, rule: Rule<'_>) -> Judged {
    let Rule {
        min_effect, family, ..
    } = rule;
    let ratio = c.value / b.value;
    let halves = b
        .confidence
        .zip(c.confidence)
        .map(|(hb, hc)| between_invocations(rule.between, (hb, hc), b));
    let interval = halves
        .and_then(|(hb, hc)| logscale::ratio_of(c.value, hc, b.value, hb))
        .map(|r| r.1);
    let widen = augbench_stats::verdict::family_widening(family);
    let change = halves
        .and_then(|(hb, hc)| logscale::ratio_of(c.value, hc * widen, b.value, hb * widen))
        .map(|r| r.1);
    let (verdict, note) = match interval.zip(change) {
        _ if b.runs < verdict::MIN_UNITS || c.runs < verdict::MIN_UNITS => {
            let counts = format!("baseline {}, current {}", b.runs, c.runs);
            let note = verdict::too_few_note("runs", &counts);
            (Verdict::Undecided, Some(note))
        }
        None => (Verdict::Undecided, Some("no interval recorded".into())),
        Some((iv, ch)) => verdict::decide_in_family_noted(ratio, iv, ch, family, min_effect),
    };
    Judged {
        ratio,
        interval,
        change,
        verdict,
        note,
    }
}

/// The two sides' 95% confidence half-widths (log scale, baseline then current) with the
/// between-invocation term of `between` folded in, so that √(h_b² + h_c²) is the half-width of
/// current ÷ baseline: for a stated τ, z·τ·√(1 + 1/k) beside the baseline's; for a spread
/// estimated from k invocations, the current invocation's and the baseline mean's moves,
/// spread²·(1 + 1/k), read with Student's t at its degrees of freedom (the spread holds each
/// invocation's sampling too, read from the data instead of from the recorded intervals, which
/// overstate it), never below the row's own spread over the invocations (a row noisier than the
/// rest); unknown: the sides as recorded.
fn between_invocations(
    between: &crate::judge::drift::DriftBasis,
    (hb, hc): (f64, f64),
    baseline: &Side,
) -> (f64, f64) {
    use crate::judge::drift::DriftBasis;
    let z = augbench_stats::student::normal_quantile(0.5 + augbench_core::policy::CONFIDENCE / 2.0);
    let k = baseline.invocations.max(1) as f64;
    match *between {
        DriftBasis::Stated { tau } => (hb.hypot(z * tau * (1.0 + 1.0 / k).sqrt()), hc),
        DriftBasis::Estimated { spread, df, .. } => {
            let t = augbench_stats::student::quantile(
                df,
                0.5 + augbench_core::policy::CONFIDENCE / 2.0,
            );
            let spread = spread.max(baseline.own_spread);
            (t * spread * (1.0 + 1.0 / k).sqrt(), 0.0)
        }
        DriftBasis::Unknown { .. } => (hb, hc),
    }
}

fn compare_row(
    k: &RowKey,
    (b, repeats): (Option<&Row>, &[&Row]),
    c: Option<&Row>,
    rule: Rule,
) -> Comparison {
    let media = b
        .or(c)
        .map(|r| r.media)
        .unwrap_or(augbench_core::Media::Image);
    let (bm, cm, differ) = sides(b, c);
    let bm = bm.map(|s| over_invocations(s, repeats));
    let judged = bm
        .as_ref()
        .zip(cm.as_ref())
        .map(|(bs, cs)| judge(bs, cs, rule));
    let (verdict, note) = match &judged {
        Some(j) => (j.verdict, join_notes(j.note.clone(), differ)),
        None => (Verdict::NotComparable, Some(one_sided(b, c))),
    };
    Comparison {
        key: k.0.clone(),
        library: k.1.clone(),
        transform: k.2.clone(),
        unit: unit(media),
        figure: cm.as_ref().or(bm.as_ref()).map(|x| x.label.clone()),
        baseline: bm.as_ref().map(|x| x.value),
        baseline_interval: bm.as_ref().map(|x| x.shown),
        current: cm.as_ref().map(|x| x.value),
        current_interval: cm.as_ref().map(|x| x.shown),
        delta_pct: judged.as_ref().map(|j| (j.ratio - 1.0) * 100.0),
        ratio: judged.as_ref().map(|j| j.ratio),
        ratio_interval: judged.as_ref().and_then(|j| j.interval),
        change_interval: judged.as_ref().and_then(|j| j.change),
        verdict,
        note,
    }
}

/// A row both runs counted: items per 10⁹ instructions on each side, the count verdict.
fn count_row(
    k: &RowKey,
    b: Option<&Row>,
    c: Option<&Row>,
    v: crate::judge::counts::CountVerdict,
) -> Comparison {
    let (base, cur) = (b.and_then(Row::measured), c.and_then(Row::measured));
    Comparison {
        key: k.0.clone(),
        library: k.1.clone(),
        transform: k.2.clone(),
        unit: crate::model::COUNT_UNIT,
        figure: Some("instructions per item (items/Ginstr)".into()),
        baseline: base,
        baseline_interval: None,
        current: cur,
        current_interval: None,
        delta_pct: Some((v.ratio - 1.0) * 100.0),
        ratio: Some(v.ratio),
        ratio_interval: None,
        change_interval: None,
        verdict: v.verdict,
        note: Some(v.note),
    }
}

fn join_notes(a: Option<String>, b: Option<String>) -> Option<String> {
    match (a, b) {
        (Some(a), Some(b)) => Some(format!("{a}; {b}")),
        (a, b) => a.or(b),
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

/// One summary line: counts per verdict and the rule used.
pub fn summary(report: &RegressionReport) -> String {
    let counted = report
        .rows
        .iter()
        .any(|r| r.unit == crate::model::COUNT_UNIT);
    let mut line = timed_summary(report);
    if counted {
        line.push_str(&crate::judge::counts::rule());
    }
    line
}

fn timed_summary(report: &RegressionReport) -> String {
    let [slower, faster, same, undecided, not_comparable] = report.counts();
    format!(
        "{slower} regression(s), {faster} faster, {same} same, {undecided} undecided, {not_comparable} not comparable ({}; {})",
        report.drift.describe(),
        verdict::rule(
            report.min_effect,
            verdict::RUNS_INTERVAL,
            Verdict::Same.as_str(),
            Verdict::Regression.as_str(),
            report.family
        )
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(value: f64, rerun_half: f64, runs: usize) -> Side {
        let iv = logscale::around(value, rerun_half);
        Side {
            value,
            shown: iv,
            label: "fastest run".into(),
            confidence: confidence_from_rerun(value, iv),
            runs,
            invocations: 1,
            own_spread: 0.0,
        }
    }

    const UNKNOWN: crate::judge::drift::DriftBasis =
        crate::judge::drift::DriftBasis::Unknown { invocations: 1 };

    fn rule(min_effect: f64, family: usize) -> Rule<'static> {
        Rule {
            min_effect,
            family,
            between: &UNKNOWN,
        }
    }

    #[test]
    fn measured_with_names_the_run_count_or_the_precision_and_skips_files_that_do_not_say() {
        let fixed = serde_json::json!({
            "num_runs": 3, "processes": 3, "thread_policy": "single", "precision_target": null
        });
        assert_eq!(
            measured_with(&fixed).as_deref(),
            Some("3 runs, 3 processes, thread policy single")
        );
        let mut precise = fixed.clone();
        precise["precision_target"] = serde_json::json!(0.05);
        assert_eq!(
            measured_with(&precise).as_deref(),
            Some("to ±5.0%, 3 processes, thread policy single")
        );
        // The reference's format and the cell log record no precision target.
        assert_eq!(measured_with(&serde_json::json!({"num_runs": 3})), None);
        assert_eq!(measured_with(&serde_json::Value::Null), None);
    }

    #[test]
    fn two_sides_at_the_drift_floor_give_the_floor_as_the_ratio_interval() {
        let h = 0.02f64.ln_1p();
        let j = judge(&side(1000.0, h, 5), &side(1000.0, h, 5), rule(0.05, 1));
        let (lo, hi) = j.interval.unwrap();
        assert!((hi.ln() - h).abs() < 1e-12 && (lo.ln() + h).abs() < 1e-12);
        assert_eq!(j.verdict, Verdict::Same);
    }

    #[test]
    fn a_tight_twenty_percent_drop_is_a_regression() {
        let h = 0.02f64.ln_1p();
        let j = judge(&side(1000.0, h, 5), &side(800.0, h, 5), rule(0.05, 1));
        assert_eq!((j.verdict, j.note), (Verdict::Regression, None));
    }

    #[test]
    fn a_wide_interval_is_undecided_and_says_what_it_could_see() {
        let j = judge(&side(1000.0, 0.5, 5), &side(800.0, 0.5, 5), rule(0.05, 1));
        assert_eq!(j.verdict, Verdict::Undecided);
        assert!(j.note.unwrap().starts_with("could not see a change under"));
    }

    #[test]
    fn a_change_in_a_family_of_rows_needs_a_wider_margin() {
        let h = 0.03f64.ln_1p();
        let (b, c) = (side(1000.0, h, 5), side(960.0, h, 5));
        let alone = judge(&b, &c, rule(0.05, 1));
        assert_eq!(alone.verdict, Verdict::Regression);
        assert_eq!(alone.change, alone.interval);
        let among = judge(&b, &c, rule(0.05, 200));
        assert_eq!(among.verdict, Verdict::Undecided);
        assert_eq!(among.interval, alone.interval);
        let (lo, hi) = among.change.unwrap();
        assert!(lo < alone.interval.unwrap().0 && hi > 1.0, "{lo} {hi}");
    }

    #[test]
    fn too_few_runs_are_undecided_however_tight() {
        let h = 0.02f64.ln_1p();
        let j = judge(&side(1000.0, h, 2), &side(800.0, h, 5), rule(0.05, 1));
        assert_eq!(j.verdict, Verdict::Undecided);
        assert_eq!(
            j.note.unwrap(),
            "too few runs for an interval (baseline 2, current 5; 3 needed)"
        );
    }

    #[test]
    fn no_recorded_interval_is_undecided() {
        let mut b = side(1000.0, 0.02, 5);
        b.confidence = None;
        let j = judge(&b, &side(800.0, 0.02, 5), rule(0.05, 1));
        assert_eq!(j.verdict, Verdict::Undecided);
        assert_eq!(j.interval, None);
    }
}
