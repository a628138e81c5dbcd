//! Which clock an A/B verdict's per-round ratios are read on (`verdict_logs`): thread CPU time
//! where both variants have it, unless the variants' CPU ÷ wall disagree (`clocks_disagree`),
//! then wall time. The interval over process pairs itself is `augbench_stats::pair`. Pure.

use augbench_core::policy;
use augbench_stats::logscale;
pub use augbench_stats::pair::{PairEstimate, PairInterval, pair_estimate, process_pair_interval};
use serde::Serialize;

use crate::model::{PairedRatio, Row};

/// The clock a verdict's per-round ratios were read on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Clock {
    /// The timing thread's CPU time: leaves out the time the thread waited for a core, which on
    /// a loaded host is most of the round-to-round noise (docs/methodology.md, "Thread CPU time").
    Cpu,
    /// Wall time: older results, workers without a CPU clock, and rows whose variants' CPU ÷ wall
    /// disagree (`clocks_disagree`).
    Wall,
}

/// Relative tolerance for a run's wall ratio to match the paired record's ratio of that round.
const ROUND_MATCH: f64 = 1e-6;

/// The per-round ln ratios (current ÷ baseline) a verdict reads, their clock, and why they are
/// wall time's where both rows had thread CPU time.
#[derive(Debug, Clone, PartialEq)]
pub struct VerdictLogs {
    pub logs: Vec<f64>,
    pub clock: Clock,
    /// Both rows recorded thread CPU time for every round, but the clocks disagree
    /// (`clocks_disagree`): the logs are the wall clock's.
    pub disagreement: Option<ClockDisagreement>,
}

/// Each variant's CPU ÷ wall (thread CPU time over wall time of the same runs, median over its
/// rounds) where they differ beyond the noise and past the tolerance.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClockDisagreement {
    pub baseline: f64,
    pub current: f64,
}

impl ClockDisagreement {
    /// The note every view shows beside the verdict.
    pub fn note(&self) -> String {
        format!(
            "read on wall time: CPU ÷ wall differs between the variants (current {:.2}, baseline {:.2}), so thread CPU time misses work on other threads or waiting",
            self.current, self.baseline
        )
    }
}

/// The per-round ln ratios a verdict reads (current ÷ baseline, rounds of each process pair
/// consecutive in `groups`): thread CPU time where both rows have it for every round of the
/// paired record `p`, their runs line up with its rounds (each run's wall ratio is the record's
/// ratio of that round) and the clocks agree (`clocks_disagree` at `min_effect`); else the
/// record's wall-clock ratios.
pub fn verdict_logs(
    base: &Row,
    cur: &Row,
    p: &PairedRatio,
    groups: &[usize],
    min_effect: f64,
) -> VerdictLogs {
    let wall = |disagreement| VerdictLogs {
        logs: p.ratios.iter().map(|r| r.ln()).collect(),
        clock: Clock::Wall,
        disagreement,
    };
    if !cpu_aligned(base, cur, p) {
        return wall(None);
    }
    if let Some(d) = clocks_disagree(base, cur, groups, min_effect) {
        return wall(Some(d));
    }
    let pairs = cur.cpu_throughputs.iter().zip(&base.cpu_throughputs);
    let pairs = pairs.take(p.ratios.len());
    VerdictLogs {
        logs: pairs.map(|(c, b)| (c / b).ln()).collect(),
        clock: Clock::Cpu,
        disagreement: None,
    }
}

/// Both rows have wall and CPU throughputs for every round of `p`, in its order. The record may
/// cover fewer runs than a row holds: where a later worker process of one variant ended slow or
/// failed, it pairs the processes both finished in full, the first runs of each row.
fn cpu_aligned(base: &Row, cur: &Row, p: &PairedRatio) -> bool {
    let n = p.ratios.len();
    let sides = [
        &base.throughputs,
        &cur.throughputs,
        &base.cpu_throughputs,
        &cur.cpu_throughputs,
    ];
    n > 0
        && sides.iter().all(|v| v.len() >= n)
        && (0..n).all(|i| {
            let wall = cur.throughputs[i] / base.throughputs[i];
            (wall / p.ratios[i] - 1.0).abs() < ROUND_MATCH
        })
}

