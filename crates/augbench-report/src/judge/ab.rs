//! A/B verdicts of one run (docs/ab.md): each variant of a library against the run's baseline
//! variant, per transform, read from the paired evidence of the interleaved rounds: the median of
//! per-round ratios over worker-process pairs (`interval`; on thread CPU time where both variants
//! have it, unless their CPU ÷ wall disagree, then on wall time with a note that says so), read by
//! `verdict::decide_in_family` at the minimum effect (`policy::REGRESSION_MIN_EFFECT` unless
//! given): `no change` on the 95% interval, `slower` and `faster` on the interval at the level
//! that keeps every row's change claims together at 5%. The rerun interval (where a repeat's ratio
//! lands) is kept beside it and never decides. Transforms measured by neither variant collapse
//! into one line.

use std::collections::BTreeSet;

use augbench_core::results::Status;
use serde::Serialize;

use crate::judge::interval::Clock;
use crate::judge::verdict::{self, Unmeasured, Verdict, Verdicts};
use crate::model::{Dataset, GroupKey, Row};

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
    /// The ratio's 95% confidence interval over process pairs: `no change` reads it.
    pub interval: Option<(f64, f64)>,
    /// The same interval at the report's family level (`verdict::family_confidence` of
    /// `AbReport::family`): `slower` and `faster` read it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub change_interval: Option<(f64, f64)>,
    /// Where a repeat's ratio lands (95%), when recorded: shown, never decides.
    pub rerun: Option<(f64, f64)>,
    pub rounds: u64,
    pub verdict: Verdict,
    pub note: Option<String>,
    /// Both variants counted instructions (`measure: instructions`): the ratio is baseline ÷
    /// current instructions per item, judged by the count rule, with no interval or rounds.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub counted: bool,
    /// The clock the verdict's ratios were read on (`cpu`: the timing thread's CPU time, where
    /// both variants recorded it; else `wall`); absent where no timed interval was formed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clock: Option<Clock>,
    /// Why a row whose variants both recorded thread CPU time was read on wall time: their CPU ÷
    /// wall disagree (`interval::clocks_disagree`). Every view shows it beside the verdict.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clock_note: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AbReport {
    pub min_effect: f64,
    /// Rows measured by both variants: the family whose change claims share one 5% error rate.
    pub family: usize,
    /// Every transform measured by at least one of the two variants.
    pub rows: Vec<AbRow>,
    /// Transforms measured by neither (`not comparable`, one line).
    pub not_measured: Unmeasured,
}

impl Verdicts for AbReport {
    fn row_verdicts(&self) -> Vec<Verdict> {
        self.rows.iter().map(|r| r.verdict).collect()
    }

    fn unmeasured(&self) -> &Unmeasured {
        &self.not_measured
    }
}

impl AbReport {
    /// `not comparable: 3 rows unsupported in both variants`, when any.
    pub fn not_measured_line(&self) -> Option<String> {
        let line = self.not_measured.line("variants")?;
        Some(format!("{}: {line}", word(Verdict::NotComparable)))
    }

