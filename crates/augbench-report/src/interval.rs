//! The process-pair interval of a paired ratio (current ÷ baseline): in an interleaved A/B run,
//! worker process k of each variant runs side by side with process k of the other, and each
//! process settles at its own level, so the unit that repeats independently is the process pair,
//! not the round. Each pair gives one figure, the median of its rounds' ln ratios; the ratio is
//! the exponentiated mean of those figures and its 95% interval Student's t over them (or at any
//! level, for a family of change claims: `PairEstimate::interval_at`). Symmetric
//! in log, never below zero, reciprocal when the variants swap. Also which clock the per-round
//! ratios are read on (`verdict_logs`). Pure.

use augbench_core::stats::{logscale, paired::t_over_z, student};
use serde::Serialize;

use crate::model::{PairedRatio, Row};

/// The clock a verdict's per-round ratios were read on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Clock {
    /// The timing thread's CPU time: leaves out the time the thread waited for a core, which on
    /// a loaded host is most of the round-to-round noise (docs/methodology.md, "Thread CPU time").
    Cpu,
    /// Wall time: older results, and workers without a CPU clock.
    Wall,
}

/// Relative tolerance for a run's wall ratio to match the paired record's ratio of that round.
const ROUND_MATCH: f64 = 1e-6;

/// The per-round ln ratios (current ÷ baseline) a verdict reads and their clock: on thread CPU
/// time where both rows have it for every round of the paired record `p` and their runs line up
/// with its rounds (each run's wall ratio is the record's ratio of that round); else the
/// record's wall-clock ratios.
pub fn verdict_logs(base: &Row, cur: &Row, p: &PairedRatio) -> (Vec<f64>, Clock) {
    let n = p.ratios.len();
    let aligned = n > 0
        && [
            &base.throughputs,
            &cur.throughputs,
            &base.cpu_throughputs,
            &cur.cpu_throughputs,
        ]
        .iter()
        .all(|v| v.len() == n)
        && (0..n).all(|i| {
            let wall = cur.throughputs[i] / base.throughputs[i];
            (wall / p.ratios[i] - 1.0).abs() < ROUND_MATCH
        });
    if aligned {
        let logs = (0..n).map(|i| (cur.cpu_throughputs[i] / base.cpu_throughputs[i]).ln());
        return (logs.collect(), Clock::Cpu);
    }
    (p.ratios.iter().map(|r| r.ln()).collect(), Clock::Wall)
}

/// Two-sided 95% normal quantile; `t_over_z` scales it to Student's t (95%, as
/// `policy::CONFIDENCE`).
const Z95: f64 = 1.96;

/// A ratio and its 95% interval over process pairs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PairInterval {
    /// exp of the mean over process pairs of each pair's median ln ratio.
    pub ratio: f64,
    pub low: f64,
    pub high: f64,
    /// Process pairs the interval is over (its degrees of freedom are one fewer).
    pub processes: usize,
}

/// What the process pairs say before a level is chosen: the mean of their median ln ratios and
/// its standard error, over `processes` pairs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PairEstimate {
    pub mean_log: f64,
    pub std_error: f64,
    pub processes: usize,
}

impl PairEstimate {
    /// The 95% interval (the tabulated t quantile).
    pub fn interval(&self) -> PairInterval {
        self.with_half(Z95 * t_over_z(self.processes - 1) * self.std_error)
    }

    /// The two-sided interval at `confidence` (Student's t at any level, `stats::student`).
    pub fn interval_at(&self, confidence: f64) -> PairInterval {
        let p = 1.0 - (1.0 - confidence) / 2.0;
        self.with_half(student::quantile(self.processes - 1, p) * self.std_error)
    }

    fn with_half(&self, half: f64) -> PairInterval {
        let ratio = self.mean_log.exp();
        let (low, high) = logscale::around(ratio, half);
        PairInterval {
            ratio,
            low,
            high,
            processes: self.processes,
        }
    }
}

/// The interval over process pairs of per-round ln ratios `logs` (ln(current ÷ baseline)), the
/// consecutive rounds of each pair in `groups`. `None` unless `groups` has at least two non-empty
/// processes that add up to `logs.len()` and every log is finite.
pub fn process_pair_interval(logs: &[f64], groups: &[usize]) -> Option<PairInterval> {
    Some(pair_estimate(logs, groups)?.interval())
}

/// `process_pair_interval` before a level is chosen.
pub fn pair_estimate(logs: &[f64], groups: &[usize]) -> Option<PairEstimate> {
    let medians = pair_medians(logs, groups)?;
    let n = medians.len() as f64;
    let mean = medians.iter().sum::<f64>() / n;
    let var = medians.iter().map(|m| (m - mean).powi(2)).sum::<f64>() / (n - 1.0);
    Some(PairEstimate {
        mean_log: mean,
        std_error: (var / n).sqrt(),
        processes: medians.len(),
    })
}

/// The median ln ratio of each process pair; `None` for fewer than two pairs, groups that do not
/// split `logs`, or a non-finite log.
fn pair_medians(logs: &[f64], groups: &[usize]) -> Option<Vec<f64>> {
    let splits = groups.len() >= 2
        && !groups.contains(&0)
        && groups.iter().sum::<usize>() == logs.len()
        && logs.iter().all(|x| x.is_finite());
    if !splits {
        return None;
    }
    let mut rest = logs;
    let medians = groups.iter().map(|&n| {
        let (head, tail) = rest.split_at(n);
        rest = tail;
        logscale::median_log(head)
    });
    Some(medians.collect())
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