/// Whether thread CPU time misses part of what one variant's wall time holds that the other's
/// does not (work on another thread, sleeping, blocking): per round, ln(CPU ÷ wall) of current
/// minus baseline, which is also ln(wall ratio) − ln(CPU ratio), the two clocks' disagreement.
/// They disagree where its 95% interval over process pairs excludes no difference and its mean
/// lies beyond `policy::AB_CLOCK_DISAGREEMENT` of the band's ln(1 + m) (docs/ab.md, "Which
/// clock"). `None` also where the rounds give no interval (fewer than two pairs).
pub fn clocks_disagree(
    base: &Row,
    cur: &Row,
    groups: &[usize],
    min_effect: f64,
) -> Option<ClockDisagreement> {
    let n = groups.iter().sum::<usize>();
    let (b, c) = (cpu_over_wall_logs(base, n), cpu_over_wall_logs(cur, n));
    let diff: Vec<f64> = c.iter().zip(&b).map(|(c, b)| c - b).collect();
    let est = pair_estimate(&diff, groups)?;
    let shown = est.interval();
    let excludes_none = shown.high < 1.0 || shown.low > 1.0;
    let tolerance = policy::AB_CLOCK_DISAGREEMENT * crate::judge::verdict::band(min_effect).1.ln();
    (excludes_none && est.mean_log.abs() > tolerance).then(|| ClockDisagreement {
        baseline: logscale::median_log(&b).exp(),
        current: logscale::median_log(&c).exp(),
    })
}