    /// The rows of one group (scenario, mode, device, sweep point), same minimum effect.
    pub fn of_group(&self, key: &GroupKey) -> AbReport {
        AbReport {
            min_effect: self.min_effect,
            family: self.family,
            rows: self
                .rows
                .iter()
                .filter(|r| &r.key == key)
                .cloned()
                .collect(),
            not_measured: self.not_measured.of_group(key),
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

    /// The verdict word, with the reason when the row is not comparable, undecided or counted,
    /// and the clock's note when it was read on wall time because the clocks disagree.
    pub fn verdict_text(&self) -> String {
        let reason = match (self.verdict, &self.note) {
            (Verdict::NotComparable, Some(n)) => return format!("not comparable: {n}"),
            (Verdict::Undecided, Some(n)) => Some(n.as_str()),
            (_, Some(n)) if self.counted => Some(n.as_str()),
            _ => None,
        };
        let notes: Vec<&str> = reason
            .into_iter()
            .chain(self.clock_note.as_deref())
            .collect();
        match notes.as_slice() {
            [] => word(self.verdict).to_string(),
            _ => format!("{} ({})", word(self.verdict), notes.join("; ")),
        }
    }

    /// The verdict's note and the clock's, joined (`; `), for views with one note column.
    pub fn notes_text(&self) -> Option<String> {
        let notes: Vec<&str> = self
            .note
            .iter()
            .chain(&self.clock_note)
            .map(String::as_str)
            .collect();
        (!notes.is_empty()).then(|| notes.join("; "))
    }
}

/// The A/B rows of every variant in `data` against its run's baseline; `None` when no file of
/// `data` was measured as a variant.
pub fn compare(data: &Dataset, min_effect: f64) -> anyhow::Result<Option<AbReport>> {
    compare_with(data, min_effect, crate::judge::counts::min_effect(None))
}

/// `compare`, with the minimum effect of instruction-count rows given apart.
pub fn compare_with(
    data: &Dataset,
    min_effect: f64,
    count_min_effect: f64,
) -> anyhow::Result<Option<AbReport>> {
    verdict::check_min_effect(count_min_effect)?;
    verdict::check_min_effect(min_effect)?;
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
    let mut pending = Vec::new();
    let mut not_measured = Unmeasured::default();
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
            let (b, c) = (find(&base_rows, t), find(&cur_rows, t));
            if !is_measured(b) && !is_measured(c) {
                not_measured.push(key.clone(), &state(b), &state(c));
                continue;
            }
            let row = AbRow {
                key: key.clone(),
                library: library.clone(),
                baseline: baseline.clone(),
                current: current.clone(),
                transform: t.to_string(),
                ratio: None,
                interval: None,
                change_interval: None,
                rerun: None,
                rounds: 0,
                verdict: Verdict::NotComparable,
                note: None,
                counted: false,
                clock: None,
                clock_note: None,
            };
            pending.push((row, b, c));
        }
    }
    let family = pending
        .iter()
        .filter(|(_, b, c)| is_measured(*b) && is_measured(*c))
        .count();
    let judging = Judging {
        min_effect,
        count_min_effect,
        family,
    };
    let rows = pending.into_iter().map(|(mut row, b, c)| {
        fill(&mut row, b, c, &judging);
        row
    });
    Ok(Some(AbReport {
        min_effect,
        family,
        rows: rows.collect(),
        not_measured,
    }))
}

/// What every row of one report is judged with: the minimum effects of timed and counted rows,
/// and the rows in the family of change claims.
struct Judging {
    min_effect: f64,
    count_min_effect: f64,
    family: usize,
}

fn is_measured(r: Option<&Row>) -> bool {
    r.is_some_and(|r| r.status == Status::Ok)
}

/// `missing`, or the row's status.
fn state(r: Option<&Row>) -> String {
    r.map_or_else(|| "missing".into(), |r| r.status.to_string())
}

fn find<'a>(rows: &[&'a Row], transform: &str) -> Option<&'a Row> {
    rows.iter().copied().find(|r| r.transform == transform)
}

/// Fills the ratio and verdict from the current row's paired record against the baseline.
fn fill(row: &mut AbRow, base: Option<&Row>, cur: Option<&Row>, j: &Judging) {
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
    if let Some(v) = crate::judge::counts::verdict(b, c, j.count_min_effect) {
        row.ratio = Some(v.ratio);
        row.verdict = v.verdict;
        row.note = Some(v.note);
        row.counted = true;
        return;
    }
    let same_rounds = c.pairing.is_some() && c.pairing == b.pairing;
    let paired = c.paired.iter().find(|p| p.partner == row.baseline);
    let Some(p) = paired.filter(|_| same_rounds) else {
        row.note = Some("not measured in the same rounds (no paired record)".into());
        return;
    };
    row.rerun = p.rerun;
    row.rounds = p.rounds;
    let groups = paired_groups(b, c, p.ratios.len());
    let read = crate::judge::interval::verdict_logs(b, c, p, &groups, j.min_effect);
    row.clock = Some(read.clock);
    row.clock_note = read.disagreement.map(|d| d.note());
    let Some(pairs) = crate::judge::interval::pair_estimate(&read.logs, &groups) else {
        row.ratio = Some(p.ratio);
        row.verdict = Verdict::Undecided;
        row.note = Some(format!(
            "too few worker-process pairs for an interval ({}; 2 needed): process pairs are the verdict's unit (docs/ab.md)",
            c.process_runs.len().max(1)
        ));
        return;
    };
    let (same, change) = (
        pairs.interval(),
        pairs.interval_at(verdict::family_confidence(j.family)),
    );
    row.ratio = Some(same.ratio);
    row.interval = Some((same.low, same.high));
    row.change_interval = Some((change.low, change.high));
    (row.verdict, row.note) = verdict::decide_in_family_noted(
        same.ratio,
        (same.low, same.high),
        (change.low, change.high),
        j.family,
        j.min_effect,
    );
    let started = b.process_runs.len().max(c.process_runs.len());
    if groups.len() < started {
        let lost = format!(
            "over the {} of {started} process pairs both variants finished",
            groups.len()
        );
        row.note = Some(match row.note.take() {
            Some(n) => format!("{n}; {lost}"),
            None => lost,
        });
    }
}

/// The worker-process split of a paired record's `n` rounds: the processes both rows finished
/// with the same number of runs, in order (as the run pairs them: a later process one variant
/// lost is left out); none (one unit) where they do not add up to `n`.
fn paired_groups(b: &Row, c: &Row, n: usize) -> Vec<usize> {
    let common: Vec<usize> = b
        .process_runs
        .iter()
        .zip(&c.process_runs)
        .take_while(|(x, y)| x == y)
        .map(|(x, _)| *x as usize)
        .collect();
    if common.iter().sum::<usize>() == n {
        common
    } else {
        Vec::new()
    }
}

/// `slower`, `faster`, `no change`, `undecided`, `not comparable`.
pub fn word(v: Verdict) -> &'static str {
    match v {
        Verdict::Regression => "slower",
        Verdict::Faster => "faster",
        Verdict::Same => "no change",
        Verdict::Undecided => "undecided",
        Verdict::NotComparable => "not comparable",
    }
}

/// One summary line: counts per verdict and the rule used.
pub fn summary(report: &AbReport) -> String {
    let mut line = timed_summary(report);
    if report.rows.iter().any(|r| r.counted) {
        line.push_str(&crate::judge::counts::rule());
    }
    line
}

fn timed_summary(report: &AbReport) -> String {
    let [slower, faster, same, undecided, not_comparable] = report.counts();
    format!(
        "A/B: {slower} slower, {faster} faster, {same} no change, {undecided} undecided, {not_comparable} not comparable (paired ratio current ÷ baseline over the same rounds{}; {})",
        clocks(report),
        verdict::rule(
            report.min_effect,
            verdict::PAIRS_INTERVAL,
            word(Verdict::Same),
            word(Verdict::Regression),
            report.family
        )
    )
}