/// ln(CPU ÷ wall) of each of the first `n` runs: ln(wall throughput ÷ CPU throughput).
fn cpu_over_wall_logs(r: &Row, n: usize) -> Vec<f64> {
    let runs = r.throughputs.iter().zip(&r.cpu_throughputs).take(n);
    runs.map(|(wall, cpu)| (wall / cpu).ln()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(x: f64, y: f64) -> bool {
        (x - y).abs() < 1e-12
    }

    /// Three pairs whose medians are 0.0, 0.1 and 0.2: mean 0.1, sd 0.1, t(2) = 4.303.
    #[test]
    fn student_t_over_the_pair_medians() {
        let logs = [0.5, 0.0, -0.3, 0.1, 0.1, 0.9, 0.2, 0.2, 0.2];
        let p = process_pair_interval(&logs, &[3, 3, 3]).unwrap();
        let half = 4.303 * 0.1 / 3f64.sqrt();
        assert!(close(p.ratio, 0.1f64.exp()), "{p:?}");
        assert!(close(p.low, (0.1 - half).exp()) && close(p.high, (0.1 + half).exp()));
        assert_eq!(p.processes, 3);
    }

    #[test]
    fn a_stricter_level_widens_the_same_estimate() {
        let logs = [0.5, 0.0, -0.3, 0.1, 0.1, 0.9, 0.2, 0.2, 0.2];
        let e = pair_estimate(&logs, &[3, 3, 3]).unwrap();
        let (at95, plain) = (e.interval_at(0.95), e.interval());
        assert!(
            (at95.low / plain.low - 1.0).abs() < 1e-3,
            "{at95:?} {plain:?}"
        );
        let strict = e.interval_at(1.0 - 0.05 / 3.0);
        assert!(strict.low < plain.low && strict.high > plain.high);
        assert!(close(strict.ratio, plain.ratio));
    }

    #[test]
    fn swapping_the_variants_gives_the_reciprocal() {
        let logs = [0.05, -0.02, 0.3, 0.31, -0.1, 0.0];
        let neg: Vec<f64> = logs.iter().map(|x| -x).collect();
        let ab = process_pair_interval(&logs, &[2, 2, 2]).unwrap();
        let ba = process_pair_interval(&neg, &[2, 2, 2]).unwrap();
        assert!(close(ab.ratio * ba.ratio, 1.0));
        assert!(close(ab.low * ba.high, 1.0) && close(ab.high * ba.low, 1.0));
    }

    // ---- Which clock (`verdict_logs`, `clocks_disagree`) ----------------------------------------

    /// 6 worker-process pairs × 5 rounds, as an A/B micro run takes them by default.
    const GROUPS: [usize; 6] = [5; 6];
    const M: f64 = 0.05;

    /// A deterministic value in [-1, 1) for round `i` and stream `k`.
    fn wobble(i: usize, k: u64) -> f64 {
        ((i as u64 * 2_654_435_761 + k * 40_503) % 1000) as f64 / 500.0 - 1.0
    }

    /// A row timed in 30 rounds: wall throughputs `wall` and CPU ÷ wall `share` per round.
    fn timed_row(wall: Vec<f64>, share: &[f64]) -> Row {
        let file = crate::sample::result_file(
            "image-rgb",
            augbench_core::Mode::Micro,
            "pillow",
            "1",
            &[("GaussianBlur", crate::sample::runs(100.0))],
        );
        let bytes = serde_json::to_vec(&file).unwrap();
        let data = crate::load::load_result_bytes(std::path::Path::new("x.json"), &bytes).unwrap();
        let mut row = data.rows.into_iter().next().unwrap();
        row.cpu_throughputs = wall.iter().zip(share).map(|(w, s)| w / s).collect();
        row.throughputs = wall;
        row.process_runs = GROUPS.iter().map(|n| *n as u64).collect();
        row
    }

    /// Baseline and current over the same rounds (a drift both share, 1% noise each): current's
    /// wall throughput is `wall` × the baseline's and its CPU ÷ wall `share` × the baseline's.
    fn variants(wall: f64, share: f64, noise: f64) -> (Row, Row, PairedRatio) {
        let n = GROUPS.iter().sum::<usize>();
        let drift = |i: usize| 1.0 + 0.1 * wobble(i, 9);
        let base_wall: Vec<f64> = (0..n)
            .map(|i| 1000.0 * drift(i) * (1.0 + 0.01 * wobble(i, 1)))
            .collect();
        let base_share: Vec<f64> = (0..n).map(|i| 0.97 + 0.01 * wobble(i, 2)).collect();
        let cur_wall: Vec<f64> = (0..n)
            .map(|i| base_wall[i] * wall * (1.0 + 0.01 * wobble(i, 3)))
            .collect();
        let cur_share: Vec<f64> = (0..n)
            .map(|i| base_share[i] * share * (1.0 + noise * wobble(i, 4)))
            .collect();
        let ratios = cur_wall.iter().zip(&base_wall).map(|(c, b)| c / b);
        let p = PairedRatio {
            partner: "pillow@a".into(),
            ratio: wall,
            ci_low: wall,
            ci_high: wall,
            rounds: n as u64,
            rerun: None,
            ratios: ratios.collect(),
        };
        let (base, cur) = (
            timed_row(base_wall, &base_share),
            timed_row(cur_wall, &cur_share),
        );
        (base, cur, p)
    }

    fn read(wall: f64, share: f64, noise: f64) -> VerdictLogs {
        let (base, cur, p) = variants(wall, share, noise);
        verdict_logs(&base, &cur, &p, &GROUPS, M)
    }

    fn ratio_of(v: &VerdictLogs) -> f64 {
        process_pair_interval(&v.logs, &GROUPS).unwrap().ratio
    }

    /// Half the work moved to an unpinned helper thread, 10% slower on the wall clock: the timing
    /// thread's CPU time halves, so CPU time alone would read 1.8× faster.
    #[test]
    fn a_helper_thread_falls_back_to_wall_time() {
        let v = read(0.9, 0.5, 0.01);
        assert_eq!(v.clock, Clock::Wall);
        assert!((ratio_of(&v) - 0.9).abs() < 0.01, "{v:?}");
        let d = v.disagreement.unwrap();
        assert!(
            (d.baseline - 0.97).abs() < 0.01 && (d.current - 0.485).abs() < 0.01,
            "{d:?}"
        );
        assert!(
            d.note().starts_with(
                "read on wall time: CPU ÷ wall differs between the variants (current 0.4"
            ),
            "{}",
            d.note()
        );
    }

    /// Sleeping 20% of each call: the same CPU time, 1.2× the wall time.
    #[test]
    fn a_variant_that_sleeps_falls_back_to_wall_time() {
        let v = read(1.0 / 1.2, 1.0 / 1.2, 0.01);
        assert_eq!(v.clock, Clock::Wall);
        assert!((ratio_of(&v) - 1.0 / 1.2).abs() < 0.01, "{v:?}");
        assert!(v.disagreement.is_some());
    }

    #[test]
    fn equal_cpu_over_wall_keeps_the_cpu_clock() {
        let v = read(0.9, 1.0, 0.01);
        assert_eq!((v.clock, v.disagreement), (Clock::Cpu, None));
        assert!((ratio_of(&v) - 0.9).abs() < 0.01, "{v:?}");
    }

    /// The clocks' disagreement per process pair: ln(CPU ÷ wall) of current minus baseline.
    fn disagreement_of(base: &Row, cur: &Row) -> PairEstimate {
        let n = GROUPS.iter().sum();
        let (b, c) = (cpu_over_wall_logs(base, n), cpu_over_wall_logs(cur, n));
        let d: Vec<f64> = c.iter().zip(&b).map(|(c, b)| c - b).collect();
        pair_estimate(&d, &GROUPS).unwrap()
    }

    /// Half the band's ln(1 + m) at 5%: about 2.4%.
    fn tolerance() -> f64 {
        policy::AB_CLOCK_DISAGREEMENT * 1.05f64.ln()
    }

    /// A disagreement the data shows but under half the minimum effect (1%) keeps the CPU clock;
    /// 3% falls back.
    #[test]
    fn a_disagreement_under_half_the_minimum_effect_keeps_the_cpu_clock() {
        let (base, cur, _) = variants(0.9, 0.99, 0.001);
        let d = disagreement_of(&base, &cur);
        assert!(
            d.interval().high < 1.0 && d.mean_log.abs() < tolerance(),
            "{d:?}"
        );
        assert_eq!(clocks_disagree(&base, &cur, &GROUPS, M), None);
        assert_eq!(read(0.9, 0.99, 0.001).clock, Clock::Cpu);
        assert_eq!(read(0.9, 0.97, 0.001).clock, Clock::Wall);
    }

    /// A CPU ÷ wall 3% lower on average but moving by up to 30% from round to round, so the pairs
    /// do not agree on the lean: noise, and the CPU clock stays.
    #[test]
    fn a_disagreement_the_noise_covers_keeps_the_cpu_clock() {
        let (base, cur, _) = variants(0.9, 0.97, 0.3);
        let d = disagreement_of(&base, &cur);
        let shown = d.interval();
        assert!(d.mean_log.abs() > tolerance(), "{d:?}");
        assert!(shown.low < 1.0 && shown.high > 1.0, "{shown:?}");
        assert_eq!(clocks_disagree(&base, &cur, &GROUPS, M), None);
    }

    /// The current variant's last worker process ended slow (its runs are gone, the baseline's
    /// stay): the record pairs the five processes both finished, and the clock is chosen over
    /// those runs, a helper thread still read on wall time with its note, an equal CPU ÷ wall
    /// still on the CPU clock. (A CI run under load once read wall time with no note here.)
    #[test]
    fn a_process_one_variant_lost_leaves_the_clock_to_the_pairs_both_finished() {
        let kept = &GROUPS[..5];
        let n: usize = kept.iter().sum();
        for (share, clock) in [(0.5, Clock::Wall), (1.0, Clock::Cpu)] {
            let (base, mut cur, mut p) = variants(0.9, share, 0.01);
            cur.throughputs.truncate(n);
            cur.cpu_throughputs.truncate(n);
            cur.process_runs.truncate(5);
            p.ratios.truncate(n);
            let v = verdict_logs(&base, &cur, &p, kept, M);
            assert_eq!(v.clock, clock, "{v:?}");
            assert_eq!(v.disagreement.is_some(), clock == Clock::Wall, "{v:?}");
            assert_eq!(v.logs.len(), n);
        }
    }

    /// Rows without the CPU clock read wall time with no note.
    #[test]
    fn rows_without_cpu_time_read_wall_time_without_a_note() {
        let (base, mut cur, p) = variants(0.9, 0.5, 0.01);
        cur.cpu_throughputs.clear();
        let v = verdict_logs(&base, &cur, &p, &GROUPS, M);
        assert_eq!((v.clock, v.disagreement), (Clock::Wall, None));
    }

    #[test]
    fn one_process_or_groups_that_do_not_split_give_none() {
        let logs = [0.1, 0.2, 0.3, 0.4];
        assert!(process_pair_interval(&logs, &[4]).is_none());
        assert!(process_pair_interval(&logs, &[]).is_none());
        assert!(process_pair_interval(&logs, &[2, 1]).is_none());
        assert!(process_pair_interval(&logs, &[4, 0]).is_none());
        assert!(process_pair_interval(&[0.1, f64::NAN], &[1, 1]).is_none());
        assert!(process_pair_interval(&logs, &[2, 2]).is_some());
    }
}