/// `, on thread CPU time` / `, on wall time` / `, on thread CPU time (N rows on wall time)`:
/// the clock the timed verdicts read (empty when none was read).
fn clocks(report: &AbReport) -> String {
    let on = |c: Clock| report.rows.iter().filter(|r| r.clock == Some(c)).count();
    match (on(Clock::Cpu), on(Clock::Wall)) {
        (0, 0) => String::new(),
        (_, 0) => ", on thread CPU time".into(),
        (0, _) => ", on wall time".into(),
        (_, wall) => format!(", on thread CPU time ({wall} rows on wall time)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::{self, Outcome};
    use augbench_core::Mode;

    /// Worker-process pairs × rounds, as an A/B micro run takes them by default.
    const PAIRS: usize = 6;
    const ROUNDS: usize = 5;

    /// A deterministic value in [-1, 1) for round `i` and stream `k`.
    fn wobble(i: usize, k: u64) -> f64 {
        ((i as u64 * 2_654_435_761 + k * 40_503) % 1000) as f64 / 500.0 - 1.0
    }

    /// One variant's result file: GaussianBlur's wall throughputs and CPU ÷ wall per round.
    fn variant(label: &str, wall: Vec<f64>, share: &[f64]) -> augbench_core::results::ResultFile {
        let f = sample::result_file(
            "image-rgb",
            Mode::Micro,
            "pillow",
            "1",
            &[("GaussianBlur", Outcome::Ok(wall))],
        );
        let mut f = sample::as_variant(f, label, "pillow==1", "pillow@a");
        for tr in f.results.values_mut() {
            tr.process_runs = vec![ROUNDS as u64; PAIRS];
            tr.cpu_times = tr.times.iter().zip(share).map(|(t, s)| t * s).collect();
        }
        f
    }

    /// An A/B run of two Pillow variants over the same 30 rounds (a drift both share, 1% noise
    /// each): current's wall throughput is `wall` × the baseline's and its CPU ÷ wall (thread
    /// CPU time over wall time of the same run) `share` × the baseline's (0.97).
    fn ab_run(wall: f64, share: f64) -> (Dataset, AbReport) {
        let mut files = ab_files(wall, share);
        sample::interleave(&mut files);
        judged(&files)
    }

    /// Both variants' files as `ab_run` times them, not yet paired.
    fn ab_files(wall: f64, share: f64) -> Vec<augbench_core::results::ResultFile> {
        let n = PAIRS * ROUNDS;
        let base_wall: Vec<f64> = (0..n)
            .map(|i| 1000.0 * (1.0 + 0.1 * wobble(i, 9)) * (1.0 + 0.01 * wobble(i, 1)))
            .collect();
        let base_share: Vec<f64> = (0..n).map(|i| 0.97 + 0.01 * wobble(i, 2)).collect();
        let cur_wall: Vec<f64> = (0..n)
            .map(|i| base_wall[i] * wall * (1.0 + 0.01 * wobble(i, 3)))
            .collect();
        let cur_share: Vec<f64> = (0..n)
            .map(|i| base_share[i] * share * (1.0 + 0.01 * wobble(i, 4)))
            .collect();
        vec![
            variant("pillow@a", base_wall, &base_share),
            variant("pillow@b", cur_wall, &cur_share),
        ]
    }

    /// The A/B report over `files` at a 5% minimum effect.
    fn judged(files: &[augbench_core::results::ResultFile]) -> (Dataset, AbReport) {
        let mut data = Dataset::default();
        for (i, f) in files.iter().enumerate() {
            let bytes = serde_json::to_vec(f).unwrap();
            let path = std::path::PathBuf::from(format!("{i}.json"));
            data.extend(crate::load::load_result_bytes(&path, &bytes).unwrap());
        }
        let report = compare(&data, 0.05).unwrap().unwrap();
        (data, report)
    }

    const FALLBACK: &str = "read on wall time: CPU ÷ wall differs between the variants";

    /// Half the work moved to an unpinned helper thread and 10% slower in wall time: on thread
    /// CPU time alone it would read 1.8× faster.
    #[test]
    fn a_helper_thread_reads_slower_on_wall_time() {
        let (_, report) = ab_run(0.9, 0.5);
        let row = &report.rows[0];
        assert_eq!(
            (row.verdict, row.clock),
            (Verdict::Regression, Some(Clock::Wall))
        );
        assert!((row.ratio.unwrap() - 0.9).abs() < 0.01, "{row:?}");
        let text = row.verdict_text();
        assert!(
            text.starts_with(&format!("slower ({FALLBACK} (current 0.4")),
            "{text}"
        );
        assert!(
            text.ends_with("misses work on other threads or waiting)"),
            "{text}"
        );
    }

    /// Sleeping 20% of each call: the same CPU time (no change on it), 1.2× the wall time.
    #[test]
    fn a_variant_that_sleeps_reads_slower_on_wall_time() {
        let (_, report) = ab_run(1.0 / 1.2, 1.0 / 1.2);
        let row = &report.rows[0];
        assert_eq!(
            (row.verdict, row.clock),
            (Verdict::Regression, Some(Clock::Wall))
        );
        assert!(row.verdict_text().contains(FALLBACK), "{row:?}");
    }

    #[test]
    fn equal_cpu_over_wall_keeps_the_cpu_clock() {
        let (_, report) = ab_run(0.9, 1.0);
        let row = &report.rows[0];
        assert_eq!(
            (row.verdict, row.clock, row.clock_note.as_deref()),
            (Verdict::Regression, Some(Clock::Cpu), None)
        );
        assert_eq!(row.verdict_text(), "slower");
        assert!(summary(&report).contains(", on thread CPU time;"));
    }

    /// The current variant's last worker process ended slow: its runs are gone and the run
    /// pairs the five processes both finished (`exec::rounds`). The verdict reads those five
    /// pairs, on the clock their runs choose, and says it had five of six.
    #[test]
    fn a_process_one_variant_lost_is_judged_over_the_pairs_both_finished() {
        let mut files = ab_files(0.9, 0.5);
        let kept = (PAIRS - 1) * ROUNDS;
        let base_tps = files[0].results["GaussianBlur"].throughputs[..kept].to_vec();
        let cur = files[1].results.get_mut("GaussianBlur").unwrap();
        cur.throughputs.truncate(kept);
        cur.times.truncate(kept);
        cur.cpu_times.truncate(kept);
        cur.process_runs.truncate(PAIRS - 1);
        let groups = vec![ROUNDS; PAIRS - 1];
        let p = augbench_stats::paired("pillow@a", &cur.throughputs, &base_tps, &groups);
        cur.paired = p.into_iter().collect();
        cur.rounds_id = Some("r".into());
        files[0].results.get_mut("GaussianBlur").unwrap().rounds_id = Some("r".into());
        let (_, report) = judged(&files);
        let row = &report.rows[0];
        assert_eq!(
            (row.verdict, row.clock),
            (Verdict::Regression, Some(Clock::Wall)),
            "{row:?}"
        );
        assert!(
            row.clock_note
                .as_deref()
                .is_some_and(|n| n.starts_with(FALLBACK))
        );
        let note = row.note.as_deref().unwrap_or_default();
        assert!(
            note.ends_with("over the 5 of 6 process pairs both variants finished"),
            "{note}"
        );
    }

    /// Markdown, JSON, CSV and the page all carry the note; JSON keeps the clock.
    #[test]
    fn every_view_shows_the_fallback_note() {
        use crate::export::{Format, render_ab};
        let (data, report) = ab_run(0.9, 0.5);
        let md = render_ab(&report, Format::Markdown).unwrap();
        assert!(md.contains(&format!("| **slower ({FALLBACK}")), "{md}");
        let json: serde_json::Value =
            serde_json::from_str(&render_ab(&report, Format::Json).unwrap()).unwrap();
        let row = &json["rows"][0];
        assert_eq!(row["clock"], "wall");
        assert!(
            row["clock_note"].as_str().unwrap().starts_with(FALLBACK),
            "{row}"
        );
        let csv = render_ab(&report, Format::Csv).unwrap();
        assert!(csv.contains(FALLBACK), "{csv}");
        let page = crate::html::render_with(&data, &Default::default(), 0.05).unwrap();
        assert!(page.contains(FALLBACK), "the page's A/B view");
    }
}
